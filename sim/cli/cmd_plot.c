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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

static void plot_usage(FILE *f)
{
    fputs("usage: llmstep plot roofline --hw ID --model ID [--tp N] [--dtype T] STEP... --out F\n"
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
          "            model), as `llmstep validate` computes them\n"
          "  serving   TTFT and TPOT against concurrency (closed loop, default 1:256) or request\n"
          "            rate (Poisson), one colour per TP (up to 8): the simulated mean (solid)\n"
          "            and p90 (dashed) from `llmstep sweep --kind serving` (engine vllm-v1),\n"
          "            and, with --measurements, the measured serving rows of the same model,\n"
          "            hardware, TP, lengths and arrival (marker by statistic: mean, p50,\n"
          "            p90, p99); --select/--exclude filter them; --num-requests N\n"
          "\n"
          "Common options: --engine ID, --calibration FILE (alpha and beta_s), --no-host-time,\n"
          "--dtype T, --kv-dtype T; sweep also --max-model-len N, --max-num-seqs N,\n"
          "--gpu-memory-utilization F (as for llmstep sweep).\n"
          "\n"
          "Examples:\n"
          "  llmstep plot roofline --hw h100-sxm --model llama-3.1-8b --decode 32x2048 "
          "--out roofline.svg\n"
          "  llmstep plot sweep --model llama-3.1-70b --hw h100-sxm --tp 2,4,8 --batch 1:256 "
          "--context 4096 --out sweep.png\n"
          "  llmstep plot validate --measurements measurements/example.jsonl --select "
          "hardware=h100-sxm \\\n"
          "      --calibration calibrations/h100-sxm.json --out validate.png\n",
          f);
}

/* Paths go into gnuplot's single-quoted strings: refuse the characters that would break them. */
/* ----- option parsing ----- */

enum {
    OPT_OUT = 256,
    OPT_MODEL,
    OPT_HW,
    OPT_TP,
    OPT_DTYPE,
    OPT_KV,
    OPT_DECODE,
    OPT_PREFILL,
    OPT_CHUNK,
    OPT_BATCH,
    OPT_CONTEXT,
    OPT_CALIB,
    OPT_ENGINE,
    OPT_NO_HOST,
    OPT_MEAS,
    OPT_SELECT,
    OPT_EXCLUDE,
    OPT_GROUP,
    OPT_LEN,
    OPT_UTIL,
    OPT_SEQS,
    OPT_CONC,
    OPT_RATE,
    OPT_PROMPT,
    OPT_OUTPUT,
    OPT_NREQ,
};

