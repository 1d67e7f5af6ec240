/* kernels.c - single-kernel rooflines (see kernels.h). */
#include "kernels.h"

#include <assert.h>
#include <math.h>

static const char *const bound_names[SIM_BOUND_COUNT] = {"none", "compute", "memory", "comm"};

const char *sim_bound_name(sim_bound b)
{
    if ((int)b < 0 || b >= SIM_BOUND_COUNT)
        return "?";
    return bound_names[b];
}

void sim_roofline(sim_kernel_time *k, double flops_per_s, double bytes_per_s, double n_kernels,
                  double fixed_s)
{
    k->compute_s = k->flops / flops_per_s;
    k->memory_s = n_kernels * fixed_s + k->bytes / bytes_per_s;
    if (k->flops == 0.0 && k->bytes == 0.0) {
        k->compute_s = k->memory_s = k->time_s = 0.0;
        k->bound = SIM_BOUND_NONE;
        return;
    }
    k->bound = k->compute_s > k->memory_s ? SIM_BOUND_COMPUTE : SIM_BOUND_MEMORY;
    k->time_s = k->compute_s > k->memory_s ? k->compute_s : k->memory_s;
}

double sim_gemm_dim_eff(const sim_hw *hw, double m, double n)
{
    if (hw->n_tiles == 0 || m <= 0.0 || n <= 0.0)
        return 1.0;
    const double sms = hw->v[SIM_HWF_N_SM];
    double best = 0.0;
    for (int i = 0; i < hw->n_tiles; i++) {
        const double tm = hw->tiles[i][0], tn = hw->tiles[i][1];
        const double gm = ceil(m / tm), gn = ceil(n / tn);
        const double tile_eff = m * n / (gm * tm * gn * tn);
        const double tiles = gm * gn;
        const double wq_eff = tiles / (ceil(tiles / sms) * sms);
        const double e = tile_eff * wq_eff;
        if (e > best)
            best = e;
    }
    return best;
}

double sim_gemm_fp8_dispatch_eff(const sim_hw *hw, double m, double n)
{
    if (hw->n_fp8_cfg == 0 || m <= 0.0 || n <= 0.0)
        return 1.0;
    int i = 0;
    /* The loader guarantees that the last entry has no bounds. */
    while (i < hw->n_fp8_cfg - 1 &&
           !((hw->fp8_cfg[i].m_max == 0 || m <= (double)hw->fp8_cfg[i].m_max) &&
             (hw->fp8_cfg[i].n_max == 0 || n <= (double)hw->fp8_cfg[i].n_max)))
        i++;
    const struct sim_fp8_cfg *c = &hw->fp8_cfg[i];
    const double tm = c->tile_m, tn = c->tile_n, cm = c->cluster_m, cn = c->cluster_n;
    const double gm = ceil(ceil(m / tm) / cm) * cm, gn = ceil(ceil(n / tn) / cn) * cn;
    const double sms = hw->v[SIM_HWF_N_SM], tiles = gm * gn;
    return m * n / (gm * tm * gn * tn) * tiles / (ceil(tiles / sms) * sms);
}

double sim_gemm_fp8_quant_s(const sim_hw *hw, double m, double k)
{
    if (hw->n_fp8_cfg == 0)
        return 0.0;
    return 3.0 * m * k / hw->v[SIM_HWF_BW_STREAM_SCALE];
}

double sim_gemm_bytes(const sim_hw *hw, sim_dtype dtype, double m, double n, double k)
{
    const double wb = sim_dtype_bytes(dtype);
    if (dtype != SIM_DTYPE_FP8)
        return k * n * wb + m * (k + n) * wb;
    return k * n + m * k * (hw->n_fp8_cfg > 0 ? 1.0 : 2.0) + m * n * 2.0;
}

