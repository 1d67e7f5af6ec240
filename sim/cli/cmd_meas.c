/*
 * cmd_meas.c - `llmstep calibrate` and `llmstep validate`: the commands of
 * ../shared/MEASUREMENTS.md. Both read measurement files, select rows, and
 * predict each row as alpha x roofline + beta_s x steps + host time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_fit.h"
#include "cli.h"
#include "meas_fig.h"
#include "meas_json.h"
#include "meas_pred.h"
#include "metrics.h"
#include "opts.h"
#include "paths.h"

#define MAX_FILES    64
#define MAX_FILTERS  SIM_MEAS_MAX_FILTERS
#define MAX_GROUP_BY 6 /* fields of validate --group-by */

typedef struct meas_opts {
    const char *files[MAX_FILES];
    int n_files;
    const char *select[MAX_FILTERS], *exclude[MAX_FILTERS];
    int n_select, n_exclude;
    const char *format, *out, *calibration, *holdout;
    const char *refit; /* check --refit FILE */
    /* validate --group-by FIELD[,FIELD...]: one more table, by the fields' values together */
    const char *group_by;
    const char *gb_fields[MAX_GROUP_BY];
    int n_gb;
    char gb_buf[160];
    const char *fit;   /* --fit: "profile" or FIGURE[,FIGURE...]; NULL: alpha and beta_s only */
    sim_fit_loss loss; /* --loss of the figure fit */
    sim_meas_figspec figs;
    int self_check;         /* calibrate --self-check: fit from a profile with the figures reset */
    const char *sched_rule; /* --scheduler-rule: engine arguments of rows without their own */
    int keep_assumed;       /* --keep-assumed: rows whose run.assumed matters stay in */
    int64_t interval;       /* --interval L: the calibration's band at L% (0: none) */
    double min_coverage;    /* check --min-coverage-pct (< 0: the default rule) */
    int check;              /* the command is check, not validate */
    int no_band;            /* calibrate --no-band */
    /* engine, engine_given (--engine overrides the engine that rows name by engine_version),
     * mode, gemm, no_host and the fit options */
    sim_meas_opts p;
} meas_opts;

/* A command's usage: its head and tail, and its options' lines (whole, as printed) in the order
 * it lists them. calibrate and validate share one option table but list different options in
 * different orders, so parse_opts orders a copy of the table by these lines. */
typedef struct meas_line {
    const char *name, *help;
} meas_line;
typedef struct meas_usage {
    cli_help h;
    const meas_line *lines;
    int n_lines;
} meas_usage;

/* No lines of their own: --calibration and --holdout (validate's), --alpha-max and
 * --beta-max-s (on --alpha-min's and --beta-min-s' lines). */
static const meas_line calibrate_lines[] = {
    {"measurements", "  --measurements FILE     a JSON Lines measurement file (repeatable; more "
                     "files may follow)\n"},
    {"select",
     "  --select FIELD=VALUE    keep rows where FIELD equals VALUE (repeatable; all must hold)\n"},
    {"exclude",
     "  --exclude FIELD=VALUE   drop rows where FIELD equals VALUE (repeatable; any drops)\n"},
    {"out", "  --out FILE              calibration file to write (required)\n"},
    {"weighting",
     "  --weighting W           relative (default: minimizes squared relative errors, i.e. what\n"
     "                          MAPE measures) or absolute (plain least squares in seconds)\n"},
    {"alpha-min", "  --alpha-min X, --alpha-max X      bounds on alpha (default 0.1 and 10)\n"},
    {"beta-min-s",
     "  --beta-min-s X, --beta-max-s X    bounds on beta_s in seconds (default 0 and 1;\n"
     "                                    0 to 1000)\n"},
    {"engine", "  --engine ID             engine profile whose host time is taken as known "
               "(default vllm-v0)\n"},
    {"no-host-time",
     "  --no-host-time          predict without the engine's host time (beta_s absorbs it)\n"},
    {"scheduler-rule",
     "  --scheduler-rule R      the engine arguments the rows' runs were started with, for rows\n"
     "                          without a \"scheduler\" object: engine-defaults (default) or\n"
     "                          aic-benchmark (aiconfigurator's generated vLLM deployments, as\n"
     "                          the aic-vllm-serving rows: closed-loop serving rows get\n"
     "                          max_num_seqs N, max_num_batched_tokens N + L + 1500 and\n"
     "                          max_model_len L + O + 1500 for N clients, L prompt and O output\n"
     "                          tokens; docs/serving.md)\n"},
    {"keep-assumed",
     "  --keep-assumed          also fit rows whose run.assumed names a field the prediction\n"
     "                          uses (by default they are set aside and reported, not fitted)\n"},
    {"keep-outliers",
     "  --keep-outliers         also fit rows with a per-call constant (offline-batch length\n"
     "                          series whose fitted intercept exceeds 10% of their shortest run;\n"
     "                          by default they are reported and not fitted; "
     "docs/calibration.md)\n"},
    {"no-band",
     "  --no-band               do not record the band (each row held out of a fit: one fit\n"
     "                          per group, which with serving rows takes seconds each)\n"},
    {"roofline", "  --roofline op|step      roofline mode (default op)\n"},
    {"gemm", "  --gemm flat|tile-wave   GEMM compute ceiling model (default flat)\n"},
    {"format", "  --format table|json     report format on stdout (default table)\n"},
    {"fit",
     "  --fit FIGURE[,FIGURE...]  also fit these hardware-profile figures (e.g.\n"
     "                          gemm_eff_fp16_frac,gemm_fixed_s), within physical bounds, with\n"
     "                          priors from the profile; attn_decode_kv_per_q_head_flag is chosen\n"
     "                          by fitting both values. A figure the rows do not determine\n"
     "                          (relative stderr > 25%, |correlation| > 0.95, on its bound) is\n"
     "                          held at the profile's value and not written.\n"
     "                          attn_decode_block_bw_bytes_per_s, which profiles lack, starts\n"
     "                          under a flat prior and, undetermined, is left out.\n"
     "                          Serving rows are re-simulated for each trial (three runs each:\n"
     "                          seconds to minutes), e.g. moe_gemm_eff_mxfp4_frac from TTFT rows.\n"
     "  --fit profile           the default set the rows support (printed with the reasons)\n"},
    {"loss",
     "  --loss huber|cauchy|l2  loss of the figure fit (default huber)\n"
     "                          With --fit, rows of 2 or more models (or TPs) are also fitted\n"
     "                          leaving each out, and the held-out error of the figure fit is\n"
     "                          printed next to alpha/beta only's (docs/calibration.md). The\n"
     "                          profile set keeps its figures only when they also beat\n"
     "                          alpha/beta leaving out each model (or TP) of the rows, by\n"
     "                          more than a standard error pooled and on no model worse,\n"
     "                          and when the whole procedure is repeated inside those folds;\n"
     "                          else it falls back to alpha/beta only. Figures apply only to\n"
     "                          the classes of model of the rows (dense/moe x mha/gqa/mla;\n"
     "                          the small-M GEMM class alone: every attention of the rows'\n"
     "                          dense/moe kinds); other models get the alpha/beta-only fit\n"
     "                          (written too).\n"},
    {"self-check",
     "  --self-check            with --fit: the method's self-check. The candidate figures of\n"
     "                          the rows' profile are reset to their documented defaults (loose\n"
     "                          priors), fitted from the rows, and compared with the profile's\n"
     "                          own (kernel-derived) values in standard errors.\n"},
};

static const meas_usage calibrate_usage = {
    {.head =
         "usage: llmstep calibrate --measurements FILE... --out CALIB.json [options]\n"
         "\n"
         "Fits alpha and beta_s (GSL weighted least squares) so that each selected row is\n"
         "predicted as alpha x (sum of roofline step times) + beta_s x (steps) + host time, and\n"
         "writes the calibration file atomically. All rows must name one hardware profile.\n"
         "\n"
         "Options:\n",
     .tail = "\n"
             "Exit status: 0 ok, 1 bad input, 2 usage, 3 fit failure.\n"
             "Example:\n"
             "  llmstep calibrate --measurements "
             "../shared/data/measurements/argonne-vllm-offline.jsonl \\\n"
             "      --select hardware=h100-sxm --select model=llama-2-7b --select tp=1 --out "
             "h100.json\n"},
    calibrate_lines,
    CLI_N(calibrate_lines),
};

/* No lines of their own: calibrate's --out and --self-check, and the options listed on
 * --engine's and --fit's lines. The note on a calibration's figures follows --fit's line. */
static const meas_line validate_lines[] = {
    {"measurements", "  --measurements FILE     a JSON Lines measurement file (repeatable)\n"},
    {"select",
     "  --select FIELD=VALUE    keep rows where FIELD equals VALUE (repeatable; all must hold)\n"},
    {"exclude", "  --exclude FIELD=VALUE   drop rows where FIELD equals VALUE (repeatable)\n"},
    {"calibration", "  --calibration FILE      alpha and beta_s to apply\n"},
    {"holdout",
     "  --holdout FIELD         leave-one-group-out cross-validation: for each value of FIELD\n"
     "                          (model, hardware, tp, batch, prompt_tokens, kind...), fit on the\n"
     "                          other rows and predict the held-out ones; reports the pooled\n"
     "                          held-out error (fit options as for calibrate)\n"},
    {"engine", "  --engine ID, --no-host-time, --scheduler-rule R, --roofline op|step, --gemm M,\n"
               "  --weighting W, --alpha-min ...  as for calibrate\n"},
    {"fit",
     "  --fit LIST, --loss L    with --holdout: each fold fits these figures too (as calibrate)\n"
     "  A calibration's fitted figures (\"figures\") replace the profile's before predicting.\n"},
    {"group-by",
     "  --group-by F[,F...]     one more table: the errors by the values of these fields\n"
     "                          together (up to 6 of the fields --holdout takes), e.g.\n"
     "                          model,hardware,dtype,tp,metric\n"},
    {"keep-assumed",
     "  --keep-assumed          count rows whose run.assumed names a field the prediction uses\n"
     "                          (by default they are predicted and reported apart, with the\n"
     "                          calibration given or uncalibrated, and not in the errors above)\n"},
    {"keep-outliers",
     "  --keep-outliers         with --holdout: folds also fit rows with a per-call constant\n"
     "                          (listed after the table; in the errors either way)\n"},
    {"interval",
     "  --interval L            with --calibration: how many rows fall in its band's L% interval\n"
     "                          (10, 20, ..., 100), per metric family, and its width. With\n"
     "                          --holdout: each group's rows against the band a calibration on\n"
     "                          the other groups records (the band's coverage on rows no fit\n"
     "                          and no band saw)\n"},
    {"format", "  --format table|json     default table; json prints the MEASUREMENTS.md object\n"},
};

static const meas_usage validate_usage = {
    {.head = "usage: llmstep validate --measurements FILE... [--calibration CALIB.json] [options]\n"
             "\n"
             "Predicts every selected row and reports MAPE, median APE, max APE and R^2, with the\n"
             "errors grouped by model, TP, batch and kind, and a per-row table. Without\n"
             "--calibration, alpha = 1 and beta_s = 0. Keys of a row's \"run\" object that the\n"
             "simulation does not follow are counted and listed (MEASUREMENTS.md, \"run\").\n"
             "\n"
             "Options:\n",
     .tail = ""},
    validate_lines,
    CLI_N(validate_lines),
};

/* check's options: validate's row options and the band's. */
static const meas_line check_lines[] = {
    {"measurements", "  --measurements FILE     a JSON Lines measurement file of the new runs "
                     "(repeatable)\n"},
    {"select",
     "  --select FIELD=VALUE    keep rows where FIELD equals VALUE (repeatable; all must hold)\n"},
    {"exclude", "  --exclude FIELD=VALUE   drop rows where FIELD equals VALUE (repeatable)\n"},
    {"calibration", "  --calibration FILE      the calibration, with its band (required)\n"},
    {"interval",
     "  --interval L            the band's L% interval (default 80; 10, 20, ..., 100)\n"},
    {"min-coverage-pct",
     "  --min-coverage-pct P    a family drifts when fewer than P% of its rows fall in the\n"
     "                          interval (default: L minus two binomial standard errors of L\n"
     "                          at the family's rows, and at least 10 points below L)\n"},
    {"engine", "  --engine ID, --no-host-time, --scheduler-rule R, --roofline op|step, --gemm M\n"
               "                          as for validate\n"},
    {"refit",
     "  --refit FILE            also fit alpha and beta_s to the new rows and write them,\n"
     "                          with their band and what they replace (\"refit_of\")\n"},
    {"format", "  --format table|json     default table\n"},
};

