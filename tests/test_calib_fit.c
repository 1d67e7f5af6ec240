/* test_calib_fit.c - sim_fit_alpha_beta against exact data, noise, closed forms and NIST StRD. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "calib_fit.h"
#include "check.h"

#define ALPHA_TRUE  1.237
#define BETA_TRUE_S 0.000413
#define N_NOISY     200

/* Both weightings, for the loops below. */
static const sim_fit_weight weights[] = {SIM_FIT_RELATIVE, SIM_FIT_ABSOLUTE};
#define N_WEIGHTS (sizeof(weights) / sizeof(weights[0]))

/* A 64-bit LCG (Knuth's MMIX constants): deterministic noise on every platform. */
static uint64_t lcg_state = 20261102u;

static double lcg_uniform(void)
{
    lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(lcg_state >> 11) * (1.0 / 9007199254740992.0); /* [0, 1), 53 bits */
}

/*
 * A varied design like a real calibration set: two rows in three are single
 * steps (n_steps 1, roofline 1.5 ms to 70 ms), one in three an offline batch of
 * 200 to 1300 steps whose roofline sum averages 4 ms to 10 ms per step. Row i
 * is deterministic; the measured time is filled in by the caller.
 */
static void design_row(size_t i, sim_fit_row *r)
{
    r->offset_s = 0.0;
    if (i % 3 == 0) {
        r->n_steps = (double)(200 + (37 * i) % 1100);
        r->roofline_s = r->n_steps * (0.004 + 0.001 * (double)(i % 7));
    } else {
        r->n_steps = 1.0;
        r->roofline_s = 0.0015 + 0.00023 * (double)((i * 13) % 300);
    }
}

/*
 * Rows 0..n-1 of the design, measured exactly as (1.237, 0.000413) predict them on top of an
 * offset of offset_per_step x n_steps + offset_cycle x (i mod 5) (both 0: no offset).
 */
static void exact_rows(sim_fit_row *rows, size_t n, double offset_per_step, double offset_cycle)
{
    for (size_t i = 0; i < n; i++) {
        design_row(i, &rows[i]);
        rows[i].offset_s = offset_per_step * rows[i].n_steps + offset_cycle * (double)(i % 5);
        rows[i].measured_s =
            ALPHA_TRUE * rows[i].roofline_s + BETA_TRUE_S * rows[i].n_steps + rows[i].offset_s;
    }
}

/* Fits the n rows with the default bounds and weighting w; the status of sim_fit_alpha_beta. */
static sim_status fit_weighted(const sim_fit_row *rows, size_t n, sim_fit_weight w,
                               sim_fit_result *r)
{
    sim_fit_opts o;
    sim_fit_opts_default(&o);
    o.weight = w;
    struct sim_err err = {""};
    sim_status st = sim_fit_alpha_beta(rows, n, &o, r, &err);
    if (st != SIM_OK)
        printf("  (fit: %s)\n", err.msg);
    return st;
}

/* The residual sum of squares of the rows at (alpha, beta_s). */
static double chisq_at(const sim_fit_row *rows, size_t n, double alpha, double beta_s)
{
    double chisq = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double res =
            rows[i].measured_s - alpha * rows[i].roofline_s - beta_s * rows[i].n_steps;
        chisq += res * res;
    }
    return chisq;
}

/* The x (roofline_s) and t (n_steps) of the rows of (c); the bound tests below measure
 * y = a x + b t on them. */
static const double hand_x[4] = {0.5, 1.5, 2.0, 3.0}, hand_t[4] = {1, 2, 1, 4};

static void hand_rows(sim_fit_row rows[4], double a, double b)
{
    for (size_t i = 0; i < 4; i++)
        rows[i] = (sim_fit_row){hand_x[i], hand_t[i], a * hand_x[i] + b * hand_t[i], 0.0};
}

/*
 * (a) Rows generated exactly from (1.237, 0.000413) are recovered to 1e-9, with zero error,
 * under both weightings. The same holds with a known offset (the engine's host time), which
 * is added to every prediction and not fitted: rows generated as 1.237 x roofline +
 * 0.000413 x n_steps + offset give back (1.237, 0.000413) exactly.
 */
