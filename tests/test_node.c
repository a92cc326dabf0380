/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_node.c: node discovery (probes/node.c, probes/nvml.c) and the node
 * inventory JSON (lib/json/node_json.c).
 *
 * The project's own fixtures (tests/data, made by gen_hwloc_xml.py) always
 * run; the shared real-machine fixtures run when DTPLAN_FIXTURES has them.
 * Bandwidths: hwloc distances are in MB/s, so 450000 MB/s = 4.5e11 B/s.
 */
#include "test_common.h"

#include "dtprobes.h"
#include "probes_private.h"
#include "hwloc_expect.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct dtplan_node node;

static const char *data(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s", test_data_path(name));
	return path;
}

static void load_ok(const char *path)
{
	struct dtplan_error err = {0};
	enum dtplan_err rc = dtplan_node_from_xml(path, &node, &err);

	if (rc != DTPLAN_OK)
		fail_msg("%s: %s: %s", path, dtplan_strerror(rc), err.text);
}

/* Number of distinct NICs assigned to GPUs. */
static int distinct_gpu_nics(const struct dtplan_node *n)
{
	int count = 0;

	for (int i = 0; i < n->n_gpus; i++) {
		bool seen = false;

		if (n->gpus[i].nic < 0)
			continue;
		for (int j = 0; j < i; j++)
			if (n->gpus[j].nic == n->gpus[i].nic)
				seen = true;
		if (!seen)
			count++;
	}
	return count;
}

static int largest_domain(const struct dtplan_node *n)
{
	int best = 0;

	for (int d = 0; d < n->n_domains; d++)
		if (n->domains[d].n_gpus > best)
			best = n->domains[d].n_gpus;
	return best;
}

/* ------------------------------------------------------------------------
 * Own fixtures
 * ---------------------------------------------------------------------- */

static void node_from_xml__hgx_fixture__one_domain_eight_rails(void **state)
{
	char name[32];

	(void)state;
	load_ok(data("hgx-h100-8gpu.xml"));
	assert_string_equal(node.hostname, "hgx01");
	assert_string_equal(node.source, "xml");
	assert_string_equal(node.note, "");
	assert_int_equal(node.cores, 16); /* 2 packages x 8 cores */
	assert_int_equal(node.numa_nodes, 2);
	assert_int_equal(node.n_gpus, 8);
	assert_int_equal(node.n_nics, 8);
	assert_int_equal(node.n_domains, 1);
	assert_int_equal(node.domains[0].n_gpus, 8);
	/* 4 switch links of 112500 MB/s per GPU, merged: 450000 MB/s. */
	assert_near(node.domains[0].bandwidth_bytes_per_s, 4 * 112500 * 1e6, 1);
	assert_string_equal(node.domains[0].fabric_id, "");
	for (int i = 0; i < 8; i++) {
		const struct dtplan_node_gpu *g = &node.gpus[i];

		assert_string_equal(g->vendor, "nvidia");
		assert_string_equal(g->model, "NVIDIA H100 80GB HBM3");
		snprintf(name, sizeof(name), "nvml%d", i);
		assert_string_equal(g->os_name, name);
		assert_int_equal(g->numa, i < 4 ? 0 : 1);
		assert_int_equal(g->domain, 0);
		assert_int_equal(node.domains[0].gpus[i], i);
		/* GPU i shares its PCIe switch with mlx5_i. */
		dt_assert_in_range(g->nic, 0, 7);
		snprintf(name, sizeof(name), "mlx5_%d", i);
		assert_string_equal(node.nics[g->nic].name, name);
		assert_int_equal(node.nics[g->nic].kind, DTPLAN_NIC_INFINIBAND);
		assert_int_equal(node.nics[g->nic].numa, i < 4 ? 0 : 1);
	}
	/* bus 0x18 + 0x20*i + 3 for the GPU, + 2 for the NIC */
	assert_string_equal(node.gpus[0].pci_bus_id, "0000:1b:00.0");
	assert_string_equal(node.gpus[7].pci_bus_id, "0000:fb:00.0");
	assert_string_equal(node.nics[0].pci_bus_id, "0000:1a:00.0");
}

static void node_from_xml__pcie_fixture__lone_gpus_roce_bmc_skipped(void **state)
{
	(void)state;
	load_ok(data("pcie-4gpu.xml"));
	assert_string_equal(node.hostname, "pcie01");
	assert_int_equal(node.n_gpus, 4); /* the ASPEED VGA is not a GPU */
	assert_int_equal(node.n_domains, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(node.gpus[i].domain, i);
		assert_int_equal(node.domains[i].n_gpus, 1);
		assert_true(node.domains[i].bandwidth_bytes_per_s == 0);
		assert_string_equal(node.gpus[i].model, "AD102GL [L40S]");
		assert_string_equal(node.gpus[i].os_name, i < 2 ? (i == 0 ? "card1" : "card2")
								: (i == 2 ? "card3" : "card4"));
	}
	assert_int_equal(node.n_nics, 2);
	assert_string_equal(node.nics[0].name, "mlx5_0");
	assert_int_equal(node.nics[0].kind, DTPLAN_NIC_ROCE); /* LID 0 */
	assert_int_equal(node.nics[1].kind, DTPLAN_NIC_ROCE);
	/* Same host bridge: GPUs 0,1 -> mlx5_0, GPUs 2,3 -> mlx5_1. */
	assert_int_equal(node.gpus[0].nic, 0);
	assert_int_equal(node.gpus[1].nic, 0);
	assert_int_equal(node.gpus[2].nic, 1);
	assert_int_equal(node.gpus[3].nic, 1);
}

static void node_from_xml__cpu_fixture__no_gpu_omnipath(void **state)
{
	(void)state;
	load_ok(data("cpu-only.xml"));
	assert_int_equal(node.n_gpus, 0); /* Matrox BMC VGA not counted */
	assert_int_equal(node.n_domains, 0);
	assert_int_equal(node.n_nics, 1);
	assert_string_equal(node.nics[0].name, "hfi1_0");
	assert_int_equal(node.nics[0].kind, DTPLAN_NIC_OMNIPATH);
	assert_string_equal(node.note, ""); /* PCI devices were exported */
	assert_int_equal(node.cores, 8);
}

