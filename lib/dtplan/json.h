/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/json.h: dtplan's own documents: plans, nodes, fabric descriptions and reports.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_JSON_H
#define DTPLAN_JSON_H

#include "dtplan/launch.h"
#include "dtplan/site.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Fabric descriptions from a service (lib/json/fabric_json.c)
 *
 * What a fabric service (FabricURL=) answers, in one of two formats that
 * its Content-Type or the site (FabricFormat=) names, never guessed from
 * the text: dtplan's own JSON (schema DTPLAN_FABRIC_SCHEMA, documented in
 * dtplan.conf(5)), which holds the switch tree and the site file's fabric
 * part, or Slurm's topology.conf text, which holds the tree only.  No I/O
 * here: probes/http.c fetches and caches the text.
 * ---------------------------------------------------------------------- */

#define DTPLAN_FABRIC_SCHEMA "dtplan.fabric/1"

enum dtplan_fabric_format {
	DTPLAN_FABRIC_JSON = 0,      /* dtplan.fabric/1 */
	DTPLAN_FABRIC_TOPOLOGY_CONF, /* Slurm topology.conf */
};

/* "dtplan.fabric/1" or "topology.conf" (static strings). */
const char *dtplan_fabric_format_name(enum dtplan_fabric_format f);

struct dtplan_fabric_desc {
	enum dtplan_fabric_format format;
	struct dtplan_topology *topology; /* owned; never NULL in a parsed fabric */
	/* The JSON form's site-file part as dtplan.conf text (switch settings,
	 * node sets, network and NVLink values, GPU type); NULL for topology.conf.
	 * Owned. */
	char *site_text;
	char source[256]; /* name used in messages (a URL, a file) */
};

/*
 * The format a Content-Type value names: application/json is
 * dtplan.fabric/1, text/plain topology.conf, parameters (";charset=...")
 * and case aside.  DTPLAN_ERR_UNSUPPORTED naming source for none or any
 * other type (*format unchanged).
 */
enum dtplan_err dtplan_fabric_format_of_type(const char *content_type, const char *source,
					     enum dtplan_fabric_format *format,
					     struct dtplan_error *err);

/*
 * Parses a fabric description of the given format.  Errors name
 * source and, for JSON, the line or the element ("switches[3] (leaf4): ...").
 * Caller frees *out with dtplan_fabric_desc_destroy(); *out is NULL on error.
 */
enum dtplan_err dtplan_fabric_desc_parse(const char *text, size_t len,
					 enum dtplan_fabric_format format, const char *source,
					 struct dtplan_fabric_desc **out, struct dtplan_error *err);
/*
 * The same, read for some nodes (a hostlist, a job's allocation; NULL: all):
 * every check of a dtplan.fabric/1 answer runs on all of it, and the tree
 * holds the switches over those nodes and no other (topology.conf's reader
 * checks those; a tree of 200,000 switches costs some 100 MB).  An answer
 * that names two switches alike, or no switch over those nodes, and the
 * topology.conf format are read whole.
 */
enum dtplan_err dtplan_fabric_desc_parse_for(const char *text, size_t len,
					     enum dtplan_fabric_format format, const char *source,
					     const char *nodes, struct dtplan_fabric_desc **out,
					     struct dtplan_error *err);
void dtplan_fabric_desc_destroy(struct dtplan_fabric_desc *f);

/*
 * Writes the fabric of a switch tree and a site configuration as
 * dtplan.fabric/1 JSON (what "dtplan fabric export" serves): every switch
 * with its nodes or child switches, link speed, oversubscription and uplink
 * bandwidth; the node sets; the network and NVLink values and the GPU type.
 * Parsing the result and applying it gives the same tree and settings.
 * DTPLAN_ERR_NOT_FOUND when c sets a switch t lacks.  Caller frees *out.
 */
