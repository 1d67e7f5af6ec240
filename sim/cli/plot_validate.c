/* plot_validate.c - `llmstep plot validate`: predicted against measured (see plot.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "calib_json.h"
#include "meas_pred.h"

const char *group_value(const sim_meas_row *r, const char *field, char *buf, size_t cap)
{
    if (strcmp(field, "model") == 0)
        return r->model;
    if (strcmp(field, "hardware") == 0)
        return r->hardware;
    if (strcmp(field, "kind") == 0)
        return sim_meas_kind_name(r->kind);
    if (strcmp(field, "tp") == 0)
        snprintf(buf, cap, "TP %lld", (long long)r->tp);
    else if (strcmp(field, "batch") == 0)
        snprintf(buf, cap, "batch %lld", (long long)r->batch);
    else
        return NULL;
    return buf;
}

#define MAX_GROUPS 24

/* The rows predicted and grouped by field: gN.dat (measured, predicted) per group, and the
 * per-group errors. */
typedef struct vgroups {
    char names[MAX_GROUPS][128]; /* legend labels */
    size_t first[MAX_GROUPS];    /* each group's first row: its value, compared whole */
    double sum_ape[MAX_GROUPS], sum_signed[MAX_GROUPS];
    int count[MAX_GROUPS], ng;
    double lo, hi, total_ape;
} vgroups;

/* The alpha and beta_s of --calibration (rows of one hardware profile), else 1 and 0. */
static int validate_calibration(const sim_meas_set *set, const char *calibration, double *alpha,
                                double *beta, sim_hw *hw, int *have_hw, sim_calib *cal)
{
    *have_hw = 0;
    *alpha = 1.0;
    *beta = 0.0;
    if (!calibration)
        return CLI_OK;
    for (size_t i = 1; i < set->n; i++)
        if (strcmp(set->rows[i].hardware, set->rows[0].hardware) != 0) {
            cli_error("plot validate: rows name more than one hardware profile; select one "
                      "with --select hardware=ID to apply --calibration");
            return CLI_BAD_INPUT;
        }
    int rc = cli_load_calib(calibration, set->rows[0].hardware, cal);
    if (rc == CLI_OK) {
        *alpha = cal->alpha;
        *beta = cal->beta_s;
    }
    /* Its fitted figures replace the profile's. */
    if (rc == CLI_OK && cal->n_figures > 0) {
        char path[4096];
        struct sim_err err;
        rc = cli_load_hw(set->rows[0].hardware, hw, path, sizeof(path));
        if (rc == CLI_OK && sim_calib_apply_figures(cal, calibration, hw, &err) != SIM_OK) {
            cli_error("%s", err.msg);
            rc = CLI_BAD_INPUT;
        }
        *have_hw = rc == CLI_OK;
    }
    return rc;
}

/* Predicts every row as `llmstep validate` does (sim_meas_predict_all: the engine each row's
 * engine_version names unless --engine was given, serving rows simulated, the calibration's
 * figure domain) and writes it to its group's file. hw: the calibration cal's figures applied
 * (NULL: none); rows of models unlike those they were fitted on get the row's profile and
 * cal's alpha/beta-only fit (calib_json.h). */
static int predict_groups(plot_job *j, const sim_meas_set *set, const char *engine,
                          int engine_given, int no_host, const char *field, double alpha,
                          double beta, const sim_hw *hw, const sim_calib *cal, vgroups *g)
{
    FILE *gf[MAX_GROUPS] = {NULL};
    g->lo = (double)INFINITY;
    int rc = CLI_OK;
    sim_cache *cache = sim_cache_alloc(cli_data_dir());
    if (!cache) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    sim_meas_opts o = {.engine = engine_given ? engine : SIM_MEAS_DEFAULT_ENGINE,
                       .engine_given = engine_given,
                       .mode = SIM_ROOFLINE_OP,
                       .gemm = SIM_GEMM_FLAT,
                       .no_host = no_host,
                       .hw = hw,
                       .domain = hw ? cal->fig_domain : 0};
    sim_fit_opts_default(&o.fit);
    sim_meas_pred mp = {0};
    struct sim_err e;
    sim_status st = sim_meas_predict_all(&o, set, cache, &mp, &e);
    for (size_t i = 0; i < set->n && rc == CLI_OK; i++) {
        const sim_meas_row *row = &set->rows[i];
        double pred = 0.0;
        if (st == SIM_OK)
            st = mp.other[i]
                     ? sim_meas_predict_row(&mp, i, cal->ab_alpha, cal->ab_beta_s, &pred, &e)
                     : sim_meas_predict_row(&mp, i, alpha, beta, &pred, &e);
        if (st != SIM_OK) {
            cli_error("%s", e.msg);
            rc = cli_exit_of(st);
            break;
        }
        const double meas = row->measured_s;
        char buf[64];
        const char *v = group_value(row, field, buf, sizeof(buf));
        int k = 0;
        char fb[64];
        while (k < g->ng && strcmp(group_value(&set->rows[g->first[k]], field, fb, sizeof(fb)), v))
            k++;
        if (k == g->ng) {
            if (g->ng == MAX_GROUPS) {
                k = g->ng - 1; /* the last group collects the rest */
                snprintf(g->names[k], sizeof(g->names[k]), "other");
            } else {
                /* A label too long for the legend keeps its end (a path's file name). */
                const size_t len = strlen(v), cap = sizeof(g->names[k]);
                snprintf(g->names[k], cap, len < cap ? "%s" : "...%s",
                         len < cap ? v : v + len - (cap - 4));
                g->first[k] = i;
                char fname[32];
                snprintf(fname, sizeof(fname), "g%d.dat", k);
                gf[k] = job_file(j, fname);
                if (!gf[k]) {
                    rc = CLI_BAD_INPUT;
                    break;
                }
                g->ng++;
            }
        }
        fprintf(gf[k], "%.17g %.17g\n", meas, pred);
        double err = (pred - meas) / meas * 100.0;
        g->sum_ape[k] += fabs(err);
        g->sum_signed[k] += err;
        g->count[k]++;
        g->total_ape += fabs(err);
        g->lo = fmin(g->lo, fmin(meas, pred));
        g->hi = fmax(g->hi, fmax(meas, pred));
    }
    for (int k = 0; k < g->ng; k++)
        fclose(gf[k]);
    sim_meas_pred_free(&mp);
    sim_cache_free(cache);
    return rc;
}

