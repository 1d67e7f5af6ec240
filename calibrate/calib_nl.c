/* calib_nl.c - nonlinear least-squares fit of alpha and beta_s (see calib_nl.h). */
#include "calib_nl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "err.h"

typedef struct nl_ctx {
    size_t n;
    const double *meas;
    sim_fit_pred_fn fn;
    void *user;
    const sim_fit_opts *o;
    int failed;
} nl_ctx;

static double clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Weighted residuals at (alpha, beta) clamped into the box. */
static int residuals(nl_ctx *c, double alpha, double beta, gsl_vector *f)
{
    alpha = clamp(alpha, c->o->alpha_min, c->o->alpha_max);
    beta = clamp(beta, c->o->beta_min_s, c->o->beta_max_s);
    for (size_t i = 0; i < c->n; i++) {
        double p;
        if (c->fn(c->user, i, alpha, beta, &p) != 0 || !isfinite(p)) {
            c->failed = 1;
            return GSL_EBADFUNC;
        }
        double w = c->o->weight == SIM_FIT_RELATIVE ? 1.0 / c->meas[i] : 1.0;
        gsl_vector_set(f, i, (p - c->meas[i]) * w);
    }
    return GSL_SUCCESS;
}

static int f_cb(const gsl_vector *x, void *params, gsl_vector *f)
{
    return residuals(params, gsl_vector_get(x, 0), gsl_vector_get(x, 1), f);
}

/* Central differences, with steps that cross the simulation's discrete events. */
static int df_cb(const gsl_vector *x, void *params, gsl_matrix *J)
{
    nl_ctx *c = params;
    const double a = gsl_vector_get(x, 0), b = gsl_vector_get(x, 1);
    const double h[2] = {1e-3 * fmax(fabs(a), 0.1), 1e-5 + 1e-3 * fabs(b)};
    gsl_vector *fp = gsl_vector_alloc(c->n), *fm = gsl_vector_alloc(c->n);
    int rc = fp && fm ? GSL_SUCCESS : GSL_ENOMEM;
    for (int k = 0; rc == GSL_SUCCESS && k < 2; k++) {
        rc = residuals(c, a + (k == 0 ? h[0] : 0.0), b + (k == 1 ? h[1] : 0.0), fp);
        if (rc == GSL_SUCCESS)
            rc = residuals(c, a - (k == 0 ? h[0] : 0.0), b - (k == 1 ? h[1] : 0.0), fm);
        for (size_t i = 0; rc == GSL_SUCCESS && i < c->n; i++)
            gsl_matrix_set(J, i, (size_t)k,
                           (gsl_vector_get(fp, i) - gsl_vector_get(fm, i)) / (2.0 * h[k]));
    }
    if (fp)
        gsl_vector_free(fp);
    if (fm)
        gsl_vector_free(fm);
    return rc;
}

