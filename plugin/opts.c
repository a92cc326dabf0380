/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * opts.c: --dt-plan, --dt-model and --dt-train.
 *
 * Callbacks check values at once on the submit side (remote == 0), where a
 * bad value fails the user's command with a message naming the option and
 * the value.  An option may arrive twice (environment, then command line):
 * a repeat of the same value is accepted, a conflicting one refused.  In
 * slurmstepd (remote == 1) values are only kept: they were checked at submit
 * time, and failing there would hurt the node, not the user.
 */
#include "config.h"

#include "plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Option names by id (enum dtspank__opt_id); spank_dtplan.c registers them. */
static const char *const names[] = {
	[DTPLAN_OPT_PLAN] = DTPLAN_OPT_PLAN_NAME,
	[DTPLAN_OPT_MODEL] = DTPLAN_OPT_MODEL_NAME,
	[DTPLAN_OPT_TRAIN] = DTPLAN_OPT_TRAIN_NAME,
};

static struct dtplan_opts opts;

/* On the submit side, the values kept in opts as their callbacks parsed
 * them, for checking --dt-model and --dt-train together. */
static struct {
	bool model_given, train_given;
	struct dtplan_model model;
	struct dtplan_request train; /* --dt-train over dtplan_request_init() */
} parsed;

const struct dtplan_opts *dtspank__opts(void)
{
	return &opts;
}

void dtspank__opts_reset(void)
{
	memset(&opts, 0, sizeof(opts));
	memset(&parsed, 0, sizeof(parsed));
}

bool dtspank__opts_any(const struct dtplan_opts *o)
{
	return o->mode_given || o->model[0] != '\0' || o->train[0] != '\0';
}

/* Checks a value of the option, parsing --dt-model into *model and
 * --dt-train into *req; on error writes the reason into msg. */
static int validate(enum dtspank__opt_id id, const char *value, struct dtplan_model *model,
		    struct dtplan_request *req, char *msg, size_t size)
{
	struct dtplan_error err = {0};
	enum dtplan_mode mode;
	enum dtplan_err ret = DTPLAN_OK;

	switch (id) {
	case DTPLAN_OPT_PLAN:
		ret = dtplan_mode_parse(value, &mode, &err);
		break;
	case DTPLAN_OPT_MODEL:
		ret = dtplan_model_parse(value, model, &err);
		break;
	case DTPLAN_OPT_TRAIN:
		dtplan_request_init(req);
		ret = dtplan_request_parse_train(req, value, &err);
		/* keys that contradict each other, whatever the allocation */
		if (ret == DTPLAN_OK)
			ret = dtplan_request_check_train(req, &err);
		break;
	}
	if (ret != DTPLAN_OK)
		dtplan_error_format(&err, msg, size);
	return ret == DTPLAN_OK ? 0 : -1;
}

/*
 * With --dt-model and --dt-train both given (the second callback sees the
 * first), whether the model can take the training choices whatever the
 * allocation (dtplan_request_check_model()); on false writes why into msg.
 * This is the last place a submission can be refused: Slurm ignores a
 * failing init_post_opt of an "optional" plugin.
 */
static bool model_takes_train(char *msg, size_t size)
{
	struct dtplan_request req;
	struct dtplan_error err = {0};
	char buf[768];

	if (!parsed.model_given || !parsed.train_given)
		return true;
	req = parsed.train;
	req.model = parsed.model;
	if (dtplan_request_check_model(&req, &err) == DTPLAN_OK)
		return true;
	snprintf(msg, size, "--dt-train: %s (--dt-model=%.128s)",
		 dtplan_error_format(&err, buf, sizeof(buf)), opts.model);
	return false;
}

/*
 * Stores value into dst of size n.  On the submit side refuses a value that
 * is too long or differs from one already kept; in slurmstepd the last one
 * wins (both were checked at submit time).
 */
static int keep(const char *name, const char *value, char *dst, size_t n, int remote)
{
	if (strlen(value) >= n) {
		slurm_error(DTPLAN_LOG_PREFIX "--%s: value longer than %zu characters", name,
			    n - 1);
		return remote ? 0 : -1;
	}
	if (dst[0] != '\0' && strcmp(dst, value) != 0 && !remote) {
		slurm_error(DTPLAN_LOG_PREFIX "--%s: conflicting values '%s' and '%s'", name, dst,
			    value);
		return -1;
	}
	snprintf(dst, n, "%s", value);
	return 0;
}

