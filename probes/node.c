/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node.c: where a node's inventory comes from: a live hwloc discovery, an
 * XML file, or the node cache the prolog fills.  probes/node_scan.c turns a
 * loaded topology into struct dtplan_node.
 *
 * hwloc never loads a topology in the caller's process: slurmstepd and the
 * prolog run this code, and hwloc 2.9 crashes or aborts on some malformed
 * XML (issue 13, finding 18).  Every load happens in a forked child bounded
 * in time and memory, which scans the topology and hands back dtplan's own
 * node JSON on a pipe (or, for the cache, writes the XML to a file the
 * parent opened).  A child that crashes, hangs or says too much costs the
 * caller an error, never its process.  Files are read and checked by the
 * parent (dtplan_file_read()); the child parses the buffer it inherits.
 *
 * The I/O type filter is KEEP_ALL before loading (else XML imports keep no
 * PCI or OS devices, and NVSwitches vanish; ../shared/fixtures/hwloc/SOURCES.md).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * The hwloc child
 * ---------------------------------------------------------------------- */

/* Address space a child may map beyond what it inherits. */
#define CHILD_EXTRA_BYTES ((rlim_t)4 << 30)

/* Most bytes of node JSON (or an error) a child hands back. */
#define CHILD_OUTPUT_MAX ((size_t)1 << 20)

/* What one child loads and what it does with the topology. */
struct child_job {
	const char *path; /* the XML file, for messages; NULL for a live discovery */
	const char *text; /* its text, checked by the parent; NULL: live */
	size_t len;
	const char *fsroot; /* live: HWLOC_FSROOT */
	const char *source; /* "live", "xml", "cache" */
	int export_fd;      /* >= 0: write the topology's XML there instead of scanning */
};

/*
 * Caps the child's address space at what it inherits plus CHILD_EXTRA_BYTES,
 * so that an XML that makes hwloc allocate without bound fails in the child
 * instead of exhausting the node.  Relative to the inherited size, the cap
 * also holds under AddressSanitizer, whose shadow is reserved at start.
 */
static void limit_child_memory(void)
{
	unsigned long pages = 0;
	struct rlimit rl;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f == NULL)
		return;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	if (pages == 0 || getrlimit(RLIMIT_AS, &rl) != 0)
		return;
	rl.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + CHILD_EXTRA_BYTES;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_AS, &rl);
}

/* Cheap shape check before hwloc sees the text: hwloc 2.9 leaks objects on
 * some parse failures, and "truncated" is a clearer message for the common
 * case of a half-written file. */
static enum dtplan_err check_xml_shape(const char *path, const char *text, size_t len,
				       struct dtplan_error *err)
{
	size_t i = 0, n = len;

	if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && strchr(" \t\r\n", text[i]) != NULL)
		i++;
	if (i >= n || text[i] != '<')
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 1,
				     "not an hwloc XML topology (does not start with '<')");
	while (n > i && strchr(" \t\r\n", text[n - 1]) != NULL)
		n--;
	if (n - i < 11 || memcmp(text + n - 11, "</topology>", 11) != 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				     "not a complete hwloc XML topology (truncated: no closing "
				     "</topology>)");
	return DTPLAN_OK;
}

/* Writes all of buf; false (errno) on error. */
static bool write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		buf += w;
		len -= (size_t)w;
	}
	return true;
}

/*
 * Child side: loads the topology (every I/O object kept) from the parent's
 * buffer or live, then scans it into node JSON on fd or exports its XML to
 * job->export_fd.  A failure is written as "!CODE LINE SOURCE\nTEXT" (see
 * read_answer()).  Frees everything it made before returning, so that
 * valgrind finds no leak in the child either.
 */
