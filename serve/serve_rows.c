/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_rows.c: what the collector's answers share (serve_view.c): rows
 * copied out of the store, so that an answer is rendered after the store's
 * lock is released; medians over them; a posted document made inert
 * for a renderer that writes its strings as they are; and --json's lines
 * (serve_json_line(), for serve.c and serve_http.c).  Uses nothing of
 * serve/ but serve_int.h's declarations.
 */
#include "config.h"

#include "serve_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void rows_row(sqlite3_stmt *s, void *arg)
{
	struct serve_rows *r = arg;
	size_t cols = (size_t)sqlite3_column_count(s);

	if (r->failed)
		return;
	if (r->cols == 0)
		r->cols = cols;
	if ((r->n + 1) * r->cols > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64 * r->cols;
		char **t = realloc(r->cell, cap * sizeof(*t));

		if (t == NULL) {
			r->failed = true;
			return;
		}
		r->cell = t;
		r->cap = cap;
	}
	for (size_t i = 0; i < r->cols; i++) {
		const unsigned char *t = sqlite3_column_text(s, (int)i);

		r->cell[r->n * r->cols + i] = t != NULL ? strdup((const char *)t) : NULL;
		if (t != NULL && r->cell[r->n * r->cols + i] == NULL)
			r->failed = true;
	}
	r->n++;
}

bool serve_each(sqlite3 *db, const char *sql, long long from, void (*row)(sqlite3_stmt *, void *),
		void *arg)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_bind_parameter_count(s) >= 1)
		sqlite3_bind_int64(s, 1, from);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		row(s, arg);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE;
}

bool serve_rows_get(struct serve_rows *r, sqlite3 *db, const char *sql, long long from)
{
	return serve_each(db, sql, from, rows_row, r) && !r->failed;
}

bool serve_rows_get3(struct serve_rows *r, sqlite3 *db, const char *sql, long long i1,
		     const char *t2, const char *t3)
{
	sqlite3_stmt *s = NULL;
	int rc, n;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return false;
	n = sqlite3_bind_parameter_count(s);
	if (n >= 1)
		sqlite3_bind_int64(s, 1, i1);
	if (n >= 2 && t2 != NULL)
		sqlite3_bind_text(s, 2, t2, -1, SQLITE_STATIC);
	if (n >= 3 && t3 != NULL)
		sqlite3_bind_text(s, 3, t3, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		rows_row(s, r);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE && !r->failed;
}

const char *serve_cell(const struct serve_rows *r, size_t row, size_t col)
{
	const char *t = r->cell[row * r->cols + col];

	return t != NULL ? t : "";
}

double serve_cell_num(const struct serve_rows *r, size_t row, size_t col)
{
	const char *t = r->cell[row * r->cols + col];

	return t != NULL ? strtod(t, NULL) : NAN;
}

void serve_rows_free(struct serve_rows *r)
{
	for (size_t i = 0; i < r->n * r->cols; i++)
		free(r->cell[i]);
	free(r->cell);
	memset(r, 0, sizeof(*r));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted in place); NAN for none. */
double serve_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The end of the group of rows that starts at row i: the first row whose
 * first keys columns differ. */
size_t serve_group_end(const struct serve_rows *r, size_t i, size_t keys)
{
	size_t e = i + 1;

	for (; e < r->n; e++)
		for (size_t k = 0; k < keys; k++)
			if (strcmp(serve_cell(r, e, k), serve_cell(r, i, k)) != 0)
				return e;
	return e;
}

/* The median of column col over rows [i, e), NULLs skipped, in v (room for
 * e - i); *n the values counted. */
double serve_col_median(const struct serve_rows *r, size_t i, size_t e, size_t col, double *v,
			size_t *n)
{
	size_t k = 0;

	for (size_t j = i; j < e; j++)
		if (r->cell[j * r->cols + col] != NULL && isfinite(serve_cell_num(r, j, col)))
			v[k++] = serve_cell_num(r, j, col);
	if (n != NULL)
		*n = k;
	return serve_median(v, k);
}

/* s with the characters markup gives a meaning to (& < > " ' and
 * controls) made '?': malloc'ed, NULL when out of memory. */
static char *inert(const char *s)
{
	char *t = strdup(s);

	for (char *p = t; p != NULL && *p; p++)
		if (strchr("&<>\"'", *p) != NULL || (unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return t;
}

/* v with every string and key made inert(): the picture is drawn by
 * lib/launch's renderer from a plan a user posted, and nothing it writes
 * from that plan can then be markup (a GPU name, crosses_uplinks).  A new
 * reference; NULL when out of memory. */
json_t *serve_json_inert(json_t *v)
{
	json_t *out = NULL, *x;
	const char *key;
	char *t;
	size_t i;

	if (json_is_string(v)) {
		t = inert(json_string_value(v));
		out = t != NULL ? json_string(t) : NULL;
		free(t);
	} else if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, x)
		{
			if (out != NULL && json_array_append_new(out, serve_json_inert(x)) != 0) {
				json_decref(out);
				out = NULL;
			}
		}
	} else if (json_is_object(v)) {
		out = json_object();
		json_object_foreach(v, key, x)
		{
			t = inert(key);
			if (out != NULL &&
			    (t == NULL || json_object_set_new(out, t, serve_json_inert(x)))) {
				json_decref(out);
				out = NULL;
			}
			free(t);
		}
	} else {
		out = json_incref(v);
	}
	return out;
}

/* --json's lines (serve.h): written by serve.c and serve_http.c. */
void serve_json_line(FILE *f, const char *event, json_t *more)
{
	struct timeval tv;
	json_t *j;
	char *text;

	gettimeofday(&tv, NULL);
	j = json_pack("{s:s, s:s, s:f}", "schema", SERVE_JSON_SCHEMA, "event", event, "time",
		      (double)tv.tv_sec + (double)tv.tv_usec / 1e6);
	if (j != NULL && more != NULL)
		json_object_update(j, more);
	json_decref(more);
	text = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (text != NULL)
		fprintf(f, "%s\n", text);
	fflush(f);
	free(text);
	json_decref(j);
}
