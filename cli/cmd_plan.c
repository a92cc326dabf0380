/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_plan.c: dtplan plan: the whole plan for a model on N GPUs, offline.
 */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dtprobes.h"

#define CMD "plan"

void cmd_plan_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan plan --model SPEC --gpus N [--gpus-per-node G] [--gpu TYPE]\n"
		"                   [--seq S] [--global-batch B] [--tp T] [--pp P] [--ep E]\n"
		"                   [--etp T] [--cp C] [--zero Z] [--micro-batch B] [--recompute "
		"R]\n"
		"                   [--train SPEC] [--tokens N] [--svg FILE] [--json]\n"
		"                   [--nodes HOSTLIST] [--topology FILE] [--site FILE]\n"
		"                   [--node-xml HOSTLIST=FILE[,...]] [--node-json HOSTLIST=FILE]\n"
		"                   [--measurements FILE] [--fabric-url URL] [--report-url URL]\n"
		"                   [--records FILE] [--cluster NAME] [--no-calibration]\n\n"
		"Searches TP, PP, DP, ZeRO stage, micro-batch and recomputation for the model\n"
		"on N GPUs, and prints the fastest plan that fits in memory, why the runner-up\n"
		"lost, and the checkpoint interval.\n\n"
		"  --model SPEC         preset name, config.json path, "
		"layers=..,hidden=..,heads=..\n"
		"                       or a size such as 7B\n"
		"  --gpus N             GPUs in the job\n"
		"  --gpus-per-node G    GPUs per node (default 8); with --nodes, the GPUs of\n"
		"                       each node the job holds (default all)\n"
		"  --gpu TYPE           GPU type from the catalog (default h100-sxm)\n"
		"  --seq S              sequence length (default: a preset's pre-training length,\n"
		"                       else the model's context length, else 4096)\n"
		"  --global-batch B     sequences per step (default 1024): the plan trains the\n"
		"                       nearest value DP can make, within 5%%; B! for exactly B\n"
		"  --tp T, --pp P, --zero Z, --micro-batch B, --recompute "
		"none|selective|fine|full\n"
		"                       pin that choice instead of searching it\n"
		"  --ep E, --cp C       pin expert parallelism (a divisor of the experts; with\n"
		"                       framework=megatron ETP x EP divides TP x CP x DP,\n"
		"                       Megatron-Core's folding) and context parallelism (1: "
		"none)\n"
		"  --etp T              pin the experts' tensor parallelism (default: searched,\n"
		"                       TP's or 1)\n"
		"  --train SPEC         the --dt-train keys: vp=N, offload=auto|yes|no,\n"
		"                       framework=deepspeed|megatron|torchtitan,\n"
		"                       attention=flash|unfused,\n"
		"                       precision=bf16|fp8|mxfp8|nvfp4,\n"
		"                       schedule=1f1b|dualpipe,\n"
		"                       moments=fp32|bf16 (Adam's),\n"
		"                       grads=default|fp32|bf16 (bf16: Megatron-LM's\n"
		"                       --grad-reduce-in-bf16), calibration=on|off\n"
		"                       (off: --no-calibration), and the\n"
		"                       keys above (recompute=fine: Megatron-Core's recompute\n"
		"                       modules, searched only when asked for)\n"
		"  --tokens N           tokens of the whole run (\"15T\"): the time to train it\n"
		"  --svg FILE           also draw the nodes and GPUs, coloured by pipeline stage\n"
		"  --json               print the plan as JSON (schema %s)\n"
		"  --nodes HOSTLIST     the allocation (\"gpu[01-16]\"): ranks are placed on it\n"
		"                       in topology order; --gpus then defaults to all its GPUs\n"
		"  --topology FILE      Slurm topology.conf (switch tree)\n"
		"  --site FILE          dtplan.conf site file (oversubscription, fabric, "
		"thresholds)\n"
		"  --node-xml HOSTLIST=FILE[,HOSTLIST=FILE...]\n"
		"                       hwloc XML inventories of those nodes (repeatable)\n"
		"  --node-json HOSTLIST=FILE\n"
		"                       inventories saved by \"dtplan node --json\" (repeatable)\n"
		"  --measurements FILE  plan with a saved measurement: the prolog's file\n"
		"                       (spool_dir/JOBID.json) or \"dtplan probe --json\": its\n"
		"                       inventories, uplink ratios and stragglers (its hosts\n"
		"                       are the allocation unless --nodes says otherwise)\n"
		"  --fabric-url URL     the fabric from a service (dtplan.fabric/1 JSON or\n"
		"                       topology.conf text) instead of --topology, through the\n"
		"                       site's FabricCache=; default the site's FabricURL=.  When\n"
		"                       it fails, the cache or --topology, and a warning\n"
		"  --report-url URL     also post the plan to this collector (dtplan.report/1);\n"
		"                       a failure is a warning on stderr, never an error\n"
		"  --records FILE       the records of earlier jobs (dtplan history); the step\n"
		"                       carries the correction learned from them (default: the\n"
		"                       site's RecordDB=, else $XDG_STATE_HOME/dtplan/records.db)\n"
		"  --cluster NAME       learn from this cluster's records (default\n"
		"                       $SLURM_CLUSTER_NAME, else every cluster's)\n"
		"  --no-calibration     the model alone, whatever the records say\n"
		"Nodes without an inventory are assumed equal to the first one given (or to\n"
		"generic nodes of --gpus-per-node GPUs), and the plan says so.\n"
		"Exit status 1 when nothing fits: the message names the smallest GPU count that\n"
		"would.\n",
		DTPLAN_PLAN_SCHEMA);
}

