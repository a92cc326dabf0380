/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_plan_json.c: a plan read back, as every srun step reads it
 * (dtplan_plan_ranks_from_json(), then each task's environment from it,
 * dtplan_env_task()) and as dtplan show reads it (dtplan_plan_from_json(),
 * then the text and the picture).  Properties: the ranks are tp x pp x dp
 * and each names one of the plan's nodes; a whole plan's leaves hold its
 * nodes.
 */
#include "fuzz.h"

static void check_ranks(const struct dtplan_plan *p)
{
	DTPLAN_FUZZ_CHECK(p->n_ranks == (size_t)p->best.tp * p->best.pp * p->best.dp);
	DTPLAN_FUZZ_CHECK(p->n_nodes >= 1 && p->n_nodes <= DTPLAN_PLAN_MAX_NODES);
	for (size_t i = 0; i < p->n_ranks; i++)
		DTPLAN_FUZZ_CHECK(p->ranks[i].node >= 0 && (size_t)p->ranks[i].node < p->n_nodes);
}

DTPLAN_FUZZ_TARGET(plan_json)
{
	struct dtplan_task_env_in in = {0};
	struct dtplan_plan *p = NULL;
	struct dtplan_env env;
	char *text = dtplan_fuzz_text(data, size), *out = NULL;
	size_t held = 0;

	if (text == NULL)
		return 0;
	if (dtplan_plan_ranks_from_json(text, &p, NULL) == DTPLAN_OK) {
		check_ranks(p);
		in.host = p->node_names[0];
		in.local_id = 0;
		in.local_count = 1;
		dtplan_env_init(&env);
		dtplan_env_task(p, &in, &env, NULL);
		dtplan_env_fini(&env);
	}
	dtplan_plan_destroy(p);
	p = NULL;
	if (dtplan_plan_from_json(text, &p, NULL) == DTPLAN_OK) {
		if (p->n_ranks > 0)
			check_ranks(p);
		for (size_t i = 0; i < p->n_leaves_used; i++)
			held += p->leaf_nodes[i];
		DTPLAN_FUZZ_CHECK(p->n_leaves_used == 0 || held == p->n_nodes);
		if (dtplan_plan_render_text(p, &out, NULL) == DTPLAN_OK)
			free(out);
		out = NULL;
		if (dtplan_plan_render_svg(p, &out, NULL) == DTPLAN_OK)
			free(out);
	}
	dtplan_plan_destroy(p);
	free(text);
	return 0;
}
