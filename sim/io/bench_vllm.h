/*
 * bench_vllm.h - the result file of `vllm bench serve --save-result` (and of the
 * benchmarks/benchmark_serving.py it replaced), read into what a measurement row needs: the
 * traffic (request rate, burstiness, concurrency cap, requests), the lengths, and the mean,
 * median, p90 and p99 of TTFT, TPOT and E2EL. The keys and units are those that
 * vllm/benchmarks/serve.py writes (vllm-project/vllm at commit 009e6d4a, main_async and
 * benchmark): times in milliseconds as mean_ttft_ms, median_ttft_ms, p99_ttft_ms...
 * (percentiles from --metric-percentiles, "p" + the number), request_rate a number or "inf",
 * max_concurrency an integer or null, and with --save-detailed the per-request input_lens and
 * output_lens. Other keys (date, backend, label, metadata KEY=VALUE pairs, texts, errors...)
 * are not read.
 */
#ifndef SIM_BENCH_VLLM_H
#define SIM_BENCH_VLLM_H

#include <stdint.h>

#include "status.h"

/* The statistics a measurement row can hold (MEASUREMENTS.md "serving": ttft, tpot, e2e). */
enum { SIM_VB_TTFT, SIM_VB_TPOT, SIM_VB_E2E, SIM_VB_FAMILIES };
enum { SIM_VB_MEAN, SIM_VB_P50, SIM_VB_P90, SIM_VB_P99, SIM_VB_STATS };

typedef struct sim_vllm_serve {
    char model_id[256];      /* as the file names it ("" when absent) */
    int64_t num_prompts;     /* requests the run was asked to send */
    int64_t completed;       /* requests that succeeded */
    int64_t failed;          /* 0 when the file has no "failed" (older versions) */
    int rate_inf;            /* request_rate "inf": every request sent at once */
    double request_rate;     /* requests/s when not rate_inf */
    double burstiness;       /* gamma shape of the inter-arrival times (1 when absent) */
    int64_t max_concurrency; /* -1: null or absent */
    int ramp_up;             /* the file has a ramp_up_strategy */
    int64_t total_input_tokens, total_output_tokens;
    /* Per-request lengths (input_lens, output_lens, with --save-detailed): n_lens of them,
     * 0 when absent; their extremes. */
    int64_t n_lens;
    int64_t in_min, in_max, out_min, out_max;
    double stat_s[SIM_VB_FAMILIES][SIM_VB_STATS]; /* seconds */
    int has[SIM_VB_FAMILIES][SIM_VB_STATS];
} sim_vllm_serve;

/*
 * Reads path. SIM_EIO when it cannot be read, SIM_EPARSE when it is not JSON, SIM_EINVAL for
 * a field of the wrong type or range (err: file:line:col and the field), and for a file with
 * no statistic a row can hold.
 */
sim_status sim_vllm_serve_load(const char *path, sim_vllm_serve *out /* OUT */,
                               struct sim_err *err /* OUT */);

/*
 * The file of `vllm bench latency --output-json` (vllm/benchmarks/latency.py, vllm-project/vllm
 * at 00cae075): {"avg_latency": s, "std_latency": s, "latencies": [s, ...], "percentiles":
 * {"10": s, ...}}, seconds of whole LLM.generate() calls. It does not say the batch or the
 * lengths. *avg_s gets avg_latency (checked against the mean of latencies when they are
 * there, 1e-6 relative), *n_iters the number of latencies (0 when absent). Errors as
 * sim_vllm_serve_load.
 */
sim_status sim_vllm_latency_load(const char *path, double *avg_s /* OUT */,
                                 int64_t *n_iters /* OUT */, struct sim_err *err /* OUT */);

/*
 * The file of `vllm bench throughput --output-json` (vllm/benchmarks/throughput.py main,
 * vllm-project/vllm at 02028314): {"elapsed_time": s, "num_requests": n, "total_num_tokens":
 * prompt + output tokens, "requests_per_second", "tokens_per_second"}: one LLM.generate() call
 * over every request. requests_per_second and tokens_per_second, when present, are checked
 * against the others (1e-6 relative). Errors as sim_vllm_serve_load.
 */
typedef struct sim_vllm_throughput {
    double elapsed_s;
    int64_t num_requests, total_tokens;
} sim_vllm_throughput;
sim_status sim_vllm_throughput_load(const char *path, sim_vllm_throughput *out /* OUT */,
                                    struct sim_err *err /* OUT */);

#endif
