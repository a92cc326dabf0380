/*
 * conffile.c: reading Slurm-style configuration files (topology.conf,
 * dtplan.conf), read whole with dtplan_file_read(), one line at a time
 * without comments.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <string.h>

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

enum dtplan_err dtplan__conf_keys(char *line, const char *const *keys, const char **vals, size_t n,
				  const char **unknown, const char *source, int lineno,
				  struct dtplan_error *err)
{
	char *save = NULL, *tok;
	size_t k;

	*unknown = NULL;
	for (k = 0; k < n; k++)
		vals[k] = NULL;
	for (tok = strtok_r(line, " \t\r\v\f", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\r\v\f", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			return dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
					     "'%s' is not Key=Value", tok);
		*eq = '\0';
		for (k = 0; k < n && !dtplan__streq_nocase(tok, keys[k]); k++)
			;
		if (k == n) {
			*unknown = tok;
			return DTPLAN_ERR_PARSE;
		}
		if (vals[k] != NULL)
			return dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
					     "%s= given twice on one line", tok);
		if (eq[1] == '\0')
			return dtplan__error(err, DTPLAN_ERR_PARSE, source, lineno,
					     "%s= has no value", tok);
		vals[k] = eq + 1;
	}
	return DTPLAN_OK;
}
