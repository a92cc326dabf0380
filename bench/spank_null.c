/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spank_null.c: a SPANK plugin that registers dtplan's three options and
 * does nothing with them, for bench/bench_plugin.sh: what any plugin with
 * these options costs sbatch (Slurm loading a module, registering and
 * passing options), against which dtplan's own share is read.
 */
#include "config.h"

#include <stddef.h>

#include <slurm/spank.h>

SPANK_PLUGIN(dtnull, 1);

static int option_cb(int val, const char *optarg, int remote)
{
	(void)val;
	(void)optarg;
	(void)remote;
	return 0;
}

static struct spank_option options[] = {
	{"dt-plan", "auto|strict|off", "[null] nothing", 2, 0, option_cb},
	{"dt-model", "SPEC", "[null] nothing", 1, 1, option_cb},
	{"dt-train", "SPEC", "[null] nothing", 1, 2, option_cb},
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS)
			return -1;
	return 0;
}
