/*
 * report_json.c: what a collector (ReportURL=) receives for each plan,
 * "dtplan.report/1": who, where and when, the plan's state and warnings,
 * and the plan itself.  Keys keep their order, so reports of the same plan
 * are the same text.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

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

/* The plan's node names in hostlist form, or null. */
static json_t *plan_nodes(json_t *plan)
{
	json_t *nodes = json_object_get(json_object_get(plan, "placement"), "nodes"), *v;
	char(*names)[64] = NULL, *buf = NULL;
	json_t *out = json_null();
	size_t n = json_array_size(nodes), i;

	if (n == 0)
		return out;
	names = calloc(n, sizeof(*names));
	buf = malloc(n * 68 + 16);
	if (names == NULL || buf == NULL)
		goto done;
	json_array_foreach(nodes, i, v)
		dtplan__strlcpy(names[i], json_is_string(v) ? json_string_value(v) : "?",
				sizeof(names[0]));
	dtplan_hostlist_compress((const char(*)[64])names, n, buf, n * 68 + 16);
	json_decref(out);
	out = json_string(buf);
done:
	free(names);
	free(buf);
	return out;
}

enum dtplan_err dtplan_report_to_json(const struct dtplan_report *r, char **out,
				      struct dtplan_error *err)
{
	json_t *root = NULL, *plan = NULL, *warnings, *schema;
	const char *state;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (r == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no report or output pointer");
		goto out;
	}
	if (r->plan_json != NULL) {
		/* a plan of DTPLAN_PLAN_MAX_RANKS ranks takes about 12 values a rank */
		plan = dtplan__json_load(r->plan_json, strlen(r->plan_json), (size_t)1 << 24,
					 "plan", "not valid JSON: ", err);
		if (plan == NULL) {
			rv = DTPLAN_ERR_PARSE;
			goto out;
		}
		schema = json_object_get(plan, "schema");
		if (!json_is_string(schema) ||
		    strcmp(json_string_value(schema), DTPLAN_PLAN_SCHEMA) != 0) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "plan", 0,
					   "not a %s document (schema %s)", DTPLAN_PLAN_SCHEMA,
					   json_is_string(schema) ? json_string_value(schema)
								  : "missing");
			goto out;
		}
	}
	state = r->state;
	if (state == NULL && plan != NULL && !json_is_true(json_object_get(plan, "degraded")))
		state = "ok";
	else if (state == NULL)
		state = "degraded";
	warnings = plan != NULL ? json_object_get(plan, "warnings") : NULL;
	warnings = json_is_array(warnings) ? json_deep_copy(warnings) : json_array();
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
	    !put(root, "nodes", r->nodes != NULL ? json_string(r->nodes) : plan_nodes(plan)) ||
	    !put(root, "host", str_or_null(r->host)) || !put(root, "state", json_string(state)) ||
	    !put(root, "reason",
		 r->reason != NULL && r->reason[0] != '\0' ? json_string(r->reason)
							   : json_null()) ||
	    !put(root, "warnings", warnings) ||
	    !put(root, "plan", plan != NULL ? json_incref(plan) : json_null()))
		goto fail;
	*out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (*out == NULL)
		goto fail;
	rv = DTPLAN_OK;
	goto out;
fail:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0,
			   "cannot write the report: out of memory, or a value that is not UTF-8");
out:
	json_decref(root);
	json_decref(plan);
	return rv;
}
