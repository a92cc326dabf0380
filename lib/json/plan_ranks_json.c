/*
 * plan_ranks_json.c: a plan's JSON read back.  dtplan_plan_ranks_from_json()
 * reads the part tasks need (parallel degrees, node order, ranks) in every
 * srun step, so that all tasks follow the plan the batch step made instead
 * of recomputing it; dtplan_plan_from_json() reads everything the text and
 * the picture show (dtplan show).
 *
 * Reads what lib/json/plan_json.c writes: "parallelism", "checkpoint",
 * "placement" {"nodes", "ranks", "leaves"}, "degraded", and for the whole
 * plan the model, GPUs, framework, attention and precision, memory,
 * prediction, runner-up, time to train and warnings.  Lenient where it costs
 * nothing: node entries may be strings or objects with "name", a rank's node
 * an index or a name, "recompute" a name or a number, members the text does
 * not show (vp, offload, training, ...) may be absent.
 *
 * The ranks reader runs in slurmstepd on every node of every step, on a
 * file the user names (DTPLAN_FILE), so it is a small streaming reader
 * rather than a document tree: a tree of a 64 MiB file of "{}," took 5 GB
 * and 12 s, and a 16,384-node plan 183 MB and 3 s (issue 13, finding 9).
 * The text is read twice, without allocating: once to validate it and find
 * the members this file reads, once to read them.  Memory is the plan's own
 * (60 bytes a rank, 68 a node), allocated after the counts are checked
 * against the parallel degrees and the limits below
 * (doc/internals/limits.md); node names are found by binary search.  Time is
 * linear (n log n for names).
 *
 * The whole-plan reader shares that pass and the placement's reader (the
 * large part of a plan), and reads the small members the text shows with
 * Jansson, each from its own span of the text and at most
 * MAX_MEMBER_TEXT bytes of it, so that no member builds a tree larger than
 * a few megabytes whatever the file holds.  Errors name the member (and the
 * line, where the text is at fault).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "plan JSON"

/* Containers nested deeper than this are refused (a plan nests 4 deep). */
#define MAX_DEPTH DTPLAN_JSON_MAX_DEPTH

/* Members of the top-level object (a plan has about 20). */
#define MAX_TOP_MEMBERS 256

/* Most text of one top-level member the whole-plan reader builds a tree of
 * (a plan's are under 64 KiB; the warnings about 600 KiB at most). */
#define MAX_MEMBER_TEXT (1 << 20)

/* Most warnings read back: far more than a plan makes. */
#define DTPLAN_PLAN_MAX_WARNINGS 1024

/* ------------------------------------------------------------------------
 * A small JSON reader over a NUL-terminated text
 * ---------------------------------------------------------------------- */

struct rd {
	const char *s; /* the whole text */
	size_t pos;
	int depth;
	struct dtplan_error *err;
};

/* A member's value found by the first pass: where it starts and ends. */
struct span {
	bool found;
	size_t pos, end;
};

/* Line of byte pos, for messages. */
static int line_at(const char *s, size_t pos)
{
	int line = 1;

	for (size_t i = 0; i < pos && s[i] != '\0'; i++)
		line += s[i] == '\n';
	return line;
}

static enum dtplan_err syntax(struct rd *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static enum dtplan_err syntax(struct rd *r, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, line_at(r->s, r->pos), "%s", text);
}

static void ws(struct rd *r)
{
	while (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' || r->s[r->pos] == '\n' ||
	       r->s[r->pos] == '\r')
		r->pos++;
}

/* The next significant character, 0 at the end. */
static char peek(struct rd *r)
{
	ws(r);
	return r->s[r->pos];
}

static enum dtplan_err expect(struct rd *r, char c)
{
	if (peek(r) != c)
		return syntax(r, r->s[r->pos] ? "'%c' expected" : "'%c' expected near end of file",
			      c);
	r->pos++;
	return DTPLAN_OK;
}

/* Length of the valid UTF-8 sequence at p (a byte >= 0x80), 0 when invalid. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
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
static enum dtplan_err string(struct rd *r, char *buf, size_t size, size_t *len)
{
	size_t n = 0;
	char enc[4];
	int cp, lo;

	if (buf != NULL && size > 0)
		buf[0] = '\0';
	if (peek(r) != '"')
		return syntax(r, "string expected");
	r->pos++;
	for (;;) {
		const unsigned char c = (unsigned char)r->s[r->pos];
		size_t u;

		if (c == '"') {
			r->pos++;
			break;
		}
		if (c == '\0')
			return syntax(r, "unterminated string");
		if (c < 0x20)
			return syntax(r, "control character 0x%x in a string", c);
		if (c >= 0x80) {
			u = utf8_len((const unsigned char *)r->s + r->pos);
			if (u == 0)
				return syntax(r, "invalid UTF-8 in a string");
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
				return syntax(r, "invalid \\u escape");
			r->pos += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return syntax(r, "invalid Unicode escape (lone low surrogate)");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (r->s[r->pos + 1] != '\\' || r->s[r->pos + 2] != 'u' ||
				    (lo = hex4(r->s + r->pos + 3)) < 0xdc00 || lo > 0xdfff)
					return syntax(r, "invalid Unicode escape (lone high "
							 "surrogate)");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				r->pos += 6;
			}
			if (cp == 0)
				return syntax(r, "\\u0000 is not allowed in a string");
			put(buf, size, &n, enc, utf8_put((unsigned)cp, enc));
			break;
		default:
			return syntax(r, "invalid escape in a string");
		}
		r->pos++;
	}
	if (len != NULL)
		*len = n;
	return DTPLAN_OK;
}

/* A number: *v its value; *whole when it is an integer (no fraction or
 * exponent) that fits in a long long, then in *i. */
