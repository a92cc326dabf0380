/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan/plan.h: the request's checks, the search and the plan's warnings.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by lib/ files of this area and of the areas above it
 * (tests/check_layers.sh checks).
 */
#ifndef DTPLAN_PLAN_PLAN_H
#define DTPLAN_PLAN_PLAN_H

#include "dtplan.h"
#include "base/base.h"
#include "fabric/fabric.h"

/* ------------------------------------------------------------------------
 * Request (lib/plan/request.c)
 * ---------------------------------------------------------------------- */

/*
 * Fills what a request leaves to the model: seq 0 becomes
 * dtplan_request_seq()'s length, and seq_from says where it came from.  Returns req itself when nothing
 * is left open, else buf holding the resolved copy.
 */
const struct dtplan_request *dtplan__request_resolve(const struct dtplan_request *req,
						     struct dtplan_request *buf);

/*
 * Checks that a request is complete and consistent (counts >= 1, fixed
 * choices in range, bandwidths > 0).  DTPLAN_ERR_INVAL naming the field.
 */
enum dtplan_err dtplan__request_check(const struct dtplan_request *req, struct dtplan_error *err);

/* Fixed choices that can never be met (TP not dividing the heads or GPUs, PP
 * above the layers, ZeRO-2/3 with PP, ...): DTPLAN_ERR_INVAL naming the
 * choice in err->source ("tp", "pp", "zero", "micro-batch"). */
enum dtplan_err dtplan__request_check_fixed(const struct dtplan_request *r,
					    struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Search (lib/plan/search.c; one candidate: lib/plan/candidate.c), used by
 * lib/plan/plan.c and the tests
 * ---------------------------------------------------------------------- */

/*
 * Candidates predicted within this fraction of the best time the model can
 * vouch for (the smallest step time with links at DTPLAN__LINK_EFFICIENCY_LOW
 * of their bandwidth) are ties, broken by network bytes then simplicity.
 */
#define DTPLAN__TIE_FRACTION 0.03
#define DTPLAN__LINK_EFFICIENCY_LOW 0.5

/* Fewest tokens of each sequence a CP rank keeps when CP is searched:
 * below it ring attention's per-block exchange outlasts the block's
 * attention (doc/internals/cost-model.md, "Context parallelism"). */
#define DTPLAN__CP_MIN_TOKENS 8192

/* Fraction of the DP/ZeRO communication hidden behind compute that is
 * still charged: the collectives' kernels slow the compute they overlap. */
#define DTPLAN__OVERLAP_TAX 0.1

/* The same for ZeRO-3's per-micro-batch weight gathers and gradient
 * reductions (FSDP): fitted by tests/calibrate.py on the published FSDP
 * runs (llm-foundry, torchtitan).  With the gathers and reductions in the
 * frameworks' buckets and NCCL's latency (lib/cost/comm.c) it is 0.852
 * (0.951 while Blackwell's rows shared Hopper's shares), inside its range;
 * it was at its bound, 1, before (doc/internals/cost-model.md,
 * "Calibration"). */
#define DTPLAN__ZERO3_OVERLAP_TAX 0.852

/* Outcome of one search over a request. */
struct dtplan__search {
	struct dtplan_candidate best;
	bool have_best;
	int min_dp; /* narrowest DP of a (tp, pp) split the rules allow; 0 none */
	bool have_runner_up;
	struct dtplan_candidate runner_up;
	char runner_up_reason[256];
	size_t n_considered; /* configurations examined */
	size_t n_fit;        /* of them, fitting memory */
};

/*
 * The ledger's input for candidate c of request r: the one place the
 * request's framework, moments, precision, attention and master copy and the
 * candidate's split reach the ledger (the search, the allocation warnings
 * and dtplan_request_model_state()).  The input borrows r's model and c's
 * stages.
 */
void dtplan__ledger_in(const struct dtplan_request *r, const struct dtplan_candidate *c,
		       struct dtplan_ledger_in *out);

/*
 * Evaluates one configuration: fills c->memory and, when it fits, the
 * predicted step, FLOPs and network bytes.  c->tp, pp, dp, zero,
 * micro_batch and recompute are inputs; num_microbatches is set.  *fits
 * says whether the ledger total is within memory * (1 - headroom).
 */
enum dtplan_err dtplan__candidate_evaluate(const struct dtplan_request *req,
					   struct dtplan_candidate *c, bool *fits,
					   struct dtplan_error *err);

/*
 * Runs the search.  With first_fit, stops at the first configuration that
 * fits (used to find the smallest GPU count); out->best is then that one.
 * Without a fit, out->have_best is false and DTPLAN_OK is returned.
 */
enum dtplan_err dtplan__search_run(const struct dtplan_request *req, bool first_fit,
				   struct dtplan__search *out, struct dtplan_error *err);

/* "TP 8 x PP 4 x DP 4, ZeRO-1, micro-batch 1 x 256, selective recompute" */
const char *dtplan__candidate_describe(const struct dtplan_candidate *c, char *buf, size_t size);

/*
 * Adds every warning of a finished plan: the fabric's (f NULL: planned
 * without a cluster) then the step's, in that order.
 */
enum dtplan_err dtplan__plan_warnings(struct dtplan_plan *p, const struct dtplan__fabric *f,
				      struct dtplan_error *err);

/* Search over a fabric (NULL: as dtplan__search_run()). */
enum dtplan_err dtplan__search_run_fabric(const struct dtplan_request *req,
					  const struct dtplan__fabric *fab, bool first_fit,
					  struct dtplan__search *out, struct dtplan_error *err);

/*
 * The same search with its pruning off: every candidate evaluated and
 * ranked.  For the tests that check the pruning changes no plan.
 */
enum dtplan_err dtplan__search_run_exhaustive(const struct dtplan_request *req,
					      const struct dtplan__fabric *fab,
					      struct dtplan__search *out, struct dtplan_error *err);

#endif /* DTPLAN_PLAN_PLAN_H */
