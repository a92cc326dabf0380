/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_store.c: the collector's SQLite store.  One file, in WAL mode (the
 * page and /metrics read while reports are written), its schema versioned
 * in PRAGMA user_version.  Each report is kept whole (its text) with the
 * rows the figures are computed from; those rows go with their report
 * (ON DELETE CASCADE) when retention removes it: more than keep_reports
 * reports, or older than keep_days.  The counters /metrics answers are kept
 * apart (the counters table), added to in the transaction that keeps a
 * report, so that they never fall.  Credentials are remembered until their
 * time to live has passed.
 *
 * What a document must hold is checked before it comes here, by
 * dtplan_posted_parse() (lib/json/posted_json.c); what is stored skips
 * what it does not find.
 */
#include "config.h"

#include "serve_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const schema_sql =
	"CREATE TABLE reports (id INTEGER PRIMARY KEY, received INTEGER NOT NULL,"
	" kind TEXT NOT NULL, cluster TEXT, job_id INTEGER, user TEXT, uid INTEGER,"
	" sender TEXT, state TEXT, degraded INTEGER NOT NULL DEFAULT 0, nodes TEXT,"
	" step_s REAL, body TEXT NOT NULL);"
	"CREATE INDEX reports_received ON reports (received);"
	"CREATE TABLE warnings (report_id INTEGER NOT NULL REFERENCES reports (id)"
	" ON DELETE CASCADE, code TEXT NOT NULL);"
	"CREATE INDEX warnings_report ON warnings (report_id);"
	"CREATE TABLE tiers (report_id INTEGER NOT NULL REFERENCES reports (id)"
	" ON DELETE CASCADE, tier TEXT NOT NULL, bandwidth REAL, latency_s REAL);"
	"CREATE INDEX tiers_report ON tiers (report_id);"
	"CREATE TABLE links (report_id INTEGER NOT NULL REFERENCES reports (id)"
	" ON DELETE CASCADE, a TEXT NOT NULL, b TEXT NOT NULL, tier TEXT NOT NULL,"
	" bandwidth REAL, latency_s REAL, slow INTEGER NOT NULL);"
	"CREATE INDEX links_report ON links (report_id);"
	"CREATE TABLE uplinks (report_id INTEGER NOT NULL REFERENCES reports (id)"
	" ON DELETE CASCADE, switch TEXT NOT NULL, oversubscription REAL, configured REAL,"
	" bandwidth REAL, saturated INTEGER NOT NULL);"
	"CREATE INDEX uplinks_report ON uplinks (report_id);"
	"CREATE TABLE stragglers (report_id INTEGER NOT NULL REFERENCES reports (id)"
	" ON DELETE CASCADE, node TEXT NOT NULL);"
	"CREATE INDEX stragglers_report ON stragglers (report_id);"
	"CREATE TABLE node_leaf (report_id INTEGER NOT NULL REFERENCES reports (id)"
	" ON DELETE CASCADE, node TEXT NOT NULL, leaf TEXT NOT NULL);"
	"CREATE INDEX node_leaf_report ON node_leaf (report_id);"
	"CREATE TABLE observations (report_id INTEGER NOT NULL REFERENCES reports (id)"
	" ON DELETE CASCADE, job_id INTEGER, user TEXT, cluster TEXT, fingerprint TEXT,"
	" gpu TEXT, model TEXT, framework TEXT, predicted_s REAL, measured_s REAL,"
	" spread_s REAL, steps INTEGER, checkpoint_s REAL, time TEXT);"
	"CREATE INDEX observations_report ON observations (report_id);"
	"CREATE TABLE credentials (id TEXT PRIMARY KEY, expires INTEGER NOT NULL);"
	"CREATE INDEX credentials_expires ON credentials (expires);";

/* Version 2: who posted each report (the credential's uid) and its body's
 * size, for the store's budget; the index covers the sums and the oldest
 * report of a poster without reading the bodies. */
static const char *const schema2_sql =
	"ALTER TABLE reports ADD COLUMN poster INTEGER;"
	"ALTER TABLE reports ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;"
	"UPDATE reports SET bytes = length(CAST(body AS BLOB)), poster = 0;"
	"CREATE INDEX reports_poster ON reports (poster, id, bytes);";

/* Version 3: the counters /metrics answers (issue 35), kept apart from the
 * reports so that they never fall when retention removes one, and updated
 * in the transaction that keeps a report.  A store upgraded from version 2
 * starts them at what it still holds. */
