/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan.c: request + cluster -> plan: the fabric, the search, the
 * checkpoint interval, the placement and the warnings, in that order
 * (doc/internals/map.md).  No I/O.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "fabric/fabric.h"
#include "plan/plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest GPU count tried when looking for the smallest one that fits. */
#define MAX_FIT_GPUS (1 << 20)

void dtplan_plan_destroy(struct dtplan_plan *p)
{
	if (p == NULL)
		return;
	free(p->warnings);
	free(p->node_names);
	free(p->node_leaf);
	free(p->ranks);
	free(p->leaf_names);
	free(p->leaf_nodes);
	free(p->leaf_ratio);
	free(p->node_run);
	dtplan_measurements_destroy(p->measurements);
	free(p);
}

void dtplan_plan_set_degraded(struct dtplan_plan *p, const char *fmt, ...)
{
	va_list ap;

	if (p == NULL || fmt == NULL)
		return;
	p->degraded = true;
	va_start(ap, fmt);
	vsnprintf(p->degraded_reason, sizeof(p->degraded_reason), fmt, ap);
	va_end(ap);
}

/* "1 node", "3 nodes". */
static const char *nodes_word(long n)
{
	return n == 1 ? "node" : "nodes";
}

/* Node counts scanned one by one when looking for the fewest that fit. */
#define FIT_SCAN_NODES 512

static bool fits_on(const struct dtplan_request *req, long nodes)
{
	struct dtplan_request r = *req;
	struct dtplan__search probe;

	r.gpus = (int)(nodes * req->gpus_per_node);
	return dtplan__search_run(&r, true, &probe, NULL) == DTPLAN_OK && probe.have_best;
}

static bool fits_on_gpus(const struct dtplan_request *req, long gpus)
{
	struct dtplan_request r = *req;
	struct dtplan__search probe;

	r.gpus = (int)gpus;
	return dtplan__search_run(&r, true, &probe, NULL) == DTPLAN_OK && probe.have_best;
}

/*
 * The fewest GPUs above req->gpus on which the request fits memory: below
 * one node every count up to the node's, then whole nodes of the request's
 * gpus_per_node.  Fitting is not monotone in the node count (a prime count
 * leaves PP few divisors), so node counts double from the request's until
 * one fits, then every count between the last miss and it is tried, the
 * lowest first; a window wider than FIT_SCAN_NODES is first halved towards
 * the fit.  0 when nothing up to MAX_FIT_GPUS fits.
 */
static long fewest_fitting(const struct dtplan_request *req)
{
	long gpn = req->gpus_per_node, lo, hi = 0;

	/* up to a whole node: the node counts below start above it */
	for (long g = req->gpus + 1; g <= gpn; g++)
		if (fits_on_gpus(req, g))
			return g;
	lo = (req->gpus + gpn - 1) / gpn; /* nodes that do not fit */
	if (lo < 1)
		lo = 1;
	for (long n = lo * 2; n * gpn <= MAX_FIT_GPUS; n *= 2) {
		if (fits_on(req, n)) {
			hi = n;
			break;
		}
		lo = n;
	}
	if (hi == 0)
		return 0;
	while (hi - lo > FIT_SCAN_NODES) {
		long mid = lo + (hi - lo) / 2;

		if (fits_on(req, mid))
			hi = mid;
		else
			lo = mid;
	}
	for (long n = lo + 1; n < hi; n++)
		if (fits_on(req, n))
			return n * gpn;
	return hi * gpn;
}

long dtplan_plan_fewest_gpus(const struct dtplan_request *req, struct dtplan_error *err)
{
	struct dtplan_request r, resolved;
	const struct dtplan_request *rr;

	if (req == NULL) {
		dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no request");
		return -1;
	}
	r = *req;
	r.gpus = r.gpus_per_node;
	rr = dtplan__request_resolve(&r, &resolved);
	if (dtplan__request_check(rr, err) != DTPLAN_OK ||
	    dtplan__request_check_fixed(rr, err) != DTPLAN_OK)
		return -1;
	/* every count from one GPU up, as the no-fit error scans them */
	r = *rr;
	r.gpus = 0;
	if (fits_on_gpus(&r, 1))
		return 1;
	r.gpus = 1;
	return fewest_fitting(&r);
}

/*
 * Fills err for an exact global batch that no fitting split trains, naming
 * the nearest batches the best inexact plan's DP width makes.  Returns
 * DTPLAN_OK when the request fails for another reason.
 */
