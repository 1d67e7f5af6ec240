/* plot_roofline.c - `llmstep plot roofline`: the operators of one step on the roofline (see
 * plot.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

/* ----- plot roofline ----- */

static const char *const bound_color[SIM_BOUND_COUNT] = {"#7f7f7f", "#d62728", "#2ca02c",
                                                         "#9467bd"};

/* An operator on the roofline and where its label goes. */
typedef struct op_point {
    double ai, rate, label_y;
    int op;
    sim_bound bound;
} op_point;

/* The operators with a place on the log axes, written to compute.dat and memory.dat; the
 * others are named in skipped. */
static int operator_points(plot_job *j, const sim_step_cost *c, op_point *pts, int *n_pts,
                           int n_in[SIM_BOUND_COUNT], char *skipped, size_t cap)
{
    FILE *f[SIM_BOUND_COUNT] = {NULL};
    f[SIM_BOUND_COMPUTE] = job_file(j, "compute.dat");
    f[SIM_BOUND_MEMORY] = job_file(j, "memory.dat");
    if (!f[SIM_BOUND_COMPUTE] || !f[SIM_BOUND_MEMORY]) {
        for (int b = 0; b < SIM_BOUND_COUNT; b++)
            if (f[b])
                fclose(f[b]);
        return CLI_BAD_INPUT;
    }
    *n_pts = 0;
    for (int k = 0; k < SIM_OP_COUNT; k++) {
        const sim_op_cost *o = &c->ops[k];
        if (o->bound == SIM_BOUND_NONE || o->bound == SIM_BOUND_COMM)
            continue;
        if (!(o->flops > 0.0 && o->bytes > 0.0 && o->time_s > 0.0)) {
            size_t l = strlen(skipped);
            snprintf(skipped + l, cap - l, "%s%s", l ? ", " : "", sim_op_name((sim_op_kind)k));
            continue;
        }
        double ai = o->flops / o->bytes, rate = o->flops / o->time_s / 1e12;
        fprintf(f[o->bound], "%.17g %.17g\n", ai, rate);
        n_in[o->bound]++;
        pts[*n_pts] = (op_point){ai, rate, rate, k, o->bound};
        (*n_pts)++;
    }
    fclose(f[SIM_BOUND_COMPUTE]);
    fclose(f[SIM_BOUND_MEMORY]);
    return CLI_OK;
}

/* Labels: from the highest rate down, push a label below any earlier label near it so
 * operators at almost the same point (the GEMMs of a decode step) stay readable; written to
 * labels.dat. */
static int place_labels(plot_job *j, op_point *pts, int n_pts)
{
    for (int a = 1; a < n_pts; a++)
        for (int b = a; b > 0 && pts[b].rate > pts[b - 1].rate; b--) {
            op_point t = pts[b];
            pts[b] = pts[b - 1];
            pts[b - 1] = t;
        }
    const double label_gap = 1.32; /* factor between stacked labels on the log axis */
    for (int a = 0; a < n_pts; a++) {
        pts[a].label_y = pts[a].rate;
        for (int again = 1; again;) {
            again = 0;
            for (int b = 0; b < a; b++)
                if (fabs(log10(pts[b].ai / pts[a].ai)) < 0.5 &&
                    pts[a].label_y > pts[b].label_y / label_gap &&
                    pts[a].label_y < pts[b].label_y * label_gap) {
                    pts[a].label_y = pts[b].label_y / label_gap;
                    again = 1;
                }
        }
    }
    FILE *lf = job_file(j, "labels.dat");
    if (!lf)
        return CLI_BAD_INPUT;
    for (int a = 0; a < n_pts; a++)
        fprintf(lf, "%.17g %.17g \"%s\" %s\n", pts[a].ai * 1.15, pts[a].label_y,
                sim_op_name((sim_op_kind)pts[a].op),
                pts[a].bound == SIM_BOUND_COMPUTE ? "0xd62728" : "0x2ca02c");
    fclose(lf);
    return CLI_OK;
}

