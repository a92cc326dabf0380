/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rendezvous_int.h: what the probe engine's files share, and only they
 * include (doc/internals/probe.md).
 *
 * One node's part in measuring the allocation is one struct engine, driven
 * by one thread.  Its files, each using only the ones before it:
 *
 *   rendezvous_conn.c  connections: accept and greet, read a checked
 *                      message, frame headers, the join
 *   rendezvous_tree.c  the fan-in tree: what children send (joins,
 *                      inventories, results, a prober's probe), and what
 *                      this node sends up (inventories, results)
 *   rendezvous_lead.c  the leader: the schedule, the go messages down, the
 *                      notes and the measurement handed to the analysis
 *   rendezvous_up.c    the uplink: connecting to the parent, its greeting,
 *                      falling back to the parent's parent, the go it sends
 *   rendezvous.c       the driver: discovery, the poll set, deadlines, the
 *                      rounds and dtplan_probe_run()
 *
 * Each field of struct engine says which file sets it and which change it;
 * every file may read every field.
 */
#ifndef DTPLAN_PROBES_RENDEZVOUS_INT_H
#define DTPLAN_PROBES_RENDEZVOUS_INT_H

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * The engine's timing, named once (doc/internals/probe.md, "A run, step by
 * step"; B is the budget, probe_budget=; a level is one step down the
 * fan-in tree).  Only these names are used in the code.
 */

/* Connections (step 3, "Who speaks first") */
#define RDV_FIRST_MSG_S 1.0     /* a new connection's first message must come by then */
#define RDV_MSG_S 2.0           /* a message, once begun, must end by then (and a send) */
#define RDV_CONNECT_S 0.2       /* a connect to the parent */
#define RDV_ACK_S 0.5           /* the parent's greeting; sending a greeting or a join */
#define RDV_RETRY_S 0.02        /* after the last port candidate, before the first again */
#define RDV_RESOLVE_RETRY_S 0.1 /* after a parent's name did not resolve */

/* Join (step 3): the parent's parent stands in after min(1 s, 0.2 B), 0.3 s
 * for each further ancestor */
#define RDV_FALLBACK_S 1.0
#define RDV_FALLBACK_FRAC 0.2
#define RDV_FALLBACK_NEXT_S 0.3

/* Inventories up (step 4): 0.45 B for the leader, 0.04 B less per level,
 * at least 0.2 B */
#define RDV_INV_FRAC 0.45
#define RDV_INV_LEVEL_FRAC 0.04
#define RDV_INV_MIN_FRAC 0.2

/* Schedule down (step 5): the leader alone after min(1.5 s, 0.3 B); rounds
 * start 30 ms + 10 ms per level after receipt */
#define RDV_ALONE_FRAC 0.3
#define RDV_ALONE_MAX_S 1.5
#define RDV_GO_DELAY_S 0.03
#define RDV_GO_DELAY_LEVEL_S 0.01

/* The rounds' timing (steps 5 and 6): a slot is shrunk to fit what the
 * budget leaves, and below 150 ms there are no link probes; the pings take
 * at most a quarter of a slot; the bulk leaves room for the drain allowance
 * (probes/links.c's DRAIN_S) and 50 ms for the report */
#define RDV_MIN_SLOT_S 0.15
#define RDV_PING_SLOT_FRAC 0.25
#define RDV_DRAIN_S 0.06
#define RDV_REPORT_S 0.05

/* Results up (step 7): the rounds' end plus 50 ms + 30 ms per level below
 * the node; the leader 50 ms more */
#define RDV_RES_MARGIN_S 0.05
#define RDV_RES_MARGIN_LEVEL_S 0.03
#define RDV_RES_LEADER_EXTRA_S 0.05

/* The file (step 8): kept at the end of the budget for the leader's file */
#define RDV_WRITE_RESERVE_S 0.2

/* The event loop wakes at least this often: progress() checks its own clocks */
#define RDV_TICK_S 0.05

/* Connections beyond the fan-out: adopted children, probes, strays */
#define RDV_EXTRA_CONNS 48

enum conn_kind { C_FREE = 0, C_NEW, C_CHILD, C_PROBE };

