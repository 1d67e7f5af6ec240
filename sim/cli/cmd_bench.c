/*
 * cmd_bench.c - `llmstep bench`: how many step predictions one core makes per
 * second. A benchmark that prints figures, not a timed test: the target (2
 * million per second, issue 2) is checked by reading its output.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "opts.h"
#include "sweep_cli.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cli_bench_wall_s(void) { return clock_s(CLOCK_MONOTONIC); }

double cli_bench_cpu_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cli_bench_repeat(int (*fn)(void *ctx), void *ctx, int reps, cli_bench_times *out)
{
    double wall[CLI_BENCH_MAX_REPS], cpu[CLI_BENCH_MAX_REPS];
    reps = reps < 1 ? 1 : (reps > CLI_BENCH_MAX_REPS ? CLI_BENCH_MAX_REPS : reps);
    for (int i = 0; i < reps; i++) {
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        int rc = fn(ctx);
        cpu[i] = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
        wall[i] = clock_s(CLOCK_MONOTONIC) - w0;
        if (rc != CLI_OK)
            return rc;
    }
    qsort(wall, (size_t)reps, sizeof(wall[0]), cmp_double);
    qsort(cpu, (size_t)reps, sizeof(cpu[0]), cmp_double);
    out->wall_s = wall[reps / 2];
    out->cpu_s = cpu[reps / 2];
    out->wall_min_s = wall[0];
    return CLI_OK;
}

/* The usage around the options' help (the table in cmd_bench): a paragraph for each of the
 * other benchmarks. */
static const cli_help bench_help = {
    .head = "usage: llmstep bench [--model ID] [--hw ID] [--tp N] [--n COUNT] [--sweep]\n"
            "       llmstep bench --serve [--trace FILE.jsonl]\n"
            "       llmstep bench --serve-grid\n"
            "       llmstep bench --validate [--measurements FILE.jsonl]\n\n",
    .tail = "\n"
            "Times COUNT (default 4000000) decode-step predictions on one core, with\n"
            "batch 1..256 and context 128..8192 varying, and one mixed prefill+decode\n"
            "step in every 8, and prints predictions per second: each taking the model,\n"
            "hardware and configuration afresh (one prediction), and prepared once for\n"
            "all (each step of a simulation; the same numbers). Default model\n"
            "llama-3.1-8b on h100-sxm.\n",
};

