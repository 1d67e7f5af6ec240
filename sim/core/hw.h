/*
 * hw.h - a GPU's measured and datasheet characteristics.
 *
 * A sim_hw is filled from hwprofiles/<id>.json by simio (hw_json.c); the schema
 * is in docs/hwprofile.md. Every scalar figure has a provenance (datasheet,
 * measured, derived from measurements, estimated, or a documented default filled
 * in by sim_hw_apply_defaults()) and a source string, so reports can say which
 * numbers were measured. The roofline (ops.c) uses:
 *   compute ceiling  = peak_<dtype>_flops_per_s x gemm_eff_<dtype>_frac
 *   memory ceiling   = bw_stream_copy_bytes_per_s x bw_factor_<pattern>_frac
 *   fixed time       = <kind>_fixed_s per kernel (GEMM, attention, elementwise), measured
 *                      as the intercept of kernel time against bytes
 *   small-M GEMMs    = a 16-bit GEMM of at most gemm_small_m_rows rows (the step's tokens: a
 *                      decode batch) at peak x gemm_eff_small_m_frac instead of gemm_eff: BLAS
 *                      stacks whose kernels for small M are untuned (ROCm hipBLASLt without
 *                      TunableOp); 0 rows (the default): no such class
 *   fp8 GEMMs        = their own weights factor and fixed time (bw_factor_weights_fp8_frac,
 *                      gemm_fixed_fp8_s: vLLM quantizes the activations in an extra kernel);
 *                      block-scaled fp8 and fp4 (NVFP4) GEMMs have a set of their own
 *                      (sim_gemm_kind: gemm_eff_<kind>_frac, bw_factor_weights_<kind>_frac,
 *                      gemm_fixed_<kind>_s; fp4 at peak_fp4_flops_per_s)
 *   decode attention = attn_fixed_s + KV bytes / (copy x bw_factor_kv_gather[_fp8]_frac)
 *                      + attn_decode_seq_head_s x sequences x query heads; the KV bytes are
 *                      read once per KV head, or once per query head when the stack's decode
 *                      kernel does not share them within a GQA group
 *                      (attn_decode_kv_per_q_head_flag = 1); with vLLM's PagedAttention
 *                      and a per-block rate beta = attn_decode_block_bw_bytes_per_s, the KV
 *                      bytes also take bytes / (R x beta), R the thread blocks resident at
 *                      once (the grid, or n_sm x blocks whose shared memory fits in
 *                      smem_per_sm_bytes): Little's law for a launch too small to fill the GPU
 *   prefill attention = max(attn_prefill_fixed_s + flops / (peak x attn_eff) x (1 + s0 / s),
 *                      attn_fixed_s + bytes / (copy x mixed)), s0 = attn_prefill_seq_half_tokens
 *                      (FlashAttention's rate ramps with the prompt length s)
 *   fused MoE        = max(moe_fixed[_<cls>]_s + bytes / (copy x bw_factor_moe[_<cls>]_frac),
 *                      2 R [3 d F (1 + r0 / r_e) + k0 (2 F + d)] / (peak x moe_gemm_eff)),
 *                      R padded rows, r_e = R / touched experts, r0 = moe_rows_half_tokens,
 *                      k0 = moe_tile_extra_k_elems (kernels.h, sim_fused_moe_time); one set
 *                      per expert weight class (sim_moe_class: bf16, fp8, fp8_block, mxfp4,
 *                      nvfp4), each the kernel vLLM runs for that class
 *   all-reduce time  = latency_s + 2 (n-1)/n x bytes / bus_bw_bytes_per_s within a node;
 *                      across k nodes of g GPUs, the intra-node all-reduce of g GPUs plus a
 *                      ring among the k nodes on bytes / g per GPU over its own NIC:
 *                      2 (k-1) internode_latency_s + 2 (k-1)/k x bytes / g / bw_internode
 * (docs/model.md, "Roofline" and "Communication").
 */
#ifndef SIM_HW_H
#define SIM_HW_H

#include <stdint.h>

#include "model.h"
#include "status.h"

/*
 * Scalar figures: XX(ENUM, json_key, required). Optional figures that are absent
 * get a default from sim_hw_apply_defaults() (docs/hwprofile.md, "Defaults").
 */
