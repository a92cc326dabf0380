/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_parse.c: inputs an admin or a job controls, at sizes that were
 * quadratic once (issue 13, findings 8 and 13).  Prints the median time of
 * each over a few runs and the peak resident set size.
 *
 *   compress   dtplan_hostlist_compress() of 80,000 and 200,000 names that
 *              share no group ("r<i>n<i%7>"), the worst case for grouping,
 *              and of 200,000 names of one prefix; target well under 1 s
 *   site file  "SwitchName=s[1-100000] Oversubscription=2:1" through
 *              dtplan_config_parse_string(); target well under 1 s
 *
 * and the readers made linear since (issue 26), each input once per run,
 * its time a median (and the CPU time a run: the machine may be shared),
 * its peak resident memory that of a fresh process that makes and reads
 * it once (bench_parse --one K, its VmHWM):
 *
 *   yaml keys    topology.yaml, one mapping of 400,000 keys whose last one
 *                repeats an earlier one (refused naming it)
 *   yaml flow    topology.yaml, one leaf's nodes as a flow list of
 *                1,000,000 items
 *   fabric JSON  dtplan.fabric/1 of 200,000 switches, each leaf naming its
 *                parent, read whole and as a 16-node job's batch step reads
 *                it (for its nodes: target under 1 s and 100 MB with the
 *                answer); and the 1.8 KB answer of 30 spines over
 *                c[1-1000000] (refused before anything expands)
 *   conf         topology.conf of 200,000 leaves and one spine over them
 *   report       dtplan_report_to_json() of a 40 MB plan (8,000,000 values)
 *
 * Usage: bench_parse [RUNS]        (default 5)
 *        bench_parse --write DIR   writes those inputs to DIR/NAME/, the
 *                                  big-input corpora of fuzz/run.sh -M
 */
#include "config.h"

#include "dtplan.h"
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_NAMES 200000

/* Median of runs timings of compressing names[0..n), in ms; the output's length in *len. */
static double time_compress(const char (*names)[64], size_t n, char *buf, size_t size, double *ms,
			    int runs, size_t *len)
{
	for (int r = 0; r < runs; r++) {
		double t0 = bench_now();

		dtplan_hostlist_compress(names, n, buf, size);
		ms[r] = (bench_now() - t0) * 1e3;
	}
	*len = strlen(buf);
	qsort(ms, (size_t)runs, sizeof(*ms), bench_cmp_double);
	return ms[runs / 2];
}

/* ------------------------------------------------------------------------
 * The big inputs of the readers made linear
 * ---------------------------------------------------------------------- */

/* A text grown by appending; NULL buf when out of memory. */
struct text {
	char *buf;
	size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->buf == NULL && t->cap != 0)
		return;
	if (t->cap - t->len < 256) {
		size_t cap = t->cap ? t->cap * 2 : 1 << 20;
		char *tmp = realloc(t->buf, cap);

		if (tmp == NULL) {
			free(t->buf);
			t->buf = NULL;
			return;
		}
		t->buf = tmp;
		t->cap = cap;
	}
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

static char *yaml_keys(void)
{
	struct text t = {0};

	add(&t, "- topology: big\n  k0: 1\n");
	for (int i = 1; i < 400000; i++)
		add(&t, "  k%d: 1\n", i);
	add(&t, "  k7: 2\n");
	return t.buf;
}

static char *yaml_flow(void)
{
	struct text t = {0};

	add(&t, "- topology: wide\n  cluster_default: true\n  tree:\n    switches:\n"
		"      - switch: leaf1\n        nodes: [n0");
	for (int i = 1; i < 1000000; i++)
		add(&t, ", n%d", i);
	add(&t, "]\n");
	return t.buf;
}

static char *fabric_big(void)
{
	struct text t = {0};

	add(&t, "{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"spine\"}");
	for (int i = 0; i < 199999; i++)
		add(&t, ",{\"name\":\"l%d\",\"nodes\":\"n%d\",\"parent\":\"spine\"}", i, i);
	add(&t, "]}");
	return t.buf;
}

