/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_topology.c: topology.conf, SLURM_TOPOLOGY_ADDR trees and the lookups
 * placement uses.
 */
#include "test_common.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct dtplan_topology *parse_ok(const char *text)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};
	char buf[1024];

	if (dtplan_topology_parse_string(text, "test.conf", &t, &err) != DTPLAN_OK)
		fail_msg("parse failed: %s", dtplan_error_format(&err, buf, sizeof(buf)));
	return t;
}

static void topology_parse_string__two_leaves__tree_and_levels(void **state)
{
	struct dtplan_topology *t = parse_ok("# comment\n"
					     "\n"
					     "SwitchName=leaf1 Nodes=node[1-4]\n"
					     "SwitchName=leaf2 Nodes=node[5-8]\n"
					     "SwitchName=spine Switches=leaf[1-2]\n");
	int l1, l2, sp;

	(void)state;
	assert_int_equal(t->n_switches, 3);
	assert_int_equal(t->n_nodes, 8);
	l1 = dtplan_topology_switch_index(t, "leaf1");
	l2 = dtplan_topology_switch_index(t, "leaf2");
	sp = dtplan_topology_switch_index(t, "spine");
	assert_true(l1 >= 0 && l2 >= 0 && sp >= 0);
	assert_int_equal(t->switches[l1].level, 0);
	assert_int_equal(t->switches[sp].level, 1);
	assert_int_equal(t->switches[l1].parent, sp);
	assert_int_equal(t->switches[l2].parent, sp);
	assert_int_equal(t->switches[sp].parent, -1);
	assert_near(t->switches[l1].oversubscription, 1.0, 0);
	assert_string_equal(t->node_names[0], "node1");
	assert_int_equal(t->node_leaf[dtplan_topology_node_index(t, "node6")], l2);
	assert_int_equal(dtplan_topology_node_index(t, "node9"), -1);
	assert_int_equal(dtplan_topology_switch_index(t, "leaf3"), -1);
	assert_int_equal(dtplan_topology_switch_index(t, NULL), -1);
	assert_int_equal(dtplan_topology_node_index(NULL, "node1"), -1);
	dtplan_topology_destroy(t);
}

static void topology_parse_file__three_levels__levels_and_link_speed(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};
	int leaf1, leaf4, agg1, spine;

	(void)state;
	assert_int_equal(dtplan_topology_parse_file(test_data_path("topology-three-level.conf"), &t,
						    &err),
			 DTPLAN_OK);
	assert_int_equal(t->n_switches, 7);
	assert_int_equal(t->n_nodes, 16);
	leaf1 = dtplan_topology_switch_index(t, "leaf1");
	leaf4 = dtplan_topology_switch_index(t, "leaf4");
	agg1 = dtplan_topology_switch_index(t, "agg1");
	spine = dtplan_topology_switch_index(t, "spine");
	assert_int_equal(t->switches[agg1].level, 1);
	assert_int_equal(t->switches[spine].level, 2);
	/* 400 Gb/s = 400e9 / 8 = 50e9 bytes/s; a bare 100 is Slurm's weight: unknown */
	assert_near(t->switches[leaf1].link_speed, 50e9, 1);
	assert_near(t->switches[leaf4].link_speed, 0, 0);
	assert_int_equal(t->node_leaf[dtplan_topology_node_index(t, "node09")],
			 dtplan_topology_switch_index(t, "leaf3"));
	dtplan_topology_destroy(t);
}

struct bad_case {
	const char *text;
	enum dtplan_err code;
	int line;
	const char *msg; /* substring of the message */
};

/*
 * Issue 13, finding 7: twelve short lines of million-node hostlists took
 * 1.2 GB.  A topology names at most DTPLAN_HOSTLIST_MAX nodes in all: the
 * second leaf of 600,000 is refused, naming its line.
 */
static void topology_parse_string__million_node_leaves__bounded_in_all(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_topology_parse_string("SwitchName=s1 Nodes=a[1-600000]\n"
						      "SwitchName=s2 Nodes=b[1-600000]\n",
						      "wide.conf", &t, &err),
			 DTPLAN_ERR_RANGE);
	assert_null(t);
	assert_string_equal(err.source, "wide.conf");
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.text, "Nodes=b[1-600000]: the file names more than 1048576 "
					 "nodes in all"));
}

