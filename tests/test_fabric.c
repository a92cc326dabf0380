/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fabric_json.c: fabric descriptions as a service serves them
 * (dtplan.fabric/1 JSON and topology.conf), their export, and the reports a
 * collector receives.
 */
#include "test_common.h"

#include "dtprobes.h"

/* The tree and settings of topology.conf plus a site file, as files give them. */
static void load_files(const char *topo, const char *site, struct dtplan_topology **t,
		       struct dtplan_config *c)
{
	dtplan_config_init(c);
	assert_int_equal(dtplan_topology_parse_file(test_data_path(topo), t, NULL), DTPLAN_OK);
	if (site != NULL)
		assert_int_equal(dtplan_config_parse_file(c, test_data_path(site), NULL),
				 DTPLAN_OK);
	assert_int_equal(dtplan_config_apply_topology(c, *t, NULL), DTPLAN_OK);
}

/* Every switch and node of a and b agree, and the fabric parts of two configs. */
static void assert_same_fabric(const struct dtplan_topology *a, const struct dtplan_config *ca,
			       const struct dtplan_topology *b, const struct dtplan_config *cb)
{
	assert_int_equal(a->n_switches, b->n_switches);
	for (size_t i = 0; i < a->n_switches; i++) {
		const struct dtplan_switch *x = &a->switches[i], *y = &b->switches[i];

		assert_string_equal(x->name, y->name);
		assert_int_equal(x->parent, y->parent);
		assert_int_equal(x->level, y->level);
		/* bit-equal: written with 17 digits */
		assert_true(x->link_speed == y->link_speed);
		assert_true(x->oversubscription == y->oversubscription);
		assert_true(x->uplink_bytes_per_s == y->uplink_bytes_per_s);
	}
	assert_int_equal(a->n_nodes, b->n_nodes);
	for (size_t i = 0; i < a->n_nodes; i++) {
		assert_string_equal(a->node_names[i], b->node_names[i]);
		assert_int_equal(a->node_leaf[i], b->node_leaf[i]);
	}
	assert_true(ca->net_bytes_per_s == cb->net_bytes_per_s);
	assert_true(ca->net_latency_s == cb->net_latency_s);
	assert_true(ca->nvlink_bytes_per_s == cb->nvlink_bytes_per_s);
	assert_true(ca->nvlink_latency_s == cb->nvlink_latency_s);
	assert_string_equal(ca->gpu_type, cb->gpu_type);
	assert_int_equal(ca->n_nodesets, cb->n_nodesets);
	for (size_t i = 0; i < ca->n_nodesets; i++) {
		assert_string_equal(ca->nodesets[i].nodes, cb->nodesets[i].nodes);
		assert_string_equal(ca->nodesets[i].gpu_type, cb->nodesets[i].gpu_type);
		assert_int_equal(ca->nodesets[i].gpus_per_node, cb->nodesets[i].gpus_per_node);
		assert_string_equal(ca->nodesets[i].nvlink_domain, cb->nodesets[i].nvlink_domain);
	}
}

static const struct {
	const char *topology, *site;
} export_cases[] = {
	{"topology-two-racks.conf", "dtplan-two-racks.conf"},
	{"topology-three-leaves.conf", "dtplan-three-leaves.conf"},
	{"topology-three-level.conf", NULL},              /* link speeds, three levels */
	{"topology-two-leaves.conf", "dtplan-full.conf"}, /* node sets, NVLink, GPU type */
};

