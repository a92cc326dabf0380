/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_plugin.c: the SPANK glue (the plugin sources) run against tests/mock_spank.c.
 *
 * Each test starts the plugin as Slurm would in one context (init with the
 * plugstack arguments, option callbacks, then the context's callbacks) and
 * checks what it logged, what it put in the job environment and which files
 * it wrote.  slurm_spank_exit() runs in every teardown, as it does in Slurm.
 */
#include "test_common.h"
#include "hwloc_expect.h"

#include <errno.h>
#include <netinet/in.h>
#include <slurm/slurm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include "dtplan.h"
#include "http_helper.h"
#include "mock_spank.h"
#include "plugin.h"

#define JOB_ID 1234
/* 29500 + 1234 % 1000 */
#define JOB_PORT "29734"

static char tmpdir[256];
static bool context_queued;       /* spank_context() answers one context per test */
static struct test_server server; /* fabric service and collector (tests/http_server.py) */
static bool have_server;

static int group_setup(void **state)
{
	(void)state;
	have_server = test_server_start(&server);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	test_server_stop(&server);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	mock_spank_reset();
	context_queued = false;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dtplan-test-plugin.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	unsetenv("SLURM_JOB_ID");
	unsetenv("SBATCH_GPUS");
	unsetenv("SBATCH_GPUS_PER_NODE");
	unsetenv("SLURM_JOB_NUM_NODES");
	unsetenv("SLURM_GPUS_ON_NODE");
	unsetenv("HWLOC_XMLFILE");
	setenv("SLURMD_NODENAME", "n1", 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	slurm_spank_exit(MOCK_SP, 0, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Runs slurm_spank_init in context ctx with plugstack arguments av. */
static int start_plugin(spank_context_t ctx, int ac, char **av)
{
	if (!context_queued)
		dt_will_return_maybe(spank_context, ctx);
	context_queued = true;
	expect_string(spank_option_register, name, "dt-plan");
	expect_string(spank_option_register, name, "dt-model");
	expect_string(spank_option_register, name, "dt-train");
	dt_will_return_count(spank_option_register, ESPANK_SUCCESS, 3);
	return slurm_spank_init(MOCK_SP, ac, av);
}

/* Calls an option's callback as Slurm does when the user gives it. */
static int give_option(const char *name, const char *value, int remote)
{
	struct spank_option *o = mock_registered(name);

	assert_non_null(o);
	return o->cb(o->val, value, remote);
}

static void assert_env(const char *name, const char *value)
{
	const char *got = mock_env_get(name);

	if (got == NULL || strcmp(got, value) != 0)
		fail_msg("%s = %s, expected %s\nlog:\n%s", name, got ? got : "(unset)", value,
			 mock_log());
}

static void assert_log_has(const char *text)
{
	if (!mock_log_has(text))
		fail_msg("log lacks '%s':\n%s", text, mock_log());
}

/* Number of times text appears in the log. */
static int log_count(const char *text)
{
	int n = 0;

	for (const char *p = strstr(mock_log(), text); p != NULL; p = strstr(p + 1, text))
		n++;
	return n;
}

/* The whole of a file the plugin wrote (caller frees); fails when it is not
 * a regular file of the user's, mode 0644 less the umask. */
static char *read_written(const char *path)
{
	struct stat st;
	char *text;
	FILE *f;

	if (lstat(path, &st) != 0)
		fail_msg("%s: %s\nlog:\n%s", path, strerror(errno), mock_log());
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_mode & 0133, 0);
	f = fopen(path, "r");
	assert_non_null(f);
	text = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	return text;
}

/* ---- slurm_spank_init ------------------------------------------------ */

static void init__allocator__registers_options_with_dtplan_usage(void **state)
{
	static const char *const names[] = {"dt-plan", "dt-model", "dt-train"};

	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	for (size_t i = 0; i < 3; i++) {
		struct spank_option *o = mock_registered(names[i]);

		assert_non_null(o);
		assert_non_null(o->cb);
		assert_true(strncmp(o->usage, "[dtplan] ", 9) == 0);
	}
	/* --dt-plan takes an optional argument, the others a required one. */
	assert_int_equal(mock_registered("dt-plan")->has_arg, 2);
	assert_int_equal(mock_registered("dt-model")->has_arg, 1);
	assert_int_equal(mock_registered("dt-train")->has_arg, 1);
	assert_string_equal(mock_log(), "");
}

static void init__slurmd__registers_nothing(void **state)
{
	(void)state;
	dt_will_return_maybe(spank_context, S_CTX_SLURMD);
	assert_int_equal(slurm_spank_init(MOCK_SP, 0, NULL), 0);
	assert_null(mock_registered("dt-plan"));
}

static void init__register_fails__minus_one_logged(void **state)
{
	(void)state;
	dt_will_return_maybe(spank_context, S_CTX_LOCAL);
	expect_string(spank_option_register, name, "dt-plan");
	will_return(spank_option_register, ESPANK_BAD_ARG);
	assert_int_equal(slurm_spank_init(MOCK_SP, 0, NULL), -1);
	assert_log_has("error: dtplan: cannot register --dt-plan: mock spank error");
}

static void init__bad_plugstack_argument__logged_and_plugin_idle(void **state)
{
	char *av[] = {"policy=maybe"};

	(void)state;
	assert_int_equal(start_plugin(S_CTX_REMOTE, 1, av), 0);
	assert_log_has("error: dtplan: configuration: plugstack.conf");
	assert_log_has("disabled until the configuration is fixed");
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	mock_items.step_id = SLURM_BATCH_SCRIPT;
	mock_env_set("SLURM_JOB_NODELIST", "n1");
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_null(mock_env_get("DTPLAN_PLAN_STATE"));
}

/* ---- option callbacks (submit side) ---------------------------------- */

static void opt_plan__bare_and_names__accepted(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", NULL, 0), 0);
	assert_true(dtspank__opts()->mode_given);
	assert_int_equal(dtspank__opts()->mode, DTPLAN_MODE_AUTO);
	/* Environment then command line: the same value again is fine. */
	assert_int_equal(give_option("dt-plan", "auto", 0), 0);
	assert_int_equal(give_option("dt-plan", "AUTO", 0), 0);
	assert_string_equal(mock_log(), "");
}

/* What etc/cli_filter.lua said about --segment (an anonymous temporary
 * file it keeps open, as Lua's io.tmpfile() makes) goes on to the job's
 * environment at init_post_opt; other deleted files are not read as one. */
static void init_post_opt__cli_filter_reason__passed_to_the_job(void **state)
{
	static const char note_text[] =
		"DTPLAN_SEGMENT_REASON=--segment=2: an expert group spans 2 nodes\n";
	FILE *other = tmpfile(), *note = tmpfile();

	(void)state;
	assert_non_null(other);
	assert_non_null(note);
	fputs("DTPLAN_SEGMENT_REASONS are not this\n", other);
	fflush(other);
	fputs(note_text, note);
	fflush(note);
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "auto", 0), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_env("SLURM_SPANK_DTPLAN_SEGMENT_REASON",
		   "--segment=2: an expert group spans 2 nodes");
	/* the file's offset is Lua's, untouched */
	assert_int_equal(ftell(note), (long)strlen(note_text));
	fclose(note);
	fclose(other);
}

static void opt_plan__conflict_or_garbage__refused_with_message(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "strict", 0), 0);
	assert_int_equal(give_option("dt-plan", "off", 0), -1);
	assert_log_has("error: dtplan: --dt-plan: conflicting values 'strict' and 'off'");
	assert_int_equal(give_option("dt-plan", "sometimes", 0), -1);
	assert_log_has("error: dtplan: --dt-plan: unknown mode 'sometimes' (expected auto, "
		       "strict or off)");
	assert_int_equal(dtspank__opts()->mode, DTPLAN_MODE_STRICT);
}

static void opt_model__unknown__message_names_option_and_value(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "foo", 0), -1);
	assert_log_has("error: dtplan: --dt-model: unknown model 'foo' (presets: ");
	assert_string_equal(dtspank__opts()->model, "");
}

static void opt_model__repeat_and_conflict__same_ok_different_refused(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(give_option("dt-model", "70B", 0), -1);
	assert_log_has("error: dtplan: --dt-model: conflicting values '7B' and '70B'");
	assert_string_equal(dtspank__opts()->model, "7B");
}

static const struct {
	const char *value;
	const char *message;
} train_bad[] = {
	{"seq=abc", "dtplan: --dt-train: seq: 'abc' is not a whole number"},
	{"seq=8192,foo=1", "dtplan: --dt-train: unknown key 'foo'"},
	{"zero=5", "dtplan: --dt-train: zero: 5 is out of range (0 to 3)"},
	{"gpu=tpu9", "dtplan: --dt-train: unknown GPU type 'tpu9'"},
};

static void opt_train__bad_values__refused_with_message(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_LOCAL, 0, NULL), 0);
	for (size_t i = 0; i < sizeof(train_bad) / sizeof(train_bad[0]); i++) {
		assert_int_equal(give_option("dt-train", train_bad[i].value, 0), -1);
		assert_log_has(train_bad[i].message);
	}
	assert_int_equal(give_option("dt-train", "seq=8192,gbs=1024,tp=8", 0), 0);
	assert_int_equal(give_option("dt-train", "seq=8192,gbs=1024,tp=4", 0), -1);
	assert_log_has("--dt-train: conflicting values 'seq=8192,gbs=1024,tp=8' and "
		       "'seq=8192,gbs=1024,tp=4'");
}

/* Keys that contradict each other whatever the allocation are refused at
 * submission (dtplan_request_check_train()), not at job start. */
static const struct {
	const char *value;
	const char *message;
} train_contradictions[] = {
	{"seq=4096,moments=bf16", "dtplan: --dt-train: moments: moments=bf16 is Megatron-Core's "
				  "precision-aware optimizer"},
	{"recompute=fine", "dtplan: --dt-train: recompute: recompute=fine is Megatron-Core's"},
	{"pp=3,schedule=dualpipe", "dtplan: --dt-train: schedule: DualPipe runs an even PP "
				   "without interleaving: PP 3"},
	{"zero=2,pp=2", "dtplan: --dt-train: zero: ZeRO-2 needs PP 1"},
	{"framework=torchtitan,offload=yes", "dtplan: --dt-train: zero: offload=yes: "
					     "torchtitan's CPU offload"},
	{"pp=1,vp=2", "dtplan: --dt-train: vp: 2 interleaved stages need pipeline parallelism"},
	{"cp=2,attention=unfused", "dtplan: --dt-train: cp: CP 2 needs flash attention"},
	{"precision=fp8,gpu=a100-80gb", "dtplan: --dt-train: precision: a100-80gb has no fp8 "
					"tensor cores"},
};

static void opt_train__contradicting_keys__refused_at_submission(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	for (size_t i = 0; i < sizeof(train_contradictions) / sizeof(train_contradictions[0]);
	     i++) {
		assert_int_equal(give_option("dt-train", train_contradictions[i].value, 0), -1);
		assert_log_has(train_contradictions[i].message);
	}
	/* fp8 without gpu=: the nodes' GPUs decide, at job start */
	assert_int_equal(give_option("dt-train", "precision=fp8", 0), 0);
	dtspank__opts_reset();
	/* DeepSeek-V3's recipe, whole */
	assert_int_equal(give_option("dt-train",
				     "seq=4096,pp=16,framework=megatron,precision=fp8,"
				     "recompute=fine,schedule=dualpipe,moments=bf16",
				     0),
			 0);
}

static void opt__remote__values_kept_never_fail(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "foo", 1), 0);
	assert_int_equal(give_option("dt-model", "bar", 1), 0);
	assert_string_equal(dtspank__opts()->model, "bar");
	assert_int_equal(give_option("dt-plan", "bogus", 1), 0);
	assert_false(dtspank__opts()->mode_given);
}

static void opts_from_env__job_environment__fills_missing(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan", "");
	mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model", "70B");
	mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_train", "seq=2048");
	dtspank__opts_from_env(MOCK_SP);
	assert_true(dtspank__opts()->mode_given);
	assert_int_equal(dtspank__opts()->mode, DTPLAN_MODE_AUTO);
	assert_string_equal(dtspank__opts()->model, "7B"); /* the callback's value wins */
	assert_string_equal(dtspank__opts()->train, "seq=2048");
}

/* ---- init_post_opt on the submit side: the preview ------------------- */

static void preview__no_options__silent(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_string_equal(mock_log(), "");
}

/* A pinned choice the model can never take fails the submission, in the
 * callback of whichever of --dt-model and --dt-train comes second (Slurm
 * ignores a failing init_post_opt of an optional plugin).  llama3-70b has
 * 64 attention heads and 8 key/value heads, 80 layers, no experts. */
