/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_comm.c: dtplan comm: time of one collective (alpha-beta model).
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "comm"

void cmd_comm_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan comm --op allreduce|allgather|reducescatter|p2p --bytes SIZE\n"
		"                   --ranks N --bandwidth RATE [--latency TIME] [--algo "
		"ring|tree|nvls]\n"
		"                   [--json]\n\n"
		"Predicts the time of one collective of SIZE bytes over N ranks.\n\n"
		"  --op OP            allreduce, allgather, reducescatter or p2p\n"
		"  --bytes SIZE       buffer size: 14GB, 33.6MB, 1GiB, 14e9\n"
		"  --ranks N          ranks taking part (2 for p2p)\n"
		"  --bandwidth RATE   link bandwidth per rank: 900GB/s, 400Gb/s\n"
		"  --latency TIME     per-message latency (default 0): 5us, 1.5ms\n"
		"  --algo ALGO        ring, tree or nvls (NVLink SHARP, in-switch reduction);\n"
		"                     tree and nvls: all-reduce only; default ring\n"
		"  --json             print JSON (schema " CLI_COMM_SCHEMA
		") instead of a table\n");
}

int cmd_comm(int argc, char **argv)
{
	enum dtplan_coll op = DTPLAN_COLL_ALLREDUCE;
	enum dtplan_algo algo = DTPLAN_ALGO_RING;
	double bytes = 0.0, bw = 0.0, lat = 0.0, secs, per_rank;
	int ranks = 0, rc;
	bool json = false;
	char a[32], b[32], t[32];
	json_t *root;
	const struct cli_opt opts[] = {
		{.name = "op", .kind = CLI_OPT_COLL, .dest = &op, .required = true},
		{.name = "bytes",
		 .kind = CLI_OPT_BYTES,
		 .dest = &bytes,
		 .max = 1e18,
		 .limit = "is absurdly large (over 1 EB)",
		 .required = true},
		{.name = "ranks",
		 .kind = CLI_OPT_INT,
		 .dest = &ranks,
		 .min = 1,
		 .max = 1 << 24,
		 .required = true},
		{.name = "bandwidth", .kind = CLI_OPT_RATE, .dest = &bw, .required = true},
		{.name = "latency",
		 .kind = CLI_OPT_TIME,
		 .dest = &lat,
		 .max = 3600.0,
		 .limit = "is over an hour"},
		{.name = "algo", .kind = CLI_OPT_ALGO, .dest = &algo},
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_comm_usage, .opts = opts};

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (op == DTPLAN_COLL_P2P && ranks != 2)
		return cli_usage_error(CMD, "--ranks %d: p2p is between 2 ranks", ranks);
	if (algo != DTPLAN_ALGO_RING && op != DTPLAN_COLL_ALLREDUCE)
		return cli_usage_error(CMD, "--algo %s applies to allreduce only, not %s",
				       dtplan_algo_name(algo), dtplan_coll_name(op));
	secs = dtplan_comm_seconds(op, algo, bytes, ranks, bw, lat);
	per_rank = dtplan_comm_bytes_per_rank(op, algo, bytes, ranks);
	if (json) {
		root = json_pack("{s:s, s:s, s:o, s:i, s:o, s:o, s:o, s:o}", "op",
				 dtplan_coll_name(op), "algo", dtplan_algo_name(algo), "bytes",
				 cli_json_number(bytes), "ranks", ranks, "bandwidth",
				 cli_json_number(bw), "latency", cli_json_number(lat), "seconds",
				 cli_json_number(secs), "bytes_per_rank",
				 cli_json_number(per_rank));
		return cli_json_print(CMD, cli_json_schema(root, CLI_COMM_SCHEMA));
	}
	printf("dtplan comm: %s (%s) of %s over %d ranks at %s, latency %s\n\n",
	       dtplan_coll_name(op), dtplan_algo_name(algo),
	       dtplan_format_bytes(bytes, a, sizeof(a)), ranks,
	       dtplan_format_rate(bw, b, sizeof(b)), dtplan_format_time(lat, t, sizeof(t)));
	printf("%-16s %14s\n", "quantity", "value");
	printf("%-16s %14s\n", "time", dtplan_format_time(secs, t, sizeof(t)));
	printf("%-16s %14s  (%.3f x the buffer)\n", "sent per rank",
	       dtplan_format_bytes(per_rank, a, sizeof(a)), per_rank / bytes);
	if (secs > 0.0)
		printf("%-16s %14s\n", "algorithm bw",
		       dtplan_format_rate(bytes / secs, b, sizeof(b)));
	return CLI_EXIT_OK;
}
