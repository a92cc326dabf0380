/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_model.c: presets, parameter counts, config.json, explicit dimensions, sizes.
 */
#include "test_common.h"

#include "model/model.h"

#include <sys/stat.h>
#include <unistd.h>

/* Published parameter counts (HuggingFace) that the counting rule reproduces. */
static const struct {
	const char *name;
	double params;
	int layers, hidden, heads, kv_heads, ffn, vocab;
	enum dtplan_mlp mlp;
	bool tied;
} preset_cases[] = {
	/* 32 (4h^2 + 3h*11008 + 2h) + 2*32000*4096 + 4096, h = 4096:
	 * 32 * (67108864 + 135266304 + 8192) + 262144000 + 4096 = 6,738,415,616 */
	{"llama2-7b", 6738415616.0, 32, 4096, 32, 32, 11008, 32000, DTPLAN_MLP_SWIGLU, false},
	{"llama2-13b", 13015864320.0, 40, 5120, 40, 40, 13824, 32000, DTPLAN_MLP_SWIGLU, false},
	/* GQA: 80 (2h^2 + 2h*1024 + 3h*28672 + 2h) + 2*32000*h + h, h = 8192 */
	{"llama2-70b", 68976648192.0, 80, 8192, 64, 8, 28672, 32000, DTPLAN_MLP_SWIGLU, false},
	{"llama3-8b", 8030261248.0, 32, 4096, 32, 8, 14336, 128256, DTPLAN_MLP_SWIGLU, false},
	{"llama3-70b", 70553706496.0, 80, 8192, 64, 8, 28672, 128256, DTPLAN_MLP_SWIGLU, false},
	{"llama3-405b", 405853388800.0, 126, 16384, 128, 8, 53248, 128256, DTPLAN_MLP_SWIGLU,
	 false},
	/* 70 (12h^2 + 13h + 4h) + 2h + 250880h, h = 14336: HF's 176,247,271,424 less the
	 * 2h embedding LayerNorm BLOOM adds. */
	{"bloom-176b", 176247242752.0, 70, 14336, 112, 112, 57344, 250880, DTPLAN_MLP_GELU, true},
	{"gpt-neox-20b", 20554567680.0, 44, 6144, 64, 64, 24576, 50432, DTPLAN_MLP_GELU, false},
	/* 96 (12h^2 + 13h + 4h) + 2h + 50257h, h = 12288 (learned positions not counted) */
	{"gpt3-175b", 174579093504.0, 96, 12288, 96, 96, 49152, 50257, DTPLAN_MLP_GELU, true},
};

static void model_parse__presets__published_dims_and_counts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(preset_cases) / sizeof(preset_cases[0]); i++) {
		struct dtplan_model m;
		struct dtplan_error err;

		assert_int_equal(dtplan_model_parse(preset_cases[i].name, &m, &err), DTPLAN_OK);
		assert_string_equal(m.name, preset_cases[i].name);
		assert_int_equal(m.layers, preset_cases[i].layers);
		assert_int_equal(m.hidden, preset_cases[i].hidden);
		assert_int_equal(m.heads, preset_cases[i].heads);
		assert_int_equal(m.kv_heads, preset_cases[i].kv_heads);
		assert_int_equal(m.ffn, preset_cases[i].ffn);
		assert_int_equal(m.vocab, preset_cases[i].vocab);
		assert_int_equal(m.mlp, preset_cases[i].mlp);
		assert_int_equal(m.tied_embeddings, preset_cases[i].tied);
		assert_false(m.params_given);
		assert_near(m.params, preset_cases[i].params, 0.5);
		assert_near(dtplan_model_param_count(&m), preset_cases[i].params, 0.5);
	}
}

static void model_presets__table__params_match_count(void **state)
{
	const struct dtplan_model *t;
	size_t n = 0;

	(void)state;
	t = dtplan_model_presets(&n);
	assert_non_null(t);
	assert_true(n >= 9);
	for (size_t i = 0; i < n; i++) {
		assert_near(t[i].params, dtplan_model_param_count(&t[i]), 0.5);
		assert_int_equal(t[i].hidden % t[i].heads, 0);
		assert_int_equal(t[i].heads % t[i].kv_heads, 0);
		assert_true(t[i].max_seq > 0);
		/* a model trains within its context */
		assert_true(t[i].train_seq >= 0 && t[i].train_seq <= t[i].max_seq);
	}
	assert_non_null(dtplan_model_presets(NULL));
}

static void model_parse__case_insensitive__finds_preset(void **state)
{
	struct dtplan_model m;

	(void)state;
	assert_int_equal(dtplan_model_parse("LLaMA3-70B", &m, NULL), DTPLAN_OK);
	assert_string_equal(m.name, "llama3-70b");
	assert_int_equal(m.max_seq, 8192);
}

static void model_parse__unknown_preset__lists_presets(void **state)
{
	struct dtplan_model m = {.layers = 7};
	struct dtplan_error err;

	(void)state;
	assert_int_equal(dtplan_model_parse("llama9-1t", &m, &err), DTPLAN_ERR_NOT_FOUND);
	assert_int_equal(err.code, DTPLAN_ERR_NOT_FOUND);
	assert_non_null(strstr(err.text, "llama9-1t"));
	assert_non_null(strstr(err.text, "llama2-7b"));
	assert_non_null(strstr(err.text, "gpt-neox-20b"));
	assert_int_equal(m.layers, 7); /* untouched */
}

