/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * request.c: the request's one home: its defaults, the site configuration
 * applied to it, the user's options as text (--dt-plan, --dt-train, the
 * global batch), the defaults it resolves at planning time and its checks.
 * The SPANK plugin and the CLI share all of it.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "model/model.h"
#include "plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Defaults and the site
 * ---------------------------------------------------------------------- */

void dtplan_request_init(struct dtplan_request *r)
{
	struct dtplan_config defaults;
	const struct dtplan_gpu *gpu;

	if (r == NULL)
		return;
	memset(r, 0, sizeof(*r));
	gpu = dtplan_gpu_find("h100-sxm", NULL);
	if (gpu != NULL)
		r->gpu = *gpu;
	r->gpus_per_node = 8;
	r->seq = 0; /* dtplan_request_seq() */
	r->global_batch = 1024;
	r->zero = -1;
	r->recompute = -1;
	r->offload = -1;
	r->framework = DTPLAN_FRAMEWORK_DEEPSPEED;
	r->attention = DTPLAN_ATTENTION_FLASH;
	r->precision = DTPLAN_PRECISION_BF16;
	r->memory_headroom = 0.1;
	r->step_cv = DTPLAN_STEP_CV_UNSET; /* dtplan_request_step_cv() resolves it */
	/* Fabric, reliability and thresholds: the site defaults, which live in
	 * dtplan_config_init() only, so a plan with and without a site file
	 * that sets nothing agree. */
	dtplan_config_init(&defaults);
	dtplan_request_apply_config(r, &defaults);
}

/* Copies v into *dst when the site set it (> 0). */
static void take(double *dst, double v)
{
	if (v > 0.0 && isfinite(v))
		*dst = v;
}

void dtplan_request_apply_config(struct dtplan_request *r, const struct dtplan_config *c)
{
	const struct dtplan_gpu *gpu;

	if (r == NULL || c == NULL)
		return;
	if (c->gpu_type[0] != '\0') {
		gpu = dtplan_gpu_find(c->gpu_type, NULL);
		if (gpu != NULL) {
			r->gpu = *gpu;
			r->gpu_from = DTPLAN_GPU_FROM_SITE;
		}
	}
	take(&r->net_bytes_per_s, c->net_bytes_per_s);
	take(&r->net_latency_s, c->net_latency_s);
	take(&r->nvlink_bytes_per_s, c->nvlink_bytes_per_s);
	take(&r->nvlink_latency_s, c->nvlink_latency_s);
	take(&r->mtbf_gpu_hours, c->mtbf_gpu_hours);
	take(&r->ckpt_write_bytes_per_s, c->ckpt_write_bytes_per_s);
	if (c->restart_seconds >= 0.0 && isfinite(c->restart_seconds))
		r->restart_seconds = c->restart_seconds;
	take(&r->oversub_threshold, c->oversub_threshold);
	take(&r->bubble_threshold, c->bubble_threshold);
	take(&r->exposed_comm_threshold, c->exposed_comm_threshold);
	if (c->slowdown_threshold >= 0.0 && isfinite(c->slowdown_threshold))
		r->slowdown_threshold = c->slowdown_threshold;
	if (c->mfu_efficiency > 0.0 && c->mfu_efficiency <= 1.0)
		r->efficiency = c->mfu_efficiency;
	if (c->step_cv >= 0.0 && c->step_cv <= DTPLAN_STEP_CV_MAX)
		r->step_cv = c->step_cv;
}

/* ------------------------------------------------------------------------
 * Resolving and checking
 * ---------------------------------------------------------------------- */

double dtplan_request_usable_memory(const struct dtplan_request *r)
{
	return r->gpu.memory_bytes * (1.0 - r->memory_headroom);
}

void dtplan__ledger_in(const struct dtplan_request *r, const struct dtplan_candidate *c,
		       struct dtplan_ledger_in *out)
{
	struct dtplan_ledger_in in = {
		.split = c->split,
		.model = &r->model,
		.no_master_copy = r->no_master_copy,
		.bf16_moments = r->moments == DTPLAN_MOMENTS_BF16,
		.grads = r->grads,
		.seq = r->seq,
		.sequence_parallel = c->tp > 1,
		.stages = &c->stages,
		.framework = r->framework,
		.attention = r->attention,
		.fp8 = r->precision != DTPLAN_PRECISION_BF16,
		.gemm_in_bytes = dtplan__precision_in_bytes(r->precision),
		.dualpipe = c->dualpipe,
	};