static void test_exact_data_is_recovered(void)
{
    static const struct {
        double per_step, cycle; /* offset_s = per_step x n_steps + cycle x (i mod 5) */
    } offsets[] = {{0.0, 0.0}, {0.00081, 0.0137}};
    for (size_t j = 0; j < sizeof(offsets) / sizeof(offsets[0]); j++) {
        sim_fit_row rows[30];
        exact_rows(rows, 30, offsets[j].per_step, offsets[j].cycle);
        for (size_t k = 0; k < N_WEIGHTS; k++) {
            sim_fit_result r;
            CHECK_INT(fit_weighted(rows, 30, weights[k], &r), SIM_OK);
            CHECK_REL(r.alpha, ALPHA_TRUE, 1e-9);
            CHECK_REL(r.beta_s, BETA_TRUE_S, 1e-9);
            CHECK_INT(r.alpha_at_bound, 0);
            CHECK_INT(r.beta_at_bound, 0);
            CHECK_INT(r.n_rows, 30);
            CHECK_INT(r.fit.n, 30);
            CHECK_ABS(r.fit.mape_pct, 0.0, 1e-9);
            CHECK_ABS(r.fit.max_ape_pct, 0.0, 1e-9);
            CHECK_REL(r.fit.r2, 1.0, 1e-12);
            CHECK(r.alpha_stderr < 1e-9 * ALPHA_TRUE);
        }
    }
}

/*
 * (b) With 2% multiplicative noise (uniform, standard deviation 2%) on 200 rows
 * the estimates lie within 3 reported standard errors of the truth, and the
 * standard errors are small but not zero.
 */
static void test_noisy_estimates_are_within_three_stderr(void)
{
    static sim_fit_row rows[N_NOISY];
    const double half_width = 0.02 * sqrt(3.0); /* uniform on [-h, h] has sd h/sqrt(3) */
    for (size_t i = 0; i < N_NOISY; i++) {
        design_row(i, &rows[i]);
        const double exact = ALPHA_TRUE * rows[i].roofline_s + BETA_TRUE_S * rows[i].n_steps;
        rows[i].measured_s = exact * (1.0 + half_width * (2.0 * lcg_uniform() - 1.0));
    }
    for (size_t k = 0; k < N_WEIGHTS; k++) {
        sim_fit_result r;
        CHECK_INT(fit_weighted(rows, N_NOISY, weights[k], &r), SIM_OK);
        CHECK(r.alpha_stderr > 0.0 && r.alpha_stderr < 0.02 * ALPHA_TRUE);
        CHECK(r.beta_stderr_s > 0.0 && r.beta_stderr_s < 0.5 * BETA_TRUE_S);
        CHECK_ABS(r.alpha, ALPHA_TRUE, 3.0 * r.alpha_stderr);
        CHECK_ABS(r.beta_s, BETA_TRUE_S, 3.0 * r.beta_stderr_s);
        CHECK_REL(r.alpha_stderr * r.alpha_stderr, r.cov_alpha_alpha, 1e-12);
        CHECK_REL(r.beta_stderr_s * r.beta_stderr_s, r.cov_beta_beta, 1e-12);
        /* Uniform noise on [-3.46%, 3.46%] has a mean |noise| of 1.73%; the fitted
         * parameters (within 1% of the truth) move each APE by at most about 1%. */
        CHECK(r.fit.mape_pct > 1.0 && r.fit.mape_pct < 2.5);
        CHECK(r.fit.max_ape_pct > 2.5 && r.fit.max_ape_pct < 4.5);
        CHECK(!r.alpha_at_bound && !r.beta_at_bound);
    }
}

/*
 * (c) Unweighted fit of 4 rows against the 2x2 normal equations solved by hand.
 *   rows (x = roofline_s, t = n_steps, y = measured_s):
 *     (0.5, 1, 0.8), (1.5, 2, 2.1), (2.0, 1, 2.6), (3.0, 4, 4.3)
 *   Sxx = 0.25 + 2.25 + 4 + 9 = 15.5       Sxt = 0.5 + 3 + 2 + 12 = 17.5
 *   Stt = 1 + 4 + 1 + 16 = 22              Sxy = 0.4 + 3.15 + 5.2 + 12.9 = 21.65
 *   Sty = 0.8 + 4.2 + 2.6 + 17.2 = 24.8
 *   det = Sxx Stt - Sxt^2 = 341 - 306.25 = 34.75
 *   alpha = (Stt Sxy - Sxt Sty) / det = (476.3 - 434) / 34.75 = 42.3 / 34.75
 *   beta  = (Sxx Sty - Sxt Sxy) / det = (384.4 - 378.875) / 34.75 = 5.525 / 34.75
 *   (X^T X)^-1 = [Stt, -Sxt; -Sxt, Sxx] / det, scaled by s^2 = chisq / (4 - 2).
 */