static void model_parse__null_or_empty__inval(void **state)
{
	struct dtplan_model m;

	(void)state;
	assert_int_equal(dtplan_model_parse(NULL, &m, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_parse("", &m, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_parse("llama2-7b", NULL, NULL), DTPLAN_ERR_INVAL);
	assert_true(dtplan_model_param_count(NULL) == 0.0);
}

/* Bare sizes: h = cbrt(128 N / 12) rounded to a multiple of 128. */
static const struct {
	const char *spec;
	double params;
	int hidden;
} size_cases[] = {
	/* cbrt(128 * 7e9 / 12) = cbrt(7.4667e10) = 4210.9; / 128 = 32.9 -> 33 * 128 = 4224 */
	{"7B", 7e9, 4224},
	{"7e9", 7e9, 4224},
	/* cbrt(128 * 70e9 / 12) = 9072.1; / 128 = 70.87 -> 71 * 128 = 9088 */
	{"70b", 70e9, 9088},
	/* cbrt(128 * 1.5e12 / 12) = cbrt(1.6e13) = 25198.4; / 128 = 196.9 -> 197 * 128 = 25216 */
	{"1.5T", 1.5e12, 25216},
	/* cbrt(128 * 350e6 / 12) = cbrt(3.7333e9) = 1551.3; / 128 = 12.12 -> 12 * 128 = 1536 */
	{"350M", 350e6, 1536},
	/* the smallest allowed: cbrt(128 * 1e6 / 12) = 220.1; / 128 = 1.72 -> 2 * 128 = 256 */
	{"1M", 1e6, 256},
};

static void model_parse__bare_size__derives_dims_keeps_params(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		struct dtplan_model m;

		assert_int_equal(dtplan_model_parse(size_cases[i].spec, &m, NULL), DTPLAN_OK);
		assert_true(m.params_given);
		assert_near(m.params, size_cases[i].params, 0.0);
		assert_int_equal(m.hidden, size_cases[i].hidden);
		assert_int_equal(m.layers, size_cases[i].hidden / 128);
		assert_int_equal(m.heads, size_cases[i].hidden / 128);
		assert_int_equal(m.kv_heads, m.heads);
		assert_int_equal(m.ffn, 4 * m.hidden);
		assert_int_equal(m.vocab, 50257);
		assert_int_equal(m.mlp, DTPLAN_MLP_GELU);
		assert_string_equal(m.name, size_cases[i].spec);
	}
}

static void model_from_size__bad_values__rejected(void **state)
{
	struct dtplan_model m;
	struct dtplan_error err;

	(void)state;
	assert_int_equal(dtplan_model_from_size(0.0, &m, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_from_size(-7e9, &m, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_from_size(NAN, &m, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_from_size(INFINITY, &m, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_from_size(2e15, &m, &err), DTPLAN_ERR_RANGE);
	assert_int_equal(dtplan_model_from_size(7e9, NULL, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_parse("2000T", &m, &err), DTPLAN_ERR_RANGE);
	assert_int_equal(dtplan_model_parse("7X", &m, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "7X"));
	assert_int_equal(dtplan_model_parse("0B", &m, &err), DTPLAN_ERR_RANGE);
	/* 1e15 itself is allowed */
	assert_int_equal(dtplan_model_from_size(1e15, &m, &err), DTPLAN_OK);
}

/*
 * Issue 13, finding 21: "1e-300" was planned as a "0.00 parameters" model,
 * and "-7B" was an unknown model.
 */
static void model_parse__tiny_or_signed_size__clear_error(void **state)
{
	static const struct {
		const char *spec;
		enum dtplan_err code;
		const char *says;
	} cases[] = {
		{"1e-300", DTPLAN_ERR_RANGE,
		 "model size 1e-300 is less than the 1000000 parameters dtplan plans for"},
		{"999999", DTPLAN_ERR_RANGE,
		 "model size 999999 is less than the 1000000 parameters"},
		{"0.9M", DTPLAN_ERR_RANGE, "model size 900000 is less than"},
		{"-7B", DTPLAN_ERR_RANGE, "model size '-7B' must be positive, without a sign"},
		{"-.5T", DTPLAN_ERR_RANGE, "model size '-.5T' must be positive"},
		{"+7B", DTPLAN_ERR_RANGE, "model size '+7B' must be positive"},
		{"-llama", DTPLAN_ERR_NOT_FOUND, "unknown model '-llama'"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_model m = {.layers = 7};
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_model_parse(cases[i].spec, &m, &err), cases[i].code);
		if (strstr(err.text, cases[i].says) == NULL)
			fail_msg("'%s': '%s' lacks '%s'", cases[i].spec, err.text, cases[i].says);
		assert_int_equal(m.layers, 7);
	}
	assert_int_equal(dtplan_model_from_size(DTPLAN_MODEL_MIN_PARAMS, &(struct dtplan_model){0},
						NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_model_from_size(nextafter(DTPLAN_MODEL_MIN_PARAMS, 0),
						&(struct dtplan_model){0}, NULL),
			 DTPLAN_ERR_RANGE);
}

/* Explicit dimensions. */
static void model_parse__dims_defaults__gelu_4h_vocab_50257(void **state)
{
	struct dtplan_model m;

	(void)state;
	assert_int_equal(dtplan_model_parse("layers=96,hidden=12288,heads=96", &m, NULL),
			 DTPLAN_OK);
	assert_int_equal(m.layers, 96);
	assert_int_equal(m.hidden, 12288);
	assert_int_equal(m.heads, 96);
	assert_int_equal(m.kv_heads, 96);
	assert_int_equal(m.ffn, 49152);
	assert_int_equal(m.vocab, 50257);
	assert_int_equal(m.mlp, DTPLAN_MLP_GELU);
	assert_int_equal(m.max_seq, 0);
	assert_false(m.tied_embeddings);
	assert_false(m.params_given);
	/* untied GPT-3 shape: gpt3-175b plus a second 50257 x 12288 matrix */
	assert_near(m.params, 174579093504.0 + 50257.0 * 12288.0, 0.5);
	assert_string_equal(m.name, "layers=96,hidden=12288,heads=96");
}

static void model_parse__dims_llama2_7b__same_count_as_preset(void **state)
{
	struct dtplan_model m;

	(void)state;
	assert_int_equal(dtplan_model_parse("layers=32,hidden=4096,heads=32,kv_heads=32,ffn=11008,"
					    "vocab=32000,mlp=swiglu,seq=4096",
					    &m, NULL),
			 DTPLAN_OK);
	assert_near(m.params, 6738415616.0, 0.5);
	assert_int_equal(m.max_seq, 4096);
	assert_int_equal(m.mlp, DTPLAN_MLP_SWIGLU);
	/* tied: one 32000 x 4096 matrix less */
	assert_int_equal(dtplan_model_parse("layers=32,hidden=4096,heads=32,ffn=11008,vocab=32000,"
					    "mlp=SwiGLU,tied=yes",
					    &m, NULL),
			 DTPLAN_OK);
	assert_near(m.params, 6738415616.0 - 32000.0 * 4096.0, 0.5);
}

static const struct {
	const char *spec;
	enum dtplan_err code;
	const char *needle; /* must appear in the message */
} bad_dims[] = {
	{"layers=32,hidden=4096", DTPLAN_ERR_PARSE, "heads"},
	{"hidden=4096,heads=32", DTPLAN_ERR_PARSE, "layers"},
	{"layers=32,hidden=4096,heads=30", DTPLAN_ERR_INVAL, "divide"},
	{"layers=32,hidden=4096,heads=32,kv_heads=5", DTPLAN_ERR_INVAL, "kv_heads"},
	{"layers=32,hidden=4096,heads=32,kv_heads=64", DTPLAN_ERR_INVAL, "kv_heads"},
	{"layers=0,hidden=4096,heads=32", DTPLAN_ERR_RANGE, "layers"},
	{"layers=-1,hidden=4096,heads=32", DTPLAN_ERR_RANGE, "layers"},
	{"layers=32,hidden=4096,heads=32,ffn=x", DTPLAN_ERR_PARSE, "ffn"},
	{"layers=32,hidden=4096,heads=32,depth=3", DTPLAN_ERR_PARSE, "depth"},
	{"layers=32,hidden=4096,heads=32,layers=4", DTPLAN_ERR_PARSE, "twice"},
	{"layers=32,hidden=4096,heads=32,mlp=relu", DTPLAN_ERR_PARSE, "relu"},
	{"layers=32,hidden=4096,heads=32,tied=maybe", DTPLAN_ERR_PARSE, "tied"},
	{"layers=32,hidden,heads=32", DTPLAN_ERR_PARSE, "key=value"},
	/* The five list mistakes get the engine's codes and words (lib/base/kv.c,
	 * issue 20), as --dt-train does.  An empty value was DTPLAN_ERR_INVAL
	 * ("ffn: missing value"); ",," was skipped and the spec taken. */
	{"layers=32,hidden,heads=32", DTPLAN_ERR_PARSE,
	 "model 'layers=32,hidden,heads=32': 'hidden' is not key=value (keys: layers, hidden"},
	{"layers=32,hidden=4096,heads=32,depth=3", DTPLAN_ERR_PARSE,
	 "unknown key 'depth' (known: layers, hidden, heads"},
	{"layers=32,hidden=4096,heads=32,layers=4", DTPLAN_ERR_PARSE, "key 'layers' given twice"},
	{"layers=32,hidden=4096,heads=32,ffn=", DTPLAN_ERR_PARSE, "key 'ffn' has no value"},
	{"layers=32,hidden=4096,heads=32,heads=", DTPLAN_ERR_PARSE, "key 'heads' given twice"},
	{"layers=32,,hidden=4096,heads=32", DTPLAN_ERR_PARSE, "empty field"},
	{"layers=32,hidden=4096,heads=32,", DTPLAN_ERR_PARSE, "empty field"},
	{"layers=32,hidden=4096,heads=32,ffn=0", DTPLAN_ERR_RANGE,
	 "ffn: 0 is out of range (1 to 2147483647)"},
	{"layers=32,hidden=99999999999999999999,heads=32", DTPLAN_ERR_RANGE, "hidden"},
	/* hidden > 1<<20 */
	{"layers=1,hidden=2097152,heads=1", DTPLAN_ERR_RANGE, "hidden"},
	{"layers=1,hidden=2097152,heads=1,ffn=1", DTPLAN_ERR_RANGE, "hidden"},
	/* 1e6 layers of 12 * 65536^2 = 5.2e16 params > 1e15 */
	{"layers=1000000,hidden=65536,heads=512", DTPLAN_ERR_RANGE, "parameters"},
	{"layers=32,hidden=4096,heads=32,seq=-5", DTPLAN_ERR_RANGE, "seq"},
	/* issue 26: 2e9 + 2e9 overflowed an int, giving "parameter count must be
	 * > 0" or a 1.65T model; each latent dimension is bounded, by name */
	{"layers=4,hidden=1024,heads=8,kv_lora_rank=512,qk_nope_dim=2000000000,qk_rope_dim="
	 "2000000000,v_head_dim=128",
	 DTPLAN_ERR_RANGE, "latent attention's qk_nope_dim 2000000000 is larger than 1048576"},
	{"layers=4,hidden=1024,heads=8,kv_lora_rank=2000000,qk_nope_dim=128,v_head_dim=128",
	 DTPLAN_ERR_RANGE, "latent attention's kv_lora_rank 2000000"},
};

static void model_parse__bad_dims__named_error(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_dims) / sizeof(bad_dims[0]); i++) {
		struct dtplan_model m = {.layers = 7};
		struct dtplan_error err;

		dtplan_error_clear(&err);
		if (dtplan_model_parse(bad_dims[i].spec, &m, &err) != bad_dims[i].code)
			fail_msg("'%s': got %d (%s), expected %d", bad_dims[i].spec, err.code,
				 err.text, bad_dims[i].code);
		if (strstr(err.text, bad_dims[i].needle) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", bad_dims[i].spec, err.text,
				 bad_dims[i].needle);
		assert_int_equal(m.layers, 7);
	}
}

static void model_param_count__gqa_and_gelu__by_hand(void **state)
{
	/* h 1024, a 16, k 4 (d 64, kv_dim 256), f 2816, V 1000, L 2, SwiGLU, untied:
	 * layer 2*1024^2 + 2*1024*256 + 3*1024*2816 + 2*1024
	 *     = 2097152 + 524288 + 8650752 + 2048 = 11274240; x2 = 22548480
	 * + 1024 final + 2*1000*1024 = 2048000 -> 24597504 */
	struct dtplan_model m = {.layers = 2,
				 .hidden = 1024,
				 .heads = 16,
				 .kv_heads = 4,
				 .ffn = 2816,
				 .vocab = 1000,
				 .mlp = DTPLAN_MLP_SWIGLU};

	(void)state;
	assert_near(dtplan_model_param_count(&m), 24597504.0, 0.5);
	/* GELU, tied, same shape, f 4096: layer 2h^2 + 2h*256 + 2h*4096 + 4h
	 * + (2h + 2*256) + (4096 + h)
	 *     = 2097152 + 524288 + 8388608 + 4096 + 2560 + 5120 = 11021824; x2 = 22043648
	 * + 2048 final + 1000*1024 = 1024000 -> 23069696 */
	m.mlp = DTPLAN_MLP_GELU;
	m.ffn = 4096;
	m.tied_embeddings = true;
	assert_near(dtplan_model_param_count(&m), 23069696.0, 0.5);
}

/* HuggingFace config.json */
static void model_from_hf_config__llama2_7b__matches_preset(void **state)
{
	struct dtplan_model m;
	struct dtplan_error err;

	(void)state;
	assert_int_equal(dtplan_model_parse(test_data_path("hf-llama2-7b.json"), &m, &err),
			 DTPLAN_OK);
	assert_string_equal(m.name, "hf-llama2-7b.json");
	assert_int_equal(m.layers, 32);
	assert_int_equal(m.hidden, 4096);
	assert_int_equal(m.ffn, 11008);
	assert_int_equal(m.max_seq, 4096);
	assert_int_equal(m.mlp, DTPLAN_MLP_SWIGLU);
	assert_false(m.tied_embeddings);
	assert_near(m.params, 6738415616.0, 0.5);
}

static void model_from_hf_config__gqa__kv_heads_read(void **state)
{
	struct dtplan_model m;

	(void)state;
	assert_int_equal(dtplan_model_from_hf_config(test_data_path("hf-llama3-70b.json"), &m,
						     NULL),
			 DTPLAN_OK);
	assert_int_equal(m.kv_heads, 8);
	assert_near(m.params, 70553706496.0, 0.5);
}

static void model_from_hf_config__optional_keys__defaults(void **state)
{
	struct dtplan_model m;

	(void)state;
	assert_int_equal(dtplan_model_from_hf_config(test_data_path("hf-gpt2-defaults.json"), &m,
						     NULL),
			 DTPLAN_OK);
	assert_int_equal(m.kv_heads, 12);
	assert_int_equal(m.ffn, 3072);
	assert_int_equal(m.max_seq, 0);
	assert_int_equal(m.mlp, DTPLAN_MLP_GELU);
	assert_true(m.tied_embeddings);
	/* GPT-2 small: HF's 124,439,808 less its 1024 x 768 position table = 123,653,376 */
	assert_near(m.params, 124439808.0 - 1024.0 * 768.0, 0.5);
	/* no dropout probability given: none */
	assert_false(m.dropout);
}

/*
 * A head width of its own (config.json's head_dim): Qwen3-30B-A3B (hidden
 * 2048, 32 heads of 128, 4 KV heads, 48 layers of 128 experts of 768, 8
 * per token, vocabulary 151936, untied).  Its queries are 32 x 128 = 4096
 * wide, twice hidden.  Qwen/Qwen3-30B-A3B's safetensors hold 30,532,122,624
 * parameters; dtplan does not count the per-head query and key norms, 2 x
 * 128 per layer: 30,532,110,336.
 */
static void model_from_hf_config__head_dim__qwen3_moe(void **state)
{
	struct dtplan_model m;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_model_from_hf_config(test_data_path("hf-qwen3-30b-a3b.json"), &m,
						     NULL),
			 DTPLAN_OK);
	assert_int_equal(m.head_dim, 128);
	assert_near(dtplan__model_head_dim(&m), 128.0, 0.0);
	assert_near(m.params, 30532122624.0 - 48.0 * 2 * 128, 0.5);
	/* none given: hidden / heads */
	assert_int_equal(dtplan_model_parse("layers=2,hidden=256,heads=4", &m, NULL), DTPLAN_OK);
	assert_near(dtplan__model_head_dim(&m), 64.0, 0.0);
	assert_int_equal(dtplan_model_parse("layers=2,hidden=256,heads=4,head_dim=128", &m, NULL),
			 DTPLAN_OK);
	assert_near(dtplan__model_head_dim(&m), 128.0, 0.0);
	/* bounded as hidden is, named */
	assert_int_equal(dtplan_model_parse("layers=2,hidden=256,heads=4,head_dim=2147483647", &m,
					    &err),
			 DTPLAN_ERR_RANGE);
	assert_non_null(strstr(err.text, "head_dim 2147483647 is larger than"));
}

/* Dropout from the probabilities a config.json gives: GPT-2's resid_pdrop
 * and attn_pdrop of 0.1 (openai-community/gpt2's config.json), Llama 3's
 * attention_dropout of 0.0; a probability that is not a number is named. */
static void model_from_hf_config__dropout__probabilities(void **state)
{
	struct dtplan_model m;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_model_from_hf_config(test_data_path("hf-gpt2-dropout.json"), &m,
						     NULL),
			 DTPLAN_OK);
	assert_true(m.dropout);
	assert_int_equal(dtplan_model_from_hf_config(test_data_path("hf-llama3-70b.json"), &m,
						     NULL),
			 DTPLAN_OK);
	assert_false(m.dropout);
	assert_int_equal(dtplan_model_from_hf_config(test_data_path("hf-bad-dropout.json"), &m,
						     &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "attention_dropout"));
	/* a spec's dimensions train as Megatron-LM's defaults do, with
	 * dropout, unless told; presets as their models were trained */
	assert_int_equal(dtplan_model_parse("layers=2,hidden=256,heads=4", &m, NULL), DTPLAN_OK);
	assert_true(m.dropout);
	assert_int_equal(dtplan_model_parse("layers=2,hidden=256,heads=4,dropout=no", &m, NULL),
			 DTPLAN_OK);
	assert_false(m.dropout);
	assert_int_equal(dtplan_model_parse("gpt3-175b", &m, NULL), DTPLAN_OK);
	assert_true(m.dropout);
	assert_int_equal(dtplan_model_parse("llama3-8b", &m, NULL), DTPLAN_OK);
	assert_false(m.dropout);
}

static const struct {
	const char *file;
	enum dtplan_err code;
	int line;
	const char *needle;
} bad_configs[] = {
	{"hf-bad-syntax.json", DTPLAN_ERR_PARSE, 3, ""},
	{"hf-missing-heads.json", DTPLAN_ERR_PARSE, 0, "num_attention_heads: missing"},
	{"hf-bad-act.json", DTPLAN_ERR_PARSE, 0, "tanh"},
	{"hf-string-layers.json", DTPLAN_ERR_PARSE, 0,
	 "num_hidden_layers: expected a whole number"},
	{"hf-heads-mismatch.json", DTPLAN_ERR_INVAL, 0, "divide"},
	{"hf-array.json", DTPLAN_ERR_PARSE, 0, "object"},
	{"no-such-config.json", DTPLAN_ERR_IO, 0, "cannot open"},
};

static void model_from_hf_config__bad_files__name_file_and_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_configs) / sizeof(bad_configs[0]); i++) {
		const char *path = test_data_path(bad_configs[i].file);
		struct dtplan_model m = {.layers = 7};
		struct dtplan_error err;

		dtplan_error_clear(&err);
		if (dtplan_model_parse(path, &m, &err) != bad_configs[i].code)
			fail_msg("%s: got %d (%s)", bad_configs[i].file, err.code, err.text);
		assert_string_equal(err.source, path);
		assert_int_equal(err.line, bad_configs[i].line);
		if (strstr(err.text, bad_configs[i].needle) == NULL)
			fail_msg("%s: message '%s' lacks '%s'", bad_configs[i].file, err.text,
				 bad_configs[i].needle);
		assert_int_equal(m.layers, 7);
	}
	assert_int_equal(dtplan_model_from_hf_config(NULL, NULL, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_model_from_hf_config("", NULL, NULL), DTPLAN_ERR_INVAL);
}

/* Issue 13, findings 4-6 for a model's config.json: a directory gave a JSON
 * parser's message, a FIFO blocked, /dev/zero ran memory out. */
static void model_parse__config_path_not_regular__refused_naming_path(void **state)
{
	char dir[] = "/tmp/dtplan-test-model.XXXXXX", fifo[512], sub[512];
	const char *paths[3], *says[3] = {"is a directory, not a regular file",
					  "is a FIFO (named pipe), not a regular file",
					  "is a character device, not a regular file"};

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/config.json", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(sub, sizeof(sub), "%s/", dir);
	paths[0] = sub;
	paths[1] = fifo;
	paths[2] = "/dev/zero";
	alarm(20);
	for (size_t i = 0; i < 3; i++) {
		struct dtplan_model m = {.layers = 7};
		struct dtplan_error err = {0};

		/* a '/' makes a spec a path */
		assert_int_equal(dtplan_model_parse(paths[i], &m, &err), DTPLAN_ERR_IO);
		assert_string_equal(err.source, paths[i]);
		if (strstr(err.text, says[i]) == NULL)
			fail_msg("%s: '%s' lacks '%s'", paths[i], err.text, says[i]);
		assert_int_equal(m.layers, 7);
	}
	alarm(0);
	unlink(fifo);
	assert_int_equal(rmdir(dir), 0);
}

/* Mixture of experts in config.json: the JSON is written here, into a
 * temporary file (a '/' in the path makes dtplan_model_parse() read it). */
static const char *write_config(char *dir, size_t n, const char *json)
{
	static char path[512];
	FILE *f;

	snprintf(dir, n, "/tmp/dtplan-test-moe.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/config.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(json, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void remove_config(const char *dir, const char *path)
{
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static enum dtplan_err parse_json(const char *json, struct dtplan_model *m,
				  struct dtplan_error *err)
{
	char dir[64];
	const char *path = write_config(dir, sizeof(dir), json);
	enum dtplan_err rv = dtplan_model_parse(path, m, err);

	remove_config(dir, path);
	return rv;
}

#define HF_DENSE "\"hidden_act\": \"silu\", \"tie_word_embeddings\": false, "

static void model_from_hf_config__mixtral_keys__experts_and_top_k(void **state)
{
	struct dtplan_model m, preset;
	struct dtplan_error err = {0};

	(void)state;
	/* mistralai/Mixtral-8x7B-v0.1's config.json, its planning keys */
	if (parse_json("{\"num_hidden_layers\": 32, \"hidden_size\": 4096, "
		       "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
		       "\"intermediate_size\": 14336, \"vocab_size\": 32000, " HF_DENSE
		       "\"num_local_experts\": 8, \"num_experts_per_tok\": 2}",
		       &m, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(m.experts, 8);
	assert_int_equal(m.top_k, 2);
	assert_int_equal(m.moe_ffn, 14336); /* Mixtral's experts are intermediate_size wide */
	assert_int_equal(m.shared_experts, 0);
	assert_int_equal(m.first_dense, 0);
	assert_int_equal(dtplan_model_moe_layers(&m), 32);
	assert_int_equal(dtplan_model_parse("mixtral-8x7b", &preset, NULL), DTPLAN_OK);
	assert_near(m.params, preset.params, 0.5);
	assert_near(m.active_params, preset.active_params, 0.5);
}

static void model_from_hf_config__qwen2_moe_keys__shared_width_and_sparse_step(void **state)
{
	struct dtplan_model m;
	struct dtplan_error err = {0};
	double h = 2048, per_expert = 3 * h * 1408;

	(void)state;
	/* Qwen1.5-MoE-A2.7B's keys, with decoder_sparse_step 2 and two leading
	 * dense layers: MoE where i >= 2 and (i + 1) % 2 == 0, i = 3, 5, .., 23:
	 * 11 of 24 */
	if (parse_json("{\"num_hidden_layers\": 24, \"hidden_size\": 2048, "
		       "\"num_attention_heads\": 16, \"intermediate_size\": 5632, "
		       "\"vocab_size\": 151936, " HF_DENSE "\"num_experts\": 60, "
		       "\"num_experts_per_tok\": 4, \"moe_intermediate_size\": 1408, "
		       "\"shared_expert_intermediate_size\": 5632, "
		       "\"decoder_sparse_step\": 2, \"mlp_only_layers\": [0, 1]}",
		       &m, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(m.experts, 60);
	assert_int_equal(m.top_k, 4);
	assert_int_equal(m.moe_ffn, 1408);
	assert_int_equal(m.shared_experts, 4); /* 5632 / 1408 */
	assert_int_equal(m.moe_every, 2);
	assert_false(m.moe_every_from_zero);
	assert_int_equal(m.first_dense, 2);
	assert_int_equal(dtplan_model_moe_layers(&m), 11);
	/* total - active: the (60 - 4) routed experts not taken, per MoE layer */
	assert_near(m.params - m.active_params, 11 * 56 * per_expert, 1.0);
}

static void model_from_hf_config__deepseek_v3_keys__latent_attention(void **state)
{
	struct dtplan_model m, preset;
	struct dtplan_error err = {0};

	(void)state;
	/* deepseek-ai/DeepSeek-V3's config.json, its planning keys */
	if (parse_json("{\"num_hidden_layers\": 61, \"hidden_size\": 7168, "
		       "\"num_attention_heads\": 128, \"num_key_value_heads\": 128, "
		       "\"intermediate_size\": 18432, \"vocab_size\": 129280, " HF_DENSE
		       "\"n_routed_experts\": 256, \"num_experts_per_tok\": 8, "
		       "\"n_shared_experts\": 1, \"moe_intermediate_size\": 2048, "
		       "\"first_k_dense_replace\": 3, \"moe_layer_freq\": 1, "
		       "\"q_lora_rank\": 1536, \"kv_lora_rank\": 512, "
		       "\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, "
		       "\"v_head_dim\": 128}",
		       &m, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(m.experts, 256);
	assert_int_equal(m.top_k, 8);
	assert_int_equal(m.shared_experts, 1);
	assert_int_equal(m.moe_ffn, 2048);
	assert_int_equal(m.first_dense, 3);
	assert_int_equal(m.moe_every, 1);
	assert_true(m.moe_every_from_zero);
	assert_int_equal(m.q_lora_rank, 1536);
	assert_int_equal(m.kv_lora_rank, 512);
	assert_int_equal(m.qk_nope_dim, 128);
	assert_int_equal(m.qk_rope_dim, 64);
	assert_int_equal(m.v_head_dim, 128);
	assert_int_equal(dtplan_model_moe_layers(&m), 58);
	assert_int_equal(dtplan_model_parse("deepseek-v3", &preset, NULL), DTPLAN_OK);
	assert_near(m.params, preset.params, 0.5);
	assert_near(m.active_params, preset.active_params, 0.5);
}

/* DeepSeek's moe_layer_freq counts from layer 0 (i % freq == 0), Qwen's
 * decoder_sparse_step from layer 1 ((i + 1) % step == 0): on 61 layers with
 * 4 leading dense ones and 2, DeepSeek's are i = 4, 6, .., 60 (29), Qwen's
 * i = 5, 7, .., 59 (28). */
static void model_from_hf_config__layer_freq_vs_sparse_step__distinct(void **state)
{
	static const char *const fmt = "{\"num_hidden_layers\": 61, \"hidden_size\": 256, "
				       "\"num_attention_heads\": 4, \"vocab_size\": 1000, " HF_DENSE
				       "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
				       "\"first_k_dense_replace\": 4, \"%s\": 2}";
	struct dtplan_model ds, qw;
	char json[1024];

	(void)state;
	snprintf(json, sizeof(json), fmt, "moe_layer_freq");
	assert_int_equal(parse_json(json, &ds, NULL), DTPLAN_OK);
	snprintf(json, sizeof(json), fmt, "decoder_sparse_step");
	assert_int_equal(parse_json(json, &qw, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_model_moe_layers(&ds), 29);
	assert_int_equal(dtplan_model_moe_layers(&qw), 28);
	/* one more MoE layer: 6 more expert MLPs of 3 h 256... of width ffn 4h */
	assert_near(ds.params - qw.params, 8 * 3.0 * 256 * 1024 + 8 * 256 - 3.0 * 256 * 1024, 0.5);
}

static const struct {
	const char *keys; /* added to a small dense config */
	enum dtplan_err code;
	const char *needle;
} bad_moe_configs[] = {
	/* the member getters' one code and wording (lib/base/json_get.c) */
	{"\"num_local_experts\": -8", DTPLAN_ERR_PARSE,
	 "num_local_experts: -8 is out of range (0 to 2147483647)"},
	{"\"num_experts\": \"60\"", DTPLAN_ERR_PARSE, "num_experts: expected a whole number"},
	{"\"n_routed_experts\": 8, \"num_experts_per_tok\": 9", DTPLAN_ERR_RANGE,
	 "'num_experts_per_tok': 9 is more than the 8 experts of key 'n_routed_experts'"},
	{"\"num_local_experts\": 8, \"num_experts_per_tok\": -1", DTPLAN_ERR_PARSE,
	 "num_experts_per_tok: -1 is out of range"},
	{"\"num_local_experts\": 8, \"num_experts\": 8", DTPLAN_ERR_PARSE,
	 "'num_local_experts' and 'num_experts' both"},
	{"\"num_experts\": 8, \"moe_intermediate_size\": 0", DTPLAN_ERR_PARSE,
	 "moe_intermediate_size: 0 is out of range (1 to 2147483647)"},
	{"\"num_experts\": 8, \"moe_intermediate_size\": 100, "
	 "\"shared_expert_intermediate_size\": 150",
	 DTPLAN_ERR_PARSE, "'shared_expert_intermediate_size': 150 is not a multiple"},
	{"\"n_routed_experts\": 8, \"n_shared_experts\": -1", DTPLAN_ERR_PARSE,
	 "n_shared_experts: -1 is out of range"},
	{"\"n_routed_experts\": 8, \"first_k_dense_replace\": 1.5", DTPLAN_ERR_PARSE,
	 "first_k_dense_replace: expected a whole number"},
	{"\"n_routed_experts\": 8, \"moe_layer_freq\": 0", DTPLAN_ERR_PARSE,
	 "moe_layer_freq: 0 is out of range"},
	{"\"num_experts\": 8, \"decoder_sparse_step\": 2, \"moe_layer_freq\": 2", DTPLAN_ERR_PARSE,
	 "'moe_layer_freq' and 'decoder_sparse_step'"},
	{"\"num_experts\": 8, \"mlp_only_layers\": 3", DTPLAN_ERR_PARSE, "'mlp_only_layers' must"},
	{"\"num_experts\": 8, \"mlp_only_layers\": [0, 5]", DTPLAN_ERR_UNSUPPORTED, "not entry 1"},
	{"\"n_routed_experts\": 8, \"kv_lora_rank\": -512", DTPLAN_ERR_PARSE,
	 "kv_lora_rank: -512 is out of range"},
	{"\"n_routed_experts\": 8, \"qk_rope_head_dim\": \"64\"", DTPLAN_ERR_PARSE,
	 "qk_rope_head_dim: expected a whole number"},
	{"\"n_routed_experts\": 8, \"v_head_dim\": 0", DTPLAN_ERR_PARSE,
	 "v_head_dim: 0 is out of range"},
	{"\"tie_word_embeddings\": 1", DTPLAN_ERR_PARSE,
	 "tie_word_embeddings: expected true or false"},
	/* leading dense layers that leave no MoE layer */
	{"\"n_routed_experts\": 8, \"first_k_dense_replace\": 4", DTPLAN_ERR_INVAL,
	 "no layer is an MoE layer"},
};

static void model_from_hf_config__bad_moe_values__error_names_key(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_moe_configs) / sizeof(bad_moe_configs[0]); i++) {
		struct dtplan_model m = {.layers = 7};
		struct dtplan_error err = {0};
		char json[1024];
		enum dtplan_err rv;

		snprintf(json, sizeof(json),
			 "{\"num_hidden_layers\": 4, \"hidden_size\": 256, "
			 "\"num_attention_heads\": 4, \"vocab_size\": 1000, %s}",
			 bad_moe_configs[i].keys);
		rv = parse_json(json, &m, &err);
		if (rv != bad_moe_configs[i].code)
			fail_msg("%s: got %d (%s)", bad_moe_configs[i].keys, rv, err.text);
		if (strstr(err.text, bad_moe_configs[i].needle) == NULL)
			fail_msg("%s: message '%s' lacks '%s'", bad_moe_configs[i].keys, err.text,
				 bad_moe_configs[i].needle);
		assert_int_equal(m.layers, 7);
	}
}

/* The model spec's MoE keys. */
static void model_parse__moe_dims__fields_and_layers(void **state)
{
	struct dtplan_model m;
	struct dtplan_error err = {0};

	(void)state;
	/* MoE where i >= 1 and (i + 1) % 2 == 0: i = 1, 3, 5 of 6 */
	if (dtplan_model_parse("layers=6,hidden=256,heads=4,mlp=swiglu,ffn=1024,experts=8,"
			       "top_k=2,moe_ffn=512,shared_experts=1,moe_every=2,first_dense=1",
			       &m, &err) != DTPLAN_OK)
		fail_msg("%s", err.text);
	assert_int_equal(m.experts, 8);
	assert_int_equal(m.top_k, 2);
	assert_int_equal(m.moe_ffn, 512);
	assert_int_equal(m.shared_experts, 1);
	assert_int_equal(m.moe_every, 2);
	assert_false(m.moe_every_from_zero);
	assert_int_equal(m.first_dense, 1);
	assert_int_equal(dtplan_model_moe_layers(&m), 3);
	/* the 6 routed experts not taken on each of the 3 MoE layers, 3 h F each */
	assert_near(m.params - m.active_params, 3 * 6 * 3.0 * 256 * 512, 0.5);
	/* defaults: top_k 1, moe_ffn = ffn, every layer */
	assert_int_equal(dtplan_model_parse("layers=4,hidden=256,heads=4,experts=4", &m, &err),
			 DTPLAN_OK);
	assert_int_equal(m.top_k, 1);
	assert_int_equal(m.moe_ffn, 1024);
	assert_int_equal(dtplan_model_moe_layers(&m), 4);
}

static const struct {
	const char *spec;
	const char *needle;
} bad_moe_specs[] = {
	{"layers=4,hidden=256,heads=4,experts=-8", "experts"},
	{"layers=4,hidden=256,heads=4,experts=0", "experts"},
	{"layers=4,hidden=256,heads=4,experts=8,top_k=9", "top_k 9 is more than the 8 experts"},
	{"layers=4,hidden=256,heads=4,experts=8,top_k=x", "top_k"},
	{"layers=4,hidden=256,heads=4,top_k=2", "need routed experts"},
	{"layers=4,hidden=256,heads=4,shared_experts=1", "need routed experts"},
	{"layers=4,hidden=256,heads=4,experts=8,moe_ffn=0", "moe_ffn"},
	{"layers=4,hidden=256,heads=4,experts=8,shared_experts=-1", "shared_experts"},
	{"layers=4,hidden=256,heads=4,experts=8,moe_every=0", "moe_every"},
	{"layers=4,hidden=256,heads=4,experts=8,first_dense=-1", "first_dense"},
	{"layers=4,hidden=256,heads=4,experts=8,first_dense=4", "no layer is an MoE layer"},
	{"layers=4,hidden=256,heads=4,experts=8,moe_every=5", "no layer is an MoE layer"},
	{"layers=4,hidden=256,heads=4,experts=8,experts=4", "'experts' given twice"},
};

static void model_parse__bad_moe_dims__error_names_key(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_moe_specs) / sizeof(bad_moe_specs[0]); i++) {
		struct dtplan_model m = {.layers = 7};
		struct dtplan_error err = {0};

		if (dtplan_model_parse(bad_moe_specs[i].spec, &m, &err) == DTPLAN_OK)
			fail_msg("%s: accepted", bad_moe_specs[i].spec);
		if (strstr(err.text, bad_moe_specs[i].needle) == NULL)
			fail_msg("%s: message '%s' lacks '%s'", bad_moe_specs[i].spec, err.text,
				 bad_moe_specs[i].needle);
		assert_int_equal(m.layers, 7);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model_parse__presets__published_dims_and_counts),
		cmocka_unit_test(model_presets__table__params_match_count),
		cmocka_unit_test(model_parse__case_insensitive__finds_preset),
		cmocka_unit_test(model_parse__unknown_preset__lists_presets),
		cmocka_unit_test(model_parse__null_or_empty__inval),
		cmocka_unit_test(model_parse__bare_size__derives_dims_keeps_params),
		cmocka_unit_test(model_from_size__bad_values__rejected),
		cmocka_unit_test(model_parse__dims_defaults__gelu_4h_vocab_50257),
		cmocka_unit_test(model_parse__dims_llama2_7b__same_count_as_preset),
		cmocka_unit_test(model_parse__bad_dims__named_error),
		cmocka_unit_test(model_param_count__gqa_and_gelu__by_hand),
		cmocka_unit_test(model_from_hf_config__llama2_7b__matches_preset),
		cmocka_unit_test(model_parse__config_path_not_regular__refused_naming_path),
		cmocka_unit_test(model_parse__tiny_or_signed_size__clear_error),
		cmocka_unit_test(model_from_hf_config__gqa__kv_heads_read),
		cmocka_unit_test(model_from_hf_config__optional_keys__defaults),
		cmocka_unit_test(model_from_hf_config__dropout__probabilities),
		cmocka_unit_test(model_from_hf_config__head_dim__qwen3_moe),
		cmocka_unit_test(model_from_hf_config__bad_files__name_file_and_line),
		cmocka_unit_test(model_from_hf_config__mixtral_keys__experts_and_top_k),
		cmocka_unit_test(
			model_from_hf_config__qwen2_moe_keys__shared_width_and_sparse_step),
		cmocka_unit_test(model_from_hf_config__deepseek_v3_keys__latent_attention),
		cmocka_unit_test(model_from_hf_config__layer_freq_vs_sparse_step__distinct),
		cmocka_unit_test(model_from_hf_config__bad_moe_values__error_names_key),
		cmocka_unit_test(model_parse__moe_dims__fields_and_layers),
		cmocka_unit_test(model_parse__bad_moe_dims__error_names_key),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
