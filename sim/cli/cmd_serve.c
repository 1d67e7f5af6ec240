/* cmd_serve.c - `llmstep serve`: an engine serving a workload, request by request. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_write.h"
#include "cli.h"
#include "opts.h"
#include "paths.h"
#include "units.h"

/* The usage around the options' help, which the option table holds. */
static const cli_help serve_help = {
    .head = "usage: llmstep serve --model ID --hw ID [--tp N] [--pp N] [--dp N] [--ep] WORKLOAD "
            "[options]\n"
            "\n"
            "Simulates the engine (vLLM V1 by default) serving a workload step by step and\n"
            "reports per-request latency: time to first token (TTFT, from arrival), time per\n"
            "output token after the first (TPOT), inter-token latency (ITL) and end-to-end\n"
            "latency (E2E) as mean, p50, p90 and p99, request and token throughput, goodput\n"
            "under the SLOs, peak KV-cache use, peak queue and preemptions.\n"
            "\n",
    .tail = "\n"
            "Examples:\n"
            "  llmstep serve --model qwen3-32b --hw h100-sxm --tp 2 --concurrency 64 \\\n"
            "      --prompt-tokens 1024 --output-tokens 128 --calibration "
            "calibrations/h100-sxm-v1.json\n"
            "  llmstep serve --model llama-3.1-8b --hw h100-sxm --request-rate 20 --prompt-tokens "
            "1000 \\\n"
            "      --output-tokens 200 --num-requests 2000 --slo-ttft-ms 500 --slo-tpot-ms 50\n",
};

/* The timeline CSV, built in memory and written atomically at the end. */
typedef struct timeline {
    char *buf;
    size_t len, cap;
    int64_t step;
    int failed;
} timeline;

static void timeline_row(void *ctx, const sim_serve_step *s)
{
    timeline *t = ctx;
    if (t->failed)
        return;
    if (t->cap - t->len < 512) {
        size_t cap = t->cap ? 2 * t->cap : 1 << 16;
        char *b = realloc(t->buf, cap);
        if (!b) {
            t->failed = 1;
            return;
        }
        t->buf = b;
        t->cap = cap;
    }
    int n = snprintf(t->buf + t->len, t->cap - t->len,
                     "%lld,%.9g,%.9g,%.9g,%.9g,%lld,%lld,%lld,%lld,%lld,%.6g,%lld,%lld\n",
                     (long long)t->step++, s->start_s, s->wall_s, s->gpu_s, s->host_s,
                     (long long)s->n_seqs, (long long)s->n_prefill_seqs, (long long)s->n_tokens,
                     (long long)s->n_prefill_tokens, (long long)s->kv_used_blocks,
                     s->kv_blocks > 0 ? (double)s->kv_used_blocks / (double)s->kv_blocks : 0.0,
                     (long long)s->n_waiting, (long long)s->n_preempted);
    if (n < 0 || (size_t)n >= t->cap - t->len)
        t->failed = 1;
    else
        t->len += (size_t)n;
}

static void print_dist_json(sim_jw *w, const char *key, const sim_dist *d)
{
    sim_jw_object_begin(w, key);
    sim_jw_num(w, "mean", d->mean);
    sim_jw_num(w, "p50", d->p50);
    sim_jw_num(w, "p90", d->p90);
    sim_jw_num(w, "p99", d->p99);
    sim_jw_object_end(w);
}

static void print_dist_row(const char *name, const sim_dist *d)
{
    printf("  %-6s %12.2f %12.2f %12.2f %12.2f\n", name, d->mean * 1e3, d->p50 * 1e3, d->p90 * 1e3,
           d->p99 * 1e3);
}

/* Every printed number must be finite (exit 3 otherwise). */
static int stats_finite(const sim_serve_stats *st, const sim_serve_result *r)
{
    const sim_dist *d[] = {&st->ttft_s, &st->tpot_s, &st->itl_s, &st->e2e_s, &st->queue_s};
    for (size_t i = 0; i < 5; i++)
        if (!isfinite(d[i]->mean) || !isfinite(d[i]->p50) || !isfinite(d[i]->p90) ||
            !isfinite(d[i]->p99))
            return 0;
    return isfinite(st->duration_s) && isfinite(st->request_throughput_per_s) &&
           isfinite(st->output_tokens_per_s) && isfinite(r->peak_kv_frac) && isfinite(r->end_s);
}

typedef struct serve_args {
    cli_run_spec spec;
    sim_workload_spec wl;
    const char *trace, *format, *timeline;
    double slo_ttft_s, slo_tpot_s;
    int have_conc, have_rate;
    int exact_steps;  /* --exact-steps: every step through the scheduler */
    int64_t interval; /* --interval L (0: none) */
    int no_prefix_caching;
    cli_spec_args sp;
    int64_t disagg_p, disagg_d; /* --disagg xPyD (0: aggregated) */
    int64_t prefill_tp, decode_tp;
    const char *prefill_hw;
} serve_args;

/* --disagg xPyD: x prefill and y decode instances. */
static int parse_disagg(const char *arg, void *dst, char *msg, size_t cap)
{
    int64_t *xy = dst;
    char p = 0, d = 0, extra = 0;
    long long x = 0, y = 0;
    if (sscanf(arg, "%lld%c%lld%c%c", &x, &p, &y, &d, &extra) == 4 && (p == 'P' || p == 'p') &&
        (d == 'D' || d == 'd') && x >= 1 && y >= 1 && x <= SIM_DP_MAX && y <= SIM_DP_MAX) {
        xy[0] = x;
        xy[1] = y;
        return 0;
    }
    snprintf(msg, cap,
             "--disagg '%s': expected xPyD, x prefill and y decode instances (1 to %d each)", arg,
             SIM_DP_MAX);
    return -1;
}

