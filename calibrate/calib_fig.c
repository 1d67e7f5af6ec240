/* calib_fig.c - fit of profile figures with alpha and beta_s (see calib_fig.h). */
#include "calib_fig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "err.h"

#define NP_MAX (SIM_FIG_MAX + 2)
/* Tuning constants for 95% efficiency under Gaussian noise (Holland and Welsch 1977). */
#define HUBER_C  1.345
#define CAUCHY_C 2.385
/* 1/Phi^-1(3/4): the median absolute deviation of a Gaussian is 0.6745 sigma. */
#define MAD_TO_SD 1.4826
#define IRLS_MAX  5

const char *sim_fit_loss_name(sim_fit_loss l)
{
    static const char *const names[SIM_LOSS_COUNT] = {"huber", "cauchy", "l2"};
    return (int)l >= 0 && l < SIM_LOSS_COUNT ? names[l] : "?";
}

void sim_fig_opts_default(sim_fig_opts *o)
{
    o->loss = SIM_LOSS_HUBER;
    o->row_sd_frac = 0.1;
    o->loss_scale_frac = 0.0;
    o->max_rel_stderr = 0.25;
    o->max_abs_corr = 0.95;
    o->max_prior_z = 3.0;
    o->alpha0 = 1.0;
    o->beta0_s = 0.0;
    sim_fit_opts_default(&o->ab);
}

typedef struct fctx {
    size_t n, nf, na; /* rows, figures, active figures */
    const double *meas;
    const sim_fig_param *par;
    sim_fig_pred_fn fn;
    void *user;
    const sim_fig_opts *o;
    size_t act[SIM_FIG_MAX]; /* active figure indices */
    double fig[SIM_FIG_MAX]; /* every figure (held ones at their prior) */
    double lo[NP_MAX], hi[NP_MAX], scale[NP_MAX];
    double *R, *N, *H;    /* at cfig */
    double *R2, *N2, *H2; /* scratch */
    double *w;            /* robust weights */
    double cfig[SIM_FIG_MAX];
    int have_cache, failed;
} fctx;

static double logistic(double u) { return 1.0 / (1.0 + exp(-u)); }

/* x in (lo, hi): kept 1e-9 of the range inside, so that no trial reaches a bound where a
 * figure would be 0 (an efficiency of 0 is an infinite time). */
static double u_to_x(const fctx *c, size_t j, double u)
{
    const double r = c->hi[j] - c->lo[j], s = fmin(fmax(logistic(u), 1e-9), 1.0 - 1e-9);
    return c->lo[j] + r * s;
}

static double dx_du(const fctx *c, size_t j, double u)
{
    const double s = logistic(u);
    return (c->hi[j] - c->lo[j]) * s * (1.0 - s);
}

static double x_to_u(const fctx *c, size_t j, double x)
{
    const double r = c->hi[j] - c->lo[j];
    const double eps = 1e-9 * r;
    if (x < c->lo[j] + eps)
        x = c->lo[j] + eps;
    if (x > c->hi[j] - eps)
        x = c->hi[j] - eps;
    return log((x - c->lo[j]) / (c->hi[j] - x));
}

/* Fills fig from the parameter vector x (alpha, beta_s, active figures). */
static void set_fig(fctx *c, const double *x)
{
    for (size_t k = 0; k < c->na; k++)
        c->fig[c->act[k]] = x[2 + k];
}

/* R, N, H at c->fig (cached). */
static int eval_base(fctx *c)
{
    if (c->have_cache && memcmp(c->cfig, c->fig, c->nf * sizeof(double)) == 0)
        return 0;
    if (c->fn(c->user, c->fig, c->R, c->N, c->H) != 0) {
        c->failed = 1;
        return -1;
    }
    for (size_t i = 0; i < c->n; i++)
        if (!isfinite(c->R[i]) || !isfinite(c->N[i]) || !isfinite(c->H[i])) {
            c->failed = 1;
            return -1;
        }
    memcpy(c->cfig, c->fig, c->nf * sizeof(double));
    c->have_cache = 1;
    return 0;
}

