/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_env.c: a plan as launcher environment variables (lib/launch/env.c).
 */
#include "test_common.h"

/*
 * A hand-made plan: nodes n1 and n2 with 4 GPUs each, TP 4 x PP 2 x DP 1.
 * Rank r sits on node r / 4, GPU r % 4 (= local rank = TP rank), stage
 * r / 4; NIC mlx5_<r % 4>, none for GPU 3.
 */
struct fixture {
	struct dtplan_plan plan;
	char names[2][64];
	int leaf[2];
	struct dtplan_rank ranks[8];
	struct dtplan_warning warnings[2];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->names[0], 64, "n1");
	snprintf(f->names[1], 64, "n2");
	f->plan.best.tp = 4;
	f->plan.best.pp = 2;
	f->plan.best.dp = 1;
	f->plan.best.zero = 1;
	f->plan.best.micro_batch = 2;
	f->plan.best.num_microbatches = 64;
	f->plan.best.global_batch = 128; /* dp 1 x micro-batch 2 x 64 */
	f->plan.best.stages.first = 15;
	f->plan.best.stages.last = 17;
	f->plan.best.recompute = DTPLAN_RECOMPUTE_SELECTIVE;
	/* Ranks 0..3 are stage 0 and 4..7 stage 1: the one pipeline replica is
	 * tp * pp = 8 consecutive ranks. */
	f->plan.best.rank_order = DTPLAN_ORDER_TP_PP_DP;
	f->plan.request.framework = DTPLAN_FRAMEWORK_MEGATRON;
	f->plan.ckpt.interval_seconds = 3725.9;
	f->plan.ckpt.interval_steps = 412.7;
	f->plan.n_nodes = 2;
	f->plan.node_names = f->names;
	f->plan.node_leaf = f->leaf;
	f->plan.n_ranks = 8;
	f->plan.ranks = f->ranks;
	for (int r = 0; r < 8; r++) {
		f->ranks[r].node = r / 4;
		f->ranks[r].gpu = r % 4;
		f->ranks[r].local_rank = r % 4;
		f->ranks[r].tp_rank = r % 4;
		f->ranks[r].pp_rank = r / 4;
		f->ranks[r].dp_rank = 0;
		/* the experts' coordinates as placement gives them: ETP is
		 * TP's (4), no EP, expert DP 1 */
		f->ranks[r].etp_rank = r % 4;
		f->ranks[r].edp_rank = 0;
		if (r % 4 != 3)
			snprintf(f->ranks[r].nic, sizeof(f->ranks[r].nic), "mlx5_%d", r % 4);
	}
	f->plan.warnings = f->warnings;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void master_port__job_ids__fixed_range(void **state)
{
	(void)state;
	/* 29500 + id % 1000 */
	assert_int_equal(dtplan_master_port(0), 29500);
	assert_int_equal(dtplan_master_port(1234), 29734);
	assert_int_equal(dtplan_master_port(999), 30499);
	assert_int_equal(dtplan_master_port(1000), 29500);
	assert_int_equal(dtplan_master_port(UINT32_MAX), 29500 + 295); /* 4294967295 % 1000 */
}

static void env_set__same_name__replaces(void **state)
{
	struct dtplan_env e;

	(void)state;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_set(&e, "A", "%d", 1), DTPLAN_OK);
	assert_int_equal(dtplan_env_set(&e, "B", "%s", "x"), DTPLAN_OK);
	assert_int_equal(dtplan_env_set(&e, "A", "%d", 2), DTPLAN_OK);
	assert_int_equal(e.n, 2);
	assert_string_equal(dtplan_env_get(&e, "A"), "2");
	assert_string_equal(e.vars[1].name, "B");
	assert_null(dtplan_env_get(&e, "C"));
	assert_null(dtplan_env_get(&e, NULL));
	assert_int_equal(dtplan_env_set(&e, "", "x"), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_env_set(&e, "A_NAME_LONGER_THAN_THIRTY_ONE_CHARS", "x"),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_env_set(NULL, "A", "x"), DTPLAN_ERR_INVAL);
	dtplan_env_fini(&e);
	assert_int_equal(e.n, 0);
	assert_null(e.vars);
	dtplan_env_fini(NULL);
}

