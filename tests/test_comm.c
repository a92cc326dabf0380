/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_comm.c: alpha-beta collective costs (DESIGN.md acceptance numbers).
 */
#include "test_common.h"

#include "cost/cost.h"

/* Ring all-reduce bytes per rank relative to S: 2(n-1)/n. */
static const struct {
	int n;
	double ratio;
} ring_ratio_cases[] = {
	{1, 0.0},
	{2, 1.0},            /* 2 * 1/2 */
	{8, 1.75},           /* 2 * 7/8 */
	{64, 1.96875},       /* 2 * 63/64 */
	{1024, 1.998046875}, /* 2 * 1023/1024 */
};

static void comm_bytes_per_rank__ring_allreduce__seed_ratios(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ring_ratio_cases) / sizeof(ring_ratio_cases[0]); i++) {
		double r = dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1.0,
						      ring_ratio_cases[i].n);

		assert_near(r, ring_ratio_cases[i].ratio, 1e-12);
	}
	/* the seed's rounded forms */
	assert_near(dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1.0, 64),
		    1.969, 5e-4);
	assert_near(dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1.0, 1024),
		    1.998, 5e-4);
}

static void comm_bytes_per_rank__other_collectives__by_formula(void **state)
{
	(void)state;
	/* (n-1)/n S: 7/8 * 8e6 = 7e6 */
	assert_near(dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_RING, 8e6, 8),
		    7e6, 1e-6);
	assert_near(dtplan_comm_bytes_per_rank(DTPLAN_COLL_REDUCESCATTER, DTPLAN_ALGO_TREE, 8e6, 8),
		    7e6, 1e-6);
	/* tree all-reduce: 2S whatever n */
	assert_near(dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_TREE, 8e6, 64),
		    16e6, 1e-6);
	assert_near(dtplan_comm_bytes_per_rank(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, 8e6, 2), 8e6,
		    1e-6);
	assert_near(dtplan_comm_bytes_per_rank(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, 8e6, 1), 0.0,
		    0.0);
}

/* Bandwidth terms, alpha = 0. */
static const struct {
	enum dtplan_coll c;
	double bytes;
	int n;
	double bw, seconds;
} time_cases[] = {
	/* 14 GB gradients, many GPUs: 2 * 1023/1024 * 14e9 / 900e9 = 0.0310807 s (~31 ms) */
	{DTPLAN_COLL_ALLREDUCE, 14e9, 1024, 900e9, 2.0 * 1023.0 / 1024.0 * 14e9 / 900e9},
	/* 2 * 1023/1024 * 14e9 / 50e9 = 0.559453 s (~560 ms) */
	{DTPLAN_COLL_ALLREDUCE, 14e9, 1024, 50e9, 2.0 * 1023.0 / 1024.0 * 14e9 / 50e9},
	/* 40 GB plain transfer: 40e9 / 900e9 = 0.04444 s; 40e9 / 50e9 = 0.8 s */
	{DTPLAN_COLL_P2P, 40e9, 2, 900e9, 0.0444444444444},
	{DTPLAN_COLL_P2P, 40e9, 2, 50e9, 0.8},
	/* all-gather of 8 GB over 8 at 100 GB/s: 7/8 * 8e9 / 100e9 = 0.07 s */
	{DTPLAN_COLL_ALLGATHER, 8e9, 8, 100e9, 0.07},
	{DTPLAN_COLL_REDUCESCATTER, 8e9, 8, 100e9, 0.07},
	/* n = 1 costs nothing */
	{DTPLAN_COLL_ALLREDUCE, 14e9, 1, 900e9, 0.0},
	{DTPLAN_COLL_ALLREDUCE, 0.0, 8, 900e9, 0.0},
};

static void comm_seconds__bandwidth_terms__seed_numbers(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(time_cases) / sizeof(time_cases[0]); i++)
		assert_rel(dtplan_comm_seconds(time_cases[i].c, DTPLAN_ALGO_RING,
					       time_cases[i].bytes, time_cases[i].n,
					       time_cases[i].bw, 0.0),
			   time_cases[i].seconds, 1e-9);
	/* rounded seed numbers: about 31 ms and 560 ms, 44 ms and 800 ms */
	assert_near(dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 14e9, 1024, 900e9,
					0.0),
		    0.031, 0.0005);
	assert_near(dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 14e9, 1024, 50e9,
					0.0),
		    0.560, 0.001);
	assert_near(dtplan_comm_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, 40e9, 2, 900e9, 0.0),
		    0.0444, 0.0001);
}