/* Issue 13, finding 19: hwloc counts -1 PUs when PUs sit at two depths; the
 * inventory said "cores": -1, which its own JSON reader then refused. */
static void node_from_xml__pu_count_unknown__cores_from_cpuset(void **state)
{
	struct dtplan_node back;
	struct dtplan_error err = {0};
	char *json = NULL;

	(void)state;
	if (DT_HWLOC_REJECTS_INCOMPLETE_SETS) {
		/* hwloc 2.14+: a PU without its sets is refused, the file named */
		assert_int_equal(dtplan_node_from_xml(data("pu-nested.xml"), &node, &err),
				 DTPLAN_ERR_PARSE);
		assert_string_equal(err.source, data("pu-nested.xml"));
		assert_non_null(strstr(err.text, "not a valid hwloc XML topology"));
		return;
	}
	load_ok(data("pu-nested.xml"));
	assert_int_equal(node.cores, 2); /* cpuset 0x3: two PUs */
	assert_int_equal(node.numa_nodes, 1);
	assert_int_equal(dtplan_node_to_json(&node, false, &json, &err), DTPLAN_OK);
	assert_int_equal(dtplan_node_from_json(json, &back, &err), DTPLAN_OK);
	assert_int_equal(back.cores, 2);
	free(json);
}

static void node_from_xml__broken_files__errors(void **state)
{
	static const struct {
		const char *file;
		enum dtplan_err code;
	} cases[] = {
		{"truncated.xml", DTPLAN_ERR_PARSE},
		{"garbage.xml", DTPLAN_ERR_PARSE},
		{"no-such-file.xml", DTPLAN_ERR_IO},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_error err = {0};
		const char *path = data(cases[i].file);

		assert_int_equal(dtplan_node_from_xml(path, &node, &err), cases[i].code);
		assert_int_equal(err.code, cases[i].code);
		assert_string_equal(err.source, path);
	}
}

static char tmpdir[256];

static void node_from_xml__malformed_or_not_a_file__errors(void **state)
{
	static const struct {
		const char *text;
		enum dtplan_err code;
		const char *says;
	} cases[] = {
		{"", DTPLAN_ERR_PARSE, "does not start with '<'"},
		{"   \n", DTPLAN_ERR_PARSE, "does not start with '<'"},
		{"<topology version=\"2.0\">\n", DTPLAN_ERR_PARSE, "truncated"},
		{"<topology version=\"2.0\">\n<object type=\"Machine\" bogus\n</topology>\n",
		 DTPLAN_ERR_PARSE, "malformed"},
	};
	struct dtplan_error err = {0};
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/bad.xml", tmpdir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(cases[i].text, f);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(dtplan_node_from_xml(path, &node, &err), cases[i].code);
		if (strstr(err.text, cases[i].says) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text, cases[i].says);
		assert_string_equal(err.source, path);
	}
	unlink(path);
	assert_int_equal(dtplan_node_from_xml(tmpdir, &node, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "not a regular file"));
}

static void node_from_xml__null_args__inval(void **state)
{
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_node_from_xml(NULL, &node, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_from_xml("", &node, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_from_xml(data("hgx-h100-8gpu.xml"), NULL, &err),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_discover(NULL, NULL, &err), DTPLAN_ERR_INVAL);
}

/* ------------------------------------------------------------------------
 * Shared real-machine fixtures
 * ---------------------------------------------------------------------- */

static const struct fixture_case {
	const char *file;
	int gpus;
	int domains;
	int largest;        /* GPUs in the largest domain */
	int distinct_nics;  /* distinct NICs nearest to some GPU, -1: not checked */
	bool note;          /* the "not exported" note */
	const char *vendor; /* vendor of GPU 0, NULL without GPUs */
} fixture_cases[] = {
	{"hwloc/synthetic-hgx-h100-8gpu-nvswitch.xml", 8, 1, 8, 8, false, "nvidia"},
	{"hwloc/nvidia-dgx2h-16xv100-nvswitch.xml", 16, 1, 16, 0, false, "nvidia"},
	{"hwloc/dell-xe8640-4xh100-sxm5-ndr.xml", 4, 1, 4, -1, false, "nvidia"},
	{"hwloc/lenovo-sd665nv3-4xh200-nvml.xml", 4, 1, 4, 4, false, "nvidia"},
	{"hwloc/aws-g4dn-metal-8xt4-pcie.xml", 8, 8, 1, -1, false, "nvidia"},
	{"hwloc/hpe-ex235a-tioga-mi250x-8gcd-slingshot.xml", 8, 1, 8, 4, false, "amd"},
	{"hwloc/cpu-llnl-quartz-2xbroadwell-opa.xml", 0, 0, 0, 0, false, NULL},
	{"hwloc/quanta-gh200-cpu-only-no-io.xml", 0, 0, 0, 0, true, NULL},
	{"hwloc/hp-sl390s-3xm2070-pcie-pci-only.xml", 3, 3, 1, -1, false, "nvidia"},
	{"hwloc/v1/workstation-gtx1070-plus-vega.v1-by-hwloc1.11.xml", 2, 2, 1, -1, false,
	 "nvidia"},
};

static void node_from_xml__shared_fixtures__expected_shape(void **state)
{
	int ran = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(fixture_cases) / sizeof(fixture_cases[0]); i++) {
		const struct fixture_case *c = &fixture_cases[i];
		const char *path = test_fixture_path(c->file);

		if (path == NULL)
			continue;
		ran++;
		load_ok(path);
		if (node.n_gpus != c->gpus || node.n_domains != c->domains ||
		    largest_domain(&node) != c->largest)
			fail_msg("%s: %d GPUs, %d domains, largest %d; expected %d, %d, %d",
				 c->file, node.n_gpus, node.n_domains, largest_domain(&node),
				 c->gpus, c->domains, c->largest);
		if (c->distinct_nics >= 0 && distinct_gpu_nics(&node) != c->distinct_nics)
			fail_msg("%s: %d distinct nearest NICs, expected %d", c->file,
				 distinct_gpu_nics(&node), c->distinct_nics);
		assert_int_equal(node.note[0] != '\0', c->note);
		if (c->vendor != NULL)
			assert_string_equal(node.gpus[0].vendor, c->vendor);
	}
	if (ran == 0)
		skip();
}

