/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * recdb.c: the record database, one SQLite file (libsqlite3).
 *
 * Concurrent jobs of one user may end together: every writer opens the file
 * in WAL mode and waits at most DTPLAN_RECDB_BUSY_MS for another's lock;
 * one record is one INSERT in its own transaction, so a job killed halfway
 * leaves the file whole.  Nothing here retries: a job's end is never
 * delayed beyond that wait.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dtplan_recdb {
	sqlite3 *db;
	char path[4096];
	bool no_etp; /* a version-1 file opened read-only: no etp column */
};

static const char schema_v1[] =
	"CREATE TABLE records ("
	" cluster TEXT NOT NULL, job_id INTEGER NOT NULL, time INTEGER NOT NULL,"
	" user TEXT NOT NULL, fingerprint TEXT NOT NULL, gpu TEXT NOT NULL,"
	" model TEXT NOT NULL, framework TEXT NOT NULL, precision TEXT NOT NULL,"
	" shape_class TEXT NOT NULL, recompute TEXT NOT NULL,"
	" tp INTEGER, pp INTEGER, dp INTEGER, cp INTEGER, ep INTEGER, vp INTEGER,"
	" zero INTEGER, micro_batch INTEGER,"
	" predicted_step_s REAL NOT NULL, model_step_s REAL NOT NULL,"
	" measured_step_s REAL NOT NULL, measured_spread_s REAL NOT NULL,"
	" steps INTEGER NOT NULL, checkpoint_s REAL,"
	" PRIMARY KEY (cluster, job_id));"
	"CREATE INDEX records_key ON records (cluster, gpu, framework, shape_class);";

/* Version 1 to 2: the experts' tensor parallelism (NULL: TP's) */
static const char schema_v2_up[] = "ALTER TABLE records ADD COLUMN etp INTEGER;";

enum dtplan_err dtplan_recdb_default_path(const char *xdg_state_home, const char *home, char *buf,
					  size_t size, struct dtplan_error *err)
{
	int n;

	if (xdg_state_home != NULL && xdg_state_home[0] == '/')
		n = snprintf(buf, size, "%s/dtplan/records.db", xdg_state_home);
	else if (home != NULL && home[0] == '/')
		n = snprintf(buf, size, "%s/.local/state/dtplan/records.db", home);
	else
		return dtplan__error(err, DTPLAN_ERR_INVAL, "RecordDB", 0,
				     "no record database: neither XDG_STATE_HOME nor HOME is an "
				     "absolute path");
	if (n < 0 || (size_t)n >= size)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "RecordDB", 0,
				     "record database path too long");
	return DTPLAN_OK;
}

/* The folders above path, made 0700 where missing. */
static enum dtplan_err make_parents(const char *path, struct dtplan_error *err)
{
	char dir[4096];

	if (dtplan__strlcpy(dir, path, sizeof(dir)) >= sizeof(dir))
		return dtplan__error(err, DTPLAN_ERR_RANGE, path, 0, "path too long");
	for (char *s = dir + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot create %s: %s",
					     dir, strerror(errno));
		*s = '/';
	}
	return DTPLAN_OK;
}

/* What stands at path may be opened: a regular file of ours that no one
 * else may write, not a link.  ENOENT leaves *exists false. */
static enum dtplan_err check_file(const char *path, bool *exists, struct dtplan_error *err)
{
	struct stat st;

	*exists = false;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return DTPLAN_OK;
		return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot read: %s",
				     strerror(errno));
	}
	*exists = true;
	if (S_ISLNK(st.st_mode))
		return dtplan__error(err, DTPLAN_ERR_IO, path, 0,
				     "refused: a symbolic link, never followed");
	if (!S_ISREG(st.st_mode))
		return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "refused: not a regular file");
	if (st.st_uid != geteuid())
		return dtplan__error(err, DTPLAN_ERR_POLICY, path, 0,
				     "refused: owned by uid %u, not by this user (uid %u)",
				     (unsigned)st.st_uid, (unsigned)geteuid());
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		return dtplan__error(err, DTPLAN_ERR_POLICY, path, 0,
				     "refused: writable by others (mode %03o)",
				     (unsigned)(st.st_mode & 0777));
	return DTPLAN_OK;
}

/* An SQLite failure as a dtplan error: the lock, a damaged file or the rest. */
static enum dtplan_err sql_error(sqlite3 *db, int rc, const char *path, const char *what,
				 struct dtplan_error *err)
{
	const char *msg = db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return dtplan__error(err, DTPLAN_ERR_TIMEOUT, path, 0,
				     "%s: locked by another writer for more than %d ms", what,
				     DTPLAN_RECDB_BUSY_MS);
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				     "%s: not an SQLite database or damaged: %s", what, msg);
	case SQLITE_NOMEM:
		return dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "out of memory");
	default:
		return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "%s: %s", what, msg);
	}
}