static const meas_usage check_usage = {
    {.head = "usage: llmstep check --measurements FILE... --calibration CALIB.json [options]\n"
             "\n"
             "Drift alarm: predicts the new rows with the calibration and compares each metric\n"
             "family (offline_batch, prefill, decode, step, ttft, ttft_queued, tpot, e2e) with\n"
             "the band the calibration recorded (measured / predicted of its own rows, each held\n"
             "out of the fit; a serving TTFT row is ttft_queued when its simulated TTFT is mostly\n"
             "queueing). A family whose rows fall in the interval less often than the band says\n"
             "is reported with its coverage and its median measured / predicted: the engine,\n"
             "the GPU or the workload changed since the calibration. --refit writes the new fit.\n"
             "\n"
             "Options:\n",
     .tail = "\n"
             "Exit status: 0 no drift, 4 drift (the families are named), 1 bad input (or no\n"
             "family the band covers), 2 usage, 3 numerical failure.\n"
             "docs/calibration.md, \"Prediction intervals and the drift alarm\".\n"},
    check_lines,
    CLI_N(check_lines),
};

static int parse_weighting(const char *arg, void *dst, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    sim_fit_weight *w = dst;
    if (strcmp(arg, "relative") == 0)
        *w = SIM_FIT_RELATIVE;
    else if (strcmp(arg, "absolute") == 0)
        *w = SIM_FIT_ABSOLUTE;
    else
        return -1;
    return 0;
}

static int parse_loss(const char *arg, void *dst, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    for (int l = 0; l < SIM_LOSS_COUNT; l++)
        if (strcmp(arg, sim_fit_loss_name((sim_fit_loss)l)) == 0) {
            *(sim_fit_loss *)dst = (sim_fit_loss)l;
            return 0;
        }
    return -1;
}

/* t: the n options of base in the order of the usage's lines, each with its lines, then the
 * others (no line of their own). */
static void order_by_usage(const cli_opt *base, int n, const meas_usage *u, cli_opt *t)
{
    int k = 0, placed[CLI_OPTS_MAX] = {0};
    for (int l = 0; l < u->n_lines; l++)
        for (int i = 0; i < n; i++)
            if (!placed[i] && strcmp(base[i].name, u->lines[l].name) == 0) {
                t[k] = base[i];
                t[k++].help = u->lines[l].help;
                placed[i] = 1;
            }
    for (int i = 0; i < n; i++)
        if (!placed[i])
            t[k++] = base[i];
}

static int parse_opts(int argc, char **argv, meas_opts *o, const meas_usage *u, int *done)
{
    memset(o, 0, sizeof(*o));
    o->min_coverage = -1.0;
    o->p.engine = SIM_MEAS_DEFAULT_ENGINE;
    o->format = "table";
    o->p.mode = SIM_ROOFLINE_OP;
    sim_fit_opts_default(&o->p.fit);
    const char *cmd = argv[0];
    cli_opt_list files = {o->files, 0, MAX_FILES}, sel = {o->select, 0, MAX_FILTERS},
                 exc = {o->exclude, 0, MAX_FILTERS};
    sim_fit_opts *fit = &o->p.fit;
    const cli_opt base[] = {
        CLI_FILES("measurements", &files),
        CLI_LIST("select", &sel),
        CLI_LIST("exclude", &exc),
        CLI_STR_SEEN("engine", &o->p.engine, &o->p.engine_given),
        CLI_STR("format", &o->format),
        CLI_STR("out", &o->out),
        CLI_STR("refit", &o->refit),
        CLI_STR("calibration", &o->calibration),
        CLI_STR("holdout", &o->holdout),
        CLI_STR("group-by", &o->group_by),
        CLI_FLAG("no-host-time", &o->p.no_host),
        CLI_ROOFLINE("roofline", &o->p.mode),
        CLI_CUSTOM("weighting", parse_weighting, &fit->weight),
        CLI_DBL("alpha-min", &fit->alpha_min, 0.0, 1e6),
        CLI_DBL("alpha-max", &fit->alpha_max, 0.0, 1e6),
        CLI_DBL("beta-min-s", &fit->beta_min_s, 0.0, SIM_BETA_MAX_S),
        CLI_DBL("beta-max-s", &fit->beta_max_s, 0.0, SIM_BETA_MAX_S),
        CLI_GEMM("gemm", &o->p.gemm),
        /* repeatable, as the lists: the last one is fitted */
        {.name = "fit", .kind = CLI_OPT_STR, .dst = &o->fit, .repeatable = 1},
        CLI_CUSTOM("loss", parse_loss, &o->loss),
        CLI_FLAG("self-check", &o->self_check),
        CLI_STR("scheduler-rule", &o->sched_rule),
        CLI_FLAG("keep-assumed", &o->keep_assumed),
        CLI_FLAG("keep-outliers", &o->p.keep_outliers),
        CLI_FLAG("no-band", &o->no_band),
        CLI_I64("interval", &o->interval, 10, 100),
        CLI_DBL("min-coverage-pct", &o->min_coverage, 0.0, 100.0),
    };
    _Static_assert(sizeof(base) / sizeof(base[0]) <= CLI_OPTS_MAX, "order_by_usage's placed[]");
    cli_opt t[CLI_N(base)];
    order_by_usage(base, CLI_N(base), u, t);
    int first = argc;
    int rc = cli_opts_parse_help(cmd, argc, argv, t, CLI_N(t), &u->h, done, &first);
    if (rc != CLI_OK || *done)
        return rc;
    for (int i = first; i < argc && files.n < MAX_FILES; i++)
        o->files[files.n++] = argv[i];
    o->n_files = files.n;
    o->n_select = sel.n;
    o->n_exclude = exc.n;
    if (o->n_files == 0) {
        cli_error("%s: give at least one --measurements FILE", cmd);
        return CLI_USAGE;
    }
    if (strcmp(o->format, "table") != 0 && strcmp(o->format, "json") != 0) {
        cli_error("%s: --format '%s': expected table or json", cmd, o->format);
        return CLI_USAGE;
    }
    if (!(o->p.fit.alpha_min <= o->p.fit.alpha_max) ||
        !(o->p.fit.beta_min_s <= o->p.fit.beta_max_s)) {
        cli_error("%s: bounds: minimum above maximum", cmd);
        return CLI_USAGE;
    }
    if (o->fit) {
        struct sim_err err;
        if (sim_meas_figspec_parse(o->fit, o->loss, &o->figs, &err) != SIM_OK) {
            cli_error("%s: %s", cmd, err.msg);
            return CLI_USAGE;
        }
        if (o->p.fit.weight != SIM_FIT_RELATIVE) {
            cli_error("%s: --fit uses relative residuals; drop --weighting absolute", cmd);
            return CLI_USAGE;
        }
    }
    return CLI_OK;
}

/* An output (--out, --refit) that would replace a measurement file: CLI_USAGE, said. */
static int not_an_input(const meas_opts *o, const char *cmd, const char *opt, const char *path)
{
    for (int i = 0; path && i < o->n_files; i++)
        if (sim_path_same(path, o->files[i])) {
            cli_error("%s: %s %s is the measurement file %s; it would be replaced", cmd, opt, path,
                      o->files[i]);
            return CLI_USAGE;
        }
    return CLI_OK;
}

/* Loads every file and applies the selection; rows whose run.assumed matters go to aside
 * (NULL: they stay) unless --keep-assumed. */