/* A connection and the message being read on it.  Owned by the engine's
 * conns[] (or its uplink); opened by dtprobe__rdv_accept_all() (or
 * rendezvous_up.c), closed by dtprobe__rdv_conn_close(). */
struct conn {
	int fd;
	enum conn_kind kind; /* C_NEW -> C_CHILD or C_PROBE: rendezvous_tree.c */
	uint32_t node;       /* once joined (C_CHILD) or probing (C_PROBE) */
	char where[64];
	double idle_deadline; /* C_NEW: the first message by then; C_PROBE: the report */
	double round_end;     /* C_PROBE: the round's end */
	double msg_deadline;  /* a begun message by then; 0: none begun */
	/* the message being read: dtprobe__rdv_conn_read() */
	uint8_t head[DTPLAN_WIRE_HEADER_LEN];
	size_t head_got;
	struct dtplan_wire_header h;
	char *cred;
	size_t cred_got;
	uint8_t seal[DTPLAN_WIRE_SEAL_LEN];
	uint8_t *body;
	size_t body_got;
	struct dtprobe__link_srv *srv; /* C_PROBE: the peer's side of the pair */
	bool inventory_in, results_in; /* C_CHILD: rendezvous_tree.c */
};

enum up_state { U_IDLE, U_CONNECTING, U_JOINING, U_UP, U_GONE };

/* The connection to the parent (or an ancestor standing in for it); set up
 * by dtplan_probe_run(), changed by rendezvous_up.c only. */
struct uplink {
	enum up_state state;
	uint32_t target;
	unsigned cand;
	double next_try, deadline, fallback_at;
	bool resolved;
	struct sockaddr_storage addr;
	struct conn rx; /* fd and the message being read; rendezvous_tree.c
				      * writes the inventories and results on its fd */
};

struct engine {
	/* set by dtplan_probe_run() (rendezvous.c), never changed */
	const struct dtplan_probe_opts *o;
	struct dtprobe__peer_rules rules;
	uint32_t n, self, fanout;
	size_t depth, my_depth;
	double start, deadline;
	int lfd;              /* -1: none (listen_err says why) */
	char listen_err[192]; /* a node that could not listen still reports */
	uint16_t port;
	uint32_t seed;
	/* set by dtplan_probe_run(), else from the first connection's local
	 * address: the uplink's (rendezvous_up.c) or, on the leader, its first
	 * child's (rendezvous_tree.c) */
	struct dtplan_wire_addr my_addr;
	bool addr_known;
	/* allocated by dtplan_probe_run(); slots taken by dtprobe__rdv_accept_all(),
	 * turned into children and probes by rendezvous_tree.c, closed there and
	 * by the driver's deadlines */
	struct conn *conns;
	size_t max_conns;
	struct uplink up; /* rendezvous_up.c's */
	/* discovery: rendezvous.c's (its thread fills node, disc_rv and disc_err,
	 * then writes to pipe[1]; disc_done is set once it is joined) */
	pthread_t thread;
	bool thread_started, disc_done;
	int pipe[2];
	struct dtplan_node node; /* its host name cleared by dtprobe__rdv_own_entry() */
	enum dtplan_err disc_rv;
	struct dtplan_error disc_err;
	/* the subtree's inventories: rendezvous_tree.c's (the leader's
	 * schedule fills its own entry's address, rendezvous_lead.c) */
	char **records;
	size_t n_records;
	struct dtplan__strmap rec_index;
	struct dtplan_wire_entry *entries;
	size_t n_entries, sent_entries; /* sent_entries: 0 again for a new parent (up) */
	uint8_t *have_entry;
	double inv_deadline; /* dtplan_probe_run() */
	bool any_join;       /* rendezvous_tree.c: a child joined */
	char refused[256];   /* rendezvous_conn.c: the first message refused for its
			      * MUNGE credential, and why ("" none) */
	/* the rounds: set once, by the leader's schedule (rendezvous_lead.c) or
	 * the parent's go (rendezvous_up.c); rounds_over by the driver */
	bool have_go;
	struct dtplan_wire_go go; /* the parameters; assign: this node's only */
	struct dtplan_wire_assign mine;
	double t_rounds, t_end, res_deadline;
	bool rounds_over;
	/* the subtree's results: dtprobe__rdv_add_link() (this node's own from
	 * the driver's rounds, the children's from rendezvous_tree.c); done[self]
	 * set by the driver */
	struct dtplan_link_result *links;
	size_t n_links, cap_links;
	uint8_t *done;
	bool results_sent; /* rendezvous_tree.c; false again for a new parent (up) */
	/* the leader: rendezvous_lead.c's */
	struct dtplan_wire_assign *assign; /* every present node's, by node */
	uint8_t *present;
	struct dtplan_measurements *notes; /* collects notes before the analysis;
					    * created by dtplan_probe_run() */
	size_t rejected;                   /* dtprobe__rdv_reject() */
};

