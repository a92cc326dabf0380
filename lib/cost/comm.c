/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * comm.c: alpha-beta cost of collectives.
 *
 * S bytes (the buffer each rank holds), n ranks, B link bandwidth in bytes/s,
 * alpha per-message latency in seconds.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "model/model.h"

#include <math.h>
#include <string.h>

static const char *const coll_names[] = {
	[DTPLAN_COLL_ALLREDUCE] = "allreduce",
	[DTPLAN_COLL_ALLGATHER] = "allgather",
	[DTPLAN_COLL_REDUCESCATTER] = "reducescatter",
	[DTPLAN_COLL_P2P] = "p2p",
};

static const char *const algo_names[] = {
	[DTPLAN_ALGO_RING] = "ring",
	[DTPLAN_ALGO_TREE] = "tree",
	[DTPLAN_ALGO_NVLS] = "nvls",
};

const char *dtplan_coll_name(enum dtplan_coll c)
{
	if ((unsigned)c >= DTPLAN_ARRAY_SIZE(coll_names))
		return "unknown";
	return coll_names[c];
}

const char *dtplan_algo_name(enum dtplan_algo a)
{
	if ((unsigned)a >= DTPLAN_ARRAY_SIZE(algo_names))
		return "unknown";
	return algo_names[a];
}

/* Compares text to name ignoring case and the '-' and '_' people put in ("all-reduce"). */
static bool name_matches(const char *text, const char *name)
{
	char buf[32];
	size_t n = 0;

	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '-' || *p == '_')
			continue;
		if (n + 1 >= sizeof(buf))
			return false;
		buf[n++] = *p;
	}
	buf[n] = '\0';
	return dtplan__streq_nocase(buf, name);
}

enum dtplan_err dtplan_coll_parse(const char *text, enum dtplan_coll *out, struct dtplan_error *err)
{
	for (size_t i = 0; text != NULL && i < DTPLAN_ARRAY_SIZE(coll_names); i++) {
		if (name_matches(text, coll_names[i])) {
			if (out != NULL)
				*out = (enum dtplan_coll)i;
			return DTPLAN_OK;
		}
	}
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
			     "collective: '%s' is not allreduce, allgather, reducescatter or p2p",
			     text ? text : "");
}

enum dtplan_err dtplan_algo_parse(const char *text, enum dtplan_algo *out, struct dtplan_error *err)
{
	for (size_t i = 0; text != NULL && i < DTPLAN_ARRAY_SIZE(algo_names); i++) {
		if (name_matches(text, algo_names[i])) {
			if (out != NULL)
				*out = (enum dtplan_algo)i;
			return DTPLAN_OK;
		}
	}
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
			     "algorithm: '%s' is not ring, tree or nvls", text ? text : "");
}

static bool args_ok(enum dtplan_coll c, enum dtplan_algo a, double bytes)
{
	return (unsigned)c < DTPLAN_ARRAY_SIZE(coll_names) &&
	       (unsigned)a < DTPLAN_ARRAY_SIZE(algo_names) && isfinite(bytes) && bytes >= 0.0;
}

/*
 * Bytes each rank sends.  Ring all-reduce is a reduce-scatter then an
 * all-gather, each moving (n-1)/n S (Patarasuk and Yuan, "Bandwidth optimal
 * all-reduce algorithms for clusters of workstations", JPDC 2009): 2(n-1)/n S.
 * Tree all-reduce (reduce up, broadcast down a pipelined binary tree, as in
 * NCCL 2.4) moves about S each way: 2S.  NVLS all-reduce (NVLink SHARP:
 * the NVSwitch reduces, then multicasts the result) as NCCL's model charges
 * it: (n-1)/n S, half the ring's.  All-gather and reduce-scatter have no
 * tree or NVLS variant here and use the ring.  Returns 0 for n <= 1 and NAN for an
 * unknown collective or algorithm or negative bytes.
 */
double dtplan_comm_bytes_per_rank(enum dtplan_coll c, enum dtplan_algo a, double bytes, int n)
{
	double fn = n;

	if (!args_ok(c, a, bytes))
		return NAN;
	if (n <= 1)
		return 0.0;
	switch (c) {
	case DTPLAN_COLL_ALLREDUCE:
		if (a == DTPLAN_ALGO_TREE)
			return 2.0 * bytes;
		if (a == DTPLAN_ALGO_NVLS)
			return (fn - 1.0) / fn * bytes;
		return 2.0 * (fn - 1.0) / fn * bytes;
	case DTPLAN_COLL_ALLGATHER:
	case DTPLAN_COLL_REDUCESCATTER:
		return (fn - 1.0) / fn * bytes;
	case DTPLAN_COLL_P2P:
		return bytes;
	}
	return NAN;
}

