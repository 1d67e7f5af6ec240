/*
 * kernel_tables.h - measured single-kernel times from the aic and vidur tables
 * (../shared/data/kernels, described in ../shared/data/README.md), read with
 * csv.h into kernel samples that `llmstep validate-kernels` predicts with the
 * rooflines of kernels.h (docs/validate-kernels.md has the method).
 *
 * Table -> operator (one sample per row unless said otherwise; latency ms -> s):
 *   aic gemm_perf, gemm_dtype bfloat16      GEMM m x k -> n (family gemm)
 *   aic gemm_perf, gemm_dtype fp8           per-tensor fp8 GEMM (family gemm_fp8)
 *   aic gemm_perf, gemm_dtype fp8_block     block-scaled fp8 GEMM (family gemm_fp8_block)
 *   aic gemm_perf, gemm_dtype nvfp4         NVFP4 GEMM (family gemm_fp4)
 *   vidur mlp.csv, per row four GEMMs       attn_pre_proj = fused QKV, attn_post_proj = O,
 *                                           mlp_up_proj = gate+up, mlp_down_proj, at
 *                                           num_tokens and TP, shapes from the model config
 *   aic generation_attention_perf           paged decode attention, batch x (step + 1) keys
 *   aic context_attention_perf              causal prefill attention over isl tokens (step 0)
 *   aic custom_allreduce_perf               vLLM custom all-reduce, CUDA graph, bf16:
 *                                           bytes = 2 x message_size (elements)
 *   vidur network all_reduce.csv            NCCL all-reduce within one node
 *                                           (devices_per_node == num_workers), bytes = size
 *   aic mla_context_module_perf             vLLM's whole DeepseekV2MLAAttention forward of
 *                                           DeepSeek-V3 at num_heads heads (projections,
 *                                           norms, RoPE, cache write, attention, o_proj):
 *                                           batch prompts of isl tokens (family mla_prefill)
 *   aic mla_generation_module_perf          the same module decoding batch sequences with
 *                                           step keys (step - 1 cached; family mla_decode)
 *   (MLA rows: model deepseek-ai/DeepSeek-V3, tp_size 1, mla_dtype bfloat16, gemm_type
 *   bfloat16 or fp8_block (dtype fp8), bf16 or fp8 KV cache; nvfp4 and fp8 attention
 *   math rows are skipped.)
 *   aic moe_perf                            vLLM's Triton fused_experts (kernel_source
 *                                           vllm_fused_moe, or the 0.24 names
 *                                           vllm_unquantizedfusedmoe_triton_tritonexperts
 *                                           and vllm_modeloptfp8moe_triton_tritonexperts),
 *                                           moe_dtype bfloat16 (family moe) or per-tensor
 *                                           fp8 (moe_fp8), expert parallel 1; rows of the
 *                                           Marlin int4, fp8_block, nvfp4 and mxfp4 kernels
 *                                           are outside the filters (no model). The routing
 *                                           is rebuilt from the collector's generator
 *                                           (sim_moe_routing_counts) to count the touched
 *                                           experts and padded rows.
 * Attention rows are kept for the kernel vLLM picks on the GPU (the caller
 * names it: FlashAttention on Hopper and Ampere, FlashInfer on B200,
 * FlashAttention 2 on L40S), bf16 or fp8 KV cache (fp8 rows are families
 * attn_*_fp8kv), no sliding window, beam width 1.
 * Rows outside these filters are counted as skipped, never guessed at.
 *
 * Every sample carries a token count for the range tables: GEMM m, decode
 * batch (one new token per sequence), prefill batch x isl, and all-reduce
 * bytes / (2 x SIM_KTAB_AR_HIDDEN), the tokens of a bf16 hidden state of a
 * 70B-class model, the models that run under TP.
 */
#ifndef SIM_KERNEL_TABLES_H
#define SIM_KERNEL_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "hw.h"
#include "kernels.h"
#include "model.h"
#include "status.h"