static int node_child(void *argp, int fd)
{
	const struct child_job *job = argp;
	struct dtplan_error err = {0};
	struct dtplan_node *node = NULL;
	hwloc_topology_t t = NULL;
	const char *text = job->text, *what = job->path, *env;
	char *env_text = NULL, *json = NULL, *xml = NULL, head[320];
	size_t len = job->len;
	enum dtplan_err rv;
	int xml_len = 0, status = 0;

	limit_child_memory();
	if (text == NULL && job->fsroot != NULL && job->fsroot[0] != '\0' &&
	    setenv("HWLOC_FSROOT", job->fsroot, 1) != 0) {
		rv = dtplan__error(&err, DTPLAN_ERR_NOMEM, NULL, 0, "cannot set HWLOC_FSROOT");
		goto out;
	}
	/* HWLOC_XMLFILE (the test clusters' way of faking GPUs) goes through
	 * the same bounded reader as any XML: hwloc would read a FIFO or
	 * /dev/zero without end. */
	env = getenv("HWLOC_XMLFILE");
	if (text == NULL && env != NULL && env[0] != '\0') {
		rv = dtplan_file_read(env, DTPLAN_FILE_NODE_XML, &env_text, &len, &err);
		if (rv == DTPLAN_OK)
			rv = check_xml_shape(env, env_text, len, &err);
		if (rv != DTPLAN_OK)
			goto out;
		text = env_text;
		what = env;
		unsetenv("HWLOC_XMLFILE");
	}
	if (hwloc_topology_init(&t) != 0) {
		t = NULL;
		rv = dtplan__error(&err, DTPLAN_ERR_NOMEM, what, 0, "cannot initialise hwloc: %s",
				   strerror(errno));
		goto out;
	}
	/* The size hwloc takes counts the terminating NUL, as its exports do. */
	if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) != 0 ||
	    (text != NULL && hwloc_topology_set_xmlbuffer(t, text, (int)len + 1) != 0) ||
	    hwloc_topology_load(t) != 0) {
		if (text != NULL)
			rv = dtplan__error(&err, DTPLAN_ERR_PARSE, what, 0,
					   "not a valid hwloc XML topology (malformed)");
		else
			rv = dtplan__error(&err, DTPLAN_ERR_IO, NULL, 0,
					   "hwloc cannot discover this node: %s", strerror(errno));
		goto out;
	}
	if (job->export_fd >= 0) {
		if (hwloc_topology_export_xmlbuffer(t, &xml, &xml_len, 0) != 0 || xml_len < 1) {
			xml = NULL;
			rv = dtplan__error(&err, DTPLAN_ERR_NOMEM, NULL, 0,
					   "hwloc cannot export the topology: %s", strerror(errno));
			goto out;
		}
		if (!write_all(job->export_fd, xml, (size_t)xml_len - 1)) {
			rv = dtplan__error(&err, DTPLAN_ERR_IO, NULL, 0, "cannot write the XML: %s",
					   strerror(errno));
			goto out;
		}
		rv = DTPLAN_OK;
		goto out;
	}
	node = malloc(sizeof(*node));
	if (node == NULL) {
		rv = dtplan__error(&err, DTPLAN_ERR_NOMEM, NULL, 0, "out of memory");
		goto out;
	}
	rv = dtprobe__node_scan(t, node, job->source, &err);
	if (rv == DTPLAN_OK)
		rv = dtplan_node_to_json(node, false, &json, &err);
	if (rv == DTPLAN_OK && !write_all(fd, json, strlen(json)))
		status = 1;
out:
	if (rv != DTPLAN_OK) {
		snprintf(head, sizeof(head), "!%d %d %s\n", (int)rv, err.line, err.source);
		if (!write_all(fd, head, strlen(head)) ||
		    !write_all(fd, err.text, strlen(err.text)))
			status = 1;
	}
	if (xml != NULL)
		hwloc_free_xmlbuffer(t, xml);
	if (t != NULL)
		hwloc_topology_destroy(t);
	free(json);
	free(node);
	free(env_text);
	return status;
}

/* Parent side: the child's answer, node JSON or "!CODE LINE SOURCE\nTEXT". */
static enum dtplan_err read_answer(const char *answer, struct dtplan_node *out,
				   struct dtplan_error *err)
{
	char source[256] = "";
	const char *text;
	int code = 0, line = 0, used = 0;

	if (answer[0] != '!')
		return dtplan_node_from_json(answer, out, err);
	text = strchr(answer, '\n');
	if (text == NULL || sscanf(answer, "!%d %d %n", &code, &line, &used) < 2 || used <= 0)
		return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "hwloc child: unreadable answer");
	if ((size_t)(text - answer - used) < sizeof(source))
		memcpy(source, answer + used, (size_t)(text - answer - used));
	if (code <= DTPLAN_OK || code >= DTPLAN_ERR__LAST)
		code = DTPLAN_ERR_IO;
	return dtplan__error(err, (enum dtplan_err)code, source, line, "%s", text + 1);
}

static double effective_timeout(double timeout_s)
{
	return timeout_s > 0 ? timeout_s : DTPLAN_DISCOVER_DEFAULT_TIMEOUT;
}

/* Runs one child and reads its answer into *out; the source of an error that
 * names none is the XML file. */
static enum dtplan_err scan_in_child(const struct child_job *job, double timeout_s,
				     struct dtplan_node *out, struct dtplan_error *err)
{
	char what[320], *answer = NULL;
	enum dtplan_err rv;

