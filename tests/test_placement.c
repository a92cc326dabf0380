/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_placement.c: fabric layout, rank orders on leaf uplinks, ranks and
 * placement warnings (lib/fabric/placement.c and its hooks in search.c, plan.c).
 */
#include "test_common.h"

#include "dtplan.h"
#include "base/base.h"
#include "fabric/fabric.h"
#include "plan/plan.h"
#include "dtprobes.h"

#define GB 1e9

/* ---- helpers ---- */

/* A node of `gpus` GPUs in domains of `dsize`, NIC i nearest to GPU i. */
static void make_node(struct dtplan_node *n, const char *host, int gpus, int dsize,
		      const char *fabric)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->hostname, sizeof(n->hostname), "%s", host);
	snprintf(n->source, sizeof(n->source), "xml");
	n->n_gpus = gpus;
	n->n_nics = gpus;
	n->n_domains = (gpus + dsize - 1) / dsize;
	for (int i = 0; i < gpus; i++) {
		struct dtplan_node_domain *d = &n->domains[i / dsize];

		snprintf(n->gpus[i].model, sizeof(n->gpus[i].model), "H100");
		n->gpus[i].domain = i / dsize;
		n->gpus[i].nic = i;
		snprintf(n->nics[i].name, sizeof(n->nics[i].name), "mlx5_%d", i);
		d->gpus[d->n_gpus++] = i;
		d->bandwidth_bytes_per_s = 450 * GB;
		if (fabric != NULL)
			snprintf(d->fabric_id, sizeof(d->fabric_id), "%s", fabric);
	}
}

static struct dtplan_topology *parse_topology(const char *text)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	if (dtplan_topology_parse_string(text, "test", &t, &err) != DTPLAN_OK)
		fail_msg("topology: %s", err.text);
	return t;
}

static void request_for(struct dtplan_request *r, int gpus_per_node)
{
	dtplan_request_init(r);
	assert_int_equal(dtplan_model_parse("llama3-70b", &r->model, NULL), DTPLAN_OK);
	r->gpus = 0;
	r->gpus_per_node = gpus_per_node;
}

static const struct dtplan_warning *find_warning(const struct dtplan_plan *p, const char *code)
{
	for (size_t i = 0; i < p->n_warnings; i++)
		if (strcmp(p->warnings[i].code, code) == 0)
			return &p->warnings[i];
	return NULL;
}

/* A plan shell holding one placed candidate, as dtplan_plan_create() would. */
static struct dtplan_plan *place(const struct dtplan_request *req, const struct dtplan__fabric *f,
				 int tp, int pp, int dp, enum dtplan_rank_order o)
{
	struct dtplan_plan *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->request = *req;
	p->request.gpus = (int)f->n_gpus;
	p->request.gpus_per_node = f->gpus_per_node;
	p->best.tp = tp;
	p->best.pp = pp;
	p->best.dp = dp;
	p->best.micro_batch = 1;
	p->best.num_microbatches = 8;
	p->best.memory.params_per_gpu = 1e9;
	p->best.uplink_slowdown = 1.0;
	p->best.rank_order = o;
	assert_int_equal(dtplan__placement_fill(p, f, NULL), DTPLAN_OK);
	assert_int_equal(dtplan__plan_warnings(p, f, NULL), DTPLAN_OK);
	return p;
}

/* ---- ordering, domains, runs ---- */

static void fabric_build__natural_order_and_unknown_last__sorted(void **state)
{
	struct dtplan_topology *t = parse_topology("SwitchName=leafB Nodes=n10,n2\n"
						   "SwitchName=leafA Nodes=n9,n1\n"
						   "SwitchName=spine Switches=leafB,leafA\n");
	const char *alloc[] = {"n10", "x1", "n1", "n2", "n9"};
	const char *want[] = {"n2", "n10", "n1", "n9", "x1"}; /* leafB first: it is listed first */
	struct dtplan_node nodes[5];
	struct dtplan_cluster cl = {.n_nodes = 5, .nodes = nodes, .topology = t};
	struct dtplan__fabric *f = NULL;
	struct dtplan_request req;

	(void)state;
	for (int i = 0; i < 5; i++)
		make_node(&nodes[i], alloc[i], 8, 8, NULL);
	request_for(&req, 8);
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, NULL), DTPLAN_OK);
	assert_int_equal(f->n_nodes, 5);
	for (int i = 0; i < 5; i++)
		assert_string_equal(f->host[i], want[i]);
	assert_int_equal(f->n_runs, 3);
	assert_string_equal(f->runs[0].name, "leafB");
	assert_string_equal(f->runs[2].name, "unknown");
	assert_int_equal(f->n_unknown, 1);
	/* 4 known nodes on leaves of 2: 2 leaves, plus the unknown one */
	assert_int_equal(f->n_leaves_needed, 3);
	assert_int_equal(f->domain_gcd, 8);
	dtplan__fabric_destroy(f);
	dtplan_topology_destroy(t);
}

static void fabric_build__rails__local_rank_follows_nic(void **state)
{
	struct dtplan_node n;
	struct dtplan_cluster cl = {.n_nodes = 1, .nodes = &n};
	struct dtplan__fabric *f = NULL;
	struct dtplan_request req;
	/* GPU i nearest to NIC (7 - i): local rank i must use NIC i, so GPU 7 - i */
	(void)state;
	make_node(&n, "solo", 8, 8, NULL);
	for (int i = 0; i < 8; i++)
		n.gpus[i].nic = 7 - i;
	request_for(&req, 8);
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, NULL), DTPLAN_OK);
	for (int l = 0; l < 8; l++)
		assert_int_equal(f->order[l], 7 - l);
	assert_true(f->flat);
	assert_int_equal(f->n_runs, 1);
	dtplan__fabric_destroy(f);
}

static void fabric_build__shared_fabric_id__multi_node_domain(void **state)
{
	struct dtplan_node nodes[4];
	struct dtplan_cluster cl = {.n_nodes = 4, .nodes = nodes};
	struct dtplan__fabric *f = NULL;
	struct dtplan_request req;
	char name[16];

	(void)state;
	/* 4 nodes of 4 GPUs sharing one NVLink fabric: one 16-GPU domain */
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "nvl%d", i);
		make_node(&nodes[i], name, 4, 4, "clique-a");
	}
	request_for(&req, 4);
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, NULL), DTPLAN_OK);
	assert_int_equal(f->n_domains, 1);
	assert_int_equal(f->domain_gcd, 16);
	assert_true(dtplan__fabric_tp_fits(f, 16));
	assert_false(dtplan__fabric_tp_fits(f, 32));
	dtplan__fabric_destroy(f);
}

static void fabric_build__bad_input__errors(void **state)
{
	struct dtplan_node nodes[2];
	struct dtplan_cluster cl = {.n_nodes = 2, .nodes = nodes};
	const char names[2][64] = {"a", "b"};
	const int bad_inv[2] = {0, 5};
	struct dtplan__fabric *f = NULL;
	struct dtplan_request req;
	struct dtplan_error err = {0};

	(void)state;
	make_node(&nodes[0], "a", 8, 8, NULL);
	make_node(&nodes[1], "b", 8, 8, NULL);
	request_for(&req, 8);
	assert_int_equal(dtplan__fabric_build(NULL, &cl, &f, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan__fabric_build(&req, NULL, &f, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan__fabric_build(&req, &cl, NULL, &err), DTPLAN_ERR_INVAL);
	req.gpus = 17; /* 2 nodes of 8 */
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "17 GPUs requested"));
	assert_null(f);
	req.gpus = 0;
	nodes[1].n_gpus = 0;
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "node b has no GPUs"));
	make_node(&nodes[1], "", 8, 8, NULL);
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "no hostname"));
	cl.n_hosts = 2;
	cl.host_names = names;
	cl.host_inventory = bad_inv;
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "host b uses inventory 5"));
	cl.n_nodes = 0;
	cl.n_hosts = 0;
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, &err), DTPLAN_ERR_INVAL);
	dtplan__fabric_destroy(NULL);
}

