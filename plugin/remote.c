/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * remote.c: slurmstepd.
 *
 * user_init (as the user, every step):
 *   batch step  make the plan for the allocation (with the fabric service's
 *               fabric when FabricURL= is set, service.c), log it into the
 *               job's output, write dtplan-<jobid>.json and beside it .hosts,
 *               .deepspeed.json and .svg, export DT_* / MASTER_* / PET_*,
 *               say in one line what the frameworks' launch lines add, and
 *               report the plan to ReportURL=.
 *   srun step   read the plan back from $DTPLAN_FILE (or, without one,
 *               recompute it the same way) for task_init.
 * task_init (in each task, as the user): RANK and friends in plan order, and
 *             with nccl_ib_hca=node the node's NICs in NCCL_IB_HCA.
 *
 * Nothing here may stop the job for a failure of ours: user_init always
 * returns 0 (spank(7): a failing user_init of a batch job drains the node)
 * and logs "dtplan: plan degraded: <reason>".  A plan refused by strict mode
 * or policy=deny ends every task of every step in task_init (refuse_task()),
 * which fails the job or the step and does not drain.
 */
#include "config.h"

#include "plugin.h"
#include "dtprobes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Slurm 23.11 made hostlist_t the struct itself, where earlier releases
 * typedef a pointer to it; the slurm_hostlist_* calls take and return a
 * pointer either way.  slurm_version.h says which headers we were given.
 */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
typedef hostlist_t *hostlist_ref;
#else
typedef hostlist_t hostlist_ref;
#endif

static struct plugin_ctx {
	uint32_t job_id;
	uint32_t step_id;
	struct dtplan_plan *plan; /* owned */
	bool refused;
	char reason[512];
} ctx;

#define bprintf dtspank__bprintf

/* Facts about the job, read once in user_init. */
struct job_facts {
	uint32_t job_id;
	uint32_t step_id;
	uint32_t restart_count;
	uid_t uid;
	int gpus_on_node; /* 0: none or unknown */
	char *nodelist;   /* owned; "" when unset (nodelist_rc says why) */
	spank_err_t nodelist_rc;
	char submit_dir[4096];
	char topology_addr[256];
	char host[64]; /* this node */
};

/* spank_getenv into buf; "" when absent or too long. */
static void job_getenv(spank_t sp, const char *name, char *buf, size_t size)
{
	if (spank_getenv(sp, name, buf, (int)size) != ESPANK_SUCCESS)
		buf[0] = '\0';
}

/* Logs a job item Slurm did not give; returns rc. */
static spank_err_t item_failed(const char *phase, const char *name, spank_err_t rc)
{
	if (rc != ESPANK_SUCCESS)
		slurm_error(DTPLAN_LOG_PREFIX "%s: cannot read %s: %s", phase, name,
			    spank_strerror(rc));
	return rc;
}

/* The job's facts; -1 (logged) when Slurm does not give its id, step or
 * owner: nothing can be planned or written safely then. */
