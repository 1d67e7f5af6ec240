/*
 * workload.c - generated workloads: lengths, arrivals and the generator they are
 * drawn from (see workload.h).
 */
#include "workload.h"

#include <math.h>

int64_t sim_workload_default_requests(const sim_workload_spec *spec)
{
    return spec->arrival == SIM_ARRIVAL_CLOSED ? 10 * spec->concurrency : 1000;
}

int64_t sim_workload_default_warmup(const sim_workload_spec *spec)
{
    (void)spec; /* see workload.h: the measured phase starts on an idle engine */
    return 0;
}

/* splitmix64 (Steele, Lea and Flood 2014): a small, well-mixed generator. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double next_unit(uint64_t *s) { return ((double)(next_u64(s) >> 11) + 0.5) * 0x1.0p-53; }

static double next_normal(uint64_t *s)
{
    /* Box-Muller; one of the pair is enough here. */
    double u1 = next_unit(s), u2 = next_unit(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Gamma(shape k, scale 1): Marsaglia and Tsang (2000), with the k < 1 boost. */
static double next_gamma(uint64_t *s, double k)
{
    if (k < 1.0)
        return next_gamma(s, k + 1.0) * pow(next_unit(s), 1.0 / k);
    const double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = next_normal(s), v = 1.0 + c * x;
        if (v <= 0.0)
            continue;
        v = v * v * v;
        double u = next_unit(s);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

static int64_t draw_len(uint64_t *s, int64_t mean, double r)
{
    if (r <= 0.0)
        return mean;
    int64_t lo = (int64_t)floor((double)mean * (1.0 - r));
    int64_t hi = (int64_t)floor((double)mean * (1.0 + r));
    if (lo < 1)
        lo = 1;
    if (hi < lo)
        hi = lo;
    return lo + (int64_t)(next_unit(s) * (double)(hi - lo + 1));
}

/* A generator of its own for item k of a stream tag, from the workload's seed. */
static uint64_t sub_seed(uint64_t seed, uint64_t tag, uint64_t k)
{
    uint64_t s = seed ^ (tag * UINT64_C(0xD6E8FEB86659FD93));
    s += k * UINT64_C(0x9E3779B97F4A7C15);
    return next_u64(&s);
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The pool entry of request i: position i mod K of pass i / K, whose order is the
 * permutation q -> (a q + b) mod K with a coprime to K, drawn for that pass. Every pass visits
 * every entry once (aiperf's "shuffle" sampling: without replacement, a new order after each
 * pass), without memory for a shuffled list. */
static int64_t pool_entry(uint64_t seed, int64_t i, int64_t k)
{
    const uint64_t kk = (uint64_t)k, pass = (uint64_t)(i / k), q = (uint64_t)(i % k);
    uint64_t s = sub_seed(seed, 1, pass);
    uint64_t a = kk > 1 ? 1 + next_u64(&s) % (kk - 1) : 1;
    while (gcd_u64(a, kk) != 1)
        a = a + 1 < kk ? a + 1 : 1;
    const uint64_t b = next_u64(&s) % kk;
    /* a q + b without overflow: a, q < K <= 2^31 keep a q below 2^62. */
    return (int64_t)((a % kk * q + b) % kk);
}

void sim_workload_generate(const sim_workload_spec *spec, sim_request *req, int64_t n)
{
    uint64_t s = spec->seed;
    double t = 0.0;
    for (int64_t i = 0; i < n; i++) {
        req[i] = (sim_request){0};
        req[i].prompt_tokens = draw_len(&s, spec->prompt_tokens, spec->range_ratio);
        req[i].output_tokens = draw_len(&s, spec->output_tokens, spec->range_ratio);
        if (spec->distinct_prompts > 0) {
            const int64_t e = pool_entry(spec->seed, i, spec->distinct_prompts);
            uint64_t es = sub_seed(spec->seed, 2, (uint64_t)e);
            req[i].prompt_tokens = draw_len(&es, spec->prompt_tokens, spec->range_ratio);
            req[i].prefix_group = e;
            req[i].prefix_tokens = req[i].prompt_tokens;
        } else if (spec->prefix_tokens > 0) {
            req[i].prefix_tokens = spec->prefix_tokens < req[i].prompt_tokens
                                       ? spec->prefix_tokens
                                       : req[i].prompt_tokens;
        }
        if (spec->arrival == SIM_ARRIVAL_POISSON) {
            req[i].arrival_s = t;
            const double k = spec->burstiness;
            t += next_gamma(&s, k) / (spec->rate_per_s * k);
        }
    }
}
