/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_probe.c: the probe's schedule at scale, simulated (doc/internals/probe.md):
 * for the test cluster's 8 nodes (two leaves of four) and for 1,000 and
 * 16,000 nodes (32 per leaf), the rounds, pairs, tree depth, connections
 * per node, bytes and expected wall time of the default parameters; the time
 * to compute the schedule and to turn 16,000 nodes' link results into
 * measurements.  Target: the same number of rounds at every size, under 3 s
 * of expected wall time, and the schedule and the analysis of 16,000 nodes
 * in under 100 ms each.
 *
 * Usage: bench_probe   (the prolog's time on the test cluster:
 *                       sudo bench/bench_probe.sh)
 */
#include "config.h"

#include "dtplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char *mb(double bytes, char *buf, size_t size)
{
	return dtplan_format_bytes(bytes, buf, size);
}

/* Link results as a run of s would make them, and their analysis. */
static double analyze(const struct dtplan_probe_schedule *s, const int32_t *leaf)
{
	size_t n = s->n_nodes, k = 0, pairs = 0;
	struct dtplan_link_result *links;
	struct dtplan_measurements *m = NULL;
	struct dtplan_measure_in in = {0};
	char(*hosts)[64] = calloc(n, sizeof(*hosts));
	double t;

	for (size_t r = 0; r < s->n_rounds; r++)
		pairs += s->rounds[r].n_pairs;
	links = calloc(pairs + 1, sizeof(*links));
	if (hosts == NULL || links == NULL) {
		fprintf(stderr, "bench_probe: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		snprintf(hosts[i], sizeof(hosts[i]), "n%05zu", i + 1);
	for (size_t r = 0; r < s->n_rounds; r++)
		for (size_t p = 0; p < s->rounds[r].n_pairs; p++, k++) {
			links[k].from = s->rounds[r].pairs[p].from;
			links[k].to = s->rounds[r].pairs[p].to;
			links[k].round = (uint8_t)(r + 1);
			links[k].flags =
				DTPLAN_LINK_OK | (s->rounds[r].kind == DTPLAN_ROUND_CONCURRENT
							  ? DTPLAN_LINK_CONCURRENT
							  : 0);
			links[k].samples = 32;
			links[k].latency_s = 2e-6;
			links[k].bandwidth_bytes_per_s = 50e9 / (1 + (double)(k % 7));
		}
	in.source = "prolog";
	in.n_nodes = n;
	in.hosts = (const char(*)[64])hosts;
	in.leaf = leaf;
	in.n_links = pairs;
	in.links = links;
	t = bench_now();
	if (dtplan_measurements_analyze(&in, &m, NULL) != DTPLAN_OK) {
		fprintf(stderr, "bench_probe: analysis failed\n");
		exit(1);
	}
	t = bench_now() - t;
	dtplan_measurements_destroy(m);
	free(links);
	free(hosts);
	return t;
}

int main(void)
{
	static const struct {
		const char *what;
		size_t n, per_leaf;
	} cases[] = {
		{"test cluster (2 leaves of 4)", 8, 4},
		{"1,000 nodes (32 per leaf)", 1000, 32},
		{"16,000 nodes (32 per leaf)", 16000, 32},
	};
	struct dtplan_probe_params p;
	size_t rounds0 = 0;
	int bad = 0;

	dtplan_probe_params_init(&p);
	printf("%-30s %6s %7s %5s %5s %11s %11s %11s %8s %9s %9s\n", "nodes", "rounds", "pairs",
	       "depth", "conns", "tree bytes", "probe bytes", "leader", "wall s", "sched ms",
	       "analyze ms");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = cases[c].n;
		int32_t *leaf = malloc(n * sizeof(*leaf));
		struct dtplan_probe_schedule *s = NULL;
		struct dtplan_probe_cost cost;
		char a[32], b[32], l[32];
		double t;

		if (leaf == NULL)
			return 1;
		for (size_t i = 0; i < n; i++)
			leaf[i] = (int32_t)(i / cases[c].per_leaf);
		t = bench_now();
		if (dtplan_probe_schedule_create(n, leaf, NULL, &s, NULL) != DTPLAN_OK ||
		    dtplan_probe_cost(s, &p, &cost, NULL) != DTPLAN_OK)
			return 1;
		t = bench_now() - t;
		printf("%-30s %6zu %7zu %5zu %5zu %11s %11s %11s %8.2f %9.2f %9.2f\n",
		       cases[c].what, cost.rounds, cost.pairs, cost.depth, cost.max_connections,
		       mb(cost.tree_bytes, a, sizeof(a)), mb(cost.probe_bytes, b, sizeof(b)),
		       mb(cost.leader_bytes, l, sizeof(l)), cost.wall_s, t * 1e3,
		       analyze(s, leaf) * 1e3);
		if (c == 0)
			rounds0 = cost.rounds;
		if (cost.rounds != rounds0 || cost.wall_s > 3.0 || t > 0.1)
			bad = 1;
		dtplan_probe_schedule_destroy(s);
		free(leaf);
	}
	printf("\nper pair and round at most: %u pings of %u bytes each way, %.0f ms or %s of "
	       "bulk; a round lasts %.0f ms\n",
	       p.ping_count, p.ping_bytes, p.bulk_s * 1e3,
	       dtplan_format_bytes((double)p.bulk_bytes, (char[32]){0}, 32), p.slot_s * 1e3);
	printf("targets: the same rounds at every size, wall time under 3 s, schedule under "
	       "100 ms: %s\n",
	       bad ? "MISSED" : "ok");
	return bad;
}
