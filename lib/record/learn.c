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
	size_t nk = 0;

	memset(out, 0, sizeof(*out));
	dtplan__strlcpy(out->cluster, cluster != NULL ? cluster : "", sizeof(out->cluster));
	for (size_t i = 0; i < n; i++) {
		const struct dtplan_record *r = &recs[i];
		struct dtplan_correction *k = NULL;
		struct sums *sm;
		int g = record_gpus(r);
		double x, l;

		if (!usable(r, cluster))
			continue;
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