static const struct {
	const char *name;
	bool owned;
} user_owned_cases[] = {
	{"NCCL_IB_HCA", true},
	{"NCCL_SOCKET_IFNAME", true},
	{"NCCL_", true},
	{"MASTER_ADDR", true},
	{"MASTER_PORT", true},
	{"RANK", true},
	{"WORLD_SIZE", true},
	{"LOCAL_RANK", true},
	{"LOCAL_WORLD_SIZE", true},
	{"SLURM_NTASKS_PER_NODE", true}, /* srun's, when it sets it */
	{"SLURM_NTASKS", false},
	{"PET_NNODES", true}, /* torchrun's options */
	{"PET_NODE_RANK", true},
	{"DT_TP", false},
	{"DT_MEGATRON_ARGS", false},
	{"DT_NODE_RANK", false},
	{"DTPLAN_FILE", false},
	{"DTPLAN_PLAN_STATE", false},
	{"NCCL", false},        /* a prefix, not the name */
	{"nccl_ib_hca", false}, /* environment names are case-sensitive */
	{"XNCCL_IB_HCA", false},
	{"RANKS", false},
	{"PET", false},
	{"GROUP_RANK", false},
	{"", false},
};

static void env_user_owned__names__launcher_and_nccl_only(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(user_owned_cases) / sizeof(user_owned_cases[0]); i++)
		if (dtplan_env_user_owned(user_owned_cases[i].name) != user_owned_cases[i].owned)
			fail_msg("'%s': expected %s", user_owned_cases[i].name,
				 user_owned_cases[i].owned ? "user-owned" : "the plan's");
	assert_false(dtplan_env_user_owned(NULL));
}

static const struct {
	const char *name;
	const char *value;
} job_ok[] = {
	{"DTPLAN_PLAN_STATE", "ok"},
	{"DTPLAN_FILE", "/home/u/dtplan-1234.json"},
	{"MASTER_ADDR", "n1"},
	{"MASTER_PORT", "29734"}, /* 29500 + 1234 % 1000 */
	{"DT_TP", "4"},
	{"DT_PP", "2"},
	/* no experts, no context parallelism: 1 each; the experts' TP is TP's */
	{"DT_EP", "1"},
	{"DT_ETP", "4"},
	{"DT_CP", "1"},
	{"DT_DP", "1"},
	{"DT_ZERO", "1"},
	{"DT_MICRO_BATCH", "2"},
	{"DT_NUM_MICROBATCHES", "64"},
	{"DT_GLOBAL_BATCH", "128"},
	{"DT_PP_LAYERS", "15,17"},
	{"DT_RECOMPUTE", "selective"},
	{"DT_PP_SCHEDULE", "1f1b"},
	{"DT_RANK_ORDER", "tp-pp-dp"},
	{"DT_CKPT_INTERVAL_S", "3725"},    /* floor(3725.9) */
	{"DT_CKPT_INTERVAL_STEPS", "412"}, /* floor(412.7) */
	{"DT_NNODES", "2"},
	{"DT_NODE_ORDER", "n1,n2"},
	/* lib/launch/launch.c's words for the same plan (test_launch.c covers them);
	 * the sequence is the default 4096 of a model that names none */
	{"DT_MEGATRON_ARGS", "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 "
			     "--micro-batch-size 2 --global-batch-size 128 --seq-length 4096 "
			     "--bf16 --sequence-parallel --use-distributed-optimizer "
			     "--recompute-granularity selective "
			     "--decoder-first-pipeline-num-layers 15 "
			     "--decoder-last-pipeline-num-layers 17 --use-tp-pp-dp-mapping "
			     "--save-interval 412"},
	{"DT_NEMO_OVERRIDES", "trainer.num_nodes=2 trainer.devices=4 "
			      "model.tensor_model_parallel_size=4 "
			      "model.pipeline_model_parallel_size=2 model.micro_batch_size=2 "
			      "model.global_batch_size=128 model.encoder_seq_length=4096 "
			      "model.sequence_parallel=true "
			      "model.activations_checkpoint_granularity=selective "
			      "model.optim.name=distributed_fused_adam "
			      "++model.num_layers_in_first_pipeline_stage=15 "
			      "++model.num_layers_in_last_pipeline_stage=17 "
			      "++model.use_tp_pp_dp_mapping=true "
			      "++exp_manager.checkpoint_callback_params.every_n_train_steps=412 "
			      "++exp_manager.checkpoint_callback_params.every_n_epochs=0"},
	/* Megatron-Bridge's ConfigContainer fields; no DT_TORCHTITAN_ARGS:
	 * torchtitan has no tp-pp-dp order */
	{"DT_MEGATRON_BRIDGE_OVERRIDES",
	 "model.tensor_model_parallel_size=4 model.pipeline_model_parallel_size=2 "
	 "model.context_parallel_size=1 model.expert_model_parallel_size=1 "
	 "model.sequence_parallel=true dataset.seq_length=4096 train.micro_batch_size=2 "
	 "train.global_batch_size=128 mixed_precision=bf16_mixed "
	 "model.virtual_pipeline_model_parallel_size=null "
	 "model.num_layers_in_first_pipeline_stage=15 model.num_layers_in_last_pipeline_stage=17 "
	 "model.account_for_embedding_in_pipeline_split=false "
	 "model.account_for_loss_in_pipeline_split=false model.pipeline_model_parallel_layout=null "
	 "model.mtp_num_layers=null model.recompute_granularity=selective "
	 "model.recompute_method=null model.recompute_num_layers=null "
	 "ddp.grad_reduce_in_fp32=true ddp.use_distributed_optimizer=true "
	 "optimizer.use_distributed_optimizer=true "
	 "optimizer.use_precision_aware_optimizer=false optimizer.main_grads_dtype=fp32 "
	 "optimizer.exp_avg_dtype=fp32 optimizer.exp_avg_sq_dtype=fp32 "
	 "dist.use_tp_pp_dp_mapping=true "
	 "checkpoint.save_interval=412"},
	/* torchrun meets where MASTER_ADDR and MASTER_PORT say */
	{"PET_NNODES", "2"},
	{"PET_NPROC_PER_NODE", "4"},
	{"PET_RDZV_BACKEND", "static"},
	{"PET_MASTER_ADDR", "n1"},
	{"PET_MASTER_PORT", "29734"},
};