static int load_rows(const meas_opts *o, const char *cmd, sim_meas_set *set, sim_meas_set *aside)
{
    char who[32];
    snprintf(who, sizeof(who), "%s: ", cmd);
    struct sim_err err;
    int bad_term;
    if (sim_meas_load_selected(o->files, (size_t)o->n_files, o->select, (size_t)o->n_select,
                               o->exclude, (size_t)o->n_exclude, who, set, &bad_term,
                               &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return bad_term ? CLI_USAGE : CLI_BAD_INPUT;
    }
    sim_sched_rule rule = SIM_SCHED_RULE_DEFAULTS;
    if (o->sched_rule && sim_sched_rule_parse(o->sched_rule, &rule, &err) != SIM_OK) {
        cli_error("%s: --scheduler-rule: %s", cmd, err.msg);
        return CLI_USAGE;
    }
    sim_meas_apply_sched_rule(set, rule);
    size_t moved = 0;
    if (aside && !o->keep_assumed && sim_meas_set_aside_assumed(set, aside, &moved) != SIM_OK) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    if (moved > 0 && set->n == 0) {
        cli_error("%s: every selected row has run.assumed naming a field the prediction uses "
                  "(%s:%d: %s: %s); --keep-assumed takes them",
                  cmd, aside->rows[0].file, aside->rows[0].line, aside->rows[0].id,
                  aside->rows[0].assumed);
        return CLI_BAD_INPUT;
    }
    if (moved > 0 && strcmp(cmd, "calibrate") == 0) /* validate reports them in its output */
        fprintf(stderr,
                "llmstep %s: note: %zu row(s) set aside, not %s: run.assumed names a field the "
                "prediction uses (first: %s:%d: %s: %s); --keep-assumed takes them\n",
                cmd, moved, "fitted", aside->rows[0].file, aside->rows[0].line, aside->rows[0].id,
                aside->rows[0].assumed);
    return CLI_OK;
}

/* Prints a failure of the shared prediction code and returns its exit code: numerical
 * failures and lack of memory exit 3, the rest is bad input. */
static int meas_fail(sim_status st, const struct sim_err *err)
{
    cli_error("%s", err->msg);
    return cli_exit_of(st);
}

/* Predicts every row; prints the error on failure. */
static int predict_all(const meas_opts *o, const sim_meas_set *set, sim_cache **cache,
                       sim_meas_pred *mp)
{
    memset(mp, 0, sizeof(*mp));
    *cache = sim_cache_alloc(cli_data_dir());
    if (!*cache) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    struct sim_err err;
    sim_status st = sim_meas_predict_all(&o->p, set, *cache, mp, &err);
    return st == SIM_OK ? CLI_OK : meas_fail(st, &err);
}

static int predict_row(sim_meas_pred *mp, size_t i, double alpha, double beta_s, double *out)
{
    struct sim_err err;
    sim_status st = sim_meas_predict_row(mp, i, alpha, beta_s, out, &err);
    return st == SIM_OK ? CLI_OK : meas_fail(st, &err);
}

static int fit_rows(const meas_opts *o, sim_meas_pred *mp, sim_fit_result *res, const char *cmd)
{
    struct sim_err err;
    sim_status st = sim_meas_fit(&o->p, mp, NULL, cmd, res, &err);
    return st == SIM_OK ? CLI_OK : meas_fail(st, &err);
}

static int check_one_hardware(const sim_meas_set *set, const char *cmd)
{
    struct sim_err err;
    if (sim_meas_check_one_hw(set, cmd, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* Writes the calibration file (the command line that made it included), unless path is one of
 * the files the command read (sim_meas_output_clear: the measurement files, the rows' traces,
 * what mp's cache loaded). check --refit may replace the calibration it checks (refit_of
 * records it), which is read apart from the cache. */
static int write_calibration(const meas_opts *o, const sim_meas_pred *mp, const char *path,
                             int argc, char **argv, const char *hardware, const char *engine,
                             const sim_fit_result *res, const sim_meas_figfit *ff,
                             const sim_calib_band *band, const sim_calib_refit *refit)
{
    char command[2048] = "llmstep";
    size_t used = strlen(command);
    for (int i = 0; i < argc && used + 2 < sizeof(command); i++)
        used += (size_t)snprintf(command + used, sizeof(command) - used, " %s", argv[i]);
    const sim_meas_origin from = {
        o->files,   (size_t)o->n_files,
        o->select,  (size_t)o->n_select,
        o->exclude, (size_t)o->n_exclude,
        command,    o->sched_rule ? o->sched_rule : sim_sched_rule_name(SIM_SCHED_RULE_DEFAULTS),
        refit};
    struct sim_err err;
    if (sim_meas_output_clear(mp, path, o->files, (size_t)o->n_files, refit ? "check" : "calibrate",
                              refit ? "--refit" : "--out", &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_USAGE;
    }
    if (sim_meas_calib_write_figs(path, &o->p, &from, hardware, engine, res, ff, band, &err) !=
        SIM_OK) {
        cli_error("%s: %s", refit ? "check --refit" : "calibrate", err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* R^2 as the tables print it: undefined (NaN) when every measured time is the same, which a
 * table says in words (JSON prints null). */
static const char *r2_str(double r2, char *buf, size_t cap)
{
    if (isnan(r2))
        snprintf(buf, cap, "undefined (the measured times are all equal)");
    else
        snprintf(buf, cap, "%.4f", r2);
    return buf;
}

static void print_band(const sim_calib_band *b, const char *why, sim_jw *w);

static int print_calibration(const meas_opts *o, const char *hardware, const char *engine,
                             const sim_fit_result *res, const sim_calib_band *band, const char *why)
{
    if (strcmp(o->format, "json") == 0) {
        sim_jw w;
        cli_json_open(&w);
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "hardware", hardware);
        sim_jw_num(&w, "alpha", res->alpha);
        sim_jw_num(&w, "beta_s", res->beta_s);
        sim_jw_num(&w, "alpha_stderr", res->alpha_stderr);
        sim_jw_num(&w, "beta_stderr_s", res->beta_stderr_s);
        sim_jw_uint(&w, "n_rows", res->n_rows);
        sim_jw_num(&w, "mape_pct", res->fit.mape_pct);
        sim_jw_num(&w, "median_ape_pct", res->fit.median_ape_pct);
        sim_jw_num(&w, "max_ape_pct", res->fit.max_ape_pct);
        sim_jw_num(&w, "r2", res->fit.r2);
        sim_jw_bool(&w, "alpha_at_bound", res->alpha_at_bound);
        sim_jw_bool(&w, "beta_at_bound", res->beta_at_bound);
        sim_jw_str(&w, "out", o->out);
        print_band(band, why, &w);
        sim_jw_object_end(&w);
        return cli_json_close(&w, "calibrate");
    }
    printf("llmstep calibrate: %zu rows on %s (engine %s, %s weighting)\n", res->n_rows, hardware,
           o->p.no_host ? "none" : engine,
           o->p.fit.weight == SIM_FIT_ABSOLUTE ? "absolute" : "relative");
    printf("  alpha   %.6g +/- %.2g%s\n", res->alpha, res->alpha_stderr,
           res->alpha_at_bound ? "   (at a bound)" : "");
    printf("  beta_s  %.6g s +/- %.2g s%s\n", res->beta_s, res->beta_stderr_s,
           res->beta_at_bound ? "   (at a bound)" : "");
    char r2[64];
    printf("  fit     MAPE %.2f%%, median APE %.2f%%, max APE %.2f%%, R^2 %s\n", res->fit.mape_pct,
           res->fit.median_ape_pct, res->fit.max_ape_pct, r2_str(res->fit.r2, r2, sizeof(r2)));
    printf("  wrote   %s\n", o->out);
    print_band(band, why, NULL);
    return CLI_OK;
}

/* Held-out error of alpha/beta only and of the figure fit, leaving out each value of field. */
typedef struct fig_holdout {
    const char *field;
    int n_folds;
    double ab_mape_pct, fig_mape_pct;
} fig_holdout;

/* MAPE of leave-one-<field>-out, with the figure fit when figs is not NULL. */
static int holdout_mape(const meas_opts *o, sim_meas_pred *mp, const char *field,
                        const sim_meas_figspec *figs, int *n_folds, double *mape)
{
    const size_t n = mp->set->n;
    double *pred = malloc(n * sizeof(double));
    static sim_meas_fold folds[MAX_FILTERS];
    if (!pred) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    sim_meas_opts p = o->p;
    p.figs = figs;
    struct sim_err err;
    sim_status st = sim_meas_holdout(&p, mp, field, pred, NULL, folds, MAX_FILTERS, n_folds, &err);
    double sum = 0.0;
    for (size_t i = 0; st == SIM_OK && i < n; i++)
        sum += fabs(pred[i] - mp->set->rows[i].measured_s) / mp->set->rows[i].measured_s;
    *mape = 100.0 * sum / (double)n;
    free(pred);
    return st == SIM_OK ? CLI_OK : meas_fail(st, &err);
}

/* calibrate --fit: the figure fit on every row (its alpha and beta_s replace res's), and the
 * held-out comparison with alpha/beta only, by model and by TP when the rows span two and
 * each fold keeps the 2 rows a fit needs (else a note says why it is left out). */
static int calibrate_figures(const meas_opts *o, const sim_meas_set *set, sim_meas_pred *mp,
                             sim_fit_result *res, sim_meas_figfit **ffp, fig_holdout *hold,
                             int *n_hold)
{
    sim_meas_figfit *ff = malloc(sizeof(*ff));
    if (!ff) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    *ffp = ff;
    struct sim_err err;
    sim_status st = sim_meas_fit_figures(&o->p, mp, NULL, &o->figs, "calibrate", ff, &err);
    if (st != SIM_OK)
        return meas_fail(st, &err);
    const sim_fig_result *r = &ff->res;
    *res = (sim_fit_result){.alpha = r->alpha,
                            .beta_s = r->beta_s,
                            .alpha_stderr = r->alpha_stderr,
                            .beta_stderr_s = r->beta_stderr_s,
                            .cov_alpha_beta = (double)NAN,
                            .alpha_at_bound = r->alpha_at_bound,
                            .beta_at_bound = r->beta_at_bound,
                            .n_rows = r->n_rows,
                            .fit = r->fit};
    static const char *const fields[] = {"model", "tp"};
    for (int k = 0; k < 2; k++) {
        if (sim_meas_count_values(set, NULL, fields[k]) < 2)
            continue;
        char v[64] = "";
        const size_t left = sim_meas_fewest_left(set, NULL, fields[k], v, sizeof(v));
        if (left < 2) {
            fprintf(stderr,
                    "llmstep calibrate: note: no held-out comparison by %s: leaving out %s=%s "
                    "leaves %zu row%s to fit (2 needed)\n",
                    fields[k], fields[k], v, left, left == 1 ? "" : "s");
            continue;
        }
        fig_holdout *h = &hold[(*n_hold)++];
        h->field = fields[k];
        int rc = holdout_mape(o, mp, fields[k], NULL, &h->n_folds, &h->ab_mape_pct);
        if (rc == CLI_OK)
            rc = holdout_mape(o, mp, fields[k], &o->figs, &h->n_folds, &h->fig_mape_pct);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

/* The figure fit's "training_check" object: the leave-one-out check on the training rows. */
static void print_training_check_json(sim_jw *w, const sim_meas_figfit *ff)
{
    sim_jw_object_begin(w, "training_check");
    if (ff->check_field[0]) {
        sim_jw_str(w, "field", ff->check_field);
        sim_jw_int(w, "folds", ff->check_folds);
        sim_jw_num(w, "alpha_beta_mape_pct", ff->check_ab_mape_pct);
        sim_jw_num(w, "figures_mape_pct", ff->check_fig_mape_pct);
        sim_jw_int(w, "folds_lost", ff->check_folds_lost);
        sim_jw_num(w, "gain_stderr_pct", ff->check_diff_se_pct);
    }
    if (ff->proc_run) {
        sim_jw_object_begin(w, "procedure");
        sim_jw_num(w, "figures_mape_pct", ff->proc_fig_mape_pct);
        sim_jw_num(w, "gain_stderr_pct", ff->proc_diff_se_pct);
        sim_jw_int(w, "folds_lost", ff->proc_folds_lost);
        sim_jw_object_end(w);
    }
    if (ff->check_worst[0]) {
        sim_jw_object_begin(w, "worst_fold");
        sim_jw_str(w, "value", ff->check_worst);
        sim_jw_num(w, "alpha_beta_mape_pct", ff->check_worst_ab_pct);
        sim_jw_num(w, "figures_mape_pct", ff->check_worst_fig_pct);
        sim_jw_object_end(w);
    }
    sim_jw_bool(w, "figures_kept", !ff->check_fell_back);
    sim_jw_str(w, "note", ff->check_note);
    sim_jw_object_end(w);
}

/* The figure fit as one JSON object (calibrate --fit --format json, its second line). */
static int print_figures_json(const sim_meas_figfit *ff, const fig_holdout *hold, int n_hold)
{
    const sim_fig_result *r = &ff->res;
    sim_jw w;
    cli_json_open(&w);
    sim_jw_object_begin(&w, NULL);
    sim_jw_array_begin(&w, "figures");
    for (int k = 0; k < ff->n; k++) {
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "figure", sim_hw_field_key(ff->f[k]));
        if (ff->absent[k])
            sim_jw_null(&w, "prior");
        else
            sim_jw_num(&w, "prior", ff->prior[k]);
        sim_jw_num(&w, "value", r->value[k]);
        sim_jw_num(&w, "stderr", r->value_stderr[k]);
        sim_jw_num(&w, "reached", r->reached[k]);
        sim_jw_num(&w, "rel_stderr", r->rel_stderr[k]);
        sim_jw_num(&w, "max_abs_corr", r->corr_max[k]);
        sim_jw_bool(&w, "determined", !r->held[k]);
        sim_jw_str(&w, "why", r->held[k] ? sim_meas_fig_held_name(r->held[k]) : ff->why[k]);
        sim_jw_object_end(&w);
    }
    sim_jw_array_end(&w);
    sim_jw_object_begin(&w, "attn_decode_kv_per_q_head_flag");
    sim_jw_bool(&w, "compared", ff->flag_compared);
    sim_jw_int(&w, "chosen", ff->flag_value);
    if (ff->flag_compared) {
        sim_jw_array_begin(&w, "mape_pct");
        sim_jw_num(&w, NULL, ff->flag_mape_pct[0]);
        sim_jw_num(&w, NULL, ff->flag_mape_pct[1]);
        sim_jw_array_end(&w);
    }
    sim_jw_object_end(&w);
    char classes[128];
    sim_calib_domain_str(ff->domain, classes, sizeof(classes));
    sim_jw_str(&w, "domain", classes);
    print_training_check_json(&w, ff);
    sim_jw_array_begin(&w, "holdout");
    for (int k = 0; k < n_hold; k++) {
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "field", hold[k].field);
        sim_jw_num(&w, "alpha_beta_mape_pct", hold[k].ab_mape_pct);
        sim_jw_num(&w, "figures_mape_pct", hold[k].fig_mape_pct);
        sim_jw_object_end(&w);
    }
    sim_jw_array_end(&w);
    sim_jw_object_end(&w);
    return cli_json_close(&w, "calibrate");
}

static int print_figures(const meas_opts *o, const sim_meas_figfit *ff, const fig_holdout *hold,
                         int n_hold)
{
    const sim_fig_result *r = &ff->res;
    if (strcmp(o->format, "json") == 0)
        return print_figures_json(ff, hold, n_hold);
    printf("\n  figures (%s loss, robust scale %.3g, prior weight sigma_row %.3g):\n",
           sim_fit_loss_name(ff->loss), r->loss_scale_frac, ff->sigma_row_frac);
    printf("  %-32s %12s %12s %10s %8s %6s  %s\n", "figure", "profile", "fitted", "stderr",
           "rel_se", "|corr|", "status");
    for (int k = 0; k < ff->n; k++) {
        const sim_hw_field f = ff->f[k];
        char prof[16];
        snprintf(prof, sizeof(prof), ff->absent[k] ? "none" : "%.5g", ff->prior[k]);
        printf("  %-32s %12s %12.5g %10.3g %8.3f %6.3f  ", sim_hw_field_key(f), prof, r->reached[k],
               r->value_stderr[k], r->rel_stderr[k], r->corr_max[k]);
        if (r->held[k])
            printf("%s, %s: %s", r->held[k] == SIM_FIG_HELD_HOLDOUT ? "DROPPED" : "UNDETERMINED",
                   ff->absent[k] ? "left out as in the profile" : "held at the profile's value",
                   sim_meas_fig_held_name(r->held[k]));
        else
            printf("fitted");
        if (r->held[k] == SIM_FIG_HELD_CORR)
            printf(" (%s)", r->corr_with[k] == -2   ? "alpha"
                            : r->corr_with[k] == -1 ? "beta_s"
                            : r->corr_with[k] >= 0  ? sim_hw_field_key(ff->f[r->corr_with[k]])
                                                    : "?");
        printf("\n");
    }
    printf("  chosen because:\n");
    for (int k = 0; k < ff->n; k++)
        printf("    %-32s %s\n", sim_hw_field_key(ff->f[k]), ff->why[k]);
    if (ff->skipped[0])
        printf("    not fitted: %s\n", ff->skipped);
    char classes[128];
    sim_calib_domain_str(ff->domain, classes, sizeof(classes));
    if (ff->domain == (1u << SIM_MCLASS_COUNT) - 1u)
        printf("  domain: every class of model (fused-MoE figures and the client path alone: a "
               "dense model never runs the first, every model takes the second; it gets the "
               "figure fit's alpha and beta_s)\n");
    else
        printf("  domain: the figures hold for %s; other models get the alpha/beta-only fit on the "
               "profile as it is\n",
               classes);
    if (ff->flag_compared)
        printf("  attn_decode_kv_per_q_head_flag: 0 -> MAPE %.2f%%, 1 -> MAPE %.2f%% (robust "
               "cost %.4g vs %.4g); chosen %d (profile %d)\n",
               ff->flag_mape_pct[0], ff->flag_mape_pct[1], ff->flag_cost[0], ff->flag_cost[1],
               ff->flag_value, ff->flag_profile);
    if (ff->check_field[0]) {
        printf("  checked on the training rows, leave-one-%s-out (%d folds): alpha/beta only "
               "MAPE %.2f%%, with these figures ",
               ff->check_field, ff->check_folds, ff->check_ab_mape_pct);
        if (isfinite(ff->check_fig_mape_pct))
            printf("%.2f%%", ff->check_fig_mape_pct);
        else
            printf("not computed (%s)", ff->check_note);
        if (ff->check_worst[0])
            printf("; worse held out on %d of %d (worst %s: %.2f%% against %.2f%%)",
                   ff->check_folds_lost, ff->check_folds, ff->check_worst, ff->check_worst_fig_pct,
                   ff->check_worst_ab_pct);
        if (isfinite(ff->check_diff_se_pct))
            printf(" (standard error of the gain %.2f)", ff->check_diff_se_pct);
        printf(" -> %s\n", ff->proc_run          ? "passed"
                           : ff->check_fell_back ? "FIGURES DROPPED: alpha/beta only on the "
                                                   "profile as it is"
                                                 : "figures kept");
        if (ff->proc_run) {
            printf("  the whole procedure, nested (each fold choosing, fitting and checking its "
                   "own figures): MAPE ");
            if (isfinite(ff->proc_fig_mape_pct))
                printf("%.2f%% (standard error of the gain %.2f), worse held out on %d of %d",
                       ff->proc_fig_mape_pct, ff->proc_diff_se_pct, ff->proc_folds_lost,
                       ff->check_folds);
            else
                printf("not computed (%s)", ff->check_note);
            printf(" -> %s\n", ff->check_fell_back
                                   ? "FIGURES DROPPED: alpha/beta only on the profile as it is"
                                   : "figures kept");
        }
    } else if (ff->check_note[0]) {
        printf("  not checked held out (%s) -> FIGURES DROPPED: alpha/beta only on the profile "
               "as it is\n",
               ff->check_note);
    }
    printf("  alpha/beta only on the same rows: MAPE %.2f%%, alpha %.4g, beta_s %.4g s\n",
           ff->ab.fit.mape_pct, ff->ab.alpha, ff->ab.beta_s);
    printf("  (%ld simulations of the %zu rows)\n", ff->evals, r->n_rows);
    for (int k = 0; k < n_hold; k++) {
        printf("  leave-one-%s-out (%d folds): alpha/beta only MAPE %.2f%%, with figures %.2f%%",
               hold[k].field, hold[k].n_folds, hold[k].ab_mape_pct, hold[k].fig_mape_pct);
        printf("%s\n", hold[k].fig_mape_pct > hold[k].ab_mape_pct
                           ? "  -> THE FIGURE FIT LOSES held out: prefer alpha/beta only"
                           : "");
    }
    return CLI_OK;
}

/* The self-check's profiles: the rows' own (kernel-derived figures) and the copy fitted from. */
typedef struct self_check {
    sim_hw orig, reset;
    sim_hw_field f[SIM_FIG_MAX + 4];
    int n;
} self_check;

/* calibrate --self-check: a copy of the rows' profile whose candidate figures (the default
 * set's with --fit profile, else those asked for) are absent, so that their documented defaults
 * apply with loose priors (SIM_PROV_DEFAULT); the fit then starts from it (o->p.hw). */
static int self_check_reset(meas_opts *o, const sim_meas_set *set, self_check *sc)
{
    static const sim_hw_field cand[] = {SIM_HWF_GEMM_EFF_FP16,     SIM_HWF_GEMM_EFF_FP8,
                                        SIM_HWF_BW_FACTOR_WEIGHTS, SIM_HWF_BW_FACTOR_WEIGHTS_FP8,
                                        SIM_HWF_BW_FACTOR_KV,      SIM_HWF_ATTN_DECODE_SEQ_HEAD,
                                        SIM_HWF_GEMM_FIXED};
    sim_cache *c = sim_cache_alloc(cli_data_dir());
    if (!c) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    const sim_hw *h;
    struct sim_err err;
    sim_status st = sim_cache_hw(c, set->rows[0].hardware, &h, NULL, &err);
    if (st == SIM_OK)
        sc->orig = *h;
    sim_cache_free(c);
    if (st != SIM_OK)
        return meas_fail(st, &err);
    sc->reset = sc->orig;
    sc->n = 0;
    const int nc = o->figs.profile ? (int)(sizeof(cand) / sizeof(cand[0])) : 0;
    for (int k = 0; k < nc + o->figs.n; k++) {
        const sim_hw_field f = k < nc ? cand[k] : o->figs.f[k - nc];
        int seen = 0;
        for (int j = 0; j < sc->n; j++)
            seen |= sc->f[j] == f;
        if (seen || sc->orig.prov[f] == SIM_PROV_ABSENT)
            continue;
        sc->f[sc->n++] = f;
        sc->reset.prov[f] = SIM_PROV_ABSENT;
        sc->reset.v[f] = 0.0;
    }
    sim_hw_apply_defaults(&sc->reset);
    o->p.hw = &sc->reset;
    return CLI_OK;
}

/* The self-check's comparison: each reset figure's profile value against the fitted one. */
static int print_self_check(const meas_opts *o, const self_check *sc, const sim_meas_figfit *ff)
{
    const int json = strcmp(o->format, "json") == 0;
    sim_jw w;
    if (json) {
        cli_json_open(&w);
        sim_jw_object_begin(&w, NULL);
        sim_jw_array_begin(&w, "self_check");
    } else {
        printf("\n  self-check: figures reset to their defaults and fitted from the rows\n"
               "  %-32s %12s %12s %12s %10s  %s\n",
               "figure", "profile", "reset to", "fitted", "stderr", "fitted - profile");
    }
    for (int j = 0; j < sc->n; j++) {
        const sim_hw_field f = sc->f[j];
        int k = 0;
        while (k < ff->n && ff->f[k] != f)
            k++;
        const int fitted = k < ff->n && (ff->res.held[k] == SIM_FIG_FITTED ||
                                         ff->res.held[k] == SIM_FIG_HELD_HOLDOUT);
        const double v = k < ff->n ? ff->res.reached[k] : (double)NAN;
        const double se = fitted ? ff->res.value_stderr[k] : (double)NAN;
        const double z = (v - sc->orig.v[f]) / se;
        if (json) {
            /* Not fitted, or no standard error: fitted, stderr and z are null. */
            const int shown = fitted && isfinite(se);
            sim_jw_object_begin(&w, NULL);
            sim_jw_str(&w, "figure", sim_hw_field_key(f));
            sim_jw_num(&w, "profile", sc->orig.v[f]);
            sim_jw_num(&w, "reset_to", sc->reset.v[f]);
            sim_jw_num(&w, "fitted", shown ? v : (double)NAN);
            sim_jw_num(&w, "stderr", shown ? se : (double)NAN);
            sim_jw_num(&w, "z", shown ? z : (double)NAN);
            sim_jw_object_end(&w);
            continue;
        }
        printf("  %-32s %12.5g %12.5g ", sim_hw_field_key(f), sc->orig.v[f], sc->reset.v[f]);
        if (k == ff->n)
            printf("%12s %10s  not fitted (the rows do not span it)\n", "", "");
        else if (!fitted || !isfinite(se))
            printf("%12s %10s  undetermined: %s\n", "", "",
                   sim_meas_fig_held_name(ff->res.held[k]));
        else
            printf("%12.5g %10.3g  %+.1f stderr%s\n", v, se, z,
                   ff->res.held[k] == SIM_FIG_HELD_HOLDOUT ? " (dropped: loses held out)" : "");
    }
    if (!json)
        return CLI_OK;
    sim_jw_array_end(&w);
    sim_jw_object_end(&w);
    return cli_json_close(&w, "calibrate");
}

/* calibrate's report of the band it wrote: per family, the rows and the 80% interval of
 * measured / predicted held out; the object "band" when w is not NULL, else lines. */
static void print_band(const sim_calib_band *b, const char *why, sim_jw *w)
{
    if (w) {
        sim_jw_object_begin(w, "band");
        sim_jw_str(w, "held_out_by", b->held_out_by);
        if (!b->held_out_by[0])
            sim_jw_str(w, "none", why);
        for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
            double lo, hi;
            if (!sim_band_interval(b, f, 80, &lo, &hi))
                continue;
            sim_jw_object_begin(w, sim_band_family_name(f));
            sim_jw_int(w, "n_rows", b->n_rows[f]);
            sim_jw_num(w, "ratio_p10", lo);
            sim_jw_num(w, "ratio_p90", hi);
            sim_jw_object_end(w);
        }
        sim_jw_object_end(w);
        return;
    }
    if (!b->held_out_by[0]) {
        printf("  band    none: %s\n", why);
        return;
    }
    printf("  band    measured / predicted of each fitted row, held out by %s (80%%: P10-P90):\n",
           b->held_out_by);
    for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
        double lo, hi;
        if (sim_band_interval(b, f, 80, &lo, &hi))
            printf("          %-14s %6lld rows   %.4f - %.4f\n", sim_band_family_name(f),
                   (long long)b->n_rows[f], lo, hi);
    }
}

/* calibrate's note on the rows with a per-call constant, on stderr. */
static void note_call_constants(const sim_meas_set *set, const sim_meas_pred *mp)
{
    size_t n = 0, first = 0;
    for (size_t i = set->n; i-- > 0;)
        if (mp->call_const_s[i] > 0.0) {
            n++;
            first = i;
        }
    if (n == 0)
        return;
    const sim_meas_row *r = &set->rows[first];
    fprintf(stderr,
            "llmstep calibrate: note: %zu row(s) with a per-call constant %s (first: %s:%d: %s: "
            "%.4g s, %.0f%% of its length series' shortest run; docs/calibration.md)%s\n",
            n, mp->keep_outliers ? "fitted" : "not fitted", r->file, r->line, r->id,
            mp->call_const_s[first], mp->call_const_frac[first] * 100.0,
            mp->keep_outliers ? "" : "; --keep-outliers fits them");
}

/* The engine the rows were predicted with (each row's, from engine_version): one for all of
 * them, which a calibration records, or CLI_BAD_INPUT naming two that differ. */
static int rows_engine(const meas_opts *o, const sim_meas_set *set, const char *cmd,
                       const char **engine)
{
    *engine = set->n ? sim_meas_row_engine(&o->p, &set->rows[0]) : o->p.engine;
    for (size_t i = 1; i < set->n; i++)
        if (strcmp(sim_meas_row_engine(&o->p, &set->rows[i]), *engine) != 0) {
            cli_error("%s: rows are predicted with different engines (%s at %s:%d, %s at "
                      "%s:%d); select rows of one engine version or pass --engine",
                      cmd, *engine, set->rows[0].file, set->rows[0].line,
                      sim_meas_row_engine(&o->p, &set->rows[i]), set->rows[i].file,
                      set->rows[i].line);
            return CLI_BAD_INPUT;
        }
    return CLI_OK;
}

/*
 * check --refit FILE: alpha and beta_s fitted on the checked rows (predicted as calibrate
 * predicts them: the check's predictions before alpha and beta), their band, written with
 * the check's command and "refit_of" (the calibration replaced, its alpha and beta_s, the
 * interval and the families that drifted). Said on stderr, so JSON output stays one object.
 */
static int refit(const meas_opts *o, int argc, char **argv, const sim_meas_set *set,
                 sim_meas_pred *mp, const sim_calib *cal, unsigned drifted)
{
    const char *engine;
    int rc = rows_engine(o, set, "check --refit", &engine);
    if (rc == CLI_OK && set->n < 2) {
        cli_error("check --refit: %zu row; alpha and beta need at least 2", set->n);
        rc = CLI_BAD_INPUT;
    }
    sim_fit_result res;
    if (rc == CLI_OK)
        rc = fit_rows(o, mp, &res, "check --refit");
    if (rc == CLI_OK) {
        const double printed[] = {res.alpha, res.beta_s, res.fit.mape_pct};
        rc = cli_check_finite("check --refit: ", "the fit", printed,
                              sizeof(printed) / sizeof(printed[0]));
    }
    sim_calib_band band;
    char why[256] = "";
    memset(&band, 0, sizeof(band));
    if (rc == CLI_OK) {
        struct sim_err err;
        if (sim_meas_band_compute(&o->p, mp, &band, why, sizeof(why), &err) != SIM_OK)
            rc = meas_fail(SIM_ENOMEM, &err);
    }
    const sim_calib_refit was = {o->calibration, cal->alpha, cal->beta_s, (int)o->interval,
                                 drifted};
    if (rc == CLI_OK)
        rc = write_calibration(o, mp, o->refit, argc, argv, set->rows[0].hardware, engine, &res,
                               NULL, &band, &was);
    if (rc == CLI_OK)
        fprintf(stderr,
                "llmstep check: refit: wrote %s: alpha %.4g, beta_s %.4g s from %zu rows (fit "
                "MAPE %.2f%%; %s had alpha %.4g, beta_s %.4g s)%s%s\n",
                o->refit, res.alpha, res.beta_s, res.n_rows, res.fit.mape_pct, o->calibration,
                cal->alpha, cal->beta_s, band.held_out_by[0] ? "" : "; no band: ", why);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    meas_opts o;
    int done, rc = parse_opts(argc, argv, &o, &calibrate_usage, &done);
    if (rc != CLI_OK || done)
        return rc;
    if (!o.out) {
        cli_error("calibrate: --out FILE is required");
        return CLI_USAGE;
    }
    if ((rc = not_an_input(&o, "calibrate", "--out", o.out)) != CLI_OK)
        return rc;
    if (o.calibration || o.holdout || o.group_by) {
        cli_error("calibrate: %s belongs to validate", o.calibration ? "--calibration"
                                                       : o.holdout   ? "--holdout"
                                                                     : "--group-by");
        return CLI_USAGE;
    }
    if (o.interval || o.min_coverage >= 0.0) {
        cli_error("calibrate: %s belongs to validate and check (calibrate records the band)",
                  o.interval ? "--interval" : "--min-coverage-pct");
        return CLI_USAGE;
    }
    if (o.self_check && !o.fit) {
        cli_error("calibrate: --self-check fits figures: give --fit profile (or a list)");
        return CLI_USAGE;
    }
    sim_meas_set set, aside;
    sim_meas_set_init(&set);
    sim_meas_set_init(&aside);
    sim_meas_pred mp = {0};
    sim_cache *cache = NULL;
    rc = load_rows(&o, "calibrate", &set, &aside);
    if (rc == CLI_OK)
        rc = check_one_hardware(&set, "calibrate");
    if (rc == CLI_OK && set.n < 2) {
        cli_error("calibrate: %zu row selected; alpha and beta need at least 2", set.n);
        rc = CLI_BAD_INPUT;
    }
    self_check *sc = o.self_check ? malloc(sizeof(*sc)) : NULL;
    if (rc == CLI_OK && o.self_check && !sc) {
        cli_error("out of memory");
        rc = CLI_NUMERIC;
    }
    if (rc == CLI_OK && sc)
        rc = self_check_reset(&o, &set, sc);
    if (rc == CLI_OK)
        rc = predict_all(&o, &set, &cache, &mp);
    if (rc == CLI_OK)
        note_call_constants(&set, &mp);
    sim_fit_result res;
    if (rc == CLI_OK)
        rc = fit_rows(&o, &mp, &res, "calibrate");
    const char *engine = o.p.engine;
    if (rc == CLI_OK)
        rc = rows_engine(&o, &set, "calibrate", &engine);
    /* The fit's figures are written and printed: all must be numbers (the standard errors may
     * be undefined with two rows, and the file writes them as null then). */
    if (rc == CLI_OK) {
        const double printed[] = {res.alpha, res.beta_s, res.fit.mape_pct, res.fit.median_ape_pct,
                                  res.fit.max_ape_pct};
        rc = cli_check_finite("calibrate: ", "the fit", printed,
                              sizeof(printed) / sizeof(printed[0]));
    }
    sim_meas_figfit *ff = NULL;
    fig_holdout hold[2];
    int n_hold = 0;
    if (rc == CLI_OK && o.fit)
        rc = calibrate_figures(&o, &set, &mp, &res, &ff, hold, &n_hold);
    /* The band: each fitted row predicted by a fit that did not see it. */
    sim_calib_band band;
    char why[256] = "--no-band";
    memset(&band, 0, sizeof(band));
    if (rc == CLI_OK && !o.no_band) {
        /* With figures the calibration predicts on the profile with them, so its band is of
         * the rows predicted there (the alpha/beta fits of the folds on that profile). */
        sim_meas_pred fmp = {0};
        sim_meas_opts bo = o.p;
        struct sim_err err;
        sim_status bs = SIM_OK;
        if (ff) {
            bo.hw = &ff->hw;
            bs = sim_meas_predict_all(&bo, &set, cache, &fmp, &err);
        }
        if (bs == SIM_OK)
            bs = sim_meas_band_compute(&bo, ff ? &fmp : &mp, &band, why, sizeof(why), &err);
        if (bs != SIM_OK)
            rc = meas_fail(bs, &err);
        if (ff)
            sim_meas_pred_free(&fmp);
    }
    if (rc == CLI_OK)
        rc = write_calibration(&o, &mp, o.out, argc, argv, set.rows[0].hardware, engine, &res, ff,
                               &band, NULL);
    if (rc == CLI_OK)
        rc = print_calibration(&o, set.rows[0].hardware, engine, &res, &band, why);
    if (rc == CLI_OK && ff)
        rc = print_figures(&o, ff, hold, n_hold);
    if (rc == CLI_OK && ff && sc)
        rc = print_self_check(&o, sc, ff);
    free(sc);
    free(ff);
    sim_meas_pred_free(&mp);
    sim_cache_free(cache);
    sim_meas_set_free(&set);
    sim_meas_set_free(&aside);
    return rc;
}

/* Per-group statistics for the validate table. A group is known by its first row: its values
 * are that row's fields, compared whole (no copy, no truncation). */
typedef struct group_stat {
    size_t first; /* the group's first row */
    size_t n;
    double sum_ape, max_ape, sum_signed;
    double sum_host, sum_pred; /* over the rows whose host time is apart (not serving rows) */
    int64_t preempted_rows;
} group_stat;

/* A group's host share in percent, or NAN when none of its rows has its host time apart (a
 * serving row's is inside each simulated step). */
static double host_share_pct(const group_stat *g)
{
    return g->sum_pred > 0.0 ? 100.0 * g->sum_host / g->sum_pred : (double)NAN;
}

#define MAX_GROUPS 256

/* Fields whose values are counts: a crossed table sorts them as numbers. */
static int numeric_field(const char *f)
{
    static const char *const num[] = {
        "tp", "batch", "prompt_tokens", "output_tokens", "context_tokens", "concurrency"};
    for (size_t i = 0; i < CLI_N(num); i++)
        if (strcmp(f, num[i]) == 0)
            return 1;
    return 0;
}

/* Field f of row r as validate prints it (buf holds a number's digits); plot validate's
 * group_value (plot_validate.c) labels counts for a legend instead ("TP 2"). */
static const char *field_text(const sim_meas_row *r, const char *f, char *buf, size_t cap)
{
    const char *v = sim_meas_group_field(r, f, buf, cap);
    return v ? v : "";
}

/* Field f of rows a and b compared: as numbers for counts, else as text. */
static int field_cmp(const sim_meas_row *a, const sim_meas_row *b, const char *f)
{
    char ba[64], bb[64];
    const char *x = field_text(a, f, ba, sizeof(ba)), *y = field_text(b, f, bb, sizeof(bb));
    if (numeric_field(f)) {
        const double u = strtod(x, NULL), v = strtod(y, NULL);
        return (u > v) - (u < v);
    }
    return strcmp(x, y);
}

/* The rows and fields of the crossed table being sorted (qsort has no context argument). */
static const sim_meas_set *sort_set;
static const char *const *sort_fields;
static int sort_n_fields;

static int group_cmp(const void *pa, const void *pb)
{
    const group_stat *a = pa, *b = pb;
    for (int f = 0; f < sort_n_fields; f++) {
        const int c =
            field_cmp(&sort_set->rows[a->first], &sort_set->rows[b->first], sort_fields[f]);
        if (c)
            return c;
    }
    return 0;
}

/* A group's values joined by ", " into buf (a table line, the JSON "value"). */
static void group_key(const sim_meas_row *r, const char *const *fields, int nf, char *buf,
                      size_t cap)
{
    buf[0] = '\0';
    for (int f = 0; f < nf; f++) {
        char nb[64];
        const size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", f ? ", " : "",
                 field_text(r, fields[f], nb, sizeof(nb)));
    }
}

/* The errors by the values of nf fields together (one: the five default tables, in the order
 * the values first come; more: validate --group-by, sorted by the fields in turn): a table, or
 * the array at key "f1,f2,..." of the JSON "groups" object when w is not NULL. Rows beyond
 * MAX_GROUPS groups are counted, not dropped unsaid. */
static void print_groups(const char *const *fields, int nf, const sim_meas_set *set,
                         const sim_row_pred *p, const double *pred, sim_jw *w)
{
    static group_stat g[MAX_GROUPS];
    int ng = 0;
    size_t not_grouped = 0;
    char label[160], key[MAX_GROUP_BY * 260];
    label[0] = '\0';
    for (int f = 0; f < nf; f++)
        snprintf(label + strlen(label), sizeof(label) - strlen(label), "%s%s", f ? "," : "",
                 fields[f]);
    for (size_t i = 0; i < set->n; i++) {
        int k = 0;
        for (; k < ng; k++) {
            int f = 0;
            while (f < nf && field_cmp(&set->rows[g[k].first], &set->rows[i], fields[f]) == 0)
                f++;
            if (f == nf)
                break;
        }
        if (k == ng) {
            if (ng == MAX_GROUPS) {
                not_grouped++;
                continue;
            }
            memset(&g[k], 0, sizeof(g[k]));
            g[k].first = i;
            ng++;
        }
        double m = set->rows[i].measured_s;
        double ape = fabs(pred[i] - m) / m * 100.0;
        g[k].n++;
        g[k].sum_ape += ape;
        if (ape > g[k].max_ape)
            g[k].max_ape = ape;
        g[k].sum_signed += (pred[i] - m) / m * 100.0;
        if (set->rows[i].kind != SIM_MEAS_SERVING) {
            g[k].sum_host += p[i].host_s;
            g[k].sum_pred += pred[i];
        }
        g[k].preempted_rows += p[i].preemptions > 0;
    }
    if (nf > 1) {
        sort_set = set;
        sort_fields = fields;
        sort_n_fields = nf;
        qsort(g, (size_t)ng, sizeof(g[0]), group_cmp);
    }
    if (w) {
        sim_jw_array_begin(w, label);
        for (int k = 0; k < ng; k++) {
            const sim_meas_row *r = &set->rows[g[k].first];
            group_key(r, fields, nf, key, sizeof(key));
            sim_jw_object_begin(w, NULL);
            sim_jw_str(w, "value", key);
            if (nf > 1) {
                sim_jw_object_begin(w, "values");
                for (int f = 0; f < nf; f++) {
                    char nb[64];
                    sim_jw_str(w, fields[f], field_text(r, fields[f], nb, sizeof(nb)));
                }
                sim_jw_object_end(w);
            }
            sim_jw_uint(w, "n_rows", g[k].n);
            sim_jw_num(w, "mape_pct", g[k].sum_ape / (double)g[k].n);
            sim_jw_num(w, "max_ape_pct", g[k].max_ape);
            sim_jw_num(w, "bias_pct", g[k].sum_signed / (double)g[k].n);
            sim_jw_num(w, "host_share_pct", host_share_pct(&g[k])); /* null: not apart */
            sim_jw_int(w, "preempted_rows", g[k].preempted_rows);
            sim_jw_object_end(w);
        }
        sim_jw_array_end(w);
        if (not_grouped) {
            char k2[200];
            snprintf(k2, sizeof(k2), "%s_rows_not_grouped", label);
            sim_jw_uint(w, k2, not_grouped);
        }
        return;
    }
    /* One field: the columns as they always were; crossed fields: as wide as the longest. */
    int width = 17;
    if (nf > 1) {
        width = (int)strlen(label) + 3; /* "by " and the label over the values */
        for (int k = 0; k < ng; k++) {
            group_key(&set->rows[g[k].first], fields, nf, key, sizeof(key));
            if ((int)strlen(key) > width)
                width = (int)strlen(key);
        }
        printf("\n  by %-*s %6s %8s %8s %8s %8s %10s\n", width - 3, label, "rows", "MAPE%", "max%",
               "bias%", "host%", "preempted");
    } else {
        printf("\n  by %-14s %6s %8s %8s %8s %8s %10s\n", label, "rows", "MAPE%", "max%", "bias%",
               "host%", "preempted");
    }
    for (int k = 0; k < ng; k++) {
        char host[16];
        const double hs = host_share_pct(&g[k]);
        snprintf(host, sizeof(host), isnan(hs) ? "-" : "%.1f", hs);
        group_key(&set->rows[g[k].first], fields, nf, key, sizeof(key));
        printf("  %-*s %6zu %8.2f %8.2f %+8.2f %8s %10lld\n", width, key, g[k].n,
               g[k].sum_ape / (double)g[k].n, g[k].max_ape, g[k].sum_signed / (double)g[k].n, host,
               (long long)g[k].preempted_rows);
    }
    if (not_grouped)
        printf("  (%zu more rows in groups beyond the first %d, not shown)\n", not_grouped,
               MAX_GROUPS);
}

/* 1 when validate --group-by asks for a table the default ones do not already print (a single
 * field among them would repeat its table, and its JSON key). */
static int group_by_new(const meas_opts *o, const char *const *fields, int n_fields)
{
    if (o->n_gb == 0)
        return 0;
    for (int f = 0; o->n_gb == 1 && f < n_fields; f++)
        if (strcmp(o->gb_fields[0], fields[f]) == 0)
            return 0;
    return 1;
}

/* Rows set aside because their run.assumed matters, predicted apart. */
typedef struct aside_report {
    const sim_meas_set *set;
    const double *pred; /* NULL when set is empty */
    sim_metrics mt;
} aside_report;

#define MAX_UNMODELLED 64

/* The next item of a "; "-joined list (sim_meas_row.unmodelled) into item, and *p past it;
 * 0 at the end of the list. */
static int next_item(const char **p, char *item, size_t cap)
{
    if (!**p)
        return 0;
    const char *e = strstr(*p, "; ");
    const size_t len = e ? (size_t)(e - *p) : strlen(*p);
    snprintf(item, cap, "%.*s", (int)len, *p);
    *p += len;
    if (**p)
        *p += 2;
    return 1;
}

/* The described-but-unmodelled run keys of the rows (sim_meas_row.unmodelled), each with the
 * number of rows that carry it, in order of first appearance: a table, or the array
 * "unmodelled_run_keys" of the JSON object when w is not NULL (nothing when no row has one). */
static void print_unmodelled(const sim_meas_set *set, const sim_meas_set *aside, sim_jw *w)
{
    static struct {
        char key[160];
        size_t n;
    } k[MAX_UNMODELLED];
    int nk = 0;
    size_t rows = 0, more = 0;
    for (int s = 0; s < 2; s++) {
        const sim_meas_set *x = s ? aside : set;
        for (size_t i = 0; x && i < x->n; i++) {
            const char *p = x->rows[i].unmodelled;
            rows += p[0] != '\0';
            char item[160];
            while (next_item(&p, item, sizeof(item))) {
                int j = 0;
                while (j < nk && strcmp(k[j].key, item) != 0)
                    j++;
                if (j == nk && nk < MAX_UNMODELLED) {
                    snprintf(k[nk].key, sizeof(k[nk].key), "%s", item);
                    k[nk++].n = 0;
                }
                if (j < nk)
                    k[j].n++;
                else
                    more++;
            }
        }
    }
    if (w) {
        if (nk == 0)
            return;
        sim_jw_array_begin(w, "unmodelled_run_keys");
        for (int j = 0; j < nk; j++) {
            sim_jw_object_begin(w, NULL);
            sim_jw_str(w, "key", k[j].key);
            sim_jw_uint(w, "n_rows", k[j].n);
            sim_jw_object_end(w);
        }
        sim_jw_array_end(w);
        return;
    }
    if (nk == 0)
        return;
    printf("\n  run keys described but not modelled (%zu rows; MEASUREMENTS.md \"run\"):\n", rows);
    for (int j = 0; j < nk; j++)
        printf("  %-64s %6zu rows\n", k[j].key, k[j].n);
    if (more)
        printf("  (%zu more keys not listed)\n", more);
}

/* The rows set aside: a table, or the object "assumed_rows" when w is not NULL. */
static void print_aside(const aside_report *a, sim_jw *w)
{
    const sim_meas_set *s = a->set;
    if (!s || s->n == 0)
        return;
    if (w) {
        sim_jw_object_begin(w, "assumed_rows");
        sim_jw_uint(w, "n_rows", a->mt.n);
        sim_jw_num(w, "mape_pct", a->mt.mape_pct);
        sim_jw_num(w, "median_ape_pct", a->mt.median_ape_pct);
        sim_jw_num(w, "max_ape_pct", a->mt.max_ape_pct);
        sim_jw_array_begin(w, "rows");
        for (size_t i = 0; i < s->n; i++) {
            const double m = s->rows[i].measured_s;
            sim_jw_object_begin(w, NULL);
            sim_jw_str(w, "id", s->rows[i].id);
            sim_jw_str(w, "assumed", s->rows[i].assumed);
            sim_jw_num(w, "measured_s", m);
            sim_jw_num(w, "predicted_s", a->pred[i]);
            sim_jw_num(w, "ape_pct", fabs(a->pred[i] - m) / m * 100.0);
            sim_jw_object_end(w);
        }
        sim_jw_array_end(w);
        sim_jw_object_end(w);
        return;
    }
    printf("\n  set aside (run.assumed names a field the prediction uses; not in the errors "
           "above):\n  %zu rows   MAPE %.2f%%   median APE %.2f%%   max APE %.2f%%\n",
           a->mt.n, a->mt.mape_pct, a->mt.median_ape_pct, a->mt.max_ape_pct);
    for (size_t i = 0; i < s->n; i++) {
        const double m = s->rows[i].measured_s;
        printf("  %-48s %12.5g %12.5g %8.2f  assumed: %s\n", s->rows[i].id, m, a->pred[i],
               fabs(a->pred[i] - m) / m * 100.0, s->rows[i].assumed);
    }
}

/* The row's unmodelled run keys as a JSON array "unmodelled" (nothing when none). */
static void row_unmodelled_json(sim_jw *w, const sim_meas_row *r)
{
    const char *p = r->unmodelled;
    if (!*p)
        return;
    sim_jw_array_begin(w, "unmodelled");
    char item[160];
    while (next_item(&p, item, sizeof(item)))
        sim_jw_str(w, NULL, item);
    sim_jw_array_end(w);
}

/* The rows with a per-call constant (sim_meas_call_constants): the object
 * "call_constant_rows" when w is not NULL, else a table; nothing when there are none. fitted:
 * whether fits took them (--keep-outliers) or left them out. */
static void print_call_constants(const sim_meas_set *set, const sim_meas_pred *mp, int fitted,
                                 sim_jw *w)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++)
        n += mp->call_const_s[i] > 0.0;
    if (n == 0)
        return;
    if (w) {
        sim_jw_object_begin(w, "call_constant_rows");
        sim_jw_uint(w, "n_rows", n);
        sim_jw_num(w, "threshold_frac", SIM_CALL_CONST_FRAC);
        sim_jw_bool(w, "fitted", fitted);
        sim_jw_array_begin(w, "rows");
        for (size_t i = 0; i < set->n; i++) {
            if (!(mp->call_const_s[i] > 0.0))
                continue;
            sim_jw_object_begin(w, NULL);
            sim_jw_str(w, "id", set->rows[i].id);
            sim_jw_num(w, "call_constant_s", mp->call_const_s[i]);
            sim_jw_num(w, "call_constant_frac", mp->call_const_frac[i]);
            sim_jw_object_end(w);
        }
        sim_jw_array_end(w);
        sim_jw_object_end(w);
        return;
    }
    printf("\n  rows with a per-call constant (%zu; their length series' intercept exceeds %.0f%% "
           "of its\n  shortest run; %s; docs/calibration.md):\n",
           n, SIM_CALL_CONST_FRAC * 100.0,
           fitted ? "fitted (--keep-outliers)" : "in the errors, left out of every fit");
    printf("  %-48s %14s %10s\n", "id", "constant_s", "of_short%");
    for (size_t i = 0; i < set->n; i++)
        if (mp->call_const_s[i] > 0.0)
            printf("  %-48s %14.4g %10.1f\n", set->rows[i].id, mp->call_const_s[i],
                   mp->call_const_frac[i] * 100.0);
}

/* validate --interval's report: the band's interval per family (NULL: not asked). */
typedef struct interval_report {
    const sim_band_cover *cover; /* SIM_BAND_FAMILIES of them */
    const char *held_out_by;     /* the band's folds' field(s) */
    const char *holdout;         /* validate --holdout's field: each group its own band; or NULL */
    int64_t no_band;             /* rows of families the band does not cover */
    int level;
} interval_report;

static void print_interval(const interval_report *iv, sim_jw *w)
{
    if (!iv)
        return;
    if (w) {
        sim_jw_object_begin(w, "interval");
        sim_jw_int(w, "level_pct", iv->level);
        sim_jw_str(w, "held_out_by", iv->held_out_by);
        if (iv->holdout)
            sim_jw_str(w, "bands_by", iv->holdout);
        sim_jw_array_begin(w, "families");
        for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
            const sim_band_cover *c = &iv->cover[f];
            if (c->n == 0)
                continue;
            sim_jw_object_begin(w, NULL);
            sim_jw_str(w, "family", sim_band_family_name(f));
            sim_jw_int(w, "n_rows", c->n);
            sim_jw_int(w, "inside", c->inside);
            sim_jw_int(w, "below", c->below);
            sim_jw_int(w, "above", c->above);
            sim_jw_num(w, "coverage_pct", 100.0 * (double)c->inside / (double)c->n);
            sim_jw_num(w, "ratio_lo", c->ratio_lo);
            sim_jw_num(w, "ratio_hi", c->ratio_hi);
            sim_jw_num(w, "width_pct", 100.0 * (c->ratio_hi - c->ratio_lo));
            sim_jw_num(w, "ratio_median", c->ratio_median);
            sim_jw_object_end(w);
        }
        sim_jw_array_end(w);
        sim_jw_int(w, "rows_without_band", iv->no_band);
        sim_jw_object_end(w);
        return;
    }
    if (iv->holdout)
        printf("\n  interval %d%% of the band a calibration on the other groups of %s records\n"
               "  (measured / predicted by that fit; its band held out by %s; interval: mean over\n"
               "  the rows):\n",
               iv->level, iv->holdout, iv->held_out_by[0] ? iv->held_out_by : "nothing");
    else
        printf("\n  interval %d%% of the calibration's band (measured / predicted, held out by "
               "%s):\n",
               iv->level, iv->held_out_by);
    printf("  %-14s %6s %7s %6s %6s %10s %17s %8s\n", "family", "rows", "inside", "below", "above",
           "coverage%", "interval", "median");
    for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
        const sim_band_cover *c = &iv->cover[f];
        if (c->n > 0)
            printf("  %-14s %6lld %7lld %6lld %6lld %10.2f %8.4f - %6.4f %8.4f\n",
                   sim_band_family_name(f), (long long)c->n, (long long)c->inside,
                   (long long)c->below, (long long)c->above,
                   100.0 * (double)c->inside / (double)c->n, c->ratio_lo, c->ratio_hi,
                   c->ratio_median);
    }
    if (iv->no_band > 0)
        printf("  (%lld rows of families the band does not cover)\n", (long long)iv->no_band);
}