void sim_gemm_time(const sim_hw *hw, sim_dtype dtype, sim_gemm_model model, double m, double n,
                   double k, sim_kernel_time *out)
{
    const int fp8 = dtype == SIM_DTYPE_FP8;
    const int dispatch = fp8 && hw->n_fp8_cfg > 0;
    out->flops = 2.0 * m * n * k;
    out->bytes = sim_gemm_bytes(hw, dtype, m, n, k);
    /* The dispatched fp8 kernels have their own shapes; every other GEMM the small-M class. */
    double eff = dispatch ? sim_hw_gemm_eff_frac(hw, dtype) : sim_hw_gemm_eff_at(hw, dtype, m);
    if (dispatch)
        eff *= sim_gemm_fp8_dispatch_eff(hw, m, n);
    else if (model == SIM_GEMM_TILE_WAVE)
        eff *= sim_gemm_dim_eff(hw, m, n);
    /* fp8 weights: vLLM's scaled-mm path (activation quantization kernel + fp8 GEMM) has its
     * own measured fixed time and weight-streaming rate (docs/model.md, "fp8 GEMMs"). */
    sim_roofline(out, sim_hw_peak_flops_per_s(hw, dtype) * eff,
                 hw->v[SIM_HWF_BW_STREAM_COPY] *
                     hw->v[fp8 ? SIM_HWF_BW_FACTOR_WEIGHTS_FP8 : SIM_HWF_BW_FACTOR_WEIGHTS],
                 1.0, hw->v[fp8 ? SIM_HWF_GEMM_FIXED_FP8 : SIM_HWF_GEMM_FIXED]);
    if (dispatch && out->flops > 0.0) {
        /* The quantization kernel runs before the GEMM, on the same stream: its time adds. */
        const double q = sim_gemm_fp8_quant_s(hw, m, k);
        out->bytes += 3.0 * m * k;
        out->compute_s += q;
        out->memory_s += q;
        out->time_s += q;
    }
}

double sim_gemm_act_bytes(sim_gemm_kind kind)
{
    switch (kind) {
    case SIM_GEMM_KIND_FP8_BLOCK:
        return 1.0 + 4.0 / 128.0; /* e4m3 + an fp32 scale per 1 x 128 group */
    case SIM_GEMM_KIND_FP4:
        return 0.5 + 1.0 / 16.0; /* e2m1 + an e4m3 scale per 16 */
    case SIM_GEMM_KIND_FP8:
        return 1.0;
    case SIM_GEMM_KIND_16:
    case SIM_GEMM_KIND_COUNT:
        break;
    }
    return 2.0;
}

double sim_gemm_kind_bytes(const sim_hw *hw, sim_gemm_kind kind, double m, double n, double k)
{
    sim_gemm_figs g;
    sim_hw_gemm_figs(hw, kind, &g);
    return k * n * g.weight_bytes + m * k * sim_gemm_act_bytes(kind) + 2.0 * m * n;
}

void sim_gemm_kind_time(const sim_hw *hw, sim_gemm_kind kind, sim_gemm_model model, double m,
                        double n, double k, sim_kernel_time *out)
{
    if (kind == SIM_GEMM_KIND_16 || kind == SIM_GEMM_KIND_FP8 || kind >= SIM_GEMM_KIND_COUNT) {
        sim_gemm_time(hw, kind == SIM_GEMM_KIND_FP8 ? SIM_DTYPE_FP8 : SIM_DTYPE_BF16, model, m, n,
                      k, out);
        return;
    }
    /* Block-scaled fp8 and NVFP4 (docs/model.md, "Block-scaled fp8 and fp4 GEMMs"): a
     * quantization kernel turns the 16-bit activations into the kernel's format (its scales
     * included), then the GEMM reads quantized weights and activations and writes 16 bits. */
    sim_gemm_figs g;
    sim_hw_gemm_figs(hw, kind, &g);
    const double ab = sim_gemm_act_bytes(kind);
    out->flops = 2.0 * m * n * k;
    out->bytes = sim_gemm_kind_bytes(hw, kind, m, n, k);
    double eff = g.eff_frac;
    if (model == SIM_GEMM_TILE_WAVE)
        eff *= sim_gemm_dim_eff(hw, m, n);
    sim_roofline(out, g.peak_flops_per_s * eff, hw->v[SIM_HWF_BW_STREAM_COPY] * g.bw_factor_frac,
                 1.0, g.fixed_s);
    if (out->flops > 0.0) {
        const double q = sim_gemm_act_quant_s(hw, kind, m, k);
        out->bytes += (2.0 + ab) * m * k;
        out->compute_s += q;
        out->memory_s += q;
        out->time_s += q;
    }
}

