/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_slurm_conf.c: what dtplan reads in Slurm's slurm.conf (AuthInfo's
 * socket, NodeAddr=) and the Include lines it follows as Slurm does.
 */
#include "test_common.h"

#include <sys/stat.h>
#include <unistd.h>

/* slurm.conf: AuthInfo's socket (23.11+ comma-separated options too) and
 * NodeAddr per node, ranges expanded in step; other keys pass unread. */
static void slurm_conf__auth_socket_and_node_addrs__read(void **state)
{
	struct dtplan_slurm_conf s;
	struct dtplan_error err = {0};
	const char *text = "ClusterName=c1 # a comment\n"
			   "AuthType=auth/munge\n"
			   "authinfo=ttl=60,socket=/run/m2/munge.socket.2\n"
			   "NodeName=DEFAULT CPUs=8 NodeAddr=10.9.9.9\n"
			   "NodeName=gpu[1-3] NodeAddr=10.0.0.[11-13] CPUs=8\n"
			   "NodeName=cpu7 CPUs=4\n"
			   "PartitionName=p Nodes=ALL\n";

	(void)state;
	assert_int_equal(dtplan_slurm_conf_parse_string(text, "slurm.conf", &s, &err), DTPLAN_OK);
	assert_string_equal(s.auth_socket, "/run/m2/munge.socket.2");
	assert_int_equal(s.n_nodes, 3);
	assert_string_equal(dtplan_slurm_conf_node_addr(&s, "gpu1"), "10.0.0.11");
	assert_string_equal(dtplan_slurm_conf_node_addr(&s, "gpu3"), "10.0.0.13");
	assert_null(dtplan_slurm_conf_node_addr(&s, "cpu7"));
	assert_null(dtplan_slurm_conf_node_addr(&s, "gpu4"));
	dtplan_slurm_conf_fini(&s);

	/* no AuthInfo: no socket, libmunge's default */
	assert_int_equal(dtplan_slurm_conf_parse_string("AuthType=auth/munge\n", "x", &s, &err),
			 DTPLAN_OK);
	assert_string_equal(s.auth_socket, "");
	dtplan_slurm_conf_fini(&s);

	/* as many addresses as names, or an error naming the line */
	assert_int_equal(dtplan_slurm_conf_parse_string("\nNodeName=n[1-4] NodeAddr=10.0.0.[1-3]\n",
							"slurm.conf", &s, &err),
			 DTPLAN_ERR_PARSE);
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.text, "4 nodes but NodeAddr=10.0.0.[1-3] 3 addresses"));
	assert_int_equal(s.n_nodes, 0);
}

static char dir[] = "/tmp/dtplan-test-slurm-conf.XXXXXX";

/* Writes text to dir/name. */
static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Reads dir/name; the code, and the message in err. */
static enum dtplan_err read_conf(const char *name, struct dtplan_slurm_conf *s,
				 struct dtplan_error *err)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return dtplan_slurm_conf_read(path, s, err);
}

static int setup(void **state)
{
	char sub[512];

	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	return mkdir(sub, 0700);
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Include: relative paths in the including file's folder (a nested one in
 * its own), absolute ones as given, %c the ClusterName before it, the
 * keyword in any case; every file's nodes in one list. */
static void slurm_conf_read__include__nodes_of_every_file(void **state)
{
	struct dtplan_slurm_conf s;
	struct dtplan_error err = {0};
	char text[1024];

	(void)state;
	snprintf(text, sizeof(text),
		 "ClusterName=c1\n"
		 "NodeName=a1 NodeAddr=10.0.0.1\n"
		 "Include sub/nodes.conf # the GPU nodes\n"
		 "  INCLUDE\t%s/abs-%%c.conf\n",
		 dir);
	put("slurm.conf", text);
	/* relative to sub/, not to slurm.conf's folder */
	put("sub/nodes.conf", "NodeName=g[1-2] NodeAddr=10.1.0.[1-2]\ninclude more.conf\n");
	put("sub/more.conf", "AuthInfo=socket=/run/m/s\n");
	put("abs-c1.conf", "NodeName=b1 NodeAddr=10.2.0.1\n");
	assert_int_equal(read_conf("slurm.conf", &s, &err), DTPLAN_OK);
	assert_int_equal(s.n_nodes, 4);
	assert_string_equal(dtplan_slurm_conf_node_addr(&s, "a1"), "10.0.0.1");
	assert_string_equal(dtplan_slurm_conf_node_addr(&s, "g2"), "10.1.0.2");
	assert_string_equal(dtplan_slurm_conf_node_addr(&s, "b1"), "10.2.0.1");
	assert_string_equal(s.auth_socket, "/run/m/s");
	dtplan_slurm_conf_fini(&s);

	/* a text parsed alone has no folder: its Include lines pass unread */
	assert_int_equal(dtplan_slurm_conf_parse_string("Include nowhere.conf\n", "x", &s, &err),
			 DTPLAN_OK);
	assert_int_equal(s.n_nodes, 0);
	dtplan_slurm_conf_fini(&s);
	/* "Includes=x" is a key, not the keyword */
	put("key.conf", "IncludeS=x\nInclude\n");
	assert_int_equal(read_conf("key.conf", &s, &err), DTPLAN_OK);
	dtplan_slurm_conf_fini(&s);
}

