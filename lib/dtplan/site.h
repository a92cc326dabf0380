/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/site.h: the switch tree and the site's configuration.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_SITE_H
#define DTPLAN_SITE_H

#include "dtplan/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Cluster topology: switch tree and site file (lib/topology/topology.c, lib/site/config.c)
 * ---------------------------------------------------------------------- */

struct dtplan_switch {
	char name[64];
	int parent;                /* index of the parent switch, -1 for a root */
	int level;                 /* 0 for leaves (switches with nodes) */
	double link_speed;         /* bytes/s from topology.conf LinkSpeed, 0 unknown */
	double oversubscription;   /* downlink/uplink capacity, 1.0 = non-blocking */
	double uplink_bytes_per_s; /* capacity of the uplink to the parent, 0 unknown */
};

struct dtplan_topology_index; /* private to lib/topology/topology.c */

/* What a topology's leaves are: switches (topology/tree), blocks
 * (topology/block), rings (topology/ring, 26.05) or 3-D toruses
 * (topology/torus3d, 26.05); doc/internals/placement.md. */
enum dtplan_leaf_kind {
	DTPLAN_LEAF_SWITCH = 0,
	DTPLAN_LEAF_BLOCK,
	DTPLAN_LEAF_RING,
	DTPLAN_LEAF_TORUS,
};
/* "switch", "block", "ring", "torus" (the plan JSON's leaf_kind); plural
 * "switches", "blocks", "rings", "toruses" with many. */
const char *dtplan_leaf_kind_name(enum dtplan_leaf_kind k, bool many);

struct dtplan_topology {
	size_t n_switches;
	struct dtplan_switch *switches; /* owned */
	size_t n_nodes;
	char (*node_names)[64]; /* owned; every node named under a leaf */
	int *node_leaf;         /* owned; index of each node's leaf switch */
	/* Name index built by the parsers (owned).  NULL in a tree built by hand:
	 * lookups then scan the arrays. */
	struct dtplan_topology_index *index;
	/* topology/block: the leaves are blocks (an NVL72 rack each, say), each a
	 * root, in the file's order; block_size is the base block's node count
	 * (BlockSizes' first, else the first block's).  false and 0 for a tree. */
	bool blocks;
	size_t block_size;
	/* DTPLAN_LEAF_RING, _TORUS: each leaf a ring or torus of topology.yaml,
	 * its nodes in ring (x-major) order, each a root; SWITCH for a tree,
	 * BLOCK with blocks */
	enum dtplan_leaf_kind leaf_kind;
};

/* Most names one hostlist expression in topology.conf or dtplan.conf may name. */
#define DTPLAN_HOSTLIST_MAX 1048576

/*
 * Parses a topology file in any of the forms Slurm reads
 * (lib/topology/topology_file.c picks by content, and a path ending .yaml or .yml is
 * YAML):
 *   - topology.conf for topology/tree: SwitchName=, Switches=, Nodes=,
 *     LinkSpeed=, hostlist expressions;
 *   - topology.conf for topology/block: BlockName= Nodes= lines and an
 *     optional BlockSizes=; blocks become leaves (t->blocks);
 *   - topology.yaml (Slurm 25.05): a list of topologies, the first with
 *     cluster_default: true (else the first) read, in its tree: or block:
 *     form (flat:, true or a mapping of options, gives a topology without
 *     switches), or 26.05's ring: and torus3d: (each ring or torus a leaf,
 *     its nodes in ring or x-major order; t->leaf_kind).  A YAML subset:
 *     block mappings and sequences, [a, b] lists, plain and quoted scalars;
 *     anchors, tags, multi-line scalars and {} maps are refused by name.
 * Caller frees with dtplan_topology_destroy().  Errors name the file and
 * line.
 */
enum dtplan_err dtplan_topology_parse_file(const char *path, struct dtplan_topology **out,
					   struct dtplan_error *err);
enum dtplan_err dtplan_topology_parse_string(const char *text, const char *source_name,
					     struct dtplan_topology **out,
					     struct dtplan_error *err);

