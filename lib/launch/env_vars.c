/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * env_vars.c: struct dtplan_env, the NAME=value list that lib/launch/env.c and
 * lib/launch/launch.c fill and the host program copies into an environment.
 * Values are bounded (DTPLAN_ENV_VALUE_MAX).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dtplan_env_init(struct dtplan_env *e)
{
	e->n = 0;
	e->vars = NULL;
}

void dtplan_env_fini(struct dtplan_env *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(e->vars[i].value);
	free(e->vars);
	e->n = 0;
	e->vars = NULL;
}

const char *dtplan_env_get(const struct dtplan_env *e, const char *name)
{
	for (size_t i = 0; e != NULL && name != NULL && i < e->n; i++)
		if (strcmp(e->vars[i].name, name) == 0)
			return e->vars[i].value;
	return NULL;
}

enum dtplan_err dtplan_env_set(struct dtplan_env *e, const char *name, const char *fmt, ...)
{
	struct dtplan_env_var *grown;
	char *value = NULL;
	va_list ap;
	size_t i;
	int n;

	if (e == NULL || name == NULL || name[0] == '\0' || strlen(name) >= sizeof(e->vars[0].name))
		return DTPLAN_ERR_INVAL;
	va_start(ap, fmt);
	n = vasprintf(&value, fmt, ap);
	va_end(ap);
	if (n < 0)
		return DTPLAN_ERR_NOMEM;
	if (n > DTPLAN_ENV_VALUE_MAX) {
		free(value);
		return DTPLAN_ERR_RANGE;
	}
	for (i = 0; i < e->n; i++) {
		if (strcmp(e->vars[i].name, name) == 0) {
			free(e->vars[i].value);
			e->vars[i].value = value;
			return DTPLAN_OK;
		}
	}
	grown = realloc(e->vars, (e->n + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(value);
		return DTPLAN_ERR_NOMEM;
	}
	e->vars = grown;
	dtplan__strlcpy(e->vars[e->n].name, name, sizeof(e->vars[e->n].name));
	e->vars[e->n].value = value;
	e->n++;
	return DTPLAN_OK;
}
