/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * measure_json.c: measurements <-> JSON: the "measurements" object of the
 * plan and of "dtplan probe --json", and the measurement file the prolog's
 * leader writes ("dtplan.measurements/1": the object, the hosts, and the
 * inventory records with the host -> record map).
 *
 * Reading checks every type, count, range and name, and says which member
 * is wrong: the file crosses a privilege boundary (written by root, read by
 * the batch step) and dtplan plan --measurements reads what users give it.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/json_int.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "measurements"

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

static bool put(json_t *o, const char *key, json_t *v)
{
	return v != NULL && json_object_set_new(o, key, v) == 0;
}

static bool push(json_t *a, json_t *v)
{
	return v != NULL && json_array_append_new(a, v) == 0;
}

/* A number, or null when not known (have false, or not finite). */
static json_t *num(double v, bool have)
{
	return have && isfinite(v) ? json_real(v) : json_null();
}

static json_t *tier_json(const struct dtplan_tier *t)
{
	json_t *o = json_object();
	bool bw = t->measured && t->bandwidth_bytes_per_s > 0,
	     lat = t->measured && t->latency_s > 0;

	if (o == NULL || !put(o, "bandwidth_bytes_per_s", num(t->bandwidth_bytes_per_s, bw)) ||
	    !put(o, "latency_us", num(t->latency_s * 1e6, lat)) ||
	    !put(o, "latency_spread_us", num(t->latency_spread_s * 1e6, lat)) ||
	    !put(o, "links", json_integer((json_int_t)t->links)) ||
	    !put(o, "measured", json_boolean(t->measured))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static const char *host_of(const struct dtplan_measurements *m, uint32_t i)
{
	return i < m->n_nodes ? m->hosts[i] : "?";
}

static json_t *links_json(const struct dtplan_measurements *m)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < m->n_links; i++) {
		const struct dtplan_link_result *l = &m->links[i];
		bool ok = (l->flags & DTPLAN_LINK_OK) != 0;
		json_t *o = json_object();

		if (o == NULL || !put(o, "a", json_string(host_of(m, l->from))) ||
		    !put(o, "b", json_string(host_of(m, l->to))) ||
		    !put(o, "round", json_integer(l->round)) ||
		    !put(o, "tier",
			 json_string(l->flags & DTPLAN_LINK_CROSS ? "cross_leaf" : "intra_leaf")) ||
		    !put(o, "concurrent", json_boolean(l->flags & DTPLAN_LINK_CONCURRENT)) ||
		    !put(o, "ok", json_boolean(ok)) ||
		    !put(o, "samples", json_integer(l->samples)) ||
		    !put(o, "latency_us", num(l->latency_s * 1e6, l->samples > 0)) ||
		    !put(o, "latency_spread_us", num(l->latency_spread_s * 1e6, l->samples > 0)) ||
		    !put(o, "bandwidth_bytes_per_s",
			 num(l->bandwidth_bytes_per_s, l->bandwidth_bytes_per_s > 0)) ||
		    !push(a, o)) {
			json_decref(o);
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

static json_t *uplinks_json(const struct dtplan_measurements *m)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < m->n_uplinks; i++) {
		const struct dtplan_uplink *u = &m->uplinks[i];
		json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:b}", "switch", u->name,
				      "oversubscription", num(u->oversubscription, true),
				      "configured", num(u->configured, u->configured > 0),
				      "aggregate_bytes_per_s", num(u->aggregate_bytes_per_s, true),
				      "downlink_bytes_per_s", num(u->downlink_bytes_per_s, true),
				      "flows", (json_int_t)u->flows, "saturated", u->saturated);

		if (!push(a, o)) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

static json_t *stragglers_json(const struct dtplan_measurements *m)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < m->n_stragglers; i++) {
		const struct dtplan_straggler *s = &m->stragglers[i];
		json_t *o =
			json_pack("{s:s, s:o, s:o}", "node", s->node, "bandwidth_bytes_per_s",
				  num(s->bandwidth_bytes_per_s, true), "tier_median_bytes_per_s",
				  num(s->tier_median_bytes_per_s, true));

		if (!push(a, o)) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

static json_t *names_json(const struct dtplan_measurements *m, const uint32_t *idx, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < n; i++)
		if (!push(a, json_string(idx != NULL ? host_of(m, idx[i]) : m->hosts[i]))) {
			json_decref(a);
			a = NULL;
		}
	return a;
}

