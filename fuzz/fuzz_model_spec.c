/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_model_spec.c: --dt-model / --model specs (dtplan_model_parse()):
 * presets, sizes ("7B") and dimensions ("layers=..,hidden=..,heads=..").
 * Specs naming a config.json (with '/' or ending in .json) are the other
 * harness's.  Property: a model that parses has positive dimensions and a
 * finite parameter count within the documented bounds.
 */
#include "fuzz.h"

#include <math.h>
#include <strings.h>

DTPLAN_FUZZ_TARGET(model_spec)
{
	struct dtplan_model m;
	char *spec = dtplan_fuzz_text(data, size);
	size_t len;

	if (spec == NULL)
		return 0;
	len = strlen(spec);
	if (strchr(spec, '/') == NULL && !(len >= 5 && strcasecmp(spec + len - 5, ".json") == 0) &&
	    dtplan_model_parse(spec, &m, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(m.layers >= 1 && m.hidden >= 1 && m.heads >= 1);
		DTPLAN_FUZZ_CHECK(isfinite(m.params) && m.params > 0 &&
				  m.params <= DTPLAN_MODEL_MAX_PARAMS);
	}
	free(spec);
	return 0;
}
