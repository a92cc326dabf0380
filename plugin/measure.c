/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#include <sys/statvfs.h>

static struct plugin_ctx {
	bool loaded;   /* read (or found missing) */
	bool fault;    /* why names a spool no prolog can write in */
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

/* Less free room than this in the spool is a full one: a measurement
 * file of a few hundred nodes does not fit. */
#define SPOOL_MIN_FREE (64 * 1024)

/*
 * A spool_dir that does not exist: the prolog makes it (plugin/prolog.c,
 * spool_ready(): mkdir of the folder alone), unless its parent is missing,
 * no folder or read-only.  True with ctx.why said then; false with ctx.why
 * naming the folder when the prolog could have made it (so none ran).
 */
static bool spool_missing(const char *dir)
{
	char parent[4096], *slash;
	struct statvfs fs;
	struct stat st;

	snprintf(parent, sizeof(parent), "%s", dir);
	while ((slash = strrchr(parent, '/')) != NULL && slash[1] == '\0' && slash > parent)
		*slash = '\0'; /* "spool/" is "spool" */
	slash = strrchr(parent, '/');
	if (slash == NULL)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	if (stat(parent, &st) != 0) {
		say("spool_dir %s does not exist, and the prolog cannot make it: %s: %s", dir,
		    parent, strerror(errno));
		return true;
	}
	if (!S_ISDIR(st.st_mode)) {
		say("spool_dir %s does not exist, and the prolog cannot make it: %s is not a "
		    "folder",
		    dir, parent);
		return true;
	}
	if (statvfs(parent, &fs) == 0 && (fs.f_flag & ST_RDONLY)) {
		say("spool_dir %s does not exist, and the prolog cannot make it: %s is on a "
		    "read-only file system",
		    dir, parent);
		return true;
	}
	say("spool_dir %s does not exist, and no prolog made it", dir);
	return false;
}

/*
 * Why the prolog could have written no file in dir, as the prolog checks it
 * (plugin/prolog.c, spool_ready()) and as the disk allows: a link, not a
 * folder of root's only root may write, read-only, full, missing where the
 * prolog cannot make it.  True with ctx.why said; false when the spool looks
 * usable (ctx.why untouched) or is missing where a prolog would have made it
 * (ctx.why names it: none ran).
 */
static bool spool_fault(const char *dir)
{
	struct statvfs fs;
	struct stat st;

	if (lstat(dir, &st) != 0) {
		if (errno == ENOENT)
			return spool_missing(dir);
		say("spool_dir %s: %s", dir, strerror(errno));
		return true;
	}
	if (S_ISLNK(st.st_mode)) {
		say("spool_dir %s is a symbolic link, which the prolog does not write through",
		    dir);
		return true;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		say("spool_dir %s is not a folder of root's that only root may write: the prolog "
		    "does not use it",
		    dir);
		return true;
	}
	if (statvfs(dir, &fs) != 0)
		return false;
	if (fs.f_flag & ST_RDONLY) {
		say("spool_dir %s is on a read-only file system", dir);
		return true;
	}
	if ((double)fs.f_bavail * (double)fs.f_frsize < SPOOL_MIN_FREE ||
	    (fs.f_files > 0 && fs.f_favail == 0)) {
		say("spool_dir %s is full (%.0f KiB and %llu inodes free)", dir,
		    (double)fs.f_bavail * (double)fs.f_frsize / 1024.0,
		    (unsigned long long)fs.f_favail);
		return true;
	}
	return false;
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
		ctx.fault = errno == ENOENT && spool_fault(c->spool_dir);
		if (!ctx.fault && ctx.why[0] == '\0')
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

bool dtspank__measure_fault(void)
{
	return ctx.fault;
}

void dtspank__measure_reset(void)
{
	free(ctx.text);
	memset(&ctx, 0, sizeof(ctx));
}