static enum dtplan_err pragma_int(struct dtplan_recdb *d, const char *sql, long *v,
				  struct dtplan_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(d->db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = (long)sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? DTPLAN_OK : sql_error(d->db, rc, d->path, "reading", err);
}

/* A version-1 file, writable: upgraded to 2 in one transaction (another
 * job may have done it meanwhile). */
static enum dtplan_err upgrade(struct dtplan_recdb *d, struct dtplan_error *err)
{
	enum dtplan_err ret;
	long version = 0;
	char sql[64];
	int rc;

	rc = sqlite3_exec(d->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sql_error(d->db, rc, d->path, "upgrading the schema", err);
	if ((ret = pragma_int(d, "PRAGMA user_version", &version, err)) != DTPLAN_OK) {
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
		return ret;
	}
	if (version == 1) {
		rc = sqlite3_exec(d->db, schema_v2_up, NULL, NULL, NULL);
		if (rc == SQLITE_OK) {
			snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", DTPLAN_RECDB_SCHEMA);
			rc = sqlite3_exec(d->db, sql, NULL, NULL, NULL);
		}
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
		return sql_error(d->db, rc, d->path, "upgrading the schema", err);
	}
	return DTPLAN_OK;
}

/* The schema: made in a fresh file, checked in any other. */
static enum dtplan_err schema(struct dtplan_recdb *d, bool writable, struct dtplan_error *err)
{
	enum dtplan_err ret;
	long app = 0, version = 0, tables = 0;
	char sql[256];
	int rc;

	if ((ret = pragma_int(d, "PRAGMA application_id", &app, err)) != DTPLAN_OK ||
	    (ret = pragma_int(d, "PRAGMA user_version", &version, err)) != DTPLAN_OK ||
	    (ret = pragma_int(d, "SELECT count(*) FROM sqlite_master", &tables, err)) != DTPLAN_OK)
		return ret;
	if (app == 0 && version == 0 && tables == 0) {
		if (!writable)
			return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, d->path, 0,
					     "no records yet (an empty database)");
		rc = sqlite3_exec(d->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if (rc == SQLITE_OK) {
			/* another job may have made it meanwhile */
			if ((ret = pragma_int(d, "PRAGMA user_version", &version, err)) !=
			    DTPLAN_OK) {
				sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
				return ret;
			}
			if (version == 0)
				rc = sqlite3_exec(d->db, schema_v1, NULL, NULL, NULL);
			if (rc == SQLITE_OK && version == 0)
				rc = sqlite3_exec(d->db, schema_v2_up, NULL, NULL, NULL);
			if (rc == SQLITE_OK && version == 0) {
				snprintf(sql, sizeof(sql),
					 "PRAGMA application_id = %d; PRAGMA user_version = %d",
					 DTPLAN_RECDB_APPLICATION_ID, DTPLAN_RECDB_SCHEMA);
				rc = sqlite3_exec(d->db, sql, NULL, NULL, NULL);
			}
			if (rc == SQLITE_OK)
				rc = sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL);
			if (rc != SQLITE_OK)
				sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
		}
		if (rc != SQLITE_OK)
			return sql_error(d->db, rc, d->path, "creating the schema", err);
		return DTPLAN_OK;
	}
	if (app != DTPLAN_RECDB_APPLICATION_ID)
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, d->path, 0,
				     "refused: another application's database (application_id "
				     "%#lx, dtplan's is %#x)",
				     (unsigned long)app, DTPLAN_RECDB_APPLICATION_ID);
	if (version == 1 && writable)
		return upgrade(d, err);
	d->no_etp = version == 1;
	if (version != DTPLAN_RECDB_SCHEMA && version != 1)
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, d->path, 0,
				     "refused: schema version %ld, this dtplan reads %d", version,
				     DTPLAN_RECDB_SCHEMA);
	return DTPLAN_OK;
}

enum dtplan_err dtplan_recdb_open(const char *path, bool writable, struct dtplan_recdb **out,
				  struct dtplan_error *err)
{
	struct dtplan_recdb *d = NULL;
	enum dtplan_err rv, ret;
	bool exists;
	int rc, flags = SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX;

