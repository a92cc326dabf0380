/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan_read_stream.c: the plan reader's tokenizer, a small JSON reader over
 * a NUL-terminated text that allocates nothing: a value of any kind checked
 * and passed over, strings decoded into the caller's buffer, numbers,
 * objects and arrays one member or element at a time; and a member's value
 * as an integer, a number or a string, with the error that names it.
 * JSON's rules are a tree parser's: valid UTF-8, no lone surrogates, no
 * \u0000, no containers deeper than DTPLAN_JSON_MAX_DEPTH.  Errors carry
 * the line.  See plan_read_int.h.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/plan_read_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Containers nested deeper than this are refused (a plan nests 4 deep). */
#define MAX_DEPTH DTPLAN_JSON_MAX_DEPTH

/* ------------------------------------------------------------------------
 * A small JSON reader over a NUL-terminated text
 * ---------------------------------------------------------------------- */

/* Line of byte pos, for messages. */
int dtplan__rd_line_at(const char *s, size_t pos)
{
	int line = 1;

	for (size_t i = 0; i < pos && s[i] != '\0'; i++)
		line += s[i] == '\n';
	return line;
}

enum dtplan_err dtplan__rd_syntax(struct dtplan__rd *r, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, dtplan__rd_line_at(r->s, r->pos), "%s",
			     text);
}

static void ws(struct dtplan__rd *r)
{
	/* the text ends at its NUL, which is not a blank */
	r->pos = dtplan__json_skip_blank(r->s, r->pos, SIZE_MAX);
}

/* The next significant character, 0 at the end. */
char dtplan__rd_peek(struct dtplan__rd *r)
{
	ws(r);
	return r->s[r->pos];
}

static enum dtplan_err expect(struct dtplan__rd *r, char c)
{
	if (dtplan__rd_peek(r) != c)
		return dtplan__rd_syntax(r,
					 r->s[r->pos] ? "'%c' expected"
						      : "'%c' expected near end of file",
					 c);
	r->pos++;
	return DTPLAN_OK;
}

static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int c = (unsigned char)p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Appends n bytes to buf (size bytes with the NUL) as far as they fit; *len
 * counts them all, so that len >= size tells a string that did not fit. */
static void put(char *buf, size_t size, size_t *len, const char *bytes, size_t n)
{
	if (buf != NULL && *len + 1 < size) {
		size_t room = size - 1 - *len, k = n < room ? n : room;

		memcpy(buf + *len, bytes, k);
		buf[*len + k] = '\0';
	}
	*len += n;
}

/* Encodes code point cp as UTF-8 into out; returns its length. */
static size_t utf8_put(unsigned cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * A string (at '"'): decoded into buf when not NULL (size bytes with the NUL;
 * longer strings are cut), its decoded length in *len (NULL allowed).
 */
enum dtplan_err dtplan__rd_string(struct dtplan__rd *r, char *buf, size_t size, size_t *len)
{
	size_t n = 0;
	char enc[4];
	int cp, lo;

	if (buf != NULL && size > 0)
		buf[0] = '\0';
	if (dtplan__rd_peek(r) != '"')
		return dtplan__rd_syntax(r, "string expected");
	r->pos++;
	for (;;) {
		const unsigned char c = (unsigned char)r->s[r->pos];
		size_t u;

		if (c == '"') {
			r->pos++;
			break;
		}
		if (c == '\0')
			return dtplan__rd_syntax(r, "unterminated string");
		if (c < 0x20)
			return dtplan__rd_syntax(r, "control character 0x%x in a string", c);
		if (c >= 0x80) {
			u = dtplan__utf8_len((const unsigned char *)r->s + r->pos);
			if (u == 0)
				return dtplan__rd_syntax(r, "invalid UTF-8 in a string");
			put(buf, size, &n, r->s + r->pos, u);
			r->pos += u;
			continue;
		}
		if (c != '\\') {
			/* a run of plain characters at once */
			size_t run = 1;

			while ((unsigned char)r->s[r->pos + run] >= 0x20 &&
			       (unsigned char)r->s[r->pos + run] < 0x80 &&
			       r->s[r->pos + run] != '"' && r->s[r->pos + run] != '\\')
				run++;
			put(buf, size, &n, r->s + r->pos, run);
			r->pos += run;
			continue;
		}
		r->pos++;
		switch (r->s[r->pos]) {
		case '"':
		case '\\':
		case '/':
			put(buf, size, &n, r->s + r->pos, 1);
			break;
		case 'b':
			put(buf, size, &n, "\b", 1);
			break;
		case 'f':
			put(buf, size, &n, "\f", 1);
			break;
		case 'n':
			put(buf, size, &n, "\n", 1);
			break;
		case 'r':
			put(buf, size, &n, "\r", 1);
			break;
		case 't':
			put(buf, size, &n, "\t", 1);
			break;
		case 'u':
			cp = hex4(r->s + r->pos + 1);
			if (cp < 0)
				return dtplan__rd_syntax(r, "invalid \\u escape");
			r->pos += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return dtplan__rd_syntax(
					r, "invalid Unicode escape (lone low surrogate)");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (r->s[r->pos + 1] != '\\' || r->s[r->pos + 2] != 'u' ||
				    (lo = hex4(r->s + r->pos + 3)) < 0xdc00 || lo > 0xdfff)
					return dtplan__rd_syntax(
						r, "invalid Unicode escape (lone high "
						   "surrogate)");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				r->pos += 6;
			}
			if (cp == 0)
				return dtplan__rd_syntax(r, "\\u0000 is not allowed in a string");
			put(buf, size, &n, enc, utf8_put((unsigned)cp, enc));
			break;
		default:
			return dtplan__rd_syntax(r, "invalid escape in a string");
		}
		r->pos++;
	}
	if (len != NULL)
		*len = n;
	return DTPLAN_OK;
}

