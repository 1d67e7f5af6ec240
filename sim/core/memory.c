/*
 * memory.c - the memory budget of one GPU and its KV capacity (see memory.h;
 * docs/model.md, "Memory").
 */
#include "memory.h"

#include <math.h>

#include "pipeline.h"
#include "spec.h"

/*
 * Peak torch memory of vLLM's profiling run (gpu_model_runner.profile_run; V0 the same
 * execute_model): a forward pass over T = max_num_batched_tokens tokens, then the dummy
 * sampler over S = max_num_seqs rows (docs/engine.md, "The profiling run's peak"):
 *   forward = T (2 d + 3 f) hb   residual and normalized hidden states, gate/up and activation
 *                                outputs at the MLP (f = F/tp; MoE: k experts' worth per token)
 *   sampler = S V (hb + b_logit) + n_sm V b_sm + W
 * S V hb the logits in the model's dtype, b_logit the sampler's fp32 working set per entry,
 * b_sm the buffer rows it keeps per SM, and W the fused-MoE workspace when the engine keeps it
 * allocated and the experts are unquantized (TritonExperts.workspace_shapes: ws1 = T k
 * max(N/2, K), ws2 = T k max(N, K), out = T K, held as max(ws1, out) + ws2 elements; N = 2 F_e
 * per GPU, K = d). The forward's intermediates are freed before the sampler runs, so the peak
 * is max(forward, sampler + T d hb) with the forward's output still referenced; an engine
 * profile with activation_peak_additive (V0, whose form was not re-derived) adds the two.
 * Fills out's activation_bytes and its two phases.
 */
static void activation_peak_bytes(const sim_engine *e, const sim_hw *hw, const sim_model *m,
                                  const sim_run_cfg *run, const sim_sched_resolved *s,
                                  sim_memory *out)
{
    const double hb = run->dtype == SIM_DTYPE_FP8 ? 2.0 : sim_dtype_bytes(run->dtype);
    const double t = (double)run->tp, d = (double)m->d_model;
    double f = m->n_moe_layers < m->n_layers ? (double)m->d_ff / t : 0.0;
    if (m->n_experts > 0) {
        double fe = (double)m->n_experts_per_tok * (double)m->d_ff_expert / t;
        f = f > fe ? f : fe;
    }
    const double T = (double)s->max_num_batched_tokens, S = (double)s->max_num_seqs;
    const double V = (double)m->vocab;
    const double forward = T * (2.0 * d + 3.0 * f) * hb;
    double sampler =
        S * V * (hb + e->sampler_logit_bytes) + hw->v[SIM_HWF_N_SM] * V * e->sampler_sm_vocab_bytes;
    const int unquantized_experts = m->quant.method == SIM_QUANT_NONE || m->quant.mlp_excluded;
    if (e->moe_workspace_persistent && m->n_experts > 0 && unquantized_experts &&
        run->dtype != SIM_DTYPE_FP8) {
        /* With expert parallelism each GPU holds whole experts; without, a 1/(dp x tp) slice
         * of each (sim_moe_layout_of; docs/model.md, "Expert and data parallelism"). */
        sim_moe_layout ml;
        sim_moe_layout_of(run, &ml);
        const double n = 2.0 * (double)m->d_ff_expert / (ml.ep ? 1.0 : (double)ml.group);
        const double k = (double)m->n_experts_per_tok;
        const double ws1 = T * k * fmax(n / 2.0, d), ws2 = T * k * fmax(n, d), ws_out = T * d;
        sampler += (fmax(ws1, ws_out) + ws2) * hb;
    }
    if (!e->activation_peak_additive)
        sampler += T * d * hb;
    out->activation_forward_bytes = forward;
    out->activation_sampler_bytes = sampler;
    out->activation_bytes =
        e->activation_peak_additive ? forward + sampler : fmax(forward, sampler);
}

