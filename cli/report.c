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
	struct dtplan_error cerr = {0};
	char pwbuf[4096], host[256], *body = NULL, *cred = NULL;
	struct timespec t0, t1;
	double spent;
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
	/* the credential binds this body; without munged the post goes without
	 * one, and a collector that wants one says so */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (dtplan_report_cred_make(c->munge_socket, body, strlen(body), &cred, &cerr) != DTPLAN_OK)
		cred = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	spent = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (spent >= timeout_s) {
		rv = DTPLAN_ERR_TIMEOUT;
		if (err != NULL) {
			memset(err, 0, sizeof(*err));
			err->code = rv;
			snprintf(err->source, sizeof(err->source), "%s", url);
			snprintf(err->text, sizeof(err->text),
				 "no credential within %g s (munged is slow)", timeout_s);
		}
		goto out;
	}
	dtplan_http_opts_from_config(&o, c, timeout_s - spent);
	o.bearer_token = token;
	o.credential = cred;
	rv = dtplan_http_post_json(url, &o, body, err);
	if (rv != DTPLAN_OK && cred == NULL && err != NULL) {
		size_t n = strlen(err->text);

		snprintf(err->text + n, sizeof(err->text) - n, " (posted without a credential: %s)",
			 cerr.text);
	}
out:
	free(cred);
	free(body);
	return rv;
}
