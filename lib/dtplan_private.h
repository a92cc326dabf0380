/*
 * dtplan_private.h: internals shared across libdtplan files.  Never installed.
 * Functions here carry the dtplan__ prefix.
 */
#ifndef DTPLAN_PRIVATE_H
#define DTPLAN_PRIVATE_H

#include "dtplan.h"

#include <stdarg.h>

#define DTPLAN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Fills err (NULL allowed) with code, source, line and a formatted message.
 * Returns code so that callers can write `return dtplan__error(...)`.
 */
enum dtplan_err dtplan__error(struct dtplan_error *err, enum dtplan_err code, const char *source,
			      int line, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Sends a formatted message to the installed sink. */
void dtplan__log(enum dtplan_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* strlcpy: copies at most size-1 bytes and terminates; returns strlen(src). */
size_t dtplan__strlcpy(char *dst, const char *src, size_t size);

/* Case-insensitive string equality. */
bool dtplan__streq_nocase(const char *a, const char *b);

/* ------------------------------------------------------------------------
 * Search (lib/search.c), used by lib/plan.c and the tests
 * ---------------------------------------------------------------------- */

/*
 * Candidates predicted within this fraction of the best time the model can
 * vouch for (the smallest step time with links at DTPLAN__LINK_EFFICIENCY_LOW
 * of their bandwidth) are ties, broken by network bytes then simplicity.
 */
#define DTPLAN__TIE_FRACTION 0.03
#define DTPLAN__LINK_EFFICIENCY_LOW 0.5

/* Fraction of the DP/ZeRO communication hidden behind compute that is
 * still charged: the collectives' kernels slow the compute they overlap. */
#define DTPLAN__OVERLAP_TAX 0.1

/* Outcome of one search over a request. */
struct dtplan__search {
	struct dtplan_candidate best;
	bool have_best;
	bool have_runner_up;
	struct dtplan_candidate runner_up;
	char runner_up_reason[256];
	size_t n_considered;      /* configurations examined */
	size_t n_fit;             /* of them, fitting memory */
};

/*
 * Checks that a request is complete and consistent (counts >= 1, fixed
 * choices in range, bandwidths > 0).  DTPLAN_ERR_INVAL naming the field.
 */
enum dtplan_err dtplan__request_check(const struct dtplan_request *req, struct dtplan_error *err);

/*
 * Evaluates one configuration: fills c->memory and, when it fits, the
 * predicted step, FLOPs and network bytes.  c->tp, pp, dp, zero,
 * micro_batch and recompute are inputs; num_microbatches is set.  *fits
 * says whether the ledger total is within memory * (1 - headroom).
 */
enum dtplan_err dtplan__candidate_evaluate(const struct dtplan_request *req,
					   struct dtplan_candidate *c, bool *fits,
					   struct dtplan_error *err);

/*
 * Runs the search.  With first_fit, stops at the first configuration that
 * fits (used to find the smallest GPU count); out->best is then that one.
 * Without a fit, out->have_best is false and DTPLAN_OK is returned.
 */
enum dtplan_err dtplan__search_run(const struct dtplan_request *req, bool first_fit,
				   struct dtplan__search *out, struct dtplan_error *err);

/* "TP 8 x PP 4 x DP 4, ZeRO-1, micro-batch 1 x 256, selective recompute" */
const char *dtplan__candidate_describe(const struct dtplan_candidate *c, char *buf, size_t size);

/*
 * String -> int map with open addressing, for name lookups over large
 * clusters (lib/strmap.c).  Keys are borrowed: the caller keeps them alive
 * and unchanged while the map is in use.
 */
struct dtplan__strmap {
	size_t cap;          /* power of two, 0 when empty */
	size_t len;
	const char **keys;   /* borrowed, NULL for a free slot */
	int *values;
};

/* Sets up an empty map sized for about `expected` keys. */
enum dtplan_err dtplan__strmap_init(struct dtplan__strmap *m, size_t expected);
/* Frees the map's arrays (not the keys).  NULL allowed. */
void dtplan__strmap_fini(struct dtplan__strmap *m);
/*
 * Inserts key -> value.  When key is already present, leaves the map
 * unchanged, stores the existing value in *old (NULL allowed) and returns
 * DTPLAN_ERR_INVAL; DTPLAN_ERR_NOMEM when growing fails.
 */
enum dtplan_err dtplan__strmap_put(struct dtplan__strmap *m, const char *key, int value, int *old);
/* Value of key, or -1 when absent. */
int dtplan__strmap_get(const struct dtplan__strmap *m, const char *key);

/* Reads a whole text file into *out (caller frees with free()).  Errors
 * (DTPLAN_ERR_IO, NOMEM, PARSE for a NUL byte) name the path. */
enum dtplan_err dtplan__read_file(const char *path, char **out, struct dtplan_error *err);

#endif /* DTPLAN_PRIVATE_H */
