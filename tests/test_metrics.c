/* test_metrics.c - sim_metrics_compute against hand-computed tables. */
#include <math.h>
#include <stddef.h>

#include "check.h"
#include "metrics.h"

#define MAX_ROWS 8

/*
 * Even count, n = 4:
 *   meas = {2, 4, 5, 10}, pred = {2.3, 3.8, 5.6, 9.1}
 *   APE  = {0.3/2, 0.2/4, 0.6/5, 0.9/10} x 100 = {15, 5, 12, 9}
 *   MAPE = (15 + 5 + 12 + 9) / 4 = 41/4 = 10.25
 *   sorted {5, 9, 12, 15}: median = (9 + 12) / 2 = 10.5; max = 15
 *   mean(meas) = 21/4 = 5.25
 *   SS_tot = 3.25^2 + 1.25^2 + 0.25^2 + 4.75^2 = 10.5625 + 1.5625 + 0.0625 + 22.5625 = 34.75
 *   SS_res = 0.3^2 + 0.2^2 + 0.6^2 + 0.9^2 = 0.09 + 0.04 + 0.36 + 0.81 = 1.30
 *   R^2 = 1 - 1.30/34.75 = 33.45/34.75
 *
 * Odd count, n = 3:
 *   meas = {3, 8, 0.5}, pred = {3.6, 7.6, 0.43}
 *   APE  = {0.6/3, 0.4/8, 0.07/0.5} x 100 = {20, 5, 14}
 *   MAPE = 39/3 = 13; sorted {5, 14, 20}: median = 14; max = 20
 *   mean(meas) = 11.5/3; deviations {-5/6, 25/6, -20/6}
 *   SS_tot = (25 + 625 + 400)/36 = 1050/36
 *   SS_res = 0.36 + 0.16 + 0.0049 = 0.5249
 *   R^2 = 1 - 0.5249 x 36/1050 = 1 - 18.8964/1050
 *
 * Single row, n = 1: meas = {2.385}, pred = {2.5}
 *   APE = 0.115/2.385 x 100 = 11.5/2.385 (mean, median and max alike)
 *   SS_tot = 0, so R^2 is NaN by contract.
 *
 * Perfect prediction, n = 5, unsorted: every APE 0, R^2 exactly 1.
 *
 * Negative R^2: meas = {1, 3}, pred = {3, 1}: APE {200, 66.66..}; SS_tot = 2,
 *   SS_res = 8, R^2 = 1 - 8/2 = -3 (not clipped).
 */
static const struct {
    const char *name;
    size_t n;
    double meas[MAX_ROWS], pred[MAX_ROWS];
    double mape, median, max, r2;
} cases[] = {
    {"even_count_median_is_mean_of_middle_two",
     4,
     {2, 4, 5, 10},
     {2.3, 3.8, 5.6, 9.1},
     10.25,
     10.5,
     15,
     33.45 / 34.75},
    {"odd_count_median_is_middle_value",
     3,
     {3, 8, 0.5},
     {3.6, 7.6, 0.43},
     13,
     14,
     20,
     1.0 - 18.8964 / 1050.0},
    {"single_row_r2_is_nan",
     1,
     {2.385},
     {2.5},
     11.5 / 2.385,
     11.5 / 2.385,
     11.5 / 2.385,
     (double)NAN},
    {"perfect_prediction_has_zero_ape_and_unit_r2",
     5,
     {0.0113, 13.17, 0.25, 1.5, 0.004},
     {0.0113, 13.17, 0.25, 1.5, 0.004},
     0,
     0,
     0,
     1},
    {"worse_than_mean_gives_negative_r2", 2, {1, 3}, {3, 1}, 400.0 / 3.0, 400.0 / 3.0, 200, -3},
};

static void test_tables(void)
{
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        double scratch[MAX_ROWS];
        sim_metrics m;
        sim_status st = sim_metrics_compute(cases[k].pred, cases[k].meas, cases[k].n, scratch, &m);
        if (st != SIM_OK)
            printf("case %s\n", cases[k].name);
        CHECK_INT(st, SIM_OK);
        CHECK_INT(m.n, cases[k].n);
        CHECK_REL(m.mape_pct, cases[k].mape, 1e-12);
        CHECK_REL(m.median_ape_pct, cases[k].median, 1e-12);
        CHECK_REL(m.max_ape_pct, cases[k].max, 1e-12);
        CHECK_REL(m.r2, cases[k].r2, 1e-12);
    }
}

/* The median does not depend on the order of the rows. */
static void test_median_is_order_independent(void)
{
    const double meas[] = {10, 5, 2, 4}, pred[] = {9.1, 5.6, 2.3, 3.8};
    double scratch[4];
    sim_metrics m;
    CHECK_INT(sim_metrics_compute(pred, meas, 4, scratch, &m), SIM_OK);
    CHECK_REL(m.median_ape_pct, 10.5, 1e-12);
    CHECK_REL(m.r2, 33.45 / 34.75, 1e-12);
}

static void test_invalid_input_is_rejected(void)
{
    const double good[] = {1.5, 2.5};
    double scratch[2];
    sim_metrics m = {-1, -1, -1, -1, 99};

    CHECK_INT(sim_metrics_compute(good, good, 0, scratch, &m), SIM_EINVAL);

    const double meas_zero[] = {1.5, 0.0};
    CHECK_INT(sim_metrics_compute(good, meas_zero, 2, scratch, &m), SIM_EINVAL);
    const double meas_negative[] = {-1.5, 2.5};
    CHECK_INT(sim_metrics_compute(good, meas_negative, 2, scratch, &m), SIM_EINVAL);
    const double meas_nan[] = {1.5, (double)NAN};
    CHECK_INT(sim_metrics_compute(good, meas_nan, 2, scratch, &m), SIM_EINVAL);
    const double meas_inf[] = {(double)INFINITY, 2.5};
    CHECK_INT(sim_metrics_compute(good, meas_inf, 2, scratch, &m), SIM_EINVAL);
    const double pred_nan[] = {(double)NAN, 2.5};
    CHECK_INT(sim_metrics_compute(pred_nan, good, 2, scratch, &m), SIM_EINVAL);
    const double pred_inf[] = {1.5, -(double)INFINITY};
    CHECK_INT(sim_metrics_compute(pred_inf, good, 2, scratch, &m), SIM_EINVAL);

    /* A failed call leaves the output untouched. */
    CHECK_INT(m.n, 99);
    CHECK_REL(m.mape_pct, -1, 0);

    /* A negative prediction is a (bad) prediction, not an input error. */
    const double pred_negative[] = {-0.5, 2.5};
    CHECK_INT(sim_metrics_compute(pred_negative, good, 2, scratch, &m), SIM_OK);
    CHECK_REL(m.max_ape_pct, 2.0 / 1.5 * 100.0, 1e-12);
}

int main(void)
{
    test_tables();
    test_median_is_order_independent();
    test_invalid_input_is_rejected();
    return check_report("test_metrics");
}