static void topology_parse_string__bad_files__error_names_file_and_line(void **state)
{
	static const struct bad_case cases[] = {
		{"SwitchName=a Nodes=n1 Foo=1\n", DTPLAN_ERR_PARSE, 1, "unknown key 'Foo'"},
		{"SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", DTPLAN_ERR_PARSE, 2,
		 "switch 'a' is defined twice (first at line 1)"},
		{"SwitchName=a Nodes=n1\n#\nSwitchName=s Switches=a,b\n", DTPLAN_ERR_PARSE, 3,
		 "child switch 'b' is not defined"},
		{"SwitchName=a Nodes=n1\nSwitchName=b Switches=a,c\nSwitchName=c Switches=b\n",
		 DTPLAN_ERR_PARSE, 2, "switch 'b' is its own ancestor"},
		{"SwitchName=s Switches=s\n", DTPLAN_ERR_PARSE, 1, "lists itself"},
		/* bounded before it expands (issue 26): a switch has one parent */
		{"SwitchName=a Nodes=n1\nSwitchName=s Switches=c[1-1000000]\n", DTPLAN_ERR_PARSE, 2,
		 "Switches=c[1-1000000]: the file's Switches= name more than its 2 switches"},
		{"SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n", DTPLAN_ERR_PARSE, 2,
		 "node 'n2' is under two leaf switches: 'a' (line 1) and 'b'"},
		{"SwitchName=a Nodes=n1\nSwitchName=s1 Switches=a\nSwitchName=s2 Switches=a\n",
		 DTPLAN_ERR_PARSE, 3, "switch 'a' is under two switches: 's1' (line 2) and 's2'"},
		{"# nothing here\n\n", DTPLAN_ERR_PARSE, 0, "no switches defined"},
		{"", DTPLAN_ERR_PARSE, 0, "no switches defined"},
		{"Nodes=n1\n", DTPLAN_ERR_PARSE, 1, "no SwitchName="},
		/* topology.conf lines on the one Key=Value engine (lib/base/kv.c):
		 * the list mistakes in the words of the site file's SwitchName=
		 * and NodeName= lines, --dt-train and the model dimensions (the
		 * codes were the same; "X= given twice on one line", "X= has no
		 * value" and "(expected A, B or C)" were this file's own) */
		{"SwitchName=a Nodes=n1 junk\n", DTPLAN_ERR_PARSE, 1,
		 "'junk' is not Key=Value (keys: SwitchName, Switches, Nodes, LinkSpeed)"},
		{"SwitchName=a Nodes=n1 Speed=1\n", DTPLAN_ERR_PARSE, 1,
		 "unknown key 'Speed' (known: SwitchName, Switches, Nodes, LinkSpeed)"},
		{"SwitchName=a Nodes=n1 Switches=b\n", DTPLAN_ERR_PARSE, 1,
		 "both Nodes= and Switches="},
		{"SwitchName=a LinkSpeed=10\n", DTPLAN_ERR_PARSE, 1,
		 "neither Nodes= nor Switches="},
		{"\nSwitchName=a Nodes=node[3-1]\n", DTPLAN_ERR_PARSE, 2,
		 "Nodes=node[3-1]: hostlist 'node[3-1]': range 3-1 is reversed"},
		{"SwitchName=a Nodes=n1\nSwitchName=s Switches=a[\n", DTPLAN_ERR_PARSE, 2,
		 "Switches=a[: hostlist 'a[': '[' at offset 1 has no ']'"},
		{"SwitchName=a Nodes=n1 LinkSpeed=fast\n", DTPLAN_ERR_PARSE, 1,
		 "LinkSpeed: 'fast' is not a number"},
		{"SwitchName=a Nodes=n1 nodes=n2\n", DTPLAN_ERR_PARSE, 1,
		 "key 'nodes' given twice"},
		{"SwitchName=a Nodes=\n", DTPLAN_ERR_PARSE, 1, "key 'Nodes' has no value"},
		{"SwitchName=a.b Nodes=n1\n", DTPLAN_ERR_PARSE, 1, "not a valid switch name"},
		{"SwitchName=a Nodes=n[1-2000000]\n", DTPLAN_ERR_RANGE, 1, "names more than"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_topology *t = (void *)&cases; /* must be reset to NULL */
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_topology_parse_string(cases[i].text, "test.conf", &t, &err),
				 cases[i].code);
		assert_null(t);
		assert_string_equal(err.source, "test.conf");
		if (err.line != cases[i].line || strstr(err.text, cases[i].msg) == NULL)
			fail_msg("case %zu: got line %d '%s', expected line %d '%s'", i, err.line,
				 err.text, cases[i].line, cases[i].msg);
	}
}

static void topology_parse__null_and_missing_file__errors(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_topology_parse_string(NULL, "x", &t, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_topology_parse_string("SwitchName=a Nodes=b", "x", NULL, &err),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_topology_parse_file("/nonexistent/topology.conf", &t, &err),
			 DTPLAN_ERR_IO);
	assert_string_equal(err.source, "/nonexistent/topology.conf");
	assert_null(t);
	dtplan_topology_destroy(NULL);
}

/* Issue 13, findings 4-6 for topology.conf: FIFO, device, directory. */
static void topology_parse_file__not_regular__refused_naming_path(void **state)
{
	char dir[] = "/tmp/dtplan-test-topology.XXXXXX", fifo[512];
	const char *paths[3], *says[3] = {"is a FIFO (named pipe), not a regular file",
					  "is a character device, not a regular file",
					  "is a directory, not a regular file"};

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/topology.conf", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	paths[0] = fifo;
	paths[1] = "/dev/urandom";
	paths[2] = dir;
	alarm(20);
	for (size_t i = 0; i < 3; i++) {
		struct dtplan_topology *t = (struct dtplan_topology *)1;
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_topology_parse_file(paths[i], &t, &err), DTPLAN_ERR_IO);
		assert_null(t);
		assert_string_equal(err.source, paths[i]);
		if (strstr(err.text, says[i]) == NULL)
			fail_msg("%s: '%s' lacks '%s'", paths[i], err.text, says[i]);
	}
	alarm(0);
	unlink(fifo);
	assert_int_equal(rmdir(dir), 0);
}

