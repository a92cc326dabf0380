/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_int.h: what the collector's files share, in eight files over this
 * header: serve.c the run (the fabric file, the store, the signals),
 * serve_http.c the HTTP server (libmicrohttpd: limits, rates, routes) and
 * the trust a report needs, serve_store.c the SQLite store (schema,
 * retention, the budget, the rows the figures read), serve_page.c the
 * admin's pages (the dashboard, a job's, a leaf's or a rack's), serve_view.c
 * the other answers (/metrics, the fabric, the calibration, a plan's
 * picture), serve_draw.c what the pages draw (times, the plot, escaping),
 * serve_site.c the site the pages aggregate by (leaves, racks) and
 * serve_rows.c what the answers share (rows copied out of the store,
 * medians, an inert copy of a posted document, --json's lines).  Each uses only the
 * ones after it in this list, and of dtplan only libdtplan's public API
 * (what a posted document must hold is dtplan_posted_parse()'s,
 * lib/json/posted_json.c) and libdtprobes' report credential.  Included by
 * serve/ only.
 */
#ifndef DTPLAN_SERVE_SERVE_INT_H
#define DTPLAN_SERVE_SERVE_INT_H

#include "serve.h"

#include <jansson.h>
#include <pthread.h>
#include <sqlite3.h>

/* Why a report was refused: the label of dtplan_reports_refused_total. */
enum serve_reason {
	SERVE_MALFORMED,       /* not JSON, or a member of the wrong type */
	SERVE_SCHEMA,          /* JSON of no schema the collector takes */
	SERVE_OVERSIZED,       /* larger than --max-body */
	SERVE_RATE_LIMITED,    /* the address posts faster than --rate */
	SERVE_UNAUTHENTICATED, /* no credential */
	SERVE_FORGED,          /* a credential of another key or body */
	SERVE_REPLAYED,        /* a credential seen before */
	SERVE_EXPIRED,         /* a credential past its time to live */
	SERVE_USER,            /* a credential of neither root nor the user named */
	SERVE_MUNGE,           /* munged cannot check it */
	SERVE_STORAGE,         /* the store cannot keep it */
	SERVE_RANGE,           /* a figure outside its physical range */
	SERVE_BUDGET,          /* larger than the poster's whole share of the store */
	SERVE_N_REASONS
};

/* The label of a reason ("forged"). */
const char *serve_reason_name(enum serve_reason r);

/* The label of a kind of document taken (dtplan_posted_parse()): "plan",
 * "observation", "measurement". */
const char *serve_kind_name(enum dtplan_posted_kind k);

/* Refusals counted and not yet added to the store's counters (serve_http.c
 * adds them at most once a second, before /metrics answers and when it
 * stops). */
struct serve_counters {
	unsigned long long refused[SERVE_N_REASONS];
};

/* The buckets of dtplan_step_ratio (measured / planned step time). */
#define SERVE_RATIO_BUCKETS 10
extern const double serve_ratio_buckets[SERVE_RATIO_BUCKETS];

/* How long /healthz waits for the store's lock. */
#define SERVE_HEALTH_TIMEOUT_S 2

/* ------------------------------------------------------------------------
 * The server (serve_http.c)
 * ---------------------------------------------------------------------- */

struct server;
struct serve_store;

/* Starts serving on o->listen with its own threads; *port receives the
 * port bound (for port 0).  st and fabric stay borrowed.  NULL and err
 * (naming --listen) when it cannot.  serve_stop() ends and frees it. */
struct server *serve_start(const struct serve_opts *o, struct serve_store *st, json_t *fabric,
			   unsigned *port, struct dtplan_error *err);
void serve_stop(struct server *s);

/* ------------------------------------------------------------------------
 * The store (serve_store.c).  One SQLite connection behind one mutex:
 * every call below takes it.
 * ---------------------------------------------------------------------- */

#define SERVE_SCHEMA_VERSION 4

struct serve_store {
	sqlite3 *db;
	pthread_mutex_t lock;
	long keep_reports;
	double keep_days;
	long long max_bytes;      /* bodies kept, all posters (0: no bound) */
	long long max_user_bytes; /* of which one poster's other than root */
};

/* Opens (creating or upgrading) the store at path.  Caller closes with
 * serve_store_close().  Errors name the file. */
enum dtplan_err serve_store_open(const char *path, long keep_reports, double keep_days,
				 struct serve_store **out, struct dtplan_error *err);
void serve_store_close(struct serve_store *st);

/* Remembers credential id (what the credential decodes to) until expires: 1 when new, 0 when seen before,
 * -1 when the store failed. */
int serve_store_cred_remember(struct serve_store *st, const char *id, long long expires,
			      long long now);

/* True when code is one of the warning codes this version's plans carry
 * (dtplan_warning_code_at()); the counters label the others "other". */
bool serve_warning_known(const char *code);

/* Adds delta[i] to counter name{label(i)} for i in [0, n), in one
 * transaction; false when the store fails (nothing added). */
bool serve_store_count(struct serve_store *st, const char *name, const unsigned long long *delta,
		       int n, const char *(*label)(int));

/* True when the store answers a trivial SELECT, its lock had within
 * SERVE_HEALTH_TIMEOUT_S; false with why otherwise. */
bool serve_store_ping(struct serve_store *st, char *why, size_t size);

/*
 * Keeps document doc (its text body) of kind k from uid poster (the
 * credential's) received at now: the report row and what the figures need
 * (warnings, the observation; tiers, links, uplinks and stragglers only
 * from root, whose measurements are the fabric's).  Before it inserts,
 * retention removes the oldest reports past keep_days and keep_reports,
 * then the poster's oldest until its bodies and this one fit
 * max_user_bytes (not for root), then the oldest of all until everything
 * fits max_bytes.  The counters (kind, a plan's state and warnings, the
 * step ratio's histogram, the last report's time) are added in the same
 * transaction.  *id receives the report's id.  doc is what
 * dtplan_posted_parse() made of body.  DTPLAN_ERR_RANGE when body alone is
 * larger than the poster's budget, DTPLAN_ERR_IO when the store fails.
 */
enum dtplan_err serve_store_add(struct serve_store *st, enum dtplan_posted_kind k, json_t *doc,
				const char *body, long long poster, long long now, long long *id,
				struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Answers (serve_view.c).  Each returns malloc'ed text (caller frees) or
 * NULL when out of memory or the store failed; they take the store's lock.
 * ---------------------------------------------------------------------- */

/* The first report id of the pages' window: the last SERVE_WINDOW reports
 * (serve_view.c). */
long long serve_window_start(sqlite3 *db);

/* A growing text. */
struct serve_buf {
	char *s;
	size_t len, cap;
	bool failed;
};
void serve_buf_add(struct serve_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s escaped for HTML text and attribute values (& < > " '). */
void serve_buf_html(struct serve_buf *b, const char *s);
/* The text, handed over (NULL after a failure). */
char *serve_buf_take(struct serve_buf *b);

/* A leaf's health: its uplink's measured oversubscription at most
 * SERVE_OK_RATIO is fine, at most SERVE_BAD_RATIO strained, above it bad. */
#define SERVE_OK_RATIO 1.5
#define SERVE_BAD_RATIO 3.0

struct serve_site;

/* pending: refusals counted but not yet in the store (it was full or
 * failing; NULL none), added to the store's counts. */
char *serve_metrics(struct serve_store *st, const struct serve_counters *pending);
/* The pages (serve_page.c), HTML at now (Unix seconds, for the ages):
 * the dashboard; a job's (job_id > 0) or one report's (report > 0); a
 * leaf's or a rack's nodes (rack true).  *missing is set when the job,
 * report, leaf or rack is not known; the answer is then NULL.  site is the --fabric file's (never NULL; empty without one). */
char *serve_page(struct serve_store *st, const struct serve_site *site, bool fabric_link,
		 long long now);
char *serve_job_page(struct serve_store *st, long long job_id, long long report, long long now,
		     bool *missing);
char *serve_nodes_page(struct serve_store *st, const struct serve_site *site, const char *name,
		       bool rack, long long now, bool *missing);
/* The fabric file with what was measured: NULL without one. */
char *serve_fabric(struct serve_store *st, json_t *fabric);
char *serve_calibration(struct serve_store *st);
/* Report id's plan as SVG; NULL (and *missing) when it has none. */
char *serve_plan_svg(struct serve_store *st, long long id, bool *missing);

/* ------------------------------------------------------------------------
 * What the answers share (serve_rows.c)
 * ---------------------------------------------------------------------- */

/* Rows copied out of the store under its lock, rendered after it (issue 32:
 * the page was drawn under the lock).  Each cell is text (NULL for SQL
 * NULL). */
struct serve_rows {
	char **cell;
	size_t n, cols, cap;
	bool failed;
};

/* Runs sql (?1: from, when it has a parameter) and calls row(statement, arg)
 * for each row; false when SQLite fails. */
bool serve_each(sqlite3 *db, const char *sql, long long from, void (*row)(sqlite3_stmt *, void *),
		void *arg);

/* Appends the rows of sql (?1 bound to from when it has a parameter) to
 * *r, every cell copied; false when the query or a copy failed.  Call with
 * the store's lock held; serve_rows_free() frees them (a zeroed struct
 * before the first call). */
bool serve_rows_get(struct serve_rows *r, sqlite3 *db, const char *sql, long long from);
void serve_rows_free(struct serve_rows *r);
/* A cell's text ("" for NULL; owned by r), or its number (NAN for NULL). */
const char *serve_cell(const struct serve_rows *r, size_t row, size_t col);
double serve_cell_num(const struct serve_rows *r, size_t row, size_t col);
/* The median of v[0..n) (sorted in place); NAN for none. */
double serve_median(double *v, size_t n);
/* The end of the group of rows starting at row i: the first row whose
 * first keys columns differ. */
size_t serve_group_end(const struct serve_rows *r, size_t i, size_t keys);
/* The median of column col over rows [i, e), NULLs and non-finite values
 * skipped, using v (room for e - i); *n (when not NULL) the values taken. */
double serve_col_median(const struct serve_rows *r, size_t i, size_t e, size_t col, double *v,
			size_t *n);
/* A copy of v whose every string and key has & < > " ' and control
 * characters made '?' (a new reference; NULL when out of memory). */
json_t *serve_json_inert(json_t *v);

/* Like serve_rows_get(), with ?1 bound to i1 and ?2, ?3 to t2, t3 when
 * not NULL. */
bool serve_rows_get3(struct serve_rows *r, sqlite3 *db, const char *sql, long long i1,
		     const char *t2, const char *t3);

/* ------------------------------------------------------------------------
 * The site (serve_site.c): the --fabric file's leaves, nodes and racks,
 * made once at start and read by every page without a lock.
 * ---------------------------------------------------------------------- */

struct serve_site_leaf {
	char *name;
	char *parent;   /* the switch above it; "" for a root */
	size_t n_nodes; /* under it, in the fabric file */
};
struct serve_site_node {
	char *name;
	int leaf; /* index in leaves; -1 none */
	int rack; /* index in racks; -1 none */
};
struct serve_site {
	struct serve_site_leaf *leaves; /* sorted by name */
	size_t n_leaves;
	size_t *order; /* leaves for display: by parent, then name (natural order) */
	struct serve_site_node *nodes; /* sorted by name */
	size_t n_nodes;
	char **racks; /* the node sets' nvlink_domain names, sorted, unique */
	size_t n_racks;
};

/* The site of fabric (dtplan.fabric/1 JSON; NULL: an empty site).  Caller
 * frees with serve_site_destroy().  Errors name --fabric. */
enum dtplan_err serve_site_create(json_t *fabric, struct serve_site **out,
				  struct dtplan_error *err);
void serve_site_destroy(struct serve_site *s);
/* Indexes by name; -1 when absent. */
int serve_site_leaf(const struct serve_site *s, const char *name);
long serve_site_node(const struct serve_site *s, const char *name);
int serve_site_rack(const struct serve_site *s, const char *name);
/* Natural order ("leaf2" before "leaf10"). */
int serve_natural_cmp(const char *a, const char *b);

/* What was measured of a leaf, a rack or the site, over the window. */
struct serve_health {
	size_t nodes;      /* in the fabric file, or named by reports */
	size_t measured;   /* of which in a measurement */
	size_t slow;       /* of which slow in SERVE_SLOW_REPORTS reports or more */
	size_t flaky;      /* slow in fewer */
	size_t stragglers; /* named a straggler at least once */
	double ratio;      /* the uplink's measured oversubscription; NAN none */
	long long last;    /* the last report that measured one, Unix time; 0 none */
};
/* "fine", "strained", "bad" or "unmeasured" (SERVE_OK_RATIO, SERVE_BAD_RATIO). */
const char *serve_health_class(const struct serve_health *h);

/* The tally of the measured nodes (rows: node, leaf a report named, slow
 * reports, reports seen, straggler reports, last report's time; sorted by
 * node) and the uplinks (rows: switch, mean oversubscription) over a
 * site.  leaf[] holds the site's leaves (its indexes), then n_extra
 * leaves only reports name (extra[], sorted, borrowed from the rows);
 * rack[] the site's racks.  site_node[i]: node row i's index in the site,
 * -1 when the site lacks it.  serve_tally_fini() frees. */
struct serve_tally {
	const struct serve_rows *rows;
	long *site_node;
	const char **extra;
	size_t n_extra, n_leaves;
	struct serve_health *leaf, *rack, all;
};
bool serve_tally_make(struct serve_tally *t, const struct serve_site *s,
		      const struct serve_rows *nodes, const struct serve_rows *ups);
void serve_tally_fini(struct serve_tally *t);
/* The leaf of node row i: the site's, else the one its report named. */
const char *serve_tally_leaf_name(const struct serve_site *s, const struct serve_tally *t,
				  size_t i);

/* ------------------------------------------------------------------------
 * What the pages draw (serve_draw.c)
 * ---------------------------------------------------------------------- */

/* t (Unix seconds) as <time> in UTC ISO 8601 and its age at now ("5 min
 * ago"); "never" for t <= 0. */
void serve_draw_time(struct serve_buf *b, long long t, long long now);
/* s percent-encoded for a URL's path segment (all but A-Z a-z 0-9 - . _ ~). */
void serve_buf_url(struct serve_buf *b, const char *s);

/* A point of the plot: planned and measured step time, and its class. */
enum serve_point_kind {
	SERVE_POINT_FINE,    /* measured within SERVE_PLOT_SLOW of planned */
	SERVE_POINT_SLOW,    /* measured slower than that */
	SERVE_POINT_CONTEXT, /* another job's (a job's page) */
};
#define SERVE_PLOT_SLOW 1.2
struct serve_point {
	double planned, measured;
	enum serve_point_kind kind;
};
/* The planned-against-measured plot (SVG, id="step-plot"): axes from 0,
 * ticks, axis labels, the parity line and a legend; context_label names
 * the context points (NULL: none are drawn in the legend). */
void serve_draw_plot(struct serve_buf *b, const struct serve_point *p, size_t n,
		     const char *context_label);

#endif /* DTPLAN_SERVE_SERVE_INT_H */
