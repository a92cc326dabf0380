/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_config.c: defaults, the site file dtplan.conf, plugstack.conf
 * arguments and applying switch settings to a topology.
 */
#include "test_common.h"

#include <sys/stat.h>
#include <unistd.h>

static void config_init__defaults__documented_values(void **state)
{
	struct dtplan_config c;

	(void)state;
	memset(&c, 0xff, sizeof(c));
	dtplan_config_init(&c);
	assert_int_equal(c.default_mode, DTPLAN_MODE_OFF);
	assert_int_equal(c.policy, DTPLAN_POLICY_WARN);
	assert_near(c.probe_timeout_s, 10.0, 0);
	assert_int_equal(c.nccl_ib_hca, DTPLAN_NCCL_IB_HCA_OFF);
	/* 400 Gb/s per GPU rail = 400e9 / 8 = 50e9 bytes/s */
	assert_near(c.net_bytes_per_s, 50e9, 0);
	assert_near(c.net_latency_s, 5e-6, 1e-15);
	assert_near(c.nvlink_bytes_per_s, 0, 0);
	assert_near(c.nvlink_latency_s, 1e-6, 1e-15);
	/* 16384 * 54 * 24 / 419 = 21233664 / 419 = 50677.00... GPU-hours */
	assert_near(c.mtbf_gpu_hours, 21233664.0 / 419.0, 1e-9);
	assert_near(c.ckpt_write_bytes_per_s, 100e9, 0);
	assert_near(c.restart_seconds, 300, 0);
	assert_near(c.oversub_threshold, 2.0, 0);
	assert_near(c.bubble_threshold, 0.10, 0);
	assert_near(c.exposed_comm_threshold, 0.10, 0);
	assert_near(c.slowdown_threshold, 0.05, 0);
	assert_near(c.mfu_efficiency, 0.5, 0);
	assert_string_equal(c.gpu_type, "");
	assert_string_equal(c.json_dir, "");
	assert_string_equal(c.cache_dir, "");
	assert_string_equal(c.fabric_url, "");
	assert_string_equal(c.fabric_cache, "");
	assert_near(c.fabric_cache_ttl_s, 300, 0);
	assert_near(c.fabric_timeout_s, 2, 0);
	assert_string_equal(c.report_url, "");
	assert_string_equal(c.report_token_file, "");
	assert_near(c.report_timeout_s, 2, 0);
	assert_near(c.http_connect_timeout_s, 1, 0);
	assert_near(c.http_max_bytes, 16e6, 0);
	assert_string_equal(c.http_ca_path, "");
	assert_int_equal(c.n_switches, 0);
	assert_null(c.switches);
	assert_int_equal(c.n_nodesets, 0);
	assert_null(c.nodesets);
	dtplan_config_fini(&c);
	dtplan_config_fini(NULL);
	dtplan_config_init(NULL);
}

static void config_parse_file__every_key__values_with_units(void **state)
{
	struct dtplan_config c;
	struct dtplan_error err = {0};
	const char *path = test_data_path("dtplan-full.conf");

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_file(&c, path, &err), DTPLAN_OK);
	assert_string_equal(c.site_file, path);
	assert_int_equal(c.default_mode, DTPLAN_MODE_AUTO);
	assert_int_equal(c.policy, DTPLAN_POLICY_DENY);
	assert_string_equal(c.cache_dir, "/var/cache/dtplan");
	assert_string_equal(c.json_dir, "/shared/plans");
	assert_near(c.probe_timeout_s, 5, 0);
	assert_near(c.net_bytes_per_s, 25e9, 1); /* 200e9 / 8 */
	assert_near(c.net_latency_s, 3e-6, 1e-15);
	assert_near(c.nvlink_bytes_per_s, 900e9, 1);
	assert_near(c.nvlink_latency_s, 2e-6, 1e-15);
	assert_string_equal(c.gpu_type, "h100-sxm");
	assert_near(c.mtbf_gpu_hours, 40000, 0);
	assert_near(c.ckpt_write_bytes_per_s, 20e9, 1);
	assert_near(c.restart_seconds, 600, 1e-9); /* 10 * 60 */
	assert_near(c.oversub_threshold, 3, 0);
	assert_near(c.bubble_threshold, 0.2, 0);
	assert_near(c.exposed_comm_threshold, 0.25, 0);
	assert_near(c.slowdown_threshold, 0.15, 0);
	assert_near(c.mfu_efficiency, 0.4, 0);
	assert_int_equal(c.n_switches, 2);
	assert_string_equal(c.switches[0].name, "leaf1");
	assert_near(c.switches[0].oversubscription, 4, 0);
	assert_near(c.switches[0].uplink_bytes_per_s, 100e9, 1); /* 800e9 / 8 */
	assert_int_equal(c.switches[0].line, 23);
	assert_near(c.switches[1].oversubscription, 1.5, 0);
	assert_near(c.switches[1].uplink_bytes_per_s, 0, 0);
	assert_int_equal(c.n_nodesets, 2);
	assert_string_equal(c.nodesets[0].nodes, "node[1-4]");
	assert_string_equal(c.nodesets[0].gpu_type, "gb200");
	assert_int_equal(c.nodesets[0].gpus_per_node, 4);
	assert_string_equal(c.nodesets[0].nvlink_domain, "rack1");
	assert_int_equal(c.nodesets[1].gpus_per_node, 8);
	assert_string_equal(c.nodesets[1].nvlink_domain, "");
	assert_string_equal(c.fabric_url, "https://fabric.example.org/v1/fabric?format=dtplan");
	assert_string_equal(c.fabric_cache, "/var/cache/dtplan/fabric");
	assert_near(c.fabric_cache_ttl_s, 600, 1e-9);
	assert_near(c.fabric_timeout_s, 3, 0);
	assert_string_equal(c.report_url, "https://collector.example.org/dtplan/plans");
	assert_string_equal(c.report_token_file, "/etc/slurm/dtplan-report.token");
	assert_near(c.report_timeout_s, 1.5, 1e-12);
	assert_near(c.http_connect_timeout_s, 0.5, 1e-12);
	assert_near(c.http_max_bytes, 4e6, 0);
	assert_string_equal(c.http_ca_path, "/etc/ssl/certs");
	dtplan_config_fini(&c);
	assert_int_equal(c.n_switches, 0);
	assert_null(c.switches);
	assert_int_equal(c.policy, DTPLAN_POLICY_WARN);
}

