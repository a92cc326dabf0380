/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth.c: the probe's credentials with MUNGE, Slurm's own authentication:
 * munged runs on every Slurm node and shares one key, so a credential made
 * on one node proves to another which uid made it and that nobody changed
 * its payload (the seal of lib/measure/wire.c).  munged refuses to decode a
 * credential twice (EMUNGE_CRED_REPLAYED), so a captured message cannot be
 * sent again.  The only libmunge user of the tree.
 *
 * Every credential made here names the one uid that may decode it
 * (MUNGE_OPT_UID_RESTRICTION: root for the prolog's messages, the user for
 * dtplan probe's) and lives a few budgets (MUNGE_OPT_TTL), not munged's
 * default five minutes: one that reaches another process, whatever the
 * port it listened on, is of no use to it (issue 26).  A receiver refuses a
 * credential that its own uid did not have to be named for: one that any
 * uid could decode was made by something that is not a probe of this run.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <munge.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct munge_auth {
	munge_ctx_t enc; /* munge_decode() rewrites its context: one each */
	munge_ctx_t dec;
	char socket[256]; /* "" libmunge's default */
	uid_t decoder;    /* who may decode what enc makes, and what dec takes */
};

int dtplan_auth_ttl(double budget_s)
{
	double t = ceil(3.0 * budget_s);

	if (!(t >= DTPLAN_AUTH_TTL_MIN_S))
		return DTPLAN_AUTH_TTL_MIN_S;
	return t > DTPLAN_AUTH_TTL_MAX_S ? DTPLAN_AUTH_TTL_MAX_S : (int)t;
}

/* The socket a context talks to, for messages. */
static const char *socket_name(const struct munge_auth *m)
{
	return m->socket[0] != '\0' ? m->socket : "libmunge's default";
}

/*
 * What a failed decode most likely means, for the note a site reads: the
 * clocks (MUNGE refuses a credential older than its time to live or made
 * in this node's future), the keys, or this node's munged.
 */
static const char *decode_hint(munge_err_t e)
{
	switch (e) {
	case EMUNGE_CRED_EXPIRED:
		return " (older than its time to live: is the sender's clock behind this node's?)";
	case EMUNGE_CRED_REWOUND:
		return " (made in this node's future: is the sender's clock ahead of this node's?)";
	case EMUNGE_CRED_INVALID:
	case EMUNGE_CRED_UNAUTHORIZED:
		return " (not made with this node's MUNGE key: do all nodes' munged share one "
		       "key?)";
	case EMUNGE_SOCKET:
		return " (this node's munged does not answer on its socket)";
	default:
		return "";
	}
}

static enum dtplan_err munge_enc(struct dtplan_auth *a, const void *payload, size_t len,
				 char **cred, struct dtplan_error *err)
{
	struct munge_auth *m = a->data;
	munge_err_t e;

	*cred = NULL;
	e = munge_encode(cred, m->enc, payload, (int)len);
	if (e != EMUNGE_SUCCESS) {
		free(*cred);
		*cred = NULL;
		return dtplan__error(err, DTPLAN_ERR_IO, "munge", 0,
				     "cannot make a credential: %s%s%s%s",
				     munge_ctx_strerror(m->enc) ? munge_ctx_strerror(m->enc)
								: munge_strerror(e),
				     e == EMUNGE_SOCKET ? " (munged's socket " : "",
				     e == EMUNGE_SOCKET ? socket_name(m) : "",
				     e == EMUNGE_SOCKET
					     ? ": is munged running, and is it the socket "
					       "Slurm's AuthInfo=socket= names?)"
					     : "");
	}
	return DTPLAN_OK;
}

static enum dtplan_err munge_dec(struct dtplan_auth *a, const char *cred, size_t cred_len,
				 void **payload, size_t *len, uid_t *uid, struct dtplan_error *err)
{
	struct munge_auth *m = a->data;
	char *text = strndup(cred, cred_len);
	munge_err_t e;
	uid_t restricted = (uid_t)MUNGE_UID_ANY;
	gid_t gid;
	int n = 0;

	*payload = NULL;
	*len = 0;
	if (text == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "out of memory");
	if (strlen(text) != cred_len) {
		free(text);
		return dtplan__error(err, DTPLAN_ERR_POLICY, "munge", 0,
				     "the credential holds a NUL byte");
	}
	e = munge_decode(text, m->dec, payload, &n, uid, &gid);
	free(text);
	if (e != EMUNGE_SUCCESS) {
		free(*payload);
		*payload = NULL;
		bool ours = e == EMUNGE_SOCKET || e == EMUNGE_SNAFU;

		return dtplan__error(err, ours ? DTPLAN_ERR_IO : DTPLAN_ERR_POLICY, "munge", 0,
				     "invalid credential: %s%s", munge_strerror(e), decode_hint(e));
	}
	*len = n > 0 ? (size_t)n : 0;
	if (munge_ctx_get(m->dec, MUNGE_OPT_UID_RESTRICTION, &restricted) != EMUNGE_SUCCESS ||
	    restricted != m->decoder) {
		free(*payload);
		*payload = NULL;
		*len = 0;
		if (restricted == (uid_t)MUNGE_UID_ANY)
			return dtplan__error(err, DTPLAN_ERR_POLICY, "munge", 0,
					     "a credential that any uid may decode (made without "
					     "a uid restriction)");
		return dtplan__error(err, DTPLAN_ERR_POLICY, "munge", 0,
				     "a credential for uid %u to decode (this is uid %u)",
				     (unsigned)restricted, (unsigned)m->decoder);
	}
	return DTPLAN_OK;
}

static void munge_destroy(struct dtplan_auth *a)
{
	struct munge_auth *m;

	if (a == NULL)
		return;
	m = a->data;
	if (m != NULL) {
		munge_ctx_destroy(m->enc);
		munge_ctx_destroy(m->dec);
		free(m);
	}
	free(a);
}

enum dtplan_err dtplan_auth_munge_create(const struct dtplan_auth_munge_opts *o,
					 struct dtplan_auth **out, struct dtplan_error *err)
{
	struct dtplan_auth *a = calloc(1, sizeof(*a));
	struct munge_auth *m = calloc(1, sizeof(*m));
	const char *socket = o != NULL ? o->socket : NULL;
	enum dtplan_err rv = DTPLAN_OK;

	*out = NULL;
	if (o == NULL) {
		free(a);
		free(m);
		return dtplan__error(err, DTPLAN_ERR_INVAL, "munge", 0, "no options");
	}
	if (a == NULL || m == NULL) {
		free(a);
		free(m);
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "out of memory");
	}
	a->encode = munge_enc;
	a->decode = munge_dec;
	a->destroy = munge_destroy;
	a->data = m;
	m->decoder = o->decoder_uid;
	m->enc = munge_ctx_create();
	m->dec = munge_ctx_create();
	if (m->enc == NULL || m->dec == NULL)
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "cannot create a context");
	if (rv == DTPLAN_OK &&
	    (o->decoder_uid == (uid_t)MUNGE_UID_ANY ||
	     munge_ctx_set(m->enc, MUNGE_OPT_UID_RESTRICTION, o->decoder_uid) != EMUNGE_SUCCESS ||
	     (o->ttl_s > 0 && munge_ctx_set(m->enc, MUNGE_OPT_TTL, o->ttl_s) != EMUNGE_SUCCESS)))
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "munge", 0,
				   "cannot restrict credentials to uid %u with a %d s time to live",
				   (unsigned)o->decoder_uid, o->ttl_s);
	if (socket != NULL)
		snprintf(m->socket, sizeof(m->socket), "%s", socket);
	if (rv == DTPLAN_OK && socket != NULL && socket[0] != '\0' &&
	    (munge_ctx_set(m->enc, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS ||
	     munge_ctx_set(m->dec, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS))
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "munge", 0, "cannot use socket %s",
				   socket);
	if (rv != DTPLAN_OK) {
		munge_destroy(a);
		return rv;
	}
	*out = a;
	return DTPLAN_OK;
}

