/*
 * ops.c - per-operator FLOPs and HBM bytes of one engine step over a range of
 * layers, and their roofline time (see ops.h). Every count below is derived in
 * docs/model.md, "Operators"; the section name is given at each operator.
 * Notation: T new tokens in the step, S sequences, S_e sequences that sample,
 * d hidden size, L layers, Hg = heads per GPU, Kg = KV heads per GPU, dh head
 * dim, wb weight bytes, hb 16-bit activation bytes, kvb KV-cache bytes per
 * element.
 */
#include "ops.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "kernels.h"

static const char *const op_names[SIM_OP_COUNT] = {
#define XX(e, name) name,
    SIM_OPS(XX)
#undef XX
};

/* Elementwise FLOPs per element (docs/model.md, "Elementwise operators"). */
#define FLOPS_PER_NORM_ELEM                                                                        \
    5.0                           /* fused residual add + RMSNorm: add, square, sum, scale, weight \
                                   */
#define FLOPS_PER_ROPE_ELEM   3.0 /* rotation: two multiplies and an add */
#define FLOPS_PER_QKNORM_ELEM 4.0 /* square, sum, scale, weight */
#define FLOPS_PER_ACT_ELEM    5.0 /* SiLU(gate) x up: exp, add, divide, multiply, multiply */
#define FLOPS_PER_SAMPLE_ELEM 5.0 /* softmax and selection over the vocabulary */
/* Sampler passes over fp32 logits: read logits, write probabilities, read them to sample. */
#define SAMPLER_PASSES 3.0
#define LOGIT_BYTES    4.0

const char *sim_op_name(sim_op_kind k)
{
    if ((int)k < 0 || k >= SIM_OP_COUNT)
        return "?";
    return op_names[k];
}

const char *sim_decode_kernel_name(sim_decode_kernel k)
{
    static const char *const names[SIM_DECODE_KERNEL_COUNT] = {"shared-kv", "per-query-head",
                                                               "paged-v1", "paged-v2"};
    if ((int)k < 0 || k >= SIM_DECODE_KERNEL_COUNT)
        return "?";
    return names[k];
}

int sim_decode_kernel_per_q_head(sim_decode_kernel k, const sim_hw *hw)
{
    return k == SIM_DECODE_PER_Q_HEAD || k == SIM_DECODE_PAGED_V1 ||
           (k == SIM_DECODE_PAGED_V2 && hw->v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] == 1.0);
}

/* Expected maximum of g independent standard normals, g = 2, 4, ..., 256: the integral of
 * x g phi(x) Phi(x)^(g-1) over x, evaluated numerically to 4 decimals (Harter 1961,
 * "Expected values of normal order statistics", Biometrika 48, tabulates these). */
static const double MAX_NORMAL_POW2[] = {0.0,    0.5642, 1.0294, 1.4236, 1.7660,
                                         2.0697, 2.3437, 2.5946, 2.8269};

double sim_moe_ep_busiest_factor(double n_experts, double k, double n_tokens, int group)
{
    const double G = (double)group, n = n_tokens * k;
    if (group <= 1 || !(n > 0.0) || !(n_experts > k))
        return 1.0;
    double l = log2(G);
    const double top = (double)(sizeof(MAX_NORMAL_POW2) / sizeof(MAX_NORMAL_POW2[0]) - 1);
    if (l > top)
        l = top; /* beyond 256 GPUs: held at m_256 (an underestimate) */
    const int i = (int)floor(l);
    const double m =
        i >= (int)top
            ? MAX_NORMAL_POW2[(int)top]
            : MAX_NORMAL_POW2[i] + (l - (double)i) * (MAX_NORMAL_POW2[i + 1] - MAX_NORMAL_POW2[i]);
    const double mu = n / G;
    const double var = n / G * (1.0 - 1.0 / G) * (n_experts - k) / (n_experts - 1.0);
    return 1.0 + sqrt(var) * m / sqrt(1.0 - 1.0 / G) / mu;
}

int sim_run_dp(const sim_run_cfg *cfg) { return cfg->dp > 1 ? cfg->dp : 1; }

int64_t sim_dp_rank_share(const sim_run_cfg *cfg, int64_t n)
{
    const int64_t dp = sim_run_dp(cfg);
    return (n + dp - 1) / dp;
}

void sim_moe_layout_of(const sim_run_cfg *cfg, sim_moe_layout *out)
{
    const int dp = sim_run_dp(cfg);
    out->group = dp * cfg->tp;
    out->ep = cfg->ep ? 1 : 0;
    out->tokens_mult = (double)dp;
}