static sim_status fit_alpha_beta_nl(size_t n, const double *meas, sim_fit_pred_fn fn, void *user,
                                    const sim_fit_opts *o, double alpha0, double beta0,
                                    sim_fit_result *out, struct sim_err *err)
{
    *out = (sim_fit_result){0};
    sim_fit_opts def;
    if (!o) {
        sim_fit_opts_default(&def);
        o = &def;
    }
    if (n < 2 || !meas || !fn || !(o->alpha_min <= o->alpha_max) ||
        !(o->beta_min_s <= o->beta_max_s)) {
        sim_errf(err, "nonlinear fit: needs at least 2 rows and valid bounds (got %zu rows)", n);
        return SIM_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(meas[i]) || !(meas[i] > 0.0)) {
            sim_errf(err, "row %zu: measured_s must be finite and > 0 (got %.17g)", i, meas[i]);
            return SIM_EINVAL;
        }
    nl_ctx c = {n, meas, fn, user, o, 0};
    gsl_multifit_nlinear_fdf fdf = {f_cb, df_cb, NULL, n, 2, &c, 0, 0, 0};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, 2);
    gsl_vector *x = gsl_vector_alloc(2);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    double *pred = malloc(n * sizeof(double)), *scratch = malloc(n * sizeof(double));
    sim_status st = SIM_OK;
    if (!w || !x || !cov || !pred || !scratch) {
        sim_errf(err, "nonlinear fit: out of memory");
        st = SIM_ENOMEM;
        goto cleanup;
    }
    gsl_vector_set(x, 0, clamp(alpha0, o->alpha_min, o->alpha_max));
    gsl_vector_set(x, 1, clamp(beta0, o->beta_min_s, o->beta_max_s));
    int info = 0;
    int rc = gsl_multifit_nlinear_init(x, &fdf, w);
    if (rc == GSL_SUCCESS)
        rc = gsl_multifit_nlinear_driver(100, 1e-8, 1e-8, 1e-10, NULL, NULL, &info, w);
    if (c.failed || (rc != GSL_SUCCESS && rc != GSL_EMAXITER && rc != GSL_ENOPROG)) {
        sim_errf(err, "nonlinear fit: %s",
                 c.failed ? "the prediction of a row failed or was not finite" : gsl_strerror(rc));
        st = SIM_EFIT;
        goto cleanup;
    }
    const gsl_vector *sol = gsl_multifit_nlinear_position(w);
    double a = gsl_vector_get(sol, 0), b = gsl_vector_get(sol, 1);
    out->alpha_at_bound = a <= o->alpha_min || a >= o->alpha_max;
    out->beta_at_bound = b <= o->beta_min_s || b >= o->beta_max_s;
    out->alpha = clamp(a, o->alpha_min, o->alpha_max);
    out->beta_s = clamp(b, o->beta_min_s, o->beta_max_s);
    const gsl_vector *f = gsl_multifit_nlinear_residual(w);
    double chisq;
    gsl_blas_ddot(f, f, &chisq);
    out->chisq = chisq;
    out->n_rows = n;
    const gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    if (n > 2 && gsl_multifit_nlinear_covar(J, 0.0, cov) == GSL_SUCCESS) {
        double s2 = chisq / (double)(n - 2);
        out->cov_alpha_alpha = gsl_matrix_get(cov, 0, 0) * s2;
        out->cov_alpha_beta = gsl_matrix_get(cov, 0, 1) * s2;
        out->cov_beta_beta = gsl_matrix_get(cov, 1, 1) * s2;
        out->alpha_stderr = sqrt(out->cov_alpha_alpha);
        out->beta_stderr_s = sqrt(out->cov_beta_beta);
    } else {
        out->alpha_stderr = out->beta_stderr_s = (double)NAN;
        out->cov_alpha_alpha = out->cov_alpha_beta = out->cov_beta_beta = (double)NAN;
    }
    for (size_t i = 0; i < n; i++)
        if (fn(user, i, out->alpha, out->beta_s, &pred[i]) != 0) {
            sim_errf(err, "nonlinear fit: a row failed at the solution");
            st = SIM_EFIT;
            goto cleanup;
        }
    if (sim_metrics_compute(pred, meas, n, scratch, &out->fit) != SIM_OK) {
        sim_errf(err, "nonlinear fit: metrics not finite");
        st = SIM_EFIT;
    }
cleanup:
    if (w)
        gsl_multifit_nlinear_free(w);
    if (x)
        gsl_vector_free(x);
    if (cov)
        gsl_matrix_free(cov);
    free(pred);
    free(scratch);
    if (st != SIM_OK)
        *out = (sim_fit_result){0};
    return st;
}

/* GSL keeps one error handler per process, whose default aborts: it is off while this fit runs
 * (every GSL status is checked) and the caller's is restored after. */
sim_status sim_fit_alpha_beta_nl(size_t n, const double *meas, sim_fit_pred_fn fn, void *user,
                                 const sim_fit_opts *o, double alpha0, double beta0,
                                 sim_fit_result *out, struct sim_err *err)
{
    gsl_error_handler_t *prev = gsl_set_error_handler_off();
    sim_status st = fit_alpha_beta_nl(n, meas, fn, user, o, alpha0, beta0, out, err);
    gsl_set_error_handler(prev);
    return st;
}
