/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/record.h: what earlier runs measured and what later plans learn
 * from it (lib/record/, doc/internals/records.md).
 *
 * Part of libdtplan's public API; include "dtplan.h".  Errors, units and
 * ownership as dtplan.h says.
 */
#ifndef DTPLAN_RECORD_H
#define DTPLAN_RECORD_H

#include "dtplan/plan.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * One run's record (lib/record/record.c)
 * ---------------------------------------------------------------------- */

/* The plan's shape fingerprint: SHA-256 in lowercase hex. */
#define DTPLAN_FINGERPRINT_HEX 65

struct dtplan_record {
	int64_t job_id;
	int64_t time; /* seconds since the epoch, UTC, when the run ended */
	char cluster[64];
	char user[64];
	char fingerprint[DTPLAN_FINGERPRINT_HEX];
	char gpu[32];
	char model[64];
	char framework[16];
	char precision[8];
	char shape_class[48];
	/* the plan's split; offload is not kept in the record database (0
	 * in what it reads back) */
	DTPLAN_SPLIT_EMBED;
	double predicted_step_s;  /* what the plan said, the correction included */
	double model_step_s;      /* the model's alone (what a correction is learned against) */
	double measured_step_s;   /* median of the steps kept */
	double measured_spread_s; /* their interquartile range */
	int64_t steps;            /* steps kept */
	int64_t refused;          /* figures the job reported that were refused (out of their
			  * physical range, not numbers); not kept in the record
			  * database (0 in what it reads back) */
	double checkpoint_s;      /* median checkpoint write; NAN none */
};

/*
 * The fingerprint of a plan's shape on a cluster: SHA-256 of one canonical
 * line naming the cluster, GPU type, model, framework, precision, every
 * parallel size (tp, cp, ep, pp, dp, vp), ZeRO stage, micro-batch and
 * recomputation.  Two plans share it exactly when all of these agree.
 */
void dtplan_plan_fingerprint(const struct dtplan_plan *p, const char *cluster,
			     char out[DTPLAN_FINGERPRINT_HEX]);

/* Fills r's plan half from p (its best candidate) on cluster: fingerprint,
 * names, sizes, shape class, predicted and model steps; the measured half
 * zero, checkpoint_s NAN. */
void dtplan_record_from_plan(struct dtplan_record *r, const struct dtplan_plan *p,
			     const char *cluster);

/* ------------------------------------------------------------------------
 * The record database (lib/record/recdb.c): SQLite
 * ---------------------------------------------------------------------- */

/* Schema version (PRAGMA user_version) and the file's application_id
 * ("dtp1"); a database of another application or a newer schema is refused.
 * Version 2 adds the experts' tensor parallelism (etp, NULL: TP's); a
 * version-1 file is upgraded when opened writable and read with TP's ETP
 * otherwise. */
#define DTPLAN_RECDB_SCHEMA 2
#define DTPLAN_RECDB_APPLICATION_ID 0x64747031
/* How long one statement waits for another job's lock before giving up. */
#define DTPLAN_RECDB_BUSY_MS 250
/* Most records a history or a calibration reads (the newest). */
#define DTPLAN_RECDB_MAX_READ 100000

struct dtplan_recdb;

/*
 * The per-user default path: xdg_state_home/dtplan/records.db, else
 * home/.local/state/dtplan/records.db (the XDG base directory
 * specification's $XDG_STATE_HOME).  DTPLAN_ERR_INVAL when both are empty
 * or not absolute, DTPLAN_ERR_RANGE when it does not fit.
 */
enum dtplan_err dtplan_recdb_default_path(const char *xdg_state_home, const char *home, char *buf,
					  size_t size, struct dtplan_error *err);

/*
 * Opens the database at path.  writable: create it (and its folder, 0700)
 * when missing, in WAL mode; else read-only, and a missing file gives
 * DTPLAN_ERR_NOT_FOUND.  Refused, with the reason in err (DTPLAN_ERR_IO
 * unless said): a link, anything but a regular file, a file owned by
 * another user than the caller's effective one or writable by others
 * (DTPLAN_ERR_POLICY), a file that is not an SQLite database or is
 * damaged (DTPLAN_ERR_PARSE), another application's database or a newer
 * schema (DTPLAN_ERR_UNSUPPORTED), a lock held longer than
 * DTPLAN_RECDB_BUSY_MS (DTPLAN_ERR_TIMEOUT).  Caller closes *out with
 * dtplan_recdb_close().
 */
enum dtplan_err dtplan_recdb_open(const char *path, bool writable, struct dtplan_recdb **out,
				  struct dtplan_error *err);
