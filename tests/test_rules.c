/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_rules.c: the training rules (lib/model/rules.c), and that the
 * request's checks, the ledger and the search's enumeration ask them alike.
 *
 * The model facts are the presets': llama3-70b has 64 attention heads and
 * 8 key/value heads in 80 layers, dense (Llama 3 paper, table 3);
 * mixtral-8x7b 32 layers and 8 experts (Mixtral paper, section 2).
 */
#include "test_common.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"
#include "plan/plan.h"

static struct dtplan_model llama70, mixtral;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(dtplan_model_parse("llama3-70b", &llama70, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_model_parse("mixtral-8x7b", &mixtral, NULL), DTPLAN_OK);
	return 0;
}

/*
 * The experts' layouts: Megatron-Core folds ETP x EP over TP x CP x DP
 * (expert DP = world / (etp ep pp), initialize_model_parallel(),
 * megatron/core/parallel_state.py, d98e8a6); torchtitan's EP takes TP
 * ranks with its experts whole (ETP 1, its sparse mesh pp, dp_replicate,
 * efsdp, ep, torchtitan/distributed/parallel_dims.py, b5bcd76); DeepSpeed
 * shards them by TP and carves EP from DP.  mixtral-8x7b: 8 experts of
 * width 14336.
 */
static void split_check__expert_layouts__key_and_reason(void **state)
{
	static const struct {
		const char *what;
		int framework, tp, dp, cp, ep, etp;
		const char *source, *text; /* NULL: allowed */
	} cases[] = {
		{"torchtitan EP with TP's ETP", 2, 2, 8, 0, 2, 2, "etp",
		 "ETP 2 with EP 2: torchtitan's EP takes TP ranks"},
		{"torchtitan EP with TP, ETP 1", 2, 2, 8, 0, 2, 1, NULL, NULL},
		{"torchtitan EP 8 over TP 2 x DP 4, ETP 1", 2, 2, 4, 0, 8, 1, NULL, NULL},
		{"torchtitan ETP 1 without EP", 2, 2, 8, 0, 1, 1, "etp",
		 "ETP 1 with TP 2: torchtitan shards its experts by TP without EP"},
		{"folded EP 8 of TP 2 x DP 4, ETP 1", 1, 2, 4, 0, 8, 1, NULL, NULL},
		{"folded EP 8 of TP 2 x CP 2 x DP 2, ETP 1", 1, 2, 2, 2, 8, 1, NULL, NULL},
		{"folded ETP 2 x EP 8 of TP 2 x DP 4", 1, 2, 4, 0, 8, 2, "ep",
		 "ETP 2 x EP 8 does not divide TP x CP x DP 8"},
		{"ETP 4 above TP 2", 1, 2, 4, 0, 2, 4, NULL, NULL},
		{"DeepSpeed ETP 1 with TP 2", 0, 2, 4, 0, 2, 1, "etp",
		 "ETP 1 with TP 2: DeepSpeed shards its experts by TP"},
		{"DeepSpeed EP 8 of TP 2 x DP 4", 0, 2, 4, 0, 8, 2, "ep",
		 "EP 8 does not divide CP x DP 4 (DeepSpeed carves EP from them"},
		{"ETP 3 of the expert width 14336", 1, 0, 0, 0, 0, 3, "etp",
		 "ETP 3 does not divide the expert FFN width 14336"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan__split s;
		struct dtplan_error err = {0};
		enum dtplan_err rv;

		dtplan__split_init(&s, &mixtral);
		s.framework = (enum dtplan_framework)cases[i].framework;
		s.tp = cases[i].tp;
		s.dp = cases[i].dp;
		s.cp = cases[i].cp;
		s.ep = cases[i].ep;
		s.etp = cases[i].etp;
		rv = dtplan__split_check(&s, DTPLAN__RULES_ALL, &err);
		if (cases[i].text == NULL) {
			if (rv != DTPLAN_OK)
				fail_msg("%s: refused: %s", cases[i].what, err.text);
			continue;
		}
		if (rv != DTPLAN_ERR_INVAL || strcmp(err.source, cases[i].source) != 0 ||
		    strncmp(err.text, cases[i].text, strlen(cases[i].text)) != 0)
			fail_msg("%s: got %d [%s] %s", cases[i].what, rv, err.source, err.text);
	}
}

/*
 * Experts with linear biases (a GELU MoE: dtplan's GELU MLPs have biases,
 * lib/model/model.c): Megatron-Core's TransformerConfig refuses them unless
 * the experts' TP is 1 ("Bias in Moe is only supported when ETP==1",
 * transformer_config.py, d98e8a6); DeepSpeed shards biased experts by TP.
 */
static void split_check__biased_experts__megatron_etp_1(void **state)
{
	struct dtplan_model gelu = mixtral;
	struct dtplan__split s;
	struct dtplan_error err = {0};

	(void)state;
	gelu.mlp = DTPLAN_MLP_GELU;
	snprintf(gelu.name, sizeof(gelu.name), "gelu-moe");
	dtplan__split_init(&s, &gelu);
	s.framework = DTPLAN_FRAMEWORK_MEGATRON;
	s.tp = 2;
	s.dp = 4;
	s.ep = 8;
	s.etp = 1;
	assert_int_equal(dtplan__split_check(&s, DTPLAN__RULES_ALL, &err), DTPLAN_OK);
	s.ep = 4;
	s.etp = 2;
	assert_int_equal(dtplan__split_check(&s, DTPLAN__RULES_ALL, &err), DTPLAN_ERR_INVAL);
	assert_string_equal(err.source, "etp");
	assert_string_equal(err.text, "ETP 2: gelu-moe's experts have linear biases, which "
				      "Megatron-LM keeps only with the experts' TP 1 (etp=1)");
	/* SwiGLU experts have none */
	s.model = &mixtral;
	assert_int_equal(dtplan__split_check(&s, DTPLAN__RULES_ALL, &err), DTPLAN_OK);
	/* DeepSpeed shards them by TP: its own layout, allowed */
	s.model = &gelu;
	s.framework = DTPLAN_FRAMEWORK_DEEPSPEED;
	s.ep = 2;
	assert_int_equal(dtplan__split_check(&s, DTPLAN__RULES_ALL, &err), DTPLAN_OK);
}

/* One split, one broken rule: the key and the start of the reason. */
static void split_check__each_rule__key_and_reason(void **state)
{
	static const struct {
		const char *what;
		bool moe;
		int framework, attention, schedule, moments;
		int gpus, tp, pp, dp, cp, ep, vp, zero, offload, recompute;
		const char *source, *text; /* NULL: allowed */
	} cases[] = {
		{"TP 8 divides 64 and 8 heads", 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, -1, -1, -1,
		 NULL, NULL},
		{"TP 16 does not divide 8 kv heads", 0, 0, 1, 0, 0, 0, 16, 0, 0, 0, 0, 0, -1, -1,
		 -1, "tp", "TP 16 does not divide the 64 attention heads and 8 key/value heads"},
		{"PP 81 over 80 layers", 0, 0, 1, 0, 0, 0, 0, 81, 0, 0, 0, 0, -1, -1, -1, "pp",
		 "PP 81 is more stages than the 80 layers"},
		{"EP on a dense model", 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, -1, -1, -1, "ep",
		 "EP 2 needs a model with experts"},
		{"EP 3 of 8 experts", 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, -1, -1, -1, "ep",
		 "EP 3 does not divide the 8 experts"},
		{"ZeRO-3 with PP 2", 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, -1, -1, "zero",
		 "ZeRO-3 needs PP 1"},
		{"interleaving with PP 1", 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 2, -1, -1, -1, "vp",
		 "2 interleaved stages need pipeline parallelism"},
		/* chunks of whole layers (TransformerConfig.__post_init__,
		 * megatron/core/transformer/transformer_config.py, d98e8a6):
		 * 80 = 4 x 4 x 5; neither 80 nor 80 + 2 in 4 stages of 6, nor
		 * 23 chunks of 4 and a last (92 > 80) */
		{"vp 5 on PP 4 of 80 layers", 0, 1, 1, 0, 0, 0, 0, 4, 0, 0, 0, 5, -1, -1, -1, NULL,
		 NULL},
		{"vp 6 on PP 4 of 80 layers", 0, 1, 1, 0, 0, 0, 0, 4, 0, 0, 0, 6, -1, -1, -1, "vp",
		 "vp=6 with PP 4: interleaving cuts every stage into 6 chunks of whole layers"},
		/* Megatron-FSDP (--use-megatron-fsdp, validate_args(),
		 * megatron/training/arguments.py, d98e8a6: no PP assertion) and
		 * --optimizer-cpu-offload */
		{"Megatron-LM ZeRO-2 with PP", 0, 1, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2, -1, -1, NULL,
		 NULL},
		{"Megatron-LM ZeRO-3 with PP", 0, 1, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 3, -1, -1, NULL,
		 NULL},
		{"Megatron-LM offload", 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, -1, NULL, NULL},
		/* torchtitan: FSDP2 with any PP, no ZeRO-1, FSDP over CP, EP
		 * borrowing TP (torchtitan/distributed/parallel_dims.py, b5bcd76) */
		{"torchtitan ZeRO-3 with PP", 0, 2, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 3, -1, -1, NULL,
		 NULL},
		{"torchtitan ZeRO-1", 0, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1, -1, "zero",
		 "torchtitan has no ZeRO-1"},
		{"torchtitan offload", 0, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 3, 1, -1, "zero",
		 "offload=yes: torchtitan's CPU offload moves parameters"},
		{"torchtitan CP without FSDP", 0, 2, 1, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, -1, -1,
		 "zero", "CP 2 with ZeRO-0: torchtitan always shards with FSDP over CP"},
		{"torchtitan DualPipe", 0, 2, 1, 1, 0, 0, 0, 4, 0, 0, 0, 0, 3, -1, -1, "schedule",
		 "schedule=dualpipe: torchtitan has no DualPipe"},
		/* DeepSpeed: "MoE not supported with Stage 3" */
		{"DeepSpeed ZeRO-3 with experts", 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 3, -1, -1,
		 "zero", "ZeRO-3 with the experts of mixtral-8x7b: DeepSpeed refuses"},
		{"Megatron-LM ZeRO-3 with experts", 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 3, -1, -1,
		 NULL, NULL},
		{"DualPipe with PP 3", 0, 1, 1, 1, 0, 0, 0, 3, 0, 0, 0, 0, -1, -1, -1, "schedule",
		 "DualPipe runs an even PP without interleaving"},
		{"DualPipe with PP 4", 0, 1, 1, 1, 0, 0, 0, 4, 0, 0, 0, 0, -1, -1, -1, NULL, NULL},
		{"fine recomputation, DeepSpeed", 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1,
		 DTPLAN_RECOMPUTE_FINE, "recompute", "recompute=fine is Megatron-Core's"},
		{"bf16 moments, DeepSpeed", 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1,
		 "moments", "moments=bf16 is Megatron-Core's precision-aware optimizer"},
		{"offload with ZeRO-0", 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, -1, "zero",
		 "ZeRO-Offload runs with ZeRO-1, 2 or 3, not ZeRO-0"},
		{"CP with unfused attention", 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, -1, -1, -1, "cp",
		 "CP 2 needs flash attention"},
		{"EP 8 of DP 4", 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 8, 0, -1, -1, -1, "ep",
		 "EP 8 does not divide CP x DP 4"},
		/* Megatron-LM's expert DP is world / (tp ep pp): EP over CP x DP */
		{"EP 8 of CP 2 x DP 4", 1, 0, 1, 0, 0, 0, 0, 0, 4, 2, 8, 0, -1, -1, -1, NULL, NULL},
		{"TP 8 of 12 GPUs", 0, 0, 1, 0, 0, 12, 8, 0, 0, 0, 0, 0, -1, -1, -1, "tp",
		 "TP 8 does not divide 12 GPUs"},
		{"TP 4 x PP 4 of 24 GPUs", 0, 0, 1, 0, 0, 24, 4, 4, 0, 0, 0, 0, -1, -1, -1, "pp",
		 "TP 4 x PP 4 does not divide 24 GPUs"},
		{"TP 2 x CP 4 of 12 GPUs", 0, 0, 1, 0, 0, 12, 2, 0, 0, 4, 0, 0, -1, -1, -1, "cp",
		 "TP 2 x CP 4 does not divide 12 GPUs"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan__split s;
		struct dtplan_error err = {0};
		enum dtplan_err rv;

		dtplan__split_init(&s, cases[i].moe ? &mixtral : &llama70);
		s.framework = (enum dtplan_framework)cases[i].framework;
		s.attention = (enum dtplan_attention)cases[i].attention;
		s.schedule = (enum dtplan_schedule)cases[i].schedule;
		s.moments = (enum dtplan_moments)cases[i].moments;
		s.gpus = cases[i].gpus;
		s.tp = cases[i].tp;
		s.pp = cases[i].pp;
		s.dp = cases[i].dp;
		s.cp = cases[i].cp;
		s.ep = cases[i].ep;
		s.vp = cases[i].vp;
		s.zero = cases[i].zero;
		s.offload = cases[i].offload;
		s.recompute = cases[i].recompute;
		rv = dtplan__split_check(&s, DTPLAN__RULES_ALL, &err);
		if (cases[i].text == NULL) {
			if (rv != DTPLAN_OK)
				fail_msg("%s: refused: %s", cases[i].what, err.text);
			continue;
		}
		if (rv != DTPLAN_ERR_INVAL || strcmp(err.source, cases[i].source) != 0 ||
		    strncmp(err.text, cases[i].text, strlen(cases[i].text)) != 0)
			fail_msg("%s: got %d [%s] %s", cases[i].what, rv, err.source, err.text);
		/* without err, the same verdict and nothing formatted */
		assert_int_equal(dtplan__split_check(&s, DTPLAN__RULES_ALL, NULL),
				 DTPLAN_ERR_INVAL);
		/* a rule asked for by no one is not checked */
		assert_int_equal(dtplan__split_check(&s, 0, NULL), DTPLAN_OK);
	}
}

/*
 * How interleaving cuts the layers (dtplan__vp_split_of()): in units of vp
 * layers when vp divides them, else Megatron-LM's account-for-embedding/
 * loss split, L + 2 in pp equal stages of whole chunks (Llama 3.1 405B's 126
 * layers: 128 = 8 x 16 = 16 x 8, what Megatron-Bridge's recipes run at PP 8
 * with vp=8 and PP 16 with vp=4 and 8), else a pipeline layout of pp x vp
 * chunks of ceil(L / (pp vp)) layers and a shorter last (DeepSeek-V3's 61
 * on PP 4 with vp=4 and PP 8 with vp=2: 15 chunks of 4 and one of 1, as
 * _get_deepseek_v3_pipeline_layout(), src/megatron/bridge/recipes/
 * deepseek/h100/deepseek_v3.py, 067f987, lays them out), else none.
 */
static void vp_split_of__units_account_layout_none(void **state)
{
	(void)state;
	assert_int_equal(dtplan__vp_split_of(80, 4, 5), DTPLAN__VP_UNITS);
	assert_int_equal(dtplan__vp_split_of(80, 4, 1), DTPLAN__VP_UNITS);
	assert_int_equal(dtplan__vp_split_of(126, 8, 8), DTPLAN__VP_ACCOUNT);
	assert_int_equal(dtplan__vp_split_of(126, 16, 4), DTPLAN__VP_ACCOUNT);
	assert_int_equal(dtplan__vp_split_of(126, 16, 8), DTPLAN__VP_ACCOUNT);
	assert_int_equal(dtplan__vp_split_of(126, 8, 3), DTPLAN__VP_UNITS);
	/* 61 is prime and 63 no multiple of 4 or 8: 15 x 4 + 1 */
	assert_int_equal(dtplan__vp_split_of(61, 4, 4), DTPLAN__VP_LAYOUT);
	assert_int_equal(dtplan__vp_split_of(61, 8, 2), DTPLAN__VP_LAYOUT);
	/* 80 over 12 chunks: 11 x 7 + 3 */
	assert_int_equal(dtplan__vp_split_of(80, 4, 3), DTPLAN__VP_LAYOUT);
	/* 126 / 5 and 128 / 8 / 5 are not whole, and 39 chunks of 4 are
	 * already 156 layers; nor 128 / 8 / 32, 255 chunks of 1 */
	assert_int_equal(dtplan__vp_split_of(126, 8, 5), DTPLAN__VP_NONE);
	assert_int_equal(dtplan__vp_split_of(126, 8, 32), DTPLAN__VP_NONE);
	assert_int_equal(dtplan__vp_split_of(80, 4, 6), DTPLAN__VP_NONE);
	/* 2 stages have no middle to be one layer longer than the ends, but
	 * a layout: 7 chunks of 16 and a last of 14; Megatron-Bridge's GB300
	 * DeepSeek-V3 recipe, PP 2 x vp 8, "Et*4|(t*4|)*14tmL" (src/megatron/
	 * bridge/perf_recipes/deepseek/gb300/deepseek_v3.py, 067f987): 15 x 4
	 * + 1; and 10 layers in 8 chunks of 2 would need 14 */
	assert_int_equal(dtplan__vp_split_of(126, 2, 4), DTPLAN__VP_LAYOUT);
	assert_int_equal(dtplan__vp_split_of(61, 2, 8), DTPLAN__VP_LAYOUT);
	assert_int_equal(dtplan__vp_split_of(10, 2, 4), DTPLAN__VP_NONE);
}

/*
 * The sequence as Megatron-LM splits it (issue 26: cp=64,seq=1 planned with
 * no activations, --sequence-parallel went out with --seq 4097 and TP 8):
 * CP cuts each sequence into 2 x CP chunks, sequence parallelism a CP
 * rank's tokens into TP parts.
 */
static void split_check__sequence__cp_and_tp_divide_it(void **state)
{
	static const struct {
		int seq, tp, cp;
		const char *source, *text; /* NULL: allowed */
	} cases[] = {
		{1, 0, 64, "cp",
		 "CP 64 cuts each sequence into 128 chunks, and a sequence of 1 token "
		 "is not a multiple of them"},
		{4097, 8, 0, "tp",
		 "TP 8 does not divide the 4097 tokens of a sequence (sequence "
		 "parallelism splits them over TP)"},
		{4098, 1, 2, "cp", "CP 2 cuts each sequence into 4 chunks"},
		{8192, 8, 4, NULL, NULL},
		{8200, 8, 2, "tp",
		 "TP 8 does not divide the 4100 tokens of a sequence a CP rank "
		 "holds"},
		{0, 8, 64, NULL, NULL}, /* the sequence not known yet: nothing to check */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan__split s;
		struct dtplan_error err = {0};
		enum dtplan_err rv;

		dtplan__split_init(&s, NULL);
		s.seq = cases[i].seq;
		s.tp = cases[i].tp;
		s.cp = cases[i].cp;
		rv = dtplan__split_check(&s, DTPLAN__RULE_SEQ, &err);
		if (cases[i].text == NULL) {
			assert_int_equal(rv, DTPLAN_OK);
			continue;
		}
		if (rv != DTPLAN_ERR_INVAL || strcmp(err.source, cases[i].source) != 0 ||
		    strstr(err.text, cases[i].text) == NULL)
			fail_msg("seq %d tp %d cp %d: got %d [%s] %s", cases[i].seq, cases[i].tp,
				 cases[i].cp, rv, err.source, err.text);
	}
}

/* A sequence TP cannot split leaves the search TP 1 (Llama 3 8B's 8 key/value
 * heads would otherwise allow TP 8 on one node), and a pinned TP 8 is refused. */
static void search__odd_sequence__no_tp_that_cannot_split_it(void **state)
{
	struct dtplan_request r;
	struct dtplan_plan *plan = NULL;

	(void)state;
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("llama3-8b", &r.model, NULL), DTPLAN_OK);
	r.gpus = 64;
	r.seq = 4097;
	assert_int_equal(dtplan_plan_create(&r, NULL, &plan, NULL), DTPLAN_OK);
	assert_int_equal(plan->best.tp, 1);
	assert_int_equal(plan->best.cp, 1);
	dtplan_plan_destroy(plan);
	plan = NULL;
	r.tp = 8;
	assert_int_equal(dtplan_plan_create(&r, NULL, &plan, NULL), DTPLAN_ERR_INVAL);
	assert_null(plan);
}

/* The same mistake gets the same error from the request's checks and from
 * the ledger (the ledger used to word them its own way, with
 * DTPLAN_ERR_RANGE for some). */
static void request_and_ledger__same_mistake__same_error(void **state)
{
	static const struct {
		const char *what;
		int pp, vp, ep, dp;
		bool dualpipe, moe;
	} cases[] = {
		{"interleaving with PP 1", 1, 2, 0, 8, false, false},
		{"DualPipe with PP 3", 3, 0, 0, 8, true, false},
		{"EP 3 of 8 experts", 1, 0, 3, 6, false, true},
		{"EP on a dense model", 1, 0, 2, 8, false, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_request r;
		struct dtplan_ledger_in in = {0};
		struct dtplan_ledger l;
		struct dtplan_error a = {0}, b = {0};

		dtplan_request_init(&r);
		r.model = cases[i].moe ? mixtral : llama70;
		r.pp = cases[i].pp;
		r.vp = cases[i].vp;
		r.ep = cases[i].ep;
		r.schedule = cases[i].dualpipe ? DTPLAN_SCHEDULE_DUALPIPE : DTPLAN_SCHEDULE_1F1B;
		r.framework = DTPLAN_FRAMEWORK_MEGATRON;
		assert_int_equal(dtplan_request_check_model(&r, &a), DTPLAN_ERR_INVAL);
		in.model = &r.model;
		in.tp = 1;
		in.pp = cases[i].pp;
		in.dp = cases[i].dp;
		in.vp = cases[i].vp;
		in.ep = cases[i].ep;
		in.dualpipe = cases[i].dualpipe;
		in.framework = DTPLAN_FRAMEWORK_MEGATRON;
		in.attention = DTPLAN_ATTENTION_FLASH;
		assert_int_equal(dtplan_ledger_compute(&in, &l, &b), DTPLAN_ERR_INVAL);
		if (strcmp(a.source, b.source) != 0 || strcmp(a.text, b.text) != 0)
			fail_msg("%s: request [%s] %s; ledger [%s] %s", cases[i].what, a.source,
				 a.text, b.source, b.text);
	}
}

/* The ledger counts what it is asked (ZeRO-2 with PP 2 shards the fp32 main
 * gradients 8 ways: 70.6e9 x 4 / 8 bytes on 2 stages); whether a framework
 * runs the split is the request's and the search's question, so DeepSpeed's
 * refusal of ZeRO-2 with PP is theirs, not the ledger's. */
static void ledger__framework_rule__not_the_ledgers(void **state)
{
	struct dtplan_ledger_in in = {0};
	struct dtplan_ledger l;
	struct dtplan_request r;
	struct dtplan_error err = {0};

	(void)state;
	in.model = &llama70;
	in.tp = 1;
	in.pp = 1;
	in.dp = 8;
	in.zero = 3;
	in.framework = DTPLAN_FRAMEWORK_DEEPSPEED;
	in.attention = DTPLAN_ATTENTION_FLASH;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_true(fabs(l.weights - llama70.params * 2.0 / 8.0) < 1.0);
	in.pp = 2;
	in.zero = 2;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	dtplan_request_init(&r);
	r.model = llama70;
	r.framework = DTPLAN_FRAMEWORK_DEEPSPEED;
	r.zero = 2;
	r.pp = 2;
	assert_int_equal(dtplan_request_check_train(&r, &err), DTPLAN_ERR_INVAL);
	assert_string_equal(err.source, "zero");
}

/*
 * The search walks only what the rules allow: across models, GPU counts
 * and --dt-train pins, every plan's chosen split (and its runner-up) passes
 * every rule, and a request the checks refuse is refused before any
 * search.
 */
static void search__every_plan__allowed_by_the_rules(void **state)
{
	static const char *const models[] = {"llama2-7b", "llama3-70b", "mixtral-8x7b"};
	static const int gpus[] = {8, 16, 64, 96};
	static const struct {
		int framework, schedule, zero, pp, vp, cp, attention;
	} pins[] = {
		{0, 0, -1, 0, 0, 0, 1}, {1, 0, -1, 0, 0, 0, 1}, {0, 0, 3, 0, 0, 0, 1},
		{0, 0, -1, 2, 0, 0, 1}, {1, 0, -1, 4, 2, 0, 1}, {1, 1, -1, 4, 0, 0, 1},
		{1, 1, -1, 0, 0, 0, 1}, {0, 0, -1, 0, 0, 2, 1}, {0, 0, -1, 0, 0, 0, 0},
		{0, 0, 2, 2, 0, 0, 1},  {1, 0, 3, 0, 0, 0, 1},
	};
	size_t planned = 0, refused = 0;

	(void)state;
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++)
		for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++)
			for (size_t p = 0; p < sizeof(pins) / sizeof(pins[0]); p++) {
				struct dtplan_request r;
				struct dtplan_plan *plan = NULL;
				struct dtplan_error err = {0};
				const struct dtplan_candidate *c[2];
				enum dtplan_err rv;

				dtplan_request_init(&r);
				assert_int_equal(dtplan_model_parse(models[m], &r.model, NULL),
						 DTPLAN_OK);
				r.gpus = gpus[g];
				r.seq = 4096;
				r.global_batch = 256;
				r.framework = (enum dtplan_framework)pins[p].framework;
				r.schedule = (enum dtplan_schedule)pins[p].schedule;
				r.zero = pins[p].zero;
				r.pp = pins[p].pp;
				r.vp = pins[p].vp;
				r.cp = pins[p].cp;
				r.attention = (enum dtplan_attention)pins[p].attention;
				rv = dtplan_plan_create(&r, NULL, &plan, &err);
				if (dtplan__request_check_fixed(&r, NULL) != DTPLAN_OK) {
					assert_int_equal(rv, DTPLAN_ERR_INVAL);
					refused++;
					continue;
				}
				if (rv != DTPLAN_OK) {
					assert_int_equal(rv, DTPLAN_ERR_NO_FIT);
					continue;
				}
				c[0] = &plan->best;
				c[1] = plan->have_runner_up ? &plan->runner_up : NULL;
				for (int k = 0; k < 2 && c[k] != NULL; k++) {
					struct dtplan__split s;

					dtplan__split_init(&s, &r.model);
					s.framework = r.framework;
					s.attention = r.attention;
					s.schedule = c[k]->dualpipe ? DTPLAN_SCHEDULE_DUALPIPE
								    : DTPLAN_SCHEDULE_1F1B;
					s.moments = r.moments;
					s.gpus = r.gpus;
					s.seq = r.seq;
					s.tp = c[k]->tp;
					s.pp = c[k]->pp;
					s.dp = c[k]->dp;
					s.cp = c[k]->cp;
					s.ep = c[k]->ep;
					s.etp = c[k]->etp;
					s.vp = c[k]->vp;
					s.zero = c[k]->zero;
					s.offload = c[k]->offload ? 1 : 0;
					s.recompute = (int)c[k]->recompute;
					if (dtplan__split_check(&s, DTPLAN__RULES_ALL, &err) !=
					    DTPLAN_OK)
						fail_msg(
							"%s on %d GPUs, pins %zu: the plan's split "
							"breaks a rule: %s",
							models[m], gpus[g], p, err.text);
				}
				planned++;
				dtplan_plan_destroy(plan);
			}
	print_message("%zu plans checked, %zu requests refused by the checks\n", planned, refused);
	assert_true(planned > 0);
	assert_true(refused > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_check__each_rule__key_and_reason),
		cmocka_unit_test(split_check__expert_layouts__key_and_reason),
		cmocka_unit_test(split_check__biased_experts__megatron_etp_1),
		cmocka_unit_test(split_check__sequence__cp_and_tp_divide_it),
		cmocka_unit_test(vp_split_of__units_account_layout_none),
		cmocka_unit_test(search__odd_sequence__no_tp_that_cannot_split_it),
		cmocka_unit_test(request_and_ledger__same_mistake__same_error),
		cmocka_unit_test(ledger__framework_rule__not_the_ledgers),
		cmocka_unit_test(search__every_plan__allowed_by_the_rules),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