/*
 * What the flags of dtplan plan set.  To add a flag: a row in the table in
 * cmd_plan() (and a field here when the request has none to take it), a
 * line in cmd_plan_usage() and in doc/dtplan.1.in, and a test in
 * tests/cli/test_plan.sh.
 */
struct plan_args {
	struct dtplan_request req;
	struct cli_cluster cluster;
	const char *model, *svg, *nodes, *topology, *measurements, *fabric_url, *report_url;
	const char *records, *cluster_name;
	enum dtplan_recompute recompute;
	bool have_recompute, have_gpus_per_node, have_gpu, json, no_calibration;
};

/*
 * The corrections learned from the records, into cal (dtplan_allocation_plan()
 * asks unless the request says calibration=off).  A database that is
 * missing teaches nothing; one that cannot be read is a warning, and the
 * plan is the model's.
 */
static int calibrate(void *arg, struct dtplan_calibration *cal)
{
	const struct plan_args *a = arg;
	const char *cl = cli_records_cluster(a->cluster_name);
	struct dtplan_record *recs = NULL;
	struct dtplan_error err = {0};
	struct dtplan_recdb *db = NULL;
	enum dtplan_err rv;
	char path[4096], buf[1024];
	size_t n = 0;

	if (a->no_calibration ||
	    cli_records_path(CMD, a->records, &a->cluster.config, path, sizeof(path)) != 0)
		return -1;
	rv = dtplan_recdb_open(path, false, &db, &err);
	if (rv == DTPLAN_OK)
		rv = dtplan_recdb_list(db, cl, &recs, &n, &err);
	if (rv == DTPLAN_OK)
		rv = dtplan_calibration_learn(recs, n, cl, cal, &err);
	if (rv != DTPLAN_OK && rv != DTPLAN_ERR_NOT_FOUND)
		fprintf(stderr, "dtplan %s: warning: no calibration: %s\n", CMD,
			dtplan_error_format(&err, buf, sizeof(buf)));
	dtplan_recdb_close(db);
	free(recs);
	return rv == DTPLAN_OK ? 0 : -1;
}

/*
 * The request on the effective settings c: the flags' already; when the
 * fabric (--fabric-url or the site's FabricURL=) was applied, its settings
 * as the site file's are (no flag sets them, but --gpu wins over the
 * fabric's GPU type as over the site's).
 */
static enum dtplan_err request(void *arg, const struct dtplan_config *c, struct dtplan_request *req,
			       struct dtplan_error *err)
{
	const struct plan_args *a = arg;
	struct dtplan_gpu gpu = req->gpu;

	(void)err;
	if (c == &a->cluster.config)
		return DTPLAN_OK;
	dtplan_request_apply_config(req, c);
	if (a->have_gpu) {
		req->gpu = gpu;
		req->gpu_from = DTPLAN_GPU_FROM_USER;
	}
	return DTPLAN_OK;
}

