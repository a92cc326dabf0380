/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probes_private.h: internals shared across libdtprobes files.  Never
 * installed.  Functions here carry the dtprobe__ prefix; libdtplan's
 * internals keep dtplan__ and the plugin's dtspank__.
 */
#ifndef DTPLAN_PROBES_PRIVATE_H
#define DTPLAN_PROBES_PRIVATE_H

#include "dtprobes.h"

#include <sys/socket.h>
#include <sys/types.h>

struct hwloc_topology; /* hwloc_topology_t, from <hwloc.h> */

/*
 * Reads a loaded hwloc topology into *n (fully overwritten; source names
 * where the topology came from: "live", "xml", "cache").  The topology is
 * borrowed and left loaded.  Returns DTPLAN_OK or DTPLAN_ERR_NOMEM
 * (probes/node_scan.c).
 */
enum dtplan_err dtprobe__node_scan(struct hwloc_topology *t, struct dtplan_node *n,
				   const char *source, struct dtplan_error *err);

/*
 * dtplan_node_from_xml() on text already read (len bytes, NUL-terminated):
 * the shape check, then hwloc in a child bounded by timeout_s (<= 0: the
 * default).  name names the text in messages.  For the fuzzing harness.
 */
enum dtplan_err dtprobe__node_from_xml_text(const char *text, size_t len, const char *name,
					    const char *source, double timeout_s,
					    struct dtplan_node *out, struct dtplan_error *err);

/* What a bounded child runs: returns its exit status (0 on success). */
typedef int (*dtprobe__child_fn)(void *arg);

/*
 * Runs fn(arg) in a forked child and waits at most timeout_s seconds
 * (polling waitpid with WNOHANG; no signals or alarms in the parent).  On
 * expiry the child is killed (SIGKILL), reaped, and DTPLAN_ERR_TIMEOUT
 * returned; a child that exits non-zero or dies from a signal gives
 * DTPLAN_ERR_IO.  `what` names the work in messages ("hwloc discovery").
 */
enum dtplan_err dtprobe__run_bounded(dtprobe__child_fn fn, void *arg, double timeout_s,
				     const char *what, struct dtplan_error *err);

/* A bounded child that answers: fd is the write end of a pipe to the parent. */
typedef int (*dtprobe__child_out_fn)(void *arg, int fd);

/*
 * dtprobe__run_bounded() for a child that answers on a pipe: everything it
 * writes to fd, at most max bytes, is returned NUL-terminated in *out
 * (caller frees; NULL when nothing was written) with its length in *len
 * (NULL allowed).  The deadline covers the output and the exit; a child that
 * writes more than max bytes is killed (DTPLAN_ERR_IO).
 */