#define SIM_HW_FIELDS(XX)                                                                          \
    XX(PEAK_FP16, "peak_fp16_flops_per_s", 1)                                                      \
    XX(PEAK_BF16, "peak_bf16_flops_per_s", 1)                                                      \
    XX(PEAK_FP8, "peak_fp8_flops_per_s", 0)                                                        \
    XX(PEAK_FP32, "peak_fp32_flops_per_s", 1)                                                      \
    XX(MEM_CAPACITY, "mem_capacity_bytes", 1)                                                      \
    XX(MEM_CUDA_TOTAL, "mem_cuda_total_bytes", 0)                                                  \
    XX(BW_HBM_PEAK, "bw_hbm_peak_bytes_per_s", 1)                                                  \
    XX(BW_STREAM_COPY, "bw_stream_copy_bytes_per_s", 0)                                            \
    XX(BW_STREAM_SCALE, "bw_stream_scale_bytes_per_s", 0)                                          \
    XX(BW_STREAM_ADD, "bw_stream_add_bytes_per_s", 0)                                              \
    XX(BW_STREAM_TRIAD, "bw_stream_triad_bytes_per_s", 0)                                          \
    XX(GEMM_EFF_FP16, "gemm_eff_fp16_frac", 0)                                                     \
    XX(GEMM_EFF_FP8, "gemm_eff_fp8_frac", 0)                                                       \
    XX(ATTN_EFF, "attn_eff_frac", 0)                                                               \
    XX(BW_FACTOR_WEIGHTS, "bw_factor_weights_frac", 0)                                             \
    XX(BW_FACTOR_KV, "bw_factor_kv_gather_frac", 0)                                                \
    XX(BW_FACTOR_MIXED, "bw_factor_mixed_frac", 0)                                                 \
    XX(GEMM_FIXED, "gemm_fixed_s", 0)                                                              \
    XX(ATTN_FIXED, "attn_fixed_s", 0)                                                              \
    XX(BW_FACTOR_WEIGHTS_FP8, "bw_factor_weights_fp8_frac", 0)                                     \
    XX(GEMM_FIXED_FP8, "gemm_fixed_fp8_s", 0)                                                      \
    XX(GEMM_EFF_FP8_BLOCK, "gemm_eff_fp8_block_frac", 0)                                           \
    XX(BW_FACTOR_WEIGHTS_FP8_BLOCK, "bw_factor_weights_fp8_block_frac", 0)                         \
    XX(GEMM_FIXED_FP8_BLOCK, "gemm_fixed_fp8_block_s", 0)                                          \
    XX(PEAK_FP4, "peak_fp4_flops_per_s", 0)                                                        \
    XX(GEMM_EFF_FP4, "gemm_eff_fp4_frac", 0)                                                       \
    XX(BW_FACTOR_WEIGHTS_FP4, "bw_factor_weights_fp4_frac", 0)                                     \
    XX(GEMM_FIXED_FP4, "gemm_fixed_fp4_s", 0)                                                      \
    XX(BW_FACTOR_KV_FP8, "bw_factor_kv_gather_fp8_frac", 0)                                        \
    XX(ATTN_DECODE_SEQ_HEAD, "attn_decode_seq_head_s", 0)                                          \
    XX(ATTN_PREFILL_FIXED, "attn_prefill_fixed_s", 0)                                              \
    XX(ATTN_PREFILL_SEQ_HALF, "attn_prefill_seq_half_tokens", 0)                                   \
    XX(ATTN_DECODE_KV_PER_Q_HEAD, "attn_decode_kv_per_q_head_flag", 0)                             \
    XX(ELEMWISE_FIXED, "elementwise_fixed_s", 0)                                                   \
    XX(MOE_FIXED, "moe_fixed_s", 0)                                                                \
    XX(BW_FACTOR_MOE, "bw_factor_moe_frac", 0)                                                     \
    XX(MOE_EFF, "moe_gemm_eff_frac", 0)                                                            \
    XX(MOE_ROWS_HALF, "moe_rows_half_tokens", 0)                                                   \
    XX(MOE_TILE_K, "moe_tile_extra_k_elems", 0)                                                    \
    XX(MOE_FIXED_FP8, "moe_fixed_fp8_s", 0)                                                        \
    XX(BW_FACTOR_MOE_FP8, "bw_factor_moe_fp8_frac", 0)                                             \
    XX(MOE_EFF_FP8, "moe_gemm_eff_fp8_frac", 0)                                                    \
    XX(MOE_ROWS_HALF_FP8, "moe_rows_half_fp8_tokens", 0)                                           \
    XX(MOE_TILE_K_FP8, "moe_tile_extra_k_fp8_elems", 0)                                            \
    XX(MOE_FIXED_FP8_BLOCK, "moe_fixed_fp8_block_s", 0)                                            \
    XX(BW_FACTOR_MOE_FP8_BLOCK, "bw_factor_moe_fp8_block_frac", 0)                                 \
    XX(MOE_EFF_FP8_BLOCK, "moe_gemm_eff_fp8_block_frac", 0)                                        \
    XX(MOE_ROWS_HALF_FP8_BLOCK, "moe_rows_half_fp8_block_tokens", 0)                               \
    XX(MOE_TILE_K_FP8_BLOCK, "moe_tile_extra_k_fp8_block_elems", 0)                                \
    XX(MOE_FIXED_MXFP4, "moe_fixed_mxfp4_s", 0)                                                    \
    XX(BW_FACTOR_MOE_MXFP4, "bw_factor_moe_mxfp4_frac", 0)                                         \
    XX(MOE_EFF_MXFP4, "moe_gemm_eff_mxfp4_frac", 0)                                                \
    XX(MOE_ROWS_HALF_MXFP4, "moe_rows_half_mxfp4_tokens", 0)                                       \
    XX(MOE_TILE_K_MXFP4, "moe_tile_extra_k_mxfp4_elems", 0)                                        \
    XX(MOE_FIXED_NVFP4, "moe_fixed_nvfp4_s", 0)                                                    \
    XX(BW_FACTOR_MOE_NVFP4, "bw_factor_moe_nvfp4_frac", 0)                                         \
    XX(MOE_EFF_NVFP4, "moe_gemm_eff_nvfp4_frac", 0)                                                \
    XX(MOE_ROWS_HALF_NVFP4, "moe_rows_half_nvfp4_tokens", 0)                                       \
    XX(MOE_TILE_K_NVFP4, "moe_tile_extra_k_nvfp4_elems", 0)                                        \
    XX(LINK_BW, "link_bw_per_dir_bytes_per_s", 0)                                                  \
    XX(N_SM, "n_sm", 1)                                                                            \
    XX(L2, "l2_bytes", 1)                                                                          \
    XX(N_GPUS_PER_NODE, "n_gpus_per_node", 0)                                                      \
    XX(BW_INTERNODE, "bw_internode_per_gpu_bytes_per_s", 0)                                        \
    XX(INTERNODE_LATENCY, "internode_latency_s", 0)                                                \
    XX(GEMM_SMALL_M_ROWS, "gemm_small_m_rows", 0)                                                  \
    XX(GEMM_EFF_SMALL_M, "gemm_eff_small_m_frac", 0)                                               \
    XX(SMEM_PER_SM, "smem_per_sm_bytes", 0)                                                        \
    XX(ATTN_DECODE_BLOCK_BW, "attn_decode_block_bw_bytes_per_s", 0)                                \
    XX(CLIENT_PATH, "client_path_s", 0)

