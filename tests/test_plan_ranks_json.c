/*
 * test_plan_ranks_json.c: reading back the parts of a plan's JSON that
 * tasks need (lib/plan_ranks_json.c).
 */
#include "test_common.h"

/* Two nodes, TP 2 x PP 1 x DP 2: ranks 0,1 on a1 and 2,3 on a2. */
static const char good_json[] =
	"{\"schema\": \"dtplan.plan/1\",\n"
	" \"best\": {\"tp\": 2, \"pp\": 1, \"dp\": 2, \"zero\": 1, \"micro_batch\": 4,\n"
	"          \"num_microbatches\": 8, \"recompute\": \"full\"},\n"
	" \"ckpt\": {\"interval_seconds\": 5400.5, \"interval_steps\": 120},\n"
	" \"nodes\": [{\"name\": \"a1\", \"leaf\": \"leaf1\"}, {\"name\": \"a2\"}],\n"
	" \"ranks\": [\n"
	"  {\"rank\": 0, \"node\": 0, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0,"
	"   \"pp_rank\": 0, \"dp_rank\": 0, \"domain\": 0, \"nic\": \"mlx5_0\"},\n"
	"  {\"rank\": 1, \"node\": 0, \"gpu\": 1, \"local_rank\": 1, \"tp_rank\": 1,"
	"   \"pp_rank\": 0, \"dp_rank\": 0, \"domain\": 0, \"nic\": \"mlx5_1\"},\n"
	"  {\"rank\": 2, \"node\": \"a2\", \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0,"
	"   \"pp_rank\": 0, \"dp_rank\": 1, \"domain\": 1},\n"
	"  {\"rank\": 3, \"node\": 1, \"gpu\": 1, \"local_rank\": 1, \"tp_rank\": 1,"
	"   \"pp_rank\": 0, \"dp_rank\": 1, \"domain\": 1, \"nic\": null}\n"
	" ],\n"
	" \"degraded\": true, \"degraded_reason\": \"3 of 4 nodes assumed\"}\n";

static void ranks_from_json__good_plan__fields(void **state)
{
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_plan_ranks_from_json(good_json, &p, &err), DTPLAN_OK);
	assert_non_null(p);
	assert_int_equal(p->best.tp, 2);
	assert_int_equal(p->best.pp, 1);
	assert_int_equal(p->best.dp, 2);
	assert_int_equal(p->best.zero, 1);
	assert_int_equal(p->best.micro_batch, 4);
	assert_int_equal(p->best.num_microbatches, 8);
	assert_int_equal(p->best.recompute, DTPLAN_RECOMPUTE_FULL);
	assert_near(p->ckpt.interval_seconds, 5400.5, 0.0);
	assert_near(p->ckpt.interval_steps, 120.0, 0.0);
	assert_int_equal(p->n_nodes, 2);
	assert_string_equal(p->node_names[0], "a1");
	assert_string_equal(p->node_names[1], "a2");
	assert_int_equal(p->n_ranks, 4);
	assert_int_equal(p->ranks[2].node, 1); /* given by name */
	assert_int_equal(p->ranks[2].dp_rank, 1);
	assert_int_equal(p->ranks[3].local_rank, 1);
	assert_string_equal(p->ranks[1].nic, "mlx5_1");
	assert_string_equal(p->ranks[3].nic, "");
	assert_true(p->degraded);
	assert_string_equal(p->degraded_reason, "3 of 4 nodes assumed");
	dtplan_plan_destroy(p);
}

/* Minimal form: node names as strings, recompute as a number, no ckpt. */
static void ranks_from_json__minimal__defaults(void **state)
{
	static const char text[] =
		"{\"best\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"recompute\": 1},"
		" \"node_names\": [\"solo\"],"
		" \"ranks\": [{\"node\": 0}]}";
	struct dtplan_plan *p = NULL;

	(void)state;
	assert_int_equal(dtplan_plan_ranks_from_json(text, &p, NULL), DTPLAN_OK);
	assert_int_equal(p->best.recompute, DTPLAN_RECOMPUTE_SELECTIVE);
	assert_int_equal(p->n_ranks, 1);
	assert_int_equal(p->ranks[0].gpu, 0);
	assert_int_equal(p->ranks[0].domain, -1);
	assert_near(p->ckpt.interval_seconds, 0.0, 0.0);
	assert_false(p->degraded);
	dtplan_plan_destroy(p);
}

#define BEST "\"best\": {\"tp\": 1, \"pp\": 1, \"dp\": 2}"
#define NODES "\"nodes\": [\"a1\"]"

static const struct {
	const char *text;
	const char *message_part;
} bad_json[] = {
	{"", "'[' or '{' expected"},
	{"[1, 2]", "expected an object"},
	{"{\"schema\": \"other/1\"}", "schema is not dtplan.plan/1"},
	{"{\"a\": 1, \"a\": 2}", "duplicate object key"},
	{"{" NODES "}", "no \"best\" object"},
	{"{\"best\": {\"tp\": 0, \"pp\": 1, \"dp\": 1}}", "tp, pp and dp must be"},
	{"{\"best\": {\"tp\": \"8\", \"pp\": 1, \"dp\": 1}}", "best.tp: expected a whole number"},
	{"{\"best\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"recompute\": \"most\"}}",
	 "'most' is not none, selective or full"},
	{"{\"best\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"recompute\": 7}}", "best.recompute: 7"},
	{"{" BEST "}", "no \"nodes\" array"},
	{"{" BEST ", \"nodes\": []}", "no \"nodes\" array"},
	{"{" BEST ", \"nodes\": [3]}", "nodes[0]: expected a host name"},
	{"{" BEST ", " NODES "}", "no \"ranks\" array"},
	{"{" BEST ", " NODES ", \"ranks\": [7]}", "ranks[0]: expected an object"},
	{"{" BEST ", " NODES ", \"ranks\": [{\"node\": 1}]}", "ranks[0].node: not one of"},
	{"{" BEST ", " NODES ", \"ranks\": [{\"node\": \"zz\"}]}", "ranks[0].node: not one of"},
	{"{" BEST ", " NODES ", \"ranks\": [{\"rank\": 1, \"node\": 0}]}", "rank 1 out of order"},
	{"{" BEST ", " NODES ", \"ranks\": [{\"node\": 0, \"gpu\": -1}]}", "must be >= 0"},
	{"{" BEST ", " NODES ", \"ranks\": [{\"node\": 0}]}", "1 ranks but tp 1 x pp 1 x dp 2"},
};

static void ranks_from_json__bad_documents__parse_error(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
		struct dtplan_plan *p = (struct dtplan_plan *)&p;
		struct dtplan_error err = {0};
		enum dtplan_err rc = dtplan_plan_ranks_from_json(bad_json[i].text, &p, &err);

		if (rc == DTPLAN_OK)
			fail_msg("case %zu accepted", i);
		assert_null(p);
		if (strstr(err.text, bad_json[i].message_part) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text, bad_json[i].message_part);
	}
}

static void ranks_from_json__null__inval(void **state)
{
	struct dtplan_plan *p = NULL;

	(void)state;
	assert_int_equal(dtplan_plan_ranks_from_json(NULL, &p, NULL), DTPLAN_ERR_INVAL);
	assert_null(p);
	assert_int_equal(dtplan_plan_ranks_from_json("{}", NULL, NULL), DTPLAN_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ranks_from_json__good_plan__fields),
		cmocka_unit_test(ranks_from_json__minimal__defaults),
		cmocka_unit_test(ranks_from_json__bad_documents__parse_error),
		cmocka_unit_test(ranks_from_json__null__inval),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
