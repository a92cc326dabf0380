/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_json.c: what a collector (ReportURL=) receives for each plan,
 * "dtplan.report/1": who, where and when, the plan's state and warnings,
 * and the plan itself.  Keys keep their order, so reports of the same plan
 * are the same text.
 *
 * The plan is never built into a tree: the plan reader's tokenizer
 * (plan_read_stream.c) checks it and finds its schema, "degraded",
 * "warnings" and "placement.nodes", and the plan and its warnings are
 * copied as text without their white space.  A report takes about twice
 * the plan's text, where a Jansson tree took about 100 bytes a value
 * (1.9 GB for a 32 MB plan).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/plan_read_int.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool put(json_t *obj, const char *key, json_t *value)
{
	return value != NULL && json_object_set_new(obj, key, value) == 0;
}

/* A string or null. */
static json_t *str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* "2024-05-01T12:00:00Z" for t seconds since the epoch; null when not given. */
static json_t *time_json(double t)
{
	char buf[32];
	struct tm tm;
	time_t secs;

	if (!(t > 0) || !isfinite(t))
		return json_null();
	secs = (time_t)t;
	if (gmtime_r(&secs, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return json_null();
	return json_string(buf);
}

/* What the report takes from the plan's text: spans of the whole plan, its
 * warnings and its placement's nodes, its schema and "degraded". */
struct plan_scan {
	struct dtplan__span plan, warnings, nodes;
	char schema[64];
	bool schema_is_string, degraded;
};

/* "placement" at the reader: the span of its "nodes" (the last one). */
static enum dtplan_err scan_placement(struct dtplan__rd *r, struct plan_scan *ps)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	char key[16];

	if (dtplan__rd_peek(r) != '{')
		return dtplan__rd_skip_value(r);
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		bool nodes = strcmp(key, "nodes") == 0;
		size_t pos = (dtplan__rd_peek(r), r->pos);

		if ((ret = dtplan__rd_skip_value(r)) != DTPLAN_OK)
			return ret;
		if (nodes)
			ps->nodes = (struct dtplan__span){.found = true, .pos = pos, .end = r->pos};
	}
	return ret;
}

/*
 * The whole plan checked, as the plan reader checks JSON (one value, UTF-8,
 * nesting bounded), and the members the report repeats found.  A member
 * given twice counts as Jansson counts it: the last one.
 */
static enum dtplan_err scan_plan(struct dtplan__rd *r, struct plan_scan *ps)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	char key[16];

	memset(ps, 0, sizeof(*ps));
	if (dtplan__rd_peek(r) != '{') {
		if ((ret = dtplan__rd_skip_value(r)) != DTPLAN_OK)
			return ret;
		goto end;
	}
	ps->plan = (struct dtplan__span){.found = true, .pos = r->pos};
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		size_t pos = (dtplan__rd_peek(r), r->pos);
		char c = r->s[pos];

		if (strcmp(key, "schema") == 0) {
			ps->schema_is_string = c == '"';
			ps->schema[0] = '\0';
			ret = c == '"' ? dtplan__rd_string(r, ps->schema, sizeof(ps->schema), NULL)
				       : dtplan__rd_skip_value(r);
		} else if (strcmp(key, "placement") == 0) {
			ps->nodes.found = false;
			ret = scan_placement(r, ps);
		} else {
			ret = dtplan__rd_skip_value(r);
		}
		if (ret != DTPLAN_OK)
			return ret;
		if (strcmp(key, "degraded") == 0)
			ps->degraded = c == 't';
		else if (strcmp(key, "warnings") == 0)
			ps->warnings =
				(struct dtplan__span){.found = c == '[', .pos = pos, .end = r->pos};
	}
	if (ret != DTPLAN_OK)
		return ret;
	ps->plan.end = r->pos;
end:
	if (dtplan__rd_peek(r) != '\0')
		return dtplan__rd_syntax(r, "end of text expected after the plan");
	return DTPLAN_OK;
}

/*
 * A plan's node runs at least one rank, and each rank's entry in
 * "placement.ranks" is over 100 bytes of the plan's text (ten members,
 * plan_json.c): a list of more names than the text's 64th part is no plan's,
 * and the report names no nodes for it (null; the plan goes whole).  So the
 * names' summary, about 150 bytes of work a name (the name, its place in
 * dtplan_hostlist_compress()), stays within about 2.5 times the plan's text,
 * where 8,000,000 one-letter names of a 32 MB plan took 1.26 GB.
 */
#define REPORT_TEXT_PER_NODE 64

