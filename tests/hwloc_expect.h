/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwloc_expect.h: what the hwloc the tests build and run against does with
 * the malformed XML dtplan must survive, keyed on what that hwloc is, so
 * that each test asserts the one correct outcome for it.
 *
 *  - hwloc 2.14+ refuses an imported object without its cpuset,
 *    complete_cpuset, nodeset and complete_nodeset ("invalid normal or
 *    memory object ... without cpuset ..."; open-mpi/hwloc fef611b "xml:
 *    reject imported object missing complete_cpuset/nodeset", first in tag
 *    hwloc-2.14.0, b5660df).  Before, a PU without one was accepted (its
 *    cores counted from the parent's cpuset) and a NUMA node without
 *    complete_nodeset crashed hwloc (tests/data/hwloc-crash.xml).
 *  - With libxml2 (hwloc's xml_libxml plugin, in Debian's libhwloc-plugins
 *    from 2.12 on, or hwloc linked with it), bytes that are not UTF-8 make
 *    the document malformed; hwloc's own minimal parser takes them as they
 *    are.  HWLOC_LIBXML_IMPORT=0 makes hwloc use the minimal parser.
 */
#ifndef DTPLAN_TEST_HWLOC_EXPECT_H
#define DTPLAN_TEST_HWLOC_EXPECT_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define DT_HWLOC_REJECTS_INCOMPLETE_SETS                                                           \
	(HWLOC_VERSION_MAJOR > 2 || (HWLOC_VERSION_MAJOR == 2 && HWLOC_VERSION_MINOR >= 14))

/* Whether this process's hwloc imports XML with libxml2: hwloc loads its
 * plugins when a topology is first made; libxml2 is then mapped. */
static inline bool dt_hwloc_has_libxml2(void)
{
	hwloc_topology_t t;
	char line[1024];
	bool found = false;
	FILE *maps;

	if (hwloc_topology_init(&t) != 0)
		return false;
	maps = fopen("/proc/self/maps", "r");
	while (maps != NULL && !found && fgets(line, sizeof(line), maps) != NULL)
		found = strstr(line, "/libxml2.so") != NULL;
	if (maps != NULL)
		fclose(maps);
	hwloc_topology_destroy(t);
	return found;
}

#endif