static enum dtplan_err number(struct rd *r, double *v, bool *whole, long long *i)
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
		return syntax(r, "invalid token");
	}
	if (r->s[r->pos] == '.') {
		integer = false;
		r->pos++;
		if (!(r->s[r->pos] >= '0' && r->s[r->pos] <= '9'))
			return syntax(r, "invalid number");
		while (r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
			r->pos++;
	}
	if (r->s[r->pos] == 'e' || r->s[r->pos] == 'E') {
		integer = false;
		r->pos++;
		if (r->s[r->pos] == '+' || r->s[r->pos] == '-')
			r->pos++;
		if (!(r->s[r->pos] >= '0' && r->s[r->pos] <= '9'))
			return syntax(r, "invalid number");
		while (r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
			r->pos++;
	}
	n = r->pos - start;
	if (n >= sizeof(buf))
		return syntax(r, "number longer than %zu characters", sizeof(buf) - 1);
	memcpy(buf, r->s + start, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtod(buf, &end);
	if (!isfinite(*v))
		return syntax(r, "number out of range");
	*whole = false;
	if (integer) {
		errno = 0;
		*i = strtoll(buf, &end, 10);
		*whole = errno == 0;
	}
	return DTPLAN_OK;
}

static enum dtplan_err literal(struct rd *r, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(r->s + r->pos, word, n) != 0)
		return syntax(r, "invalid token");
	r->pos += n;
	return DTPLAN_OK;
}

static enum dtplan_err skip_value(struct rd *r);

/* Starts an object or array (the caller saw its bracket). */
static enum dtplan_err open_container(struct rd *r, char c)
{
	if (r->depth >= MAX_DEPTH)
		return syntax(r, "nested more than %d levels deep", MAX_DEPTH);
	r->depth++;
	return expect(r, c);
}

/*
 * Next member of an object opened with open_container(r, '{'): its key in
 * key (cut to size; NULL: not kept) and the reader at its value; *more
 * false after the '}'.  *first is true before the first member.
 */
static enum dtplan_err next_member(struct rd *r, bool *first, char *key, size_t size, bool *more)
{
	enum dtplan_err ret;

	*more = false;
	if (peek(r) == '}') {
		r->pos++;
		r->depth--;
		return DTPLAN_OK;
	}
	if (!*first && (ret = expect(r, ',')) != DTPLAN_OK)
		return ret;
	*first = false;
	if (peek(r) != '"')
		return syntax(r, "string expected as an object key");
	if ((ret = string(r, key, size, NULL)) != DTPLAN_OK || (ret = expect(r, ':')) != DTPLAN_OK)
		return ret;
	*more = true;
	return DTPLAN_OK;
}

/* Next element of an array opened with open_container(r, '['). */
static enum dtplan_err next_element(struct rd *r, bool *first, bool *more)
{
	enum dtplan_err ret;

	if (peek(r) == ']') {
		r->pos++;
		r->depth--;
		*more = false;
		return DTPLAN_OK;
	}
	if (!*first && (ret = expect(r, ',')) != DTPLAN_OK)
		return ret;
	*first = false;
	if (peek(r) == ']')
		return syntax(r, "value expected");
	*more = true;
	return DTPLAN_OK;
}

/* Validates and passes over one value of any kind. */
static enum dtplan_err skip_value(struct rd *r)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	double v;
	long long i;
	bool whole;

	switch (peek(r)) {
	case '{':
		if ((ret = open_container(r, '{')) != DTPLAN_OK)
			return ret;
		while ((ret = next_member(r, &first, NULL, 0, &more)) == DTPLAN_OK && more)
			if ((ret = skip_value(r)) != DTPLAN_OK)
				return ret;
		return ret;
	case '[':
		if ((ret = open_container(r, '[')) != DTPLAN_OK)
			return ret;
		while ((ret = next_element(r, &first, &more)) == DTPLAN_OK && more)
			if ((ret = skip_value(r)) != DTPLAN_OK)
				return ret;
		return ret;
	case '"':
		return string(r, NULL, 0, NULL);
	case 't':
		return literal(r, "true");
	case 'f':
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	case '\0':
		return syntax(r, "value expected near end of file");
	default:
		return number(r, &v, &whole, &i);
	}
}

/* Counts the elements of the array at the reader, passing over it. */
static enum dtplan_err count_elements(struct rd *r, size_t *n)
{
	enum dtplan_err ret;
	bool first = true, more = true;

	*n = 0;
	if ((ret = open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = next_element(r, &first, &more)) == DTPLAN_OK && more) {
		if ((ret = skip_value(r)) != DTPLAN_OK)
			return ret;
		(*n)++;
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * The plan's members
 * ---------------------------------------------------------------------- */

/* A reader at span s of the same text. */
static struct rd at(const struct rd *r, struct span s)
{
	struct rd sub = *r;

	sub.pos = s.pos;
	sub.depth = 0;
	return sub;
}

/* Index of key in keys[], -1 when none; refuses a second sighting. */
static int known_key(struct rd *r, const char *key, const char *const *keys, size_t n,
		     unsigned *seen, enum dtplan_err *rv)
{
	for (size_t k = 0; k < n; k++) {
		if (strcmp(key, keys[k]) != 0)
			continue;
		if (*seen & (1u << k)) {
			*rv = syntax(r, "duplicate object key '%s'", key);
			return -1;
		}
		*seen |= 1u << k;
		return (int)k;
	}
	return -1;
}

/* An integer member value: null leaves *out; else a whole number in
 * [-1, 10^9] ("WHERE.KEY: expected a whole number"). */
static enum dtplan_err int_value(struct rd *r, const char *where, const char *key, int *out)
{
	enum dtplan_err ret;
	long long i = 0;
	double v;
	bool whole = false;

	if (peek(r) == 'n')
		return literal(r, "null");
	if (peek(r) == '-' || (peek(r) >= '0' && peek(r) <= '9')) {
		if ((ret = number(r, &v, &whole, &i)) != DTPLAN_OK)
			return ret;
		if (whole && i >= -1 && i <= 1000000000) {
			*out = (int)i;
			return DTPLAN_OK;
		}
	}
	return syntax(r, "%s.%s: expected a whole number", where, key);
}

/* A number member value: null leaves *out ("WHERE.KEY: expected a number"). */
static enum dtplan_err num_value(struct rd *r, const char *where, const char *key, double *out)
{
	long long i;
	bool whole;

	if (peek(r) == 'n')
		return literal(r, "null");
	if (peek(r) == '-' || (peek(r) >= '0' && peek(r) <= '9'))
		return number(r, out, &whole, &i);
	return syntax(r, "%s.%s: expected a number", where, key);
}

/* A string member value into buf (cut to size): null leaves buf
 * ("WHERE.KEY: expected a string"). */
static enum dtplan_err str_value(struct rd *r, const char *where, const char *key, char *buf,
				 size_t size)
{
	if (peek(r) == 'n')
		return literal(r, "null");
	if (peek(r) == '"')
		return string(r, buf, size, NULL);
	return syntax(r, "%s.%s: expected a string", where, key);
}

static enum dtplan_err read_best(struct rd *r, struct dtplan_candidate *b)
{
	static const char *const keys[] = {"tp",           "pp",
					   "dp",           "zero",
					   "micro_batch",  "num_microbatches",
					   "global_batch", "recompute",
					   "ep",           "cp"};
	int *const ints[] = {&b->tp,           &b->pp,
			     &b->dp,           &b->zero,
			     &b->micro_batch,  &b->num_microbatches,
			     &b->global_batch, NULL,
			     &b->ep,           &b->cp};
	char key[32], name[32];
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true, rc_name = false;
	unsigned seen = 0;
	size_t len;
	int k, n = (int)b->recompute;

	if (peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no \"parallelism\" object");
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		k = known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if ((k >= 0 && k < 7) || k >= 8)
			ret = int_value(r, "parallelism", key, ints[k]);
		else if (k == 7 && peek(r) == '"') {
			ret = string(r, name, sizeof(name), &len);
			rc_name = true;
			if (ret == DTPLAN_OK && len >= sizeof(name))
				ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
						    "parallelism.recompute: too long");
		} else if (k == 7)
			ret = int_value(r, "parallelism", key, &n);
		else
			ret = skip_value(r);
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (b->tp < 1 || b->pp < 1 || b->dp < 1)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism: tp, pp and dp must be whole numbers >= 1");
	/* plans from before EP and CP carry neither */
	if (b->ep < 1)
		b->ep = 1;
	if (b->cp < 1)
		b->cp = 1;
	if (b->dp % b->ep != 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism: ep %d does not divide dp %d", b->ep, b->dp);
	if (rc_name)
		return dtplan_recompute_parse(name, &b->recompute, r->err);
	if (n < DTPLAN_RECOMPUTE_NONE || n > DTPLAN_RECOMPUTE_FULL)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism.recompute: %d unknown", n);
	b->recompute = (enum dtplan_recompute)n;
	return DTPLAN_OK;
}

static enum dtplan_err read_ckpt(struct rd *r, struct dtplan_ckpt *c)
{
	static const char *const keys[] = {"interval_seconds", "interval_steps"};
	double *const vals[] = {&c->interval_seconds, &c->interval_steps};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true, whole;
	unsigned seen = 0;
	long long i;
	char key[32];
	int k;

	if (peek(r) != '{')
		return skip_value(r);
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		k = known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k >= 0 && (peek(r) == '-' || (peek(r) >= '0' && peek(r) <= '9')))
			ret = number(r, vals[k], &whole, &i);
		else
			ret = skip_value(r);
		if (ret != DTPLAN_OK)
			return ret;
	}
	return ret;
}

