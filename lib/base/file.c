/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * file.c: the one reader of whole files.  Every file dtplan reads as text
 * (site file, topology.conf, config.json, node JSON, hwloc XML, the plan read
 * back) comes through dtplan_file_read(), so that a FIFO, a device, a
 * directory or a huge file gets a clear error instead of a hang, a memory
 * blowup or a parser's puzzled message.
 *
 * The path is stat()ed before it is opened: opening a device can have effects
 * of its own (a tape rewinds, a watchdog starts), and opening a FIFO without
 * O_NONBLOCK waits for a writer.  It is then opened with O_NONBLOCK (and
 * O_NOFOLLOW where a link is never expected), fstat()ed again to catch a swap
 * between the two looks, and read up to the limit of its kind; a file that
 * grows while it is read is cut off at limit + 1 bytes, never read further.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

/* First buffer when the size is unknown (files under /proc report 0). */
#define FIRST_CHUNK ((size_t)64 << 10)

static const struct file_kind {
	const char *name; /* "a site file": completes "larger than the N MiB limit for ..." */
	size_t limit;     /* bytes */
	bool nofollow;    /* a symbolic link is refused */
} kinds[] = {
	[DTPLAN_FILE_SITE] = {"a site file", 4 * MIB, false},
	[DTPLAN_FILE_TOPOLOGY] = {"a topology file", 16 * MIB, false},
	[DTPLAN_FILE_HF_CONFIG] = {"a model config.json", 4 * MIB, false},
	[DTPLAN_FILE_NODE_JSON] = {"a node JSON file", 1 * MIB, false},
	[DTPLAN_FILE_NODE_XML] = {"an hwloc XML file", 32 * MIB, false},
	[DTPLAN_FILE_CACHE_XML] = {"a cached hwloc XML file", 32 * MIB, true},
	[DTPLAN_FILE_PLAN] = {"a plan file", 64 * MIB, true},
	[DTPLAN_FILE_MEASUREMENTS] = {"a measurement file", 64 * MIB, true},
	[DTPLAN_FILE_FABRIC_CACHE] = {"a cached fabric", 64 * MIB, true},
};

size_t dtplan_file_limit(enum dtplan_file_kind kind)
{
	if ((unsigned)kind >= DTPLAN_ARRAY_SIZE(kinds))
		return 0;
	return kinds[kind].limit;
}

/* What a file that is not a regular file is, for the message. */
static const char *type_name(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO (named pipe)";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a plain file";
}

static enum dtplan_err not_regular(const char *path, mode_t mode, const struct file_kind *k,
				   struct dtplan_error *err)
{
	if (S_ISLNK(mode))
		return dtplan__error(err, DTPLAN_ERR_IO, path, 0,
				     "is a symbolic link, which is not followed for %s", k->name);
	return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "is %s, not a regular file",
			     type_name(mode));
}

static enum dtplan_err too_large(const char *path, const struct file_kind *k,
				 struct dtplan_error *err)
{
	return dtplan__error(err, DTPLAN_ERR_IO, path, 0, "larger than the %zu MiB limit for %s",
			     k->limit / MIB, k->name);
}

/* read() that retries on EINTR.  Returns bytes read, 0 at the end, -1 on error. */
static ssize_t read_some(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n;
}

enum dtplan_err dtplan_file_read(const char *path, enum dtplan_file_kind kind, char **out,
				 size_t *len, struct dtplan_error *err)
{
	const struct file_kind *k;
	struct stat st, fst;
	char *buf = NULL, *tmp, extra;
	size_t used = 0, cap;
	enum dtplan_err rv;
	int fd = -1, flags;
	ssize_t n;

	if (out != NULL)
		*out = NULL;
	if (len != NULL)
		*len = 0;
	if (path == NULL || path[0] == '\0' || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no file name given");
	if ((unsigned)kind >= DTPLAN_ARRAY_SIZE(kinds))
		return dtplan__error(err, DTPLAN_ERR_INVAL, path, 0, "unknown kind of file %d",
				     (int)kind);
	k = &kinds[kind];
	if ((k->nofollow ? lstat(path, &st) : stat(path, &st)) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rv = not_regular(path, st.st_mode, k, err);
		goto out;
	}
	flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (k->nofollow ? O_NOFOLLOW : 0);
	fd = open(path, flags);
	if (fd < 0) {
		if (errno == ELOOP && k->nofollow)
			rv = not_regular(path, S_IFLNK, k, err);
		else
			rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot open: %s",
					   strerror(errno));
		goto out;
	}
	if (fstat(fd, &fst) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(fst.st_mode)) {
		rv = not_regular(path, fst.st_mode, k, err);
		goto out;
	}
	if (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "was replaced while being opened");
		goto out;
	}
	/* A regular file never blocks; blocking reads are the plain case from here. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot set up reading: %s",
				   strerror(errno));
		goto out;
	}
	if (fst.st_size < 0 || (unsigned long long)fst.st_size > k->limit) {
		rv = too_large(path, k, err);
		goto out;
	}
	cap = fst.st_size > 0 ? (size_t)fst.st_size : FIRST_CHUNK;
	if (cap > k->limit)
		cap = k->limit;
	buf = malloc(cap + 1);
	if (buf == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "out of memory");
		goto out;
	}
	for (;;) {
		if (used == cap) {
			/* Full: one more byte tells the end from a longer (or growing) file. */
			n = read_some(fd, &extra, 1);
			if (n == 0)
				break;
			if (n < 0) {
				rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot read: %s",
						   strerror(errno));
				goto out;
			}
			if (used == k->limit) {
				rv = too_large(path, k, err);
				goto out;
			}
			cap = cap > k->limit / 2 ? k->limit : 2 * cap;
			tmp = realloc(buf, cap + 1);
			if (tmp == NULL) {
				rv = dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "out of memory");
				goto out;
			}
			buf = tmp;
			buf[used++] = extra;
			continue;
		}
		n = read_some(fd, buf + used, cap - used);
		if (n == 0)
			break;
		if (n < 0) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot read: %s",
					   strerror(errno));
			goto out;
		}
		used += (size_t)n;
	}
	if (memchr(buf, '\0', used) != NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0, "file contains a NUL byte");
		goto out;
	}
	buf[used] = '\0';
	*out = buf;
	buf = NULL;
	if (len != NULL)
		*len = used;
	rv = DTPLAN_OK;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rv;
}
