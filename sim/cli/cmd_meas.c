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
#include "opts.h"
#include "meas_json.h"
#include "meas_pred.h"
#include "metrics.h"

#define MAX_FILES   64
#define MAX_FILTERS SIM_MEAS_MAX_FILTERS

typedef struct meas_opts {
    const char *files[MAX_FILES];
    int n_files;
    const char *select[MAX_FILTERS], *exclude[MAX_FILTERS];
    int n_select, n_exclude;
    const char *format, *out, *calibration, *holdout;
    /* engine, engine_given (--engine overrides the engine that rows name by engine_version),
     * mode, gemm, no_host and the fit options */
    sim_meas_opts p;
} meas_opts;

static const char calibrate_usage[] =
    "usage: llmstep calibrate --measurements FILE... --out CALIB.json [options]\n"
    "\n"
    "Fits alpha and beta_s (GSL weighted least squares) so that each selected row is\n"
    "predicted as alpha x (sum of roofline step times) + beta_s x (steps) + host time, and\n"
    "writes the calibration file atomically. All rows must name one hardware profile.\n"
    "\n"
    "Options:\n"
    "  --measurements FILE     a JSON Lines measurement file (repeatable; more files may follow)\n"
    "  --select FIELD=VALUE    keep rows where FIELD equals VALUE (repeatable; all must hold)\n"
    "  --exclude FIELD=VALUE   drop rows where FIELD equals VALUE (repeatable; any drops)\n"
    "  --out FILE              calibration file to write (required)\n"
    "  --weighting W           relative (default: minimizes squared relative errors, i.e. what\n"
    "                          MAPE measures) or absolute (plain least squares in seconds)\n"
    "  --alpha-min X, --alpha-max X      bounds on alpha (default 0.1 and 10)\n"
    "  --beta-min-s X, --beta-max-s X    bounds on beta_s in seconds (default 0 and 1)\n"
    "  --engine ID             engine profile whose host time is taken as known (default vllm-v0)\n"
    "  --no-host-time          predict without the engine's host time (beta_s absorbs it)\n"
    "  --roofline op|step      roofline mode (default op)\n"
    "  --gemm flat|tile-wave   GEMM compute ceiling model (default flat)\n"
    "  --format table|json     report format on stdout (default table)\n"
    "\n"
    "Exit status: 0 ok, 1 bad input, 2 usage, 3 fit failure.\n"
    "Example:\n"
    "  llmstep calibrate --measurements ../shared/data/measurements/argonne-vllm-offline.jsonl \\\n"
    "      --select hardware=h100-sxm --select model=llama-2-7b --select tp=1 --out h100.json\n";

static const char validate_usage[] =
    "usage: llmstep validate --measurements FILE... [--calibration CALIB.json] [options]\n"
    "\n"
    "Predicts every selected row and reports MAPE, median APE, max APE and R^2, with the\n"
    "errors grouped by model, TP, batch and kind, and a per-row table. Without\n"
    "--calibration, alpha = 1 and beta_s = 0.\n"
    "\n"
    "Options:\n"
    "  --measurements FILE     a JSON Lines measurement file (repeatable)\n"
    "  --select FIELD=VALUE    keep rows where FIELD equals VALUE (repeatable; all must hold)\n"
    "  --exclude FIELD=VALUE   drop rows where FIELD equals VALUE (repeatable)\n"
    "  --calibration FILE      alpha and beta_s to apply\n"
    "  --holdout FIELD         leave-one-group-out cross-validation: for each value of FIELD\n"
    "                          (model, hardware, tp, batch, prompt_tokens, kind...), fit on the\n"
    "                          other rows and predict the held-out ones; reports the pooled\n"
    "                          held-out error (fit options as for calibrate)\n"
    "  --engine ID, --no-host-time, --roofline op|step, --gemm M, --weighting W, --alpha-min ...\n"
    "                          as for calibrate\n"
    "  --format table|json     default table; json prints the MEASUREMENTS.md object\n";

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