static void opt_model_and_train__choices_the_model_cannot_take__refused(void **state)
{
	static const struct {
		const char *train;
		const char *message;
	} cases[] = {
		{"tp=3",
		 "error: dtplan: --dt-train: tp: TP 3 does not divide the 64 attention heads "
		 "and 8 key/value heads of llama3-70b (--dt-model=llama3-70b)"},
		{"tp=16", "TP 16 does not divide the 64 attention heads and 8 key/value heads"},
		{"pp=81", "pp: PP 81 is more stages than the 80 layers of llama3-70b"},
		{"ep=8", "ep: EP 8 needs a model with experts; llama3-70b is dense"},
	};

	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* model first, then the training choices */
		assert_int_equal(give_option("dt-model", "llama3-70b", 0), 0);
		assert_int_equal(give_option("dt-train", cases[i].train, 0), -1);
		assert_log_has(cases[i].message);
		dtspank__opts_reset();
		/* and the other way round */
		assert_int_equal(give_option("dt-train", cases[i].train, 0), 0);
		assert_int_equal(give_option("dt-model", "llama3-70b", 0), -1);
		dtspank__opts_reset();
	}
	/* TP 8 divides both */
	assert_int_equal(give_option("dt-model", "llama3-70b", 0), 0);
	assert_int_equal(give_option("dt-train", "tp=8", 0), 0);
	/* in slurmstepd, values are kept, never refused */
	dtspank__opts_reset();
	assert_int_equal(give_option("dt-model", "llama3-70b", 1), 0);
	assert_int_equal(give_option("dt-train", "tp=3", 1), 0);
}

static void preview__gpus_unknown__model_memory_and_lower_bound(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", NULL, 0), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	/* 7e9 parameters x 16 bytes (DeepSpeed's count: bf16 weights and
	 * gradients, fp32 master and Adam moments) = 112 GB; an H100 reports
	 * 81559 MiB = 85.52 GB.  The model state alone needs ceil(112 / 76.97)
	 * = 2 of its 76.97 usable GB, but ZeRO-Offload moves the 84 GB of fp32
	 * master weights and Adam moments (12 bytes a parameter) to the host,
	 * leaving 28 GB of bf16 weights and gradients: it fits on one GPU. */
	assert_log_has("info: dtplan: model 7B: 7.00B parameters, 112 GB of weights, gradients "
		       "and optimizer state; h100-sxm has 85.52 GB");
	assert_log_has("GPU count unknown before allocation (it fits on 1 GPU); the plan is made "
		       "at job start");
}

/* The preview counts the model state as the plan does: Megatron-LM keeps
 * fp32 main gradients (4 bytes a parameter, not DeepSpeed's 2) and, with
 * bf16 moments, 8 bytes of optimizer state instead of 12.  7e9 x (2 + 4 +
 * 12) = 126 GB; 7e9 x (2 + 4 + 8) = 98 GB. */
static void preview__framework_and_moments__model_state_as_the_plan(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", NULL, 0), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(give_option("dt-train", "framework=megatron", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_log_has("model 7B: 7.00B parameters, 126 GB of weights, gradients and optimizer "
		       "state");
	dtspank__opts_reset();
	assert_int_equal(give_option("dt-plan", NULL, 0), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(give_option("dt-train", "framework=megatron,moments=bf16", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_log_has("model 7B: 7.00B parameters, 98.00 GB of weights, gradients and optimizer "
		       "state");
}

/* The count the last preview in the log named, -1 when none. */
static long previewed_fewest(void)
{
	const char *line = NULL, *p, *log = mock_log();
	const char *key = "the fewest that fit are ";

	for (p = strstr(log, "GPU count unknown"); p != NULL;
	     p = strstr(p + 1, "GPU count unknown"))
		line = p;
	if (line == NULL)
		return -1;
	if (strncmp(line, "GPU count unknown before allocation (it fits on 1 GPU)", 54) == 0)
		return 1;
	p = strstr(line, key);
	return p != NULL && strchr(line, '\n') > p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/*
 * The preview at submission and the plan at job start agree on the fewest
 * GPUs, for every --dt-train combination the submission takes: the plan
 * fits on the count the preview names and, one node fewer, fails with an
 * error naming that same count.  The model state the preview prints is
 * the framework's and moments' (Megatron-LM's fp32 main gradients: 4 bytes
 * instead of 2; bf16 moments: 8 bytes of optimizer state instead of 12).
 */
static void preview__every_train_combination__fewest_gpus_as_the_plan(void **state)
{
	static const char *const models[] = {"7B", "llama3-70b", "mixtral-8x7b"};
	static const char *const frameworks[] = {"deepspeed", "megatron"};
	static const char *const moments[] = {"fp32", "bf16"};
	static const char *const precisions[] = {"bf16", "fp8"};
	static const char *const offloads[] = {"auto", "no", "yes"};
	static const char *const zeros[] = {"", ",zero=0", ",zero=1", ",zero=3"};
	static const char *const recomputes[] = {"", ",recompute=full", ",recompute=fine"};
	struct dtplan_config c;
	size_t planned = 0, refused = 0;

	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	dtplan_config_init(&c);
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++)
		for (size_t i = test_stride() > 1 ? m : 0; i < 2 * 2 * 2 * 3 * 4 * 3;
		     i += test_stride()) {
			struct dtplan_request req;
			struct dtplan_plan *plan = NULL;
			struct dtplan_error err = {0};
			char train[256], want[64];
			long fewest;

			snprintf(train, sizeof(train),
				 "framework=%s,moments=%s,precision=%s,offload=%s%s%s,gbs=256",
				 frameworks[i % 2], moments[i / 2 % 2], precisions[i / 4 % 2],
				 offloads[i / 8 % 3], zeros[i / 24 % 4], recomputes[i / 96 % 3]);
			dtspank__opts_reset();
			assert_int_equal(give_option("dt-plan", "auto", 0), 0);
			assert_int_equal(give_option("dt-model", models[m], 0), 0);
			if (give_option("dt-train", train, 0) != 0) {
				refused++; /* a contradiction, refused by name at submission */
				continue;
			}
			assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
			fewest = previewed_fewest();
			if (fewest <= 0)
				fail_msg("%s --dt-train=%s: no fewest count previewed:\n%s",
					 models[m], train, mock_log());
			assert_int_equal(dtspank__opts_request(dtspank__opts(), &c, &req, &err),
					 DTPLAN_OK);
			req.gpus = (int)fewest;
			if (dtplan_plan_create(&req, NULL, &plan, &err) != DTPLAN_OK)
				fail_msg("%s --dt-train=%s: previewed %ld GPUs, the plan on them: "
					 "%s",
					 models[m], train, fewest, err.text);
			dtplan_plan_destroy(plan);
			plan = NULL;
			if (fewest > 1) {
				/* below a node one GPU fewer, else one node fewer */
				req.gpus = (int)fewest -
					   (fewest > req.gpus_per_node ? req.gpus_per_node : 1);
				assert_int_equal(dtplan_plan_create(&req, NULL, &plan, &err),
						 DTPLAN_ERR_NO_FIT);
				snprintf(want, sizeof(want), "the fewest that fit are %ld GPUs",
					 fewest);
				if (strstr(err.text, want) == NULL)
					fail_msg("%s --dt-train=%s: previewed %ld, the plan on %d "
						 "says: %s",
						 models[m], train, fewest, req.gpus, err.text);
			}
			planned++;
		}
	dtplan_config_fini(&c);
	/* the refusals are the rules' (ZeRO-3 or offload=yes with Megatron-LM,
	 * bf16 moments or fine recomputation without it, offload=yes with
	 * ZeRO-0): 348 of the 864 plan */
	print_message("%zu combinations planned, %zu refused at submission\n", planned, refused);
	assert_true(planned > 0);
	assert_true(refused > 0);
}

static void preview__gpus_from_environment__likely_split(void **state)
{
	(void)state;
	setenv("SBATCH_GPUS_PER_NODE", "h100:8", 1);
	setenv("SLURM_JOB_NUM_NODES", "2", 1);
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "auto", 0), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(give_option("dt-train", "seq=4096,gbs=512", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_log_has("info: dtplan: likely TP ");
	assert_log_has(" on 16 GPUs");
	assert_log_has("info: dtplan: checkpoint every ");
}

static void preview__model_too_large__warns_never_fails(void **state)
{
	(void)state;
	setenv("SBATCH_GPUS", "1", 1);
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "strict", 0), 0);
	assert_int_equal(give_option("dt-model", "70B", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_log_has("info: dtplan: warning: model cannot fit on 1 GPUs: ");
}

static void preview__model_without_dt_plan__hint(void **state)
{
	(void)state;
	assert_int_equal(start_plugin(S_CTX_ALLOCATOR, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_string_equal(mock_log(), "info: dtplan: --dt-model/--dt-train given without "
					"--dt-plan: no plan will be made (add --dt-plan)\n");
}

static void preview__srun_inside_job__silent(void **state)
{
	(void)state;
	setenv("SLURM_JOB_ID", "77", 1);
	assert_int_equal(start_plugin(S_CTX_LOCAL, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 0), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_string_equal(mock_log(), "");
}

/* ---- user_init in the batch step ------------------------------------- */

/* A two-node allocation of HGX H100 boards, batch step on n1. */
static void canned_batch_job(void)
{
	mock_items.job_id = JOB_ID;
	mock_items.step_id = SLURM_BATCH_SCRIPT;
	mock_items.uid = geteuid();
	mock_env_set("SLURM_JOB_NUM_NODES", "2");
	mock_env_set("SLURM_JOB_NODELIST", "n[1-2]");
	mock_env_set("SLURM_GPUS_ON_NODE", "8");
	mock_env_set("SLURM_SUBMIT_DIR", tmpdir);
	setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
}

static void user_init__batch_canned_allocation__plan_env_file_and_log(void **state)
{
	char path[512], want[64], *text;
	struct stat st;
	long tp, pp, dp;
	FILE *f;

	(void)state;
	canned_batch_job();
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-train", "seq=4096,gbs=512", 1), 0);
	/* what etc/cli_filter.lua put in the job's environment */
	mock_env_set("SLURM_SPANK_DTPLAN_SEGMENT_REASON",
		     "--segment=2: an expert group spans 2 nodes");
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_true(mock_log_has("dtplan: at submission: --segment=2: an expert group spans 2 "
				 "nodes"));

	snprintf(path, sizeof(path), "%s/dtplan-%d.json", tmpdir, JOB_ID);
	assert_env("DTPLAN_PLAN_STATE", "ok");
	assert_env("DTPLAN_FILE", path);
	assert_env("MASTER_ADDR", "n1");
	assert_env("MASTER_PORT", JOB_PORT);
	assert_env("DT_NNODES", "2");
	assert_env("DT_NODE_ORDER", "n1,n2");
	tp = strtol(mock_env_get("DT_TP"), NULL, 10);
	pp = strtol(mock_env_get("DT_PP"), NULL, 10);
	dp = strtol(mock_env_get("DT_DP"), NULL, 10);
	assert_int_equal(tp * pp * dp, 16);
	assert_non_null(mock_env_get("DT_ZERO"));
	assert_non_null(mock_env_get("DT_RECOMPUTE"));
	assert_true(strtol(mock_env_get("DT_CKPT_INTERVAL_S"), NULL, 10) > 0);
	assert_non_null(mock_env_get("DT_CKPT_INTERVAL_STEPS"));
	assert_non_null(mock_env_get("DT_RANK_ORDER"));
	assert_true(strcmp(mock_env_get("DT_RANK_ORDER"), "tp-dp-pp") == 0 ||
		    strcmp(mock_env_get("DT_RANK_ORDER"), "tp-pp-dp") == 0);
	/* The readable block went to the job log without the error prefix. */
	assert_log_has("log: ");
	assert_false(mock_log_has("plan degraded"));

	/* The JSON file: the user's, 0644 (less the umask), the plan's JSON. */
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_mode & 0133, 0);
	f = fopen(path, "r");
	assert_non_null(f);
	text = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	assert_non_null(strstr(text, "\"schema\": \"dtplan.plan/1\""));
	snprintf(want, sizeof(want), "\"tp\": %ld,", tp);
	assert_non_null(strstr(text, want));
	/* The same order as the plan file says. */
	snprintf(want, sizeof(want), "\"rank_order\": \"%s\"", mock_env_get("DT_RANK_ORDER"));
	assert_non_null(strstr(text, want));
	free(text);
}

static void user_init__batch_canned_allocation__launch_variables_and_files(void **state)
{
	char path[512], want[512], *text, *line, *save = NULL;
	int lines = 0;

	(void)state;
	canned_batch_job();
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-train", "seq=4096,gbs=512", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "ok");

	/* torchrun: two nodes of 8 ranks each, meeting where MASTER_* say. */
	assert_env("PET_NNODES", "2");
	assert_env("PET_NPROC_PER_NODE", "8");
	assert_env("PET_RDZV_BACKEND", "static");
	assert_env("PET_MASTER_ADDR", "n1");
	assert_env("PET_MASTER_PORT", JOB_PORT);
	/* Megatron-LM and NeMo: the plan's sizes and batches. */
	snprintf(want, sizeof(want),
		 "--tensor-model-parallel-size %s --pipeline-model-parallel-size %s "
		 "--micro-batch-size %s --global-batch-size %s --seq-length 4096 --bf16",
		 mock_env_get("DT_TP"), mock_env_get("DT_PP"), mock_env_get("DT_MICRO_BATCH"),
		 mock_env_get("DT_GLOBAL_BATCH"));
	assert_non_null(mock_env_get("DT_MEGATRON_ARGS"));
	if (strncmp(mock_env_get("DT_MEGATRON_ARGS"), want, strlen(want)) != 0)
		fail_msg("DT_MEGATRON_ARGS = '%s', expected it to start '%s'",
			 mock_env_get("DT_MEGATRON_ARGS"), want);
	snprintf(want, sizeof(want),
		 "trainer.num_nodes=2 trainer.devices=8 "
		 "model.tensor_model_parallel_size=%s ",
		 mock_env_get("DT_TP"));
	assert_non_null(mock_env_get("DT_NEMO_OVERRIDES"));
	assert_non_null(strstr(mock_env_get("DT_NEMO_OVERRIDES"), want));

	/* The hostfile: rank r on node r / 8 (DT_NODE_ORDER n1,n2). */
	snprintf(path, sizeof(path), "%s/dtplan-%d.hosts", tmpdir, JOB_ID);
	assert_env("DTPLAN_HOSTFILE", path);
	text = read_written(path);
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (strcmp(line, lines < 8 ? "n1" : "n2") != 0)
			fail_msg("hostfile line %d: '%s'", lines + 1, line);
		lines++;
	}
	assert_int_equal(lines, 16);
	free(text);

	/* The DeepSpeed fragment: train_batch_size = micro x accumulation x DP. */
	snprintf(path, sizeof(path), "%s/dtplan-%d.deepspeed.json", tmpdir, JOB_ID);
	assert_env("DTPLAN_DEEPSPEED_CONFIG", path);
	text = read_written(path);
	snprintf(want, sizeof(want),
		 "{\n  \"train_batch_size\": %s,\n  \"train_micro_batch_size_per_gpu\": %s,\n"
		 "  \"gradient_accumulation_steps\": %s,\n  \"zero_optimization\": {\n"
		 "    \"stage\": %s\n  },\n  \"bf16\": {\n    \"enabled\": true\n  }\n}\n",
		 mock_env_get("DT_GLOBAL_BATCH"), mock_env_get("DT_MICRO_BATCH"),
		 mock_env_get("DT_NUM_MICROBATCHES"), mock_env_get("DT_ZERO"));
	assert_string_equal(text, want);
	assert_int_equal(strtol(mock_env_get("DT_MICRO_BATCH"), NULL, 10) *
				 strtol(mock_env_get("DT_NUM_MICROBATCHES"), NULL, 10) *
				 strtol(mock_env_get("DT_DP"), NULL, 10),
			 strtol(mock_env_get("DT_GLOBAL_BATCH"), NULL, 10));
	free(text);

	/* The picture: 16 GPUs. */
	snprintf(path, sizeof(path), "%s/dtplan-%d.svg", tmpdir, JOB_ID);
	assert_env("DTPLAN_SVG", path);
	text = read_written(path);
	assert_non_null(strstr(text, "<svg"));
	lines = 0;
	for (const char *p = strstr(text, "class=\"gpu\""); p != NULL;
	     p = strstr(p + 1, "class=\"gpu\""))
		lines++;
	assert_int_equal(lines, 16);
	free(text);

	/* The plan JSON names them, with the same words as the environment. */
	snprintf(path, sizeof(path), "%s/dtplan-%d.json", tmpdir, JOB_ID);
	text = read_written(path);
	snprintf(want, sizeof(want), "\"megatron_args\": \"%s\"", mock_env_get("DT_MEGATRON_ARGS"));
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\"hostfile\": \"%s/dtplan-%d.hosts\"", tmpdir, JOB_ID);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\"master_port\": %s", JOB_PORT);
	assert_non_null(strstr(text, want));
	free(text);

	/* One line of the job log says what to add. */
	assert_int_equal(log_count("log: dtplan: launch: SLURM_HOSTFILE=$DTPLAN_HOSTFILE srun -m "
				   "arbitrary -n 16 PROGRAM makes SLURM_PROCID the plan's rank; "
				   "Megatron-LM: PROGRAM $DT_MEGATRON_ARGS; NeMo: PROGRAM "
				   "$DT_NEMO_OVERRIDES; DeepSpeed: --deepspeed_config "
				   "$DTPLAN_DEEPSPEED_CONFIG; torchrun: srun --ntasks-per-node=1 "
				   "torchrun PROGRAM (PET_* set) (doc/launchers.md)\n"),
			 1);
	assert_false(mock_log_has("plan degraded"));
}

/*
 * A configless node: slurmd's SLURM_CONF names its cached slurm.conf, and
 * plugstack.conf's topology=topology-blocks.conf (relative) is read beside
 * it.  The plan names the blocks the nodes are in.
 */
static void user_init__relative_block_topology__read_beside_slurm_conf(void **state)
{
	char conf[4200], *text, path[512], *av[] = {"topology=topology-blocks.conf"};

	(void)state;
	snprintf(conf, sizeof(conf), "%s", test_data_path("slurm.conf"));
	setenv("SLURM_CONF", conf, 1);
	canned_batch_job();
	mock_env_set("SLURM_JOB_NODELIST", "gb[01,05]");
	setenv("SLURMD_NODENAME", "gb01", 1);
	assert_int_equal(start_plugin(S_CTX_REMOTE, 1, av), 0);
	unsetenv("SLURM_CONF");
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "ok");
	assert_log_has("log:   placement    rank order");
	assert_log_has("2 blocks used, 1 needed");
	assert_log_has("log:     rack1 (1 node, uplink 1.0:1):");
	assert_log_has("log:     rack2 (1 node, uplink 1.0:1):");
	snprintf(path, sizeof(path), "%s/dtplan-%d.json", tmpdir, JOB_ID);
	text = read_written(path);
	assert_non_null(strstr(text, "\"leaf_kind\": \"block\""));
	assert_non_null(strstr(text, "\"name\": \"rack2\""));
	free(text);
}

/*
 * Anyone can create dtplan-<jobid>.svg, .hosts or .deepspeed.json in a shared
 * directory for a future job id; that used to cost the job the file and
 * degrade its plan (issue 26), while the plan itself took a fresh name.  The
 * files beside the plan now do the same: a fresh name, logged, and named in
 * the plan's launch object and its variable; the planted file is untouched.
 */
static void user_init__files_beside_taken__fresh_names_plan_ok(void **state)
{
	static const char *const suffixes[] = {".svg", ".hosts", ".deepspeed.json"};
	static const char *const vars[] = {"DTPLAN_SVG", "DTPLAN_HOSTFILE",
					   "DTPLAN_DEEPSPEED_CONFIG"};
	char path[3][512], want[1200], *text;
	FILE *f;

	(void)state;
	canned_batch_job();
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/dtplan-%d%s", tmpdir, JOB_ID, suffixes[i]);
		f = fopen(path[i], "w");
		assert_non_null(f);
		fputs("mine\n", f);
		fclose(f);
	}
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "ok");
	text = read_written(mock_env_get("DTPLAN_FILE"));
	for (int i = 0; i < 3; i++) {
		const char *got = mock_env_get(vars[i]);
		char *mine;

		assert_non_null(got);
		/* dtplan-<jobid>.XXXXXX<suffix> beside the planted one */
		assert_int_equal(strlen(got), strlen(path[i]) + 7);
		assert_int_equal(strncmp(got, path[i], strlen(path[i]) - strlen(suffixes[i])), 0);
		assert_string_equal(got + strlen(got) - strlen(suffixes[i]), suffixes[i]);
		snprintf(want, sizeof(want),
			 "log: dtplan: %s already exists and is not this job's to replace; the "
			 "job's is in %s",
			 path[i], got);
		assert_log_has(want);
		assert_non_null(strstr(text, got));
		assert_int_equal(access(got, R_OK), 0);
		mine = read_written(path[i]);
		assert_string_equal(mine, "mine\n");
		free(mine);
	}
	assert_non_null(strstr(text, "\"degraded\": false"));
	free(text);
}

