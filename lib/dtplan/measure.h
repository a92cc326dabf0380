/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/measure.h: libdtplan's side of measuring an allocation: the probe
 * schedule, the probe's wire format and the measurements a plan reads.
 *
 * All of it is pure code (no sockets, clocks or MUNGE: those are in
 * probes/): the schedule is a function of the node count and the leaf
 * switches, the wire format encodes and decodes buffers, and the
 * measurements are computed from link results and written as JSON.  The
 * design is in doc/internals/probe.md.  Errors and ownership follow
 * dtplan.h.
 */
#ifndef DTPLAN_MEASURE_H
#define DTPLAN_MEASURE_H

#include "dtplan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Probe schedule (lib/measure/probe_schedule.c)
 *
 * Which node probes which in each round.  Nodes are grouped by leaf switch;
 * in every round each node is in at most one pair, so that a pair's links
 * carry only its own flow except where a round means to share them.  The
 * rounds, at most DTPLAN_PROBE_MAX_ROUNDS whatever the node count:
 *   intra A, intra B  in each leaf, neighbours in node order (0-1, 2-3, ...),
 *                     then shifted by one (1-2, 3-0, ...): two partners per
 *                     node, so that a slow node is told from a slow partner;
 *   cross             one flow per pair of leaves (leaves 0-1, 2-3, ...; an
 *                     odd last leaf in a second cross round): single-flow
 *                     bandwidth and latency across the uplinks;
 *   concurrent        every node with the node half the job away in leaf
 *                     order, all at once, directions alternating: every
 *                     leaf's uplink loaded both ways at the same time.
 * ---------------------------------------------------------------------- */

#define DTPLAN_PROBE_MAX_ROUNDS 5

enum dtplan_round_kind {
	DTPLAN_ROUND_INTRA = 0,  /* single flows inside a leaf */
	DTPLAN_ROUND_CROSS,      /* one flow per leaf pair across the uplinks */
	DTPLAN_ROUND_CONCURRENT, /* every cross-leaf pair at once */
};

/* "intra", "cross", "concurrent" (static strings; "?" when unknown). */
const char *dtplan_round_kind_name(enum dtplan_round_kind k);

/* One pair of a round: `from` sends (and pings), `to` receives. */
struct dtplan_probe_pair {
	uint32_t from, to;
};

struct dtplan_probe_round {
	enum dtplan_round_kind kind;
	size_t n_pairs;
	struct dtplan_probe_pair *pairs; /* owned */
	int32_t *peer;                   /* owned, n_nodes: the partner, -1 none */
	uint8_t *sends;                  /* owned, n_nodes: 1 when the node is `from` */
};

struct dtplan_probe_schedule {
	size_t n_nodes;
	size_t n_groups; /* leaf groups among the present nodes */
	size_t n_rounds; /* rounds with at least one pair */
	struct dtplan_probe_round rounds[DTPLAN_PROBE_MAX_ROUNDS];
};

/*
 * Builds the schedule of n nodes (indexes 0 .. n-1).  leaf[i] is node i's
 * leaf switch (any id; -1 unknown: such nodes form a group of their own);
 * NULL: one group (no topology).  present[i] 0 leaves node i out of every
 * pair (NULL: all present).  Caller frees *out with
 * dtplan_probe_schedule_destroy().  DTPLAN_ERR_INVAL for n 0 or above
 * DTPLAN_HOSTLIST_MAX, DTPLAN_ERR_NOMEM.
 */
enum dtplan_err dtplan_probe_schedule_create(size_t n, const int32_t *leaf, const uint8_t *present,
					     struct dtplan_probe_schedule **out,
					     struct dtplan_error *err);
void dtplan_probe_schedule_destroy(struct dtplan_probe_schedule *s);

/* The fan-in tree of the inventories: node i's parent is (i - 1) / fanout
 * (node 0, the leader, is the root).  Depth: levels below the root. */