int dtspank__opt_cb(int val, const char *optarg, int remote)
{
	const char *name;
	const char *value = optarg;
	struct dtplan_model model = {0};
	struct dtplan_request req = {0};
	char msg[1024];
	enum dtplan_mode mode;

	if (val < DTPLAN_OPT_PLAN || val > DTPLAN_OPT_TRAIN)
		return -1;
	name = names[val];
	/* --dt-plan alone means auto. */
	if (val == DTPLAN_OPT_PLAN && (value == NULL || value[0] == '\0'))
		value = "auto";
	if (value == NULL || value[0] == '\0') {
		slurm_error(DTPLAN_LOG_PREFIX "--%s: missing value", name);
		return remote ? 0 : -1;
	}
	if (!remote && validate(val, value, &model, &req, msg, sizeof(msg)) != 0) {
		slurm_error(DTPLAN_LOG_PREFIX "--%s: %s", name, msg);
		return -1;
	}
	switch (val) {
	case DTPLAN_OPT_PLAN:
		if (dtplan_mode_parse(value, &mode, NULL) != DTPLAN_OK) {
			/* checked at submit time: only a changed environment gets here */
			slurm_error(DTPLAN_LOG_PREFIX "--%s: '%.64s' is not auto, strict or "
						      "off: ignored",
				    name, value);
			return remote ? 0 : -1;
		}
		if (opts.mode_given && opts.mode != mode && !remote) {
			slurm_error(DTPLAN_LOG_PREFIX "--%s: conflicting values '%s' and '%s'",
				    name, dtplan_mode_name(opts.mode), dtplan_mode_name(mode));
			return -1;
		}
		opts.mode_given = true;
		opts.mode = mode;
		return 0;
	case DTPLAN_OPT_MODEL:
		if (keep(name, value, opts.model, sizeof(opts.model), remote) != 0)
			return -1;
		if (remote)
			return 0;
		parsed.model_given = true;
		parsed.model = model;
		break;
	default:
		if (keep(name, value, opts.train, sizeof(opts.train), remote) != 0)
			return -1;
		if (remote)
			return 0;
		parsed.train_given = true;
		parsed.train = req;
		break;
	}
	if (!model_takes_train(msg, sizeof(msg))) {
		slurm_error(DTPLAN_LOG_PREFIX "%s", msg);
		return -1;
	}
	return 0;
}

spank_err_t dtspank__job_getenv_alloc(spank_t sp, const char *name, size_t max, char **out)
{
	spank_err_t rc = ESPANK_NOSPACE;
	size_t size = 4096;
	char *buf = NULL, *tmp;

	for (; rc == ESPANK_NOSPACE && size <= max; size *= 2) {
		tmp = realloc(buf, size);
		if (tmp == NULL) {
			rc = ESPANK_ERROR;
			break;
		}
		buf = tmp;
		rc = spank_getenv(sp, name, buf, (int)size);
	}
	if (rc != ESPANK_SUCCESS) {
		free(buf);
		buf = strdup("");
	}
	*out = buf;
	return buf == NULL ? ESPANK_ERROR : rc;
}

void dtspank__opts_from_env(spank_t sp)
{
	char name[128], value[DTPLAN_OPT_MAX];
	spank_err_t rc;

	for (int i = DTPLAN_OPT_PLAN; i <= DTPLAN_OPT_TRAIN; i++) {
		char *p;

		if ((i == DTPLAN_OPT_PLAN && opts.mode_given) ||
		    (i == DTPLAN_OPT_MODEL && opts.model[0]) ||
		    (i == DTPLAN_OPT_TRAIN && opts.train[0]))
			continue;
		/* Slurm turns "dt-plan" into "dt_plan" in the variable's name. */
		snprintf(name, sizeof(name), "SLURM_SPANK__SLURM_SPANK_OPTION_%s_%s", "dtplan",
			 names[i]);
		for (p = name + strlen(name) - strlen(names[i]); *p; p++)
			if (*p == '-')
				*p = '_';
		rc = spank_getenv(sp, name, value, sizeof(value));
		/* Said once here: the plan then says the option was not given. */
		if (rc == ESPANK_NOSPACE)
			slurm_error(DTPLAN_LOG_PREFIX "--%s: value longer than %zu characters "
						      "in %s: ignored",
				    names[i], sizeof(value) - 1, name);
		if (rc != ESPANK_SUCCESS)
			continue;
		dtspank__opt_cb(i, value, 1);
	}
}

enum dtplan_mode dtspank__opts_mode(const struct dtplan_opts *o, const struct dtplan_config *c)
{
	if (o->mode_given)
		return o->mode;
	return c->default_mode;
}

/* Fills err (NULL allowed) like the library does. */
static enum dtplan_err fail(struct dtplan_error *err, enum dtplan_err code, const char *source,
			    const char *text)
{
	if (err != NULL) {
		dtplan_error_clear(err);
		err->code = code;
		snprintf(err->source, sizeof(err->source), "%s", source);
		snprintf(err->text, sizeof(err->text), "%s", text);
	}
	return code;
}

/* Names the option in an error the library filled without a source. */
static void name_option(struct dtplan_error *err, const char *option)
{
	if (err != NULL && err->source[0] == '\0')
		snprintf(err->source, sizeof(err->source), "%s", option);
}

enum dtplan_err dtspank__opts_request(const struct dtplan_opts *o, const struct dtplan_config *c,
				      struct dtplan_request *r, struct dtplan_error *err)
{
	const struct dtplan_gpu *gpu;
	enum dtplan_err rv;

	dtplan_request_init(r);
	dtplan_request_apply_config(r, c);
	if (c->gpu_type[0] != '\0') {
		gpu = dtplan_gpu_find(c->gpu_type, err);
		if (gpu == NULL) {
			rv = DTPLAN_ERR_NOT_FOUND;
			name_option(err, "gpu_type");
			goto out;
		}
		r->gpu = *gpu;
	}
	if (o->model[0] == '\0') {
		rv = fail(err, DTPLAN_ERR_INVAL, "--dt-model", "not given: nothing to plan for");
		goto out;
	}
	rv = dtplan_model_parse(o->model, &r->model, err);
	if (rv != DTPLAN_OK) {
		name_option(err, "--dt-model");
		goto out;
	}
	if (o->train[0] != '\0') {
		rv = dtplan_request_parse_train(r, o->train, err);
		if (rv != DTPLAN_OK) {
			name_option(err, "--dt-train");
			goto out;
		}
	}
	rv = DTPLAN_OK;
out:
	return rv;
}
