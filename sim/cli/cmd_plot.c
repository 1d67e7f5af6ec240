/*
 * cmd_plot.c - `llmstep plot roofline|sweep|validate|serving`: SVG or PNG plots drawn by
 * gnuplot (Debian gnuplot-nox, run as a program). llmstep computes the numbers,
 * writes them and a gnuplot script to a private temporary folder, runs gnuplot
 * on it, and renames the finished image over --out, so a reader never sees a
 * partial file. gnuplot owns axes, ticks, legends and layout
 * (docs/capacity-planning.md, "Plots", says why gnuplot). Without gnuplot the
 * command fails with exit 1 and tells the user which package to install; set
 * LLMSTEP_GNUPLOT to use another gnuplot binary.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meas_pred.h"
#include "opts.h"
#include "plot.h"

/* The usage around the options' help (the table in parse_plot_args), one for every plot. */
static const cli_help plot_help = {
    .head =
        "usage: llmstep plot roofline --hw ID --model ID [--tp N] [--dtype T] STEP... --out F\n"
        "       llmstep plot sweep --model ID --hw ID [--tp LIST] [--batch LIST] [--context C]\n"
        "                          [--calibration FILE|DIR] [--max-model-len N] --out F\n"
        "       llmstep plot validate --measurements FILE... [--select F=V] [--exclude F=V]\n"
        "                          [--calibration FILE] [--group FIELD] --out F\n"
        "       llmstep plot serving --model ID --hw ID [--tp LIST] [--concurrency LIST |\n"
        "                          --request-rate LIST] --prompt-tokens L --output-tokens O\n"
        "                          [--measurements FILE...] [--calibration FILE] --out F\n"
        "\n"
        "Draws with gnuplot (apt-get install gnuplot-nox). --out ends in .svg or .png.\n"
        "\n"
        "  roofline  the hardware's roofline on log-log axes: compute ceilings per dtype (peak\n"
        "            and achievable = peak x measured GEMM efficiency), HBM ceilings (datasheet\n"
        "            peak and achievable = STREAM copy x weights factor), the ridge point, and\n"
        "            each operator of the step at its arithmetic intensity and attained rate,\n"
        "            coloured by bound. STEP: --decode BxC, --prefill BxL, --chunk BxTxC[:mid]\n"
        "  sweep     decode time per output token against batch size, one line per TP; and\n"
        "            tokens/s per GPU against TPOT with the Pareto frontier (llmstep sweep)\n"
        "  validate  predicted against measured time (log-log, y = x and +/-15% bands), and\n"
        "            MAPE and bias per group (--group model|hardware|tp|batch|kind, default\n"
        "            model), as `llmstep validate` computes them (also\n"
        "            --scheduler-rule R, as for validate)\n"
        "  serving   TTFT and TPOT against concurrency (closed loop, default 1:256) or request\n"
        "            rate (Poisson), one colour per TP (up to 8): the simulated mean (solid)\n"
        "            and p90 (dashed) from `llmstep sweep --kind serving` (the engine as\n"
        "            every command: --engine, else the calibration's, else vllm-v1),\n"
        "            and, with --measurements, the measured serving rows of the same model,\n"
        "            hardware, TP, lengths and arrival (marker by statistic: mean, p50,\n"
        "            p90, p99); --select/--exclude filter them; --num-requests N,\n"
        "            --range-ratio R (lengths +-R, default 0.1; 0 for fixed-length runs)\n"
        "\n",
    .tail = "\n"
            "Examples:\n"
            "  llmstep plot roofline --hw h100-sxm --model llama-3.1-8b --decode 32x2048 "
            "--out roofline.svg\n"
            "  llmstep plot sweep --model llama-3.1-70b --hw h100-sxm --tp 2,4,8 --batch 1:256 "
            "--context 4096 --out sweep.png\n"
            "  llmstep plot validate --measurements measurements/example.jsonl --select "
            "hardware=h100-sxm \\\n"
            "      --calibration calibrations/h100-sxm.json --out validate.png\n",
};

/* Paths go into gnuplot's single-quoted strings: refuse the characters that would break them. */
/* The plots, by the name after `plot`, with the image size in pixels. */
typedef enum plot_kind {
    PLOT_ROOFLINE = 0,
    PLOT_SWEEP,
    PLOT_VALIDATE,
    PLOT_SERVING,
    PLOT_KIND_COUNT
} plot_kind;