	in.num_microbatches = c->num_microbatches;
	*out = in;
}

enum dtplan_err dtplan_request_model_state(const struct dtplan_request *r,
					   struct dtplan_ledger *out, struct dtplan_error *err)
{
	struct dtplan_candidate c = {.tp = 1, .pp = 1, .dp = 1, .ep = 1, .cp = 1, .vp = 1, .etp = 1};
	struct dtplan_ledger_in in;
	enum dtplan_err rv;

	if (r == NULL || out == NULL || r->model.params <= 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no model to count");
	dtplan__ledger_in(r, &c, &in);
	in.seq = 0; /* no activations */
	in.stages = NULL;
	rv = dtplan_ledger_compute(&in, out, err);
	if (rv != DTPLAN_OK)
		return rv;
	out->activations = 0.0;
	out->total = out->weights + out->gradients + out->optimizer;
	return DTPLAN_OK;
}

int dtplan_request_seq(const struct dtplan_request *r, enum dtplan_seq_from *from)
{
	enum dtplan_seq_from f = DTPLAN_SEQ_FROM_USER;
	int seq = r != NULL ? r->seq : 0;

	if (r != NULL && seq == 0) {
		f = r->model.train_seq > 0 ? DTPLAN_SEQ_FROM_PRETRAINING
		    : r->model.max_seq > 0 ? DTPLAN_SEQ_FROM_CONTEXT
					   : DTPLAN_SEQ_FROM_DEFAULT;
		seq = r->model.train_seq > 0 ? r->model.train_seq
		      : r->model.max_seq > 0 ? r->model.max_seq
					     : DTPLAN_DEFAULT_SEQ;
	} else if (r != NULL) {
		f = r->seq_from;
	}
	if (from != NULL)
		*from = f;
	return seq;
}

const char *dtplan_request_seq_source(const struct dtplan_request *r, char *buf, size_t size)
{
	enum dtplan_seq_from from;

	if (buf == NULL || size == 0)
		return buf;
	buf[0] = '\0';
	if (r == NULL)
		return buf;
	dtplan_request_seq(r, &from);
	switch (from) {
	case DTPLAN_SEQ_FROM_USER:
		break;
	case DTPLAN_SEQ_FROM_PRETRAINING:
		snprintf(buf, size, "%s's pre-training length", r->model.name);
		break;
	case DTPLAN_SEQ_FROM_CONTEXT:
		snprintf(buf, size, "the model's context length");
		break;
	case DTPLAN_SEQ_FROM_DEFAULT:
		snprintf(buf, size, "dtplan's default");
		break;
	}
	return buf;
}

static const char *const seq_from_names[] = {
	[DTPLAN_SEQ_FROM_USER] = "given",
	[DTPLAN_SEQ_FROM_PRETRAINING] = "pretraining",
	[DTPLAN_SEQ_FROM_CONTEXT] = "context",
	[DTPLAN_SEQ_FROM_DEFAULT] = "default",
};

const char *dtplan_seq_from_name(enum dtplan_seq_from from)
{
	if ((size_t)from >= DTPLAN_ARRAY_SIZE(seq_from_names))
		return "given";
	return seq_from_names[from];
}

bool dtplan_seq_from_parse(const char *name, enum dtplan_seq_from *from)
{
	for (size_t i = 0; name != NULL && i < DTPLAN_ARRAY_SIZE(seq_from_names); i++) {
		if (strcmp(name, seq_from_names[i]) == 0) {
			if (from != NULL)
				*from = (enum dtplan_seq_from)i;
			return true;
		}
	}
	return false;
}

const struct dtplan_request *dtplan__request_resolve(const struct dtplan_request *req,
						     struct dtplan_request *buf)
{
	if (req == NULL || req->seq != 0)
		return req;
	*buf = *req;
	buf->seq = dtplan_request_seq(req, &buf->seq_from);
	return buf;
}

enum dtplan_err dtplan__request_check(const struct dtplan_request *req, struct dtplan_error *err)
{
	const struct dtplan_model *m;
	const char *bad = NULL;

