/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_site.c: the site file, dtplan.conf (lib/site/config.c).  A node set it
 * describes is looked up by a name its expression gives.
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(site)
{
	struct dtplan_config c;
	char *text = dtplan_fuzz_text(data, size);

	if (text == NULL)
		return 0;
	dtplan_config_init(&c);
	if (dtplan_config_parse_string(&c, text, "fuzz", NULL) == DTPLAN_OK && c.n_nodesets > 0)
		dtplan_config_nodeset_for(&c, "node1");
	dtplan_config_fini(&c);
	free(text);
	return 0;
}
