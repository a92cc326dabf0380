/*
 * fuzz_fabric.c: a fabric description as the fabric service (FabricURL=)
 * or its cache hands it back (dtplan_fabric_desc_parse(): dtplan.fabric/1
 * JSON, or topology.conf), then applied to the site's defaults
 * (dtplan_fabric_desc_apply()).  Property: a parsed fabric has a tree.
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(fabric)
{
	struct dtplan_fabric_desc *f = NULL;
	struct dtplan_config base, out;
	char *text = dtplan_fuzz_text(data, size);

	if (text == NULL)
		return 0;
	if (dtplan_fabric_desc_parse(text, strlen(text), "fuzz", &f, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(f != NULL && f->topology != NULL);
		dtplan_config_init(&base);
		dtplan_config_init(&out);
		dtplan_fabric_desc_apply(f, &base, &out, NULL);
		dtplan_config_fini(&out);
		dtplan_config_fini(&base);
	}
	dtplan_fabric_desc_destroy(f);
	free(text);
	return 0;
}
