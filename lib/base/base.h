/*
 * base/base.h: the base every area and libdtprobes use: errors, the log,
 * strings, the string map, Slurm-style lines, the bounded JSON load, the
 * JSON member getters and SHA-256.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by every lib/ area and by libdtprobes, the one internal header
 * outside lib/ may include (tests/check_layers.sh checks).
 */
#ifndef DTPLAN_BASE_BASE_H
#define DTPLAN_BASE_BASE_H

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

struct json_t;

/* Deepest nesting any JSON reader takes (a plan nests 4 deep, a fabric 5). */
#define DTPLAN_JSON_MAX_DEPTH 32

/*
 * json_loadb() (JSON_REJECT_DUPLICATES) of len bytes of text dtplan did not
 * write, after a scan that allocates nothing refuses nesting deeper than
 * DTPLAN_JSON_MAX_DEPTH and more than max_values values (lib/base/json_load.c).
 * NULL on error: DTPLAN_ERR_PARSE from source at the line, the message
 * starting with prefix ("" allowed).  Caller json_decref()s the tree.
 */
struct json_t *dtplan__json_load(const char *text, size_t len, size_t max_values,
				 const char *source, const char *prefix, struct dtplan_error *err);

/*
 * The member getters (lib/base/json_get.c): member key of the object obj
 * (borrowed; a non-object reads as one without members), named PATH.KEY in
 * messages: path names obj ("" at the top level, "gpus[0]" or "gpus[0].";
 * a path ending in '.' is used as is).  flags:
 *   DTPLAN_JGET_REQUIRED  an absent member is an error; otherwise absent
 *                         returns DTPLAN_OK with *out left as it is
 *   DTPLAN_JGET_NULLABLE  null is taken as absent-but-allowed: DTPLAN_OK,
 *                         *out left as it is; otherwise null is a wrong type
 * Returns DTPLAN_OK, or DTPLAN_ERR_PARSE from source (line 0) for every
 * failure, *out left as it is, with one message per kind:
 *   missing (required)  "PATH.KEY: missing"
 *   wrong type          "PATH.KEY: expected a whole number" (a number,
 *                       a string, true or false)
 *   out of range        "PATH.KEY: N is out of range (MIN to MAX)"; for a
 *                       number also NaN and infinities, printed with %g
 *   too long string     "PATH.KEY: longer than N characters or holds a NUL"
 * Integers are taken in [min, max], numbers in [lo, hi]; a string is copied
 * with its NUL into dst, which holds size (at least 1) bytes.
 */
#define DTPLAN_JGET_REQUIRED 1u
#define DTPLAN_JGET_NULLABLE 2u
enum dtplan_err dtplan__jget_long(const struct json_t *obj, const char *source, const char *path,
				  const char *key, unsigned flags, long min, long max, long *out,
				  struct dtplan_error *err);
enum dtplan_err dtplan__jget_int(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, int min, int max, int *out,
				 struct dtplan_error *err);
enum dtplan_err dtplan__jget_num(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, double lo, double hi, double *out,
				 struct dtplan_error *err);
enum dtplan_err dtplan__jget_str(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, char *dst, size_t size,
				 struct dtplan_error *err);
enum dtplan_err dtplan__jget_bool(const struct json_t *obj, const char *source, const char *path,
				  const char *key, unsigned flags, bool *out,
				  struct dtplan_error *err);

/* SHA-256 of len bytes at data into out (lib/base/sha256.c). */
void dtplan__sha256(const void *data, size_t len, uint8_t out[32]);

/*
 * String -> int map with open addressing, for name lookups over large
 * clusters (lib/base/strmap.c).  Keys are borrowed: the caller keeps them alive
 * and unchanged while the map is in use.
 */
struct dtplan__strmap {
	size_t cap; /* power of two, 0 when empty */
	size_t len;
	const char **keys; /* borrowed, NULL for a free slot */
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

/*
 * Next line of a Slurm-style file held in a writable buffer: cuts the line
 * at its newline and at '#' (a comment), advances *cursor and counts
 * *lineno from 1.  Returns NULL after the last line (lib/base/conffile.c).
 */
char *dtplan__conf_line(char **cursor, int *lineno);

/*
 * Splits one such line, in place, into Key=Value tokens: the value of
 * keys[i] (case-insensitive) goes to vals[i] (NULL when absent).  Errors
 * name source and lineno: a token that is not Key=Value, a key given twice,
 * an empty value.  A key not in keys ends the line with DTPLAN_ERR_PARSE,
 * *unknown pointing at it and err left to the caller, who knows what was
 * expected.  Returns DTPLAN_OK when every token was taken.
 */
enum dtplan_err dtplan__conf_keys(char *line, const char *const *keys, const char **vals, size_t n,
				  const char **unknown, const char *source, int lineno,
				  struct dtplan_error *err);

#endif /* DTPLAN_BASE_BASE_H */
