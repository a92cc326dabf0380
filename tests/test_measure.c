/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_measure.c: link results -> measurements (tiers, uplinks, stragglers,
 * missing nodes), the measurement as a plan's input and its warnings, the
 * plan's "measurements" object and text, and the measurement file
 * (lib/measure/measure.c, lib/json/measure_json.c).
 */
#include "test_common.h"

#include "dtplan.h"

#define MB 1e6

/* The test cluster's numbers: 1 Gbit/s node links seen as 118.75 MB/s,
 * node6 shaped to 100 Mbit/s (12.5 MB/s), uplinks of 200 Mbit/s shared by
 * two flows each way (11.9 MB/s each), 1 ms more across the leaves. */
#define NODE_BW (118.75 * MB)
#define SLOW_BW (12.5 * MB)
#define CROSS_BW (23.75 * MB)
#define SHARED_BW (11.9 * MB)

static const char topo_text[] = "SwitchName=leaf1 Nodes=node[1-4]\n"
				"SwitchName=leaf2 Nodes=node[5-8]\n"
				"SwitchName=spine Switches=leaf[1-2]\n";

struct fixture {
	char hosts[8][64];
	int32_t leaf[8];
	struct dtplan_topology *topo;
	struct dtplan_link_result links[32];
	size_t n_links;
	uint8_t reported[8], complete[8];
};

/* The links of the real schedule, with the figures above. */
static void fixture_init(struct fixture *f)
{
	struct dtplan_probe_schedule *s = NULL;

	memset(f, 0, sizeof(*f));
	assert_int_equal(dtplan_topology_parse_string(topo_text, "topo", &f->topo, NULL),
			 DTPLAN_OK);
	for (int i = 0; i < 8; i++) {
		snprintf(f->hosts[i], sizeof(f->hosts[i]), "node%d", i + 1);
		f->leaf[i] = dtplan_topology_switch_index(f->topo, i < 4 ? "leaf1" : "leaf2");
		f->reported[i] = f->complete[i] = 1;
	}
	assert_int_equal(dtplan_probe_schedule_create(8, f->leaf, NULL, &s, NULL), DTPLAN_OK);
	for (size_t r = 0; r < s->n_rounds; r++) {
		for (size_t k = 0; k < s->rounds[r].n_pairs; k++) {
			struct dtplan_link_result *l = &f->links[f->n_links++];
			uint32_t a = s->rounds[r].pairs[k].from, b = s->rounds[r].pairs[k].to;

			l->from = a;
			l->to = b;
			l->round = (uint8_t)(r + 1);
			l->flags = DTPLAN_LINK_OK;
			l->samples = 32;
			l->latency_spread_s = 5e-6;
			switch (s->rounds[r].kind) {
			case DTPLAN_ROUND_INTRA:
				l->latency_s = 50e-6;
				l->bandwidth_bytes_per_s = a == 5 || b == 5 ? SLOW_BW : NODE_BW;
				break;
			case DTPLAN_ROUND_CROSS:
				l->latency_s = 1.05e-3;
				l->bandwidth_bytes_per_s = CROSS_BW;
				l->flags |= DTPLAN_LINK_CROSS;
				break;
			default:
				l->latency_s = 1.1e-3;
				l->bandwidth_bytes_per_s = SHARED_BW;
				l->flags |= DTPLAN_LINK_CROSS | DTPLAN_LINK_CONCURRENT;
				break;
			}
		}
	}
	assert_int_equal(f->n_links, 13);
	dtplan_probe_schedule_destroy(s);
}

static struct dtplan_measurements *analyze(struct fixture *f)
{
	struct dtplan_measure_in in = {
		.source = "prolog",
		.n_nodes = 8,
		.hosts = (const char(*)[64])f->hosts,
		.leaf = f->leaf,
		.topology = f->topo,
		.reported = f->reported,
		.complete = f->complete,
		.n_links = f->n_links,
		.links = f->links,
		.budget_s = 5,
		.elapsed_s = 1.8,
	};
	struct dtplan_measurements *m = NULL;
	struct dtplan_error err = {0};