static char *fabric_hostile(void)
{
	struct text t = {0};

	add(&t, "{\"schema\": \"dtplan.fabric/1\", \"switches\": [{\"name\": \"a\", "
		"\"nodes\": \"n1\"}");
	for (int i = 0; i < 30; i++)
		add(&t, ",{\"name\":\"s%d\",\"switches\":\"c[1-1000000]\"}", i);
	add(&t, "]}");
	return t.buf;
}

static char *conf_big(void)
{
	struct text t = {0};

	for (int i = 0; i < 200000; i++)
		add(&t, "SwitchName=l%d Nodes=n%d\n", i, i);
	add(&t, "SwitchName=spine Switches=l[0-199999]\n");
	return t.buf;
}

static char *plan_big(void)
{
	struct dtplan_request req;
	struct dtplan_plan *p = NULL;
	struct text t = {0};
	char *json = NULL;

	dtplan_request_init(&req);
	if (dtplan_model_parse("7B", &req.model, NULL) != DTPLAN_OK)
		return NULL;
	req.gpus = 8;
	if (dtplan_plan_create(&req, NULL, &p, NULL) != DTPLAN_OK ||
	    dtplan_plan_to_json(p, true, &json, NULL) != DTPLAN_OK) {
		dtplan_plan_destroy(p);
		return NULL;
	}
	dtplan_plan_destroy(p);
	/* the plan, and a member of 8 million values before its last '}' */
	json[strlen(json) - 2] = '\0';
	add(&t, "%s,\n \"annotations\": [0", json);
	free(json);
	for (int i = 1; i < 8000000; i++)
		add(&t, ",0");
	add(&t, "]\n}\n");
	return t.buf;
}

static enum dtplan_err read_topology(const char *text)
{
	struct dtplan_topology *t = NULL;
	enum dtplan_err rv = dtplan_topology_parse_string(text, "bench.yaml", &t, NULL);

	dtplan_topology_destroy(t);
	return rv;
}

static enum dtplan_err read_fabric(const char *text)
{
	struct dtplan_fabric_desc *f = NULL;
	enum dtplan_err rv =
		dtplan_fabric_desc_parse(text, strlen(text), DTPLAN_FABRIC_JSON, "bench", &f, NULL);

	dtplan_fabric_desc_destroy(f);
	return rv;
}

/* As a 16-node job's batch step reads it (plugin/service.c): for its nodes. */
static enum dtplan_err read_fabric_for_job(const char *text)
{
	struct dtplan_fabric_desc *f = NULL;
	enum dtplan_err rv = dtplan_fabric_desc_parse_for(text, strlen(text), DTPLAN_FABRIC_JSON,
							  "bench", "n[1000-1015]", &f, NULL);

	if (rv == DTPLAN_OK && f->topology->n_switches != 17)
		rv = DTPLAN_ERR_INVAL;
	dtplan_fabric_desc_destroy(f);
	return rv;
}

static enum dtplan_err read_conf(const char *text)
{
	struct dtplan_fabric_desc *f = NULL;
	enum dtplan_err rv =
		dtplan_fabric_desc_parse(text, strlen(text), DTPLAN_FABRIC_TOPOLOGY_CONF, "bench",
					 &f, NULL);

	dtplan_fabric_desc_destroy(f);
	return rv;
}

static enum dtplan_err read_report(const char *text)
{
	struct dtplan_report r = {.plan_json = text, .uid = -1};
	char *out = NULL;
	enum dtplan_err rv = dtplan_report_to_json(&r, &out, NULL);

	free(out);
	return rv;
}

