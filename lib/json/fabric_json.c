/*
 * fabric_json.c: fabric descriptions as a service serves them.  Two formats,
 * chosen by the answer's Content-Type or the site's FabricFormat=
 * (dtplan_fabric_format_of_type()): dtplan.fabric/1 JSON and Slurm's
 * topology.conf.  Written back as JSON by fabric_export.c.
 *
 * The JSON form holds what topology.conf and the site file hold together, so
 * it is read by writing those two texts and handing them to the parsers of
 * lib/topology/topology.c and lib/site/config.c: one switch per topology line, one setting
 * per site line.  A fabric from a service then means exactly what the same
 * content in local files means, and every rule those parsers check (names,
 * hostlists, cycles, a node under two leaves, overlapping node sets) holds
 * for both.  Their errors come back naming the JSON element of the line.
 *
 * The JSON's schema (dtplan.conf(5) documents it):
 *   { "schema": "dtplan.fabric/1",
 *     "network": {"bandwidth": RATE, "latency": TIME},   NetworkBandwidth=...
 *     "nvlink": {"bandwidth": RATE, "latency": TIME},    NVLinkBandwidth=...
 *     "gpu_type": "h100-sxm",                            GpuType=
 *     "switches": [ {"name": "leaf1", "nodes": "gpu[01-08]" | ["gpu01", ...],
 *                    "switches": "leaf[1-2]" | ["leaf1", ...], "parent": "spine",
 *                    "link_speed": RATE, "oversubscription": RATIO,
 *                    "uplink_bandwidth": RATE}, ... ],
 *     "node_sets": [ {"nodes": "gpu[01-16]", "gpu_type": "h100-sxm", "gpus": 8,
 *                     "nvlink_domain": "rack1"}, ... ] }
 * RATE is a number of bytes per second or a string with a unit ("400Gb/s"),
 * TIME a number of seconds or a string ("5us"), RATIO a number or "4:1".
 * Keys starting with "x-" are ignored; other unknown keys are errors.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No string: an absent member. */
#define NONE DTPLAN_TEXT_NONE

/* What each generated line came from, for error messages: one string each. */
struct labels {
	struct dtplan__text text;
	size_t *at; /* offset of each line's label in text */
	size_t n, cap;
	bool failed;
};

static void label_add(struct labels *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void label_add(struct labels *l, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	if (l->failed)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		size_t *at = realloc(l->at, cap * sizeof(*at));

		if (at == NULL) {
			l->failed = true;
			return;
		}
		l->at = at;
		l->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	l->at[l->n] = dtplan__text_keep(&l->text, buf);
	if (l->at[l->n++] == NONE)
		l->failed = true;
}

static const char *label_of(const struct labels *l, int line)
{
	return line >= 1 && (size_t)line <= l->n ? l->text.s + l->at[line - 1] : NULL;
}

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

const char *dtplan_fabric_format_name(enum dtplan_fabric_format f)
{
	switch (f) {
	case DTPLAN_FABRIC_JSON:
		return DTPLAN_FABRIC_SCHEMA;
	case DTPLAN_FABRIC_TOPOLOGY_CONF:
		return "topology.conf";
	default:
		return "?";
	}
}

void dtplan_fabric_desc_destroy(struct dtplan_fabric_desc *f)
{
	if (f == NULL)
		return;
	dtplan_topology_destroy(f->topology);
	free(f->site_text);
	free(f);
}

static enum dtplan_err jfail(struct jparse *p, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum dtplan_err jfail(struct jparse *p, const char *where, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, 0, "%s: %s", where, msg);
}

/* A value that goes into a Key=Value token: no blanks, '=', '#' or controls. */
static bool token_safe(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s) || *s == '=' ||
		    *s == '#')
			return false;
	return true;
}

/* One name in an array: also no hostlist syntax. */
static bool name_safe(const char *s)
{
	return token_safe(s) && strpbrk(s, "[],") == NULL;
}

/* Checks that obj has only the keys in allowed (NULL-terminated) or "x-..." ones. */
static enum dtplan_err check_keys(struct jparse *p, const char *where, json_t *obj,
				  const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		bool ok = strncmp(key, "x-", 2) == 0;

		for (const char *const *a = allowed; !ok && *a != NULL; a++)
			ok = strcmp(key, *a) == 0;
		if (!ok)
			return jfail(p, where, "unknown key '%s'", key);
	}
	return DTPLAN_OK;
}

/*
 * A string value for a token into buf (size bytes), through the member
 * getter (base/base.h: "WHERE.KEY: expected a string", "... longer than N
 * characters"); *out buf, or NULL when absent.
 */
