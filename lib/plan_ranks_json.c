/*
 * plan_ranks_json.c: the part of a plan's JSON that tasks need (parallel
 * degrees, node order, ranks), read back in every srun step so that all
 * tasks follow the plan the batch step made instead of recomputing it.
 *
 * Reads what lib/plan_json.c writes: "parallelism", "checkpoint",
 * "placement" {"nodes", "ranks"}, "degraded".  Lenient where it costs
 * nothing: node entries may be strings or objects with "name", a rank's node
 * an index or a name, "recompute" a name or a number.
 *
 * This runs in slurmstepd on every node of every step, on a file the user
 * names (DTPLAN_FILE), so it is a small streaming reader rather than a
 * document tree: a tree of a 64 MiB file of "{}," took 5 GB and 12 s, and a
 * 16,384-node plan 183 MB and 3 s (issue 13, finding 9).  The text is read
 * twice, without allocating: once to validate it and find the members this
 * file reads, once to read them.  Memory is the plan's own (60 bytes a
 * rank, 68 a node), allocated after the counts are checked against the
 * parallel degrees and the limits below (doc/internals/limits.md); node
 * names are found by binary search.  Time is linear (n log n for names).
 */
#include "config.h"

#include "dtplan_private.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "plan JSON"

/* Containers nested deeper than this are refused (a plan nests 4 deep). */
#define MAX_DEPTH 32

/* Members of the top-level object (a plan has about 20). */
#define MAX_TOP_MEMBERS 256

/* ------------------------------------------------------------------------
 * A small JSON reader over a NUL-terminated text
 * ---------------------------------------------------------------------- */

struct rd {
	const char *s;  /* the whole text */
	size_t pos;
	int depth;
	struct dtplan_error *err;
};

/* A member's value found by the first pass: where it starts, 0 when absent. */
struct span {
	bool found;
	size_t pos;
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
			       (unsigned char)r->s[r->pos + run] < 0x80 && r->s[r->pos + run] != '"' &&
			       r->s[r->pos + run] != '\\')
				run++;
			put(buf, size, &n, r->s + r->pos, run);
			r->pos += run;
			continue;
		}
		r->pos++;
		switch (r->s[r->pos]) {
		case '"': case '\\': case '/':
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
	if (peek(r) == ']' )
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
	return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "%s.%s: expected a whole number",
			     where, key);
}

static enum dtplan_err read_best(struct rd *r, struct dtplan_candidate *b)
{
	static const char *const keys[] = {"tp",          "pp",
					   "dp",          "zero",
					   "micro_batch", "num_microbatches",
					   "recompute"};
	int *const ints[] = {&b->tp,   &b->pp,          &b->dp,
			     &b->zero, &b->micro_batch, &b->num_microbatches};
	char key[32], name[32];
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true, rc_name = false;
	unsigned seen = 0;
	size_t len;
	int k, n = (int)b->recompute;

	if (peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "no \"parallelism\" object");
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		k = known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k >= 0 && k < 6)
			ret = int_value(r, "parallelism", key, ints[k]);
		else if (k == 6 && peek(r) == '"') {
			ret = string(r, name, sizeof(name), &len);
			rc_name = true;
			if (ret == DTPLAN_OK && len >= sizeof(name))
				ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
						    "parallelism.recompute: too long");
		} else if (k == 6)
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
				ret = string(r, p->node_names[i], sizeof(p->node_names[i]),
					     &len);
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

static enum dtplan_err read_nodes(struct rd *r, size_t count, struct dtplan_plan *p,
				  int **order)
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

static enum dtplan_err read_rank(struct rd *r, size_t i, struct dtplan_plan *p,
				 const int *order)
{
	static const char *const keys[] = {"rank",    "gpu",     "local_rank", "tp_rank",
					   "pp_rank", "dp_rank", "domain",     "node",
					   "nic"};
	struct dtplan_rank *rk = &p->ranks[i];
	int *const ints[] = {NULL,         &rk->gpu,     &rk->local_rank, &rk->tp_rank,
			     &rk->pp_rank, &rk->dp_rank, &rk->domain};
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
		} else if (k >= 1 && k <= 6) {
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
				     "%s.node: not one of the plan's %zu nodes", where,
				     p->n_nodes);
	if (rk->local_rank < 0 || rk->gpu < 0 || rk->tp_rank < 0 || rk->pp_rank < 0 ||
	    rk->dp_rank < 0)
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

