/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_page.c: the collector's pages for admins (issue 35), HTML with
 * inline SVG and no script:
 *
 *   /                     the dashboard: the last report's time, the recent
 *                         jobs, the refused plans and why, the fabric by
 *                         leaf (under its parent switch) and by rack, the
 *                         stragglers, the planned-against-measured plot;
 *   /job/ID, /report/ID   a job's reports (or one report): its plan's
 *                         picture, warnings, refusal, measurements and its
 *                         planned against measured step times;
 *   /fabric/leaf/NAME,    a leaf's or a rack's nodes, each with its links'
 *   /fabric/rack/NAME     and straggler counts.
 *
 * Everything shown is copied out of the store under its lock (struct
 * serve_rows, each query bounded by a LIMIT), then drawn without it; every
 * string a report holds is escaped where it is written (serve_buf_html(),
 * serve_buf_url() in links).  The cost is O(n log n) in the nodes measured
 * (serve_site.c's tally); the dashboard draws one tile per leaf and per
 * rack, never one per node, so a site of 16,000 nodes stays a page of some
 * hundred kilobytes (tests/cli/test_serve_page.sh).
 */
#include "config.h"

#include "serve_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tiles the dashboard draws at most, leaves and racks each (a note says how
 * many more there were); nodes a leaf's page lists; a job's reports. */
#define PAGE_TILES 2048
#define PAGE_NODES 4096
#define PAGE_JOB_REPORTS 50
/* Nodes the tally takes at most (a site of DTPLAN_HOSTLIST_MAX / 4). */
#define PAGE_TALLY_NODES 262144

/* Each node measured in the window: node, the leaf a report named, the
 * reports in which most of its links were slow, the reports that measured
 * its links, those naming it a straggler, and the last one's time; sorted
 * by node (the tally's order). */
static const char nodes_sql[] =
	"WITH nl AS (SELECT node, MAX(leaf) AS leaf, MAX(report_id) AS r FROM node_leaf"
	" WHERE report_id > ?1 GROUP BY 1),"
	" per AS (SELECT report_id, node, AVG(slow) AS s FROM (SELECT report_id, a AS node,"
	" slow FROM links WHERE report_id > ?1 UNION ALL SELECT report_id, b, slow FROM links"
	" WHERE report_id > ?1) GROUP BY 1, 2),"
	" agg AS (SELECT node, SUM(s > 0.5) AS slow, COUNT(*) AS seen, MAX(report_id) AS r"
	" FROM per GROUP BY 1),"
	" st AS (SELECT node, COUNT(*) AS n, MAX(report_id) AS r FROM stragglers WHERE"
	" report_id > ?1 GROUP BY 1),"
	" alln AS (SELECT node FROM nl UNION SELECT node FROM agg UNION SELECT node FROM st)"
	" SELECT a.node, COALESCE(nl.leaf, ''), COALESCE(agg.slow, 0), COALESCE(agg.seen, 0),"
	" COALESCE(st.n, 0), (SELECT received FROM reports WHERE id = MAX(COALESCE(nl.r, 0),"
	" COALESCE(agg.r, 0), COALESCE(st.r, 0))) FROM alln a LEFT JOIN nl ON nl.node = a.node"
	" LEFT JOIN agg ON agg.node = a.node LEFT JOIN st ON st.node = a.node ORDER BY 1"
	" LIMIT 262144"; /* PAGE_TALLY_NODES */

static const char uplinks_sql[] =
	"SELECT switch, AVG(oversubscription) FROM uplinks WHERE report_id > ?1 AND"
	" oversubscription IS NOT NULL GROUP BY 1 ORDER BY 1";

static const char style[] =
	"body{font-family:sans-serif;margin:1em;color:#222}"
	"table{border-collapse:collapse;margin:.3em 0}"
	"td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}"
	"th{background:#f5f5f5}.age{color:#666;font-size:90%}td.time{white-space:nowrap}"
	".state.degraded,.strained{background:#ffcc80}.state.refused,.bad{background:#ef9a9a}"
	".fine{background:#a5d6a7}.unmeasured{background:#e0e0e0}"
	".tiles{display:flex;flex-wrap:wrap;gap:4px;margin:.3em 0 .8em}"
	".tile{display:block;width:118px;padding:3px 5px;font-size:11px;color:#222;"
	"text-decoration:none;border:1px solid #888;border-radius:3px}"
	".tile b{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}"
	".refusal{background:#ffebee;border-left:4px solid #e53935;padding:4px 8px}"
	"img.plan{max-width:100%;border:1px solid #ccc}nav a{margin-right:1em}";

/* The page's head and its navigation; title is ours (not escaped). */
static void page_head(struct serve_buf *b, const char *title)
{
	serve_buf_add(b,
		      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<title>%s</title><style>%s</style></head><body>\n<nav><a href=\"/\">"
		      "dashboard</a><a href=\"/metrics\">metrics</a><a href=\"/calibration\">"
		      "calibration</a></nav>\n",
		      title, style);
}

static void page_tail(struct serve_buf *b)
{
	serve_buf_add(b, "</body></html>\n");
}

/* A cell: text escaped. */
static void td(struct serve_buf *b, const char *s)
{
	serve_buf_add(b, "<td>");
	serve_buf_html(b, s);
	serve_buf_add(b, "</td>");
}

/* A number cell: %.4g, or "" for NULL. */
static void td_num(struct serve_buf *b, const struct serve_rows *r, size_t i, size_t col,
		   double scale)
{
	double v = serve_cell_num(r, i, col);

	if (isfinite(v))
		serve_buf_add(b, "<td class=\"num\">%.4g</td>", v * scale);
	else
		serve_buf_add(b, "<td></td>");
}

