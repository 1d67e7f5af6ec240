/*
 * kernels.h - the roofline of single kernels: one GEMM, one attention call,
 * one all-reduce. ops.c times every operator of a step with these same
 * functions, and `llmstep validate-kernels` compares them with measured kernel
 * tables, so what is validated is what predicts.
 *
 *   compute_s = flops / (peak x eff x dim_eff)
 *   memory_s  = n_kernels x fixed_s + bytes / (bw_stream_copy x factor)
 *   time_s    = max(compute_s, memory_s)
 *
 * dim_eff is 1 with the flat GEMM model, or the tile and wave quantization
 * efficiency of ../shared/reference/gemm-tile-wave-efficiency.md with the
 * SIM_GEMM_TILE_WAVE model (docs/model.md, "GEMM efficiency").
 *
 * fp8 GEMMs on a profile with a "gemm_fp8_dispatch" table (docs/model.md, "fp8 GEMMs:
 * dispatch tiles and the quantization kernel") are timed as vLLM runs them: a
 * quantization kernel (bf16 activations in, fp8 out: 3 m k bytes at the STREAM Scale
 * rate) followed by the fp8 GEMM, whose efficiency is scaled by the tile, cluster and
 * wave quantization of the kernel the library dispatches for that shape (with either
 * GEMM model) and which reads fp8 activations.
 */
#ifndef SIM_KERNELS_H
#define SIM_KERNELS_H

#include "hw.h"
#include "model.h"

/* What limits a kernel or an operator: its compute, its memory traffic, or communication. */
typedef enum sim_bound {
    SIM_BOUND_NONE = 0, /* the operator does nothing in this step */
    SIM_BOUND_COMPUTE = 1,
    SIM_BOUND_MEMORY = 2,
    SIM_BOUND_COMM = 3,
    SIM_BOUND_COUNT
} sim_bound;

/* "none", "compute", "memory", "comm"; "?" out of range. */
const char *sim_bound_name(sim_bound b);

/* How a GEMM's compute ceiling depends on its shape (docs/model.md, "GEMM efficiency"). */
typedef enum sim_gemm_model {
    SIM_GEMM_FLAT = 0,      /* peak x gemm_eff for every shape */
    SIM_GEMM_TILE_WAVE = 1, /* x tile and wave quantization efficiency of the output shape */
    SIM_GEMM_MODEL_COUNT
} sim_gemm_model;

typedef struct sim_kernel_time {
    double flops, bytes;
    double compute_s, memory_s, time_s;
    sim_bound bound;
} sim_kernel_time;

/* The one roofline rule: fills compute_s, memory_s, time_s and bound of *k from its flops and
 * bytes. n_kernels x fixed_s is added to the memory side. */
void sim_roofline(sim_kernel_time *k, double flops_per_s, double bytes_per_s, double n_kernels,
                  double fixed_s);

/*
 * Tile and wave quantization efficiency of an m x n output on the GPU: the best
 * over the profile's candidate tiles (the library picks a good one) of
 *   tile_eff = m n / (ceil(m/tm) tm ceil(n/tn) tn)
 *   wq_eff   = tiles / (ceil(tiles / n_sm) n_sm)
 * Returns 1 when the profile lists no tiles.
 */
double sim_gemm_dim_eff(const sim_hw *hw, double m, double n);

/*
 * Tile, cluster and wave quantization efficiency of the fp8 kernel the profile's
 * gemm_fp8_dispatch table picks for an m x n output: with the first entry that matches,
 *   gm = ceil(ceil(m/tile_m)/cluster_m) cluster_m, gn likewise over n (a grid is whole
 *   clusters), tile_eff = m n / (gm tile_m gn tile_n),
 *   wq_eff = gm gn / (ceil(gm gn / n_sm) n_sm).
 * Returns 1 when the profile has no table.
 */
double sim_gemm_fp8_dispatch_eff(const sim_hw *hw, double m, double n);

