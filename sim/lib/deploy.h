/*
 * deploy.h - the checks and defaults between loading files and simulating: the data folder
 * ids resolve in, dtype resolution, the node and memory checks with their messages, and a
 * served workload's requests and scratch. Shared by the public library (llmstep.h) and
 * the command-line tool, so both give the same answers and the same messages. Internal:
 * not installed.
 */
#ifndef SIM_DEPLOY_H
#define SIM_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "engine.h"
#include "hw.h"
#include "memory.h"
#include "model.h"
#include "sched_v1.h"
#include "status.h"
#include "step.h"

/* The engine profile a deployment uses when neither it nor its calibration names one: vLLM's
 * V1 engine (docs/engine.md). */
#define SIM_DEFAULT_ENGINE "vllm-v1"

/*
 * The folder holding models/, hwprofiles/, engines/ and calibrations/, written to out (cap
 * bytes, truncated to fit): $LLMSTEP_DATA_DIR when set; else share/llmstep next to the
 * installed binary or library (<prefix>/bin or <prefix>/lib[64] -> <prefix>/share/llmstep)
 * when it exists; else the configured install prefix's share/llmstep when it holds models/;
 * else the source tree the build came from. No state is kept between calls,
 * so threads may call it at once.
 */
void sim_deploy_find_data_dir(char *out, size_t cap);

/*
 * Resolves dtype_s and kv_s (NULL or "auto" = not given) for model m into cfg->dtype and
 * cfg->kv_dtype (see cli.h, cli_resolve_dtypes, for the rules). who prefixes messages.
 * SIM_EINVAL with a message on failure.
 */
sim_status sim_deploy_resolve_dtypes(const sim_model *m, const char *dtype_s, const char *kv_s,
                                     const char *who, sim_run_cfg *cfg, struct sim_err *err);

/* "awq-int4-g128" for a quantized model, else the dtype name ("bf16"). */
const char *sim_deploy_weight_format(const sim_model *m, const sim_run_cfg *cfg);

/* SIM_EINVAL for a TP above one node's n_gpus_per_node that is not a multiple of it ("<who>TP
 * n spans <hw> nodes of N GPUs but is not a multiple of N ..."). */
sim_status sim_deploy_check_tp_node(const sim_hw *hw, int64_t tp, const char *who,
                                    struct sim_err *err);

/* The node check above, pp in 1..SIM_PP_MAX and at most the model's layers, and with pp > 1
 * a TP below one node that divides it. SIM_EINVAL with the message prefixed by who. */
sim_status sim_deploy_check_layout(const sim_model *m, const sim_hw *hw, int64_t tp, int64_t pp,
                                   const char *who, struct sim_err *err);

/* The layouts sim_deploy_smallest_layout searches: up to this many GPUs (8 nodes of 8). */
#define SIM_DEPLOY_MAX_LAYOUT_GPUS 64

/*
 * Smallest TP x PP layout (TP a power of two, legal for the model and the nodes; one node
 * or whole nodes) whose engine starts with cfg's other settings: fewest GPUs, then at equal
 * count the largest TP
 * within one node, then the smallest TP across nodes. 1 and *tp_out, *pp_out; 0 if none
 * of up to SIM_DEPLOY_MAX_LAYOUT_GPUS GPUs fits.
 */
int sim_deploy_smallest_layout(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                               const sim_run_cfg *cfg, const sim_sched_resolved *s, int64_t *tp_out,
                               int64_t *pp_out);

/* Smallest TP of 1, 2, 4, ... up to n_gpus_per_node that is legal and fits; -1 if none. */
int64_t sim_deploy_smallest_tp(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                               const sim_run_cfg *cfg, const sim_sched_resolved *s);

/* Largest max_model_len (a multiple of the block size, or the model's limit) at which the
 * engine starts at cfg->tp with the other options of sc; 0 when none does. */
int64_t sim_deploy_largest_len(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                               const sim_run_cfg *cfg, const sim_sched_cfg *sc,
                               const sim_sched_resolved *s);

/*
 * SIM_ERANGE when mem does not fit, with a message saying by how much, the smallest TP
 * that fits and the longest max_model_len that fits at this TP; hint is appended (e.g.
 * " (--ignore-memory to go on)").
 */
sim_status sim_deploy_check_memory(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                                   const sim_run_cfg *cfg, const sim_sched_cfg *sc,
                                   const sim_sched_resolved *s, const sim_memory *mem,
                                   const char *who, const char *hint, struct sim_err *err);

/*
 * The engine a run uses: engine when given, else the one cal was fitted with (its engine,
 * unless empty or "none"; cal may be NULL), else def. *cal_engine (may be NULL) gets the
 * calibration's engine or NULL. A given engine other than the calibration's is SIM_EINVAL:
 * "<who><opt> E, but <cal_path> was fitted with engine F" (opt: "--engine" or "engine").
 */