static void node_from_xml__shared_details__bandwidth_kinds_vendors(void **state)
{
	const char *p;
	int ran = 0;

	(void)state;
	if ((p = test_fixture_path("hwloc/synthetic-hgx-h100-8gpu-nvswitch.xml")) != NULL) {
		ran++;
		load_ok(p);
		/* merge + closure: all-to-all at 450000 MB/s */
		assert_near(node.domains[0].bandwidth_bytes_per_s, 450000e6, 1);
		assert_int_equal(node.nics[node.gpus[0].nic].kind, DTPLAN_NIC_INFINIBAND);
	}
	if ((p = test_fixture_path("hwloc/dell-xe8640-4xh100-sxm5-ndr.xml")) != NULL) {
		ran++;
		load_ok(p);
		/* direct links, no switch: 3 peers x 150000 MB/s */
		assert_near(node.domains[0].bandwidth_bytes_per_s, 3 * 150000e6, 1);
	}
	if ((p = test_fixture_path("hwloc/lenovo-sd665nv3-4xh200-nvml.xml")) != NULL) {
		ran++;
		load_ok(p);
		for (int i = 0; i < node.n_gpus; i++) {
			assert_true(node.gpus[i].nic >= 0);
			assert_int_equal(node.nics[node.gpus[i].nic].kind, DTPLAN_NIC_INFINIBAND);
		}
		for (int k = 0; k < node.n_nics; k++)
			if (strcmp(node.nics[k].name, "mlx5_1") == 0)
				assert_int_equal(node.nics[k].kind, DTPLAN_NIC_ROCE); /* LID 0 */
	}
	if ((p = test_fixture_path("hwloc/hpe-ex235a-tioga-mi250x-8gcd-slingshot.xml")) != NULL) {
		ran++;
		load_ok(p);
		/* XGMIBandwidth: 7 peers x 100000 MB/s */
		assert_near(node.domains[0].bandwidth_bytes_per_s, 7 * 100000e6, 1);
		assert_int_equal(node.nics[node.gpus[0].nic].kind, DTPLAN_NIC_SLINGSHOT);
		/* ROCm SMI's VRAM of one GCD (KiB); an MI250X in the catalog */
		assert_true(node.gpus[0].memory_bytes == 67092480.0 * 1024);
		assert_string_equal(dtplan_gpu_match(node.gpus[0].model, 0)->name, "mi250x");
	}
	if ((p = test_fixture_path("hwloc/aws-g4dn-metal-8xt4-pcie.xml")) != NULL) {
		ran++;
		load_ok(p);
		assert_int_equal(node.nics[0].kind, DTPLAN_NIC_EFA);
		assert_true(node.domains[0].bandwidth_bytes_per_s == 0);
		/* issue 13, finding 20: CUDA's memory size (KiB), the model by name */
		assert_string_equal(node.gpus[0].model, "Tesla T4");
		assert_true(node.gpus[0].memory_bytes == 15472384.0 * 1024);
		assert_null(dtplan_gpu_match(node.gpus[0].model, node.gpus[0].memory_bytes));
	}
	if ((p = test_fixture_path("hwloc/cpu-llnl-quartz-2xbroadwell-opa.xml")) != NULL) {
		ran++;
		load_ok(p);
		assert_int_equal(node.nics[0].kind, DTPLAN_NIC_OMNIPATH);
	}
	if ((p = test_fixture_path("hwloc/v1/workstation-gtx1070-plus-vega.v1-by-hwloc1.11.xml")) !=
	    NULL) {
		ran++;
		load_ok(p);
		assert_string_equal(node.gpus[0].vendor, "nvidia");
		assert_string_equal(node.gpus[1].vendor, "amd");
	}
	if (ran == 0)
		skip();
}

/* ------------------------------------------------------------------------
 * Discovery sources, cache, bounded child
 * ---------------------------------------------------------------------- */