void dtplan_auth_destroy(struct dtplan_auth *a)
{
	if (a != NULL && a->destroy != NULL)
		a->destroy(a);
}

/* ------------------------------------------------------------------------
 * Report credentials (dtplan serve)
 * ---------------------------------------------------------------------- */

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The payload that binds body: the prefix and its SHA-256 in hex. */
static void body_payload(const void *body, size_t len,
			 char out[sizeof(DTPLAN_REPORT_CRED_PREFIX) + 64])
{
	uint8_t sum[32];

	dtplan__sha256(body, len, sum);
	memcpy(out, DTPLAN_REPORT_CRED_PREFIX, sizeof(DTPLAN_REPORT_CRED_PREFIX) - 1);
	hex(sum, sizeof(sum), out + sizeof(DTPLAN_REPORT_CRED_PREFIX) - 1);
}

/* munge_encode() of the body's payload, as long as libmunge takes. */
static enum dtplan_err cred_make_now(const char *socket, const void *body, size_t len, char **cred,
				     struct dtplan_error *err)
{
	char payload[sizeof(DTPLAN_REPORT_CRED_PREFIX) + 64];
	munge_ctx_t c = munge_ctx_create();
	enum dtplan_err rv = DTPLAN_OK;
	munge_err_t e;

	*cred = NULL;
	if (c == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "cannot create a context");
	body_payload(body, len, payload);
	if ((socket != NULL && socket[0] != '\0' &&
	     munge_ctx_set(c, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) ||
	    munge_ctx_set(c, MUNGE_OPT_TTL, DTPLAN_REPORT_CRED_TTL_S) != EMUNGE_SUCCESS) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "munge", 0, "cannot use socket %s",
				   socket != NULL ? socket : "(default)");
		goto out;
	}
	e = munge_encode(cred, c, payload, (int)strlen(payload));
	if (e != EMUNGE_SUCCESS) {
		free(*cred);
		*cred = NULL;
		rv = dtplan__error(err, DTPLAN_ERR_IO, "munge", 0, "cannot make a credential: %s",
				   munge_ctx_strerror(c) ? munge_ctx_strerror(c)
							 : munge_strerror(e));
	}
