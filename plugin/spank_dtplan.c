/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spank_dtplan.c: the SPANK entry points of dtplan: the options, and the
 * work handed to dtplan_core.so (plugin/core.c), loaded only where it is
 * needed.
 *
 * This module links nothing but the C library, so that sbatch, salloc and
 * srun without a --dt-* option pay for loading it and registering three
 * options only (bench/bench_plugin_load.c).  Two modules beside it in the
 * same folder hold the rest, built from the same core.c:
 *   - dtplan_core.so (libdtplan, the probes, hwloc, libmunge, Jansson,
 *     libcurl), in slurmstepd (remote context) from slurm_spank_init, and
 *     in the job prolog and epilog;
 *   - dtplan_submit.so (libdtplan and Jansson: the options' checks and the
 *     preview), on the submit side when Slurm calls a --dt-* option's
 *     callback.
 * Either is dlopen()ed (RTLD_LOCAL, so that none of its symbols can clash
 * with Slurm's or another plugin's).  A core that cannot be loaded is
 * logged once and leaves the plugin idle: jobs run without plans, as with a
 * bad configuration.
 *
 * Callback timeline (slurm/spank.h, Slurm 22.05) and what dtplan does:
 *
 *   slurmd
 *        `-> init()                      nothing (no options in slurmd)
 *        |
 *        `-> job_prolog()                prolog.c: measure the allocation with the
 *        |                               other nodes (inventories, links); the
 *        |                               first node writes spool_dir/JOBID.json
 *        |                               (root, no init, plugstack args in argv;
 *        |                               bounded by probe_budget=; never fails)
 *        | `-> slurmstepd
 *        |      `-> init ()              register options, load the core, read plugstack
 *        |       -> process spank options   opts.c callbacks (remote=1): keep values
 *        |       -> init_post_opt ()     measure.c, service.c (root; output only in
 *        |      |                        slurmd log): batch step: read the
 *        |      |                        measurement file; fetch FabricURL=
 *        |      |                        through its cache; read ReportTokenFile=
 *        |      + drop privileges (initgroups(), seteuid(), chdir())
 *        |      `-> user_init ()         remote.c, as the user: batch step: make
 *        |      |                        the plan, log it, write the JSON, set
 *        |      |                        DT_* and MASTER_*; srun step: read the
 *        |      |                        plan back (or recompute it). Always 0:
 *        |      |                        a failing user_init drains the node.
 *        |      + for each task
 *        |      |       + fork ()
 *        |      |       |
 *        |      |       + reclaim privileges
 *        |      |       `-> task_init_privileged ()   not used
 *        |      |       |
 *        |      |       + become_user ()
 *        |      |       `-> task_init ()  remote.c: per-task RANK, LOCAL_RANK,
 *        |      |       |                 DT_*_RANK (NCCL_IB_HCA of the node with
 *        |      |       |                 nccl_ib_hca=node); when the plan was
 *        |      |       |                 refused (strict mode or policy=deny),
 *        |      |       |                 _exit(1) of the task in every step
 *        |      |       |                 (fails the job or step, no drain;
 *        |      |       |                 a -1 would be ignored for an
 *        |      |       |                 "optional" plugin)
 *        |      |       + execve ()
 *        |      |
 *        |      + reclaim privileges
 *        |      + for each task
 *        |      |     `-> task_post_fork ()           not used
 *        |      |
 *        |      + for each task
 *        |      |       + wait ()
 *        |      |          `-> task_exit ()           not used
 *        |      `-> exit ()              free the plan and options
 *        |
 *        `---> job_epilog()              prolog.c: remove the measurement file
 *        |
 *        `-> slurmd_exit()               not used
 *
 *   In srun only the init(), init_post_opt() and local_user_init(), and exit()
 *    callbacks are used.            dtplan: init registers options; an option's
 *                                   callback loads the core, which checks it;
 *                                   init_post_opt (local.c) prints a preview
 *                                   when an option was given.
 *
 *   In sbatch/salloc only the init(), init_post_opt(), and exit() callbacks
 *    are used.                      dtplan: the same as srun.
 *
 * Slurm before 25.05 has no slurm_spank_init_failure_mode, so no callback
 * that runs on a node may fail for something the user or the hardware did:
 * init never fails there, user_init always returns 0, and a refusal ends
 * the task from task_init, in the task's own process, which fails the job
 * (or the srun step, or salloc's interactive step) without draining the
 * node.  From 25.05 on, init's one failure (Slurm refusing to register our
 * options) fails the job instead of draining the node too.
 */
#include "config.h"

#include "plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

SPANK_PLUGIN(dtplan, 1);

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
/* Read by slurmstepd when init fails: fail the job, leave the node up. */
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

/* The cores' files, in the folder this module was loaded from: the job's
 * (slurmstepd, prolog, epilog) and the submit side's (sbatch, salloc,
 * srun). */
#define CORE_FILE "dtplan_core.so"
#define SUBMIT_CORE_FILE "dtplan_submit.so"

static int option_cb(int val, const char *optarg, int remote);

