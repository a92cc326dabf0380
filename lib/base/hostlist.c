/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostlist.c: Slurm hostlist expressions ("node[01-16,20],gpu7") expanded to
 * names, matched against a name without expanding, and compressed back for
 * messages.
 *
 * Grammar: a comma-separated list of terms; a term is literal characters
 * (letters, digits, '-', '_', '.') and bracket groups "[r,r,...]" where r is
 * "N" or "N-M".  Several groups in one term give their cartesian product,
 * the first group varying slowest ("a[1-2]b[3-4]" -> a1b3 a1b4 a2b3 a2b4).
 * A low bound written with a leading zero fixes the width ("01-16").
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIGITS 18

/* Messages quote an expression whole up to this length, else its start and "...". */
#define QUOTE_MAX 72

struct hl_range {
	unsigned long long lo, hi;
	int width; /* zero-padded width, 0 when not padded */
};

struct hl_piece {
	const char *lit; /* literal text (not terminated), NULL for a group */
	size_t lit_len;
	size_t first; /* group: first range in hostlist.ranges */
	size_t n_ranges;
	unsigned long long count; /* group: names it yields */
};

struct hl_term {
	size_t first; /* first piece in hostlist.pieces */
	size_t n_pieces;
};

struct hostlist {
	const char *expr;
	char quote[QUOTE_MAX + 4]; /* expr as messages quote it */
	struct hl_term *terms;
	size_t n_terms;
	struct hl_piece *pieces;
	size_t n_pieces;
	struct hl_range *ranges;
	size_t n_ranges;
};

static void hostlist_free(struct hostlist *h)
{
	free(h->terms);
	free(h->pieces);
	free(h->ranges);
	memset(h, 0, sizeof(*h));
}

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

static enum dtplan_err parse_number(const char *expr, const char *s, size_t len,
				    unsigned long long *v, int *width, struct dtplan_error *err)
{
	unsigned long long x = 0;

	if (len == 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
				     "hostlist '%s': empty number in a bracket range", expr);
	if (len > MAX_DIGITS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "hostlist '%s': number '%.*s' has more than %d digits", expr,
				     (int)len, s, MAX_DIGITS);
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "hostlist '%s': '%.*s' is not a number", expr,
					     (int)len, s);
		x = x * 10 + (unsigned long long)(s[i] - '0');
	}
	*v = x;
	*width = (len > 1 && s[0] == '0') ? (int)len : 0;
	return DTPLAN_OK;
}

/* Parses the ranges between '[' and ']' (s, len) into h->ranges. */
static enum dtplan_err parse_group(struct hostlist *h, const char *s, size_t len,
				   struct hl_piece *p, struct dtplan_error *err)
{
	enum dtplan_err rv;
	size_t i = 0;

	p->first = h->n_ranges;
	p->n_ranges = 0;
	p->count = 0;
	if (len == 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0, "hostlist '%s': empty brackets",
				     h->quote);
	while (i <= len) {
		size_t end = i, dash;
		struct hl_range *r = &h->ranges[h->n_ranges];
		int hi_width;

		while (end < len && s[end] != ',')
			end++;
		for (dash = i; dash < end && s[dash] != '-'; dash++)
			;
		rv = parse_number(h->quote, s + i, dash - i, &r->lo, &r->width, err);
		if (rv != DTPLAN_OK)
			return rv;
		if (dash < end) {
			rv = parse_number(h->quote, s + dash + 1, end - dash - 1, &r->hi, &hi_width,
					  err);
			if (rv != DTPLAN_OK)
				return rv;
		} else {
			r->hi = r->lo;
		}
		if (r->hi < r->lo)
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "hostlist '%s': range %.*s is reversed", h->quote,
					     (int)(end - i), s + i);
		/* Each range holds under 10^18 names; their sum must not wrap (a
		 * count of 0 divided expand_term, a small one was the wrong count). */
		if (r->hi - r->lo + 1 > ULLONG_MAX - p->count)
			return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					     "hostlist '%s': the ranges in one bracket name more "
					     "than %llu hosts",
					     h->quote, ULLONG_MAX);
		p->count += r->hi - r->lo + 1;
		h->n_ranges++;
		p->n_ranges++;
		i = end + 1;
	}
	return DTPLAN_OK;
}

