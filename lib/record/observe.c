/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * observe.c: what a job measured, from the file it appended to
 * (DTPLAN_OBSERVE) and from the step lines its framework printed.  Every
 * input here is the job's: bounded in bytes, lines and samples, and every
 * number checked before it counts.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum dtplan_err dtplan_observe_read(const char *path, size_t max, bool tail, char **out,
				    size_t *len, bool *cut, struct dtplan_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t want, got = 0;
	off_t from = 0;
	enum dtplan_err rv;
	int fd;

	*out = NULL;
	if (len != NULL)
		*len = 0;
	if (cut != NULL)
		*cut = false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "%s",
				     errno == ELOOP ? "refused: a symbolic link, never followed"
						    : strerror(errno));
	if (fstat(fd, &st) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "%s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "refused: %s, not a regular file",
				   S_ISFIFO(st.st_mode)   ? "a FIFO"
				   : S_ISDIR(st.st_mode)  ? "a folder"
				   : S_ISSOCK(st.st_mode) ? "a socket"
							  : "a device");
		goto out;
	}
	want = (size_t)st.st_size;
	if (want > max) {
		if (!tail) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0,
					   "refused: %lld bytes, more than the %zu read",
					   (long long)st.st_size, max);
			goto out;
		}
		from = st.st_size - (off_t)max;
		want = max;
		if (cut != NULL)
			*cut = true;
	}
	buf = malloc(want + 1);
	if (buf == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "out of memory");
		goto out;
	}
	/* the file may shrink or grow meanwhile: read what is there, up to want */
	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, from + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "%s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (memchr(buf, '\0', got) != NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				   "refused: binary data (a NUL byte), not text");
		goto out;
	}
	*out = buf;
	buf = NULL;
	if (len != NULL)
		*len = got;
	rv = DTPLAN_OK;
out:
	free(buf);
	close(fd);
	return rv;
}

static void reject(struct dtplan_observation *o, size_t line, const char *why)
{
	if (o->n_rejected++ == 0)
		snprintf(o->rejected, sizeof(o->rejected), "line %zu: %s", line, why);
}

/* Keeps x in the window v of *n samples: appended until it holds
 * DTPLAN_OBSERVE_MAX_SAMPLES, then over the oldest, at *at, which moves on
 * (a ring: one store per sample, never a shift of the window). */
static enum dtplan_err push(double **v, size_t *n, size_t *at, double x, struct dtplan_error *err)
{
	double *m;

	if (*n == DTPLAN_OBSERVE_MAX_SAMPLES) { /* keep the newest */
		(*v)[*at] = x;
		*at = *at + 1 == *n ? 0 : *at + 1;
		return DTPLAN_OK;
	}
	if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow by doubling */
		size_t cap = *n > 0 ? 2 * *n : 1;

		if (cap > DTPLAN_OBSERVE_MAX_SAMPLES)
			cap = DTPLAN_OBSERVE_MAX_SAMPLES;
		m = realloc(*v, cap * sizeof(**v));
		if (m == NULL)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		*v = m;
	}
	(*v)[(*n)++] = x;
	return DTPLAN_OK;
}

double dtplan_observation_step(const struct dtplan_observation *o, size_t i)
{
	size_t k = o->steps_at + i;

	return o->steps[k < o->n_steps ? k : k - o->n_steps];
}

/* Whether s lies in [lo, hi] (dtplan/record.h: the physical ranges); else
 * why not, into why. */
static bool in_range(const char *what, double s, double lo, double hi, char *why, size_t size)
{
	if (isfinite(s) && s >= lo && s <= hi)
		return true;
	if (isnan(s))
		snprintf(why, size, "%s is not a number", what);
	else
		snprintf(why, size, "%s %.3g s outside the physical range [%g, %g] s", what, s, lo,
			 hi);
	return false;
}