static const struct big_input {
	const char *name; /* the fuzzing harness whose big corpus it is */
	const char *what; /* for the row */
	char *(*make)(void);
	enum dtplan_err (*read)(const char *text);
	enum dtplan_err want;
} big_inputs[] = {
	{"topology", "topology.yaml, one mapping of 400,000 keys (last one repeated)", yaml_keys,
	 read_topology, DTPLAN_ERR_PARSE},
	{"topology", "topology.yaml, a flow list of 1,000,000 nodes", yaml_flow, read_topology,
	 DTPLAN_OK},
	{"fabric", "fabric JSON, 200,000 switches naming their parent", fabric_big, read_fabric,
	 DTPLAN_OK},
	{"fabric", "fabric JSON, 200,000 switches read for a job of 16 nodes", fabric_big,
	 read_fabric_for_job, DTPLAN_OK},
	{"fabric", "fabric JSON, 30 spines over c[1-1000000] (refused)", fabric_hostile,
	 read_fabric, DTPLAN_ERR_PARSE},
	{"fabric", "topology.conf, 200,000 leaves under one spine", conf_big, read_conf, DTPLAN_OK},
	{"report", "report of a plan of 8,000,000 values", plan_big, read_report, DTPLAN_OK},
};

/* CPU seconds of this process (the machine may be shared: wall time
 * then says little). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak resident memory of this process's image, in MiB (VmHWM: since its
 * exec, unlike ru_maxrss, which keeps the forking parent's). */
static double hwm_mib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kib = -1;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmHWM: %lf kB", &kib) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return kib / 1024.0;
}

/* --one K: makes input K and reads it once, a fresh process whose peak
 * memory is the input's and the reader's; prints that peak in MiB. */
static int one_big_input(const char *arg)
{
	size_t k = (size_t)atoi(arg);
	char *text;
	int rc;

	if (k >= sizeof(big_inputs) / sizeof(big_inputs[0]))
		return 2;
	text = big_inputs[k].make();
	rc = text != NULL && big_inputs[k].read(text) == big_inputs[k].want ? 0 : 1;
	free(text);
	printf("%.1f\n", hwm_mib());
	return rc;
}

/* Peak resident memory, in MiB, of a fresh process (self --one k);
 * -1 when it could not run or the read did not end as wanted. */
static double child_peak_mib(const char *self, size_t k)
{
	char cmd[4200];
	double mib = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' --one %zu", self, k);
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	if (fscanf(p, "%lf", &mib) != 1)
		mib = -1;
	if (pclose(p) != 0)
		mib = -1;
	return mib;
}

/* The rows of the big inputs; false when one did not read as wanted. */
static bool bench_big_inputs(const char *self, double *ms, int runs)
{
	for (size_t k = 0; k < sizeof(big_inputs) / sizeof(big_inputs[0]); k++) {
		const struct big_input *b = &big_inputs[k];
		char *text = b->make();
		double peak, cpu = 0;

		if (text == NULL)
			return false;
		for (int r = 0; r < runs; r++) {
			double t0 = bench_now(), c0 = cpu_now();
			enum dtplan_err rv = b->read(text);

			ms[r] = (bench_now() - t0) * 1e3;
			cpu += (cpu_now() - c0) * 1e3;
			if (rv != b->want) {
				fprintf(stderr, "bench_parse: %s: %s, not %s\n", b->what,
					dtplan_strerror(rv), dtplan_strerror(b->want));
				free(text);
				return false;
			}
		}
		qsort(ms, (size_t)runs, sizeof(*ms), bench_cmp_double);
		peak = child_peak_mib(self, k);
		printf("bench_parse: %s (%.2f MB): median %.1f ms (min %.1f, max %.1f, %d runs; "
		       "%.1f ms of CPU a run), peak RSS of a process making and reading it "
		       "%.1f MiB\n",
		       b->what, (double)strlen(text) / 1e6, ms[runs / 2], ms[0], ms[runs - 1], runs,
		       cpu / runs, peak);
		free(text);
	}
	return true;
}