struct ratio_case {
	const char *text;
	double want;
};

static void config_parse_string__switch_ratios__downlink_over_uplink(void **state)
{
	static const struct ratio_case cases[] = {
		{"4:1", 4.0}, {"4", 4.0}, {"1.5:1", 1.5}, {"3:2", 1.5}, {"1:1", 1.0}, {"1:2", 0.5},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_config c;
		char text[128];

		dtplan_config_init(&c);
		snprintf(text, sizeof(text), "SwitchName=leaf[1-3] Oversubscription=%s\n",
			 cases[i].text);
		assert_int_equal(dtplan_config_parse_string(&c, text, "t.conf", NULL), DTPLAN_OK);
		assert_int_equal(c.n_switches, 3);
		assert_string_equal(c.switches[2].name, "leaf3");
		assert_near(c.switches[2].oversubscription, cases[i].want, 1e-12);
		dtplan_config_fini(&c);
	}
}

struct bad_case {
	const char *text;
	enum dtplan_err code;
	int line;
	const char *msg;
};

static void config_parse_string__bad_lines__error_names_file_line_key_value(void **state)
{
	static const struct bad_case cases[] = {
		/* the global settings on the Key=Value engine (lib/base/kv.c): the
		 * list mistakes in the words of the site file's other lines,
		 * topology.conf, --dt-train and the model dimensions (the codes
		 * were the same; "unknown key 'K' (in 'K=V')" and "K: missing
		 * value" were these lines' own) */
		{"Policy=warn\nNetworkBandwith=400Gb/s\n", DTPLAN_ERR_PARSE, 2,
		 "unknown key 'NetworkBandwith' (known: the settings of dtplan.conf(5))"},
		{"Policy=warn Colour=blue\n", DTPLAN_ERR_PARSE, 1,
		 "unknown key 'Colour' (known: the settings of dtplan.conf(5))"},
		{"Policy=warn Policy=deny\n", DTPLAN_ERR_PARSE, 1,
		 "Policy=deny conflicts with Policy=warn at line 1"},
		{"NetworkBandwidth=fast\n", DTPLAN_ERR_PARSE, 1,
		 "NetworkBandwidth: 'fast' is not a number"},
		{"NetworkBandwidth=400Gbit\n", DTPLAN_ERR_PARSE, 1, "unknown unit 'Gbit'"},
		{"NetworkBandwidth=0\n", DTPLAN_ERR_RANGE, 1, "NetworkBandwidth: '0' must be more"},
		{"NetworkLatency=5parsecs\n", DTPLAN_ERR_PARSE, 1, "NetworkLatency"},
		{"Policy=warn\n#\nPolicy=deny\n", DTPLAN_ERR_PARSE, 3,
		 "Policy=deny conflicts with Policy=warn at line 1"},
		{"Policy=maybe\n", DTPLAN_ERR_PARSE, 1, "Policy: 'maybe' is not a policy"},
		{"FabricFormat=yaml\n", DTPLAN_ERR_PARSE, 1,
		 "FabricFormat: 'yaml' is not a format (expected auto, by the answer's "
		 "Content-Type, "
		 "json or topology.conf)"},
		{"Default=sometimes\n", DTPLAN_ERR_PARSE, 1, "Default: 'sometimes' is not a mode"},
		{"BubbleThreshold=1.5\n", DTPLAN_ERR_RANGE, 1,
		 "BubbleThreshold: '1.5' is out of range"},
		{"ComputeEfficiency=0\n", DTPLAN_ERR_RANGE, 1,
		 "ComputeEfficiency: '0' is out of range"},
		{"SlowdownThreshold=5%\n", DTPLAN_ERR_PARSE, 1,
		 "SlowdownThreshold: '5%' is not a number"},
		{"SlowdownThreshold=-0.1\n", DTPLAN_ERR_RANGE, 1,
		 "SlowdownThreshold: '-0.1' is out of range (at least 0, at most 1)"},
		{"ProbeTimeout=0\n", DTPLAN_ERR_RANGE, 1, "ProbeTimeout: '0' is out of range"},
		{"FabricURL=ftp://fabric/x\n", DTPLAN_ERR_PARSE, 1,
		 "FabricURL: 'ftp://fabric/x' is not an http:// or https:// URL"},
		{"ReportURL=https://\n", DTPLAN_ERR_PARSE, 1,
		 "ReportURL: 'https://' is not an http:// or https:// URL"},
		{"ReportURL=collector:8080\n", DTPLAN_ERR_PARSE, 1,
		 "is not an http:// or https://"},
		{"FabricTimeout=0\n", DTPLAN_ERR_RANGE, 1, "FabricTimeout: '0' is out of range"},
		{"ReportTimeout=11min\n", DTPLAN_ERR_RANGE, 1,
		 "ReportTimeout: '11min' is out of range"},
		{"HttpMaxSize=100\n", DTPLAN_ERR_RANGE, 1, "HttpMaxSize: '100' is out of range"},
		{"HttpMaxSize=lots\n", DTPLAN_ERR_PARSE, 1, "HttpMaxSize"},
		{"MtbfGpuHours=many\n", DTPLAN_ERR_PARSE, 1,
		 "MtbfGpuHours: 'many' is not a number"},
		{"MtbfGpuHours=1e999\n", DTPLAN_ERR_PARSE, 1,
		 "MtbfGpuHours: '1e999' is not a number"},
		{"OversubscriptionThreshold=0.5\n", DTPLAN_ERR_RANGE, 1, "out of range"},
		{"GpuType=h100 sxm\n", DTPLAN_ERR_PARSE, 1, "'sxm' is not Key=Value"},
		{"GpuType=h100/sxm\n", DTPLAN_ERR_NOT_FOUND, 1,
		 "GpuType: unknown GPU type 'h100/sxm' (known: a100-40gb"},
		{"\nGpuType=v100\n", DTPLAN_ERR_NOT_FOUND, 2, "GpuType: unknown GPU type 'v100'"},
		{"Policy\n", DTPLAN_ERR_PARSE, 1,
		 "'Policy' is not Key=Value (keys: the settings of dtplan.conf(5))"},
		{"Policy=\n", DTPLAN_ERR_PARSE, 1, "key 'Policy' has no value"},
		{"ProbeTimeout=\n", DTPLAN_ERR_PARSE, 1, "key 'ProbeTimeout' has no value"},
		{"Policy=warn SwitchName=a\n", DTPLAN_ERR_PARSE, 1,
		 "SwitchName= must start its own line"},
		{"Policy=warn nodename=a\n", DTPLAN_ERR_PARSE, 1,
		 "NodeName= must start its own line"},
		{"SwitchName=leaf1\n", DTPLAN_ERR_PARSE, 1, "SwitchName=leaf1 sets nothing"},
		{"SwitchName=leaf1 Oversubscription=4:0\n", DTPLAN_ERR_PARSE, 1,
		 "Oversubscription: '4:0' is not a ratio"},
		{"SwitchName=leaf1 Oversubscription=x:1\n", DTPLAN_ERR_PARSE, 1,
		 "'x:1' is not a ratio"},
		{"SwitchName=leaf1 Oversubscription=-2\n", DTPLAN_ERR_PARSE, 1,
		 "'-2' is not a ratio"},
		{"SwitchName=leaf1 UplinkBandwidth=lots\n", DTPLAN_ERR_PARSE, 1, "UplinkBandwidth"},
		/* SwitchName= lines on the Key=Value engine too (issue 20): a key
		 * given twice was taken, the last winning. */
		{"SwitchName=leaf1 Speed=1\n", DTPLAN_ERR_PARSE,
		 1, "SwitchName=leaf1: unknown key 'Speed' (known: Oversubscription, UplinkBandwidth)"},
		{"SwitchName=leaf1 Oversubscription=2 oversubscription=4\n", DTPLAN_ERR_PARSE, 1,
		 "SwitchName=leaf1: key 'oversubscription' given twice"},
		{"SwitchName=leaf1 UplinkBandwidth=\n", DTPLAN_ERR_PARSE, 1,
		 "SwitchName=leaf1: key 'UplinkBandwidth' has no value"},
		{"SwitchName=leaf1 Oversubscription\n", DTPLAN_ERR_PARSE, 1,
		 "SwitchName=leaf1: 'Oversubscription' is not Key=Value (keys: Oversubscription"},
		{"SwitchName=leaf[1-2] Oversubscription=2\nSwitchName=leaf2 Oversubscription=4\n",
		 DTPLAN_ERR_PARSE, 2,
		 "switch 'leaf2': Oversubscription 4 conflicts with 2 at line 1"},
		{"SwitchName=leaf[2-1] Oversubscription=2\n", DTPLAN_ERR_PARSE, 1,
		 "SwitchName=leaf[2-1]: hostlist 'leaf[2-1]': range 2-1 is reversed"},
		{"SwitchName= Oversubscription=2\n", DTPLAN_ERR_PARSE, 1,
		 "SwitchName= has no value"},
		{"NodeName=n[1-4] Gpus=0\n", DTPLAN_ERR_RANGE, 1, "Gpus: 0 is out of range"},
		{"NodeName=n[1-4] Gpus=65\n", DTPLAN_ERR_RANGE, 1, "Gpus: 65 is out of range"},
		{"NodeName=n[1-4] Gpus=eight\n", DTPLAN_ERR_PARSE, 1, "Gpus: 'eight' is not"},
		{"NodeName=n[1-4] GpuType=a/b\n", DTPLAN_ERR_PARSE, 1,
		 "GpuType: 'a/b' is not a name"},
		{"NodeName=n[1-4] GpuType=tpu\n", DTPLAN_ERR_NOT_FOUND, 1,
		 "GpuType: unknown GPU type 'tpu'"},
		{"NodeName=n[1-4] NVLinkDomain=rack/1\n", DTPLAN_ERR_PARSE, 1,
		 "NVLinkDomain: 'rack/1' is not a name"},
		/* A NodeName= line on the Key=Value engine (lib/base/kv.c, issue 20):
		 * the five list mistakes as in --dt-train and the model dimensions.
		 * A key given twice was taken (the last won), an empty value was
		 * DTPLAN_ERR_INVAL ("Gpus: missing value"). */
		{"NodeName=n[1-4] Rack=7\n", DTPLAN_ERR_PARSE, 1,
		 "NodeName=n[1-4]: unknown key 'Rack' (known: GpuType, Gpus, NVLinkDomain)"},
		{"NodeName=n[1-4] Gpus=8 gpus=4\n", DTPLAN_ERR_PARSE, 1,
		 "NodeName=n[1-4]: key 'gpus' given twice"},
		{"NodeName=n[1-4] Gpus=\n", DTPLAN_ERR_PARSE, 1,
		 "NodeName=n[1-4]: key 'Gpus' has no value"},
		{"NodeName=n[1-4] Gpus\n", DTPLAN_ERR_PARSE, 1,
		 "NodeName=n[1-4]: 'Gpus' is not Key=Value (keys: GpuType"},
		{"NodeName=n[1-4]\n", DTPLAN_ERR_PARSE, 1, "NodeName=n[1-4] sets nothing"},
		{"NodeName=n[1-4] Gpus=8\n\nNodeName=n[4-6] Gpus=4\n", DTPLAN_ERR_PARSE, 3,
		 "node 'n4' of NodeName=n[4-6] is already in NodeName=n[1-4] (line 1)"},
		{"NodeName=n[1- Gpus=8\n", DTPLAN_ERR_PARSE, 1, "NodeName=n[1-: hostlist"},
		/* issue 13, finding 12: infinite, zero and absurd numbers */
		{"SwitchName=s1 Oversubscription=1e300:1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "Oversubscription: '1e300:1e-300' is out of range (at least 0.1, at most 1000)"},
		{"\nSwitchName=s1 Oversubscription=1e-300:1e300\n", DTPLAN_ERR_RANGE, 2,
		 "Oversubscription: '1e-300:1e300' is out of range"},
		{"SwitchName=s1 Oversubscription=1001\n", DTPLAN_ERR_RANGE, 1,
		 "Oversubscription: '1001' is out of range"},
		{"SwitchName=s1 UplinkBandwidth=1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "UplinkBandwidth: '1e-300' is out of range (at least 1.00 MB/s, at most "
		 "100 TB/s)"},
		{"SwitchName=s1 UplinkBandwidth=200TB/s\n", DTPLAN_ERR_RANGE, 1,
		 "UplinkBandwidth: '200TB/s' is out of range"},
		{"NetworkBandwidth=1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "NetworkBandwidth: '1e-300' is out of range (at least 1.00 MB/s"},
		{"NVLinkBandwidth=1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "NVLinkBandwidth: '1e-300' is out"},
		{"CheckpointWriteBandwidth=1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "CheckpointWriteBandwidth: '1e-300' is out of range (at least 1.00 MB/s, at most "
		 "1.00 PB/s)"},
		{"ComputeEfficiency=1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "ComputeEfficiency: '1e-300' is out of range (at least 0.01, at most 1)"},
		{"MtbfGpuHours=1e-300\n", DTPLAN_ERR_RANGE, 1, "MtbfGpuHours: '1e-300' is out"},
		{"ProbeTimeout=1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "ProbeTimeout: '1e-300' is out of range (at least 0.001 s, at most 3600 s)"},
		{"OversubscriptionThreshold=1e300:1e-300\n", DTPLAN_ERR_RANGE, 1,
		 "OversubscriptionThreshold: '1e300:1e-300' is out of range"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_config c;
		struct dtplan_error err = {0};

		dtplan_config_init(&c);
		assert_int_equal(dtplan_config_parse_string(&c, cases[i].text, "site.conf", &err),
				 cases[i].code);
		assert_string_equal(err.source, "site.conf");
		if (err.line != cases[i].line || strstr(err.text, cases[i].msg) == NULL)
			fail_msg("case %zu: got line %d '%s', expected line %d '%s'", i, err.line,
				 err.text, cases[i].line, cases[i].msg);
		dtplan_config_fini(&c);
	}
}

static void config_parse_string__repeats_and_blank__accepted(void **state)
{
	struct dtplan_config c;

	(void)state;
	dtplan_config_init(&c);
	/* 400Gb/s and 50GB/s are the same rate; the switch gains its uplink later */
	assert_int_equal(
		dtplan_config_parse_string(&c,
					   "\n   \n# only comments\n"
					   "NetworkBandwidth=400Gb/s\n"
					   "NetworkBandwidth=50GB/s\n"
					   "NVLinkBandwidth=0 JsonDir= policy=warn Policy=WARN\n"
					   "SwitchName=s1 Oversubscription=2\n"
					   "SwitchName=s1 UplinkBandwidth=100GB/s\n",
					   NULL, NULL),
		DTPLAN_OK);
	assert_near(c.net_bytes_per_s, 50e9, 1);
	assert_int_equal(c.n_switches, 1);
	assert_near(c.switches[0].oversubscription, 2, 0);
	assert_near(c.switches[0].uplink_bytes_per_s, 100e9, 1);
	dtplan_config_fini(&c);
	assert_int_equal(dtplan_config_parse_string(NULL, "", "x", NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_config_parse_string(&c, NULL, "x", NULL), DTPLAN_ERR_INVAL);
}

/*
 * Issue 13, finding 7: a few short lines of million-name hostlists expanded
 * into gigabytes.  A file's hostlists name at most DTPLAN_HOSTLIST_MAX names
 * in all: the second line of 600,000 is refused, naming it.
 */
static void config_parse_string__million_name_lines__bounded_in_all(void **state)
{
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c,
						    "SwitchName=a[1-600000] Oversubscription=2:1\n"
						    "SwitchName=b[1-600000] Oversubscription=2:1\n",
						    "wide.conf", &err),
			 DTPLAN_ERR_RANGE);
	assert_string_equal(err.source, "wide.conf");
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.text, "SwitchName=b[1-600000]: the file's hostlists name more "
					 "than 1048576 switches and nodes in all"));
	dtplan_config_fini(&c);
}

/*
 * Issue 13, finding 13: each switch name was looked up with a linear scan and
 * the array grown by one entry (O(n^2): 15 s for s[1-100000]).  The result
 * must stay the same: names in order, repeats merged, conflicts caught.
 */
static void config_parse_string__100000_switches__indexed_and_merged(void **state)
{
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c,
						    "SwitchName=s[1-100000] Oversubscription=2:1\n"
						    "SwitchName=s[50000-50001] "
						    "UplinkBandwidth=1TB/s\n"
						    "SwitchName=t1 Oversubscription=4\n",
						    "big.conf", &err),
			 DTPLAN_OK);
	assert_int_equal(c.n_switches, 100001);
	assert_string_equal(c.switches[0].name, "s1");
	assert_string_equal(c.switches[99999].name, "s100000");
	assert_near(c.switches[99999].oversubscription, 2, 0);
	assert_near(c.switches[49999].uplink_bytes_per_s, 1e12, 0); /* s50000 */
	assert_near(c.switches[50000].uplink_bytes_per_s, 1e12, 0); /* s50001 */
	assert_near(c.switches[50001].uplink_bytes_per_s, 0, 0);
	assert_string_equal(c.switches[100000].name, "t1");
	/* a second file adds to the same switches */
	assert_int_equal(dtplan_config_parse_string(&c, "SwitchName=s77777 Oversubscription=3\n",
						    "more.conf", &err),
			 DTPLAN_ERR_PARSE);
	assert_string_equal(err.source, "more.conf");
	assert_non_null(strstr(err.text, "switch 's77777': Oversubscription 3 conflicts with 2 at "
					 "line 1"));
	assert_int_equal(dtplan_config_parse_string(&c,
						    "SwitchName=u[1-3] Oversubscription=3\n"
						    "SwitchName=s5 UplinkBandwidth=10GB/s\n",
						    "more.conf", &err),
			 DTPLAN_OK);
	assert_int_equal(c.n_switches, 100004);
	assert_string_equal(c.switches[100003].name, "u3");
	assert_near(c.switches[4].uplink_bytes_per_s, 10e9, 0);
	dtplan_config_fini(&c);
}

/* A configuration describes at most 1048576 switches. */
static void config_parse_string__switch_limit__range_error(void **state)
{
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	dtplan_config_init(&c);
	/* Switches of an earlier file, made by hand: all named "" (untouched
	 * zero pages, so the test stays cheap). */
	c.n_switches = DTPLAN_HOSTLIST_MAX;
	c.switches = calloc(c.n_switches, sizeof(*c.switches));
	assert_non_null(c.switches);
	assert_int_equal(dtplan_config_parse_string(&c, "\nSwitchName=x1 Oversubscription=2\n",
						    "site.conf", &err),
			 DTPLAN_ERR_RANGE);
	assert_int_equal(err.line, 2);
	assert_string_equal(err.text, "more than 1048576 switches");
	dtplan_config_fini(&c);
}

static void config_parse_file__missing__io_error_names_path(void **state)
{
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_file(&c, "/nonexistent/dtplan.conf", &err),
			 DTPLAN_ERR_IO);
	assert_string_equal(err.source, "/nonexistent/dtplan.conf");
	assert_string_equal(c.site_file, "");
	dtplan_config_fini(&c);
}

/* Issue 13, findings 4-6: a FIFO blocked forever, /dev/zero read until memory
 * ran out, a directory gave "cannot read: Is a directory".  alarm() turns a
 * hang into a failure. */
static void config_parse_file__not_regular_or_huge__refused_naming_path(void **state)
{
	static const struct {
		const char *name; /* in the temporary directory; NULL: the path itself */
		const char *path;
		enum dtplan_err code;
		const char *says;
	} cases[] = {
		{"fifo", NULL, DTPLAN_ERR_IO, "is a FIFO (named pipe), not a regular file"},
		{NULL, "/dev/zero", DTPLAN_ERR_IO, "is a character device, not a regular file"},
		{"", NULL, DTPLAN_ERR_IO, "is a directory, not a regular file"},
		{"huge.conf", NULL, DTPLAN_ERR_IO, "larger than the 4 MiB limit for a site file"},
	};
	char dir[] = "/tmp/dtplan-test-config.XXXXXX", path[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/huge.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(truncate(path, (4 << 20) + 1), 0); /* sparse: no disk used */
	alarm(20);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_config c;
		struct dtplan_error err = {0};

		if (cases[i].name != NULL)
			snprintf(path, sizeof(path), "%s%s%s", dir, cases[i].name[0] ? "/" : "",
				 cases[i].name);
		else
			snprintf(path, sizeof(path), "%s", cases[i].path);
		dtplan_config_init(&c);
		assert_int_equal(dtplan_config_parse_file(&c, path, &err), cases[i].code);
		assert_string_equal(err.source, path);
		if (strstr(err.text, cases[i].says) == NULL)
			fail_msg("%s: '%s' lacks '%s'", path, err.text, cases[i].says);
		assert_string_equal(c.site_file, "");
		dtplan_config_fini(&c);
	}
	alarm(0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/huge.conf", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

static void config_parse_args__plugstack_tokens__applied(void **state)
{
	char *argv[] = {"default=auto",
			"policy=deny",
			"probe_timeout=2s",
			"oversub_threshold=3",
			"cache_dir=/var/cache/dtplan",
			"json_dir=/tmp/plans",
			"topology=/etc/slurm/topology.conf",
			"Policy=deny",
			"net_bandwidth=100Gb/s",
			"slowdown_threshold=0"};
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_args(&c, 10, argv, &err), DTPLAN_OK);
	assert_int_equal(c.default_mode, DTPLAN_MODE_AUTO);
	assert_int_equal(c.policy, DTPLAN_POLICY_DENY);
	assert_near(c.probe_timeout_s, 2, 0);
	assert_near(c.oversub_threshold, 3, 0);
	assert_near(c.net_bytes_per_s, 12.5e9, 1); /* 100e9 / 8 */
	assert_near(c.slowdown_threshold, 0, 0);   /* 0: warn at any predicted gain */
	assert_string_equal(c.cache_dir, "/var/cache/dtplan");
	assert_string_equal(c.json_dir, "/tmp/plans");
	assert_string_equal(c.topology_file, "/etc/slurm/topology.conf");
	assert_string_equal(c.site_file, "");
	assert_int_equal(dtplan_config_parse_args(&c, 0, NULL, &err), DTPLAN_OK);
	dtplan_config_fini(&c);
}

/* The probe's settings (doc/internals/probe.md): defaults and values. */
static void config_parse_args__probe_settings__applied(void **state)
{
	char *argv[] = {"spool_dir=/run/dtplan",
			"probe_budget=3s",
			"probe_ports=7000-7099",
			"probe_fanout=8",
			"node_xml=/etc/dtplan/xml/%n.xml",
			"probe_interface=ib0",
			"munge_socket=/run/munge/munge.socket.2",
			"probe_ports=7000-7099"};
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	dtplan_config_init(&c);
	assert_string_equal(c.spool_dir, "/var/spool/dtplan");
	assert_near(c.probe_budget_s, 5, 0);
	/* ports only root may listen on (issue 26) */
	assert_int_equal(c.probe_ports[0], 500);
	assert_int_equal(c.probe_ports[1], 599);
	assert_int_equal(c.probe_fanout, 16);
	assert_string_equal(c.node_xml, "");
	if (dtplan_config_parse_args(&c, 8, argv, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_string_equal(c.spool_dir, "/run/dtplan");
	assert_near(c.probe_budget_s, 3, 0);
	assert_int_equal(c.probe_ports[0], 7000);
	assert_int_equal(c.probe_ports[1], 7099);
	assert_int_equal(c.probe_fanout, 8);
	assert_string_equal(c.node_xml, "/etc/dtplan/xml/%n.xml");
	assert_string_equal(c.probe_interface, "ib0");
	assert_string_equal(c.munge_socket, "/run/munge/munge.socket.2");
	dtplan_config_fini(&c);
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c, "ProbePorts=40000-40000 ProbeBudget=10s\n",
						    "site", &err),
			 DTPLAN_OK);
	assert_int_equal(c.probe_ports[0], 40000);
	assert_int_equal(c.probe_ports[1], 40000);
	assert_near(c.probe_budget_s, 10, 0);
	dtplan_config_fini(&c);
	/* any range of real ports, privileged ones too */
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c, "ProbePorts=1-1023\n", "site", &err),
			 DTPLAN_OK);
	assert_int_equal(c.probe_ports[0], 1);
	assert_int_equal(c.probe_ports[1], 1023);
	dtplan_config_fini(&c);
}

/* Configless nodes: relative site= and topology= are read in Slurm's
 * configuration folder, the one $SLURM_CONF names. */
static void config_parse_args__relative_paths__read_in_conf_dir(void **state)
{
	char conf[4200], dir[4200], want[4300];
	char *argv[] = {"site=dtplan-full.conf", "topology=topology.yaml",
			"topology=topology.yaml"};
	char *abs[] = {"topology=/etc/slurm/topology.conf"};
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	snprintf(conf, sizeof(conf), "%s", test_data_path("slurm.conf"));
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(conf, '/') - conf), conf);
	dtplan_config_init(&c);
	dtplan_config_set_dir(&c, conf, "/etc/slurm");
	assert_string_equal(c.conf_dir, dir);
	/* the same relative path twice is one value, not a conflict */
	if (dtplan_config_parse_args(&c, 3, argv, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	snprintf(want, sizeof(want), "%s/topology.yaml", dir);
	assert_string_equal(c.topology_file, want);
	snprintf(want, sizeof(want), "%s/dtplan-full.conf", dir);
	assert_string_equal(c.site_file, want);
	assert_int_equal(c.policy, DTPLAN_POLICY_DENY); /* the site file was read */
	assert_int_equal(dtplan_config_parse_args(&c, 1, abs, &err), DTPLAN_OK);
	assert_string_equal(c.topology_file, "/etc/slurm/topology.conf");
	dtplan_config_fini(&c);
	/* no SLURM_CONF: the fallback; a bare name has no folder; "/x" is "/" */
	dtplan_config_set_dir(&c, NULL, "/run/slurm/conf");
	assert_string_equal(c.conf_dir, "/run/slurm/conf");
	dtplan_config_set_dir(&c, "slurm.conf", "/etc/slurm");
	assert_string_equal(c.conf_dir, "/etc/slurm");
	dtplan_config_set_dir(&c, "/slurm.conf", NULL);
	assert_string_equal(c.conf_dir, "/");
	assert_int_equal(dtplan_config_parse_args(&c, 1, (char *[]){"topology=t.conf"}, &err),
			 DTPLAN_OK);
	assert_string_equal(c.topology_file, "/t.conf");
	dtplan_config_set_dir(&c, NULL, NULL);
	assert_string_equal(c.conf_dir, "");
	assert_int_equal(dtplan_config_parse_args(&c, 1, (char *[]){"topology=t.conf"}, &err),
			 DTPLAN_OK);
	assert_string_equal(c.topology_file, "t.conf");
	dtplan_config_fini(&c);
}

static void config_parse_args__nccl_ib_hca__off_or_node(void **state)
{
	static const struct {
		const char *token;
		int want;
	} cases[] = {
		{"nccl_ib_hca=node", DTPLAN_NCCL_IB_HCA_NODE},
		{"nccl_ib_hca=NODE", DTPLAN_NCCL_IB_HCA_NODE},
		{"nccl_ib_hca=off", DTPLAN_NCCL_IB_HCA_OFF},
		{"NCCL_IB_HCA=Off", DTPLAN_NCCL_IB_HCA_OFF},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {(char *)cases[i].token};
		struct dtplan_config c;
		struct dtplan_error err = {0};

		dtplan_config_init(&c);
		c.nccl_ib_hca = -1;
		if (dtplan_config_parse_args(&c, 1, argv, &err) != DTPLAN_OK)
			fail_msg("%s: %s", cases[i].token, err.text);
		assert_int_equal(c.nccl_ib_hca, cases[i].want);
		dtplan_config_fini(&c);
	}
	assert_string_equal(dtplan_nccl_ib_hca_name(DTPLAN_NCCL_IB_HCA_OFF), "off");
	assert_string_equal(dtplan_nccl_ib_hca_name(DTPLAN_NCCL_IB_HCA_NODE), "node");
	assert_string_equal(dtplan_nccl_ib_hca_name(2), "?");
}

static void config_parse_args__site_file__read_then_overridden(void **state)
{
	char site[4200];
	char *argv[] = {"policy=warn", site};
	struct dtplan_config c;
	struct dtplan_error err = {0};

	(void)state;
	snprintf(site, sizeof(site), "site=%s", test_data_path("dtplan-full.conf"));
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_args(&c, 2, argv, &err), DTPLAN_OK);
	/* the file says Policy=deny; the argument wins */
	assert_int_equal(c.policy, DTPLAN_POLICY_WARN);
	assert_int_equal(c.default_mode, DTPLAN_MODE_AUTO);
	assert_near(c.mtbf_gpu_hours, 40000, 0);
	assert_int_equal(c.n_nodesets, 2);
	assert_string_equal(c.site_file, test_data_path("dtplan-full.conf"));
	dtplan_config_fini(&c);
}

struct args_case {
	const char *tokens[3];
	int argc;
	enum dtplan_err code;
	const char *source;
	int line;
	const char *msg;
};

static void config_parse_args__bad_tokens__error_names_token(void **state)
{
	static const struct args_case cases[] = {
		/* each argument on the Key=Value engine (lib/base/kv.c): the list
		 * mistakes in the words of the site file's lines, topology.conf,
		 * --dt-train and the model dimensions (the codes were the same;
		 * "argument 'A' is not key=value" and "K: missing value" were the
		 * arguments' own) */
		{{"default"},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'default': 'default' is not key=value (keys: the arguments of "
		 "spank_dtplan(8))"},
		{{""}, 1, DTPLAN_ERR_PARSE, "plugstack.conf", 0, "argument '': empty field in ''"},
		{{"=auto"}, 1, DTPLAN_ERR_PARSE, "plugstack.conf", 0, "'=auto' is not key=value"},
		{{"colour=blue"},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'colour=blue': unknown key 'colour' (known: the arguments of "
		 "spank_dtplan(8))"},
		{{"NetworkBandwidth=1GB/s"},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "unknown key 'NetworkBandwidth'"},
		{{"policy=sometimes"},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'policy=sometimes': policy: 'sometimes' is not a policy"},
		{{"probe_timeout=soon"},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'probe_timeout=soon'"},
		{{"policy=warn", "policy=deny"},
		 2,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'policy=deny' conflicts with 'policy=warn'"},
		{{"nccl_ib_hca=rank"},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'nccl_ib_hca=rank': nccl_ib_hca: 'rank' is not a choice (expected "
		 "off, or node for every NIC of the node)"},
		{{"nccl_ib_hca="},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'nccl_ib_hca=': key 'nccl_ib_hca' has no value"},
		{{"nccl_ib_hca=node", "nccl_ib_hca=off"},
		 2,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "argument 'nccl_ib_hca=off' conflicts with 'nccl_ib_hca=node'"},
		{{"site=/nonexistent/dtplan.conf"},
		 1,
		 DTPLAN_ERR_IO,
		 "/nonexistent/dtplan.conf",
		 0,
		 "cannot open"},
		{{"policy=warn", "site=BAD"},
		 2,
		 DTPLAN_ERR_PARSE,
		 "BAD",
		 3,
		 "NetworkBandwidth: 'fast' is not a number"},
		{{"probe_ports=30500"},
		 1,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "probe_ports: '30500' is not a port range such as 500-599"},
		{{"probe_ports=30599-30500"},
		 1,
		 DTPLAN_ERR_RANGE,
		 "plugstack.conf",
		 0,
		 "probe_ports: '30599-30500': the first port is above the last"},
		{{"probe_ports=0-90"}, 1, DTPLAN_ERR_RANGE, "plugstack.conf", 0, "probe_ports"},
		{{"probe_ports=500-65536"}, 1, DTPLAN_ERR_RANGE, "plugstack.conf", 0, "probe_ports"},
		{{"probe_budget=0.1s"},
		 1,
		 DTPLAN_ERR_RANGE,
		 "plugstack.conf",
		 0,
		 "probe_budget: '0.1s' is out of range (at least 0.5 s, at most 120 s)"},
		{{"probe_fanout=1"}, 1, DTPLAN_ERR_RANGE, "plugstack.conf", 0, "probe_fanout"},
		{{"probe_ports=30500-30599", "probe_ports=30500-30600"},
		 2,
		 DTPLAN_ERR_PARSE,
		 "plugstack.conf",
		 0,
		 "conflicts with 'probe_ports=30500-30599'"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[3] = {NULL, NULL, NULL};
		char bad[4200], source[4200];
		struct dtplan_config c;
		struct dtplan_error err = {0};

		snprintf(bad, sizeof(bad), "site=%s", test_data_path("dtplan-bad-value.conf"));
		if (strcmp(cases[i].source, "BAD") == 0)
			snprintf(source, sizeof(source), "%s",
				 test_data_path("dtplan-bad-value.conf"));
		else
			snprintf(source, sizeof(source), "%s", cases[i].source);
		for (int k = 0; k < cases[i].argc; k++)
			argv[k] = strcmp(cases[i].tokens[k], "site=BAD") == 0
					  ? bad
					  : (char *)cases[i].tokens[k];
		dtplan_config_init(&c);
		assert_int_equal(dtplan_config_parse_args(&c, cases[i].argc, argv, &err),
				 cases[i].code);
		assert_string_equal(err.source, source);
		assert_int_equal(err.line, cases[i].line);
		if (strstr(err.text, cases[i].msg) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text, cases[i].msg);
		/* nothing is applied from a failing argument list */
		assert_int_equal(c.policy, DTPLAN_POLICY_WARN);
		assert_int_equal(c.nccl_ib_hca, DTPLAN_NCCL_IB_HCA_OFF);
		dtplan_config_fini(&c);
	}
}

static void config_apply_topology__switch_settings__copied_or_not_found(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_config c;
	struct dtplan_error err = {0};
	int leaf1, leaf2;

	(void)state;
	assert_int_equal(dtplan_topology_parse_file(test_data_path("topology-two-leaves.conf"), &t,
						    NULL),
			 DTPLAN_OK);
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_file(&c, test_data_path("dtplan-full.conf"), NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(&c, t, &err), DTPLAN_OK);
	leaf1 = dtplan_topology_switch_index(t, "leaf1");
	leaf2 = dtplan_topology_switch_index(t, "leaf2");
	assert_near(t->switches[leaf1].oversubscription, 4, 0);
	assert_near(t->switches[leaf1].uplink_bytes_per_s, 100e9, 1);
	assert_near(t->switches[leaf2].oversubscription, 1.5, 0);
	assert_near(t->switches[leaf2].uplink_bytes_per_s, 0, 0);
	assert_near(t->switches[dtplan_topology_switch_index(t, "spine")].oversubscription, 1, 0);
	dtplan_config_fini(&c);

	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_file(&c, test_data_path("dtplan-unknown-switch.conf"),
						  NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(&c, t, &err), DTPLAN_ERR_NOT_FOUND);
	assert_string_equal(err.source, test_data_path("dtplan-unknown-switch.conf"));
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.text, "SwitchName=leaf9: no switch 'leaf9' in the topology"));
	/* a failing apply changes nothing: leaf1 keeps 4:1 from the first file */
	assert_near(t->switches[leaf1].oversubscription, 4, 0);
	assert_int_equal(dtplan_config_apply_topology(NULL, t, &err), DTPLAN_ERR_INVAL);
	dtplan_config_fini(&c);
	dtplan_topology_destroy(t);
}

static void config_nodeset_for__hostnames__first_matching_set(void **state)
{
	struct dtplan_config c;
	const struct dtplan_site_nodeset *ns;

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_file(&c, test_data_path("dtplan-full.conf"), NULL),
			 DTPLAN_OK);
	ns = dtplan_config_nodeset_for(&c, "node3");
	assert_non_null(ns);
	assert_string_equal(ns->gpu_type, "gb200");
	assert_int_equal(ns->line, 26);
	ns = dtplan_config_nodeset_for(&c, "node8");
	assert_non_null(ns);
	assert_string_equal(ns->gpu_type, "h100-sxm");
	assert_null(dtplan_config_nodeset_for(&c, "node9"));
	assert_null(dtplan_config_nodeset_for(&c, NULL));
	assert_null(dtplan_config_nodeset_for(NULL, "node1"));
	dtplan_config_fini(&c);
}

static void config_setting__defaults_marked__changed_not(void **state)
{
	char *argv[] = {"policy=deny", "probe_timeout=10s", "nccl_ib_hca=node"};
	struct dtplan_config c;
	const char *key, *arg;
	char value[64];
	bool def;
	size_t n = 0;

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_args(&c, 3, argv, NULL), DTPLAN_OK);
	for (size_t i = 0; dtplan_config_setting(&c, i, &key, &arg, value, sizeof(value), &def);
	     i++) {
		n++;
		if (strcmp(arg, "policy") == 0) {
			assert_string_equal(key, "Policy");
			assert_string_equal(value, "deny");
			assert_false(def);
		} else if (strcmp(arg, "probe_timeout") == 0) {
			/* set, but to the default value */
			assert_true(def);
		} else if (strcmp(arg, "net_bandwidth") == 0) {
			assert_string_equal(value, "50.00 GB/s");
			assert_true(def);
		} else if (strcmp(arg, "probe_ports") == 0) {
			assert_string_equal(key, "ProbePorts");
			assert_string_equal(value, "500-599");
			assert_true(def);
		} else if (strcmp(arg, "probe_fanout") == 0) {
			assert_string_equal(value, "16");
			assert_true(def);
		} else if (strcmp(arg, "spool_dir") == 0) {
			assert_string_equal(value, "/var/spool/dtplan");
			assert_true(def);
		} else if (strcmp(arg, "site") == 0) {
			assert_string_equal(key, "");
		} else if (strcmp(arg, "fabric_format") == 0) {
			assert_string_equal(key, "FabricFormat");
			assert_string_equal(value, "auto");
			assert_true(def);
		} else if (strcmp(arg, "nccl_ib_hca") == 0) {
			assert_string_equal(key, ""); /* plugstack.conf only */
			assert_string_equal(value, "node");
			assert_false(def);
		}
	}
	/* 43 settings: 40 site keys plus site=, topology= and nccl_ib_hca= */
	assert_int_equal(n, 43);
	assert_false(dtplan_config_setting(NULL, 0, NULL, NULL, NULL, 0, NULL));
	assert_string_equal(dtplan_mode_name(DTPLAN_MODE_AUTO), "auto");
	assert_string_equal(dtplan_policy_name(DTPLAN_POLICY_DENY), "deny");
	assert_string_equal(dtplan_policy_name(7), "?");
	dtplan_config_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(config_init__defaults__documented_values),
		cmocka_unit_test(config_parse_file__every_key__values_with_units),
		cmocka_unit_test(config_parse_string__switch_ratios__downlink_over_uplink),
		cmocka_unit_test(config_parse_string__bad_lines__error_names_file_line_key_value),
		cmocka_unit_test(config_parse_string__repeats_and_blank__accepted),
		cmocka_unit_test(config_parse_file__missing__io_error_names_path),
		cmocka_unit_test(config_parse_string__100000_switches__indexed_and_merged),
		cmocka_unit_test(config_parse_string__million_name_lines__bounded_in_all),
		cmocka_unit_test(config_parse_string__switch_limit__range_error),
		cmocka_unit_test(config_parse_file__not_regular_or_huge__refused_naming_path),
		cmocka_unit_test(config_parse_args__plugstack_tokens__applied),
		cmocka_unit_test(config_parse_args__probe_settings__applied),
		cmocka_unit_test(config_parse_args__nccl_ib_hca__off_or_node),
		cmocka_unit_test(config_parse_args__relative_paths__read_in_conf_dir),
		cmocka_unit_test(config_parse_args__site_file__read_then_overridden),
		cmocka_unit_test(config_parse_args__bad_tokens__error_names_token),
		cmocka_unit_test(config_apply_topology__switch_settings__copied_or_not_found),
		cmocka_unit_test(config_nodeset_for__hostnames__first_matching_set),
		cmocka_unit_test(config_setting__defaults_marked__changed_not),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