/* ---- costing the two orders ---- */

/* Two racks of 8 nodes (g01-g08, g09-g16) under leaf1 and leaf2, 4:1
 * uplinks, every node as g01: 8 GPUs. */
struct two_racks {
	struct dtplan_topology *t;
	int inv[16];
	char names[16][64];
	struct dtplan_node n;
	struct dtplan_config c;
	struct dtplan_cluster cl;
};

static void two_racks_4to1(struct two_racks *w)
{
	memset(w, 0, sizeof(*w));
	w->t = parse_topology("SwitchName=leaf1 Nodes=g[01-08]\n"
			      "SwitchName=leaf2 Nodes=g[09-16]\n"
			      "SwitchName=spine Switches=leaf[1-2]\n");
	for (int i = 0; i < 16; i++)
		snprintf(w->names[i], sizeof(w->names[i]), "g%02d", i + 1);
	make_node(&w->n, "g01", 8, 8, NULL);
	dtplan_config_init(&w->c);
	assert_int_equal(dtplan_config_parse_string(&w->c,
						    "SwitchName=leaf[1-2] Oversubscription=4:1\n",
						    "site", NULL),
			 DTPLAN_OK);
	w->cl = (struct dtplan_cluster){.n_nodes = 1,
					.nodes = &w->n,
					.topology = w->t,
					.config = &w->c,
					.n_hosts = 16,
					.host_names = w->names,
					.host_inventory = w->inv};
}

static void two_racks_fini(struct two_racks *w)
{
	dtplan_config_fini(&w->c);
	dtplan_topology_destroy(w->t);
}

static void fabric_eval__two_racks_4to1__flows_by_order(void **state)
{
	struct two_racks w;
	struct dtplan__fabric *f = NULL;
	struct dtplan__fabric_eval ev;
	struct dtplan_request req;

	(void)state;
	two_racks_4to1(&w);
	request_for(&req, 8);
	req.net_bytes_per_s = 50 * GB;
	assert_int_equal(dtplan__fabric_build(&req, &w.cl, &f, NULL), DTPLAN_OK);
	/* leaf uplink: 8 nodes x 8 GPUs x 50 GB/s / 4 = 800 GB/s */
	assert_near(f->runs[0].uplink_bw, 800 * GB, 1.0);
	assert_near(f->runs[0].ratio, 4.0, 1e-12);

	/* TP 8 x PP 4 x DP 4, DP inner: a stage is 32 GPUs, two per rack.
	 * DP stays inside racks; PP groups (stride 32, 32 of them) each leave
	 * leaf1 once: 32 flows, 800/32 = 25 GB/s per flow. */
	dtplan__fabric_eval(f, 8, 4, 4, DTPLAN_ORDER_TP_DP_PP, 450 * GB, &ev);
	assert_false(ev.tp.net);
	assert_true(ev.dp.net);
	assert_false(ev.dp.crosses);
	assert_near(ev.dp.bw, 50 * GB, 1.0);
	assert_true(ev.pp.crosses);
	assert_near(ev.pp.worst_flows, 32.0, 0.0);
	assert_near(ev.pp.bw, 25 * GB, 1.0);

	/* PP inner: a replica is 32 GPUs; now DP (stride 32) crosses, PP does not */
	dtplan__fabric_eval(f, 8, 4, 4, DTPLAN_ORDER_TP_PP_DP, 450 * GB, &ev);
	assert_false(ev.pp.crosses);
	assert_true(ev.dp.crosses);
	assert_near(ev.dp.bw, 25 * GB, 1.0);

	/* TP 8 x PP 1 x DP 16: 8 rings over 16 nodes, each leaves leaf1 once:
	 * 8 flows, 800/8 = 100 GB/s per flow, so the NIC's 50 GB/s limits */
	dtplan__fabric_eval(f, 8, 1, 16, DTPLAN_ORDER_TP_DP_PP, 450 * GB, &ev);
	assert_true(ev.dp.crosses);
	assert_near(ev.dp.worst_flows, 8.0, 0.0);
	assert_near(ev.dp.bw, 50 * GB, 1.0);
	dtplan__fabric_destroy(f);

	/* UplinkBandwidth wins over the ratio: 400 GB/s -> 12.5 GB/s per flow of 32 */
	assert_int_equal(dtplan_config_parse_string(&w.c,
						    "SwitchName=leaf1 UplinkBandwidth=400GB/s\n",
						    "site2", NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan__fabric_build(&req, &w.cl, &f, NULL), DTPLAN_OK);
	assert_near(f->runs[0].uplink_bw, 400 * GB, 1.0);
	assert_near(f->runs[0].ratio, 8.0, 1e-12); /* 3200 / 400 */
	dtplan__fabric_eval(f, 8, 4, 4, DTPLAN_ORDER_TP_DP_PP, 450 * GB, &ev);
	assert_near(ev.pp.bw, 12.5 * GB, 1.0);
	dtplan__fabric_destroy(f);
	two_racks_fini(&w);
}

/*
 * The pruned search against the exhaustive one on a fabric: two leaves of
 * eight 8-GPU nodes behind 4:1 uplinks, where the rank orders and the
 * EP groups' links differ.  The same plan, runner-up and counts, to the bit.
 */
static void search_run_fabric__pruned__same_as_exhaustive(void **state)
{
	static const char *const models[] = {"mixtral-8x7b", "mixtral-8x22b", "deepseek-v3",
					     "llama3-70b"};
	static const int batches[] = {32, 512};
	char da[256], db[256];
	struct two_racks w;
	struct dtplan__fabric *f = NULL;

	(void)state;
	two_racks_4to1(&w);
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(models); i++) {
		for (size_t k = 0; k < 2 * DTPLAN_ARRAY_SIZE(batches); k++) {
			struct dtplan_request req;
			struct dtplan__search a, b;

			request_for(&req, 8);
			assert_int_equal(dtplan_model_parse(models[i], &req.model, NULL),
					 DTPLAN_OK);
			assert_int_equal(dtplan__fabric_build(&req, &w.cl, &f, NULL), DTPLAN_OK);
			req.gpus = 128;
			req.seq = k % 2 == 0 ? 4096 : 32768;
			req.global_batch = batches[k / 2];
			assert_int_equal(dtplan__search_run_fabric(&req, f, false, &a, NULL),
					 DTPLAN_OK);
			assert_int_equal(dtplan__search_run_exhaustive(&req, f, &b, NULL),
					 DTPLAN_OK);
			assert_int_equal(a.n_considered, b.n_considered);
			assert_int_equal(a.n_fit, b.n_fit);
			assert_int_equal(a.have_best, b.have_best);
			assert_int_equal(a.have_runner_up, b.have_runner_up);
			if (a.have_best) {
				dtplan__candidate_describe(&a.best, da, sizeof(da));
				dtplan__candidate_describe(&b.best, db, sizeof(db));
				assert_string_equal(da, db);
				assert_int_equal(a.best.ep, b.best.ep);
				assert_int_equal(a.best.rank_order, b.best.rank_order);
				assert_true(a.best.step.total == b.best.step.total);
				assert_true(a.best.uplink_slowdown == b.best.uplink_slowdown);
			}
			if (a.have_runner_up) {
				dtplan__candidate_describe(&a.runner_up, da, sizeof(da));
				dtplan__candidate_describe(&b.runner_up, db, sizeof(db));
				assert_string_equal(da, db);
				assert_string_equal(a.runner_up_reason, b.runner_up_reason);
			}
			dtplan__fabric_destroy(f);
			f = NULL;
		}
	}
	two_racks_fini(&w);
}