/* Latency terms: time(alpha) - time(0), alpha = 5 us, S = 1 MB, B = 100 GB/s. */
static const struct {
	enum dtplan_coll c;
	enum dtplan_algo a;
	int n;
	double latency;
} latency_cases[] = {
	{DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 8, 70e-6},      /* 2 * 7 * 5 us */
	{DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 2, 10e-6},      /* 2 * 1 * 5 us */
	{DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_RING, 8, 35e-6},      /* 7 * 5 us */
	{DTPLAN_COLL_REDUCESCATTER, DTPLAN_ALGO_RING, 16, 75e-6}, /* 15 * 5 us */
	{DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_TREE, 8, 30e-6},      /* 2 * log2(8) * 5 us */
	{DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_TREE, 1024, 100e-6},  /* 2 * 10 * 5 us */
	{DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, 2, 5e-6},
};

static void comm_seconds__latency_terms__by_formula(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(latency_cases) / sizeof(latency_cases[0]); i++) {
		double with = dtplan_comm_seconds(latency_cases[i].c, latency_cases[i].a, 1e6,
						  latency_cases[i].n, 100e9, 5e-6);
		double without = dtplan_comm_seconds(latency_cases[i].c, latency_cases[i].a, 1e6,
						     latency_cases[i].n, 100e9, 0.0);

		assert_near(with - without, latency_cases[i].latency, 1e-12);
	}
	assert_near(dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1e6, 1, 100e9,
					5e-6),
		    0.0, 0.0);
}

static void comm_seconds__tree_vs_ring__tree_wins_small_ring_large(void **state)
{
	double ring, tree;

	(void)state;
	/* 1 KB over 1024: ring 2*1023 * 5 us = 10.23 ms of latency; tree 100 us */
	ring = dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1e3, 1024, 50e9, 5e-6);
	tree = dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_TREE, 1e3, 1024, 50e9, 5e-6);
	assert_true(tree < ring);
	/* tree: 2 * 1e3 / 50e9 + 2 * 10 * 5e-6 = 4e-8 + 1e-4 */
	assert_rel(tree, 4e-8 + 1e-4, 1e-9);
	/* 14 GB over 4: ring 1.5 S/B beats tree 2 S/B */
	ring = dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 14e9, 4, 50e9, 5e-6);
	tree = dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_TREE, 14e9, 4, 50e9, 5e-6);
	assert_true(ring < tree);
}

static void comm_seconds__bad_arguments__nan(void **state)
{
	(void)state;
	assert_true(isnan(
		dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1e9, 8, 0.0, 0.0)));
	assert_true(isnan(
		dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1e9, 8, -1e9, 0.0)));
	assert_true(isnan(
		dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, -1.0, 8, 1e9, 0.0)));
	assert_true(isnan(
		dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1e9, 8, 1e9, -1e-6)));
	assert_true(isnan(
		dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, NAN, 8, 1e9, 0.0)));
	assert_true(isnan(
		dtplan_comm_seconds((enum dtplan_coll)9, DTPLAN_ALGO_RING, 1e9, 8, 1e9, 0.0)));
	assert_true(
		isnan(dtplan_comm_seconds(DTPLAN_COLL_P2P, (enum dtplan_algo)5, 1e9, 8, 1e9, 0.0)));
	assert_true(isnan(
		dtplan_comm_bytes_per_rank((enum dtplan_coll) - 1, DTPLAN_ALGO_RING, 1e9, 8)));
	assert_true(isnan(
		dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, INFINITY, 8)));
	/* n = 0 or negative is no collective at all */
	assert_near(dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, 1e9, 0, 1e9, 0.0),
		    0.0, 0.0);
}

