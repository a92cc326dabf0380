/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.c: the site configuration's settings.  Defaults
 * (dtplan_config_init(), the only place they live), the table of global
 * settings and their values, and lookups.  lib/site/config_site.c reads the site
 * file and lib/site/config_args.c the plugstack.conf arguments through this
 * file's dtplan__config_* calls.
 *
 * dtplan.conf is Slurm-style: whitespace-separated Key=Value tokens, keys
 * case-insensitive, '#' to the end of the line is a comment.  A line starting
 * with SwitchName= describes switches (Oversubscription=, UplinkBandwidth=),
 * one starting with NodeName= describes a set of nodes (GpuType=, Gpus=,
 * NVLinkDomain=); any other line holds global settings.  A setting given
 * twice must keep its value.
 *
 * plugstack.conf arguments are key=value tokens (snake_case names of the same
 * settings, plus site=, topology= and nccl_ib_hca=).  The site file named by
 * site= is read first; the other arguments then override it.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "site/site_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum kind {
	K_MODE,      /* off|auto */
	K_POLICY,    /* warn|deny */
	K_HCA,       /* off|node (enum dtplan_nccl_ib_hca) */
	K_PATH,      /* file or folder path, "" allowed */
	K_GPU,       /* a GPU type from the catalog, "" allowed */
	K_TIME,      /* dtplan_parse_time, in [min, max] */
	K_RATE,      /* dtplan_parse_rate, in [min, max] */
	K_RATE_OR_0, /* as K_RATE, or "0" for unset (taken from elsewhere) */
	K_NUMBER,    /* plain number in [min, max] */
	K_RATIO,     /* "4:1", "1.5:1", "4", in [min, max] */
	K_INT,       /* a whole number in [min, max] */
	K_PORTS,     /* "LO-HI", two ports in [min, max], LO <= HI (int[2]) */
	K_URL,       /* an http:// or https:// URL, "" allowed */
	K_BYTES,     /* dtplan_parse_bytes, in [min, max] */
	K_FORMAT,    /* auto|json|topology.conf (enum dtplan_fabric_answer) */
};

struct dtplan__config_setting {
	const char *key; /* site file name, NULL: plugstack argument only */
	const char *arg; /* plugstack argument name */
	enum kind kind;
	size_t offset; /* in struct dtplan_config */
	size_t size;   /* string fields */
	double min, max;
	bool min_open; /* min itself is not allowed */
};

/*
 * Bounds of the numbers (doc/internals/limits.md): finite, and sane enough
 * that no plan divides by nearly zero or prints "inf s".  Link bandwidths
 * from 1 MB/s to 100 TB/s; oversubscription from 1:10 to 1000:1.
 */
#define RATE_MIN 1e6
#define RATE_MAX 1e14
#define CKPT_RATE_MAX 1e15
#define RATIO_MIN 0.1
#define RATIO_MAX 1000.0

#define OFF(f) offsetof(struct dtplan_config, f)
#define STR(f) OFF(f), sizeof(((struct dtplan_config *)0)->f)

