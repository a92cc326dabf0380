/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pipeline.c: 1F1B pipeline schedule simulation and bubble.
 *
 * The simulation does not use the closed form.  Each stage runs its
 * operations in a fixed order (the 1F1B order, or Megatron-LM's interleaved
 * 1F1B order), and each operation starts when its stage is free and the
 * operation it depends on has finished:
 *   forward of micro-batch i on virtual stage k   needs forward (i, k-1)
 *   backward of micro-batch i on virtual stage k  needs backward (i, k+1), or
 *                                                 forward (i, k) on the last one
 * With v chunks, chunk c of stage s is virtual stage c p + s (Narayanan et
 * al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
 * Megatron-LM", arXiv 2104.04473, section 2.2.2).  Communication is free.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest schedule simulated: 2 m p v operations. */
#define MAX_OPS 50000000.0

/* Adds one operation to a stage's order. */
static void push(struct dtplan_pipeline_op *ops, size_t *n, int stage, int mb, int chunk,
		 bool backward)
{
	struct dtplan_pipeline_op *op = &ops[(*n)++];

	op->stage = stage;
	op->microbatch = mb;
	op->chunk = chunk;
	op->backward = backward;
	op->start = op->end = 0.0;
}

/*
 * 1F1B (PipeDream-Flush, Narayanan et al., arXiv 2006.09503; Megatron-LM
 * forward_backward_pipelining_without_interleaving): stage s runs
 * min(p-s-1, m) warm-up forwards, then alternates one forward and one
 * backward, then finishes the remaining backwards.
 */
static void order_1f1b(struct dtplan_pipeline_op *ops, int p, int m, int s)
{
	int warmup = p - s - 1 < m ? p - s - 1 : m;
	int steady = m - warmup;
	size_t n = 0;

	for (int i = 0; i < warmup; i++)
		push(ops, &n, s, i, 0, false);
	for (int i = 0; i < steady; i++) {
		push(ops, &n, s, warmup + i, 0, false);
		push(ops, &n, s, i, 0, true);
	}
	for (int i = steady; i < m; i++)
		push(ops, &n, s, i, 0, true);
}

/*
 * Megatron-LM's interleaved 1F1B (forward_backward_pipelining_with_interleaving):
 * the stage's m v forward slots k are taken in groups of p micro-batches per
 * chunk: chunk (k mod pv) / p, micro-batch (k / pv) p + k mod p; backwards
 * walk the chunks in reverse.  Warm-up is 2(p-s-1) + (v-1)p forwards (all of
 * them when m == p), then one forward and one backward alternate.
 */
static void order_interleaved(struct dtplan_pipeline_op *ops, int p, int m, int v, int s)
{
	int total = m * v, group = p * v;
	int warmup;
	size_t n = 0;

	if (m == p) {
		warmup = total;
	} else {
		warmup = 2 * (p - s - 1) + (v - 1) * p;
		if (warmup > total)
			warmup = total;
	}
	/* slot k: micro-batch k / group * p + k % p, forward chunk k % group / p */
	for (int k = 0; k < warmup; k++)
		push(ops, &n, s, k / group * p + k % p, k % group / p, false);
	for (int i = 0; i < total - warmup; i++) {
		int k = warmup + i;

		push(ops, &n, s, k / group * p + k % p, k % group / p, false);
		push(ops, &n, s, i / group * p + i % p, v - 1 - i % group / p, true);
	}
	for (int k = total - warmup; k < total; k++)
		push(ops, &n, s, k / group * p + k % p, v - 1 - k % group / p, true);
}

static enum dtplan_err check_in(const struct dtplan_pipeline_in *in, struct dtplan_error *err)
{
	if (in->stages < 1 || in->microbatches < 1 || in->chunks < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "pipeline: stages (%d), micro-batches (%d) and chunks (%d) "
				     "must be at least 1",
				     in->stages, in->microbatches, in->chunks);
	if (!isfinite(in->forward) || !isfinite(in->backward) || in->forward <= 0.0 ||
	    in->backward <= 0.0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "pipeline: forward (%g s) and backward (%g s) times must be "
				     "more than zero",
				     in->forward, in->backward);
	if (in->chunks > 1 && in->microbatches % in->stages != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "pipeline: interleaving (%d chunks) needs the micro-batches "
				     "(%d) to be a multiple of the stages (%d)",
				     in->chunks, in->microbatches, in->stages);
	if (2.0 * in->microbatches * in->stages * in->chunks > MAX_OPS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "pipeline: %d stages x %d micro-batches x %d chunks is too "
				     "large to simulate",
				     in->stages, in->microbatches, in->chunks);
	return DTPLAN_OK;
}

enum dtplan_err dtplan_pipeline_simulate(const struct dtplan_pipeline_in *in,
					 struct dtplan_pipeline **out, struct dtplan_error *err)
{
	struct dtplan_pipeline *pl = NULL;
	double *fend = NULL, *bend = NULL, *free_at = NULL;
	size_t *next = NULL;
	size_t per_stage, n_ops, done = 0, n_virtual;
	double f, b;
	enum dtplan_err rv;
	int p, m, v;

	if (out != NULL)
		*out = NULL;
	if (in == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "pipeline: no input or output");
		goto out;
	}
	rv = check_in(in, err);
	if (rv != DTPLAN_OK)
		goto out;
	p = in->stages;
	m = in->microbatches;
	v = in->chunks;
	f = in->forward / v;
	b = in->backward / v;
	per_stage = 2 * (size_t)m * (size_t)v;
	n_ops = per_stage * (size_t)p;
	n_virtual = (size_t)p * (size_t)v;

	pl = calloc(1, sizeof(*pl));
	if (pl != NULL)
		pl->ops = calloc(n_ops, sizeof(*pl->ops));
	fend = malloc(n_virtual * (size_t)m * sizeof(*fend));
	bend = malloc(n_virtual * (size_t)m * sizeof(*bend));
	free_at = calloc((size_t)p, sizeof(*free_at));
	next = calloc((size_t)p, sizeof(*next));
	if (pl == NULL || pl->ops == NULL || fend == NULL || bend == NULL || free_at == NULL ||
	    next == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "pipeline: out of memory");
		goto out;
	}
	pl->n_ops = n_ops;
	for (size_t i = 0; i < n_virtual * (size_t)m; i++)
		fend[i] = bend[i] = -1.0;
	for (int s = 0; s < p; s++) {
		if (v == 1)
			order_1f1b(pl->ops + (size_t)s * per_stage, p, m, s);
		else
			order_interleaved(pl->ops + (size_t)s * per_stage, p, m, v, s);
	}

	/*
	 * Advance every stage as far as its dependencies allow until all ran.
	 * Forwards flow down the stages and backwards up: the sweeps alternate
	 * direction so that either chain crosses all stages in one sweep (one
	 * direction only takes a sweep per stage a backward crosses: P^2).
	 */
	for (int sweep = 0; done < n_ops; sweep++) {
		bool progress = false;

		for (int j = 0; j < p; j++) {
			int s = sweep % 2 == 0 ? j : p - 1 - j;

			while (next[s] < per_stage) {
				struct dtplan_pipeline_op *op =
					&pl->ops[(size_t)s * per_stage + next[s]];
				size_t k = (size_t)op->chunk * (size_t)p + (size_t)s;
				size_t i = (size_t)op->microbatch;
				double dep;

				if (!op->backward)
					dep = k == 0 ? 0.0 : fend[(k - 1) * (size_t)m + i];
				else if (k == n_virtual - 1)
					dep = fend[k * (size_t)m + i];
				else
					dep = bend[(k + 1) * (size_t)m + i];
				if (dep < 0.0)
					break;
				op->start = dep > free_at[s] ? dep : free_at[s];
				op->end = op->start + (op->backward ? b : f);
				free_at[s] = op->end;
				if (op->backward)
					bend[k * (size_t)m + i] = op->end;
				else
					fend[k * (size_t)m + i] = op->end;
				if (op->end > pl->makespan)
					pl->makespan = op->end;
				next[s]++;
				done++;
				progress = true;
			}
		}
		if (!progress) {
			rv = dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, "", 0,
					   "pipeline: the schedule for %d stages, %d micro-batches "
					   "and %d chunks deadlocks",
					   p, m, v);
			goto out;
		}
	}
	pl->ideal = m * (in->forward + in->backward);
	pl->bubble_fraction = (pl->makespan - pl->ideal) / pl->makespan;
	*out = pl;
	pl = NULL;
	rv = DTPLAN_OK;
