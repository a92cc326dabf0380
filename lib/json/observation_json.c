/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * observation_json.c: a finished job's record, from the files it left
 * (the plugin's epilog and dtplan observe), and "dtplan.observation/1",
 * what a collector receives for it.
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

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

enum dtplan_err dtplan_observation_to_json(const struct dtplan_record *r, char **out,
					   struct dtplan_error *err)
{
	char when[32] = "";
	time_t t = (time_t)r->time;
	struct tm tm;
	json_t *o;

	*out = NULL;
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "time", 0, "time %lld out of range",
				     (long long)r->time);
	o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:I, s:I, s:o, s:s}",
		      "schema", DTPLAN_OBSERVATION_SCHEMA, "job_id", (json_int_t)r->job_id, "user",
		      r->user, "cluster", r->cluster, "fingerprint", r->fingerprint, "gpu", r->gpu,
		      "model", r->model, "framework", r->framework, "predicted_step_s",
		      num_or_null(r->predicted_step_s), "measured_step_s",
		      num_or_null(r->measured_step_s), "measured_step_spread_s",
		      num_or_null(r->measured_spread_s), "steps", (json_int_t)r->steps, "refused",
		      (json_int_t)r->refused, "checkpoint_s", num_or_null(r->checkpoint_s), "time",
		      when);
	if (o == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	*out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(o);
	return *out != NULL ? DTPLAN_OK
			    : dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
}

/* Adds "what: why" to notes, after "; " when it holds some already. */
static void note(char *notes, size_t size, const char *what, const char *why)
{
	size_t n = strlen(notes);

	if (n + 1 < size)
		snprintf(notes + n, size - n, "%s%s: %s", n > 0 ? "; " : "", what, why);
}

/* One input read and parsed; a refusal becomes a note, never an error
 * (but running out of memory is). */
static enum dtplan_err one(struct dtplan_observation *o, const char *path, bool log,
			   const struct dtplan_observe_ctx *ctx, char *notes, size_t size,
			   struct dtplan_error *err)
{
	struct dtplan_error e = {0};
	char *text = NULL, buf[512];
	size_t len = 0;
	bool cut = false;
	enum dtplan_err rv;

	rv = dtplan_observe_read(path, log ? DTPLAN_OBSERVE_LOG_TAIL : DTPLAN_OBSERVE_MAX_BYTES,
				 log, &text, &len, &cut, &e);
	if (rv == DTPLAN_OK)
		rv = log ? dtplan_observe_parse_log(o, text, len, ctx, &e)
			 : dtplan_observe_parse_jsonl(o, text, len, &e);
	free(text);
	if (rv == DTPLAN_ERR_NOMEM) {
		*err = e;
		return rv;
	}
	if (rv != DTPLAN_OK)
		note(notes, size, "not read", dtplan_error_format(&e, buf, sizeof(buf)));
	else if (cut)
		note(notes, size, path, "only its last 16 MiB read");
	return DTPLAN_OK;
}

enum dtplan_err dtplan_job_observe(const struct dtplan_job_files *f, const char *cluster,
				   struct dtplan_record *r, char *source, size_t source_size,
				   char *notes, size_t notes_size, struct dtplan_error *err)
{
	struct dtplan_observation o = {0};
	struct dtplan_plan *plan = NULL;
	char *text = NULL;
	size_t kept = 0;
	enum dtplan_err rv;

	notes[0] = '\0';
	if (source_size > 0)
		source[0] = '\0';
	if ((rv = dtplan_file_read(f->plan, DTPLAN_FILE_PLAN, &text, NULL, err)) != DTPLAN_OK ||
	    (rv = dtplan_plan_from_json(text, &plan, err)) != DTPLAN_OK)
		goto out;
	{
		const struct dtplan_observe_ctx ctx = {
			.global_batch = plan->best.global_batch,
			.seq = plan->request.seq,
			.gpus = plan->request.gpus,
		};

		if (f->observe != NULL &&
		    (rv = one(&o, f->observe, false, &ctx, notes, notes_size, err)) != DTPLAN_OK)
			goto out;
		if (f->output != NULL && o.n_steps == 0 &&
		    (rv = one(&o, f->output, true, &ctx, notes, notes_size, err)) != DTPLAN_OK)
			goto out;
	}
	if (o.n_rejected > 0) {
		size_t n = strlen(notes);

		if (n + 1 < notes_size)
			snprintf(notes + n, notes_size - n,
				 "%s%zu observation%s refused, the first at %s", n > 0 ? "; " : "",
				 o.n_rejected, o.n_rejected == 1 ? "" : "s", o.rejected);
	}
	dtplan_record_from_plan(r, plan, cluster);
	r->refused = (int64_t)o.n_rejected;
	/* the plan is the job's file too: its prediction is a figure the job
	 * reports, bounded as a measured step is */
	if (!(r->predicted_step_s >= DTPLAN_OBSERVE_MIN_STEP_S &&
	      r->predicted_step_s <= DTPLAN_OBSERVE_MAX_STEP_S &&
	      r->model_step_s >= DTPLAN_OBSERVE_MIN_STEP_S &&
	      r->model_step_s <= DTPLAN_OBSERVE_MAX_STEP_S)) {
		rv = dtplan__error(err, DTPLAN_ERR_RANGE, f->plan, 0,
				   "refused: the plan's predicted step %.3g s (model %.3g s) "
				   "outside the physical range [%g, %g] s",
				   r->predicted_step_s, r->model_step_s, DTPLAN_OBSERVE_MIN_STEP_S,
				   DTPLAN_OBSERVE_MAX_STEP_S);
		goto out;
	}
	if ((rv = dtplan_observation_summary(&o, &r->measured_step_s, &r->measured_spread_s, &kept,
					     err)) != DTPLAN_OK)
		goto out;
	r->steps = (int64_t)kept;
	r->checkpoint_s = dtplan_observation_checkpoint(&o);
	if (source_size > 0)
		snprintf(source, source_size, "%s", o.source);
	rv = DTPLAN_OK;
out:
	dtplan_observation_fini(&o);
	dtplan_plan_destroy(plan);
	free(text);
	return rv;
}
