/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_scan.c: a loaded hwloc topology -> struct dtplan_node: GPUs, NICs,
 * the nearest NIC of each GPU, NVLink/xGMI domains.  Only reads the
 * topology; where it comes from (live, an XML file, the cache) is
 * probes/node.c's business.
 *
 * The rules follow ../shared/fixtures/hwloc/SOURCES.md:
 *  - GPUs by PCI vendor and class, BMC VGA devices skipped, OS device names
 *    (nvml, rsmi, cuda, opencl, card) only name them;
 *  - NUMA nodes and PCI relations by walking parent pointers
 *    (hwloc_get_common_ancestor_obj() on I/O objects crashed under 2.9);
 *  - NVLink domains from NVLinkBandwidth/XGMIBandwidth: merge switch ports,
 *    then, only if that worked, transitive closure.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* hwloc objects behind the inventory entries, while the topology lives. */
struct scan {
	hwloc_obj_t gpu[DTPLAN_NODE_MAX_GPUS]; /* PCI device, or OS device without PCI */
	hwloc_obj_t nic[DTPLAN_NODE_MAX_NICS]; /* PCI device, or OS device without PCI */
};

/* ------------------------------------------------------------------------
 * Small helpers on hwloc objects
 * ---------------------------------------------------------------------- */

static bool has_prefix(const char *s, const char *prefix)
{
	return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Length of the valid UTF-8 sequence at s (of printable characters), 0 when
 * there is none: a control character, a stray or overlong byte, a sequence
 * cut short. */
static size_t utf8_char(const unsigned char *s)
{
	if (s[0] < 0x20 || s[0] == 0x7f)
		return 0;
	return dtplan__utf8_len(s);
}

/*
 * Copies a string hwloc read from a file or the system into dst, each byte
 * that is not part of a printable UTF-8 character replaced by '?': the
 * inventory goes into JSON (which takes UTF-8 only) and into logs.
 */
static void copy_text(char *dst, const char *src, size_t size)
{
	unsigned char *p;

	dtplan__strlcpy(dst, src != NULL ? src : "", size);
	for (p = (unsigned char *)dst; *p != '\0';) {
		size_t n = utf8_char(p);

		if (n == 0) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

/* The PCI device an I/O object hangs from (itself for a PCI device). */
static hwloc_obj_t pci_of(hwloc_obj_t o)
{
	for (; o != NULL && hwloc_obj_type_is_io(o->type); o = o->parent)
		if (o->type == HWLOC_OBJ_PCI_DEVICE)
			return o;
	return NULL;
}

/* NUMA node os index local to o, -1 unknown.  Walks parents to the first
 * normal object and reads its nodeset. */
static int numa_of(hwloc_obj_t o)
{
	while (o != NULL && o->nodeset == NULL)
		o = o->parent;
	if (o == NULL || hwloc_bitmap_iszero(o->nodeset))
		return -1;
	return hwloc_bitmap_first(o->nodeset);
}

static void format_busid(hwloc_obj_t pci, char *buf, size_t size)
{
	const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;

	snprintf(buf, size, "%04x:%02x:%02x.%01x", a->domain, a->bus, a->dev, a->func);
}

/* ------------------------------------------------------------------------
 * GPUs
 * ---------------------------------------------------------------------- */

static const char *gpu_vendor_name(unsigned vendor)
{
	switch (vendor) {
	case 0x10de:
		return "nvidia";
	case 0x1002:
		return "amd";
	case 0x8086:
		return "intel";
	default:
		return NULL;
	}
}

/* GPU PCI devices: vendor NVIDIA/AMD/Intel, display (0300 VGA, 0302 3D,
 * 0380 other) or processing accelerator (12xx, MI300A) class; BMC VGA
 * (ASPEED 1a03, Matrox 102b, ATI ES1000 1002:515e) excluded. */
static bool is_gpu_pcidev(hwloc_obj_t pci)
{
	const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;
	unsigned cls = a->class_id;

	if (gpu_vendor_name(a->vendor_id) == NULL)
		return false;
	if (a->vendor_id == 0x1002 && a->device_id == 0x515e)
		return false;
	return cls == 0x0300 || cls == 0x0302 || cls == 0x0380 || (cls >> 8) == 0x12;
}

/* OS device name prefixes of GPUs, best first. */
static const char *const gpu_os_prefixes[] = {"nvml", "rsmi", "cuda", "opencl", "card"};

static int gpu_os_rank(const char *name)
{
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(gpu_os_prefixes); i++)
		if (has_prefix(name, gpu_os_prefixes[i]))
			return (int)i;
	return -1;
}

/* The best-named GPU OS device under a PCI device, NULL when none. */
static hwloc_obj_t gpu_osdev(hwloc_obj_t pci)
{
	hwloc_obj_t best = NULL;
	int best_rank = -1;

	for (hwloc_obj_t c = pci->io_first_child; c != NULL; c = c->next_sibling) {
		int r;

		if (c->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		r = gpu_os_rank(c->name);
		if (r >= 0 && (best == NULL || r < best_rank)) {
			best = c;
			best_rank = r;
		}
	}
	return best;
}

/* Memory hwloc's GPU backends report, in KiB: CUDA's global memory (on the
 * cudaN device), ROCm SMI's VRAM (on rsmiN). */
static double info_memory(hwloc_obj_t o)
{
	static const char *const names[] = {"CUDAGlobalMemorySize", "RSMIVRAMSize"};

	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(names); i++) {
		const char *v = hwloc_obj_get_info_by_name(o, names[i]);
		char *end;
		unsigned long long kib;

		if (v == NULL)
			continue;
		errno = 0;
		kib = strtoull(v, &end, 10);
		/* up to 1 PiB: anything larger is a broken file */
		if (errno == 0 && end != v && *end == '\0' && kib > 0 && kib <= (1ULL << 40))
			return (double)kib * 1024.0;
	}
	return 0;
}

/* A GPU's memory from any OS device under its PCI device, or its own. */
static double gpu_memory(hwloc_obj_t pci, hwloc_obj_t os)
{
	double m = 0;

	if (pci == NULL)
		return os != NULL ? info_memory(os) : 0;
	for (hwloc_obj_t c = pci->io_first_child; c != NULL && m == 0; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE)
			m = info_memory(c);
	return m;
}

static void add_gpu(struct dtplan_node *n, struct scan *s, hwloc_obj_t pci, hwloc_obj_t os,
		    const char *vendor)
{
	struct dtplan_node_gpu *g;
	const char *model = NULL;

	if (n->n_gpus >= DTPLAN_NODE_MAX_GPUS) {
		dtplan__log(DTPLAN_LOG_WARNING, "node: more than %d GPUs, ignoring the rest",
			    DTPLAN_NODE_MAX_GPUS);
		return;
	}
	g = &n->gpus[n->n_gpus];
	s->gpu[n->n_gpus] = pci != NULL ? pci : os;
	n->n_gpus++;
	dtplan__strlcpy(g->vendor, vendor, sizeof(g->vendor));
	if (os != NULL) {
		copy_text(g->os_name, os->name, sizeof(g->os_name));
		model = hwloc_obj_get_info_by_name(os, "GPUModel");
	}
	if (model == NULL && pci != NULL)
		model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
	if (model != NULL)
		copy_text(g->model, model, sizeof(g->model));
	else if (pci != NULL)
		snprintf(g->model, sizeof(g->model), "%04x:%04x", pci->attr->pcidev.vendor_id,
			 pci->attr->pcidev.device_id);
	if (pci != NULL)
		format_busid(pci, g->pci_bus_id, sizeof(g->pci_bus_id));
	g->memory_bytes = gpu_memory(pci, os);
	g->numa = numa_of(pci != NULL ? pci : os);
	g->domain = -1;
	g->nic = -1;
}

static void find_gpus(hwloc_topology_t t, struct dtplan_node *n, struct scan *s)
{
	hwloc_obj_t o = NULL;

	while ((o = hwloc_get_next_pcidev(t, o)) != NULL)
		if (is_gpu_pcidev(o))
			add_gpu(n, s, o, gpu_osdev(o), gpu_vendor_name(o->attr->pcidev.vendor_id));

	/* GPU OS devices without a PCI device above them (exports where the PCI
	 * tree was filtered out): nvml and rsmi name each GPU exactly once. */
	o = NULL;
	while ((o = hwloc_get_next_osdev(t, o)) != NULL) {
		if (pci_of(o) != NULL)
			continue;
		if (has_prefix(o->name, "nvml"))
			add_gpu(n, s, NULL, o, "nvidia");
		else if (has_prefix(o->name, "rsmi"))
			add_gpu(n, s, NULL, o, "amd");
	}
}

/* ------------------------------------------------------------------------
 * NICs
 * ---------------------------------------------------------------------- */

/* InfiniBand or RoCE for an OpenFabrics device: RoCE ports report LID 0. */
static enum dtplan_nic_kind ib_or_roce(hwloc_obj_t os, hwloc_obj_t pci)
{
	bool any_lid = false, nonzero = false;

	for (unsigned i = 0; i < os->infos_count; i++) {
		unsigned port;
		char tail[8];

		if (sscanf(os->infos[i].name, "Port%uLI%7s", &port, tail) != 2 ||
		    strcmp(tail, "D") != 0)
			continue;
		any_lid = true;
		if (strtoul(os->infos[i].value, NULL, 0) != 0)
			nonzero = true;
	}
	if (any_lid)
		return nonzero ? DTPLAN_NIC_INFINIBAND : DTPLAN_NIC_ROCE;
	if (pci != NULL && pci->attr->pcidev.class_id == 0x0200)
		return DTPLAN_NIC_ROCE;
	return DTPLAN_NIC_INFINIBAND;
}

static enum dtplan_nic_kind nic_kind(hwloc_obj_t os, hwloc_obj_t pci)
{
	unsigned vendor = pci != NULL ? pci->attr->pcidev.vendor_id : 0;
	unsigned cls = pci != NULL ? pci->attr->pcidev.class_id : 0;
	bool ofed = os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;

	if (vendor == 0x17db || has_prefix(os->name, "hsn") || has_prefix(os->name, "hsi") ||
	    has_prefix(os->name, "cxi"))
		return DTPLAN_NIC_SLINGSHOT;
	if (has_prefix(os->name, "hfi1") || cls == 0x0208)
		return DTPLAN_NIC_OMNIPATH;
	if (has_prefix(os->name, "efa") || (vendor == 0x1d0f && ofed))
		return DTPLAN_NIC_EFA;
	if (ofed)
		return ib_or_roce(os, pci);
	if (cls == 0x0207)
		return DTPLAN_NIC_INFINIBAND;
	return DTPLAN_NIC_ETHERNET;
}

static bool nic_seen(const struct dtplan_node *n, const struct scan *s, hwloc_obj_t key)
{
	for (int i = 0; i < n->n_nics; i++)
		if (s->nic[i] == key)
			return true;
	return false;
}

static void add_nic(struct dtplan_node *n, struct scan *s, hwloc_obj_t os)
{
	hwloc_obj_t pci = pci_of(os);
	hwloc_obj_t key = pci != NULL ? pci : os;
	struct dtplan_node_nic *nic;

	if (nic_seen(n, s, key))
		return;
	if (n->n_nics >= DTPLAN_NODE_MAX_NICS) {
		dtplan__log(DTPLAN_LOG_WARNING, "node: more than %d NICs, ignoring %s",
			    DTPLAN_NODE_MAX_NICS, os->name ? os->name : "?");
		return;
	}
	nic = &n->nics[n->n_nics];
	s->nic[n->n_nics] = key;
	n->n_nics++;
	copy_text(nic->name, os->name, sizeof(nic->name));
	nic->kind = nic_kind(os, pci);
	if (pci != NULL)
		format_busid(pci, nic->pci_bus_id, sizeof(nic->pci_bus_id));
	nic->numa = numa_of(key);
}

/* OpenFabrics devices first (one per adapter); then network interfaces of
 * PCI adapters that have none (Ethernet, Slingshot). */
static void find_nics(hwloc_topology_t t, struct dtplan_node *n, struct scan *s)
{
	hwloc_obj_t o = NULL;

	while ((o = hwloc_get_next_osdev(t, o)) != NULL)
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && o->name != NULL)
			add_nic(n, s, o);
	o = NULL;
	while ((o = hwloc_get_next_osdev(t, o)) != NULL)
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->name != NULL &&
		    pci_of(o) != NULL)
			add_nic(n, s, o);
}