out:
	dtplan_pipeline_destroy(pl);
	free(fend);
	free(bend);
	free(free_at);
	free(next);
	return rv;
}

void dtplan_pipeline_destroy(struct dtplan_pipeline *p)
{
	if (p == NULL)
		return;
	free(p->ops);
	free(p);
}

/* 1F1B bubble as a fraction of the step (Narayanan et al., arXiv 2104.04473, eq. 1):
 * (p-1)(F+B) idle out of (m+p-1)(F+B). */
double dtplan_bubble_fraction(int stages, int microbatches)
{
	if (stages < 1 || microbatches < 1)
		return NAN;
	return (double)(stages - 1) / (double)(microbatches + stages - 1);
}

/* Interleaved bubble relative to ideal compute (arXiv 2104.04473, section 2.2.2): (p-1)/(v m). */
double dtplan_bubble_ratio_interleaved(int stages, int microbatches, int chunks)
{
	if (stages < 1 || microbatches < 1 || chunks < 1)
		return NAN;
	return (double)(stages - 1) / ((double)chunks * microbatches);
}

/* ------------------------------------------------------------------------
 * Layers per stage
 * ---------------------------------------------------------------------- */

/*
 * A split's cost (its slowest stage, in layer-equivalents) and its order
 * key: the cost, then the sum of the squared stage loads (the most even of
 * the other stages), then the lighter first and last stage.
 */
