/*
 * fuzz_plan_json.c: the plan read back in every srun step
 * (dtplan_plan_ranks_from_json()), then each task's environment from it
 * (dtplan_env_task()).  Properties: the ranks are tp x pp x dp and each
 * names one of the plan's nodes.
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(plan_json)
{
	struct dtplan_task_env_in in = {0};
	struct dtplan_plan *p = NULL;
	struct dtplan_env env;
	char *text = dtplan_fuzz_text(data, size);

	if (text == NULL)
		return 0;
	if (dtplan_plan_ranks_from_json(text, &p, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(p->n_ranks == (size_t)p->best.tp * p->best.pp * p->best.dp);
		DTPLAN_FUZZ_CHECK(p->n_nodes >= 1 && p->n_nodes <= DTPLAN_PLAN_MAX_NODES);
		for (size_t i = 0; i < p->n_ranks; i++)
			DTPLAN_FUZZ_CHECK(p->ranks[i].node >= 0 &&
					  (size_t)p->ranks[i].node < p->n_nodes);
		in.host = p->node_names[0];
		in.local_id = 0;
		in.local_count = 1;
		dtplan_env_init(&env);
		dtplan_env_task(p, &in, &env, NULL);
		dtplan_env_fini(&env);
	}
	dtplan_plan_destroy(p);
	free(text);
	return 0;
}