static enum dtplan_err exact_batch_refusal(const struct dtplan_request *req,
					   const struct dtplan__fabric *fab,
					   struct dtplan_error *err)
{
	struct dtplan_request r = *req;
	struct dtplan__search s;
	long g = req->global_batch, dp, below, above;

	r.exact_batch = false;
	if (dtplan__search_run_fabric(&r, fab, true, &s, NULL) != DTPLAN_OK || !s.have_best)
		return DTPLAN_OK;
	dp = s.best.dp;
	below = g / dp * dp;
	above = below + dp;
	if (below < dp)
		return dtplan__error(
			err, DTPLAN_ERR_NO_FIT, "gbs", 0,
			"global batch %ld is exact, but no split of %d GPUs that fits "
			"trains it: the narrowest that fits has DP %ld (TP %d x PP %d), "
			"so the nearest global batch is %ld",
			g, req->gpus, dp, s.best.tp, s.best.pp, above);
	return dtplan__error(err, DTPLAN_ERR_NO_FIT, "gbs", 0,
			     "global batch %ld is exact, but no split of %d GPUs that fits trains "
			     "it: with DP %ld (TP %d x PP %d) the nearest are %ld and %ld",
			     g, req->gpus, dp, s.best.tp, s.best.pp, below, above);
}

/* Fills err for a request where nothing fits, and says what would. */
static enum dtplan_err no_fit(const struct dtplan_request *req, const struct dtplan__fabric *fab,
			      const struct dtplan__search *s, struct dtplan_error *err)
{
	char count[32], cap[32];
	long fewest, gpn = req->gpus_per_node;
	enum dtplan_err rv;

	if (req->exact_batch) {
		rv = exact_batch_refusal(req, fab, err);
		if (rv != DTPLAN_OK)
			return rv;
	}
	dtplan_format_count(req->model.params, count, sizeof(count));
	if (s->n_considered == 0 && s->min_dp > req->global_batch)
		return dtplan__error(
			err, DTPLAN_ERR_NO_FIT, "", 0,
			"%s: global batch %d is too small for %d GPUs: the narrowest "
			"split the rules allow (TP within an NVLink domain and dividing "
			"the heads, PP up to the %d layers) has DP %d, so the global "
			"batch must be at least %d",
			req->model.name, req->global_batch, req->gpus, req->model.layers, s->min_dp,
			s->min_dp);
	if (s->n_considered == 0)
		return dtplan__error(
			err, DTPLAN_ERR_NO_FIT, "", 0,
			"%s: no TP x PP x DP split of %d GPUs meets the rules (TP within "
			"an NVLink domain and dividing the %d heads and the GPUs, PP up "
			"to the %d layers, DP x micro-batch within %.0f%% of the global "
			"batch %d) with the choices fixed in the request",
			req->model.name, req->gpus, req->model.heads, req->model.layers,
			DTPLAN_BATCH_TOLERANCE * 100.0, req->global_batch);
	dtplan_format_bytes(dtplan_request_usable_memory(req), cap, sizeof(cap));
	fewest = fewest_fitting(req);
	if (fewest > 0 && fewest < gpn)
		return dtplan__error(
			err, DTPLAN_ERR_NO_FIT, "", 0,
			"%s (%s parameters) does not fit on %d %s GPUs (%s usable each, "
			"%zu configurations tried); the fewest that fit are %ld GPUs "
			"(of one %ld-GPU node)",
			req->model.name, count, req->gpus, req->gpu.name, cap, s->n_considered,
			fewest, gpn);
	if (fewest > 0)
		return dtplan__error(
			err, DTPLAN_ERR_NO_FIT, "", 0,
			"%s (%s parameters) does not fit on %d %s GPUs (%s usable each, "
			"%zu configurations tried); the fewest that fit are %ld GPUs "
			"(%ld %s of %ld)",
			req->model.name, count, req->gpus, req->gpu.name, cap, s->n_considered,
			fewest, fewest / gpn, nodes_word(fewest / gpn), gpn);
	return dtplan__error(
		err, DTPLAN_ERR_NO_FIT, "", 0,
		"%s (%s parameters) does not fit on %d %s GPUs (%s usable each), nor on "
		"any count of %ld-GPU nodes up to %d GPUs with these settings",
		req->model.name, count, req->gpus, req->gpu.name, cap, gpn, MAX_FIT_GPUS);
}

static enum dtplan_err plan_checkpoint(struct dtplan_plan *p, struct dtplan_error *err)
{
	const struct dtplan_request *r = &p->request;
	struct dtplan_ckpt_in in = {
		.gpus = r->gpus,
		.mtbf_gpu_hours = r->mtbf_gpu_hours,
		.restart_seconds = r->restart_seconds,
		.step_seconds = p->best.step.total,
	};