struct addr_case {
	const char *a, *b;
	const char *msg;
};

static void topology_queries__three_levels__parents_leaves_nodes(void **state)
{
	struct dtplan_topology *t = NULL;
	int leaf1, leaf2, leaf3, leaf4, agg1, spine;
	char names[4][64] = {"node01", "node05", "node06", "ghost"};

	(void)state;
	assert_int_equal(dtplan_topology_parse_file(test_data_path("topology-three-level.conf"), &t,
						    NULL),
			 DTPLAN_OK);
	leaf1 = dtplan_topology_switch_index(t, "leaf1");
	leaf2 = dtplan_topology_switch_index(t, "leaf2");
	leaf3 = dtplan_topology_switch_index(t, "leaf3");
	leaf4 = dtplan_topology_switch_index(t, "leaf4");
	agg1 = dtplan_topology_switch_index(t, "agg1");
	spine = dtplan_topology_switch_index(t, "spine");
	/* leaf1 -> agg1 -> spine */
	assert_int_equal(t->switches[leaf1].parent, agg1);
	assert_int_equal(t->switches[agg1].parent, spine);
	assert_int_equal(t->switches[spine].parent, -1);
	assert_true(leaf2 >= 0 && leaf3 >= 0);
	/* leaf sizes 4, 4, 2, 6 */
	assert_int_equal(dtplan_topology_leaf_size(t, leaf4), 6);
	assert_int_equal(dtplan_topology_leaf_size(t, agg1), 0);
	/* node01 on leaf1, node05 on leaf2, ghost nowhere */
	assert_int_equal(t->node_leaf[dtplan_topology_node_index(t, names[0])], leaf1);
	assert_int_equal(t->node_leaf[dtplan_topology_node_index(t, names[1])], leaf2);
	assert_int_equal(dtplan_topology_node_index(t, names[3]), -1);
	dtplan_topology_destroy(t);
}

static void topology_lookups__hand_built_tree__scan_without_index(void **state)
{
	struct dtplan_switch sw[2] = {
		{.name = "leaf", .parent = 1, .level = 0, .oversubscription = 1.0},
		{.name = "spine", .parent = -1, .level = 1, .oversubscription = 1.0},
	};
	char names[2][64] = {"a", "b"};
	int leaf[2] = {0, 0};
	struct dtplan_topology t = {.n_switches = 2,
				    .switches = sw,
				    .n_nodes = 2,
				    .node_names = names,
				    .node_leaf = leaf};

	(void)state;
	assert_null(t.index);
	assert_int_equal(dtplan_topology_switch_index(&t, "spine"), 1);
	assert_int_equal(dtplan_topology_node_index(&t, "b"), 1);
	assert_int_equal(dtplan_topology_node_index(&t, "c"), -1);
	assert_int_equal(dtplan_topology_leaf_size(&t, 0), 2);
}

static void topology_parse_string__16384_nodes_512_leaves__fast_and_correct(void **state)
{
	/* 512 leaves of 32 nodes = 16,384 nodes; 16 aggregation switches of 32 leaves; a spine */
	size_t size = 512 * 64 + 16 * 64 + 64, len = 0;
	char *text = malloc(size);
	struct dtplan_topology *t;
	clock_t start;
	double seconds;
	int leaf511, agg15;
	char name[64];

	(void)state;
	assert_non_null(text);
	for (int l = 0; l < 512; l++)
		len += (size_t)snprintf(text + len, size - len,
					"SwitchName=leaf%d Nodes=n[%05d-%05d]\n", l, l * 32,
					l * 32 + 31);
	for (int a = 0; a < 16; a++)
		len += (size_t)snprintf(text + len, size - len,
					"SwitchName=agg%d Switches=leaf[%d-%d]\n", a, a * 32,
					a * 32 + 31);
	snprintf(text + len, size - len, "SwitchName=spine Switches=agg[0-15]\n");
	start = clock();
	t = parse_ok(text);
	for (int i = 0; i < 16384; i++) {
		snprintf(name, sizeof(name), "n%05d", i);
		/* node i sits on leaf i / 32 */
		if (t->node_leaf[dtplan_topology_node_index(t, name)] !=
		    dtplan_topology_switch_index(t, "leaf0") + i / 32)
			fail_msg("node %s on the wrong leaf", name);
	}
	seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
	assert_non_null(t->index);
	assert_int_equal(t->n_nodes, 16384);
	assert_int_equal(t->n_switches, 512 + 16 + 1);
	leaf511 = dtplan_topology_switch_index(t, "leaf511");
	agg15 = dtplan_topology_switch_index(t, "agg15");
	assert_int_equal(t->switches[leaf511].parent, agg15);
	assert_int_equal(t->switches[dtplan_topology_switch_index(t, "spine")].level, 2);
	assert_int_equal(dtplan_topology_node_index(t, "n16384"), -1);
	/* 16384 nodes over 512 leaves: 32 under each */
	assert_int_equal(dtplan_topology_leaf_size(t, leaf511), 32);
	/* generous bound: a quadratic parse takes far longer under sanitizers */
	if (seconds > 5.0)
		fail_msg("parse and 16384 lookups took %.2f s", seconds);
	dtplan_topology_destroy(t);
	free(text);
}