enum dtplan_err dtprobe__run_bounded_out(dtprobe__child_out_fn fn, void *arg, double timeout_s,
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
void dtprobe__node_apply_fabric_ids(struct dtplan_node *n,
				    const char (*fabric_ids)[DTPLAN__FABRIC_ID_MAX]);

/*
 * Reads NVML fabric information for n's GPUs when libnvidia-ml.so.1 loads
 * (dlopen; never linked) and applies it with dtprobe__node_apply_fabric_ids().
 * Silently does nothing (debug log) without NVML or without fabric support.
 */
void dtprobe__nvml_annotate(struct dtplan_node *n);

/* ------------------------------------------------------------------------
 * Sockets (probes/net.c)
 * ---------------------------------------------------------------------- */

/* Listener ports tried from the range, starting where the job's seed points. */
#define DTPLAN__PORT_TRIES 4

/* What a received message must be: this job and session, a sender among
 * the nodes, a credential of uid decoded by auth (borrowed). */
struct dtprobe__peer_rules {
	uint32_t job_id, session;
	size_t n_nodes;
	uid_t uid;
	struct dtplan_auth *auth;
};

/* Milliseconds from now to deadline for poll() (0 when passed). */
int dtprobe__poll_ms(double deadline);

/* TCP_NODELAY, and a send buffer of sndbuf bytes when > 0. */
void dtprobe__sock_tune(int fd, int sndbuf);

/* Candidate k of the port range for a seed (the job's). */
uint16_t dtprobe__port_candidate(uint16_t lo, uint16_t hi, uint32_t seed, unsigned k);

/*
 * A non-blocking listener: on `at` (tests), else on every address at the
 * first free port among DTPLAN__PORT_TRIES candidates of lo-hi.  Returns
 * the fd and *port, or -1 with err.
 */
int dtprobe__listen(const struct sockaddr_storage *at, uint16_t lo, uint16_t hi, uint32_t seed,
		    uint16_t *port, struct dtplan_error *err);

/* A non-blocking connect: the fd (connecting), or -1 with errno. */
int dtprobe__connect_start(const struct sockaddr_storage *a);
/* 0 once connected, else the errno of the failed connect. */
int dtprobe__connect_done(int fd);
/* Connects by deadline: a non-blocking fd, or -1 with errno. */
int dtprobe__connect(const struct sockaddr_storage *a, double deadline);

/* All of buf by deadline (non-blocking fd): 0, or -1 with errno (ETIMEDOUT,
 * ECONNRESET when the peer closed first). */
int dtprobe__write_all(int fd, const void *buf, size_t len, double deadline);
int dtprobe__read_all(int fd, void *buf, size_t len, double deadline);

/* host's address (IPv4 preferred) with port. */
enum dtplan_err dtprobe__resolve(const char *host, uint16_t port, struct sockaddr_storage *out,
				 struct dtplan_error *err);
void dtprobe__addr_set_port(struct sockaddr_storage *a, uint16_t port);
uint16_t dtprobe__addr_port(const struct sockaddr_storage *a);
void dtprobe__addr_to_wire(const struct sockaddr_storage *a, uint16_t port,
			   struct dtplan_wire_addr *w);
bool dtprobe__wire_to_addr(const struct dtplan_wire_addr *w, struct sockaddr_storage *a);
/* "10.213.1.1:29003" */
const char *dtprobe__addr_text(const struct sockaddr_storage *a, char *buf, size_t size);
/* The first IPv4 (else global IPv6) address of interface ifname. */
enum dtplan_err dtprobe__iface_addr(const char *ifname, struct dtplan_wire_addr *w,
				    struct dtplan_error *err);

/* Seals body under h, asks auth for the credential and sends the frame. */
enum dtplan_err dtprobe__msg_send(int fd, struct dtplan_auth *auth,
				  const struct dtplan_wire_header *h, const void *body, size_t len,
				  double deadline, struct dtplan_error *err);

/*
 * The listener speaks first (issue 26).  On every connection it accepts, a
 * node sends a join naming itself (r's job and session, sender self, the
 * job's node count) and its listener's port; the node that connected sends
 * nothing, and no credential, until that greeting passed every check of a
 * message (dtprobe__msg_check_header() and _cred(): a credential of r->uid)
 * and dtprobe__hello_check(): a join of round 0 from the node it meant to
 * reach, counting the job's nodes and naming the port it dialled.  A
 * process that holds a probe port cannot make the credential; one that
 * passes a real node's greeting on from another port names that port.
 */
enum dtplan_err dtprobe__hello_send(int fd, const struct dtprobe__peer_rules *r, uint32_t self,
				    uint16_t port, double deadline, struct dtplan_error *err);
/* DTPLAN_ERR_POLICY with the reason when the greeting (a checked message:
 * h and its body) is not node's listener at port. */
enum dtplan_err dtprobe__hello_check(const struct dtprobe__peer_rules *r,
				     const struct dtplan_wire_header *h, const uint8_t *body,
				     uint32_t node, uint16_t port, struct dtplan_error *err);

/* The checks of a received message, in the order a receiver can make
 * them: the header's job, session and sender (before reading more), then
 * the credential's uid and seal fields (before reading, and allocating,
 * the body; the seal is kept for the body's digest).  DTPLAN_ERR_POLICY
 * with the reason. */
enum dtplan_err dtprobe__msg_check_header(const struct dtprobe__peer_rules *r,
					  const struct dtplan_wire_header *h,
					  struct dtplan_error *err);
enum dtplan_err dtprobe__msg_check_cred(const struct dtprobe__peer_rules *r,
					const struct dtplan_wire_header *h, const char *cred,
					uint8_t seal[DTPLAN_WIRE_SEAL_LEN],
					struct dtplan_error *err);

/* Reads and checks one whole message by deadline (blocking style on a
 * non-blocking fd).  Caller frees *body. */
enum dtplan_err dtprobe__msg_recv(int fd, const struct dtprobe__peer_rules *r, double deadline,
				  struct dtplan_wire_header *h, uint8_t **body,
				  struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Link probes (probes/links.c)
 * ---------------------------------------------------------------------- */

/* First byte of a ping frame: echo it, or the pings are over (bulk follows). */
#define DTPLAN__PING 'P'
#define DTPLAN__PINGS_END 'E'

/* When a pair does what in its round, from the round's start t0: pings from
 * t0, the bulk transfer from t0 + ping window (every pair at once, so that
 * no ping waits behind another pair's bulk), the peer's report once the
 * bulk time and a drain allowance are over, the round's end. */
struct dtprobe__slot {
	double t0, bulk_at, report_at, end;
};

/* The slot of round r (1-based) of go, starting at t_rounds. */
void dtprobe__slot_of(const struct dtplan_wire_go *go, double t_rounds, uint32_t r,
		      struct dtprobe__slot *s);

/*
 * The prober's side of one pair in one round: connect to the peer at addr,
 * send the probe message, ping (go->ping_count round trips until the bulk
 * starts), send from slot->bulk_at for go->bulk_us or go->bulk_bytes,
 * half-close and read the peer's report, all by slot->end.  Fills *out
 * (flags without DTPLAN_LINK_OK when the peer did not report).  Returns
 * DTPLAN_OK when the pair completed.
 */
enum dtplan_err dtprobe__link_probe(const struct dtprobe__peer_rules *r, uint32_t self,
				    uint32_t peer, uint32_t round, uint8_t kind,
				    const struct sockaddr_storage *addr,
				    const struct dtplan_wire_go *go,
				    const struct dtprobe__slot *slot,
				    struct dtplan_link_result *out, struct dtplan_error *err);

/* The peer's side, fed by the engine's event loop once the probe message
 * is in. */
struct dtprobe__link_srv;
struct dtprobe__link_srv *dtprobe__link_srv_create(const struct dtplan_wire_probe *p,
						   uint32_t round);
/* Reads what fd has: 0 more to come, 1 done (the report is sent), -1 failed
 * (err says why). */
int dtprobe__link_srv_step(struct dtprobe__link_srv *s, int fd, const struct dtprobe__peer_rules *r,
			   uint32_t self, double deadline, struct dtplan_error *err);
/* The report time came before the prober's end: reports what arrived.
 * 1 sent, -1 failed. */
int dtprobe__link_srv_finish(struct dtprobe__link_srv *s, int fd,
			     const struct dtprobe__peer_rules *r, uint32_t self, double deadline,
			     struct dtplan_error *err);
void dtprobe__link_srv_destroy(struct dtprobe__link_srv *s);

#endif /* DTPLAN_PROBES_PRIVATE_H */
