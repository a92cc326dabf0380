/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * base/base.h: the base every area and libdtprobes use: errors, the log,
 * strings, the growing text, the UTF-8 check, the string map, Slurm-style
 * lines, the Key=Value table engine, the bounded JSON load, the raw JSON
 * scanner, the JSON member getters, the cycle check of a tree and SHA-256.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by every lib/ area and by libdtprobes, the one internal header
 * outside lib/ may include (tests/check_layers.sh checks).
 */
#ifndef DTPLAN_BASE_BASE_H
#define DTPLAN_BASE_BASE_H

#include "dtplan.h"

#include <stdarg.h>
#include <stdio.h>

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

/* The greatest common divisor of a and b (a when b is 0). */
long long dtplan__gcd(long long a, long long b);

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
/* The scan of dtplan__json_load() alone: DTPLAN_OK when text is within those
 * bounds, else its error (for a reader that loads the text in parts). */
enum dtplan_err dtplan__json_bounded(const char *text, size_t len, size_t max_values,
				     const char *source, const char *prefix,
				     struct dtplan_error *err);
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
 *                       a string, true or false, an object, an array)
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
/* An object or an array ("expected an object", "an array"): *out borrows
 * it from obj. */
enum dtplan_err dtplan__jget_obj(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, struct json_t **out,
				 struct dtplan_error *err);
enum dtplan_err dtplan__jget_array(const struct json_t *obj, const char *source, const char *path,
				   const char *key, unsigned flags, struct json_t **out,
				   struct dtplan_error *err);

/*
 * A growing text (lib/base/text.c), zeroed to start: s holds len bytes and
 * a NUL (NULL until the first append).  On allocation failure it frees s,
 * stays empty with failed set and takes no more: check failed once at the
 * end.  The caller frees s (dtplan__text_fini() or free()).
 */