static void td_time(struct serve_buf *b, const char *t, long long now)
{
	serve_buf_add(b, "<td class=\"time\">");
	serve_draw_time(b, atoll(t), now);
	serve_buf_add(b, "</td>");
}

/* A link to a job's page (job id), else to the report's. */
static void td_job(struct serve_buf *b, const char *job, long long report)
{
	if (job[0] != '\0') {
		serve_buf_add(b, "<td><a class=\"job\" href=\"/job/%lld\">%lld</a></td>",
			      atoll(job), atoll(job));
		return;
	}
	serve_buf_add(b, "<td><a class=\"job\" href=\"/report/%lld\">report %lld</a></td>", report,
		      report);
}

/* ------------------------------------------------------------------------
 * The dashboard
 * ---------------------------------------------------------------------- */

/* Recent plans (rows: id, received, job, user, cluster, state, nodes,
 * warnings, planned step, measured step, reason). */
static void draw_jobs(struct serve_buf *b, const struct serve_rows *r, long long now)
{
	serve_buf_add(b, "<section id=\"jobs\"><h2>Recent jobs</h2>\n");
	if (r->n == 0) {
		serve_buf_add(b, "<p>No plan reported yet.</p></section>\n");
		return;
	}
	serve_buf_add(b, "<table><tr><th>received (UTC)</th><th>job</th><th>user</th>"
			 "<th>cluster</th><th>state</th><th>nodes</th><th>warnings</th>"
			 "<th>planned step (s)</th><th>measured step (s)</th><th>reason</th>"
			 "</tr>\n");
	for (size_t i = 0; i < r->n; i++) {
		long long id = atoll(serve_cell(r, i, 0));

		serve_buf_add(b, "<tr class=\"job\" data-report=\"%lld\">", id);
		td_time(b, serve_cell(r, i, 1), now);
		td_job(b, serve_cell(r, i, 2), id);
		td(b, serve_cell(r, i, 3));
		td(b, serve_cell(r, i, 4));
		serve_buf_add(b, "<td class=\"state ");
		serve_buf_html(b, serve_cell(r, i, 5));
		serve_buf_add(b, "\">");
		serve_buf_html(b, serve_cell(r, i, 5));
		serve_buf_add(b, "</td>");
		td(b, serve_cell(r, i, 6));
		td(b, serve_cell(r, i, 7));
		td_num(b, r, i, 8, 1);
		td_num(b, r, i, 9, 1);
		td(b, serve_cell(r, i, 10));
		serve_buf_add(b, "</tr>\n");
	}
	serve_buf_add(b, "</table></section>\n");
}

/* Refused plans (rows: id, received, job, user, cluster, reason, warnings). */
static void draw_refusals(struct serve_buf *b, const struct serve_rows *r, long long now)
{
	serve_buf_add(b, "<section id=\"refusals\"><h2>Refused plans</h2>\n");
	if (r->n == 0) {
		serve_buf_add(b, "<p>No plan refused in the last %d reports.</p></section>\n",
			      SERVE_WINDOW);
		return;
	}
	serve_buf_add(b, "<table><tr><th>received (UTC)</th><th>job</th><th>user</th>"
			 "<th>cluster</th><th>reason</th><th>warnings</th></tr>\n");
	for (size_t i = 0; i < r->n; i++) {
		long long id = atoll(serve_cell(r, i, 0));

		serve_buf_add(b, "<tr class=\"refused\" data-report=\"%lld\">", id);
		td_time(b, serve_cell(r, i, 1), now);
		td_job(b, serve_cell(r, i, 2), id);
		td(b, serve_cell(r, i, 3));
		td(b, serve_cell(r, i, 4));
		serve_buf_add(b, "<td class=\"reason\">");
		serve_buf_html(b, serve_cell(r, i, 5)[0] ? serve_cell(r, i, 5) : "(none given)");
		serve_buf_add(b, "</td>");
		td(b, serve_cell(r, i, 6));
		serve_buf_add(b, "</tr>\n");
	}
	serve_buf_add(b, "</table></section>\n");
}

/* One tile: a leaf's or a rack's health and counts, linked to its nodes. */
static void draw_tile(struct serve_buf *b, const char *what, const char *name,
		      const struct serve_health *h)
{
	const char *cls = serve_health_class(h);

	serve_buf_add(b, "<a class=\"tile %s %s\" data-%s=\"", what, cls,
		      strcmp(what, "leaf") == 0 ? "switch" : "rack");
	serve_buf_html(b, name);
	serve_buf_add(b, "\" href=\"/fabric/%s/", what);
	serve_buf_url(b, name[0] ? name : "-");
	serve_buf_add(b, "\" title=\"");
	serve_buf_html(b, name);
	serve_buf_add(b, ": %s\"><b>", cls);
	serve_buf_html(b, name[0] ? name : "(none named)");
	serve_buf_add(b, "</b>%zu nodes, %zu measured<br>%zu slow, %zu flaky, %zu stragglers",
		      h->nodes, h->measured, h->slow, h->flaky, h->stragglers);
	if (isfinite(h->ratio))
		serve_buf_add(b, "<br>uplink %.2f:1", h->ratio);
	serve_buf_add(b, "</a>\n");
}

/* The name of tally leaf k (site leaves in display order, then extras) and
 * its index in t->leaf. */
static const char *leaf_at(const struct serve_site *s, const struct serve_tally *t, size_t k,
			   size_t *li)
{
	*li = k < s->n_leaves ? s->order[k] : k;
	return k < s->n_leaves ? s->leaves[*li].name : t->extra[k - s->n_leaves];
}

/* The site at a glance: leaves and racks counted by health, and the tiles
 * of those bad, then strained (ATTENTION_TILES at most). */
