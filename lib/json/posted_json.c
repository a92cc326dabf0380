/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posted_json.c: what a collector takes (dtplan serve, ReportURL=): a plan
 * report (dtplan.report/1, report_json.c writes it), a job's observation
 * (dtplan.observation/1, observation_json.c) or a prolog's measurements
 * (dtplan.measurements/1, measure_json.c), each checked member by member
 * against the tables below: the one list of what a posted document must
 * hold, next to the writers of the same documents.
 *
 * A member's type is checked, an observation's fingerprint (it names
 * records), and every figure the collector learns from: each within the
 * physical range of the tables below (ranges[]), else DTPLAN_ERR_RANGE
 * naming the member, its value and its range (issue 32: one user's 1e300 s
 * made a group's mean infinite).  The collector keeps the text whole and
 * reads the rest as it stores it, skipping what it does not find.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define SRC "report"

/* A member's expected type: what it may be. */
enum want { W_STR = 1, W_INT = 2, W_NUM = 4, W_NULL = 8, W_OBJ = 16, W_ARR = 32 };

struct member {
	const char *key;
	unsigned want;
};

static const struct member report_members[] = {
	{"sender", W_STR | W_NULL}, {"time", W_STR | W_NULL}, {"cluster", W_STR | W_NULL},
	{"job_id", W_INT | W_NULL}, {"user", W_STR | W_NULL}, {"uid", W_INT | W_NULL},
	{"nodes", W_STR | W_NULL},  {"host", W_STR | W_NULL}, {"state", W_STR},
	{"warnings", W_ARR},        {"plan", W_OBJ | W_NULL}, {NULL, 0},
};

/* The observation's members (the contract with the poster of step times). */
static const struct member observation_members[] = {
	{"job_id", W_INT},
	{"user", W_STR},
	{"cluster", W_STR},
	{"fingerprint", W_STR},
	{"gpu", W_STR},
	{"model", W_STR},
	{"framework", W_STR},
	{"predicted_step_s", W_NUM},
	{"measured_step_s", W_NUM},
	{"measured_step_spread_s", W_NUM},
	{"steps", W_INT},
	{"checkpoint_s", W_NUM | W_NULL},
	{"time", W_STR},
	{NULL, 0},
};

static const struct member measurement_members[] = {
	{"job_id", W_INT},
	{"measurements", W_OBJ},
	{NULL, 0},
};

/* A figure's physical range: a step time between 0.1 ms and 11 days, a
 * bandwidth up to 100 TB/s, a latency up to an hour, an oversubscription
 * between 1:100 and 10,000:1. */
struct range {
	const char *key;
	double min, max;
};

static const struct range observation_ranges[] = {
	{"predicted_step_s", 1e-4, 1e6},    {"measured_step_s", 1e-4, 1e6},
	{"measured_step_spread_s", 0, 1e6}, {"steps", 0, 1e12},
	{"checkpoint_s", 0, 1e7},           {NULL, 0, 0},
};

/* In a measurements object's tiers, links and uplinks. */
static const struct range measure_ranges[] = {
	{"bandwidth_bytes_per_s", 0, 1e14}, {"latency_us", 0, 3.6e9},
	{"oversubscription", 0.01, 1e4},    {"configured", 0.01, 1e4},
	{"aggregate_bytes_per_s", 0, 1e14}, {NULL, 0, 0},
};

/* o's members named in r, when numbers, within their range. */
static enum dtplan_err check_ranges(const json_t *o, const struct range *r, const char *where,
				    struct dtplan_error *err)
{
	for (; json_is_object(o) && r->key != NULL; r++) {
		const json_t *v = json_object_get(o, r->key);
		double x = json_number_value(v);

		if (!json_is_number(v))
			continue;
		/* NaN fails both comparisons; denormals are below every minimum */
		if (!(x >= r->min && x <= r->max) || (x != 0 && fabs(x) < 1e-300))
			return dtplan__error(err, DTPLAN_ERR_RANGE, SRC, 0,
					     "%s\"%s\" is %g, outside its physical range [%g, %g]",
					     where, r->key, x, r->min, r->max);
	}
	return DTPLAN_OK;
}

/* A measurements object: its tiers', links' and uplinks' figures. */
static enum dtplan_err check_measurements(const json_t *m, struct dtplan_error *err)
{
	const char *key;
	const json_t *v;
	size_t i;
	enum dtplan_err ret = DTPLAN_OK;

	if (!json_is_object(m))
		return DTPLAN_OK;
	json_object_foreach((json_t *)json_object_get(m, "tiers"), key, v)
	{
		if ((ret = check_ranges(v, measure_ranges, "a tier's ", err)) != DTPLAN_OK)
			return ret;
	}
	json_array_foreach(json_object_get(m, "links"), i, v)
	{
		if ((ret = check_ranges(v, measure_ranges, "a link's ", err)) != DTPLAN_OK)
			return ret;
	}
	json_array_foreach(json_object_get(m, "uplinks"), i, v)
	{
		if ((ret = check_ranges(v, measure_ranges, "an uplink's ", err)) != DTPLAN_OK)
			return ret;
	}
	return ret;
}

static bool is(const json_t *v, unsigned want)
{
	return ((want & W_STR) && json_is_string(v)) || ((want & W_INT) && json_is_integer(v)) ||
	       ((want & W_NUM) && json_is_number(v)) || ((want & W_NULL) && json_is_null(v)) ||
	       ((want & W_OBJ) && json_is_object(v)) || ((want & W_ARR) && json_is_array(v));
}

static const char *want_name(unsigned want)
{
	if (want & W_OBJ)
		return want & W_NULL ? "an object or null" : "an object";
	if (want & W_ARR)
		return "an array";
	if (want & W_STR)
		return want & W_NULL ? "a string or null" : "a string";
	if (want & W_INT)
		return want & W_NULL ? "an integer or null" : "an integer";
	return want & W_NULL ? "a number or null" : "a number";
}

static enum dtplan_err check_members(const json_t *doc, const struct member *m,
				     struct dtplan_error *err)
{
	for (; m->key != NULL; m++) {
		const json_t *v = json_object_get(doc, m->key);

		if (v == NULL)
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no member \"%s\"",
					     m->key);
		if (!is(v, m->want))
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "\"%s\" must be %s",
					     m->key, want_name(m->want));
	}
	return DTPLAN_OK;
}