struct dtplan__text {
	char *s;
	size_t len, cap;
	bool failed;
};
/* No string kept: dtplan__text_keep() out of memory. */
#define DTPLAN_TEXT_NONE ((size_t)-1)
/* Appends the formatted text. */
void dtplan__text_add(struct dtplan__text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends n bytes (a NUL among them allowed; s stays NUL-terminated). */
void dtplan__text_put(struct dtplan__text *t, const void *bytes, size_t n);
/* Keeps s, NUL included, as one string of a store: its offset in t->s,
 * DTPLAN_TEXT_NONE when out of memory. */
size_t dtplan__text_keep(struct dtplan__text *t, const char *s);
/* Hands over t->s ("" when nothing was added; NULL when failed or out of
 * memory) and empties t; the caller frees it. */
char *dtplan__text_take(struct dtplan__text *t);
/* Frees t->s and empties t (failed cleared).  NULL allowed. */
void dtplan__text_fini(struct dtplan__text *t);

/*
 * A text written through stdio into memory (lib/base/stream.c): open fills
 * t (f, where fprintf writes), finish closes f and hands the text over in
 * *out (the caller frees it), or frees it and reports DTPLAN_ERR_NOMEM
 * when a write or the close failed.
 */
struct dtplan__stream {
	FILE *f;
	char *buf;
	size_t len;
};
enum dtplan_err dtplan__stream_open(struct dtplan__stream *t, struct dtplan_error *err);
enum dtplan_err dtplan__stream_finish(struct dtplan__stream *t, char **out,
				      struct dtplan_error *err);

/*
 * Length of the UTF-8 character at p (lib/base/utf8.c): 1 for a byte below
 * 0x80 (NUL and controls too), 2 to 4 for a valid sequence, 0 for a stray,
 * overlong or surrogate byte, one past U+10FFFF or a sequence cut short (a
 * NUL ends a NUL-terminated text's sequence, so it is never read past).
 */
size_t dtplan__utf8_len(const unsigned char *p);

/*
 * The raw JSON scanner (lib/base/json_scan.c): where things end in the len
 * bytes at s, from index i, checking nothing a parser would.
 *   skip_blank   the first index from i that is not JSON white space
 *   skip_string  s[i] is '"': one past its closing quote, 0 when none
 *   skip_value   one past the value at s[i] (a string, a container with
 *                its strings and brackets, or a run of other characters),
 *                0 where it does not end as a value would
 */
size_t dtplan__json_skip_blank(const char *s, size_t i, size_t len);
size_t dtplan__json_skip_string(const char *s, size_t i, size_t len);
size_t dtplan__json_skip_value(const char *s, size_t i, size_t len);

/*
 * The one cycle check of n nodes linked to their parents (lib/base/tree.c):
 * parent(ctx, i) is i's parent, -1 for a root.  Returns a node on a cycle
 * (the first one reached walking up from node 0, 1, ...), -1 when there is
 * none, -2 when out of memory.
 */
int dtplan__tree_cycle(size_t n, int (*parent)(const void *ctx, int i), const void *ctx);

/* SHA-256 of len bytes at data into out (lib/base/sha256.c). */
void dtplan__sha256(const void *data, size_t len, uint8_t out[32]);

/*
 * String -> int map with open addressing, for name lookups over large
 * clusters (lib/base/strmap.c).  Keys are borrowed: the caller keeps them alive
 * and unchanged while the map is in use.  Names are hashed under a key of the
 * map's own (SipHash-1-3, from a per-process random secret), so that names
 * posted from outside cannot be chosen to collide.
 */
struct dtplan__strmap {
	size_t cap; /* power of two, 0 when empty */
	size_t len;
	const char **keys; /* borrowed, NULL for a free slot */
	int *values;
	uint64_t seed[2]; /* the hash's key; {0, 0} until the map is first used */
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
 * The Key=Value table engine (lib/base/kv.c): one list of key=value tokens,
 * split on sep (',' for --dt-train and model dimensions; ' ' for any run of
 * blanks, Slurm-style lines; '\0' for one token, a plugstack argument),
 * each applied to a struct through a table.
 */
enum dtplan__kv_kind {
	DTPLAN__KV_INT,    /* int at offset: a whole number in [min, max] */
	DTPLAN__KV_LONG,   /* long at offset: a whole number in [min, max] */
	DTPLAN__KV_DOUBLE, /* double at offset: a number in [dmin, dmax] */
	DTPLAN__KV_BOOL,   /* bool at offset: dtplan_parse_bool()'s spellings */
	DTPLAN__KV_NAME,   /* int at offset: index in names (NULL-ended), any case */
	DTPLAN__KV_STRING, /* char[size] at offset */
	DTPLAN__KV_CUSTOM, /* parse(obj, key, value, err) does it all */
	DTPLAN__KV_TEXT,   /* char * at offset: a malloc()ed copy, the caller frees it */
};

struct dtplan__kv_key {
	const char *name;
	enum dtplan__kv_kind kind;
	size_t offset;            /* of the field in the struct given to dtplan__kv_parse() */
	long min, max;            /* INT, LONG */
	double dmin, dmax;        /* DOUBLE */
	const char *const *names; /* NAME */
	size_t size;              /* STRING: the field's size */
	enum dtplan_err (*parse)(void *obj, const struct dtplan__kv_key *k, const char *value,
				 struct dtplan_error *err); /* CUSTOM */
	bool hidden;   /* left out of the messages' key lists (a key refused by its parse) */
	bool empty_ok; /* an empty value goes to the kind (a path that is cleared) */
};

#define DTPLAN__KV_MAX_KEYS 64

struct dtplan__kv_table {
	const struct dtplan__kv_key *keys;
	size_t n;         /* at most DTPLAN__KV_MAX_KEYS */
	char sep;         /* ',', ' ', or '\0': the whole text is one token */
	bool nocase;      /* keys match in any case (Slurm-style files) */
	const char *form; /* the messages' "key=value" (NULL), or "Key=Value" */
	/* the messages' list of keys when too long to print (NULL: the keys) */
	const char *known;
	/* a key given again goes to its kind (a CUSTOM parse that keeps the
	 * first value), not "given twice" */
	bool repeat;
};

/* Where a list came from, for its errors: source and line go to err, prefix
 * ("" allowed, e.g. "model 'x': ") starts the messages of the table's own
 * errors below.  NULL: "", "", 0. */
struct dtplan__kv_where {
	const char *prefix;
	const char *source;
	int line;
};

/*
 * Applies text's tokens to obj, in order, and marks seen[i] (NULL allowed;
 * t->n entries) for each key given.  One convention for every list, each
 * error naming the token or key:
 *   a token without '=' (or with an empty key)  DTPLAN_ERR_PARSE
 *       "'tok' is not key=value (keys: a, b, c)"
 *   an unknown key        DTPLAN_ERR_PARSE "unknown key 'k' (known: a, b, c)"
 *   a key given twice     DTPLAN_ERR_PARSE "key 'k' given twice"
 *   an empty value        DTPLAN_ERR_PARSE "key 'k' has no value"
 *   an empty field (",,", a leading or trailing ',')  DTPLAN_ERR_PARSE
 *       "empty field in 'text'"
 *   a number out of range DTPLAN_ERR_RANGE "k: v is out of range (lo to hi)"
 * Value errors (not a number, not a name) are the kind's own, without the
 * prefix, given where's source and line when source is not "".  On error
 * obj may be half-applied: callers parse into a copy.
 */
enum dtplan_err dtplan__kv_parse(const struct dtplan__kv_table *t, const char *text, void *obj,
				 bool *seen, const struct dtplan__kv_where *where,
				 struct dtplan_error *err);

/* Writes "a, b, c" (the table's keys, hidden ones left out) into buf;
 * returns the length wanted. */
size_t dtplan__kv_known(const struct dtplan__kv_table *t, char *buf, size_t size);

#endif /* DTPLAN_BASE_BASE_H */