/* The same for topology.conf text only (switches or blocks, never YAML,
 * whatever it looks like): what the fabric service's text/plain answer
 * (or FabricFormat=topology.conf) is, as dtplan.conf(5) says. */
enum dtplan_err dtplan_topology_parse_conf(const char *text, const char *source_name,
					   struct dtplan_topology **out, struct dtplan_error *err);

void dtplan_topology_destroy(struct dtplan_topology *t);

/* Index of a switch or node by name, -1 when absent (or t/name NULL). */
int dtplan_topology_switch_index(const struct dtplan_topology *t, const char *name);
int dtplan_topology_node_index(const struct dtplan_topology *t, const char *name);

/* Number of nodes under leaf switch sw (0 for a non-leaf or a bad index). */
size_t dtplan_topology_leaf_size(const struct dtplan_topology *t, int sw);

/*
 * Expands a Slurm hostlist ("node[01-16,20],gpu7") into names.  Caller frees
 * *names with free() (one allocation).  At most max_hosts names.
 */
enum dtplan_err dtplan_hostlist_expand(const char *expr, size_t max_hosts, char (**names)[64],
				       size_t *n, struct dtplan_error *err);

/* Sets *match to whether name is one of the names expr expands to, without
 * expanding it.  Errors as dtplan_hostlist_expand() for a bad expression. */
enum dtplan_err dtplan_hostlist_match(const char *expr, const char *name, bool *match,
				      struct dtplan_error *err);

/*
 * Writes names in hostlist form ("node[1-4,7],gpu[01-02]") into buf for
 * messages: names sharing a prefix and trailing-number width are grouped
 * in order of first appearance, their numbers sorted.  Truncates with "..."
 * when buf is too small.  Returns buf.
 */
const char *dtplan_hostlist_compress(const char (*names)[64], size_t n, char *buf, size_t size);

/*
 * What dtplan reads in Slurm's slurm.conf (lib/site/slurm_conf.c): MUNGE's
 * socket from AuthInfo=socket= (Slurm's auth/munge and cred/munge use it),
 * and each node's NodeAddr= where one is given.  Other keys pass unread.
 * dtplan_slurm_conf_read() follows Include lines as Slurm does (relative
 * paths in the including file's folder, %c the ClusterName; 16 files deep,
 * 256 in all, a cycle refused); dtplan_slurm_conf_parse_string() has no
 * folder and passes them unread.  Both leave s empty on error (fini it).
 */
struct dtplan_slurm_conf {
	char auth_socket[256]; /* "" when AuthInfo names none */
	size_t n_nodes;        /* nodes with a NodeAddr= */
	char (*node_names)[64];
	char (*node_addrs)[64];
};
enum dtplan_err dtplan_slurm_conf_read(const char *path, struct dtplan_slurm_conf *s,
				       struct dtplan_error *err);
enum dtplan_err dtplan_slurm_conf_parse_string(const char *text, const char *source,
					       struct dtplan_slurm_conf *s,
					       struct dtplan_error *err);
/* The NodeAddr of node, NULL when slurm.conf gives it none. */
const char *dtplan_slurm_conf_node_addr(const struct dtplan_slurm_conf *s, const char *node);
void dtplan_slurm_conf_fini(struct dtplan_slurm_conf *s);

/* Per node set settings from the site file. */
struct dtplan_site_nodeset {
	char nodes[256];        /* hostlist expression */
	char gpu_type[32];      /* catalog name or "" */
	int gpus_per_node;      /* 0: from discovery */
	char nvlink_domain[64]; /* multi-node NVLink domain name or "" */
	int line;               /* line in the site file, 0 when not from a file */
};

struct dtplan_site_switch {
	char name[64];
	double oversubscription;   /* 0: not set */
	double uplink_bytes_per_s; /* 0: not set */
	int line;                  /* line in the site file, 0 when not from a file */
};

enum dtplan_mode {
	DTPLAN_MODE_OFF = 0,
	DTPLAN_MODE_AUTO,
	DTPLAN_MODE_STRICT,
};

enum dtplan_policy {
	DTPLAN_POLICY_WARN = 0,
	DTPLAN_POLICY_DENY,
};