out:
	munge_ctx_destroy(c);
	return rv;
}

/* The child's answer: "C" and the credential, or "E" and the error's text. */
#define CRED_ANSWER_MAX 4096

/* What the child makes a credential of. */
struct cred_job {
	const char *socket;
	const void *body;
	size_t len;
};

/* In a bounded child: the answer to fd. */
static int cred_child(void *arg, int fd)
{
	const struct cred_job *j = arg;
	struct dtplan_error err = {0};
	char out[CRED_ANSWER_MAX];
	char *cred = NULL;
	size_t n, off = 0;

	if (cred_make_now(j->socket, j->body, j->len, &cred, &err) == DTPLAN_OK)
		n = (size_t)snprintf(out, sizeof(out), "C%s", cred);
	else
		n = (size_t)snprintf(out, sizeof(out), "E%s", err.text);
	free(cred);
	if (n >= sizeof(out))
		n = sizeof(out) - 1;
	while (off < n) {
		ssize_t w = write(fd, out + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	return 0;
}

enum dtplan_err dtplan_report_cred_make(const char *socket, const void *body, size_t len,
					double timeout_s, char **cred, struct dtplan_error *err)
{
	struct cred_job job = {socket, body, len};
	char *answer = NULL;
	size_t have = 0;
	enum dtplan_err rv;

	*cred = NULL;
	if (!(timeout_s > 0.0))
		return cred_make_now(socket, body, len, cred, err);
	/* libmunge bounds a wedged munged only by its own constants (five tries
	 * of a 2 s read in MUNGE 0.5): the credential is made in a child that
	 * is stopped at timeout_s */
	rv = dtprobe__run_bounded_out(cred_child, &job, timeout_s, "munge credential",
				      CRED_ANSWER_MAX, &answer, &have, err);
	if (rv == DTPLAN_ERR_TIMEOUT)
		rv = dtplan__error(err, DTPLAN_ERR_TIMEOUT, "munge", 0,
				   "munged at %s did not answer within %.2f s",
				   socket != NULL && socket[0] != '\0' ? socket : "(default)",
				   timeout_s);
	else if (rv == DTPLAN_OK && have > 1 && answer[0] == 'C')
		rv = (*cred = strdup(answer + 1)) != NULL
			     ? DTPLAN_OK
			     : dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "out of memory");
	else if (rv == DTPLAN_OK)
		rv = dtplan__error(err, DTPLAN_ERR_IO, "munge", 0, "%s",
				   have > 1 && answer[0] == 'E'
					   ? answer + 1
					   : "cannot make a credential: no answer");
	free(answer);
	return rv;
}

enum dtplan_err dtplan_report_cred_check(const char *socket, const char *cred, const void *body,
					 size_t len, struct dtplan_report_cred *out,
					 const char **reason, struct dtplan_error *err)
{
	char want[sizeof(DTPLAN_REPORT_CRED_PREFIX) + 64];
	munge_ctx_t c = munge_ctx_create();
	void *payload = NULL;
	int n = 0, ttl = 0;
	time_t encoded = 0;
	uint8_t sum[32];
	enum dtplan_err rv = DTPLAN_OK;
	munge_err_t e;
	gid_t gid;

	memset(out, 0, sizeof(*out));
	*reason = "munge";
	if (c == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "cannot create a context");
	if (socket != NULL && socket[0] != '\0' &&
	    munge_ctx_set(c, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "munge", 0, "cannot use socket %s",
				   socket);
		goto out;
	}
	e = munge_decode(cred, c, &payload, &n, &out->uid, &gid);
	switch (e) {
	case EMUNGE_SUCCESS:
		break;
	case EMUNGE_SOCKET:
	case EMUNGE_SNAFU:
	case EMUNGE_NO_MEMORY:
		rv = dtplan__error(err, DTPLAN_ERR_IO, "munge", 0,
				   "cannot check the credential: %s", munge_strerror(e));
		goto out;
	case EMUNGE_CRED_EXPIRED:
	case EMUNGE_CRED_REWOUND:
		*reason = "expired";
		rv = dtplan__error(err, DTPLAN_ERR_POLICY, "munge", 0, "credential: %s",
				   munge_strerror(e));
		goto out;
	case EMUNGE_CRED_REPLAYED:
		*reason = "replayed";
		rv = dtplan__error(err, DTPLAN_ERR_POLICY, "munge", 0, "credential: %s",
				   munge_strerror(e));
		goto out;
	default:
		*reason = "forged";
		rv = dtplan__error(err, DTPLAN_ERR_POLICY, "munge", 0, "credential: %s",
				   munge_strerror(e));
		goto out;
	}
	body_payload(body, len, want);
	if (n != (int)strlen(want) || memcmp(payload, want, (size_t)n) != 0) {
		*reason = "forged";
		rv = dtplan__error(err, DTPLAN_ERR_POLICY, "munge", 0,
				   "the credential is for another body");
		goto out;
	}
	munge_ctx_get(c, MUNGE_OPT_ENCODE_TIME, &encoded);
	munge_ctx_get(c, MUNGE_OPT_TTL, &ttl);
	out->expires = (long long)encoded + (ttl > 0 ? ttl : DTPLAN_AUTH_TTL_MAX_S);
	/* its name is what it decodes to, never its text: libmunge decodes a
	 * credential with bytes appended, and munged forgets what it decoded
	 * when it restarts (issue 32) */
	{
		char what[sizeof(want) + 96];
		int w = snprintf(what, sizeof(what), "uid=%u gid=%u encoded=%lld ttl=%d %s",
				 (unsigned)out->uid, (unsigned)gid, (long long)encoded, ttl, want);

		dtplan__sha256(what, (size_t)w, sum);
	}
	hex(sum, sizeof(sum), out->id);
	*reason = NULL;
out:
	free(payload);
	munge_ctx_destroy(c);
	return rv;
}
