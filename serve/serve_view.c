/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_view.c: what the collector answers, from its store, besides the
 * admin's pages (serve_page.c): /metrics in Prometheus's text format
 * (0.0.4), the fabric file enriched with what was measured, the site-wide
 * calibration records and each plan's picture (lib/launch/render.c).
 *
 * The measured figures are taken over the last SERVE_WINDOW reports.  A
 * link is slow in a report when its bandwidth is below
 * DTPLAN_STRAGGLER_FRACTION of its tier's (the straggler rule of
 * lib/measure, serve_store.c); a node's links are slow in a report when
 * more than half of the links it took part in were, and the map shows them
 * slow once that happened in SERVE_SLOW_REPORTS reports.
 */
#include "config.h"

#include "serve_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void serve_buf_add(struct serve_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || b->len + (size_t)n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *s;

		while (n >= 0 && b->len + (size_t)n + 1 > cap)
			cap *= 2;
		s = n < 0 ? NULL : realloc(b->s, cap);
		if (s == NULL) {
			free(b->s);
			memset(b, 0, sizeof(*b));
			b->failed = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void serve_buf_html(struct serve_buf *b, const char *s)
{
	for (; s != NULL && *s; s++) {
		switch (*s) {
		case '&':
			serve_buf_add(b, "&amp;");
			break;
		case '<':
			serve_buf_add(b, "&lt;");
			break;
		case '>':
			serve_buf_add(b, "&gt;");
			break;
		case '"':
			serve_buf_add(b, "&quot;");
			break;
		case '\'':
			serve_buf_add(b, "&#39;");
			break;
		default:
			serve_buf_add(b, "%c", *s);
		}
	}
}

char *serve_buf_take(struct serve_buf *b)
{
	char *s = b->failed ? NULL : b->s;

	if (s == NULL && !b->failed)
		s = strdup("");
	memset(b, 0, sizeof(*b));
	return s;
}

/* A Prometheus label value: \ " and newline escaped. */
static void label(struct serve_buf *b, const char *s)
{
	for (; s != NULL && *s; s++) {
		if (*s == '\\' || *s == '"')
			serve_buf_add(b, "\\%c", *s);
		else if (*s == '\n')
			serve_buf_add(b, "\\n");
		else
			serve_buf_add(b, "%c", *s);
	}
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t != NULL ? (const char *)t : "";
}

long long serve_window_start(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	long long first = 0;

	if (sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(id), 0) FROM reports", -1, &s, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		first = sqlite3_column_int64(s, 0) - SERVE_WINDOW;
	sqlite3_finalize(s);
	return first;
}

/* ------------------------------------------------------------------------
 * /metrics
 * ---------------------------------------------------------------------- */

/* The gauges computed from the store: name, help, query (?1: the window's
 * start) and the labels of the columns before the value. */
struct gauge {
	const char *name, *help, *sql;
	const char *labels[3];
};

static const struct gauge gauges[] = {
	{"dtplan_reports_kept",
	 "Reports the store holds now, by kind (retention removes the oldest).",
	 "SELECT kind, COUNT(*) FROM reports GROUP BY 1 ORDER BY 1",
	 {"kind"}},
	{"dtplan_link_bandwidth_bytes_per_second",
	 "Measured bandwidth per link tier, mean of the recent reports.",
	 "SELECT tier, AVG(bandwidth) FROM tiers WHERE report_id > ?1 AND bandwidth"
	 " IS NOT NULL GROUP BY 1 ORDER BY 1",
	 {"tier"}},
	{"dtplan_link_latency_seconds",
	 "Measured latency per link tier, mean of the recent reports.",
	 "SELECT tier, AVG(latency_s) FROM tiers WHERE report_id > ?1 AND latency_s"
	 " IS NOT NULL GROUP BY 1 ORDER BY 1",
	 {"tier"}},
	{"dtplan_uplink_oversubscription",
	 "Measured oversubscription per uplink (switch), mean of the recent reports.",
	 "SELECT switch, AVG(oversubscription) FROM uplinks WHERE report_id > ?1 AND"
	 " oversubscription IS NOT NULL GROUP BY 1 ORDER BY 1",
	 {"switch"}},
	{"dtplan_uplink_bandwidth_bytes_per_second",
	 "Measured aggregate bandwidth per uplink (switch), mean of the recent reports.",
	 "SELECT switch, AVG(bandwidth) FROM uplinks WHERE report_id > ?1 AND"
	 " bandwidth IS NOT NULL GROUP BY 1 ORDER BY 1",
	 {"switch"}},
	{"dtplan_node_slow_link_reports",
	 "Recent reports in which most of a node's links were slow.",
	 "SELECT node, SUM(s > 0.5) FROM (SELECT report_id, node, AVG(slow) AS s"
	 " FROM (SELECT report_id, a AS node, slow FROM links WHERE report_id > ?1"
	 " UNION ALL SELECT report_id, b, slow FROM links WHERE report_id > ?1)"
	 " GROUP BY 1, 2) GROUP BY 1 ORDER BY 1",
	 {"node"}},
	{"dtplan_node_straggler_reports",
	 "Recent reports naming a node a straggler.",
	 "SELECT node, COUNT(*) FROM stragglers WHERE report_id > ?1 GROUP BY 1"
	 " ORDER BY 1",
	 {"node"}},
	{"dtplan_step_predicted_seconds",
	 "Planned step time, mean of the recent observations.",
	 "SELECT gpu, model, framework, AVG(predicted_s) FROM observations WHERE"
	 " report_id > ?1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
	 {"gpu", "model", "framework"}},
	{"dtplan_step_measured_seconds",
	 "Measured step time, mean of the recent observations.",
	 "SELECT gpu, model, framework, AVG(measured_s) FROM observations WHERE"
	 " report_id > ?1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
	 {"gpu", "model", "framework"}},
};

#define N_GAUGES (sizeof(gauges) / sizeof(gauges[0]))

static void draw_gauge(struct serve_buf *b, const struct gauge *g, const struct serve_rows *r)
{
	serve_buf_add(b, "# HELP %s %s\n# TYPE %s gauge\n", g->name, g->help, g->name);
	for (size_t i = 0; i < r->n; i++) {
		size_t n = 0;

		serve_buf_add(b, "%s", g->name);
		for (; n < 3 && g->labels[n] != NULL; n++) {
			serve_buf_add(b, "%s%s=\"", n == 0 ? "{" : ",", g->labels[n]);
			label(b, serve_cell(r, i, n));
			serve_buf_add(b, "\"");
		}
		serve_buf_add(b, "%s %.9g\n", n > 0 ? "}" : "", serve_cell_num(r, i, n));
	}
}

/* The store's counters (name, label, value, ordered): value of name{label}
 * (0 when absent). */
static double counter(const struct serve_rows *r, const char *name, const char *lab)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(serve_cell(r, i, 0), name) == 0 && strcmp(serve_cell(r, i, 1), lab) == 0)
			return serve_cell_num(r, i, 2);
	return 0;
}

