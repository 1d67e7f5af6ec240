/*
 * sweep_cli.h - the sweep driver shared by `llmstep sweep`, `llmstep plot
 * sweep` and `llmstep bench --sweep`: loads each model and hardware once,
 * resolves the scheduler and the memory budget once per TP, evaluates every
 * point with the core (sweep.h) and hands each row to a sink as it is made,
 * so memory does not grow with the number of points. The CSV writer lives here
 * too, so the benchmark measures the code the command runs.
 */
#ifndef SIM_SWEEP_CLI_H
#define SIM_SWEEP_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "sweep_drive.h"
#include "sweep.h"

#define CLI_SWEEP_MAX_NAMES SIM_SWEEP_MAX_NAMES

/* The sweep's options, blocks and sink are the driver's (sweep_drive.h); the CLI's sinks
 * return CLI exit codes, and a non-zero one stops the sweep with that code. */
typedef sim_sweep_opts cli_sweep_opts;
typedef sim_sweep_block cli_sweep_block;
typedef sim_sweep_sink cli_sweep_sink;

/* sim_sweep_opts_init, messages naming --calibration. */
void cli_sweep_opts_init(cli_sweep_opts *o);

/* Runs the sweep (sim_sweep_drive); prints errors and returns a CLI exit code: the sink's
 * when it stopped the sweep. */
int cli_sweep_run(const cli_sweep_opts *o, const cli_sweep_sink *sink);

/*
 * Parses --request-rate LIST: comma-separated requests/s, each > 0 (up to 1e7), or ranges
 * a:b (a, 2a, 4a, ... <= b). Fills up to cap values and sets *n; on failure prints
 * "<cmd>: --request-rate '<spec>': ..." and returns CLI_USAGE.
 */
int cli_sweep_parse_rates(const char *cmd, const char *spec, double *out, size_t cap, size_t *n);

/* Splits a comma-separated list into names (pointers into buf, which it modifies). */
int cli_split_names(char *buf, const char **names, size_t cap, size_t *n);

/* A buffered writer: rows are formatted into buf and written with fwrite when it fills. */
typedef struct cli_outbuf {
    FILE *f;
    char *buf;
    size_t len, cap;
    int failed; /* a write failed */
} cli_outbuf;

/* Allocates a cap-byte buffer for f; returns -1 when out of memory. */
int cli_outbuf_init(cli_outbuf *o, FILE *f, size_t cap);
/* Writes what is buffered; returns -1 on a write error. */
int cli_outbuf_flush(cli_outbuf *o);
/* Flushes and frees the buffer. Returns -1 if any write failed. */
int cli_outbuf_close(cli_outbuf *o);

#define CLI_SWEEP_CSV_HEADER                                                                       \
    "model,hardware,kind,tp,batch,context_tokens,prompt_tokens,output_tokens,time_s,tpot_s,"       \
    "ttft_s,tokens_per_s,tokens_per_s_per_gpu,fits,status,bound,calibrated,meets_slo,"             \
    "cost_per_mtok_usd\n"

#define CLI_SWEEP_SERVING_CSV_HEADER                                                               \
    "model,hardware,kind,tp,concurrency,request_rate_per_s,prompt_tokens,output_tokens,"           \
    "n_requests,ttft_mean_s,ttft_p50_s,ttft_p90_s,ttft_p99_s,tpot_mean_s,tpot_p50_s,tpot_p90_s,"   \
    "tpot_p99_s,e2e_mean_s,e2e_p50_s,e2e_p90_s,e2e_p99_s,requests_per_s,output_tokens_per_s,"      \
    "output_tokens_per_s_per_gpu,preemptions,kv_peak_frac,fits,status,calibrated,meets_slo,"       \
    "cost_per_mtok_usd\n"

/* One serving row in the columns of CLI_SWEEP_SERVING_CSV_HEADER. */
void cli_sweep_serving_csv_row(cli_outbuf *o, const cli_sweep_block *b, const sim_sweep_row *r);

/* The CSV header line and one row (fixed-point numbers from fastfmt.h; NaN = empty field). */
void cli_sweep_csv_header(cli_outbuf *o);
void cli_sweep_csv_row(cli_outbuf *o, const cli_sweep_block *b, const sim_sweep_row *r);

/* Benchmark clocks (cmd_bench.c), seconds: monotonic wall time, and the CPU time of the whole
 * process (every thread). */
double cli_bench_wall_s(void);
double cli_bench_cpu_s(void);

/* The threads a serving sweep runs on by default (--jobs): the online cores, 1 to
 * SIM_SWEEP_MAX_JOBS (sweep_run.c). */
int cli_sweep_default_jobs(void);

/* Medians over repetitions, seconds: wall clock, and CPU time of the calling thread (what
 * the work costs one core, without the time the scheduler gave other processes). */
typedef struct cli_bench_times {
    double wall_s, cpu_s, wall_min_s;
} cli_bench_times;

/* Most repetitions cli_bench_repeat takes. */
#define CLI_BENCH_MAX_REPS 101

/* Runs fn(ctx) reps times (1..CLI_BENCH_MAX_REPS) and sets the medians; returns the first
 * code other than CLI_OK that fn returns, else CLI_OK. */
int cli_bench_repeat(int (*fn)(void *ctx), void *ctx, int reps, cli_bench_times *out /* OUT */);

/* `llmstep sweep --kind serving --disagg --gpus G` (sweep_disagg.c): aggregated against
 * disaggregated layouts of G GPUs at each rate, the best under the SLOs. */
int cli_sweep_disagg(int argc, char **argv);

/* `llmstep bench --sweep`: evaluation and CSV rates of the sweep (bench_sweep.c). */
int cli_bench_sweep(const char *model, const char *hw);

/* `llmstep bench --serve-grid`: the 990-point serving grid of issue 26 (Llama-3.1-8B and
 * Qwen3-32B on h100-sxm), on one thread and on every online core, with a check that both give
 * the same rows (bench_sweep.c). */
int cli_bench_serve_grid(void);

/* `llmstep bench --serve`: time to simulate a 10,000-request closed loop and a 300-request
 * trace (trace: a JSON Lines file, or NULL for the shared LLMServingSim one) (bench_serve.c). */
int cli_bench_serve(const char *trace);

/* `llmstep bench --validate [--measurements FILE]`: times validate on FILE (default: the
 * shared Argonne offline batches) in process, median of repetitions (bench_validate.c). */
int cli_bench_validate(const char *file);

#endif
