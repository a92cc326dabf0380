/*
 * conffile.c: reading Slurm-style configuration files (topology.conf,
 * dtplan.conf): the whole file, then one line at a time without comments.
 */
#include "config.h"

#include "dtplan_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum dtplan_err dtplan__read_file(const char *path, char **out, struct dtplan_error *err)
{
	FILE *f;
	char *buf = NULL, *tmp;
	size_t len = 0, cap = 0, got;
	enum dtplan_err rv;

	if (out == NULL || path == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no file name given");
	*out = NULL;
	f = fopen(path, "r");
	if (f == NULL)
		return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot open: %s",
				     strerror(errno));
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			tmp = realloc(buf, cap + 1);
			if (tmp == NULL) {
				rv = dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "out of memory");
				goto out;
			}
			buf = tmp;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	if (ferror(f)) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (memchr(buf, '\0', len) != NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0, "file contains a NUL byte");
		goto out;
	}
	buf[len] = '\0';
	*out = buf;
	buf = NULL;
	rv = DTPLAN_OK;
out:
	free(buf);
	fclose(f);
	return rv;
}

char *dtplan__conf_line(char **cursor, int *lineno)
{
	char *line = *cursor, *end, *hash;

	if (line == NULL)
		return NULL;
	end = strchr(line, '\n');
	if (end != NULL)
		*end++ = '\0';
	*cursor = end;
	(*lineno)++;
	hash = strchr(line, '#');
	if (hash != NULL)
		*hash = '\0';
	return line;
}