static json_t *notes_json(const struct dtplan_measurements *m)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < m->n_notes; i++)
		if (!push(a, json_string(m->notes[i]))) {
			json_decref(a);
			a = NULL;
		}
	return a;
}

/* What the plan used, figure by figure. */
static json_t *used_json(const struct dtplan_measurements *m)
{
	const char *inv = m->n_inventories == 0            ? "assumed"
			  : m->n_inventories >= m->n_nodes ? "measured"
							   : "partly measured";

	return json_pack("{s:s, s:s, s:s, s:s}", "inventories", inv, "bandwidth",
			 m->used_tiers ? "measured" : "assumed", "latency",
			 m->used_tiers ? "measured" : "assumed", "oversubscription",
			 m->used_ratios ? "measured" : "assumed");
}

json_t *dtplan__measurements_json(const struct dtplan_measurements *m, size_t n_nodes)
{
	struct dtplan_measurements *none = NULL;
	json_t *o = json_object();

	if (m == NULL) {
		none = dtplan_measurements_create(0, NULL);
		if (none == NULL) {
			json_decref(o);
			return NULL;
		}
		m = none;
	}
	if (o == NULL ||
	    !put(o, "nodes", json_integer((json_int_t)(none ? n_nodes : m->n_nodes))) ||
	    !put(o, "nodes_reported", json_integer((json_int_t)m->n_reported)) ||
	    !put(o, "source", json_string(m->source)) ||
	    !put(o, "budget_seconds", num(m->budget_s, m->budget_s > 0)) ||
	    !put(o, "elapsed_seconds", num(m->elapsed_s, m->elapsed_s > 0)) ||
	    !put(o, "interface", m->interface[0] ? json_string(m->interface) : json_null()) ||
	    !put(o, "tiers",
		 json_pack("{s:o, s:o}", "intra_leaf", tier_json(&m->intra), "cross_leaf",
			   tier_json(&m->cross))) ||
	    !put(o, "uplinks", uplinks_json(m)) || !put(o, "links", links_json(m)) ||
	    !put(o, "stragglers", stragglers_json(m)) ||
	    !put(o, "missing", names_json(m, m->missing, m->n_missing)) ||
	    !put(o, "hosts", names_json(m, NULL, m->n_nodes)) || !put(o, "notes", notes_json(m)) ||
	    (m->n_notes_more > 0 &&
	     !put(o, "notes_more", json_integer((json_int_t)m->n_notes_more))) ||
	    !put(o, "used", used_json(m)) ||
	    (m->failed[0] != '\0' && !put(o, "failed", json_string(m->failed)))) {
		json_decref(o);
		o = NULL;
	}
	dtplan_measurements_destroy(none);
	return o;
}

static enum dtplan_err dump(json_t *root, bool pretty, char **out, struct dtplan_error *err)
{
	*out = root != NULL
		       ? json_dumps(root, (pretty ? JSON_INDENT(2) : JSON_COMPACT) |
						  JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
		       : NULL;
	json_decref(root);
	if (*out == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0,
				     "out of memory while writing the measurements");
	return DTPLAN_OK;
}

enum dtplan_err dtplan_measurements_to_json(const struct dtplan_measurements *m, bool pretty,
					    char **out, struct dtplan_error *err)
{
	if (out == NULL || m == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "no measurements or output");
	return dump(dtplan__measurements_json(m, m->n_nodes), pretty, out, err);
}

void dtplan_measure_file_fini(struct dtplan_measure_file *f)
{
	if (f == NULL)
		return;
	dtplan_measurements_destroy(f->m);
	free(f->records);
	free(f->host_record);
	memset(f, 0, sizeof(*f));
}

enum dtplan_err dtplan_measure_file_to_json(const struct dtplan_measure_file *f, char **out,
					    struct dtplan_error *err)
{
	json_t *root = NULL, *records = NULL, *map = NULL;
	char *text = NULL;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (f == NULL || f->m == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
				     "no measurement file or output");
	records = json_array();
	map = json_array();
	if (records == NULL || map == NULL)
		goto nomem;
	for (size_t k = 0; k < f->n_records; k++) {
		rv = dtplan_node_to_json(&f->records[k], false, &text, err);
		if (rv != DTPLAN_OK)
			goto out;
		if (!push(records, json_loads(text, 0, NULL)))
			goto nomem;
		free(text);
		text = NULL;
	}
	for (size_t i = 0; i < f->m->n_nodes; i++)
		if (!push(map, json_integer(f->host_record != NULL ? f->host_record[i] : -1)))
			goto nomem;
	/* json_pack takes records, map and the object, even when it fails */
	root = json_pack("{s:s, s:I, s:o, s:o, s:o}", "schema", DTPLAN_MEASURE_SCHEMA, "job_id",
			 (json_int_t)f->job_id, "records", records, "host_record", map,
			 "measurements", dtplan__measurements_json(f->m, f->m->n_nodes));
	records = map = NULL;
	if (root == NULL)
		goto nomem;
	return dump(root, true, out, err);
nomem:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0,
			   "out of memory while writing the measurement file");
out:
	json_decref(records);
	json_decref(map);
	free(text);
	return rv;
}

