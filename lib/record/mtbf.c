/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mtbf.c: the per-GPU MTBF from Slurm's own records: node-down events
 * (sacctmgr -P show event) and jobs ended by NODE_FAIL (sacct -P), read
 * from their parsable output, with an exact chi-square confidence
 * interval (dtplan/record.h).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "2026-12-01T10:00:00" (local time, as Slurm prints it) -> seconds; -1 for
 * "Unknown", "None" or anything else. */
static int64_t slurm_time(const char *s)
{
	struct tm tm;
	char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end == NULL || *end != '\0')
		return -1;
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm);
}

/* Splits line at '|' into at most max fields, the last one taking the rest
 * of the line whole: the free text Slurm asks for last (an event's reason)
 * may hold a '|' of its own, which the parsable output does not escape.
 * Returns how many. */
static size_t fields(char *line, char **f, size_t max)
{
	size_t n = 0;

	f[n++] = line;
	for (char *s = line; *s != '\0' && n < max; s++)
		if (*s == '|') {
			*s = '\0';
			f[n++] = s + 1;
		}
	return n;
}

/* The line fields() cut into fewer than max fields, whole again. */
static const char *rejoin(char **f, size_t max)
{
	for (size_t i = 1; i < max && f[i] != NULL; i++)
		f[i][-1] = '|';
	return f[0];
}

/* Calls row(fields, ctx) for each non-empty line of text, split into want
 * fields (the last one the rest of the line); a line of fewer fields after
 * a row goes to more(line, ctx) when there is one (the free text went on
 * past a newline), else it is an error.  Stops at the first error, naming
 * the line. */
static enum dtplan_err each_line(const char *text, const char *what, size_t want,
				 enum dtplan_err (*row)(char **f, void *ctx,
							struct dtplan_error *err),
				 void (*more)(const char *line, void *ctx), void *ctx,
				 struct dtplan_error *err)
{
	char *copy = strdup(text), *save = NULL;
	enum dtplan_err rv = DTPLAN_OK;
	size_t line = 0, rows = 0;

	if (copy == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, what, 0, "out of memory");
	for (char *l = strtok_r(copy, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		char *f[16] = {NULL};

		line++;
		if (l[0] == '\0')
			continue;
		if (fields(l, f, want) != want) {
			if (more != NULL && rows > 0) {
				more(rejoin(f, want), ctx);
				continue;
			}
			rv = dtplan__error(
				err, DTPLAN_ERR_PARSE, what, (int)line,
				"%zu fields expected (parsable output, '|' between them)", want);
			break;
		}
		if ((rv = row(f, ctx, err)) != DTPLAN_OK) {
			err->line = (int)line;
			break;
		}
		rows++;
	}
	free(copy);
	return rv;
}

struct grow {
	void **v;
	size_t *n, size;
};

static void *grow_one(struct grow *g)
{
	char *m;

	if ((*g->n & (*g->n - 1)) == 0) {
		m = realloc(*g->v, (*g->n > 0 ? 2 * *g->n : 1) * g->size);
		if (m == NULL)
			return NULL;
		*g->v = m;
	}
	m = (char *)*g->v + (*g->n)++ * g->size;
	memset(m, 0, g->size);
	return m;
}

static enum dtplan_err event_row(char **f, void *ctx, struct dtplan_error *err)
{
	struct dtplan_node_event *e = grow_one(ctx);

	if (e == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "sacctmgr", 0, "out of memory");
	dtplan__strlcpy(e->node, f[0], sizeof(e->node));
	e->start = slurm_time(f[1]);
	e->end = slurm_time(f[2]);
	dtplan__strlcpy(e->state, f[3], sizeof(e->state));
	dtplan__strlcpy(e->reason, f[4], sizeof(e->reason));
	if (e->start < 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, "sacctmgr", 0,
				     "event of %s: start '%s' is not a time", f[0], f[1]);
	return DTPLAN_OK;
}

/* A reason that went on past a newline: the rest joins the last event's,
 * after a space. */
static void event_more(const char *line, void *ctx)
{
	struct grow *g = ctx;
	struct dtplan_node_event *e = (struct dtplan_node_event *)*g->v + (*g->n - 1);
	size_t n = strlen(e->reason);

	if (n + 1 < sizeof(e->reason))
		snprintf(e->reason + n, sizeof(e->reason) - n, " %s", line);
}

enum dtplan_err dtplan_slurm_events_parse(const char *text, struct dtplan_node_event **out,
					  size_t *n, struct dtplan_error *err)
{
	struct grow g = {(void **)out, n, sizeof(**out)};
	enum dtplan_err rv;

	*out = NULL;
	*n = 0;
	rv = each_line(text, "sacctmgr", 5, event_row, event_more, &g, err);
	if (rv != DTPLAN_OK) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rv;
}

static enum dtplan_err job_row(char **f, void *ctx, struct dtplan_error *err)
{
	struct dtplan_failed_job *j = grow_one(ctx);
	char *end;

