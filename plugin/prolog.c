/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prolog.c: the job prolog and epilog (job_script context: root, a fresh
 * process per run, no slurm_spank_init, plugstack arguments in argv).
 *
 * Prolog: with PrologFlags=Alloc it runs on every node of the allocation at
 * once.  For a job that wants a plan, each node takes part in measuring the
 * allocation (probes/rendezvous.c, doc/internals/probe.md): its inventory
 * (node_xml= or live), the fan-in tree, the link rounds.  The work runs in
 * a child process watched by this one: the child gets probe_budget=, is
 * killed half a second after it, and whatever happens the prolog returns 0
 * (a failing prolog drains the node).  The first node of the job's node
 * list leads and writes spool_dir/JOBID.json (root's, mode 0600), which the
 * batch step reads while still root (plugin/measure.c).  With cache_dir=
 * the node's hwloc XML is also cached there, as before.
 *
 * Epilog: the job's record from what it measured (observe.c), then removes
 * the job's measurement file, and files in the spool older than a week
 * (jobs whose epilog never ran).
 */
#include "config.h"

#include "plugin.h"
#include "dtprobes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long the prolog waits beyond the budget before it kills the work. */
#define GRACE_S 0.5
/* Spool files older than this are a dead job's. */
#define STALE_S (7 * 24 * 3600)

/* True when the job asked for a plan, or the site plans GPU jobs by default. */
static bool job_wants_plan(spank_t sp, const struct dtplan_config *c)
{
	struct spank_option plan = {"dt-plan", "auto|strict|off", "", 2, 0, NULL};
	struct spank_option model = {"dt-model", "SPEC", "", 1, 0, NULL};
	char *arg = NULL;
	enum dtplan_mode mode;
	const char *gpus = getenv("SLURM_JOB_GPUS");

	if (spank_option_getopt(sp, &plan, &arg) == ESPANK_SUCCESS) {
		if (arg == NULL || arg[0] == '\0')
			return true;
		return dtplan_mode_parse(arg, &mode, NULL) == DTPLAN_OK && mode != DTPLAN_MODE_OFF;
	}
	if (spank_option_getopt(sp, &model, &arg) == ESPANK_SUCCESS)
		return true;
	/* the site default applies to GPU jobs only */
	return c->default_mode != DTPLAN_MODE_OFF && gpus != NULL && gpus[0] != '\0';
}

/* ------------------------------------------------------------------------
 * The spool
 * ---------------------------------------------------------------------- */

/* The spool folder exists, is a folder of root's and nobody else may write
 * in it; made (0700) when missing.  -1 logged otherwise. */
static int spool_ready(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: cannot create spool_dir %s: %s", dir,
			    strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: spool_dir %s is not a folder of root's "
					      "that only root may write: not used",
			    dir);
		return -1;
	}
	return 0;
}

int dtspank__spool_path(const struct dtplan_config *c, uint32_t job_id, char *buf, size_t size)
{
	if (c->spool_dir[0] == '\0' ||
	    snprintf(buf, size, "%s/%u.json", c->spool_dir, job_id) >= (int)size)
		return -1;
	return 0;
}

/* Writes text to the job's spool file atomically (a temporary file renamed
 * over it), mode 0600. */
static int spool_write(const struct dtplan_config *c, uint32_t job_id, const char *text)
{
	char path[4096], tmp[4096];
	size_t len = strlen(text), done = 0;
	int fd, rv = -1;

	if (spool_ready(c->spool_dir) != 0 ||
	    dtspank__spool_path(c, job_id, path, sizeof(path)) != 0 ||
	    snprintf(tmp, sizeof(tmp), "%s/.%u.json.XXXXXX", c->spool_dir, job_id) >=
		    (int)sizeof(tmp))
		return -1;
	fd = mkstemp(tmp);
	if (fd < 0) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: cannot create a file in %s: %s",
			    c->spool_dir, strerror(errno));
		return -1;
	}
	fchmod(fd, 0600);
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (close(fd) == 0 && done == len && rename(tmp, path) == 0)
		rv = 0;
	else
		slurm_error(DTPLAN_LOG_PREFIX "prolog: cannot write %s: %s", path, strerror(errno));
	if (rv != 0)
		unlink(tmp);
	return rv;
}