/* ------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------- */

/*
 * The members are read through the one getter family (base/base.h:
 * dtplan__jget_*(), "PATH.KEY: missing", "expected a number", ...), each
 * only while *rv is still DTPLAN_OK, so that the first fault is the one
 * reported.  Every member is required; null is allowed where nullable.
 */
#define REQ DTPLAN_JGET_REQUIRED
#define NUL(nullable) ((nullable) ? DTPLAN_JGET_NULLABLE : 0u)

/* An object (array false) or an array member; NULL when *rv is set. */
static json_t *get_node(json_t *obj, const char *path, const char *key, bool array,
			enum dtplan_err *rv, struct dtplan_error *err)
{
	json_t *v = NULL;

	if (*rv == DTPLAN_OK)
		*rv = array ? dtplan__jget_array(obj, SRC, path, key, REQ, &v, err)
			    : dtplan__jget_obj(obj, SRC, path, key, REQ, &v, err);
	return *rv == DTPLAN_OK ? v : NULL;
}

static bool get_bool(json_t *obj, const char *path, const char *key, enum dtplan_err *rv,
		     struct dtplan_error *err)
{
	bool b = false;

	if (*rv == DTPLAN_OK)
		*rv = dtplan__jget_bool(obj, SRC, path, key, REQ, &b, err);
	return *rv == DTPLAN_OK && b;
}

/*
 * A measured figure: a number within the bounds the site file keeps for the
 * same quantity (doc/internals/limits.md), or 0 for "none" (null: 0 when
 * nullable).  A forged or broken file gave a 1e18 oversubscription, 1e-300
 * B/s or a latency of 1e12 s, which the site file refuses (issue 26).
 */
enum figure {
	FIG_RATE,    /* bytes/s: 1 MB/s to 100 TB/s, as NetworkBandwidth */
	FIG_LATENCY, /* microseconds: 0 to 1 s, as NetworkLatency */
	FIG_RATIO,   /* oversubscription: 0.1 to 1000, as Oversubscription */
	FIG_BUDGET,  /* seconds: 0.5 to 120, as ProbeBudget */
	FIG_ELAPSED, /* seconds: up to an hour, a budget with the prolog's kill */
};

static double get_num(json_t *obj, const char *path, const char *key, bool nullable,
		      enum figure fig, enum dtplan_err *rv, struct dtplan_error *err)
{
	static const struct {
		double lo, hi;
		const char *unit;
	} bounds[] = {
		[FIG_RATE] = {1e6, 1e14, " B/s"}, [FIG_LATENCY] = {0, 1e6, " us"},
		[FIG_RATIO] = {0.1, 1000, ""},    [FIG_BUDGET] = {0.5, 120, " s"},
		[FIG_ELAPSED] = {0, 3600, " s"},
	};
	double d = 0.0;

	if (*rv != DTPLAN_OK)
		return 0.0;
	/* the type here, the figure's bounds below */
	*rv = dtplan__jget_num(obj, SRC, path, key, REQ | NUL(nullable), -DBL_MAX, DBL_MAX, &d,
			       err);
	if (*rv != DTPLAN_OK)
		return 0.0;
	if (!isfinite(d) || d < 0 || (d != 0 && (d < bounds[fig].lo || d > bounds[fig].hi))) {
		*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				    "%s%s: %g is out of range (0, or at least %g%s and at most "
				    "%g%s)",
				    path, key, d, bounds[fig].lo, bounds[fig].unit, bounds[fig].hi,
				    bounds[fig].unit);
		return 0.0;
	}
	return d;
}

