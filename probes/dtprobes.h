/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtprobes.h: libdtprobes, what measures the hardware for libdtplan.
 *
 * probes/ is the only part of dtplan that uses hwloc or libcurl, reads /sys
 * or opens sockets.  Its results are plain libdtplan structs (struct dtplan_node)
 * that the planner reads.  Errors follow libdtplan: an enum dtplan_err
 * return with detail in a caller-provided struct dtplan_error (NULL allowed).
 * Nothing here prints; messages go to libdtplan's log sink.
 */
#ifndef DTPROBES_H
#define DTPROBES_H

#include "dtplan.h"

#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds a live discovery may take when the caller passes timeout_s <= 0. */
#define DTPLAN_DISCOVER_DEFAULT_TIMEOUT 60.0

/* ------------------------------------------------------------------------
 * A bounded command (probes/child.c)
 * ---------------------------------------------------------------------- */

/*
 * Runs argv (argv[0] looked up in PATH, no shell; its standard input
 * /dev/null) in a child bounded by timeout_s seconds, its standard output,
 * at most max bytes, into *out: NUL-terminated, caller frees, NULL when it
 * wrote nothing; its length in *len (NULL allowed).  Its standard error is
 * the caller's.  The child that runs out of time or writes more than max
 * bytes is killed.  Returns DTPLAN_OK, DTPLAN_ERR_TIMEOUT, DTPLAN_ERR_IO
 * (cannot fork or run it, a non-zero exit status, a signal, more than max
 * bytes), DTPLAN_ERR_INVAL (no argv or out); err names argv[0].
 */
