/* bench_vllm.c - see bench_vllm.h. */
#include "bench_vllm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json_util.h"

/* Counts and lengths accepted: those of measurement rows (MEASUREMENTS.md, meas_json.c). */
#define VB_COUNT_MAX (INT64_C(1) << 40)
#define VB_LEN_MAX   (INT64_C(1) << 24)
/* A statistic in milliseconds: 0 to about a year. */
#define VB_MS_MAX 3.2e10

static const char *const family_key[SIM_VB_FAMILIES] = {"ttft", "tpot", "e2el"};
static const char *const stat_key[SIM_VB_STATS] = {"mean", "median", "p90", "p99"};

/* An array of n integers in [lo, hi] at key (absent: *n = 0), with its extremes. */
static sim_status int_list(const sim_jctx *ctx, const cJSON *root, const char *key, int64_t lo,
                           int64_t hi, int64_t *n, int64_t *min, int64_t *max)
{
    *n = 0;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!a || cJSON_IsNull(a))
        return SIM_OK;
    if (!cJSON_IsArray(a))
        return sim_j_fail(ctx, key, "wrong type (expected an array of token counts)");
    int64_t k = 0;
    for (const cJSON *v = a->child; v; v = v->next, k++) {
        const double d = cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
        if (!(d >= (double)lo && d <= (double)hi && d == floor(d)))
            return sim_j_fail(ctx, key,
                              "element %lld: expected a whole number of tokens from %lld to %lld",
                              (long long)k, (long long)lo, (long long)hi);
        const int64_t x = (int64_t)d;
        *min = k == 0 || x < *min ? x : *min;
        *max = k == 0 || x > *max ? x : *max;
    }
    *n = k;
    return SIM_OK;
}

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *outp)
{
    sim_vllm_serve *o = outp;
    memset(o, 0, sizeof(*o));
    o->burstiness = 1.0;
    o->max_concurrency = -1;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL,
                          "top level: expected the JSON object vllm bench serve "
                          "--save-result writes");
    sim_status st = sim_j_str(ctx, root, "model_id", 0, o->model_id, sizeof(o->model_id), NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "num_prompts", 1, 1, VB_COUNT_MAX, &o->num_prompts, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "completed", 1, 0, VB_COUNT_MAX, &o->completed, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "failed", 0, 0, VB_COUNT_MAX, &o->failed, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "total_input_tokens", 1, 0, VB_COUNT_MAX, &o->total_input_tokens,
                       NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "total_output_tokens", 1, 0, VB_COUNT_MAX,
                       &o->total_output_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "burstiness", 0, 1e-3, 1e3, &o->burstiness, NULL);
    if (st != SIM_OK)
        return st;
    /* request_rate: a number, or the string "inf" (main_async writes "inf" for infinity). */
    const cJSON *rr = cJSON_GetObjectItemCaseSensitive(root, "request_rate");
    if (!rr)
        return sim_j_fail(ctx, "request_rate", "required field missing");
    if (cJSON_IsString(rr) && strcmp(rr->valuestring, "inf") == 0)
        o->rate_inf = 1;
    else if (cJSON_IsNumber(rr) && rr->valuedouble > 0.0 && rr->valuedouble <= 1e9)
        o->request_rate = rr->valuedouble;
    else
        return sim_j_fail(ctx, "request_rate",
                          "expected requests per second (above 0, at most 1e9) or \"inf\"");
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(root, "max_concurrency");
    if (mc && !cJSON_IsNull(mc)) {
        st = sim_j_int(ctx, root, "max_concurrency", 1, 1, 1 << 20, &o->max_concurrency, NULL);
        if (st != SIM_OK)
            return st;
    }
    const cJSON *ru = cJSON_GetObjectItemCaseSensitive(root, "ramp_up_strategy");
    o->ramp_up = ru && !cJSON_IsNull(ru);
    int64_t n_in = 0, n_out = 0, lo, hi;
    st = int_list(ctx, root, "input_lens", 1, VB_LEN_MAX, &n_in, &o->in_min, &o->in_max);
    if (st == SIM_OK)
        st = int_list(ctx, root, "output_lens", 0, VB_LEN_MAX, &n_out, &lo, &hi);
    if (st != SIM_OK)
        return st;
    if (n_in != n_out)
        return sim_j_fail(ctx, n_in ? "output_lens" : "input_lens",
                          "%lld input_lens but %lld output_lens (expected one of each a request)",
                          (long long)n_in, (long long)n_out);
    o->n_lens = n_in;
    o->out_min = n_out ? lo : 0;
    o->out_max = n_out ? hi : 0;
    int any = 0;
    for (int f = 0; f < SIM_VB_FAMILIES; f++)
        for (int s = 0; s < SIM_VB_STATS; s++) {
            char key[64];
            snprintf(key, sizeof(key), "%s_%s_ms", stat_key[s], family_key[f]);
            double ms = 0.0;
            int present = 0;
            st = sim_j_num(ctx, root, key, 0, 0.0, VB_MS_MAX, &ms, &present);
            if (st != SIM_OK)
                return st;
            o->has[f][s] = present;
            o->stat_s[f][s] = ms / 1000.0;
            any |= present;
        }
    if (!any)
        return sim_j_fail(ctx, NULL,
                          "no statistic a measurement row can hold (mean_, median_, p90_ or "
                          "p99_ of ttft, tpot or e2el, in ms): is it a vllm bench serve "
                          "--save-result file?");
    return SIM_OK;
}

