/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * env.c: a plan as environment variables for launchers (torchrun,
 * Megatron-LM, DeepSpeed).  The plugin copies them into the job or the task;
 * deciding what they say happens here, where it can be tested.  The
 * frameworks' own words (DT_MEGATRON_ARGS, PET_*, ...) come from launch.c.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The variables a user's value wins for (dtplan_env_user_owned()): the
 * launchers' rendezvous and rank variables and NCCL's settings.  The one
 * place this rule lives.
 */
static const char *const user_owned_prefixes[] = {
	"NCCL_",
	"MASTER_",
	"PET_",
};
static const char *const user_owned_names[] = {
	"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE",
};

bool dtplan_env_user_owned(const char *name)
{
	if (name == NULL)
		return false;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(user_owned_prefixes); i++)
		if (strncmp(name, user_owned_prefixes[i], strlen(user_owned_prefixes[i])) == 0)
			return true;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(user_owned_names); i++)
		if (strcmp(name, user_owned_names[i]) == 0)
			return true;
	return false;
}

/* Sets DT_NNODES and DT_NODE_ORDER ("a,b,c") from n names. */
/*
 * Sets a list variable, or when the list is longer than a variable may be
 * (DTPLAN_ENV_VALUE_MAX) points NAME_FILE at the plan file that holds it;
 * without a plan file the list is left out.
 */
static enum dtplan_err set_list(struct dtplan_env *e, const char *name, const char *list,
				const char *plan_file)
{
	char file_name[sizeof(e->vars[0].name)];
	enum dtplan_err rv = dtplan_env_set(e, name, "%s", list);

	if (rv != DTPLAN_ERR_RANGE)
		return rv;
	if (plan_file == NULL || plan_file[0] == '\0')
		return DTPLAN_OK;
	snprintf(file_name, sizeof(file_name), "%s_FILE", name);
	return dtplan_env_set(e, file_name, "%s", plan_file);
}

static enum dtplan_err set_node_order(struct dtplan_env *e, const char (*names)[64], size_t n,
				      const char *plan_file)
{
	enum dtplan_err rv;
	size_t len = 1, at = 0;
	char *list;

	for (size_t i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	list = malloc(len);
	if (list == NULL)
		return DTPLAN_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(names[i]);

		if (i > 0)
			list[at++] = ',';
		memcpy(list + at, names[i], k);
		at += k;
	}
	list[at] = '\0';
	rv = dtplan_env_set(e, "DT_NNODES", "%zu", n);
	if (rv == DTPLAN_OK)
		rv = set_list(e, "DT_NODE_ORDER", list, plan_file);
	free(list);
	return rv;
}

static enum dtplan_err set_plan_vars(struct dtplan_env *e, const struct dtplan_plan *p,
				     const char *plan_file)
{
	const struct dtplan_candidate *b = &p->best;
	enum dtplan_err ret = DTPLAN_OK;
	char *layers;

	ret |= dtplan_env_set(e, "DT_TP", "%d", b->tp);
	ret |= dtplan_env_set(e, "DT_PP", "%d", b->pp);
	ret |= dtplan_env_set(e, "DT_EP", "%d", b->ep > 1 ? b->ep : 1);
	ret |= dtplan_env_set(e, "DT_ETP", "%d", b->etp > 0 ? b->etp : b->tp);
	ret |= dtplan_env_set(e, "DT_CP", "%d", b->cp > 1 ? b->cp : 1);
	ret |= dtplan_env_set(e, "DT_DP", "%d", b->dp);
	ret |= dtplan_env_set(e, "DT_ZERO", "%d", b->zero);
	ret |= dtplan_env_set(e, "DT_MICRO_BATCH", "%d", b->micro_batch);
	ret |= dtplan_env_set(e, "DT_NUM_MICROBATCHES", "%d", b->num_microbatches);
	ret |= dtplan_env_set(e, "DT_GLOBAL_BATCH", "%d", b->global_batch);
	layers = dtplan_stage_layers_format(&b->stages, b->pp);
	if (layers == NULL || set_list(e, "DT_PP_LAYERS", layers, plan_file) != DTPLAN_OK)
		ret = DTPLAN_ERR_NOMEM;
	free(layers);
	ret |= dtplan_env_set(e, "DT_RECOMPUTE", "%s", dtplan_recompute_name(b->recompute));
	/* the pipeline schedule the step time assumes (interleaving is 1F1B's) */
	ret |= dtplan_env_set(e, "DT_PP_SCHEDULE", "%s",
			      dtplan_schedule_name(b->dualpipe ? DTPLAN_SCHEDULE_DUALPIPE
							       : DTPLAN_SCHEDULE_1F1B));
	/* How RANK maps to (tp, pp, dp): frameworks must build their groups the
	 * same way. */
	ret |= dtplan_env_set(e, "DT_RANK_ORDER", "%s", dtplan_candidate_rank_order(b));
	ret |= dtplan_env_set(e, "DT_CKPT_INTERVAL_S", "%.0f", floor(p->ckpt.interval_seconds));
	ret |= dtplan_env_set(e, "DT_CKPT_INTERVAL_STEPS", "%.0f", floor(p->ckpt.interval_steps));
	/* Every failure above is DTPLAN_ERR_NOMEM (names are valid constants). */
	return ret == DTPLAN_OK ? DTPLAN_OK : DTPLAN_ERR_NOMEM;
}