static const struct {
	const char *text;
	enum dtplan_err code;
	enum dtplan_coll c;
} coll_cases[] = {
	{"allreduce", DTPLAN_OK, DTPLAN_COLL_ALLREDUCE},
	{"all-reduce", DTPLAN_OK, DTPLAN_COLL_ALLREDUCE},
	{"All_Gather", DTPLAN_OK, DTPLAN_COLL_ALLGATHER},
	{"reduce-scatter", DTPLAN_OK, DTPLAN_COLL_REDUCESCATTER},
	{"P2P", DTPLAN_OK, DTPLAN_COLL_P2P},
	{"broadcast", DTPLAN_ERR_INVAL, 0},
	{"", DTPLAN_ERR_INVAL, 0},
	{"all-reduce-all-reduce-all-reduce-all-reduce", DTPLAN_ERR_INVAL, 0},
	{NULL, DTPLAN_ERR_INVAL, 0},
};

static void coll_parse__table__round_trips(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(coll_cases) / sizeof(coll_cases[0]); i++) {
		enum dtplan_coll c = (enum dtplan_coll)42, back = (enum dtplan_coll)42;
		struct dtplan_error err;

		assert_int_equal(dtplan_coll_parse(coll_cases[i].text, &c, &err),
				 coll_cases[i].code);
		if (coll_cases[i].code != DTPLAN_OK) {
			assert_int_equal(c, 42);
			assert_non_null(strstr(err.text, "allreduce, allgather"));
			continue;
		}
		assert_int_equal(c, coll_cases[i].c);
		assert_int_equal(dtplan_coll_parse(dtplan_coll_name(c), &back, NULL), DTPLAN_OK);
		assert_int_equal(back, c);
	}
	assert_string_equal(dtplan_coll_name(DTPLAN_COLL_ALLREDUCE), "allreduce");
	assert_string_equal(dtplan_coll_name((enum dtplan_coll)17), "unknown");
}

static void algo_parse__table__round_trips(void **state)
{
	enum dtplan_algo a = (enum dtplan_algo)42;
	struct dtplan_error err;

	(void)state;
	assert_int_equal(dtplan_algo_parse("ring", &a, NULL), DTPLAN_OK);
	assert_int_equal(a, DTPLAN_ALGO_RING);
	assert_int_equal(dtplan_algo_parse("TREE", &a, NULL), DTPLAN_OK);
	assert_int_equal(a, DTPLAN_ALGO_TREE);
	assert_string_equal(dtplan_algo_name(a), "tree");
	assert_string_equal(dtplan_algo_name(DTPLAN_ALGO_RING), "ring");
	assert_int_equal(dtplan_algo_parse("NVLS", &a, NULL), DTPLAN_OK);
	assert_int_equal(a, DTPLAN_ALGO_NVLS);
	assert_string_equal(dtplan_algo_name(DTPLAN_ALGO_NVLS), "nvls");
	a = DTPLAN_ALGO_TREE;
	assert_string_equal(dtplan_algo_name((enum dtplan_algo)3), "unknown");
	assert_int_equal(dtplan_algo_parse("butterfly", &a, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "butterfly"));
	assert_int_equal(a, DTPLAN_ALGO_TREE);
	assert_int_equal(dtplan_algo_parse(NULL, &a, NULL), DTPLAN_ERR_INVAL);
}

/*
 * NCCL's latency model (lib/cost/comm.c; NVIDIA/nccl src/graph/tuning.cc at
 * 5067397): launch 6.6 / 14.0 / 8.4 us (LL / LL128 / Simple), NVLink hop
 * 0.6 / 1.9 / 3.4 us, network hop 2.7 / 4.0 / 14.0 us on a ring and 5.0 /
 * 8.5 / 14.0 us on a tree (and on a ring of one rank per node).  A 4,096-rank
 * ring all-reduce over 512 nodes of 8 takes 2(n-1) = 8,190 steps, 2(512-1) =
 * 1,022 of them across the network; the tree 2((8-1) NVLink + log2(512) = 9
 * network) hops.  Links of 1 us and 5 us (dtplan's default NVLinkLatency
 * and NetworkLatency) are floors under the hops.
 */
static const struct dtplan__nccl_path path_4096 = {400e9, 1e-6, 5e-6, 512, 0};

