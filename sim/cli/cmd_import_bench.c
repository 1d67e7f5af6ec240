/*
 * cmd_import_bench.c - `llmstep import-bench FORMAT FILE...`: benchmark results people already
 * have, as measurement rows (../shared/MEASUREMENTS.md) that validate and calibrate read:
 * vllm-serve, the file of `vllm bench serve --save-result`, and vllm-latency, that of `vllm
 * bench latency --output-json` (sim/io/bench_vllm.h); llmservingsim, the per-request file of
 * LLMServingSim's vLLM benchmark, with the trace its rows replay (sim/io/bench_lss.h); aiperf,
 * aiperf's or genai-perf's profile export (sim/io/bench_aiperf.h). What the
 * file does not say (the GPU, the model as llmstep names it, the TP) comes from the command line;
 * what a row cannot describe is refused, naming it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_write.h"
#include "bench_aiperf.h"
#include "bench_inferencex.h"
#include "bench_lss.h"
#include "bench_mlperf.h"
#include "bench_vllm.h"
#include "meas_json.h"
#include "cli.h"
#include "json_writer.h"
#include "opts.h"
#include "paths.h"

static const cli_help import_bench_help = {
    .head =
        "usage: llmstep import-bench vllm-serve FILE... --hardware ID --model ID --tp N\n"
        "                            [--engine-version V] [--range-ratio R] [--out ROWS.jsonl]\n"
        "       llmstep import-bench vllm-latency FILE... --hardware ID --model ID --tp N\n"
        "                            --batch B --prompt-tokens L --output-tokens O\n"
        "                            [--engine-version V] [--out ROWS.jsonl]\n"
        "       llmstep import-bench vllm-throughput FILE... --hardware ID --model ID --tp N\n"
        "                            --prompt-tokens L --output-tokens O [--engine-version V]\n"
        "                            [--out ROWS.jsonl]\n"
        "       llmstep import-bench llmservingsim REQUESTS.jsonl --hardware ID --model ID --tp N\n"
        "                            --trace TRACE.jsonl [--engine-version V] [--out ROWS.jsonl]\n"
        "       llmstep import-bench aiperf FILE... --hardware ID --model ID --tp N\n"
        "                            [--engine-version V] [--range-ratio R] [--out ROWS.jsonl]\n"
        "       llmstep import-bench inferencex AGG.json... --hardware ID --model ID\n"
        "                            [--range-ratio R] [--engine-version V] [--out ROWS.jsonl]\n"
        "       llmstep import-bench mlperf SUMMARY.txt... --hardware ID --model ID --tp N\n"
        "                            --prompt-tokens L --output-tokens O [--range-ratio R]\n"
        "                            [--engine-version V] [--out ROWS.jsonl]\n"
        "\n"
        "Options:\n",
    .tail =
        "\n"
        "vllm-serve: the result files of `vllm bench serve --save-result` become serving\n"
        "measurement rows (../shared/MEASUREMENTS.md), one a statistic the file holds: the\n"
        "mean, median (p50), p90 and p99 of TTFT, TPOT and E2EL, in seconds. The traffic\n"
        "becomes the row's workload: --max-concurrency N with request rate inf is a closed\n"
        "loop of N clients; a request rate R without a cap is an open loop (Poisson, or gamma\n"
        "with the run's burstiness); rate inf without a cap sends every request at once (a\n"
        "closed loop of as many clients as requests). Requests: the completed ones; lengths:\n"
        "the run's means (total tokens / completed). Refused, with the reason: failed\n"
        "requests, a request rate with a concurrency cap, a ramp-up.\n"
        "\n"
        "vllm-latency: the --output-json file of `vllm bench latency` is one offline_batch row:\n"
        "its avg_latency, in seconds, of --batch prompts of --prompt-tokens tokens, each\n"
        "generating --output-tokens tokens (the file does not say them).\n"
        "\n"
        "vllm-throughput: the --output-json file of `vllm bench throughput` is one\n"
        "offline_batch row: its elapsed_time, in seconds, of num_requests prompts of\n"
        "--prompt-tokens tokens each generating --output-tokens (the run's --input-len and\n"
        "--output-len), which must add up to the file's total_num_tokens.\n"
        "\n"
        "llmservingsim: the requests.jsonl of LLMServingSim's vLLM benchmark (per-request\n"
        "queued, first-token and last-token times) becomes the 12 serving rows of its mean,\n"
        "p50, p90 and p99 TTFT, TPOT and E2E, computed as LLMServingSim does (TTFT from the\n"
        "arrival, or from queued_ts when the arrival is on another clock), and its arrivals\n"
        "and lengths become the request trace the rows replay (--trace, written atomically).\n"
        "\n"
        "aiperf: aiperf's profile_export_aiperf.json (or genai-perf's, the same layout)\n"
        "becomes the serving rows of the avg, p50, p90 and p99 of its time_to_first_token,\n"
        "inter_token_latency (TPOT) and request_latency (E2E). Load: input_config's\n"
        "concurrency (a closed loop; aiperf's default 1) or Poisson request rate; lengths:\n"
        "the mean sequence lengths, spread over their min and max. Refused, with the reason:\n"
        "failed or cancelled requests, a capped or constant rate, a fixed schedule.\n"
        "\n"
        "inferencex: an InferenceX agg_*.json (one vLLM server; its tp, ep, image version):\n"
        "closed loops of conc clients sending 10 x conc requests of lengths uniform on\n"
        "[int(0.8 L), L] for its isl and osl L, as InferenceX's benchmark_lib.sh runs them.\n"
        "\n"
        "mlperf: an mlperf_log_summary.txt of MLPerf LoadGen (PerformanceOnly). Server: the\n"
        "serving rows of its mean, p50, p90, p99 latency (E2E), first-token latency (TTFT)\n"
        "and time per output token (TPOT), Poisson at target_qps; SingleStream: one client;\n"
        "Offline: an offline_batch row of samples_per_query prompts. The file does not say\n"
        "the lengths: --prompt-tokens and --output-tokens are the dataset's means.\n"
        "\n"
        "Serving rows take the run's engine arguments when given: --max-num-seqs,\n"
        "--max-num-batched-tokens, --max-model-len (the row's \"scheduler\").\n"
        "\n"
        "The rows' ids are the file's name without .json (and the metric). Exit status: 0 ok,\n"
        "1 bad input, 2 usage. docs/calibration.md, \"Calibrate from your own benchmark\".\n"
        "Example:\n"
        "  llmstep import-bench vllm-serve run-c64.json --hardware h100-sxm --model qwen3-32b\n"
        "      --tp 2 --engine-version 0.12.0 --out rows.jsonl\n",
};

typedef struct ib_opts {
    const char *hardware, *model, *engine_version, *out, *trace;
    int64_t tp;
    int64_t max_num_seqs, max_num_batched_tokens, max_model_len; /* 0: not given */
    double range_ratio; /* < 0: from the file's per-request lengths, else 0 */
    int64_t batch, prompt_tokens, output_tokens; /* vllm-latency (0: not given) */
} ib_opts;

