/*
 * calib_fig.h - bounded, robust, regularized nonlinear least squares of hardware-profile
 * figures together with alpha and beta_s (`llmstep calibrate --fit`).
 *
 * Each row i is predicted as alpha x R_i(f) + beta_s x N_i(f) + H_i(f), where f are the
 * figures being fitted and R, N, H the roofline time, the number of steps and the host time
 * that a callback re-simulates for any f (alpha and beta_s enter linearly, so their Jacobian
 * columns are R and N, exact). The fit minimizes (docs/calibration.md, "Fitting profile
 * figures"):
 *   sum_i rho(r_i / s) s^2  +  1/2 sum_k (sigma_row (f_k - prior_k) / prior_sd_k)^2
 * with r_i = (pred_i - measured_i) / measured_i the relative residual (as the alpha/beta fit
 * weighs rows), rho the loss (l2: z^2/2; huber: z^2/2 up to |z| = 1.345, then linear;
 * cauchy: 2.385^2/2 log(1 + (z/2.385)^2)), s the robust scale 1.4826 x median |r_i| of the
 * l2 fit (or given), and a Gaussian prior on each figure whose width prior_sd_k the caller
 * sets from the figure's status; sigma_row (row_sd_frac) converts the prior into units of
 * a row's relative residual. The robust loss is minimized by iteratively reweighted least
 * squares (weights psi(z)/z, Huber 1964; Holland and Welsch 1977) around GSL's trust-region
 * Levenberg-Marquardt (gsl_multifit_nlinear). Bounds by a smooth transform: every parameter
 * x in (lo, hi) is x = lo + (hi - lo) / (1 + exp(-u)) and GSL works on u, so no trial leaves
 * the box and none is clamped. Figure columns of the Jacobian are forward differences with a
 * step of 1e-4 x max(|f_k|, scale_k).
 *
 * Standard errors and correlations come from the rows alone (not the priors), at the
 * solution: cov = s2 (J^T W J)^-1, s2 = sum w r^2 / (n - p), W the final robust weights,
 * alpha and beta_s left out when they sit on a bound. A figure is undetermined when it is
 * on its bound (within 1e-3 x scale), its relative standard error exceeds max_rel_stderr,
 * or |correlation| with alpha, beta_s or another figure exceeds max_abs_corr; and a figure
 * that moved more than max_prior_z prior widths from its prior is held too (a measured
 * figure the rows would move that far is storing an error of the model's structure, not
 * measuring the GPU: issue 13's GEMM efficiency 0.08 against a measured 0.51). The worst one
 * (on a bound first, else the largest relative standard error) is then held at its prior
 * and the fit repeated, from where it ended, until every remaining figure is determined.
 * Only this module, calib_fit.c and calib_nl.c include GSL.
 */
#ifndef SIM_CALIB_FIG_H
#define SIM_CALIB_FIG_H

#include <stddef.h>

#include "calib_fit.h"
#include "metrics.h"
#include "status.h"

#define SIM_FIG_MAX 12 /* figures one fit takes at most */

typedef enum sim_fit_loss {
    SIM_LOSS_HUBER = 0,
    SIM_LOSS_CAUCHY = 1,
    SIM_LOSS_L2 = 2,
    SIM_LOSS_COUNT
} sim_fit_loss;

/* "huber", "cauchy", "l2". */
const char *sim_fit_loss_name(sim_fit_loss l);

/* One figure to fit. */
typedef struct sim_fig_param {
    double prior;    /* prior value and start, in the figure's unit, within [lo, hi] */
    double prior_sd; /* width of the Gaussian prior, same unit, > 0 */
    double lo, hi;   /* physical bounds, lo < hi */
    double scale;    /* typical magnitude, > 0: start offset from a bound, bound test */
    int held_absent; /* 1: a held figure takes 0 (the profile lacks it: no such term), not the
                        prior, in the predictions and the result */
} sim_fig_param;

/*
 * Predicts the n rows at figure values fig[nf]: roofline_s[i], n_steps[i], host_s[i].
 * Returns 0, non-zero on failure.
 */
typedef int (*sim_fig_pred_fn)(void *ctx, const double *fig, double *roofline_s, double *n_steps,
                               double *host_s);

typedef struct sim_fig_opts {
    sim_fit_loss loss;
    double row_sd_frac;     /* sigma_row above, > 0 (dimensionless) */
    double loss_scale_frac; /* > 0: the robust scale s; 0: from the l2 fit */
    double max_rel_stderr;  /* undetermined above this relative standard error */
    double max_abs_corr;    /* undetermined above this |correlation| */
    double max_prior_z;     /* held above this many prior widths from the prior */
    double alpha0, beta0_s; /* start */
    sim_fit_opts ab;        /* bounds of alpha and beta_s (weighting must be relative) */
} sim_fig_opts;

/* huber, sigma_row 0.1, scale from the data, 0.25, 0.95, 3, start (1, 0),
 * sim_fit_opts_default. */
void sim_fig_opts_default(sim_fig_opts *o);

/* Why a figure was not fitted. */
typedef enum sim_fig_held {
    SIM_FIG_FITTED = 0,
    SIM_FIG_HELD_BOUND = 1,  /* the fit ran to its bound */
    SIM_FIG_HELD_STDERR = 2, /* relative standard error above max_rel_stderr */
    SIM_FIG_HELD_CORR = 3,   /* |correlation| above max_abs_corr */
    SIM_FIG_HELD_PRIOR = 4,  /* more than max_prior_z prior widths from the prior */
    SIM_FIG_HELD_HOLDOUT = 5 /* the fitted set lost to alpha/beta only held out (meas_fig.h) */
} sim_fig_held;

typedef struct sim_fig_result {
    double alpha, beta_s, alpha_stderr, beta_stderr_s; /* 1, s, 1, s */
    int alpha_at_bound, beta_at_bound;
    size_t nf;
    double value[SIM_FIG_MAX];        /* fitted, or the prior when held */
    double value_stderr[SIM_FIG_MAX]; /* NaN when held (meas_fig.c: the fit's, when dropped) */
    double reached[SIM_FIG_MAX];      /* the value the fit reached before a figure was held */
    double rel_stderr[SIM_FIG_MAX];   /* at that fit */
    double corr_max[SIM_FIG_MAX];     /* largest |correlation| at that fit */
    int corr_with[SIM_FIG_MAX];       /* with: -2 alpha, -1 beta_s, else a figure index */
    sim_fig_held held[SIM_FIG_MAX];
    double loss_scale_frac; /* s */
    double cost;            /* sum_i rho(r_i / s) s^2 over the rows at the solution */
    size_t n_rows;
    sim_metrics fit; /* APE and R^2 of the fitted predictions */
} sim_fig_result;

/*
 * Fits alpha, beta_s and the nf figures par[] to n rows measured_s[] predicted by fn (see
 * above); fills *out. Returns SIM_EINVAL for n < 3, nf > SIM_FIG_MAX, a bad measurement or
 * parameter; SIM_EFIT when the predictor fails or GSL fails; SIM_ENOMEM.
 */
sim_status sim_fit_figures(size_t n, const double *measured_s, size_t nf, const sim_fig_param *par,
                           sim_fig_pred_fn fn, void *ctx, const sim_fig_opts *o,
                           sim_fig_result *out /* OUT */, struct sim_err *err);

#endif
