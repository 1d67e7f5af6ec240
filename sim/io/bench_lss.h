/*
 * bench_lss.h - the per-request file of LLMServingSim's vLLM benchmark (casys-kaist/LLMServingSim,
 * bench/core/recorder.py write_requests): JSON Lines, one finished request a line,
 *   {"request_id": str, "input_toks": int, "output_toks": int, "arrival_time": s (epoch),
 *    "queued_ts": s, "scheduled_ts": s, "first_token_ts": s, "last_token_ts": s}
 * with vLLM's RequestStateStats timestamps (monotonic engine seconds). Its statistics are
 * LLMServingSim's own (bench/core/validate.py _bench_latencies, _bench_arrival_ts):
 *   TTFT = first_token_ts - a,  E2E = last_token_ts - a,
 *   TPOT = (last_token_ts - first_token_ts) / (output_toks - 1)   (requests of 2+ tokens),
 * where a is arrival_time when it lies within 1e5 s of both first_token_ts and last_token_ts
 * (one clock), else queued_ts (the engine's clock); mean, and the p50, p90 and p99 of
 * numpy.percentile (sim_percentile_sorted). The arrival pattern is arrival_time less the
 * first request's (queued_ts when a request has no arrival_time). Unknown keys are refused,
 * as in every project file.
 */
#ifndef SIM_BENCH_LSS_H
#define SIM_BENCH_LSS_H

#include <stdint.h>

#include "bench_vllm.h"
#include "status.h"

typedef struct sim_lss_run {
    int64_t n;               /* requests */
    double *arrival_s;       /* n: seconds after the first request's arrival (in file order) */
    int64_t *input, *output; /* n: tokens */
    double stat_s[SIM_VB_FAMILIES][SIM_VB_STATS]; /* seconds */
    int64_t n_tpot;                               /* requests of 2 or more output tokens (TPOT's) */
    int anchor_queued; /* 1: some request's TTFT was taken from queued_ts */
} sim_lss_run;

/*
 * Reads path (at most SIM_TRACE_MAX_REQUESTS lines). SIM_EIO when it cannot be read,
 * SIM_EPARSE for a line that is not JSON, SIM_EINVAL for a missing, misspelled or out-of-range
 * field (err: file:line:col and the field: token counts 1 to 2^24, timestamps finite and
 * non-negative, queued <= scheduled <= first token <= last token, first token after the
 * arrival), arrivals out of order, or an empty file; SIM_ENOMEM. *out is freed on failure.
 */
sim_status sim_lss_load(const char *path, sim_lss_run *out /* OUT */,
                        struct sim_err *err /* OUT */);
void sim_lss_free(sim_lss_run *r);

#endif