static const char *const family_name[SIM_VB_FAMILIES] = {"ttft", "tpot", "e2e"};
static const char *const stat_name[SIM_VB_STATS] = {"mean", "p50", "p90", "p99"};

/* The largest range ratio a row takes (lengths L(1 +/- R) stay above 0): --range-ratio's bound
 * and the cap on one read from a file. */
#define IB_RANGE_MAX 0.999

/* The spread of lengths in [lo, hi] about mean as a range ratio: the larger distance. */
static double spread(double mean, int64_t lo, int64_t hi)
{
    const double a = (mean - (double)lo) / mean, b = ((double)hi - mean) / mean;
    return a > b ? a : b;
}

/* A run's range ratio from its prompt and output lengths' means and extremes: the larger
 * spread, capped at IB_RANGE_MAX. */
static double lengths_spread(double in_mean, int64_t in_lo, int64_t in_hi, double out_mean,
                             int64_t out_lo, int64_t out_hi)
{
    return fmin(fmax(spread(in_mean, in_lo, in_hi), spread(out_mean, out_lo, out_hi)),
                IB_RANGE_MAX);
}

/* The file's name without its folder and a ".json", ".jsonl" or ".txt" ending, into out. */
static void stem(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 6 && strcmp(base + n - 6, ".jsonl") == 0)
        n -= 6;
    else if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    else if (n > 4 && strcmp(base + n - 4, ".txt") == 0)
        n -= 4;
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), base);
}

/* A growing text. */
typedef struct ib_text {
    char *p;
    size_t len, cap;
} ib_text;

/* Appends w's text (one finished row) to t; CLI_NUMERIC when memory runs out. */
static int append_row(ib_text *t, sim_jw *w, const char *source)
{
    size_t n = 0;
    char *row = sim_jw_finish(w) == SIM_OK ? sim_jw_take(w, &n) : NULL;
    sim_jw_free(w);
    /* A measurement row (source: what it was made from) must load as `validate` would load it:
     * a statistic of 0 s or a batch above the engine's limit is refused here, not written. */
    if (row && source) {
        sim_meas_set set;
        sim_meas_set_init(&set);
        struct sim_err err;
        const sim_status st = sim_meas_load_text("imported row", row, n, &set, &err);
        sim_meas_set_free(&set);
        if (st != SIM_OK) {
            free(row);
            cli_error("import-bench: %s: the row made from it is not a valid measurement: %s",
                      source, err.msg);
            return CLI_BAD_INPUT;
        }
    }
    if (row && t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (p) {
            t->p = p;
            t->cap = cap;
        }
    }
    if (!row || t->len + n + 1 > t->cap) {
        free(row);
        cli_error("import-bench: out of memory");
        return CLI_NUMERIC;
    }
    memcpy(t->p + t->len, row, n + 1);
    t->len += n;
    free(row);
    return CLI_OK;
}

/* Starts a row in w (a fresh buffer writer): the fields every imported row has, up to and
 * including its kind. */
static void row_begin(sim_jw *w, const ib_opts *o, const char *id, const char *source,
                      const char *kind)
{
    sim_jw_init_buffer(w, SIM_JW_COMPACT);
    sim_jw_object_begin(w, NULL);
    sim_jw_str(w, "id", id);
    sim_jw_str(w, "source", source);
    sim_jw_str(w, "hardware", o->hardware);
    sim_jw_str(w, "model", o->model);
    sim_jw_int(w, "tp", o->tp);
    sim_jw_str(w, "engine", "vllm");
    if (o->engine_version)
        sim_jw_str(w, "engine_version", o->engine_version);
    sim_jw_str(w, "kind", kind);
}

