/*
 * node.c: node discovery with hwloc (live, from an XML file, from a cached
 * XML file) into struct dtplan_node.  The only hwloc user of the tree.
 *
 * The rules follow ../shared/fixtures/hwloc/SOURCES.md:
 *  - I/O type filter KEEP_ALL before loading (else XML imports keep no PCI
 *    or OS devices, and NVSwitches vanish);
 *  - GPUs by PCI vendor and class, BMC VGA devices skipped, OS device names
 *    (nvml, rsmi, cuda, opencl, card) only name them;
 *  - NUMA nodes and PCI relations by walking parent pointers
 *    (hwloc_get_common_ancestor_obj() on I/O objects crashed under 2.9);
 *  - NVLink domains from NVLinkBandwidth/XGMIBandwidth: merge switch ports,
 *    then, only if that worked, transitive closure.
 */
#include "config.h"

#include "dtplan_private.h"
#include "probes_private.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
		dtplan__strlcpy(g->os_name, os->name ? os->name : "", sizeof(g->os_name));
		model = hwloc_obj_get_info_by_name(os, "GPUModel");
	}
	if (model == NULL && pci != NULL)
		model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
	if (model != NULL)
		dtplan__strlcpy(g->model, model, sizeof(g->model));
	else if (pci != NULL)
		snprintf(g->model, sizeof(g->model), "%04x:%04x", pci->attr->pcidev.vendor_id,
			 pci->attr->pcidev.device_id);
	if (pci != NULL)
		format_busid(pci, g->pci_bus_id, sizeof(g->pci_bus_id));
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
	dtplan__strlcpy(nic->name, os->name ? os->name : "", sizeof(nic->name));
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

	for (hwloc_obj_t p = a->parent; p != NULL && hwloc_obj_type_is_io(p->type) &&
					n_up < DTPLAN_ARRAY_SIZE(up);
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

static enum dtplan_err fill_node(hwloc_topology_t t, struct dtplan_node *n, const char *source,
				 struct dtplan_error *err)
{
	struct scan s;
	hwloc_obj_t root = hwloc_get_root_obj(t);
	const char *host = hwloc_obj_get_info_by_name(root, "HostName");
	int cores;

	memset(n, 0, sizeof(*n));
	memset(&s, 0, sizeof(s));
	dtplan__strlcpy(n->source, source, sizeof(n->source));
	if (host != NULL)
		dtplan__strlcpy(n->hostname, host, sizeof(n->hostname));
	cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
	n->cores = cores > 0 ? cores : hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	n->numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	find_gpus(t, n, &s);
	find_nics(t, n, &s);
	assign_nics(n, &s);
	if (n->n_gpus == 0 && !has_pci(t))
		dtplan__strlcpy(n->note, "I/O devices were not exported; GPUs may be missing",
				sizeof(n->note));
	return find_domains(t, n, &s, err);
}

/* Cheap shape check before hwloc sees the text: hwloc 2.9 leaks objects on
 * some parse failures, and "truncated" is a clearer message for the common
 * case of a half-written file. */
static enum dtplan_err check_xml_shape(const char *path, const char *text, size_t len,
				       struct dtplan_error *err)
{
	size_t i = 0, n = len;

	if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && strchr(" \t\r\n", text[i]) != NULL)
		i++;
	if (i >= n || text[i] != '<')
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 1,
				     "not an hwloc XML topology (does not start with '<')");
	while (n > i && strchr(" \t\r\n", text[n - 1]) != NULL)
		n--;
	if (n - i < 11 || memcmp(text + n - 11, "</topology>", 11) != 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				     "not a complete hwloc XML topology (truncated: no closing "
				     "</topology>)");
	return DTPLAN_OK;
}

/*
 * Loads an XML file with every I/O object kept.  The file is read once by
 * dtplan_file_read() (regular files only, within the kind's limit) and hwloc
 * parses that buffer, so that what was checked is what is parsed.
 */
