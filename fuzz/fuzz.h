/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz.h: what every fuzzing harness includes.
 *
 * A harness is one file, fuzz/fuzz_<name>.c, whose body is
 *
 *     DTPLAN_FUZZ_TARGET(name) { ... return 0; }
 *
 * Built by fuzz/run.sh with clang's libFuzzer (-DDTPLAN_LIBFUZZER), it is
 * LLVMFuzzerTestOneInput(); built by automake into fuzz/replay with the
 * project's compiler, it is dtplan_fuzz_<name>(), which replay.c runs on the
 * seed corpus and the regressions in tests/fuzz/ (make check).  A harness
 * never prints; it aborts when a property it checks fails.
 */
#ifndef DTPLAN_FUZZ_H
#define DTPLAN_FUZZ_H

#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtplan.h"

#ifdef DTPLAN_LIBFUZZER
#define DTPLAN_FUZZ_TARGET(name)                                                                   \
	int dtplan_fuzz_##name(const uint8_t *data, size_t size);                                  \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                              \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                               \
	{                                                                                          \
		return dtplan_fuzz_##name(data, size);                                             \
	}                                                                                          \
	int dtplan_fuzz_##name(const uint8_t *data, size_t size)
#else
#define DTPLAN_FUZZ_TARGET(name)                                                                   \
	int dtplan_fuzz_##name(const uint8_t *data, size_t size);                                  \
	int dtplan_fuzz_##name(const uint8_t *data, size_t size)
#endif

/* Aborts (a crash the fuzzer reports) unless cond holds. */
#define DTPLAN_FUZZ_CHECK(cond)                                                                    \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

/*
 * The input as text: NUL-terminated and cut at its first NUL, as
 * dtplan_file_read() refuses files holding one.  Caller frees; NULL when
 * out of memory.
 */
static inline char *dtplan_fuzz_text(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t n = nul != NULL ? (size_t)(nul - data) : size;
	char *text = malloc(n + 1);

	if (text != NULL) {
		memcpy(text, data, n);
		text[n] = '\0';
	}
	return text;
}

#endif /* DTPLAN_FUZZ_H */