/* Orders node indexes by name (qsort_r: arg is the plan's node_names). */
static int cmp_name(const void *a, const void *b, void *arg)
{
	const char(*names)[64] = arg;

	return strcmp(names[*(const int *)a], names[*(const int *)b]);
}

/* Index of name among the plan's nodes (order: indexes sorted by name), -1. */
static int find_node(const struct dtplan_plan *p, const int *order, const char *name)
{
	size_t lo = 0, hi = p->n_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, p->node_names[order[mid]]);

		if (c == 0)
			return order[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* One entry of placement.nodes: a name, or an object with "name". */
static enum dtplan_err read_node(struct rd *r, size_t i, struct dtplan_plan *p)
{
	enum dtplan_err ret;
	bool first = true, more = true, named = false;
	size_t len = 0;
	char key[16];

	if (peek(r) == '"') {
		ret = string(r, p->node_names[i], sizeof(p->node_names[i]), &len);
		named = ret == DTPLAN_OK;
	} else if (peek(r) == '{') {
		ret = open_container(r, '{');
		while (ret == DTPLAN_OK &&
		       (ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
		       more) {
			if (strcmp(key, "name") == 0 && !named && peek(r) == '"') {
				ret = string(r, p->node_names[i], sizeof(p->node_names[i]), &len);
				named = true;
			} else {
				ret = skip_value(r);
			}
		}
	} else {
		ret = DTPLAN_OK;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (!named || len == 0 || len >= sizeof(p->node_names[i]))
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement.nodes[%zu]: expected a host name", i);
	p->node_leaf[i] = -1;
	return DTPLAN_OK;
}

static enum dtplan_err read_nodes(struct rd *r, size_t count, struct dtplan_plan *p, int **order)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t i = 0;

	p->node_names = calloc(count, sizeof(*p->node_names));
	p->node_leaf = calloc(count, sizeof(*p->node_leaf));
	*order = malloc(count * sizeof(**order));
	if (p->node_names == NULL || p->node_leaf == NULL || *order == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	if ((ret = open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = next_element(r, &first, &more)) == DTPLAN_OK && more && i < count) {
		if ((ret = read_node(r, i, p)) != DTPLAN_OK)
			return ret;
		(*order)[i] = (int)i;
		p->n_nodes = ++i;
	}
	if (ret != DTPLAN_OK)
		return ret;
	qsort_r(*order, p->n_nodes, sizeof(**order), cmp_name, p->node_names);
	for (i = 1; i < p->n_nodes; i++)
		if (strcmp(p->node_names[(*order)[i - 1]], p->node_names[(*order)[i]]) == 0)
			return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
					     "placement.nodes[%d]: host '%s' is named twice",
					     (*order)[i] > (*order)[i - 1] ? (*order)[i]
									   : (*order)[i - 1],
					     p->node_names[(*order)[i]]);
	return DTPLAN_OK;
}

static enum dtplan_err read_rank(struct rd *r, size_t i, struct dtplan_plan *p, const int *order)
{
	static const char *const keys[] = {"rank",    "gpu",     "local_rank", "tp_rank",
					   "pp_rank", "dp_rank", "domain",     "node",
					   "nic",     "cp_rank", "ep_rank"};
	struct dtplan_rank *rk = &p->ranks[i];
	int *const ints[] = {NULL,         &rk->gpu,     &rk->local_rank, &rk->tp_rank,
			     &rk->pp_rank, &rk->dp_rank, &rk->domain,     NULL,
			     NULL,         &rk->cp_rank, &rk->ep_rank};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true, whole;
	char where[48], key[16], name[64];
	unsigned seen = 0;
	long long idx;
	size_t len;
	double v;
	int k, rank = (int)i;

	snprintf(where, sizeof(where), "placement.ranks[%zu]", i);
	if (peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "%s: expected an object",
				     where);
	rk->domain = -1;
	rk->node = -1;
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		k = known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k == 0) {
			ret = int_value(r, where, key, &rank);
		} else if ((k >= 1 && k <= 6) || k >= 9) {
			ret = int_value(r, where, key, ints[k]);
		} else if (k == 7 && peek(r) == '"') {
			ret = string(r, name, sizeof(name), &len);
			if (ret == DTPLAN_OK && len < sizeof(name))
				rk->node = find_node(p, order, name);
		} else if (k == 7 && (peek(r) == '-' || (peek(r) >= '0' && peek(r) <= '9'))) {
			ret = number(r, &v, &whole, &idx);
			if (ret == DTPLAN_OK && whole && idx >= 0 && (size_t)idx < p->n_nodes)
				rk->node = (int)idx;
		} else if (k == 8 && peek(r) == '"') {
			ret = string(r, rk->nic, sizeof(rk->nic), NULL);
		} else {
			ret = skip_value(r);
		}
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (rank != (int)i)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "%s: rank %d out of order",
				     where, rank);
	if (rk->node < 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.node: not one of the plan's %zu nodes", where, p->n_nodes);
	if (rk->local_rank < 0 || rk->gpu < 0 || rk->tp_rank < 0 || rk->pp_rank < 0 ||
	    rk->dp_rank < 0 || rk->cp_rank < 0 || rk->ep_rank < 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: ranks and GPU indexes must be >= 0", where);
	return DTPLAN_OK;
}

static enum dtplan_err read_ranks(struct rd *r, size_t count, struct dtplan_plan *p,
				  const int *order)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t i = 0;

	p->ranks = calloc(count, sizeof(*p->ranks));
	if (p->ranks == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	if ((ret = open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = next_element(r, &first, &more)) == DTPLAN_OK && more && i < count) {
		if ((ret = read_rank(r, i, p, order)) != DTPLAN_OK)
			return ret;
		p->n_ranks = ++i;
	}
	return ret;
}

/* One entry of placement.leaves ({"name", "nodes", "oversubscription"});
 * *node counts the nodes of the leaves before it. */
static enum dtplan_err read_leaf(struct rd *r, size_t i, struct dtplan_plan *p, size_t *node)
{
	static const char *const keys[] = {"name", "nodes", "oversubscription"};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true;
	unsigned seen = 0;
	char where[48], key[24];
	int k, nodes = 0;

	snprintf(where, sizeof(where), "placement.leaves[%zu]", i);
	p->leaf_ratio[i] = 1.0;
	if (peek(r) != '{')
		return syntax(r, "%s: expected an object", where);
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		k = known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k == 0)
			ret = str_value(r, where, key, p->leaf_names[i], sizeof(p->leaf_names[i]));
		else if (k == 1)
			ret = int_value(r, where, key, &nodes);
		else if (k == 2)
			ret = num_value(r, where, key, &p->leaf_ratio[i]);
		else
			ret = skip_value(r);
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (nodes < 1)
		return syntax(r, "%s.nodes: expected a whole number >= 1", where);
	if ((size_t)nodes > p->n_nodes - *node)
		return syntax(r, "%s.nodes: the leaves hold more than the plan's %zu nodes", where,
			      p->n_nodes);
	p->leaf_nodes[i] = (size_t)nodes;
	for (int n = 0; n < nodes; n++)
		p->node_run[(*node)++] = (int)i;
	return DTPLAN_OK;
}

/* The leaves in rank order and each node's leaf (the whole plan only). */
static enum dtplan_err read_leaves(struct rd *r, size_t count, struct dtplan_plan *p)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t i = 0, node = 0;

	if (count > p->n_nodes)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, line_at(r->s, r->pos),
				     "placement.leaves: %zu leaves for %zu nodes", count,
				     p->n_nodes);
	p->n_leaves_used = count;
	p->leaf_names = calloc(count, sizeof(*p->leaf_names));
	p->leaf_nodes = calloc(count, sizeof(*p->leaf_nodes));
	p->leaf_ratio = calloc(count, sizeof(*p->leaf_ratio));
	p->node_run = calloc(p->n_nodes, sizeof(*p->node_run));
	if (p->leaf_names == NULL || p->leaf_nodes == NULL || p->leaf_ratio == NULL ||
	    p->node_run == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	if ((ret = open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = next_element(r, &first, &more)) == DTPLAN_OK && more && i < count)
		if ((ret = read_leaf(r, i++, p, &node)) != DTPLAN_OK)
			return ret;
	if (ret != DTPLAN_OK)
		return ret;
	if (node != p->n_nodes)
		return syntax(r, "placement.leaves hold %zu nodes, the plan %zu", node, p->n_nodes);
	return DTPLAN_OK;
}

