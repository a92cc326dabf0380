/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/node.h: a node's inventory and sets of distinct inventories.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_NODE_H
#define DTPLAN_NODE_H

#include "dtplan/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Node inventory (filled by probes/, read by lib/)
 * ---------------------------------------------------------------------- */

enum dtplan_nic_kind {
	DTPLAN_NIC_UNKNOWN = 0,
	DTPLAN_NIC_INFINIBAND,
	DTPLAN_NIC_ROCE,
	DTPLAN_NIC_ETHERNET,
	DTPLAN_NIC_EFA,
	DTPLAN_NIC_SLINGSHOT,
	DTPLAN_NIC_OMNIPATH,
};

const char *dtplan_nic_kind_name(enum dtplan_nic_kind k);

struct dtplan_node_gpu {
	char vendor[16];     /* "nvidia", "amd", "intel" */
	char model[64];      /* marketing name when known, else "10de:2330" */
	double memory_bytes; /* memory hwloc reports (CUDA, ROCm SMI), 0 unknown */
	char pci_bus_id[16]; /* "0000:18:00.0" */
	char os_name[32];    /* "nvml0", "cuda0", "rsmi0", "card1" or "" */
	int numa;            /* NUMA node os index, -1 unknown */
	int domain;          /* index into dtplan_node.domains */
	int nic;             /* index into dtplan_node.nics of the nearest NIC, -1 none */
};

struct dtplan_node_nic {
	char name[32]; /* "mlx5_0", "hfi1_0", "cxi0", "eth0" */
	enum dtplan_nic_kind kind;
	char pci_bus_id[16];
	int numa;
};

struct dtplan_node_domain {
	int n_gpus;
	int gpus[64];                 /* indexes into dtplan_node.gpus */
	double bandwidth_bytes_per_s; /* per-GPU NVLink/xGMI bandwidth, 0 for a lone GPU */
	char fabric_id[64];           /* multi-node domain id (NVML cluster UUID/clique) or "" */
};

#define DTPLAN_NODE_MAX_GPUS 64
#define DTPLAN_NODE_MAX_NICS 32

struct dtplan_node {
	char hostname[64];
	int n_gpus;
	struct dtplan_node_gpu gpus[DTPLAN_NODE_MAX_GPUS];
	int n_nics;
	struct dtplan_node_nic nics[DTPLAN_NODE_MAX_NICS];
	int n_domains;
	struct dtplan_node_domain domains[DTPLAN_NODE_MAX_GPUS];
	int cores;
	int numa_nodes;
	char source[16]; /* "live", "xml", "cache", "assumed", "site" */
	char note[256];  /* e.g. "I/O devices were not exported" */
};

/*
 * Distinct node inventories (lib/fabric/node_set.c), so that hosts with the same
 * hardware share one record: a job of 16,384 identical nodes keeps one
 * struct dtplan_node, not 16,384 (struct dtplan_cluster's host_inventory;
 * probes/inventory.c's records).  Init with dtplan_node_set_init(), free
 * with dtplan_node_set_fini().
 */
struct dtplan_node_set {
	size_t n, cap;
	struct dtplan_node *nodes; /* owned; n distinct inventories */
	uint64_t *hash;            /* owned; private */
	size_t *slot, n_slots;     /* owned; private hash index */
};

void dtplan_node_set_init(struct dtplan_node_set *s);
void dtplan_node_set_fini(struct dtplan_node_set *s);

/*
 * Index in s->nodes of an inventory with n's hardware (dtplan_node_same_hardware()),
 * copying n in when there is none yet; -1 when out of memory.  O(1) on average.
 * n's hostname, source and note are not compared: the first copy's are kept.
 */
long dtplan_node_set_add(struct dtplan_node_set *s, const struct dtplan_node *n);

/* True when a and b describe the same GPUs, NICs, domains, cores and NUMA
 * nodes (everything but hostname, source and note). */
bool dtplan_node_same_hardware(const struct dtplan_node *a, const struct dtplan_node *b);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_NODE_H */