/* Removes spool files older than STALE_S (and not a link or a folder). */
static void spool_clean(const struct dtplan_config *c)
{
	DIR *d = opendir(c->spool_dir);
	struct dirent *de;
	time_t now = time(NULL);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		size_t n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && now - st.st_mtime > STALE_S)
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

/* ------------------------------------------------------------------------
 * The measurement, in a watched child
 * ---------------------------------------------------------------------- */

struct prolog_work {
	const struct dtplan_config *c;
	uint32_t job_id;
	char (*hosts)[64];
	size_t n_hosts;
	uint32_t self;
	double start;
};

static bool spool_has(const struct prolog_work *w)
{
	char path[4096];
	struct stat st;

	return dtspank__spool_path(w->c, w->job_id, path, sizeof(path)) == 0 &&
	       lstat(path, &st) == 0;
}

/*
 * The leader's measurement when the run measured nothing: the hosts and
 * why (ports, MUNGE, the budget), which the batch step's plan names as its
 * degraded reason instead of guessing at PrologFlags.  Returns 0 when
 * written (spool_write() logged otherwise).
 */
static int spool_failed(const struct prolog_work *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int spool_failed(const struct prolog_work *w, const char *fmt, ...)
{
	struct dtplan_measure_file f = {0};
	struct dtplan_error err = {0};
	char *text = NULL, buf[1024];
	va_list ap;
	int rc = -1;

	f.job_id = w->job_id;
	f.m = dtplan_measurements_create(w->n_hosts, (const char(*)[64])w->hosts);
	if (f.m == NULL)
		goto out;
	snprintf(f.m->source, sizeof(f.m->source), "prolog");
	f.m->budget_s = w->c->probe_budget_s;
	f.m->elapsed_s = dtplan_probe_clock() - w->start;
	va_start(ap, fmt);
	vsnprintf(f.m->failed, sizeof(f.m->failed), fmt, ap);
	va_end(ap);
	if (dtplan_measure_file_to_json(&f, &text, &err) != DTPLAN_OK)
		slurm_error(DTPLAN_LOG_PREFIX "prolog: job %u: %s", w->job_id,
			    dtplan_error_format(&err, buf, sizeof(buf)));
	else
		rc = spool_write(w->c, w->job_id, text);
out:
	free(text);
	dtplan_measure_file_fini(&f);
	return rc;
}

/* This node's inventory: node_xml= when the site names one, else live. */
static enum dtplan_err discover(void *arg, struct dtplan_node *out, struct dtplan_error *err)
{
	const struct prolog_work *w = arg;
	struct dtplan_discover_opts d = {0};
	char path[4096];

	if (w->c->node_xml[0] != '\0') {
		if (dtplan_inventory_node_xml(w->c->node_xml, w->hosts[w->self], path, sizeof(path),
					      err) != DTPLAN_OK)
			return err != NULL ? err->code : DTPLAN_ERR_INVAL;
		return dtplan_node_from_xml(path, out, err);
	}
	d.hostname = w->hosts[w->self];
	/* a share of the budget: the rounds need the rest */
	d.timeout_s = 0.3 * w->c->probe_budget_s;
	return dtplan_node_discover(&d, out, err);
}

/* The child: runs this node's part; the leader writes the file. */
static int measure_child(const struct prolog_work *w)
{
	struct dtplan_probe_opts o = {0};
	struct dtplan_measure_file f = {0};
	struct dtplan_topology *topo = NULL;
	struct dtplan_auth *auth = NULL;
	/* root's messages, for root's prologs only */
	struct dtplan_auth_munge_opts ao = {w->c->munge_socket, 0,
					    dtplan_auth_ttl(w->c->probe_budget_s)};
	struct dtplan_slurm_conf sc = {0};
	char(*addrs)[64] = NULL;
	struct dtplan_error err = {0};
	char *text = NULL, buf[1024];
	int rc = 1;

	prctl(PR_SET_NAME, "dtplan-probe", 0, 0, 0);
	/* Slurm's own MUNGE socket when the site names none; the nodes'
	 * NodeAddr for names that do not resolve */
	if (dtspank__slurm_conf(w->c, &sc) == 0) {
		if (ao.socket[0] == '\0')
			ao.socket = sc.auth_socket;
		if (sc.n_nodes > 0 && (addrs = calloc(w->n_hosts, sizeof(*addrs))) != NULL)
			for (size_t i = 0; i < w->n_hosts; i++) {
				const char *a = dtplan_slurm_conf_node_addr(&sc, w->hosts[i]);

				if (a != NULL)
					snprintf(addrs[i], sizeof(addrs[i]), "%s", a);
			}
	}
	if (dtplan_auth_munge_create(&ao, &auth, &err) != DTPLAN_OK) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
		if (w->self == 0)
			spool_failed(w, "%s: no MUNGE credentials: %s", w->hosts[0], err.text);
		goto out;
	}
	if (w->self == 0 && w->c->topology_file[0] != '\0' &&
	    dtplan_topology_parse_file(w->c->topology_file, &topo, &err) != DTPLAN_OK)
		slurm_info(DTPLAN_LOG_PREFIX "prolog: topology %s: %s: the links are grouped in "
					     "no leaves",
			   w->c->topology_file, dtplan_error_format(&err, buf, sizeof(buf)));
	o.source = "prolog";
	o.job_id = w->job_id;
	o.session = 0;
	o.n_hosts = w->n_hosts;
	o.hosts = (const char(*)[64])w->hosts;
	o.self = w->self;
	o.uid = 0;
	o.auth = auth;
	o.port_lo = (uint16_t)w->c->probe_ports[0];
	o.port_hi = (uint16_t)w->c->probe_ports[1];
	o.interface = w->c->probe_interface;
	dtplan_probe_params_init(&o.params);
	o.params.budget_s = w->c->probe_budget_s;
	o.params.fanout = (uint32_t)w->c->probe_fanout;
	o.start_s = w->start;
	o.discover = discover;
	o.discover_arg = (void *)w;
	o.topology = topo;
	o.node_addrs = (const char(*)[64])addrs;
	if (dtplan_probe_run(&o, &f, &err) != DTPLAN_OK) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: job %u: %s", w->job_id,
			    dtplan_error_format(&err, buf, sizeof(buf)));
		/* the leader's failure is the whole measurement's: say it */
		if (w->self == 0)
			spool_failed(w, "%s: %s", w->hosts[0], err.text);
		goto out;
	}
	rc = 0;
	if (w->self != 0)
		goto out;
	if (dtplan_measure_file_to_json(&f, &text, &err) != DTPLAN_OK ||
	    spool_write(w->c, w->job_id, text) != 0)
		rc = 1;
	else
		slurm_info(DTPLAN_LOG_PREFIX "prolog: job %u: %zu of %zu nodes measured in %.2f s",
			   w->job_id, f.m->n_reported, f.m->n_nodes, f.m->elapsed_s);