uint32_t dtplan_probe_tree_parent(uint32_t node, uint32_t fanout);
size_t dtplan_probe_tree_depth(size_t n, uint32_t fanout);
/* True when node is in the subtree rooted at root (root itself included). */
bool dtplan_probe_tree_contains(uint32_t root, uint32_t node, uint32_t fanout);

/* What a probe run does and may spend; dtplan_probe_params_init() sets the
 * defaults that doc/internals/probe.md costs. */
struct dtplan_probe_params {
	double budget_s;         /* the whole prolog work (probe_budget=) */
	uint32_t fanout;         /* children per node in the fan-in tree */
	uint32_t ping_count;     /* latency round trips per pair and round */
	uint32_t ping_bytes;     /* bytes of one ping (each way) */
	double ping_window_s;    /* the pings of a round stop after this */
	uint64_t bulk_bytes;     /* single-flow transfer: at most this many bytes ... */
	double bulk_s;           /* ... and at most this long */
	double slot_s;           /* one round: pings, bulk and the report */
	double discover_s;       /* expected node discovery (hwloc XML) */
	double hop_s;            /* expected latency of one control message hop */
	double record_bytes;     /* one node inventory record on the wire */
	size_t distinct_records; /* records with different hardware in the job */
};

void dtplan_probe_params_init(struct dtplan_probe_params *p);

/* What a schedule costs, for doc/internals/probe.md and bench/. */
struct dtplan_probe_cost {
	size_t nodes;
	size_t rounds;
	size_t pairs;           /* over all rounds */
	size_t depth;           /* of the fan-in tree */
	size_t max_connections; /* held by one node at once */
	double tree_bytes;      /* inventories, schedules and results, all tree edges */
	double probe_bytes;     /* pings and bulk transfers, all pairs, at most */
	double leader_bytes;    /* of those, what the leader sends or receives */
	double wall_s;          /* expected wall time of the whole prolog work */
};

/* Fills out for schedule s under params p.  DTPLAN_ERR_INVAL for a NULL
 * argument or fanout 0. */
