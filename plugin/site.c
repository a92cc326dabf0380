/*
 * site.c: the plugstack.conf arguments and the site file they name ->
 * struct dtplan_config, for every context that reads them (init in each
 * process, the job prolog).
 */
#include "config.h"

#include "plugin.h"

int dtplan__config_load(struct dtplan_config *c, int ac, char **av)
{
	struct dtplan_error err = {0};
	char buf[1024];

	/* Reads the site file named by site= too. */
	if (dtplan_config_parse_args(c, ac, av, &err) != DTPLAN_OK) {
		slurm_error(DTPLAN_LOG_PREFIX "configuration: %s",
			    dtplan_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}
