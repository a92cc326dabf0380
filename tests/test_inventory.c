/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_inventory.c: the inventory of an allocation (probes/inventory.c):
 * the order of the sources, records shared among equal nodes, the assumed
 * hosts and their one warning, node_xml= patterns; and the allocation
 * assembled over it (probes/allocation.c), strict (the CLI) or degrading
 * (the plugin).
 */
#include "test_common.h"

#include "dtprobes.h"

#include <unistd.h>

static char dir[256];

static void link_xml(const char *host, const char *fixture)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.xml", dir, host);
	unlink(path);
	assert_int_equal(symlink(test_data_path(fixture), path), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/dtplan-inv.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* prefix1 .. prefixN, numbers padded to width digits */
static char (*names(size_t n, const char *prefix, int width))[64]
{
	char(*h)[64] = calloc(n, sizeof(*h));

	assert_non_null(h);
	for (size_t i = 0; i < n; i++)
		snprintf(h[i], sizeof(h[i]), "%s%0*d", prefix, width, (int)i + 1);
	return h;
}

/* 8 hosts of node_xml=DIR/%n.xml: 7 HGX and one PCIe node: two records; a
 * host whose file is missing takes the reference host's record. */
static void assemble__node_xml_pattern__records_shared(void **state)
{
	char(*hosts)[64] = names(9, "node", 1), pattern[300];
	struct dtplan_inventory_opts o = {0};
	struct dtplan_inventory *inv = NULL;
	struct dtplan_error err = {0};

	(void)state;
	for (int i = 1; i <= 8; i++) {
		char h[16];

		snprintf(h, sizeof(h), "node%d", i);
		link_xml(h, i == 6 ? "pcie-4gpu.xml" : "hgx-h100-8gpu.xml");
	}
	snprintf(pattern, sizeof(pattern), "%s/%%n.xml", dir);
	o.n_hosts = 9;
	o.hosts = (const char(*)[64])hosts;
	o.node_xml = pattern;
	o.assume_like = "node1";
	o.assumed_why = " (no file)";
	assert_int_equal(dtplan_inventory_assemble(&o, &inv, &err), DTPLAN_OK);
	assert_int_equal(inv->n_records, 2);
	assert_int_equal(inv->n_assumed, 1);
	for (int i = 0; i < 9; i++) {
		int want = i == 5 ? 1 : 0;

		assert_int_equal(inv->host_record[i], want);
		assert_int_equal(inv->origin[i], i == 8 ? DTPLAN_INV_ASSUMED : DTPLAN_INV_NODE_XML);
	}
	assert_int_equal(inv->records[0].n_gpus, 8);
	assert_int_equal(inv->records[1].n_gpus, 4);
	assert_string_equal(inv->records[0].hostname, "");
	assert_string_equal(inv->assumed_like, "node1");
	assert_string_equal(inv->assumed_from, "node_xml");
	dtplan_inventory_destroy(inv);
	free(hosts);
}

/* The measurement comes before node_xml=; hosts it lacks fall through. */
static void assemble__measured_first_then_pattern(void **state)
{
	char(*hosts)[64] = names(4, "node", 1), pattern[300];
	struct dtplan_inventory_opts o = {0};
	struct dtplan_inventory *inv = NULL;
	struct dtplan_measure_file f = {0};
	struct dtplan_node rec[1];
	int32_t map[4] = {0, 0, -1, 0};

	(void)state;
	link_xml("node3", "pcie-4gpu.xml");
	link_xml("node1", "pcie-4gpu.xml"); /* not read: the measurement has node1 */
	assert_int_equal(dtplan_node_from_xml(test_data_path("hgx-h100-8gpu.xml"), &rec[0], NULL),
			 DTPLAN_OK);
	f.m = dtplan_measurements_create(4, (const char(*)[64])hosts);
	f.n_records = 1;
	f.records = rec;
	f.host_record = map;
	snprintf(pattern, sizeof(pattern), "%s/%%n.xml", dir);
	o.n_hosts = 4;
	o.hosts = (const char(*)[64])hosts;
	o.measured = &f;
	o.node_xml = pattern;
	assert_int_equal(dtplan_inventory_assemble(&o, &inv, NULL), DTPLAN_OK);
	assert_int_equal(inv->n_measured, 3);
	assert_int_equal(inv->origin[0], DTPLAN_INV_MEASURED);
	assert_int_equal(inv->origin[2], DTPLAN_INV_NODE_XML);
	assert_int_equal(inv->records[inv->host_record[0]].n_gpus, 8);
	assert_int_equal(inv->records[inv->host_record[2]].n_gpus, 4);
	assert_int_equal(inv->n_assumed, 0);
	dtplan_inventory_destroy(inv);
	dtplan_measurements_destroy(f.m);
	free(hosts);
}

/* 16,384 equal nodes measured: one record for all of them. */
static void assemble__16384_equal_nodes__one_record(void **state)
{
	char(*hosts)[64] = names(16384, "gpu", 5);
	struct dtplan_inventory_opts o = {0};
	struct dtplan_inventory *inv = NULL;
	struct dtplan_measure_file f = {0};
	struct dtplan_node rec[2];
	int32_t *map = malloc(16384 * sizeof(*map));

	(void)state;
	assert_non_null(map);
	assert_int_equal(dtplan_node_from_xml(test_data_path("hgx-h100-8gpu.xml"), &rec[0], NULL),
			 DTPLAN_OK);
	rec[1] = rec[0];
	snprintf(rec[1].note, sizeof(rec[1].note), "another source, the same hardware");
	for (int i = 0; i < 16384; i++)
		map[i] = i % 2;
	f.m = dtplan_measurements_create(16384, (const char(*)[64])hosts);
	f.n_records = 2;
	f.records = rec;
	f.host_record = map;
	o.n_hosts = 16384;
	o.hosts = (const char(*)[64])hosts;
	o.measured = &f;
	assert_int_equal(dtplan_inventory_assemble(&o, &inv, NULL), DTPLAN_OK);
	assert_int_equal(inv->n_records, 1);
	assert_int_equal(inv->n_measured, 16384);
	assert_int_equal(inv->host_record[16383], 0);
	dtplan_inventory_destroy(inv);
	dtplan_measurements_destroy(f.m);
	free(map);
	free(hosts);
}

/* Files named for hosts (the CLI), their errors, and the plan's warning. */
static void assemble__files_and_the_warning(void **state)
{
	char(*hosts)[64] = names(4, "gpu", 2);
	struct dtplan_inventory_file files[2] = {
		{"gpu[01-02]", NULL, false, "--node-xml"},
		{"gpu09", NULL, false, "--node-xml"},
	};
	struct dtplan_inventory_opts o = {0};
	struct dtplan_inventory *inv = NULL;
	struct dtplan_error err = {0};
	struct dtplan_request req;
	struct dtplan_cluster cl = {0};
	struct dtplan_plan *p = NULL;
	char xml[4096];
	bool found = false;

	(void)state;
	snprintf(xml, sizeof(xml), "%s", test_data_path("hgx-h100-8gpu.xml"));
	files[0].path = files[1].path = xml;
	o.n_hosts = 4;
	o.hosts = (const char(*)[64])hosts;
	o.files = files;
	o.n_files = 2;
	o.assumed_why = "";
	assert_int_equal(dtplan_inventory_assemble(&o, &inv, &err), DTPLAN_ERR_INVAL);
	assert_null(inv);
	assert_string_equal(err.source, "--node-xml");
	assert_non_null(strstr(err.text, "host 'gpu09' of 'gpu09' is not in --nodes"));
	o.n_files = 1;
	assert_int_equal(dtplan_inventory_assemble(&o, &inv, &err), DTPLAN_OK);
	assert_int_equal(inv->n_assumed, 2);
	assert_string_equal(inv->assumed_like, "gpu01");
	dtplan_request_init(&req);
	assert_int_equal(dtplan_model_parse("llama3-8b", &req.model, NULL), DTPLAN_OK);
	dtplan_inventory_cluster(inv, &cl);
	assert_int_equal(dtplan_plan_create(&req, &cl, &p, &err), DTPLAN_OK);
	assert_int_equal(dtplan_inventory_note(inv, p), DTPLAN_OK);
	for (size_t i = 0; i < p->n_warnings; i++)
		if (strcmp(p->warnings[i].code, "assumed-nodes") == 0) {
			char want[4300];

			snprintf(want, sizeof(want),
				 "2 of 4 nodes (gpu[03-04]) have no inventory: assumed equal to "
				 "gpu01 (%s)",
				 xml);
			assert_string_equal(p->warnings[i].message, want);
			found = true;
		}
	assert_true(found);
	dtplan_plan_destroy(p);
	dtplan_inventory_destroy(inv);
	/* an unreadable file is an error naming it */
	files[0].path = "/nonexistent.xml";
	assert_int_equal(dtplan_inventory_assemble(&o, &inv, &err), DTPLAN_ERR_IO);
	assert_string_equal(err.source, "/nonexistent.xml");
	free(hosts);
}

/* This node is discovered live when nothing else describes it; when that
 * fails, the error says so. */
static void assemble__self_live__or_cannot_discover(void **state)
{
	char(*hosts)[64] = names(2, "node", 1);
	struct dtplan_inventory_opts o = {0};
	struct dtplan_inventory *inv = NULL;
	struct dtplan_error err = {0};

	(void)state;
	o.n_hosts = 2;
	o.hosts = (const char(*)[64])hosts;
	o.self = "node2";
	o.timeout_s = 30;
	o.assume_like = "node2";
	setenv("HWLOC_XMLFILE", test_data_path("pcie-4gpu.xml"), 1);
	assert_int_equal(dtplan_inventory_assemble(&o, &inv, &err), DTPLAN_OK);
	assert_int_equal(inv->origin[1], DTPLAN_INV_LIVE);
	assert_int_equal(inv->records[inv->host_record[1]].n_gpus, 4);
	assert_int_equal(inv->origin[0], DTPLAN_INV_ASSUMED);
	assert_string_equal(inv->assumed_from, "live");
	dtplan_inventory_destroy(inv);
	setenv("HWLOC_XMLFILE", test_data_path("garbage.xml"), 1);
	assert_int_not_equal(dtplan_inventory_assemble(&o, &inv, &err), DTPLAN_OK);
	assert_non_null(strstr(err.text, "cannot discover node node2: "));
	unsetenv("HWLOC_XMLFILE");
	free(hosts);
}

static void node_xml__pattern__expanded_and_checked(void **state)
{
	char buf[64];
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_inventory_node_xml("/x/%n.xml", "gpu07", buf, sizeof(buf), NULL),
			 DTPLAN_OK);
	assert_string_equal(buf, "/x/gpu07.xml");
	assert_int_equal(dtplan_inventory_node_xml("/x/%n/%n-100%%.xml", "a", buf, sizeof(buf),
						   NULL),
			 DTPLAN_OK);
	assert_string_equal(buf, "/x/a/a-100%.xml");
	assert_int_equal(dtplan_inventory_node_xml("/x/%n.xml", "../etc", buf, sizeof(buf), &err),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_inventory_node_xml("/x/%n.xml", "..", buf, sizeof(buf), &err),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_inventory_node_xml("/a-very-long-folder-name/%n/%n/%n.xml",
						   "node-with-a-long-name", buf, sizeof(buf), &err),
			 DTPLAN_ERR_RANGE);
	assert_string_equal(dtplan_inventory_origin_name(DTPLAN_INV_MEASURED), "measured");
	assert_string_equal(dtplan_inventory_origin_name(99), "?");
}