	if (j == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "sacct", 0, "out of memory");
	j->job_id = strtoll(f[0], &end, 10);
	if (end == f[0] || *end != '\0')
		return dtplan__error(err, DTPLAN_ERR_PARSE, "sacct", 0, "job id '%s'", f[0]);
	dtplan__strlcpy(j->nodes, f[1], sizeof(j->nodes));
	j->start = slurm_time(f[2]);
	j->end = slurm_time(f[3]);
	dtplan__strlcpy(j->state, f[4], sizeof(j->state));
	return DTPLAN_OK;
}

enum dtplan_err dtplan_slurm_jobs_parse(const char *text, struct dtplan_failed_job **out, size_t *n,
					struct dtplan_error *err)
{
	struct grow g = {(void **)out, n, sizeof(**out)};
	enum dtplan_err rv;

	*out = NULL;
	*n = 0;
	rv = each_line(text, "sacct", 5, job_row, NULL, &g, err);
	if (rv != DTPLAN_OK) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rv;
}

/* ------------------------------------------------------------------------
 * The chi-square quantile (for the interval)
 * ---------------------------------------------------------------------- */

/* The regularized lower incomplete gamma P(a, x): its series for x < a + 1,
 * else 1 - the continued fraction of Q (Lentz). */
static double gamma_p(double a, double x)
{
	double gln = lgamma(a);

	if (x <= 0.0)
		return 0.0;
	if (x < a + 1.0) {
		double sum = 1.0 / a, del = sum, ap = a;

		for (int i = 0; i < 1000; i++) {
			ap += 1.0;
			del *= x / ap;
			sum += del;
			if (fabs(del) < fabs(sum) * 1e-15)
				break;
		}
		return sum * exp(-x + a * log(x) - gln);
	} else {
		double b = x + 1.0 - a, c = 1.0 / 1e-300, d = 1.0 / b, h = d;

		for (int i = 1; i < 1000; i++) {
			double an = -i * (i - a), del;

			b += 2.0;
			d = an * d + b;
			if (fabs(d) < 1e-300)
				d = 1e-300;
			c = b + an / c;
			if (fabs(c) < 1e-300)
				c = 1e-300;
			d = 1.0 / d;
			del = d * c;
			h *= del;
			if (fabs(del - 1.0) < 1e-15)
				break;
		}
		return 1.0 - exp(-x + a * log(x) - gln) * h;
	}
}

double dtplan_chi2_quantile(double p, double dof)
{
	double lo = 0.0, hi = dof + 10.0 * sqrt(2.0 * dof) + 100.0;

	if (!(p > 0.0 && p < 1.0) || !(dof > 0.0))
		return NAN;
	while (gamma_p(dof / 2.0, hi / 2.0) < p)
		hi *= 2.0;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2.0;

		if (gamma_p(dof / 2.0, mid / 2.0) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2.0;
}

/* ------------------------------------------------------------------------
 * The MTBF
 * ---------------------------------------------------------------------- */

static bool is_failure(const struct dtplan_node_event *e)
{
	/* DOWN, DOWN*, DOWN+DRAIN, FAIL, FAILING: the node stopped; a plain
	 * DRAIN or MAINT is the admin's, not a failure */
	return strstr(e->state, "DOWN") != NULL || strstr(e->state, "FAIL") != NULL;
}

static int cmp_event(const void *a, const void *b)
{
	const struct dtplan_node_event *x = *(const struct dtplan_node_event *const *)a,
				       *y = *(const struct dtplan_node_event *const *)b;
	int c = strcmp(x->node, y->node);

	return c != 0 ? c : (x->start > y->start) - (x->start < y->start);
}

static int cmp_job(const void *a, const void *b)
{
	int64_t x = (*(const struct dtplan_failed_job *const *)a)->job_id,
		y = (*(const struct dtplan_failed_job *const *)b)->job_id;

	return (x > y) - (x < y);
}

/* Whether a job's node list names one of the nodes watched (in map; a
 * list too long or not a host list: none of them). */
static bool job_watched(const struct dtplan__strmap *map, const char *list)
{
	char(*names)[64] = NULL;
	size_t n = 0;
	bool hit = false;

	if (dtplan_hostlist_expand(list, 1 << 16, &names, &n, NULL) != DTPLAN_OK)
		return false;
	for (size_t i = 0; i < n && !hit; i++)
		hit = dtplan__strmap_get(map, names[i]) >= 0;
	free(names);
	return hit;
}

/* Counts the failures (events) and NODE_FAIL jobs in the window: of the
 * nodes watched (in->nodes), each once. */
static enum dtplan_err count(const struct dtplan_mtbf_in *in,
			     const struct dtplan_node_event *events, size_t n_events,
			     const struct dtplan_failed_job *jobs, size_t n_jobs,
			     struct dtplan_mtbf *out, struct dtplan_error *err)
{
	struct dtplan__strmap map = {0};
	const struct dtplan_node_event **ev = NULL;
	const struct dtplan_failed_job **fj = NULL;
	size_t ne = 0, nj = 0;
	enum dtplan_err rv;

	if (in->nodes != NULL) {
		if ((rv = dtplan__strmap_init(&map, in->n_nodes)) != DTPLAN_OK)
			goto nomem;
		for (size_t i = 0; i < in->n_nodes; i++)
			if ((rv = dtplan__strmap_put(&map, in->nodes[i], 0, NULL)) ==
			    DTPLAN_ERR_NOMEM)
				goto nomem;
	}
	ev = malloc((n_events > 0 ? n_events : 1) * sizeof(*ev));
	fj = malloc((n_jobs > 0 ? n_jobs : 1) * sizeof(*fj));
	if (ev == NULL || fj == NULL)
		goto nomem;
	for (size_t i = 0; i < n_events; i++) {
		if (!is_failure(&events[i]) || events[i].start < in->window_start ||
		    events[i].start >= in->window_end)
			continue;
		if (in->nodes != NULL && dtplan__strmap_get(&map, events[i].node) < 0)
			out->other_nodes++;
		else
			ev[ne++] = &events[i];
	}
	for (size_t i = 0; i < n_jobs; i++) {
		if (strstr(jobs[i].state, "NODE_FAIL") == NULL || jobs[i].end < in->window_start ||
		    jobs[i].end >= in->window_end)
			continue;
		if (in->nodes != NULL && !job_watched(&map, jobs[i].nodes))
			out->other_nodes++;
		else
			fj[nj++] = &jobs[i];
	}
	qsort(ev, ne, sizeof(*ev), cmp_event);
	qsort(fj, nj, sizeof(*fj), cmp_job);
	for (size_t i = 0; i < ne; i++) {
		if (i > 0 && cmp_event(&ev[i - 1], &ev[i]) == 0)
			out->repeated++;
		else
			out->failures++;
	}
	for (size_t i = 0; i < nj; i++) {
		if (i > 0 && fj[i - 1]->job_id == fj[i]->job_id)
			out->repeated++;
		else
			out->node_fail_jobs++;
	}
	rv = DTPLAN_OK;
	goto out;
nomem:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "mtbf", 0, "out of memory");
out:
	free(ev);
	free(fj);
	dtplan__strmap_fini(&map);
	return rv;
}

enum dtplan_err dtplan_mtbf_compute(const struct dtplan_mtbf_in *in,
				    const struct dtplan_node_event *events, size_t n_events,
				    const struct dtplan_failed_job *jobs, size_t n_jobs,
				    struct dtplan_mtbf *out, struct dtplan_error *err)
{
	double hours, alpha, t;
	enum dtplan_err rv;

