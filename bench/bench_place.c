/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_place.c: full search plus placement of 131,072 GPUs (16,384 nodes of
 * 8 H100, 32 nodes per leaf, 512 leaves under 16 spines, leaves 2:1
 * oversubscribed).  Prints the median time of dtplan_plan_create() over a
 * few runs and the peak resident set size.  Target: under 200 ms and 256 MiB.
 *
 * Then the same 131,072 GPUs spread: half of each leaf of a tree twice as
 * large (1,024 leaves), where 512 would hold them, so that the allocation
 * warnings search the best plan again on the packed leaves (lib/plan/
 * warnings.c): the cost of that second search.
 *
 * Usage: bench_place [RUNS]   (default 7)
 */
#include "config.h"

#include "dtplan.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODES 16384
#define PER_LEAF 32
#define LEAVES (NODES / PER_LEAF)
#define LEAVES_PER_SPINE 32
#define SPREAD 2 /* the spread run: leaves twice as many, each half allocated */

/* An HGX H100 board: 8 GPUs in one NVLink domain, NIC i nearest to GPU i. */
static void hgx(struct dtplan_node *n)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->hostname, sizeof(n->hostname), "n00001");
	snprintf(n->source, sizeof(n->source), "assumed");
	n->n_gpus = n->n_nics = 8;
	n->n_domains = 1;
	n->domains[0].n_gpus = 8;
	n->domains[0].bandwidth_bytes_per_s = 450e9;
	for (int i = 0; i < 8; i++) {
		snprintf(n->gpus[i].model, sizeof(n->gpus[i].model), "H100 80GB HBM3");
		n->gpus[i].nic = i;
		n->domains[0].gpus[i] = i;
		snprintf(n->nics[i].name, sizeof(n->nics[i].name), "mlx5_%d", i);
		n->nics[i].kind = DTPLAN_NIC_INFINIBAND;
	}
}

/* `leaves` leaves of PER_LEAF nodes, LEAVES_PER_SPINE leaves per spine. */
static char *topology_text(int leaves)
{
	size_t cap = (size_t)leaves * 64 + (size_t)(leaves / LEAVES_PER_SPINE) * 64 + 64, len = 0;
	char *t = malloc(cap);

	if (t == NULL)
		return NULL;
	for (int l = 0; l < leaves; l++)
		len += (size_t)snprintf(t + len, cap - len,
					"SwitchName=leaf%d Nodes=n[%05d-%05d]\n", l + 1,
					l * PER_LEAF + 1, (l + 1) * PER_LEAF);
	for (int s = 0; s < leaves / LEAVES_PER_SPINE; s++)
		len += (size_t)snprintf(t + len, cap - len,
					"SwitchName=spine%d Switches=leaf[%d-%d]\n", s + 1,
					s * LEAVES_PER_SPINE + 1, (s + 1) * LEAVES_PER_SPINE);
	snprintf(t + len, cap - len, "SwitchName=core Switches=spine[1-%d]\n",
		 leaves / LEAVES_PER_SPINE);
	return t;
}

/*
 * Plans req on the NODES hosts `names` of topology text `text` (its `leaves`
 * leaves 2:1 oversubscribed) `runs` times; prints what `what` is, the plan and the
 * median.  0 on success.
 */
static int bench(const char *what, int leaves, const char *text, const char (*names)[64],
		 const struct dtplan_node *node, struct dtplan_request *req, int runs, double *ms,
		 struct dtplan_error *err)
{
	struct dtplan_topology *topo = NULL;
	struct dtplan_config conf;
	double t0 = bench_now();
	char site[64];
	int rc = 1;