	assert_int_equal(dtplan_measurements_analyze(&in, &m, &err), DTPLAN_OK);
	assert_non_null(m);
	return m;
}

static void analyze__test_cluster__tiers_uplinks_straggler(void **state)
{
	struct fixture f;
	struct dtplan_measurements *m;

	(void)state;
	fixture_init(&f);
	m = analyze(&f);
	assert_string_equal(m->source, "prolog");
	assert_int_equal(m->n_reported, 8);
	assert_int_equal(m->n_missing, 0);
	/* intra: 8 single flows, two of them node6's: the median is 118.75 MB/s */
	assert_true(m->intra.measured);
	assert_int_equal(m->intra.links, 8);
	assert_near(m->intra.bandwidth_bytes_per_s, NODE_BW, 1e-3);
	assert_near(m->intra.latency_s, 50e-6, 1e-12);
	/* cross: one single flow gives bandwidth and latency; the 4 concurrent
	 * pairs count among the tier's links */
	assert_near(m->cross.bandwidth_bytes_per_s, CROSS_BW, 1e-3);
	assert_near(m->cross.latency_s, 1.05e-3, 1e-12);
	assert_int_equal(m->cross.links, 5);
	/* node6 is the straggler, not its partners node5 and node7 */
	assert_int_equal(m->n_stragglers, 1);
	assert_string_equal(m->stragglers[0].node, "node6");
	assert_near(m->stragglers[0].bandwidth_bytes_per_s, SLOW_BW, 1e-3);
	assert_near(m->stragglers[0].tier_median_bytes_per_s, NODE_BW, 1e-3);
	/* each uplink carries two flows each way: 4 x 118.75 / 23.8 = 19.958:1 */
	assert_int_equal(m->n_uplinks, 2);
	for (int k = 0; k < 2; k++) {
		const struct dtplan_uplink *u = &m->uplinks[k];

		assert_string_equal(u->name, k == 0 ? "leaf1" : "leaf2");
		assert_int_equal(u->flows, 2);
		assert_near(u->aggregate_bytes_per_s, 2 * SHARED_BW, 1e-3);
		assert_near(u->downlink_bytes_per_s, 4 * NODE_BW, 1e-3);
		assert_near(u->oversubscription, 4 * NODE_BW / (2 * SHARED_BW), 1e-9);
		assert_true(u->saturated);
	}
	dtplan_measurements_destroy(m);
	dtplan_topology_destroy(f.topo);
}

static void analyze__missing_and_unsaturated(void **state)
{
	struct fixture f;
	struct dtplan_measurements *m;

	(void)state;
	fixture_init(&f);
	f.reported[6] = 0; /* node7: no inventory */
	f.complete[7] = 0; /* node8: no link results */
	/* concurrent flows at full node speed: the uplinks are not saturated */
	for (size_t i = 0; i < f.n_links; i++)
		if (f.links[i].flags & DTPLAN_LINK_CONCURRENT)
			f.links[i].bandwidth_bytes_per_s = NODE_BW;
	m = analyze(&f);
	assert_int_equal(m->n_reported, 7);
	assert_int_equal(m->n_missing, 2);
	assert_int_equal(m->missing[0], 6);
	assert_int_equal(m->missing[1], 7);
	assert_false(m->uplinks[0].saturated);
	assert_near(m->uplinks[0].oversubscription, 2.0, 1e-9);
	dtplan_measurements_destroy(m);
	dtplan_topology_destroy(f.topo);
}

static void analyze__bad_input__inval(void **state)
{
	struct fixture f;
	struct dtplan_measure_in in = {0};
	struct dtplan_measurements *m = NULL;
	struct dtplan_error err = {0};

	(void)state;
	fixture_init(&f);
	in.n_nodes = 8;
	in.hosts = (const char(*)[64])f.hosts;
	in.links = f.links;
	in.n_links = f.n_links;
	f.links[3].to = 8;
	assert_int_equal(dtplan_measurements_analyze(&in, &m, &err), DTPLAN_ERR_INVAL);
	assert_null(m);
	assert_non_null(strstr(err.text, "link 3 names hosts"));
	in.n_nodes = 0;
	assert_int_equal(dtplan_measurements_analyze(&in, &m, &err), DTPLAN_ERR_INVAL);
	dtplan_topology_destroy(f.topo);
}