static void env_job__good_plan__every_variable(void **state)
{
	struct fixture *f = *state;
	struct dtplan_job_env_in in = {.plan = &f->plan,
				       .job_id = 1234,
				       .plan_file = "/home/u/dtplan-1234.json",
				       .nodes = (const char(*)[64])f->names + 1,
				       .n_nodes = 1};
	struct dtplan_env e;

	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	for (size_t i = 0; i < sizeof(job_ok) / sizeof(job_ok[0]); i++) {
		const char *v = dtplan_env_get(&e, job_ok[i].name);

		if (v == NULL || strcmp(v, job_ok[i].value) != 0)
			fail_msg("%s = %s, expected %s", job_ok[i].name, v ? v : "(unset)",
				 job_ok[i].value);
	}
	assert_int_equal(e.n, sizeof(job_ok) / sizeof(job_ok[0]));
	assert_null(dtplan_env_get(&e, "DTPLAN_PLAN_REASON"));
	dtplan_env_fini(&e);
}

/* DualPipe's plans say so to their launcher. */
static void env_job__dualpipe__pp_schedule(void **state)
{
	struct fixture *f = *state;
	struct dtplan_job_env_in in = {.plan = &f->plan, .job_id = 1234};
	struct dtplan_env e;

	f->plan.best.dualpipe = true;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DT_PP_SCHEDULE"), "dualpipe");
	dtplan_env_fini(&e);
}

static void env_job__launch_given__its_rendezvous_and_files(void **state)
{
	struct fixture *f = *state;
	/* The job set MASTER_ADDR=login7 and MASTER_PORT=12345 itself. */
	struct dtplan_launch_in launch = {.master_addr = "login7",
					  .master_port = 12345,
					  .hostfile = "/home/u/dtplan-1234.hosts",
					  .deepspeed_config = "/home/u/dtplan-1234.deepspeed.json"};
	struct dtplan_job_env_in in = {.plan = &f->plan, .job_id = 1234, .launch = &launch};
	struct dtplan_env e;

	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	/* The plan's own values (the host program keeps the job's) ... */
	assert_string_equal(dtplan_env_get(&e, "MASTER_ADDR"), "n1");
	assert_string_equal(dtplan_env_get(&e, "MASTER_PORT"), "29734");
	/* ... and torchrun where the job meets. */
	assert_string_equal(dtplan_env_get(&e, "PET_MASTER_ADDR"), "login7");
	assert_string_equal(dtplan_env_get(&e, "PET_MASTER_PORT"), "12345");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_HOSTFILE"), "/home/u/dtplan-1234.hosts");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_DEEPSPEED_CONFIG"),
			    "/home/u/dtplan-1234.deepspeed.json");
	assert_null(dtplan_env_get(&e, "DTPLAN_SVG"));
	dtplan_env_fini(&e);
}