/*
 * Alpha-beta (Hockney) cost (Thakur, Rabenseifner and Gropp, "Optimization of
 * collective communication operations in MPICH", IJHPCA 2005):
 *   ring all-reduce                 2(n-1)/n S/B + 2(n-1) alpha
 *   all-gather, reduce-scatter      (n-1)/n S/B + (n-1) alpha
 *   tree all-reduce                 2 S/B + 2 log2(n) alpha
 *   NVLS all-reduce                 (n-1)/n S/B + 2 alpha (to the switch
 *                                   and back)
 *   point to point                  S/B + alpha
 * Returns 0 for n <= 1 or S == 0, NAN for bw <= 0, alpha < 0 or the cases
 * dtplan_comm_bytes_per_rank() rejects.
 */
double dtplan_comm_seconds(enum dtplan_coll c, enum dtplan_algo a, double bytes, int n, double bw,
			   double alpha)
{
	double fn = n, steps;

	if (!args_ok(c, a, bytes) || !(bw > 0.0) || !(alpha >= 0.0) || !isfinite(alpha))
		return NAN;
	if (n <= 1 || bytes == 0.0)
		return 0.0;
	switch (c) {
	case DTPLAN_COLL_ALLREDUCE:
		steps = a == DTPLAN_ALGO_TREE   ? 2.0 * log2(fn)
			: a == DTPLAN_ALGO_NVLS ? 2.0
						: 2.0 * (fn - 1.0);
		break;
	case DTPLAN_COLL_ALLGATHER:
	case DTPLAN_COLL_REDUCESCATTER:
		steps = fn - 1.0;
		break;
	case DTPLAN_COLL_P2P:
		steps = 1.0;
		break;
	default:
		return NAN;
	}
	return dtplan_comm_bytes_per_rank(c, a, bytes, n) / bw + steps * alpha;
}

/*
 * Collectives as NCCL runs them (doc/internals/cost-model.md, "Collectives
 * at scale").  The constants are NCCL's own latency model, read in
 * NVIDIA/nccl src/graph/tuning.cc at 5067397 (June 2026): its default tuner
 * constants and ncclTopoTuneModel().  Microseconds, per protocol LL, LL128,
 * Simple:
 *   launch       what each collective pays once (baseLatencies; ring's,
 *                tree's differ by 0.2 us in LL);
 *   NVLink hop   a step between two GPUs of a node (hwLatencies, NVLINK, ring;
 *                a tree's chain inside the node is charged the same);
 *   network hop  a ring step between nodes (NET, ring), a level of the tree
 *                between nodes (NET, tree), which NCCL charges a ring too when
 *                each node holds one rank of it ("latencies are fully exposed").
 * The link's own latency, measured (lib/measure) or configured
 * (NetworkLatency, NVLinkLatency), is a floor under each hop: a fabric
 * slower than NCCL's defaults assume pays its own.
 *
 * NVLS (NVLink SHARP, NCCL 2.17+), the same file and commit, with the
 * channel counts of src/transport/nvls.cc (ncclNvlsTuning()): the switches
 * of one NVLink domain reduce (the GPU's enum dtplan_nvls says whether
 * they can); NCCL runs it for all-reduce, reduce-scatter and all-gather,
 * Simple only, inside one node or one multi-node NVLink domain (across
 * nodes only with CollNet, or as NVLS tree: neither modelled).  Its latency
 * is one term, 25 us (hwLatencies, NVLINK, NVLS, Simple; its base latency
 * 0).  Its bandwidth is the link's times nvlsEfficiency (Hopper 0.85,
 * Blackwell 0.74) times (c-1)/c of its c channels (16 on Hopper, 24 on
 * Blackwell inside one domain).  An all-reduce pipelines the reduction and
 * the multicast, so NCCL's bus bandwidth is twice that and the all-reduce
 * costs (n-1)/n S over it, half the ring's bytes; an all-gather or a
 * reduce-scatter gets (n-1)/n of that bandwidth for the whole S, which
 * loses to the ring's but on large domains at middling sizes.
 */