enum dtplan_err dtplan_observe_parse_jsonl(struct dtplan_observation *o, const char *text,
					   size_t len, struct dtplan_error *err)
{
	size_t lines = 0, line = 0;
	const char *p = text, *end = text + len;
	enum dtplan_err ret;
	char why[128];

	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n')
			lines++;
	if (lines > DTPLAN_OBSERVE_MAX_LINES)
		return dtplan__error(err, DTPLAN_ERR_RANGE, DTPLAN_OBSERVE_ENV, 0,
				     "refused: %zu lines, more than %d", lines,
				     DTPLAN_OBSERVE_MAX_LINES);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *j, *v;
		json_error_t je;

		line++;
		j = n > 0 ? json_loadb(p, n, JSON_REJECT_DUPLICATES, &je) : NULL;
		p += n + (nl != NULL);
		if (n == 0)
			continue;
		if (!json_is_object(j)) {
			reject(o, line, "not a JSON object");
		} else if ((v = json_object_get(j, "step_seconds")) != NULL) {
			if (!json_is_number(v))
				reject(o, line, "step_seconds is not a number");
			else if (!in_range("step_seconds", json_number_value(v),
					   DTPLAN_OBSERVE_MIN_STEP_S, DTPLAN_OBSERVE_MAX_STEP_S,
					   why, sizeof(why)))
				reject(o, line, why);
			else if ((ret = push(&o->steps, &o->n_steps, &o->steps_at,
					     json_number_value(v), err)) != DTPLAN_OK) {
				json_decref(j);
				return ret;
			}
		} else if ((v = json_object_get(j, "checkpoint_seconds")) != NULL) {
			if (!json_is_number(v))
				reject(o, line, "checkpoint_seconds is not a number");
			else if (!in_range("checkpoint_seconds", json_number_value(v),
					   DTPLAN_OBSERVE_MIN_CKPT_S, DTPLAN_OBSERVE_MAX_CKPT_S,
					   why, sizeof(why)))
				reject(o, line, why);
			else if ((ret = push(&o->ckpts, &o->n_ckpts, &o->ckpts_at,
					     json_number_value(v), err)) != DTPLAN_OK) {
				json_decref(j);
				return ret;
			}
		} else {
			reject(o, line, "neither step_seconds nor checkpoint_seconds");
		}
		json_decref(j);
	}
	if (o->n_steps > 0 && o->source[0] == '\0')
		dtplan__strlcpy(o->source, "observe file", sizeof(o->source));
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * The frameworks' step lines
 * ---------------------------------------------------------------------- */

/* The number after key in line (a '\0'-terminated copy), NAN when absent.
 * Thousands separators (torchtitan's "{:,}") are skipped. */
static double number_after(const char *line, const char *key)
{
	const char *s = strstr(line, key);
	char digits[64];
	size_t n = 0;

	if (s == NULL)
		return NAN;
	s += strlen(key);
	while (*s == ' ')
		s++;
	for (; *s != '\0' && n + 1 < sizeof(digits); s++) {
		if (*s == ',')
			continue;
		if ((*s < '0' || *s > '9') && *s != '.' && *s != 'e' && *s != 'E' && *s != '-' &&
		    *s != '+')
			break;
		digits[n++] = *s;
	}
	digits[n] = '\0';
	if (n == 0)
		return NAN;
	{
		char *e;
		double v = strtod(digits, &e);

		return *e == '\0' ? v : NAN;
	}
}

/* Removes ANSI colour escapes (ESC [ ... letter), in place. */
static void strip_ansi(char *s)
{
	char *w = s;

	for (const char *r = s; *r != '\0'; r++) {
		if (*r == '\033' && r[1] == '[') {
			r += 2;
			while (*r != '\0' &&
			       !((*r >= 'A' && *r <= 'Z') || (*r >= 'a' && *r <= 'z')))
				r++;
			if (*r == '\0')
				break;
			continue;
		}
		*w++ = *r;
	}
	*w = '\0';
}

enum fmt { F_NONE, F_MEGATRON, F_TORCHTITAN, F_DEEPSPEED, F_LIGHTNING };

static const char *const fmt_names[] = {"", "megatron", "torchtitan", "deepspeed", "lightning"};

/* Lightning's progress bar: "Epoch 0:  10%|#  | 10/100 [00:05<00:45, 1.98it/s, ...]":
 * the step count and the elapsed "MM:SS" or "H:MM:SS" (tqdm's
 * format_interval()).  False when line is not such a bar. */
static bool lightning_bar(const char *line, long *n, double *elapsed)
{
	const char *s = strstr(line, "it/s"), *b;
	int h = 0, m = 0, sec = 0;
	char *e;

	if (strncmp(line, "Epoch ", 6) != 0 || s == NULL)
		return false;
	for (b = s; b > line && *b != '['; b--)
		;
	if (*b != '[' || b < line + 2)
		return false;
	/* back over "N/TOTAL " */
	{
		const char *q = b - 1;

		while (q > line && *q == ' ')
			q--;
		while (q > line && q[-1] != ' ' && q[-1] != '|')
			q--;
		*n = strtol(q, &e, 10);
		if (e == q || *e != '/')
			return false;
	}
	if (sscanf(b + 1, "%d:%d:%d<", &h, &m, &sec) == 3)
		*elapsed = h * 3600.0 + m * 60.0 + sec;
	else if (sscanf(b + 1, "%d:%d<", &m, &sec) == 2)
		*elapsed = m * 60.0 + sec;
	else
		return false;
	return true;
}

/* The format of line, F_NONE when it is no step line. */
static enum fmt which(const char *line)
{
	const char *s;

