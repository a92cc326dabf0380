/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_plan_ranks_json.c: reading back the parts of a plan's JSON that
 * tasks need, and the whole plan for dtplan show (lib/json/plan_ranks_json.c).
 */
#include "test_common.h"

#include "dtplan.h"
#include "dtprobes.h"

#include <time.h>

/* Two nodes, TP 2 x PP 1 x DP 2: ranks 0,1 on a1 and 2,3 on a2. */
static const char good_json[] =
	"{\"schema\": \"dtplan.plan/1\",\n"
	" \"parallelism\": {\"tp\": 2, \"pp\": 1, \"dp\": 2, \"zero\": 1, \"micro_batch\": 4,\n"
	"          \"num_microbatches\": 8, \"recompute\": \"full\"},\n"
	" \"checkpoint\": {\"interval_seconds\": 5400.5, \"interval_steps\": 120},\n"
	" \"degraded\": true, \"degraded_reason\": \"3 of 4 nodes assumed\",\n"
	" \"placement\": {\"nodes\": [{\"name\": \"a1\", \"leaf\": \"leaf1\"}, \"a2\"],\n"
	"  \"crosses_uplinks\": \"dp\", \"ranks\": [\n"
	"  {\"rank\": 0, \"node\": 0, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0,"
	"   \"pp_rank\": 0, \"dp_rank\": 0, \"domain\": 0, \"nic\": \"mlx5_0\"},\n"
	"  {\"rank\": 1, \"node\": 0, \"gpu\": 1, \"local_rank\": 1, \"tp_rank\": 1,"
	"   \"pp_rank\": 0, \"dp_rank\": 0, \"domain\": 0, \"nic\": \"mlx5_1\"},\n"
	"  {\"rank\": 2, \"node\": \"a2\", \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0,"
	"   \"pp_rank\": 0, \"dp_rank\": 1, \"domain\": 1},\n"
	"  {\"rank\": 3, \"node\": 1, \"gpu\": 1, \"local_rank\": 1, \"tp_rank\": 1,"
	"   \"pp_rank\": 0, \"dp_rank\": 1, \"domain\": 1, \"nic\": null}\n"
	" ]}}\n";

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

/* Minimal form: recompute as a number, no checkpoint. */
static void ranks_from_json__minimal__defaults(void **state)
{
	static const char text[] =
		"{\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"recompute\": 1},"
		" \"placement\": {\"nodes\": [\"solo\"], \"ranks\": [{\"node\": 0}]}}";
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

#define PAR "\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 2}"
#define PAR1 "\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 1}"
#define PLACE(ranks) "\"placement\": {\"nodes\": [\"a1\"], \"ranks\": " ranks "}"

static const struct {
	const char *text;
	const char *message_part;
} bad_json[] = {
	{"", "'[' or '{' expected"},
	{"[1, 2]", "expected an object"},
	{"{\"schema\": \"other/1\"}", "schema is not dtplan.plan/1"},
	{"{\"a\": 1, \"a\": 2}", "duplicate object key"},
	{"{" PLACE("[]") "}", "no \"parallelism\" object"},
	{"{\"parallelism\": {\"tp\": 0, \"pp\": 1, \"dp\": 1}}", "tp, pp and dp must be"},
	{"{\"parallelism\": {\"tp\": \"8\", \"pp\": 1, \"dp\": 1}}",
	 "parallelism.tp: expected a whole number"},
	{"{\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"recompute\": \"most\"}}",
	 "'most' is not none, selective, fine or full"},
	{"{\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"recompute\": 7}}",
	 "parallelism.recompute: 7"},
	{"{" PAR "}", "no \"placement\" object: the plan places no ranks"},
	{"{" PAR ", \"placement\": {\"nodes\": []}}", "no placement.nodes array"},
	{"{" PAR ", \"placement\": {\"nodes\": [3]}}", "placement.nodes[0]: expected a host"},
	{"{" PAR ", \"placement\": {\"nodes\": [\"a1\"]}}", "no placement.ranks array"},
	{"{" PAR1 ", " PLACE("[7]") "}", "placement.ranks[0]: expected an object"},
	{"{" PAR1 ", " PLACE("[{\"node\": 1}]") "}", "placement.ranks[0].node: not one of"},
	{"{" PAR1 ", " PLACE("[{\"node\": \"zz\"}]") "}", "placement.ranks[0].node: not one of"},
	{"{" PAR1 ", " PLACE("[{\"rank\": 1, \"node\": 0}]") "}", "rank 1 out of order"},
	{"{" PAR1 ", " PLACE("[{\"node\": 0, \"gpu\": -1}]") "}", "must be >= 0"},
	{"{" PAR ", " PLACE("[{\"node\": 0}]") "}", "1 ranks but tp 1 x cp 1 x pp 1 x dp 2"},
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
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text,
				 bad_json[i].message_part);
	}
}

/*
 * The contract with lib/json/plan_json.c: what dtplan_plan_to_json() writes for a
 * placed plan reads back into the same parallelism, checkpoint and ranks.
 * Plan: nodes g1, g2 with 2 GPUs each, TP 2 x PP 2 x DP 1; rank r on node
 * r / 2, GPU r % 2, stage r / 2.
 */