/*
 * placement: finds "nodes" and "ranks" and counts them (first pass), checks
 * the counts against the limits and the parallel degrees, then reads them.
 */
static enum dtplan_err read_placement(struct rd *r, struct dtplan_plan *p)
{
	static const char *const keys[] = {"nodes", "ranks"};
	struct span found[2] = {{false, 0}, {false, 0}};
	size_t count[2] = {0, 0};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true;
	unsigned seen = 0;
	int *order = NULL, k;
	char key[16];
	struct rd sub;
	size_t want;

	if (peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "no \"placement\" object: the plan places no ranks");
	if ((ret = open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK && more) {
		k = known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k >= 0 && peek(r) == '[') {
			found[k].found = true;
			found[k].pos = r->pos;
			ret = count_elements(r, &count[k]);
		} else {
			ret = skip_value(r);
		}
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (!found[0].found || count[0] == 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.nodes array");
	if (count[0] > DTPLAN_PLAN_MAX_NODES)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement.nodes: %zu nodes, more than the %d dtplan plans "
				     "for",
				     count[0], DTPLAN_PLAN_MAX_NODES);
	sub = at(r, found[0]);
	ret = read_nodes(&sub, count[0], p, &order);
	if (ret != DTPLAN_OK)
		goto out;
	if (!found[1].found || count[1] == 0) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.ranks array");
		goto out;
	}
	/* Sizes before memory: the degrees are small integers, the product in
	 * 64 bits, and the ranks must be exactly that many. */
	want = (size_t)p->best.tp * (size_t)p->best.pp * (size_t)p->best.dp;
	if (count[1] > DTPLAN_PLAN_MAX_RANKS) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				    "placement.ranks: %zu ranks, more than the %d dtplan plans for",
				    count[1], DTPLAN_PLAN_MAX_RANKS);
		goto out;
	}
	if (want != count[1]) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				    "%zu ranks but tp %d x pp %d x dp %d", count[1], p->best.tp,
				    p->best.pp, p->best.dp);
		goto out;
	}
	sub = at(r, found[1]);
	ret = read_ranks(&sub, count[1], p, order);
out:
	free(order);
	return ret;
}

/* ------------------------------------------------------------------------
 * The document
 * ---------------------------------------------------------------------- */

enum { M_SCHEMA, M_PARALLELISM, M_CHECKPOINT, M_PLACEMENT, M_DEGRADED, M_REASON, M__N };

static const char *const top_keys[M__N] = {
	[M_SCHEMA] = "schema",       [M_PARALLELISM] = "parallelism",
	[M_CHECKPOINT] = "checkpoint", [M_PLACEMENT] = "placement",
	[M_DEGRADED] = "degraded",   [M_REASON] = "degraded_reason",
};

/*
 * First pass: the whole text is one valid JSON object; where its members
 * start.  A name given twice is refused, as a parser building a tree would
 * (names of 64 characters or more are not ours and not compared).
 */
static enum dtplan_err scan_top(struct rd *r, struct span *found)
{
	char keys[MAX_TOP_MEMBERS][64];
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t n_keys = 0, len;
	char key[64];

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
		for (int m = 0; m < M__N; m++) {
			if (strcmp(key, top_keys[m]) == 0) {
				found[m].found = true;
				found[m].pos = r->pos;
			}
		}
		if ((ret = skip_value(r)) != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (peek(r) != '\0')
		return syntax(r, "end of file expected");
	return DTPLAN_OK;
}

enum dtplan_err dtplan_plan_ranks_from_json(const char *text, struct dtplan_plan **out,
					    struct dtplan_error *err)
{
	struct span found[M__N];
	struct dtplan_plan *p = NULL;
	struct rd r = {.s = text, .err = err}, sub;
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
	if (found[M_SCHEMA].found) {
		sub = at(&r, found[M_SCHEMA]);
		if (peek(&sub) != '"' || string(&sub, schema, sizeof(schema), &len) != DTPLAN_OK ||
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
	if (!found[M_PLACEMENT].found) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "no \"placement\" object: the plan places no ranks");
		goto out;
	}
	sub = at(&r, found[M_PLACEMENT]);
	rv = read_placement(&sub, p);
	if (rv != DTPLAN_OK)
		goto out;
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
	dtplan_plan_destroy(p);
	return rv;
}
