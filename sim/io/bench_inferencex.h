/*
 * bench_inferencex.h - the result file InferenceX (SemiAnalysis, formerly InferenceMAX) keeps
 * of each benchmark point, agg_<name>.json, read into what serving measurement rows need.
 * utils/process_result.py (SemiAnalysisAI/InferenceX at 77f3e680) writes it from the
 * benchmark client's result: "hw" (the runner), "conc" (the client's max concurrency),
 * "image", "model", "framework", "precision", "spec_decoding", "disagg", "isl", "osl",
 * "is_multinode", "tp", "ep", "dp_attention" (a string), the throughputs per GPU, and every
 * "<stat>_<metric>_ms" of the client's result divided by 1000 under "<stat>_<metric>"
 * (seconds: mean_ttft, median_tpot, p99_e2el, ...; the "intvty" keys are 1 / TPOT).
 * The lengths and request count the client used are not in the file; they come from the
 * InferenceX benchmark scripts (benchmarks/benchmark_lib.sh run_benchmark_serving, as
 * ../shared/data/measurements/inferencex-vllm-serving.jsonl records them: lengths uniform on
 * the integers [int(0.8 L), L], 10 x conc prompts, warm-up requests drained first).
 */
#ifndef SIM_BENCH_INFERENCEX_H
#define SIM_BENCH_INFERENCEX_H

#include <stdint.h>

#include "bench_vllm.h"
#include "status.h"

typedef struct sim_ix_run {
    char hw[64], model_id[256], framework[32], precision[32], spec[32], image[256];
    char engine_version[32]; /* from image "...:vX.Y.Z" ("" when it names none) */
    int64_t conc, isl, osl, tp, ep;
    int dp_attention, disagg, multinode;
    double stat_s[SIM_VB_FAMILIES][SIM_VB_STATS]; /* seconds */
    int has[SIM_VB_FAMILIES][SIM_VB_STATS];
} sim_ix_run;

/*
 * Reads path. SIM_EIO when it cannot be read, SIM_EPARSE when it is not JSON, SIM_EINVAL with
 * file:line:col and the field for a wrong type or range, a run that is not one vLLM server
 * (framework other than vllm, disaggregated or multi-node, speculative decoding, attention
 * data parallel), and a file with no statistic a row can hold.
 */
sim_status sim_ix_load(const char *path, sim_ix_run *out /* OUT */, struct sim_err *err /* OUT */);

#endif
