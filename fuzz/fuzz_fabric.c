/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_fabric.c: a fabric description as the fabric service (FabricURL=)
 * or its cache hands it back (dtplan_fabric_desc_parse()), read in both
 * formats (dtplan.fabric/1 JSON and topology.conf: the service's
 * Content-Type or FabricFormat= choose, not the text), then applied to the
 * site's defaults (dtplan_fabric_desc_apply()); the JSON also read for some
 * nodes, as a job's batch step reads it (dtplan_fabric_desc_parse_for()).
 * Properties: a parsed fabric has a tree; an answer read whole is read for
 * some nodes too, into a tree of no more switches.
 */
#include "fuzz.h"

#include "dtprobes.h"

DTPLAN_FUZZ_TARGET(fabric)
{
	struct dtplan_fabric_desc *f = NULL, *part = NULL;
	struct dtplan_config base, out;
	char *text = dtplan_fuzz_text(data, size);

	if (text == NULL)
		return 0;
	for (int k = 0; k < 2; k++) {
		enum dtplan_fabric_format fmt =
			k == 0 ? DTPLAN_FABRIC_JSON : DTPLAN_FABRIC_TOPOLOGY_CONF;

		if (dtplan_fabric_desc_parse(text, strlen(text), fmt, "fuzz", &f, NULL) ==
		    DTPLAN_OK) {
			DTPLAN_FUZZ_CHECK(f != NULL && f->topology != NULL && f->format == fmt);
			dtplan_config_init(&base);
			dtplan_config_init(&out);
			dtplan_fabric_desc_apply(f, &base, &out, NULL);
			dtplan_config_fini(&out);
			dtplan_config_fini(&base);
			if (k == 0) {
				DTPLAN_FUZZ_CHECK(
					dtplan_fabric_desc_parse_for(text, strlen(text), fmt,
								     "fuzz", "n[1-2],gpu01", &part,
								     NULL) == DTPLAN_OK);
				DTPLAN_FUZZ_CHECK(part->topology->n_switches <=
						  f->topology->n_switches);
				dtplan_fabric_desc_destroy(part);
				part = NULL;
			}
		}
		dtplan_fabric_desc_destroy(f);
		f = NULL;
	}
	free(text);
	return 0;
}