enum {
	P_NODES,
	P_RANKS,
	P_LEAVES, /* arrays, counted in the first pass */
	P_SLOWDOWN,
	P_ORDER,
	P_KIND,
	P_CROSSES,
	P_NEEDED,
	P__N
};

/* The placement's members the whole plan reads besides the arrays. */
static enum dtplan_err read_placement_rest(struct rd *r, const struct span *found,
					   struct dtplan_plan *p)
{
	static const char *const crosses[] = {"tp", "pp", "dp", "none"};
	char order[16] = "", kind[16] = "", cross[8] = "none";
	enum dtplan_err ret = DTPLAN_OK;
	int needed = (int)p->n_leaves_used;
	struct rd sub;

	p->best.uplink_slowdown = 1.0;
	p->best.crosses_uplinks = "none";
	if (found[P_SLOWDOWN].found) {
		sub = at(r, found[P_SLOWDOWN]);
		ret = num_value(&sub, "placement", "uplink_slowdown", &p->best.uplink_slowdown);
	}
	if (ret == DTPLAN_OK && found[P_ORDER].found) {
		sub = at(r, found[P_ORDER]);
		ret = str_value(&sub, "placement", "rank_order", order, sizeof(order));
	}
	if (ret == DTPLAN_OK && found[P_KIND].found) {
		sub = at(r, found[P_KIND]);
		ret = str_value(&sub, "placement", "leaf_kind", kind, sizeof(kind));
	}
	if (ret == DTPLAN_OK && found[P_CROSSES].found) {
		sub = at(r, found[P_CROSSES]);
		ret = str_value(&sub, "placement", "crosses_uplinks", cross, sizeof(cross));
	}
	if (ret == DTPLAN_OK && found[P_NEEDED].found && p->n_leaves_used > 0) {
		sub = at(r, found[P_NEEDED]);
		ret = int_value(&sub, "placement", "leaves_needed", &needed);
	}
	if (ret != DTPLAN_OK)
		return ret;
	for (size_t k = 0; k < DTPLAN_ARRAY_SIZE(crosses); k++)
		if (strcmp(cross, crosses[k]) == 0)
			p->best.crosses_uplinks = crosses[k];
	p->best.rank_order = DTPLAN_ORDER_TP_DP_PP; /* absent: Megatron-LM's default */
	if (order[0] != '\0' && dtplan_rank_order_parse(order, &p->best.rank_order) != DTPLAN_OK)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement: rank_order '%s' is not a rank order (tp-dp-pp, "
				     "tp-cp-ep-dp-pp, tp-pp-dp, ..)",
				     order);
	p->blocks = strcmp(kind, "block") == 0;
	if (p->n_leaves_used > 0)
		p->n_leaves_needed = needed > 0 ? (size_t)needed : 0;
	return DTPLAN_OK;
}

/*
 * placement: finds its members and counts "nodes", "ranks" and "leaves"
 * (first pass), checks the counts against the limits and the parallel
 * degrees, then reads them; the leaves and the rest only for the whole plan.
 */
static enum dtplan_err read_placement(struct rd *r, struct dtplan_plan *p, bool whole)
{
	static const char *const keys[P__N] = {
		[P_NODES] = "nodes",
		[P_RANKS] = "ranks",
		[P_LEAVES] = "leaves",
		[P_SLOWDOWN] = "uplink_slowdown",
		[P_ORDER] = "rank_order",
		[P_KIND] = "leaf_kind",
		[P_CROSSES] = "crosses_uplinks",
		[P_NEEDED] = "leaves_needed",
	};
	struct span found[P__N];
	size_t count[3] = {0, 0, 0};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true;
	unsigned seen = 0;
	int *order = NULL, k;
	char key[24];
	struct rd sub;
	size_t want;

