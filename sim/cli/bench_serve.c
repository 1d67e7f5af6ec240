/*
 * bench_serve.c - `llmstep bench --serve`: how long one core takes to simulate the V1 engine
 * serving two workloads, timed through the code `llmstep serve` and `llmstep sweep --kind
 * serving` run (cli_serve_run: the simulation and the statistics of the measured requests):
 *   - a closed loop of 10,000 requests: Llama-3.1-8B on h100-sxm at TP 1, 1024 prompt and
 *     128 output tokens, 128 clients, no warm-up (target: under 100 ms);
 *   - a 300-request trace: ../shared/data/traces/llmservingsim-rtx-4090-llama-3.1-8b.jsonl
 *     when present (or --trace FILE), replayed with the scheduler of its measurement
 *     (max_num_seqs 256, max_num_batched_tokens 2048, max_model_len 32768); otherwise 300
 *     generated Poisson requests at 10/s with lengths spread like ShareGPT's (target: under
 *     5 ms).
 * Each figure is the median of several repetitions on the same prepared workload (loading
 * and generating are outside the timing), as CPU time of the thread (judged against the
 * target: the cost on one core, robust to other processes sharing the machine) and as wall
 * time. A benchmark that prints figures, not a timed test.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sweep_cli.h"

/* One timed run of the prepared workload. */
typedef struct serve_job {
    cli_run *run;
    cli_serve *sv;
    sim_serve_result *res;
    sim_serve_stats *st;
} serve_job;

static int serve_once(void *ctx)
{
    serve_job *j = ctx;
    return cli_serve_run(j->run, j->sv, 0.0, 0.0, NULL, NULL, j->res, j->st);
}

static void print_case(const char *name, int reps, const cli_bench_times *bt, double target,
                       const sim_serve_result *res, const sim_serve_stats *st, int64_t n)
{
    printf("  %s\n", name);
    printf("    simulated            %lld requests, %lld engine steps, %.1f s of serving\n",
           (long long)n, (long long)res->n_steps, res->end_s);
    printf("    time                 %.3f ms CPU, %.3f ms wall (medians of %d runs; fastest wall "
           "%.3f ms)\n",
           bt->cpu_s * 1e3, bt->wall_s * 1e3, reps, bt->wall_min_s * 1e3);
    printf("    target               under %.0f ms on one core: %s\n", target * 1e3,
           bt->cpu_s < target ? "met" : "MISSED");
    printf("    rate                 %.3g requests/s, %.3g steps/s simulated (CPU time)\n",
           (double)n / bt->cpu_s, (double)res->n_steps / bt->cpu_s);
    printf("    (checksum: TTFT mean %.6g s, TPOT mean %.6g s)\n", st->ttft_s.mean,
           st->tpot_s.mean);
}

/* The benchmark's deployment: Llama-3.1-8B on one H100 under the default engine with the
 * server's defaults. */
static void bench_spec(cli_run_spec *spec)
{
    cli_run_spec_init(spec);
    spec->model = "llama-3.1-8b";
    spec->hw = "h100-sxm";
    spec->engine = CLI_DEFAULT_ENGINE;
    spec->sched.usage = SIM_USAGE_SERVER;
}

/* One case: serves w (from trace when given) once untimed to warm the caches, then reps
 * timed runs, and prints them against target_s (after the title line when title is set). */
static int run_case(const cli_run_spec *spec, const sim_workload_spec *w, const char *trace,
                    const char *name, int reps, double target_s, int title)
{
    cli_run run;
    cli_serve sv;
    memset(&sv, 0, sizeof(sv));
    sim_serve_result res;
    sim_serve_stats st;
    cli_bench_times bt;
    serve_job job = {&run, &sv, &res, &st};
    int rc = cli_run_open(spec, &run);
    if (rc == CLI_OK)
        rc = cli_serve_prepare(&sv, w, trace);
    if (rc == CLI_OK)
        rc = cli_serve_run(&run, &sv, 0.0, 0.0, NULL, NULL, &res, &st); /* warm the caches */
    if (rc == CLI_OK)
        rc = cli_bench_repeat(serve_once, &job, reps, &bt);
    if (rc == CLI_OK && title)
        printf("llmstep bench --serve: %s on %s, TP 1, engine %s (server defaults), one core\n",
               run.model.id, run.hw.id, run.engine.id);
    if (rc == CLI_OK)
        print_case(name, reps, &bt, target_s, &res, &st, sv.n);
    cli_serve_free(&sv);
    cli_run_close(&run);
    return rc;
}

int cli_bench_serve(const char *trace_arg)
{
    cli_run_spec spec;
    bench_spec(&spec);
    const sim_workload_spec closed = {.arrival = SIM_ARRIVAL_CLOSED,
                                      .concurrency = 128,
                                      .prompt_tokens = 1024,
                                      .output_tokens = 128,
                                      .num_requests = 10000,
                                      .burstiness = 1.0};
    int rc = run_case(&spec, &closed, NULL,
                      "closed loop: 128 clients, 1024 prompt + 128 output tokens", 15, 0.100, 1);
    if (rc != CLI_OK)
        return rc;

    /* The trace: the shared LLMServingSim one when present, else a generated workload. */
    char path[4096];
    struct stat sb;
    const char *trace = trace_arg;
    if (!trace) {
        snprintf(path, sizeof(path),
                 "%s/../shared/data/traces/"
                 "llmservingsim-rtx-4090-llama-3.1-8b.jsonl",
                 cli_data_dir());
        if (stat(path, &sb) == 0)
            trace = path;
    }
    bench_spec(&spec);
    sim_workload_spec open = {0};
    char name[4300];
    if (trace) {
        /* The scheduler of the trace's measurement (MEASUREMENTS lss-rtx-4090-llama-3.1-8b). */
        spec.sched.max_num_seqs = 256;
        spec.sched.max_num_batched_tokens = 2048;
        spec.sched.max_model_len = 32768;
        open.arrival = SIM_ARRIVAL_TRACE;
        snprintf(name, sizeof(name), "trace %s", trace);
    } else {
        /* ShareGPT-like: prompts and outputs spread widely around a few hundred tokens. */
        open = (sim_workload_spec){.arrival = SIM_ARRIVAL_POISSON,
                                   .rate_per_s = 10.0,
                                   .burstiness = 1.0,
                                   .prompt_tokens = 256,
                                   .output_tokens = 256,
                                   .range_ratio = 0.9,
                                   .num_requests = 300};
        snprintf(name, sizeof(name),
                 "generated: 300 Poisson requests at 10/s, lengths uniform in 25..486 (no trace "
                 "found)");
    }
    return run_case(&spec, &open, trace, name, CLI_BENCH_MAX_REPS, 0.005, 0);
}