/* A plan with a whole parallel split: one the frameworks can be told (a
 * hand-made plan may lack one). */
static bool has_split(const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = p != NULL ? &p->best : NULL;

	return c != NULL && c->tp >= 1 && c->pp >= 1 && c->dp >= 1 && c->micro_batch >= 1 &&
	       c->num_microbatches >= 1;
}

enum dtplan_err dtplan_env_job(const struct dtplan_job_env_in *in, struct dtplan_env *e,
			       struct dtplan_error *err)
{
	const struct dtplan_plan *p;
	const char(*order)[64] = NULL;
	const char *state, *reason;
	struct dtplan_launch_in launch = {0};
	enum dtplan_err ret = DTPLAN_OK;
	size_t n_order = 0;

	if (in == NULL || e == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no job given");
	p = in->plan;
	reason = in->reason != NULL && in->reason[0] != '\0' ? in->reason : NULL;
	if (reason == NULL && p != NULL && p->degraded)
		reason = p->degraded_reason;
	if (reason == NULL && p == NULL)
		reason = "no plan";
	state = in->refused ? "refused" : reason != NULL ? "degraded" : "ok";
	/* Rank order when the plan placed the ranks, else the allocation's. */
	if (p != NULL && p->n_nodes > 0) {
		order = (const char(*)[64])p->node_names;
		n_order = p->n_nodes;
	} else if (in->nodes != NULL) {
		order = in->nodes;
		n_order = in->n_nodes;
	}

	ret |= dtplan_env_set(e, "DTPLAN_PLAN_STATE", "%s", state);
	if (reason != NULL)
		ret |= dtplan_env_set(e, "DTPLAN_PLAN_REASON", "%s", reason);
	if (in->plan_file != NULL && in->plan_file[0] != '\0')
		ret |= dtplan_env_set(e, "DTPLAN_FILE", "%s", in->plan_file);
	if (n_order > 0)
		ret |= dtplan_env_set(e, "MASTER_ADDR", "%s", order[0]);
	ret |= dtplan_env_set(e, "MASTER_PORT", "%d", dtplan_master_port(in->job_id));
	if (ret == DTPLAN_OK && p != NULL)
		ret = set_plan_vars(e, p, in->plan_file);
	if (ret == DTPLAN_OK && n_order > 0)
		ret = set_node_order(e, order, n_order, in->plan_file);
	if (ret != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	/* The frameworks' words for the same plan; torchrun meets where
	 * MASTER_ADDR and MASTER_PORT say unless the host program knows better. */
	if (in->launch == NULL) {
		launch.master_addr = n_order > 0 ? order[0] : NULL;
		launch.master_port = dtplan_master_port(in->job_id);
	}
	if (has_split(p)) {
		ret = dtplan_launch_env(p, in->launch != NULL ? in->launch : &launch, e, err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	return DTPLAN_OK;
}

/* Index of host in the plan's nodes; a short name matches a dotted one. */
static int plan_node_index(const struct dtplan_plan *p, const char *host)
{
	size_t hl = strcspn(host, ".");

	for (size_t i = 0; i < p->n_nodes; i++)
		if (strcmp(p->node_names[i], host) == 0)
			return (int)i;
	for (size_t i = 0; i < p->n_nodes; i++) {
		size_t nl = strcspn(p->node_names[i], ".");

		if (nl == hl && strncmp(p->node_names[i], host, hl) == 0)
			return (int)i;
	}
	return -1;
}

static int by_gpu(const void *a, const void *b)
{
	const struct dtplan_rank *x = *(const struct dtplan_rank *const *)a;
	const struct dtplan_rank *y = *(const struct dtplan_rank *const *)b;

	return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/*
 * Sets NCCL_IB_HCA to "=" and the NICs of node's ranks, each once, in GPU
 * order: every rail of the node, which leaves NCCL its rail and PXN choices.
 * "=" asks NCCL for exact names (plain mlx5_1 would also match mlx5_10).
 * Nothing when the plan knows no NIC there.
 */
static enum dtplan_err set_node_hcas(struct dtplan_env *e, const struct dtplan_plan *p, int node)
{
	const struct dtplan_rank **mine;
	enum dtplan_err rv = DTPLAN_OK;
	size_t n = 0, len = 1, at = 0;
	char *list = NULL;

	mine = calloc(p->n_ranks, sizeof(*mine));
	if (mine == NULL)
		return DTPLAN_ERR_NOMEM;
	for (size_t i = 0; i < p->n_ranks; i++) {
		if (p->ranks[i].node == node && p->ranks[i].nic[0] != '\0') {
			mine[n++] = &p->ranks[i];
			len += strnlen(p->ranks[i].nic, sizeof(p->ranks[i].nic)) + 1;
		}
	}
	if (n == 0)
		goto out;
	qsort(mine, n, sizeof(*mine), by_gpu);
	list = malloc(len); /* "=" and "name," per rank, the last ',' for the NUL */
	if (list == NULL) {
		rv = DTPLAN_ERR_NOMEM;
		goto out;
	}
	list[at++] = '=';
	for (size_t i = 0; i < n; i++) {
		size_t l = strnlen(mine[i]->nic, sizeof(mine[i]->nic));
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(mine[k]->nic, mine[i]->nic) == 0;
		if (seen)
			continue;
		if (at > 1)
			list[at++] = ',';
		memcpy(list + at, mine[i]->nic, l);
		at += l;
	}
	list[at] = '\0';
	rv = dtplan_env_set(e, "NCCL_IB_HCA", "%s", list);
out:
	free(list);
	free(mine);
	return rv;
}

enum dtplan_err dtplan_env_task(const struct dtplan_plan *p, const struct dtplan_task_env_in *in,
				struct dtplan_env *e, struct dtplan_error *err)
{
	const struct dtplan_rank *r = NULL;
	enum dtplan_err ret = DTPLAN_OK;
	int node, on_node = 0;
	size_t rank = 0;

	if (p == NULL || in == NULL || in->host == NULL || e == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or task given");
	if (p->n_nodes == 0 || p->n_ranks == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "the plan places no ranks");
	if (in->step_nodes > 0 && (size_t)in->step_nodes != p->n_nodes)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "the step spans %d nodes, the plan %zu", in->step_nodes,
				     p->n_nodes);
	node = plan_node_index(p, in->host);
	if (node < 0)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0,
				     "node '%s' is not in the plan", in->host);
	for (size_t i = 0; i < p->n_ranks; i++) {
		if (p->ranks[i].node != node)
			continue;
		on_node++;
		if (p->ranks[i].local_rank == in->local_id) {
			r = &p->ranks[i];
			rank = i;
		}
	}
	if (in->local_count == 1 && on_node != 1) {
		ret |= dtplan_env_set(e, "DT_NODE_RANK", "%d", node);
		ret |= dtplan_env_set(e, "PET_NODE_RANK", "%d", node);
		ret |= dtplan_env_set(e, "DT_NNODES", "%zu", p->n_nodes);
		goto node_wide;
	}
	if (in->local_count != on_node)
		return dtplan__error(
			err, DTPLAN_ERR_INVAL, "", 0,
			"node '%s' runs %d tasks of the step, the plan places %d ranks there",
			in->host, in->local_count, on_node);
	if (r == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "task %d on node '%s' has no rank in the plan", in->local_id,
				     in->host);
	ret |= dtplan_env_set(e, "RANK", "%zu", rank);
	ret |= dtplan_env_set(e, "WORLD_SIZE", "%zu", p->n_ranks);
	ret |= dtplan_env_set(e, "LOCAL_RANK", "%d", r->local_rank);
	ret |= dtplan_env_set(e, "LOCAL_WORLD_SIZE", "%d", on_node);
	/* Lightning's SLURMEnvironment refuses SLURM_NTASKS > 1 without it
	 * (_validate_srun_variables(), lightning/fabric/plugins/environments/
	 * slurm.py, 7f0c343), which srun -m arbitrary -n N does not set */
	ret |= dtplan_env_set(e, "SLURM_NTASKS_PER_NODE", "%d", on_node);
	ret |= dtplan_env_set(e, "DT_TP_RANK", "%d", r->tp_rank);
	ret |= dtplan_env_set(e, "DT_PP_RANK", "%d", r->pp_rank);
	ret |= dtplan_env_set(e, "DT_DP_RANK", "%d", r->dp_rank);
	ret |= dtplan_env_set(e, "DT_EP_RANK", "%d", r->ep_rank);
	ret |= dtplan_env_set(e, "DT_ETP_RANK", "%d", r->etp_rank);
	ret |= dtplan_env_set(e, "DT_EDP_RANK", "%d", r->edp_rank);
	ret |= dtplan_env_set(e, "DT_CP_RANK", "%d", r->cp_rank);
	ret |= dtplan_env_set(e, "DT_LOCAL_GPU", "%d", r->gpu);
	ret |= dtplan_env_set(e, "DT_NODE_RANK", "%d", node);
	ret |= dtplan_env_set(e, "PET_NODE_RANK", "%d", node);
node_wide:
	/* Never one NIC per rank: that would take rails and PXN away from NCCL. */
	if (in->nccl_ib_hca == DTPLAN_NCCL_IB_HCA_NODE)
		ret |= set_node_hcas(e, p, node);
	if (ret != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	return DTPLAN_OK;
}
