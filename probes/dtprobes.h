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
 * Order: o->xml_path when set; else cache_dir/<hostname>.xml when that file
 * exists; else a live hwloc discovery (source "live").  A live discovery runs
 * in a forked child that exports the topology as XML, bounded by timeout_s:
 * on expiry the child is killed and DTPLAN_ERR_TIMEOUT returned.  The live
 * path honours hwloc's environment (HWLOC_XMLFILE, HWLOC_FSROOT, ...).  On
 * live and cache discoveries, NVML is consulted when libnvidia-ml.so.1 can be
 * loaded (fabric ids of multi-node NVLink domains); its absence is not an
 * error.  o may be NULL (live discovery with defaults).
 *
 * Returns DTPLAN_OK, DTPLAN_ERR_IO (file missing or unreadable, child
 * failed), DTPLAN_ERR_PARSE (not an hwloc XML file; err names the file),
 * DTPLAN_ERR_TIMEOUT or DTPLAN_ERR_NOMEM.
 */
enum dtplan_err dtplan_node_discover(const struct dtplan_discover_opts *o, struct dtplan_node *out,
				     struct dtplan_error *err);

/*
 * Reads an hwloc XML file (v1 or v2) into *out (caller-owned; source "xml").
 * Same errors as dtplan_node_discover().
 */
enum dtplan_err dtplan_node_from_xml(const char *path, struct dtplan_node *out,
				     struct dtplan_error *err);

/*
 * Exports this node's live topology (with all I/O objects) as XML to
 * cache_dir/<hostname>.xml, atomically: written to a temporary file in
 * cache_dir and renamed over the target.  Meant for the prolog.  hostname
 * NULL: gethostname().  Bounded by timeout_s like a live discovery.
 * Returns DTPLAN_OK, DTPLAN_ERR_INVAL (NULL cache_dir, hostname with '/'),
 * DTPLAN_ERR_IO, DTPLAN_ERR_TIMEOUT.
 */
enum dtplan_err dtplan_node_cache_write(const char *cache_dir, const char *hostname,
					double timeout_s, struct dtplan_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DTPROBES_H */