static const struct {
    const char *name;
    int width, height;
} plots[PLOT_KIND_COUNT] = {
    {"roofline", 1400, 760}, {"sweep", 1500, 620}, {"validate", 1500, 680}, {"serving", 1500, 620}};

/* Everything the options give. */
typedef struct plot_args {
    plot_kind kind;
    const char *what; /* the plot's name */
    const char *out, *model, *hw, *calib, *engine, *conc_spec, *rate_spec;
    const char *dtype, *kv_dtype, *tp_spec, *batch_spec, *ctx_spec, *group;
    const char *sched_rule; /* plot validate --scheduler-rule */
    int64_t prompt, output, n_req;
    double range_ratio; /* plot serving: --range-ratio, -1 the default spread */
    const char *files[PLOT_MAX_SEL], *sel[PLOT_MAX_SEL], *exc[PLOT_MAX_SEL];
    int n_files, n_sel, n_exc, no_host;
    int engine_given; /* --engine given (plot validate: else each row's engine_version) */
    sim_step st;
    sim_sched_cfg sched;
} plot_args;

/* argv[1] names the plot, options follow it; `plot` alone prints the usage to stderr (exit
 * 2), `plot --help` to stdout. */
static int parse_plot_args(int argc, char **argv, plot_args *a, int *done)
{
    cli_group_opt dec = {&a->st, 'd'}, pre = {&a->st, 'p'}, chu = {&a->st, 'c'};
    cli_opt_bounded files = {{a->files, 0, PLOT_MAX_SEL}, ""},
                    sel = {{a->sel, 0, PLOT_MAX_SEL}, ""}, exc = {{a->exc, 0, PLOT_MAX_SEL}, ""};
    snprintf(files.full, sizeof(files.full), "at most %d of --measurements", PLOT_MAX_SEL);
    snprintf(sel.full, sizeof(sel.full), "at most %d of --select", PLOT_MAX_SEL);
    snprintf(exc.full, sizeof(exc.full), "at most %d of --exclude", PLOT_MAX_SEL);
    const char *positive = "a positive integer";
    /* The common options first, with the lines that list them; the others have no help of
     * their own (the synopses and the plots' paragraphs name them). */
    const cli_opt t[] = {
        CLI_STR_SEEN_H(
            "engine", &a->engine, &a->engine_given,
            "Common options: --engine ID, --calibration FILE|ID|DIR (alpha and beta_s; as for\n"
            "predict and sweep), --no-host-time,\n"),
        CLI_STR("calibration", &a->calib),
        CLI_FLAG("no-host-time", &a->no_host),
        CLI_STR_H("dtype", &a->dtype,
                  "--dtype T, --kv-dtype T; sweep also --max-model-len N, --max-num-seqs N,\n"
                  "--gpu-memory-utilization F (as for llmstep sweep).\n"),
        CLI_STR("kv-dtype", &a->kv_dtype),
        {.name = "max-model-len", .kind = CLI_OPT_SCHED, .dst = &a->sched, .expect = positive},
        {.name = "max-num-seqs", .kind = CLI_OPT_SCHED, .dst = &a->sched, .expect = positive},
        {.name = "gpu-memory-utilization",
         .kind = CLI_OPT_SCHED,
         .dst = &a->sched,
         .expect = "a number in (0, 1]"},
        CLI_STR("out", &a->out),
        CLI_STR("model", &a->model),
        CLI_STR("hw", &a->hw),
        CLI_STR("tp", &a->tp_spec),
        CLI_GROUP_H("decode", &dec, NULL),
        CLI_GROUP_H("prefill", &pre, NULL),
        CLI_GROUP_H("chunk", &chu, NULL),
        CLI_STR("batch", &a->batch_spec),
        CLI_STR("context", &a->ctx_spec),
        CLI_BOUNDED("measurements", &files),
        CLI_BOUNDED("select", &sel),
        CLI_BOUNDED("exclude", &exc),
        CLI_STR("group", &a->group),
        CLI_STR("scheduler-rule", &a->sched_rule),
        CLI_STR("concurrency", &a->conc_spec),
        CLI_STR("request-rate", &a->rate_spec),
        {.name = "prompt-tokens",
         .kind = CLI_OPT_I64,
         .dst = &a->prompt,
         .min = 1,
         .max = (double)(INT64_C(1) << 30),
         .expect = positive},
        {.name = "output-tokens",
         .kind = CLI_OPT_I64,
         .dst = &a->output,
         .min = 1,
         .max = (double)(INT64_C(1) << 30),
         .expect = positive},
        {.name = "num-requests",
         .kind = CLI_OPT_I64,
         .dst = &a->n_req,
         .min = 1,
         .max = (double)SIM_WORKLOAD_MAX_REQUESTS,
         .expect = positive},
        CLI_DBL("range-ratio", &a->range_ratio, 0.0, 0.999),
    };
    *done = 0;
    if (argc < 2) {
        cli_help_print(stderr, &plot_help, t, CLI_N(t));
        return CLI_USAGE;
    }
    /* `plot --help` prints the usage whatever follows. */
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cli_opts_parse_help("plot", 2, argv, t, CLI_N(t), &plot_help, done, NULL);
    a->what = argv[1];
    a->kind = PLOT_KIND_COUNT;
    for (int k = 0; k < PLOT_KIND_COUNT; k++)
        if (strcmp(a->what, plots[k].name) == 0)
            a->kind = (plot_kind)k;
    if (a->kind == PLOT_KIND_COUNT) {
        cli_error("plot: unknown plot '%s' (expected roofline, sweep, validate or serving)",
                  a->what);
        return CLI_USAGE;
    }
    int rc = cli_opts_parse_help("plot", argc - 1, argv + 1, t, CLI_N(t), &plot_help, done, NULL);
    a->n_files = files.l.n;
    a->n_sel = sel.l.n;
    a->n_exc = exc.l.n;
    return rc;
}