static const struct dtplan__config_setting settings[] = {
	{"Default", "default", K_MODE, OFF(default_mode), 0, 0, 0, false},
	{"Policy", "policy", K_POLICY, OFF(policy), 0, 0, 0, false},
	{NULL, "site", K_PATH, STR(site_file), 0, 0, false},
	{NULL, "topology", K_PATH, STR(topology_file), 0, 0, false},
	{NULL, "nccl_ib_hca", K_HCA, OFF(nccl_ib_hca), 0, 0, 0, false},
	{"CacheDir", "cache_dir", K_PATH, STR(cache_dir), 0, 0, false},
	{"JsonDir", "json_dir", K_PATH, STR(json_dir), 0, 0, false},
	{"ProbeTimeout", "probe_timeout", K_TIME, OFF(probe_timeout_s), 0, 1e-3, 3600, false},
	{"SpoolDir", "spool_dir", K_PATH, STR(spool_dir), 0, 0, false},
	{"ProbeBudget", "probe_budget", K_TIME, OFF(probe_budget_s), 0, 0.5, 120, false},
	{"ProbePorts", "probe_ports", K_PORTS, OFF(probe_ports), 0, 1, 65535, false},
	{"ProbeFanout", "probe_fanout", K_INT, OFF(probe_fanout), 0, 2, 1024, false},
	{"NodeXml", "node_xml", K_PATH, STR(node_xml), 0, 0, false},
	{"ProbeInterface", "probe_interface", K_PATH, STR(probe_interface), 0, 0, false},
	{"MungeSocket", "munge_socket", K_PATH, STR(munge_socket), 0, 0, false},
	{"NetworkBandwidth", "net_bandwidth", K_RATE, OFF(net_bytes_per_s), 0, RATE_MIN, RATE_MAX,
	 false},
	{"NetworkLatency", "net_latency", K_TIME, OFF(net_latency_s), 0, 0, 1, false},
	{"NVLinkBandwidth", "nvlink_bandwidth", K_RATE_OR_0, OFF(nvlink_bytes_per_s), 0, RATE_MIN,
	 RATE_MAX, false},
	{"NVLinkLatency", "nvlink_latency", K_TIME, OFF(nvlink_latency_s), 0, 0, 1, false},
	{"GpuType", "gpu_type", K_GPU, STR(gpu_type), 0, 0, false},
	{"MtbfGpuHours", "mtbf_gpu_hours", K_NUMBER, OFF(mtbf_gpu_hours), 0, 1, 1e12, false},
	{"CheckpointWriteBandwidth", "ckpt_write_bandwidth", K_RATE, OFF(ckpt_write_bytes_per_s), 0,
	 RATE_MIN, CKPT_RATE_MAX, false},
	{"RestartTime", "restart_time", K_TIME, OFF(restart_seconds), 0, 0, 1e7, false},
	{"OversubscriptionThreshold", "oversub_threshold", K_RATIO, OFF(oversub_threshold), 0, 1,
	 1e6, false},
	{"BubbleThreshold", "bubble_threshold", K_NUMBER, OFF(bubble_threshold), 0, 0, 1, false},
	{"ExposedCommThreshold", "exposed_comm_threshold", K_NUMBER, OFF(exposed_comm_threshold), 0,
	 0, 1, false},
	{"SlowdownThreshold", "slowdown_threshold", K_NUMBER, OFF(slowdown_threshold), 0, 0, 1,
	 false},
	{"ComputeEfficiency", "compute_efficiency", K_NUMBER, OFF(mfu_efficiency), 0, 0.01, 1,
	 false},
	{"StepTimeCV", "step_time_cv", K_NUMBER, OFF(step_cv), 0, 0, DTPLAN_STEP_CV_MAX, false},
	{"FabricURL", "fabric_url", K_URL, STR(fabric_url), 0, 0, false},
	{"FabricCache", "fabric_cache", K_PATH, STR(fabric_cache), 0, 0, false},
	{"FabricCacheTTL", "fabric_cache_ttl", K_TIME, OFF(fabric_cache_ttl_s), 0, 0, 1e7, false},
	{"FabricTimeout", "fabric_timeout", K_TIME, OFF(fabric_timeout_s), 0, 1e-3, 600, false},
	{"FabricFormat", "fabric_format", K_FORMAT, OFF(fabric_format), 0, 0, 0, false},
	{"ReportURL", "report_url", K_URL, STR(report_url), 0, 0, false},
	{"ReportTokenFile", "report_token_file", K_PATH, STR(report_token_file), 0, 0, false},
	{"ReportTimeout", "report_timeout", K_TIME, OFF(report_timeout_s), 0, 1e-3, 600, false},
	{"HttpConnectTimeout", "http_connect_timeout", K_TIME, OFF(http_connect_timeout_s), 0, 1e-3,
	 600, false},
	/* at most 64 MB: any answer accepted fits DTPLAN_FILE_FABRIC_CACHE's 64 MiB */
	{"HttpMaxSize", "http_max_size", K_BYTES, OFF(http_max_bytes), 0, 1e3, 64e6, false},
	{"HttpCAPath", "http_ca_path", K_PATH, STR(http_ca_path), 0, 0, false},
	{"RecordDB", "record_db", K_PATH, STR(record_db), 0, 0, false},
	{"MTBF", "mtbf", K_PATH, STR(mtbf_from), 0, 0, false},
	{"MtbfCache", "mtbf_cache", K_PATH, STR(mtbf_cache), 0, 0, false},
};