	memset(found, 0, sizeof(found));
	if (peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "no \"placement\" object: the plan places no ranks");
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		k = known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k >= 0 && k <= P_LEAVES && peek(r) == '[') {
			found[k].found = true;
			found[k].pos = r->pos;
			ret = count_elements(r, &count[k]);
		} else {
			if (k > P_LEAVES) {
				found[k].found = true;
				found[k].pos = r->pos;
			}
			ret = skip_value(r);
		}
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (!found[P_NODES].found || count[P_NODES] == 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.nodes array");
	if (count[P_NODES] > DTPLAN_PLAN_MAX_NODES)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement.nodes: %zu nodes, more than the %d dtplan plans "
				     "for",
				     count[P_NODES], DTPLAN_PLAN_MAX_NODES);
	sub = at(r, found[P_NODES]);
	ret = read_nodes(&sub, count[P_NODES], p, &order);
	if (ret != DTPLAN_OK)
		goto out;
	if (!found[P_RANKS].found || count[P_RANKS] == 0) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.ranks array");
		goto out;
	}
	/* Sizes before memory: the degrees are small integers, the product in
	 * 64 bits, and the ranks must be exactly that many. */
	want = (size_t)p->best.tp * (size_t)p->best.cp * (size_t)p->best.pp * (size_t)p->best.dp;
	if (count[P_RANKS] > DTPLAN_PLAN_MAX_RANKS) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				    "placement.ranks: %zu ranks, more than the %d dtplan plans for",
				    count[P_RANKS], DTPLAN_PLAN_MAX_RANKS);
		goto out;
	}
	if (want != count[P_RANKS]) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				    "%zu ranks but tp %d x cp %d x pp %d x dp %d", count[P_RANKS],
				    p->best.tp, p->best.cp, p->best.pp, p->best.dp);
		goto out;
	}
	sub = at(r, found[P_RANKS]);
	ret = read_ranks(&sub, count[P_RANKS], p, order);
	if (ret != DTPLAN_OK || !whole)
		goto out;
	if (found[P_LEAVES].found && count[P_LEAVES] > 0) {
		sub = at(r, found[P_LEAVES]);
		ret = read_leaves(&sub, count[P_LEAVES], p);
		if (ret != DTPLAN_OK)
			goto out;
	}
	ret = read_placement_rest(r, found, p);
out:
	free(order);
	return ret;
}

/* ------------------------------------------------------------------------
 * The small members of the whole plan, as Jansson trees
 * ---------------------------------------------------------------------- */

/* Optional integer member: absent leaves *out; present must be an integer. */
static enum dtplan_err get_int(json_t *obj, const char *where, const char *key, int *out,
			       struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > 1000000000)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.%s: expected a whole number", where, key);
	*out = (int)json_integer_value(v);
	return DTPLAN_OK;
}

/* Optional number member: absent or null leaves *out; present must be a number. */
static enum dtplan_err get_num(json_t *obj, const char *where, const char *key, double *out,
			       struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	if (!json_is_number(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s.%s: expected a number",
				     where, key);
	*out = json_number_value(v);
	return DTPLAN_OK;
}

/* Optional string member into buf (truncated to size); absent leaves buf. */
static enum dtplan_err get_str(json_t *obj, const char *where, const char *key, char *buf,
			       size_t size, struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	if (!json_is_string(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s.%s: expected a string",
				     where, key);
	dtplan__strlcpy(buf, json_string_value(v), size);
	return DTPLAN_OK;
}

/* A split: tp, pp, dp, ZeRO, micro-batches and recomputation of obj. */
static enum dtplan_err read_split(json_t *obj, const char *where, struct dtplan_candidate *b,
				  struct dtplan_error *err)
{
	static const struct {
		const char *key;
		size_t offset;
	} ints[] = {
		{"tp", offsetof(struct dtplan_candidate, tp)},
		{"pp", offsetof(struct dtplan_candidate, pp)},
		{"dp", offsetof(struct dtplan_candidate, dp)},
		{"zero", offsetof(struct dtplan_candidate, zero)},
		{"micro_batch", offsetof(struct dtplan_candidate, micro_batch)},
		{"num_microbatches", offsetof(struct dtplan_candidate, num_microbatches)},
		{"global_batch", offsetof(struct dtplan_candidate, global_batch)},
		{"vp", offsetof(struct dtplan_candidate, vp)},
		{"ep", offsetof(struct dtplan_candidate, ep)},
		{"cp", offsetof(struct dtplan_candidate, cp)},
	};
	json_t *rc, *off, *sch;
	enum dtplan_err ret;
	int n;

	if (!json_is_object(obj))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no \"%s\" object", where);
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(ints); i++) {
		ret = get_int(obj, where, ints[i].key, (int *)((char *)b + ints[i].offset), err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (b->tp < 1 || b->pp < 1 || b->dp < 1)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: tp, pp and dp must be whole numbers >= 1", where);
	if (b->vp < 1)
		b->vp = 1;
	if (b->ep < 1)
		b->ep = 1;
	if (b->cp < 1)
		b->cp = 1;
	off = json_object_get(obj, "offload");
	if (off != NULL && !json_is_null(off) && !json_is_boolean(off))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.offload: expected true or false", where);
	b->offload = json_is_true(off);
	/* written only for DualPipe */
	sch = json_object_get(obj, "schedule");
	if (sch != NULL) {
		int schedule = DTPLAN_SCHEDULE_1F1B;

		if (!json_is_string(sch) ||
		    dtplan_schedule_parse(json_string_value(sch), &schedule, NULL) != DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "%s.schedule: expected \"1f1b\" or \"dualpipe\"",
					     where);
		b->dualpipe = schedule == DTPLAN_SCHEDULE_DUALPIPE && b->pp > 1;
	}
	rc = json_object_get(obj, "recompute");
	if (json_is_string(rc))
		return dtplan_recompute_parse(json_string_value(rc), &b->recompute, err);
	n = (int)b->recompute;
	ret = get_int(obj, where, "recompute", &n, err);
	if (ret != DTPLAN_OK)
		return ret;
	if (n < DTPLAN_RECOMPUTE_NONE || n > DTPLAN_RECOMPUTE_FULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s.recompute: %d unknown",
				     where, n);
	b->recompute = (enum dtplan_recompute)n;
	return DTPLAN_OK;
}

/* layers_per_stage: first, middle (all equal) and last, as the plan keeps them. */
static enum dtplan_err read_stages(json_t *par, struct dtplan_candidate *b,
				   struct dtplan_error *err)
{
	json_t *a = json_object_get(par, "layers_per_stage"), *v;
	size_t i;

	if (a == NULL)
		return DTPLAN_OK;
	if (!json_is_array(a) || json_array_size(a) != (size_t)b->pp)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism.layers_per_stage: expected %d layer counts",
				     b->pp);
	json_array_foreach(a, i, v)
	{
		json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;

		if (n < 1 || n > 1000000)
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "parallelism.layers_per_stage[%zu]: expected a whole "
					     "number >= 1",
					     i);
		if (i == 0)
			b->stages.first = (int)n;
		else if (i + 1 == json_array_size(a))
			b->stages.last = (int)n;
		else if (i == 1)
			b->stages.middle = (int)n;
		else if (n != b->stages.middle)
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "parallelism.layers_per_stage[%zu]: the stages "
					     "between the first and the last hold equal layers",
					     i);
	}
	return get_num(par, "parallelism", "stage_imbalance", &b->stage_imbalance, err);
}

