/*
 * bench_aiperf.h - the summary file of NVIDIA's aiperf (profile_export_aiperf.json) and of
 * genai-perf, whose layout aiperf keeps (profile_export_genai_perf.json), read into what
 * serving measurement rows need.
 *
 * The layout, from ai-dynamo/aiperf at db4f6397 (aiperf/common/models/export_models.py
 * JsonExportData, aiperf/exporters/json_exporter.py; the metric definitions in
 * aiperf/metrics/types/): one object per metric, {"unit": "ms", "avg", "p50", "p90", "p99",
 * "min", "max", ...}, among them time_to_first_token, inter_token_latency ((request latency
 * - TTFT) / (output tokens - 1), vLLM's TPOT), request_latency (E2E), input_sequence_length
 * and output_sequence_length (tokens), request_count and error_request_count ({"avg": n});
 * "was_cancelled"; and "input_config", the run's configuration written without its unset
 * defaults: aiperf's loadgen.concurrency, loadgen.request_rate, loadgen.request_rate_mode
 * (poisson, constant or concurrency_burst; aiperf/common/config/user_config.py sets
 * concurrency 1 when neither is given), loadgen.request_cancellation_rate,
 * input.fixed_schedule and endpoint.model_names; genai-perf's model_names and
 * perf_analyzer.stimulus ({"concurrency": N} or {"request_rate": R}; genai-perf's own
 * test of its export files, triton-inference-server/perf_analyzer genai-perf
 * tests/test_process_export_files.py). Time units: ns, us, ms, sec.
 */
#ifndef SIM_BENCH_AIPERF_H
#define SIM_BENCH_AIPERF_H

#include <stdint.h>

#include "bench_vllm.h"
#include "status.h"

typedef struct sim_aiperf_run {
    char tool[16];           /* "aiperf" or "genai-perf" (which input_config layout it had) */
    char model_id[256];      /* the served model's name ("" when absent) */
    int64_t completed;       /* request_count (-1: absent) */
    int64_t failed;          /* error_request_count (0 when absent) */
    int64_t concurrency;     /* closed loop of N clients (0: none) */
    double request_rate;     /* open loop, requests/s (0: none) */
    char rate_mode[24];      /* aiperf's request_rate_mode ("" when absent: poisson) */
    double isl_avg, osl_avg; /* mean lengths, tokens */
    double isl_min, isl_max, osl_min, osl_max;    /* 0 when absent */
    double stat_s[SIM_VB_FAMILIES][SIM_VB_STATS]; /* seconds */
    int has[SIM_VB_FAMILIES][SIM_VB_STATS];
} sim_aiperf_run;

/*
 * Reads path. SIM_EIO when it cannot be read, SIM_EPARSE when it is not JSON, SIM_EINVAL with
 * file:line:col and the field for a wrong type, unit or range, a cancelled run, a fixed
 * schedule, request cancellation, an input_config with neither layout, and a file with no
 * statistic a row can hold.
 */
sim_status sim_aiperf_load(const char *path, sim_aiperf_run *out /* OUT */,
                           struct sim_err *err /* OUT */);

#endif
