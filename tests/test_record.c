/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_record.c: the records of earlier runs (lib/record/): the shape
 * fingerprint, the SQLite database and its refusals, the learned
 * correction and what a plan does with it.
 */
#include "test_common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/dtplan-test-record.XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static struct dtplan_plan *plan_of(const char *model, int gpus,
				   const struct dtplan_calibration *cal)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;

	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse(model, &r.model, NULL), DTPLAN_OK);
	r.gpus = gpus;
	r.calibration = cal;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	return p;
}

/* A record of p's shape on cluster c1 whose measured step is ratio x the model's. */
static struct dtplan_record record_of(const struct dtplan_plan *p, int64_t job, double ratio)
{
	struct dtplan_record r;

	dtplan_record_from_plan(&r, p, "c1");
	r.job_id = job;
	r.time = 1700000000 + job;
	snprintf(r.user, sizeof(r.user), "alice");
	r.measured_step_s = r.model_step_s * ratio;
	r.measured_spread_s = 0.01 * r.measured_step_s;
	r.steps = 100;
	return r;
}

static void fingerprint__same_shape__same_hex_and_other_cluster_differs(void **state)
{
	struct dtplan_plan *a = plan_of("llama3-8b", 16, NULL), *b = plan_of("llama3-8b", 16, NULL);
	char fa[DTPLAN_FINGERPRINT_HEX], fb[DTPLAN_FINGERPRINT_HEX], fc[DTPLAN_FINGERPRINT_HEX];

	(void)state;
	dtplan_plan_fingerprint(a, "c1", fa);
	dtplan_plan_fingerprint(b, "c1", fb);
	dtplan_plan_fingerprint(b, "c2", fc);
	assert_int_equal(strlen(fa), 64);
	assert_string_equal(fa, fb);
	assert_string_not_equal(fa, fc);
	for (const char *s = fa; *s; s++)
		assert_true((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'));
	/* every parallel size is in it: another micro-batch is another shape */
	b->best.micro_batch++;
	dtplan_plan_fingerprint(b, "c1", fb);
	assert_string_not_equal(fa, fb);
	dtplan_plan_destroy(a);
	dtplan_plan_destroy(b);
}

static void shape_class__table(void **state)
{
	static const struct {
		int tp, cp, ep, pp, dp, zero;
		enum dtplan_recompute rc;
		const char *want;
	} rows[] = {
		{1, 1, 1, 1, 1, 0, DTPLAN_RECOMPUTE_NONE, "single/z0/none"},
		{1, 1, 1, 1, 64, 3, DTPLAN_RECOMPUTE_NONE, "dp/z3/none"},
		{8, 1, 1, 4, 4, 1, DTPLAN_RECOMPUTE_SELECTIVE, "tp-pp-dp/z1/selective"},
		{8, 2, 1, 1, 2, 1, DTPLAN_RECOMPUTE_FULL, "tp-cp-dp/z1/full"},
		/* EP 8 carved from DP 8: no DP left beside it */
		{1, 1, 8, 1, 8, 1, DTPLAN_RECOMPUTE_NONE, "ep/z1/none"},
	};
	char buf[48];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct dtplan_candidate c = {.tp = rows[i].tp,
					     .cp = rows[i].cp,
					     .ep = rows[i].ep,
					     .pp = rows[i].pp,
					     .dp = rows[i].dp,
					     .zero = rows[i].zero,
					     .recompute = rows[i].rc};

		dtplan_shape_class(&c, buf, sizeof(buf));
		assert_string_equal(buf, rows[i].want);
	}
}

/*
 * Shrinkage, dtplan/record.h: w = n tau^2 / (n tau^2 + sigma^2), tau the
 * prior's 0.25, sigma the run floor's 0.10 when the runs agree.  Two runs
 * at 1.3: w = 0.125 / 0.135 = 0.9259, factor 1.3^0.9259 = 1.2750; one run
 * at 1.3: w = 0.0625 / 0.0725 = 0.8621, factor 1.2538.
 */
static void learn__two_runs_at_1_3__shrunk_factor(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, NULL);
	struct dtplan_record r[2] = {record_of(p, 1, 1.3), record_of(p, 2, 1.3)};
	struct dtplan_calibration cal;
	const struct dtplan_correction *k;
	double tau2 = DTPLAN_CALIB_PRIOR_LOG_SD * DTPLAN_CALIB_PRIOR_LOG_SD,
	       sig2 = DTPLAN_CALIB_RUN_LOG_SD * DTPLAN_CALIB_RUN_LOG_SD;

	(void)state;
	assert_int_equal(dtplan_calibration_learn(r, 2, "c1", &cal, NULL), DTPLAN_OK);
	k = dtplan_calibration_find(&cal, r[0].gpu, r[0].framework, r[0].shape_class);
	assert_non_null(k);
	assert_int_equal(k->runs, 2);
	assert_near(k->weight, 2 * tau2 / (2 * tau2 + sig2), 1e-12);
	assert_near(k->factor, pow(1.3, 0.125 / 0.135), 1e-9);
	assert_near(k->factor, 1.2750, 1e-4);
	assert_near(k->observed, 1.3, 1e-12);
	/* another class of the same GPU and framework gets the pooled one */
	k = dtplan_calibration_find(&cal, r[0].gpu, r[0].framework, "tp-pp-dp/z1/full");
	assert_non_null(k);
	assert_string_equal(k->shape_class, DTPLAN_SHAPE_ANY);
	assert_null(dtplan_calibration_find(&cal, "a100-80gb", r[0].framework, r[0].shape_class));
	dtplan_calibration_fini(&cal);
	/* one run: shrunk further */
	assert_int_equal(dtplan_calibration_learn(r, 1, "c1", &cal, NULL), DTPLAN_OK);
	k = dtplan_calibration_find(&cal, r[0].gpu, r[0].framework, r[0].shape_class);
	assert_near(k->factor, pow(1.3, 0.0625 / 0.0725), 1e-9);
	dtplan_calibration_fini(&cal);
	/* another cluster's records teach nothing here */
	assert_int_equal(dtplan_calibration_learn(r, 2, "c2", &cal, NULL), DTPLAN_OK);
	assert_int_equal(cal.n, 0);
	dtplan_calibration_fini(&cal);
	dtplan_plan_destroy(p);
}