static const double nccl_launch_us[3] = {6.6, 14.0, 8.4};
static const double nccl_nvlink_hop_us[3] = {0.6, 1.9, 3.4};
static const double nccl_net_ring_hop_us[3] = {2.7, 4.0, 14.0};
static const double nccl_net_tree_hop_us[3] = {5.0, 8.5, 14.0};
static const double nccl_nvls_us = 25.0;

/* NVLS's share of the link's bandwidth: nvlsEfficiency (c-1)/c; 0 none. */
static double nvls_share(int nvls)
{
	switch (nvls) {
	case DTPLAN_NVLS_HOPPER:
		return 0.85 * 15.0 / 16.0;
	case DTPLAN_NVLS_BLACKWELL:
		return 0.74 * 23.0 / 24.0;
	default:
		return 0.0;
	}
}

/* Whether NCCL would run NVLS for c on the path (n >= 2). */
static bool nvls_runs(enum dtplan_coll c, const struct dtplan__nccl_path *path)
{
	return c != DTPLAN_COLL_P2P && path->nodes == 1 && nvls_share(path->nvls) > 0.0;
}

/*
 * The share of the link's bandwidth each protocol carries (the same file's
 * "model refinements"): LL half (4 bytes of data per 8-byte store), LL128
 * 0.92 (120 of 128 bytes, as NCCL rounds it), Simple all.  The tree's
 * all-reduce 0.92 of that again, its LL a further 1/3.8, its LL128 120/128
 * between nodes and 7/9 inside one.
 */
static double proto_share(enum dtplan_algo a, enum dtplan__proto p, int nodes)
{
	static const double ring[3] = {0.5, 0.92, 1.0};

	if (a == DTPLAN_ALGO_RING)
		return ring[p];
	switch (p) {
	case DTPLAN__PROTO_LL:
		return 0.92 / 3.8;
	case DTPLAN__PROTO_LL128:
		return 0.92 * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0);
	default:
		return 0.92;
	}
}

static bool path_ok(const struct dtplan__nccl_path *path, int n)
{
	return path != NULL && path->bw > 0.0 && isfinite(path->bw) && path->intra_lat >= 0.0 &&
	       isfinite(path->intra_lat) && path->inter_lat >= 0.0 && isfinite(path->inter_lat) &&
	       path->nodes >= 1 && (n <= 1 || path->nodes <= n);
}

static inline double max2(double a, double b)
{
	return a > b ? a : b;
}

/*
 * One algorithm and protocol on a checked path, n >= 2 and bytes > 0;
 * lg = floor(log2(nodes)), the tree's levels between nodes (computed once
 * by the callers: the search asks for many).
 */
static double algo_time(enum dtplan_coll c, enum dtplan_algo a, enum dtplan__proto p, double bytes,
			double fn, const struct dtplan__nccl_path *path, double lg)
{
	double nodes = path->nodes, ppn = fn / nodes, intra, inter, steps, inter_steps, lat;

	intra = max2(path->intra_lat, nccl_nvlink_hop_us[p] * 1e-6);
	inter = max2(path->inter_lat,
		     (a == DTPLAN_ALGO_TREE || ppn <= 1.0 ? nccl_net_tree_hop_us[p]
							  : nccl_net_ring_hop_us[p]) *
			     1e-6);
	lat = nccl_launch_us[p] * 1e-6;
	if (c == DTPLAN_COLL_P2P)
		return bytes / path->bw + (nodes > 1 ? inter : intra);
	if (a == DTPLAN_ALGO_NVLS) {
		double bw = nvls_share(path->nvls) * path->bw;

		lat = max2(path->intra_lat, nccl_nvls_us * 1e-6);
		if (c == DTPLAN_COLL_ALLREDUCE)
			return lat + (fn - 1.0) / fn * bytes / bw;
		return lat + bytes / ((fn - 1.0) / fn * bw);
	}
	if (a == DTPLAN_ALGO_TREE) {
		/* a chain through the node's ranks, a double binary tree over
		 * the nodes, up and down */
		lat += 2.0 * ((ppn - 1.0) * intra + lg * inter);
		return lat + 2.0 * bytes / (proto_share(a, p, path->nodes) * path->bw);
	}
	/* the ring's steps, 2(n-1) or n-1, of which 2(nodes-1) or nodes-1
	 * cross the network; each rank sends 2(n-1)/n or (n-1)/n S */
	steps = c == DTPLAN_COLL_ALLREDUCE ? 2.0 * (fn - 1.0) : fn - 1.0;
	inter_steps = nodes <= 1.0                 ? 0.0
		      : c == DTPLAN_COLL_ALLREDUCE ? 2.0 * (nodes - 1.0)
						   : nodes - 1.0;
	lat += (steps - inter_steps) * intra + inter_steps * inter;
	return lat + steps / fn * bytes / (proto_share(a, p, path->nodes) * path->bw);
}