int cmd_bench(int argc, char **argv)
{
    int sweep = 0, serve = 0, validate = 0, grid = 0;
    const char *trace = NULL, *meas = NULL;
    const char *model = "llama-3.1-8b", *hwname = "h100-sxm";
    int64_t tp = 1, n = 4000000;
    /* In the order of the usage. No help of their own: the options of the synopsis. */
    const cli_opt t[] = {
        CLI_FLAG_H("serve", &serve,
                   "--serve: times the V1 serving simulation (median of repetitions): a closed\n"
                   "loop of 10,000 requests (Llama-3.1-8B, h100-sxm, 1024 in, 128 out, 128\n"
                   "clients; target under 100 ms) and a 300-request trace (the shared\n"
                   "LLMServingSim RTX 4090 trace, or --trace FILE; without either, 300\n"
                   "generated Poisson requests at 10/s; target under 5 ms). Prints medians of\n"
                   "the thread's CPU time (judged against the targets) and of wall time.\n"),
        {.name = "serve-grid",
         .kind = CLI_OPT_FLAG,
         .dst = &grid,
         .heading = "\n",
         .help = "--serve-grid: times the 990-point serving grid of `llmstep sweep --kind\n"
                 "serving` (TP 2,4,8 x 11 concurrencies 1..256 x 5 prompt lengths 128..4096 x\n"
                 "6 output lengths 32..1024) for Llama-3.1-8B and Qwen3-32B on h100-sxm, on one\n"
                 "thread and with --jobs at the online cores; prints CPU and wall time and\n"
                 "checks that both give the same rows.\n"},
        {.name = "validate",
         .kind = CLI_OPT_FLAG,
         .dst = &validate,
         .heading = "\n",
         .help = "--validate: times `llmstep validate` in process on FILE (default: the 511\n"
                 "Argonne offline batches in ../shared/data): loading the rows and the files\n"
                 "they name, and predicting every row; prints medians of 15 repetitions.\n"},
        {.name = "sweep",
         .kind = CLI_OPT_FLAG,
         .dst = &sweep,
         .heading = "\n",
         .help = "--sweep: times `llmstep sweep` on 1,048,576 decode configurations (TP\n"
                 "1,2,4,8 x batch 1..256 x context 64..65536): evaluation alone, and with\n"
                 "CSV written to /dev/null.\n"},
        CLI_STR("model", &model),
        CLI_STR("hw", &hwname),
        CLI_I64("tp", &tp, 1, 4096),
        CLI_I64("n", &n, 1, (double)(INT64_C(1) << 40)),
        CLI_STR("trace", &trace),
        /* repeatable, as the measurement lists of other commands: the last one is timed */
        {.name = "measurements", .kind = CLI_OPT_STR, .dst = &meas, .repeatable = 1},
    };
    int done, rc = cli_opts_parse_help("bench", argc, argv, t, CLI_N(t), &bench_help, &done, NULL);
    if (rc != CLI_OK || done)
        return rc;
    if (sweep + serve + validate + grid > 1) {
        cli_error("bench: give one of --sweep, --serve, --serve-grid and --validate");
        return CLI_USAGE;
    }
    if (meas && !validate) {
        cli_error("bench: --measurements belongs to --validate");
        return CLI_USAGE;
    }
    if (trace && !serve) {
        cli_error("bench: --trace belongs to --serve");
        return CLI_USAGE;
    }
    if (sweep)
        return cli_bench_sweep(model, hwname);
    if (serve)
        return cli_bench_serve(trace);
    if (grid)
        return cli_bench_serve_grid();
    if (validate)
        return cli_bench_validate(meas);
    sim_model m;
    sim_hw hw;
    char p1[4096], p2[4096];
    rc = cli_load_model_hw(model, hwname, &m, &hw, p1, p2, sizeof(p1));
    if (rc != CLI_OK)
        return rc;
    sim_run_cfg cfg = sim_run_cfg_plain((int)tp, m.dtype);
    struct sim_err err;
    sim_step probe = {1, {{256, 1, 8192, 1}}};
    if (sim_step_check(&m, &cfg, &probe, &err) != SIM_OK) {
        cli_error("bench: %s", err.msg);
        return CLI_BAD_INPUT;
    }
    /* Twice over the same steps: through sim_step_cost_compute (the model, hardware and
     * configuration taken afresh each call, as a single prediction is), and through a
     * sim_step_prep made once (what the serving and batch simulations call per step). */
    double dt[2], sink[2] = {0.0, 0.0};
    sim_step_prep prep;
    sim_step_prep_init(&prep, &m, &hw, &cfg);
    for (int pass = 0; pass < 2; pass++) {
        sim_step s = {0};
        sim_step_cost cost;
        double t0 = cli_bench_wall_s();
        for (int64_t i = 0; i < n; i++) {
            s.n_groups = 1;
            s.groups[0] = (sim_group){1 + (i & 255), 1, 128 + ((i * 37) & 8063), 1};
            if ((i & 7) == 7) {
                s.n_groups = 2;
                s.groups[1] = (sim_group){1, 512 + (i & 511), 0, 1};
            }
            if (pass == 0)
                sim_step_cost_compute(&m, &hw, &cfg, &s, &cost);
            else
                sim_step_cost_prepared(&prep, &s, &cost);
            sink[pass] += cost.step_s;
        }
        dt[pass] = cli_bench_wall_s() - t0;
    }
    printf("llmstep bench: %s on %s, TP %lld\n", m.id, hw.id, (long long)tp);
    printf("  predictions            %lld\n", (long long)n);
    printf("  wall time              %.3f s\n", dt[0]);
    printf("  predictions per second %.3g\n", (double)n / dt[0]);
    printf("  time per prediction    %.1f ns\n", dt[0] / (double)n * 1e9);
    printf("  prepared (per step of a simulation: sim_step_cost_prepared)\n");
    printf("  predictions per second %.3g\n", (double)n / dt[1]);
    printf("  time per prediction    %.1f ns%s\n", dt[1] / (double)n * 1e9,
           sink[1] == sink[0] ? "" : "  (CHECKSUMS DIFFER)");
    printf("  (checksum %.6g s of predicted step time)\n", sink[0]);
    return sink[1] == sink[0] ? CLI_OK : CLI_NUMERIC;
}
