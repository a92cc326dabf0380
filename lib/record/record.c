/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.c: a plan's shape fingerprint and the plan half of a run's record.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One canonical line of the shape; every field named, so that no two shapes
 * can print the same line. */
static void shape_line(const struct dtplan_plan *p, const char *cluster, char *buf, size_t size)
{
	const struct dtplan_request *r = &p->request;
	const struct dtplan_candidate *c = &p->best;

	snprintf(buf, size,
		 "dtplan.shape/1 cluster=%s gpu=%s model=%s framework=%s precision=%s tp=%d "
		 "cp=%d ep=%d pp=%d dp=%d vp=%d zero=%d mb=%d recompute=%s",
		 cluster != NULL ? cluster : "", r->gpu.name, r->model.name,
		 dtplan_framework_name(r->framework), dtplan_precision_name(r->precision), c->tp,
		 c->cp > 1 ? c->cp : 1, c->ep > 1 ? c->ep : 1, c->pp, c->dp, c->vp > 1 ? c->vp : 1,
		 c->zero, c->micro_batch, dtplan_recompute_name(c->recompute));
}

void dtplan_plan_fingerprint(const struct dtplan_plan *p, const char *cluster,
			     char out[DTPLAN_FINGERPRINT_HEX])
{
	char line[1024];
	uint8_t h[32];

	shape_line(p, cluster, line, sizeof(line));
	dtplan__sha256(line, strlen(line), h);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

void dtplan_record_from_plan(struct dtplan_record *r, const struct dtplan_plan *p,
			     const char *cluster)
{
	const struct dtplan_candidate *c = &p->best;

	memset(r, 0, sizeof(*r));
	dtplan__strlcpy(r->cluster, cluster != NULL ? cluster : "", sizeof(r->cluster));
	dtplan_plan_fingerprint(p, cluster, r->fingerprint);
	dtplan__strlcpy(r->gpu, p->request.gpu.name, sizeof(r->gpu));
	dtplan__strlcpy(r->model, p->request.model.name, sizeof(r->model));
	dtplan__strlcpy(r->framework, dtplan_framework_name(p->request.framework),
			sizeof(r->framework));
	dtplan__strlcpy(r->precision, dtplan_precision_name(p->request.precision),
			sizeof(r->precision));
	dtplan_shape_class(c, r->shape_class, sizeof(r->shape_class));
	r->split = c->split;
	r->cp = c->cp > 1 ? c->cp : 1;
	r->ep = c->ep > 1 ? c->ep : 1;
	r->vp = c->vp > 1 ? c->vp : 1;
	r->predicted_step_s = c->step.total;
	r->model_step_s = c->model_step > 0.0 ? c->model_step : c->step.total;
	r->checkpoint_s = NAN;
}
