/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_file.c: the bounded reader of whole files (lib/base/file.c).  FIFOs,
 * devices, directories, links and files over their limit get an error naming
 * the path and the reason, and never block: every test runs under alarm(), so
 * a reader that waits on a FIFO fails the test instead of hanging it.
 */
#include "test_common.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

/* Path of name in the test's directory (static buffer: copy to keep two). */
static const char *tmp_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* Writes n copies of c (n may be 0) to path. */
static void write_fill(const char *path, char c, size_t n)
{
	char block[4096];
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	memset(block, c, sizeof(block));
	while (n > 0) {
		size_t k = n < sizeof(block) ? n : sizeof(block);

		assert_int_equal(fwrite(block, 1, k, f), k);
		n -= k;
	}
	assert_int_equal(fclose(f), 0);
}

/* Reads path as kind and expects code, with err.text containing says. */
static void expect_error(const char *path, enum dtplan_file_kind kind, enum dtplan_err code,
			 const char *says)
{
	struct dtplan_error err = {0};
	char *text = (char *)"untouched";
	size_t len = 99;

	assert_int_equal(dtplan_file_read(path, kind, &text, &len, &err), code);
	assert_null(text);
	assert_int_equal(len, 0);
	assert_string_equal(err.source, path);
	if (strstr(err.text, says) == NULL)
		fail_msg("%s: '%s' lacks '%s'", path, err.text, says);
}

static void file_read__regular__whole_text_and_length(void **state)
{
	struct dtplan_error err = {0};
	const char *path = tmp_path("site.conf");
	FILE *f = fopen(path, "w");
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(f);
	fputs("Policy=warn\nNetworkBandwidth=400Gb/s\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(dtplan_file_read(path, DTPLAN_FILE_SITE, &text, &len, &err), DTPLAN_OK);
	assert_string_equal(text, "Policy=warn\nNetworkBandwidth=400Gb/s\n");
	assert_int_equal(len, 12 + 25);
	free(text);
	/* len is optional */
	assert_int_equal(dtplan_file_read(path, DTPLAN_FILE_SITE, &text, NULL, &err), DTPLAN_OK);
	free(text);
	unlink(path);
}

static void file_read__empty__empty_string(void **state)
{
	const char *path = tmp_path("empty");
	char *text = NULL;
	size_t len = 99;

	(void)state;
	write_fill(path, 'x', 0);
	assert_int_equal(dtplan_file_read(path, DTPLAN_FILE_TOPOLOGY, &text, &len, NULL),
			 DTPLAN_OK);
	assert_string_equal(text, "");
	assert_int_equal(len, 0);
	free(text);
	unlink(path);
}

/* Finding 4 of issue 13: open() on a FIFO waited for a writer forever. */
static void file_read__fifo__refused_without_blocking(void **state)
{
	const char *path = tmp_path("fifo");

	(void)state;
	assert_int_equal(mkfifo(path, 0600), 0);
	for (int k = 0; k < DTPLAN_FILE__LAST; k++)
		expect_error(path, (enum dtplan_file_kind)k, DTPLAN_ERR_IO,
			     "is a FIFO (named pipe), not a regular file");
	unlink(path);
}

/* Finding 5: /dev/zero and /dev/urandom were read until memory ran out. */
static void file_read__devices__refused(void **state)
{
	(void)state;
	expect_error("/dev/zero", DTPLAN_FILE_SITE, DTPLAN_ERR_IO,
		     "is a character device, not a regular file");
	expect_error("/dev/urandom", DTPLAN_FILE_HF_CONFIG, DTPLAN_ERR_IO,
		     "is a character device, not a regular file");
	expect_error("/dev/null", DTPLAN_FILE_PLAN, DTPLAN_ERR_IO, "is a character device");
}

/* Finding 6: a directory gave the parser's "'[' or '{' expected". */
static void file_read__directory__refused(void **state)
{
	(void)state;
	expect_error(tmpdir, DTPLAN_FILE_NODE_JSON, DTPLAN_ERR_IO,
		     "is a directory, not a regular file");
	expect_error(tmpdir, DTPLAN_FILE_HF_CONFIG, DTPLAN_ERR_IO, "is a directory");
}

static void file_read__socket__refused(void **state)
{
	const char *path = tmp_path("sock");

	(void)state;
	assert_int_equal(mknod(path, S_IFSOCK | 0600, 0), 0);
	expect_error(path, DTPLAN_FILE_SITE, DTPLAN_ERR_IO, "is a socket, not a regular file");
	unlink(path);
}

static void file_read__missing__cannot_open(void **state)
{
	(void)state;
	expect_error(tmp_path("nonexistent"), DTPLAN_FILE_SITE, DTPLAN_ERR_IO,
		     "cannot open: No such file or directory");
}

/* The limit itself is allowed; one byte more is refused.  The node JSON
 * limit is 1 MiB = 1048576 bytes. */
static void file_read__size_limit__exact_ok_one_more_refused(void **state)
{
	const char *path = tmp_path("big.json");
	size_t limit = dtplan_file_limit(DTPLAN_FILE_NODE_JSON), len = 0;
	char *text = NULL;

	(void)state;
	assert_int_equal(limit, 1048576);
	write_fill(path, ' ', limit);
	assert_int_equal(dtplan_file_read(path, DTPLAN_FILE_NODE_JSON, &text, &len, NULL),
			 DTPLAN_OK);
	assert_int_equal(len, limit);
	assert_int_equal(strlen(text), limit);
	free(text);
	write_fill(path, ' ', limit + 1);
	expect_error(path, DTPLAN_FILE_NODE_JSON, DTPLAN_ERR_IO,
		     "larger than the 1 MiB limit for a node JSON file");
	unlink(path);
}

/* A sparse file of 4 GiB costs no disk and is refused before any read. */
static void file_read__huge_sparse__refused_before_reading(void **state)
{
	const char *path = tmp_path("huge.conf");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)4 << 30), 0);
	assert_int_equal(close(fd), 0);
	expect_error(path, DTPLAN_FILE_SITE, DTPLAN_ERR_IO,
		     "larger than the 4 MiB limit for a site file");
	expect_error(path, DTPLAN_FILE_TOPOLOGY, DTPLAN_ERR_IO,
		     "larger than the 16 MiB limit for a topology file");
	expect_error(path, DTPLAN_FILE_PLAN, DTPLAN_ERR_IO,
		     "larger than the 64 MiB limit for a plan file");
	unlink(path);
}

