/*
 * node.c: where a node's inventory comes from: a live hwloc discovery, an
 * XML file, or the node cache the prolog fills.  probes/node_scan.c turns
 * the loaded topology into struct dtplan_node.  The only hwloc user of the
 * tree besides node_scan.c.
 *
 * The I/O type filter is KEEP_ALL before loading (else XML imports keep no
 * PCI or OS devices, and NVSwitches vanish; ../shared/fixtures/hwloc/SOURCES.md).
 */
#include "config.h"

#include "dtplan_private.h"
#include "probes_private.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/*
 * Loads an XML file with every I/O object kept.  The file is read once by
 * dtplan_file_read() (regular files only, within the kind's limit) and hwloc
 * parses that buffer, so that what was checked is what is parsed.
 */
static enum dtplan_err load_xml(const char *path, enum dtplan_file_kind kind,
				hwloc_topology_t *out, struct dtplan_error *err)
{
	hwloc_topology_t t = NULL;
	enum dtplan_err rv;
	char *text = NULL;
	size_t len = 0;

	*out = NULL;
	rv = dtplan_file_read(path, kind, &text, &len, err);
	if (rv != DTPLAN_OK)
		goto out;
	rv = check_xml_shape(path, text, len, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (hwloc_topology_init(&t) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "cannot initialise hwloc: %s",
				   strerror(errno));
		goto out;
	}
	/* The size hwloc takes counts the terminating NUL, as its exports do. */
	if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) != 0 ||
	    hwloc_topology_set_xmlbuffer(t, text, (int)len + 1) != 0 ||
	    hwloc_topology_load(t) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				   "not a valid hwloc XML topology (malformed)");
		goto out;
	}
	*out = t;
	t = NULL;
	rv = DTPLAN_OK;
out:
	if (t != NULL)
		hwloc_topology_destroy(t);
	free(text);
	return rv;
}

static enum dtplan_err node_from_xml_source(const char *path, const char *source,
					    struct dtplan_node *out, struct dtplan_error *err)
{
	hwloc_topology_t t = NULL;
	enum dtplan_err rv, ret;

	/* A file the user or admin names may be a link; the cache and the live
	 * export's temporary file never are. */
	ret = load_xml(path,
		       strcmp(source, "xml") == 0 ? DTPLAN_FILE_NODE_XML : DTPLAN_FILE_CACHE_XML,
		       &t, err);
	if (ret != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	rv = dtplan__node_scan(t, out, source, err);
out:
	if (t != NULL)
		hwloc_topology_destroy(t);
	return rv;
}

enum dtplan_err dtplan_node_from_xml(const char *path, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	if (path == NULL || path[0] == '\0' || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "dtplan_node_from_xml: no XML path or no output");
	return node_from_xml_source(path, "xml", out, err);
}

/* ------------------------------------------------------------------------
 * Bounded live discovery
 * ---------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum dtplan_err dtplan__run_bounded(dtplan__child_fn fn, void *arg, double timeout_s,
				    const char *what, struct dtplan_error *err)
{
	double deadline = now_s() + timeout_s;
	long pause_ns = 1000000; /* 1 ms, doubling up to 50 ms */
	int status = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: cannot fork: %s", what,
				     strerror(errno));
	if (pid == 0)
		_exit(fn(arg) & 0xff);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		struct timespec ts;

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: waitpid: %s", what,
					     strerror(errno));
		if (now_s() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return dtplan__error(err, DTPLAN_ERR_TIMEOUT, NULL, 0,
					     "%s did not finish within %g s; stopped it", what,
					     timeout_s);
		}
		ts.tv_sec = 0;
		ts.tv_nsec = pause_ns;
		nanosleep(&ts, NULL);
		if (pause_ns < 50000000)
			pause_ns *= 2;
	}
	if (WIFSIGNALED(status))
		return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s: killed by signal %d", what,
				     WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		return dtplan__error(err, DTPLAN_ERR_IO, NULL, 0, "%s failed (exit status %d)",
				     what, WEXITSTATUS(status));
	return DTPLAN_OK;
}

struct export_arg {
	const char *path;
	const char *fsroot;
};

/* Child side: discover this machine (or what HWLOC_XMLFILE/HWLOC_FSROOT say)
 * and export it to arg->path.  Exit status tells the parent what failed. */