void dtplan_recdb_close(struct dtplan_recdb *db);

/* Stores r, replacing the record of the same cluster and job id.  Values are
 * checked: finite, measured and model steps > 0 (DTPLAN_ERR_RANGE). */
enum dtplan_err dtplan_recdb_add(struct dtplan_recdb *db, const struct dtplan_record *r,
				 struct dtplan_error *err);

/* The records of cluster ("" or NULL every cluster), oldest first, at most
 * DTPLAN_RECDB_MAX_READ (the newest).  Caller frees *out with free(). */
enum dtplan_err dtplan_recdb_list(struct dtplan_recdb *db, const char *cluster,
				  struct dtplan_record **out, size_t *n, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Learning (lib/record/learn.c)
 * ---------------------------------------------------------------------- */

/*
 * The correction is Bayesian shrinkage of x = log(measured / model) per
 * GPU type, framework and shape class: a normal prior on x centred on 0
 * (the model is right) with standard deviation DTPLAN_CALIB_PRIOR_LOG_SD,
 * and n runs of mean xbar whose run-to-run standard deviation is at least
 * DTPLAN_CALIB_RUN_LOG_SD: the posterior mean is w xbar with
 * w = n tau^2 / (n tau^2 + sigma^2), i.e. a prior weight of sigma^2 / tau^2
 * runs.  The factor exp(w xbar) is bounded to [DTPLAN_CORRECTION_MIN,
 * DTPLAN_CORRECTION_MAX].
 */
#define DTPLAN_CALIB_PRIOR_LOG_SD 0.25 /* the model's error before any run: +-25% */
#define DTPLAN_CALIB_RUN_LOG_SD 0.10   /* runs of one shape differ by 10% at least */
/*
 * The error's change with size: x = a + b (log gpus - log g0), g0 the
 * geometric mean of the runs' GPU counts, by least squares with normal
 * priors centred on 0 for a (DTPLAN_CALIB_PRIOR_LOG_SD) and b
 * (DTPLAN_CALIB_PRIOR_SLOPE_SD): centred, the two are independent and
 * each shrinks alone, a by w above, b by w_b = Sll tau_b^2 / (Sll tau_b^2
 * + sigma^2), Sll = sum (log gpus - log g0)^2 (0 when every run had one
 * size: no slope).  sigma is the residual spread of the fit (n - 2 degrees
 * of freedom), at least DTPLAN_CALIB_RUN_LOG_SD.  The slope's prior: the
 * error may change by 10% per e-fold of GPUs (7% per doubling) at one
 * standard deviation, the size of the change issue 34 measured on 18
 * published series of one layout (real runs 1-44% slower per GPU from the
 * smallest count to the largest, 9% on average, where the model predicted
 * flat).
 */
#define DTPLAN_CALIB_PRIOR_SLOPE_SD 0.10
/*
 * One GPU's compute-time coefficient of variation, from the runs' step
 * spread (doc/internals/cost-model.md, "Step, throughput"): the planner's
 * own model, each GPU's compute normal with sd cv mu, independent across
 * GPUs and steps, the step the slowest of g, puts the step's q-quantile at
 * mu (1 + cv z(q, g)), z = dtplan_max_quantile_z().  A run of median m and
 * interquartile range s gives, with dz = z(0.75, g) - z(0.25, g):
 * s = cv mu dz and m = mu (1 + cv z(0.5, g)), so cv = s / (m dz - s z(0.5, g)).
 * The site's cv is the median over the cluster's runs (every GPU type and
 * framework: the spread is the fleet's), bounded to [0, DTPLAN_STEP_CV_MAX].
 *
 * A run counts with at least DTPLAN_CALIB_CV_MIN_STEPS steps kept: the IQR
 * of n normal samples (quantiles between neighbours, as
 * dtplan_observation_summary() takes them) reads 13% low and scatters by
 * 36% (sd) at n = 10, 7% low and 26% at 20, 3% low and 16% at 50; below 20
 * one run's spread is mostly noise.  The cv is kept from
 * DTPLAN_CALIB_CV_MIN_RUNS runs on: the first count whose median no single
 * run sets.
 */
#define DTPLAN_CALIB_CV_MIN_STEPS 20
#define DTPLAN_CALIB_CV_MIN_RUNS 3

/*
 * Learns the corrections of cluster ("" or NULL: every cluster) from n
 * records (records of other clusters and without a measured or model step
 * are skipped), and the step spread's cv (out->step_cv, out->cv_runs; 0
 * runs: none).  out->corrections is allocated: free with
 * dtplan_calibration_fini().
 */
enum dtplan_err dtplan_calibration_learn(const struct dtplan_record *recs, size_t n,
					 const char *cluster, struct dtplan_calibration *out,
					 struct dtplan_error *err);
void dtplan_calibration_fini(struct dtplan_calibration *c);

/* ------------------------------------------------------------------------
 * What a job measured (lib/record/observe.c)
 * ---------------------------------------------------------------------- */

/* The file a job appends its observations to, one JSON object a line:
 * {"step":N,"step_seconds":S} or {"checkpoint_seconds":S}. */
#define DTPLAN_OBSERVE_ENV "DTPLAN_OBSERVE"
/* Largest observation file read, and most lines it may hold. */
#define DTPLAN_OBSERVE_MAX_BYTES (8u << 20)
#define DTPLAN_OBSERVE_MAX_LINES 100000
/* Of the job's output, only the last this many bytes are read. */
#define DTPLAN_OBSERVE_LOG_TAIL (16u << 20)
/* Most step samples kept (the newest). */
#define DTPLAN_OBSERVE_MAX_SAMPLES 100000
/*
 * The physical range of every figure a job reports; one outside is refused
 * with its reason and counted (n_rejected), never kept:
 *   a step: at least 100 us, a forward, a backward and an optimizer step are
 *     at least three kernel launches of about 5 us each (CUDA's launch
 *     latency) plus the framework's loop; at most a day, a thousand times
 *     the slowest step of a published run (tens of seconds) and more than
 *     any job could make progress with;
 *   a checkpoint write: at least 1 ms, a file created, written and renamed
 *     on a shared filesystem (several metadata round trips of 100 us or
 *     more); at most a day.
 * Whatever the framework printed (milliseconds, tokens or samples per
 * second, a progress bar's time) is bounded as the step time it gives, and
 * so is the plan's prediction a record is compared with.
 */
#define DTPLAN_OBSERVE_MIN_STEP_S 1e-4
#define DTPLAN_OBSERVE_MAX_STEP_S 86400.0
#define DTPLAN_OBSERVE_MIN_CKPT_S 1e-3
#define DTPLAN_OBSERVE_MAX_CKPT_S 86400.0
/* The first tenth of the samples, and at least the first one, are warm-up
 * (compilation, NCCL set-up, the data loader's first fill): skipped. */
#define DTPLAN_OBSERVE_WARMUP_FRACTION 0.1

/* What the step lines of a framework's log need to become seconds per
 * step: torchtitan logs tokens per second per GPU, DeepSpeed samples per
 * second (the plan's global batch, sequence and GPUs). */
struct dtplan_observe_ctx {
	int global_batch;
	int seq;
	int gpus;
};

/* The samples are kept in a window of the newest DTPLAN_OBSERVE_MAX_SAMPLES,
 * a ring: each new sample is one store whatever the window holds.  Until it
 * is full, steps[i] is the i-th seen and steps_at is 0; once full, the
 * oldest kept is steps[steps_at] (dtplan_observation_step() reads them in
 * order either way). */
struct dtplan_observation {
	double *steps;   /* owned: seconds per step, a ring (above) */
	size_t n_steps;  /* kept, at most DTPLAN_OBSERVE_MAX_SAMPLES */
	size_t steps_at; /* the oldest kept once the ring is full, else 0 */
	double *ckpts;   /* owned: checkpoint write seconds, a ring too */
	size_t n_ckpts;
	size_t ckpts_at;
	size_t n_rejected;  /* lines that looked like observations but were refused,
			     * among them figures out of their physical range */
	char rejected[256]; /* the first such line's reason */
	char source[32];    /* where the steps came from: "observe file", "megatron",
			     * "torchtitan", "deepspeed", "lightning" */
};

/*
 * Reads at most max bytes of the regular file at path into *out
 * (NUL-terminated; caller frees): the whole file, or with tail its last
 * max bytes (then *cut is true; NULL allowed), else a file over max is
 * refused.  Never follows a link, never opens a FIFO, device or socket
 * (O_NONBLOCK, then fstat), never reads a NUL byte as text (refused:
 * binary data).  DTPLAN_ERR_IO naming what stands at path.
 */
enum dtplan_err dtplan_observe_read(const char *path, size_t max, bool tail, char **out,
				    size_t *len, bool *cut, struct dtplan_error *err);

/*
 * Adds the observations of a DTPLAN_OBSERVE file's text.  Refused whole
 * (DTPLAN_ERR_RANGE, nothing added): more than DTPLAN_OBSERVE_MAX_LINES
 * lines.  A line that is not such an object, or whose seconds are not a
 * positive finite number, is counted in n_rejected with the first reason.
 */
enum dtplan_err dtplan_observe_parse_jsonl(struct dtplan_observation *o, const char *text,
					   size_t len, struct dtplan_error *err);

/*
 * Adds the step times a job's output shows in the lines its framework
 * prints: Megatron-LM and NeMo ("elapsed time per iteration (ms): X",
 * megatron/training/training.py), torchtitan ("step: N ... tps: T",
 * torchtitan/components/metrics.py), DeepSpeed ("CurrSamplesPerSec=X",
 * deepspeed/utils/timer.py) and Lightning's progress bar ("N/T [MM:SS<...,
 * Xit/s]", lightning/pytorch/callbacks/progress/tqdm_progress.py).  The
 * first format found is the one read.
 */
enum dtplan_err dtplan_observe_parse_log(struct dtplan_observation *o, const char *text, size_t len,
					 const struct dtplan_observe_ctx *ctx,
					 struct dtplan_error *err);

/* The i-th oldest step kept (i < o->n_steps), whatever the ring's turn. */
double dtplan_observation_step(const struct dtplan_observation *o, size_t i);

/* The median and interquartile range of the steps after the warm-up, and
 * how many were kept; DTPLAN_ERR_NOT_FOUND when none are left. */
enum dtplan_err dtplan_observation_summary(const struct dtplan_observation *o, double *median,
					   double *spread, size_t *kept, struct dtplan_error *err);

/* The median checkpoint write, NAN without any. */
double dtplan_observation_checkpoint(const struct dtplan_observation *o);

void dtplan_observation_fini(struct dtplan_observation *o);

/* ------------------------------------------------------------------------
 * Failures from Slurm's records (lib/record/mtbf.c)
 * ---------------------------------------------------------------------- */

/* One line of `sacctmgr -P -n show event event=node
 * format=NodeName,Start,End,State,Reason`. */
struct dtplan_node_event {
	char node[64];
	int64_t start, end; /* seconds since the epoch; end -1 while it lasts */
	char state[32];
	char reason[128];
};

/* One line of `sacct -P -n -X -a --state=NODE_FAIL
 * --format=JobIDRaw,NodeList,Start,End,State`. */
struct dtplan_failed_job {
	int64_t job_id;
	char nodes[256];
	int64_t start, end;
	char state[32];
};

/* The parsable output of those commands (fields between '|'), times as
 * Slurm prints them (local time).  DTPLAN_ERR_PARSE naming the line.
 * Caller frees *out with free(). */
enum dtplan_err dtplan_slurm_events_parse(const char *text, struct dtplan_node_event **out,
					  size_t *n, struct dtplan_error *err);
enum dtplan_err dtplan_slurm_jobs_parse(const char *text, struct dtplan_failed_job **out, size_t *n,
					struct dtplan_error *err);

struct dtplan_mtbf_in {
	int64_t window_start, window_end; /* seconds since the epoch */
	size_t n_nodes;                   /* nodes watched over the window */
	/* their names (borrowed, n_nodes of them): only their events and the
	 * jobs that ran on one of them count; NULL: every node's */
	const char (*nodes)[64];
	int gpus_per_node;
	double confidence; /* of the interval: 0.9 */
};

struct dtplan_mtbf {
	int failures;           /* node-down events starting in the window */
	int node_fail_jobs;     /* jobs NODE_FAIL ended in the window */
	int other_nodes;        /* events and jobs not counted: none of the nodes watched */
	int repeated;           /* events and jobs not counted: seen already (the same
				 * node and start, the same job id) */
	double gpu_hours;       /* exposure: window x nodes x GPUs per node */
	double mtbf_gpu_hours;  /* gpu_hours / failures; INFINITY without one */
	double lower_gpu_hours; /* the exact chi-square interval for a Poisson process */
	double upper_gpu_hours; /* observed for a fixed time (INFINITY without failure) */
	double confidence;
};

/* The per-GPU MTBF over the window: failures are node events whose state
 * says DOWN or FAIL (a DRAIN is the admin's, not counted), of the nodes
 * watched, each once (slurmdbd keys an event on its node and start). */
enum dtplan_err dtplan_mtbf_compute(const struct dtplan_mtbf_in *in,
				    const struct dtplan_node_event *events, size_t n_events,
				    const struct dtplan_failed_job *jobs, size_t n_jobs,
				    struct dtplan_mtbf *out, struct dtplan_error *err);

/* The p-quantile of the chi-square distribution with dof degrees of
 * freedom (NAN outside 0 < p < 1, dof > 0). */
double dtplan_chi2_quantile(double p, double dof);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_RECORD_H */
