/*
 * pipeline.c - pipeline stages, their transfers and the pipeline's latency and cycle
 * (pipeline.h; docs/model.md, "Pipeline parallelism").
 */
#include "pipeline.h"

#include <assert.h>

#include "err.h"

sim_status sim_pp_check(const sim_model *m, int pp, struct sim_err *err)
{
    if (pp < 1 || pp > SIM_PP_MAX) {
        sim_errf(err, "--pp %d: expected 1 to %d pipeline stages", pp, SIM_PP_MAX);
        return SIM_EINVAL;
    }
    if ((int64_t)pp > m->n_layers) {
        sim_errf(err,
                 "--pp %d: more pipeline stages than the model's %lld layers "
                 "(num_hidden_layers); every stage needs a layer",
                 pp, (long long)m->n_layers);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

void sim_pp_partition(int64_t n_layers, int pp, int64_t *layers)
{
    assert(pp >= 1 && pp <= SIM_PP_MAX && n_layers >= pp);
    for (int i = 0; i < pp; i++)
        layers[i] = n_layers / pp;
    /* vLLM get_pp_indices: for i in range(2, remaining + 2): partitions[-i] += 1 */
    const int64_t rem = n_layers % pp;
    for (int64_t i = 2; i < rem + 2; i++)
        layers[pp - i] += 1;
}

void sim_pp_stage_range(int64_t n_layers, int pp, int stage, int64_t *start, int64_t *n)
{
    assert(stage >= 0 && stage < pp);
    int64_t layers[SIM_PP_MAX];
    sim_pp_partition(n_layers, pp, layers);
    int64_t s0 = 0;
    for (int i = 0; i < stage; i++)
        s0 += layers[i];
    *start = s0;
    *n = layers[stage];
}

int sim_pp_boundary_internode(const sim_hw *hw, int tp, int stage)
{
    const int64_t g = (int64_t)hw->v[SIM_HWF_N_GPUS_PER_NODE];
    /* TP rank 0 of the stage and of the next one: ranks stage x tp and (stage + 1) x tp. */
    const int64_t a = (int64_t)stage * tp, b = (int64_t)(stage + 1) * tp;
    return a / g != b / g;
}

double sim_pp_transfer_s(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg, int stage,
                         double tokens)
{
    const int tp = cfg->tp;
    /* Activations travel in the model's 16-bit type, also under fp8 weights. */
    const double hb = cfg->dtype == SIM_DTYPE_FP8 ? 2.0 : sim_dtype_bytes(cfg->dtype);
    const double tensor = tokens * (double)m->d_model * hb; /* hidden states, or residual */
    sim_allreduce ar2;
    sim_hw_allreduce_for(hw, 2, &ar2);
    double lat = ar2.latency_s, bw = hw->v[SIM_HWF_LINK_BW];
    if (sim_pp_boundary_internode(hw, tp, stage)) {
        lat = hw->v[SIM_HWF_INTERNODE_LATENCY];
        bw = hw->v[SIM_HWF_BW_INTERNODE];
    }
    double t = 2.0 * (lat + tensor / (double)tp / bw);
    if (tp > 1) {
        /* The receiving TP group all-gathers both tensors: (tp - 1)/tp of each arrives. */
        sim_allreduce ar;
        sim_hw_allreduce_for(hw, tp, &ar);
        t += 2.0 * (ar.latency_s + (double)(tp - 1) / (double)tp * tensor / ar.bus_bw_bytes_per_s);
    }
    return t;
}

double sim_pp_stage_weight_bytes(const sim_model *m, int tp, int pp, int stage, sim_dtype dtype)
{
    int64_t start, n;
    sim_pp_stage_range(m->n_layers, pp, stage, &start, &n);
    sim_weight_bytes w;
    sim_model_weight_bytes(m, tp, dtype, &w);
    const double frac = (double)n / (double)m->n_layers;
    /* Norms: two per layer (four on Gemma-2), and the final one on the last stage. */
    const double per_layer = sim_model_norms_per_layer(m);
    const double one_norm = w.norms / (per_layer * (double)m->n_layers + 1.0);
    double b = frac * (w.qkv + w.o + w.small + w.gate_up + w.down + w.experts + w.router) +
               per_layer * (double)n * one_norm + (stage == pp - 1 ? one_norm : 0.0);
    /* The vision encoder of a multimodal model feeds the first layer: counted with the
     * embedding on the first stage only (an assumption; docs/model.md, "Vision encoders"). */
    if (stage == 0)
        b += w.embedding + w.vision;
    /* Every stage builds RoPE's cos/sin caches for its own attention layers (get_rope). */
    b += w.rope;
    if (stage == pp - 1)
        b += m->tie_embeddings ? (stage == 0 ? 0.0 : w.embedding) : w.lm_head;
    return b;
}

double sim_pp_stage_kv_bytes_per_token(const sim_model *m, int tp, int pp, int stage,
                                       sim_dtype kv_dtype)
{
    int64_t start, n;
    sim_pp_stage_range(m->n_layers, pp, stage, &start, &n);
    return sim_model_kv_bytes_per_token(m, tp, kv_dtype) * (double)n / (double)m->n_layers;
}

static double step_tokens(const sim_step *s)
{
    double T = 0.0;
    for (int i = 0; i < s->n_groups; i++)
        T += (double)s->groups[i].count * (double)s->groups[i].new_tokens;
    return T;
}

/* Stage i's cost into *c; returns its transfer time after it (unscaled). */
static double stage_cost(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                         const sim_step *s, int i, sim_step_cost *c)
{
    const int pp = cfg->pp > 1 ? cfg->pp : 1;
    int64_t start, n;
    sim_pp_stage_range(m->n_layers, pp, i, &start, &n);
    sim__step_stage_cost(m, hw, cfg, start, n, i == 0, i == pp - 1, s, c);
    return i + 1 < pp ? sim_pp_transfer_s(m, hw, cfg, i, step_tokens(s)) : 0.0;
}

void sim_pp_step(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg, const sim_step *s,
                 sim_pp_cost *out)
{
    const int pp = cfg->pp > 1 ? cfg->pp : 1;
    assert(pp <= SIM_PP_MAX && pp <= m->n_layers);
    *out = (sim_pp_cost){.pp = pp};
    sim_pp_partition(m->n_layers, pp, out->layers);
    for (int i = 0; i < pp; i++) {
        sim_step_cost c;
        const double tr = stage_cost(m, hw, cfg, s, i, &c);
        out->stage_s[i] = sim_calibrated_s(cfg->alpha, c.roofline_s, 0.0, 0.0);
        out->transfer_s[i] = sim_calibrated_s(cfg->alpha, tr, 0.0, 0.0);
        out->internode[i] = i + 1 < pp && sim_pp_boundary_internode(hw, cfg->tp, i);
        out->roofline_s += c.roofline_s + tr;
        if (i == 0) {
            out->tokens = c.tokens;
            out->seqs = c.seqs;
        }
        const double busy = out->stage_s[i] + out->transfer_s[i];
        out->latency_s += busy;
        if (busy > out->interval_s)
            out->interval_s = busy;
    }
    out->latency_s += cfg->beta_s;
}

double sim_pp_cycle_s(const sim_pp_cost *c, int batches)
{
    assert(batches >= 1 && batches <= c->pp);
    const double full = (double)batches * c->interval_s;
    return full > c->latency_s ? full : c->latency_s;
}

double sim_pp_bubble_frac(const sim_pp_cost *c, int batches)
{
    double work = 0.0;
    for (int i = 0; i < c->pp; i++)
        work += c->stage_s[i];
    const double cycle = sim_pp_cycle_s(c, batches);
    return cycle > 0.0 ? 1.0 - (double)batches * work / ((double)c->pp * cycle) : 0.0;
}

void sim__pp_step_cost(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                       const sim_step *s, sim_step_cost *out)
{
    const int pp = cfg->pp;
    assert(pp > 1 && pp <= SIM_PP_MAX && pp <= m->n_layers);
    sim_step_cost sum = {0};
    for (int i = 0; i < pp; i++) {
        sim_step_cost c;
        const double tr = stage_cost(m, hw, cfg, s, i, &c);
        for (int k = 0; k < SIM_OP_COUNT; k++) {
            sim_op_cost *o = &sum.ops[k];
            const sim_op_cost *a = &c.ops[k];
            o->flops += a->flops;
            o->bytes += a->bytes;
            o->weight_bytes += a->weight_bytes;
            o->n_kernels += a->n_kernels;
            o->compute_s += a->compute_s;
            o->memory_s += a->memory_s;
            o->time_s += a->time_s;
            if (a->bound != SIM_BOUND_NONE && (o->bound == SIM_BOUND_NONE || a->time_s > 0.0))
                o->bound = a->bound;
        }
        sum.flops += c.flops;
        sum.bytes += c.bytes;
        sum.compute_s += c.compute_s;
        sum.memory_s += c.memory_s;
        sum.comm_s += c.comm_s + tr;
        sum.roofline_s += c.roofline_s + tr;
        sum.n_allreduce += c.n_allreduce;
        if (i == 0) {
            sum.tokens = c.tokens;
            sum.seqs = c.seqs;
            sum.seqs_emitting = c.seqs_emitting;
            sum.decode_kernel = c.decode_kernel; /* every stage's: the step and heads decide */
            sum.decode_blocks_resident = c.decode_blocks_resident; /* likewise */
        }
    }
    sum.step_s = sim_calibrated_s(cfg->alpha, sum.roofline_s, cfg->beta_s, 1.0);
    sum.bound = sum.compute_s > sum.memory_s ? SIM_BOUND_COMPUTE : SIM_BOUND_MEMORY;
    *out = sum;
}