#define N_SETTINGS DTPLAN_ARRAY_SIZE(settings)
_Static_assert(N_SETTINGS <= DTPLAN__CONFIG_MAX_SETTINGS, "raise DTPLAN__CONFIG_MAX_SETTINGS");

/* A parsed value before it is stored. */

void dtplan_config_init(struct dtplan_config *c)
{
	if (c == NULL)
		return;
	memset(c, 0, sizeof(*c));
	c->default_mode = DTPLAN_MODE_OFF;
	c->policy = DTPLAN_POLICY_WARN;
	c->probe_timeout_s = 10.0;
	snprintf(c->spool_dir, sizeof(c->spool_dir), "/var/spool/dtplan");
	c->probe_budget_s = 5.0;
	/* below 1024, where only root may listen (issue 26), and below 600, where
	 * bindresvport() and the kernel's RPC clients take ports unannounced */
	c->probe_ports[0] = 500;
	c->probe_ports[1] = 599;
	c->probe_fanout = 16;
	c->nccl_ib_hca = DTPLAN_NCCL_IB_HCA_OFF;
	c->net_bytes_per_s = 50e9; /* 400 Gb/s per GPU rail */
	c->net_latency_s = 5e-6;
	c->nvlink_bytes_per_s = 0.0; /* from the GPU catalog */
	c->nvlink_latency_s = 1e-6;
	c->mtbf_gpu_hours = DTPLAN_DEFAULT_MTBF_GPU_HOURS;
	c->ckpt_write_bytes_per_s = 100e9;
	c->restart_seconds = 300.0;
	c->oversub_threshold = 2.0;
	c->bubble_threshold = 0.10;
	c->exposed_comm_threshold = 0.10;
	c->slowdown_threshold = 0.05;
	c->mfu_efficiency = 0.5;
	c->step_cv = DTPLAN_STEP_CV_UNSET; /* the records', else the default */
	c->fabric_cache_ttl_s = 300.0;
	c->fabric_timeout_s = 2.0;
	c->report_timeout_s = 2.0;
	c->http_connect_timeout_s = 1.0;
	c->http_max_bytes = 16e6;
	snprintf(c->mtbf_cache, sizeof(c->mtbf_cache), "/var/cache/dtplan/mtbf.json");
}

void dtplan_config_fini(struct dtplan_config *c)
{
	if (c == NULL)
		return;
	free(c->switches);
	free(c->nodesets);
	dtplan_config_init(c);
}

const char *dtplan_mode_name(enum dtplan_mode mode)
{
	switch (mode) {
	case DTPLAN_MODE_OFF:
		return "off";
	case DTPLAN_MODE_AUTO:
		return "auto";
	case DTPLAN_MODE_STRICT:
		return "strict";
	default:
		return "?";
	}
}

const char *dtplan_policy_name(enum dtplan_policy policy)
{
	switch (policy) {
	case DTPLAN_POLICY_WARN:
		return "warn";
	case DTPLAN_POLICY_DENY:
		return "deny";
	default:
		return "?";
	}
}

const char *dtplan_fabric_answer_name(enum dtplan_fabric_answer f)
{
	switch (f) {
	case DTPLAN_FABRIC_ANSWER_BY_TYPE:
		return "auto";
	case DTPLAN_FABRIC_ANSWER_JSON:
		return "json";
	case DTPLAN_FABRIC_ANSWER_TOPOLOGY_CONF:
		return "topology.conf";
	default:
		return "?";
	}
}

