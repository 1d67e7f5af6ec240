/* engine_json.c - see engine_json.h. */
#include "engine_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *out)
{
    sim_engine *e = out;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object");
    double v[12];
    const struct {
        const char *key;
        double min, max;
    } figs[] = {
        {"max_num_seqs", 1, 1e6},
        {"block_size", 1, 1e6},
        {"gpu_memory_utilization", 1e-3, 1},
        {"min_batched_tokens", 1, 1e9},
        {"chunked_batched_tokens", 1, 1e9},
        {"chunked_auto_above_len", 0, 1e12},
        {"watermark_frac", 0, 0.5},
        {"reserve_bytes", 0, 1e13},
        {"reserve_tp_bytes", 0, 1e13},
        {"host_step_s", 0, 1},
        {"host_step_tp_s", 0, 1},
        {"host_per_seq_s", 0, 1},
    };
    const char *known[N(figs) + 4] = {"schema_version", "id", "name", "source"};
    for (size_t i = 0; i < N(figs); i++)
        known[4 + i] = figs[i].key;
    static const char *const ignored[] = {"_comment"};
    sim_status st = sim_j_check_keys(ctx, root, known, N(known), ignored, N(ignored), 1);
    int64_t ver = 0;
    char name[160];
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "schema_version", 1, 1, 1, &ver, NULL);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "id", 1, e->id, sizeof(e->id), NULL);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "name", 0, name, sizeof(name), NULL);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "source", 1, e->source, sizeof(e->source), NULL);
    for (size_t i = 0; st == SIM_OK && i < N(figs); i++) {
        int status;
        char src[256];
        st = sim_j_figure(ctx, root, figs[i].key, 1, figs[i].min, figs[i].max, 0, &v[i], &status,
                          src, sizeof(src), NULL);
        /* Counts must be whole numbers. */
        if (st == SIM_OK && i != 2 && i < 6 && v[i] != floor(v[i]))
            st = sim_j_fail(ctx, figs[i].key, "not an integer (got %.17g)", v[i]);
    }
    if (st != SIM_OK)
        return st;
    e->max_num_seqs = (int64_t)v[0];
    e->block_size = (int64_t)v[1];
    e->gpu_memory_utilization = v[2];
    e->min_batched_tokens = (int64_t)v[3];
    e->chunked_batched_tokens = (int64_t)v[4];
    e->chunked_auto_above_len = (int64_t)v[5];
    e->watermark_frac = v[6];
    e->reserve_bytes = v[7];
    e->reserve_tp_bytes = v[8];
    e->host_step_s = v[9];
    e->host_step_tp_s = v[10];
    e->host_per_seq_s = v[11];
    return SIM_OK;
}

sim_status sim_engine_load(const char *path, sim_engine *e, struct sim_err *err)
{
    memset(e, 0, sizeof(*e));
    return sim_json_load_file(path, parse, e, err);
}