static void nccl__ring_allreduce_4096__pays_2n_minus_2_hops(void **state)
{
	double S = 8.0, bw = path_4096.bw, us = 1e-6;
	double bytes_ring = 2.0 * 4095.0 / 4096.0 * S;
	/* Simple: 8.4 + (8190 - 1022) max(1, 3.4) + 1022 max(5, 14) us */
	double simple = (8.4 + 7168.0 * 3.4 + 1022.0 * 14.0) * us + bytes_ring / bw;
	/* LL: 6.6 + 7168 max(1, 0.6) + 1022 max(5, 2.7) us, at half the bandwidth */
	double ll = (6.6 + 7168.0 * 1.0 + 1022.0 * 5.0) * us + bytes_ring / (0.5 * bw);

	(void)state;
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING,
					      DTPLAN__PROTO_SIMPLE, S, 4096, &path_4096),
		    simple, 1e-12);
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING,
					      DTPLAN__PROTO_LL, S, 4096, &path_4096),
		    ll, 1e-12);
	/* about 12 ms of latency alone: linear in n */
	assert_true(ll > 12e-3);
}

static void nccl__tree_allreduce_4096__pays_2_log2_hops(void **state)
{
	double S = 8.0, bw = path_4096.bw, us = 1e-6;
	/* LL: 6.6 + 2 (7 x 1 + 9 x 5) us; 2S at 0.92 / 3.8 of the bandwidth */
	double ll = (6.6 + 2.0 * (7.0 * 1.0 + 9.0 * 5.0)) * us + 2.0 * S / (0.92 / 3.8 * bw);
	enum dtplan_algo a = DTPLAN_ALGO_RING;
	enum dtplan__proto p = DTPLAN__PROTO_SIMPLE;

	(void)state;
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_TREE,
					      DTPLAN__PROTO_LL, S, 4096, &path_4096),
		    ll, 1e-12);
	/* NCCL picks the tree's LL for 8 bytes over 4,096 ranks: 110.6 us,
	 * against the ring's 12 ms */
	assert_near(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, S, 4096, &path_4096, &a, &p), ll,
		    1e-12);
	assert_int_equal(a, DTPLAN_ALGO_TREE);
	assert_int_equal(p, DTPLAN__PROTO_LL);
}

static void nccl__large_message_one_node__ring_simple(void **state)
{
	/* 1 GB over 8 GPUs of one node at 400 GB/s: the ring's 2 x 7/8 GB at
	 * the full bandwidth (Simple) beats the tree's 2 GB at 0.92 of it and
	 * LL128's 0.92; the 14 NVLink hops of 3.4 us and 8.4 us launch add 56 us */
	struct dtplan__nccl_path one = {400e9, 1e-6, 5e-6, 1, 0};
	double want = 2.0 * 7.0 / 8.0 * 1e9 / 400e9 + (8.4 + 14.0 * 3.4) * 1e-6;
	enum dtplan_algo a = DTPLAN_ALGO_TREE;
	enum dtplan__proto p = DTPLAN__PROTO_LL;

	(void)state;
	assert_near(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e9, 8, &one, &a, &p), want, 1e-12);
	assert_int_equal(a, DTPLAN_ALGO_RING);
	assert_int_equal(p, DTPLAN__PROTO_SIMPLE);
}

static void nccl__allgather__ring_only_and_hierarchical(void **state)
{
	/* all-gather over 64 ranks on 8 nodes: n - 1 = 63 steps, 8 - 1 = 7 of
	 * them across nodes; LL128: 14 + 56 x 1.9 + 7 x 5 (the link's floor
	 * over 4.0) us + 63/64 S at 0.92 */
	struct dtplan__nccl_path p8 = {100e9, 1e-6, 5e-6, 8, 0};
	double S = 1e6;
	double want = (14.0 + 56.0 * 1.9 + 7.0 * 5.0) * 1e-6 + 63.0 / 64.0 * S / (0.92 * 100e9);

	(void)state;
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_RING,
					      DTPLAN__PROTO_LL128, S, 64, &p8),
		    want, 1e-12);
	/* NCCL has no tree all-gather */
	assert_true(isnan(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_TREE,
						    DTPLAN__PROTO_SIMPLE, S, 64, &p8)));
	assert_false(
		isnan(dtplan__nccl_seconds(DTPLAN_COLL_REDUCESCATTER, S, 64, &p8, NULL, NULL)));
}