	if (req == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no request");
	m = &req->model;
	if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 0)
		bad = "model dimensions (layers, hidden, heads) must be >= 1";
	else if (!(m->params > 0.0) || !isfinite(m->params))
		bad = "model parameter count must be > 0";
	else if (req->gpus < 1)
		bad = "gpus must be >= 1";
	else if (req->gpus_per_node < 1)
		bad = "gpus_per_node must be >= 1";
	else if (req->seq < 1)
		bad = "sequence length must be >= 1";
	else if (req->global_batch < 1)
		bad = "global batch must be >= 1";
	else if (!(req->gpu.memory_bytes > 0.0) || !(req->gpu.peak_bf16_flops > 0.0))
		bad = "GPU memory and peak FLOP/s must be > 0";
	else if (!(req->gpu.hbm_bytes_per_s > 0.0) || !(req->gpu.matmul_efficiency > 0.0) ||
		 !(req->gpu.matmul_efficiency <= 1.0) || req->gpu.sms < 1)
		bad = "GPU memory bandwidth, matmul efficiency (0, 1] and SM count must be > 0";
	else if (req->gpu.domain_size < 1)
		bad = "GPU NVLink domain size must be >= 1";
	else if (!(req->efficiency > 0.0 && req->efficiency <= 1.0))
		bad = "efficiency must be in (0, 1]";
	else if (!(req->memory_headroom >= 0.0 && req->memory_headroom < 1.0))
		bad = "memory headroom must be in [0, 1)";
	else if (!(req->net_bytes_per_s > 0.0) ||
		 !(req->nvlink_bytes_per_s > 0.0 || req->gpu.nvlink_bytes_per_s > 0.0))
		bad = "network and NVLink bandwidths must be > 0";
	else if (req->net_latency_s < 0.0 || req->nvlink_latency_s < 0.0)
		bad = "latencies must be >= 0";
	else if (req->tp < 0 || req->pp < 0 || req->micro_batch < 0 || req->ep < 0 || req->cp < 0 ||
		 req->etp < 0)
		bad = "fixed tp, pp, ep, etp, cp and micro-batch must be >= 0 (0: search)";
	else if (req->zero < -1 || req->zero > 3)
		bad = "fixed ZeRO stage must be 0 to 3 (-1: search)";
	else if (req->recompute < -1 || req->recompute > DTPLAN_RECOMPUTE_FULL)
		bad = "fixed recompute must be none, selective, fine or full (-1: search)";
	else if (req->vp < 0 || req->offload < -1 || req->offload > 1)
		bad = "fixed interleaving must be >= 0 (0: search), offload -1, 0 or 1";
	else if (dtplan__framework(req->framework) == NULL || req->attention < 0 ||
		 req->attention > DTPLAN_ATTENTION_FLASH || req->precision < 0 ||
		 req->precision > DTPLAN_PRECISION_NVFP4 || req->schedule < 0 ||
		 req->schedule > DTPLAN_SCHEDULE_DUALPIPE || req->moments < 0 ||
		 req->moments > DTPLAN_MOMENTS_BF16 || req->grads < 0 ||
		 req->grads > DTPLAN_GRADS_BF16)
		bad = "framework, attention, precision, schedule, moments or grads out of range";
	else if (!(req->train_tokens >= 0.0) || !isfinite(req->train_tokens))
		bad = "training tokens must be >= 0";
	if (bad != NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "%s", bad);
	return DTPLAN_OK;
}

/* What r's GPU type cannot do. */
static enum dtplan_err check_gpu(const struct dtplan_request *r, struct dtplan_error *err)
{
	if (r->offload == 1 && !(r->gpu.host_bytes_per_s > 0.0))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "offload", 0,
				     "%s has no host link to offload over", r->gpu.name);
	if (r->precision == DTPLAN_PRECISION_FP8 && !(r->gpu.peak_fp8_flops > 0.0))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "precision", 0,
				     "%s has no fp8 tensor cores (fp8 needs Hopper, Blackwell or "
				     "MI300)",
				     r->gpu.name);
	if ((r->precision == DTPLAN_PRECISION_MXFP8 || r->precision == DTPLAN_PRECISION_NVFP4) &&
	    !(r->gpu.peak_fp4_flops > 0.0 && r->gpu.peak_fp8_flops > 0.0))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "precision", 0,
				     "%s has no block-scaled tensor cores (%s needs Blackwell: "
				     "B200, GB200, B300, GB300; Hopper has no MX formats)",
				     r->gpu.name, dtplan_precision_name(r->precision));
	return DTPLAN_OK;
}

