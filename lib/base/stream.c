/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stream.c: a text written through stdio into memory (open_memstream(3)),
 * for writers that print with fprintf: the hand-offs and the plan's text
 * and picture (lib/launch/).  lib/base/text.c is the other growing text,
 * for callers that append bytes and format without a FILE.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>

enum dtplan_err dtplan__stream_open(struct dtplan__stream *t, struct dtplan_error *err)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	if (t->f == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	return DTPLAN_OK;
}

enum dtplan_err dtplan__stream_finish(struct dtplan__stream *t, char **out,
				      struct dtplan_error *err)
{
	bool failed = t->f == NULL || ferror(t->f) != 0;

	if (t->f != NULL && fclose(t->f) != 0)
		failed = true;
	t->f = NULL;
	if (failed) {
		free(t->buf);
		t->buf = NULL;
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	}
	*out = t->buf;
	return DTPLAN_OK;
}