static long get_int(json_t *obj, const char *path, const char *key, long min, long max,
		    enum dtplan_err *rv, struct dtplan_error *err)
{
	long i = 0;

	if (*rv == DTPLAN_OK)
		*rv = dtplan__jget_long(obj, SRC, path, key, REQ, min, max, &i, err);
	return *rv == DTPLAN_OK ? i : 0;
}

/* flags: DTPLAN_JGET_*; dst "" unless the member gives a string */
static void get_str(json_t *obj, const char *path, const char *key, unsigned flags, char *dst,
		    size_t size, enum dtplan_err *rv, struct dtplan_error *err)
{
	dst[0] = '\0';
	if (*rv == DTPLAN_OK)
		*rv = dtplan__jget_str(obj, SRC, path, key, flags, dst, size, err);
	if (*rv != DTPLAN_OK)
		dst[0] = '\0';
}

/* The index of a host name; -1 (and err) when it is not one of the hosts. */
static int32_t host_index(const struct dtplan__strmap *map, json_t *v, const char *path,
			  enum dtplan_err *rv, struct dtplan_error *err)
{
	int32_t k;

	if (*rv != DTPLAN_OK)
		return -1;
	if (!json_is_string(v)) {
		*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s: not a host name", path);
		return -1;
	}
	k = dtplan__strmap_get(map, json_string_value(v));
	if (k < 0)
		*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				    "%s: '%s' is not one of the hosts", path, json_string_value(v));
	return k;
}

static void read_tier(json_t *tiers, const char *key, struct dtplan_tier *t, enum dtplan_err *rv,
		      struct dtplan_error *err)
{
	json_t *o = get_node(tiers, "tiers.", key, false, rv, err);
	char path[64];

	memset(t, 0, sizeof(*t));
	if (o == NULL)
		return;
	snprintf(path, sizeof(path), "tiers.%s.", key);
	t->bandwidth_bytes_per_s =
		get_num(o, path, "bandwidth_bytes_per_s", true, FIG_RATE, rv, err);
	t->latency_s = get_num(o, path, "latency_us", true, FIG_LATENCY, rv, err) * 1e-6;
	t->latency_spread_s =
		get_num(o, path, "latency_spread_us", true, FIG_LATENCY, rv, err) * 1e-6;
	t->links = (size_t)get_int(o, path, "links", 0, 1L << 40, rv, err);
	t->measured = get_bool(o, path, "measured", rv, err);
}

static void read_links(json_t *root, const struct dtplan__strmap *map,
		       struct dtplan_measurements *m, enum dtplan_err *rv, struct dtplan_error *err)
{
	json_t *a = get_node(root, "", "links", true, rv, err), *o;
	size_t i;
	char path[48];

	if (a == NULL)
		return;
	m->links = calloc(json_array_size(a) + 1, sizeof(*m->links));
	if (m->links == NULL) {
		*rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		return;
	}
	json_array_foreach(a, i, o)
	{
		struct dtplan_link_result *l = &m->links[i];
		int32_t from, to;
		char tier[1024];

		snprintf(path, sizeof(path), "links[%zu].", i);
		if (*rv == DTPLAN_OK && !json_is_object(o))
			*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					    "links[%zu]: not an object", i);
		if (*rv != DTPLAN_OK)
			return;
		from = host_index(map, json_object_get(o, "a"), "links[].a", rv, err);
		to = host_index(map, json_object_get(o, "b"), "links[].b", rv, err);
		l->round = (uint8_t)get_int(o, path, "round", 1, DTPLAN_PROBE_MAX_ROUNDS, rv, err);
		l->samples = (uint16_t)get_int(o, path, "samples", 0, 65535, rv, err);
		l->latency_s = get_num(o, path, "latency_us", true, FIG_LATENCY, rv, err) * 1e-6;
		l->latency_spread_s =
			get_num(o, path, "latency_spread_us", true, FIG_LATENCY, rv, err) * 1e-6;
		l->bandwidth_bytes_per_s =
			get_num(o, path, "bandwidth_bytes_per_s", true, FIG_RATE, rv, err);
		get_str(o, path, "tier", REQ, tier, sizeof(tier), rv, err);
		if (*rv == DTPLAN_OK && strcmp(tier, "intra_leaf") != 0 &&
		    strcmp(tier, "cross_leaf") != 0)
			*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					    "%stier: '%s' is not intra_leaf or cross_leaf", path,
					    tier);
		if (*rv == DTPLAN_OK && from == to)
			*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					    "%sa and b: the same host", path);
		if (*rv != DTPLAN_OK)
			return;
		l->from = (uint32_t)from;
		l->to = (uint32_t)to;
		l->flags = (get_bool(o, path, "ok", rv, err) ? DTPLAN_LINK_OK : 0) |
			   (get_bool(o, path, "concurrent", rv, err) ? DTPLAN_LINK_CONCURRENT : 0) |
			   (strcmp(tier, "cross_leaf") == 0 ? DTPLAN_LINK_CROSS : 0);
		m->n_links++;
	}
}

