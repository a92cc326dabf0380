/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * units.c: sizes, rates, times and counts as people write them.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
	const char *suffix;
	double factor;
};

/* Sizes: decimal units, binary units, and bare B.  Matched exactly. */
static const struct unit byte_units[] = {
	{"", 1.0},
	{"B", 1.0},
	{"K", 1e3},
	{"KB", 1e3},
	{"kB", 1e3},
	{"M", 1e6},
	{"MB", 1e6},
	{"G", 1e9},
	{"GB", 1e9},
	{"T", 1e12},
	{"TB", 1e12},
	{"P", 1e15},
	{"PB", 1e15},
	{"KiB", 1024.0},
	{"MiB", 1048576.0},
	{"GiB", 1073741824.0},
	{"TiB", 1099511627776.0},
	{"Ki", 1024.0},
	{"Mi", 1048576.0},
	{"Gi", 1073741824.0},
	{"Ti", 1099511627776.0},
};

/* Rates: per second; lower-case b means bits. */
static const struct unit rate_units[] = {
	{"", 1.0},         {"B/s", 1.0},         {"KB/s", 1e3},
	{"MB/s", 1e6},     {"GB/s", 1e9},        {"TB/s", 1e12},
	{"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
	{"b/s", 0.125},    {"bps", 0.125},       {"Kb/s", 125.0},
	{"Mb/s", 125e3},   {"Gb/s", 125e6},      {"Tb/s", 125e9},
	{"Kbps", 125.0},   {"Mbps", 125e3},      {"Gbps", 125e6},
	{"Tbps", 125e9},
};

static const struct unit time_units[] = {
	{"", 1.0},    {"s", 1.0},  {"sec", 1.0},  {"ns", 1e-9},  {"us", 1e-6},
	{"ms", 1e-3}, {"m", 60.0}, {"min", 60.0}, {"h", 3600.0}, {"d", 86400.0},
};

/* Counts of parameters: "7B" is seven billion here, not seven bytes. */
static const struct unit count_units[] = {
	{"", 1.0},  {"K", 1e3}, {"k", 1e3}, {"M", 1e6},  {"m", 1e6},
	{"B", 1e9}, {"b", 1e9}, {"G", 1e9}, {"T", 1e12}, {"t", 1e12},
};

/* True when [text, end) holds only what a decimal number needs. */
static bool plain_decimal(const char *text, const char *end)
{
	for (const char *p = text; p < end; p++)
		if (!isdigit((unsigned char)*p) && *p != '.' && *p != 'e' && *p != 'E' &&
		    *p != '+' && *p != '-')
			return false;
	return true;
}

static enum dtplan_err parse_with_units(const char *text, const char *what,
					const struct unit *units, size_t n_units,
					const char *expected, bool allow_zero, double *out,
					struct dtplan_error *err)
{
	const char *name = what ? what : "value";
	char *end;
	double v;

	if (text == NULL || text[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "%s: missing value (expected %s)", name, expected);
	errno = 0;
	v = strtod(text, &end);
	/* strtod also takes blanks, hex, "inf" and "nan": allow plain decimals only. */
	if (end == text || !plain_decimal(text, end))
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
				     "%s: '%s' is not a number (expected %s)", name, text,
				     expected);
	if (errno == ERANGE || !isfinite(v))
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0, "%s: '%s' is out of range", name,
				     text);
	for (size_t i = 0; i < n_units; i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		v *= units[i].factor;
		if (!isfinite(v))
			return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0, "%s: '%s' is too large",
					     name, text);
		if (v < 0.0 || (!allow_zero && v == 0.0))
			return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0, "%s: '%s' must be %s",
					     name, text,
					     allow_zero ? "zero or more" : "more than zero");
		/* "-0" is zero: without its sign, it would print as "-0.0 us" */
		*out = v == 0.0 ? 0.0 : v;
		return DTPLAN_OK;
	}
	return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
			     "%s: unknown unit '%s' in '%s' (expected %s)", name, end, text,
			     expected);
}

enum dtplan_err dtplan_parse_bytes(const char *text, const char *what, double *out,
				   struct dtplan_error *err)
{
	return parse_with_units(text, what, byte_units, DTPLAN_ARRAY_SIZE(byte_units),
				"a size such as 14GB, 33.6MB, 1GiB or 14e9", false, out, err);
}

enum dtplan_err dtplan_parse_rate(const char *text, const char *what, double *out,
				  struct dtplan_error *err)
{
	return parse_with_units(text, what, rate_units, DTPLAN_ARRAY_SIZE(rate_units),
				"a rate such as 900GB/s or 400Gb/s", false, out, err);
}

enum dtplan_err dtplan_parse_time(const char *text, const char *what, double *out,
				  struct dtplan_error *err)
{
	return parse_with_units(text, what, time_units, DTPLAN_ARRAY_SIZE(time_units),
				"a time such as 2us, 1.5ms, 60s or 3h", true, out, err);
}

