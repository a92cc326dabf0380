/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/base.h: errors, logging, units, bounded files and the library's version.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_BASE_H
#define DTPLAN_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Errors (lib/base/error.c)
 * ---------------------------------------------------------------------- */

/*
 * Error codes.  Add new codes at the end, just before DTPLAN_ERR__LAST, and
 * never renumber: values are part of the ABI and of the JSON output.
 */
enum dtplan_err {
	DTPLAN_OK = 0,
	DTPLAN_ERR_NOMEM,       /* out of memory */
	DTPLAN_ERR_INVAL,       /* a value is invalid (bad flag value, zero count) */
	DTPLAN_ERR_PARSE,       /* text does not parse (unit, config line, JSON, XML) */
	DTPLAN_ERR_IO,          /* a file cannot be read or written */
	DTPLAN_ERR_NOT_FOUND,   /* unknown name (model preset, GPU type, switch) */
	DTPLAN_ERR_RANGE,       /* a number is out of its allowed range */
	DTPLAN_ERR_NO_FIT,      /* no configuration fits the request */
	DTPLAN_ERR_TIMEOUT,     /* an external wait ran out of time */
	DTPLAN_ERR_UNSUPPORTED, /* valid input that this build cannot handle */
	DTPLAN_ERR_POLICY,      /* the allocation breaks the site's rules */
	DTPLAN_ERR__LAST        /* not an error: one past the last code */
};

/*
 * Detail of an error.  Filled by the library when the caller passes a
 * non-NULL pointer; modelled on Jansson's json_error_t.
 */
struct dtplan_error {
	enum dtplan_err code;
	char source[256]; /* file name, option name or "" */
	int line;         /* 1-based line in source, 0 when not applicable */
	char text[512];   /* human-readable message, without a trailing newline */
};

/* Returns a static, never-NULL string describing code. */
const char *dtplan_strerror(enum dtplan_err code);

/* Clears err (NULL allowed). */
void dtplan_error_clear(struct dtplan_error *err);

/*
 * Formats err into buf as "source:line: text" (or the parts that are set).
 * Returns buf.
 */
const char *dtplan_error_format(const struct dtplan_error *err, char *buf, size_t size);

/* ------------------------------------------------------------------------
 * Logging (lib/base/log.c)
 * ---------------------------------------------------------------------- */

enum dtplan_log_level {
	DTPLAN_LOG_ERROR = 0,
	DTPLAN_LOG_WARNING,
	DTPLAN_LOG_INFO,
	DTPLAN_LOG_DEBUG,
};

typedef void (*dtplan_log_sink_fn)(enum dtplan_log_level level, const char *msg, void *arg);

/* Installs the sink (NULL: discard messages).  Call once, before any other use. */
void dtplan_log_set_sink(dtplan_log_sink_fn fn, void *arg);

/* ------------------------------------------------------------------------
 * Units (lib/base/units.c)
 *
 * Parsers accept a number (decimal or exponent form) and an optional unit,
 * with no space between.  On error they fill err naming the text and what
 * was expected, and leave *out unchanged.  `what` names the value for the
 * message (for example "--bytes"); may be NULL.
 * ---------------------------------------------------------------------- */

/* "14GB", "33.6MB", "14e9", "1GiB", "512KiB", "7B" (bytes).  Decimal units
 * K/M/G/T/P (B optional), binary Ki/Mi/Gi/Ti.  Must be > 0 and finite. */
enum dtplan_err dtplan_parse_bytes(const char *text, const char *what, double *out,
				   struct dtplan_error *err);

/* "900GB/s", "400Gb/s", "25GiB/s", "1e9" (bytes per second).  Lower-case
 * b means bits.  Must be > 0. */
enum dtplan_err dtplan_parse_rate(const char *text, const char *what, double *out,
				  struct dtplan_error *err);

/* "2us", "1.5ms", "60s", "5min", "3h", "2d", "0" (seconds); a bare number is
 * seconds.  Must be >= 0. */
enum dtplan_err dtplan_parse_time(const char *text, const char *what, double *out,
				  struct dtplan_error *err);

/* A whole number in [min, max].  Rejects trailing garbage, signs where min
 * is positive, and overflow. */
enum dtplan_err dtplan_parse_long(const char *text, const char *what, long min, long max, long *out,
				  struct dtplan_error *err);

/* A parameter count: "7B", "70b", "1.5T", "350M", "7e9".  Must be > 0. */
enum dtplan_err dtplan_parse_count(const char *text, const char *what, double *out,
				   struct dtplan_error *err);

/* Formatting for people: "38.50 GB", "900 GB/s", "1.53 ms", "1h 57m".
 * Write into buf and return buf. */
const char *dtplan_format_bytes(double bytes, char *buf, size_t size);
const char *dtplan_format_rate(double bytes_per_s, char *buf, size_t size);
const char *dtplan_format_time(double seconds, char *buf, size_t size);
const char *dtplan_format_count(double count, char *buf, size_t size); /* "70.55B" */

/* ------------------------------------------------------------------------
 * Reading files (lib/base/file.c)
 *
 * Every file dtplan reads whole goes through dtplan_file_read().  Limits and
 * messages are in doc/internals/limits.md.
 * ---------------------------------------------------------------------- */

/* Kinds of file, each with its size limit.  Add new kinds before __LAST. */
enum dtplan_file_kind {
	DTPLAN_FILE_SITE = 0,     /* dtplan.conf: 4 MiB */
	DTPLAN_FILE_TOPOLOGY,     /* Slurm's topology.conf: 16 MiB */
	DTPLAN_FILE_HF_CONFIG,    /* HuggingFace config.json: 4 MiB */
	DTPLAN_FILE_NODE_JSON,    /* node inventory JSON (dtplan node --json): 1 MiB */
	DTPLAN_FILE_NODE_XML,     /* hwloc XML named by the user or admin: 32 MiB */
	DTPLAN_FILE_CACHE_XML,    /* hwloc XML in the node cache: 32 MiB, never a link */
	DTPLAN_FILE_PLAN,         /* plan JSON read back (DTPLAN_FILE): 64 MiB, never a link */
	DTPLAN_FILE_MEASUREMENTS, /* the prolog's measurement file: 64 MiB, never a link */
	DTPLAN_FILE_FABRIC_CACHE, /* the fabric service's cached answer: 64 MiB, never a link */
	DTPLAN_FILE__LAST         /* not a kind: one past the last */
};

/*
 * Reads the regular file at path whole into *out, NUL-terminated (caller
 * frees with free()), and its length into *len (NULL allowed).  Never opens
 * anything but a regular file and never reads more than the kind's limit:
 * DTPLAN_ERR_IO for a missing or unreadable file, a directory, FIFO, device
 * or socket (and a symbolic link for the kinds that refuse them), naming
 * what it is, and for a file over the limit; DTPLAN_ERR_PARSE for a NUL
 * byte.  err->source is the path.  *out is NULL on error.
 */
enum dtplan_err dtplan_file_read(const char *path, enum dtplan_file_kind kind, char **out,
				 size_t *len, struct dtplan_error *err);

/* Size limit of a kind of file in bytes; 0 for an unknown kind. */
size_t dtplan_file_limit(enum dtplan_file_kind kind);

/* Version string of the library. */
const char *dtplan_version(void);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_BASE_H */
