/*
 * sweep_drive.h - the sweep driver: every (model, hardware) block of a sweep, each over its
 * TP x batch x context (or load) axes, evaluated by the core (sweep.h) and streamed row by
 * row to a sink. Models, hardware and engines come through a cache (cache.h); a calibration
 * is a file for one of the swept GPUs or a folder of <hw-id>.json files. Shared by
 * `llmstep sweep`, `llmstep plot sweep|serving`, `llmstep bench --sweep` and llmstep_sweep.
 */
#ifndef SIM_SWEEP_DRIVE_H
#define SIM_SWEEP_DRIVE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "deploy.h"
#include "engine.h"
#include "status.h"
#include "sweep.h"

#define SIM_SWEEP_MAX_NAMES 32

typedef struct sim_sweep_opts {
    const char *models[SIM_SWEEP_MAX_NAMES];
    size_t n_models;
    const char *hws[SIM_SWEEP_MAX_NAMES];
    size_t n_hws;
    sim_sweep_axes axes; /* TP, batch, context values (caller-owned arrays) */
    /* Pipeline stages, crossed with the TPs (outermost); n_pp 0: PP 1 only. Rows of a layout
     * the model or the nodes refuse are bad_tp (docs/model.md, "Pipeline parallelism"). */
    const int64_t *pp;
    size_t n_pp;
    /* Data-parallel ranks, crossed inside PP (n_dp 0: DP 1 only), and expert parallelism for
     * every row (docs/model.md, "Expert and data parallelism"); a layout the model refuses
     * (experts that do not divide over DP x TP, EP on a dense model, DP with PP) is bad_tp. */
    const int64_t *dp;
    size_t n_dp;
    /* Expert parallelism off (0) and on (1), crossed inside DP (n_ep 0: off only). */
    const int *eps;
    size_t n_ep;
    sim_sweep_kind kind;
    int64_t prompt_tokens, output_tokens; /* offline and serving */
    /* Serving: closed loop over axes.batch (concurrency), or open loop over rates when
     * n_rates > 0; the rest of the workload as for `llmstep serve`. */
    const double *rates; /* requests/s (caller-owned) */
    size_t n_rates;
    int64_t num_requests; /* measured per point; 0: closed 10 x concurrency, open 1000 */
    double range_ratio, burstiness;
    uint64_t seed;
    int64_t prefix_tokens, distinct_prompts; /* serving: shared prefixes (sim_workload_spec) */
    /* Serving: speculative decoding (method SIM_SPEC_NONE: off), resolved at each TP
     * (sim_spec_setup); spec_model names method draft's model. */
    sim_spec spec;
    const char *spec_model;
    /* Serving: each point simulated with seeds seed .. seed + n_seeds - 1 and merged
     * (sim_sweep_serving_merge: mean statistics, SLO judged on the worst seed); 0 or 1: one. */
    int64_t n_seeds;
    const char *calibration; /* FILE (one hardware) or DIR of <hw-id>.json; NULL */
    const char *calib_opt;   /* how messages name the calibration option ("--calibration") */
    const char *engine;      /* NULL: each block's calibration's, else vllm-v1 (sim_deploy_open) */
    const char *dtype, *kv_dtype;
    sim_sched_cfg sched;
    sim_sweep_slo slo;
    double gpu_hour_usd;                         /* <= 0: no price */
    double gpu_hour_usd_hw[SIM_SWEEP_MAX_NAMES]; /* per hws[i] when > 0; else gpu_hour_usd */
    int host_time; /* 1: add the engine's host time per step (default) */
    /* Serving: threads that simulate a TP's points together (0 or 1: one, the caller's; at
     * most SIM_SWEEP_MAX_JOBS). The rows and their order do not depend on it. */
    int jobs;
} sim_sweep_opts;

#define SIM_SWEEP_MAX_JOBS 256

/* Serving points a thread simulates before the rows done so far go to the sink (which may stop
 * the sweep): with jobs > 1 a chunk is SIM_SWEEP_JOB_CHUNK x jobs points in row order; with one
 * thread it is one point (each row as it is computed). */
