/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * suggest.c: "did you mean" for a mistyped command or option: the nearest
 * of the known words by Damerau-Levenshtein distance (the optimal string
 * alignment form: insertions, deletions, substitutions and the swap of two
 * neighbours, each 1), under a threshold that grows with the word.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Longest word compared; longer ones are never suggested or matched. */
#define WORD_MAX 64

size_t cli_edit_distance(const char *a, const char *b)
{
	/* three rows of the table: i - 2, i - 1 and i */
	size_t rows[3][WORD_MAX + 1];
	size_t na = strlen(a), nb = strlen(b);

	if (na > WORD_MAX || nb > WORD_MAX)
		return (size_t)-1;
	for (size_t j = 0; j <= nb; j++)
		rows[0][j] = rows[1][j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t *d = rows[i % 3], *up = rows[(i + 2) % 3], *up2 = rows[(i + 1) % 3];

		d[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t best = up[j - 1] + cost;

			if (up[j] + 1 < best)
				best = up[j] + 1;
			if (d[j - 1] + 1 < best)
				best = d[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    up2[j - 2] + 1 < best)
				best = up2[j - 2] + 1;
			d[j] = best;
		}
	}
	return rows[na % 3][nb];
}

const char *cli_suggest(const char *word, const char *const *words, size_t n)
{
	size_t len = strlen(word), limit, best_d = (size_t)-1;
	const char *best = NULL;

	if (len == 0 || len > WORD_MAX)
		return NULL;
	/* 1 edit up to 4 letters, 2 up to 7, then 3 */
	limit = len <= 4 ? 1 : len <= 7 ? 2 : 3;
	for (size_t i = 0; i < n; i++) {
		size_t d = cli_edit_distance(word, words[i]);

		if (d < best_d) {
			best_d = d;
			best = words[i];
		}
	}
	if (best != NULL && best_d <= limit && best_d > 0)
		return best;
	/* else the one word that starts with it: "dtplan chec" */
	best = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(words[i], word, len) != 0)
			continue;
		if (best != NULL)
			return NULL;
		best = words[i];
	}
	return best;
}
