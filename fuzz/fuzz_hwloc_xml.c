/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_hwloc_xml.c: an hwloc XML topology, read as a cache entry or
 * --node-xml is: the shape check, then hwloc and dtplan's scan in the
 * bounded child, which hands back node JSON (probes/node.c).  hwloc 2.9
 * crashes on some inputs; there that is the child's end and an error, never
 * the caller's.  libFuzzer sees only the parent's coverage; run with
 * ASAN_OPTIONS=exitcode=86 (fuzz/run.sh does), a child that AddressSanitizer
 * or UBSan stopped is reported as a crash.
 */
#include "fuzz.h"

#include "dtprobes.h"
#include "probes_private.h"

/* Per input; libFuzzer's own -timeout is longer. */
#define CHILD_TIMEOUT_S 5.0

DTPLAN_FUZZ_TARGET(hwloc_xml)
{
	struct dtplan_node *n = malloc(sizeof(*n));
	struct dtplan_error err = {0};
	char *text = dtplan_fuzz_text(data, size), *json = NULL;

	if (text == NULL || n == NULL)
		goto out;
	if (dtprobe__node_from_xml_text(text, strlen(text), "fuzz.xml", "xml", CHILD_TIMEOUT_S, n,
					&err) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(n->n_gpus >= 0 && n->n_gpus <= DTPLAN_NODE_MAX_GPUS);
		DTPLAN_FUZZ_CHECK(n->cores >= 0);
		DTPLAN_FUZZ_CHECK(dtplan_node_to_json(n, false, &json, NULL) == DTPLAN_OK);
	} else {
		/* a sanitizer stopped the child: ours to fix */
		DTPLAN_FUZZ_CHECK(strstr(err.text, "exit status 86") == NULL);
		/* a small XML never exhausts memory: that was node JSON refusing
		 * bytes that are not UTF-8 (regressions/hwloc_xml/hostname-not-utf8.xml) */
		DTPLAN_FUZZ_CHECK(err.code != DTPLAN_ERR_NOMEM);
	}
out:
	free(json);
	free(text);
	free(n);
	return 0;
}
