/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * measured.c: a measurement's findings as the plan's warnings.
 *
 * The plan takes the prolog's measurement (lib/measure/measure.c made it)
 * and says what it found: uplinks measured more oversubscribed than the
 * site says, stragglers, nodes that did not finish, and the probe's notes.
 */
#include "config.h"
#include "dtplan.h"
#include "base/base.h"

#include <stdio.h>

/* Notes of a measurement a plan repeats as warnings; the rest are counted. */
#define MAX_NOTE_WARNINGS DTPLAN_MEASURE_MAX_NOTES

/* "node7 (no inventory), node8 (no link results), ..." */
static void list_missing(const struct dtplan_measurements *m, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < m->n_missing && used + 1 < size; i++) {
		const char *h = m->hosts[m->missing[i]];
		int w;

		if (i == 8) {
			snprintf(buf + used, size - used, ", ... (%zu in all)", m->n_missing);
			break;
		}
		w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", h);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
	}
}

enum dtplan_err dtplan_plan_take_measurements(struct dtplan_plan *p, struct dtplan_measurements *m,
					      struct dtplan_error *err)
{
	enum dtplan_err rv = DTPLAN_OK;
	char a[32], b[32], c[32], names[320];
	size_t more;

	if (p == NULL) {
		dtplan_measurements_destroy(m);
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan");
	}
	dtplan_measurements_destroy(p->measurements);
	p->measurements = m;
	if (m == NULL)
		return DTPLAN_OK;
	for (size_t i = 0; rv == DTPLAN_OK && i < m->n_uplinks; i++) {
		const struct dtplan_uplink *u = &m->uplinks[i];
		double conf = u->configured > 0 ? u->configured : 1.0;

		if (!u->saturated || !(u->oversubscription > conf * 1.1))
			continue;
		dtplan_format_rate(u->downlink_bytes_per_s, a, sizeof(a));
		dtplan_format_rate(u->aggregate_bytes_per_s, b, sizeof(b));
		if (u->configured > 0)
			snprintf(c, sizeof(c), "configured %.1f:1", u->configured);
		else
			snprintf(c, sizeof(c), "configured as non-blocking");
		rv = dtplan_plan_add_warning(p, "measured-oversubscription",
					     "%s's uplink measured %.1f:1 oversubscribed (%s down, "
					     "%s up across %zu concurrent flows), %s",
					     u->name, u->oversubscription, a, b, u->flows, c);
	}
	for (size_t i = 0; rv == DTPLAN_OK && i < m->n_stragglers; i++) {
		const struct dtplan_straggler *s = &m->stragglers[i];

		dtplan_format_rate(s->bandwidth_bytes_per_s, a, sizeof(a));
		dtplan_format_rate(s->tier_median_bytes_per_s, b, sizeof(b));
		rv = dtplan_plan_add_warning(p, "straggler",
					     "%s is a straggler: its links reach %s, %.0f%% of the "
					     "intra-leaf median %s; collectives through %s run at "
					     "its pace",
					     s->node, a,
					     100.0 * s->bandwidth_bytes_per_s /
						     s->tier_median_bytes_per_s,
					     b, s->node);
	}
	if (rv == DTPLAN_OK && m->n_missing > 0) {
		list_missing(m, names, sizeof(names));
		rv = dtplan_plan_add_warning(
			p, "measurement-incomplete",
			"%zu of %zu nodes did not finish the measurement within "
			"the %g s budget: %s; their links are not measured",
			m->n_missing, m->n_nodes, m->budget_s, names);
	}
	/* The first notes as they are, then their count: a big job writes one
	 * per node without an inventory, and a plan of more than 1,024 warnings
	 * was one dtplan show refused (issue 26).  The measurement keeps those
	 * and the count of the rest. */
	for (size_t i = 0; rv == DTPLAN_OK && i < m->n_notes && i < MAX_NOTE_WARNINGS; i++)
		rv = dtplan_plan_add_warning(p, "measurement", "%s", m->notes[i]);
	more = m->n_notes_more +
	       (m->n_notes > MAX_NOTE_WARNINGS ? m->n_notes - MAX_NOTE_WARNINGS : 0);
	if (rv == DTPLAN_OK && more > 0)
		rv = dtplan_plan_add_warning(p, "measurement",
					     "%zu more notes of the measurement, as the %d above",
					     more, MAX_NOTE_WARNINGS);
	/* a measurement that could not run is a failure of the plan's, not a note */
	if (m->failed[0] != '\0')
		dtplan_plan_set_degraded(p, "nothing measured by the %s: %s", m->source, m->failed);
	if (rv != DTPLAN_OK)
		return dtplan__error(err, rv, "", 0, "out of memory");
	return DTPLAN_OK;
}