/* ---- properties over random allocations ---- */

static uint64_t rng_state;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* Divisors of n, at most max of them. */
static int divisors(int n, int *out, int max)
{
	int k = 0;

	for (int d = 1; d <= n && k < max; d++)
		if (n % d == 0)
			out[k++] = d;
	return k;
}

struct world {
	struct dtplan_topology *t;
	struct dtplan_config c;
	struct dtplan_node nodes[6 * 8 + 2];
	size_t n;
	int leaf_size[8];
	int n_leaves;
};

/* Random tree of 1-6 leaves of 1-8 nodes; a random subset allocated,
 * sometimes with a node the tree lacks and sometimes half-size nodes. */
static void random_world(struct world *w)
{
	char text[4096], names[512], site[512];
	size_t used = 0, s_used = 0;
	int g = 1 << rnd(4), dsize = g >= 2 && rnd(3) == 0 ? g / 2 : g;

	memset(w, 0, sizeof(*w));
	w->n_leaves = 1 + (int)rnd(6);
	text[0] = '\0';
	site[0] = '\0';
	for (int l = 0; l < w->n_leaves; l++) {
		size_t k = 0;

		w->leaf_size[l] = 1 + (int)rnd(8);
		names[0] = '\0';
		for (int i = 0; i < w->leaf_size[l]; i++)
			k += (size_t)snprintf(names + k, sizeof(names) - k, "%sr%dn%d",
					      i ? "," : "", l, i);
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "SwitchName=leaf%d Nodes=%s\n", l, names);
		s_used += (size_t)snprintf(site + s_used, sizeof(site) - s_used,
					   "SwitchName=leaf%d Oversubscription=%u:1\n", l,
					   1 + rnd(4));
	}
	snprintf(text + used, sizeof(text) - used, "SwitchName=spine Switches=leaf[0-%d]\n",
		 w->n_leaves - 1);
	w->t = parse_topology(text);
	dtplan_config_init(&w->c);
	if (dtplan_config_parse_string(&w->c, site, "site", NULL) != DTPLAN_OK)
		fail_msg("site: %s", site);
	for (int l = 0; l < w->n_leaves; l++)
		for (int i = 0; i < w->leaf_size[l]; i++) {
			char host[32];
			int gn = g;

			if (rnd(3) == 0)
				continue;
			if (g > 1 && rnd(12) == 0)
				gn = g / 2;
			snprintf(host, sizeof(host), "r%dn%d", l, i);
			make_node(&w->nodes[w->n++], host, gn, dsize < gn ? dsize : gn, NULL);
		}
	if (rnd(5) == 0)
		make_node(&w->nodes[w->n++], "stray", g, dsize, NULL);
	if (w->n == 0)
		make_node(&w->nodes[w->n++], "r0n0", g, dsize, NULL);
	/* shuffle: allocation order must not matter */
	for (size_t i = w->n; i-- > 1;) {
		struct dtplan_node tmp = w->nodes[i];
		size_t j = rnd((unsigned)i + 1);

		w->nodes[i] = w->nodes[j];
		w->nodes[j] = tmp;
	}
}

/* Leaf runs a group's members sit in (distinct count). */
static size_t group_leaves(const struct dtplan_plan *p, const int *members, size_t n, bool *crossed)
{
	bool seen[64] = {false};
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int run = p->node_run[p->ranks[members[i]].node];

		if (!seen[run]) {
			seen[run] = true;
			k++;
		}
	}
	for (size_t r = 0; k > 1 && r < 64; r++)
		if (seen[r])
			crossed[r] = true;
	return k;
}

/* Leaves touched by GPU positions [lo, hi]. */
static size_t block_leaves(const struct dtplan_plan *p, size_t lo, size_t hi)
{
	int g = p->request.gpus_per_node;

	return (size_t)(p->node_run[hi / (size_t)g] - p->node_run[lo / (size_t)g]) + 1;
}