	if (job->path != NULL)
		snprintf(what, sizeof(what), "hwloc reading %s", job->path);
	else
		snprintf(what, sizeof(what), "hwloc discovery");
	rv = dtprobe__run_bounded_out(node_child, (void *)job, effective_timeout(timeout_s), what,
				      CHILD_OUTPUT_MAX, &answer, NULL, err);
	if (rv == DTPLAN_OK && job->export_fd < 0 && (answer == NULL || answer[0] == '\0'))
		rv = dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: no answer", what);
	else if (rv == DTPLAN_OK && answer != NULL && answer[0] != '\0')
		rv = read_answer(answer, out, err);
	if (rv != DTPLAN_OK && err != NULL && err->source[0] == '\0' && job->path != NULL)
		dtplan__strlcpy(err->source, job->path, sizeof(err->source));
	free(answer);
	return rv;
}

enum dtplan_err dtprobe__node_from_xml_text(const char *text, size_t len, const char *name,
					    const char *source, double timeout_s,
					    struct dtplan_node *out, struct dtplan_error *err)
{
	struct child_job job = {
		.path = name, .text = text, .len = len, .source = source, .export_fd = -1};
	enum dtplan_err rv;

	rv = check_xml_shape(name, text, len, err);
	if (rv != DTPLAN_OK)
		return rv;
	return scan_in_child(&job, timeout_s, out, err);
}

/* Reads an XML file in the parent (regular files only, within the kind's
 * limit) and scans it in a child, so that what was checked is what is parsed. */
static enum dtplan_err node_from_xml_file(const char *path, enum dtplan_file_kind kind,
					  const char *source, double timeout_s,
					  struct dtplan_node *out, struct dtplan_error *err)
{
	enum dtplan_err rv;
	char *text = NULL;
	size_t len = 0;

	rv = dtplan_file_read(path, kind, &text, &len, err);
	if (rv == DTPLAN_OK)
		rv = dtprobe__node_from_xml_text(text, len, path, source, timeout_s, out, err);
	free(text);
	return rv;
}

enum dtplan_err dtplan_node_from_xml(const char *path, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	if (path == NULL || path[0] == '\0' || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "dtplan_node_from_xml: no XML path or no output");
	/* A file the user or admin names may be a link; a cache entry never is. */
	return node_from_xml_file(path, DTPLAN_FILE_NODE_XML, "xml", 0, out, err);
}

/* ------------------------------------------------------------------------
 * Discovery: a named XML file, the cache, or live
 * ---------------------------------------------------------------------- */

static void default_hostname(const char *given, char *buf, size_t size)
{
	if (given != NULL && given[0] != '\0') {
		dtplan__strlcpy(buf, given, size);
		return;
	}
	if (gethostname(buf, size) != 0)
		buf[0] = '\0';
	buf[size - 1] = '\0';
}

/* A host name usable as a file name in the cache. */
static bool cache_name_ok(const char *host)
{
	return host[0] != '\0' && strchr(host, '/') == NULL && strcmp(host, ".") != 0 &&
	       strcmp(host, "..") != 0;
}

enum dtplan_err dtplan_node_from_cache(const char *cache_dir, const char *hostname,
				       double timeout_s, struct dtplan_node *out,
				       struct dtplan_error *err)
{
	char path[4096];

	if (cache_dir == NULL || cache_dir[0] == '\0' || hostname == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "dtplan_node_from_cache: no cache directory, host or output");
	if (!cache_name_ok(hostname))
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "invalid host name '%s' for a cache file", hostname);
	if (snprintf(path, sizeof(path), "%s/%s.xml", cache_dir, hostname) >= (int)sizeof(path))
		return dtplan__error(err, DTPLAN_ERR_INVAL, cache_dir, 0,
				     "cache directory path too long");
	/* The effective user's right to read, not the real user's: user_init
	 * runs as the job's user after seteuid(), its real uid still 0 (issue
	 * 13, finding 22).  Absent or unreadable: the caller looks elsewhere. */
	if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) != 0)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, path, 0, "cannot read: %s",
				     strerror(errno));
	return node_from_xml_file(path, DTPLAN_FILE_CACHE_XML, "cache", timeout_s, out, err);
}

