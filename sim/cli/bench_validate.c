/*
 * bench_validate.c - `llmstep bench --validate`: how long `llmstep validate` takes on a
 * measurement file, in process: loading and selecting the rows, loading the model, hardware
 * and engine files they name (a fresh cache each time), and predicting every row (batch rows
 * by simulating the engine step by step, with runs of identical decode steps summed in closed
 * form, docs/model.md "Decode runs"). Default file: the 511 Argonne offline batches of
 * ../shared/data (issue 11: 0.26-0.5 s before the library's cache). Prints medians of
 * repetitions, CPU time of the thread and wall time. A benchmark that prints figures, not a
 * timed test.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cache.h"
#include "err.h"
#include "calib_fit.h"
#include "meas_pred.h"
#include "sweep_cli.h"

#define REPS 15

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One validation: rows, steps simulated and MAPE (the check that the work was done). */
typedef struct bench_val {
    size_t rows;
    double steps, mape_pct;
} bench_val;

static sim_status validate_once(const char *file, bench_val *v, struct sim_err *err)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    int bad_term = 0;
    sim_status st =
        sim_meas_load_selected(&file, 1, NULL, 0, NULL, 0, "bench: ", &set, &bad_term, err);
    sim_cache *cache = st == SIM_OK ? sim_cache_alloc(cli_data_dir()) : NULL;
    if (st == SIM_OK && !cache) {
        sim__errf(err, "bench: out of memory");
        st = SIM_ENOMEM;
    }
    sim_meas_opts o = {.engine = "vllm-v0", .mode = SIM_ROOFLINE_OP, .gemm = SIM_GEMM_FLAT};
    sim_fit_opts_default(&o.fit);
    sim_meas_pred mp;
    memset(&mp, 0, sizeof(mp));
    if (st == SIM_OK)
        st = sim_meas_predict_all(&o, &set, cache, &mp, err);
    *v = (bench_val){set.n, 0.0, 0.0};
    for (size_t i = 0; st == SIM_OK && i < set.n; i++) {
        double pred;
        st = sim_meas_predict_row(&mp, i, 1.0, 0.0, &pred, err);
        v->steps += mp.p[i].n_steps;
        v->mape_pct += 100.0 * fabs(pred - set.rows[i].measured_s) / set.rows[i].measured_s;
    }
    if (set.n > 0)
        v->mape_pct /= (double)set.n;
    sim_meas_pred_free(&mp);
    sim_cache_free(cache);
    sim_meas_set_free(&set);
    return st;
}

int cli_bench_validate(const char *file_arg)
{
    char path[4096];
    const char *file = file_arg;
    if (!file) {
        snprintf(path, sizeof(path), "%s/../shared/data/measurements/argonne-vllm-offline.jsonl",
                 cli_data_dir());
        struct stat sb;
        if (stat(path, &sb) != 0) {
            cli_error("bench: %s: not found (../shared/data is absent); give --measurements FILE",
                      path);
            return CLI_BAD_INPUT;
        }
        file = path;
    }
    double wall[REPS], cpu[REPS];
    bench_val v = {0};
    for (int i = 0; i < REPS; i++) {
        struct sim_err err;
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        sim_status st = validate_once(file, &v, &err);
        cpu[i] = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
        wall[i] = clock_s(CLOCK_MONOTONIC) - w0;
        if (st != SIM_OK) {
            cli_error("%s", err.msg);
            return st == SIM_ENOMEM ? CLI_NUMERIC : CLI_BAD_INPUT;
        }
    }
    qsort(wall, REPS, sizeof(wall[0]), cmp_double);
    qsort(cpu, REPS, sizeof(cpu[0]), cmp_double);
    printf("llmstep bench --validate: %s\n", file);
    printf("  rows                     %zu (uncalibrated MAPE %.2f%%)\n", v.rows, v.mape_pct);
    printf("  engine steps simulated   %.0f\n", v.steps);
    printf("  time per validation      %.4f s CPU, %.4f s wall (medians of %d; load, "
           "predict, errors)\n",
           cpu[REPS / 2], wall[REPS / 2], REPS);
    printf("  rows per second          %.0f\n", (double)v.rows / cpu[REPS / 2]);
    return CLI_OK;
}