const char *dtplan_nccl_ib_hca_name(enum dtplan_nccl_ib_hca nccl_ib_hca)
{
	switch (nccl_ib_hca) {
	case DTPLAN_NCCL_IB_HCA_OFF:
		return "off";
	case DTPLAN_NCCL_IB_HCA_NODE:
		return "node";
	default:
		return "?";
	}
}

/* An http:// or https:// URL with a host part and no blanks or control characters. */
static bool valid_url(const char *s)
{
	size_t skip;

	if (strncasecmp(s, "http://", 7) == 0)
		skip = 7;
	else if (strncasecmp(s, "https://", 8) == 0)
		skip = 8;
	else
		return false;
	if (s[skip] == '\0' || s[skip] == '/')
		return false;
	for (; *s != '\0'; s++)
		if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s))
			return false;
	return true;
}

static bool valid_name(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

/* A plain number: no unit, no trailing text. */
static enum dtplan_err parse_number(const char *name, const char *text, double *out,
				    struct dtplan_error *err)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0, "%s: '%s' is not a number", name,
				     text);
	*out = v;
	return DTPLAN_OK;
}

/* "4:1", "1.5:1", "3:2" or "4": downlink over uplink capacity.  The quotient
 * may still be 0 or infinite ("1e300:1e-300"): callers check its range. */
static enum dtplan_err parse_ratio(const char *name, const char *text, double *out,
				   struct dtplan_error *err)
{
	const char *colon = strchr(text, ':');
	char *end;
	double a, b = 1.0;

	errno = 0;
	a = strtod(text, &end);
	if (end == text || (colon != NULL ? end != colon : *end != '\0'))
		goto bad;
	if (colon != NULL) {
		b = strtod(colon + 1, &end);
		if (end == colon + 1 || *end != '\0')
			goto bad;
	}
	if (errno == ERANGE || !isfinite(a) || !isfinite(b) || a <= 0.0 || b <= 0.0)
		goto bad;
	*out = a / b;
	return DTPLAN_OK;
bad:
	return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
			     "%s: '%s' is not a ratio such as 4:1, 1.5:1 or 2", name, text);
}

/* "LO-HI": two ports in [s->min, s->max], LO <= HI; kept as text in v->s. */
static enum dtplan_err parse_ports(const struct dtplan__config_setting *s, const char *name,
				   const char *text, struct dtplan__config_value *v,
				   struct dtplan_error *err)
{
	const char *dash = strchr(text, '-');
	char lo[16];
	long a, b;

	if (dash == NULL || (size_t)(dash - text) >= sizeof(lo) || dash == text)
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
				     "%s: '%s' is not a port range such as 500-599", name, text);
	memcpy(lo, text, (size_t)(dash - text));
	lo[dash - text] = '\0';
	if (dtplan_parse_long(lo, name, (long)s->min, (long)s->max, &a, err) != DTPLAN_OK ||
	    dtplan_parse_long(dash + 1, name, (long)s->min, (long)s->max, &b, err) != DTPLAN_OK)
		return err != NULL ? err->code : DTPLAN_ERR_PARSE;
	if (a > b)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "%s: '%s': the first port is above the last", name, text);
	snprintf(v->s, sizeof(v->s), "%ld-%ld", a, b);
	v->i = (int)a;
	return DTPLAN_OK;
}

/* A GPU type must be in the catalog: the message lists the known names. */
static enum dtplan_err check_gpu(const char *name, const char *text, struct dtplan_error *err)
{
	struct dtplan_error e = {0};

	if (dtplan_gpu_find(text, &e) == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0, "%s: %s", name, e.text);
	return DTPLAN_OK;
}

/* v in [min, max] (min excluded when min_open); rates and sizes print with units. */
static enum dtplan_err range_check(enum kind kind, double min, double max, bool min_open,
				   const char *name, const char *text, double v,
				   struct dtplan_error *err)
{
	char lo[32], hi[32];

