/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_measure_json.c: the prolog's measurement file as the batch step and
 * dtplan plan --measurements read it (dtplan_measure_file_from_json()).
 * Property: a file that reads writes back, and what it writes reads again.
 */
#include "fuzz.h"

#include "dtplan.h"

DTPLAN_FUZZ_TARGET(measure_json)
{
	struct dtplan_measure_file f, g;
	char *text = dtplan_fuzz_text(data, size), *back = NULL;

	if (text == NULL)
		return 0;
	if (dtplan_measure_file_from_json(text, &f, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(dtplan_measure_file_to_json(&f, &back, NULL) == DTPLAN_OK);
		DTPLAN_FUZZ_CHECK(dtplan_measure_file_from_json(back, &g, NULL) == DTPLAN_OK);
		DTPLAN_FUZZ_CHECK(g.job_id == f.job_id && g.n_records == f.n_records);
		dtplan_measure_file_fini(&g);
		dtplan_measure_file_fini(&f);
		free(back);
	}
	free(text);
	return 0;
}
