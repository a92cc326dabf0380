/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_probe_schedule.c: the probe schedule as a pure function (pairs per
 * round, disjointness, coverage, a constant round count at 8, 1,000 and
 * 16,000 nodes), the fan-in tree and the cost model
 * (lib/measure/probe_schedule.c).
 */
#include "test_common.h"

#include "dtplan.h"

/* leaf[i] = i / per (the last leaf may be short). */
static int32_t *leaves_of(size_t n, size_t per)
{
	int32_t *leaf = malloc(n * sizeof(*leaf));

	assert_non_null(leaf);
	for (size_t i = 0; i < n; i++)
		leaf[i] = (int32_t)(i / per);
	return leaf;
}

static struct dtplan_probe_schedule *build(size_t n, const int32_t *leaf, const uint8_t *present)
{
	struct dtplan_probe_schedule *s = NULL;
	struct dtplan_error err = {0};

	assert_int_equal(dtplan_probe_schedule_create(n, leaf, present, &s, &err), DTPLAN_OK);
	assert_non_null(s);
	return s;
}

static bool has_pair(const struct dtplan_probe_round *r, uint32_t from, uint32_t to)
{
	for (size_t k = 0; k < r->n_pairs; k++)
		if (r->pairs[k].from == from && r->pairs[k].to == to)
			return true;
	return false;
}

/* Every round: each node in at most one pair, never with itself, and peer[]
 * and sends[] saying the same as pairs[]. */
static void check_disjoint(const struct dtplan_probe_schedule *s)
{
	uint8_t *seen = calloc(s->n_nodes, 1);

	assert_non_null(seen);
	for (size_t r = 0; r < s->n_rounds; r++) {
		const struct dtplan_probe_round *rd = &s->rounds[r];
		size_t busy = 0;

		memset(seen, 0, s->n_nodes);
		assert_true(rd->n_pairs > 0);
		for (size_t k = 0; k < rd->n_pairs; k++) {
			uint32_t a = rd->pairs[k].from, b = rd->pairs[k].to;

			assert_true(a < s->n_nodes && b < s->n_nodes);
			assert_true(a != b);
			if (seen[a] || seen[b])
				fail_msg("round %zu: node %u or %u in two pairs", r, a, b);
			seen[a] = seen[b] = 1;
			assert_int_equal(rd->peer[a], (int32_t)b);
			assert_int_equal(rd->peer[b], (int32_t)a);
			assert_int_equal(rd->sends[a], 1);
			assert_int_equal(rd->sends[b], 0);
		}
		for (size_t i = 0; i < s->n_nodes; i++) {
			busy += rd->peer[i] >= 0;
			if (!seen[i])
				assert_int_equal(rd->peer[i], -1);
		}
		assert_int_equal(busy, 2 * rd->n_pairs);
	}
	free(seen);
}

static void schedule__8_nodes_two_leaves__the_four_rounds_by_hand(void **state)
{
	static const int32_t leaf[8] = {0, 0, 0, 0, 1, 1, 1, 1};
	struct dtplan_probe_schedule *s = build(8, leaf, NULL);
	const struct dtplan_probe_round *r = s->rounds;

	(void)state;
	assert_int_equal(s->n_rounds, 4);
	assert_int_equal(s->n_groups, 2);
	/* intra A: neighbours */
	assert_int_equal(r[0].kind, DTPLAN_ROUND_INTRA);
	assert_int_equal(r[0].n_pairs, 4);
	assert_true(has_pair(&r[0], 0, 1) && has_pair(&r[0], 2, 3) && has_pair(&r[0], 4, 5) &&
		    has_pair(&r[0], 6, 7));
	/* intra B: shifted by one, the last with the first */
	assert_int_equal(r[1].kind, DTPLAN_ROUND_INTRA);
	assert_int_equal(r[1].n_pairs, 4);
	assert_true(has_pair(&r[1], 1, 2) && has_pair(&r[1], 3, 0) && has_pair(&r[1], 5, 6) &&
		    has_pair(&r[1], 7, 4));
	/* cross: one flow between the two leaves */
	assert_int_equal(r[2].kind, DTPLAN_ROUND_CROSS);
	assert_int_equal(r[2].n_pairs, 1);
	assert_true(has_pair(&r[2], 0, 4));
	/* concurrent: p with p + 4, directions alternating */
	assert_int_equal(r[3].kind, DTPLAN_ROUND_CONCURRENT);
	assert_int_equal(r[3].n_pairs, 4);
	assert_true(has_pair(&r[3], 0, 4) && has_pair(&r[3], 5, 1) && has_pair(&r[3], 2, 6) &&
		    has_pair(&r[3], 7, 3));
	check_disjoint(s);
	dtplan_probe_schedule_destroy(s);
}