/* The row's "scheduler" from the engine arguments given (none: no object). */
static void row_scheduler(sim_jw *w, const ib_opts *o)
{
    if (!o->max_num_seqs && !o->max_num_batched_tokens && !o->max_model_len)
        return;
    sim_jw_object_begin(w, "scheduler");
    if (o->max_num_seqs)
        sim_jw_int(w, "max_num_seqs", o->max_num_seqs);
    if (o->max_num_batched_tokens)
        sim_jw_int(w, "max_num_batched_tokens", o->max_num_batched_tokens);
    if (o->max_model_len)
        sim_jw_int(w, "max_model_len", o->max_model_len);
    sim_jw_object_end(w);
}

/* Starts in w the serving row of statistic s of family f: id "<id0>-<metric>" and its metric. */
static void serving_row_open(sim_jw *w, const ib_opts *o, const char *id0, const char *source,
                             int f, int s)
{
    char id[200], metric[16];
    snprintf(metric, sizeof(metric), "%s_%s", family_name[f], stat_name[s]);
    snprintf(id, sizeof(id), "%s-%s", id0, metric);
    row_begin(w, o, id, source, "serving");
    sim_jw_str(w, "metric", metric);
}

/* Ends a serving row (its workload written): the scheduler given, the measured time;
 * appended to t. */
static int serving_row_close(ib_text *t, sim_jw *w, const ib_opts *o, const char *source,
                             double measured_s)
{
    row_scheduler(w, o);
    sim_jw_num(w, "measured_s", measured_s);
    sim_jw_object_end(w);
    return append_row(t, w, source);
}

/* One offline_batch row of batch prompts of the given lengths, appended to t. */
static int offline_row(ib_text *t, const ib_opts *o, const char *id, const char *source,
                       int64_t batch, double measured_s)
{
    sim_jw row, *w = &row;
    row_begin(w, o, id, source, "offline_batch");
    sim_jw_int(w, "batch", batch);
    sim_jw_int(w, "prompt_tokens", o->prompt_tokens);
    sim_jw_int(w, "output_tokens", o->output_tokens);
    sim_jw_num(w, "measured_s", measured_s);
    sim_jw_object_end(w);
    return append_row(t, w, source);
}

/*
 * The rows and the trace of an LLMServingSim requests.jsonl: the trace written to o->trace,
 * named in the rows by its file name when it sits in the rows file's folder, else by its
 * absolute path (MEASUREMENTS.md: a relative trace is found from the rows file's folder).
 */
