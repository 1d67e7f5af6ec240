/* trace_json.c - see trace_json.h. */
#include "trace_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_util.h"
#include "err.h"

typedef struct trace_ctx {
    sim_request *req;
    int64_t n, cap;
} trace_ctx;

sim_status sim_trace_grow(const sim_jctx *ctx, void **arr, int64_t *cap, int64_t n, size_t elem)
{
    if (n >= SIM_TRACE_MAX_REQUESTS)
        return sim_j_fail(ctx, NULL, "too many requests (expected at most %d)",
                          SIM_TRACE_MAX_REQUESTS);
    if (n < *cap)
        return SIM_OK;
    const int64_t c = *cap ? 2 * *cap : 1024;
    void *p = realloc(*arr, (size_t)c * elem);
    if (!p)
        return SIM_ENOMEM;
    *arr = p;
    *cap = c;
    return SIM_OK;
}

static sim_status trace_line(const sim_jctx *ctx, const cJSON *root, int line, void *user)
{
    (void)line;
    trace_ctx *t = user;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object (one request per line)");
    static const char *const keys[] = {"arrival_s",     "prompt_tokens", "output_tokens",
                                       "prefix_tokens", "prefix_group",  "session"};
    sim_status st = sim_j_check_keys(ctx, root, keys, 6, NULL, 0, 1);
    if (st != SIM_OK)
        return st;
    void *arr = t->req;
    st = sim_trace_grow(ctx, &arr, &t->cap, t->n, sizeof(*t->req));
    t->req = arr;
    if (st != SIM_OK)
        return st;
    sim_request *r = &t->req[t->n];
    *r = (sim_request){0};
    st = sim_j_num(ctx, root, "arrival_s", 1, 0.0, 1e9, &r->arrival_s, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "prompt_tokens", 1, 1, 1 << 24, &r->prompt_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "output_tokens", 1, 1, 1 << 24, &r->output_tokens, NULL);
    int has_group = 0;
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "prefix_tokens", 0, 0, 1 << 24, &r->prefix_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "prefix_group", 0, 0, INT64_C(1) << 53, &r->prefix_group,
                       &has_group);
    int session = 0;
    if (st == SIM_OK)
        st = sim_j_bool(ctx, root, "session", 0, &session, NULL);
    if (st != SIM_OK)
        return st;
    r->prefix_session = session > 0;
    if (r->prefix_session && !has_group)
        return sim_j_fail(ctx, "prefix_group",
                          "required field missing (expected the conversation a session turn "
                          "belongs to)");
    if (r->prefix_tokens > r->prompt_tokens)
        return sim_j_fail(ctx, "prefix_tokens",
                          "above prompt_tokens (expected the shared leading part of the prompt, "
                          "got %lld of %lld)",
                          (long long)r->prefix_tokens, (long long)r->prompt_tokens);
    if (r->prefix_tokens > 0 && !has_group)
        return sim_j_fail(ctx, "prefix_group",
                          "required field missing (expected the group whose prefix the "
                          "request shares, with prefix_tokens)");
    if (t->n > 0 && r->arrival_s < t->req[t->n - 1].arrival_s)
        return sim_j_fail(ctx, "arrival_s",
                          "before the previous request's (expected requests in order of "
                          "arrival, got %.17g after %.17g)",
                          r->arrival_s, t->req[t->n - 1].arrival_s);
    t->n++;
    return SIM_OK;
}

sim_status sim_trace_load(const char *path, sim_request **out, int64_t *n, struct sim_err *err)
{
    trace_ctx t = {NULL, 0, 0};
    *out = NULL;
    *n = 0;
    sim_status st = sim_jsonl_each(path, trace_line, &t, err);
    if (st == SIM_ENOMEM)
        sim_errf(err, "%s: out of memory", path);
    if (st == SIM_OK && t.n == 0) {
        sim_errf(err, "%s: no requests (expected one JSON object a line)", path);
        st = SIM_EINVAL;
    }
    if (st != SIM_OK) {
        free(t.req);
        return st;
    }
    *out = t.req;
    *n = t.n;
    return SIM_OK;
}
