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
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "algorithm: '%s' is not ring or tree",
			     text ? text : "");
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
 * NCCL 2.4) moves about S each way: 2S.  All-gather and reduce-scatter have
 * no tree variant here and use the ring.  Returns 0 for n <= 1 and NAN for an
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
		steps = a == DTPLAN_ALGO_TREE ? 2.0 * log2(fn) : 2.0 * (fn - 1.0);
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
