/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_get.c: the fabric answer's members as Key=Value tokens (a string,
 * a quantity with its unit, a list of names), the keys an object may hold,
 * and the lines of the generated texts with what each came from (for the
 * parsers' errors): the network, NVLink and node-set lines.  See
 * fabric_int.h.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/fabric_int.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dtplan__fabric_label_add(struct labels *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dtplan__fabric_label_add(struct labels *l, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	if (l->failed)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		size_t *at = realloc(l->at, cap * sizeof(*at));

		if (at == NULL) {
			l->failed = true;
			return;
		}
		l->at = at;
		l->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	l->at[l->n] = dtplan__text_keep(&l->text, buf);
	if (l->at[l->n++] == NONE)
		l->failed = true;
}

static const char *label_of(const struct labels *l, int line)
{
	return line >= 1 && (size_t)line <= l->n ? l->text.s + l->at[line - 1] : NULL;
}

enum dtplan_err dtplan__fabric_fail(struct jparse *p, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
enum dtplan_err dtplan__fabric_fail(struct jparse *p, const char *where, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, 0, "%s: %s", where, msg);
}

/* A value that goes into a Key=Value token: no blanks, '=', '#' or controls. */
bool dtplan__fabric_token_safe(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s) || *s == '=' ||
		    *s == '#')
			return false;
	return true;
}

/* One name in an array: also no hostlist syntax. */
bool dtplan__fabric_name_safe(const char *s)
{
	return dtplan__fabric_token_safe(s) && strpbrk(s, "[],") == NULL;
}

/* Checks that obj has only the keys in allowed (NULL-terminated) or "x-..." ones. */
enum dtplan_err dtplan__fabric_check_keys(struct jparse *p, const char *where, json_t *obj,
					  const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		bool ok = strncmp(key, "x-", 2) == 0;

		for (const char *const *a = allowed; !ok && *a != NULL; a++)
			ok = strcmp(key, *a) == 0;
		if (!ok)
			return dtplan__fabric_fail(p, where, "unknown key '%s'", key);
	}
	return DTPLAN_OK;
}

/*
 * A string value for a token into buf (size bytes), through the member
 * getter (base/base.h: "WHERE.KEY: expected a string", "... longer than N
 * characters"); *out buf, or NULL when absent.
 */
enum dtplan_err dtplan__fabric_get_string(struct jparse *p, const char *where, json_t *obj,
					  const char *key, char *buf, size_t size, const char **out)
{
	*out = NULL;
	buf[0] = '\0';
	if (json_object_get(obj, key) == NULL)
		return DTPLAN_OK;
	if (dtplan__jget_str(obj, p->source, where, key, 0, buf, size, p->err) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	if (!dtplan__fabric_token_safe(buf))
		return dtplan__fabric_fail(p, where,
					   "\"%s\": '%s' is empty or holds blanks, '=' or '#'", key,
					   buf);
	*out = buf;
	return DTPLAN_OK;
}

/*
 * A number or a string with a unit, as a token value in buf: numbers are
 * written exactly (%.17g) with `unit` after them ("B/s" so that topology.conf
 * does not take a whole number for a weight).  "" when absent.
 */
enum dtplan_err dtplan__fabric_get_quantity(struct jparse *p, const char *where, json_t *obj,
					    const char *key, const char *unit, char *buf,
					    size_t size)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	buf[0] = '\0';
	if (v == NULL)
		return DTPLAN_OK;
	if (json_is_number(v)) {
		double d = json_number_value(v);

		if (!isfinite(d) || d < 0)
			return dtplan__fabric_fail(p, where,
						   "\"%s\": %g is not a value of zero or more", key,
						   d);
		snprintf(buf, size, "%.17g%s", d, unit);
		return DTPLAN_OK;
	}
	if (!json_is_string(v))
		return dtplan__fabric_fail(p, where,
					   "\"%s\" must be a number or a string with a unit", key);
	s = json_string_value(v);
	if (!dtplan__fabric_token_safe(s) || strlen(s) >= size)
		return dtplan__fabric_fail(p, where, "\"%s\": '%s' is not a value", key, s);
	dtplan__strlcpy(buf, s, size);
	return DTPLAN_OK;
}

/* "nodes" or "switches": a hostlist string or an array of names, as one
 * comma-separated token value appended to t.  *given says whether present. */