/* A cycle, a missing file, too deep a nesting, %c before ClusterName, an
 * error in an included file: refused, naming the file and line. */
static void slurm_conf_read__bad_include__error_names_file_and_line(void **state)
{
	static const struct {
		const char *file;
		const char *source; /* err.source ends with it */
		int line;
		enum dtplan_err code;
		const char *says;
	} cases[] = {
		{"self.conf", "self.conf", 2, DTPLAN_ERR_PARSE, "the file includes itself"},
		{"cyc-a.conf", "cyc-b.conf", 1, DTPLAN_ERR_PARSE,
		 "cyc-a.conf: the file includes itself"},
		{"missing.conf", "missing.conf", 1, DTPLAN_ERR_IO, "No such file or directory"},
		{"deep.conf", "deep16.conf", 1, DTPLAN_ERR_RANGE, "more than 16 files deep"},
		{"pc.conf", "pc.conf", 1, DTPLAN_ERR_PARSE, "%c before ClusterName="},
		{"pz.conf", "pz.conf", 1, DTPLAN_ERR_PARSE, "only %c may follow %"},
		{"outer.conf", "sub/inner.conf", 2, DTPLAN_ERR_PARSE, "2 nodes but NodeAddr=x 1"},
	};
	struct dtplan_slurm_conf s;

	(void)state;
	put("self.conf", "NodeName=n1 NodeAddr=x\nInclude self.conf\n");
	put("cyc-a.conf", "Include cyc-b.conf\n");
	put("cyc-b.conf", "Include cyc-a.conf\n");
	put("missing.conf", "Include not-there.conf\n");
	/* deep.conf includes itself under other names: sub/../deep.conf... */
	put("deep.conf", "Include sub/../deep2.conf\n");
	for (int i = 2; i <= 20; i++) {
		char name[32], text[64];

		snprintf(name, sizeof(name), "deep%d.conf", i);
		snprintf(text, sizeof(text), "Include deep%d.conf\n", i + 1);
		put(name, text);
	}
	put("pc.conf", "Include n-%c.conf\nClusterName=c\n");
	put("pz.conf", "Include n-%h.conf\n");
	put("outer.conf", "NodeName=o1 NodeAddr=10.0.0.1\nInclude sub/inner.conf\n");
	put("sub/inner.conf", "\nNodeName=i[1-2] NodeAddr=x\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_error err = {0};
		size_t ls, lw = strlen(cases[i].source);

		assert_int_equal(read_conf(cases[i].file, &s, &err), cases[i].code);
		ls = strlen(err.source);
		if (ls < lw || strcmp(err.source + ls - lw, cases[i].source) != 0)
			fail_msg("%s: source '%s', not ...%s", cases[i].file, err.source,
				 cases[i].source);
		assert_int_equal(err.line, cases[i].line);
		if (strstr(err.text, cases[i].says) == NULL)
			fail_msg("%s: '%s' lacks '%s'", cases[i].file, err.text, cases[i].says);
		assert_int_equal(s.n_nodes, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slurm_conf__auth_socket_and_node_addrs__read),
		cmocka_unit_test(slurm_conf_read__include__nodes_of_every_file),
		cmocka_unit_test(slurm_conf_read__bad_include__error_names_file_and_line),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