/* Hidden size that converts an all-reduce message into tokens for the range tables. */
#define SIM_KTAB_AR_HIDDEN 8192

/* Operator families: XX(ENUM, "name"). */
#define SIM_KFAM_MAP(XX)                                                                           \
    XX(GEMM, "gemm")                                                                               \
    XX(GEMM_FP8, "gemm_fp8")                                                                       \
    XX(GEMM_FP8_BLOCK, "gemm_fp8_block")                                                           \
    XX(GEMM_FP4, "gemm_fp4")                                                                       \
    XX(ATTN_DECODE, "attn_decode")                                                                 \
    XX(ATTN_PREFILL, "attn_prefill")                                                               \
    XX(ATTN_DECODE_FP8KV, "attn_decode_fp8kv")                                                     \
    XX(ATTN_PREFILL_FP8KV, "attn_prefill_fp8kv")                                                   \
    XX(ALLREDUCE, "allreduce")                                                                     \
    XX(MLA_PREFILL, "mla_prefill")                                                                 \
    XX(MLA_DECODE, "mla_decode")                                                                   \
    XX(MOE, "moe")                                                                                 \
    XX(MOE_FP8, "moe_fp8")                                                                         \
    XX(MOE_FP8_BLOCK, "moe_fp8_block")                                                             \
    XX(MOE_MXFP4, "moe_mxfp4")                                                                     \
    XX(MOE_NVFP4, "moe_nvfp4")

typedef enum sim_kfam {
#define XX(e, name) SIM_KFAM_##e,
    SIM_KFAM_MAP(XX)
#undef XX
        SIM_KFAM_COUNT
} sim_kfam;

/* Sources of samples: XX(ENUM, "name", family). */
#define SIM_KSRC_MAP(XX)                                                                           \
    XX(AIC_GEMM, "aic:gemm_perf", GEMM)                                                            \
    XX(AIC_GEMM_FP8, "aic:gemm_perf:fp8", GEMM_FP8)                                                \
    XX(AIC_GEMM_FP8_BLOCK, "aic:gemm_perf:fp8_block", GEMM_FP8_BLOCK)                              \
    XX(AIC_GEMM_FP4, "aic:gemm_perf:nvfp4", GEMM_FP4)                                              \
    XX(VIDUR_QKV, "vidur:attn_pre_proj", GEMM)                                                     \
    XX(VIDUR_O, "vidur:attn_post_proj", GEMM)                                                      \
    XX(VIDUR_UP, "vidur:mlp_up_proj", GEMM)                                                        \
    XX(VIDUR_DOWN, "vidur:mlp_down_proj", GEMM)                                                    \
    XX(AIC_DECODE, "aic:generation_attention_perf", ATTN_DECODE)                                   \
    XX(AIC_PREFILL, "aic:context_attention_perf", ATTN_PREFILL)                                    \
    XX(AIC_DECODE_FP8KV, "aic:generation_attention_perf:fp8kv", ATTN_DECODE_FP8KV)                 \
    XX(AIC_PREFILL_FP8KV, "aic:context_attention_perf:fp8kv", ATTN_PREFILL_FP8KV)                  \
    XX(AIC_CUSTOM_AR, "aic:custom_allreduce_perf", ALLREDUCE)                                      \
    XX(VIDUR_AR, "vidur:all_reduce", ALLREDUCE)                                                    \
    XX(AIC_MLA_CONTEXT, "aic:mla_context_module_perf", MLA_PREFILL)                                \
    XX(AIC_MLA_GEN, "aic:mla_generation_module_perf", MLA_DECODE)                                  \
    XX(AIC_MOE_BAL, "aic:moe_perf:balanced", MOE)                                                  \
    XX(AIC_MOE_PL, "aic:moe_perf:power_law", MOE)                                                  \
    XX(AIC_MOE_FP8_BAL, "aic:moe_perf:fp8:balanced", MOE_FP8)                                      \
    XX(AIC_MOE_FP8_PL, "aic:moe_perf:fp8:power_law", MOE_FP8)                                      \
    XX(AIC_MOE_FP8B_BAL, "aic:moe_perf:fp8_block:balanced", MOE_FP8_BLOCK)                         \
    XX(AIC_MOE_FP8B_PL, "aic:moe_perf:fp8_block:power_law", MOE_FP8_BLOCK)                         \
    XX(AIC_MOE_MXFP4_BAL, "aic:moe_perf:w4a16_mxfp4:balanced", MOE_MXFP4)                          \
    XX(AIC_MOE_MXFP4_PL, "aic:moe_perf:w4a16_mxfp4:power_law", MOE_MXFP4)                          \
    XX(AIC_MOE_NVFP4_BAL, "aic:moe_perf:nvfp4:balanced", MOE_NVFP4)                                \
    XX(AIC_MOE_NVFP4_PL, "aic:moe_perf:nvfp4:power_law", MOE_NVFP4)

