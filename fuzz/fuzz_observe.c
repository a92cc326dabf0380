/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_observe.c: what a job measured, as the epilog reads it
 * (lib/record/observe.c): the DTPLAN_OBSERVE file's JSON lines
 * (dtplan_observe_parse_jsonl()) and the step lines of the job's output in
 * the formats of Megatron-LM, torchtitan, DeepSpeed and Lightning
 * (dtplan_observe_parse_log()).  The input's first byte picks the reader
 * and the plan's shape the log reader divides by; the rest is the text.
 * Properties: every kept step and checkpoint time is sane (positive,
 * finite, under a year), the counts stay within their bounds, a refusal
 * keeps nothing, and the summary of what was kept is within its range.
 */
#include "fuzz.h"

#include <math.h>

static void check_kept(const struct dtplan_observation *o)
{
	double median, spread;
	size_t kept;

	DTPLAN_FUZZ_CHECK(o->n_steps <= DTPLAN_OBSERVE_MAX_SAMPLES);
	DTPLAN_FUZZ_CHECK(o->n_ckpts <= DTPLAN_OBSERVE_MAX_SAMPLES);
	for (size_t i = 0; i < o->n_steps; i++)
		DTPLAN_FUZZ_CHECK(isfinite(o->steps[i]) && o->steps[i] > 0.0 &&
				  o->steps[i] >= DTPLAN_OBSERVE_MIN_STEP_S &&
				  o->steps[i] <= DTPLAN_OBSERVE_MAX_STEP_S);
	for (size_t i = 0; i < o->n_ckpts; i++)
		DTPLAN_FUZZ_CHECK(isfinite(o->ckpts[i]) && o->ckpts[i] > 0.0 &&
				  o->ckpts[i] >= DTPLAN_OBSERVE_MIN_CKPT_S &&
				  o->ckpts[i] <= DTPLAN_OBSERVE_MAX_CKPT_S);
	DTPLAN_FUZZ_CHECK(memchr(o->rejected, '\0', sizeof(o->rejected)) != NULL);
	DTPLAN_FUZZ_CHECK(memchr(o->source, '\0', sizeof(o->source)) != NULL);
	if (dtplan_observation_summary(o, &median, &spread, &kept, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(kept >= 1 && kept <= o->n_steps);
		DTPLAN_FUZZ_CHECK(isfinite(median) && median > 0.0);
		DTPLAN_FUZZ_CHECK(isfinite(spread) && spread >= 0.0);
	}
}

DTPLAN_FUZZ_TARGET(observe)
{
	/* the log reader's plan: a few shapes, the zeros included (no plan) */
	static const struct dtplan_observe_ctx shapes[4] = {{0, 0, 0},
							    {1024, 4096, 512},
							    {1, 1, 1},
							    {16384, 131072, 131072}};
	struct dtplan_observation o;
	enum dtplan_err e;
	char *text;

	if (size < 1)
		return 0;
	text = dtplan_fuzz_text(data + 1, size - 1);
	if (text == NULL)
		return 0;
	memset(&o, 0, sizeof(o));
	if ((data[0] & 1) == 0)
		e = dtplan_observe_parse_jsonl(&o, text, strlen(text), NULL);
	else
		e = dtplan_observe_parse_log(&o, text, strlen(text), &shapes[(data[0] >> 1) & 3],
					     NULL);
	if (e != DTPLAN_OK && (data[0] & 1) == 0)
		DTPLAN_FUZZ_CHECK(o.n_steps == 0 && o.n_ckpts == 0);
	check_kept(&o);
	dtplan_observation_fini(&o);
	free(text);
	return 0;
}
