/*
 * request_train.c: the user's training options (--dt-plan, --dt-train) as
 * text -> fields of struct dtplan_request.
 *
 * Kept apart from the rest of the request code so that the option syntax has
 * one home that the SPANK plugin and the CLI share.
 */
#include "config.h"

#include "dtplan_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {
	[DTPLAN_MODE_OFF] = "off",
	[DTPLAN_MODE_AUTO] = "auto",
	[DTPLAN_MODE_STRICT] = "strict",
};

enum dtplan_err dtplan_mode_parse(const char *text, enum dtplan_mode *out, struct dtplan_error *err)
{
	for (size_t i = 0; text != NULL && i < DTPLAN_ARRAY_SIZE(mode_names); i++) {
		if (dtplan__streq_nocase(text, mode_names[i])) {
			*out = (enum dtplan_mode)i;
			return DTPLAN_OK;
		}
	}
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
			     "unknown mode '%s' (expected auto, strict or off)", text ? text : "");
}

/* One key of --dt-train: where its value goes and its allowed range. */
enum train_kind {
	TRAIN_INT,
	TRAIN_BATCH,
	TRAIN_RECOMPUTE,
	TRAIN_GPU,
};

struct train_key {
	const char *name;
	enum train_kind kind;
	size_t offset; /* of the int field in struct dtplan_request */
	long min, max;
};

#define TRAIN_INT_KEY(n, field, lo, hi) {n, TRAIN_INT, offsetof(struct dtplan_request, field), lo, hi}

static const struct train_key train_keys[] = {
	TRAIN_INT_KEY("seq", seq, 1, 1L << 24),
	{"gbs", TRAIN_BATCH, 0, 1, DTPLAN_MAX_GLOBAL_BATCH},
	TRAIN_INT_KEY("tp", tp, 1, 4096),
	TRAIN_INT_KEY("pp", pp, 1, 4096),
	TRAIN_INT_KEY("zero", zero, 0, 3),
	TRAIN_INT_KEY("mb", micro_batch, 1, 1L << 16),
	{"recompute", TRAIN_RECOMPUTE, 0, 0, 0},
	{"gpu", TRAIN_GPU, 0, 0, 0},
};

#define TRAIN_KNOWN "seq, gbs, tp, pp, zero, mb, recompute, gpu"

static enum dtplan_err apply_key(struct dtplan_request *r, const struct train_key *k,
				 const char *value, struct dtplan_error *err)
{
	const struct dtplan_gpu *gpu;
	enum dtplan_recompute rc;
	enum dtplan_err ret;
	long v;

	switch (k->kind) {
	case TRAIN_INT:
		ret = dtplan_parse_long(value, k->name, k->min, k->max, &v, err);
		if (ret != DTPLAN_OK)
			return ret;
		*(int *)((char *)r + k->offset) = (int)v;
		return DTPLAN_OK;
	case TRAIN_BATCH:
		return dtplan_parse_global_batch(value, k->name, r, err);
	case TRAIN_RECOMPUTE:
		/* "auto" leaves the choice to the search. */
		if (dtplan__streq_nocase(value, "auto")) {
			r->recompute = -1;
			return DTPLAN_OK;
		}
		ret = dtplan_recompute_parse(value, &rc, err);
		if (ret != DTPLAN_OK)
			return ret;
		r->recompute = (int)rc;
		return DTPLAN_OK;
	case TRAIN_GPU:
		gpu = dtplan_gpu_find(value, err);
		if (gpu == NULL)
			return err ? err->code : DTPLAN_ERR_NOT_FOUND;
		r->gpu = *gpu;
		return DTPLAN_OK;
	}
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "%s: unhandled key", k->name);
}

enum dtplan_err dtplan_parse_global_batch(const char *text, const char *what,
					  struct dtplan_request *r, struct dtplan_error *err)
{
	char buf[32];
	size_t len = text != NULL ? strlen(text) : 0;
	bool exact = len > 0 && text[len - 1] == '!';
	enum dtplan_err rv;
	long v;

	if (len == 0 || len >= sizeof(buf))
		return dtplan__error(err, DTPLAN_ERR_PARSE, what ? what : "", 0,
				     "'%s' is not a global batch (N, or N! for exactly N)",
				     text ? text : "");
	memcpy(buf, text, len - exact);
	buf[len - exact] = '\0';
	rv = dtplan_parse_long(buf, what, 1, DTPLAN_MAX_GLOBAL_BATCH, &v, err);
	if (rv != DTPLAN_OK)
		return rv;
	r->global_batch = (int)v;
	r->exact_batch = exact;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_request_parse_train(struct dtplan_request *r, const char *text,
					   struct dtplan_error *err)
{
	struct dtplan_request tmp;
	bool seen[DTPLAN_ARRAY_SIZE(train_keys)] = {false};
	char *copy = NULL, *save = NULL, *tok;
	enum dtplan_err rv, ret;

	if (r == NULL || text == NULL || text[0] == '\0') {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				   "empty training spec (expected key=value pairs: " TRAIN_KNOWN ")");
		goto out;
	}
	/* strtok_r skips empty fields; ",," or a trailing comma is still a typo. */
	if (strstr(text, ",,") != NULL || text[0] == ',' || text[strlen(text) - 1] == ',') {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0, "empty field in '%s'", text);
		goto out;
	}
	copy = strdup(text);
	if (copy == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	/* Work on a copy so that a bad spec leaves *r untouched. */
	tmp = *r;
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		size_t i;

		if (eq == NULL || eq == tok || eq[1] == '\0') {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					   "'%s' is not key=value (keys: " TRAIN_KNOWN ")", tok);
			goto out;
		}
		*eq = '\0';
		for (i = 0; i < DTPLAN_ARRAY_SIZE(train_keys); i++)
			if (strcmp(tok, train_keys[i].name) == 0)
				break;
		if (i == DTPLAN_ARRAY_SIZE(train_keys)) {
			rv = dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0,
					   "unknown key '%s' (known: " TRAIN_KNOWN ")", tok);
			goto out;
		}
		if (seen[i]) {
			rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "key '%s' given twice", tok);
			goto out;
		}
		seen[i] = true;
		ret = apply_key(&tmp, &train_keys[i], eq + 1, err);
		if (ret != DTPLAN_OK) {
			rv = ret;
			goto out;
		}
	}
	if (tmp.micro_batch > tmp.global_batch) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				   "mb=%d is larger than gbs=%d", tmp.micro_batch,
				   tmp.global_batch);
		goto out;
	}
	*r = tmp;
	rv = DTPLAN_OK;
out:
	free(copy);
	return rv;
}