#define ATTENTION_TILES 48
static void draw_health(struct serve_buf *b, const struct serve_site *s,
			const struct serve_tally *t)
{
	static const char *const cls[] = {"bad", "strained", "fine", "unmeasured"};
	size_t leaves[4] = {0}, racks[4] = {0}, shown = 0, li;

	for (size_t k = 0; k < t->n_leaves; k++)
		for (int c = 0; c < 4; c++)
			leaves[c] += strcmp(serve_health_class(&t->leaf[k]), cls[c]) == 0;
	for (size_t k = 0; k < s->n_racks; k++)
		for (int c = 0; c < 4; c++)
			racks[c] += strcmp(serve_health_class(&t->rack[k]), cls[c]) == 0;
	serve_buf_add(b, "<section id=\"health\"><h2>Health</h2>\n<p>Leaves: ");
	for (int c = 0; c < 4; c++)
		serve_buf_add(b, "%s<span class=\"%s\">%zu %s</span>", c ? ", " : "", cls[c],
			      leaves[c], cls[c]);
	if (s->n_racks > 0) {
		serve_buf_add(b, "; racks: ");
		for (int c = 0; c < 4; c++)
			serve_buf_add(b, "%s<span class=\"%s\">%zu %s</span>", c ? ", " : "",
				      cls[c], racks[c], cls[c]);
	}
	serve_buf_add(b, ".</p>\n");
	if (leaves[0] + leaves[1] == 0) {
		serve_buf_add(b, "</section>\n");
		return;
	}
	serve_buf_add(b, "<div class=\"tiles\">\n");
	for (int c = 0; c < 2; c++)
		for (size_t k = 0; k < t->n_leaves && shown < ATTENTION_TILES; k++) {
			const char *name = leaf_at(s, t, k, &li);

			if (strcmp(serve_health_class(&t->leaf[li]), cls[c]) != 0)
				continue;
			draw_tile(b, "leaf", name, &t->leaf[li]);
			shown++;
		}
	serve_buf_add(b, "</div>\n");
	if (shown < leaves[0] + leaves[1])
		serve_buf_add(b,
			      "<p class=\"cut\">The first %d of %zu leaves bad or strained; "
			      "all are under <a href=\"#fabric\">Fabric</a>.</p>\n",
			      ATTENTION_TILES, leaves[0] + leaves[1]);
	serve_buf_add(b, "</section>\n");
}

static void draw_fabric(struct serve_buf *b, const struct serve_site *s,
			const struct serve_tally *t, size_t measured_rows, long long now)
{
	const char *group = NULL;
	size_t shown = 0;

	serve_buf_add(b,
		      "<section id=\"fabric\"><h2>Fabric</h2>\n<p class=\"summary\">%zu nodes, "
		      "%zu measured in the last %d reports: %zu slow, %zu flaky, %zu stragglers; "
		      "%zu leaves, %zu racks; last measured ",
		      t->all.nodes, t->all.measured, SERVE_WINDOW, t->all.slow, t->all.flaky,
		      t->all.stragglers, t->n_leaves, s->n_racks);
	serve_draw_time(b, t->all.last, now);
	serve_buf_add(b,
		      ".</p>\n<p>A leaf or rack is <span class=\"bad\">bad</span> when a node's "
		      "links were mostly slow in %d reports or its uplink's measured "
		      "oversubscription is above %.1f:1, <span class=\"strained\">strained</span> "
		      "when a node's links were slow less often, a node straggled or the uplink "
		      "is above %.1f:1, <span class=\"fine\">fine</span> when measured and none "
		      "of these, <span class=\"unmeasured\">unmeasured</span> otherwise.  Each "
		      "links to its nodes.</p>\n",
		      SERVE_SLOW_REPORTS, SERVE_BAD_RATIO, SERVE_OK_RATIO);
	if (measured_rows >= PAGE_TALLY_NODES)
		serve_buf_add(b, "<p class=\"cut\">The tally takes the first %d nodes.</p>\n",
			      PAGE_TALLY_NODES);
	serve_buf_add(b, "<h3>Leaves</h3>\n");
	for (size_t k = 0; k < t->n_leaves && shown < PAGE_TILES; k++, shown++) {
		bool site = k < s->n_leaves;
		size_t li;
		const char *name = leaf_at(s, t, k, &li);
		const char *parent = site ? s->leaves[li].parent : "";

		if (group == NULL || (site && strcmp(group, parent) != 0) ||
		    (!site && k == s->n_leaves)) {
			serve_buf_add(b, "%s<div class=\"group\"><h4>",
				      group != NULL ? "</div></div>\n" : "");
			if (!site)
				serve_buf_add(b, "named by reports only");
			else if (parent[0] != '\0') {
				serve_buf_add(b, "under ");
				serve_buf_html(b, parent);
			} else
				serve_buf_add(b, "no parent switch");
			serve_buf_add(b, "</h4><div class=\"tiles\">\n");
			group = parent;
		}
		draw_tile(b, "leaf", name, &t->leaf[li]);
	}
	if (group != NULL)
		serve_buf_add(b, "</div></div>\n");
	if (t->n_leaves == 0)
		serve_buf_add(b,
			      "<p>No leaf known: no --fabric file, and no report named one.</p>\n");
	if (shown < t->n_leaves)
		serve_buf_add(b, "<p class=\"cut\">The map shows the first %d of %zu leaves.</p>\n",
			      PAGE_TILES, t->n_leaves);
	if (s->n_racks > 0) {
		serve_buf_add(b, "<h3>Racks</h3>\n<div class=\"tiles\">\n");
		for (size_t i = 0; i < s->n_racks && i < PAGE_TILES; i++)
			draw_tile(b, "rack", s->racks[i], &t->rack[i]);
		serve_buf_add(b, "</div>\n");
		if (s->n_racks > PAGE_TILES)
			serve_buf_add(b,
				      "<p class=\"cut\">The map shows the first %d of %zu "
				      "racks.</p>\n",
				      PAGE_TILES, s->n_racks);
	}
	serve_buf_add(b, "</section>\n");
}