enum dtplan_err dtplan_node_discover(const struct dtplan_discover_opts *o, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	struct child_job live = {.source = "live", .export_fd = -1};
	char host[64];
	enum dtplan_err rv = DTPLAN_ERR_NOT_FOUND;
	bool local = true;

	if (out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "dtplan_node_discover: no output");
	default_hostname(o != NULL ? o->hostname : NULL, host, sizeof(host));
	if (o != NULL && o->xml_path != NULL && o->xml_path[0] != '\0') {
		rv = node_from_xml_file(o->xml_path, DTPLAN_FILE_NODE_XML, "xml", o->timeout_s, out,
					err);
		local = false;
	} else {
		if (o != NULL && o->cache_dir != NULL && o->cache_dir[0] != '\0' &&
		    cache_name_ok(host))
			rv = dtplan_node_from_cache(o->cache_dir, host, o->timeout_s, out, err);
		if (rv == DTPLAN_ERR_NOT_FOUND) {
			live.fsroot = o != NULL ? o->fsroot : NULL;
			rv = scan_in_child(&live, o != NULL ? o->timeout_s : 0, out, err);
		}
	}
	if (rv != DTPLAN_OK)
		return rv;
	if (out->hostname[0] == '\0')
		dtplan__strlcpy(out->hostname, host, sizeof(out->hostname));
	if (local)
		dtprobe__nvml_annotate(out);
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * The node cache, written by the prolog as root
 * ---------------------------------------------------------------------- */

/*
 * Opens the cache directory (made on first use) and checks what was opened:
 * a directory owned by the effective user (root in the prolog) that neither
 * group nor others may write.  Anyone else who can write there could swap a
 * file for a link between two of root's steps (issue 13, finding 14).
 * Returns the directory's fd or -1 with err filled.
 */
static int open_cache_dir(const char *cache_dir, struct dtplan_error *err)
{
	struct stat st;
	int dfd;

	/* The folder is the site's: make its last level on first use, so that a
	 * fresh install needs no manual step.  Nodes race here. */
	if (mkdir(cache_dir, 0755) != 0 && errno != EEXIST) {
		dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
			      "cannot create the cache directory: %s", strerror(errno));
		return -1;
	}
	dfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
			      "cannot open the cache directory: %s", strerror(errno));
		return -1;
	}
	if (fstat(dfd, &st) != 0) {
		dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
			      "cannot stat the cache directory: %s", strerror(errno));
	} else if (st.st_uid != geteuid()) {
		dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
			      "not writing the node cache: the directory is owned by uid %u, not "
			      "by uid %u (root in the prolog)",
			      (unsigned)st.st_uid, (unsigned)geteuid());
	} else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
			      "not writing the node cache: the directory is writable by %s "
			      "(mode %04o); make it 0755",
			      (st.st_mode & S_IWOTH) ? "others" : "its group",
			      (unsigned)(st.st_mode & 07777));
	} else {
		return dfd;
	}
	close(dfd);
	return -1;
}

/* Creates a fresh temporary file in dfd: ".<host>.xml.<random>". */
static int create_temp(int dfd, const char *host, char *name, size_t size)
{
	struct timespec ts;

	for (int tries = 0; tries < 64; tries++) {
		int fd;

		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(name, size, ".%s.xml.%ld.%lx", host, (long)getpid(),
			 (unsigned long)ts.tv_nsec ^ ((unsigned long)tries << 20));
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

enum dtplan_err dtplan_node_cache_write(const char *cache_dir, const char *hostname,
					double timeout_s, struct dtplan_error *err)
{
	struct child_job job = {.source = "live", .export_fd = -1};
	struct dtplan_node unused;
	char host[64], tmp[128] = "", final[128];
	enum dtplan_err rv;
	int dfd = -1;

	if (cache_dir == NULL || cache_dir[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0, "no cache directory given");
	default_hostname(hostname, host, sizeof(host));
	if (!cache_name_ok(host))
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "invalid host name '%s' for a cache file", host);
	snprintf(final, sizeof(final), "%s.xml", host);
	dfd = open_cache_dir(cache_dir, err);
	if (dfd < 0)
		return DTPLAN_ERR_IO;
	/* Everything below is relative to the directory checked: a name is
	 * never looked up again through a path someone else may change. */
	job.export_fd = create_temp(dfd, host, tmp, sizeof(tmp));
	if (job.export_fd < 0) {
		tmp[0] = '\0';
		rv = dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
				   "cannot create a file in the cache directory: %s",
				   strerror(errno));
		goto out;
	}
	if (fchmod(job.export_fd, 0644) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0, "cannot chmod %s: %s", tmp,
				   strerror(errno));
		goto out;
	}
	rv = scan_in_child(&job, timeout_s, &unused, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (close(job.export_fd) != 0) {
		job.export_fd = -1;
		rv = dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0, "cannot write %s: %s", tmp,
				   strerror(errno));
		goto out;
	}
	job.export_fd = -1;
	if (renameat(dfd, tmp, dfd, final) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0, "cannot rename %s to %s: %s",
				   tmp, final, strerror(errno));
		goto out;
	}
	tmp[0] = '\0';
	rv = DTPLAN_OK;
out:
	if (job.export_fd >= 0)
		close(job.export_fd);
	if (tmp[0] != '\0')
		unlinkat(dfd, tmp, 0); /* no half-written file left behind */
	close(dfd);
	return rv;
}