static void env_job__no_plan__degraded_allocation_order(void **state)
{
	static const char alloc[2][64] = {"gpu01", "gpu02"};
	struct dtplan_job_env_in in = {.job_id = 77,
				       .nodes = alloc,
				       .n_nodes = 2,
				       .reason = "the job has no GPUs"};
	struct dtplan_env e;

	(void)state;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_STATE"), "degraded");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_REASON"), "the job has no GPUs");
	assert_string_equal(dtplan_env_get(&e, "MASTER_ADDR"), "gpu01");
	assert_string_equal(dtplan_env_get(&e, "MASTER_PORT"), "29577");
	assert_null(dtplan_env_get(&e, "DT_TP"));
	assert_null(dtplan_env_get(&e, "DTPLAN_FILE"));
	assert_string_equal(dtplan_env_get(&e, "DT_NODE_ORDER"), "gpu01,gpu02");
	assert_string_equal(dtplan_env_get(&e, "DT_NNODES"), "2");
	assert_int_equal(e.n, 6);
	dtplan_env_fini(&e);

	/* Without a reason or nodes: "no plan" and no MASTER_ADDR. */
	in.reason = NULL;
	in.nodes = NULL;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_REASON"), "no plan");
	assert_null(dtplan_env_get(&e, "MASTER_ADDR"));
	dtplan_env_fini(&e);
	assert_int_equal(dtplan_env_job(NULL, &e, NULL), DTPLAN_ERR_INVAL);
}

static void env_job__plan_without_placement__allocation_order(void **state)
{
	static const char alloc[3][64] = {"c3", "c1", "c2"};
	struct fixture *f = *state;
	struct dtplan_job_env_in in = {.plan = &f->plan, .job_id = 1, .nodes = alloc, .n_nodes = 3};
	struct dtplan_env e;

	f->plan.n_nodes = 0;
	f->plan.n_ranks = 0;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_STATE"), "ok");
	assert_string_equal(dtplan_env_get(&e, "MASTER_ADDR"), "c3");
	assert_string_equal(dtplan_env_get(&e, "DT_NODE_ORDER"), "c3,c1,c2");
	assert_string_equal(dtplan_env_get(&e, "DT_NNODES"), "3");
	assert_string_equal(dtplan_env_get(&e, "DT_TP"), "4");
	dtplan_env_fini(&e);
}

static void env_job__rank_order__the_plans(void **state)
{
	/* Megatron-LM's spelling: CP next to TP, EP the inner part of DP, each
	 * named only above 1 */
	static const struct {
		enum dtplan_rank_order o;
		int cp, ep;
		const char *name;
	} orders[] = {
		{DTPLAN_ORDER_TP_DP_PP, 1, 1, "tp-dp-pp"},
		{DTPLAN_ORDER_TP_PP_DP, 1, 1, "tp-pp-dp"},
		{DTPLAN_ORDER_TP_DP_PP, 2, 1, "tp-cp-dp-pp"},
		{DTPLAN_ORDER_TP_DP_PP, 1, 4, "tp-ep-dp-pp"},
		{DTPLAN_ORDER_TP_DP_PP, 2, 4, "tp-cp-ep-dp-pp"},
		{DTPLAN_ORDER_TP_DP_PP, 0, 0, "tp-dp-pp"}, /* 0: unused, as 1 */
		{DTPLAN_ORDER_TP_PP_DP, 4, 1, "tp-cp-pp-dp"},
		{DTPLAN_ORDER_TP_PP_DP, 1, 2, "tp-pp-ep-dp"},
		{DTPLAN_ORDER_TP_PP_DP, 2, 2, "tp-cp-pp-ep-dp"},
	};
	struct fixture *f = *state;
	struct dtplan_job_env_in in = {.plan = &f->plan, .job_id = 9};
	struct dtplan_env e;
	int cp = f->plan.best.cp, ep = f->plan.best.ep;

	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		enum dtplan_rank_order back = DTPLAN_ORDER_TP_PP_DP - orders[i].o;

		f->plan.best.rank_order = orders[i].o;
		f->plan.best.cp = orders[i].cp;
		f->plan.best.ep = orders[i].ep;
		dtplan_env_init(&e);
		assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
		assert_string_equal(dtplan_env_get(&e, "DT_RANK_ORDER"), orders[i].name);
		dtplan_env_fini(&e);
		/* and back to the order */
		assert_int_equal(dtplan_rank_order_parse(orders[i].name, &back), DTPLAN_OK);
		assert_int_equal(back, orders[i].o);
	}
	f->plan.best.cp = cp;
	f->plan.best.ep = ep;
	{
		enum dtplan_rank_order o = DTPLAN_ORDER_TP_PP_DP;

		assert_int_equal(dtplan_rank_order_parse("tp-ep-cp-dp-pp", &o), DTPLAN_ERR_PARSE);
		assert_int_equal(dtplan_rank_order_parse("", &o), DTPLAN_ERR_PARSE);
		assert_int_equal(dtplan_rank_order_parse(NULL, &o), DTPLAN_ERR_INVAL);
		assert_int_equal(o, DTPLAN_ORDER_TP_PP_DP);
	}
	/* No plan, no order. */
	in.plan = NULL;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_null(dtplan_env_get(&e, "DT_RANK_ORDER"));
	dtplan_env_fini(&e);
}