/* Stragglers (rows: node, reports, last time). */
static void draw_stragglers(struct serve_buf *b, const struct serve_rows *r, long long now)
{
	serve_buf_add(b, "<section id=\"stragglers\"><h2>Straggler nodes</h2>\n<table><tr><th>"
			 "node</th><th>reports</th><th>last named (UTC)</th></tr>\n");
	for (size_t i = 0; i < r->n; i++) {
		serve_buf_add(b, "<tr class=\"straggler\">");
		td(b, serve_cell(r, i, 0));
		serve_buf_add(b, "<td>%lld</td>", atoll(serve_cell(r, i, 1)));
		td_time(b, serve_cell(r, i, 2), now);
		serve_buf_add(b, "</tr>\n");
	}
	serve_buf_add(b, "</table></section>\n");
}

/* Points of rows: columns x (planned) and y (measured); with jcol >= 0,
 * the rows whose column jcol is not job are context. */
static struct serve_point *points_of(const struct serve_rows *r, size_t x, size_t y, long jcol,
				     long long job, size_t *n)
{
	struct serve_point *p = malloc((r->n + 1) * sizeof(*p));

	*n = 0;
	for (size_t i = 0; p != NULL && i < r->n; i++) {
		double px = serve_cell_num(r, i, x), py = serve_cell_num(r, i, y);

		p[*n].planned = px;
		p[*n].measured = py;
		p[*n].kind = py > SERVE_PLOT_SLOW * px ? SERVE_POINT_SLOW : SERVE_POINT_FINE;
		if (jcol >= 0 && atoll(serve_cell(r, i, (size_t)jcol)) != job)
			p[*n].kind = SERVE_POINT_CONTEXT;
		(*n)++;
	}
	return p;
}

char *serve_page(struct serve_store *st, const struct serve_site *site, bool fabric_link,
		 long long now)
{
	struct serve_buf b = {0};
	struct serve_rows head = {0}, jobs = {0}, refused = {0}, nodes = {0}, ups = {0},
			  strag = {0}, plot = {0};
	struct serve_tally t = {0};
	struct serve_point *pts = NULL;
	size_t npts = 0;
	long long from;
	bool ok;

	pthread_mutex_lock(&st->lock);
	from = serve_window_start(st->db);
	ok = serve_rows_get(&head, st->db,
			    "SELECT (SELECT value FROM counters WHERE name = 'last_report' AND"
			    " label = ''), (SELECT COUNT(*) FROM reports), ?1",
			    from) &&
	     serve_rows_get(
		     &jobs, st->db,
		     "SELECT r.id, r.received, COALESCE(r.job_id, ''), r.user, r.cluster, r.state,"
		     " r.nodes, (SELECT GROUP_CONCAT(code, ' ') FROM warnings w WHERE"
		     " w.report_id = r.id), COALESCE(r.step_s, json_extract(r.body,"
		     " '$.plan.prediction.step_seconds')), (SELECT o.measured_s FROM observations o"
		     " WHERE o.job_id = r.job_id AND o.cluster IS r.cluster ORDER BY o.report_id"
		     " DESC LIMIT 1), CASE WHEN r.state IS NOT 'ok' THEN json_extract(r.body,"
		     " '$.reason') END FROM reports r WHERE r.kind = 'plan' AND r.id > ?1 ORDER BY"
		     " r.id DESC LIMIT 20", /* SERVE_RECENT_JOBS */
		     from) &&
	     serve_rows_get(&refused, st->db,
			    "SELECT r.id, r.received, COALESCE(r.job_id, ''), r.user, r.cluster,"
			    " json_extract(r.body, '$.reason'), (SELECT GROUP_CONCAT(code, ' ')"
			    " FROM warnings w WHERE w.report_id = r.id) FROM reports r WHERE"
			    " r.kind = 'plan' AND r.state = 'refused' AND r.id > ?1 ORDER BY r.id"
			    " DESC LIMIT 20",
			    from) &&
	     serve_rows_get(&nodes, st->db, nodes_sql, from) &&
	     serve_rows_get(&ups, st->db, uplinks_sql, from) &&
	     serve_rows_get(&strag, st->db,
			    "SELECT s.node, COUNT(*), MAX(r.received) FROM stragglers s JOIN"
			    " reports r ON r.id = s.report_id WHERE s.report_id > ?1 GROUP BY 1"
			    " ORDER BY 2 DESC, 1 LIMIT 20",
			    from) &&
	     serve_rows_get(&plot, st->db,
			    "SELECT predicted_s, measured_s FROM observations WHERE report_id > ?1"
			    " ORDER BY report_id DESC LIMIT 512",
			    from);
	pthread_mutex_unlock(&st->lock);
	/* drawn without the lock */
	if (!ok || !serve_tally_make(&t, site, &nodes, &ups)) {
		ok = false;
		goto out;
	}
	page_head(&b, "dtplan collector");
	serve_buf_add(&b, "<h1>dtplan collector</h1>\n<p id=\"status\">");
	if (head.n > 0 && serve_cell_num(&head, 0, 0) > 0) {
		serve_buf_add(&b, "Last report ");
		serve_draw_time(&b, (long long)serve_cell_num(&head, 0, 0), now);
	} else
		serve_buf_add(&b, "No report yet");
	serve_buf_add(&b, "; %lld reports kept; page drawn ",
		      head.n > 0 ? atoll(serve_cell(&head, 0, 1)) : 0LL);
	serve_draw_time(&b, now, now);
	serve_buf_add(&b, ".%s</p>\n",
		      fabric_link ? " <a href=\"/fabric\">The fabric file, measured (JSON)</a>"
				  : "");
	draw_health(&b, site, &t);
	draw_refusals(&b, &refused, now);
	draw_jobs(&b, &jobs, now);
	draw_fabric(&b, site, &t, nodes.n, now);
	draw_stragglers(&b, &strag, now);
	serve_buf_add(&b, "<section id=\"steps\"><h2>Planned against measured step times</h2>\n"
			  "<p>The last 512 observations of the window, one point a job.</p>\n");
	pts = points_of(&plot, 0, 1, -1, 0, &npts);
	if (pts != NULL)
		serve_draw_plot(&b, pts, npts, NULL);
	serve_buf_add(&b, "</section>\n");
	page_tail(&b);
out:
	free(pts);
	serve_tally_fini(&t);
	serve_rows_free(&head);
	serve_rows_free(&jobs);
	serve_rows_free(&refused);
	serve_rows_free(&nodes);
	serve_rows_free(&ups);
	serve_rows_free(&strag);
	serve_rows_free(&plot);
	if (!ok) {
		free(serve_buf_take(&b));
		return NULL;
	}
	return serve_buf_take(&b);
}