enum dtplan_err dtplan_parse_count(const char *text, const char *what, double *out,
				   struct dtplan_error *err)
{
	return parse_with_units(text, what, count_units, DTPLAN_ARRAY_SIZE(count_units),
				"a count such as 7B, 70b, 1.5T or 7e9", false, out, err);
}

enum dtplan_err dtplan_parse_long(const char *text, const char *what, long min, long max, long *out,
				  struct dtplan_error *err)
{
	const char *name = what ? what : "value";
	char *end;
	long v;

	if (text == NULL || text[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "%s: missing value (expected a whole number)", name);
	errno = 0;
	v = strtol(text, &end, 10);
	/* strtol skips blanks and takes '+': a count such as --gpus gets neither. */
	if (end == text || *end != '\0' || isspace((unsigned char)text[0]) ||
	    (min > 0 && text[0] == '+'))
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0, "%s: '%s' is not a whole number",
				     name, text);
	if (errno == ERANGE || v < min || v > max)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "%s: %s is out of range (%ld to %ld)", name, text, min, max);
	*out = v;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_parse_bool(const char *text, const char *what, bool *out,
				  struct dtplan_error *err)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; text != NULL && i < DTPLAN_ARRAY_SIZE(yes); i++) {
		if (dtplan__streq_nocase(text, yes[i])) {
			*out = true;
			return DTPLAN_OK;
		}
		if (dtplan__streq_nocase(text, no[i])) {
			*out = false;
			return DTPLAN_OK;
		}
	}
	return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
			     "%s: '%s' is not a boolean (expected yes/no, true/false, on/off, 1/0)",
			     what ? what : "value", text ? text : "");
}

/*
 * Picks the largest decimal unit whose value is >= 1 and prints 3-4
 * significant digits: two decimals below 100, none from 100.  Decides on the
 * rounded value, so that 999.9996e9 prints "1.00 TB", not "1000 GB", and
 * 99.999 prints "100", not "100.00".
 */
static const char *format_scaled(double v, const char *const *names, char *buf, size_t size)
{
	static const double scales[] = {1e15, 1e12, 1e9, 1e6, 1e3, 1.0};
	size_t i;
	double x;
	int digits;

	if (v == 0.0)
		v = 0.0; /* -0 prints as 0 */
	for (i = 0; i < DTPLAN_ARRAY_SIZE(scales) - 1; i++)
		if (fabs(v) >= scales[i])
			break;
	x = v / scales[i];
	if (i > 0 && fabs(round(x)) >= 1000.0) {
		i--;
		x = v / scales[i];
	}
	digits = fabs(round(x * 100.0) / 100.0) >= 100.0 ? 0 : 2;
	snprintf(buf, size, "%.*f %s", digits, x, names[i]);
	return buf;
}

const char *dtplan_format_bytes(double bytes, char *buf, size_t size)
{
	static const char *const names[] = {"PB", "TB", "GB", "MB", "KB", "B"};

	return format_scaled(bytes, names, buf, size);
}

const char *dtplan_format_rate(double bytes_per_s, char *buf, size_t size)
{
	static const char *const names[] = {"PB/s", "TB/s", "GB/s", "MB/s", "KB/s", "B/s"};

	return format_scaled(bytes_per_s, names, buf, size);
}

const char *dtplan_format_count(double count, char *buf, size_t size)
{
	static const char *const names[] = {"P", "T", "B", "M", "K", ""};
	size_t n;

	format_scaled(count, names, buf, size);
	/* "7.00 B" -> "7.00B": counts read better without the space. */
	n = strlen(buf);
	if (n > 1 && buf[n - 1] == ' ')
		buf[n - 1] = '\0';
	else {
		char *sp = strrchr(buf, ' ');

		if (sp != NULL)
			memmove(sp, sp + 1, strlen(sp + 1) + 1);
	}
	return buf;
}

/*
 * "12.0 us", "1.53 ms", "59.50 s", "2m 05s" (from 2 min), "1h 57m" (from
 * 1 h, minutes rounded), "3.5 days" (from 2 days).  Negative or non-finite
 * times print as "-".
 */
const char *dtplan_format_time(double s, char *buf, size_t size)
{
	if (s == 0.0)
		s = 0.0; /* -0 prints as 0 */
	if (!isfinite(s) || s < 0.0) {
		snprintf(buf, size, "-");
	} else if (s < 1e-3) {
		snprintf(buf, size, "%.1f us", s * 1e6);
	} else if (s < 1.0) {
		snprintf(buf, size, "%.2f ms", s * 1e3);
	} else if (s < 120.0) {
		snprintf(buf, size, "%.2f s", s);
	} else if (round(s) < 3600.0) {
		double t = round(s);

		snprintf(buf, size, "%.0fm %02.0fs", floor(t / 60.0), fmod(t, 60.0));
	} else if (round(s / 60.0) < 48.0 * 60.0) {
		double t = round(s / 60.0);

		snprintf(buf, size, "%.0fh %02.0fm", floor(t / 60.0), fmod(t, 60.0));
	} else {
		snprintf(buf, size, "%.1f days", s / 86400.0);
	}
	return buf;
}
