/*
 * plot.h - the pieces of `llmstep plot`: a gnuplot job (a private temporary folder with the
 * data files and the script, gnuplot run on it, the finished image renamed over --out so a
 * reader never sees a partial file; plot_job.c) and one file per plot (plot_roofline.c,
 * plot_sweep.c, plot_validate.c, plot_serving.c). cmd_plot.c parses the options and picks
 * the plot. gnuplot owns axes, ticks, legends and layout (docs/capacity-planning.md,
 * "Plots", says why gnuplot); set LLMSTEP_GNUPLOT to use another gnuplot binary.
 */
#ifndef SIM_CLI_PLOT_H
#define SIM_CLI_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "meas_json.h"
#include "sweep_cli.h"

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

/* 1 when a path can be quoted in a gnuplot script (no quote, no newline). */
int path_ok(const char *p);
/* Creates the temporary folder for an image at out (.svg or .png). */
int job_open(plot_job *j, const char *out);
/* A new data file in the job's folder, open for writing (NULL after an error message). */
FILE *job_file(plot_job *j, const char *name);
/* Removes the temporary folder and what is in it. */
void job_close(plot_job *j);
/* Starts the script: terminal, size in pixels, output. */
int job_script(plot_job *j, int width, int height);
/* Runs gnuplot on the script and renames the image over out. */
int job_render(plot_job *j);
/* Escapes a label for a gnuplot single-quoted enhanced-text string. */
void gp_label(char *out, size_t cap, const char *s);

/* The rows of a sweep, collected for plotting. */
typedef struct sweep_rows {
    sim_sweep_row *rows;
    size_t n, cap;
    char model[128], hw[64];
} sweep_rows;
/* Runs the sweep o into x (room for cap rows, on the heap: free x->rows, also after a
 * failure). */
int collect_sweep(const cli_sweep_opts *o, size_t cap, sweep_rows *x);

/* The plots: each writes its data and the rest of the script. */
int plot_roofline(plot_job *j, const cli_run *run, const sim_step *st);
int plot_sweep(plot_job *j, const cli_sweep_opts *o, const char *calib_note);
/* A row's value of the field plot validate groups by; NULL for another field. */
const char *group_value(const sim_meas_row *r, const char *field, char *buf, size_t cap);
int plot_validate(plot_job *j, sim_meas_set *set, const char *calibration, const char *engine,
                  int engine_given, int no_host, const char *field);
int plot_serving(plot_job *j, const cli_sweep_opts *o, const char *model_arg, const char *hw_arg,
                 const sim_meas_set *meas, const char *note);

#endif
