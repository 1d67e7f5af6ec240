/*
 * engine.c - an engine profile's names, its scheduler settings resolved for a run,
 * and its host time per step (see engine.h; docs/model.md, "Engine").
 */
#include "engine.h"

#include <string.h>

#include "err.h"

const char *sim_usage_name(sim_usage u)
{
    static const char *const names[SIM_USAGE_COUNT] = {"llm", "server"};
    return (int)u >= 0 && u < SIM_USAGE_COUNT ? names[u] : "?";
}

void sim_sched_cfg_unset(sim_sched_cfg *c)
{
    c->max_num_seqs = -1;
    c->max_num_batched_tokens = -1;
    c->max_model_len = -1;
    c->block_size = -1;
    c->gpu_memory_utilization = -1.0;
    c->enable_chunked_prefill = -1;
    c->enforce_eager = -1;
    c->usage = -1;
    c->disable_hybrid_kv = -1;
    c->async_scheduling = -1;
    c->enable_prefix_caching = -1;
}

/* ASCII case-insensitive substring test; an empty needle never matches. */
static int contains_nocase(const char *hay, const char *needle)
{
    if (!needle[0])
        return 0;
    for (const char *h = hay; *h; h++) {
        const char *a = h, *b = needle;
        while (*a && *b) {
            char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
            char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
            if (x != y)
                break;
            a++;
            b++;
        }
        if (!*b)
            return 1;
    }
    return 0;
}

/* V1 defaults by usage context and device memory (vLLM EngineArgs._set_default_args). */
static void v1_defaults(const sim_engine *e, const sim_hw *hw, sim_usage u, int64_t *seqs,
                        int64_t *tokens)
{
    int large = hw->v[SIM_HWF_MEM_CUDA_TOTAL] >= e->large_gpu_min_bytes &&
                !contains_nocase(hw->name, e->large_gpu_exclude) &&
                !contains_nocase(hw->id, e->large_gpu_exclude);
    *seqs = e->default_seqs[u][large];
    *tokens = e->default_tokens[u][large];
}

sim_status sim_sched_resolve(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                             const sim_sched_cfg *in, sim_sched_resolved *out, struct sim_err *err)
{
    /* Settings both schedulers resolve alike. */
    out->usage =
        in->usage >= 0 && in->usage < SIM_USAGE_COUNT ? (sim_usage)in->usage : SIM_USAGE_LLM;
    out->block_size = in->block_size > 0 ? in->block_size : e->block_size;
    out->gpu_memory_utilization =
        in->gpu_memory_utilization > 0.0 ? in->gpu_memory_utilization : e->gpu_memory_utilization;
    out->max_model_len = in->max_model_len > 0 ? in->max_model_len : m->max_pos;
    out->enforce_eager = in->enforce_eager > 0;
    out->disable_hybrid_kv = in->disable_hybrid_kv > 0;
    out->async_scheduling =
        in->async_scheduling >= 0 ? in->async_scheduling > 0 : e->async_scheduling != 0;
    if (out->async_scheduling && e->kind != SIM_SCHED_V1) {
        sim_errf(err, "async_scheduling: the V0 engine has no async scheduling (vLLM V1 only)");
        return SIM_EINVAL;
    }
    out->enable_prefix_caching =
        in->enable_prefix_caching >= 0 ? in->enable_prefix_caching > 0 : e->kind == SIM_SCHED_V1;
    if (out->max_model_len > m->max_pos) {
        sim_errf(err, "max_model_len: %lld exceeds the model's max_position_embeddings = %lld",
                 (long long)out->max_model_len, (long long)m->max_pos);
        return SIM_ERANGE;
    }
    if (!(out->gpu_memory_utilization > 0.0 && out->gpu_memory_utilization <= 1.0)) {
        sim_errf(err, "gpu_memory_utilization: must be in (0, 1]");
        return SIM_ERANGE;
    }
    if (e->kind == SIM_SCHED_V1) {
        int64_t seqs, tokens;
        v1_defaults(e, hw, out->usage, &seqs, &tokens);
        out->max_num_seqs = in->max_num_seqs > 0 ? in->max_num_seqs : seqs;
        out->max_num_batched_tokens =
            in->max_num_batched_tokens > 0 ? in->max_num_batched_tokens : tokens;
        out->enable_chunked_prefill = 1;
        if (in->enable_chunked_prefill == 0) {
            sim_errf(err, "enable_chunked_prefill: the V1 engine always chunks prefills");
            return SIM_EINVAL;
        }
        return SIM_OK;
    }
    out->max_num_seqs = in->max_num_seqs > 0 ? in->max_num_seqs : e->max_num_seqs;
    if (in->enable_chunked_prefill >= 0)
        out->enable_chunked_prefill = in->enable_chunked_prefill;
    else
        out->enable_chunked_prefill =
            e->chunked_auto_above_len > 0 && out->max_model_len > e->chunked_auto_above_len;
    if (in->max_num_batched_tokens > 0)
        out->max_num_batched_tokens = in->max_num_batched_tokens;
    else if (out->enable_chunked_prefill)
        out->max_num_batched_tokens = e->chunked_batched_tokens;
    else
        out->max_num_batched_tokens =
            out->max_model_len > e->min_batched_tokens ? out->max_model_len : e->min_batched_tokens;
    if (!out->enable_chunked_prefill && out->max_num_batched_tokens < out->max_model_len) {
        sim_errf(err,
                 "max_num_batched_tokens: %lld is below max_model_len = %lld without chunked "
                 "prefill (vLLM rejects this)",
                 (long long)out->max_num_batched_tokens, (long long)out->max_model_len);
        return SIM_ERANGE;
    }
    if (out->max_num_batched_tokens < out->max_num_seqs && !out->enable_chunked_prefill) {
        sim_errf(err, "max_num_batched_tokens: %lld is below max_num_seqs = %lld",
                 (long long)out->max_num_batched_tokens, (long long)out->max_num_seqs);
        return SIM_ERANGE;
    }
    return SIM_OK;
}

