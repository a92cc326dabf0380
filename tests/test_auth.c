/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_auth.c: the probe's MUNGE credentials (probes/auth.c) against a
 * munged of the test's own (a key, socket and log in a scratch folder,
 * stopped at the end): each credential names the one uid that may decode
 * it and lives a few budgets, and a credential that does not name the
 * receiver's uid is refused (issue 26).  Skipped (77) without munged;
 * decoding as another uid needs root (setuid to nobody), skipped otherwise.
 */
#include "test_common.h"

#include "dtprobes.h"

#include <errno.h>
#include <fcntl.h>
#include <munge.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOBODY 65534

static char dir[64], sock[128];
static pid_t munged = -1;

static const char *const munged_paths[] = {"/usr/sbin/munged", "/usr/local/sbin/munged",
					   "/sbin/munged"};

/* A munged in the foreground, with its files in dir; false when none starts. */
static bool munged_start(void)
{
	char key[128], pid[128], log[128], seed[128], a[4][160];
	const char *path = NULL;
	unsigned char bytes[1024];
	int fd, rnd;

	for (size_t i = 0; i < sizeof(munged_paths) / sizeof(munged_paths[0]); i++)
		if (access(munged_paths[i], X_OK) == 0)
			path = munged_paths[i];
	snprintf(dir, sizeof(dir), "/tmp/dtplan-test-munge.XXXXXX");
	if (path == NULL || mkdtemp(dir) == NULL || chmod(dir, 0755) != 0)
		return false;
	snprintf(sock, sizeof(sock), "%s/munge.socket", dir);
	snprintf(key, sizeof(key), "%s/munge.key", dir);
	snprintf(pid, sizeof(pid), "%s/munged.pid", dir);
	snprintf(log, sizeof(log), "%s/munged.log", dir);
	snprintf(seed, sizeof(seed), "%s/munged.seed", dir);
	rnd = open("/dev/urandom", O_RDONLY);
	fd = open(key, O_WRONLY | O_CREAT | O_EXCL, 0400);
	if (rnd < 0 || fd < 0 || read(rnd, bytes, sizeof(bytes)) != (ssize_t)sizeof(bytes) ||
	    write(fd, bytes, sizeof(bytes)) != (ssize_t)sizeof(bytes)) {
		if (rnd >= 0)
			close(rnd);
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(rnd);
	close(fd);
	snprintf(a[0], sizeof(a[0]), "--socket=%s", sock);
	snprintf(a[1], sizeof(a[1]), "--key-file=%s", key);
	snprintf(a[2], sizeof(a[2]), "--pid-file=%s", pid);
	snprintf(a[3], sizeof(a[3]), "--log-file=%s", log);
	munged = fork();
	if (munged < 0)
		return false;
	if (munged == 0) {
		char sarg[160];
		int null = open("/dev/null", O_RDWR);

		snprintf(sarg, sizeof(sarg), "--seed-file=%s", seed);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execl(path, path, "--foreground", a[0], a[1], a[2], a[3], sarg, (char *)NULL);
		_exit(127);
	}
	/* ready once it makes a credential */
	for (int i = 0; i < 200; i++) {
		munge_ctx_t c = munge_ctx_create();
		char *cred = NULL;
		bool ok = c != NULL && munge_ctx_set(c, MUNGE_OPT_SOCKET, sock) == EMUNGE_SUCCESS &&
			  munge_encode(&cred, c, NULL, 0) == EMUNGE_SUCCESS;
		struct timespec ts = {0, 20000000};

		free(cred);
		munge_ctx_destroy(c);
		if (ok)
			return true;
		if (waitpid(munged, NULL, WNOHANG) == munged) {
			munged = -1;
			return false;
		}
		nanosleep(&ts, NULL);
	}
	return false;
}

static void munged_stop(void)
{
	char cmd[128];

	if (munged > 0) {
		kill(munged, SIGTERM);
		waitpid(munged, NULL, 0);
		munged = -1;
	}
	if (dir[0] != '\0' && strncmp(dir, "/tmp/dtplan-test-munge.", 23) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "test_auth: cannot remove %s\n", dir);
	}
}

