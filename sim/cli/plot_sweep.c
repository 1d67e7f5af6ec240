/* plot_sweep.c - `llmstep plot sweep`: throughput against latency over a sweep (see plot.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

static int collect_row(void *ctx, const cli_sweep_block *b, const sim_sweep_row *r)
{
    sweep_rows *x = ctx;
    if (x->n == x->cap)
        return CLI_NUMERIC;
    snprintf(x->model, sizeof(x->model), "%s", b->model);
    snprintf(x->hw, sizeof(x->hw), "%s", b->hw);
    x->rows[x->n++] = *r;
    return CLI_OK;
}

int collect_sweep(const cli_sweep_opts *o, size_t cap, sweep_rows *x)
{
    memset(x, 0, sizeof(*x));
    x->cap = cap;
    x->rows = malloc(cap * sizeof(*x->rows));
    if (!x->rows) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    cli_sweep_sink sink = {x, NULL, collect_row, NULL};
    return cli_sweep_run(o, &sink);
}

static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                     "#9467bd", "#8c564b", "#e377c2", "#17becf"};

/* One file per TP of the configurations that fit (tpN.dat) and of those that do not
 * (nofitN.dat): batch, TPOT (ms), tokens/s per GPU. *n_tp_lines: TPs with a fitting row. */
static int write_tp_files(plot_job *j, const cli_sweep_opts *o, const sweep_rows *x,
                          int *n_tp_lines)
{
    *n_tp_lines = 0;
    for (size_t t = 0; t < o->axes.n_tp; t++) {
        char name[32];
        snprintf(name, sizeof(name), "tp%lld.dat", (long long)o->axes.tp[t]);
        FILE *f = job_file(j, name);
        if (!f)
            return CLI_BAD_INPUT;
        snprintf(name, sizeof(name), "nofit%lld.dat", (long long)o->axes.tp[t]);
        FILE *nf = job_file(j, name);
        if (!nf) {
            fclose(f);
            return CLI_BAD_INPUT;
        }
        int n = 0;
        for (size_t i = 0; i < x->n; i++) {
            const sim_sweep_row *r = &x->rows[i];
            if (r->tp != o->axes.tp[t] || !isfinite(r->tpot_s))
                continue;
            fprintf(r->status == SIM_SWEEP_OK ? f : nf, "%lld %.17g %.17g\n", (long long)r->batch,
                    r->tpot_s * 1e3, r->tokens_per_s_per_gpu);
            n += r->status == SIM_SWEEP_OK;
        }
        fclose(f);
        fclose(nf);
        if (n > 0)
            (*n_tp_lines)++;
    }
    return CLI_OK;
}

/* The left plot: TPOT against batch, one line per TP (and the points that do not fit). */
static void tpot_plot(FILE *s, const cli_sweep_opts *o, const sweep_rows *x)
{
    fprintf(s, "set logscale x 2\nset logscale y\nset format x '%%g'\nset format y '%%g'\n"
               "set ytics 2\nset mytics 2\n"
               "set xlabel 'Batch size (sequences decoding together)'\n"
               "set ylabel 'Time per output token (ms)'\n"
               "set key top left box opaque\n");
    fprintf(s, "plot ");
    int first = 1;
    for (size_t t = 0; t < o->axes.n_tp; t++) {
        int have = 0, have_no = 0;
        for (size_t i = 0; i < x->n; i++)
            if (x->rows[i].tp == o->axes.tp[t] && isfinite(x->rows[i].tpot_s)) {
                have |= x->rows[i].status == SIM_SWEEP_OK;
                have_no |= x->rows[i].status != SIM_SWEEP_OK;
            }
        if (have)
            fprintf(s, "%s'tp%lld.dat' u 1:2 w lp pt 7 ps 1 lw 2 lc rgb '%s' t 'TP %lld'",
                    first ? "" : ", \\\n  ", (long long)o->axes.tp[t], colors[t % 8],
                    (long long)o->axes.tp[t]);
        first &= !have;
        if (have_no)
            fprintf(s,
                    "%s'nofit%lld.dat' u 1:2 w p pt 6 ps 1.1 lc rgb '%s' t 'TP %lld: does not "
                    "fit in memory'",
                    first ? "" : ", \\\n  ", (long long)o->axes.tp[t], colors[t % 8],
                    (long long)o->axes.tp[t]);
        first &= !have_no;
    }
    fprintf(s, "\n");
}

