/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_plugin_load.c: what spank_dtplan.so costs a command that does not
 * use it: sbatch, salloc or srun without any --dt-* option.  Without a
 * cluster (bench/bench_plugin.sh needs one, and root).
 *
 * Usage: bench_plugin_load [-n N] [-a ARG]... [-o OPTION=VALUE]... PLUGIN.so
 *
 * N times (default 200), in a fresh child process each time (forked from
 * this program, which loads no library the plugin needs), does what sbatch
 * does with a plugstack.conf line naming the plugin and no --dt-* option:
 * dlopen() the module (RTLD_NOW, as its -z now binds anyway), find
 * slurm_spank_init, slurm_spank_init_post_opt and slurm_spank_exit, and call
 * them in allocator context with the plugstack arguments (-a).  The spank_*
 * and slurm_* functions Slurm's programs provide are stubs below (exported
 * with -rdynamic).  The same is timed for an empty fork (no dlopen), and the
 * difference is the plugin's cost.  -o gives an option as the command line
 * would (its callback runs between init and init_post_opt), to see what a
 * command with --dt-* options loads.
 *
 * Prints the medians and the shared objects the module brought in.  Not a
 * test: make bench does not run it either; see README, "Benchmarks".
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <slurm/spank.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- what sbatch provides to a SPANK plugin (stubs) ---- */

spank_context_t spank_context(void)
{
	return S_CTX_ALLOCATOR;
}

/* The options the plugin registered, for -o. */
static struct spank_option registered[8];
static int n_registered;

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	(void)sp;
	if (n_registered < 8)
		registered[n_registered++] = *opt;
	return ESPANK_SUCCESS;
}

spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt, char **optarg)
{
	(void)sp;
	(void)opt;
	(void)optarg;
	return ESPANK_ERROR;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	(void)sp;
	(void)var;
	(void)buf;
	(void)len;
	return ESPANK_ENV_NOEXIST;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	(void)sp;
	(void)var;
	(void)val;
	(void)overwrite;
	return ESPANK_NOT_REMOTE;
}

spank_err_t spank_job_control_setenv(spank_t sp, const char *name, const char *value, int overwrite)
{
	(void)sp;
	(void)name;
	(void)value;
	(void)overwrite;
	return ESPANK_SUCCESS;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	(void)sp;
	(void)item;
	return ESPANK_NOT_AVAIL;
}

const char *spank_strerror(spank_err_t err)
{
	(void)err;
	return "stub";
}

void slurm_error(const char *fmt, ...)
{
	(void)fmt;
}

void slurm_info(const char *fmt, ...)
{
	(void)fmt;
}

void slurm_verbose(const char *fmt, ...)
{
	(void)fmt;
}

void slurm_debug(const char *fmt, ...)
{
	(void)fmt;
}

void slurm_spank_log(const char *fmt, ...)
{
	(void)fmt;
}

/* Never called without a job; present so that -z now binds.  Declared here:
 * <slurm/slurm.h> types them differently from release to release. */
void *slurm_hostlist_create(const char *s);
int slurm_hostlist_count(void *hl);
char *slurm_hostlist_shift(void *hl);
void slurm_hostlist_destroy(void *hl);

void *slurm_hostlist_create(const char *s)
{
	(void)s;
	return NULL;
}

int slurm_hostlist_count(void *hl)
{
	(void)hl;
	return 0;
}

char *slurm_hostlist_shift(void *hl)
{
	(void)hl;
	return NULL;
}

void slurm_hostlist_destroy(void *hl)
{
	(void)hl;
}

/* ---- timing ---- */

typedef int (*spank_fn)(spank_t, int, char **);

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(*(int *)data)++;
	return 0;
}

static int list_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	FILE *f = data;

	(void)size;
	if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0')
		fprintf(f, "%s\n", info->dlpi_name);
	return 0;
}

/* -o OPTION=VALUE arguments */
static char *given[8];
static int n_given;