/* --interval: the bands of TTFT (in either regime), TPOT and E2E, those the calibration has
 * (ok[i]); which TTFT band applies is known after the run (serve_band_family). */
enum { SERVE_BANDS = 4 };
typedef struct serve_bands {
    int ok[SERVE_BANDS];
    sim_pred_band b[SERVE_BANDS];
} serve_bands;
static const int band_family[SERVE_BANDS] = {SIM_BAND_TTFT, SIM_BAND_TTFT_QUEUED, SIM_BAND_TPOT,
                                             SIM_BAND_E2E};

/* The band reported for the run's TTFT (k 0), TPOT (1) and E2E (2): TTFT's regime is the
 * run's (sim_serve_ttft_queued, docs/calibration.md "Regimes"). An index of band_family. */
static int serve_band_index(int k, const sim_serve_stats *st)
{
    return k == 0 ? (sim_serve_ttft_queued(st) ? 1 : 0) : k + 1;
}

/* The bands --interval asks for: each the calibration has; none at all is an error naming
 * why (the first family's reason). */
static int serve_bands_get(const serve_args *a, const cli_run *run, serve_bands *out)
{
    memset(out, 0, sizeof(*out));
    struct sim_err first, err;
    first.msg[0] = 0;
    int any = 0;
    for (int i = 0; i < SERVE_BANDS; i++) {
        out->ok[i] = sim_deploy_band(&run->d, band_family[i], (int)a->interval, &out->b[i],
                                     i ? &err : &first) == SIM_OK;
        any |= out->ok[i];
    }
    if (any)
        return CLI_OK;
    cli_error("serve: --interval %lld: %s", (long long)a->interval, first.msg);
    return CLI_USAGE;
}

