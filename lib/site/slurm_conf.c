/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurm_conf.c: what dtplan takes from Slurm's own slurm.conf: the socket
 * Slurm's MUNGE plugin talks to (AuthInfo=socket=PATH) and the addresses
 * Slurm reaches its nodes at (NodeName=... NodeAddr=...).  Every other key
 * is Slurm's business and passes unread; a line dtplan does read must be
 * well formed (a NodeAddr list as long as its NodeName list).
 *
 * Include lines are followed when a file is read (dtplan_slurm_conf_read()),
 * as Slurm's parse_config.c does: "Include PATH", the keyword in any case,
 * PATH's %c the ClusterName= given before it, a relative PATH read in the
 * including file's folder.  Nesting is bounded (SLURM_CONF_MAX_DEPTH deep,
 * SLURM_CONF_MAX_FILES files in all) and a file that includes itself,
 * directly or through others, is refused.  A text parsed alone
 * (dtplan_slurm_conf_parse_string()) has no folder: its Include lines pass
 * unread.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define SLURM_CONF_MAX_NODES DTPLAN_HOSTLIST_MAX
#define SLURM_CONF_MAX_DEPTH 16  /* files open at once: slurm.conf and 15 nested */
#define SLURM_CONF_MAX_FILES 256 /* files read in all */

/* The files being read, outermost first, to refuse a cycle; NULL for a
 * text parsed alone. */
struct include_chain {
	int depth;
	int files;
	dev_t dev[SLURM_CONF_MAX_DEPTH];
	ino_t ino[SLURM_CONF_MAX_DEPTH];
	char cluster[128]; /* ClusterName=, for %c */
};

static enum dtplan_err parse_text(char *text, const char *source, struct include_chain *chain,
				  struct dtplan_slurm_conf *s, struct dtplan_error *err);

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

/* path with %c replaced by the cluster's name, into out. */
static enum dtplan_err expand_path(const char *path, const struct include_chain *chain, char *out,
				   size_t size, const char *source, int lineno,
				   struct dtplan_error *err)
{
	size_t n = 0;

	for (const char *p = path; *p != '\0'; p++) {
		const char *add = p;
		size_t len = 1;

		if (*p == '%') {
			if (p[1] != 'c')
				return dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
						     "Include %s: only %%c may follow %%", path);
			if (chain->cluster[0] == '\0')
				return dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
						     "Include %s: %%c before ClusterName=", path);
			add = chain->cluster;
			len = strlen(add);
			p++;
		}
		if (n + len >= size)
			return dtplan__error(err, DTPLAN_ERR_RANGE, source, lineno,
					     "Include %s: path longer than %zu bytes", path,
					     size - 1);
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return DTPLAN_OK;
}

/* Include PATH, met at source:lineno: read PATH (relative: in source's
 * folder) and parse it into s. */
static enum dtplan_err include(const char *path, const char *source, int lineno,
			       struct include_chain *chain, struct dtplan_slurm_conf *s,
			       struct dtplan_error *err)
{
	char expanded[PATH_MAX], full[PATH_MAX], *text = NULL;
	const char *slash = strrchr(source, '/');
	struct stat st;
	enum dtplan_err rv;
	int n;

	rv = expand_path(path, chain, expanded, sizeof(expanded), source, lineno, err);
	if (rv != DTPLAN_OK)
		return rv;
	if (expanded[0] == '/' || slash == NULL)
		n = snprintf(full, sizeof(full), "%s", expanded);
	else
		n = snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - source), source,
			     expanded);
	if (n < 0 || (size_t)n >= sizeof(full))
		return dtplan__error(err, DTPLAN_ERR_RANGE, source, lineno,
				     "Include %s: path longer than %zu bytes", path,
				     sizeof(full) - 1);
	if (chain->depth >= SLURM_CONF_MAX_DEPTH || chain->files >= SLURM_CONF_MAX_FILES)
		return dtplan__error(err, DTPLAN_ERR_RANGE, source, lineno,
				     "Include %s: more than %d files deep or %d in all", full,
				     SLURM_CONF_MAX_DEPTH, SLURM_CONF_MAX_FILES);
	if (stat(full, &st) != 0)
		return dtplan__error(err, DTPLAN_ERR_IO, source, lineno, "Include %s: %s", full,
				     strerror(errno));
	for (int i = 0; i < chain->depth; i++)
		if (chain->dev[i] == st.st_dev && chain->ino[i] == st.st_ino)
			return dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
					     "Include %s: the file includes itself", full);
	rv = dtplan_file_read(full, DTPLAN_FILE_SITE, &text, NULL, err);
	if (rv != DTPLAN_OK)
		return rv;
	chain->dev[chain->depth] = st.st_dev;
	chain->ino[chain->depth] = st.st_ino;
	chain->depth++;
	chain->files++;
	rv = parse_text(text, full, chain, s, err);
	chain->depth--;
	free(text);
	return rv;
}

