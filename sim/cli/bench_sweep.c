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
