/* calib_fit.c - bounded weighted least-squares fit of alpha and beta_s (see calib_fit.h). */
#include "calib_fit.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>

#include "err.h"
#include "ops.h"

/*
 * Relative singular-value cut-off for the rank test: GSL scales the weighted
 * design's two columns to unit length and drops a singular value s_i when
 * s_i <= tol x s_0. With unit columns s_1/s_0 is about half the angle between
 * them, so this flags columns within about 2e-10 rad of parallel; there the
 * condition number exceeds 1e10 and the two parameters are not separately
 * determined by any real measurement. Exactly parallel columns (identical rows,
 * a constant roofline time per step) give s_1/s_0 near 1e-16.
 */
#define SIM_FIT_RANK_RTOL 1e-10

#if defined(__GNUC__)
#define SIM_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define SIM_PRINTF(fmt_idx, arg_idx)
#endif

static void set_err(struct sim_err *err, const char *fmt, ...) SIM_PRINTF(2, 3);

/* Formats a message into err (if not NULL), truncating to its buffer. */
static void set_err(struct sim_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(err->msg, sizeof(err->msg), "", 0, fmt, ap);
    va_end(ap);
}

void sim_fit_opts_default(sim_fit_opts *o)
{
    /* Wide on purpose; see calib_fit.h. */
    o->weight = SIM_FIT_RELATIVE;
    o->alpha_min = 0.1;
    o->alpha_max = 10.0;
    o->beta_min_s = 0.0;
    o->beta_max_s = 1.0;
}

static sim_status check_opts(const sim_fit_opts *o, struct sim_err *err)
{
    if (o->weight != SIM_FIT_RELATIVE && o->weight != SIM_FIT_ABSOLUTE) {
        set_err(err, "opts.weight: unknown weighting (expected relative or absolute, got %d)",
                (int)o->weight);
        return SIM_EINVAL;
    }
    if (!isfinite(o->alpha_min) || !isfinite(o->alpha_max) || !(o->alpha_min <= o->alpha_max)) {
        set_err(err,
                "opts.alpha_min/alpha_max: invalid bounds (expected finite min <= max, got "
                "[%.17g, %.17g])",
                o->alpha_min, o->alpha_max);
        return SIM_EINVAL;
    }
    if (!isfinite(o->beta_min_s) || !isfinite(o->beta_max_s) || !(o->beta_min_s <= o->beta_max_s)) {
        set_err(err,
                "opts.beta_min_s/beta_max_s: invalid bounds (expected finite min <= max, got "
                "[%.17g, %.17g])",
                o->beta_min_s, o->beta_max_s);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

static double row_weight(const sim_fit_row *r, sim_fit_weight weight)
{
    return weight == SIM_FIT_RELATIVE ? 1.0 / (r->measured_s * r->measured_s) : 1.0;
}

static sim_status check_rows(const sim_fit_row *rows, size_t n, sim_fit_weight weight,
                             struct sim_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const sim_fit_row *r = &rows[i];
        if (!isfinite(r->measured_s) || !(r->measured_s > 0.0)) {
            set_err(err,
                    "rows[%zu].measured_s: not a positive time (expected finite > 0, got %.17g)", i,
                    r->measured_s);
            return SIM_EINVAL;
        }
        if (!isfinite(r->roofline_s) || !(r->roofline_s >= 0.0)) {
            set_err(err,
                    "rows[%zu].roofline_s: not a non-negative time (expected finite >= 0, got "
                    "%.17g)",
                    i, r->roofline_s);
            return SIM_EINVAL;
        }
        if (!isfinite(r->offset_s) || !(r->offset_s >= 0.0)) {
            set_err(err,
                    "rows[%zu].offset_s: not a non-negative time (expected finite >= 0, got %.17g)",
                    i, r->offset_s);
            return SIM_EINVAL;
        }
        if (!isfinite(r->n_steps) || !(r->n_steps >= 0.0)) {
            set_err(err,
                    "rows[%zu].n_steps: not a non-negative count (expected finite >= 0, got "
                    "%.17g)",
                    i, r->n_steps);
            return SIM_EINVAL;
        }
        /* 1/measured_s^2 overflows below about 1e-154 s. */
        if (!isfinite(row_weight(r, weight))) {
            set_err(err,
                    "rows[%zu].measured_s: too small for relative weighting (expected > 1e-150, "
                    "got %.17g)",
                    i, r->measured_s);
            return SIM_EINVAL;
        }
    }
    return SIM_OK;
}

/* The objective: sum w_i (alpha x_i + beta t_i - y_i)^2. */
static double objective(const sim_fit_row *rows, size_t n, sim_fit_weight weight, double alpha,
                        double beta_s)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double r = sim_calibrated_s(alpha, rows[i].roofline_s, beta_s, rows[i].n_steps) +
                         rows[i].offset_s - rows[i].measured_s;
        sum += row_weight(&rows[i], weight) * r * r;
    }
    return sum;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/*
 * 1-D weighted least squares along an edge of the box: with the other
 * parameter fixed at `fixed`, the free one minimizes
 *   sum w_i (free x u_i - (y_i - fixed x v_i))^2
 * at free = sum w u (y - fixed v) / sum w u^2, clamped to [lo, hi]; u is the
 * free parameter's column (roofline_s for alpha, n_steps for beta_s) and v the
 * fixed one's. Stores sum w u^2 in *suu (> 0: the rank test rules out a zero
 * column). Returns the clamped optimum.
 */