/* The coverage below which check calls a family drifted: --min-coverage-pct, else the level
 * minus two binomial standard errors at the family's rows, and at least 10 points below. */
static double min_coverage_pct(const meas_opts *o, int64_t n)
{
    if (o->min_coverage >= 0.0)
        return o->min_coverage;
    const double p = (double)o->interval / 100.0;
    const double two_se = 200.0 * sqrt(p * (1.0 - p) / (double)n);
    return (double)o->interval - (two_se > 10.0 ? two_se : 10.0);
}

/* check's report; returns 0 (no drift), 4 (drift) or CLI_BAD_INPUT (nothing to compare). */
static int print_check(const meas_opts *o, const sim_calib_band *b, const sim_band_cover *cover,
                       int64_t no_band, unsigned *drifted)
{
    /* Each family's coverage and floor, once: the verdict, the table and the message read
     * them. */
    double cov[SIM_BAND_FAMILIES], min[SIM_BAND_FAMILIES];
    int d[SIM_BAND_FAMILIES];
    int n_fam = 0, drift = 0;
    for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
        const sim_band_cover *c = &cover[f];
        d[f] = 0;
        if (c->n == 0)
            continue;
        cov[f] = 100.0 * (double)c->inside / (double)c->n;
        min[f] = min_coverage_pct(o, c->n);
        d[f] = cov[f] < min[f];
        drift |= d[f];
        *drifted |= (unsigned)d[f] << f;
        n_fam++;
    }
    if (n_fam == 0) {
        cli_error("check: %s's band covers none of the rows' metric families (it has rows of "
                  "other kinds or metrics)",
                  o->calibration);
        return CLI_BAD_INPUT;
    }
    const int json = strcmp(o->format, "json") == 0;
    sim_jw w;
    if (json) {
        cli_json_open(&w);
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "calibration", o->calibration);
        sim_jw_int(&w, "level_pct", o->interval);
        sim_jw_str(&w, "held_out_by", b->held_out_by);
        sim_jw_bool(&w, "drift", drift);
        sim_jw_array_begin(&w, "families");
    } else {
        printf("llmstep check: against %s's band (measured / predicted held out by %s), %lld%% "
               "interval\n",
               o->calibration, b->held_out_by, (long long)o->interval);
        printf("  %-14s %6s %10s %9s %17s %8s  %s\n", "family", "rows", "coverage%", "minimum%",
               "interval", "median", "verdict");
    }
    for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
        const sim_band_cover *c = &cover[f];
        if (c->n == 0)
            continue;
        if (json) {
            sim_jw_object_begin(&w, NULL);
            sim_jw_str(&w, "family", sim_band_family_name(f));
            sim_jw_int(&w, "n_rows", c->n);
            sim_jw_num(&w, "coverage_pct", cov[f]);
            sim_jw_num(&w, "min_coverage_pct", min[f]);
            sim_jw_num(&w, "ratio_lo", c->ratio_lo);
            sim_jw_num(&w, "ratio_hi", c->ratio_hi);
            sim_jw_num(&w, "ratio_median", c->ratio_median);
            sim_jw_int(&w, "below", c->below);
            sim_jw_int(&w, "above", c->above);
            sim_jw_bool(&w, "drift", d[f]);
            sim_jw_object_end(&w);
        } else {
            printf("  %-14s %6lld %10.2f %9.2f %8.4f - %6.4f %8.4f  %s\n", sim_band_family_name(f),
                   (long long)c->n, cov[f], min[f], c->ratio_lo, c->ratio_hi, c->ratio_median,
                   !d[f]                 ? "ok"
                   : c->above > c->below ? "DRIFT: slower than predicted"
                                         : "DRIFT: faster than predicted");
        }
    }
    if (json) {
        sim_jw_array_end(&w);
        sim_jw_int(&w, "rows_without_band", no_band);
        sim_jw_object_end(&w);
        const int rc = cli_json_close(&w, "check");
        if (rc != CLI_OK)
            return rc;
    } else if (no_band > 0) {
        printf("  (%lld rows of families the band does not cover)\n", (long long)no_band);
    }
    if (drift && !json) {
        fprintf(stderr, "llmstep check: drift:");
        for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
            const sim_band_cover *c = &cover[f];
            if (d[f])
                fprintf(stderr,
                        " %s (%.1f%% of %lld rows in the interval, median measured / "
                        "predicted %.3f against %.3f-%.3f)",
                        sim_band_family_name(f), cov[f], (long long)c->n, c->ratio_median,
                        c->ratio_lo, c->ratio_hi);
        }
        fprintf(stderr, "; recalibrate with llmstep calibrate\n");
    }
    return drift ? CLI_DRIFT : CLI_OK;
}

