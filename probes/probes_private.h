/*
 * probes_private.h: internals shared across libdtprobes files.  Never
 * installed.  Functions here carry the dtplan__ prefix.
 */
#ifndef DTPLAN_PROBES_PRIVATE_H
#define DTPLAN_PROBES_PRIVATE_H

#include "dtprobes.h"

struct hwloc_topology; /* hwloc_topology_t, from <hwloc.h> */

/*
 * Reads a loaded hwloc topology into *n (fully overwritten; source names
 * where the topology came from: "live", "xml", "cache").  The topology is
 * borrowed and left loaded.  Returns DTPLAN_OK or DTPLAN_ERR_NOMEM
 * (probes/node_scan.c).
 */
enum dtplan_err dtplan__node_scan(struct hwloc_topology *t, struct dtplan_node *n,
				  const char *source, struct dtplan_error *err);

/*
 * dtplan_node_from_xml() on text already read (len bytes, NUL-terminated):
 * the shape check, then hwloc in a child bounded by timeout_s (<= 0: the
 * default).  name names the text in messages.  For the fuzzing harness.
 */
enum dtplan_err dtplan__node_from_xml_text(const char *text, size_t len, const char *name,
					   const char *source, double timeout_s,
					   struct dtplan_node *out, struct dtplan_error *err);

/* What a bounded child runs: returns its exit status (0 on success). */
typedef int (*dtplan__child_fn)(void *arg);

/*
 * Runs fn(arg) in a forked child and waits at most timeout_s seconds
 * (polling waitpid with WNOHANG; no signals or alarms in the parent).  On
 * expiry the child is killed (SIGKILL), reaped, and DTPLAN_ERR_TIMEOUT
 * returned; a child that exits non-zero or dies from a signal gives
 * DTPLAN_ERR_IO.  `what` names the work in messages ("hwloc discovery").
 */
enum dtplan_err dtplan__run_bounded(dtplan__child_fn fn, void *arg, double timeout_s,
				    const char *what, struct dtplan_error *err);

/* A bounded child that answers: fd is the write end of a pipe to the parent. */
typedef int (*dtplan__child_out_fn)(void *arg, int fd);

/*
 * dtplan__run_bounded() for a child that answers on a pipe: everything it
 * writes to fd, at most max bytes, is returned NUL-terminated in *out
 * (caller frees; NULL when nothing was written) with its length in *len
 * (NULL allowed).  The deadline covers the output and the exit; a child that
 * writes more than max bytes is killed (DTPLAN_ERR_IO).
 */
enum dtplan_err dtplan__run_bounded_out(dtplan__child_out_fn fn, void *arg, double timeout_s,
					const char *what, size_t max, char **out, size_t *len,
					struct dtplan_error *err);

/*
 * Groups GPUs that share a non-empty fabric id (fabric_ids[i] for GPU i,
 * "" for none) into one domain each, merging the domains found from hwloc
 * distances, and copies the id into the domain's fabric_id.  A merged
 * domain keeps the smallest non-zero bandwidth of its parts.  Domains stay
 * ordered by their first GPU.
 */
#define DTPLAN__FABRIC_ID_MAX 64 /* == sizeof(struct dtplan_node_domain.fabric_id) */
void dtplan__node_apply_fabric_ids(struct dtplan_node *n,
				   const char (*fabric_ids)[DTPLAN__FABRIC_ID_MAX]);

/*
 * Reads NVML fabric information for n's GPUs when libnvidia-ml.so.1 loads
 * (dlopen; never linked) and applies it with dtplan__node_apply_fabric_ids().
 * Silently does nothing (debug log) without NVML or without fabric support.
 */
void dtplan__nvml_annotate(struct dtplan_node *n);

#endif /* DTPLAN_PROBES_PRIVATE_H */