static int read_facts(spank_t sp, struct job_facts *f)
{
	char buf[64];
	long v;

	memset(f, 0, sizeof(*f));
	f->step_id = SLURM_BATCH_SCRIPT;
	if (item_failed("user_init", "the job id", spank_get_item(sp, S_JOB_ID, &f->job_id)) ||
	    item_failed("user_init", "the step id",
			spank_get_item(sp, S_JOB_STEPID, &f->step_id)) ||
	    item_failed("user_init", "the job's user", spank_get_item(sp, S_JOB_UID, &f->uid)))
		return -1;
	/* Only the requeue count names the plan file: 0 when unknown.  The
	 * batch step of a requeued job may report 0 for the item (its plan then
	 * went to a fresh random name, issue 26); Slurm sets SLURM_RESTART_COUNT
	 * in a requeued job's environment, so that is read as well. */
	if (spank_get_item(sp, S_SLURM_RESTART_COUNT, &f->restart_count) != ESPANK_SUCCESS)
		f->restart_count = 0;
	job_getenv(sp, "SLURM_RESTART_COUNT", buf, sizeof(buf));
	if (f->restart_count == 0 &&
	    dtplan_parse_long(buf, "SLURM_RESTART_COUNT", 0, UINT32_MAX, &v, NULL) == DTPLAN_OK)
		f->restart_count = (uint32_t)v;
	job_getenv(sp, "SLURM_GPUS_ON_NODE", buf, sizeof(buf));
	if (dtplan_parse_long(buf, "SLURM_GPUS_ON_NODE", 0, DTPLAN_NODE_MAX_GPUS, &v, NULL) ==
	    DTPLAN_OK)
		f->gpus_on_node = (int)v;
	/* S_JOB_NNODES is 0 in the batch step: the node list is the truth. */
	f->nodelist_rc = dtspank__job_getenv_alloc(sp, "SLURM_JOB_NODELIST", DTPLAN_NODELIST_MAX,
						   &f->nodelist);
	if (f->nodelist == NULL) {
		slurm_error(DTPLAN_LOG_PREFIX "user_init: out of memory");
		return -1;
	}
	job_getenv(sp, "SLURM_SUBMIT_DIR", f->submit_dir, sizeof(f->submit_dir));
	job_getenv(sp, "SLURM_TOPOLOGY_ADDR", f->topology_addr, sizeof(f->topology_addr));
	/* spank_getenv("SLURMD_NODENAME") gives the batch node on every node;
	 * slurmstepd's own environment has the right one. */
	snprintf(f->host, sizeof(f->host), "%s",
		 getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "");
	if (f->host[0] == '\0' && gethostname(f->host, sizeof(f->host)) != 0)
		f->host[0] = '\0';
	f->host[sizeof(f->host) - 1] = '\0';
	return 0;
}

/* Expands the job's node list with Slurm's own parser.  Caller frees *names. */
static int expand_nodes(const struct job_facts *f, char (**names)[64], size_t *n, char *reason,
			size_t size)
{
	hostlist_ref hl = NULL;
	char *host;
	int count, rv = -1;

	*names = NULL;
	*n = 0;
	if (f->nodelist_rc == ESPANK_NOSPACE) {
		bprintf(reason, size, "SLURM_JOB_NODELIST is longer than %d characters",
			DTPLAN_NODELIST_MAX - 1);
		goto out;
	}
	if (f->nodelist[0] == '\0') {
		bprintf(reason, size, "SLURM_JOB_NODELIST is not set");
		goto out;
	}
	hl = slurm_hostlist_create(f->nodelist);
	count = hl ? slurm_hostlist_count(hl) : 0;
	if (count <= 0) {
		bprintf(reason, size, "cannot expand node list '%.200s'", f->nodelist);
		goto out;
	}
	if (count > DTPLAN_HOSTLIST_MAX) {
		bprintf(reason, size, "the job has %d nodes, more than the %d dtplan plans for",
			count, DTPLAN_HOSTLIST_MAX);
		goto out;
	}
	*names = calloc((size_t)count, sizeof(**names));
	if (*names == NULL) {
		bprintf(reason, size, "out of memory");
		goto out;
	}
	while ((host = slurm_hostlist_shift(hl)) != NULL) {
		if (*n < (size_t)count)
			snprintf((*names)[(*n)++], sizeof((*names)[0]), "%s", host);
		free(host);
	}
	rv = 0;
out:
	if (hl != NULL)
		slurm_hostlist_destroy(hl);
	if (rv != 0) {
		free(*names);
		*names = NULL;
		*n = 0;
	}
	return rv;
}

/*
 * The prolog's measurement, when this node holds it (plugin/measure.c read
 * it as root); otherwise an empty one with a note saying why.  *m NULL only
 * when out of memory.
 */
static void measurement(const struct job_facts *f, char (*names)[64], size_t n,
			struct dtplan_measure_file *file, char *why, size_t size)
{
	struct dtplan_error err = {0};
	const char *reason = NULL, *text = dtspank__measure_text(&reason);
	char buf[1024];

