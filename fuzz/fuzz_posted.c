/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_posted.c: a document posted to the collector (dtplan_posted_parse(),
 * what dtplan serve takes before it stores anything).  Property: a
 * document taken is a JSON object of a kind, and every refusal says why.
 */
#include "fuzz.h"

#include <jansson.h>

DTPLAN_FUZZ_TARGET(posted)
{
	struct dtplan_error err = {0};
	enum dtplan_posted_kind kind = DTPLAN_POSTED__LAST;
	struct json_t *doc = NULL;

	if (dtplan_posted_parse((const char *)data, size, &doc, &kind, &err) == DTPLAN_OK)
		DTPLAN_FUZZ_CHECK(json_is_object(doc) && kind < DTPLAN_POSTED__LAST);
	else
		DTPLAN_FUZZ_CHECK(doc == NULL && err.text[0] != '\0');
	json_decref(doc);
	return 0;
}
