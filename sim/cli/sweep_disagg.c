/*
 * sweep_disagg.c - `llmstep sweep --kind serving --disagg --gpus G`: aggregated against
 * disaggregated layouts of G GPUs at each request rate, and the best under the SLOs (issue 29;
 * docs/serving.md, "Disaggregated prefill and decode").
 *
 * The layouts, each using all G GPUs: aggregated TP t x DP G / t for each TP t of --tp that
 * divides G; disaggregated xPyD with x prefill instances at TP p and y decode instances at TP
 * d, x p + y d = G, for every p and d of --tp. Each is served (`serve` and `serve --disagg`)
 * at each rate; a layout whose engine does not start is listed with its status.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "sweep_cli.h"

#define DISAGG_MAX_TPS   16
#define DISAGG_MAX_RATES 64

typedef struct disagg_args {
    cli_run_spec spec;
    const char *tp_spec, *rate_spec, *format;
    int64_t gpus, num_requests, prompt, output, percentile;
    uint64_t seed;
    double slo_ttft_s, slo_tpot_s;
    int disagg;
} disagg_args;

/* One layout: aggregated (x = 0: TP tp_p, DP y) or x prefill at tp_p, y decode at tp_d. */
typedef struct layout {
    int64_t x, tp_p, y, tp_d;
} layout;

static void layout_name(const layout *l, char *buf, size_t cap)
{
    if (l->x == 0)
        snprintf(buf, cap, "TP%lld x DP%lld", (long long)l->tp_p, (long long)l->y);
    else
        snprintf(buf, cap, "%lldP(TP%lld)+%lldD(TP%lld)", (long long)l->x, (long long)l->tp_p,
                 (long long)l->y, (long long)l->tp_d);
}

/* The deployments at one TP, opened once (NULL when the engine does not start there). */
typedef struct tp_run {
    int64_t tp;
    int ok;
    cli_run run;
} tp_run;

static tp_run *run_at(tp_run *runs, size_t n, int64_t tp)
{
    for (size_t i = 0; i < n; i++)
        if (runs[i].tp == tp)
            return runs[i].ok ? &runs[i] : NULL;
    return NULL;
}

/* Serves layout l at rate r: the statistics, or the reason it did not run in *why. */
static int serve_layout(const disagg_args *a, tp_run *runs, size_t n_runs, const layout *l,
                        double rate, sim_serve_stats *st, const char **why)
{
    tp_run *p = run_at(runs, n_runs, l->tp_p), *d = l->x ? run_at(runs, n_runs, l->tp_d) : p;
    if (!p || !d) {
        *why = "no_memory";
        return 0;
    }
    const sim_workload_spec w = {.arrival = SIM_ARRIVAL_POISSON,
                                 .rate_per_s = rate,
                                 .burstiness = 1.0,
                                 .prompt_tokens = a->prompt,
                                 .output_tokens = a->output,
                                 .range_ratio = -1.0,
                                 .num_requests = a->num_requests,
                                 .warmup_requests = -1,
                                 .seed = a->seed};
    sim_served sv;
    struct sim_err err;
    sim_serve_result res, pres;
    sim_status s = sim_served_prepare(&sv, &w, NULL, 1, &err);
    if (s == SIM_OK && l->x == 0) {
        sim_run_cfg cfg = p->run.cfg;
        cfg.dp = (int)l->y;
        sim_setup su = cli_run_setup(&p->run);
        su.run = &cfg;
        s = sim_served_run(&su, &sv, NULL, NULL, &res, &err);
    } else if (s == SIM_OK) {
        sim_disagg_link link;
        double xfer;
        const sim_setup psu = cli_run_setup(&p->run), dsu = cli_run_setup(&d->run);
        s = sim_disagg_link_of(&p->run.hw, &d->run.hw, a->gpus, &link, &err);
        if (s == SIM_OK)
            s = sim_disagg_run(&psu, &dsu, l->x, l->y, &link, &sv, &pres, &res, &xfer, &err);
    }
    if (s == SIM_OK)
        s = sim_served_stats(&p->run.model, &p->run.hw, &sv, &res, a->slo_ttft_s, a->slo_tpot_s, st,
                             &err);
    sim_served_free(&sv);
    if (s != SIM_OK) {
        *why = "failed";
        return 0;
    }
    return 1;
}