/*
 * The error changes with size: two jobs of one shape on 16 GPUs 20% slow,
 * two on 64 GPUs 30% slow.  Centred at g0 = sqrt(16 x 64) = 32, l = log(g
 * / g0) = -+log 2, x = log 1.2, log 1.3: the level's mean xbar = (log 1.2
 * + log 1.3) / 2 shrinks by w = 4 tau^2 / (4 tau^2 + sigma^2), the slope
 * b = (log 1.3 - log 1.2) / log 4 by w_b = Sll tau_b^2 / (Sll tau_b^2 +
 * sigma^2), Sll = 4 (log 2)^2, sigma the run floor (the fit leaves no
 * residual).  A plan at 64 gets exp(w xbar + w_b b log 2), within 5% of
 * 1.30; one at 16 exp(w xbar - w_b b log 2), nearer 1.20 than 1.30.
 */
static void learn__16_gpus_20pct_64_gpus_30pct__slope_by_size(void **state)
{
	struct dtplan_plan *p16 = plan_of("llama3-8b", 16, NULL), *q16, *q64;
	struct dtplan_record r[4] = {record_of(p16, 1, 1.2), record_of(p16, 2, 1.2),
				     record_of(p16, 3, 1.3), record_of(p16, 4, 1.3)};
	struct dtplan_calibration cal;
	const struct dtplan_correction *k;
	double tau2 = DTPLAN_CALIB_PRIOR_LOG_SD * DTPLAN_CALIB_PRIOR_LOG_SD,
	       taub2 = DTPLAN_CALIB_PRIOR_SLOPE_SD * DTPLAN_CALIB_PRIOR_SLOPE_SD,
	       sig2 = DTPLAN_CALIB_RUN_LOG_SD * DTPLAN_CALIB_RUN_LOG_SD, l2 = log(2.0);
	double xbar = (log(1.2) + log(1.3)) / 2.0, b = (log(1.3) - log(1.2)) / log(4.0);
	double w = 4 * tau2 / (4 * tau2 + sig2), sll = 4 * l2 * l2,
	       wb = sll * taub2 / (sll * taub2 + sig2);
	double at64 = exp(w * xbar + wb * b * l2), at16 = exp(w * xbar - wb * b * l2);

	(void)state;
	/* the same shape on four times the GPUs: DP four times wider */
	assert_int_equal(r[0].tp * r[0].cp * r[0].pp * r[0].dp, 16);
	r[2].dp *= 4;
	r[3].dp *= 4;
	assert_int_equal(dtplan_calibration_learn(r, 4, "c1", &cal, NULL), DTPLAN_OK);
	k = dtplan_calibration_find(&cal, r[0].gpu, r[0].framework, r[0].shape_class);
	assert_non_null(k);
	assert_string_equal(k->shape_class, r[0].shape_class);
	assert_int_equal(k->runs, 4);
	assert_int_equal(k->min_gpus, 16);
	assert_int_equal(k->max_gpus, 64);
	assert_near(k->ref_gpus, 32.0, 1e-9);
	assert_near(k->slope, wb * b, 1e-12);
	assert_near(dtplan_correction_at(k, 64), at64, 1e-9);
	assert_near(dtplan_correction_at(k, 16), at16, 1e-9);
	assert_true(fabs(at64 / 1.30 - 1.0) < 0.05);
	assert_true(at16 < 1.25);
	/* the plans carry it at their own size */
	q64 = plan_of("llama3-8b", 64, &cal);
	q16 = plan_of("llama3-8b", 16, &cal);
	assert_true(fabs(q64->best.correction / 1.30 - 1.0) < 0.05);
	assert_true(q16->best.correction < 1.25);
	assert_near(q64->best.step.total, q64->best.model_step * q64->best.correction,
		    1e-9 * q64->best.step.total);
	dtplan_plan_destroy(q16);
	dtplan_plan_destroy(q64);
	dtplan_calibration_fini(&cal);
	/* one size only: no slope, the level as before */
	assert_int_equal(dtplan_calibration_learn(r, 2, "c1", &cal, NULL), DTPLAN_OK);
	k = dtplan_calibration_find(&cal, r[0].gpu, r[0].framework, r[0].shape_class);
	assert_near(k->slope, 0.0, 0.0);
	assert_near(dtplan_correction_at(k, 4096), k->factor, 0.0);
	dtplan_calibration_fini(&cal);
	dtplan_plan_destroy(p16);
}