#define SIM_SWEEP_JOB_CHUNK 8

/* The values an axis of a sweep may take (`llmstep sweep` and llmstep_sweep): TP 1 to
 * SIM_SWEEP_MAX_TP; batch (serving: concurrency) 1 to sim_sweep_batch_max(kind); context
 * sim_sweep_context_min(kind) to SIM_SWEEP_MAX_CONTEXT. */
#define SIM_SWEEP_MAX_TP      4096
#define SIM_SWEEP_MAX_CONTEXT (INT64_C(1) << 30)
int64_t sim_sweep_batch_max(sim_sweep_kind kind);
int64_t sim_sweep_context_min(sim_sweep_kind kind);

/*
 * The seeds a planning answer (--best, --pareto on a serving sweep with a random workload)
 * judges each point over by default. A point's percentile wobbles from seed to seed (Qwen3-32B
 * TP 2 at 64 clients: TPOT p90 49.3-50.2 ms over seeds 0-9, about a 50 ms SLO); with the SLO
 * required at every seed, 5 seeds still picked that point in a third of disjoint seed windows,
 * 20 in none of six (docs/serving.md, "Workloads: lengths, seeds and lockstep").
 */
#define SIM_SWEEP_PLANNING_SEEDS 20

/* The seeds a serving sweep takes when none are given: SIM_SWEEP_PLANNING_SEEDS for a planning
 * answer (planning: --best or --pareto) when the workload is random (an open loop, or lengths
 * spread by range_ratio as given, -1 the default spread), else 1. `llmstep sweep` and the web
 * planner (which names the seeds in the command it shows) both ask here. */
static inline int64_t sim_sweep_default_seeds(int planning, int open_loop, double range_ratio)
{
    return planning && (open_loop || sim_workload_range_ratio(range_ratio) > 0.0)
               ? SIM_SWEEP_PLANNING_SEEDS
               : 1;
}

/* Defaults: decode, no engine named (each block takes its calibration's, else vllm-v1, as
 * every command: sim_deploy_open), host time on, no calibration, no SLO, no price. */
void sim_sweep_opts_init(sim_sweep_opts *o);

/* One (model, hardware) block of rows. */
typedef struct sim_sweep_block {
    const char *model;      /* model id */
    const char *hw;         /* hardware id */
    const char *calib_path; /* calibration applied, or NULL (uncalibrated) */
    const sim_calib *cal;   /* that calibration (its band: sim_calib_band_get), or NULL */
    double gpu_hour_usd;    /* price of one GPU-hour of this hardware; <= 0: none */
    double alpha, beta_s;
    size_t model_index, hw_index; /* of model and hw in the options' models and hws */
    const char *engine;           /* the engine profile's id the block ran */
    /* A calibration of the folder given, fitted for this GPU with another engine (the block
     * runs uncalibrated: say so), or NULL. */
    const char *calib_other_engine;
} sim_sweep_block;

/* Receives the rows in sweep order; a non-zero return stops the sweep (see sim_sweep_drive). */
typedef struct sim_sweep_sink {
    void *ctx;
    int (*begin)(void *ctx, const sim_sweep_block *b); /* may be NULL */
    int (*row)(void *ctx, const sim_sweep_block *b, const sim_sweep_row *r);
    int (*end)(void *ctx, const sim_sweep_block *b); /* may be NULL */
} sim_sweep_sink;

/*
 * Runs the sweep: every name loads (and a calibration file names a swept GPU) before the
 * first row; a calibration file is read once. A serving sweep whose scheduler leaves the
 * usage context unset takes the server's, as `llmstep serve`. Returns SIM_OK with *stopped 0 when
 * every row went to the sink, SIM_OK with *stopped set to the sink's non-zero return when it
 * stopped the sweep, or a failure with err set (the loaders' messages; "<model path>: ..." for a
 * scheduler setting the engine refuses; the serving simulation's).
 */
sim_status sim_sweep_drive(sim_cache *c, const sim_sweep_opts *o, const sim_sweep_sink *sink,
                           int *stopped, struct sim_err *err);

#endif
