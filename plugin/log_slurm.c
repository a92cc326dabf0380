/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log_slurm.c: libdtplan's log sink for the plugin.
 *
 * Errors go to slurm_error (the job's output file in user_init/task_init,
 * the terminal on the submit side), warnings and notes to slurm_info (the
 * slurmd log in slurmstepd, the terminal on the submit side), tracing to
 * slurm_debug.
 */
#include "config.h"

#include "plugin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void slurm_sink(enum dtplan_log_level level, const char *msg, void *arg)
{
	switch (level) {
	case DTPLAN_LOG_ERROR:
		slurm_error(DTPLAN_LOG_PREFIX "%s", msg);
		break;
	case DTPLAN_LOG_WARNING:
		slurm_info(DTPLAN_LOG_PREFIX "warning: %s", msg);
		break;
	case DTPLAN_LOG_INFO:
		slurm_info(DTPLAN_LOG_PREFIX "%s", msg);
		break;
	case DTPLAN_LOG_DEBUG:
	default:
		slurm_debug(DTPLAN_LOG_PREFIX "%s", msg);
		break;
	}
}

void dtspank__log_install(void)
{
	dtplan_log_set_sink(slurm_sink, NULL);
}

void dtspank__log_block(const char *text)
{
	const char *line = text;

	while (line != NULL && *line != '\0') {
		size_t len = strcspn(line, "\n");

		slurm_spank_log("%.*s", (int)len, line);
		line += len;
		if (*line == '\n')
			line++;
	}
}

void dtspank__bprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}