static void ranks_from_json__plan_to_json_output__round_trip(void **state)
{
	char names[2][64] = {"g1", "g2"};
	int leaf[2] = {0, 0};
	struct dtplan_rank ranks[4];
	struct dtplan_plan plan, *back = NULL;
	char *text = NULL;

	(void)state;
	memset(&plan, 0, sizeof(plan));
	memset(ranks, 0, sizeof(ranks));
	assert_int_equal(dtplan_model_parse("7B", &plan.request.model, NULL), DTPLAN_OK);
	plan.best.tp = 2;
	plan.best.pp = 2;
	plan.best.dp = 1;
	plan.best.zero = 2;
	plan.best.micro_batch = 1;
	plan.best.num_microbatches = 16;
	plan.best.recompute = DTPLAN_RECOMPUTE_SELECTIVE;
	plan.best.stages.first = 16; /* 7B's 32 layers on 2 stages */
	plan.best.stages.last = 16;
	plan.best.crosses_uplinks = "pp";
	plan.ckpt.interval_seconds = 1800.0;
	plan.ckpt.interval_steps = 90.0;
	plan.n_nodes = 2;
	plan.node_names = names;
	plan.node_leaf = leaf;
	plan.n_ranks = 4;
	plan.ranks = ranks;
	for (int r = 0; r < 4; r++) {
		ranks[r].node = r / 2;
		ranks[r].gpu = r % 2;
		ranks[r].local_rank = r % 2;
		ranks[r].tp_rank = r % 2;
		ranks[r].pp_rank = r / 2;
		snprintf(ranks[r].nic, sizeof(ranks[r].nic), "mlx5_%d", r % 2);
	}
	assert_int_equal(dtplan_plan_to_json(&plan, true, &text, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_ranks_from_json(text, &back, NULL), DTPLAN_OK);
	assert_int_equal(back->best.tp, 2);
	assert_int_equal(back->best.pp, 2);
	assert_int_equal(back->best.dp, 1);
	assert_int_equal(back->best.zero, 2);
	assert_int_equal(back->best.num_microbatches, 16);
	assert_int_equal(back->best.recompute, DTPLAN_RECOMPUTE_SELECTIVE);
	assert_int_equal(back->best.stages.first, 16);
	assert_int_equal(back->best.stages.last, 16);
	assert_int_equal(back->best.vp, 1);
	assert_near(back->ckpt.interval_seconds, 1800.0, 0.0);
	assert_near(back->ckpt.interval_steps, 90.0, 0.0);
	assert_int_equal(back->n_nodes, 2);
	assert_string_equal(back->node_names[1], "g2");
	assert_int_equal(back->n_ranks, 4);
	for (int r = 0; r < 4; r++) {
		assert_int_equal(back->ranks[r].node, r / 2);
		assert_int_equal(back->ranks[r].pp_rank, r / 2);
		assert_int_equal(back->ranks[r].tp_rank, r % 2);
		assert_string_equal(back->ranks[r].nic, ranks[r].nic);
	}
	dtplan_plan_destroy(back);
	free(text);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak resident memory (KiB) since the last reset_peak(); -1 unknown. */
static long peak_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmHWM:", 6) == 0)
			v = strtol(line + 6, NULL, 10);
	fclose(f);
	return v;
}

static bool reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	return f != NULL && fputs("5", f) >= 0 && fclose(f) == 0;
}

/* Timing bounds hold natively and under sanitizers, not under valgrind
 * (tests/valgrind.sh sets this). */
static bool timing_checked(void)
{
	return getenv("DTPLAN_TEST_UNDER_VALGRIND") == NULL;
}

/*
 * Issue 13, finding 9: a 64 MiB plan file of "{}," (within the plan file's
 * limit) took 5 GB and 12 s to read in every srun step: a document tree
 * costs about 80 times the text.  16 MiB of it here (1.25 GB and 11 s
 * before): the reader now allocates nothing for members it does not read.
 */
static void ranks_from_json__16_mib_of_empty_objects__little_memory(void **state)
{
	size_t n = (16u << 20) / 3;
	char *text = malloc(3 * n + 16), *q = text;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	long before, after;
	double t0;

	(void)state;
	assert_non_null(text);
	q += sprintf(q, "{\"x\": [");
	for (size_t i = 0; i + 1 < n; i++, q += 3)
		memcpy(q, "{},", 3);
	memcpy(q, "{}]}", 5); /* with its NUL */
	if (!reset_peak())
		skip();
	before = peak_kib();
	t0 = now();
	assert_int_equal(dtplan_plan_ranks_from_json(text, &p, &err), DTPLAN_ERR_PARSE);
	after = peak_kib();
	assert_string_equal(err.text, "no \"parallelism\" object");
	print_message("16 MiB of {}: %.2f s, %ld KiB more at the peak\n", now() - t0,
		      after - before);
	assert_true(after - before < 4096);
	/* 0.1 s natively, 4 s under ASan at -O1: a bound against a hang */
	if (timing_checked())
		assert_true(now() - t0 < 30.0);
	free(text);
}

/* The nodes of the same finding: 50,000 ranks naming their node among
 * 50,000 were 1.25e9 string comparisons; names are now found by binary
 * search, and a node named twice is refused. */