	memset(out, 0, sizeof(*out));
	if (in->window_end <= in->window_start || in->n_nodes < 1 || in->gpus_per_node < 1 ||
	    !(in->confidence > 0.0 && in->confidence < 1.0))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "mtbf", 0,
				     "an empty window, no nodes or GPUs, or a confidence outside "
				     "(0, 1)");
	hours = (double)(in->window_end - in->window_start) / 3600.0;
	out->gpu_hours = hours * (double)in->n_nodes * in->gpus_per_node;
	out->confidence = in->confidence;
	if ((rv = count(in, events, n_events, jobs, n_jobs, out, err)) != DTPLAN_OK)
		return rv;
	/* Time-truncated observation of a Poisson process: the exact interval
	 * for the mean time between failures is [2T / chi2(1 - a/2; 2F + 2),
	 * 2T / chi2(a/2; 2F)], a = 1 - confidence (e.g. NIST/SEMATECH
	 * e-Handbook 8.4.5.1); no failure: no estimate, and the lower bound
	 * 2T / chi2(1 - a; 2) alone. */
	alpha = 1.0 - in->confidence;
	t = out->gpu_hours;
	if (out->failures == 0) {
		out->mtbf_gpu_hours = INFINITY;
		out->lower_gpu_hours = 2.0 * t / dtplan_chi2_quantile(1.0 - alpha, 2.0);
		out->upper_gpu_hours = INFINITY;
	} else {
		out->mtbf_gpu_hours = t / out->failures;
		out->lower_gpu_hours =
			2.0 * t /
			dtplan_chi2_quantile(1.0 - alpha / 2.0, 2.0 * out->failures + 2.0);
		out->upper_gpu_hours =
			2.0 * t / dtplan_chi2_quantile(alpha / 2.0, 2.0 * out->failures);
	}
	return DTPLAN_OK;
}
