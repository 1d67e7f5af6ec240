/*
 * cmd_sweep.c - `llmstep sweep`: every configuration of models x hardware x TP
 * x batch x context, streamed as CSV, JSON or a table; or, with --best, the
 * highest-throughput configuration per model and hardware that meets the SLOs;
 * or, with --pareto, the latency/throughput frontier. Formulas: sweep.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "sweep_cli.h"
#include "units.h"

/* The usage around the options' help (the table in parse_sweep_args). */
static const cli_help sweep_help = {
    .head = "usage: llmstep sweep --model ID[,ID..] --hw ID[,ID..] [--tp LIST] [--batch LIST]\n"
            "                     [--context LIST] [--kind decode|prefill|offline|serving]\n"
            "                     [--prompt-tokens L --output-tokens O] [--calibration FILE|DIR]\n"
            "                     [--slo-tpot-ms X] [--slo-ttft-ms Y] [--gpu-hour-usd P]\n"
            "                     [--best | --pareto] [--format csv|json|table]\n"
            "\n"
            "Predicts every configuration and prints one row each, as it is computed (memory does\n"
            "not grow with the number of rows). Configurations that do not fit in memory are kept\n"
            "and marked (fits=false, with the reason in status).\n"
            "\n"
            "  decode   one step of BATCH sequences at CONTEXT cached tokens: time = TPOT,\n"
            "           tokens/s = batch / time\n"
            "  prefill  one step of BATCH prompts of CONTEXT tokens: time = TTFT,\n"
            "           tokens/s = batch x context / time (prompt tokens)\n"
            "  offline  the engine simulation of BATCH prompts of L tokens generating O each\n"
            "           (as `llmstep latency`); --context is not used; tokens/s = output tokens\n"
            "  serving  the engine (default vllm-v1, server defaults) serving a closed loop of\n"
            "           --concurrency LIST clients (default 1:256) or an open loop at\n"
            "           --request-rate LIST requests/s, as `llmstep serve`: TTFT, TPOT and E2E\n"
            "           mean/p50/p90/p99, requests/s and output tokens/s (per GPU = / tp)\n"
            "Times include the engine's host time per step (--no-host-time to leave it out).\n"
            "With --disagg (--kind serving --gpus G --request-rate LIST): aggregated TP x DP\n"
            "against disaggregated xPyD layouts of G GPUs and the best under the SLOs\n"
            "(llmstep sweep --disagg --help).\n"
            "\n",
    .tail =
        "\n"
        "A decode point fits when the engine starts (weights, activations and reserve leave room\n"
        "for one max_model_len sequence) and batch <= min(max_num_seqs, KV blocks /\n"
        "ceil((context + 1) / block_size)); see `llmstep capacity`.\n"
        "\n"
        "Examples:\n"
        "  llmstep sweep --model llama-3.1-8b --hw h100-sxm --tp 1,2 --batch 1:256 "
        "--context 1024,4096\n"
        "  llmstep sweep --model llama-3.1-70b --hw h100-sxm,a100-sxm-80gb --tp 4,8 "
        "--batch 1:256 \\\n"
        "      --context 4096 --slo-tpot-ms 50 --best --format table\n"
        "  llmstep sweep --model llama-3.1-8b --hw h100-sxm --kind offline --prompt-tokens 1024 "
        "\\\n"
        "      --output-tokens 256 --batch 1:256 --gpu-hour-usd 2.5 --pareto\n"
        "  llmstep sweep --kind serving --model qwen3-32b --hw h100-sxm --tp 2,4,8 "
        "--concurrency 1:256 \\\n"
        "      --prompt-tokens 1024 --output-tokens 128 --slo-ttft-ms 500 --slo-tpot-ms 30 "
        "--best\n",
};

#define AXIS_CAP 4096
/* One serving point simulates about 12 x concurrency requests; this keeps a point under a
 * second or so and its buffers small. */
#define PARETO_CAP   16384
#define OUTBUF_BYTES (1u << 20)

enum sweep_format { FMT_CSV, FMT_JSON, FMT_TABLE };
enum sweep_select { SEL_ALL, SEL_BEST, SEL_PARETO };

/* The writer: formats rows into a buffer in the chosen format. */
typedef struct writer {
    enum sweep_format format;
    cli_outbuf out; /* CSV and table */
    sim_jw jw;      /* JSON */
    int64_t n_rows;
    char *header; /* formatted and written before the first block's rows (its engine in the
                     JSON header); NULL once written */
    size_t header_cap;
    const cli_sweep_opts *o;
    enum sweep_select select;
    int with_pp;    /* --pp given: a pp column (CSV, JSON) */
    int with_dp;    /* --dp or --ep given: dp and ep columns (CSV, JSON) */
    int with_seeds; /* serving over several seeds: n_seeds and the spreads (every format) */
    int interval;   /* --interval L: the bands of each row (0: none) */
} writer;

/* A row's bands (--interval): the predicted times they surround and their families (serving:
 * the TTFT and TPOT means; otherwise the row's time), n of them, and whether the block's
 * calibration has each (sim_calib_band_get). */
typedef struct row_bands {
    int n, ok[2];
    double at_s[2];
    sim_pred_band b[2];
} row_bands;

/* The band families of a row of kind: serving rows the TTFT (in the run's regime: queued 1
 * when its TTFT is mostly queueing, sim_sweep_row.ttft_queued) and TPOT means, others their
 * time. Returns how many (fam[0..n)). */
static int kind_families(sim_sweep_kind kind, int queued, int fam[2])
{
    if (kind == SIM_SWEEP_SERVING) {
        fam[0] = queued ? SIM_BAND_TTFT_QUEUED : SIM_BAND_TTFT;
        fam[1] = SIM_BAND_TPOT;
        return 2;
    }
    fam[0] = kind == SIM_SWEEP_DECODE    ? SIM_BAND_DECODE
             : kind == SIM_SWEEP_PREFILL ? SIM_BAND_PREFILL
                                         : SIM_BAND_OFFLINE;
    return 1;
}

static void bands_of(const writer *w, const cli_sweep_block *b, const sim_sweep_row *r,
                     row_bands *out)
{
    int fam[2];
    *out = (row_bands){.n = kind_families(r->kind, r->ttft_queued, fam)};
    out->at_s[0] = out->n == 2 ? r->ttft_dist_s.mean : r->time_s;
    out->at_s[1] = r->tpot_dist_s.mean;
    struct sim_err err;
    for (int i = 0; i < out->n; i++)
        out->ok[i] = sim_calib_band_get(b->cal, b->calib_path, fam[i], w->interval, &out->b[i],
                                        &err) == SIM_OK;
}

/* JSON: "band": {"time_s": ...} or {"ttft_s": ..., "tpot_s": ...}, null where none. */
static void json_bands(const writer *w, sim_jw *j, const cli_sweep_block *b, const sim_sweep_row *r)
{
    if (!w->interval)
        return;
    row_bands rb;
    bands_of(w, b, r, &rb);
    static const char *const keys[2][2] = {{"time_s", NULL}, {"ttft_s", "tpot_s"}};
    sim_jw_object_begin(j, "band");
    for (int i = 0; i < rb.n; i++) {
        const char *key = keys[rb.n - 1][i];
        if (rb.ok[i] && isfinite(rb.at_s[i]))
            (void)sim_band_json(j, key, &rb.b[i], rb.at_s[i]);
        else
            sim_jw_null(j, key);
    }
    sim_jw_object_end(j);
}

