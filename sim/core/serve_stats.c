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

/*
 * In-place ascending sort by a double key: quicksort with a median-of-three pivot, insertion
 * sort below 16 elements, heapsort past 2 log2(n) levels (introsort), so O(n log n) at worst,
 * with no allocation (the core's rule; qsort allocates) and no call per comparison. Equal keys
 * may end in any order: the percentiles read keys only (and an ITL entry's count at a key
 * counts the same wherever it lies among equal keys). The keys are finite.
 */
#define DEFINE_SORT(NAME, T, KEY)                                                                  \
    static void NAME##_swap(T *a, int64_t i, int64_t j)                                            \
    {                                                                                              \
        T t = a[i];                                                                                \
        a[i] = a[j];                                                                               \
        a[j] = t;                                                                                  \
    }                                                                                              \
    static void NAME##_sift(T *a, int64_t i, int64_t n)                                            \
    {                                                                                              \
        for (;;) {                                                                                 \
            int64_t c = 2 * i + 1;                                                                 \
            if (c >= n)                                                                            \
                return;                                                                            \
            if (c + 1 < n && KEY(a[c]) < KEY(a[c + 1]))                                            \
                c++;                                                                               \
            if (!(KEY(a[i]) < KEY(a[c])))                                                          \
                return;                                                                            \
            NAME##_swap(a, i, c);                                                                  \
            i = c;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    /* Median-of-three pivot, Hoare partition, n > 16: a[0..j] <= pivot <= a[j+1..n). */           \
    static int64_t NAME##_partition(T *a, int64_t n)                                               \
    {                                                                                              \
        const int64_t m = n / 2;                                                                   \
        if (KEY(a[m]) < KEY(a[0]))                                                                 \
            NAME##_swap(a, 0, m);                                                                  \
        if (KEY(a[n - 1]) < KEY(a[0]))                                                             \
            NAME##_swap(a, 0, n - 1);                                                              \
        if (KEY(a[n - 1]) < KEY(a[m]))                                                             \
            NAME##_swap(a, m, n - 1);                                                              \
        const double pivot = KEY(a[m]);                                                            \
        int64_t i = 0, j = n - 1;                                                                  \
        for (;;) {                                                                                 \
            while (KEY(a[i]) < pivot)                                                              \
                i++;                                                                               \
            while (pivot < KEY(a[j]))                                                              \
                j--;                                                                               \
            if (i >= j)                                                                            \
                return j;                                                                          \
            NAME##_swap(a, i++, j--);                                                              \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_intro(T *a, int64_t n, int depth)                                           \
    {                                                                                              \
        while (n > 16) {                                                                           \
            if (depth-- == 0) {                                                                    \
                for (int64_t i = n / 2 - 1; i >= 0; i--)                                           \
                    NAME##_sift(a, i, n);                                                          \
                for (int64_t e = n - 1; e > 0; e--) {                                              \
                    NAME##_swap(a, 0, e);                                                          \
                    NAME##_sift(a, 0, e);                                                          \
                }                                                                                  \
                return;                                                                            \
            }                                                                                      \
            const int64_t j = NAME##_partition(a, n);                                              \
            NAME##_intro(a + j + 1, n - j - 1, depth);                                             \
            n = j + 1;                                                                             \
        }                                                                                          \
        for (int64_t i = 1; i < n; i++)                                                            \
            for (int64_t j = i; j > 0 && KEY(a[j]) < KEY(a[j - 1]); j--)                           \
                NAME##_swap(a, j, j - 1);                                                          \
    }                                                                                              \
    static void NAME(T *a, int64_t n)                                                              \
    {                                                                                              \
        int depth = 0;                                                                             \
        for (int64_t k = n; k > 1; k >>= 1)                                                        \
            depth += 2;                                                                            \
        NAME##_intro(a, n, depth);                                                                 \
    }

#define KEY_DOUBLE(x) (x)
#define KEY_ITL(x)    ((x).itl_s)
DEFINE_SORT(sort_doubles, double, KEY_DOUBLE)
DEFINE_SORT(sort_itl, sim_itl_entry, KEY_ITL)

/*
 * Weighted selection (introselect): the key at weighted rank k (0 <= k < the total weight;
 * rank r covers the cumulative weights [W, W + w) of the sorted order) of a[0..n), found by
 * partitioning as NAME's sort does and keeping the part that holds rank k, O(n) expected; past
 * 2 log2(n) partitions, or when a partition makes no progress, the rest is sorted. a is
 * reordered. The weights are whole numbers (exact sums), so the key returned is the one a
 * full sort and a cumulative scan return. The percentiles need six ranks, not the order.
 */
#define DEFINE_SELECT(NAME, SORT, T, KEY, WEIGHT)                                                  \
    static double NAME(T *a, int64_t n, double k)                                                  \
    {                                                                                              \
        int depth = 0;                                                                             \
        for (int64_t m = n; m > 1; m >>= 1)                                                        \
            depth += 2;                                                                            \
        while (n > 16 && depth-- > 0) {                                                            \
            const int64_t j = SORT##_partition(a, n);                                              \
            if (j + 1 >= n)                                                                        \
                break; /* no progress: sort what is left */                                        \
            double wl = 0.0;                                                                       \
            for (int64_t q = 0; q <= j; q++)                                                       \
                wl += WEIGHT(a[q]);                                                                \
            if (k < wl) {                                                                          \
                n = j + 1;                                                                         \
            } else {                                                                               \
                k -= wl;                                                                           \
                a += j + 1;                                                                        \
                n -= j + 1;                                                                        \
            }                                                                                      \
        }                                                                                          \
        SORT(a, n);                                                                                \
        double cum = 0.0;                                                                          \
        for (int64_t q = 0; q < n; q++) {                                                          \
            cum += WEIGHT(a[q]);                                                                   \
            if (k < cum)                                                                           \
                return KEY(a[q]);                                                                  \
        }                                                                                          \
        return KEY(a[n - 1]);                                                                      \
    }

#define WEIGHT_ONE(x)   1.0
#define WEIGHT_COUNT(x) ((x).count)
DEFINE_SELECT(select_double, sort_doubles, double, KEY_DOUBLE, WEIGHT_ONE)
DEFINE_SELECT(select_itl, sort_itl, sim_itl_entry, KEY_ITL, WEIGHT_COUNT)

/* sim_percentile_sorted's value of v[0..n) without sorting it (v is reordered). */
static double percentile_of(double *v, int64_t n, double p)
{
    if (n <= 1)
        return n == 1 ? v[0] : 0.0;
    double pos = p / 100.0 * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    if (lo >= n - 1)
        return select_double(v, n, (double)(n - 1));
    double f = pos - (double)lo;
    const double a = select_double(v, n, (double)lo), b = select_double(v, n, (double)(lo + 1));
    return a + f * (b - a);
}

/* Mean and percentiles of v[0..n) (v is reordered). */
static sim_dist dist_of(double *v, int64_t n)
{
    sim_dist d = {0};
    if (n < 1)
        return d;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += v[i];
    d.mean = sum / (double)n;
    d.p50 = percentile_of(v, n, 50.0);
    d.p90 = percentile_of(v, n, 90.0);
    d.p99 = percentile_of(v, n, 99.0);
    return d;
}

/* numpy-style percentile of the weighted ITL list: interpolation between ranks. */
static double itl_percentile(sim_itl_entry *e, int64_t n, double total, double p)
{
    double pos = p / 100.0 * (total - 1.0);
    double lo = floor(pos);
    double a = select_itl(e, n, lo), b = select_itl(e, n, lo + 1.0 < total ? lo + 1.0 : lo);
    return a + (pos - lo) * (b - a);
}

sim_status sim_serve_stats_compute(const sim_request *req, int64_t n, sim_itl_entry *itl,
                                   int64_t n_itl, double slo_ttft_s, double slo_tpot_s,
                                   double client_path_s, double *scratch, sim_serve_stats *out)
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
        double ttft = r->first_token_s - r->arrival_s + client_path_s;
        double tpot = r->output_tokens > 1
                          ? (r->finish_s - r->first_token_s) / (double)(r->output_tokens - 1)
                          : 0.0;
        if ((slo_ttft_s <= 0.0 || ttft <= slo_ttft_s) && (slo_tpot_s <= 0.0 || tpot <= slo_tpot_s))
            out->n_good++;
    }
    out->n_requests = n;
    for (int64_t i = 0; i < n; i++)
        scratch[i] = req[i].first_token_s - req[i].arrival_s + client_path_s;
    out->ttft_s = dist_of(scratch, n);
    for (int64_t i = 0; i < n; i++)
        scratch[i] = req[i].finish_s - req[i].arrival_s + client_path_s;
    out->e2e_s = dist_of(scratch, n);
    for (int64_t i = 0; i < n; i++) {
        /* A request built outside a simulation has no first step (first_sched_s < 0): none. */
        const double q = req[i].first_sched_s - req[i].arrival_s;
        scratch[i] = req[i].first_sched_s >= 0.0 && q > 0.0 ? q : 0.0;
    }
    out->queue_s = dist_of(scratch, n);
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
        out->itl_s.mean = sum / total;
        out->itl_s.p50 = itl_percentile(itl, n_itl, total, 50.0);
        out->itl_s.p90 = itl_percentile(itl, n_itl, total, 90.0);
        out->itl_s.p99 = itl_percentile(itl, n_itl, total, 99.0);
    }
    /* The client path lies between the engine and the client at both ends of the run: once
     * more in the duration the client measures. */
    out->duration_s = last - first + client_path_s;
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

int sim_ttft_queued_means(double queue_mean_s, double ttft_mean_s)
{
    return ttft_mean_s > 0.0 && queue_mean_s >= SIM_TTFT_QUEUED_FRAC * ttft_mean_s;
}

int sim_serve_ttft_queued(const sim_serve_stats *st)
{
    return st->n_requests > 0 && sim_ttft_queued_means(st->queue_s.mean, st->ttft_s.mean);
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
