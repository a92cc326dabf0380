/*
 * plan_ranks_json.c: the part of a plan's JSON that tasks need (parallel
 * degrees, node order, ranks), read back in every srun step so that all
 * tasks follow the plan the batch step made instead of recomputing it.
 *
 * Reads what lib/plan_json.c writes: "parallelism", "checkpoint",
 * "placement" {"nodes", "ranks"}, "degraded".  Lenient where it costs
 * nothing: node entries may be strings or objects with "name", a rank's node
 * an index or a name, "recompute" a name or a number.
 */
#include "config.h"

#include "dtplan_private.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "plan JSON"

/* Optional integer member: absent leaves *out; present must be an integer. */
static enum dtplan_err get_int(json_t *obj, const char *where, const char *key, int *out,
			       struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	if (!json_is_integer(v) || json_integer_value(v) < -1 ||
	    json_integer_value(v) > 1000000000)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.%s: expected a whole number", where, key);
	*out = (int)json_integer_value(v);
	return DTPLAN_OK;
}

static enum dtplan_err read_best(json_t *root, struct dtplan_candidate *b,
				 struct dtplan_error *err)
{
	static const struct {
		const char *key;
		size_t offset;
	} ints[] = {
		{"tp", offsetof(struct dtplan_candidate, tp)},
		{"pp", offsetof(struct dtplan_candidate, pp)},
		{"dp", offsetof(struct dtplan_candidate, dp)},
		{"zero", offsetof(struct dtplan_candidate, zero)},
		{"micro_batch", offsetof(struct dtplan_candidate, micro_batch)},
		{"num_microbatches", offsetof(struct dtplan_candidate, num_microbatches)},
	};
	json_t *best = json_object_get(root, "parallelism");
	json_t *rc;
	enum dtplan_err ret;
	int n;

