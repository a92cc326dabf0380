/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_global_batch.c: a global batch ("1024", "1538!", "4k"), as gbs= and
 * dtplan plan --global-batch give it (dtplan_parse_global_batch()).
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(global_batch)
{
	struct dtplan_request r;
	char *text = dtplan_fuzz_text(data, size);

	if (text == NULL)
		return 0;
	dtplan_request_init(&r);
	if (dtplan_parse_global_batch(text, "gbs", &r, NULL) == DTPLAN_OK)
		DTPLAN_FUZZ_CHECK(r.global_batch >= 1 && r.global_batch <= DTPLAN_MAX_GLOBAL_BATCH);
	free(text);
	return 0;
}
