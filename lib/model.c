/*
 * model.c: model presets, HuggingFace config.json and explicit dimensions.
 *
 * Parameter counting rule (dtplan_model_param_count()), h hidden, a heads,
 * k key/value heads, d = h/a head width, f MLP width, V vocabulary, L layers:
 *
 *   attention   q and o: 2h^2; k and v with GQA: 2 h (k d)
 *   MLP         SwiGLU: 3 h f (gate, up, down); GELU: 2 h f
 *   norms       SwiGLU models use RMSNorm without bias: 2h per layer, h final.
 *               GELU models (GPT style) use LayerNorm with bias: 4h per layer,
 *               2h final.
 *   biases      GELU models only: q, k, v, o (2h + 2kd) and MLP (f + h).
 *               SwiGLU models have no linear biases.
 *   embeddings  V h, plus V h for the output head unless tied.
 *   positions   not counted (rotary, ALiBi; GPT-3's 2048 x h learned table is
 *               left out, 0.01% of the model).
 *
 * Llama-2-7B: 32 (4h^2 + 3 h f + 2h) + 2 V h + h with h 4096, f 11008,
 * V 32000 = 6,738,415,616, the count HuggingFace reports.
 */
#include "config.h"

#include "dtplan_private.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_HIDDEN (1 << 20)
#define MAX_PARAMS DTPLAN_MODEL_MAX_PARAMS

/*
 * Published dimensions (HuggingFace config.json of each model; GPT-3 from
 * Brown et al., arXiv 2005.14165, Table 2.1).  params is
 * dtplan_model_param_count() of the row; test_model checks that it stays so.
 */
static const struct dtplan_model presets[] = {
	{.name = "gpt3-175b", .layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96,
	 .ffn = 49152, .vocab = 50257, .max_seq = 2048, .mlp = DTPLAN_MLP_GELU,
	 .tied_embeddings = true, .params = 174579093504.0},
	{.name = "llama2-7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32,
	 .ffn = 11008, .vocab = 32000, .max_seq = 4096, .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 6738415616.0},
	{.name = "llama2-13b", .layers = 40, .hidden = 5120, .heads = 40, .kv_heads = 40,
	 .ffn = 13824, .vocab = 32000, .max_seq = 4096, .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 13015864320.0},
	{.name = "llama2-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8,
	 .ffn = 28672, .vocab = 32000, .max_seq = 4096, .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 68976648192.0},
	{.name = "llama3-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
	 .ffn = 14336, .vocab = 128256, .max_seq = 8192, .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 8030261248.0},
	{.name = "llama3-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8,
	 .ffn = 28672, .vocab = 128256, .max_seq = 8192, .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 70553706496.0},
	/* Llama 3.1 405B, the first 405B release: 128K context. */
	{.name = "llama3-405b", .layers = 126, .hidden = 16384, .heads = 128, .kv_heads = 8,
	 .ffn = 53248, .vocab = 128256, .max_seq = 131072, .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 405853388800.0},
	{.name = "bloom-176b", .layers = 70, .hidden = 14336, .heads = 112, .kv_heads = 112,
	 .ffn = 57344, .vocab = 250880, .max_seq = 2048, .mlp = DTPLAN_MLP_GELU,
	 .tied_embeddings = true, .params = 176247242752.0},
	{.name = "gpt-neox-20b", .layers = 44, .hidden = 6144, .heads = 64, .kv_heads = 64,
	 .ffn = 24576, .vocab = 50432, .max_seq = 2048, .mlp = DTPLAN_MLP_GELU,
	 .params = 20554567680.0},
};

const struct dtplan_model *dtplan_model_presets(size_t *n)
{
	if (n != NULL)
		*n = DTPLAN_ARRAY_SIZE(presets);
	return presets;
}

double dtplan_model_param_count(const struct dtplan_model *m)
{
	double h, kv_dim, f, per_layer, final_norm, embed;

	if (m == NULL || m->heads <= 0 || m->hidden <= 0)
		return 0.0;
	h = m->hidden;
	kv_dim = (double)m->kv_heads * (h / m->heads);
	f = m->ffn;
	per_layer = 2.0 * h * h + 2.0 * h * kv_dim;
	if (m->mlp == DTPLAN_MLP_SWIGLU) {
		per_layer += 3.0 * h * f + 2.0 * h;
		final_norm = h;
	} else {
		per_layer += 2.0 * h * f + 4.0 * h;
		per_layer += (2.0 * h + 2.0 * kv_dim) + (f + h);
		final_norm = 2.0 * h;
	}
	embed = (double)m->vocab * h * (m->tied_embeddings ? 1.0 : 2.0);
	return m->layers * per_layer + final_norm + embed;
}

