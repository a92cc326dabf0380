/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric/fabric.h: the allocation as placement sees it, its links' cost and the
 * placement.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by lib/ files of this area and of the areas above it
 * (tests/check_layers.sh checks).
 */
#ifndef DTPLAN_FABRIC_FABRIC_H
#define DTPLAN_FABRIC_FABRIC_H

#include "dtplan.h"
#include "base/base.h"

/* ------------------------------------------------------------------------
 * Fabric (lib/fabric/fabric.c), its cost (lib/fabric/fabric_cost.c), placement
 * (lib/fabric/placement.c) and warnings (lib/plan/warnings.c)
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
	size_t n_unknown;     /* nodes missing from the tree */
	size_t n_generic;     /* nodes without an inventory the site does not describe */
	size_t n_site;        /* nodes without an inventory, GpuType= in the site file */
	const char *site_gpu; /* the first of those nodes' GpuType= (borrowed), or NULL */
	double net_bw;        /* NIC bandwidth per GPU (bytes/s) */
	bool flat;            /* no topology given */
	bool blocks;          /* the leaves are topology/block blocks */
	enum dtplan_leaf_kind leaf_kind; /* switches, blocks, rings or toruses */
	size_t block_size;               /* the base block's node count (blocks only) */
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
 * one member in every block of `block` GPUs (lib/fabric/fabric_cost.c).
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

#endif /* DTPLAN_FABRIC_FABRIC_H */
