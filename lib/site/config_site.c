/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config_site.c: the site file dtplan.conf.  Slurm-style lines of
 * whitespace-separated Key=Value tokens: SwitchName= lines describe switches
 * (Oversubscription=, UplinkBandwidth=), NodeName= lines sets of nodes
 * (GpuType=, Gpus=, NVLinkDomain=), any other line global settings
 * (lib/site/config.c holds their table).  Switch and node names are indexed, so
 * a file naming a million switches reads in linear time.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "site/site_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* State of one parse. */
struct site_parse {
	struct dtplan_config *c;
	const char *source;
	/* where each global setting was first given, for repeats */
	struct {
		int line[DTPLAN__CONFIG_MAX_SETTINGS]; /* 0: not given */
		char text[DTPLAN__CONFIG_MAX_SETTINGS][256];
	} seen;
	struct dtplan__strmap nodes; /* node -> nodeset index, keys in name_arrays */
	char (**name_arrays)[64];
	size_t n_name_arrays, name_arrays_cap;
	/* switch name -> index in c->switches; keys are the switches' own names,
	 * so the map is rebuilt whenever c->switches moves */
	struct dtplan__strmap switches;
	size_t switches_cap; /* entries allocated in c->switches */
	size_t n_expanded;   /* switch and node names the file's hostlists named */
	size_t nodesets_cap; /* entries allocated in c->nodesets */
	/* the global settings on the Key=Value engine: the settings' site
	 * names, then SwitchName and NodeName (refused after a line's start) */
	struct dtplan__kv_key keys[DTPLAN__KV_MAX_KEYS];
	struct dtplan__kv_table globals;
	int line; /* of the line the engine is on */
};

/* Most switches a configuration may describe (across its files). */
#define SWITCHES_MAX DTPLAN_HOSTLIST_MAX

/* Next capacity for an array of have entries that needs one more. */
static size_t grown(size_t have)
{
	return have < 8 ? 16 : 2 * have;
}

/* A global Key=Value of line `line`; a repeat must keep the first value. */
static enum dtplan_err set_global(struct site_parse *sp, const char *key, const char *value,
				  int line, struct dtplan_error *err)
{
	struct dtplan_error e = {0};
	struct dtplan__config_value v;
	enum dtplan_err rv;

	/* key is one of the engine's table: a setting's site name */
	rv = dtplan__config_parse_setting(key, true, value, &v, &e);
	if (rv != DTPLAN_OK)
		return dtplan__error(err, e.code, sp->source, line, "%s", e.text);
	if (sp->seen.line[v.index] != 0) {
		if (!dtplan__config_holds(sp->c, &v))
			return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, line,
					     "%s=%s conflicts with %s=%s at line %d",
					     dtplan__config_key(&v), value, dtplan__config_key(&v),
					     sp->seen.text[v.index], sp->seen.line[v.index]);
		return DTPLAN_OK;
	}
	sp->seen.line[v.index] = line;
	dtplan__strlcpy(sp->seen.text[v.index], value, sizeof(sp->seen.text[v.index]));
	dtplan__config_store(sp->c, &v);
	return DTPLAN_OK;
}

/* Splits "Key=Value" in place; NULL value when there is no '='. */
static char *split_token(char *tok)
{
	char *eq = strchr(tok, '=');

	if (eq == NULL)
		return NULL;
	*eq = '\0';
	return eq + 1;
}

/* (Re)builds sp->switches over c->switches[0..n_switches). */
static enum dtplan_err index_switches(struct site_parse *sp)
{
	const struct dtplan_config *c = sp->c;
	enum dtplan_err rv;

	dtplan__strmap_fini(&sp->switches);
	rv = dtplan__strmap_init(&sp->switches, sp->switches_cap);
	for (size_t i = 0; i < c->n_switches && rv == DTPLAN_OK; i++) {
		rv = dtplan__strmap_put(&sp->switches, c->switches[i].name, (int)i, NULL);
		if (rv == DTPLAN_ERR_INVAL)
			rv = DTPLAN_OK; /* a repeat made by hand: the first one wins */
	}
	return rv;
}

/* Room for one more switch: geometric growth, so that n switches cost O(n). */
static enum dtplan_err reserve_switch(struct site_parse *sp, int line, struct dtplan_error *err)
{
	struct dtplan_config *c = sp->c;
	struct dtplan_site_switch *tmp;
	size_t cap;