static void fabric_to_json__files__parse_and_apply_give_the_same_fabric(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(export_cases) / sizeof(export_cases[0]); k++) {
		struct dtplan_topology *t = NULL;
		struct dtplan_config c, base, applied;
		struct dtplan_fabric_desc *f = NULL;
		struct dtplan_error err = {0};
		char *json = NULL;

		load_files(export_cases[k].topology, export_cases[k].site, &t, &c);
		assert_int_equal(dtplan_fabric_to_json(t, &c, true, &json, &err), DTPLAN_OK);
		assert_non_null(strstr(json, "\"schema\": \"dtplan.fabric/1\""));
		if (dtplan_fabric_desc_parse(json, strlen(json), DTPLAN_FABRIC_JSON, "export", &f,
					     &err) != DTPLAN_OK)
			fail_msg("%s: %s\n%s", export_cases[k].topology, err.text, json);
		assert_int_equal(f->format, DTPLAN_FABRIC_JSON);
		assert_non_null(f->site_text);
		/* The fabric replaces whatever switch settings the base had. */
		dtplan_config_init(&base);
		assert_int_equal(dtplan_config_parse_string(&base,
							    "SwitchName=nothere "
							    "Oversubscription=8\n",
							    "base", NULL),
				 DTPLAN_OK);
		if (dtplan_fabric_desc_apply(f, &base, &applied, &err) != DTPLAN_OK)
			fail_msg("%s: %s", export_cases[k].topology, err.text);
		assert_same_fabric(t, &c, f->topology, &applied);
		assert_int_equal(applied.n_switches, c.n_switches);
		free(json);
		dtplan_fabric_desc_destroy(f);
		dtplan_config_fini(&applied);
		dtplan_config_fini(&base);
		dtplan_config_fini(&c);
		dtplan_topology_destroy(t);
	}
}

/* topology-two-racks.conf and dtplan-two-racks.conf written by hand: the
 * parent form, arrays of names, units in strings. */
static const char two_racks_json[] =
	"{\"schema\": \"dtplan.fabric/1\",\n"
	" \"network\": {\"bandwidth\": \"400Gb/s\"},\n"
	" \"x-generated-by\": \"a test\",\n"
	" \"switches\": [\n"
	"  {\"name\": \"leaf1\", \"nodes\": \"gpu[01-08]\", \"parent\": \"spine\",\n"
	"   \"oversubscription\": \"4:1\"},\n"
	"  {\"name\": \"leaf2\", \"nodes\": [\"gpu09\", \"gpu10\", \"gpu11\", \"gpu12\",\n"
	"   \"gpu13\", \"gpu14\", \"gpu15\", \"gpu16\"], \"oversubscription\": 4},\n"
	"  {\"name\": \"spine\", \"switches\": [\"leaf2\"]}]}\n";