/* The script: predicted against measured per group, and the errors per group as bars. */
static void validate_script(FILE *s, const sim_meas_set *set, const vgroups *g,
                            const char *calibration, const char *field)
{
    double x_lo = pow(10.0, floor(log10(g->lo / 1.2) * 4.0) / 4.0),
           x_hi = pow(10.0, ceil(log10(g->hi * 1.2) * 4.0) / 4.0);
    fprintf(s,
            "set multiplot layout 1,2 title 'Validation: %zu measurements, MAPE %.1f%%, %s' font "
            "',14'\n",
            set->n, g->total_ape / (double)set->n,
            calibration ? "calibrated (alpha and beta from --calibration)"
                        : "uncalibrated (alpha = 1, beta = 0)");
    fprintf(s,
            "set logscale xy\nset format x '%%g'\nset format y '%%g'\n"
            "set xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\nset size ratio -1\n"
            "set xlabel 'Measured time (s)'\nset ylabel 'Predicted time (s)'\n"
            "set key top left box opaque width 2 font ',10'\n"
            "plot x*1.15 w l dt 2 lc rgb '#888888' t '+/-15%%', x*0.85 w l dt 2 lc rgb "
            "'#888888' notitle, x w l lw 1.5 lc rgb 'black' t 'y = x'",
            x_lo, x_hi, x_lo, x_hi);
    for (int k = 0; k < g->ng; k++) {
        char lab[300];
        gp_label(lab, sizeof(lab), g->names[k]);
        fprintf(s, ", \\\n  'g%d.dat' u 1:2 w p pt %d ps 1.3 lc %d t '%s'", k, 4 + 2 * (k % 5),
                k + 1, lab);
    }
    fprintf(s, "\n");
    char fl[64];
    gp_label(fl, sizeof(fl), field);
    fprintf(s,
            "unset logscale\nset size noratio\nset autoscale\nset yrange [*:*]\n"
            "set style data histograms\nset style histogram clustered gap 1\n"
            "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset format y '%%g'\n"
            "set xtics rotate by -35 left nomirror font ',10'\nset grid noxtics ytics\n"
            "set xlabel '%s (rows)'\nset ylabel 'Error (%%)'\nset key top right box opaque\n"
            "set xzeroaxis lt -1\n"
            "plot 'groups.dat' u 2:xtic(1) lc rgb '#1f77b4' t 'MAPE (%%)', '' u 3 lc rgb "
            "'#ff7f0e' t 'bias: mean signed error (%%)'\nunset multiplot\n",
            fl);
}

int plot_validate(plot_job *j, sim_meas_set *set, const char *calibration, const char *engine,
                  int engine_given, int no_host, const char *field)
{
    double alpha, beta;
    static sim_hw hw;
    static sim_calib cal;
    int have_hw;
    int rc = validate_calibration(set, calibration, &alpha, &beta, &hw, &have_hw, &cal);
    if (rc != CLI_OK)
        return rc;
    static vgroups g;
    memset(&g, 0, sizeof(g));
    rc = predict_groups(j, set, engine, engine_given, no_host, field, alpha, beta,
                        have_hw ? &hw : NULL, &cal, &g);
    if (rc != CLI_OK)
        return rc;
    FILE *bars = job_file(j, "groups.dat");
    if (!bars)
        return CLI_BAD_INPUT;
    for (int k = 0; k < g.ng; k++) {
        char lab[300];
        gp_label(lab, sizeof(lab), g.names[k]);
        fprintf(bars, "\"%s (%d)\" %.17g %.17g\n", lab, g.count[k], g.sum_ape[k] / g.count[k],
                g.sum_signed[k] / g.count[k]);
    }
    fclose(bars);
    validate_script(j->script, set, &g, calibration, field);
    return CLI_OK;
}

/* ----- plot serving ----- */

/* Measured serving points: x (concurrency or rate), which figure (0 TTFT, 1 TPOT), which
 * statistic (0 mean, 1 p50, 2 p90, 3 p99), value in seconds, TP. */
