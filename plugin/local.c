/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * local.c: sbatch/salloc (allocator context) and srun (local context), as the
 * user, before the allocation exists.
 *
 * The option callbacks have already refused bad values.  Here we only print
 * a short preview of what can be known before allocation: the GPUs asked for
 * (when the environment says), the model's memory, the likely split and the
 * checkpoint interval.  Nothing here fails the user's command.
 */
#include "config.h"

#include "plugin.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Submit-side variables that may carry the GPU request, most precise first.
 * #SBATCH lines are not in the environment, so often none is set. */
static const char *const total_gpu_vars[] = {"SBATCH_GPUS", "SALLOC_GPUS", "SLURM_GPUS"};
static const char *const node_gpu_vars[] = {"SBATCH_GPUS_PER_NODE", "SALLOC_GPUS_PER_NODE",
					    "SLURM_GPUS_PER_NODE", "SLURM_GPUS_ON_NODE"};
static const char *const node_count_vars[] = {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"};

/* Reads a "[type:]N" count from the first of vars that is set; 0 when none. */
static long env_count(const char *const *vars, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(vars[i]);
		const char *colon;
		long count;

		if (v == NULL || v[0] == '\0')
			continue;
		colon = strrchr(v, ':');
		if (dtplan_parse_long(colon ? colon + 1 : v, vars[i], 1, 1L << 24, &count, NULL) ==
		    DTPLAN_OK)
			return count;
	}
	return 0;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* GPUs the job asks for, and per node; 0 when the environment does not say. */
static void submit_gpus(int *gpus, int *per_node)
{
	long total = env_count(total_gpu_vars, N_OF(total_gpu_vars));
	long node = env_count(node_gpu_vars, N_OF(node_gpu_vars));
	long nodes = env_count(node_count_vars, N_OF(node_count_vars));

	*per_node = (int)node;
	*gpus = (int)total;
	if (total == 0 && node > 0 && nodes > 0 && node * nodes <= (1L << 24))
		*gpus = (int)(node * nodes);
}

static void preview_plan(struct dtplan_request *req, int gpus, int per_node)
{
	struct dtplan_plan *plan = NULL;
	struct dtplan_error err = {0};
	char buf[1024], t[32];

	req->gpus = gpus;
	if (per_node > 0)
		req->gpus_per_node = per_node;
	if (req->gpus_per_node > gpus)
		req->gpus_per_node = gpus;
	if (dtplan_plan_create(req, NULL, &plan, &err) != DTPLAN_OK) {
		slurm_info(DTPLAN_LOG_PREFIX "warning: model cannot fit on %d GPUs: %s", gpus,
			   dtplan_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	slurm_info(DTPLAN_LOG_PREFIX "likely TP %d x PP %d x DP %d, ZeRO-%d, micro-batch %d, "
				     "recompute %s on %d GPUs",
		   plan->best.tp, plan->best.pp, plan->best.dp, plan->best.zero,
		   plan->best.micro_batch, dtplan_recompute_name(plan->best.recompute), gpus);
	slurm_info(DTPLAN_LOG_PREFIX "checkpoint every %s",
		   dtplan_format_time(plan->ckpt.interval_seconds, t, sizeof(t)));
	for (size_t i = 0; i < plan->n_warnings; i++)
		slurm_info(DTPLAN_LOG_PREFIX "warning: %s", plan->warnings[i].message);
out:
	dtplan_plan_destroy(plan);
}

/* Without a GPU count: the fewest GPUs the plan at job start would fit on
 * (the library's count, the one its "does not fit" error names). */
static void preview_fewest(const struct dtplan_request *req)
{
	struct dtplan_error err = {0};
	char buf[1024];
	long fewest = dtplan_plan_fewest_gpus(req, &err);
	long gpn = req->gpus_per_node;

	if (fewest < 0)
		slurm_info(DTPLAN_LOG_PREFIX "GPU count unknown before allocation; no preview: %s",
			   dtplan_error_format(&err, buf, sizeof(buf)));
	else if (fewest == 0)
		slurm_info(DTPLAN_LOG_PREFIX "GPU count unknown before allocation; the model fits "
					     "on no count of %ld-GPU nodes with these settings",
			   gpn);
	else if (fewest == 1)
		slurm_info(DTPLAN_LOG_PREFIX "GPU count unknown before allocation (it fits on 1 "
					     "GPU); the plan is made at job start");
	else if (fewest < gpn)
		slurm_info(DTPLAN_LOG_PREFIX
			   "GPU count unknown before allocation (the fewest that "
			   "fit are %ld GPUs, of one %ld-GPU node); the plan is made "
			   "at job start",
			   fewest, gpn);
	else
		slurm_info(DTPLAN_LOG_PREFIX
			   "GPU count unknown before allocation (the fewest that "
			   "fit are %ld GPUs, %ld %s of %ld); the plan is made at "
			   "job start",
			   fewest, fewest / gpn, fewest / gpn == 1 ? "node" : "nodes", gpn);
}

/*
 * The reason etc/cli_filter.lua gave about --segment (issue 33), on to the
 * job.  cli_filter's pre_submit runs in this process before this callback
 * (process_options_second_pass(), src/sbatch/opt.c, then
 * spank_init_post_opt(), src/sbatch/sbatch.c, Slurm 24.11 and 26.05) and
 * can set no variable of the job's; it leaves the reason in an anonymous
 * temporary file (Lua's io.tmpfile()) that it keeps open until the job is
 * sent, starting with SEGMENT_NOTE.  Found among this process's open files
 * that are deleted, read without moving their offset, and set in the job
 * control environment: the job sees it as SLURM_SPANK_DTPLAN_SEGMENT_REASON
 * and its batch step logs it (plugin/remote.c).
 */
#define SEGMENT_NOTE "DTPLAN_SEGMENT_REASON="

static void pass_segment_reason(spank_t sp)
{
	DIR *d = opendir("/proc/self/fd");
	const size_t k = strlen(SEGMENT_NOTE);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char link[64], target[512], buf[1024];
		char *end;
		ssize_t n;
		long fd = strtol(e->d_name, &end, 10);

		if (end == e->d_name || *end != '\0' || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strstr(target, " (deleted)") == NULL)
			continue;
		n = pread((int)fd, buf, sizeof(buf) - 1, 0);
		if (n <= (ssize_t)k)
			continue;
		buf[n] = '\0';
		if (strncmp(buf, SEGMENT_NOTE, k) != 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (spank_job_control_setenv(sp, "DTPLAN_SEGMENT_REASON", buf + k, 1) !=
		    ESPANK_SUCCESS)
			slurm_info(DTPLAN_LOG_PREFIX "cannot pass on the reason for --segment");
		break;
	}
	closedir(d);
}

int dtspank__local_init_post_opt(spank_t sp, const struct dtplan_config *c)
{
	const struct dtplan_opts *o = dtspank__opts();
	struct dtplan_ledger state = {0};
	struct dtplan_request req;
	struct dtplan_error err = {0};
	char buf[1024], b1[32], b2[32];
	int gpus, per_node;

	/* Silent unless the user asked; srun inside a job previews nothing (the
	 * job's plan exists already). */
	if (!dtspank__opts_any(o))
		return 0;
	if (spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID") != NULL)
		return 0;
	pass_segment_reason(sp);
	if (dtspank__opts_mode(o, c) == DTPLAN_MODE_OFF) {
		if (!o->mode_given)
			slurm_info(DTPLAN_LOG_PREFIX
				   "--dt-model/--dt-train given without "
				   "--dt-plan: no plan will be made (add --dt-plan)");
		return 0;
	}
	if (dtspank__opts_request(o, c, &req, &err) != DTPLAN_OK) {
		slurm_info(DTPLAN_LOG_PREFIX "no preview: %s",
			   dtplan_error_format(&err, buf, sizeof(buf)));
		return 0;
	}
	if (dtplan_request_model_state(&req, &state, &err) != DTPLAN_OK) {
		slurm_info(DTPLAN_LOG_PREFIX "no preview: %s",
			   dtplan_error_format(&err, buf, sizeof(buf)));
		return 0;
	}
	slurm_info(DTPLAN_LOG_PREFIX "model %s: %s parameters, %s of weights, gradients and "
				     "optimizer state; %s has %s",
		   req.model.name, dtplan_format_count(req.model.params, b1, sizeof(b1)),
		   dtplan_format_bytes(state.total, buf, sizeof(buf)), req.gpu.name,
		   dtplan_format_bytes(req.gpu.memory_bytes, b2, sizeof(b2)));
	submit_gpus(&gpus, &per_node);
	if (gpus <= 0) {
		preview_fewest(&req);
		return 0;
	}
	preview_plan(&req, gpus, per_node);
	return 0;
}