static const char *const schema3_sql =
	"CREATE TABLE counters (name TEXT NOT NULL, label TEXT NOT NULL,"
	" value REAL NOT NULL, PRIMARY KEY (name, label));"
	"INSERT INTO counters SELECT 'stored', kind, COUNT(*) FROM reports GROUP BY 2;"
	"INSERT INTO counters SELECT 'plans', CASE WHEN state IN ('ok', 'degraded', 'refused')"
	" THEN state ELSE 'other' END, COUNT(*) FROM reports WHERE kind = 'plan' GROUP BY 2;"
	"INSERT INTO counters SELECT 'plans_degraded', '', COUNT(*) FROM reports"
	" WHERE kind = 'plan' AND degraded = 1 HAVING COUNT(*) > 0;"
	"INSERT INTO counters SELECT 'plan_warnings', code, COUNT(*) FROM warnings GROUP BY 2;"
	"INSERT INTO counters SELECT 'plan_refusals', w.code, COUNT(*) FROM warnings w"
	" JOIN reports r ON r.id = w.report_id WHERE r.state = 'refused' GROUP BY 2;"
	"INSERT INTO counters SELECT 'last_report', '', MAX(received) FROM reports"
	" HAVING COUNT(*) > 0;";

/* Version 4: a job's reports and observations found by its id (the job's
 * page, /job/ID, issue 35) without reading the table. */
static const char *const schema4_sql =
	"CREATE INDEX IF NOT EXISTS reports_job ON reports (job_id);"
	"CREATE INDEX IF NOT EXISTS observations_job ON observations (job_id);";

/* body is larger than budget: DTPLAN_ERR_RANGE. */
static enum dtplan_err over_budget(struct dtplan_error *err, long long body, long long budget)
{
	if (err != NULL) {
		memset(err, 0, sizeof(*err));
		err->code = DTPLAN_ERR_RANGE;
		snprintf(err->source, sizeof(err->source), "store");
		snprintf(err->text, sizeof(err->text),
			 "a body of %lld bytes is larger than the %lld bytes this poster may keep",
			 body, budget);
	}
	return DTPLAN_ERR_RANGE;
}

static enum dtplan_err fail(struct dtplan_error *err, enum dtplan_err code, sqlite3 *db,
			    const char *what)
{
	if (err != NULL) {
		memset(err, 0, sizeof(*err));
		err->code = code;
		snprintf(err->source, sizeof(err->source), "store");
		snprintf(err->text, sizeof(err->text), "%s: %s", what,
			 db != NULL ? sqlite3_errmsg(db) : "out of memory");
	}
	return code;
}

/* ------------------------------------------------------------------------
 * Documents
 * ---------------------------------------------------------------------- */

const char *serve_reason_name(enum serve_reason r)
{
	switch (r) {
	case SERVE_MALFORMED:
		return "malformed";
	case SERVE_SCHEMA:
		return "schema";
	case SERVE_OVERSIZED:
		return "oversized";
	case SERVE_RATE_LIMITED:
		return "rate";
	case SERVE_UNAUTHENTICATED:
		return "unauthenticated";
	case SERVE_FORGED:
		return "forged";
	case SERVE_REPLAYED:
		return "replayed";
	case SERVE_EXPIRED:
		return "expired";
	case SERVE_USER:
		return "user";
	case SERVE_MUNGE:
		return "munge";
	case SERVE_STORAGE:
		return "storage";
	case SERVE_RANGE:
		return "range";
	case SERVE_BUDGET:
		return "budget";
	case SERVE_N_REASONS:
		break;
	}
	return "?";
}

const char *serve_kind_name(enum dtplan_posted_kind k)
{
	switch (k) {
	case DTPLAN_POSTED_REPORT:
		return "plan";
	case DTPLAN_POSTED_OBSERVATION:
		return "observation";
	case DTPLAN_POSTED_MEASUREMENT:
		return "measurement";
	case DTPLAN_POSTED__LAST:
		break;
	}
	return "?";
}

/* ------------------------------------------------------------------------
 * Opening
 * ---------------------------------------------------------------------- */

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

enum dtplan_err serve_store_open(const char *path, long keep_reports, double keep_days,
				 struct serve_store **out, struct dtplan_error *err)
{
	struct serve_store *st = calloc(1, sizeof(*st));
	char *sql = NULL;
	enum dtplan_err rv;
	int v;

