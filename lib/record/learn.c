/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * learn.c: the corrections later plans apply, learned from the records
 * (dtplan/record.h says how; doc/internals/records.md why).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool usable(const struct dtplan_record *r, const char *cluster)
{
	if (cluster != NULL && cluster[0] != '\0' && strcmp(r->cluster, cluster) != 0)
		return false;
	return isfinite(r->measured_step_s) && r->measured_step_s > 0.0 &&
	       isfinite(r->model_step_s) && r->model_step_s > 0.0;
}

static bool same_key(const struct dtplan_correction *k, const struct dtplan_record *r,
		     const char *cls)
{
	return strcmp(k->gpu, r->gpu) == 0 && strcmp(k->framework, r->framework) == 0 &&
	       strcmp(k->shape_class, cls) == 0;
}

/* What one key's runs add up to before finish(): x = log(measured /
 * model), l = log(gpus). */
struct sums {
	double x, xx, l, ll, lx;
};

static double bound(double f)
{
	return f < DTPLAN_CORRECTION_MIN   ? DTPLAN_CORRECTION_MIN
	       : f > DTPLAN_CORRECTION_MAX ? DTPLAN_CORRECTION_MAX
					   : f;
}

/* The record's GPU count: its split's (EP is carved from DP). */
static int record_gpus(const struct dtplan_record *r)
{
	long g = (long)r->tp * r->cp * r->pp * r->dp;

	return g >= 1 && g <= (1L << 30) ? (int)g : 1;
}

/*
 * One run's cv (dtplan/record.h): s / (m dz - s z50), m the median step, s
 * its interquartile range; < 0 when the run says nothing (no spread, too
 * few steps).  The record keeps the step and not its compute share, so the
 * whole step stands for the compute that varies; against the plan, which
 * spreads compute alone, this errs both ways:
 *  - communication, data loading and host jitter count as compute's
 *    spread: cv reads high;
 *  - the spread is divided by the whole step, not the compute in it: cv
 *    reads low, by the compute's share of the step;
 *  - a GPU slow at every step slows every step alike: it moves the median
 *    (the correction learns it), not the spread, which sees only what
 *    changes from step to step: cv reads low where the variation is the
 *    lasting GPU-to-GPU kind the default was measured from;
 *  - the IQR of few steps reads low (7% at DTPLAN_CALIB_CV_MIN_STEPS).
 * A spread too wide for the model (m dz <= s z50) reads as the bound.
 */