static void ranks_from_json__ranks_name_nodes__n_log_n(void **state)
{
	const int n = 50000;
	size_t cap = (size_t)n * 120 + 256, len = 0;
	char *text = malloc(cap);
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	double t0;

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len,
				"{\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": %d}, "
				"\"placement\": {\"nodes\": [",
				n);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s\"node%06d\"", i ? "," : "",
					(i * 7919) % n);
	len += (size_t)snprintf(text + len, cap - len, "], \"ranks\": [");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"%s{\"node\": \"node%06d\", \"dp_rank\": %d}", i ? "," : "",
					(i * 7919) % n, i);
	snprintf(text + len, cap - len, "]}}");
	t0 = now();
	if (dtplan_plan_ranks_from_json(text, &p, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	print_message("50,000 ranks by node name: %.2f s\n", now() - t0);
	/* 0.25 s natively, 2 s under ASan; 36 s with a scan per rank */
	if (timing_checked())
		assert_true(now() - t0 < 10.0);
	assert_int_equal(p->n_ranks, (size_t)n);
	for (int i = 0; i < n; i += 4999)
		assert_int_equal(p->ranks[i].node, i);
	dtplan_plan_destroy(p);
	p = NULL;
	/* node 1 renamed as node 0 */
	memcpy(strstr(text, ",\"node") + 1, "\"node000000\"", 12);
	assert_int_equal(dtplan_plan_ranks_from_json(text, &p, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "placement.nodes[1]: host 'node000000' is named twice"));
	free(text);
}

/* Documented bounds: ranks and nodes counted, and checked against the
 * degrees, before anything is allocated; nesting; text after the plan. */
static void ranks_from_json__limits__refused_before_allocating(void **state)
{
	static const struct {
		const char *text;
		const char *says;
	} cases[] = {
		{"{" PAR1 ", " PLACE("[{\"node\": 0}, {\"node\": 0}]") "}",
		 "2 ranks but tp 1 x cp 1 x pp 1 x dp 1"},
		{"{\"parallelism\": {\"tp\": 1000000, \"pp\": 1000000, \"dp\": 1000000}, " PLACE(
			 "[{\"node\": 0}]") "}",
		 "1 ranks but tp 1000000 x cp 1 x pp 1000000 x dp 1000000"},
		{"{\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
		 "nested more than 32 levels deep"},
		{"{" PAR1 ", " PLACE("[{\"node\": 0}]") "} {}", "end of file expected"},
		{"{\"x\": \"\\ud800\"}", "lone high surrogate"},
		{"{\"x\": \"\xff\"}", "invalid UTF-8"},
		{"{\"x\": 1e999}", "number out of range"},
		{"{\"x\": 01}", "',' expected"},
		{"{\"x\": [1,]}", "value expected"},
		{"{\"x\" 1}", "':' expected"},
		{"{\"parallelism\": {\"tp\": 1, \"tp\": 2}}", "duplicate object key 'tp'"},
	};
	char *big;
	size_t n = DTPLAN_PLAN_MAX_RANKS + 1, len = 0, cap = n * 2 + 256;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(dtplan_plan_ranks_from_json(cases[i].text, &p, &err),
				 DTPLAN_ERR_PARSE);
		assert_null(p);
		if (strstr(err.text, cases[i].says) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text, cases[i].says);
	}
	/* one rank more than DTPLAN_PLAN_MAX_RANKS, each "0," */
	big = malloc(cap);
	assert_non_null(big);
	len += (size_t)snprintf(big, cap,
				"{" PAR1 ", \"placement\": {\"nodes\": [\"a\"], "
				"\"ranks\": [");
	for (size_t i = 0; i < n; i++, len += 2)
		memcpy(big + len, i + 1 < n ? "0," : "0]", 2);
	snprintf(big + len, cap - len, "}}");
	assert_int_equal(dtplan_plan_ranks_from_json(big, &p, &err), DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "placement.ranks: 1048577 ranks, more than the 1048576 "
				      "dtplan plans for");
	free(big);
}

static void ranks_from_json__null__inval(void **state)
{
	struct dtplan_plan *p = NULL;

	(void)state;
	assert_int_equal(dtplan_plan_ranks_from_json(NULL, &p, NULL), DTPLAN_ERR_INVAL);
	assert_null(p);
	assert_int_equal(dtplan_plan_ranks_from_json("{}", NULL, NULL), DTPLAN_ERR_INVAL);
}

/* ---- the whole plan ---- */

/* A placed plan with warnings: 8 HGX nodes, 4 + 4 on two thin leaves of
 * topology-three-leaves.conf (too-many-leaves and oversubscribed-uplink). */
static struct dtplan_plan *placed_plan(void)
{
	static const char hosts[8][64] = {"gpu01", "gpu02", "gpu03", "gpu04",
					  "gpu09", "gpu10", "gpu11", "gpu12"};
	struct dtplan_topology *t = NULL;
	struct dtplan_config c;
	struct dtplan_node hgx;
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	struct dtplan_cluster cl = {.n_nodes = 1, .nodes = &hgx, .n_hosts = 8, .host_names = hosts};