/* The validation as one JSON object: errors, rows, groups, holdout folds. */
static int print_validation_json(const meas_opts *o, const sim_meas_set *set,
                                 const sim_meas_pred *mp, const double *pred, const double *meas,
                                 const sim_metrics *mt, const sim_meas_fold *folds, int n_folds,
                                 double alpha, double beta, const char *const *fields, int n_fields,
                                 const aside_report *aside, const interval_report *iv)
{
    sim_jw w;
    cli_json_open(&w);
    sim_jw_object_begin(&w, NULL);
    sim_jw_uint(&w, "n_rows", mt->n);
    sim_jw_num(&w, "mape_pct", mt->mape_pct);
    sim_jw_num(&w, "median_ape_pct", mt->median_ape_pct);
    sim_jw_num(&w, "max_ape_pct", mt->max_ape_pct);
    sim_jw_num(&w, "r2", mt->r2);
    if (!o->holdout) {
        sim_jw_num(&w, "alpha", alpha);
        sim_jw_num(&w, "beta_s", beta);
        sim_jw_bool(&w, "calibrated", o->calibration != NULL);
    }
    sim_jw_array_begin(&w, "rows");
    for (size_t i = 0; i < set->n; i++) {
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "id", set->rows[i].id);
        sim_jw_num(&w, "measured_s", meas[i]);
        sim_jw_num(&w, "predicted_s", pred[i]);
        sim_jw_num(&w, "ape_pct", fabs(pred[i] - meas[i]) / meas[i] * 100.0);
        row_unmodelled_json(&w, &set->rows[i]);
        sim_jw_object_end(&w);
    }
    sim_jw_array_end(&w);
    print_unmodelled(set, aside->set, &w);
    print_aside(aside, &w);
    print_call_constants(set, mp, o->p.keep_outliers, &w);
    print_interval(iv, &w);
    sim_jw_object_begin(&w, "groups");
    for (int f = 0; f < n_fields; f++)
        print_groups(&fields[f], 1, set, mp->p, pred, &w);
    if (group_by_new(o, fields, n_fields))
        print_groups(o->gb_fields, o->n_gb, set, mp->p, pred, &w);
    sim_jw_object_end(&w);
    if (o->holdout) {
        sim_jw_object_begin(&w, "holdout");
        sim_jw_str(&w, "field", o->holdout);
        sim_jw_array_begin(&w, "folds");
        for (int k = 0; k < n_folds; k++) {
            sim_jw_object_begin(&w, NULL);
            sim_jw_str(&w, "value", folds[k].value);
            sim_jw_uint(&w, "n_rows", folds[k].n);
            sim_jw_num(&w, "alpha", folds[k].alpha);
            sim_jw_num(&w, "beta_s", folds[k].beta_s);
            sim_jw_num(&w, "mape_pct", folds[k].mape_pct);
            sim_jw_object_end(&w);
        }
        sim_jw_array_end(&w);
        sim_jw_object_end(&w);
    }
    sim_jw_object_end(&w);
    return cli_json_close(&w, "validate");
}