static double run_cv(const struct dtplan_record *r)
{
	int g = record_gpus(r);
	double z25, z50, z75, den;

	if (!(r->measured_spread_s > 0.0) || !isfinite(r->measured_spread_s) ||
	    r->steps < DTPLAN_CALIB_CV_MIN_STEPS)
		return -1.0;
	/* g == 1: Phi^-1 itself, z50 = 0 and dz the normal's 1.349 */
	z25 = dtplan_max_quantile_z(0.25, g);
	z50 = dtplan_max_quantile_z(0.5, g);
	z75 = dtplan_max_quantile_z(0.75, g);
	if (!(z75 > z25) || !isfinite(z50))
		return -1.0;
	if (z50 < 0.0)
		z50 = 0.0;
	den = r->measured_step_s * (z75 - z25) - r->measured_spread_s * z50;
	return den > 0.0 ? r->measured_spread_s / den : DTPLAN_STEP_CV_MAX;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of the runs' cv into out, from DTPLAN_CALIB_CV_MIN_RUNS runs
 * on; cv_runs 0 otherwise.  v (n values) is sorted in place. */
static void learn_cv(double *v, size_t n, struct dtplan_calibration *out)
{
	double m;

	out->step_cv = 0.0;
	out->cv_runs = 0;
	if (n < DTPLAN_CALIB_CV_MIN_RUNS || n > INT_MAX)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	m = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	out->step_cv = m < 0.0 ? 0.0 : m > DTPLAN_STEP_CV_MAX ? DTPLAN_STEP_CV_MAX : m;
	out->cv_runs = (int)n;
}

/* Fits the level and the slope of the group's log-ratios against
 * log(gpus), shrinks each toward 0 and bounds the factor (dtplan/record.h). */
static void finish(struct dtplan_correction *k, const struct sums *sm)
{
	double n = k->runs, xbar = sm->x / n, lbar = sm->l / n, var = 0.0, tau2, taub2, sig2;
	double sxx = sm->xx - n * xbar * xbar, sll = sm->ll - n * lbar * lbar,
	       slx = sm->lx - n * lbar * xbar, b = 0.0;

	if (sll < 1e-12 * n)
		sll = 0.0;
	if (sll > 0.0)
		b = slx / sll;
	if (sll > 0.0 && k->runs > 2)
		var = (sxx - b * slx) / (n - 2.0);
	else if (sll == 0.0 && k->runs > 1)
		var = sxx / (n - 1.0);
	if (var < 0.0)
		var = 0.0;
	tau2 = DTPLAN_CALIB_PRIOR_LOG_SD * DTPLAN_CALIB_PRIOR_LOG_SD;
	taub2 = DTPLAN_CALIB_PRIOR_SLOPE_SD * DTPLAN_CALIB_PRIOR_SLOPE_SD;
	sig2 = DTPLAN_CALIB_RUN_LOG_SD * DTPLAN_CALIB_RUN_LOG_SD;
	if (var > sig2)
		sig2 = var;
	k->weight = n * tau2 / (n * tau2 + sig2);
	k->slope_weight = sll * taub2 / (sll * taub2 + sig2);
	k->slope = k->slope_weight * b;
	k->ref_gpus = exp(lbar);
	k->factor = bound(exp(k->weight * xbar));
	k->observed = exp(xbar);
	k->log_sd = sqrt(var);
}

enum dtplan_err dtplan_calibration_learn(const struct dtplan_record *recs, size_t n,
					 const char *cluster, struct dtplan_calibration *out,
					 struct dtplan_error *err)
{
	struct dtplan_correction *ks = NULL;
	struct sums *ss = NULL;
	double *cvs = NULL;
	size_t nk = 0, ncv = 0;

	memset(out, 0, sizeof(*out));
	dtplan__strlcpy(out->cluster, cluster != NULL ? cluster : "", sizeof(out->cluster));
	if (n > 0 && (cvs = malloc(n * sizeof(*cvs))) == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct dtplan_record *r = &recs[i];
		struct dtplan_correction *k = NULL;
		struct sums *sm;
		int g = record_gpus(r);
		double x, l, cv;

		if (!usable(r, cluster))
			continue;
		if ((cv = run_cv(r)) >= 0.0)
			cvs[ncv++] = cv;
		/* each record counts twice: for its class, and for every class
		 * of its GPU type and framework (DTPLAN_SHAPE_ANY) */
		for (int pass = 0; pass < 2; pass++) {
			const char *cls = pass == 0 ? r->shape_class : DTPLAN_SHAPE_ANY;

			k = NULL;
			for (size_t j = 0; j < nk && k == NULL; j++)
				if (same_key(&ks[j], r, cls))
					k = &ks[j];
			if (k == NULL) {
				struct dtplan_correction *m = realloc(ks, (nk + 1) * sizeof(*ks));
				struct sums *ms =
					m != NULL ? realloc(ss, (nk + 1) * sizeof(*ss)) : NULL;

				if (m != NULL)
					ks = m;
				if (ms == NULL) {
					free(ks);
					free(ss);
					free(cvs);
					return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0,
							     "out of memory");
				}
				ss = ms;
				memset(&ss[nk], 0, sizeof(*ss));
				k = &ks[nk++];
				memset(k, 0, sizeof(*k));
				k->min_gpus = INT_MAX;
				dtplan__strlcpy(k->gpu, r->gpu, sizeof(k->gpu));
				dtplan__strlcpy(k->framework, r->framework, sizeof(k->framework));
				dtplan__strlcpy(k->shape_class, cls, sizeof(k->shape_class));
			}
			x = log(r->measured_step_s / r->model_step_s);
			l = log((double)g);
			k->runs++;
			sm = &ss[k - ks];
			sm->x += x;
			sm->xx += x * x;
			sm->l += l;
			sm->ll += l * l;
			sm->lx += l * x;
			if (g < k->min_gpus)
				k->min_gpus = g;
			if (g > k->max_gpus)
				k->max_gpus = g;
		}
	}
	for (size_t j = 0; j < nk; j++)
		finish(&ks[j], &ss[j]);
	learn_cv(cvs, ncv, out);
	free(cvs);
	free(ss);
	out->n = nk;
	out->corrections = ks;
	return DTPLAN_OK;
}

void dtplan_calibration_fini(struct dtplan_calibration *c)
{
	if (c == NULL)
		return;
	free((void *)c->corrections);
	memset(c, 0, sizeof(*c));
}