typedef enum sim_ksrc {
#define XX(e, name, fam) SIM_KSRC_##e,
    SIM_KSRC_MAP(XX)
#undef XX
        SIM_KSRC_COUNT
} sim_ksrc;

/* The aic tables this module reads. */
typedef enum sim_aic_table {
    SIM_AIC_GEMM = 0,        /* gemm_perf */
    SIM_AIC_DECODE = 1,      /* generation_attention_perf */
    SIM_AIC_PREFILL = 2,     /* context_attention_perf */
    SIM_AIC_CUSTOM_AR = 3,   /* custom_allreduce_perf */
    SIM_AIC_MLA_CONTEXT = 4, /* mla_context_module_perf */
    SIM_AIC_MLA_GEN = 5,     /* mla_generation_module_perf */
    SIM_AIC_MOE = 6,         /* moe_perf */
    SIM_AIC_TABLE_COUNT
} sim_aic_table;

/* One measured kernel. Only the fields of its family are meaningful; the rest are 0. */
typedef struct sim_ksample {
    sim_ksrc src;
    int gpu;                 /* the caller's index of the GPU the table was measured on */
    sim_dtype dtype;         /* GEMM weights and inputs */
    sim_gemm_kind gemm_kind; /* GEMM: the kernel's kind (hw.h) */
    double m, n, k;          /* GEMM: tokens, output features, input features */
    double batch;            /* attention: sequences */
    double ctx;        /* attention: keys attended per sequence (decode), prompt tokens (prefill);
                          MLA module: likewise (decode keys = the table's step) */
    double heads;      /* attention: query heads on this GPU */
    double kv_heads;   /* attention: KV heads on this GPU */
    double head_dim;   /* attention: head dimension */
    double kv_bytes;   /* attention: bytes per KV-cache element (2 bf16, 1 fp8) */
                       /* MLA module: dtype is the projections' (bf16, or fp8 for fp8_block) */
    int n_gpus;        /* all-reduce: GPUs */
    double bytes;      /* all-reduce: message, bytes */
    double tokens;     /* token count for the range tables (see above) */
    double measured_s; /* measured kernel time, seconds */
    int64_t line;      /* line of the row in its file */
    /* fused MoE (m = tokens, k = hidden size, n = expert intermediate size / TP, n_gpus = TP): */
    double topk, n_experts;
    double touched;        /* experts that receive rows */
    double rows_padded;    /* sum of each touched expert's rows padded to vLLM's BLOCK_SIZE_M */
    double alpha;          /* power-law exponent of the routing (0: balanced) */
    sim_moe_class moe_cls; /* the experts' weight class (hw.h) */
} sim_ksample;

/* A growable array of samples, owned by the caller. */
typedef struct sim_kset {
    sim_ksample *v;
    size_t n, cap;
} sim_kset;

void sim_kset_init(sim_kset *set);
/* Frees the samples; the set is empty afterwards. Accepts an initialized, empty set. */
void sim_kset_free(sim_kset *set);

const char *sim_kfam_name(sim_kfam f);
const char *sim_ksrc_name(sim_ksrc s);
sim_kfam sim_ksrc_family(sim_ksrc s);
/* File name stem of an aic table ("gemm_perf"). */
const char *sim_aic_table_name(sim_aic_table t);