typedef enum sim_hw_field {
#define XX(e, key, req) SIM_HWF_##e,
    SIM_HW_FIELDS(XX)
#undef XX
        SIM_HWF_COUNT
} sim_hw_field;

/* Where a figure came from. */
typedef enum sim_prov {
    SIM_PROV_ABSENT = 0,    /* not given and no default applies (e.g. no fp8 units) */
    SIM_PROV_DATASHEET = 1, /* vendor specification */
    SIM_PROV_MEASURED = 2,  /* a benchmark measured it */
    SIM_PROV_DERIVED = 3,   /* computed from measurements (e.g. kernel tables) */
    SIM_PROV_ESTIMATED = 4, /* an informed estimate written in the profile */
    SIM_PROV_DEFAULT = 5,   /* filled in by sim_hw_apply_defaults() */
    SIM_PROV_COUNT
} sim_prov;

#define SIM_HW_MAX_ALLREDUCE 8
#define SIM_HW_MAX_TILES     16
#define SIM_HW_SOURCE_LEN    256
#define SIM_HW_MAX_FP8_CFG   8

#define SIM_AR_MAX_REGIMES 4

/* One more all-reduce regime: messages of from_bytes or more (up to the next regime's
 * from_bytes) take latency_s + 2(n-1)/n x bytes / bus_bw_bytes_per_s. */
