/*
 * sweep.h - one point of a configuration sweep (model, hardware, TP, batch,
 * context) and the figures derived from its predicted time, plus the order of
 * the points, the "a:b" range syntax, SLO filtering and the latency/throughput
 * Pareto frontier.
 *
 * A point is timed by the same code as `predict` and `latency`:
 *   decode:  one step of batch sequences decoding one token at context C
 *            time = alpha x roofline + beta_s + host(batch)      (= TPOT)
 *            tokens/s = batch / time
 *   prefill: one step prefilling batch prompts of C tokens
 *            time = alpha x roofline + beta_s + host(batch)      (= TTFT)
 *            tokens/s = batch x C / time                          (prompt tokens)
 *   offline: sim_batch_simulate() of batch prompts of L tokens generating O each
 *            time = the batch's latency; tokens/s = batch x O / time (output tokens)
 *            TPOT = decode time / decode steps; TTFT = prefill time (the last
 *            sequence's first token when nothing is preempted: an upper bound)
 *   serving: sim_serve_simulate() of a closed loop of `concurrency` clients or an open
 *            loop at `rate_per_s` (the caller simulates; sim_sweep_serving_set() turns
 *            the statistics into the row); TTFT, TPOT and time (E2E) are the
 *            percentile the SLOs are judged at (sim_sweep_slo.percentile, default p90);
 *            tokens/s = output tokens / duration of the measured requests
 * With dp data-parallel ranks (run->dp > 1) a decode, prefill or offline point's batch is the
 * total over the ranks: each rank runs ceil(batch / dp) of them (the busiest sets the time, as
 * `predict --dp`), the memory check is a rank's, and tokens/s counts the whole batch; a serving
 * point's workload is dealt to dp engines (sim_served_run).
 * And then, for every kind:
 *   tokens/s per GPU       = tokens/s / (tp x pp x dp)
 *   cost per million tokens = price per GPU-hour x tp x pp x dp / 3600 / (tokens/s) x 1e6
 * Memory uses the engine's model (memory.h) through capacity.h: a decode point
 * fits when batch <= sim_capacity_max_seqs(C + 1) (the new token's KV too), a
 * prefill point when batch <= sim_capacity_max_seqs(C), an offline point when
 * the simulation runs. Points that do not fit keep their time (what it would
 * be) and are marked. Pure: no I/O, no allocation; callers own every buffer.
 */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "hw.h"
#include "memory.h"
#include "model.h"
#include "sched_v0.h"
#include "sched_v1.h"
#include "status.h"
#include "step.h"

typedef enum sim_sweep_kind {
    SIM_SWEEP_DECODE = 0,
    SIM_SWEEP_PREFILL = 1,
    SIM_SWEEP_OFFLINE = 2,
    SIM_SWEEP_SERVING = 3,
    SIM_SWEEP_KIND_COUNT
} sim_sweep_kind;

/* Why a point does or does not run. XX(ENUM, "name") */
#define SIM_SWEEP_STATUS_MAP(XX)                                                                   \
    XX(OK, "ok")               /* fits */                                                          \
    XX(NO_MEMORY, "no_memory") /* the engine does not start: weights or one max-length sequence */ \
    XX(KV_FULL, "kv_full")     /* batch above the KV capacity at this context or max_num_seqs */   \
    XX(TOO_LONG, "too_long")   /* context above max_model_len (or the model's positions) */        \
    XX(BAD_TP, "bad_tp")       /* the model cannot be sharded over tp GPUs */                      \
    XX(IDLE_RANK, "idle_rank") /* a closed loop with fewer clients than DP ranks */

typedef enum sim_sweep_status {
#define XX(e, name) SIM_SWEEP_##e,
    SIM_SWEEP_STATUS_MAP(XX)
#undef XX
        SIM_SWEEP_STATUS_COUNT
} sim_sweep_status;

/* "decode", "prefill", "offline", "serving"; "ok", "kv_full", ... */
const char *sim_sweep_kind_name(sim_sweep_kind k);
const char *sim_sweep_status_name(sim_sweep_status s);
/* Parses a kind name; returns SIM_EINVAL for anything else. */
sim_status sim_sweep_kind_parse(const char *name, sim_sweep_kind *out /* OUT */);

