/*
 * serve.h - vLLM's V1 engine serving a workload, simulated request by request
 * and step by step, and the latency statistics of the simulated requests.
 *
 * The schedule follows vllm/v1/core/sched/scheduler.py (Scheduler.schedule, vLLM
 * 0.8-0.19; docs/engine.md cites the lines):
 *  - one token budget per step (max_num_batched_tokens);
 *  - running requests first, in admission order: each gets the tokens it has not
 *    computed yet (1 for a decode; the rest of its prompt, capped at
 *    long_prefill_token_threshold and at the budget, for a partial prefill);
 *  - a running request that finds too few free KV blocks preempts the last
 *    running request (recompute: its blocks are freed, its computed tokens
 *    reset, and it goes to the front of the waiting queue), until it fits or is
 *    itself the one preempted;
 *  - then, only if no request was preempted in this step, waiting requests in
 *    order while the budget, max_num_seqs and free blocks allow; a waiting prompt
 *    may be scheduled in part (chunked prefill is always on in V1);
 *  - a request samples a token in the step that computes its last known token;
 *    it leaves when it has output_tokens tokens, and its blocks are freed.
 * KV blocks are allocated as tokens arrive: a request holds
 * ceil(computed / block_size) blocks. One block of the pool is vLLM's null block.
 *
 * Time: a step takes sim_engine_step_wall_s(alpha x roofline + beta_s, host).
 * Requests that arrive during a step are seen by the next one; an idle engine
 * waits for the next arrival. Closed loop: `concurrency` clients each send their
 * next request when the previous one finishes. Pure: no I/O, no allocation; the
 * caller owns every array.
 */
#ifndef SIM_SERVE_H
#define SIM_SERVE_H

#include <stdint.h>

#include "engine.h"
#include "hw.h"
#include "model.h"
#include "status.h"
#include "step.h"
#include "workload.h"

/* Inter-token latencies, run-length encoded: count tokens had latency itl_s. */
typedef struct sim_itl_entry {
    double itl_s;
    double count;
} sim_itl_entry;

/* Caller-owned scratch: queue of n_requests + 1 ids, running list of n_requests ids, and
 * optionally (itl != NULL) room for itl_cap ITL entries; the sum of output_tokens is always
 * enough. */
typedef struct sim_serve_scratch {
    int32_t *queue;
    int32_t *running;
    sim_itl_entry *itl;
    int64_t itl_cap;
} sim_serve_scratch;

/* What one step did, for timelines. */
typedef struct sim_serve_step {
    double start_s;         /* when the step was scheduled */
    double wall_s;          /* its duration */
    double gpu_s;           /* alpha x roofline + beta_s */
    double host_s;          /* engine host time */
    int64_t n_seqs;         /* requests scheduled */
    int64_t n_prefill_seqs; /* of which prefilling (more than one token or not sampling) */
    int64_t n_tokens;       /* tokens scheduled */
    int64_t n_prefill_tokens;
    int64_t kv_used_blocks; /* after allocation */
    int64_t kv_blocks;      /* blocks in the pool */
    int64_t n_waiting;      /* arrived requests not running, after scheduling */
    int64_t n_preempted;    /* preemptions in this step */
} sim_serve_step;

/* Called after each step when given; ctx is the caller's. */
typedef void (*sim_serve_observer)(void *ctx, const sim_serve_step *step);

typedef struct sim_serve_result {
    double end_s;          /* last request's finish */
    double roofline_sum_s; /* sum of roofline step times */
    double host_sum_s;     /* sum of host times */
    double busy_s;         /* sum of step wall times */
    double prefill_s;      /* wall time of steps with prefill tokens */
    int64_t n_steps;
    int64_t n_prefill_steps;   /* steps with at least one prefill chunk */
    int64_t preemptions;       /* recompute preemptions */
    int64_t recomputed_tokens; /* tokens prefilled again after preemption */
    int64_t kv_blocks;         /* KV blocks per GPU */
    int64_t kv_capacity_tokens;
    int64_t peak_kv_blocks;
    double peak_kv_frac;
    int64_t queue_peak;   /* most arrived requests waiting at once */
    int64_t running_peak; /* most requests running at once */
    int64_t n_itl;        /* ITL entries written */
} sim_serve_result;