static enum dtplan_err get_string(struct jparse *p, const char *where, json_t *obj, const char *key,
				  char *buf, size_t size, const char **out)
{
	*out = NULL;
	buf[0] = '\0';
	if (json_object_get(obj, key) == NULL)
		return DTPLAN_OK;
	if (dtplan__jget_str(obj, p->source, where, key, 0, buf, size, p->err) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	if (!token_safe(buf))
		return jfail(p, where, "\"%s\": '%s' is empty or holds blanks, '=' or '#'", key,
			     buf);
	*out = buf;
	return DTPLAN_OK;
}

/*
 * A number or a string with a unit, as a token value in buf: numbers are
 * written exactly (%.17g) with `unit` after them ("B/s" so that topology.conf
 * does not take a whole number for a weight).  "" when absent.
 */
static enum dtplan_err get_quantity(struct jparse *p, const char *where, json_t *obj,
				    const char *key, const char *unit, char *buf, size_t size)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	buf[0] = '\0';
	if (v == NULL)
		return DTPLAN_OK;
	if (json_is_number(v)) {
		double d = json_number_value(v);

		if (!isfinite(d) || d < 0)
			return jfail(p, where, "\"%s\": %g is not a value of zero or more", key, d);
		snprintf(buf, size, "%.17g%s", d, unit);
		return DTPLAN_OK;
	}
	if (!json_is_string(v))
		return jfail(p, where, "\"%s\" must be a number or a string with a unit", key);
	s = json_string_value(v);
	if (!token_safe(s) || strlen(s) >= size)
		return jfail(p, where, "\"%s\": '%s' is not a value", key, s);
	dtplan__strlcpy(buf, s, size);
	return DTPLAN_OK;
}

/* "nodes" or "switches": a hostlist string or an array of names, as one
 * comma-separated token value appended to t.  *given says whether present. */
static enum dtplan_err add_list(struct jparse *p, const char *where, json_t *obj, const char *key,
				struct dtplan__text *t, bool *given)
{
	json_t *v = json_object_get(obj, key), *e;
	size_t i;

	*given = v != NULL;
	if (v == NULL)
		return DTPLAN_OK;
	if (json_is_string(v)) {
		if (!token_safe(json_string_value(v)))
			return jfail(p, where, "\"%s\": '%s' is not a hostlist", key,
				     json_string_value(v));
		dtplan__text_add(t, " %s=%s", key[0] == 'n' ? "Nodes" : "Switches",
				 json_string_value(v));
		return DTPLAN_OK;
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return jfail(p, where,
			     "\"%s\" must be a hostlist string or a non-empty array of "
			     "names",
			     key);
	dtplan__text_add(t, " %s=", key[0] == 'n' ? "Nodes" : "Switches");
	json_array_foreach(v, i, e)
	{
		if (!json_is_string(e) || !name_safe(json_string_value(e)))
			return jfail(p, where, "\"%s\"[%zu] is not a name", key, i);
		dtplan__text_add(t, "%s%s", i > 0 ? "," : "", json_string_value(e));
	}
	return DTPLAN_OK;
}

static int find_switch(const struct jparse *p, const char *name)
{
	return dtplan__strmap_get(&p->index, name);
}

/*
 * Runs one of a later pass's checks while switch i is read (rv, its
 * outcome, with p->err pointed at e): the first fault is kept for that pass
 * (struct late).
 */
static void keep_late(struct jparse *p, int pass, size_t i, enum dtplan_err rv,
		      const struct dtplan_error *e)
{
	if (rv != DTPLAN_OK && p->late[pass].at == NONE) {
		p->late[pass].at = i;
		p->late[pass].e = *e;
	}
}

/* A kept fault said by its pass. */
static enum dtplan_err say_late(struct jparse *p, int pass)
{
	if (p->err != NULL)
		*p->err = p->late[pass].e;
	return p->late[pass].e.code;
}

/* A quantity as a kept string (NONE when absent); a fault kept for emit_switch(). */
static size_t keep_quantity(struct jparse *p, size_t i, const char *where, json_t *sw,
			    const char *key, const char *unit)
{
	struct dtplan_error e = {0}, *saved = p->err;
	char buf[64];
	enum dtplan_err rv;

	p->err = &e;
	rv = get_quantity(p, where, sw, key, unit, buf, sizeof(buf));
	p->err = saved;
	keep_late(p, LATE_EMIT, i, rv, &e);
	return rv == DTPLAN_OK && buf[0] != '\0' ? dtplan__text_keep(&p->strings, buf) : NONE;
}

/*
 * Switch i, read once: what the first pass checks (an object, its name and
 * keys) is said at once; what the later passes need is kept in p->sw[i],
 * and the first fault each of them would find with it (struct late).
 */
static enum dtplan_err read_switch(struct jparse *p, size_t i, json_t *sw)
{
	static const char *const keys[] = {"name",
					   "nodes",
					   "switches",
					   "parent",
					   "link_speed",
					   "oversubscription",
					   "uplink_bandwidth",
					   NULL};
	struct jswitch *r = &p->sw[i];
	struct dtplan_error e = {0}, *saved = p->err;
	char where[128], name[64], parent_buf[64];
	const char *parent = NULL;
	enum dtplan_err rv;
	bool has_nodes;
	json_t *v;

