/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tree.c: the one cycle check of a forest given as parent links (switches
 * under their parents): each node's parents are walked once, the path
 * marked, so the check is O(nodes).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdlib.h>

int dtplan__tree_cycle(size_t n, int (*parent)(const void *ctx, int i), const void *ctx)
{
	/* 0 not seen, 1 on the path being walked, 2 known to reach a root */
	unsigned char *state = calloc(n + 1, 1);
	int found = -1;

	if (state == NULL)
		return -2;
	for (size_t i = 0; found < 0 && i < n; i++) {
		int s = (int)i;

		while (s >= 0 && state[s] == 0) {
			state[s] = 1;
			s = parent(ctx, s);
		}
		if (s >= 0 && state[s] == 1)
			found = s;
		/* the walked path reaches a root (or the cycle just found) */
		for (int t = (int)i; t >= 0 && state[t] == 1; t = parent(ctx, t))
			state[t] = 2;
	}
	free(state);
	return found;
}