/* R, N, H at the figures of x (eval_base after set_fig). */
static int eval_at(fctx *c, const double *x)
{
    set_fig(c, x);
    return eval_base(c);
}

/* eval_at, failing the fit with its message when a row's prediction fails. */
static sim_status eval_or_fail(fctx *c, const double *x, struct sim_err *err)
{
    if (eval_at(c, x) == 0)
        return SIM_OK;
    sim_errf(err, "figure fit: a row's prediction failed");
    return SIM_EFIT;
}

static size_t np_of(const fctx *c) { return 2 + c->na; }

/* Parameter vector x from u. */
static void xs_of(const fctx *c, const gsl_vector *u, double *x)
{
    for (size_t j = 0; j < np_of(c); j++)
        x[j] = u_to_x(c, j, gsl_vector_get(u, j));
}

static double rel_resid(const fctx *c, const double *x, size_t i)
{
    return (x[0] * c->R[i] + x[1] * c->N[i] + c->H[i] - c->meas[i]) / c->meas[i];
}

/* sigma_row / prior_sd of active figure k. */
static double prior_w(const fctx *c, size_t k)
{
    return c->o->row_sd_frac / c->par[c->act[k]].prior_sd;
}

static int f_cb(const gsl_vector *u, void *params, gsl_vector *f)
{
    fctx *c = params;
    double x[NP_MAX] = {0};
    xs_of(c, u, x);
    if (eval_at(c, x) != 0)
        return GSL_EBADFUNC;
    for (size_t i = 0; i < c->n; i++)
        gsl_vector_set(f, i, sqrt(c->w[i]) * rel_resid(c, x, i));
    for (size_t k = 0; k < c->na; k++)
        gsl_vector_set(f, c->n + k, prior_w(c, k) * (x[2 + k] - c->par[c->act[k]].prior));
    return GSL_SUCCESS;
}

/* Forward-difference step of figure k at value v, kept inside the bounds. */
static double fig_step(const fctx *c, size_t j, double v)
{
    double h = 1e-4 * fmax(fabs(v), c->scale[j]);
    if (v + h >= c->hi[j])
        h = -h;
    return h;
}

/*
 * Jacobian of the weighted relative residuals with respect to x (not u): rows 0..n-1 only.
 * Columns: alpha, beta_s (exact), active figures (forward differences).
 */
static int jac_x(fctx *c, const double *x, gsl_matrix *J)
{
    if (eval_at(c, x) != 0)
        return GSL_EBADFUNC;
    for (size_t i = 0; i < c->n; i++) {
        const double sw = sqrt(c->w[i]) / c->meas[i];
        gsl_matrix_set(J, i, 0, sw * c->R[i]);
        gsl_matrix_set(J, i, 1, sw * c->N[i]);
    }
    for (size_t k = 0; k < c->na; k++) {
        const size_t fk = c->act[k];
        const double v = c->fig[fk], h = fig_step(c, 2 + k, v);
        c->fig[fk] = v + h;
        const int rc = c->fn(c->user, c->fig, c->R2, c->N2, c->H2);
        c->fig[fk] = v;
        if (rc != 0) {
            c->failed = 1;
            return GSL_EBADFUNC;
        }
        for (size_t i = 0; i < c->n; i++) {
            const double d =
                x[0] * (c->R2[i] - c->R[i]) + x[1] * (c->N2[i] - c->N[i]) + (c->H2[i] - c->H[i]);
            if (!isfinite(d)) {
                c->failed = 1;
                return GSL_EBADFUNC;
            }
            gsl_matrix_set(J, i, 2 + k, sqrt(c->w[i]) * d / (c->meas[i] * h));
        }
    }
    return GSL_SUCCESS;
}