/* The split r pins, for the training rules (lib/model/rules.c). */
static void split_of(const struct dtplan_request *r, struct dtplan__split *s)
{
	dtplan__split_init(s, &r->model);
	s->framework = r->framework;
	s->attention = r->attention;
	s->schedule = r->schedule;
	s->moments = r->moments;
	s->grads = r->grads;
	s->split = r->split;
	s->seq = r->seq; /* 0 at submission without seq=: the model's, known later */
}

/*
 * r's pins against the model's and the training's `rules`, then what r's
 * GPU type cannot do when the user named it (gpu= wins over the nodes' GPUs,
 * lib/plan/plan.c, so its limits are known at submission); with the GPU
 * count (gpus): the count rules, the micro-batch and the GPU type whoever
 * chose it.
 */
static enum dtplan_err check_pins(const struct dtplan_request *r, unsigned rules, bool gpus,
				  struct dtplan_error *err)
{
	struct dtplan__split s;
	enum dtplan_err rv;

	split_of(r, &s);
	rv = dtplan__split_check(&s, rules, err);
	if (rv == DTPLAN_OK && r->gpu_from == DTPLAN_GPU_FROM_USER)
		rv = check_gpu(r, err);
	if (rv != DTPLAN_OK || !gpus)
		return rv;
	s.gpus = r->gpus;
	rv = dtplan__split_check(&s, DTPLAN__RULE_GPUS, err);
	if (rv != DTPLAN_OK)
		return rv;
	/* a pinned EP (or ETP) beside a pinned TP and PP: the expert groups
	 * must fold into each stage's TP x CP x DP ranks, whatever CP, with
	 * the unpinned ETP the search tries that allows most (1, or TP's where
	 * the framework shards its experts by TP) */
	if ((r->ep > 1 || r->etp > 0) && r->tp > 0 && r->pp > 0 && r->gpus % (r->tp * r->pp) == 0) {
		const struct dtplan__framework *fw = dtplan__framework(r->framework);

		s.cp = 1;
		s.dp = r->gpus / (r->tp * r->pp);
		if (s.etp == 0)
			s.etp = fw != NULL && !fw->fold && fw->ep_with_tp ? r->tp : 1;
		if (s.ep == 0)
			s.ep = 1;
		rv = dtplan__split_check(&s, DTPLAN__RULE_EP_DP | DTPLAN__RULE_FRAMEWORK, err);
		if (rv != DTPLAN_OK)
			return rv;
	}
	if (r->micro_batch > r->global_batch)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "micro-batch", 0,
				     "micro-batch %d is larger than the global batch %d",
				     r->micro_batch, r->global_batch);
	return check_gpu(r, err);
}

enum dtplan_err dtplan_request_check_train(const struct dtplan_request *r, struct dtplan_error *err)
{
	return check_pins(r, DTPLAN__RULES_TRAIN, false, err);
}

enum dtplan_err dtplan_request_check_model(const struct dtplan_request *r, struct dtplan_error *err)
{
	return check_pins(r, DTPLAN__RULES_MODEL | DTPLAN__RULES_TRAIN, false, err);
}

/* Fixed choices that can never be met are usage errors, not "no fit". */
enum dtplan_err dtplan__request_check_fixed(const struct dtplan_request *r,
					    struct dtplan_error *err)
{
	return check_pins(r, DTPLAN__RULES_MODEL | DTPLAN__RULES_TRAIN, true, err);
}

/* ------------------------------------------------------------------------
 * Options as text
 * ---------------------------------------------------------------------- */