	*out = NULL;
	if (path == NULL || path[0] == '\0') {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "RecordDB", 0, "empty path");
		goto out;
	}
	if ((ret = check_file(path, &exists, err)) != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	if (!exists && !writable) {
		rv = dtplan__error(err, DTPLAN_ERR_NOT_FOUND, path, 0, "no records yet");
		goto out;
	}
	if (!exists && (ret = make_parents(path, err)) != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	dtplan__strlcpy(d->path, path, sizeof(d->path));
	flags |= writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
	rc = sqlite3_open_v2(path, &d->db, flags, NULL);
	if (rc != SQLITE_OK) {
		rv = sql_error(d->db, rc, path, "cannot open", err);
		goto out;
	}
	if (!exists && chmod(path, 0600) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot chmod: %s",
				   strerror(errno));
		goto out;
	}
	/* it may have been swapped for something else since the check */
	if ((ret = check_file(path, &exists, err)) != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	sqlite3_busy_timeout(d->db, DTPLAN_RECDB_BUSY_MS);
	if (writable && (rc = sqlite3_exec(d->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL)) !=
				SQLITE_OK) {
		rv = sql_error(d->db, rc, path, "cannot use WAL", err);
		goto out;
	}
	if ((ret = schema(d, writable, err)) != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	*out = d;
	d = NULL;
	rv = DTPLAN_OK;
out:
	dtplan_recdb_close(d);
	return rv;
}

void dtplan_recdb_close(struct dtplan_recdb *db)
{
	if (db == NULL)
		return;
	sqlite3_close(db->db);
	free(db);
}

static bool finite_pos(double v)
{
	return isfinite(v) && v > 0.0;
}

enum dtplan_err dtplan_recdb_add(struct dtplan_recdb *db, const struct dtplan_record *r,
				 struct dtplan_error *err)
{
	static const char sql[] =
		"INSERT OR REPLACE INTO records (cluster, job_id, time, user, fingerprint, gpu, "
		"model, framework, precision, shape_class, recompute, tp, pp, dp, cp, ep, vp, "
		"zero, "
		"micro_batch, predicted_step_s, model_step_s, measured_step_s, measured_spread_s, "
		"steps, checkpoint_s, etp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
		"?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)";
	const char *texts[] = {r->cluster,
			       r->user,
			       r->fingerprint,
			       r->gpu,
			       r->model,
			       r->framework,
			       r->precision,
			       r->shape_class,
			       dtplan_recompute_name((enum dtplan_recompute)r->recompute)};
	const int text_at[] = {1, 4, 5, 6, 7, 8, 9, 10, 11};
	const int ints[] = {r->tp, r->pp, r->dp, r->cp, r->ep, r->vp, r->zero, r->micro_batch};
	sqlite3_stmt *st = NULL;
	enum dtplan_err rv;
	int rc;

	if (!finite_pos(r->measured_step_s) || !finite_pos(r->model_step_s) ||
	    !finite_pos(r->predicted_step_s) || !isfinite(r->measured_spread_s) ||
	    r->measured_spread_s < 0.0 || r->steps < 1 ||
	    (!isnan(r->checkpoint_s) && !finite_pos(r->checkpoint_s))) {
		rv = dtplan__error(err, DTPLAN_ERR_RANGE, db->path, 0,
				   "record of job %lld refused: a step time or count is not a "
				   "positive finite number",
				   (long long)r->job_id);
		goto out;
	}
	rc = sqlite3_prepare_v2(db->db, sql, -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < DTPLAN_ARRAY_SIZE(texts); i++)
		rc = sqlite3_bind_text(st, text_at[i], texts[i], -1, SQLITE_TRANSIENT);
	for (size_t i = 0; rc == SQLITE_OK && i < DTPLAN_ARRAY_SIZE(ints); i++)
		rc = sqlite3_bind_int(st, 12 + (int)i, ints[i]);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, r->job_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, r->time);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_double(st, 20, r->predicted_step_s);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_double(st, 21, r->model_step_s);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_double(st, 22, r->measured_step_s);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_double(st, 23, r->measured_spread_s);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 24, r->steps);
	if (rc == SQLITE_OK)
		rc = isnan(r->checkpoint_s) ? sqlite3_bind_null(st, 25)
					    : sqlite3_bind_double(st, 25, r->checkpoint_s);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 26, r->etp > 0 ? r->etp : r->tp);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_DONE)
		rc = SQLITE_OK;
	rv = rc == SQLITE_OK ? DTPLAN_OK : sql_error(db->db, rc, db->path, "cannot store", err);
out:
	sqlite3_finalize(st);
	return rv;
}

static void col_text(sqlite3_stmt *st, int i, char *buf, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	dtplan__strlcpy(buf, t != NULL ? (const char *)t : "", size);
}

/* One row into r, its split by the rules every chosen split meets
 * (lib/model/rules.c): a row written by hand or by another program is told
 * with its job. */
static enum dtplan_err read_row(sqlite3_stmt *st, const char *path, struct dtplan_record *r,
				struct dtplan_error *err)
{
	enum dtplan_recompute rc;
	char name[16], where[160];

