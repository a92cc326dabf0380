/*
 * spank_dtplan.c: the SPANK entry points of dtplan and a dispatcher on
 * spank_context(); the work lives in one file per context.
 *
 * Callback timeline (slurm/spank.h, Slurm 22.05) and what dtplan does:
 *
 *   slurmd
 *        `-> init()                      nothing (no options in slurmd)
 *        |
 *        `-> job_prolog()                prolog.c: cache this node's hwloc XML
 *        |                               (root, no init, plugstack args in argv;
 *        |                               never fails)
 *        | `-> slurmstepd
 *        |      `-> init ()              register options, read plugstack
 *        |       -> process spank options   opts.c callbacks (remote=1): keep values
 *        |       -> init_post_opt ()     service.c (root; output only in slurmd log):
 *        |      |                        batch step: fetch FabricURL= through its
 *        |      |                        cache; read ReportTokenFile=
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
 *        |      |       |                 nccl_ib_hca=node); -1 here (fails
 *        |      |       |                 the job, no drain) when the plan was
 *        |      |       |                 refused (strict mode or policy=deny)
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
 *        `---> job_epilog()              not used
 *        |
 *        `-> slurmd_exit()               not used
 *
 *   In srun only the init(), init_post_opt() and local_user_init(), and exit()
 *    callbacks are used.            dtplan: init registers options; init_post_opt
 *                                   (local.c) validates them and prints a preview.
 *
 *   In sbatch/salloc only the init(), init_post_opt(), and exit() callbacks
 *    are used.                      dtplan: the same as srun.
 *
 * Slurm before 25.05 has no slurm_spank_init_failure_mode, so no callback
 * that runs on a node may fail for something the user or the hardware did:
 * init never fails there, user_init always returns 0, and a refusal is
 * reported from task_init, which spank(7) lists as failing the job without
 * draining the node.  From 25.05 on, init's one failure (Slurm refusing to
 * register our options) fails the job instead of draining the node too.
 */
#include "config.h"

#include "plugin.h"

#include <string.h>

SPANK_PLUGIN(dtplan, 1);

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
/* Read by slurmstepd when init fails: fail the job, leave the node up. */
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

/* State of this process (sbatch, srun or one slurmstepd). */
static struct plugin_ctx {
	bool config_loaded;
	bool disabled; /* bad plugstack.conf or site file: do nothing */
	struct dtplan_config config;
} ctx;

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t context = spank_context();

	if (context != S_CTX_LOCAL && context != S_CTX_REMOTE && context != S_CTX_ALLOCATOR)
		return 0;
	dtplan__log_install();
	/* Options first: a job that uses them must never fail to parse. */
	if (dtplan__opts_register(sp) != 0)
		return -1;
	dtplan_config_init(&ctx.config);
	ctx.config_loaded = true;
	if (dtplan__config_load(&ctx.config, ac, av) != 0) {
		slurm_error(DTPLAN_LOG_PREFIX "disabled until the configuration is fixed");
		ctx.disabled = true;
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	if (ctx.disabled || !ctx.config_loaded)
		return 0;
	switch (spank_context()) {
	case S_CTX_ALLOCATOR:
	case S_CTX_LOCAL:
		return dtplan__local_init_post_opt(sp, &ctx.config);
	case S_CTX_REMOTE:
		return dtplan__service_init_post_opt(sp, &ctx.config);
	default:
		return 0;
	}
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	if (ctx.disabled || !ctx.config_loaded || spank_context() != S_CTX_REMOTE)
		return 0;
	return dtplan__remote_user_init(sp, &ctx.config);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	if (ctx.disabled || !ctx.config_loaded || spank_context() != S_CTX_REMOTE)
		return 0;
	return dtplan__remote_task_init(sp, &ctx.config);
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	return dtplan__prolog(sp, ac, av);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	dtplan__remote_exit();
	dtplan__service_exit();
	dtplan__opts_reset();
	if (ctx.config_loaded)
		dtplan_config_fini(&ctx.config);
	memset(&ctx, 0, sizeof(ctx));
	return 0;
}