static const char *const mode_names[] = {
	[DTPLAN_MODE_OFF] = "off",
	[DTPLAN_MODE_AUTO] = "auto",
	[DTPLAN_MODE_STRICT] = "strict",
};

enum dtplan_err dtplan_mode_parse(const char *text, enum dtplan_mode *out, struct dtplan_error *err)
{
	for (size_t i = 0; text != NULL && i < DTPLAN_ARRAY_SIZE(mode_names); i++) {
		if (dtplan__streq_nocase(text, mode_names[i])) {
			*out = (enum dtplan_mode)i;
			return DTPLAN_OK;
		}
	}
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
			     "unknown mode '%s' (expected auto, strict or off)", text ? text : "");
}

/* The keys of --dt-train that are more than a whole number in a range. */
static enum dtplan_err train_gbs(void *obj, const struct dtplan__kv_key *k, const char *value,
				 struct dtplan_error *err)
{
	return dtplan_parse_global_batch(value, k->name, obj, err);
}

static enum dtplan_err train_recompute(void *obj, const struct dtplan__kv_key *k, const char *value,
				       struct dtplan_error *err)
{
	struct dtplan_request *r = obj;
	enum dtplan_recompute rc;
	enum dtplan_err ret;

	(void)k;
	/* "auto" leaves the choice to the search. */
	if (dtplan__streq_nocase(value, "auto")) {
		r->recompute = -1;
		return DTPLAN_OK;
	}
	ret = dtplan_recompute_parse(value, &rc, err);
	if (ret != DTPLAN_OK)
		return ret;
	r->recompute = (int)rc;
	return DTPLAN_OK;
}

static enum dtplan_err train_gpu(void *obj, const struct dtplan__kv_key *k, const char *value,
				 struct dtplan_error *err)
{
	struct dtplan_request *r = obj;
	const struct dtplan_gpu *gpu;

	(void)k;
	gpu = dtplan_gpu_find(value, err);
	if (gpu == NULL)
		return err ? err->code : DTPLAN_ERR_NOT_FOUND;
	r->gpu = *gpu;
	r->gpu_from = DTPLAN_GPU_FROM_USER;
	return DTPLAN_OK;
}

static enum dtplan_err train_offload(void *obj, const struct dtplan__kv_key *k, const char *value,
				     struct dtplan_error *err)
{
	struct dtplan_request *r = obj;
	bool yes;

	if (dtplan__streq_nocase(value, "auto")) {
		r->offload = -1;
		return DTPLAN_OK;
	}
	if (dtplan_parse_bool(value, k->name, &yes, NULL) != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "offload: '%s' is not auto, yes or no", value);
	r->offload = yes ? 1 : 0;
	return DTPLAN_OK;
}

static enum dtplan_err train_calibration(void *obj, const struct dtplan__kv_key *k,
					 const char *value, struct dtplan_error *err)
{
	struct dtplan_request *r = obj;
	bool on;

	if (dtplan_parse_bool(value, k->name, &on, NULL) != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "calibration: '%s' is not on or off", value);
	r->calibration_off = !on;
	return DTPLAN_OK;
}

static enum dtplan_err train_tokens(void *obj, const struct dtplan__kv_key *k, const char *value,
				    struct dtplan_error *err)
{
	struct dtplan_request *r = obj;
	enum dtplan_err ret;

	ret = dtplan_parse_count(value, k->name, &r->train_tokens, err);
	if (ret == DTPLAN_OK && r->train_tokens > DTPLAN_MAX_TRAIN_TOKENS)
		ret = dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				    "tokens=%s is more than the %.0e tokens dtplan plans for",
				    value, DTPLAN_MAX_TRAIN_TOKENS);
	return ret;
}

/* framework=, attention=, ...: the public name parsers, with their messages. */
#define TRAIN_NAME_FN(field, fn)                                                                   \
	static enum dtplan_err train_##field(void *obj, const struct dtplan__kv_key *k,            \
					     const char *value, struct dtplan_error *err)          \
	{                                                                                          \
		(void)k;                                                                           \
		return fn(value, (int *)&((struct dtplan_request *)obj)->field, err);              \
	}