/* A requeued job's batch step may report a restart count of 0 for the
 * item; SLURM_RESTART_COUNT in its environment names the run's own file, as
 * spank_dtplan(8) promises (dtplan-<jobid>.<restart>.json). */
static void user_init__requeued_count_from_environment__own_file(void **state)
{
	char path[512];

	(void)state;
	canned_batch_job();
	mock_items.restart_count = 0;
	mock_env_set("SLURM_RESTART_COUNT", "3");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	snprintf(path, sizeof(path), "%s/dtplan-%d.3.json", tmpdir, JOB_ID);
	assert_env("DTPLAN_FILE", path);
}

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 unknown. */
static long status_kib(const char *field)
{
	char line[256];
	long v = -1;
	size_t len = strlen(field);
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, len) == 0 && line[len] == ':')
			v = strtol(line + len + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Peak memory (KiB) user_init adds for a batch job on `nodelist` of
 * identical nodes, measured in a child (its peak reset first); -1 when
 * the kernel cannot tell. */
static long user_init_peak_kib(const char *nodelist, double *seconds)
{
	int fds[2], status;
	long got[2] = {-1, 0};
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct timespec t0, t1;
		long out[2] = {-1, 0}, rss;
		FILE *f = fopen("/proc/self/clear_refs", "w");

		close(fds[0]);
		canned_batch_job();
		mock_env_set("SLURM_JOB_NODELIST", nodelist);
		mock_items.job_id = JOB_ID + (uint32_t)strlen(nodelist); /* a file each */
		mock_env_set("SLURM_GPUS_ON_NODE", "1"); /* one rank per node: a small plan */
		if (start_plugin(S_CTX_REMOTE, 0, NULL) != 0 ||
		    give_option("dt-model", "7B", 1) != 0 ||
		    give_option("dt-train", "gbs=16384", 1) != 0 ||
		    give_option("dt-plan", "auto", 1) != 0)
			_exit(2);
		/* "5" resets the peak RSS (Linux 4.0) */
		if (f != NULL && fputs("5", f) >= 0 && fclose(f) == 0) {
			rss = status_kib("VmRSS");
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (slurm_spank_user_init(MOCK_SP, 0, NULL) != 0)
				_exit(3);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (rss >= 0 && status_kib("VmHWM") >= 0)
				out[0] = status_kib("VmHWM") - rss;
			out[1] = (t1.tv_sec - t0.tv_sec) * 1000 +
				 (t1.tv_nsec - t0.tv_nsec) / 1000000;
			if (mock_env_get("DT_TP") == NULL || mock_log_has("plan degraded")) {
				fprintf(stderr, "%s\n", mock_log());
				_exit(4);
			}
		}
		if (write(fds[1], out, sizeof(out)) != (ssize_t)sizeof(out))
			_exit(5);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], got, sizeof(got)) != (ssize_t)sizeof(got))
		got[0] = -2;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got[0] == -2)
		fail_msg("user_init on %s: child status 0x%x", nodelist, status);
	*seconds = (double)got[1] / 1000.0;
	return got[0];
}

/* Issue 13, finding 10: a 16,384-node job copied a 33 KB inventory per node
 * in slurmstepd (513 MB, 720 MB at the peak).  Identical nodes now share one
 * record.  One GPU per node keeps the plan itself small (16,384 ranks), so
 * that what is measured is the inventories. */
static void user_init__16384_identical_nodes__one_shared_inventory(void **state)
{
	double secs_small, secs_big;
	long small, big;

	(void)state;
	small = user_init_peak_kib("n[1-16]", &secs_small);
	big = user_init_peak_kib("n[1-16384]", &secs_big);
	if (small < 0 || big < 0)
		skip();
	print_message("user_init peak: 16 nodes +%ld KiB (%.2f s), 16,384 nodes +%ld KiB "
		      "(%.2f s)\n",
		      small, secs_small, big, secs_big);
	/* 16,384 copies of struct dtplan_node alone would be 540 MB; valgrind's
	 * own bookkeeping roughly triples what is measured */
	if (getenv("DTPLAN_TEST_UNDER_VALGRIND") == NULL)
		assert_true((big - small) * 1024L < 128L << 20);
}

/* Issue 13, finding 23: in a shared json_dir anyone can guess
 * dtplan-<jobid>.json and create it first.  That file is neither followed
 * nor overwritten: the plan goes to a fresh name beside it, which
 * DTPLAN_FILE and the log give, and the plan is not degraded. */
/* Issue 13, finding 23: in a shared json_dir anyone can guess
 * dtplan-<jobid>.json and create it first.  That file is neither followed
 * nor overwritten: the plan goes to a fresh name beside it, which
 * DTPLAN_FILE and the log give, and the plan is not degraded. */