	*r = (struct jswitch){NONE, NONE, NONE, NONE, NONE, NONE, NONE, 0, NONE, KIDS_NONE};
	p->parent[i] = -1;
	snprintf(where, sizeof(where), "switches[%zu]", i);
	if (!json_is_object(sw))
		return jfail(p, where, "must be an object");
	if (dtplan__jget_str(sw, p->source, where, "name", DTPLAN_JGET_REQUIRED, name, sizeof(name),
			     p->err) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	if (!token_safe(name))
		return jfail(p, where, "\"name\" must be a switch name");
	r->name = dtplan__text_keep(&p->strings, name);
	snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, name);
	if (check_keys(p, where, sw, keys) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	/* "switches", for the children's pass */
	v = json_object_get(sw, "switches");
	if (json_is_string(v)) {
		r->kids_kind = KIDS_HOSTLIST;
		r->kids = dtplan__text_keep(&p->strings, json_string_value(v));
	} else if (v != NULL && (!json_is_array(v) || json_array_size(v) == 0)) {
		r->kids_kind = KIDS_BAD;
	} else if (v != NULL) {
		json_t *c;
		size_t k;

		r->kids_kind = KIDS_NAMES;
		r->n_named = json_array_size(v);
		p->scratch.len = 0;
		json_array_foreach(v, k, c)
		{
			if (!json_is_string(c) || !name_safe(json_string_value(c)) ||
			    strlen(json_string_value(c)) >= sizeof(p->children[0][0])) {
				r->bad_name = k;
				break;
			}
			dtplan__text_add(&p->scratch, "%s%s", k > 0 ? "," : "",
					 json_string_value(c));
		}
		if (r->bad_name == NONE)
			r->kids = dtplan__text_keep(&p->strings, p->scratch.s ? p->scratch.s : "");
	}
	/* "parent", for link_parent() */
	p->err = &e;
	rv = get_string(p, where, sw, "parent", parent_buf, sizeof(parent_buf), &parent);
	p->err = saved;
	keep_late(p, LATE_PARENT, i, rv, &e);
	if (parent != NULL)
		r->parent = dtplan__text_keep(&p->strings, parent);
	/* the rest, for emit_switch(), in its order */
	r->speed = keep_quantity(p, i, where, sw, "link_speed", "B/s");
	r->ratio = keep_quantity(p, i, where, sw, "oversubscription", "");
	r->uplink = keep_quantity(p, i, where, sw, "uplink_bandwidth", "B/s");
	p->scratch.len = 0;
	if (p->scratch.s != NULL)
		p->scratch.s[0] = '\0';
	p->err = &e;
	rv = add_list(p, where, sw, "nodes", &p->scratch, &has_nodes);
	p->err = saved;
	keep_late(p, LATE_EMIT, i, rv, &e);
	if (rv == DTPLAN_OK && has_nodes)
		r->nodes = dtplan__text_keep(&p->strings, p->scratch.s ? p->scratch.s : "");
	return DTPLAN_OK;
}

/* Switch i of the answer, a reference the caller drops; NULL when its text
 * does not parse (the whole document then says why). */
static json_t *element(const struct jparse *p, size_t i)
{
	json_error_t jerr;

	if (p->spans == NULL)
		return json_incref(json_array_get(p->arr, i));
	return json_loadb(p->text + p->spans[i].at, p->spans[i].len,
			  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
}

/* Whether the switches from `from` on parse (a fault is only said of a
 * document that does). */
static bool rest_parses(const struct jparse *p, size_t from)
{
	for (size_t i = from; p->spans != NULL && i < p->n_switches; i++) {
		json_t *sw = element(p, i);

		if (sw == NULL)
			return false;
		json_decref(sw);
	}
	return true;
}

/*
 * First pass over the switches: each read once (read_switch()), then the
 * names' index, then the children named by "switches".  *whole is set when
 * a switch's text does not parse: the caller then reads the whole document.
 */
static enum dtplan_err collect_switches(struct jparse *p, bool *whole)
{
	struct dtplan_error e = {0};
	char where[128];
	size_t i, listed = 0;

	p->names = calloc(p->n_switches + 1, sizeof(*p->names));
	p->children = calloc(p->n_switches + 1, sizeof(*p->children));
	p->n_children = calloc(p->n_switches + 1, sizeof(*p->n_children));
	p->parent = malloc((p->n_switches + 1) * sizeof(*p->parent));
	p->cap_children = calloc(p->n_switches + 1, sizeof(*p->cap_children));
	p->sw = malloc((p->n_switches + 1) * sizeof(*p->sw));
	if (p->names == NULL || p->children == NULL || p->n_children == NULL || p->parent == NULL ||
	    p->cap_children == NULL || p->sw == NULL ||
	    dtplan__strmap_init(&p->index, p->n_switches) != DTPLAN_OK)
		return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
	for (int k = 0; k < N_LATE; k++)
		p->late[k].at = NONE;
	for (i = 0; i < p->n_switches; i++) {
		json_t *sw = element(p, i);
		enum dtplan_err rv;

		if (sw == NULL) {
			*whole = true;
			return DTPLAN_ERR_PARSE;
		}
		rv = read_switch(p, i, sw);
		json_decref(sw);
		if (rv != DTPLAN_OK && !rest_parses(p, i + 1)) {
			*whole = true;
			return DTPLAN_ERR_PARSE;
		}
		if (rv != DTPLAN_OK)
			return rv;
	}
	if (p->strings.failed || p->scratch.failed)
		return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
	for (i = 0; i < p->n_switches; i++) {
		p->names[i] = p->strings.s + p->sw[i].name;
		/* a name given twice keeps its first switch (topology.conf's
		 * reader then names the second) */
		enum dtplan_err rv = dtplan__strmap_put(&p->index, p->names[i], (int)i, NULL);

		if (rv == DTPLAN_ERR_NOMEM)
			return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0,
					     "out of memory");
		p->duplicate |= rv == DTPLAN_ERR_INVAL;
	}
	/* Children from "switches" (names or hostlists), expanded once. */
	for (i = 0; i < p->n_switches; i++) {
		const struct jswitch *r = &p->sw[i];
		const char *kids = r->kids != NONE ? p->strings.s + r->kids : NULL;

		if (r->kids_kind == KIDS_NONE)
			continue;
		snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, p->names[i]);
		if (r->kids_kind == KIDS_HOSTLIST) {
			/* Bounded before it expands: each switch has one parent, so
			 * all the lists together name at most the answer's switches
			 * (a 2 KB answer naming c[1-1000000] in every switch took
			 * gigabytes). */
			if (dtplan_hostlist_expand(kids, p->n_switches - listed, &p->children[i],
						   &p->n_children[i], &e) != DTPLAN_OK)
				return e.code == DTPLAN_ERR_RANGE
					       ? jfail(p, where,
						       "\"switches\": the answer's lists name more "
						       "than its %zu switches",
						       p->n_switches)
					       : jfail(p, where, "\"switches\": %s", e.text);
			listed += p->n_children[i];
			continue;
		}
		if (r->kids_kind == KIDS_BAD)
			return jfail(p, where,
				     "\"switches\" must be a hostlist string or a "
				     "non-empty array of names");
		if (r->n_named > p->n_switches - listed)
			return jfail(p, where,
				     "\"switches\": the answer's lists name more than its %zu "
				     "switches",
				     p->n_switches);
		if (r->bad_name != NONE)
			return jfail(p, where, "\"switches\"[%zu] is not a name", r->bad_name);
		p->children[i] = calloc(r->n_named, sizeof(*p->children[i]));
		if (p->children[i] == NULL)
			return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0,
					     "out of memory");
		for (size_t k = 0; k < r->n_named; k++) {
			size_t n = strcspn(kids, ",");

			memcpy(p->children[i][k], kids, n);
			p->children[i][k][n] = '\0';
			kids += n + (kids[n] == ',');
		}
		p->n_children[i] = r->n_named;
		listed += p->n_children[i];
	}
	for (i = 0; i < p->n_switches; i++) {
		for (size_t k = 0; k < p->n_children[i]; k++) {
			int c = find_switch(p, p->children[i][k]);

			if (c >= 0 && p->parent[c] < 0)
				p->parent[c] = (int)i;
		}
	}
	return DTPLAN_OK;
}