/* A fault that changes nothing (MTBF=slurm's cache), on stderr. */
static void warn(void *arg, const char *text)
{
	(void)arg;
	fprintf(stderr, "dtplan %s: warning: %s\n", CMD, text);
}

/* The message and exit status for the step of the allocation that failed. */
static int plan_failed(const struct plan_args *a, struct dtplan_error *err)
{
	switch (a->cluster.alloc.step) {
	case DTPLAN_ALLOC_NODES:
		/* a host not in --nodes is a usage error, as is a bad file */
		if (err->code == DTPLAN_ERR_INVAL && err->source[0] == '-')
			return cli_usage_error(CMD, "%s: %s", err->source, err->text);
		return cli_report(CMD, err, true);
	case DTPLAN_ALLOC_MEASURE:
		return cli_report(CMD, err, false);
	case DTPLAN_ALLOC_PLAN:
		/* the library names a pinned choice by its field: show the flag,
		 * or "--train KEY" for the keys only --train sets */
		if (err->code == DTPLAN_ERR_INVAL && err->source[0] != '\0' &&
		    err->source[0] != '-') {
			static const char *const train_only[] = {"vp",        "offload",
								 "framework", "attention",
								 "precision", "schedule",
								 "moments",   "grads"};
			char field[64];

			snprintf(field, sizeof(field), "%.60s", err->source);
			snprintf(err->source, sizeof(err->source), "--%s", field);
			for (size_t i = 0; i < sizeof(train_only) / sizeof(train_only[0]); i++)
				if (strcmp(field, train_only[i]) == 0)
					snprintf(err->source, sizeof(err->source), "--train %s",
						 field);
		}
		return cli_report(CMD, err, true);
	case DTPLAN_ALLOC_NOTES:
		return cli_usage_error(CMD, "out of memory");
	default:
		return cli_report(CMD, err, true);
	}
}

/* --report-url: one report of the plan; a failure is only a warning. */
static void report(const struct plan_args *a, const char *plan_json)
{
	const struct dtplan_config *c = cli_cluster_config(&a->cluster);
	struct dtplan_error err = {0};
	char buf[1024];

	if (cli_report_post(c, a->report_url, "dtplan plan", plan_json, 0, NULL,
			    c->report_timeout_s, &err) != DTPLAN_OK)
		fprintf(stderr, "dtplan %s: warning: the plan was not reported: %s\n", CMD,
			dtplan_error_format(&err, buf, sizeof(buf)));
}

/* --site FILE: read before the other flags, so that they override its values. */
static int set_site(const char *cmd, const struct cli_opt *o, const char *value)
{
	struct plan_args *a = o->dest;
	int rc = cli_cluster_site(cmd, &a->cluster, value);

	if (rc == CLI_EXIT_OK)
		dtplan_request_apply_config(&a->req, &a->cluster.config);
	return rc;
}

