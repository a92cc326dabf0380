/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_helper.h: tests/http_server.py, a fabric service and a plan collector
 * on loopback, run by the cmocka drivers that talk HTTP (test_http,
 * test_plugin).  See the server's docstring for what it answers.
 */
#ifndef DTPLAN_HTTP_HELPER_H
#define DTPLAN_HTTP_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct test_server {
	pid_t pid;       /* the server, 0 when not running */
	char dir[256];   /* its folder: files it serves, what it records */
	int port;        /* where it listens on 127.0.0.1 */
	int closed_port; /* where nothing listens */
};

/* Starts the server in a fresh temporary folder and waits until it listens.
 * False (nothing left behind) when python3 cannot run it. */
bool test_server_start(struct test_server *s);

/* Stops the server and removes its folder.  Safe on a stopped server. */
void test_server_stop(struct test_server *s);

/* "http://127.0.0.1:PORT" followed by path (one of four rotating static buffers). */
const char *test_server_url(const struct test_server *s, const char *path);

/* Writes text to NAME in the server's folder (served as /files/NAME). */
void test_server_put(const struct test_server *s, const char *name, const char *text);

/* The content of NAME in the server's folder, NULL when absent (caller frees). */
char *test_server_read(const struct test_server *s, const char *name);

/* Lines of NAME in the server's folder (0 when absent). */
size_t test_server_lines(const struct test_server *s, const char *name);

/* Removes NAME from the server's folder. */
void test_server_forget(const struct test_server *s, const char *name);

/* Monotonic seconds. */
double test_now(void);

#endif /* DTPLAN_HTTP_HELPER_H */
