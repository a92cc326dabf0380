/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_observe.c: what a job measured (lib/record/observe.c): the step
 * lines of Megatron-LM, torchtitan, DeepSpeed and Lightning, the
 * DTPLAN_OBSERVE file, and the inputs that must be refused.
 *
 * The log lines are written as each framework's source formats them:
 *   Megatron-LM   megatron/training/training.py, training_log()
 *                 (NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553)
 *   torchtitan    torchtitan/components/metrics.py, MetricsProcessor.log(),
 *                 colours from torchtitan/tools/utils.py Color
 *                 (pytorch/torchtitan b5bcd76c66d0acb1a08b176d9639425bc55e0b2a)
 *   DeepSpeed     deepspeed/utils/timer.py, ThroughputTimer.stop(); batch_size
 *                 is train_batch_size() (deepspeed/runtime/engine.py)
 *                 (deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641)
 *   Lightning     src/lightning/pytorch/callbacks/progress/tqdm_progress.py,
 *                 BAR_FORMAT "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining},
 *                 {rate_noinv_fmt}{postfix}]" redrawn with \r
 *                 (Lightning-AI/pytorch-lightning 7f0c3436cd3f6ad3753125672024fc415cbcb414)
 */
#include "test_common.h"

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/dtplan-test-observe.XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name)
{
	static char path[2][512];
	static int k;

	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

static void parse_log(struct dtplan_observation *o, const char *text,
		      const struct dtplan_observe_ctx *ctx)
{
	memset(o, 0, sizeof(*o));
	assert_int_equal(dtplan_observe_parse_log(o, text, strlen(text), ctx, NULL), DTPLAN_OK);
}

/* Ten Megatron lines, the first the slow one: it is skipped, the median of
 * the other nine is 1234.5 ms. */
static void log__megatron__ms_per_iteration(void **state)
{
	char text[8192] = "";
	struct dtplan_observation o;
	double med, spread;
	size_t kept;

	(void)state;
	for (int i = 1; i <= 10; i++) {
		size_t n = strlen(text);

		snprintf(
			text + n, sizeof(text) - n,
			" [2026-12-01 10:00:%02d.123456] iteration %8d/%8d | consumed samples: "
			"%12d | "
			"elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): "
			"412.3 | learning rate: 3.000000E-04 | global batch size:  1024 | lm loss: "
			"7.012345E+00 | loss scale: 1.0 | grad norm: 1.234 | number of skipped "
			"iterations:   0 | number of nan iterations:   0 |\n",
			i, i * 10, 1000, i * 10240, i == 1 ? 9000.0 : (i % 2 ? 1234.5 : 1234.5));
	}
	parse_log(&o, text, NULL);
	assert_int_equal(o.n_steps, 10);
	assert_string_equal(o.source, "megatron");
	assert_int_equal(dtplan_observation_summary(&o, &med, &spread, &kept, NULL), DTPLAN_OK);
	assert_int_equal(kept, 9);
	assert_near(med, 1.2345, 1e-12);
	assert_near(spread, 0.0, 1e-12);
	dtplan_observation_fini(&o);
}

/* torchtitan logs tokens per second per GPU: a step is
 * global_batch x seq / (GPUs x tps) = 256 x 8192 / (64 x 4,096) = 8 s. */
static void log__torchtitan__tokens_per_second_per_gpu(void **state)
{
	const struct dtplan_observe_ctx ctx = {.global_batch = 256, .seq = 8192, .gpus = 64};
#define TITAN_LINE                                                                                 \
	"[rank0]:[titan] 2026-12-01 10:00:00,123 - root - INFO - "                                 \
	"\033[31mstep: %2d  \033[32mloss:  7.12345  "                                              \
	"\033[38;2;180;60;0mgrad_norm:  1.2345  "                                                  \
	"\033[38;2;54;234;195mmemory: 61.23GiB(77.41%%)  "                                         \
	"\033[34mtps: %s  \033[36mtflops: 412.34  \033[35mmfu: 41.69%%\033[39m\n"
	char text[8192] = "";
	struct dtplan_observation o;
	double med, spread;
	size_t kept;

	(void)state;
	for (int i = 1; i <= 5; i++) {
		size_t n = strlen(text);

		snprintf(text + n, sizeof(text) - n, TITAN_LINE, i * 10, i == 1 ? "512" : "4,096");
	}
	/* a validation line is no training step */
	strcat(text, "[rank0]:[titan] - root - INFO - \033[33mvalidate step: 50  \033[32mloss:  "
		     "7.1  \033[34mtps: 99,999\033[39m\n");
	parse_log(&o, text, &ctx);
	assert_int_equal(o.n_steps, 5);
	assert_string_equal(o.source, "torchtitan");
	assert_int_equal(dtplan_observation_summary(&o, &med, &spread, &kept, NULL), DTPLAN_OK);
	assert_int_equal(kept, 4);
	assert_near(med, 8.0, 1e-12);
	dtplan_observation_fini(&o);
}

/* DeepSpeed: CurrSamplesPerSec = train_batch_size / the step's time, so a
 * step is 512 / 25.6 = 20 s. */
static void log__deepspeed__samples_per_second(void **state)
{
	const struct dtplan_observe_ctx ctx = {.global_batch = 512, .seq = 4096, .gpus = 64};
	char text[8192] = "";
	struct dtplan_observation o;
	double med, spread;
	size_t kept;

	(void)state;
	for (int i = 1; i <= 6; i++) {
		size_t n = strlen(text);

		snprintf(text + n, sizeof(text) - n,
			 "[2026-12-01 10:00:00,000] [INFO] [timer.py:264:stop] "
			 "epoch=0/micro_step=%d/"
			 "global_step=%d, RunningAvgSamplesPerSec=25.59, CurrSamplesPerSec=%s, "
			 "MemAllocated=12.3GB, MaxMemAllocated=14.1GB\n",
			 i * 8, i, i == 1 ? "5.12" : "25.6");
	}
	parse_log(&o, text, &ctx);
	assert_string_equal(o.source, "deepspeed");
	assert_int_equal(dtplan_observation_summary(&o, &med, &spread, &kept, NULL), DTPLAN_OK);
	assert_int_equal(kept, 5);
	assert_near(med, 20.0, 1e-9);
	dtplan_observation_fini(&o);
}

/* Lightning's bar, redrawn with \r each step, 12 s a step after a slow
 * first one: elapsed 00:30, 00:42, 00:54, ... */
static void log__lightning__progress_bar(void **state)
{
	char text[8192] = "Epoch 0:   0%|          | 0/100 [00:00<?, ?it/s]";
	struct dtplan_observation o;
	double med, spread;
	size_t kept;

	(void)state;
	for (int i = 1; i <= 11; i++) {
		size_t n = strlen(text);
		int t = 30 + (i - 1) * 12;

		snprintf(text + n, sizeof(text) - n,
			 "\rEpoch 0:  %2d%%|#         | %d/100 [%02d:%02d<19:48,  %.2fit/s, "
			 "v_num=0, "
			 "train_loss=6.91]",
			 i, i, t / 60, t % 60, i / (double)t);
	}
	strcat(text, "\n");
	parse_log(&o, text, NULL);
	assert_string_equal(o.source, "lightning");
	assert_int_equal(o.n_steps, 11); /* 0 -> 1 (the slow one), 1 -> 2, ..., 10 -> 11 */
	assert_int_equal(dtplan_observation_summary(&o, &med, &spread, &kept, NULL), DTPLAN_OK);
	assert_near(med, 12.0, 1e-12);
	dtplan_observation_fini(&o);
}

static void jsonl__steps_and_checkpoints__hostile_lines_rejected(void **state)
{
	const char *text = "{\"step\":1,\"step_seconds\":30.0}\n"
			   "{\"step\":2,\"step_seconds\":10.0}\n"
			   "{\"step\":3,\"step_seconds\":10.5}\n"
			   "{\"step\":4,\"step_seconds\":NaN}\n"
			   "{\"step\":5,\"step_seconds\":-3}\n"
			   "{\"step\":6,\"step_seconds\":1e999}\n"
			   "{\"step\":7,\"step_seconds\":\"10\"}\n"
			   "\xff\xfe garbage \x01\x02\n"
			   "{\"checkpoint_seconds\":41.0}\n"
			   "{\"checkpoint_seconds\":43.0}\n"
			   "{\"step\":8,\"step_seconds\":9.5}\n";
	struct dtplan_observation o = {0};
	double med, spread;
	size_t kept;

	(void)state;
	assert_int_equal(dtplan_observe_parse_jsonl(&o, text, strlen(text), NULL), DTPLAN_OK);
	assert_int_equal(o.n_steps, 4);
	assert_int_equal(o.n_rejected, 5);
	assert_non_null(strstr(o.rejected, "line 4"));
	assert_string_equal(o.source, "observe file");
	assert_int_equal(dtplan_observation_summary(&o, &med, &spread, &kept, NULL), DTPLAN_OK);
	assert_int_equal(kept, 3); /* 30.0, the first, is warm-up */
	assert_near(med, 10.0, 1e-12);
	/* quartiles of 9.5, 10, 10.5: 9.75 and 10.25 */
	assert_near(spread, 0.5, 1e-12);
	assert_near(dtplan_observation_checkpoint(&o), 42.0, 1e-12);
	dtplan_observation_fini(&o);
}

/* Figures outside their physical range (dtplan/record.h) are refused with
 * the range named, and counted: under DTPLAN_OBSERVE_MIN_STEP_S (1e-303 s,
 * the smallest denormal 4.9e-324 s), over DTPLAN_OBSERVE_MAX_STEP_S (1e5 s
 * > a day), a checkpoint under DTPLAN_OBSERVE_MIN_CKPT_S (1e-9 s).  Before
 * these bounds, all but the zero were kept. */
static void jsonl__figures_outside_physical_range__refused_counted(void **state)
{
	const char *text = "{\"step\":1,\"step_seconds\":1e-303}\n"
			   "{\"step\":2,\"step_seconds\":4.9e-324}\n"
			   "{\"step\":3,\"step_seconds\":1e5}\n"
			   "{\"step\":4,\"step_seconds\":0.0001}\n"
			   "{\"step\":5,\"step_seconds\":86400}\n"
			   "{\"checkpoint_seconds\":1e-9}\n"
			   "{\"checkpoint_seconds\":0.001}\n";
	struct dtplan_observation o = {0};

	(void)state;
	assert_int_equal(dtplan_observe_parse_jsonl(&o, text, strlen(text), NULL), DTPLAN_OK);
	/* the bounds themselves are in range */
	assert_int_equal(o.n_steps, 2);
	assert_near(dtplan_observation_step(&o, 0), DTPLAN_OBSERVE_MIN_STEP_S, 0.0);
	assert_near(dtplan_observation_step(&o, 1), DTPLAN_OBSERVE_MAX_STEP_S, 0.0);
	assert_int_equal(o.n_ckpts, 1);
	assert_int_equal(o.n_rejected, 4);
	assert_non_null(strstr(o.rejected, "line 1: step_seconds 1e-303 s outside the physical "
					   "range [0.0001, 86400] s"));
	dtplan_observation_fini(&o);
}

/* The frameworks' figures are bounded as the step they give: Megatron's
 * "(ms): 1e-300" is 1e-303 s; torchtitan's "tps: 1e300" is 256 x 8192 /
 * (64 x 1e300) = 3.3e-296 s; DeepSpeed's "CurrSamplesPerSec=1e-300" is
 * 512 / 1e-300 = 5.12e302 s.  Each refused and counted; the sane lines kept. */
static void log__absurd_figures__refused_counted(void **state)
{
	const struct dtplan_observe_ctx ctx = {.global_batch = 256, .seq = 8192, .gpus = 64};
	const struct dtplan_observe_ctx ds = {.global_batch = 512, .seq = 4096, .gpus = 64};
	struct dtplan_observation o;

	(void)state;
	parse_log(&o,
		  "iteration 1 | elapsed time per iteration (ms): 1e-300 |\n"
		  "iteration 2 | elapsed time per iteration (ms): 4.9e-324 |\n"
		  "iteration 3 | elapsed time per iteration (ms): 1234.5 |\n",
		  NULL);
	assert_int_equal(o.n_steps, 1);
	assert_int_equal(o.n_rejected, 2);
	assert_non_null(strstr(o.rejected, "line 1: a step line's time 1e-303 s outside"));
	dtplan_observation_fini(&o);
	parse_log(&o,
		  "step: 10  loss: 7.1  tps: 1e300  mfu: 41%\n"
		  "step: 20  loss: 7.1  tps: 4,096  mfu: 41%\n",
		  &ctx);
	assert_int_equal(o.n_steps, 1);
	assert_int_equal(o.n_rejected, 1);
	assert_non_null(strstr(o.rejected, "3.28e-296 s outside"));
	dtplan_observation_fini(&o);
	parse_log(&o,
		  "global_step=1, RunningAvgSamplesPerSec=1, CurrSamplesPerSec=1e-300\n"
		  "global_step=2, RunningAvgSamplesPerSec=1, CurrSamplesPerSec=25.6\n",
		  &ds);
	assert_int_equal(o.n_steps, 1);
	assert_int_equal(o.n_rejected, 1);
	assert_non_null(strstr(o.rejected, "5.12e+302 s outside"));
	dtplan_observation_fini(&o);
}

static void jsonl__million_lines__refused(void **state)
{
	size_t n = 1000000;
	char *text = malloc(2 * n);
	struct dtplan_observation o = {0};
	struct dtplan_error err = {0};

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		text[2 * i] = '1';
		text[2 * i + 1] = '\n';
	}
	assert_int_equal(dtplan_observe_parse_jsonl(&o, text, 2 * n, &err), DTPLAN_ERR_RANGE);
	assert_non_null(strstr(err.text, "1000000 lines"));
	assert_int_equal(o.n_steps, 0);
	free(text);
	dtplan_observation_fini(&o);
}

