/*
 * serve_view.c: what the collector answers, from its store: /metrics in
 * Prometheus's text format (0.0.4), the admin page (HTML with inline SVG,
 * every value from a report escaped), the fabric file enriched with what
 * was measured, the site-wide calibration records and each plan's picture
 * (lib/launch/render.c).
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

/* Colours of the map: measured oversubscription at most OK_RATIO is fine,
 * at most BAD_RATIO strained, above it oversubscribed. */
#define OK_RATIO 1.5
#define BAD_RATIO 3.0

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

/* The first report id of the window. */
static long long window_start(sqlite3 *db)
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

/* Runs sql (?1: the window's start, ?2: an optional id) and calls row for each row. */
static bool each(sqlite3 *db, const char *sql, long long from, void (*row)(sqlite3_stmt *, void *),
		 void *arg)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_bind_parameter_count(s) >= 1)
		sqlite3_bind_int64(s, 1, from);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		row(s, arg);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE;
}

/* ------------------------------------------------------------------------
 * /metrics
 * ---------------------------------------------------------------------- */

struct metric {
	struct serve_buf *b;
	const char *name;
	const char *labels[4]; /* the columns before the value */
};

static void metric_row(sqlite3_stmt *s, void *arg)
{
	struct metric *m = arg;
	int n = 0;

	serve_buf_add(m->b, "%s", m->name);
	for (; n < 4 && m->labels[n] != NULL; n++) {
		serve_buf_add(m->b, "%s%s=\"", n == 0 ? "{" : ",", m->labels[n]);
		label(m->b, col_text(s, n));
		serve_buf_add(m->b, "\"");
	}
	serve_buf_add(m->b, "%s %.9g\n", n > 0 ? "}" : "", sqlite3_column_double(s, n));
}

