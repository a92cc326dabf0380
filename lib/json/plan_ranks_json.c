/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan_ranks_json.c: a plan's JSON read back.  dtplan_plan_ranks_from_json()
 * reads the part tasks need (parallel degrees, node order, ranks) in every
 * srun step, so that all tasks follow the plan the batch step made instead
 * of recomputing it; dtplan_plan_from_json() reads everything the text and
 * the picture show (dtplan show).
 *
 * Reads what lib/json/plan_json.c writes: "parallelism", "checkpoint",
 * "placement" {"nodes", "ranks", "leaves"}, "degraded", and for the whole
 * plan the model, GPUs, framework, attention and precision, memory,
 * prediction, runner-up, time to train and warnings.  Lenient where it costs
 * nothing: node entries may be strings or objects with "name", a rank's node
 * an index or a name, "recompute" a name or a number, members the text does
 * not show (vp, offload, training, ...) may be absent.
 *
 * The ranks reader runs in slurmstepd on every node of every step, on a
 * file the user names (DTPLAN_FILE), so it is a small streaming reader
 * rather than a document tree: a tree of a 64 MiB file of "{}," took 5 GB
 * and 12 s, and a 16,384-node plan 183 MB and 3 s (issue 13, finding 9).
 * The text is read twice, without allocating: once to validate it and find
 * the members the reader reads, once to read them.  Memory is the plan's own
 * (60 bytes a rank, 68 a node), allocated after the counts are checked
 * against the parallel degrees and the limits (doc/internals/limits.md);
 * node names are found by binary search.  Time is linear (n log n for
 * names).
 *
 * The whole-plan reader shares that pass, the reader of the parallelism
 * (one for both, so that a mistake there is the same error whichever meets
 * it) and the placement's (the large part of a plan), and reads the small
 * members the text shows with Jansson, each from its own span of the text
 * and at most MAX_MEMBER_TEXT bytes of it, so that no member builds a tree
 * larger than a few megabytes whatever the file holds.  Errors name the member (and the
 * line, where the text is at fault).
 *
 * The parts (plan_read_int.h): this file, the first pass and the entry
 * points; plan_read_stream.c, the tokenizer; plan_read_ranks.c, the
 * streaming readers of the parallelism, checkpoint and placement;
 * plan_read_whole.c, the Jansson readers of the rest.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/plan_read_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Members of the top-level object (a plan has about 20). */
#define MAX_TOP_MEMBERS 256

/* Most text of one top-level member the whole-plan reader builds a tree of
 * (a plan's are under 64 KiB; the warnings about 600 KiB at most). */
#define MAX_MEMBER_TEXT (1 << 20)

/* ------------------------------------------------------------------------
 * The document
 * ---------------------------------------------------------------------- */

enum {
	M_SCHEMA,
	M_PARALLELISM,
	M_CHECKPOINT,
	M_PLACEMENT,
	M_DEGRADED,
	M_REASON,
	/* the whole plan's only */
	M_MODEL,
	M_GPU,
	M_MEMORY,
	M_PREDICTION,
	M_RUNNER_UP,
	M_WARNINGS,
	M_GPUS,
	M_GPUS_PER_NODE,
	M_BATCH,
	M_EXACT,
	M_CONSIDERED,
	M_FITTING,
	M_FRAMEWORK,
	M_ATTENTION,
	M_PRECISION,
	M_MOMENTS,
	M_GRADS,
	M_TRAINING,
	M__N
};