static void env_job__degraded_or_refused_plan__state_and_reason(void **state)
{
	struct fixture *f = *state;
	struct dtplan_job_env_in in = {.plan = &f->plan, .job_id = 5};
	struct dtplan_env e;

	f->plan.degraded = true;
	snprintf(f->plan.degraded_reason, sizeof(f->plan.degraded_reason), "cannot create x");
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_STATE"), "degraded");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_REASON"), "cannot create x");
	assert_string_equal(dtplan_env_get(&e, "DT_TP"), "4");
	dtplan_env_fini(&e);

	in.refused = true;
	in.reason = "oversubscribed-uplink: spine 4:1";
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_STATE"), "refused");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_PLAN_REASON"),
			    "oversubscribed-uplink: spine 4:1");
	dtplan_env_fini(&e);
}

/* The warnings' table: the two that break the site's topology rules
 * (doc/internals/placement.md, "Enforcement") refuse; the rest, and codes
 * the table lacks, do not. */
static void warning_refuses__table__topology_rules_only(void **state)
{
	static const struct {
		const char *code;
		bool refuses;
	} cases[] = {
		{"too-many-leaves", true},
		{"oversubscribed-uplink", true},
		{"ep-oversubscribed-uplink", false},
		{"ep-crosses-nvlink-domain", true},
		{"measured-oversubscription", false},
		{"pipeline-bubble", false},
		{"fabric-service", false},
		{"no-such-code", false},
		{"", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(dtplan_warning_refuses(cases[i].code), cases[i].refuses);
	assert_false(dtplan_warning_refuses(NULL));
}

static void warning_code_at__each__the_table_then_null(void **state)
{
	size_t n = 0;
	bool fabric_service = false;

	(void)state;
	for (const char *c; (c = dtplan_warning_code_at(n)) != NULL; n++) {
		assert_true(c[0] != '\0');
		fabric_service = fabric_service || strcmp(c, "fabric-service") == 0;
	}
	/* the table in lib/plan/warnings.c: 19 codes at this version */
	assert_int_equal(n, 19);
	assert_true(fabric_service);
	assert_null(dtplan_warning_code_at(n));
	assert_null(dtplan_warning_code_at((size_t)-1));
}

static void plan_refused__mode_policy_codes__table(void **state)
{
	struct fixture *f = *state;
	char reason[128];

	snprintf(f->warnings[0].code, DTPLAN_WARN_CODE_MAX, "bubble");
	snprintf(f->warnings[0].message, DTPLAN_WARN_TEXT_MAX, "bubble 30%%");
	f->plan.n_warnings = 1;
	/* No refusing warning: never refused. */
	assert_false(
		dtplan_plan_refused(&f->plan, DTPLAN_MODE_STRICT, DTPLAN_POLICY_DENY, NULL, 0));
	snprintf(f->warnings[1].code, DTPLAN_WARN_CODE_MAX, "too-many-leaves");
	snprintf(f->warnings[1].message, DTPLAN_WARN_TEXT_MAX, "3 leaves, 1 needed");
	f->plan.n_warnings = 2;
	assert_false(dtplan_plan_refused(&f->plan, DTPLAN_MODE_AUTO, DTPLAN_POLICY_WARN, reason,
					 sizeof(reason)));
	assert_false(dtplan_plan_refused(&f->plan, DTPLAN_MODE_OFF, DTPLAN_POLICY_WARN, NULL, 0));
	assert_true(dtplan_plan_refused(&f->plan, DTPLAN_MODE_STRICT, DTPLAN_POLICY_WARN, reason,
					sizeof(reason)));
	assert_string_equal(reason, "too-many-leaves: 3 leaves, 1 needed");
	assert_true(dtplan_plan_refused(&f->plan, DTPLAN_MODE_AUTO, DTPLAN_POLICY_DENY, NULL, 0));
	snprintf(f->warnings[1].code, DTPLAN_WARN_CODE_MAX, "oversubscribed-uplink");
	assert_true(dtplan_plan_refused(&f->plan, DTPLAN_MODE_AUTO, DTPLAN_POLICY_DENY, reason,
					sizeof(reason)));
	assert_false(dtplan_plan_refused(NULL, DTPLAN_MODE_STRICT, DTPLAN_POLICY_DENY, NULL, 0));
}

static void env_task__one_task_per_gpu__plan_ranks(void **state)
{
	struct fixture *f = *state;
	struct dtplan_task_env_in in = {.host = "n2",
					.local_id = 1,
					.local_count = 4,
					.step_nodes = 2};
	struct dtplan_env e;

	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_task(&f->plan, &in, &e, NULL), DTPLAN_OK);
	/* n2 is node 1: ranks 4..7; local 1 -> rank 5, stage 1, TP rank 1. */
	assert_string_equal(dtplan_env_get(&e, "RANK"), "5");
	assert_string_equal(dtplan_env_get(&e, "WORLD_SIZE"), "8");
	assert_string_equal(dtplan_env_get(&e, "LOCAL_RANK"), "1");
	assert_string_equal(dtplan_env_get(&e, "LOCAL_WORLD_SIZE"), "4");
	/* Lightning's SLURMEnvironment needs it under srun -m arbitrary -n 8 */
	assert_string_equal(dtplan_env_get(&e, "SLURM_NTASKS_PER_NODE"), "4");
	assert_string_equal(dtplan_env_get(&e, "DT_TP_RANK"), "1");
	assert_string_equal(dtplan_env_get(&e, "DT_PP_RANK"), "1");
	assert_string_equal(dtplan_env_get(&e, "DT_DP_RANK"), "0");
	assert_string_equal(dtplan_env_get(&e, "DT_EP_RANK"), "0");
	assert_string_equal(dtplan_env_get(&e, "DT_ETP_RANK"), "1");
	assert_string_equal(dtplan_env_get(&e, "DT_EDP_RANK"), "0");
	assert_string_equal(dtplan_env_get(&e, "DT_CP_RANK"), "0");
	assert_string_equal(dtplan_env_get(&e, "DT_LOCAL_GPU"), "1");
	assert_string_equal(dtplan_env_get(&e, "DT_NODE_RANK"), "1");
	assert_string_equal(dtplan_env_get(&e, "PET_NODE_RANK"), "1");
	/* No NCCL_IB_HCA unless the site asks for it (nccl_ib_hca=node). */
	assert_null(dtplan_env_get(&e, "NCCL_IB_HCA"));
	assert_int_equal(e.n, 15);
	dtplan_env_fini(&e);

	/* A dotted host name matches the plan's short one. */
	in.host = "n1.cluster.example";
	in.local_id = 3;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_task(&f->plan, &in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "RANK"), "3");
	dtplan_env_fini(&e);
}