static void read_uplinks(json_t *root, struct dtplan_measurements *m, enum dtplan_err *rv,
			 struct dtplan_error *err)
{
	json_t *a = get_node(root, "", "uplinks", true, rv, err), *o;
	size_t i;
	char path[48];

	if (a == NULL)
		return;
	m->uplinks = calloc(json_array_size(a) + 1, sizeof(*m->uplinks));
	if (m->uplinks == NULL) {
		*rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		return;
	}
	json_array_foreach(a, i, o)
	{
		struct dtplan_uplink *u = &m->uplinks[i];

		snprintf(path, sizeof(path), "uplinks[%zu].", i);
		if (*rv == DTPLAN_OK && !json_is_object(o))
			*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s: not an object",
					    path);
		get_str(o, path, "switch", REQ, u->name, sizeof(u->name), rv, err);
		u->oversubscription =
			get_num(o, path, "oversubscription", false, FIG_RATIO, rv, err);
		u->configured = get_num(o, path, "configured", true, FIG_RATIO, rv, err);
		u->aggregate_bytes_per_s =
			get_num(o, path, "aggregate_bytes_per_s", false, FIG_RATE, rv, err);
		u->downlink_bytes_per_s =
			get_num(o, path, "downlink_bytes_per_s", false, FIG_RATE, rv, err);
		u->flows = (size_t)get_int(o, path, "flows", 0, 1L << 40, rv, err);
		u->saturated = get_bool(o, path, "saturated", rv, err);
		if (*rv != DTPLAN_OK)
			return;
		m->n_uplinks++;
	}
}

static void read_stragglers(json_t *root, const struct dtplan__strmap *map,
			    struct dtplan_measurements *m, enum dtplan_err *rv,
			    struct dtplan_error *err)
{
	json_t *a = get_node(root, "", "stragglers", true, rv, err), *o;
	size_t i;
	char path[48];

	if (a == NULL)
		return;
	m->stragglers = calloc(json_array_size(a) + 1, sizeof(*m->stragglers));
	if (m->stragglers == NULL) {
		*rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		return;
	}
	json_array_foreach(a, i, o)
	{
		struct dtplan_straggler *s = &m->stragglers[i];

		snprintf(path, sizeof(path), "stragglers[%zu].", i);
		if (*rv == DTPLAN_OK && !json_is_object(o))
			*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s: not an object",
					    path);
		if (*rv != DTPLAN_OK)
			return;
		host_index(map, json_object_get(o, "node"), "stragglers[].node", rv, err);
		get_str(o, path, "node", REQ, s->node, sizeof(s->node), rv, err);
		s->bandwidth_bytes_per_s =
			get_num(o, path, "bandwidth_bytes_per_s", false, FIG_RATE, rv, err);
		s->tier_median_bytes_per_s =
			get_num(o, path, "tier_median_bytes_per_s", false, FIG_RATE, rv, err);
		if (*rv != DTPLAN_OK)
			return;
		m->n_stragglers++;
	}
}

static void read_strings(json_t *root, const char *key, const struct dtplan__strmap *map,
			 struct dtplan_measurements *m, enum dtplan_err *rv,
			 struct dtplan_error *err)
{
	json_t *a = get_node(root, "", key, true, rv, err), *o;
	size_t i;