/* Counter family name (store's counters under key) with each label value
 * the store has, or those of fixed (n of them) when given. */
static void draw_counter(struct serve_buf *b, const struct serve_rows *r, const char *name,
			 const char *help, const char *key, const char *lab,
			 const char *(*fixed)(int), int n, const unsigned long long *pending)
{
	serve_buf_add(b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	if (lab == NULL) {
		serve_buf_add(b, "%s %.17g\n", name, counter(r, key, ""));
		return;
	}
	for (int k = 0; fixed != NULL && k < n; k++)
		serve_buf_add(b, "%s{%s=\"%s\"} %.17g\n", name, lab, fixed(k),
			      counter(r, key, fixed(k)) +
				      (pending != NULL ? (double)pending[k] : 0.0));
	for (size_t i = 0; fixed == NULL && i < r->n; i++) {
		if (strcmp(serve_cell(r, i, 0), key) != 0)
			continue;
		serve_buf_add(b, "%s{%s=\"", name, lab);
		label(b, serve_cell(r, i, 1));
		serve_buf_add(b, "\"} %.17g\n", serve_cell_num(r, i, 2));
	}
}

/* Warnings counted by code (the store's counters under key): every code of
 * this version's table, then "other" holding the rest, whatever label an
 * older store gave them, so that no poster makes a series of its own. */
static void draw_warnings(struct serve_buf *b, const struct serve_rows *r, const char *name,
			  const char *help, const char *key)
{
	const char *c;
	double other = 0;

	serve_buf_add(b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (size_t i = 0; (c = dtplan_warning_code_at(i)) != NULL; i++)
		serve_buf_add(b, "%s{kind=\"%s\"} %.17g\n", name, c, counter(r, key, c));
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(serve_cell(r, i, 0), key) == 0 &&
		    !serve_warning_known(serve_cell(r, i, 1)))
			other += serve_cell_num(r, i, 2);
	serve_buf_add(b, "%s{kind=\"other\"} %.17g\n", name, other);
}

static const char *kind_at(int k)
{
	return serve_kind_name((enum dtplan_posted_kind)k);
}

static const char *reason_at(int k)
{
	return serve_reason_name((enum serve_reason)k);
}

static const char *const plan_states[] = {"ok", "degraded", "refused", "other"};

static const char *state_at(int k)
{
	return plan_states[k];
}

/*
 * /metrics (issue 35): counters that only grow, kept in the store
 * (serve_store.c's counters table, updated with each report kept, the
 * refusals added by serve_http.c) so that neither retention nor a restart
 * lowers them; gauges for what holds now; the measured / planned step in a
 * histogram.
 */
char *serve_metrics(struct serve_store *st, const struct serve_counters *pending)
{
	struct serve_buf b = {0};
	struct serve_rows r[N_GAUGES] = {{0}}, cnt = {0};
	long long from;
	double received = 0, last;
	bool ok = true;

	/* copied under the lock, written after it */
	pthread_mutex_lock(&st->lock);
	from = serve_window_start(st->db);
	ok = serve_rows_get(&cnt, st->db,
			    "SELECT name, label, value FROM counters WHERE ?1 = ?1 ORDER BY 1, 2",
			    0);
	for (size_t i = 0; i < N_GAUGES && ok; i++)
		ok = serve_rows_get(&r[i], st->db, gauges[i].sql, from);
	pthread_mutex_unlock(&st->lock);
	for (size_t i = 0; i < cnt.n; i++)
		if (strcmp(serve_cell(&cnt, i, 0), "stored") == 0 ||
		    strcmp(serve_cell(&cnt, i, 0), "refused") == 0)
			received += serve_cell_num(&cnt, i, 2);
	for (int k = 0; pending != NULL && k < SERVE_N_REASONS; k++)
		received += (double)pending->refused[k];
	serve_buf_add(&b,
		      "# HELP dtplan_build_info The collector's version.\n"
		      "# TYPE dtplan_build_info gauge\n"
		      "dtplan_build_info{version=\"%s\"} 1\n",
		      PACKAGE_VERSION);
	serve_buf_add(&b,
		      "# HELP dtplan_reports_received_total Reports posted, kept or refused.\n"
		      "# TYPE dtplan_reports_received_total counter\n"
		      "dtplan_reports_received_total %.17g\n",
		      received);
	draw_counter(&b, &cnt, "dtplan_reports_accepted_total", "Reports kept, by kind.", "stored",
		     "kind", kind_at, DTPLAN_POSTED__LAST, NULL);
	draw_counter(&b, &cnt, "dtplan_reports_refused_total", "Reports refused, by reason.",
		     "refused", "reason", reason_at, SERVE_N_REASONS,
		     pending != NULL ? pending->refused : NULL);
	draw_counter(&b, &cnt, "dtplan_plans_total",
		     "Plan reports kept, by state (other: none of the three).", "plans", "state",
		     state_at, 4, NULL);
	draw_counter(&b, &cnt, "dtplan_plans_degraded_total",
		     "Plan reports kept whose plan is marked degraded.", "plans_degraded", NULL,
		     NULL, 0, NULL);
	draw_warnings(&b, &cnt, "dtplan_plan_warnings_total",
		      "Warnings in the plan reports kept, by kind (other: a code this version "
		      "does not make).",
		      "plan_warnings");
	draw_warnings(&b, &cnt, "dtplan_plan_refusals_total",
		      "Warnings in refused plans kept (policy=deny, --dt-plan=strict), by kind "
		      "(other: a code this version does not make).",
		      "plan_refusals");
	last = counter(&cnt, "last_report", "");
	serve_buf_add(&b, "# HELP dtplan_last_report_timestamp_seconds When the last report was "
			  "kept (Unix time; absent before the first).\n"
			  "# TYPE dtplan_last_report_timestamp_seconds gauge\n");
	if (last > 0)
		serve_buf_add(&b, "dtplan_last_report_timestamp_seconds %.17g\n", last);
	serve_buf_add(&b, "# HELP dtplan_step_ratio Measured over planned step time of the "
			  "observations kept.\n# TYPE dtplan_step_ratio histogram\n");
	for (int k = 0; k < SERVE_RATIO_BUCKETS; k++) {
		char le[32];

		snprintf(le, sizeof(le), "%g", serve_ratio_buckets[k]);
		serve_buf_add(&b, "dtplan_step_ratio_bucket{le=\"%s\"} %.17g\n", le,
			      counter(&cnt, "step_ratio_bucket", le));
	}
	serve_buf_add(&b,
		      "dtplan_step_ratio_bucket{le=\"+Inf\"} %.17g\n"
		      "dtplan_step_ratio_sum %.17g\ndtplan_step_ratio_count %.17g\n",
		      counter(&cnt, "step_ratio_count", ""), counter(&cnt, "step_ratio_sum", ""),
		      counter(&cnt, "step_ratio_count", ""));
	serve_rows_free(&cnt);
	for (size_t i = 0; i < N_GAUGES; i++) {
		if (ok)
			draw_gauge(&b, &gauges[i], &r[i]);
		serve_rows_free(&r[i]);
	}
	if (!ok) {
		free(serve_buf_take(&b));
		return NULL;
	}
	return serve_buf_take(&b);
}

/* ------------------------------------------------------------------------
 * The fabric, the calibration, a plan's picture
 * ---------------------------------------------------------------------- */

/* Observations of one user a calibration group takes (its latest). */
#define CAL_PER_USER 16

static json_t *num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* Each switch's measured oversubscription (the median of root's reports in
 * the window, at least 1:1) and each tier's bandwidth and latency (medians),
 * from rows sorted by name. */
