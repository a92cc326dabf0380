/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * files.c: the plan's files in the job's directory, written as the job's
 * user: dtplan-<jobid>.json and beside it the hostfile, the DeepSpeed
 * fragment and the SVG picture.  No name is ever followed as a link or
 * replaced; a name someone else holds goes to a fresh one.
 */
#include "config.h"

#include "plugin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define bprintf dtspank__bprintf

/*
 * Creates a plan file for writing: path itself, or, when something already
 * has that name, a fresh unpredictable name beside it (path is updated).  In
 * a shared json_dir anyone can guess dtplan-<jobid>.json, .hosts, .svg or
 * .deepspeed.json and create it first (issue 13, finding 23; issue 26 for
 * the files beside the plan); O_EXCL rightly refuses to write into it, and
 * the file goes to dtplan-<jobid>.XXXXXX<suffix> instead, which the log
 * names (and the plan's launch object, for the files beside it).  suffix
 * ends path (".json", ".hosts", ...).  Never follows a link.  Returns the
 * descriptor or -1 with the reason.
 */
static int create_plan_file(char *path, size_t path_size, const char *suffix, char *reason,
			    size_t size)
{
	size_t len = strlen(path), slen = strlen(suffix);
	char taken[4096];
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0 || errno != EEXIST) {
		if (fd < 0)
			bprintf(reason, size, "cannot create %s: %s", path, strerror(errno));
		return fd;
	}
	bprintf(taken, sizeof(taken), "%s", path);
	if (len < slen || strcmp(path + len - slen, suffix) != 0 ||
	    len + sizeof(".XXXXXX") > path_size) {
		bprintf(reason, size, "cannot create %s: %s", path, strerror(EEXIST));
		return -1;
	}
	snprintf(path + len - slen, path_size - (len - slen), ".XXXXXX%s", suffix);
	fd = mkostemps(path, (int)slen, O_CLOEXEC);
	if (fd < 0) {
		bprintf(reason, size, "cannot create %s (%s exists): %s", path, taken,
			strerror(errno));
		bprintf(path, path_size, "%s", taken);
		return -1;
	}
	if (fchmod(fd, 0644) != 0) /* mkostemps makes 0600; the plan is for all */
		slurm_verbose(DTPLAN_LOG_PREFIX "cannot chmod %s: %s", path, strerror(errno));
	slurm_spank_log(DTPLAN_LOG_PREFIX "%s already exists and is not this job's to replace; "
					  "the %s is in %s",
			taken, strcmp(suffix, ".json") == 0 ? "plan" : "job's", path);
	return fd;
}

/* Writes all of text to fd and closes it; path names it in the reason.
 * Returns 0 or -1 with the reason. */
static int write_close(int fd, const char *text, const char *path, char *reason, size_t size)
{
	size_t len = strlen(text), done = 0;

	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			bprintf(reason, size, "cannot write %s: %s", path,
				w < 0 ? strerror(errno) : "short write");
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	if (close(fd) != 0) {
		bprintf(reason, size, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Writes text to path (ending in suffix) as the job's user; never follows a
 * link and never replaces a file: a name taken goes to a fresh one, as the
 * plan's own (path is updated).  Returns 0 or -1 with the reason. */
static int write_file(const char *text, char *path, size_t path_size, const char *suffix, uid_t uid,
		      char *reason, size_t size)
{
	int fd;

	if (geteuid() != uid) {
		bprintf(reason, size, "not writing %s: running as uid %u, the job's user is %u",
			path, (unsigned)geteuid(), (unsigned)uid);
		return -1;
	}
	fd = create_plan_file(path, path_size, suffix, reason, size);
	if (fd < 0)
		return -1;
	if (write_close(fd, text, path, reason, size) != 0) {
		unlink(path); /* no half-written file, and none to block a rerun */
		return -1;
	}
	return 0;
}

typedef enum dtplan_err (*make_text_fn)(const struct dtplan_plan *p, char **out,
					struct dtplan_error *err);

/*
 * Writes make(plan) beside the plan JSON: its path with ".json" replaced by
 * suffix, kept in buf.  Returns 0, or -1 with the reason in why.
 */
static int write_beside(const struct dtplan_plan *plan, const char *json, const char *suffix,
			make_text_fn make, uid_t uid, char *buf, size_t size, char *why,
			size_t why_size)
{
	struct dtplan_error err = {0};
	size_t stem = strlen(json);
	char *text = NULL, msg[1024];
	int rv = -1;

	if (stem > 5 && strcmp(json + stem - 5, ".json") == 0)
		stem -= 5;
	if (snprintf(buf, size, "%.*s%s", (int)stem, json, suffix) >= (int)size) {
		bprintf(why, why_size, "%.*s%s: path too long", (int)stem, json, suffix);
		goto out;
	}
	if (make(plan, &text, &err) != DTPLAN_OK) {
		bprintf(why, why_size, "%s: %s", buf, dtplan_error_format(&err, msg, sizeof(msg)));
		goto out;
	}
	rv = write_file(text, buf, size, suffix, uid, why, why_size);
out:
	free(text);
	if (rv != 0)
		buf[0] = '\0';
	return rv;
}

int dtspank__write_plan_files(struct dtplan_plan *plan, struct plan_files *pf, uid_t uid,
			      char *reason, size_t size)
{
	struct dtplan_launch_in *l = &pf->rdv.launch;
	const struct {
		const char *suffix;
		make_text_fn make;
		char *buf;
		const char **slot;
	} beside[] = {
		{".hosts", dtplan_launch_hostfile, pf->hosts, &l->hostfile},
		{".deepspeed.json", dtplan_launch_deepspeed_config, pf->deepspeed,
		 &l->deepspeed_config},
		{".svg", dtplan_plan_render_svg, pf->svg, &l->svg},
	};
	struct dtplan_error err = {0};
	char *json = NULL, why[1024] = "", msg[1024];
	int rv = -1, fd;

	if (geteuid() != uid) {
		bprintf(reason, size, "not writing %s: running as uid %u, the job's user is %u",
			pf->json, (unsigned)geteuid(), (unsigned)uid);
		return -1;
	}
	/* The JSON's name first: the files beside it take theirs from it. */
	fd = create_plan_file(pf->json, sizeof(pf->json), ".json", reason, size);
	if (fd < 0)
		return -1;
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		if (beside[i].make == dtplan_launch_hostfile && plan->n_ranks == 0)
			continue;
		if (write_beside(plan, pf->json, beside[i].suffix, beside[i].make, uid,
				 beside[i].buf, sizeof(pf->hosts), msg, sizeof(msg)) == 0)
			*beside[i].slot = beside[i].buf;
		else if (why[0] == '\0')
			bprintf(why, sizeof(why), "%s", msg);
	}
	if (why[0] != '\0')
		dtplan_plan_set_degraded(plan, "%s", why);
	if (dtplan_plan_to_json_launch(plan, l, true, &json, &err) != DTPLAN_OK) {
		bprintf(reason, size, "%s", dtplan_error_format(&err, msg, sizeof(msg)));
		close(fd);
	} else {
		rv = write_close(fd, json, pf->json, reason, size);
	}
	if (rv != 0)
		unlink(pf->json); /* no half-written plan, and none to block a rerun */
	/* Files that no written plan names would only block a rerun. */
	for (size_t i = 0; rv != 0 && i < sizeof(beside) / sizeof(beside[0]); i++) {
		if (*beside[i].slot != NULL)
			unlink(*beside[i].slot);
		*beside[i].slot = NULL;
	}
	free(json);
	return rv;
}