/* A switch's "parent": agrees with the switch that lists it, or adds it. */
static enum dtplan_err link_parent(struct jparse *p, size_t i)
{
	const char *parent;
	char where[128], (*tmp)[64];
	int q;

	if (p->late[LATE_PARENT].at == i)
		return say_late(p, LATE_PARENT);
	if (p->sw[i].parent == NONE)
		return DTPLAN_OK;
	parent = p->strings.s + p->sw[i].parent;
	q = find_switch(p, parent);
	if (q >= 0 && p->parent[i] == q)
		return DTPLAN_OK;
	snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, p->names[i]);
	if (q < 0)
		return jfail(p, where, "parent '%s' is not a switch of \"switches\"", parent);
	if (p->parent[i] >= 0 && p->parent[i] != q)
		return jfail(p, where, "parent '%s', but '%s' lists it in \"switches\"", parent,
			     p->names[p->parent[i]]);
	if (strlen(p->names[i]) >= sizeof(tmp[0]))
		return jfail(p, where, "name longer than %zu characters", sizeof(tmp[0]) - 1);
	if (p->n_children[q] >= p->cap_children[q]) {
		/* doubling: 200,000 leaves naming one spine grew it one by one,
		 * quadratic where realloc copies */
		size_t cap = 2 * p->n_children[q] < 8 ? 8 : 2 * p->n_children[q];

		tmp = realloc(p->children[q], cap * sizeof(*tmp));
		if (tmp == NULL)
			return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0,
					     "out of memory");
		p->children[q] = tmp;
		p->cap_children[q] = cap;
	}
	tmp = p->children[q];
	dtplan__strlcpy(tmp[p->n_children[q]++], p->names[i], sizeof(tmp[0]));
	p->parent[i] = q;
	return DTPLAN_OK;
}

/*
 * No switch is its own ancestor (dtplan__tree_cycle()).  A cycle is named by its switches, as the answer
 * gave them ("a cycle of parents: leaf1 -> spine -> leaf1").
 */
static int parent_of(const void *ctx, int i)
{
	return ((const struct jparse *)ctx)->parent[i];
}

static enum dtplan_err check_cycles(struct jparse *p)
{
	int s = dtplan__tree_cycle(p->n_switches, parent_of, p);
	char where[128], path[600];
	size_t used = 0;
	int k, n = 0;

	if (s == -2)
		return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
	if (s < 0)
		return DTPLAN_OK;
	/* s is on a cycle: name it, at most 8 switches of it */
	k = s;
	do {
		used += (size_t)snprintf(path + used, sizeof(path) - used, "%.64s -> ",
					 p->names[k]);
		k = p->parent[k];
	} while (k != s && ++n < 8 && used < sizeof(path) - 70);
	snprintf(path + used, sizeof(path) - used, "%s%.64s", k == s ? "" : "... -> ", p->names[s]);
	snprintf(where, sizeof(where), "switches[%d] (%.64s)", s, p->names[s]);
	return jfail(p, where, "a cycle of parents: %s", path);
}

/* One topology line and at most one site line per switch. */
static enum dtplan_err emit_switch(struct jparse *p, size_t i)
{
	const struct jswitch *r = &p->sw[i];
	const char *str = p->strings.s;
	char where[128];

	const char *sep = " Switches=";