static int export_child(void *argp)
{
	const struct export_arg *arg = argp;
	hwloc_topology_t t;

	if (arg->fsroot != NULL && arg->fsroot[0] != '\0' &&
	    setenv("HWLOC_FSROOT", arg->fsroot, 1) != 0)
		return 2;
	if (hwloc_topology_init(&t) != 0)
		return 3;
	if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) != 0 ||
	    hwloc_topology_load(t) != 0)
		return 4;
	if (hwloc_topology_export_xml(t, arg->path, 0) != 0)
		return 5;
	return 0;
}

static double effective_timeout(double timeout_s)
{
	return timeout_s > 0 ? timeout_s : DTPLAN_DISCOVER_DEFAULT_TIMEOUT;
}

/* Exports the live topology to an existing file path, bounded in time. */
static enum dtplan_err export_live(const char *path, const char *fsroot, double timeout_s,
				   struct dtplan_error *err)
{
	struct export_arg arg = {path, fsroot};

	return dtplan__run_bounded(export_child, &arg, effective_timeout(timeout_s),
				   "hwloc discovery", err);
}

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

static enum dtplan_err discover_live(const struct dtplan_discover_opts *o, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	char path[4096];
	const char *tmp = getenv("TMPDIR");
	enum dtplan_err rv;
	bool made = false;
	int fd;

	snprintf(path, sizeof(path), "%s/dtplan-node.XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot create temporary file: %s",
				   strerror(errno));
		goto out;
	}
	close(fd);
	made = true;
	rv = export_live(path, o != NULL ? o->fsroot : NULL, o != NULL ? o->timeout_s : 0, err);
	if (rv != DTPLAN_OK)
		goto out;
	rv = node_from_xml_source(path, "live", out, err);
out:
	if (made)
		unlink(path);
	return rv;
}

enum dtplan_err dtplan_node_discover(const struct dtplan_discover_opts *o, struct dtplan_node *out,
				     struct dtplan_error *err)
{
	char host[64], path[4096];
	enum dtplan_err rv;
	bool local = true;

	if (out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "dtplan_node_discover: no output");
	default_hostname(o != NULL ? o->hostname : NULL, host, sizeof(host));
	if (o != NULL && o->xml_path != NULL && o->xml_path[0] != '\0') {
		rv = node_from_xml_source(o->xml_path, "xml", out, err);
		local = false;
	} else if (o != NULL && o->cache_dir != NULL && o->cache_dir[0] != '\0' &&
		   host[0] != '\0' &&
		   snprintf(path, sizeof(path), "%s/%s.xml", o->cache_dir, host) <
			   (int)sizeof(path) &&
		   access(path, R_OK) == 0) {
		rv = node_from_xml_source(path, "cache", out, err);
	} else {
		rv = discover_live(o, out, err);
	}
	if (rv != DTPLAN_OK)
		return rv;
	if (out->hostname[0] == '\0')
		dtplan__strlcpy(out->hostname, host, sizeof(out->hostname));
	if (local)
		dtplan__nvml_annotate(out);
	return DTPLAN_OK;
}

enum dtplan_err dtplan_node_cache_write(const char *cache_dir, const char *hostname,
					double timeout_s, struct dtplan_error *err)
{
	char host[64], tmp[4096], final[4096];
	enum dtplan_err rv;
	bool made = false;
	int fd;

	if (cache_dir == NULL || cache_dir[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0, "no cache directory given");
	default_hostname(hostname, host, sizeof(host));
	if (host[0] == '\0' || strchr(host, '/') != NULL || strcmp(host, "..") == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				     "invalid host name '%s' for a cache file", host);
	if (snprintf(final, sizeof(final), "%s/%s.xml", cache_dir, host) >= (int)sizeof(final) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.xml.XXXXXX", cache_dir, host) >= (int)sizeof(tmp))
		return dtplan__error(err, DTPLAN_ERR_INVAL, cache_dir, 0,
				     "cache directory path too long");
	/* The folder is the site's (root's): make its last level on first use,
	 * so that a fresh install needs no manual step.  Nodes race here. */
	if (mkdir(cache_dir, 0755) != 0 && errno != EEXIST)
		return dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
				     "cannot create the cache directory: %s", strerror(errno));
	fd = mkstemp(tmp);
	if (fd < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, cache_dir, 0,
				   "cannot create a file in the cache directory: %s",
				   strerror(errno));
		goto out;
	}
	fchmod(fd, 0644);
	close(fd);
	made = true;
	rv = export_live(tmp, NULL, timeout_s, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (rename(tmp, final) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, final, 0, "cannot rename %s: %s", tmp,
				   strerror(errno));
		goto out;
	}
	made = false;
	rv = DTPLAN_OK;
out:
	if (made)
		unlink(tmp);
	return rv;
}