TRAIN_NAME_FN(framework, dtplan_framework_parse)
TRAIN_NAME_FN(attention, dtplan_attention_parse)
TRAIN_NAME_FN(precision, dtplan_precision_parse)
TRAIN_NAME_FN(schedule, dtplan_schedule_parse)
TRAIN_NAME_FN(moments, dtplan_moments_parse)
TRAIN_NAME_FN(grads, dtplan_grads_parse)

#define TRAIN_INT(n, field, lo, hi)                                                                \
	{                                                                                          \
		.name = n, .kind = DTPLAN__KV_INT,                                                 \
		.offset = offsetof(struct dtplan_request, field), .min = lo, .max = hi             \
	}
#define TRAIN_CUSTOM(n, fn)                                                                        \
	{                                                                                          \
		.name = n, .kind = DTPLAN__KV_CUSTOM, .parse = fn                                  \
	}

static const struct dtplan__kv_key train_keys[] = {
	TRAIN_INT("seq", seq, 1, 1L << 24),
	TRAIN_CUSTOM("gbs", train_gbs),
	TRAIN_INT("tp", tp, 1, 4096),
	TRAIN_INT("pp", pp, 1, 4096),
	TRAIN_INT("ep", ep, 1, 4096),
	TRAIN_INT("etp", etp, 1, 4096),
	TRAIN_INT("cp", cp, 1, 4096),
	TRAIN_INT("zero", zero, 0, 3),
	TRAIN_INT("mb", micro_batch, 1, 1L << 16),
	TRAIN_CUSTOM("recompute", train_recompute),
	TRAIN_CUSTOM("gpu", train_gpu),
	TRAIN_INT("vp", vp, 1, 4096),
	TRAIN_CUSTOM("offload", train_offload),
	TRAIN_CUSTOM("framework", train_framework),
	TRAIN_CUSTOM("attention", train_attention),
	TRAIN_CUSTOM("precision", train_precision),
	TRAIN_CUSTOM("schedule", train_schedule),
	TRAIN_CUSTOM("moments", train_moments),
	TRAIN_CUSTOM("grads", train_grads),
	TRAIN_CUSTOM("tokens", train_tokens),
	TRAIN_CUSTOM("calibration", train_calibration),
};

static const struct dtplan__kv_table train_table = {
	.keys = train_keys,
	.n = DTPLAN_ARRAY_SIZE(train_keys),
	.sep = ',',
	.nocase = false,
};

enum dtplan_err dtplan_parse_global_batch(const char *text, const char *what,
					  struct dtplan_request *r, struct dtplan_error *err)
{
	char buf[32];
	size_t len = text != NULL ? strlen(text) : 0;
	bool exact = len > 0 && text[len - 1] == '!';
	enum dtplan_err rv;
	long v;

	if (len == 0 || len >= sizeof(buf))
		return dtplan__error(err, DTPLAN_ERR_PARSE, what ? what : "", 0,
				     "'%s' is not a global batch (N, or N! for exactly N)",
				     text ? text : "");
	memcpy(buf, text, len - exact);
	buf[len - exact] = '\0';
	rv = dtplan_parse_long(buf, what, 1, DTPLAN_MAX_GLOBAL_BATCH, &v, err);
	if (rv != DTPLAN_OK)
		return rv;
	r->global_batch = (int)v;
	r->exact_batch = exact;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_request_parse_train(struct dtplan_request *r, const char *text,
					   struct dtplan_error *err)
{
	struct dtplan_request tmp;
	char known[256];
	enum dtplan_err rv;

	if (r == NULL || text == NULL || text[0] == '\0') {
		dtplan__kv_known(&train_table, known, sizeof(known));
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "empty training spec (expected key=value pairs: %s)", known);
	}
	/* Work on a copy so that a bad spec leaves *r untouched. */
	tmp = *r;
	rv = dtplan__kv_parse(&train_table, text, &tmp, NULL, NULL, err);
	if (rv != DTPLAN_OK)
		return rv;
	if (tmp.micro_batch > tmp.global_batch)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "mb=%d is larger than gbs=%d",
				     tmp.micro_batch, tmp.global_batch);
	*r = tmp;
	return DTPLAN_OK;
}
