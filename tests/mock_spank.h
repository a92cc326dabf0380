/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mock_spank.h: the fake Slurm that tests/test_plugin.c runs the plugin in.
 *
 * tests/mock_spank.c defines the spank_* and slurm_* functions that srun,
 * sbatch and slurmstepd normally provide.  Job items and the job environment
 * are plain tables the test fills; spank_context() and
 * spank_option_register() go through cmocka (will_return/check_expected);
 * everything logged is captured for assertions.
 */
#ifndef DTPLAN_MOCK_SPANK_H
#define DTPLAN_MOCK_SPANK_H

#include <slurm/spank.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Job items spank_get_item() answers; a field is answered when set. */
struct mock_items {
	uint32_t job_id, step_id, nnodes, node_id, local_task_count, restart_count;
	uid_t uid;
	int task_id;
	bool in_task;  /* S_TASK_ID answers only inside a task */
	int fail_item; /* an item spank_get_item() refuses with ESPANK_ERROR (0: none) */
};

extern struct mock_items mock_items;

/* Resets items, the job environment, options, the log and injected faults. */
void mock_spank_reset(void);

/* The job environment behind spank_getenv()/spank_setenv(). */
void mock_env_set(const char *name, const char *value);
void mock_env_unset(const char *name);      /* a task's fresh copy of the job's */
const char *mock_env_get(const char *name); /* NULL when unset */

/* spank_setenv() of this name fails with ESPANK_ERROR (NULL: none). */
void mock_setenv_fail(const char *name);

/* What spank_option_getopt() reports for an option (NULL value: not used). */
void mock_getopt_set(const char *name, const char *value);

/* The option registered under name, NULL when none was. */
struct spank_option *mock_registered(const char *name);

/* Everything logged, one "level: message" line each (error, info, verbose,
 * debug, log for slurm_spank_log). */
const char *mock_log(void);
bool mock_log_has(const char *text);

/* A spank handle for the plugin's callbacks (never dereferenced). */
#define MOCK_SP ((spank_t)(uintptr_t)0x5ba4c)

#endif /* DTPLAN_MOCK_SPANK_H */
