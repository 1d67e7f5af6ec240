/*
 * hw.c - defaults, checks and derived ceilings of a sim_hw.
 * The defaults and why: docs/hwprofile.md, "Defaults".
 */
#include "hw.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "err.h"

static const char *const field_keys[SIM_HWF_COUNT] = {
#define XX(e, key, req) key,
    SIM_HW_FIELDS(XX)
#undef XX
};

static const int field_req[SIM_HWF_COUNT] = {
#define XX(e, key, req) req,
    SIM_HW_FIELDS(XX)
#undef XX
};

static const char *const prov_names[SIM_PROV_COUNT] = {"absent",  "datasheet", "measured",
                                                       "derived", "estimated", "default"};

/* STREAM copy over datasheet peak on H100 SXM, H200, A100 80GB, MI300X: 0.78-0.89 (hardware.md). */
#define DEFAULT_STREAM_OVER_PEAK_FRAC 0.85
/* Best achievable dense GEMM over peak (MAMF, ml-engineering): 0.51 (MI300X) to 0.87 (A100). */
#define DEFAULT_GEMM_EFF_FRAC 0.70
/* PCIe Gen4 x16, one direction: the link of a GPU without NVLink or xGMI. */
#define DEFAULT_LINK_BW_BYTES_PER_S 32e9
#define DEFAULT_GPUS_PER_NODE       8.0
/* One 200 Gb/s (HDR / 200G Ethernet) NIC per GPU, one direction: the lesser of the DGX
 * fabrics (A100: HDR 200 Gb/s, H100/H200/B200: NDR 400 Gb/s per GPU). */
#define DEFAULT_INTERNODE_BW_BYTES_PER_S 25e9
/* Per inter-node hop of a ring step: NCCL's tuning model puts 0.9-6.6 us per network hop
 * (Ring LL..Simple) on top of a 3.6-8.4 us base (src/graph/tuning.cc, hwLat/baseLat). */
#define DEFAULT_INTERNODE_LATENCY_S 5e-6
/* Small-message all-reduce time on NVSwitch systems, 31-44 us (hardware.md). */
#define DEFAULT_ALLREDUCE_LATENCY_S 30e-6
/* nccl busbw over per-direction link bandwidth for a ring (A100: 232/300). */
#define DEFAULT_ALLREDUCE_BUS_OVER_LINK_FRAC 0.7

const char *sim_hw_field_key(sim_hw_field f)
{
    assert((int)f >= 0 && f < SIM_HWF_COUNT);
    return field_keys[f];
}

int sim_hw_field_find(const char *key)
{
    for (int f = 0; f < SIM_HWF_COUNT; f++)
        if (strcmp(field_keys[f], key) == 0)
            return f;
    return -1;
}

/* The five figures of each MoE class (hw.h, sim_moe_class): fixed time, weights factor,
 * efficiency, r0, k0. */
static const sim_hw_field moe_figs[SIM_MOE_CLASS_COUNT][SIM_MOE_FIG_COUNT] = {
    [SIM_MOE_CLASS_16] = {SIM_HWF_MOE_FIXED, SIM_HWF_BW_FACTOR_MOE, SIM_HWF_MOE_EFF,
                          SIM_HWF_MOE_ROWS_HALF, SIM_HWF_MOE_TILE_K},
    [SIM_MOE_CLASS_FP8] = {SIM_HWF_MOE_FIXED_FP8, SIM_HWF_BW_FACTOR_MOE_FP8, SIM_HWF_MOE_EFF_FP8,
                           SIM_HWF_MOE_ROWS_HALF_FP8, SIM_HWF_MOE_TILE_K_FP8},
    [SIM_MOE_CLASS_FP8_BLOCK] = {SIM_HWF_MOE_FIXED_FP8_BLOCK, SIM_HWF_BW_FACTOR_MOE_FP8_BLOCK,
                                 SIM_HWF_MOE_EFF_FP8_BLOCK, SIM_HWF_MOE_ROWS_HALF_FP8_BLOCK,
                                 SIM_HWF_MOE_TILE_K_FP8_BLOCK},
    [SIM_MOE_CLASS_MXFP4] = {SIM_HWF_MOE_FIXED_MXFP4, SIM_HWF_BW_FACTOR_MOE_MXFP4,
                             SIM_HWF_MOE_EFF_MXFP4, SIM_HWF_MOE_ROWS_HALF_MXFP4,
                             SIM_HWF_MOE_TILE_K_MXFP4},
    [SIM_MOE_CLASS_NVFP4] = {SIM_HWF_MOE_FIXED_NVFP4, SIM_HWF_BW_FACTOR_MOE_NVFP4,
                             SIM_HWF_MOE_EFF_NVFP4, SIM_HWF_MOE_ROWS_HALF_NVFP4,
                             SIM_HWF_MOE_TILE_K_NVFP4},
};

sim_hw_field sim_hw_moe_field(sim_moe_class cls, sim_moe_fig k)
{
    assert((unsigned)cls < SIM_MOE_CLASS_COUNT && (unsigned)k < SIM_MOE_FIG_COUNT);
    return moe_figs[cls][k];
}

/* The peak a class's kernel computes at: fp4 units for NVFP4, fp8 units for the fp8 classes
 * and NVFP4 without fp4 units, bf16 otherwise (a W4A16 kernel, or a GPU without the units). */
static double moe_class_peak(const sim_hw *hw, sim_moe_class c)
{
    const int has8 = hw->prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT;
    const int has4 = has8 && hw->prov[SIM_HWF_PEAK_FP4] != SIM_PROV_ABSENT;
    const int fp8_math =
        c == SIM_MOE_CLASS_FP8 || c == SIM_MOE_CLASS_FP8_BLOCK || c == SIM_MOE_CLASS_NVFP4;
    if (c == SIM_MOE_CLASS_NVFP4 && has4)
        return hw->v[SIM_HWF_PEAK_FP4];
    if (fp8_math && has8)
        return hw->v[SIM_HWF_PEAK_FP8];
    return hw->v[SIM_HWF_PEAK_BF16];
}