/* ---- topology/block and topology.yaml ---- */

/* The three racks of topology-blocks.conf (and topology.yaml's default). */
static void check_three_racks(const struct dtplan_topology *t)
{
	static const char *const racks[] = {"rack1", "rack2", "rack3"};

	assert_true(t->blocks);
	assert_int_equal(t->block_size, 4);
	assert_int_equal(t->n_switches, 3);
	assert_int_equal(t->n_nodes, 12);
	for (int k = 0; k < 3; k++) {
		char node[16];
		int b = dtplan_topology_switch_index(t, racks[k]);

		/* blocks are leaves and roots, in file order */
		assert_int_equal(b, k);
		assert_int_equal(t->switches[b].level, 0);
		assert_int_equal(t->switches[b].parent, -1);
		assert_int_equal(dtplan_topology_leaf_size(t, b), 4);
		snprintf(node, sizeof(node), "gb%02d", 4 * k + 3);
		assert_int_equal(t->node_leaf[dtplan_topology_node_index(t, node)], b);
	}
	assert_int_equal(t->n_nodes, 12);
}

static void topology_parse_file__blocks__blocks_are_leaves(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	(void)state;
	if (dtplan_topology_parse_file(test_data_path("topology-blocks.conf"), &t, &err) !=
	    DTPLAN_OK)
		fail_msg("%s", err.text);
	check_three_racks(t);
	dtplan_topology_destroy(t);
	/* without BlockSizes the first block sets the base; larger blocks are fine */
	t = parse_ok("BlockName=a Nodes=n[1-2]\nBlockName=b Nodes=n[3-5]\n");
	assert_true(t->blocks);
	assert_int_equal(t->block_size, 2);
	assert_int_equal(dtplan_topology_leaf_size(t, 1), 3);
	dtplan_topology_destroy(t);
	/* a tree is not blocks */
	t = parse_ok("SwitchName=a Nodes=n1\n");
	assert_false(t->blocks);
	assert_int_equal(t->block_size, 0);
	dtplan_topology_destroy(t);
}

static void topology_parse_string__bad_blocks__error_names_file_and_line(void **state)
{
	static const struct bad_case cases[] = {
		{"BlockName=a Nodes=n[1-4]\nBlockName=b Nodes=n[5-7]\n", DTPLAN_ERR_PARSE, 2,
		 "block 'b' has 3 nodes, fewer than the base block size 4 (the first block's)"},
		{"BlockSizes=4\nBlockName=a Nodes=n[1-3]\n", DTPLAN_ERR_PARSE, 2,
		 "block 'a' has 3 nodes, fewer than the base block size 4 (BlockSizes' first)"},
		{"BlockName=a Nodes=n[1-4]\nBlockSizes=4,12\n", DTPLAN_ERR_PARSE, 2,
		 "BlockSizes: 12 is not a power-of-two multiple of the base block size 4"},
		{"BlockName=a Nodes=n[1-4]\nBlockSizes=4,6\n", DTPLAN_ERR_PARSE, 2,
		 "BlockSizes: 6 is not a power-of-two multiple"},
		{"BlockName=a Nodes=n[1-4]\nBlockSizes=4,4\n", DTPLAN_ERR_PARSE, 2,
		 "BlockSizes: 4 after 4: sizes must grow"},
		{"BlockName=a Nodes=n1\nBlockSizes=1,65536\n", DTPLAN_ERR_PARSE, 2,
		 "(at most 32768)"},
		{"BlockName=a Nodes=n1\nBlockSizes=0\n", DTPLAN_ERR_PARSE, 2,
		 "BlockSizes=0: '0' is not a node count"},
		{"BlockName=a Nodes=n1\nBlockSizes=1,\n", DTPLAN_ERR_PARSE, 2, "ends with a comma"},
		{"BlockSizes=1\nBlockSizes=1\nBlockName=a Nodes=n1\n", DTPLAN_ERR_PARSE, 2,
		 "BlockSizes= given twice (first at line 1)"},
		{"BlockName=a Nodes=n1 BlockSizes=1\n", DTPLAN_ERR_PARSE, 1,
		 "BlockSizes= goes on a line of its own"},
		{"BlockName=a\n", DTPLAN_ERR_PARSE, 1, "block 'a' has no Nodes="},
		{"BlockName=a Nodes=n1\nBlockName=b Nodes=n1\n", DTPLAN_ERR_PARSE, 2,
		 "node 'n1' is in two blocks: 'a' (line 1) and 'b'"},
		{"BlockName=a Nodes=n1\nBlockName=a Nodes=n2\n", DTPLAN_ERR_PARSE, 2,
		 "block 'a' is defined twice (first at line 1)"},
		{"BlockName=a Nodes=n1\nSwitchName=s Switches=a\n", DTPLAN_ERR_PARSE, 2,
		 "SwitchName= in a file of BlockName= lines"},
		/* the same list mistakes as a tree's lines (lib/base/kv.c) */
		{"BlockName=a Nodes=n1 LinkSpeed=1\n", DTPLAN_ERR_PARSE, 1,
		 "unknown key 'LinkSpeed' (known: BlockName, Nodes, BlockSizes)"},
		{"BlockName=a Nodes=n1 blockname=b\n", DTPLAN_ERR_PARSE, 1,
		 "key 'blockname' given twice"},
		{"BlockName=a Nodes=\n", DTPLAN_ERR_PARSE, 1, "key 'Nodes' has no value"},
		{"BlockName=a Nodes=n1 x\n", DTPLAN_ERR_PARSE, 1,
		 "'x' is not Key=Value (keys: BlockName, Nodes, BlockSizes)"},
		{"BlockName=a Nodes=n1\nswitches=a\n", DTPLAN_ERR_PARSE, 2,
		 "Switches= in a file of BlockName= lines"},
		{"BlockSizes=4\n", DTPLAN_ERR_PARSE, 0, "no blocks defined"},
		{"BlockName=a:b Nodes=n1\n", DTPLAN_ERR_PARSE, 1, "not a valid block name"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_topology *t = (void *)&cases;
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_topology_parse_string(cases[i].text, "test.conf", &t, &err),
				 cases[i].code);
		assert_null(t);
		if (err.line != cases[i].line || strstr(err.text, cases[i].msg) == NULL)
			fail_msg("case %zu: got line %d '%s', expected line %d '%s'", i, err.line,
				 err.text, cases[i].line, cases[i].msg);
	}
}