/* Coverage: in a leaf of 4 or more, every node has two different intra
 * partners (rounds A and B); every leaf sends and receives across its
 * uplink in the concurrent round; each pair of leaves 2i, 2i+1 has one
 * single cross flow. */
static void check_coverage(const struct dtplan_probe_schedule *s, const int32_t *leaf, size_t per)
{
	size_t n = s->n_nodes, n_leaves = (n + per - 1) / per, intra = 0, cross = 0;
	const struct dtplan_probe_round *A = NULL, *B = NULL, *C = NULL;
	uint8_t *up = calloc(n_leaves, 1), *down = calloc(n_leaves, 1);

	assert_non_null(up);
	assert_non_null(down);
	for (size_t r = 0; r < s->n_rounds; r++) {
		if (s->rounds[r].kind == DTPLAN_ROUND_INTRA && intra++ == 0)
			A = &s->rounds[r];
		else if (s->rounds[r].kind == DTPLAN_ROUND_INTRA)
			B = &s->rounds[r];
		else if (s->rounds[r].kind == DTPLAN_ROUND_CONCURRENT)
			C = &s->rounds[r];
		else
			cross += s->rounds[r].n_pairs;
	}
	assert_non_null(A);
	assert_non_null(B);
	for (size_t i = 0; i < n; i++) {
		size_t size = (size_t)leaf[i] == n_leaves - 1 ? n - (n_leaves - 1) * per : per;

		if (size < 4)
			continue;
		assert_true(A->peer[i] >= 0 && B->peer[i] >= 0);
		assert_true(A->peer[i] != B->peer[i]);
		assert_int_equal(leaf[A->peer[i]], leaf[i]);
		assert_int_equal(leaf[B->peer[i]], leaf[i]);
	}
	if (n_leaves >= 2) {
		assert_non_null(C);
		assert_int_equal(cross, n_leaves / 2 + (n_leaves % 2));
		for (size_t k = 0; k < C->n_pairs; k++) {
			uint32_t a = C->pairs[k].from, b = C->pairs[k].to;

			assert_true(leaf[a] != leaf[b]);
			up[leaf[a]] = 1;
			down[leaf[b]] = 1;
		}
		for (size_t l = 0; l < n_leaves; l++)
			if (!up[l] || !down[l])
				fail_msg("leaf %zu of %zu: uplink not loaded both ways", l,
					 n_leaves);
	}
	free(up);
	free(down);
}

static void schedule__8_1000_16000_nodes__disjoint_covering_constant_rounds(void **state)
{
	static const struct {
		size_t n, per, rounds;
	} cases[] = {
		{8, 4, 4},         /* two leaves */
		{1000, 32, 4},     /* 32 leaves, the last of 8 */
		{16000, 32, 4},    /* 500 leaves */
		{1000, 40, 5},     /* 25 leaves: an odd last leaf needs a second cross round */
		{16000, 48, 4},    /* 334 leaves, the last of 16 */
		{16000, 16000, 2}, /* one leaf: intra rounds only */
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int32_t *leaf = leaves_of(cases[c].n, cases[c].per);
		struct dtplan_probe_schedule *s = build(cases[c].n, leaf, NULL);

		if (s->n_rounds != cases[c].rounds)
			fail_msg("%zu nodes, %zu per leaf: %zu rounds, expected %zu", cases[c].n,
				 cases[c].per, s->n_rounds, cases[c].rounds);
		assert_true(s->n_rounds <= DTPLAN_PROBE_MAX_ROUNDS);
		check_disjoint(s);
		check_coverage(s, leaf, cases[c].per);
		dtplan_probe_schedule_destroy(s);
		free(leaf);
	}
}