static const char *const top_keys[M__N] = {
	[M_SCHEMA] = "schema",
	[M_PARALLELISM] = "parallelism",
	[M_CHECKPOINT] = "checkpoint",
	[M_PLACEMENT] = "placement",
	[M_DEGRADED] = "degraded",
	[M_REASON] = "degraded_reason",
	[M_MODEL] = "model",
	[M_GPU] = "gpu",
	[M_MEMORY] = "memory",
	[M_PREDICTION] = "prediction",
	[M_RUNNER_UP] = "runner_up",
	[M_WARNINGS] = "warnings",
	[M_GPUS] = "gpus",
	[M_GPUS_PER_NODE] = "gpus_per_node",
	[M_BATCH] = "global_batch_requested",
	[M_EXACT] = "global_batch_exact",
	[M_CONSIDERED] = "considered",
	[M_FITTING] = "fitting",
	[M_FRAMEWORK] = "framework",
	[M_ATTENTION] = "attention",
	[M_PRECISION] = "precision",
	[M_MOMENTS] = "moments",
	[M_GRADS] = "grads",
	[M_TRAINING] = "training",
};

/*
 * First pass: the whole text is one valid JSON object; where its members
 * start and end.  A name given twice is refused, as a parser building a
 * tree would (names of 64 characters or more are not ours and not
 * compared).
 */
static enum dtplan_err scan_top(struct dtplan__rd *r, struct dtplan__span *found)
{
	char keys[MAX_TOP_MEMBERS][64];
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t n_keys = 0, len;
	char key[64];
	int m;

	if (dtplan__rd_peek(r) != '{' && dtplan__rd_peek(r) != '[')
		return dtplan__rd_syntax(r, "'[' or '{' expected");
	if (dtplan__rd_peek(r) == '[') {
		if ((ret = dtplan__rd_skip_value(r)) != DTPLAN_OK)
			return ret;
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "expected an object");
	}
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		len = strlen(key);
		for (size_t k = 0; len < sizeof(key) - 1 && k < n_keys; k++)
			if (strcmp(keys[k], key) == 0)
				return dtplan__rd_syntax(r, "duplicate object key '%s'", key);
		if (n_keys == MAX_TOP_MEMBERS)
			return dtplan__rd_syntax(r, "more than %d members in the plan",
						 MAX_TOP_MEMBERS);
		memcpy(keys[n_keys++], key, sizeof(key));
		for (m = 0; m < M__N && strcmp(key, top_keys[m]) != 0; m++)
			;
		if (m < M__N) {
			found[m].found = true;
			found[m].pos = r->pos;
		}
		if ((ret = dtplan__rd_skip_value(r)) != DTPLAN_OK)
			return ret;
		if (m < M__N)
			found[m].end = r->pos;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (dtplan__rd_peek(r) != '\0')
		return dtplan__rd_syntax(r, "end of file expected");
	return DTPLAN_OK;
}

/*
 * The whole plan's small members (all but the parallelism and the
 * placement) as one object, each parsed from its own span of the text: at
 * most MAX_MEMBER_TEXT bytes each, so that the trees stay small.  The first
 * pass checked the syntax and the depth; what Jansson still refuses (a
 * nested key given twice, an integer past 64 bits) is named with the
 * member and its line.  Caller frees *root with json_decref().
 */
static enum dtplan_err member_trees(const struct dtplan__rd *r, const struct dtplan__span *found,
				    json_t **root)
{
	static const int members[] = {M_CHECKPOINT,    M_MODEL,     M_GPU,       M_MEMORY,
				      M_PREDICTION,    M_RUNNER_UP, M_WARNINGS,  M_GPUS,
				      M_GPUS_PER_NODE, M_BATCH,     M_EXACT,     M_CONSIDERED,
				      M_FITTING,       M_FRAMEWORK, M_ATTENTION, M_PRECISION,
				      M_MOMENTS,       M_GRADS,     M_TRAINING};
	json_error_t jerr;
	json_t *v;

	*root = json_object();
	if (*root == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(members); i++) {
		const struct dtplan__span *s = &found[members[i]];
		const char *name = top_keys[members[i]];

		if (!s->found)
			continue;
		if (s->end - s->pos > MAX_MEMBER_TEXT)
			return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC,
					     dtplan__rd_line_at(r->s, s->pos),
					     "%s: longer than the %d bytes a plan member may "
					     "take",
					     name, MAX_MEMBER_TEXT);
		v = json_loadb(r->s + s->pos, s->end - s->pos,
			       JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
		if (v == NULL)
			return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC,
					     dtplan__rd_line_at(r->s, s->pos) +
						     (jerr.line > 0 ? jerr.line - 1 : 0),
					     "%s: %s", name, jerr.text);
		if (json_object_set_new(*root, name, v) != 0)
			return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	}
	return DTPLAN_OK;
}