/* The right plot: throughput per GPU against TPOT, and the Pareto frontier. */
static void throughput_plot(FILE *s, const cli_sweep_opts *o, const sweep_rows *x)
{
    fprintf(s, "unset logscale\nset logscale x\nset xtics 2\nset mxtics 2\nset ytics auto\n"
               "set mytics default\nset format x '%%g'\nset format y '%%g'\n"
               "set xlabel 'Time per output token (ms)'\n"
               "set ylabel 'Throughput per GPU (output tokens/s)'\n"
               "set key bottom right box opaque\nplot ");
    int first = 1;
    for (size_t t = 0; t < o->axes.n_tp; t++) {
        int have = 0;
        for (size_t i = 0; i < x->n && !have; i++)
            have = x->rows[i].tp == o->axes.tp[t] && x->rows[i].status == SIM_SWEEP_OK &&
                   isfinite(x->rows[i].tpot_s);
        if (!have)
            continue;
        fprintf(s, "%s'tp%lld.dat' u 2:3 w p pt 7 ps 1.1 lc rgb '%s' t 'TP %lld'",
                first ? "" : ", \\\n  ", (long long)o->axes.tp[t], colors[t % 8],
                (long long)o->axes.tp[t]);
        first = 0;
    }
    fprintf(s, ", \\\n  'pareto.dat' u 1:2 w lp pt 6 ps 2 lw 1.5 dt 2 lc rgb 'black' t "
               "'Pareto frontier'\nunset multiplot\n");
}

int plot_sweep(plot_job *j, const cli_sweep_opts *o, const char *calib_note)
{
    sweep_rows x;
    int rc = collect_sweep(o, (size_t)sim_sweep_count(&o->axes), &x);
    sim_pareto_point *front = rc == CLI_OK ? malloc(x.cap * sizeof(*front)) : NULL;
    if (rc == CLI_OK && !front) {
        cli_error("out of memory");
        rc = CLI_NUMERIC;
    }
    size_t n_front = 0;
    for (size_t i = 0; rc == CLI_OK && i < x.n; i++) {
        const sim_sweep_row *r = &x.rows[i];
        if (r->status == SIM_SWEEP_OK && isfinite(r->tpot_s))
            sim_pareto_insert(front, &n_front, x.cap,
                              (sim_pareto_point){r->tpot_s, r->tokens_per_s_per_gpu, (int64_t)i});
    }
    int n_tp_lines = 0;
    if (rc == CLI_OK)
        rc = write_tp_files(j, o, &x, &n_tp_lines);
    FILE *pf = rc == CLI_OK ? job_file(j, "pareto.dat") : NULL;
    if (rc == CLI_OK && !pf)
        rc = CLI_BAD_INPUT;
    for (size_t i = 0; rc == CLI_OK && i < n_front; i++)
        fprintf(pf, "%.17g %.17g\n", front[i].latency_s * 1e3, front[i].throughput);
    if (pf)
        fclose(pf);
    if (rc == CLI_OK && n_tp_lines == 0) {
        cli_error("plot sweep: no configuration of %s on %s fits in memory", x.model, x.hw);
        rc = CLI_BAD_INPUT;
    }
    if (rc == CLI_OK) {
        char m[256], h[128];
        gp_label(m, sizeof(m), x.model);
        gp_label(h, sizeof(h), x.hw);
        fprintf(j->script,
                "set multiplot layout 1,2 title '%s on %s: decode at context %lld tokens (%s)' "
                "font ',14'\n",
                m, h, (long long)o->axes.context[0], calib_note);
        tpot_plot(j->script, o, &x);
        throughput_plot(j->script, o, &x);
    }
    free(x.rows);
    free(front);
    return rc;
}

/* ----- plot validate ----- */