	if (!isnan(v) && v >= min && v <= max && !(min_open && v == min))
		return DTPLAN_OK;
	if (kind == K_RATE || kind == K_RATE_OR_0) {
		dtplan_format_rate(min, lo, sizeof(lo));
		dtplan_format_rate(max, hi, sizeof(hi));
	} else if (kind == K_BYTES) {
		dtplan_format_bytes(min, lo, sizeof(lo));
		dtplan_format_bytes(max, hi, sizeof(hi));
	} else {
		snprintf(lo, sizeof(lo), "%g%s", min, kind == K_TIME ? " s" : "");
		snprintf(hi, sizeof(hi), "%g%s", max, kind == K_TIME ? " s" : "");
	}
	return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
			     "%s: '%s' is out of range (%s %s, at most %s)", name, text,
			     min_open ? "more than" : "at least", lo, hi);
}

static enum dtplan_err check_range(const struct dtplan__config_setting *s, const char *name,
				   const char *text, double v, struct dtplan_error *err)
{
	return range_check(s->kind, s->min, s->max, s->min_open, name, text, v, err);
}

static enum dtplan_err parse_value(const struct dtplan__config_setting *s, const char *name,
				   const char *text, struct dtplan__config_value *v,
				   struct dtplan_error *err)
{
	enum dtplan_err rv;

	memset(v, 0, sizeof(*v));
	if (text[0] == '\0' && s->kind != K_PATH && s->kind != K_GPU && s->kind != K_URL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0, "%s: missing value", name);
	switch (s->kind) {
	case K_MODE:
		if (dtplan__streq_nocase(text, "off"))
			v->i = DTPLAN_MODE_OFF;
		else if (dtplan__streq_nocase(text, "auto"))
			v->i = DTPLAN_MODE_AUTO;
		else
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "%s: '%s' is not a mode (expected off or auto)", name,
					     text);
		return DTPLAN_OK;
	case K_POLICY:
		if (dtplan__streq_nocase(text, "warn"))
			v->i = DTPLAN_POLICY_WARN;
		else if (dtplan__streq_nocase(text, "deny"))
			v->i = DTPLAN_POLICY_DENY;
		else
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "%s: '%s' is not a policy (expected warn or deny)",
					     name, text);
		return DTPLAN_OK;
	case K_HCA:
		if (dtplan__streq_nocase(text, "off"))
			v->i = DTPLAN_NCCL_IB_HCA_OFF;
		else if (dtplan__streq_nocase(text, "node"))
			v->i = DTPLAN_NCCL_IB_HCA_NODE;
		else
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "%s: '%s' is not a choice (expected off, or node for "
					     "every NIC of the node)",
					     name, text);
		return DTPLAN_OK;
	case K_FORMAT:
		if (dtplan__streq_nocase(text, "auto"))
			v->i = DTPLAN_FABRIC_ANSWER_BY_TYPE;
		else if (dtplan__streq_nocase(text, "json"))
			v->i = DTPLAN_FABRIC_ANSWER_JSON;
		else if (dtplan__streq_nocase(text, "topology.conf"))
			v->i = DTPLAN_FABRIC_ANSWER_TOPOLOGY_CONF;
		else
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "%s: '%s' is not a format (expected auto, by the "
					     "answer's Content-Type, json or topology.conf)",
					     name, text);
		return DTPLAN_OK;
	case K_PATH:
	case K_GPU:
	case K_URL:
		if (strlen(text) >= s->size)
			return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					     "%s: '%s' is longer than %zu characters", name, text,
					     s->size - 1);
		if (s->kind == K_GPU && text[0] != '\0' && check_gpu(name, text, err) != DTPLAN_OK)
			return DTPLAN_ERR_NOT_FOUND;
		if (s->kind == K_URL && text[0] != '\0' && !valid_url(text))
			return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					     "%s: '%s' is not an http:// or https:// URL", name,
					     text);
		dtplan__strlcpy(v->s, text, sizeof(v->s));
		return DTPLAN_OK;
	case K_TIME:
		rv = dtplan_parse_time(text, name, &v->d, err);
		break;
	case K_RATE_OR_0:
		if (strcmp(text, "0") == 0)
			return DTPLAN_OK; /* 0: unset, e.g. NVLink bandwidth from the catalog */
					  /* fall through */
	case K_RATE:
		rv = dtplan_parse_rate(text, name, &v->d, err);
		break;
	case K_NUMBER:
		rv = parse_number(name, text, &v->d, err);
		break;
	case K_RATIO:
		rv = parse_ratio(name, text, &v->d, err);
		break;
	case K_INT: {
		long l;

		rv = dtplan_parse_long(text, name, (long)s->min, (long)s->max, &l, err);
		v->i = (int)l;
		return rv;
	}
	case K_PORTS:
		return parse_ports(s, name, text, v, err);
	case K_BYTES:
		rv = dtplan_parse_bytes(text, name, &v->d, err);
		break;
	default:
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "%s: unhandled setting", name);
		break;
	}
	if (rv == DTPLAN_OK)
		rv = check_range(s, name, text, v->d, err);
	return rv;
}