sim_status sim_deploy_pick_engine(const char *engine, const sim_calib *cal, const char *cal_path,
                                  const char *def, const char *who, const char *opt,
                                  const char **out, const char **cal_engine, struct sim_err *err);

/* What to open: names as given (ids or paths) and settings. */
typedef struct sim_deploy_in {
    const char *model, *hw;
    /* NULL, or the hardware profile to use instead of loading hw (a calibrated or trial copy
     * that outlives the deployment; its id is checked against a calibration like hw's). */
    const sim_hw *hw_obj;
    /* The engine: engine when given, else the calibration's, else default_engine
     * (sim_deploy_pick_engine; engine_opt names the option in its message). */
    const char *engine, *default_engine, *engine_opt;
    /* NULL, or a calibration for hw: its alpha and beta_s replace alpha and beta_s, and its
     * fitted figures (if any) replace the profile's. */
    const char *calibration;
    const char *dtype, *kv_dtype; /* NULL or "auto": the defaults */
    int64_t tp;
    int64_t pp;          /* pipeline stages; 0 or 1: none */
    int64_t dp;          /* data-parallel ranks (--dp); 0 or 1: none */
    int ep;              /* 1: expert parallelism (--ep) */
    sim_sched_cfg sched; /* unset fields take the engine's defaults */
    sim_roofline_mode mode;
    sim_gemm_model gemm;
    double alpha, beta_s;
    int no_host; /* 1: the engine's host time is left out (set to 0) */
} sim_deploy_in;

/* An opened deployment: the loaded inputs (owned by the cache) and the resolved settings. */
typedef struct sim_deployment {
    const sim_model *m;
    const sim_hw *hw;
    const sim_calib *cal;   /* NULL without a calibration */
    int cal_other_class;    /* 1: cal's figures were fitted on other classes of model than m:
                               hw is the profile as it is, alpha/beta cal's alpha_beta_only */
    const char *cal_engine; /* the engine the calibration was fitted with, or NULL */
    sim_engine e;           /* a copy: no_host changes it */
    const char *model_path;
    sim_run_cfg cfg;
    sim_sched_cfg sc;
    sim_sched_resolved s;
    sim_memory mem;
    int bad_option; /* after a failure: 1 when a setting (engine, dtype) is at fault, not a file */
} sim_deployment;

/*
 * Loads (through the cache) and checks everything, in the order model, hardware,
 * calibration, engine choice, engine, dtypes, node size, TP and scheduler settings, and
 * resolves the engine's defaults and the memory budget, without judging whether it fits
 * (sim_deploy_check_memory does). Messages as the CLI prints them: the loaders', "<calib>:
 * hardware: calibration is for 'X', not 'Y'", the engine choice's, the dtype and node
 * checks', "<model path>: <problem>" for an illegal TP or scheduler setting.
 */
sim_status sim_deploy_open(sim_cache *c, const sim_deploy_in *in, sim_deployment *d,
                           struct sim_err *err);

/* A served workload: the requests and the simulation's scratch, all heap, owned. */
typedef struct sim_served {
    sim_request *req;
    int64_t n;           /* requests simulated, warm-up included */
    int64_t warmup;      /* the first warmup requests are left out of the statistics */
    int64_t concurrency; /* closed loop clients; 0 = open loop */
    int32_t *queue, *running;
    sim_itl_entry *itl;
    int64_t itl_cap;
    double *scratch;
} sim_served;

/*
 * Builds the requests of a workload: generated from spec (closed or Poisson/gamma) or read
 * from trace_path (spec->arrival == SIM_ARRIVAL_TRACE). SIM_EIO/SIM_EPARSE/SIM_EINVAL for
 * a bad trace, SIM_ENOMEM; sim_served_free releases what was built, also after a failure.
 */
sim_status sim_served_prepare(sim_served *sv, const sim_workload_spec *spec, const char *trace_path,
                              struct sim_err *err);

/* Serves the prepared workload; obs may be NULL. Messages read "<model> on <hw> at TP n: ...". */
sim_status sim_served_run(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                          const sim_run_cfg *cfg, const sim_sched_resolved *s, sim_served *sv,
                          sim_serve_observer obs, void *obs_ctx, sim_serve_result *res,
                          struct sim_err *err);

/* Statistics of the measured requests of a served workload under the SLOs (<= 0: none). */
sim_status sim_served_stats(const sim_model *m, const sim_hw *hw, sim_served *sv,
                            const sim_serve_result *res, double slo_ttft_s, double slo_tpot_s,
                            sim_serve_stats *st, struct sim_err *err);

void sim_served_free(sim_served *sv);

#endif