double sim_gemm_act_quant_s(const sim_hw *hw, sim_gemm_kind kind, double m, double k)
{
    if (kind == SIM_GEMM_KIND_FP8)
        return sim_gemm_fp8_quant_s(hw, m, k);
    if (kind != SIM_GEMM_KIND_FP8_BLOCK && kind != SIM_GEMM_KIND_FP4)
        return 0.0;
    return (2.0 + sim_gemm_act_bytes(kind)) * m * k / hw->v[SIM_HWF_BW_STREAM_SCALE];
}

void sim_attn_decode_time(const sim_hw *hw, double batch, double ctx, double heads, double kv_heads,
                          double head_dim, double kv_bytes, sim_kernel_time *out)
{
    const double hb = 2.0;
    out->flops = batch * 4.0 * heads * head_dim * ctx;
    /* KV read once per query head where the stack's kernel does not share it (hw.h). */
    const double kv_read = hw->v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] == 1.0 ? heads : kv_heads;
    out->bytes = batch * (2.0 * heads * head_dim * hb + ctx * 2.0 * kv_read * head_dim * kv_bytes);
    /* An fp8 KV cache (1 byte per element) is gathered and dequantized at its own rate. The
     * per (sequence, query head) time is the work of a thread block that does not scale with
     * the KV length (Q load, softmax merge, output write; docs/model.md, "Decode attention"). */
    const sim_hw_field f = kv_bytes < 2.0 ? SIM_HWF_BW_FACTOR_KV_FP8 : SIM_HWF_BW_FACTOR_KV;
    const double fixed_s =
        hw->v[SIM_HWF_ATTN_FIXED] + hw->v[SIM_HWF_ATTN_DECODE_SEQ_HEAD] * batch * heads;
    sim_roofline(out, sim_hw_peak_flops_per_s(hw, SIM_DTYPE_BF16) * hw->v[SIM_HWF_ATTN_EFF],
                 hw->v[SIM_HWF_BW_STREAM_COPY] * hw->v[f], 1.0, fixed_s);
}

void sim_attn_prefill_time(const sim_hw *hw, double batch, double seq, double heads,
                           double kv_heads, double head_dim, sim_kernel_time *out)
{
    const double hb = 2.0;
    out->flops = batch * 4.0 * heads * head_dim * seq * (seq + 1.0) / 2.0;
    out->bytes = batch * (2.0 * seq * heads * head_dim * hb + seq * 2.0 * kv_heads * head_dim * hb);
    sim_roofline(out, sim_hw_peak_flops_per_s(hw, SIM_DTYPE_BF16) * hw->v[SIM_HWF_ATTN_EFF],
                 hw->v[SIM_HWF_BW_STREAM_COPY] * hw->v[SIM_HWF_BW_FACTOR_MIXED], 1.0,
                 hw->v[SIM_HWF_ATTN_FIXED]);
    /* FlashAttention's rate ramps with the prompt length: rate = peak x eff x s / (s + s0)
     * (short prompts leave query tiles and SMs idle), plus a fixed time on the compute side
     * (docs/model.md, "Prefill attention"). Both 0 by default: the plain roofline above. */
    const double s0 = hw->v[SIM_HWF_ATTN_PREFILL_SEQ_HALF];
    if (out->flops > 0.0 && seq > 0.0) {
        out->compute_s = hw->v[SIM_HWF_ATTN_PREFILL_FIXED] + out->compute_s * (1.0 + s0 / seq);
        out->bound = out->compute_s > out->memory_s ? SIM_BOUND_COMPUTE : SIM_BOUND_MEMORY;
        out->time_s = out->compute_s > out->memory_s ? out->compute_s : out->memory_s;
    }
}

