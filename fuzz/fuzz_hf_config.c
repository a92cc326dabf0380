/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_hf_config.c: a HuggingFace config.json (dtplan_model_from_hf_config()),
 * through a file as --model PATH gives it: the input is written to one
 * temporary file per process, which is removed at exit.
 */
#include "fuzz.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

static char path[64];

static void remove_file(void)
{
	unlink(path);
}

DTPLAN_FUZZ_TARGET(hf_config)
{
	struct dtplan_model m;
	FILE *f;
	int fd;

	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "/tmp/dtplan-fuzz-config.XXXXXX.json");
		fd = mkstemps(path, 5);
		if (fd < 0)
			abort();
		close(fd);
		atexit(remove_file);
	}
	f = fopen(path, "w");
	if (f == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
	if (dtplan_model_from_hf_config(path, &m, NULL) == DTPLAN_OK)
		DTPLAN_FUZZ_CHECK(m.layers >= 1 && m.hidden >= 1 && m.heads >= 1 &&
				  isfinite(m.params) && m.params > 0);
	return 0;
}
