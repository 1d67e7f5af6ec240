/*
 * bench_sweep.c - `llmstep bench --sweep`: how fast the sweep driver evaluates
 * decode configurations and writes them as CSV, on one core. It runs the code
 * `llmstep sweep` runs (cli_sweep_run and its CSV writer), on 4 TPs x 256
 * batch sizes x 1024 contexts = 1,048,576 configurations, twice: once counting
 * rows only, once writing CSV to /dev/null. A benchmark that prints figures,
 * not a timed test; the targets (1M configurations in under 1 s, over 1M CSV
 * rows/s) are checked by reading its output.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "sweep_cli.h"

typedef struct count_ctx {
    int64_t n, n_fit;
    double sum_s;
} count_ctx;

static int count_row(void *ctx, const cli_sweep_block *b, const sim_sweep_row *r)
{
    (void)b;
    count_ctx *c = ctx;
    c->n++;
    c->n_fit += r->status == SIM_SWEEP_OK;
    c->sum_s += r->time_s;
    return CLI_OK;
}

static int csv_row(void *ctx, const cli_sweep_block *b, const sim_sweep_row *r)
{
    cli_sweep_csv_row(ctx, b, r);
    return CLI_OK;
}

int cli_bench_sweep(const char *model, const char *hw)
{
    enum { N_TP = 4, N_BATCH = 256, N_CTX = 1024 };
    static int64_t tps[N_TP] = {1, 2, 4, 8}, batches[N_BATCH], contexts[N_CTX];
    for (int i = 0; i < N_BATCH; i++)
        batches[i] = i + 1;
    for (int i = 0; i < N_CTX; i++)
        contexts[i] = 64 * (int64_t)(i + 1);
    cli_sweep_opts o;
    cli_sweep_opts_init(&o);
    o.models[0] = model;
    o.n_models = 1;
    o.hws[0] = hw;
    o.n_hws = 1;
    o.axes = (sim_sweep_axes){tps, N_TP, batches, N_BATCH, contexts, N_CTX};
    o.slo.tpot_s = 0.05;
    o.gpu_hour_usd = 2.5;
    /* Load once outside the timing so file reads do not count. */
    count_ctx warm = {0};
    sim_sweep_axes small = {tps, 1, batches, 1, contexts, 1};
    o.axes = small;
    cli_sweep_sink ws = {&warm, NULL, count_row, NULL};
    int rc = cli_sweep_run(&o, &ws);
    if (rc != CLI_OK)
        return rc;
    o.axes = (sim_sweep_axes){tps, N_TP, batches, N_BATCH, contexts, N_CTX};
    count_ctx cnt = {0};
    cli_sweep_sink cs = {&cnt, NULL, count_row, NULL};
    double t0 = cli_bench_wall_s();
    rc = cli_sweep_run(&o, &cs);
    double t_eval = cli_bench_wall_s() - t0;
    if (rc != CLI_OK)
        return rc;
    FILE *devnull = fopen("/dev/null", "w");
    cli_outbuf out;
    if (!devnull || cli_outbuf_init(&out, devnull, 1u << 20) != 0) {
        if (devnull)
            fclose(devnull);
        cli_error("bench: cannot open /dev/null or allocate the output buffer");
        return CLI_NUMERIC;
    }
    cli_sweep_csv_header(&out);
    cli_sweep_sink ss = {&out, NULL, csv_row, NULL};
    t0 = cli_bench_wall_s();
    rc = cli_sweep_run(&o, &ss);
    cli_outbuf_flush(&out);
    double t_all = cli_bench_wall_s() - t0;
    cli_outbuf_close(&out);
    fclose(devnull);
    if (rc != CLI_OK)
        return rc;
    double n = (double)cnt.n, t_csv = t_all - t_eval;
    printf("llmstep bench --sweep: %s on %s, decode, TP 1,2,4,8 x batch 1..256 x context "
           "64..65536\n",
           model, hw);
    printf("  %-28s %lld (%lld fit in memory)\n", "configurations", (long long)cnt.n,
           (long long)cnt.n_fit);
    printf("  %-28s %.3f s   %.3g configurations/s   %.0f ns each\n", "evaluate only", t_eval,
           n / t_eval, t_eval / n * 1e9);
    printf("  %-28s %.3f s   %.3g rows/s\n", "evaluate + CSV to /dev/null", t_all, n / t_all);
    printf("  %-28s %.3f s   %.3g rows/s (the difference)\n", "CSV formatting and writing", t_csv,
           t_csv > 0.0 ? n / t_csv : 0.0);
    printf("  (checksum %.6g s of predicted step time)\n", cnt.sum_s);
    return CLI_OK;
}

/* The rows of the serving grid, folded in the order the sink sees them: equal folds mean the
 * same rows in the same order (every statistic bit for bit). */
