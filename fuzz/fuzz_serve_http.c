/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_serve_http.c: the collector's HTTP request path (serve/serve_http.c
 * over libmicrohttpd): each input is written raw to a collector on
 * loopback (started once, its store in memory, a munged socket that does
 * not exist so that a credential is refused as "munge" at once), the write
 * side shut, and the answer read until the connection closes or stays
 * silent for 1 s (a kept-alive connection).  Properties: the answer
 * is nothing (the connection closed) or starts with an HTTP status line,
 * and the collector still answers GET /metrics with 200 afterwards.
 */
#include "fuzz.h"
#include "serve_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static struct server *srv;
static struct serve_store *store;
static unsigned port;

/* The collector and its store end with the process, as `dtplan serve`
 * ends them, so that the replay under valgrind holds nothing at exit. */
static void stop(void)
{
	serve_stop(srv);
	serve_store_close(store);
	srv = NULL;
	store = NULL;
}

static void start(void)
{
	static struct serve_opts o;
	struct serve_store *st = NULL;

	o.listen = "127.0.0.1:0";
	o.db = ":memory:";
	o.munge_socket = "/nonexistent/dtplan-fuzz/munge.sock";
	o.max_body = 65536;
	o.rate = 1e6;
	o.keep_reports = 1000;
	o.keep_days = 1;
	o.threads = 2;
	o.request_timeout = 5;
	o.max_store = 1 << 20;
	o.max_user_store = 1 << 18;
	signal(SIGPIPE, SIG_IGN);
	DTPLAN_FUZZ_CHECK(serve_store_open(o.db, o.keep_reports, o.keep_days, &st, NULL) ==
			  DTPLAN_OK);
	st->max_bytes = (long long)o.max_store;
	st->max_user_bytes = (long long)o.max_user_store;
	srv = serve_start(&o, st, NULL, &port, NULL);
	DTPLAN_FUZZ_CHECK(srv != NULL && port != 0);
	store = st;
	atexit(stop);
}

/* Writes data to a new connection and reads the answer into buf (size):
 * the bytes read, -1 when no connection could be made. */
static ssize_t exchange(const void *data, size_t size, char *buf, size_t bufsize)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 1}; /* a kept-alive connection ends the read */
	ssize_t got = 0, n;
	size_t off = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	while (off < size && (n = send(fd, (const char *)data + off, size - off, 0)) > 0)
		off += (size_t)n;
	shutdown(fd, SHUT_WR);
	while ((size_t)got < bufsize - 1 &&
	       (n = recv(fd, buf + got, bufsize - 1 - (size_t)got, 0)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	return got;
}

DTPLAN_FUZZ_TARGET(serve_http)
{
	static const char probe[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	static char buf[1 << 16];
	ssize_t got;

	if (srv == NULL)
		start();
	got = exchange(data, size, buf, sizeof(buf));
	DTPLAN_FUZZ_CHECK(got >= 0);
	DTPLAN_FUZZ_CHECK(got == 0 || strncmp(buf, "HTTP/1.", 7) == 0);
	got = exchange(probe, sizeof(probe) - 1, buf, sizeof(buf));
	DTPLAN_FUZZ_CHECK(got > 12 && strncmp(buf, "HTTP/1.1 200", 12) == 0);
	return 0;
}
