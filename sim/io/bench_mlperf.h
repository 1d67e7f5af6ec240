/*
 * bench_mlperf.h - MLPerf Inference LoadGen's mlperf_log_summary.txt, read into what
 * measurement rows need. The lines are those PerformanceSummary::LogSummary and
 * TestSettingsInternal::LogSummary print (mlcommons/inference at b66003e1, loadgen/results.cc
 * and loadgen/test_settings_internal.cc): "KEY : VALUE" lines, among them "Scenario : Server",
 * "Mode     : PerformanceOnly", "Result is : VALID", the sample latencies ("Mean latency (ns)",
 * "50.00 percentile latency (ns)", ...), with token latencies "Mean First Token latency (ns)",
 * "50.00 percentile first token latency (ns)", "Mean Time per Output Token (ns)", "50.00
 * percentile time to output token (ns)" (LoadGen's TPOT: (latency - first token) / (tokens -
 * 1), logging.cc), "Samples per second" (Offline), and the test parameters "samples_per_query",
 * "target_qps", "min_duration (ms)", "min_query_count". The Server scenario issues queries of
 * one sample at exponential intervals of mean 1 / target_qps (loadgen.cc
 * ScheduleDistribution) until both min_duration and min_query_count are reached;
 * SingleStream issues one at a time; Offline all samples_per_query at once.
 */
#ifndef SIM_BENCH_MLPERF_H
#define SIM_BENCH_MLPERF_H

#include <stdint.h>

#include "bench_vllm.h"
#include "status.h"

typedef enum sim_mlperf_scenario {
    SIM_MLPERF_SERVER,
    SIM_MLPERF_SINGLE_STREAM,
    SIM_MLPERF_OFFLINE
} sim_mlperf_scenario;

typedef struct sim_mlperf_run {
    sim_mlperf_scenario scenario;
    int valid;                                    /* "Result is : VALID" */
    double target_qps;                            /* requests/s */
    double min_duration_s;                        /* LoadGen's min_duration */
    int64_t min_query_count;                      /* and min_query_count */
    int64_t samples_per_query;                    /* Offline: the samples of its one query */
    double samples_per_s;                         /* Offline: "Samples per second" */
    double stat_s[SIM_VB_FAMILIES][SIM_VB_STATS]; /* seconds; E2E is the sample latency */
    int has[SIM_VB_FAMILIES][SIM_VB_STATS];
} sim_mlperf_run;

/*
 * Reads path. SIM_EIO when it cannot be read; SIM_EINVAL with file:line and the key for a
 * value that is not a number in range or a key given twice, for a scenario other than
 * Server, SingleStream or Offline, a mode other than PerformanceOnly, and with the file's
 * name when a line the scenario needs is missing.
 */
sim_status sim_mlperf_load(const char *path, sim_mlperf_run *out /* OUT */,
                           struct sim_err *err /* OUT */);

#endif