static int df_cb(const gsl_vector *u, void *params, gsl_matrix *J)
{
    fctx *c = params;
    double x[NP_MAX] = {0};
    xs_of(c, u, x);
    gsl_matrix_view rows = gsl_matrix_submatrix(J, 0, 0, c->n, np_of(c));
    int rc = jac_x(c, x, &rows.matrix);
    if (rc != GSL_SUCCESS)
        return rc;
    for (size_t j = 0; j < np_of(c); j++) {
        const double d = dx_du(c, j, gsl_vector_get(u, j));
        for (size_t i = 0; i < c->n; i++)
            gsl_matrix_set(J, i, j, gsl_matrix_get(J, i, j) * d);
        for (size_t k = 0; k < c->na; k++)
            gsl_matrix_set(J, c->n + k, j, j == 2 + k ? prior_w(c, k) * d : 0.0);
    }
    return GSL_SUCCESS;
}

static double rho(sim_fit_loss l, double z)
{
    const double a = fabs(z);
    switch (l) {
    case SIM_LOSS_HUBER:
        return a <= HUBER_C ? 0.5 * z * z : HUBER_C * a - 0.5 * HUBER_C * HUBER_C;
    case SIM_LOSS_CAUCHY:
        return 0.5 * CAUCHY_C * CAUCHY_C * log1p((z / CAUCHY_C) * (z / CAUCHY_C));
    default:
        return 0.5 * z * z;
    }
}

/* IRLS weight psi(z)/z. */
static double irls_w(sim_fit_loss l, double z)
{
    const double a = fabs(z);
    switch (l) {
    case SIM_LOSS_HUBER:
        return a <= HUBER_C ? 1.0 : HUBER_C / a;
    case SIM_LOSS_CAUCHY:
        return 1.0 / (1.0 + (z / CAUCHY_C) * (z / CAUCHY_C));
    default:
        return 1.0;
    }
}

static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One weighted LM solve from x (in/out). */
static sim_status solve(fctx *c, double *x, struct sim_err *err)
{
    const size_t np = np_of(c), nr = c->n + c->na;
    gsl_multifit_nlinear_fdf fdf = {f_cb, df_cb, NULL, nr, np, c, 0, 0, 0};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *ws =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, nr, np);
    gsl_vector *u = gsl_vector_alloc(np);
    sim_status st = SIM_OK;
    if (!ws || !u) {
        sim_errf(err, "figure fit: out of memory");
        st = SIM_ENOMEM;
        goto done;
    }
    for (size_t j = 0; j < np; j++)
        gsl_vector_set(u, j, x_to_u(c, j, x[j]));
    int info = 0;
    int rc = gsl_multifit_nlinear_init(u, &fdf, ws);
    if (rc == GSL_SUCCESS)
        rc = gsl_multifit_nlinear_driver(30, 1e-4, 1e-6, 1e-8, NULL, NULL, &info, ws);
    if (c->failed || (rc != GSL_SUCCESS && rc != GSL_EMAXITER && rc != GSL_ENOPROG)) {
        sim_errf(err, "figure fit: %s",
                 c->failed ? "the prediction of a row failed or was not finite" : gsl_strerror(rc));
        st = SIM_EFIT;
        goto done;
    }
    xs_of(c, gsl_multifit_nlinear_position(ws), x);
done:
    if (ws)
        gsl_multifit_nlinear_free(ws);
    if (u)
        gsl_vector_free(u);
    return st;
}

/* The robust fit of the active parameters from x (in/out); *s the scale (in: 0 = estimate). */
static sim_status fit_robust(fctx *c, double *x, double *s, double *scratch, struct sim_err *err)
{
    sim_status st = SIM_OK;
    if (!(*s > 0.0) || c->o->loss == SIM_LOSS_L2) {
        /* The l2 fit: the answer for l2, and the residuals the robust scale comes from. */
        for (size_t i = 0; i < c->n; i++)
            c->w[i] = 1.0;
        st = solve(c, x, err);
        if (st != SIM_OK)
            return st;
    }
    st = eval_or_fail(c, x, err);
    if (st != SIM_OK)
        return st;
    if (!(*s > 0.0)) {
        for (size_t i = 0; i < c->n; i++)
            scratch[i] = fabs(rel_resid(c, x, i));
        qsort(scratch, c->n, sizeof(double), cmp_dbl);
        const double med =
            c->n % 2 ? scratch[c->n / 2] : 0.5 * (scratch[c->n / 2 - 1] + scratch[c->n / 2]);
        *s = fmax(MAD_TO_SD * med, 1e-4);
    }
    if (c->o->loss == SIM_LOSS_L2)
        return SIM_OK;
    for (int it = 0; it < IRLS_MAX; it++) {
        for (size_t i = 0; i < c->n; i++)
            c->w[i] = irls_w(c->o->loss, rel_resid(c, x, i) / *s);
        double prev[NP_MAX] = {0};
        memcpy(prev, x, sizeof(prev));
        st = solve(c, x, err);
        if (st != SIM_OK)
            return st;
        st = eval_or_fail(c, x, err);
        if (st != SIM_OK)
            return st;
        double change = 0.0;
        for (size_t j = 0; j < np_of(c); j++)
            change = fmax(change, fabs(x[j] - prev[j]) / fmax(fabs(prev[j]), c->scale[j]));
        /* 1% moves: well inside any standard error a determined figure may have (25%). */
        if (change < 1e-2)
            break;
    }
    return SIM_OK;
}