static enum dtplan_err load_xml(const char *path, enum dtplan_file_kind kind,
				hwloc_topology_t *out, struct dtplan_error *err)
{
	hwloc_topology_t t = NULL;
	enum dtplan_err rv;
	char *text = NULL;
	size_t len = 0;

	*out = NULL;
	rv = dtplan_file_read(path, kind, &text, &len, err);
	if (rv != DTPLAN_OK)
		goto out;
	rv = check_xml_shape(path, text, len, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (hwloc_topology_init(&t) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "cannot initialise hwloc: %s",
				   strerror(errno));
		goto out;
	}
	/* The size hwloc takes counts the terminating NUL, as its exports do. */
	if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) != 0 ||
	    hwloc_topology_set_xmlbuffer(t, text, (int)len + 1) != 0 ||
	    hwloc_topology_load(t) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				   "not a valid hwloc XML topology (malformed)");
		goto out;
	}
	*out = t;
	t = NULL;
	rv = DTPLAN_OK;
out:
	if (t != NULL)
		hwloc_topology_destroy(t);
	free(text);
	return rv;
}

static enum dtplan_err node_from_xml_source(const char *path, const char *source,
					    struct dtplan_node *out, struct dtplan_error *err)
{
	hwloc_topology_t t = NULL;
	enum dtplan_err rv, ret;

	/* A file the user or admin names may be a link; the cache and the live
	 * export's temporary file never are. */
	ret = load_xml(path,
		       strcmp(source, "xml") == 0 ? DTPLAN_FILE_NODE_XML : DTPLAN_FILE_CACHE_XML,
		       &t, err);
	if (ret != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	rv = fill_node(t, out, source, err);
out:
	if (t != NULL)
		hwloc_topology_destroy(t);
	return rv;
}

enum dtplan_err dtplan_node_from_xml(const char *path, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	if (path == NULL || path[0] == '\0' || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "dtplan_node_from_xml: no XML path or no output");
	return node_from_xml_source(path, "xml", out, err);
}

/* ------------------------------------------------------------------------
 * Bounded live discovery
 * ---------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum dtplan_err dtplan__run_bounded(dtplan__child_fn fn, void *arg, double timeout_s,
				    const char *what, struct dtplan_error *err)
{
	double deadline = now_s() + timeout_s;
	long pause_ns = 1000000; /* 1 ms, doubling up to 50 ms */
	int status = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: cannot fork: %s", what,
				     strerror(errno));
	if (pid == 0)
		_exit(fn(arg) & 0xff);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		struct timespec ts;

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: waitpid: %s", what,
					     strerror(errno));
		if (now_s() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return dtplan__error(err, DTPLAN_ERR_TIMEOUT, NULL, 0,
					     "%s did not finish within %g s; stopped it", what,
					     timeout_s);
		}
		ts.tv_sec = 0;
		ts.tv_nsec = pause_ns;
		nanosleep(&ts, NULL);
		if (pause_ns < 50000000)
			pause_ns *= 2;
	}
	if (WIFSIGNALED(status))
		return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: killed by signal %d", what,
				     WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s failed (exit status %d)",
				     what, WEXITSTATUS(status));
	return DTPLAN_OK;
}

struct export_arg {
	const char *path;
	const char *fsroot;
};

/* Child side: discover this machine (or what HWLOC_XMLFILE/HWLOC_FSROOT say)
 * and export it to arg->path.  Exit status tells the parent what failed. */
static int export_child(void *argp)
{
	const struct export_arg *arg = argp;
	hwloc_topology_t t;

	if (arg->fsroot != NULL && arg->fsroot[0] != '\0' &&
	    setenv("HWLOC_FSROOT", arg->fsroot, 1) != 0)
		return 2;
	if (hwloc_topology_init(&t) != 0)
		return 3;
	if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) != 0 ||
	    hwloc_topology_load(t) != 0)
		return 4;
	if (hwloc_topology_export_xml(t, arg->path, 0) != 0)
		return 5;
	return 0;
}

static double effective_timeout(double timeout_s)
{
	return timeout_s > 0 ? timeout_s : DTPLAN_DISCOVER_DEFAULT_TIMEOUT;
}

/* Exports the live topology to an existing file path, bounded in time. */
static enum dtplan_err export_live(const char *path, const char *fsroot, double timeout_s,
				   struct dtplan_error *err)
{
	struct export_arg arg = {path, fsroot};