static void fabric_parse__hand_written_json__same_as_files(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_config c, base, applied;
	struct dtplan_fabric_desc *f = NULL;
	struct dtplan_error err = {0};

	(void)state;
	load_files("topology-two-racks.conf", "dtplan-two-racks.conf", &t, &c);
	if (dtplan_fabric_desc_parse(two_racks_json, strlen(two_racks_json), DTPLAN_FABRIC_JSON,
				     "svc", &f, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	dtplan_config_init(&base);
	base.oversub_threshold = 2; /* as dtplan-two-racks.conf: not a fabric value */
	assert_int_equal(dtplan_fabric_desc_apply(f, &base, &applied, &err), DTPLAN_OK);
	/* leaf1 is under spine by its "parent", leaf2 by spine's "switches" */
	assert_int_equal(f->topology->switches[0].parent, 2);
	assert_int_equal(f->topology->switches[1].parent, 2);
	assert_same_fabric(t, &c, f->topology, &applied);
	assert_near(applied.oversub_threshold, 2, 0);
	dtplan_fabric_desc_destroy(f);
	dtplan_config_fini(&applied);
	dtplan_config_fini(&base);
	dtplan_config_fini(&c);
	dtplan_topology_destroy(t);
}

/* two_racks_json with strings that hold brackets, quotes and commas, blanks
 * between every token and "switches" before the other members: the same
 * fabric (the switches are cut from the text before each is parsed). */
static const char two_racks_spaced_json[] =
	"\r\n{ \"switches\" : [ { \"x-note\" : \"]},\\\"[{\" , \"name\":\"leaf1\",\n"
	"  \"nodes\" : \"gpu[01-08]\", \"parent\": \"sp\\u0069ne\", \"oversubscription\": "
	"\"4:1\",\n"
	"  \"x-deep\": {\"a\": [[\"]\", {\"b\": \"}\"}], 1e3, -0.5, true, null]} } ,\n"
	"  {\"name\": \"leaf2\", \"nodes\": [\"gpu09\", \"gpu10\", \"gpu11\", \"gpu12\",\n"
	"   \"gpu13\", \"gpu14\", \"gpu15\", \"gpu16\"], \"oversubscription\": 4},\n"
	"  {\"name\": \"spine\", \"switches\": [\"leaf2\"]}\t] ,\n"
	" \"schema\": \"dtplan.fabric/1\", \"x-s\": \"\\\\\",\n"
	" \"network\": {\"bandwidth\": \"400Gb/s\"}, \"x-generated-by\": \"a test\" }\n\n";

static void fabric_parse__blanks_and_brackets_in_strings__same_fabric(void **state)
{
	struct dtplan_fabric_desc *a = NULL, *b = NULL;
	struct dtplan_error err = {0};

	(void)state;
	if (dtplan_fabric_desc_parse(two_racks_json, strlen(two_racks_json), DTPLAN_FABRIC_JSON,
				     "svc", &a, &err) != DTPLAN_OK ||
	    dtplan_fabric_desc_parse(two_racks_spaced_json, strlen(two_racks_spaced_json),
				     DTPLAN_FABRIC_JSON, "svc", &b, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(a->topology->n_switches, b->topology->n_switches);
	assert_int_equal(a->topology->n_nodes, b->topology->n_nodes);
	for (size_t i = 0; i < a->topology->n_switches; i++) {
		assert_string_equal(a->topology->switches[i].name, b->topology->switches[i].name);
		assert_int_equal(a->topology->switches[i].parent, b->topology->switches[i].parent);
	}
	for (size_t i = 0; i < a->topology->n_nodes; i++)
		assert_string_equal(a->topology->node_names[i], b->topology->node_names[i]);
	assert_string_equal(a->site_text, b->site_text);
	dtplan_fabric_desc_destroy(a);
	dtplan_fabric_desc_destroy(b);
}

/*
 * Read for some nodes (a job's), the tree holds the switches over them and
 * no other, and the site text their settings; every check of the answer
 * still runs on all of it, topology.conf's reader on what is kept, and an
 * answer naming two switches alike or none over the nodes is read whole.
 */
static void fabric_parse_for__job_nodes__their_switches_only(void **state)
{
	static const char two_leaves_bad_speed[] =
		"{\"schema\": \"dtplan.fabric/1\", \"switches\": [\n"
		" {\"name\": \"leaf1\", \"nodes\": \"gpu[01-08]\", \"parent\": \"spine\"},\n"
		" {\"name\": \"leaf2\", \"nodes\": \"gpu[09-16]\", \"parent\": \"spine\", "
		"\"link_speed\": -1},\n"
		" {\"name\": \"spine\"}]}";
	static const char bad_nodes[] =
		"{\"schema\": \"dtplan.fabric/1\", \"switches\": [\n"
		" {\"name\": \"leaf1\", \"nodes\": \"gpu[01-08\", \"parent\": \"spine\"},\n"
		" {\"name\": \"spine\"}]}";
	static const char twice[] = "{\"schema\": \"dtplan.fabric/1\", \"switches\": [\n"
				    " {\"name\": \"leaf1\", \"nodes\": \"gpu[01-08]\"},\n"
				    " {\"name\": \"leaf1\", \"nodes\": \"gpu[09-16]\"}]}";
	struct dtplan_fabric_desc *f = NULL;
	struct dtplan_error err = {0};

	(void)state;
	/* gpu02 and gpu03: leaf1 (the "parent" form) and spine; not leaf2 */
	if (dtplan_fabric_desc_parse_for(two_racks_json, strlen(two_racks_json), DTPLAN_FABRIC_JSON,
					 "svc", "gpu[02-03]", &f, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(f->topology->n_switches, 2);
	assert_string_equal(f->topology->switches[0].name, "leaf1");
	assert_string_equal(f->topology->switches[1].name, "spine");
	assert_int_equal(f->topology->switches[0].parent, 1);
	assert_int_equal(f->topology->n_nodes, 8);
	assert_non_null(strstr(f->site_text, "SwitchName=leaf1 Oversubscription=4:1\n"));
	assert_null(strstr(f->site_text, "leaf2"));
	dtplan_fabric_desc_destroy(f);
	f = NULL;
	/* gpu10 (named in an array) and an unknown node: leaf2 (spine's
	 * "switches") and spine */
	if (dtplan_fabric_desc_parse_for(two_racks_json, strlen(two_racks_json), DTPLAN_FABRIC_JSON,
					 "svc", "gpu10,other1", &f, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(f->topology->n_switches, 2);
	assert_string_equal(f->topology->switches[0].name, "leaf2");
	assert_int_equal(f->topology->switches[0].parent, 1);
	dtplan_fabric_desc_destroy(f);
	f = NULL;
	/* nodes under no switch: the whole tree */
	assert_int_equal(dtplan_fabric_desc_parse_for(two_racks_json, strlen(two_racks_json),
						      DTPLAN_FABRIC_JSON, "svc", "other[1-4]", &f,
						      &err),
			 DTPLAN_OK);
	assert_int_equal(f->topology->n_switches, 3);
	dtplan_fabric_desc_destroy(f);
	f = NULL;
	/* a fault of a switch not kept, as the answer's own check finds it */
	assert_int_equal(dtplan_fabric_desc_parse_for(two_leaves_bad_speed,
						      strlen(two_leaves_bad_speed),
						      DTPLAN_FABRIC_JSON, "svc", "gpu01", &f, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "switches[1] (leaf2)"));
	assert_null(f);
	/* a kept switch's nodes that are no hostlist: topology.conf's reader's words */
	assert_int_equal(dtplan_fabric_desc_parse_for(bad_nodes, strlen(bad_nodes),
						      DTPLAN_FABRIC_JSON, "svc", "gpu01", &f, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "switches[0] (leaf1): Nodes=gpu[01-08: "));
	assert_null(f);
	/* a name given twice: read whole, and refused as whole */
	assert_int_equal(dtplan_fabric_desc_parse_for(twice, strlen(twice), DTPLAN_FABRIC_JSON,
						      "svc", "gpu01", &f, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "switch 'leaf1' is defined twice"));
	assert_null(f);
}

static void fabric_parse__topology_conf__tree_only_site_switches_apply(void **state)
{
	static const char text[] = "  # served by a topology service\n"
				   "SwitchName=leaf1 Nodes=gpu[01-08]\n"
				   "SwitchName=leaf2 Nodes=gpu[09-16]\n"
				   "SwitchName=spine Switches=leaf[1-2]\n";
	struct dtplan_config site, applied;
	struct dtplan_fabric_desc *f = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_fabric_desc_parse(text, strlen(text), DTPLAN_FABRIC_TOPOLOGY_CONF,
						  "svc", &f, &err),
			 DTPLAN_OK);
	assert_int_equal(f->format, DTPLAN_FABRIC_TOPOLOGY_CONF);
	assert_string_equal(dtplan_fabric_format_name(f->format), "topology.conf");
	assert_null(f->site_text);
	assert_int_equal(f->topology->n_nodes, 16);
	dtplan_config_init(&site);
	assert_int_equal(dtplan_config_parse_file(&site, test_data_path("dtplan-two-racks.conf"),
						  NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_fabric_desc_apply(f, &site, &applied, &err), DTPLAN_OK);
	/* the site file's SwitchName=leaf[1-2] Oversubscription=4:1 */
	assert_near(f->topology->switches[0].oversubscription, 4, 0);
	assert_near(f->topology->switches[1].oversubscription, 4, 0);
	assert_near(f->topology->switches[2].oversubscription, 1, 0);
	assert_int_equal(applied.n_switches, 2); /* leaf[1-2]: one entry each */
	dtplan_config_fini(&applied);
	dtplan_fabric_desc_destroy(f);

	/* A site switch the served tree lacks is an error naming the site file. */
	assert_int_equal(dtplan_fabric_desc_parse("SwitchName=s1 Nodes=a[1-2]\n", 27,
						  DTPLAN_FABRIC_TOPOLOGY_CONF, "svc", &f, &err),
			 DTPLAN_OK);
	assert_int_equal(dtplan_fabric_desc_apply(f, &site, &applied, &err), DTPLAN_ERR_NOT_FOUND);
	assert_non_null(strstr(err.text, "SwitchName=leaf1: no switch 'leaf1' in the topology"));
	assert_null(applied.switches);
	dtplan_fabric_desc_destroy(f);
	dtplan_config_fini(&site);
}

static const struct {
	const char *text;
	enum dtplan_err code;
	const char *message;
} bad_cases[] = {
	{"", DTPLAN_ERR_PARSE, "the answer is empty"},
	{" \n\t", DTPLAN_ERR_PARSE, "the answer is empty"},
	{"{\"schema\": \"dtplan.fabric/1\",\n \"switches\": [}", DTPLAN_ERR_PARSE,
	 "not valid JSON"},
	{"{\"schema\": \"dtplan.fabric/2\", \"switches\": []}", DTPLAN_ERR_PARSE,
	 "schema: 'dtplan.fabric/2' is not dtplan.fabric/1"},
	{"{\"switches\": []}", DTPLAN_ERR_PARSE, "schema: missing"},
	{"{\"schema\": 1, \"switches\": []}", DTPLAN_ERR_PARSE, "schema: expected a string"},
	{"[1, 2]", DTPLAN_ERR_PARSE, "'[1,' is not Key=Value"}, /* not '{': topology.conf */
	{"<html><body>502 Bad Gateway</body></html>", DTPLAN_ERR_PARSE, "is not Key=Value"},
	/* issue 26: an answer that looks like YAML is topology.conf text, as
	 * dtplan.conf(5) says, not a topology.yaml */
	{"- topology: t\n  cluster_default: true\n  flat: true\n", DTPLAN_ERR_PARSE,
	 "'-' is not Key=Value"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": []}", DTPLAN_ERR_PARSE,
	 "switches: must be a non-empty array"},
	/* the switches are read one at a time, and still said as the whole
	 * document says them: a fault of JSON anywhere before any fault of a
	 * switch, duplicate keys however written, each pass's fault in its turn */
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"nodes\": \"n1\"}, {\"name\": "
	 "\"b\" \"nodes\": \"n2\"}]}",
	 DTPLAN_ERR_PARSE, "not valid JSON"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "\"n1\"}], \"sw\\u0069tches\": []}",
	 DTPLAN_ERR_PARSE, "duplicate object key"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "\"n1\", \"name\": \"b\"}]}",
	 DTPLAN_ERR_PARSE, "duplicate object key"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "\"n1\", \"link_speed\": -1, \"parent\": 7}, {\"name\": \"b\", \"switches\": 7}]}",
	 DTPLAN_ERR_PARSE, "switches[1] (b): \"switches\" must be a hostlist string"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "\"n1\", \"link_speed\": -1}, {\"name\": \"b\", \"nodes\": \"n2\", \"parent\": 7}]}",
	 DTPLAN_ERR_PARSE, "switches[1] (b).parent: expected a string"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "\"n1\", \"link_speed\": -1}, {\"name\": \"b\", \"nodes\": [\"n2\", 3]}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): \"link_speed\": -1 is not a value"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "\"n1\"}, {\"name\": \"b\", \"nodes\": [\"n2\", 3]}]}",
	 DTPLAN_ERR_PARSE, "switches[1] (b): \"nodes\"[1] is not a name"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "\"n1\"}, {\"name\": \"b\", \"switches\": [\"a\", 3]}]}",
	 DTPLAN_ERR_PARSE, "switches[1] (b): \"switches\"[1] is not a name"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switch\": [], \"switches\": [{\"name\": \"a\", "
	 "\"nodes\": \"n1\"}]}",
	 DTPLAN_ERR_PARSE, "document: unknown key 'switch'"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"nodes\": \"n1\"}]}", DTPLAN_ERR_PARSE,
	 "switches[0].name: missing"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": 7, \"nodes\": \"n1\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0].name: expected a string"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a b\", \"nodes\": "
	 "\"n1\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0]: \"name\" must be a switch name"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\", "
	 "\"parent\": [\"b\"]}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a).parent: expected a string"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\", "
	 "\"uplink\": 5}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): unknown key 'uplink'"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1 "
	 "n2\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): \"nodes\": 'n1 n2' is not a hostlist"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": "
	 "[\"n1\", \"n[2-3]\"]}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): \"nodes\"[1] is not a name"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\", "
	 "\"parent\": \"b\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): parent 'b' is not a switch of \"switches\""},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\", "
	 "\"parent\": \"c\"}, {\"name\": \"b\", \"switches\": [\"a\"]}, {\"name\": \"c\", "
	 "\"switches\": \"b\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): parent 'c', but 'b' lists it in \"switches\""},
	/* the topology parser's own checks, named by element */
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}, "
	 "{\"name\": \"s\", \"switches\": [\"a\", \"z\"]}]}",
	 DTPLAN_ERR_PARSE, "switches[1] (s): switch 's': child switch 'z' is not defined"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}, "
	 "{\"name\": \"b\", \"nodes\": \"n[1-2]\"}]}",
	 DTPLAN_ERR_PARSE, "switches[1] (b): node 'n1' is under two leaf switches"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"switches\": "
	 "\"b\"}, {\"name\": \"b\", \"switches\": \"a\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): a cycle of parents: a -> b -> a"},
	/* a cycle through "parent" and a leaf: it used to be told as the leaf
	 * having both Nodes= and Switches= (issue 26) */
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"leaf1\", \"nodes\": "
	 "\"n1\", \"parent\": \"spine\"}, {\"name\": \"spine\", \"parent\": \"leaf1\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (leaf1): a cycle of parents: leaf1 -> spine -> leaf1"},
	/* lists of children are bounded before they expand: each switch has one
	 * parent, so the lists name at most the answer's switches */
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}, "
	 "{\"name\": \"s\", \"switches\": \"c[1-1000000]\"}]}",
	 DTPLAN_ERR_PARSE,
	 "switches[1] (s): \"switches\": the answer's lists name more than its 2 "
	 "switches"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}, "
	 "{\"name\": \"s\", \"switches\": [\"a\", \"b\", \"c\"]}]}",
	 DTPLAN_ERR_PARSE,
	 "switches[1] (s): \"switches\": the answer's lists name more than its 2 "
	 "switches"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\"}]}", DTPLAN_ERR_PARSE,
	 "switches[0] (a): switch 'a' has neither Nodes= nor Switches="},
	/* the site parser's */
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\", "
	 "\"oversubscription\": \"4:0\"}]}",
	 DTPLAN_ERR_PARSE, "switches[0] (a): Oversubscription: '4:0' is not a ratio"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\", "
	 "\"uplink_bandwidth\": -5}]}",
	 DTPLAN_ERR_PARSE, "\"uplink_bandwidth\": -5 is not a value of zero or more"},
	{"{\"schema\": \"dtplan.fabric/1\", \"network\": {\"bandwidth\": \"fast\"}, "
	 "\"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}]}",
	 DTPLAN_ERR_PARSE, "network.bandwidth: NetworkBandwidth: 'fast' is not a number"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}], "
	 "\"node_sets\": [{\"nodes\": \"n1\", \"gpu_type\": \"v100\"}]}",
	 DTPLAN_ERR_NOT_FOUND, "node_sets[0] (n1): GpuType: unknown GPU type 'v100'"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}], "
	 "\"node_sets\": [{\"nodes\": \"n[1-2]\", \"gpus\": 8}, {\"nodes\": \"n2\", \"gpus\": 4}]}",
	 DTPLAN_ERR_PARSE, "node_sets[1] (n2): node 'n2' of NodeName=n2 is already in"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}], "
	 "\"node_sets\": [{\"gpus\": 8}]}",
	 DTPLAN_ERR_PARSE, "node_sets[0]: \"nodes\" (a hostlist) is required"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}], "
	 "\"node_sets\": [{\"nodes\": \"n1\", \"gpus\": 1.5}]}",
	 DTPLAN_ERR_PARSE, "node_sets[0].gpus: expected a whole number"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}], "
	 "\"node_sets\": [{\"nodes\": \"n1\", \"gpu_type\": false}]}",
	 DTPLAN_ERR_PARSE, "node_sets[0].gpu_type: expected a string"},
	{"{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", \"nodes\": \"n1\"}], "
	 "\"gpu_type\": 3}",
	 DTPLAN_ERR_PARSE, "gpu_type: expected a string"},
};

