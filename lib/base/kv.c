/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kv.c: the one Key=Value table engine (issue 20).  A list of key=value
 * tokens, split on ',' or on blanks, applied to a struct through a table of
 * keys, with one error convention for every list that uses it (base.h).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t dtplan__kv_known(const struct dtplan__kv_table *t, char *buf, size_t size)
{
	size_t len = 0;

	if (size > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < t->n; i++) {
		int w;

		if (t->keys[i].hidden)
			continue;
		w = snprintf(buf + len, size > len ? size - len : 0, "%s%s", len ? ", " : "",
			     t->keys[i].name);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return len;
}

static const struct dtplan__kv_key *find(const struct dtplan__kv_table *t, const char *name,
					 size_t *index)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->nocase ? dtplan__streq_nocase(name, t->keys[i].name)
			      : strcmp(name, t->keys[i].name) == 0) {
			*index = i;
			return &t->keys[i];
		}
	}
	return NULL;
}

static enum dtplan_err apply(const struct dtplan__kv_key *k, void *obj, const char *value,
			     struct dtplan_error *err)
{
	char *field = (char *)obj + k->offset;
	enum dtplan_err ret;
	double d;
	long v;

	switch (k->kind) {
	case DTPLAN__KV_INT:
	case DTPLAN__KV_LONG:
		ret = dtplan_parse_long(value, k->name, k->min, k->max, &v, err);
		if (ret != DTPLAN_OK)
			return ret;
		if (k->kind == DTPLAN__KV_INT)
			*(int *)(void *)field = (int)v;
		else
			*(long *)(void *)field = v;
		return DTPLAN_OK;
	case DTPLAN__KV_DOUBLE: {
		char *end;

		d = strtod(value, &end);
		if (end == value || *end != '\0')
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "%s: '%s' is not a number", k->name, value);
		if (!(d >= k->dmin && d <= k->dmax))
			return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					     "%s: %s is out of range (%g to %g)", k->name, value,
					     k->dmin, k->dmax);
		*(double *)(void *)field = d;
		return DTPLAN_OK;
	}
	case DTPLAN__KV_BOOL:
		return dtplan_parse_bool(value, k->name, (bool *)(void *)field, err);
	case DTPLAN__KV_NAME:
		for (int i = 0; k->names != NULL && k->names[i] != NULL; i++) {
			if (dtplan__streq_nocase(value, k->names[i])) {
				*(int *)(void *)field = i;
				return DTPLAN_OK;
			}
		}
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0, "%s: unknown value '%s'",
				     k->name, value);
	case DTPLAN__KV_STRING:
		if (dtplan__strlcpy(field, value, k->size) >= k->size)
			return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					     "%s: '%s' is longer than %zu characters", k->name,
					     value, k->size - 1);
		return DTPLAN_OK;
	case DTPLAN__KV_CUSTOM:
		return k->parse(obj, k, value, err);
	case DTPLAN__KV_TEXT:
		*(char **)(void *)field = strdup(value);
		if (*(char **)(void *)field == NULL)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		return DTPLAN_OK;
	}
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "%s: unhandled key", k->name);
}

/* The messages' list of keys, made only for a message: a topology.conf of
 * 100,000 lines must not print it 100,000 times. */
static const char *known_keys(const struct dtplan__kv_table *t, char *buf, size_t size)
{
	if (t->known != NULL)
		dtplan__strlcpy(buf, t->known, size);
	else
		dtplan__kv_known(t, buf, size);
	return buf;
}

static bool is_sep(const struct dtplan__kv_table *t, char c)
{
	if (t->sep == '\0')
		return false; /* the whole text is one token */
	if (t->sep == ' ')
		return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
	return c == t->sep;
}

enum dtplan_err dtplan__kv_parse(const struct dtplan__kv_table *t, const char *text, void *obj,
				 bool *seen, const struct dtplan__kv_where *where,
				 struct dtplan_error *err)
{
	static const struct dtplan__kv_where nowhere = {"", "", 0};
	char known[512];
	bool given[DTPLAN__KV_MAX_KEYS] = {false};
	char *copy = NULL, *tok, *next;
	enum dtplan_err rv, ret;

	if (where == NULL)
		where = &nowhere;
	for (size_t i = 0; seen != NULL && i < t->n; i++)
		seen[i] = false;
	if (t->n > DTPLAN__KV_MAX_KEYS) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "table of %zu keys (at most %d)",
				   t->n, DTPLAN__KV_MAX_KEYS);
		goto out;
	}
	copy = strdup(text != NULL ? text : "");
	if (copy == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	for (tok = copy; tok != NULL; tok = next) {
		const struct dtplan__kv_key *k;
		char *eq;
		size_t i = 0;

		/* blanks: a run of them is one separator; ',': ",," is a typo */
		if (t->sep == ' ')
			while (*tok != '\0' && is_sep(t, *tok))
				tok++;
		for (next = tok; *next != '\0' && !is_sep(t, *next); next++)
			;
		if (*next != '\0')
			*next++ = '\0';
		else
			next = NULL;
		if (tok[0] == '\0') {
			if (t->sep == ' ')
				break;
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, where->source, where->line,
					   "%sempty field in '%s'", where->prefix, text);
			goto out;
		}
		eq = strchr(tok, '=');
		if (eq == NULL || eq == tok) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, where->source, where->line,
					   "%s'%s' is not %s (keys: %s)", where->prefix, tok,
					   t->form != NULL ? t->form : "key=value",
					   known_keys(t, known, sizeof(known)));
			goto out;
		}
		*eq = '\0';
		k = find(t, tok, &i);
		if (k == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, where->source, where->line,
					   "%sunknown key '%s' (known: %s)", where->prefix, tok,
					   known_keys(t, known, sizeof(known)));
			goto out;
		}
		if (given[i] && !t->repeat) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, where->source, where->line,
					   "%skey '%s' given twice", where->prefix, tok);
			goto out;
		}
		if (eq[1] == '\0' && !k->empty_ok) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, where->source, where->line,
					   "%skey '%s' has no value", where->prefix, tok);
			goto out;
		}
		given[i] = true;
		if (seen != NULL)
			seen[i] = true;
		ret = apply(k, obj, eq + 1, err);
		if (ret != DTPLAN_OK) {
			if (err != NULL && where->source[0] != '\0') {
				dtplan__strlcpy(err->source, where->source, sizeof(err->source));
				err->line = where->line;
			}
			rv = ret;
			goto out;
		}
	}
	rv = DTPLAN_OK;
out:
	free(copy);
	return rv;
}