out:
	free(text);
	dtplan_measure_file_fini(&f);
	dtplan_topology_destroy(topo);
	dtplan_auth_destroy(auth);
	free(addrs);
	dtplan_slurm_conf_fini(&sc);
	return rc;
}

/* Runs the measurement in a child and waits for it until the budget plus
 * GRACE_S; kills it then. */
static void measure(const struct prolog_work *w)
{
	double deadline = w->start + w->c->probe_budget_s + GRACE_S;
	int status = 0;
	pid_t pid = fork();

	if (pid < 0) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: cannot fork: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		_exit(measure_child(w));
	for (;;) {
		struct timespec ts = {0, 10000000};
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (dtplan_probe_clock() >= deadline) {
			slurm_error(DTPLAN_LOG_PREFIX "prolog: job %u: the measurement ran past "
						      "its %g s budget: stopped",
				    w->job_id, w->c->probe_budget_s);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			if (w->self == 0 && !spool_has(w))
				spool_failed(w,
					     "%s: the measurement ran past its %g s budget and "
					     "was stopped",
					     w->hosts[0], w->c->probe_budget_s);
			return;
		}
		nanosleep(&ts, NULL);
	}
	if (WIFSIGNALED(status))
		slurm_error(DTPLAN_LOG_PREFIX "prolog: job %u: the measurement was killed (signal "
					      "%d)",
			    w->job_id, WTERMSIG(status));
	/* the child records the failures it knows; this is for the others */
	if (w->self == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0) && !spool_has(w))
		spool_failed(w, "%s: the measurement %s (its slurmd log says more)", w->hosts[0],
			     WIFSIGNALED(status) ? "was killed" : "failed");
}