static void env_task__nccl_ib_hca_node__every_nic_of_the_node_in_gpu_order(void **state)
{
	struct fixture *f = *state;
	struct dtplan_task_env_in in = {.host = "n1",
					.local_count = 4,
					.step_nodes = 2,
					.nccl_ib_hca = DTPLAN_NCCL_IB_HCA_NODE};
	/* n1's ranks 0..3 on GPUs 3, 2, 1, 0; GPUs 0 and 1 share mlx5_1. */
	static const struct {
		int gpu;
		const char *nic;
	} n1[4] = {{3, ""}, {2, "mlx5_0"}, {1, "mlx5_1"}, {0, "mlx5_1"}};
	static const char *const want[4] = {"0", "1", "2", "3"}; /* local rank = rank on n1 */
	struct dtplan_env e;

	for (int r = 0; r < 4; r++) {
		f->ranks[r].gpu = n1[r].gpu;
		snprintf(f->ranks[r].nic, sizeof(f->ranks[r].nic), "%s", n1[r].nic);
	}
	/* Every task of n1 gets the same list: GPU 0's NIC first, each NIC
	 * once, GPU 3 without one left out. */
	for (int t = 0; t < 4; t++) {
		in.local_id = t;
		dtplan_env_init(&e);
		assert_int_equal(dtplan_env_task(&f->plan, &in, &e, NULL), DTPLAN_OK);
		assert_string_equal(dtplan_env_get(&e, "NCCL_IB_HCA"), "=mlx5_1,mlx5_0");
		assert_string_equal(dtplan_env_get(&e, "RANK"), want[t]);
		dtplan_env_fini(&e);
	}
	/* n2 (GPUs 0..2 on mlx5_0..2, GPU 3 none), one task per node: the same
	 * node-wide list next to the node rank. */
	in.host = "n2";
	in.local_id = 0;
	in.local_count = 1;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_task(&f->plan, &in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "NCCL_IB_HCA"), "=mlx5_0,mlx5_1,mlx5_2");
	assert_string_equal(dtplan_env_get(&e, "DT_NODE_RANK"), "1");
	assert_int_equal(e.n, 4);
	dtplan_env_fini(&e);
	/* A node whose NICs the plan does not know: not set. */
	for (int r = 4; r < 8; r++)
		f->ranks[r].nic[0] = '\0';
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_task(&f->plan, &in, &e, NULL), DTPLAN_OK);
	assert_null(dtplan_env_get(&e, "NCCL_IB_HCA"));
	assert_int_equal(e.n, 3);
	dtplan_env_fini(&e);
}