/* Time of the activation quantization kernel before an fp8 GEMM of m x k activations
 * (3 m k bytes at bw_stream_scale), s; 0 when the profile has no gemm_fp8_dispatch table. */
double sim_gemm_fp8_quant_s(const sim_hw *hw, double m, double k);

/* HBM bytes of the GEMM kernel itself (without the quantization kernel): weights k n in
 * dtype, activations m k in and m n out in 16 bits, or m k in fp8 when the fp8 path has a
 * quantization kernel (sim_gemm_fp8_quant_s() > 0). */
double sim_gemm_bytes(const sim_hw *hw, sim_dtype dtype, double m, double n, double k);

/*
 * One GEMM: m tokens x k inputs -> n outputs, weights k x n in dtype, 16-bit
 * activations; model SIM_GEMM_FLAT or SIM_GEMM_TILE_WAVE.
 */
void sim_gemm_time(const sim_hw *hw, sim_dtype dtype, sim_gemm_model model, double m, double n,
                   double k, sim_kernel_time *out /* OUT */);

/* Bytes per activation element a GEMM kind reads after its quantization kernel, scales
 * included: 2 (16-bit), 1 (fp8), 1 + 4/128 (fp8 with an fp32 scale per 1 x 128 group),
 * 0.5 + 1/16 (NVFP4: e2m1 with an e4m3 scale per 16). */
double sim_gemm_act_bytes(sim_gemm_kind kind);

/* HBM bytes of a block-fp8 or fp4 GEMM kernel (without its quantization kernel): weights
 * k n x weight_bytes, activations m k x sim_gemm_act_bytes(kind) in, m n x 2 out. */
double sim_gemm_kind_bytes(const sim_hw *hw, sim_gemm_kind kind, double m, double n, double k);

/* Time of the activation quantization kernel before a GEMM of kind over m x k activations:
 * 16-bit in, the kind's format out ((2 + sim_gemm_act_bytes) m k bytes at bw_stream_scale)
 * for block fp8 and fp4; sim_gemm_fp8_quant_s() for per-tensor fp8; 0 for 16 bits. */
double sim_gemm_act_quant_s(const sim_hw *hw, sim_gemm_kind kind, double m, double k);

/*
 * One GEMM of a kind (hw.h, sim_gemm_kind). 16-bit and per-tensor fp8: sim_gemm_time().
 * Block fp8 and fp4, with the kind's figures (sim_hw_gemm_figs):
 *   bytes     = k n weight_bytes + m k act_bytes + 2 m n
 *   compute_s = 2 m n k / (peak x eff [x tile/wave eff]),  memory_s = fixed + bytes / (copy x f)
 *   time_s    = max(compute_s, memory_s) + sim_gemm_act_quant_s()
 */
void sim_gemm_kind_time(const sim_hw *hw, sim_gemm_kind kind, sim_gemm_model model, double m,
                        double n, double k, sim_kernel_time *out /* OUT */);

/*
 * One paged decode attention call (one layer): batch sequences each attending
 * ctx keys, heads query heads and kv_heads KV heads of head_dim on this GPU.
 */
void sim_attn_decode_time(const sim_hw *hw, double batch, double ctx, double heads, double kv_heads,
                          double head_dim, double kv_bytes, sim_kernel_time *out /* OUT */);

/* One causal prefill attention call (one layer) over batch prompts of seq tokens. */
void sim_attn_prefill_time(const sim_hw *hw, double batch, double seq, double heads,
                           double kv_heads, double head_dim, sim_kernel_time *out /* OUT */);

