/*
 * metrics.h - error metrics of predicted against measured times.
 *
 * For n pairs (pred_i, meas_i), all in seconds, the absolute percentage error
 * of row i is
 *   APE_i = |pred_i - meas_i| / meas_i x 100
 * and the summary is its mean (MAPE), median and maximum, plus the coefficient
 * of determination on the seconds themselves:
 *   R^2 = 1 - SS_res / SS_tot,  SS_res = sum (meas_i - pred_i)^2,
 *                               SS_tot = sum (meas_i - mean(meas))^2.
 * These are the definitions of `llmstep validate` (MEASUREMENTS.md). R^2 is not
 * clipped: a prediction worse than the mean of the measurements gives R^2 < 0.
 * Pure: no I/O, no allocation, no globals.
 */
#ifndef SIM_METRICS_H
#define SIM_METRICS_H

#include <stddef.h>

#include "status.h"

typedef struct sim_metrics {
    double mape_pct; /* mean of APE_i, percent (10 means 10%) */
    double
        median_ape_pct; /* median of APE_i, percent; mean of the two middle values if n is even */
    double max_ape_pct; /* largest APE_i, percent */
    double r2;          /* 1 - SS_res/SS_tot, dimensionless; NaN when SS_tot == 0 */
    size_t n;           /* number of rows */
} sim_metrics;

/*
 * Computes the metrics of n predictions pred[] against measurements meas[]
 * (seconds, or any one unit shared by both arrays) into *out (OUT).
 * scratch is a caller-provided array of n doubles; its contents are
 * overwritten (it holds the sorted APEs for the median) and are not
 * meaningful afterwards. pred, meas and scratch must not be NULL.
 *
 * Returns SIM_OK, or SIM_EINVAL (leaving *out unchanged) when n < 1, when any
 * meas_i is not finite or not > 0, or when any pred_i is not finite.
 * When every meas_i is equal, SS_tot == 0 and R^2 is undefined: out->r2 is
 * then NaN (even for a perfect prediction); the APE metrics are still valid.
 */
sim_status sim_metrics_compute(const double *pred, const double *meas, size_t n, double *scratch,
                               sim_metrics *out);

#endif