static bool metric(struct serve_buf *b, sqlite3 *db, long long from, const char *name,
		   const char *type, const char *help, const char *sql, const char *l0,
		   const char *l1, const char *l2)
{
	struct metric m = {b, name, {l0, l1, l2, NULL}};

	serve_buf_add(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	return each(db, sql, from, metric_row, &m);
}

char *serve_metrics(struct serve_store *st, const struct serve_counters *c)
{
	struct serve_buf b = {0};
	long long from;
	bool ok = true;

	serve_buf_add(&b, "# HELP dtplan_reports_accepted_total Reports kept, by kind.\n"
			  "# TYPE dtplan_reports_accepted_total counter\n");
	for (int k = 0; k < DTPLAN_POSTED__LAST; k++)
		serve_buf_add(&b, "dtplan_reports_accepted_total{kind=\"%s\"} %llu\n",
			      serve_kind_name(k), c->accepted[k]);
	serve_buf_add(&b, "# HELP dtplan_reports_refused_total Reports refused, by reason.\n"
			  "# TYPE dtplan_reports_refused_total counter\n");
	for (int r = 0; r < SERVE_N_REASONS; r++)
		serve_buf_add(&b, "dtplan_reports_refused_total{reason=\"%s\"} %llu\n",
			      serve_reason_name(r), c->refused[r]);
	pthread_mutex_lock(&st->lock);
	from = window_start(st->db);
	ok = ok && metric(&b, st->db, from, "dtplan_plans", "gauge",
			  "Plan reports kept, by state (ok, degraded, refused).",
			  "SELECT COALESCE(state, '?'), COUNT(*) FROM reports WHERE kind = 'plan'"
			  " GROUP BY 1 ORDER BY 1",
			  "state", NULL, NULL);
	ok = ok && metric(&b, st->db, from, "dtplan_plans_degraded", "gauge",
			  "Plan reports kept whose plan is marked degraded.",
			  "SELECT COUNT(*) FROM reports WHERE kind = 'plan' AND degraded = 1", NULL,
			  NULL, NULL);
	ok = ok && metric(&b, st->db, from, "dtplan_plan_warnings", "gauge",
			  "Warnings in the plan reports kept, by kind.",
			  "SELECT code, COUNT(*) FROM warnings GROUP BY 1 ORDER BY 1", "kind", NULL,
			  NULL);
	ok = ok && metric(&b, st->db, from, "dtplan_plan_refusals", "gauge",
			  "Refused plans kept (policy=deny, --dt-plan=strict), by the kind of"
			  " warning in them.",
			  "SELECT w.code, COUNT(*) FROM warnings w JOIN reports r ON r.id ="
			  " w.report_id WHERE r.state = 'refused' GROUP BY 1 ORDER BY 1",
			  "kind", NULL, NULL);
	ok = ok &&
	     metric(&b, st->db, from, "dtplan_link_bandwidth_bytes_per_second", "gauge",
		    "Measured bandwidth per link tier, mean of the recent reports.",
		    "SELECT tier, AVG(bandwidth) FROM tiers WHERE report_id > ?1 AND bandwidth"
		    " IS NOT NULL GROUP BY 1 ORDER BY 1",
		    "tier", NULL, NULL);
	ok = ok &&
	     metric(&b, st->db, from, "dtplan_link_latency_seconds", "gauge",
		    "Measured latency per link tier, mean of the recent reports.",
		    "SELECT tier, AVG(latency_s) FROM tiers WHERE report_id > ?1 AND latency_s"
		    " IS NOT NULL GROUP BY 1 ORDER BY 1",
		    "tier", NULL, NULL);
	ok = ok &&
	     metric(&b, st->db, from, "dtplan_uplink_oversubscription", "gauge",
		    "Measured oversubscription per uplink (switch), mean of the recent reports.",
		    "SELECT switch, AVG(oversubscription) FROM uplinks WHERE report_id > ?1 AND"
		    " oversubscription IS NOT NULL GROUP BY 1 ORDER BY 1",
		    "switch", NULL, NULL);
	ok = ok && metric(&b, st->db, from, "dtplan_uplink_bandwidth_bytes_per_second", "gauge",
			  "Measured aggregate bandwidth per uplink (switch), mean of the recent"
			  " reports.",
			  "SELECT switch, AVG(bandwidth) FROM uplinks WHERE report_id > ?1 AND"
			  " bandwidth IS NOT NULL GROUP BY 1 ORDER BY 1",
			  "switch", NULL, NULL);
	ok = ok && metric(&b, st->db, from, "dtplan_node_slow_link_reports", "gauge",
			  "Recent reports in which most of a node's links were slow.",
			  "SELECT node, SUM(s > 0.5) FROM (SELECT report_id, node, AVG(slow) AS s"
			  " FROM (SELECT report_id, a AS node, slow FROM links WHERE report_id > ?1"
			  " UNION ALL SELECT report_id, b, slow FROM links WHERE report_id > ?1)"
			  " GROUP BY 1, 2) GROUP BY 1 ORDER BY 1",
			  "node", NULL, NULL);
	ok = ok && metric(&b, st->db, from, "dtplan_node_straggler_reports", "gauge",
			  "Recent reports naming a node a straggler.",
			  "SELECT node, COUNT(*) FROM stragglers WHERE report_id > ?1 GROUP BY 1"
			  " ORDER BY 1",
			  "node", NULL, NULL);
	ok = ok && metric(&b, st->db, from, "dtplan_step_predicted_seconds", "gauge",
			  "Planned step time, mean of the recent observations.",
			  "SELECT gpu, model, framework, AVG(predicted_s) FROM observations WHERE"
			  " report_id > ?1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
			  "gpu", "model", "framework");
	ok = ok && metric(&b, st->db, from, "dtplan_step_measured_seconds", "gauge",
			  "Measured step time, mean of the recent observations.",
			  "SELECT gpu, model, framework, AVG(measured_s) FROM observations WHERE"
			  " report_id > ?1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
			  "gpu", "model", "framework");
	pthread_mutex_unlock(&st->lock);
	if (!ok) {
		free(serve_buf_take(&b));
		return NULL;
	}
	return serve_buf_take(&b);
}

/* ------------------------------------------------------------------------
 * The page
 * ---------------------------------------------------------------------- */

static void job_row(sqlite3_stmt *s, void *arg)
{
	struct serve_buf *b = arg;
	long long id = sqlite3_column_int64(s, 0);
	const char *state = col_text(s, 4);

	serve_buf_add(b, "<tr class=\"job\" data-report=\"%lld\"><td>", id);
	serve_buf_html(b, col_text(s, 1));
	serve_buf_add(b, "</td><td>");
	serve_buf_html(b, col_text(s, 2));
	serve_buf_add(b, "</td><td>");
	serve_buf_html(b, col_text(s, 3));
	serve_buf_add(b, "</td><td class=\"state ");
	serve_buf_html(b, state);
	serve_buf_add(b, "\">");
	serve_buf_html(b, state);
	serve_buf_add(b, "</td><td>");
	serve_buf_html(b, col_text(s, 5));
	serve_buf_add(b, "</td><td>");
	serve_buf_html(b, col_text(s, 6));
	serve_buf_add(b, "</td><td>");
	if (sqlite3_column_int(s, 7))
		serve_buf_add(b,
			      "<img class=\"plan\" src=\"/plan/%lld.svg\" alt=\"plan of report "
			      "%lld\" width=\"480\">",
			      id, id);
	serve_buf_add(b, "</td></tr>\n");
}

/* The map: leaves (by measured oversubscription), their nodes and each
 * node's link (by how often it was slow). */
struct map_node {
	char leaf[64], node[64];
	long slow, seen, straggler;
};

struct map {
	struct map_node *n;
	size_t count, cap;
	char (*leaf)[64];
	double *ratio;
	size_t n_leaves, leaf_cap;
};

static void map_node_row(sqlite3_stmt *s, void *arg)
{
	struct map *m = arg;

	if (m->count == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct map_node *t = realloc(m->n, cap * sizeof(*t));

		if (t == NULL)
			return;
		m->n = t;
		m->cap = cap;
	}
	snprintf(m->n[m->count].leaf, 64, "%s", col_text(s, 0));
	snprintf(m->n[m->count].node, 64, "%s", col_text(s, 1));
	m->n[m->count].slow = sqlite3_column_int64(s, 2);
	m->n[m->count].seen = sqlite3_column_int64(s, 3);
	m->n[m->count].straggler = sqlite3_column_int64(s, 4);
	m->count++;
}

static void map_leaf_row(sqlite3_stmt *s, void *arg)
{
	struct map *m = arg;

	if (m->n_leaves == m->leaf_cap) {
		size_t cap = m->leaf_cap ? 2 * m->leaf_cap : 16;
		char(*l)[64] = realloc(m->leaf, cap * sizeof(*l));
		double *r = realloc(m->ratio, cap * sizeof(*r));

		if (l != NULL)
			m->leaf = l;
		if (r != NULL)
			m->ratio = r;
		if (l == NULL || r == NULL)
			return;
		m->leaf_cap = cap;
	}
	snprintf(m->leaf[m->n_leaves], 64, "%s", col_text(s, 0));
	m->ratio[m->n_leaves] =
		sqlite3_column_type(s, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 1);
	m->n_leaves++;
}

static const char *ratio_class(double r)
{
	if (!isfinite(r))
		return "unmeasured";
	return r <= OK_RATIO ? "fine" : r <= BAD_RATIO ? "strained" : "oversubscribed";
}

static const char *ratio_colour(double r)
{
	if (!isfinite(r))
		return "#bbbbbb";
	return r <= OK_RATIO ? "#4caf50" : r <= BAD_RATIO ? "#ff9800" : "#e53935";
}

static void draw_map(struct serve_buf *b, sqlite3 *db, long long from)
{
	struct map m = {0};
	double w, x;
	size_t per_leaf_max = 1;

	each(db,
	     "SELECT l.name, AVG(u.oversubscription) FROM (SELECT DISTINCT leaf AS name FROM"
	     " node_leaf WHERE report_id > ?1 UNION SELECT DISTINCT switch FROM uplinks WHERE"
	     " report_id > ?1) l LEFT JOIN uplinks u ON u.switch = l.name AND u.report_id > ?1"
	     " GROUP BY 1 ORDER BY 1",
	     from, map_leaf_row, &m);
	each(db,
	     "WITH nl AS (SELECT node, MAX(leaf) AS leaf FROM node_leaf WHERE report_id > ?1"
	     " GROUP BY 1), per AS (SELECT report_id, node, AVG(slow) AS s FROM (SELECT"
	     " report_id, a AS node, slow FROM links WHERE report_id > ?1 UNION ALL SELECT"
	     " report_id, b, slow FROM links WHERE report_id > ?1) GROUP BY 1, 2),"
	     " agg AS (SELECT node, SUM(s > 0.5) AS slow, COUNT(*) AS seen FROM per GROUP BY 1),"
	     " st AS (SELECT node, COUNT(*) AS n FROM stragglers WHERE report_id > ?1 GROUP BY 1)"
	     " SELECT nl.leaf, nl.node, COALESCE(agg.slow, 0), COALESCE(agg.seen, 0),"
	     " COALESCE(st.n, 0) FROM nl LEFT JOIN agg ON agg.node = nl.node LEFT JOIN st ON"
	     " st.node = nl.node ORDER BY 1, 2",
	     from, map_node_row, &m);
	for (size_t i = 0; i < m.n_leaves; i++) {
		size_t k = 0;

		for (size_t j = 0; j < m.count; j++)
			k += strcmp(m.n[j].leaf, m.leaf[i]) == 0;
		if (k > per_leaf_max)
			per_leaf_max = k;
	}
	w = 40.0 + (double)(m.n_leaves > 0 ? m.n_leaves : 1) * (per_leaf_max * 70.0 + 30.0);
	serve_buf_add(b,
		      "<svg id=\"switch-map\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		      "height=\"260\" viewBox=\"0 0 %.0f 260\">\n"
		      "<rect class=\"spine\" x=\"20\" y=\"10\" width=\"%.0f\" height=\"30\" "
		      "fill=\"#90a4ae\"/><text x=\"30\" y=\"30\">spine</text>\n",
		      w, w, w - 40.0);
	x = 20.0;
	for (size_t i = 0; i < m.n_leaves; i++) {
		double lw = per_leaf_max * 70.0, nx = x;

		serve_buf_add(b, "<g class=\"leaf %s\" data-switch=\"", ratio_class(m.ratio[i]));
		serve_buf_html(b, m.leaf[i]);
		serve_buf_add(
			b,
			"\"><line class=\"uplink\" x1=\"%.0f\" y1=\"40\" x2=\"%.0f\" y2=\"100\" "
			"stroke=\"%s\" stroke-width=\"6\"/><rect x=\"%.0f\" y=\"100\" "
			"width=\"%.0f\" height=\"30\" fill=\"%s\"/><text x=\"%.0f\" "
			"y=\"120\">",
			x + lw / 2, x + lw / 2, ratio_colour(m.ratio[i]), x, lw,
			ratio_colour(m.ratio[i]), x + 6);
		serve_buf_html(b, m.leaf[i]);
		if (isfinite(m.ratio[i]))
			serve_buf_add(b, " %.2f:1", m.ratio[i]);
		serve_buf_add(b, "</text>\n");
		for (size_t j = 0; j < m.count; j++) {
			const struct map_node *n = &m.n[j];
			bool slow = n->slow >= SERVE_SLOW_REPORTS;

			if (strcmp(n->leaf, m.leaf[i]) != 0)
				continue;
			serve_buf_add(b, "<g class=\"node%s%s\" data-node=\"", slow ? " slow" : "",
				      n->straggler > 0 ? " straggler" : "");
			serve_buf_html(b, n->node);
			serve_buf_add(
				b,
				"\" data-slow-reports=\"%ld\" data-reports=\"%ld\"><line "
				"class=\"link %s\" x1=\"%.0f\" y1=\"130\" x2=\"%.0f\" y2=\"190\" "
				"stroke=\"%s\" stroke-width=\"%d\"/><rect x=\"%.0f\" y=\"190\" "
				"width=\"60\" height=\"24\" fill=\"%s\"/><text x=\"%.0f\" "
				"y=\"206\" font-size=\"11\">",
				n->slow, n->seen, slow ? "slow" : "ok", nx + 30, nx + 30,
				slow          ? "#e53935"
				: n->slow > 0 ? "#ff9800"
					      : "#4caf50",
				slow ? 6 : 3, nx, n->straggler > 0 ? "#ffcdd2" : "#eceff1", nx + 4);
			serve_buf_html(b, n->node);
			serve_buf_add(b, "</text><title>");
			serve_buf_html(b, n->node);
			serve_buf_add(
				b, ": slow in %ld of %ld reports, straggler in %ld</title></g>\n",
				n->slow, n->seen, n->straggler);
			nx += 70.0;
		}
		serve_buf_add(b, "</g>\n");
		x += lw + 30.0;
	}
	serve_buf_add(b, "</svg>\n");
	free(m.n);
	free(m.leaf);
	free(m.ratio);
}

static void straggler_row(sqlite3_stmt *s, void *arg)
{
	struct serve_buf *b = arg;

	serve_buf_add(b, "<tr class=\"straggler\"><td>");
	serve_buf_html(b, col_text(s, 0));
	serve_buf_add(b, "</td><td>%lld</td></tr>\n", sqlite3_column_int64(s, 1));
}

/* Planned against measured step times. */
struct plot {
	double x[512], y[512], max;
	size_t n;
};

static void plot_row(sqlite3_stmt *s, void *arg)
{
	struct plot *p = arg;
	double x = sqlite3_column_double(s, 0), y = sqlite3_column_double(s, 1);

	if (p->n >= 512 || !(x > 0) || !(y > 0) || !isfinite(x) || !isfinite(y))
		return;
	p->x[p->n] = x;
	p->y[p->n] = y;
	p->max = fmax(p->max, fmax(x, y));
	p->n++;
}

static void draw_plot(struct serve_buf *b, sqlite3 *db, long long from)
{
	struct plot *p = calloc(1, sizeof(*p));
	const double size = 300, pad = 40;

	if (p == NULL)
		return;
	each(db,
	     "SELECT predicted_s, measured_s FROM observations WHERE report_id > ?1 ORDER BY"
	     " report_id DESC LIMIT 512",
	     from, plot_row, p);
	if (p->max <= 0)
		p->max = 1;
	p->max *= 1.1;
	serve_buf_add(b,
		      "<svg id=\"step-plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		      "height=\"%.0f\">\n<rect x=\"%.0f\" y=\"10\" width=\"%.0f\" height=\"%.0f\" "
		      "fill=\"none\" stroke=\"#555\"/>\n<line class=\"parity\" x1=\"%.0f\" "
		      "y1=\"%.0f\" x2=\"%.0f\" y2=\"10\" stroke=\"#999\" stroke-dasharray=\"4\"/>\n"
		      "<text x=\"%.0f\" y=\"%.0f\">planned step (s), max %.3g</text>\n"
		      "<text x=\"4\" y=\"20\">measured</text>\n",
		      size + pad + 20, size + pad + 20, pad, size, size, pad, size + 10, pad + size,
		      pad + 40, size + 30, p->max);
	for (size_t i = 0; i < p->n; i++)
		serve_buf_add(
			b,
			"<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			"fill=\"%s\"><title>planned %.4g s, measured %.4g s</title></circle>\n",
			pad + p->x[i] / p->max * size, 10 + size - p->y[i] / p->max * size,
			p->y[i] > 1.2 * p->x[i] ? "#e53935" : "#1e88e5", p->x[i], p->y[i]);
	serve_buf_add(b, "</svg>\n");
	free(p);
}

char *serve_page(struct serve_store *st, json_t *fabric)
{
	struct serve_buf b = {0};
	long long from;

	serve_buf_add(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			  "<title>dtplan collector</title><style>"
			  "body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
			  "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}"
			  ".state.degraded{background:#fff3e0}.state.refused{background:#ffebee}"
			  "</style></head><body>\n<h1>dtplan collector</h1>\n");
	pthread_mutex_lock(&st->lock);
	from = window_start(st->db);
	serve_buf_add(&b, "<section id=\"jobs\"><h2>Recent jobs</h2>\n<table><tr><th>job</th>"
			  "<th>user</th><th>cluster</th><th>state</th><th>nodes</th>"
			  "<th>warnings</th><th>plan</th></tr>\n");
	{
		char sql[1024];

		snprintf(sql, sizeof(sql),
			 "SELECT r.id, COALESCE(r.job_id, ''), r.user, r.cluster, r.state, r.nodes,"
			 " (SELECT GROUP_CONCAT(code, ' ') FROM warnings w WHERE w.report_id ="
			 " r.id), json_type(r.body, '$.plan') = 'object' FROM reports r WHERE"
			 " r.kind = 'plan' AND r.id > ?1 ORDER BY r.id DESC LIMIT %d",
			 SERVE_RECENT_JOBS);
		each(st->db, sql, from, job_row, &b);
	}
	serve_buf_add(&b,
		      "</table></section>\n<section id=\"map\"><h2>Switches and uplinks</h2>\n"
		      "<p>Leaves by measured oversubscription (green at most %.1f:1, orange at "
		      "most %.1f:1, red above); a node's link red once most of its links were "
		      "slow in %d reports.</p>\n",
		      OK_RATIO, BAD_RATIO, SERVE_SLOW_REPORTS);
	draw_map(&b, st->db, from);
	serve_buf_add(&b, "</section>\n<section id=\"stragglers\"><h2>Straggler nodes</h2>\n"
			  "<table><tr><th>node</th><th>reports</th></tr>\n");
	each(st->db,
	     "SELECT node, COUNT(*) FROM stragglers WHERE report_id > ?1 GROUP BY 1 ORDER BY 2"
	     " DESC, 1 LIMIT 20",
	     from, straggler_row, &b);
	serve_buf_add(&b, "</table></section>\n<section id=\"steps\"><h2>Planned against measured "
			  "step times</h2>\n");
	draw_plot(&b, st->db, from);
	pthread_mutex_unlock(&st->lock);
	serve_buf_add(&b,
		      "</section>\n<p><a href=\"/metrics\">metrics</a> <a "
		      "href=\"/calibration\">calibration</a>%s</p>\n</body></html>\n",
		      fabric != NULL ? " <a href=\"/fabric\">fabric</a>" : "");
	return serve_buf_take(&b);
}

/* ------------------------------------------------------------------------
 * The fabric, the calibration, a plan's picture
 * ---------------------------------------------------------------------- */

static void uplink_row(sqlite3_stmt *s, void *arg)
{
	json_t *o = arg;

	json_object_set_new(o, col_text(s, 0),
			    json_pack("{s:f, s:I}", "oversubscription", sqlite3_column_double(s, 1),
				      "reports", (json_int_t)sqlite3_column_int64(s, 2)));
}

static void tier_row(sqlite3_stmt *s, void *arg)
{
	json_t *o = arg;

	json_object_set_new(o, col_text(s, 0),
			    json_pack("{s:f, s:f, s:I}", "bandwidth_bytes_per_s",
				      sqlite3_column_double(s, 1), "latency_s",
				      sqlite3_column_double(s, 2), "reports",
				      (json_int_t)sqlite3_column_int64(s, 3)));
}

static void count_row(sqlite3_stmt *s, void *arg)
{
	json_object_set_new(arg, col_text(s, 0), json_integer(sqlite3_column_int64(s, 1)));
}

char *serve_fabric(struct serve_store *st, json_t *fabric)
{
	json_t *out = json_deep_copy(fabric), *up = json_object(), *tiers = json_object(),
	       *strag = json_object(), *sw;
	char *text = NULL;
	long long from;
	size_t i;

	if (out == NULL || up == NULL || tiers == NULL || strag == NULL)
		goto done;
	pthread_mutex_lock(&st->lock);
	from = window_start(st->db);
	each(st->db,
	     "SELECT switch, AVG(oversubscription), COUNT(*) FROM uplinks WHERE report_id > ?1"
	     " AND oversubscription IS NOT NULL GROUP BY 1",
	     from, uplink_row, up);
	each(st->db,
	     "SELECT tier, AVG(bandwidth), AVG(latency_s), COUNT(*) FROM tiers WHERE report_id >"
	     " ?1 GROUP BY 1",
	     from, tier_row, tiers);
	each(st->db, "SELECT node, COUNT(*) FROM stragglers WHERE report_id > ?1 GROUP BY 1", from,
	     count_row, strag);
	pthread_mutex_unlock(&st->lock);
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
	json_decref(out);
	json_decref(up);
	json_decref(tiers);
	json_decref(strag);
	return text;
}

static void calibration_row(sqlite3_stmt *s, void *arg)
{
	json_array_append_new(arg, json_pack("{s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:f}", "gpu",
					     col_text(s, 0), "model", col_text(s, 1), "framework",
					     col_text(s, 2), "fingerprint", col_text(s, 3), "jobs",
					     (json_int_t)sqlite3_column_int64(s, 4),
					     "predicted_step_s", sqlite3_column_double(s, 5),
					     "measured_step_s", sqlite3_column_double(s, 6),
					     "correction", sqlite3_column_double(s, 7)));
}

char *serve_calibration(struct serve_store *st)
{
	json_t *records = json_array(), *root;
	char *text = NULL;
	bool ok;

	if (records == NULL)
		return NULL;
	pthread_mutex_lock(&st->lock);
	ok = each(st->db,
		  "SELECT gpu, model, framework, fingerprint, COUNT(*), AVG(predicted_s),"
		  " AVG(measured_s), AVG(measured_s / predicted_s) FROM observations WHERE"
		  " predicted_s > 0 AND measured_s > 0 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
		  0, calibration_row, records);
	pthread_mutex_unlock(&st->lock);
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
	if (dtplan_plan_from_json(text, &plan, NULL) == DTPLAN_OK)
		dtplan_plan_render_svg(plan, &svg, NULL);
	else
		*missing = true;
	dtplan_plan_destroy(plan);
	free(text);
	return svg;
}
