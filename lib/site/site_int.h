/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * site/site_int.h: the settings table, shared by the site file's and the
 * plugstack arguments' readers.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by files of lib/site/ only.
 */
#ifndef DTPLAN_SITE_SITE_INT_H
#define DTPLAN_SITE_SITE_INT_H

#include "dtplan.h"
#include "base/base.h"

/* ------------------------------------------------------------------------
 * Site configuration: its settings (lib/site/config.c), read from the site file
 * (lib/site/config_site.c) and the plugstack arguments (lib/site/config_args.c)
 * ---------------------------------------------------------------------- */

/* Room for every global setting (lib/site/config.c asserts it). */
#define DTPLAN__CONFIG_MAX_SETTINGS 64

/* One global setting of the table (lib/site/config.c). */
struct dtplan__config_setting;

/* A parsed value of one setting, before it is stored. */
struct dtplan__config_value {
	const struct dtplan__config_setting *setting;
	size_t index; /* the setting's row, < DTPLAN__CONFIG_MAX_SETTINGS */
	int i;
	double d;
	char s[256];
};

/*
 * Parses text for the setting named name: its site-file key (site) or its
 * plugstack argument, case-insensitive.  When no setting has that name,
 * v->setting is NULL (and the error DTPLAN_ERR_NOT_FOUND); other errors
 * (a GPU type the catalog lacks is NOT_FOUND too) name the setting.
 */
enum dtplan_err dtplan__config_parse_setting(const char *name, bool site, const char *text,
					     struct dtplan__config_value *v,
					     struct dtplan_error *err);

/* Stores v into c. */
void dtplan__config_store(struct dtplan_config *c, const struct dtplan__config_value *v);

/* Whether c holds v already / a and b are the same value of one setting:
 * numbers within rounding (5us is 5 * 1e-6, not bit-equal to 5e-6). */
bool dtplan__config_holds(const struct dtplan_config *c, const struct dtplan__config_value *v);
bool dtplan__config_same(const struct dtplan__config_value *a,
			 const struct dtplan__config_value *b);

/* v's setting's site-file key (NULL for plugstack-only settings) and its
 * plugstack argument name (static strings). */
const char *dtplan__config_key(const struct dtplan__config_value *v);
/*
 * The settings as Key=Value engine keys (base/base.h), CUSTOM through parse:
 * their site file names (site; settings only plugstack arguments take are
 * left out) or their plugstack argument names; a text setting (a path, a
 * URL, a GPU type) may be empty.  Returns how many were written to keys,
 * which holds DTPLAN__KV_MAX_KEYS.
 */
size_t dtplan__config_kv_keys(bool site,
			      enum dtplan_err (*parse)(void *obj, const struct dtplan__kv_key *k,
						       const char *value, struct dtplan_error *err),
			      struct dtplan__kv_key *keys);
const char *dtplan__config_arg(const struct dtplan__config_value *v);

/* A switch or NVLink domain name: letters, digits, '-', '_', '.'. */
bool dtplan__config_valid_name(const char *s);

/* A GPU type of the catalog; the message lists the known names. */
enum dtplan_err dtplan__config_check_gpu(const char *key, const char *text,
					 struct dtplan_error *err);

/* Oversubscription "4:1", "1.5:1" or "4", and a link rate, within the bounds
 * of doc/internals/limits.md; key names the value in messages. */
enum dtplan_err dtplan__config_parse_oversub(const char *key, const char *text, double *out,
					     struct dtplan_error *err);
enum dtplan_err dtplan__config_parse_link_rate(const char *key, const char *text, double *out,
					       struct dtplan_error *err);

#endif /* DTPLAN_SITE_SITE_INT_H */