	if (c->n_switches >= SWITCHES_MAX)
		return dtplan__error(err, DTPLAN_ERR_RANGE, sp->source, line,
				     "more than %d switches", SWITCHES_MAX);
	if (c->n_switches < sp->switches_cap)
		return DTPLAN_OK;
	cap = grown(sp->switches_cap);
	tmp = realloc(c->switches, cap * sizeof(*tmp));
	if (tmp == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, sp->source, line, "out of memory");
	c->switches = tmp;
	sp->switches_cap = cap;
	if (index_switches(sp) != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, sp->source, line, "out of memory");
	return DTPLAN_OK;
}

static enum dtplan_err add_switch(struct site_parse *sp, const char *name, double oversub,
				  double uplink, int line, struct dtplan_error *err)
{
	struct dtplan_config *c = sp->c;
	struct dtplan_site_switch *sw;
	enum dtplan_err rv;
	int k = dtplan__strmap_get(&sp->switches, name);

	if (k >= 0) {
		sw = &c->switches[k];
		if (oversub > 0 && sw->oversubscription > 0 && sw->oversubscription != oversub)
			return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, line,
					     "switch '%s': Oversubscription %g conflicts with %g "
					     "at line %d",
					     name, oversub, sw->oversubscription, sw->line);
		if (uplink > 0 && sw->uplink_bytes_per_s > 0 && sw->uplink_bytes_per_s != uplink)
			return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, line,
					     "switch '%s': UplinkBandwidth %g B/s conflicts "
					     "with %g B/s at line %d",
					     name, uplink, sw->uplink_bytes_per_s, sw->line);
	} else {
		rv = reserve_switch(sp, line, err);
		if (rv != DTPLAN_OK)
			return rv;
		sw = &c->switches[c->n_switches];
		memset(sw, 0, sizeof(*sw));
		dtplan__strlcpy(sw->name, name, sizeof(sw->name));
		sw->line = line;
		if (dtplan__strmap_put(&sp->switches, sw->name, (int)c->n_switches, NULL) !=
		    DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, sp->source, line,
					     "out of memory");
		c->n_switches++;
	}
	if (oversub > 0)
		sw->oversubscription = oversub;
	if (uplink > 0)
		sw->uplink_bytes_per_s = uplink;
	return DTPLAN_OK;
}

/*
 * Every hostlist of one file together names at most DTPLAN_HOSTLIST_MAX
 * switches and nodes, so that a short file cannot expand into gigabytes
 * (doc/internals/limits.md).
 */
static enum dtplan_err count_names(struct site_parse *sp, size_t n, int line, const char *key,
				   const char *expr, struct dtplan_error *err)
{
	if (n <= DTPLAN_HOSTLIST_MAX - sp->n_expanded) {
		sp->n_expanded += n;
		return DTPLAN_OK;
	}
	return dtplan__error(err, DTPLAN_ERR_RANGE, sp->source, line,
			     "%s%.*s%s: the file's hostlists name more than %d switches and nodes "
			     "in all",
			     key, strlen(expr) > 40 ? 37 : 40, expr, strlen(expr) > 40 ? "..." : "",
			     DTPLAN_HOSTLIST_MAX);
}

/* The keys of a SwitchName= line. */
struct switch_line {
	double oversub, uplink;
};

static enum dtplan_err switch_oversub(void *obj, const struct dtplan__kv_key *k, const char *value,
				      struct dtplan_error *err)
{
	return dtplan__config_parse_oversub(k->name, value, &((struct switch_line *)obj)->oversub,
					    err);
}

static enum dtplan_err switch_uplink(void *obj, const struct dtplan__kv_key *k, const char *value,
				     struct dtplan_error *err)
{
	return dtplan__config_parse_link_rate(k->name, value, &((struct switch_line *)obj)->uplink,
					      err);
}

static const struct dtplan__kv_key switch_keys[] = {
	{.name = "Oversubscription", .kind = DTPLAN__KV_CUSTOM, .parse = switch_oversub},
	{.name = "UplinkBandwidth", .kind = DTPLAN__KV_CUSTOM, .parse = switch_uplink},
};

static const struct dtplan__kv_table switch_table = {
	.keys = switch_keys,
	.n = DTPLAN_ARRAY_SIZE(switch_keys),
	.sep = ' ',
	.nocase = true,
	.form = "Key=Value",
};