/* "Roofline of <hw>: <model>, TP n, <dtype>, step <groups>" as a gnuplot label. */
static void roofline_title(const cli_run *run, const sim_step *st, char *tl, size_t cap)
{
    char title[512], mid[256];
    gp_label(mid, sizeof(mid), run->model.id);
    char step_desc[256] = "";
    for (int i = 0; i < st->n_groups && i < 4; i++) {
        const sim_group *g = &st->groups[i];
        size_t l = strlen(step_desc);
        snprintf(step_desc + l, sizeof(step_desc) - l, "%s%lld x %s %lld%s", i ? " + " : "",
                 (long long)g->count, g->new_tokens == 1 ? "decode at context" : "prefill",
                 (long long)(g->new_tokens == 1 ? g->context_tokens : g->new_tokens),
                 g->new_tokens == 1 ? "" : " tokens");
    }
    snprintf(title, sizeof(title), "Roofline of %s: %s, TP %d, %s, step %s", run->hw.id, mid,
             run->cfg.tp, sim_dtype_name(run->cfg.dtype), step_desc);
    gp_label(tl, cap, title);
}

/* The roofs (HBM peak and achievable, bf16/fp8/fp32 peaks and achievable rates, the ridge
 * point) and the operators, in one plot command. */
static void roofline_plot(FILE *s, const sim_hw *hw, const int n_in[SIM_BOUND_COUNT], int n_pts)
{
    sim_hw_roofs r;
    sim_hw_roofs_of(hw, &r);
    const double bw_peak = r.hbm_peak_bytes_per_s / 1e12;
    const double bw_ach = r.hbm_achievable_bytes_per_s / 1e12;
    const double c16p = r.bf16_peak_flops_per_s / 1e12;
    const double c16a = r.bf16_achievable_flops_per_s / 1e12;
    const int has_fp8 = r.has_fp8;
    const double c8p = r.fp8_peak_flops_per_s / 1e12;
    const double c8a = r.fp8_achievable_flops_per_s / 1e12;
    const double c32 = r.fp32_peak_flops_per_s / 1e12;
    const double ridge = r.ridge_bf16_flops_per_byte;
    fprintf(
        s,
        "plot x*%.9g w l dt 2 lw 1.5 lc rgb '#555555' t 'HBM peak %.2f TB/s (datasheet)', \\\n"
        "  x*%.9g w l lw 2 lc rgb '#1f77b4' t 'HBM achievable %.2f TB/s (STREAM x factor)', \\\n"
        "  %.9g w l dt 2 lw 1.5 lc rgb '#ff7f0e' t 'bf16/fp16 peak %.0f TFLOP/s', \\\n"
        "  roofc(x,%.9g,%.9g) w l lw 2.5 lc rgb '#ff7f0e' t 'bf16/fp16 achievable %.0f TFLOP/s "
        "(x %.2f)', \\\n",
        bw_peak, bw_peak, bw_ach, bw_ach, c16p, c16p, bw_ach, c16a, c16a,
        sim_hw_gemm_eff_frac(hw, SIM_DTYPE_BF16));
    if (has_fp8)
        fprintf(s,
                "  %.9g w l dt 2 lw 1.5 lc rgb '#9467bd' t 'fp8 peak %.0f TFLOP/s', \\\n"
                "  roofc(x,%.9g,%.9g) w l lw 2.5 lc rgb '#9467bd' t 'fp8 achievable %.0f TFLOP/s "
                "(x %.2f)', \\\n",
                c8p, c8p, bw_ach, c8a, c8a, sim_hw_gemm_eff_frac(hw, SIM_DTYPE_FP8));
    fprintf(s,
            "  roofc(x,%.9g,%.9g) w l lw 2 lc rgb '#8c564b' t 'fp32 vector %.0f TFLOP/s "
            "(elementwise)', \\\n"
            "  'ridge.dat' u 1:2 w p pt 6 ps 2.5 lw 2 lc rgb 'black' t 'ridge point %.0f FLOP/B "
            "(bf16, achievable)'",
            bw_ach, c32, c32, ridge);
    if (n_in[SIM_BOUND_COMPUTE] > 0)
        fprintf(s,
                ", \\\n  'compute.dat' u 1:2 w p pt 7 ps 1.6 lc rgb '%s' t 'operator, "
                "compute-bound'",
                bound_color[SIM_BOUND_COMPUTE]);
    if (n_in[SIM_BOUND_MEMORY] > 0)
        fprintf(s,
                ", \\\n  'memory.dat' u 1:2 w p pt 5 ps 1.4 lc rgb '%s' t 'operator, "
                "memory-bound'",
                bound_color[SIM_BOUND_MEMORY]);
    if (n_pts > 0)
        fprintf(s, ", \\\n  'labels.dat' u 1:2:3:4 w labels left font ',9' tc rgb variable "
                   "noenhanced notitle");
    fprintf(s, "\n");
}

