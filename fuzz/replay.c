/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay.c: runs every fuzzing harness on its seed corpus and on the inputs
 * that once crashed it, with the project's own compiler (make check):
 *
 *     $top_srcdir/tests/fuzz/corpus/NAME/       seeds, written by hand
 *     $top_srcdir/tests/fuzz/regressions/NAME/  inputs found by fuzzing, fixed since
 *
 * Each input gets 60 s (alarm()): a hang fails the test like a crash.
 *
 * Usage: replay [-s BYTES] [-d DIR] [NAME...] (default: every harness)
 *   -s BYTES  largest input read (default 4 MiB; longer ones are cut)
 *   -d DIR    also every file of DIR/NAME/, such as the big inputs that
 *             bench/bench_parse --write DIR makes (fuzz/run.sh -M)
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define TARGETS(X)                                                                                 \
	X(hostlist)                                                                                \
	X(units)                                                                                   \
	X(topology)                                                                                \
	X(site)                                                                                    \
	X(plugstack)                                                                               \
	X(model_spec)                                                                              \
	X(hf_config)                                                                               \
	X(train)                                                                                   \
	X(global_batch)                                                                            \
	X(node_json)                                                                               \
	X(hwloc_xml)                                                                               \
	X(plan_json)                                                                               \
	X(fabric)                                                                                  \
	X(measure_json)                                                                            \
	X(wire)                                                                                    \
	X(report)                                                                                  \
	X(observe)                                                                                 \
	X(posted)                                                                                  \
	X(serve_http)

#define DECLARE(name) int dtplan_fuzz_##name(const uint8_t *data, size_t size);
TARGETS(DECLARE)

static const struct target {
	const char *name;
	int (*fn)(const uint8_t *data, size_t size);
} targets[] = {
#define ENTRY(name) {#name, dtplan_fuzz_##name},
	TARGETS(ENTRY)};

/* Largest input replayed by default (the corpora hold small files). */
#define REPLAY_MAX_INPUT ((size_t)4 << 20)

static size_t max_input = REPLAY_MAX_INPUT; /* -s */

static const char *current; /* the input running, for the alarm */

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "replay: %s: still running after 60 s\n", current);
	_exit(1);
}

/* Runs fn on one file; -1 when it cannot be read. */
static int replay_file(const struct target *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	buf = malloc(max_input);
	if (buf == NULL) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, max_input, f);
	fclose(f);
	current = path;
	alarm(60);
	t->fn(buf, n);
	alarm(0);
	free(buf);
	return 0;
}

/* Every regular file in dir; the count in *n.  A missing folder is empty. */
static int replay_dir(const struct target *t, const char *dir, int *n)
{
	char path[4096];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int rv = 0;

	*n = 0;
	if (d == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(t, path) != 0)
			rv = -1;
		(*n)++;
	}
	closedir(d);
	return rv;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir"), *big = NULL;
	char dir[4096], *end;
	int rv = 0, seeds, regressions, more = 0, first = 1;

	signal(SIGALRM, on_alarm);
	if (top == NULL)
		top = ".";
	while (first + 1 < argc && argv[first][0] == '-') {
		if (strcmp(argv[first], "-s") == 0) {
			unsigned long long v = strtoull(argv[first + 1], &end, 10);

			if (*end != '\0' || v == 0 || v > ((size_t)1 << 30)) {
				fprintf(stderr, "replay: -s %s: 1 to 2^30 bytes\n",
					argv[first + 1]);
				return 2;
			}
			max_input = (size_t)v;
		} else if (strcmp(argv[first], "-d") == 0) {
			big = argv[first + 1];
		} else {
			fprintf(stderr, "usage: replay [-s BYTES] [-d DIR] [NAME...]\n");
			return 2;
		}
		first += 2;
	}
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		bool wanted = argc <= first;

		for (int a = first; a < argc; a++)
			wanted = wanted || strcmp(argv[a], targets[i].name) == 0;
		if (!wanted)
			continue;
		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", top, targets[i].name);
		if (replay_dir(&targets[i], dir, &seeds) != 0)
			rv = 1;
		snprintf(dir, sizeof(dir), "%s/tests/fuzz/regressions/%s", top, targets[i].name);
		if (replay_dir(&targets[i], dir, &regressions) != 0)
			rv = 1;
		if (big != NULL) {
			snprintf(dir, sizeof(dir), "%s/%s", big, targets[i].name);
			if (replay_dir(&targets[i], dir, &more) != 0)
				rv = 1;
		}
		if (seeds == 0) {
			fprintf(stderr, "replay: %s: no seeds in tests/fuzz/corpus/%s\n",
				targets[i].name, targets[i].name);
			rv = 1;
		}
		printf("%-13s %3d seeds, %3d regressions", targets[i].name, seeds, regressions);
		if (big != NULL)
			printf(", %d in %s", more, big);
		printf("\n");
	}
	return rv;
}
