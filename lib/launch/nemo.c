/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nemo.c: the plan as NeMo 1.x overrides.
 *
 *   NeMo, examples/nlp/language_modeling/conf/megatron_gpt_config.yaml:
 *   trainer.num_nodes, trainer.devices, model.tensor_model_parallel_size,
 *   model.pipeline_model_parallel_size, model.micro_batch_size,
 *   model.global_batch_size, model.encoder_seq_length, model.sequence_parallel,
 *   model.virtual_pipeline_model_parallel_size (interleaved chunks per stage),
 *   model.expert_model_parallel_size (EP > 1), ++model.context_parallel_size
 *   (CP > 1: the YAML lacks the key and Hydra refuses it without "++"),
 *   model.activations_checkpoint_granularity/_method/_num_layers and
 *   model.optim.name (distributed_fused_adam is the distributed optimizer:
 *   megatron_base_model.py's with_distributed_adam).  megatron_base_model.py
 *   also reads cfg.get('use_tp_pp_dp_mapping') and cfg.get('fsdp'), and
 *   copies every Megatron Core TransformerConfig field found in the model
 *   config (num_layers_in_first_pipeline_stage, ..._last_...,
 *   account_for_embedding/loss_in_pipeline_split, which NeMo 2's Llama 3.1
 *   405B recipe sets: nemo/collections/llm/recipes/llama31_405b.py); keys the YAML
 *   lacks take Hydra's "++" (add or override).  nemo/utils/exp_manager.py's
 *   CallbackParams (exp_manager.checkpoint_callback_params, handed to
 *   Lightning's ModelCheckpoint) has every_n_train_steps, the interval in
 *   steps, and every_n_epochs, 1 by default: ModelCheckpoint's
 *   __validate_init_configuration() (lightning/pytorch/callbacks/
 *   model_checkpoint.py, 7f0c343) refuses both >= 1, so every_n_epochs=0.
 *   Read at NeMo 8cfedd7, the last of NeMo 1.x's LLM path (legacy; NeMo 2
 *   runs Megatron-Bridge).
 *
 *   The experts' TP: megatron_base_model.py copies
 *   model.expert_tensor_parallel_size into ModelParallelConfig, but neither
 *   initialize_model_parallel_for_nemo() (megatron_init.py, whose
 *   fake_initialize_model_parallel() then takes ETP = TP) nor
 *   NLPDDPStrategy.init_model_parallel() (nlp_overrides.py, which calls
 *   Megatron Core's initialize_model_parallel() without
 *   expert_tensor_parallel_size, so TP's) passes it to the process groups:
 *   the layers would be cut for one ETP and the groups formed for another.
 *   A plan whose experts' TP is not TP's is refused (DTPLAN_ERR_UNSUPPORTED).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "launch/launch_int.h"

#include <stdio.h>

enum dtplan_err dtplan_launch_nemo_overrides(const struct dtplan_plan *p, char **out,
					     struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	enum dtplan_err rv;
	struct dtplan__stream t;
	int nodes, per;

	rv = dtplan__check_plan(p, out, err);
	if (rv != DTPLAN_OK)
		return rv;
	c = &p->best;
	if (c->etp > 0 && c->etp != c->tp)
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, "etp", 0,
				     "NeMo 1.x forms its expert groups at TP's size (%d): the "
				     "experts' TP %d needs Megatron-LM or Megatron-Bridge",
				     c->tp, c->etp);
	if ((rv = dtplan__stream_open(&t, err)) != DTPLAN_OK)
		return rv;
	per = dtplan__ranks_per_node(p, &nodes);
	fprintf(t.f,
		"trainer.num_nodes=%d trainer.devices=%d model.tensor_model_parallel_size=%d "
		"model.pipeline_model_parallel_size=%d model.micro_batch_size=%d "
		"model.global_batch_size=%ld model.encoder_seq_length=%d "
		"model.sequence_parallel=%s",
		nodes, per, c->tp, c->pp, c->micro_batch, dtplan__plan_global_batch(c),
		dtplan__plan_seq(p), c->tp > 1 ? "true" : "false");
	if (c->recompute == DTPLAN_RECOMPUTE_SELECTIVE)
		fputs(" model.activations_checkpoint_granularity=selective", t.f);
	else if (c->recompute == DTPLAN_RECOMPUTE_FINE)
		dtplan__put_fine_modules(t.f, p,
					 " model.activations_checkpoint_granularity=selective "
					 "++model.recompute_modules=[",
					 ',', "]");
	else if (c->recompute == DTPLAN_RECOMPUTE_FULL)
		fputs(" model.activations_checkpoint_granularity=full "
		      "model.activations_checkpoint_method=uniform "
		      "model.activations_checkpoint_num_layers=1",
		      t.f);
	if (c->zero == 1 || c->zero == 2)
		fputs(" model.optim.name=distributed_fused_adam", t.f);
	else if (c->zero == 3)
		fputs(" ++model.fsdp=true", t.f);
	if (dtplan__stages_uneven(c))
		fprintf(t.f,
			" ++model.num_layers_in_first_pipeline_stage=%d "
			"++model.num_layers_in_last_pipeline_stage=%d",
			c->stages.first, c->stages.last);
	if (dtplan__stages_account(c))
		fputs(" ++model.account_for_embedding_in_pipeline_split=true "
		      "++model.account_for_loss_in_pipeline_split=true",
		      t.f);
	if (dtplan__stages_layout(c)) {
		fputs(" ++model.pipeline_model_parallel_layout=", t.f);
		dtplan__put_layout(t.f, c);
	}
	if (c->vp > 1)
		fprintf(t.f, " model.virtual_pipeline_model_parallel_size=%d", c->vp);
	if (c->ep > 1)
		fprintf(t.f, " model.expert_model_parallel_size=%d", c->ep);
	if (c->cp > 1)
		fprintf(t.f, " ++model.context_parallel_size=%d", c->cp);
	if (dtplan__pp_inner(c))
		fputs(" ++model.use_tp_pp_dp_mapping=true", t.f);
	if (dtplan__ckpt_steps(p) > 0)
		fprintf(t.f,
			" ++exp_manager.checkpoint_callback_params.every_n_train_steps=%ld "
			"++exp_manager.checkpoint_callback_params.every_n_epochs=0",
			dtplan__ckpt_steps(p));
	return dtplan__stream_finish(&t, out, err);
}