/* Files under /proc report size 0 and still have text. */
static void file_read__size_zero_kernel_file__read_to_the_end(void **state)
{
	char *text = NULL;
	size_t len = 0;

	(void)state;
	if (access("/proc/self/status", R_OK) != 0)
		skip();
	assert_int_equal(dtplan_file_read("/proc/self/status", DTPLAN_FILE_SITE, &text, &len, NULL),
			 DTPLAN_OK);
	assert_true(len > 0);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "Pid:"));
	free(text);
}

static void file_read__nul_byte__parse_error(void **state)
{
	const char *path = tmp_path("nul.conf");
	FILE *f = fopen(path, "w");

	(void)state;
	assert_non_null(f);
	assert_int_equal(fwrite("Policy=warn\n\0x", 1, 14, f), 14);
	assert_int_equal(fclose(f), 0);
	expect_error(path, DTPLAN_FILE_SITE, DTPLAN_ERR_PARSE, "file contains a NUL byte");
	unlink(path);
}

/* Links are followed for files people name, refused for the plan and cache. */
static void file_read__symlink__followed_or_refused_by_kind(void **state)
{
	char target[512], link[512], *text = NULL;

	(void)state;
	snprintf(target, sizeof(target), "%s", tmp_path("target.json"));
	snprintf(link, sizeof(link), "%s", tmp_path("link.json"));
	write_fill(target, '{', 1);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(dtplan_file_read(link, DTPLAN_FILE_NODE_JSON, &text, NULL, NULL),
			 DTPLAN_OK);
	assert_string_equal(text, "{");
	free(text);
	expect_error(link, DTPLAN_FILE_PLAN, DTPLAN_ERR_IO,
		     "is a symbolic link, which is not followed for a plan file");
	expect_error(link, DTPLAN_FILE_CACHE_XML, DTPLAN_ERR_IO, "is a symbolic link");
	unlink(link);
	/* a link to a FIFO is refused for what the FIFO is */
	assert_int_equal(unlink(target), 0);
	assert_int_equal(mkfifo(target, 0600), 0);
	assert_int_equal(symlink(target, link), 0);
	expect_error(link, DTPLAN_FILE_SITE, DTPLAN_ERR_IO, "is a FIFO");
	unlink(link);
	unlink(target);
}

static void file_read__bad_arguments__inval(void **state)
{
	char *text = (char *)"untouched";

	(void)state;
	assert_int_equal(dtplan_file_read(NULL, DTPLAN_FILE_SITE, &text, NULL, NULL),
			 DTPLAN_ERR_INVAL);
	assert_null(text);
	assert_int_equal(dtplan_file_read("", DTPLAN_FILE_SITE, &text, NULL, NULL),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_file_read("/dev/null", DTPLAN_FILE_SITE, NULL, NULL, NULL),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_file_read("/dev/null", DTPLAN_FILE__LAST, &text, NULL, NULL),
			 DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_file_read("/dev/null", (enum dtplan_file_kind) - 1, &text, NULL,
					  NULL),
			 DTPLAN_ERR_INVAL);
}

static void file_limit__every_kind__documented_values(void **state)
{
	(void)state;
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_SITE), 4 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_TOPOLOGY), 16 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_HF_CONFIG), 4 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_NODE_JSON), 1 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_NODE_XML), 32 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_CACHE_XML), 32 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_PLAN), 64 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE_MEASUREMENTS), 64 << 20);
	assert_int_equal(dtplan_file_limit(DTPLAN_FILE__LAST), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dtplan-test-file.XXXXXX");
	/* A reader that blocks fails the test after 20 s instead of hanging it. */
	alarm(20);
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_read__regular__whole_text_and_length),
		cmocka_unit_test(file_read__empty__empty_string),
		cmocka_unit_test(file_read__fifo__refused_without_blocking),
		cmocka_unit_test(file_read__devices__refused),
		cmocka_unit_test(file_read__directory__refused),
		cmocka_unit_test(file_read__socket__refused),
		cmocka_unit_test(file_read__missing__cannot_open),
		cmocka_unit_test(file_read__size_limit__exact_ok_one_more_refused),
		cmocka_unit_test(file_read__huge_sparse__refused_before_reading),
		cmocka_unit_test(file_read__size_zero_kernel_file__read_to_the_end),
		cmocka_unit_test(file_read__nul_byte__parse_error),
		cmocka_unit_test(file_read__symlink__followed_or_refused_by_kind),
		cmocka_unit_test(file_read__bad_arguments__inval),
		cmocka_unit_test(file_limit__every_kind__documented_values),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, setup, teardown);
}