/* Checks dimensions and sets params unless given.  `source` names the input. */
static enum dtplan_err validate(struct dtplan_model *m, const char *source,
				struct dtplan_error *err)
{
	double params;

	if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || m->kv_heads <= 0 ||
	    m->ffn <= 0 || m->vocab <= 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "layers (%d), hidden (%d), heads (%d), kv_heads (%d), "
				     "ffn (%d) and vocab (%d) must all be positive",
				     m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->vocab);
	if (m->max_seq < 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "sequence length %d must not be negative", m->max_seq);
	if (m->hidden > MAX_HIDDEN)
		return dtplan__error(err, DTPLAN_ERR_RANGE, source, 0,
				     "hidden %d is larger than %d", m->hidden, MAX_HIDDEN);
	if (m->hidden % m->heads != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "heads %d does not divide hidden %d", m->heads, m->hidden);
	if (m->heads % m->kv_heads != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "kv_heads %d does not divide heads %d", m->kv_heads, m->heads);
	params = m->params_given ? m->params : dtplan_model_param_count(m);
	if (!(params <= MAX_PARAMS))
		return dtplan__error(err, DTPLAN_ERR_RANGE, source, 0,
				     "%.3g parameters is more than the %.0e allowed", params,
				     MAX_PARAMS);
	m->params = params;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_model_from_size(double params, struct dtplan_model *m,
				       struct dtplan_error *err)
{
	struct dtplan_model tmp = {0};
	double h;
	char buf[32];

	if (m == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "model size: no output given");
	if (!isfinite(params) || params <= 0.0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "model size %g must be a positive number", params);
	if (params > MAX_PARAMS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "model size %.3g is more than the %.0e parameters allowed",
				     params, MAX_PARAMS);
	/* 1e-300 parameters planned as a "0.00" model (issue 13, finding 21). */
	if (params < DTPLAN_MODEL_MIN_PARAMS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "model size %.6g is less than the %.0f parameters dtplan "
				     "plans for",
				     params, DTPLAN_MODEL_MIN_PARAMS);
	/* N = 12 L h^2 (Kaplan et al., arXiv 2001.08361) with L = h/128. */
	h = round(cbrt(128.0 * params / 12.0) / 128.0) * 128.0;
	if (h < 128.0)
		h = 128.0;
	tmp.hidden = (int)h;
	tmp.layers = tmp.hidden / 128;
	tmp.heads = tmp.hidden / 128;
	tmp.kv_heads = tmp.heads;
	tmp.ffn = 4 * tmp.hidden;
	tmp.vocab = 50257;
	tmp.mlp = DTPLAN_MLP_GELU;
	tmp.params = params;
	tmp.params_given = true;
	dtplan__strlcpy(tmp.name, dtplan_format_count(params, buf, sizeof(buf)), sizeof(tmp.name));
	*m = tmp;
	return DTPLAN_OK;
}