static void env_task__one_task_per_node__node_rank_only(void **state)
{
	struct fixture *f = *state;
	struct dtplan_task_env_in in = {.host = "n2", .local_id = 0, .local_count = 1};
	struct dtplan_env e;

	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_task(&f->plan, &in, &e, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DT_NODE_RANK"), "1");
	assert_string_equal(dtplan_env_get(&e, "DT_NNODES"), "2");
	/* torchrun on n2: --node-rank 1 through PET_NODE_RANK */
	assert_string_equal(dtplan_env_get(&e, "PET_NODE_RANK"), "1");
	assert_null(dtplan_env_get(&e, "RANK"));
	assert_int_equal(e.n, 3);
	dtplan_env_fini(&e);
}

static const struct {
	const char *host;
	int local_id, local_count, step_nodes;
	enum dtplan_err code;
	const char *message_part;
} task_bad[] = {
	{"n9", 0, 4, 2, DTPLAN_ERR_NOT_FOUND, "node 'n9' is not in the plan"},
	{"n1", 0, 4, 3, DTPLAN_ERR_INVAL, "the step spans 3 nodes, the plan 2"},
	{"n1", 0, 2, 2, DTPLAN_ERR_INVAL, "runs 2 tasks of the step, the plan places 4"},
	{"n1", 7, 4, 2, DTPLAN_ERR_INVAL, "task 7 on node 'n1' has no rank"},
};

static void env_task__step_not_matching__error_names_why(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(task_bad) / sizeof(task_bad[0]); i++) {
		struct dtplan_task_env_in in = {.host = task_bad[i].host,
						.local_id = task_bad[i].local_id,
						.local_count = task_bad[i].local_count,
						.step_nodes = task_bad[i].step_nodes};
		struct dtplan_error err = {0};
		struct dtplan_env e;

		dtplan_env_init(&e);
		assert_int_equal(dtplan_env_task(&f->plan, &in, &e, &err), task_bad[i].code);
		if (strstr(err.text, task_bad[i].message_part) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text,
				 task_bad[i].message_part);
		assert_int_equal(e.n, 0);
		dtplan_env_fini(&e);
	}
}