/* Prints the validation: errors, holdout folds, groups, rows. Returns the exit code. */
static int print_validation(const meas_opts *o, const sim_meas_set *set, const sim_meas_pred *mp,
                            const double *pred, const double *meas, const sim_metrics *mt,
                            const sim_meas_fold *folds, int n_folds, double alpha, double beta,
                            const aside_report *aside, const sim_band_cover *cover,
                            const sim_calib_band *band, int64_t no_band)
{
    const interval_report ivr = {cover, band->held_out_by, o->holdout, no_band, (int)o->interval};
    const interval_report *iv = cover ? &ivr : NULL;
    /* Serving rows are grouped by statistic and clients instead of batch and kind. */
    int serving = 0;
    for (size_t i = 0; i < set->n; i++)
        serving |= set->rows[i].kind == SIM_MEAS_SERVING;
    static const char *const batch_fields[] = {"model", "tp", "batch", "kind", "prompt_tokens"};
    static const char *const serve_fields[] = {"model", "tp", "metric", "concurrency",
                                               "prompt_tokens"};
    const char *const *fields = serving ? serve_fields : batch_fields;
    const int n_fields = 5;
    if (strcmp(o->format, "json") == 0)
        return print_validation_json(o, set, mp, pred, meas, mt, folds, n_folds, alpha, beta,
                                     fields, n_fields, aside, iv);
    printf("llmstep validate: %zu rows", mt->n);
    if (o->holdout)
        printf(", leave-one-%s-out (each group predicted by a fit on the others)\n", o->holdout);
    else if (o->calibration)
        printf(", alpha %.6g, beta_s %.6g s (%s)\n", alpha, beta, o->calibration);
    else
        printf(", uncalibrated (alpha = 1, beta_s = 0)\n");
    char r2[64];
    printf("  MAPE %.2f%%   median APE %.2f%%   max APE %.2f%%   R^2 %s\n", mt->mape_pct,
           mt->median_ape_pct, mt->max_ape_pct, r2_str(mt->r2, r2, sizeof(r2)));
    if (o->holdout) {
        printf("\n  held-out %-10s %6s %10s %12s %8s\n", o->holdout, "rows", "alpha", "beta_ms",
               "MAPE%");
        for (int k = 0; k < n_folds; k++)
            printf("  %-19s %6zu %10.4f %12.4f %8.2f\n", folds[k].value, folds[k].n, folds[k].alpha,
                   folds[k].beta_s * 1e3, folds[k].mape_pct);
    }
    for (int f = 0; f < n_fields; f++)
        print_groups(&fields[f], 1, set, mp->p, pred, NULL);
    if (group_by_new(o, fields, n_fields))
        print_groups(o->gb_fields, o->n_gb, set, mp->p, pred, NULL);
    printf("\n  bias = mean signed error (+ over-predicts); host = engine host time share "
           "of the prediction\n  (- for serving rows: inside each simulated step); preempted = "
           "rows whose simulation\n  preempted sequences\n");
    print_unmodelled(set, aside->set, NULL);
    print_aside(aside, NULL);
    print_call_constants(set, mp, o->p.keep_outliers, NULL);
    print_interval(iv, NULL);
    printf("\n  %-48s %12s %12s %8s\n", "id", "measured_s", "predicted_s", "APE%");
    for (size_t i = 0; i < set->n; i++)
        printf("  %-48s %12.5g %12.5g %8.2f\n", set->rows[i].id, meas[i], pred[i],
               fabs(pred[i] - meas[i]) / meas[i] * 100.0);
    return CLI_OK;
}