static void check_case(const struct world *w)
{
	struct dtplan_cluster cl = {.n_nodes = w->n,
				    .nodes = w->nodes,
				    .topology = w->t,
				    .config = &w->c};
	struct dtplan__fabric *f = NULL;
	struct dtplan_request req;
	struct dtplan_plan *p;
	int dv[64], nd, tp, pp, dp, G, members[512];
	bool *seen, crossed[64] = {false}, over = false;
	enum dtplan_rank_order o = rnd(2) ? DTPLAN_ORDER_TP_PP_DP : DTPLAN_ORDER_TP_DP_PP;
	size_t known = 0, distinct = 0, needed = 0, have = 0;
	int sizes[8];
	bool hetero = false;

	for (size_t i = 1; i < w->n; i++)
		hetero = hetero || w->nodes[i].n_gpus != w->nodes[0].n_gpus;
	request_for(&req, 8);
	dtplan_request_apply_config(&req, &w->c);
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, NULL), DTPLAN_OK);
	G = (int)f->n_gpus;
	/* TP: usually a divisor of the domain segments, sometimes any divisor */
	nd = divisors(rnd(4) == 0 ? G : f->domain_gcd, dv, 64);
	tp = dv[rnd((unsigned)nd)];
	nd = divisors(G / tp, dv, 64);
	pp = dv[rnd((unsigned)nd)];
	dp = G / tp / pp;
	p = place(&req, f, tp, pp, dp, o);

	/* ranks are a permutation of the GPUs */
	seen = calloc((size_t)G, sizeof(*seen));
	assert_non_null(seen);
	assert_int_equal(p->n_ranks, (size_t)G);
	for (int r = 0; r < G; r++) {
		const struct dtplan_rank *k = &p->ranks[r];
		int pos = k->node * f->gpus_per_node + k->local_rank;

		assert_true(k->node >= 0 && (size_t)k->node < p->n_nodes);
		assert_true(k->gpu >= 0 && k->gpu < f->gpus_per_node * 2);
		assert_false(seen[pos]);
		seen[pos] = true;
		assert_int_equal(k->tp_rank + tp * (o == DTPLAN_ORDER_TP_DP_PP
							    ? k->dp_rank + dp * k->pp_rank
							    : k->pp_rank + pp * k->dp_rank),
				 r);
	}
	free(seen);
	/* a leaf's nodes are consecutive: every leaf appears in one run */
	for (size_t a = 0; a < p->n_leaves_used; a++)
		for (size_t b = a + 1; b < p->n_leaves_used; b++)
			assert_string_not_equal(p->leaf_names[a], p->leaf_names[b]);
	/* no TP group spans two domains when TP fits them */
	if (dtplan__fabric_tp_fits(f, tp))
		for (int r = 0; r < G; r++)
			assert_int_equal(p->ranks[r].domain, p->ranks[r - r % tp].domain);
	assert_int_equal(find_warning(p, "tp-exceeds-domain") != NULL,
			 !dtplan__fabric_tp_fits(f, tp));
	/* the inner group kind is a contiguous block of its size; every group
	 * crosses no more leaves than the contiguous span it covers */
	for (int a = 0; a < tp; a++) {
		for (int outer = 0; outer < (o == DTPLAN_ORDER_TP_DP_PP ? pp : dp); outer++) {
			int n = o == DTPLAN_ORDER_TP_DP_PP ? dp : pp;
			int lo = a + tp * n * outer;

			for (int i = 0; i < n; i++)
				members[i] = lo + tp * i;
			assert_true(members[n - 1] - lo < tp * n);
			assert_true(group_leaves(p, members, (size_t)n, crossed) <=
				    block_leaves(p, (size_t)lo, (size_t)members[n - 1]));
		}
		for (int inner = 0; inner < (o == DTPLAN_ORDER_TP_DP_PP ? dp : pp); inner++) {
			int n = o == DTPLAN_ORDER_TP_DP_PP ? pp : dp;
			int stride = tp * (o == DTPLAN_ORDER_TP_DP_PP ? dp : pp);

			for (int i = 0; i < n; i++)
				members[i] = a + tp * inner + stride * i;
			assert_true(group_leaves(p, members, (size_t)n, crossed) <=
				    block_leaves(p, (size_t)members[0], (size_t)members[n - 1]));
		}
	}
	/* oversubscribed-uplink only when a DP or PP group crosses a leaf above
	 * the threshold */
	for (size_t r = 0; r < p->n_leaves_used; r++)
		over = over || (crossed[r] && p->leaf_ratio[r] > req.oversub_threshold);
	if (find_warning(p, "oversubscribed-uplink") != NULL)
		assert_true(over);
	/* too-many-leaves exactly when more leaves are used than the fewest
	 * tree leaves holding the known nodes (plus the unknown one) */
	for (size_t i = 0; i < p->n_nodes; i++) {
		known += strcmp(p->leaf_names[p->node_run[i]], "unknown") != 0;
		distinct += i == 0 || p->node_run[i] != p->node_run[i - 1];
	}
	memcpy(sizes, w->leaf_size, sizeof(sizes));
	for (int i = 0; i < w->n_leaves; i++) /* selection sort, largest first */
		for (int j = i + 1; j < w->n_leaves; j++)
			if (sizes[j] > sizes[i]) {
				int tmp = sizes[i];

				sizes[i] = sizes[j];
				sizes[j] = tmp;
			}
	for (int i = 0; i < w->n_leaves && have < known; i++) {
		have += (size_t)sizes[i];
		needed++;
	}
	needed += known < p->n_nodes;
	assert_int_equal(p->n_leaves_used, distinct);
	assert_int_equal(p->n_leaves_needed, needed);
	/* the allocation's warnings only where fewer leaves would do, and the
	 * uplinks' only with them (the same better allocation) */
	if (find_warning(p, "too-many-leaves") != NULL)
		assert_true(distinct > needed);
	if (find_warning(p, "oversubscribed-uplink") != NULL)
		assert_non_null(find_warning(p, "too-many-leaves"));
	assert_int_equal(find_warning(p, "heterogeneous-nodes") != NULL, hetero);
	assert_int_equal(find_warning(p, "node-not-in-topology") != NULL, known < p->n_nodes);
	dtplan_plan_destroy(p);
	dtplan__fabric_destroy(f);
}

static void placement__random_allocations__invariants_hold(void **state)
{
	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 400; i++) {
		struct world *w = calloc(1, sizeof(*w));

		assert_non_null(w);
		random_world(w);
		check_case(w);
		dtplan_config_fini(&w->c);
		dtplan_topology_destroy(w->t);
		free(w);
	}
}

/* ---- acceptance: 16 HGX H100 nodes, llama3-70b ---- */

struct accept {
	struct dtplan_node hgx;
	struct dtplan_topology *t;
	struct dtplan_config c;
	char names[16][64];
	int inv[16];
	struct dtplan_cluster cl;
	struct dtplan_request req;
};

static bool accept_setup(struct accept *a, const char *topology, const char *site,
			 const char *hosts)
{
	struct dtplan_error err = {0};
	char(*names)[64] = NULL;
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	if (dtplan_node_from_xml(test_data_path("hgx-h100-8gpu.xml"), &a->hgx, &err) != DTPLAN_OK)
		return false;
	assert_int_equal(dtplan_topology_parse_file(test_data_path(topology), &a->t, &err),
			 DTPLAN_OK);
	dtplan_config_init(&a->c);
	assert_int_equal(dtplan_config_parse_file(&a->c, test_data_path(site), &err), DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(&a->c, a->t, &err), DTPLAN_OK);
	assert_int_equal(dtplan_hostlist_expand(hosts, 16, &names, &n, &err), DTPLAN_OK);
	dt_assert_in_range(n, 1, 16);
	memcpy(a->names, names, n * sizeof(names[0]));
	free(names);
	a->cl = (struct dtplan_cluster){.n_nodes = 1,
					.nodes = &a->hgx,
					.topology = a->t,
					.config = &a->c,
					.n_hosts = n,
					.host_names = a->names,
					.host_inventory = a->inv};
	request_for(&a->req, 8);
	dtplan_request_apply_config(&a->req, &a->c);
	return true;
}

static void plan_create__two_racks_4to1__dp_in_racks_pp_crosses(void **state)
{
	struct accept a;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	int stage;

	(void)state;
	if (!accept_setup(&a, "topology-two-racks.conf", "dtplan-two-racks.conf", "gpu[01-16]"))
		skip();
	assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
	assert_int_equal(p->request.gpus, 128);
	assert_string_equal(p->best.crosses_uplinks, "pp");
	assert_int_equal(p->best.rank_order, DTPLAN_ORDER_TP_DP_PP);
	/* TP inside the node; how it splits with PP is the step time's to say */
	assert_true(p->best.tp > 1 && 8 % p->best.tp == 0);
	assert_true(p->best.pp > 1);
	assert_int_equal(p->n_ranks, 128);
	assert_int_equal(p->n_leaves_used, 2);
	assert_int_equal(p->n_leaves_needed, 2);
	assert_null(find_warning(p, "too-many-leaves"));
	/* every DP group (same PP stage) sits under one leaf */
	for (size_t r = 0; r < p->n_ranks; r++) {
		stage = p->ranks[r].pp_rank;
		for (size_t q = r + 1; q < p->n_ranks; q++)
			if (p->ranks[q].pp_rank == stage &&
			    p->ranks[q].tp_rank == p->ranks[r].tp_rank)
				assert_int_equal(p->node_run[p->ranks[q].node],
						 p->node_run[p->ranks[r].node]);
	}
	/* rank 0 is gpu01's GPU on rail 0 */
	assert_string_equal(p->node_names[0], "gpu01");
	assert_string_equal(p->ranks[0].nic, a.hgx.nics[a.hgx.gpus[p->ranks[0].gpu].nic].name);
	dtplan_plan_destroy(p);
	dtplan_config_fini(&a.c);
	dtplan_topology_destroy(a.t);
}