enum dtplan_err dtplan__fabric_add_list(struct jparse *p, const char *where, json_t *obj,
					const char *key, struct dtplan__text *t, bool *given)
{
	json_t *v = json_object_get(obj, key), *e;
	size_t i;

	*given = v != NULL;
	if (v == NULL)
		return DTPLAN_OK;
	if (json_is_string(v)) {
		if (!dtplan__fabric_token_safe(json_string_value(v)))
			return dtplan__fabric_fail(p, where, "\"%s\": '%s' is not a hostlist", key,
						   json_string_value(v));
		dtplan__text_add(t, " %s=%s", key[0] == 'n' ? "Nodes" : "Switches",
				 json_string_value(v));
		return DTPLAN_OK;
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return dtplan__fabric_fail(
			p, where,
			"\"%s\" must be a hostlist string or a non-empty array of "
			"names",
			key);
	dtplan__text_add(t, " %s=", key[0] == 'n' ? "Nodes" : "Switches");
	json_array_foreach(v, i, e)
	{
		if (!json_is_string(e) || !dtplan__fabric_name_safe(json_string_value(e)))
			return dtplan__fabric_fail(p, where, "\"%s\"[%zu] is not a name", key, i);
		dtplan__text_add(t, "%s%s", i > 0 ? "," : "", json_string_value(e));
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan__fabric_emit_node_set(struct jparse *p, size_t i, json_t *ns)
{
	static const char *const keys[] = {"nodes", "gpu_type", "gpus", "nvlink_domain", NULL};
	const char *nodes = NULL, *gpu = NULL, *domain = NULL;
	char where[64], nodes_buf[4096], gpu_buf[64], domain_buf[64];
	long gpus = -1;

	snprintf(where, sizeof(where), "node_sets[%zu]", i);
	if (!json_is_object(ns))
		return dtplan__fabric_fail(p, where, "must be an object");
	if (json_object_get(ns, "nodes") == NULL)
		return dtplan__fabric_fail(p, where, "\"nodes\" (a hostlist) is required");
	/* the site file's NodeName= line checks the count's range */
	if (dtplan__fabric_check_keys(p, where, ns, keys) != DTPLAN_OK ||
	    dtplan__fabric_get_string(p, where, ns, "nodes", nodes_buf, sizeof(nodes_buf),
				      &nodes) != DTPLAN_OK ||
	    dtplan__fabric_get_string(p, where, ns, "gpu_type", gpu_buf, sizeof(gpu_buf), &gpu) !=
		    DTPLAN_OK ||
	    dtplan__fabric_get_string(p, where, ns, "nvlink_domain", domain_buf, sizeof(domain_buf),
				      &domain) != DTPLAN_OK ||
	    dtplan__jget_long(ns, p->source, where, "gpus", 0, 0, 1L << 30, &gpus, p->err) !=
		    DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	dtplan__text_add(&p->site, "NodeName=%s", nodes);
	if (gpu != NULL)
		dtplan__text_add(&p->site, " GpuType=%s", gpu);
	if (gpus >= 0)
		dtplan__text_add(&p->site, " Gpus=%ld", gpus);
	if (domain != NULL)
		dtplan__text_add(&p->site, " NVLinkDomain=%s", domain);
	dtplan__text_add(&p->site, "\n");
	dtplan__fabric_label_add(&p->site_lines, "%s (%.64s)", where, nodes);
	return DTPLAN_OK;
}

/* "network" and "nvlink": {"bandwidth": RATE, "latency": TIME}. */
enum dtplan_err dtplan__fabric_emit_link(struct jparse *p, json_t *root, const char *key,
					 const char *bw_key, const char *lat_key)
{
	static const char *const keys[] = {"bandwidth", "latency", NULL};
	json_t *o = json_object_get(root, key);
	char bw[64], lat[64];

	if (o == NULL)
		return DTPLAN_OK;
	if (!json_is_object(o))
		return dtplan__fabric_fail(p, key, "must be an object");
	if (dtplan__fabric_check_keys(p, key, o, keys) != DTPLAN_OK ||
	    dtplan__fabric_get_quantity(p, key, o, "bandwidth", "", bw, sizeof(bw)) != DTPLAN_OK ||
	    dtplan__fabric_get_quantity(p, key, o, "latency", "", lat, sizeof(lat)) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	if (bw[0] != '\0') {
		dtplan__text_add(&p->site, "%s=%s\n", bw_key, bw);
		dtplan__fabric_label_add(&p->site_lines, "%s.bandwidth", key);
	}
	if (lat[0] != '\0') {
		dtplan__text_add(&p->site, "%s=%s\n", lat_key, lat);
		dtplan__fabric_label_add(&p->site_lines, "%s.latency", key);
	}
	return DTPLAN_OK;
}

/* Rewrites a parser's "line N" error as the JSON element of that line. */
enum dtplan_err dtplan__fabric_relabel(struct jparse *p, const struct labels *l,
				       const struct dtplan_error *e)
{
	const char *where = label_of(l, e->line);

	if (e->code == DTPLAN_ERR_NOMEM)
		return dtplan__error(p->err, e->code, p->source, 0, "out of memory");
	if (where == NULL)
		return dtplan__error(p->err, e->code, p->source, 0, "%s", e->text);
	return dtplan__error(p->err, e->code, p->source, 0, "%s: %s", where, e->text);
}
