/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mock_spank.c: fake spank_* and slurm_* functions for the plugin's tests.
 * See mock_spank.h.
 */
#include "test_common.h"

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mock_spank.h"

#define MOCK_MAX_VARS 128
#define MOCK_MAX_OPTS 16
#define MOCK_LOG_MAX (256 * 1024)

struct mock_var {
	char *name;
	char *value;
};

struct mock_items mock_items;
static struct mock_var env[MOCK_MAX_VARS];
static struct mock_var getopts[MOCK_MAX_OPTS];
static struct spank_option *registered[MOCK_MAX_OPTS];
static char *setenv_fail;
static char log_buf[MOCK_LOG_MAX];
static size_t log_len;

static void vars_clear(struct mock_var *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
		v[i].name = v[i].value = NULL;
	}
}

static struct mock_var *vars_find(struct mock_var *v, size_t n, const char *name, bool add)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].name != NULL && strcmp(v[i].name, name) == 0)
			return &v[i];
	for (size_t i = 0; add && i < n; i++) {
		if (v[i].name == NULL) {
			v[i].name = strdup(name);
			assert_non_null(v[i].name);
			return &v[i];
		}
	}
	if (add)
		fail_msg("mock: too many variables");
	return NULL;
}

void mock_spank_reset(void)
{
	memset(&mock_items, 0, sizeof(mock_items));
	vars_clear(env, MOCK_MAX_VARS);
	vars_clear(getopts, MOCK_MAX_OPTS);
	memset(registered, 0, sizeof(registered));
	free(setenv_fail);
	setenv_fail = NULL;
	log_len = 0;
	log_buf[0] = '\0';
}

void mock_env_set(const char *name, const char *value)
{
	struct mock_var *v = vars_find(env, MOCK_MAX_VARS, name, true);

	free(v->value);
	v->value = strdup(value);
	assert_non_null(v->value);
}

void mock_env_unset(const char *name)
{
	struct mock_var *v = vars_find(env, MOCK_MAX_VARS, name, false);

	if (v == NULL)
		return;
	free(v->name);
	free(v->value);
	v->name = v->value = NULL;
}

const char *mock_env_get(const char *name)
{
	struct mock_var *v = vars_find(env, MOCK_MAX_VARS, name, false);

	return v ? v->value : NULL;
}

void mock_setenv_fail(const char *name)
{
	free(setenv_fail);
	setenv_fail = name ? strdup(name) : NULL;
}

void mock_getopt_set(const char *name, const char *value)
{
	struct mock_var *v = vars_find(getopts, MOCK_MAX_OPTS, name, true);

	free(v->value);
	v->value = strdup(value);
}

struct spank_option *mock_registered(const char *name)
{
	for (size_t i = 0; i < MOCK_MAX_OPTS; i++)
		if (registered[i] != NULL && strcmp(registered[i]->name, name) == 0)
			return registered[i];
	return NULL;
}

const char *mock_log(void)
{
	return log_buf;
}

bool mock_log_has(const char *text)
{
	return strstr(log_buf, text) != NULL;
}

static void log_append(const char *level, const char *fmt, va_list ap)
{
	int n;

	n = snprintf(log_buf + log_len, sizeof(log_buf) - log_len, "%s: ", level);
	if (n > 0 && (size_t)n < sizeof(log_buf) - log_len)
		log_len += (size_t)n;
	n = vsnprintf(log_buf + log_len, sizeof(log_buf) - log_len, fmt, ap);
	if (n > 0 && (size_t)n < sizeof(log_buf) - log_len)
		log_len += (size_t)n;
	if (log_len + 1 < sizeof(log_buf)) {
		log_buf[log_len++] = '\n';
		log_buf[log_len] = '\0';
	}
}

#define LOG_FN(fn, level)                                                                          \
	void fn(const char *fmt, ...)                                                              \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		log_append(level, fmt, ap);                                                        \
		va_end(ap);                                                                        \
	}

LOG_FN(slurm_error, "error")
LOG_FN(slurm_info, "info")
LOG_FN(slurm_verbose, "verbose")
LOG_FN(slurm_debug, "debug")
LOG_FN(slurm_debug2, "debug")
LOG_FN(slurm_debug3, "debug")
LOG_FN(slurm_spank_log, "log")

spank_context_t spank_context(void)
{
	return (spank_context_t)mock();
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	const char *name = opt ? opt->name : NULL;

	assert_ptr_equal(sp, MOCK_SP);
	check_expected_ptr(name);
	for (size_t i = 0; i < MOCK_MAX_OPTS; i++) {
		if (registered[i] == NULL) {
			registered[i] = opt;
			break;
		}
	}
	return (spank_err_t)mock();
}

spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt, char **optarg)
{
	struct mock_var *v = vars_find(getopts, MOCK_MAX_OPTS, opt->name, false);

	if (v == NULL)
		return ESPANK_ERROR;
	if (optarg != NULL)
		*optarg = v->value;
	return ESPANK_SUCCESS;
}

const char *spank_strerror(spank_err_t err)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "mock spank error %d", (int)err);
	return buf;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	spank_err_t rc = ESPANK_SUCCESS;
	va_list ap;

	va_start(ap, item);
	if (mock_items.fail_item != 0 && (int)item == mock_items.fail_item) {
		va_end(ap);
		return ESPANK_ERROR;
	}
	switch (item) {
	case S_JOB_UID:
		*va_arg(ap, uid_t *) = mock_items.uid;
		break;
	case S_JOB_ID:
		*va_arg(ap, uint32_t *) = mock_items.job_id;
		break;
	case S_JOB_STEPID:
		*va_arg(ap, uint32_t *) = mock_items.step_id;
		break;
	case S_JOB_NNODES:
		*va_arg(ap, uint32_t *) = mock_items.nnodes;
		break;
	case S_JOB_NODEID:
		*va_arg(ap, uint32_t *) = mock_items.node_id;
		break;
	case S_JOB_LOCAL_TASK_COUNT:
		*va_arg(ap, uint32_t *) = mock_items.local_task_count;
		break;
	case S_SLURM_RESTART_COUNT:
		*va_arg(ap, uint32_t *) = mock_items.restart_count;
		break;
	case S_TASK_ID:
		if (mock_items.in_task)
			*va_arg(ap, int *) = mock_items.task_id;
		else
			rc = ESPANK_NOT_TASK;
		break;
	default:
		rc = ESPANK_BAD_ARG;
		break;
	}
	va_end(ap);
	return rc;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	const char *v = mock_env_get(var);

	if (sp != MOCK_SP || len <= 0)
		return ESPANK_BAD_ARG;
	if (v == NULL)
		return ESPANK_ENV_NOEXIST;
	if (strlen(v) >= (size_t)len)
		return ESPANK_NOSPACE;
	memcpy(buf, v, strlen(v) + 1);
	return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	if (sp != MOCK_SP || var == NULL || val == NULL)
		return ESPANK_BAD_ARG;
	if (setenv_fail != NULL && strcmp(var, setenv_fail) == 0)
		return ESPANK_ERROR;
	if (!overwrite && mock_env_get(var) != NULL)
		return ESPANK_ENV_EXISTS;
	mock_env_set(var, val);
	return ESPANK_SUCCESS;
}

/* The job control environment: the job sees NAME as SLURM_SPANK_NAME
 * (sbatch's _set_spank_env(), src/sbatch/sbatch.c, Slurm 24.11). */
spank_err_t spank_job_control_setenv(spank_t sp, const char *name, const char *value, int overwrite)
{
	char var[256];

	if (sp != MOCK_SP || name == NULL || value == NULL)
		return ESPANK_BAD_ARG;
	snprintf(var, sizeof(var), "SLURM_SPANK_%s", name);
	if (!overwrite && mock_env_get(var) != NULL)
		return ESPANK_ENV_EXISTS;
	mock_env_set(var, value);
	return ESPANK_SUCCESS;
}

/*
 * Slurm's hostlist, faked with libdtplan's expansion.  Slurm 23.11 made
 * hostlist_t the struct itself where earlier releases typedef a pointer to
 * it; the calls take and return a pointer either way (plugin/remote.c does
 * the same).
 */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
typedef hostlist_t *hostlist_ref;
#else
typedef hostlist_t hostlist_ref;
#endif

struct hostlist {
	char (*names)[64];
	size_t n, next;
};

hostlist_ref slurm_hostlist_create(const char *hostlist)
{
	struct hostlist *hl = calloc(1, sizeof(*hl));

	if (hl == NULL)
		return NULL;
	if (dtplan_hostlist_expand(hostlist, 100000, &hl->names, &hl->n, NULL) != DTPLAN_OK) {
		free(hl);
		return NULL;
	}
	return hl;
}

int slurm_hostlist_count(hostlist_ref hl)
{
	return hl ? (int)(hl->n - hl->next) : -1;
}

char *slurm_hostlist_shift(hostlist_ref hl)
{
	if (hl == NULL || hl->next >= hl->n)
		return NULL;
	return strdup(hl->names[hl->next++]);
}

void slurm_hostlist_destroy(hostlist_ref hl)
{
	if (hl == NULL)
		return;
	free(hl->names);
	free(hl);
}
