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