	if (p->late[LATE_EMIT].at == i)
		return say_late(p, LATE_EMIT);
	if (p->keep != NULL && !p->keep[i])
		return DTPLAN_OK;
	snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, p->names[i]);
	dtplan__text_add(&p->topo, "SwitchName=%s%s", p->names[i],
			 r->nodes != NONE ? str + r->nodes : "");
	for (size_t k = 0; k < p->n_children[i]; k++) {
		int c = p->keep != NULL ? find_switch(p, p->children[i][k]) : -1;

		/* a child that is no switch stays, for topology.conf's reader to name */
		if (c >= 0 && !p->keep[c])
			continue;
		dtplan__text_add(&p->topo, "%s%s", sep, p->children[i][k]);
		sep = ",";
	}
	if (r->speed != NONE)
		dtplan__text_add(&p->topo, " LinkSpeed=%s", str + r->speed);
	dtplan__text_add(&p->topo, "\n");
	label_add(&p->topo_lines, "%s", where);
	if (r->ratio == NONE && r->uplink == NONE)
		return DTPLAN_OK;
	dtplan__text_add(&p->site, "SwitchName=%s", p->names[i]);
	if (r->ratio != NONE)
		dtplan__text_add(&p->site, " Oversubscription=%s", str + r->ratio);
	if (r->uplink != NONE)
		dtplan__text_add(&p->site, " UplinkBandwidth=%s", str + r->uplink);
	dtplan__text_add(&p->site, "\n");
	label_add(&p->site_lines, "%s", where);
	return DTPLAN_OK;
}

static enum dtplan_err emit_node_set(struct jparse *p, size_t i, json_t *ns)
{
	static const char *const keys[] = {"nodes", "gpu_type", "gpus", "nvlink_domain", NULL};
	const char *nodes = NULL, *gpu = NULL, *domain = NULL;
	char where[64], nodes_buf[4096], gpu_buf[64], domain_buf[64];
	long gpus = -1;

