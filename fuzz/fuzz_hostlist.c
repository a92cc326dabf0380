/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_hostlist.c: hostlist expressions (lib/base/hostlist.c), as topology.conf,
 * the site file and --nodes give them.  Properties: what compresses expands
 * back to the same names, and every name matches its expression.
 */
#include "fuzz.h"

/* Fewer than the parsers' DTPLAN_HOSTLIST_MAX, to keep runs fast; the same
 * code checks the bound. */
#define MAX_HOSTS 4096

DTPLAN_FUZZ_TARGET(hostlist)
{
	char *expr = dtplan_fuzz_text(data, size), *buf = NULL;
	char(*names)[64] = NULL, (*back)[64] = NULL;
	size_t n = 0, n_back = 0, cap;
	bool match = false;

	if (expr == NULL)
		return 0;
	if (dtplan_hostlist_expand(expr, MAX_HOSTS, &names, &n, NULL) != DTPLAN_OK)
		goto out;
	DTPLAN_FUZZ_CHECK(n >= 1 && n <= MAX_HOSTS);
	DTPLAN_FUZZ_CHECK(dtplan_hostlist_match(expr, names[n - 1], &match, NULL) == DTPLAN_OK);
	DTPLAN_FUZZ_CHECK(match);
	cap = n * 64 + 64;
	buf = malloc(cap);
	if (buf == NULL || dtplan_hostlist_compress((const char(*)[64])names, n, buf, cap) == NULL)
		goto out;
	/* Compression sorts and merges duplicates: as many names or fewer. */
	if (dtplan_hostlist_expand(buf, MAX_HOSTS, &back, &n_back, NULL) == DTPLAN_OK)
		DTPLAN_FUZZ_CHECK(n_back >= 1 && n_back <= n);
out:
	free(back);
	free(names);
	free(buf);
	free(expr);
	return 0;
}