/* --global-batch B or B! (exactly B) */
static int set_batch(const char *cmd, const struct cli_opt *o, const char *value)
{
	struct dtplan_error err = {0};

	if (dtplan_parse_global_batch(value, "--global-batch", o->dest, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "%s", err.text);
	return CLI_EXIT_OK;
}

/* --train SPEC: the --dt-train keys, one parser for both */
static int set_train(const char *cmd, const struct cli_opt *o, const char *value)
{
	struct dtplan_error err = {0};

	if (dtplan_request_parse_train(o->dest, value, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "--train: %s", err.text);
	return CLI_EXIT_OK;
}

/*
 * DTPLAN_CALIBRATION="gemm=G,attention=A,overlap=T,zero3=Z": the
 * step-time model's calibrated constants replaced, all four (tests/calibrate.py fits
 * them with it; doc/internals/cost-model.md, "Calibration").
 */
static int set_calibration(struct dtplan_request *req, const char *spec)
{
	static const char *const keys[] = {"gemm", "attention", "overlap", "zero3"};
	double v[4];
	const char *p = spec;

	for (int i = 0; i < 4; i++) {
		size_t n = strlen(keys[i]);
		char *end;

		if (strncmp(p, keys[i], n) != 0 || p[n] != '=')
			return cli_usage_error(CMD,
					       "DTPLAN_CALIBRATION: '%s': expected %s= at '%s'",
					       spec, keys[i], p);
		v[i] = strtod(p + n + 1, &end);
		if (end == p + n + 1 || !(v[i] >= 0.0 && v[i] <= 10.0) ||
		    *end != (i < 3 ? ',' : '\0'))
			return cli_usage_error(CMD,
					       "DTPLAN_CALIBRATION: '%s': %s= needs a number in "
					       "[0, 10]%s",
					       spec, keys[i], i < 3 ? " and a comma" : "");
		p = end + (i < 3);
	}
	if (!(v[0] > 0.0 && v[1] > 0.0 && v[2] <= 1.0 && v[3] <= 1.0))
		return cli_usage_error(CMD,
				       "DTPLAN_CALIBRATION: '%s': gemm and attention must be "
				       "> 0, overlap and zero3 at most 1",
				       spec);
	req->model_fit = (struct dtplan_model_fit){true, v[0], v[1], v[2], v[3]};
	return CLI_EXIT_OK;
}

/* --tokens N: a count such as 15T, through the tokens= key of --train */
static int set_tokens(const char *cmd, const struct cli_opt *o, const char *value)
{
	struct dtplan_error err = {0};
	char spec[64];

	if (strlen(value) > 40)
		return cli_usage_error(cmd, "--tokens: '%.40s...' is too long", value);
	snprintf(spec, sizeof(spec), "tokens=%s", value);
	if (dtplan_request_parse_train(o->dest, spec, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "--%s", err.text);
	return CLI_EXIT_OK;
}

/* --node-xml and --node-json HOSTLIST=FILE[,HOSTLIST=FILE...] */
static int add_nodes(const char *cmd, const struct cli_opt *o, const char *value)
{
	struct plan_args *a = o->dest;
	bool json = strcmp(o->name, "node-json") == 0;

	return cli_cluster_add_specs(cmd, &a->cluster, json ? "--node-json" : "--node-xml", value,
				     json);
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args a = {.model = NULL};
	struct dtplan_allocation_in in = {0};
	struct dtplan_request *req = &a.req;
	struct dtplan_error err = {0};
	struct dtplan_plan *plan = NULL;
	char *text = NULL, *json = NULL;
	enum dtplan_err rv;
	bool placed;
	int rc;
	/* one row per flag, in the order of the usage */
	const struct cli_opt opts[] = {
		CLI_OPT_MODEL(&a.model),
		CLI_OPT_GPUS(&req->gpus, 1 << 20, false),
		CLI_OPT_GPUS_PER_NODE(&req->gpus_per_node, &a.have_gpus_per_node),
		{.name = "gpu", .kind = CLI_OPT_GPU, .dest = &req->gpu, .seen = &a.have_gpu},
		CLI_OPT_SEQ(&req->seq, 1),
		{.name = "global-batch", .kind = CLI_OPT_CALL, .dest = req, .call = set_batch},
		CLI_OPT_TP(&req->tp, 1024),
		CLI_OPT_PP(&req->pp),
		{.name = "ep", .kind = CLI_OPT_INT, .dest = &req->ep, .min = 1, .max = 1 << 16},
		{.name = "etp", .kind = CLI_OPT_INT, .dest = &req->etp, .min = 1, .max = 1 << 16},
		{.name = "cp", .kind = CLI_OPT_INT, .dest = &req->cp, .min = 1, .max = 1 << 16},
		CLI_OPT_ZERO(&req->zero),
		CLI_OPT_MICRO_BATCH(&req->micro_batch),
		CLI_OPT_RECOMPUTE(&a.recompute, &a.have_recompute),
		{.name = "train", .kind = CLI_OPT_CALL, .dest = req, .call = set_train},
		{.name = "tokens", .kind = CLI_OPT_CALL, .dest = req, .call = set_tokens},
		{.name = "svg", .kind = CLI_OPT_STRING, .dest = &a.svg},
		CLI_OPT_JSON(&a.json),
		{.name = "nodes", .kind = CLI_OPT_STRING, .dest = &a.nodes},
		CLI_OPT_TOPOLOGY(&a.topology, false),
		{.name = "site", .kind = CLI_OPT_CALL, .dest = &a, .early = true, .call = set_site},
		{.name = "node-xml", .kind = CLI_OPT_CALL, .dest = &a, .call = add_nodes},
		{.name = "node-json", .kind = CLI_OPT_CALL, .dest = &a, .call = add_nodes},
		{.name = "measurements",
		 .kind = CLI_OPT_STRING,
		 .dest = &a.measurements,
		 .once = true},
		{.name = "fabric-url", .kind = CLI_OPT_STRING, .dest = &a.fabric_url},
		{.name = "report-url", .kind = CLI_OPT_STRING, .dest = &a.report_url},
		CLI_OPT_RECORDS(&a.records, &a.cluster_name),
		{.name = "no-calibration", .kind = CLI_OPT_FLAG, .dest = &a.no_calibration},
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_plan_usage, .opts = opts};

	dtplan_request_init(req);
	cli_cluster_init(&a.cluster);
	if (getenv("DTPLAN_CALIBRATION") != NULL) {
		rc = set_calibration(req, getenv("DTPLAN_CALIBRATION"));
		if (rc != CLI_EXIT_OK)
			goto out;
	}
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (a.have_recompute)
		req->recompute = (int)a.recompute;
	if (a.have_gpu)
		req->gpu_from = DTPLAN_GPU_FROM_USER; /* an inventory's GPU does not replace it */
	if (a.measurements != NULL) {
		rc = cli_cluster_measurements(CMD, &a.cluster, a.measurements);
		if (rc != 0)
			goto out;
	}
	placed = a.nodes != NULL || a.cluster.n_specs > 0 || a.measurements != NULL;
	if (req->gpus == 0 && !placed) {
		rc = cli_usage_error(CMD, "--gpus is required (or --nodes)");
		goto out;
	}
	if (a.topology != NULL && !placed) {
		rc = cli_usage_error(CMD, "--topology needs --nodes or --node-xml/--node-json");
		goto out;
	}
	if (a.fabric_url != NULL && !placed) {
		rc = cli_usage_error(CMD, "--fabric-url needs --nodes or --node-xml/--node-json");
		goto out;
	}
	if (a.report_url != NULL && strncasecmp(a.report_url, "http://", 7) != 0 &&
	    strncasecmp(a.report_url, "https://", 8) != 0) {
		rc = cli_usage_error(CMD, "--report-url: '%s' is not an http:// or https:// URL",
				     a.report_url);
		goto out;
	}
	if (dtplan_model_parse(a.model, &req->model, &err) != DTPLAN_OK) {
		if (err.source[0] == '\0')
			snprintf(err.source, sizeof(err.source), "--model");
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	if (placed && (a.fabric_url != NULL || a.cluster.config.fabric_url[0] != '\0')) {
		rc = cli_cluster_fabric(CMD, &a.cluster,
					a.fabric_url ? a.fabric_url : a.cluster.config.fabric_url);
		if (rc != 0)
			goto out;
	}
	if (placed) {
		rc = cli_cluster_load(CMD, &a.cluster, a.nodes);
		if (rc != 0)
			goto out;
	}
	in.strict = true;
	in.site = &a.cluster.config;
	in.fabric = a.cluster.fabric;
	in.request = request;
	in.topology = a.topology;
	in.nodes = placed ? &a.cluster.io : NULL;
	/* like a job holding G of each node's GPUs */
	in.gpus_per_node = placed && a.have_gpus_per_node ? req->gpus_per_node : 0;
	in.measured = &a.cluster.measured;
	in.calibrate = calibrate;
	in.warn = warn;
	in.arg = &a;
	if (dtplan_allocation_plan(&a.cluster.alloc, &in, req, &plan, &err) != DTPLAN_OK) {
		rc = plan_failed(&a, &err);
		goto out;
	}
	/* JSON for --json and for the report, the text block otherwise */
	rv = DTPLAN_OK;
	if (a.json || a.report_url != NULL)
		rv = dtplan_plan_to_json(plan, true, &json, &err);
	if (rv == DTPLAN_OK && !a.json)
		rv = dtplan_plan_render_text(plan, &text, &err);
	if (rv != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	fputs(a.json ? json : text, stdout);
	if (a.json)
		fputc('\n', stdout);
	fflush(stdout);
	if (a.report_url != NULL)
		report(&a, json);
	rc = a.svg != NULL ? cli_write_svg(CMD, plan, a.svg) : CLI_EXIT_OK;
out:
	free(json);
	free(text);
	dtplan_plan_destroy(plan);
	cli_cluster_fini(&a.cluster);
	return rc;
}