/*
 * Appends the samples of the aic table at path (kind t) to set, tagged with
 * gpu. Every row's "device" must equal device (the table belongs to one GPU).
 * Attention rows are kept when their kernel_source is attn_kernel, or, when
 * attn_kernel is NULL, one of vLLM's FlashAttention sources of the aic tables
 * ("vllm_flash_attn_fa3", "vllm_flash_attn").
 * *n_skipped (OUT) counts rows outside the filters of the header comment.
 * Returns SIM_OK, or SIM_EPARSE/SIM_EIO/SIM_ENOMEM with "<path>:<line>: ..." in
 * err; on failure the samples already appended stay in set (the caller frees).
 */
sim_status sim_kset_load_aic(const char *path, sim_aic_table t, const char *device,
                             const char *attn_kernel, int gpu, sim_kset *set,
                             size_t *n_skipped /* OUT */, struct sim_err *err /* OUT */);

/*
 * Rows per expert of the aic collector's routing (aiconfigurator collector/helper.py), into
 * counts[0 .. n_experts-1]:
 *   alpha == 0, "balanced": token t, slot j picks (t + j s) mod E with s = ceil(E / k) when
 *     tokens >= s, else (floor(t s / tokens) + j s) mod E (balanced_logits);
 *   alpha > 0, "power_law_<alpha>": E weights from the power law on [1, 0.8 tokens] (when
 *     tokens x k > E, else [0.01, 2]) at the quantiles (i + 0.5) / E, the deterministic
 *     stand-in for the collector's random draws (power_law_logits_v3, averaged over 5 draws),
 *     scaled to tokens x k rows, rounded half to even, the difference added to the largest
 *     counts (or taken from the smallest ones, from the largest where a count is 0) one row
 *     each, in turn.
 * Returns the touched experts; *rows_padded (OUT) is the sum of each count rounded up to a
 * multiple of block_m.
 */
int64_t sim_moe_routing_counts(int64_t tokens, int64_t n_experts, int64_t topk, double alpha,
                               double block_m, int64_t *counts /* OUT */,
                               double *weights /* scratch, n_experts */,
                               double *rows_padded /* OUT */);

/*
 * The rows `hw import --tables` fits the fused-MoE figures on (hw_derive.h): 1 for the
 * memory fit (tokens <= 16, touched experts' weights >= 2 x l2_bytes: streamed from DRAM),
 * 2 for the compute fit (tokens >= 4096), 0 for every other row and every non-MoE sample.
 */
int sim_moe_fit_role(const sim_ksample *s, double l2_bytes);

/* The fused-MoE layer a moe sample measures (weights 3 d F per expert in its dtype). */
void sim_ksample_moe_shape(const sim_ksample *s, sim_moe_shape *out /* OUT */);

/*
 * Appends four GEMM samples per row of a vidur mlp.csv, with shapes from the
 * model m sharded over the row's TP degree (docs/model.md "Operators"):
 *   attn_pre_proj  k = d, n = (Hg + 2 Kg) dh      attn_post_proj  k = Hg dh, n = d
 *   mlp_up_proj    k = d, n = 2 F / tp            mlp_down_proj   k = F / tp, n = d
 * Each row's n_head, n_kv_head, n_embd, n_expanded_embd and use_gated_mlp must
 * agree with m (SIM_EINVAL otherwise: the folder was matched to the wrong
 * config), and tp must divide H and F.
 */
sim_status sim_kset_load_vidur_mlp(const char *path, const sim_model *m, int gpu, sim_kset *set,
                                   size_t *n_skipped /* OUT */, struct sim_err *err /* OUT */);

/* Appends the single-node rows of a vidur network all_reduce.csv. */
sim_status sim_kset_load_vidur_allreduce(const char *path, int gpu, sim_kset *set,
                                         size_t *n_skipped /* OUT */,
                                         struct sim_err *err /* OUT */);

#endif