/* One evaluated point. Figures that do not apply to the kind are NaN. */
typedef struct sim_sweep_row {
    sim_sweep_kind kind;
    int64_t tp;
    int64_t pp;             /* pipeline stages (1: none); GPUs = tp x pp x dp */
    int64_t dp;             /* data-parallel ranks (1: none): batch is the total over them */
    int ep;                 /* 1: expert parallelism */
    int64_t batch;          /* sequences */
    int64_t context_tokens; /* decode: cached tokens per sequence; prefill: prompt tokens */
    int64_t prompt_tokens;  /* offline: L; prefill: C; decode: -1 */
    int64_t output_tokens;  /* offline: O; else -1 */
    double time_s;          /* step time (decode, prefill) or batch latency (offline) */
    double tpot_s;          /* time per output token (decode, offline) */
    double ttft_s;          /* time to first token (prefill, offline) */
    double tokens_per_s;    /* all tp GPUs */
    double tokens_per_s_per_gpu;
    double cost_per_mtok_usd; /* NaN without a price */
    sim_bound bound;          /* of the step (offline: a decode step at the mean context) */
    sim_sweep_status status;
    int meets_slo; /* fits and every given SLO that applies holds */
    /* Serving only (-1 or NaN otherwise): the workload point and the simulated statistics
     * of the measured requests (serve_stats.h). batch is the concurrency of a closed loop. */
    int64_t concurrency;   /* closed loop clients; -1 for an open loop */
    double rate_per_s;     /* open loop mean request rate; NaN for a closed loop */
    int64_t n_requests;    /* requests measured */
    sim_dist ttft_dist_s;  /* time to first token: mean, p50, p90, p99 */
    sim_dist tpot_dist_s;  /* time per output token after the first */
    sim_dist e2e_dist_s;   /* arrival to last token */
    double requests_per_s; /* request throughput */
    int64_t preemptions;   /* recompute preemptions in the whole run */
    double kv_peak_frac;   /* peak KV-cache use, fraction of the pool */
    /* Serving over several workload seeds (sim_sweep_serving_merge): the seeds run, and the
     * range (max - min) over them of the judged TTFT and TPOT percentile; 1 and 0 otherwise. */
    int64_t n_seeds;
    double ttft_spread_s, tpot_spread_s;
    /* Serving: the mean wait from arrival to the first step (NaN otherwise), and whether the
     * TTFT is mostly that wait (sim_ttft_queued_means on the means; 0 otherwise): the band
     * family of its TTFT is then "ttft_queued". */
    double queue_mean_s;
    int ttft_queued;
    /* Serving: the prefix cache hit rate (sim_serve_prefix_hit_frac; over seeds the mean;
     * NaN otherwise). */
    double prefix_hit_frac;
} sim_sweep_row;

/* Service-level objectives; a value <= 0 means none. */
typedef struct sim_sweep_slo {
    double tpot_s;
    double ttft_s;
    int percentile; /* serving: the percentile of TTFT and TPOT judged, 50, 90 or 99 (0: 90) */
} sim_sweep_slo;

/* The TP, batch and context axes of a sweep (caller-owned arrays). */
typedef struct sim_sweep_axes {
    const int64_t *tp;
    size_t n_tp;
    const int64_t *batch;
    size_t n_batch;
    const int64_t *context;
    size_t n_context;
} sim_sweep_axes;

/* Points per (model, hardware): n_tp x n_batch x n_context. */
int64_t sim_sweep_count(const sim_sweep_axes *ax);

/*
 * The i-th point (0 <= i < sim_sweep_count) in sweep order: TP outermost, then
 * batch, then context innermost (the order of the command's flags).
 */
void sim_sweep_at(const sim_sweep_axes *ax, int64_t i, int64_t *tp /* OUT */,
                  int64_t *batch /* OUT */, int64_t *context /* OUT */);

/* The axes a sweep takes when they are not given (`llmstep sweep`, `plot`, the library's
 * llmstep_sweep_default_axis and Python): TPs, batch sizes (serving: concurrencies) and
 * contexts, as sim_sweep_parse_list specs. */
#define SIM_SWEEP_DEFAULT_TP      "1,2,4,8"
#define SIM_SWEEP_DEFAULT_BATCH   "1:256"
#define SIM_SWEEP_DEFAULT_CONTEXT "2048"

/*
 * Parses an axis: a comma-separated list of integers and ranges "a:b", where a
 * range is a, 2a, 4a, ... up to b (powers of two when a is one: "1:256"). Every
 * value must be in [min, max]. Fills up to cap values and sets *n; fails with
 * SIM_EINVAL (syntax), SIM_ERANGE (out of [min, max], a > b) or SIM_ENOMEM (more
 * than cap values), with a message.
 */
sim_status sim_sweep_parse_list(const char *spec, int64_t min, int64_t max, int64_t *out /* OUT */,
                                size_t cap, size_t *n /* OUT */, struct sim_err *err /* OUT */);

/* Everything a point needs besides its own coordinates; the caller fills it once per (model,
 * hardware, TP). sched and mem come from sim_sched_resolve() and sim_memory_compute() at
 * run->tp. tp_ok is 0 when the model cannot be sharded over run->tp (then only status is set). */