/* Which of the five MoE figures f is, or -1 for another figure. */
static int moe_fig_role(sim_hw_field f)
{
    for (int c = 0; c < SIM_MOE_CLASS_COUNT; c++)
        for (int k = 0; k < SIM_MOE_FIG_COUNT; k++)
            if (moe_figs[c][k] == f)
                return k;
    return -1;
}

int sim_hw_field_zero_ok(sim_hw_field f)
{
    const int role = moe_fig_role(f);
    return f == SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD || f == SIM_HWF_ATTN_PREFILL_SEQ_HALF ||
           f == SIM_HWF_GEMM_SMALL_M_ROWS || f == SIM_HWF_CLIENT_PATH || role == SIM_MOE_FIG_R0 ||
           role == SIM_MOE_FIG_K0;
}

int sim_hw_field_is_moe(sim_hw_field f) { return moe_fig_role(f) >= 0; }

int sim_hw_field_fit_adds(sim_hw_field f)
{
    return f == SIM_HWF_ATTN_DECODE_BLOCK_BW || f == SIM_HWF_CLIENT_PATH;
}

double sim_hw_client_path_s(const sim_hw *hw)
{
    /* As attn_decode_block_bw_bytes_per_s: an absent figure is 0 in v, and a fit's trial sets
     * v alone. */
    const double c = hw->v[SIM_HWF_CLIENT_PATH];
    return c > 0.0 ? c : 0.0;
}

int sim_hw_field_fit_may_set(const sim_hw *hw, sim_hw_field f)
{
    return hw->prov[f] != SIM_PROV_ABSENT || sim_hw_field_fit_adds(f);
}

int sim_hw_field_fit_range(sim_hw_field f, double *lo_out, double *hi_out, double *scale_out)
{
    double lo = 0.0, hi, scale;
    switch (f) {
    case SIM_HWF_GEMM_EFF_FP16:
    case SIM_HWF_GEMM_EFF_FP8:
    case SIM_HWF_GEMM_EFF_SMALL_M:
    case SIM_HWF_ATTN_EFF:
    case SIM_HWF_BW_FACTOR_WEIGHTS:
    case SIM_HWF_BW_FACTOR_KV:
    case SIM_HWF_BW_FACTOR_MIXED:
    case SIM_HWF_BW_FACTOR_WEIGHTS_FP8:
    case SIM_HWF_BW_FACTOR_KV_FP8:
        hi = 1.5; /* sim_hw_validate: fractions in (0, 1.5] */
        scale = 0.1;
        break;
    case SIM_HWF_GEMM_FIXED:
    case SIM_HWF_ATTN_FIXED:
    case SIM_HWF_ELEMWISE_FIXED:
    case SIM_HWF_GEMM_FIXED_FP8:
    case SIM_HWF_ATTN_PREFILL_FIXED:
        hi = 1e-3; /* sim_hw_validate: a fixed time per kernel above 1 ms is refused */
        scale = 1e-5;
        break;
    case SIM_HWF_ATTN_DECODE_SEQ_HEAD:
        hi = 1e-5;
        scale = 1e-8;
        break;
    case SIM_HWF_ATTN_PREFILL_SEQ_HALF:
        hi = 1e5;
        scale = 1e3;
        break;
    case SIM_HWF_ATTN_DECODE_BLOCK_BW:
        /* A thread block's bytes in flight over the memory latency: 1 KiB to 100 KiB over
         * 0.3-3 us. The start and prior of an absent figure (meas_fig.c) is 10 x scale. */
        lo = 1e8;
        hi = 1e11;
        scale = 1e9;
        break;
    case SIM_HWF_CLIENT_PATH:
        /* A request's way through the HTTP server, tokenizer and streaming: milliseconds on
         * a lightly loaded host (vLLM PR #54628: 8.4-12.2 ms), bounded well above that. */
        hi = 0.2;
        scale = 1e-3;
        break;
    default:
        /* An MoE class's efficiency, weights factor and fixed time (r0 and k0 are not). */
        switch (moe_fig_role(f)) {
        case SIM_MOE_FIG_EFF:
        case SIM_MOE_FIG_BW:
            hi = 1.5;
            scale = 0.1;
            break;
        case SIM_MOE_FIG_FIXED:
            hi = 1e-3;
            scale = 1e-5;
            break;
        default:
            return 0;
        }
    }
    *lo_out = lo;
    *hi_out = hi;
    *scale_out = scale;
    return 1;
}

int sim_hw_field_required(sim_hw_field f)
{
    assert((int)f >= 0 && f < SIM_HWF_COUNT);
    return field_req[f];
}

const char *sim_prov_name(sim_prov p)
{
    if ((int)p < 0 || p >= SIM_PROV_COUNT)
        return "?";
    return prov_names[p];
}

static int set_default(sim_hw *hw, sim_hw_field f, double v, const char *why)
{
    if (hw->prov[f] != SIM_PROV_ABSENT)
        return 0;
    hw->v[f] = v;
    hw->prov[f] = SIM_PROV_DEFAULT;
    char *d = hw->src[f];
    size_t i = 0;
    for (; why[i] && i + 1 < SIM_HW_SOURCE_LEN; i++)
        d[i] = why[i];
    d[i] = '\0';
    return 1;
}

/*
 * The defaults of absent figures, applied in this order (a default may be another figure's
 * value, set earlier): value = factor x the figure `from`, or factor alone when from is
 * SIM_HWF_COUNT. docs/hwprofile.md, "Defaults".
 */
