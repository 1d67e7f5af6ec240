/* bench_aiperf.c - see bench_aiperf.h. */
#include "bench_aiperf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json_util.h"

/* Counts and lengths accepted: those of measurement rows (MEASUREMENTS.md, meas_json.c). */
#define AP_COUNT_MAX 1099511627776.0 /* 2^40 */
#define AP_LEN_MAX   16777216.0      /* 2^24 tokens */
/* A statistic: 0 to about a year, in seconds. */
#define AP_S_MAX 3.2e7

static const char *const family_key[SIM_VB_FAMILIES] = {"time_to_first_token",
                                                        "inter_token_latency", "request_latency"};
static const char *const stat_key[SIM_VB_STATS] = {"avg", "p50", "p90", "p99"};

/* ctx narrowed to the object at key of parent (messages "key.field"). */
static sim_jctx sub(const sim_jctx *parent, const char *key, char *prefix, size_t cap)
{
    sim_jctx c = *parent;
    c.scope = sim_j_locate(parent, key);
    snprintf(prefix, cap, "%s%s.", parent->prefix ? parent->prefix : "", key);
    c.prefix = prefix;
    return c;
}

/* The object at key: NULL when absent or null; a failure when it is another type. */
static sim_status object_at(const sim_jctx *ctx, const cJSON *obj, const char *key,
                            const cJSON **out)
{
    *out = NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return SIM_OK;
    if (!cJSON_IsObject(v))
        return sim_j_fail(ctx, key, "wrong type (expected an object)");
    *out = v;
    return SIM_OK;
}

/* Seconds per unit of a time metric's "unit" (aiperf's MetricTimeUnit tags). */
static double unit_s(const char *u)
{
    return strcmp(u, "ns") == 0    ? 1e-9
           : strcmp(u, "us") == 0  ? 1e-6
           : strcmp(u, "ms") == 0  ? 1e-3
           : strcmp(u, "sec") == 0 ? 1.0
                                   : 0.0;
}

/* A time metric: its avg, p50, p90, p99 in seconds. */
static sim_status time_metric(const sim_jctx *ctx, const cJSON *root, int f, sim_aiperf_run *o)
{
    const cJSON *m;
    sim_status st = object_at(ctx, root, family_key[f], &m);
    if (st != SIM_OK || !m)
        return st;
    char prefix[96], unit[16];
    const sim_jctx c = sub(ctx, family_key[f], prefix, sizeof(prefix));
    st = sim_j_str(&c, m, "unit", 1, unit, sizeof(unit), NULL);
    if (st != SIM_OK)
        return st;
    const double per = unit_s(unit);
    if (per == 0.0)
        return sim_j_fail(&c, "unit", "unknown time unit '%s' (expected ns, us, ms or sec)", unit);
    for (int s = 0; s < SIM_VB_STATS; s++) {
        double v = 0.0;
        int present = 0;
        st = sim_j_num(&c, m, stat_key[s], 0, 0.0, AP_S_MAX / per, &v, &present);
        if (st != SIM_OK)
            return st;
        o->has[f][s] = present;
        o->stat_s[f][s] = v * per;
    }
    return SIM_OK;
}

/* A count metric's avg ({"unit": "requests", "avg": n}), a whole number; -1 when absent. */
static sim_status count_metric(const sim_jctx *ctx, const cJSON *root, const char *key,
                               int64_t *out)
{
    *out = -1;
    const cJSON *m;
    sim_status st = object_at(ctx, root, key, &m);
    if (st != SIM_OK || !m)
        return st;
    char prefix[96];
    const sim_jctx c = sub(ctx, key, prefix, sizeof(prefix));
    return sim_j_int(&c, m, "avg", 1, 0, (int64_t)AP_COUNT_MAX, out, NULL);
}

/* A length metric in tokens: avg (required), min and max (0 when absent). */
static sim_status length_metric(const sim_jctx *ctx, const cJSON *root, const char *key,
                                double *avg, double *min, double *max)
{
    const cJSON *m;
    sim_status st = object_at(ctx, root, key, &m);
    if (st != SIM_OK)
        return st;
    if (!m)
        return sim_j_fail(ctx, key,
                          "required field missing (the mean length of the run's requests, in "
                          "tokens)");
    char prefix[96];
    const sim_jctx c = sub(ctx, key, prefix, sizeof(prefix));
    *min = *max = 0.0;
    st = sim_j_num(&c, m, "avg", 1, 1.0, AP_LEN_MAX, avg, NULL);
    if (st == SIM_OK)
        st = sim_j_num(&c, m, "min", 0, 0.0, AP_LEN_MAX, min, NULL);
    if (st == SIM_OK)
        st = sim_j_num(&c, m, "max", 0, 0.0, AP_LEN_MAX, max, NULL);
    if (st == SIM_OK && (*min > *avg || (*max > 0.0 && *max < *avg)))
        return sim_j_fail(&c, "avg", "%g is outside [min %g, max %g]", *avg, *min, *max);
    return st;
}

