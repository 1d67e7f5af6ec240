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
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calib_json.h"
#include "cli.h"
#include "meas_pred.h"
#include "meas_json.h"
#include "sweep_cli.h"

extern char **environ;

#define PLOT_MAX_FILES 40
#define PLOT_MAX_SEL   64

/* A plot in the making: its temporary folder and the files written there. */
typedef struct plot_job {
    char dir[4096];
    char files[PLOT_MAX_FILES][64];
    int n_files;
    const char *out; /* final image path */
    int svg;         /* 1: SVG, 0: PNG */
    char tmp_out[4200];
    FILE *script;
} plot_job;

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
static int path_ok(const char *p) { return !strpbrk(p, "'\n\r"); }

static int job_open(plot_job *j, const char *out)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
    size_t n = strlen(out);
    if (n > 4 && strcmp(out + n - 4, ".svg") == 0)
        j->svg = 1;
    else if (n > 4 && strcmp(out + n - 4, ".png") == 0)
        j->svg = 0;
    else {
        cli_error("plot: --out '%s': the name must end in .svg or .png", out);
        return CLI_USAGE;
    }
    if (!path_ok(out)) {
        cli_error("plot: --out '%s': quotes and newlines are not supported in the path", out);
        return CLI_USAGE;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(j->dir, sizeof(j->dir), "%s/llmstep-plot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!path_ok(j->dir) || !mkdtemp(j->dir)) {
        cli_error("plot: cannot create a temporary folder in %s: %s", tmp && *tmp ? tmp : "/tmp",
                  strerror(errno));
        j->dir[0] = '\0';
        return CLI_BAD_INPUT;
    }
    /* gnuplot runs in the temporary folder, so the image path must be absolute. */
    char cwd[4096] = "";
    if (out[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
        cli_error("plot: cannot read the current directory: %s", strerror(errno));
        return CLI_BAD_INPUT;
    }
    snprintf(j->tmp_out, sizeof(j->tmp_out), "%s%s%s.tmp.%ld", cwd, cwd[0] ? "/" : "", out,
             (long)getpid());
    if (!path_ok(j->tmp_out)) {
        cli_error("plot: the current directory's path has a quote or newline");
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Opens a new file in the job's folder for writing; records it for removal. */
static FILE *job_file(plot_job *j, const char *name)
{
    if (j->n_files == PLOT_MAX_FILES)
        return NULL;
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", j->dir, name);
    FILE *f = fopen(path, "w");
    if (f)
        snprintf(j->files[j->n_files++], sizeof(j->files[0]), "%s", name);
    else
        cli_error("plot: cannot write %s: %s", path, strerror(errno));
    return f;
}

/* Removes the temporary folder and everything the job put in it. */
static void job_close(plot_job *j)
{
    if (j->script)
        fclose(j->script);
    j->script = NULL;
    if (!j->dir[0])
        return;
    char path[4200];
    for (int i = 0; i < j->n_files; i++) {
        snprintf(path, sizeof(path), "%s/%s", j->dir, j->files[i]);
        unlink(path);
    }
    rmdir(j->dir);
    j->dir[0] = '\0';
}

/* Starts the script: terminal, output, fonts. width x height in pixels. */
static int job_script(plot_job *j, int width, int height)
{
    j->script = job_file(j, "plot.gp");
    if (!j->script)
        return CLI_BAD_INPUT;
    FILE *s = j->script;
    if (j->svg)
        fprintf(s,
                "set terminal svg size %d,%d dynamic enhanced font 'DejaVu Sans,12' "
                "background rgb 'white'\n",
                width, height);
    else
        fprintf(s, "set terminal pngcairo size %d,%d enhanced font 'DejaVu Sans,11'\n", width,
                height);
    fprintf(s, "cd '%s'\n", j->dir);
    fprintf(s, "set output '%s'\nset datafile separator whitespace\nset encoding utf8\n",
            j->tmp_out);
    fprintf(s, "set grid xtics ytics mxtics mytics lc rgb '#e0e0e0' lw 1, lc rgb '#f2f2f2'\n");
    return CLI_OK;
}

/* Runs gnuplot on the script and moves the image into place. */
static int job_render(plot_job *j)
{
    fprintf(j->script, "unset output\n");
    if (fclose(j->script) != 0) {
        j->script = NULL;
        cli_error("plot: writing the gnuplot script failed");
        return CLI_BAD_INPUT;
    }
    j->script = NULL;
    const char *gp = getenv("LLMSTEP_GNUPLOT");
    if (!gp || !*gp)
        gp = "gnuplot";
    char script[4200], errpath[4200];
    snprintf(script, sizeof(script), "%s/plot.gp", j->dir);
    snprintf(errpath, sizeof(errpath), "%s/gnuplot.err", j->dir);
    if (j->n_files < PLOT_MAX_FILES)
        snprintf(j->files[j->n_files++], sizeof(j->files[0]), "gnuplot.err");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *args[] = {(char *)(uintptr_t)gp, script, NULL};
    pid_t pid;
    int e = posix_spawnp(&pid, gp, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        cli_error("plot: cannot run '%s' (%s): install gnuplot with `apt-get install gnuplot-nox`",
                  gp, strerror(e));
        return CLI_BAD_INPUT;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    struct stat st;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(j->tmp_out, &st) != 0 ||
        st.st_size == 0) {
        /* 127: the shell-less spawn could not exec gnuplot. */
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            cli_error("plot: cannot run '%s': install gnuplot with `apt-get install gnuplot-nox`",
                      gp);
        else
            cli_error("plot: gnuplot failed (exit %d); its messages follow",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        FILE *f = fopen(errpath, "r");
        char line[512];
        while (f && fgets(line, sizeof(line), f))
            fprintf(stderr, "  %s", line);
        if (f)
            fclose(f);
        unlink(j->tmp_out);
        return CLI_BAD_INPUT;
    }
    if (rename(j->tmp_out, j->out) != 0) {
        cli_error("plot: cannot rename %s to %s: %s", j->tmp_out, j->out, strerror(errno));
        unlink(j->tmp_out);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* Escapes a label for a gnuplot single-quoted enhanced-text string. */
static void gp_label(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    for (; *s && k + 3 < cap; s++) {
        if (*s == '\'') {
            out[k++] = '\'';
            out[k++] = '\'';
        } else if (*s == '_' || *s == '^' || *s == '{' || *s == '}' || *s == '@' || *s == '&' ||
                   *s == '~') {
            /* One backslash escapes enhanced-text markup in a single-quoted string. */
            out[k++] = '\\';
            out[k++] = *s;
        } else if (*s != '\n') {
            out[k++] = *s;
        }
    }
    out[k] = '\0';
}

/* ----- plot roofline ----- */

static const char *const bound_color[SIM_BOUND_COUNT] = {"#7f7f7f", "#d62728", "#2ca02c",
                                                         "#9467bd"};

/* An operator on the roofline and where its label goes. */
typedef struct op_point {
    double ai, rate, label_y;
    int op;
    sim_bound bound;
} op_point;

static int plot_roofline(plot_job *j, const cli_run *run, const sim_step *st)
{
    sim_step_cost c;
    sim_step_cost_compute(&run->model, &run->hw, &run->cfg, st, &c);
    const sim_hw *hw = &run->hw;
    FILE *f[SIM_BOUND_COUNT] = {NULL};
    int n_in[SIM_BOUND_COUNT] = {0};
    f[SIM_BOUND_COMPUTE] = job_file(j, "compute.dat");
    f[SIM_BOUND_MEMORY] = job_file(j, "memory.dat");
    if (!f[SIM_BOUND_COMPUTE] || !f[SIM_BOUND_MEMORY]) {
        for (int b = 0; b < SIM_BOUND_COUNT; b++)
            if (f[b])
                fclose(f[b]);
        return CLI_BAD_INPUT;
    }
    double ai_min = (double)INFINITY, ai_max = 0.0, y_min = (double)INFINITY;
    char skipped[512] = "";
    op_point pts[SIM_OP_COUNT];
    int n_pts = 0;
    for (int k = 0; k < SIM_OP_COUNT; k++) {
        const sim_op_cost *o = &c.ops[k];
        if (o->bound == SIM_BOUND_NONE || o->bound == SIM_BOUND_COMM)
            continue;
        if (!(o->flops > 0.0 && o->bytes > 0.0 && o->time_s > 0.0)) {
            size_t l = strlen(skipped);
            snprintf(skipped + l, sizeof(skipped) - l, "%s%s", l ? ", " : "",
                     sim_op_name((sim_op_kind)k));
            continue;
        }
        double ai = o->flops / o->bytes, rate = o->flops / o->time_s / 1e12;
        fprintf(f[o->bound], "%.17g %.17g\n", ai, rate);
        n_in[o->bound]++;
        pts[n_pts].ai = ai;
        pts[n_pts].rate = rate;
        pts[n_pts].op = k;
        pts[n_pts].bound = o->bound;
        n_pts++;
        ai_min = fmin(ai_min, ai);
        ai_max = fmax(ai_max, ai);
        y_min = fmin(y_min, rate);
    }
    /* Labels: from the highest rate down, push a label below any earlier label near it so
     * operators at almost the same point (the GEMMs of a decode step) stay readable. */
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
        y_min = fmin(y_min, pts[a].label_y);
    }
    FILE *lf = job_file(j, "labels.dat");
    if (!lf) {
        fclose(f[SIM_BOUND_COMPUTE]);
        fclose(f[SIM_BOUND_MEMORY]);
        return CLI_BAD_INPUT;
    }
    for (int a = 0; a < n_pts; a++)
        fprintf(lf, "%.17g %.17g \"%s\" %s\n", pts[a].ai * 1.15, pts[a].label_y,
                sim_op_name((sim_op_kind)pts[a].op),
                pts[a].bound == SIM_BOUND_COMPUTE ? "0xd62728" : "0x2ca02c");
    fclose(lf);
    fclose(f[SIM_BOUND_COMPUTE]);
    fclose(f[SIM_BOUND_MEMORY]);
    const double bw_peak = hw->v[SIM_HWF_BW_HBM_PEAK] / 1e12;
    const double bw_ach = hw->v[SIM_HWF_BW_STREAM_COPY] * hw->v[SIM_HWF_BW_FACTOR_WEIGHTS] / 1e12;
    const double c16p = hw->v[SIM_HWF_PEAK_BF16] / 1e12;
    const double c16a = c16p * sim_hw_gemm_eff_frac(hw, SIM_DTYPE_BF16);
    const int has_fp8 = hw->prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT;
    const double c8p = has_fp8 ? hw->v[SIM_HWF_PEAK_FP8] / 1e12 : 0.0;
    const double c8a = has_fp8 ? c8p * sim_hw_gemm_eff_frac(hw, SIM_DTYPE_FP8) : 0.0;
    const double c32 = hw->v[SIM_HWF_PEAK_FP32] / 1e12;
    const double ridge = sim_hw_ridge_flops_per_byte(hw, SIM_DTYPE_BF16);
    /* Axes: a decade around the operators and the ridge points. */
    double x_lo = pow(10.0, floor(log10(fmin(ai_min, 1.0)))),
           x_hi = pow(10.0, ceil(log10(fmax(ai_max, (has_fp8 ? c8p : c16p) / bw_ach) * 3.0)));
    double y_lo = pow(10.0, floor(log10(fmin(y_min, x_lo * bw_ach)))),
           y_hi = pow(10.0, ceil(log10(fmax(c8p, c16p) * 1.5)));
    FILE *r = job_file(j, "ridge.dat");
    if (!r)
        return CLI_BAD_INPUT;
    fprintf(r, "%.17g %.17g\n", ridge, c16a);
    fclose(r);
    FILE *s = j->script;
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
    snprintf(title, sizeof(title), "Roofline of %s: %s, TP %d, %s, step %s", hw->id, mid,
             run->cfg.tp, sim_dtype_name(run->cfg.dtype), step_desc);
    char tl[600];
    gp_label(tl, sizeof(tl), title);
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
    if (skipped[0])
        printf("plot roofline: not drawn (no FLOPs, so no place on a log axis): %s\n", skipped);
    return CLI_OK;
}

/* ----- plot sweep ----- */

typedef struct sweep_rows {
    sim_sweep_row *rows;
    size_t n, cap;
    char model[128], hw[64];
} sweep_rows;

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

static int plot_sweep(plot_job *j, const cli_sweep_opts *o, const char *calib_note)
{
    sweep_rows x = {0};
    x.cap = (size_t)sim_sweep_count(&o->axes);
    x.rows = malloc(x.cap * sizeof(*x.rows));
    sim_pareto_point *front = malloc(x.cap * sizeof(*front));
    if (!x.rows || !front) {
        free(x.rows);
        free(front);
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    cli_sweep_sink sink = {&x, NULL, collect_row, NULL};
    int rc = cli_sweep_run(o, &sink);
    size_t n_front = 0;
    for (size_t i = 0; rc == CLI_OK && i < x.n; i++) {
        const sim_sweep_row *r = &x.rows[i];
        if (r->status == SIM_SWEEP_OK && isfinite(r->tpot_s))
            sim_pareto_insert(front, &n_front, x.cap,
                              (sim_pareto_point){r->tpot_s, r->tokens_per_s_per_gpu, (int64_t)i});
    }
    FILE *s = j->script;
    int n_tp_lines = 0;
    for (size_t t = 0; rc == CLI_OK && t < o->axes.n_tp; t++) {
        char name[32];
        snprintf(name, sizeof(name), "tp%lld.dat", (long long)o->axes.tp[t]);
        FILE *f = job_file(j, name);
        if (!f) {
            rc = CLI_BAD_INPUT;
            break;
        }
        snprintf(name, sizeof(name), "nofit%lld.dat", (long long)o->axes.tp[t]);
        FILE *nf = job_file(j, name);
        if (!nf) {
            fclose(f);
            rc = CLI_BAD_INPUT;
            break;
        }
        int n = 0;
        for (size_t i = 0; i < x.n; i++) {
            const sim_sweep_row *r = &x.rows[i];
            if (r->tp != o->axes.tp[t] || !isfinite(r->tpot_s))
                continue;
            fprintf(r->status == SIM_SWEEP_OK ? f : nf, "%lld %.17g %.17g\n", (long long)r->batch,
                    r->tpot_s * 1e3, r->tokens_per_s_per_gpu);
            n += r->status == SIM_SWEEP_OK;
        }
        fclose(f);
        fclose(nf);
        if (n > 0)
            n_tp_lines++;
    }
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
        static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};
        char m[256], h[128];
        gp_label(m, sizeof(m), x.model);
        gp_label(h, sizeof(h), x.hw);
        fprintf(s,
                "set multiplot layout 1,2 title '%s on %s: decode at context %lld tokens (%s)' "
                "font ',14'\n",
                m, h, (long long)o->axes.context[0], calib_note);
        fprintf(s, "set logscale x 2\nset logscale y\nset format x '%%g'\nset format y '%%g'\n"
                   "set ytics 2\nset mytics 2\n"
                   "set xlabel 'Batch size (sequences decoding together)'\n"
                   "set ylabel 'Time per output token (ms)'\n"
                   "set key top left box opaque\n");
        fprintf(s, "plot ");
        int first = 1;
        for (size_t t = 0; t < o->axes.n_tp; t++) {
            int have = 0, have_no = 0;
            for (size_t i = 0; i < x.n; i++)
                if (x.rows[i].tp == o->axes.tp[t] && isfinite(x.rows[i].tpot_s)) {
                    have |= x.rows[i].status == SIM_SWEEP_OK;
                    have_no |= x.rows[i].status != SIM_SWEEP_OK;
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
        fprintf(s, "unset logscale\nset logscale x\nset xtics 2\nset mxtics 2\nset ytics auto\n"
                   "set mytics default\nset format x '%%g'\nset format y '%%g'\n"
                   "set xlabel 'Time per output token (ms)'\n"
                   "set ylabel 'Throughput per GPU (output tokens/s)'\n"
                   "set key bottom right box opaque\nplot ");
        first = 1;
        for (size_t t = 0; t < o->axes.n_tp; t++) {
            int have = 0;
            for (size_t i = 0; i < x.n && !have; i++)
                have = x.rows[i].tp == o->axes.tp[t] && x.rows[i].status == SIM_SWEEP_OK &&
                       isfinite(x.rows[i].tpot_s);
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
    free(x.rows);
    free(front);
    return rc;
}

/* ----- plot validate ----- */

static const char *group_value(const sim_meas_row *r, const char *field, char *buf, size_t cap)
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

static int plot_validate(plot_job *j, sim_meas_set *set, const char *calibration,
                         const char *engine, int no_host, const char *field)
{
    double alpha = 1.0, beta = 0.0;
    if (calibration) {
        for (size_t i = 1; i < set->n; i++)
            if (strcmp(set->rows[i].hardware, set->rows[0].hardware) != 0) {
                cli_error("plot validate: rows name more than one hardware profile; select one "
                          "with --select hardware=ID to apply --calibration");
                return CLI_BAD_INPUT;
            }
        sim_calib cal;
        int rc = cli_load_calib(calibration, set->rows[0].hardware, &cal);
        if (rc != CLI_OK)
            return rc;
        alpha = cal.alpha;
        beta = cal.beta_s;
    }
    char names[MAX_GROUPS][128];
    double sum_ape[MAX_GROUPS] = {0}, sum_signed[MAX_GROUPS] = {0};
    int count[MAX_GROUPS] = {0}, ng = 0;
    FILE *gf[MAX_GROUPS] = {NULL};
    double lo = (double)INFINITY, hi = 0.0, total_ape = 0.0;
    int rc = CLI_OK;
    sim_cache *cache = sim_cache_alloc(cli_data_dir());
    sim_batch_work *work = malloc(sizeof(*work));
    if (!cache || !work) {
        cli_error("out of memory");
        rc = CLI_NUMERIC;
    }
    for (size_t i = 0; i < set->n && rc == CLI_OK; i++) {
        const sim_meas_row *row = &set->rows[i];
        sim_row_pred p;
        struct sim_err e;
        sim_status st = sim_meas_predict_one(cache, row, engine, SIM_ROOFLINE_OP, SIM_GEMM_FLAT,
                                             no_host, work, &p, &e);
        if (st != SIM_OK) {
            cli_error("%s", e.msg);
            rc = st == SIM_EFIT || st == SIM_ENOMEM ? CLI_NUMERIC : CLI_BAD_INPUT;
            break;
        }
        double pred = alpha * p.roofline_s + beta * p.n_steps + p.host_s, m = row->measured_s;
        char buf[64];
        const char *v = group_value(row, field, buf, sizeof(buf));
        int k = 0;
        while (k < ng && strcmp(names[k], v) != 0)
            k++;
        if (k == ng) {
            if (ng == MAX_GROUPS) {
                k = ng - 1; /* the last group collects the rest */
                snprintf(names[k], sizeof(names[k]), "other");
            } else {
                snprintf(names[k], sizeof(names[k]), "%s", v);
                char fname[32];
                snprintf(fname, sizeof(fname), "g%d.dat", k);
                gf[k] = job_file(j, fname);
                if (!gf[k]) {
                    rc = CLI_BAD_INPUT;
                    break;
                }
                ng++;
            }
        }
        fprintf(gf[k], "%.17g %.17g\n", m, pred);
        double err = (pred - m) / m * 100.0;
        sum_ape[k] += fabs(err);
        sum_signed[k] += err;
        count[k]++;
        total_ape += fabs(err);
        lo = fmin(lo, fmin(m, pred));
        hi = fmax(hi, fmax(m, pred));
    }
    for (int k = 0; k < ng; k++)
        fclose(gf[k]);
    sim_cache_free(cache);
    free(work);
    if (rc != CLI_OK)
        return rc;
    FILE *bars = job_file(j, "groups.dat");
    if (!bars)
        return CLI_BAD_INPUT;
    for (int k = 0; k < ng; k++) {
        char lab[300];
        gp_label(lab, sizeof(lab), names[k]);
        fprintf(bars, "\"%s (%d)\" %.17g %.17g\n", lab, count[k], sum_ape[k] / count[k],
                sum_signed[k] / count[k]);
    }
    fclose(bars);
    FILE *s = j->script;
    double x_lo = pow(10.0, floor(log10(lo / 1.2) * 4.0) / 4.0),
           x_hi = pow(10.0, ceil(log10(hi * 1.2) * 4.0) / 4.0);
    fprintf(s,
            "set multiplot layout 1,2 title 'Validation: %zu measurements, MAPE %.1f%%, %s' font "
            "',14'\n",
            set->n, total_ape / (double)set->n,
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
    for (int k = 0; k < ng; k++) {
        char lab[300];
        gp_label(lab, sizeof(lab), names[k]);
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
    return CLI_OK;
}

/* ----- plot serving ----- */

/* Measured serving points: x (concurrency or rate), which figure (0 TTFT, 1 TPOT), which
 * statistic (0 mean, 1 p50, 2 p90, 3 p99), value in seconds, TP. */
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
static int plot_serving(plot_job *j, const cli_sweep_opts *o, const char *model_arg,
                        const char *hw_arg, const sim_meas_set *set, const char *calib_note)
{
    static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                         "#9467bd", "#8c564b", "#e377c2", "#17becf"};
    static const char *const stat_name[4] = {"mean", "p50", "p90", "p99"};
    static const int stat_pt[4] = {7, 9, 5, 13}; /* filled circle, triangle, square, diamond */
    const int open_loop = o->n_rates > 0;
    sweep_rows x = {0};
    x.cap = o->axes.n_tp * (open_loop ? o->n_rates : o->axes.n_batch);
    x.rows = malloc(x.cap * sizeof(*x.rows));
    meas_point *mp = set->n ? malloc(set->n * sizeof(*mp)) : NULL;
    if (!x.rows || (set->n && !mp)) {
        free(x.rows);
        free(mp);
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    cli_sweep_sink sink = {&x, NULL, collect_row, NULL};
    int rc = cli_sweep_run(o, &sink);
    size_t n_mp = 0;
    for (size_t i = 0; rc == CLI_OK && i < set->n; i++)
        n_mp +=
            (size_t)serving_point(&set->rows[i], x.model, model_arg, x.hw, hw_arg, o, &mp[n_mp]);
    /* have[t]: simulated points of TP t; meas[t][figure][stat]: measured points. */
    int have[8] = {0}, meas[8][2][4] = {{{0}}}, n_lines = 0, n_meas = 0;
    for (size_t t = 0; rc == CLI_OK && t < o->axes.n_tp; t++) {
        char name[32];
        snprintf(name, sizeof(name), "sim%zu.dat", t);
        FILE *f = job_file(j, name);
        snprintf(name, sizeof(name), "meas%zu.dat", t);
        FILE *mf = f ? job_file(j, name) : NULL;
        if (!f || !mf) {
            if (f)
                fclose(f);
            rc = CLI_BAD_INPUT;
            break;
        }
        const char *why = NULL;
        for (size_t i = 0; i < x.n; i++) {
            const sim_sweep_row *r = &x.rows[i];
            if (r->tp != o->axes.tp[t])
                continue;
            if (r->status != SIM_SWEEP_OK) {
                why = sim_sweep_status_name(r->status);
                continue;
            }
            fprintf(f, "%.17g %.17g %.17g %.17g %.17g\n",
                    open_loop ? r->rate_per_s : (double)r->concurrency, r->ttft_dist_s.mean * 1e3,
                    r->ttft_dist_s.p90 * 1e3, r->tpot_dist_s.mean * 1e3, r->tpot_dist_s.p90 * 1e3);
            have[t]++;
        }
        for (size_t i = 0; i < n_mp; i++)
            if (mp[i].tp == o->axes.tp[t]) {
                fprintf(mf, "%.17g %d %d %.17g\n", mp[i].x, mp[i].figure, mp[i].stat,
                        mp[i].value_s * 1e3);
                meas[t][mp[i].figure][mp[i].stat]++;
                n_meas++;
            }
        fclose(f);
        fclose(mf);
        n_lines += have[t] > 0;
        if (!have[t] && why)
            printf("plot serving: TP %lld not drawn (%s)\n", (long long)o->axes.tp[t], why);
    }
    if (rc == CLI_OK && n_lines == 0) {
        cli_error("plot serving: no configuration of %s on %s fits in memory", x.model, x.hw);
        rc = CLI_BAD_INPUT;
    }
    if (rc == CLI_OK) {
        FILE *s = j->script;
        char m[256], h[128];
        gp_label(m, sizeof(m), x.model);
        gp_label(h, sizeof(h), x.hw);
        fprintf(s,
                "set multiplot layout 1,2 title '%s on %s: %lld prompt + %lld output tokens, "
                "%s (%s)' font ',14'\n",
                m, h, (long long)o->prompt_tokens, (long long)o->output_tokens,
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
                if (have[t]) {
                    fprintf(s,
                            "%s'sim%zu.dat' u 1:%d w lp pt 7 ps 0.6 lw 2 lc rgb '%s' t 'TP %lld "
                            "simulated mean', \\\n  'sim%zu.dat' u 1:%d w l lw 2 dt 2 lc rgb '%s' "
                            "t 'TP %lld simulated p90'",
                            first ? "" : ", \\\n  ", t, 2 + 2 * fig, c, tp, t, 3 + 2 * fig, c, tp);
                    first = 0;
                }
                for (int k = 0; k < 4; k++)
                    if (meas[t][fig][k]) {
                        fprintf(s,
                                "%s'meas%zu.dat' u 1:(($2 == %d && $3 == %d) ? $4 : NaN) w p "
                                "pt %d ps 1.6 lc rgb '%s' t 'TP %lld measured %s'",
                                first ? "" : ", \\\n  ", t, fig, k, stat_pt[k], c, tp,
                                stat_name[k]);
                        first = 0;
                    }
            }
            fprintf(s, "\n");
        }
        fprintf(s, "unset multiplot\n");
        if (set->n)
            printf("plot serving: %zu measured points of %zu rows drawn\n", (size_t)n_meas, set->n);
    }
    free(x.rows);
    free(mp);
    return rc;
}

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