	snprintf(where, sizeof(where), "node_sets[%zu]", i);
	if (!json_is_object(ns))
		return jfail(p, where, "must be an object");
	if (json_object_get(ns, "nodes") == NULL)
		return jfail(p, where, "\"nodes\" (a hostlist) is required");
	/* the site file's NodeName= line checks the count's range */
	if (check_keys(p, where, ns, keys) != DTPLAN_OK ||
	    get_string(p, where, ns, "nodes", nodes_buf, sizeof(nodes_buf), &nodes) != DTPLAN_OK ||
	    get_string(p, where, ns, "gpu_type", gpu_buf, sizeof(gpu_buf), &gpu) != DTPLAN_OK ||
	    get_string(p, where, ns, "nvlink_domain", domain_buf, sizeof(domain_buf), &domain) !=
		    DTPLAN_OK ||
	    dtplan__jget_long(ns, p->source, where, "gpus", 0, 0, 1L << 30, &gpus, p->err) !=
		    DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	dtplan__text_add(&p->site, "NodeName=%s", nodes);
	if (gpu != NULL)
		dtplan__text_add(&p->site, " GpuType=%s", gpu);
	if (gpus >= 0)
		dtplan__text_add(&p->site, " Gpus=%ld", gpus);
	if (domain != NULL)
		dtplan__text_add(&p->site, " NVLinkDomain=%s", domain);
	dtplan__text_add(&p->site, "\n");
	label_add(&p->site_lines, "%s (%.64s)", where, nodes);
	return DTPLAN_OK;
}

/* "network" and "nvlink": {"bandwidth": RATE, "latency": TIME}. */
static enum dtplan_err emit_link(struct jparse *p, json_t *root, const char *key,
				 const char *bw_key, const char *lat_key)
{
	static const char *const keys[] = {"bandwidth", "latency", NULL};
	json_t *o = json_object_get(root, key);
	char bw[64], lat[64];

	if (o == NULL)
		return DTPLAN_OK;
	if (!json_is_object(o))
		return jfail(p, key, "must be an object");
	if (check_keys(p, key, o, keys) != DTPLAN_OK ||
	    get_quantity(p, key, o, "bandwidth", "", bw, sizeof(bw)) != DTPLAN_OK ||
	    get_quantity(p, key, o, "latency", "", lat, sizeof(lat)) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	if (bw[0] != '\0') {
		dtplan__text_add(&p->site, "%s=%s\n", bw_key, bw);
		label_add(&p->site_lines, "%s.bandwidth", key);
	}
	if (lat[0] != '\0') {
		dtplan__text_add(&p->site, "%s=%s\n", lat_key, lat);
		label_add(&p->site_lines, "%s.latency", key);
	}
	return DTPLAN_OK;
}

/* Rewrites a parser's "line N" error as the JSON element of that line. */
static enum dtplan_err relabel(struct jparse *p, const struct labels *l,
			       const struct dtplan_error *e)
{
	const char *where = label_of(l, e->line);

	if (e->code == DTPLAN_ERR_NOMEM)
		return dtplan__error(p->err, e->code, p->source, 0, "out of memory");
	if (where == NULL)
		return dtplan__error(p->err, e->code, p->source, 0, "%s", e->text);
	return dtplan__error(p->err, e->code, p->source, 0, "%s: %s", where, e->text);
}

/*
 * Read for some nodes (a job's allocation, a hostlist): keeps the switches
 * that hold one of them and those above them, and writes out no other
 * (p->keep).  Every check of the answer itself has run on all of them;
 * topology.conf's reader then checks what is written out.  A switch whose
 * nodes do not read as a hostlist is kept, for that reader to say why; an
 * answer that names two switches alike, or none of whose switches holds one
 * of the nodes, is written out whole.
 */
static enum dtplan_err mark_kept(struct jparse *p, const char *nodes)
{
	struct dtplan__strmap want = {0};
	char(*names)[64] = NULL;
	size_t n = 0, kept = 0;
	enum dtplan_err rv = DTPLAN_OK;

	if (nodes == NULL || p->duplicate ||
	    dtplan_hostlist_expand(nodes, DTPLAN_HOSTLIST_MAX, &names, &n, NULL) != DTPLAN_OK)
		return DTPLAN_OK;
	p->keep = calloc(p->n_switches + 1, 1);
	if (p->keep == NULL || dtplan__strmap_init(&want, n) != DTPLAN_OK) {
		rv = dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		if (dtplan__strmap_put(&want, names[k], (int)k, NULL) == DTPLAN_ERR_NOMEM) {
			rv = dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
			goto out;
		}
	for (size_t i = 0; i < p->n_switches; i++) {
		const char *list = p->sw[i].nodes != NONE ? p->strings.s + p->sw[i].nodes : NULL;
		bool hit = false;

		if (list == NULL)
			continue;
		list += strlen(" Nodes=");
		if (strchr(list, '[') == NULL) {
			/* names: each looked up */
			while (!hit && *list != '\0') {
				size_t len = strcspn(list, ",");
				char name[64];

				hit = len >= sizeof(name);
				if (!hit) {
					memcpy(name, list, len);
					name[len] = '\0';
					hit = dtplan__strmap_get(&want, name) >= 0;
				}
				list += len + (list[len] == ',');
			}
		} else {
			for (size_t k = 0; !hit && k < n; k++) {
				bool match = false;

				hit = dtplan_hostlist_match(list, names[k], &match, NULL) !=
					      DTPLAN_OK ||
				      match;
			}
		}
		for (int s = (int)i; hit && s >= 0 && !p->keep[s]; s = p->parent[s]) {
			p->keep[s] = 1;
			kept++;
		}
	}
	if (kept == 0) {
		free(p->keep);
		p->keep = NULL;
	}
out:
	dtplan__strmap_fini(&want);
	free(names);
	return rv;
}

/* ---- the switches read one at a time ----
 *
 * A Jansson tree of the whole answer costs about 100 bytes a value: 200,000
 * switches took some 140 MB before any of them was read.  So the answer is
 * cut where its top-level "switches" array holds its members, the rest of
 * the document (with "switches": []) is loaded whole, and each switch alone,
 * read once and dropped.  The cut only finds where values end (strings,
 * brackets); Jansson still parses every byte.  Whatever the cut does not
 * take as it expects, and any part that does not parse, is left to the
 * whole document's load, whose error is the one said.
 */

/* The members of the array s[i..] as spans, *end one past it; false when it
 * is not cut as expected. */
static bool cut_array(struct jparse *p, const char *s, size_t i, size_t len, size_t *end)
{
	size_t cap = 0;

	i = dtplan__json_skip_blank(s, i + 1, len);
	if (i < len && s[i] == ']') {
		*end = i + 1;
		return true;
	}
	for (;;) {
		size_t e = dtplan__json_skip_value(s, i, len);

		if (e == 0)
			return false;
		if (p->n_spans == cap) {
			struct span *v;

			cap = cap ? 2 * cap : 1024;
			v = realloc(p->spans, cap * sizeof(*v));
			if (v == NULL)
				return false;
			p->spans = v;
		}
		p->spans[p->n_spans++] = (struct span){i, e - i};
		i = dtplan__json_skip_blank(s, e, len);
		if (i < len && s[i] == ']') {
			*end = i + 1;
			return true;
		}
		if (i >= len || s[i] != ',')
			return false;
		i = dtplan__json_skip_blank(s, i + 1, len);
	}
}

/*
 * The document without its switches: a copy of text with the value of its
 * top-level "switches", an array, cut out as [] and its members in p->spans.
 * NULL (p->spans freed) when there is no such array or the text is not cut
 * as expected: then the whole document is loaded.
 */
static char *cut_switches(struct jparse *p, const char *text, size_t len, size_t *out_len)
{
	size_t i = dtplan__json_skip_blank(text, 0, len), from = 0, to = 0;
	char *rest = NULL;

	if (i >= len || text[i] != '{')
		return NULL;
	i = dtplan__json_skip_blank(text, i + 1, len);
	while (i < len && text[i] == '"') {
		size_t k = i, e = dtplan__json_skip_value(text, i, len), v;

		if (e == 0)
			return NULL;
		i = dtplan__json_skip_blank(text, e, len);
		if (i >= len || text[i] != ':')
			goto no;
		v = dtplan__json_skip_blank(text, i + 1, len);
		if (e - k == 10 && memcmp(text + k, "\"switches\"", 10) == 0 && v < len &&
		    text[v] == '[') {
			if (to != 0 || !cut_array(p, text, v, len, &to))
				goto no;
			from = v;
			i = to;
		} else {
			i = dtplan__json_skip_value(text, v, len);
			if (i == 0)
				goto no;
		}
		i = dtplan__json_skip_blank(text, i, len);
		if (i < len && text[i] == ',')
			i = dtplan__json_skip_blank(text, i + 1, len);
		else
			break;
	}
	if (i >= len || text[i] != '}' || dtplan__json_skip_blank(text, i + 1, len) != len ||
	    to == 0)
		goto no;
	rest = malloc(len - (to - from) + 3);
	if (rest == NULL)
		goto no;
	memcpy(rest, text, from);
	memcpy(rest + from, "[]", 2);
	memcpy(rest + from + 2, text + to, len - to);
	*out_len = len - (to - from) + 2;
	rest[*out_len] = '\0';
	return rest;
no:
	free(p->spans);
	p->spans = NULL;
	p->n_spans = 0;
	return NULL;
}

static void jparse_fini(struct jparse *p)
{
	for (size_t i = 0; p->children != NULL && i < p->n_switches; i++)
		free(p->children[i]);
	free(p->children);
	free(p->n_children);
	free(p->cap_children);
	free(p->parent);
	dtplan__strmap_fini(&p->index);
	free(p->names);
	free(p->sw);
	free(p->keep);
	free(p->spans);
	free(p->strings.s);
	free(p->scratch.s);
	free(p->topo.s);
	free(p->site.s);
	free(p->topo_lines.text.s);
	free(p->topo_lines.at);
	free(p->site_lines.text.s);
	free(p->site_lines.at);
	memset(p, 0, sizeof(*p));
}

/*
 * The answer's JSON, its switches one at a time unless whole; *again set
 * when a switch's text did not parse alone (the caller then reads the whole
 * document, whose error names the fault).
 */
static enum dtplan_err parse_json_as(const char *text, size_t len, const char *nodes, bool whole,
				     struct dtplan_fabric_desc *f, bool *again,
				     struct dtplan_error *err)
{
	static const char *const keys[] = {"schema",   "network",   "nvlink", "gpu_type",
					   "switches", "node_sets", NULL};
	struct jparse p = {.source = f->source, .err = err, .text = text};
	struct dtplan_config check;
	struct dtplan_error e = {0};
	json_t *root = NULL, *switches, *sets, *v;
	char schema[64], gpu_buf[64], *rest = NULL;
	const char *gpu = NULL;
	enum dtplan_err rv = DTPLAN_ERR_PARSE;
	size_t i, rest_len = 0;

	dtplan_config_init(&check);
	/* a switch takes about 6 values; a site holds at most 1,048,576 */
	if (!whole && dtplan__json_bounded(text, len, (size_t)1 << 23, f->source,
					   "not valid JSON: ", err) != DTPLAN_OK)
		goto out;
	if (!whole)
		rest = cut_switches(&p, text, len, &rest_len);
	if (rest != NULL) {
		json_error_t jerr;

		root = json_loadb(rest, rest_len, JSON_REJECT_DUPLICATES, &jerr);
		free(rest);
		if (root == NULL) {
			*again = true;
			goto out;
		}
	} else {
		root = dtplan__json_load(text, len, (size_t)1 << 23, f->source,
					 "not valid JSON: ", err);
		if (root == NULL)
			goto out;
	}
	if (!json_is_object(root)) {
		rv = jfail(&p, "document", "must be a JSON object");
		goto out;
	}
	rv = dtplan__jget_str(root, f->source, "", "schema", DTPLAN_JGET_REQUIRED, schema,
			      sizeof(schema), err);
	if (rv == DTPLAN_OK && strcmp(schema, DTPLAN_FABRIC_SCHEMA) != 0)
		rv = jfail(&p, "schema", "'%s' is not %s", schema, DTPLAN_FABRIC_SCHEMA);
	if (rv == DTPLAN_OK)
		rv = check_keys(&p, "document", root, keys);
	if (rv != DTPLAN_OK)
		goto out;
	rv = DTPLAN_ERR_PARSE;
	switches = json_object_get(root, "switches");
	p.arr = switches;
	p.n_switches = p.spans != NULL ? p.n_spans : json_array_size(switches);
	if (!json_is_array(switches) || p.n_switches == 0) {
		jfail(&p, "switches", "must be a non-empty array");
		goto out;
	}
	rv = collect_switches(&p, again);
	if (rv != DTPLAN_OK)
		goto out;
	rv = DTPLAN_ERR_PARSE;
	for (i = 0; i < p.n_switches; i++) {
		rv = link_parent(&p, i);
		if (rv != DTPLAN_OK)
			goto out;
	}
	rv = check_cycles(&p);
	if (rv == DTPLAN_OK)
		rv = mark_kept(&p, nodes);
	if (rv != DTPLAN_OK)
		goto out;
	rv = DTPLAN_ERR_PARSE;
	if (emit_link(&p, root, "network", "NetworkBandwidth", "NetworkLatency") != DTPLAN_OK ||
	    emit_link(&p, root, "nvlink", "NVLinkBandwidth", "NVLinkLatency") != DTPLAN_OK ||
	    get_string(&p, "", root, "gpu_type", gpu_buf, sizeof(gpu_buf), &gpu) != DTPLAN_OK)
		goto out;
	if (gpu != NULL) {
		dtplan__text_add(&p.site, "GpuType=%s\n", gpu);
		label_add(&p.site_lines, "gpu_type");
	}
	for (i = 0; i < p.n_switches; i++)
		if (emit_switch(&p, i) != DTPLAN_OK)
			goto out;
	sets = json_object_get(root, "node_sets");
	if (sets != NULL && !json_is_array(sets)) {
		jfail(&p, "node_sets", "must be an array");
		goto out;
	}
	json_array_foreach(sets, i, v) if (emit_node_set(&p, i, v) != DTPLAN_OK) goto out;
	if (p.topo.failed || p.site.failed || p.topo_lines.failed || p.site_lines.failed) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, f->source, 0, "out of memory");
		goto out;
	}
	/* The texts hold all the parsers need: the switches as read and the
	 * children lists go first, so that their memory and the tree's do not
	 * add up. */
	for (i = 0; p.children != NULL && i < p.n_switches; i++) {
		free(p.children[i]);
		p.children[i] = NULL;
	}
	dtplan__strmap_fini(&p.index); /* its keys are in p.strings */
	free(p.names);
	p.names = NULL;
	free(p.sw);
	p.sw = NULL;
	free(p.strings.s);
	p.strings = (struct dtplan__text){0};
	json_decref(root);
	root = NULL;
	/* Both texts through their own parsers; the site part checked on the tree. */
	rv = dtplan_topology_parse_conf(p.topo.s, f->source, &f->topology, &e);
	if (rv != DTPLAN_OK) {
		rv = relabel(&p, &p.topo_lines, &e);
		goto out;
	}
	rv = dtplan_config_parse_string(&check, p.site.s ? p.site.s : "", f->source, &e);
	if (rv != DTPLAN_OK) {
		rv = relabel(&p, &p.site_lines, &e);
		goto out;
	}
	f->site_text = p.site.s ? p.site.s : strdup("");
	p.site.s = NULL;
	rv = f->site_text != NULL
		     ? DTPLAN_OK
		     : dtplan__error(err, DTPLAN_ERR_NOMEM, f->source, 0, "out of memory");
out:
	dtplan_config_fini(&check);
	jparse_fini(&p);
	json_decref(root);
	return rv;
}

static enum dtplan_err parse_json(const char *text, size_t len, const char *nodes,
				  struct dtplan_fabric_desc *f, struct dtplan_error *err)
{
	bool again = false;
	enum dtplan_err rv = parse_json_as(text, len, nodes, false, f, &again, err);