/* ------------------------------------------------------------------------
 * A job's page
 * ---------------------------------------------------------------------- */

/* Reports of the job (rows: id, received, kind, job, cluster, user, state,
 * nodes, planned step, reason, has a plan, poster). */
static void draw_reports(struct serve_buf *b, const struct serve_rows *r, long long now)
{
	serve_buf_add(b, "<section id=\"reports\"><h2>Reports</h2>\n<table><tr><th>received "
			 "(UTC)</th><th>report</th><th>kind</th><th>cluster</th><th>user</th>"
			 "<th>state</th><th>nodes</th><th>planned step (s)</th><th>reason</th>"
			 "<th>posted by</th></tr>\n");
	for (size_t i = 0; i < r->n; i++) {
		serve_buf_add(b, "<tr class=\"report\">");
		td_time(b, serve_cell(r, i, 1), now);
		serve_buf_add(b, "<td><a href=\"/report/%lld\">%lld</a></td>",
			      atoll(serve_cell(r, i, 0)), atoll(serve_cell(r, i, 0)));
		td(b, serve_cell(r, i, 2));
		td(b, serve_cell(r, i, 4));
		td(b, serve_cell(r, i, 5));
		serve_buf_add(b, "<td class=\"state ");
		serve_buf_html(b, serve_cell(r, i, 6));
		serve_buf_add(b, "\">");
		serve_buf_html(b, serve_cell(r, i, 6));
		serve_buf_add(b, "</td>");
		td(b, serve_cell(r, i, 7));
		td_num(b, r, i, 8, 1);
		td(b, serve_cell(r, i, 9));
		serve_buf_add(b, "<td>%s</td></tr>\n",
			      atoll(serve_cell(r, i, 11)) == 0 ? "root" : "a user");
	}
	serve_buf_add(b, "</table></section>\n");
}

/* A table of rows: a header (ours, after the report and its time) and each
 * row's cells escaped; col 0 (the report id) a link, then the report's
 * time from reps (the job's reports: id, received; at most
 * PAGE_JOB_REPORTS, so each row's look-up is bounded); num[c]: column c a
 * number times num[c]. */
static void draw_table(struct serve_buf *b, const char *id, const char *title, const char *ths,
		       const struct serve_rows *r, const double *num, const struct serve_rows *reps,
		       long long now)
{
	serve_buf_add(b, "<h3>%s</h3>\n", title);
	if (r->n == 0) {
		serve_buf_add(b, "<p id=\"%s\">None.</p>\n", id);
		return;
	}
	serve_buf_add(b, "<table id=\"%s\"><tr><th>report</th><th>received (UTC)</th>%s</tr>\n", id,
		      ths);
	for (size_t i = 0; i < r->n; i++) {
		const char *when = "0";

		for (size_t k = 0; k < reps->n; k++)
			if (strcmp(serve_cell(reps, k, 0), serve_cell(r, i, 0)) == 0)
				when = serve_cell(reps, k, 1);
		serve_buf_add(b, "<tr><td><a href=\"/report/%lld\">%lld</a></td>",
			      atoll(serve_cell(r, i, 0)), atoll(serve_cell(r, i, 0)));
		td_time(b, when, now);
		for (size_t c = 1; c < r->cols; c++) {
			if (num != NULL && num[c] != 0)
				td_num(b, r, i, c, num[c]);
			else
				td(b, serve_cell(r, i, c));
		}
		serve_buf_add(b, "</tr>\n");
	}
	serve_buf_add(b, "</table>\n");
}

/* Observations (rows: report, received, cluster, gpu, model, framework,
 * planned, measured, spread, steps). */
static void draw_observations(struct serve_buf *b, const struct serve_rows *r, long long now)
{
	serve_buf_add(b, "<table id=\"observations\"><tr><th>received (UTC)</th><th>report</th>"
			 "<th>cluster</th><th>GPU</th><th>model</th><th>framework</th>"
			 "<th>planned step (s)</th><th>measured step (s)</th><th>spread (s)</th>"
			 "<th>measured / planned</th><th>steps</th></tr>\n");
	for (size_t i = 0; i < r->n; i++) {
		double p = serve_cell_num(r, i, 6), m = serve_cell_num(r, i, 7);

		serve_buf_add(b, "<tr class=\"observation\">");
		td_time(b, serve_cell(r, i, 1), now);
		serve_buf_add(b, "<td><a href=\"/report/%lld\">%lld</a></td>",
			      atoll(serve_cell(r, i, 0)), atoll(serve_cell(r, i, 0)));
		for (size_t c = 2; c < 6; c++)
			td(b, serve_cell(r, i, c));
		td_num(b, r, i, 6, 1);
		td_num(b, r, i, 7, 1);
		td_num(b, r, i, 8, 1);
		if (p > 0 && isfinite(m / p))
			serve_buf_add(b, "<td class=\"%s\">%.3f</td>",
				      m > SERVE_PLOT_SLOW * p ? "bad" : "fine", m / p);
		else
			serve_buf_add(b, "<td></td>");
		td(b, serve_cell(r, i, 9));
		serve_buf_add(b, "</tr>\n");
	}
	serve_buf_add(b, "</table>\n");
}