	if (strstr(line, "elapsed time per iteration (ms):") != NULL &&
	    strstr(line, "iteration") != NULL)
		return F_MEGATRON;
	if (strstr(line, "CurrSamplesPerSec=") != NULL && strstr(line, "global_step=") != NULL)
		return F_DEEPSPEED;
	if ((s = strstr(line, "step:")) != NULL && strstr(line, "tps:") != NULL &&
	    !(s >= line + 9 && strncmp(s - 9, "validate ", 9) == 0))
		return F_TORCHTITAN;
	if (strncmp(line, "Epoch ", 6) == 0 && strstr(line, "it/s") != NULL)
		return F_LIGHTNING;
	return F_NONE;
}

enum dtplan_err dtplan_observe_parse_log(struct dtplan_observation *o, const char *text, size_t len,
					 const struct dtplan_observe_ctx *ctx,
					 struct dtplan_error *err)
{
	const char *p = text, *end = text + len;
	enum fmt f = F_NONE;
	enum dtplan_err ret;
	long last_n = -1;
	double last_t = 0.0;
	size_t line = 0;
	char buf[4096], why[128];

	while (p < end) {
		const char *nl = p;
		size_t n;
		double v = NAN, s;
		enum fmt k;

		while (nl < end && *nl != '\n' && *nl != '\r') /* tqdm redraws with \r */
			nl++;
		n = (size_t)(nl - p);
		line++;
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, p, n);
		buf[n] = '\0';
		p = nl < end ? nl + 1 : end;
		strip_ansi(buf);
		k = which(buf);
		if (k == F_NONE || (f != F_NONE && k != f))
			continue;
		f = k;
		switch (k) {
		case F_MEGATRON:
			v = number_after(buf, "elapsed time per iteration (ms):") / 1000.0;
			break;
		case F_TORCHTITAN:
			s = number_after(buf, "tps:");
			v = ctx != NULL && ctx->gpus > 0
				    ? (double)ctx->global_batch * ctx->seq / (ctx->gpus * s)
				    : NAN;
			break;
		case F_DEEPSPEED:
			s = number_after(buf, "CurrSamplesPerSec=");
			v = ctx != NULL ? ctx->global_batch / s : NAN;
			break;
		case F_LIGHTNING: {
			long bar_n;
			double t;

			if (!lightning_bar(buf, &bar_n, &t))
				continue;
			if (bar_n < last_n || last_n < 0) { /* a new epoch's bar */
				last_n = bar_n;
				last_t = t;
				continue;
			}
			if (bar_n == last_n || t <= last_t)
				continue;
			v = (t - last_t) / (double)(bar_n - last_n);
			last_n = bar_n;
			last_t = t;
			break;
		}
		default:
			continue;
		}
		if (!in_range("a step line's time", v, DTPLAN_OBSERVE_MIN_STEP_S,
			      DTPLAN_OBSERVE_MAX_STEP_S, why, sizeof(why))) {
			reject(o, line, why);
			continue;
		}
		if ((ret = push(&o->steps, &o->n_steps, &o->steps_at, v, err)) != DTPLAN_OK)
			return ret;
	}
	if (o->n_steps > 0 && o->source[0] == '\0')
		dtplan__strlcpy(o->source, fmt_names[f], sizeof(o->source));
	return DTPLAN_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of n sorted values, linearly between neighbours. */
static double quantile(const double *v, size_t n, double q)
{
	double at = q * (double)(n - 1);
	size_t i = (size_t)at;

	return i + 1 < n ? v[i] + (at - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

enum dtplan_err dtplan_observation_summary(const struct dtplan_observation *o, double *median,
					   double *spread, size_t *kept, struct dtplan_error *err)
{
	size_t skip, n;
	double *v;

	if (o->n_steps == 0)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0, "no step times observed");
	skip = (size_t)ceil((double)o->n_steps * DTPLAN_OBSERVE_WARMUP_FRACTION);
	if (skip < 1)
		skip = 1;
	if (skip >= o->n_steps)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0,
				     "%zu step time%s observed, all of them warm-up", o->n_steps,
				     o->n_steps == 1 ? "" : "s");
	n = o->n_steps - skip;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	for (size_t i = 0; i < n; i++)
		v[i] = dtplan_observation_step(o, skip + i);
	qsort(v, n, sizeof(*v), cmp_double);
	*median = quantile(v, n, 0.5);
	*spread = quantile(v, n, 0.75) - quantile(v, n, 0.25);
	*kept = n;
	free(v);
	return DTPLAN_OK;
}

double dtplan_observation_checkpoint(const struct dtplan_observation *o)
{
	double *v, m;

	if (o->n_ckpts == 0)
		return NAN;
	v = malloc(o->n_ckpts * sizeof(*v));
	if (v == NULL)
		return NAN;
	memcpy(v, o->ckpts, o->n_ckpts * sizeof(*v));
	qsort(v, o->n_ckpts, sizeof(*v), cmp_double);
	m = quantile(v, o->n_ckpts, 0.5);
	free(v);
	return m;
}

void dtplan_observation_fini(struct dtplan_observation *o)
{
	if (o == NULL)
		return;
	free(o->steps);
	free(o->ckpts);
	memset(o, 0, sizeof(*o));
}