static bool fabric_medians(const struct serve_rows *up, const struct serve_rows *tr, json_t *ups,
			   json_t *tiers)
{
	double *v = malloc((up->n + tr->n + 1) * sizeof(*v));
	size_t n;

	if (v == NULL)
		return false;
	for (size_t i = 0, e; i < up->n; i = e) {
		double m;

		e = serve_group_end(up, i, 1);
		m = serve_col_median(up, i, e, 1, v, &n);
		if (n > 0)
			json_object_set_new(ups, serve_cell(up, i, 0),
					    json_pack("{s:f, s:I}", "oversubscription",
						      fmax(1.0, m), "reports", (json_int_t)n));
	}
	for (size_t i = 0, e; i < tr->n; i = e) {
		double bw, lat;

		e = serve_group_end(tr, i, 1);
		bw = serve_col_median(tr, i, e, 1, v, NULL);
		lat = serve_col_median(tr, i, e, 2, v, NULL);
		json_object_set_new(tiers, serve_cell(tr, i, 0),
				    json_pack("{s:o, s:o, s:I}", "bandwidth_bytes_per_s",
					      num_or_null(bw), "latency_s", num_or_null(lat),
					      "reports", (json_int_t)(e - i)));
	}
	free(v);
	return true;
}

static void count_row(sqlite3_stmt *s, void *arg)
{
	json_object_set_new(arg, col_text(s, 0), json_integer(sqlite3_column_int64(s, 1)));
}