/* Calls the callback of each -o option, as Slurm does for the command line. */
static int give_options(void)
{
	for (int i = 0; i < n_given; i++) {
		size_t len = strcspn(given[i], "=");
		int k;

		for (k = 0; k < n_registered; k++)
			if (strlen(registered[k].name) == len &&
			    strncmp(registered[k].name, given[i], len) == 0)
				break;
		if (k == n_registered || registered[k].cb == NULL) {
			fprintf(stderr, "bench_plugin_load: no option --%.*s\n", (int)len,
				given[i]);
			return -1;
		}
		if (registered[k].cb(registered[k].val, given[i][len] ? given[i] + len + 1 : "",
				     0) != 0)
			return -1;
	}
	return 0;
}

/* In the child: load and run the plugin as sbatch would; the time taken goes
 * to fd.  With list, the objects loaded go to stdout instead. */
static int child(const char *so, int ac, char **av, int fd, bool list)
{
	double t0 = now_us(), us;
	spank_fn init, post, fini;
	void *h;
	int before = 0;

	if (so != NULL) {
		dl_iterate_phdr(count_objects, &before);
		h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
		if (h == NULL) {
			fprintf(stderr, "bench_plugin_load: %s\n", dlerror());
			return 2;
		}
		init = (spank_fn)(uintptr_t)dlsym(h, "slurm_spank_init");
		post = (spank_fn)(uintptr_t)dlsym(h, "slurm_spank_init_post_opt");
		fini = (spank_fn)(uintptr_t)dlsym(h, "slurm_spank_exit");
		if (init == NULL || post == NULL || fini == NULL) {
			fprintf(stderr, "bench_plugin_load: %s: no SPANK callbacks\n", so);
			return 2;
		}
		if (init(NULL, ac, av) != 0 || give_options() != 0 || post(NULL, ac, av) != 0)
			return 3;
		if (list) {
			dl_iterate_phdr(list_objects, stdout);
			fflush(stdout);
		}
		if (fini(NULL, ac, av) != 0)
			return 3;
	}
	us = now_us() - t0;
	if (write(fd, &us, sizeof(us)) != (ssize_t)sizeof(us))
		return 4;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median microseconds of n children (so NULL: fork only); -1 on failure. */
static double run(const char *so, int ac, char **av, int n)
{
	double *t = calloc((size_t)n, sizeof(*t)), med = -1.0;
	int fds[2], i;

	if (t == NULL || pipe(fds) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		int status;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		if (pid < 0)
			break;
		if (pid == 0)
			_exit(child(so, ac, av, fds[1], false));
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0 || read(fds[0], &t[i], sizeof(t[i])) != sizeof(t[i]))
			break;
	}
	close(fds[0]);
	close(fds[1]);
	if (i == n) {
		qsort(t, (size_t)n, sizeof(*t), cmp_double);
		med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	}
out:
	free(t);
	return med;
}

int main(int argc, char **argv)
{
	char *av[16];
	int ac = 0, n = 200, opt, fds[2];
	double base, load;

	while ((opt = getopt(argc, argv, "n:a:o:")) != -1) {
		if (opt == 'n' && atoi(optarg) > 0)
			n = atoi(optarg);
		else if (opt == 'a' && ac < 15)
			av[ac++] = optarg;
		else if (opt == 'o' && n_given < 8)
			given[n_given++] = optarg;
		else
			goto usage;
	}
	av[ac] = NULL;
	if (optind + 1 != argc)
		goto usage;
	base = run(NULL, 0, NULL, n);
	load = run(argv[optind], ac, av, n);
	if (base < 0 || load < 0) {
		fprintf(stderr, "bench_plugin_load: a child failed\n");
		return 1;
	}
	printf("%s: median over %d fresh processes: %.1f us to load it and run init, "
	       "init_post_opt and exit %s (an empty child: %.1f us)\n",
	       argv[optind], n, load, n_given > 0 ? "with the options given" : "without options",
	       base);
	printf("objects in the process after loading it:\n");
	fflush(stdout);
	if (pipe(fds) == 0) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(child(argv[optind], ac, av, fds[1], true));
		waitpid(pid, NULL, 0);
		close(fds[0]);
		close(fds[1]);
	}
	return 0;
usage:
	fprintf(stderr, "Usage: bench_plugin_load [-n N] [-a PLUGSTACK-ARG]... "
			"[-o OPTION=VALUE]... PLUGIN.so\n");
	return 2;
}
