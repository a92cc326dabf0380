/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_topology.c: Slurm's topology.conf (lib/topology/topology.c), then the site's
 * switch settings applied to the tree (lib/site/config.c).  Properties: every
 * switch's parent is another switch and every node has a leaf.
 */
#include "fuzz.h"

DTPLAN_FUZZ_TARGET(topology)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_config c;
	char *text = dtplan_fuzz_text(data, size);

	if (text == NULL)
		return 0;
	if (dtplan_topology_parse_string(text, "fuzz", &t, NULL) == DTPLAN_OK) {
		for (size_t i = 0; i < t->n_switches; i++)
			DTPLAN_FUZZ_CHECK(t->switches[i].parent >= -1 &&
					  t->switches[i].parent < (int)t->n_switches &&
					  t->switches[i].parent != (int)i);
		for (size_t i = 0; i < t->n_nodes; i++)
			DTPLAN_FUZZ_CHECK(t->node_leaf[i] >= 0 &&
					  (size_t)t->node_leaf[i] < t->n_switches);
		dtplan_config_init(&c);
		dtplan_config_apply_topology(&c, t, NULL);
		dtplan_config_fini(&c);
	}
	dtplan_topology_destroy(t);
	free(text);
	return 0;
}
