/* metrics.c - APE summary and R^2 of predictions against measurements (see metrics.h). */
#include "metrics.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

/* qsort comparator for finite doubles (NaN is rejected before sorting). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

sim_status sim_metrics_compute(const double *pred, const double *meas, size_t n, double *scratch,
                               sim_metrics *out)
{
    assert(pred && meas && scratch && out);
    if (n < 1)
        return SIM_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(pred[i]) || !isfinite(meas[i]) || !(meas[i] > 0.0))
            return SIM_EINVAL;
    }

    /* Two passes: the mean of meas first, so SS_tot is a sum of squared
     * deviations rather than the cancellation-prone sum(x^2) - n mean^2. */
    const double n_d = (double)n;
    double sum_meas = 0.0;
    for (size_t i = 0; i < n; i++)
        sum_meas += meas[i];
    const double mean_meas = sum_meas / n_d;

    double sum_ape = 0.0, max_ape = 0.0, ss_res = 0.0, ss_tot = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double diff = pred[i] - meas[i];
        const double dev = meas[i] - mean_meas;
        const double ape = fabs(diff) / meas[i] * 100.0;
        scratch[i] = ape;
        sum_ape += ape;
        if (ape > max_ape)
            max_ape = ape;
        ss_res += diff * diff;
        ss_tot += dev * dev;
    }

    qsort(scratch, n, sizeof(scratch[0]), cmp_double);
    const size_t mid = n / 2;
    const double median = (n % 2 == 1) ? scratch[mid] : 0.5 * (scratch[mid - 1] + scratch[mid]);

    out->mape_pct = sum_ape / n_d;
    out->median_ape_pct = median;
    out->max_ape_pct = max_ape;
    /* R^2 is undefined without variance in the measurements; say so with NaN
     * instead of inventing 0 or 1. */
    out->r2 = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : (double)NAN;
    out->n = n;
    return SIM_OK;
}
