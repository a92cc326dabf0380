/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c: the library's only way to say something.  The host program installs
 * a sink (stderr in the CLI, slurm_* in the plugin); without one, messages
 * are dropped.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdio.h>

static dtplan_log_sink_fn log_sink;
static void *log_sink_arg;

void dtplan_log_set_sink(dtplan_log_sink_fn fn, void *arg)
{
	log_sink = fn;
	log_sink_arg = arg;
}

void dtplan__log(enum dtplan_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (log_sink == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_sink(level, msg, log_sink_arg);
}