double dtplan__nccl_algo_seconds(enum dtplan_coll c, enum dtplan_algo a, enum dtplan__proto p,
				 double bytes, int n, const struct dtplan__nccl_path *path)
{
	if (!args_ok(c, a, bytes) || (unsigned)p > DTPLAN__PROTO_SIMPLE || !path_ok(path, n))
		return NAN;
	if (a == DTPLAN_ALGO_TREE && c != DTPLAN_COLL_ALLREDUCE)
		return NAN;
	if (a == DTPLAN_ALGO_NVLS && (p != DTPLAN__PROTO_SIMPLE || !nvls_runs(c, path)))
		return NAN;
	if (n <= 1 || bytes == 0.0)
		return 0.0;
	return algo_time(c, a, p, bytes, n, path, floor(log2(path->nodes)));
}

double dtplan__nccl_seconds(enum dtplan_coll c, double bytes, int n,
			    const struct dtplan__nccl_path *path, enum dtplan_algo *algo,
			    enum dtplan__proto *proto)
{
	double best = INFINITY, lg;
	enum dtplan_algo ba = DTPLAN_ALGO_RING;
	enum dtplan__proto bp = DTPLAN__PROTO_SIMPLE;
	/* NCCL's tree runs all-reduces only */
	int last = c == DTPLAN_COLL_ALLREDUCE ? DTPLAN_ALGO_TREE : DTPLAN_ALGO_RING;

	if (algo != NULL)
		*algo = ba;
	if (proto != NULL)
		*proto = bp;
	if (!args_ok(c, DTPLAN_ALGO_RING, bytes) || !path_ok(path, n))
		return NAN;
	if (n <= 1 || bytes == 0.0)
		return 0.0;
	lg = path->nodes > 1 ? floor(log2(path->nodes)) : 0.0;
	for (int a = DTPLAN_ALGO_RING; a <= last; a++) {
		for (int p = DTPLAN__PROTO_LL; p <= DTPLAN__PROTO_SIMPLE; p++) {
			double t = algo_time(c, (enum dtplan_algo)a, (enum dtplan__proto)p, bytes,
					     n, path, lg);

			if (!(t < best))
				continue;
			best = t;
			ba = (enum dtplan_algo)a;
			bp = (enum dtplan__proto)p;
		}
	}
	if (nvls_runs(c, path)) {
		double t = algo_time(c, DTPLAN_ALGO_NVLS, DTPLAN__PROTO_SIMPLE, bytes, n, path, lg);

		if (t < best) {
			best = t;
			ba = DTPLAN_ALGO_NVLS;
			bp = DTPLAN__PROTO_SIMPLE;
		}
	}
	if (algo != NULL)
		*algo = ba;
	if (proto != NULL)
		*proto = bp;
	return best;
}

void dtplan__dp_buckets(enum dtplan_framework f, int zero, double params, int n, double layers,
			struct dtplan__buckets *out)
{
	const struct dtplan__framework *fw = dtplan__framework(f);
	double rb, gb;

	out->reduce = out->gather = 1.0;
	out->gather_after_step = false;
	if (fw == NULL || !(params > 0.0))
		return;
	out->gather_after_step = zero <= 2 && fw->gather_after_step;
	if (fw->bucket_per_block) {
		out->reduce = out->gather = fmax(1.0, ceil(layers));
		return;
	}
	rb = fmax(fw->bucket, fw->bucket_per_dp * n);
	gb = fw->gathers_as_reduces ? rb : zero >= 3 ? fw->z3_gather_bucket : fw->gather_bucket;
	if (rb > 0.0)
		out->reduce = fmax(1.0, ceil(params / rb));
	if (gb > 0.0)
		out->gather = fmax(1.0, ceil(params / gb));
}

double dtplan__bucket_tail(double c, double nb, double t)
{
	if (!(nb > 1.0))
		return c;
	return fmax(c, nb * c - t * (nb - 1.0) / nb);
}