static void summary__one_step__all_warm_up(void **state)
{
	const char *text = "{\"step\":1,\"step_seconds\":3}\n";
	struct dtplan_observation o = {0};
	struct dtplan_error err = {0};
	double med, spread;
	size_t kept;

	(void)state;
	assert_int_equal(dtplan_observe_parse_jsonl(&o, text, strlen(text), NULL), DTPLAN_OK);
	assert_int_equal(dtplan_observation_summary(&o, &med, &spread, &kept, &err),
			 DTPLAN_ERR_NOT_FOUND);
	assert_non_null(strstr(err.text, "warm-up"));
	dtplan_observation_fini(&o);
}

/* A job that printed more steps than the window keeps: MAX + 3 Megatron
 * lines whose times are their numbers in ms (1, 2, ...).  The window keeps
 * the newest MAX, and each of the last three is one store over the oldest
 * slot (a ring): slots 0-2 hold MAX+1..MAX+3, every other slot still holds
 * what it got first.  A window shifted for each new sample instead (the
 * former push(), 3.8-5.4 s for 16 MiB of short lines) has slot 0 = 4 ms. */
static void log__more_steps_than_window__ring_keeps_newest(void **state)
{
	const size_t max = DTPLAN_OBSERVE_MAX_SAMPLES, extra = 3;
	size_t cap = (max + extra) * 48, len = 0, kept;
	char *text = malloc(cap);
	struct dtplan_observation o = {0};
	double med, spread;

	(void)state;
	assert_non_null(text);
	for (size_t i = 1; i <= max + extra; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"elapsed time per iteration (ms): %zu\n", i);
	assert_int_equal(dtplan_observe_parse_log(&o, text, len, NULL, NULL), DTPLAN_OK);
	assert_int_equal(o.n_steps, max);
	assert_int_equal(o.steps_at, extra);
	for (size_t i = 0; i < extra; i++)
		assert_near(o.steps[i], (double)(max + 1 + i) / 1000.0, 0.0);
	for (size_t i = extra; i < max; i++)
		assert_near(o.steps[i], (double)(i + 1) / 1000.0, 0.0);
	/* in order: the oldest kept is step extra + 1, the newest max + extra */
	assert_near(dtplan_observation_step(&o, 0), (double)(extra + 1) / 1000.0, 0.0);
	assert_near(dtplan_observation_step(&o, max - 1), (double)(max + extra) / 1000.0, 0.0);
	/* the warm-up is the oldest tenth of the window: steps extra + 1 ..
	 * extra + max / 10; the median of the rest, (extra + max / 10 + 1 +
	 * max + extra) / 2 ms */
	assert_int_equal(dtplan_observation_summary(&o, &med, &spread, &kept, NULL), DTPLAN_OK);
	assert_int_equal(kept, max - max / 10);
	assert_near(med, (double)(extra + max / 10 + 1 + max + extra) / 2.0 / 1000.0, 1e-9);
	free(text);
	dtplan_observation_fini(&o);
}