enum dtplan_err dtplan_run_capture(char *const argv[], double timeout_s, size_t max, char **out,
				   size_t *len, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Node discovery (probes/node.c)
 * ---------------------------------------------------------------------- */

/*
 * Where dtplan_node_discover() looks.  Every pointer is borrowed for the
 * duration of the call and may be NULL.
 */
struct dtplan_discover_opts {
	const char *xml_path;  /* load this hwloc XML file (source "xml") */
	const char *cache_dir; /* else use cache_dir/<hostname>.xml when present (source "cache") */
	const char *hostname;  /* name for the cache file and the inventory; NULL: gethostname() */
	double timeout_s;      /* bound on a live discovery (s); <= 0: the default above */
	const char *fsroot;    /* live discovery reads this root instead of / (HWLOC_FSROOT) */
};

/*
 * Discovers a node into *out (caller-owned; fully overwritten).
 *
 * Order: o->xml_path when set; else cache_dir/<hostname>.xml when the
 * effective user can read it (dtplan_node_from_cache()); else a live hwloc
 * discovery (source "live").  hwloc runs in a forked child bounded by
 * timeout_s, and by an address-space cap of 4 GiB beyond what it inherits,
 * that hands back the inventory as node JSON: on expiry the child is killed and DTPLAN_ERR_TIMEOUT returned; a
 * child that crashes gives DTPLAN_ERR_IO.  The live path honours hwloc's
 * environment (HWLOC_FSROOT, ...; HWLOC_XMLFILE is read like any XML file,
 * regular files within 32 MiB only).  On live and cache discoveries, NVML is
 * consulted when libnvidia-ml.so.1 can be loaded (fabric ids of multi-node
 * NVLink domains); its absence is not an error.  o may be NULL (live
 * discovery with defaults).
 *
 * Returns DTPLAN_OK, DTPLAN_ERR_IO (file unreadable or not a regular file,
 * child failed or crashed), DTPLAN_ERR_PARSE (not an hwloc XML file; err
 * names the file), DTPLAN_ERR_TIMEOUT or DTPLAN_ERR_NOMEM.
 */
enum dtplan_err dtplan_node_discover(const struct dtplan_discover_opts *o, struct dtplan_node *out,
				     struct dtplan_error *err);

/*
 * Reads an hwloc XML file (v1 or v2) into *out (caller-owned; source "xml"),
 * parsed in a child bounded by DTPLAN_DISCOVER_DEFAULT_TIMEOUT.  Same errors
 * as dtplan_node_discover().
 */
enum dtplan_err dtplan_node_from_xml(const char *path, struct dtplan_node *out,
				     struct dtplan_error *err);

/*
 * Reads cache_dir/<hostname>.xml (source "cache"; never through a symbolic
 * link), parsed in a child bounded by timeout_s (<= 0: the default).
 * DTPLAN_ERR_NOT_FOUND when the file is absent or the effective user may
 * not read it, so that the caller can look elsewhere; otherwise the errors
 * of dtplan_node_discover().  DTPLAN_ERR_INVAL for a host name that cannot
 * name a file ("", ".", "..", or with '/').
 */
enum dtplan_err dtplan_node_from_cache(const char *cache_dir, const char *hostname,
				       double timeout_s, struct dtplan_node *out,
				       struct dtplan_error *err);

/*
 * Exports this node's live topology (with all I/O objects) as XML to
 * cache_dir/<hostname>.xml, atomically.  Meant for the prolog (root).
 * cache_dir's last level is made (0755) when missing; the directory must
 * then be owned by the effective user and writable by neither group nor
 * others, else DTPLAN_ERR_IO says why and nothing is written.  The file is
 * created, written (by the discovery child, through the descriptor) and
 * renamed relative to the directory checked, never through its path again.
 * hostname NULL: gethostname().  Bounded by timeout_s like a live discovery.
 * Returns DTPLAN_OK, DTPLAN_ERR_INVAL (NULL cache_dir, hostname with '/'),
 * DTPLAN_ERR_IO, DTPLAN_ERR_TIMEOUT.
 */
enum dtplan_err dtplan_node_cache_write(const char *cache_dir, const char *hostname,
					double timeout_s, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * The inventory of an allocation (probes/inventory.c)
 * ---------------------------------------------------------------------- */

/* Where a host's inventory came from. */
enum dtplan_inventory_origin {
	DTPLAN_INV_NONE = 0, /* none: a generic node of the request */
	DTPLAN_INV_FILE,     /* a file named for it (--node-xml, --node-json) */
	DTPLAN_INV_MEASURED, /* the prolog's measurement */
	DTPLAN_INV_NODE_XML, /* the site's node_xml= pattern */
	DTPLAN_INV_CACHE,    /* the cache folder (cache_dir=) */
	DTPLAN_INV_LIVE,     /* discovered here */
	DTPLAN_INV_ASSUMED,  /* another host's */
};

/* "file", "measured", ... (static; "?" when unknown). */
const char *dtplan_inventory_origin_name(enum dtplan_inventory_origin o);

/* One --node-xml or --node-json HOSTLIST=FILE.  Borrowed strings. */
struct dtplan_inventory_file {
	const char *hostlist;
	const char *path;
	bool json;        /* "dtplan node --json" output, else hwloc XML */
	const char *flag; /* names the file in messages ("--node-xml") */
};

/* What the assembler may read.  Everything is borrowed; pointers may be NULL. */
struct dtplan_inventory_opts {
	size_t n_hosts;
	const char (*hosts)[64]; /* the allocation, in its order */
	size_t n_files;
	const struct dtplan_inventory_file *files;
	const struct dtplan_measure_file *measured; /* the prolog's measurement */
	const char *node_xml;                       /* pattern, %n the host's name */
	const char *cache_dir;
	const char *self;        /* this host: may be discovered live */
	double timeout_s;        /* of a live discovery */
	const char *assume_like; /* hosts without one take this host's record;
						* NULL: the first record found */
	const char *assumed_why; /* ends "have no inventory..." ("" none) */
};

struct dtplan_inventory {
	size_t n_hosts;
	char (*hosts)[64];           /* owned */
	size_t n_records;            /* set.n */
	struct dtplan_node *records; /* set.nodes: one per distinct hardware, hostname "" */
	struct dtplan_node_set set;  /* owned: the records and their hash index */
	int *host_record;            /* owned: record of each host, -1 none (generic) */
	uint8_t *origin;             /* owned: enum dtplan_inventory_origin of each host */
	size_t n_assumed;
	size_t n_measured;      /* hosts whose record the measurement gave */
	char assumed_like[64];  /* the host the assumed ones copy */
	char assumed_from[256]; /* where its record came from (a file, "measured", ...) */
	char assumed_why[192];
};

/*
 * Assembles the inventory of o->hosts (see probes/inventory.c for the
 * order).  Caller frees *out with dtplan_inventory_destroy().  Errors: a
 * named file that cannot be read or names a host not in the allocation
 * (err names the flag), this host's live discovery failing when nothing
 * else describes it ("cannot discover node NAME: ..."), DTPLAN_ERR_NOMEM.
 * Other hosts' missing files are not errors: those hosts are assumed.
 */
enum dtplan_err dtplan_inventory_assemble(const struct dtplan_inventory_opts *o,
					  struct dtplan_inventory **out, struct dtplan_error *err);
void dtplan_inventory_destroy(struct dtplan_inventory *inv);

/* The node_xml= pattern's path for host (%n its name, %% a '%').  Refuses a
 * host name with '/' or "..", and a path longer than size. */
enum dtplan_err dtplan_inventory_node_xml(const char *pattern, const char *host, char *buf,
					  size_t size, struct dtplan_error *err);

/* Points cl's nodes and hosts at inv (borrowed: inv outlives cl's use). */
void dtplan_inventory_cluster(const struct dtplan_inventory *inv, struct dtplan_cluster *cl);

/* The one warning about assumed hosts ("assumed-nodes", naming them and
 * whose record they took), and the count of measured inventories into the
 * plan's measurements. */
enum dtplan_err dtplan_inventory_note(const struct dtplan_inventory *inv, struct dtplan_plan *p);

/* ------------------------------------------------------------------------
 * Credentials (probes/auth.c)
 * ---------------------------------------------------------------------- */

/*
 * How the probe makes and checks credentials: MUNGE in production
 * (dtplan_auth_munge_create()); tests may provide their own.  encode makes a
 * credential (text, caller frees) carrying payload; decode checks one and
 * returns its payload (caller frees) and the uid that made it, or
 * DTPLAN_ERR_POLICY for a credential that is not valid.
 */
struct dtplan_auth {
	enum dtplan_err (*encode)(struct dtplan_auth *a, const void *payload, size_t len,
				  char **cred, struct dtplan_error *err);
	enum dtplan_err (*decode)(struct dtplan_auth *a, const char *cred, size_t cred_len,
				  void **payload, size_t *len, uid_t *uid,
				  struct dtplan_error *err);
	void (*destroy)(struct dtplan_auth *a);
	void *data;
};

/* What the MUNGE credentials are for.  Borrowed for the call. */
struct dtplan_auth_munge_opts {
	const char *socket; /* munged's socket; NULL or "": libmunge's default */
	uid_t decoder_uid;  /* the one uid that may decode the credentials made
			     * (MUNGE_OPT_UID_RESTRICTION), and the one that those taken
			     * must name: 0 in the prolog, the job's user in dtplan probe */
	int ttl_s;          /* the credentials' time to live (MUNGE_OPT_TTL); <= 0:
			     * munged's default (300 s); dtplan_auth_ttl() for a run */
};

/*
 * MUNGE through munged's socket.  encode makes credentials that only
 * o->decoder_uid may decode, living o->ttl_s; decode refuses one that does
 * not name o->decoder_uid as its only decoder (DTPLAN_ERR_POLICY: any uid
 * could decode it, or another uid was meant).  Caller frees *out with
 * dtplan_auth_destroy().  DTPLAN_ERR_INVAL for a NULL o or a decoder of
 * MUNGE_UID_ANY.
 */
enum dtplan_err dtplan_auth_munge_create(const struct dtplan_auth_munge_opts *o,
					 struct dtplan_auth **out, struct dtplan_error *err);

/* The time to live of the credentials of a probe run of budget_s: three
 * budgets (every message of a run is made and decoded within one), at least
 * DTPLAN_AUTH_TTL_MIN_S (MUNGE counts whole seconds and allows 1 s of clock
 * skew) and at most DTPLAN_AUTH_TTL_MAX_S (munged's default TTL). */
#define DTPLAN_AUTH_TTL_MIN_S 10
#define DTPLAN_AUTH_TTL_MAX_S 300
int dtplan_auth_ttl(double budget_s);
void dtplan_auth_destroy(struct dtplan_auth *a);

/* ------------------------------------------------------------------------
 * Report credentials (probes/auth.c): what a collector (dtplan serve) takes
 * as proof of who posted a report.  The credential's payload is
 * DTPLAN_REPORT_CRED_PREFIX and the body's SHA-256 in lowercase hex, so it
 * is good for that body only; it names no decoder (the collector's uid is
 * the site's choice) and lives DTPLAN_REPORT_CRED_TTL_S, within which the
 * collector remembers it and refuses it a second time.
 * ---------------------------------------------------------------------- */
#define DTPLAN_REPORT_CRED_HEADER "X-Dtplan-Munge"
#define DTPLAN_REPORT_CRED_PREFIX "dtplan.report-body/1 sha256="
#define DTPLAN_REPORT_CRED_TTL_S 120

/* A credential for body (len bytes) from munged at socket (NULL or "":
 * libmunge's default), within timeout_s (> 0: made in a child process,
 * stopped then, DTPLAN_ERR_TIMEOUT; else as long as libmunge takes, which
 * is about 10 s for a munged that takes the connection and never
 * answers).  *cred: caller frees with free(); NULL on error (DTPLAN_ERR_IO
 * naming munged's fault). */
enum dtplan_err dtplan_report_cred_make(const char *socket, const void *body, size_t len,
					double timeout_s, char **cred, struct dtplan_error *err);

/* What a checked report credential says. */
struct dtplan_report_cred {
	uid_t uid;         /* who made it */
	long long expires; /* when it stops being valid (encode time + TTL, epoch s) */
	char id[65];       /* its name: the SHA-256 of what it decodes to (uid, gid,
			    * encode time, time to live, payload), hex */
};

/*
 * Checks cred against body: munged at socket must decode it (made with the
 * same key, neither expired nor already decoded there), and its payload must
 * be DTPLAN_REPORT_CRED_PREFIX and body's SHA-256.  On success fills *out.
 * Else *reason (static text) is "forged" (not a credential of this key, or
 * one for another body), "expired", "replayed" (munged has decoded it
 * before) or "munge" (munged cannot be asked: DTPLAN_ERR_IO), and the error
 * says what munged said (DTPLAN_ERR_POLICY).
 */
enum dtplan_err dtplan_report_cred_check(const char *socket, const char *cred, const void *body,
					 size_t len, struct dtplan_report_cred *out,
					 const char **reason, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Measuring the allocation (probes/rendezvous.c, probes/links.c,
 * probes/net.c; doc/internals/probe.md)
 * ---------------------------------------------------------------------- */

/* Seconds on CLOCK_MONOTONIC: what every deadline of the probe counts in. */
double dtplan_probe_clock(void);

/* This node's inventory for the probe: fills *out or fails with err (the
 * leader then records why).  Called once, on a thread of its own. */
typedef enum dtplan_err (*dtplan_discover_fn)(void *arg, struct dtplan_node *out,
					      struct dtplan_error *err);

struct dtplan_probe_opts {
	const char *source; /* "prolog" or "probe" (the measurement's source) */
	uint32_t job_id;
	uint32_t session; /* 0 the prolog, step id + 1 a CLI probe */
	size_t n_hosts;
	const char (*hosts)[64];           /* the allocation; hosts[0] leads */
	uint32_t self;                     /* this node's index in hosts */
	uid_t uid;                         /* messages are taken from this uid only */
	struct dtplan_auth *auth;          /* borrowed */
	uint16_t port_lo, port_hi;         /* the listener's port range (probe_ports=) */
	const char *interface;             /* link probes over this interface; NULL or "": the
					  * addresses the host names resolve to */
	struct dtplan_probe_params params; /* budget, fan-out, pings, bulk, slot */
	double start_s;                    /* dtplan_probe_clock() when the work began: the
					  * budget counts from it */
	dtplan_discover_fn discover;       /* this node's inventory */
	void *discover_arg;
	const struct dtplan_topology *topology; /* the leader's switch tree (leaves); NULL flat */
	const struct sockaddr_storage *addrs;   /* tests: node i listens at addrs[i] exactly,
						 * with no name lookup and no port range */
	const char (*node_addrs)[64];           /* NULL, or per host Slurm's NodeAddr ("" none):
						 * where a host's name does not resolve, its
						 * parent is reached there */
};

/*
 * Runs this node's part of the measurement: listens, joins its parent in
 * the fan-in tree, sends its subtree's inventories up, takes part in the
 * link rounds the leader schedules, and sends the results up.  Everything
 * ends by start_s + params.budget_s.  On the leader (self 0) *out receives
 * the measurement file (records, host map, measurements with notes on what
 * is missing); elsewhere it is left empty.  Messages that fail their checks
 * are logged (warning) and their connection closed.
 *
 * Returns DTPLAN_OK, also for partial results; DTPLAN_ERR_INVAL for bad
 * options, DTPLAN_ERR_IO (err says why) when this node could not make a
 * credential ("no MUNGE credentials: ...") or, on the leader, listen on any
 * of its port candidates ("cannot listen on any of ports ... (the job's of
 * probe_ports=LO-HI): ...").  On the leader, such a failure is the whole
 * measurement's: the caller records it (dtplan_measurements.failed).
 * Another node that cannot listen still joins and reports its inventory
 * with the reason, outside the link rounds; the leader notes it ("NODE
 * took no part in the link probes: ...").
 */
enum dtplan_err dtplan_probe_run(const struct dtplan_probe_opts *o, struct dtplan_measure_file *out,
				 struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * HTTP: the fabric service and the plans' collector (probes/http.c, the
 * only libcurl user)
 *
 * Every transfer is bounded (connection and whole transfer), caps what it
 * reads, speaks http and https only, verifies TLS peers and host names,
 * never raises signals (CURLOPT_NOSIGNAL) and follows at most
 * DTPLAN_HTTP_MAX_REDIRECTS redirects (GET only).  libcurl's global
 * initialisation runs once per process (pthread_once), so the calls are safe
 * from any thread of a multi-threaded slurmstepd; it is never cleaned up.
 * Proxies come from the environment as libcurl reads them (http_proxy, ...).
 * ---------------------------------------------------------------------- */

#define DTPLAN_HTTP_MAX_REDIRECTS 3

struct dtplan_http_opts {
	double timeout_s;         /* the whole transfer, connecting included (> 0) */
	double connect_timeout_s; /* connecting (> 0; at most timeout_s counts) */
	size_t max_bytes;         /* largest answer body read (> 0) */
	const char *ca_path;      /* CA bundle file or hashed folder; NULL or "": libcurl's */
	const char *bearer_token; /* "Authorization: Bearer" value; NULL or "": none */
	bool sign;                /* a post: with a report credential for its body */
	const char *munge_socket; /* munged's, for it; NULL or "": libmunge's default */
	bool follow_redirects;    /* GET: follow up to DTPLAN_HTTP_MAX_REDIRECTS */
};

/* Options from a site configuration: HttpConnectTimeout=, HttpMaxSize=,
 * HttpCAPath=, MungeSocket= (posts are signed) and the given whole-transfer
 * bound; no token, redirects followed. */
void dtplan_http_opts_from_config(struct dtplan_http_opts *o, const struct dtplan_config *c,
				  double timeout_s);

/*
 * GETs url into *body (NUL-terminated, caller frees with free()) and *len
 * (NULL allowed), and the answer's Content-Type into type (type_size bytes,
 * cut; "" when it sent none; NULL: not wanted).  Only a 2xx answer is a success.  Errors name the URL as
 * err->source and the fault in err->text: DTPLAN_ERR_TIMEOUT (no connection
 * or no complete answer in time), DTPLAN_ERR_RANGE (an answer larger than
 * max_bytes), DTPLAN_ERR_IO (connection refused, name not resolved, TLS,
 * "HTTP 500", too many redirects, ...), DTPLAN_ERR_INVAL (a URL that is not
 * http:// or https://).  *body is NULL on error.
 */
enum dtplan_err dtplan_http_get(const char *url, const struct dtplan_http_opts *o, char **body,
				size_t *len, char *type, size_t type_size,
				struct dtplan_error *err);

/*
 * POSTs json (Content-Type: application/json, with the bearer token when
 * set) to url.  With o->sign, a report credential for json
 * (dtplan_report_cred_make()) goes in DTPLAN_REPORT_CRED_HEADER; making it
 * counts against o->timeout_s, and without munged the post goes without one
 * (a failure then says so).  Only a 2xx answer is a success; redirects are
 * not followed (a token is never sent anywhere else).  Errors as dtplan_http_get().
 */
enum dtplan_err dtplan_http_post_json(const char *url, const struct dtplan_http_opts *o,
				      const char *json, struct dtplan_error *err);

/*
 * Reads a bearer token from a file that only root may change or read:
 * owned by uid 0 (or by the calling user, for tests and the CLI run by its
 * owner) and without any group or other permission bits; a regular file of
 * at most 4 KiB whose first line is the token (surrounding blanks dropped).
 * Meant to run while slurmstepd is still root.  *token receives the text
 * (caller frees with free()); DTPLAN_ERR_IO when unreadable,
 * DTPLAN_ERR_POLICY when the ownership or mode is wrong, DTPLAN_ERR_PARSE
 * when empty; err names the file.
 */
enum dtplan_err dtplan_http_read_token(const char *path, char **token, struct dtplan_error *err);

/* Where a fabric came from. */
enum dtplan_fabric_origin {
	DTPLAN_FABRIC_ORIGIN_NONE = 0, /* no usable answer: the caller uses its local files */
	DTPLAN_FABRIC_ORIGIN_SERVICE,  /* the service's answer, just fetched */
	DTPLAN_FABRIC_ORIGIN_CACHE,    /* the answer cached in FabricCache= */
};

struct dtplan_fabric_fetch {
	enum dtplan_fabric_origin origin;
	struct dtplan_fabric_desc *desc; /* owned; NULL with origin NONE */
	double age_s;                    /* of the cached answer used (origin CACHE) */
	/* Why the service's answer is not used, and what is used instead; ""
	 * when the fabric is the service's own or a fresh cached copy of it.
	 * Meant for the plan's "fabric-service" warning. */
	char warning[DTPLAN_WARN_TEXT_MAX];
};

/*
 * The fabric of c->fabric_url through the cache file c->fabric_cache ("":
 * no cache):
 *   1. a cached answer of the same URL younger than c->fabric_cache_ttl_s is
 *      used without asking the service;
 *   2. else the service is asked, bounded by c->fabric_timeout_s; an answer
 *      that parses (dtplan_fabric_desc_parse()) is used and written to the
 *      cache (atomically: a temporary file renamed over it, mode 0644);
 *   3. else the cached answer of any age is used, and the warning names the
 *      fault and the age;
 *   4. else origin NONE, and the warning names the fault ("...; no cached
 *      answer: PATH: cannot open: ..."): the caller falls back on its topology.conf and
 *      site file and should add what it used to the warning.
 * With offline, step 2 is skipped (srun steps that recompute a plan): a
 * cached answer older than the time to live, or none, is said in warning.
 * A cache that cannot be written is logged (warning level), not returned.
 * Returns DTPLAN_OK in every case above; DTPLAN_ERR_INVAL when c has no
 * FabricURL=, DTPLAN_ERR_NOMEM.  Caller frees out with
 * dtplan_fabric_fetch_fini().
 */
enum dtplan_err dtplan_fabric_fetch(const struct dtplan_config *c, bool offline,
				    struct dtplan_fabric_fetch *out, struct dtplan_error *err);
/* The same, each answer read for those nodes (dtplan_fabric_desc_parse_for():
 * a job's allocation, a hostlist; NULL: all). */
enum dtplan_err dtplan_fabric_fetch_for(const struct dtplan_config *c, bool offline,
					const char *nodes, struct dtplan_fabric_fetch *out,
					struct dtplan_error *err);
void dtplan_fabric_fetch_fini(struct dtplan_fabric_fetch *f);

/* ------------------------------------------------------------------------
 * The fabric service's policy (probes/fabric_source.c)
 * ---------------------------------------------------------------------- */

/*
 * Where a plan's switch tree comes from, in dtplan's one order (the plugin's
 * and the CLI's): the fabric service's answer once applied (service, NULL
 * when there is none or applying it failed), else the site's topology.conf
 * (conf read from conf_path; NULL when there is none or it failed), else no
 * tree.  Every pointer is borrowed.
 */
struct dtplan_fabric_source {
	struct dtplan_topology *tree; /* what to plan on; NULL: no switch tree */
	bool from_service;
	const char *topology_path; /* conf_path when tree is topology.conf's, else NULL */
};

void dtplan_fabric_source_choose(struct dtplan_fabric_desc *service, struct dtplan_topology *conf,
				 const char *conf_path, struct dtplan_fabric_source *out);

/*
 * Adds p's "fabric-service" warning: warning (why the service's answer is
 * not what the plan uses as it stands, "" none: nothing is added) and what
 * src says was used instead: the service's answer, topology.conf, or no
 * switch tree.  DTPLAN_ERR_NOMEM.
 */
enum dtplan_err dtplan_plan_note_fabric(struct dtplan_plan *p, const char *warning,
					const struct dtplan_fabric_source *src);

/*
 * The site configuration a plan uses with fabric f: *out receives a copy of
 * base (caller frees with dtplan_config_fini()); with the JSON form, the
 * fabric's switch settings and node sets replace base's, and the network,
 * NVLink and GPU type values it gives replace base's.  The switch settings
 * are then applied to f->topology (dtplan_config_apply_topology()).  On
 * error *out is left initialised and empty of arrays (dtplan_config_init()).
 */
enum dtplan_err dtplan_fabric_desc_apply(struct dtplan_fabric_desc *f,
					 const struct dtplan_config *base,
					 struct dtplan_config *out, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * The allocation a plan is made on (probes/allocation.c)
 * ---------------------------------------------------------------------- */

/*
 * The one assembler of an allocation and its plan, for the plugin (the
 * job's steps) and the CLI (dtplan plan): dtplan_allocation_plan() does
 * every step below, always in this order; each caller keeps only its own
 * I/O (Slurm's items, the prolog's file and the job log in the plugin;
 * argv, files and stderr in the CLI), which comes in through struct
 * dtplan_allocation_in:
 *
 *   CONFIG       the site's settings with the fabric service's answer (or
 *                its cached copy) over them (dtplan_fabric_desc_apply())
 *   REQUEST      in->request() on those effective settings
 *   TOPOLOGY     topology.conf, unless the service's tree is used
 *   NODES        the inventories (dtplan_inventory_assemble()), the tree
 *                (dtplan_fabric_source_choose()), the cluster
 *   GPUS         the GPUs the job holds per node; with in->self, this
 *                host's make the request's ("the job has no GPUs" else)
 *   MEASURE      the measurement's ratios and tiers into request and
 *                configuration (dtplan_measurements_apply())
 *   MTBF         MTBF=slurm's cache (dtplan_mtbf_cache_apply(); a fault is
 *                in->warn()'s, never an error)
 *   CALIBRATION  in->calibrate(), unless the request says calibration=off
 *   PLAN         dtplan_plan_create() on the cluster (none without in->nodes)
 *   NOTES        the measurement becomes the plan's, then its
 *                "assumed-nodes" and "fabric-service" warnings, then (not
 *                strict) topology.conf's fault as the degraded reason
 *
 * strict (the CLI): a fabric answer that does not apply, a topology.conf
 * that does not read and a note that cannot be added are errors.
 * Otherwise (the plugin, which must not stop a job): the fabric's fault
 * becomes the "fabric-service" warning, a bad topology.conf plans without a
 * switch tree and marks the plan degraded, and the notes' failures degrade
 * the plan.
 */

/* The steps of dtplan_allocation_plan(), in their one order. */
enum dtplan_allocation_step {
	DTPLAN_ALLOC_CONFIG = 0,
	DTPLAN_ALLOC_REQUEST,
	DTPLAN_ALLOC_TOPOLOGY,
	DTPLAN_ALLOC_NODES,
	DTPLAN_ALLOC_GPUS,
	DTPLAN_ALLOC_MEASURE,
	DTPLAN_ALLOC_MTBF,
	DTPLAN_ALLOC_CALIBRATION,
	DTPLAN_ALLOC_PLAN,
	DTPLAN_ALLOC_NOTES,
	DTPLAN_ALLOC_DONE, /* the plan is made */
};

/* What the caller read, and how it is told.  Everything is borrowed and
 * must outlive the call; pointers may be NULL unless said otherwise. */
struct dtplan_allocation_in {
	bool strict; /* the CLI; the plugin degrades instead */
	/* the site's settings (required); MTBF=slurm's cache is read with them */
	const struct dtplan_config *site;
	/* the fabric service's answer (dtplan_fabric_fetch()); NULL: none asked */
	const struct dtplan_fabric_fetch *fabric;
	/* Completes *req on the effective settings c (the site's, or the
	 * fabric's over them): required.  Its error stops the assembly. */
	enum dtplan_err (*request)(void *arg, const struct dtplan_config *c,
				   struct dtplan_request *req, struct dtplan_error *err);
	/* site_files (the plugin): topology.conf, node_xml=, cache_dir= and the
	 * live discovery's bound are the effective settings'.  Else (the CLI)
	 * topology names topology.conf (NULL or "": none) and nodes' own
	 * node_xml, cache_dir and timeout_s are used. */
	bool site_files;
	const char *topology;
	/* the allocation's hosts and inventory files (measured is filled from
	 * the measured below); NULL: a plan on no allocation (dtplan plan
	 * without --nodes) */
	const struct dtplan_inventory_opts *nodes;
	/* this host (the plugin): the request's GPUs per node are
	 * gpus_per_node, else this host's inventory's, and its GPU count the
	 * allocation's.  NULL (the CLI): the request's counts stay. */
	const char *self;
	int gpus_per_node; /* the GPUs the job holds on each node; 0: all */
	/* the measurement (m NULL: none); its m becomes the plan's at NOTES
	 * (NULL afterwards), else stays the caller's to free */
	struct dtplan_measure_file *measured;
	/* Fills *cal (zeroed, freed by dtplan_allocation_fini()) from the
	 * records and returns 0, or returns -1 (having said why, if it should
	 * be said); NULL: no records. */
	int (*calibrate)(void *arg, struct dtplan_calibration *cal);
	/* Says a fault that changes nothing (MTBF=slurm's cache: text is
	 * req->mtbf_source); NULL: not said. */
	void (*warn)(void *arg, const char *text);
	void *arg; /* the callbacks' own */
};

/* The assembly's state.  Caller-owned: dtplan_allocation_init() before
 * dtplan_allocation_plan(), dtplan_allocation_fini() after; the plan does
 * not borrow from it. */
struct dtplan_allocation {
	bool strict;
	enum dtplan_allocation_step step; /* reached; the failing one on error */
	/* the effective settings: the site's, or applied (site + fabric) */
	const struct dtplan_config *base;
	struct dtplan_config applied; /* owned */
	/* what the plan uses: base with its own switches, which the
	 * measurement may change (cluster.config points here) */
	struct dtplan_config config;
	struct dtplan_fabric_desc *service;        /* borrowed: the answer applied, NULL none */
	struct dtplan_topology *topology;          /* owned: topology.conf, NULL none or failed */
	const char *topology_path;                 /* borrowed: the topology.conf read */
	struct dtplan_fabric_source source;        /* the tree planned on */
	struct dtplan_inventory *inventory;        /* owned; NULL without hosts */
	struct dtplan_cluster cluster;             /* borrows everything above */
	struct dtplan_calibration calibration;     /* owned: in->calibrate()'s */
	char fabric_warning[DTPLAN_WARN_TEXT_MAX]; /* "" none */
	char topology_fault[1024];                 /* not strict: why topology.conf is not used */
};

void dtplan_allocation_init(struct dtplan_allocation *a);
/* Frees what a owns (NULL allowed); a->base is no longer valid. */
void dtplan_allocation_fini(struct dtplan_allocation *a);

/*
 * Makes the plan for in's allocation, every step above in its order, on a
 * (initialised, not yet used) and the caller's req (dtplan_request_init()ed
 * and filled as the caller's flags say; in->request() completes it, the
 * steps change it, and req->calibration may point into a afterwards).
 * Returns DTPLAN_OK and *plan (caller frees with dtplan_plan_destroy()),
 * or an error with *plan NULL, err filled and a->step naming the step that
 * failed: in->request()'s, the fabric's and topology.conf's (strict only),
 * dtplan_inventory_assemble()'s, "the job has no GPUs" (INVAL),
 * dtplan_measurements_apply()'s, dtplan_plan_create()'s, and a note that
 * cannot be added (strict only: NOMEM).
 */
enum dtplan_err dtplan_allocation_plan(struct dtplan_allocation *a,
				       const struct dtplan_allocation_in *in,
				       struct dtplan_request *req, struct dtplan_plan **plan,
				       struct dtplan_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DTPROBES_H */