	if (dtplan_node_from_xml(test_data_path("hgx-h100-8gpu.xml"), &hgx, &err) != DTPLAN_OK)
		return NULL;
	assert_int_equal(dtplan_topology_parse_file(test_data_path("topology-three-leaves.conf"),
						    &t, &err),
			 DTPLAN_OK);
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_file(&c,
						  test_data_path("dtplan-thin-three-leaves.conf"),
						  &err),
			 DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(&c, t, &err), DTPLAN_OK);
	cl.topology = t;
	cl.config = &c;
	dtplan_request_init(&r);
	dtplan_request_apply_config(&r, &c);
	assert_int_equal(dtplan_model_parse("7B", &r.model, NULL), DTPLAN_OK);
	r.global_batch = 64;
	if (dtplan_plan_create(&r, &cl, &p, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	dtplan_config_fini(&c);
	dtplan_topology_destroy(t);
	return p;
}

/* JSON -> plan -> the same text and picture, and the numbers behind them. */
/* p as JSON (*json, the caller's) read back as a whole plan (the caller's). */
static struct dtplan_plan *read_back(const struct dtplan_plan *p, bool pretty, char **json)
{
	struct dtplan_plan *back = NULL;
	struct dtplan_error err = {0};

	assert_int_equal(dtplan_plan_to_json(p, pretty, json, &err), DTPLAN_OK);
	if (dtplan_plan_from_json(*json, &back, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	return back;
}

/* Asserts that back renders the text p does; returns that text (caller frees). */
static char *assert_same_text(const struct dtplan_plan *p, const struct dtplan_plan *back)
{
	char *a = NULL, *b = NULL;

	assert_int_equal(dtplan_plan_render_text(p, &a, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_render_text(back, &b, NULL), DTPLAN_OK);
	assert_string_equal(b, a);
	free(b);
	return a;
}

static void plan_from_json__placed_plan__renders_as_made(void **state)
{
	struct dtplan_plan *p = placed_plan(), *back = NULL;
	struct dtplan_error err = {0};
	char *json = NULL, *a = NULL, *b = NULL;

	(void)state;
	if (p == NULL)
		skip();
	assert_true(p->n_warnings >= 2);
	back = read_back(p, true, &json);
	/* the numbers */
	assert_string_equal(back->request.model.name, p->request.model.name);
	assert_near(back->request.model.params, p->request.model.params, 0.5);
	assert_int_equal(back->request.gpus, 64);
	assert_int_equal(back->request.seq, p->request.seq);
	assert_near(back->request.memory_headroom, p->request.memory_headroom, 1e-12);
	assert_near(back->request.ckpt_write_bytes_per_s, p->request.ckpt_write_bytes_per_s, 1.0);
	assert_near(back->request.mtbf_gpu_hours, p->request.mtbf_gpu_hours, 1e-6);
	assert_int_equal(back->best.stages.first, p->best.stages.first);
	assert_int_equal(back->best.stages.middle, p->best.stages.middle);
	assert_int_equal(back->best.stages.last, p->best.stages.last);
	assert_int_equal(back->best.memory.stage, p->best.memory.stage);
	assert_int_equal(back->best.memory.stage_layers, p->best.memory.stage_layers);
	assert_near(back->best.step.total, p->best.step.total, 0.0);
	assert_near(back->best.uplink_slowdown, p->best.uplink_slowdown, 0.0);
	assert_string_equal(back->best.crosses_uplinks, p->best.crosses_uplinks);
	assert_int_equal(back->have_runner_up, p->have_runner_up);
	assert_string_equal(back->runner_up_reason, p->runner_up_reason);
	assert_int_equal(back->n_warnings, p->n_warnings);
	for (size_t i = 0; i < p->n_warnings; i++) {
		assert_string_equal(back->warnings[i].code, p->warnings[i].code);
		assert_string_equal(back->warnings[i].message, p->warnings[i].message);
	}
	assert_int_equal(back->n_leaves_used, 2);
	assert_int_equal(back->n_leaves_needed, 1);
	assert_string_equal(back->leaf_names[1], "leaf2");
	assert_int_equal(back->leaf_nodes[1], 4);
	assert_near(back->leaf_ratio[1], p->leaf_ratio[1], 0.0);
	for (size_t n = 0; n < p->n_nodes; n++)
		assert_int_equal(back->node_run[n], p->node_run[n]);
	/* and what people see */
	free(assert_same_text(p, back));
	assert_int_equal(dtplan_plan_render_svg(p, &a, &err), DTPLAN_OK);
	assert_int_equal(dtplan_plan_render_svg(back, &b, &err), DTPLAN_OK);
	assert_string_equal(b, a);
	free(a);
	free(b);
	free(json);
	dtplan_plan_destroy(back);
	dtplan_plan_destroy(p);
}

/* The placement's rank_order in Megatron-LM's spelling with CP and EP named:
 * each name reads back as its order; a name the plan never writes is refused. */
static void plan_from_json__rank_order_names__read_or_refused(void **state)
{
	static const struct {
		const char *name;
		enum dtplan_err rv;
		enum dtplan_rank_order o;
	} cases[] = {
		{"tp-cp-ep-dp-pp", DTPLAN_OK, DTPLAN_ORDER_TP_DP_PP},
		{"tp-cp-pp-ep-dp", DTPLAN_OK, DTPLAN_ORDER_TP_PP_DP},
		{"tp-cp-pp-dp", DTPLAN_OK, DTPLAN_ORDER_TP_PP_DP},
		{"tp-ep-cp-dp-pp", DTPLAN_ERR_PARSE, DTPLAN_ORDER_TP_DP_PP},
		{"dp-tp-pp", DTPLAN_ERR_PARSE, DTPLAN_ORDER_TP_DP_PP},
	};
	struct dtplan_plan *p = placed_plan();
	char *json = NULL, needle[64];

	(void)state;
	if (p == NULL)
		skip();
	assert_int_equal(dtplan_plan_to_json(p, true, &json, NULL), DTPLAN_OK);
	snprintf(needle, sizeof(needle), "\"rank_order\": \"%s\"",
		 dtplan_candidate_rank_order(&p->best));
	assert_non_null(strstr(json, needle));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *at = strstr(json, needle), *edited;
		size_t n = strlen(json) + 64;
		struct dtplan_plan *back = NULL;
		struct dtplan_error err = {0};

		edited = malloc(n);
		assert_non_null(edited);
		snprintf(edited, n, "%.*s\"rank_order\": \"%s\"%s", (int)(at - json), json,
			 cases[i].name, at + strlen(needle));
		assert_int_equal(dtplan_plan_from_json(edited, &back, &err), cases[i].rv);
		if (cases[i].rv == DTPLAN_OK)
			assert_int_equal(back->best.rank_order, cases[i].o);
		else if (strstr(err.text, cases[i].name) == NULL)
			fail_msg("'%s' lacks '%s'", err.text, cases[i].name);
		dtplan_plan_destroy(back);
		free(edited);
	}
	free(json);
	dtplan_plan_destroy(p);
}

/* A plan made without an allocation has no placement: still a whole plan. */
static void plan_from_json__no_placement__renders_as_made(void **state)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL, *back = NULL;
	struct dtplan_error err = {0};
	char *json = NULL;

	(void)state;
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("llama3-70b", &r.model, NULL), DTPLAN_OK);
	r.gpus = 128;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err), DTPLAN_OK);
	back = read_back(p, false, &json);
	assert_int_equal(back->n_ranks, 0);
	assert_null(back->leaf_names);
	free(assert_same_text(p, back));
	free(json);
	dtplan_plan_destroy(back);
	dtplan_plan_destroy(p);
	/* the ranks reader still wants a placement */
	assert_int_equal(dtplan_plan_ranks_from_json("{\"parallelism\": {\"tp\": 1, \"pp\": 1, "
						     "\"dp\": 1}}",
						     &back, &err),
			 DTPLAN_ERR_PARSE);
}

