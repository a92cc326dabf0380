/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json/json_int.h: what the plan writer takes from the measurement writer.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by files of lib/json/ only.
 */
#ifndef DTPLAN_JSON_JSON_INT_H
#define DTPLAN_JSON_JSON_INT_H

#include "dtplan.h"
#include "base/base.h"

/* The plan's "measurements" object (lib/json/measure_json.c): m's, or with m
 * NULL that of nothing measured on n_nodes nodes.  A new reference; NULL
 * when out of memory. */

struct dtplan_measurements;
struct json_t *dtplan__measurements_json(const struct dtplan_measurements *m, size_t n_nodes);

#endif /* DTPLAN_JSON_JSON_INT_H */