static int group_setup(void **state)
{
	(void)state;
	if (!munged_start()) {
		munged_stop();
		fprintf(stderr, "test_auth: no munged could start: skipped\n");
		exit(77);
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	munged_stop();
	return 0;
}

static struct dtplan_auth *auth_for(uid_t decoder, int ttl)
{
	struct dtplan_auth_munge_opts o = {sock, decoder, ttl};
	struct dtplan_auth *a = NULL;
	struct dtplan_error err = {0};

	if (dtplan_auth_munge_create(&o, &a, &err) != DTPLAN_OK)
		fail_msg("dtplan_auth_munge_create: %s", err.text);
	return a;
}

/* A credential made by dtplan_auth_munge_create()'s encode, as text. */
static char *make(uid_t decoder, int ttl, const char *payload)
{
	struct dtplan_auth *a = auth_for(decoder, ttl);
	struct dtplan_error err = {0};
	char *cred = NULL;

	if (a->encode(a, payload, strlen(payload), &cred, &err) != DTPLAN_OK)
		fail_msg("encode: %s", err.text);
	dtplan_auth_destroy(a);
	return cred;
}

static void auth_ttl__budgets__three_budgets_within_bounds(void **state)
{
	(void)state;
	assert_int_equal(dtplan_auth_ttl(0.5), DTPLAN_AUTH_TTL_MIN_S);
	assert_int_equal(dtplan_auth_ttl(3.4), 11);
	assert_int_equal(dtplan_auth_ttl(5.0), 15);
	assert_int_equal(dtplan_auth_ttl(120.0), DTPLAN_AUTH_TTL_MAX_S);
	assert_int_equal(dtplan_auth_ttl(NAN), DTPLAN_AUTH_TTL_MIN_S);
}

/* What munged itself says of a credential the probe made: the one uid that
 * may decode it and its time to live. */
static void encode__credential__restricted_to_the_decoder_with_the_ttl(void **state)
{
	char *cred = make(getuid(), 15, "seal");
	munge_ctx_t c = munge_ctx_create();
	uid_t uid = 1, restricted = 1;
	gid_t gid;
	void *payload = NULL;
	int len = 0, ttl = 0;

	(void)state;
	assert_non_null(c);
	assert_int_equal(munge_ctx_set(c, MUNGE_OPT_SOCKET, sock), EMUNGE_SUCCESS);
	assert_int_equal(munge_decode(cred, c, &payload, &len, &uid, &gid), EMUNGE_SUCCESS);
	assert_int_equal(munge_ctx_get(c, MUNGE_OPT_UID_RESTRICTION, &restricted), EMUNGE_SUCCESS);
	assert_int_equal(munge_ctx_get(c, MUNGE_OPT_TTL, &ttl), EMUNGE_SUCCESS);
	assert_int_equal(restricted, getuid());
	assert_int_equal(ttl, 15);
	assert_int_equal(uid, getuid());
	assert_int_equal(len, 4);
	assert_memory_equal(payload, "seal", 4);
	free(payload);
	free(cred);
	munge_ctx_destroy(c);
}

/* The same uid decodes it through the probe's own decode: payload and uid. */
static void decode__own_uid__payload_and_uid(void **state)
{
	char *cred = make(getuid(), 10, "seal");
	struct dtplan_auth *a = auth_for(getuid(), 10);
	struct dtplan_error err = {0};
	void *payload = NULL;
	size_t len = 0;
	uid_t uid = 1;

	(void)state;
	assert_int_equal(a->decode(a, cred, strlen(cred), &payload, &len, &uid, &err), DTPLAN_OK);
	assert_int_equal(uid, getuid());
	assert_int_equal(len, 4);
	assert_memory_equal(payload, "seal", 4);
	free(payload);
	free(cred);
	dtplan_auth_destroy(a);
}

/* A credential of the prolog's (for root) that reaches a user's process:
 * munged refuses to decode it for the user. */
static void decode__another_uid__refused_by_munged(void **state)
{
	char *cred;
	pid_t pid;
	int st = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	cred = make(0, 15, "seal");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct dtplan_auth *a = NULL;
		struct dtplan_auth_munge_opts o = {sock, NOBODY, 15};
		struct dtplan_error err = {0};
		void *payload = NULL;
		size_t len = 0;
		uid_t uid = 0;
		munge_ctx_t c;
		gid_t gid;
		int n = 0;
		munge_err_t e;

		if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(3);
		/* libmunge itself, then the probe's decode */
		c = munge_ctx_create();
		if (c == NULL || munge_ctx_set(c, MUNGE_OPT_SOCKET, sock) != EMUNGE_SUCCESS)
			_exit(4);
		e = munge_decode(cred, c, &payload, &n, &uid, &gid);
		munge_ctx_destroy(c);
		free(payload);
		payload = NULL;
		if (e != EMUNGE_CRED_UNAUTHORIZED) {
			fprintf(stderr, "munge_decode as nobody: %s\n", munge_strerror(e));
			_exit(5);
		}
		if (dtplan_auth_munge_create(&o, &a, &err) != DTPLAN_OK)
			_exit(6);
		if (a->decode(a, cred, strlen(cred), &payload, &len, &uid, &err) !=
			    DTPLAN_ERR_POLICY ||
		    payload != NULL || strstr(err.text, "Unauthorized") == NULL) {
			fprintf(stderr, "decode as nobody: %s\n", err.text);
			_exit(7);
		}
		dtplan_auth_destroy(a);
		free(cred);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	free(cred);
}

/* A credential any uid may decode (munge -n's kind), or one meant for
 * another uid: not the receiver's, refused, no payload. */
static void decode__not_restricted_to_the_receiver__refused(void **state)
{
	munge_ctx_t c = munge_ctx_create();
	struct dtplan_auth *a = auth_for(getuid(), 10);
	struct dtplan_error err = {0};
	char *cred = NULL;
	void *payload = NULL;
	size_t len = 0;
	uid_t uid = 1;

	(void)state;
	assert_non_null(c);
	assert_int_equal(munge_ctx_set(c, MUNGE_OPT_SOCKET, sock), EMUNGE_SUCCESS);
	assert_int_equal(munge_encode(&cred, c, "seal", 4), EMUNGE_SUCCESS);
	munge_ctx_destroy(c);
	assert_int_equal(a->decode(a, cred, strlen(cred), &payload, &len, &uid, &err),
			 DTPLAN_ERR_POLICY);
	assert_null(payload);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err.text, "any uid may decode"));
	free(cred);
	if (geteuid() == 0) {
		/* root decodes a credential made for nobody (munged lets root) only
		 * when munged allows it; either way the probe refuses it */
		cred = make(NOBODY, 10, "seal");
		memset(&err, 0, sizeof(err));
		assert_int_equal(a->decode(a, cred, strlen(cred), &payload, &len, &uid, &err),
				 DTPLAN_ERR_POLICY);
		assert_null(payload);
		free(cred);
	}
	dtplan_auth_destroy(a);
}