/* Default cap on steps of one simulation: a bug or an absurd workload stops with an error. */
#define SIM_SERVE_MAX_STEPS SIM_SIM_MAX_STEPS

/*
 * Serves the workload on the V1 schedule above. Fails with SIM_ERANGE and a
 * message when a request is malformed (lengths < 1, prompt + output beyond
 * max_model_len, open-loop arrivals not finite, negative or unsorted), when
 * the engine would not start (the weights, or one max_model_len sequence, do not
 * fit), or when the simulation exceeds SIM_SERVE_MAX_STEPS steps.
 */
sim_status sim_serve_simulate(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                              const sim_run_cfg *run, const sim_sched_resolved *s,
                              const sim_workload *w, sim_serve_scratch *scr, sim_serve_observer obs,
                              void *obs_ctx, sim_serve_result *out /* OUT */,
                              struct sim_err *err /* OUT */);

/* The serving statistics of MEASUREMENTS.md's `metric`. */
#define SIM_SERVE_METRICS(XX)                                                                      \
    XX(TTFT_MEAN, "ttft_mean")                                                                     \
    XX(TTFT_P50, "ttft_p50")                                                                       \
    XX(TTFT_P90, "ttft_p90")                                                                       \
    XX(TTFT_P99, "ttft_p99")                                                                       \
    XX(TPOT_MEAN, "tpot_mean")                                                                     \
    XX(TPOT_P50, "tpot_p50")                                                                       \
    XX(TPOT_P90, "tpot_p90")                                                                       \
    XX(TPOT_P99, "tpot_p99")                                                                       \
    XX(E2E_MEAN, "e2e_mean")                                                                       \
    XX(E2E_P50, "e2e_p50")                                                                         \
    XX(E2E_P90, "e2e_p90")                                                                         \
    XX(E2E_P99, "e2e_p99")

typedef enum sim_serve_metric {
#define XX(e, name) SIM_METRIC_##e,
    SIM_SERVE_METRICS(XX)
#undef XX
        SIM_METRIC_COUNT
} sim_serve_metric;

/* "ttft_mean", ...; "?" out of range. */
const char *sim_serve_metric_name(sim_serve_metric m);

/* Parses a metric name; SIM_EINVAL (and *out untouched) otherwise. */
sim_status sim_serve_metric_parse(const char *name, sim_serve_metric *out /* OUT */);

/* Mean and percentiles of a latency, seconds. */
typedef struct sim_dist {
    double mean, p50, p90, p99;
} sim_dist;

typedef struct sim_serve_stats {
    int64_t n_requests;
    sim_dist ttft_s;   /* first token - arrival */
    sim_dist tpot_s;   /* (finish - first token) / (output - 1), requests with output > 1 */
    sim_dist itl_s;    /* time between consecutive tokens of a request */
    sim_dist e2e_s;    /* finish - arrival */
    double duration_s; /* last finish - first arrival */
    double request_throughput_per_s; /* n_requests / duration */
    double output_tokens_per_s;      /* output tokens / duration */
    double total_tokens_per_s;       /* (prompt + output tokens) / duration */
    int64_t n_good;                  /* requests within both SLOs */
    double goodput_per_s;            /* n_good / duration */
} sim_serve_stats;

/*
 * Percentile p (0..100) of n sorted values by linear interpolation between
 * closest ranks (numpy.percentile's default, which vllm bench serve uses):
 * position p/100 x (n - 1). n >= 1.
 */
double sim_percentile_sorted(const double *sorted, int64_t n, double p);

/*
 * Statistics of served requests (their first_token_s and finish_s set). ITL
 * entries may be NULL (n_itl 0: ITL statistics are 0). An SLO <= 0 is not
 * applied. scratch: n doubles. Sorts itl in place. Returns SIM_EINVAL when
 * n < 1 or a request was not served.
 */
sim_status sim_serve_stats_compute(const sim_request *req, int64_t n, sim_itl_entry *itl,
                                   int64_t n_itl, double slo_ttft_s, double slo_tpot_s,
                                   double *scratch, sim_serve_stats *out /* OUT */);

/* One statistic of the stats, seconds. */
double sim_serve_stats_metric(const sim_serve_stats *st, sim_serve_metric m);

#endif