	*out = NULL;
	if (st == NULL)
		return fail(err, DTPLAN_ERR_NOMEM, NULL, path);
	pthread_mutex_init(&st->lock, NULL);
	st->keep_reports = keep_reports;
	st->keep_days = keep_days;
	if (sqlite3_open_v2(path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		rv = fail(err, DTPLAN_ERR_IO, st->db, path);
		goto out;
	}
	/* a busy reader (sqlite3 on the same file) delays a write, briefly */
	sqlite3_busy_timeout(st->db, 2000);
	if (sqlite3_exec(st->db,
			 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 " PRAGMA foreign_keys=ON;",
			 NULL, NULL, NULL) != SQLITE_OK) {
		rv = fail(err, DTPLAN_ERR_IO, st->db, path);
		goto out;
	}
	v = user_version(st->db);
	if (v < 0) {
		rv = fail(err, DTPLAN_ERR_IO, st->db, path);
		goto out;
	}
	if (v > SERVE_SCHEMA_VERSION) {
		rv = DTPLAN_ERR_UNSUPPORTED;
		if (err != NULL) {
			memset(err, 0, sizeof(*err));
			err->code = rv;
			snprintf(err->source, sizeof(err->source), "%s", path);
			snprintf(err->text, sizeof(err->text),
				 "store schema %d is newer than this dtplan's (%d)", v,
				 SERVE_SCHEMA_VERSION);
		}
		goto out;
	}
	if (v < SERVE_SCHEMA_VERSION) {
		/* a version-1 store's reports came from root or their user: root's */
		if (asprintf(&sql, "BEGIN; %s %s %s %s PRAGMA user_version=%d; COMMIT;",
			     v < 1 ? schema_sql : "", v < 2 ? schema2_sql : "",
			     v < 3 ? schema3_sql : "", schema4_sql, SERVE_SCHEMA_VERSION) < 0) {
			sql = NULL;
			rv = fail(err, DTPLAN_ERR_NOMEM, NULL, path);
			goto out;
		}
		if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			rv = fail(err, DTPLAN_ERR_IO, st->db, path);
			goto out;
		}
	}
	rv = DTPLAN_OK;
	*out = st;
	st = NULL;
out:
	free(sql);
	serve_store_close(st);
	return rv;
}

