/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config_args.c: the plugstack.conf arguments: space-free key=value tokens,
 * the snake_case names of the site settings plus site=, topology= and
 * nccl_ib_hca=.  The site file named by site= is read first (lib/site/config_site.c),
 * then the other arguments override it; an argument given twice must keep
 * its value.  Relative site= and topology= paths are read in the folder
 * dtplan_config_set_dir() gave (Slurm's configuration folder, configless
 * nodes' cache included).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "site/site_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARGS_SOURCE "plugstack.conf"

void dtplan_config_set_dir(struct dtplan_config *c, const char *slurm_conf, const char *fallback)
{
	const char *slash;
	size_t len;

	if (c == NULL)
		return;
	c->conf_dir[0] = '\0';
	if (slurm_conf != NULL && (slash = strrchr(slurm_conf, '/')) != NULL) {
		len = slash == slurm_conf ? 1 : (size_t)(slash - slurm_conf);
		if (len < sizeof(c->conf_dir)) {
			memcpy(c->conf_dir, slurm_conf, len);
			c->conf_dir[len] = '\0';
		}
		return;
	}
	if (fallback != NULL && strlen(fallback) < sizeof(c->conf_dir))
		dtplan__strlcpy(c->conf_dir, fallback, sizeof(c->conf_dir));
}

/* A relative site= or topology= path, read in c->conf_dir when it is set. */
static enum dtplan_err in_conf_dir(const struct dtplan_config *c, const char *tok,
				   struct dtplan__config_value *v, struct dtplan_error *err)
{
	const char *arg = dtplan__config_arg(v);
	char path[sizeof(v->s)];
	int n;

	if ((strcmp(arg, "site") != 0 && strcmp(arg, "topology") != 0) || v->s[0] == '\0' ||
	    v->s[0] == '/' || c->conf_dir[0] == '\0')
		return DTPLAN_OK;
	n = snprintf(path, sizeof(path), "%s%s%s", c->conf_dir,
		     c->conf_dir[strlen(c->conf_dir) - 1] == '/' ? "" : "/", v->s);
	if (n < 0 || (size_t)n >= sizeof(c->site_file))
		return dtplan__error(err, DTPLAN_ERR_RANGE, ARGS_SOURCE, 0,
				     "argument '%s': %s/%s is longer than %zu characters", tok,
				     c->conf_dir, v->s, sizeof(c->site_file) - 1);
	memcpy(v->s, path, (size_t)n + 1);
	return DTPLAN_OK;
}

/* One parse of the arguments. */
struct args_parse {
	struct dtplan_config *c;
	char *const *argv;
	int i;                               /* the argument being read */
	struct dtplan__config_value *values; /* one per argument */
	const char *site;                    /* site=, NULL none */
};

/* An argument's value (the engine's CUSTOM parse): checked, and kept equal
 * to the same argument's earlier value. */
static enum dtplan_err arg_value(void *obj, const struct dtplan__kv_key *k, const char *value,
				 struct dtplan_error *err)
{
	struct args_parse *ap = obj;
	const char *tok = ap->argv[ap->i];
	struct dtplan__config_value *v = &ap->values[ap->i];
	struct dtplan_error e = {0};
	enum dtplan_err rv = dtplan__config_parse_setting(k->name, false, value, v, &e);

	if (rv != DTPLAN_OK)
		return dtplan__error(err, e.code, ARGS_SOURCE, 0, "argument '%s': %s", tok, e.text);
	rv = in_conf_dir(ap->c, tok, v, err);
	if (rv != DTPLAN_OK)
		return rv;
	for (int j = 0; j < ap->i; j++)
		if (ap->values[j].setting == v->setting && !dtplan__config_same(&ap->values[j], v))
			return dtplan__error(err, DTPLAN_ERR_PARSE, ARGS_SOURCE, 0,
					     "argument '%s' conflicts with '%s'", tok, ap->argv[j]);
	if (strcmp(dtplan__config_arg(v), "site") == 0)
		ap->site = v->s;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_config_parse_args(struct dtplan_config *c, int argc, char *const *argv,
					 struct dtplan_error *err)
{
	struct dtplan__kv_key keys[DTPLAN__KV_MAX_KEYS];
	/* each argument one key=value on the one engine (base/base.h) */
	const struct dtplan__kv_table table = {
		.keys = keys,
		.n = dtplan__config_kv_keys(false, arg_value, keys),
		.sep = '\0',
		.nocase = true,
		.known = "the arguments of spank_dtplan(8)",
		.repeat = true,
	};
	struct args_parse ap = {.c = c, .argv = argv};
	char prefix[1024];
	struct dtplan__kv_where where = {prefix, ARGS_SOURCE, 0};
	enum dtplan_err rv;

	if (c == NULL || argc < 0 || (argv == NULL && argc > 0))
		return dtplan__error(err, DTPLAN_ERR_INVAL, ARGS_SOURCE, 0, "no arguments given");
	if (argc == 0)
		return DTPLAN_OK;
	ap.values = calloc((size_t)argc, sizeof(*ap.values));
	if (ap.values == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, ARGS_SOURCE, 0, "out of memory");
		goto out;
	}
	/* First pass: every argument is a known key with a valid value. */
	for (ap.i = 0; ap.i < argc; ap.i++) {
		const char *tok = argv[ap.i] != NULL ? argv[ap.i] : "(null)";

		snprintf(prefix, sizeof(prefix), "argument '%s': ", tok);
		rv = dtplan__kv_parse(&table, tok, &ap, NULL, &where, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	/* The site file, then the arguments over it. */
	if (ap.site != NULL && ap.site[0] != '\0') {
		rv = dtplan_config_parse_file(c, ap.site, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	for (int i = 0; i < argc; i++)
		dtplan__config_store(c, &ap.values[i]);
	rv = DTPLAN_OK;
out:
	free(ap.values);
	return rv;
}