static void fabric_parse__bad_answers__error_names_the_element(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct dtplan_fabric_desc *f = (struct dtplan_fabric_desc *)1;
		struct dtplan_error err = {0};
		enum dtplan_err rv;

		rv = dtplan_fabric_desc_parse(bad_cases[i].text, strlen(bad_cases[i].text),
					      bad_cases[i].text[0] == '{'
						      ? DTPLAN_FABRIC_JSON
						      : DTPLAN_FABRIC_TOPOLOGY_CONF,
					      "http://svc/f", &f, &err);
		if (rv != bad_cases[i].code || strstr(err.text, bad_cases[i].message) == NULL)
			fail_msg("case %zu: got %d '%s', expected %d '%s'", i, rv, err.text,
				 bad_cases[i].code, bad_cases[i].message);
		assert_null(f);
		assert_string_equal(err.source, "http://svc/f");
	}
}

/*
 * Large answers stay linear: 200,000 switches, each leaf naming its parent
 * (\"parent\") and one spine over them, read once; the hostile answer of
 * issue 26 (a couple of kilobytes whose every spine names c[1-1000000]) is
 * refused before anything expands.  (Their times are bench_parse's rows.)
 */
static void fabric_parse__large_and_hostile_answers__linear_and_bounded(void **state)
{
	size_t n = test_scaled(200000), size = 200000 * 64 + 256, len = 0;
	char *text = malloc(size);
	struct dtplan_fabric_desc *f = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_non_null(text);
	len += (size_t)
		snprintf(text + len, size - len,
			 "{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"spine\"}");
	for (size_t i = 0; i < n - 1; i++)
		len += (size_t)snprintf(
			text + len, size - len,
			",{\"name\":\"l%zu\",\"nodes\":\"n%zu\",\"parent\":\"spine\"}", i, i);
	len += (size_t)snprintf(text + len, size - len, "]}");
	assert_int_equal(dtplan_fabric_desc_parse(text, len, DTPLAN_FABRIC_JSON, "svc", &f, &err),
			 DTPLAN_OK);
	assert_int_equal(f->topology->n_switches, n);
	assert_int_equal(f->topology->n_nodes, n - 1);
	dtplan_fabric_desc_destroy(f);
	f = NULL;
	/* 30 spines, each over a million children */
	len = (size_t)snprintf(text, size,
			       "{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", "
			       "\"nodes\": \"n1\"}");
	for (int i = 0; i < 30; i++)
		len += (size_t)snprintf(text + len, size - len,
					",{\"name\":\"s%d\",\"switches\":\"c[1-1000000]\"}", i);
	len += (size_t)snprintf(text + len, size - len, "]}");
	assert_true(len < 2048);
	assert_int_equal(dtplan_fabric_desc_parse(text, len, DTPLAN_FABRIC_JSON, "svc", &f, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "the answer's lists name more than its 31 switches"));
	assert_null(f);
	free(text);
}