static const struct hw_default {
    sim_hw_field f, from;
    double factor;
    const char *why;
} hw_defaults[] = {
    {SIM_HWF_BW_STREAM_COPY, SIM_HWF_BW_HBM_PEAK, DEFAULT_STREAM_OVER_PEAK_FRAC,
     "default: 0.85 x bw_hbm_peak_bytes_per_s"},
    {SIM_HWF_BW_STREAM_SCALE, SIM_HWF_BW_STREAM_COPY, 1.0, "default: = bw_stream_copy_bytes_per_s"},
    {SIM_HWF_BW_STREAM_ADD, SIM_HWF_BW_STREAM_COPY, 1.0, "default: = bw_stream_copy_bytes_per_s"},
    {SIM_HWF_BW_STREAM_TRIAD, SIM_HWF_BW_STREAM_COPY, 1.0, "default: = bw_stream_copy_bytes_per_s"},
    {SIM_HWF_GEMM_EFF_FP16, SIM_HWF_COUNT, DEFAULT_GEMM_EFF_FRAC, "default: 0.70"},
    /* gemm_eff_fp8_frac only on GPUs with an fp8 peak (sim_hw_apply_defaults) */
    {SIM_HWF_GEMM_EFF_FP8, SIM_HWF_COUNT, DEFAULT_GEMM_EFF_FRAC, "default: 0.70"},
    {SIM_HWF_ATTN_EFF, SIM_HWF_GEMM_EFF_FP16, 1.0, "default: = gemm_eff_fp16_frac"},
    {SIM_HWF_BW_FACTOR_WEIGHTS, SIM_HWF_COUNT, 1.0, "default: 1 (STREAM copy rate)"},
    {SIM_HWF_BW_FACTOR_KV, SIM_HWF_COUNT, 1.0, "default: 1 (STREAM copy rate)"},
    {SIM_HWF_BW_FACTOR_MIXED, SIM_HWF_COUNT, 1.0, "default: 1 (STREAM copy rate)"},
    {SIM_HWF_GEMM_FIXED, SIM_HWF_COUNT, 0.0, "default: 0 (no fixed time per kernel)"},
    {SIM_HWF_ATTN_FIXED, SIM_HWF_COUNT, 0.0, "default: 0 (no fixed time per kernel)"},
    {SIM_HWF_ELEMWISE_FIXED, SIM_HWF_COUNT, 0.0, "default: 0 (no fixed time per kernel)"},
    /* What cudaMemGetInfo reports as total; vLLM's gpu_memory_utilization is a share of it. */
    {SIM_HWF_MEM_CUDA_TOTAL, SIM_HWF_MEM_CAPACITY, 1.0,
     "default: = mem_capacity_bytes (CUDA-reported total not measured)"},
    /* fp8 figures fall back to the 16-bit ones, which is what the model did before they
     * existed. */
    {SIM_HWF_BW_FACTOR_WEIGHTS_FP8, SIM_HWF_BW_FACTOR_WEIGHTS, 1.0,
     "default: = bw_factor_weights_frac"},
    {SIM_HWF_GEMM_FIXED_FP8, SIM_HWF_GEMM_FIXED, 1.0, "default: = gemm_fixed_s"},
    {SIM_HWF_BW_FACTOR_KV_FP8, SIM_HWF_BW_FACTOR_KV, 1.0, "default: = bw_factor_kv_gather_frac"},
    /* Block-scaled fp8 and fp4 fall back to the per-tensor fp8 figures (their efficiencies
     * only where the GPU has the units: sim_hw_apply_defaults). */
    {SIM_HWF_GEMM_EFF_FP8_BLOCK, SIM_HWF_GEMM_EFF_FP8, 1.0, "default: = gemm_eff_fp8_frac"},
    {SIM_HWF_BW_FACTOR_WEIGHTS_FP8_BLOCK, SIM_HWF_BW_FACTOR_WEIGHTS_FP8, 1.0,
     "default: = bw_factor_weights_fp8_frac"},
    {SIM_HWF_GEMM_FIXED_FP8_BLOCK, SIM_HWF_GEMM_FIXED_FP8, 1.0, "default: = gemm_fixed_fp8_s"},
    {SIM_HWF_GEMM_EFF_FP4, SIM_HWF_GEMM_EFF_FP8, 1.0, "default: = gemm_eff_fp8_frac"},
    {SIM_HWF_BW_FACTOR_WEIGHTS_FP4, SIM_HWF_BW_FACTOR_WEIGHTS_FP8, 1.0,
     "default: = bw_factor_weights_fp8_frac"},
    {SIM_HWF_GEMM_FIXED_FP4, SIM_HWF_GEMM_FIXED_FP8, 1.0, "default: = gemm_fixed_fp8_s"},
    {SIM_HWF_GEMM_SMALL_M_ROWS, SIM_HWF_COUNT, 0.0,
     "default: 0 (16-bit GEMMs at gemm_eff_fp16_frac at every M)"},
    {SIM_HWF_GEMM_EFF_SMALL_M, SIM_HWF_GEMM_EFF_FP16, 1.0, "default: = gemm_eff_fp16_frac"},
    {SIM_HWF_ATTN_DECODE_SEQ_HEAD, SIM_HWF_COUNT, 0.0,
     "default: 0 (no time per sequence and head)"},
    {SIM_HWF_ATTN_PREFILL_FIXED, SIM_HWF_COUNT, 0.0,
     "default: 0 (no fixed time on the prefill compute side)"},
    {SIM_HWF_ATTN_PREFILL_SEQ_HALF, SIM_HWF_COUNT, 0.0,
     "default: 0 (prefill attention at attn_eff_frac at every length)"},
    {SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD, SIM_HWF_COUNT, 0.0,
     "default: 0 (decode attention reads each KV head once for its query group, as "
     "FlashAttention and FlashInfer do)"},
    /* Fused MoE (kernels.h): without figures from a moe_perf table, the plain GEMM roofline
     * of the two grouped GEMMs (their fixed times, the weights' streaming rate and the GEMM
     * efficiency; no row ramp, no per-tile term). fp8 falls back to the 16-bit figures but
     * streams at the fp8 weights' rate. */
    {SIM_HWF_MOE_FIXED, SIM_HWF_GEMM_FIXED, 2.0, "default: 2 x gemm_fixed_s (two grouped GEMMs)"},
    {SIM_HWF_BW_FACTOR_MOE, SIM_HWF_BW_FACTOR_WEIGHTS, 1.0, "default: = bw_factor_weights_frac"},
    {SIM_HWF_MOE_EFF, SIM_HWF_GEMM_EFF_FP16, 1.0, "default: = gemm_eff_fp16_frac"},
    {SIM_HWF_MOE_ROWS_HALF, SIM_HWF_COUNT, 0.0, "default: 0 (no ramp with rows per expert)"},
    {SIM_HWF_MOE_TILE_K, SIM_HWF_COUNT, 0.0, "default: 0 (no per-tile extra work)"},
    {SIM_HWF_MOE_FIXED_FP8, SIM_HWF_GEMM_FIXED_FP8, 2.0,
     "default: 2 x gemm_fixed_fp8_s (two grouped GEMMs)"},
    {SIM_HWF_BW_FACTOR_MOE_FP8, SIM_HWF_BW_FACTOR_WEIGHTS_FP8, 1.0,
     "default: = bw_factor_weights_fp8_frac"},
    {SIM_HWF_MOE_EFF_FP8, SIM_HWF_MOE_EFF, 1.0, "default: = moe_gemm_eff_frac"},
    {SIM_HWF_MOE_ROWS_HALF_FP8, SIM_HWF_MOE_ROWS_HALF, 1.0,
     "default: moe_rows_half_tokens x the classes' (bytes x peak) ratio: the same time per weight "
     "byte (docs/model.md, Fused MoE)"},
    {SIM_HWF_MOE_TILE_K_FP8, SIM_HWF_MOE_TILE_K, 1.0, "default: = moe_tile_extra_k_elems"},
    /* The other classes (hw.h, sim_moe_class): block fp8 and NVFP4 take the fp8 set, MXFP4
     * the 16-bit set (a W4A16 kernel), until a table of their kernel gives them their own. */
    {SIM_HWF_MOE_FIXED_FP8_BLOCK, SIM_HWF_MOE_FIXED_FP8, 1.0, "default: = moe_fixed_fp8_s"},
    {SIM_HWF_BW_FACTOR_MOE_FP8_BLOCK, SIM_HWF_BW_FACTOR_MOE_FP8, 1.0,
     "default: = bw_factor_moe_fp8_frac"},
    {SIM_HWF_MOE_EFF_FP8_BLOCK, SIM_HWF_MOE_EFF_FP8, 1.0, "default: = moe_gemm_eff_fp8_frac"},
    {SIM_HWF_MOE_ROWS_HALF_FP8_BLOCK, SIM_HWF_MOE_ROWS_HALF_FP8, 1.0,
     "default: moe_rows_half_fp8_tokens x the classes' (bytes x peak) ratio: the same time per "
     "weight byte (docs/model.md, Fused MoE)"},
    {SIM_HWF_MOE_TILE_K_FP8_BLOCK, SIM_HWF_MOE_TILE_K_FP8, 1.0,
     "default: = moe_tile_extra_k_fp8_elems"},
    {SIM_HWF_MOE_FIXED_MXFP4, SIM_HWF_MOE_FIXED, 1.0, "default: = moe_fixed_s"},
    {SIM_HWF_BW_FACTOR_MOE_MXFP4, SIM_HWF_BW_FACTOR_MOE, 1.0, "default: = bw_factor_moe_frac"},
    {SIM_HWF_MOE_EFF_MXFP4, SIM_HWF_MOE_EFF, 1.0, "default: = moe_gemm_eff_frac"},
    {SIM_HWF_MOE_ROWS_HALF_MXFP4, SIM_HWF_MOE_ROWS_HALF, 1.0,
     "default: moe_rows_half_tokens x the classes' (bytes x peak) ratio: the same time per weight "
     "byte (docs/model.md, Fused MoE)"},
    {SIM_HWF_MOE_TILE_K_MXFP4, SIM_HWF_MOE_TILE_K, 1.0, "default: = moe_tile_extra_k_elems"},
    {SIM_HWF_MOE_FIXED_NVFP4, SIM_HWF_MOE_FIXED_FP8, 1.0, "default: = moe_fixed_fp8_s"},
    {SIM_HWF_BW_FACTOR_MOE_NVFP4, SIM_HWF_BW_FACTOR_MOE_FP8, 1.0,
     "default: = bw_factor_moe_fp8_frac"},
    {SIM_HWF_MOE_EFF_NVFP4, SIM_HWF_MOE_EFF_FP8, 1.0, "default: = moe_gemm_eff_fp8_frac"},
    {SIM_HWF_MOE_ROWS_HALF_NVFP4, SIM_HWF_MOE_ROWS_HALF_FP8, 1.0,
     "default: moe_rows_half_fp8_tokens x the classes' (bytes x peak) ratio: the same time per "
     "weight byte (docs/model.md, Fused MoE)"},
    {SIM_HWF_MOE_TILE_K_NVFP4, SIM_HWF_MOE_TILE_K_FP8, 1.0,
     "default: = moe_tile_extra_k_fp8_elems"},
    {SIM_HWF_LINK_BW, SIM_HWF_COUNT, DEFAULT_LINK_BW_BYTES_PER_S,
     "default: PCIe Gen4 x16, 32e9 B/s per direction"},
    {SIM_HWF_N_GPUS_PER_NODE, SIM_HWF_COUNT, DEFAULT_GPUS_PER_NODE,
     "default: 8 (an HGX/DGX or OAM baseboard)"},
    {SIM_HWF_BW_INTERNODE, SIM_HWF_COUNT, DEFAULT_INTERNODE_BW_BYTES_PER_S,
     "default: one 200 Gb/s NIC per GPU, 25e9 B/s per direction"},
    {SIM_HWF_INTERNODE_LATENCY, SIM_HWF_COUNT, DEFAULT_INTERNODE_LATENCY_S,
     "default: 5 us per inter-node ring hop (NCCL tuning.cc network hwLat + baseLat, estimate)"},
};