void sim_memory_compute(const sim_setup *su, sim_memory *out)
{
    const sim_engine *e = su->engine;
    const sim_model *m = su->model;
    const sim_hw *hw = su->hw;
    const sim_run_cfg *run = su->run;
    const sim_sched_resolved *s = su->sched;
    /* V1 sizes the cache from the total CUDA reports (torch.cuda.mem_get_info), V0 from the
     * same call; profiles without that figure default it to the labelled capacity. */
    out->capacity_bytes =
        e->kind == SIM_SCHED_V1 ? hw->v[SIM_HWF_MEM_CUDA_TOTAL] : hw->v[SIM_HWF_MEM_CAPACITY];
    out->usable_bytes = out->capacity_bytes * s->gpu_memory_utilization;
    sim_weight_bytes wb; /* experts over dp x tp GPUs (docs/model.md, "Expert and data ...") */
    sim_model_weight_bytes_moe(m, run->tp, run->dp, run->ep, run->dtype, &wb);
    out->weights_bytes = wb.total;
    activation_peak_bytes(e, hw, m, run, s, out);
    out->reserve_bytes =
        e->reserve_bytes +
        (run->tp > 1 || run->dp > 1 ? e->reserve_tp_bytes : 0.0); /* TP/DP NCCL groups */
    if (e->kind == SIM_SCHED_V1 && !s->enforce_eager)
        out->reserve_bytes += e->cudagraph_bytes;
    out->kv_bytes_per_token = sim_model_kv_bytes_per_token(m, run->tp, run->kv_dtype);
    /* Speculative decoding: the drafter's weights, and its layers' KV cache in the same blocks
     * (vLLM adds the draft layers to the target's KV-cache group; spec.h). */
    double spec_w = 0.0, spec_kv = 0.0;
    if (run->spec)
        sim_spec_draft_bytes(run->spec, m, run, &spec_w, &spec_kv);
    out->weights_bytes += spec_w;
    out->kv_bytes_per_token += spec_kv;
    out->kv_budget_bytes =
        out->usable_bytes - out->weights_bytes - out->activation_bytes - out->reserve_bytes;
    sim_model_kv_layout(m, run->tp, run->kv_dtype, sim_sched_hybrid_kv(e, s), &out->kv);
    const sim_kv_layout *k = &out->kv;
    const int two_kinds = k->n_full_groups > 0 && k->n_window_groups > 0;
    out->kv_full_bytes_per_token = k->layer_token_bytes * (double)k->n_full_layers + spec_kv;
    /* One pool block (vLLM get_kv_cache_config_from_groups): block_size tokens of every layer
     * when all layers are of one kind, else one page in each of G layers. */
    out->kv_block_bytes =
        (double)s->block_size *
        (two_kinds ? k->layer_token_bytes * (double)k->group_layers : out->kv_bytes_per_token);
    out->kv_block_layers =
        two_kinds ? k->group_layers
                  : m->n_layers + (run->spec && spec_kv > 0.0 ? run->spec->draft.n_layers : 0);
    double blocks =
        out->kv_budget_bytes > 0.0 ? floor(out->kv_budget_bytes / out->kv_block_bytes) : 0.0;
    out->pp_stage = 0;
    if (run->pp > 1) {
        /* Pipeline stages (docs/model.md, "Pipeline parallelism"): each GPU holds its stage's
         * weights and the KV cache of its stage's layers; the engine uses the smallest block
         * count of all workers (vLLM V1 get_kv_cache_configs), so the stage with the fewest
         * blocks sets the cache, and its figures are reported. With two kinds of layers the
         * groups are the whole model's, projected on the stage: a group holds at most
         * ceil(stage layers of its kind / groups of that kind) of the stage's layers (vLLM
         * splits a kind's layers over its groups round-robin), and a stage's block is that many
         * pages. */
        for (int i = 0; i < run->pp; i++) {
            const double w = sim_pp_stage_weight_bytes(m, run->tp, run->pp, i, run->dtype);
            const double kv =
                sim_pp_stage_kv_bytes_per_token(m, run->tp, run->pp, i, run->kv_dtype);
            const double budget =
                out->usable_bytes - w - out->activation_bytes - out->reserve_bytes;
            double bs = (double)s->block_size * kv;
            int64_t start, n;
            sim_pp_stage_range(m->n_layers, run->pp, i, &start, &n);
            int64_t span = n;
            if (two_kinds) {
                const int64_t lf = sim_model_full_layers_in(m, start, n);
                const int64_t gf = (lf + k->n_full_groups - 1) / k->n_full_groups;
                const int64_t gw = (n - lf + k->n_window_groups - 1) / k->n_window_groups;
                span = gf > gw ? gf : gw;
                bs = (double)s->block_size * k->layer_token_bytes * (double)span;
            }
            const double b = budget > 0.0 ? floor(budget / bs) : 0.0;
            if (i == 0 || b < blocks || (b == blocks && budget < out->kv_budget_bytes)) {
                blocks = b;
                out->pp_stage = i;
                out->weights_bytes = w;
                out->kv_bytes_per_token = kv;
                out->kv_budget_bytes = budget;
                out->kv_block_bytes = bs;
                out->kv_block_layers = span;
            }
        }
        /* The reported stage's layers (the groups stay the whole model's). */
        int64_t start, n;
        sim_pp_stage_range(m->n_layers, run->pp, out->pp_stage, &start, &n);
        out->kv.n_full_layers = k->n_window_groups > 0 ? sim_model_full_layers_in(m, start, n) : n;
        out->kv.n_window_layers = n - out->kv.n_full_layers;
        out->kv_full_bytes_per_token = k->layer_token_bytes * (double)out->kv.n_full_layers;
    }
    /* A float-to-integer conversion out of range is undefined (C11 6.3.1.4): cap the count,
     * far above any GPU's (2^40 blocks of one token of one byte is a terabyte). */
    out->kv_blocks = blocks < SIM_KV_BLOCKS_MAX ? (int64_t)blocks : (int64_t)SIM_KV_BLOCKS_MAX;
    /* vLLM logs num_blocks // groups x block_size as the cache's size in tokens. */
    out->kv_capacity_tokens =
        out->kv_blocks / (k->n_full_groups + k->n_window_groups) * s->block_size;
    /* vLLM check_enough_kv_cache_memory: one max_model_len request must fit (without windows:
     * kv_blocks >= ceil(max_model_len / block_size), i.e. capacity >= max_model_len). */
    out->kv_blocks_max_seq =
        sim_kv_max_request_blocks(k, s->block_size, s->max_num_batched_tokens, s->max_model_len);
    out->fits = out->kv_budget_bytes > 0.0 && out->kv_blocks >= out->kv_blocks_max_seq;
}
