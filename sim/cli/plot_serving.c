/* plot_serving.c - `llmstep plot serving`: TTFT and TPOT against load (see plot.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

typedef struct meas_point {
    double x, value_s;
    int figure, stat;
    int64_t tp;
} meas_point;

/* 1 when the row is a serving measurement of this plot's model, hardware, lengths and
 * arrival; fills its point. Rows of other TPs are kept and dropped by the caller. */
static int serving_point(const sim_meas_row *r, const char *model_id, const char *model_arg,
                         const char *hw_id, const char *hw_arg, const cli_sweep_opts *o,
                         meas_point *out)
{
    if (r->kind != SIM_MEAS_SERVING || r->trace[0])
        return 0;
    if ((strcmp(r->model, model_id) != 0 && strcmp(r->model, model_arg) != 0) ||
        (strcmp(r->hardware, hw_id) != 0 && strcmp(r->hardware, hw_arg) != 0))
        return 0;
    const sim_workload_spec *w = &r->workload;
    if (w->prompt_tokens != o->prompt_tokens || w->output_tokens != o->output_tokens)
        return 0;
    if (o->n_rates > 0 ? w->arrival != SIM_ARRIVAL_POISSON : w->arrival != SIM_ARRIVAL_CLOSED)
        return 0;
    const int m = (int)r->metric;
    if (m >= SIM_METRIC_E2E_MEAN)
        return 0;
    out->x = o->n_rates > 0 ? w->rate_per_s : (double)w->concurrency;
    out->value_s = r->measured_s;
    out->figure = m < SIM_METRIC_TPOT_MEAN ? 0 : 1;
    out->stat = m % 4;
    out->tp = r->tp;
    return 1;
}

/*
 * TTFT and TPOT against concurrency (or request rate), one colour per TP: the simulated
 * mean (solid) and p90 (dashed), and the measured points of set (any statistic, by marker).
 */
static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                     "#9467bd", "#8c564b", "#e377c2", "#17becf"};

/* What each TP has: simulated points, and measured points per figure and statistic. */
typedef struct serving_have {
    int sim[8], meas[8][2][4], n_lines, n_meas;
} serving_have;

/* simT.dat (load, TTFT mean and p90, TPOT mean and p90 in ms) and measT.dat per TP. */
static int write_serving_files(plot_job *j, const cli_sweep_opts *o, const sweep_rows *x,
                               const meas_point *mp, size_t n_mp, serving_have *h)
{
    const int open_loop = o->n_rates > 0;
    for (size_t t = 0; t < o->axes.n_tp; t++) {
        char name[32];
        snprintf(name, sizeof(name), "sim%zu.dat", t);
        FILE *f = job_file(j, name);
        snprintf(name, sizeof(name), "meas%zu.dat", t);
        FILE *mf = f ? job_file(j, name) : NULL;
        if (!f || !mf) {
            if (f)
                fclose(f);
            return CLI_BAD_INPUT;
        }
        const char *why = NULL;
        for (size_t i = 0; i < x->n; i++) {
            const sim_sweep_row *r = &x->rows[i];
            if (r->tp != o->axes.tp[t])
                continue;
            if (r->status != SIM_SWEEP_OK) {
                why = sim_sweep_status_name(r->status);
                continue;
            }
            fprintf(f, "%.17g %.17g %.17g %.17g %.17g\n",
                    open_loop ? r->rate_per_s : (double)r->concurrency, r->ttft_dist_s.mean * 1e3,
                    r->ttft_dist_s.p90 * 1e3, r->tpot_dist_s.mean * 1e3, r->tpot_dist_s.p90 * 1e3);
            h->sim[t]++;
        }
        for (size_t i = 0; i < n_mp; i++)
            if (mp[i].tp == o->axes.tp[t]) {
                fprintf(mf, "%.17g %d %d %.17g\n", mp[i].x, mp[i].figure, mp[i].stat,
                        mp[i].value_s * 1e3);
                h->meas[t][mp[i].figure][mp[i].stat]++;
                h->n_meas++;
            }
        fclose(f);
        fclose(mf);
        h->n_lines += h->sim[t] > 0;
        if (!h->sim[t] && why)
            printf("plot serving: TP %lld not drawn (%s)\n", (long long)o->axes.tp[t], why);
    }
    return CLI_OK;
}

