/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan_read_int.h: what the parts of the plan reader share (lib/json/ only).
 *
 *   plan_ranks_json.c   the driver: the first pass over the whole text, the
 *                       member trees, dtplan_plan_ranks_from_json() and
 *                       dtplan_plan_from_json()
 *   plan_read_stream.c  the streaming tokenizer and a member's value
 *   plan_read_ranks.c   the streamed members: parallelism (for both
 *                       readers), checkpoint, placement
 *   plan_read_whole.c   the whole plan's small members, from Jansson trees
 *
 * Each uses only the ones below it.  The streaming functions allocate
 * nothing; on error they fill r->err (NULL allowed) and return its code.
 */
#ifndef DTPLAN_PLAN_READ_INT_H
#define DTPLAN_PLAN_READ_INT_H

#include "dtplan.h"

#include <stdbool.h>
#include <stddef.h>

/* The source every error of the plan reader names. */
#define SRC "plan JSON"

/*
 * A reader over a NUL-terminated text: the caller's, borrowed, unchanged,
 * and valid as long as the reader is used.  pos is where it stands, depth
 * how many containers it is in, err where errors go (the caller's, NULL
 * allowed).
 */
struct dtplan__rd {
	const char *s; /* the whole text */
	size_t pos;
	int depth;
	struct dtplan_error *err;
};

/* A member's value found by the first pass: where it starts and ends. */
struct dtplan__span {
	bool found;
	size_t pos, end;
};

/* ------------------------------------------------------------------------
 * The tokenizer (plan_read_stream.c)
 * ---------------------------------------------------------------------- */

/* Line (1-based) of byte pos of s, for messages. */
int dtplan__rd_line_at(const char *s, size_t pos);

/* A DTPLAN_ERR_PARSE error at the reader's line; returns its code. */
enum dtplan_err dtplan__rd_syntax(struct dtplan__rd *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Passes over white space; returns the next significant character, 0 at the
 * end. */
char dtplan__rd_peek(struct dtplan__rd *r);

/*
 * A string (at '"'): decoded into buf when not NULL (size bytes with the NUL;
 * longer strings are cut), its decoded length in *len (NULL allowed).
 */
enum dtplan_err dtplan__rd_string(struct dtplan__rd *r, char *buf, size_t size, size_t *len);

/* A number: *v its value; *whole when it is an integer (no fraction or
 * exponent) that fits in a long long, then in *i. */
enum dtplan_err dtplan__rd_number(struct dtplan__rd *r, double *v, bool *whole, long long *i);

/* Starts an object ('{') or an array ('['): the caller saw its bracket.
 * Refuses nesting deeper than DTPLAN_JSON_MAX_DEPTH. */
enum dtplan_err dtplan__rd_open_container(struct dtplan__rd *r, char c);

/*
 * Next member of an object opened with dtplan__rd_open_container(r, '{'):
 * its key in key (cut to size; NULL: not kept) and the reader at its value;
 * *more false after the '}'.  *first is true before the first member.
 */
enum dtplan_err dtplan__rd_next_member(struct dtplan__rd *r, bool *first, char *key, size_t size,
				       bool *more);

/* Next element of an array opened with dtplan__rd_open_container(r, '['):
 * *more false after the ']'.  *first is true before the first element. */
enum dtplan_err dtplan__rd_next_element(struct dtplan__rd *r, bool *first, bool *more);

/* Validates and passes over one value of any kind. */
enum dtplan_err dtplan__rd_skip_value(struct dtplan__rd *r);

/* Counts the elements of the array at the reader (*n), passing over it. */
enum dtplan_err dtplan__rd_count_elements(struct dtplan__rd *r, size_t *n);

/* ------------------------------------------------------------------------
 * A member's value (plan_read_stream.c)
 * ---------------------------------------------------------------------- */

/* A reader at span s of r's text, at depth 0, with r's err. */
struct dtplan__rd dtplan__rd_at(const struct dtplan__rd *r, struct dtplan__span s);

/*
 * Index of key in keys[] (n of them, at most 32), -1 when none; *seen has a
 * bit per key already met, and a second sighting sets *rv to an error (and
 * returns -1).
 */
int dtplan__rd_known_key(struct dtplan__rd *r, const char *key, const char *const *keys, size_t n,
			 unsigned *seen, enum dtplan_err *rv);

/* An integer member value: null leaves *out; else a whole number in
 * [-1, 10^9] ("WHERE.KEY: expected a whole number"). */
enum dtplan_err dtplan__rd_int_value(struct dtplan__rd *r, const char *where, const char *key,
				     int *out);

/* A number member value: null leaves *out ("WHERE.KEY: expected a number"). */
enum dtplan_err dtplan__rd_num_value(struct dtplan__rd *r, const char *where, const char *key,
				     double *out);

/* A string member value into buf (cut to size): null leaves buf
 * ("WHERE.KEY: expected a string"). */
enum dtplan_err dtplan__rd_str_value(struct dtplan__rd *r, const char *where, const char *key,
				     char *buf, size_t size);

/* ------------------------------------------------------------------------
 * The streamed members (plan_read_ranks.c)
 * ---------------------------------------------------------------------- */

/*
 * "parallelism" at the reader into b (zeroed before), for both readers: tp,
 * pp, dp, ZeRO, micro-batches, recomputation, EP, CP, interleaving, offload,
 * the schedule, the layers per stage and their imbalance.  The one reader of
 * that member: a mistake in it is the same error whichever reader meets it.
 */
enum dtplan_err dtplan__plan_read_parallelism(struct dtplan__rd *r, struct dtplan_candidate *b);

/* "checkpoint" at the reader: its intervals into c (anything but an object
 * is passed over). */
enum dtplan_err dtplan__plan_read_ckpt(struct dtplan__rd *r, struct dtplan_ckpt *c);

/*
 * "placement" at the reader into p, whose parallel degrees are read: its
 * nodes and ranks, and with whole its leaves and the rest.  The arrays it
 * allocates are p's, freed with it (dtplan_plan_destroy()), also on error.
 */
enum dtplan_err dtplan__plan_read_placement(struct dtplan__rd *r, struct dtplan_plan *p,
					    bool whole);

/* ------------------------------------------------------------------------
 * The whole plan's small members (plan_read_whole.c)
 * ---------------------------------------------------------------------- */

/*
 * Everything but the parallelism and the placement into p, from root, an
 * object of the plan's small members (borrowed; the caller json_decref()s
 * it): the request (over dtplan_request_init()'s defaults), memory,
 * prediction, runner-up, checkpoint, time to train and warnings.  What it
 * allocates (the warnings) is p's, freed with it, also on error.
 */
struct json_t;
enum dtplan_err dtplan__plan_read_whole(struct json_t *root, struct dtplan_plan *p,
					struct dtplan_error *err);

/* The layer count v of stage i of n of where's layers_per_stage into b's
 * stages (the first, the middle, all equal, and the last), checked. */
enum dtplan_err dtplan__plan_stage_at(struct dtplan_candidate *b, const char *where, size_t i,
				      size_t n, long long v, struct dtplan_error *err);

/*
 * A split as a plan gives it, under the schedule it names: vp, ep and cp 1
 * when a plan from before them has none, then the rules every chosen split
 * meets (dtplan__split_check_read(), lib/model/rules.c).  The one check of
 * "parallelism" and of the runner-up's (where names it).
 * lib/json/plan_read_ranks.c.
 */
enum dtplan_err dtplan__plan_read_split(struct dtplan_candidate *b, enum dtplan_schedule schedule,
					const char *where, struct dtplan_error *err);

#endif /* DTPLAN_PLAN_READ_INT_H */