enum dtplan_err dtplan_probe_cost(const struct dtplan_probe_schedule *s,
				  const struct dtplan_probe_params *p,
				  struct dtplan_probe_cost *out, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Wire format (lib/measure/wire.c)
 *
 * Every message is a frame: a 28-byte header (big-endian: "DTPW", version,
 * type, credential length, job id, session, round, sender, body length),
 * the MUNGE credential (text) and the body.  The credential's payload is the
 * seal: the header's fields and the SHA-256 of the body, so that the
 * credential vouches for this job, this round, this sender and this body.
 * Decoders never trust a length: counts are checked against what is left.
 * ---------------------------------------------------------------------- */

#define DTPLAN_WIRE_VERSION 2
#define DTPLAN_WIRE_HEADER_LEN 28
#define DTPLAN_WIRE_CRED_MAX 2048 /* a MUNGE credential of a 60-byte seal is ~250 */
#define DTPLAN_WIRE_SEAL_LEN 60
#define DTPLAN_WIRE_NOTE_MAX 256
#define DTPLAN_WIRE_NO_RECORD 0xffffffffu

enum dtplan_wire_type {
	DTPLAN_WIRE_JOIN = 1,  /* child -> parent: I am here, my listener's address */
	DTPLAN_WIRE_INVENTORY, /* child -> parent: the inventories of its subtree */
	DTPLAN_WIRE_GO,        /* parent -> child: when the rounds start, partners */
	DTPLAN_WIRE_PROBE,     /* prober -> peer: opens a link probe */
	DTPLAN_WIRE_REPORT,    /* peer -> prober: what it received */
	DTPLAN_WIRE_RESULTS,   /* child -> parent: the link results of its subtree */
	DTPLAN_WIRE__LAST
};

/* "join", "inventory", ... (static; "?" when unknown). */
const char *dtplan_wire_type_name(unsigned type);

/* Largest body of a type (bytes); 0 for an unknown type. */
size_t dtplan_wire_body_max(unsigned type);

struct dtplan_wire_header {
	uint8_t version;
	uint8_t type;
	uint16_t cred_len;
	uint32_t job_id;
	uint32_t session; /* 0 the prolog, step id + 1 a CLI probe */
	uint32_t round;   /* 0 the tree's messages, 1.. the probe rounds */
	uint32_t sender;  /* node index */
	uint32_t body_len;
};

void dtplan_wire_header_encode(const struct dtplan_wire_header *h,
			       uint8_t out[DTPLAN_WIRE_HEADER_LEN]);

/*
 * Decodes and checks a header from len bytes (DTPLAN_ERR_PARSE naming what
 * is wrong: short, bad magic, a version this build does not speak, an
 * unknown type, no credential, a credential or body over its cap).
 */
enum dtplan_err dtplan_wire_header_decode(const uint8_t *buf, size_t len,
					  struct dtplan_wire_header *h, struct dtplan_error *err);

/* The seal of a message: what its credential carries. */
void dtplan_wire_seal(const struct dtplan_wire_header *h, const void *body,
		      uint8_t out[DTPLAN_WIRE_SEAL_LEN]);

/* DTPLAN_ERR_POLICY unless payload (a decoded credential's) is the seal of
 * h and body: the credential was made for another message. */
enum dtplan_err dtplan_wire_check_seal(const struct dtplan_wire_header *h, const void *body,
				       const void *payload, size_t len, struct dtplan_error *err);

/* As dtplan_wire_check_seal() for everything but the body's digest: what a
 * receiver checks before it reads (and allocates) the body. */
enum dtplan_err dtplan_wire_check_seal_fields(const struct dtplan_wire_header *h,
					      const void *payload, size_t len,
					      struct dtplan_error *err);

/* A whole frame in a buffer. */
struct dtplan_wire_frame {
	struct dtplan_wire_header h;
	const char *cred;    /* points into the buffer; cred_len bytes, not terminated */
	const uint8_t *body; /* points into the buffer; body_len bytes */
};

/* Splits buf into header, credential and body; DTPLAN_ERR_PARSE when the
 * header is bad or len is not exactly the frame's length (truncated or
 * trailing bytes). */
enum dtplan_err dtplan_wire_frame_decode(const uint8_t *buf, size_t len,
					 struct dtplan_wire_frame *f, struct dtplan_error *err);

/* Builds a frame from h (cred_len and body_len are set from cred and len).
 * Caller frees *out.  DTPLAN_ERR_RANGE over the caps. */
enum dtplan_err dtplan_wire_frame_encode(const struct dtplan_wire_header *h, const char *cred,
					 const void *body, size_t len, uint8_t **out,
					 size_t *out_len, struct dtplan_error *err);

/* A listener's address: family 0 (none), 4 or 6, network-order bytes. */
struct dtplan_wire_addr {
	uint8_t family;
	uint8_t addr[16];
	uint16_t port;
};

struct dtplan_wire_join {
	uint32_t n_nodes;             /* the sender's view of the job's node count */
	struct dtplan_wire_addr addr; /* the sender's probe listener */
};

struct dtplan_wire_entry {
	uint32_t node;
	uint32_t record;                 /* index into records, DTPLAN_WIRE_NO_RECORD none */
	struct dtplan_wire_addr addr;    /* its probe listener */
	char note[DTPLAN_WIRE_NOTE_MAX]; /* why there is no record ("" none) */
};

struct dtplan_wire_inventory {
	size_t n_records;
	char **records; /* owned: node JSON texts, hostname "" */
	size_t n_entries;
	struct dtplan_wire_entry *entries; /* owned */
};

/* One node's partners, sent down the tree. */
struct dtplan_wire_assign {
	uint32_t node;
	int32_t peer[DTPLAN_PROBE_MAX_ROUNDS]; /* -1: idle that round */
	uint8_t sends[DTPLAN_PROBE_MAX_ROUNDS];
	uint8_t kind[DTPLAN_PROBE_MAX_ROUNDS]; /* enum dtplan_round_kind */
	struct dtplan_wire_addr peer_addr[DTPLAN_PROBE_MAX_ROUNDS];
};

struct dtplan_wire_go {
	uint32_t delay_us; /* the first round starts this long after receipt */
	uint32_t slot_us;  /* each round lasts this long */
	uint32_t n_rounds;
	uint32_t ping_count, ping_bytes, ping_window_us, bulk_us;
	uint64_t bulk_bytes;
	size_t n_assign;
	struct dtplan_wire_assign *assign; /* owned */
};

struct dtplan_wire_probe {
	uint32_t from, to;
	uint32_t ping_count, ping_bytes, bulk_us;
	uint64_t bulk_bytes;
};

struct dtplan_wire_report {
	uint64_t bytes; /* received in the bulk phase */
	double seconds; /* the window the rate was taken over */
	double bandwidth_bytes_per_s;
};

/* Link result flags. */
#define DTPLAN_LINK_OK 0x1         /* the pair completed */
#define DTPLAN_LINK_CONCURRENT 0x2 /* measured while other pairs crossed the uplinks */
#define DTPLAN_LINK_CROSS 0x4      /* the pair sits under different leaves */

/* One pair's result in one round: `from` pinged and sent to `to`. */
struct dtplan_link_result {
	uint32_t from, to;
	uint8_t round; /* 1-based */
	uint8_t flags;
	uint16_t samples;             /* ping round trips */
	double latency_s;             /* one way: the median round trip / 2 */
	double latency_spread_s;      /* (90th - 10th percentile round trip) / 2 */
	double bandwidth_bytes_per_s; /* 0 when the bulk phase failed */
};

struct dtplan_wire_results {
	size_t n_done;
	uint32_t *done; /* owned: nodes whose results these are */
	size_t n;
	struct dtplan_link_result *links; /* owned */
};

/* Body encoders: caller frees *out.  Decoders fill a caller-owned struct,
 * freed with the matching _fini (which zeroes it); on error it is empty. */
enum dtplan_err dtplan_wire_join_encode(const struct dtplan_wire_join *j, uint8_t **out,
					size_t *len, struct dtplan_error *err);
enum dtplan_err dtplan_wire_join_decode(const uint8_t *body, size_t len, struct dtplan_wire_join *j,
					struct dtplan_error *err);
enum dtplan_err dtplan_wire_inventory_encode(const struct dtplan_wire_inventory *v, uint8_t **out,
					     size_t *len, struct dtplan_error *err);
/* An inventory names at most max_nodes records and entries (the job's
 * nodes), checked before anything is allocated: an entry takes about ten
 * times its bytes on the wire in memory. */
enum dtplan_err dtplan_wire_inventory_decode(const uint8_t *body, size_t len, size_t max_nodes,
					     struct dtplan_wire_inventory *v,
					     struct dtplan_error *err);
void dtplan_wire_inventory_fini(struct dtplan_wire_inventory *v);
enum dtplan_err dtplan_wire_go_encode(const struct dtplan_wire_go *g, uint8_t **out, size_t *len,
				      struct dtplan_error *err);
enum dtplan_err dtplan_wire_go_decode(const uint8_t *body, size_t len, struct dtplan_wire_go *g,
				      struct dtplan_error *err);
void dtplan_wire_go_fini(struct dtplan_wire_go *g);
enum dtplan_err dtplan_wire_probe_encode(const struct dtplan_wire_probe *p, uint8_t **out,
					 size_t *len, struct dtplan_error *err);
enum dtplan_err dtplan_wire_probe_decode(const uint8_t *body, size_t len,
					 struct dtplan_wire_probe *p, struct dtplan_error *err);
enum dtplan_err dtplan_wire_report_encode(const struct dtplan_wire_report *r, uint8_t **out,
					  size_t *len, struct dtplan_error *err);
enum dtplan_err dtplan_wire_report_decode(const uint8_t *body, size_t len,
					  struct dtplan_wire_report *r, struct dtplan_error *err);
enum dtplan_err dtplan_wire_results_encode(const struct dtplan_wire_results *r, uint8_t **out,
					   size_t *len, struct dtplan_error *err);
enum dtplan_err dtplan_wire_results_decode(const uint8_t *body, size_t len,
					   struct dtplan_wire_results *r, struct dtplan_error *err);
void dtplan_wire_results_fini(struct dtplan_wire_results *r);

/*
 * Decodes the body of any type into nothing, for fuzzing and for logging a
 * rejected message: DTPLAN_OK when body is a valid body of type.
 */
enum dtplan_err dtplan_wire_body_check(unsigned type, const uint8_t *body, size_t len,
				       struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Measurements (lib/measure/measure.c, lib/json/measure_json.c)
 * ---------------------------------------------------------------------- */

/* A node is a straggler when its best link is below this fraction of its
 * tier's median. */
#define DTPLAN_STRAGGLER_FRACTION 0.5
/* An uplink counts as saturated when the concurrent round got less than
 * this fraction of what its flows offered. */
#define DTPLAN_SATURATED_FRACTION 0.8

/* Latency and single-flow bandwidth of one tier (medians over its links). */
struct dtplan_tier {
	bool measured;
	double bandwidth_bytes_per_s;
	double latency_s;
	double latency_spread_s;
	size_t links;
};

/* A leaf switch's uplink as the concurrent round saw it. */
struct dtplan_uplink {
	char name[64];
	double oversubscription; /* downlink capacity / aggregate (measured) */
	double configured;       /* the site file's ratio (Oversubscription=, or UplinkBandwidth=
				       * against the leaf's GPU links), 0 none (non-blocking) */
	double aggregate_bytes_per_s; /* the concurrent flows over it, larger direction */
	double downlink_bytes_per_s;  /* its nodes x their link bandwidth */
	size_t flows;
	bool saturated; /* the flows got less than they offered */
};

struct dtplan_straggler {
	char node[64];
	double bandwidth_bytes_per_s; /* its best link */
	double tier_median_bytes_per_s;
};

struct dtplan_measurements {
	char source[16];   /* "prolog", "probe" or "none" */
	size_t n_nodes;    /* the allocation */
	char (*hosts)[64]; /* owned, n_nodes, allocation order */
	size_t n_reported; /* nodes whose inventory arrived */
	double budget_s, elapsed_s;
	char interface[32]; /* the probe's interface; "" the nodes' host names */
	struct dtplan_tier intra, cross;
	size_t n_uplinks;
	struct dtplan_uplink *uplinks; /* owned */
	size_t n_links;
	struct dtplan_link_result *links; /* owned; from/to index hosts */
	size_t n_stragglers;
	struct dtplan_straggler *stragglers; /* owned */
	size_t n_missing;
	uint32_t *missing; /* owned: hosts that did not report (inventory or results) */
	size_t n_notes;
	char (*notes)[256];  /* owned: what the run wants people to know, the
			     * first DTPLAN_MEASURE_MAX_NOTES of them */
	size_t n_notes_more; /* notes past those: counted, not kept */
	/* Why the run measured nothing at all, "" when it ran: its cause (the
	 * leader could not listen on its ports, make credentials, or finish
	 * within the budget), which a plan taking it names as degraded. */
	char failed[256];
	/* Filled by dtplan_measurements_apply() and the inventory assembler:
	 * what the plan used. */
	size_t n_inventories; /* hosts whose inventory came from the measurement */
	bool used_tiers;      /* bandwidth and latency replaced the site's */
	bool used_ratios;     /* uplink ratios replaced the site's */
};

/* What dtplan_measurements_analyze() reads.  All borrowed. */
struct dtplan_measure_in {
	const char *source; /* "prolog" or "probe" */
	size_t n_nodes;
	const char (*hosts)[64];
	const int32_t *leaf; /* leaf index in topology per host, -1 unknown; NULL flat */
	const struct dtplan_topology *topology; /* names and sizes of the leaves; NULL */
	const uint8_t *reported;                /* 1: the host's inventory arrived */
	const uint8_t *complete;                /* 1: its link results arrived (or it had none) */
	size_t n_links;
	const struct dtplan_link_result *links;
	double budget_s, elapsed_s;
	const char *interface; /* NULL or "": host names */
};

/*
 * Computes tiers (medians of the intra-leaf and the single cross-leaf
 * links), uplinks (the concurrent round's flows per leaf against the leaf's
 * nodes x the intra-leaf bandwidth), stragglers (a node whose best link is
 * below DTPLAN_STRAGGLER_FRACTION of its tier's median) and the missing
 * hosts.  Caller frees *out with dtplan_measurements_destroy().
 * DTPLAN_ERR_INVAL for a link naming a host out of range.
 */
enum dtplan_err dtplan_measurements_analyze(const struct dtplan_measure_in *in,
					    struct dtplan_measurements **out,
					    struct dtplan_error *err);

/* An empty measurement of n hosts (source "none"); hosts may be NULL.
 * Caller frees with dtplan_measurements_destroy(). */
struct dtplan_measurements *dtplan_measurements_create(size_t n, const char (*hosts)[64]);
void dtplan_measurements_destroy(struct dtplan_measurements *m);

/* Notes kept in full: a big job writes one per node without an inventory,
 * and 2 million of them took 3 GB and a plan dtplan show refused. */
#define DTPLAN_MEASURE_MAX_NOTES 16

/* Appends a note (formatted, cut at 255 characters); past the first
 * DTPLAN_MEASURE_MAX_NOTES, counts it in n_notes_more. */
enum dtplan_err dtplan_measurements_add_note(struct dtplan_measurements *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Makes the measurement the plan's input: records each uplink's configured
 * ratio (the site file's SwitchName= Oversubscription, 0 none), then replaces the ratios of
 * the saturated uplinks in c's and t's switches (used_ratios), and when the
 * probe ran on a named interface (the training fabric) the request's
 * network bandwidth and latency by the intra-leaf tier (used_tiers).  c, t
 * and req may be NULL (nothing of theirs changes).
 */
enum dtplan_err dtplan_measurements_apply(struct dtplan_measurements *m, struct dtplan_request *req,
					  struct dtplan_config *c, struct dtplan_topology *t,
					  struct dtplan_error *err);

/*
 * Hands m to the plan (the plan frees it; NULL allowed) and adds the
 * measurement's warnings (lib/plan/measured.c): an uplink measured above its configured ratio
 * ("measured-oversubscription", both numbers), each straggler ("straggler",
 * its name and figures), hosts whose links are missing
 * ("measurement-incomplete") and the notes ("measurement").  A failed
 * measurement (m->failed) marks the plan degraded, naming the cause.
 */
enum dtplan_err dtplan_plan_take_measurements(struct dtplan_plan *p, struct dtplan_measurements *m,
					      struct dtplan_error *err);

/* The measurements object of the plan JSON (and of dtplan probe --json).
 * Caller frees *out. */
enum dtplan_err dtplan_measurements_to_json(const struct dtplan_measurements *m, bool pretty,
					    char **out, struct dtplan_error *err);

#define DTPLAN_MEASURE_SCHEMA "dtplan.measurements/1"

/*
 * The measurement file the prolog's leader writes: the measurements, and the
 * inventory records with the host -> record map (equal nodes share one
 * record).  records[k] are node JSON texts (dtplan_node_to_json()).
 */
struct dtplan_measure_file {
	uint32_t job_id;
	struct dtplan_measurements *m; /* owned */
	size_t n_records;
	struct dtplan_node *records; /* owned */
	int32_t *host_record;        /* owned, m->n_nodes: index into records, -1 none */
};

void dtplan_measure_file_fini(struct dtplan_measure_file *f);

/* File <-> JSON text.  Caller frees *out / fini()s f.  Reading checks every
 * type, count and index and names the member that is wrong. */
enum dtplan_err dtplan_measure_file_to_json(const struct dtplan_measure_file *f, char **out,
					    struct dtplan_error *err);
enum dtplan_err dtplan_measure_file_from_json(const char *text, struct dtplan_measure_file *f,
					      struct dtplan_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_MEASURE_H */