static void user_init__plan_file_taken__fresh_name_and_logged(void **state)
{
	char path[512], arg[300], *av[1] = {arg}, taken[600];
	const char *file;
	struct stat st;
	FILE *f;

	(void)state;
	for (int shared = 0; shared < 2; shared++) {
		mock_spank_reset();
		canned_batch_job();
		snprintf(path, sizeof(path), "%s/dtplan-%d.json", tmpdir, JOB_ID);
		if (shared) {
			/* json_dir=: a link planted under the job's name */
			snprintf(arg, sizeof(arg), "json_dir=%s", tmpdir);
			unlink(path);
			snprintf(taken, sizeof(taken), "%s/victim", tmpdir);
			f = fopen(taken, "w");
			assert_non_null(f);
			fclose(f);
			assert_int_equal(symlink(taken, path), 0);
			mock_env_set("SLURM_SUBMIT_DIR", "/nonexistent");
		} else {
			f = fopen(path, "w");
			assert_non_null(f);
			fputs("mine\n", f);
			fclose(f);
		}
		assert_int_equal(start_plugin(S_CTX_REMOTE, shared, av), 0);
		assert_int_equal(give_option("dt-model", "7B", 1), 0);
		assert_int_equal(give_option("dt-plan", NULL, 1), 0);
		assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
		assert_env("DTPLAN_PLAN_STATE", "ok");
		file = mock_env_get("DTPLAN_FILE");
		assert_non_null(file);
		snprintf(taken, sizeof(taken), "%s/dtplan-%d.", tmpdir, JOB_ID);
		assert_int_equal(strncmp(file, taken, strlen(taken)), 0);
		assert_int_equal(strlen(file), strlen(path) + 7); /* ".XXXXXX" */
		snprintf(taken, sizeof(taken),
			 "log: dtplan: %s already exists and is not this "
			 "job's to replace; the plan is in %s",
			 path, file);
		assert_log_has(taken);
		assert_int_equal(lstat(file, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 0777, 0644);
		assert_true(st.st_size > 100);
		assert_int_equal(lstat(path, &st), 0);
		/* the files beside it take its fresh name, not the guessable one */
		snprintf(taken, sizeof(taken), "%.*s.hosts", (int)(strlen(file) - 5), file);
		assert_env("DTPLAN_HOSTFILE", taken);
		assert_int_equal(access(taken, R_OK), 0);
		unlink(taken);
		snprintf(taken, sizeof(taken), "%.*s.deepspeed.json", (int)(strlen(file) - 5),
			 file);
		assert_env("DTPLAN_DEEPSPEED_CONFIG", taken);
		unlink(taken);
		snprintf(taken, sizeof(taken), "%.*s.svg", (int)(strlen(file) - 5), file);
		assert_env("DTPLAN_SVG", taken);
		unlink(taken);
		snprintf(taken, sizeof(taken), "%s/dtplan-%d.hosts", tmpdir, JOB_ID);
		assert_int_equal(access(taken, F_OK), -1);
		if (shared) {
			assert_true(S_ISLNK(st.st_mode)); /* left alone */
			snprintf(taken, sizeof(taken), "%s/victim", tmpdir);
			assert_int_equal(stat(taken, &st), 0);
			assert_int_equal(st.st_size, 0);
		} else {
			assert_int_equal(st.st_size, 5); /* "mine\n" */
		}
		unlink(file);
		slurm_spank_exit(MOCK_SP, 0, NULL);
	}
}

/* A plan file that cannot be created: nothing beside it either (no
 * leftovers to block a rerun), and the words for the frameworks, which need
 * no file, are still there. */
static void user_init__plan_file_cannot_be_created__degraded_nothing_beside(void **state)
{
	char *av[] = {"json_dir=/nonexistent/dtplan"};

	(void)state;
	canned_batch_job();
	assert_int_equal(start_plugin(S_CTX_REMOTE, 1, av), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-plan", NULL, 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "degraded");
	assert_log_has("log: dtplan: plan degraded: cannot create /nonexistent/dtplan/dtplan-1234."
		       "json: No such file or directory");
	assert_null(mock_env_get("DTPLAN_FILE"));
	assert_null(mock_env_get("DTPLAN_HOSTFILE"));
	assert_null(mock_env_get("DTPLAN_DEEPSPEED_CONFIG"));
	assert_null(mock_env_get("DTPLAN_SVG"));
	assert_non_null(mock_env_get("DT_TP"));
	assert_non_null(mock_env_get("DT_MEGATRON_ARGS"));
}

/* Issue 13, finding 17: a node list longer than 8,192 characters (a large
 * job with names no range compresses) was read into a fixed buffer and the
 * plan degraded with the false reason "SLURM_JOB_NODELIST is not set". */
static void user_init__nodelist_over_8192_characters__planned(void **state)
{
	size_t cap = 3000 * 24 + 1, len = 0;
	char *list = malloc(cap), *huge;

	(void)state;
	assert_non_null(list);
	list[0] = '\0';
	for (int i = 1; i <= 3000; i++)
		len += (size_t)snprintf(list + len, cap - len, "%sgpu-%c%d-node%04d",
					i > 1 ? "," : "", 'a' + i % 26, i % 7, i);
	assert_true(len > 8192);
	canned_batch_job();
	mock_env_set("SLURM_JOB_NODELIST", list);
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-train", "gbs=4096", 1), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_false(mock_log_has("not set"));
	assert_env("DTPLAN_PLAN_STATE", "ok");
	assert_env("DT_NNODES", "3000");
	slurm_spank_exit(MOCK_SP, 0, NULL);
	free(list);

	/* Past the documented bound (4 MiB), the reason says so. */
	mock_spank_reset();
	canned_batch_job();
	huge = malloc((4 << 20) + 2);
	assert_non_null(huge);
	memset(huge, 'n', (4 << 20) + 1);
	huge[(4 << 20) + 1] = '\0';
	mock_env_set("SLURM_JOB_NODELIST", huge);
	free(huge);
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_log_has("log: dtplan: plan degraded: SLURM_JOB_NODELIST is longer than 4194303 "
		       "characters");
	assert_env("DTPLAN_PLAN_STATE", "degraded");
}

static void user_init__requeued_job__own_file(void **state)
{
	char path[512];

	(void)state;
	canned_batch_job();
	mock_items.restart_count = 2;
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-plan", "strict", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	snprintf(path, sizeof(path), "%s/dtplan-%d.2.json", tmpdir, JOB_ID);
	assert_env("DTPLAN_FILE", path);
	assert_int_equal(access(path, R_OK), 0);
	snprintf(path, sizeof(path), "%s/dtplan-%d.2.hosts", tmpdir, JOB_ID);
	assert_env("DTPLAN_HOSTFILE", path);
	snprintf(path, sizeof(path), "%s/dtplan-%d.2.deepspeed.json", tmpdir, JOB_ID);
	assert_env("DTPLAN_DEEPSPEED_CONFIG", path);
	snprintf(path, sizeof(path), "%s/dtplan-%d.2.svg", tmpdir, JOB_ID);
	assert_env("DTPLAN_SVG", path);
}

static void user_init__user_set_master_and_nccl__kept(void **state)
{
	(void)state;
	canned_batch_job();
	mock_env_set("MASTER_PORT", "12345");
	mock_env_set("NCCL_IB_HCA", "mlx5_0,mlx5_1");
	mock_env_set("DT_TP", "99"); /* ours: replaced */
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("MASTER_PORT", "12345");
	assert_env("NCCL_IB_HCA", "mlx5_0,mlx5_1");
	assert_env("MASTER_ADDR", "n1"); /* not set by the user: the plan's */
	/* torchrun meets where the job says. */
	assert_env("PET_MASTER_PORT", "12345");
	assert_env("PET_MASTER_ADDR", "n1");
	assert_true(strcmp(mock_env_get("DT_TP"), "99") != 0);
	assert_log_has("log: dtplan: keeping the job's own MASTER_PORT=12345 (the plan's: " JOB_PORT
		       ")");
	assert_false(mock_log_has("error:"));
}

static const struct {
	const char *what;
	const char *nodelist; /* NULL: unset */
	const char *model;    /* NULL: not given */
	const char *gpus;
	const char *reason;
} degraded_cases[] = {
	{"no model", "n[1-2]", NULL, "8", "dtplan: plan degraded: --dt-model: not given"},
	{"no node list", NULL, "7B", "8", "dtplan: plan degraded: SLURM_JOB_NODELIST is not set"},
	{"bad node list", "n[2-1", "7B", "8", "dtplan: plan degraded: cannot expand node list"},
	{"no GPUs", "n[1-2]", "7B", "0", "dtplan: plan degraded: the job has no GPUs"},
	{"model too big", "n1", "2T", "8", "dtplan: plan degraded: "},
};

static void user_init__failures__degraded_and_job_starts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(degraded_cases) / sizeof(degraded_cases[0]); i++) {
		mock_spank_reset();
		canned_batch_job();
		setenv("HWLOC_XMLFILE", test_data_path("cpu-only.xml"), 1);
		if (degraded_cases[i].nodelist != NULL)
			mock_env_set("SLURM_JOB_NODELIST", degraded_cases[i].nodelist);
		else
			mock_env_set("SLURM_JOB_NODELIST", "");
		mock_env_set("SLURM_GPUS_ON_NODE", degraded_cases[i].gpus);
		assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
		assert_int_equal(give_option("dt-plan", "auto", 1), 0);
		if (degraded_cases[i].model != NULL)
			assert_int_equal(give_option("dt-model", degraded_cases[i].model, 1), 0);
		if (slurm_spank_user_init(MOCK_SP, 0, NULL) != 0)
			fail_msg("%s: user_init failed", degraded_cases[i].what);
		if (!mock_log_has(degraded_cases[i].reason))
			fail_msg("%s: log lacks '%s':\n%s", degraded_cases[i].what,
				 degraded_cases[i].reason, mock_log());
		assert_env("DTPLAN_PLAN_STATE", "degraded");
		assert_env("MASTER_PORT", JOB_PORT);
		assert_non_null(mock_env_get("DTPLAN_PLAN_REASON"));
		/* The batch script itself runs. */
		mock_items.in_task = true;
		assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
		slurm_spank_exit(MOCK_SP, 0, NULL);
	}
}

static void user_init__mode_off_or_default_without_gpus__nothing(void **state)
{
	char *av[] = {"default=auto"};

	(void)state;
	canned_batch_job();
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "off", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_null(mock_env_get("DTPLAN_PLAN_STATE"));
	slurm_spank_exit(MOCK_SP, 0, NULL);

	/* default=auto plans GPU jobs only. */
	mock_spank_reset();
	canned_batch_job();
	mock_env_set("SLURM_GPUS_ON_NODE", "0");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 1, av), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_null(mock_env_get("DTPLAN_PLAN_STATE"));
	assert_string_equal(mock_log(), "");
}

static void user_init__setenv_refused__logged_and_continues(void **state)
{
	(void)state;
	canned_batch_job();
	mock_setenv_fail("DT_TP");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_log_has("error: dtplan: cannot set DT_TP: mock spank error");
	assert_null(mock_env_get("DT_TP"));
	assert_non_null(mock_env_get("DT_PP"));
}

/* ---- srun steps: task_init ------------------------------------------- */

/* Nodes a1 and a2, TP 2 x DP 2: ranks 0,1 on a1 and 2,3 on a2. */
static const char plan_json[] =
	"{\"schema\": \"dtplan.plan/1\","
	" \"parallelism\": {\"tp\": 2, \"pp\": 1, \"dp\": 2, \"zero\": 1, \"micro_batch\": 1,"
	"          \"num_microbatches\": 8, \"recompute\": \"none\"},"
	" \"placement\": {\"nodes\": [\"a1\", \"a2\"], \"ranks\": ["
	"  {\"node\": 0, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0, \"pp_rank\": 0,"
	"   \"dp_rank\": 0, \"nic\": \"mlx5_0\"},"
	"  {\"node\": 0, \"gpu\": 1, \"local_rank\": 1, \"tp_rank\": 1, \"pp_rank\": 0,"
	"   \"dp_rank\": 0, \"nic\": \"mlx5_1\"},"
	"  {\"node\": 1, \"gpu\": 0, \"local_rank\": 0, \"tp_rank\": 0, \"pp_rank\": 0,"
	"   \"dp_rank\": 1, \"nic\": \"mlx5_0\"},"
	"  {\"node\": 1, \"gpu\": 1, \"local_rank\": 1, \"tp_rank\": 1, \"pp_rank\": 0,"
	"   \"dp_rank\": 1, \"nic\": \"mlx5_1\"}]}}";

/* An srun step of 2 nodes x 2 tasks in a job whose batch step wrote the plan. */
static void srun_step_with_plan_file(void)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/dtplan-%d.json", tmpdir, JOB_ID);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(plan_json, f);
	fclose(f);
	mock_items.job_id = JOB_ID;
	mock_items.step_id = 0;
	mock_items.nnodes = 2;
	mock_items.node_id = 1;
	mock_items.local_task_count = 2;
	mock_items.uid = geteuid();
	mock_env_set("SLURM_JOB_NODELIST", "a[1-2]");
	mock_env_set("SLURM_GPUS_ON_NODE", "2");
	mock_env_set("DTPLAN_FILE", path);
	mock_env_set("DTPLAN_PLAN_STATE", "ok");
	mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan", "auto");
	setenv("SLURMD_NODENAME", "a2", 1);
}