static void schedule__absent_nodes__never_paired(void **state)
{
	int32_t *leaf = leaves_of(1000, 32);
	uint8_t *present = malloc(1000);
	struct dtplan_probe_schedule *s;

	(void)state;
	assert_non_null(present);
	for (size_t i = 0; i < 1000; i++)
		present[i] = i % 7 != 3;
	s = build(1000, leaf, present);
	check_disjoint(s);
	for (size_t r = 0; r < s->n_rounds; r++)
		for (size_t i = 0; i < 1000; i++)
			if (!present[i])
				assert_int_equal(s->rounds[r].peer[i], -1);
	/* the others all get a partner; leaf 0 keeps 27 nodes (3, 10, 17, 24
	 * and 31 are gone): node 1 pairs with 0, then with 2 */
	for (size_t i = 0; i < 1000; i++)
		if (present[i])
			assert_true(s->rounds[0].peer[i] >= 0 || s->rounds[1].peer[i] >= 0);
	assert_int_equal(s->rounds[0].peer[1], 0);
	assert_int_equal(s->rounds[1].peer[1], 2);
	assert_int_equal(s->rounds[1].peer[4], 5);
	dtplan_probe_schedule_destroy(s);
	free(leaf);
	free(present);
}

static void schedule__small_and_flat__few_rounds(void **state)
{
	static const int32_t unknown[3] = {-1, 5, -1};
	struct dtplan_probe_schedule *s;

	(void)state;
	s = build(1, NULL, NULL);
	assert_int_equal(s->n_rounds, 0);
	dtplan_probe_schedule_destroy(s);
	s = build(2, NULL, NULL);
	assert_int_equal(s->n_rounds, 1);
	assert_true(has_pair(&s->rounds[0], 0, 1));
	dtplan_probe_schedule_destroy(s);
	/* three flat nodes: 0-1, then 1-2 */
	s = build(3, NULL, NULL);
	assert_int_equal(s->n_rounds, 2);
	assert_true(has_pair(&s->rounds[0], 0, 1) && has_pair(&s->rounds[1], 1, 2));
	dtplan_probe_schedule_destroy(s);
	/* unknown leaves group together, after the known one */
	s = build(3, unknown, NULL);
	assert_int_equal(s->n_groups, 2);
	assert_true(has_pair(&s->rounds[0], 0, 2));
	assert_int_equal(s->rounds[1].kind, DTPLAN_ROUND_CROSS);
	assert_true(has_pair(&s->rounds[1], 1, 0));
	dtplan_probe_schedule_destroy(s);
}

static void schedule__bad_arguments__inval(void **state)
{
	struct dtplan_probe_schedule *s = (void *)1;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_probe_schedule_create(0, NULL, NULL, &s, &err), DTPLAN_ERR_INVAL);
	assert_null(s);
	assert_non_null(strstr(err.text, "0 nodes"));
	assert_int_equal(dtplan_probe_schedule_create(4, NULL, NULL, NULL, NULL), DTPLAN_ERR_INVAL);
	dtplan_probe_schedule_destroy(NULL);
}

static void tree__parent_depth_contains(void **state)
{
	(void)state;
	assert_int_equal(dtplan_probe_tree_parent(0, 16), 0);
	assert_int_equal(dtplan_probe_tree_parent(16, 16), 0);
	assert_int_equal(dtplan_probe_tree_parent(17, 16), 1);
	assert_int_equal(dtplan_probe_tree_parent(272, 16), 16);
	/* 1 + 16 + 256 + 4096 = 4369 nodes fill three levels below the root */
	assert_int_equal(dtplan_probe_tree_depth(1, 16), 0);
	assert_int_equal(dtplan_probe_tree_depth(8, 16), 1);
	assert_int_equal(dtplan_probe_tree_depth(17, 16), 1);
	assert_int_equal(dtplan_probe_tree_depth(18, 16), 2);
	assert_int_equal(dtplan_probe_tree_depth(1000, 16), 3);
	assert_int_equal(dtplan_probe_tree_depth(4369, 16), 3);
	assert_int_equal(dtplan_probe_tree_depth(4370, 16), 4);
	assert_int_equal(dtplan_probe_tree_depth(16000, 16), 4);
	assert_true(dtplan_probe_tree_contains(1, 17, 16));
	assert_true(dtplan_probe_tree_contains(1, 272 + 1, 16)); /* 273 is 17's child */
	assert_false(dtplan_probe_tree_contains(2, 17, 16));
	assert_true(dtplan_probe_tree_contains(0, 15999, 16));
	assert_true(dtplan_probe_tree_contains(5, 5, 16));
}