static void topology_parse_file__yaml__cluster_default_read(void **state)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	(void)state;
	if (dtplan_topology_parse_file(test_data_path("topology.yaml"), &t, &err) != DTPLAN_OK)
		fail_msg("%s:%d: %s", err.source, err.line, err.text);
	check_three_racks(t);
	dtplan_topology_destroy(t);
}

/* A YAML text parsed as "topology.yaml"; fails the test on error. */
static struct dtplan_topology *yaml_ok(const char *text)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	if (dtplan_topology_parse_string(text, "topology.yaml", &t, &err) != DTPLAN_OK)
		fail_msg("line %d: %s", err.line, err.text);
	return t;
}

static void topology_parse_string__yaml_forms__tree_blocks_flat(void **state)
{
	struct dtplan_topology *t;
	int l1, sp;

	(void)state;
	/* no cluster_default: the first; a tree; hostlists as lists; the
	 * "key:\n- item" form, quotes and comments */
	t = yaml_ok("- topology: 'fabric'\n"
		    "  tree:\n"
		    "    switches:\n"
		    "    - switch: leaf1 # a comment\n"
		    "      nodes:\n"
		    "        - n1\n"
		    "        - \"n[2-3]\"\n"
		    "    - switch: spine\n"
		    "      children: [leaf1]\n"
		    "- topology: other\n"
		    "  flat: true\n");
	assert_false(t->blocks);
	assert_int_equal(t->n_switches, 2);
	assert_int_equal(t->n_nodes, 3);
	l1 = dtplan_topology_switch_index(t, "leaf1");
	sp = dtplan_topology_switch_index(t, "spine");
	assert_int_equal(t->switches[l1].parent, sp);
	assert_int_equal(t->switches[sp].level, 1);
	assert_int_equal(t->node_leaf[dtplan_topology_node_index(t, "n3")], l1);
	dtplan_topology_destroy(t);
	/* the default is flat: no switches, a flat fabric */
	t = yaml_ok("- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: n1\n"
		    "- topology: b\n  cluster_default: True\n  flat: true\n");
	assert_int_equal(t->n_switches, 0);
	assert_int_equal(t->n_nodes, 0);
	dtplan_topology_destroy(t);
	/* content alone says YAML, whatever the name; block_sizes as one scalar */
	t = parse_ok("- topology: r\n  block:\n    block_sizes: 2,4\n    blocks:\n"
		     "    - block: r1\n      nodes: x[1-2]\n");
	assert_true(t->blocks);
	assert_int_equal(t->block_size, 2);
	dtplan_topology_destroy(t);
}

/* 26.05's forms (doc/man/man5/topology.yaml.5 and the data_parser's
 * TOPOLOGY_CONF, SchedMD/slurm slurm-26.05 531c4b2): flat: as a mapping of
 * options, ring: (each ring a leaf, its nodes in ring order) and torus3d:
 * (each torus a leaf, its nodes in x-major coordinate order, from nodes:
 * or from regions:). */
