/* meas_band.c - the band a calibration records (see meas_pred.h, sim_meas_band_compute, and
 * docs/calibration.md, "Prediction intervals"). */
#include "meas_pred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "serve_stats.h"

int sim_meas_row_band_family(const sim_meas_row *r, int queued)
{
    switch (r->kind) {
    case SIM_MEAS_OFFLINE_BATCH:
        return SIM_BAND_OFFLINE;
    case SIM_MEAS_PREFILL:
        return SIM_BAND_PREFILL;
    case SIM_MEAS_DECODE:
        return SIM_BAND_DECODE;
    case SIM_MEAS_STEP:
        return SIM_BAND_STEP;
    case SIM_MEAS_SERVING: {
        const char *m = sim_serve_metric_name(r->metric);
        if (strncmp(m, "ttft", 4) == 0)
            return queued ? SIM_BAND_TTFT_QUEUED : SIM_BAND_TTFT;
        if (strncmp(m, "tpot", 4) == 0)
            return SIM_BAND_TPOT;
        return SIM_BAND_E2E;
    }
    default:
        return -1;
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The fields a band's folds may hold out, in the order they are tried: a new model first
 * (what a calibration is most often asked to carry), then a new layout, then new loads. */
static const char *const band_fields[] = {
    "model", "tp", "batch", "concurrency", "prompt_tokens", "output_tokens", "context_tokens"};

sim_status sim_meas_band_compute(const sim_meas_opts *o, sim_meas_pred *mp, sim_calib_band *band,
                                 char *why, size_t why_cap, struct sim_err *err)
{
    return sim_meas_band_compute_in(o, mp, NULL, band, why, why_cap, err);
}

sim_status sim_meas_band_compute_in(const sim_meas_opts *o, sim_meas_pred *mp,
                                    const unsigned char *within, sim_calib_band *band, char *why,
                                    size_t why_cap, struct sim_err *err)
{
    memset(band, 0, sizeof(*band));
    const sim_meas_set *set = mp->set;
    const size_t n = set->n;
    unsigned char *mask = malloc(n ? n : 1);
    double *pred = malloc((n ? n : 1) * sizeof(double));
    double *ratio = malloc((n ? n : 1) * sizeof(double));
    unsigned char *queued = calloc(n ? n : 1, 1);
    sim_meas_fold *folds = malloc(SIM_BAND_MAX_FOLDS * sizeof(*folds));
    if (!mask || !pred || !ratio || !queued || !folds) {
        free(mask);
        free(pred);
        free(ratio);
        free(queued);
        free(folds);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        mask[i] = (unsigned char)sim_meas_row_fitted(mp, within, i);
    const char *field = NULL;
    char v[64];
    for (size_t k = 0; !field && k < sizeof(band_fields) / sizeof(band_fields[0]); k++) {
        const int64_t values = sim_meas_count_values(set, mask, band_fields[k]);
        if (values >= 2 && values <= SIM_BAND_MAX_FOLDS &&
            sim_meas_fewest_left(set, mask, band_fields[k], v, sizeof(v)) >= 2)
            field = band_fields[k];
    }
    sim_status st = SIM_OK;
    if (!field) {
        snprintf(why, why_cap,
                 "no field splits the fitted rows into 2 to %d groups that each leave 2 rows to "
                 "fit on (model, tp, batch, concurrency, lengths)",
                 SIM_BAND_MAX_FOLDS);
    } else {
        int n_folds = 0;
        struct sim_err e;
        sim_meas_opts oo = *o;
        oo.figs = NULL; /* the band is of the alpha/beta fit the calibration applies */
        st = sim_meas_holdout_in(&oo, mp, within, field, pred, queued, folds, SIM_BAND_MAX_FOLDS,
                                 &n_folds, &e);
        if (st == SIM_ENOMEM) {
            sim_errf(err, "%s", e.msg);
        } else if (st != SIM_OK) {
            snprintf(why, why_cap, "a held-out fit by %s failed: %.160s", field, e.msg);
            st = SIM_OK;
        } else {
            snprintf(band->held_out_by, sizeof(band->held_out_by), "%s", field);
            for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
                size_t m = 0;
                for (size_t i = 0; i < n; i++)
                    if (mask[i] && sim_meas_row_band_family(&set->rows[i], queued[i]) == f &&
                        pred[i] > 0.0)
                        ratio[m++] = set->rows[i].measured_s / pred[i];
                band->n_rows[f] = (int64_t)m;
                if (m == 0)
                    continue;
                qsort(ratio, m, sizeof(double), cmp_double);
                /* NumPy's default percentile, as every statistic of the project. */
                for (int k = 0; k < SIM_BAND_QUANTILES; k++)
                    band->ratio_q[f][k] = sim_percentile_sorted(
                        ratio, (int64_t)m, 100.0 * k / (SIM_BAND_QUANTILES - 1));
            }
            why[0] = '\0';
        }
    }
    free(mask);
    free(pred);
    free(ratio);
    free(queued);
    free(folds);
    return st;
}

sim_status sim_meas_band_cover(const sim_meas_set *set, const double *pred,
                               const unsigned char *queued, const sim_calib_band *b, int level_pct,
                               sim_band_cover out[SIM_BAND_FAMILIES], int64_t *no_band,
                               struct sim_err *err)
{
    memset(out, 0, SIM_BAND_FAMILIES * sizeof(*out));
    *no_band = 0;
    double *ratio = malloc((set->n ? set->n : 1) * sizeof(double));
    if (!ratio) {
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
        double lo, hi;
        const int has = sim_band_interval(b, f, level_pct, &lo, &hi);
        size_t m = 0;
        for (size_t i = 0; i < set->n; i++) {
            if (sim_meas_row_band_family(&set->rows[i], queued ? queued[i] : 0) != f)
                continue;
            if (!has) {
                (*no_band)++;
                continue;
            }
            const double r = set->rows[i].measured_s / pred[i];
            ratio[m++] = r;
            out[f].below += r < lo;
            out[f].above += r > hi;
        }
        if (!has || m == 0)
            continue;
        out[f].n = (int64_t)m;
        out[f].inside = out[f].n - out[f].below - out[f].above;
        out[f].ratio_lo = lo;
        out[f].ratio_hi = hi;
        qsort(ratio, m, sizeof(double), cmp_double);
        out[f].ratio_median = sim_percentile_sorted(ratio, (int64_t)m, 50.0);
    }
    free(ratio);
    return SIM_OK;
}

/* Whether word is an item of the comma-separated list. */
static int in_list(const char *list, const char *word)
{
    const size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

sim_status sim_meas_band_holdout(const sim_meas_opts *o, sim_meas_pred *mp, const char *field,
                                 const double *pred, const unsigned char *queued, int level_pct,
                                 sim_band_cover out[SIM_BAND_FAMILIES], int64_t *no_band,
                                 char *held_out_by, size_t by_cap, struct sim_err *err)
{
    memset(out, 0, SIM_BAND_FAMILIES * sizeof(*out));
    *no_band = 0;
    held_out_by[0] = '\0';
    const sim_meas_set *set = mp->set;
    const size_t cap = set->n ? set->n : 1;
    unsigned char *done = calloc(cap, 1), *within = malloc(cap);
    double *ratio = malloc(cap * sizeof(double)), *sorted = malloc(cap * sizeof(double));
    int *family = malloc(cap * sizeof(int));
    sim_calib_band *band = malloc(sizeof(*band));
    double sum_lo[SIM_BAND_FAMILIES] = {0}, sum_hi[SIM_BAND_FAMILIES] = {0};
    sim_status st = SIM_OK;
    if (!done || !within || !ratio || !sorted || !family || !band) {
        sim_errf(err, "out of memory");
        st = SIM_ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < set->n; i++)
        family[i] = -1;
    for (size_t i = 0; st == SIM_OK && i < set->n; i++) {
        if (done[i])
            continue;
        char vb[64], wb[64], why[256];
        const char *v = sim_meas_group_field(&set->rows[i], field, vb, sizeof(vb));
        for (size_t j = 0; j < set->n; j++)
            within[j] = strcmp(sim_meas_group_field(&set->rows[j], field, wb, sizeof(wb)), v) != 0;
        /* The band a calibration on the other groups' rows records. */
        st = sim_meas_band_compute_in(o, mp, within, band, why, sizeof(why), err);
        if (st != SIM_OK)
            break;
        if (band->held_out_by[0] && !in_list(held_out_by, band->held_out_by)) {
            const size_t len = strlen(held_out_by);
            snprintf(held_out_by + len, by_cap - len, "%s%s", len ? "," : "", band->held_out_by);
        }
        for (size_t j = i; j < set->n; j++) {
            if (within[j] || done[j])
                continue;
            done[j] = 1;
            const int f = sim_meas_row_band_family(&set->rows[j], queued ? queued[j] : 0);
            double lo, hi;
            if (f < 0)
                continue;
            if (!sim_band_interval(band, f, level_pct, &lo, &hi)) {
                (*no_band)++;
                continue;
            }
            family[j] = f;
            ratio[j] = set->rows[j].measured_s / pred[j];
            out[f].n++;
            out[f].below += ratio[j] < lo;
            out[f].above += ratio[j] > hi;
            sum_lo[f] += lo;
            sum_hi[f] += hi;
        }
    }
    for (int f = 0; st == SIM_OK && f < SIM_BAND_FAMILIES; f++) {
        if (out[f].n == 0)
            continue;
        size_t m = 0;
        for (size_t j = 0; j < set->n; j++)
            if (family[j] == f)
                sorted[m++] = ratio[j];
        qsort(sorted, m, sizeof(double), cmp_double);
        out[f].inside = out[f].n - out[f].below - out[f].above;
        out[f].ratio_lo = sum_lo[f] / (double)out[f].n;
        out[f].ratio_hi = sum_hi[f] / (double)out[f].n;
        out[f].ratio_median = sim_percentile_sorted(sorted, (int64_t)m, 50.0);
    }
cleanup:
    free(done);
    free(within);
    free(ratio);
    free(sorted);
    free(family);
    free(band);
    return st;
}