/* Variables task_init sets: each task starts from the job's, without them. */
static void fresh_task(int task_id)
{
	static const char *const set[] = {"WORLD_SIZE",   "LOCAL_RANK",  "LOCAL_WORLD_SIZE",
					  "DT_TP_RANK",   "DT_PP_RANK",  "DT_DP_RANK",
					  "DT_LOCAL_GPU", "DT_NODE_RANK"};

	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		mock_env_unset(set[i]);
	mock_items.in_task = true;
	mock_items.task_id = task_id;
}

static void task_init__plan_file__ranks_in_plan_order(void **state)
{
	(void)state;
	srun_step_with_plan_file();
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	mock_items.in_task = true;
	mock_items.task_id = 1;
	assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
	/* a2 is plan node 1; its local task 1 is rank 3 (TP rank 1, DP rank 1). */
	assert_env("RANK", "3");
	assert_env("WORLD_SIZE", "4");
	assert_env("LOCAL_RANK", "1");
	assert_env("LOCAL_WORLD_SIZE", "2");
	assert_env("DT_TP_RANK", "1");
	assert_env("DT_PP_RANK", "0");
	assert_env("DT_DP_RANK", "1");
	assert_env("DT_NODE_RANK", "1");
	/* NCCL picks its own NICs unless the site says nccl_ib_hca=node. */
	assert_null(mock_env_get("NCCL_IB_HCA"));
	assert_string_equal(mock_log(), "");
}

static void items_refused__logged_no_plan_and_job_runs(void **state)
{
	(void)state;
	/* No job id: no plan, no file, no variables, one line naming the item. */
	canned_batch_job();
	mock_items.fail_item = S_JOB_ID;
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_null(mock_env_get("DTPLAN_PLAN_STATE"));
	assert_true(mock_log_has("dtplan: user_init: cannot read the job id"));
	slurm_spank_exit(MOCK_SP, 0, NULL);

	/* No task count in a task: no rank variables, the task runs. */
	mock_spank_reset();
	srun_step_with_plan_file();
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	mock_items.in_task = true;
	mock_items.task_id = 1;
	mock_items.fail_item = S_JOB_LOCAL_TASK_COUNT;
	assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
	assert_null(mock_env_get("RANK"));
	assert_true(mock_log_has("dtplan: task_init: cannot read the node's task count"));
	slurm_spank_exit(MOCK_SP, 0, NULL);
}

static void task_init__nccl_ib_hca_node__node_wide_list_in_every_task(void **state)
{
	char *av[] = {"nccl_ib_hca=node"};

	(void)state;
	srun_step_with_plan_file();
	assert_int_equal(start_plugin(S_CTX_REMOTE, 1, av), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	for (int t = 0; t < 2; t++) {
		fresh_task(t);
		mock_env_unset("NCCL_IB_HCA");
		assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
		/* a2's ranks use mlx5_0 (GPU 0) and mlx5_1 (GPU 1): both, in each task. */
		assert_env("NCCL_IB_HCA", "=mlx5_0,mlx5_1");
		assert_env("LOCAL_RANK", t == 0 ? "0" : "1");
	}
	assert_string_equal(mock_log(), "");
}

static void task_init__user_set_rank_and_nccl__kept_and_told_once(void **state)
{
	char *av[] = {"nccl_ib_hca=node"};

	(void)state;
	srun_step_with_plan_file();
	mock_env_set("RANK", "0");
	mock_env_set("NCCL_IB_HCA", "mlx5_0,mlx5_1");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 1, av), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	for (int t = 1; t >= 0; t--) {
		fresh_task(t);
		assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
		assert_env("RANK", "0");
		assert_env("NCCL_IB_HCA", "mlx5_0,mlx5_1");
		/* The rest of the rank's variables are the plan's (a2 holds ranks 2, 3). */
		assert_env("WORLD_SIZE", "4");
		assert_env("LOCAL_RANK", t == 1 ? "1" : "0");
		assert_env("DT_TP_RANK", t == 1 ? "1" : "0");
	}
	/* Said by local task 0 only, for what differs from the plan. */
	assert_int_equal(log_count("keeping the job's own RANK=0 (the plan's: 2)"), 1);
	assert_int_equal(log_count("keeping the job's own NCCL_IB_HCA=mlx5_0,mlx5_1 (the "
				   "plan's: =mlx5_0,mlx5_1)"),
			 1);
	assert_int_equal(log_count("keeping"), 2);
}

static void task_init__one_task_per_node__node_rank(void **state)
{
	(void)state;
	srun_step_with_plan_file();
	mock_items.local_task_count = 1;
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	mock_items.in_task = true;
	assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
	assert_env("DT_NODE_RANK", "1");
	assert_env("PET_NODE_RANK", "1"); /* torchrun --node-rank */
	assert_env("DT_NNODES", "2");
	assert_null(mock_env_get("RANK"));
}

static void task_init__step_not_matching_plan__degraded_once(void **state)
{
	(void)state;
	srun_step_with_plan_file();
	mock_items.local_task_count = 3;
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	mock_items.in_task = true;
	for (int t = 0; t < 3; t++) {
		mock_items.task_id = t;
		assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
	}
	assert_log_has("log: dtplan: plan degraded: rank environment not set: node 'a2' runs 3 "
		       "tasks of the step, the plan places 2 ranks there");
	/* Logged by task 0 only. */
	assert_int_equal(log_count("rank environment not set"), 1);
	assert_null(mock_env_get("RANK"));
}

static void task_init__unreadable_plan_file__recomputed(void **state)
{
	(void)state;
	srun_step_with_plan_file();
	mock_env_set("DTPLAN_FILE", "/nonexistent/dtplan.json");
	mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model", "7B");
	mock_items.node_id = 0;
	setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
	setenv("SLURMD_NODENAME", "a1", 1);
	mock_env_set("SLURM_GPUS_ON_NODE", "8");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	/* The step recomputed the plan and exported it for its tasks. */
	assert_env("MASTER_ADDR", "a1");
	assert_env("DT_NODE_ORDER", "a1,a2");
	assert_non_null(mock_env_get("DT_TP"));
	assert_non_null(mock_env_get("DT_MEGATRON_ARGS"));
	assert_env("PET_MASTER_ADDR", "a1");
	assert_null(mock_env_get("DTPLAN_HOSTFILE")); /* files are the batch step's */
}

/* Runs an srun step whose DTPLAN_FILE names path, which cannot hold a plan:
 * user_init returns (alarm() fails a hang) and the step recomputes the plan. */
static void plan_file_refused_then_recomputed(const char *path)
{
	srun_step_with_plan_file();
	mock_env_set("DTPLAN_FILE", path);
	mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model", "7B");
	mock_items.node_id = 0;
	setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
	setenv("SLURMD_NODENAME", "a1", 1);
	mock_env_set("SLURM_GPUS_ON_NODE", "8");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	alarm(test_bound_s(60));
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	alarm(0);
	assert_env("MASTER_ADDR", "a1");
	assert_env("DT_NODE_ORDER", "a1,a2");
	assert_non_null(mock_env_get("DT_TP"));
}

/* Issue 13, finding 4: DTPLAN_FILE naming a FIFO blocked user_init in
 * slurmstepd forever. */
static void user_init__plan_file_is_fifo__recomputed_without_blocking(void **state)
{
	char fifo[512];

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo.json", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	plan_file_refused_then_recomputed(fifo);
}

/* Finding 5: a device is refused for what it is, not read. */
static void user_init__plan_file_is_device__recomputed(void **state)
{
	(void)state;
	plan_file_refused_then_recomputed("/dev/zero");
}

static void user_init__plan_file_without_placement__degraded_no_recompute(void **state)
{
	char path[512];
	FILE *f;

	(void)state;
	srun_step_with_plan_file();
	mock_items.node_id = 0;
	snprintf(path, sizeof(path), "%s/dtplan-%d.json", tmpdir, JOB_ID);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"parallelism\": {\"tp\": 1, \"pp\": 1, \"dp\": 4}}", f);
	fclose(f);
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_log_has("log: dtplan: plan degraded: ");
	assert_log_has("no \"placement\" object: the plan places no ranks");
	/* Not recomputed: nothing exported by this step. */
	assert_null(mock_env_get("MASTER_ADDR"));
	mock_items.in_task = true;
	assert_int_equal(slurm_spank_task_init(MOCK_SP, 0, NULL), 0);
	assert_null(mock_env_get("RANK"));
}

/* ---- hostile environment (issue 13) ---------------------------------- */

/* Writes a JSON object of size bytes to path: {"x": [{},{},...]} and blanks. */
static void write_empties(const char *path, size_t size)
{
	static char block[3 * 21846];
	const char head[] = "{\"x\": [", tail[] = "{}]}";
	size_t n = (size - strlen(head) - strlen(tail)) / 3, used = 0;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < sizeof(block); i += 3)
		memcpy(block + i, "{},", 3);
	fputs(head, f);
	for (size_t left = n; left > 0;) {
		size_t k = left < sizeof(block) / 3 ? left : sizeof(block) / 3;

		assert_int_equal(fwrite(block, 3, k, f), k);
		left -= k;
	}
	fputs(tail, f);
	used = strlen(head) + 3 * n + strlen(tail);
	for (; used < size; used++)
		fputc(' ', f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(used, size);
}