static void learn__wild_ratio__bounded(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, NULL);
	struct dtplan_record r[3] = {record_of(p, 1, 50.0), record_of(p, 2, 50.0),
				     record_of(p, 3, 50.0)};
	struct dtplan_calibration cal;

	(void)state;
	assert_int_equal(dtplan_calibration_learn(r, 3, "", &cal, NULL), DTPLAN_OK);
	assert_true(cal.n >= 1);
	assert_near(cal.corrections[0].factor, DTPLAN_CORRECTION_MAX, 0.0);
	dtplan_calibration_fini(&cal);
	for (int i = 0; i < 3; i++)
		r[i].measured_step_s = r[i].model_step_s / 50.0;
	assert_int_equal(dtplan_calibration_learn(r, 3, "", &cal, NULL), DTPLAN_OK);
	assert_near(cal.corrections[0].factor, DTPLAN_CORRECTION_MIN, 0.0);
	dtplan_calibration_fini(&cal);
	dtplan_plan_destroy(p);
}

/* A plan with a correction carries it: total = model x factor, the parts
 * unchanged; a factor against one shape moves the search to another. */
static void plan__calibrated__total_is_model_times_factor(void **state)
{
	struct dtplan_plan *p0 = plan_of("llama3-8b", 16, NULL), *p1, *p2;
	struct dtplan_correction k = {.factor = 1.2, .runs = 3};
	struct dtplan_calibration cal = {.n = 1, .corrections = &k};

	(void)state;
	snprintf(k.gpu, sizeof(k.gpu), "%s", p0->request.gpu.name);
	snprintf(k.framework, sizeof(k.framework), "%s",
		 dtplan_framework_name(p0->request.framework));
	snprintf(k.shape_class, sizeof(k.shape_class), "%s", DTPLAN_SHAPE_ANY);
	assert_near(p0->best.correction, 1.0, 0.0);
	assert_int_equal(p0->best.correction_runs, 0);
	p1 = plan_of("llama3-8b", 16, &cal);
	assert_null(p1->request.calibration);
	assert_int_equal(p1->best.correction_runs, 3);
	assert_true(p1->best.correction_pooled);
	/* every candidate scaled alike: the same choice, its step 1.2x */
	assert_int_equal(p1->best.tp, p0->best.tp);
	assert_int_equal(p1->best.dp, p0->best.dp);
	assert_int_equal(p1->best.zero, p0->best.zero);
	assert_near(p1->best.model_step, p0->best.step.total, 1e-12 * p0->best.step.total);
	assert_near(p1->best.step.total, 1.2 * p0->best.step.total, 1e-9 * p0->best.step.total);
	assert_near(p1->best.step.compute, p0->best.step.compute, 0.0);
	/* twice as slow on the chosen shape only: another one wins */
	dtplan_shape_class(&p0->best, k.shape_class, sizeof(k.shape_class));
	k.factor = 2.0;
	p2 = plan_of("llama3-8b", 16, &cal);
	if (p0->have_runner_up && p0->runner_up.step.total < 2.0 * p0->best.step.total) {
		char c0[48], c2[48];

		dtplan_shape_class(&p0->best, c0, sizeof(c0));
		dtplan_shape_class(&p2->best, c2, sizeof(c2));
		assert_string_not_equal(c0, c2);
		assert_true(p2->best.step.total <= 2.0 * p0->best.step.total);
	}
	dtplan_plan_destroy(p0);
	dtplan_plan_destroy(p1);
	dtplan_plan_destroy(p2);
}