	if (!json_is_object(best))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no \"parallelism\" object");
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(ints); i++) {
		ret = get_int(best, "parallelism", ints[i].key,
			      (int *)((char *)b + ints[i].offset), err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (b->tp < 1 || b->pp < 1 || b->dp < 1)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism: tp, pp and dp must be whole numbers >= 1");
	rc = json_object_get(best, "recompute");
	if (json_is_string(rc))
		return dtplan_recompute_parse(json_string_value(rc), &b->recompute, err);
	n = (int)b->recompute;
	ret = get_int(best, "parallelism", "recompute", &n, err);
	if (ret != DTPLAN_OK)
		return ret;
	if (n < DTPLAN_RECOMPUTE_NONE || n > DTPLAN_RECOMPUTE_FULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism.recompute: %d unknown", n);
	b->recompute = (enum dtplan_recompute)n;
	return DTPLAN_OK;
}

static void read_ckpt(json_t *root, struct dtplan_ckpt *c)
{
	json_t *ck = json_object_get(root, "checkpoint");

	if (!json_is_object(ck))
		return;
	if (json_is_number(json_object_get(ck, "interval_seconds")))
		c->interval_seconds = json_number_value(json_object_get(ck, "interval_seconds"));
	if (json_is_number(json_object_get(ck, "interval_steps")))
		c->interval_steps = json_number_value(json_object_get(ck, "interval_steps"));
}

static enum dtplan_err read_nodes(json_t *placement, struct dtplan_plan *p,
				  struct dtplan_error *err)
{
	json_t *nodes = json_object_get(placement, "nodes");
	json_t *v;
	size_t i;

	if (!json_is_array(nodes) || json_array_size(nodes) == 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.nodes array");
	p->node_names = calloc(json_array_size(nodes), sizeof(*p->node_names));
	p->node_leaf = calloc(json_array_size(nodes), sizeof(*p->node_leaf));
	if (p->node_names == NULL || p->node_leaf == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	json_array_foreach(nodes, i, v) {
		json_t *name = json_is_object(v) ? json_object_get(v, "name") : v;

		if (!json_is_string(name) || json_string_length(name) == 0 ||
		    json_string_length(name) >= sizeof(p->node_names[0]))
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "placement.nodes[%zu]: expected a host name", i);
		dtplan__strlcpy(p->node_names[i], json_string_value(name),
				sizeof(p->node_names[i]));
		p->node_leaf[i] = -1;
		p->n_nodes = i + 1;
	}
	return DTPLAN_OK;
}

static enum dtplan_err read_rank(json_t *v, size_t i, struct dtplan_plan *p,
				 struct dtplan_error *err)
{
	struct dtplan_rank *r = &p->ranks[i];
	char where[48];
	json_t *node, *nic;
	enum dtplan_err ret;
	int rank = (int)i;

	snprintf(where, sizeof(where), "placement.ranks[%zu]", i);
	if (!json_is_object(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s: expected an object", where);
	r->domain = -1;
	if ((ret = get_int(v, where, "rank", &rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "gpu", &r->gpu, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "local_rank", &r->local_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "tp_rank", &r->tp_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "pp_rank", &r->pp_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "dp_rank", &r->dp_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "domain", &r->domain, err)) != DTPLAN_OK)
		return ret;
	if (rank != (int)i)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: rank %d out of order", where, rank);
	node = json_object_get(v, "node");
	r->node = -1;
	if (json_is_integer(node) && json_integer_value(node) >= 0 &&
	    (size_t)json_integer_value(node) < p->n_nodes)
		r->node = (int)json_integer_value(node);
	for (size_t n = 0; json_is_string(node) && n < p->n_nodes; n++)
		if (strcmp(p->node_names[n], json_string_value(node)) == 0)
			r->node = (int)n;
	if (r->node < 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.node: not one of the plan's %zu nodes", where, p->n_nodes);
	if (r->local_rank < 0 || r->gpu < 0 || r->tp_rank < 0 || r->pp_rank < 0 || r->dp_rank < 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: ranks and GPU indexes must be >= 0", where);
	nic = json_object_get(v, "nic");
	if (json_is_string(nic))
		dtplan__strlcpy(r->nic, json_string_value(nic), sizeof(r->nic));
	return DTPLAN_OK;
}

enum dtplan_err dtplan_plan_ranks_from_json(const char *text, struct dtplan_plan **out,
					    struct dtplan_error *err)
{
	struct dtplan_plan *p = NULL;
	json_t *root = NULL, *placement, *ranks, *schema, *v;
	json_error_t jerr;
	enum dtplan_err rv, ret;
	size_t i;

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "no text given");
		goto out;
	}
	root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, jerr.line, "%s", jerr.text);
		goto out;
	}
	if (!json_is_object(root)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "expected an object");
		goto out;
	}
	schema = json_object_get(root, "schema");
	if (schema != NULL && (!json_is_string(schema) ||
			       strncmp(json_string_value(schema), "dtplan.plan/", 12) != 0)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "schema is not " DTPLAN_PLAN_SCHEMA);
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		goto out;
	}
	ret = read_best(root, &p->best, err);
	if (ret != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	placement = json_object_get(root, "placement");
	if (!json_is_object(placement)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "no \"placement\" object: the plan places no ranks");
		goto out;
	}
	ret = read_nodes(placement, p, err);
	if (ret != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	read_ckpt(root, &p->ckpt);
	ranks = json_object_get(placement, "ranks");
	if (!json_is_array(ranks) || json_array_size(ranks) == 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.ranks array");
		goto out;
	}
	p->ranks = calloc(json_array_size(ranks), sizeof(*p->ranks));
	if (p->ranks == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		goto out;
	}
	json_array_foreach(ranks, i, v) {
		ret = read_rank(v, i, p, err);
		if (ret != DTPLAN_OK) {
			rv = ret;
			goto out;
		}
		p->n_ranks = i + 1;
	}
	if ((size_t)p->best.tp * p->best.pp * p->best.dp != p->n_ranks) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "%zu ranks but tp %d x pp %d x dp %d", p->n_ranks, p->best.tp,
				   p->best.pp, p->best.dp);
		goto out;
	}
	if (json_is_true(json_object_get(root, "degraded"))) {
		p->degraded = true;
		v = json_object_get(root, "degraded_reason");
		dtplan__strlcpy(p->degraded_reason, json_is_string(v) ? json_string_value(v) : "",
				sizeof(p->degraded_reason));
	}
	*out = p;
	p = NULL;
	rv = DTPLAN_OK;
out:
	dtplan_plan_destroy(p);
	json_decref(root);
	return rv;
}