	memset(file, 0, sizeof(*file));
	why[0] = '\0';
	if (text != NULL && dtplan_measure_file_from_json(text, file, &err) == DTPLAN_OK) {
		if (file->job_id == f->job_id)
			return;
		bprintf(why, size, " (the measurement file is job %u's)", file->job_id);
		dtplan_measure_file_fini(file);
	} else if (text != NULL) {
		bprintf(why, size, " (the prolog's measurement does not read: %s)",
			dtplan_error_format(&err, buf, sizeof(buf)));
	} else if (n > 0 && strcmp(names[0], f->host) != 0) {
		/* the first node leads the measurement and keeps its file */
		bprintf(why, size,
			" (the prolog's measurement stays on %s, the job's first node; "
			"the batch step runs on %s)",
			names[0], f->host);
	} else if (dtspank__measure_fault()) {
		/* a measurement that failed: the plan is degraded naming the spool */
		bprintf(why, size, " (%s)", reason);
		file->m = dtplan_measurements_create(n, (const char(*)[64])names);
		if (file->m != NULL) {
			snprintf(file->m->source, sizeof(file->m->source), "prolog");
			bprintf(file->m->failed, sizeof(file->m->failed), "%s", reason);
		}
		return;
	} else {
		bprintf(why, size, " (%s: is PrologFlags=Alloc set in slurm.conf?)", reason);
	}
	file->m = dtplan_measurements_create(n, (const char(*)[64])names);
	if (file->m != NULL)
		dtplan_measurements_add_note(file->m, "nothing measured%s", why);
}

/* What make_plan()'s callbacks need. */
struct plan_io {
	spank_t sp;
	const struct dtplan_config *site;
};

/* The request of the job's --dt-* options on the effective settings c. */
static enum dtplan_err plan_request(void *arg, const struct dtplan_config *c,
				    struct dtplan_request *req, struct dtplan_error *err)
{
	(void)arg;
	return dtspank__opts_request(dtspank__opts(), c, req, err);
}

/* What the user's earlier jobs measured (as the user: their records). */
static int plan_calibrate(void *arg, struct dtplan_calibration *cal)
{
	const struct plan_io *io = arg;

	return dtspank__observe_calibration(io->sp, io->site, cal);
}

/* A fault that changes nothing (MTBF=slurm's cache), in the job's log. */
static void plan_warn(void *arg, const char *text)
{
	(void)arg;
	slurm_spank_log(DTPLAN_LOG_PREFIX "%s", text);
}

/*
 * Makes the plan for the job's allocation from the prolog's measurement,
 * assembled by probes/allocation.c as the CLI's is (the service's fabric
 * replaces topology.conf and, as JSON, the site file's fabric part; without
 * it, the files and a warning).  Returns it, or NULL with the reason.
 * Problems that still leave a plan (no topology file) mark it degraded
 * instead.
 */
static struct dtplan_plan *make_plan(spank_t sp, const struct dtplan_config *site,
				     const struct job_facts *f, char (*names)[64], size_t n,
				     bool may_ask, char *reason, size_t size)
{
	struct plan_io pio = {sp, site};
	struct dtplan_allocation_in in = {0};
	struct dtplan_allocation a;
	struct dtplan_inventory_opts io = {0};
	struct dtplan_measure_file file = {0};
	struct dtplan_plan *plan = NULL;
	struct dtplan_request req;
	struct dtplan_error err = {0};
	char why[600];

	in.fabric =
		dtspank__service_fabric(site, may_ask, f->nodelist[0] != '\0' ? f->nodelist : NULL);
	measurement(f, names, n, &file, why, sizeof(why));
	io.n_hosts = n;
	io.hosts = (const char(*)[64])names;
	io.self = f->host;
	io.assume_like = f->host;
	io.assumed_why = why[0] ? why : " (not measured by the prolog)";
	in.strict = false;
	in.site = site;
	in.request = plan_request;
	in.site_files = true;
	in.nodes = &io;
	in.self = f->host;
	in.gpus_per_node = f->gpus_on_node; /* 0 when Slurm did not say */
	in.measured = &file;
	/* unless the job asked for the model alone (--dt-train calibration=off) */
	in.calibrate = plan_calibrate;
	in.warn = plan_warn;
	in.arg = &pio;
	dtplan_request_init(&req);
	dtplan_allocation_init(&a);
	if (dtplan_allocation_plan(&a, &in, &req, &plan, &err) != DTPLAN_OK)
		dtplan_error_format(&err, reason, size);
	dtplan_measure_file_fini(&file);
	dtplan_allocation_fini(&a);
	return plan;
}

/* The rendezvous torchrun gets: the job's own MASTER_ADDR and MASTER_PORT
 * when it has them, else the plan's.  No files yet. */