	memset(r, 0, sizeof(*r));
	col_text(st, 0, r->cluster, sizeof(r->cluster));
	r->job_id = sqlite3_column_int64(st, 1);
	r->time = sqlite3_column_int64(st, 2);
	col_text(st, 3, r->user, sizeof(r->user));
	col_text(st, 4, r->fingerprint, sizeof(r->fingerprint));
	col_text(st, 5, r->gpu, sizeof(r->gpu));
	col_text(st, 6, r->model, sizeof(r->model));
	col_text(st, 7, r->framework, sizeof(r->framework));
	col_text(st, 8, r->precision, sizeof(r->precision));
	col_text(st, 9, r->shape_class, sizeof(r->shape_class));
	col_text(st, 10, name, sizeof(name));
	r->tp = sqlite3_column_int(st, 11);
	r->pp = sqlite3_column_int(st, 12);
	r->dp = sqlite3_column_int(st, 13);
	r->cp = sqlite3_column_int(st, 14);
	r->ep = sqlite3_column_int(st, 15);
	/* NULL (a version-1 record): Megatron-LM's default, TP's */
	r->etp = sqlite3_column_type(st, 25) == SQLITE_NULL ? r->tp : sqlite3_column_int(st, 25);
	r->vp = sqlite3_column_int(st, 16);
	r->zero = sqlite3_column_int(st, 17);
	r->micro_batch = sqlite3_column_int(st, 18);
	r->predicted_step_s = sqlite3_column_double(st, 19);
	r->model_step_s = sqlite3_column_double(st, 20);
	r->measured_step_s = sqlite3_column_double(st, 21);
	r->measured_spread_s = sqlite3_column_double(st, 22);
	r->steps = sqlite3_column_int64(st, 23);
	r->checkpoint_s =
		sqlite3_column_type(st, 24) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 24);
	snprintf(where, sizeof(where), "the record of job %lld on cluster '%s'",
		 (long long)r->job_id, r->cluster);
	if (dtplan_recompute_parse(name, &rc, NULL) != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				     "%s: recomputation '%s' unknown", where, name);
	r->recompute = (int)rc;
	/* the schedule is not recorded: DualPipe's rule (an even PP) is the
	 * planner's, not the record's */
	return dtplan__split_check_read(&r->split, DTPLAN_SCHEDULE_1F1B, DTPLAN_ERR_PARSE, path,
					where, err);
}

enum dtplan_err dtplan_recdb_list(struct dtplan_recdb *db, const char *cluster,
				  struct dtplan_record **out, size_t *n, struct dtplan_error *err)
{
	/* a version-1 file read-only has no etp column */
	static const char *const sql[2] = {
		"SELECT * FROM (SELECT cluster, job_id, time, user, fingerprint, gpu, model, "
		"framework, precision, shape_class, recompute, tp, pp, dp, cp, ep, vp, zero, "
		"micro_batch, predicted_step_s, model_step_s, measured_step_s, measured_spread_s, "
		"steps, checkpoint_s, etp FROM records WHERE ?1 = '' OR cluster = ?1 "
		"ORDER BY time DESC, job_id DESC LIMIT ?2) ORDER BY time, job_id",
		"SELECT * FROM (SELECT cluster, job_id, time, user, fingerprint, gpu, model, "
		"framework, precision, shape_class, recompute, tp, pp, dp, cp, ep, vp, zero, "
		"micro_batch, predicted_step_s, model_step_s, measured_step_s, measured_spread_s, "
		"steps, checkpoint_s, NULL FROM records WHERE ?1 = '' OR cluster = ?1 "
		"ORDER BY time DESC, job_id DESC LIMIT ?2) ORDER BY time, job_id"};
	struct dtplan_record *v = NULL;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	enum dtplan_err rv;
	int rc;

	*out = NULL;
	*n = 0;
	rc = sqlite3_prepare_v2(db->db, sql[db->no_etp], -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, cluster != NULL ? cluster : "", -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 2, DTPLAN_RECDB_MAX_READ);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t ncap = cap > 0 ? 2 * cap : 16;
			struct dtplan_record *m = realloc(v, ncap * sizeof(*v));

			if (m == NULL) {
				rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
				goto out;
			}
			v = m;
			cap = ncap;
		}
		rv = read_row(st, db->path, &v[len++], err);
		if (rv != DTPLAN_OK)
			goto out;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE) {
		rv = sql_error(db->db, rc, db->path, "cannot read the records", err);
		goto out;
	}
	*out = v;
	*n = len;
	v = NULL;
	rv = DTPLAN_OK;
out:
	sqlite3_finalize(st);
	free(v);
	return rv;
}
