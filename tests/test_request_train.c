/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_request_train.c: --dt-plan and --dt-train text -> request fields.
 */
#include "test_common.h"

#include "dtplan.h"
#include "model/model.h"
#include "plan/plan.h"

/* A request with recognisable values, independent of dtplan_request_init(). */
static void request_base(struct dtplan_request *r)
{
	memset(r, 0, sizeof(*r));
	r->seq = 4096;
	r->global_batch = 1024;
	r->recompute = -1;
	snprintf(r->gpu.name, sizeof(r->gpu.name), "%s", "base-gpu");
}

static const struct {
	const char *text;
	enum dtplan_mode mode;
} mode_ok[] = {
	{"off", DTPLAN_MODE_OFF},   {"auto", DTPLAN_MODE_AUTO},     {"strict", DTPLAN_MODE_STRICT},
	{"AUTO", DTPLAN_MODE_AUTO}, {"Strict", DTPLAN_MODE_STRICT},
};

static void mode_parse__known_names__enum(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(mode_ok) / sizeof(mode_ok[0]); i++) {
		enum dtplan_mode m = (enum dtplan_mode) - 1;

		assert_int_equal(dtplan_mode_parse(mode_ok[i].text, &m, NULL), DTPLAN_OK);
		assert_int_equal(m, mode_ok[i].mode);
	}
}

static void mode_parse__garbage__inval_and_unchanged(void **state)
{
	static const char *const bad[] = {"", "on", "auto ", "strictly", "1"};
	struct dtplan_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum dtplan_mode m = DTPLAN_MODE_STRICT;

		assert_int_equal(dtplan_mode_parse(bad[i], &m, &err), DTPLAN_ERR_INVAL);
		assert_int_equal(m, DTPLAN_MODE_STRICT);
		assert_non_null(strstr(err.text, "expected auto, strict or off"));
	}
	assert_int_equal(dtplan_mode_parse(NULL, NULL, NULL), DTPLAN_ERR_INVAL);
}

static void parse_train__every_key__sets_fields(void **state)
{
	struct dtplan_request r;

	(void)state;
	request_base(&r);
	assert_int_equal(
		dtplan_request_parse_train(
			&r, "seq=8192,gbs=1024,tp=8,pp=4,zero=1,mb=2,recompute=selective,gpu=h100",
			NULL),
		DTPLAN_OK);
	assert_int_equal(r.seq, 8192);
	assert_int_equal(r.global_batch, 1024);
	assert_int_equal(r.tp, 8);
	assert_int_equal(r.pp, 4);
	assert_int_equal(r.zero, 1);
	assert_int_equal(r.micro_batch, 2);
	assert_int_equal(r.recompute, DTPLAN_RECOMPUTE_SELECTIVE);
	/* "h100" is an alias of the catalog's h100-sxm: 81559 MiB reported. */
	assert_string_equal(r.gpu.name, "h100-sxm");
	assert_near(r.gpu.memory_bytes, 81559.0 * 1048576.0, 0.0);
	assert_false(r.exact_batch);
	/* "gbs=N!" asks for exactly N; a later plain gbs clears it */
	assert_int_equal(dtplan_request_parse_train(&r, "gbs=1538!", NULL), DTPLAN_OK);
	assert_int_equal(r.global_batch, 1538);
	assert_true(r.exact_batch);
	assert_int_equal(dtplan_request_parse_train(&r, "gbs=96", NULL), DTPLAN_OK);
	assert_int_equal(r.global_batch, 96);
	assert_false(r.exact_batch);
}

static void parse_train__some_keys__others_kept(void **state)
{
	struct dtplan_request r;

	(void)state;
	request_base(&r);
	r.tp = 2;
	assert_int_equal(dtplan_request_parse_train(&r, "seq=2048", NULL), DTPLAN_OK);
	assert_int_equal(r.seq, 2048);
	assert_int_equal(r.global_batch, 1024);
	assert_int_equal(r.tp, 2);
	assert_int_equal(r.recompute, -1);
	assert_string_equal(r.gpu.name, "base-gpu");
	assert_int_equal(dtplan_request_parse_train(&r, "recompute=full,zero=0", NULL), DTPLAN_OK);
	assert_int_equal(r.recompute, DTPLAN_RECOMPUTE_FULL);
	assert_int_equal(r.zero, 0);
	assert_int_equal(dtplan_request_parse_train(&r, "recompute=auto", NULL), DTPLAN_OK);
	assert_int_equal(r.recompute, -1);
}