/* Covariance of the rows at x (scaled by D = max(|x|, scale)); free[j]: parameter j is in it. */
typedef struct cov_out {
    double rel_se[NP_MAX]; /* stderr / D */
    double corr[NP_MAX][NP_MAX];
    double se[NP_MAX];
} cov_out;

static sim_status covariance(fctx *c, const double *x, const int *free_p, cov_out *co,
                             struct sim_err *err)
{
    const size_t np = np_of(c);
    gsl_matrix *J = gsl_matrix_alloc(c->n, np), *M = gsl_matrix_calloc(np, np);
    sim_status st = SIM_OK;
    if (!J || !M) {
        sim_errf(err, "figure fit: out of memory");
        st = SIM_ENOMEM;
        goto done;
    }
    if (jac_x(c, x, J) != GSL_SUCCESS) {
        sim_errf(err, "figure fit: a row's prediction failed");
        st = SIM_EFIT;
        goto done;
    }
    double D[NP_MAX], chisq = 0.0;
    for (size_t j = 0; j < np; j++)
        D[j] = fmax(fabs(x[j]), c->scale[j]);
    for (size_t i = 0; i < c->n; i++) {
        const double r = rel_resid(c, x, i);
        chisq += c->w[i] * r * r;
    }
    size_t nfree = 0;
    for (size_t j = 0; j < np; j++)
        nfree += free_p[j] != 0;
    const double s2 = chisq / (double)(c->n > nfree ? c->n - nfree : 1);
    double maxd = 0.0;
    for (size_t a = 0; a < np; a++)
        for (size_t b = 0; b < np; b++) {
            double v = 0.0;
            if (free_p[a] && free_p[b])
                for (size_t i = 0; i < c->n; i++)
                    v += gsl_matrix_get(J, i, a) * gsl_matrix_get(J, i, b);
            else if (a == b)
                v = 1.0; /* a parameter on its bound is fixed: decoupled */
            gsl_matrix_set(M, a, b, v * D[a] * D[b]);
            if (a == b && free_p[a])
                maxd = fmax(maxd, v * D[a] * D[b]);
        }
    /* A ridge 1e-12 of the largest diagonal keeps a singular matrix invertible; the
     * directions it then returns have relative standard errors of about 1e6, far above
     * any threshold, so they are reported as undetermined, never as fitted. */
    for (size_t j = 0; j < np; j++)
        if (free_p[j])
            gsl_matrix_set(M, j, j, gsl_matrix_get(M, j, j) + 1e-12 * fmax(maxd, 1e-300));
    if (gsl_linalg_cholesky_decomp1(M) != GSL_SUCCESS ||
        gsl_linalg_cholesky_invert(M) != GSL_SUCCESS) {
        sim_errf(err, "figure fit: the covariance is not defined");
        st = SIM_EFIT;
        goto done;
    }
    for (size_t a = 0; a < np; a++) {
        const double va = gsl_matrix_get(M, a, a);
        co->rel_se[a] = free_p[a] ? sqrt(s2 * va) : 0.0;
        co->se[a] = co->rel_se[a] * D[a];
        for (size_t b = 0; b < np; b++) {
            const double vb = gsl_matrix_get(M, b, b);
            co->corr[a][b] = free_p[a] && free_p[b] ? gsl_matrix_get(M, a, b) / sqrt(va * vb)
                                                    : (a == b ? 1.0 : 0.0);
        }
    }
done:
    if (J)
        gsl_matrix_free(J);
    if (M)
        gsl_matrix_free(M);
    return st;
}