static double edge_optimum(const sim_fit_row *rows, size_t n, sim_fit_weight weight,
                           int free_is_alpha, double fixed, double lo, double hi, double *suu)
{
    double s_uu = 0.0, s_ur = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double u = free_is_alpha ? rows[i].roofline_s : rows[i].n_steps;
        const double v = free_is_alpha ? rows[i].n_steps : rows[i].roofline_s;
        const double w = row_weight(&rows[i], weight);
        s_uu += w * u * u;
        s_ur += w * u * (rows[i].measured_s - rows[i].offset_s - fixed * v);
    }
    assert(s_uu > 0.0);
    *suu = s_uu;
    return clamp(s_ur / s_uu, lo, hi);
}

/*
 * Constrained optimum when the unconstrained one is outside the box: the best
 * of the four edge optima (a convex quadratic attains its minimum over a box on
 * the boundary when its free minimum is outside). Fills alpha, beta_s, chisq,
 * the bound flags and the standard errors documented in calib_fit.h.
 */
static void fit_on_boundary(const sim_fit_row *rows, size_t n, const sim_fit_opts *o,
                            sim_fit_result *out)
{
    struct {
        double alpha, beta_s;
    } cand[4];
    double s_tt = 0.0, s_xx = 0.0;
    cand[0].alpha = o->alpha_min;
    cand[0].beta_s =
        edge_optimum(rows, n, o->weight, 0, o->alpha_min, o->beta_min_s, o->beta_max_s, &s_tt);
    cand[1].alpha = o->alpha_max;
    cand[1].beta_s =
        edge_optimum(rows, n, o->weight, 0, o->alpha_max, o->beta_min_s, o->beta_max_s, &s_tt);
    cand[2].beta_s = o->beta_min_s;
    cand[2].alpha =
        edge_optimum(rows, n, o->weight, 1, o->beta_min_s, o->alpha_min, o->alpha_max, &s_xx);
    cand[3].beta_s = o->beta_max_s;
    cand[3].alpha =
        edge_optimum(rows, n, o->weight, 1, o->beta_max_s, o->alpha_min, o->alpha_max, &s_xx);

    size_t best = 0;
    double best_chisq = objective(rows, n, o->weight, cand[0].alpha, cand[0].beta_s);
    for (size_t k = 1; k < 4; k++) {
        const double c = objective(rows, n, o->weight, cand[k].alpha, cand[k].beta_s);
        if (c < best_chisq) {
            best_chisq = c;
            best = k;
        }
    }
    out->alpha = cand[best].alpha;
    out->beta_s = cand[best].beta_s;
    out->chisq = best_chisq;
    out->alpha_at_bound = out->alpha == o->alpha_min || out->alpha == o->alpha_max;
    out->beta_at_bound = out->beta_s == o->beta_min_s || out->beta_s == o->beta_max_s;

    /* One parameter free: its variance from the 1-D fit, s^2 / sum w u^2 with
     * s^2 = chisq / (n - 1); a parameter on a bound is fixed, variance 0. */
    const double s2 = best_chisq / (double)(n - 1);
    out->cov_alpha_alpha = out->alpha_at_bound ? 0.0 : s2 / s_xx;
    out->cov_beta_beta = out->beta_at_bound ? 0.0 : s2 / s_tt;
    out->cov_alpha_beta = 0.0;
    out->alpha_stderr = sqrt(out->cov_alpha_alpha);
    out->beta_stderr_s = sqrt(out->cov_beta_beta);
}