static struct spank_option options[] = {
	[DTPLAN_OPT_PLAN] = {DTPLAN_OPT_PLAN_NAME, "auto|strict|off",
			     "[dtplan] plan distributed training for this job: auto (default "
			     "when given bare) plans and warns, strict also fails the job when "
			     "the allocation breaks the site's topology rules, off disables",
			     2, DTPLAN_OPT_PLAN, option_cb},
	[DTPLAN_OPT_MODEL] = {DTPLAN_OPT_MODEL_NAME, "SPEC",
			      "[dtplan] model to plan for: a preset (llama3-70b), a size (7B), "
			      "a HuggingFace config.json path or layers=,hidden=,heads=",
			      1, DTPLAN_OPT_MODEL, option_cb},
	[DTPLAN_OPT_TRAIN] = {DTPLAN_OPT_TRAIN_NAME,
			      "seq=N,gbs=N[,tp=N,pp=N,zero=N,mb=N,recompute=R,gpu=TYPE]",
			      "[dtplan] training shape: sequence length, global batch, and "
			      "optional fixed choices",
			      1, DTPLAN_OPT_TRAIN, option_cb},
};

/* State of this process (sbatch, srun, one slurmstepd or one prolog). */
static struct plugin_ctx {
	const struct dtspank__core *core; /* NULL until loaded */
	bool core_failed;                 /* tried and logged: stay idle */
	bool core_init;                   /* core->init ran */
	int ac;                           /* the plugstack arguments, owned by Slurm */
	char **av;
} ctx;

#ifdef DTPLAN_CORE_STATIC
/* Tests link the core in (tests/test_plugin.c). */
static const struct dtspank__core *load_core(void)
{
	return &dtspank__spank_core;
}
#else
/* dlopen()s the core beside this module that serves this context; NULL
 * (logged once) on failure. */
static const struct dtspank__core *load_core(void)
{
	spank_context_t context = spank_context();
	const char *file =
		context == S_CTX_LOCAL || context == S_CTX_ALLOCATOR ? SUBMIT_CORE_FILE : CORE_FILE;
	const struct dtspank__core *core = NULL;
	char path[PATH_MAX];
	const char *slash;
	Dl_info info;
	void *h;

	if (dladdr((void *)&options, &info) == 0 || info.dli_fname == NULL ||
	    (slash = strrchr(info.dli_fname, '/')) == NULL) {
		slurm_error(DTPLAN_LOG_PREFIX "cannot find the folder spank_dtplan.so was loaded "
					      "from: the plugin is idle");
		return NULL;
	}
	if (snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
		     file) >= (int)sizeof(path)) {
		slurm_error(DTPLAN_LOG_PREFIX "%s: path too long: the plugin is idle",
			    info.dli_fname);
		return NULL;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		slurm_error(DTPLAN_LOG_PREFIX "cannot load %s: %s: the plugin is idle", path,
			    dlerror());
		return NULL;
	}
	core = dlsym(h, "dtspank__spank_core");
	if (core == NULL || core->abi != DTPLAN_CORE_ABI) {
		slurm_error(DTPLAN_LOG_PREFIX "%s is not the core of this spank_dtplan.so (ABI "
					      "%d, expected %d): the plugin is idle",
			    path, core ? core->abi : -1, DTPLAN_CORE_ABI);
		dlclose(h);
		return NULL;
	}
	/* Never closed: the process ends soon, and hwloc and libcurl keep
	 * state that outlives a dlclose(). */
	return core;
}
#endif

/* The core, loaded and initialised with the plugstack arguments; NULL
 * (logged once) when it cannot be. */
static const struct dtspank__core *core(spank_t sp)
{
	if (ctx.core == NULL && !ctx.core_failed) {
		ctx.core = load_core();
		ctx.core_failed = ctx.core == NULL;
	}
	if (ctx.core != NULL && !ctx.core_init) {
		ctx.core_init = true;
		ctx.core->init(sp, ctx.ac, ctx.av);
	}
	return ctx.core;
}

static int register_options(spank_t sp)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		spank_err_t rc = spank_option_register(sp, &options[i]);

		if (rc != ESPANK_SUCCESS) {
			slurm_error(DTPLAN_LOG_PREFIX "cannot register --%s: %s", options[i].name,
				    spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* A --dt-* option, on the submit side or in slurmstepd: the core checks it.
 * Without a core the option is accepted: the plugin is idle. */
static int option_cb(int val, const char *optarg, int remote)
{
	const struct dtspank__core *c = core(NULL);

	return c != NULL ? c->option(val, optarg, remote) : 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t context = spank_context();

	if (context != S_CTX_LOCAL && context != S_CTX_REMOTE && context != S_CTX_ALLOCATOR)
		return 0;
	/* Options first: a job that uses them must never fail to parse. */
	if (register_options(sp) != 0)
		return -1;
	ctx.ac = ac;
	ctx.av = av;
	/* The submit side loads the core only when an option is given. */
	if (context == S_CTX_REMOTE)
		core(sp);
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	return ctx.core != NULL ? ctx.core->init_post_opt(sp, ac, av) : 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	return ctx.core != NULL ? ctx.core->user_init(sp, ac, av) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	return ctx.core != NULL ? ctx.core->task_init(sp, ac, av) : 0;
}

/* No slurm_spank_init in the prolog and epilog: the core reads its arguments. */
static const struct dtspank__core *script_core(void)
{
	if (ctx.core == NULL && !ctx.core_failed) {
		ctx.core = load_core();
		ctx.core_failed = ctx.core == NULL;
	}
	return ctx.core;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	return script_core() != NULL ? ctx.core->job_prolog(sp, ac, av) : 0;
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	return script_core() != NULL ? ctx.core->job_epilog(sp, ac, av) : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	if (ctx.core != NULL)
		ctx.core->exit(sp, ac, av);
	memset(&ctx, 0, sizeof(ctx));
	return 0;
}
