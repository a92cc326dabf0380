/* SPDX-License-Identifier: GPL-2.0-or-later */
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
