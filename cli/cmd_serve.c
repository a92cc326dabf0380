/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_serve.c: "dtplan serve", the collector's command: its usage and
 * options, handed to serve_run() (serve/serve.h), which keeps the reports
 * the plugin and "dtplan report" post and answers the page, /metrics,
 * /fabric and /calibration until SIGTERM or SIGINT.
 */
#include "config.h"

#include "cli.h"
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "serve"

void cmd_serve_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan serve [--listen ADDR:PORT] --db FILE [--munge-socket PATH]\n"
		"                    [--fabric FILE] [--max-body SIZE] [--rate N]\n"
		"                    [--keep-reports N] [--keep-days N] [--threads N]\n"
		"                    [--max-store SIZE] [--max-user-store SIZE]\n"
		"                    [--request-timeout S] [--json]\n"
		"\n"
		"The collector: keeps the plans (%s), step-time observations\n"
		"(dtplan.observation/1) and measurements (%s) that jobs post\n"
		"to ReportURL=, each with a MUNGE credential from root or the user it names,\n"
		"and answers / (a page for admins), /metrics (Prometheus), /fabric (the\n"
		"--fabric file with what was measured, for FabricURL=) and /calibration.\n"
		"Runs in the foreground until SIGTERM or SIGINT.\n"
		"\n"
		"Options:\n"
		"  --listen ADDR:PORT   where to listen, [ADDR6]:PORT for IPv6 (default %s;\n"
		"                       port 0: any, printed on stderr)\n"
		"  --db FILE            the SQLite store (created when missing)\n"
		"  --munge-socket PATH  munged's socket (default: libmunge's)\n"
		"  --fabric FILE        a %s file served at /fabric, enriched\n"
		"  --max-body SIZE      largest report taken (default 4MiB)\n"
		"  --rate N             reports a second taken from one address (default %g)\n"
		"  --keep-reports N     reports kept (default %ld)\n"
		"  --keep-days N        days a report is kept (default %g)\n"
		"  --threads N          threads answering (default %d)\n"
		"  --max-store SIZE     bytes of reports kept, the oldest removed first\n"
		"                       (default 8GiB)\n"
		"  --max-user-store SIZE  of which one user's, root's aside (default 256MiB)\n"
		"  --request-timeout S  seconds a connection may stay open (default %g)\n"
		"  --json               JSON lines (schema %s): \"listening\" (the address,\n"
		"                       port, store and version) and \"stopping\" on stdout,\n"
		"                       the log (\"refused\", \"suppressed\", \"server\") on\n"
		"                       stderr\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 after SIGTERM or SIGINT, 1 when it cannot start, 2 for bad "
		"usage.\n",
		DTPLAN_REPORT_SCHEMA, DTPLAN_MEASURE_SCHEMA, SERVE_LISTEN, DTPLAN_FABRIC_SCHEMA,
		SERVE_RATE, SERVE_KEEP_REPORTS, SERVE_KEEP_DAYS, SERVE_THREADS, SERVE_REQUEST_S,
		SERVE_JSON_SCHEMA);
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = {
		.listen = SERVE_LISTEN,
		.rate = SERVE_RATE,
		.keep_days = SERVE_KEEP_DAYS,
		.request_timeout = SERVE_REQUEST_S,
		.max_store = SERVE_MAX_STORE,
		.max_user_store = SERVE_MAX_USER_STORE,
	};
	struct dtplan_error err = {0};
	double max_body = (double)SERVE_MAX_BODY;
	int keep = (int)SERVE_KEEP_REPORTS, threads = SERVE_THREADS, rc;
	const struct cli_opt opts[] = {
		{.name = "listen", .kind = CLI_OPT_STRING, .dest = &o.listen},
		{.name = "db", .kind = CLI_OPT_STRING, .dest = &o.db, .required = true},
		{.name = "munge-socket", .kind = CLI_OPT_STRING, .dest = &o.munge_socket},
		{.name = "fabric", .kind = CLI_OPT_STRING, .dest = &o.fabric},
		{.name = "max-body",
		 .kind = CLI_OPT_BYTES,
		 .dest = &max_body,
		 .positive = true,
		 .max = 1 << 30,
		 .limit = "must be more than 0 and at most 1GiB"},
		{.name = "rate", .kind = CLI_OPT_DOUBLE, .dest = &o.rate, .min = 0.01, .max = 1e6},
		{.name = "keep-reports",
		 .kind = CLI_OPT_INT,
		 .dest = &keep,
		 .min = 1,
		 .max = 2147483647},
		{.name = "keep-days",
		 .kind = CLI_OPT_DOUBLE,
		 .dest = &o.keep_days,
		 .min = 0.001,
		 .max = 36500},
		{.name = "threads", .kind = CLI_OPT_INT, .dest = &threads, .min = 1, .max = 256},
		{.name = "max-store",
		 .kind = CLI_OPT_BYTES,
		 .dest = &o.max_store,
		 .positive = true,
		 .max = 1e15,
		 .limit = "must be more than 0 and at most 1PB"},
		{.name = "max-user-store",
		 .kind = CLI_OPT_BYTES,
		 .dest = &o.max_user_store,
		 .positive = true,
		 .max = 1e15,
		 .limit = "must be more than 0 and at most 1PB"},
		{.name = "request-timeout",
		 .kind = CLI_OPT_DOUBLE,
		 .dest = &o.request_timeout,
		 .min = 1,
		 .max = 86400},
		CLI_OPT_JSON(&o.json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_serve_usage, .opts = opts};

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (!serve_listen_valid(o.listen))
		return cli_usage_error(CMD, "--listen: '%s' is not ADDR:PORT or [ADDR6]:PORT",
				       o.listen);
	o.max_body = (size_t)max_body;
	o.keep_reports = keep;
	o.threads = threads;
	if (serve_run(&o, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, false);
	return CLI_EXIT_OK;
}
