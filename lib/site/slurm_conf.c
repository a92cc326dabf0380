/*
 * slurm_conf.c: what dtplan takes from Slurm's own slurm.conf: the socket
 * Slurm's MUNGE plugin talks to (AuthInfo=socket=PATH) and the addresses
 * Slurm reaches its nodes at (NodeName=... NodeAddr=...).  Every other key
 * is Slurm's business and passes unread; a line dtplan does read must be
 * well formed (a NodeAddr list as long as its NodeName list).  Include
 * lines are not followed.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SLURM_CONF_MAX_NODES DTPLAN_HOSTLIST_MAX

/* The value of the token KEY=VALUE when its key is key (case-insensitive,
 * as Slurm reads them), else NULL. */
static const char *value_of(const char *tok, const char *key)
{
	size_t n = strlen(key);

	return strncasecmp(tok, key, n) == 0 && tok[n] == '=' ? tok + n + 1 : NULL;
}

/* AuthInfo=socket=PATH[,ttl=N,...] (23.11+ comma-separated options). */
static enum dtplan_err auth_info(const char *v, struct dtplan_slurm_conf *s, const char *source,
				 int lineno, struct dtplan_error *err)
{
	const char *p = v;

	while (p != NULL && *p != '\0') {
		const char *end = strchr(p, ',');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (len > 7 && strncasecmp(p, "socket=", 7) == 0) {
			if (len - 7 >= sizeof(s->auth_socket))
				return dtplan__error(err, DTPLAN_ERR_RANGE, source, lineno,
						     "AuthInfo: socket path longer than %zu bytes",
						     sizeof(s->auth_socket) - 1);
			memcpy(s->auth_socket, p + 7, len - 7);
			s->auth_socket[len - 7] = '\0';
		}
		p = end != NULL ? end + 1 : NULL;
	}
	return DTPLAN_OK;
}

/* NodeName=LIST ... NodeAddr=LIST: one address per name, in order. */
static enum dtplan_err node_line(const char *names, const char *addrs, struct dtplan_slurm_conf *s,
				 const char *source, int lineno, struct dtplan_error *err)
{
	char(*n)[64] = NULL, (*a)[64] = NULL;
	size_t nn = 0, na = 0;
	enum dtplan_err rv;

	if (strcasecmp(names, "DEFAULT") == 0)
		return DTPLAN_OK;
	rv = dtplan_hostlist_expand(names, SLURM_CONF_MAX_NODES, &n, &nn, err);
	if (rv == DTPLAN_OK)
		rv = dtplan_hostlist_expand(addrs, SLURM_CONF_MAX_NODES, &a, &na, err);
	if (rv != DTPLAN_OK) {
		if (err != NULL) {
			err->line = lineno;
			dtplan__strlcpy(err->source, source, sizeof(err->source));
		}
		goto out;
	}
	if (na != nn) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
				   "NodeName=%s names %zu nodes but NodeAddr=%s %zu addresses",
				   names, nn, addrs, na);
		goto out;
	}
	if (s->n_nodes + nn > SLURM_CONF_MAX_NODES) {
		rv = dtplan__error(err, DTPLAN_ERR_RANGE, source, lineno,
				   "more than %d nodes with NodeAddr", SLURM_CONF_MAX_NODES);
		goto out;
	}
	{
		char(*gn)[64] = realloc(s->node_names, (s->n_nodes + nn) * sizeof(*gn));
		char(*ga)[64];

		if (gn == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_NOMEM, source, lineno, "out of memory");
			goto out;
		}
		s->node_names = gn;
		ga = realloc(s->node_addrs, (s->n_nodes + nn) * sizeof(*ga));
		if (ga == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_NOMEM, source, lineno, "out of memory");
			goto out;
		}
		s->node_addrs = ga;
	}
	memcpy(s->node_names + s->n_nodes, n, nn * sizeof(*n));
	memcpy(s->node_addrs + s->n_nodes, a, nn * sizeof(*a));
	s->n_nodes += nn;
out:
	free(n);
	free(a);
	return rv;
}

enum dtplan_err dtplan_slurm_conf_parse_string(const char *text, const char *source,
					       struct dtplan_slurm_conf *s,
					       struct dtplan_error *err)
{
	char *copy = strdup(text != NULL ? text : ""), *cursor = copy, *line;
	enum dtplan_err rv = DTPLAN_OK;
	int lineno = 0;

	memset(s, 0, sizeof(*s));
	if (copy == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
	while (rv == DTPLAN_OK && (line = dtplan__conf_line(&cursor, &lineno)) != NULL) {
		const char *names = NULL, *addrs = NULL, *v;
		char *save = NULL, *tok;

		for (tok = strtok_r(line, " \t\r\v\f", &save); tok != NULL && rv == DTPLAN_OK;
		     tok = strtok_r(NULL, " \t\r\v\f", &save)) {
			if ((v = value_of(tok, "AuthInfo")) != NULL)
				rv = auth_info(v, s, source, lineno, err);
			else if ((v = value_of(tok, "NodeName")) != NULL)
				names = v;
			else if ((v = value_of(tok, "NodeAddr")) != NULL)
				addrs = v;
		}
		if (rv == DTPLAN_OK && names != NULL && addrs != NULL)
			rv = node_line(names, addrs, s, source, lineno, err);
	}
	free(copy);
	if (rv != DTPLAN_OK)
		dtplan_slurm_conf_fini(s);
	return rv;
}

enum dtplan_err dtplan_slurm_conf_read(const char *path, struct dtplan_slurm_conf *s,
				       struct dtplan_error *err)
{
	char *text = NULL;
	size_t len = 0;
	enum dtplan_err rv;

	memset(s, 0, sizeof(*s));
	/* a site file's limit (4 MiB): slurm.conf lists nodes in ranges */
	rv = dtplan_file_read(path, DTPLAN_FILE_SITE, &text, &len, err);
	if (rv != DTPLAN_OK)
		return rv;
	rv = dtplan_slurm_conf_parse_string(text, path, s, err);
	free(text);
	return rv;
}

const char *dtplan_slurm_conf_node_addr(const struct dtplan_slurm_conf *s, const char *node)
{
	for (size_t i = 0; s != NULL && node != NULL && i < s->n_nodes; i++)
		if (strcmp(s->node_names[i], node) == 0)
			return s->node_addrs[i];
	return NULL;
}

void dtplan_slurm_conf_fini(struct dtplan_slurm_conf *s)
{
	if (s == NULL)
		return;
	free(s->node_names);
	free(s->node_addrs);
	memset(s, 0, sizeof(*s));
}