	if (again) {
		dtplan_topology_destroy(f->topology);
		f->topology = NULL;
		again = false;
		rv = parse_json_as(text, len, nodes, true, f, &again, err);
	}
	return rv;
}

/* The media type of a Content-Type value ("application/json; charset=utf-8"
 * is application/json), in lower case, cut to size. */
static void media_type(const char *value, char *buf, size_t size)
{
	size_t n = 0;

	while (*value == ' ' || *value == '\t')
		value++;
	for (; *value != '\0' && *value != ';' && *value != ' ' && *value != '\t'; value++)
		if (n + 1 < size)
			buf[n++] = (char)tolower((unsigned char)*value);
	buf[n] = '\0';
}

enum dtplan_err dtplan_fabric_format_of_type(const char *content_type, const char *source,
					     enum dtplan_fabric_format *format,
					     struct dtplan_error *err)
{
	const char *name = source ? source : "fabric";
	char type[128];

	if (content_type == NULL || content_type[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, name, 0,
				     "the answer has no Content-Type: application/json "
				     "(dtplan.fabric/1) or text/plain (topology.conf) expected, "
				     "or FabricFormat= set");
	media_type(content_type, type, sizeof(type));
	if (strcmp(type, "application/json") == 0) {
		*format = DTPLAN_FABRIC_JSON;
		return DTPLAN_OK;
	}
	if (strcmp(type, "text/plain") == 0) {
		*format = DTPLAN_FABRIC_TOPOLOGY_CONF;
		return DTPLAN_OK;
	}
	return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, name, 0,
			     "the answer's Content-Type is '%.100s', neither application/json "
			     "(dtplan.fabric/1) nor text/plain (topology.conf); FabricFormat= "
			     "can name the format",
			     content_type);
}

enum dtplan_err dtplan_fabric_desc_parse(const char *text, size_t len,
					 enum dtplan_fabric_format format, const char *source,
					 struct dtplan_fabric_desc **out, struct dtplan_error *err)
{
	return dtplan_fabric_desc_parse_for(text, len, format, source, NULL, out, err);
}

enum dtplan_err dtplan_fabric_desc_parse_for(const char *text, size_t len,
					     enum dtplan_fabric_format format, const char *source,
					     const char *nodes, struct dtplan_fabric_desc **out,
					     struct dtplan_error *err)
{
	struct dtplan_fabric_desc *f = NULL;
	const char *name = source ? source : "fabric";
	char *copy = NULL;
	size_t i = 0;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, name, 0, "no fabric text to parse");
		goto out;
	}
	if (memchr(text, '\0', len) != NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, name, 0, "the answer holds a NUL byte");
		goto out;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, name, 0, "out of memory");
		goto out;
	}
	dtplan__strlcpy(f->source, name, sizeof(f->source));
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i == len) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, name, 0, "the answer is empty");
		goto out;
	}
	f->format = format;
	if (format == DTPLAN_FABRIC_JSON) {
		rv = parse_json(text, len, nodes, f, err);
	} else if (format != DTPLAN_FABRIC_TOPOLOGY_CONF) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, name, 0, "no such fabric format (%d)",
				   (int)format);
	} else {
		copy = strndup(text, len);
		rv = copy != NULL ? dtplan_topology_parse_conf(copy, name, &f->topology, err)
				  : dtplan__error(err, DTPLAN_ERR_NOMEM, name, 0, "out of memory");
	}
	if (rv != DTPLAN_OK)
		goto out;
	*out = f;
	f = NULL;
out:
	free(copy);
	dtplan_fabric_desc_destroy(f);
	return rv;
}
