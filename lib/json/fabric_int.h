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

/* ---- the member getters and the texts' lines (fabric_get.c) ---- */

void label_add(struct labels *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum dtplan_err jfail(struct jparse *p, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool token_safe(const char *s);
bool name_safe(const char *s);
enum dtplan_err check_keys(struct jparse *p, const char *where, json_t *obj,
			   const char *const *allowed);
enum dtplan_err get_string(struct jparse *p, const char *where, json_t *obj, const char *key,
			   char *buf, size_t size, const char **out);
enum dtplan_err get_quantity(struct jparse *p, const char *where, json_t *obj, const char *key,
			     const char *unit, char *buf, size_t size);
enum dtplan_err add_list(struct jparse *p, const char *where, json_t *obj, const char *key,
			 struct dtplan__text *t, bool *given);
enum dtplan_err emit_node_set(struct jparse *p, size_t i, json_t *ns);
enum dtplan_err emit_link(struct jparse *p, json_t *root, const char *key, const char *bw_key,
			  const char *lat_key);
enum dtplan_err relabel(struct jparse *p, const struct labels *l, const struct dtplan_error *e);

/* ---- the switches (fabric_switches.c) ---- */

enum dtplan_err collect_switches(struct jparse *p, bool *whole);
enum dtplan_err link_parent(struct jparse *p, size_t i);
enum dtplan_err check_cycles(struct jparse *p);
enum dtplan_err mark_kept(struct jparse *p, const char *nodes);
enum dtplan_err emit_switch(struct jparse *p, size_t i);

/* ---- the raw cut of the switches array (fabric_cut.c) ---- */

char *cut_switches(struct jparse *p, const char *text, size_t len, size_t *out_len);

#endif /* DTPLAN_JSON_FABRIC_INT_H */
