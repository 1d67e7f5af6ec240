/*
 * ops.h - FLOPs, HBM bytes and roofline time of every operator of one engine step on
 * one GPU, over the whole model or one pipeline stage's layers.
 *
 * A step is a set of sequence groups: count sequences that each process
 * new_tokens tokens against context_tokens tokens already in the KV cache.
 * Prefill: context 0, new_tokens = prompt length. Decode: new_tokens 1.
 * Chunked prefill: new_tokens > 1 and context > 0. Every operator of the forward
 * pass is counted for one GPU of a tensor-parallel group of tp GPUs
 * (Megatron-style sharding as in vLLM: column-parallel QKV and gate/up,
 * row-parallel O and down, vocab-parallel embedding and LM head), and timed with
 * a roofline over measured ceilings (the single-kernel rules of kernels.h):
 *   t_op = max(flops / (peak x eff),
 *              n_kernels x t_fixed + bytes / (bw_stream_copy x factor_pattern))
 *   t_roofline = sum over operators of t_op + sum of all-reduce times
 * or, with SIM_ROOFLINE_STEP, one max over the whole step. The calibrated
 * prediction is alpha x t_roofline + beta_s. Formulas and sources: docs/model.md.
 * step.h builds the public step cost on this count: the checks, the pipeline
 * stages of pipeline.h, and the reuse from one step to the next.
 * Everything here is pure: no I/O, no allocation, no globals.
 */
#ifndef SIM_OPS_H
#define SIM_OPS_H

#include <stdint.h>

#include "hw.h"
#include "kernels.h"
#include "model.h"
#include "status.h"

#define SIM_STEP_MAX_GROUPS 64
#define SIM_DP_MAX          1024 /* data-parallel ranks */

typedef struct sim_group {
    int64_t count;          /* sequences in the group */
    int64_t new_tokens;     /* tokens each sequence processes in this step */
    int64_t context_tokens; /* tokens each already has in the KV cache */
    int emits;              /* 1 when each sequence samples a token this step */
} sim_group;

typedef struct sim_step {
    int n_groups;
    sim_group groups[SIM_STEP_MAX_GROUPS];
} sim_step;

typedef enum sim_roofline_mode {
    SIM_ROOFLINE_OP = 0,   /* sum over operators of max(compute, memory): default */
    SIM_ROOFLINE_STEP = 1, /* one max over the step's totals (design document v2) */
    SIM_ROOFLINE_MODE_COUNT
} sim_roofline_mode;

/*
 * The calibrated time of n_steps engine steps whose rooflines sum to roofline_s:
 *   t = alpha x roofline_s + beta_s x n_steps
 * the one home of "step = alpha x roofline + beta" (docs/model.md, "Calibration"): the step
 * model, both schedulers, the pipeline, the measurement predictions and the fits call it.
 */
static inline double sim_calibrated_s(double alpha, double roofline_s, double beta_s,
                                      double n_steps)
{
    return alpha * roofline_s + beta_s * n_steps;
}

/*
 * Which decode-attention kernel the engine launches, when it is vLLM's PagedAttention rather
 * than a kernel that reads each KV head once for its query group (FlashAttention, FlashInfer).
 * sim_decode_attn_resolve (engine.h) fills it from the engine profile and the model; all zero
 * (paged 0): the shared-KV kernel, or the profile's attn_decode_kv_per_q_head_flag.
 * With paged set, a decode step runs PagedAttention V1 when
 *   max_seq_len <= v1_max_seq_len and (partitions == 1 or seqs x heads > v1_min_seq_heads),
 * partitions = ceil(max_seq_len / partition_tokens), else V2 (vllm/attention/ops/paged_attn.py).
 * Under CUDA graphs (a decode batch of at most graph_max_batch sequences, not eager) the
 * kernel was recorded with max_seq_len = graph_max_seq_len and the batch padded to the
 * captured size (1, 2, 4, then multiples of graph_batch_align). V1 runs one thread block per
 * (sequence, query head), each reading its KV head's whole context: K/V once per query head;
 * V2's partitions of a KV head run together and share it, except where the profile says the
 * stack reads K/V once per query head (attn_decode_kv_per_q_head_flag). V1 holds 4 B of
 * logits per token of max_seq_len in shared memory, V2 per token of a partition, which
 * bounds the blocks resident per SM (docs/model.md, "Decode attention kernel choice").
 */