/* doc's kind and members. */
static enum dtplan_err check(const json_t *doc, enum dtplan_posted_kind *kind,
			     struct dtplan_error *err)
{
	const char *schema, *fp;
	enum dtplan_err ret;

	if (!json_is_object(doc))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "must be a JSON object");
	schema = json_string_value(json_object_get(doc, "schema"));
	if (schema == NULL)
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, SRC, 0, "no \"schema\" string");
	if (strcmp(schema, DTPLAN_REPORT_SCHEMA) == 0) {
		const json_t *plan = json_object_get(doc, "plan");

		*kind = DTPLAN_POSTED_REPORT;
		if ((ret = check_members(doc, report_members, err)) != DTPLAN_OK)
			return ret;
		if (json_is_object(plan) && !json_is_string(json_object_get(plan, "schema")))
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "\"plan\" has no \"schema\"");
		return check_measurements(json_object_get(plan, "measurements"), err);
	}
	if (strcmp(schema, DTPLAN_OBSERVATION_SCHEMA) == 0) {
		*kind = DTPLAN_POSTED_OBSERVATION;
		if ((ret = check_members(doc, observation_members, err)) != DTPLAN_OK)
			return ret;
		fp = json_string_value(json_object_get(doc, "fingerprint"));
		if (fp[0] == '\0' || strspn(fp, "0123456789abcdef") != strlen(fp))
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "\"fingerprint\" must be lowercase hex, not '%.64s'",
					     fp);
		return check_ranges(doc, observation_ranges, "", err);
	}
	if (strcmp(schema, DTPLAN_MEASURE_SCHEMA) == 0) {
		*kind = DTPLAN_POSTED_MEASUREMENT;
		if ((ret = check_members(doc, measurement_members, err)) != DTPLAN_OK)
			return ret;
		return check_measurements(json_object_get(doc, "measurements"), err);
	}
	return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, SRC, 0,
			     "schema '%.200s' is not one the collector takes", schema);
}

enum dtplan_err dtplan_posted_parse(const char *text, size_t len, struct json_t **doc,
				    enum dtplan_posted_kind *kind, struct dtplan_error *err)
{
	enum dtplan_posted_kind k = DTPLAN_POSTED_REPORT;
	enum dtplan_err rv;
	json_error_t jerr;
	json_t *root = NULL;

	if (doc != NULL)
		*doc = NULL;
	if (text == NULL || doc == NULL || kind == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "no text or output pointer");
		goto out;
	}
	/* every value takes a byte at least: the nesting is what is bounded */
	rv = dtplan__json_bounded(text, len, len + 1, SRC, "not JSON: ", err);
	if (rv != DTPLAN_OK)
		goto out;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, jerr.line > 0 ? jerr.line : 0,
				   "not JSON: line %d: %s", jerr.line, jerr.text);
		goto out;
	}
	rv = check(root, &k, err);
	if (rv != DTPLAN_OK)
		goto out;
	*kind = k;
	*doc = root;
	root = NULL;
out:
	json_decref(root);
	return rv;
}
