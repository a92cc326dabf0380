/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * text.c: the one growing text (curl's dynbuf): printf-style and raw
 * appends, doubling from 1 KiB; on allocation failure it frees what it
 * held, stays failed and empty, and every later append is a no-op, so a
 * writer checks `failed` once at the end.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for want more bytes and a NUL; false (the text failed) when none. */
static bool grow(struct dtplan__text *t, size_t want)
{
	size_t cap = t->cap ? t->cap : 1024;
	char *s;

	if (t->failed)
		return false;
	if (t->len + want + 1 <= t->cap)
		return true;
	while (t->len + want + 1 > cap)
		cap *= 2;
	s = realloc(t->s, cap);
	if (s == NULL) {
		dtplan__text_fini(t);
		t->failed = true;
		return false;
	}
	t->s = s;
	t->cap = cap;
	return true;
}

void dtplan__text_add(struct dtplan__text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	/* written where it fits, measured and grown where it does not */
	va_start(ap, fmt);
	n = vsnprintf(t->s != NULL ? t->s + t->len : NULL, t->s != NULL ? t->cap - t->len : 0, fmt,
		      ap);
	va_end(ap);
	if (n < 0) {
		dtplan__text_fini(t);
		t->failed = true;
		return;
	}
	if (t->s != NULL && t->len + (size_t)n < t->cap) {
		t->len += (size_t)n;
		return;
	}
	if (!grow(t, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

void dtplan__text_put(struct dtplan__text *t, const void *bytes, size_t n)
{
	if (!grow(t, n))
		return;
	if (n > 0)
		memcpy(t->s + t->len, bytes, n);
	t->len += n;
	t->s[t->len] = '\0';
}

size_t dtplan__text_keep(struct dtplan__text *t, const char *s)
{
	size_t at = t->len, n = strlen(s);

	if (!grow(t, n))
		return DTPLAN_TEXT_NONE;
	memcpy(t->s + at, s, n + 1);
	t->len += n + 1; /* past the terminating NUL: the string stays whole */
	return at;
}

char *dtplan__text_take(struct dtplan__text *t)
{
	char *s = t->failed ? NULL : t->s;

	if (s == NULL && !t->failed)
		s = strdup("");
	memset(t, 0, sizeof(*t));
	return s;
}

void dtplan__text_fini(struct dtplan__text *t)
{
	if (t == NULL)
		return;
	free(t->s);
	memset(t, 0, sizeof(*t));
}
