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
#include "spec.h"
#include "model.h"
#include "sched_v1.h"
#include "setup.h"
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
 * or whole nodes) whose engine starts with the other settings of su->run: fewest GPUs, then
 * at equal count the largest TP
 * within one node, then the smallest TP across nodes. 1 and *tp_out, *pp_out; 0 if none
 * of up to SIM_DEPLOY_MAX_LAYOUT_GPUS GPUs fits.
 */
int sim_deploy_smallest_layout(const sim_setup *su, int64_t *tp_out, int64_t *pp_out);

/* Smallest TP of 1, 2, 4, ... up to n_gpus_per_node that is legal and fits (the other
 * settings of su->run); -1 if none. */
int64_t sim_deploy_smallest_tp(const sim_setup *su);

/* Largest max_model_len (a multiple of su->sched's block size, or the model's limit) at
 * which the engine starts at su->run->tp with the other options of sc; 0 when none does. */
int64_t sim_deploy_largest_len(const sim_setup *su, const sim_sched_cfg *sc);

/*
 * SIM_ERANGE when mem (su's memory budget) does not fit, with a message saying by how much,
 * the smallest TP that fits and the longest max_model_len that fits at this TP; hint is
 * appended (e.g. " (--ignore-memory to go on)").
 */
sim_status sim_deploy_check_memory(const sim_setup *su, const sim_sched_cfg *sc,
                                   const sim_memory *mem, const char *who, const char *hint,
                                   struct sim_err *err);

/*
 * The engine a run uses: engine when given, else the one cal was fitted with (its engine,
 * unless empty or "none"; cal may be NULL), else def. *cal_engine (may be NULL) gets the
 * calibration's engine or NULL. A given engine other than the calibration's is SIM_EINVAL:
 * "<who><opt> E, but <cal_path> was fitted with engine F" (opt: "--engine" or "engine").
 */
sim_status sim_deploy_pick_engine(const char *engine, const sim_calib *cal, const char *cal_path,
                                  const char *def, const char *who, const char *opt,
                                  const char **out, const char **cal_engine, struct sim_err *err);

/*
 * The calibration a deployment on hardware hw_id uses, from name (NULL: none):
 *  - a folder: its *.json files are calibrations; the one of hw_id fitted with engine (when
 *    named), else the only one of hw_id, else the one fitted with def_engine. None of hw_id:
 *    *out and *path NULL (uncalibrated). Some of hw_id but none for the engine: *out NULL and
 *    *path one of them (uncalibrated; callers say so). Several for the engine: SIM_EINVAL;
 *  - else a file path or a calibration id (calibrations/<id>.json of the data folder), which
 *    must name hw_id ("<name>: hardware: calibration is for 'X', not 'Y'").
 * *path: the file's path (owned by the cache), or NULL.
 */
sim_status sim_deploy_find_calib(sim_cache *c, const char *name, const char *hw_id,
                                 const char *engine, const char *def_engine, const sim_calib **out,
                                 const char **path, struct sim_err *err);

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
    /* Prefix of the messages about a setting ("predict: "; NULL: none). */
    const char *who;
    /* 1: refuse a deployment whose engine would not start (sim_deploy_check_memory, with
     * memory_hint appended to its message, e.g. " (--ignore-memory to go on)"), and
     * steps whose KV cache does not fit (sim_deploy_step). 0: --ignore-memory. */
    int check_memory;
    const char *memory_hint;
    /* Speculative decoding (spec.h): NULL, or the method, k and acceptance rates to resolve
     * for this deployment (the drafter is derived); spec_model names the draft model of
     * method draft (an id or path). */
    const sim_spec *spec;
    const char *spec_model;
} sim_deploy_in;

/* An opened deployment: the loaded inputs (owned by the cache) and the resolved settings. */
typedef struct sim_deployment {
    const sim_model *m;
    const sim_hw *hw;
    const sim_calib *cal; /* NULL without a calibration */
    const char *cal_path; /* its file (owned by the cache), or NULL */
    /* Without a calibration: a file of the folder given that is fitted for this GPU with
     * another engine (so the deployment is uncalibrated: say so), or NULL. */
    const char *cal_other_engine;
    int cal_other_class;    /* 1: cal's figures were fitted on other classes of model than m:
                               hw is the profile as it is, alpha/beta cal's alpha_beta_only */
    const char *cal_engine; /* the engine the calibration was fitted with, or NULL */
    sim_engine e;           /* a copy: no_host changes it */
    const char *model_path;
    const char *hw_path; /* the profile's file (owned by the cache), or the name given */
    sim_run_cfg cfg;
    sim_sched_cfg sc;
    sim_sched_resolved s;
    sim_memory mem;
    int check_memory;        /* as given in sim_deploy_in */
    const char *memory_hint; /* likewise */
    int bad_option; /* after a failure: 1 when a setting (engine, dtype) is at fault, not a file */
    sim_spec spec;  /* speculative decoding; cfg.spec points here when it is on */
} sim_deployment;