static enum dtplan_err hostlist_parse(const char *expr, struct hostlist *h,
				      struct dtplan_error *err)
{
	size_t len, i = 0;
	enum dtplan_err rv;
	struct hl_term *t;

	memset(h, 0, sizeof(*h));
	if (expr == NULL || expr[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0, "hostlist is empty");
	h->expr = expr;
	len = strlen(expr);
	if (len <= QUOTE_MAX)
		memcpy(h->quote, expr, len + 1);
	else
		snprintf(h->quote, sizeof(h->quote), "%.*s...", QUOTE_MAX - 3, expr);
	h->terms = calloc(len + 1, sizeof(*h->terms));
	h->pieces = calloc(len + 1, sizeof(*h->pieces));
	h->ranges = calloc(len + 1, sizeof(*h->ranges));
	if (h->terms == NULL || h->pieces == NULL || h->ranges == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	t = &h->terms[0];
	h->n_terms = 1;
	while (i <= len) {
		char c = expr[i];

		if (c == ',' || c == '\0') {
			if (t->n_pieces == 0) {
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
						   "hostlist '%s': empty name at offset %zu",
						   h->quote, i);
				goto out;
			}
			if (c == '\0')
				break;
			t = &h->terms[h->n_terms++];
			t->first = h->n_pieces;
			i++;
		} else if (c == '[') {
			const char *close = strchr(expr + i + 1, ']');
			const char *open = strchr(expr + i + 1, '[');
			struct hl_piece *p = &h->pieces[h->n_pieces];

			if (close == NULL || (open != NULL && open < close)) {
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
						   "hostlist '%s': '[' at offset %zu has no ']'",
						   h->quote, i);
				goto out;
			}
			rv = parse_group(h, expr + i + 1, (size_t)(close - expr) - i - 1, p, err);
			if (rv != DTPLAN_OK)
				goto out;
			h->n_pieces++;
			t->n_pieces++;
			i = (size_t)(close - expr) + 1;
		} else if (is_name_char(c)) {
			struct hl_piece *p = &h->pieces[h->n_pieces++];

			p->lit = expr + i;
			while (is_name_char(expr[i]))
				i++;
			p->lit_len = (size_t)(expr + i - p->lit);
			t->n_pieces++;
		} else {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					   "hostlist '%s': unexpected '%c' at offset %zu", h->quote,
					   c, i);
			goto out;
		}
	}
	rv = DTPLAN_OK;
out:
	if (rv != DTPLAN_OK)
		hostlist_free(h);
	return rv;
}

/* Number of names a term yields, saturating at limit + 1. */
static unsigned long long term_count(const struct hostlist *h, const struct hl_term *t,
				     unsigned long long limit)
{
	unsigned long long n = 1;

	for (size_t i = 0; i < t->n_pieces; i++) {
		const struct hl_piece *p = &h->pieces[t->first + i];

		if (p->lit != NULL)
			continue;
		if (p->count > limit || n > limit / p->count)
			return limit + 1;
		n *= p->count;
	}
	return n;
}

/* Writes value v of range r at buf+pos; returns the new position or -1 when too long. */
static int put_number(char *buf, int pos, unsigned long long v, int width)
{
	int w = snprintf(buf + pos, (size_t)(64 - pos), "%0*llu", width, v);

	return (w < 0 || pos + w >= 64) ? -1 : pos + w;
}

/* Index of the range holding the k-th value of a group, and that value. */
static unsigned long long group_value(const struct hostlist *h, const struct hl_piece *p,
				      unsigned long long k, int *width)
{
	for (size_t i = 0; i < p->n_ranges; i++) {
		const struct hl_range *r = &h->ranges[p->first + i];
		unsigned long long n = r->hi - r->lo + 1;

		if (k < n) {
			*width = r->width;
			return r->lo + k;
		}
		k -= n;
	}
	*width = 0;
	return 0;
}