static void topology_parse_string__yaml_26_05__flat_options_rings_toruses(void **state)
{
	struct dtplan_topology *t;
	int r0, r1;

	(void)state;
	t = yaml_ok("- topology: topo3a\n  cluster_default: true\n  flat:\n"
		    "    alpha_step_rank: true\n");
	assert_int_equal(t->n_switches, 0);
	dtplan_topology_destroy(t);

	/* the ring's order is the file's, not the names' */
	t = yaml_ok("- topology: topo4\n  ring:\n    rings:\n"
		    "      - ring: ring0\n        nodes: n[1-2],n4,n3\n"
		    "      - ring: ring1\n        nodes: [m1, m2]\n");
	assert_int_equal(t->leaf_kind, DTPLAN_LEAF_RING);
	assert_false(t->blocks);
	assert_int_equal(t->n_switches, 2);
	r0 = dtplan_topology_switch_index(t, "ring0");
	r1 = dtplan_topology_switch_index(t, "ring1");
	assert_int_equal(t->switches[r0].parent, -1);
	assert_int_equal(t->switches[r1].parent, -1);
	assert_int_equal(t->n_nodes, 6);
	assert_string_equal(t->node_names[2], "n4");
	assert_string_equal(t->node_names[3], "n3");
	assert_int_equal(t->node_leaf[dtplan_topology_node_index(t, "m2")], r1);
	assert_string_equal(dtplan_leaf_kind_name(t->leaf_kind, true), "rings");
	dtplan_topology_destroy(t);

	/* a 2x2x1 torus from nodes:, x fastest */
	t = yaml_ok("- topology: topo5\n  torus3d:\n    toruses:\n      - name: pod1\n"
		    "        dims:\n          x: 2\n          y: 2\n          z: 1\n"
		    "        nodes: g[1-4]\n        placements:\n          - dims:\n"
		    "              x: 2\n              y: 1\n              z: 1\n");
	assert_int_equal(t->leaf_kind, DTPLAN_LEAF_TORUS);
	assert_int_equal(t->n_switches, 1);
	assert_int_equal(t->n_nodes, 4);
	assert_string_equal(t->node_names[0], "g1");
	assert_string_equal(t->node_names[3], "g4");
	dtplan_topology_destroy(t);

	/* from regions: two 1x2x1 columns, the second given first: x-major over
	 * the whole torus gives a1 b1 a2 b2 */
	t = yaml_ok("- topology: topo6\n  torus3d:\n    toruses:\n      - name: pod2\n"
		    "        dims:\n          x: 2\n          y: 2\n          z: 1\n"
		    "        regions:\n"
		    "          - anchor:\n              x: 1\n              y: 0\n"
		    "              z: 0\n"
		    "            dims:\n              x: 1\n              y: 2\n"
		    "              z: 1\n"
		    "            nodes: b[1-2]\n"
		    "          - anchor:\n              x: 0\n              y: 0\n"
		    "              z: 0\n"
		    "            dims:\n              x: 1\n              y: 2\n"
		    "              z: 1\n"
		    "            nodes: a[1-2]\n");
	assert_int_equal(t->n_nodes, 4);
	assert_string_equal(t->node_names[0], "a1");
	assert_string_equal(t->node_names[1], "b1");
	assert_string_equal(t->node_names[2], "a2");
	assert_string_equal(t->node_names[3], "b2");
	dtplan_topology_destroy(t);
}

