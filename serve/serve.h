/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve.h: "dtplan serve", the collector (serve/, libdtserve.la, linked
 * into dtplan), as the command sees it: its defaults, its options and one
 * call that runs it.  The command (cli/cmd_serve.c) parses the options and
 * includes this header only; the collector's files share serve_int.h.
 */
#ifndef DTPLAN_SERVE_SERVE_H
#define DTPLAN_SERVE_SERVE_H

#include "dtplan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The collector's defaults (dtplan-serve(1)). */
#define SERVE_LISTEN "127.0.0.1:8390"
#define SERVE_MAX_BODY ((size_t)4 << 20) /* a report of a 64k-rank plan fits */
#define SERVE_RATE 20.0                  /* reports a second from one address */
#define SERVE_KEEP_REPORTS 200000L
#define SERVE_KEEP_DAYS 90.0
#define SERVE_TIMEOUT_S 10   /* an idle connection is closed */
#define SERVE_REQUEST_S 60.0 /* any connection is closed this long after it opened */
#define SERVE_MAX_STORE ((double)(8ULL << 30))        /* bytes of bodies kept, all posters */
#define SERVE_MAX_USER_STORE ((double)(256ULL << 20)) /* of which one uid's (not root's) */
#define SERVE_THREADS 4                               /* libmicrohttpd's thread pool */
#define SERVE_CONNECTIONS 512                         /* open connections at once */
#define SERVE_PER_ADDRESS 16                          /* of which from one address */
#define SERVE_RECENT_JOBS 20                          /* jobs on the page */
#define SERVE_WINDOW 2000                             /* reports the figures are taken over */
#define SERVE_SLOW_REPORTS 3 /* a link slow this often is slow on the map */

/* What the command was given; strings borrowed from argv. */
struct serve_opts {
	const char *listen;       /* ADDR:PORT, [ADDR6]:PORT */
	const char *db;           /* the SQLite file */
	const char *munge_socket; /* NULL or "": libmunge's default */
	const char *fabric;       /* a dtplan.fabric/1 file to enrich; NULL: none */
	size_t max_body;
	double rate;
	long keep_reports;
	double keep_days;
	int threads;
	double request_timeout; /* seconds a connection may stay open, whatever it sends */
	double max_store;       /* bytes of report bodies kept */
	double max_user_store;  /* of which from one uid other than root */
	bool json;              /* SERVE_JSON_SCHEMA lines: events on stdout, the log on stderr */
};

/* --json: each line one object of this schema, its "event" saying what:
 * "listening" and "stopping" on stdout, "refused", "suppressed" and
 * "server" (libmicrohttpd's messages) on stderr. */
#define SERVE_JSON_SCHEMA "dtplan.serve/1"

/* Writes one --json line to f: {"schema", "event", "time"} and the members
 * of more (a new reference taken; NULL: none), then flushes. */
void serve_json_line(FILE *f, const char *event, struct json_t *more);

/* True when text is ADDR:PORT or [ADDR6]:PORT with numeric addresses. */
bool serve_listen_valid(const char *text);

/*
 * Runs the collector in the foreground: loads o->fabric, opens the store
 * o->db, serves o->listen on its own threads ("listening on port N" on
 * stderr once it does) until SIGTERM or SIGINT (SIGHUP is ignored), then
 * stops and frees everything (with o->json, a "listening" line on stdout
 * instead, and a "stopping" line).  Blocks those signals in the calling thread
 * and ignores SIGPIPE.  DTPLAN_OK after a signal; otherwise the error that
 * kept it from starting, in err (naming the file or --listen).
 */
enum dtplan_err serve_run(const struct serve_opts *o, struct dtplan_error *err);

#endif /* DTPLAN_SERVE_SERVE_H */