static void test_unweighted_fit_matches_normal_equations(void)
{
    const sim_fit_row rows[] = {
        {0.5, 1, 0.8, 0}, {1.5, 2, 2.1, 0}, {2.0, 1, 2.6, 0}, {3.0, 4, 4.3, 0}};
    const double alpha = 42.3 / 34.75, beta = 5.525 / 34.75;
    const double chisq = chisq_at(rows, 4, alpha, beta);
    const double s2 = chisq / 2.0;

    sim_fit_result r;
    CHECK_INT(fit_weighted(rows, 4, SIM_FIT_ABSOLUTE, &r), SIM_OK);
    CHECK_REL(r.alpha, alpha, 1e-9);
    CHECK_REL(r.beta_s, beta, 1e-9);
    CHECK_REL(r.chisq, chisq, 1e-9);
    CHECK_REL(r.cov_alpha_alpha, s2 * 22.0 / 34.75, 1e-9);
    CHECK_REL(r.cov_alpha_beta, -s2 * 17.5 / 34.75, 1e-9);
    CHECK_REL(r.cov_beta_beta, s2 * 15.5 / 34.75, 1e-9);
    CHECK_REL(r.alpha_stderr, sqrt(s2 * 22.0 / 34.75), 1e-9);
    CHECK_REL(r.beta_stderr_s, sqrt(s2 * 15.5 / 34.75), 1e-9);
}

/*
 * (d) NIST StRD linear regression dataset "Norris" (lower difficulty, 36
 * observations, y = B0 + B1 x), https://www.itl.nist.gov/div898/strd/lls/data/Norris.shtml.
 * The (x, y) pairs are as typed in GSL's fit/test.c (norris_x, norris_y), which
 * tests gsl_fit_linear against the same certified values. Fitted with
 * n_steps = 1 on every row, beta_s plays B0 and alpha plays B1.
 */
static const double norris_x[36] = {0.2,   337.4, 118.2, 884.6, 10.1,  226.5, 666.3, 996.3, 448.6,
                                    777.0, 558.2, 0.4,   0.6,   775.5, 666.9, 338.0, 447.5, 11.6,
                                    556.0, 228.1, 995.8, 887.6, 120.2, 0.3,   0.3,   556.8, 339.1,
                                    887.2, 999.0, 779.0, 11.1,  118.3, 229.2, 669.1, 448.9, 0.5};
static const double norris_y[36] = {0.1,   338.8, 118.1, 888.0, 9.2,   228.1, 668.5, 998.5, 449.1,
                                    778.9, 559.2, 0.3,   0.1,   778.1, 668.8, 339.3, 448.9, 10.8,
                                    557.7, 228.3, 998.0, 888.8, 119.6, 0.3,   0.6,   557.6, 339.3,
                                    888.0, 998.5, 778.9, 10.2,  117.6, 228.9, 668.4, 449.2, 0.2};

static void test_norris_certified_values(void)
{
    sim_fit_row rows[36];
    for (size_t i = 0; i < 36; i++)
        rows[i] = (sim_fit_row){norris_x[i], 1.0, norris_y[i], 0.0};
    sim_fit_opts o = {SIM_FIT_ABSOLUTE, -10.0, 10.0, -10.0, 10.0};
    sim_fit_result r;
    struct sim_err err = {""};
    CHECK_INT(sim_fit_alpha_beta(rows, 36, &o, &r, &err), SIM_OK);
    CHECK_REL(r.beta_s, -0.262323073774029, 1e-9);          /* certified B0 */
    CHECK_REL(r.alpha, 1.00211681802045, 1e-9);             /* certified B1 */
    CHECK_REL(r.beta_stderr_s, 0.232818234301152, 1e-6);    /* certified sd(B0) */
    CHECK_REL(r.alpha_stderr, 0.429796848199937E-03, 1e-6); /* certified sd(B1) */
    CHECK_REL(r.chisq, 26.6173985294224, 1e-9);             /* certified residual sum of squares */
    CHECK_REL(r.fit.r2, 0.999993745883712, 1e-9);           /* certified R-squared */
    CHECK_REL(r.cov_alpha_beta, -7.74327536339570e-05, 1e-6); /* GSL fit/test.c (octave) */
    CHECK_INT(r.alpha_at_bound, 0);
    CHECK_INT(r.beta_at_bound, 0);
}