static void calibrate_help(FILE *f) { fputs(calibrate_usage, f); }
static void validate_help(FILE *f) { fputs(validate_usage, f); }

static int parse_opts(int argc, char **argv, meas_opts *o, void (*usage)(FILE *), int *done)
{
    memset(o, 0, sizeof(*o));
    o->p.engine = SIM_MEAS_DEFAULT_ENGINE;
    o->format = "table";
    o->p.mode = SIM_ROOFLINE_OP;
    sim_fit_opts_default(&o->p.fit);
    const char *cmd = argv[0];
    cli_opt_list files = {o->files, 0, MAX_FILES}, sel = {o->select, 0, MAX_FILTERS},
                 exc = {o->exclude, 0, MAX_FILTERS};
    sim_fit_opts *fit = &o->p.fit;
    const cli_opt t[] = {
        CLI_FILES("measurements", &files),
        CLI_LIST("select", &sel),
        CLI_LIST("exclude", &exc),
        CLI_STR_SEEN("engine", &o->p.engine, &o->p.engine_given),
        CLI_STR("format", &o->format),
        CLI_STR("out", &o->out),
        CLI_STR("calibration", &o->calibration),
        CLI_STR("holdout", &o->holdout),
        CLI_FLAG("no-host-time", &o->p.no_host),
        CLI_ROOFLINE("roofline", &o->p.mode),
        CLI_CUSTOM("weighting", parse_weighting, &fit->weight),
        CLI_DBL("alpha-min", &fit->alpha_min, 0.0, 1e6),
        CLI_DBL("alpha-max", &fit->alpha_max, 0.0, 1e6),
        CLI_DBL("beta-min-s", &fit->beta_min_s, -1e3, 1e3),
        CLI_DBL("beta-max-s", &fit->beta_max_s, -1e3, 1e3),
        CLI_GEMM("gemm", &o->p.gemm),
    };
    int first = argc;
    int rc = cli_opts_parse_operands(cmd, argc, argv, t, CLI_N(t), usage, done, &first);
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
    return CLI_OK;
}

/* Loads every file and applies the selection. */
static int load_rows(const meas_opts *o, const char *cmd, sim_meas_set *set)
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
    return CLI_OK;
}

/* Prints a failure of the shared prediction code and returns its exit code: numerical
 * failures and lack of memory exit 3, the rest is bad input. */
