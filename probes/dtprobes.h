/*
 * dtprobes.h: libdtprobes, what measures the hardware for libdtplan.
 *
 * probes/ is the only part of dtplan that uses hwloc, reads /sys or opens
 * sockets.  Its results are plain libdtplan structs (struct dtplan_node)
 * that the planner reads.  Errors follow libdtplan: an enum dtplan_err
 * return with detail in a caller-provided struct dtplan_error (NULL allowed).
 * Nothing here prints; messages go to libdtplan's log sink.
 */
#ifndef DTPROBES_H
#define DTPROBES_H

#include "dtplan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds a live discovery may take when the caller passes timeout_s <= 0. */
#define DTPLAN_DISCOVER_DEFAULT_TIMEOUT 60.0

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

#ifdef __cplusplus
}
#endif

#endif /* DTPROBES_H */