typedef struct sim_sweep_ctx {
    const sim_model *m;
    const sim_hw *hw;
    const sim_run_cfg *run; /* tp, dtypes, alpha and beta_s of the hardware's calibration */
    const sim_engine *e;    /* scheduler, memory and host time */
    const sim_sched_resolved *sched;
    const sim_memory *mem;
    int host_time; /* 1: add the engine's host time per step (as `latency` does) */
    int tp_ok;
} sim_sweep_ctx;

/* A decode step of batch sequences at context C. Fills every field but cost and SLO. */
void sim_sweep_decode(const sim_sweep_ctx *c, int64_t batch, int64_t context,
                      sim_sweep_row *out /* OUT */);

/* A prefill step of batch prompts of C tokens. Fills every field but cost and SLO. */
void sim_sweep_prefill(const sim_sweep_ctx *c, int64_t batch, int64_t prompt,
                       sim_sweep_row *out /* OUT */);

/*
 * An offline batch (sim_batch_simulate with the caller's scratch). When the
 * simulation refuses the batch, status says why and the times are NaN. Fills
 * every field but cost and SLO.
 */
void sim_sweep_offline(const sim_sweep_ctx *c, int64_t batch, int64_t prompt, int64_t output,
                       sim_batch_work *work, sim_sweep_row *out /* OUT */);

/*
 * Starts a serving point: its coordinates (concurrency >= 1 and rate NaN for a closed loop,
 * concurrency -1 and rate > 0 for an open loop), and its status before any simulation:
 * bad_tp, no_memory (the engine would not start), too_long (prompt + output above
 * max_model_len) or ok. Times are NaN until sim_sweep_serving_set().
 */
void sim_sweep_serving_init(const sim_sweep_ctx *c, int64_t concurrency, double rate_per_s,
                            int64_t prompt, int64_t output, sim_sweep_row *out /* OUT */);

/*
 * Fills a started serving row from the statistics of its simulation: the distributions,
 * ttft_s, tpot_s and time_s (E2E) at the percentile (50, 90 or 99; anything else: 90),
 * tokens/s = output tokens/s, per GPU = / tp, requests/s, preemptions and peak KV use.
 */
void sim_sweep_serving_set(sim_sweep_row *r, const sim_serve_stats *st, const sim_serve_result *res,
                           int percentile);

/* The percentile-p figure of a distribution: p50, p90 or p99 (anything else: p90). */
double sim_sweep_dist_at(const sim_dist *d, int percentile);

/* price x tp / 3600 / tokens_per_s x 1e6, USD per million tokens; NaN when price <= 0. */
/*
 * Folds one seed's serving row (one) into acc, the rows of seeds 0..k-1 already merged (k = 0:
 * acc becomes one). Statistics, throughputs and request counts: the mean over the seeds;
 * preemptions and KV peak: the largest; the judged percentiles ttft_s, tpot_s and time_s: the
 * worst seed's, so a point meets an SLO only when every seed meets it; the spreads: the range
 * of ttft_s and tpot_s over the seeds. A status other than ok from any seed is kept.
 */
void sim_sweep_serving_merge(sim_sweep_row *acc, const sim_sweep_row *one, int64_t k);

double sim_sweep_cost_per_mtok(double usd_per_gpu_hour, int64_t tp, double tokens_per_s);

/* Sets cost_per_mtok_usd and meets_slo: fits, and tpot <= slo.tpot_s and ttft <= slo.ttft_s for
 * each objective given whose figure the kind has (a decode point has no TTFT). */
void sim_sweep_finish(sim_sweep_row *r, const sim_sweep_slo *slo, double usd_per_gpu_hour);

/* 1 when ttft_s and tpot_s meet the objectives: a limit <= 0 is none, and a NaN figure (a
 * kind or a run without it, e.g. one-token outputs' TPOT) is not judged. */
int sim_sweep_slo_holds(const sim_sweep_slo *slo, double ttft_s, double tpot_s);

/* The latency a Pareto frontier trades against throughput: TTFT for prefill, else TPOT. */
double sim_sweep_latency_s(const sim_sweep_row *r);

/* 1 when a is a better --best choice than b: higher tokens/s per GPU, then lower latency. */
int sim_sweep_better(const sim_sweep_row *a, const sim_sweep_row *b);

/* A point for the frontier: lower latency and higher throughput are better. */
typedef struct sim_pareto_point {
    double latency_s;
    double throughput; /* tokens/s per GPU */
    int64_t id;        /* caller's index of the point */
} sim_pareto_point;

/*
 * Adds p to the frontier front[0..*n) kept in order of increasing latency (and
 * so decreasing throughput): p is dropped when a member is at least as good on
 * both axes (an equal point keeps the first), and members p dominates are
 * removed. Returns 1 when p joined, 0 when it was dominated, -1 when it would
 * join but the frontier already holds cap points (nothing changes). The result
 * does not depend on insertion order except among equal points.
 */
int sim_pareto_insert(sim_pareto_point *front, size_t *n, size_t cap, sim_pareto_point p);

#endif