/*
 * 4 + 4 + 8 nodes under three leaves where two would hold them: the pipeline
 * crosses the 4:1 uplinks, but its activations cost under 5% of the step,
 * so no better allocation is worth asking for and policy=deny lets it run.
 */
static void plan_create__three_leaves_4_4_8__small_gain__no_warning(void **state)
{
	struct accept a;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};

	(void)state;
	if (!accept_setup(&a, "topology-three-leaves.conf", "dtplan-three-leaves.conf",
			  "gpu[01-04,09-12,17-24]"))
		skip();
	assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
	assert_int_equal(p->n_leaves_used, 3);
	assert_int_equal(p->n_leaves_needed, 2); /* two leaves of 8 hold 16 nodes */
	assert_string_equal(p->best.crosses_uplinks, "pp");
	assert_true(p->best.uplink_slowdown < 1.0 + p->request.slowdown_threshold);
	assert_null(find_warning(p, "too-many-leaves"));
	assert_null(find_warning(p, "oversubscribed-uplink"));
	assert_false(dtplan_plan_refused(p, DTPLAN_MODE_STRICT, DTPLAN_POLICY_DENY, NULL, 0));
	dtplan_plan_destroy(p);
	dtplan_config_fini(&a.c);
	dtplan_topology_destroy(a.t);
}

/* The 7B model of the enforcement tests: pipelines of small micro-batches. */
static void request_7b(struct accept *a)
{
	assert_int_equal(dtplan_model_parse("7B", &a->req.model, NULL), DTPLAN_OK);
	a->req.global_batch = 64;
}

/* 8 nodes of the 7B request on two leaves of three behind 64:1 uplinks (a),
 * and the 8 that fit under leaf1 (one); false when the fixtures are absent */
static bool two_leaves_and_one(struct accept *a, struct accept *one)
{
	if (!accept_setup(a, "topology-three-leaves.conf", "dtplan-thin-three-leaves.conf",
			  "gpu[01-04,09-12]") ||
	    !accept_setup(one, "topology-three-leaves.conf", "dtplan-thin-three-leaves.conf",
			  "gpu[01-08]"))
		return false;
	request_7b(a);
	request_7b(one);
	return true;
}

static void accept_fini(struct accept *a)
{
	dtplan_config_fini(&a->c);
	dtplan_topology_destroy(a->t);
}

/*
 * 8 nodes on two leaves of 8 behind 64:1 uplinks where one leaf would hold
 * them: the allocation warnings give the best plan predicted on one leaf,
 * which must be the plan dtplan makes on gpu[01-08] (leaf1, the first of the
 * equal leaves; searched afresh, not this plan's configuration), with both
 * splits and both steps, and ask for --switches=1.
 */
static void plan_create__two_leaves_where_one_would_do__warns_with_the_gain(void **state)
{
	struct accept a, one;
	struct dtplan_plan *p = NULL, *q = NULL;
	struct dtplan_error err = {0};
	const struct dtplan_warning *w;
	char want[256], t[32], u[32];

	(void)state;
	if (!two_leaves_and_one(&a, &one))
		skip();
	assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
	assert_int_equal(p->n_leaves_used, 2);
	assert_int_equal(p->n_leaves_needed, 1);
	/* the plan dtplan makes under leaf1 alone */
	assert_int_equal(dtplan_plan_create(&one.req, &one.cl, &q, &err), DTPLAN_OK);
	assert_int_equal(q->n_leaves_used, 1);
	assert_true(p->best.step.total > q->best.step.total * 1.05);
	w = find_warning(p, "too-many-leaves");
	assert_non_null(w);
	snprintf(want, sizeof(want),
		 "the best plan there (TP %d x PP %d x DP %d) is predicted to take %s a step "
		 "against %s here (TP %d x PP %d x DP %d, %.1f%% longer",
		 q->best.tp, q->best.pp, q->best.dp,
		 dtplan_format_time(q->best.step.total, t, sizeof(t)),
		 dtplan_format_time(p->best.step.total, u, sizeof(u)), p->best.tp, p->best.pp,
		 p->best.dp, (p->best.step.total / q->best.step.total - 1.0) * 100.0);
	if (strstr(w->message, want) == NULL)
		fail_msg("'%s' lacks '%s'", w->message, want);
	assert_non_null(strstr(w->message, "leaf1 (4 nodes), leaf2 (4 nodes)) where 1 would"));
	assert_non_null(strstr(w->message, "threshold 5%): ask for --switches=1"));
	w = find_warning(p, "oversubscribed-uplink");
	assert_non_null(w);
	assert_non_null(strstr(w->message, "64.0:1"));
	if (strstr(w->message, "on 1 leaf switch (--switches=1)") == NULL)
		fail_msg("%s", w->message);
	assert_true(dtplan_plan_refused(p, DTPLAN_MODE_AUTO, DTPLAN_POLICY_DENY, NULL, 0));
	assert_false(dtplan_plan_refused(p, DTPLAN_MODE_AUTO, DTPLAN_POLICY_WARN, NULL, 0));
	/* a site that tolerates that much: neither warning, nothing refused */
	a.req.slowdown_threshold = p->best.step.total / q->best.step.total - 1.0 + 0.01;
	dtplan_plan_destroy(p);
	assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
	assert_null(find_warning(p, "too-many-leaves"));
	assert_null(find_warning(p, "oversubscribed-uplink"));
	assert_false(dtplan_plan_refused(p, DTPLAN_MODE_STRICT, DTPLAN_POLICY_DENY, NULL, 0));
	dtplan_plan_destroy(p);
	dtplan_plan_destroy(q);
	accept_fini(&a);
	accept_fini(&one);
}

/*
 * The same allocation planned under a learned correction (every shape of
 * this GPU and framework 40% slower than the model): the best plan on one
 * leaf that the warning quotes is searched under it too, so its step is the
 * one dtplan makes on gpu[01-08] with the same calibration, not the bare
 * model's.
 */
static void plan_create__two_leaves_calibrated__the_leaf_plan_is_calibrated_too(void **state)
{
	struct accept a, one;
	struct dtplan_plan *p = NULL, *q = NULL;
	struct dtplan_error err = {0};
	struct dtplan_correction k = {.shape_class = DTPLAN_SHAPE_ANY, .factor = 1.4, .runs = 3};
	struct dtplan_calibration cal = {.n = 1, .corrections = &k};
	const struct dtplan_warning *w;
	char want[128], t[32];

	(void)state;
	if (!two_leaves_and_one(&a, &one))
		skip();
	snprintf(k.gpu, sizeof(k.gpu), "%s", a.req.gpu.name);
	snprintf(k.framework, sizeof(k.framework), "%s", dtplan_framework_name(a.req.framework));
	a.req.calibration = &cal;
	one.req.calibration = &cal;
	assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&one.req, &one.cl, &q, &err), DTPLAN_OK);
	assert_float_equal(p->best.correction, 1.4, 1e-12);
	assert_float_equal(q->best.correction, 1.4, 1e-12);
	w = find_warning(p, "too-many-leaves");
	assert_non_null(w);
	snprintf(want, sizeof(want), "is predicted to take %s a step against",
		 dtplan_format_time(q->best.step.total, t, sizeof(t)));
	if (strstr(w->message, want) == NULL)
		fail_msg("'%s' lacks '%s'", w->message, want);
	/* the plan keeps no pointer to the caller's calibration */
	assert_null(p->request.calibration);
	dtplan_plan_destroy(p);
	dtplan_plan_destroy(q);
	accept_fini(&a);
	accept_fini(&one);
}