/* The factor on a class's defaulted r0 (moe_rows_half_<cls>_tokens taken from the class it
 * falls back to): the term r0 / r_e of sim_fused_moe_time is a re-read of each touched
 * expert's weights, so it keeps its time per weight byte, r0 / (peak eff) / bytes per element,
 * and r0 scales by the classes' (bytes per element x peak) ratio (their efficiencies are equal
 * when defaulted). The tables show it: fitted r0 / (peak eff) per weight byte agrees between
 * bf16 and fp8 (and FlashInfer NVFP4) within 25% on every GPU with both fits, where per
 * element it differs by 2x (docs/model.md, "Fused MoE"). 1 when f is not such an r0. */
static double moe_r0_scale(const sim_hw *hw, sim_hw_field f, sim_hw_field from)
{
    int c = -1, s = -1;
    for (int k = 0; k < SIM_MOE_CLASS_COUNT; k++) {
        if (moe_figs[k][SIM_MOE_FIG_R0] == f)
            c = k;
        if (moe_figs[k][SIM_MOE_FIG_R0] == from)
            s = k;
    }
    if (c < 0 || s < 0)
        return 1.0;
    const double den =
        sim_moe_class_weight_bytes((sim_moe_class)s) * moe_class_peak(hw, (sim_moe_class)s);
    return den > 0.0 ? sim_moe_class_weight_bytes((sim_moe_class)c) *
                           moe_class_peak(hw, (sim_moe_class)c) / den
                     : 1.0;
}