static void recdb__add_list_reopen__round_trip(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, NULL);
	struct dtplan_record r1 = record_of(p, 1, 1.3), r2 = record_of(p, 2, 1.25), *v = NULL;
	struct dtplan_recdb *db = NULL;
	struct dtplan_error err = {0};
	const char *path = in_dir("state/dtplan/records.db");
	struct stat st;
	size_t n = 0;

	(void)state;
	r2.checkpoint_s = 42.0;
	assert_int_equal(dtplan_recdb_open(path, false, &db, &err), DTPLAN_ERR_NOT_FOUND);
	assert_int_equal(dtplan_recdb_open(path, true, &db, &err), DTPLAN_OK);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(dtplan_recdb_add(db, &r1, &err), DTPLAN_OK);
	assert_int_equal(dtplan_recdb_add(db, &r2, &err), DTPLAN_OK);
	assert_int_equal(dtplan_recdb_add(db, &r2, &err), DTPLAN_OK); /* the same job again */
	dtplan_recdb_close(db);
	assert_int_equal(dtplan_recdb_open(path, false, &db, &err), DTPLAN_OK);
	assert_int_equal(dtplan_recdb_list(db, "c1", &v, &n, &err), DTPLAN_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].job_id, 1);
	assert_string_equal(v[0].fingerprint, r1.fingerprint);
	assert_string_equal(v[1].shape_class, r2.shape_class);
	assert_near(v[1].measured_step_s, r2.measured_step_s, 0.0);
	assert_true(isnan(v[0].checkpoint_s));
	assert_near(v[1].checkpoint_s, 42.0, 0.0);
	assert_int_equal(v[1].tp, r2.tp);
	free(v);
	assert_int_equal(dtplan_recdb_list(db, "other", &v, &n, &err), DTPLAN_OK);
	assert_int_equal(n, 0);
	free(v);
	dtplan_recdb_close(db);
	dtplan_plan_destroy(p);
}