static int at_bound(const fctx *c, size_t j, double x)
{
    return x - c->lo[j] <= 1e-3 * c->scale[j] || c->hi[j] - x <= 1e-3 * c->scale[j];
}

static sim_status check_in(size_t n, const double *meas, size_t nf, const sim_fig_param *par,
                           const sim_fig_opts *o, struct sim_err *err)
{
    if (n < 3 || nf > SIM_FIG_MAX || !meas || (nf && !par)) {
        sim_errf(err,
                 "figure fit: needs at least 3 rows and at most %d figures (got %zu rows, %zu "
                 "figures)",
                 SIM_FIG_MAX, n, nf);
        return SIM_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(meas[i]) || !(meas[i] > 0.0)) {
            sim_errf(err, "row %zu: measured_s must be finite and > 0 (got %.17g)", i, meas[i]);
            return SIM_EINVAL;
        }
    for (size_t k = 0; k < nf; k++) {
        const sim_fig_param *p = &par[k];
        if (!(p->lo < p->hi) || !(p->prior >= p->lo && p->prior <= p->hi) || !(p->prior_sd > 0.0) ||
            !(p->scale > 0.0) || !isfinite(p->hi) || !isfinite(p->prior_sd)) {
            sim_errf(err,
                     "figure %zu: invalid prior or bounds (prior %.17g, sd %.17g, [%.17g, "
                     "%.17g])",
                     k, p->prior, p->prior_sd, p->lo, p->hi);
            return SIM_EINVAL;
        }
    }
    if (o->ab.weight != SIM_FIT_RELATIVE || !(o->ab.alpha_min < o->ab.alpha_max) ||
        !(o->ab.beta_min_s < o->ab.beta_max_s) || !(o->row_sd_frac > 0.0) || (int)o->loss < 0 ||
        o->loss >= SIM_LOSS_COUNT) {
        sim_errf(err,
                 "figure fit: needs relative weighting, alpha and beta_s bounds with min < max, "
                 "and a known loss");
        return SIM_EINVAL;
    }
    return SIM_OK;
}

/* Bounds of the active parameters for a round, and their start: round 0 from the options'
 * alpha0, beta0_s and the priors, later rounds where the previous round ended (x, IN/OUT). */
static void round_start(fctx *c, int round, double *x)
{
    const sim_fig_opts *o = c->o;
    c->lo[0] = o->ab.alpha_min;
    c->hi[0] = o->ab.alpha_max;
    c->scale[0] = 1.0;
    c->lo[1] = o->ab.beta_min_s;
    c->hi[1] = o->ab.beta_max_s;
    c->scale[1] = 1e-3;
    if (round == 0) {
        /* Off the bounds too: near one the transform's slope vanishes and the solver
         * cannot leave it (beta_s often starts at 0, its lower bound). */
        x[0] = fmin(fmax(o->alpha0, c->lo[0] + 0.1 * c->scale[0]), c->hi[0] - 0.1 * c->scale[0]);
        x[1] = fmin(fmax(o->beta0_s, c->lo[1] + 0.1 * c->scale[1]), c->hi[1] - 0.1 * c->scale[1]);
        if (!(x[0] > c->lo[0] && x[0] < c->hi[0]))
            x[0] = 0.5 * (c->lo[0] + c->hi[0]);
        if (!(x[1] > c->lo[1] && x[1] < c->hi[1]))
            x[1] = 0.5 * (c->lo[1] + c->hi[1]);
    }
    for (size_t k = 0; k < c->na; k++) {
        const sim_fig_param *p = &c->par[c->act[k]];
        c->lo[2 + k] = p->lo;
        c->hi[2 + k] = p->hi;
        c->scale[2 + k] = p->scale;
        /* The first round starts at the prior, off the bound where the transform's slope
         * vanishes; later ones where the previous round ended. */
        x[2 + k] = round == 0 ? fmin(fmax(p->prior, p->lo + 0.1 * p->scale), p->hi - 0.1 * p->scale)
                              : c->fig[c->act[k]];
    }
}

