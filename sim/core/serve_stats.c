/*
 * serve_stats.c - means and percentiles of served requests' latencies, and the
 * names of the statistics (see serve_stats.h).
 */
#include "serve_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double sim_percentile_sorted(const double *v, int64_t n, double p)
{
    if (n <= 1)
        return n == 1 ? v[0] : 0.0;
    double pos = p / 100.0 * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    if (lo >= n - 1)
        return v[n - 1];
    double f = pos - (double)lo;
    return v[lo] + f * (v[lo + 1] - v[lo]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_itl(const void *a, const void *b)
{
    double x = ((const sim_itl_entry *)a)->itl_s, y = ((const sim_itl_entry *)b)->itl_s;
    return (x > y) - (x < y);
}

/* Mean and percentiles of v[0..n) (sorted in place). */
static sim_dist dist_of(double *v, int64_t n)
{
    sim_dist d = {0};
    if (n < 1)
        return d;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += v[i];
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    d.mean = sum / (double)n;
    d.p50 = sim_percentile_sorted(v, n, 50.0);
    d.p90 = sim_percentile_sorted(v, n, 90.0);
    d.p99 = sim_percentile_sorted(v, n, 99.0);
    return d;
}

/* The value at rank k (0-based) of the run-length encoded, sorted ITL list. */
static double itl_at(const sim_itl_entry *e, int64_t n, double k)
{
    double cum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        cum += e[i].count;
        if (k < cum)
            return e[i].itl_s;
    }
    return e[n - 1].itl_s;
}

/* numpy-style percentile of the weighted ITL list: interpolation between ranks. */
static double itl_percentile(const sim_itl_entry *e, int64_t n, double total, double p)
{
    double pos = p / 100.0 * (total - 1.0);
    double lo = floor(pos);
    double a = itl_at(e, n, lo), b = itl_at(e, n, lo + 1.0 < total ? lo + 1.0 : lo);
    return a + (pos - lo) * (b - a);
}

sim_status sim_serve_stats_compute(const sim_request *req, int64_t n, sim_itl_entry *itl,
                                   int64_t n_itl, double slo_ttft_s, double slo_tpot_s,
                                   double *scratch, sim_serve_stats *out)
{
    *out = (sim_serve_stats){0};
    if (n < 1)
        return SIM_EINVAL;
    double first = req[0].arrival_s, last = req[0].finish_s, out_tokens = 0.0, all_tokens = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const sim_request *r = &req[i];
        if (r->generated < r->output_tokens || r->finish_s < r->arrival_s)
            return SIM_EINVAL;
        first = r->arrival_s < first ? r->arrival_s : first;
        last = r->finish_s > last ? r->finish_s : last;
        out_tokens += (double)r->output_tokens;
        all_tokens += (double)(r->prompt_tokens + r->output_tokens);
        double ttft = r->first_token_s - r->arrival_s;
        double tpot = r->output_tokens > 1
                          ? (r->finish_s - r->first_token_s) / (double)(r->output_tokens - 1)
                          : 0.0;
        if ((slo_ttft_s <= 0.0 || ttft <= slo_ttft_s) && (slo_tpot_s <= 0.0 || tpot <= slo_tpot_s))
            out->n_good++;
    }
    out->n_requests = n;
    for (int64_t i = 0; i < n; i++)
        scratch[i] = req[i].first_token_s - req[i].arrival_s;
    out->ttft_s = dist_of(scratch, n);
    for (int64_t i = 0; i < n; i++)
        scratch[i] = req[i].finish_s - req[i].arrival_s;
    out->e2e_s = dist_of(scratch, n);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (req[i].output_tokens > 1)
            scratch[k++] =
                (req[i].finish_s - req[i].first_token_s) / (double)(req[i].output_tokens - 1);
    out->tpot_s = dist_of(scratch, k);
    if (itl && n_itl > 0) {
        double total = 0.0, sum = 0.0;
        for (int64_t i = 0; i < n_itl; i++) {
            total += itl[i].count;
            sum += itl[i].count * itl[i].itl_s;
        }
        qsort(itl, (size_t)n_itl, sizeof(*itl), cmp_itl);
        out->itl_s.mean = sum / total;
        out->itl_s.p50 = itl_percentile(itl, n_itl, total, 50.0);
        out->itl_s.p90 = itl_percentile(itl, n_itl, total, 90.0);
        out->itl_s.p99 = itl_percentile(itl, n_itl, total, 99.0);
    }
    out->duration_s = last - first;
    if (out->duration_s > 0.0) {
        out->request_throughput_per_s = (double)n / out->duration_s;
        out->output_tokens_per_s = out_tokens / out->duration_s;
        out->total_tokens_per_s = all_tokens / out->duration_s;
        out->goodput_per_s = (double)out->n_good / out->duration_s;
    }
    return SIM_OK;
}

static const char *const metric_names[SIM_METRIC_COUNT] = {
#define XX(e, name) name,
    SIM_SERVE_METRICS(XX)
#undef XX
};

const char *sim_serve_metric_name(sim_serve_metric m)
{
    return (int)m >= 0 && m < SIM_METRIC_COUNT ? metric_names[m] : "?";
}

sim_status sim_serve_metric_parse(const char *name, sim_serve_metric *out)
{
    for (int i = 0; i < SIM_METRIC_COUNT; i++)
        if (strcmp(name, metric_names[i]) == 0) {
            *out = (sim_serve_metric)i;
            return SIM_OK;
        }
    return SIM_EINVAL;
}

double sim_serve_stats_metric(const sim_serve_stats *st, sim_serve_metric m)
{
    const sim_dist *d = m < SIM_METRIC_TPOT_MEAN  ? &st->ttft_s
                        : m < SIM_METRIC_E2E_MEAN ? &st->tpot_s
                                                  : &st->e2e_s;
    switch ((int)m % 4) {
    case 0:
        return d->mean;
    case 1:
        return d->p50;
    case 2:
        return d->p90;
    default:
        return d->p99;
    }
}