/* whole: the whole plan, placement optional; else what tasks need, placement
 * required. */
static enum dtplan_err read_plan(const char *text, bool whole, struct dtplan_plan **out,
				 struct dtplan_error *err)
{
	struct dtplan__span found[M__N];
	struct dtplan_plan *p = NULL;
	struct dtplan__rd r = {.s = text, .err = err}, sub;
	json_t *root = NULL;
	enum dtplan_err rv;
	char schema[64];
	size_t len = 0;

	memset(found, 0, sizeof(found));
	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "no text given");
		goto out;
	}
	rv = scan_top(&r, found);
	if (rv != DTPLAN_OK)
		goto out;
	if (found[M_SCHEMA].found || whole) {
		sub = dtplan__rd_at(&r, found[M_SCHEMA]);
		if (!found[M_SCHEMA].found || dtplan__rd_peek(&sub) != '"' ||
		    dtplan__rd_string(&sub, schema, sizeof(schema), &len) != DTPLAN_OK ||
		    len >= sizeof(schema) || strncmp(schema, "dtplan.plan/", 12) != 0) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					   "schema is not " DTPLAN_PLAN_SCHEMA);
			goto out;
		}
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		goto out;
	}
	if (!found[M_PARALLELISM].found) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no \"parallelism\" object");
		goto out;
	}
	sub = dtplan__rd_at(&r, found[M_PARALLELISM]);
	rv = dtplan__plan_read_parallelism(&sub, &p->best);
	if (rv != DTPLAN_OK)
		goto out;
	if (whole) {
		rv = member_trees(&r, found, &root);
		if (rv == DTPLAN_OK)
			rv = dtplan__plan_read_whole(root, p, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	sub = dtplan__rd_at(&r, found[M_PLACEMENT]);
	if (!found[M_PLACEMENT].found && !whole) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "no \"placement\" object: the plan places no ranks");
		goto out;
	}
	if (found[M_PLACEMENT].found && (!whole || dtplan__rd_peek(&sub) != 'n')) {
		rv = dtplan__plan_read_placement(&sub, p, whole);
		if (rv != DTPLAN_OK)
			goto out;
	}
	if (found[M_CHECKPOINT].found) {
		sub = dtplan__rd_at(&r, found[M_CHECKPOINT]);
		rv = dtplan__plan_read_ckpt(&sub, &p->ckpt);
		if (rv != DTPLAN_OK)
			goto out;
	}
	if (found[M_DEGRADED].found) {
		sub = dtplan__rd_at(&r, found[M_DEGRADED]);
		p->degraded = dtplan__rd_peek(&sub) == 't';
	}
	if (p->degraded && found[M_REASON].found) {
		sub = dtplan__rd_at(&r, found[M_REASON]);
		if (dtplan__rd_peek(&sub) == '"')
			rv = dtplan__rd_string(&sub, p->degraded_reason, sizeof(p->degraded_reason),
					       NULL);
		if (rv != DTPLAN_OK)
			goto out;
	}
	*out = p;
	p = NULL;
	rv = DTPLAN_OK;
out:
	json_decref(root);
	dtplan_plan_destroy(p);
	return rv;
}

enum dtplan_err dtplan_plan_ranks_from_json(const char *text, struct dtplan_plan **out,
					    struct dtplan_error *err)
{
	return read_plan(text, false, out, err);
}

enum dtplan_err dtplan_plan_from_json(const char *text, struct dtplan_plan **out,
				      struct dtplan_error *err)
{
	return read_plan(text, true, out, err);
}