	return dtplan__run_bounded(export_child, &arg, effective_timeout(timeout_s),
				   "hwloc discovery", err);
}

static void default_hostname(const char *given, char *buf, size_t size)
{
	if (given != NULL && given[0] != '\0') {
		dtplan__strlcpy(buf, given, size);
		return;
	}
	if (gethostname(buf, size) != 0)
		buf[0] = '\0';
	buf[size - 1] = '\0';
}

static enum dtplan_err discover_live(const struct dtplan_discover_opts *o, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	char path[4096];
	const char *tmp = getenv("TMPDIR");
	enum dtplan_err rv;
	bool made = false;
	int fd;

	snprintf(path, sizeof(path), "%s/dtplan-node.XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot create temporary file: %s",
				   strerror(errno));
		goto out;
	}
	close(fd);
	made = true;
	rv = export_live(path, o != NULL ? o->fsroot : NULL, o != NULL ? o->timeout_s : 0, err);
	if (rv != DTPLAN_OK)
		goto out;
	rv = node_from_xml_source(path, "live", out, err);
out:
	if (made)
		unlink(path);
	return rv;
}

enum dtplan_err dtplan_node_discover(const struct dtplan_discover_opts *o, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	char host[64], path[4096];
	enum dtplan_err rv;
	bool local = true;

	if (out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "dtplan_node_discover: no output");
	default_hostname(o != NULL ? o->hostname : NULL, host, sizeof(host));
	if (o != NULL && o->xml_path != NULL && o->xml_path[0] != '\0') {
		rv = node_from_xml_source(o->xml_path, "xml", out, err);
		local = false;
	} else if (o != NULL && o->cache_dir != NULL && o->cache_dir[0] != '\0' &&
		   host[0] != '\0' &&
		   snprintf(path, sizeof(path), "%s/%s.xml", o->cache_dir, host) <
			   (int)sizeof(path) &&
		   access(path, R_OK) == 0) {
		rv = node_from_xml_source(path, "cache", out, err);
	} else {
		rv = discover_live(o, out, err);
	}
	if (rv != DTPLAN_OK)
		return rv;
	if (out->hostname[0] == '\0')
		dtplan__strlcpy(out->hostname, host, sizeof(out->hostname));
	if (local)
		dtplan__nvml_annotate(out);
	return DTPLAN_OK;
}

enum dtplan_err dtplan_node_cache_write(const char *cache_dir, const char *hostname,
					double timeout_s, struct dtplan_error *err)
{
	char host[64], tmp[4096], final[4096];
	enum dtplan_err rv;
	bool made = false;
	int fd;

	if (cache_dir == NULL || cache_dir[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0, "no cache directory given");
	default_hostname(hostname, host, sizeof(host));
	if (host[0] == '\0' || strchr(host, '/') != NULL || strcmp(host, "..") == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "invalid host name '%s' for a cache file", host);
	if (snprintf(final, sizeof(final), "%s/%s.xml", cache_dir, host) >= (int)sizeof(final) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.xml.XXXXXX", cache_dir, host) >= (int)sizeof(tmp))
		return dtplan__error(err, DTPLAN_ERR_INVAL, cache_dir, 0,
				     "cache directory path too long");
	/* The folder is the site's (root's): make its last level on first use,
	 * so that a fresh install needs no manual step.  Nodes race here. */
	if (mkdir(cache_dir, 0755) != 0 && errno != EEXIST)
		return dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
				     "cannot create the cache directory: %s", strerror(errno));
	fd = mkstemp(tmp);
	if (fd < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
				   "cannot create a file in the cache directory: %s",
				   strerror(errno));
		goto out;
	}
	fchmod(fd, 0644);
	close(fd);
	made = true;
	rv = export_live(tmp, NULL, timeout_s, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (rename(tmp, final) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, final, 0, "cannot rename %s: %s", tmp,
				   strerror(errno));
		goto out;
	}
	made = false;
	rv = DTPLAN_OK;
out:
	if (made)
		unlink(tmp);
	return rv;
}