static void parse_train__expert_keys__set_fields(void **state)
{
	struct dtplan_request r;

	(void)state;
	request_base(&r);
	assert_int_equal(dtplan_request_parse_train(&r,
						    "vp=4,offload=yes,framework=megatron,"
						    "attention=unfused,precision=fp8,tokens=15T",
						    NULL),
			 DTPLAN_OK);
	assert_int_equal(r.vp, 4);
	assert_int_equal(r.offload, 1);
	assert_int_equal(r.framework, DTPLAN_FRAMEWORK_MEGATRON);
	assert_int_equal(r.attention, DTPLAN_ATTENTION_UNFUSED);
	assert_int_equal(r.precision, DTPLAN_PRECISION_FP8);
	assert_near(r.train_tokens, 15e12, 0.0);
	assert_int_equal(dtplan_request_parse_train(&r,
						    "offload=auto,framework=DeepSpeed,"
						    "attention=flash,precision=bf16,tokens=2e9",
						    NULL),
			 DTPLAN_OK);
	assert_int_equal(r.offload, -1);
	assert_int_equal(r.framework, DTPLAN_FRAMEWORK_DEEPSPEED);
	assert_int_equal(r.attention, DTPLAN_ATTENTION_FLASH);
	assert_int_equal(r.precision, DTPLAN_PRECISION_BF16);
	assert_near(r.train_tokens, 2e9, 0.0);
	assert_int_equal(dtplan_request_parse_train(&r, "offload=no", NULL), DTPLAN_OK);
	assert_int_equal(r.offload, 0);
	/* the defaults: flash attention, bf16, DeepSpeed's count, offload when needed */
	dtplan_request_init(&r);
	assert_int_equal(r.attention, DTPLAN_ATTENTION_FLASH);
	assert_int_equal(r.precision, DTPLAN_PRECISION_BF16);
	assert_int_equal(r.framework, DTPLAN_FRAMEWORK_DEEPSPEED);
	assert_int_equal(r.offload, -1);
	assert_int_equal(r.vp, 0);
	assert_near(r.train_tokens, 0.0, 0.0);
}

/* DeepSeek-V3's recipe: fine recomputation, DualPipe, bf16 moments; and
 * what the fixed choices refuse of it. */