static void nccl__one_rank_per_node__tree_hops_and_link_floor(void **state)
{
	/* 16 ranks on 16 nodes: NCCL charges the ring the tree's network hop
	 * (Simple 14 us); a measured 20 us link is the floor instead */
	struct dtplan__nccl_path p = {50e9, 1e-6, 5e-6, 16, 0};
	double S = 1e3, bytes = 15.0 / 16.0 * S / 50e9;

	(void)state;
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_REDUCESCATTER, DTPLAN_ALGO_RING,
					      DTPLAN__PROTO_LL, S, 16, &p),
		    (6.6 + 15.0 * 5.0) * 1e-6 + 15.0 / 16.0 * S / (0.5 * 50e9), 1e-12);
	p.inter_lat = 20e-6;
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_REDUCESCATTER, DTPLAN_ALGO_RING,
					      DTPLAN__PROTO_SIMPLE, S, 16, &p),
		    (8.4 + 15.0 * 20.0) * 1e-6 + bytes, 1e-12);
}

/*
 * NVLS (NVLink SHARP), NCCL's model at 5067397 (lib/cost/comm.c): Simple
 * only, latency 25 us, bandwidth the link's x nvlsEfficiency (Hopper 0.85,
 * Blackwell 0.74) x (c-1)/c of its c channels (Hopper 16, Blackwell 24);
 * all-reduce (n-1)/n S over it, all-gather and reduce-scatter S over
 * (n-1)/n of it.  Inside one NVLink domain (nodes == 1) only.
 */
static const struct dtplan__nccl_path h100_node = {400e9, 1e-6, 5e-6, 1, DTPLAN_NVLS_HOPPER};
static const struct dtplan__nccl_path a100_node = {400e9, 1e-6, 5e-6, 1, DTPLAN_NVLS_NONE};

static void nccl__h100_large_allreduce__picks_nvls(void **state)
{
	/* 1 GB over 8 H100s: 25 us + 7/8 GB at 0.85 x 15/16 x 400 GB/s =
	 * 2.770 ms, against the ring's 2 x 7/8 GB at 400 GB/s + 56 us = 4.431 ms */
	double nvls = 25e-6 + 7.0 / 8.0 * 1e9 / (0.85 * 15.0 / 16.0 * 400e9);
	enum dtplan_algo a = DTPLAN_ALGO_RING;
	enum dtplan__proto p = DTPLAN__PROTO_LL;

	(void)state;
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_NVLS,
					      DTPLAN__PROTO_SIMPLE, 1e9, 8, &h100_node),
		    nvls, 1e-12);
	assert_near(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e9, 8, &h100_node, &a, &p), nvls,
		    1e-12);
	assert_int_equal(a, DTPLAN_ALGO_NVLS);
	assert_int_equal(p, DTPLAN__PROTO_SIMPLE);
	assert_near(nvls, 2.7701e-3, 1e-7);
	/* Simple only */
	assert_true(isnan(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_NVLS,
						    DTPLAN__PROTO_LL, 1e9, 8, &h100_node)));
	/* 1 GB all-gather: NVLS's 1 GB over 7/8 x 0.797 x 400 GB/s (3.59 ms)
	 * loses to the ring's 7/8 GB at 400 GB/s + 8.4 + 7 x 3.4 us */
	assert_near(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_NVLS,
					      DTPLAN__PROTO_SIMPLE, 1e9, 8, &h100_node),
		    25e-6 + 1e9 / (7.0 / 8.0 * 0.85 * 15.0 / 16.0 * 400e9), 1e-12);
	assert_near(dtplan__nccl_seconds(DTPLAN_COLL_ALLGATHER, 1e9, 8, &h100_node, &a, &p),
		    7.0 / 8.0 * 1e9 / 400e9 + (8.4 + 7.0 * 3.4) * 1e-6, 1e-12);
	assert_int_equal(a, DTPLAN_ALGO_RING);
	assert_int_equal(p, DTPLAN__PROTO_SIMPLE);
}