/*
 * Speculative decoding in (method, k, acceptance) for deployment su, into out: refused with a
 * message on the V0 engine, with pipeline stages, and on models with sliding-window layers
 * under the hybrid KV-cache manager; the drafter resolved at su's TP and dtypes (draft: the
 * draft model of method draft, else NULL); a draft model must hold max_model_len positions.
 * Every path (serve, sweep points at each TP, the library) goes through here.
 */
sim_status sim_spec_setup(const sim_setup *su, const sim_spec *in, const sim_model *draft,
                          sim_spec *out, struct sim_err *err);

/* After a sim_deployment is copied: its cfg.spec points into the copy. */
static inline void sim_deployment_rebase(sim_deployment *d)
{
    d->cfg.spec = d->spec.method != SIM_SPEC_NONE ? &d->spec : NULL;
}

/*
 * d's band for family at level_pct. SIM_EINVAL with the reason when there is none: an
 * uncalibrated deployment, a calibration without a band (made with --no-band or before
 * bands), no rows of that family among its training rows, or a level that is not 10 to 100 in
 * steps of 10.
 */
sim_status sim_deploy_band(const sim_deployment *d, int family, int level_pct,
                           sim_pred_band *out /* OUT */, struct sim_err *err /* OUT */);
/* The same for a calibration cal (NULL: uncalibrated) read from cal_path (NULL: named by its
 * hardware), as a sweep's blocks hold it. */
sim_status sim_calib_band_get(const sim_calib *cal, const char *cal_path, int family, int level_pct,
                              sim_pred_band *out /* OUT */, struct sim_err *err /* OUT */);

/* The band family of one step: SIM_BAND_DECODE when every group decodes (one new token after
 * cached ones), SIM_BAND_PREFILL when every group is a whole prompt (none cached), else
 * SIM_BAND_STEP. sim_band_family_join folds one more group into a family so far (-1: none
 * yet); the library folds its groups through it. */
int sim_step_band_family(const sim_step *st);
int sim_band_family_join(int family, const sim_group *g);

/* The resolved inputs of d as one sim_setup (pointers into d: valid while d is). */
static inline sim_setup sim_deployment_setup(const sim_deployment *d)
{
    return (sim_setup){&d->e, d->m, d->hw, &d->cfg, &d->s};
}

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

/*
 * One line for an uncalibrated deployment of d: the shipped calibration of its GPU (for its
 * engine, else any: "calibrations/ID.json fits h100-sxm for vllm-v1: --calibration ID"), else
 * its known uncalibrated error (calibrations/uncalibrated/known-errors.json), else that none
 * is known. Into buf (cap bytes); the data folder is c's.
 */
void sim_deploy_uncalibrated_hint(sim_cache *c, const sim_deployment *d, char *buf, size_t cap);

/*
 * 1 when hardware figure f can enter the time of step st (NULL: any step) of d's model under
 * its run configuration, from what each family of figures prices (docs/hwprofile.md): fp8
 * figures only with fp8 weights or KV cache, fp8-block and fp4 ones only with those weight
 * formats, MoE ones only for models with experts, prefill and decode attention ones only for
 * steps with such groups, the link only at TP > 1, the inter-node fabric only across nodes;
 * the others always. Commands note defaulted figures only for those (all with --verbose).
 */
int sim_deploy_field_relevant(const sim_deployment *d, sim_hw_field f, const sim_step *st);

/* One step of an opened deployment, as every command, the library and Python time it. */
typedef struct sim_deploy_step_out {
    sim_step rank;      /* one DP rank's share of the step (the busiest rank's) */
    sim_step_cost cost; /* its cost; cost.step_s = alpha x roofline + beta_s (GPU time) */
    double host_s;      /* the engine's host time of the step */
    double wall_s;      /* sim_engine_step_wall_s: GPU + host, or their maximum when async */
    int no_fit;         /* after SIM_ERANGE: 1 when the memory check refused the step */
} sim_deploy_step_out;

/*
 * Times step st on d: each group's sequences are dealt to the DP ranks (the busiest rank's
 * share), the step is checked against the model ("<model path>: ..."), and, when d checks
 * memory, against the KV cache and max_num_seqs (sim_capacity_step_check; SIM_ERANGE,
 * "<who>the step does not fit: ..." with d's memory hint).
 */
sim_status sim_deploy_step(const sim_deployment *d, const sim_step *st, const char *who,
                           sim_deploy_step_out *out, struct sim_err *err);

/*
 * The spread of a generated workload's lengths when none is given (range_ratio < 0): each
 * prompt and output length uniform in [L(1 - r), L(1 + r)] with r = 0.1. Benchmark clients
 * do not send identical requests in lockstep: InferenceX's client (the 2026 serving rows of
 * ../shared/data) draws lengths uniform in [0.8 L, L], +-11% about their mean; a fixed length
 * makes a closed loop's clients finish and return together forever, an artifact a planner
 * must not hinge on (docs/serving.md, "Workloads"). --range-ratio 0 asks for strict lockstep.
 */
#define SIM_WORKLOAD_RANGE_RATIO_DEFAULT 0.1
static inline double sim_workload_range_ratio(double given)
{
    return given < 0.0 ? SIM_WORKLOAD_RANGE_RATIO_DEFAULT : given;
}