typedef enum sim_paged_why {
    SIM_PAGED_NONE = 0,
    SIM_PAGED_SLIDING_WINDOW, /* V0 0.5-0.6: sliding window -> XFormers backend */
    SIM_PAGED_ROCM            /* V0 ROCm backend: PagedAttention for every decode */
} sim_paged_why;

typedef struct sim_decode_attn {
    int paged;
    sim_paged_why why;
    int eager; /* no CUDA graphs: the step's own max_seq_len and batch */
    double v1_max_seq_len, v1_min_seq_heads, partition_tokens;
    double graph_max_seq_len, graph_max_batch, graph_batch_align;
} sim_decode_attn;

/* The decode kernel a step ran (sim_step_cost.decode_kernel). */
typedef enum sim_decode_kernel {
    SIM_DECODE_SHARED_KV = 0, /* no decode, or a kernel that reads each KV head once a group */
    SIM_DECODE_PER_Q_HEAD,    /* the profile's attn_decode_kv_per_q_head_flag */
    SIM_DECODE_PAGED_V1,      /* vLLM PagedAttention V1: K/V read once per query head */
    SIM_DECODE_PAGED_V2,      /* vLLM PagedAttention V2: partitions share each KV head */
    SIM_DECODE_KERNEL_COUNT
} sim_decode_kernel;

const char *sim_decode_kernel_name(sim_decode_kernel k);

/* 1 when decode kernel k reads each KV head's K/V once per query head on GPU hw, 0 when once
 * for its query group: the profile's per-query-head kernel and PagedAttention V1 (a block
 * per query head over the whole context) do; V2 does where the profile says the stack does
 * not share them (attn_decode_kv_per_q_head_flag), else its partitions share them. */
int sim_decode_kernel_per_q_head(sim_decode_kernel k, const sim_hw *hw);

typedef struct sim_run_cfg {
    int tp;             /* tensor-parallel degree */
    sim_dtype dtype;    /* weights (and GEMM inputs) */
    sim_dtype kv_dtype; /* KV cache */
    sim_roofline_mode mode;
    double alpha;        /* calibration: multiplies the roofline time */
    double beta_s;       /* calibration: added per step, seconds */
    sim_gemm_model gemm; /* GEMM compute ceiling model (default SIM_GEMM_FLAT) */
    int pp;              /* pipeline-parallel stages (vLLM pipeline_parallel_size); 0 or 1: none */
    /* Data parallelism (vLLM data_parallel_size): dp copies of the attention and dense layers,
     * each TP-sharded over tp GPUs; the step is one DP rank's (every rank runs a step of the
     * same shape: vLLM keeps MoE DP ranks in lockstep). 0 or 1: none. MoE layers of a model
     * with dp > 1 gather the dp ranks' tokens (docs/model.md, "Expert and data parallelism"). */
    int dp;
    /* 1: expert parallelism (vLLM enable_expert_parallel): the MoE layers hold n_experts /
     * (dp x tp) whole experts per GPU instead of every expert's 1/(dp x tp) slice. */
    int ep;
    sim_decode_attn decode; /* the engine's decode-attention kernel rule (zero: none) */
    /* Speculative decoding (spec.h), owned by the caller; NULL: none. Read by the V1 serving
     * simulation and the memory model, not by the step model. */
    const struct sim_spec *spec;
} sim_run_cfg;

/* The fused-MoE kernel class the routed experts run (hw.h, sim_moe_class), from the
 * checkpoint's expert weights: MXFP4 (gpt-oss) mxfp4, NVFP4 nvfp4, fp8 with weight blocks
 * fp8_block, other fp8 and int8 W8A8 (and --dtype fp8) fp8; 16-bit and weight-only int4/int8
 * checkpoints, and checkpoints that leave the experts unquantized, bf16. */
sim_moe_class sim_moe_class_of(const sim_model *m, const sim_run_cfg *cfg);

/* A plain run on tp GPUs with weights and KV cache in dt: per-operator roofline, uncalibrated
 * (alpha 1, beta_s 0), flat GEMMs, no PP, DP or EP, no engine decode rule. Callers set what
 * differs. */
