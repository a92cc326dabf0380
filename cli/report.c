/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c: one plan report for a collector, from the command line
 * ("dtplan report", "dtplan plan --report-url").
 */
#include "config.h"

#include "cli.h"
#include "dtprobes.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum dtplan_err cli_report_post(const struct dtplan_config *c, const char *url, const char *sender,
				const char *plan_json, uint32_t job_id, const char *token,
				double timeout_s, struct dtplan_error *err)
{
	struct dtplan_report r = {0};
	struct dtplan_http_opts o;
	struct passwd pw, *found = NULL;
	char pwbuf[4096], host[256], *body = NULL;
	enum dtplan_err rv;

	r.plan_json = plan_json;
	r.job_id = job_id;
	r.uid = (long)getuid();
	if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found != NULL)
		r.user = found->pw_name;
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		r.host = host;
	}
	r.cluster = getenv("SLURM_CLUSTER_NAME");
	r.sender = sender;
	r.time = (double)time(NULL);
	rv = dtplan_report_to_json(&r, &body, err);
	if (rv != DTPLAN_OK)
		goto out;
	dtplan_http_opts_from_config(&o, c, timeout_s);
	o.bearer_token = token;
	rv = dtplan_http_post_json(url, &o, body, err);
out:
	free(body);
	return rv;
}
