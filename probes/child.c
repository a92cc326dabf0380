/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * child.c: the one bounded child process of libdtprobes: work forked off
 * the caller's process (slurmstepd, the prolog, the CLI) and bounded in
 * time, and in output where it answers on a pipe; a child that hangs,
 * crashes or says too much costs an error, never the caller.
 * probes_private.h documents it.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "dtprobes.h"
#include "probes_private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Bounded children
 * ---------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Kills and reaps a child that ran out of time or said too much. */
static void kill_child(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* Appends what the pipe holds to t (at most max bytes).  Returns 1 at the
 * end of the output, 0 when more may come, -1 (errno) on error, -2 when the
 * output passed max. */
static int collect(int fd, struct dtplan__text *t, size_t max)
{
	char chunk[16384];
	ssize_t n;

	do
		n = read(fd, chunk, sizeof(chunk));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	if (n == 0)
		return 1;
	if (t->len + (size_t)n > max)
		return -2;
	dtplan__text_put(t, chunk, (size_t)n);
	if (t->failed) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/*
 * A child dies of its own faults: the host's handlers (slurmstepd's, a test
 * framework's that would carry on running tests in the child) and its
 * blocked signals are not inherited.
 */
static void child_signals(void)
{
	static const int fatal[] = {SIGSEGV, SIGBUS,  SIGILL,  SIGFPE, SIGABRT,
				    SIGSYS,  SIGTERM, SIGALRM, SIGPIPE};
	sigset_t none;

	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(fatal); i++)
		signal(fatal[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * The one fork: runs fn(arg, fd) in a child, fd the write end of a pipe
 * whose output (at most max bytes) lands in *out when out is not NULL.
 * Waits at most timeout_s in all, polling; no signals or alarms in the parent.
 */
static enum dtplan_err run_child(int (*fn)(void *, int), void *arg, double timeout_s,
				 const char *what, size_t max, char **out, size_t *len,
				 struct dtplan_error *err)
{
	double deadline = now_s() + timeout_s;
	long pause_ns = 1000000; /* 1 ms, doubling up to 50 ms */
	struct dtplan__text buf = {0};
	int fds[2] = {-1, -1}, status = 0, got;
	enum dtplan_err rv;
	pid_t pid = -1;

	if (out != NULL)
		*out = NULL;
	if (len != NULL)
		*len = 0;
	if (out != NULL && pipe2(fds, O_CLOEXEC) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: cannot make a pipe: %s", what,
				   strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: cannot fork: %s", what,
				   strerror(errno));
		goto out;
	}
	if (pid == 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		child_signals();
		_exit(fn(arg, fds[1]) & 0xff);
	}
	if (fds[1] >= 0) {
		close(fds[1]);
		fds[1] = -1;
	}
	/* The output first (a child blocks on a full pipe), then the exit. */
	while (fds[0] >= 0) {
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		double left = deadline - now_s();

		if (left <= 0)
			goto timeout;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: poll: %s", what,
					   strerror(errno));
			goto kill;
		}
		if (pfd.revents == 0)
			continue;
		got = collect(fds[0], &buf, max);
		if (got == -2) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0,
					   "%s: more than %zu bytes of output; stopped it", what,
					   max);
			goto kill;
		}
		if (got < 0) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0,
					   "%s: cannot read its output: %s", what, strerror(errno));
			goto kill;
		}
		if (got == 1) {
			close(fds[0]);
			fds[0] = -1;
		}
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		struct timespec ts;

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: waitpid: %s", what,
					   strerror(errno));
			goto kill;
		}
		if (now_s() >= deadline)
			goto timeout;
		ts.tv_sec = 0;
		ts.tv_nsec = pause_ns;
		nanosleep(&ts, NULL);
		if (pause_ns < 50000000)
			pause_ns *= 2;
	}
	pid = -1;
	if (WIFSIGNALED(status)) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: killed by signal %d", what,
				   WTERMSIG(status));
		goto out;
	}
	if (WEXITSTATUS(status) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s failed (exit status %d)", what,
				   WEXITSTATUS(status));
		goto out;
	}
	if (out != NULL) {
		*out = buf.s; /* NULL when it wrote nothing */
		buf.s = NULL;
	}
	if (len != NULL)
		*len = buf.len;
	rv = DTPLAN_OK;
	goto out;
timeout:
	rv = dtplan__error(err, DTPLAN_ERR_TIMEOUT, NULL, 0,
			   "%s did not finish within %g s; stopped it", what, timeout_s);
kill:
	kill_child(pid);
	pid = -1;
out:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	dtplan__text_fini(&buf);
	return rv;
}

struct plain_call {
	dtprobe__child_fn fn;
	void *arg;
};

static int call_plain(void *argp, int fd)
{
	const struct plain_call *c = argp;

	(void)fd;
	return c->fn(c->arg);
}

enum dtplan_err dtprobe__run_bounded(dtprobe__child_fn fn, void *arg, double timeout_s,
				     const char *what, struct dtplan_error *err)
{
	struct plain_call c = {fn, arg};

	return run_child(call_plain, &c, timeout_s, what, 0, NULL, NULL, err);
}

enum dtplan_err dtprobe__run_bounded_out(dtprobe__child_out_fn fn, void *arg, double timeout_s,
					 const char *what, size_t max, char **out, size_t *len,
					 struct dtplan_error *err)
{
	if (out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0, "%s: no output", what);
	return run_child(fn, arg, timeout_s, what, max, out, len, err);
}

/* In the child: argv with its output on fd and /dev/null for its input. */
static int exec_argv(void *arg, int fd)
{
	char *const *argv = arg;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (dup2(fd, STDOUT_FILENO) < 0 || (null >= 0 && dup2(null, STDIN_FILENO) < 0))
		return 127;
	execvp(argv[0], argv);
	fprintf(stderr, "dtplan: cannot run %s: %s\n", argv[0], strerror(errno));
	return 127;
}

enum dtplan_err dtplan_run_capture(char *const argv[], double timeout_s, size_t max, char **out,
				   size_t *len, struct dtplan_error *err)
{
	if (out != NULL)
		*out = NULL;
	if (argv == NULL || argv[0] == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0, "no command or output");
	return run_child(exec_argv, (void *)argv, timeout_s, argv[0], max, out, len, err);
}