/* What issue 9 added: interleaving, the kernels line, the optimizer step and
 * the time to train, read back as made. */
static void plan_from_json__interleaved_megatron_training__renders_as_made(void **state)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL, *back = NULL;
	struct dtplan_error err = {0};
	char *json = NULL;

	(void)state;
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("llama2-70b", &r.model, NULL), DTPLAN_OK);
	r.gpus = 64;
	r.gpu = *dtplan_gpu_find("h100-sxm", NULL);
	r.pp = 4;
	r.vp = 5;
	r.framework = DTPLAN_FRAMEWORK_MEGATRON;
	r.precision = DTPLAN_PRECISION_FP8;
	r.train_tokens = 2e12;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err), DTPLAN_OK);
	assert_int_equal(p->best.vp, 5);
	assert_true(p->have_training);
	back = read_back(p, false, &json);
	assert_int_equal(back->best.vp, 5);
	assert_false(back->best.offload);
	assert_int_equal(back->request.framework, DTPLAN_FRAMEWORK_MEGATRON);
	assert_int_equal(back->request.precision, DTPLAN_PRECISION_FP8);
	assert_int_equal(back->request.attention, DTPLAN_ATTENTION_FLASH);
	assert_near(back->best.step.optimizer, p->best.step.optimizer, 0.0);
	assert_true(back->have_training);
	assert_near(back->training.steps, p->training.steps, 0.0);
	assert_near(back->training.wall_seconds, p->training.wall_seconds, 0.0);
	free(assert_same_text(p, back));
	free(json);
	dtplan_plan_destroy(back);
	dtplan_plan_destroy(p);
}

/* Where in json the first `value` after member "key" starts (asserted). */
static char *value_of(char *json, const char *key, const char *value)
{
	char quoted[64];
	char *at;

	snprintf(quoted, sizeof(quoted), "\"%s\"", key);
	at = strstr(json, quoted);
	assert_non_null(at);
	at = strstr(at, value);
	assert_non_null(at);
	return at;
}

/* DeepSeek-V3 with its recipe (fine recomputation, DualPipe, bf16 moments)
 * read back as made, its MoE layers and all-to-all included, and a bad
 * schedule or moments named. */
static void plan_from_json__deepseek_recipe__renders_as_made(void **state)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL, *back = NULL;
	struct dtplan_error err = {0};
	char *json = NULL, *a = NULL, *bad;

	(void)state;
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("deepseek-v3", &r.model, NULL), DTPLAN_OK);
	r.gpus = 2048;
	r.gpu = *dtplan_gpu_find("h800", NULL);
	r.seq = 4096;
	r.global_batch = 15360;
	r.framework = DTPLAN_FRAMEWORK_MEGATRON;
	r.precision = DTPLAN_PRECISION_FP8;
	r.recompute = DTPLAN_RECOMPUTE_FINE;
	r.schedule = DTPLAN_SCHEDULE_DUALPIPE;
	r.moments = DTPLAN_MOMENTS_BF16;
	r.grads = DTPLAN_GRADS_BF16;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err), DTPLAN_OK);
	assert_true(p->best.dualpipe);
	back = read_back(p, false, &json);
	assert_true(back->best.dualpipe);
	assert_int_equal(back->best.recompute, DTPLAN_RECOMPUTE_FINE);
	assert_int_equal(back->request.moments, DTPLAN_MOMENTS_BF16);
	assert_int_equal(back->request.grads, DTPLAN_GRADS_BF16);
	assert_near(back->best.memory.gradients, p->best.memory.gradients, 0.0);
	a = assert_same_text(p, back);
	assert_non_null(strstr(a, "DualPipe"));
	assert_non_null(strstr(a, "bf16 gradients, bf16 Adam moments"));
	/* 3 dense layers first, then every layer: 58 MoE layers of 61 */
	assert_non_null(strstr(a, "in 58 MoE layers"));
	dtplan_plan_destroy(back);
	back = NULL;
	/* "moments": "bf17", refused as a bad precision is, and "grads" too,
	 * each naming what it takes */
	bad = value_of(json, "moments", "\"bf16\"");
	memcpy(bad, "\"bf17\"", 6);
	assert_int_equal(dtplan_plan_from_json(json, &back, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "moments: 'bf17' is not fp32 or bf16"));
	memcpy(bad, "\"bf16\"", 6);
	bad = value_of(json, "grads", "\"bf16\"");
	memcpy(bad, "\"bf17\"", 6);
	assert_int_equal(dtplan_plan_from_json(json, &back, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "grads: 'bf17' is not default, fp32 or bf16"));
	memcpy(bad, "\"bf16\"", 6);
	bad = value_of(json, "schedule", "\"dualpipe\"");
	memcpy(bad, "\"gpipe_xx\"", 10);
	assert_int_equal(dtplan_plan_from_json(json, &back, &err), DTPLAN_ERR_PARSE);
	if (strstr(err.text, "parallelism.schedule: expected") == NULL)
		fail_msg("%s", err.text);
	free(a);
	free(json);
	dtplan_plan_destroy(p);
}