static void env_task__null_or_empty_plan__inval(void **state)
{
	struct dtplan_plan empty = {0};
	struct dtplan_task_env_in in = {.host = "n1", .local_count = 1};
	struct dtplan_env e;

	(void)state;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_task(NULL, &in, &e, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_env_task(&empty, &in, &e, NULL), DTPLAN_ERR_INVAL);
	in.host = NULL;
	assert_int_equal(dtplan_env_task(&empty, &in, &e, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(e.n, 0);
}

/* Issue 13, finding 11: 8,192 nodes of 15-character names made a
 * DT_NODE_ORDER of 131,072 bytes, and every execve in the job failed. */
static void env_job__8192_long_names__order_left_in_the_plan_file(void **state)
{
	struct fixture *f = *state;
	struct dtplan_plan p = f->plan;
	struct dtplan_job_env_in in = {.plan = &p, .job_id = 7, .plan_file = "/h/dtplan-7.json"};
	struct dtplan_env e;
	char(*names)[64] = calloc(8192, sizeof(*names));

	(void)state;
	assert_non_null(names);
	for (int i = 0; i < 8192; i++)
		snprintf(names[i], sizeof(names[i]), "gpu-node-%05d", i); /* 14 + ',' */
	p.node_names = names;
	p.n_nodes = 8192;
	p.n_ranks = 0;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_null(dtplan_env_get(&e, "DT_NODE_ORDER"));
	assert_string_equal(dtplan_env_get(&e, "DT_NODE_ORDER_FILE"), "/h/dtplan-7.json");
	assert_string_equal(dtplan_env_get(&e, "DT_NNODES"), "8192");
	assert_string_equal(dtplan_env_get(&e, "MASTER_ADDR"), "gpu-node-00000");
	for (size_t i = 0; i < e.n; i++)
		assert_true(strlen(e.vars[i].value) <= DTPLAN_ENV_VALUE_MAX);
	dtplan_env_fini(&e);
	/* 2,000 such names (30,000 bytes) still fit */
	p.n_nodes = 2000;
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_job(&in, &e, NULL), DTPLAN_OK);
	assert_int_equal(strlen(dtplan_env_get(&e, "DT_NODE_ORDER")), 2000 * 15 - 1);
	assert_null(dtplan_env_get(&e, "DT_NODE_ORDER_FILE"));
	dtplan_env_fini(&e);
	/* the bound itself */
	dtplan_env_init(&e);
	assert_int_equal(dtplan_env_set(&e, "X", "%*s", DTPLAN_ENV_VALUE_MAX, ""), DTPLAN_OK);
	assert_int_equal(dtplan_env_set(&e, "Y", "%*s", DTPLAN_ENV_VALUE_MAX + 1, ""),
			 DTPLAN_ERR_RANGE);
	assert_null(dtplan_env_get(&e, "Y"));
	dtplan_env_fini(&e);
	free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(master_port__job_ids__fixed_range),
		cmocka_unit_test(env_set__same_name__replaces),
		cmocka_unit_test(env_user_owned__names__launcher_and_nccl_only),
		cmocka_unit_test_setup_teardown(env_job__good_plan__every_variable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(env_job__dualpipe__pp_schedule, setup, teardown),
		cmocka_unit_test_setup_teardown(env_job__launch_given__its_rendezvous_and_files,
						setup, teardown),
		cmocka_unit_test(env_job__no_plan__degraded_allocation_order),
		cmocka_unit_test_setup_teardown(env_job__plan_without_placement__allocation_order,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			env_job__8192_long_names__order_left_in_the_plan_file, setup, teardown),
		cmocka_unit_test_setup_teardown(env_job__rank_order__the_plans, setup, teardown),
		cmocka_unit_test_setup_teardown(env_job__degraded_or_refused_plan__state_and_reason,
						setup, teardown),
		cmocka_unit_test(warning_refuses__table__topology_rules_only),
		cmocka_unit_test(warning_code_at__each__the_table_then_null),
		cmocka_unit_test_setup_teardown(plan_refused__mode_policy_codes__table, setup,
						teardown),
		cmocka_unit_test_setup_teardown(env_task__one_task_per_gpu__plan_ranks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(env_task__one_task_per_node__node_rank_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			env_task__nccl_ib_hca_node__every_nic_of_the_node_in_gpu_order, setup,
			teardown),
		cmocka_unit_test_setup_teardown(env_task__step_not_matching__error_names_why, setup,
						teardown),
		cmocka_unit_test(env_task__null_or_empty_plan__inval),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