char *serve_job_page(struct serve_store *st, long long job_id, long long report, long long now,
		     bool *missing)
{
	struct serve_buf b = {0};
	struct serve_rows reps = {0}, warn = {0}, tiers = {0}, ups = {0}, strag = {0}, links = {0},
			  obs = {0}, ctx = {0};
	struct serve_point *pts = NULL;
	const char *ids, *osel;
	char sql[1200], title[64];
	long long key = job_id > 0 ? job_id : report, from, plan_id = 0;
	size_t npts = 0;
	bool ok;

	*missing = false;
	ids = job_id > 0 ? "(SELECT id FROM reports WHERE job_id = ?1 ORDER BY id DESC LIMIT 50)"
			 : "(?1)"; /* PAGE_JOB_REPORTS */
	osel = job_id > 0 ? "o.job_id = ?1" : "o.report_id = ?1";
	pthread_mutex_lock(&st->lock);
	from = serve_window_start(st->db);
	snprintf(sql, sizeof(sql),
		 "SELECT id, received, kind, COALESCE(job_id, ''), cluster, user, state, nodes,"
		 " COALESCE(step_s, json_extract(body, '$.plan.prediction.step_seconds')),"
		 " json_extract(body, '$.reason'), json_type(body, '$.plan') = 'object',"
		 " poster FROM reports WHERE id IN %s ORDER BY id DESC",
		 ids);
	ok = serve_rows_get(&reps, st->db, sql, key);
	snprintf(sql, sizeof(sql),
		 "SELECT r.id, json_extract(j.value, '$.code'), json_extract(j.value,"
		 " '$.message') FROM reports r, json_each(r.body, '$.warnings') j WHERE r.id IN"
		 " %s AND r.kind = 'plan' ORDER BY r.id DESC LIMIT 256",
		 ids);
	ok = ok && serve_rows_get(&warn, st->db, sql, key);
	snprintf(sql, sizeof(sql),
		 "SELECT report_id, tier, bandwidth, latency_s FROM tiers WHERE report_id IN %s"
		 " ORDER BY 1 DESC, 2 LIMIT 256",
		 ids);
	ok = ok && serve_rows_get(&tiers, st->db, sql, key);
	snprintf(sql, sizeof(sql),
		 "SELECT report_id, switch, oversubscription, configured, bandwidth, saturated"
		 " FROM uplinks WHERE report_id IN %s ORDER BY 1 DESC, 2 LIMIT 256",
		 ids);
	ok = ok && serve_rows_get(&ups, st->db, sql, key);
	snprintf(sql, sizeof(sql),
		 "SELECT s.report_id, s.node, (SELECT COUNT(*) FROM links l WHERE l.report_id ="
		 " s.report_id AND l.slow = 1 AND (l.a = s.node OR l.b = s.node)) FROM"
		 " stragglers s WHERE s.report_id IN %s ORDER BY 1 DESC, 2 LIMIT 256",
		 ids);
	ok = ok && serve_rows_get(&strag, st->db, sql, key);
	snprintf(sql, sizeof(sql),
		 "SELECT report_id, COUNT(*), SUM(slow), AVG(bandwidth), AVG(latency_s) FROM"
		 " links WHERE report_id IN %s GROUP BY 1 ORDER BY 1 DESC",
		 ids);
	ok = ok && serve_rows_get(&links, st->db, sql, key);
	snprintf(sql, sizeof(sql),
		 "SELECT o.report_id, r.received, o.cluster, o.gpu, o.model, o.framework,"
		 " o.predicted_s, o.measured_s, o.spread_s, o.steps FROM observations o JOIN"
		 " reports r ON r.id = o.report_id WHERE %s ORDER BY o.report_id DESC LIMIT 50",
		 osel);
	ok = ok && serve_rows_get(&obs, st->db, sql, key);
	/* the other jobs of its GPU and model, for the plot */
	if (ok && obs.n > 0)
		ok = serve_rows_get3(&ctx, st->db,
				     "SELECT predicted_s, measured_s, COALESCE(job_id, -1) FROM"
				     " observations WHERE report_id > ?1 AND gpu IS ?2 AND model IS"
				     " ?3 ORDER BY report_id DESC LIMIT 512",
				     from, serve_cell(&obs, 0, 3), serve_cell(&obs, 0, 4));
	pthread_mutex_unlock(&st->lock);
	if (!ok)
		goto out;
	if (reps.n == 0 && obs.n == 0) {
		*missing = true;
		ok = false;
		goto out;
	}
	if (job_id > 0)
		snprintf(title, sizeof(title), "job %lld", job_id);
	else
		snprintf(title, sizeof(title), "report %lld", report);
	page_head(&b, title);
	serve_buf_add(&b, "<h1>%s%s</h1>\n<p id=\"status\">", job_id > 0 ? "Job " : "Report ",
		      title + (job_id > 0 ? 4 : 7));
	if (reps.n > 0) {
		serve_buf_add(&b, "Cluster ");
		serve_buf_html(&b, serve_cell(&reps, 0, 4)[0] ? serve_cell(&reps, 0, 4) : "?");
		serve_buf_add(&b, ", user ");
		serve_buf_html(&b, serve_cell(&reps, 0, 5)[0] ? serve_cell(&reps, 0, 5) : "?");
		serve_buf_add(&b, ", %zu report%s, the last ", reps.n, reps.n == 1 ? "" : "s");
		serve_draw_time(&b, atoll(serve_cell(&reps, 0, 1)), now);
		serve_buf_add(&b, ".");
		if (reps.n >= PAGE_JOB_REPORTS)
			serve_buf_add(&b, " The page shows its last %d reports.", PAGE_JOB_REPORTS);
	}
	serve_buf_add(&b, "</p>\n");
	/* the refusal first: it is why the admin came */
	for (size_t i = 0; i < reps.n; i++) {
		if (strcmp(serve_cell(&reps, i, 2), "plan") != 0)
			continue;
		if (strcmp(serve_cell(&reps, i, 6), "refused") == 0) {
			serve_buf_add(&b, "<p class=\"refusal\" id=\"refusal\"><b>Refused</b>: ");
			serve_buf_html(&b, serve_cell(&reps, i, 9)[0] ? serve_cell(&reps, i, 9)
								      : "(no reason given)");
			serve_buf_add(&b, "</p>\n");
		}
		if (plan_id == 0 && atoi(serve_cell(&reps, i, 10)))
			plan_id = atoll(serve_cell(&reps, i, 0));
		break; /* the last plan report's */
	}
	for (size_t i = 0; plan_id == 0 && i < reps.n; i++)
		if (atoi(serve_cell(&reps, i, 10)))
			plan_id = atoll(serve_cell(&reps, i, 0));
	if (reps.n > 0)
		draw_reports(&b, &reps, now);
	serve_buf_add(&b, "<section id=\"plan\"><h2>Plan</h2>\n");
	if (plan_id > 0)
		serve_buf_add(&b,
			      "<figure><img class=\"plan\" src=\"/plan/%lld.svg\" alt=\"the plan "
			      "of report %lld\"><figcaption>The plan of report %lld (<a "
			      "href=\"/plan/%lld.svg\">SVG</a>).</figcaption></figure>\n",
			      plan_id, plan_id, plan_id, plan_id);
	else
		serve_buf_add(&b, "<p>No plan reported.</p>\n");
	serve_buf_add(&b, "</section>\n<section id=\"warnings\">");
	draw_table(&b, "warning-list", "Warnings", "<th>code</th><th>message</th>", &warn, NULL,
		   &reps, now);
	serve_buf_add(&b, "</section>\n<section id=\"measurements\"><h2>Measurements</h2>\n"
			  "<p>Root's reports only (the prolog's): a user's plan keeps no fabric "
			  "figures (doc/internals/collector.md).</p>\n");
	draw_table(&b, "tiers", "Link tiers",
		   "<th>tier</th><th>bandwidth (GB/s)</th><th>latency (us)</th>", &tiers,
		   (const double[]){0, 0, 1e-9, 1e6}, &reps, now);
	draw_table(&b, "links", "Links",
		   "<th>links measured</th><th>slow</th><th>mean bandwidth "
		   "(GB/s)</th><th>mean latency (us)</th>",
		   &links, (const double[]){0, 0, 0, 1e-9, 1e6}, &reps, now);
	draw_table(&b, "uplinks", "Uplinks",
		   "<th>switch</th><th>oversubscription</th><th>configured</th>"
		   "<th>bandwidth (GB/s)</th><th>saturated</th>",
		   &ups, (const double[]){0, 0, 1, 1, 1e-9, 0}, &reps, now);
	draw_table(&b, "job-stragglers", "Stragglers", "<th>node</th><th>its slow links</th>",
		   &strag, NULL, &reps, now);
	serve_buf_add(&b, "</section>\n<section id=\"steps\"><h2>Planned against measured step "
			  "times</h2>\n");
	if (obs.n == 0)
		serve_buf_add(&b, "<p>No step time observed yet (the job's end posts it).</p>\n");
	else {
		draw_observations(&b, &obs, now);
		/* a job's among the other jobs of its GPU and model in the window;
		 * a report's alone */
		if (job_id > 0 && ctx.n > 0)
			pts = points_of(&ctx, 0, 1, 2, job_id, &npts);
		else
			pts = points_of(&obs, 6, 7, -1, 0, &npts);
		if (pts != NULL)
			serve_draw_plot(&b, pts, npts, "other jobs, same GPU and model");
	}
	serve_buf_add(&b, "</section>\n");
	page_tail(&b);
out:
	free(pts);
	serve_rows_free(&reps);
	serve_rows_free(&warn);
	serve_rows_free(&tiers);
	serve_rows_free(&ups);
	serve_rows_free(&strag);
	serve_rows_free(&links);
	serve_rows_free(&obs);
	serve_rows_free(&ctx);
	if (!ok) {
		free(serve_buf_take(&b));
		return NULL;
	}
	return serve_buf_take(&b);
}