/* --write DIR: each input as DIR/NAME/big-K. */
static int write_big_inputs(const char *dir)
{
	char path[4096];

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		goto fail;
	for (size_t k = 0; k < sizeof(big_inputs) / sizeof(big_inputs[0]); k++) {
		char *text = big_inputs[k].make();
		FILE *f;
		bool ok;

		snprintf(path, sizeof(path), "%s/%s", dir, big_inputs[k].name);
		if (text == NULL || (mkdir(path, 0755) != 0 && errno != EEXIST)) {
			free(text);
			goto fail;
		}
		snprintf(path, sizeof(path), "%s/%s/big-%zu", dir, big_inputs[k].name, k);
		f = fopen(path, "w");
		ok = f != NULL && fputs(text, f) >= 0;
		ok = f != NULL && fclose(f) == 0 && ok;
		free(text);
		if (!ok)
			goto fail;
		printf("%s\n", path);
	}
	return 0;
fail:
	fprintf(stderr, "bench_parse: %s: %s\n", dir, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	int runs, rc = 1;
	char(*names)[64] = malloc(MAX_NAMES * sizeof(*names));
	size_t size = 16 << 20, len = 0;
	char *buf = malloc(size), msg[1024];
	double *ms = NULL, med;
	struct dtplan_error err = {0};

	if (argc > 2 && strcmp(argv[1], "--one") == 0) {
		rc = one_big_input(argv[2]);
		goto out;
	}
	if (argc > 2 && strcmp(argv[1], "--write") == 0) {
		rc = write_big_inputs(argv[2]);
		goto out;
	}
	runs = argc > 1 ? atoi(argv[1]) : 5;
	if (runs < 1)
		runs = 1;
	ms = malloc((size_t)runs * sizeof(*ms));
	if (names == NULL || buf == NULL || ms == NULL) {
		snprintf(err.text, sizeof(err.text), "out of memory");
		goto out;
	}
	for (size_t i = 0; i < MAX_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "r%zun%zu", i, i % 7);
	for (size_t n = 80000; n <= MAX_NAMES; n += MAX_NAMES - 80000) {
		med = time_compress((const char(*)[64])names, n, buf, size, ms, runs, &len);
		printf("bench_parse: compress %zu names in no common group: median %.1f ms "
		       "(min %.1f, max %.1f, %d runs), %zu characters\n",
		       n, med, ms[0], ms[runs - 1], runs, len);
	}
	for (size_t i = 0; i < MAX_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "node%06zu", (i * 7919) % MAX_NAMES + 1);
	med = time_compress((const char(*)[64])names, MAX_NAMES, buf, size, ms, runs, &len);
	printf("bench_parse: compress %d scrambled names of one prefix: median %.1f ms "
	       "(min %.1f, max %.1f, %d runs): %s\n",
	       MAX_NAMES, med, ms[0], ms[runs - 1], runs, buf);
	for (int r = 0; r < runs; r++) {
		struct dtplan_config c;
		double t0 = bench_now();
		enum dtplan_err ret;

		dtplan_config_init(&c);
		ret = dtplan_config_parse_string(&c,
						 "SwitchName=s[1-100000] Oversubscription=2:1\n",
						 "bench-site", &err);
		ms[r] = (bench_now() - t0) * 1e3;
		len = c.n_switches;
		dtplan_config_fini(&c);
		if (ret != DTPLAN_OK)
			goto out;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), bench_cmp_double);
	printf("bench_parse: site file SwitchName=s[1-100000]: %zu switches, median %.1f ms "
	       "(min %.1f, max %.1f, %d runs)\n",
	       len, ms[runs / 2], ms[0], ms[runs - 1], runs);
	if (!bench_big_inputs(argv[0], ms, runs)) {
		snprintf(err.text, sizeof(err.text), "a big input did not read as it should");
		goto out;
	}
	printf("bench_parse: peak RSS %.1f MiB\n", bench_peak_rss_mib());
	rc = 0;
out:
	if (rc != 0 && err.text[0] != '\0')
		fprintf(stderr, "bench_parse: %s\n", dtplan_error_format(&err, msg, sizeof(msg)));
	free(names);
	free(buf);
	free(ms);
	return rc;
}
