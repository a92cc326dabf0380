/*
 * prolog.c: the job prolog (job_script context: root, a fresh process per
 * run, no slurm_spank_init, plugstack arguments in argv).
 *
 * With cache_dir= configured, exports this node's hwloc topology to
 * <cache_dir>/<node>.xml so that the batch step plans from a file instead of
 * discovering every node on the job's critical path.  With PrologFlags=Alloc
 * this runs on every node of the allocation.  A failing prolog would drain
 * the node, so this never fails: problems are logged (slurmd log) and the
 * plan later says which nodes it assumed.
 */
#include "config.h"

#include "plugin.h"
#include "dtprobes.h"

#include <stdlib.h>

/* True when the job asked for a plan, or the site plans GPU jobs by default. */
static bool job_wants_plan(spank_t sp, const struct dtplan_config *c)
{
	struct spank_option plan = {"dt-plan", "auto|strict|off", "", 2, 0, NULL};
	struct spank_option model = {"dt-model", "SPEC", "", 1, 0, NULL};
	char *arg = NULL;
	enum dtplan_mode mode;

	if (spank_option_getopt(sp, &plan, &arg) == ESPANK_SUCCESS) {
		if (arg == NULL || arg[0] == '\0')
			return true;
		return dtplan_mode_parse(arg, &mode, NULL) == DTPLAN_OK &&
		       mode != DTPLAN_MODE_OFF;
	}
	if (spank_option_getopt(sp, &model, &arg) == ESPANK_SUCCESS)
		return true;
	return c->default_mode != DTPLAN_MODE_OFF;
}

int dtplan__prolog(spank_t sp, int ac, char **av)
{
	struct dtplan_config config;
	struct dtplan_error err = {0};
	const char *host = getenv("SLURMD_NODENAME");
	char buf[1024];

	dtplan__log_install();
	dtplan_config_init(&config);
	if (dtplan__config_load(&config, ac, av) != 0)
		goto out;
	if (config.cache_dir[0] == '\0' || !job_wants_plan(sp, &config))
		goto out;
	if (dtplan_node_cache_write(config.cache_dir, host, config.probe_timeout_s, &err) !=
	    DTPLAN_OK)
		slurm_error(DTPLAN_LOG_PREFIX "prolog: cannot cache node %s in %s: %s",
			    host ? host : "(this node)", config.cache_dir,
			    dtplan_error_format(&err, buf, sizeof(buf)));
out:
	dtplan_config_fini(&config);
	return 0;
}
