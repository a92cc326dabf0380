/*
 * auth.c: the probe's credentials with MUNGE, Slurm's own authentication:
 * munged runs on every Slurm node and shares one key, so a credential made
 * on one node proves to another which uid made it and that nobody changed
 * its payload (the seal of lib/measure/wire.c).  munged refuses to decode a
 * credential twice (EMUNGE_CRED_REPLAYED), so a captured message cannot be
 * sent again.  The only libmunge user of the tree.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <munge.h>
#include <stdlib.h>
#include <string.h>

struct munge_auth {
	munge_ctx_t enc; /* munge_decode() rewrites its context: one each */
	munge_ctx_t dec;
};

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
		return dtplan__error(err, DTPLAN_ERR_IO, "munge", 0, "cannot make a credential: %s",
				     munge_ctx_strerror(m->enc) ? munge_ctx_strerror(m->enc)
								: munge_strerror(e));
	}
	return DTPLAN_OK;
}

static enum dtplan_err munge_dec(struct dtplan_auth *a, const char *cred, size_t cred_len,
				 void **payload, size_t *len, uid_t *uid, struct dtplan_error *err)
{
	struct munge_auth *m = a->data;
	char *text = strndup(cred, cred_len);
	munge_err_t e;
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
				     "invalid credential: %s", munge_strerror(e));
	}
	*len = n > 0 ? (size_t)n : 0;
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

enum dtplan_err dtplan_auth_munge_create(const char *socket, struct dtplan_auth **out,
					 struct dtplan_error *err)
{
	struct dtplan_auth *a = calloc(1, sizeof(*a));
	struct munge_auth *m = calloc(1, sizeof(*m));
	enum dtplan_err rv = DTPLAN_OK;

	*out = NULL;
	if (a == NULL || m == NULL) {
		free(a);
		free(m);
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "out of memory");
	}
	a->encode = munge_enc;
	a->decode = munge_dec;
	a->destroy = munge_destroy;
	a->data = m;
	m->enc = munge_ctx_create();
	m->dec = munge_ctx_create();
	if (m->enc == NULL || m->dec == NULL)
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "munge", 0, "cannot create a context");
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