static void apply__ratios_always_tiers_on_the_training_fabric(void **state)
{
	struct fixture f;
	struct dtplan_measurements *m;
	struct dtplan_config c;
	struct dtplan_request req;
	int k1, k2;

	(void)state;
	fixture_init(&f);
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c, "SwitchName=leaf1 Oversubscription=4:1\n",
						    "site", NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(&c, f.topo, NULL), DTPLAN_OK);
	dtplan_request_init(&req);
	m = analyze(&f);
	assert_int_equal(dtplan_measurements_apply(m, &req, &c, f.topo, NULL), DTPLAN_OK);
	k1 = dtplan_topology_switch_index(f.topo, "leaf1");
	k2 = dtplan_topology_switch_index(f.topo, "leaf2");
	assert_near(m->uplinks[0].configured, 4.0, 0);
	assert_near(m->uplinks[1].configured, 0.0, 0);
	assert_near(f.topo->switches[k1].oversubscription, m->uplinks[0].oversubscription, 0);
	assert_near(f.topo->switches[k2].oversubscription, m->uplinks[1].oversubscription, 0);
	assert_near(c.switches[0].oversubscription, m->uplinks[0].oversubscription, 0);
	assert_true(m->used_ratios);
	/* over the host names' network the tiers are not the training fabric */
	assert_false(m->used_tiers);
	assert_near(req.net_bytes_per_s, 50e9, 0);
	snprintf(m->interface, sizeof(m->interface), "eth0");
	assert_int_equal(dtplan_measurements_apply(m, &req, &c, f.topo, NULL), DTPLAN_OK);
	assert_true(m->used_tiers);
	assert_near(req.net_bytes_per_s, NODE_BW, 1e-3);
	assert_near(req.net_latency_s, 50e-6, 1e-12);
	dtplan_measurements_destroy(m);
	dtplan_config_fini(&c);
	dtplan_topology_destroy(f.topo);
}

/* An UplinkBandwidth= is configured as the ratio the fabric prices: the
 * leaf's GPU links (4 nodes x 8 GPUs x 50 GB/s = 1.6 TB/s) to the uplink
 * (100 GB/s), 16:1; the measured ratio still replaces it. */
static void apply__uplink_bandwidth__configured_as_ratio(void **state)
{
	struct fixture f;
	struct dtplan_measurements *m;
	struct dtplan_config c;
	struct dtplan_request req;

	(void)state;
	fixture_init(&f);
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c,
						    "SwitchName=leaf2 UplinkBandwidth=100GB/s\n",
						    "site", NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(&c, f.topo, NULL), DTPLAN_OK);
	dtplan_request_init(&req);
	req.gpus_per_node = 8;
	req.net_bytes_per_s = 50e9;
	m = analyze(&f);
	assert_int_equal(dtplan_measurements_apply(m, &req, &c, f.topo, NULL), DTPLAN_OK);
	assert_near(m->uplinks[0].configured, 0.0, 0);
	assert_near(m->uplinks[1].configured, 16.0, 1e-9);
	assert_near(c.switches[0].oversubscription, m->uplinks[1].oversubscription, 0);
	assert_near(c.switches[0].uplink_bytes_per_s, 0.0, 0);
	dtplan_measurements_destroy(m);
	dtplan_config_fini(&c);
	dtplan_topology_destroy(f.topo);
}

/* A node of 8 GPUs in one NVLink domain. */
static void make_node(struct dtplan_node *n, const char *host)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->hostname, sizeof(n->hostname), "%s", host);
	snprintf(n->source, sizeof(n->source), "xml");
	n->n_gpus = 8;
	n->n_domains = 1;
	n->domains[0].n_gpus = 8;
	n->domains[0].bandwidth_bytes_per_s = 450e9;
	for (int i = 0; i < 8; i++) {
		snprintf(n->gpus[i].model, sizeof(n->gpus[i].model), "H100");
		n->gpus[i].domain = 0;
		n->gpus[i].nic = -1;
		n->domains[0].gpus[i] = i;
	}
}

