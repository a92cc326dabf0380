/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * straggler.c: the step waits for the slowest of its GPUs.  Each GPU's
 * compute per step is taken as normal, mean mu and standard deviation
 * cv mu, independent across the N GPUs; the step's synchronising part is
 * their maximum, whose q-quantile is mu + cv mu Phi^-1(q^(1/N))
 * (doc/internals/cost-model.md, "Step, throughput").  Communication stays
 * as dtplan__predict() has it.
 */
#include "config.h"

#include "dtplan.h"
#include "plan/plan.h"
#include "plan/search_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/*
 * Phi^-1(p), the standard normal's quantile: Acklam's rational
 * approximation (P. J. Acklam, "An algorithm for computing the inverse
 * normal cumulative distribution function", 2003; relative error below
 * 1.15e-9), central region |p - 0.5| <= 0.47575 and the two tails.
 * NAN outside (0, 1).
 */
double dtplan_normal_quantile(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
				   -2.759285104469687e+02, 1.383577518672690e+02,
				   -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
				   -1.556989798598866e+02, 6.680131188771972e+01,
				   -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
				   -2.400758277161838e+00, -2.549732539343734e+00,
				   4.374664141464968e+00,  2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
				   2.445134137142996e+00, 3.754408661907416e+00};
	const double lo = 0.02425;
	double q, r;

	if (!(p > 0.0 && p < 1.0))
		return NAN;
	if (p < lo || p > 1.0 - lo) {
		q = sqrt(-2.0 * log(p < lo ? p : 1.0 - p));
		r = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
		return p < lo ? r : -r;
	}
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

double dtplan_max_quantile_z(double q, int n)
{
	if (n <= 1)
		return dtplan_normal_quantile(q);
	/* q^(1/n) as exp(log(q)/n): stays below 1 for every n a job has */
	return dtplan_normal_quantile(exp(log(q) / n));
}

static const char *const cv_from_names[] = {
	[DTPLAN_CV_FROM_UNKNOWN] = "",
	[DTPLAN_CV_FROM_SITE] = "site",
	[DTPLAN_CV_FROM_RECORDS] = "records",
	[DTPLAN_CV_FROM_DEFAULT] = "default",
};

const char *dtplan_cv_from_name(enum dtplan_cv_from from)
{
	if ((size_t)from >= DTPLAN_ARRAY_SIZE(cv_from_names))
		return "";
	return cv_from_names[from];
}

bool dtplan_cv_from_parse(const char *name, enum dtplan_cv_from *from)
{
	for (size_t i = 0; name != NULL && i < DTPLAN_ARRAY_SIZE(cv_from_names); i++) {
		if (strcmp(name, cv_from_names[i]) == 0) {
			if (from != NULL)
				*from = (enum dtplan_cv_from)i;
			return true;
		}
	}
	return false;
}

/* The site's word first: a StepTimeCV= set by hand is a decision about the
 * fleet, the records only what its last jobs showed. */
double dtplan_request_step_cv(const struct dtplan_request *r, enum dtplan_cv_from *from)
{
	const struct dtplan_calibration *cal = r->calibration;
	enum dtplan_cv_from f = DTPLAN_CV_FROM_DEFAULT;
	double cv = DTPLAN_STEP_CV_DEFAULT;

	if (r->step_cv >= 0.0 && r->step_cv <= DTPLAN_STEP_CV_MAX) {
		f = DTPLAN_CV_FROM_SITE;
		cv = r->step_cv;
	} else if (cal != NULL && cal->cv_runs > 0 && cal->step_cv >= 0.0 &&
		   cal->step_cv <= DTPLAN_STEP_CV_MAX) {
		f = DTPLAN_CV_FROM_RECORDS;
		cv = cal->step_cv;
	}
	if (from != NULL)
		*from = f;
	return cv;
}

void dtplan__straggle(const struct dtplan_request *r, struct dtplan_candidate *c)
{
	enum dtplan_cv_from from;
	double cv = dtplan_request_step_cv(r, &from), sd = cv * c->step.compute;
	double z50 = dtplan_max_quantile_z(0.5, r->gpus),
	       z95 = dtplan_max_quantile_z(0.95, r->gpus);

	/* one GPU's median is its mean: nothing to wait for */
	c->step.straggler = sd * (z50 > 0.0 ? z50 : 0.0);
	c->step.total += c->step.straggler;
	c->step_p95 = c->step.total + sd * (z95 - (z50 > 0.0 ? z50 : 0.0));
	c->step_cv = cv;
	c->step_cv_from = from;
	c->step_cv_runs = from == DTPLAN_CV_FROM_RECORDS ? r->calibration->cv_runs : 0;
}

/* Where c's cv came from, for people: "; the site's StepTimeCV=", ...;
 * "" unknown (a plan read from JSON older than step_cv_from). */
static void cv_source(const struct dtplan_candidate *c, char *buf, size_t size)
{
	switch (c->step_cv_from) {
	case DTPLAN_CV_FROM_SITE:
		snprintf(buf, size, "; the site's StepTimeCV=");
		break;
	case DTPLAN_CV_FROM_RECORDS:
		if (c->step_cv_runs > 0)
			snprintf(buf, size, "; learned from %d run%s step spread", c->step_cv_runs,
				 c->step_cv_runs == 1 ? "'s" : "s'");
		else
			snprintf(buf, size, "; learned from the records' step spread");
		break;
	case DTPLAN_CV_FROM_DEFAULT:
		snprintf(buf, size, "; the default, Sinha et al. SC'22");
		break;
	case DTPLAN_CV_FROM_UNKNOWN:
	default:
		buf[0] = '\0';
		break;
	}
}

void dtplan_plan_spread_text(const struct dtplan_plan *p, char *buf, size_t size)
{
	const struct dtplan_candidate *c;
	char a[32], b[32], w[32], from[64];

	if (buf == NULL || size == 0)
		return;
	buf[0] = '\0';
	/* a plan read from JSON older than the spread has none */
	if (p == NULL || !(p->best.step_p95 > 0.0))
		return;
	c = &p->best;
	cv_source(c, from, sizeof(from));
	snprintf(buf, size,
		 "  step spread  p50 %s, p95 %s: the slowest of %d GPUs, one GPU's compute\n"
		 "               varying %.1f%% (sd%s), waits %s at the\n"
		 "               median; throughput, the checkpoint interval, goodput and time to "
		 "train use p50\n",
		 dtplan_format_time(c->step.total, a, sizeof(a)),
		 dtplan_format_time(c->step_p95, b, sizeof(b)), p->request.gpus, c->step_cv * 100.0,
		 from,
		 dtplan_format_time(c->step.straggler * (c->correction > 0.0 ? c->correction : 1.0),
				    w, sizeof(w)));
}