/* Writes size bytes of a repeated pattern to path. */
static void write_pattern(const char *path, const char *pattern, size_t size)
{
	size_t len = strlen(pattern), done = 0;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (; done + len <= size; done += len)
		assert_int_equal(fwrite(pattern, 1, len, f), len);
	assert_int_equal(fwrite(pattern, 1, size - done, f), size - done);
	assert_int_equal(fclose(f), 0);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A string of n copies of c (caller frees). */
static char *repeated(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

enum step { BATCH, SRUN };

/* What the user controls, and what the plugin must answer. */
struct hostile {
	const char *what;
	enum step step;
	const char *plan_file; /* DTPLAN_FILE (srun): a path, or "@NAME" in tmpdir */
	const char *xmlfile;   /* HWLOC_XMLFILE of slurmstepd, NULL: the HGX fixture */
	const char *fsroot;    /* HWLOC_FSROOT, NULL: unset */
	char opt;              /* an option from SLURM_SPANK__*: 'm' model, 't' train, 'p' plan */
	const char *opt_value; /* its value; "#N": N bytes of 'A' */
	const char *says;      /* in the log */
	bool planned;          /* the step still ends with a plan (DT_TP set) */
};

static const struct hostile hostile_cases[] = {
	{"plan file: 64 MiB of {} (within the limit)", SRUN, "@big.json", NULL, NULL, 0, NULL,
	 "no \"parallelism\" object", false},
	{"plan file: one byte over 64 MiB", SRUN, "@huge.json", NULL, NULL, 0, NULL,
	 "huge.json: larger than the 64 MiB limit for a plan file): computing the plan again",
	 true},
	{"plan file: a symbolic link", SRUN, "@link.json", NULL, NULL, 0, NULL,
	 "is a symbolic link, which is not followed for a plan file", true},
	{"plan file: a FIFO", SRUN, "@fifo.json", NULL, NULL, 0, NULL, "is a FIFO", true},
	{"plan file: /dev/zero", SRUN, "/dev/zero", NULL, NULL, 0, NULL,
	 "is a character device, not a regular file", true},
	{"plan file: a directory", SRUN, "@", NULL, NULL, 0, NULL,
	 "is a directory, not a regular file", true},
	{"plan file: a bracket 100,000 deep", SRUN, "@deep.json", NULL, NULL, 0, NULL,
	 "nested more than 32 levels deep", false},
	{"--dt-model: 1 MiB long", BATCH, NULL, NULL, NULL, 'm', "#1048576",
	 "--dt-model: value longer than 1023 characters", false},
	{"--dt-model: control bytes", BATCH, NULL, NULL, NULL, 'm', "\x01\x7f\xff%s%n",
	 "plan degraded: --dt-model: unknown model", false},
	{"--dt-train: 900 bytes of garbage", BATCH, NULL, NULL, NULL, 't', "#900",
	 "plan degraded: --dt-train: ", false},
	{"--dt-plan: garbage", BATCH, NULL, NULL, NULL, 'p',
	 "\xff"
	 "auto",
	 "--dt-plan: '\xff"
	 "auto' is not ",
	 false},
	{"HWLOC_XMLFILE=/dev/zero", BATCH, NULL, "/dev/zero", NULL, 0, NULL,
	 "plan degraded: cannot discover node n1: /dev/zero: is a character device", false},
	{"HWLOC_XMLFILE: a FIFO", BATCH, NULL, "@fifo.xml", NULL, 0, NULL,
	 "fifo.xml: is a FIFO (named pipe), not a regular file", false},
	/* hwloc 2.14+ refuses it (tests/hwloc_expect.h), earlier ones crash */
	{"HWLOC_XMLFILE: an XML hwloc crashes on", BATCH, NULL, "hwloc-crash.xml", NULL, 0, NULL,
	 DT_HWLOC_REJECTS_INCOMPLETE_SETS
		 ? "hwloc-crash.xml: not a valid hwloc XML topology (malformed)"
		 : "plan degraded: cannot discover node n1: hwloc discovery: killed by signal",
	 false},
	{"HWLOC_FSROOT=/dev/zero", BATCH, NULL, "", "/dev/zero", 0, NULL,
	 "plan degraded: node n1 has no GPUs (inventory source 'live')", false},
};

/* Sets the case up in the mock job; returns a buffer to free (or NULL). */
static char *hostile_setup(const struct hostile *h)
{
	static const char *const opt_vars[] = {
		"SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model",
		"SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_train",
		"SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan",
	};
	char path[512], target[512], *value = NULL;

	if (h->step == SRUN) {
		srun_step_with_plan_file();
		mock_items.node_id = 0;
		mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model", "7B");
		mock_env_set("SLURM_GPUS_ON_NODE", "8");
		setenv("SLURMD_NODENAME", "a1", 1);
	} else {
		canned_batch_job();
		setenv("SLURMD_NODENAME", "n1", 1);
		mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan", "auto");
		mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model", "7B");
	}
	setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
	if (h->plan_file != NULL && h->plan_file[0] == '@') {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, h->plan_file + 1);
		if (strcmp(h->plan_file, "@big.json") == 0) {
			write_empties(path, (size_t)64 << 20);
		} else if (strcmp(h->plan_file, "@huge.json") == 0) {
			write_empties(path, ((size_t)64 << 20) + 1);
		} else if (strcmp(h->plan_file, "@link.json") == 0) {
			snprintf(target, sizeof(target), "%s/dtplan-%d.json", tmpdir, JOB_ID);
			assert_int_equal(symlink(target, path), 0);
		} else if (strcmp(h->plan_file, "@fifo.json") == 0) {
			assert_int_equal(mkfifo(path, 0600), 0);
		} else if (strcmp(h->plan_file, "@deep.json") == 0) {
			write_pattern(path, "[", 100000);
		}
		mock_env_set("DTPLAN_FILE", path);
	} else if (h->plan_file != NULL) {
		mock_env_set("DTPLAN_FILE", h->plan_file);
	}
	if (h->xmlfile != NULL && h->xmlfile[0] == '@') {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, h->xmlfile + 1);
		assert_int_equal(mkfifo(path, 0600), 0);
		setenv("HWLOC_XMLFILE", path, 1);
	} else if (h->xmlfile != NULL && h->xmlfile[0] == '\0') {
		unsetenv("HWLOC_XMLFILE");
	} else if (h->xmlfile != NULL) {
		setenv("HWLOC_XMLFILE",
		       h->xmlfile[0] == '/' ? h->xmlfile : test_data_path(h->xmlfile), 1);
	}
	if (h->fsroot != NULL)
		setenv("HWLOC_FSROOT", h->fsroot, 1);
	if (h->opt != 0) {
		const char *v = h->opt_value;

		if (v[0] == '#') {
			v = value = repeated('A', strtoul(v + 1, NULL, 10));
		}
		mock_env_set(opt_vars[h->opt == 'm' ? 0 : h->opt == 't' ? 1 : 2], v);
	}
	return value;
}

/*
 * Issue 13: everything a user controls in the job (DTPLAN_FILE, the
 * SLURM_SPANK__* option variables) or that reaches slurmstepd's hwloc
 * (HWLOC_*), at its most hostile.  The real plugin code runs under the
 * SPANK mock: user_init and task_init must return 0 within 60 s (alarm(),
 * ten times that under valgrind), and the log must say why the plan is
 * degraded or recomputed.
 */
static void hostile_environment__bounded_degraded_and_said(void **state)
{
	static const char *const made[] = {"big.json",  "huge.json", "link.json",
					   "fifo.json", "deep.json", "fifo.xml"};

	(void)state;
	for (size_t i = 0; i < sizeof(hostile_cases) / sizeof(hostile_cases[0]); i++) {
		const struct hostile *h = &hostile_cases[i];
		char *buf;
		double t0;

		mock_spank_reset();
		unsetenv("HWLOC_FSROOT");
		buf = hostile_setup(h);
		assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
		t0 = seconds();
		alarm(test_bound_s(60));
		if (slurm_spank_user_init(MOCK_SP, 0, NULL) != 0)
			fail_msg("%s: user_init failed", h->what);
		mock_items.in_task = true;
		mock_items.task_id = 0;
		if (slurm_spank_task_init(MOCK_SP, 0, NULL) != 0)
			fail_msg("%s: task_init failed", h->what);
		alarm(0);
		print_message("%-45s %.2f s\n", h->what, seconds() - t0);
		if (!mock_log_has(h->says))
			fail_msg("%s: log lacks '%s':\n%s", h->what, h->says, mock_log());
		if (h->planned && mock_env_get("DT_TP") == NULL)
			fail_msg("%s: no plan recomputed:\n%s", h->what, mock_log());
		if (!h->planned && mock_env_get("DT_TP") != NULL)
			fail_msg("%s: planned anyway", h->what);
		slurm_spank_exit(MOCK_SP, 0, NULL);
		free(buf);
		for (size_t k = 0; k < sizeof(made) / sizeof(made[0]); k++) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", tmpdir, made[k]);
			unlink(path);
		}
	}
	unsetenv("HWLOC_FSROOT");
}

/*
 * Runs task_init in a child process, as slurmstepd does in each task, and
 * returns its exit status (-1: it returned instead, with *rc its value);
 * what it wrote on stderr goes to errpath.
 */
static int task_init_in_child(const char *errpath, int *rc)
{
	int status = 0, pipefd[2];
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r;

		close(pipefd[0]);
		if (freopen(errpath, "w", stderr) == NULL)
			_exit(99);
		r = slurm_spank_task_init(MOCK_SP, 0, NULL);
		(void)write(pipefd[1], &r, sizeof(r));
		_exit(0);
	}
	close(pipefd[1]);
	*rc = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (read(pipefd[0], rc, sizeof(*rc)) != (ssize_t)sizeof(*rc)) {
		close(pipefd[0]);
		assert_true(WIFEXITED(status));
		return WEXITSTATUS(status);
	}
	close(pipefd[0]);
	return -1;
}

/* The task's stderr says so once per node (local task 0), and the task ends
 * with status 1 whatever the step: a -1 would be ignored for an "optional"
 * plugin. */
static void check_task_refused(int task_id, const char *reason)
{
	char errpath[512], *text;
	int rc;

	snprintf(errpath, sizeof(errpath), "%s/task%d.err", tmpdir, task_id);
	mock_items.in_task = true;
	mock_items.task_id = task_id;
	assert_int_equal(task_init_in_child(errpath, &rc), 1);
	text = read_written(errpath);
	if (task_id == 0 && strstr(text, reason) == NULL)
		fail_msg("task %d stderr: '%s', expected '%s'", task_id, text, reason);
	if (task_id != 0)
		assert_string_equal(text, "");
	free(text);
}

static void task_init__refused_plan__ends_every_task_of_an_srun_step(void **state)
{
	(void)state;
	srun_step_with_plan_file();
	mock_env_set("DTPLAN_PLAN_STATE", "refused");
	mock_env_set("DTPLAN_PLAN_REASON", "too-many-leaves: 2 leaves, 1 needed");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	check_task_refused(0, "dtplan: job refused: too-many-leaves: 2 leaves, 1 needed\n");
	check_task_refused(1, "");
}

/* policy=deny on 8 nodes under two thin leaves where one would do: the
 * batch step's script, and under salloc (no batch step wrote a plan) the
 * interactive step (LaunchParameters=use_interactive_step) and every srun
 * step recompute the plan and end their tasks, which ends the job, the
 * step or the salloc session. */
static void task_init__refused_plan__batch_interactive_and_srun_steps_end(void **state)
{
	static const uint32_t steps[] = {SLURM_BATCH_SCRIPT, SLURM_INTERACTIVE_STEP, 0};

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char site[4200], topo[4200], *av[3] = {site, topo, "policy=deny"};

		/* each step is a fresh slurmstepd: the plugin exits in between */
		slurm_spank_exit(MOCK_SP, 0, NULL);
		mock_spank_reset();
		char *sp = realpath(test_data_path("dtplan-thin-three-leaves.conf"), NULL);
		char *tp = realpath(test_data_path("topology-three-leaves.conf"), NULL);

		/* absolute: relative ones are read in Slurm's configuration folder */
		assert_non_null(sp);
		assert_non_null(tp);
		snprintf(site, sizeof(site), "site=%s", sp);
		snprintf(topo, sizeof(topo), "topology=%s", tp);
		free(sp);
		free(tp);
		setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
		setenv("SLURMD_NODENAME", "gpu01", 1);
		mock_items.job_id = JOB_ID;
		mock_items.step_id = steps[i];
		mock_items.uid = geteuid();
		mock_items.local_task_count = 1;
		mock_env_set("SLURM_JOB_NODELIST", "gpu[01-04,09-12]");
		mock_env_set("SLURM_GPUS_ON_NODE", "8");
		mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan", "auto");
		mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model", "7B");
		mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_train", "gbs=64");
		mock_env_set("SLURM_SUBMIT_DIR", tmpdir);
		assert_int_equal(start_plugin(S_CTX_REMOTE, 3, av), 0);
		assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
		assert_env("DTPLAN_PLAN_STATE", "refused");
		check_task_refused(0,
				   "dtplan: job refused: too-many-leaves: the 8 nodes span 2 leaf");
	}
}

/* ---- job prolog ------------------------------------------------------ */

static void prolog__no_node_list__logged_never_fails(void **state)
{
	(void)state;
	unsetenv("SLURM_NODELIST");
	unsetenv("SLURM_JOB_NODELIST");
	mock_getopt_set("dt-plan", "auto");
	assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 0, NULL), 0);
	assert_log_has("error: dtplan: prolog: job 0: no node list or node name in the "
		       "environment: not measured");
}

/* One node: the prolog measures it (node_xml=) into the spool, the batch
 * step plans from that file, the epilog removes it (and a week-old one). */
static void prolog_batch_epilog__one_node__measured_planned_removed(void **state)
{
	char a1[300], a2[4200], a3[64], *av[3] = {a1, a2, a3}, path[512], old[512];
	char *text = NULL;
	struct dtplan_measure_file f;
	struct utimbuf week = {0, 0};
	struct stat st;
	FILE *fp;

	(void)state;
	snprintf(a1, sizeof(a1), "spool_dir=%s/spool", tmpdir);
	snprintf(a2, sizeof(a2), "node_xml=%s", test_data_path("hgx-h100-8gpu.xml"));
	/* 3 s, and 90 s under valgrind, where the node's discovery (0.3 of the
	 * budget) is slow and slower still beside the other programs memcheck
	 * runs at once; the prolog ends as soon as the node is measured, so the
	 * bound costs nothing when it passes */
	snprintf(a3, sizeof(a3), "probe_budget=%us",
		 test_bound_s(3) * (test_bound_s(1) > 1 ? 3 : 1));
	mock_items.job_id = JOB_ID;
	setenv("SLURM_NODELIST", "n1", 1);
	mock_getopt_set("dt-plan", "auto");
	assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 3, av), 0);
	unsetenv("SLURM_NODELIST");
	snprintf(path, sizeof(path), "%s/spool/%d.json", tmpdir, JOB_ID);
	if (geteuid() != 0) {
		/* the spool must be root's: only a root test run gets the file */
		assert_int_equal(access(path, F_OK), -1);
		return;
	}
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(dtplan_file_read(path, DTPLAN_FILE_MEASUREMENTS, &text, NULL, NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_measure_file_from_json(text, &f, NULL), DTPLAN_OK);
	free(text);
	assert_int_equal(f.job_id, JOB_ID);
	assert_string_equal(f.m->source, "prolog");
	assert_int_equal(f.m->n_reported, 1);
	assert_true(f.host_record[0] >= 0 && (size_t)f.host_record[0] < f.n_records);
	assert_int_equal(f.records[f.host_record[0]].n_gpus, 8);
	dtplan_measure_file_fini(&f);

	/* the batch step on n1 reads it while root and plans from it */
	canned_batch_job();
	mock_env_set("SLURM_JOB_NODELIST", "n1");
	mock_env_set("SLURM_JOB_NUM_NODES", "1");
	unsetenv("HWLOC_XMLFILE"); /* the measurement, not a live discovery */
	assert_int_equal(start_plugin(S_CTX_REMOTE, 3, av), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "ok");
	snprintf(old, sizeof(old), "%s/dtplan-%d.json", tmpdir, JOB_ID);
	assert_int_equal(dtplan_file_read(old, DTPLAN_FILE_PLAN, &text, NULL, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, "\"source\": \"prolog\""));
	assert_non_null(strstr(text, "\"inventories\": \"measured\""));
	free(text);
	assert_false(mock_log_has("assumed-nodes"));

	/* the epilog: the job's file, and a week-old one, go */
	snprintf(old, sizeof(old), "%s/spool/5.json", tmpdir);
	fp = fopen(old, "w");
	assert_non_null(fp);
	fclose(fp);
	week.actime = week.modtime = time(NULL) - 8 * 24 * 3600;
	assert_int_equal(utime(old, &week), 0);
	assert_int_equal(slurm_spank_job_epilog(MOCK_SP, 3, av), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(old, F_OK), -1);
}