typedef struct grid_ctx {
    int64_t n, n_ok;
    uint64_t fold;
} grid_ctx;

static uint64_t fold_double(uint64_t h, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return (h ^ bits) * UINT64_C(0x100000001b3); /* FNV-1a step on the 8 bytes at once */
}

static int grid_row(void *ctx, const cli_sweep_block *b, const sim_sweep_row *r)
{
    (void)b;
    grid_ctx *g = ctx;
    g->n++;
    if (r->status != SIM_SWEEP_OK)
        return CLI_OK;
    g->n_ok++;
    const sim_dist *d[] = {&r->ttft_dist_s, &r->tpot_dist_s, &r->e2e_dist_s};
    for (size_t i = 0; i < 3; i++) {
        g->fold = fold_double(g->fold, d[i]->mean);
        g->fold = fold_double(g->fold, d[i]->p50);
        g->fold = fold_double(g->fold, d[i]->p90);
        g->fold = fold_double(g->fold, d[i]->p99);
    }
    const double v[] = {r->tokens_per_s, r->requests_per_s, r->kv_peak_frac,
                        (double)r->preemptions};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        g->fold = fold_double(g->fold, v[i]);
    return CLI_OK;
}

int cli_bench_serve_grid(void)
{
    static int64_t tps[] = {2, 4, 8}, conc[] = {1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 256};
    static const int64_t prompts[] = {128, 512, 1024, 2048, 4096};
    static const int64_t outputs[] = {32, 64, 128, 256, 512, 1024};
    static const char *const models[] = {"llama-3.1-8b", "qwen3-32b"};
    const size_t n_p = sizeof(prompts) / sizeof(prompts[0]);
    const size_t n_o = sizeof(outputs) / sizeof(outputs[0]);
    const int all = cli_sweep_default_jobs();
    printf("llmstep bench --serve-grid: vLLM V1 serving on h100-sxm, TP 2,4,8 x 11 "
           "concurrencies (1..256) x prompts 128..4096 (5) x outputs 32..1024 (6), 10 x N "
           "requests each, as `llmstep sweep --kind serving`; %d online core%s\n",
           all, all == 1 ? "" : "s");
    for (size_t mi = 0; mi < sizeof(models) / sizeof(models[0]); mi++) {
        uint64_t fold_one = 0;
        const int jobs_list[2] = {1, all};
        for (int ji = 0; ji < (all > 1 ? 2 : 1); ji++) {
            cli_sweep_opts o;
            cli_sweep_opts_init(&o);
            o.models[0] = models[mi];
            o.n_models = 1;
            o.hws[0] = "h100-sxm";
            o.n_hws = 1;
            o.kind = SIM_SWEEP_SERVING;
            o.n_seeds = 1;
            o.jobs = jobs_list[ji];
            o.axes = (sim_sweep_axes){tps, 3, conc, 1, NULL, 0};
            o.prompt_tokens = 128;
            o.output_tokens = 32;
            grid_ctx warm = {0};
            cli_sweep_sink ws = {&warm, NULL, grid_row, NULL};
            int rc = cli_sweep_run(&o, &ws); /* loads the files outside the timing */
            if (rc != CLI_OK)
                return rc;
            o.axes.n_batch = sizeof(conc) / sizeof(conc[0]);
            grid_ctx g = {0, 0, UINT64_C(0xcbf29ce484222325)};
            cli_sweep_sink gs = {&g, NULL, grid_row, NULL};
            const double w0 = cli_bench_wall_s(), c0 = cli_bench_cpu_s();
            for (size_t p = 0; p < n_p && rc == CLI_OK; p++)
                for (size_t q = 0; q < n_o && rc == CLI_OK; q++) {
                    o.prompt_tokens = prompts[p];
                    o.output_tokens = outputs[q];
                    rc = cli_sweep_run(&o, &gs);
                }
            const double cpu = cli_bench_cpu_s() - c0, wall = cli_bench_wall_s() - w0;
            if (rc != CLI_OK)
                return rc;
            if (ji == 0)
                fold_one = g.fold;
            printf("  %-13s %lld points (%lld served), %3d thread%s: CPU %.3f s, wall %.3f s, "
                   "%.0f us a point (wall)%s\n",
                   models[mi], (long long)g.n, (long long)g.n_ok, o.jobs, o.jobs == 1 ? " " : "s",
                   cpu, wall, wall / (double)g.n * 1e6,
                   ji == 0 ? ""
                           : (g.fold == fold_one ? "; rows identical to 1 thread"
                                                 : "; ROWS DIFFER from 1 thread"));
            if (ji > 0 && g.fold != fold_one)
                return CLI_NUMERIC;
        }
    }
    printf("  (target: 990 points in 0.3 s CPU on one core, issue 26)\n");
    return CLI_OK;
}