/* The first name of a model_names array at key of obj ("" when absent). */
static sim_status first_name(const sim_jctx *ctx, const cJSON *obj, const char *key, char *out,
                             size_t cap)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!a || cJSON_IsNull(a))
        return SIM_OK;
    if (!cJSON_IsArray(a) || (a->child && !cJSON_IsString(a->child)))
        return sim_j_fail(ctx, key, "wrong type (expected an array of model names)");
    if (!a->child)
        return SIM_OK;
    const char *name = a->child->valuestring;
    const size_t n = strlen(name);
    if (sim_text_unsafe(name, n) < n)
        return sim_j_fail(ctx, key,
                          "element 0: not printable text (a control character or "
                          "invalid UTF-8)");
    snprintf(out, cap, "%s", name);
    return SIM_OK;
}

/* aiperf's input_config: loadgen, input.fixed_schedule, endpoint.model_names. */
static sim_status aiperf_load(const sim_jctx *ctx, const cJSON *ic, const cJSON *lg,
                              sim_aiperf_run *o)
{
    char prefix[96], p2[96];
    snprintf(o->tool, sizeof(o->tool), "aiperf");
    const sim_jctx c = sub(ctx, "loadgen", prefix, sizeof(prefix));
    int present = 0;
    sim_status st = SIM_OK;
    const cJSON *conc = cJSON_GetObjectItemCaseSensitive(lg, "concurrency");
    if (conc && !cJSON_IsNull(conc))
        st = sim_j_int(&c, lg, "concurrency", 1, 1, 1 << 20, &o->concurrency, NULL);
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(lg, "request_rate");
    if (st == SIM_OK && rate && !cJSON_IsNull(rate))
        st = sim_j_num(&c, lg, "request_rate", 1, 1e-9, 1e9, &o->request_rate, NULL);
    if (st == SIM_OK)
        st =
            sim_j_str(&c, lg, "request_rate_mode", 0, o->rate_mode, sizeof(o->rate_mode), &present);
    double cancel = 0.0;
    if (st == SIM_OK)
        st = sim_j_num(&c, lg, "request_cancellation_rate", 0, 0.0, 100.0, &cancel, NULL);
    if (st != SIM_OK)
        return st;
    if (cancel > 0.0)
        return sim_j_fail(&c, "request_cancellation_rate",
                          "%g%% of the requests were cancelled: a simulation cannot pick them "
                          "out (rerun without cancellation)",
                          cancel);
    if (present && strcmp(o->rate_mode, "poisson") != 0 &&
        strcmp(o->rate_mode, "concurrency_burst") != 0)
        return sim_j_fail(&c, "request_rate_mode",
                          "'%s': rows describe Poisson arrivals or a closed loop (poisson or "
                          "concurrency_burst)",
                          o->rate_mode);
    if (o->request_rate > 0.0 && o->concurrency > 0)
        return sim_j_fail(&c, "concurrency",
                          "%lld with request_rate %g: an open loop capped at a concurrency is "
                          "not a workload a row can describe",
                          (long long)o->concurrency, o->request_rate);
    if (o->request_rate > 0.0 && o->completed < 1)
        return sim_j_fail(&c, "request_rate",
                          "an open loop's rows need the number of requests it sent, and the "
                          "file has no request_count");
    /* user_config.py: without a rate or a concurrency, one client. */
    if (o->request_rate == 0.0 && o->concurrency == 0)
        o->concurrency = 1;
    const cJSON *in, *ep;
    st = object_at(ctx, ic, "input", &in);
    if (st == SIM_OK && in) {
        const sim_jctx ci = sub(ctx, "input", p2, sizeof(p2));
        int fixed = 0;
        st = sim_j_bool(&ci, in, "fixed_schedule", 0, &fixed, NULL);
        if (st == SIM_OK && fixed)
            return sim_j_fail(&ci, "fixed_schedule",
                              "a fixed schedule replays a trace's timestamps, which this file "
                              "does not hold (import the trace as a workload instead)");
    }
    if (st == SIM_OK)
        st = object_at(ctx, ic, "endpoint", &ep);
    if (st == SIM_OK && ep) {
        const sim_jctx ce = sub(ctx, "endpoint", p2, sizeof(p2));
        st = first_name(&ce, ep, "model_names", o->model_id, sizeof(o->model_id));
    }
    return st;
}