static int lss_rows(const ib_opts *o, const char *path, ib_text *t)
{
    sim_lss_run r;
    struct sim_err err;
    sim_status st = sim_lss_load(path, &r, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    /* The trace: one request a line, as the shared traces (arrivals to the microsecond). */
    ib_text tr = {NULL, 0, 0};
    int rc = CLI_OK;
    for (int64_t i = 0; rc == CLI_OK && i < r.n; i++) {
        sim_jw line, *w = &line;
        sim_jw_init_buffer(w, SIM_JW_COMPACT);
        sim_jw_object_begin(w, NULL);
        sim_jw_num(w, "arrival_s", round(r.arrival_s[i] * 1e6) / 1e6);
        sim_jw_int(w, "prompt_tokens", r.input[i]);
        sim_jw_int(w, "output_tokens", r.output[i]);
        sim_jw_object_end(w);
        rc = append_row(&tr, w, NULL);
    }
    if (rc == CLI_OK && sim_write_atomic(o->trace, tr.p ? tr.p : "", tr.len, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        rc = CLI_BAD_INPUT;
    }
    free(tr.p);
    char tdir[4096], odir[4096], tpath[8200];
    const char *base = strrchr(o->trace, '/');
    base = base ? base + 1 : o->trace;
    if (rc == CLI_OK && !sim_path_folder(o->trace, tdir, sizeof(tdir))) {
        cli_error("import-bench: %s: cannot resolve its folder", o->trace);
        rc = CLI_BAD_INPUT;
    }
    if (rc == CLI_OK) {
        const int same = o->out && strcmp(o->out, "-") != 0 &&
                         sim_path_folder(o->out, odir, sizeof(odir)) && strcmp(odir, tdir) == 0;
        if (same)
            snprintf(tpath, sizeof(tpath), "%s", base);
        else
            snprintf(tpath, sizeof(tpath), "%s/%s", strcmp(tdir, "/") ? tdir : "", base);
    }
    char id0[160], source[600];
    stem(path, id0, sizeof(id0));
    snprintf(source, sizeof(source),
             "LLMServingSim bench requests.jsonl: %s (%lld requests; TTFT and E2E from %s)", path,
             (long long)r.n, r.anchor_queued ? "queued_ts" : "arrival_time");
    for (int f = 0; rc == CLI_OK && f < SIM_VB_FAMILIES; f++)
        for (int s = 0; rc == CLI_OK && s < SIM_VB_STATS; s++) {
            sim_jw row, *w = &row;
            serving_row_open(w, o, id0, source, f, s);
            sim_jw_object_begin(w, "workload");
            sim_jw_str(w, "trace", tpath);
            sim_jw_object_end(w);
            rc = serving_row_close(t, w, o, source, r.stat_s[f][s]);
        }
    sim_lss_free(&r);
    return rc;
}

/* The row of a `vllm bench latency --output-json` file, appended to t. */
static int latency_row(const ib_opts *o, const char *path, ib_text *t)
{
    double avg_s;
    int64_t n_iters;
    struct sim_err err;
    sim_status st = sim_vllm_latency_load(path, &avg_s, &n_iters, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    char id[160], source[600];
    stem(path, id, sizeof(id));
    snprintf(source, sizeof(source),
             "vllm bench latency --output-json: %s (avg_latency of %lld "
             "iterations)",
             path, (long long)n_iters);
    return offline_row(t, o, id, source, o->batch, avg_s);
}

/* The row of a `vllm bench throughput --output-json` file, appended to t: one LLM.generate()
 * of every request, whose lengths must be the file's token total. */
static int throughput_row(const ib_opts *o, const char *path, ib_text *t)
{
    sim_vllm_throughput r;
    struct sim_err err;
    sim_status st = sim_vllm_throughput_load(path, &r, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    const int64_t want = r.num_requests * (o->prompt_tokens + o->output_tokens);
    if (want != r.total_tokens) {
        cli_error("%s: total_num_tokens: %lld, but %lld requests of %lld + %lld tokens are "
                  "%lld: give the run's --input-len and --output-len (a run whose lengths vary, "
                  "a dataset or a range ratio, is not one offline batch of fixed lengths)",
                  path, (long long)r.total_tokens, (long long)r.num_requests,
                  (long long)o->prompt_tokens, (long long)o->output_tokens, (long long)want);
        return CLI_BAD_INPUT;
    }
    char id[160], source[600];
    stem(path, id, sizeof(id));
    snprintf(source, sizeof(source),
             "vllm bench throughput --output-json: %s (elapsed_time of %lld requests)", path,
             (long long)r.num_requests);
    return offline_row(t, o, id, source, r.num_requests, r.elapsed_s);
}

/* What a serving row's workload says: a closed loop of concurrency clients or Poisson (gamma
 * with burstiness) arrivals at rate, fixed or ranged lengths, the requests (0: not said). */
typedef struct serve_traffic {
    int closed;
    int64_t concurrency;
    double rate, burstiness;
    int64_t prompt, output, num_requests;
    double range_ratio;
    int64_t ep_size;   /* > 0: a "run" object with expert_parallel and ep_size */
    const char *image; /* and this image (NULL: none) */
} serve_traffic;

/* One serving row per statistic present (has[f][s]) of stat_s, with the traffic tr; appended
 * to t. (The arrays are read only; not const, which C11 cannot pass a plain 2-D array to.) */
static int serving_rows(ib_text *t, const ib_opts *o, const char *id0, const char *source,
                        double stat_s[SIM_VB_FAMILIES][SIM_VB_STATS],
                        int has[SIM_VB_FAMILIES][SIM_VB_STATS], const serve_traffic *tr)
{
    /* Percentiles of one latency never decrease (p50 <= p90 <= p99): a file where they do
     * was not written by the benchmark it claims to be, or was edited. */
    for (int f = 0; f < SIM_VB_FAMILIES; f++)
        for (int s = SIM_VB_P90, lo = SIM_VB_P50; s < SIM_VB_STATS; s++) {
            if (!has[f][s])
                continue;
            if (has[f][lo] && stat_s[f][s] < stat_s[f][lo]) {
                cli_error("import-bench: %s: %s_%s (%.6g s) is below %s_%s (%.6g s); percentiles "
                          "of one latency cannot decrease",
                          source, family_name[f], stat_name[s], stat_s[f][s], family_name[f],
                          stat_name[lo], stat_s[f][lo]);
                return CLI_BAD_INPUT;
            }
            lo = s;
        }
    for (int f = 0; f < SIM_VB_FAMILIES; f++)
        for (int s = 0; s < SIM_VB_STATS; s++) {
            if (!has[f][s])
                continue;
            sim_jw row, *w = &row;
            serving_row_open(w, o, id0, source, f, s);
            sim_jw_object_begin(w, "workload");
            if (tr->closed) {
                sim_jw_str(w, "arrival", "closed");
                sim_jw_int(w, "concurrency", tr->concurrency);
            } else {
                sim_jw_str(w, "arrival", "poisson");
                sim_jw_num(w, "rate_per_s", tr->rate);
                if (tr->burstiness != 1.0)
                    sim_jw_num(w, "burstiness", tr->burstiness);
            }
            sim_jw_int(w, "prompt_tokens", tr->prompt);
            sim_jw_int(w, "output_tokens", tr->output);
            if (tr->num_requests > 0)
                sim_jw_int(w, "num_requests", tr->num_requests);
            if (tr->range_ratio > 0.0)
                sim_jw_num(w, "range_ratio", tr->range_ratio);
            sim_jw_object_end(w);
            if (tr->ep_size > 0) {
                sim_jw_object_begin(w, "run");
                sim_jw_bool(w, "expert_parallel", tr->ep_size > 1);
                sim_jw_int(w, "ep_size", tr->ep_size);
                if (tr->image && tr->image[0])
                    sim_jw_str(w, "image", tr->image);
                sim_jw_object_end(w);
            }
            const int rc = serving_row_close(t, w, o, source, stat_s[f][s]);
            if (rc != CLI_OK)
                return rc;
        }
    return CLI_OK;
}

/* The rows of one file, appended to t (a line each). */
static int rows_of(const ib_opts *o, const char *path, ib_text *t)
{
    sim_vllm_serve r;
    struct sim_err err;
    sim_status st = sim_vllm_serve_load(path, &r, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    if (r.failed > 0 || r.completed < r.num_prompts) {
        cli_error("%s: completed: %lld of %lld requests completed; the statistics are of the "
                  "completed ones only, which a simulation of the run cannot pick out (rerun "
                  "without failures)",
                  path, (long long)r.completed, (long long)r.num_prompts);
        return CLI_BAD_INPUT;
    }
    if (r.ramp_up) {
        cli_error("%s: ramp_up_strategy: a request rate that ramps is not a workload a row can "
                  "describe (rows have one rate)",
                  path);
        return CLI_BAD_INPUT;
    }
    if (!r.rate_inf && r.max_concurrency > 0) {
        cli_error("%s: max_concurrency: %lld with request_rate %g: an open loop capped at a "
                  "concurrency is not a workload a row can describe (closed loop: rate inf; "
                  "open loop: no cap)",
                  path, (long long)r.max_concurrency, r.request_rate);
        return CLI_BAD_INPUT;
    }
    const double n = (double)r.completed;
    const int64_t prompt = (int64_t)llround((double)r.total_input_tokens / n);
    const int64_t output = (int64_t)llround((double)r.total_output_tokens / n);
    if (prompt < 1 || output < 1) {
        cli_error("%s: %s: %lld tokens over %lld requests: less than one a request", path,
                  prompt < 1 ? "total_input_tokens" : "total_output_tokens",
                  (long long)(prompt < 1 ? r.total_input_tokens : r.total_output_tokens),
                  (long long)r.completed);
        return CLI_BAD_INPUT;
    }
    double rr = o->range_ratio;
    const int fixed = rr < 0.0 && r.n_lens == 0; /* said once the rows are made */
    if (rr < 0.0 && r.n_lens > 0)
        rr = lengths_spread((double)r.total_input_tokens / n, r.in_min, r.in_max,
                            (double)r.total_output_tokens / n, r.out_min, r.out_max);
    else if (rr < 0.0)
        rr = 0.0;
    char id0[160], source[600];
    stem(path, id0, sizeof(id0));
    snprintf(source, sizeof(source), "vllm bench serve --save-result: %s", path);
    const serve_traffic tr = {.closed = r.rate_inf,
                              .concurrency = r.rate_inf && r.max_concurrency > 0 ? r.max_concurrency
                                                                                 : r.completed,
                              .rate = r.request_rate,
                              .burstiness = r.burstiness,
                              .prompt = prompt,
                              .output = output,
                              .num_requests = r.completed,
                              .range_ratio = rr};
    const int rc = serving_rows(t, o, id0, source, r.stat_s, r.has, &tr);
    if (rc == CLI_OK && fixed) /* a refusal stays one line */
        fprintf(stderr,
                "llmstep import-bench: note: %s has no per-request lengths (vllm bench serve "
                "--save-detailed keeps them): fixed lengths, the run's means (%lld and %lld "
                "tokens); --range-ratio R gives the run's --random-range-ratio\n",
                path, (long long)prompt, (long long)output);
    return rc;
}

/* The rows of an aiperf or genai-perf profile export, appended to t. */
static int aiperf_rows(const ib_opts *o, const char *path, ib_text *t)
{
    sim_aiperf_run r;
    struct sim_err err;
    sim_status st = sim_aiperf_load(path, &r, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    double rr = o->range_ratio;
    if (rr < 0.0 && r.isl_min >= 1.0 && r.osl_min >= 1.0 && r.isl_max > 0.0 && r.osl_max > 0.0) {
        rr = lengths_spread(r.isl_avg, (int64_t)r.isl_min, (int64_t)r.isl_max, r.osl_avg,
                            (int64_t)r.osl_min, (int64_t)r.osl_max);
    } else if (rr < 0.0) {
        rr = 0.0;
        fprintf(stderr,
                "llmstep import-bench: note: %s has no length extremes (min, max): fixed "
                "lengths, the run's means; --range-ratio R gives their spread\n",
                path);
    }
    const serve_traffic tr = {.closed = r.concurrency > 0,
                              .concurrency = r.concurrency,
                              .rate = r.request_rate,
                              .burstiness = 1.0,
                              .prompt = llround(r.isl_avg),
                              .output = llround(r.osl_avg),
                              .num_requests = r.completed > 0 ? r.completed : 0,
                              .range_ratio = rr};
    char id0[160], source[600];
    stem(path, id0, sizeof(id0));
    snprintf(source, sizeof(source), "%s profile export: %s", r.tool, path);
    return serving_rows(t, o, id0, source, r.stat_s, r.has, &tr);
}

/* The rows of an MLPerf LoadGen summary, appended to t. */
static int mlperf_rows(const ib_opts *o, const char *path, ib_text *t)
{
    sim_mlperf_run r;
    struct sim_err err;
    sim_status st = sim_mlperf_load(path, &r, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    char id0[160], source[600];
    stem(path, id0, sizeof(id0));
    const char *scen = r.scenario == SIM_MLPERF_SERVER    ? "Server"
                       : r.scenario == SIM_MLPERF_OFFLINE ? "Offline"
                                                          : "SingleStream";
    snprintf(source, sizeof(source), "MLPerf LoadGen summary: %s (%s, result %s)", path, scen,
             r.valid ? "VALID" : "INVALID");
    if (r.scenario == SIM_MLPERF_OFFLINE) {
        if (o->range_ratio >= 0.0) {
            cli_error("import-bench: %s: --range-ratio: an Offline summary is one offline_batch "
                      "row, of fixed lengths",
                      path);
            return CLI_USAGE;
        }
        return offline_row(t, o, id0, source, r.samples_per_query,
                           (double)r.samples_per_query / r.samples_per_s);
    }
    /* loadgen.cc: queries until both min_duration and min_query_count are reached. */
    const double by_time = ceil(r.target_qps * r.min_duration_s);
    const int64_t n =
        r.scenario == SIM_MLPERF_SERVER
            ? (by_time > (double)r.min_query_count ? (int64_t)by_time : r.min_query_count)
            : 0;
    if (n > SIM_WORKLOAD_MAX_REQUESTS) {
        cli_error("%s: target_qps %g over min_duration %g s: %lld requests, more than the %lld "
                  "a simulation holds",
                  path, r.target_qps, r.min_duration_s, (long long)n,
                  (long long)SIM_WORKLOAD_MAX_REQUESTS);
        return CLI_BAD_INPUT;
    }
    const serve_traffic tr = {.closed = r.scenario == SIM_MLPERF_SINGLE_STREAM,
                              .concurrency = 1,
                              .rate = r.target_qps,
                              .burstiness = 1.0,
                              .prompt = o->prompt_tokens,
                              .output = o->output_tokens,
                              .num_requests = n,
                              .range_ratio = o->range_ratio > 0.0 ? o->range_ratio : 0.0};
    return serving_rows(t, o, id0, source, r.stat_s, r.has, &tr);
}

/* InferenceX's client lengths (benchmark_serving.py with --random-range-ratio 0.8, as
 * benchmark_lib.sh runs it): uniform on the integers [int(0.8 L), L]; their mean, and the
 * spread about it as a range ratio. */
static void ix_lengths(int64_t l, int64_t *mean, double *ratio)
{
    const int64_t lo = (int64_t)(0.8 * (double)l);
    const double m = 0.5 * (double)(lo + l);
    *mean = llround(m);
    *ratio = ((double)l - m) / m;
}

/* The rows of an InferenceX agg_*.json, appended to t. */
static int ix_rows(const ib_opts *o0, const char *path, ib_text *t)
{
    sim_ix_run r;
    struct sim_err err;
    sim_status st = sim_ix_load(path, &r, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    if (o0->tp && o0->tp != r.tp) {
        cli_error("import-bench: %s: --tp %lld, but the file's tp is %lld", path, (long long)o0->tp,
                  (long long)r.tp);
        return CLI_USAGE;
    }
    ib_opts o = *o0;
    o.tp = r.tp;
    if (!o.engine_version && r.engine_version[0])
        o.engine_version = r.engine_version;
    int64_t prompt, output;
    double rp, ro;
    ix_lengths(r.isl, &prompt, &rp);
    ix_lengths(r.osl, &output, &ro);
    double rr = fmax(rp, ro);
    if (o.range_ratio >= 0.0) {
        prompt = r.isl;
        output = r.osl;
        rr = o.range_ratio;
    }
    const serve_traffic tr = {.closed = 1,
                              .concurrency = r.conc,
                              .burstiness = 1.0,
                              .prompt = prompt,
                              .output = output,
                              /* benchmark_lib.sh: --num-prompts 10 x concurrency */
                              .num_requests = 10 * r.conc,
                              .range_ratio = rr,
                              .ep_size = r.ep,
                              .image = r.image};
    char id0[160], source[600];
    stem(path, id0, sizeof(id0));
    snprintf(source, sizeof(source),
             "InferenceX result: %s (runner %s, %s %s, isl %lld, osl %lld, conc %lld; client "
             "lengths and requests per InferenceX's benchmark_lib.sh)",
             path, r.hw, r.framework, r.precision, (long long)r.isl, (long long)r.osl,
             (long long)r.conc);
    return serving_rows(t, &o, id0, source, r.stat_s, r.has, &tr);
}

int cmd_import_bench(int argc, char **argv)
{
    ib_opts o = {.tp = 0, .range_ratio = -1.0};
    const cli_opt t[] = {
        CLI_STR_H("hardware", &o.hardware,
                  "  --hardware ID        hardware profile the run used (required: the file does "
                  "not say)\n"),
        CLI_STR_H("model", &o.model,
                  "  --model ID           model id or config path (required; the file's model_id "
                  "is the\n"
                  "                       server's name, printed when it is missing)\n"),
        CLI_I64_H("tp", &o.tp, 1, 65536,
                  "  --tp N               tensor-parallel degree of the server (required; "
                  "inferencex: the\n"
                  "                       file's)\n"),
        CLI_STR_H("engine-version", &o.engine_version,
                  "  --engine-version V   vLLM version of the server (e.g. 0.12.0): picks the "
                  "engine profile\n"),
        CLI_DBL_H("range-ratio", &o.range_ratio, 0.0, IB_RANGE_MAX,
                  "  --range-ratio R      lengths uniform in [L(1-R), L(1+R)] (the run's "
                  "--random-range-ratio;\n"
                  "                       default: from the file's per-request lengths when it "
                  "has them, else 0)\n"),
        CLI_I64_H("batch", &o.batch, 1, SIM_BATCH_MAX_SEQS,
                  "  --batch B            vllm-latency: the run's --batch-size (required)\n"),
        CLI_I64_H(
            "prompt-tokens", &o.prompt_tokens, 1, 1 << 24,
            "  --prompt-tokens L    vllm-latency, vllm-throughput, mlperf: the run's --input-len\n"
            "                       (mlperf: the dataset's mean; required)\n"),
        CLI_I64_H(
            "output-tokens", &o.output_tokens, 1, 1 << 24,
            "  --output-tokens O    vllm-latency, vllm-throughput, mlperf: the run's --output-len\n"
            "                       (mlperf: the dataset's mean; required)\n"),
        CLI_STR_H("trace", &o.trace,
                  "  --trace FILE         llmservingsim: the request trace to write (required)\n"),
        CLI_I64_H("max-num-seqs", &o.max_num_seqs, 1, 1 << 20,
                  "  --max-num-seqs N, --max-num-batched-tokens N, --max-model-len N\n"
                  "                       serving: the run's engine arguments, kept in the rows\n"),
        {.name = "max-num-batched-tokens",
         .kind = CLI_OPT_I64,
         .dst = &o.max_num_batched_tokens,
         .min = 1,
         .max = 1 << 24},
        {.name = "max-model-len",
         .kind = CLI_OPT_I64,
         .dst = &o.max_model_len,
         .min = 1,
         .max = 1 << 24},
        CLI_STR_H("out", &o.out,
                  "  --out FILE           rows file to write atomically (default: standard "
                  "output)\n"),
    };
    int done, first = argc;
    int rc = cli_opts_parse_help("import-bench", argc, argv, t, CLI_N(t), &import_bench_help, &done,
                                 &first);
    if (rc != CLI_OK || done)
        return rc;
    if (first >= argc) {
        cli_error("import-bench: give a format (vllm-serve, vllm-latency, vllm-throughput, "
                  "llmservingsim, aiperf, mlperf or inferencex) and one or more files");
        return CLI_USAGE;
    }
    const char *format = argv[first];
    const int latency = strcmp(format, "vllm-latency") == 0;
    const int thr = strcmp(format, "vllm-throughput") == 0;
    const int lss = strcmp(format, "llmservingsim") == 0;
    const int aip = strcmp(format, "aiperf") == 0;
    const int mlp = strcmp(format, "mlperf") == 0;
    const int ix = strcmp(format, "inferencex") == 0;
    if (!latency && !thr && !lss && !aip && !mlp && !ix && strcmp(format, "vllm-serve") != 0) {
        cli_error("import-bench: unknown format '%s' (expected vllm-serve, vllm-latency, "
                  "vllm-throughput, llmservingsim, aiperf, mlperf or inferencex)",
                  format);
        return CLI_USAGE;
    }
    if (lss && (!o.trace || first + 2 < argc)) {
        cli_error("import-bench: llmservingsim: %s", !o.trace ? "give --trace FILE, where the "
                                                                "run's request trace is written"
                                                              : "one requests file at a time "
                                                                "(each has its own --trace)");
        return CLI_USAGE;
    }
    if (!lss && o.trace) {
        cli_error("import-bench: %s: --trace belongs to llmservingsim", format);
        return CLI_USAGE;
    }
    if ((latency || thr) && (o.max_num_seqs || o.max_num_batched_tokens || o.max_model_len)) {
        cli_error("import-bench: %s: --max-num-seqs, --max-num-batched-tokens and "
                  "--max-model-len belong to the serving formats",
                  format);
        return CLI_USAGE;
    }
    if (thr && o.batch) {
        cli_error("import-bench: vllm-throughput: --batch: the file has num_requests, the "
                  "batch");
        return CLI_USAGE;
    }
    if (first + 1 >= argc) {
        cli_error("import-bench: %s: give one or more result files", format);
        return CLI_USAGE;
    }
    if (mlp && o.batch) {
        cli_error("import-bench: mlperf: --batch: an Offline summary has samples_per_query, "
                  "the batch");
        return CLI_USAGE;
    }
    if (!latency && !thr && !mlp && (o.batch || o.prompt_tokens || o.output_tokens)) {
        cli_error("import-bench: %s: --batch, --prompt-tokens and --output-tokens belong "
                  "to vllm-latency (the %s file has its lengths)",
                  format,
                  lss   ? "requests"
                  : aip ? "profile export"
                        : "serve");
        return CLI_USAGE;
    }
    if (lss && o.range_ratio >= 0.0) {
        cli_error("import-bench: llmservingsim: --range-ratio belongs to vllm-serve and aiperf "
                  "(the trace has every request's lengths)");
        return CLI_USAGE;
    }
    if ((latency || thr) && o.range_ratio >= 0.0) {
        cli_error("import-bench: %s: --range-ratio belongs to vllm-serve and aiperf (an offline "
                  "batch row has fixed lengths)",
                  format);
        return CLI_USAGE;
    }
    if (!o.hardware || !o.model || (o.tp < 1 && !ix)) {
        /* A serve file names the served model (an InferenceX file also its runner): say so,
         * to help pick --model (--hardware). */
        sim_vllm_serve r;
        sim_aiperf_run a;
        sim_ix_run x;
        struct sim_err err;
        const char *what = "model_id", *named = NULL;
        if (aip && sim_aiperf_load(argv[first + 1], &a, &err) == SIM_OK && a.model_id[0])
            named = a.model_id;
        else if (ix && sim_ix_load(argv[first + 1], &x, &err) == SIM_OK) {
            what = !o.hardware ? "runner" : "model";
            named = !o.hardware ? x.hw : x.model_id;
            named = named[0] ? named : NULL;
        } else if (!aip && !ix && !latency && !thr && !lss && !mlp &&
                   sim_vllm_serve_load(argv[first + 1], &r, &err) == SIM_OK && r.model_id[0])
            named = r.model_id;
        cli_error(
            "import-bench: %s: the file does not say %s; give it on the command line%s%s%s%s%s",
            argv[first + 1],
            !o.hardware ? "the GPU (--hardware ID)"
            : !o.model  ? "the model as llmstep names it (--model ID)"
                        : "the tensor-parallel degree (--tp N)",
            named ? " (the file's " : "", named ? what : "", named ? ": '" : "", named ? named : "",
            named ? "')" : "");
        return CLI_USAGE;
    }
    if ((thr || mlp) && (!o.prompt_tokens || !o.output_tokens)) {
        cli_error("import-bench: %s: the file does not say %s; give the run's value on the "
                  "command line",
                  argv[first + 1],
                  !o.prompt_tokens ? "the prompt length (--prompt-tokens L, the run's --input-len)"
                                   : "the output length (--output-tokens O, the run's "
                                     "--output-len)");
        return CLI_USAGE;
    }
    if (latency && (!o.batch || !o.prompt_tokens || !o.output_tokens)) {
        cli_error("import-bench: %s: the file does not say %s; give the run's value on the "
                  "command line",
                  argv[first + 1],
                  !o.batch ? "the batch (--batch B, the run's --batch-size)"
                  : !o.prompt_tokens
                      ? "the prompt length (--prompt-tokens L, the run's --input-len)"
                      : "the output length (--output-tokens O, the run's "
                        "--output-len)");
        return CLI_USAGE;
    }
    /* No output may replace an input, nor the rows their trace. */
    const int to_file = o.out && strcmp(o.out, "-") != 0;
    for (int i = first + 1; i < argc; i++) {
        const char *clash = to_file && sim_path_same(o.out, argv[i])     ? "--out"
                            : o.trace && sim_path_same(o.trace, argv[i]) ? "--trace"
                                                                         : NULL;
        if (clash) {
            cli_error("import-bench: %s %s is the input %s; it would be replaced", clash,
                      clash[2] == 'o' ? o.out : o.trace, argv[i]);
            return CLI_USAGE;
        }
    }
    if (to_file && o.trace && sim_path_same(o.out, o.trace)) {
        cli_error("import-bench: --out and --trace are both %s; the rows and the trace they "
                  "replay need two files",
                  o.out);
        return CLI_USAGE;
    }
    /* Both outputs must be writable before either is written (the trace is written first). */
    struct sim_err werr;
    if ((to_file && sim_write_check(o.out, &werr) != SIM_OK) ||
        (o.trace && sim_write_check(o.trace, &werr) != SIM_OK)) {
        cli_error("import-bench: %s", werr.msg);
        return CLI_BAD_INPUT;
    }
    ib_text text = {NULL, 0, 0};
    for (int i = first + 1; rc == CLI_OK && i < argc; i++)
        rc = latency ? latency_row(&o, argv[i], &text)
             : thr   ? throughput_row(&o, argv[i], &text)
             : lss   ? lss_rows(&o, argv[i], &text)
             : aip   ? aiperf_rows(&o, argv[i], &text)
             : mlp   ? mlperf_rows(&o, argv[i], &text)
             : ix    ? ix_rows(&o, argv[i], &text)
                     : rows_of(&o, argv[i], &text);
    if (rc == CLI_OK && o.out && strcmp(o.out, "-") != 0) {
        struct sim_err err;
        if (sim_write_atomic(o.out, text.p ? text.p : "", text.len, &err) != SIM_OK) {
            cli_error("%s", err.msg);
            rc = CLI_BAD_INPUT;
        }
    } else if (rc == CLI_OK && text.len > 0 && fwrite(text.p, 1, text.len, stdout) != text.len) {
        cli_error("import-bench: cannot write the rows to standard output");
        rc = CLI_BAD_INPUT;
    }
    free(text.p);
    return rc;
}