static void recdb__nan_negative__refused(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, NULL);
	struct dtplan_record r = record_of(p, 7, 1.0);
	struct dtplan_recdb *db = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_recdb_open(in_dir("nan.db"), true, &db, &err), DTPLAN_OK);
	r.measured_step_s = NAN;
	assert_int_equal(dtplan_recdb_add(db, &r, &err), DTPLAN_ERR_RANGE);
	assert_non_null(strstr(err.text, "job 7"));
	r.measured_step_s = -1.0;
	assert_int_equal(dtplan_recdb_add(db, &r, &err), DTPLAN_ERR_RANGE);
	r.measured_step_s = 1.0;
	r.checkpoint_s = INFINITY;
	assert_int_equal(dtplan_recdb_add(db, &r, &err), DTPLAN_ERR_RANGE);
	dtplan_recdb_close(db);
	dtplan_plan_destroy(p);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void recdb__hostile_files__refused_with_reason(void **state)
{
	struct dtplan_recdb *db = NULL;
	struct dtplan_error err = {0};
	sqlite3 *s = NULL;

	(void)state;
	/* binary garbage */
	write_file(in_dir("garbage.db"),
		   "\x7f"
		   "ELF this is not a database at all, not at all....",
		   0600);
	assert_int_equal(dtplan_recdb_open(in_dir("garbage.db"), true, &db, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "not an SQLite database"));
	/* a link to a file, never followed */
	write_file(in_dir("target.db"), "", 0600);
	{
		char target[512];

		snprintf(target, sizeof(target), "%s", in_dir("target.db"));
		assert_int_equal(symlink(target, in_dir("link.db")), 0);
	}
	assert_int_equal(dtplan_recdb_open(in_dir("link.db"), true, &db, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "symbolic link"));
	/* a FIFO */
	assert_int_equal(mkfifo(in_dir("fifo.db"), 0600), 0);
	assert_int_equal(dtplan_recdb_open(in_dir("fifo.db"), true, &db, &err), DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "not a regular file"));
	/* writable by others */
	write_file(in_dir("open.db"), "", 0666);
	assert_int_equal(dtplan_recdb_open(in_dir("open.db"), true, &db, &err), DTPLAN_ERR_POLICY);
	assert_non_null(strstr(err.text, "writable by others"));
	/* another application's database, and a newer schema */
	assert_int_equal(sqlite3_open(in_dir("foreign.db"), &s), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "CREATE TABLE t (x); PRAGMA application_id = 7", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(s);
	assert_int_equal(dtplan_recdb_open(in_dir("foreign.db"), true, &db, &err),
			 DTPLAN_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.text, "another application"));
	assert_int_equal(dtplan_recdb_open(in_dir("newer.db"), true, &db, &err), DTPLAN_OK);
	dtplan_recdb_close(db);
	assert_int_equal(sqlite3_open(in_dir("newer.db"), &s), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	assert_int_equal(dtplan_recdb_open(in_dir("newer.db"), true, &db, &err),
			 DTPLAN_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.text, "schema version 99"));
	/* another user's: only root can make one here */
	if (geteuid() == 0) {
		write_file(in_dir("theirs.db"), "", 0600);
		assert_int_equal(chown(in_dir("theirs.db"), 65534, 65534), 0);
		assert_int_equal(dtplan_recdb_open(in_dir("theirs.db"), true, &db, &err),
				 DTPLAN_ERR_POLICY);
		assert_non_null(strstr(err.text, "owned by uid 65534"));
	}
}

/*
 * A version-1 database (no etp column): read-only its records read the
 * experts' TP as TP's; opened writable it becomes version 2 and keeps a
 * folded record's ETP.
 */