/* ------------------------------------------------------------------------
 * A leaf's or a rack's nodes
 * ---------------------------------------------------------------------- */

/* One node: its row of the tally (row < 0: the site's node, unmeasured). */
static void draw_node(struct serve_buf *b, const struct serve_site *s, const struct serve_tally *t,
		      const char *name, long row, long site_node, long long now)
{
	const struct serve_rows *r = t->rows;
	long slow = row >= 0 ? atol(serve_cell(r, (size_t)row, 2)) : 0,
	     seen = row >= 0 ? atol(serve_cell(r, (size_t)row, 3)) : 0,
	     strag = row >= 0 ? atol(serve_cell(r, (size_t)row, 4)) : 0;
	int rack = site_node >= 0 ? s->nodes[site_node].rack : -1;
	const char *cls = slow >= SERVE_SLOW_REPORTS ? "bad"
			  : slow > 0 || strag > 0    ? "strained"
			  : seen > 0                 ? "fine"
						     : "unmeasured";

	serve_buf_add(b, "<tr class=\"node%s%s\" data-node=\"",
		      slow >= SERVE_SLOW_REPORTS ? " slow" : "", strag > 0 ? " straggler" : "");
	serve_buf_html(b, name);
	serve_buf_add(b, "\" data-slow-reports=\"%ld\" data-reports=\"%ld\">", slow, seen);
	td(b, name);
	td(b, row >= 0 ? serve_tally_leaf_name(s, t, (size_t)row)
	      : site_node >= 0 && s->nodes[site_node].leaf >= 0
		      ? s->leaves[s->nodes[site_node].leaf].name
		      : "");
	td(b, rack >= 0 ? s->racks[rack] : "");
	serve_buf_add(b, "<td class=\"%s\">%s</td><td>%ld of %ld</td><td>%ld</td>", cls, cls, slow,
		      seen, strag);
	serve_buf_add(b, "<td class=\"time\">");
	serve_draw_time(b, row >= 0 ? atoll(serve_cell(r, (size_t)row, 5)) : 0, now);
	serve_buf_add(b, "</td></tr>\n");
}