struct split_key {
	double cost, squares;
	int first, last;
};

static bool key_before(const struct split_key *a, const struct split_key *b)
{
	if (fabs(a->cost - b->cost) > 1e-9)
		return a->cost < b->cost;
	if (fabs(a->squares - b->squares) > 1e-9 * fmax(1.0, b->squares))
		return a->squares < b->squares;
	if (a->first != b->first)
		return a->first < b->first;
	return a->last < b->last;
}

/*
 * Splits r layers between the first and the last stage (each >= 1) so that
 * the slower of the two is fastest: the real optimum f = (r + e1 - e0) / 2,
 * tried rounded down and up.
 */
static struct split_key split_ends(int r, double e0, double e1, int mid, int n_mid)
{
	struct split_key best = {INFINITY, INFINITY, 0, 0};
	double f = floor((r + e1 - e0) / 2.0);

	for (int k = 0; k < 2; k++) {
		double fk = f + k;
		struct split_key c;

		if (fk < 1.0)
			fk = 1.0;
		if (fk > r - 1)
			fk = r - 1;
		c.first = (int)fk;
		c.last = r - c.first;
		c.cost = fmax(n_mid > 0 ? mid : 0.0, fmax(c.first + e0, c.last + e1));
		c.squares = (c.first + e0) * (c.first + e0) + (c.last + e1) * (c.last + e1) +
			    (double)n_mid * mid * mid;
		if (key_before(&c, &best))
			best = c;
	}
	return best;
}

/* Middle counts tried one by one; past it, windows around the optimum. */
#define SPLIT_SCAN 4096
#define SPLIT_WINDOW 3

static void try_mid(int layers, int k, int mid, double e0, double e1, struct split_key *best,
		    int *best_mid)
{
	struct split_key c = split_ends(layers - k * mid, e0, e1, mid, k);

	if (key_before(&c, best)) {
		*best = c;
		*best_mid = mid;
	}
}

enum dtplan_err dtplan_stage_split(int layers, int stages, double first_extra, double last_extra,
				   struct dtplan_stage_layers *out, struct dtplan_error *err)
{
	struct split_key best = {INFINITY, INFINITY, 0, 0};
	int best_mid = 0, k = stages - 2;