typedef struct sim_ar_regime {
    double from_bytes;
    double latency_s;
    double bus_bw_bytes_per_s;
} sim_ar_regime;

/*
 * Measured all-reduce cost among n_gpus GPUs: t = latency_s + 2(n-1)/n x bytes / bus_bw
 * for messages below regimes[0].from_bytes (all messages when n_regimes is 0). The
 * stack's all-reduce switches kernel or library with the message size (vLLM: one-shot and
 * two-shot custom all-reduce, symmetric memory, NCCL; docs/model.md, "Communication"), so
 * larger messages may follow regimes[0..n_regimes-1], sorted by increasing from_bytes.
 */
typedef struct sim_allreduce {
    int n_gpus;
    double latency_s;
    double bus_bw_bytes_per_s;
    int n_regimes;
    sim_ar_regime regimes[SIM_AR_MAX_REGIMES - 1];
    sim_prov prov;
    char source[SIM_HW_SOURCE_LEN];
} sim_allreduce;

#define SIM_HW_STACK_LEN 128

typedef struct sim_hw {
    char id[64];
    char stack[SIM_HW_STACK_LEN]; /* software stack the figures describe ("vllm 0.19.0, ..."); "" */
    char vendor[32];              /* "nvidia", "amd", ...; "" when the profile names none */
    char name[128];
    char source[SIM_HW_SOURCE_LEN]; /* the profile's overall source note */
    double v[SIM_HWF_COUNT];        /* figure values, SI units (see the JSON key) */
    sim_prov prov[SIM_HWF_COUNT];
    char src[SIM_HWF_COUNT][SIM_HW_SOURCE_LEN];
    int n_allreduce;
    sim_allreduce allreduce[SIM_HW_MAX_ALLREDUCE]; /* sorted by n_gpus */
    /* The collectives of expert and data parallel MoE layers ("alltoall"; docs/model.md,
     * "Expert and data parallelism"): t = latency_s + (n-1)/n x bytes / bus_bw_bytes_per_s
     * with bytes the per-GPU buffer (all-to-all send buffer, all-gather output,
     * reduce-scatter input: nccl-tests' busbw convention); same entry shape as allreduce. */
    int n_alltoall;
    sim_allreduce alltoall[SIM_HW_MAX_ALLREDUCE]; /* sorted by n_gpus */
    int n_tiles;                                  /* candidate GEMM output tiles */
    int tiles[SIM_HW_MAX_TILES][2];               /* {tile_m, tile_n} */
    /*
     * The fp8 scaled-mm library's kernel choice by shape ("gemm_fp8_dispatch"), in order:
     * the first entry with m <= m_max and n <= n_max (0 = no bound) runs the GEMM with
     * output tiles tile_m x tile_n over the m x n output (tokens x outputs, after any
     * operand swap) in clusters of cluster_m x cluster_n tiles. n_fp8_cfg 0: no table.
     */
    int n_fp8_cfg;
    struct sim_fp8_cfg {
        int64_t m_max, n_max;
        int tile_m, tile_n, cluster_m, cluster_n;
    } fp8_cfg[SIM_HW_MAX_FP8_CFG];
} sim_hw;

/*
 * The GEMM kernels a linear layer can run, each with its own figures: 16-bit (bf16/fp16
 * tensor cores; also weight-only schemes that dequantize to 16 bits), per-tensor fp8 (or
 * per-channel: CUTLASS scaled-mm), fp8 with 128 x 128 weight block scales and per-token
 * group activation scales (vLLM's block fp8 linear), fp4 x fp4 with 16-element block
 * scales (NVFP4 on Blackwell).
 */
typedef enum sim_gemm_kind {
    SIM_GEMM_KIND_16 = 0,
    SIM_GEMM_KIND_FP8 = 1,
    SIM_GEMM_KIND_FP8_BLOCK = 2,
    SIM_GEMM_KIND_FP4 = 3,
    SIM_GEMM_KIND_COUNT
} sim_gemm_kind;

