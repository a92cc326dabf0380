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

#endif /* DTPLAN_PRIVATE_H */
