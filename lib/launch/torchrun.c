/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * torchrun.c: the plan for torchrun and a hostfile: the nodes, the ranks per
 * node, the rendezvous port, a hostfile in rank order.
 *
 *   torchrun, torch/distributed/run.py: every option declared with
 *   action=env falls back to the variable PET_<DEST> (argparse_util.py):
 *   PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_RDZV_BACKEND,
 *   PET_MASTER_ADDR, PET_MASTER_PORT.  The static rendezvous numbers ranks
 *   node rank x nproc_per_node + local rank.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "launch/launch_int.h"

#include <stdio.h>

int dtplan_master_port(uint32_t job_id)
{
	return DTPLAN_MASTER_PORT_BASE + (int)(job_id % DTPLAN_MASTER_PORT_SPAN);
}

/* Ranks per node: torchrun's count when the plan has one, else the request's. */
int dtplan__ranks_per_node(const struct dtplan_plan *p, int *nodes)
{
	int nn = 0, per = 0;

	if (dtplan_launch_torchrun(p, &nn, &per)) {
		*nodes = nn;
		return per;
	}
	per = p->request.gpus_per_node > 0 ? p->request.gpus_per_node : 1;
	*nodes = p->n_nodes > 0 ? (int)p->n_nodes
				: (p->request.gpus > 0 ? (p->request.gpus + per - 1) / per : 1);
	return per;
}

enum dtplan_err dtplan_launch_hostfile(const struct dtplan_plan *p, char **out,
				       struct dtplan_error *err)
{
	enum dtplan_err rv;
	struct dtplan__stream t;

	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or output pointer");
	if (p->n_ranks == 0 || p->n_nodes == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "the plan places no ranks");
	for (size_t r = 0; r < p->n_ranks; r++)
		if (p->ranks[r].node < 0 || (size_t)p->ranks[r].node >= p->n_nodes)
			return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
					     "rank %zu is on node %d of a plan of %zu nodes", r,
					     p->ranks[r].node, p->n_nodes);
	rv = dtplan__stream_open(&t, err);
	if (rv != DTPLAN_OK)
		return rv;
	for (size_t r = 0; r < p->n_ranks; r++)
		fprintf(t.f, "%s\n", p->node_names[p->ranks[r].node]);
	return dtplan__stream_finish(&t, out, err);
}

bool dtplan_launch_torchrun(const struct dtplan_plan *p, int *nnodes, int *nproc_per_node)
{
	size_t per;

	if (nnodes != NULL)
		*nnodes = 0;
	if (nproc_per_node != NULL)
		*nproc_per_node = 0;
	if (p == NULL || p->n_nodes == 0 || p->n_ranks == 0 || p->n_ranks % p->n_nodes != 0)
		return false;
	per = p->n_ranks / p->n_nodes;
	for (size_t r = 0; r < p->n_ranks; r++)
		if (p->ranks[r].node != (int)(r / per) || p->ranks[r].local_rank != (int)(r % per))
			return false;
	if (nnodes != NULL)
		*nnodes = (int)p->n_nodes;
	if (nproc_per_node != NULL)
		*nproc_per_node = (int)per;
	return true;
}