void serve_store_close(struct serve_store *st)
{
	if (st == NULL)
		return;
	sqlite3_close(st->db);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

int serve_store_cred_remember(struct serve_store *st, const char *id, long long expires,
			      long long now)
{
	sqlite3_stmt *s = NULL;
	int rc = -1, step;

	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO credentials (id, expires) VALUES (?1, ?2)"
			       " ON CONFLICT (id) DO NOTHING",
			       -1, &s, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, expires > now ? expires : now);
	step = sqlite3_step(s);
	if (step == SQLITE_DONE)
		rc = sqlite3_changes(st->db) == 1 ? 1 : 0;
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* Binds v (a JSON string, number or null) to parameter i. */
static void bind_json(sqlite3_stmt *s, int i, json_t *v)
{
	if (json_is_string(v))
		sqlite3_bind_text(s, i, json_string_value(v), -1, SQLITE_TRANSIENT);
	else if (json_is_integer(v))
		sqlite3_bind_int64(s, i, (sqlite3_int64)json_integer_value(v));
	else if (json_is_number(v) && isfinite(json_number_value(v)))
		sqlite3_bind_double(s, i, json_number_value(v));
	else
		sqlite3_bind_null(s, i);
}

/* Runs sql with the parameters bound from vals (n of them). */
static bool run(sqlite3 *db, const char *sql, json_t *const *vals, int n, long long id)
{
	sqlite3_stmt *s = NULL;
	bool ok;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(s, 1, id);
	for (int i = 0; i < n; i++)
		bind_json(s, i + 2, vals[i]);
	ok = sqlite3_step(s) == SQLITE_DONE;
	sqlite3_finalize(s);
	return ok;
}

#define RUN(db, sql, id, ...)                                                                      \
	run((db), (sql), (json_t *const[]){__VA_ARGS__},                                           \
	    (int)(sizeof((json_t *const[]){__VA_ARGS__}) / sizeof(json_t *)), (id))

static json_t *get(json_t *o, const char *k)
{
	return json_object_get(o, k);
}

/* Bandwidth below DTPLAN_STRAGGLER_FRACTION of its tier's: the straggler
 * rule of lib/measure, applied to one link. */
static json_t *slow_of(json_t *link, json_t *tiers)
{
	json_t *bw = get(link, "bandwidth_bytes_per_s");
	const char *tier = json_string_value(get(link, "tier"));
	json_t *tbw = get(get(tiers, tier != NULL ? tier : ""), "bandwidth_bytes_per_s");

	if (json_is_false(get(link, "ok")))
		return json_integer(1);
	if (!json_is_number(bw) || !json_is_number(tbw) || !(json_number_value(tbw) > 0))
		return json_integer(0);
	return json_integer(json_number_value(bw) <
			    DTPLAN_STRAGGLER_FRACTION * json_number_value(tbw));
}

/* Microseconds (JSON) to seconds (stored). */
static json_t *us_to_s(json_t *v)
{
	return json_is_number(v) ? json_real(json_number_value(v) / 1e6) : json_null();
}

/* The measurements' rows: tiers, links, uplinks, stragglers. */
static bool add_measurements(sqlite3 *db, long long id, json_t *m)
{
	json_t *tiers = get(m, "tiers"), *v, *tmp[3];
	const char *key;
	size_t i;
	bool ok = true;

	if (!json_is_object(m))
		return true;
	json_object_foreach(tiers, key, v)
	{
		json_t *name = json_string(key);

		if (!json_is_object(v) || !json_is_true(get(v, "measured"))) {
			json_decref(name);
			continue;
		}
		tmp[0] = us_to_s(get(v, "latency_us"));
		ok = ok && RUN(db,
			       "INSERT INTO tiers (report_id, tier, bandwidth, latency_s)"
			       " VALUES (?1, ?2, ?3, ?4)",
			       id, name, get(v, "bandwidth_bytes_per_s"), tmp[0]);
		json_decref(name);
		json_decref(tmp[0]);
	}
	json_array_foreach(get(m, "links"), i, v)
	{
		json_t *a = get(v, "a"), *b = get(v, "b");

		if (!json_is_string(a) || !json_is_string(b) || !json_is_string(get(v, "tier")))
			continue;
		/* one name per pair: the smaller node first */
		if (strcmp(json_string_value(a), json_string_value(b)) > 0) {
			json_t *t = a;

			a = b;
			b = t;
		}
		tmp[0] = us_to_s(get(v, "latency_us"));
		tmp[1] = slow_of(v, tiers);
		ok = ok &&
		     RUN(db,
			 "INSERT INTO links (report_id, a, b, tier, bandwidth, latency_s, slow)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
			 id, a, b, get(v, "tier"), get(v, "bandwidth_bytes_per_s"), tmp[0], tmp[1]);
		json_decref(tmp[0]);
		json_decref(tmp[1]);
	}
	json_array_foreach(get(m, "uplinks"), i, v)
	{
		if (!json_is_string(get(v, "switch")))
			continue;
		tmp[0] = json_integer(json_is_true(get(v, "saturated")));
		ok = ok &&
		     RUN(db,
			 "INSERT INTO uplinks (report_id, switch, oversubscription, configured,"
			 " bandwidth, saturated) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
			 id, get(v, "switch"), get(v, "oversubscription"), get(v, "configured"),
			 get(v, "aggregate_bytes_per_s"), tmp[0]);
		json_decref(tmp[0]);
	}
	json_array_foreach(get(m, "stragglers"), i, v)
	{
		if (json_is_string(get(v, "node")))
			ok = ok &&
			     RUN(db, "INSERT INTO stragglers (report_id, node) VALUES (?1, ?2)", id,
				 get(v, "node"));
	}
	return ok;
}

/* The plan's nodes under its leaves: placement.nodes are in topology
 * order, placement.leaves name the leaves with their counts. */
static bool add_leaves(sqlite3 *db, long long id, json_t *placement)
{
	json_t *nodes = get(placement, "nodes"), *leaf;
	size_t next = 0, i;
	bool ok = true;

	json_array_foreach(get(placement, "leaves"), i, leaf)
	{
		json_int_t n = json_integer_value(get(leaf, "nodes"));

		if (!json_is_string(get(leaf, "name")))
			continue;
		for (json_int_t k = 0; k < n && next < json_array_size(nodes); k++, next++)
			if (json_is_string(json_array_get(nodes, next)))
				ok = ok && RUN(db,
					       "INSERT INTO node_leaf (report_id, node, leaf)"
					       " VALUES (?1, ?2, ?3)",
					       id, json_array_get(nodes, next), get(leaf, "name"));
	}
	return ok;
}

/* A plan's warnings, and its fabric rows when root (trusted) posted it. */
static bool add_plan(sqlite3 *db, long long id, json_t *doc, bool trusted)
{
	json_t *plan = get(doc, "plan"), *w;
	size_t i;
	bool ok = true;

	json_array_foreach(get(doc, "warnings"), i, w)
	{
		if (json_is_string(get(w, "code")))
			ok = ok && RUN(db, "INSERT INTO warnings (report_id, code) VALUES (?1, ?2)",
				       id, get(w, "code"));
	}
	if (!json_is_object(plan) || !trusted)
		return ok;
	return ok && add_measurements(db, id, get(plan, "measurements")) &&
	       add_leaves(db, id, get(plan, "placement"));
}

static bool add_observation(sqlite3 *db, long long id, json_t *d)
{
	return RUN(
		db,
		"INSERT INTO observations (report_id, job_id, user, cluster, fingerprint, gpu,"
		" model, framework, predicted_s, measured_s, spread_s, steps, checkpoint_s, time)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
		id, get(d, "job_id"), get(d, "user"), get(d, "cluster"), get(d, "fingerprint"),
		get(d, "gpu"), get(d, "model"), get(d, "framework"), get(d, "predicted_step_s"),
		get(d, "measured_step_s"), get(d, "measured_step_spread_s"), get(d, "steps"),
		get(d, "checkpoint_s"), get(d, "time"));
}

/* One number from sql with ?1 bound to a; -1 when it fails. */
static long long number(sqlite3 *db, const char *sql, long long a)
{
	sqlite3_stmt *s = NULL;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, a);
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	return v;
}