	dtplan_config_init(&conf);
	snprintf(site, sizeof(site), "SwitchName=leaf[1-%d] Oversubscription=2:1\n", leaves);
	if (dtplan_topology_parse_string(text, "bench", &topo, err) != DTPLAN_OK ||
	    dtplan_config_parse_string(&conf, site, "bench-site", err) != DTPLAN_OK ||
	    dtplan_config_apply_topology(&conf, topo, err) != DTPLAN_OK)
		goto out;
	printf("bench_place: %s: topology of %zu switches, %zu nodes parsed in %.1f ms\n", what,
	       topo->n_switches, topo->n_nodes, (bench_now() - t0) * 1e3);
	dtplan_request_apply_config(req, &conf);
	{
		struct dtplan_cluster cl = {.n_nodes = 1,
					    .nodes = node,
					    .topology = topo,
					    .config = &conf,
					    .n_hosts = NODES,
					    .host_names = names};

		for (int r = 0; r < runs; r++) {
			struct dtplan_plan *p = NULL;

			t0 = bench_now();
			if (dtplan_plan_create(req, &cl, &p, err) != DTPLAN_OK)
				goto out;
			ms[r] = (bench_now() - t0) * 1e3;
			if (r == runs - 1)
				printf("bench_place: %s: %zu ranks on %zu nodes, %zu leaves (%zu "
				       "needed): "
				       "TP %d x PP %d x DP %d, order %s, crosses %s, uplink "
				       "slowdown %.3f, %zu warnings\n",
				       what, p->n_ranks, p->n_nodes, p->n_leaves_used,
				       p->n_leaves_needed, p->best.tp, p->best.pp, p->best.dp,
				       dtplan_rank_order_name(p->best.rank_order),
				       p->best.crosses_uplinks, p->best.uplink_slowdown,
				       p->n_warnings);
			dtplan_plan_destroy(p);
		}
	}
	qsort(ms, (size_t)runs, sizeof(*ms), bench_cmp_double);
	printf("bench_place: %s: search + placement of %d GPUs: median %.1f ms (min %.1f, max "
	       "%.1f, %d runs); peak RSS %.1f MiB\n",
	       what, NODES * 8, ms[runs / 2], ms[0], ms[runs - 1], runs, bench_peak_rss_mib());
	rc = 0;
out:
	dtplan_topology_destroy(topo);
	dtplan_config_fini(&conf);
	return rc;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 7, rc = 1;
	struct dtplan_request req;
	struct dtplan_error err = {0};
	struct dtplan_node node;
	char(*names)[64] = NULL, *text = NULL, msg[1024];
	double *ms = NULL;

	if (runs < 1)
		runs = 1;
	names = malloc(NODES * sizeof(*names));
	ms = malloc((size_t)runs * sizeof(*ms));
	if (names == NULL || ms == NULL)
		goto out;
	hgx(&node);
	dtplan_request_init(&req);
	if (dtplan_model_parse("llama3-405b", &req.model, &err) != DTPLAN_OK)
		goto out;
	req.gpus = 0;
	req.global_batch = 16384;
	/* Llama 3 405B's pre-training length (arXiv 2407.21783, section 3.4.1) */
	req.seq = 8192;
	/* every node of the tree's 512 leaves */
	for (int i = 0; i < NODES; i++)
		snprintf(names[i], sizeof(names[i]), "n%05d", i + 1);
	text = topology_text(LEAVES);
	if (text == NULL || bench("packed", LEAVES, text, (const char(*)[64])names, &node, &req,
				  runs, ms, &err) != 0)
		goto out;
	/* the first half of each of the 1,024 leaves */
	for (int i = 0; i < NODES; i++)
		snprintf(names[i], sizeof(names[i]), "n%05d",
			 (i / (PER_LEAF / SPREAD)) * PER_LEAF + i % (PER_LEAF / SPREAD) + 1);
	free(text);
	text = topology_text(LEAVES * SPREAD);
	if (text == NULL || bench("spread", LEAVES * SPREAD, text, (const char(*)[64])names, &node,
				  &req, runs, ms, &err) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		fprintf(stderr, "bench_place: %s\n", dtplan_error_format(&err, msg, sizeof(msg)));
	free(names);
	free(ms);
	free(text);
	return rc;
}
