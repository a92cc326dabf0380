/*
 * core.c: dtplan_core.so's entry points, which spank_dtplan.so calls where
 * the work is (see the timeline in spank_dtplan.c), dispatched on
 * spank_context() to one file per context: local.c (sbatch, salloc, srun),
 * measure.c, service.c and remote.c (slurmstepd), prolog.c (prolog and
 * epilog).
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
	dtplan__log_install();
	dtplan_config_init(&ctx.config);
	ctx.config_loaded = true;
	if (dtplan__config_load(&ctx.config, ac, av) != 0) {
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
		return dtplan__local_init_post_opt(sp, &ctx.config);
	case S_CTX_REMOTE:
		/* both as root: the prolog's measurement file, then the services */
		dtplan__measure_load(sp, &ctx.config);
		return dtplan__service_init_post_opt(sp, &ctx.config);
	default:
		return 0;
	}
}

static int core_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (ctx.disabled || !ctx.config_loaded || spank_context() != S_CTX_REMOTE)
		return 0;
	return dtplan__remote_user_init(sp, &ctx.config);
}

static int core_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (ctx.disabled || !ctx.config_loaded || spank_context() != S_CTX_REMOTE)
		return 0;
	return dtplan__remote_task_init(sp, &ctx.config);
}

static int core_job_prolog(spank_t sp, int ac, char **av)
{
	return dtplan__prolog(sp, ac, av);
}

static int core_job_epilog(spank_t sp, int ac, char **av)
{
	return dtplan__epilog(sp, ac, av);
}

static int core_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	dtplan__remote_exit();
	dtplan__service_exit();
	dtplan__measure_reset();
	dtplan__opts_reset();
	if (ctx.config_loaded)
		dtplan_config_fini(&ctx.config);
	memset(&ctx, 0, sizeof(ctx));
	return 0;
}

const struct dtplan__core dtplan__spank_core = {
	.abi = DTPLAN_CORE_ABI,
	.init = core_init,
	.init_post_opt = core_init_post_opt,
	.user_init = core_user_init,
	.task_init = core_task_init,
	.job_prolog = core_job_prolog,
	.job_epilog = core_job_epilog,
	.exit = core_exit,
	.option = dtplan__opt_cb,
};