/* Deletes the oldest reports (of poster, or of all when poster < 0) until
 * used + more fits budget; false when the store fails.  Each step removes
 * one report, found through an index: a poster over its budget loses its
 * own reports, never another's. */
static bool make_room(sqlite3 *db, long long poster, long long used, long long more,
		      long long budget)
{
	while (used > 0 && used + more > budget) {
		long long id =
			poster >= 0 ? number(db,
					     "SELECT id FROM reports WHERE poster = ?1 ORDER BY id"
					     " LIMIT 1",
					     poster)
				    : number(db, "SELECT MIN(id) FROM reports WHERE ?1 = ?1", 0);
		long long b = number(db, "SELECT bytes FROM reports WHERE id = ?1", id);

		if (id <= 0 || b < 0 ||
		    number(db, "DELETE FROM reports WHERE id = ?1 RETURNING 0", id) < 0)
			return id <= 0; /* nothing left: it fits */
		used -= b;
	}
	return true;
}

/* The budget, before an insert of more bytes from poster: its own oldest
 * reports go first, then everybody's. */
static enum dtplan_err budget(struct serve_store *st, long long poster, long long more,
			      struct dtplan_error *err)
{
	long long mine, all;

	if (poster != 0 && st->max_user_bytes > 0) {
		if (more > st->max_user_bytes)
			return over_budget(err, more, st->max_user_bytes);
		mine = number(st->db,
			      "SELECT COALESCE(SUM(bytes), 0) FROM reports WHERE poster = ?1",
			      poster);
		if (mine < 0 || !make_room(st->db, poster, mine, more, st->max_user_bytes))
			return fail(err, DTPLAN_ERR_IO, st->db, "cannot make room");
	}
	if (st->max_bytes > 0) {
		if (more > st->max_bytes)
			return over_budget(err, more, st->max_bytes);
		all = number(st->db, "SELECT COALESCE(SUM(bytes), 0) FROM reports WHERE ?1 = ?1",
			     0);
		if (all < 0 || !make_room(st->db, -1, all, more, st->max_bytes))
			return fail(err, DTPLAN_ERR_IO, st->db, "cannot make room");
	}
	return DTPLAN_OK;
}

/* Retention: the oldest reports past keep_reports, and those past keep_days;
 * credentials past their time. */