/* The figures of one GEMM kind on a profile (sim_hw_gemm_figs). */
typedef struct sim_gemm_figs {
    double peak_flops_per_s; /* dense tensor peak of the kind's math */
    double eff_frac;         /* achieved fraction of it on large GEMMs */
    double bw_factor_frac;   /* weight-streaming rate / STREAM copy */
    double fixed_s;          /* time per kernel beyond the bytes */
    double weight_bytes;     /* bytes per weight element, scales included */
} sim_gemm_figs;

/*
 * Figures of kind on hw. fp8 kinds on a GPU without fp8 units run weight-only on the
 * 16-bit units (vLLM's FP8 Marlin: 16-bit peak and efficiency); fp4 without an fp4 peak
 * runs at the fp8 peak (or 16-bit without fp8 units). Weight bytes: 2, 1, 1 + 4/16384
 * (an fp32 scale per 128 x 128 block), 0.5 + 1/16 (an e4m3 scale per 16 elements).
 */
void sim_hw_gemm_figs(const sim_hw *hw, sim_gemm_kind kind, sim_gemm_figs *out /* OUT */);

/* "bf16", "fp8", "fp8_block", "fp4". */
const char *sim_gemm_kind_name(sim_gemm_kind kind);

/*
 * The fused-MoE kernels an MoE layer's routed experts can run, by the checkpoint's expert
 * weights (docs/model.md, "Fused MoE"), each with its own five figures:
 *   16         bf16/fp16 experts, and weight-only int4/int8 (AWQ, GPTQ): vLLM's Triton
 *              fused_experts (moe_fixed_s, bw_factor_moe_frac, moe_gemm_eff_frac,
 *              moe_rows_half_tokens, moe_tile_extra_k_elems)
 *   fp8        per-tensor fp8 w8a8 (the same kernel; the _fp8 figures)
 *   fp8_block  fp8 with 128 x 128 weight blocks (fused_experts w8a8 block; _fp8_block)
 *   mxfp4      MXFP4 experts (gpt-oss): vLLM's Mxfp4MoEMethod backends, W4A16 (Marlin or
 *              triton_kernels on Hopper) or FlashInfer TRT-LLM on Blackwell (_mxfp4)
 *   nvfp4      NVFP4 experts: FlashInfer TRT-LLM fp4 MoE (_nvfp4)
 * A class without figures of its own takes the nearest one's (hw.c defaults: fp8_block and
 * nvfp4 from fp8, mxfp4 from 16).
 */
typedef enum sim_moe_class {
    SIM_MOE_CLASS_16 = 0,
    SIM_MOE_CLASS_FP8 = 1,
    SIM_MOE_CLASS_FP8_BLOCK = 2,
    SIM_MOE_CLASS_MXFP4 = 3,
    SIM_MOE_CLASS_NVFP4 = 4,
    SIM_MOE_CLASS_COUNT
} sim_moe_class;

/* The figures of one MoE class on a profile (sim_hw_moe_figs). */
typedef struct sim_moe_figs {
    double peak_flops_per_s; /* the peak the efficiency is relative to */
    double eff_frac;         /* moe_gemm_eff: asymptotic grouped-GEMM efficiency */
    double rows_half;        /* r0: rows per expert at half the asymptote */
    double tile_k;           /* k0: extra K-elements of work per output tile */
    double fixed_s;          /* the call's fixed time */
    double bw_factor_frac;   /* the experts' weight-streaming rate / STREAM copy */
    double weight_bytes;     /* bytes per expert weight element, scales included */
} sim_moe_figs;

/*
 * Figures of class cls on hw. Peaks: bf16 for 16 and mxfp4 (W4A16 math; on Blackwell the
 * efficiency is relative to it too), fp8 for fp8 and fp8_block (bf16 without fp8 units),
 * fp4 for nvfp4 (fp8, then bf16, without). Weight bytes per element: 2, 1, 1 + 4/16384,
 * 0.5 + 1/32 (an e8m0 scale per 32), 0.5 + 1/16 (an e4m3 scale per 16).
 */