static inline double dtprobe__rdv_now(void)
{
	return dtplan_probe_clock();
}

/* rendezvous_conn.c: connections */

/* Logs a rejected message or connection (where: the peer) and counts it. */
void dtprobe__rdv_reject(struct engine *e, const char *where, const struct dtplan_error *err);
/* Frees the message being read on c, ready for the next. */
void dtprobe__rdv_conn_reset_msg(struct conn *c);
/* Closes c's fd and frees what it holds; c is C_FREE with fd -1 after. */
void dtprobe__rdv_conn_close(struct conn *c);
/*
 * Reads what c's fd has of the current message and checks each part as it
 * completes.  1: a whole, checked message is in c (h, body); 0: more to
 * come; -1: rejected (err says why); -2: closed between messages.
 */
int dtprobe__rdv_conn_read(struct engine *e, struct conn *c, struct dtplan_error *err);
/* A header of this node's for a message of type in round. */
struct dtplan_wire_header dtprobe__rdv_header(const struct engine *e, uint8_t type, uint32_t round);
/* Sends this node's join on fd. */
enum dtplan_err dtprobe__rdv_send_join(struct engine *e, int fd, struct dtplan_error *err);
/* Accepts every pending connection into a free slot and greets it. */
void dtprobe__rdv_accept_all(struct engine *e);

/* rendezvous_tree.c: the fan-in tree */

/* Adds this node's entry, once discovery is over and its address known. */
void dtprobe__rdv_own_entry(struct engine *e);
/* Sends the entries not sent yet (and the records they use) to the parent. */
void dtprobe__rdv_send_inventory(struct engine *e);
/* Every direct child has sent its inventory (results: its results). */
bool dtprobe__rdv_children_in(const struct engine *e, bool results);
/* Adds a link result to the subtree's. */
enum dtplan_err dtprobe__rdv_add_link(struct engine *e, const struct dtplan_link_result *l);
/* Sends the subtree's results to the parent. */
void dtprobe__rdv_send_results(struct engine *e);
/* A whole message on a connection a peer opened: 0 taken, else rejected
 * (err says why). */
int dtprobe__rdv_on_message(struct engine *e, struct conn *c, struct dtplan_error *err);

/* rendezvous_lead.c: the leader */

/* Logs a note and keeps it for the measurement. */
void dtprobe__rdv_note(struct engine *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The leader: the schedule of the present nodes and its timing. */
void dtprobe__rdv_plan_rounds(struct engine *e);
/* Sends each child the go with its subtree's assignments (received: when
 * this node had the go, counted off the children's delay). */
void dtprobe__rdv_forward_go(struct engine *e, const struct dtplan_wire_assign *all, size_t n_all,
			     double received);
/* The leader's measurement file from what arrived; out is the caller's. */
enum dtplan_err dtprobe__rdv_measure(struct engine *e, struct dtplan_measure_file *out,
				     struct dtplan_error *err);

/* rendezvous_up.c: the uplink */

/* Connects to the parent's next port candidate. */
void dtprobe__rdv_up_try(struct engine *e);
/* Drops the uplink (why: logged), and picks what to try next. */
void dtprobe__rdv_up_fail(struct engine *e, const char *why);
/* What poll() said of the uplink's fd. */
void dtprobe__rdv_up_event(struct engine *e, short revents);

#endif /* DTPLAN_PROBES_RENDEZVOUS_INT_H */