static void parse_train__deepseek_recipe_keys__set_and_checked(void **state)
{
	struct dtplan_request r;
	struct dtplan_error err = {0};

	(void)state;
	request_base(&r);
	r.zero = -1; /* searched: bf16 moments refuse ZeRO-0 */
	assert_int_equal(r.schedule, DTPLAN_SCHEDULE_1F1B);
	assert_int_equal(r.moments, DTPLAN_MOMENTS_FP32);
	assert_int_equal(dtplan_request_parse_train(
				 &r,
				 "recompute=fine,schedule=DualPipe,moments=bf16,framework=megatron",
				 NULL),
			 DTPLAN_OK);
	assert_int_equal(r.recompute, DTPLAN_RECOMPUTE_FINE);
	assert_int_equal(r.schedule, DTPLAN_SCHEDULE_DUALPIPE);
	assert_int_equal(r.moments, DTPLAN_MOMENTS_BF16);
	/* 24 GPUs of a 32-layer model: PP 3 and PP 4 both divide them */
	r.gpus = 24;
	r.model.layers = 32;
	r.model.heads = 32;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_OK);
	/* DualPipe mirrors stages: an odd PP, or interleaving, is refused */
	r.pp = 3;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_ERR_INVAL);
	/* the reason is the one broken: an odd PP says so, not "0 interleaved
	 * stages asked" (issue 26) */
	assert_string_equal(err.text, "DualPipe runs an even PP without interleaving: PP 3 is odd");
	r.pp = 4;
	r.vp = 2;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_ERR_INVAL);
	assert_string_equal(err.text,
			    "DualPipe runs an even PP without interleaving: 2 interleaved "
			    "stages asked");
	r.vp = 0;
	/* fine recomputation is Megatron-Core's */
	r.framework = DTPLAN_FRAMEWORK_DEEPSPEED;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "recompute=fine"));
	assert_non_null(strstr(err.text, "framework=megatron"));
	/* so are bf16 moments with fp32 master weights */
	r.recompute = DTPLAN_RECOMPUTE_SELECTIVE;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_ERR_INVAL);
	assert_string_equal(err.source, "moments");
	assert_non_null(strstr(err.text, "moments=bf16"));
	assert_non_null(strstr(err.text, "framework=megatron"));
	r.framework = DTPLAN_FRAMEWORK_MEGATRON;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_OK);
	assert_int_equal(dtplan_request_parse_train(&r, "schedule=1F1B,moments=FP32", NULL),
			 DTPLAN_OK);
	assert_int_equal(r.schedule, DTPLAN_SCHEDULE_1F1B);
	assert_int_equal(r.moments, DTPLAN_MOMENTS_FP32);
	assert_string_equal(dtplan_schedule_name(DTPLAN_SCHEDULE_DUALPIPE), "dualpipe");
	assert_string_equal(dtplan_schedule_name(5), "unknown");
}

/* grads=: the framework's dtype by default; bf16 only where the framework
 * can be told (Megatron-LM), fp32 refused where it cannot (DeepSpeed), and
 * the gradients the ledger counts follow (2 bytes a parameter, not 4). */
static void parse_train__grads__framework_default_megatron_either(void **state)
{
	struct dtplan_request r;
	struct dtplan_error err = {0};
	struct dtplan_ledger fp32, bf16;

	(void)state;
	request_base(&r);
	assert_int_equal(r.grads, DTPLAN_GRADS_DEFAULT);
	assert_int_equal(dtplan_model_parse("llama3-8b", &r.model, NULL), DTPLAN_OK);
	r.gpus = 8;
	assert_int_equal(dtplan_request_parse_train(&r, "framework=megatron,grads=BF16", NULL),
			 DTPLAN_OK);
	assert_int_equal(r.grads, DTPLAN_GRADS_BF16);
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_OK);
	assert_int_equal(dtplan_request_model_state(&r, &bf16, NULL), DTPLAN_OK);
	r.grads = DTPLAN_GRADS_DEFAULT;
	assert_int_equal(dtplan_request_model_state(&r, &fp32, NULL), DTPLAN_OK);
	assert_true(bf16.gradients > 0.0);
	assert_near(bf16.gradients * 2.0, fp32.gradients, 1.0);
	assert_near(bf16.weights, fp32.weights, 0.0);
	/* DeepSpeed's bf16 keeps bf16 gradients: bf16 and default are its own */
	r.framework = DTPLAN_FRAMEWORK_DEEPSPEED;
	r.grads = DTPLAN_GRADS_BF16;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_OK);
	r.grads = DTPLAN_GRADS_FP32;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_ERR_INVAL);
	assert_string_equal(err.source, "grads");
	assert_string_equal(err.text, "grads=fp32: DeepSpeed keeps bf16 gradients; grads=fp32 "
				      "needs framework=megatron");
	/* torchtitan reduces in fp32 alone */
	r.framework = DTPLAN_FRAMEWORK_TORCHTITAN;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_OK);
	r.grads = DTPLAN_GRADS_BF16;
	assert_int_equal(dtplan__request_check_fixed(&r, &err), DTPLAN_ERR_INVAL);
	assert_string_equal(err.text, "grads=bf16: torchtitan keeps fp32 gradients; grads=bf16 "
				      "needs framework=megatron");
	assert_string_equal(dtplan_grads_name(DTPLAN_GRADS_BF16), "bf16");
	assert_string_equal(dtplan_grads_name(7), "unknown");
}