/* The fabric service's answer format (FabricFormat=). */
enum dtplan_fabric_answer {
	DTPLAN_FABRIC_ANSWER_BY_TYPE = 0,   /* auto: by its Content-Type */
	DTPLAN_FABRIC_ANSWER_JSON,          /* json: dtplan.fabric/1 */
	DTPLAN_FABRIC_ANSWER_TOPOLOGY_CONF, /* topology.conf: Slurm's text */
};

/* NCCL_IB_HCA in each task (plugstack nccl_ib_hca=). */
enum dtplan_nccl_ib_hca {
	DTPLAN_NCCL_IB_HCA_OFF = 0, /* not set: NCCL picks its NICs, rails and PXN itself */
	DTPLAN_NCCL_IB_HCA_NODE,    /* the NICs of every rail of the node, "=mlx5_0,mlx5_1" */
};

/* Site configuration: dtplan.conf plus plugstack arguments. */
struct dtplan_config {
	/* plugin behaviour (plugstack.conf arguments) */
	enum dtplan_mode default_mode; /* for jobs without --dt-plan */
	enum dtplan_policy policy;
	char site_file[256];
	char topology_file[256];
	/* folder that relative site= and topology= arguments name files in ("":
	 * as given); set it with dtplan_config_set_dir() before the arguments */
	char conf_dir[256];
	char cache_dir[256];    /* cached node hwloc XML folder */
	char json_dir[256];     /* "" = job's submit directory */
	double probe_timeout_s; /* per external wait */
	/* measuring the allocation in the prolog (doc/internals/probe.md) */
	char spool_dir[256];      /* root-owned folder of the prolog's measurement files */
	double probe_budget_s;    /* the whole prolog work, at most */
	int probe_ports[2];       /* the probe's listener ports, first and last */
	int probe_fanout;         /* children per node in the fan-in tree */
	char node_xml[256];       /* hwloc XML of each node, %n its name; "" discover live */
	char probe_interface[32]; /* the training fabric's interface; "" the host names' */
	char munge_socket[256];   /* munged's socket; "" libmunge's default */
	enum dtplan_nccl_ib_hca nccl_ib_hca; /* what tasks get */
	/* fabric */
	double net_bytes_per_s; /* node NIC bandwidth per GPU rail */
	double net_latency_s;
	double nvlink_bytes_per_s; /* 0: from the GPU catalog */
	double nvlink_latency_s;
	char gpu_type[32]; /* default GPU type */
	/* reliability and checkpoint */
	double mtbf_gpu_hours;
	double ckpt_write_bytes_per_s;
	double restart_seconds;
	/* warning thresholds */
	double oversub_threshold;      /* warn above this ratio */
	double bubble_threshold;       /* warn above this bubble fraction */
	double exposed_comm_threshold; /* warn above this fraction of the step */
	double slowdown_threshold;     /* warn or refuse an allocation only when one on fewer
				    * leaves would be faster by more than this fraction */
	double mfu_efficiency;         /* achievable fraction of peak for compute */
	double step_cv;                /* one GPU's compute time per step, sd / mean (StepTimeCV=);
			 * DTPLAN_STEP_CV_UNSET: the records', else the default */
	/* HTTP (probes/http.c): the fabric service and the plans' collector */
	char fabric_url[256];      /* FabricURL: dtplan.fabric/1 JSON or topology.conf; "" none */
	char fabric_cache[256];    /* file holding the last good answer; "" no cache */
	double fabric_cache_ttl_s; /* a cached answer younger than this is used without asking */
	double fabric_timeout_s;   /* bound on one fetch of the fabric, connection included */
	enum dtplan_fabric_answer fabric_format; /* how its answer is read */
	char report_url[256];                    /* ReportURL: where each plan is POSTed; "" none */
	char report_token_file[256];   /* root-only file holding a bearer token; "" none */
	double report_timeout_s;       /* bound on one report, connection included */
	double http_connect_timeout_s; /* bound on connecting (within the two above) */
	double http_max_bytes;         /* largest answer accepted */
	char http_ca_path[256];        /* CA bundle file or hashed folder; "" libcurl's default */
	/* the records of earlier runs (lib/record/recdb.c): an SQLite file; "" the
	 * job's user's $XDG_STATE_HOME/dtplan/records.db (dtplan_recdb_default_path()) */
	char record_db[256];
	/* MTBF=slurm: the per-GPU MTBF from Slurm's accounting, as `dtplan mtbf
	 * --write-cache` left it in mtbf_cache (dtplan_mtbf_cache_apply()); ""
	 * MtbfGpuHours= */
	char mtbf_from[16];
	char mtbf_cache[256];
	size_t n_switches;
	struct dtplan_site_switch *switches; /* owned */
	size_t n_nodesets;
	struct dtplan_site_nodeset *nodesets; /* owned */
};

