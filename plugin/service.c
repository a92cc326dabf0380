/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * service.c: the fabric service (FabricURL=) and the plans' collector
 * (ReportURL=) in slurmstepd.
 *
 * init_post_opt (root, before slurmstepd drops privileges):
 *   batch step  fetch the fabric through its cache (bounded by
 *               FabricTimeout=; the cache in a root-owned folder stays
 *               root's), and read the collector's token file.
 *   srun step   on the step's first node, read the token file (an srun step
 *               that recomputes the plan reports it).
 * user_init (as the user): remote.c plans with dtspank__service_fabric(),
 *   then hands the outcome to dtspank__service_report(), which posts it,
 *   bounded by ReportTimeout=.
 *
 * The post carries a MUNGE credential for its body (probes/http.c, from
 * MungeSocket=), made as this step runs: as the user in user_init, which a
 * collector takes for that user's reports.  Its making counts against
 * ReportTimeout=.
 *
 * Nothing here fails a job: a fault of the service is a warning in the plan,
 * a fault of the collector a line in the slurmd log.
 */
#include "config.h"

#include "plugin.h"
#include "dtprobes.h"

#include <slurm/slurm.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct plugin_ctx {
	bool fetched;                      /* fabric holds an outcome */
	struct dtplan_fabric_fetch fabric; /* owned */
	char *token;                       /* owned; wiped when freed */
} ctx;

/* The user's --dt-plan, or the site default for GPU jobs: might this step plan? */
static bool wants_plan(spank_t sp, const struct dtplan_config *c)
{
	const struct dtplan_opts *o;
	char gpus[32];

	dtspank__opts_from_env(sp);
	o = dtspank__opts();
	if (dtspank__opts_mode(o, c) == DTPLAN_MODE_OFF)
		return false;
	if (o->mode_given)
		return true;
	if (spank_getenv(sp, "SLURM_GPUS_ON_NODE", gpus, sizeof(gpus)) != ESPANK_SUCCESS)
		return false;
	return strtol(gpus, NULL, 10) > 0;
}

/* The fabric, read for the job's nodes (NULL: all; a job's part of a large
 * fabric is a small tree, dtplan_fabric_desc_parse_for()). */
static void fetch_fabric(const struct dtplan_config *c, bool offline, const char *nodes)
{
	struct dtplan_error err = {0};
	char buf[1024];

	if (dtplan_fabric_fetch_for(c, offline, nodes, &ctx.fabric, &err) != DTPLAN_OK) {
		slurm_error(DTPLAN_LOG_PREFIX "fabric: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
		return;
	}
	ctx.fetched = true;
	if (ctx.fabric.warning[0] != '\0')
		slurm_info(DTPLAN_LOG_PREFIX "%s", ctx.fabric.warning);
}

int dtspank__service_init_post_opt(spank_t sp, const struct dtplan_config *c)
{
	struct dtplan_error err = {0};
	uint32_t step = 0, node = 0;
	char buf[1024];

	if (c->fabric_url[0] == '\0' && c->report_url[0] == '\0')
		return 0;
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS || !wants_plan(sp, c))
		return 0;
	if (step != SLURM_BATCH_SCRIPT &&
	    (spank_get_item(sp, S_JOB_NODEID, &node) != ESPANK_SUCCESS || node != 0))
		return 0;
	if (step == SLURM_BATCH_SCRIPT && c->fabric_url[0] != '\0' && !ctx.fetched) {
		char *nodes = NULL;

		/* unset (not a batch job's environment): the whole answer */
		dtspank__job_getenv_alloc(sp, "SLURM_JOB_NODELIST", DTPLAN_NODELIST_MAX, &nodes);
		fetch_fabric(c, false, nodes != NULL && nodes[0] != '\0' ? nodes : NULL);
		free(nodes);
	}
	if (c->report_url[0] != '\0' && c->report_token_file[0] != '\0' && ctx.token == NULL &&
	    dtplan_http_read_token(c->report_token_file, &ctx.token, &err) != DTPLAN_OK)
		slurm_error(DTPLAN_LOG_PREFIX "report: token not used: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
	return 0;
}

const struct dtplan_fabric_fetch *dtspank__service_fabric(const struct dtplan_config *c,
							  bool may_ask, const char *nodes)
{
	if (c->fabric_url[0] == '\0')
		return NULL;
	/* Without init_post_opt's fetch (an srun step), the cache alone. */
	if (!ctx.fetched)
		fetch_fabric(c, !may_ask, nodes);
	return ctx.fetched ? &ctx.fabric : NULL;
}

/* The name of uid from the system's user database (NSS); -1 when it has none. */
static int user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	char pwbuf[4096];

	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &found) != 0 || found == NULL ||
	    snprintf(buf, size, "%s", found->pw_name) >= (int)size)
		return -1;
	return 0;
}

enum dtplan_err dtspank__service_post(const struct dtplan_config *c, const char *body,
				      const char *token, struct dtplan_error *err)
{
	struct dtplan_http_opts o;

	dtplan_http_opts_from_config(&o, c, c->report_timeout_s);
	o.bearer_token = token;
	return dtplan_http_post_json(c->report_url, &o, body, err);
}

void dtspank__service_report(spank_t sp, const struct dtplan_config *c,
			     const struct dtplan_report *in)
{
	struct dtplan_report r = *in;
	struct dtplan_error err = {0};
	char user[256], cluster[256], buf[1024], *body = NULL;

	if (c->report_url[0] == '\0')
		return;
	/* the job's environment has no SLURM_JOB_USER before the tasks start */
	if (spank_getenv(sp, "SLURM_JOB_USER", user, sizeof(user)) == ESPANK_SUCCESS)
		r.user = user;
	else if (r.uid >= 0 && user_name((uid_t)r.uid, user, sizeof(user)) == 0)
		r.user = user;
	if (spank_getenv(sp, "SLURM_CLUSTER_NAME", cluster, sizeof(cluster)) == ESPANK_SUCCESS)
		r.cluster = cluster;
	r.sender = "plugin";
	r.time = (double)time(NULL);
	if (dtplan_report_to_json(&r, &body, &err) != DTPLAN_OK) {
		slurm_info(DTPLAN_LOG_PREFIX "report: job %u: %s", r.job_id,
			   dtplan_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	if (dtspank__service_post(c, body, ctx.token, &err) != DTPLAN_OK)
		slurm_info(DTPLAN_LOG_PREFIX "report: cannot post the plan of job %u: %s", r.job_id,
			   dtplan_error_format(&err, buf, sizeof(buf)));
	else
		slurm_debug(DTPLAN_LOG_PREFIX "report: plan of job %u posted to %s", r.job_id,
			    c->report_url);
out:
	free(body);
}

void dtspank__service_exit(void)
{
	dtplan_fabric_fetch_fini(&ctx.fabric);
	if (ctx.token != NULL) {
		memset(ctx.token, 0, strlen(ctx.token));
		free(ctx.token);
	}
	memset(&ctx, 0, sizeof(ctx));
}
