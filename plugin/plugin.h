/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugin.h: what the SPANK plugin's files share.  Never installed.
 *
 * Three modules.  spank_dtplan.so (spank_dtplan.c) holds the entry points
 * and the option table and links nothing else; dtplan_core.so holds the
 * job's work: core.c's entry table over one file per Slurm context
 * (local.c, remote.c, prolog.c), the options' checks in opts.c, the site in
 * site.c and the Slurm log sink in log_slurm.c.  dtplan_submit.so is the
 * same core.c built with DTPLAN_CORE_SUBMIT over the submit side's files
 * only (opts.c, local.c, site.c, log_slurm.c): no probes, hwloc or MUNGE.
 * Cross-file functions carry the dtspank__ prefix (libdtplan's internals
 * are dtplan__, libdtprobes' dtprobe__); the version scripts keep every one
 * of them out of the modules' exported symbols, but dtspank__spank_core.
 */
#ifndef DTPLAN_PLUGIN_H
#define DTPLAN_PLUGIN_H

#include <slurm/spank.h>

#include "dtplan.h"

#include <sys/types.h>

/* Every message the plugin logs starts with this. */
#define DTPLAN_LOG_PREFIX "dtplan: "

/* Longest option value kept (a model spec may be a config.json path). */
#define DTPLAN_OPT_MAX 1024

/* The options, in spank_dtplan.c's table and opts.c's checks. */
enum dtspank__opt_id {
	DTPLAN_OPT_PLAN = 0,
	DTPLAN_OPT_MODEL,
	DTPLAN_OPT_TRAIN,
};
#define DTPLAN_OPT_PLAN_NAME "dt-plan"
#define DTPLAN_OPT_MODEL_NAME "dt-model"
#define DTPLAN_OPT_TRAIN_NAME "dt-train"

/* ---- core.c: what spank_dtplan.so finds in dtplan_{core,submit}.so ---- */

/* Raised when the table changes; the shim refuses a core of another. */
#define DTPLAN_CORE_ABI 2

/*
 * The core's entry points.  init runs once, before any other, with the
 * plugstack arguments (not in the prolog, which reads its own); option is
 * a --dt-* option's callback (enum dtspank__opt_id).
 */
struct dtspank__core {
	int abi; /* DTPLAN_CORE_ABI */
	int (*init)(spank_t sp, int ac, char **av);
	int (*init_post_opt)(spank_t sp, int ac, char **av);
	int (*user_init)(spank_t sp, int ac, char **av);
	int (*task_init)(spank_t sp, int ac, char **av);
	int (*job_prolog)(spank_t sp, int ac, char **av);
	int (*job_epilog)(spank_t sp, int ac, char **av);
	int (*exit)(spank_t sp, int ac, char **av);
	int (*option)(int val, const char *optarg, int remote);
};

/* The one symbol dtplan_core.so and dtplan_submit.so export
 * (plugin/dtplan_core.map). */
extern const struct dtspank__core dtspank__spank_core;

/* Values the user gave, exactly as typed; "" when not given. */
struct dtplan_opts {
	bool mode_given;
	enum dtplan_mode mode;
	char model[DTPLAN_OPT_MAX];
	char train[DTPLAN_OPT_MAX];
};

/* ---- opts.c ---------------------------------------------------------- */

/*
 * A --dt-* option's callback (val: enum dtspank__opt_id).  On the submit side
 * (remote 0) checks the value and returns -1 (logged, naming the option and
 * value) for a bad or conflicting one; in slurmstepd keeps it and returns 0.
 */
int dtspank__opt_cb(int val, const char *optarg, int remote);

/* The options seen so far (callbacks and environment fallback). */
const struct dtplan_opts *dtspank__opts(void);

/* Forgets every option (plugin exit, tests). */
void dtspank__opts_reset(void);

/*
 * Fills options the callbacks did not see from the job environment
 * (SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_<name>, which Slurm exports to the
 * job): an srun in a batch script inherits them that way.  Remote only.
 */
void dtspank__opts_from_env(spank_t sp);

/* Longest SLURM_JOB_NODELIST read (bytes with the NUL): 65,536 nodes of
 * 63-character names that no range compresses. */
#define DTPLAN_NODELIST_MAX (4 << 20)

/*
 * spank_getenv of a value of any length up to max bytes: *out is malloc()ed
 * (caller frees), "" when unset or longer (the return says which:
 * ESPANK_ENV_NOEXIST, ESPANK_NOSPACE).  A large job's SLURM_JOB_NODELIST
 * can pass any fixed buffer (issue 13, finding 17).
 */
spank_err_t dtspank__job_getenv_alloc(spank_t sp, const char *name, size_t max, char **out);

/* True when the user gave any --dt-* option. */
bool dtspank__opts_any(const struct dtplan_opts *o);

/* The mode in force: the user's --dt-plan, else the site default. */
enum dtplan_mode dtspank__opts_mode(const struct dtplan_opts *o, const struct dtplan_config *c);

/*
 * Builds a request from the site configuration and the user's options.
 * Returns DTPLAN_OK or fills err naming the option and value.
 */
enum dtplan_err dtspank__opts_request(const struct dtplan_opts *o, const struct dtplan_config *c,
				      struct dtplan_request *r, struct dtplan_error *err);

/* ---- site.c ---------------------------------------------------------- */

/*
 * Reads plugstack arguments (and the site file named by site=) into c,
 * which the caller initialised.  Logs and returns -1 on a bad configuration.
 */
int dtspank__config_load(struct dtplan_config *c, int ac, char **av);
/* Slurm's slurm.conf as dtplan reads it (AuthInfo's socket, NodeAddr=):
 * $SLURM_CONF, else slurm.conf in c's configuration folder.  0 when read;
 * -1 when not (logged at info: the caller goes on without). */
int dtspank__slurm_conf(const struct dtplan_config *c, struct dtplan_slurm_conf *s);

/* ---- log_slurm.c ----------------------------------------------------- */

/* Sends libdtplan's messages to slurm_error/slurm_info/slurm_debug. */
void dtspank__log_install(void);

/* Logs text line by line with slurm_spank_log (the job's output file in
 * slurmstepd, the terminal on the submit side). */
void dtspank__log_block(const char *text);

/* ---- local.c: sbatch/salloc (allocator) and srun (local) -------------- */

int dtspank__local_init_post_opt(spank_t sp, const struct dtplan_config *c);

/* ---- remote.c: slurmstepd -------------------------------------------- */

int dtspank__remote_user_init(spank_t sp, const struct dtplan_config *c);
int dtspank__remote_task_init(spank_t sp, const struct dtplan_config *c);
void dtspank__remote_exit(void);

/* ---- service.c: the fabric service and the collector (slurmstepd) ----- */

struct dtplan_fabric_fetch;
struct dtplan_report;

/*
 * Remote init_post_opt, as root: in the batch step of a job that plans,
 * fetches the fabric of FabricURL= (through FabricCache=); in the batch step
 * and on the first node of other steps, reads ReportTokenFile=.  Always 0
 * (faults logged).
 */
int dtspank__service_init_post_opt(spank_t sp, const struct dtplan_config *c);

/*
 * The fabric for a plan: init_post_opt's outcome, else fetched now (the
 * cache alone unless may_ask), read for nodes (the job's node list; NULL:
 * the whole answer).  NULL without FabricURL= or when nothing could be
 * tried (logged).  Owned by service.c until dtspank__service_exit().
 */
const struct dtplan_fabric_fetch *dtspank__service_fabric(const struct dtplan_config *c,
							  bool may_ask, const char *nodes);

/*
 * Posts r (its plan_json NULL when no plan could be made) to ReportURL=,
 * with the user, cluster, sender and time filled here, bounded by
 * ReportTimeout=.  Faults go to the slurmd log.
 */
void dtspank__service_report(spank_t sp, const struct dtplan_config *c,
			     const struct dtplan_report *r);

/* Frees the fabric and wipes the token. */
void dtspank__service_exit(void);

/*
 * Posts body (JSON) to the site's ReportURL= with the token (NULL: none),
 * bounded by ReportTimeout=: the one posting path of plans and
 * observations (service.c).
 */
enum dtplan_err dtspank__service_post(const struct dtplan_config *c, const char *body,
				      const char *token, struct dtplan_error *err);

/* observe.c: a job's record, from its files, in the epilog.  init_post_opt
 * (root, batch step) opens spool_dir/JOBID.observe; observe_plan
 * (user_init, once the plan file is written) says where the job's files
 * are; observe_task (the batch script's task_init) adds its output;
 * observe_epilog reads it, and as the job's user stores, posts and
 * appends "planned X, measured Y (+Z%)" to the output. */
int dtspank__observe_init_post_opt(spank_t sp, const struct dtplan_config *c);
void dtspank__observe_plan(spank_t sp, const struct dtplan_config *c, const char *plan_path,
			   uid_t uid, const char *submit_dir);
void dtspank__observe_task(spank_t sp);
void dtspank__observe_exit(void);
void dtspank__observe_epilog(const struct dtplan_config *c, uint32_t job_id);
/* The corrections learned from the job's user's records (RecordDB=, else
 * theirs), for the job's cluster, into *cal (free with
 * dtplan_calibration_fini()).  0 with some; -1 with none: no database yet,
 * or one refused (said once in the job's log). */
int dtspank__observe_calibration(spank_t sp, const struct dtplan_config *c,
				 struct dtplan_calibration *cal);

/* ---- prolog.c: job_script (prolog/epilog) ---------------------------- */

/* The prolog: this node's part in measuring the allocation; the epilog:
 * the job's measurement file goes.  Both always return 0 (logged). */
int dtspank__prolog(spank_t sp, int ac, char **av);
int dtspank__epilog(spank_t sp, int ac, char **av);

/* spool_dir/JOBID.json into buf; -1 without a spool or when it does not fit. */
int dtspank__spool_path(const struct dtplan_config *c, uint32_t job_id, char *buf, size_t size);

/* ---- measure.c: the prolog's measurement in slurmstepd ----------------- */

/* init_post_opt (root): reads the job's measurement file, if this node has
 * it.  Always 0. */
int dtspank__measure_load(spank_t sp, const struct dtplan_config *c);

/* The file's text (owned here; NULL when there is none, *why says why). */
const char *dtspank__measure_text(const char **why);

/* True when there is none because no prolog could write it: *why names
 * the spool's fault (a link, full, not root's), not a missing prolog. */
bool dtspank__measure_fault(void);

void dtspank__measure_reset(void);

/* snprintf where truncation is acceptable (a reason quoting a long path) or
 * ruled out by the caller, without -Wformat-truncation guessing otherwise
 * (plugin/log_slurm.c). */
void dtspank__bprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Where torchrun meets, as the job says or else the plan. */
struct rendezvous {
	char master_addr[256]; /* the job's own MASTER_ADDR, "" when unset */
	char master_port[32];
	struct dtplan_launch_in launch; /* points into the above and the plan */
};

/* The plan's files: the JSON, and beside it what the frameworks read. */
struct plan_files {
	char json[4096];
	char hosts[4096];
	char deepspeed[4096];
	char svg[4096];
	struct rendezvous rdv; /* rdv.launch names the files written */
};

/*
 * Writes the plan's files as the job's user: the hostfile in rank order, the
 * DeepSpeed fragment and the SVG picture beside pf->json, then the JSON,
 * whose launch object names those written.  A file beside it that cannot be
 * written marks the plan degraded; without the JSON the others go too.
 * Returns 0 when the JSON was written, else -1 with the reason.
 */
int dtspank__write_plan_files(struct dtplan_plan *plan, struct plan_files *pf, uid_t uid,
			      char *reason, size_t size);

#endif /* DTPLAN_PLUGIN_H */