static int meas_fail(sim_status st, const struct sim_err *err)
{
    cli_error("%s", err->msg);
    return st == SIM_EFIT || st == SIM_ENOMEM ? CLI_NUMERIC : CLI_BAD_INPUT;
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

/* Writes the calibration file (the command line that made it included). */
static int write_calibration(const meas_opts *o, int argc, char **argv, const char *hardware,
                             const char *engine, const sim_fit_result *res)
{
    char command[2048] = "llmstep";
    size_t used = strlen(command);
    for (int i = 0; i < argc && used + 2 < sizeof(command); i++)
        used += (size_t)snprintf(command + used, sizeof(command) - used, " %s", argv[i]);
    const sim_meas_origin from = {o->files,   (size_t)o->n_files,   o->select, (size_t)o->n_select,
                                  o->exclude, (size_t)o->n_exclude, command};
    struct sim_err err;
    if (sim_meas_calib_write(o->out, &o->p, &from, hardware, engine, res, &err) != SIM_OK) {
        cli_error("calibrate: %s", err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

static void print_calibration(const meas_opts *o, const char *hardware, const char *engine,
                              const sim_fit_result *res)
{
    if (strcmp(o->format, "json") == 0) {
        printf("{\"hardware\":\"%s\",\"alpha\":%.17g,\"beta_s\":%.17g,\"alpha_stderr\":%.17g,"
               "\"beta_stderr_s\":%.17g,\"n_rows\":%zu,\"mape_pct\":%.17g,"
               "\"median_ape_pct\":%.17g,\"max_ape_pct\":%.17g,\"r2\":%.17g,"
               "\"alpha_at_bound\":%s,\"beta_at_bound\":%s,\"out\":\"%s\"}\n",
               hardware, res->alpha, res->beta_s, res->alpha_stderr, res->beta_stderr_s,
               res->n_rows, res->fit.mape_pct, res->fit.median_ape_pct, res->fit.max_ape_pct,
               res->fit.r2, res->alpha_at_bound ? "true" : "false",
               res->beta_at_bound ? "true" : "false", o->out);
        return;
    }
    printf("llmstep calibrate: %zu rows on %s (engine %s, %s weighting)\n", res->n_rows, hardware,
           o->p.no_host ? "none" : engine,
           o->p.fit.weight == SIM_FIT_ABSOLUTE ? "absolute" : "relative");
    printf("  alpha   %.6g +/- %.2g%s\n", res->alpha, res->alpha_stderr,
           res->alpha_at_bound ? "   (at a bound)" : "");
    printf("  beta_s  %.6g s +/- %.2g s%s\n", res->beta_s, res->beta_stderr_s,
           res->beta_at_bound ? "   (at a bound)" : "");
    printf("  fit     MAPE %.2f%%, median APE %.2f%%, max APE %.2f%%, R^2 %.4f\n",
           res->fit.mape_pct, res->fit.median_ape_pct, res->fit.max_ape_pct, res->fit.r2);
    printf("  wrote   %s\n", o->out);
}

int cmd_calibrate(int argc, char **argv)
{
    meas_opts o;
    int done, rc = parse_opts(argc, argv, &o, calibrate_help, &done);
    if (rc != CLI_OK || done)
        return rc;
    if (!o.out) {
        cli_error("calibrate: --out FILE is required");
        return CLI_USAGE;
    }
    if (o.calibration || o.holdout) {
        cli_error("calibrate: --calibration and --holdout belong to validate");
        return CLI_USAGE;
    }
    sim_meas_set set;
    sim_meas_set_init(&set);
    sim_meas_pred mp = {0};
    sim_cache *cache = NULL;
    rc = load_rows(&o, "calibrate", &set);
    if (rc == CLI_OK)
        rc = check_one_hardware(&set, "calibrate");
    if (rc == CLI_OK && set.n < 2) {
        cli_error("calibrate: %zu row selected; alpha and beta need at least 2", set.n);
        rc = CLI_BAD_INPUT;
    }
    if (rc == CLI_OK)
        rc = predict_all(&o, &set, &cache, &mp);
    sim_fit_result res;
    if (rc == CLI_OK)
        rc = fit_rows(&o, &mp, &res, "calibrate");
    /* The engine the rows were predicted with (each row's, from engine_version). */
    const char *engine = set.n ? sim_meas_row_engine(&o.p, &set.rows[0]) : o.p.engine;
    for (size_t i = 1; rc == CLI_OK && i < set.n; i++)
        if (strcmp(sim_meas_row_engine(&o.p, &set.rows[i]), engine) != 0) {
            cli_error("calibrate: rows are predicted with different engines (%s at %s:%d, %s at "
                      "%s:%d); select rows of one engine version or pass --engine",
                      engine, set.rows[0].file, set.rows[0].line,
                      sim_meas_row_engine(&o.p, &set.rows[i]), set.rows[i].file, set.rows[i].line);
            rc = CLI_BAD_INPUT;
        }
    /* The fit's figures are written and printed: all must be numbers (the standard errors may
     * be undefined with two rows, and the file writes them as null then). */
    if (rc == CLI_OK) {
        const double printed[] = {res.alpha, res.beta_s, res.fit.mape_pct, res.fit.median_ape_pct,
                                  res.fit.max_ape_pct};
        rc = cli_check_finite("calibrate: ", "the fit", printed,
                              sizeof(printed) / sizeof(printed[0]));
    }
    if (rc == CLI_OK)
        rc = write_calibration(&o, argc, argv, set.rows[0].hardware, engine, &res);
    if (rc == CLI_OK)
        print_calibration(&o, set.rows[0].hardware, engine, &res);
    sim_meas_pred_free(&mp);
    sim_cache_free(cache);
    sim_meas_set_free(&set);
    return rc;
}

/* Per-group statistics for the validate table. */
typedef struct group_stat {
    char value[160];
    size_t n;
    double sum_ape, max_ape, sum_signed, sum_host, sum_pred;
    int64_t preempted_rows;
} group_stat;

#define MAX_GROUPS 256

static void print_groups(const char *field, const sim_meas_set *set, const sim_row_pred *p,
                         const double *pred, int json, int *first_field)
{
    static group_stat g[MAX_GROUPS];
    int ng = 0;
    char buf[64];
    for (size_t i = 0; i < set->n; i++) {
        const char *v = sim_meas_group_field(&set->rows[i], field, buf, sizeof(buf));
        int k = 0;
        while (k < ng && strcmp(g[k].value, v) != 0)
            k++;
        if (k == ng) {
            if (ng == MAX_GROUPS)
                continue;
            memset(&g[k], 0, sizeof(g[k]));
            snprintf(g[k].value, sizeof(g[k].value), "%s", v);
            ng++;
        }
        double m = set->rows[i].measured_s;
        double ape = fabs(pred[i] - m) / m * 100.0;
        g[k].n++;
        g[k].sum_ape += ape;
        if (ape > g[k].max_ape)
            g[k].max_ape = ape;
        g[k].sum_signed += (pred[i] - m) / m * 100.0;
        g[k].sum_host += p[i].host_s;
        g[k].sum_pred += pred[i];
        g[k].preempted_rows += p[i].preemptions > 0;
    }
    if (json) {
        printf("%s\"%s\":[", *first_field ? "" : ",", field);
        *first_field = 0;
        for (int k = 0; k < ng; k++)
            printf("%s{\"value\":\"%s\",\"n_rows\":%zu,\"mape_pct\":%.17g,\"max_ape_pct\":%.17g,"
                   "\"bias_pct\":%.17g,\"host_share_pct\":%.17g,\"preempted_rows\":%lld}",
                   k ? "," : "", g[k].value, g[k].n, g[k].sum_ape / (double)g[k].n, g[k].max_ape,
                   g[k].sum_signed / (double)g[k].n,
                   g[k].sum_pred > 0 ? 100.0 * g[k].sum_host / g[k].sum_pred : 0.0,
                   (long long)g[k].preempted_rows);
        printf("]");
        return;
    }
    printf("\n  by %-14s %6s %8s %8s %8s %8s %10s\n", field, "rows", "MAPE%", "max%", "bias%",
           "host%", "preempted");
    for (int k = 0; k < ng; k++)
        printf("  %-17s %6zu %8.2f %8.2f %+8.2f %8.1f %10lld\n", g[k].value, g[k].n,
               g[k].sum_ape / (double)g[k].n, g[k].max_ape, g[k].sum_signed / (double)g[k].n,
               g[k].sum_pred > 0 ? 100.0 * g[k].sum_host / g[k].sum_pred : 0.0,
               (long long)g[k].preempted_rows);
}

/* Prints the validation: errors, holdout folds, groups, rows. */
static void print_validation(const meas_opts *o, const sim_meas_set *set, const sim_meas_pred *mp,
                             const double *pred, const double *meas, const sim_metrics *mt,
                             const sim_meas_fold *folds, int n_folds, double alpha, double beta)
{
    /* Serving rows are grouped by statistic and clients instead of batch and kind. */
    int serving = 0;
    for (size_t i = 0; i < set->n; i++)
        serving |= set->rows[i].kind == SIM_MEAS_SERVING;
    static const char *const batch_fields[] = {"model", "tp", "batch", "kind", "prompt_tokens"};
    static const char *const serve_fields[] = {"model", "tp", "metric", "concurrency",
                                               "prompt_tokens"};
    const char *const *fields = serving ? serve_fields : batch_fields;
    const int n_fields = 5;
    if (strcmp(o->format, "json") == 0) {
        printf("{\"n_rows\":%zu,\"mape_pct\":%.17g,\"median_ape_pct\":%.17g,"
               "\"max_ape_pct\":%.17g,\"r2\":",
               mt->n, mt->mape_pct, mt->median_ape_pct, mt->max_ape_pct);
        if (isfinite(mt->r2))
            printf("%.17g", mt->r2);
        else
            printf("null");
        if (!o->holdout)
            printf(",\"alpha\":%.17g,\"beta_s\":%.17g,\"calibrated\":%s", alpha, beta,
                   o->calibration ? "true" : "false");
        printf(",\"rows\":[");
        for (size_t i = 0; i < set->n; i++)
            printf("%s{\"id\":\"%s\",\"measured_s\":%.17g,\"predicted_s\":%.17g,"
                   "\"ape_pct\":%.17g}",
                   i ? "," : "", set->rows[i].id, meas[i], pred[i],
                   fabs(pred[i] - meas[i]) / meas[i] * 100.0);
        printf("],\"groups\":{");
        int first = 1;
        for (int f = 0; f < n_fields; f++)
            print_groups(fields[f], set, mp->p, pred, 1, &first);
        printf("}");
        if (o->holdout) {
            printf(",\"holdout\":{\"field\":\"%s\",\"folds\":[", o->holdout);
            for (int k = 0; k < n_folds; k++)
                printf("%s{\"value\":\"%s\",\"n_rows\":%zu,\"alpha\":%.17g,\"beta_s\":%.17g,"
                       "\"mape_pct\":%.17g}",
                       k ? "," : "", folds[k].value, folds[k].n, folds[k].alpha, folds[k].beta_s,
                       folds[k].mape_pct);
            printf("]}");
        }
        printf("}\n");
    } else {
        printf("llmstep validate: %zu rows", mt->n);
        if (o->holdout)
            printf(", leave-one-%s-out (each group predicted by a fit on the others)\n",
                   o->holdout);
        else if (o->calibration)
            printf(", alpha %.6g, beta_s %.6g s (%s)\n", alpha, beta, o->calibration);
        else
            printf(", uncalibrated (alpha = 1, beta_s = 0)\n");
        printf("  MAPE %.2f%%   median APE %.2f%%   max APE %.2f%%   R^2 %.4f\n", mt->mape_pct,
               mt->median_ape_pct, mt->max_ape_pct, mt->r2);
        if (o->holdout) {
            printf("\n  held-out %-10s %6s %10s %12s %8s\n", o->holdout, "rows", "alpha", "beta_ms",
                   "MAPE%");
            for (int k = 0; k < n_folds; k++)
                printf("  %-19s %6zu %10.4f %12.4f %8.2f\n", folds[k].value, folds[k].n,
                       folds[k].alpha, folds[k].beta_s * 1e3, folds[k].mape_pct);
        }
        int first = 1;
        for (int f = 0; f < n_fields; f++)
            print_groups(fields[f], set, mp->p, pred, 0, &first);
        printf("\n  bias = mean signed error (+ over-predicts); host = engine host time share "
               "of the prediction;\n  preempted = rows whose simulation preempted sequences\n");
        printf("\n  %-48s %12s %12s %8s\n", "id", "measured_s", "predicted_s", "APE%");
        for (size_t i = 0; i < set->n; i++)
            printf("  %-48s %12.5g %12.5g %8.2f\n", set->rows[i].id, meas[i], pred[i],
                   fabs(pred[i] - meas[i]) / meas[i] * 100.0);
    }
}

/* The options validate refuses: --out, --calibration with --holdout, an unknown field. */
static int validate_usage_check(const meas_opts *o)
{
    if (o->out) {
        cli_error("validate: --out belongs to calibrate");
        return CLI_USAGE;
    }
    if (o->calibration && o->holdout) {
        cli_error("validate: --holdout fits its own alpha and beta; drop --calibration");
        return CLI_USAGE;
    }
    char buf[64];
    if (o->holdout && !sim_meas_group_field(&(sim_meas_row){0}, o->holdout, buf, sizeof(buf))) {
        cli_error("validate: --holdout '%s': expected model, hardware, kind, dtype, engine, tp, "
                  "batch, prompt_tokens, output_tokens, context_tokens, metric or concurrency",
                  o->holdout);
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cmd_validate(int argc, char **argv)
{
    meas_opts o;
    int done, rc = parse_opts(argc, argv, &o, validate_help, &done);
    if (rc == CLI_OK && !done)
        rc = validate_usage_check(&o);
    if (rc != CLI_OK || done)
        return rc;
    sim_meas_set set;
    sim_meas_set_init(&set);
    sim_meas_pred mp = {0};
    sim_cache *cache = NULL;
    double *pred = NULL, *meas = NULL, *scratch = NULL;
    double alpha = 1.0, beta = 0.0;
    sim_calib cal;
    rc = load_rows(&o, "validate", &set);
    if (rc == CLI_OK && o.calibration) {
        rc = check_one_hardware(&set, "validate");
        if (rc == CLI_OK)
            rc = cli_load_calib(o.calibration, set.rows[0].hardware, &cal);
        if (rc == CLI_OK) {
            alpha = cal.alpha;
            beta = cal.beta_s;
        }
    }
    if (rc == CLI_OK)
        rc = predict_all(&o, &set, &cache, &mp);
    if (rc == CLI_OK) {
        pred = malloc(set.n * sizeof(double));
        meas = malloc(set.n * sizeof(double));
        scratch = malloc(set.n * sizeof(double));
        if (!pred || !meas || !scratch) {
            cli_error("out of memory");
            rc = CLI_NUMERIC;
        }
    }
    /* Holdout: for each value, fit on the other rows, predict the held-out ones. */
    int n_folds = 0;
    static sim_meas_fold folds[MAX_GROUPS];
    for (size_t i = 0; rc == CLI_OK && i < set.n; i++) {
        meas[i] = set.rows[i].measured_s;
        rc = predict_row(&mp, i, alpha, beta, &pred[i]);
    }
    if (rc == CLI_OK && o.holdout) {
        struct sim_err err;
        sim_status st =
            sim_meas_holdout(&o.p, &mp, o.holdout, pred, folds, MAX_GROUPS, &n_folds, &err);
        if (st != SIM_OK)
            rc = meas_fail(st, &err);
    }
    sim_metrics mt;
    if (rc == CLI_OK && sim_metrics_compute(pred, meas, set.n, scratch, &mt) != SIM_OK) {
        cli_error("validate: metrics could not be computed");
        rc = CLI_NUMERIC;
    }
    /* Every printed figure must be a number (R^2 alone may be undefined: printed as null). */
    if (rc == CLI_OK && !(isfinite(mt.mape_pct) && isfinite(mt.median_ape_pct) &&
                          isfinite(mt.max_ape_pct) && (isfinite(mt.r2) || isnan(mt.r2)))) {
        cli_error("validate: the errors are not finite numbers");
        rc = CLI_NUMERIC;
    }
    if (rc == CLI_OK)
        print_validation(&o, &set, &mp, pred, meas, &mt, folds, n_folds, alpha, beta);
    sim_meas_pred_free(&mp);
    sim_cache_free(cache);
    free(pred);
    free(meas);
    free(scratch);
    sim_meas_set_free(&set);
    return rc;
}