static void create__any_uid_or_no_options__refused(void **state)
{
	struct dtplan_auth_munge_opts o = {sock, (uid_t)MUNGE_UID_ANY, 10};
	struct dtplan_auth *a = (struct dtplan_auth *)&o;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_auth_munge_create(&o, &a, &err), DTPLAN_ERR_INVAL);
	assert_null(a);
	a = (struct dtplan_auth *)&o;
	assert_int_equal(dtplan_auth_munge_create(NULL, &a, &err), DTPLAN_ERR_INVAL);
	assert_null(a);
}

/* A report credential binds the body: the same body passes once, with the
 * maker's uid and an expiry DTPLAN_REPORT_CRED_TTL_S after now; another body
 * is "forged", a second check "replayed" (munged's replay cache), a
 * credential that is not one "forged", and no munged "munge". */
static void report_cred__body_bound__once(void **state)
{
	const char body[] = "{\"schema\":\"dtplan.report/1\"}", other[] = "{}";
	struct dtplan_report_cred rc;
	struct dtplan_error err = {0};
	const char *reason = "unset";
	long long now = (long long)time(NULL);
	char *cred = NULL, *cred2 = NULL;

	(void)state;
	assert_int_equal(dtplan_report_cred_make(sock, body, strlen(body), 0, &cred, &err),
			 DTPLAN_OK);
	assert_non_null(cred);
	assert_int_equal(dtplan_report_cred_check(sock, cred, other, strlen(other), &rc, &reason,
						  &err),
			 DTPLAN_ERR_POLICY);
	assert_string_equal(reason, "forged");
	assert_string_equal(err.text, "the credential is for another body");
	/* that check decoded it: munged now says it is replayed */
	assert_int_equal(dtplan_report_cred_check(sock, cred, body, strlen(body), &rc, &reason,
						  &err),
			 DTPLAN_ERR_POLICY);
	assert_string_equal(reason, "replayed");
	assert_int_equal(dtplan_report_cred_make(sock, body, strlen(body), 5.0, &cred2, &err),
			 DTPLAN_OK);
	assert_int_equal(dtplan_report_cred_check(sock, cred2, body, strlen(body), &rc, &reason,
						  &err),
			 DTPLAN_OK);
	assert_null(reason);
	assert_int_equal(rc.uid, getuid());
	assert_true(rc.expires >= now + DTPLAN_REPORT_CRED_TTL_S - 1);
	assert_true(rc.expires <= now + DTPLAN_REPORT_CRED_TTL_S + 2);
	assert_int_equal(strlen(rc.id), 64);
	assert_int_equal(dtplan_report_cred_check(sock, "MUNGE:garbage:", body, strlen(body), &rc,
						  &reason, &err),
			 DTPLAN_ERR_POLICY);
	assert_string_equal(reason, "forged");
	free(cred);
	assert_int_equal(dtplan_report_cred_make("/nonexistent/munge.socket", body, strlen(body),
						 5.0, &cred, &err),
			 DTPLAN_ERR_IO);
	assert_null(cred);
	assert_int_equal(dtplan_report_cred_check("/nonexistent/munge.socket", cred2, body,
						  strlen(body), &rc, &reason, &err),
			 DTPLAN_ERR_IO);
	assert_string_equal(reason, "munge");
	free(cred2);
}