/* The job's nodes and this node's index in them; -1 logged. */
static int job_nodes(struct prolog_work *w)
{
	const char *list = getenv("SLURM_JOB_NODELIST"), *me = getenv("SLURMD_NODENAME");
	struct dtplan_error err = {0};
	char buf[1024];

	if (list == NULL || list[0] == '\0')
		list = getenv("SLURM_NODELIST");
	if (list == NULL || list[0] == '\0' || me == NULL || me[0] == '\0') {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: job %u: no node list or node name in the "
					      "environment: not measured",
			    w->job_id);
		return -1;
	}
	if (dtplan_hostlist_expand(list, DTPLAN_HOSTLIST_MAX, &w->hosts, &w->n_hosts, &err) !=
	    DTPLAN_OK) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: job %u: node list '%s': %s", w->job_id, list,
			    dtplan_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	for (size_t i = 0; i < w->n_hosts; i++)
		if (strcmp(w->hosts[i], me) == 0) {
			w->self = (uint32_t)i;
			return 0;
		}
	slurm_error(DTPLAN_LOG_PREFIX "prolog: job %u: %s is not in the node list '%s'", w->job_id,
		    me, list);
	return -1;
}

int dtspank__prolog(spank_t sp, int ac, char **av)
{
	struct dtplan_config config;
	struct dtplan_error err = {0};
	struct prolog_work w = {0};
	const char *host = getenv("SLURMD_NODENAME");
	char buf[1024];

	dtspank__log_install();
	dtplan_config_init(&config);
	w.start = dtplan_probe_clock();
	w.c = &config;
	if (dtspank__config_load(&config, ac, av) != 0 || !job_wants_plan(sp, &config))
		goto out;
	if (spank_get_item(sp, S_JOB_ID, &w.job_id) != ESPANK_SUCCESS) {
		slurm_error(DTPLAN_LOG_PREFIX "prolog: cannot read the job id: not measured");
		goto cache;
	}
	/* spool_dir= empty: the site measures nothing (the batch step takes
	 * node_xml=, cache_dir=, then a live discovery, and the site's fabric) */
	if (config.spool_dir[0] != '\0' && job_nodes(&w) == 0) {
		if (w.self == 0)
			spool_clean(&config);
		measure(&w);
	}
cache:
	if (config.cache_dir[0] != '\0' &&
	    dtplan_node_cache_write(config.cache_dir, host, config.probe_timeout_s, &err) !=
		    DTPLAN_OK)
		slurm_error(DTPLAN_LOG_PREFIX "prolog: cannot cache node %s in %s: %s",
			    host ? host : "(this node)", config.cache_dir,
			    dtplan_error_format(&err, buf, sizeof(buf)));
out:
	free(w.hosts);
	dtplan_config_fini(&config);
	return 0;
}

int dtspank__epilog(spank_t sp, int ac, char **av)
{
	struct dtplan_config config;
	uint32_t job_id = 0;
	char path[4096];

	dtspank__log_install();
	dtplan_config_init(&config);
	if (dtspank__config_load(&config, ac, av) == 0 &&
	    spank_get_item(sp, S_JOB_ID, &job_id) == ESPANK_SUCCESS &&
	    dtspank__spool_path(&config, job_id, path, sizeof(path)) == 0) {
		dtspank__observe_epilog(&config, job_id);
		if (unlink(path) != 0 && errno != ENOENT)
			slurm_error(DTPLAN_LOG_PREFIX "epilog: cannot remove %s: %s", path,
				    strerror(errno));
		spool_clean(&config);
	}
	dtplan_config_fini(&config);
	return 0;
}
