/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_train.c: --dt-train values (dtplan_request_parse_train()), e.g.
 * "seq=4096,gbs=512!,tp=8,recompute=auto,gpu=h100".  Property: what parses
 * leaves a request whose choices are within their ranges.
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(train)
{
	struct dtplan_request r;
	char *text = dtplan_fuzz_text(data, size);

	if (text == NULL)
		return 0;
	dtplan_request_init(&r);
	if (dtplan_request_parse_train(&r, text, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(r.seq >= 0 && r.global_batch >= 1 &&
				  r.global_batch <= DTPLAN_MAX_GLOBAL_BATCH);
		DTPLAN_FUZZ_CHECK(r.tp >= 0 && r.pp >= 0 && r.micro_batch >= 0);
		DTPLAN_FUZZ_CHECK(r.recompute >= -1 && r.recompute <= DTPLAN_RECOMPUTE_FULL);
	}
	free(text);
	return 0;
}