/* The warning codes of p in order, "a,b,..". */
static void codes(const struct dtplan_plan *p, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < p->n_warnings; i++)
		if (strcmp(p->warnings[i].code, "assumed-nodes") == 0 ||
		    strcmp(p->warnings[i].code, "fabric-service") == 0)
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? "," : "",
				 p->warnings[i].code);
}

/* The request both callers would make: the effective settings, llama3-8b. */
static enum dtplan_err llama_request(void *arg, const struct dtplan_config *c,
				     struct dtplan_request *req, struct dtplan_error *err)
{
	const struct dtplan_config **seen = arg;

	*seen = c;
	dtplan_request_init(req);
	dtplan_request_apply_config(req, c);
	return dtplan_model_parse("llama3-8b", &req->model, err);
}

/*
 * One allocation, both ways: the site file's switch settings reach the
 * tree topology.conf gives, hosts without a file are assumed, the fabric's
 * fault is the "fabric-service" warning naming topology.conf, after the
 * "assumed-nodes" one; a topology.conf that does not read is the CLI's
 * error (at the topology step) and the plugin's degraded plan without a
 * switch tree.
 */
static void allocation__strict_or_degrading(void **state)
{
	char(*hosts)[64] = names(8, "node", 1), xml[4096], site_path[4096], topo[4096], bad[4096],
	got[128];
	struct dtplan_inventory_file file = {"node1", NULL, false, "--node-xml"};
	struct dtplan_fabric_fetch fab = {.origin = DTPLAN_FABRIC_ORIGIN_NONE};
	struct dtplan_config site;
	struct dtplan_error err = {0};

	(void)state;
	snprintf(xml, sizeof(xml), "%s", test_data_path("hgx-h100-8gpu.xml"));
	snprintf(site_path, sizeof(site_path), "%s", test_data_path("dtplan-two-racks.conf"));
	snprintf(topo, sizeof(topo), "%s", test_data_path("topology-two-leaves.conf"));
	snprintf(bad, sizeof(bad), "%s", test_data_path("topology-bad-cycle.conf"));
	file.path = xml;
	snprintf(fab.warning, sizeof(fab.warning), "fabric service http://x/: down");
	dtplan_config_init(&site);
	assert_int_equal(dtplan_config_parse_file(&site, site_path, &err), DTPLAN_OK);
	for (int strict = 0; strict <= 1; strict++)
		for (int good = 0; good <= 1; good++) {
			struct dtplan_inventory_opts o = {0};
			struct dtplan_allocation_in in = {0};
			const struct dtplan_config *seen = NULL;
			struct dtplan_allocation a;
			struct dtplan_request req;
			struct dtplan_plan *p = NULL;
			enum dtplan_err rv;

			o.n_hosts = 8;
			o.hosts = (const char(*)[64])hosts;
			o.files = &file;
			o.n_files = 1;
			o.assumed_why = "";
			in.strict = strict;
			in.site = &site;
			in.fabric = &fab;
			in.request = llama_request;
			in.topology = good ? topo : bad;
			in.nodes = &o;
			in.arg = &seen;
			dtplan_request_init(&req);
			dtplan_allocation_init(&a);
			rv = dtplan_allocation_plan(&a, &in, &req, &p, &err);
			assert_ptr_equal(a.base, &site);
			assert_ptr_equal(seen, &site);
			if (strict && !good) {
				/* the CLI: the file's own error */
				assert_int_not_equal(rv, DTPLAN_OK);
				assert_null(p);
				assert_int_equal(a.step, DTPLAN_ALLOC_TOPOLOGY);
				assert_string_equal(err.source, bad);
				dtplan_allocation_fini(&a);
				continue;
			}
			assert_int_equal(rv, DTPLAN_OK);
			assert_int_equal(a.step, DTPLAN_ALLOC_DONE);
			assert_int_equal(a.cluster.n_hosts, 8);
			assert_ptr_equal(a.cluster.config, &a.config);
			if (good) {
				/* leaf1's Oversubscription=4:1 from the site file */
				int k = dtplan_topology_switch_index(a.cluster.topology, "leaf1");

				assert_true(k >= 0);
				assert_true(a.cluster.topology->switches[k].oversubscription ==
					    4.0);
			} else {
				assert_null(a.cluster.topology);
			}
			/* one order for both: the nodes, then the fabric */
			codes(p, got, sizeof(got));
			assert_string_equal(got, "assumed-nodes,fabric-service");
			for (size_t i = 0; i < p->n_warnings; i++) {
				char want[8300];

				if (strcmp(p->warnings[i].code, "fabric-service") != 0)
					continue;
				if (good)
					snprintf(want, sizeof(want), "%s; using topology.conf %s",
						 fab.warning, topo);
				else
					snprintf(want, sizeof(want),
						 "%s; planning without a switch tree", fab.warning);
				assert_string_equal(p->warnings[i].message, want);
			}
			assert_int_equal(p->degraded, !good);
			if (!good) {
				assert_non_null(strstr(p->degraded_reason, "topology "));
				assert_non_null(strstr(p->degraded_reason, bad));
			}
			dtplan_plan_destroy(p);
			dtplan_allocation_fini(&a);
		}
	dtplan_config_fini(&site);
	free(hosts);
}