static sim_status fit_alpha_beta(const sim_fit_row *rows, size_t n, const sim_fit_opts *o,
                                 sim_fit_result *out, struct sim_err *err)
{
    sim_status st = SIM_OK;
    gsl_matrix *X = NULL, *cov = NULL;
    gsl_vector *y = NULL, *w = NULL, *c = NULL;
    gsl_multifit_linear_workspace *work = NULL;
    double *buf = NULL;
    sim_fit_opts defaults;

    assert(out);
    *out = (sim_fit_result){0};
    if (!o) {
        sim_fit_opts_default(&defaults);
        o = &defaults;
    }

    st = check_opts(o, err);
    if (st != SIM_OK)
        goto cleanup;
    if (n < 2) {
        set_err(err, "too few rows to fit alpha and beta_s (expected >= 2, got %zu)", n);
        st = SIM_EINVAL;
        goto cleanup;
    }
    if (!rows) {
        set_err(err, "rows: NULL array of %zu rows (expected a row array)", n);
        st = SIM_EINVAL;
        goto cleanup;
    }
    st = check_rows(rows, n, o->weight, err);
    if (st != SIM_OK)
        goto cleanup;

    if (n > SIZE_MAX / (3 * sizeof(double))) {
        set_err(err, "too many rows to fit (got %zu)", n);
        st = SIM_ENOMEM;
        goto cleanup;
    }
    X = gsl_matrix_alloc(n, 2);
    cov = gsl_matrix_alloc(2, 2);
    y = gsl_vector_alloc(n);
    w = gsl_vector_alloc(n);
    c = gsl_vector_alloc(2);
    work = gsl_multifit_linear_alloc(n, 2);
    buf = malloc(3 * n * sizeof(*buf));
    if (!X || !cov || !y || !w || !c || !work || !buf) {
        set_err(err, "out of memory allocating a fit of %zu rows", n);
        st = SIM_ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, rows[i].roofline_s);
        gsl_matrix_set(X, i, 1, rows[i].n_steps);
        gsl_vector_set(y, i, rows[i].measured_s - rows[i].offset_s);
        gsl_vector_set(w, i, row_weight(&rows[i], o->weight));
    }

    /* gsl_multifit_wlinear with an explicit truncation tolerance, so that the
     * rank of the design is reported instead of silently truncated. */
    size_t rank = 0;
    double chisq = 0.0;
    int gst = gsl_multifit_wlinear_tsvd(X, w, y, SIM_FIT_RANK_RTOL, c, cov, &chisq, &rank, work);
    if (gst != GSL_SUCCESS) {
        set_err(err, "gsl_multifit_wlinear_tsvd: %s", gsl_strerror(gst));
        st = SIM_EFIT;
        goto cleanup;
    }
    if (rank < 2) {
        set_err(err,
                "rows do not determine alpha and beta: the weighted design [roofline_s, n_steps] "
                "of %zu rows has rank %zu (expected 2; identical rows, roofline_s proportional to "
                "n_steps in every row, or a column of zeros)",
                n, rank);
        st = SIM_EFIT;
        goto cleanup;
    }
    const double alpha = gsl_vector_get(c, 0), beta_s = gsl_vector_get(c, 1);
    if (!isfinite(alpha) || !isfinite(beta_s) || !isfinite(chisq)) {
        set_err(err, "least-squares solution is not finite (alpha %.17g, beta_s %.17g)", alpha,
                beta_s);
        st = SIM_EFIT;
        goto cleanup;
    }

    out->n_rows = n;
    if (alpha >= o->alpha_min && alpha <= o->alpha_max && beta_s >= o->beta_min_s &&
        beta_s <= o->beta_max_s) {
        out->alpha = alpha;
        out->beta_s = beta_s;
        out->chisq = chisq;
        /* GSL returns the unscaled (X^T W X)^-1; scale by the residual variance
         * chisq / (n - 2), which needs at least one degree of freedom. */
        const double s2 = n > 2 ? chisq / (double)(n - 2) : (double)NAN;
        out->cov_alpha_alpha = s2 * gsl_matrix_get(cov, 0, 0);
        out->cov_alpha_beta = s2 * gsl_matrix_get(cov, 0, 1);
        out->cov_beta_beta = s2 * gsl_matrix_get(cov, 1, 1);
        out->alpha_stderr = sqrt(out->cov_alpha_alpha);
        out->beta_stderr_s = sqrt(out->cov_beta_beta);
    } else {
        fit_on_boundary(rows, n, o, out);
    }

    double *pred = buf, *meas = buf + n, *scratch = buf + 2 * n;
    for (size_t i = 0; i < n; i++) {
        pred[i] = sim_calibrated_s(out->alpha, rows[i].roofline_s, out->beta_s, rows[i].n_steps) +
                  rows[i].offset_s;
        meas[i] = rows[i].measured_s;
    }
    if (sim_metrics_compute(pred, meas, n, scratch, &out->fit) != SIM_OK) {
        set_err(err, "fitted predictions are not finite (alpha %.17g, beta_s %.17g)", out->alpha,
                out->beta_s);
        st = SIM_EFIT;
        goto cleanup;
    }

cleanup:
    if (st != SIM_OK)
        *out = (sim_fit_result){0};
    free(buf);
    gsl_multifit_linear_free(work);
    gsl_vector_free(c);
    gsl_vector_free(w);
    gsl_vector_free(y);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    return st;
}

/* GSL keeps one error handler per process, whose default aborts: it is off while this fit runs
 * (every GSL status is checked) and the caller's is restored after. */
sim_status sim_fit_alpha_beta(const sim_fit_row *rows, size_t n, const sim_fit_opts *o,
                              sim_fit_result *out, struct sim_err *err)
{
    gsl_error_handler_t *prev = gsl_set_error_handler_off();
    sim_status st = fit_alpha_beta(rows, n, o, out, err);
    gsl_set_error_handler(prev);
    return st;
}