static bool prune(struct serve_store *st, long long now)
{
	sqlite3_stmt *s = NULL;
	bool ok = false;

	if (sqlite3_prepare_v2(st->db,
			       "DELETE FROM reports WHERE received < ?1 OR id <= (SELECT MAX(id)"
			       " FROM reports) - ?2",
			       -1, &s, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(s, 1, now - (sqlite3_int64)(st->keep_days * 86400.0));
	/* before an insert: room for it */
	sqlite3_bind_int64(s, 2, st->keep_reports - 1);
	ok = sqlite3_step(s) == SQLITE_DONE;
	sqlite3_finalize(s);
	if (!ok || sqlite3_prepare_v2(st->db, "DELETE FROM credentials WHERE expires < ?1", -1, &s,
				      NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(s, 1, now);
	ok = sqlite3_step(s) == SQLITE_DONE;
	sqlite3_finalize(s);
	return ok;
}

/* ------------------------------------------------------------------------
 * Counters
 * ---------------------------------------------------------------------- */

/* The upper bounds of dtplan_step_ratio's buckets (measured / planned). */
const double serve_ratio_buckets[SERVE_RATIO_BUCKETS] = {0.5,  0.8, 0.9,  0.95, 1.0,
							 1.05, 1.1, 1.25, 1.5,  2.0};

/* Adds delta to counter name{label} (set: makes it at least delta). */
static bool bump(sqlite3 *db, const char *name, const char *label, double delta, bool set)
{
	sqlite3_stmt *s = NULL;
	bool ok;

	ok = sqlite3_prepare_v2(db,
				set ? "INSERT INTO counters VALUES (?1, ?2, ?3) ON CONFLICT DO"
				      " UPDATE SET value = MAX(value, excluded.value)"
				    : "INSERT INTO counters VALUES (?1, ?2, ?3) ON CONFLICT DO"
				      " UPDATE SET value = value + excluded.value",
				-1, &s, NULL) == SQLITE_OK;
	if (ok) {
		sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, label != NULL ? label : "?", -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(s, 3, delta);
		ok = sqlite3_step(s) == SQLITE_DONE;
	}
	sqlite3_finalize(s);
	return ok;
}

bool serve_warning_known(const char *code)
{
	const char *c;

	for (size_t i = 0; code != NULL && (c = dtplan_warning_code_at(i)) != NULL; i++)
		if (strcmp(c, code) == 0)
			return true;
	return false;
}

/* The counters of a report kept: its kind, a plan's state and warnings, an
 * observation's measured / planned step in the histogram, its time. */
static bool count_report(sqlite3 *db, enum dtplan_posted_kind k, json_t *doc, bool degraded,
			 long long now)
{
	const char *state = json_string_value(get(doc, "state"));
	bool ok = bump(db, "stored", serve_kind_name(k), 1, false) &&
		  bump(db, "last_report", "", (double)now, true);
	size_t i;
	json_t *w;

	if (ok && k == DTPLAN_POSTED_REPORT) {
		/* the states a plugin writes; anything else one label, so that a
		 * poster cannot make series of its own */
		ok = bump(db, "plans",
			  state != NULL && (strcmp(state, "ok") == 0 ||
					    strcmp(state, "degraded") == 0 ||
					    strcmp(state, "refused") == 0)
				  ? state
				  : "other",
			  1, false) &&
		     (!degraded || bump(db, "plans_degraded", "", 1, false));
		json_array_foreach(get(doc, "warnings"), i, w)
		{
			const char *code = json_string_value(get(w, "code"));

			if (code != NULL && !serve_warning_known(code))
				code = "other";
			if (ok && code != NULL)
				ok = bump(db, "plan_warnings", code, 1, false) &&
				     (state == NULL || strcmp(state, "refused") != 0 ||
				      bump(db, "plan_refusals", code, 1, false));
		}
	}
	if (ok && k == DTPLAN_POSTED_OBSERVATION) {
		double p = json_number_value(get(doc, "predicted_step_s")),
		       m = json_number_value(get(doc, "measured_step_s")), r = m / p;
		char le[32];

		if (json_is_number(get(doc, "predicted_step_s")) &&
		    json_is_number(get(doc, "measured_step_s")) && p > 0 && isfinite(r)) {
			ok = bump(db, "step_ratio_count", "", 1, false) &&
			     bump(db, "step_ratio_sum", "", r, false);
			for (int b = 0; ok && b < SERVE_RATIO_BUCKETS; b++) {
				if (r > serve_ratio_buckets[b])
					continue;
				snprintf(le, sizeof(le), "%g", serve_ratio_buckets[b]);
				ok = bump(db, "step_ratio_bucket", le, 1, false);
			}
		}
	}
	return ok;
}

bool serve_store_count(struct serve_store *st, const char *name, const unsigned long long *delta,
		       int n, const char *(*label)(int))
{
	bool ok;

	pthread_mutex_lock(&st->lock);
	ok = sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
	for (int i = 0; ok && i < n; i++)
		ok = delta[i] == 0 || bump(st->db, name, label(i), (double)delta[i], false);
	if (ok && sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
		ok = true;
	else {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		ok = false;
	}
	pthread_mutex_unlock(&st->lock);
	return ok;
}

bool serve_store_ping(struct serve_store *st, char *why, size_t size)
{
	struct timespec until;
	sqlite3_stmt *s = NULL;
	bool ok;
	int rc;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SERVE_HEALTH_TIMEOUT_S;
	rc = pthread_mutex_timedlock(&st->lock, &until);
	if (rc != 0) {
		snprintf(why, size, "the store is busy (its lock not had in %d s)",
			 SERVE_HEALTH_TIMEOUT_S);
		return false;
	}
	ok = sqlite3_prepare_v2(st->db, "SELECT COUNT(*) FROM counters", -1, &s, NULL) ==
		     SQLITE_OK &&
	     sqlite3_step(s) == SQLITE_ROW;
	if (!ok)
		snprintf(why, size, "the store does not answer: %s", sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return ok;
}

enum dtplan_err serve_store_add(struct serve_store *st, enum dtplan_posted_kind k, json_t *doc,
				const char *body, long long poster, long long now, long long *id,
				struct dtplan_error *err)
{
	json_t *plan = get(doc, "plan"), *kind = json_string(serve_kind_name(k)), *deg;
	enum dtplan_err rv = DTPLAN_OK;
	long long bytes = (long long)strlen(body);
	bool ok;

	*id = 0;
	pthread_mutex_lock(&st->lock);
	deg = json_integer(json_is_true(get(plan, "degraded")) ||
			   json_is_true(get(doc, "degraded")));
	sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL);
	/* retention first, so that what is over its time or count never
	 * blocks an insert; then the budget */
	if (!prune(st, now)) {
		rv = fail(err, DTPLAN_ERR_IO, st->db, "cannot keep the report");
		goto undo;
	}
	rv = budget(st, poster, bytes, err);
	if (rv != DTPLAN_OK)
		goto undo;
	{
		sqlite3_stmt *s = NULL;

		ok = sqlite3_prepare_v2(
			     st->db,
			     "INSERT INTO reports (received, kind, cluster, job_id, user,"
			     " uid, sender, state, degraded, nodes, step_s, body, poster, bytes)"
			     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
			     "?14)",
			     -1, &s, NULL) == SQLITE_OK;
		if (ok) {
			sqlite3_bind_int64(s, 1, now);
			bind_json(s, 2, kind);
			bind_json(s, 3, get(doc, "cluster"));
			bind_json(s, 4, get(doc, "job_id"));
			bind_json(s, 5, get(doc, "user"));
			bind_json(s, 6, get(doc, "uid"));
			bind_json(s, 7, get(doc, "sender"));
			bind_json(s, 8, get(doc, "state"));
			bind_json(s, 9, deg);
			bind_json(s, 10, get(doc, "nodes"));
			bind_json(s, 11, get(plan, "step_seconds"));
			sqlite3_bind_text(s, 12, body, -1, SQLITE_STATIC);
			sqlite3_bind_int64(s, 13, poster);
			sqlite3_bind_int64(s, 14, bytes);
			ok = sqlite3_step(s) == SQLITE_DONE;
		}
		sqlite3_finalize(s);
	}
	*id = sqlite3_last_insert_rowid(st->db);
	if (ok && k == DTPLAN_POSTED_REPORT)
		ok = add_plan(st->db, *id, doc, poster == 0);
	else if (ok && k == DTPLAN_POSTED_OBSERVATION)
		ok = add_observation(st->db, *id, doc);
	else if (ok && k == DTPLAN_POSTED_MEASUREMENT && poster == 0)
		ok = add_measurements(st->db, *id, get(doc, "measurements"));
	ok = ok && count_report(st->db, k, doc, json_integer_value(deg) != 0, now);
	if (ok && sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
		goto done;
	rv = fail(err, DTPLAN_ERR_IO, st->db, "cannot keep the report");
undo:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	*id = 0;
done:
	pthread_mutex_unlock(&st->lock);
	json_decref(kind);
	json_decref(deg);
	return rv;
}