/*
 * Issue 12: 16 nodes on the two leaves of 8 they need, behind 64:1 uplinks.
 * The uplinks cost the step more than the threshold, but no allocation of
 * 16 nodes spans fewer leaves: no warning asks for --switches=2, nothing is
 * refused, and the plan's text still says what the uplinks cost.
 */
static void plan_create__on_the_fewest_leaves__never_told_to_ask_for_them(void **state)
{
	struct accept a;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	char *text = NULL, want[64];

	(void)state;
	if (!accept_setup(&a, "topology-two-racks.conf", "dtplan-thin-two-racks.conf",
			  "gpu[01-16]"))
		skip();
	request_7b(&a);
	assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
	assert_int_equal(p->n_leaves_used, 2);
	assert_int_equal(p->n_leaves_needed, 2);
	assert_true(p->best.uplink_slowdown > 1.10);
	for (size_t i = 0; i < p->n_warnings; i++)
		if (strstr(p->warnings[i].message, "--switches") != NULL)
			fail_msg("[%s] %s", p->warnings[i].code, p->warnings[i].message);
	assert_null(find_warning(p, "too-many-leaves"));
	assert_null(find_warning(p, "oversubscribed-uplink"));
	assert_false(dtplan_plan_refused(p, DTPLAN_MODE_STRICT, DTPLAN_POLICY_DENY, NULL, 0));
	assert_int_equal(dtplan_plan_render_text(p, &text, &err), DTPLAN_OK);
	snprintf(want, sizeof(want), "uplinks crossed by %s (%.1f%% of the step)",
		 p->best.crosses_uplinks, (1.0 - 1.0 / p->best.uplink_slowdown) * 100.0);
	if (strstr(text, want) == NULL)
		fail_msg("text lacks '%s'", want);
	free(text);
	dtplan_plan_destroy(p);
	dtplan_config_fini(&a.c);
	dtplan_topology_destroy(a.t);
}

/*
 * topology/block, from topology.conf and from topology.yaml: 4 nodes on two
 * racks of 4 behind thin uplinks.  The plan names its blocks, and asks for
 * --segment=4 (topology/block has no --switches): one segment of 4 nodes
 * lies in one block.
 */
/* topology/ring (26.05): inside a ring the nodes keep the ring's order, so
 * that neighbouring ranks sit on neighbouring nodes (the DP ring follows the
 * physical one, consecutive PP stages are one hop apart); the leaves are
 * called rings and nothing is asked of Slurm (it places jobs inside one
 * ring itself). */
static void fabric_build__rings__ring_order_rings_named(void **state)
{
	struct dtplan_topology *t = parse_topology("- topology: r\n  ring:\n    rings:\n"
						   "      - ring: ring0\n"
						   "        nodes: n3,n1,n4,n2\n"
						   "      - ring: ring1\n"
						   "        nodes: m2,m1\n");
	const char *alloc[] = {"n1", "n2", "n3", "n4", "m1", "m2"};
	const char *want[] = {"n3", "n1", "n4", "n2", "m2", "m1"};
	struct dtplan_node nodes[6];
	struct dtplan_cluster cl = {.n_nodes = 6, .nodes = nodes, .topology = t};
	struct dtplan__fabric *f = NULL;
	struct dtplan_request req;
	struct dtplan_plan *p;
	char *json = NULL;

	(void)state;
	for (int i = 0; i < 6; i++)
		make_node(&nodes[i], alloc[i], 8, 8, NULL);
	request_for(&req, 8);
	assert_int_equal(dtplan__fabric_build(&req, &cl, &f, NULL), DTPLAN_OK);
	assert_int_equal(f->leaf_kind, DTPLAN_LEAF_RING);
	for (int i = 0; i < 6; i++)
		assert_string_equal(f->host[i], want[i]);
	assert_int_equal(f->n_runs, 2);
	assert_string_equal(f->runs[0].name, "ring0");
	p = place(&req, f, 8, 1, 6, DTPLAN_ORDER_TP_DP_PP);
	assert_int_equal(p->leaf_kind, DTPLAN_LEAF_RING);
	/* rank 8 (the second node's first GPU) is on n1, the ring's second */
	assert_string_equal(p->node_names[p->ranks[8].node], "n1");
	for (size_t i = 0; i < p->n_warnings; i++)
		assert_null(strstr(p->warnings[i].message, "--switches"));
	assert_int_equal(dtplan_plan_to_json(p, false, &json, NULL), DTPLAN_OK);
	assert_non_null(strstr(json, "\"leaf_kind\":\"ring\""));
	free(json);
	dtplan_plan_destroy(p);
	dtplan__fabric_destroy(f);
	dtplan_topology_destroy(t);
}

static void plan_create__blocks__plan_names_blocks_and_asks_for_segment(void **state)
{
	static const char *const files[] = {"topology-blocks.conf", "topology.yaml"};

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct accept a;
		struct dtplan_plan *p = NULL;
		struct dtplan_error err = {0};
		const struct dtplan_warning *w;
		char *text = NULL, *json = NULL;

		if (!accept_setup(&a, files[i], "dtplan-thin-blocks.conf", "gb[01-02,05-06]"))
			skip();
		request_7b(&a);
		assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
		assert_true(p->blocks);
		assert_int_equal(p->n_leaves_used, 2);
		assert_int_equal(p->n_leaves_needed, 1);
		assert_string_equal(p->leaf_names[0], "rack1");
		assert_string_equal(p->leaf_names[1], "rack2");
		w = find_warning(p, "too-many-leaves");
		assert_non_null(w);
		if (strstr(w->message, "the 4 nodes span 2 blocks (rack1 (2 nodes), rack2 (2 "
				       "nodes)) where 1 would hold them") == NULL ||
		    strstr(w->message, "ask for --segment=4") == NULL)
			fail_msg("%s: %s", files[i], w->message);
		w = find_warning(p, "oversubscribed-uplink");
		assert_non_null(w);
		assert_non_null(strstr(w->message, "on 1 block (--segment=4)"));
		assert_int_equal(dtplan_plan_render_text(p, &text, &err), DTPLAN_OK);
		assert_non_null(strstr(text, "; 2 blocks used, 1 needed"));
		assert_non_null(strstr(text, "rank map     block / node"));
		assert_non_null(strstr(text, "    rack2 (2 nodes, uplink 320.0:1):"));
		assert_int_equal(dtplan_plan_to_json(p, false, &json, &err), DTPLAN_OK);
		assert_non_null(strstr(json, "\"leaf_kind\":\"block\""));
		free(text);
		free(json);
		dtplan_plan_destroy(p);
		dtplan_config_fini(&a.c);
		dtplan_topology_destroy(a.t);
	}
}

/* --segment: the largest divisor of the nodes that fits a block.  3 nodes,
 * one on each rack of 4: --segment=3 puts them in one rack. */
