/*
 * fit_rel.h - the two small fits behind `llmstep hw import`: a straight line
 * t = a + b x fitted by least squares on relative error, and a median.
 *
 * Both the all-reduce model t = latency + 2(n-1)/n x bytes / bus_bw and the
 * weight-streaming model t = gemm_fixed_s + bytes / (copy_bw x f) are lines in
 * x with an intercept a (a fixed time) and a slope b (an inverse bandwidth).
 * Benchmarks sweep sizes over several decades, so an absolute least-squares fit
 * would be decided by the largest sizes alone; minimizing
 *     S(a, b) = sum_i ((a + b x_i - t_i) / t_i)^2
 * (weighted least squares with weights 1 / t_i^2) gives every size the same
 * say, and the residual is the relative error that MAPE reports. The normal
 * equations of this 2-parameter problem are solved in closed form (GSL
 * fit/linear.c gsl_fit_wlinear solves the same system with centred sums).
 * Pure: no allocation, no I/O.
 */
#ifndef SIM_FIT_REL_H
#define SIM_FIT_REL_H

#include <stddef.h>

#include "status.h"

typedef struct sim_fit_line {
    double a;           /* intercept, units of t */
    double b;           /* slope, units of t / x */
    double mape_frac;   /* mean |a + b x_i - t_i| / t_i over the points */
    int through_origin; /* 1 when the free intercept came out negative and a = 0 was imposed */
} sim_fit_line;

/*
 * Fits t = a + b x over the n points (x[i], t[i]) by relative least squares.
 * Needs n >= 2, every t[i] > 0 and finite, every x[i] >= 0 and finite, and at
 * least two distinct x. A fixed time cannot be negative, so when the free fit
 * gives a < 0 the fit is redone through the origin (a = 0, b = sum(x/t) /
 * sum(x^2/t^2)) and through_origin is set. Returns SIM_EINVAL for bad input,
 * SIM_EFIT when the slope is not positive (time does not grow with size).
 */
sim_status sim_fit_rel_line(const double *x, const double *t, size_t n,
                            sim_fit_line *out /* OUT */);

/*
 * Median of v[0..n-1] (the mean of the two middle values when n is even).
 * Sorts v in place. Returns NaN when n is 0.
 */
double sim_median(double *v, size_t n);

#endif