/* ------------------------------------------------------------------------
 * Nearest NIC per GPU
 * ---------------------------------------------------------------------- */

enum { NEAR_NONE = 0, NEAR_NUMA, NEAR_HOST_BRIDGE, NEAR_PCIE_SWITCH };

/* How close two I/O objects are, by walking parent pointers. */
static int closeness(hwloc_obj_t a, hwloc_obj_t b, int numa_a, int numa_b)
{
	hwloc_obj_t up[64];
	size_t n_up = 0;

	for (hwloc_obj_t p = a->parent;
	     p != NULL && hwloc_obj_type_is_io(p->type) && n_up < DTPLAN_ARRAY_SIZE(up);
	     p = p->parent)
		up[n_up++] = p;
	for (hwloc_obj_t p = b->parent; p != NULL && hwloc_obj_type_is_io(p->type); p = p->parent) {
		for (size_t i = 0; i < n_up; i++) {
			if (up[i] != p)
				continue;
			if (p->type == HWLOC_OBJ_BRIDGE &&
			    p->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
				return NEAR_HOST_BRIDGE;
			return NEAR_PCIE_SWITCH;
		}
	}
	if (numa_a >= 0 && numa_a == numa_b)
		return NEAR_NUMA;
	return NEAR_NONE;
}

/* Fabric NICs (not plain Ethernet) when there are any, else all.  For each
 * GPU in order, the closest NIC; among equally close ones the least used
 * so far, so that GPUs spread over rails. */
static void assign_nics(struct dtplan_node *n, const struct scan *s)
{
	int used[DTPLAN_NODE_MAX_NICS] = {0};
	bool fabric = false;

	for (int k = 0; k < n->n_nics; k++)
		if (n->nics[k].kind != DTPLAN_NIC_ETHERNET)
			fabric = true;
	for (int i = 0; i < n->n_gpus; i++) {
		int best = -1, best_score = NEAR_NONE;

		for (int k = 0; k < n->n_nics; k++) {
			int score;

			if (fabric && n->nics[k].kind == DTPLAN_NIC_ETHERNET)
				continue;
			score = closeness(s->gpu[i], s->nic[k], n->gpus[i].numa, n->nics[k].numa);
			if (score == NEAR_NONE)
				continue;
			if (score > best_score || (score == best_score && used[k] < used[best])) {
				best = k;
				best_score = score;
			}
		}
		n->gpus[i].nic = best;
		if (best >= 0)
			used[best]++;
	}
}

/* ------------------------------------------------------------------------
 * NVLink / xGMI domains
 * ---------------------------------------------------------------------- */

static int uf_find(int *parent, int x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

static void uf_union(int *parent, int a, int b)
{
	a = uf_find(parent, a);
	b = uf_find(parent, b);
	if (a < b)
		parent[b] = a;
	else if (b < a)
		parent[a] = b;
}

static int gpu_index_of(const struct dtplan_node *n, const struct scan *s, hwloc_obj_t o)
{
	hwloc_obj_t pci = pci_of(o);

	for (int i = 0; i < n->n_gpus; i++)
		if (s->gpu[i] == o || (pci != NULL && s->gpu[i] == pci))
			return i;
	return -1;
}

/* Builds domains from GPU connectivity: parent[] has n_objs distance
 * objects followed by one entry per GPU. */
static void domains_from_groups(struct dtplan_node *n, int *parent, int n_objs, const double *bw)
{
	int root_domain[DTPLAN_NODE_MAX_GPUS];

	n->n_domains = 0;
	for (int i = 0; i < n->n_gpus; i++) {
		int r = uf_find(parent, n_objs + i), d = -1;

		for (int j = 0; j < i; j++)
			if (uf_find(parent, n_objs + j) == r)
				d = root_domain[j];
		if (d < 0) {
			d = n->n_domains++;
			memset(&n->domains[d], 0, sizeof(n->domains[d]));
			n->domains[d].bandwidth_bytes_per_s = bw[i];
		} else if (bw[i] < n->domains[d].bandwidth_bytes_per_s) {
			n->domains[d].bandwidth_bytes_per_s = bw[i];
		}
		root_domain[i] = d;
		n->gpus[i].domain = d;
		n->domains[d].gpus[n->domains[d].n_gpus++] = i;
	}
	for (int d = 0; d < n->n_domains; d++)
		if (n->domains[d].n_gpus == 1)
			n->domains[d].bandwidth_bytes_per_s = 0;
}

static struct hwloc_distances_s *get_link_matrix(hwloc_topology_t t, const char **name)
{
	static const char *const names[] = {"NVLinkBandwidth", "XGMIBandwidth"};

	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(names); i++) {
		struct hwloc_distances_s *d = NULL;
		unsigned nr = 1;

		if (hwloc_distances_get_by_name(t, names[i], &nr, &d, 0) == 0 && nr >= 1 &&
		    d != NULL) {
			*name = names[i];
			return d;
		}
	}
	return NULL;
}

static enum dtplan_err find_domains(hwloc_topology_t t, struct dtplan_node *n, const struct scan *s,
				    struct dtplan_error *err)
{
	struct hwloc_distances_s *d;
	const char *name = NULL;
	double bw[DTPLAN_NODE_MAX_GPUS] = {0};
	int *parent = NULL;
	int n_objs = 0;
	enum dtplan_err rv;

	d = get_link_matrix(t, &name);
	if (d != NULL) {
		enum hwloc_distances_transform_e merge =
			HWLOC_DISTANCES_TRANSFORM_MERGE_SWITCH_PORTS;
		enum hwloc_distances_transform_e closure =
			HWLOC_DISTANCES_TRANSFORM_TRANSITIVE_CLOSURE;
		bool merged = hwloc_distances_transform(t, d, merge, NULL, 0) == 0;

		/* Per-GPU bandwidth before the closure fills GPU-GPU entries: the
		 * (merged) switch links, or the sum of direct links; MB/s. */
		for (unsigned a = 0; a < d->nbobjs; a++) {
			int g = gpu_index_of(n, s, d->objs[a]);

			for (unsigned b = 0; g >= 0 && b < d->nbobjs; b++)
				if (a != b)
					bw[g] += (double)d->values[a * d->nbobjs + b] * 1e6;
		}
		/* On a matrix without switches the closure would zero every link. */
		if (merged && hwloc_distances_transform(t, d, closure, NULL, 0) != 0)
			dtplan__log(DTPLAN_LOG_DEBUG, "node: %s: transitive closure failed", name);
		n_objs = (int)d->nbobjs;
	}
	parent = malloc(sizeof(*parent) * (size_t)(n_objs + n->n_gpus + 1));
	if (parent == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, NULL, 0, "out of memory");
		goto out;
	}
	for (int i = 0; i < n_objs + n->n_gpus; i++)
		parent[i] = i;
	for (int a = 0; a < n_objs; a++) {
		int g = gpu_index_of(n, s, d->objs[a]);

		if (g >= 0)
			uf_union(parent, a, n_objs + g);
		for (int b = 0; b < n_objs; b++)
			if (a != b && d->values[(unsigned)a * d->nbobjs + (unsigned)b] > 0)
				uf_union(parent, a, b);
	}
	domains_from_groups(n, parent, n_objs, bw);
	rv = DTPLAN_OK;
out:
	free(parent);
	if (d != NULL)
		hwloc_distances_release(t, d);
	return rv;
}