sim_status sim_moe_layout_check(const sim_model *m, const sim_run_cfg *cfg, struct sim_err *err)
{
    if (cfg->dp < 0 || cfg->dp > SIM_DP_MAX) {
        sim_errf(err, "--dp %d: expected 1 to %d data-parallel ranks", cfg->dp, SIM_DP_MAX);
        return SIM_EINVAL;
    }
    if (!cfg->ep && (cfg->dp <= 1 || m->n_experts == 0))
        return SIM_OK;
    if (cfg->pp > 1) {
        sim_errf(err, "%s with --pp %d: not modelled yet (pipeline stages of DP or EP layouts)",
                 cfg->ep ? "--ep" : "--dp", cfg->pp);
        return SIM_EINVAL;
    }
    if (cfg->ep && m->n_experts == 0) {
        sim_errf(err, "--ep: %s has no experts (expert parallelism applies to MoE models)", m->id);
        return SIM_EINVAL;
    }
    sim_moe_layout ml;
    sim_moe_layout_of(cfg, &ml);
    if (cfg->ep && m->n_experts % ml.group != 0) {
        sim_errf(err,
                 "--ep: num_experts = %lld is not divisible by the %d GPUs of the expert-parallel "
                 "group (DP %d x TP %d)",
                 (long long)m->n_experts, ml.group, ml.group / cfg->tp, cfg->tp);
        return SIM_EINVAL;
    }
    if (!cfg->ep && m->d_ff_expert % ml.group != 0) {
        sim_errf(err,
                 "--dp %d: moe_intermediate_size = %lld is not divisible by DP x TP = %d (without "
                 "--ep the experts are sliced over DP x TP GPUs)",
                 cfg->dp, (long long)m->d_ff_expert, ml.group);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

void sim_moe_dispatch_bytes(const sim_model *m, const sim_run_cfg *cfg, double tokens, double hb,
                            double *dispatch_bytes, double *combine_bytes)
{
    *dispatch_bytes = *combine_bytes = 0.0;
    if (cfg->dp <= 1 || m->n_experts == 0)
        return;
    const double n = (double)cfg->dp * tokens, d = (double)m->d_model;
    *dispatch_bytes = n * (d * hb + (double)m->n_experts * sim_model_router_bytes(m, hb));
    *combine_bytes = n * d * hb;
}

double sim_attn_pairs(double t, double c, double w)
{
    if (w <= 0.0)
        return t * c + t * (t + 1.0) / 2.0;
    /* Queries i = 1..i0 see all c + i keys; the rest see exactly w. */
    double i0 = w - c;
    if (i0 < 0.0)
        i0 = 0.0;
    if (i0 > t)
        i0 = t;
    return i0 * c + i0 * (i0 + 1.0) / 2.0 + (t - i0) * w;
}

/* S(n) of sim_attn_pairs_chunked: the keys of the first n positions, chunk by chunk. */
static double chunked_prefix(double n, double chunk)
{
    const double q = floor(n / chunk), r = n - q * chunk;
    return q * chunk * (chunk + 1.0) / 2.0 + r * (r + 1.0) / 2.0;
}

double sim_attn_pairs_chunked(double t, double c, double chunk)
{
    assert(chunk >= 1.0);
    return chunked_prefix(c + t, chunk) - chunked_prefix(c, chunk);
}

static void add(sim_op_cost *op, double flops, double bytes, double weight_bytes)
{
    op->flops += flops;
    op->bytes += bytes;
    op->weight_bytes += weight_bytes;
}

/*
 * The GEMM kernel the block linear layers run (hw.h sim_gemm_kind; docs/model.md,
 * "Block-scaled fp8 and fp4 GEMMs"): none for 16-bit models and weight-only schemes (the
 * 16-bit path below); per-tensor fp8 for W8A8 fp8 and int8 (and --dtype fp8); block fp8
 * for fp8 checkpoints with weight_block_size; fp4 for NVFP4.
 */
static sim_gemm_kind gemm_kind(const sim_model *m, const sim_run_cfg *cfg)
{
    if (m->quant.method == SIM_QUANT_NONE)
        return cfg->dtype == SIM_DTYPE_FP8 ? SIM_GEMM_KIND_FP8 : SIM_GEMM_KIND_16;
    switch (m->quant.math) {
    case SIM_GEMM_MATH_FP8:
        return m->quant.block_n > 0 ? SIM_GEMM_KIND_FP8_BLOCK : SIM_GEMM_KIND_FP8;
    case SIM_GEMM_MATH_INT8:
        return SIM_GEMM_KIND_FP8;
    case SIM_GEMM_MATH_FP4:
        return SIM_GEMM_KIND_FP4;
    case SIM_GEMM_MATH_16:
    case SIM_GEMM_MATH_COUNT:
        break;
    }
    return SIM_GEMM_KIND_16;
}

sim_moe_class sim_moe_class_of(const sim_model *m, const sim_run_cfg *cfg)
{
    if (m->quant.method == SIM_QUANT_NONE)
        return cfg->dtype == SIM_DTYPE_FP8 ? SIM_MOE_CLASS_FP8 : SIM_MOE_CLASS_16;
    if (m->quant.mlp_excluded)
        return SIM_MOE_CLASS_16;
    if (m->quant.method == SIM_QUANT_MXFP4)
        return SIM_MOE_CLASS_MXFP4;
    switch (m->quant.math) {
    case SIM_GEMM_MATH_FP8:
        return m->quant.block_n > 0 ? SIM_MOE_CLASS_FP8_BLOCK : SIM_MOE_CLASS_FP8;
    case SIM_GEMM_MATH_INT8:
        return SIM_MOE_CLASS_FP8;
    case SIM_GEMM_MATH_FP4:
        return SIM_MOE_CLASS_NVFP4;
    case SIM_GEMM_MATH_16:
    case SIM_GEMM_MATH_COUNT:
        break;
    }
    return SIM_MOE_CLASS_16;
}

/* A GEMM's compute ceiling, FLOP/s: fps, times the output's tile and wave quantization with
 * the tile-wave model, or for per-tensor fp8 on a profile with a gemm_fp8_dispatch table the
 * dispatched kernel's (kernels.h; the same as sim_gemm_time). */
static double gemm_ceiling(const sim_hw *hw, sim_gemm_kind kind, int tw, double fps, double m,
                           double n)
{
    if (kind == SIM_GEMM_KIND_FP8 && hw->n_fp8_cfg > 0)
        return fps * sim_gemm_fp8_dispatch_eff(hw, m, n);
    return tw ? fps * sim_gemm_dim_eff(hw, m, n) : fps;
}

/* Adds n activation-quantization kernels of q seconds each to a timed GEMM operator: they
 * run before the GEMMs on the same stream (kernels.h, sim_gemm_act_quant_s). */
static void add_quant(sim_op_cost *op, double n, double q)
{
    if (op->flops <= 0.0 || q <= 0.0)
        return;
    op->compute_s += n * q;
    op->memory_s += n * q;
    op->time_s += n * q;
}

/*
 * The dtype whose tensor-core peak times the block GEMMs ("Quantized weights"):
 * unquantized models compute in cfg->dtype; weight-only schemes (AWQ, GPTQ, W4A16,
 * MXFP4 via Marlin) dequantize to 16 bits and compute there; W8A8 fp8 uses the fp8
 * peak, which sim_hw_peak_flops_per_s() already turns into the 16-bit one on GPUs
 * without fp8 units (vLLM's FP8 Marlin). Profiles carry no int8 or fp4 peak: int8
 * and fp4 math are timed at the fp8 peak (int8 dense = fp8 dense on Hopper, Ada and
 * Blackwell datasheets; fp4 understated by 2x on Blackwell, see docs/model.md).
 */
static sim_dtype gemm_dtype(const sim_model *m, const sim_run_cfg *cfg)
{
    if (m->quant.method == SIM_QUANT_NONE)
        return cfg->dtype;
    switch (m->quant.math) {
    case SIM_GEMM_MATH_FP8:
    case SIM_GEMM_MATH_INT8:
    case SIM_GEMM_MATH_FP4:
        return SIM_DTYPE_FP8;
    case SIM_GEMM_MATH_16:
    case SIM_GEMM_MATH_COUNT:
        break;
    }
    return sim_model_dtype16(m);
}

/* The compute ceiling of the block GEMMs at full efficiency, FLOP/s: the quantized kind's
 * peak x efficiency (sim_hw_gemm_figs), or the 16-bit dtype's (gemm_dtype). */
static double block_gemm_fps(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg)
{
    const sim_gemm_kind kind = gemm_kind(m, cfg);
    if (kind != SIM_GEMM_KIND_16) {
        sim_gemm_figs g;
        sim_hw_gemm_figs(hw, kind, &g);
        return g.peak_flops_per_s * g.eff_frac;
    }
    const sim_dtype gd = gemm_dtype(m, cfg);
    return sim_hw_peak_flops_per_s(hw, gd) * sim_hw_gemm_eff_frac(hw, gd);
}

/* Times an operator with the one roofline rule of kernels.c (docs/model.md, "Roofline"). */
static void time_op(sim_op_cost *op, double flops_per_s, double bytes_per_s, double fixed_s)
{
    sim_kernel_time k = {.flops = op->flops, .bytes = op->bytes};
    sim_roofline(&k, flops_per_s, bytes_per_s, op->n_kernels, fixed_s);
    op->compute_s = k.compute_s;
    op->memory_s = k.memory_s;
    op->time_s = k.time_s;
    op->bound = k.bound;
}

/* An operator's compute and memory sides set anew: its time and bound follow. */
static void retime(sim_op_cost *op, double compute_s, double memory_s)
{
    op->compute_s = compute_s;
    op->memory_s = memory_s;
    op->time_s = compute_s > memory_s ? compute_s : memory_s;
    op->bound = compute_s > memory_s ? SIM_BOUND_COMPUTE : SIM_BOUND_MEMORY;
}

typedef sim_step_dims step_dims;

/* A stage of layers [start, start + n) (the whole model: 0, n_layers). */
typedef struct stage_range {
    int64_t start, n;
    int first, last;
} stage_range;

static step_dims dims_of(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                         const stage_range *r)
{
    const double wb = sim_dtype_bytes(cfg->dtype);
    /* Full-attention layers in the stage (used only with a window). */
    const int64_t lf = sim_model_full_layers_in(m, r->start, r->n);
    step_dims x = {
        .L = (double)r->n,
        .d = (double)m->d_model,
        .dh = (double)m->head_dim,
        .Hg = (double)(m->n_heads / cfg->tp),
        .Kg = (double)sim_model_kv_heads_per_gpu(m, cfg->tp),
        .hb = cfg->dtype == SIM_DTYPE_FP8 ? 2.0 : wb,
        .kvb = sim_dtype_bytes(cfg->kv_dtype),
        .W = (double)m->sliding_window,
        .Lf = m->sliding_window > 0 ? (double)lf : 0.0,
        .chunked = m->window_chunked,
        .frac = (double)r->n / (double)m->n_layers,
        .first = r->first,
        .last = r->last,
        .decode = cfg->decode,
    };
    if (m->mla) {
        const sim_dtype d16 = sim_model_dtype16(m);
        x.mla = 1;
        x.kvl = (double)m->kv_lora_rank;
        x.rope = (double)m->qk_rope_dim;
        x.nope = (double)m->qk_nope_dim;
        x.vd = (double)m->v_head_dim;
        x.kvb_w_bytes = sim_model_linear_bytes(m, cfg->dtype, x.Hg * (x.nope + x.vd), x.kvl);
        x.gemm_fps = block_gemm_fps(m, hw, cfg);
        x.gemm16_fps = sim_hw_peak_flops_per_s(hw, d16) * sim_hw_gemm_eff_frac(hw, d16);
    }
    return x;
}

/*
 * MLA attention of one group, all layers (docs/model.md, "MLA"), added to the attention
 * operator k and the latent up-projection op up (flops at the 16-bit rate in *f16, at the
 * checkpoint's rate in *fq). Decode (vLLM's absorbed path): MQA over the latent, scores over
 * kv_lora + rope and values over kv_lora, the latent read once per sequence; q_nope x W_UK
 * before and x W_UV after, 16-bit batched GEMMs. Prefill and chunked prefill (the compute-
 * friendly path): kv_b decompresses the latent of every key (the new ones and the cached
 * ones read from the cache) into per-head K (nope) and V, then MHA with q/k head nope + rope
 * and v head vd.
 */
static void mla_group(const step_dims *x, sim_op_kind k, double cnt, double nt, double c,
                      sim_op_cost *attn, sim_op_cost *up, double *f16, double *fq)
{
    const double L = x->L, Hg = x->Hg, hb = x->hb, lat = x->kvl + x->rope;
    const double keys = c + nt;
    if (k == SIM_OP_ATTN_DECODE) {
        add(attn, L * cnt * 2.0 * Hg * keys * (lat + x->kvl),
            L * cnt * (keys * lat * x->kvb + Hg * (lat + x->kvl) * hb), 0.0);
        /* W_UK (q_nope in, ql_nope out), the concatenation of ql_nope and q_pe into the
         * latent-wide query (read and written), W_UV (latent out in, v out). */
        const double fl = L * cnt * 2.0 * Hg * x->kvl * (x->nope + x->vd);
        add(up, fl, L * cnt * Hg * (x->nope + x->kvl + 2.0 * lat + x->kvl + x->vd) * hb, 0.0);
        *f16 += fl;
        return;
    }
    const double qk = x->nope + x->rope;
    add(attn, L * cnt * 2.0 * Hg * sim_attn_pairs(nt, c, 0.0) * (qk + x->vd),
        L * cnt * (nt * Hg * (qk + x->vd) * hb + keys * Hg * (qk + x->vd) * hb), 0.0);
    /* kv_b on every key (the cached latents gathered from the cache), the concatenation
     * k = [k_nope, k_pe] per head (read nope and the shared rope, write nope + rope), and the
     * copy of the attention output into the layer's output (read and written). */
    const double fl = L * cnt * 2.0 * keys * x->kvl * Hg * (x->nope + x->vd);
    add(up, fl,
        L * cnt *
            (keys * (x->kvl + Hg * (x->nope + x->vd)) * hb + c * lat * x->kvb +
             keys * (Hg * (x->nope + qk) + x->rope) * hb + 2.0 * nt * Hg * x->vd * hb),
        0.0);
    *fq += fl;
}

/* A decode batch of n sequences as CUDA graphs replay it: padded to the captured size (1, 2,
 * 4, then the next multiple of align; vLLM V0 _get_graph_batch_size). */
static double graph_batch(double n, double align)
{
    if (n <= 2.0)
        return n;
    if (n <= 4.0)
        return 4.0;
    return ceil(n / align) * align;
}

/* The decode kernel of a step: which one runs, and for PagedAttention its launch: thread
 * blocks and shared memory per block. */
typedef struct decode_launch {
    sim_decode_kernel kernel;
    double blocks;     /* 0: not a PagedAttention launch */
    double smem_bytes; /* per block */
} decode_launch;

/* The decode kernel of a step of Sd decode sequences whose longest has max_len tokens
 * (sim_decode_attn; vllm/attention/ops/paged_attn.py and csrc/attention/attention_kernels.cu,
 * vLLM 0.5-0.6). PagedAttention's grid is (query heads, sequences, partitions); V1 has one
 * partition and 4 B of fp32 logits per token of the padded max_seq_len in dynamic shared
 * memory, V2 a partition's worth (partition_tokens); both also hold the query vector
 * (dh x 16-bit) and a reduction buffer statically. V2's partitions past a sequence's context
 * exit at once: the blocks with work are those of ceil(max_len / partition) partitions. */
static decode_launch decode_kernel(const step_dims *x, const sim_hw *hw, double Sd, double max_len)
{
    const sim_decode_attn *a = &x->decode;
    if (a->paged && Sd > 0.0) {
        const int graph = !a->eager && Sd <= a->graph_max_batch;
        const double seqs = graph ? graph_batch(Sd, a->graph_batch_align) : Sd;
        const double len = graph ? a->graph_max_seq_len : max_len;
        const double parts = ceil(len / a->partition_tokens);
        const int v1 =
            len <= a->v1_max_seq_len && (parts <= 1.0 || seqs * x->Hg > a->v1_min_seq_heads);
        const double block_tokens = 16.0; /* the kernel's BLOCK_SIZE (vLLM's KV block) */
        const double logits_tokens =
            v1 ? ceil(len / block_tokens) * block_tokens : a->partition_tokens;
        /* statics: q_vecs (dh 16-bit values) and red_smem (2 x NUM_WARPS floats, at most 4
         * warps of 128 threads) */
        const double smem = 4.0 * logits_tokens + x->dh * 2.0 + 2.0 * 4.0 * 4.0;
        return (decode_launch){
            .kernel = v1 ? SIM_DECODE_PAGED_V1 : SIM_DECODE_PAGED_V2,
            .blocks = seqs * x->Hg * (v1 ? 1.0 : ceil(fmin(max_len, len) / a->partition_tokens)),
            .smem_bytes = smem};
    }
    return (decode_launch){.kernel = hw->v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] == 1.0
                                         ? SIM_DECODE_PER_Q_HEAD
                                         : SIM_DECODE_SHARED_KV};
}

/* PagedAttention's blocks resident at once (Little's law below): the grid, or the SMs times
 * the blocks whose shared memory fits in one SM's, at least 1 per SM; 0 when the profile
 * gives no per-block rate or no shared memory (no such limit). */
static double decode_resident(const decode_launch *d, const sim_hw *hw)
{
    const double smem = hw->v[SIM_HWF_SMEM_PER_SM];
    if (d->blocks <= 0.0 || !(hw->v[SIM_HWF_ATTN_DECODE_BLOCK_BW] > 0.0) || !(smem > 0.0))
        return 0.0;
    const double per_sm = fmax(floor(smem / d->smem_bytes), 1.0);
    return fmin(d->blocks, hw->v[SIM_HWF_N_SM] * per_sm);
}

/* The three attention operators of a step, counted and timed; out->tokens, seqs and
 * seqs_emitting are set from the groups. The only part of a step's cost that depends on the
 * groups' contexts. */
static void attention_ops(const step_dims *x, const sim_hw *hw, const sim_step *s,
                          sim_step_cost *out)
{
    sim_op_cost *ops = out->ops;
    ops[SIM_OP_ATTN_PREFILL] = ops[SIM_OP_ATTN_CHUNKED] = ops[SIM_OP_ATTN_DECODE] =
        ops[SIM_OP_MLA_UP] = (sim_op_cost){0};
    double up16 = 0.0, upq = 0.0; /* MLA up-projection FLOPs at the 16-bit / block rate */
    int any_decode = 0, any_prefill = 0;
    /* KV heads a decode reads: each once for its query group, or once per query head when
     * the decode kernel does not share them (docs/model.md, "Attention"; decode_kernel). */
    double Sd = 0.0, max_len = 0.0;
    for (int i = 0; i < s->n_groups; i++)
        if (s->groups[i].new_tokens == 1) {
            Sd += (double)s->groups[i].count;
            const double len = (double)s->groups[i].context_tokens + 1.0;
            max_len = len > max_len ? len : max_len;
        }
    const decode_launch dl = decode_kernel(x, hw, Sd, max_len);
    const double Kd = sim_decode_kernel_per_q_head(dl.kernel, hw) ? x->Hg : x->Kg;
    out->decode_kernel = dl.kernel;
    out->decode_blocks_resident = decode_resident(&dl, hw);
    double T = 0.0, S = 0.0, Se = 0.0;
    /* Prefill FLOPs x s0 / s of each prefill or chunk group of s new tokens: FlashAttention's
     * ramp with the query length (sim_attn_prefill_time; docs/model.md, "Prefill attention"). */
    const double s0 = hw->v[SIM_HWF_ATTN_PREFILL_SEQ_HALF];
    double ramp[2] = {0.0, 0.0}; /* the prefill and the chunked-prefill operator's */
    for (int i = 0; i < s->n_groups; i++) {
        const sim_group *g = &s->groups[i];
        const double cnt = (double)g->count, nt = (double)g->new_tokens;
        const double c = (double)g->context_tokens;
        T += cnt * nt;
        S += cnt;

        if (g->emits)
            Se += cnt;
        /* Attention (docs/model.md "Attention"): 4 dh FLOPs per (query, key) pair and head
         * (QK^T and PV); Q read and O written once; K and V of every key any query of the
         * sequence attends read once (FlashAttention keeps scores on chip). */
        double pairs, kv_len = c + nt;
        if (x->chunked) {
            /* Chunked ("Llama-4"): the keys from the first new token's chunk start on. */
            pairs = sim_attn_pairs_chunked(nt, c, x->W);
            kv_len = c - floor(c / x->W) * x->W + nt;
        } else {
            pairs = sim_attn_pairs(nt, c, x->W);
            if (x->W > 0.0 && kv_len > nt - 1.0 + x->W)
                kv_len = nt - 1.0 + x->W;
        }
        sim_op_kind k =
            nt == 1.0 ? SIM_OP_ATTN_DECODE : (c == 0.0 ? SIM_OP_ATTN_PREFILL : SIM_OP_ATTN_CHUNKED);
        const double flops_before = ops[k].flops;
        if (x->mla) {
            mla_group(x, k, cnt, nt, c, &ops[k], &ops[SIM_OP_MLA_UP], &up16, &upq);
            any_decode |= k == SIM_OP_ATTN_DECODE;
            any_prefill |= k != SIM_OP_ATTN_DECODE;
            if (k != SIM_OP_ATTN_DECODE)
                ramp[k == SIM_OP_ATTN_CHUNKED] += (ops[k].flops - flops_before) * s0 / nt;
            continue;
        }
        const double kv_heads = k == SIM_OP_ATTN_DECODE ? Kd : x->Kg;
        if (x->Lf > 0.0) {
            /* The first Lf layers attend to every cached key, the other L - Lf within W. */
            const double Lw = x->L - x->Lf, kv_full = c + nt;
            add(&ops[k],
                cnt * 4.0 * x->Hg * x->dh * (Lw * pairs + x->Lf * sim_attn_pairs(nt, c, 0.0)),
                cnt * (x->L * 2.0 * nt * x->Hg * x->dh * x->hb +
                       (Lw * kv_len + x->Lf * kv_full) * 2.0 * kv_heads * x->dh * x->kvb),
                0.0);
        } else {
            add(&ops[k], x->L * cnt * 4.0 * x->Hg * x->dh * pairs,
                x->L * cnt *
                    (2.0 * nt * x->Hg * x->dh * x->hb + kv_len * 2.0 * kv_heads * x->dh * x->kvb),
                0.0);
        }
        if (k != SIM_OP_ATTN_DECODE)
            ramp[k == SIM_OP_ATTN_CHUNKED] += (ops[k].flops - flops_before) * s0 / nt;
    }
    out->tokens = T;
    out->seqs = S;
    out->seqs_emitting = Se;
    /* Ceilings ("Roofline"): attention math runs in 16 bits even with fp8 weights. */
    const double attn_fps = sim_hw_peak_flops_per_s(hw, SIM_DTYPE_BF16) * hw->v[SIM_HWF_ATTN_EFF];
    const double bw = hw->v[SIM_HWF_BW_STREAM_COPY];
    const double fx_a = hw->v[SIM_HWF_ATTN_FIXED];
    const sim_op_kind attn[3] = {SIM_OP_ATTN_PREFILL, SIM_OP_ATTN_CHUNKED, SIM_OP_ATTN_DECODE};
    /* The KV gather runs at its own factor, an fp8 cache's at the fp8 one (dequantized on
     * the fly; docs/model.md, "Decode attention"). */
    const double kv_factor =
        x->kvb < 2.0 ? hw->v[SIM_HWF_BW_FACTOR_KV_FP8] : hw->v[SIM_HWF_BW_FACTOR_KV];
    const double factor[3] = {hw->v[SIM_HWF_BW_FACTOR_MIXED], kv_factor, kv_factor};
    for (int i = 0; i < 3; i++) {
        sim_op_cost *op = &ops[attn[i]];
        if (op->bytes > 0.0) {    /* else the operator stays all zero: no work, no kernel */
            op->n_kernels = x->L; /* "Kernel counts": one per layer */
            time_op(op, attn_fps, bw * factor[i], fx_a);
            if (attn[i] != SIM_OP_ATTN_DECODE) /* the ramp and its fixed time per kernel */
                retime(op,
                       op->compute_s + ramp[attn[i] == SIM_OP_ATTN_CHUNKED] / attn_fps +
                           op->n_kernels * hw->v[SIM_HWF_ATTN_PREFILL_FIXED],
                       op->memory_s);
        }
    }
    /* Decode attention's work per (sequence, query head) that does not scale with the KV
     * length (a thread block's Q load, softmax merge and output write), in every layer's
     * kernel: attn_decode_seq_head_s x decode sequences x query heads on this GPU (hw.h;
     * docs/model.md, "Decode attention"), the same term as sim_attn_decode_time's. */
    sim_op_cost *da = &ops[SIM_OP_ATTN_DECODE];
    if (da->bytes > 0.0)
        retime(da, da->compute_s,
               da->memory_s + x->L * hw->v[SIM_HWF_ATTN_DECODE_SEQ_HEAD] * Sd * x->Hg);
    /* PagedAttention's blocks in flight: R blocks each streaming at most beta =
     * attn_decode_block_bw_bytes_per_s (a block's bytes in flight over the memory latency),
     * so 1/BW = 1/(copy x factor) + 1/(R x beta) (Little's law; docs/model.md, "Decode
     * attention kernel choice"). */
    if (da->bytes > 0.0 && out->decode_blocks_resident > 0.0)
        retime(da, da->compute_s,
               da->memory_s +
                   da->bytes / (out->decode_blocks_resident * hw->v[SIM_HWF_ATTN_DECODE_BLOCK_BW]));
    if (!x->mla || !(any_decode || any_prefill))
        return;
    /* MLA up-projection: the weights are read once per layer for all the step's groups: the
     * 16-bit W_UK and W_UV copies for the decodes, kv_b as stored for the prefills. Per layer
     * ("Kernel counts"): decodes two batched GEMMs and one concatenation, prefills one GEMM,
     * one concatenation and one copy; FlashMLA's decode is a split-KV kernel and a combine. */
    sim_op_cost *up = &ops[SIM_OP_MLA_UP];
    const double w16 = any_decode ? x->L * x->Hg * x->kvl * (x->nope + x->vd) * x->hb : 0.0;
    const double wq = any_prefill ? x->L * x->kvb_w_bytes : 0.0;
    add(up, 0.0, w16 + wq, w16 + wq);
    const double n_gemm = x->L * (2.0 * any_decode + any_prefill);
    const double n_copy = x->L * (any_decode + 2.0 * any_prefill);
    up->n_kernels = n_gemm + n_copy;
    /* Two rates in one operator: the compute time is the sum of each part at its own rate,
     * the fixed time that of each kernel kind. */
    retime(up, up16 / x->gemm16_fps + upq / x->gemm_fps,
           n_gemm * hw->v[SIM_HWF_GEMM_FIXED] + n_copy * hw->v[SIM_HWF_ELEMWISE_FIXED] +
               up->bytes / (bw * hw->v[SIM_HWF_BW_FACTOR_WEIGHTS]));
    sim_op_cost *dec = &ops[SIM_OP_ATTN_DECODE];
    if (dec->bytes > 0.0) { /* the combine kernel: an elementwise fixed time per layer */
        dec->n_kernels = 2.0 * x->L;
        retime(dec, dec->compute_s, dec->memory_s + x->L * hw->v[SIM_HWF_ELEMWISE_FIXED]);
    }
}

/* What the parts of other_ops share: the step on this GPU, the counted layers' weight bytes,
 * and what the counts hand on to the kernel counts and the timing. */
typedef struct other_ctx {
    const sim_model *m;
    const sim_hw *hw;
    const sim_run_cfg *cfg;
    const step_dims *x;
    sim_op_cost *ops;
    int tp;
    double t, T, Se, V, Vg;
    double n_moe, n_dense;
    sim_weight_bytes wbs;
    /* Set by the counts: kernels of the norms, QKV and RoPE operators, the QKV output width on
     * this GPU, and the shared experts' width and layers. */
    double n_norms, qkv_out, n_qkv_k, n_rope_k, Fsg, n_shared;
    /* The MoE layout and the expert shape on this GPU (count_moe), shared by the count and
     * the fused-MoE timing. */
    sim_moe_layout ml;
    double G, N, E_gpu, Feg, active, busy, rows;
} other_ctx;

static void other_ctx_init(other_ctx *c, const sim_model *m, const sim_hw *hw,
                           const sim_run_cfg *cfg, const step_dims *x, const sim_weight_bytes *pre,
                           sim_step_cost *out)
{
    /* Field by field, no whole clear (a tenth of a prediction): the counts below set every
     * other field before anything reads it, in the order other_ops calls them. */
    c->m = m;
    c->hw = hw;
    c->cfg = cfg;
    c->x = x;
    c->ops = out->ops;
    const int tp = cfg->tp;
    c->tp = tp;
    c->t = (double)tp;
    c->T = out->tokens;
    c->Se = out->seqs_emitting;
    c->V = (double)m->vocab;
    c->Vg = (double)((m->vocab + tp - 1) / tp);
    /* A stage's MoE layers: in proportion (exact when every layer or none is MoE). */
    c->n_moe = (double)m->n_moe_layers * x->frac;
    c->n_dense = x->L - c->n_moe;
    /* Weight bytes streamed by each GEMM, the counted layers: the checkpoint's quantization
     * (scales and zero points included) or dtype ("Quantized weights"). */
    sim_weight_bytes *wbs = &c->wbs;
    if (pre) { /* the whole model's (frac 1), from sim_step_prep_init */
        *wbs = *pre;
        return;
    }
    sim_model_weight_bytes_moe(m, tp, cfg->dp, cfg->ep, cfg->dtype, wbs);
    wbs->qkv *= x->frac;
    wbs->o *= x->frac;
    wbs->gate_up *= x->frac;
    wbs->down *= x->frac;
    wbs->experts *= x->frac;
    wbs->small *= x->frac;
}

/* Embedding and norms. */
static void count_embed_norms(other_ctx *c)
{
    const step_dims *x = c->x;
    sim_op_cost *ops = c->ops;
    const double L = x->L, d = x->d, hb = x->hb, t = c->t, T = c->T;
    /* Embedding ("Embedding"): vocab-parallel lookup reads T rows spread over tp shards. */
    if (x->first)
        add(&ops[SIM_OP_EMBED], 0.0, T * d * hb / t + T * d * hb, T * d * hb / t);

    /* Norms and residual adds ("Norms"): 2L + 1 fused add+RMSNorm, each reads x and residual
     * and writes both, on the full hidden state of every GPU (the final norm on the last
     * stage). */
    c->n_norms = sim_model_norms_per_layer(c->m) * L + (x->last ? 1.0 : 0.0);
    const double n_norms = c->n_norms;
    add(&ops[SIM_OP_NORM], n_norms * FLOPS_PER_NORM_ELEM * T * d,
        n_norms * (4.0 * T * d * hb + d * hb), n_norms * d * hb);
}

/* QKV projection, RoPE and q/k norms, KV-cache write and O projection. */
static void count_qkv_o(other_ctx *c)
{
    const sim_model *m = c->m;
    const step_dims *x = c->x;
    sim_op_cost *ops = c->ops;
    const sim_weight_bytes *wbs = &c->wbs;
    const double L = x->L, d = x->d, dh = x->dh, Hg = x->Hg, Kg = x->Kg, hb = x->hb, kvb = x->kvb;
    const double T = c->T;
    /* QKV projection ("Linear layers"): column-parallel, Hg + 2 Kg heads out. MLA ("MLA"):
     * the replicated q_a and kv_a (d -> q_lora + kv_lora + rope, one fused GEMM) on every GPU,
     * then q_b (q_lora -> Hg (nope + rope)); without q_lora a plain q (d -> Hg (nope + rope))
     * next to kv_a. */
    double qkv_out = (Hg + 2.0 * Kg) * dh;
    double n_qkv_k = L, n_rope_k = m->qk_norm ? 2.0 * L : L;
    if (m->mla) {
        const double ql = (double)m->q_lora_rank, kvl = (double)m->kv_lora_rank;
        const double rope = (double)m->qk_rope_dim, vd = (double)m->v_head_dim;
        const double qh = Hg * dh; /* dh = nope + rope */
        const double a_out = (ql > 0.0 ? ql : qh) + kvl + rope;
        const double b_fl = ql > 0.0 ? 2.0 * T * ql * qh : 0.0;
        add(&ops[SIM_OP_QKV], L * (2.0 * T * d * a_out + b_fl),
            wbs->qkv + L * T * (d + a_out + (ql > 0.0 ? ql + qh : 0.0)) * hb, wbs->qkv);
        n_qkv_k = ql > 0.0 ? 2.0 * L : L;
        qkv_out = a_out;
        /* q_a and kv_a RMSNorms, then RoPE on q_pe (Hg heads) and the one shared k_pe. */
        const double nrm = T * ((ql > 0.0 ? ql : 0.0) + kvl), qk = T * (Hg + 1.0) * rope;
        add(&ops[SIM_OP_ROPE], L * (FLOPS_PER_QKNORM_ELEM * nrm + FLOPS_PER_ROPE_ELEM * qk),
            L * (2.0 * nrm + 2.0 * qk) * hb + wbs->small, wbs->small);
        n_rope_k = (ql > 0.0 ? 3.0 : 2.0) * L;
        /* KV-cache write: the latent kv_lora + rope of each new token. */
        add(&ops[SIM_OP_KV_WRITE], 0.0, L * T * (kvl + rope) * (hb + kvb), 0.0);
        /* O projection: Hg v_head_dim in. */
        add(&ops[SIM_OP_O_PROJ], L * 2.0 * T * Hg * vd * d, wbs->o + L * T * (Hg * vd + d) * hb,
            wbs->o);
    } else {
        const double qkv_w = wbs->qkv + (m->qkv_bias ? L * qkv_out * hb : 0.0);
        add(&ops[SIM_OP_QKV], L * 2.0 * T * d * qkv_out, qkv_w + L * T * (d + qkv_out) * hb, qkv_w);

        /* RoPE on q and k, and q/k RMSNorm for qwen3 ("Elementwise operators"). */
        const double qk = T * (Hg + Kg) * dh;
        double rope_flops = FLOPS_PER_ROPE_ELEM * qk, rope_bytes = 2.0 * qk * hb;
        if (m->qk_norm) {
            rope_flops += FLOPS_PER_QKNORM_ELEM * qk;
            rope_bytes += 2.0 * qk * hb + 2.0 * dh * hb;
        }
        add(&ops[SIM_OP_ROPE], L * rope_flops, L * rope_bytes,
            m->qk_norm ? L * 2.0 * dh * hb : 0.0);
        /* Llama-4's weightless L2 q/k norm, on the windowed (RoPE) layers only ("Llama-4"):
         * one more kernel per such layer. */
        if (m->qk_l2_norm) {
            const double Lr = L - x->Lf;
            add(&ops[SIM_OP_ROPE], Lr * FLOPS_PER_QKNORM_ELEM * qk, Lr * 2.0 * qk * hb, 0.0);
            n_rope_k += Lr;
        }

        /* KV-cache write ("KV cache"): read new k, v; write them into paged blocks. */
        add(&ops[SIM_OP_KV_WRITE], 0.0, L * T * 2.0 * Kg * dh * (hb + kvb), 0.0);

        /* O projection: row-parallel, Hg dh in, d out. */
        add(&ops[SIM_OP_O_PROJ], L * 2.0 * T * Hg * dh * d, wbs->o + L * T * (Hg * dh + d) * hb,
            wbs->o);
    }
    c->qkv_out = qkv_out;
    c->n_qkv_k = n_qkv_k;
    c->n_rope_k = n_rope_k;
}

/* Dense gated MLP, and the shared experts of MoE layers. */
static void count_mlp(other_ctx *c)
{
    const sim_model *m = c->m;
    sim_op_cost *ops = c->ops;
    const double d = c->x->d, hb = c->x->hb, t = c->t, T = c->T;
    const double n_moe = c->n_moe, n_dense = c->n_dense;
    /* Dense gated MLP ("MLP"): gate and up column-parallel (2 F/tp out), down row-parallel.
     * The shared experts of MoE layers ("MLA") are one such MLP of n_shared Fe per layer. */
    const double Fsg = n_moe > 0.0 ? (double)(m->n_shared_experts * m->d_ff_expert) / t : 0.0;
    const double n_shared = Fsg > 0.0 ? n_moe : 0.0;
    const double mlp_layers[2] = {n_dense, n_shared};
    const double mlp_f[2] = {n_dense > 0.0 ? (double)m->d_ff / t : 0.0, Fsg};
    const int wi = n_dense > 0.0 ? 0 : 1; /* the weights (both kinds) are added once */
    for (int i = 0; i < 2; i++) {
        const double nl = mlp_layers[i], Fg = mlp_f[i];
        const double w_gu = i == wi ? c->wbs.gate_up : 0.0, w_dn = i == wi ? c->wbs.down : 0.0;
        if (!(nl > 0.0))
            continue;
        add(&ops[SIM_OP_MLP_GATE_UP], nl * 2.0 * T * d * 2.0 * Fg,
            w_gu + nl * T * (d + 2.0 * Fg) * hb, w_gu);
        add(&ops[SIM_OP_MLP_ACT], nl * FLOPS_PER_ACT_ELEM * T * Fg, nl * 3.0 * T * Fg * hb, 0.0);
        add(&ops[SIM_OP_MLP_DOWN], nl * 2.0 * T * Fg * d, w_dn + nl * T * (Fg + d) * hb, w_dn);
    }
    c->Fsg = Fsg;
    c->n_shared = n_shared;
}

/* The MoE router and routed experts. */
static void count_moe(other_ctx *c)
{
    const sim_model *m = c->m;
    sim_op_cost *ops = c->ops;
    const double d = c->x->d, hb = c->x->hb, T = c->T, n_moe = c->n_moe;
    /* MoE ("MoE"; "Expert and data parallelism"): replicated router on the rank's tokens;
     * the experts spread over G = dp x tp GPUs, each expert sliced (F / G) or, with EP, whole
     * (E / G experts a GPU); the layer sees the N = dp x T tokens of all DP ranks, and a GPU
     * reads only its experts that they touch (each of the E experts with the same chance, so
     * 1/G of the expected touched ones and of the routed rows under EP). */
    sim_moe_layout_of(c->cfg, &c->ml);
    const sim_moe_layout ml = c->ml;
    const double G = (double)ml.group, N = T * ml.tokens_mult;
    const double E_gpu = ml.ep ? (double)m->n_experts / G : (double)m->n_experts;
    /* The expert shape on this GPU, shared by the count here and the fused-MoE timing
     * (time_other_ops): intermediate width, expected touched experts, busiest-GPU factor,
     * routed rows. */
    const double Feg = ml.ep ? (double)m->d_ff_expert : (double)m->d_ff_expert / G;
    double active = 0.0, busy = 1.0, rows = 0.0;
    if (n_moe > 0.0) {
        const double E = (double)m->n_experts, k = (double)m->n_experts_per_tok;
        /* The router GEMM (replicated, never quantized): its d x E weights, the tokens in and
         * the logits out in its own dtype (sim_model_router_bytes); an fp32 router also writes
         * the fp32 copy of its input (fused into the preceding norm under torch.compile). */
        const double rb = sim_model_router_bytes(m, hb);
        const double r_w = d * E * rb;
        const double r_act = T * (d + E) * rb + (m->router_fp32 ? T * d * rb : 0.0);
        add(&ops[SIM_OP_MOE_ROUTER], n_moe * 2.0 * T * d * E, n_moe * (r_w + r_act), n_moe * r_w);
        active = sim_moe_expected_experts(E, k, N) / (ml.ep ? G : 1.0);
        /* Under EP: the busiest GPU's rows (sim_moe_ep_busiest_factor). */
        busy = ml.ep ? sim_moe_ep_busiest_factor(E, k, N, ml.group) : 1.0;
        rows = ml.ep ? busy * N * k / G : N * k;
        const double ex_w = active * c->wbs.experts / (n_moe * E_gpu); /* per MoE layer */
        const double ex_flops = rows * (2.0 * 3.0 * d * Feg + FLOPS_PER_ACT_ELEM * Feg);
        const double ex_act = (rows * (3.0 * d + 6.0 * Feg) + N * d) * hb;
        add(&ops[SIM_OP_MOE_EXPERTS], n_moe * ex_flops, n_moe * (ex_w + ex_act), n_moe * ex_w);
    }
    c->G = G;
    c->N = N;
    c->E_gpu = E_gpu;
    c->Feg = Feg;
    c->active = active;
    c->busy = busy;
    c->rows = rows;
}

/* LM head and sampler, and the kernels per step of every operator counted so far. */
static void count_lm_head_and_kernels(other_ctx *c)
{
    const sim_model *m = c->m;
    const step_dims *x = c->x;
    sim_op_cost *ops = c->ops;
    const double L = x->L, d = x->d, hb = x->hb, Se = c->Se, V = c->V, Vg = c->Vg;
    const double n_moe = c->n_moe, n_dense = c->n_dense, n_shared = c->n_shared;
    /* LM head ("LM head and sampling"): vocab-parallel, only for sequences that sample. */
    if (Se > 0.0 && x->last) {
        const double lm_w = m->quant.lm_head_quantized
                                ? sim_model_linear_bytes(m, c->cfg->dtype, Vg, d)
                                : Vg * d * hb;
        add(&ops[SIM_OP_LM_HEAD], 2.0 * Se * d * Vg, lm_w + Se * (d + Vg) * hb, lm_w);
        add(&ops[SIM_OP_SAMPLER], FLOPS_PER_SAMPLE_ELEM * Se * V,
            SAMPLER_PASSES * Se * V * LOGIT_BYTES, 0.0);
    }

    /* Kernels per step ("Kernel counts"): one per layer per operator, two norms per layer plus
     * the final one, q/k norm as a second kernel, MoE routing (gate GEMM, top-k) and the two
     * grouped expert GEMMs per MoE layer. Only operators with work launch kernels. */
    /* Set where the operator has work, one by one (a 20-entry table and a loop over every
     * operator cost a tenth of a step's prediction). */
    const struct {
        sim_op_kind op;
        double n;
    } kernels[] = {
        {SIM_OP_EMBED, 1.0},
        {SIM_OP_NORM, c->n_norms},
        {SIM_OP_QKV, c->n_qkv_k},
        {SIM_OP_ROPE, c->n_rope_k},
        {SIM_OP_KV_WRITE, L},
        {SIM_OP_O_PROJ, L},
        {SIM_OP_MLP_GATE_UP, n_dense + n_shared},
        {SIM_OP_MLP_ACT, n_dense + n_shared},
        {SIM_OP_MLP_DOWN, n_dense + n_shared},
        {SIM_OP_MOE_ROUTER, 2.0 * n_moe},
        {SIM_OP_MOE_EXPERTS, 2.0 * n_moe},
        {SIM_OP_LM_HEAD, 1.0},
        {SIM_OP_SAMPLER, 1.0},
    };
    for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
        if (kernels[i].n > 0.0 && ops[kernels[i].op].bytes > 0.0)
            ops[kernels[i].op].n_kernels = kernels[i].n;
}

/* The fused-MoE time of the routed experts, per MoE layer times the MoE layers. */
static void time_moe_experts(const other_ctx *c)
{
    const sim_model *m = c->m;
    const double N = c->N, G = c->G, E_gpu = c->E_gpu, n_moe = c->n_moe;
    /* Fused MoE (docs/model.md, "Fused MoE"): vLLM's fused_experts per MoE layer, over the
     * expected touched experts with each one's rows padded to the kernel's block. */
    const double E = (double)m->n_experts, k = (double)m->n_experts_per_tok;
    /* Under EP the kernel runs on the GPU's E / G experts: its block size follows them,
     * and it gets 1/G of the padded rows of all E. */
    const double padded = sim_moe_padded_rows_random(E, k, N, sim_moe_block_m(N, E_gpu));
    const sim_moe_shape sh = {
        .tokens = N,
        .rows = c->rows,
        .rows_padded = c->ml.ep ? c->busy * padded / G : padded,
        .touched = c->active,
        .d = c->x->d,
        .f = c->Feg,
        .weight_bytes = c->wbs.experts / (n_moe * E_gpu),
    };
    sim_kernel_time kt;
    sim_fused_moe_time(c->hw, sim_moe_class_of(m, c->cfg), &sh, &kt);
    sim_op_cost *op = &c->ops[SIM_OP_MOE_EXPERTS];
    op->compute_s = n_moe * kt.compute_s;
    op->memory_s = n_moe * kt.memory_s;
    op->time_s = n_moe * kt.time_s;
    op->bound = kt.bound;
}

/* Every operator but attention and communication, timed against its ceilings. */
static void time_other_ops(const other_ctx *c)
{
    const sim_model *m = c->m;
    const sim_hw *hw = c->hw;
    const sim_run_cfg *cfg = c->cfg;
    const step_dims *x = c->x;
    sim_op_cost *ops = c->ops;
    const double L = x->L, d = x->d, dh = x->dh, Hg = x->Hg;
    const double t = c->t, T = c->T, Se = c->Se, Vg = c->Vg, n_moe = c->n_moe;
    const double n_dense = c->n_dense, Fsg = c->Fsg, qkv_out = c->qkv_out;
    /* Ceilings ("Roofline"): the block GEMMs run in the math of the kernel vLLM picks for
     * the weights. */
    const sim_dtype gd = gemm_dtype(m, cfg);
    const double vec_fps = sim_hw_peak_flops_per_s(hw, SIM_DTYPE_FP32);
    const double bw = hw->v[SIM_HWF_BW_STREAM_COPY];
    const double bw_w = bw * hw->v[SIM_HWF_BW_FACTOR_WEIGHTS];
    const double bw_mix = bw * hw->v[SIM_HWF_BW_FACTOR_MIXED];
    const double fx_g = hw->v[SIM_HWF_GEMM_FIXED];
    /* 16-bit GEMMs at peak x gemm_eff of their dtype; quantized ones (fp8, block fp8, fp4)
     * with their kind's peak, efficiency, weights factor and fixed time, plus the kernel that
     * quantizes their activations. Layers the checkpoint excludes stay 16-bit. */
    const sim_gemm_kind kind = gemm_kind(m, cfg);
    sim_gemm_figs gk;
    sim_hw_gemm_figs(hw, kind, &gk);
    const int q_attn = kind != SIM_GEMM_KIND_16 && !m->quant.attn_excluded;
    /* The dense MLPs and shared experts (one operator) run quantized unless every one of them
     * is excluded: a dense MLP and shared experts both named (Kimi-K2.5) leave only the routed
     * experts quantized. */
    const int dense16 = m->n_moe_layers == m->n_layers || m->quant.dense_mlp_excluded;
    const int shared16 = m->n_shared_experts == 0 || m->quant.shared_excluded;
    const int q_mlp = kind != SIM_GEMM_KIND_16 && !m->quant.mlp_excluded && !(dense16 && shared16);
    const sim_dtype d16 = kind == SIM_GEMM_KIND_16 ? gd : sim_model_dtype16(m);
    /* A small-M class (a decode batch on an untuned BLAS; hw.h): its own efficiency when the
     * step's tokens are at most gemm_small_m_rows. */
    const double eff16 = sim_hw_gemm_eff_at(hw, d16, c->T);
    const double fps16 = sim_hw_peak_flops_per_s(hw, d16) * eff16;
    const double fps_q = block_gemm_fps(m, hw, cfg);
    const double bw_q = bw * gk.bw_factor_frac;
    const double fx_e = hw->v[SIM_HWF_ELEMWISE_FIXED];

    time_op(&ops[SIM_OP_EMBED], vec_fps, bw_mix, fx_e);
    time_op(&ops[SIM_OP_NORM], vec_fps, bw_mix, fx_e);
    /* GEMM compute ceilings, with tile/wave quantization of each output shape when asked. */
    const int tw = cfg->gemm == SIM_GEMM_TILE_WAVE;
    const double Fg_out = n_dense > 0.0 ? (double)m->d_ff / t : Fsg;
#define GEMM_FPS(q, mm, nn)                                                                        \
    gemm_ceiling(hw, (q) ? kind : SIM_GEMM_KIND_16, tw, (q) ? fps_q : fps16, mm, nn)
#define GEMM_BW(q) (q ? bw_q : bw_w)
#define GEMM_FX(q) (q ? gk.fixed_s : fx_g)
    const double Hd = Hg * (x->mla ? x->vd : dh); /* O projection inputs on this GPU */
    time_op(&ops[SIM_OP_QKV], GEMM_FPS(q_attn, T, qkv_out), GEMM_BW(q_attn), GEMM_FX(q_attn));
    time_op(&ops[SIM_OP_ROPE], vec_fps, bw_mix, fx_e);
    time_op(&ops[SIM_OP_KV_WRITE], vec_fps, bw_mix, fx_e);
    time_op(&ops[SIM_OP_O_PROJ], GEMM_FPS(q_attn, T, d), GEMM_BW(q_attn), GEMM_FX(q_attn));
    time_op(&ops[SIM_OP_MLP_GATE_UP], GEMM_FPS(q_mlp, T, 2.0 * Fg_out), GEMM_BW(q_mlp),
            GEMM_FX(q_mlp));
    time_op(&ops[SIM_OP_MLP_ACT], vec_fps, bw_mix, fx_e);
    time_op(&ops[SIM_OP_MLP_DOWN], GEMM_FPS(q_mlp, T, d), GEMM_BW(q_mlp), GEMM_FX(q_mlp));
    /* The router is a 16-bit GEMM whatever the checkpoint (vLLM builds every gate with
     * quant_config=None), or an fp32 one at the fp32 peak (MiniMax-M2's params_dtype
     * torch.float32; vLLM's default float32 matmul precision "highest", PR #29897, keeps it
     * off the TF32 tensor cores) with the 16-bit GEMM efficiency. */
    const double fps_r =
        m->router_fp32 ? sim_hw_peak_flops_per_s(hw, SIM_DTYPE_FP32) * eff16 : fps16;
    time_op(&ops[SIM_OP_MOE_ROUTER],
            gemm_ceiling(hw, SIM_GEMM_KIND_16, tw, fps_r, T, (double)m->n_experts), bw_w, fx_g);
    if (n_moe > 0.0 && ops[SIM_OP_MOE_EXPERTS].bytes > 0.0)
        time_moe_experts(c);
    if (q_attn) {
        add_quant(&ops[SIM_OP_QKV], L, sim_gemm_act_quant_s(hw, kind, T, d));
        if (x->mla && m->q_lora_rank > 0) /* q_b: its own GEMM on the q latent */
            add_quant(&ops[SIM_OP_QKV], L,
                      sim_gemm_act_quant_s(hw, kind, T, (double)m->q_lora_rank));
        add_quant(&ops[SIM_OP_O_PROJ], L, sim_gemm_act_quant_s(hw, kind, T, Hd));
    }
    if (q_mlp) {
        add_quant(&ops[SIM_OP_MLP_GATE_UP], n_dense, sim_gemm_act_quant_s(hw, kind, T, d));
        add_quant(&ops[SIM_OP_MLP_DOWN], n_dense, sim_gemm_act_quant_s(hw, kind, T, Fg_out));
    }
#undef GEMM_BW
#undef GEMM_FX
    const double lm_fps =
        sim_hw_peak_flops_per_s(hw, SIM_DTYPE_BF16) * sim_hw_gemm_eff_at(hw, SIM_DTYPE_BF16, Se);
    time_op(&ops[SIM_OP_LM_HEAD], tw ? lm_fps * sim_gemm_dim_eff(hw, Se, Vg) : lm_fps, bw_w, fx_g);
#undef GEMM_FPS
    time_op(&ops[SIM_OP_SAMPLER], vec_fps, bw_mix, fx_e);
}

/* The TP all-reduces and logits gather, and the MoE dispatch and combine; sets
 * out->n_allreduce. */
static void comm_ops(const other_ctx *c, sim_step_cost *out)
{
    const sim_hw *hw = c->hw;
    const sim_run_cfg *cfg = c->cfg;
    const step_dims *x = c->x;
    sim_op_cost *ops = c->ops;
    const int tp = c->tp;
    const double L = x->L, d = x->d, hb = x->hb;
    const double t = c->t, T = c->T, Se = c->Se, V = c->V, n_moe = c->n_moe;
    /* Communication ("Communication"): Megatron TP does two all-reduces per layer (after O
     * and after the MLP) plus one after the vocab-parallel embedding, each of T x d x hb
     * bytes; the sampled rows' logits are gathered from the vocab shards. */
    if (tp > 1) {
        sim_allreduce ar;
        sim_hw_allreduce_for(hw, tp, &ar);
        const double msg = T * d * hb;
        out->n_allreduce = 2 * (int)L + (x->first ? 1 : 0);
        const double n_ar = (double)out->n_allreduce;
        sim_op_cost *a = &ops[SIM_OP_ALLREDUCE];
        a->bytes = n_ar * msg;
        a->time_s = n_ar * sim_allreduce_time_s(hw, tp, msg);
        a->bound = SIM_BOUND_COMM;
        /* q/k norms over all heads (MiniMax-M2): each layer all-reduces the T tokens' q and
         * k variances, 2 fp32 values a token, before normalizing (vLLM forward_qk). */
        if (c->m->qk_norm_all_heads) {
            const double var = T * 2.0 * 4.0;
            out->n_allreduce += (int)L;
            a->bytes += L * var;
            a->time_s += L * sim_allreduce_time_s(hw, tp, var);
        }
        if (Se > 0.0 && x->last) {
            sim_op_cost *gth = &ops[SIM_OP_LOGITS_GATHER];
            gth->bytes = Se * V * hb;
            gth->time_s = ar.latency_s + (t - 1.0) / t * gth->bytes / ar.bus_bw_bytes_per_s;
            gth->bound = SIM_BOUND_COMM;
        }
    }
    /* Dispatch and combine of the MoE layers with dp > 1 ("Expert and data parallelism"):
     * vLLM's default all2all backend (allgather_reducescatter) all-gathers the DP ranks'
     * tokens and reduce-scatters the experts' outputs within each DP group (the GPUs of one
     * TP rank, tp x pp apart); the TP all-reduce above still follows each MoE layer. */
    double disp = 0.0, comb = 0.0;
    sim_moe_dispatch_bytes(c->m, cfg, T, hb, &disp, &comb);
    if (n_moe > 0.0 && disp > 0.0) {
        const int stride = tp * (cfg->pp > 1 ? cfg->pp : 1);
        sim_op_cost *a = &ops[SIM_OP_MOE_DISPATCH];
        a->bytes = n_moe * (disp + comb);
        a->time_s = n_moe * (sim_alltoall_time_s(hw, cfg->dp, stride, disp) +
                             sim_alltoall_time_s(hw, cfg->dp, stride, comb));
        a->bound = SIM_BOUND_COMM;
    }
}

/* Every operator but attention, counted and timed: functions of the step's new tokens
 * (out->tokens) and sampling sequences (out->seqs_emitting) only. */
static void other_ops(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                      const step_dims *x, const sim_weight_bytes *pre, sim_step_cost *out)
{
    other_ctx c;
    other_ctx_init(&c, m, hw, cfg, x, pre, out);
    count_embed_norms(&c);
    count_qkv_o(&c);
    count_mlp(&c);
    count_moe(&c);
    count_lm_head_and_kernels(&c);
    time_other_ops(&c);
    comm_ops(&c, out);
}

/* The step's totals from its operators, in operator order. */
static void totals(const sim_run_cfg *cfg, sim_step_cost *out)
{
    const sim_op_cost *ops = out->ops;
    /* Summed in locals (the same additions in the same order): the stores into out would
     * otherwise alias the operators read. */
    double flops = 0.0, bytes = 0.0, compute_s = 0.0, memory_s = 0.0, comm_s = 0.0;
    double sum_op = 0.0;
    for (int i = 0; i < SIM_OP_COUNT; i++) {
        const sim_op_cost *op = &ops[i];
        if (op->bound == SIM_BOUND_NONE)
            continue; /* all zero */
        if (op->bound == SIM_BOUND_COMM) {
            comm_s += op->time_s;
            continue;
        }
        flops += op->flops;
        bytes += op->bytes;
        compute_s += op->compute_s;
        memory_s += op->memory_s;
        sum_op += op->time_s;
    }
    out->flops = flops;
    out->bytes = bytes;
    out->compute_s = compute_s;
    out->memory_s = memory_s;
    out->comm_s = comm_s;
    const double whole = out->compute_s > out->memory_s ? out->compute_s : out->memory_s;
    out->roofline_s = (cfg->mode == SIM_ROOFLINE_STEP ? whole : sum_op) + out->comm_s;
    out->step_s = sim_calibrated_s(cfg->alpha, out->roofline_s, cfg->beta_s, 1.0);
    out->bound = out->compute_s > out->memory_s ? SIM_BOUND_COMPUTE : SIM_BOUND_MEMORY;
}

static stage_range whole_model(const sim_model *m) { return (stage_range){0, m->n_layers, 1, 1}; }

void sim__step_stage_cost(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                          int64_t first_layer, int64_t n_layers, int first, int last,
                          const sim_step *s, sim_step_cost *out)
{
    assert(cfg->tp >= 1 && m->n_heads % cfg->tp == 0);
    assert(s->n_groups >= 1 && s->n_groups <= SIM_STEP_MAX_GROUPS);
    assert(n_layers >= 1 && first_layer >= 0 && first_layer + n_layers <= m->n_layers);
    *out = (sim_step_cost){0};
    const stage_range r = {first_layer, n_layers, first, last};
    const step_dims x = dims_of(m, hw, cfg, &r);
    attention_ops(&x, hw, s, out);
    other_ops(m, hw, cfg, &x, NULL, out);
    totals(cfg, out);
}

void sim_step_prep_init(sim_step_prep *p, const sim_model *m, const sim_hw *hw,
                        const sim_run_cfg *cfg)
{
    assert(cfg->tp >= 1 && m->n_heads % cfg->tp == 0 && cfg->pp <= 1);
    p->m = m;
    p->hw = hw;
    p->cfg = cfg;
    const stage_range r = whole_model(m);
    p->dims = dims_of(m, hw, cfg, &r);
    sim_model_weight_bytes_moe(m, cfg->tp, cfg->dp, cfg->ep, cfg->dtype, &p->wbs);
}

void sim_step_cost_prepared(const sim_step_prep *p, const sim_step *s, sim_step_cost *out)
{
    assert(s->n_groups >= 1 && s->n_groups <= SIM_STEP_MAX_GROUPS);
    *out = (sim_step_cost){0};
    attention_ops(&p->dims, p->hw, s, out);
    other_ops(p->m, p->hw, p->cfg, &p->dims, &p->wbs, out);
    totals(p->cfg, out);
}

/* Whether the step's new tokens and sampling sequences (summed as attention_ops sums them) are
 * those of cost: then every operator but attention is unchanged. */
static int same_tokens(const sim_step *s, const sim_step_cost *cost)
{
    double T = 0.0, Se = 0.0;
    for (int i = 0; i < s->n_groups; i++) {
        const sim_group *g = &s->groups[i];
        T += (double)g->count * (double)g->new_tokens;
        if (g->emits)
            Se += (double)g->count;
    }
    return cost->tokens == T && cost->seqs_emitting == Se && T > 0.0;
}

void sim_step_cost_next_prepared(const sim_step_prep *p, const sim_step *s, sim_step_cost *cost)
{
    if (!same_tokens(s, cost)) {
        sim_step_cost_prepared(p, s, cost);
        return;
    }
    /* Every other operator is a function of T and Se only: recount attention alone. */
    attention_ops(&p->dims, p->hw, s, cost);
    totals(p->cfg, cost);
}

/* The attention operators: attention_ops writes them, other_ops never touches them. */
_Static_assert(SIM_OP_ATTN_PREFILL == SIM_OP_KV_WRITE + 1 &&
                   SIM_OP_ATTN_CHUNKED == SIM_OP_ATTN_PREFILL + 1 &&
                   SIM_OP_ATTN_DECODE == SIM_OP_ATTN_CHUNKED + 1 &&
                   SIM_OP_MLA_UP == SIM_OP_ATTN_DECODE + 1 && SIM_OP_O_PROJ == SIM_OP_MLA_UP + 1,
               "the attention operators are ATTN_PREFILL .. MLA_UP, in one run");

/* Copies the operators other than attention, and the all-reduce count, from src to dst. */
static void copy_other(sim_op_cost *dst, int *dst_n_ar, const sim_op_cost *src, int src_n_ar)
{
    memcpy(dst, src, (size_t)SIM_OP_ATTN_PREFILL * sizeof(*dst));
    memcpy(dst + SIM_OP_O_PROJ, src + SIM_OP_O_PROJ,
           (size_t)(SIM_OP_COUNT - SIM_OP_O_PROJ) * sizeof(*dst));
    *dst_n_ar = src_n_ar;
}

void sim_step_memo_init(sim_step_memo *memo)
{
    for (int i = 0; i < SIM_STEP_MEMO_ENTRIES; i++)
        memo->e[i].T = -1.0;
}

void sim_step_cost_next_memo(const sim_step_prep *p, sim_step_memo *memo, const sim_step *s,
                             sim_step_cost *cost)
{
    if (same_tokens(s, cost)) { /* as sim_step_cost_next_prepared */
        attention_ops(&p->dims, p->hw, s, cost);
        totals(p->cfg, cost);
        return;
    }
    /* As sim_step_cost_prepared, with other_ops's result taken from the memo when it holds
     * (T, Se): other_ops reads nothing else of the step (other_ctx_init). */
    assert(s->n_groups >= 1 && s->n_groups <= SIM_STEP_MAX_GROUPS);
    /* No whole clear: attention_ops writes the attention operators and the step's counts,
     * the memo or other_ops (from zero) every other operator, totals the sums. */
    attention_ops(&p->dims, p->hw, s, cost);
    const double T = cost->tokens, Se = cost->seqs_emitting;
    const uint64_t h = (uint64_t)T * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)Se;
    const int k = (int)((h >> 32) % SIM_STEP_MEMO_ENTRIES);
    if (memo->e[k].T == T && memo->e[k].Se == Se) {
        copy_other(cost->ops, &cost->n_allreduce, memo->e[k].ops, memo->e[k].n_allreduce);
    } else {
        memset(cost->ops, 0, (size_t)SIM_OP_ATTN_PREFILL * sizeof(cost->ops[0]));
        memset(cost->ops + SIM_OP_O_PROJ, 0,
               (size_t)(SIM_OP_COUNT - SIM_OP_O_PROJ) * sizeof(cost->ops[0]));
        cost->n_allreduce = 0;
        other_ops(p->m, p->hw, p->cfg, &p->dims, &p->wbs, cost);
        memo->e[k].T = T;
        memo->e[k].Se = Se;
        copy_other(memo->e[k].ops, &memo->e[k].n_allreduce, cost->ops, cost->n_allreduce);
    }
    totals(p->cfg, cost);
}

void sim__step_whole_cost_next(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                               const sim_step *s, sim_step_cost *cost)
{
    sim_step_prep p;
    sim_step_prep_init(&p, m, hw, cfg);
    sim_step_cost_next_prepared(&p, s, cost);
}