/* A count, or null when it does not apply (-1). */
static void json_count(sim_jw *w, const char *key, int64_t v)
{
    if (v < 0)
        sim_jw_null(w, key);
    else
        sim_jw_int(w, key, v);
}

/* Starts a JSON row: model, hardware and kind, then the layout (tp, and pp, dp and ep when
 * swept). */
static sim_jw *json_row_open(writer *w, const cli_sweep_block *b, const sim_sweep_row *r,
                             const char *kind)
{
    sim_jw *j = &w->jw;
    sim_jw_object_begin(j, NULL);
    sim_jw_str(j, "model", b->model);
    sim_jw_str(j, "hardware", b->hw);
    sim_jw_str(j, "kind", kind);
    json_count(j, "tp", r->tp);
    if (w->with_pp)
        json_count(j, "pp", r->pp);
    if (w->with_dp) {
        json_count(j, "dp", r->dp);
        sim_jw_bool(j, "ep", r->ep);
    }
    return j;
}

/* Ends a JSON row: calibration, SLO and cost. */
static void json_row_close(sim_jw *j, const cli_sweep_block *b, const sim_sweep_row *r)
{
    sim_jw_bool(j, "calibrated", b->calib_path != NULL);
    sim_jw_num(j, "alpha", b->alpha);
    sim_jw_num(j, "beta_s", b->beta_s);
    sim_jw_bool(j, "meets_slo", r->meets_slo);
    sim_jw_num(j, "gpu_hour_usd", b->gpu_hour_usd > 0.0 ? b->gpu_hour_usd : (double)NAN);
    sim_jw_num(j, "cost_per_mtok_usd", r->cost_per_mtok_usd);
    sim_jw_object_end(j);
}

