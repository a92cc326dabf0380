/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_node_json.c: a node inventory's JSON (dtplan_node_from_json()), as
 * --node-json and the hwloc child give it.  Properties: what reads back
 * writes again, and reads back as the same hardware.
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(node_json)
{
	struct dtplan_node *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	char *text = dtplan_fuzz_text(data, size), *json = NULL;

	if (text == NULL || a == NULL || b == NULL)
		goto out;
	if (dtplan_node_from_json(text, a, NULL) != DTPLAN_OK)
		goto out;
	DTPLAN_FUZZ_CHECK(dtplan_node_to_json(a, false, &json, NULL) == DTPLAN_OK);
	DTPLAN_FUZZ_CHECK(dtplan_node_from_json(json, b, NULL) == DTPLAN_OK);
	DTPLAN_FUZZ_CHECK(dtplan_node_same_hardware(a, b));
out:
	free(json);
	free(text);
	free(a);
	free(b);
	return 0;
}