static void plan_from_json__bad_documents__error_names_member(void **state)
{
	static const struct {
		const char *json;
		const char *msg;
	} cases[] = {
		{"{\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 1}}", "schema is not"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, "
		 "\"dp\": 1}}",
		 "no \"model\" or \"gpu\" object"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 2, \"dp\": "
		 "1,"
		 " \"layers_per_stage\": [4]}, \"model\": {\"layers\": 8}, \"gpu\": {}, "
		 "\"gpus\": 2, \"gpus_per_node\": 2}",
		 "expected 2 layer counts"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 4, \"dp\": "
		 "1,"
		 " \"layers_per_stage\": [3, 2, 1, 2]}, \"model\": {\"layers\": 8}, \"gpu\": {}, "
		 "\"gpus\": 4, \"gpus_per_node\": 4}",
		 "layers_per_stage[2]: the stages between"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": "
		 "1},"
		 " \"model\": {\"layers\": \"many\"}, \"gpu\": {}, \"gpus\": 1, \"gpus_per_node\": "
		 "1}",
		 "model.layers: expected a whole number"},
		/* the member getters' wording (lib/base/json_get.c): out of range
		 * was "expected a whole number", a long name was cut short */
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": "
		 "1},"
		 " \"model\": {\"layers\": 2000000000}, \"gpu\": {}, \"gpus\": 1, "
		 "\"gpus_per_node\": 1}",
		 "model.layers: 2000000000 is out of range (-1 to 1000000000)"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": "
		 "1},"
		 " \"model\": {\"layers\": 1}, \"gpu\": {\"name\": "
		 "\"0123456789012345678901234567890123456789\"}, \"gpus\": 1, \"gpus_per_node\": "
		 "1}",
		 "gpu.name: longer than 31 characters or holds a NUL"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": "
		 "1},"
		 " \"model\": {\"layers\": 1}, \"gpu\": {}, \"gpus\": 1, \"gpus_per_node\": 1, "
		 "\"warnings\": [{\"code\": 3}]}",
		 "warnings[0]: expected a code and a message"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": "
		 "2},"
		 " \"model\": {\"layers\": 1}, \"gpu\": {}, \"gpus\": 2, \"gpus_per_node\": 1, "
		 "\"placement\": {\"nodes\": [\"a\", \"b\"], \"ranks\": ["
		 "{\"node\": 0, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0, \"pp_rank\": 0, "
		 "\"dp_rank\": 0}, {\"node\": 1, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0, "
		 "\"pp_rank\": 0, \"dp_rank\": 1}], \"leaves\": [{\"name\": \"l\", \"nodes\": "
		 "3}]}}",
		 "placement.leaves[0].nodes: the leaves hold more than the plan's 2 nodes"},
		{"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": "
		 "2},"
		 " \"model\": {\"layers\": 1}, \"gpu\": {}, \"gpus\": 2, \"gpus_per_node\": 1, "
		 "\"placement\": {\"nodes\": [\"a\", \"b\"], \"ranks\": ["
		 "{\"node\": 0, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0, \"pp_rank\": 0, "
		 "\"dp_rank\": 0}, {\"node\": 1, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0, "
		 "\"pp_rank\": 0, \"dp_rank\": 1}], \"leaves\": [{\"name\": \"l\", \"nodes\": "
		 "1}]}}",
		 "placement.leaves hold 1 nodes, the plan 2"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_plan *p = (void *)&cases;
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_plan_from_json(cases[i].json, &p, &err), DTPLAN_ERR_PARSE);
		assert_null(p);
		if (strstr(err.text, cases[i].msg) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text, cases[i].msg);
	}
}

/* A whole placed plan, TP 1 x PP 2 x DP 1 on one node, with more members of
 * "parallelism" where %s is. */
#define BOTH_PLAN                                                                                  \
	"{\"schema\": \"dtplan.plan/1\",\n"                                                        \
	" \"parallelism\": {\"tp\": 1, \"pp\": 2, \"dp\": 1, %s},\n"                               \
	" \"model\": {\"layers\": 8}, \"gpu\": {}, \"gpus\": 2, \"gpus_per_node\": 2,\n"           \
	" \"placement\": {\"nodes\": [\"a\"], \"ranks\": [{\"node\": 0, \"gpu\": 0, "              \
	"\"local_rank\": 0, \"pp_rank\": 0}, {\"node\": 0, \"gpu\": 1, \"local_rank\": 1, "        \
	"\"pp_rank\": 1}]}}"

/*
 * "parallelism" has one reader, for srun's steps and for dtplan show: a
 * mistake in it is the same error, code, text and line, whichever reads it.
 * Before, the ranks reader passed over what tasks do not need (vp, offload,
 * schedule, layers_per_stage, stage_imbalance) that dtplan show refused, and
 * only dtplan show's Jansson tree refused an integer past 64 bits there.
 */