/* "Include PATH" (Slurm: the keyword in any case, then blanks): PATH, or
 * NULL when line is no Include line. */
static char *include_path(char *line)
{
	char *p = line, *end;

	while (isspace((unsigned char)*p))
		p++;
	if (strncasecmp(p, "include", 7) != 0 || !isspace((unsigned char)p[7]))
		return NULL;
	p += 7;
	while (isspace((unsigned char)*p))
		p++;
	for (end = p; *end != '\0' && !isspace((unsigned char)*end); end++)
		;
	*end = '\0';
	return p;
}

/* Parses text (modified) into s, which it adds to; chain NULL: Include
 * lines pass unread. */
static enum dtplan_err parse_text(char *text, const char *source, struct include_chain *chain,
				  struct dtplan_slurm_conf *s, struct dtplan_error *err)
{
	char *cursor = text, *line, *path;
	enum dtplan_err rv = DTPLAN_OK;
	int lineno = 0;

	while (rv == DTPLAN_OK && (line = dtplan__conf_line(&cursor, &lineno)) != NULL) {
		const char *names = NULL, *addrs = NULL, *v;
		char *save = NULL, *tok;

		if ((path = include_path(line)) != NULL) {
			if (chain != NULL && *path != '\0')
				rv = include(path, source, lineno, chain, s, err);
			else if (chain != NULL)
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
						   "Include names no file");
			continue;
		}
		for (tok = strtok_r(line, " \t\r\v\f", &save); tok != NULL && rv == DTPLAN_OK;
		     tok = strtok_r(NULL, " \t\r\v\f", &save)) {
			if ((v = value_of(tok, "AuthInfo")) != NULL)
				rv = auth_info(v, s, source, lineno, err);
			else if ((v = value_of(tok, "NodeName")) != NULL)
				names = v;
			else if ((v = value_of(tok, "NodeAddr")) != NULL)
				addrs = v;
			else if ((v = value_of(tok, "ClusterName")) != NULL && chain != NULL)
				dtplan__strlcpy(chain->cluster, v, sizeof(chain->cluster));
		}
		if (rv == DTPLAN_OK && names != NULL && addrs != NULL)
			rv = node_line(names, addrs, s, source, lineno, err);
	}
	return rv;
}

enum dtplan_err dtplan_slurm_conf_parse_string(const char *text, const char *source,
					       struct dtplan_slurm_conf *s,
					       struct dtplan_error *err)
{
	char *copy = strdup(text != NULL ? text : "");
	enum dtplan_err rv;

	memset(s, 0, sizeof(*s));
	if (copy == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
	rv = parse_text(copy, source, NULL, s, err);
	free(copy);
	if (rv != DTPLAN_OK)
		dtplan_slurm_conf_fini(s);
	return rv;
}

enum dtplan_err dtplan_slurm_conf_read(const char *path, struct dtplan_slurm_conf *s,
				       struct dtplan_error *err)
{
	struct include_chain chain = {0};
	struct stat st;
	char *text = NULL;
	enum dtplan_err rv;

	memset(s, 0, sizeof(*s));
	/* a site file's limit (4 MiB) each: slurm.conf lists nodes in ranges */
	rv = dtplan_file_read(path, DTPLAN_FILE_SITE, &text, NULL, err);
	if (rv != DTPLAN_OK)
		return rv;
	if (stat(path, &st) == 0) {
		chain.dev[0] = st.st_dev;
		chain.ino[0] = st.st_ino;
	}
	chain.depth = chain.files = 1;
	rv = parse_text(text, path, &chain, s, err);
	free(text);
	if (rv != DTPLAN_OK)
		dtplan_slurm_conf_fini(s);
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