/*
 * Fused MoE (vLLM's Triton fused_experts, docs/model.md "Fused MoE"): the routed rows
 * (token, expert pairs) are sorted by expert and each expert's rows padded to a multiple of
 * BLOCK_SIZE_M (moe_align_block_size); a grouped GEMM w13 (gate and up, d -> 2F), the
 * activation, a grouped GEMM w2 (F -> d) and the top-k sum run over the touched experts only.
 * One MoE layer on one GPU:
 *   bytes     = touched x weight_bytes_per_expert + (rows (3 d + 6 F) + tokens d) x 2
 *   memory_s  = moe_fixed_s + bytes / (copy x bw_factor_moe_frac)
 *   compute_s = 2 R [3 d F (1 + r0 / r_e) + k0 (2 F + d)] / (peak x moe_gemm_eff_frac)
 *   time_s    = max(compute_s, memory_s)
 * with R = rows_padded, r_e = R / touched (rows of a touched expert), r0 =
 * moe_rows_half_tokens (the grouped GEMM's rate ramps with the rows an expert gets),
 * k0 = moe_tile_extra_k_elems (work per output tile that does not scale with the
 * K-loop: prologue, epilogue, routing-weight scaling), each figure that of the experts'
 * weight class cls (hw.h, sim_hw_moe_figs: its peak and its five figures; the same form for
 * the MXFP4 and NVFP4 kernels, with their own figures). flops (OUT) are the unpadded
 * 2 rows x 3 d F.
 */
typedef struct sim_moe_shape {
    double tokens;       /* tokens entering the layer */
    double rows;         /* routed rows: tokens x top-k */
    double rows_padded;  /* sum over touched experts of ceil(rows_e / BLOCK_SIZE_M) x it */
    double touched;      /* experts that receive at least one row */
    double d;            /* hidden size */
    double f;            /* expert intermediate size on this GPU (F / tp) */
    double weight_bytes; /* one expert's w13 and w2 on this GPU, bytes */
} sim_moe_shape;

/*
 * Expected number of distinct experts that n_tokens tokens touch when each picks
 * k of E experts uniformly: E x (1 - (1 - k/E)^n_tokens). docs/model.md, "MoE".
 */
double sim_moe_expected_experts(double n_experts, double k, double n_tokens);

/* BLOCK_SIZE_M of vLLM's default fused-MoE config for bf16 and per-tensor fp8: 16 when the
 * tokens M <= E experts, else 64 (fused_moe.py get_default_config). */
double sim_moe_block_m(double tokens, double n_experts);

/*
 * Expected padded rows when each of the tokens picks topk of n_experts experts uniformly:
 * touched = sim_moe_expected_experts(); a touched expert's rows padded to block_m,
 *   rows_padded = max(touched x block_m, tokens x topk + touched (block_m - 1) / 2)
 * (one block for every touched expert; half a block of padding on average when experts get
 * many rows).
 */
double sim_moe_padded_rows_random(double n_experts, double topk, double tokens, double block_m);

void sim_fused_moe_time(const sim_hw *hw, sim_moe_class cls, const sim_moe_shape *s,
                        sim_kernel_time *out /* OUT */);

/* One all-reduce of bytes among n GPUs (n >= 2): latency + 2 (n-1)/n bytes / bus_bw within
 * one node (n <= n_gpus_per_node); across k = n / g nodes of g GPUs, the intra-node all-reduce
 * of g GPUs + 2 (k-1) internode_latency + 2 (k-1)/k x (bytes / g) / bw_internode_per_gpu. */
double sim_allreduce_time_s(const sim_hw *hw, int n, double bytes);

/*
 * One all-to-all, all-gather or reduce-scatter among n GPUs (n >= 2) that sit stride GPUs
 * apart (a DP group: stride = tp x pp), bytes the per-GPU buffer (docs/model.md, "Expert and
 * data parallelism"). m = min(n, max(1, g / stride)) members share a node of g GPUs; each GPU
 * exchanges (m-1)/n of the buffer over NVLink and (n-m)/n over its NIC:
 *   t = [m >= 2] (lat_a2a(m) + (m-1)/n x bytes / bus_bw_a2a(m))
 *     + [n > m] ((n/m - 1) internode_latency + (n-m)/n x bytes / bw_internode_per_gpu)
 * which is the profile's all-to-all entry, latency + (n-1)/n x bytes / bus_bw, within a node.
 */
double sim_alltoall_time_s(const sim_hw *hw, int n, int stride, double bytes);

#endif
