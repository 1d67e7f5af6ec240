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
    double alpha;
    double beta_s;
    double alpha_stderr;  /* NaN when absent */
    double beta_stderr_s; /* NaN when absent */
    long long n_rows;     /* -1 when absent */
} sim_calib;

sim_status sim_calib_load(const char *path, sim_calib *c /* OUT */, struct sim_err *err /* OUT */);

#endif