static void store_value(struct dtplan_config *c, const struct dtplan__config_setting *s,
			const struct dtplan__config_value *v)
{
	char *field = (char *)c + s->offset;

	switch (s->kind) {
	case K_MODE:
	case K_POLICY:
	case K_HCA:
	case K_FORMAT:
	case K_INT:
		memcpy(field, &v->i, sizeof(int));
		break;
	case K_PORTS: {
		int ports[2] = {0, 0};

		sscanf(v->s, "%d-%d", &ports[0], &ports[1]);
		memcpy(field, ports, sizeof(ports));
		break;
	}
	case K_PATH:
	case K_GPU:
	case K_URL:
		dtplan__strlcpy(field, v->s, s->size);
		break;
	default:
		memcpy(field, &v->d, sizeof(double));
		break;
	}
}

/* One rule for "the same value": numbers within rounding (5us parses to
 * 5 * 1e-6, which is not bit-equal to 5e-6), text exactly. */
static bool values_same(const struct dtplan__config_setting *s,
			const struct dtplan__config_value *a, const struct dtplan__config_value *b)
{
	switch (s->kind) {
	case K_MODE:
	case K_POLICY:
	case K_HCA:
	case K_FORMAT:
	case K_INT:
		return a->i == b->i;
	case K_PATH:
	case K_GPU:
	case K_PORTS:
	case K_URL:
		return strcmp(a->s, b->s) == 0;
	default:
		return fabs(a->d - b->d) <= 1e-12 * fmax(fabs(a->d), fabs(b->d));
	}
}

/* The value setting s has in c. */
static void load_value(const struct dtplan_config *c, const struct dtplan__config_setting *s,
		       struct dtplan__config_value *v)
{
	const char *field = (const char *)c + s->offset;

	memset(v, 0, sizeof(*v));
	v->setting = s;
	v->index = (size_t)(s - settings);
	switch (s->kind) {
	case K_MODE:
	case K_POLICY:
	case K_HCA:
	case K_FORMAT:
	case K_INT:
		memcpy(&v->i, field, sizeof(int));
		break;
	case K_PORTS: {
		int ports[2];

		memcpy(ports, field, sizeof(ports));
		snprintf(v->s, sizeof(v->s), "%d-%d", ports[0], ports[1]);
		v->i = ports[0];
		break;
	}
	case K_PATH:
	case K_GPU:
	case K_URL:
		dtplan__strlcpy(v->s, field, sizeof(v->s));
		break;
	default:
		memcpy(&v->d, field, sizeof(double));
		break;
	}
}

static bool same_value(const struct dtplan_config *c, const struct dtplan__config_setting *s,
		       const struct dtplan__config_value *v)
{
	struct dtplan__config_value cur;

	load_value(c, s, &cur);
	return values_same(s, &cur, v);
}

static const struct dtplan__config_setting *find_setting(const char *name, bool site)
{
	for (size_t i = 0; i < N_SETTINGS; i++) {
		const char *n = site ? settings[i].key : settings[i].arg;

		if (n != NULL && dtplan__streq_nocase(n, name))
			return &settings[i];
	}
	return NULL;
}