sim_status sim_vllm_serve_load(const char *path, sim_vllm_serve *out, struct sim_err *err)
{
    return sim_json_load_file(path, parse, out, err);
}

typedef struct latency_out {
    double avg_s;
    int64_t n;
} latency_out;

static sim_status parse_latency(const sim_jctx *ctx, const cJSON *root, void *outp)
{
    latency_out *o = outp;
    o->avg_s = 0.0;
    o->n = 0;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL,
                          "top level: expected the JSON object vllm bench latency "
                          "--output-json writes");
    /* A batch takes from a nanosecond to a year (MEASUREMENTS.md's measured_s range). */
    sim_status st = sim_j_num(ctx, root, "avg_latency", 1, 1e-9, 3.2e7, &o->avg_s, NULL);
    if (st != SIM_OK)
        return st;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "latencies");
    if (!a || cJSON_IsNull(a))
        return SIM_OK;
    if (!cJSON_IsArray(a))
        return sim_j_fail(ctx, "latencies", "wrong type (expected an array of seconds)");
    if (!a->child) /* latency.py runs num_iters >= 1 and writes each one's time */
        return sim_j_fail(ctx, "latencies", "empty (expected the time of each iteration)");
    double sum = 0.0;
    for (const cJSON *v = a->child; v; v = v->next, o->n++) {
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1e-9 && v->valuedouble <= 3.2e7))
            return sim_j_fail(ctx, "latencies", "element %lld: expected seconds from 1e-9 to 3.2e7",
                              (long long)o->n);
        sum += v->valuedouble;
    }
    if (o->n > 0 && fabs(sum / (double)o->n - o->avg_s) > 1e-6 * o->avg_s)
        return sim_j_fail(ctx, "avg_latency",
                          "%.17g s is not the mean of the %lld latencies (%.17g s)", o->avg_s,
                          (long long)o->n, sum / (double)o->n);
    return SIM_OK;
}

sim_status sim_vllm_latency_load(const char *path, double *avg_s, int64_t *n_iters,
                                 struct sim_err *err)
{
    latency_out o = {0.0, 0};
    sim_status st = sim_json_load_file(path, parse_latency, &o, err);
    *avg_s = o.avg_s;
    *n_iters = o.n;
    return st;
}

static sim_status parse_throughput(const sim_jctx *ctx, const cJSON *root, void *outp)
{
    sim_vllm_throughput *o = outp;
    *o = (sim_vllm_throughput){0};
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL,
                          "top level: expected the JSON object vllm bench throughput "
                          "--output-json writes");
    sim_status st = sim_j_num(ctx, root, "elapsed_time", 1, 1e-9, 3.2e7, &o->elapsed_s, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "num_requests", 1, 1, 1 << 20, &o->num_requests, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "total_num_tokens", 1, 1, INT64_C(1) << 40, &o->total_tokens,
                       NULL);
    /* The rates it derived from them, when there: the same numbers or a corrupt file. */
    static const char *const rate_key[2] = {"requests_per_second", "tokens_per_second"};
    for (int i = 0; st == SIM_OK && i < 2; i++) {
        const double want =
            (double)(i == 0 ? o->num_requests : o->total_tokens) / o->elapsed_s; /* >= 1e-9 s */
        double v;
        int present = 0;
        st = sim_j_num(ctx, root, rate_key[i], 0, 0.0, 1e15, &v, &present);
        if (st == SIM_OK && present && fabs(v - want) > 1e-6 * want)
            return sim_j_fail(ctx, rate_key[i],
                              "%.17g is not the file's count / elapsed_time (%.17g)", v, want);
    }
    return st;
}

sim_status sim_vllm_throughput_load(const char *path, sim_vllm_throughput *out, struct sim_err *err)
{
    return sim_json_load_file(path, parse_throughput, out, err);
}