static void nccl__a100_or_across_nodes__never_nvls(void **state)
{
	struct dtplan__nccl_path two = h100_node;
	enum dtplan_algo a = DTPLAN_ALGO_NVLS;
	enum dtplan__proto p = DTPLAN__PROTO_LL;

	(void)state;
	assert_near(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e9, 8, &a100_node, &a, &p),
		    2.0 * 7.0 / 8.0 * 1e9 / 400e9 + (8.4 + 14.0 * 3.4) * 1e-6, 1e-12);
	assert_int_equal(a, DTPLAN_ALGO_RING);
	assert_int_equal(p, DTPLAN__PROTO_SIMPLE);
	assert_true(isnan(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_NVLS,
						    DTPLAN__PROTO_SIMPLE, 1e9, 8, &a100_node)));
	/* two nodes: NCCL's NVLS stays inside one (CollNet aside) */
	two.nodes = 2;
	assert_true(isnan(dtplan__nccl_algo_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_NVLS,
						    DTPLAN__PROTO_SIMPLE, 1e9, 16, &two)));
	dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e9, 16, &two, &a, &p);
	assert_int_not_equal(a, DTPLAN_ALGO_NVLS);
	/* no NVLS point to point */
	assert_true(isnan(dtplan__nccl_algo_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_NVLS,
						    DTPLAN__PROTO_SIMPLE, 1e9, 2, &h100_node)));
}

static void nccl__h100_tiny_allreduce__ring_ll_not_nvls(void **state)
{
	/* 8 bytes over 8 H100s: the ring's LL 6.6 + 14 x max(1, 0.6) us =
	 * 20.6 us (the tree's LL as much, plus more bytes' time) under NVLS's
	 * 25 us */
	double ll = (6.6 + 14.0 * 1.0) * 1e-6 + 2.0 * 7.0 / 8.0 * 8.0 / (0.5 * 400e9);
	enum dtplan_algo a = DTPLAN_ALGO_NVLS;
	enum dtplan__proto p = DTPLAN__PROTO_SIMPLE;

	(void)state;
	assert_near(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 8.0, 8, &h100_node, &a, &p), ll,
		    1e-15);
	assert_int_equal(a, DTPLAN_ALGO_RING);
	assert_int_equal(p, DTPLAN__PROTO_LL);
}

static void nccl__nvl72_allgather_middling__nvls(void **state)
{
	/* 64 MB all-gathered over 72 Blackwell GPUs of one domain at 900 GB/s:
	 * NVLS 25 us + 64 MB / (71/72 x 0.74 x 23/24 x 900 GB/s) = 126.7 us
	 * beats the ring's LL (77.6 us + 63.1 MB at half the bandwidth) and
	 * its 71 Simple hops of 3.4 us */
	struct dtplan__nccl_path nvl72 = {900e9, 1e-6, 5e-6, 1, DTPLAN_NVLS_BLACKWELL};
	double want = 25e-6 + 64e6 / (71.0 / 72.0 * 0.74 * 23.0 / 24.0 * 900e9);
	enum dtplan_algo a = DTPLAN_ALGO_RING;
	enum dtplan__proto p = DTPLAN__PROTO_LL;

	(void)state;
	assert_near(dtplan__nccl_seconds(DTPLAN_COLL_ALLGATHER, 64e6, 72, &nvl72, &a, &p), want,
		    1e-12);
	assert_near(want, 126.7e-6, 0.1e-6);
	assert_int_equal(a, DTPLAN_ALGO_NVLS);
	assert_int_equal(p, DTPLAN__PROTO_SIMPLE);
}

static void nccl__bad_arguments__nan_or_zero(void **state)
{
	struct dtplan__nccl_path bad = {0.0, 1e-6, 5e-6, 1, 0}, many = {1e9, 1e-6, 5e-6, 9, 0};

	(void)state;
	assert_true(isnan(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e6, 8, &bad, NULL, NULL)));
	/* more nodes than ranks */
	assert_true(isnan(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e6, 8, &many, NULL, NULL)));
	assert_true(isnan(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e6, 8, NULL, NULL, NULL)));
	assert_true(isnan(
		dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, -1.0, 8, &path_4096, NULL, NULL)));
	assert_true(dtplan__nccl_seconds(DTPLAN_COLL_ALLREDUCE, 1e6, 1, &path_4096, NULL, NULL) ==
		    0.0);
}

static void bucket_tail__by_formula(void **state)
{
	(void)state;
	/* one bucket: it starts when the compute ends, all of it sticks out */
	assert_near(dtplan__bucket_tail(2.0, 1.0, 10.0), 2.0, 0.0);
	/* 10 buckets of 0.5 s ready every 1 s over 10 s: each done before the
	 * next is ready, the last one's 0.5 s sticks out */
	assert_near(dtplan__bucket_tail(0.5, 10.0, 10.0), 0.5, 1e-15);
	/* 10 buckets of 2 s: back to back from the first's 1 s, done at
	 * 1 + 20 = 21 s, 11 s after the compute: 10 x 2 - 10 x 9/10 */
	assert_near(dtplan__bucket_tail(2.0, 10.0, 10.0), 11.0, 1e-12);
}