static void write_json_row(writer *w, const cli_sweep_block *b, const sim_sweep_row *r)
{
    sim_jw *j = json_row_open(w, b, r, sim_sweep_kind_name(r->kind));
    json_count(j, "batch", r->batch);
    json_count(j, "context_tokens", r->kind == SIM_SWEEP_DECODE ? r->context_tokens : -1);
    json_count(j, "prompt_tokens", r->prompt_tokens);
    json_count(j, "output_tokens", r->output_tokens);
    sim_jw_num(j, "time_s", r->time_s);
    sim_jw_num(j, "tpot_s", r->tpot_s);
    sim_jw_num(j, "ttft_s", r->ttft_s);
    sim_jw_num(j, "tokens_per_s", r->tokens_per_s);
    sim_jw_num(j, "tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
    sim_jw_bool(j, "fits", !r->status);
    sim_jw_str(j, "status", sim_sweep_status_name(r->status));
    if (r->bound == SIM_BOUND_NONE)
        sim_jw_null(j, "bound");
    else
        sim_jw_str(j, "bound", sim_bound_name(r->bound));
    json_bands(w, j, b, r);
    json_row_close(j, b, r);
}

/* The table's tp column: "8", "8x2" with pipeline stages, then "d4" with data-parallel ranks
 * and "e" with expert parallelism ("1d8e": TP 1, DP 8, EP). */
static void layout_str(char *b, size_t n, const sim_sweep_row *r)
{
    int k = r->pp > 1 ? snprintf(b, n, "%lldx%lld", (long long)r->tp, (long long)r->pp)
                      : snprintf(b, n, "%lld", (long long)r->tp);
    if (k > 0 && (size_t)k < n && r->dp > 1)
        k += snprintf(b + k, n - (size_t)k, "d%lld", (long long)r->dp);
    if (k > 0 && (size_t)k < n && r->ep)
        snprintf(b + k, n - (size_t)k, "e");
}

/* Milliseconds with 3 decimals, or "-" for NaN. */
static void ms(char *b, size_t n, double s)
{
    if (isfinite(s))
        snprintf(b, n, "%.3f", s * 1e3);
    else
        snprintf(b, n, "-");
}

static void write_table_row(writer *w, const cli_sweep_block *b, const sim_sweep_row *r)
{
    cli_outbuf *o = &w->out;
    if (o->len + 1024 > o->cap)
        cli_outbuf_flush(o);
    char t[32], tp[32], tf[32], ctx[32], cost[32], tok[32], tokg[32], lay[32];
    layout_str(lay, sizeof(lay), r);
    ms(t, sizeof(t), r->time_s);
    ms(tp, sizeof(tp), r->tpot_s);
    ms(tf, sizeof(tf), r->ttft_s);
    if (r->kind == SIM_SWEEP_OFFLINE)
        snprintf(ctx, sizeof(ctx), "%lld+%lld", (long long)r->prompt_tokens,
                 (long long)r->output_tokens);
    else
        snprintf(ctx, sizeof(ctx), "%lld", (long long)r->context_tokens);
    if (isfinite(r->cost_per_mtok_usd))
        snprintf(cost, sizeof(cost), "%.4f", r->cost_per_mtok_usd);
    else
        snprintf(cost, sizeof(cost), "-");
    snprintf(tok, sizeof(tok), isfinite(r->tokens_per_s) ? "%.1f" : "-", r->tokens_per_s);
    snprintf(tokg, sizeof(tokg), isfinite(r->tokens_per_s) ? "%.1f" : "-", r->tokens_per_s_per_gpu);
    o->len += (size_t)snprintf(
        o->buf + o->len, o->cap - o->len,
        "%-16s %-14s %3s %6lld %11s %10s %10s %10s %11s %11s %-9s %-8s %-4s %-3s %10s\n", b->model,
        b->hw, lay, (long long)r->batch, ctx, t, tp, tf, tok, tokg,
        sim_sweep_status_name(r->status), r->bound ? sim_bound_name(r->bound) : "-",
        b->calib_path ? "yes" : "no", r->meets_slo ? "yes" : "no", cost);
}

static void json_dist(sim_jw *j, const char *key, const sim_dist *d)
{
    sim_jw_object_begin(j, key);
    sim_jw_num(j, "mean", d->mean);
    sim_jw_num(j, "p50", d->p50);
    sim_jw_num(j, "p90", d->p90);
    sim_jw_num(j, "p99", d->p99);
    sim_jw_object_end(j);
}

static void write_json_serving_row(writer *w, const cli_sweep_block *b, const sim_sweep_row *r)
{
    sim_jw *j = json_row_open(w, b, r, "serving");
    json_count(j, "concurrency", r->concurrency);
    sim_jw_num(j, "request_rate_per_s", r->rate_per_s);
    json_count(j, "prompt_tokens", r->prompt_tokens);
    json_count(j, "output_tokens", r->output_tokens);
    json_count(j, "n_requests", r->n_requests);
    json_dist(j, "ttft_s", &r->ttft_dist_s);
    json_dist(j, "tpot_s", &r->tpot_dist_s);
    json_dist(j, "e2e_s", &r->e2e_dist_s);
    sim_jw_num(j, "queue_s_mean", r->queue_mean_s);
    sim_jw_bool(j, "ttft_queued", r->ttft_queued);
    sim_jw_num(j, "prefix_hit_frac", r->prefix_hit_frac);
    sim_jw_num(j, "requests_per_s", r->requests_per_s);
    sim_jw_num(j, "output_tokens_per_s", r->tokens_per_s);
    sim_jw_num(j, "output_tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
    json_count(j, "preemptions", r->preemptions);
    sim_jw_num(j, "kv_peak_frac", r->kv_peak_frac);
    if (w->with_seeds) {
        json_count(j, "n_seeds", r->n_seeds);
        sim_jw_num(j, "ttft_slo_s", r->ttft_s);
        sim_jw_num(j, "tpot_slo_s", r->tpot_s);
        sim_jw_num(j, "ttft_spread_s", r->ttft_spread_s);
        sim_jw_num(j, "tpot_spread_s", r->tpot_spread_s);
    }
    sim_jw_bool(j, "fits", !r->status);
    sim_jw_str(j, "status", sim_sweep_status_name(r->status));
    json_bands(w, j, b, r);
    json_row_close(j, b, r);
}

#define SERVING_TABLE_FMT                                                                          \
    "%-16s %-14s %3s %6s %8s %9s %9s %9s %9s %9s %9s %10s %10s %5s %-9s %-3s %-3s %9s\n"

static void write_table_serving_row(writer *w, const cli_sweep_block *b, const sim_sweep_row *r)
{
    cli_outbuf *o = &w->out;
    if (o->len + 1024 > o->cap)
        cli_outbuf_flush(o);
    char tp[16], conc[16], rate[32], f[6][32], tok[32], tokg[32], pre[16], cost[32];
    layout_str(tp, sizeof(tp), r);
    snprintf(conc, sizeof(conc), r->concurrency > 0 ? "%lld" : "-", (long long)r->concurrency);
    snprintf(rate, sizeof(rate), isfinite(r->rate_per_s) ? "%.4g" : "-", r->rate_per_s);
    ms(f[0], sizeof(f[0]), r->ttft_dist_s.p50);
    ms(f[1], sizeof(f[1]), r->ttft_dist_s.p90);
    ms(f[2], sizeof(f[2]), r->tpot_dist_s.p50);
    ms(f[3], sizeof(f[3]), r->tpot_dist_s.p90);
    ms(f[4], sizeof(f[4]), r->e2e_dist_s.p50);
    ms(f[5], sizeof(f[5]), r->e2e_dist_s.p90);
    snprintf(tok, sizeof(tok), isfinite(r->tokens_per_s) ? "%.1f" : "-", r->tokens_per_s);
    snprintf(tokg, sizeof(tokg), isfinite(r->tokens_per_s) ? "%.1f" : "-", r->tokens_per_s_per_gpu);
    snprintf(pre, sizeof(pre), r->preemptions >= 0 ? "%lld" : "-", (long long)r->preemptions);
    snprintf(cost, sizeof(cost), isfinite(r->cost_per_mtok_usd) ? "%.4f" : "-",
             r->cost_per_mtok_usd);
    o->len += (size_t)snprintf(o->buf + o->len, o->cap - o->len, SERVING_TABLE_FMT, b->model, b->hw,
                               tp, conc, rate, f[0], f[1], f[2], f[3], f[4], f[5], tok, tokg, pre,
                               sim_sweep_status_name(r->status), b->calib_path ? "yes" : "no",
                               r->meets_slo ? "yes" : "no", cost);
    if (w->with_seeds && r->status == SIM_SWEEP_OK)
        o->len += (size_t)snprintf(
            o->buf + o->len, o->cap - o->len,
            "    mean of %lld seeds; SLO judged on the worst: TTFT p%d %.3f ms (range %.3f), "
            "TPOT p%d %.3f ms (range %.3f)\n",
            (long long)r->n_seeds, w->o->slo.percentile, sim_s_to_ms(r->ttft_s),
            sim_s_to_ms(r->ttft_spread_s), w->o->slo.percentile, sim_s_to_ms(r->tpot_s),
            sim_s_to_ms(r->tpot_spread_s));
}

static void write_row(writer *w, const cli_sweep_block *b, const sim_sweep_row *r)
{
    const int serving = r->kind == SIM_SWEEP_SERVING;
    if (w->format == FMT_CSV && serving)
        cli_sweep_serving_csv_row(&w->out, b, r);
    else if (w->format == FMT_CSV)
        cli_sweep_csv_row(&w->out, b, r);
    else if (w->format == FMT_JSON && serving)
        write_json_serving_row(w, b, r);
    else if (w->format == FMT_JSON)
        write_json_row(w, b, r);
    else if (serving)
        write_table_serving_row(w, b, r);
    else
        write_table_row(w, b, r);
    /* With --pp the CSV row ends with its pp column, with --dp or --ep then dp and ep, with
     * several seeds then n_seeds, the judged percentiles and their ranges over the seeds. */
    if (w->format == FMT_CSV && (w->with_pp || w->with_dp || w->with_seeds) && w->out.len > 0 &&
        w->out.buf[w->out.len - 1] == '\n') {
        char tail[192] = "";
        int k = w->with_pp ? snprintf(tail, sizeof(tail), ",%lld", (long long)r->pp) : 0;
        if (w->with_dp)
            k += snprintf(tail + k, sizeof(tail) - (size_t)k, ",%lld,%s", (long long)r->dp,
                          r->ep ? "true" : "false");
        if (w->with_seeds)
            snprintf(tail + k, sizeof(tail) - (size_t)k, ",%lld,%.9f,%.9f,%.9f,%.9f",
                     (long long)r->n_seeds, r->ttft_s, r->tpot_s, r->ttft_spread_s,
                     r->tpot_spread_s);
        w->out.len += (size_t)snprintf(w->out.buf + w->out.len - 1, w->out.cap - w->out.len + 1,
                                       "%s\n", tail) -
                      1;
    }
    if (w->interval && w->format != FMT_JSON && w->out.len > 0 &&
        w->out.buf[w->out.len - 1] == '\n') {
        /* CSV: lo and hi of each band (empty without one); table: "lo-hi" in ms ("-"). */
        row_bands rb;
        bands_of(w, b, r, &rb);
        char tail[160] = "";
        int k = 0;
        /* The serving table's rows may carry a second line (the seeds): its bands go on a
         * line of their own. */
        static const char *const names[2] = {"TTFT", "TPOT"};
        if (w->format == FMT_TABLE && rb.n == 2)
            k += snprintf(tail, sizeof(tail), "\n    %d%% band of the means:", w->interval);
        for (int i = 0; i < rb.n; i++) {
            const int have = rb.ok[i] && isfinite(rb.at_s[i]);
            const double lo = rb.b[i].lo_frac * rb.at_s[i], hi = rb.b[i].hi_frac * rb.at_s[i];
            if (w->format == FMT_CSV)
                k += have ? snprintf(tail + k, sizeof(tail) - (size_t)k, ",%.9f,%.9f", lo, hi)
                          : snprintf(tail + k, sizeof(tail) - (size_t)k, ",,");
            else if (rb.n == 2)
                k += have ? snprintf(tail + k, sizeof(tail) - (size_t)k, "%s %s %.3f-%.3f ms",
                                     i ? "," : "", names[i], sim_s_to_ms(lo), sim_s_to_ms(hi))
                          : snprintf(tail + k, sizeof(tail) - (size_t)k, "%s %s none", i ? "," : "",
                                     names[i]);
            else
                k += have ? snprintf(tail + k, sizeof(tail) - (size_t)k, " %.3f-%.3f",
                                     sim_s_to_ms(lo), sim_s_to_ms(hi))
                          : snprintf(tail + k, sizeof(tail) - (size_t)k, " -");
        }
        w->out.len += (size_t)snprintf(w->out.buf + w->out.len - 1, w->out.cap - w->out.len + 1,
                                       "%s\n", tail) -
                      1;
    }
    w->n_rows++;
}

/* --best and --pareto: keep the block's selection, write it at the block's end. */
typedef struct selector {
    enum sweep_select mode;
    writer *w;
    int have_best;
    sim_sweep_row best;
    sim_pareto_point *front;
    sim_sweep_row *front_rows, *tmp_rows;
    int64_t *row_ids;
    int64_t next_id;
    size_t n_front;
    int overflow;
} selector;

static void sweep_header(char *header, size_t cap, const cli_sweep_opts *o, enum sweep_format fmt,
                         int interval);
static void json_header(writer *w, const char *engine);

static int sel_begin(void *ctx, const cli_sweep_block *b)
{
    selector *s = ctx;
    if (b->calib_other_engine)
        fprintf(stderr,
                "llmstep: note: no calibration of %s for engine %s in %s (%s is for another "
                "engine): %s rows uncalibrated\n",
                b->hw, b->engine, s->w->o->calibration, b->calib_other_engine, b->model);
    if (s->w->interval) { /* a block without a band says why its rows have none */
        int fam[2], any = 0;
        sim_pred_band pb;
        struct sim_err first, err;
        /* Serving rows: TTFT in either regime. */
        for (int q = 0; q <= (s->w->o->kind == SIM_SWEEP_SERVING); q++) {
            const int n = kind_families(s->w->o->kind, q, fam);
            for (int i = 0; i < n; i++)
                any |= sim_calib_band_get(b->cal, b->calib_path, fam[i], s->w->interval, &pb,
                                          i || q ? &err : &first) == SIM_OK;
        }
        if (!any)
            fprintf(stderr,
                    "llmstep: note: sweep --interval: %s on %s: %s; its rows have no band\n",
                    b->model, b->hw, first.msg);
    }
    if (s->w->header && s->w->format == FMT_JSON) {
        json_header(s->w, b->engine);
        s->w->header = NULL;
    } else if (s->w->header) {
        sweep_header(s->w->header, s->w->header_cap, s->w->o, s->w->format, s->w->interval);
        size_t n = strlen(s->w->header);
        memcpy(s->w->out.buf + s->w->out.len, s->w->header, n);
        s->w->out.len += n;
        s->w->header = NULL;
    }
    s->have_best = 0;
    s->n_front = 0;
    return CLI_OK;
}

static int sel_row(void *ctx, const cli_sweep_block *b, const sim_sweep_row *r)
{
    selector *s = ctx;
    if (s->mode == SEL_ALL) {
        write_row(s->w, b, r);
        return CLI_OK;
    }
    if (s->mode == SEL_BEST) {
        if (r->meets_slo && (!s->have_best || sim_sweep_better(r, &s->best))) {
            s->best = *r;
            s->have_best = 1;
        }
        return CLI_OK;
    }
    if (r->status != SIM_SWEEP_OK || !isfinite(sim_sweep_latency_s(r)))
        return CLI_OK;
    sim_pareto_point p = {sim_sweep_latency_s(r), r->tokens_per_s_per_gpu, s->next_id++};
    size_t old_n = s->n_front;
    int got = sim_pareto_insert(s->front, &s->n_front, PARETO_CAP, p);
    if (got < 0)
        s->overflow = 1;
    if (got <= 0)
        return CLI_OK;
    /* front_rows[j] belongs to the member with id row_ids[j]; realign them with the new
     * frontier (members keep their relative order, so one forward walk finds them). */
    size_t j = 0;
    for (size_t i = 0; i < s->n_front; i++) {
        if (s->front[i].id == p.id) {
            s->tmp_rows[i] = *r;
            continue;
        }
        while (j < old_n && s->row_ids[j] != s->front[i].id)
            j++;
        s->tmp_rows[i] = s->front_rows[j++];
    }
    for (size_t i = 0; i < s->n_front; i++) {
        s->front_rows[i] = s->tmp_rows[i];
        s->row_ids[i] = s->front[i].id;
    }
    return CLI_OK;
}

static int sel_end(void *ctx, const cli_sweep_block *b)
{
    selector *s = ctx;
    if (s->mode == SEL_BEST) {
        if (s->have_best)
            write_row(s->w, b, &s->best);
        else
            cli_error("sweep: no configuration of %s on %s fits and meets the SLOs", b->model,
                      b->hw);
    } else if (s->mode == SEL_PARETO) {
        for (size_t i = 0; i < s->n_front; i++)
            write_row(s->w, b, &s->front_rows[i]);
    }
    return CLI_OK;
}

static int parse_axis(const char *opt, const char *spec, int64_t min, int64_t max, int64_t *out,
                      size_t *n)
{
    struct sim_err err;
    if (sim_sweep_parse_list(spec, min, max, out, AXIS_CAP, n, &err) != SIM_OK) {
        cli_error("sweep: %s %s", opt, err.msg);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The sweep's settings after parsing, before the axes are expanded. */
/* The options of --kind serving only (serving_names). */
enum { N_SERVING_OPTS = 17 };

typedef struct sweep_args {
    char *models, *hws, *price_spec;
    const char *tp_spec, *pp_spec, *dp_spec, *ep_spec, *batch_spec, *ctx_spec, *conc_spec,
        *rate_spec, *engine, *format;
    int64_t slo_pct;
    int best, pareto, no_host, ep;
    double slo_tpot_s, slo_ttft_s;
    /* options of --kind serving only, given or not, in the order of serving_names */
    int serving_seen[N_SERVING_OPTS];
    int no_prefix_caching;
    cli_spec_args sp;
    int64_t jobs;
    int64_t interval; /* --interval L (0: none) */
    enum sweep_select select;
    enum sweep_format fmt;
} sweep_args;

static const char *const serving_names[N_SERVING_OPTS] = {"concurrency",
                                                          "request-rate",
                                                          "slo-percentile",
                                                          "num-requests",
                                                          "range-ratio",
                                                          "burstiness",
                                                          "seed",
                                                          "seeds",
                                                          "jobs",
                                                          "prefix-tokens",
                                                          "distinct-prompts",
                                                          "prefix-caching",
                                                          "no-prefix-caching",
                                                          "spec",
                                                          "spec-tokens",
                                                          "acceptance",
                                                          "spec-model"};

static int parse_slo_pct(const char *arg, void *dst, char *msg, size_t cap)
{
    int64_t *v = dst;
    if (cli_parse_i64(arg, 0, 100, v) != 0 || (*v != 50 && *v != 90 && *v != 99)) {
        snprintf(msg, cap, "--slo-percentile '%s': expected 50, 90 or 99", arg);
        return -1;
    }
    return 0;
}

static int parse_kind(const char *arg, void *dst, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    return sim_sweep_kind_parse(arg, dst) != SIM_OK;
}

static int parse_sweep_args(int argc, char **argv, cli_sweep_opts *o, sweep_args *a, int *done)
{
    memset(a, 0, sizeof(*a));
    a->tp_spec = SIM_SWEEP_DEFAULT_TP;
    a->format = "csv";
    int *sv = a->serving_seen;
    /* In the order of the usage. No help of their own: --ep-values ("--ep 0,1", which
     * cmd_sweep rewrites to it), --range-ratio, --burstiness and --seed (on --num-requests' line),
     * --kv-dtype (on --dtype's) and the scheduler limits (on --max-num-seqs'). */
    const cli_opt t[] = {
        {.name = "model",
         .kind = CLI_OPT_STR,
         .dst = &a->models,
         .heading = "Options:\n",
         .help = "  --model LIST               model ids or config paths, comma-separated\n"},
        CLI_STR_H("hw", &a->hws,
                  "  --hw LIST                  hardware ids or profile paths, comma-separated\n"),
        CLI_STR_H("tp", &a->tp_spec,
                  "  --tp LIST                  tensor-parallel degrees (default 1,2,4,8)\n"),
        CLI_STR_H(
            "pp", &a->pp_spec,
            "  --pp LIST                  pipeline stages, crossed with --tp (default 1): rows of\n"
            "                             TP x PP on tp x pp GPUs (per-GPU figures and cost over\n"
            "                             all of them); one batch through the stages per step\n"
            "                             (docs/engine.md); adds a pp column (CSV, JSON)\n"),
        CLI_STR_H(
            "dp", &a->dp_spec,
            "  --dp LIST                  data-parallel ranks, crossed inside --pp (default 1): a\n"
            "                             batch is the total over the ranks (ceil(B / DP) each), "
            "a\n"
            "                             serving point's load is dealt to DP engines; GPUs = TP "
            "x\n"
            "                             PP x DP; adds dp and ep columns (CSV, JSON)\n"),
        CLI_FLAG_H(
            "ep", &a->ep,
            "  --ep [0,1]                 expert parallelism (MoE models; vLLM\n"
            "                             --enable-expert-parallel): --ep on every row, "
            "--ep 0,1\n"
            "                             crossed inside --dp; adds the dp and ep columns\n"),
        {.name = "ep-values", .kind = CLI_OPT_STR, .dst = &a->ep_spec, .same_as = "ep"},
        CLI_STR_H("batch", &a->batch_spec,
                  "  --batch LIST               batch sizes (default 1:256)\n"),
        CLI_STR_H(
            "context", &a->ctx_spec,
            "  --context LIST             decode context / prefill prompt tokens (default 2048)\n"
            "                             LIST: integers and ranges a:b (a, 2a, 4a, ... <= b),\n"
            "                             comma-separated: 1,2,4,8  1:256  512:8192,12288\n"),
        CLI_CUSTOM_H(
            "kind", parse_kind, &o->kind,
            "  --kind K                   decode (default), prefill, offline or serving\n"),
        CLI_I64_H("prompt-tokens", &o->prompt_tokens, 1, (double)(INT64_C(1) << 30),
                  "  --prompt-tokens L          offline, serving: prompt length\n"),
        CLI_I64_H("output-tokens", &o->output_tokens, 1, (double)(INT64_C(1) << 30),
                  "  --output-tokens O          offline, serving: tokens generated per sequence\n"),
        CLI_STR_H(
            "calibration", &o->calibration,
            "  --calibration FILE|ID|DIR  alpha and beta_s: a file or calibration id (its "
            "hardware\n"
            "                             only), or a folder (each GPU's file for the engine; a "
            "GPU\n"
            "                             with files for other engines only is uncalibrated, said\n"
            "                             on stderr); rows without one say calibrated=false\n"),
        CLI_MS_H("slo-tpot-ms", &a->slo_tpot_s, 1e-6, 1e9,
                 "  --slo-tpot-ms X            time-per-output-token objective (decode, offline, "
                 "serving)\n"),
        CLI_MS_H("slo-ttft-ms", &a->slo_ttft_s, 1e-6, 1e9,
                 "  --slo-ttft-ms Y            time-to-first-token objective (prefill, offline, "
                 "serving)\n"),
        {.name = "slo-percentile",
         .kind = CLI_OPT_CUSTOM,
         .dst = &a->slo_pct,
         .parse = parse_slo_pct,
         .seen = &sv[2],
         .help =
             "  --slo-percentile P         serving: judge the SLOs at p50, p90 (default) or p99\n"},
        CLI_STR_SEEN_H(
            "concurrency", &a->conc_spec, &sv[0],
            "  --concurrency LIST         serving: closed-loop clients (default 1:256)\n"),
        CLI_STR_SEEN_H("request-rate", &a->rate_spec, &sv[1],
                       "  --request-rate LIST        serving: open-loop Poisson rates, requests/s "
                       "(1,2.5,10 or\n"
                       "                             ranges a:b doubling from a)\n"),
        CLI_I64_SEEN_H(
            "num-requests", &o->num_requests, 1, SIM_WORKLOAD_MAX_REQUESTS, &sv[3],
            "  --num-requests K, --range-ratio R, --burstiness B, --seed S\n"
            "                             serving: the workload, as for `llmstep serve` (lengths\n"
            "                             +-10% by default; --range-ratio 0: strict lockstep)\n"),
        CLI_DBL_SEEN("range-ratio", &o->range_ratio, 0.0, 0.999, &sv[4]),
        CLI_DBL_SEEN("burstiness", &o->burstiness, 1e-3, 1e3, &sv[5]),
        CLI_U64_SEEN("seed", &o->seed, 0, 9.3e18, &sv[6]),
        CLI_I64_SEEN_H(
            "seeds", &o->n_seeds, 1, 100, &sv[7],
            "  --seeds N                  serving: simulate each point with seeds S .. S+N-1: the\n"
            "                             statistics are their means, an SLO holds only when it\n"
            "                             holds at every seed; adds n_seeds, the judged TTFT and\n"
            "                             TPOT percentiles and their ranges over the seeds\n"
            "                             (default 20 with --best or --pareto unless the workload\n"
            "                             is deterministic, else 1)\n"),
        CLI_I64_SEEN_H(
            "prefix-tokens", &o->prefix_tokens, 1, 1 << 24, &sv[9],
            "  --prefix-tokens P, --distinct-prompts K, --prefix-caching on|off,\n"
            "  --no-prefix-caching\n"
            "                             serving: shared prefixes and V1 prefix caching,\n"
            "                             as for `llmstep serve`; adds prefix_hit_frac "
            "(JSON)\n"),
        CLI_I64_SEEN_H("distinct-prompts", &o->distinct_prompts, 1, SIM_WORKLOAD_MAX_REQUESTS,
                       &sv[10], NULL),
        {.name = "prefix-caching", .kind = CLI_OPT_SCHED, .dst = &o->sched, .seen = &sv[11]},
        {.name = "no-prefix-caching",
         .kind = CLI_OPT_FLAG,
         .dst = &a->no_prefix_caching,
         .seen = &sv[12]},
        {.name = "spec",
         .kind = CLI_OPT_CUSTOM,
         .dst = &a->sp,
         .parse = cli_parse_spec_method,
         .seen = &sv[13],
         .help = "  --spec M, --spec-tokens K, --acceptance A[,..], --spec-model ID\n"
                 "                             serving: speculative decoding, as for `llmstep "
                 "serve`\n"},
        {.name = "spec-tokens",
         .kind = CLI_OPT_I64,
         .dst = &a->sp.k,
         .min = 1,
         .max = SIM_SPEC_MAX_TOKENS,
         .seen = &sv[14]},
        {.name = "acceptance",
         .kind = CLI_OPT_CUSTOM,
         .dst = &a->sp,
         .parse = cli_parse_acceptance,
         .seen = &sv[15]},
        {.name = "spec-model", .kind = CLI_OPT_STR, .dst = &a->sp.model, .seen = &sv[16]},
        CLI_I64_SEEN_H(
            "jobs", &a->jobs, 1, SIM_SWEEP_MAX_JOBS, &sv[8],
            "  --jobs N                   serving: simulate N points at a time on N threads\n"
            "                             (default: the online cores); same rows, same order\n"),
        CLI_STR_H("gpu-hour-usd", &a->price_spec,
                  "  --gpu-hour-usd P[,P..]     USD per GPU-hour, one for all or one per --hw: "
                  "adds the cost\n"
                  "                             per million tokens = P x tp / 3600 / (tokens/s) x "
                  "1e6\n"),
        CLI_FLAG_H("best", &a->best,
                   "  --best                     per model and hardware, only the configuration "
                   "with the\n"
                   "                             highest tokens/s per GPU that fits and meets the "
                   "SLOs\n"),
        CLI_FLAG_H("pareto", &a->pareto,
                   "  --pareto                   per model and hardware, only the configurations "
                   "on the\n"
                   "                             latency (TPOT; prefill: TTFT) vs tokens/s-per-GPU "
                   "frontier\n"),
        CLI_STR_H("dtype", &o->dtype,
                  "  --dtype T, --kv-dtype T    fp16|bf16|fp8 (default: the model's)\n"),
        CLI_STR("kv-dtype", &o->kv_dtype),
        CLI_STR_H("engine", &a->engine,
                  "  --engine ID                engine profile (default: the calibration's, else "
                  "vllm-v1,\n"
                  "                             as every command)\n"),
        CLI_SCHED_H("max-num-seqs", &o->sched,
                    "  --max-num-seqs N, --max-model-len N, --gpu-memory-utilization F,\n"
                    "  --max-num-batched-tokens N\n"
                    "                             scheduler and memory settings (default: the "
                    "engine's; the\n"
                    "                             model's max_position_embeddings)\n"),
        CLI_SCHED("max-model-len", &o->sched),
        CLI_SCHED("gpu-memory-utilization", &o->sched),
        CLI_SCHED("max-num-batched-tokens", &o->sched),
        CLI_SCHED_H("async-scheduling", &o->sched,
                    "  --async-scheduling on|off  V1: the next step's host work overlaps the GPU\n"
                    "                             (default: the engine's; on from vLLM 0.14)\n"),
        CLI_FLAG_H("no-host-time", &a->no_host,
                   "  --no-host-time             leave out the engine's host time per step\n"),
        CLI_STR_H("format", &a->format, "  --format csv|json|table    default csv\n"),
        CLI_I64_H(
            "interval", &a->interval, 10, 100,
            "  --interval L               with --calibration: the L% band (10, 20, ..., 100)\n"
            "                             around each prediction, from its GPU's calibration\n"
            "                             (time_s; serving: the TTFT and TPOT means): CSV\n"
            "                             band_lo_s, band_hi_s (serving ttft_mean_lo_s ..\n"
            "                             tpot_mean_hi_s), JSON \"band\", a table column;\n"
            "                             empty where that calibration has none\n"),
    };
    int rc = cli_opts_parse_help("sweep", argc, argv, t, CLI_N(t), &sweep_help, done, NULL);
    if (a->no_host)
        o->host_time = 0;
    return rc;
}

/* The lists of names and prices, the format and the dtypes. */
static int check_sweep_names(cli_sweep_opts *o, sweep_args *a)
{
    if (a->best && a->pareto) {
        cli_error("sweep: give one of --best and --pareto");
        return CLI_USAGE;
    }
    a->select = a->best ? SEL_BEST : a->pareto ? SEL_PARETO : SEL_ALL;
    if (!a->models || !a->hws) {
        cli_error("sweep: --model and --hw are required (see llmstep sweep --help)");
        return CLI_USAGE;
    }
    if (cli_split_names(a->models, o->models, CLI_SWEEP_MAX_NAMES, &o->n_models) != 0 ||
        cli_split_names(a->hws, o->hws, CLI_SWEEP_MAX_NAMES, &o->n_hws) != 0) {
        cli_error("sweep: --model and --hw take up to %d comma-separated names",
                  CLI_SWEEP_MAX_NAMES);
        return CLI_USAGE;
    }
    if (a->price_spec) {
        /* One price for every GPU, or one per --hw in order. */
        const char *prices[CLI_SWEEP_MAX_NAMES];
        size_t n_prices = 0;
        int bad = cli_split_names(a->price_spec, prices, CLI_SWEEP_MAX_NAMES, &n_prices) != 0 ||
                  (n_prices != 1 && n_prices != o->n_hws);
        for (size_t i = 0; !bad && i < n_prices; i++)
            bad = cli_parse_double(prices[i], 1e-9, 1e9,
                                   n_prices == 1 ? &o->gpu_hour_usd : &o->gpu_hour_usd_hw[i]) != 0;
        if (bad) {
            cli_error("sweep: --gpu-hour-usd: expected one price from 1e-9 to 1e9 USD, or one per "
                      "--hw (%zu)",
                      o->n_hws);
            return CLI_USAGE;
        }
    }
    if (strcmp(a->format, "csv") == 0)
        a->fmt = FMT_CSV;
    else if (strcmp(a->format, "json") == 0)
        a->fmt = FMT_JSON;
    else if (strcmp(a->format, "table") == 0)
        a->fmt = FMT_TABLE;
    else {
        cli_error("sweep: --format '%s': expected csv, json or table", a->format);
        return CLI_USAGE;
    }
    sim_dtype dt = SIM_DTYPE_BF16, kdt = SIM_DTYPE_BF16;
    if ((o->dtype && sim_dtype_parse(o->dtype, &dt) != SIM_OK) ||
        (o->kv_dtype && sim_dtype_parse(o->kv_dtype, &kdt) != SIM_OK) || dt == SIM_DTYPE_FP32 ||
        kdt == SIM_DTYPE_FP32) {
        cli_error("sweep: --dtype and --kv-dtype: expected fp16, bf16 or fp8");
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The checks between the options, and the defaults that depend on them. */
static int check_sweep_args(cli_sweep_opts *o, sweep_args *a)
{
    int rc = check_sweep_names(o, a);
    if (rc != CLI_OK)
        return rc;
    if (a->interval && !sim_band_level_valid(a->interval)) {
        cli_error("sweep: --interval %lld: %s", (long long)a->interval, SIM_BAND_LEVEL_RULE);
        return CLI_USAGE;
    }
    const int serving = o->kind == SIM_SWEEP_SERVING,
              with_lengths = serving || o->kind == SIM_SWEEP_OFFLINE;
    if (with_lengths && (o->prompt_tokens < 0 || o->output_tokens < 0)) {
        cli_error("sweep: --kind %s needs --prompt-tokens and --output-tokens",
                  sim_sweep_kind_name(o->kind));
        return CLI_USAGE;
    }
    if (!with_lengths && (o->prompt_tokens >= 0 || o->output_tokens >= 0)) {
        cli_error("sweep: --prompt-tokens and --output-tokens belong to --kind offline and "
                  "serving (decode and prefill take --context)");
        return CLI_USAGE;
    }
    for (int i = 0; !serving && i < N_SERVING_OPTS; i++)
        if (a->serving_seen[i]) {
            cli_error("sweep: --%s belongs to --kind serving", serving_names[i]);
            return CLI_USAGE;
        }
    if (a->no_prefix_caching) {
        if (o->sched.enable_prefix_caching == 1) {
            cli_error("sweep: --no-prefix-caching and --prefix-caching on contradict");
            return CLI_USAGE;
        }
        o->sched.enable_prefix_caching = 0;
    }
    if (cli_spec_finish("sweep", &a->sp, &o->spec, &o->spec_model) != CLI_OK)
        return CLI_USAGE;
    struct sim_err perr;
    if (sim_workload_prefix_check(o->prefix_tokens, o->distinct_prompts, 0, &perr) != SIM_OK) {
        cli_error("sweep: %s", perr.msg);
        return CLI_USAGE;
    }
    /* A planning answer must not hinge on one draw of the workload: --best and --pareto judge
     * each serving point over SIM_SWEEP_PLANNING_SEEDS seeds unless --seeds says otherwise. */
    if (serving && !a->serving_seen[7])
        o->n_seeds =
            sim_sweep_default_seeds(a->select != SEL_ALL, a->rate_spec != NULL, o->range_ratio);
    if (serving)
        o->jobs = a->serving_seen[8] ? (int)a->jobs : cli_sweep_default_jobs();
    if (serving && (a->batch_spec || a->ctx_spec)) {
        cli_error("sweep: --kind serving takes --concurrency LIST or --request-rate LIST, not "
                  "--%s",
                  a->batch_spec ? "batch" : "context");
        return CLI_USAGE;
    }
    if (a->conc_spec && a->rate_spec) {
        cli_error("sweep: give one of --concurrency (closed loop) and --request-rate (open "
                  "loop)");
        return CLI_USAGE;
    }
    if (o->kind == SIM_SWEEP_OFFLINE && a->ctx_spec) {
        cli_error("sweep: --kind offline takes --prompt-tokens and --output-tokens, not "
                  "--context");
        return CLI_USAGE;
    }
    if (serving) /* the engine and usage context default as for `llmstep serve` (the driver) */
        a->batch_spec = a->conc_spec ? a->conc_spec : SIM_SWEEP_DEFAULT_BATCH;
    if (!a->batch_spec)
        a->batch_spec = SIM_SWEEP_DEFAULT_BATCH;
    if (!a->ctx_spec)
        a->ctx_spec = SIM_SWEEP_DEFAULT_CONTEXT;
    o->engine = a->engine; /* NULL: each block's calibration's, else vllm-v1 (sim_deploy_open) */
    o->slo.percentile = a->slo_pct > 0 ? (int)a->slo_pct : 90;
    o->slo.tpot_s = a->slo_tpot_s;
    o->slo.ttft_s = a->slo_ttft_s;
    return CLI_OK;
}

static const char *selection_name(enum sweep_select select)
{
    return select == SEL_BEST ? "best" : select == SEL_PARETO ? "pareto" : "all";
}

/* The JSON output's members before its rows, and the opening of "rows" (a row a line). */
static void json_header(writer *w, const char *engine)
{
    const cli_sweep_opts *o = w->o;
    const int serving = o->kind == SIM_SWEEP_SERVING;
    sim_jw *j = &w->jw;
    sim_jw_object_begin(j, NULL);
    sim_jw_str(j, "schema_version", "llmstep-sweep/1");
    sim_jw_str(j, "kind", sim_sweep_kind_name(o->kind));
    sim_jw_str(j, "engine", engine);
    if (serving)
        sim_jw_str(j, "arrival", o->n_rates ? "poisson" : "closed");
    sim_jw_str(j, "selection", selection_name(w->select));
    sim_jw_bool(j, "host_time", o->host_time);
    sim_jw_num(j, "slo_tpot_s", o->slo.tpot_s);
    sim_jw_num(j, "slo_ttft_s", o->slo.ttft_s);
    if (serving)
        sim_jw_int(j, "slo_percentile", o->slo.percentile);
    sim_jw_num(j, "gpu_hour_usd", o->gpu_hour_usd);
    sim_jw_array_begin_lines(j, "rows", SIM_JW_LINES_AROUND);
}

/* The CSV or table header for the selection. */
static void sweep_header(char *header, size_t cap, const cli_sweep_opts *o, enum sweep_format fmt,
                         int interval)
{
    const int serving = o->kind == SIM_SWEEP_SERVING;
    if (fmt == FMT_CSV) {
        snprintf(header, cap, "%s", serving ? CLI_SWEEP_SERVING_CSV_HEADER : CLI_SWEEP_CSV_HEADER);
        size_t n = strlen(header);
        if (o->n_pp > 0 && n > 0 && n + 4 < cap)
            snprintf(header + n - 1, cap - n + 1, ",pp\n");
        n = strlen(header);
        if ((o->n_dp > 0 || o->n_ep > 0) && n > 0 && n + 7 < cap)
            snprintf(header + n - 1, cap - n + 1, ",dp,ep\n");
        n = strlen(header);
        if (serving && o->n_seeds > 1 && n > 0 && n + 64 < cap)
            snprintf(header + n - 1, cap - n + 1,
                     ",n_seeds,ttft_slo_s,tpot_slo_s,ttft_spread_s,tpot_spread_s\n");
        n = strlen(header);
        if (interval && n > 0 && n + 64 < cap)
            snprintf(header + n - 1, cap - n + 1, "%s\n",
                     serving ? ",ttft_mean_lo_s,ttft_mean_hi_s,tpot_mean_lo_s,tpot_mean_hi_s"
                             : ",band_lo_s,band_hi_s");
    } else if (serving) {
        snprintf(header, cap, SERVING_TABLE_FMT, "model", "hardware", "tp", "conc", "rate/s",
                 "ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90", "e2e_p50", "e2e_p90", "tok/s",
                 "tok/s/gpu", "preem", "status", "cal", "slo", "usd/Mtok");
    } else {
        snprintf(header, cap,
                 "%-16s %-14s %3s %6s %11s %10s %10s %10s %11s %11s %-9s %-8s %-4s %-3s %10s%s\n",
                 "model", "hardware", "tp", "batch", "context", "time_ms", "tpot_ms", "ttft_ms",
                 "tok/s", "tok/s/gpu", "status", "bound", "cal", "slo", "usd/Mtok",
                 interval ? " band_ms" : "");
    }
}

/* "--ep 0,1" (a list of 0 and 1) to the table's "--ep-values 0,1"; a bare --ep stays a flag. */
static int is_ep_list(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s != '0' && *s != '1' && *s != ',')
            return 0;
    return 1;
}

int cmd_sweep(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--disagg") == 0)
            return cli_sweep_disagg(argc, argv);
    cli_sweep_opts o;
    cli_sweep_opts_init(&o);
    sweep_args a;
    char **args = malloc(((size_t)argc + 1) * sizeof(*args));
    if (!args) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    for (int i = 0; i <= argc; i++)
        args[i] = i < argc && i > 0 && strcmp(argv[i], "--ep") == 0 && i + 1 < argc &&
                          is_ep_list(argv[i + 1])
                      ? (char *)"--ep-values"
                      : argv[i];
    int done, rc = parse_sweep_args(argc, args, &o, &a, &done);
    free(args);
    if (rc != CLI_OK || done)
        return rc;
    rc = check_sweep_args(&o, &a);
    if (rc != CLI_OK)
        return rc;
    const int serving = o.kind == SIM_SWEEP_SERVING;
    const enum sweep_select select = a.select;
    const enum sweep_format fmt = a.fmt;
    const char *tp_spec = a.tp_spec, *batch_spec = a.batch_spec, *ctx_spec = a.ctx_spec,
               *rate_spec = a.rate_spec;
    int64_t *axes = malloc(5 * AXIS_CAP * sizeof(int64_t));
    double *rates = NULL;
    selector sel = {select, NULL, 0, {0}, NULL, NULL, NULL, NULL, 0, 0, 0};
    writer w = {.format = fmt,
                .with_seeds = serving && o.n_seeds > 1,
                .interval = (int)a.interval,
                .with_pp = a.pp_spec != NULL,
                .with_dp = a.dp_spec != NULL || a.ep || a.ep_spec != NULL,
                .o = &o,
                .select = select};
    rc = axes ? CLI_OK : CLI_NUMERIC;
    if (rc == CLI_OK)
        rc = parse_axis("--tp", tp_spec, 1, SIM_SWEEP_MAX_TP, axes, &o.axes.n_tp);
    if (rc == CLI_OK && a.pp_spec) {
        rc = parse_axis("--pp", a.pp_spec, 1, SIM_PP_MAX, axes + 3 * AXIS_CAP, &o.n_pp);
        o.pp = axes + 3 * AXIS_CAP;
    }
    if (rc == CLI_OK && a.dp_spec) {
        rc = parse_axis("--dp", a.dp_spec, 1, SIM_DP_MAX, axes + 4 * AXIS_CAP, &o.n_dp);
        o.dp = axes + 4 * AXIS_CAP;
    }
    int eps[2];
    if (rc == CLI_OK && (a.ep || a.ep_spec)) {
        int64_t v[2];
        size_t n_v = 1;
        v[0] = 1;
        if (a.ep_spec)
            rc = parse_axis("--ep", a.ep_spec, 0, 1, v, &n_v);
        for (size_t i = 0; rc == CLI_OK && i < n_v; i++)
            eps[i] = (int)v[i];
        o.eps = eps;
        o.n_ep = rc == CLI_OK ? n_v : 0;
    }
    if (rc == CLI_OK)
        rc = parse_axis(serving ? "--concurrency" : "--batch", batch_spec, 1,
                        sim_sweep_batch_max(o.kind), axes + AXIS_CAP, &o.axes.n_batch);
    if (rc == CLI_OK && rate_spec) {
        rates = malloc(AXIS_CAP * sizeof(*rates));
        rc = rates ? cli_sweep_parse_rates("sweep", rate_spec, rates, AXIS_CAP, &o.n_rates)
                   : CLI_NUMERIC;
        o.rates = rates;
    }
    if (rc == CLI_OK)
        rc = parse_axis("--context", ctx_spec, sim_sweep_context_min(o.kind), SIM_SWEEP_MAX_CONTEXT,
                        axes + 2 * AXIS_CAP, &o.axes.n_context);
    if (rc != CLI_OK)
        goto cleanup;
    o.axes.tp = axes;
    o.axes.batch = axes + AXIS_CAP;
    o.axes.context = axes + 2 * AXIS_CAP;
    if (select == SEL_PARETO) {
        sel.front = malloc(PARETO_CAP * sizeof(*sel.front));
        sel.front_rows = malloc(PARETO_CAP * sizeof(*sel.front_rows));
        sel.tmp_rows = malloc(PARETO_CAP * sizeof(*sel.tmp_rows));
        sel.row_ids = malloc(PARETO_CAP * sizeof(*sel.row_ids));
        if (!sel.front || !sel.front_rows || !sel.tmp_rows || !sel.row_ids)
            rc = CLI_NUMERIC;
    }
    if (fmt == FMT_JSON)
        sim_jw_init_file(&w.jw, stdout, SIM_JW_COMPACT);
    else if (rc == CLI_OK && cli_outbuf_init(&w.out, stdout, OUTBUF_BYTES) != 0)
        rc = CLI_NUMERIC;
    if (rc != CLI_OK) {
        cli_error("out of memory");
        goto cleanup;
    }
    sel.w = &w;
    /* The header waits for the first block, so a load error leaves stdout empty. */
    char header[1024];
    w.header = header;
    w.header_cap = sizeof(header);
    cli_sweep_sink sink = {&sel, sel_begin, sel_row, sel_end};
    rc = cli_sweep_run(&o, &sink);
    if (sel.overflow)
        cli_error("sweep: the Pareto frontier has more than %d points; only the first are kept",
                  PARETO_CAP);
    /* Once the header is out, the rows are closed even after a failure: the output is JSON. */
    int failed = 0;
    if (fmt == FMT_JSON && !w.header) {
        sim_jw_array_end(&w.jw);
        sim_jw_object_end(&w.jw);
        failed = sim_jw_finish(&w.jw) != SIM_OK;
    }
    if (fmt == FMT_JSON)
        sim_jw_free(&w.jw);
    if ((cli_outbuf_close(&w.out) != 0 || failed) && rc == CLI_OK) {
        cli_error("sweep: writing the output failed");
        rc = CLI_BAD_INPUT;
    }
cleanup:
    free(axes);
    free(rates);
    free(sel.front);
    free(sel.front_rows);
    free(sel.tmp_rows);
    free(sel.row_ids);
    return rc;
}
