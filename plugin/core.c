/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core.c: the entry points of dtplan_core.so and dtplan_submit.so, which
 * spank_dtplan.so calls where the work is (see the timeline in
 * spank_dtplan.c), dispatched on spank_context() to one file per context:
 * local.c (sbatch, salloc, srun), measure.c, service.c and remote.c
 * (slurmstepd), prolog.c (prolog and epilog).
 *
 * Built twice.  dtplan_core.so serves slurmstepd and the prolog.
 * dtplan_submit.so (DTPLAN_CORE_SUBMIT) is the submit side's share only:
 * the options' checks and the preview, over libdtplan and Jansson, without
 * the probes, hwloc and libmunge, which a submission never uses and which
 * cost a command about a quarter of a millisecond to load (README,
 * "Benchmarks").
 */
#include "config.h"

#include "plugin.h"

#include <string.h>

/* State of this process (sbatch, srun or one slurmstepd). */
static struct core_ctx {
	bool config_loaded;
	bool disabled; /* bad plugstack.conf or site file: do nothing */
	struct dtplan_config config;
} ctx;

static int core_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	dtspank__log_install();
	dtplan_config_init(&ctx.config);
	ctx.config_loaded = true;
	if (dtspank__config_load(&ctx.config, ac, av) != 0) {
		slurm_error(DTPLAN_LOG_PREFIX "disabled until the configuration is fixed");
		ctx.disabled = true;
	}
	return 0;
}

static int core_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (ctx.disabled || !ctx.config_loaded)
		return 0;
	switch (spank_context()) {
	case S_CTX_ALLOCATOR:
	case S_CTX_LOCAL:
		return dtspank__local_init_post_opt(sp, &ctx.config);
#ifndef DTPLAN_CORE_SUBMIT
	case S_CTX_REMOTE:
		/* both as root: the prolog's measurement file, then the services */
		dtspank__measure_load(sp, &ctx.config);
		dtspank__observe_init_post_opt(sp, &ctx.config);
		return dtspank__service_init_post_opt(sp, &ctx.config);
#endif
	default:
		return 0;
	}
}

#ifndef DTPLAN_CORE_SUBMIT
static int core_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (ctx.disabled || !ctx.config_loaded || spank_context() != S_CTX_REMOTE)
		return 0;
	return dtspank__remote_user_init(sp, &ctx.config);
}

static int core_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (ctx.disabled || !ctx.config_loaded || spank_context() != S_CTX_REMOTE)
		return 0;
	dtspank__observe_task(sp);
	return dtspank__remote_task_init(sp, &ctx.config);
}

static int core_job_prolog(spank_t sp, int ac, char **av)
{
	return dtspank__prolog(sp, ac, av);
}

static int core_job_epilog(spank_t sp, int ac, char **av)
{
	return dtspank__epilog(sp, ac, av);
}
#else
/* slurmstepd and the prolog load dtplan_core.so: nothing to do here. */
static int core_none(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}
#endif

static int core_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
#ifndef DTPLAN_CORE_SUBMIT
	dtspank__remote_exit();
	dtspank__observe_exit();
	dtspank__service_exit();
	dtspank__measure_reset();
#endif
	dtspank__opts_reset();
	if (ctx.config_loaded)
		dtplan_config_fini(&ctx.config);
	memset(&ctx, 0, sizeof(ctx));
	return 0;
}

const struct dtspank__core dtspank__spank_core = {
	.abi = DTPLAN_CORE_ABI,
	.init = core_init,
	.init_post_opt = core_init_post_opt,
#ifndef DTPLAN_CORE_SUBMIT
	.user_init = core_user_init,
	.task_init = core_task_init,
	.job_prolog = core_job_prolog,
	.job_epilog = core_job_epilog,
#else
	.user_init = core_none,
	.task_init = core_none,
	.job_prolog = core_none,
	.job_epilog = core_none,
#endif
	.exit = core_exit,
	.option = dtspank__opt_cb,
};
