/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/launch.h: what a plan becomes for people and launchers: text, SVG, environment, framework arguments.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_LAUNCH_H
#define DTPLAN_LAUNCH_H

#include "dtplan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Launch environment (lib/launch/env.c, lib/launch/env_vars.c, lib/json/plan_ranks_json.c)
 *
 * What a plan means for launchers as NAME=value pairs: the job-wide
 * variables (DT_TP, MASTER_ADDR, ...) and one task's (RANK, LOCAL_RANK, ...).
 * The host program copies them into the job's or the task's environment.
 * ---------------------------------------------------------------------- */

struct dtplan_env_var {
	char name[32];
	char *value; /* owned */
};

struct dtplan_env {
	size_t n;
	struct dtplan_env_var *vars; /* owned, in the order they were set */
};

/*
 * Longest value dtplan puts in one variable.  Linux refuses every execve
 * whose single NAME=value string exceeds 128 KiB (MAX_ARG_STRLEN); a
 * quarter of that leaves the job room for its own.  dtplan_env_set()
 * refuses a longer value with DTPLAN_ERR_RANGE; a node order or stage list
 * that long is left in the plan file, and DT_NODE_ORDER_FILE or
 * DT_PP_LAYERS_FILE name it instead.
 */
#define DTPLAN_ENV_VALUE_MAX 32768

/* MASTER_PORT is DTPLAN_MASTER_PORT_BASE + job_id % DTPLAN_MASTER_PORT_SPAN:
 * stable for a job, different for jobs that share a first node (lib/launch/torchrun.c). */
#define DTPLAN_MASTER_PORT_BASE 29500
#define DTPLAN_MASTER_PORT_SPAN 1000
int dtplan_master_port(uint32_t job_id);

/* Zeroes e.  dtplan_env_fini() frees what e owns and zeroes it (NULL allowed). */
void dtplan_env_init(struct dtplan_env *e);
void dtplan_env_fini(struct dtplan_env *e);

/* Value of name in e, or NULL.  Owned by e. */
const char *dtplan_env_get(const struct dtplan_env *e, const char *name);

/* Sets name to a formatted value, replacing an earlier value.  DTPLAN_ERR_RANGE
 * (nothing set) for a value longer than DTPLAN_ENV_VALUE_MAX. */