/* The probe's port is held by another process before the prolog (issue
 * 26): the leader cannot listen, and says so in the spool; the batch step's
 * plan is degraded naming the port, not PrologFlags. */
static void prolog_batch__ports_taken__plan_degraded_names_them(void **state)
{
	char a1[300], a2[4200], a3[64], a4[64], *av[4] = {a1, a2, a3, a4}, path[512];
	char want[256], *text = NULL;
	struct dtplan_measure_file f;
	struct sockaddr_in6 s6 = {0};
	socklen_t len = sizeof(s6);
	int fd = socket(AF_INET6, SOCK_STREAM, 0), zero = 0;
	unsigned port;

	(void)state;
	/* a port of the kernel's choosing, held on every address as the probe
	 * would listen */
	assert_true(fd >= 0);
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	s6.sin6_family = AF_INET6;
	s6.sin6_addr = in6addr_any;
	assert_int_equal(bind(fd, (struct sockaddr *)&s6, sizeof(s6)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&s6, &len), 0);
	port = ntohs(s6.sin6_port);
	snprintf(a1, sizeof(a1), "spool_dir=%s/spool", tmpdir);
	snprintf(a2, sizeof(a2), "node_xml=%s", test_data_path("hgx-h100-8gpu.xml"));
	snprintf(a3, sizeof(a3), "probe_budget=%us", test_bound_s(3));
	snprintf(a4, sizeof(a4), "probe_ports=%u-%u", port, port);
	mock_items.job_id = JOB_ID;
	setenv("SLURM_NODELIST", "n1", 1);
	mock_getopt_set("dt-plan", "auto");
	assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 4, av), 0);
	unsetenv("SLURM_NODELIST");
	snprintf(path, sizeof(path), "%s/spool/%d.json", tmpdir, JOB_ID);
	if (geteuid() != 0) {
		/* the spool must be root's: only a root test run gets the file */
		close(fd);
		assert_int_equal(access(path, F_OK), -1);
		return;
	}
	assert_int_equal(dtplan_file_read(path, DTPLAN_FILE_MEASUREMENTS, &text, NULL, NULL),
			 DTPLAN_OK);
	assert_int_equal(dtplan_measure_file_from_json(text, &f, NULL), DTPLAN_OK);
	free(text);
	assert_string_equal(f.m->source, "prolog");
	assert_int_equal(f.m->n_reported, 0);
	assert_non_null(strstr(f.m->failed, "n1: cannot listen on port"));
	dtplan_measure_file_fini(&f);

	canned_batch_job();
	mock_env_set("SLURM_JOB_NODELIST", "n1");
	mock_env_set("SLURM_JOB_NUM_NODES", "1");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 4, av), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	close(fd);
	assert_env("DTPLAN_PLAN_STATE", "degraded");
	snprintf(want, sizeof(want),
		 "dtplan: plan degraded: nothing measured by the prolog: n1: cannot listen on "
		 "port %u (the job's of probe_ports=%u-%u): Address already in use",
		 port, port, port);
	assert_log_has(want);
	assert_false(mock_log_has("PrologFlags"));
	assert_int_equal(slurm_spank_job_epilog(MOCK_SP, 4, av), 0);
	assert_int_equal(access(path, F_OK), -1);
}

/* A spool no prolog can write in (a link, a folder others may write, one
 * on a full disk, one that does not exist in a folder that does not
 * either): there is no file, and the batch step's plan is degraded naming
 * the spool, not PrologFlags (issue 26). */
static void spool_unusable(size_t i)
{
	static const struct {
		const char *name;
		const char *why;
	} cases[] = {
		{"spool-link", "is a symbolic link, which the prolog does not write through"},
		{"spool-open", "is not a folder of root's that only root may write: the prolog "
			       "does not use it"},
		{"spool-gone/spool", "does not exist, and the prolog cannot make it: "},
	};
	char a1[300], a2[4200], a3[64], *av[3] = {a1, a2, a3}, dir[300], real[300], want[1000];

	if (geteuid() != 0)
		skip(); /* the spool must be root's */
	snprintf(real, sizeof(real), "%s/spool-real", tmpdir);
	assert_int_equal(mkdir(real, 0700), 0);
	{
		snprintf(dir, sizeof(dir), "%s/%s", tmpdir, cases[i].name);
		if (i == 0) {
			assert_int_equal(symlink(real, dir), 0);
		} else if (i == 1) {
			assert_int_equal(mkdir(dir, 0700), 0);
			assert_int_equal(chmod(dir, 0777), 0);
		}
		snprintf(a1, sizeof(a1), "spool_dir=%.280s", dir);
		snprintf(a2, sizeof(a2), "node_xml=%s", test_data_path("hgx-h100-8gpu.xml"));
		snprintf(a3, sizeof(a3), "probe_budget=%us", test_bound_s(3));
		mock_items.job_id = JOB_ID;
		setenv("SLURM_NODELIST", "n1", 1);
		mock_getopt_set("dt-plan", "auto");
		/* the prolog's measurement (under valgrind, its forked discovery
		 * child reports the engine's poll array as lost: the batch step's
		 * side is what this test is about) */
		if (getenv("DTPLAN_TEST_UNDER_VALGRIND") == NULL)
			assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 3, av), 0);
		unsetenv("SLURM_NODELIST");
		canned_batch_job();
		mock_env_set("SLURM_JOB_NODELIST", "n1");
		mock_env_set("SLURM_JOB_NUM_NODES", "1");
		assert_int_equal(start_plugin(S_CTX_REMOTE, 3, av), 0);
		assert_int_equal(give_option("dt-plan", "auto", 1), 0);
		assert_int_equal(give_option("dt-model", "7B", 1), 0);
		assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
		assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
		assert_env("DTPLAN_PLAN_STATE", "degraded");
		snprintf(want, sizeof(want),
			 "dtplan: plan degraded: nothing measured by the prolog: spool_dir %s "
			 "%s%s%s",
			 dir, cases[i].why, i == 2 ? tmpdir : "",
			 i == 2 ? "/spool-gone: No such file or directory" : "");
		assert_log_has(want);
		assert_false(mock_log_has("PrologFlags"));
		/* nothing written through the link */
		snprintf(want, sizeof(want), "%s/%d.json", real, JOB_ID);
		assert_int_equal(access(want, F_OK), -1);
		assert_int_equal(slurm_spank_job_epilog(MOCK_SP, 3, av), 0);
	}
}

static void prolog_batch__spool_a_link__plan_degraded_names_it(void **state)
{
	(void)state;
	spool_unusable(0);
}

static void prolog_batch__spool_others_may_write__plan_degraded_names_it(void **state)
{
	(void)state;
	spool_unusable(1);
}

static void prolog_batch__spool_missing_parent_missing__plan_degraded_names_it(void **state)
{
	(void)state;
	spool_unusable(2);
}

/* A spool that does not exist where a prolog would have made it: no prolog
 * ran, and the note names the folder as well as PrologFlags. */
static void batch__spool_missing_no_prolog__note_names_it(void **state)
{
	char a1[300], a2[4200], *av[2] = {a1, a2}, dir[300], want[700];

	(void)state;
	if (geteuid() != 0)
		skip(); /* the spool must be root's */
	snprintf(dir, sizeof(dir), "%s/spool-never", tmpdir);
	snprintf(a1, sizeof(a1), "spool_dir=%.280s", dir);
	snprintf(a2, sizeof(a2), "node_xml=%s", test_data_path("hgx-h100-8gpu.xml"));
	mock_items.job_id = JOB_ID;
	canned_batch_job();
	mock_env_set("SLURM_JOB_NODELIST", "n1");
	mock_env_set("SLURM_JOB_NUM_NODES", "1");
	assert_int_equal(start_plugin(S_CTX_REMOTE, 2, av), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	snprintf(want, sizeof(want),
		 "nothing measured (spool_dir %s does not exist, and no prolog made it: is "
		 "PrologFlags=Alloc set in slurm.conf?)",
		 dir);
	assert_log_has(want);
}

static void prolog__cache_dir__writes_node_xml(void **state)
{
	char arg[300], path[512], *av[1] = {arg};

	(void)state;
	snprintf(arg, sizeof(arg), "cache_dir=%s", tmpdir);
	setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
	setenv("SLURMD_NODENAME", "n7", 1);
	mock_getopt_set("dt-plan", "");
	assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 1, av), 0);
	snprintf(path, sizeof(path), "%s/n7.xml", tmpdir);
	if (access(path, R_OK) != 0)
		fail_msg("%s not written; log:\n%s", path, mock_log());
}

static void prolog__job_without_plan__no_cache(void **state)
{
	char arg[300], path[512], *av[1] = {arg};

	(void)state;
	snprintf(arg, sizeof(arg), "cache_dir=%s", tmpdir);
	setenv("SLURMD_NODENAME", "n7", 1);
	mock_getopt_set("dt-plan", "off");
	assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 1, av), 0);
	snprintf(path, sizeof(path), "%s/n7.xml", tmpdir);
	assert_int_equal(access(path, F_OK), -1);
}

static void prolog__cache_failure_or_bad_args__logged_never_fails(void **state)
{
	char *bad_dir[] = {"cache_dir=/nonexistent/dtplan-cache"};
	char *bad_arg[] = {"cache_dir"};

	(void)state;
	setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
	mock_getopt_set("dt-model", "7B");
	assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 1, bad_dir), 0);
	assert_log_has("error: dtplan: prolog: cannot cache node n1 in /nonexistent/dtplan-cache");
	assert_int_equal(slurm_spank_job_prolog(MOCK_SP, 1, bad_arg), 0);
	assert_log_has("error: dtplan: configuration: ");
}

/* ---- the fabric service and the collector (service.c) ---------------- */

/* n1 and n2 under two leaves with 4:1 uplinks, as the service serves it. */
static const char service_fabric[] =
	"{\"schema\": \"dtplan.fabric/1\", \"switches\": ["
	"{\"name\": \"rackA\", \"nodes\": \"n1\", \"oversubscription\": 4},"
	"{\"name\": \"rackB\", \"nodes\": \"n2\", \"oversubscription\": 4},"
	"{\"name\": \"core\", \"switches\": [\"rackA\", \"rackB\"]}]}\n";

/* Plugstack arguments naming the server's paths (NULL: not set). */
struct service_args {
	char buf[6][600];
	char *av[6];
	int ac;
};

static void service_args(struct service_args *a, const char *fabric, const char *collect,
			 const char *token)
{
	memset(a, 0, sizeof(*a));
	if (fabric != NULL)
		snprintf(a->buf[a->ac++], sizeof(a->buf[0]), "fabric_url=%s",
			 test_server_url(&server, fabric));
	if (collect != NULL)
		snprintf(a->buf[a->ac++], sizeof(a->buf[0]), "report_url=%s",
			 test_server_url(&server, collect));
	if (token != NULL)
		snprintf(a->buf[a->ac++], sizeof(a->buf[0]), "report_token_file=%s", token);
	snprintf(a->buf[a->ac++], sizeof(a->buf[0]), "fabric_timeout=1s");
	snprintf(a->buf[a->ac++], sizeof(a->buf[0]), "report_timeout=1s");
	for (int i = 0; i < a->ac; i++)
		a->av[i] = a->buf[i];
}

/* Python's verdict on the collector's reports: the expression's str(). */
static char *reports_eval(const char *expr)
{
	char cmd[2048], *out = calloc(1, 4096);
	FILE *p;

	assert_non_null(out);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; "
		 "print(eval(sys.argv[2]))' '%s/reports.jsonl' '%s'",
		 server.dir, expr);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(out, 4096, p) == NULL)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
	return out;
}

static void assert_reports(const char *expr, const char *want)
{
	char *got = reports_eval(expr);

	if (strcmp(got, want) != 0)
		fail_msg("reports: %s is '%s', expected '%s'", expr, got, want);
	free(got);
}

static void service_reset(void)
{
	test_server_forget(&server, "reports.jsonl");
	test_server_forget(&server, "auth.log");
	test_server_forget(&server, "requests.log");
}

