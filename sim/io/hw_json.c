/* hw_json.c - see hw_json.h. */
#include "hw_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* sim_j_status's status indices, in its order: datasheet, measured, derived, estimated. */
static const sim_prov prov_vals[] = {SIM_PROV_DATASHEET, SIM_PROV_MEASURED, SIM_PROV_DERIVED,
                                     SIM_PROV_ESTIMATED};

static sim_status parse_prov(const sim_jctx *ctx, const cJSON *obj, sim_prov *out, char *src)
{
    int status = 0;
    sim_status st = sim_j_status(ctx, obj, &status, src, SIM_HW_SOURCE_LEN);
    if (st == SIM_OK)
        *out = prov_vals[status];
    return st;
}

/* "regimes": [{"from_bytes", "latency_s", "bus_bw_bytes_per_s"}, ...] of one allreduce entry
 * (ctx scoped to the entry, its prefix "allreduce[i]."). Order is checked by sim_hw_validate. */
static sim_status parse_regimes(const sim_jctx *entry, const cJSON *arr, const char *list, int i,
                                sim_allreduce *a,
                                const char **end /* OUT: scope past the last regime */)
{
    if (!cJSON_IsArray(arr))
        return sim_j_fail(entry, "regimes", "wrong type (expected an array of objects)");
    int n = cJSON_GetArraySize(arr);
    if (n > SIM_AR_MAX_REGIMES - 1)
        return sim_j_fail(entry, "regimes", "too many entries (expected at most %d, got %d)",
                          SIM_AR_MAX_REGIMES - 1, n);
    static const char *const keys[] = {"from_bytes", "latency_s", "bus_bw_bytes_per_s", "note"};
    sim_jctx ctx = *entry;
    ctx.scope = sim_j_locate(entry, "regimes");
    int k = 0;
    for (const cJSON *e = arr->child; e; e = e->next, k++) {
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "%s[%d].regimes[%d].", list, i, k);
        ctx.prefix = prefix;
        if (!cJSON_IsObject(e))
            return sim_j_fail(&ctx, NULL, "%s[%d].regimes[%d]: expected an object", list, i, k);
        sim_ar_regime *g = &a->regimes[k];
        sim_status st = sim_j_check_keys(&ctx, e, keys, N(keys), NULL, 0, 1);
        if (st == SIM_OK)
            st = sim_j_num(&ctx, e, "from_bytes", 1, 1.0, 1e15, &g->from_bytes, NULL);
        if (st == SIM_OK)
            st = sim_j_num(&ctx, e, "latency_s", 1, 0.0, 1.0, &g->latency_s, NULL);
        if (st == SIM_OK)
            st = sim_j_num(&ctx, e, "bus_bw_bytes_per_s", 1, 1e3, 1e15, &g->bus_bw_bytes_per_s,
                           NULL);
        if (st != SIM_OK)
            return st;
        ctx.scope = sim_j_locate(&ctx, "from_bytes") + 1;
    }
    *end = ctx.scope;
    a->n_regimes = n;
    return SIM_OK;
}

/* One list of collective entries ("allreduce" or "alltoall": the same shape) into
 * entries[0..*n_out-1]. */
static sim_status parse_collective(const sim_jctx *parent, const cJSON *arr, const char *list,
                                   sim_allreduce *entries, int *n_out)
{
    if (!cJSON_IsArray(arr))
        return sim_j_fail(parent, list, "wrong type (expected an array of objects)");
    int n = cJSON_GetArraySize(arr);
    if (n > SIM_HW_MAX_ALLREDUCE)
        return sim_j_fail(parent, list, "too many entries (expected at most %d, got %d)",
                          SIM_HW_MAX_ALLREDUCE, n);
    static const char *const keys[] = {
        "n_gpus", "latency_s", "bus_bw_bytes_per_s", "regimes", "status", "source", "note"};
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, list);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        char prefix[48];
        snprintf(prefix, sizeof(prefix), "%s[%d].", list, i);
        ctx.prefix = prefix;
        if (!cJSON_IsObject(e))
            return sim_j_fail(&ctx, NULL, "%s[%d]: expected an object", list, i);
        sim_allreduce *a = &entries[i];
        int64_t ng = 0;
        sim_status st = sim_j_check_keys(&ctx, e, keys, N(keys), NULL, 0, 1);
        if (st == SIM_OK)
            st = sim_j_int(&ctx, e, "n_gpus", 1, 2, 1024, &ng, NULL);
        if (st == SIM_OK)
            st = sim_j_num(&ctx, e, "latency_s", 1, 0.0, 1.0, &a->latency_s, NULL);
        if (st == SIM_OK)
            st = sim_j_num(&ctx, e, "bus_bw_bytes_per_s", 1, 1e3, 1e15, &a->bus_bw_bytes_per_s,
                           NULL);
        a->n_regimes = 0;
        const cJSON *rg = cJSON_GetObjectItemCaseSensitive(e, "regimes");
        const char *past_regimes = NULL;
        if (st == SIM_OK && rg)
            st = parse_regimes(&ctx, rg, list, i, a, &past_regimes);
        if (st == SIM_OK)
            st = parse_prov(&ctx, e, &a->prov, a->source);
        if (st != SIM_OK)
            return st;
        a->n_gpus = (int)ng;
        /* Advance the search scope past this entry so the next one's keys are found after it. */
        ctx.scope = sim_j_locate(&ctx, "n_gpus") + 1;
        if (past_regimes && past_regimes > ctx.scope)
            ctx.scope = past_regimes; /* the regimes' keys are not the next entry's */
    }
    *n_out = n;
    return SIM_OK;
}

