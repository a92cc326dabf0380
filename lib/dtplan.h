/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan.h: libdtplan, placement plans for distributed training.
 *
 * libdtplan is pure planning: plain structs in, a plan out.  It includes no
 * Slurm header, touches no hardware, /sys or sockets, and never prints.
 * Errors are returned as enum dtplan_err with detail in a caller-provided
 * struct dtplan_error (NULL allowed).  Log messages go to a sink installed by
 * the host program (dtplan_log_set_sink()).
 *
 * Units: sizes are in bytes, bandwidths in bytes per second, times in
 * seconds, FLOP rates in FLOP/s.  All are doubles.  "GB" is 10^9 bytes.
 *
 * Thread safety: every function is reentrant; the log sink is global and is
 * meant to be installed once at start-up.
 */
#ifndef DTPLAN_H
#define DTPLAN_H

/*
 * The version of this header, for code that builds against more than one
 * (curl's LIBCURL_VERSION_NUM, hwloc's HWLOC_API_VERSION); dtplan_version()
 * is the library's, and a test keeps the two and configure.ac's equal.
 */
#define DTPLAN_VERSION_MAJOR 0
#define DTPLAN_VERSION_MINOR 1
#define DTPLAN_VERSION_PATCH 0
#define DTPLAN_VERSION_NUMBER                                                                      \
	((DTPLAN_VERSION_MAJOR << 16) | (DTPLAN_VERSION_MINOR << 8) | DTPLAN_VERSION_PATCH)

/* The areas, each over the ones it uses (doc/internals/map.md). */
#include "dtplan/base.h"
#include "dtplan/model.h"
#include "dtplan/cost.h"
#include "dtplan/node.h"
#include "dtplan/site.h"
#include "dtplan/plan.h"
#include "dtplan/record.h"
#include "dtplan/launch.h"
#include "dtplan/json.h"
#include "dtplan/measure.h"

#endif /* DTPLAN_H */
