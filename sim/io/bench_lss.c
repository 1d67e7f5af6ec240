/* bench_lss.c - LLMServingSim's per-request benchmark file (see bench_lss.h). */
#include "bench_lss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json_util.h"
#include "serve_stats.h"
#include "trace_json.h"

/* One request as the file gives it. */
typedef struct lss_req {
    double arrival, queued, scheduled, first, last;
    int has_arrival;
    int64_t input, output;
} lss_req;

typedef struct lss_ctx {
    lss_req *req;
    int64_t n, cap;
} lss_ctx;

static sim_status lss_line(const sim_jctx *ctx, const cJSON *root, int line, void *user)
{
    (void)line;
    lss_ctx *t = user;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object (one request per line)");
    static const char *const keys[] = {"request_id",     "input_toks",   "output_toks",
                                       "arrival_time",   "queued_ts",    "scheduled_ts",
                                       "first_token_ts", "last_token_ts"};
    sim_status st = sim_j_check_keys(ctx, root, keys, sizeof(keys) / sizeof(keys[0]), NULL, 0, 1);
    if (st != SIM_OK)
        return st;
    void *arr = t->req;
    st = sim_trace_grow(ctx, &arr, &t->cap, t->n, sizeof(*t->req));
    t->req = arr;
    if (st != SIM_OK)
        return st;
    lss_req *r = &t->req[t->n];
    *r = (lss_req){0};
    char id[256];
    st = sim_j_str(ctx, root, "request_id", 0, id, sizeof(id), NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "input_toks", 1, 1, 1 << 24, &r->input, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "output_toks", 1, 1, 1 << 24, &r->output, NULL);
    /* Monotonic engine seconds and epoch seconds: finite, non-negative, below 1e11 s. */
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "arrival_time", 0, 0.0, 1e11, &r->arrival, &r->has_arrival);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "queued_ts", 1, 0.0, 1e11, &r->queued, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "scheduled_ts", 1, 0.0, 1e11, &r->scheduled, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "first_token_ts", 1, 0.0, 1e11, &r->first, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "last_token_ts", 1, 0.0, 1e11, &r->last, NULL);
    if (st != SIM_OK)
        return st;
    if (!(r->queued <= r->scheduled))
        return sim_j_fail(ctx, "scheduled_ts",
                          "before queued_ts (a request is scheduled after "
                          "it is queued)");
    if (!(r->scheduled <= r->first))
        return sim_j_fail(ctx, "first_token_ts", "before scheduled_ts");
    if (!(r->first <= r->last))
        return sim_j_fail(ctx, "last_token_ts", "before first_token_ts");
    t->n++;
    return SIM_OK;
}

/* The arrival a request's TTFT and E2E count from (validate.py _bench_arrival_ts): its
 * arrival_time when on the clock of its token times (within 1e5 s of both), else queued_ts. */
static double anchor_of(const lss_req *r, int *queued)
{
    if (r->has_arrival && fabs(r->arrival - r->first) < 1e5 && fabs(r->arrival - r->last) < 1e5)
        return r->arrival;
    *queued = 1;
    return r->queued;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean, p50, p90 and p99 of v[0..n) (sorted here), n >= 1. */
static void stats_of(double *v, int64_t n, double out[SIM_VB_STATS])
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += v[i];
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    out[SIM_VB_MEAN] = sum / (double)n;
    out[SIM_VB_P50] = sim_percentile_sorted(v, n, 50.0);
    out[SIM_VB_P90] = sim_percentile_sorted(v, n, 90.0);
    out[SIM_VB_P99] = sim_percentile_sorted(v, n, 99.0);
}

void sim_lss_free(sim_lss_run *r)
{
    free(r->arrival_s);
    free(r->input);
    free(r->output);
    *r = (sim_lss_run){0};
}

sim_status sim_lss_load(const char *path, sim_lss_run *out, struct sim_err *err)
{
    *out = (sim_lss_run){0};
    lss_ctx t = {0};
    sim_status st = sim_jsonl_each(path, lss_line, &t, err);
    if (st == SIM_OK && t.n == 0) {
        sim_errf(err, "%s: no request (expected one JSON object per line)", path);
        st = SIM_EINVAL;
    }
    const int64_t n = st == SIM_OK ? t.n : 0;
    double *v[SIM_VB_FAMILIES] = {NULL, NULL, NULL};
    if (st == SIM_OK) {
        out->arrival_s = malloc((size_t)n * sizeof(double));
        out->input = malloc((size_t)n * sizeof(int64_t));
        out->output = malloc((size_t)n * sizeof(int64_t));
        for (int f = 0; f < SIM_VB_FAMILIES; f++)
            v[f] = malloc((size_t)n * sizeof(double));
        if (!out->arrival_s || !out->input || !out->output || !v[0] || !v[1] || !v[2]) {
            sim_errf(err, "%s: out of memory", path);
            st = SIM_ENOMEM;
        }
    } else if (st == SIM_ENOMEM) {
        sim_errf(err, "%s: out of memory", path);
    }
    /* The arrival pattern: arrival_time from the first request's (the client's clock), or
     * queued_ts when a request has none; in file order, which must be time order. */
    int all_arrival = 1;
    for (int64_t i = 0; st == SIM_OK && i < n; i++)
        all_arrival &= t.req[i].has_arrival;
    for (int64_t i = 0; st == SIM_OK && i < n; i++) {
        const lss_req *r = &t.req[i];
        const double a = all_arrival ? r->arrival : r->queued;
        const double a0 = all_arrival ? t.req[0].arrival : t.req[0].queued;
        out->arrival_s[i] = a - a0;
        if (i > 0 && out->arrival_s[i] < out->arrival_s[i - 1]) {
            sim_errf(err,
                     "%s: request %lld: %s earlier than the request before it (a trace is in "
                     "arrival order)",
                     path, (long long)i + 1, all_arrival ? "arrival_time" : "queued_ts");
            st = SIM_EINVAL;
            break;
        }
        out->input[i] = r->input;
        out->output[i] = r->output;
        const double anchor = anchor_of(r, &out->anchor_queued);
        if (!(r->first >= anchor)) {
            sim_errf(err, "%s: request %lld: first_token_ts before its arrival (%s)", path,
                     (long long)i + 1, anchor == r->queued ? "queued_ts" : "arrival_time");
            st = SIM_EINVAL;
            break;
        }
        v[SIM_VB_TTFT][i] = r->first - anchor;
        v[SIM_VB_E2E][i] = r->last - anchor;
        if (r->output > 1)
            v[SIM_VB_TPOT][out->n_tpot++] = (r->last - r->first) / (double)(r->output - 1);
    }
    if (st == SIM_OK && out->n_tpot == 0) {
        sim_errf(err, "%s: no request generated two or more tokens: no TPOT", path);
        st = SIM_EINVAL;
    }
    if (st == SIM_OK) {
        stats_of(v[SIM_VB_TTFT], n, out->stat_s[SIM_VB_TTFT]);
        stats_of(v[SIM_VB_TPOT], out->n_tpot, out->stat_s[SIM_VB_TPOT]);
        stats_of(v[SIM_VB_E2E], n, out->stat_s[SIM_VB_E2E]);
        out->n = n;
    }
    for (int f = 0; f < SIM_VB_FAMILIES; f++)
        free(v[f]);
    free(t.req);
    if (st != SIM_OK)
        sim_lss_free(out);
    return st;
}
