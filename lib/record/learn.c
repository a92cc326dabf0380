/*
 * learn.c: the corrections later plans apply, learned from the records
 * (dtplan/record.h says how; doc/internals/records.md why).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

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

/* Shrinks the group's mean log-ratio (k->observed holds its sum, k->log_sd
 * the sum of squares) and bounds the factor. */
static void finish(struct dtplan_correction *k)
{
	double n = k->runs, mean = k->observed / n, var = 0.0, tau2, sig2, f;

	if (k->runs > 1) {
		var = (k->log_sd - n * mean * mean) / (n - 1.0);
		if (var < 0.0)
			var = 0.0;
	}
	tau2 = DTPLAN_CALIB_PRIOR_LOG_SD * DTPLAN_CALIB_PRIOR_LOG_SD;
	sig2 = DTPLAN_CALIB_RUN_LOG_SD * DTPLAN_CALIB_RUN_LOG_SD;
	if (var > sig2)
		sig2 = var;
	k->weight = n * tau2 / (n * tau2 + sig2);
	f = exp(k->weight * mean);
	if (f < DTPLAN_CORRECTION_MIN)
		f = DTPLAN_CORRECTION_MIN;
	if (f > DTPLAN_CORRECTION_MAX)
		f = DTPLAN_CORRECTION_MAX;
	k->factor = f;
	k->observed = exp(mean);
	k->log_sd = sqrt(var);
}

enum dtplan_err dtplan_calibration_learn(const struct dtplan_record *recs, size_t n,
					 const char *cluster, struct dtplan_calibration *out,
					 struct dtplan_error *err)
{
	struct dtplan_correction *ks = NULL;
	size_t nk = 0;

	memset(out, 0, sizeof(*out));
	dtplan__strlcpy(out->cluster, cluster != NULL ? cluster : "", sizeof(out->cluster));
	for (size_t i = 0; i < n; i++) {
		const struct dtplan_record *r = &recs[i];
		struct dtplan_correction *k = NULL;
		double x;

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

				if (m == NULL) {
					free(ks);
					return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0,
							     "out of memory");
				}
				ks = m;
				k = &ks[nk++];
				memset(k, 0, sizeof(*k));
				dtplan__strlcpy(k->gpu, r->gpu, sizeof(k->gpu));
				dtplan__strlcpy(k->framework, r->framework, sizeof(k->framework));
				dtplan__strlcpy(k->shape_class, cls, sizeof(k->shape_class));
			}
			x = log(r->measured_step_s / r->model_step_s);
			k->runs++;
			k->observed += x;
			k->log_sd += x * x;
		}
	}
	for (size_t j = 0; j < nk; j++)
		finish(&ks[j]);
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