int sim_hw_apply_defaults(sim_hw *hw)
{
    int n = 0;
    for (size_t i = 0; i < sizeof(hw_defaults) / sizeof(hw_defaults[0]); i++) {
        const struct hw_default *d = &hw_defaults[i];
        if ((d->f == SIM_HWF_GEMM_EFF_FP8 || d->f == SIM_HWF_GEMM_EFF_FP8_BLOCK) &&
            hw->prov[SIM_HWF_PEAK_FP8] == SIM_PROV_ABSENT)
            continue;
        if (d->f == SIM_HWF_GEMM_EFF_FP4 && (hw->prov[SIM_HWF_PEAK_FP4] == SIM_PROV_ABSENT ||
                                             hw->prov[SIM_HWF_GEMM_EFF_FP8] == SIM_PROV_ABSENT))
            continue;
        const double v = d->from == SIM_HWF_COUNT
                             ? d->factor
                             : d->factor * moe_r0_scale(hw, d->f, d->from) * hw->v[d->from];
        n += set_default(hw, d->f, v, d->why);
    }
    return n;
}

/* Checks one list of collective entries (sim_hw_validate). */
static sim_status check_collective(const sim_allreduce *entries, int n, const char *list,
                                   struct sim_err *err)
{
    for (int i = 0; i < n; i++) {
        const sim_allreduce *a = &entries[i];
        if (a->n_gpus < 2 || !isfinite(a->latency_s) || a->latency_s < 0.0 ||
            !isfinite(a->bus_bw_bytes_per_s) || a->bus_bw_bytes_per_s <= 0.0) {
            sim_errf(err, "%s[%d]: needs n_gpus >= 2, latency_s >= 0, bus bandwidth > 0", list, i);
            return SIM_ERANGE;
        }
        if (a->n_regimes < 0 || a->n_regimes > SIM_AR_MAX_REGIMES - 1) {
            sim_errf(err, "%s[%d].regimes: at most %d entries", list, i, SIM_AR_MAX_REGIMES - 1);
            return SIM_ERANGE;
        }
        for (int k = 0; k < a->n_regimes; k++) {
            const sim_ar_regime *g = &a->regimes[k];
            if (!isfinite(g->from_bytes) || g->from_bytes <= 0.0 || !isfinite(g->latency_s) ||
                g->latency_s < 0.0 || !isfinite(g->bus_bw_bytes_per_s) ||
                g->bus_bw_bytes_per_s <= 0.0) {
                sim_errf(err,
                         "%s[%d].regimes[%d]: needs from_bytes > 0, latency_s >= 0, bus "
                         "bandwidth > 0",
                         list, i, k);
                return SIM_ERANGE;
            }
            if (k > 0 && g->from_bytes <= a->regimes[k - 1].from_bytes) {
                sim_errf(err,
                         "%s[%d].regimes[%d]: from_bytes must increase strictly (got %.17g "
                         "after %.17g)",
                         list, i, k, g->from_bytes, a->regimes[k - 1].from_bytes);
                return SIM_EINVAL;
            }
        }
        if (i > 0 && a->n_gpus <= entries[i - 1].n_gpus) {
            sim_errf(err, "%s[%d]: n_gpus must increase strictly (got %d after %d)", list, i,
                     a->n_gpus, entries[i - 1].n_gpus);
            return SIM_EINVAL;
        }
    }
    return SIM_OK;
}