	/* bf16 weights, fp32 master, Adam m and v: 16 bytes per parameter
	 * (12 without the master copy); gradients are not saved but the bf16
	 * copy is, so the count matches the ledger's. */
	p->ckpt_bytes = (r->no_master_copy ? 12.0 : 16.0) * r->model.params;
	in.write_seconds = p->ckpt_bytes / r->ckpt_write_bytes_per_s;
	return dtplan_ckpt_compute(&in, &p->ckpt, err);
}

/*
 * The whole run (doc/internals/cost-model.md, "Time to train"): the steps
 * that train the asked tokens at the plan's global batch, their time, and the
 * wall time once checkpoint writes and the work lost to failures (the
 * checkpoint's waste fraction of the wall time) are added.
 */
static void plan_training(struct dtplan_plan *p)
{
	const struct dtplan_request *r = &p->request;
	struct dtplan_training *t = &p->training;
	double per_step = (double)p->best.global_batch * r->seq;

	p->have_training = r->train_tokens > 0.0 && per_step > 0.0;
	if (!p->have_training)
		return;
	t->tokens = r->train_tokens;
	t->steps = ceil(r->train_tokens / per_step);
	t->compute_seconds = t->steps * p->best.step.total;
	t->goodput = 1.0 - p->ckpt.waste_fraction;
	t->wall_seconds = t->goodput > 0.0 ? t->compute_seconds / t->goodput : INFINITY;
}

/* A warning for the plan: code "" when there is none. */
struct note {
	char code[DTPLAN_WARN_CODE_MAX];
	char text[DTPLAN_WARN_TEXT_MAX];
};

/*
 * Without an inventory, the site file's NodeName= GpuType= of the
 * allocation's nodes replaces the default type and the global GpuType=
 * (issue 33: GB200 racks described as NodeName=node[1-18] GpuType=gb200
 * Gpus=4 NVLinkDomain=rack1 were planned as h100-sxm).  What the user asked
 * for stays, with a note when the site says otherwise.
 */
static void site_gpu(struct dtplan_request *r, const struct dtplan__fabric *f, struct note *note)
{
	const struct dtplan_gpu *t =
		f->site_gpu != NULL ? dtplan_gpu_find(f->site_gpu, NULL) : NULL;

	if (t == NULL || strcmp(t->name, r->gpu.name) == 0)
		return;
	if (r->gpu_from == DTPLAN_GPU_FROM_USER) {
		snprintf(note->code, sizeof(note->code), "gpu-type");
		snprintf(note->text, sizeof(note->text),
			 "planned for %s GPUs as asked, but the site file gives the nodes %s",
			 r->gpu.name, t->name);
		return;
	}
	r->gpu = *t;
	r->gpu_from = DTPLAN_GPU_FROM_SITE;
}

/*
 * The GPU the allocation's inventory measured replaces the default type or
 * the site's GpuType= (issue 13, finding 20: T4 nodes were planned as
 * h100-sxm).  A model in the catalog takes its entry, with the measured
 * memory when that differs by more than 10% (a GCD of an MI250X holds half
 * the package's); a model not in the catalog keeps the request's compute
 * figures but takes its name and measured memory, and the plan says so.
 * What the user asked for stays, with a note when the nodes differ.
 */
static void measured_gpu(struct dtplan_request *r, const struct dtplan__fabric *f,
			 struct note *note)
{
	const struct dtplan_node_gpu *g = NULL;
	const struct dtplan_gpu *match;
	char have[32], cat[32];