static void plan_create__blocks__segment_divides_the_nodes(void **state)
{
	struct accept a;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	const struct dtplan_warning *w;

	(void)state;
	if (!accept_setup(&a, "topology-blocks.conf", "dtplan-thin-blocks.conf", "gb[01,05,09]"))
		skip();
	request_7b(&a);
	assert_int_equal(dtplan_plan_create(&a.req, &a.cl, &p, &err), DTPLAN_OK);
	assert_int_equal(p->n_leaves_used, 3);
	assert_int_equal(p->n_leaves_needed, 1);
	w = find_warning(p, "too-many-leaves");
	assert_non_null(w);
	if (strstr(w->message, "(rack1 (1 node), rack2 (1 node), rack3 (1 node)) where 1 "
			       "would hold them") == NULL ||
	    strstr(w->message, "ask for --segment=3") == NULL)
		fail_msg("%s", w->message);
	dtplan_plan_destroy(p);
	dtplan_config_fini(&a.c);
	dtplan_topology_destroy(a.t);
}

/*
 * --segment at submission (dtplan_segment_for(), issue 33).  The rule, from
 * lib/dtplan/plan.h: a group of B consecutive ranks spans lcm(B, G) / G
 * nodes of G GPUs (an expert group is TP x EP ranks; a model-parallel group
 * TP x CP x PP, consecutive under tp-pp-dp or with one stage); the segment
 * is the largest S that divides the job's nodes, fits a block and is a
 * multiple of the spans of the groups that cross nodes (and are not the
 * whole job); else of the expert group's alone; else none.
 */
static struct dtplan_candidate split_of(int tp, int cp, int pp, int dp, int ep,
					enum dtplan_rank_order o)
{
	struct dtplan_candidate c;

	memset(&c, 0, sizeof(c));
	c.tp = tp;
	c.cp = cp;
	c.pp = pp;
	c.dp = dp;
	c.ep = ep;
	c.rank_order = o;
	return c;
}

static size_t lcm_of(size_t a, size_t b)
{
	size_t x = a, y = b;

	while (y != 0) {
		size_t t = x % y;

		x = y;
		y = t;
	}
	return a / x * b;
}

/* The case: 24 GB200 nodes of 4 GPUs on NVL72 racks of 18 nodes,
 * TP 1 x PP 1 x DP 96 with EP 32.  An expert group is 32 GPUs, 8 nodes;
 * the multiples of 8 up to 18 are 8 and 16, and 16 does not divide 24: 8. */