static void user_init__fabric_service_and_collector__plan_uses_it_one_report(void **state)
{
	struct service_args a;
	char token[512], path[512], want[600], *text;
	FILE *f;

	(void)state;
	if (!have_server)
		skip();
	service_reset();
	test_server_put(&server, "fabric.json", service_fabric);
	snprintf(token, sizeof(token), "%s/token", tmpdir);
	f = fopen(token, "w");
	assert_non_null(f);
	fputs("tok-123\n", f);
	fclose(f);
	assert_int_equal(chmod(token, 0600), 0);
	service_args(&a, "/files/fabric.json", "/collect", token);
	canned_batch_job();
	mock_env_set("SLURM_JOB_USER", "alice");
	mock_env_set("SLURM_CLUSTER_NAME", "testcl");
	assert_int_equal(start_plugin(S_CTX_REMOTE, a.ac, a.av), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	/* init_post_opt (root) asks the service; user_init does not again */
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_int_equal(test_server_lines(&server, "requests.log"), 1);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "ok");
	/* the plan places the nodes under the service's leaves */
	snprintf(path, sizeof(path), "%s/dtplan-%d.json", tmpdir, JOB_ID);
	f = fopen(path, "r");
	assert_non_null(f);
	text = calloc(1, 1 << 20);
	assert_non_null(text);
	assert_true(fread(text, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "\"name\": \"rackA\""));
	assert_non_null(strstr(text, "\"name\": \"rackB\""));
	assert_null(strstr(text, "fabric-service"));
	free(text);
	/* exactly one report, with the job's facts and the plan */
	assert_int_equal(test_server_lines(&server, "reports.jsonl"), 1);
	assert_reports("len(r)", "1");
	snprintf(want, sizeof(want),
		 "['dtplan.report/1', 'plugin', 1234, 'alice', %u, 'testcl', "
		 "'n[1-2]', 'n1', 'ok', None]",
		 (unsigned)geteuid());
	assert_reports("[r[0][k] for k in (\"schema\", \"sender\", \"job_id\", \"user\", \"uid\", "
		       "\"cluster\", \"nodes\", \"host\", \"state\", \"reason\")]",
		       want);
	assert_reports("r[0][\"plan\"][\"schema\"], r[0][\"plan\"][\"placement\"][\"nodes\"], "
		       "r[0][\"warnings\"] == r[0][\"plan\"][\"warnings\"]",
		       "('dtplan.plan/1', ['n1', 'n2'], True)");
	/* the plan as the job's plan file has it */
	snprintf(want, sizeof(want), "r[0][\"plan\"] == json.load(open(\"%.500s\"))", path);
	assert_reports(want, "True");
	text = test_server_read(&server, "auth.log");
	assert_string_equal(text, "Bearer tok-123\n");
	free(text);
	assert_false(mock_log_has("error:"));
}

/* A topology.conf answer that lacks a switch the site file sets: the
 * files' plan, and a warning naming the site file's line. */
static void user_init__fabric_without_site_switch__warned_files_used(void **state)
{
	struct service_args a;
	char site[512];
	FILE *f;

	(void)state;
	if (!have_server)
		skip();
	service_reset();
	test_server_put(&server, "topology.conf", "SwitchName=rackA Nodes=n[1-2]\n");
	snprintf(site, sizeof(site), "%s/site.conf", tmpdir);
	f = fopen(site, "w");
	assert_non_null(f);
	fputs("SwitchName=leafX Oversubscription=2\n", f);
	fclose(f);
	service_args(&a, "/files/topology.conf", NULL, NULL);
	snprintf(a.buf[a.ac], sizeof(a.buf[0]), "site=%s", site);
	a.av[a.ac] = a.buf[a.ac];
	a.ac++;
	canned_batch_job();
	assert_int_equal(start_plugin(S_CTX_REMOTE, a.ac, a.av), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0);
	assert_int_equal(give_option("dt-model", "7B", 1), 0);
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "ok");
	assert_log_has("[fabric-service] fabric service http://127.0.0.1:");
	assert_log_has("site.conf:1: SwitchName=leafX: no switch 'leafX' in the topology; "
		       "planning without a switch tree");
}

static void user_init__service_and_collector_down__warned_logged_within_bounds(void **state)
{
	static const char *const collectors[] = {"/collect/status/500", "/collect/slow?delay=5",
						 "refused"};
	char closed[128], path[512];

	(void)state;
	if (!have_server)
		skip();
	snprintf(closed, sizeof(closed), "http://127.0.0.1:%d/collect", server.closed_port);
	for (size_t i = 0; i < sizeof(collectors) / sizeof(collectors[0]); i++) {
		struct service_args a;
		double t0, dt;

		mock_spank_reset();
		service_reset();
		/* the plan files of the round before */
		snprintf(path, sizeof(path), "rm -f '%s'/dtplan-%d.*", tmpdir, JOB_ID);
		assert_int_equal(system(path), 0);
		service_args(&a, "/slow/fabric.json?delay=5", collectors[i], NULL);
		if (strcmp(collectors[i], "refused") == 0)
			snprintf(a.buf[1], sizeof(a.buf[0]), "report_url=%s", closed);
		canned_batch_job();
		assert_int_equal(start_plugin(S_CTX_REMOTE, a.ac, a.av), 0);
		assert_int_equal(give_option("dt-plan", "auto", 1), 0);
		assert_int_equal(give_option("dt-model", "7B", 1), 0);
		t0 = test_now();
		assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
		assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
		dt = test_now() - t0;
		/* FabricTimeout=1s and ReportTimeout=1s, planning itself is quick */
		if (dt > 2 + 1.5)
			fail_msg("%s: init_post_opt and user_init took %.2f s", collectors[i], dt);
		assert_env("DTPLAN_PLAN_STATE", "ok");
		assert_log_has("[fabric-service] fabric service http://127.0.0.1:");
		assert_log_has("no answer within 1.00 s");
		assert_log_has("no cache (FabricCache= is not set); "
			       "planning without a switch tree");
		assert_log_has("info: dtplan: report: cannot post the plan of job 1234: ");
		assert_false(mock_log_has("error:"));
		assert_int_equal(test_server_lines(&server, "reports.jsonl"), 0);
		slurm_spank_exit(MOCK_SP, 0, NULL);
	}
}

static void user_init__no_plan_bad_token__degraded_report_without_token(void **state)
{
	struct service_args a;
	char token[512], *text;
	FILE *f;

	(void)state;
	if (!have_server)
		skip();
	service_reset();
	snprintf(token, sizeof(token), "%s/token", tmpdir);
	f = fopen(token, "w");
	assert_non_null(f);
	fputs("tok-123\n", f);
	fclose(f);
	assert_int_equal(chmod(token, 0644), 0);
	service_args(&a, NULL, "/collect", token);
	canned_batch_job();
	assert_int_equal(start_plugin(S_CTX_REMOTE, a.ac, a.av), 0);
	assert_int_equal(give_option("dt-plan", "auto", 1), 0); /* no --dt-model */
	assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
	assert_log_has("error: dtplan: report: token not used: ");
	assert_log_has("mode 0644 lets others read or change it");
	assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
	assert_env("DTPLAN_PLAN_STATE", "degraded");
	assert_reports("len(r), r[0][\"state\"], r[0][\"plan\"], r[0][\"reason\"]",
		       "(1, 'degraded', None, '--dt-model: not given: nothing to plan for')");
	text = test_server_read(&server, "auth.log");
	assert_string_equal(text, "-\n");
	free(text);
}

static void user_init__srun_step_recomputes__cache_only_first_node_reports(void **state)
{
	struct service_args a;
	char *requests;

	(void)state;
	if (!have_server)
		skip();
	for (uint32_t node = 0; node < 2; node++) {
		mock_spank_reset();
		service_reset();
		test_server_put(&server, "fabric.json", service_fabric);
		service_args(&a, "/files/fabric.json", "/collect", NULL);
		srun_step_with_plan_file();
		mock_env_unset("DTPLAN_FILE");
		mock_env_unset("DTPLAN_PLAN_STATE");
		mock_env_set("SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_model", "7B");
		mock_items.node_id = node;
		setenv("HWLOC_XMLFILE", test_data_path("hgx-h100-8gpu.xml"), 1);
		assert_int_equal(start_plugin(S_CTX_REMOTE, a.ac, a.av), 0);
		assert_int_equal(slurm_spank_init_post_opt(MOCK_SP, 0, NULL), 0);
		assert_int_equal(slurm_spank_user_init(MOCK_SP, 0, NULL), 0);
		assert_non_null(mock_env_get("DT_TP"));
		/* srun steps never ask the service (no cache here: a warning) */
		requests = test_server_read(&server, "requests.log");
		assert_null(requests != NULL ? strstr(requests, "GET ") : NULL);
		free(requests);
		assert_int_equal(test_server_lines(&server, "reports.jsonl"), node == 0 ? 1 : 0);
		if (node == 0)
			assert_reports("r[0][\"warnings\"][-1][\"code\"], \"not asked from an srun "
				       "step; no cache (FabricCache= is not set); planning without "
				       "a switch tree\" in r[0][\"warnings\"][-1][\"message\"]",
				       "('fabric-service', True)");
		slurm_spank_exit(MOCK_SP, 0, NULL);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(init__allocator__registers_options_with_dtplan_usage),
		T(init__slurmd__registers_nothing),
		T(init__register_fails__minus_one_logged),
		T(init__bad_plugstack_argument__logged_and_plugin_idle),
		T(opt_plan__bare_and_names__accepted),
		T(init_post_opt__cli_filter_reason__passed_to_the_job),
		T(opt_plan__conflict_or_garbage__refused_with_message),
		T(opt_model__unknown__message_names_option_and_value),
		T(opt_model__repeat_and_conflict__same_ok_different_refused),
		T(opt_train__bad_values__refused_with_message),
		T(opt_train__contradicting_keys__refused_at_submission),
		T(opt__remote__values_kept_never_fail),
		T(opts_from_env__job_environment__fills_missing),
		T(preview__no_options__silent),
		T(opt_model_and_train__choices_the_model_cannot_take__refused),
		T(preview__gpus_unknown__model_memory_and_lower_bound),
		T(preview__framework_and_moments__model_state_as_the_plan),
		T(preview__every_train_combination__fewest_gpus_as_the_plan),
		T(preview__gpus_from_environment__likely_split),
		T(preview__model_too_large__warns_never_fails),
		T(preview__model_without_dt_plan__hint),
		T(preview__srun_inside_job__silent),
		T(user_init__batch_canned_allocation__plan_env_file_and_log),
		T(user_init__batch_canned_allocation__launch_variables_and_files),
		T(user_init__relative_block_topology__read_beside_slurm_conf),
		T(user_init__files_beside_taken__fresh_names_plan_ok),
		T(user_init__requeued_count_from_environment__own_file),
		T(user_init__16384_identical_nodes__one_shared_inventory),
		T(user_init__plan_file_taken__fresh_name_and_logged),
		T(user_init__plan_file_cannot_be_created__degraded_nothing_beside),
		T(user_init__nodelist_over_8192_characters__planned),
		T(user_init__requeued_job__own_file),
		T(user_init__user_set_master_and_nccl__kept),
		T(user_init__failures__degraded_and_job_starts),
		T(user_init__mode_off_or_default_without_gpus__nothing),
		T(user_init__setenv_refused__logged_and_continues),
		T(task_init__plan_file__ranks_in_plan_order),
		T(items_refused__logged_no_plan_and_job_runs),
		T(task_init__nccl_ib_hca_node__node_wide_list_in_every_task),
		T(task_init__user_set_rank_and_nccl__kept_and_told_once),
		T(task_init__one_task_per_node__node_rank),
		T(task_init__step_not_matching_plan__degraded_once),
		T(task_init__unreadable_plan_file__recomputed),
		T(user_init__plan_file_is_fifo__recomputed_without_blocking),
		T(user_init__plan_file_is_device__recomputed),
		T(user_init__plan_file_without_placement__degraded_no_recompute),
		T(hostile_environment__bounded_degraded_and_said),
		T(task_init__refused_plan__ends_every_task_of_an_srun_step),
		T(task_init__refused_plan__batch_interactive_and_srun_steps_end),
		T(prolog__no_node_list__logged_never_fails),
		T(prolog_batch_epilog__one_node__measured_planned_removed),
		T(prolog_batch__ports_taken__plan_degraded_names_them),
		T(prolog_batch__spool_a_link__plan_degraded_names_it),
		T(prolog_batch__spool_others_may_write__plan_degraded_names_it),
		T(prolog_batch__spool_missing_parent_missing__plan_degraded_names_it),
		T(batch__spool_missing_no_prolog__note_names_it),
		T(prolog__cache_dir__writes_node_xml),
		T(prolog__job_without_plan__no_cache),
		T(prolog__cache_failure_or_bad_args__logged_never_fails),
		T(user_init__fabric_service_and_collector__plan_uses_it_one_report),
		T(user_init__fabric_without_site_switch__warned_files_used),
		T(user_init__service_and_collector_down__warned_logged_within_bounds),
		T(user_init__no_plan_bad_token__degraded_report_without_token),
		T(user_init__srun_step_recomputes__cache_only_first_node_reports),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
