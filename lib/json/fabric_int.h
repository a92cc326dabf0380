/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_int.h: the fabric answer's reader (dtplan.fabric/1, fabric_json.c)
 * in four files over one parse state: fabric_json.c the entry and the
 * passes' order, fabric_switches.c the switches, fabric_cut.c the raw cut of
 * the "switches" array, fabric_get.c the member getters and the generated
 * texts' lines; each uses only the ones after it.  lib/json/ only.
 */
#ifndef DTPLAN_JSON_FABRIC_INT_H
#define DTPLAN_JSON_FABRIC_INT_H

#include "dtplan.h"
#include "base/base.h"

#include <jansson.h>

/* No string: an absent member. */
#define NONE DTPLAN_TEXT_NONE

/* What each generated line came from, for error messages: one string each. */
struct labels {
	struct dtplan__text text;
	size_t *at; /* offset of each line's label in text */
	size_t n, cap;
	bool failed;
};

/* A switch's children: none, a hostlist string, an array of names (kept
 * joined by ','), or a value that is neither. */
enum kids { KIDS_NONE, KIDS_HOSTLIST, KIDS_NAMES, KIDS_BAD };

/* One switch of the answer as its first reading left it for the passes
 * after it: offsets in jparse.strings, NONE where absent. */
struct jswitch {
	size_t name, kids, parent, nodes, speed, ratio, uplink;
	size_t n_named;  /* KIDS_NAMES: the array's length */
	size_t bad_name; /* KIDS_NAMES: its first element that is not a name, or NONE */
	enum kids kids_kind;
};

/* The first fault of a later pass found while reading the switches: that
 * pass says it when it comes to switch `at`, as if it had found it itself. */
struct late {
	size_t at; /* NONE: none found */
	struct dtplan_error e;
};

enum { LATE_PARENT, LATE_EMIT, N_LATE };

/* Where a member of the answer's "switches" array lies in its text. */
struct span {
	size_t at, len;
};

/* State of one JSON parse. */
struct jparse {
	const char *source;
	struct dtplan_error *err;
	struct dtplan__text topo, site; /* the two generated texts */
	struct labels topo_lines, site_lines;
	/* the switches, read one at a time: from their spans in the text
	 * (spans != NULL), else from the whole document's array (arr) */
	const char *text;
	struct span *spans;
	size_t n_spans;
	json_t *arr;
	struct jswitch *sw;          /* owned, one per switch */
	struct dtplan__text strings; /* the switches' strings */
	struct dtplan__text scratch; /* one switch's list while it is read */
	struct late late[N_LATE];
	bool duplicate;      /* a name given to two switches */
	unsigned char *keep; /* owned; the switches written out, NULL: all */
	/* per switch: expanded child names and the parent a child got */
	size_t n_switches;
	const char **names;    /* into strings */
	char (**children)[64]; /* owned arrays */
	size_t *n_children;
	size_t *cap_children;        /* room in children[i] (0: exactly n_children[i]) */
	int *parent;                 /* index of the switch listing it, -1 none */
	struct dtplan__strmap index; /* name -> first switch of that name */
};

/*
 * The member getters and the texts' lines (fabric_get.c).  Every error is
 * DTPLAN_ERR_PARSE from p->source, "WHERE: ..." in p->err; a getter leaves
 * "" (or NULL) where the member is absent.
 */

/* Keeps what the next generated line came from (l->failed when out of memory). */
void dtplan__fabric_label_add(struct labels *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "WHERE: message" into p->err; returns DTPLAN_ERR_PARSE. */
enum dtplan_err dtplan__fabric_fail(struct jparse *p, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A Key=Value token's value: not empty, no blanks, controls, '=' or '#'. */
bool dtplan__fabric_token_safe(const char *s);
/* One name of an array: a token value without hostlist syntax ("[],"). */
bool dtplan__fabric_name_safe(const char *s);
/* obj holds only allowed's keys (NULL-terminated) or "x-..." ones. */
enum dtplan_err dtplan__fabric_check_keys(struct jparse *p, const char *where, json_t *obj,
					  const char *const *allowed);
/* A string token value into buf (size bytes); *out buf, NULL when absent. */
enum dtplan_err dtplan__fabric_get_string(struct jparse *p, const char *where, json_t *obj,
					  const char *key, char *buf, size_t size,
					  const char **out);
/* A number (written %.17g, unit after it) or a string with its unit into buf. */
enum dtplan_err dtplan__fabric_get_quantity(struct jparse *p, const char *where, json_t *obj,
					    const char *key, const char *unit, char *buf,
					    size_t size);
/* "nodes" or "switches" (a hostlist or an array of names) appended to t as
 * " Nodes=..." or " Switches=..."; *given says whether present. */
enum dtplan_err dtplan__fabric_add_list(struct jparse *p, const char *where, json_t *obj,
					const char *key, struct dtplan__text *t, bool *given);
/* node_sets[i] as the site text's NodeName= line. */
enum dtplan_err dtplan__fabric_emit_node_set(struct jparse *p, size_t i, json_t *ns);
/* "network" or "nvlink" as the site text's bandwidth and latency lines. */
enum dtplan_err dtplan__fabric_emit_link(struct jparse *p, json_t *root, const char *key,
					 const char *bw_key, const char *lat_key);
/* A parser's "line N" error e as the JSON element of that line (l). */
enum dtplan_err dtplan__fabric_relabel(struct jparse *p, const struct labels *l,
				       const struct dtplan_error *e);

/*
 * The switches (fabric_switches.c), in this order: each read once and the
 * children named by "switches" linked (*whole set when a switch's text does
 * not parse alone: the caller reads the whole document); each "parent"
 * linked; no cycle; those over nodes kept (NULL: all); one topology line
 * (and at most one site line) per switch kept.
 */
enum dtplan_err dtplan__fabric_collect_switches(struct jparse *p, bool *whole);
enum dtplan_err dtplan__fabric_link_parent(struct jparse *p, size_t i);
enum dtplan_err dtplan__fabric_check_cycles(struct jparse *p);
enum dtplan_err dtplan__fabric_mark_kept(struct jparse *p, const char *nodes);
enum dtplan_err dtplan__fabric_emit_switch(struct jparse *p, size_t i);

/*
 * The raw cut (fabric_cut.c): a copy of text with its top-level "switches"
 * array cut out as [] (*out_len its length; caller frees), the members'
 * spans in p->spans; NULL when the text is not cut as expected.
 */
char *dtplan__fabric_cut_switches(struct jparse *p, const char *text, size_t len, size_t *out_len);

#endif /* DTPLAN_JSON_FABRIC_INT_H */