/* The checks between the options, and the engine default. */
static int check_plot_args(plot_args *a)
{
    const plot_kind k = a->kind;
    const char *what = a->what;
    if (!a->out) {
        cli_error("plot %s: --out FILE.svg|FILE.png is required", what);
        return CLI_USAGE;
    }
    if (k != PLOT_VALIDATE && (!a->model || !a->hw)) {
        cli_error("plot %s: --model and --hw are required", what);
        return CLI_USAGE;
    }
    if (k == PLOT_ROOFLINE && a->st.n_groups == 0) {
        cli_error("plot roofline: give the step with --decode, --prefill or --chunk");
        return CLI_USAGE;
    }
    if (k != PLOT_SERVING && (a->conc_spec || a->rate_spec || a->prompt > 0 || a->output > 0 ||
                              a->n_req > 0 || a->range_ratio >= 0.0)) {
        cli_error("plot %s: --concurrency, --request-rate, --prompt-tokens, --output-tokens, "
                  "--num-requests and --range-ratio belong to plot serving",
                  what);
        return CLI_USAGE;
    }
    if (k == PLOT_SERVING && (a->prompt < 0 || a->output < 0)) {
        cli_error("plot serving: --prompt-tokens and --output-tokens are required");
        return CLI_USAGE;
    }
    if (k == PLOT_SERVING && a->conc_spec && a->rate_spec) {
        cli_error("plot serving: give one of --concurrency (closed loop) and --request-rate "
                  "(open loop)");
        return CLI_USAGE;
    }
    if (!a->engine && k != PLOT_ROOFLINE) /* plot roofline takes the calibration's engine */
        a->engine = CLI_DEFAULT_ENGINE;
    if (k == PLOT_VALIDATE && a->n_files == 0) {
        cli_error("plot validate: give at least one --measurements FILE");
        return CLI_USAGE;
    }
    char gbuf[8];
    if (k == PLOT_VALIDATE && !group_value(sim_meas_row_blank(), a->group, gbuf, sizeof(gbuf))) {
        cli_error("plot validate: --group '%s': expected model, hardware, tp, batch or kind",
                  a->group);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* plot roofline: the run and its step, checked. */
static int open_roofline(const plot_args *a, cli_run *run)
{
    memset(run, 0, sizeof(*run)); /* closed by the caller whatever happens here */
    cli_run_spec spec;
    cli_run_spec_init(&spec);
    spec.model = a->model;
    spec.hw = a->hw;
    spec.engine = a->engine;
    spec.dtype = a->dtype;
    spec.kv_dtype = a->kv_dtype;
    spec.calibration = a->calib;
    spec.sched = a->sched;
    if (a->tp_spec && cli_parse_i64(a->tp_spec, 1, 4096, &spec.tp) != 0) {
        cli_error("plot roofline: --tp '%s': expected an integer >= 1", a->tp_spec);
        return CLI_USAGE;
    }
    int rc = cli_run_open(&spec, run);
    struct sim_err err;
    if (rc == CLI_OK && sim_step_check(&run->model, &run->cfg, &a->st, &err) != SIM_OK) {
        cli_error("%s: %s", run->model_path, err.msg);
        rc = CLI_BAD_INPUT;
    }
    return rc;
}

/* plot sweep and plot serving: the sweep options and axes (axes: 3 x 4096 values). */
static int open_sweep(const plot_args *a, cli_sweep_opts *so, int64_t *axes, double **rates)
{
    const int serving = a->kind == PLOT_SERVING;
    const char *batch_spec = a->batch_spec, *ctx_spec = a->ctx_spec;
    cli_sweep_opts_init(so);
    so->models[0] = a->model;
    so->n_models = 1;
    so->hws[0] = a->hw;
    so->n_hws = 1;
    so->calibration = a->calib;
    so->engine = a->engine;
    so->dtype = a->dtype;
    so->kv_dtype = a->kv_dtype;
    so->host_time = !a->no_host;
    so->sched = a->sched;
    if (serving) {
        so->kind = SIM_SWEEP_SERVING;
        so->prompt_tokens = a->prompt;
        so->output_tokens = a->output;
        so->num_requests = a->n_req; /* usage: the server's, from the driver */
        so->range_ratio = a->range_ratio;
        batch_spec = a->conc_spec ? a->conc_spec : SIM_SWEEP_DEFAULT_BATCH;
        ctx_spec = "0";
        if (a->rate_spec) {
            *rates = malloc(4096 * sizeof(**rates));
            if (!*rates)
                return CLI_NUMERIC;
            if (cli_sweep_parse_rates("plot serving", a->rate_spec, *rates, 4096, &so->n_rates) !=
                CLI_OK)
                return CLI_USAGE;
            so->rates = *rates;
        }
    }
    struct sim_err err;
    if (sim_sweep_parse_list(a->tp_spec ? a->tp_spec : SIM_SWEEP_DEFAULT_TP, 1, 4096, axes,
                             serving ? 8 : 4096, &so->axes.n_tp, &err) != SIM_OK ||
        sim_sweep_parse_list(batch_spec, 1, serving ? 65536 : INT64_C(1) << 30, axes + 4096, 4096,
                             &so->axes.n_batch, &err) != SIM_OK ||
        sim_sweep_parse_list(ctx_spec, 0, INT64_C(1) << 30, axes + 8192, 1, &so->axes.n_context,
                             &err) != SIM_OK) {
        cli_error("plot %s: %s (%s)", a->what, err.msg,
                  serving ? "--tp takes up to 8 values" : "--context takes one value");
        return CLI_USAGE;
    }
    so->axes.tp = axes;
    so->axes.batch = axes + 4096;
    so->axes.context = axes + 8192;
    sim_dtype dt;
    if ((a->dtype && sim_dtype_parse(a->dtype, &dt) != SIM_OK) ||
        (a->kv_dtype && sim_dtype_parse(a->kv_dtype, &dt) != SIM_OK)) {
        cli_error("plot %s: --dtype and --kv-dtype: expected fp16, bf16 or fp8", a->what);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The measurement rows of plot validate (and those plot serving overlays). */
_Static_assert(PLOT_MAX_SEL <= SIM_MEAS_MAX_FILTERS, "plot's --select/--exclude fit one load");

static int load_meas(const plot_args *a, sim_meas_set *set)
{
    char who[32];
    snprintf(who, sizeof(who), "plot %s: ", a->what);
    struct sim_err err;
    int bad_term;
    if (sim_meas_load_selected(a->files, (size_t)a->n_files, a->sel, (size_t)a->n_sel, a->exc,
                               (size_t)a->n_exc, who, set, &bad_term, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return bad_term ? CLI_USAGE : CLI_BAD_INPUT;
    }
    sim_sched_rule rule = SIM_SCHED_RULE_DEFAULTS;
    if (a->sched_rule && sim_sched_rule_parse(a->sched_rule, &rule, &err) != SIM_OK) {
        cli_error("plot %s: --scheduler-rule: %s", a->what, err.msg);
        return CLI_USAGE;
    }
    sim_meas_apply_sched_rule(set, rule);
    return CLI_OK;
}

/* The image must not replace a file the plot reads (issue 27: `--model ./m.svg --out m.svg`
 * wrote over the model): the model, profile, engine and calibration named, the measurement
 * files and the traces their rows name. */
static int out_not_an_input(const plot_args *a, const sim_meas_set *set)
{
    char names[2][4096];
    const char *split[2][64];
    size_t n_split[2] = {0, 0};
    const char *lists[2] = {a->model, a->hw};
    for (int k = 0; k < 2; k++)
        if (lists[k] &&
            snprintf(names[k], sizeof(names[k]), "%s", lists[k]) < (int)sizeof(names[k]))
            (void)cli_split_names(names[k], split[k], 64, &n_split[k]);
    const size_t cap = 2 + n_split[0] + n_split[1] + (size_t)a->n_files + set->n;
    const char **in = malloc(cap * sizeof(*in));
    if (!in) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    size_t n = 0;
    in[n++] = a->engine;
    in[n++] = a->calib;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n_split[k]; i++)
            in[n++] = split[k][i];
    for (int i = 0; i < a->n_files; i++)
        in[n++] = a->files[i];
    for (size_t i = 0; i < set->n; i++)
        in[n++] = set->rows[i].trace && set->rows[i].trace[0] ? set->rows[i].trace : NULL;
    const int rc = cli_output_clear("plot", "--out", a->out, NULL, in, n);
    free(in);
    return rc;
}

/* Draws the plot into the job. */
static int draw(const plot_args *a, plot_job *job, const cli_run *run, const cli_sweep_opts *so,
                sim_meas_set *set)
{
    switch (a->kind) {
    case PLOT_ROOFLINE:
        return plot_roofline(job, run, &a->st);
    case PLOT_SWEEP:
        return plot_sweep(job, so,
                          a->calib ? "calibrated where a calibration was found"
                                   : "uncalibrated: alpha = 1, beta = 0");
    case PLOT_SERVING:
        return plot_serving(job, so, a->model, a->hw, set,
                            a->calib ? "calibrated" : "uncalibrated: alpha = 1, beta = 0");
    default:
        return plot_validate(job, set, a->calib, a->engine, a->engine_given, a->no_host, a->group);
    }
}

int cmd_plot(int argc, char **argv)
{
    static plot_args a;
    memset(&a, 0, sizeof(a));
    a.prompt = a.output = -1;
    a.range_ratio = -1.0; /* the default spread (sim_workload_range_ratio) */
    a.batch_spec = SIM_SWEEP_DEFAULT_BATCH;
    a.ctx_spec = SIM_SWEEP_DEFAULT_CONTEXT;
    a.group = "model";
    sim_sched_cfg_unset(&a.sched);
    int done, rc = parse_plot_args(argc, argv, &a, &done);
    if (rc != CLI_OK || done)
        return rc;
    rc = check_plot_args(&a);
    if (rc != CLI_OK)
        return rc;
    /* Everything is loaded and checked before the temporary folder exists. */
    cli_run run;
    int run_open = 0;
    cli_sweep_opts so;
    int64_t *axes = NULL;
    double *rates = NULL;
    sim_meas_set set;
    sim_meas_set_init(&set);
    if (a.kind == PLOT_ROOFLINE) {
        rc = open_roofline(&a, &run);
        run_open = 1;
    } else if (a.kind == PLOT_SWEEP || a.kind == PLOT_SERVING) {
        axes = malloc(3 * 4096 * sizeof(*axes));
        rc = axes ? open_sweep(&a, &so, axes, &rates) : CLI_NUMERIC;
        if (rc == CLI_NUMERIC)
            cli_error("out of memory");
    }
    if (rc == CLI_OK && (a.kind == PLOT_VALIDATE || (a.kind == PLOT_SERVING && a.n_files > 0)))
        rc = load_meas(&a, &set);
    if (rc == CLI_OK)
        rc = out_not_an_input(&a, &set);
    plot_job job;
    int job_opened = 0;
    if (rc == CLI_OK) {
        rc = job_open(&job, a.out);
        job_opened = 1;
    }
    if (rc == CLI_OK)
        rc = job_script(&job, plots[a.kind].width, plots[a.kind].height);
    if (rc == CLI_OK)
        rc = draw(&a, &job, &run, &so, &set);
    if (rc == CLI_OK)
        rc = job_render(&job);
    if (rc == CLI_OK)
        printf("plot %s: wrote %s\n", a.what, a.out);
    if (job_opened)
        job_close(&job);
    if (run_open)
        cli_run_close(&run);
    free(axes);
    free(rates);
    sim_meas_set_free(&set);
    return rc;
}