	if (a == NULL)
		return;
	if (map != NULL) {
		m->missing = calloc(json_array_size(a) + 1, sizeof(*m->missing));
		if (m->missing == NULL)
			*rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	}
	json_array_foreach(a, i, o)
	{
		if (*rv != DTPLAN_OK)
			return;
		if (map != NULL) {
			int32_t k = host_index(map, o, "missing[]", rv, err);

			if (k >= 0)
				m->missing[m->n_missing++] = (uint32_t)k;
		} else if (!json_is_string(o)) {
			*rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s[%zu]: not a string",
					    key, i);
		} else if (dtplan_measurements_add_note(m, "%s", json_string_value(o)) !=
			   DTPLAN_OK) {
			*rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		}
	}
}

/* The used object says what a plan took; a measurement read back starts
 * from nothing used (the reader's plan decides again). */
static enum dtplan_err measurements_from(json_t *root, struct dtplan_measurements **out,
					 struct dtplan_error *err)
{
	struct dtplan_measurements *m = NULL;
	struct dtplan__strmap map = {0};
	enum dtplan_err rv = DTPLAN_OK;
	json_t *hosts, *tiers, *h;
	size_t i, n;

	*out = NULL;
	if (!json_is_object(root))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "not a JSON object");
	hosts = get_node(root, "", "hosts", true, &rv, err);
	if (hosts == NULL)
		return rv;
	n = json_array_size(hosts);
	if (n == 0 || n > DTPLAN_HOSTLIST_MAX)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "hosts: %zu hosts (1 to %d)", n,
				     DTPLAN_HOSTLIST_MAX);
	m = dtplan_measurements_create(n, NULL);
	if (m == NULL || dtplan__strmap_init(&map, n) != DTPLAN_OK) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		goto out;
	}
	json_array_foreach(hosts, i, h)
	{
		if (!json_is_string(h) || json_string_length(h) == 0 ||
		    json_string_length(h) >= sizeof(m->hosts[0]) ||
		    strlen(json_string_value(h)) != json_string_length(h)) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					   "hosts[%zu]: not a host name of 1 to 63 characters", i);
			goto out;
		}
		memcpy(m->hosts[i], json_string_value(h), json_string_length(h) + 1);
		if (dtplan__strmap_put(&map, m->hosts[i], (int)i, NULL) != DTPLAN_OK) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					   "hosts[%zu]: '%s' named twice (or out of memory)", i,
					   m->hosts[i]);
			goto out;
		}
	}
	if ((size_t)get_int(root, "", "nodes", 1, DTPLAN_HOSTLIST_MAX, &rv, err) != n &&
	    rv == DTPLAN_OK)
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "nodes: not the %zu hosts", n);
	m->n_reported = (size_t)get_int(root, "", "nodes_reported", 0, (long)n, &rv, err);
	get_str(root, "", "source", REQ, m->source, sizeof(m->source), &rv, err);
	if (rv == DTPLAN_OK && strcmp(m->source, "prolog") != 0 &&
	    strcmp(m->source, "probe") != 0 && strcmp(m->source, "none") != 0)
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "source: '%s' is not prolog, probe or none", m->source);
	m->budget_s = get_num(root, "", "budget_seconds", true, FIG_BUDGET, &rv, err);
	m->elapsed_s = get_num(root, "", "elapsed_seconds", true, FIG_ELAPSED, &rv, err);
	get_str(root, "", "interface", REQ | DTPLAN_JGET_NULLABLE, m->interface,
		sizeof(m->interface), &rv, err);
	tiers = get_node(root, "", "tiers", false, &rv, err);
	if (tiers != NULL) {
		read_tier(tiers, "intra_leaf", &m->intra, &rv, err);
		read_tier(tiers, "cross_leaf", &m->cross, &rv, err);
	}
	read_uplinks(root, m, &rv, err);
	read_links(root, &map, m, &rv, err);
	read_stragglers(root, &map, m, &rv, err);
	read_strings(root, "missing", &map, m, &rv, err);
	read_strings(root, "notes", NULL, m, &rv, err);
	/* the notes past the first DTPLAN_MEASURE_MAX_NOTES, counted */
	if (json_object_get(root, "notes_more") != NULL)
		m->n_notes_more +=
			(size_t)get_int(root, "", "notes_more", 1, 1000000000L, &rv, err);
	/* only a measurement that failed says why (and files before it do not) */
	get_str(root, "", "failed", DTPLAN_JGET_NULLABLE, m->failed, sizeof(m->failed), &rv, err);
	if (rv != DTPLAN_OK)
		goto out;
	*out = m;
	m = NULL;
