/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * launch/launch_int.h: what the hand-offs of lib/launch/ share.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
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
 * Included by those files only.
 */
#ifndef DTPLAN_LAUNCH_LAUNCH_INT_H
#define DTPLAN_LAUNCH_LAUNCH_INT_H

#include "dtplan.h"
#include "model/model.h"

#include <stdbool.h>
#include <stdio.h>

enum dtplan_err dtplan__check_plan(const struct dtplan_plan *p, char **out,
				   struct dtplan_error *err);
int dtplan__plan_seq(const struct dtplan_plan *p);
long dtplan__plan_global_batch(const struct dtplan_candidate *c);
long dtplan__ckpt_steps(const struct dtplan_plan *p);
/* The split of p's best candidate, as the rules (lib/model/rules.c) take it. */
void dtplan__plan_split(const struct dtplan_plan *p, struct dtplan__split *s);
/* Whether a launcher of runner's runs p, by the clauses `clauses`
 * (dtplan__split_runs()): NULL, or why not (a static string). */
const char *dtplan__plan_runs(const struct dtplan_plan *p, enum dtplan_framework runner,
			      unsigned clauses);
/* Whether p counts bf16 gradients (DeepSpeed's, its row's 2 bytes): reduced
 * in bf16, where Megatron-LM's are fp32 main gradients. */
bool dtplan__bf16_grads(const struct dtplan_plan *p);

bool dtplan__stages_account(const struct dtplan_candidate *c);
bool dtplan__stages_layout(const struct dtplan_candidate *c);
void dtplan__put_layout(FILE *f, const struct dtplan_candidate *c);
bool dtplan__stages_uneven(const struct dtplan_candidate *c);
bool dtplan__pp_inner(const struct dtplan_candidate *c);
void dtplan__put_fine_modules(FILE *f, const struct dtplan_plan *p, const char *before, char sep,
			      const char *after);
bool dtplan__blackwell(const struct dtplan_plan *p);

int dtplan__ranks_per_node(const struct dtplan_plan *p, int *nodes);

#endif /* DTPLAN_LAUNCH_LAUNCH_INT_H */