/*
 * (e) Bounds. Rows from (c) with exact y = 2 x + 0.05 t. With alpha_max = 1.5
 * the optimum lies on the edge alpha = 1.5, where the 1-D least squares gives
 *   beta = sum t (y - 1.5 x) / sum t^2 = sum t (0.5 x + 0.05 t) / Stt
 *        = 0.05 + 0.5 Sxt / Stt = 0.05 + 8.75 / 22
 * and the free parameter's variance is chisq / (4 - 1) / Stt.
 */
static void test_active_alpha_bound_gives_edge_optimum(void)
{
    sim_fit_row rows[4];
    hand_rows(rows, 2.0, 0.05);
    const double beta = 0.05 + 8.75 / 22.0;
    const double chisq = chisq_at(rows, 4, 1.5, beta);

    sim_fit_opts o = {SIM_FIT_ABSOLUTE, 0.1, 1.5, 0.0, 1.0};
    sim_fit_result r;
    struct sim_err err = {""};
    CHECK_INT(sim_fit_alpha_beta(rows, 4, &o, &r, &err), SIM_OK);
    CHECK(r.alpha == 1.5);
    CHECK_INT(r.alpha_at_bound, 1);
    CHECK_INT(r.beta_at_bound, 0);
    CHECK_REL(r.beta_s, beta, 1e-12);
    CHECK_REL(r.chisq, chisq, 1e-12);
    CHECK(r.alpha_stderr == 0.0);
    CHECK(r.cov_alpha_alpha == 0.0 && r.cov_alpha_beta == 0.0);
    CHECK_REL(r.beta_stderr_s, sqrt(chisq / 3.0 / 22.0), 1e-12);

    /* Relative weighting: the same edge, with w = 1/y^2 in both sums. */
    double s_tr = 0.0, s_tt = 0.0;
    for (size_t i = 0; i < 4; i++) {
        const double w = 1.0 / (rows[i].measured_s * rows[i].measured_s);
        s_tr += w * hand_t[i] * (rows[i].measured_s - 1.5 * hand_x[i]);
        s_tt += w * hand_t[i] * hand_t[i];
    }
    o.weight = SIM_FIT_RELATIVE;
    CHECK_INT(sim_fit_alpha_beta(rows, 4, &o, &r, &err), SIM_OK);
    CHECK(r.alpha == 1.5);
    CHECK_INT(r.alpha_at_bound, 1);
    CHECK_REL(r.beta_s, s_tr / s_tt, 1e-12);
}

/*
 * Lower bound on beta: y = 1.3 x - 0.02 t (all y > 0) with beta_s >= 0 puts the
 * optimum on beta = 0, where alpha = Sxy / Sxx = 1.3 - 0.02 Sxt / Sxx
 * = 1.3 - 0.35 / 15.5.
 */
static void test_active_beta_bound_gives_edge_optimum(void)
{
    sim_fit_row rows[4];
    hand_rows(rows, 1.3, -0.02);
    const double alpha = 1.3 - 0.35 / 15.5;
    const double chisq = chisq_at(rows, 4, alpha, 0.0);
    sim_fit_result r;
    CHECK_INT(fit_weighted(rows, 4, SIM_FIT_ABSOLUTE, &r), SIM_OK);
    CHECK(r.beta_s == 0.0);
    CHECK_INT(r.beta_at_bound, 1);
    CHECK_INT(r.alpha_at_bound, 0);
    CHECK_REL(r.alpha, alpha, 1e-12);
    CHECK(r.beta_stderr_s == 0.0);
    CHECK_REL(r.alpha_stderr, sqrt(chisq / 3.0 / 15.5), 1e-12);
}

/*
 * Corner: y = 2 x + 0.05 t with alpha <= 1.52 and beta >= 0.45. Along
 * alpha = 1.52 the 1-D optimum is 0.05 + 0.48 x 17.5/22 = 0.4318 < 0.45, and
 * along beta = 0.45 it is 2 - 0.4 x 17.5/15.5 = 1.548 > 1.52, so both clamp and
 * the optimum is the corner (1.52, 0.45) with both bounds active.
 */