/* A served workload: the requests and the simulation's scratch, all heap, owned. */
typedef struct sim_served {
    sim_request *req;
    int64_t n;           /* requests simulated, warm-up included */
    int64_t warmup;      /* the first warmup requests are left out of the statistics */
    int64_t concurrency; /* closed loop clients; 0 = open loop */
    int32_t *queue, *running, *agg_heap;
    sim_itl_entry *itl;
    int64_t itl_cap;
    double *scratch;
    int exact_steps; /* 1: every step through the scheduler (sim_serve_scratch.exact_steps) */
    sim_kv_block *prefix_blocks; /* prefix caching's pool, sized by sim_served_run when the */
    int32_t *prefix_buckets;     /* workload shares blocks (sim_serve_scratch.prefix_*) */
    int64_t prefix_cap;
} sim_served;

/* The shared-prefix fields of a workload (sim_workload_spec): each 0 or in range, not both,
 * neither for a trace (whose lines carry them). SIM_EINVAL with the message otherwise; every
 * path (serve, sweep, the library, measurement rows) checks through here. */
sim_status sim_workload_prefix_check(int64_t prefix_tokens, int64_t distinct_prompts, int trace,
                                     struct sim_err *err);

/*
 * Builds the requests of a workload: generated from spec (closed or Poisson/gamma) or read
 * from trace_path (spec->arrival == SIM_ARRIVAL_TRACE). SIM_EIO/SIM_EPARSE/SIM_EINVAL for
 * a bad trace, SIM_ENOMEM; sim_served_free releases what was built, also after a failure.
 * with_itl 0: no inter-token latency list (16 bytes per output token; the statistics' itl_s
 * stays zero), for callers that report TTFT, TPOT and E2E only (a sweep's rows).
 */
sim_status sim_served_prepare(sim_served *sv, const sim_workload_spec *spec, const char *trace_path,
                              int with_itl, struct sim_err *err);

/* Serves the prepared workload on deployment su; obs may be NULL. Messages read "<model> on
 * <hw> at TP n: ...". */
sim_status sim_served_run(const sim_setup *su, sim_served *sv, sim_serve_observer obs,
                          void *obs_ctx, sim_serve_result *res, struct sim_err *err);

/*
 * Disaggregated serving (docs/serving.md, "Disaggregated prefill and decode"). The link between
 * the pools: NVLink (link_bw_per_dir_bytes_per_s, no latency) when both pools are of one GPU
 * type and their n_gpus fit in one node of its profile, else the inter-node fabric
 * (bw_internode_per_gpu_bytes_per_s, the slower of the two profiles', and the longer
 * internode_latency_s); SIM_EINVAL when a profile lacks the figure.
 */
typedef struct sim_disagg_link {
    double bw_bytes_per_s; /* per GPU pair */
    double latency_s;
    int same_node;
} sim_disagg_link;
sim_status sim_disagg_link_of(const sim_hw *prefill_hw, const sim_hw *decode_hw, int64_t n_gpus,
                              sim_disagg_link *out, struct sim_err *err);
/* The KV transfer of tokens prompt tokens from a prefill instance at TP tp_p to a decode one at
 * tp_d: every layer's KV of the tokens (sim_model_kv_bytes_per_token at TP 1) over min(tp_p,
 * tp_d) GPU pairs at once, plus the link's latency. */
double sim_disagg_xfer_s(const sim_model *m, sim_dtype kv_dtype, int64_t tokens, int tp_p, int tp_d,
                         const sim_disagg_link *link);
/*
 * Serves the prepared open-loop workload sv on n_prefill prefill engines of p_su and n_decode
 * decode engines of d_su: request i prefills on instance i mod n_prefill (its prompt, one token
 * sampled); in the order the prefills end, requests go in turn to the decode instances, where
 * each arrives with the KV of its prompt but the last token, pulled in sim_disagg_xfer_s
 * (sched_v1.h, "Remote prefill"), then computes its last prompt token, samples its first
 * token and decodes. sv's requests get the decode instance's first-token and finish times
 * (TTFT and E2E from the original arrival) and the prefill instance's first scheduling; the
 * ITL list is the decode pool's. pres and dres: each pool's runs merged as DP ranks are;
 * *xfer_mean_s the mean transfer. A closed loop is refused.
 */
sim_status sim_disagg_run(const sim_setup *p_su, const sim_setup *d_su, int64_t n_prefill,
                          int64_t n_decode, const sim_disagg_link *link, sim_served *sv,
                          sim_serve_result *pres /* OUT */, sim_serve_result *dres /* OUT */,
                          double *xfer_mean_s /* OUT */, struct sim_err *err /* OUT */);

/* Statistics of the measured requests of a served workload under the SLOs (<= 0: none), with
 * hw's client path (sim_hw_client_path_s) in every TTFT and E2E. */
sim_status sim_served_stats(const sim_model *m, const sim_hw *hw, sim_served *sv,
                            const sim_serve_result *res, double slo_ttft_s, double slo_tpot_s,
                            sim_serve_stats *st, struct sim_err *err);

void sim_served_free(sim_served *sv);

#endif