static void read__hostile_files__refused_without_blocking(void **state)
{
	struct dtplan_error err = {0};
	char *text = NULL;
	size_t len = 0;
	bool cut = false;
	int fd;

	(void)state;
	/* a FIFO: no writer, and the read must not wait for one */
	assert_int_equal(mkfifo(in_dir("fifo"), 0600), 0);
	assert_int_equal(dtplan_observe_read(in_dir("fifo"), 1024, false, &text, &len, &cut, &err),
			 DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "a FIFO"));
	/* a link to root's file */
	assert_int_equal(symlink("/etc/shadow", in_dir("link")), 0);
	assert_int_equal(dtplan_observe_read(in_dir("link"), 1024, false, &text, &len, &cut, &err),
			 DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "symbolic link"));
	/* 2 GB (sparse): over the limit, refused; as a log, only its tail read */
	fd = open(in_dir("big"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)2 << 30), 0);
	assert_int_equal(pwrite(fd, "tail\n", 5, ((off_t)2 << 30) - 5), 5);
	close(fd);
	assert_int_equal(dtplan_observe_read(in_dir("big"), DTPLAN_OBSERVE_MAX_BYTES, false, &text,
					     &len, &cut, &err),
			 DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "2147483648 bytes"));
	/* its tail: zeros (binary) before the last line, refused as binary */
	assert_int_equal(dtplan_observe_read(in_dir("big"), 4096, true, &text, &len, &cut, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "binary"));
	assert_null(text);
	/* text tail */
	fd = open(in_dir("log"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789abcdef", 16), 16);
	close(fd);
	assert_int_equal(dtplan_observe_read(in_dir("log"), 6, true, &text, &len, &cut, &err),
			 DTPLAN_OK);
	assert_true(cut);
	assert_int_equal(len, 6);
	assert_string_equal(text, "abcdef");
	free(text);
	/* a folder */
	assert_int_equal(dtplan_observe_read(dir, 1024, false, &text, &len, &cut, &err),
			 DTPLAN_ERR_IO);
	assert_non_null(strstr(err.text, "a folder"));
}

/* The collector's contract: "dtplan.observation/1" with exactly these members. */
static void observation_json__contract_members(void **state)
{
	struct dtplan_record r = {.job_id = 4242,
				  .time = 1764583200, /* 2025-12-01T10:00:00Z */
				  .predicted_step_s = 10.3,
				  .measured_step_s = 12.1,
				  .measured_spread_s = 0.2,
				  .steps = 27,
				  .refused = 3,
				  .checkpoint_s = NAN};
	static const char *const keys[] = {"schema",
					   "job_id",
					   "user",
					   "cluster",
					   "fingerprint",
					   "gpu",
					   "model",
					   "framework",
					   "predicted_step_s",
					   "measured_step_s",
					   "measured_step_spread_s",
					   "steps",
					   "refused",
					   "checkpoint_s",
					   "time"};
	char *text = NULL;
	json_t *j;
	size_t i = 0;
	const char *k;
	json_t *v;

	(void)state;
	snprintf(r.user, sizeof(r.user), "alice");
	snprintf(r.cluster, sizeof(r.cluster), "c1");
	snprintf(r.fingerprint, sizeof(r.fingerprint), "%064d", 0);
	snprintf(r.gpu, sizeof(r.gpu), "h100-sxm");
	snprintf(r.model, sizeof(r.model), "llama3-8b");
	snprintf(r.framework, sizeof(r.framework), "megatron");
	assert_int_equal(dtplan_observation_to_json(&r, &text, NULL), DTPLAN_OK);
	j = json_loads(text, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_object_size(j), sizeof(keys) / sizeof(keys[0]));
	json_object_foreach(j, k, v)
	{
		assert_string_equal(k, keys[i]);
		i++;
	}
	assert_string_equal(json_string_value(json_object_get(j, "schema")),
			    "dtplan.observation/1");
	assert_true(json_is_integer(json_object_get(j, "job_id")));
	assert_int_equal(json_integer_value(json_object_get(j, "steps")), 27);
	assert_int_equal(json_integer_value(json_object_get(j, "refused")), 3);
	assert_true(json_is_null(json_object_get(j, "checkpoint_s")));
	assert_near(json_number_value(json_object_get(j, "measured_step_s")), 12.1, 0.0);
	assert_string_equal(json_string_value(json_object_get(j, "time")), "2025-12-01T10:00:00Z");
	json_decref(j);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log__megatron__ms_per_iteration),
		cmocka_unit_test(log__torchtitan__tokens_per_second_per_gpu),
		cmocka_unit_test(log__deepspeed__samples_per_second),
		cmocka_unit_test(log__lightning__progress_bar),
		cmocka_unit_test(jsonl__steps_and_checkpoints__hostile_lines_rejected),
		cmocka_unit_test(jsonl__figures_outside_physical_range__refused_counted),
		cmocka_unit_test(log__absurd_figures__refused_counted),
		cmocka_unit_test(jsonl__million_lines__refused),
		cmocka_unit_test(summary__one_step__all_warm_up),
		cmocka_unit_test(log__more_steps_than_window__ring_keeps_newest),
		cmocka_unit_test(read__hostile_files__refused_without_blocking),
		cmocka_unit_test(observation_json__contract_members),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, setup, teardown);
}