static void segment_for__ep32_on_gb200__eight_nodes(void **state)
{
	struct dtplan_candidate c = split_of(1, 1, 1, 96, 32, DTPLAN_ORDER_TP_DP_PP);
	struct dtplan_segment s;

	(void)state;
	assert_int_equal(dtplan_segment_for(&c, 4, 24, 18, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.expert_nodes, lcm_of(1 * 32, 4) / 4);
	assert_int_equal(s.model_nodes, 1); /* TP 1 x PP 1: one GPU */
	assert_int_equal(s.segment, 8);
	if (strstr(s.reason, "--segment=8: an expert group (TP 1 x EP 32, 32 GPUs) spans 8 "
			     "nodes of 4 GPUs") == NULL ||
	    strstr(s.reason, "divide the job's 24 and fit a block of 18") == NULL)
		fail_msg("%s", s.reason);
	/* EP 16: 4 nodes; of 4, 8, 12 and 16 the largest dividing 24 is 12 */
	c.ep = 16;
	assert_int_equal(dtplan_segment_for(&c, 4, 24, 18, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.expert_nodes, 16 / 4);
	assert_int_equal(s.segment, 12);
}

/* A group not aligned on nodes: TP 1 x EP 12 on 8-GPU nodes holds whole
 * groups every lcm(12, 8) / 8 = 3 nodes; 12 nodes, blocks of 8: 6. */
static void segment_for__unaligned_group__lcm_of_group_and_node(void **state)
{
	struct dtplan_candidate c = split_of(1, 1, 1, 96, 12, DTPLAN_ORDER_TP_DP_PP);
	struct dtplan_segment s;

	(void)state;
	assert_int_equal(dtplan_segment_for(&c, 8, 12, 8, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.expert_nodes, lcm_of(12, 8) / 8);
	assert_int_equal(s.segment, 6);
}

/* PP inner (tp-pp-dp): a replica TP 2 x PP 4 is 8 consecutive GPUs, 2
 * nodes of 4; the expert group TP 2 x EP 8 is 16 GPUs, 4 nodes; both whole
 * every lcm(4, 2) = 4 nodes.  16 nodes in blocks of 6: 4.  With PP outer
 * (tp-dp-pp) the replica has a member in every stage: the whole job, which
 * no segment keeps whole, and only the expert groups count. */
static void segment_for__replica_and_expert_groups(void **state)
{
	struct dtplan_candidate c = split_of(2, 1, 4, 8, 8, DTPLAN_ORDER_TP_PP_DP);
	struct dtplan_segment s;

	(void)state;
	assert_int_equal(dtplan_segment_for(&c, 4, 16, 6, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.expert_nodes, lcm_of(2 * 8, 4) / 4);
	assert_int_equal(s.model_nodes, lcm_of(2 * 4, 4) / 4);
	assert_int_equal(s.segment, 4);
	assert_non_null(strstr(s.reason, "hold whole expert and model-parallel groups"));
	c.rank_order = DTPLAN_ORDER_TP_DP_PP;
	assert_int_equal(dtplan_segment_for(&c, 4, 16, 6, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.model_nodes, 16);
	assert_non_null(strstr(s.reason, "has a member in every stage"));
	assert_int_equal(s.segment, 4); /* multiples of 4 up to 6 dividing 16 */
	assert_non_null(strstr(s.reason, "hold whole expert groups"));
}

/* Both spans wanted but no common multiple fits: TP 1 x EP 8 on 4-GPU
 * nodes spans 2 nodes, a replica PP 12 (tp-pp-dp) 12 GPUs, lcm(12, 4) / 4 =
 * 3 nodes; both need multiples of 6, more than a block of 5: the expert
 * groups alone, the largest multiple of 2 up to 5 dividing 24 is 4. */
static void segment_for__no_common_multiple__expert_groups_first(void **state)
{
	struct dtplan_candidate c = split_of(1, 1, 12, 8, 8, DTPLAN_ORDER_TP_PP_DP);
	struct dtplan_segment s;

	(void)state;
	assert_int_equal(dtplan_segment_for(&c, 4, 24, 5, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.expert_nodes, 2);
	assert_int_equal(s.model_nodes, 3);
	assert_int_equal(s.segment, 4);
	assert_non_null(strstr(s.reason, "no multiple of 6 nodes would keep the "
					 "model-parallel groups whole too"));
}

/* Nothing to ask for: an expert group inside one node (TP 1 x EP 4 on 8
 * GPUs), no blocks, a group larger than a block; and a split that is not
 * the job's GPUs is refused. */
static void segment_for__none(void **state)
{
	struct dtplan_candidate c = split_of(1, 1, 1, 32, 4, DTPLAN_ORDER_TP_DP_PP);
	struct dtplan_segment s;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_segment_for(&c, 8, 4, 18, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.expert_nodes, 1);
	assert_int_equal(s.segment, 0);
	assert_non_null(strstr(s.reason, "no --segment: no group to keep inside a block"));
	c.ep = 32; /* 4 nodes of 8 */
	assert_int_equal(dtplan_segment_for(&c, 8, 4, 0, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.segment, 0);
	assert_non_null(strstr(s.reason, "no blocks"));
	assert_int_equal(dtplan_segment_for(&c, 8, 4, 2, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.segment, 0);
	assert_non_null(strstr(s.reason, "no multiple of 4 nodes up to a block's 2 divides "
					 "the job's 4"));
	assert_int_equal(dtplan_segment_for(&c, 8, 5, 18, &s, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "is not the 40 GPUs of 5 nodes of 8"));
}

static void plan_create__heterogeneous_and_generic__plans_on_smallest(void **state)
{
	struct dtplan_node inv[2];
	const char names[3][64] = {"big", "small", "bare"};
	const int which[3] = {0, 1, -1};
	struct dtplan_cluster cl = {.n_nodes = 2,
				    .nodes = inv,
				    .n_hosts = 3,
				    .host_names = names,
				    .host_inventory = which};
	struct dtplan_plan *p = NULL;
	struct dtplan_request req;
	struct dtplan_error err = {0};
	const struct dtplan_warning *w;

	(void)state;
	make_node(&inv[0], "big", 8, 8, NULL);
	make_node(&inv[1], "small", 4, 4, NULL);
	request_for(&req, 8);
	assert_int_equal(dtplan_model_parse("7B", &req.model, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&req, &cl, &p, &err), DTPLAN_OK);
	assert_int_equal(p->request.gpus_per_node, 4);
	assert_int_equal(p->request.gpus, 12);
	w = find_warning(p, "heterogeneous-nodes");
	assert_non_null(w);
	assert_non_null(strstr(w->message, "big has 8 x H100"));
	assert_non_null(strstr(w->message, "small has 4 x H100"));
	assert_non_null(find_warning(p, "assumed-nodes"));
	assert_true(p->best.tp <= 4);
	dtplan_plan_destroy(p);
}

static void plan_create__fixed_tp_beyond_domain__warns(void **state)
{
	struct dtplan_node n[2];
	struct dtplan_cluster cl = {.n_nodes = 2, .nodes = n};
	struct dtplan_plan *p = NULL;
	struct dtplan_request req;
	const struct dtplan_warning *w;

	(void)state;
	make_node(&n[0], "a", 8, 4, NULL); /* two 4-GPU domains per node */
	make_node(&n[1], "b", 8, 4, NULL);
	request_for(&req, 8);
	assert_int_equal(dtplan_model_parse("layers=8,hidden=1024,heads=16", &req.model, NULL),
			 DTPLAN_OK);
	req.tp = 8;
	assert_int_equal(dtplan_plan_create(&req, &cl, &p, NULL), DTPLAN_OK);
	w = find_warning(p, "tp-exceeds-domain");
	assert_non_null(w);
	assert_non_null(strstr(w->message, "TP 8"));
	assert_string_equal(p->best.crosses_uplinks, "none"); /* flat: no uplinks */
	dtplan_plan_destroy(p);
}

static void plan_create__job_holds_2_of_8_gpus__ranks_on_every_node(void **state)
{
	struct dtplan_node n[4];
	struct dtplan_cluster cl = {.n_nodes = 4, .nodes = n, .gpus_per_node = 2};
	struct dtplan_plan *p = NULL;
	struct dtplan_request req;
	int per_node[4] = {0};

	(void)state;
	/* sbatch -N4 --gres=gpu:2 on nodes of 8: 8 GPUs, two on each node, not
	 * one node's eight. */
	for (int i = 0; i < 4; i++) {
		char host[16];

		snprintf(host, sizeof(host), "n%d", i + 1);
		make_node(&n[i], host, 8, 8, NULL);
	}
	request_for(&req, 2);
	assert_int_equal(dtplan_model_parse("layers=8,hidden=1024,heads=16", &req.model, NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&req, &cl, &p, NULL), DTPLAN_OK);
	assert_int_equal(p->n_ranks, 8);
	assert_int_equal(p->n_nodes, 4);
	for (size_t r = 0; r < p->n_ranks; r++) {
		dt_assert_in_range(p->ranks[r].node, 0, 3);
		dt_assert_in_range(p->ranks[r].gpu, 0, 7);
		per_node[p->ranks[r].node]++;
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(per_node[i], 2);
	/* a TP group cannot be larger than the two GPUs the job holds per node */
	assert_true(p->best.tp <= 2);
	dtplan_plan_destroy(p);
}

/* Issue 13, finding 2: generic nodes of more GPUs than an inventory may
 * hold (1024 each) used to overflow a 64-entry domain table. */
static void plan_create__generic_nodes_of_1024_gpus__domains_of_the_gpu(void **state)
{
	static const char names[2][64] = {"a1", "a2"};
	struct dtplan_request r;
	struct dtplan_cluster cl = {.n_hosts = 2, .host_names = names};
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	int most = -1;

	(void)state;
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("7B", &r.model, NULL), DTPLAN_OK);
	r.gpus_per_node = 1024;
	if (dtplan_plan_create(&r, &cl, &p, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(p->n_ranks, 2048);
	/* h100-sxm domains of 8: 2048 / 8 = 256 of them, 8 GPUs each */
	for (size_t k = 0; k < p->n_ranks; k++) {
		assert_int_equal(p->ranks[k].domain,
				 (int)(p->ranks[k].node * 128 + p->ranks[k].gpu / 8));
		most = p->ranks[k].domain > most ? p->ranks[k].domain : most;
	}
	assert_int_equal(most, 255);
	dtplan_plan_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_create__generic_nodes_of_1024_gpus__domains_of_the_gpu),
		cmocka_unit_test(fabric_build__natural_order_and_unknown_last__sorted),
		cmocka_unit_test(fabric_build__rails__local_rank_follows_nic),
		cmocka_unit_test(fabric_build__shared_fabric_id__multi_node_domain),
		cmocka_unit_test(fabric_build__bad_input__errors),
		cmocka_unit_test(fabric_eval__two_racks_4to1__flows_by_order),
		cmocka_unit_test(search_run_fabric__pruned__same_as_exhaustive),
		cmocka_unit_test(placement__random_allocations__invariants_hold),
		cmocka_unit_test(plan_create__two_racks_4to1__dp_in_racks_pp_crosses),
		cmocka_unit_test(plan_create__three_leaves_4_4_8__small_gain__no_warning),
		cmocka_unit_test(plan_create__two_leaves_where_one_would_do__warns_with_the_gain),
		cmocka_unit_test(
			plan_create__two_leaves_calibrated__the_leaf_plan_is_calibrated_too),
		cmocka_unit_test(plan_create__on_the_fewest_leaves__never_told_to_ask_for_them),
		cmocka_unit_test(fabric_build__rings__ring_order_rings_named),
		cmocka_unit_test(plan_create__blocks__plan_names_blocks_and_asks_for_segment),
		cmocka_unit_test(plan_create__blocks__segment_divides_the_nodes),
		cmocka_unit_test(segment_for__ep32_on_gb200__eight_nodes),
		cmocka_unit_test(segment_for__unaligned_group__lcm_of_group_and_node),
		cmocka_unit_test(segment_for__replica_and_expert_groups),
		cmocka_unit_test(segment_for__no_common_multiple__expert_groups_first),
		cmocka_unit_test(segment_for__none),
		cmocka_unit_test(plan_create__heterogeneous_and_generic__plans_on_smallest),
		cmocka_unit_test(plan_create__fixed_tp_beyond_domain__warns),
		cmocka_unit_test(plan_create__job_holds_2_of_8_gpus__ranks_on_every_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