/* rest: the line after its SwitchName= token */
static enum dtplan_err parse_switch_line(struct site_parse *sp, char *first, char *rest, int line,
					 struct dtplan_error *err)
{
	const char *names_expr = first;
	char(*names)[64] = NULL;
	struct switch_line sl = {0, 0};
	double oversub, uplink;
	struct dtplan_error e = {0};
	char prefix[80];
	struct dtplan__kv_where where = {prefix, sp->source, line};
	size_t n = 0;
	enum dtplan_err rv;

	snprintf(prefix, sizeof(prefix), "SwitchName=%.*s%s: ", strlen(first) > 40 ? 37 : 40, first,
		 strlen(first) > 40 ? "..." : "");
	rv = dtplan__kv_parse(&switch_table, rest != NULL ? rest : "", &sl, NULL, &where, err);
	if (rv != DTPLAN_OK)
		return rv;
	oversub = sl.oversub;
	uplink = sl.uplink;
	if (oversub == 0 && uplink == 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, line,
				     "SwitchName=%s sets nothing (expected Oversubscription= or "
				     "UplinkBandwidth=)",
				     names_expr);
	rv = dtplan_hostlist_expand(names_expr, DTPLAN_HOSTLIST_MAX, &names, &n, &e);
	/* The hostlist's message quotes the expression too: a short start here. */
	if (rv != DTPLAN_OK)
		return dtplan__error(err, rv, sp->source, line, "SwitchName=%.*s%s: %s",
				     strlen(names_expr) > 40 ? 37 : 40, names_expr,
				     strlen(names_expr) > 40 ? "..." : "", e.text);
	rv = count_names(sp, n, line, "SwitchName=", names_expr, err);
	for (size_t i = 0; i < n && rv == DTPLAN_OK; i++)
		rv = add_switch(sp, names[i], oversub, uplink, line, err);
	free(names);
	return rv;
}

/* Adds a nodeset's names to the overlap map; names stay alive in sp. */
static enum dtplan_err index_nodeset(struct site_parse *sp, size_t set, struct dtplan_error *err)
{
	const struct dtplan_site_nodeset *ns = &sp->c->nodesets[set];
	char(*names)[64] = NULL, (**arrays)[64];
	struct dtplan_error e = {0};
	size_t n = 0;
	enum dtplan_err rv;
	int old;

	rv = dtplan_hostlist_expand(ns->nodes, DTPLAN_HOSTLIST_MAX, &names, &n, &e);
	if (rv != DTPLAN_OK)
		return dtplan__error(err, rv, sp->source, ns->line, "NodeName=%s: %s", ns->nodes,
				     e.text);
	rv = count_names(sp, n, ns->line, "NodeName=", ns->nodes, err);
	if (rv != DTPLAN_OK) {
		free(names);
		return rv;
	}
	if (sp->n_name_arrays == sp->name_arrays_cap) {
		size_t cap = grown(sp->name_arrays_cap);

		arrays = realloc(sp->name_arrays, cap * sizeof(*arrays));
		if (arrays == NULL) {
			free(names);
			return dtplan__error(err, DTPLAN_ERR_NOMEM, sp->source, ns->line,
					     "out of memory");
		}
		sp->name_arrays = arrays;
		sp->name_arrays_cap = cap;
	}
	sp->name_arrays[sp->n_name_arrays++] = names;
	for (size_t i = 0; i < n; i++) {
		rv = dtplan__strmap_put(&sp->nodes, names[i], (int)set, &old);
		if (rv == DTPLAN_ERR_INVAL)
			return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, ns->line,
					     "node '%s' of NodeName=%s is already in NodeName=%s "
					     "(line %d)",
					     names[i], ns->nodes, sp->c->nodesets[old].nodes,
					     sp->c->nodesets[old].line);
		if (rv != DTPLAN_OK)
			return dtplan__error(err, rv, sp->source, ns->line, "out of memory");
	}
	return DTPLAN_OK;
}

/* The keys of a NodeName= line, into a struct dtplan_site_nodeset. */
static enum dtplan_err node_name(void *obj, const struct dtplan__kv_key *k, const char *value,
				 struct dtplan_error *err)
{
	char *dst = (char *)obj + k->offset;