int cmd_plot(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, OPT_OUT},
        {"model", required_argument, NULL, OPT_MODEL},
        {"hw", required_argument, NULL, OPT_HW},
        {"tp", required_argument, NULL, OPT_TP},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"kv-dtype", required_argument, NULL, OPT_KV},
        {"decode", required_argument, NULL, OPT_DECODE},
        {"prefill", required_argument, NULL, OPT_PREFILL},
        {"chunk", required_argument, NULL, OPT_CHUNK},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {"calibration", required_argument, NULL, OPT_CALIB},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"no-host-time", no_argument, NULL, OPT_NO_HOST},
        {"measurements", required_argument, NULL, OPT_MEAS},
        {"select", required_argument, NULL, OPT_SELECT},
        {"exclude", required_argument, NULL, OPT_EXCLUDE},
        {"group", required_argument, NULL, OPT_GROUP},
        {"max-model-len", required_argument, NULL, OPT_LEN},
        {"gpu-memory-utilization", required_argument, NULL, OPT_UTIL},
        {"max-num-seqs", required_argument, NULL, OPT_SEQS},
        {"concurrency", required_argument, NULL, OPT_CONC},
        {"request-rate", required_argument, NULL, OPT_RATE},
        {"prompt-tokens", required_argument, NULL, OPT_PROMPT},
        {"output-tokens", required_argument, NULL, OPT_OUTPUT},
        {"num-requests", required_argument, NULL, OPT_NREQ},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        plot_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    const char *what = argv[1];
    int kind = strcmp(what, "roofline") == 0   ? 0
               : strcmp(what, "sweep") == 0    ? 1
               : strcmp(what, "validate") == 0 ? 2
               : strcmp(what, "serving") == 0  ? 3
                                               : -1;
    if (kind < 0) {
        cli_error("plot: unknown plot '%s' (expected roofline, sweep, validate or serving)", what);
        return CLI_USAGE;
    }
    const char *out = NULL, *model = NULL, *hwname = NULL, *calib = NULL, *engine = NULL;
    const char *conc_spec = NULL, *rate_spec = NULL;
    int64_t prompt = -1, output = -1, n_req = 0;
    const char *dtype = NULL, *kv_dtype = NULL, *tp_spec = NULL, *batch_spec = "1:256";
    const char *ctx_spec = "2048", *group = "model";
    const char *files[PLOT_MAX_SEL], *sel[PLOT_MAX_SEL], *exc[PLOT_MAX_SEL];
    int n_files = 0, n_sel = 0, n_exc = 0, no_host = 0;
    sim_step st = {0};
    sim_sched_cfg sched;
    sim_sched_cfg_unset(&sched);
    int c;
    optind = 1;
    opterr = 0;
    argc--;
    argv++;
    int li = -1; /* index in opts of the long option getopt matched */
    while ((c = getopt_long(argc, argv, ":h", opts, &li)) != -1) {
        struct sim_err err;
        switch (c) {
        case OPT_OUT:
            out = optarg;
            break;
        case OPT_MODEL:
            model = optarg;
            break;
        case OPT_HW:
            hwname = optarg;
            break;
        case OPT_TP:
            tp_spec = optarg;
            break;
        case OPT_DTYPE:
            dtype = optarg;
            break;
        case OPT_KV:
            kv_dtype = optarg;
            break;
        case OPT_DECODE:
        case OPT_PREFILL:
        case OPT_CHUNK:
            if (cli_parse_group(c == OPT_DECODE    ? 'd'
                                : c == OPT_PREFILL ? 'p'
                                                   : 'c',
                                optarg, &st, &err) != 0) {
                cli_error("plot: %s", err.msg);
                return CLI_USAGE;
            }
            break;
        case OPT_BATCH:
            batch_spec = optarg;
            break;
        case OPT_CONTEXT:
            ctx_spec = optarg;
            break;
        case OPT_CALIB:
            calib = optarg;
            break;
        case OPT_ENGINE:
            engine = optarg;
            break;
        case OPT_NO_HOST:
            no_host = 1;
            break;
        case OPT_MEAS:
        case OPT_SELECT:
        case OPT_EXCLUDE: {
            const char **list = c == OPT_MEAS ? files : c == OPT_SELECT ? sel : exc;
            int *n = c == OPT_MEAS ? &n_files : c == OPT_SELECT ? &n_sel : &n_exc;
            if (*n == PLOT_MAX_SEL) {
                cli_error("plot: at most %d of --%s", PLOT_MAX_SEL, opts[li].name);
                return CLI_USAGE;
            }
            list[(*n)++] = optarg;
            break;
        }
        case OPT_GROUP:
            group = optarg;
            break;
        case OPT_LEN:
        case OPT_SEQS:
            if (cli_parse_sched_opt(c == OPT_LEN ? "max-model-len" : "max-num-seqs", optarg,
                                    &sched) != 0) {
                cli_error("plot: --%s '%s': expected a positive integer", opts[li].name, optarg);
                return CLI_USAGE;
            }
            break;
        case OPT_UTIL:
            if (cli_parse_sched_opt("gpu-memory-utilization", optarg, &sched) != 0) {
                cli_error("plot: --gpu-memory-utilization '%s': expected a number in (0, 1]",
                          optarg);
                return CLI_USAGE;
            }
            break;
        case OPT_CONC:
            conc_spec = optarg;
            break;
        case OPT_RATE:
            rate_spec = optarg;
            break;
        case OPT_PROMPT:
        case OPT_OUTPUT:
        case OPT_NREQ:
            if (cli_parse_i64(optarg, 1, c == OPT_NREQ ? 10000000 : INT64_C(1) << 30,
                              c == OPT_PROMPT   ? &prompt
                              : c == OPT_OUTPUT ? &output
                                                : &n_req) != 0) {
                cli_error("plot: --%s '%s': expected a positive integer", opts[li].name, optarg);
                return CLI_USAGE;
            }
            break;
        case 'h':
            plot_usage(stdout);
            return CLI_OK;
        default:
            return cli_getopt_fail("plot", c, argv);
        }
    }
    if (cli_no_operands("plot", argc, argv) != CLI_OK)
        return CLI_USAGE;
    if (!out) {
        cli_error("plot %s: --out FILE.svg|FILE.png is required", what);
        return CLI_USAGE;
    }
    if (kind != 2 && (!model || !hwname)) {
        cli_error("plot %s: --model and --hw are required", what);
        return CLI_USAGE;
    }
    if (kind == 0 && st.n_groups == 0) {
        cli_error("plot roofline: give the step with --decode, --prefill or --chunk");
        return CLI_USAGE;
    }
    if (kind != 3 && (conc_spec || rate_spec || prompt > 0 || output > 0 || n_req > 0)) {
        cli_error("plot %s: --concurrency, --request-rate, --prompt-tokens, --output-tokens and "
                  "--num-requests belong to plot serving",
                  what);
        return CLI_USAGE;
    }
    if (kind == 3 && (prompt < 0 || output < 0)) {
        cli_error("plot serving: --prompt-tokens and --output-tokens are required");
        return CLI_USAGE;
    }
    if (kind == 3 && conc_spec && rate_spec) {
        cli_error("plot serving: give one of --concurrency (closed loop) and --request-rate "
                  "(open loop)");
        return CLI_USAGE;
    }
    if (!engine && kind != 0) /* plot roofline takes the calibration's engine, if any */
        engine = CLI_DEFAULT_ENGINE;
    if (kind == 2 && n_files == 0) {
        cli_error("plot validate: give at least one --measurements FILE");
        return CLI_USAGE;
    }
    char gbuf[8];
    if (kind == 2 && !group_value(&(sim_meas_row){0}, group, gbuf, sizeof(gbuf))) {
        cli_error("plot validate: --group '%s': expected model, hardware, tp, batch or kind",
                  group);
        return CLI_USAGE;
    }
    /* Everything is loaded and checked before the temporary folder exists. */
    int rc = CLI_OK;
    cli_run run;
    int run_open = 0;
    cli_sweep_opts so;
    int64_t *axes = NULL;
    double *rates = NULL;
    sim_meas_set set;
    sim_meas_set_init(&set);
    if (kind == 0) {
        cli_run_spec spec;
        cli_run_spec_init(&spec);
        spec.model = model;
        spec.hw = hwname;
        spec.engine = engine;
        spec.dtype = dtype;
        spec.kv_dtype = kv_dtype;
        spec.calibration = calib;
        spec.sched = sched;
        if (tp_spec && cli_parse_i64(tp_spec, 1, 4096, &spec.tp) != 0) {
            cli_error("plot roofline: --tp '%s': expected an integer >= 1", tp_spec);
            return CLI_USAGE;
        }
        rc = cli_run_open(&spec, &run);
        run_open = 1;
        struct sim_err err;
        if (rc == CLI_OK && sim_step_check(&run.model, &run.cfg, &st, &err) != SIM_OK) {
            cli_error("%s: %s", run.model_path, err.msg);
            rc = CLI_BAD_INPUT;
        }
    } else if (kind == 1 || kind == 3) {
        cli_sweep_opts_init(&so);
        so.models[0] = model;
        so.n_models = 1;
        so.hws[0] = hwname;
        so.n_hws = 1;
        so.calibration = calib;
        so.engine = engine;
        so.dtype = dtype;
        so.kv_dtype = kv_dtype;
        so.host_time = !no_host;
        so.sched = sched;
        axes = malloc(3 * 4096 * sizeof(*axes));
        struct sim_err err;
        if (!axes) {
            cli_error("out of memory");
            return CLI_NUMERIC;
        }
        if (kind == 3) {
            so.kind = SIM_SWEEP_SERVING;
            so.prompt_tokens = prompt;
            so.output_tokens = output;
            so.num_requests = n_req;
            if (so.sched.usage < 0)
                so.sched.usage = SIM_USAGE_SERVER;
            batch_spec = conc_spec ? conc_spec : "1:256";
            ctx_spec = "0";
            if (rate_spec) {
                rates = malloc(4096 * sizeof(*rates));
                if (!rates || cli_sweep_parse_rates("plot serving", rate_spec, rates, 4096,
                                                    &so.n_rates) != CLI_OK) {
                    free(axes);
                    free(rates);
                    return rates ? CLI_USAGE : CLI_NUMERIC;
                }
                so.rates = rates;
            }
        }
        if (sim_sweep_parse_list(tp_spec ? tp_spec : "1,2,4,8", 1, 4096, axes, kind == 3 ? 8 : 4096,
                                 &so.axes.n_tp, &err) != SIM_OK ||
            sim_sweep_parse_list(batch_spec, 1, kind == 3 ? 65536 : INT64_C(1) << 30, axes + 4096,
                                 4096, &so.axes.n_batch, &err) != SIM_OK ||
            sim_sweep_parse_list(ctx_spec, 0, INT64_C(1) << 30, axes + 8192, 1, &so.axes.n_context,
                                 &err) != SIM_OK) {
            cli_error("plot %s: %s (%s)", what, err.msg,
                      kind == 3 ? "--tp takes up to 8 values" : "--context takes one value");
            free(axes);
            free(rates);
            return CLI_USAGE;
        }
        so.axes.tp = axes;
        so.axes.batch = axes + 4096;
        so.axes.context = axes + 8192;
        sim_dtype dt;
        if ((dtype && sim_dtype_parse(dtype, &dt) != SIM_OK) ||
            (kv_dtype && sim_dtype_parse(kv_dtype, &dt) != SIM_OK)) {
            cli_error("plot %s: --dtype and --kv-dtype: expected fp16, bf16 or fp8", what);
            free(axes);
            free(rates);
            return CLI_USAGE;
        }
    }
    if (rc == CLI_OK && (kind == 2 || (kind == 3 && n_files > 0))) {
        struct sim_err err;
        sim_meas_filter fs[PLOT_MAX_SEL], fe[PLOT_MAX_SEL];
        for (int i = 0; i < n_sel && rc == CLI_OK; i++)
            if (sim_meas_filter_parse(sel[i], &fs[i], &err) != SIM_OK) {
                cli_error("plot %s: --select %s", what, err.msg);
                rc = CLI_USAGE;
            }
        for (int i = 0; i < n_exc && rc == CLI_OK; i++)
            if (sim_meas_filter_parse(exc[i], &fe[i], &err) != SIM_OK) {
                cli_error("plot %s: --exclude %s", what, err.msg);
                rc = CLI_USAGE;
            }
        for (int i = 0; i < n_files && rc == CLI_OK; i++)
            if (sim_meas_load(files[i], &set, &err) != SIM_OK) {
                cli_error("%s", err.msg);
                rc = CLI_BAD_INPUT;
            }
        if (rc == CLI_OK)
            sim_meas_select(&set, fs, (size_t)n_sel, fe, (size_t)n_exc);
        if (rc == CLI_OK && set.n == 0) {
            cli_error("plot %s: no row matches the selection", what);
            rc = CLI_BAD_INPUT;
        }
    }
    plot_job job;
    int job_opened = 0;
    if (rc == CLI_OK) {
        rc = job_open(&job, out);
        job_opened = 1;
    }
    if (rc == CLI_OK)
        rc = kind == 1 || kind == 3 ? job_script(&job, 1500, 620)
             : kind == 2            ? job_script(&job, 1500, 680)
                                    : job_script(&job, 1400, 760);
    if (rc == CLI_OK) {
        if (kind == 0)
            rc = plot_roofline(&job, &run, &st);
        else if (kind == 1)
            rc = plot_sweep(&job, &so,
                            calib ? "calibrated where a calibration was found"
                                  : "uncalibrated: alpha = 1, beta = 0");
        else if (kind == 3)
            rc = plot_serving(&job, &so, model, hwname, &set,
                              calib ? "calibrated" : "uncalibrated: alpha = 1, beta = 0");
        else
            rc = plot_validate(&job, &set, calib, engine, no_host, group);
    }
    if (rc == CLI_OK)
        rc = job_render(&job);
    if (rc == CLI_OK)
        printf("plot %s: wrote %s\n", what, out);
    if (job_opened)
        job_close(&job);
    if (run_open)
        cli_run_close(&run);
    free(axes);
    free(rates);
    sim_meas_set_free(&set);
    return rc;
}