/* Reads a positive integer member; a missing one is an error only when required. */
static enum dtplan_err json_int(json_t *root, const char *key, bool required, int *out,
				const char *path, struct dtplan_error *err)
{
	json_t *v = json_object_get(root, key);
	json_int_t x;

	if (v == NULL || json_is_null(v)) {
		if (required)
			return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					     "missing key '%s'", key);
		return DTPLAN_OK;
	}
	if (!json_is_integer(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				     "key '%s' must be a whole number", key);
	x = json_integer_value(v);
	if (x <= 0 || x > INT32_MAX)
		return dtplan__error(err, DTPLAN_ERR_RANGE, path, 0,
				     "key '%s': %" JSON_INTEGER_FORMAT " is out of range (1 to %d)",
				     key, x, INT32_MAX);
	*out = (int)x;
	return DTPLAN_OK;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * HuggingFace keys: hidden_size, num_hidden_layers, num_attention_heads,
 * vocab_size (required); num_key_value_heads (default heads),
 * intermediate_size (default 4h), max_position_embeddings (default 0),
 * tie_word_embeddings (default true, as in transformers' PretrainedConfig),
 * hidden_act (silu/swish: SwiGLU; gelu*, relu: two matrices; default gelu).
 */
enum dtplan_err dtplan_model_from_hf_config(const char *path, struct dtplan_model *m,
					    struct dtplan_error *err)
{
	struct dtplan_model tmp = {0};
	enum dtplan_err rv;
	json_t *root = NULL, *v;
	char *text = NULL;
	size_t len = 0;

	if (path == NULL || path[0] == '\0' || m == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "config.json: no path given");
		goto out;
	}
	rv = dtplan_file_read(path, DTPLAN_FILE_HF_CONFIG, &text, &len, err);
	if (rv != DTPLAN_OK)
		goto out;
	/* a config.json with a large id2label map still fits */
	root = dtplan__json_load(text, len, (size_t)1 << 20, path, "", err);
	if (root == NULL) {
		rv = DTPLAN_ERR_PARSE;
		goto out;
	}
	if (!json_is_object(root)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				   "expected a JSON object at the top level");
		goto out;
	}
	if ((rv = json_int(root, "num_hidden_layers", true, &tmp.layers, path, err)) ||
	    (rv = json_int(root, "hidden_size", true, &tmp.hidden, path, err)) ||
	    (rv = json_int(root, "num_attention_heads", true, &tmp.heads, path, err)) ||
	    (rv = json_int(root, "vocab_size", true, &tmp.vocab, path, err)))
		goto out;
	tmp.kv_heads = tmp.heads;
	tmp.ffn = tmp.hidden <= INT32_MAX / 4 ? 4 * tmp.hidden : 0;
	if ((rv = json_int(root, "num_key_value_heads", false, &tmp.kv_heads, path, err)) ||
	    (rv = json_int(root, "intermediate_size", false, &tmp.ffn, path, err)) ||
	    (rv = json_int(root, "max_position_embeddings", false, &tmp.max_seq, path, err)))
		goto out;
	tmp.tied_embeddings = true;
	v = json_object_get(root, "tie_word_embeddings");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_boolean(v)) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					   "key 'tie_word_embeddings' must be true or false");
			goto out;
		}
		tmp.tied_embeddings = json_is_true(v);
	}
	tmp.mlp = DTPLAN_MLP_GELU;
	v = json_object_get(root, "hidden_act");
	if (v != NULL && !json_is_null(v)) {
		const char *act = json_string_value(v);

		if (act == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					   "key 'hidden_act' must be a string");
			goto out;
		}
		if (dtplan__streq_nocase(act, "silu") || dtplan__streq_nocase(act, "swish")) {
			tmp.mlp = DTPLAN_MLP_SWIGLU;
		} else if (strncasecmp(act, "gelu", 4) != 0 && !dtplan__streq_nocase(act, "relu")) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					   "key 'hidden_act': unknown activation '%s' (expected "
					   "silu, swish, gelu* or relu)",
					   act);
			goto out;
		}
	}
	dtplan__strlcpy(tmp.name, base_name(path), sizeof(tmp.name));
	rv = validate(&tmp, path, err);
	if (rv != DTPLAN_OK)
		goto out;
	*m = tmp;
	rv = DTPLAN_OK;
out:
	json_decref(root);
	free(text);
	return rv;
}

/* Explicit dimensions: "layers=96,hidden=12288,heads=96[,kv_heads=..]...". */
static enum dtplan_err parse_dims(const char *spec, struct dtplan_model *m,
				  struct dtplan_error *err)
{
	static const char *const keys[] = {"layers", "hidden", "heads", "kv_heads",
					   "ffn",    "vocab",  "seq",   "mlp", "tied"};
	struct dtplan_model tmp = {0};
	enum dtplan_err rv;
	bool seen[DTPLAN_ARRAY_SIZE(keys)] = {false};
	char *copy = NULL, *tok, *save = NULL;