/*
 * Records a round's active figures (reached value, relative stderr, largest correlation) in
 * out, and returns the index in c->act of the worst undetermined one, with why it is held,
 * or -1 when every active figure is determined.
 */
static int record_round(const fctx *c, const double *x, const int *free_p, const cov_out *co,
                        sim_fig_result *out, sim_fig_held *why)
{
    const sim_fig_opts *o = c->o;
    const sim_fig_param *par = c->par;
    int worst = -1;
    double worst_se = -1.0;
    for (size_t k = 0; k < c->na; k++) {
        const size_t fk = c->act[k], j = 2 + k;
        out->reached[fk] = x[j];
        out->rel_stderr[fk] = co->rel_se[j];
        out->corr_max[fk] = 0.0;
        out->corr_with[fk] = -3;
        for (size_t b = 0; b < np_of(c); b++)
            if (b != j && free_p[b] && fabs(co->corr[j][b]) > out->corr_max[fk]) {
                out->corr_max[fk] = fabs(co->corr[j][b]);
                out->corr_with[fk] = b < 2 ? (int)b - 2 : (int)c->act[b - 2];
            }
        const double z = fabs(x[j] - par[fk].prior) / par[fk].prior_sd;
        sim_fig_held h = at_bound(c, j, x[j])                    ? SIM_FIG_HELD_BOUND
                         : !(co->rel_se[j] <= o->max_rel_stderr) ? SIM_FIG_HELD_STDERR
                         : out->corr_max[fk] > o->max_abs_corr   ? SIM_FIG_HELD_CORR
                         : z > o->max_prior_z                    ? SIM_FIG_HELD_PRIOR
                                                                 : SIM_FIG_FITTED;
        if (h == SIM_FIG_FITTED)
            continue;
        /* On a bound first (the largest relative stderr among them), then the rest. */
        const double key = (h == SIM_FIG_HELD_BOUND ? 1e300 : 0.0) + co->rel_se[j];
        if (worst < 0 || key > worst_se) {
            worst = (int)k;
            worst_se = key;
            *why = h;
        }
    }
    return worst;
}

/* The value a held figure takes: its prior, or 0 for a figure the profile lacks. */
static double held_value(const sim_fig_param *p) { return p->held_absent ? 0.0 : p->prior; }

/* Holds the active figure c->act[worst] at its prior (why in out->held) and drops it from
 * the active ones. One at a time: a figure on its bound may come off it once another is
 * held. */
static void hold_figure(fctx *c, int worst, sim_fig_held why, sim_fig_result *out)
{
    size_t keep = 0;
    for (size_t k = 0; k < c->na; k++) {
        const size_t fk = c->act[k];
        const int drop = (int)k == worst;
        if (drop) {
            out->held[fk] = why;
            c->fig[fk] = held_value(&c->par[fk]);
        } else {
            c->act[keep++] = fk;
        }
    }
    c->na = keep;
}

/* The fitted values and their stderrs, and the fit's cost and metrics at x, into out.
 * SIM_EFIT with a message when a row's prediction fails or the metrics are not finite. */