/* What the plugin-like callbacks below saw, in order. */
struct seen_calls {
	char calls[256];
	bool off; /* the request says calibration=off */
};

static enum dtplan_err job_request(void *arg, const struct dtplan_config *c,
				   struct dtplan_request *req, struct dtplan_error *err)
{
	struct seen_calls *s = arg;

	strcat(s->calls, "request,");
	dtplan_request_init(req);
	dtplan_request_apply_config(req, c);
	if (s->off && dtplan_request_parse_train(req, "calibration=off", err) != DTPLAN_OK)
		return err->code;
	return dtplan_model_parse("llama3-8b", &req->model, err);
}

static int job_calibrate(void *arg, struct dtplan_calibration *cal)
{
	struct seen_calls *s = arg;

	(void)cal;
	strcat(s->calls, "calibrate,");
	return -1;
}

static void job_warn(void *arg, const char *text)
{
	struct seen_calls *s = arg;

	assert_non_null(strstr(text, "MTBF=slurm: /nonexistent/mtbf.json"));
	strcat(s->calls, "warn,");
}

/*
 * The plugin's way: this host's inventory gives the GPUs per node (Slurm
 * said none), the request's count becomes the allocation's; MTBF=slurm's
 * fault is said before the records are asked, and calibration=off asks
 * none.  A host outside the allocation, with no count from Slurm, is "the
 * job has no GPUs" at the GPUs' step.
 */