/* Every row of the framework table (lib/model/framework.c) is its enum
 * value's: its name parses back to it, and the aliases to their row. */
static void framework_parse__table_names_and_aliases__rows(void **state)
{
	static const char *const aliases[] = {"megatron-lm", "Megatron-Bridge", "NeMo"};
	int f = -1;

	(void)state;
	assert_int_equal(dtplan__framework_count(), DTPLAN_FRAMEWORK_TORCHTITAN + 1);
	for (int i = 0; i < dtplan__framework_count(); i++) {
		const struct dtplan__framework *fw = dtplan__framework((enum dtplan_framework)i);

		assert_non_null(fw);
		assert_string_equal(dtplan_framework_name((enum dtplan_framework)i), fw->name);
		assert_int_equal(dtplan_framework_parse(fw->name, &f, NULL), DTPLAN_OK);
		assert_int_equal(f, i);
		assert_true(fw->zero_max >= 0 && fw->zero_max <= 3);
		assert_true(fw->grad_bytes > 0.0 && fw->grad_wire_bytes > 0.0);
		assert_true((fw->zero & (1u << 0)) != 0);
	}
	assert_null(dtplan__framework((enum dtplan_framework)dtplan__framework_count()));
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		f = -1;
		assert_int_equal(dtplan_framework_parse(aliases[i], &f, NULL), DTPLAN_OK);
		assert_int_equal(f, DTPLAN_FRAMEWORK_MEGATRON);
	}
	assert_int_equal(dtplan__framework_find("jax"), -1);
	assert_int_equal(dtplan__framework_find(NULL), -1);
}

/* Range edges: seq and gbs 1 .. 2^24 = 16777216, zero 0 .. 3. */
static void parse_train__range_edges__accepted(void **state)
{
	struct dtplan_request r;

	(void)state;
	request_base(&r);
	assert_int_equal(dtplan_request_parse_train(&r, "seq=16777216,gbs=1,zero=3", NULL),
			 DTPLAN_OK);
	assert_int_equal(r.seq, 16777216);
	assert_int_equal(r.global_batch, 1);
	assert_int_equal(r.zero, 3);
}