/* ---- what the site file's lines share (lib/site/config_site.c) ---- */

bool dtplan__config_valid_name(const char *s)
{
	return valid_name(s);
}

enum dtplan_err dtplan__config_check_gpu(const char *key, const char *text,
					 struct dtplan_error *err)
{
	return check_gpu(key, text, err);
}

enum dtplan_err dtplan__config_parse_oversub(const char *key, const char *text, double *out,
					     struct dtplan_error *err)
{
	enum dtplan_err rv = parse_ratio(key, text, out, err);

	if (rv == DTPLAN_OK)
		rv = range_check(K_RATIO, RATIO_MIN, RATIO_MAX, false, key, text, *out, err);
	return rv;
}

enum dtplan_err dtplan__config_parse_link_rate(const char *key, const char *text, double *out,
					       struct dtplan_error *err)
{
	enum dtplan_err rv = dtplan_parse_rate(text, key, out, err);

	if (rv == DTPLAN_OK)
		rv = range_check(K_RATE, RATE_MIN, RATE_MAX, false, key, text, *out, err);
	return rv;
}

/* ---- one setting's value, for the site file (lib/site/config_site.c) and the
 * plugstack arguments (lib/site/config_args.c) ---- */

enum dtplan_err dtplan__config_parse_setting(const char *name, bool site, const char *text,
					     struct dtplan__config_value *v,
					     struct dtplan_error *err)
{
	const struct dtplan__config_setting *s = find_setting(name, site);
	enum dtplan_err rv;

	memset(v, 0, sizeof(*v));
	if (s == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0, "unknown key '%s'", name);
	rv = parse_value(s, site ? s->key : s->arg, text, v, err);
	v->setting = s;
	v->index = (size_t)(s - settings);
	return rv;
}

void dtplan__config_store(struct dtplan_config *c, const struct dtplan__config_value *v)
{
	store_value(c, v->setting, v);
}

bool dtplan__config_holds(const struct dtplan_config *c, const struct dtplan__config_value *v)
{
	return same_value(c, v->setting, v);
}

bool dtplan__config_same(const struct dtplan__config_value *a, const struct dtplan__config_value *b)
{
	return a->setting == b->setting && values_same(a->setting, a, b);
}

const char *dtplan__config_key(const struct dtplan__config_value *v)
{
	return v->setting->key;
}

static bool is_text(const struct dtplan__config_setting *s);

/* the site file's two line kinds come on top of the settings */
_Static_assert(N_SETTINGS + 2 <= DTPLAN__KV_MAX_KEYS, "raise DTPLAN__KV_MAX_KEYS");

size_t dtplan__config_kv_keys(bool site,
			      enum dtplan_err (*parse)(void *obj, const struct dtplan__kv_key *k,
						       const char *value, struct dtplan_error *err),
			      struct dtplan__kv_key *keys)
{
	size_t n = 0;

	for (size_t i = 0; i < N_SETTINGS; i++) {
		const char *name = site ? settings[i].key : settings[i].arg;

		if (name == NULL)
			continue;
		memset(&keys[n], 0, sizeof(keys[n]));
		keys[n].name = name;
		keys[n].kind = DTPLAN__KV_CUSTOM;
		keys[n].parse = parse;
		keys[n].empty_ok = is_text(&settings[i]);
		n++;
	}
	return n;
}

const char *dtplan__config_arg(const struct dtplan__config_value *v)
{
	return v->setting->arg;
}

/* ---- lookups ---- */