/* The profile hw_name with the figures of cal (from path) applied, in *out (allocated). */
static int calibrated_hw(const sim_calib *cal, const char *path, const char *hw_name, sim_hw **out)
{
    char hw_path[4096];
    sim_hw *hw = malloc(sizeof(*hw));
    if (!hw) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    *out = hw;
    int rc = cli_load_hw(hw_name, hw, hw_path, sizeof(hw_path));
    struct sim_err err;
    if (rc == CLI_OK && sim_calib_apply_figures(cal, path, hw, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        rc = CLI_BAD_INPUT;
    }
    return rc;
}

/* The options validate (and check) refuse: --out, --self-check, --calibration with --holdout,
 * an unknown field, --interval without a calibration... */

#define GROUP_FIELDS                                                                               \
    "model, hardware, kind, dtype, engine, tp, batch, prompt_tokens, output_tokens, "              \
    "context_tokens, metric or concurrency"

/* validate --group-by: its comma-separated fields into o->gb_fields (each one --holdout takes,
 * none twice, at most MAX_GROUP_BY). */
static int parse_group_by(meas_opts *o)
{
    const size_t len = strlen(o->group_by);
    if (len == 0 || len >= sizeof(o->gb_buf)) {
        cli_error("validate: --group-by: expected FIELD[,FIELD...] (%s)",
                  len ? "too long" : "empty");
        return CLI_USAGE;
    }
    memcpy(o->gb_buf, o->group_by, len + 1);
    o->n_gb = 0;
    char buf[64];
    for (char *tok = o->gb_buf; tok;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (!*tok) { /* "a,,b", a leading or a trailing comma: a typo, refused */
            cli_error("validate: --group-by '%s': an empty field", o->group_by);
            return CLI_USAGE;
        }
        if (!sim_meas_group_field(sim_meas_row_blank(), tok, buf, sizeof(buf))) {
            cli_error("validate: --group-by '%s': expected %s", tok, GROUP_FIELDS);
            return CLI_USAGE;
        }
        for (int i = 0; i < o->n_gb; i++)
            if (strcmp(o->gb_fields[i], tok) == 0) {
                cli_error("validate: --group-by: '%s' given twice", tok);
                return CLI_USAGE;
            }
        if (o->n_gb == MAX_GROUP_BY) {
            cli_error("validate: --group-by: at most %d fields", MAX_GROUP_BY);
            return CLI_USAGE;
        }
        o->gb_fields[o->n_gb++] = tok;
        tok = comma ? comma + 1 : NULL;
    }
    return CLI_OK;
}

static int validate_usage_check(meas_opts *o)
{
    if (o->out || o->self_check) {
        cli_error("%s: %s belongs to calibrate", o->check ? "check" : "validate",
                  o->out ? "--out" : "--self-check");
        return CLI_USAGE;
    }
    if (o->fit && !o->holdout) {
        cli_error("validate: --fit fits figures in each --holdout fold; give --holdout FIELD "
                  "(or calibrate --fit, then validate --calibration)");
        return CLI_USAGE;
    }
    if (o->calibration && o->holdout) {
        cli_error("validate: --holdout fits its own alpha and beta; drop --calibration");
        return CLI_USAGE;
    }
    const char *cmd = o->check ? "check" : "validate";
    if (o->interval && !sim_band_level_valid(o->interval)) {
        cli_error("%s: --interval %lld: %s", cmd, (long long)o->interval, SIM_BAND_LEVEL_RULE);
        return CLI_USAGE;
    }
    if ((o->interval || o->check) && !o->calibration && !o->holdout) {
        cli_error("%s: %s compares with a calibration's band; give --calibration FILE%s", cmd,
                  o->check ? "check" : "--interval", o->check ? "" : " (or --holdout FIELD)");
        return CLI_USAGE;
    }
    if (o->interval && o->holdout && o->fit) {
        cli_error("validate: --interval with --holdout checks the band of the alpha/beta fit a "
                  "calibration records; drop --fit");
        return CLI_USAGE;
    }
    if (o->no_band) {
        cli_error("%s: --no-band belongs to calibrate", cmd);
        return CLI_USAGE;
    }
    if (o->refit && !o->check) {
        cli_error("validate: --refit belongs to check (calibrate --out writes a calibration)");
        return CLI_USAGE;
    }
    if (o->refit && not_an_input(o, "check", "--refit", o->refit) != CLI_OK)
        return CLI_USAGE;
    if (!o->check && o->min_coverage >= 0.0) {
        cli_error("validate: --min-coverage-pct belongs to check");
        return CLI_USAGE;
    }
    if (o->check && (o->holdout || o->fit || o->keep_assumed || o->group_by)) {
        cli_error("check: %s belongs to validate", o->holdout    ? "--holdout"
                                                   : o->fit      ? "--fit"
                                                   : o->group_by ? "--group-by"
                                                                 : "--keep-assumed");
        return CLI_USAGE;
    }
    char buf[64];
    if (o->holdout && !sim_meas_group_field(sim_meas_row_blank(), o->holdout, buf, sizeof(buf))) {
        cli_error("validate: --holdout '%s': expected %s", o->holdout, GROUP_FIELDS);
        return CLI_USAGE;
    }
    return o->group_by ? parse_group_by(o) : CLI_OK;
}

/* validate, or with check the drift alarm over the same predictions. */
static int run_validate(int argc, char **argv, int check)
{
    meas_opts o;
    int done, rc = parse_opts(argc, argv, &o, check ? &check_usage : &validate_usage, &done);
    o.check = check;
    if (check && !o.interval)
        o.interval = 80;
    if (rc == CLI_OK && !done)
        rc = validate_usage_check(&o);
    if (rc != CLI_OK || done)
        return rc;
    sim_meas_set set, aside;
    sim_meas_set_init(&set);
    sim_meas_set_init(&aside);
    sim_meas_pred mp = {0}, amp = {0};
    sim_cache *cache = NULL;
    double *pred = NULL, *meas = NULL, *scratch = NULL, *apred = NULL;
    unsigned char *queued = NULL; /* each prediction's regime (sim_meas_pred.queued) */
    double alpha = 1.0, beta = 0.0;
    sim_calib cal;
    sim_hw *cal_hw = NULL;
    const char *cmd = check ? "check" : "validate";
    rc = load_rows(&o, cmd, &set, &aside);
    if (rc == CLI_OK && o.calibration) {
        rc = check_one_hardware(&set, cmd);
        if (rc == CLI_OK)
            rc = cli_load_calib(o.calibration, set.rows[0].hardware, &cal);
        if (rc == CLI_OK) {
            alpha = cal.alpha;
            beta = cal.beta_s;
        }
        if (rc == CLI_OK && o.refit && cal.n_figures > 0) {
            cli_error("check --refit: %s has fitted profile figures; refit them with calibrate "
                      "--fit (a refit here would fit alpha and beta_s alone)",
                      o.calibration);
            rc = CLI_USAGE;
        }
        /* Its fitted figures replace the profile's for every row. */
        if (rc == CLI_OK && cal.n_figures > 0)
            rc = calibrated_hw(&cal, o.calibration, set.rows[0].hardware, &cal_hw);
        o.p.hw = cal_hw;
        /* Rows of models unlike those the figures were fitted on: the profile as it is
         * (hw_other NULL) and the alpha/beta-only fit (calib_json.h). */
        o.p.domain = cal_hw ? cal.fig_domain : 0;
    }
    if (rc == CLI_OK && o.holdout && o.fit)
        o.p.figs = &o.figs;
    if (rc == CLI_OK)
        rc = predict_all(&o, &set, &cache, &mp);
    if (rc == CLI_OK) {
        pred = malloc(set.n * sizeof(double));
        meas = malloc(set.n * sizeof(double));
        scratch = malloc(set.n * sizeof(double));
        queued = calloc(set.n, 1);
        if (!pred || !meas || !scratch || !queued) {
            cli_error("out of memory");
            rc = CLI_NUMERIC;
        }
    }
    /* Holdout: for each value, fit on the other rows, predict the held-out ones. */
    int n_folds = 0;
    static sim_meas_fold folds[MAX_GROUPS];
    size_t n_other = 0;
    for (size_t i = 0; rc == CLI_OK && i < set.n; i++) {
        meas[i] = set.rows[i].measured_s;
        n_other += mp.other[i];
        rc = mp.other[i] ? predict_row(&mp, i, cal.ab_alpha, cal.ab_beta_s, &pred[i])
                         : predict_row(&mp, i, alpha, beta, &pred[i]);
        if (rc == CLI_OK)
            queued[i] = mp.queued[i];
    }
    if (rc == CLI_OK && n_other > 0) {
        char classes[128];
        sim_calib_domain_str(cal.fig_domain, classes, sizeof(classes));
        fprintf(stderr,
                "llmstep %s: note: %zu of %zu rows are of models unlike the %s models "
                "%s's figures were fitted on: predicted with its alpha/beta-only fit on the "
                "profile as it is\n",
                cmd, n_other, set.n, classes, o.calibration);
    }
    if (rc == CLI_OK && o.holdout) {
        struct sim_err err;
        sim_status st =
            sim_meas_holdout(&o.p, &mp, o.holdout, pred, queued, folds, MAX_GROUPS, &n_folds, &err);
        if (st != SIM_OK)
            rc = meas_fail(st, &err);
    }
    sim_metrics mt;
    if (rc == CLI_OK && sim_metrics_compute(pred, meas, set.n, scratch, &mt) != SIM_OK) {
        cli_error("%s: metrics could not be computed", cmd);
        rc = CLI_NUMERIC;
    }
    /* Every printed figure must be a number (R^2 alone may be undefined: printed as null). */
    if (rc == CLI_OK && !(isfinite(mt.mape_pct) && isfinite(mt.median_ape_pct) &&
                          isfinite(mt.max_ape_pct) && (isfinite(mt.r2) || isnan(mt.r2)))) {
        cli_error("%s: the errors are not finite numbers", cmd);
        rc = CLI_NUMERIC;
    }
    /* The rows set aside: predicted as the others (with the calibration, else uncalibrated;
     * holdout folds fit no alpha for them) and reported apart. */
    aside_report ar = {.set = &aside};
    if (rc == CLI_OK && aside.n > 0) {
        struct sim_err err;
        sim_status st = sim_meas_predict_all(&o.p, &aside, cache, &amp, &err);
        if (st != SIM_OK)
            rc = meas_fail(st, &err);
        double *ameas = NULL, *ascratch = NULL;
        if (rc == CLI_OK) {
            apred = malloc(aside.n * sizeof(double));
            ameas = malloc(aside.n * sizeof(double));
            ascratch = malloc(aside.n * sizeof(double));
            if (!apred || !ameas || !ascratch) {
                cli_error("out of memory");
                rc = CLI_NUMERIC;
            }
        }
        const double a = o.holdout ? 1.0 : alpha, b = o.holdout ? 0.0 : beta;
        for (size_t i = 0; rc == CLI_OK && i < aside.n; i++) {
            ameas[i] = aside.rows[i].measured_s;
            rc = amp.other[i] ? predict_row(&amp, i, cal.ab_alpha, cal.ab_beta_s, &apred[i])
                              : predict_row(&amp, i, a, b, &apred[i]);
        }
        if (rc == CLI_OK &&
            sim_metrics_compute(apred, ameas, aside.n, ascratch, &ar.mt) != SIM_OK) {
            cli_error("%s: metrics could not be computed", cmd);
            rc = CLI_NUMERIC;
        }
        ar.pred = apred;
        free(ameas);
        free(ascratch);
    }
    /* The band's interval: which rows fall in it, per family. */
    sim_band_cover cover[SIM_BAND_FAMILIES];
    int64_t no_band = 0;
    if (rc == CLI_OK && o.interval && o.holdout) {
        /* Each group against the band of a calibration on the others. */
        struct sim_err err;
        memset(&cal.band, 0, sizeof(cal.band));
        if (sim_meas_band_holdout(&o.p, &mp, o.holdout, pred, queued, (int)o.interval, cover,
                                  &no_band, cal.band.held_out_by, sizeof(cal.band.held_out_by),
                                  &err) != SIM_OK)
            rc = meas_fail(SIM_ENOMEM, &err);
    } else if (rc == CLI_OK && o.interval) {
        struct sim_err err;
        if (!cal.band.held_out_by[0]) {
            cli_error("%s: %s has no band (made before calibrate recorded one, or its rows "
                      "could not be held out: see calibrate's output); recalibrate",
                      o.check ? "check" : "validate --interval", o.calibration);
            rc = CLI_BAD_INPUT;
        } else if (sim_meas_band_cover(&set, pred, queued, &cal.band, (int)o.interval, cover,
                                       &no_band, &err) != SIM_OK) {
            rc = meas_fail(SIM_ENOMEM, &err);
        }
    }
    unsigned drifted = 0;
    if (rc == CLI_OK && o.check)
        rc = print_check(&o, &cal.band, cover, no_band, &drifted);
    else if (rc == CLI_OK)
        rc = print_validation(&o, &set, &mp, pred, meas, &mt, folds, n_folds, alpha, beta, &ar,
                              o.interval ? cover : NULL, &cal.band, no_band);
    /* A drift is exit 4 whether or not the refit is written. */
    if ((rc == CLI_OK || rc == CLI_DRIFT) && o.check && o.refit) {
        const int rrc = refit(&o, argc, argv, &set, &mp, &cal, drifted);
        rc = rrc != CLI_OK ? rrc : rc;
    }
    sim_meas_pred_free(&amp);
    free(apred);
    sim_meas_set_free(&aside);
    sim_meas_pred_free(&mp);
    sim_cache_free(cache);
    free(pred);
    free(queued);
    free(meas);
    free(scratch);
    free(cal_hw);
    sim_meas_set_free(&set);
    return rc;
}

int cmd_validate(int argc, char **argv) { return run_validate(argc, argv, 0); }

int cmd_check(int argc, char **argv) { return run_validate(argc, argv, 1); }