void sim_hw_moe_figs(const sim_hw *hw, sim_moe_class cls, sim_moe_figs *out /* OUT */);

/* The five figures of an MoE class, in the order sim_hw_moe_field takes them. */
typedef enum sim_moe_fig {
    SIM_MOE_FIG_FIXED = 0, /* moe_fixed[_<cls>]_s */
    SIM_MOE_FIG_BW = 1,    /* bw_factor_moe[_<cls>]_frac */
    SIM_MOE_FIG_EFF = 2,   /* moe_gemm_eff[_<cls>]_frac */
    SIM_MOE_FIG_R0 = 3,    /* moe_rows_half[_<cls>]_tokens */
    SIM_MOE_FIG_K0 = 4,    /* moe_tile_extra_k[_<cls>]_elems */
    SIM_MOE_FIG_COUNT
} sim_moe_fig;

/* The profile figure that is figure k of class cls. */
sim_hw_field sim_hw_moe_field(sim_moe_class cls, sim_moe_fig k);

/* Bytes per expert weight element of class cls, scales included (as sim_moe_figs). */
double sim_moe_class_weight_bytes(sim_moe_class cls);

/* "bf16", "fp8", "fp8_block", "mxfp4", "nvfp4". */
const char *sim_moe_class_name(sim_moe_class cls);

/* JSON key of a figure ("bw_stream_copy_bytes_per_s"). */
const char *sim_hw_field_key(sim_hw_field f);

/* The figure whose JSON key is key, or -1 when no figure has it. */
int sim_hw_field_find(const char *key);

/*
 * The physical range of a figure that `llmstep calibrate --fit` may fit (docs/calibration.md,
 * "Fitting profile figures"): *lo_out < *hi_out, and *scale_out its typical magnitude in the
 * same unit (for prior widths of figures whose value is 0, and for the test "on its bound").
 * Fractions (0, 1.5] (sim_hw_validate's range); kernel fixed times [0, 1 ms] (its cap);
 * attn_decode_seq_head_s [0, 10 us]; attn_prefill_seq_half_tokens [0, 1e5]. Returns 0 for a
 * figure that is not fitted continuously (datasheet peaks, capacities, counts, the 0/1 flag).
 */
int sim_hw_field_fit_range(sim_hw_field f, double *lo_out, double *hi_out, double *scale_out);

/* 1 when the figure may be 0 in a profile: the 0/1 flag, the counts of rows or elements
 * (attn_prefill_seq_half_tokens, gemm_small_m_rows, each MoE class's r0 and k0) whose 0 means
 * "no such effect", and client_path_s (0: no time outside the engine; sim_hw_validate holds
 * it to [0, 1] s). Every other figure must be > 0. */
int sim_hw_field_zero_ok(sim_hw_field f);

/* 1 when the figure is one of an MoE weight class's five fused-MoE figures (sim_moe_fig). */
int sim_hw_field_is_moe(sim_hw_field f);

/* 1 when a profile may lack the figure and a fit (calibrate --fit) may add it: its absence
 * means "no such term" (attn_decode_block_bw_bytes_per_s: no limit from PagedAttention's
 * blocks in flight; client_path_s: no time outside the engine). */
int sim_hw_field_fit_adds(sim_hw_field f);

/* client_path_s, the time a served request spends outside the engine (the benchmark client,
 * HTTP server, tokenizer, detokenizer and streaming; docs/serving.md, "The client path"),
 * added to its TTFT and E2E; 0 when the profile (or its calibration) has none. */
double sim_hw_client_path_s(const sim_hw *hw);

/* 1 when a calibration may set figure f on profile hw: the profile has it, or a fit may add it
 * (sim_hw_field_fit_adds). calibrate --fit and loading a calibration ask the same question. */
int sim_hw_field_fit_may_set(const sim_hw *hw, sim_hw_field f);

/* 1 when the figure must be present in a profile. */
int sim_hw_field_required(sim_hw_field f);

/* "datasheet", "measured", ... */
const char *sim_prov_name(sim_prov p);

/*
 * Fills every absent optional figure with its documented default and marks it
 * SIM_PROV_DEFAULT (docs/hwprofile.md, "Defaults"); PEAK_FP8 stays absent when the
 * GPU has no fp8 units. Returns the number of figures defaulted.
 */