static inline sim_run_cfg sim_run_cfg_plain(int tp, sim_dtype dt)
{
    return (sim_run_cfg){.tp = tp,
                         .dtype = dt,
                         .kv_dtype = dt,
                         .mode = SIM_ROOFLINE_OP,
                         .alpha = 1.0,
                         .beta_s = 0.0,
                         .gemm = SIM_GEMM_FLAT,
                         .pp = 1,
                         .dp = 1};
}

/* Operators, in execution order. XX(ENUM, "name", pattern) */
#define SIM_OPS(XX)                                                                                \
    XX(EMBED, "embedding")                                                                         \
    XX(NORM, "norms_residual")                                                                     \
    XX(QKV, "qkv_proj")                                                                            \
    XX(ROPE, "rope_qk_norm")                                                                       \
    XX(KV_WRITE, "kv_cache_write")                                                                 \
    XX(ATTN_PREFILL, "attn_prefill")                                                               \
    XX(ATTN_CHUNKED, "attn_chunked_prefill")                                                       \
    XX(ATTN_DECODE, "attn_decode_paged")                                                           \
    XX(MLA_UP, "mla_kv_up_proj")                                                                   \
    XX(O_PROJ, "o_proj")                                                                           \
    XX(MLP_GATE_UP, "mlp_gate_up")                                                                 \
    XX(MLP_ACT, "mlp_act")                                                                         \
    XX(MLP_DOWN, "mlp_down")                                                                       \
    XX(MOE_ROUTER, "moe_router")                                                                   \
    XX(MOE_EXPERTS, "moe_experts")                                                                 \
    XX(LM_HEAD, "lm_head")                                                                         \
    XX(SAMPLER, "sampler")                                                                         \
    XX(ALLREDUCE, "allreduce")                                                                     \
    XX(LOGITS_GATHER, "logits_gather")                                                             \
    XX(MOE_DISPATCH, "moe_dispatch_combine")

typedef enum sim_op_kind {
#define XX(e, name) SIM_OP_##e,
    SIM_OPS(XX)
#undef XX
        SIM_OP_COUNT
} sim_op_kind;

typedef struct sim_op_cost {
    double flops;        /* per GPU */
    double bytes;        /* HBM bytes per GPU (for comm ops: message bytes) */
    double weight_bytes; /* part of bytes that is weights */
    double n_kernels;    /* kernel launches per step (each costs the profile's fixed time) */
    double compute_s;    /* flops / compute ceiling */
    double memory_s;     /* bytes / memory ceiling */
    double time_s;       /* roofline time of the operator */
    sim_bound bound;
} sim_op_cost;

typedef struct sim_step_cost {
    sim_op_cost ops[SIM_OP_COUNT];
    double flops;         /* per GPU, all operators */
    double bytes;         /* HBM bytes per GPU, all non-comm operators */
    double compute_s;     /* sum of compute times (non-comm) */
    double memory_s;      /* sum of memory times (non-comm) */
    double comm_s;        /* all-reduce and gather time */
    double roofline_s;    /* per mode, including comm_s */
    double step_s;        /* alpha x roofline_s + beta_s */
    double tokens;        /* new tokens in the step */
    double seqs;          /* sequences in the step */
    double seqs_emitting; /* sequences that sample a token */
    int n_allreduce;      /* all-reduces per step (2 per layer + 1 embedding), 0 at tp 1 */
    sim_decode_kernel decode_kernel; /* the decode-attention kernel the step ran */
    /* PagedAttention's thread blocks in flight at once (the grid, or what shared memory lets
     * each SM hold), 0 when no per-block rate applies (docs/model.md, "Decode attention
     * kernel choice") */
    double decode_blocks_resident;
    sim_bound bound; /* dominant bound of the step: the larger of compute_s, memory_s */
} sim_step_cost;

/* Name of an operator ("qkv_proj"); sim_bound_name (kernels.h) names a bound. */
const char *sim_op_name(sim_op_kind k);

/* One stage's cost: layers [first_layer, first_layer + n_layers), the embedding when first,
 * the final norm, LM head and sampler when last. Internal (pipeline.c and step.c; the step
 * must have passed sim_step_check). */
void sim__step_stage_cost(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                          int64_t first_layer, int64_t n_layers, int first, int last,
                          const sim_step *s, sim_step_cost *out /* OUT */);