static void test_both_bounds_active_at_corner(void)
{
    sim_fit_row rows[4];
    hand_rows(rows, 2.0, 0.05);
    sim_fit_opts o = {SIM_FIT_ABSOLUTE, 0.1, 1.52, 0.45, 1.0};
    sim_fit_result r;
    struct sim_err err = {""};
    CHECK_INT(sim_fit_alpha_beta(rows, 4, &o, &r, &err), SIM_OK);
    CHECK(r.alpha == 1.52);
    CHECK(r.beta_s == 0.45);
    CHECK_INT(r.alpha_at_bound, 1);
    CHECK_INT(r.beta_at_bound, 1);
    CHECK(r.alpha_stderr == 0.0 && r.beta_stderr_s == 0.0);
}

/* Two rows determine the parameters exactly but leave no degrees of freedom. */
static void test_two_rows_fit_exactly_with_nan_stderr(void)
{
    const sim_fit_row rows[] = {{0.02, 1, 0.02 * ALPHA_TRUE + BETA_TRUE_S, 0},
                                {3.385, 400, 3.385 * ALPHA_TRUE + 400 * BETA_TRUE_S, 0}};
    sim_fit_result r;
    struct sim_err err = {""};
    CHECK_INT(sim_fit_alpha_beta(rows, 2, NULL, &r, &err), SIM_OK);
    CHECK_REL(r.alpha, ALPHA_TRUE, 1e-9);
    CHECK_REL(r.beta_s, BETA_TRUE_S, 1e-9);
    CHECK(isnan(r.alpha_stderr) && isnan(r.beta_stderr_s));
}

/* (f) Degenerate input: the documented status, a message, a zeroed result. */
static void expect_failure(const sim_fit_row *rows, size_t n, const sim_fit_opts *o,
                           sim_status want, const char *needle, const char *name, int line)
{
    sim_fit_result r;
    memset(&r, 0x5a, sizeof(r));
    struct sim_err err = {""};
    sim_status st = sim_fit_alpha_beta(rows, n, o, &r, &err);
    if (st != want || !strstr(err.msg, needle))
        printf("  (case %s at line %d: status %d, message \"%s\")\n", name, line, (int)st, err.msg);
    CHECK_INT(st, want);
    CHECK_CONTAINS(err.msg, needle);
    CHECK(r.alpha == 0.0 && r.beta_s == 0.0 && r.n_rows == 0);
}