double sim_engine_host_s(const sim_engine *e, int tp, double n_seqs)
{
    const double extra = tp > 1 ? (double)(tp - 1) : 0.0;
    return (tp > 1 ? e->host_step_tp_s : e->host_step_s) + e->host_per_seq_s * n_seqs +
           extra * (e->host_step_rank_s + e->host_per_seq_rank_s * n_seqs);
}

void sim_engine_drop_host(sim_engine *e)
{
    e->host_step_s = e->host_step_tp_s = e->host_per_seq_s = 0.0;
    e->host_step_rank_s = e->host_per_seq_rank_s = 0.0;
}

double sim_engine_step_wall_s(const sim_engine *e, double gpu_s, double host_s)
{
    if (e->async_scheduling)
        return gpu_s > host_s ? gpu_s : host_s;
    return gpu_s + host_s;
}

void sim_decode_attn_resolve(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                             const sim_sched_resolved *s, sim_decode_attn *out)
{
    *out = (sim_decode_attn){0};
    /* A sliding window on every layer's attention, as the engine's backend selector sees it
     * (vllm/attention/selector.py checks the model's sliding_window); on ROCm the backend
     * decodes every model with PagedAttention (not MLA, which that backend does not run). */
    if (e->paged_decode_sliding_window && m->sliding_window > 0 && !m->window_chunked)
        out->why = SIM_PAGED_SLIDING_WINDOW;
    else if (e->paged_decode_rocm && hw && strcmp(hw->vendor, "amd") == 0 && !m->mla)
        out->why = SIM_PAGED_ROCM;
    else
        return;
    out->paged = 1;
    out->eager = s->enforce_eager == 1;
    out->v1_max_seq_len = (double)e->paged_v1_max_seq_len;
    out->v1_min_seq_heads = (double)e->paged_v1_min_seq_heads;
    out->partition_tokens = (double)e->paged_partition_tokens;
    out->graph_max_seq_len =
        (double)(s->max_model_len > 0 && s->max_model_len < e->graph_max_seq_len
                     ? s->max_model_len
                     : e->graph_max_seq_len);
    out->graph_max_batch = (double)e->graph_max_batch;
    out->graph_batch_align = (double)e->graph_batch_align;
}