/* Opens a table block {"<list>": [...], "status", "source"}: its type, its keys and its
 * provenance, checked like every figure's (parse_prov); ctx is left scoped to the block. */
static sim_status open_block(const sim_jctx *parent, const cJSON *obj, const char *name,
                             const char *prefix, const char *const *keys, size_t nkeys,
                             const char *shape, sim_jctx *ctx)
{
    *ctx = *parent;
    ctx->scope = sim_j_locate(parent, name);
    ctx->prefix = prefix;
    if (!cJSON_IsObject(obj))
        return sim_j_fail(parent, name, "wrong type (expected an object %s)", shape);
    sim_status st = sim_j_check_keys(ctx, obj, keys, nkeys, NULL, 0, 1);
    sim_prov prov;
    char src[SIM_HW_SOURCE_LEN];
    return st == SIM_OK ? parse_prov(ctx, obj, &prov, src) : st;
}

/* "gemm_tiles": {"tiles": [[tm, tn], ...], "status": .., "source": ..}: candidate output tiles
 * of the GEMM library, for the tile and wave quantization model. */
static sim_status parse_tiles(const sim_jctx *parent, const cJSON *obj, sim_hw *hw)
{
    static const char *const keys[] = {"tiles", "status", "source", "note"};
    sim_jctx ctx;
    sim_status st = open_block(parent, obj, "gemm_tiles", "gemm_tiles.", keys, N(keys),
                               "{\"tiles\", \"status\", \"source\"}", &ctx);
    if (st != SIM_OK)
        return st;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "tiles");
    int n = arr ? cJSON_GetArraySize(arr) : 0;
    if (!cJSON_IsArray(arr) || n < 1 || n > SIM_HW_MAX_TILES)
        return sim_j_fail(&ctx, "tiles", "expected an array of 1 to %d [tile_m, tile_n] pairs",
                          SIM_HW_MAX_TILES);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        const cJSON *a = cJSON_GetArrayItem(e, 0), *b = cJSON_GetArrayItem(e, 1);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(a) ||
            !cJSON_IsNumber(b) || a->valuedouble < 1 || b->valuedouble < 1 ||
            a->valuedouble > 4096 || b->valuedouble > 4096 ||
            a->valuedouble != floor(a->valuedouble) || b->valuedouble != floor(b->valuedouble))
            return sim_j_fail(&ctx, "tiles",
                              "element %d: expected [tile_m, tile_n] integers in 1..4096", i);
        hw->tiles[i][0] = (int)a->valuedouble;
        hw->tiles[i][1] = (int)b->valuedouble;
    }
    hw->n_tiles = n;
    return SIM_OK;
}

/* "gemm_fp8_dispatch": {"configs": [[m_max, n_max, tile_m, tile_n, cluster_m, cluster_n], ...],
 * "status", "source"}: the fp8 GEMM kernel the library dispatches by shape (hw.h). */
