/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_units.c: sizes, rates, times, counts, whole numbers and booleans
 * (lib/base/units.c, lib/site/config.c's dtplan_parse_bool), as options and site file
 * values give them.  Properties: what parses is finite and within the
 * parser's promise, and formats without overflowing a small buffer.
 */
#include "fuzz.h"

#include <math.h>

DTPLAN_FUZZ_TARGET(units)
{
	char *text = dtplan_fuzz_text(data, size), out[32];
	double v = 0;
	long l = 0;
	bool b;

	if (text == NULL)
		return 0;
	if (dtplan_parse_bytes(text, "bytes", &v, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(isfinite(v) && v > 0);
		DTPLAN_FUZZ_CHECK(strlen(dtplan_format_bytes(v, out, sizeof(out))) < sizeof(out));
	}
	if (dtplan_parse_rate(text, "rate", &v, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(isfinite(v) && v > 0);
		dtplan_format_rate(v, out, sizeof(out));
	}
	if (dtplan_parse_time(text, "time", &v, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(isfinite(v) && v >= 0);
		dtplan_format_time(v, out, sizeof(out));
	}
	if (dtplan_parse_count(text, "count", &v, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(isfinite(v) && v > 0);
		dtplan_format_count(v, out, sizeof(out));
	}
	if (dtplan_parse_long(text, "long", -5, 1L << 40, &l, NULL) == DTPLAN_OK)
		DTPLAN_FUZZ_CHECK(l >= -5 && l <= 1L << 40);
	dtplan_parse_bool(text, "bool", &b, NULL);
	free(text);
	return 0;
}