	copy = strdup(spec);
	if (copy == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	tmp.vocab = 50257;
	tmp.mlp = DTPLAN_MLP_GELU;
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		size_t k;
		long x = 0;

		if (eq == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					   "model '%s': '%s' is not key=value", spec, tok);
			goto out;
		}
		*eq = '\0';
		for (k = 0; k < DTPLAN_ARRAY_SIZE(keys); k++)
			if (strcmp(tok, keys[k]) == 0)
				break;
		if (k == DTPLAN_ARRAY_SIZE(keys)) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					   "model '%s': unknown key '%s' (expected layers, hidden, "
					   "heads, kv_heads, ffn, vocab, seq, mlp, tied)",
					   spec, tok);
			goto out;
		}
		if (seen[k]) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					   "model '%s': key '%s' given twice", spec, tok);
			goto out;
		}
		seen[k] = true;
		if (strcmp(tok, "mlp") == 0) {
			if (dtplan__streq_nocase(eq + 1, "gelu")) {
				tmp.mlp = DTPLAN_MLP_GELU;
			} else if (dtplan__streq_nocase(eq + 1, "swiglu")) {
				tmp.mlp = DTPLAN_MLP_SWIGLU;
			} else {
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
						   "model '%s': mlp '%s' is not gelu or swiglu",
						   spec, eq + 1);
				goto out;
			}
			continue;
		}
		if (strcmp(tok, "tied") == 0) {
			rv = dtplan_parse_bool(eq + 1, "tied", &tmp.tied_embeddings, err);
			if (rv != DTPLAN_OK)
				goto out;
			continue;
		}
		rv = dtplan_parse_long(eq + 1, tok, strcmp(tok, "seq") == 0 ? 0 : 1, INT32_MAX, &x,
				       err);
		if (rv != DTPLAN_OK)
			goto out;
		if (strcmp(tok, "layers") == 0)
			tmp.layers = (int)x;
		else if (strcmp(tok, "hidden") == 0)
			tmp.hidden = (int)x;
		else if (strcmp(tok, "heads") == 0)
			tmp.heads = (int)x;
		else if (strcmp(tok, "kv_heads") == 0)
			tmp.kv_heads = (int)x;
		else if (strcmp(tok, "ffn") == 0)
			tmp.ffn = (int)x;
		else if (strcmp(tok, "vocab") == 0)
			tmp.vocab = (int)x;
		else
			tmp.max_seq = (int)x;
	}
	for (size_t k = 0; k < 3; k++) {
		if (!seen[k]) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					   "model '%s': missing key '%s' (layers, hidden and heads "
					   "are required)",
					   spec, keys[k]);
			goto out;
		}
	}
	if (!seen[3])
		tmp.kv_heads = tmp.heads;
	if (!seen[4]) {
		if (tmp.hidden > MAX_HIDDEN) {
			rv = dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					   "model '%s': hidden %d is larger than %d", spec,
					   tmp.hidden, MAX_HIDDEN);
			goto out;
		}
		tmp.ffn = 4 * tmp.hidden;
	}
	rv = validate(&tmp, "", err);
	if (rv != DTPLAN_OK)
		goto out;
	dtplan__strlcpy(tmp.name, spec, sizeof(tmp.name));
	*m = tmp;
	rv = DTPLAN_OK;
out:
	free(copy);
	return rv;
}

static enum dtplan_err unknown_preset(const char *spec, struct dtplan_error *err)
{
	char list[512] = "";
	size_t len = 0;

	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(presets); i++) {
		int w = snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
				 presets[i].name);

		if (w < 0 || (size_t)w >= sizeof(list) - len)
			break;
		len += (size_t)w;
	}
	return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0,
			     "unknown model '%s' (presets: %s; or a size such as 7B, a config.json "
			     "path, or layers=..,hidden=..,heads=..)",
			     spec, list);
}

enum dtplan_err dtplan_model_parse(const char *spec, struct dtplan_model *m,
				   struct dtplan_error *err)
{
	size_t len;
	double n;
	enum dtplan_err rv;

	if (spec == NULL || spec[0] == '\0' || m == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "missing model");
	len = strlen(spec);
	if (strchr(spec, '/') != NULL || (len >= 5 && strcasecmp(spec + len - 5, ".json") == 0))
		return dtplan_model_from_hf_config(spec, m, err);
	if (strchr(spec, '=') != NULL)
		return parse_dims(spec, m, err);
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(presets); i++) {
		if (dtplan__streq_nocase(spec, presets[i].name)) {
			*m = presets[i];
			return DTPLAN_OK;
		}
	}
	/* "-7B" is a size with a sign, not an unknown preset. */
	if ((spec[0] == '-' || spec[0] == '+') &&
	    ((spec[1] >= '0' && spec[1] <= '9') || spec[1] == '.'))
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "model size '%s' must be positive, without a sign (such as "
				     "7B)",
				     spec);
	if ((spec[0] >= '0' && spec[0] <= '9') || spec[0] == '.') {
		rv = dtplan_parse_count(spec, "model size", &n, err);
		if (rv != DTPLAN_OK)
			return rv;
		rv = dtplan_model_from_size(n, m, err);
		if (rv == DTPLAN_OK)
			dtplan__strlcpy(m->name, spec, sizeof(m->name));
		return rv;
	}
	return unknown_preset(spec, err);
}

void dtplan__model_parts(const struct dtplan_model *m, struct dtplan__model_parts *out)
{
	double vh, untied;

	memset(out, 0, sizeof(*out));
	if (m == NULL || m->layers < 1 || !(m->params > 0.0))
		return;
	vh = m->vocab > 0 && m->hidden > 0 ? (double)m->vocab * m->hidden : 0.0;
	untied = m->tied_embeddings ? 0.0 : vh;
	if (vh > 0.0 && m->params - vh - untied > 0.0) {
		out->embedding = vh;
		out->head = vh;
		out->head_flops_params = vh;
		out->per_layer = (m->params - vh - untied) / m->layers;
	} else {
		out->per_layer = m->params / m->layers;
	}
}