int plot_roofline(plot_job *j, const cli_run *run, const sim_step *st)
{
    sim_step_cost c;
    sim_step_cost_compute(&run->model, &run->hw, &run->cfg, st, &c);
    const sim_hw *hw = &run->hw;
    int n_in[SIM_BOUND_COUNT] = {0};
    char skipped[512] = "";
    op_point pts[SIM_OP_COUNT];
    int n_pts = 0;
    int rc = operator_points(j, &c, pts, &n_pts, n_in, skipped, sizeof(skipped));
    if (rc == CLI_OK)
        rc = place_labels(j, pts, n_pts);
    if (rc != CLI_OK)
        return rc;
    double ai_min = (double)INFINITY, ai_max = 0.0, y_min = (double)INFINITY;
    for (int a = 0; a < n_pts; a++) {
        ai_min = fmin(ai_min, pts[a].ai);
        ai_max = fmax(ai_max, pts[a].ai);
        y_min = fmin(y_min, fmin(pts[a].rate, pts[a].label_y));
    }
    sim_hw_roofs roofs;
    sim_hw_roofs_of(hw, &roofs);
    const double bw_ach = roofs.hbm_achievable_bytes_per_s / 1e12;
    const double c16p = roofs.bf16_peak_flops_per_s / 1e12;
    const int has_fp8 = roofs.has_fp8;
    const double c8p = roofs.fp8_peak_flops_per_s / 1e12;
    /* Axes: a decade around the operators and the ridge points. */
    double x_lo = pow(10.0, floor(log10(fmin(ai_min, 1.0)))),
           x_hi = pow(10.0, ceil(log10(fmax(ai_max, (has_fp8 ? c8p : c16p) / bw_ach) * 3.0)));
    double y_lo = pow(10.0, floor(log10(fmin(y_min, x_lo * bw_ach)))),
           y_hi = pow(10.0, ceil(log10(fmax(c8p, c16p) * 1.5)));
    FILE *r = job_file(j, "ridge.dat");
    if (!r)
        return CLI_BAD_INPUT;
    fprintf(r, "%.17g %.17g\n", roofs.ridge_bf16_flops_per_byte,
            roofs.bf16_achievable_flops_per_s / 1e12);
    fclose(r);
    FILE *s = j->script;
    char tl[600];
    roofline_title(run, st, tl, sizeof(tl));
    fprintf(s, "set title '%s'\n", tl);
    fprintf(s,
            "set logscale xy\nset format x '10^{%%L}'\nset format y '10^{%%L}'\n"
            "set xlabel 'Arithmetic intensity (FLOP per HBM byte)'\n"
            "set ylabel 'Attained rate (TFLOP/s = 10^{12} FLOP/s)'\n"
            "set xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n"
            "set key outside right top box opaque spacing 1.2\n"
            "set samples 2000\n"
            "roofc(x,b,c) = (x*b >= c) ? c : 1/0\n",
            x_lo, x_hi, y_lo, y_hi);
    roofline_plot(s, hw, n_in, n_pts);
    if (skipped[0])
        printf("plot roofline: not drawn (no FLOPs, so no place on a log axis): %s\n", skipped);
    return CLI_OK;
}

/* ----- plot sweep ----- */