char *serve_fabric(struct serve_store *st, json_t *fabric)
{
	json_t *out = json_deep_copy(fabric), *up = json_object(), *tiers = json_object(),
	       *strag = json_object(), *sw;
	struct serve_rows ur = {0}, tr = {0};
	char *text = NULL;
	long long from;
	size_t i;
	bool ok;

	if (out == NULL || up == NULL || tiers == NULL || strag == NULL)
		goto done;
	/* only root's reports have these rows (serve_store.c): no user's plan
	 * changes the fabric */
	pthread_mutex_lock(&st->lock);
	from = serve_window_start(st->db);
	ok = serve_rows_get(&ur, st->db,
			    "SELECT switch, oversubscription FROM uplinks WHERE report_id > ?1 AND"
			    " oversubscription IS NOT NULL ORDER BY 1",
			    from) &&
	     serve_rows_get(
		     &tr, st->db,
		     "SELECT tier, bandwidth, latency_s FROM tiers WHERE report_id > ?1 ORDER BY 1",
		     from) &&
	     serve_each(st->db,
			"SELECT node, COUNT(*) FROM stragglers WHERE report_id > ?1 GROUP BY 1",
			from, count_row, strag);
	pthread_mutex_unlock(&st->lock);
	if (!ok || !fabric_medians(&ur, &tr, up, tiers))
		goto done;
	/* a switch measured in enough reports takes the measured ratio */
	json_array_foreach(json_object_get(out, "switches"), i, sw)
	{
		const char *name = json_string_value(json_object_get(sw, "name"));
		json_t *m = name != NULL ? json_object_get(up, name) : NULL;

		if (m == NULL)
			continue;
		json_object_set(sw, "x-measured", m);
		if (json_integer_value(json_object_get(m, "reports")) >= SERVE_SLOW_REPORTS) {
			json_t *was = json_object_get(sw, "oversubscription");

			if (was != NULL)
				json_object_set(m, "configured", was);
			json_object_set(sw, "oversubscription",
					json_object_get(m, "oversubscription"));
		}
	}
	json_object_set_new(out, "x-measured",
			    json_pack("{s:O, s:O}", "tiers", tiers, "stragglers", strag));
	text = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
done:
	serve_rows_free(&ur);
	serve_rows_free(&tr);
	json_decref(out);
	json_decref(up);
	json_decref(tiers);
	json_decref(strag);
	return text;
}