static void topology_parse_string__bad_yaml__error_names_line(void **state)
{
	static const struct bad_case cases[] = {
		{"- topology: a\n  tree: &x\n", DTPLAN_ERR_PARSE, 2,
		 "'&x': anchors (&) are not supported"},
		{"- topology: a\n  tree: *x\n", DTPLAN_ERR_PARSE, 2, "aliases (*)"},
		{"- topology: !!str a\n", DTPLAN_ERR_PARSE, 1, "tags (!) are not supported"},
		/* a multi-line scalar reads (libyaml), as a scalar */
		{"- topology: a\n  tree: |\n", DTPLAN_ERR_PARSE, 2, "tree: must be a mapping"},
		{"- topology: a\n  tree: {switches: leaf1}\n", DTPLAN_ERR_PARSE, 2,
		 "'switches:' must be a list of switches"},
		{"- topology: a\n  ? [x]\n  : 1\n", DTPLAN_ERR_PARSE, 2,
		 "a key that is a list or a mapping"},
		{"- topology: a\n  tree: {flat: 1, flat: 2}\n", DTPLAN_ERR_PARSE, 2,
		 "'flat' given twice in one mapping"},
		{"- topology: \"a\\0b\"\n", DTPLAN_ERR_PARSE, 1, "a NUL character in a scalar"},
		{"- topology: a\n\tflat: true\n", DTPLAN_ERR_PARSE, 2, "a tab in the indentation"},
		{"- topology: a\n  flat: true\n---\n- topology: b\n", DTPLAN_ERR_PARSE, 3,
		 "a second document"},
		{"- topology: a\n  flat: true\n   extra: 1\n", DTPLAN_ERR_PARSE, 3,
		 "mapping values are not allowed in this context"},
		{"- topology: a\n  flat: true\n  flat: true\n", DTPLAN_ERR_PARSE, 3,
		 "'flat' given twice in one mapping"},
		{"- topology: a\n  just words\n", DTPLAN_ERR_PARSE, 2,
		 "while scanning a simple key: could not find expected ':'"},
		{"- topology: \"a\n", DTPLAN_ERR_PARSE, 1,
		 "while scanning a quoted scalar: found unexpected end of stream"},
		{"- topology: a\n  block:\n    blocks: [b[1-2]]\n", DTPLAN_ERR_PARSE, 3,
		 "did not find expected ',' or ']'"},
		{"topology: a\nflat: true\n", DTPLAN_ERR_PARSE, 1,
		 "topology.yaml is a list of topologies"},
		{"- flat: true\n  topology: a\n", DTPLAN_ERR_PARSE, 1,
		 "every topology starts with 'topology: NAME'"},
		{"- topology: a\n  ring:\n    x: 1\n", DTPLAN_ERR_PARSE, 3,
		 "ring: unknown key 'x' (expected rings)"},
		{"- topology: a\n  flat: true\n  tree:\n    switches: []\n", DTPLAN_ERR_PARSE, 1,
		 "needs exactly one of tree:, block:, flat:, ring: or torus3d:"},
		{"- topology: a\n  flat:\n    alpha_step_rank: maybe\n", DTPLAN_ERR_PARSE, 3,
		 "alpha_step_rank: expected true or false"},
		{"- topology: a\n  flat:\n    sort: true\n", DTPLAN_ERR_PARSE, 3,
		 "flat: unknown key 'sort' (expected alpha_step_rank)"},
		/* Slurm's MAX_RING_SIZE, src/plugins/topology/ring/ring_record.h */
		{"- topology: a\n  ring:\n    rings:\n    - ring: r0\n      nodes: n[1-17]\n",
		 DTPLAN_ERR_PARSE, 5, "ring 'r0': at most 16 nodes"},
		{"- topology: a\n  ring:\n    rings:\n    - ring: r0\n", DTPLAN_ERR_PARSE, 4,
		 "ring 'r0' has no nodes:"},
		{"- topology: a\n  torus3d:\n    toruses:\n    - name: t\n      dims:\n"
		 "        x: 2\n        y: 2\n        z: 1\n      nodes: n[1-3]\n",
		 DTPLAN_ERR_PARSE, 9, "torus 't': 2x2x1 needs 4 nodes; nodes: names 3"},
		{"- topology: a\n  torus3d:\n    toruses:\n    - name: t\n      dims:\n"
		 "        x: 2\n        y: 0\n        z: 1\n      nodes: n[1-4]\n",
		 DTPLAN_ERR_PARSE, 7, "dims: y must be a whole number from 1 to 65535"},
		{"- topology: a\n  torus3d:\n    toruses:\n    - name: t\n      dims:\n"
		 "        x: 2\n        y: 1\n        z: 1\n      regions:\n"
		 "      - anchor:\n          x: 1\n          y: 0\n          z: 0\n"
		 "        dims:\n          x: 2\n          y: 1\n          z: 1\n"
		 "        nodes: n[1-2]\n",
		 DTPLAN_ERR_PARSE, 10, "a region reaches past the torus's dims"},
		{"- topology: a\n  flat: false\n", DTPLAN_ERR_PARSE, 2, "flat: must be true"},
		{"- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: n1\n"
		 "      children: t\n",
		 DTPLAN_ERR_PARSE, 4,
		 "switch 's' needs either nodes: or "
		 "children:"},
		{"- topology: a\n  tree:\n    switches:\n    - switch: s\n      node: n1\n",
		 DTPLAN_ERR_PARSE, 5,
		 "switch: unknown key 'node' (expected switch, children, "
		 "nodes)"},
		{"- topology: a\n  tree:\n    switches: leaf1\n", DTPLAN_ERR_PARSE, 3,
		 "'switches:' must be a list of switches ('- switch: NAME')"},
		{"- topology: a\n  block:\n    blocks:\n    - block: b\n", DTPLAN_ERR_PARSE, 4,
		 "block 'b' has no nodes:"},
		{"- topology: a\n  block:\n    block_sizes: [4, x]\n    blocks:\n"
		 "    - block: b\n      nodes: n[1-4]\n",
		 DTPLAN_ERR_PARSE, 3, "block_sizes: 'x' is not a node count"},
		{"- topology: a\n  block:\n    block_sizes: [4, 12]\n    blocks:\n"
		 "    - block: b\n      nodes: n[1-4]\n",
		 DTPLAN_ERR_PARSE, 3, "12 is not a power-of-two multiple"},
		{"- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: n[2-1]\n",
		 DTPLAN_ERR_PARSE, 4, "range 2-1 is reversed"},
		{"# only a comment\n", DTPLAN_ERR_PARSE, 0, "no topologies defined"},
		/* Slurm takes one default; two were taken silently, the first */
		{"- topology: a\n  cluster_default: true\n  flat: true\n"
		 "- topology: b\n  flat: true\n"
		 "- topology: c\n  cluster_default: true\n  flat: true\n",
		 DTPLAN_ERR_PARSE, 7,
		 "topologies 'a' (line 2) and 'c' are both cluster_default: true; only one may be"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_topology *t = (void *)&cases;
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_topology_parse_string(cases[i].text, "topology.yaml", &t,
							      &err),
				 cases[i].code);
		assert_null(t);
		assert_string_equal(err.source, "topology.yaml");
		if (err.line != cases[i].line || strstr(err.text, cases[i].msg) == NULL)
			fail_msg("case %zu: got line %d '%s', expected line %d '%s'", i, err.line,
				 err.text, cases[i].line, cases[i].msg);
	}
}

/*
 * Slurm reads topology.yaml with libyaml, so every YAML form reads: flow
 * mappings and sequences (Slurm's own example, "- {switch: s1, nodes:
 * ..."), a whole document in flow style, block scalars, quoted keys,
 * comments and a leading "---".
 */