/* The 8-node plan of the test cluster with its measurement: warnings with
 * both numbers and the straggler's name, the JSON object of the contract,
 * the text's measured lines. */
static void plan__with_measurements__warns_and_says_what_was_measured(void **state)
{
	struct fixture f;
	struct dtplan_measurements *m;
	struct dtplan_config c;
	struct dtplan_request req;
	struct dtplan_node node;
	struct dtplan_cluster cl = {0};
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	char *json = NULL, *text = NULL;
	bool over1 = false, strag = false;

	(void)state;
	fixture_init(&f);
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c,
						    "SwitchName=leaf1 Oversubscription=4:1\n"
						    "SwitchName=leaf2 Oversubscription=4:1\n",
						    "site", NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(&c, f.topo, NULL), DTPLAN_OK);
	dtplan_request_init(&req);
	dtplan_request_apply_config(&req, &c);
	assert_int_equal(dtplan_model_parse("llama3-8b", &req.model, NULL), DTPLAN_OK);
	m = analyze(&f);
	m->n_inventories = 8;
	assert_int_equal(dtplan_measurements_apply(m, &req, &c, f.topo, NULL), DTPLAN_OK);
	make_node(&node, "node1");
	cl.n_nodes = 1;
	cl.nodes = &node;
	cl.n_hosts = 8;
	cl.host_names = (const char(*)[64])f.hosts;
	cl.topology = f.topo;
	cl.config = &c;
	assert_int_equal(dtplan_plan_create(&req, &cl, &p, &err), DTPLAN_OK);
	assert_int_equal(dtplan_plan_take_measurements(p, m, &err), DTPLAN_OK);
	for (size_t i = 0; i < p->n_warnings; i++) {
		const struct dtplan_warning *w = &p->warnings[i];

		if (strcmp(w->code, "measured-oversubscription") == 0 &&
		    strstr(w->message, "leaf1's uplink measured 20.0:1") != NULL &&
		    strstr(w->message, "configured 4.0:1") != NULL)
			over1 = true;
		if (strcmp(w->code, "straggler") == 0 && strstr(w->message, "node6") != NULL &&
		    strstr(w->message, "12.50 MB/s") != NULL)
			strag = true;
	}
	assert_true(over1);
	assert_true(strag);
	/* the uplinks the fabric used are the measured ones */
	for (size_t k = 0; k < p->n_leaves_used; k++)
		assert_near(p->leaf_ratio[k], 4 * NODE_BW / (2 * SHARED_BW), 1e-6);
	assert_int_equal(dtplan_plan_to_json(p, false, &json, &err), DTPLAN_OK);
	assert_non_null(strstr(json, "\"measurements\":{\"nodes\":8,\"nodes_reported\":8,"
				     "\"source\":\"prolog\""));
	assert_non_null(strstr(json, "\"stragglers\":[{\"node\":\"node6\""));
	assert_non_null(strstr(json, "\"uplinks\":[{\"switch\":\"leaf1\""));
	assert_non_null(strstr(json, "\"used\":{\"inventories\":\"measured\",\"bandwidth\":"
				     "\"assumed\",\"latency\":\"assumed\",\"oversubscription\":"
				     "\"measured\"}"));
	assert_int_equal(dtplan_plan_render_text(p, &text, &err), DTPLAN_OK);
	assert_non_null(strstr(text, "  measured     8 of 8 nodes by the prolog in "));
	assert_non_null(strstr(text, "  links        intra-leaf 119 MB/s, 50.0 us one way; "
				     "cross-leaf 23.75 MB/s, 1.05 ms one way\n"));
	assert_non_null(strstr(text, "  uplinks      leaf1 20.0:1 (configured 4.0:1)"));
	assert_non_null(strstr(text, "oversubscription measured"));
	free(json);
	free(text);
	dtplan_plan_destroy(p);
	dtplan_config_fini(&c);
	dtplan_topology_destroy(f.topo);
}