/* A munged that takes the connection and never answers: libmunge (MUNGE
 * 0.5's munge_defs.h: five tries of a 2 s read) gives up after about 10 s,
 * which a post bounded by ReportTimeout= (2 s by default) must not wait
 * for.  Here the socket listens and never accepts, so connecting and
 * sending succeed and the answer never comes; the bound of 0.5 s holds to
 * within the child's start and stop, far from 10 s. */
static void report_cred__munged_never_answers__stopped_at_the_bound(void **state)
{
	const char body[] = "{\"schema\":\"dtplan.report/1\"}";
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct dtplan_error err = {0};
	struct timespec t0, t1;
	char *cred = NULL;
	double took;
	int fd;

	(void)state;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/wedged.socket", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(fd, 16), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(dtplan_report_cred_make(addr.sun_path, body, strlen(body), 0.5, &cred,
						 &err),
			 DTPLAN_ERR_TIMEOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_null(cred);
	assert_non_null(strstr(err.text, "did not answer within 0.50 s"));
	assert_non_null(strstr(err.text, "wedged.socket"));
	assert_true(took >= 0.5 && took < 4.0);
	close(fd);
	unlink(addr.sun_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(auth_ttl__budgets__three_budgets_within_bounds),
		cmocka_unit_test(encode__credential__restricted_to_the_decoder_with_the_ttl),
		cmocka_unit_test(decode__own_uid__payload_and_uid),
		cmocka_unit_test(decode__another_uid__refused_by_munged),
		cmocka_unit_test(decode__not_restricted_to_the_receiver__refused),
		cmocka_unit_test(create__any_uid_or_no_options__refused),
		cmocka_unit_test(report_cred__body_bound__once),
		cmocka_unit_test(report_cred__munged_never_answers__stopped_at_the_bound),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
