/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * launch.c: the plan in the words of the frameworks that run it: the one
 * dispatcher over the hand-offs of lib/launch/ (megatron.c, nemo.c,
 * megatron_bridge.c, torchtitan.c, deepspeed.c, torchrun.c, over
 * launch_int.h): the variables a job gets and the launch hint.
 * lib/launch/env.c, lib/json/plan_json.c and the plugin take the
 * frameworks' words from lib/launch/, and doc/launchers.md shows the launch
 * lines.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "launch/launch_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets name to a string the caller made and frees it; NOMEM when text is NULL. */
static enum dtplan_err set_take(struct dtplan_env *e, const char *name, char *text)
{
	enum dtplan_err rv = text != NULL ? dtplan_env_set(e, name, "%s", text) : DTPLAN_ERR_NOMEM;

	free(text);
	return rv;
}

void dtplan_launch_in_init(struct dtplan_launch_in *l, const struct dtplan_plan *p, uint32_t job_id,
			   const char *job_addr, const char *job_port)
{
	long port = 0;

	memset(l, 0, sizeof(*l));
	if (job_addr != NULL && job_addr[0] != '\0')
		l->master_addr = job_addr;
	else if (p != NULL && p->n_nodes > 0)
		l->master_addr = p->node_names[0];
	if (job_port != NULL && job_port[0] != '\0' &&
	    dtplan_parse_long(job_port, "MASTER_PORT", 1, 65535, &port, NULL) == DTPLAN_OK)
		l->master_port = (int)port;
	else if (job_id != 0)
		l->master_port = dtplan_master_port(job_id);
}

enum dtplan_err dtplan_launch_env(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				  struct dtplan_env *e, struct dtplan_error *err)
{
	enum dtplan_err ret = DTPLAN_OK;
	char *megatron = NULL, *nemo = NULL, *titan = NULL, *bridge = NULL;
	int nnodes, per;

	if (e == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no environment given");
	ret = dtplan_launch_megatron_args(p, &megatron, err);
	if (ret != DTPLAN_OK)
		return ret;
	ret |= set_take(e, "DT_MEGATRON_ARGS", megatron);
	/* only where the framework can say the plan */
	if (dtplan_launch_nemo_overrides(p, &nemo, NULL) == DTPLAN_OK)
		ret |= set_take(e, "DT_NEMO_OVERRIDES", nemo);
	if (dtplan_launch_torchtitan_args(p, &titan, NULL) == DTPLAN_OK)
		ret |= set_take(e, "DT_TORCHTITAN_ARGS", titan);
	if (dtplan_launch_megatron_bridge_overrides(p, &bridge, NULL) == DTPLAN_OK)
		ret |= set_take(e, "DT_MEGATRON_BRIDGE_OVERRIDES", bridge);
	if (dtplan_launch_torchrun(p, &nnodes, &per)) {
		ret |= dtplan_env_set(e, "PET_NNODES", "%d", nnodes);
		ret |= dtplan_env_set(e, "PET_NPROC_PER_NODE", "%d", per);
		ret |= dtplan_env_set(e, "PET_RDZV_BACKEND", "static");
		if (l != NULL && l->master_addr != NULL && l->master_addr[0] != '\0')
			ret |= dtplan_env_set(e, "PET_MASTER_ADDR", "%s", l->master_addr);
		if (l != NULL && l->master_port > 0)
			ret |= dtplan_env_set(e, "PET_MASTER_PORT", "%d", l->master_port);
	}
	if (l != NULL && l->hostfile != NULL)
		ret |= dtplan_env_set(e, "DTPLAN_HOSTFILE", "%s", l->hostfile);
	if (l != NULL && l->deepspeed_config != NULL)
		ret |= dtplan_env_set(e, "DTPLAN_DEEPSPEED_CONFIG", "%s", l->deepspeed_config);
	if (l != NULL && l->svg != NULL)
		ret |= dtplan_env_set(e, "DTPLAN_SVG", "%s", l->svg);
	/* Names are valid constants: every failure above is out of memory. */
	if (ret != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	return DTPLAN_OK;
}

enum dtplan_err dtplan_launch_hint(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				   char **out, struct dtplan_error *err)
{
	enum dtplan_err rv;
	struct dtplan__stream t;

	rv = dtplan__check_plan(p, out, err);
	if (rv != DTPLAN_OK || (rv = dtplan__stream_open(&t, err)) != DTPLAN_OK)
		return rv;
	fputs("launch: ", t.f);
	if (l != NULL && l->hostfile != NULL)
		fprintf(t.f,
			"SLURM_HOSTFILE=$DTPLAN_HOSTFILE srun -m arbitrary -n %zu PROGRAM "
			"makes SLURM_PROCID the plan's rank",
			p->n_ranks);
	else if (p->n_ranks > 0)
		fprintf(t.f, "srun -n %zu PROGRAM gets RANK in plan order", p->n_ranks);
	else
		fputs("srun PROGRAM", t.f);
	fputs("; Megatron-LM: PROGRAM $DT_MEGATRON_ARGS; NeMo: PROGRAM $DT_NEMO_OVERRIDES", t.f);
	if (l != NULL && l->deepspeed_config != NULL)
		fputs("; DeepSpeed: --deepspeed_config $DTPLAN_DEEPSPEED_CONFIG", t.f);
	else
		fputs("; DeepSpeed: the plan JSON's launch.deepspeed", t.f);
	if (dtplan_launch_torchrun(p, NULL, NULL))
		fputs("; torchrun: srun --ntasks-per-node=1 torchrun PROGRAM (PET_* set)", t.f);
	else if (p->n_ranks > 0)
		fputs("; torchrun: nodes hold unequal runs of ranks, launch one task per GPU", t.f);
	fputs(" (doc/launchers.md)", t.f);
	return dtplan__stream_finish(&t, out, err);
}