	if (strlen(value) >= k->size || !dtplan__config_valid_name(value))
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
				     "%s: '%s' is not a name (letters, digits, '-', '_', '.'; at "
				     "most %zu)",
				     k->name, value, k->size - 1);
	if (strcmp(k->name, "GpuType") == 0 &&
	    dtplan__config_check_gpu("GpuType", value, err) != DTPLAN_OK)
		return err != NULL ? err->code : DTPLAN_ERR_NOT_FOUND;
	dtplan__strlcpy(dst, value, k->size);
	return DTPLAN_OK;
}

#define NODE_NAME(n, field)                                                                        \
	{                                                                                          \
		.name = n, .kind = DTPLAN__KV_CUSTOM,                                              \
		.offset = offsetof(struct dtplan_site_nodeset, field),                             \
		.size = sizeof(((struct dtplan_site_nodeset *)0)->field), .parse = node_name       \
	}

static const struct dtplan__kv_key node_keys[] = {
	NODE_NAME("GpuType", gpu_type),
	{.name = "Gpus",
	 .kind = DTPLAN__KV_INT,
	 .offset = offsetof(struct dtplan_site_nodeset, gpus_per_node),
	 .min = 1,
	 .max = DTPLAN_NODE_MAX_GPUS},
	NODE_NAME("NVLinkDomain", nvlink_domain),
};

static const struct dtplan__kv_table node_table = {
	.keys = node_keys,
	.n = DTPLAN_ARRAY_SIZE(node_keys),
	.sep = ' ',
	.nocase = true,
	.form = "Key=Value",
};

/* rest: the line after its NodeName= token */
static enum dtplan_err parse_node_line(struct site_parse *sp, char *first, char *rest, int line,
				       struct dtplan_error *err)
{
	struct dtplan_site_nodeset ns = {.line = line};
	struct dtplan_config *c = sp->c;
	struct dtplan_site_nodeset *tmp;
	bool seen[DTPLAN_ARRAY_SIZE(node_keys)], any = false;
	char prefix[sizeof(ns.nodes) + 16];
	struct dtplan__kv_where where = {prefix, sp->source, line};
	enum dtplan_err rv;

	if (strlen(first) >= sizeof(ns.nodes))
		return dtplan__error(err, DTPLAN_ERR_RANGE, sp->source, line,
				     "NodeName=%.40s...: longer than %zu characters", first,
				     sizeof(ns.nodes) - 1);
	dtplan__strlcpy(ns.nodes, first, sizeof(ns.nodes));
	snprintf(prefix, sizeof(prefix), "NodeName=%s: ", ns.nodes);
	rv = dtplan__kv_parse(&node_table, rest != NULL ? rest : "", &ns, seen, &where, err);
	if (rv != DTPLAN_OK)
		return rv;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(seen); i++)
		any = any || seen[i];
	if (!any)
		return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, line,
				     "NodeName=%s sets nothing (expected GpuType=, Gpus= or "
				     "NVLinkDomain=)",
				     ns.nodes);
	if (c->n_nodesets == sp->nodesets_cap) {
		size_t cap = grown(sp->nodesets_cap);

		tmp = realloc(c->nodesets, cap * sizeof(*tmp));
		if (tmp == NULL)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, sp->source, line,
					     "out of memory");
		c->nodesets = tmp;
		sp->nodesets_cap = cap;
	}
	c->nodesets[c->n_nodesets++] = ns;
	return index_nodeset(sp, c->n_nodesets - 1, err);
}

static bool starts_a_set(const char *key)
{
	return dtplan__streq_nocase(key, "SwitchName") || dtplan__streq_nocase(key, "NodeName");
}

/* A global setting's value (the engine's CUSTOM parse). */
static enum dtplan_err global_value(void *obj, const struct dtplan__kv_key *k, const char *value,
				    struct dtplan_error *err)
{
	struct site_parse *sp = obj;

	return set_global(sp, k->name, value, sp->line, err);
}

/* SwitchName= or NodeName= after a line's first token. */
static enum dtplan_err not_first(void *obj, const struct dtplan__kv_key *k, const char *value,
				 struct dtplan_error *err)
{
	struct site_parse *sp = obj;

	(void)value;
	return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, sp->line,
			     "%s= must start its own line", k->name);
}