static void both_readers__mistake_in_parallelism__same_error(void **state)
{
	static const struct {
		const char *members;
		const char *text;
		int line;
	} cases[] = {
		{"\"vp\": \"2\"", "parallelism.vp: expected a whole number", 2},
		{"\"vp\": 99999999999999999999", "parallelism.vp: expected a whole number", 2},
		{"\"vp\": 2, \"vp\": 2", "duplicate object key 'vp'", 2},
		{"\"offload\": \"yes\"", "parallelism.offload: expected true or false", 2},
		{"\"schedule\": \"zb\"", "parallelism.schedule: expected \"1f1b\" or \"dualpipe\"",
		 2},
		{"\"schedule\": null", "parallelism.schedule: expected \"1f1b\" or \"dualpipe\"",
		 2},
		{"\"layers_per_stage\": [8]",
		 "parallelism.layers_per_stage: expected 2 layer counts", 0},
		{"\"layers_per_stage\": [0, 0]",
		 "parallelism.layers_per_stage[0]: expected a whole number >= 1", 0},
		{"\"layers_per_stage\": [4, 4], \"stage_imbalance\": \"x\"",
		 "parallelism.stage_imbalance: expected a number", 2},
		{"\"zero\": 1.5", "parallelism.zero: expected a whole number", 2},
		/* the experts' groups fold over TP x CP x DP (Megatron-Core's
		 * folding, the widest layout a plan may have) */
		{"\"ep\": 2",
		 "parallelism: ETP 1 x EP 2 does not divide TP x CP x DP 1 (the experts' groups "
		 "fold over the same ranks)",
		 0},
		{"\"zero\": 0, \"offload\": true",
		 "parallelism: ZeRO-Offload runs with ZeRO-1, 2 or 3, not ZeRO-0", 0},
	};
	char text[1024];
	struct dtplan_plan *p = NULL;
	struct dtplan_error ranks = {0}, whole = {0};

	(void)state;
	/* the plan itself reads in both */
	snprintf(text, sizeof(text), BOTH_PLAN, "\"layers_per_stage\": [4, 4], \"vp\": 2");
	assert_int_equal(dtplan_plan_ranks_from_json(text, &p, &ranks), DTPLAN_OK);
	assert_int_equal(p->best.vp, 2);
	assert_int_equal(p->best.stages.last, 4);
	dtplan_plan_destroy(p);
	assert_int_equal(dtplan_plan_from_json(text, &p, &whole), DTPLAN_OK);
	dtplan_plan_destroy(p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), BOTH_PLAN, cases[i].members);
		assert_int_equal(dtplan_plan_ranks_from_json(text, &p, &ranks), DTPLAN_ERR_PARSE);
		assert_int_equal(dtplan_plan_from_json(text, &p, &whole), DTPLAN_ERR_PARSE);
		if (strcmp(ranks.text, cases[i].text) != 0 ||
		    strcmp(whole.text, cases[i].text) != 0)
			fail_msg("case %zu: '%s' and '%s', not '%s'", i, ranks.text, whole.text,
				 cases[i].text);
		assert_int_equal(ranks.line, cases[i].line);
		assert_int_equal(whole.line, cases[i].line);
	}
}

/* The runner-up's degrees are read as "parallelism" is: an EP that does not
 * divide its DP used to pass there. */
static void plan_from_json__runner_up_ep_not_dividing_dp__refused(void **state)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL, *back = NULL;
	struct dtplan_error err = {0};
	char *json = NULL, *ru, *ep;

	(void)state;
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("llama3-8b", &r.model, NULL), DTPLAN_OK);
	r.gpus = 64;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	assert_true(p->have_runner_up);
	assert_int_equal(dtplan_plan_to_json(p, true, &json, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_from_json(json, &back, &err), DTPLAN_OK);
	dtplan_plan_destroy(back);
	back = NULL;
	ru = strstr(json, "\"runner_up\"");
	assert_non_null(ru);
	ep = strstr(ru, "\"ep\": 1,");
	assert_non_null(ep);
	ep[6] = '7'; /* no DP of a 64-GPU split is a multiple of 7 */
	assert_int_equal(dtplan_plan_from_json(json, &back, &err), DTPLAN_ERR_PARSE);
	assert_null(back);
	assert_non_null(strstr(err.text, " x EP 7 does not divide TP x CP x DP "));
	free(json);
	dtplan_plan_destroy(p);
}

/* text with n copies of unit between head and tail (caller frees). */
static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t h = strlen(head), u = strlen(unit), t = strlen(tail);
	char *s = malloc(h + u * n + t + 1);

	assert_non_null(s);
	memcpy(s, head, h);
	for (size_t i = 0; i < n; i++)
		memcpy(s + h + u * i, unit, u);
	memcpy(s + h + u * n, tail, t + 1);
	return s;
}

#define WHOLE_HEAD                                                                                 \
	"{\"schema\": \"dtplan.plan/1\", \"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 1},\n"    \
	" \"gpu\": {}, \"gpus\": 1, \"gpus_per_node\": 1,\n"

/* dtplan show's reader: the small members become trees only after the
 * shared first pass, each at most 1 MiB of text; what Jansson refuses is
 * named with the member and its line. */