char *serve_calibration(struct serve_store *st)
{
	json_t *records = json_array(), *root;
	struct serve_rows r = {0};
	double *v = NULL, *per[3] = {NULL, NULL, NULL};
	char *text = NULL;
	bool ok;

	if (records == NULL)
		return NULL;
	/* each user's latest observation of a job, and a user's latest
	 * CAL_PER_USER of a group */
	pthread_mutex_lock(&st->lock);
	ok = serve_rows_get(
		&r, st->db,
		"WITH o AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY cluster, job_id, user"
		" ORDER BY report_id DESC) AS per_job FROM observations WHERE predicted_s > 0"
		" AND measured_s > 0), u AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY gpu,"
		" model, framework, fingerprint, user ORDER BY report_id DESC) AS per_user"
		" FROM o WHERE per_job = 1) SELECT gpu, model, framework, fingerprint,"
		" COALESCE(user, ''), predicted_s, measured_s, measured_s / predicted_s FROM u"
		" WHERE per_user <= 16 ORDER BY 1, 2, 3, 4, 5", /* CAL_PER_USER */
		0);
	pthread_mutex_unlock(&st->lock);
	v = ok ? malloc((r.n + 1) * sizeof(*v)) : NULL;
	for (int k = 0; k < 3 && v != NULL; k++)
		per[k] = malloc((r.n + 1) * sizeof(*per[k]));
	ok = v != NULL && per[0] != NULL && per[1] != NULL && per[2] != NULL;
	/* a group's figures: the median over its users of each user's median,
	 * so that a user outweighs no other, whatever it posts */
	for (size_t i = 0, e; ok && i < r.n; i = e) {
		size_t users = 0;

		e = serve_group_end(&r, i, 4);
		for (size_t j = i, ue; j < e; j = ue, users++) {
			ue = serve_group_end(&r, j, 5);
			if (ue > e)
				ue = e;
			for (int k = 0; k < 3; k++)
				per[k][users] =
					serve_col_median(&r, j, ue, (size_t)(5 + k), v, NULL);
		}
		json_array_append_new(
			records,
			json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:o, s:o, s:o}", "gpu",
				  serve_cell(&r, i, 0), "model", serve_cell(&r, i, 1), "framework",
				  serve_cell(&r, i, 2), "fingerprint", serve_cell(&r, i, 3), "jobs",
				  (json_int_t)(e - i), "users", (json_int_t)users,
				  "predicted_step_s", num_or_null(serve_median(per[0], users)),
				  "measured_step_s", num_or_null(serve_median(per[1], users)),
				  "correction", num_or_null(serve_median(per[2], users))));
	}
	free(v);
	for (int k = 0; k < 3; k++)
		free(per[k]);
	serve_rows_free(&r);
	if (!ok) {
		json_decref(records);
		return NULL;
	}
	root = json_pack("{s:s, s:o}", "schema", "dtplan.calibration/1", "records", records);
	if (root != NULL)
		text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return text;
}

char *serve_plan_svg(struct serve_store *st, long long id, bool *missing)
{
	sqlite3_stmt *s = NULL;
	struct dtplan_plan *plan = NULL;
	json_t *doc = NULL, *safe = NULL;
	char *text = NULL, *svg = NULL;

	*missing = false;
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db,
			       "SELECT json_extract(body, '$.plan') FROM reports WHERE id = ?1 AND"
			       " kind = 'plan' AND json_type(body, '$.plan') = 'object'",
			       -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW)
			text = strdup(col_text(s, 0));
		else
			*missing = true;
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	if (text == NULL)
		return NULL;
	doc = json_loads(text, 0, NULL);
	safe = doc != NULL ? serve_json_inert(doc) : NULL;
	free(text);
	text = safe != NULL ? json_dumps(safe, JSON_COMPACT) : NULL;
	if (text != NULL && dtplan_plan_from_json(text, &plan, NULL) == DTPLAN_OK)
		dtplan_plan_render_svg(plan, &svg, NULL);
	else
		*missing = doc != NULL;
	json_decref(doc);
	json_decref(safe);
	dtplan_plan_destroy(plan);
	free(text);
	return svg;
}
