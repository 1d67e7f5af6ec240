/* bench_inferencex.c - see bench_inferencex.h. */
#include "bench_inferencex.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json_util.h"

/* Lengths and counts: those of measurement rows (MEASUREMENTS.md, meas_json.c). */
#define IX_LEN_MAX (INT64_C(1) << 24)
/* A statistic in seconds: 0 to about a year. */
#define IX_S_MAX 3.2e7

static const char *const family_key[SIM_VB_FAMILIES] = {"ttft", "tpot", "e2el"};
static const char *const stat_key[SIM_VB_STATS] = {"mean", "median", "p90", "p99"};

/* A flag InferenceX writes as a JSON boolean or as the strings "true"/"false". */
static sim_status flag(const sim_jctx *ctx, const cJSON *root, const char *key, int *out)
{
    *out = 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v || cJSON_IsNull(v))
        return SIM_OK;
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return SIM_OK;
    }
    if (cJSON_IsString(v) &&
        (strcmp(v->valuestring, "true") == 0 || strcmp(v->valuestring, "false") == 0)) {
        *out = v->valuestring[0] == 't';
        return SIM_OK;
    }
    return sim_j_fail(ctx, key, "expected true or false");
}

/* The version in an image reference "repo:vX.Y.Z" or "repo:X.Y.Z" ("" otherwise). */
static void image_version(const char *image, char *out, size_t cap)
{
    out[0] = '\0';
    const char *tag = strrchr(image, ':');
    if (!tag)
        return;
    tag += 1 + (tag[1] == 'v');
    size_t n = 0, dots = 0;
    while (tag[n] && (isdigit((unsigned char)tag[n]) || tag[n] == '.')) {
        dots += tag[n] == '.';
        n++;
    }
    if (n > 0 && dots >= 1 && isdigit((unsigned char)tag[0]) && n < cap)
        snprintf(out, cap, "%.*s", (int)n, tag);
}

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *outp)
{
    sim_ix_run *o = outp;
    memset(o, 0, sizeof(*o));
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL,
                          "top level: expected the JSON object InferenceX's process_result.py "
                          "writes (agg_*.json)");
    const sim_j_strfield s[] = {
        {"hw", 0, o->hw, sizeof(o->hw)},
        {"model", 0, o->model_id, sizeof(o->model_id)},
        {"framework", 1, o->framework, sizeof(o->framework)},
        {"precision", 0, o->precision, sizeof(o->precision)},
        {"spec_decoding", 0, o->spec, sizeof(o->spec)},
        {"image", 0, o->image, sizeof(o->image)},
    };
    sim_status st = sim_j_strs(ctx, root, s, sizeof(s) / sizeof(s[0]));
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "conc", 1, 1, 1 << 20, &o->conc, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "isl", 1, 1, IX_LEN_MAX, &o->isl, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "osl", 1, 1, IX_LEN_MAX, &o->osl, NULL);
    if (st == SIM_OK)
        st = flag(ctx, root, "is_multinode", &o->multinode);
    if (st == SIM_OK)
        st = flag(ctx, root, "disagg", &o->disagg);
    if (st == SIM_OK)
        st = flag(ctx, root, "dp_attention", &o->dp_attention);
    if (st != SIM_OK)
        return st;
    if (strcmp(o->framework, "vllm") != 0)
        return sim_j_fail(ctx, "framework", "'%s': only vLLM runs are simulated", o->framework);
    if (o->multinode || o->disagg)
        return sim_j_fail(ctx, o->disagg ? "disagg" : "is_multinode",
                          "a disaggregated or multi-node run is not one vLLM server");
    if (o->dp_attention)
        return sim_j_fail(ctx, "dp_attention",
                          "attention data parallel: the file does not say the DP size a row "
                          "would need");
    if (o->spec[0] && strcmp(o->spec, "none") != 0)
        return sim_j_fail(ctx, "spec_decoding", "'%s': speculative decoding is not simulated",
                          o->spec);
    if (cJSON_GetObjectItemCaseSensitive(root, "mtp"))
        return sim_j_fail(ctx, "mtp", "MTP speculative decoding is not simulated");
    o->ep = 1;
    st = sim_j_int(ctx, root, "tp", 1, 1, 65536, &o->tp, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "ep", 0, 1, 65536, &o->ep, NULL);
    if (st != SIM_OK)
        return st;
    image_version(o->image, o->engine_version, sizeof(o->engine_version));
    int any = 0;
    for (int f = 0; f < SIM_VB_FAMILIES; f++)
        for (int k = 0; k < SIM_VB_STATS; k++) {
            char key[32];
            snprintf(key, sizeof(key), "%s_%s", stat_key[k], family_key[f]);
            st = sim_j_num(ctx, root, key, 0, 0.0, IX_S_MAX, &o->stat_s[f][k], &o->has[f][k]);
            if (st != SIM_OK)
                return st;
            any |= o->has[f][k];
        }
    if (!any)
        return sim_j_fail(ctx, NULL,
                          "no statistic a measurement row can hold (mean_, median_, p90_ or p99_ "
                          "of ttft, tpot or e2el, in seconds): is it an InferenceX agg_*.json?");
    return SIM_OK;
}

sim_status sim_ix_load(const char *path, sim_ix_run *out, struct sim_err *err)
{
    return sim_json_load_file(path, parse, out, err);
}