static void plan_from_json__hostile_members__bounded_and_named(void **state)
{
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	char *text;

	(void)state;
	/* a key twice inside a member: line 3 of the text */
	assert_int_equal(dtplan_plan_from_json(WHOLE_HEAD " \"model\": {\"layers\": 1, "
							  "\"layers\": 2}}",
					       &p, &err),
			 DTPLAN_ERR_PARSE);
	assert_null(p);
	assert_non_null(strstr(err.text, "model: duplicate object key"));
	assert_int_equal(err.line, 3);
	/* 40 levels in a member: the first pass stops at the 33rd */
	text = repeat(WHOLE_HEAD " \"model\": {\"layers\": 1, \"x\": ", "[", 40, "");
	assert_int_equal(dtplan_plan_from_json(text, &p, &err), DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "nested more than 32 levels deep");
	free(text);
	/* 1 MiB + 3 bytes of warnings: 349,526 x "{}," = 1,048,578 bytes, plus "[" and "{}]" */
	text = repeat(WHOLE_HEAD " \"model\": {\"layers\": 1}, \"warnings\": [", "{},", 349526,
		      "{}]}");
	assert_int_equal(dtplan_plan_from_json(text, &p, &err), DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "warnings: longer than the 1048576 bytes a plan member may "
				      "take");
	assert_int_equal(err.line, 3);
	free(text);
	/* a leaf of -1 nodes */
	assert_int_equal(
		dtplan_plan_from_json(
			WHOLE_HEAD
			" \"model\": {\"layers\": 1}, \"placement\": {\"nodes\": "
			"[\"a\"], \"ranks\": [{\"node\": 0, \"gpu\": 0, \"local_rank\": 0, "
			"\"tp_rank\": 0, \"pp_rank\": 0, \"dp_rank\": 0}], \"leaves\": "
			"[{\"name\": \"l\", \"nodes\": -1}]}}",
			&p, &err),
		DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "placement.leaves[0].nodes: expected a whole number >= 1");
}

/* The other JSON readers of text dtplan did not write share the plan
 * reader's depth and count a value bound before Jansson builds a tree
 * (lib/base/json_load.c). */
static void json_readers__hostile_shapes__refused_before_a_tree(void **state)
{
	struct dtplan_measure_file mf;
	struct dtplan_fabric_desc *fab = NULL;
	struct dtplan_report r = {0};
	struct dtplan_node *node = malloc(sizeof(*node));
	struct dtplan_error err = {0};
	char *text, *out = NULL;

	(void)state;
	assert_non_null(node);
	/* node JSON: 33 levels on line 2 */
	text = repeat("{\"gpus\":\n", "[", 33, "");
	assert_int_equal(dtplan_node_from_json(text, node, &err), DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "nested more than 32 levels deep");
	assert_int_equal(err.line, 2);
	free(text);
	/* node JSON: 65,536 commas: more values than the 65,536 a node may take */
	text = repeat("{\"x\": [", "0,", 65536, "0]}");
	assert_int_equal(dtplan_node_from_json(text, node, &err), DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "more than 65536 values");
	free(text);
	/* the measurement file */
	text = repeat("{\"job_id\": 1, \"m\": ", "{\"a\": ", 33, "");
	assert_int_equal(dtplan_measure_file_from_json(text, &mf, &err), DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "nested more than 32 levels deep");
	free(text);
	/* the fabric service's answer */
	text = repeat("{\"schema\": \"dtplan.fabric/1\", \"switches\": ", "[", 40, "");
	assert_int_equal(dtplan_fabric_desc_parse(text, strlen(text), DTPLAN_FABRIC_JSON, "fabric",
						  &fab, &err),
			 DTPLAN_ERR_PARSE);
	assert_null(fab);
	assert_string_equal(err.text, "not valid JSON: nested more than 32 levels deep");
	free(text);
	/* a plan handed to a report */
	text = repeat("{\"schema\": \"dtplan.plan/1\", \"x\": ", "[", 40, "");
	r.plan_json = text;
	r.uid = -1;
	assert_int_equal(dtplan_report_to_json(&r, &out, &err), DTPLAN_ERR_PARSE);
	assert_null(out);
	assert_string_equal(err.text, "not valid JSON: nested more than 32 levels deep");
	free(text);
	free(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ranks_from_json__good_plan__fields),
		cmocka_unit_test(ranks_from_json__minimal__defaults),
		cmocka_unit_test(ranks_from_json__bad_documents__parse_error),
		cmocka_unit_test(ranks_from_json__plan_to_json_output__round_trip),
		cmocka_unit_test(ranks_from_json__16_mib_of_empty_objects__little_memory),
		cmocka_unit_test(ranks_from_json__ranks_name_nodes__n_log_n),
		cmocka_unit_test(ranks_from_json__limits__refused_before_allocating),
		cmocka_unit_test(ranks_from_json__null__inval),
		cmocka_unit_test(plan_from_json__placed_plan__renders_as_made),
		cmocka_unit_test(plan_from_json__rank_order_names__read_or_refused),
		cmocka_unit_test(plan_from_json__no_placement__renders_as_made),
		cmocka_unit_test(plan_from_json__interleaved_megatron_training__renders_as_made),
		cmocka_unit_test(plan_from_json__deepseek_recipe__renders_as_made),
		cmocka_unit_test(plan_from_json__bad_documents__error_names_member),
		cmocka_unit_test(both_readers__mistake_in_parallelism__same_error),
		cmocka_unit_test(plan_from_json__runner_up_ep_not_dividing_dp__refused),
		cmocka_unit_test(plan_from_json__hostile_members__bounded_and_named),
		cmocka_unit_test(json_readers__hostile_shapes__refused_before_a_tree),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