sim_status sim_hw_validate(const sim_hw *hw, struct sim_err *err)
{
    for (int f = 0; f < SIM_HWF_COUNT; f++) {
        if (hw->prov[f] == SIM_PROV_ABSENT) {
            if (field_req[f]) {
                sim_errf(err, "%s: required figure missing", field_keys[f]);
                return SIM_EINVAL;
            }
            continue;
        }
        int fixed = f == SIM_HWF_GEMM_FIXED || f == SIM_HWF_ATTN_FIXED ||
                    f == SIM_HWF_ELEMWISE_FIXED || f == SIM_HWF_GEMM_FIXED_FP8 ||
                    f == SIM_HWF_GEMM_FIXED_FP8_BLOCK || f == SIM_HWF_GEMM_FIXED_FP4 ||
                    f == SIM_HWF_ATTN_DECODE_SEQ_HEAD || f == SIM_HWF_ATTN_PREFILL_FIXED ||
                    moe_fig_role((sim_hw_field)f) == SIM_MOE_FIG_FIXED ||
                    f == SIM_HWF_INTERNODE_LATENCY;
        /* A behaviour of the stack's decode kernel: 0 or 1. */
        if (f == SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD) {
            if (hw->v[f] != 0.0 && hw->v[f] != 1.0) {
                sim_errf(err, "%s: must be 0 or 1", field_keys[f]);
                return SIM_ERANGE;
            }
            continue;
        }
        /* A time per request outside the engine: 0 (none) up to 1 s. */
        if (f == SIM_HWF_CLIENT_PATH) {
            if (!isfinite(hw->v[f]) || hw->v[f] < 0.0 || hw->v[f] > 1.0) {
                sim_errf(err, "%s: must be a finite number in [0, 1] s", field_keys[f]);
                return SIM_ERANGE;
            }
            continue;
        }
        /* A count of tokens (rows) or elements, 0 allowed, not a time. */
        if (sim_hw_field_zero_ok((sim_hw_field)f)) {
            if (!isfinite(hw->v[f]) || hw->v[f] < 0.0 || hw->v[f] > 1e6) {
                sim_errf(err, "%s: must be a finite number in [0, 1e6]", field_keys[f]);
                return SIM_ERANGE;
            }
            continue;
        }
        if (!isfinite(hw->v[f]) || hw->v[f] < 0.0 || (!fixed && hw->v[f] == 0.0)) {
            sim_errf(err, "%s: must be a finite number > 0", field_keys[f]);
            return SIM_ERANGE;
        }
        /* A fixed time per kernel above 1 ms is a unit mistake (us written as s). */
        if (fixed && hw->v[f] > 1e-3) {
            sim_errf(err, "%s: must be at most 1e-3 s per kernel", field_keys[f]);
            return SIM_ERANGE;
        }
    }
    /* Physical ranges (docs/limits.md): a peak, bandwidth or memory far outside them is a unit
     * mistake, and a tiny positive one makes step times overflow to inf. */
    static const struct {
        sim_hw_field f;
        double min, max; /* in the figure's unit (its JSON key says which) */
    } ranges[] = {
        {SIM_HWF_PEAK_FP16, 1e9, 1e18},
        {SIM_HWF_PEAK_BF16, 1e9, 1e18},
        {SIM_HWF_PEAK_FP8, 1e9, 1e18},
        {SIM_HWF_PEAK_FP4, 1e9, 1e18},
        {SIM_HWF_PEAK_FP32, 1e9, 1e18},
        {SIM_HWF_MEM_CAPACITY, 1e8, 1e14},
        {SIM_HWF_MEM_CUDA_TOTAL, 1e8, 1e14},
        {SIM_HWF_BW_HBM_PEAK, 1e8, 1e15},
        {SIM_HWF_BW_STREAM_COPY, 1e8, 1e15},
        {SIM_HWF_BW_STREAM_SCALE, 1e8, 1e15},
        {SIM_HWF_BW_STREAM_ADD, 1e8, 1e15},
        {SIM_HWF_BW_STREAM_TRIAD, 1e8, 1e15},
        {SIM_HWF_LINK_BW, 1e6, 1e15},
        {SIM_HWF_GEMM_EFF_FP16, 1e-3, 1.5},
        {SIM_HWF_GEMM_EFF_FP8, 1e-3, 1.5},
        {SIM_HWF_GEMM_EFF_SMALL_M, 1e-3, 1.5},
        {SIM_HWF_ATTN_EFF, 1e-3, 1.5},
        {SIM_HWF_BW_FACTOR_WEIGHTS, 1e-3, 1.5},
        {SIM_HWF_BW_FACTOR_KV, 1e-3, 1.5},
        {SIM_HWF_BW_FACTOR_MIXED, 1e-3, 1.5},
        {SIM_HWF_BW_FACTOR_WEIGHTS_FP8, 1e-3, 1.5},
        {SIM_HWF_BW_FACTOR_KV_FP8, 1e-3, 1.5},
        {SIM_HWF_GEMM_EFF_FP8_BLOCK, 1e-3, 1.5},
        {SIM_HWF_BW_FACTOR_WEIGHTS_FP8_BLOCK, 1e-3, 1.5},
        {SIM_HWF_GEMM_EFF_FP4, 1e-3, 1.5},
        {SIM_HWF_BW_FACTOR_WEIGHTS_FP4, 1e-3, 1.5},
        {SIM_HWF_N_SM, 1, 1e5},
        {SIM_HWF_SMEM_PER_SM, 1e3, 1e8},
        {SIM_HWF_ATTN_DECODE_BLOCK_BW, 1e6, 1e13},
        {SIM_HWF_L2, 1e3, 1e11},
        {SIM_HWF_N_GPUS_PER_NODE, 1, 4096},
        {SIM_HWF_BW_INTERNODE, 1e6, 1e15},
    };
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
        sim_hw_field f = ranges[i].f;
        if (hw->prov[f] != SIM_PROV_ABSENT &&
            !(hw->v[f] >= ranges[i].min && hw->v[f] <= ranges[i].max)) {
            /* The core formats no doubles: name the figure and its range. */
            sim_errf(err, "%s: out of its physical range (docs/limits.md)", field_keys[f]);
            return SIM_ERANGE;
        }
    }
    /* Every MoE class's efficiency and weights factor: (0, 1.5]. */
    for (int c = 0; c < SIM_MOE_CLASS_COUNT; c++)
        for (int k = SIM_MOE_FIG_BW; k <= SIM_MOE_FIG_EFF; k++) {
            const sim_hw_field f = moe_figs[c][k];
            if (hw->prov[f] != SIM_PROV_ABSENT && !(hw->v[f] >= 1e-3 && hw->v[f] <= 1.5)) {
                sim_errf(err, "%s: out of its physical range (docs/limits.md)", field_keys[f]);
                return SIM_ERANGE;
            }
        }
    static const sim_hw_field fracs[] = {SIM_HWF_GEMM_EFF_FP16,
                                         SIM_HWF_GEMM_EFF_FP8,
                                         SIM_HWF_ATTN_EFF,
                                         SIM_HWF_BW_FACTOR_WEIGHTS,
                                         SIM_HWF_BW_FACTOR_KV,
                                         SIM_HWF_BW_FACTOR_MIXED,
                                         SIM_HWF_BW_FACTOR_WEIGHTS_FP8,
                                         SIM_HWF_BW_FACTOR_KV_FP8,
                                         SIM_HWF_GEMM_EFF_FP8_BLOCK,
                                         SIM_HWF_BW_FACTOR_WEIGHTS_FP8_BLOCK,
                                         SIM_HWF_GEMM_EFF_FP4,
                                         SIM_HWF_BW_FACTOR_WEIGHTS_FP4};
    for (size_t i = 0; i < sizeof(fracs) / sizeof(fracs[0]); i++) {
        sim_hw_field f = fracs[i];
        /* Factors are relative to STREAM copy and may exceed 1 slightly (L2 hits), not by 50%. */
        if (hw->prov[f] != SIM_PROV_ABSENT && hw->v[f] > 1.5) {
            sim_errf(err, "%s: must be in (0, 1.5]", field_keys[f]);
            return SIM_ERANGE;
        }
    }
    static const sim_hw_field bws[] = {SIM_HWF_BW_STREAM_COPY, SIM_HWF_BW_STREAM_SCALE,
                                       SIM_HWF_BW_STREAM_ADD, SIM_HWF_BW_STREAM_TRIAD};
    for (size_t i = 0; i < sizeof(bws) / sizeof(bws[0]); i++) {
        if (hw->prov[bws[i]] != SIM_PROV_ABSENT && hw->v[bws[i]] > hw->v[SIM_HWF_BW_HBM_PEAK]) {
            sim_errf(err, "%s: above bw_hbm_peak_bytes_per_s (a measurement cannot beat the peak)",
                     field_keys[bws[i]]);
            return SIM_ERANGE;
        }
    }
    sim_status st = check_collective(hw->allreduce, hw->n_allreduce, "allreduce", err);
    if (st == SIM_OK)
        st = check_collective(hw->alltoall, hw->n_alltoall, "alltoall", err);
    return st;
}

