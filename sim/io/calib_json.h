/*
 * calib_json.h - reads the calibration file of ../shared/MEASUREMENTS.md:
 * {"schema": "llmstep-calibration/1", "hardware": id, "alpha": a, "beta_s": b, ...}.
 * Only alpha, beta_s and hardware change predictions; the other documented
 * fields (standard errors, bounds, fit metrics, training set) are checked for
 * type and kept out of the core.
 */
#ifndef SIM_CALIB_JSON_H
#define SIM_CALIB_JSON_H

#include "status.h"

#define SIM_CALIB_SCHEMA "llmstep-calibration/1"

typedef struct sim_calib {
    char hardware[128];
    char engine[64]; /* engine profile whose host time the fit took as known; "" or "none" */
    double alpha;
    double beta_s;
    double alpha_stderr;  /* NaN when absent */
    double beta_stderr_s; /* NaN when absent */
    long long n_rows;     /* -1 when absent */
} sim_calib;

sim_status sim_calib_load(const char *path, sim_calib *c /* OUT */, struct sim_err *err /* OUT */);

/* Everything a calibration file records (MEASUREMENTS.md, "Calibration file"). */
typedef struct sim_calib_out {
    const char *hardware;
    double alpha, beta_s, alpha_stderr, beta_stderr_s;
    double cov_alpha_beta;
    double alpha_min, alpha_max, beta_min_s, beta_max_s;
    int alpha_at_bound, beta_at_bound;
    long long n_rows;
    double mape_pct, median_ape_pct, max_ape_pct, r2;
    const char *const *files;
    int n_files;
    const char *const *select;
    int n_select;
    const char *const *exclude;
    int n_exclude;
    const char *engine;        /* engine profile id whose host time the fit took as known */
    const char *roofline_mode; /* "op" or "step" */
    const char *weighting;     /* "relative" or "absolute" */
    const char *command;       /* the command line that produced the file */
} sim_calib_out;

/*
 * Writes the calibration file atomically (temporary file, then rename). Non-finite
 * standard errors (two rows: no degrees of freedom) are written as null; any other
 * non-finite number is an error (SIM_ERANGE) and nothing is written.
 */
sim_status sim_calib_write(const char *path, const sim_calib_out *c, struct sim_err *err /* OUT */);

#endif
