/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_fill.c: fills a collector's store through its own API
 * (serve_store_add(), serve/serve_store.c), for tests of the pages at a
 * size no munged could sign in time (tests/cli/test_serve_page.sh): each
 * line of FILE is {"age": S, "poster": UID, "doc": DOCUMENT}, kept as if
 * received S seconds ago from UID after the checks the server makes
 * (dtplan_posted_parse()).
 *
 * usage: serve_fill DB FILE.  Exit 0 when every line was kept, 1 naming the
 * first line that was not.
 */
#include "config.h"

#include "serve_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct serve_store *st = NULL;
	struct dtplan_error err = {0};
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	long n = 0;
	long long now = (long long)time(NULL);
	int rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: serve_fill DB FILE\n");
		return 2;
	}
	f = fopen(argv[2], "r");
	if (f == NULL) {
		perror(argv[2]);
		return 1;
	}
	if (serve_store_open(argv[1], SERVE_KEEP_REPORTS, SERVE_KEEP_DAYS, &st, &err) !=
	    DTPLAN_OK) {
		fprintf(stderr, "serve_fill: %s: %s\n", err.source, err.text);
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL), *doc = NULL;
		enum dtplan_posted_kind kind;
		char *body = NULL;
		long long id;
		bool ok;

		n++;
		body = j != NULL ? json_dumps(json_object_get(j, "doc"), JSON_COMPACT) : NULL;
		ok = body != NULL &&
		     dtplan_posted_parse(body, strlen(body), &doc, &kind, &err) == DTPLAN_OK &&
		     serve_store_add(st, kind, doc, body,
				     json_integer_value(json_object_get(j, "poster")),
				     now - json_integer_value(json_object_get(j, "age")), &id,
				     &err) == DTPLAN_OK;
		json_decref(doc);
		json_decref(j);
		free(body);
		if (!ok) {
			fprintf(stderr, "serve_fill: %s:%ld: not kept: %s\n", argv[2], n, err.text);
			goto out;
		}
	}
	rc = 0;
out:
	free(line);
	fclose(f);
	serve_store_close(st);
	return rc;
}