static int make_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dtplan-test-node.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int remove_tmpdir(void **state)
{
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/myhost.xml", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cached.xml", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	unsetenv("HWLOC_XMLFILE");
	return 0;
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[8192];
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void node_discover__each_source__source_named(void **state)
{
	struct dtplan_discover_opts o = {0};
	struct dtplan_error err = {0};
	char path[512];

	(void)state;
	/* xml_path wins */
	o.xml_path = data("cpu-only.xml");
	o.cache_dir = tmpdir;
	o.hostname = "myhost";
	assert_int_equal(dtplan_node_discover(&o, &node, &err), DTPLAN_OK);
	assert_string_equal(node.source, "xml");
	assert_int_equal(node.n_gpus, 0);

	/* cache_dir/<hostname>.xml next */
	snprintf(path, sizeof(path), "%s/myhost.xml", tmpdir);
	copy_file(data("pcie-4gpu.xml"), path);
	o.xml_path = NULL;
	assert_int_equal(dtplan_node_discover(&o, &node, &err), DTPLAN_OK);
	assert_string_equal(node.source, "cache");
	assert_int_equal(node.n_gpus, 4);
	unlink(path);

	/* live, through HWLOC_XMLFILE as the Slurm tests run it */
	assert_int_equal(setenv("HWLOC_XMLFILE", data("hgx-h100-8gpu.xml"), 1), 0);
	assert_int_equal(dtplan_node_discover(&o, &node, &err), DTPLAN_OK);
	assert_string_equal(node.source, "live");
	assert_int_equal(node.n_gpus, 8);
	assert_int_equal(node.n_domains, 1);
	assert_string_equal(node.hostname, "hgx01"); /* from the XML's HostName */
	unsetenv("HWLOC_XMLFILE");
}

static void node_discover__cache_is_broken__parse_error(void **state)
{
	struct dtplan_discover_opts o = {.cache_dir = tmpdir, .hostname = "myhost"};
	struct dtplan_error err = {0};
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/myhost.xml", tmpdir);
	copy_file(data("truncated.xml"), path);
	assert_int_equal(dtplan_node_discover(&o, &node, &err), DTPLAN_ERR_PARSE);
	assert_string_equal(err.source, path);
	unlink(path);
}

/* Issue 13, finding 4: a FIFO as the node XML or as a cache entry blocked
 * fopen() forever (slurmstepd in user_init); /dev/zero was read whole. */
static void node_from_xml__fifo_device_link__refused_without_blocking(void **state)
{
	struct dtplan_discover_opts o = {.cache_dir = tmpdir, .hostname = "myhost"};
	struct dtplan_error err = {0};
	char path[512];

	(void)state;
	alarm(test_bound_s(20));
	snprintf(path, sizeof(path), "%s/myhost.xml", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(dtplan_node_from_xml(path, &node, &err), DTPLAN_ERR_IO);
	assert_string_equal(err.source, path);
	assert_non_null(strstr(err.text, "is a FIFO (named pipe), not a regular file"));
	assert_int_equal(dtplan_node_discover(&o, &node, &err), DTPLAN_ERR_IO);
	assert_string_equal(err.source, path);
	assert_non_null(strstr(err.text, "is a FIFO"));
	unlink(path);
	assert_int_equal(dtplan_node_from_xml("/dev/zero", &node, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "is a character device, not a regular file"));
	/* a link is followed for a file the user names, never in the cache */
	assert_int_equal(symlink(data("pcie-4gpu.xml"), path), 0);
	assert_int_equal(dtplan_node_from_xml(path, &node, &err), DTPLAN_OK);
	assert_int_equal(node.n_gpus, 4);
	assert_int_equal(dtplan_node_discover(&o, &node, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "is a symbolic link, which is not followed for a "
					 "cached hwloc XML file"));
	unlink(path);
	alarm(0);
}

/* Writes text to path with the first `from` replaced by `to`. */
static void write_replaced(const char *path, const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	FILE *f = fopen(path, "w");

	assert_non_null(at);
	assert_non_null(f);
	fwrite(text, 1, (size_t)(at - text), f);
	fputs(to, f);
	fputs(at + strlen(from), f);
	assert_int_equal(fclose(f), 0);
}

/* Bytes that are not UTF-8 in an XML's names made node JSON fail as "out of
 * memory" (Jansson takes UTF-8 only), as a Latin-1 export would.  Valid UTF-8
 * stays. */
static void node_from_xml__names_not_utf8__replaced(void **state)
{
	struct dtplan_error err = {0};
	char path[512], *text = NULL, *json = NULL;

	(void)state;
	assert_int_equal(dtplan_file_read(data("pcie-4gpu.xml"), DTPLAN_FILE_NODE_XML, &text, NULL,
					  &err),
			 DTPLAN_OK);
	snprintf(path, sizeof(path), "%s/latin1.xml", tmpdir);
	write_replaced(path, text, "value=\"pcie01\"",
		       "value=\"\xff"
		       "bad\x01pcie01\"");
	free(text);
	assert_int_equal(dtplan_file_read(path, DTPLAN_FILE_NODE_XML, &text, NULL, &err),
			 DTPLAN_OK);
	write_replaced(path, text, "value=\"AD102GL", "value=\"L40S \xe2\x84\xa2 AD102GL");
	if (dt_hwloc_has_libxml2()) {
		/* libxml2: not UTF-8 is not XML; refused, the file named */
		assert_int_equal(dtplan_node_from_xml(path, &node, &err), DTPLAN_ERR_PARSE);
		assert_string_equal(err.source, path);
		assert_non_null(strstr(err.text, "not a valid hwloc XML topology"));
	}
	/* hwloc's minimal parser (the only one without libxml2) takes the
	 * bytes: dtplan replaces what is not UTF-8 */
	assert_int_equal(setenv("HWLOC_LIBXML_IMPORT", "0", 1), 0);
	load_ok(path);
	unsetenv("HWLOC_LIBXML_IMPORT");
	assert_string_equal(node.hostname, "?bad?pcie01");
	assert_string_equal(node.gpus[0].model, "L40S \xe2\x84\xa2 AD102GL [L40S]");
	assert_int_equal(dtplan_node_to_json(&node, false, &json, &err), DTPLAN_OK);
	unlink(path);
	free(json);
	free(text);
}

/* Issue 13, finding 18: hwloc 2.9 crashes on some malformed XML (here a
 * NUMA node without complete_nodeset).  It used to parse in the caller's
 * process, slurmstepd's among them; now a child crashes and the caller gets
 * an error naming the file. */
static void node_from_xml__hwloc_crashes__error_and_caller_alive(void **state)
{
	struct dtplan_discover_opts o = {.cache_dir = tmpdir, .hostname = "myhost"};
	struct dtplan_error err = {0};
	const char *crash = data("hwloc-crash.xml");
	char path[512];

	/* hwloc 2.14+ refuses the file instead of crashing on it */
	enum dtplan_err want = DT_HWLOC_REJECTS_INCOMPLETE_SETS ? DTPLAN_ERR_PARSE : DTPLAN_ERR_IO;
	const char *says = DT_HWLOC_REJECTS_INCOMPLETE_SETS ? "not a valid hwloc XML topology"
							    : "hwloc reading";

	(void)state;
	alarm(test_bound_s(60));
	assert_int_equal(dtplan_node_from_xml(crash, &node, &err), want);
	assert_string_equal(err.source, crash);
	assert_non_null(strstr(err.text, says));
	/* the same file as a cache entry, and as the live discovery's XML */
	snprintf(path, sizeof(path), "%s/myhost.xml", tmpdir);
	copy_file(crash, path);
	assert_int_equal(dtplan_node_discover(&o, &node, &err), want);
	assert_string_equal(err.source, path);
	unlink(path);
	assert_int_equal(setenv("HWLOC_XMLFILE", crash, 1), 0);
	assert_int_equal(dtplan_node_discover(NULL, &node, &err), want);
	assert_non_null(strstr(err.text, DT_HWLOC_REJECTS_INCOMPLETE_SETS
						 ? "not a valid hwloc XML topology"
						 : "hwloc discovery"));
	unsetenv("HWLOC_XMLFILE");
	/* and the process still works */
	load_ok(data("pcie-4gpu.xml"));
	assert_int_equal(node.n_gpus, 4);
	alarm(0);
}

/* HWLOC_XMLFILE goes through the bounded reader: hwloc itself read /dev/zero
 * until memory ran out, and blocked on a FIFO. */
static void node_discover__hostile_hwloc_xmlfile__refused_quickly(void **state)
{
	struct dtplan_error err = {0};
	char fifo[512];
	double t0 = 0;
	struct timespec ts;

	(void)state;
	alarm(test_bound_s(60));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec;
	assert_int_equal(setenv("HWLOC_XMLFILE", "/dev/zero", 1), 0);
	assert_int_equal(dtplan_node_discover(NULL, &node, &err), DTPLAN_ERR_IO);
	assert_string_equal(err.source, "/dev/zero");
	assert_non_null(strstr(err.text, "is a character device, not a regular file"));
	snprintf(fifo, sizeof(fifo), "%s/xmlfifo", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(setenv("HWLOC_XMLFILE", fifo, 1), 0);
	assert_int_equal(dtplan_node_discover(NULL, &node, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "is a FIFO"));
	unlink(fifo);
	unsetenv("HWLOC_XMLFILE");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	assert_true((double)ts.tv_sec - t0 < 30);
	alarm(0);
}

/* Issue 13, finding 14: the prolog (root) wrote the cache by name in a
 * folder anyone might write, so a link swapped in made it overwrite a file
 * of the attacker's choosing.  A folder others or the group can write, or
 * that someone else owns, is refused before anything is created in it. */
static void node_cache_write__unsafe_directory__refused(void **state)
{
	struct dtplan_error err = {0};
	char dir[512], path[600];
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/open", tmpdir);
	snprintf(path, sizeof(path), "%s/h.xml", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(setenv("HWLOC_XMLFILE", data("pcie-4gpu.xml"), 1), 0);
	assert_int_equal(chmod(dir, 01777), 0); /* like /tmp */
	assert_int_equal(dtplan_node_cache_write(dir, "h", 30, &err), DTPLAN_ERR_IO);
	assert_string_equal(err.source, dir);
	assert_non_null(strstr(err.text, "writable by others (mode 1777)"));
	assert_int_equal(chmod(dir, 0775), 0);
	assert_int_equal(dtplan_node_cache_write(dir, "h", 30, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "writable by its group (mode 0775)"));
	if (geteuid() == 0) {
		assert_int_equal(chmod(dir, 0755), 0);
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_int_equal(dtplan_node_cache_write(dir, "h", 30, &err), DTPLAN_ERR_IO);
		assert_non_null(strstr(err.text, "owned by uid 65534, not by uid 0"));
		assert_int_equal(chown(dir, 0, 0), 0);
	}
	assert_int_equal(lstat(path, &st), -1); /* nothing written */
	/* the same folder made safe: written, 0644, and a link planted at the
	 * final name is replaced, not followed */
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/victim", dir);
	copy_file(data("garbage.xml"), path);
	snprintf(path, sizeof(path), "%s/h.xml", dir);
	assert_int_equal(symlink("victim", path), 0);
	assert_int_equal(dtplan_node_cache_write(dir, "h", 30, &err), DTPLAN_OK);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/victim", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 43); /* garbage.xml untouched */
	assert_int_equal(unlink(path), 0);
	unsetenv("HWLOC_XMLFILE");
	assert_int_equal(rmdir(dir), 0); /* no temporary file left */
}

/* Issue 13, finding 22: user_init runs as the job's user after seteuid(),
 * its real uid still 0, so access(R_OK) passed for a cache file only root
 * may read and discovery then failed; the effective user's right counts,
 * and an unreadable cache entry means a live discovery. */
static void node_discover__cache_unreadable_for_euid__live(void **state)
{
	char path[512];
	pid_t pid;
	int status = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(path, sizeof(path), "%s/myhost.xml", tmpdir);
	copy_file(data("pcie-4gpu.xml"), path);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(chmod(tmpdir, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct dtplan_discover_opts o = {.cache_dir = tmpdir, .hostname = "myhost"};
		struct dtplan_error err = {0};
		enum dtplan_err rc;

		if (setenv("HWLOC_XMLFILE", data("hgx-h100-8gpu.xml"), 1) != 0 ||
		    setegid(65534) != 0 || seteuid(65534) != 0)
			_exit(10);
		rc = dtplan_node_discover(&o, &node, &err);
		if (rc != DTPLAN_OK) {
			fprintf(stderr, "discover: %s: %s\n", dtplan_strerror(rc), err.text);
			_exit(11);
		}
		_exit(strcmp(node.source, "live") == 0 && node.n_gpus == 8 ? 0 : 12);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(chmod(tmpdir, 0700), 0);
	unlink(path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void node_cache_write__live_topology__readable_cache(void **state)
{
	struct dtplan_discover_opts o = {.cache_dir = tmpdir, .hostname = "cached"};
	struct dtplan_error err = {0};
	char path[512];
	struct stat st;

	(void)state;
	assert_int_equal(setenv("HWLOC_XMLFILE", data("hgx-h100-8gpu.xml"), 1), 0);
	assert_int_equal(dtplan_node_cache_write(tmpdir, "cached", 30, &err), DTPLAN_OK);
	unsetenv("HWLOC_XMLFILE");
	snprintf(path, sizeof(path), "%s/cached.xml", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(dtplan_node_discover(&o, &node, &err), DTPLAN_OK);
	assert_string_equal(node.source, "cache");
	assert_int_equal(node.n_gpus, 8);
	assert_int_equal(node.n_nics, 8);
	assert_near(node.domains[0].bandwidth_bytes_per_s, 450000e6, 1);
}

static void node_cache_write__missing_last_level__creates_it(void **state)
{
	struct dtplan_error err = {0};
	char dir[512], path[600];
	struct stat st;

	(void)state;
	/* A fresh install: the site's cache folder does not exist yet. */
	snprintf(dir, sizeof(dir), "%s/newcache", tmpdir);
	assert_int_equal(setenv("HWLOC_XMLFILE", data("hgx-h100-8gpu.xml"), 1), 0);
	assert_int_equal(dtplan_node_cache_write(dir, "fresh", 30, &err), DTPLAN_OK);
	unsetenv("HWLOC_XMLFILE");
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0755 & ~umask(022));
	snprintf(path, sizeof(path), "%s/fresh.xml", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void node_cache_write__bad_arguments__errors(void **state)
{
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_node_cache_write(NULL, "h", 1, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_cache_write("", "h", 1, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_cache_write(tmpdir, "a/b", 1, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_cache_write(tmpdir, "..", 1, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_cache_write("/nonexistent/dtplan/dir", "h", 1, &err),
			 DTPLAN_ERR_IO);
	assert_non_null(strstr(err.source, "/nonexistent/dtplan/dir"));
}

static int child_hangs(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static int child_exits(void *arg)
{
	return *(int *)arg;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run_bounded__child_hangs__timeout_and_killed(void **state)
{
	struct dtplan_error err = {0};
	double t0 = mono(), elapsed;

	(void)state;
	assert_int_equal(dtprobe__run_bounded(child_hangs, NULL, 0.2, "test child", &err),
			 DTPLAN_ERR_TIMEOUT);
	elapsed = mono() - t0;
	assert_true(elapsed >= 0.2);
	assert_true(elapsed < 5.0); /* bounded: killed, not waited for */
	assert_non_null(strstr(err.text, "test child"));
}

static void run_bounded__exit_status__ok_or_io(void **state)
{
	struct dtplan_error err = {0};
	int zero = 0, three = 3;

	(void)state;
	assert_int_equal(dtprobe__run_bounded(child_exits, &zero, 10, "c", &err), DTPLAN_OK);
	assert_int_equal(dtprobe__run_bounded(child_exits, &three, 10, "c", &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "exit status 3"));
}

static void run_capture__commands__output_or_bounded(void **state)
{
	char *echo[] = {"printf", "a\\nb", NULL}, *big[] = {"yes", NULL};
	char *fail[] = {"false", NULL}, *none[] = {"/nonexistent/dtplan-cmd", NULL};
	struct dtplan_error err = {0};
	char *out = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(dtplan_run_capture(echo, 10, 1024, &out, &len, &err), DTPLAN_OK);
	assert_string_equal(out, "a\nb");
	assert_int_equal(len, 3);
	free(out);
	assert_int_equal(dtplan_run_capture(big, 10, 4096, &out, NULL, &err), DTPLAN_ERR_IO);
	assert_null(out);
	assert_non_null(strstr(err.text, "more than 4096 bytes"));
	assert_int_equal(dtplan_run_capture(fail, 10, 16, &out, NULL, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "false failed (exit status 1)"));
	assert_int_equal(dtplan_run_capture(none, 10, 16, &out, NULL, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "exit status 127"));
	assert_int_equal(dtplan_run_capture(NULL, 10, 16, &out, NULL, &err), DTPLAN_ERR_INVAL);
}

/* ------------------------------------------------------------------------
 * Fabric ids (NVML's multi-node domains), without NVML
 * ---------------------------------------------------------------------- */

static void apply_fabric_ids__shared_ids__domains_merged(void **state)
{
	char ids[DTPLAN_NODE_MAX_GPUS][DTPLAN__FABRIC_ID_MAX] = {"A", "", "A", "B"};

	(void)state;
	load_ok(data("pcie-4gpu.xml")); /* 4 lone GPUs */
	dtprobe__node_apply_fabric_ids(&node, (const char(*)[DTPLAN__FABRIC_ID_MAX])ids);
	/* {0,2} share "A"; {1} none; {3} "B" -> 3 domains in first-GPU order */
	assert_int_equal(node.n_domains, 3);
	assert_int_equal(node.domains[0].n_gpus, 2);
	assert_int_equal(node.domains[0].gpus[0], 0);
	assert_int_equal(node.domains[0].gpus[1], 2);
	assert_string_equal(node.domains[0].fabric_id, "A");
	assert_string_equal(node.domains[1].fabric_id, "");
	assert_string_equal(node.domains[2].fabric_id, "B");
	assert_int_equal(node.gpus[0].domain, 0);
	assert_int_equal(node.gpus[1].domain, 1);
	assert_int_equal(node.gpus[2].domain, 0);
	assert_int_equal(node.gpus[3].domain, 2);
}

static void nvml_annotate__no_nvml_here__node_unchanged(void **state)
{
	struct dtplan_node before;

	(void)state;
	load_ok(data("hgx-h100-8gpu.xml"));
	before = node;
	/* Without NVML (or with a driver that does not know these invented bus
	 * ids) nothing changes. */
	dtprobe__nvml_annotate(&node);
	assert_memory_equal(&before, &node, sizeof(node));
	dtprobe__nvml_annotate(NULL);
}

/* ------------------------------------------------------------------------
 * JSON
 * ---------------------------------------------------------------------- */

static void node_json__round_trip__same_inventory(void **state)
{
	static const char *const files[] = {"hgx-h100-8gpu.xml", "pcie-4gpu.xml", "cpu-only.xml"};
	struct dtplan_error err = {0};

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct dtplan_node back;
		char *text = NULL;

		load_ok(data(files[f]));
		snprintf(node.note, sizeof(node.note), "a note");
		snprintf(node.domains[0].fabric_id, sizeof(node.domains[0].fabric_id), "abc/1");
		assert_int_equal(dtplan_node_to_json(&node, f == 0, &text, &err), DTPLAN_OK);
		assert_non_null(text);
		memset(&back, 0x5a, sizeof(back));
		if (dtplan_node_from_json(text, &back, &err) != DTPLAN_OK)
			fail_msg("%s: %s", files[f], err.text);
		free(text);
		assert_string_equal(back.hostname, node.hostname);
		assert_string_equal(back.source, node.source);
		assert_string_equal(back.note, "a note");
		assert_int_equal(back.cores, node.cores);
		assert_int_equal(back.numa_nodes, node.numa_nodes);
		assert_int_equal(back.n_gpus, node.n_gpus);
		assert_int_equal(back.n_nics, node.n_nics);
		assert_int_equal(back.n_domains, node.n_domains);
		for (int i = 0; i < node.n_gpus; i++) {
			assert_memory_equal(&back.gpus[i], &node.gpus[i], sizeof(node.gpus[i]));
		}
		for (int i = 0; i < node.n_nics; i++)
			assert_memory_equal(&back.nics[i], &node.nics[i], sizeof(node.nics[i]));
		for (int d = 0; d < node.n_domains; d++) {
			assert_int_equal(back.domains[d].n_gpus, node.domains[d].n_gpus);
			assert_memory_equal(back.domains[d].gpus, node.domains[d].gpus,
					    sizeof(int) * (size_t)node.domains[d].n_gpus);
			assert_true(back.domains[d].bandwidth_bytes_per_s ==
				    node.domains[d].bandwidth_bytes_per_s);
			assert_string_equal(back.domains[d].fabric_id, node.domains[d].fabric_id);
		}
	}
}

#define NIC0                                                                                       \
	"{\"name\":\"mlx5_0\",\"kind\":\"infiniband\",\"pci_bus_id\":\"0000:1a:00.0\","            \
	"\"numa\":0}"
#define GPU0(domain, nic)                                                                          \
	"{\"vendor\":\"nvidia\",\"model\":\"H100\",\"pci_bus_id\":\"0000:1b:00.0\",\"numa\":0,"    \
	"\"domain\":" domain ",\"nic\":" nic "}"
#define DOM(gpus, bw) "{\"gpus\":" gpus ",\"bandwidth_bytes_per_s\":" bw ",\"fabric_id\":\"\"}"
#define NODE(host, gpus, domains, nics)                                                            \
	"{\"hostname\":" host ",\"source\":\"xml\",\"note\":\"\",\"cores\":8,\"numa_nodes\":1,"    \
	"\"gpus\":" gpus ",\"domains\":" domains ",\"nics\":" nics "}"

static void node_from_json__bad_documents__clear_errors(void **state)
{
	static const struct {
		const char *text;
		enum dtplan_err code;
		const char *says;
	} cases[] = {
		{NODE("\"h\"", "[" GPU0("0", "\"mlx5_0\"") "]", "[" DOM("[0]", "0") "]",
		      "[" NIC0 "]"),
		 DTPLAN_OK, ""},
		{"", DTPLAN_ERR_PARSE, ""},
		{"{\"hostname\": ", DTPLAN_ERR_PARSE, ""},
		{"[1, 2]", DTPLAN_ERR_INVAL, "top level"},
		/* the member getters' one code and wording (lib/base/json_get.c) */
		{NODE("5", "[]", "[]", "[]"), DTPLAN_ERR_PARSE, "hostname: expected a string"},
		{"{\"source\":\"xml\"}", DTPLAN_ERR_PARSE, "hostname: missing"},
		{NODE("\"0123456789012345678901234567890123456789012345678901234567890123456789\"",
		      "[]", "[]", "[]"),
		 DTPLAN_ERR_PARSE, "hostname: longer than 63 characters or holds a NUL"},
		{NODE("\"h\"", "{}", "[]", "[]"), DTPLAN_ERR_INVAL, "gpus"},
		{NODE("\"h\"", "[" GPU0("1", "null") "]", "[" DOM("[0]", "0") "]", "[]"),
		 DTPLAN_ERR_PARSE, "gpus[0].domain: 1 is out of range (0 to 0)"},
		{NODE("\"h\"",
		      "[{\"vendor\":\"nvidia\",\"model\":\"H100\",\"pci_bus_id\":\"\","
		      "\"memory_bytes\":-1,\"numa\":0,\"domain\":0}]",
		      "[" DOM("[0]", "0") "]", "[]"),
		 DTPLAN_ERR_PARSE, "gpus[0].memory_bytes: -1 is out of range (0 to 1e+15)"},
		{NODE("\"h\"", "[" GPU0("0", "\"mlx5_9\"") "]", "[" DOM("[0]", "0") "]",
		      "[" NIC0 "]"),
		 DTPLAN_ERR_INVAL, "mlx5_9"},
		{NODE("\"h\"", "[" GPU0("0", "null") "]", "[" DOM("[0,0]", "0") "]", "[]"),
		 DTPLAN_ERR_INVAL, "already in domain"},
		{NODE("\"h\"", "[" GPU0("0", "null") "]", "[" DOM("[3]", "0") "]", "[]"),
		 DTPLAN_ERR_INVAL, "domains[0].gpus[0]"},
		{NODE("\"h\"", "[" GPU0("0", "null") "]", "[" DOM("[0]", "-1") "]", "[]"),
		 DTPLAN_ERR_INVAL, "bandwidth_bytes_per_s"},
		{NODE("\"h\"", "[]", "[]",
		      "[{\"name\":\"x\",\"kind\":\"token-ring\",\"pci_bus_id\":\"\",\"numa\":0}]"),
		 DTPLAN_ERR_INVAL, "token-ring"},
		{NODE("\"h\"", "[" GPU0("0", "null") "," GPU0("0", "null") "]",
		      "[" DOM("[0]", "0") "]", "[]"),
		 DTPLAN_ERR_INVAL, "gpus[1].domain"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_error err = {0};
		enum dtplan_err rc = dtplan_node_from_json(cases[i].text, &node, &err);

		if (rc != cases[i].code)
			fail_msg("case %zu: got %s (%s), expected %s", i, dtplan_strerror(rc),
				 err.text, dtplan_strerror(cases[i].code));
		if (strstr(err.text, cases[i].says) == NULL)
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.text, cases[i].says);
	}
	assert_int_equal(dtplan_node_from_json(NULL, &node, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_node_from_json("{}", NULL, NULL), DTPLAN_ERR_INVAL);
}

static void node_to_json__bad_arguments__errors(void **state)
{
	struct dtplan_error err = {0};
	char *text = (char *)"unchanged";

	(void)state;
	assert_int_equal(dtplan_node_to_json(NULL, false, &text, &err), DTPLAN_ERR_INVAL);
	assert_null(text);
	memset(&node, 0, sizeof(node));
	node.n_gpus = DTPLAN_NODE_MAX_GPUS + 1;
	assert_int_equal(dtplan_node_to_json(&node, false, &text, &err), DTPLAN_ERR_RANGE);
	assert_int_equal(dtplan_node_to_json(&node, false, NULL, &err), DTPLAN_ERR_INVAL);
}

/* Hosts with the same hardware share one inventory (issue 13, finding 10);
 * a different fabric id or GPU makes another, and n adds stay linear. */
static void inventory_add__same_hardware__shared(void **state)
{
	struct dtplan_node_set inv;
	struct dtplan_node *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	load_ok(data("hgx-h100-8gpu.xml"));
	*a = node;
	*b = node;
	snprintf(b->hostname, sizeof(b->hostname), "other");
	snprintf(b->source, sizeof(b->source), "cache");
	dtplan_node_set_init(&inv);
	assert_int_equal(dtplan_node_set_add(&inv, a), 0);
	assert_int_equal(dtplan_node_set_add(&inv, b), 0);
	assert_int_equal(inv.n, 1);
	assert_string_equal(inv.nodes[0].hostname, "hgx01"); /* the first copy's */
	snprintf(b->domains[0].fabric_id, sizeof(b->domains[0].fabric_id), "rack2");
	assert_false(dtplan_node_same_hardware(a, b));
	assert_int_equal(dtplan_node_set_add(&inv, b), 1);
	snprintf(b->gpus[3].model, sizeof(b->gpus[3].model), "T4");
	assert_int_equal(dtplan_node_set_add(&inv, b), 2);
	assert_int_equal(dtplan_node_set_add(&inv, a), 0);
	assert_int_equal(inv.n, 3);
	/* 2,000 distinct inventories (one fabric id each), each found again */
	for (int i = 0; i < 2000; i++) {
		snprintf(b->domains[0].fabric_id, sizeof(b->domains[0].fabric_id), "r%d", i);
		assert_int_equal(dtplan_node_set_add(&inv, b), 3 + i);
	}
	for (int i = 0; i < 2000; i += 97) {
		snprintf(b->domains[0].fabric_id, sizeof(b->domains[0].fabric_id), "r%d", i);
		assert_int_equal(dtplan_node_set_add(&inv, b), 3 + i);
	}
	assert_int_equal(inv.n, 2003);
	dtplan_node_set_fini(&inv);
	dtplan_node_set_fini(NULL);
	free(a);
	free(b);
}

static void nic_kind_name__every_kind__distinct_names(void **state)
{
	static const struct {
		enum dtplan_nic_kind kind;
		const char *name;
	} cases[] = {
		{DTPLAN_NIC_UNKNOWN, "unknown"},
		{DTPLAN_NIC_INFINIBAND, "infiniband"},
		{DTPLAN_NIC_ROCE, "roce"},
		{DTPLAN_NIC_ETHERNET, "ethernet"},
		{DTPLAN_NIC_EFA, "efa"},
		{DTPLAN_NIC_SLINGSHOT, "slingshot"},
		{DTPLAN_NIC_OMNIPATH, "omnipath"},
		{(enum dtplan_nic_kind)99, "unknown"},
		{(enum dtplan_nic_kind) - 1, "unknown"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(dtplan_nic_kind_name(cases[i].kind), cases[i].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(node_from_xml__hgx_fixture__one_domain_eight_rails),
		cmocka_unit_test(node_from_xml__pcie_fixture__lone_gpus_roce_bmc_skipped),
		cmocka_unit_test(node_from_xml__cpu_fixture__no_gpu_omnipath),
		cmocka_unit_test(node_from_xml__pu_count_unknown__cores_from_cpuset),
		cmocka_unit_test(node_from_xml__broken_files__errors),
		cmocka_unit_test(node_from_xml__malformed_or_not_a_file__errors),
		cmocka_unit_test(node_from_xml__null_args__inval),
		cmocka_unit_test(node_from_xml__shared_fixtures__expected_shape),
		cmocka_unit_test(node_from_xml__shared_details__bandwidth_kinds_vendors),
		cmocka_unit_test(node_discover__each_source__source_named),
		cmocka_unit_test(node_discover__cache_is_broken__parse_error),
		cmocka_unit_test(node_from_xml__fifo_device_link__refused_without_blocking),
		cmocka_unit_test(node_from_xml__names_not_utf8__replaced),
		cmocka_unit_test(node_from_xml__hwloc_crashes__error_and_caller_alive),
		cmocka_unit_test(node_discover__hostile_hwloc_xmlfile__refused_quickly),
		cmocka_unit_test(node_cache_write__unsafe_directory__refused),
		cmocka_unit_test(node_discover__cache_unreadable_for_euid__live),
		cmocka_unit_test(node_cache_write__live_topology__readable_cache),
		cmocka_unit_test(node_cache_write__missing_last_level__creates_it),
		cmocka_unit_test(node_cache_write__bad_arguments__errors),
		cmocka_unit_test(run_bounded__child_hangs__timeout_and_killed),
		cmocka_unit_test(run_bounded__exit_status__ok_or_io),
		cmocka_unit_test(run_capture__commands__output_or_bounded),
		cmocka_unit_test(apply_fabric_ids__shared_ids__domains_merged),
		cmocka_unit_test(nvml_annotate__no_nvml_here__node_unchanged),
		cmocka_unit_test(node_json__round_trip__same_inventory),
		cmocka_unit_test(node_from_json__bad_documents__clear_errors),
		cmocka_unit_test(node_to_json__bad_arguments__errors),
		cmocka_unit_test(inventory_add__same_hardware__shared),
		cmocka_unit_test(nic_kind_name__every_kind__distinct_names),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
