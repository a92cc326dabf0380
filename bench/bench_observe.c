/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_observe.c: what the epilog adds to a job's end (plugin/observe.c).
 * The ticket lives on the batch node only: every other node of the job
 * looks for it once (an lstat) and is done, so at 8 nodes the job's end
 * waits for the batch node's work, which this times, median of RUNS:
 *
 *   fork      the child that becomes the job's user, and reaping it
 *   log       dtplan_job_observe() of a plan and a job output of 16 MiB of
 *             Megatron-LM step lines (the most that is read)
 *   short     the same with 16 MiB of the shortest Megatron-LM step lines
 *             (419,430 of 40 bytes: four times the steps the window keeps)
 *   observe   the same with a DTPLAN_OBSERVE file of 10,000 steps
 *   store     dtplan_recdb_open() + dtplan_recdb_add() into a database that
 *             already holds 10,000 records (WAL, one transaction)
 *   absent    the other nodes: the lstat of a missing ticket
 *
 * Target: the sum under 100 ms.
 *
 * Usage: bench_observe [RUNS]   (default 11)
 */
#include "config.h"

#include "dtplan.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RUNS 101

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return v[n / 2];
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 11;
	char dir[] = "/tmp/dtplan-bench-observe.XXXXXX", path[5][512], cmd[600];
	struct dtplan_request req;
	struct dtplan_plan *plan = NULL;
	struct dtplan_record r;
	struct dtplan_recdb *db = NULL;
	struct dtplan_job_files f = {0};
	double t[6][MAX_RUNS], sum = 0.0;
	char *json = NULL, *log, src[32], notes[1024];
	size_t len = 0, cap = 16u << 20;
	struct stat st;

	if (runs < 1 || runs > MAX_RUNS || mkdtemp(dir) == NULL)
		return 2;
	dtplan_request_init(&req);
	if (dtplan_model_parse("llama3-70b", &req.model, NULL) != DTPLAN_OK)
		return 1;
	req.gpus = 64;
	if (dtplan_plan_create(&req, NULL, &plan, NULL) != DTPLAN_OK ||
	    dtplan_plan_to_json(plan, true, &json, NULL) != DTPLAN_OK)
		return 1;
	snprintf(path[0], sizeof(path[0]), "%s/plan.json", dir);
	snprintf(path[1], sizeof(path[1]), "%s/slurm.out", dir);
	snprintf(path[2], sizeof(path[2]), "%s/observe.jsonl", dir);
	snprintf(path[3], sizeof(path[3]), "%s/records.db", dir);
	snprintf(path[4], sizeof(path[4]), "%s/short.out", dir);
	write_file(path[0], json, strlen(json));
	log = malloc(cap + 512);
	for (int it = 1; log != NULL && len < cap; it++)
		len += (size_t)
			snprintf(log + len, cap + 512 - len,
				 " [2026-12-01 10:00:00.000000] iteration %8d/%8d | consumed "
				 "samples: %12d | elapsed time per iteration (ms): %.1f | "
				 "learning rate: 3.000000E-04 | global batch size:  1024 |\n",
				 it, 1000000, it * 1024, 12100.0 + it % 7);
	write_file(path[1], log, len);
	for (len = 0; len + 41 <= cap;)
		len += (size_t)snprintf(log + len, cap + 512 - len,
					"elapsed time per iteration (ms): 12100.0\n");
	write_file(path[4], log, len);
	len = 0;
	for (int i = 1; i <= 10000; i++)
		len += (size_t)snprintf(log + len, cap - len,
					"{\"step\":%d,\"step_seconds\":%.3f}\n", i,
					12.1 + (i % 5) * 0.01);
	write_file(path[2], log, len);
	free(log);
	if (dtplan_recdb_open(path[3], true, &db, NULL) != DTPLAN_OK)
		return 1;
	dtplan_record_from_plan(&r, plan, "bench");
	r.measured_step_s = 12.1;
	r.steps = 100;
	for (int i = 0; i < 10000; i++) {
		r.job_id = i;
		if (dtplan_recdb_add(db, &r, NULL) != DTPLAN_OK)
			return 1;
	}
	dtplan_recdb_close(db);
	for (int k = 0; k < runs; k++) {
		double t0 = bench_now();
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
		t[0][k] = bench_now() - t0;
		f.plan = path[0];
		f.observe = NULL;
		f.output = path[1];
		t0 = bench_now();
		if (dtplan_job_observe(&f, "bench", &r, src, sizeof(src), notes, sizeof(notes),
				       NULL) != DTPLAN_OK)
			return 1;
		t[1][k] = bench_now() - t0;
		f.output = path[4];
		t0 = bench_now();
		if (dtplan_job_observe(&f, "bench", &r, src, sizeof(src), notes, sizeof(notes),
				       NULL) != DTPLAN_OK)
			return 1;
		t[5][k] = bench_now() - t0;
		f.output = path[1];
		f.observe = path[2];
		t0 = bench_now();
		if (dtplan_job_observe(&f, "bench", &r, src, sizeof(src), notes, sizeof(notes),
				       NULL) != DTPLAN_OK)
			return 1;
		t[2][k] = bench_now() - t0;
		r.job_id = 20000 + k;
		t0 = bench_now();
		if (dtplan_recdb_open(path[3], true, &db, NULL) != DTPLAN_OK ||
		    dtplan_recdb_add(db, &r, NULL) != DTPLAN_OK)
			return 1;
		dtplan_recdb_close(db);
		t[3][k] = bench_now() - t0;
		t0 = bench_now();
		(void)lstat(path[2] /* stands for the missing ticket */, &st);
		(void)lstat("/nonexistent/dtplan.observe", &st);
		t[4][k] = bench_now() - t0;
	}
	printf("epilog on the batch node, median of %d (the other nodes: one lstat)\n", runs);
	{
		static const char *const names[] = {"fork+wait", "log 16 MiB", "observe 10k",
						    "store",     "absent",     "short 16 MiB"};
		double m[6];

		for (int i = 0; i < 6; i++) {
			m[i] = median(t[i], runs) * 1e3;
			printf("  %-12s %8.2f ms\n", names[i], m[i]);
		}
		/* the logs and the file are alternatives: the worst log counts */
		sum = m[0] + (m[1] > m[5] ? m[1] : m[5]) + m[3] + m[4];
	}
	printf("  %-12s %8.2f ms (fork + worst log + store + absent; target 100 ms)\n", "total",
	       sum);
	printf("  peak RSS     %8.1f MiB\n", bench_peak_rss_mib());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	free(json);
	dtplan_plan_destroy(plan);
	return system(cmd) == 0 && sum < 100.0 ? 0 : 1;
}