	if (out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "stage split: no output");
	memset(out, 0, sizeof(*out));
	if (stages < 1 || stages > layers)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "PP %d: a pipeline needs 1 to %d stages for %d layers", stages,
				     layers > 0 ? layers : 0, layers);
	if (!(first_extra >= 0.0) || !(last_extra >= 0.0) || !isfinite(first_extra) ||
	    !isfinite(last_extra))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "stage split: extra work must be finite and >= 0");
	if (stages == 1) {
		out->first = layers;
		return DTPLAN_OK;
	}
	if (stages == 2) {
		best = split_ends(layers, first_extra, last_extra, 0, 0);
	} else {
		/* middle stages hold `mid` each, the ends share the rest */
		int most = (layers - 2) / k, anchors[5], n_anchors = 0;
		double e0 = first_extra, e1 = last_extra;

		if (most <= SPLIT_SCAN) {
			for (int mid = 1; mid <= most; mid++)
				try_mid(layers, k, mid, e0, e1, &best, &best_mid);
		} else {
			/* A long scan (huge layer counts): the best lies where
			 * the middles meet the ends, all balanced ((L + e0 +
			 * e1) / p) or one end at a single layer ((L - 1 + e) /
			 * (p - 1)), or at a bound of mid. */
			anchors[n_anchors++] = 1;
			anchors[n_anchors++] = most;
			anchors[n_anchors++] = (int)((layers + e0 + e1) / stages);
			anchors[n_anchors++] = (int)((layers - 1 + e0) / (stages - 1));
			anchors[n_anchors++] = (int)((layers - 1 + e1) / (stages - 1));
			for (int a = 0; a < n_anchors; a++)
				for (int mid = anchors[a] - SPLIT_WINDOW;
				     mid <= anchors[a] + SPLIT_WINDOW; mid++)
					if (mid >= 1 && mid <= most)
						try_mid(layers, k, mid, e0, e1, &best, &best_mid);
		}
	}
	out->first = best.first;
	out->middle = best_mid;
	out->last = best.last;
	return DTPLAN_OK;
}

int dtplan_stage_layers_at(const struct dtplan_stage_layers *s, int stages, int i)
{
	if (s == NULL || i < 0 || i >= stages)
		return 0;
	if (i == 0)
		return s->first;
	if (i == stages - 1)
		return s->last;
	return s->middle;
}

void dtplan_stage_extras(const struct dtplan_model *m, int seq, double *first_extra,
			 double *last_extra)
{
	struct dtplan__model_parts parts;
	double layer_flops;

	*first_extra = 0.0;
	*last_extra = 0.0;
	dtplan__model_parts(m, &parts);
	if (!(parts.head_flops_params > 0.0))
		return;
	/* forward FLOPs per token: a layer 2 P_layer + 4 s h (attention
	 * scores and values), the output layer 2 h V */
	layer_flops = 2.0 * parts.active_per_layer + 4.0 * (seq > 0 ? seq : 0) * (double)m->hidden;
	if (layer_flops > 0.0)
		*last_extra = 2.0 * parts.head_flops_params / layer_flops;
}

enum dtplan_err dtplan_stage_split_model(const struct dtplan_model *m, int seq, int stages,
					 struct dtplan_stage_layers *out, struct dtplan_error *err)
{
	double e0, e1;

	if (m == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "stage split: no model");
	dtplan_stage_extras(m, seq, &e0, &e1);
	return dtplan_stage_split(m->layers, stages, e0, e1, out, err);
}

char *dtplan_stage_layers_format(const struct dtplan_stage_layers *s, int stages)
{
	size_t size = (size_t)(stages > 0 ? stages : 1) * 12 + 1, len = 0;
	char *buf = malloc(size);

	if (buf == NULL)
		return NULL;
	buf[0] = '\0';
	for (int i = 0; i < stages; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%d", i > 0 ? "," : "",
					dtplan_stage_layers_at(s, stages, i));
	return buf;
}
