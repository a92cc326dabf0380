/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * error.c: error codes and struct dtplan_error helpers.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *dtplan_strerror(enum dtplan_err code)
{
	/* A switch without default, so that -Wall flags a missing case. */
	switch (code) {
	case DTPLAN_OK:
		return "success";
	case DTPLAN_ERR_NOMEM:
		return "out of memory";
	case DTPLAN_ERR_INVAL:
		return "invalid value";
	case DTPLAN_ERR_PARSE:
		return "parse error";
	case DTPLAN_ERR_IO:
		return "input/output error";
	case DTPLAN_ERR_NOT_FOUND:
		return "not found";
	case DTPLAN_ERR_RANGE:
		return "value out of range";
	case DTPLAN_ERR_NO_FIT:
		return "no configuration fits";
	case DTPLAN_ERR_TIMEOUT:
		return "timed out";
	case DTPLAN_ERR_UNSUPPORTED:
		return "not supported";
	case DTPLAN_ERR_POLICY:
		return "violates site policy";
	case DTPLAN_ERR__LAST:
		break;
	}
	return "unknown error";
}

void dtplan_error_clear(struct dtplan_error *err)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
}

const char *dtplan_error_format(const struct dtplan_error *err, char *buf, size_t size)
{
	if (buf == NULL || size == 0)
		return buf;
	buf[0] = '\0';
	if (err == NULL)
		return buf;
	if (err->source[0] != '\0' && err->line > 0)
		snprintf(buf, size, "%s:%d: %s", err->source, err->line,
			 err->text[0] ? err->text : dtplan_strerror(err->code));
	else if (err->source[0] != '\0')
		snprintf(buf, size, "%s: %s", err->source,
			 err->text[0] ? err->text : dtplan_strerror(err->code));
	else
		snprintf(buf, size, "%s", err->text[0] ? err->text : dtplan_strerror(err->code));
	return buf;
}

enum dtplan_err dtplan__error(struct dtplan_error *err, enum dtplan_err code, const char *source,
			      int line, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err->code = code;
	dtplan__strlcpy(err->source, source ? source : "", sizeof(err->source));
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return code;
}

size_t dtplan__strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size > 0) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

bool dtplan__streq_nocase(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcasecmp(a, b) == 0;
}

long long dtplan__gcd(long long a, long long b)
{
	while (b != 0) {
		long long t = a % b;

		a = b;
		b = t;
	}
	return a;
}

const char *dtplan_version(void)
{
	return PACKAGE_VERSION;
}