double sim_hw_peak_flops_per_s(const sim_hw *hw, sim_dtype dtype)
{
    switch (dtype) {
    case SIM_DTYPE_FP16:
        return hw->v[SIM_HWF_PEAK_FP16];
    case SIM_DTYPE_BF16:
        return hw->v[SIM_HWF_PEAK_BF16];
    case SIM_DTYPE_FP8:
        if (hw->prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT)
            return hw->v[SIM_HWF_PEAK_FP8];
        return hw->v[SIM_HWF_PEAK_FP16];
    case SIM_DTYPE_FP32:
        return hw->v[SIM_HWF_PEAK_FP32];
    case SIM_DTYPE_COUNT:
        break;
    }
    assert(0 && "bad dtype");
    return 0.0;
}

double sim_hw_gemm_eff_frac(const sim_hw *hw, sim_dtype dtype)
{
    if (dtype == SIM_DTYPE_FP8 && hw->prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT)
        return hw->v[SIM_HWF_GEMM_EFF_FP8];
    return hw->v[SIM_HWF_GEMM_EFF_FP16];
}

double sim_hw_gemm_eff_at(const sim_hw *hw, sim_dtype dtype, double m)
{
    return m <= hw->v[SIM_HWF_GEMM_SMALL_M_ROWS] ? hw->v[SIM_HWF_GEMM_EFF_SMALL_M]
                                                 : sim_hw_gemm_eff_frac(hw, dtype);
}

/* The documented default of a profile without entries (docs/hwprofile.md, "Defaults"). */
static void default_collective(const sim_hw *hw, int n, sim_allreduce *out)
{
    out->n_gpus = n;
    out->latency_s = DEFAULT_ALLREDUCE_LATENCY_S;
    out->bus_bw_bytes_per_s = DEFAULT_ALLREDUCE_BUS_OVER_LINK_FRAC * hw->v[SIM_HWF_LINK_BW];
    out->n_regimes = 0;
    out->prov = SIM_PROV_DEFAULT;
    const char *why = "default: 30 us + 0.7 x link_bw_per_dir bus bandwidth";
    size_t i = 0;
    for (; why[i] && i + 1 < SIM_HW_SOURCE_LEN; i++)
        out->source[i] = why[i];
    out->source[i] = '\0';
}

/* The entry of list (count of them) whose GPU count is nearest n; the default without one. */
static void nearest_collective(const sim_hw *hw, const sim_allreduce *list, int count, int n,
                               sim_allreduce *out)
{
    if (count == 0) {
        default_collective(hw, n, out);
        return;
    }
    int best = 0;
    for (int i = 1; i < count; i++) {
        int di = list[i].n_gpus - n, db = list[best].n_gpus - n;
        if ((di < 0 ? -di : di) < (db < 0 ? -db : db))
            best = i;
    }
    *out = list[best];
}

void sim_hw_allreduce_for(const sim_hw *hw, int n, sim_allreduce *out)
{
    nearest_collective(hw, hw->allreduce, hw->n_allreduce, n, out);
}

void sim_hw_alltoall_for(const sim_hw *hw, int n, sim_allreduce *out)
{
    nearest_collective(hw, hw->alltoall, hw->n_alltoall, n, out);
}

double sim_alltoall_entry_time_s(const sim_allreduce *a, int n, double bytes)
{
    double lat = a->latency_s, bw = a->bus_bw_bytes_per_s;
    for (int k = 0; k < a->n_regimes && bytes >= a->regimes[k].from_bytes; k++) {
        lat = a->regimes[k].latency_s;
        bw = a->regimes[k].bus_bw_bytes_per_s;
    }
    return lat + (double)(n - 1) / (double)n * bytes / bw;
}

const char *sim_gemm_kind_name(sim_gemm_kind kind)
{
    static const char *const names[SIM_GEMM_KIND_COUNT] = {"bf16", "fp8", "fp8_block", "fp4"};
    return (unsigned)kind < SIM_GEMM_KIND_COUNT ? names[kind] : "?";
}