/* Shapes and byte widths shared by the parts of one step's count. */
typedef struct sim_step_dims {
    double L, d, dh, Hg, Kg, hb, kvb, W;
    double Lf;   /* layers that attend without the window (0: all windowed, or no window) */
    int chunked; /* the window is Llama-4's chunk, not a sliding window */
    /* MLA (docs/model.md, "MLA"): latent, rotary, nope and v head dims; 0 without MLA. */
    int mla;
    double kvl, rope, nope, vd;
    double kvb_w_bytes; /* kv_b weight bytes of one layer on this GPU (checkpoint format) */
    double gemm_fps;    /* rate of the block GEMMs (the checkpoint's math) */
    double gemm16_fps;  /* rate of the 16-bit GEMMs (vLLM's absorbed W_UK, W_UV bmm) */
    /* The layers counted: all of them, or one pipeline stage's (docs/model.md, "Pipeline
     * parallelism"): frac = L / n_layers scales the per-layer weights; the embedding is on
     * the first stage, the final norm, LM head and sampler on the last. */
    double frac;
    int first, last;
    sim_decode_attn decode; /* the engine's decode kernel rule (cfg->decode) */
} sim_step_dims;

/*
 * What the cost of a step needs of a deployment apart from the step: the shapes of the whole
 * model on one GPU and its weight bytes per GEMM. A simulation that prices step after step on
 * one deployment without pipeline stages prepares them once (sim_step_prep_init) and prices
 * each step with sim_step_cost_prepared or sim_step_cost_next_prepared: the same numbers as
 * sim_step_cost_compute and sim_step_cost_next, bit for bit (the same functions, fed the same
 * values), without recomputing the shapes and weight bytes per step. The prep points at m, hw
 * and cfg, which must stay unchanged while it is used. Pure and allocation-free.
 */
typedef struct sim_step_prep {
    const sim_model *m;
    const sim_hw *hw;
    const sim_run_cfg *cfg;
    sim_step_dims dims;   /* the whole model's */
    sim_weight_bytes wbs; /* sim_model_weight_bytes_moe at cfg */
} sim_step_prep;

void sim_step_prep_init(sim_step_prep *p /* OUT */, const sim_model *m, const sim_hw *hw,
                        const sim_run_cfg *cfg);
void sim_step_cost_prepared(const sim_step_prep *p, const sim_step *s,
                            sim_step_cost *out /* OUT */);
void sim_step_cost_next_prepared(const sim_step_prep *p, const sim_step *s,
                                 sim_step_cost *cost /* IN/OUT */);

/*
 * A memo of the operators other than attention, which are functions of the step's new tokens
 * T and sampling sequences Se alone (other_ops in ops.c): a serving simulation meets the same
 * (T, Se) again and again (every decode of B requests), so each is counted once and copied
 * after. Direct-mapped by (T, Se); an entry holds what the count writes (the operators' costs
 * and the all-reduce count). Caller-owned, for one sim_step_prep (and its m, hw, cfg): clear
 * it with sim_step_memo_init when the prep changes. Pure and allocation-free.
 */
#define SIM_STEP_MEMO_ENTRIES 32
typedef struct sim_step_memo {
    struct {
        double T, Se; /* the key; T < 0: empty */
        int n_allreduce;
        sim_op_cost ops[SIM_OP_COUNT]; /* the operators other than attention are read */
    } e[SIM_STEP_MEMO_ENTRIES];
} sim_step_memo;

void sim_step_memo_init(sim_step_memo *memo /* OUT */);

/* sim_step_cost_next_prepared with the memo: the same numbers, bit for bit. */
void sim_step_cost_next_memo(const sim_step_prep *p, sim_step_memo *memo, const sim_step *s,
                             sim_step_cost *cost /* IN/OUT */);

/* sim_step_cost_next (step.h) for a run without pipeline stages: only attention is recounted
 * when the step's new tokens and sampling sequences are those of cost, else every operator.
 * Internal (step.c). */
void sim__step_whole_cost_next(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                               const sim_step *s, sim_step_cost *cost /* IN/OUT */);