out:
	dtplan__strmap_fini(&map);
	dtplan_measurements_destroy(m);
	return rv;
}

/* Parses text; err names the line and column of a syntax error. */
static json_t *load(const char *text, enum dtplan_err *rv, struct dtplan_error *err)
{
	/* 2^20 hosts' map entries and their links (8 values each) fit */
	json_t *root = dtplan__json_load(text, text != NULL ? strlen(text) : 0, (size_t)1 << 23,
					 SRC, "", err);

	if (root == NULL)
		*rv = DTPLAN_ERR_PARSE;
	return root;
}

enum dtplan_err dtplan_measure_file_from_json(const char *text, struct dtplan_measure_file *f,
					      struct dtplan_error *err)
{
	enum dtplan_err rv = DTPLAN_OK;
	json_t *root, *records, *map, *meas, *o;
	char schema[64], *rec = NULL;
	size_t i;

	memset(f, 0, sizeof(*f));
	root = load(text, &rv, err);
	if (root == NULL)
		return rv;
	if (json_is_object(root) && json_object_get(root, "schema") == NULL) {
		/* a bare measurements object (dtplan probe --json): no records */
		rv = measurements_from(root, &f->m, err);
		if (rv == DTPLAN_OK) {
			f->host_record = malloc(f->m->n_nodes * sizeof(*f->host_record));
			if (f->host_record == NULL)
				rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
			for (i = 0; rv == DTPLAN_OK && i < f->m->n_nodes; i++)
				f->host_record[i] = -1;
		}
		goto out;
	}
	if (!json_is_object(root)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "not a JSON object");
		goto out;
	}
	get_str(root, "", "schema", REQ, schema, sizeof(schema), &rv, err);
	if (rv == DTPLAN_OK && strcmp(schema, DTPLAN_MEASURE_SCHEMA) != 0)
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "schema: '%s' (expected %s)",
				   schema, DTPLAN_MEASURE_SCHEMA);
	f->job_id = (uint32_t)get_int(root, "", "job_id", 0, UINT32_MAX, &rv, err);
	meas = get_node(root, "", "measurements", false, &rv, err);
	records = get_node(root, "", "records", true, &rv, err);
	map = get_node(root, "", "host_record", true, &rv, err);
	if (rv != DTPLAN_OK)
		goto out;
	rv = measurements_from(meas, &f->m, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (json_array_size(records) > f->m->n_nodes) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "records: %zu records for %zu hosts", json_array_size(records),
				   f->m->n_nodes);
		goto out;
	}
	f->records = calloc(json_array_size(records) + 1, sizeof(*f->records));
	f->host_record = calloc(f->m->n_nodes + 1, sizeof(*f->host_record));
	if (f->records == NULL || f->host_record == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		goto out;
	}
	json_array_foreach(records, i, o)
	{
		struct dtplan_error e = {0};

		rec = json_dumps(o, JSON_COMPACT);
		if (rec == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
			goto out;
		}
		if (dtplan_node_from_json(rec, &f->records[i], &e) != DTPLAN_OK) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "records[%zu]: %s", i,
					   e.text);
			goto out;
		}
		free(rec);
		rec = NULL;
		f->n_records++;
	}
	if (json_array_size(map) != f->m->n_nodes) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "host_record: %zu entries for %zu hosts", json_array_size(map),
				   f->m->n_nodes);
		goto out;
	}
	json_array_foreach(map, i, o)
	{
		json_int_t k = json_is_integer(o) ? json_integer_value(o) : -2;

		if (k < -1 || k >= (json_int_t)f->n_records) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					   "host_record[%zu]: not -1 or a record index below %zu",
					   i, f->n_records);
			goto out;
		}
		f->host_record[i] = (int32_t)k;
	}
out:
	free(rec);
	json_decref(root);
	if (rv != DTPLAN_OK)
		dtplan_measure_file_fini(f);
	return rv;
}