/* Model, GPUs and batch into the request (dtplan_request_init() first). */
static enum dtplan_err read_request(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_request *r = &p->request;
	struct dtplan_model *m = &r->model;
	json_t *model = json_object_get(root, "model"), *gpu = json_object_get(root, "gpu");
	const struct dtplan_gpu *known;
	enum dtplan_err ret;
	char name[32] = "";

	if (!json_is_object(model) || !json_is_object(gpu))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "no \"model\" or \"gpu\" object: not a whole plan");
	if ((ret = get_str(model, "model", "name", m->name, sizeof(m->name), err)) != DTPLAN_OK ||
	    (ret = get_num(model, "model", "params", &m->params, err)) != DTPLAN_OK ||
	    (ret = get_num(model, "model", "active_params", &m->active_params, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "experts", &m->experts, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "top_k", &m->top_k, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "first_dense", &m->first_dense, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "moe_every", &m->moe_every, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "layers", &m->layers, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "hidden", &m->hidden, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "heads", &m->heads, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "kv_heads", &m->kv_heads, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "seq", &r->seq, err)) != DTPLAN_OK ||
	    (ret = get_str(gpu, "gpu", "name", name, sizeof(name), err)) != DTPLAN_OK)
		return ret;
	m->moe_every_from_zero = json_is_true(json_object_get(model, "moe_every_from_zero"));
	/* the catalog's entry for what the JSON does not carry */
	known = dtplan_gpu_find(name, NULL);
	if (known != NULL)
		r->gpu = *known;
	dtplan__strlcpy(r->gpu.name, name, sizeof(r->gpu.name));
	if ((ret = get_num(gpu, "gpu", "memory_bytes", &r->gpu.memory_bytes, err)) != DTPLAN_OK ||
	    (ret = get_int(root, "plan", "gpus", &r->gpus, err)) != DTPLAN_OK ||
	    (ret = get_int(root, "plan", "gpus_per_node", &r->gpus_per_node, err)) != DTPLAN_OK ||
	    (ret = get_int(root, "plan", "global_batch_requested", &r->global_batch, err)) !=
		    DTPLAN_OK)
		return ret;
	r->exact_batch = json_is_true(json_object_get(root, "global_batch_exact"));
	/* what the kernels line shows: absent in plans older than it */
	{
		static const struct {
			const char *key;
			size_t offset;
			enum dtplan_err (*parse)(const char *, int *, struct dtplan_error *);
		} names[] = {
#define NAME_KEY(k, fn) {#k, offsetof(struct dtplan_request, k), fn}
			NAME_KEY(framework, dtplan_framework_parse),
			NAME_KEY(attention, dtplan_attention_parse),
			NAME_KEY(precision, dtplan_precision_parse),
			NAME_KEY(moments, dtplan_moments_parse),
#undef NAME_KEY
		};

		for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(names); i++) {
			json_t *v = json_object_get(root, names[i].key);

			if (v == NULL || json_is_null(v))
				continue;
			if (!json_is_string(v))
				return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
						     "%s: expected a string", names[i].key);
			ret = names[i].parse(json_string_value(v),
					     (int *)((char *)r + names[i].offset), err);
			if (ret != DTPLAN_OK)
				return ret;
		}
	}
	if (r->gpus < 1 || r->gpus_per_node < 1 || m->layers < 1)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "gpus, gpus_per_node and model.layers must be >= 1");
	return DTPLAN_OK;
}

static enum dtplan_err read_memory(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_ledger *l = &p->best.memory;
	json_t *mem = json_object_get(root, "memory"), *b = json_object_get(mem, "bytes_per_gpu");
	double capacity = 0.0;
	enum dtplan_err ret;

	if (!json_is_object(mem))
		return DTPLAN_OK;
	if ((ret = get_num(b, "memory.bytes_per_gpu", "weights", &l->weights, err)) != DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "gradients", &l->gradients, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "optimizer", &l->optimizer, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "activations", &l->activations, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "total", &l->total, err)) != DTPLAN_OK ||
	    (ret = get_num(mem, "memory", "capacity_bytes", &capacity, err)) != DTPLAN_OK ||
	    (ret = get_int(mem, "memory", "fullest_stage", &l->stage, err)) != DTPLAN_OK ||
	    (ret = get_int(mem, "memory", "fullest_stage_layers", &l->stage_layers, err)) !=
		    DTPLAN_OK)
		return ret;
	/* the headroom is what the capacity leaves of the GPU's memory */
	if (capacity > 0.0 && p->request.gpu.memory_bytes >= capacity)
		p->request.memory_headroom = 1.0 - capacity / p->request.gpu.memory_bytes;
	return DTPLAN_OK;
}

static enum dtplan_err read_prediction(json_t *root, struct dtplan_candidate *c,
				       struct dtplan_error *err)
{
	static const struct {
		const char *key;
		size_t offset;
	} nums[] = {
		{"step_seconds", offsetof(struct dtplan_candidate, step.total)},
		{"compute_seconds", offsetof(struct dtplan_candidate, step.compute)},
		{"tp_comm_seconds", offsetof(struct dtplan_candidate, step.tp_comm)},
		{"pp_comm_seconds", offsetof(struct dtplan_candidate, step.pp_comm)},
		{"bubble_seconds", offsetof(struct dtplan_candidate, step.bubble)},
		{"dp_comm_seconds", offsetof(struct dtplan_candidate, step.dp_comm)},
		{"dp_exposed_seconds", offsetof(struct dtplan_candidate, step.dp_exposed)},
		{"optimizer_seconds", offsetof(struct dtplan_candidate, step.optimizer)},
		{"tflops_per_gpu", offsetof(struct dtplan_candidate, tflops_per_gpu)},
		{"mfu", offsetof(struct dtplan_candidate, mfu)},
		{"net_bytes_per_gpu", offsetof(struct dtplan_candidate, net_bytes_per_gpu)},
		/* issue 14's: absent in older plans */
		{"ep_comm_seconds", offsetof(struct dtplan_candidate, step.ep_comm)},
		{"cp_comm_seconds", offsetof(struct dtplan_candidate, step.cp_comm)},
		{"ep_bytes_per_gpu", offsetof(struct dtplan_candidate, ep_bytes)},
		{"ep_uplink_ratio", offsetof(struct dtplan_candidate, ep_uplink_ratio)},
	};
	static const char *const links[] = {"none", "nvlink", "leaf", "uplink", "network"};
	json_t *pr = json_object_get(root, "prediction"), *v;
	enum dtplan_err ret;
	const char *t;