#define EXPECT_FAILURE(rows, n, o, want, needle)                                                   \
    expect_failure((rows), (n), (o), (want), (needle), #rows, __LINE__)

static void test_degenerate_input_is_an_error(void)
{
    const sim_fit_row good[3] = {{0.5, 1, 0.8, 0}, {1.5, 2, 2.1, 0}, {2.0, 1, 2.6, 0}};
    sim_fit_row rows[3];

    EXPECT_FAILURE(good, 0, NULL, SIM_EINVAL, "too few rows");
    EXPECT_FAILURE(good, 1, NULL, SIM_EINVAL, "expected >= 2, got 1");
    EXPECT_FAILURE(NULL, 3, NULL, SIM_EINVAL, "rows: NULL");

    static const struct {
        const char *name;
        int field; /* 0 roofline_s, 1 n_steps, 2 measured_s */
        double value;
        const char *needle;
    } bad[] = {
        {"zero_measured_is_rejected", 2, 0.0, "rows[2].measured_s"},
        {"negative_measured_is_rejected", 2, -0.8, "rows[2].measured_s"},
        {"nan_measured_is_rejected", 2, (double)NAN, "rows[2].measured_s"},
        {"infinite_measured_is_rejected", 2, (double)INFINITY, "rows[2].measured_s"},
        {"tiny_measured_overflows_relative_weight", 2, 1e-200, "too small for relative"},
        {"negative_roofline_is_rejected", 0, -1e-3, "rows[2].roofline_s"},
        {"nan_roofline_is_rejected", 0, (double)NAN, "rows[2].roofline_s"},
        {"infinite_roofline_is_rejected", 0, (double)INFINITY, "rows[2].roofline_s"},
        {"negative_n_steps_is_rejected", 1, -1.0, "rows[2].n_steps"},
        {"nan_n_steps_is_rejected", 1, (double)NAN, "rows[2].n_steps"},
        {"infinite_n_steps_is_rejected", 1, (double)INFINITY, "rows[2].n_steps"},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        memcpy(rows, good, sizeof(rows));
        double *f = bad[k].field == 0   ? &rows[2].roofline_s
                    : bad[k].field == 1 ? &rows[2].n_steps
                                        : &rows[2].measured_s;
        *f = bad[k].value;
        expect_failure(rows, 3, NULL, SIM_EINVAL, bad[k].needle, bad[k].name, __LINE__);
    }

    /* Absolute weighting does not square measured_s, so a tiny time is fine there. */
    memcpy(rows, good, sizeof(rows));
    rows[2].measured_s = 1e-200;
    sim_fit_opts abs_opts;
    sim_fit_opts_default(&abs_opts);
    abs_opts.weight = SIM_FIT_ABSOLUTE;
    sim_fit_result r;
    CHECK_INT(sim_fit_alpha_beta(rows, 3, &abs_opts, &r, NULL), SIM_OK); /* NULL err on success */

    const char *undetermined = "rows do not determine alpha and beta";
    const sim_fit_row identical[3] = {
        {0.012, 1, 0.0153, 0}, {0.012, 1, 0.0153, 0}, {0.012, 1, 0.0153, 0}};
    EXPECT_FAILURE(identical, 3, NULL, SIM_EFIT, undetermined);
    /* The same roofline time per step in every row: alpha and beta trade off exactly. */
    const sim_fit_row proportional[3] = {
        {0.003, 1, 0.0042, 0}, {0.3, 100, 0.39, 0}, {3.0, 1000, 4.1, 0}};
    EXPECT_FAILURE(proportional, 3, NULL, SIM_EFIT, undetermined);
    const sim_fit_row no_steps[3] = {{0.5, 0, 0.8, 0}, {1.5, 0, 2.1, 0}, {2.0, 0, 2.6, 0}};
    EXPECT_FAILURE(no_steps, 3, NULL, SIM_EFIT, undetermined);
    const sim_fit_row no_roofline[3] = {{0, 1, 0.8, 0}, {0, 2, 2.1, 0}, {0, 1, 2.6, 0}};
    EXPECT_FAILURE(no_roofline, 3, NULL, SIM_EFIT, undetermined);
    const sim_fit_row all_zero[3] = {{0, 0, 0.8, 0}, {0, 0, 2.1, 0}, {0, 0, 2.6, 0}};
    EXPECT_FAILURE(all_zero, 3, NULL, SIM_EFIT, undetermined);

    sim_fit_opts o;
    sim_fit_opts_default(&o);
    o.alpha_min = 2.0;
    o.alpha_max = 1.0;
    EXPECT_FAILURE(good, 3, &o, SIM_EINVAL, "opts.alpha_min/alpha_max");
    sim_fit_opts_default(&o);
    o.beta_max_s = (double)NAN;
    EXPECT_FAILURE(good, 3, &o, SIM_EINVAL, "opts.beta_min_s/beta_max_s");
    sim_fit_opts_default(&o);
    o.weight = (sim_fit_weight)7;
    EXPECT_FAILURE(good, 3, &o, SIM_EINVAL, "opts.weight");

    /* A NULL err is allowed: the status alone reports the failure. */
    CHECK_INT(sim_fit_alpha_beta(identical, 3, NULL, &r, NULL), SIM_EFIT);
}

static void test_defaults_are_wide_and_relative(void)
{
    sim_fit_opts o;
    sim_fit_opts_default(&o);
    CHECK_INT(o.weight, SIM_FIT_RELATIVE);
    CHECK_REL(o.alpha_min, 0.1, 0);
    CHECK_REL(o.alpha_max, 10.0, 0);
    CHECK_REL(o.beta_min_s, 0.0, 0);
    CHECK_REL(o.beta_max_s, 1.0, 0);
}

/* A negative offset (the engine's host time, added to every prediction) is rejected. */
static void test_negative_offset_is_rejected(void)
{
    sim_fit_row rows[30];
    exact_rows(rows, 30, 0.00081, 0.0137);
    rows[3].offset_s = -1e-3;
    sim_fit_result r;
    struct sim_err err = {""};
    CHECK_INT(sim_fit_alpha_beta(rows, 30, NULL, &r, &err), SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "rows[3].offset_s");
}

int main(void)
{
    test_exact_data_is_recovered();
    test_negative_offset_is_rejected();
    test_noisy_estimates_are_within_three_stderr();
    test_unweighted_fit_matches_normal_equations();
    test_norris_certified_values();
    test_active_alpha_bound_gives_edge_optimum();
    test_active_beta_bound_gives_edge_optimum();
    test_both_bounds_active_at_corner();
    test_two_rows_fit_exactly_with_nan_stderr();
    test_degenerate_input_is_an_error();
    test_defaults_are_wide_and_relative();
    return check_report("test_calib_fit");
}
