/* engine_json.c - see engine_json.h. */
#include "engine_json.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Engine figures: key, range, whole number, which schedulers require it (bit 0 V0, bit 1
 * V1; 0 = optional everywhere, absent = 0), and where it goes. */
#define V0 1
#define V1 2
static const struct {
    const char *key;
    double min, max;
    int integer;
    int required;
    size_t off_i64; /* offset of an int64_t field, or */
    size_t off_dbl; /* offset of a double field (the other is SIZE_MAX) */
} figs[] = {
#define I64(k, lo, hi, req, field)                                                                 \
    {                                                                                              \
        k, lo, hi, 1, req, offsetof(sim_engine, field), SIZE_MAX                                   \
    }
#define DBL(k, lo, hi, req, field)                                                                 \
    {                                                                                              \
        k, lo, hi, 0, req, SIZE_MAX, offsetof(sim_engine, field)                                   \
    }
    I64("max_num_seqs", 1, 1e6, V0 | V1, max_num_seqs),
    I64("block_size", 1, 1e6, V0 | V1, block_size),
    DBL("gpu_memory_utilization", 1e-3, 1, V0 | V1, gpu_memory_utilization),
    I64("min_batched_tokens", 1, 1e9, V0, min_batched_tokens),
    I64("chunked_batched_tokens", 1, 1e9, V0, chunked_batched_tokens),
    I64("chunked_auto_above_len", 0, 1e12, V0, chunked_auto_above_len),
    DBL("watermark_frac", 0, 0.5, V0, watermark_frac),
    DBL("reserve_bytes", 0, 1e13, V0 | V1, reserve_bytes),
    DBL("reserve_tp_bytes", 0, 1e13, V0 | V1, reserve_tp_bytes),
    DBL("host_step_s", 0, 1, V0 | V1, host_step_s),
    DBL("host_step_tp_s", 0, 1, V0 | V1, host_step_tp_s),
    DBL("host_per_seq_s", 0, 1, V0 | V1, host_per_seq_s),
    DBL("host_step_per_rank_s", 0, 1, 0, host_step_rank_s),
    DBL("host_per_seq_per_rank_s", 0, 1, 0, host_per_seq_rank_s),
    I64("max_num_seqs_llm_large", 1, 1e6, V1, default_seqs[SIM_USAGE_LLM][1]),
    I64("max_num_seqs_llm_small", 1, 1e6, V1, default_seqs[SIM_USAGE_LLM][0]),
    I64("max_num_seqs_server_large", 1, 1e6, V1, default_seqs[SIM_USAGE_SERVER][1]),
    I64("max_num_seqs_server_small", 1, 1e6, V1, default_seqs[SIM_USAGE_SERVER][0]),
    I64("max_num_batched_tokens_llm_large", 1, 1e9, V1, default_tokens[SIM_USAGE_LLM][1]),
    I64("max_num_batched_tokens_llm_small", 1, 1e9, V1, default_tokens[SIM_USAGE_LLM][0]),
    I64("max_num_batched_tokens_server_large", 1, 1e9, V1, default_tokens[SIM_USAGE_SERVER][1]),
    I64("max_num_batched_tokens_server_small", 1, 1e9, V1, default_tokens[SIM_USAGE_SERVER][0]),
    DBL("large_gpu_min_bytes", 0, 1e15, V1, large_gpu_min_bytes),
    I64("long_prefill_token_threshold", 0, 1e9, 0, long_prefill_threshold),
    DBL("cudagraph_bytes", 0, 1e13, 0, cudagraph_bytes),
    DBL("sampler_logit_bytes", 0, 1e3, V0 | V1, sampler_logit_bytes),
    DBL("sampler_sm_vocab_bytes", 0, 1e3, 0, sampler_sm_vocab_bytes),
    I64("moe_workspace_persistent", 0, 1, 0, moe_workspace_persistent),
    I64("activation_peak_additive", 0, 1, 0, activation_peak_additive),
    I64("paged_decode_sliding_window", 0, 1, 0, paged_decode_sliding_window),
    I64("paged_decode_rocm", 0, 1, 0, paged_decode_rocm),
    I64("paged_v1_max_seq_len", 1, 1e9, 0, paged_v1_max_seq_len),
    I64("paged_v1_min_seq_heads", 0, 1e9, 0, paged_v1_min_seq_heads),
    I64("paged_partition_tokens", 1, 1e9, 0, paged_partition_tokens),
    I64("graph_max_seq_len", 1, 1e9, 0, graph_max_seq_len),
    I64("graph_max_batch", 0, 1e6, 0, graph_max_batch),
    I64("graph_batch_align", 1, 1e6, 0, graph_batch_align),
    DBL("spec_step_s", 0, 1, 0, spec_step_s),
    DBL("spec_pass_s", 0, 1, 0, spec_pass_s),
#undef I64
#undef DBL
};

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *out)
{
    sim_engine *e = out;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object");
    static const char *const head[] = {"schema_version",
                                       "id",
                                       "name",
                                       "source",
                                       "scheduler",
                                       "large_gpu_exclude",
                                       "async_scheduling",
                                       "admit_full_sequence"};
    const char *known[N(figs) + N(head)];
    for (size_t i = 0; i < N(head); i++)
        known[i] = head[i];
    for (size_t i = 0; i < N(figs); i++)
        known[N(head) + i] = figs[i].key;
    static const char *const ignored[] = {"_comment"};
    sim_status st = sim_j_check_keys(ctx, root, known, N(known), ignored, N(ignored), 1);
    int64_t ver = 0;
    char name[160], sched[16] = "v0";
    const sim_j_strfield strs[] = {
        {"id", 1, e->id, sizeof(e->id)},
        {"name", 0, name, sizeof(name)},
        {"source", 1, e->source, sizeof(e->source)},
        {"scheduler", 0, sched, sizeof(sched)},
    };
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "schema_version", 1, 1, 1, &ver, NULL);
    if (st == SIM_OK)
        st = sim_j_strs(ctx, root, strs, N(strs));
    if (st != SIM_OK)
        return st;
    if (strcmp(sched, "v0") == 0)
        e->kind = SIM_SCHED_V0;
    else if (strcmp(sched, "v1") == 0)
        e->kind = SIM_SCHED_V1;
    else
        return sim_j_fail(ctx, "scheduler", "unknown scheduler (expected v0 or v1, got '%s')",
                          sched);
    const int mask = e->kind == SIM_SCHED_V1 ? V1 : V0;
    st = sim_j_str(ctx, root, "large_gpu_exclude", 0, e->large_gpu_exclude,
                   sizeof(e->large_gpu_exclude), NULL);
    if (st == SIM_OK) {
        int async = 0, present = 0;
        st = sim_j_bool(ctx, root, "async_scheduling", 0, &async, &present);
        e->async_scheduling = async;
    }
    if (st == SIM_OK) {
        int full = 0;
        st = sim_j_bool(ctx, root, "admit_full_sequence", 0, &full, NULL);
        e->admit_full_sequence = full;
    }
    for (size_t i = 0; st == SIM_OK && i < N(figs); i++) {
        int status, present = 0;
        char src[256];
        double v = 0.0;
        st = sim_j_figure(ctx, root, figs[i].key, (figs[i].required & mask) != 0, figs[i].min,
                          figs[i].max, 0, &v, &status, src, sizeof(src), &present);
        if (st != SIM_OK)
            break;
        if (present && figs[i].required && !(figs[i].required & mask))
            return sim_j_fail(ctx, figs[i].key, "not a figure of the %s scheduler", sched);
        /* Counts must be whole numbers. */
        if (figs[i].integer && v != floor(v))
            return sim_j_fail(ctx, figs[i].key, "not an integer (got %.17g)", v);
        if (figs[i].integer)
            *(int64_t *)(void *)((char *)e + figs[i].off_i64) = (int64_t)v;
        else
            *(double *)(void *)((char *)e + figs[i].off_dbl) = v;
    }
    /* The PagedAttention rule needs all its figures. */
    static const char *const paged[] = {"paged_v1_max_seq_len",   "paged_v1_min_seq_heads",
                                        "paged_partition_tokens", "graph_max_seq_len",
                                        "graph_max_batch",        "graph_batch_align"};
    const char *rule = e->paged_decode_sliding_window ? "paged_decode_sliding_window"
                       : e->paged_decode_rocm         ? "paged_decode_rocm"
                                                      : NULL;
    for (size_t i = 0; st == SIM_OK && rule && i < N(paged); i++)
        if (!cJSON_GetObjectItemCaseSensitive(root, paged[i]))
            return sim_j_fail(
                ctx, rule, "set, but %s is missing (the PagedAttention rule needs it)", paged[i]);
    return st;
}

sim_status sim_engine_load(const char *path, sim_engine *e, struct sim_err *err)
{
    memset(e, 0, sizeof(*e));
    return sim_json_load_file(path, parse, e, err);
}