	for (size_t i = 0; json_is_object(pr) && i < DTPLAN_ARRAY_SIZE(nums); i++) {
		ret = get_num(pr, "prediction", nums[i].key, (double *)((char *)c + nums[i].offset),
			      err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	/* a static name, as the search sets it */
	v = json_object_get(pr, "ep_links");
	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	t = json_string_value(v);
	for (size_t i = 0; t != NULL && i < DTPLAN_ARRAY_SIZE(links); i++)
		if (strcmp(t, links[i]) == 0) {
			c->ep_links = links[i];
			return DTPLAN_OK;
		}
	return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
			     "prediction.ep_links: expected none, nvlink, leaf, uplink or network");
}

static enum dtplan_err read_runner_up(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	json_t *ru = json_object_get(root, "runner_up");
	struct dtplan_candidate *c = &p->runner_up;
	enum dtplan_err ret;

	if (ru == NULL || json_is_null(ru))
		return DTPLAN_OK;
	if ((ret = read_split(ru, "runner_up", c, err)) != DTPLAN_OK ||
	    (ret = get_num(ru, "runner_up", "step_seconds", &c->step.total, err)) != DTPLAN_OK ||
	    (ret = get_num(ru, "runner_up", "memory_bytes_per_gpu", &c->memory.total, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ru, "runner_up", "net_bytes_per_gpu", &c->net_bytes_per_gpu, err)) !=
		    DTPLAN_OK ||
	    (ret = get_str(ru, "runner_up", "reason", p->runner_up_reason,
			   sizeof(p->runner_up_reason), err)) != DTPLAN_OK)
		return ret;
	p->have_runner_up = true;
	return DTPLAN_OK;
}

/* The whole checkpoint, and the request's rates the text shows with it. */
static enum dtplan_err read_ckpt_all(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_ckpt *c = &p->ckpt;
	json_t *ck = json_object_get(root, "checkpoint");
	double write = 0.0;
	enum dtplan_err ret;

	if (!json_is_object(ck))
		return DTPLAN_OK;
	if ((ret = get_num(ck, "checkpoint", "young_seconds", &c->young_seconds, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "daly_seconds", &c->daly_seconds, err)) != DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "write_seconds", &write, err)) != DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "job_mtbf_seconds", &c->job_mtbf_seconds, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "waste_fraction", &c->waste_fraction, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "bytes", &p->ckpt_bytes, err)) != DTPLAN_OK)
		return ret;
	if (write > 0.0 && p->ckpt_bytes > 0.0)
		p->request.ckpt_write_bytes_per_s = p->ckpt_bytes / write;
	/* M = per-GPU MTBF x 3600 / GPUs */
	if (c->job_mtbf_seconds > 0.0)
		p->request.mtbf_gpu_hours = c->job_mtbf_seconds * p->request.gpus / 3600.0;
	return DTPLAN_OK;
}

/* The time to train, when the plan was asked for one ("training" not null). */
static enum dtplan_err read_training(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_training *t = &p->training;
	json_t *tr = json_object_get(root, "training");
	enum dtplan_err ret;

	if (tr == NULL || json_is_null(tr))
		return DTPLAN_OK;
	if (!json_is_object(tr))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "training: expected an object or null");
	if ((ret = get_num(tr, "training", "tokens", &t->tokens, err)) != DTPLAN_OK ||
	    (ret = get_num(tr, "training", "steps", &t->steps, err)) != DTPLAN_OK ||
	    (ret = get_num(tr, "training", "compute_seconds", &t->compute_seconds, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(tr, "training", "wall_seconds", &t->wall_seconds, err)) != DTPLAN_OK ||
	    (ret = get_num(tr, "training", "goodput", &t->goodput, err)) != DTPLAN_OK)
		return ret;
	p->request.train_tokens = t->tokens;
	p->have_training = t->tokens > 0.0;
	return DTPLAN_OK;
}

static enum dtplan_err read_warnings(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	json_t *a = json_object_get(root, "warnings"), *v;
	size_t i;

	if (a == NULL)
		return DTPLAN_OK;
	if (!json_is_array(a) || json_array_size(a) > DTPLAN_PLAN_MAX_WARNINGS)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "warnings: expected a list of at most %d",
				     DTPLAN_PLAN_MAX_WARNINGS);
	json_array_foreach(a, i, v)
	{
		json_t *code = json_object_get(v, "code"), *msg = json_object_get(v, "message");

		if (!json_is_string(code) || !json_is_string(msg))
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "warnings[%zu]: expected a code and a message", i);
		if (dtplan_plan_add_warning(p, json_string_value(code), "%s",
					    json_string_value(msg)) != DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	}
	return DTPLAN_OK;
}

/* Everything but the placement, for dtplan_plan_from_json(). */
static enum dtplan_err read_whole(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	json_t *v;
	enum dtplan_err ret;

	dtplan_request_init(&p->request);
	/* the streaming pass read what tasks need; the split's rest (vp,
	 * offload) is the whole plan's */
	if ((ret = read_request(root, p, err)) != DTPLAN_OK ||
	    (ret = read_split(json_object_get(root, "parallelism"), "parallelism", &p->best,
			      err)) != DTPLAN_OK ||
	    (ret = read_stages(json_object_get(root, "parallelism"), &p->best, err)) != DTPLAN_OK ||
	    (ret = read_memory(root, p, err)) != DTPLAN_OK ||
	    (ret = read_prediction(root, &p->best, err)) != DTPLAN_OK ||
	    (ret = read_runner_up(root, p, err)) != DTPLAN_OK ||
	    (ret = read_ckpt_all(root, p, err)) != DTPLAN_OK ||
	    (ret = read_training(root, p, err)) != DTPLAN_OK ||
	    (ret = read_warnings(root, p, err)) != DTPLAN_OK)
		return ret;
	p->best.uplink_slowdown = 1.0;
	p->best.crosses_uplinks = "none";
	v = json_object_get(root, "considered");
	p->n_considered =
		json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : 0;
	v = json_object_get(root, "fitting");
	p->n_fit =
		json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : 0;
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * The document
 * ---------------------------------------------------------------------- */

enum {
	M_SCHEMA,
	M_PARALLELISM,
	M_CHECKPOINT,
	M_PLACEMENT,
	M_DEGRADED,
	M_REASON,
	/* the whole plan's only */
	M_MODEL,
	M_GPU,
	M_MEMORY,
	M_PREDICTION,
	M_RUNNER_UP,
	M_WARNINGS,
	M_GPUS,
	M_GPUS_PER_NODE,
	M_BATCH,
	M_EXACT,
	M_CONSIDERED,
	M_FITTING,
	M_FRAMEWORK,
	M_ATTENTION,
	M_PRECISION,
	M_MOMENTS,
	M_TRAINING,
	M__N
};

static const char *const top_keys[M__N] = {
	[M_SCHEMA] = "schema",
	[M_PARALLELISM] = "parallelism",
	[M_CHECKPOINT] = "checkpoint",
	[M_PLACEMENT] = "placement",
	[M_DEGRADED] = "degraded",
	[M_REASON] = "degraded_reason",
	[M_MODEL] = "model",
	[M_GPU] = "gpu",
	[M_MEMORY] = "memory",
	[M_PREDICTION] = "prediction",
	[M_RUNNER_UP] = "runner_up",
	[M_WARNINGS] = "warnings",
	[M_GPUS] = "gpus",
	[M_GPUS_PER_NODE] = "gpus_per_node",
	[M_BATCH] = "global_batch_requested",
	[M_EXACT] = "global_batch_exact",
	[M_CONSIDERED] = "considered",
	[M_FITTING] = "fitting",
	[M_FRAMEWORK] = "framework",
	[M_ATTENTION] = "attention",
	[M_PRECISION] = "precision",
	[M_MOMENTS] = "moments",
	[M_TRAINING] = "training",
};

/*
 * First pass: the whole text is one valid JSON object; where its members
 * start and end.  A name given twice is refused, as a parser building a
 * tree would (names of 64 characters or more are not ours and not
 * compared).
 */
static enum dtplan_err scan_top(struct rd *r, struct span *found)
{
	char keys[MAX_TOP_MEMBERS][64];
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t n_keys = 0, len;
	char key[64];
	int m;

	if (peek(r) != '{' && peek(r) != '[')
		return syntax(r, "'[' or '{' expected");
	if (peek(r) == '[') {
		if ((ret = skip_value(r)) != DTPLAN_OK)
			return ret;
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "expected an object");
	}
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		len = strlen(key);
		for (size_t k = 0; len < sizeof(key) - 1 && k < n_keys; k++)
			if (strcmp(keys[k], key) == 0)
				return syntax(r, "duplicate object key '%s'", key);
		if (n_keys == MAX_TOP_MEMBERS)
			return syntax(r, "more than %d members in the plan", MAX_TOP_MEMBERS);
		memcpy(keys[n_keys++], key, sizeof(key));
		for (m = 0; m < M__N && strcmp(key, top_keys[m]) != 0; m++)
			;
		if (m < M__N) {
			found[m].found = true;
			found[m].pos = r->pos;
		}
		if ((ret = skip_value(r)) != DTPLAN_OK)
			return ret;
		if (m < M__N)
			found[m].end = r->pos;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (peek(r) != '\0')
		return syntax(r, "end of file expected");
	return DTPLAN_OK;
}