/* The plan's node names in hostlist form, or null. */
static json_t *plan_nodes(const struct dtplan__rd *r, const struct plan_scan *ps)
{
	struct dtplan__rd rd;
	char(*names)[64] = NULL, *buf = NULL;
	json_t *out = NULL;
	size_t n = 0, i = 0, size;
	bool first = true, more = true;

	if (!ps->nodes.found || r->s[ps->nodes.pos] != '[')
		return json_null();
	rd = dtplan__rd_at(r, ps->nodes);
	rd.err = NULL;
	if (dtplan__rd_count_elements(&rd, &n) != DTPLAN_OK || n == 0 ||
	    n > (ps->plan.end - ps->plan.pos) / REPORT_TEXT_PER_NODE || n > DTPLAN_PLAN_MAX_NODES)
		return json_null();
	/* the summary is never longer than the list's text: each name is
	 * there, quoted, with its comma */
	size = ps->nodes.end - ps->nodes.pos + 16;
	names = calloc(n, sizeof(*names));
	buf = malloc(size);
	if (names == NULL || buf == NULL)
		goto done;
	rd = dtplan__rd_at(r, ps->nodes);
	rd.err = NULL;
	if (dtplan__rd_open_container(&rd, '[') != DTPLAN_OK)
		goto done;
	while (i < n && dtplan__rd_next_element(&rd, &first, &more) == DTPLAN_OK && more) {
		if (dtplan__rd_peek(&rd) == '"' &&
		    dtplan__rd_string(&rd, names[i], sizeof(names[0]), NULL) == DTPLAN_OK) {
			i++;
			continue;
		}
		dtplan__strlcpy(names[i++], "?", sizeof(names[0]));
		if (dtplan__rd_skip_value(&rd) != DTPLAN_OK)
			goto done;
	}
	dtplan_hostlist_compress((const char(*)[64])names, n, buf, size);
	out = json_string(buf);
done:
	free(names);
	free(buf);
	return out;
}

/* Appends span sp of text s to out at *len, without the white space
 * between tokens; the text was checked by scan_plan(). */
static void put_compact(char *out, size_t *len, const char *s, struct dtplan__span sp)
{
	for (size_t i = sp.pos; i < sp.end; i++) {
		char c = s[i];

		if (c == '"') {
			/* a string whole, as written; its end is within the span */
			size_t e = dtplan__json_skip_string(s, i, sp.end);

			if (e == 0)
				e = sp.end;
			memcpy(out + *len, s + i, e - i);
			*len += e - i;
			i = e - 1;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		out[(*len)++] = c;
	}
}

enum dtplan_err dtplan_report_to_json(const struct dtplan_report *r, char **out,
				      struct dtplan_error *err)
{
	struct dtplan__rd rd = {.err = err};
	struct plan_scan ps = {0};
	json_t *root = NULL;
	char *head = NULL, *body = NULL;
	const char *state;
	size_t n, len, size;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (r == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no report or output pointer");
		goto out;
	}
	if (r->plan_json != NULL) {
		rd.s = r->plan_json;
		rv = scan_plan(&rd, &ps);
		if (rv != DTPLAN_OK) {
			if (err != NULL) {
				char text[sizeof(err->text)];

				snprintf(text, sizeof(text), "not valid JSON: %.480s", err->text);
				dtplan__error(err, rv, "plan", err->line, "%s", text);
			}
			goto out;
		}
		if (!ps.plan.found || !ps.schema_is_string ||
		    strcmp(ps.schema, DTPLAN_PLAN_SCHEMA) != 0) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "plan", 0,
					   "not a %s document (schema %s)", DTPLAN_PLAN_SCHEMA,
					   ps.schema_is_string ? ps.schema : "missing");
			goto out;
		}
	}
	state = r->state;
	if (state == NULL && ps.plan.found && !ps.degraded)
		state = "ok";
	else if (state == NULL)
		state = "degraded";
	rv = DTPLAN_ERR_NOMEM;
	root = json_object();
	if (!put(root, "schema", json_string(DTPLAN_REPORT_SCHEMA)) ||
	    !put(root, "dtplan_version", json_string(dtplan_version())) ||
	    !put(root, "sender", str_or_null(r->sender)) ||
	    !put(root, "time", time_json(r->time)) ||
	    !put(root, "cluster", str_or_null(r->cluster)) ||
	    !put(root, "job_id", r->job_id > 0 ? json_integer(r->job_id) : json_null()) ||
	    !put(root, "user", str_or_null(r->user)) ||
	    !put(root, "uid", r->uid >= 0 ? json_integer(r->uid) : json_null()) ||
	    !put(root, "nodes", r->nodes != NULL ? json_string(r->nodes) : plan_nodes(&rd, &ps)) ||
	    !put(root, "host", str_or_null(r->host)) || !put(root, "state", json_string(state)) ||
	    !put(root, "reason",
		 r->reason != NULL && r->reason[0] != '\0' ? json_string(r->reason) : json_null()))
		goto fail;
	head = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (head == NULL)
		goto fail;
	/* head is "{...}": its '}' makes way for the warnings and the plan */
	n = strlen(head) - 1;
	size = n + sizeof(",\"warnings\":[],\"plan\":null}");
	if (ps.warnings.found)
		size += ps.warnings.end - ps.warnings.pos;
	if (ps.plan.found)
		size += ps.plan.end - ps.plan.pos;
	body = malloc(size);
	if (body == NULL)
		goto fail;
	memcpy(body, head, n);
	len = n;
	memcpy(body + len, ",\"warnings\":", 12);
	len += 12;
	if (ps.warnings.found) {
		put_compact(body, &len, rd.s, ps.warnings);
	} else {
		memcpy(body + len, "[]", 2);
		len += 2;
	}
	memcpy(body + len, ",\"plan\":", 8);
	len += 8;
	if (ps.plan.found) {
		put_compact(body, &len, rd.s, ps.plan);
	} else {
		memcpy(body + len, "null", 4);
		len += 4;
	}
	body[len++] = '}';
	body[len] = '\0';
	*out = body;
	body = NULL;
	rv = DTPLAN_OK;
	goto out;
fail:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0,
			   "cannot write the report: out of memory, or a value that is not UTF-8");
out:
	json_decref(root);
	free(head);
	free(body);
	return rv;
}
