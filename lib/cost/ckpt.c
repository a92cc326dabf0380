/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ckpt.c: checkpoint interval from the job's failure rate (Young, Daly).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <math.h>

static bool finite_nonneg(double x)
{
	return isfinite(x) && x >= 0.0;
}

const char *dtplan_mtbf_source(double mtbf_gpu_hours)
{
	return fabs(mtbf_gpu_hours - DTPLAN_DEFAULT_MTBF_GPU_HOURS) <=
			       1e-9 * DTPLAN_DEFAULT_MTBF_GPU_HOURS
		       ? "Llama 3's, the default"
		       : "the site's MtbfGpuHours=";
}

enum dtplan_err dtplan_ckpt_compute(const struct dtplan_ckpt_in *in, struct dtplan_ckpt *out,
				    struct dtplan_error *err)
{
	struct dtplan_ckpt c = {0};
	double m, delta, r, x;

	if (in == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "checkpoint: no input or output");
	if (in->gpus < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "checkpoint: GPU count %d must be at least 1", in->gpus);
	if (!isfinite(in->mtbf_gpu_hours) || in->mtbf_gpu_hours <= 0.0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "checkpoint: MTBF %g GPU-hours must be more than zero",
				     in->mtbf_gpu_hours);
	if (!finite_nonneg(in->write_seconds) || !finite_nonneg(in->restart_seconds) ||
	    !finite_nonneg(in->step_seconds))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "checkpoint: write (%g s), restart (%g s) and step (%g s) "
				     "times must be zero or more",
				     in->write_seconds, in->restart_seconds, in->step_seconds);

	/* Failures of independent GPUs add up: the job fails gpus times as often. */
	m = in->mtbf_gpu_hours * 3600.0 / in->gpus;
	delta = in->write_seconds;
	r = in->restart_seconds;
	c.job_mtbf_seconds = m;
	/* Young, "A first order approximation to the optimum checkpoint interval",
	 * CACM 17(9), 1974: tau = sqrt(2 delta M). */
	c.young_seconds = sqrt(2.0 * delta * m);
	/*
	 * Daly, "A higher order estimate of the optimum checkpoint interval for
	 * restart dumps", FGCS 22(3), 2006, eq. 37:
	 * tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta/(2M)) + (1/9) delta/(2M)] - delta
	 * for delta < 2M, else tau = M.
	 */
	x = delta / (2.0 * m);
	if (delta < 2.0 * m)
		c.daly_seconds = c.young_seconds * (1.0 + sqrt(x) / 3.0 + x / 9.0) - delta;
	else
		c.daly_seconds = m;
	c.interval_seconds = c.daly_seconds;
	/*
	 * The availability-optimal interval ("Optimal Checkpoint Interval
	 * with Availability as an Objective Function", arXiv 2410.18124):
	 * maximising availability rather than minimising lost time gives
	 * Ts + sqrt(2 (Tf + Tr) Ts + Ts^2), Ts the save time, Tf the mean time
	 * to failure, Tr the recovery time; shown beside Young/Daly.
	 */
	c.availability_seconds = delta + sqrt(2.0 * (m + r) * delta + delta * delta);
	/*
	 * Expected fraction of time lost (Daly 2006, first order): writing,
	 * delta/tau, plus per failure half an interval of lost work and the
	 * restart, (tau/2 + R)/M.  A free checkpoint (delta = 0) leaves R/M.
	 * Capped at 1.
	 */
	if (c.interval_seconds > 0.0)
		c.waste_fraction = delta / c.interval_seconds + (c.interval_seconds / 2.0 + r) / m;
	else
		c.waste_fraction = r / m;
	if (c.waste_fraction > 1.0)
		c.waste_fraction = 1.0;
	if (in->step_seconds > 0.0) {
		c.interval_steps = floor(c.interval_seconds / in->step_seconds);
		if (c.interval_steps < 1.0)
			c.interval_steps = 1.0;
	}
	*out = c;
	return DTPLAN_OK;
}