static const struct {
	const char *text;
	enum dtplan_err code;
	const char *message_part;
} bad_train[] = {
	{"", DTPLAN_ERR_INVAL, "empty training spec"},
	{"seq", DTPLAN_ERR_PARSE, "'seq' is not key=value"},
	/* The five list mistakes get the engine's codes (lib/base/kv.c, issue 20),
	 * as the model dimensions and the site file do: all DTPLAN_ERR_PARSE but a
	 * number out of range.  An unknown key was DTPLAN_ERR_NOT_FOUND and a key
	 * given twice DTPLAN_ERR_INVAL; "seq=" said "is not key=value". */
	{"seq=", DTPLAN_ERR_PARSE, "key 'seq' has no value"},
	{"=8192", DTPLAN_ERR_PARSE, "'=8192' is not key=value"},
	{"seq=8192,,gbs=8", DTPLAN_ERR_PARSE, "empty field"},
	{"seq=8192,", DTPLAN_ERR_PARSE, "empty field"},
	{",seq=8192", DTPLAN_ERR_PARSE, "empty field"},
	{"foo=1", DTPLAN_ERR_PARSE, "unknown key 'foo' (known: seq, gbs"},
	{"SEQ=1", DTPLAN_ERR_PARSE, "unknown key 'SEQ'"},
	{"seq=1,seq=2", DTPLAN_ERR_PARSE, "key 'seq' given twice"},
	{"seq=1,seq=", DTPLAN_ERR_PARSE, "key 'seq' given twice"},
	{"tp=1,foo", DTPLAN_ERR_PARSE, "'foo' is not key=value (keys: seq, gbs"},
	{"seq=abc", DTPLAN_ERR_PARSE, "seq: 'abc' is not a whole number"},
	{"seq=0", DTPLAN_ERR_RANGE, "seq: 0 is out of range"},
	{"seq=16777217", DTPLAN_ERR_RANGE, "out of range"},
	{"gbs=-4", DTPLAN_ERR_RANGE, "gbs: -4 is out of range"},
	{"tp=99999999999999999999", DTPLAN_ERR_RANGE, "tp:"},
	{"zero=4", DTPLAN_ERR_RANGE, "zero: 4 is out of range (0 to 3)"},
	{"mb=1.5", DTPLAN_ERR_PARSE, "mb: '1.5' is not a whole number"},
	{"recompute=some", DTPLAN_ERR_INVAL, "'some' is not none, selective, fine or full"},
	{"gpu=tpu9", DTPLAN_ERR_NOT_FOUND, "unknown GPU type 'tpu9'"},
	{"gbs=16,mb=32", DTPLAN_ERR_INVAL, "mb=32 is larger than gbs=16"},
	{"mb=2048", DTPLAN_ERR_INVAL, "mb=2048 is larger than gbs=1024"},
	{"gbs=1024!!", DTPLAN_ERR_PARSE, "gbs"},
	{"gbs=!", DTPLAN_ERR_INVAL, "gbs"},
	{"vp=0", DTPLAN_ERR_RANGE, "vp: 0 is out of range"},
	{"offload=maybe", DTPLAN_ERR_INVAL, "offload: 'maybe' is not auto, yes or no"},
	{"framework=jax", DTPLAN_ERR_INVAL,
	 "framework: 'jax' is not deepspeed, megatron or torchtitan"},
	{"attention=sparse", DTPLAN_ERR_INVAL, "attention: 'sparse' is not unfused or flash"},
	{"precision=fp4", DTPLAN_ERR_INVAL, "precision: 'fp4' is not bf16, fp8, mxfp8 or nvfp4"},
	{"schedule=zb", DTPLAN_ERR_INVAL, "schedule: 'zb' is not 1f1b or dualpipe"},
	{"moments=fp16", DTPLAN_ERR_INVAL, "moments: 'fp16' is not fp32 or bf16"},
	{"grads=fp16", DTPLAN_ERR_INVAL, "grads: 'fp16' is not default, fp32 or bf16"},
	{"tokens=lots", DTPLAN_ERR_PARSE, "tokens"},
	{"tokens=2e18", DTPLAN_ERR_RANGE, "more than the 1e+18 tokens"},
};

static void parse_train__bad_text__error_and_request_unchanged(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_train) / sizeof(bad_train[0]); i++) {
		struct dtplan_request r, before;
		struct dtplan_error err;

		request_base(&r);
		before = r;
		memset(&err, 0, sizeof(err));
		if (dtplan_request_parse_train(&r, bad_train[i].text, &err) != bad_train[i].code)
			fail_msg("'%s': got code %d (%s), expected %d", bad_train[i].text, err.code,
				 err.text, bad_train[i].code);
		if (strstr(err.text, bad_train[i].message_part) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", bad_train[i].text, err.text,
				 bad_train[i].message_part);
		assert_memory_equal(&r, &before, sizeof(r));
	}
}

static void parse_train__null__inval(void **state)
{
	struct dtplan_request r;

	(void)state;
	request_base(&r);
	assert_int_equal(dtplan_request_parse_train(&r, NULL, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_request_parse_train(NULL, "seq=1", NULL), DTPLAN_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mode_parse__known_names__enum),
		cmocka_unit_test(mode_parse__garbage__inval_and_unchanged),
		cmocka_unit_test(parse_train__every_key__sets_fields),
		cmocka_unit_test(parse_train__some_keys__others_kept),
		cmocka_unit_test(parse_train__expert_keys__set_fields),
		cmocka_unit_test(parse_train__deepseek_recipe_keys__set_and_checked),
		cmocka_unit_test(parse_train__grads__framework_default_megatron_either),
		cmocka_unit_test(framework_parse__table_names_and_aliases__rows),
		cmocka_unit_test(parse_train__range_edges__accepted),
		cmocka_unit_test(parse_train__bad_text__error_and_request_unchanged),
		cmocka_unit_test(parse_train__null__inval),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
