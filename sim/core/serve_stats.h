/*
 * serve_stats.h - the latency statistics of served requests, as vllm bench serve
 * reports them: time to first token (TTFT), time per output token (TPOT),
 * inter-token latency (ITL) and end-to-end latency, each as a mean and the
 * 50th, 90th and 99th percentiles (numpy.percentile's linear interpolation),
 * with throughput and goodput under optional TTFT and TPOT objectives.
 * A simulation (sched_v1.h) fills the requests' times and the run-length encoded
 * ITL list. Pure: no I/O, no allocation; the caller owns every array.
 */
#ifndef SIM_SERVE_STATS_H
#define SIM_SERVE_STATS_H

#include <stdint.h>

#include "status.h"
#include "workload.h"

/* Inter-token latencies, run-length encoded: count tokens had latency itl_s. */
typedef struct sim_itl_entry {
    double itl_s;
    double count;
} sim_itl_entry;

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
    sim_dist ttft_s;   /* first token - arrival, + client_path_s */
    sim_dist tpot_s;   /* (finish - first token) / (output - 1), requests with output > 1 */
    sim_dist itl_s;    /* time between consecutive tokens of a request */
    sim_dist e2e_s;    /* finish - arrival, + client_path_s */
    sim_dist queue_s;  /* first scheduled - arrival: the part of TTFT spent waiting */
    double duration_s; /* last finish - first arrival, + client_path_s */
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
 * applied. client_path_s (>= 0): the time each request spends outside the engine,
 * before it arrives and after its tokens leave (docs/serving.md, "The client path"),
 * added to every TTFT and E2E (so to their SLO test), not to TPOT or ITL. scratch: n
 * doubles. Reorders itl in place. Returns SIM_EINVAL when n < 1 or a request was not
 * served.
 */
sim_status sim_serve_stats_compute(const sim_request *req, int64_t n, sim_itl_entry *itl,
                                   int64_t n_itl, double slo_ttft_s, double slo_tpot_s,
                                   double client_path_s, double *scratch,
                                   sim_serve_stats *out /* OUT */);

/*
 * TTFT under queueing (docs/calibration.md, "Regimes"): 1 when the requests' mean wait before
 * their first step is at least SIM_TTFT_QUEUED_FRAC of their mean TTFT, so that the TTFT is
 * mostly time in the waiting queue (a load above what the engine drains) rather than the
 * prefill itself; its error then grows with the throughput's error and the band of such
 * runs is recorded apart ("ttft_queued"). 0 otherwise, and for stats with no requests.
 */
#define SIM_TTFT_QUEUED_FRAC 0.5
int sim_serve_ttft_queued(const sim_serve_stats *st);

/* The same rule on the two means (seconds): runs merged over seeds are judged on theirs. */
int sim_ttft_queued_means(double queue_mean_s, double ttft_mean_s);

/* One statistic of the stats, seconds. */
double sim_serve_stats_metric(const sim_serve_stats *st, sim_serve_metric m);

#endif