/* A number: *v its value; *whole when it is an integer (no fraction or
 * exponent) that fits in a long long, then in *i. */
enum dtplan_err dtplan__rd_number(struct dtplan__rd *r, double *v, bool *whole, long long *i)
{
	size_t start, n;
	bool integer = true;
	char buf[64], *end;

	ws(r);
	start = r->pos;
	if (r->s[r->pos] == '-')
		r->pos++;
	if (r->s[r->pos] == '0') {
		r->pos++;
	} else if (r->s[r->pos] >= '1' && r->s[r->pos] <= '9') {
		while (r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
			r->pos++;
	} else {
		return dtplan__rd_syntax(r, "invalid token");
	}
	if (r->s[r->pos] == '.') {
		integer = false;
		r->pos++;
		if (!(r->s[r->pos] >= '0' && r->s[r->pos] <= '9'))
			return dtplan__rd_syntax(r, "invalid number");
		while (r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
			r->pos++;
	}
	if (r->s[r->pos] == 'e' || r->s[r->pos] == 'E') {
		integer = false;
		r->pos++;
		if (r->s[r->pos] == '+' || r->s[r->pos] == '-')
			r->pos++;
		if (!(r->s[r->pos] >= '0' && r->s[r->pos] <= '9'))
			return dtplan__rd_syntax(r, "invalid number");
		while (r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
			r->pos++;
	}
	n = r->pos - start;
	if (n >= sizeof(buf))
		return dtplan__rd_syntax(r, "number longer than %zu characters", sizeof(buf) - 1);
	memcpy(buf, r->s + start, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtod(buf, &end);
	if (!isfinite(*v))
		return dtplan__rd_syntax(r, "number out of range");
	*whole = false;
	if (integer) {
		errno = 0;
		*i = strtoll(buf, &end, 10);
		*whole = errno == 0;
	}
	return DTPLAN_OK;
}

static enum dtplan_err literal(struct dtplan__rd *r, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(r->s + r->pos, word, n) != 0)
		return dtplan__rd_syntax(r, "invalid token");
	r->pos += n;
	return DTPLAN_OK;
}

/* Starts an object or array (the caller saw its bracket). */
enum dtplan_err dtplan__rd_open_container(struct dtplan__rd *r, char c)
{
	if (r->depth >= MAX_DEPTH)
		return dtplan__rd_syntax(r, "nested more than %d levels deep", MAX_DEPTH);
	r->depth++;
	return expect(r, c);
}

/*
 * Next member of an object opened with dtplan__rd_open_container(r, '{'): its key in
 * key (cut to size; NULL: not kept) and the reader at its value; *more
 * false after the '}'.  *first is true before the first member.
 */
enum dtplan_err dtplan__rd_next_member(struct dtplan__rd *r, bool *first, char *key, size_t size,
				       bool *more)
{
	enum dtplan_err ret;

	*more = false;
	if (dtplan__rd_peek(r) == '}') {
		r->pos++;
		r->depth--;
		return DTPLAN_OK;
	}
	if (!*first && (ret = expect(r, ',')) != DTPLAN_OK)
		return ret;
	*first = false;
	if (dtplan__rd_peek(r) != '"')
		return dtplan__rd_syntax(r, "string expected as an object key");
	if ((ret = dtplan__rd_string(r, key, size, NULL)) != DTPLAN_OK ||
	    (ret = expect(r, ':')) != DTPLAN_OK)
		return ret;
	*more = true;
	return DTPLAN_OK;
}

/* Next element of an array opened with dtplan__rd_open_container(r, '['). */
enum dtplan_err dtplan__rd_next_element(struct dtplan__rd *r, bool *first, bool *more)
{
	enum dtplan_err ret;

	if (dtplan__rd_peek(r) == ']') {
		r->pos++;
		r->depth--;
		*more = false;
		return DTPLAN_OK;
	}
	if (!*first && (ret = expect(r, ',')) != DTPLAN_OK)
		return ret;
	*first = false;
	if (dtplan__rd_peek(r) == ']')
		return dtplan__rd_syntax(r, "value expected");
	*more = true;
	return DTPLAN_OK;
}

/* Validates and passes over one value of any kind. */
enum dtplan_err dtplan__rd_skip_value(struct dtplan__rd *r)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	double v;
	long long i;
	bool whole;

	switch (dtplan__rd_peek(r)) {
	case '{':
		if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
			return ret;
		while ((ret = dtplan__rd_next_member(r, &first, NULL, 0, &more)) == DTPLAN_OK &&
		       more)
			if ((ret = dtplan__rd_skip_value(r)) != DTPLAN_OK)
				return ret;
		return ret;
	case '[':
		if ((ret = dtplan__rd_open_container(r, '[')) != DTPLAN_OK)
			return ret;
		while ((ret = dtplan__rd_next_element(r, &first, &more)) == DTPLAN_OK && more)
			if ((ret = dtplan__rd_skip_value(r)) != DTPLAN_OK)
				return ret;
		return ret;
	case '"':
		return dtplan__rd_string(r, NULL, 0, NULL);
	case 't':
		return literal(r, "true");
	case 'f':
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	case '\0':
		return dtplan__rd_syntax(r, "value expected near end of file");
	default:
		return dtplan__rd_number(r, &v, &whole, &i);
	}
}

/* Counts the elements of the array at the reader, passing over it. */
enum dtplan_err dtplan__rd_count_elements(struct dtplan__rd *r, size_t *n)
{
	enum dtplan_err ret;
	bool first = true, more = true;

	*n = 0;
	if ((ret = dtplan__rd_open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_element(r, &first, &more)) == DTPLAN_OK && more) {
		if ((ret = dtplan__rd_skip_value(r)) != DTPLAN_OK)
			return ret;
		(*n)++;
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * A member's value
 * ---------------------------------------------------------------------- */

/* A reader at span s of the same text. */
struct dtplan__rd dtplan__rd_at(const struct dtplan__rd *r, struct dtplan__span s)
{
	struct dtplan__rd sub = *r;

	sub.pos = s.pos;
	sub.depth = 0;
	return sub;
}

/* Index of key in keys[], -1 when none; refuses a second sighting. */
int dtplan__rd_known_key(struct dtplan__rd *r, const char *key, const char *const *keys, size_t n,
			 unsigned *seen, enum dtplan_err *rv)
{
	for (size_t k = 0; k < n; k++) {
		if (strcmp(key, keys[k]) != 0)
			continue;
		if (*seen & (1u << k)) {
			*rv = dtplan__rd_syntax(r, "duplicate object key '%s'", key);
			return -1;
		}
		*seen |= 1u << k;
		return (int)k;
	}
	return -1;
}

/* An integer member value: null leaves *out; else a whole number in
 * [-1, 10^9] ("WHERE.KEY: expected a whole number"). */
enum dtplan_err dtplan__rd_int_value(struct dtplan__rd *r, const char *where, const char *key,
				     int *out)
{
	enum dtplan_err ret;
	long long i = 0;
	double v;
	bool whole = false;

	if (dtplan__rd_peek(r) == 'n')
		return literal(r, "null");
	if (dtplan__rd_peek(r) == '-' || (dtplan__rd_peek(r) >= '0' && dtplan__rd_peek(r) <= '9')) {
		if ((ret = dtplan__rd_number(r, &v, &whole, &i)) != DTPLAN_OK)
			return ret;
		if (whole && i >= -1 && i <= 1000000000) {
			*out = (int)i;
			return DTPLAN_OK;
		}
	}
	return dtplan__rd_syntax(r, "%s.%s: expected a whole number", where, key);
}

/* A number member value: null leaves *out ("WHERE.KEY: expected a number"). */
enum dtplan_err dtplan__rd_num_value(struct dtplan__rd *r, const char *where, const char *key,
				     double *out)
{
	long long i;
	bool whole;

	if (dtplan__rd_peek(r) == 'n')
		return literal(r, "null");
	if (dtplan__rd_peek(r) == '-' || (dtplan__rd_peek(r) >= '0' && dtplan__rd_peek(r) <= '9'))
		return dtplan__rd_number(r, out, &whole, &i);
	return dtplan__rd_syntax(r, "%s.%s: expected a number", where, key);
}

/* A string member value into buf (cut to size): null leaves buf
 * ("WHERE.KEY: expected a string"). */
enum dtplan_err dtplan__rd_str_value(struct dtplan__rd *r, const char *where, const char *key,
				     char *buf, size_t size)
{
	if (dtplan__rd_peek(r) == 'n')
		return literal(r, "null");
	if (dtplan__rd_peek(r) == '"')
		return dtplan__rd_string(r, buf, size, NULL);
	return dtplan__rd_syntax(r, "%s.%s: expected a string", where, key);
}