static void rendezvous_init(spank_t sp, const struct job_facts *f, const struct dtplan_plan *plan,
			    struct rendezvous *rv)
{
	job_getenv(sp, "MASTER_ADDR", rv->master_addr, sizeof(rv->master_addr));
	job_getenv(sp, "MASTER_PORT", rv->master_port, sizeof(rv->master_port));
	dtplan_launch_in_init(&rv->launch, plan, f->job_id, rv->master_addr, rv->master_port);
}

/*
 * Copies env into the job (user_init) or the task (task_init).  A variable
 * the user owns (dtplan_env_user_owned()) keeps the value the job already
 * has; with tell, the job log says so when that value differs from the plan's.
 */
static void apply_env(spank_t sp, const struct dtplan_env *env, bool tell)
{
	char mine[1024];

	for (size_t i = 0; i < env->n; i++) {
		const char *name = env->vars[i].name, *value = env->vars[i].value;
		bool user_owned = dtplan_env_user_owned(name);
		spank_err_t rc = spank_setenv(sp, name, value, user_owned ? 0 : 1);

		if (rc == ESPANK_ENV_EXISTS && user_owned) {
			if (!tell)
				continue;
			if (spank_getenv(sp, name, mine, sizeof(mine)) != ESPANK_SUCCESS)
				slurm_spank_log(DTPLAN_LOG_PREFIX "keeping the job's own %s (the "
								  "plan's: %s)",
						name, value);
			else if (strcmp(mine, value) != 0)
				slurm_spank_log(DTPLAN_LOG_PREFIX "keeping the job's own %s=%s "
								  "(the plan's: %s)",
						name, mine, value);
			continue;
		}
		if (rc != ESPANK_SUCCESS)
			slurm_error(DTPLAN_LOG_PREFIX "cannot set %s: %s", name,
				    spank_strerror(rc));
	}
}

/* Sets the job-wide variables; reason NULL when the plan is fine.  tell: this
 * node reports kept user values (apply_env()).  launch: the rendezvous and
 * files for the frameworks (NULL: the plan's, no files). */
