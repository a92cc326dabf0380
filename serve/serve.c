/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve.c: the collector's run (serve.h): the --fabric file, the store,
 * the server, and the signals that end it.  Runs in the foreground until
 * SIGTERM or SIGINT (a systemd unit starts it, etc/dtplan-collector.service).
 */
#include "config.h"

#include "serve_int.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The --fabric file: a fabric the planner reads, kept as JSON. */
static json_t *load_fabric(const char *path, struct dtplan_error *err)
{
	struct dtplan_fabric_desc *f = NULL;
	char *text = NULL;
	json_t *j = NULL;
	size_t len = 0;

	if (dtplan_file_read(path, DTPLAN_FILE_FABRIC_CACHE, &text, &len, err) != DTPLAN_OK)
		return NULL;
	/* JSON only: what the collector serves is enriched member by member. */
	if (dtplan_fabric_desc_parse(text, len, DTPLAN_FABRIC_JSON, path, &f, err) != DTPLAN_OK)
		goto out;
	j = json_loadb(text, len, 0, NULL);
out:
	dtplan_fabric_desc_destroy(f);
	free(text);
	return j;
}

enum dtplan_err serve_run(const struct serve_opts *o, struct dtplan_error *err)
{
	struct serve_store *st = NULL;
	struct server *srv = NULL;
	json_t *fabric = NULL;
	enum dtplan_err rv;
	unsigned port = 0;
	sigset_t set;
	int sig;

	if (o->fabric != NULL && (fabric = load_fabric(o->fabric, err)) == NULL) {
		rv = err != NULL && err->code != DTPLAN_OK ? err->code : DTPLAN_ERR_PARSE;
		goto out;
	}
	rv = serve_store_open(o->db, o->keep_reports, o->keep_days, &st, err);
	if (rv != DTPLAN_OK)
		goto out;
	st->max_bytes = (long long)o->max_store;
	st->max_user_bytes = (long long)o->max_user_store;
	/* the signals are taken here, by sigwait(), never by the server's threads */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv = serve_start(o, st, fabric, &port, err);
	if (srv == NULL) {
		rv = err != NULL && err->code != DTPLAN_OK ? err->code : DTPLAN_ERR_IO;
		goto out;
	}
	if (o->json)
		serve_json_line(stdout, "listening",
				json_pack("{s:s, s:s, s:i, s:s, s:s?}", "version", PACKAGE_VERSION,
					  "listen", o->listen, "port", (int)port, "store", o->db,
					  "fabric", o->fabric));
	else
		fprintf(stderr, "dtplan serve: listening on port %u (%s), store %s\n", port,
			o->listen, o->db);
	fflush(stderr);
	do {
		if (sigwait(&set, &sig) != 0)
			break;
	} while (sig == SIGHUP);
	if (o->json)
		serve_json_line(stdout, "stopping", json_pack("{s:s}", "signal", strsignal(sig)));
	else
		fprintf(stderr, "dtplan serve: stopping\n");
	rv = DTPLAN_OK;
out:
	serve_stop(srv);
	serve_store_close(st);
	json_decref(fabric);
	return rv;
}