/* The cost of 8 nodes in two leaves, by hand: 13 pairs of a probe each
 * (two 278-byte message overheads, 28 + 24 bytes of bodies, 32 pings of 64
 * bytes each way, 32 MiB of bulk), and the wall time of
 * doc/internals/probe.md: 0.15 s discovery, 5 tree hops of 1 ms, 0.1 s of
 * margins and 4 rounds of 0.25 s. */
static void cost__8_nodes__by_hand(void **state)
{
	static const int32_t leaf[8] = {0, 0, 0, 0, 1, 1, 1, 1};
	struct dtplan_probe_schedule *s = build(8, leaf, NULL);
	struct dtplan_probe_params p;
	struct dtplan_probe_cost c;
	double per_pair = 2 * 278.0 + 52 + 2 * 32 * 64 + 32.0 * 1048576;

	(void)state;
	dtplan_probe_params_init(&p);
	assert_int_equal(dtplan_probe_cost(s, &p, &c, NULL), DTPLAN_OK);
	assert_int_equal(c.rounds, 4);
	assert_int_equal(c.pairs, 13);
	assert_int_equal(c.depth, 1);
	assert_int_equal(c.max_connections, 1 + 7 + 1);
	assert_near(c.probe_bytes, 13 * per_pair, 1e-6);
	assert_near(c.wall_s, 0.15 + 5 * 0.001 + 0.1 + 4 * 0.25, 1e-12);
	/* the leader (node 0) is in 4 pairs: 0-1, 3-0, 0-4 and 0-4 */
	assert_true(c.leader_bytes > 4 * per_pair);
	assert_true(c.tree_bytes > 7 * 8000.0);
	dtplan_probe_schedule_destroy(s);
}

/* At 1,000 and 16,000 nodes the rounds and the wall time stay put; only the
 * tree's depth and bytes grow, and no node holds more than fanout + 2
 * connections. */
static void cost__1000_and_16000_nodes__constant_rounds_bounded_connections(void **state)
{
	static const size_t sizes[] = {1000, 16000};
	struct dtplan_probe_params p;
	struct dtplan_probe_cost c[2];

	(void)state;
	dtplan_probe_params_init(&p);
	for (size_t k = 0; k < 2; k++) {
		int32_t *leaf = leaves_of(sizes[k], 32);
		struct dtplan_probe_schedule *s = build(sizes[k], leaf, NULL);

		assert_int_equal(dtplan_probe_cost(s, &p, &c[k], NULL), DTPLAN_OK);
		assert_int_equal(c[k].rounds, 4);
		assert_int_equal(c[k].max_connections, 16 + 2);
		assert_near(c[k].wall_s, 0.15 + 5.0 * (double)c[k].depth * 0.001 + 0.1 + 4 * 0.25,
			    1e-12);
		dtplan_probe_schedule_destroy(s);
		free(leaf);
	}
	assert_int_equal(c[0].depth, 3);
	assert_int_equal(c[1].depth, 4);
	assert_true(c[1].wall_s - c[0].wall_s < 0.01);
	/* tree bytes grow as n log n, not n^2: 16x the nodes, under 32x the bytes */
	assert_true(c[1].tree_bytes < 32 * c[0].tree_bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schedule__8_nodes_two_leaves__the_four_rounds_by_hand),
		cmocka_unit_test(schedule__8_1000_16000_nodes__disjoint_covering_constant_rounds),
		cmocka_unit_test(schedule__absent_nodes__never_paired),
		cmocka_unit_test(schedule__small_and_flat__few_rounds),
		cmocka_unit_test(schedule__bad_arguments__inval),
		cmocka_unit_test(tree__parent_depth_contains),
		cmocka_unit_test(cost__8_nodes__by_hand),
		cmocka_unit_test(cost__1000_and_16000_nodes__constant_rounds_bounded_connections),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