/* Without a measurement the plan's object says nothing was measured. */
static void plan__without__source_none(void **state)
{
	struct dtplan_request req;
	struct dtplan_plan *p = NULL;
	char *json = NULL;

	(void)state;
	dtplan_request_init(&req);
	req.gpus = 8;
	assert_int_equal(dtplan_model_parse("llama3-8b", &req.model, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&req, NULL, &p, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_to_json(p, false, &json, NULL), DTPLAN_OK);
	assert_non_null(strstr(json, "\"measurements\":{\"nodes\":0,\"nodes_reported\":0,"
				     "\"source\":\"none\",\"budget_seconds\":null"));
	free(json);
	dtplan_plan_destroy(p);
}

/* A measurement that could not run (issue 26: the leader's ports were
 * taken): the file keeps why, and a plan that takes it is degraded with
 * that cause, its text saying nothing was measured. */
/* A big job's notes (one per node without an inventory) used to become one
 * warning each, past the 1,024 dtplan show reads (issue 26): the first 16
 * are warnings, the rest a count. */
static void plan__many_notes__first_ones_then_a_count(void **state)
{
	static const char hosts[1][64] = {"node1"};
	struct dtplan_measurements *m = dtplan_measurements_create(1, hosts);
	struct dtplan_request req;
	struct dtplan_plan *p = NULL;
	size_t notes = 0;

	(void)state;
	assert_non_null(m);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(dtplan_measurements_add_note(m, "node%d has no inventory", i),
				 DTPLAN_OK);
	dtplan_request_init(&req);
	req.gpus = 8;
	assert_int_equal(dtplan_model_parse("llama3-8b", &req.model, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&req, NULL, &p, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_take_measurements(p, m, NULL), DTPLAN_OK);
	for (size_t i = 0; i < p->n_warnings; i++)
		notes += strcmp(p->warnings[i].code, "measurement") == 0;
	assert_int_equal(notes, 16 + 1);
	assert_string_equal(p->warnings[p->n_warnings - 1].message,
			    "4984 more notes of the measurement, as the 16 above");
	assert_int_equal(p->measurements->n_notes, 16);
	assert_int_equal(p->measurements->n_notes_more, 4984);
	dtplan_plan_destroy(p);
}

/*
 * Nor does the plan carry every note (2 million took 3 GB, and a plan of
 * them was tens of MB): the measurement keeps the first 16 and counts the
 * rest, its JSON says the count, the measurement file keeps it, and the
 * plan stays the size of a plan with 16 notes, which dtplan show reads.
 */
static void plan__two_million_notes__summary_small_plan_reads(void **state)
{
	static const char hosts[1][64] = {"node1"};
	struct dtplan_measurements *m = dtplan_measurements_create(1, hosts), *m16;
	struct dtplan_measure_file a = {0}, b = {0};
	struct dtplan_request req;
	struct dtplan_plan *p = NULL, *q = NULL, *p16 = NULL;
	char *json = NULL, *json16 = NULL, *text = NULL;
	size_t n = 2000000;

	(void)state;
	if (getenv("DTPLAN_TEST_UNDER_VALGRIND") != NULL)
		n = 20000; /* the same path, at valgrind's pace */
	m16 = dtplan_measurements_create(1, hosts);
	assert_non_null(m);
	assert_non_null(m16);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(dtplan_measurements_add_note(m, "node%zu has no inventory", i),
				 DTPLAN_OK);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(dtplan_measurements_add_note(m16, "node%zu has no inventory", i),
				 DTPLAN_OK);
	assert_int_equal(m->n_notes, DTPLAN_MEASURE_MAX_NOTES);
	assert_int_equal(m->n_notes_more, n - 16);
	/* the measurement file between prolog and batch step keeps the count */
	a.job_id = 7;
	a.m = m;
	assert_int_equal(dtplan_measure_file_to_json(&a, &text, NULL), DTPLAN_OK);
	assert_true(strlen(text) < 4096);
	assert_int_equal(dtplan_measure_file_from_json(text, &b, NULL), DTPLAN_OK);
	assert_int_equal(b.m->n_notes, 16);
	assert_int_equal(b.m->n_notes_more, n - 16);
	free(text);
	dtplan_measurements_destroy(m);
	dtplan_request_init(&req);
	req.gpus = 8;
	assert_int_equal(dtplan_model_parse("llama3-8b", &req.model, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&req, NULL, &p, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&req, NULL, &p16, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_take_measurements(p, b.m, NULL), DTPLAN_OK);
	b.m = NULL; /* the plan's now */
	dtplan_measure_file_fini(&b);
	assert_int_equal(dtplan_plan_take_measurements(p16, m16, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_to_json(p, true, &json, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_to_json(p16, true, &json16, NULL), DTPLAN_OK);
	/* the 16-note plan, one warning and the count longer */
	if (strlen(json) > strlen(json16) + 256)
		fail_msg("a plan of %zu notes takes %zu bytes, of 16 notes %zu", n, strlen(json),
			 strlen(json16));
	assert_non_null(strstr(json, "\"notes_more\": "));
	/* what dtplan show reads */
	assert_int_equal(dtplan_plan_from_json(json, &q, NULL), DTPLAN_OK);
	assert_int_equal(q->n_warnings, p->n_warnings);
	dtplan_plan_destroy(q);
	dtplan_plan_destroy(p);
	dtplan_plan_destroy(p16);
	free(json);
	free(json16);
}

static void plan__failed_measurement__degraded_names_the_cause(void **state)
{
	static const char hosts[2][64] = {"node1", "node2"};
	static const char why[] = "node1: cannot listen on any of ports 531, 532, 533, 534 "
				  "(the job's of probe_ports=500-599): Address already in use";
	struct dtplan_measure_file a = {0}, b = {0};
	struct dtplan_request req;
	struct dtplan_plan *p = NULL;
	char *text = NULL, *json = NULL, want[512];

	(void)state;
	a.job_id = 7;
	a.m = dtplan_measurements_create(2, hosts);
	assert_non_null(a.m);
	snprintf(a.m->source, sizeof(a.m->source), "prolog");
	a.m->budget_s = 5;
	snprintf(a.m->failed, sizeof(a.m->failed), "%s", why);
	assert_int_equal(dtplan_measure_file_to_json(&a, &text, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_measure_file_from_json(text, &b, NULL), DTPLAN_OK);
	free(text);
	text = NULL;
	assert_string_equal(b.m->failed, why);
	assert_int_equal(b.m->n_reported, 0);
	assert_int_equal(b.host_record[0], -1);
	dtplan_request_init(&req);
	req.gpus = 8;
	assert_int_equal(dtplan_model_parse("llama3-8b", &req.model, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&req, NULL, &p, NULL), DTPLAN_OK);
	assert_false(p->degraded);
	assert_int_equal(dtplan_plan_take_measurements(p, b.m, NULL), DTPLAN_OK);
	b.m = NULL;
	assert_true(p->degraded);
	snprintf(want, sizeof(want), "nothing measured by the prolog: %s", why);
	assert_string_equal(p->degraded_reason, want);
	assert_int_equal(dtplan_plan_to_json(p, false, &json, NULL), DTPLAN_OK);
	assert_non_null(strstr(json, "\"failed\":\"node1: cannot listen on any of ports"));
	assert_int_equal(dtplan_plan_render_text(p, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, "  measured     nothing: the prolog failed (node1: cannot "
				     "listen on any of ports 531, 532, 533, 534"));
	free(text);
	free(json);
	dtplan_plan_destroy(p);
	dtplan_measure_file_fini(&a);
	dtplan_measure_file_fini(&b);
}

static void file__round_trip__same_measurements_and_records(void **state)
{
	struct fixture f;
	struct dtplan_measure_file a = {0}, b = {0};
	struct dtplan_node rec[2];
	int32_t map[8] = {0, 0, 0, 0, 1, 1, -1, 1};
	char *text = NULL, *again = NULL;
	struct dtplan_error err = {0};

	(void)state;
	fixture_init(&f);
	f.reported[6] = 0;
	make_node(&rec[0], "");
	make_node(&rec[1], "");
	rec[1].n_gpus = 4;
	rec[1].domains[0].n_gpus = 4;
	a.job_id = 77;
	a.m = analyze(&f);
	assert_int_equal(dtplan_measurements_add_note(a.m, "only %s was measured", "node1"),
			 DTPLAN_OK);
	a.n_records = 2;
	a.records = rec;
	a.host_record = map;
	assert_int_equal(dtplan_measure_file_to_json(&a, &text, &err), DTPLAN_OK);
	assert_int_equal(dtplan_measure_file_from_json(text, &b, &err), DTPLAN_OK);
	assert_int_equal(b.job_id, 77);
	assert_int_equal(b.n_records, 2);
	assert_int_equal(b.records[1].n_gpus, 4);
	assert_memory_equal(b.host_record, map, sizeof(map));
	assert_int_equal(b.m->n_nodes, 8);
	assert_string_equal(b.m->hosts[7], "node8");
	assert_int_equal(b.m->n_links, 13);
	assert_int_equal(b.m->n_stragglers, 1);
	assert_int_equal(b.m->n_missing, 1);
	assert_int_equal(b.m->missing[0], 6);
	assert_int_equal(b.m->n_notes, 1);
	assert_string_equal(b.m->notes[0], "only node1 was measured");
	assert_near(b.m->uplinks[1].oversubscription, a.m->uplinks[1].oversubscription, 1e-6);
	for (size_t i = 0; i < 13; i++) {
		assert_int_equal(b.m->links[i].from, a.m->links[i].from);
		assert_int_equal(b.m->links[i].flags, a.m->links[i].flags);
		assert_near(b.m->links[i].bandwidth_bytes_per_s,
			    a.m->links[i].bandwidth_bytes_per_s, 1);
	}
	/* the text of what was read is the text that was written */
	b.m->n_inventories = 0;
	assert_int_equal(dtplan_measure_file_to_json(&b, &again, &err), DTPLAN_OK);
	assert_string_equal(again, text);
	free(again);
	free(text);
	dtplan_measure_file_fini(&b);
	dtplan_measurements_destroy(a.m);
	dtplan_topology_destroy(f.topo);
}

/* Bad files are refused naming the member. */
static void file__bad__named(void **state)
{
	static const struct {
		const char *text;
		const char *message;
	} cases[] = {
		{"[1]", "not a JSON object"},
		{"{\"schema\": \"dtplan.plan/1\"}", "schema: 'dtplan.plan/1'"},
		{"{\"hosts\": []}", "hosts: 0 hosts"},
		{"{\"hosts\": [\"a\", \"a\"]}", "hosts[1]: 'a' named twice"},
		{"{\"hosts\": [\"a\"], \"nodes\": 2}", "nodes: not the 1 hosts"},
		{"{\"hosts\": [\"a\", \"b\"], \"nodes\": 2, \"nodes_reported\": 2, \"source\": "
		 "\"probe\", \"budget_seconds\": 5, \"elapsed_seconds\": 1, \"interface\": null, "
		 "\"tiers\": {\"intra_leaf\": {\"bandwidth_bytes_per_s\": null, \"latency_us\": "
		 "null, \"latency_spread_us\": null, \"links\": 0, \"measured\": false}, "
		 "\"cross_leaf\": {\"bandwidth_bytes_per_s\": null, \"latency_us\": null, "
		 "\"latency_spread_us\": null, \"links\": 0, \"measured\": false}}, \"uplinks\": "
		 "[], "
		 "\"links\": [{\"a\": \"a\", \"b\": \"c\"}]}",
		 "links[].b: 'c' is not one of the hosts"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"x\"}",
		 "source: 'x' is not prolog, probe or none"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"probe\", "
		 "\"budget_seconds\": -1}",
		 "budget_seconds: -1 is out of range"},
		{"{\"schema\": \"dtplan.measurements/1\", \"job_id\": 1, \"measurements\": {}, "
		 "\"records\": [], \"host_record\": [5]}",
		 "hosts: missing"},
		/* issue 26: figures past the site file's bounds for the same
		 * quantity (an 11-day budget, a latency of 1e12 s, 1e-300 B/s, a
		 * 1e18 oversubscription) are refused naming the member */
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"probe\", "
		 "\"budget_seconds\": 1e6}",
		 "budget_seconds: 1e+06 is out of range (0, or at least 0.5 s and at most 120 s)"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"probe\", "
		 "\"budget_seconds\": 5, \"elapsed_seconds\": 1, \"interface\": null, \"tiers\": "
		 "{\"intra_leaf\": {\"bandwidth_bytes_per_s\": null, \"latency_us\": 1e18, "
		 "\"latency_spread_us\": null, \"links\": 0, \"measured\": false}}}",
		 "latency_us: 1e+18 is out of range (0, or at least 0 us and at most 1e+06 us)"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"probe\", "
		 "\"budget_seconds\": 5, \"elapsed_seconds\": 1, \"interface\": null, \"tiers\": "
		 "{\"intra_leaf\": {\"bandwidth_bytes_per_s\": 1e-300, \"latency_us\": null, "
		 "\"latency_spread_us\": null, \"links\": 0, \"measured\": false}}}",
		 "bandwidth_bytes_per_s: 1e-300 is out of range (0, or at least 1e+06 B/s"},
		{"{\"a\": 1, \"a\": 2}", "duplicate object key"},
		/* the members' types in the getters' one wording (base/base.h) */
		{"{\"hosts\": {}}", "hosts: expected an array"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1.5}", "nodes: expected a whole number"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": 3}",
		 "source: expected a string"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"probe\", "
		 "\"budget_seconds\": \"5\"}",
		 "budget_seconds: expected a number"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"probe\", "
		 "\"budget_seconds\": 5, \"elapsed_seconds\": 1, \"interface\": null, \"tiers\": "
		 "[]}",
		 "tiers: expected an object"},
		{"{\"hosts\": [\"a\"], \"nodes\": 1, \"nodes_reported\": 1, \"source\": \"probe\", "
		 "\"budget_seconds\": 5, \"elapsed_seconds\": 1, \"interface\": null, \"tiers\": "
		 "{\"intra_leaf\": {\"bandwidth_bytes_per_s\": null, \"latency_us\": null, "
		 "\"latency_spread_us\": null, \"links\": 0, \"measured\": 1}}}",
		 "tiers.intra_leaf.measured: expected true or false"},
		{"{\"schema\": \"dtplan.measurements/1\", \"job_id\": -1}",
		 "job_id: -1 is out of range (0 to 4294967295)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_measure_file f;
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_measure_file_from_json(cases[i].text, &f, &err),
				 DTPLAN_ERR_PARSE);
		assert_null(f.m);
		if (strstr(err.text, cases[i].message) == NULL)
			fail_msg("case %zu: '%s' does not say '%s'", i, err.text, cases[i].message);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(analyze__test_cluster__tiers_uplinks_straggler),
		cmocka_unit_test(analyze__missing_and_unsaturated),
		cmocka_unit_test(analyze__bad_input__inval),
		cmocka_unit_test(apply__ratios_always_tiers_on_the_training_fabric),
		cmocka_unit_test(apply__uplink_bandwidth__configured_as_ratio),
		cmocka_unit_test(plan__with_measurements__warns_and_says_what_was_measured),
		cmocka_unit_test(plan__without__source_none),
		cmocka_unit_test(plan__failed_measurement__degraded_names_the_cause),
		cmocka_unit_test(plan__many_notes__first_ones_then_a_count),
		cmocka_unit_test(plan__two_million_notes__summary_small_plan_reads),
		cmocka_unit_test(file__round_trip__same_measurements_and_records),
		cmocka_unit_test(file__bad__named),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