/* ------------------------------------------------------------------------
 * Topology -> inventory
 * ---------------------------------------------------------------------- */

static bool has_pci(hwloc_topology_t t)
{
	return hwloc_get_next_pcidev(t, NULL) != NULL;
}

enum dtplan_err dtprobe__node_scan(hwloc_topology_t t, struct dtplan_node *n, const char *source,
				   struct dtplan_error *err)
{
	struct scan s;
	hwloc_obj_t root = hwloc_get_root_obj(t);
	const char *host = hwloc_obj_get_info_by_name(root, "HostName");
	int cores, numa;

	memset(n, 0, sizeof(*n));
	memset(&s, 0, sizeof(s));
	dtplan__strlcpy(n->source, source, sizeof(n->source));
	if (host != NULL)
		copy_text(n->hostname, host, sizeof(n->hostname));
	/* hwloc counts -1 for a type found at several depths (a PU inside a
	 * PU in a hand-made XML) and 0 for one never found: then the PUs of
	 * the machine's cpuset, else 0 for unknown. */
	cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
	if (cores <= 0)
		cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	if (cores <= 0)
		cores = hwloc_bitmap_weight(hwloc_topology_get_topology_cpuset(t));
	n->cores = cores > 0 ? cores : 0;
	numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	n->numa_nodes = numa > 0 ? numa : 0;
	find_gpus(t, n, &s);
	find_nics(t, n, &s);
	assign_nics(n, &s);
	if (n->n_gpus == 0 && !has_pci(t))
		dtplan__strlcpy(n->note, "I/O devices were not exported; GPUs may be missing",
				sizeof(n->note));
	return find_domains(t, n, &s, err);
}