static void dp_buckets__framework_defaults(void **state)
{
	struct dtplan__buckets b;

	(void)state;
	/* Megatron-LM: max(40e6, 1e6 x DP) parameters a bucket
	 * (DistributedDataParallelConfig.bucket_size, d98e8a6): 1e9 held over
	 * DP 8 in 25 buckets, over DP 512 in ceil(1e9 / 5.12e8) = 2 */
	dtplan__dp_buckets(DTPLAN_FRAMEWORK_MEGATRON, 1, 1e9, 8, 32, &b);
	assert_near(b.reduce, 25.0, 0.0);
	assert_near(b.gather, 25.0, 0.0);
	assert_false(b.gather_after_step);
	dtplan__dp_buckets(DTPLAN_FRAMEWORK_MEGATRON, 1, 1e9, 512, 32, &b);
	assert_near(b.reduce, 2.0, 0.0);
	assert_near(b.gather, 2.0, 0.0);
	/* DeepSpeed (zero/config.py, 1b88ac3): reduce_bucket_size 5e8,
	 * stage3_prefetch_bucket_size 5e7; ZeRO-1/2 gather in step(), one
	 * all-gather of the flat partition */
	dtplan__dp_buckets(DTPLAN_FRAMEWORK_DEEPSPEED, 3, 7e9, 64, 32, &b);
	assert_near(b.reduce, 14.0, 0.0);
	assert_near(b.gather, 140.0, 0.0);
	assert_false(b.gather_after_step);
	dtplan__dp_buckets(DTPLAN_FRAMEWORK_DEEPSPEED, 2, 7e9, 64, 32, &b);
	assert_near(b.gather, 1.0, 0.0);
	assert_true(b.gather_after_step);
	/* torchtitan: fully_shard() per block, 32 blocks on the stage */
	dtplan__dp_buckets(DTPLAN_FRAMEWORK_TORCHTITAN, 3, 7e9, 64, 32, &b);
	assert_near(b.reduce, 32.0, 0.0);
	assert_near(b.gather, 32.0, 0.0);
	/* nothing held: one bucket */
	dtplan__dp_buckets(DTPLAN_FRAMEWORK_MEGATRON, 1, 0.0, 8, 32, &b);
	assert_near(b.reduce, 1.0, 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(comm_bytes_per_rank__ring_allreduce__seed_ratios),
		cmocka_unit_test(comm_bytes_per_rank__other_collectives__by_formula),
		cmocka_unit_test(comm_seconds__bandwidth_terms__seed_numbers),
		cmocka_unit_test(comm_seconds__latency_terms__by_formula),
		cmocka_unit_test(comm_seconds__tree_vs_ring__tree_wins_small_ring_large),
		cmocka_unit_test(comm_seconds__bad_arguments__nan),
		cmocka_unit_test(coll_parse__table__round_trips),
		cmocka_unit_test(algo_parse__table__round_trips),
		cmocka_unit_test(nccl__ring_allreduce_4096__pays_2n_minus_2_hops),
		cmocka_unit_test(nccl__tree_allreduce_4096__pays_2_log2_hops),
		cmocka_unit_test(nccl__large_message_one_node__ring_simple),
		cmocka_unit_test(nccl__allgather__ring_only_and_hierarchical),
		cmocka_unit_test(nccl__one_rank_per_node__tree_hops_and_link_floor),
		cmocka_unit_test(nccl__h100_large_allreduce__picks_nvls),
		cmocka_unit_test(nccl__a100_or_across_nodes__never_nvls),
		cmocka_unit_test(nccl__h100_tiny_allreduce__ring_ll_not_nvls),
		cmocka_unit_test(nccl__nvl72_allgather_middling__nvls),
		cmocka_unit_test(nccl__bad_arguments__nan_or_zero),
		cmocka_unit_test(bucket_tail__by_formula),
		cmocka_unit_test(dp_buckets__framework_defaults),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