/*
 * Under expert parallelism the step waits for the GPU whose experts received the most rows.
 * With N tokens each routing to k of E experts uniformly and G GPUs of E / G experts, the rows
 * X_g on a GPU are a sum of N independent hypergeometric draws: mean mu = N k / G, variance
 * s^2 = N k (1/G)(1 - 1/G)(E - k)/(E - 1). The busiest GPU's expected rows, in the normal
 * approximation (X_g = Y_g - mean(Y) + mu with Y_g independent, Var Y = s^2 / (1 - 1/G)),
 *   E[max_g X_g] = mu + s m_G / sqrt(1 - 1/G)
 * with m_G the expected maximum of G independent standard normals (2: 0.5642, 4: 1.0294,
 * 8: 1.4236, 16: 1.7660, 32: 2.0697, 64: 2.3437, 128: 2.5946, 256: 2.8269; linear in log2 G
 * between them). Returns that over mu (>= 1; 1 for G <= 1 or N k <= 0). docs/model.md,
 * "Expert and data parallelism". Real routers are skewed beyond this (not modelled).
 */
double sim_moe_ep_busiest_factor(double n_experts, double k, double n_tokens, int group);

/*
 * The MoE layers' layout of cfg (docs/model.md, "Expert and data parallelism"): the group G =
 * dp x tp GPUs shares the experts (vLLM FusedMoEParallelConfig flattens TP across DP) and
 * every GPU's MoE layer sees the tokens of all dp ranks.
 */
typedef struct sim_moe_layout {
    int group;          /* G = dp x tp: the GPUs among which the experts are split */
    int ep;             /* 1: whole experts (n_experts / G each), 0: slices (F / G each) */
    double tokens_mult; /* tokens the layer sees per token of the rank's step: dp */
} sim_moe_layout;

void sim_moe_layout_of(const sim_run_cfg *cfg, sim_moe_layout *out /* OUT */);

/* cfg's data-parallel ranks: dp, or 1 when dp is 0 or 1 (no DP). */
int sim_run_dp(const sim_run_cfg *cfg);

/* Of n sequences spread over cfg's DP ranks, those on the busiest: ceil(n / dp) (n without
 * DP). vLLM's DP ranks serve their shares in lockstep for MoE models, so the busiest rank's
 * step is the step (docs/model.md, "Expert and data parallelism"). */
int64_t sim_dp_rank_share(const sim_run_cfg *cfg, int64_t n);

/*
 * Checks dp and ep against the model: dp >= 1; --ep only for a model with experts; with
 * dp x tp GPUs per MoE layer, n_experts divisible by dp x tp under EP, moe_intermediate_size
 * divisible by dp x tp without it. SIM_EINVAL with a message naming --ep or --dp otherwise.
 */
sim_status sim_moe_layout_check(const sim_model *m, const sim_run_cfg *cfg,
                                struct sim_err *err /* OUT */);

/*
 * Bytes of one MoE layer's dispatch (an all-gather of the dp ranks' hidden states and
 * router logits, d x hb + E x sim_model_router_bytes per token) and combine (a reduce-scatter of
 * the expert outputs, d x hb per token), per GPU buffer, for tokens tokens of one DP rank: vLLM's
 * default all2all backend, allgather_reducescatter. 0 when dp <= 1 (no dispatch).
 */
void sim_moe_dispatch_bytes(const sim_model *m, const sim_run_cfg *cfg, double tokens, double hb,
                            double *dispatch_bytes /* OUT */, double *combine_bytes /* OUT */);

/*
 * Sum over the new tokens of one sequence of the keys each attends to (causal,
 * with an optional sliding window; window 0 = none):
 *   sum_{i=1..t} min(c + i, W).
 */
double sim_attn_pairs(double new_tokens, double context, double window);

/*
 * The same with chunked local attention (Llama-4 attention_chunk_size C): the token at
 * position p (0-based; the new ones are c .. c + t - 1) attends to the (p mod C) + 1 keys of
 * its own chunk, so the sum is S(c + t) - S(c) with
 *   S(n) = sum_{p=0..n-1} ((p mod C) + 1) = q C (C + 1) / 2 + r (r + 1) / 2,
 * q = floor(n / C), r = n - q C. docs/model.md, "Llama-4". chunk must be >= 1.
 */
double sim_attn_pairs_chunked(double new_tokens, double context, double chunk);

#endif