/* The two plots (TTFT, TPOT) of the script. */
static void serving_script(FILE *s, const cli_sweep_opts *o, const sweep_rows *x,
                           const serving_have *h, const char *calib_note)
{
    static const char *const stat_name[4] = {"mean", "p50", "p90", "p99"};
    static const int stat_pt[4] = {7, 9, 5, 13}; /* filled circle, triangle, square, diamond */
    const int open_loop = o->n_rates > 0;
    char m[256], hw[128];
    gp_label(m, sizeof(m), x->model);
    gp_label(hw, sizeof(hw), x->hw);
    fprintf(s,
            "set multiplot layout 1,2 title '%s on %s: %lld prompt + %lld output tokens, "
            "%s (%s)' font ',14'\n",
            m, hw, (long long)o->prompt_tokens, (long long)o->output_tokens,
            open_loop ? "Poisson arrivals" : "closed loop", calib_note);
    if (open_loop)
        fprintf(s, "set logscale x\nset xlabel 'Request rate (requests/s)'\n");
    else
        fprintf(s, "set logscale x 2\nset xlabel 'Concurrency (clients, closed loop)'\n");
    fprintf(s, "set logscale y\nset format x '%%g'\nset format y '%%g'\n"
               "set key top left box opaque font ',10' spacing 0.9\n");
    static const char *const ylabel[2] = {"Time to first token, TTFT (ms)",
                                          "Time per output token, TPOT (ms)"};
    for (int fig = 0; fig < 2; fig++) {
        fprintf(s, "set ylabel '%s'\nplot ", ylabel[fig]);
        int first = 1;
        for (size_t t = 0; t < o->axes.n_tp; t++) {
            const long long tp = (long long)o->axes.tp[t];
            const char *c = colors[t % 8];
            if (h->sim[t]) {
                fprintf(s,
                        "%s'sim%zu.dat' u 1:%d w lp pt 7 ps 0.6 lw 2 lc rgb '%s' t 'TP %lld "
                        "simulated mean', \\\n  'sim%zu.dat' u 1:%d w l lw 2 dt 2 lc rgb '%s' "
                        "t 'TP %lld simulated p90'",
                        first ? "" : ", \\\n  ", t, 2 + 2 * fig, c, tp, t, 3 + 2 * fig, c, tp);
                first = 0;
            }
            for (int k = 0; k < 4; k++)
                if (h->meas[t][fig][k]) {
                    fprintf(s,
                            "%s'meas%zu.dat' u 1:(($2 == %d && $3 == %d) ? $4 : NaN) w p "
                            "pt %d ps 1.6 lc rgb '%s' t 'TP %lld measured %s'",
                            first ? "" : ", \\\n  ", t, fig, k, stat_pt[k], c, tp, stat_name[k]);
                    first = 0;
                }
        }
        fprintf(s, "\n");
    }
    fprintf(s, "unset multiplot\n");
}

int plot_serving(plot_job *j, const cli_sweep_opts *o, const char *model_arg, const char *hw_arg,
                 const sim_meas_set *set, const char *calib_note)
{
    const int open_loop = o->n_rates > 0;
    sweep_rows x;
    int rc = collect_sweep(o, o->axes.n_tp * (open_loop ? o->n_rates : o->axes.n_batch), &x);
    meas_point *mp = rc == CLI_OK && set->n ? malloc(set->n * sizeof(*mp)) : NULL;
    if (rc == CLI_OK && set->n && !mp) {
        cli_error("out of memory");
        rc = CLI_NUMERIC;
    }
    size_t n_mp = 0;
    for (size_t i = 0; rc == CLI_OK && i < set->n; i++)
        n_mp +=
            (size_t)serving_point(&set->rows[i], x.model, model_arg, x.hw, hw_arg, o, &mp[n_mp]);
    static serving_have h;
    memset(&h, 0, sizeof(h));
    if (rc == CLI_OK)
        rc = write_serving_files(j, o, &x, mp, n_mp, &h);
    if (rc == CLI_OK && h.n_lines == 0) {
        cli_error("plot serving: no configuration of %s on %s fits in memory", x.model, x.hw);
        rc = CLI_BAD_INPUT;
    }
    if (rc == CLI_OK) {
        serving_script(j->script, o, &x, &h, calib_note);
        if (set->n)
            printf("plot serving: %zu measured points of %zu rows drawn\n", (size_t)h.n_meas,
                   set->n);
    }
    free(x.rows);
    free(mp);
    return rc;
}