/* Sets every default (the single place defaults live). */
void dtplan_config_init(struct dtplan_config *c);
/* Frees owned arrays and re-initialises.  NULL allowed. */
void dtplan_config_fini(struct dtplan_config *c);

/* Reads a dtplan.conf site file (Key=Value lines, SwitchName=/NodeName=
 * lines).  Unknown keys and bad values are errors with file and line. */
enum dtplan_err dtplan_config_parse_file(struct dtplan_config *c, const char *path,
					 struct dtplan_error *err);
enum dtplan_err dtplan_config_parse_string(struct dtplan_config *c, const char *text,
					   const char *source_name, struct dtplan_error *err);

/*
 * Sets the folder that relative site= and topology= arguments name files in
 * (doc/spank_dtplan.8, "Configless"): the folder of slurm_conf, Slurm's
 * SLURM_CONF (on a configless node slurmd points it into its configuration
 * cache), else fallback (NULL or "": none, paths stay as given).  A folder
 * longer than the field is not set.  Keeps the rest of c.
 */
void dtplan_config_set_dir(struct dtplan_config *c, const char *slurm_conf, const char *fallback);

/* Applies plugstack.conf arguments (argv of key=value tokens); relative
 * site= and topology= paths are read in c->conf_dir when it is set. */
enum dtplan_err dtplan_config_parse_args(struct dtplan_config *c, int argc, char *const *argv,
					 struct dtplan_error *err);

/* Boolean spellings: yes/no, true/false, on/off, 1/0 (case-insensitive). */
enum dtplan_err dtplan_parse_bool(const char *text, const char *what, bool *out,
				  struct dtplan_error *err);

/* Copies site switch settings (oversubscription, uplink bandwidth) into the
 * tree's switches.  DTPLAN_ERR_NOT_FOUND, naming the site file line, for a
 * switch the tree lacks. */
enum dtplan_err dtplan_config_apply_topology(const struct dtplan_config *c,
					     struct dtplan_topology *t, struct dtplan_error *err);

/* The first NodeName= set of the site file holding hostname, NULL when none.
 * Borrowed from c. */
const struct dtplan_site_nodeset *dtplan_config_nodeset_for(const struct dtplan_config *c,
							    const char *hostname);

/*
 * Describes global setting i (0, 1, ... until it returns false) for
 * summaries: *key receives its site-file name ("" for plugstack-only
 * settings), *arg its plugstack argument name (static strings), value its
 * current value for people ("50.00 GB/s", "warn", "" for an unset path
 * or an unset StepTimeCV=), *is_default whether it equals
 * dtplan_config_init()'s value.  Any output pointer may be NULL.
 */
bool dtplan_config_setting(const struct dtplan_config *c, size_t i, const char **key,
			   const char **arg, char *value, size_t size, bool *is_default);

/* "off", "auto", "strict"; "warn", "deny"; "off", "node" (static strings,
 * "?" when unknown). */
const char *dtplan_mode_name(enum dtplan_mode mode);
const char *dtplan_policy_name(enum dtplan_policy policy);
const char *dtplan_nccl_ib_hca_name(enum dtplan_nccl_ib_hca nccl_ib_hca);
/* "auto", "json" or "topology.conf" (static strings). */
const char *dtplan_fabric_answer_name(enum dtplan_fabric_answer f);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_SITE_H */