static void export_job(spank_t sp, const struct job_facts *f, const struct dtplan_plan *plan,
		       const char *plan_file, char (*names)[64], size_t n, const char *reason,
		       bool tell, const struct dtplan_launch_in *launch)
{
	struct dtplan_job_env_in in = {0};
	struct dtplan_env env;
	struct dtplan_error err = {0};
	char buf[1024];

	dtplan_env_init(&env);
	in.plan = plan;
	in.job_id = f->job_id;
	in.plan_file = plan_file;
	in.nodes = (const char(*)[64])names;
	in.n_nodes = n;
	in.reason = ctx.refused ? ctx.reason : reason;
	in.refused = ctx.refused;
	in.launch = launch;
	if (dtplan_env_job(&in, &env, &err) != DTPLAN_OK)
		slurm_error(DTPLAN_LOG_PREFIX "plan degraded: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
	else
		apply_env(sp, &env, tell);
	dtplan_env_fini(&env);
}

static void plan_file_path(const struct dtplan_config *c, const struct job_facts *f, char *path,
			   size_t size)
{
	const char *dir = c->json_dir[0] ? c->json_dir : f->submit_dir;

	path[0] = '\0';
	if (dir[0] == '\0')
		return;
	/* A requeued job keeps its id: give each run its own file. */
	if (f->restart_count > 0)
		bprintf(path, size, "%s/dtplan-%u.%u.json", dir, f->job_id, f->restart_count);
	else
		bprintf(path, size, "%s/dtplan-%u.json", dir, f->job_id);
}

/*
 * Tells the collector (ReportURL=) how this step's planning went: the plan
 * (NULL: none could be made, for reason) as its file has it (with launch's
 * part when not NULL), its state and the job's facts.
 */
static void report(spank_t sp, const struct dtplan_config *c, const struct job_facts *f,
		   const struct dtplan_plan *plan, const struct dtplan_launch_in *launch,
		   const char *reason)
{
	struct dtplan_report r = {0};
	struct dtplan_error err = {0};
	char *json = NULL, buf[1024];
	enum dtplan_err rv = DTPLAN_OK;

	if (c->report_url[0] == '\0')
		return;
	if (plan != NULL && launch != NULL)
		rv = dtplan_plan_to_json_launch(plan, launch, false, &json, &err);
	else if (plan != NULL)
		rv = dtplan_plan_to_json(plan, false, &json, &err);
	if (rv != DTPLAN_OK) {
		slurm_info(DTPLAN_LOG_PREFIX "report: job %u: %s", f->job_id,
			   dtplan_error_format(&err, buf, sizeof(buf)));
		return;
	}
	r.plan_json = json;

	r.job_id = f->job_id;
	r.uid = (long)f->uid;
	r.nodes = f->nodelist[0] != '\0' ? f->nodelist : NULL;
	r.host = f->host[0] != '\0' ? f->host : NULL;
	if (ctx.refused) {
		r.state = "refused";
		r.reason = ctx.reason;
	} else if (plan == NULL || plan->degraded) {
		r.state = "degraded";
		r.reason = plan != NULL ? plan->degraded_reason : reason;
	} else {
		r.state = "ok";
	}
	dtspank__service_report(sp, c, &r);
	free(json);
}

/* Says in one line of the job log what the frameworks' launch lines need. */
static void log_launch_hint(const struct dtplan_plan *plan, const struct dtplan_launch_in *l)
{
	char *hint = NULL;

	if (dtplan_launch_hint(plan, l, &hint, NULL) == DTPLAN_OK)
		slurm_spank_log(DTPLAN_LOG_PREFIX "%s", hint);
	free(hint);
}

/* The batch step on the first node: plan, log, files, environment, report. */
static void batch_user_init(spank_t sp, const struct dtplan_config *c, const struct job_facts *f,
			    enum dtplan_mode mode)
{
	struct dtplan_error err = {0};
	struct plan_files *pf = NULL;
	char(*names)[64] = NULL;
	char reason[1024] = "", *text = NULL;
	const char *file = NULL;
	size_t n = 0;

	/* what etc/cli_filter.lua did about --segment at submission, and why
	 * (passed on by plugin/local.c) */
	job_getenv(sp, "SLURM_SPANK_DTPLAN_SEGMENT_REASON", reason, sizeof(reason));
	if (reason[0] != '\0')
		slurm_spank_log(DTPLAN_LOG_PREFIX "at submission: %s", reason);
	reason[0] = '\0';
	if (expand_nodes(f, &names, &n, reason, sizeof(reason)) != 0)
		goto degraded;
	ctx.plan = make_plan(sp, c, f, names, n, true, reason, sizeof(reason));
	if (ctx.plan == NULL)
		goto degraded;
	ctx.refused =
		dtplan_plan_refused(ctx.plan, mode, c->policy, ctx.reason, sizeof(ctx.reason));
	if (dtplan_plan_render_text(ctx.plan, &text, &err) == DTPLAN_OK)
		dtspank__log_block(text);
	if (ctx.refused)
		slurm_error(DTPLAN_LOG_PREFIX "plan refused (%s): %s",
			    mode == DTPLAN_MODE_STRICT ? "--dt-plan=strict" : "policy=deny",
			    ctx.reason);
	pf = calloc(1, sizeof(*pf));
	if (pf == NULL) {
		bprintf(reason, sizeof(reason), "out of memory");
		dtplan_plan_set_degraded(ctx.plan, "%s", reason);
		slurm_spank_log(DTPLAN_LOG_PREFIX "plan degraded: %s", reason);
		export_job(sp, f, ctx.plan, NULL, names, n, NULL, true, NULL);
		report(sp, c, f, ctx.plan, NULL, NULL);
		goto out;
	}
	rendezvous_init(sp, f, ctx.plan, &pf->rdv);
	plan_file_path(c, f, pf->json, sizeof(pf->json));
	if (pf->json[0] == '\0')
		bprintf(reason, sizeof(reason), "no SLURM_SUBMIT_DIR and no json_dir");
	else if (dtspank__write_plan_files(ctx.plan, pf, f->uid, reason, sizeof(reason)) == 0)
		file = pf->json;
	if (file != NULL && !ctx.refused)
		dtspank__observe_plan(sp, c, file, f->uid, f->submit_dir);
	if (file == NULL)
		dtplan_plan_set_degraded(ctx.plan, "%s", reason);
	if (ctx.plan->degraded)
		slurm_spank_log(DTPLAN_LOG_PREFIX "plan degraded: %s", ctx.plan->degraded_reason);
	export_job(sp, f, ctx.plan, file, names, n, NULL, true, &pf->rdv.launch);
	if (!ctx.refused)
		log_launch_hint(ctx.plan, &pf->rdv.launch);
	report(sp, c, f, ctx.plan, &pf->rdv.launch, NULL);
	goto out;
degraded:
	slurm_spank_log(DTPLAN_LOG_PREFIX "plan degraded: %s", reason);
	export_job(sp, f, NULL, NULL, names, n, reason, true, NULL);
	report(sp, c, f, NULL, NULL, reason);
out:
	free(pf);
	free(text);
	free(names);
}

/*
 * Reads the batch step's plan back.  Returns it or NULL with the reason;
 * *missing tells a file that could not be read from one that holds no
 * usable plan (recomputing would not do better then).
 */
static struct dtplan_plan *read_plan_file(const char *path, bool *missing, char *reason,
					  size_t size)
{
	struct dtplan_plan *plan = NULL;
	struct dtplan_error err = {0};
	char *text = NULL, buf[1024];
	size_t len = 0;

	*missing = true;
	/* Regular files only, within DTPLAN_FILE_PLAN's limit: a FIFO, a device
	 * or a huge file named by DTPLAN_FILE neither blocks nor exhausts the step. */
	if (dtplan_file_read(path, DTPLAN_FILE_PLAN, &text, &len, &err) != DTPLAN_OK) {
		bprintf(reason, size, "%s", dtplan_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	if (len == 0) {
		bprintf(reason, size, "%s: empty plan file", path);
		goto out;
	}
	*missing = false;
	if (dtplan_plan_ranks_from_json(text, &plan, &err) != DTPLAN_OK)
		bprintf(reason, size, "%s: %s", path, dtplan_error_format(&err, buf, sizeof(buf)));
out:
	free(text);
	return plan;
}

/* An srun step: the batch step's plan, or the same computation again (for
 * salloc, or when the file could not be written). */
static void step_user_init(spank_t sp, const struct dtplan_config *c, const struct job_facts *f,
			   enum dtplan_mode mode)
{
	char(*names)[64] = NULL;
	char path[4096], state[32], reason[1024] = "";
	uint32_t node_id = 0;
	bool missing = true;
	size_t n = 0;

	/* Which node of the step: node 0 says what the others need not. */
	if (item_failed("user_init", "the node's index in the step",
			spank_get_item(sp, S_JOB_NODEID, &node_id)))
		node_id = 0;
	job_getenv(sp, "DTPLAN_PLAN_STATE", state, sizeof(state));
	if (strcmp(state, "refused") == 0) {
		ctx.refused = true;
		job_getenv(sp, "DTPLAN_PLAN_REASON", ctx.reason, sizeof(ctx.reason));
		return;
	}
	job_getenv(sp, "DTPLAN_FILE", path, sizeof(path));
	if (path[0] != '\0') {
		ctx.plan = read_plan_file(path, &missing, reason, sizeof(reason));
		if (ctx.plan != NULL)
			return;
		if (!missing) {
			if (node_id == 0)
				slurm_spank_log(DTPLAN_LOG_PREFIX "plan degraded: %s", reason);
			return;
		}
		/* DTPLAN_FILE is the user's to change: say why it was not used. */
		if (node_id == 0)
			slurm_spank_log(DTPLAN_LOG_PREFIX "plan file not read (%s): computing the "
							  "plan again",
					reason);
	} else if (state[0] != '\0') {
		/* The batch step tried and logged why; do not repeat it per step. */
		return;
	}
	if (expand_nodes(f, &names, &n, reason, sizeof(reason)) == 0)
		ctx.plan = make_plan(sp, c, f, names, n, false, reason, sizeof(reason));
	if (ctx.plan != NULL) {
		struct rendezvous rdv;

		ctx.refused = dtplan_plan_refused(ctx.plan, mode, c->policy, ctx.reason,
						  sizeof(ctx.reason));
		rendezvous_init(sp, f, ctx.plan, &rdv);
		export_job(sp, f, ctx.plan, NULL, names, n, NULL, node_id == 0, &rdv.launch);
	} else if (node_id == 0) {
		slurm_spank_log(DTPLAN_LOG_PREFIX "plan degraded: %s", reason);
	}
	/* Every node computed the same plan: the first one reports it. */
	if (node_id == 0)
		report(sp, c, f, ctx.plan, NULL, reason);
	free(names);
}

int dtspank__remote_user_init(spank_t sp, const struct dtplan_config *c)
{
	const struct dtplan_opts *o;
	struct job_facts f = {0};
	enum dtplan_mode mode;

	dtspank__opts_from_env(sp);
	o = dtspank__opts();
	mode = dtspank__opts_mode(o, c);
	if (mode == DTPLAN_MODE_OFF)
		goto out;
	if (read_facts(sp, &f) != 0)
		goto out; /* logged; the job runs without a plan */
	ctx.job_id = f.job_id;
	ctx.step_id = f.step_id;
	/* The site default applies to GPU jobs only. */
	if (!o->mode_given && f.gpus_on_node <= 0)
		goto out;
	/* Every step that runs the user's tasks: salloc's interactive step
	 * too, so that a refused plan ends the salloc session there. */
	if (f.step_id == SLURM_BATCH_SCRIPT)
		batch_user_init(sp, c, &f, mode);
	else if (f.step_id != SLURM_EXTERN_CONT)
		step_user_init(sp, c, &f, mode);
out:
	free(f.nodelist);
	return 0;
}

/*
 * Ends a task of a refused plan, in every step: the batch script, an srun
 * step (in a batch job, under salloc or on its own) and salloc's interactive
 * step.  A failing task_init cannot do it: Slurm ignores every callback's
 * failure of a plugin loaded "optional" (spank.c's _do_call_stack() keeps the
 * return code only for "required" ones), and 22.05 runs the batch script
 * even when a required one fails.  task_init runs in the task's own process,
 * forked by slurmstepd just before execve, so ending that process fails the
 * task (exit status 1) and leaves slurmstepd and the node alone: no drain.
 */
static void refuse_task(spank_t sp) __attribute__((noreturn));
static void refuse_task(spank_t sp)
{
	int task_id = 0;

	if (spank_get_item(sp, S_TASK_ID, &task_id) != ESPANK_SUCCESS)
		task_id = 0;
	slurm_error(DTPLAN_LOG_PREFIX "job refused: %s", ctx.reason);
	/* _exit skips the log's buffers: say it once per node on the task's
	 * stderr too, which is the job's log or srun's terminal. */
	if (task_id == 0) {
		fprintf(stderr, DTPLAN_LOG_PREFIX "job refused: %s\n", ctx.reason);
		fflush(stderr);
	}
	_exit(1);
}

int dtspank__remote_task_init(spank_t sp, const struct dtplan_config *c)
{
	struct dtplan_task_env_in in = {0};
	struct dtplan_env env;
	struct dtplan_error err = {0};
	uint32_t count = 0, nnodes = 0;
	char buf[1024];
	int task_id = 0;

	if (ctx.refused)
		refuse_task(sp);
	if (ctx.plan == NULL || ctx.step_id == SLURM_BATCH_SCRIPT ||
	    ctx.step_id == SLURM_INTERACTIVE_STEP)
		return 0;
	if (item_failed("task_init", "the task id", spank_get_item(sp, S_TASK_ID, &task_id)) ||
	    item_failed("task_init", "the node's task count",
			spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &count)))
		return 0; /* logged; the task runs without rank variables */
	/* 0: the step's node count is unknown and not checked */
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS)
		nnodes = 0;
	in.host = getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "";
	in.local_id = task_id;
	in.local_count = (int)count;
	in.step_nodes = (int)nnodes;
	in.nccl_ib_hca = c->nccl_ib_hca;
	dtplan_env_init(&env);
	if (dtplan_env_task(ctx.plan, &in, &env, &err) != DTPLAN_OK) {
		/* Once per node is enough. */
		if (task_id == 0)
			slurm_spank_log(DTPLAN_LOG_PREFIX "plan degraded: rank environment not "
							  "set: %s",
					dtplan_error_format(&err, buf, sizeof(buf)));
	} else {
		apply_env(sp, &env, task_id == 0); /* once per node */
	}
	dtplan_env_fini(&env);
	return 0;
}

void dtspank__remote_exit(void)
{
	dtplan_plan_destroy(ctx.plan);
	memset(&ctx, 0, sizeof(ctx));
}
