/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * site.c: the plugstack.conf arguments and the site file they name ->
 * struct dtplan_config, for every context that reads them (init in each
 * process, the job prolog), relative paths read in Slurm's configuration
 * folder so that they work on configless nodes too.
 */
#include "config.h"

#include "plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Where a configless slurmd (and sackd, 23.11+) keeps the configuration it
 * fetched from slurmctld. */
#define DTPLAN_CONFIGLESS_DIR "/run/slurm/conf"

/*
 * Slurm's configuration folder, where relative site= and topology= paths
 * point: the folder of $SLURM_CONF when Slurm set it (a configless slurmd
 * points it into its cache, SlurmdSpoolDir/conf-cache), else
 * /run/slurm/conf when it holds a slurm.conf (the cache configless slurmd
 * and sackd keep), else DTPLAN_SLURM_SYSCONFDIR (configure
 * --with-slurm-sysconfdir, /etc/slurm).
 */
static void conf_dir(struct dtplan_config *c)
{
	const char *fallback = DTPLAN_SLURM_SYSCONFDIR;

	if (access(DTPLAN_CONFIGLESS_DIR "/slurm.conf", R_OK) == 0)
		fallback = DTPLAN_CONFIGLESS_DIR;
	dtplan_config_set_dir(c, getenv("SLURM_CONF"), fallback);
}

int dtspank__config_load(struct dtplan_config *c, int ac, char **av)
{
	struct dtplan_error err = {0};
	char buf[1024];

	conf_dir(c);
	/* Reads the site file named by site= too. */
	if (dtplan_config_parse_args(c, ac, av, &err) != DTPLAN_OK) {
		slurm_error(DTPLAN_LOG_PREFIX "configuration: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}

int dtspank__slurm_conf(const struct dtplan_config *c, struct dtplan_slurm_conf *s)
{
	struct dtplan_error err = {0};
	const char *env = getenv("SLURM_CONF");
	char path[4096], buf[1024];

	int n;

	if (env != NULL && env[0] != '\0')
		n = snprintf(path, sizeof(path), "%s", env);
	else
		n = snprintf(path, sizeof(path), "%s/slurm.conf",
			     c->conf_dir[0] != '\0' ? c->conf_dir : DTPLAN_SLURM_SYSCONFDIR);
	if (n < 0 || n >= (int)sizeof(path))
		return -1;
	if (dtplan_slurm_conf_read(path, s, &err) != DTPLAN_OK) {
		slurm_info(DTPLAN_LOG_PREFIX "%s", dtplan_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}