static sim_status fill_result(fctx *c, const double *x, double s, const cov_out *co,
                              double *scratch, sim_fig_result *out, struct sim_err *err)
{
    const size_t n = c->n, nf = c->nf;
    const sim_fig_param *par = c->par;
    out->alpha = x[0];
    out->beta_s = x[1];
    out->alpha_at_bound = at_bound(c, 0, x[0]);
    out->beta_at_bound = at_bound(c, 1, x[1]);
    out->alpha_stderr = co->se[0];
    out->beta_stderr_s = co->se[1];
    for (size_t k = 0; k < nf; k++) {
        out->value[k] = out->held[k] ? held_value(&par[k]) : c->fig[k];
        out->value_stderr[k] = (double)NAN;
    }
    for (size_t k = 0; k < c->na; k++)
        out->value_stderr[c->act[k]] = co->se[2 + k];
    out->loss_scale_frac = s;
    out->n_rows = n;
    set_fig(c, x);
    double cost = 0.0;
    if (eval_base(c) != 0) {
        sim_errf(err, "figure fit: a row's prediction failed");
        return SIM_EFIT;
    }
    double *pred = c->R2;
    for (size_t i = 0; i < n; i++) {
        pred[i] = x[0] * c->R[i] + x[1] * c->N[i] + c->H[i];
        cost += rho(c->o->loss, rel_resid(c, x, i) / s) * s * s;
    }
    out->cost = cost;
    if (sim_metrics_compute(pred, c->meas, n, scratch, &out->fit) != SIM_OK) {
        sim_errf(err, "figure fit: metrics not finite");
        return SIM_EFIT;
    }
    return SIM_OK;
}

static sim_status fit_figures(size_t n, const double *meas, size_t nf, const sim_fig_param *par,
                              sim_fig_pred_fn fn, void *user, const sim_fig_opts *o,
                              sim_fig_result *out, struct sim_err *err)
{
    *out = (sim_fig_result){0};
    sim_fig_opts def;
    if (!o) {
        sim_fig_opts_default(&def);
        o = &def;
    }
    sim_status st = check_in(n, meas, nf, par, o, err);
    if (st != SIM_OK)
        return st;
    fctx c = {0};
    c.n = n;
    c.nf = nf;
    c.meas = meas;
    c.par = par;
    c.fn = fn;
    c.user = user;
    c.o = o;
    double *buf = malloc(8 * n * sizeof(double));
    if (!buf) {
        sim_errf(err, "figure fit: out of memory");
        return SIM_ENOMEM;
    }
    c.R = buf;
    c.N = buf + n;
    c.H = buf + 2 * n;
    c.R2 = buf + 3 * n;
    c.N2 = buf + 4 * n;
    c.H2 = buf + 5 * n;
    c.w = buf + 6 * n;
    double *scratch = buf + 7 * n;
    for (size_t k = 0; k < nf; k++) {
        c.fig[k] = par[k].prior;
        c.act[k] = k;
        out->held[k] = SIM_FIG_FITTED;
    }
    c.na = nf;
    out->nf = nf;
    double s = o->loss_scale_frac;
    double x[NP_MAX] = {0};
    cov_out co = {0};
    int round = 0;
    for (;;) {
        round_start(&c, round, x);
        round++;
        c.have_cache = 0;
        st = fit_robust(&c, x, &s, scratch, err);
        if (st != SIM_OK)
            break;
        int free_p[NP_MAX];
        for (size_t j = 0; j < np_of(&c); j++)
            free_p[j] = j >= 2 || !at_bound(&c, j, x[j]);
        st = covariance(&c, x, free_p, &co, err);
        if (st != SIM_OK)
            break;
        /* Record, and hold the worst undetermined figure; done when none is. */
        sim_fig_held why = SIM_FIG_FITTED;
        const int worst = record_round(&c, x, free_p, &co, out, &why);
        if (worst < 0)
            break;
        hold_figure(&c, worst, why, out);
    }
    if (st == SIM_OK)
        st = fill_result(&c, x, s, &co, scratch, out, err);
    free(buf);
    if (st != SIM_OK)
        *out = (sim_fig_result){0};
    return st;
}

/* GSL keeps one error handler per process, whose default aborts: it is off while this fit runs
 * (every GSL status is checked) and the caller's is restored after. */
sim_status sim_fit_figures(size_t n, const double *meas, size_t nf, const sim_fig_param *par,
                           sim_fig_pred_fn fn, void *user, const sim_fig_opts *o,
                           sim_fig_result *out, struct sim_err *err)
{
    gsl_error_handler_t *prev = gsl_set_error_handler_off();
    sim_status st = fit_figures(n, meas, nf, par, fn, user, o, out, err);
    gsl_set_error_handler(prev);
    return st;
}