static int parse_args(int argc, char **argv, serve_args *a, int *done)
{
    memset(a, 0, sizeof(*a));
    cli_run_spec_init(&a->spec);
    a->spec.sched.usage = SIM_USAGE_SERVER;
    a->wl.burstiness = 1.0;
    a->wl.range_ratio = -1.0; /* the default spread (sim_workload_range_ratio) */
    a->wl.warmup_requests = -1;
    a->wl.prompt_tokens = a->wl.output_tokens = -1;
    a->format = "table";
    sim_sched_cfg *sc = &a->spec.sched;
    /* In the order of the usage. No help of their own: --dtype, --kv-dtype and --calibration
     * (on --tp's line), the scheduler limits (on --max-num-seqs' and
     * --gpu-memory-utilization's lines), --slo-tpot-ms and --gemm (on --slo-ttft-ms' and
     * --roofline's), --model and --hw (the synopsis only). */
    const cli_opt t[] = {
        {.name = "concurrency",
         .kind = CLI_OPT_I64,
         .dst = &a->wl.concurrency,
         .min = 1,
         .max = 1 << 20,
         .seen = &a->have_conc,
         .heading = "Workload (one of):\n",
         .help =
             "  --concurrency N               closed loop: N clients, each sends its next request\n"
             "                                when the previous one finishes (vllm bench serve\n"
             "                                --max-concurrency, genai-perf --concurrency)\n"},
        {.name = "request-rate",
         .kind = CLI_OPT_DBL,
         .dst = &a->wl.rate_per_s,
         .min = 1e-6,
         .max = 1e7,
         .seen = &a->have_rate,
         .help = "  --request-rate R              open loop: R requests/s, Poisson arrivals\n"},
        CLI_STR_H("trace", &a->trace,
                  "  --trace FILE.jsonl            replay: one {\"arrival_s\", \"prompt_tokens\",\n"
                  "                                \"output_tokens\"} object a line\n"),
        CLI_I64_H("prompt-tokens", &a->wl.prompt_tokens, 1, 1 << 24,
                  "  --prompt-tokens L             prompt length (closed and open loop)\n"),
        CLI_I64_H("output-tokens", &a->wl.output_tokens, 1, 1 << 24,
                  "  --output-tokens O             tokens generated per request\n"),
        CLI_I64_H("num-requests", &a->wl.num_requests, 1, SIM_WORKLOAD_MAX_REQUESTS,
                  "  --num-requests K              requests measured (default: closed 10 x N, open "
                  "1000)\n"),
        CLI_I64_H("warmup-requests", &a->wl.warmup_requests, 0, SIM_WORKLOAD_MAX_REQUESTS,
                  "  --warmup-requests W           sent first without draining, left out of the\n"
                  "                                statistics (default 0: benchmark clients drain\n"
                  "                                their warm-up, so measuring starts on an idle "
                  "engine)\n"),
        CLI_DBL_H(
            "burstiness", &a->wl.burstiness, 1e-3, 1e3,
            "  --burstiness B                gamma shape of the inter-arrival times (default 1 =\n"
            "                                Poisson; < 1 burstier), as vllm bench serve\n"),
        CLI_DBL_H(
            "range-ratio", &a->wl.range_ratio, 0.0, 0.999,
            "  --range-ratio R               lengths uniform in [L(1-R), L(1+R)] (default "
            "0.1, as\n"
            "                                benchmark clients vary them; 0: every request "
            "alike,\n"
            "                                a closed loop's clients then run in lockstep)\n"),
        CLI_U64_H(
            "seed", &a->wl.seed, 0, 9.3e18,
            "  --seed S                      generator seed (default 0): same seed, same run\n"),
        CLI_I64_H("prefix-tokens", &a->wl.prefix_tokens, 1, 1 << 24,
                  "  --prefix-tokens P             every prompt starts with the same P tokens (a\n"
                  "                                system prompt; part of --prompt-tokens)\n"),
        CLI_I64_H(
            "distinct-prompts", &a->wl.distinct_prompts, 1, SIM_WORKLOAD_MAX_REQUESTS,
            "  --distinct-prompts K          prompts drawn from a pool of K (aiperf's dataset\n"
            "                                entries, 100 by default there), each pass in a\n"
            "                                new order; with prefix caching a prompt drawn\n"
            "                                again finds its blocks cached\n"),
        {.name = "tp",
         .kind = CLI_OPT_I64,
         .dst = &a->spec.tp,
         .min = 1,
         .max = 4096,
         .heading = "\n"
                    "Options:\n",
         .help = "  --tp N, --dtype T, --kv-dtype T, --calibration FILE   as for predict\n"},
        {.name = "dtype", .kind = CLI_OPT_STR, .dst = &a->spec.dtype},
        {.name = "kv-dtype", .kind = CLI_OPT_STR, .dst = &a->spec.kv_dtype},
        {.name = "calibration", .kind = CLI_OPT_STR, .dst = &a->spec.calibration},
        CLI_I64_H(
            "pp", &a->spec.pp, 1, SIM_PP_MAX,
            "  --pp N                 pipeline stages: up to N batches of disjoint requests in\n"
            "                         flight, as vLLM V1's batch queue (docs/engine.md)\n"),
        CLI_I64_H(
            "dp", &a->spec.dp, 1, SIM_DP_MAX,
            "  --dp N                 data-parallel engines (vLLM --data-parallel-size): the\n"
            "                         requests (and a closed loop's clients) dealt to N engines\n"
            "                         in turn, each with its own scheduler and KV cache; a MoE\n"
            "                         model's experts span the DP x TP GPUs (as predict)\n"),
        CLI_FLAG_H("ep", &a->spec.ep,
                   "  --ep                   expert parallelism (vLLM --enable-expert-parallel)\n"),
        CLI_STR_H("engine", &a->spec.engine,
                  "  --engine ID                   engine profile (engines/ID.json; default: the\n"
                  "                                calibration's engine, else vllm-v1)\n"),
        CLI_SCHED_H(
            "usage", sc,
            "  --usage server|llm            vLLM's usage-context defaults (default server)\n"),
        CLI_SCHED_H("max-num-seqs", sc,
                    "  --max-num-seqs N, --max-num-batched-tokens N, --max-model-len N,\n"),
        {.name = "max-num-batched-tokens", .kind = CLI_OPT_SCHED, .dst = sc},
        {.name = "max-model-len", .kind = CLI_OPT_SCHED, .dst = sc},
        CLI_SCHED_H(
            "gpu-memory-utilization", sc,
            "  --gpu-memory-utilization F, --block-size N   override the engine's defaults\n"),
        {.name = "block-size", .kind = CLI_OPT_SCHED, .dst = sc},
        CLI_SCHED_H(
            "async-scheduling", sc,
            "  --async-scheduling on|off     V1: the next step's host work overlaps the GPU\n"
            "                                (default: the engine's; on from vLLM 0.14)\n"),
        CLI_SCHED_H(
            "prefix-caching", sc,
            "  --prefix-caching on|off       V1 prefix caching (default on, as vLLM V1); it\n"
            "                                matters when prompts share a prefix\n"),
        CLI_FLAG_H("no-prefix-caching", &a->no_prefix_caching,
                   "  --no-prefix-caching           the same as --prefix-caching off\n"),
        CLI_CUSTOM_H(
            "disagg", parse_disagg, &a->disagg_p,
            "  --disagg xPyD                 disaggregated prefill and decode: x prefill and y\n"
            "                                decode instances, the KV pulled over NVLink or the\n"
            "                                inter-node fabric (open loop: --request-rate, "
            "--trace)\n"),
        CLI_I64_H("prefill-tp", &a->prefill_tp, 1, 4096,
                  "  --prefill-tp N, --decode-tp M each pool's TP (default --tp)\n"),
        {.name = "decode-tp", .kind = CLI_OPT_I64, .dst = &a->decode_tp, .min = 1, .max = 4096},
        CLI_STR_H("prefill-hw", &a->prefill_hw,
                  "  --prefill-hw ID               the prefill pool's GPU (default --hw; another\n"
                  "                                type is reached over the inter-node fabric)\n"),
        CLI_CUSTOM_H(
            "spec", cli_parse_spec_method, &a->sp,
            "  --spec METHOD                 speculative decoding: ngram, eagle, eagle3, mtp\n"
            "                                or draft (vLLM --speculative-config method)\n"),
        CLI_I64_H("spec-tokens", &a->sp.k, 1, SIM_SPEC_MAX_TOKENS,
                  "  --spec-tokens K               draft tokens verified per step\n"),
        CLI_CUSTOM_H(
            "acceptance", cli_parse_acceptance, &a->sp,
            "  --acceptance A[,A2,..]        acceptance rate of each draft position given\n"
            "                                the ones before it (one rate: every position)\n"),
        {.name = "spec-model",
         .kind = CLI_OPT_STR,
         .dst = &a->sp.model,
         .help = "  --spec-model ID               the draft model of --spec draft\n"},
        CLI_FLAG_H("disable-hybrid-kv-cache-manager", &sc->disable_hybrid_kv,
                   "  --disable-hybrid-kv-cache-manager   sliding-window layers keep the whole "
                   "context\n"),
        CLI_MS_H("slo-ttft-ms", &a->slo_ttft_s, 1e-6, 1e9,
                 "  --slo-ttft-ms X, --slo-tpot-ms Y   SLOs for goodput (requests within both)\n"),
        {.name = "slo-tpot-ms", .kind = CLI_OPT_MS, .dst = &a->slo_tpot_s, .min = 1e-6, .max = 1e9},
        CLI_STR_H(
            "timeline", &a->timeline,
            "  --timeline FILE.csv           per-step time, batch, tokens, KV use and queue\n"),
        CLI_INTERVAL_H(&a->interval),
        CLI_FLAG_H("exact-steps", &a->exact_steps,
                   "  --exact-steps                 schedule every step (by default stretches of\n"
                   "                                identical decode steps are priced without the\n"
                   "                                scheduler in closed form: the same decisions,\n"
                   "                                times equal to rounding, faster)\n"),
        CLI_ROOFLINE_H("roofline", &a->spec.mode,
                       "  --roofline op|step, --gemm flat|tile-wave   as for predict\n"),
        {.name = "gemm", .kind = CLI_OPT_GEMM, .dst = &a->spec.gemm},
        CLI_STR_H("format", &a->format,
                  "  --format table|json           output format (default table)\n"),
        {.name = "model", .kind = CLI_OPT_STR, .dst = &a->spec.model},
        {.name = "hw", .kind = CLI_OPT_STR, .dst = &a->spec.hw},
    };
    int rc = cli_opts_parse_help("serve", argc, argv, t, CLI_N(t), &serve_help, done, NULL);
    if (rc != CLI_OK || *done)
        return rc;
    if (!a->spec.model || !a->spec.hw) {
        cli_error("serve: --model and --hw are required (see llmstep serve --help)");
        return CLI_USAGE;
    }
    if (a->have_conc + a->have_rate + (a->trace != NULL) != 1) {
        cli_error("serve: give exactly one workload: --concurrency, --request-rate or --trace");
        return CLI_USAGE;
    }
    if (cli_spec_finish("serve", &a->sp, &a->spec.spec, &a->spec.spec_model) != CLI_OK)
        return CLI_USAGE;
    if (!a->disagg_p && (a->prefill_tp || a->decode_tp || a->prefill_hw)) {
        cli_error("serve: --prefill-tp, --decode-tp and --prefill-hw belong to --disagg");
        return CLI_USAGE;
    }
    if (a->disagg_p &&
        (a->have_conc || a->timeline || a->interval || a->spec.pp > 1 || a->spec.dp > 1)) {
        cli_error("serve: --disagg takes --request-rate or --trace, without --timeline, "
                  "--interval, --pp or --dp");
        return CLI_USAGE;
    }
    if (a->no_prefix_caching) {
        if (sc->enable_prefix_caching == 1) {
            cli_error("serve: --no-prefix-caching and --prefix-caching on contradict");
            return CLI_USAGE;
        }
        sc->enable_prefix_caching = 0;
    }
    if (a->trace) {
        if (a->wl.prompt_tokens > 0 || a->wl.output_tokens > 0 || a->wl.num_requests > 0 ||
            a->wl.prefix_tokens > 0 || a->wl.distinct_prompts > 0) {
            cli_error("serve: --trace gives the lengths, shared prefixes and count; drop "
                      "--prompt-tokens, --output-tokens, --prefix-tokens, --distinct-prompts and "
                      "--num-requests");
            return CLI_USAGE;
        }
        a->wl.arrival = SIM_ARRIVAL_TRACE;
    } else {
        if (a->wl.prompt_tokens < 0 || a->wl.output_tokens < 0) {
            cli_error("serve: --prompt-tokens and --output-tokens are required with "
                      "--concurrency or --request-rate");
            return CLI_USAGE;
        }
        a->wl.arrival = a->have_conc ? SIM_ARRIVAL_CLOSED : SIM_ARRIVAL_POISSON;
    }
    struct sim_err perr;
    if (!a->trace && sim_workload_prefix_check(a->wl.prefix_tokens, a->wl.distinct_prompts, 0,
                                               &perr) != SIM_OK) {
        cli_error("serve: %s", perr.msg);
        return CLI_USAGE;
    }
    if (strcmp(a->format, "table") != 0 && strcmp(a->format, "json") != 0) {
        cli_error("serve: --format '%s': expected table or json", a->format);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* "workload": the trace, or the generated workload's arrival and lengths. */
static void print_workload_json(sim_jw *w, const serve_args *a)
{
    sim_jw_object_begin(w, "workload");
    if (a->trace) {
        sim_jw_str(w, "trace", a->trace);
    } else if (a->wl.arrival == SIM_ARRIVAL_CLOSED) {
        sim_jw_str(w, "arrival", "closed");
        sim_jw_int(w, "concurrency", a->wl.concurrency);
    } else {
        sim_jw_str(w, "arrival", "poisson");
        sim_jw_num(w, "rate_per_s", a->wl.rate_per_s);
        sim_jw_num(w, "burstiness", a->wl.burstiness);
    }
    if (!a->trace) {
        sim_jw_int(w, "prompt_tokens", a->wl.prompt_tokens);
        sim_jw_int(w, "output_tokens", a->wl.output_tokens);
        sim_jw_num(w, "range_ratio", sim_workload_range_ratio(a->wl.range_ratio));
        sim_jw_uint(w, "seed", a->wl.seed);
        sim_jw_int(w, "prefix_tokens", a->wl.prefix_tokens);
        sim_jw_int(w, "distinct_prompts", a->wl.distinct_prompts);
    }
    sim_jw_object_end(w);
}

static int print_json(const serve_args *a, const cli_run *run, const cli_serve *sv,
                      const sim_serve_result *r, const sim_serve_stats *st, const serve_bands *bd)
{
    const sim_sched_resolved *s = &run->sched;
    sim_jw w;
    cli_json_open(&w);
    sim_jw_object_begin(&w, NULL);
    sim_jw_str(&w, "schema_version", "llmstep-serve/1");
    sim_jw_str(&w, "model", run->model.id);
    sim_jw_str(&w, "hardware", run->hw.id);
    sim_jw_str(&w, "engine", run->engine.id);
    sim_jw_int(&w, "tp", run->cfg.tp);
    sim_jw_int(&w, "pp", run->cfg.pp > 1 ? run->cfg.pp : 1);
    sim_jw_int(&w, "dp", sim_run_dp(&run->cfg));
    sim_jw_bool(&w, "ep", run->cfg.ep);
    sim_jw_str(&w, "dtype", sim_dtype_name(run->cfg.dtype));
    sim_jw_str(&w, "kv_dtype", sim_dtype_name(run->cfg.kv_dtype));
    sim_jw_bool(&w, "calibrated", run->d.cal != NULL);
    sim_jw_num(&w, "alpha", run->cfg.alpha);
    sim_jw_num(&w, "beta_s", run->cfg.beta_s);
    /* In ttft_s and e2e_s (docs/serving.md, "The client path"); 0 without one. */
    sim_jw_num(&w, "client_path_s", sim_hw_client_path_s(&run->hw));
    print_workload_json(&w, a);
    sim_jw_int(&w, "n_requests", st->n_requests);
    sim_jw_int(&w, "warmup_requests", sv->warmup);
    print_dist_json(&w, "ttft_s", &st->ttft_s);
    print_dist_json(&w, "tpot_s", &st->tpot_s);
    print_dist_json(&w, "itl_s", &st->itl_s);
    print_dist_json(&w, "e2e_s", &st->e2e_s);
    print_dist_json(&w, "queue_s", &st->queue_s);
    sim_jw_bool(&w, "ttft_queued", sim_serve_ttft_queued(st));
    if (a->interval) {
        /* Around each mean; lo_frac and hi_frac apply to every statistic of the family. */
        static const char *const keys[3] = {"ttft_s", "tpot_s", "e2e_s"};
        const double means[3] = {st->ttft_s.mean, st->tpot_s.mean, st->e2e_s.mean};
        int bad = 0;
        sim_jw_object_begin(&w, "band");
        for (int k = 0; k < 3; k++) {
            const int i = serve_band_index(k, st);
            if (bd->ok[i])
                bad |= sim_band_json(&w, keys[k], &bd->b[i], means[k]);
            else
                sim_jw_null(&w, keys[k]);
        }
        sim_jw_object_end(&w);
        if (bad) {
            sim_jw_free(&w);
            cli_error("serve: a band is not a finite number; refusing to write it");
            return CLI_NUMERIC;
        }
    }
    sim_jw_num(&w, "duration_s", st->duration_s);
    sim_jw_num(&w, "request_throughput_per_s", st->request_throughput_per_s);
    sim_jw_num(&w, "output_tokens_per_s", st->output_tokens_per_s);
    sim_jw_num(&w, "total_tokens_per_s", st->total_tokens_per_s);
    sim_jw_num(&w, "goodput_per_s", st->goodput_per_s);
    sim_jw_int(&w, "n_good", st->n_good);
    sim_jw_num(&w, "slo_ttft_s", a->slo_ttft_s);
    sim_jw_num(&w, "slo_tpot_s", a->slo_tpot_s);
    sim_jw_num(&w, "kv_peak_frac", r->peak_kv_frac);
    sim_jw_int(&w, "queue_peak", r->queue_peak);
    sim_jw_int(&w, "running_peak", r->running_peak);
    sim_jw_int(&w, "preemptions", r->preemptions);
    sim_jw_int(&w, "recomputed_tokens", r->recomputed_tokens);
    sim_jw_int(&w, "n_steps", r->n_steps);
    sim_jw_int(&w, "kv_blocks", r->kv_blocks);
    sim_jw_int(&w, "kv_capacity_tokens", r->kv_capacity_tokens);
    sim_jw_int(&w, "max_num_seqs", s->max_num_seqs);
    sim_jw_int(&w, "max_num_batched_tokens", s->max_num_batched_tokens);
    sim_jw_int(&w, "max_model_len", s->max_model_len);
    sim_jw_int(&w, "block_size", s->block_size);
    sim_jw_num(&w, "gpu_memory_utilization_frac", s->gpu_memory_utilization);
    sim_jw_str(&w, "usage", sim_usage_name(s->usage));
    sim_jw_bool(&w, "async_scheduling", s->async_scheduling);
    sim_jw_bool(&w, "prefix_caching", s->enable_prefix_caching);
    const sim_spec *sp = run->cfg.spec;
    if (sp) {
        sim_jw_object_begin(&w, "spec");
        sim_jw_str(&w, "method", sim_spec_method_name(sp->method));
        sim_jw_int(&w, "spec_tokens", sp->k);
        sim_jw_array_begin(&w, "acceptance_frac");
        for (int64_t i = 0; i < sp->k; i++)
            sim_jw_num(&w, NULL, sp->accept[i]);
        sim_jw_array_end(&w);
        sim_jw_num(&w, "expected_tokens_per_step", sim_spec_expected_tokens(sp));
        sim_jw_int(&w, "verified_tokens", r->spec_verified_tokens);
        sim_jw_int(&w, "accepted_tokens", r->spec_accepted_tokens);
        sim_jw_num(&w, "draft_weight_bytes", sp->draft_weight_bytes);
        sim_jw_num(&w, "draft_kv_bytes_per_token", sp->draft_kv_bytes_per_token);
        sim_jw_object_end(&w);
    } else {
        sim_jw_null(&w, "spec");
    }
    sim_jw_object_begin(&w, "prefix_cache");
    sim_jw_bool(&w, "simulated", r->prefix_cache_simulated);
    sim_jw_num(&w, "hit_frac", sim_serve_prefix_hit_frac(r));
    sim_jw_int(&w, "hit_tokens", r->prefix_hit_tokens);
    sim_jw_int(&w, "query_tokens", r->prefix_query_tokens);
    sim_jw_int(&w, "evictions", r->prefix_evictions);
    sim_jw_object_end(&w);
    sim_jw_object_end(&w);
    return cli_json_close(&w, "serve");
}

static void print_table(const serve_args *a, const cli_run *run, const cli_serve *sv,
                        const sim_serve_result *r, const sim_serve_stats *st, const serve_bands *bd)
{
    const sim_sched_resolved *s = &run->sched;
    char lay[48];
    printf("llmstep serve: %s on %s, %s, %s weights, %s KV cache, engine %s (%s defaults%s)\n",
           run->model.id, run->hw.id, cli_layout_name(&run->cfg, lay, sizeof(lay)),
           cli_weight_format(&run->model, &run->cfg), sim_dtype_name(run->cfg.kv_dtype),
           run->engine.id, sim_usage_name(s->usage),
           s->async_scheduling ? ", async scheduling" : "");
    if (a->trace)
        printf("workload: trace %s, %lld requests\n", a->trace, (long long)st->n_requests);
    else if (a->wl.arrival == SIM_ARRIVAL_CLOSED)
        printf("workload: closed loop, %lld clients, %lld prompt + %lld output tokens (+-%.0f%%, "
               "seed %llu), %lld requests measured after %lld warm-up\n",
               (long long)a->wl.concurrency, (long long)a->wl.prompt_tokens,
               (long long)a->wl.output_tokens, 100.0 * sim_workload_range_ratio(a->wl.range_ratio),
               (unsigned long long)a->wl.seed, (long long)st->n_requests, (long long)sv->warmup);
    else
        printf("workload: %.4g requests/s (burstiness %.3g), %lld prompt + %lld output tokens "
               "(+-%.0f%%, seed %llu), %lld requests\n",
               a->wl.rate_per_s, a->wl.burstiness, (long long)a->wl.prompt_tokens,
               (long long)a->wl.output_tokens, 100.0 * sim_workload_range_ratio(a->wl.range_ratio),
               (unsigned long long)a->wl.seed, (long long)st->n_requests);
    if (run->d.cal) {
        const double client_path_s = sim_hw_client_path_s(&run->hw);
        printf("calibration: alpha %.4g, beta %.4g s per step", run->cfg.alpha, run->cfg.beta_s);
        if (client_path_s > 0.0)
            printf(", client path %.4g ms in TTFT and E2E", client_path_s * 1e3);
        printf(" (%s)\n\n", run->d.cal_path);
    } else {
        char line[512];
        cli_run_uncalibrated(run, line, sizeof(line));
        printf("%s\n\n", line);
    }
    printf("  %-6s %12s %12s %12s %12s\n", "ms", "mean", "p50", "p90", "p99");
    print_dist_row("TTFT", &st->ttft_s);
    print_dist_row("TPOT", &st->tpot_s);
    print_dist_row("ITL", &st->itl_s);
    print_dist_row("E2E", &st->e2e_s);
    print_dist_row("QUEUE", &st->queue_s);
    printf("  (QUEUE = arrival to the first step; the TTFT is %s)\n",
           sim_serve_ttft_queued(st) ? "mostly queueing" : "mostly prefill");
    if (a->interval) {
        static const char *const names[3] = {"TTFT", "TPOT", "E2E"};
        const double means[3] = {st->ttft_s.mean, st->tpot_s.mean, st->e2e_s.mean};
        printf("\n  bands around the means (the same fractions hold for p50, p90 and p99):\n");
        for (int k = 0; k < 3; k++) {
            const int i = serve_band_index(k, st);
            if (bd->ok[i])
                cli_band_line(names[k], &bd->b[i], means[k]);
            else {
                char label[48];
                snprintf(label, sizeof(label), "%s %lld%% band", names[k], (long long)a->interval);
                printf("  %-16s none: the calibration has no held-out %s rows\n", label,
                       sim_band_family_name(band_family[i]));
            }
        }
    }
    printf("\n  throughput       %.3f requests/s, %.1f output tokens/s, %.1f total tokens/s\n",
           st->request_throughput_per_s, st->output_tokens_per_s, st->total_tokens_per_s);
    if (a->slo_ttft_s > 0.0 || a->slo_tpot_s > 0.0)
        printf("  goodput          %.3f requests/s (%lld of %lld within TTFT <= %.4g ms, TPOT <= "
               "%.4g ms)\n",
               st->goodput_per_s, (long long)st->n_good, (long long)st->n_requests,
               a->slo_ttft_s * 1e3, a->slo_tpot_s * 1e3);
    printf("  duration         %.3f s over %lld steps\n", st->duration_s, (long long)r->n_steps);
    printf("  KV cache         %lld tokens (%lld blocks); peak use %.1f%%\n",
           (long long)r->kv_capacity_tokens, (long long)r->kv_blocks, 100.0 * r->peak_kv_frac);
    printf("  queue            peak %lld waiting, peak %lld running; %lld preemptions (%lld "
           "tokens recomputed)\n",
           (long long)r->queue_peak, (long long)r->running_peak, (long long)r->preemptions,
           (long long)r->recomputed_tokens);
    const sim_spec *sp = run->cfg.spec;
    if (sp)
        printf("  speculative      %s, %lld tokens, %.3f expected per verify step; %lld of %lld "
               "drafts accepted (%.1f%%); drafter %.2f GB, %.0f KV bytes per token\n",
               sim_spec_method_name(sp->method), (long long)sp->k, sim_spec_expected_tokens(sp),
               (long long)r->spec_accepted_tokens, (long long)r->spec_verified_tokens,
               100.0 * sim_serve_spec_accepted_frac(r), sp->draft_weight_bytes / SIM_GB,
               sp->draft_kv_bytes_per_token);
    if (r->prefix_cache_simulated)
        printf("  prefix cache     hit rate %.1f%% (%lld of %lld prompt tokens looked up); %lld "
               "blocks evicted\n",
               100.0 * sim_serve_prefix_hit_frac(r), (long long)r->prefix_hit_tokens,
               (long long)r->prefix_query_tokens, (long long)r->prefix_evictions);
    else if (a->wl.prefix_tokens > 0 || a->wl.distinct_prompts > 0 || a->trace)
        printf("  prefix cache     %s\n",
               s->enable_prefix_caching ? "on; no full block shared, nothing to find" : "off");
    printf("  scheduler        max_num_seqs %lld, max_num_batched_tokens %lld, max_model_len "
           "%lld, block %lld\n",
           (long long)s->max_num_seqs, (long long)s->max_num_batched_tokens,
           (long long)s->max_model_len, (long long)s->block_size);
}

/*
 * `serve --disagg xPyD` (docs/serving.md, "Disaggregated prefill and decode"): the prefill pool
 * and the decode pool opened as two deployments (their own TP), the workload served through
 * both (sim_disagg_run), the statistics of the requests as the client sees them.
 */
static int serve_disagg(serve_args *a)
{
    cli_run_spec ps = a->spec, ds = a->spec;
    ps.tp = a->prefill_tp ? a->prefill_tp : a->spec.tp;
    if (a->prefill_hw)
        ps.hw = a->prefill_hw;
    ds.tp = a->decode_tp ? a->decode_tp : a->spec.tp;
    ps.spec = (sim_spec){.method = SIM_SPEC_NONE}; /* the drafter runs in the decode pool */
    ps.spec_model = NULL;
    cli_run pr, dr;
    int rc = cli_run_open(&ps, &pr);
    if (rc != CLI_OK)
        return rc;
    rc = cli_run_open(&ds, &dr);
    if (rc != CLI_OK) {
        cli_run_close(&pr);
        return rc;
    }
    cli_serve sv;
    memset(&sv, 0, sizeof(sv));
    rc = cli_serve_prepare(&sv, &a->wl, a->trace);
    sv.exact_steps = a->exact_steps;
    const int64_t gpus = a->disagg_p * pr.cfg.tp + a->disagg_d * dr.cfg.tp;
    sim_disagg_link link = {0};
    struct sim_err err;
    sim_serve_result pres, dres;
    double xfer_s = 0.0;
    sim_serve_stats st;
    if (rc == CLI_OK && sim_disagg_link_of(&pr.hw, &dr.hw, gpus, &link, &err) != SIM_OK) {
        cli_error("serve: %s", err.msg);
        rc = CLI_BAD_INPUT;
    }
    const sim_setup psu = cli_run_setup(&pr), dsu = cli_run_setup(&dr);
    if (rc == CLI_OK && sim_disagg_run(&psu, &dsu, a->disagg_p, a->disagg_d, &link, &sv, &pres,
                                       &dres, &xfer_s, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        rc = CLI_BAD_INPUT;
    }
    if (rc == CLI_OK && sim_served_stats(&dr.model, &dr.hw, &sv, &dres, a->slo_ttft_s,
                                         a->slo_tpot_s, &st, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        rc = CLI_NUMERIC;
    }
    if (rc == CLI_OK && strcmp(a->format, "json") == 0) {
        sim_jw w;
        cli_json_open(&w);
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "schema_version", "llmstep-serve/1");
        sim_jw_str(&w, "model", dr.model.id);
        sim_jw_str(&w, "hardware", dr.hw.id);
        sim_jw_str(&w, "engine", dr.engine.id);
        sim_jw_object_begin(&w, "disagg");
        sim_jw_int(&w, "prefill_instances", a->disagg_p);
        sim_jw_int(&w, "decode_instances", a->disagg_d);
        sim_jw_int(&w, "prefill_tp", pr.cfg.tp);
        sim_jw_str(&w, "prefill_hardware", pr.hw.id);
        sim_jw_int(&w, "decode_tp", dr.cfg.tp);
        sim_jw_int(&w, "gpus", gpus);
        sim_jw_str(&w, "link", link.same_node ? "nvlink" : "internode");
        sim_jw_num(&w, "link_bw_bytes_per_s", link.bw_bytes_per_s);
        sim_jw_num(&w, "kv_transfer_mean_s", xfer_s);
        sim_jw_num(&w, "prefill_kv_peak_frac", pres.peak_kv_frac);
        sim_jw_num(&w, "decode_kv_peak_frac", dres.peak_kv_frac);
        sim_jw_int(&w, "decode_preemptions", dres.preemptions);
        sim_jw_object_end(&w);
        print_workload_json(&w, a);
        sim_jw_int(&w, "n_requests", st.n_requests);
        print_dist_json(&w, "ttft_s", &st.ttft_s);
        print_dist_json(&w, "tpot_s", &st.tpot_s);
        print_dist_json(&w, "itl_s", &st.itl_s);
        print_dist_json(&w, "e2e_s", &st.e2e_s);
        sim_jw_num(&w, "request_throughput_per_s", st.request_throughput_per_s);
        sim_jw_num(&w, "output_tokens_per_s", st.output_tokens_per_s);
        sim_jw_num(&w, "output_tokens_per_s_per_gpu", st.output_tokens_per_s / (double)gpus);
        sim_jw_num(&w, "goodput_per_s", st.goodput_per_s);
        sim_jw_object_end(&w);
        rc = cli_json_close(&w, "serve");
    } else if (rc == CLI_OK) {
        printf("llmstep serve: %s, disaggregated %lldP%lldD: prefill TP %d on %s, decode TP %d on "
               "%s (%lld GPUs), engine %s\n",
               dr.model.id, (long long)a->disagg_p, (long long)a->disagg_d, pr.cfg.tp, pr.hw.id,
               dr.cfg.tp, dr.hw.id, (long long)gpus, dr.engine.id);
        printf("KV transfer: %s, %.1f GB/s per GPU pair, mean %.3f ms a request\n\n",
               link.same_node ? "NVLink (one node)" : "inter-node fabric",
               link.bw_bytes_per_s / 1e9, xfer_s * 1e3);
        printf("  %-6s %12s %12s %12s %12s\n", "ms", "mean", "p50", "p90", "p99");
        print_dist_row("TTFT", &st.ttft_s);
        print_dist_row("TPOT", &st.tpot_s);
        print_dist_row("ITL", &st.itl_s);
        print_dist_row("E2E", &st.e2e_s);
        printf("\n  throughput       %.3f requests/s, %.1f output tokens/s (%.1f per GPU)\n",
               st.request_throughput_per_s, st.output_tokens_per_s,
               st.output_tokens_per_s / (double)gpus);
        if (a->slo_ttft_s > 0.0 || a->slo_tpot_s > 0.0)
            printf("  goodput          %.3f requests/s (%lld of %lld within the SLOs)\n",
                   st.goodput_per_s, (long long)st.n_good, (long long)st.n_requests);
        printf("  prefill pool     KV peak use %.1f%%, %lld preemptions\n",
               100.0 * pres.peak_kv_frac, (long long)pres.preemptions);
        printf("  decode pool      KV peak use %.1f%%, %lld preemptions\n",
               100.0 * dres.peak_kv_frac, (long long)dres.preemptions);
    }
    cli_serve_free(&sv);
    cli_run_close(&dr);
    cli_run_close(&pr);
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    serve_args a;
    int done, rc = parse_args(argc, argv, &a, &done);
    if (rc != CLI_OK || done)
        return rc;
    cli_run run;
    cli_serve sv;
    memset(&sv, 0, sizeof(sv));
    timeline tl = {0};
    /* The engine would not start: say by how much and what fits (as predict and latency);
     * a serving simulation cannot go on without its KV cache, so no --ignore-memory. */
    if (a.timeline && a.trace && sim_path_same(a.timeline, a.trace)) {
        cli_error("serve: --timeline %s is the trace; it would be replaced", a.timeline);
        return CLI_USAGE;
    }
    a.spec.check_memory = 1;
    a.spec.who = "serve: ";
    if (a.disagg_p)
        return serve_disagg(&a);
    rc = cli_run_open(&a.spec, &run);
    if (rc == CLI_OK) /* the model, profile, engine or calibration read: not to be replaced */
        rc = cli_output_clear("serve", "--timeline", a.timeline, run.cache, NULL, 0);
    if (rc == CLI_OK)
        rc = cli_serve_prepare(&sv, &a.wl, a.trace);
    sv.exact_steps = a.exact_steps;
    sim_serve_result r;
    sim_serve_stats st;
    serve_bands bands;
    if (rc == CLI_OK && a.interval)
        rc = serve_bands_get(&a, &run, &bands);
    if (rc == CLI_OK)
        rc = cli_serve_run(&run, &sv, a.slo_ttft_s, a.slo_tpot_s, a.timeline ? timeline_row : NULL,
                           &tl, &r, &st);
    if (rc == CLI_OK && !stats_finite(&st, &r)) {
        const double nan = (double)NAN;
        rc = cli_check_finite("serve: ", "a latency statistic", &nan, 1);
    }
    if (rc == CLI_OK && a.timeline) {
        static const char head[] = "step,start_s,wall_s,gpu_s,host_s,n_seqs,n_prefill_seqs,"
                                   "n_tokens,n_prefill_tokens,kv_used_blocks,kv_used_frac,"
                                   "n_waiting,n_preempted\n";
        char *all = tl.failed ? NULL : malloc(sizeof(head) + tl.len);
        struct sim_err err;
        if (!all) {
            cli_error("serve: out of memory for the timeline");
            rc = CLI_NUMERIC;
        } else {
            memcpy(all, head, sizeof(head) - 1);
            if (tl.len)
                memcpy(all + sizeof(head) - 1, tl.buf, tl.len);
            if (sim_write_atomic(a.timeline, all, sizeof(head) - 1 + tl.len, &err) != SIM_OK) {
                cli_error("serve: %s", err.msg);
                rc = CLI_BAD_INPUT;
            }
            free(all);
        }
    }
    if (rc == CLI_OK) {
        if (strcmp(a.format, "json") == 0)
            rc = print_json(&a, &run, &sv, &r, &st, &bands);
        else
            print_table(&a, &run, &sv, &r, &st, &bands);
    }
    free(tl.buf);
    cli_serve_free(&sv);
    cli_run_close(&run);
    return rc;
}
