/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_helper.c: runs tests/http_server.py for the cmocka drivers.
 */
#include "config.h"

#include "http_helper.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double test_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int read_int(const struct test_server *s, const char *name)
{
	char *text = test_server_read(s, name);
	int v = text != NULL ? atoi(text) : 0;

	free(text);
	return v;
}

bool test_server_start(struct test_server *s)
{
	const char *top = getenv("top_srcdir");
	char script[4096];
	double deadline;

	memset(s, 0, sizeof(*s));
	snprintf(script, sizeof(script), "%s/tests/http_server.py", top ? top : ".");
	snprintf(s->dir, sizeof(s->dir), "/tmp/dtplan-test-http.XXXXXX");
	if (mkdtemp(s->dir) == NULL)
		return false;
	s->pid = fork();
	if (s->pid < 0) {
		s->pid = 0;
		test_server_stop(s);
		return false;
	}
	if (s->pid == 0) {
		execlp("python3", "python3", script, s->dir, (char *)NULL);
		_exit(127);
	}
	for (deadline = test_now() + 20; test_now() < deadline;) {
		int status;

		s->port = read_int(s, "port");
		if (s->port > 0) {
			s->closed_port = read_int(s, "closed_port");
			return true;
		}
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			break;
		}
		usleep(20000);
	}
	test_server_stop(s);
	return false;
}

void test_server_stop(struct test_server *s)
{
	char cmd[512];

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
	if (s->dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", s->dir);
		s->dir[0] = '\0';
	}
}

const char *test_server_url(const struct test_server *s, const char *path)
{
	static char bufs[4][512];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, sizeof(bufs[0]), "http://127.0.0.1:%d%s", s->port, path);
	return b;
}

void test_server_put(const struct test_server *s, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	f = fopen(path, "w");
	if (f == NULL || fputs(text, f) == EOF) {
		fprintf(stderr, "cannot write %s\n", path);
		abort();
	}
	fclose(f);
}

char *test_server_read(const struct test_server *s, const char *name)
{
	char path[512], *buf;
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	if (fstat(fileno(f), &st) != 0 || (buf = calloc(1, (size_t)st.st_size + 1)) == NULL) {
		fclose(f);
		return NULL;
	}
	if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

size_t test_server_lines(const struct test_server *s, const char *name)
{
	char *text = test_server_read(s, name);
	size_t n = 0;

	for (const char *p = text; p != NULL && *p != '\0'; p++)
		n += *p == '\n';
	free(text);
	return n;
}

void test_server_forget(const struct test_server *s, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	unlink(path);
}