enum dtplan_err dtplan_config_apply_topology(const struct dtplan_config *c,
					     struct dtplan_topology *t, struct dtplan_error *err)
{
	if (c == NULL || t == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no configuration or topology");
	/* Check every name first so that a failure changes nothing. */
	for (size_t i = 0; i < c->n_switches; i++)
		if (dtplan_topology_switch_index(t, c->switches[i].name) < 0)
			return dtplan__error(err, DTPLAN_ERR_NOT_FOUND,
					     c->site_file[0] ? c->site_file : "dtplan.conf",
					     c->switches[i].line,
					     "SwitchName=%s: no switch '%s' in the topology",
					     c->switches[i].name, c->switches[i].name);
	for (size_t i = 0; i < c->n_switches; i++) {
		const struct dtplan_site_switch *s = &c->switches[i];
		struct dtplan_switch *sw = &t->switches[dtplan_topology_switch_index(t, s->name)];

		if (s->oversubscription > 0)
			sw->oversubscription = s->oversubscription;
		if (s->uplink_bytes_per_s > 0)
			sw->uplink_bytes_per_s = s->uplink_bytes_per_s;
	}
	return DTPLAN_OK;
}

const struct dtplan_site_nodeset *dtplan_config_nodeset_for(const struct dtplan_config *c,
							    const char *hostname)
{
	if (c == NULL || hostname == NULL)
		return NULL;
	for (size_t i = 0; i < c->n_nodesets; i++) {
		bool match = false;

		if (dtplan_hostlist_match(c->nodesets[i].nodes, hostname, &match, NULL) ==
			    DTPLAN_OK &&
		    match)
			return &c->nodesets[i];
	}
	return NULL;
}

static bool is_text(const struct dtplan__config_setting *s)
{
	return s->kind == K_PATH || s->kind == K_GPU || s->kind == K_URL;
}

bool dtplan_config_setting(const struct dtplan_config *c, size_t i, const char **key,
			   const char **arg, char *value, size_t size, bool *is_default)
{
	struct dtplan_config def;
	const struct dtplan__config_setting *s;
	struct dtplan__config_value cur;
	char buf[64];

	if (c == NULL || i >= N_SETTINGS)
		return false;
	s = &settings[i];
	if (key != NULL)
		*key = s->key ? s->key : "";
	if (arg != NULL)
		*arg = s->arg;
	load_value(c, s, &cur);
	switch (s->kind) {
	case K_MODE:
		dtplan__strlcpy(buf, dtplan_mode_name(cur.i), sizeof(buf));
		break;
	case K_POLICY:
		dtplan__strlcpy(buf, dtplan_policy_name(cur.i), sizeof(buf));
		break;
	case K_HCA:
		dtplan__strlcpy(buf, dtplan_nccl_ib_hca_name(cur.i), sizeof(buf));
		break;
	case K_FORMAT:
		dtplan__strlcpy(buf, dtplan_fabric_answer_name(cur.i), sizeof(buf));
		break;
	case K_PATH:
	case K_GPU:
	case K_PORTS:
	case K_URL:
		buf[0] = '\0';
		break;
	case K_INT:
		snprintf(buf, sizeof(buf), "%d", cur.i);
		break;
	case K_TIME:
		dtplan_format_time(cur.d, buf, sizeof(buf));
		break;
	case K_RATE:
	case K_RATE_OR_0:
		if (cur.d == 0)
			dtplan__strlcpy(buf, "0", sizeof(buf));
		else
			dtplan_format_rate(cur.d, buf, sizeof(buf));
		break;
	case K_RATIO:
		snprintf(buf, sizeof(buf), "%g:1", cur.d);
		break;
	case K_BYTES:
		dtplan_format_bytes(cur.d, buf, sizeof(buf));
		break;
	default:
		/* below its range: never set, as StepTimeCV= (DTPLAN_STEP_CV_UNSET)
		 * is until the site sets it; "" like an unset path */
		if (cur.d < s->min)
			buf[0] = '\0';
		else
			snprintf(buf, sizeof(buf), "%g", cur.d);
		break;
	}
	if (value != NULL && size > 0)
		dtplan__strlcpy(value, is_text(s) || s->kind == K_PORTS ? cur.s : buf, size);
	if (is_default != NULL) {
		dtplan_config_init(&def);
		*is_default = same_value(&def, s, &cur);
	}
	return true;
}
