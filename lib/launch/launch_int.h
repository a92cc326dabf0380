/*
 * launch/launch_int.h: what the hand-offs of lib/launch/ share.
 *
 * One file per framework's words, each using only those after it
 * (tests/check_cycles.sh):
 *
 *   launch.c           the dispatcher: the job's variables, the launch hint
 *   nemo.c             NeMo 1.x overrides
 *   megatron_bridge.c  Megatron-Bridge overrides
 *   megatron.c         Megatron-LM arguments, and the stage splits, recompute
 *                      modules and GPU names NeMo and Megatron-Bridge take
 *   torchtitan.c       torchtitan options
 *   deepspeed.c        the DeepSpeed configuration fragment
 *   torchrun.c         torchrun's nodes and ranks per node, the hostfile
 *   handoff.c          the text builder, the plan's check, its batch,
 *                      sequence and checkpoint interval
 *
 * libdtplan's own, never installed.  Included by those files only.
 */
#ifndef DTPLAN_LAUNCH_LAUNCH_INT_H
#define DTPLAN_LAUNCH_LAUNCH_INT_H

#include "dtplan.h"

#include <stdbool.h>
#include <stdio.h>

/* An in-memory text; text_finish() hands it over or reports NOMEM. */
struct text {
	FILE *f;
	char *buf;
	size_t len;
};

enum dtplan_err text_open(struct text *t, struct dtplan_error *err);
enum dtplan_err text_finish(struct text *t, char **out, struct dtplan_error *err);
enum dtplan_err check_plan(const struct dtplan_plan *p, char **out, struct dtplan_error *err);
int plan_seq(const struct dtplan_plan *p);
long plan_global_batch(const struct dtplan_candidate *c);
long ckpt_steps(const struct dtplan_plan *p);

bool stages_account(const struct dtplan_candidate *c);
bool stages_layout(const struct dtplan_candidate *c);
void put_layout(FILE *f, const struct dtplan_candidate *c);
bool stages_uneven(const struct dtplan_candidate *c);
bool pp_inner(const struct dtplan_candidate *c);
void put_fine_modules(FILE *f, const struct dtplan_plan *p, const char *before, char sep,
		      const char *after);
bool blackwell(const struct dtplan_plan *p);

int ranks_per_node(const struct dtplan_plan *p, int *nodes);

#endif /* DTPLAN_LAUNCH_LAUNCH_INT_H */