void sim_hw_gemm_figs(const sim_hw *hw, sim_gemm_kind kind, sim_gemm_figs *out)
{
    const int has8 = hw->prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT;
    const int has4 = has8 && hw->prov[SIM_HWF_PEAK_FP4] != SIM_PROV_ABSENT;
    static const sim_hw_field figs[SIM_GEMM_KIND_COUNT][3] = {
        [SIM_GEMM_KIND_16] = {SIM_HWF_GEMM_EFF_FP16, SIM_HWF_BW_FACTOR_WEIGHTS, SIM_HWF_GEMM_FIXED},
        [SIM_GEMM_KIND_FP8] = {SIM_HWF_GEMM_EFF_FP8, SIM_HWF_BW_FACTOR_WEIGHTS_FP8,
                               SIM_HWF_GEMM_FIXED_FP8},
        [SIM_GEMM_KIND_FP8_BLOCK] = {SIM_HWF_GEMM_EFF_FP8_BLOCK,
                                     SIM_HWF_BW_FACTOR_WEIGHTS_FP8_BLOCK,
                                     SIM_HWF_GEMM_FIXED_FP8_BLOCK},
        [SIM_GEMM_KIND_FP4] = {SIM_HWF_GEMM_EFF_FP4, SIM_HWF_BW_FACTOR_WEIGHTS_FP4,
                               SIM_HWF_GEMM_FIXED_FP4},
    };
    static const double wbytes[SIM_GEMM_KIND_COUNT] = {2.0, 1.0, 1.0 + 4.0 / 16384.0,
                                                       0.5 + 1.0 / 16.0};
    const sim_gemm_kind k = (unsigned)kind < SIM_GEMM_KIND_COUNT ? kind : SIM_GEMM_KIND_16;
    /* The math the kernel runs in: fp4 falls back to fp8, fp8 to 16 bits (weight-only). */
    const sim_gemm_kind math = k == SIM_GEMM_KIND_FP4 && !has4 ? SIM_GEMM_KIND_FP8 : k;
    const int math16 = math == SIM_GEMM_KIND_16 || !has8;
    out->peak_flops_per_s = math16                      ? hw->v[SIM_HWF_PEAK_BF16]
                            : math == SIM_GEMM_KIND_FP4 ? hw->v[SIM_HWF_PEAK_FP4]
                                                        : hw->v[SIM_HWF_PEAK_FP8];
    out->eff_frac = hw->v[figs[math16 ? SIM_GEMM_KIND_16 : math][0]];
    out->bw_factor_frac = hw->v[figs[k][1]];
    out->fixed_s = hw->v[figs[k][2]];
    out->weight_bytes = wbytes[k];
}

const char *sim_moe_class_name(sim_moe_class cls)
{
    static const char *const names[SIM_MOE_CLASS_COUNT] = {"bf16", "fp8", "fp8_block", "mxfp4",
                                                           "nvfp4"};
    return (unsigned)cls < SIM_MOE_CLASS_COUNT ? names[cls] : "?";
}

double sim_moe_class_weight_bytes(sim_moe_class cls)
{
    static const double wbytes[SIM_MOE_CLASS_COUNT] = {2.0, 1.0, 1.0 + 4.0 / 16384.0,
                                                       0.5 + 1.0 / 32.0, 0.5 + 1.0 / 16.0};
    return (unsigned)cls < SIM_MOE_CLASS_COUNT ? wbytes[cls] : 2.0;
}

void sim_hw_moe_figs(const sim_hw *hw, sim_moe_class cls, sim_moe_figs *out)
{
    const sim_moe_class c = (unsigned)cls < SIM_MOE_CLASS_COUNT ? cls : SIM_MOE_CLASS_16;
    const sim_hw_field *f = moe_figs[c];
    out->peak_flops_per_s = moe_class_peak(hw, c);
    out->eff_frac = hw->v[f[SIM_MOE_FIG_EFF]];
    out->rows_half = hw->v[f[SIM_MOE_FIG_R0]];
    out->tile_k = hw->v[f[SIM_MOE_FIG_K0]];
    out->fixed_s = hw->v[f[SIM_MOE_FIG_FIXED]];
    out->bw_factor_frac = hw->v[f[SIM_MOE_FIG_BW]];
    out->weight_bytes = sim_moe_class_weight_bytes(c);
}

double sim_allreduce_entry_time_s(const sim_allreduce *a, int n, double bytes)
{
    double lat = a->latency_s, bw = a->bus_bw_bytes_per_s;
    for (int k = 0; k < a->n_regimes && bytes >= a->regimes[k].from_bytes; k++) {
        lat = a->regimes[k].latency_s;
        bw = a->regimes[k].bus_bw_bytes_per_s;
    }
    return lat + 2.0 * (double)(n - 1) / (double)n * bytes / bw;
}

double sim_hw_ridge_flops_per_byte(const sim_hw *hw, sim_dtype dtype)
{
    return sim_hw_peak_flops_per_s(hw, dtype) * sim_hw_gemm_eff_frac(hw, dtype) /
           (hw->v[SIM_HWF_BW_STREAM_COPY] * hw->v[SIM_HWF_BW_FACTOR_WEIGHTS]);
}

void sim_hw_roofs_of(const sim_hw *hw, sim_hw_roofs *out)
{
    out->hbm_peak_bytes_per_s = hw->v[SIM_HWF_BW_HBM_PEAK];
    out->hbm_achievable_bytes_per_s =
        hw->v[SIM_HWF_BW_STREAM_COPY] * hw->v[SIM_HWF_BW_FACTOR_WEIGHTS];
    out->bf16_peak_flops_per_s = hw->v[SIM_HWF_PEAK_BF16];
    out->bf16_achievable_flops_per_s =
        out->bf16_peak_flops_per_s * sim_hw_gemm_eff_frac(hw, SIM_DTYPE_BF16);
    out->has_fp8 = hw->prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT;
    out->fp8_peak_flops_per_s = out->has_fp8 ? hw->v[SIM_HWF_PEAK_FP8] : 0.0;
    out->fp8_achievable_flops_per_s =
        out->has_fp8 ? out->fp8_peak_flops_per_s * sim_hw_gemm_eff_frac(hw, SIM_DTYPE_FP8) : 0.0;
    out->fp32_peak_flops_per_s = hw->v[SIM_HWF_PEAK_FP32];
    out->ridge_bf16_flops_per_byte = sim_hw_ridge_flops_per_byte(hw, SIM_DTYPE_BF16);
}

void sim_hw_sort_allreduce(sim_hw *hw, int *flags)
{
    for (int j = 1; j < hw->n_allreduce; j++)
        for (int k = j; k > 0 && hw->allreduce[k - 1].n_gpus > hw->allreduce[k].n_gpus; k--) {
            sim_allreduce ta = hw->allreduce[k];
            hw->allreduce[k] = hw->allreduce[k - 1];
            hw->allreduce[k - 1] = ta;
            int tf = flags[k];
            flags[k] = flags[k - 1];
            flags[k - 1] = tf;
        }
}