	note->code[0] = '\0';
	for (size_t i = 0; g == NULL && i < f->n_nodes; i++)
		if (f->inv[i] != NULL && f->inv[i]->n_gpus > 0 && f->inv[i]->gpus[0].model[0])
			g = &f->inv[i]->gpus[0];
	if (g == NULL) {
		site_gpu(r, f, note);
		return;
	}
	match = dtplan_gpu_match(g->model, g->memory_bytes);
	if (r->gpu_from == DTPLAN_GPU_FROM_USER) {
		if (match != NULL && strcmp(match->name, r->gpu.name) != 0) {
			snprintf(note->code, sizeof(note->code), "gpu-type");
			snprintf(note->text, sizeof(note->text),
				 "planned for %s GPUs as asked, but the nodes have %.64s (%s)",
				 r->gpu.name, g->model, match->name);
		}
		return;
	}
	if (match != NULL) {
		r->gpu = *match;
		if (g->memory_bytes > 0 &&
		    fabs(g->memory_bytes - match->memory_bytes) > 0.1 * match->memory_bytes) {
			r->gpu.memory_bytes = g->memory_bytes;
			snprintf(note->code, sizeof(note->code), "gpu-memory");
			snprintf(note->text, sizeof(note->text),
				 "the nodes' %.64s report %s of memory, not the %s of a catalog "
				 "%s: planned with %s",
				 g->model, dtplan_format_bytes(g->memory_bytes, have, sizeof(have)),
				 dtplan_format_bytes(match->memory_bytes, cat, sizeof(cat)),
				 match->name, have);
		}
		return;
	}
	snprintf(note->code, sizeof(note->code), "gpu-unknown");
	if (g->memory_bytes > 0) {
		snprintf(note->text, sizeof(note->text),
			 "GPU model '%.64s' is not in dtplan's catalog: planned with its %s of "
			 "memory and the compute and NVLink figures of %s (give gpu= in "
			 "--dt-train, or GpuType= in the site file, for a catalog type)",
			 g->model, dtplan_format_bytes(g->memory_bytes, have, sizeof(have)),
			 r->gpu.name);
		dtplan__strlcpy(r->gpu.name, g->model, sizeof(r->gpu.name));
		r->gpu.memory_bytes = g->memory_bytes;
	} else {
		snprintf(note->text, sizeof(note->text),
			 "GPU model '%.64s' is not in dtplan's catalog and its memory is unknown: "
			 "planned as %s (give gpu= in --dt-train, or GpuType= in the site file)",
			 g->model, r->gpu.name);
	}
}

enum dtplan_err dtplan_plan_create(const struct dtplan_request *req,
				   const struct dtplan_cluster *cluster, struct dtplan_plan **out,
				   struct dtplan_error *err)
{
	struct dtplan_plan *p = NULL;
	struct dtplan__fabric *fab = NULL;
	struct dtplan_request placed;
	struct dtplan__search s;
	struct dtplan_request resolved;
	struct note note = {{0}, {0}};
	enum dtplan_err rv;

	if (out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no output pointer");
		goto out;
	}
	*out = NULL;
	req = dtplan__request_resolve(req, &resolved);
	if (req != NULL && cluster != NULL && (cluster->n_nodes > 0 || cluster->n_hosts > 0)) {
		/* the allocation decides the GPU count and GPUs per node */
		rv = dtplan__fabric_build(req, cluster, &fab, err);
		if (rv != DTPLAN_OK)
			goto out;
		placed = *req;
		placed.gpus = (int)fab->n_gpus;
		placed.gpus_per_node = fab->gpus_per_node;
		measured_gpu(&placed, fab, &note);
		req = &placed;
	}
	rv = dtplan__request_check(req, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (!(req->mtbf_gpu_hours > 0.0) || !(req->ckpt_write_bytes_per_s > 0.0) ||
	    req->restart_seconds < 0.0) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				   "MTBF and checkpoint write bandwidth must be > 0, restart >= 0");
		goto out;
	}
	rv = dtplan__request_check_fixed(req, err);
	if (rv != DTPLAN_OK)
		goto out;
	rv = dtplan__search_run_fabric(req, fab, false, &s, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (!s.have_best) {
		rv = no_fit(req, fab, &s, err);
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	/* the caller's calibration is borrowed: the warnings' searches (on the
	 * fewest leaves) apply it as this search did; the plan drops it below */
	p->request = *req;
	p->best = s.best;
	p->have_runner_up = s.have_runner_up;
	p->runner_up = s.runner_up;
	memcpy(p->runner_up_reason, s.runner_up_reason, sizeof(p->runner_up_reason));
	p->n_considered = s.n_considered;
	p->n_fit = s.n_fit;
	rv = plan_checkpoint(p, err);
	if (rv != DTPLAN_OK)
		goto out;
	plan_training(p);
	if (fab != NULL) {
		rv = dtplan__placement_fill(p, fab, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	rv = dtplan__plan_warnings(p, fab, err);
	if (rv != DTPLAN_OK)
		goto out;
	p->request.calibration = NULL; /* the candidates keep what it gave */
	if (note.code[0] != '\0') {
		rv = dtplan_plan_add_warning(p, note.code, "%s", note.text);
		if (rv != DTPLAN_OK) {
			dtplan__error(err, rv, "", 0, "out of memory");
			goto out;
		}
	}
	*out = p;
	p = NULL;
out:
	dtplan__fabric_destroy(fab);
	dtplan_plan_destroy(p);
	return rv;
}
