/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mtbf_json.c: the cache of `dtplan mtbf --write-cache` ("dtplan.mtbf/1"),
 * and what plans take from it with the site's MTBF=slurm.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MTBF_SCHEMA "dtplan.mtbf/1"
#define CACHE_MAX (64u << 10)

static void utc(int64_t t, char *buf, size_t size)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "?");
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

enum dtplan_err dtplan_mtbf_to_json(const struct dtplan_mtbf *m, int64_t start, int64_t end,
				    size_t nodes, int64_t now, char **out, struct dtplan_error *err)
{
	char s[32], e[32], t[32];
	json_t *o;

	utc(start, s, sizeof(s));
	utc(end, e, sizeof(e));
	utc(now, t, sizeof(t));
	o = json_pack("{s:s, s:s, s:s, s:I, s:o, s:i, s:i, s:o, s:o, s:o, s:o, s:s, s:s}", "schema",
		      MTBF_SCHEMA, "start", s, "end", e, "nodes", (json_int_t)nodes, "gpu_hours",
		      num_or_null(m->gpu_hours), "failures", m->failures, "node_fail_jobs",
		      m->node_fail_jobs, "mtbf_gpu_hours", num_or_null(m->mtbf_gpu_hours),
		      "lower_gpu_hours", num_or_null(m->lower_gpu_hours), "upper_gpu_hours",
		      num_or_null(m->upper_gpu_hours), "confidence", num_or_null(m->confidence),
		      "interval", "exact chi-square (Poisson, time-truncated)", "time", t);
	*out = o != NULL ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
						 JSON_REAL_PRECISION(17))
			 : NULL;
	json_decref(o);
	return *out != NULL ? DTPLAN_OK
			    : dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
}

enum dtplan_err dtplan_mtbf_cache_apply(const struct dtplan_config *c, struct dtplan_request *r,
					struct dtplan_error *err)
{
	json_t *j = NULL, *v;
	json_error_t je;
	char *text = NULL, buf[512];
	const char *start, *end, *when;
	double mtbf, gpu_hours, conf;
	int failures;
	enum dtplan_err rv;

	if (strcasecmp(c->mtbf_from, "slurm") != 0) {
		if (c->mtbf_from[0] == '\0')
			return DTPLAN_OK;
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "MTBF", 0,
				   "'%s' unknown (slurm, or empty for MtbfGpuHours=)",
				   c->mtbf_from);
		goto fail;
	}
	if ((rv = dtplan_observe_read(c->mtbf_cache, CACHE_MAX, false, &text, NULL, NULL, err)) !=
	    DTPLAN_OK)
		goto fail;
	j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	v = json_object_get(j, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), MTBF_SCHEMA) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, c->mtbf_cache, 0,
				   "not a %s document (dtplan mtbf --write-cache writes one)",
				   MTBF_SCHEMA);
		goto fail;
	}
	failures = (int)json_integer_value(json_object_get(j, "failures"));
	gpu_hours = json_number_value(json_object_get(j, "gpu_hours"));
	conf = json_number_value(json_object_get(j, "confidence"));
	v = json_object_get(j, failures > 0 ? "mtbf_gpu_hours" : "lower_gpu_hours");
	mtbf = json_is_number(v) ? json_number_value(v) : NAN;
	start = json_string_value(json_object_get(j, "start"));
	end = json_string_value(json_object_get(j, "end"));
	when = json_string_value(json_object_get(j, "time"));
	if (!isfinite(mtbf) || mtbf < 1.0 || mtbf > 1e12 || start == NULL || end == NULL ||
	    when == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_RANGE, c->mtbf_cache, 0,
				   "no usable mtbf_gpu_hours, window or time");
		goto fail;
	}
	r->mtbf_gpu_hours = mtbf;
	snprintf(r->mtbf_source, sizeof(r->mtbf_source),
		 "Slurm accounting: %d failure%s in %.0f GPU-hours, %.10s to %.10s%s, cached %s",
		 failures, failures == 1 ? "" : "s", gpu_hours, start, end,
		 failures > 0               ? ""
		 : conf > 0.0 && conf < 1.0 ? ", none: the lower bound"
					    : "",
		 when);
	rv = DTPLAN_OK;
	goto out;
fail:
	snprintf(r->mtbf_source, sizeof(r->mtbf_source),
		 "the site's MtbfGpuHours= (MTBF=slurm: %s)",
		 dtplan_error_format(err, buf, sizeof(buf)));
out:
	json_decref(j);
	free(text);
	return rv;
}
