/*
 * measure.c: the prolog's measurement in the job's steps (slurmstepd).
 *
 * init_post_opt runs as root: it reads spool_dir/JOBID.json, which only root
 * may read, into memory.  user_init (as the user) then takes it from here
 * to plan (plugin/remote.c).  Only the first node of the job holds the file:
 * elsewhere there is nothing to read, and that is not an error.
 */
#include "config.h"

#include "plugin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct plugin_ctx {
	bool loaded;   /* read (or found missing) */
	char *text;    /* owned: the file, NULL when none */
	char why[512]; /* why there is none, "" when found */
} ctx;

/* Says why into ctx.why (cut to fit: a long path is acceptable to lose). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx.why, sizeof(ctx.why), fmt, ap);
	va_end(ap);
}

int dtspank__measure_load(spank_t sp, const struct dtplan_config *c)
{
	struct dtplan_error err = {0};
	char path[4096], buf[1024];
	uint32_t job_id = 0;
	struct stat st;

	free(ctx.text);
	memset(&ctx, 0, sizeof(ctx));
	ctx.loaded = true;
	if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
	    dtspank__spool_path(c, job_id, path, sizeof(path)) != 0) {
		say("no spool_dir");
		return 0;
	}
	if (lstat(path, &st) != 0) {
		say("no measurement from the prolog in %s", c->spool_dir);
		return 0;
	}
	if (st.st_uid != 0) {
		say("%s is not root's: not used", path);
		slurm_error(DTPLAN_LOG_PREFIX "%s", ctx.why);
		return 0;
	}
	if (dtplan_file_read(path, DTPLAN_FILE_MEASUREMENTS, &ctx.text, NULL, &err) != DTPLAN_OK) {
		say("%s", dtplan_error_format(&err, buf, sizeof(buf)));
		slurm_error(DTPLAN_LOG_PREFIX "measurement: %s", ctx.why);
	}
	return 0;
}

const char *dtspank__measure_text(const char **why)
{
	if (why != NULL)
		*why = ctx.loaded ? ctx.why : "the measurement was not read (not the batch step)";
	return ctx.text;
}

void dtspank__measure_reset(void)
{
	free(ctx.text);
	memset(&ctx, 0, sizeof(ctx));
}