static void topology_parse_string__yaml_flow_style__read(void **state)
{
	static const char *const texts[] = {
		"- topology: f\n  tree:\n    switches:\n"
		"    - {switch: s1, nodes: \"n[1-2]\"}\n"
		"    - {switch: s2, nodes: [n3, n4]}  # a flow list\n"
		"    - {switch: top, children: \"s[1-2]\"}\n",
		"---\n[{topology: f, tree: {switches: [{switch: s1, nodes: 'n[1-2]'},\n"
		"  {switch: s2, nodes: 'n[3-4]'}, {switch: top, children: 's[1-2]'}]}}]\n",
		"- \"topology\": f\n  tree:\n    switches:\n    - switch: s1\n"
		"      nodes: >-\n        n[1-2]\n    - switch: s2\n      nodes: |-\n"
		"        n[3-4]\n    - {\n        switch: top,\n        children: [s1, s2]\n      "
		"}\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct dtplan_topology *t = yaml_ok(texts[i]);

		assert_int_equal(t->n_switches, 3);
		assert_int_equal(t->n_nodes, 4);
		assert_string_equal(t->node_names[0], "n1");
		assert_string_equal(t->node_names[3], "n4");
		assert_int_equal(t->node_leaf[0], t->node_leaf[1]);
		assert_int_not_equal(t->node_leaf[1], t->node_leaf[2]);
		assert_int_equal(t->switches[t->node_leaf[0]].parent,
				 t->switches[t->node_leaf[3]].parent);
		assert_int_not_equal(t->switches[t->node_leaf[0]].parent, -1);
		dtplan_topology_destroy(t);
	}
}

/* Hostile nesting ends with a message, not a blown stack. */
static void topology_parse_string__yaml_nested_deep__refused(void **state)
{
	char text[4096];
	size_t used = 0;
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	(void)state;
	for (int d = 0; d < 40; d++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%*s- \n", 2 * d, "");
	assert_int_equal(dtplan_topology_parse_string(text, "deep.yaml", &t, &err),
			 DTPLAN_ERR_PARSE);
	assert_null(t);
	assert_non_null(strstr(err.text, "nested more than 32 levels deep"));
}

/*
 * Issue 26: topology.yaml's readers were quadratic: a mapping's keys were
 * each compared with every earlier one (400,000 keys: over 20 s) and a
 * flow list was joined with strcat() (a million items: over 20 s).  Both
 * are linear now; these inputs read at once (bench_parse has their rows).
 */
static void topology_parse_string__yaml_large_mapping_and_flow_list__linear(void **state)
{
	size_t n = test_scaled(400000), size = 400000 * 24 + 4096, used = 0, wide;
	char *text = malloc(size);
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_non_null(text);
	/* 400,000 keys of one mapping, the last given twice */
	used += (size_t)snprintf(text + used, size - used, "- topology: big\n  k0: 1\n");
	for (size_t i = 1; i < n; i++)
		used += (size_t)snprintf(text + used, size - used, "  k%zu: 1\n", i);
	used += (size_t)snprintf(text + used, size - used, "  k7: 2\n");
	assert_int_equal(dtplan_topology_parse_string(text, "keys.yaml", &t, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "'k7' given twice in one mapping"));
	assert_int_equal(err.line, (int)n + 2);
	/* one leaf of 200,000 nodes in a flow list */
	used = (size_t)snprintf(text, size,
				"- topology: wide\n  cluster_default: true\n  tree:\n"
				"    switches:\n      - switch: leaf1\n        nodes: [n0");
	wide = test_scaled(200000);
	for (size_t i = 1; i < wide; i++)
		used += (size_t)snprintf(text + used, size - used, ", n%zu", i);
	snprintf(text + used, size - used, "]\n");
	assert_int_equal(dtplan_topology_parse_string(text, "wide.yaml", &t, &err), DTPLAN_OK);
	assert_int_equal(t->n_nodes, wide);
	snprintf(text, size, "n%zu", wide - 1);
	assert_int_equal(dtplan_topology_node_index(t, text), (int)(wide - 1));
	dtplan_topology_destroy(t);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(topology_parse_string__two_leaves__tree_and_levels),
		cmocka_unit_test(topology_parse_file__three_levels__levels_and_link_speed),
		cmocka_unit_test(topology_parse_string__bad_files__error_names_file_and_line),
		cmocka_unit_test(topology_parse_string__million_node_leaves__bounded_in_all),
		cmocka_unit_test(topology_parse__null_and_missing_file__errors),
		cmocka_unit_test(topology_parse_file__not_regular__refused_naming_path),
		cmocka_unit_test(topology_queries__three_levels__parents_leaves_nodes),
		cmocka_unit_test(topology_lookups__hand_built_tree__scan_without_index),
		cmocka_unit_test(topology_parse_string__16384_nodes_512_leaves__fast_and_correct),
		cmocka_unit_test(topology_parse_file__blocks__blocks_are_leaves),
		cmocka_unit_test(topology_parse_string__bad_blocks__error_names_file_and_line),
		cmocka_unit_test(topology_parse_file__yaml__cluster_default_read),
		cmocka_unit_test(topology_parse_string__yaml_forms__tree_blocks_flat),
		cmocka_unit_test(topology_parse_string__yaml_26_05__flat_options_rings_toruses),
		cmocka_unit_test(topology_parse_string__bad_yaml__error_names_line),
		cmocka_unit_test(topology_parse_string__yaml_flow_style__read),
		cmocka_unit_test(topology_parse_string__yaml_nested_deep__refused),
		cmocka_unit_test(topology_parse_string__yaml_large_mapping_and_flow_list__linear),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
