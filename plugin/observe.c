/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * observe.c: what a job measured becomes its record, in the epilog.
 *
 * remote init_post_opt (root, batch step): opens spool_dir/JOBID.observe,
 *   root's (0600), and keeps it open.
 * user_init (the user's euid, batch step): once the plan file is written,
 *   says in it where the job's files are: the plan, the DTPLAN_OBSERVE
 *   file, the record database (RecordDB=, else the user's own), the user.
 * task_init (the batch script's process, before execve): the job's output,
 *   read from /proc/self/fd/1 (the file Slurm opened for it).
 * epilog (root, the batch node): reads and removes that file, then in a
 *   child that has become the job's user (and can read only what the user
 *   can), bounded by ObserveBudget (ReportTimeout= plus a second): the
 *   record from the job's files (dtplan_job_observe(), never following a
 *   link, never opening a FIFO, within each file's limit), stored in the
 *   database, posted to ReportURL= as dtplan.observation/1, and "planned
 *   X, measured Y (+Z%)" appended to the job's output.  What it says comes
 *   back through a pipe to the slurmd log.  Nothing here fails the job or
 *   the epilog.
 */
#include "config.h"

#include "plugin.h"
#include "dtprobes.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <slurm/slurm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define bprintf dtspank__bprintf

/* The spool file's largest size: a few paths. */
#define TICKET_MAX (64 << 10)
/* Beyond ReportTimeout=, what the child may take: the database's busy wait
 * and reading the files. */
#define OBSERVE_SLACK_S 1.0

static struct plugin_ctx {
	int fd; /* spool_dir/JOBID.observe, -1 none */
} ctx = {.fd = -1};

static int ticket_path(const struct dtplan_config *c, uint32_t job_id, char *buf, size_t size)
{
	if (c->spool_dir[0] == '\0' ||
	    snprintf(buf, size, "%s/%u.observe", c->spool_dir, job_id) >= (int)size)
		return -1;
	return 0;
}

int dtspank__observe_init_post_opt(spank_t sp, const struct dtplan_config *c)
{
	uint32_t job_id = 0, step = 0;
	char path[4096];
	struct stat st;

	if (ctx.fd >= 0 || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    step != SLURM_BATCH_SCRIPT || spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
	    ticket_path(c, job_id, path, sizeof(path)) != 0)
		return 0;
	/* the prolog's spool: root's, nobody else may write in it */
	if (lstat(c->spool_dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		return 0;
	(void)unlink(path); /* a requeued job's */
	ctx.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
	if (ctx.fd < 0)
		slurm_verbose(DTPLAN_LOG_PREFIX "observe: cannot create %s: %s", path,
			      strerror(errno));
	return 0;
}

/* One "key=value" line; values with a newline are not written. */
static void put(const char *key, const char *value)
{
	char line[4200];
	int n;

	if (ctx.fd < 0 || value == NULL || value[0] == '\0' || strchr(value, '\n') != NULL)
		return;
	n = snprintf(line, sizeof(line), "%s=%s\n", key, value);
	if (n > 0 && n < (int)sizeof(line) && write(ctx.fd, line, (size_t)n) != n)
		slurm_verbose(DTPLAN_LOG_PREFIX "observe: cannot write: %s", strerror(errno));
}

static void job_env(spank_t sp, const char *name, char *buf, size_t size)
{
	if (spank_getenv(sp, name, buf, (int)size) != ESPANK_SUCCESS)
		buf[0] = '\0';
}

/* The record database of the job's user: RecordDB=, else their own. */
static int record_db(spank_t sp, const struct dtplan_config *c, char *buf, size_t size)
{
	char xdg[4096], home[4096];

	if (c->record_db[0] != '\0') {
		bprintf(buf, size, "%s", c->record_db);
		return 0;
	}
	job_env(sp, "XDG_STATE_HOME", xdg, sizeof(xdg));
	job_env(sp, "HOME", home, sizeof(home));
	return dtplan_recdb_default_path(xdg, home, buf, size, NULL) == DTPLAN_OK ? 0 : -1;
}

int dtspank__observe_calibration(spank_t sp, const struct dtplan_config *c,
				 struct dtplan_calibration *cal)
{
	struct dtplan_error err = {0};
	struct dtplan_recdb *db = NULL;
	struct dtplan_record *recs = NULL;
	char path[4096], cluster[256], buf[1024];
	enum dtplan_err rv;
	size_t n = 0;

	memset(cal, 0, sizeof(*cal));
	if (record_db(sp, c, path, sizeof(path)) != 0)
		return -1;
	job_env(sp, "SLURM_CLUSTER_NAME", cluster, sizeof(cluster));
	rv = dtplan_recdb_open(path, false, &db, &err);
	if (rv == DTPLAN_OK)
		rv = dtplan_recdb_list(db, cluster, &recs, &n, &err);
	if (rv == DTPLAN_OK)
		rv = dtplan_calibration_learn(recs, n, cluster, cal, &err);
	dtplan_recdb_close(db);
	free(recs);
	if (rv == DTPLAN_OK)
		return 0;
	if (rv != DTPLAN_ERR_NOT_FOUND)
		slurm_spank_log(DTPLAN_LOG_PREFIX "records not used: %s",
				dtplan_error_format(&err, buf, sizeof(buf)));
	return -1;
}

void dtspank__observe_plan(spank_t sp, const struct dtplan_config *c, const char *plan_path,
			   uid_t uid, const char *submit_dir)
{
	char buf[4096], num[32];
	gid_t gid = 0;

	if (ctx.fd < 0)
		return;
	bprintf(num, sizeof(num), "%u", (unsigned)uid);
	put("uid", num);
	if (spank_get_item(sp, S_JOB_GID, &gid) == ESPANK_SUCCESS) {
		bprintf(num, sizeof(num), "%u", (unsigned)gid);
		put("gid", num);
	}
	job_env(sp, "SLURM_CLUSTER_NAME", buf, sizeof(buf));
	put("cluster", buf);
	job_env(sp, "SLURM_JOB_USER", buf, sizeof(buf));
	put("user", buf);
	put("plan", plan_path);
	job_env(sp, DTPLAN_OBSERVE_ENV, buf, sizeof(buf));
	if (buf[0] != '\0' && buf[0] != '/' && submit_dir[0] == '/') {
		char rel[4096];

		bprintf(rel, sizeof(rel), "%s", buf);
		bprintf(buf, sizeof(buf), "%s/%s", submit_dir, rel);
	}
	put("observe", buf);
	if (record_db(sp, c, buf, sizeof(buf)) == 0)
		put("record_db", buf);
}

void dtspank__observe_task(spank_t sp)
{
	uint32_t step = 0;
	int task = 0;
	char path[4096];
	ssize_t n;

	if (ctx.fd < 0 || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    step != SLURM_BATCH_SCRIPT ||
	    (spank_get_item(sp, S_TASK_ID, &task) == ESPANK_SUCCESS && task != 0))
		return;
	n = readlink("/proc/self/fd/1", path, sizeof(path) - 1);
	if (n > 0 && path[0] == '/') {
		path[n] = '\0';
		put("output", path);
	}
	close(ctx.fd); /* the task's copy: the script never gets it */
	ctx.fd = -1;
}

void dtspank__observe_exit(void)
{
	if (ctx.fd >= 0)
		close(ctx.fd);
	ctx.fd = -1;
}

/* ------------------------------------------------------------------------
 * The epilog
 * ---------------------------------------------------------------------- */

struct ticket {
	uid_t uid;
	gid_t gid;
	bool have_uid, have_gid;
	char user[64], cluster[64];
	char plan[4096], observe[4096], output[4096], record_db[4096];
};

static void ticket_parse(char *text, struct ticket *t)
{
	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char *eq = strchr(line, '='), *end;
		unsigned long v;

		if (eq == NULL)
			continue;
		*eq++ = '\0';
		if (strcmp(line, "uid") == 0 || strcmp(line, "gid") == 0) {
			errno = 0;
			v = strtoul(eq, &end, 10);
			if (errno != 0 || *end != '\0' || v > 0xfffffffeUL)
				continue;
			if (line[0] == 'u') {
				t->uid = (uid_t)v;
				t->have_uid = true;
			} else {
				t->gid = (gid_t)v;
				t->have_gid = true;
			}
		}
#define FIELD(name) else if (strcmp(line, #name) == 0) bprintf(t->name, sizeof(t->name), "%s", eq)
		FIELD(user);
		FIELD(cluster);
		FIELD(plan);
		FIELD(observe);
		FIELD(output);
		FIELD(record_db);
#undef FIELD
	}
}

/* The child's messages to the epilog, one line each: "E text" for an error,
 * "I text" for the rest. */
static int say_fd = -1;
static void say(char level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(char level, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	buf[0] = level;
	buf[1] = ' ';
	va_start(ap, fmt);
	n = vsnprintf(buf + 2, sizeof(buf) - 3, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = (int)strlen(buf);
	for (char *s = buf + 2; *s != '\0'; s++)
		if (*s == '\n')
			*s = ' ';
	buf[n++] = '\n';
	if (say_fd >= 0 && write(say_fd, buf, (size_t)n) != n)
		return;
}

/* Appends line to the job's output: a regular file, never through a link. */
static void append_output(const char *path, const char *line)
{
	struct stat st;
	size_t len = strlen(line);
	int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		say('I', "cannot append to %s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		say('E', "%s is not a regular file: nothing appended", path);
	else if (write(fd, line, len) != (ssize_t)len)
		say('I', "cannot append to %s: %s", path, strerror(errno));
	close(fd);
}

static void child_work(const struct dtplan_config *c, uint32_t job_id, const struct ticket *t,
		       const char *token)
{
	const struct dtplan_job_files f = {
		.plan = t->plan,
		.observe = t->observe[0] != '\0' ? t->observe : NULL,
		.output = t->output[0] != '\0' ? t->output : NULL,
	};
	struct dtplan_record r;
	struct dtplan_error err = {0};
	struct dtplan_recdb *db = NULL;
	char source[32], notes[2048], buf[1024], p[32], m[32], line[256], *body = NULL;

	if (dtplan_job_observe(&f, t->cluster, &r, source, sizeof(source), notes, sizeof(notes),
			       &err) != DTPLAN_OK) {
		if (notes[0] != '\0')
			say('E', "epilog: job %u: %s", job_id, notes);
		say('I', "epilog: job %u: no record: %s", job_id,
		    dtplan_error_format(&err, buf, sizeof(buf)));
		return;
	}
	if (notes[0] != '\0')
		say('E', "epilog: job %u: %s", job_id, notes);
	r.job_id = job_id;
	r.time = (int64_t)time(NULL);
	bprintf(r.user, sizeof(r.user), "%s", t->user);
	bprintf(line, sizeof(line), DTPLAN_LOG_PREFIX "planned %s, measured %s (%+.0f%%)\n",
		dtplan_format_time(r.predicted_step_s, p, sizeof(p)),
		dtplan_format_time(r.measured_step_s, m, sizeof(m)),
		(r.measured_step_s / r.predicted_step_s - 1.0) * 100.0);
	if (f.output != NULL)
		append_output(f.output, line);
	say('I', "epilog: job %u: %.*s from %lld steps (%s)", job_id,
	    (int)(strlen(line) - strlen(DTPLAN_LOG_PREFIX) - 1), line + strlen(DTPLAN_LOG_PREFIX),
	    (long long)r.steps, source);
	if (t->record_db[0] == '\0')
		say('I', "epilog: job %u: no record database", job_id);
	else if (dtplan_recdb_open(t->record_db, true, &db, &err) != DTPLAN_OK ||
		 dtplan_recdb_add(db, &r, &err) != DTPLAN_OK)
		say('E', "epilog: job %u: record not stored: %s", job_id,
		    dtplan_error_format(&err, buf, sizeof(buf)));
	dtplan_recdb_close(db);
	if (c->report_url[0] == '\0')
		return;
	if (dtplan_observation_to_json(&r, &body, &err) != DTPLAN_OK ||
	    dtspank__service_post(c, body, token, &err) != DTPLAN_OK)
		say('I', "epilog: job %u: observation not posted: %s", job_id,
		    dtplan_error_format(&err, buf, sizeof(buf)));
	free(body);
}

/* The child: the job's user, then the work.  Never returns. */
static void child(const struct dtplan_config *c, uint32_t job_id, const struct ticket *t,
		  const char *token, int fd, double budget)
{
	say_fd = fd;
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm((unsigned)ceil(budget) + 1); /* the parent kills it first */
	if (setgroups(0, NULL) != 0 || setgid(t->gid) != 0 || setuid(t->uid) != 0 ||
	    getuid() != t->uid || geteuid() != t->uid || (t->uid != 0 && setuid(0) == 0)) {
		say('E', "epilog: job %u: cannot become uid %u: %s", job_id, (unsigned)t->uid,
		    strerror(errno));
		_exit(1);
	}
	child_work(c, job_id, t, token);
	_exit(0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The child's lines into the slurmd log, until it ends or the budget does. */
static void relay(int fd, pid_t pid, uint32_t job_id, double budget)
{
	double end = now_s() + budget;
	char buf[8192];
	size_t have = 0;
	int status;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		double left = end - now_s();
		ssize_t n;
		char *nl;

		if (left <= 0.0) {
			kill(pid, SIGKILL);
			slurm_error(DTPLAN_LOG_PREFIX "epilog: job %u: observing took more than "
						      "%.1f s: stopped, no record",
				    job_id, budget);
			break;
		}
		if (poll(&pfd, 1, (int)(left * 1000.0) + 1) < 0 && errno != EINTR)
			break;
		if (!(pfd.revents & (POLLIN | POLLHUP)))
			continue;
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(buf, '\n')) != NULL) {
			*nl = '\0';
			if (buf[0] == 'E')
				slurm_error(DTPLAN_LOG_PREFIX "%s", buf + 2);
			else
				slurm_info(DTPLAN_LOG_PREFIX "%s", buf + 2);
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
		if (have == sizeof(buf) - 1)
			have = 0; /* a line too long: dropped */
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

void dtspank__observe_epilog(const struct dtplan_config *c, uint32_t job_id)
{
	struct dtplan_error err = {0};
	struct ticket t = {0};
	char path[4096], buf[1024], *text = NULL, *token = NULL;
	double budget = c->report_timeout_s + OBSERVE_SLACK_S;
	struct stat st;
	int fds[2] = {-1, -1};
	pid_t pid;

	if (ticket_path(c, job_id, path, sizeof(path)) != 0 || lstat(path, &st) != 0)
		return;
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077) != 0) {
		slurm_error(DTPLAN_LOG_PREFIX "epilog: %s is not root's own file: removed, "
					      "not read",
			    path);
		(void)unlink(path);
		return;
	}
	if (dtplan_observe_read(path, TICKET_MAX, false, &text, NULL, NULL, &err) != DTPLAN_OK) {
		slurm_error(DTPLAN_LOG_PREFIX "epilog: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
		(void)unlink(path);
		return;
	}
	(void)unlink(path);
	ticket_parse(text, &t);
	free(text);
	if (t.plan[0] == '\0' || !t.have_uid || !t.have_gid)
		return; /* no plan file, nothing to compare with */
	if (c->report_url[0] != '\0' && c->report_token_file[0] != '\0' &&
	    dtplan_http_read_token(c->report_token_file, &token, &err) != DTPLAN_OK)
		slurm_error(DTPLAN_LOG_PREFIX "epilog: token not used: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
	if (pipe2(fds, O_CLOEXEC) != 0) {
		slurm_error(DTPLAN_LOG_PREFIX "epilog: pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		slurm_error(DTPLAN_LOG_PREFIX "epilog: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		child(c, job_id, &t, token, fds[1], budget);
	}
	close(fds[1]);
	fds[1] = -1;
	relay(fds[0], pid, job_id, budget);
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (token != NULL) {
		memset(token, 0, strlen(token));
		free(token);
	}
}
