/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibrate.c: a candidate's shape class, and the learned correction its
 * predicted step carries (lib/record/learn.c learns them from the records
 * of earlier runs; doc/internals/records.md).
 */
#include "config.h"

#include "plan/plan.h"
#include "plan/search_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void dtplan_shape_class(const struct dtplan_candidate *c, char *buf, size_t size)
{
	static const char *const names[] = {"tp", "cp", "ep", "pp", "dp"};
	int deg[5];
	char par[32] = "";
	size_t len = 0;

	if (buf == NULL || size == 0)
		return;
	deg[0] = c->tp;
	deg[1] = c->cp;
	deg[2] = c->ep;
	deg[3] = c->pp;
	deg[4] = c->ep > 1 ? c->dp / c->ep : c->dp; /* EP is carved from DP */
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(names); i++) {
		if (deg[i] <= 1)
			continue;
		len += (size_t)snprintf(par + len, sizeof(par) - len, "%s%s", len > 0 ? "-" : "",
					names[i]);
	}
	snprintf(buf, size, "%s/z%d/%s", len > 0 ? par : "single", c->zero,
		 dtplan_recompute_name(c->recompute));
}

const struct dtplan_correction *dtplan_calibration_find(const struct dtplan_calibration *cal,
							const char *gpu, const char *framework,
							const char *shape_class)
{
	const struct dtplan_correction *any = NULL;

	if (cal == NULL)
		return NULL;
	for (size_t i = 0; i < cal->n; i++) {
		const struct dtplan_correction *k = &cal->corrections[i];

		if (strcmp(k->gpu, gpu) != 0 || strcmp(k->framework, framework) != 0)
			continue;
		if (strcmp(k->shape_class, shape_class) == 0)
			return k;
		if (strcmp(k->shape_class, DTPLAN_SHAPE_ANY) == 0)
			any = k;
	}
	return any;
}

/* learned by lib/record/learn.c, applied here at the plan's size */
double dtplan_correction_at(const struct dtplan_correction *k, int gpus)
{
	double f;

	if (k == NULL)
		return 1.0;
	f = k->factor;
	/* factor holds at ref_gpus; the slope carries it to the plan's size */
	if (k->ref_gpus > 0.0 && isfinite(k->slope) && k->slope != 0.0 && gpus >= 1)
		f *= pow(gpus / k->ref_gpus, k->slope);
	return f < DTPLAN_CORRECTION_MIN   ? DTPLAN_CORRECTION_MIN
	       : f > DTPLAN_CORRECTION_MAX ? DTPLAN_CORRECTION_MAX
					   : f;
}

double dtplan__calibration_floor(const struct dtplan_request *r)
{
	double lo = 1.0;

	if (r->calibration == NULL)
		return 1.0;
	for (size_t i = 0; i < r->calibration->n; i++) {
		double f = dtplan_correction_at(&r->calibration->corrections[i], r->gpus);

		if (f < lo)
			lo = f;
	}
	return lo < DTPLAN_CORRECTION_MIN ? DTPLAN_CORRECTION_MIN : lo;
}

void dtplan__calibrate(const struct dtplan_request *r, struct dtplan_candidate *c)
{
	const struct dtplan_correction *k;
	char cls[48];
	double f;

	c->model_step = c->step.total;
	c->correction = 1.0;
	c->correction_runs = 0;
	c->correction_pooled = false;
	if (r->calibration == NULL || r->calibration->n == 0)
		return;
	dtplan_shape_class(c, cls, sizeof(cls));
	k = dtplan_calibration_find(r->calibration, r->gpu.name,
				    dtplan_framework_name(r->framework), cls);
	if (k == NULL || !(k->factor > 0.0))
		return;
	/* learned at the runs' sizes, applied at the plan's */
	f = dtplan_correction_at(k, r->gpus);
	if (f < DTPLAN_CORRECTION_MIN)
		f = DTPLAN_CORRECTION_MIN;
	if (f > DTPLAN_CORRECTION_MAX)
		f = DTPLAN_CORRECTION_MAX;
	c->correction = f;
	c->correction_runs = k->runs;
	c->correction_pooled = strcmp(k->shape_class, DTPLAN_SHAPE_ANY) == 0;
	c->step.total *= f;
	c->step_p95 *= f;
	c->tflops_per_gpu /= f;
	c->mfu /= f;
}