/* genai-perf's input_config: perf_analyzer.stimulus, model_names. */
static sim_status genai_perf_load(const sim_jctx *ctx, const cJSON *ic, const cJSON *pa,
                                  sim_aiperf_run *o)
{
    char prefix[96], p2[128];
    snprintf(o->tool, sizeof(o->tool), "genai-perf");
    const sim_jctx c = sub(ctx, "perf_analyzer", prefix, sizeof(prefix));
    const cJSON *stim;
    sim_status st = object_at(&c, pa, "stimulus", &stim);
    if (st == SIM_OK && !stim)
        return sim_j_fail(&c, "stimulus", "required field missing (the load the run sent)");
    if (st != SIM_OK)
        return st;
    const sim_jctx cs = sub(&c, "stimulus", p2, sizeof(p2));
    int present = 0;
    st = sim_j_int(&cs, stim, "concurrency", 0, 1, 1 << 20, &o->concurrency, &present);
    if (st == SIM_OK && !present)
        return sim_j_fail(
            &cs, cJSON_GetObjectItemCaseSensitive(stim, "request_rate") ? "request_rate" : NULL,
            "only a concurrency stimulus is imported (perf_analyzer spaces a "
            "request rate by its --request-distribution, which the file does not "
            "say)");
    if (st == SIM_OK)
        st = first_name(ctx, ic, "model_names", o->model_id, sizeof(o->model_id));
    return st;
}

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *outp)
{
    sim_aiperf_run *o = outp;
    memset(o, 0, sizeof(*o));
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL,
                          "top level: expected the JSON object of aiperf's "
                          "profile_export_aiperf.json (or genai-perf's)");
    int cancelled = 0;
    sim_status st = sim_j_bool(ctx, root, "was_cancelled", 0, &cancelled, NULL);
    if (st == SIM_OK && cancelled)
        return sim_j_fail(ctx, "was_cancelled",
                          "the run was cancelled: its statistics cover part of it");
    for (int f = 0; st == SIM_OK && f < SIM_VB_FAMILIES; f++)
        st = time_metric(ctx, root, f, o);
    if (st == SIM_OK)
        st = count_metric(ctx, root, "request_count", &o->completed);
    if (st == SIM_OK)
        st = count_metric(ctx, root, "error_request_count", &o->failed);
    if (st == SIM_OK)
        st = length_metric(ctx, root, "input_sequence_length", &o->isl_avg, &o->isl_min,
                           &o->isl_max);
    if (st == SIM_OK)
        st = length_metric(ctx, root, "output_sequence_length", &o->osl_avg, &o->osl_min,
                           &o->osl_max);
    if (st != SIM_OK)
        return st;
    if (o->failed > 0)
        return sim_j_fail(ctx, "error_request_count",
                          "%lld requests failed; the statistics are of the others only, which a "
                          "simulation of the run cannot pick out (rerun without failures)",
                          (long long)o->failed);
    o->failed = 0;
    int any = 0;
    for (int f = 0; f < SIM_VB_FAMILIES; f++)
        for (int s = 0; s < SIM_VB_STATS; s++)
            any |= o->has[f][s];
    if (!any)
        return sim_j_fail(ctx, NULL,
                          "no statistic a measurement row can hold (avg, p50, p90 or p99 of "
                          "time_to_first_token, inter_token_latency or request_latency): is it "
                          "an aiperf or genai-perf profile export?");
    const cJSON *ic, *lg = NULL, *pa = NULL;
    st = object_at(ctx, root, "input_config", &ic);
    if (st == SIM_OK && !ic)
        return sim_j_fail(ctx, "input_config",
                          "required field missing (the run's configuration: the load it sent)");
    char prefix[32];
    const sim_jctx c = sub(ctx, "input_config", prefix, sizeof(prefix));
    if (st == SIM_OK)
        st = object_at(&c, ic, "loadgen", &lg);
    if (st == SIM_OK)
        st = object_at(&c, ic, "perf_analyzer", &pa);
    if (st != SIM_OK)
        return st;
    if (lg)
        return aiperf_load(&c, ic, lg, o);
    if (pa)
        return genai_perf_load(&c, ic, pa, o);
    return sim_j_fail(ctx, "input_config",
                      "neither loadgen (aiperf) nor perf_analyzer (genai-perf): the load the "
                      "run sent is not in the file");
}

sim_status sim_aiperf_load(const char *path, sim_aiperf_run *out, struct sim_err *err)
{
    return sim_json_load_file(path, parse, out, err);
}
