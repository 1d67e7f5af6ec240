/* meas_outlier.c - rows whose structure says "per-call constant" (see meas_pred.h,
 * sim_meas_call_constants, and docs/calibration.md, "Rows with a per-call constant"). */
#include "meas_pred.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A row of a length series: the row and its lengths' ratio, reduced (prompt : output). */
typedef struct series_ent {
    const sim_meas_row *r;
    size_t i;
    int64_t ratio_p, ratio_o;
} series_ent;

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int cmp_dbl(double a, double b) { return (a > b) - (a < b); }

/* Everything but the lengths: rows equal here differ only in how long they run. */
static int cmp_deployment(const series_ent *x, const series_ent *y)
{
    const sim_meas_row *a = x->r, *b = y->r;
    int c;
    if ((c = strcmp(a->hardware, b->hardware)) || (c = strcmp(a->model, b->model)) ||
        (c = strcmp(a->engine, b->engine)) || (c = strcmp(a->engine_version, b->engine_version)))
        return c;
    if ((c = cmp_i64(a->tp, b->tp)) || (c = cmp_i64(a->dp, b->dp)) || (c = cmp_i64(a->ep, b->ep)) ||
        (c = cmp_i64(a->dtype, b->dtype)) || (c = cmp_i64(a->kv_dtype, b->kv_dtype)) ||
        (c = cmp_i64(a->batch, b->batch)))
        return c;
    const sim_sched_cfg *s = &a->sched, *t = &b->sched;
    if ((c = cmp_i64(s->max_num_seqs, t->max_num_seqs)) ||
        (c = cmp_i64(s->max_num_batched_tokens, t->max_num_batched_tokens)) ||
        (c = cmp_i64(s->max_model_len, t->max_model_len)) ||
        (c = cmp_i64(s->block_size, t->block_size)) ||
        (c = cmp_dbl(s->gpu_memory_utilization, t->gpu_memory_utilization)) ||
        (c = cmp_i64(s->enable_chunked_prefill, t->enable_chunked_prefill)) ||
        (c = cmp_i64(s->enforce_eager, t->enforce_eager)) || (c = cmp_i64(s->usage, t->usage)) ||
        (c = cmp_i64(s->disable_hybrid_kv, t->disable_hybrid_kv)) ||
        (c = cmp_i64(s->async_scheduling, t->async_scheduling)) ||
        (c = cmp_i64(s->enable_prefix_caching, t->enable_prefix_caching)))
        return c;
    if ((c = cmp_i64(x->ratio_p, y->ratio_p)) || (c = cmp_i64(x->ratio_o, y->ratio_o)))
        return c;
    return 0;
}

static int cmp_ent(const void *pa, const void *pb)
{
    const series_ent *x = pa, *y = pb;
    int c = cmp_deployment(x, y);
    if (c)
        return c;
    if ((c = cmp_i64(x->r->output_tokens, y->r->output_tokens)))
        return c;
    return cmp_i64((int64_t)x->i, (int64_t)y->i); /* a total order: the same result every run */
}

sim_status sim_meas_call_constants(const sim_meas_set *set, double *const_s, double *const_frac)
{
    for (size_t i = 0; i < set->n; i++)
        const_s[i] = const_frac[i] = 0.0;
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++)
        n += set->rows[i].kind == SIM_MEAS_OFFLINE_BATCH;
    if (n < SIM_CALL_CONST_MIN_LENGTHS)
        return SIM_OK;
    series_ent *e = malloc(n * sizeof(*e));
    if (!e)
        return SIM_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < set->n; i++) {
        const sim_meas_row *r = &set->rows[i];
        if (r->kind != SIM_MEAS_OFFLINE_BATCH)
            continue;
        const int64_t g = gcd64(r->prompt_tokens, r->output_tokens); /* both >= 1 */
        e[k++] = (series_ent){r, i, r->prompt_tokens / g, r->output_tokens / g};
    }
    qsort(e, n, sizeof(*e), cmp_ent);
    for (size_t a = 0, b; a < n; a = b) {
        b = a + 1;
        while (b < n && cmp_deployment(&e[a], &e[b]) == 0)
            b++;
        /* One series: the same deployment and batch, lengths in one ratio. Least squares of
         * t = c + k x output_tokens over its rows (x centred, so the sums stay exact enough). */
        int distinct = 1;
        double mx = 0.0, mt = 0.0, t_min = e[a].r->measured_s;
        for (size_t j = a; j < b; j++) {
            distinct += j > a && e[j].r->output_tokens != e[j - 1].r->output_tokens;
            mx += (double)e[j].r->output_tokens;
            mt += e[j].r->measured_s;
            if (e[j].r->measured_s < t_min)
                t_min = e[j].r->measured_s;
        }
        if (distinct < SIM_CALL_CONST_MIN_LENGTHS)
            continue;
        const double m = (double)(b - a);
        mx /= m;
        mt /= m;
        double sxx = 0.0, sxt = 0.0;
        for (size_t j = a; j < b; j++) {
            const double dx = (double)e[j].r->output_tokens - mx;
            sxx += dx * dx;
            sxt += dx * (e[j].r->measured_s - mt);
        }
        const double slope = sxt / sxx; /* sxx > 0: at least three distinct lengths */
        const double c = mt - slope * mx;
        if (!(slope > 0.0) || !(c > SIM_CALL_CONST_FRAC * t_min))
            continue;
        for (size_t j = a; j < b; j++) {
            const_s[e[j].i] = c;
            const_frac[e[j].i] = c / t_min;
        }
    }
    free(e);
    return SIM_OK;
}