static void globals_init(struct site_parse *sp)
{
	size_t n = dtplan__config_kv_keys(true, global_value, sp->keys);

	sp->keys[n++] = (struct dtplan__kv_key){.name = "SwitchName",
						.kind = DTPLAN__KV_CUSTOM,
						.parse = not_first,
						.hidden = true};
	sp->keys[n++] = (struct dtplan__kv_key){.name = "NodeName",
						.kind = DTPLAN__KV_CUSTOM,
						.parse = not_first,
						.hidden = true};
	sp->globals = (struct dtplan__kv_table){
		.keys = sp->keys,
		.n = n,
		.sep = ' ',
		.nocase = true,
		.form = "Key=Value",
		.known = "the settings of dtplan.conf(5)",
		.repeat = true,
	};
}

/* A SwitchName= or NodeName= line (its first token decides), or global
 * Key=Value settings on the one engine (base/base.h): a setting given again
 * must keep its value (set_global()). */
static enum dtplan_err parse_site_line(struct site_parse *sp, char *line, int lineno,
				       struct dtplan_error *err)
{
	const struct dtplan__kv_where where = {"", sp->source, lineno};
	size_t skip = strspn(line, " \t\r\v\f"), len = strcspn(line + skip, " \t\r\v\f=");
	char key[16], *save = NULL, *tok, *value;

	if (line[skip + len] == '=' && len < sizeof(key)) {
		memcpy(key, line + skip, len);
		key[len] = '\0';
		if (starts_a_set(key)) {
			tok = strtok_r(line, " \t\r\v\f", &save);
			value = split_token(tok);
			if (value[0] == '\0')
				return dtplan__error(err, DTPLAN_ERR_PARSE, sp->source, lineno,
						     "%s= has no value", tok);
			if (dtplan__streq_nocase(tok, "SwitchName"))
				return parse_switch_line(sp, value, save, lineno, err);
			return parse_node_line(sp, value, save, lineno, err);
		}
	}
	sp->line = lineno;
	return dtplan__kv_parse(&sp->globals, line, sp, NULL, &where, err);
}

enum dtplan_err dtplan_config_parse_string(struct dtplan_config *c, const char *text,
					   const char *source_name, struct dtplan_error *err)
{
	struct site_parse *sp = NULL;
	char *copy = NULL, *line, *next;
	const char *source = source_name ? source_name : "dtplan.conf";
	enum dtplan_err rv;
	int lineno = 0;

	if (c == NULL || text == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0, "no configuration to parse");
	sp = calloc(1, sizeof(*sp));
	copy = strdup(text);
	if (sp == NULL || copy == NULL || dtplan__strmap_init(&sp->nodes, 64) != DTPLAN_OK) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
		goto out;
	}
	sp->c = c;
	sp->source = source;
	globals_init(sp);
	/* Arrays from earlier files are exactly full: the first addition grows them. */
	sp->switches_cap = c->n_switches;
	sp->nodesets_cap = c->n_nodesets;
	if (index_switches(sp) != DTPLAN_OK) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
		goto out;
	}
	/* Node sets from earlier files take part in the overlap check. */
	for (size_t i = 0; i < c->n_nodesets; i++) {
		rv = index_nodeset(sp, i, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	for (next = copy; (line = dtplan__conf_line(&next, &lineno)) != NULL;) {
		rv = parse_site_line(sp, line, lineno, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	rv = DTPLAN_OK;
out:
	if (sp != NULL) {
		dtplan__strmap_fini(&sp->nodes);
		dtplan__strmap_fini(&sp->switches);
		for (size_t i = 0; i < sp->n_name_arrays; i++)
			free(sp->name_arrays[i]);
		free(sp->name_arrays);
	}
	free(sp);
	free(copy);
	return rv;
}

enum dtplan_err dtplan_config_parse_file(struct dtplan_config *c, const char *path,
					 struct dtplan_error *err)
{
	char *text = NULL;
	enum dtplan_err rv;

	if (c == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, path ? path : "", 0,
				     "no configuration given");
	rv = dtplan_file_read(path, DTPLAN_FILE_SITE, &text, NULL, err);
	if (rv == DTPLAN_OK)
		rv = dtplan_config_parse_string(c, text, path, err);
	if (rv == DTPLAN_OK && path != c->site_file) {
		if (strlen(path) >= sizeof(c->site_file))
			rv = dtplan__error(err, DTPLAN_ERR_RANGE, path, 0,
					   "file name is longer than %zu characters",
					   sizeof(c->site_file) - 1);
		else
			dtplan__strlcpy(c->site_file, path, sizeof(c->site_file));
	}
	free(text);
	return rv;
}