enum dtplan_err dtplan_fabric_to_json(const struct dtplan_topology *t,
				      const struct dtplan_config *c, bool pretty, char **out,
				      struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Plan reports for a collector (lib/json/report_json.c)
 * ---------------------------------------------------------------------- */

#define DTPLAN_REPORT_SCHEMA "dtplan.report/1"

/* What a report says besides the plan; every pointer borrowed, NULL: unknown. */
struct dtplan_report {
	const char *plan_json; /* dtplan_plan_to_json() text; NULL: no plan was made */
	uint32_t job_id;       /* 0: not a job (a preview) */
	const char *cluster;   /* Slurm cluster name */
	const char *user;      /* the job's user name */
	long uid;              /* -1: unknown */
	const char *nodes;     /* the allocation as a hostlist; NULL: the plan's nodes */
	const char *host;      /* where the plan was made */
	const char *state;     /* "ok", "degraded", "refused"; NULL: from the plan */
	const char *reason;    /* why degraded or refused */
	const char *sender;    /* "plugin", "dtplan report" */
	double time;           /* seconds since the epoch; 0: not given */
};

/*
 * The JSON a collector receives (schema DTPLAN_REPORT_SCHEMA, documented in
 * dtplan.conf(5)): the fields above, the plan's warnings at the top level,
 * and the plan itself (null without one).  DTPLAN_ERR_PARSE when plan_json
 * is not a dtplan.plan/1 document.  Caller frees *out with free().
 */
enum dtplan_err dtplan_report_to_json(const struct dtplan_report *r, char **out,
				      struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * A finished job's observation (lib/json/observation_json.c)
 * ---------------------------------------------------------------------- */

#define DTPLAN_OBSERVATION_SCHEMA "dtplan.observation/1"

/*
 * The JSON a collector receives for a job's record (schema
 * DTPLAN_OBSERVATION_SCHEMA): job_id, user, cluster, fingerprint, gpu,
 * model, framework, predicted_step_s, measured_step_s,
 * measured_step_spread_s, steps, checkpoint_s (null without one) and time
 * (ISO 8601 UTC).  Caller frees *out with free().
 */
enum dtplan_err dtplan_observation_to_json(const struct dtplan_record *r, char **out,
					   struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Documents posted to a collector (lib/json/posted_json.c)
 * ---------------------------------------------------------------------- */

/* What a collector takes, by schema. */
enum dtplan_posted_kind {
	DTPLAN_POSTED_REPORT,      /* DTPLAN_REPORT_SCHEMA: a plan report */
	DTPLAN_POSTED_OBSERVATION, /* DTPLAN_OBSERVATION_SCHEMA: a job's step times */
	DTPLAN_POSTED_MEASUREMENT, /* DTPLAN_MEASURE_SCHEMA: a prolog's measurements */
	DTPLAN_POSTED__LAST        /* not a kind: one past the last */
};

struct json_t;

/*
 * Reads len bytes of text (NUL not needed) as one document posted to a
 * collector: JSON (duplicate keys refused, nesting bounded) of one of the
 * kinds above, each member it must hold present and of its type (the one
 * list of them).  On DTPLAN_OK *doc is the document as a Jansson tree (a
 * json_t; caller json_decref()s it) and *kind its kind.  Otherwise *doc is
 * NULL, err names the member (source "report") and the code says why:
 * DTPLAN_ERR_UNSUPPORTED no "schema" string or a schema not taken,
 * DTPLAN_ERR_PARSE not JSON ("not JSON: line N: ..."), not an object, a
 * member missing or of the wrong type; DTPLAN_ERR_RANGE a figure outside its
 * physical range (a step time outside [1e-4, 1e6] s, an oversubscription
 * outside [0.01, 1e4], a negative bandwidth, NaN or a denormal).
 */
enum dtplan_err dtplan_posted_parse(const char *text, size_t len, struct json_t **doc,
				    enum dtplan_posted_kind *kind, struct dtplan_error *err);

/*
 * The cache `dtplan mtbf --write-cache` writes (schema "dtplan.mtbf/1"):
 * the window, nodes, GPU-hours, failures, the MTBF and its interval, and
 * when it was computed (now).  Caller frees *out with free().
 */
enum dtplan_err dtplan_mtbf_to_json(const struct dtplan_mtbf *m, int64_t start, int64_t end,
				    size_t nodes, int64_t now, char **out,
				    struct dtplan_error *err);

/*
 * With the site's MTBF=slurm: the per-GPU MTBF from its MtbfCache= file
 * (regular, never through a link, 64 KiB at most) into r, and where it came
 * from into r->mtbf_source ("Slurm accounting: 2 failures in 1536
 * GPU-hours, 2026-11-01 to 2026-12-01, cached 2026-12-01T10:00:00Z");
 * without a failure in the window, the interval's lower bound.  Without
 * MTBF=slurm, DTPLAN_OK and r unchanged.  When the cache cannot be used r
 * keeps MtbfGpuHours='s value, its source says why, and the error is
 * returned (the caller warns; nothing fails).
 */
enum dtplan_err dtplan_mtbf_cache_apply(const struct dtplan_config *c, struct dtplan_request *r,
					struct dtplan_error *err);

/* What a finished job left behind; paths NULL when absent, all borrowed. */
struct dtplan_job_files {
	const char *plan;    /* its plan (dtplan-JOBID.json) */
	const char *observe; /* its DTPLAN_OBSERVE file */
	const char *output;  /* its output (slurm-JOBID.out) */
};

/*
 * The record of a finished job: the plan half from its plan, the measured
 * half from its observation file, else (when that gives no step) the step
 * lines of its output, read within their bounds (dtplan_observe_read()).
 * The caller fills job_id, time, cluster and user afterwards (the
 * fingerprint names the cluster: pass it here).  notes receives what was
 * refused or cut, for the log ("" when nothing).  DTPLAN_ERR_NOT_FOUND when
 * no step time is left, else the reading's error.
 */
enum dtplan_err dtplan_job_observe(const struct dtplan_job_files *f, const char *cluster,
				   struct dtplan_record *r, char *source, size_t source_size,
				   char *notes, size_t notes_size, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Output (lib/json/plan_json.c, lib/launch/render.c)
 * ---------------------------------------------------------------------- */

#define DTPLAN_PLAN_SCHEMA "dtplan.plan/1"

/* Plan -> JSON text (indented when pretty), with a "launch" object for the
 * frameworks (dtplan_plan_to_json_launch()).  Caller frees *out with free(). */
enum dtplan_err dtplan_plan_to_json(const struct dtplan_plan *p, bool pretty, char **out,
				    struct dtplan_error *err);

/* Node inventory <-> JSON.  Caller frees *out with free(). */
enum dtplan_err dtplan_node_to_json(const struct dtplan_node *n, bool pretty, char **out,
				    struct dtplan_error *err);
enum dtplan_err dtplan_node_from_json(const char *text, struct dtplan_node *n,
				      struct dtplan_error *err);

/*
 * Plan -> JSON as dtplan_plan_to_json(), whose "launch" object then names
 * l's rendezvous and files (NULL: as dtplan_plan_to_json(): the plan's
 * first node, no port, no files).  Caller frees *out with free().
 */
enum dtplan_err dtplan_plan_to_json_launch(const struct dtplan_plan *p,
					   const struct dtplan_launch_in *l, bool pretty,
					   char **out, struct dtplan_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_JSON_H */