char *serve_nodes_page(struct serve_store *st, const struct serve_site *site, const char *name,
		       bool rack, long long now, bool *missing)
{
	struct serve_buf b = {0};
	struct serve_rows nodes = {0}, ups = {0};
	struct serve_tally t = {0};
	long *row_of = NULL; /* each site node's tally row, -1 none */
	const struct serve_health *h = NULL;
	long li = -1, ri = -1;
	size_t listed = 0;
	bool ok;

	*missing = false;
	pthread_mutex_lock(&st->lock);
	{
		long long from = serve_window_start(st->db);

		ok = serve_rows_get(&nodes, st->db, nodes_sql, from) &&
		     serve_rows_get(&ups, st->db, uplinks_sql, from);
	}
	pthread_mutex_unlock(&st->lock);
	if (!ok || !serve_tally_make(&t, site, &nodes, &ups)) {
		ok = false;
		goto out;
	}
	if (rack) {
		ri = serve_site_rack(site, name);
		h = ri >= 0 ? &t.rack[ri] : NULL;
	} else {
		li = serve_site_leaf(site, name);
		for (size_t k = 0; li < 0 && k < t.n_extra; k++)
			if (strcmp(t.extra[k], name) == 0 ||
			    (strcmp(name, "-") == 0 && t.extra[k][0] == '\0'))
				li = (long)(site->n_leaves + k);
		h = li >= 0 ? &t.leaf[li] : NULL;
	}
	if (h == NULL) {
		*missing = true;
		ok = false;
		goto out;
	}
	row_of = malloc((site->n_nodes + 1) * sizeof(*row_of));
	if (row_of == NULL) {
		ok = false;
		goto out;
	}
	for (size_t i = 0; i < site->n_nodes; i++)
		row_of[i] = -1;
	for (size_t i = 0; i < nodes.n; i++)
		if (t.site_node[i] >= 0)
			row_of[t.site_node[i]] = (long)i;
	page_head(&b, rack ? "rack" : "leaf");
	serve_buf_add(&b, "<h1>%s <span class=\"name\">", rack ? "Rack" : "Leaf");
	serve_buf_html(&b, name);
	serve_buf_add(&b,
		      "</span></h1>\n<p id=\"status\" class=\"%s\">%s: %zu nodes, %zu "
		      "measured, %zu slow, %zu flaky, %zu stragglers",
		      serve_health_class(h), serve_health_class(h), h->nodes, h->measured, h->slow,
		      h->flaky, h->stragglers);
	if (isfinite(h->ratio))
		serve_buf_add(&b, "; uplink measured at %.2f:1", h->ratio);
	if (!rack && li >= 0 && (size_t)li < site->n_leaves && site->leaves[li].parent[0]) {
		serve_buf_add(&b, "; under ");
		serve_buf_html(&b, site->leaves[li].parent);
	}
	serve_buf_add(&b, "; last measured ");
	serve_draw_time(&b, h->last, now);
	serve_buf_add(&b, ".</p>\n<table id=\"nodes\"><tr><th>node</th><th>leaf</th><th>rack</th>"
			  "<th>health</th><th>reports with its links mostly slow</th>"
			  "<th>reports naming it a straggler</th><th>last measured (UTC)</th>"
			  "</tr>\n");
	/* the site's nodes of it, in name order, then those only reports place */
	for (size_t i = 0; i < site->n_nodes && listed < PAGE_NODES; i++) {
		if (rack ? site->nodes[i].rack != ri : site->nodes[i].leaf != li)
			continue;
		draw_node(&b, site, &t, site->nodes[i].name, row_of[i], (long)i, now);
		listed++;
	}
	for (size_t i = 0; !rack && i < nodes.n && listed < PAGE_NODES; i++) {
		long at = t.site_node[i];

		if ((at >= 0 && site->nodes[at].leaf >= 0) ||
		    strcmp(serve_cell(&nodes, i, 1), (size_t)li >= site->n_leaves
							     ? t.extra[li - (long)site->n_leaves]
							     : name) != 0)
			continue;
		draw_node(&b, site, &t, serve_cell(&nodes, i, 0), (long)i, at, now);
		listed++;
	}
	serve_buf_add(&b, "</table>\n");
	if (listed >= PAGE_NODES)
		serve_buf_add(&b, "<p class=\"cut\">The page lists the first %d nodes.</p>\n",
			      PAGE_NODES);
	page_tail(&b);
out:
	free(row_of);
	serve_tally_fini(&t);
	serve_rows_free(&nodes);
	serve_rows_free(&ups);
	if (!ok) {
		free(serve_buf_take(&b));
		return NULL;
	}
	return serve_buf_take(&b);
}
