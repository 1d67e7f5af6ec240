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
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cache.h"
#include "err.h"
#include "calib_fit.h"
#include "meas_pred.h"
#include "sweep_cli.h"

#define REPS 15

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
        sim_errf(err, "bench: out of memory");
        st = SIM_ENOMEM;
    }
    sim_meas_opts o = {
        .engine = SIM_MEAS_DEFAULT_ENGINE, .mode = SIM_ROOFLINE_OP, .gemm = SIM_GEMM_FLAT};
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

typedef struct validate_job {
    const char *file;
    bench_val v;
    struct sim_err err;
} validate_job;

static int validate_job_run(void *ctx)
{
    validate_job *j = ctx;
    sim_status st = validate_once(j->file, &j->v, &j->err);
    if (st == SIM_OK)
        return CLI_OK;
    cli_error("%s", j->err.msg);
    return cli_exit_of(st);
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
    validate_job job = {.file = file};
    cli_bench_times bt;
    int rc = cli_bench_repeat(validate_job_run, &job, REPS, &bt);
    if (rc != CLI_OK)
        return rc;
    const bench_val v = job.v;
    printf("llmstep bench --validate: %s\n", file);
    printf("  rows                     %zu (uncalibrated MAPE %.2f%%)\n", v.rows, v.mape_pct);
    printf("  engine steps simulated   %.0f\n", v.steps);
    printf("  time per validation      %.4f s CPU, %.4f s wall (medians of %d; load, "
           "predict, errors)\n",
           bt.cpu_s, bt.wall_s, REPS);
    printf("  rows per second          %.0f\n", (double)v.rows / bt.cpu_s);
    /* The process's peak resident memory (Linux reports kilobytes): rows are kept as
     * summaries and the file is read a line at a time (docs/limits.md). */
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        printf("  peak resident memory     %.1f MB (the whole process)\n",
               (double)ru.ru_maxrss * 1024.0 / 1e6);
    return CLI_OK;
}