static enum dtplan_err expand_term(const struct hostlist *h, const struct hl_term *t,
				   unsigned long long count, char (*names)[64], size_t *n,
				   struct dtplan_error *err)
{
	for (unsigned long long k = 0; k < count; k++) {
		unsigned long long rest = k, div = count;
		char *buf = names[*n];
		int pos = 0;

		for (size_t i = 0; i < t->n_pieces && pos >= 0; i++) {
			const struct hl_piece *p = &h->pieces[t->first + i];
			int width;
			unsigned long long v;

			if (p->lit != NULL) {
				if (pos + (int)p->lit_len >= 64 || p->lit_len >= 64) {
					pos = -1;
					break;
				}
				memcpy(buf + pos, p->lit, p->lit_len);
				pos += (int)p->lit_len;
				buf[pos] = '\0';
				continue;
			}
			div /= p->count;
			v = group_value(h, p, rest / div, &width);
			rest %= div;
			pos = put_number(buf, pos, v, width);
		}
		if (pos < 0)
			return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					     "hostlist '%s': a name is longer than 63 characters",
					     h->quote);
		(*n)++;
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan_hostlist_expand(const char *expr, size_t max_hosts, char (**names)[64],
				       size_t *n, struct dtplan_error *err)
{
	struct hostlist h;
	unsigned long long total = 0, limit = max_hosts;
	char(*out)[64] = NULL;
	enum dtplan_err rv;

	if (names != NULL)
		*names = NULL;
	if (n != NULL)
		*n = 0;
	if (names == NULL || n == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "hostlist: no output given");
	rv = hostlist_parse(expr, &h, err);
	if (rv != DTPLAN_OK)
		return rv;
	for (size_t i = 0; i < h.n_terms; i++) {
		total += term_count(&h, &h.terms[i], limit);
		if (total > limit) {
			rv = dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					   "hostlist '%s' names more than %zu hosts", h.quote,
					   max_hosts);
			goto out;
		}
	}
	out = calloc(total > 0 ? (size_t)total : 1, sizeof(*out));
	if (out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < h.n_terms; i++) {
		rv = expand_term(&h, &h.terms[i], term_count(&h, &h.terms[i], limit), out, n, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	*names = out;
	out = NULL;
	rv = DTPLAN_OK;
out:
	if (rv != DTPLAN_OK)
		*n = 0;
	free(out);
	hostlist_free(&h);
	return rv;
}

/* Does name match pieces [i, end) of a term? */
static bool match_pieces(const struct hostlist *h, const struct hl_term *t, size_t i,
			 const char *name)
{
	const struct hl_piece *p;
	size_t digits = 0;

	if (i == t->n_pieces)
		return name[0] == '\0';
	p = &h->pieces[t->first + i];
	if (p->lit != NULL)
		return strncmp(name, p->lit, p->lit_len) == 0 &&
		       match_pieces(h, t, i + 1, name + p->lit_len);
	while (digits < MAX_DIGITS && isdigit((unsigned char)name[digits]))
		digits++;
	for (size_t len = 1; len <= digits; len++) {
		unsigned long long v = 0;

		for (size_t k = 0; k < len; k++)
			v = v * 10 + (unsigned long long)(name[k] - '0');
		for (size_t r = 0; r < p->n_ranges; r++) {
			const struct hl_range *rg = &h->ranges[p->first + r];
			char buf[32];

			if (v < rg->lo || v > rg->hi)
				continue;
			snprintf(buf, sizeof(buf), "%0*llu", rg->width, v);
			if (strlen(buf) == len && strncmp(buf, name, len) == 0 &&
			    match_pieces(h, t, i + 1, name + len))
				return true;
		}
	}
	return false;
}

enum dtplan_err dtplan_hostlist_match(const char *expr, const char *name, bool *match,
				      struct dtplan_error *err)
{
	struct hostlist h;
	enum dtplan_err rv;

	if (match == NULL || name == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "hostlist: no name given");
	*match = false;
	rv = hostlist_parse(expr, &h, err);
	if (rv != DTPLAN_OK)
		return rv;
	for (size_t i = 0; i < h.n_terms && !*match; i++)
		*match = match_pieces(&h, &h.terms[i], 0, name);
	hostlist_free(&h);
	return DTPLAN_OK;
}

/* ---- compression ---- */

struct cname {
	const char *name;  /* names[index], borrowed */
	size_t index;      /* position in the input */
	size_t prefix_len; /* characters before the trailing digits */
	int width;         /* padded width (digits with a leading zero), else 0 */
	size_t digits;     /* number of trailing digits, 0 when none */
	unsigned long long v;
	size_t group; /* index of the first name of its group */
	/* on a group's first name: the group's width and its unpadded digit counts */
	int gwidth;
	size_t gmin, gmax;
};

/* Appends text to buf at *pos; on overflow ends buf with "..." and returns false. */
static bool append(char *buf, size_t size, size_t *pos, const char *text, size_t len)
{
	if (*pos + len + 1 > size) {
		if (size >= 4) {
			size_t at = *pos + 4 <= size ? *pos : size - 4;

			memcpy(buf + at, "...", 4);
		}
		*pos = size;
		return false;
	}
	memcpy(buf + *pos, text, len);
	*pos += len;
	buf[*pos] = '\0';
	return true;
}

static int cmp_cname(const void *a, const void *b)
{
	const struct cname *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return 0;
}

/* Orders names by the text before their trailing digits, then by input
 * position, so that the names that may share a group are neighbours. */
static int cmp_prefix(const void *a, const void *b)
{
	const struct cname *x = *(const struct cname *const *)a;
	const struct cname *y = *(const struct cname *const *)b;
	int d;

	if (x->prefix_len != y->prefix_len)
		return x->prefix_len < y->prefix_len ? -1 : 1;
	d = memcmp(x->name, y->name, x->prefix_len);
	if (d != 0)
		return d;
	return x->index < y->index ? -1 : x->index > y->index;
}

static bool same_prefix(const struct cname *x, const struct cname *y)
{
	return x->prefix_len == y->prefix_len && memcmp(x->name, y->name, x->prefix_len) == 0;
}

/* Can name x join the group led by g?  Same prefix, and one width for the group:
 * "10" joins "09" (width 2), "9" and "10" group unpadded, "9" and "09" do not. */
static bool can_join(const char (*names)[64], const struct cname *g, const struct cname *x)
{
	if (x->digits == 0 || g->digits == 0 || g->prefix_len != x->prefix_len ||
	    strncmp(names[g->index], names[x->index], g->prefix_len) != 0)
		return false;
	if (x->width == 0)
		return g->gwidth == 0 || (int)x->digits == g->gwidth;
	if (g->gwidth != 0)
		return g->gwidth == x->width;
	return g->gmin == (size_t)x->width && g->gmax == (size_t)x->width;
}

/*
 * Each name joins the first earlier group it can join (can_join()), as a
 * scan over every earlier group would decide; only groups of the same prefix
 * can take it, so the scan runs over the few groups of its prefix (at most one
 * per padded width and one unpadded at a time).  O(n log n) for the sorts.
 */
static bool group_names(const char (*names)[64], struct cname *c, size_t n)
{
	struct cname **order = malloc(n * sizeof(*order));

	if (order == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
		order[i] = &c[i];
	qsort(order, n, sizeof(*order), cmp_prefix);
	for (size_t b = 0, e; b < n; b = e) {
		size_t n_leaders = 0; /* leaders of this prefix, kept in order[b..] */

		for (e = b + 1; e < n && same_prefix(order[b], order[e]); e++)
			;
		for (size_t j = b; j < e; j++) {
			struct cname *x = order[j];
			size_t k;

			if (x->digits == 0)
				continue; /* a group of its own */
			for (k = 0; k < n_leaders; k++) {
				struct cname *g = order[b + k];

				if (!can_join(names, g, x))
					continue;
				x->group = g->index;
				if (x->width != 0)
					g->gwidth = x->width;
				if (x->digits < g->gmin)
					g->gmin = x->digits;
				if (x->digits > g->gmax)
					g->gmax = x->digits;
				break;
			}
			if (k == n_leaders)
				order[b + n_leaders++] = x; /* b + n_leaders <= j: already seen */
		}
	}
	free(order);
	return true;
}

const char *dtplan_hostlist_compress(const char (*names)[64], size_t n, char *buf, size_t size)
{
	struct cname *c = NULL;
	size_t pos = 0;

	if (buf == NULL || size == 0)
		return buf;
	buf[0] = '\0';
	if (names == NULL || n == 0)
		return buf;
	c = calloc(n, sizeof(*c));
	if (c == NULL) {
		dtplan__strlcpy(buf, size >= 4 ? "..." : "", size);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strnlen(names[i], 63), d = 0;

		while (d < len && d < MAX_DIGITS && isdigit((unsigned char)names[i][len - 1 - d]))
			d++;
		if (d == len || (d < len && isdigit((unsigned char)names[i][len - 1 - d])))
			d = 0; /* all digits, or too many: keep the name whole */
		c[i].name = names[i];
		c[i].index = i;
		c[i].digits = d;
		c[i].prefix_len = len - d;
		for (size_t k = 0; k < d; k++)
			c[i].v = c[i].v * 10 + (unsigned long long)(names[i][len - d + k] - '0');
		c[i].width = (d > 1 && names[i][len - d] == '0') ? (int)d : 0;
		c[i].group = i;
		c[i].gwidth = c[i].width;
		c[i].gmin = c[i].gmax = c[i].width == 0 ? d : 0;
		if (c[i].width != 0)
			c[i].gmin = c[i].gmax = (size_t)c[i].width;
	}
	if (!group_names(names, c, n)) {
		dtplan__strlcpy(buf, size >= 4 ? "..." : "", size);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		c[i].gwidth = c[c[i].group].gwidth;
	qsort(c, n, sizeof(*c), cmp_cname);
	/* Drop repeats of a number inside a group. */
	for (size_t i = 1, k = 1; i <= n; i++) {
		if (i == n) {
			n = k;
			break;
		}
		if (c[i].digits > 0 && c[i].group == c[k - 1].group && c[i].v == c[k - 1].v)
			continue;
		c[k++] = c[i];
	}
	for (size_t i = 0; i < n;) {
		size_t end = i + 1;
		char tmp[96];
		int w;

		while (end < n && c[end].group == c[i].group)
			end++;
		if (pos > 0 && !append(buf, size, &pos, ",", 1))
			break;
		if (end - i == 1) {
			const char *name = names[c[i].index];

			if (!append(buf, size, &pos, name, strnlen(name, 63)))
				break;
			i = end;
			continue;
		}
		w = snprintf(tmp, sizeof(tmp), "%.*s[", (int)c[i].prefix_len, names[c[i].index]);
		if (!append(buf, size, &pos, tmp, (size_t)w))
			break;
		for (size_t k = i; k < end;) {
			size_t run = k;
			int width = c[i].gwidth;

			while (run + 1 < end && c[run + 1].v <= c[run].v + 1)
				run++;
			if (run == k)
				w = snprintf(tmp, sizeof(tmp), "%s%0*llu", k > i ? "," : "", width,
					     c[k].v);
			else
				w = snprintf(tmp, sizeof(tmp), "%s%0*llu-%0*llu", k > i ? "," : "",
					     width, c[k].v, width, c[run].v);
			if (!append(buf, size, &pos, tmp, (size_t)w))
				goto out;
			k = run + 1;
		}
		if (!append(buf, size, &pos, "]", 1))
			break;
		i = end;
	}
out:
	free(c);
	return buf;
}
