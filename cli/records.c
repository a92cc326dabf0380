/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * records.c: the record database for dtplan plan, history, calibrate and
 * observe: which file, and what was learned from it.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_records_path(const char *cmd, const char *flag, const struct dtplan_config *c, char *buf,
		     size_t size)
{
	struct dtplan_error err = {0};

	if (flag != NULL)
		return snprintf(buf, size, "%s", flag) < (int)size
			       ? CLI_EXIT_OK
			       : cli_usage_error(cmd, "--records: path too long");
	if (c != NULL && c->record_db[0] != '\0') {
		snprintf(buf, size, "%s", c->record_db);
		return CLI_EXIT_OK;
	}
	if (dtplan_recdb_default_path(getenv("XDG_STATE_HOME"), getenv("HOME"), buf, size, &err) !=
	    DTPLAN_OK)
		return cli_report(cmd, &err, false);
	return CLI_EXIT_OK;
}

const char *cli_records_cluster(const char *flag)
{
	const char *env = getenv("SLURM_CLUSTER_NAME");

	return flag != NULL ? flag : env != NULL ? env : "";
}

int cli_records_read(const char *cmd, const char *path, const char *cluster,
		     struct dtplan_record **recs, size_t *n, bool missing_ok)
{
	struct dtplan_error err = {0};
	struct dtplan_recdb *db = NULL;
	enum dtplan_err rv;

	*recs = NULL;
	*n = 0;
	rv = dtplan_recdb_open(path, false, &db, &err);
	if (rv == DTPLAN_ERR_NOT_FOUND && missing_ok)
		return CLI_EXIT_OK;
	if (rv == DTPLAN_OK)
		rv = dtplan_recdb_list(db, cluster, recs, n, &err);
	dtplan_recdb_close(db);
	if (rv != DTPLAN_OK)
		return cli_report(cmd, &err, false);
	return CLI_EXIT_OK;
}

json_t *cli_record_json(const struct dtplan_record *r)
{
	/* the GPU count is the split's (EP is carved from DP) */
	return json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, "
			 "s:i, s:i, s:s, s:o, s:o, s:o, s:o, s:I, s:o, s:i}",
			 "job_id", (json_int_t)r->job_id, "time", (json_int_t)r->time, "cluster",
			 r->cluster, "fingerprint", r->fingerprint, "gpu", r->gpu, "model",
			 r->model, "framework", r->framework, "precision", r->precision,
			 "shape_class", r->shape_class, "tp", r->tp, "pp", r->pp, "dp", r->dp, "cp",
			 r->cp, "ep", r->ep, "zero", r->zero, "micro_batch", r->micro_batch,
			 "recompute", dtplan_recompute_name(r->recompute), "predicted_step_s",
			 cli_json_number(r->predicted_step_s), "model_step_s",
			 cli_json_number(r->model_step_s), "measured_step_s",
			 cli_json_number(r->measured_step_s), "measured_step_spread_s",
			 cli_json_number(r->measured_spread_s), "steps", (json_int_t)r->steps,
			 "checkpoint_s", cli_json_number(r->checkpoint_s), "gpus",
			 r->tp * r->cp * r->pp * r->dp);
}