static void recdb__version_1__read_then_upgraded(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, NULL);
	struct dtplan_record r = record_of(p, 5, 1.0), *back = NULL;
	struct dtplan_recdb *db = NULL;
	struct dtplan_error err = {0};
	sqlite3 *s = NULL;
	size_t n = 0;

	(void)state;
	/* a version-2 file with one record, made version 1 by hand: its
	 * table as version 1 made it, the same row */
	assert_int_equal(dtplan_recdb_open(in_dir("v1.db"), true, &db, &err), DTPLAN_OK);
	assert_int_equal(dtplan_recdb_add(db, &r, &err), DTPLAN_OK);
	dtplan_recdb_close(db);
	assert_int_equal(sqlite3_open(in_dir("v1.db"), &s), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(s, "ALTER TABLE records DROP COLUMN etp; PRAGMA user_version = 1",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(s);
	assert_int_equal(dtplan_recdb_open(in_dir("v1.db"), false, &db, &err), DTPLAN_OK);
	assert_int_equal(dtplan_recdb_list(db, "", &back, &n, &err), DTPLAN_OK);
	assert_int_equal(n, 1);
	assert_int_equal(back[0].etp, back[0].tp);
	free(back);
	dtplan_recdb_close(db);
	/* writable: upgraded, and a record with ETP 1 beside TP 2 kept */
	assert_int_equal(dtplan_recdb_open(in_dir("v1.db"), true, &db, &err), DTPLAN_OK);
	r.job_id = 6;
	r.tp = 2;
	r.dp = 8;
	r.etp = 1;
	assert_int_equal(dtplan_recdb_add(db, &r, &err), DTPLAN_OK);
	assert_int_equal(dtplan_recdb_list(db, "", &back, &n, &err), DTPLAN_OK);
	assert_int_equal(n, 2);
	assert_int_equal(back[1].etp, 1);
	free(back);
	dtplan_recdb_close(db);
	assert_int_equal(sqlite3_open(in_dir("v1.db"), &s), SQLITE_OK);
	{
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_prepare_v2(s, "PRAGMA user_version", -1, &st, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(st, 0), DTPLAN_RECDB_SCHEMA);
		sqlite3_finalize(st);
	}
	sqlite3_close(s);
	dtplan_plan_destroy(p);
}

/* Another writer holds the lock: the store gives up within the busy wait. */
static void recdb__locked__timeout_bounded(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, NULL);
	struct dtplan_record r = record_of(p, 9, 1.1);
	struct dtplan_recdb *db = NULL;
	struct dtplan_error err = {0};
	struct timespec t0, t1;
	sqlite3 *s = NULL;
	double waited;

	(void)state;
	assert_int_equal(dtplan_recdb_open(in_dir("locked.db"), true, &db, &err), DTPLAN_OK);
	assert_int_equal(sqlite3_open(in_dir("locked.db"), &s), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(dtplan_recdb_add(db, &r, &err), DTPLAN_ERR_TIMEOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(waited < 10.0 * DTPLAN_RECDB_BUSY_MS / 1000.0);
	assert_non_null(strstr(err.text, "locked"));
	sqlite3_exec(s, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(s);
	assert_int_equal(dtplan_recdb_add(db, &r, &err), DTPLAN_OK);
	dtplan_recdb_close(db);
	dtplan_plan_destroy(p);
}

static void recdb__default_path__xdg_then_home(void **state)
{
	char buf[256];
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_recdb_default_path("/x/state", "/home/a", buf, sizeof(buf), &err),
			 DTPLAN_OK);
	assert_string_equal(buf, "/x/state/dtplan/records.db");
	assert_int_equal(dtplan_recdb_default_path("relative", "/home/a", buf, sizeof(buf), &err),
			 DTPLAN_OK);
	assert_string_equal(buf, "/home/a/.local/state/dtplan/records.db");
	assert_int_equal(dtplan_recdb_default_path(NULL, "", buf, sizeof(buf), &err),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_recdb_default_path("/x", NULL, buf, 8, &err), DTPLAN_ERR_RANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fingerprint__same_shape__same_hex_and_other_cluster_differs),
		cmocka_unit_test(shape_class__table),
		cmocka_unit_test(learn__two_runs_at_1_3__shrunk_factor),
		cmocka_unit_test(learn__16_gpus_20pct_64_gpus_30pct__slope_by_size),
		cmocka_unit_test(learn__wild_ratio__bounded),
		cmocka_unit_test(plan__calibrated__total_is_model_times_factor),
		cmocka_unit_test(recdb__add_list_reopen__round_trip),
		cmocka_unit_test(recdb__nan_negative__refused),
		cmocka_unit_test(recdb__hostile_files__refused_with_reason),
		cmocka_unit_test(recdb__locked__timeout_bounded),
		cmocka_unit_test(recdb__version_1__read_then_upgraded),
		cmocka_unit_test(recdb__default_path__xdg_then_home),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, setup, teardown);
}