enum dtplan_err dtplan_env_set(struct dtplan_env *e, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * True when the user's own value of name wins over the plan's: NCCL_*,
 * MASTER_* (MASTER_ADDR, MASTER_PORT), PET_* (torchrun's options), RANK,
 * WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and SLURM_NTASKS_PER_NODE, which users and launchers set
 * themselves.  The host
 * program sets such a variable only where the job has none; every other
 * variable of a dtplan_env (DT_*, DTPLAN_*) replaces the job's.
 */
bool dtplan_env_user_owned(const char *name);

struct dtplan_launch_in; /* lib/launch/launch.c, below */

struct dtplan_job_env_in {
	const struct dtplan_plan *plan; /* NULL: no plan could be made */
	uint32_t job_id;
	const char *plan_file;   /* DTPLAN_FILE; NULL: not written */
	const char (*nodes)[64]; /* the allocation's nodes in Slurm's order (borrowed; may be
				    * NULL): node order and MASTER_ADDR when the plan has no
				    * placement or there is no plan */
	size_t n_nodes;
	const char *reason; /* why the plan is degraded or refused; NULL: none */
	bool refused;       /* DTPLAN_PLAN_STATE=refused */
	/* the launch variables' rendezvous and files (borrowed); NULL: MASTER_ADDR
	 * and MASTER_PORT as set here, no files */
	const struct dtplan_launch_in *launch;
};

/*
 * Job-wide variables, appended to e: DTPLAN_PLAN_STATE (ok, degraded,
 * refused), DTPLAN_PLAN_REASON (when not ok), DTPLAN_FILE, MASTER_ADDR,
 * MASTER_PORT, and with a plan DT_TP, DT_PP, DT_DP, DT_ZERO, DT_MICRO_BATCH,
 * DT_NUM_MICROBATCHES, DT_RECOMPUTE, DT_PP_SCHEDULE, DT_RANK_ORDER (best.rank_order,
 * "tp-dp-pp" or "tp-pp-dp"; not set when the plan has none),
 * DT_CKPT_INTERVAL_S, DT_CKPT_INTERVAL_STEPS, the launch variables of
 * dtplan_launch_env() (DT_MEGATRON_ARGS, DT_NEMO_OVERRIDES, PET_*, the files'
 * paths), and DT_NNODES, DT_NODE_ORDER (comma list in rank order; the
 * allocation's order when the plan places nothing).
 */
enum dtplan_err dtplan_env_job(const struct dtplan_job_env_in *in, struct dtplan_env *e,
			       struct dtplan_error *err);

struct dtplan_task_env_in {
	const char *host;                    /* node the task runs on */
	int local_id;                        /* the task's index among the node's tasks */
	int local_count;                     /* tasks of the step on this node */
	int step_nodes;                      /* nodes in the step; 0: unknown */
	enum dtplan_nccl_ib_hca nccl_ib_hca; /* (the site's nccl_ib_hca=) */
};

/*
 * One task's variables, appended to e.  When the node runs as many tasks as
 * the plan has ranks there: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 * SLURM_NTASKS_PER_NODE (for Lightning),
 * DT_TP_RANK, DT_PP_RANK, DT_DP_RANK, DT_LOCAL_GPU, DT_NODE_RANK and
 * PET_NODE_RANK.  With one task per node (a launcher such as torchrun per
 * node): DT_NODE_RANK, PET_NODE_RANK (torchrun's --node-rank) and DT_NNODES
 * only.  In both cases, with nccl_ib_hca DTPLAN_NCCL_IB_HCA_NODE,
 * NCCL_IB_HCA: "=" and the NICs nearest to the node's ranks' GPUs, each once,
 * in GPU order (not set when the plan knows none).  DTPLAN_ERR_NOT_FOUND when
 * host is not in the plan, DTPLAN_ERR_INVAL when the step does not match
 * the plan (err says how).
 */
enum dtplan_err dtplan_env_task(const struct dtplan_plan *p, const struct dtplan_task_env_in *in,
				struct dtplan_env *e, struct dtplan_error *err);

/* Most nodes and ranks a plan read back may hold (doc/internals/limits.md). */
#define DTPLAN_PLAN_MAX_NODES (1 << 20)
#define DTPLAN_PLAN_MAX_RANKS (1 << 20)

/*
 * Reads from a plan's JSON (dtplan_plan_to_json()) what tasks need: the
 * parallelism (into best: tp, pp, dp, zero, micro_batch, num_microbatches,
 * recompute), the checkpoint interval, and the placement (node names in rank
 * order, ranks).  Other fields are zero.  A plan without placement is a
 * DTPLAN_ERR_PARSE error, as are more than DTPLAN_PLAN_MAX_NODES nodes or
 * DTPLAN_PLAN_MAX_RANKS ranks, ranks that are not tp x pp x dp, and JSON
 * nested more than 32 deep.  Time and memory are linear in the text and the
 * plan (no document tree is built).  Caller frees *out with
 * dtplan_plan_destroy(); *out is NULL on error.
 */
enum dtplan_err dtplan_plan_ranks_from_json(const char *text, struct dtplan_plan **out,
					    struct dtplan_error *err);

/*
 * Reads a whole plan from its JSON (dtplan_plan_to_json()): what
 * dtplan_plan_render_text() and dtplan_plan_render_svg() show, so that a
 * saved plan renders as it did when it was made (dtplan show).  The
 * request's settings the JSON does not carry (the warning thresholds, link
 * speeds) take dtplan_request_init()'s values; its checkpoint write rate and
 * per-GPU MTBF come from the checkpoint's numbers.  The placement is
 * optional.  DTPLAN_ERR_PARSE, naming the member, for JSON that is not a
 * dtplan.plan/1 plan.  Caller frees *out with dtplan_plan_destroy(); *out
 * is NULL on error.
 */
enum dtplan_err dtplan_plan_from_json(const char *text, struct dtplan_plan **out,
				      struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Launch lines for frameworks (lib/launch/: one file per framework, launch.c
 * the dispatcher)
 *
 * The plan in the words of Megatron-LM, NeMo, DeepSpeed and torchrun, so that
 * a job's launch line takes it without translation (doc/launchers.md).  Each
 * function is pure: the plan (and the rendezvous and file paths the host
 * program chose) in, text out.
 * ---------------------------------------------------------------------- */

/* What a launch needs besides the plan.  Strings are borrowed. */
struct dtplan_launch_in {
	const char *master_addr;      /* torchrun's rendezvous host; NULL: unknown */
	int master_port;              /* its port; 0: unknown */
	const char *hostfile;         /* paths of the files written beside the plan */
	const char *deepspeed_config; /* JSON; each NULL when not written */
	const char *svg;
};

/*
 * Fills l for plan p of job job_id (0: no job): the rendezvous is the job's
 * own MASTER_ADDR and MASTER_PORT when given (non-empty, a port 1-65535),
 * else the plan's first node and dtplan_master_port(job_id) (no port without
 * a job).  No files.  job_addr and p's node names stay borrowed.
 */
void dtplan_launch_in_init(struct dtplan_launch_in *l, const struct dtplan_plan *p, uint32_t job_id,
			   const char *job_addr, const char *job_port);

/*
 * Megatron-LM's arguments for p (megatron/training/arguments.py):
 * --tensor-model-parallel-size, --pipeline-model-parallel-size,
 * --micro-batch-size, --global-batch-size (the trained batch), --seq-length,
 * --bf16, then as the plan needs them --sequence-parallel (TP > 1),
 * --use-distributed-optimizer (ZeRO-1; ZeRO-2 and 3 with Megatron-FSDP's
 * --data-parallel-sharding-strategy), the recomputation flags,
 * --decoder-first/last-pipeline-num-layers (uneven stages),
 * --use-tp-pp-dp-mapping (rank order tp-pp-dp) and --save-interval (the
 * checkpoint interval in steps).  Space-separated; caller frees *out.
 */
enum dtplan_err dtplan_launch_megatron_args(const struct dtplan_plan *p, char **out,
					    struct dtplan_error *err);

/* NeMo's Hydra overrides for p (megatron_gpt_config.yaml keys; "++" for keys
 * that file lacks).  Space-separated; caller frees *out. */
enum dtplan_err dtplan_launch_nemo_overrides(const struct dtplan_plan *p, char **out,
					     struct dtplan_error *err);

/*
 * Megatron-Bridge's (NeMo 2's) ConfigContainer overrides for p, KEY=VALUE,
 * every key a field of its config dataclasses (struct mode): model.* the
 * split, sequence parallelism, fp8, interleaving, uneven stages and
 * recomputation; dataset.seq_length; train.micro_batch_size and
 * global_batch_size; ddp.* and optimizer.* the gradients' dtype, the
 * distributed optimizer, Megatron-FSDP and offload; checkpoint.* its format
 * and interval; dist.use_tp_pp_dp_mapping.  DTPLAN_ERR_UNSUPPORTED where
 * Bridge cannot run the plan as it is (Megatron-FSDP with tp-pp-dp, bf16
 * moments).  Caller frees *out.
 */
enum dtplan_err dtplan_launch_megatron_bridge_overrides(const struct dtplan_plan *p, char **out,
							struct dtplan_error *err);

/*
 * torchtitan's options for p (torchtitan/config/configs.py,
 * ParallelismConfig and TrainingConfig; the activation-checkpoint
 * subcommand last): the DP, TP, CP, PP and EP degrees, FSDP2's resharding,
 * the pipeline schedule and its split, the batches in tokens, the
 * checkpoint interval.  DTPLAN_ERR_UNSUPPORTED, err saying why, when
 * torchtitan cannot run the plan as it is (rank order tp-pp-dp, ZeRO-1,
 * offload, EP with TP, DualPipe, fp8, bf16 moments, selective or fine
 * recomputation, stages its split cannot make).  Caller frees *out.
 */
enum dtplan_err dtplan_launch_torchtitan_args(const struct dtplan_plan *p, char **out,
					      struct dtplan_error *err);

/* Why DeepSpeed would refuse p's fragment (ZeRO-2/3 with its pipeline
 * engine, ZeRO-3 with MoE layers: a plan of another framework), NULL when
 * it runs it.  A static string. */
const char *dtplan_launch_deepspeed_unsupported(const struct dtplan_plan *p);

/* A DeepSpeed configuration fragment (JSON text): train_batch_size,
 * train_micro_batch_size_per_gpu, gradient_accumulation_steps,
 * zero_optimization.stage, bf16.enabled.  Caller frees *out. */
enum dtplan_err dtplan_launch_deepspeed_config(const struct dtplan_plan *p, char **out,
					       struct dtplan_error *err);

/*
 * The hostfile of p: one line per rank, the node of that rank, for
 * SLURM_HOSTFILE with srun -m arbitrary (then SLURM_PROCID is the plan's
 * rank).  DTPLAN_ERR_INVAL when p places no ranks.  Caller frees *out.
 */
enum dtplan_err dtplan_launch_hostfile(const struct dtplan_plan *p, char **out,
				       struct dtplan_error *err);

/*
 * True when torchrun's static rendezvous numbers p's ranks as p does: every
 * node holds the same count of consecutive ranks, node by node in plan order
 * (rank = node rank x nproc_per_node + local rank).  *nnodes and
 * *nproc_per_node receive the counts (NULL allowed).
 */
bool dtplan_launch_torchrun(const struct dtplan_plan *p, int *nnodes, int *nproc_per_node);

/*
 * Job-wide launch variables, appended to e: DT_MEGATRON_ARGS,
 * DT_NEMO_OVERRIDES, DT_TORCHTITAN_ARGS and DT_MEGATRON_BRIDGE_OVERRIDES
 * (where the framework can run the plan), with dtplan_launch_torchrun() PET_NNODES,
 * PET_NPROC_PER_NODE, PET_RDZV_BACKEND=static and (when known)
 * PET_MASTER_ADDR, PET_MASTER_PORT, and DTPLAN_HOSTFILE,
 * DTPLAN_DEEPSPEED_CONFIG, DTPLAN_SVG for the files in l (NULL allowed).
 */
enum dtplan_err dtplan_launch_env(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				  struct dtplan_env *e, struct dtplan_error *err);

/* What a user adds to the launch line, in one line for the job log (no
 * prefix, no newline).  Caller frees *out. */
enum dtplan_err dtplan_launch_hint(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				   char **out, struct dtplan_error *err);

/* Plan -> the readable block for people and the job log.  Caller frees. */
enum dtplan_err dtplan_plan_render_text(const struct dtplan_plan *p, char **out,
					struct dtplan_error *err);

/* Plan -> SVG picture of racks, nodes and GPUs.  Caller frees. */
enum dtplan_err dtplan_plan_render_svg(const struct dtplan_plan *p, char **out,
				       struct dtplan_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_LAUNCH_H */