static void allocation__self_gpus_mtbf_then_calibration(void **state)
{
	char(*hosts)[64] = names(4, "node", 1), xml[4096];
	struct dtplan_inventory_file file = {"node1", NULL, false, "--node-xml"};
	struct dtplan_config site;

	(void)state;
	snprintf(xml, sizeof(xml), "%s", test_data_path("hgx-h100-8gpu.xml"));
	file.path = xml;
	dtplan_config_init(&site);
	snprintf(site.mtbf_from, sizeof(site.mtbf_from), "slurm");
	snprintf(site.mtbf_cache, sizeof(site.mtbf_cache), "/nonexistent/mtbf.json");
	for (int k = 0; k < 3; k++) {
		struct dtplan_inventory_opts o = {0};
		struct dtplan_allocation_in in = {0};
		struct seen_calls seen = {.off = k == 1};
		struct dtplan_allocation a;
		struct dtplan_request req;
		struct dtplan_error err = {0};
		struct dtplan_plan *p = NULL;
		enum dtplan_err rv;

		o.n_hosts = 4;
		o.hosts = (const char(*)[64])hosts;
		o.files = &file;
		o.n_files = 1;
		o.assumed_why = "";
		in.site = &site;
		in.request = job_request;
		in.site_files = true;
		in.nodes = &o;
		in.self = k == 2 ? "elsewhere" : "node3";
		in.calibrate = job_calibrate;
		in.warn = job_warn;
		in.arg = &seen;
		dtplan_request_init(&req);
		req.gpus = 5;
		dtplan_allocation_init(&a);
		rv = dtplan_allocation_plan(&a, &in, &req, &p, &err);
		if (k == 2) {
			assert_int_equal(rv, DTPLAN_ERR_INVAL);
			assert_int_equal(a.step, DTPLAN_ALLOC_GPUS);
			assert_string_equal(err.text, "the job has no GPUs");
			assert_null(p);
			assert_string_equal(seen.calls, "request,");
		} else {
			assert_int_equal(rv, DTPLAN_OK);
			assert_int_equal(req.gpus_per_node, 8);
			assert_int_equal(req.gpus, 0);
			assert_int_equal(p->request.gpus, 32);
			assert_string_equal(seen.calls,
					    k == 1 ? "request,warn," : "request,warn,calibrate,");
		}
		dtplan_plan_destroy(p);
		dtplan_allocation_fini(&a);
	}
	dtplan_config_fini(&site);
	free(hosts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(assemble__node_xml_pattern__records_shared),
		cmocka_unit_test(assemble__measured_first_then_pattern),
		cmocka_unit_test(assemble__16384_equal_nodes__one_record),
		cmocka_unit_test(assemble__files_and_the_warning),
		cmocka_unit_test(assemble__self_live__or_cannot_discover),
		cmocka_unit_test(node_xml__pattern__expanded_and_checked),
		cmocka_unit_test(allocation__strict_or_degrading),
		cmocka_unit_test(allocation__self_gpus_mtbf_then_calibration),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, setup, teardown);
}