static void fabric_parse__nul_byte_or_null__refused(void **state)
{
	struct dtplan_fabric_desc *f = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_fabric_desc_parse("SwitchName=a Nodes=n1\0x", 23,
						  DTPLAN_FABRIC_TOPOLOGY_CONF, "svc", &f, &err),
			 DTPLAN_ERR_PARSE);
	assert_string_equal(err.text, "the answer holds a NUL byte");
	assert_int_equal(dtplan_fabric_desc_parse(NULL, 0, DTPLAN_FABRIC_JSON, "svc", &f, &err),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_fabric_desc_parse("x", 1, DTPLAN_FABRIC_TOPOLOGY_CONF, "svc", NULL,
						  &err),
			 DTPLAN_ERR_INVAL);
	dtplan_fabric_desc_destroy(NULL);
}

static void fabric_to_json__site_switch_not_in_tree__not_found(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_config c;
	struct dtplan_error err = {0};
	char *json = (char *)1;

	(void)state;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_topology_parse_file(test_data_path("topology-two-leaves.conf"), &t,
						    NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_config_parse_file(&c, test_data_path("dtplan-unknown-switch.conf"),
						  NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_fabric_to_json(t, &c, false, &json, &err), DTPLAN_ERR_NOT_FOUND);
	assert_null(json);
	assert_non_null(strstr(err.text, "no switch 'leaf9' in the topology"));
	dtplan_config_fini(&c);
	dtplan_topology_destroy(t);
}

/* A small plan without a cluster, as JSON. */
static char *small_plan_json(void)
{
	struct dtplan_request req;
	struct dtplan_plan *plan = NULL;
	char *json = NULL;

	dtplan_request_init(&req);
	assert_int_equal(dtplan_model_parse("7B", &req.model, NULL), DTPLAN_OK);
	req.gpus = 8;
	assert_int_equal(dtplan_plan_create(&req, NULL, &plan, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_add_warning(plan, "fabric-service", "service down"),
			 DTPLAN_OK);
	assert_int_equal(dtplan_plan_to_json(plan, true, &json, NULL), DTPLAN_OK);
	dtplan_plan_destroy(plan);
	return json;
}

static void report_to_json__plan_and_job__every_field(void **state)
{
	struct dtplan_report r = {0};
	struct dtplan_error err = {0};
	char *plan = small_plan_json(), *out = NULL;

	(void)state;
	r.plan_json = plan;
	r.job_id = 4242;
	r.cluster = "c1";
	r.user = "alice";
	r.uid = 1000;
	r.nodes = "n[1-2]";
	r.host = "n1";
	r.sender = "plugin";
	r.time = 86400 * 365; /* 1971-01-01 */
	assert_int_equal(dtplan_report_to_json(&r, &out, &err), DTPLAN_OK);
	assert_non_null(strstr(out, "{\"schema\":\"dtplan.report/1\",\"dtplan_version\":"));
	assert_non_null(strstr(out, "\"sender\":\"plugin\",\"time\":\"1971-01-01T00:00:00Z\","
				    "\"cluster\":\"c1\",\"job_id\":4242,\"user\":\"alice\","
				    "\"uid\":1000,\"nodes\":\"n[1-2]\",\"host\":\"n1\","
				    "\"state\":\"ok\",\"reason\":null,\"warnings\":[{\"code\":"
				    "\"fabric-service\",\"message\":\"service down\"}"));
	assert_non_null(strstr(out, ",\"plan\":{\"schema\":\"dtplan.plan/1\""));
	/* one line: a collector may store reports one per line */
	assert_null(strchr(out, '\n'));
	free(out);

	/* No plan: state degraded with the reason, plan null. */
	memset(&r, 0, sizeof(r));
	r.uid = -1;
	r.reason = "--dt-model: not given";
	assert_int_equal(dtplan_report_to_json(&r, &out, &err), DTPLAN_OK);
	assert_non_null(strstr(out, "\"time\":null,\"cluster\":null,\"job_id\":null,\"user\":null,"
				    "\"uid\":null,\"nodes\":null,\"host\":null,\"state\":"
				    "\"degraded\",\"reason\":\"--dt-model: not given\","
				    "\"warnings\":[],\"plan\":null}"));
	free(out);
	free(plan);
}

static void report_to_json__not_a_plan__parse_error(void **state)
{
	struct dtplan_report r = {.uid = -1};
	struct dtplan_error err = {0};
	char *out = (char *)1;

	(void)state;
	r.plan_json = "{\"schema\": \"dtplan.fabric/1\"}";
	assert_int_equal(dtplan_report_to_json(&r, &out, &err), DTPLAN_ERR_PARSE);
	assert_null(out);
	assert_non_null(strstr(err.text, "not a dtplan.plan/1 document (schema dtplan.fabric/1)"));
	r.plan_json = "{\"schema\": ";
	assert_int_equal(dtplan_report_to_json(&r, &out, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "not valid JSON"));
	assert_int_equal(dtplan_report_to_json(NULL, &out, &err), DTPLAN_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fabric_to_json__files__parse_and_apply_give_the_same_fabric),
		cmocka_unit_test(fabric_parse__hand_written_json__same_as_files),
		cmocka_unit_test(fabric_parse__blanks_and_brackets_in_strings__same_fabric),
		cmocka_unit_test(fabric_parse_for__job_nodes__their_switches_only),
		cmocka_unit_test(fabric_parse__topology_conf__tree_only_site_switches_apply),
		cmocka_unit_test(fabric_parse__bad_answers__error_names_the_element),
		cmocka_unit_test(fabric_parse__large_and_hostile_answers__linear_and_bounded),
		cmocka_unit_test(fabric_parse__nul_byte_or_null__refused),
		cmocka_unit_test(fabric_to_json__site_switch_not_in_tree__not_found),
		cmocka_unit_test(report_to_json__plan_and_job__every_field),
		cmocka_unit_test(report_to_json__not_a_plan__parse_error),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
