/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_get.c: the one family that reads a member of a JSON object for the
 * readers of text dtplan did not write or that users may edit (node JSON,
 * the plan, ...), with one convention (base/base.h): DTPLAN_ERR_PARSE from
 * source for a missing required member, a wrong type and a value out of
 * range alike, the message naming the member as PATH.KEY.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

/* "PATH.KEY" ("KEY" at the top level; a path ending in '.' is used as is). */
static const char *dot(const char *path)
{
	size_t n = strlen(path);

	return n == 0 || path[n - 1] == '.' ? "" : ".";
}

/*
 * The member, or NULL with *rv DTPLAN_OK when it may be left out (absent and
 * not required, or null and nullable), or NULL with *rv set when it is
 * missing; a present value is returned without its type checked.
 */
static json_t *member(const json_t *obj, const char *source, const char *path, const char *key,
		      unsigned flags, enum dtplan_err *rv, struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	*rv = DTPLAN_OK;
	if (v == NULL) {
		if (flags & DTPLAN_JGET_REQUIRED)
			*rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, 0, "%s%s%s: missing",
					    path, dot(path), key);
		return NULL;
	}
	if (json_is_null(v) && (flags & DTPLAN_JGET_NULLABLE))
		return NULL;
	return v;
}

static enum dtplan_err wrong_type(const char *source, const char *path, const char *key,
				  const char *what, struct dtplan_error *err)
{
	return dtplan__error(err, DTPLAN_ERR_PARSE, source, 0, "%s%s%s: expected %s", path,
			     dot(path), key, what);
}

enum dtplan_err dtplan__jget_long(const struct json_t *obj, const char *source, const char *path,
				  const char *key, unsigned flags, long min, long max, long *out,
				  struct dtplan_error *err)
{
	enum dtplan_err rv;
	json_t *v = member(obj, source, path, key, flags, &rv, err);
	json_int_t x;

	if (v == NULL)
		return rv;
	if (!json_is_integer(v))
		return wrong_type(source, path, key, "a whole number", err);
	x = json_integer_value(v);
	if (x < min || x > max)
		return dtplan__error(err, DTPLAN_ERR_PARSE, source, 0,
				     "%s%s%s: %lld is out of range (%ld to %ld)", path, dot(path),
				     key, (long long)x, min, max);
	*out = (long)x;
	return DTPLAN_OK;
}

enum dtplan_err dtplan__jget_int(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, int min, int max, int *out,
				 struct dtplan_error *err)
{
	long x = *out; /* left as it is when the member may be left out */
	enum dtplan_err rv = dtplan__jget_long(obj, source, path, key, flags, min, max, &x, err);

	if (rv == DTPLAN_OK)
		*out = (int)x;
	return rv;
}

enum dtplan_err dtplan__jget_num(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, double lo, double hi, double *out,
				 struct dtplan_error *err)
{
	enum dtplan_err rv;
	json_t *v = member(obj, source, path, key, flags, &rv, err);
	double d;

	if (v == NULL)
		return rv;
	if (!json_is_number(v))
		return wrong_type(source, path, key, "a number", err);
	d = json_number_value(v);
	if (!isfinite(d) || d < lo || d > hi)
		return dtplan__error(err, DTPLAN_ERR_PARSE, source, 0,
				     "%s%s%s: %g is out of range (%g to %g)", path, dot(path), key,
				     d, lo, hi);
	*out = d;
	return DTPLAN_OK;
}

enum dtplan_err dtplan__jget_str(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, char *dst, size_t size,
				 struct dtplan_error *err)
{
	enum dtplan_err rv;
	json_t *v = member(obj, source, path, key, flags, &rv, err);

	if (v == NULL)
		return rv;
	if (!json_is_string(v))
		return wrong_type(source, path, key, "a string", err);
	if (json_string_length(v) >= size || strlen(json_string_value(v)) != json_string_length(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, source, 0,
				     "%s%s%s: longer than %zu characters or holds a NUL", path,
				     dot(path), key, size - 1);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return DTPLAN_OK;
}

enum dtplan_err dtplan__jget_bool(const struct json_t *obj, const char *source, const char *path,
				  const char *key, unsigned flags, bool *out,
				  struct dtplan_error *err)
{
	enum dtplan_err rv;
	json_t *v = member(obj, source, path, key, flags, &rv, err);

	if (v == NULL)
		return rv;
	if (!json_is_boolean(v))
		return wrong_type(source, path, key, "true or false", err);
	*out = json_is_true(v);
	return DTPLAN_OK;
}

/* An object or an array member: the same convention, the value borrowed. */
static enum dtplan_err get_container(const struct json_t *obj, const char *source, const char *path,
				     const char *key, unsigned flags, bool array,
				     struct json_t **out, struct dtplan_error *err)
{
	enum dtplan_err rv;
	json_t *v = member(obj, source, path, key, flags, &rv, err);

	if (v == NULL)
		return rv;
	if (array ? !json_is_array(v) : !json_is_object(v))
		return wrong_type(source, path, key, array ? "an array" : "an object", err);
	*out = v;
	return DTPLAN_OK;
}

enum dtplan_err dtplan__jget_obj(const struct json_t *obj, const char *source, const char *path,
				 const char *key, unsigned flags, struct json_t **out,
				 struct dtplan_error *err)
{
	return get_container(obj, source, path, key, flags, false, out, err);
}

enum dtplan_err dtplan__jget_array(const struct json_t *obj, const char *source, const char *path,
				   const char *key, unsigned flags, struct json_t **out,
				   struct dtplan_error *err)
{
	return get_container(obj, source, path, key, flags, true, out, err);
}
