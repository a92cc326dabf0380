/*
 * dtplan_private.h: internals shared across libdtplan files.  Never installed.
 * Functions here carry the dtplan__ prefix.
 */
#ifndef DTPLAN_PRIVATE_H
#define DTPLAN_PRIVATE_H

#include "dtplan.h"

#include <stdarg.h>

#define DTPLAN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Fills err (NULL allowed) with code, source, line and a formatted message.
 * Returns code so that callers can write `return dtplan__error(...)`.
 */
enum dtplan_err dtplan__error(struct dtplan_error *err, enum dtplan_err code, const char *source,
			      int line, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Sends a formatted message to the installed sink. */
void dtplan__log(enum dtplan_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* strlcpy: copies at most size-1 bytes and terminates; returns strlen(src). */
size_t dtplan__strlcpy(char *dst, const char *src, size_t size);

/* Case-insensitive string equality. */
bool dtplan__streq_nocase(const char *a, const char *b);

/* The plan's "measurements" object (lib/measure_json.c): m's, or with m
 * NULL that of nothing measured on n_nodes nodes.  A new reference; NULL
 * when out of memory. */
struct json_t;
struct dtplan_measurements;
struct json_t *dtplan__measurements_json(const struct dtplan_measurements *m, size_t n_nodes);

/* Deepest nesting any JSON reader takes (a plan nests 4 deep, a fabric 5). */
#define DTPLAN_JSON_MAX_DEPTH 32

/*
 * json_loadb() (JSON_REJECT_DUPLICATES) of len bytes of text dtplan did not
 * write, after a scan that allocates nothing refuses nesting deeper than
 * DTPLAN_JSON_MAX_DEPTH and more than max_values values (lib/json_load.c).
 * NULL on error: DTPLAN_ERR_PARSE from source at the line, the message
 * starting with prefix ("" allowed).  Caller json_decref()s the tree.
 */
struct json_t *dtplan__json_load(const char *text, size_t len, size_t max_values,
				 const char *source, const char *prefix, struct dtplan_error *err);

/* SHA-256 of len bytes at data into out (lib/sha256.c). */
void dtplan__sha256(const void *data, size_t len, uint8_t out[32]);

/*
 * A model's parameters by where a pipeline holds them (lib/model.c):
 * per_layer = (params - embedding - untied output layer) / layers, embedding
 * V h on stage 0, head V h on the last stage when pp > 1 (a copy of the
 * embedding when tied), head_flops_params V h the output layer's matrix.
 * Without a vocabulary (or when the embeddings would exceed params) all is
 * per_layer and the rest is 0.
 */
struct dtplan__model_parts {
	double per_layer;
	double active_per_layer; /* what one token passes through (== per_layer when dense) */
	double embedding;
	double head;
	double head_flops_params;
};

void dtplan__model_parts(const struct dtplan_model *m, struct dtplan__model_parts *out);

/* Parameters of the attention's projections of one layer (GQA or MLA). */
double dtplan__model_attn_params(const struct dtplan_model *m);

/* MoE layers among layers [first, first + n) (O(1)). */
int dtplan__model_moe_in(const struct dtplan_model *m, int first, int n);

/* Whether layer i (0-based) is an MoE layer. */
bool dtplan__model_is_moe_layer(const struct dtplan_model *m, int i);

/*
 * Parameters of layers [first, first + n): *expert the routed experts' (EP
 * divides them), *dense the rest (attention, norms, dense MLPs, shared
 * experts, routers).  A model given by its size: n per_layer, no experts.
 */
void dtplan__model_layer_range(const struct dtplan_model *m, int first, int n, double *dense,
			       double *expert);

/* ------------------------------------------------------------------------
 * Site configuration: its settings (lib/config.c), read from the site file
 * (lib/config_site.c) and the plugstack arguments (lib/config_args.c)
 * ---------------------------------------------------------------------- */

/* Room for every global setting (lib/config.c asserts it). */
#define DTPLAN__CONFIG_MAX_SETTINGS 64

/* One global setting of the table (lib/config.c). */
struct dtplan__config_setting;

/* A parsed value of one setting, before it is stored. */
struct dtplan__config_value {
	const struct dtplan__config_setting *setting;
	size_t index; /* the setting's row, < DTPLAN__CONFIG_MAX_SETTINGS */
	int i;
	double d;
	char s[256];
};

/*
 * Parses text for the setting named name: its site-file key (site) or its
 * plugstack argument, case-insensitive.  When no setting has that name,
 * v->setting is NULL (and the error DTPLAN_ERR_NOT_FOUND); other errors
 * (a GPU type the catalog lacks is NOT_FOUND too) name the setting.
 */
enum dtplan_err dtplan__config_parse_setting(const char *name, bool site, const char *text,
					     struct dtplan__config_value *v,
					     struct dtplan_error *err);

/* Stores v into c. */
void dtplan__config_store(struct dtplan_config *c, const struct dtplan__config_value *v);

/* Whether c holds v already / a and b are the same value of one setting:
 * numbers within rounding (5us is 5 * 1e-6, not bit-equal to 5e-6). */
bool dtplan__config_holds(const struct dtplan_config *c, const struct dtplan__config_value *v);
bool dtplan__config_same(const struct dtplan__config_value *a,
			 const struct dtplan__config_value *b);

/* v's setting's site-file key (NULL for plugstack-only settings) and its
 * plugstack argument name (static strings). */
const char *dtplan__config_key(const struct dtplan__config_value *v);
const char *dtplan__config_arg(const struct dtplan__config_value *v);

/* A switch or NVLink domain name: letters, digits, '-', '_', '.'. */
bool dtplan__config_valid_name(const char *s);

/* A GPU type of the catalog; the message lists the known names. */
enum dtplan_err dtplan__config_check_gpu(const char *key, const char *text,
					 struct dtplan_error *err);

/* Oversubscription "4:1", "1.5:1" or "4", and a link rate, within the bounds
 * of doc/internals/limits.md; key names the value in messages. */
enum dtplan_err dtplan__config_parse_oversub(const char *key, const char *text, double *out,
					     struct dtplan_error *err);
enum dtplan_err dtplan__config_parse_link_rate(const char *key, const char *text, double *out,
					       struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Request (lib/request.c)
 * ---------------------------------------------------------------------- */

/*
 * Fills what a request leaves to the model: seq 0 becomes the model's
 * max_seq (DTPLAN_DEFAULT_SEQ when unknown).  Returns req itself when nothing
 * is left open, else buf holding the resolved copy.
 */
const struct dtplan_request *dtplan__request_resolve(const struct dtplan_request *req,
						     struct dtplan_request *buf);

/*
 * Checks that a request is complete and consistent (counts >= 1, fixed
 * choices in range, bandwidths > 0).  DTPLAN_ERR_INVAL naming the field.
 */
enum dtplan_err dtplan__request_check(const struct dtplan_request *req, struct dtplan_error *err);

/* Fixed choices that can never be met (TP not dividing the heads or GPUs, PP
 * above the layers, ZeRO-2/3 with PP, ...): DTPLAN_ERR_INVAL naming the
 * choice in err->source ("tp", "pp", "zero", "micro-batch"). */
enum dtplan_err dtplan__request_check_fixed(const struct dtplan_request *r,
					    struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Kernel times (lib/compute.c): doc/internals/cost-model.md, "Compute"
 * ---------------------------------------------------------------------- */

/* Per-request rates of the kernel model. */
struct dtplan__kernels {
	double gemm_rate;     /* FLOP/s of a large GEMM in the request's precision */
	double gemm_in_bytes; /* bytes per GEMM input element (1 for fp8) */
	double bf16_rate;     /* the same in bf16 (attention's matrix multiplies) */
	double attn_rate;     /* FlashAttention's FLOP/s */
	double hbm;           /* bytes/s streaming kernels reach */
	double sms;           /* streaming multiprocessors */
	double host_link;     /* host link per direction (bytes/s) */
	double host_memory;   /* host memory bandwidth per GPU (bytes/s) */
	bool flash;           /* FlashAttention */
};

/* Seconds of one micro-batch through one layer (or the output layer and the
 * embedding) on one GPU of a TP group, and the FLOPs executed. */
struct dtplan__layer_time {
	double fwd, bwd, recompute;
	double attn_fwd; /* of fwd, the attention core's (FlashAttention or unfused) */
	double flops;    /* forward, backward and recomputation */
};

void dtplan__kernels_init(const struct dtplan_request *r, struct dtplan__kernels *k);
void dtplan__layer_seconds(const struct dtplan__kernels *k, const struct dtplan_model *mdl, int seq,
			   int micro_batch, int tp, enum dtplan_recompute rc,
			   struct dtplan__layer_time *out);
/* The same for a layer of a model with experts (moe: the layer is an MoE
 * layer) or latent attention, on s / cp tokens of each sequence. */
void dtplan__layer_seconds_ex(const struct dtplan__kernels *k, const struct dtplan_model *mdl,
			      int seq, int micro_batch, int tp, int cp, bool moe,
			      enum dtplan_recompute rc, struct dtplan__layer_time *out);
void dtplan__head_seconds(const struct dtplan__kernels *k, const struct dtplan_model *mdl, int seq,
			  int micro_batch, int tp, struct dtplan__layer_time *out);
/* One optimizer step over `params` parameters holding gradients of grad_bytes. */
double dtplan__optimizer_seconds(const struct dtplan__kernels *k, double params, double grad_bytes,
				 bool offload);

/* ------------------------------------------------------------------------
 * Search (lib/search.c), used by lib/plan.c and the tests
 * ---------------------------------------------------------------------- */

/*
 * Candidates predicted within this fraction of the best time the model can
 * vouch for (the smallest step time with links at DTPLAN__LINK_EFFICIENCY_LOW
 * of their bandwidth) are ties, broken by network bytes then simplicity.
 */
#define DTPLAN__TIE_FRACTION 0.03
#define DTPLAN__LINK_EFFICIENCY_LOW 0.5

/* Fewest tokens of each sequence a CP rank keeps when CP is searched:
 * below it ring attention's per-block exchange outlasts the block's
 * attention (doc/internals/cost-model.md, "Context parallelism"). */
#define DTPLAN__CP_MIN_TOKENS 8192

/* Fraction of the DP/ZeRO communication hidden behind compute that is
 * still charged: the collectives' kernels slow the compute they overlap. */
#define DTPLAN__OVERLAP_TAX 0.1

/* Outcome of one search over a request. */
struct dtplan__search {
	struct dtplan_candidate best;
	bool have_best;
	int min_dp; /* narrowest DP of a (tp, pp) split the rules allow; 0 none */
	bool have_runner_up;
	struct dtplan_candidate runner_up;
	char runner_up_reason[256];
	size_t n_considered; /* configurations examined */
	size_t n_fit;        /* of them, fitting memory */
};

/*
 * Pins r's choices to c's (TP, PP, EP, CP, interleaving, ZeRO, offload,
 * micro-batch, recomputation), so that a search over another fabric or
 * schedule weighs the same configuration.
 */
void dtplan__request_pin(struct dtplan_request *r, const struct dtplan_candidate *c);

/*
 * Evaluates one configuration: fills c->memory and, when it fits, the
 * predicted step, FLOPs and network bytes.  c->tp, pp, dp, zero,
 * micro_batch and recompute are inputs; num_microbatches is set.  *fits
 * says whether the ledger total is within memory * (1 - headroom).
 */
enum dtplan_err dtplan__candidate_evaluate(const struct dtplan_request *req,
					   struct dtplan_candidate *c, bool *fits,
					   struct dtplan_error *err);

/*
 * Runs the search.  With first_fit, stops at the first configuration that
 * fits (used to find the smallest GPU count); out->best is then that one.
 * Without a fit, out->have_best is false and DTPLAN_OK is returned.
 */
enum dtplan_err dtplan__search_run(const struct dtplan_request *req, bool first_fit,
				   struct dtplan__search *out, struct dtplan_error *err);

/* "TP 8 x PP 4 x DP 4, ZeRO-1, micro-batch 1 x 256, selective recompute" */
const char *dtplan__candidate_describe(const struct dtplan_candidate *c, char *buf, size_t size);

/*
 * String -> int map with open addressing, for name lookups over large
 * clusters (lib/strmap.c).  Keys are borrowed: the caller keeps them alive
 * and unchanged while the map is in use.
 */
struct dtplan__strmap {
	size_t cap; /* power of two, 0 when empty */
	size_t len;
	const char **keys; /* borrowed, NULL for a free slot */
	int *values;
};

/* Sets up an empty map sized for about `expected` keys. */
enum dtplan_err dtplan__strmap_init(struct dtplan__strmap *m, size_t expected);
/* Frees the map's arrays (not the keys).  NULL allowed. */
void dtplan__strmap_fini(struct dtplan__strmap *m);
/*
 * Inserts key -> value.  When key is already present, leaves the map
 * unchanged, stores the existing value in *old (NULL allowed) and returns
 * DTPLAN_ERR_INVAL; DTPLAN_ERR_NOMEM when growing fails.
 */
enum dtplan_err dtplan__strmap_put(struct dtplan__strmap *m, const char *key, int value, int *old);
/* Value of key, or -1 when absent. */
int dtplan__strmap_get(const struct dtplan__strmap *m, const char *key);

/* ------------------------------------------------------------------------
 * Topology files: lib/topology.c links what the readers found (the tree of
 * topology.conf, lib/topology_block.c's blocks, lib/topology_yaml.c's
 * topology.yaml); lib/topology_file.c picks the reader.
 * ---------------------------------------------------------------------- */

/* One switch or block as a topology file names it, before the tree is linked. */
struct dtplan__topo_entry {
	char name[64];
	int line;          /* in the file, for messages */
	double link_speed; /* bytes/s, 0 unknown */
	char *switches;    /* hostlist of child switches, owned, or NULL */
	char *nodes;       /* hostlist of nodes, owned, or NULL */
};

/* Appends a zeroed entry to *entries (n used, cap allocated); *out points at
 * it.  DTPLAN_ERR_NOMEM when growing fails. */
enum dtplan_err dtplan__topo_entry_add(struct dtplan__topo_entry **entries, size_t *n, size_t *cap,
				       struct dtplan__topo_entry **out);

/* Frees n entries and the array (NULL allowed). */
void dtplan__topo_entries_free(struct dtplan__topo_entry *entries, size_t n);

/* A switch or block name: letters, digits, '-', '_'; at most 63. */
bool dtplan__topo_valid_name(const char *s);

/*
 * Links entries into a topology: leaves (entries with nodes) at level 0,
 * parents from Switches=, every node under one leaf, no cycle.  `what`
 * ("switch" or "block") names the entries in messages, which carry source
 * and the entry's line.  Caller frees *out with dtplan_topology_destroy();
 * NULL on error.
 */
enum dtplan_err dtplan__topology_link(const struct dtplan__topo_entry *entries, size_t n,
				      const char *source, const char *what,
				      struct dtplan_topology **out, struct dtplan_error *err);

/* The readers, each for text of its form (source names it in messages). */
enum dtplan_err dtplan__topology_parse_tree(const char *text, const char *source,
					    struct dtplan_topology **out, struct dtplan_error *err);
enum dtplan_err dtplan__topology_parse_block(const char *text, const char *source,
					     struct dtplan_topology **out,
					     struct dtplan_error *err);
enum dtplan_err dtplan__topology_parse_yaml(const char *text, const char *source,
					    struct dtplan_topology **out, struct dtplan_error *err);

/*
 * Links blocks (entries with nodes only) into a topology of blocks as
 * topology/block reads them: sizes[0..n_sizes) the BlockSizes (node counts;
 * n_sizes 0: the first block's node count is the base), each a power-of-two
 * multiple of the first, at most 2^15 of it; every block at least the base.
 * sizes_line names where the sizes were given (0: nowhere).  Sets
 * t->blocks and t->block_size.  lib/topology_block.c.
 */
enum dtplan_err dtplan__topology_blocks(const struct dtplan__topo_entry *entries, size_t n,
					const long *sizes, size_t n_sizes, int sizes_line,
					const char *source, struct dtplan_topology **out,
					struct dtplan_error *err);

/*
 * Next line of a Slurm-style file held in a writable buffer: cuts the line
 * at its newline and at '#' (a comment), advances *cursor and counts
 * *lineno from 1.  Returns NULL after the last line (lib/conffile.c).
 */
char *dtplan__conf_line(char **cursor, int *lineno);

/*
 * Splits one such line, in place, into Key=Value tokens: the value of
 * keys[i] (case-insensitive) goes to vals[i] (NULL when absent).  Errors
 * name source and lineno: a token that is not Key=Value, a key given twice,
 * an empty value.  A key not in keys ends the line with DTPLAN_ERR_PARSE,
 * *unknown pointing at it and err left to the caller, who knows what was
 * expected.  Returns DTPLAN_OK when every token was taken.
 */
enum dtplan_err dtplan__conf_keys(char *line, const char *const *keys, const char **vals, size_t n,
				  const char **unknown, const char *source, int lineno,
				  struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Fabric (lib/fabric.c), its cost (lib/fabric_cost.c), placement
 * (lib/placement.c) and warnings (lib/warnings.c)
 * ---------------------------------------------------------------------- */

/* Consecutive nodes of the placement under one leaf switch. */
struct dtplan__run {
	int sw;            /* topology leaf index; -1 for the "unknown" leaf or a flat fabric */
	const char *name;  /* leaf name (borrowed from the topology), "unknown" or "" (flat) */
	size_t first_node; /* placement-order index of the run's first node */
	size_t n_nodes;
	size_t first_gpu; /* GPU positions [first_gpu, first_gpu + n_gpus) */
	size_t n_gpus;
	size_t leaf_nodes; /* nodes under this leaf in the whole tree */
	double uplink_bw;  /* uplink capacity (bytes/s); INFINITY when not limited */
	double ratio;      /* leaf GPUs x NIC bandwidth / uplink capacity (1.0 when flat) */
};

/*
 * The allocation as placement sees it: nodes in topology order, GPU
 * positions 0..n_gpus-1 (node i holds [i g, (i+1) g), local rank l of node i
 * is GPU order[l] of its inventory), domains and leaf runs.
 */
struct dtplan__fabric {
	int gpus_per_node;              /* g: the smallest node's usable GPUs */
	size_t n_nodes;                 /* nodes holding ranks, placement order */
	size_t n_gpus;                  /* GPU positions (the job's GPUs) */
	const char **host;              /* borrowed hostname per node */
	const struct dtplan_node **inv; /* borrowed inventory per node, NULL: generic */
	int *leaf;                      /* topology leaf switch per node, -1 unknown */
	int *order;                     /* n_nodes x g: inventory GPU index per local rank */
	int *gpu_domain;                /* n_gpus: global NVLink domain id per position */
	int n_domains;
	int domain_gcd; /* gcd of the domain segments: TP must divide it */
	int min_domain; /* smallest domain segment (GPUs) */
	size_t n_segments;
	size_t n_runs;
	struct dtplan__run *runs;
	size_t n_leaves_needed; /* fewest tree leaves that hold n_nodes nodes */
	/* the same nodes on those fewest leaves (the largest, then the least
	 * oversubscribed), the unknown nodes last: the allocation a warning
	 * compares with (n_packed == n_leaves_needed unless flat) */
	size_t n_packed;
	struct dtplan__run *packed;
	size_t n_unknown;  /* nodes missing from the tree */
	size_t n_generic;  /* nodes without an inventory */
	double net_bw;     /* NIC bandwidth per GPU (bytes/s) */
	bool flat;         /* no topology given */
	bool blocks;       /* the leaves are topology/block blocks */
	size_t block_size; /* the base block's node count (blocks only) */
	bool heterogeneous;
	char hetero_reason[320]; /* the first difference, for the warning */
};

/* One kind of group (TP, PP or DP) under a rank order. */
struct dtplan__group_links {
	bool net;           /* the groups leave their NVLink domain */
	bool crosses;       /* some group crosses a leaf uplink */
	double bw;          /* effective per-flow bandwidth (bytes/s) */
	size_t worst_run;   /* run with the smallest per-flow bandwidth (when crosses) */
	double worst_flows; /* the job's concurrent flows over that run's uplink */
	double max_ratio;   /* largest ratio among the crossed uplinks */
};

struct dtplan__fabric_eval {
	struct dtplan__group_links tp, pp, dp;
};

/*
 * Builds the layout for req on cl (see dtplan_plan_create()).  req->gpus 0:
 * all GPUs.  Caller frees *out with dtplan__fabric_destroy().
 */
enum dtplan_err dtplan__fabric_build(const struct dtplan_request *req,
				     const struct dtplan_cluster *cl, struct dtplan__fabric **out,
				     struct dtplan_error *err);
void dtplan__fabric_destroy(struct dtplan__fabric *f);

/* True when TP groups of tp consecutive GPUs never span two NVLink domains. */
bool dtplan__fabric_tp_fits(const struct dtplan__fabric *f, int tp);

/*
 * Concurrent flows one group kind sends over run r's uplink: groups of
 * `block` consecutive GPUs holding `inter` interleaved groups, or (strided)
 * one member in every block of `block` GPUs (lib/fabric_cost.c).
 */
double dtplan__run_flows(const struct dtplan__fabric *f, const struct dtplan__run *r, bool strided,
			 size_t block, size_t inter);

/*
 * Where the TP, PP and DP groups of (tp, pp, dp) run under rank order o, and
 * their effective bandwidth: min(NIC, uplink / concurrent flows) over the
 * uplinks they cross; groups inside an NVLink domain get nvlink_bw.
 * O(number of runs).
 */
void dtplan__fabric_eval(const struct dtplan__fabric *f, int tp, int pp, int dp,
			 enum dtplan_rank_order o, double nvlink_bw,
			 struct dtplan__fabric_eval *out);

/*
 * Fills p's ranks, node_names, node_leaf and leaf counts from the layout and
 * p->best (its rank_order).
 */
enum dtplan_err dtplan__placement_fill(struct dtplan_plan *p, const struct dtplan__fabric *f,
				       struct dtplan_error *err);

/*
 * Adds every warning of a finished plan: the fabric's (f NULL: planned
 * without a cluster) then the step's, in that order.
 */
enum dtplan_err dtplan__plan_warnings(struct dtplan_plan *p, const struct dtplan__fabric *f,
				      struct dtplan_error *err);

/*
 * Optimizer state on the GPU per parameter it holds, in bytes: the fp32
 * master copy (unless no_master_copy) and Adam's two moments, fp32 or bf16;
 * none when offloaded to the host.
 */
double dtplan__optimizer_bytes(bool offload, bool no_master_copy, bool bf16_moments);

/*
 * What the ledger needs of a (model, pp, stages) split that the ZeRO stage,
 * micro-batch, recomputation and interleaving do not change: for each stage
 * that can be the heaviest (the first, the first middle one, the last), its
 * layers, MoE layers and dense and expert parameters.  The search computes
 * it once per split; dtplan_ledger_compute() is the two calls below.
 */
struct dtplan__stage_shape {
	int stage, layers, n_moe;
	double dense, expert; /* parameters: dense (embedding, head) and routed experts */
};

struct dtplan__ledger_shape {
	int pp;
	int n; /* stages in s: 1 to 3 */
	struct dtplan__stage_shape s[3];
};

enum dtplan_err dtplan__ledger_shape(const struct dtplan_ledger_in *in,
				     struct dtplan__ledger_shape *out, struct dtplan_error *err);
enum dtplan_err dtplan__ledger_compute_shaped(const struct dtplan_ledger_in *in,
					      const struct dtplan__ledger_shape *sh,
					      struct dtplan_ledger *out, struct dtplan_error *err);

/* Search over a fabric (NULL: as dtplan__search_run()). */
enum dtplan_err dtplan__search_run_fabric(const struct dtplan_request *req,
					  const struct dtplan__fabric *fab, bool first_fit,
					  struct dtplan__search *out, struct dtplan_error *err);

/*
 * The same search with its pruning off: every candidate evaluated and
 * ranked.  For the tests that check the pruning changes no plan.
 */
enum dtplan_err dtplan__search_run_exhaustive(const struct dtplan_request *req,
					      const struct dtplan__fabric *fab,
					      struct dtplan__search *out, struct dtplan_error *err);

#endif /* DTPLAN_PRIVATE_H */