double sim_allreduce_time_s(const sim_hw *hw, int n, double bytes)
{
    assert(n >= 2);
    const int g = (int)hw->v[SIM_HWF_N_GPUS_PER_NODE];
    sim_allreduce ar;
    if (n <= g || g < 1) {
        sim_hw_allreduce_for(hw, n, &ar);
        return sim_allreduce_entry_time_s(&ar, n, bytes);
    }
    /* A group over k nodes of g GPUs (docs/model.md, "Communication across nodes"): NCCL's
     * hierarchical all-reduce, a reduce-scatter and an all-gather among each node's g GPUs
     * (together the intra-node all-reduce of the message) around an all-reduce of each GPU's
     * 1/g share among the k nodes, a ring over the GPUs' own NICs: 2 (k-1) steps of one hop. */
    const double k = (double)n / (double)g;
    double t = 0.0;
    if (g >= 2) {
        sim_hw_allreduce_for(hw, g, &ar);
        t = sim_allreduce_entry_time_s(&ar, g, bytes);
    }
    return t + 2.0 * (k - 1.0) * hw->v[SIM_HWF_INTERNODE_LATENCY] +
           2.0 * (k - 1.0) / k * bytes / (double)g / hw->v[SIM_HWF_BW_INTERNODE];
}

double sim_alltoall_time_s(const sim_hw *hw, int n, int stride, double bytes)
{
    assert(n >= 2 && stride >= 1);
    const int g = (int)hw->v[SIM_HWF_N_GPUS_PER_NODE];
    int m = g >= stride ? g / stride : 1;
    if (m > n || g < 1)
        m = n;
    double t = 0.0;
    if (m >= 2) {
        sim_allreduce a;
        sim_hw_alltoall_for(hw, m, &a);
        /* The entry's (m-1)/m of an m-GPU buffer: the (m-1)/n of this one that stays in the
         * node is (m-1)/m of its m/n part. */
        t = sim_alltoall_entry_time_s(&a, m, bytes * (double)m / (double)n);
    }
    if (n > m)
        t += ((double)n / (double)m - 1.0) * hw->v[SIM_HWF_INTERNODE_LATENCY] +
             (double)(n - m) / (double)n * bytes / hw->v[SIM_HWF_BW_INTERNODE];
    return t;
}

double sim_moe_expected_experts(double n_experts, double k, double n_tokens)
{
    if (n_experts <= 0.0 || n_tokens <= 0.0)
        return 0.0;
    return n_experts * (1.0 - pow(1.0 - k / n_experts, n_tokens));
}

double sim_moe_block_m(double tokens, double n_experts)
{
    return tokens <= n_experts ? 16.0 : 64.0;
}

double sim_moe_padded_rows_random(double n_experts, double topk, double tokens, double block_m)
{
    const double touched = sim_moe_expected_experts(n_experts, topk, tokens);
    const double a = touched * block_m, b = tokens * topk + touched * (block_m - 1.0) / 2.0;
    return a > b ? a : b;
}

void sim_fused_moe_time(const sim_hw *hw, sim_moe_class cls, const sim_moe_shape *s,
                        sim_kernel_time *out)
{
    const double hb = 2.0, d = s->d, f = s->f;
    out->flops = 2.0 * s->rows * 3.0 * d * f;
    out->bytes =
        s->touched * s->weight_bytes + (s->rows * (3.0 * d + 6.0 * f) + s->tokens * d) * hb;
    if (s->rows <= 0.0 || s->touched <= 0.0) {
        out->flops = out->bytes = out->compute_s = out->memory_s = out->time_s = 0.0;
        out->bound = SIM_BOUND_NONE;
        return;
    }
    sim_moe_figs g;
    sim_hw_moe_figs(hw, cls, &g);
    const double re = s->rows_padded / s->touched;
    const double work =
        2.0 * s->rows_padded * (3.0 * d * f * (1.0 + g.rows_half / re) + g.tile_k * (2.0 * f + d));
    out->compute_s = work / (g.peak_flops_per_s * g.eff_frac);
    out->memory_s = g.fixed_s + out->bytes / (hw->v[SIM_HWF_BW_STREAM_COPY] * g.bw_factor_frac);
    out->bound = out->compute_s > out->memory_s ? SIM_BOUND_COMPUTE : SIM_BOUND_MEMORY;
    out->time_s = out->compute_s > out->memory_s ? out->compute_s : out->memory_s;
}