/*
 * The whole plan's small members (everything but the placement) as one
 * object, each parsed from its own span of the text: at most
 * MAX_MEMBER_TEXT bytes each, so that the trees stay small.  The first
 * pass checked the syntax and the depth; what Jansson still refuses (a
 * nested key given twice, an integer past 64 bits) is named with the
 * member and its line.  Caller frees *root with json_decref().
 */
static enum dtplan_err member_trees(const struct rd *r, const struct span *found, json_t **root)
{
	static const int members[] = {M_PARALLELISM, M_CHECKPOINT,    M_MODEL,     M_GPU,
				      M_MEMORY,      M_PREDICTION,    M_RUNNER_UP, M_WARNINGS,
				      M_GPUS,        M_GPUS_PER_NODE, M_BATCH,     M_EXACT,
				      M_CONSIDERED,  M_FITTING,       M_FRAMEWORK, M_ATTENTION,
				      M_PRECISION,   M_MOMENTS,       M_TRAINING};
	json_error_t jerr;
	json_t *v;

	*root = json_object();
	if (*root == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(members); i++) {
		const struct span *s = &found[members[i]];
		const char *name = top_keys[members[i]];

		if (!s->found)
			continue;
		if (s->end - s->pos > MAX_MEMBER_TEXT)
			return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, line_at(r->s, s->pos),
					     "%s: longer than the %d bytes a plan member may "
					     "take",
					     name, MAX_MEMBER_TEXT);
		v = json_loadb(r->s + s->pos, s->end - s->pos,
			       JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
		if (v == NULL)
			return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC,
					     line_at(r->s, s->pos) +
						     (jerr.line > 0 ? jerr.line - 1 : 0),
					     "%s: %s", name, jerr.text);
		if (json_object_set_new(*root, name, v) != 0)
			return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	}
	return DTPLAN_OK;
}

/* whole: the whole plan, placement optional; else what tasks need, placement
 * required. */
static enum dtplan_err read_plan(const char *text, bool whole, struct dtplan_plan **out,
				 struct dtplan_error *err)
{
	struct span found[M__N];
	struct dtplan_plan *p = NULL;
	struct rd r = {.s = text, .err = err}, sub;
	json_t *root = NULL;
	enum dtplan_err rv;
	char schema[64];
	size_t len = 0;

	memset(found, 0, sizeof(found));
	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "no text given");
		goto out;
	}
	rv = scan_top(&r, found);
	if (rv != DTPLAN_OK)
		goto out;
	if (found[M_SCHEMA].found || whole) {
		sub = at(&r, found[M_SCHEMA]);
		if (!found[M_SCHEMA].found || peek(&sub) != '"' ||
		    string(&sub, schema, sizeof(schema), &len) != DTPLAN_OK ||
		    len >= sizeof(schema) || strncmp(schema, "dtplan.plan/", 12) != 0) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					   "schema is not " DTPLAN_PLAN_SCHEMA);
			goto out;
		}
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		goto out;
	}
	if (!found[M_PARALLELISM].found) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no \"parallelism\" object");
		goto out;
	}
	sub = at(&r, found[M_PARALLELISM]);
	rv = read_best(&sub, &p->best);
	if (rv != DTPLAN_OK)
		goto out;
	if (whole) {
		rv = member_trees(&r, found, &root);
		if (rv == DTPLAN_OK)
			rv = read_whole(root, p, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	sub = at(&r, found[M_PLACEMENT]);
	if (!found[M_PLACEMENT].found && !whole) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "no \"placement\" object: the plan places no ranks");
		goto out;
	}
	if (found[M_PLACEMENT].found && (!whole || peek(&sub) != 'n')) {
		rv = read_placement(&sub, p, whole);
		if (rv != DTPLAN_OK)
			goto out;
	}
	if (found[M_CHECKPOINT].found) {
		sub = at(&r, found[M_CHECKPOINT]);
		rv = read_ckpt(&sub, &p->ckpt);
		if (rv != DTPLAN_OK)
			goto out;
	}
	if (found[M_DEGRADED].found) {
		sub = at(&r, found[M_DEGRADED]);
		p->degraded = peek(&sub) == 't';
	}
	if (p->degraded && found[M_REASON].found) {
		sub = at(&r, found[M_REASON]);
		if (peek(&sub) == '"')
			rv = string(&sub, p->degraded_reason, sizeof(p->degraded_reason), NULL);
		if (rv != DTPLAN_OK)
			goto out;
	}
	*out = p;
	p = NULL;
	rv = DTPLAN_OK;
out:
	json_decref(root);
	dtplan_plan_destroy(p);
	return rv;
}

enum dtplan_err dtplan_plan_ranks_from_json(const char *text, struct dtplan_plan **out,
					    struct dtplan_error *err)
{
	return read_plan(text, false, out, err);
}

enum dtplan_err dtplan_plan_from_json(const char *text, struct dtplan_plan **out,
				      struct dtplan_error *err)
{
	return read_plan(text, true, out, err);
}