static const cli_help disagg_help = {
    .head =
        "usage: llmstep sweep --kind serving --disagg --model ID --hw ID --gpus G\n"
        "                     --request-rate LIST --prompt-tokens L --output-tokens O\n"
        "                     [--tp LIST] [--slo-ttft-ms X] [--slo-tpot-ms Y]\n"
        "\n"
        "Serves the open-loop workload at each rate on every layout of G GPUs: aggregated TP t\n"
        "x DP G/t, and disaggregated xPyD (x prefill instances at TP p, y decode instances at\n"
        "TP d, x p + y d = G) as `llmstep serve --disagg`; prints TTFT and TPOT p90 and output\n"
        "tokens/s per GPU per layout and rate, then the best under the SLOs: the highest rate\n"
        "a layout meets them at, then the most tokens/s per GPU. docs/serving.md,\n"
        "\"Disaggregated prefill and decode\".\n"
        "\n",
    .tail = ""};

int cli_sweep_disagg(int argc, char **argv)
{
    disagg_args a;
    memset(&a, 0, sizeof(a));
    cli_run_spec_init(&a.spec);
    a.spec.sched.usage = SIM_USAGE_SERVER;
    a.tp_spec = "1,2,4,8";
    a.format = "table";
    a.num_requests = 300;
    a.prompt = a.output = -1;
    a.percentile = 90;
    const char *kind = NULL;
    const cli_opt t[] = {
        {.name = "disagg",
         .kind = CLI_OPT_FLAG,
         .dst = &a.disagg,
         .heading = "Options (sweep --disagg):\n",
         .help =
             "  --disagg                   aggregated against disaggregated layouts of --gpus\n"},
        CLI_STR_H("kind", &kind, "  --kind serving             (the only kind with --disagg)\n"),
        CLI_STR_H("model", &a.spec.model,
                  "  --model ID, --hw ID        one model on one GPU type\n"),
        {.name = "hw", .kind = CLI_OPT_STR, .dst = &a.spec.hw},
        CLI_I64_H("gpus", &a.gpus, 1, 4096,
                  "  --gpus G                   GPUs every layout uses\n"),
        CLI_STR_H("tp", &a.tp_spec,
                  "  --tp LIST                  TPs of the instances (default 1,2,4,8)\n"),
        CLI_STR_H("request-rate", &a.rate_spec,
                  "  --request-rate LIST        open-loop rates, requests/s\n"),
        CLI_I64_H(
            "prompt-tokens", &a.prompt, 1, 1 << 24,
            "  --prompt-tokens L, --output-tokens O, --num-requests K (default 300), --seed S\n"),
        {.name = "output-tokens", .kind = CLI_OPT_I64, .dst = &a.output, .min = 1, .max = 1 << 24},
        {.name = "num-requests",
         .kind = CLI_OPT_I64,
         .dst = &a.num_requests,
         .min = 1,
         .max = SIM_WORKLOAD_MAX_REQUESTS},
        {.name = "seed", .kind = CLI_OPT_U64, .dst = &a.seed, .min = 0, .max = 9.3e18},
        CLI_MS_H("slo-ttft-ms", &a.slo_ttft_s, 1e-6, 1e9,
                 "  --slo-ttft-ms X, --slo-tpot-ms Y   the SLOs, judged at p90\n"),
        {.name = "slo-tpot-ms", .kind = CLI_OPT_MS, .dst = &a.slo_tpot_s, .min = 1e-6, .max = 1e9},
        CLI_STR_H("calibration", &a.spec.calibration,
                  "  --calibration FILE, --engine ID   as for serve\n"),
        {.name = "engine", .kind = CLI_OPT_STR, .dst = &a.spec.engine},
        CLI_STR_H("format", &a.format, "  --format table|csv         default table\n"),
    };
    int done = 0;
    int rc = cli_opts_parse_help("sweep", argc, argv, t, CLI_N(t), &disagg_help, &done, NULL);
    if (rc != CLI_OK || done)
        return rc;
    if (!kind || strcmp(kind, "serving") != 0 || !a.spec.model || !a.spec.hw || a.gpus < 1 ||
        !a.rate_spec || a.prompt < 1 || a.output < 1) {
        cli_error("sweep: --disagg needs --kind serving, --model, --hw, --gpus, --request-rate, "
                  "--prompt-tokens and --output-tokens");
        return CLI_USAGE;
    }
    if (strcmp(a.format, "table") != 0 && strcmp(a.format, "csv") != 0) {
        cli_error("sweep: --format '%s': expected table or csv with --disagg", a.format);
        return CLI_USAGE;
    }
    int64_t tps[DISAGG_MAX_TPS];
    size_t n_tp = 0;
    struct sim_err err;
    if (sim_sweep_parse_list(a.tp_spec, 1, 4096, tps, DISAGG_MAX_TPS, &n_tp, &err) != SIM_OK) {
        cli_error("sweep: --tp '%s': %s", a.tp_spec, err.msg);
        return CLI_USAGE;
    }
    double rates[DISAGG_MAX_RATES];
    size_t n_rate = 0;
    if ((rc = cli_sweep_parse_rates("sweep", a.rate_spec, rates, DISAGG_MAX_RATES, &n_rate)) !=
        CLI_OK)
        return rc;
    /* The deployments at each TP, opened once; one that does not start is a status. */
    tp_run runs[DISAGG_MAX_TPS];
    size_t n_runs = 0;
    for (size_t i = 0; i < n_tp; i++) {
        cli_run_spec s = a.spec;
        s.tp = tps[i];
        s.check_memory = 1;
        s.who = "sweep: ";
        s.quiet = 1; /* a TP that does not fit is a row's status, not an error */
        runs[n_runs].tp = tps[i];
        runs[n_runs].ok = cli_run_open(&s, &runs[n_runs].run) == CLI_OK;
        n_runs++;
    }
    /* The layouts. */
    layout lays[512];
    size_t n_lay = 0;
    for (size_t i = 0; i < n_tp; i++)
        if (a.gpus % tps[i] == 0 && n_lay < 512)
            lays[n_lay++] = (layout){0, tps[i], a.gpus / tps[i], tps[i]};
    for (size_t i = 0; i < n_tp; i++)
        for (size_t j = 0; j < n_tp; j++)
            for (int64_t x = 1; x * tps[i] < a.gpus; x++) {
                const int64_t rest = a.gpus - x * tps[i];
                if (rest % tps[j] == 0 && n_lay < 512)
                    lays[n_lay++] = (layout){x, tps[i], rest / tps[j], tps[j]};
            }
    const int csv = strcmp(a.format, "csv") == 0;
    if (csv)
        printf("layout,gpus,request_rate_per_s,ttft_p90_s,tpot_p90_s,output_tokens_per_s_per_gpu,"
               "meets_slo,status\n");
    else
        printf("%-26s %5s %8s %10s %10s %11s %4s %s\n", "layout", "gpus", "rate/s", "ttft_p90",
               "tpot_p90", "tok/s/gpu", "slo", "status");
    int best = -1;
    double best_rate = 0.0, best_tps = 0.0;
    char best_name[64] = "";
    for (size_t li = 0; li < n_lay; li++)
        for (size_t ri = 0; ri < n_rate; ri++) {
            char name[64];
            layout_name(&lays[li], name, sizeof(name));
            sim_serve_stats st;
            const char *why = "ok";
            const int ran = serve_layout(&a, runs, n_runs, &lays[li], rates[ri], &st, &why);
            const double ttft = ran ? st.ttft_s.p90 : (double)NAN;
            const double tpot = ran ? st.tpot_s.p90 : (double)NAN;
            const double tpg = ran ? st.output_tokens_per_s / (double)a.gpus : (double)NAN;
            const int meets = ran && (a.slo_ttft_s <= 0.0 || ttft <= a.slo_ttft_s) &&
                              (a.slo_tpot_s <= 0.0 || tpot <= a.slo_tpot_s);
            if (csv)
                printf("%s,%lld,%.6g,%.6g,%.6g,%.6g,%d,%s\n", name, (long long)a.gpus, rates[ri],
                       ttft, tpot, tpg, meets, why);
            else
                printf("%-26s %5lld %8.3g %10.2f %10.2f %11.1f %4s %s\n", name, (long long)a.gpus,
                       rates[ri], ttft * 1e3, tpot * 1e3, tpg, meets ? "yes" : "no", why);
            if (meets && (rates[ri] > best_rate || (rates[ri] == best_rate && tpg > best_tps))) {
                best = (int)li;
                best_rate = rates[ri];
                best_tps = tpg;
                snprintf(best_name, sizeof(best_name), "%s", name);
            }
        }
    if (best >= 0)
        printf("%sbest under the SLOs: %s at %.3g requests/s (%.1f output tokens/s per GPU)\n",
               csv ? "# " : "\n", best_name, best_rate, best_tps);
    else
        printf("%sbest under the SLOs: none of the layouts meets them at these rates\n",
               csv ? "# " : "\n");
    for (size_t i = 0; i < n_runs; i++)
        cli_run_close(&runs[i].run);
    return CLI_OK;
}