static sim_status parse_fp8_dispatch(const sim_jctx *parent, const cJSON *obj, sim_hw *hw)
{
    static const char *const keys[] = {"configs", "status", "source", "note"};
    sim_jctx ctx;
    sim_status st = open_block(parent, obj, "gemm_fp8_dispatch", "gemm_fp8_dispatch.", keys,
                               N(keys), "{\"configs\", \"status\", \"source\"}", &ctx);
    if (st != SIM_OK)
        return st;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "configs");
    int n = arr ? cJSON_GetArraySize(arr) : 0;
    if (!cJSON_IsArray(arr) || n < 1 || n > SIM_HW_MAX_FP8_CFG)
        return sim_j_fail(&ctx, "configs",
                          "expected an array of 1 to %d [m_max, n_max, tile_m, tile_n, "
                          "cluster_m, cluster_n] entries",
                          SIM_HW_MAX_FP8_CFG);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        double v[6];
        int ok = cJSON_IsArray(e) && cJSON_GetArraySize(e) == 6;
        for (int j = 0; ok && j < 6; j++) {
            const cJSON *x = cJSON_GetArrayItem(e, j);
            ok = cJSON_IsNumber(x) && x->valuedouble == floor(x->valuedouble) &&
                 x->valuedouble >= (j < 2 ? 0.0 : 1.0) &&
                 x->valuedouble <= (j < 2   ? 2147483647.0
                                    : j < 4 ? 4096.0
                                            : 16.0);
            if (ok)
                v[j] = x->valuedouble;
        }
        if (!ok)
            return sim_j_fail(&ctx, "configs",
                              "element %d: expected [m_max, n_max, tile_m, tile_n, cluster_m, "
                              "cluster_n] integers (bounds 0 = none, tiles 1..4096, clusters "
                              "1..16)",
                              i);
        hw->fp8_cfg[i] = (struct sim_fp8_cfg){(int64_t)v[0], (int64_t)v[1], (int)v[2],
                                              (int)v[3],     (int)v[4],     (int)v[5]};
    }
    if (hw->fp8_cfg[n - 1].m_max != 0 || hw->fp8_cfg[n - 1].n_max != 0)
        return sim_j_fail(&ctx, "configs",
                          "the last entry must have no bounds (m_max = n_max = 0): every shape "
                          "needs a kernel");
    hw->n_fp8_cfg = n;
    return SIM_OK;
}

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *out)
{
    sim_hw *hw = out;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object");
    const char *known[SIM_HWF_COUNT + 10];
    size_t nk = 0;
    known[nk++] = "schema_version";
    known[nk++] = "id";
    known[nk++] = "name";
    known[nk++] = "source";
    known[nk++] = "vendor";
    known[nk++] = "stack";
    known[nk++] = "allreduce";
    known[nk++] = "alltoall";
    known[nk++] = "gemm_tiles";
    known[nk++] = "gemm_fp8_dispatch";
    for (int f = 0; f < SIM_HWF_COUNT; f++)
        known[nk++] = sim_hw_field_key((sim_hw_field)f);
    static const char *const ignored[] = {"_comment"};
    sim_status st = sim_j_check_keys(ctx, root, known, nk, ignored, N(ignored), 1);
    if (st != SIM_OK)
        return st;
    int64_t ver = 0;
    st = sim_j_int(ctx, root, "schema_version", 1, SIM_HW_SCHEMA_VERSION, SIM_HW_SCHEMA_VERSION,
                   &ver, NULL);
    const sim_j_strfield strs[] = {
        {"id", 1, hw->id, sizeof(hw->id)},
        {"name", 1, hw->name, sizeof(hw->name)},
        {"source", 1, hw->source, sizeof(hw->source)},
        {"vendor", 0, hw->vendor, sizeof(hw->vendor)},
        {"stack", 0, hw->stack, sizeof(hw->stack)},
    };
    if (st == SIM_OK)
        st = sim_j_strs(ctx, root, strs, N(strs));
    if (st != SIM_OK)
        return st;
    for (int f = 0; f < SIM_HWF_COUNT; f++) {
        int status, present;
        st = sim_j_figure(ctx, root, sim_hw_field_key((sim_hw_field)f),
                          sim_hw_field_required((sim_hw_field)f), -HUGE_VAL, HUGE_VAL,
                          !sim_hw_field_zero_ok((sim_hw_field)f), &hw->v[f], &status, hw->src[f],
                          sizeof(hw->src[f]), &present);
        if (st != SIM_OK)
            return st;
        if (present)
            hw->prov[f] = prov_vals[status];
    }
    const cJSON *ar = cJSON_GetObjectItemCaseSensitive(root, "allreduce");
    if (ar) {
        st = parse_collective(ctx, ar, "allreduce", hw->allreduce, &hw->n_allreduce);
        if (st != SIM_OK)
            return st;
    }
    const cJSON *a2a = cJSON_GetObjectItemCaseSensitive(root, "alltoall");
    if (a2a) {
        st = parse_collective(ctx, a2a, "alltoall", hw->alltoall, &hw->n_alltoall);
        if (st != SIM_OK)
            return st;
    }
    const cJSON *tiles = cJSON_GetObjectItemCaseSensitive(root, "gemm_tiles");
    if (tiles) {
        st = parse_tiles(ctx, tiles, hw);
        if (st != SIM_OK)
            return st;
    }
    const cJSON *fp8d = cJSON_GetObjectItemCaseSensitive(root, "gemm_fp8_dispatch");
    if (fp8d) {
        st = parse_fp8_dispatch(ctx, fp8d, hw);
        if (st != SIM_OK)
            return st;
    }
    sim_hw_apply_defaults(hw);
    struct sim_err verr;
    st = sim_hw_validate(hw, &verr);
    if (st != SIM_OK) {
        return sim_j_fail_validator(ctx, verr.msg);
    }
    return SIM_OK;
}

sim_status sim_hw_load(const char *path, sim_hw *hw, struct sim_err *err)
{
    memset(hw, 0, sizeof(*hw));
    return sim_json_load_file(path, parse, hw, err);
}
