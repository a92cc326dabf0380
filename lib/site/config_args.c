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

enum dtplan_err dtplan_config_parse_args(struct dtplan_config *c, int argc, char *const *argv,
					 struct dtplan_error *err)
{
	struct dtplan__config_value *values = NULL;
	const char *site = NULL;
	struct dtplan_error e = {0};
	enum dtplan_err rv;

	if (c == NULL || argc < 0 || (argv == NULL && argc > 0))
		return dtplan__error(err, DTPLAN_ERR_INVAL, ARGS_SOURCE, 0, "no arguments given");
	if (argc == 0)
		return DTPLAN_OK;
	values = calloc((size_t)argc, sizeof(*values));
	if (values == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, ARGS_SOURCE, 0, "out of memory");
		goto out;
	}
	/* First pass: every token is a known key with a valid value. */
	for (int i = 0; i < argc; i++) {
		const char *tok = argv[i], *eq = tok ? strchr(tok, '=') : NULL;
		char key[64];

		if (tok == NULL || eq == NULL || eq == tok) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, ARGS_SOURCE, 0,
					   "argument '%s' is not key=value", tok ? tok : "(null)");
			goto out;
		}
		if ((size_t)(eq - tok) >= sizeof(key)) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, ARGS_SOURCE, 0,
					   "argument '%s': unknown key", tok);
			goto out;
		}
		memcpy(key, tok, (size_t)(eq - tok));
		key[eq - tok] = '\0';
		rv = dtplan__config_parse_setting(key, false, eq + 1, &values[i], &e);
		if (values[i].setting == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, ARGS_SOURCE, 0,
					   "argument '%s': unknown key '%s'", tok, key);
			goto out;
		}
		if (rv != DTPLAN_OK) {
			rv = dtplan__error(err, e.code, ARGS_SOURCE, 0, "argument '%s': %s", tok,
					   e.text);
			goto out;
		}
		rv = in_conf_dir(c, tok, &values[i], err);
		if (rv != DTPLAN_OK)
			goto out;
		for (int k = 0; k < i; k++) {
			if (values[k].setting == values[i].setting &&
			    !dtplan__config_same(&values[k], &values[i])) {
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, ARGS_SOURCE, 0,
						   "argument '%s' conflicts with '%s'", tok,
						   argv[k]);
				goto out;
			}
		}
		if (strcmp(dtplan__config_arg(&values[i]), "site") == 0)
			site = values[i].s;
	}
	/* The site file, then the arguments over it. */
	if (site != NULL && site[0] != '\0') {
		rv = dtplan_config_parse_file(c, site, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	for (int i = 0; i < argc; i++)
		dtplan__config_store(c, &values[i]);
	rv = DTPLAN_OK;
out:
	free(values);
	return rv;
}