int sim_hw_apply_defaults(sim_hw *hw);

/* Sorts the all-reduce entries by GPU count (a stable insertion sort over at most
 * SIM_HW_MAX_ALLREDUCE entries), moving flags[i], one per entry, along with them. */
void sim_hw_sort_allreduce(sim_hw *hw, int *flags);

/*
 * Cross-field checks after loading: positive finite values, fractions in (0, 1.5],
 * STREAM bandwidth not above the peak, all-reduce entries sorted and unique.
 */
sim_status sim_hw_validate(const sim_hw *hw, struct sim_err *err /* OUT */);

/*
 * Dense tensor peak used for GEMMs in dtype, FLOP/s. fp8 on a GPU without fp8
 * units runs as weight-only fp8 on the fp16 units (vLLM's FP8 Marlin path), so
 * its compute peak is the fp16 peak.
 */
double sim_hw_peak_flops_per_s(const sim_hw *hw, sim_dtype dtype);

/* The GEMM efficiency that goes with sim_hw_peak_flops_per_s(). */
double sim_hw_gemm_eff_frac(const sim_hw *hw, sim_dtype dtype);

/* The same for a GEMM of m rows: gemm_eff_small_m_frac when m is at most gemm_small_m_rows (the
 * small-M class, above), else sim_hw_gemm_eff_frac(). The one place the class is applied: the
 * step's GEMMs (ops.c) and the single-kernel GEMM time (kernels.c, sim_gemm_time). */
double sim_hw_gemm_eff_at(const sim_hw *hw, sim_dtype dtype, double m);

/*
 * All-reduce parameters for n GPUs: the entry for n if measured; otherwise the
 * entry with the nearest n (the latency and bus bandwidth of NVSwitch systems
 * change slowly with n); with no entry at all, the documented default
 * (latency 30 us, bus bandwidth 0.7 x link_bw_per_dir) with SIM_PROV_DEFAULT.
 */
void sim_hw_allreduce_for(const sim_hw *hw, int n, sim_allreduce *out /* OUT */);

/*
 * All-to-all parameters for n GPUs, chosen like sim_hw_allreduce_for: the entry for n, else
 * the nearest n; with no "alltoall" entry at all, the all-reduce default (30 us, bus
 * bandwidth 0.7 x link_bw_per_dir) with SIM_PROV_DEFAULT.
 */
void sim_hw_alltoall_for(const sim_hw *hw, int n, sim_allreduce *out /* OUT */);

/* Time of one all-to-all (or all-gather, reduce-scatter) among n GPUs with the entry a, bytes
 * the per-GPU buffer: t = latency + (n-1)/n x bytes / bus_bw (the regime holding bytes). */
double sim_alltoall_entry_time_s(const sim_allreduce *a, int n, double bytes);

/* Time of one all-reduce of bytes among n GPUs with the entry a: the regime whose range
 * holds bytes (sim_allreduce), t = latency + 2(n-1)/n x bytes / bus_bw. */
double sim_allreduce_entry_time_s(const sim_allreduce *a, int n, double bytes);

/* Achievable ridge point for dtype: peak x gemm_eff / (stream copy x weights factor), FLOP/byte. */
double sim_hw_ridge_flops_per_byte(const sim_hw *hw, sim_dtype dtype);

/* The roofs of a roofline plot (`llmstep plot roofline`, the web planner's step view): HBM at
 * its datasheet peak and achievable (STREAM copy x the weights' access factor), the 16-bit and
 * fp8 tensor peaks and their achievable rates (x gemm_eff_<dtype>_frac), the fp32 vector peak,
 * and the achievable 16-bit ridge point. fp8 figures are 0 when the profile has no fp8 peak. */
typedef struct sim_hw_roofs {
    double hbm_peak_bytes_per_s, hbm_achievable_bytes_per_s;
    double bf16_peak_flops_per_s, bf16_achievable_flops_per_s;
    int has_fp8;
    double fp8_peak_flops_per_s, fp8_achievable_flops_per_s;
    double fp32_peak_flops_per_s;
    double ridge_bf16_flops_per_byte;
} sim_hw_roofs;
void sim_hw_roofs_of(const sim_hw *hw, sim_hw_roofs *out);

#endif
