/*
 * model/model.h: a model's parameters by where a pipeline holds them.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by lib/ files of this area and of the areas above it
 * (tests/check_layers.sh checks).
 */
#ifndef DTPLAN_MODEL_MODEL_H
#define DTPLAN_MODEL_MODEL_H

#include "dtplan.h"
#include "base/base.h"

/*
 * A model's parameters by where a pipeline holds them (lib/model/model.c):
 * per_layer = (params - embedding - untied output layer) / layers, embedding
 * V h on stage 0, head V h on the last stage when pp > 1 (a copy of the
 * embedding when tied), head_flops_params V h the output layer's matrix.
 * Without a vocabulary (or when the embeddings would exceed params) all is
 * per_layer and the rest is 0.
 */
struct dtplan__model_parts {
	double per_layer;
	double active_per_layer; /* what one token passes through (== per_layer when dense) */
	double embedding;
	double head;
	double head_flops_params;
};

void dtplan__model_parts(const struct dtplan_model *m, struct dtplan__model_parts *out);

/* Parameters of the attention's projections of one layer (GQA or MLA). */
double dtplan__model_attn_params(const struct dtplan_model *m);

/* MoE layers among layers [first, first + n) (O(1)). */
int dtplan__model_moe_in(const struct dtplan_model *m, int first, int n);

/* Whether layer i (0-based) is an MoE layer. */
bool dtplan__model_is_moe_layer(const struct dtplan_model *m, int i);

/*
 * Parameters of layers [first, first + n): *expert the routed experts' (EP
 * divides them), *dense the rest (attention, norms, dense MLPs, shared
 * experts, routers).  A model given by its size: n per_layer, no experts.
 */
void dtplan__model_layer_range(const struct dtplan_model *m, int first, int n, double *dense,
			       double *expert);

#endif /* DTPLAN_MODEL_MODEL_H */
