/*
 * test_quant.c - quantized checkpoints: bytes per weight of every scheme the
 * loader reads (scales and zero points included), exclusion lists, the bundled
 * quantized configs against their published checkpoint sizes, and the weight
 * bytes and compute dtype of the step's GEMMs. Every expected value is derived
 * by hand in the comment above it (or is a published figure, cited there).
 */
#include <stdio.h>

#include "bundled.h"
#include "check.h"
#include "kernels.h"
#include "model.h"
#include "step.h"

static int load_quant(const char *name, sim_model *m)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/quant/%s.json", SIM_TEST_DATA, name);
    return load_model_path(path, m);
}

/*
 * One [n x k] = [4096 x 4096] weight (16,777,216 elements) under each scheme,
 * bytes = packed weights + scales (+ zero points) (+ per-tensor scales):
 *   fp8 per-tensor, dynamic activations: 16,777,216 + 4 (fp32 weight_scale)        = 16,777,220
 *   fp8 per-tensor, static activations:  + 4 (fp32 input_scale)                    = 16,777,224
 *   fp8 block 128x128: 16,777,216 + (4096/128)^2 = 1,024 fp32 scales x 4           = 16,781,312
 *                      (1 + 4/16384 = 1.000244 bytes per weight)
 *   compressed-tensors fp8 channel: 16,777,216 + 4,096 bf16 scales x 2             = 16,785,408
 *   compressed-tensors fp8 tensor, static input: 16,777,216 + 2 + 2 (bf16 scales)  = 16,777,220
 *   compressed-tensors int8 channel (W8A8 int8): as fp8 channel                    = 16,785,408
 *   compressed-tensors W4A16 g128 symmetric: 8,388,608 + 4,096 x 32 groups x 2     = 8,650,752
 *                      (0.5 + 2/128 = 0.515625 bytes per weight)
 *   ... asymmetric: + 4,096 x 32 int4 zero points x 0.5                            = 8,716,288
 *   AWQ int4 g128 with zero points: 8,388,608 + 4,096 x 32 x (2 + 0.5)             = 8,716,288
 *                      (0.5 + 2.5/128 = 0.51953125 bytes per weight)
 *   GPTQ int4 g128 sym (vLLM drops the stored zeros): as W4A16 symmetric           = 8,650,752
 *   GPTQ int4 g128 sym=false: as AWQ                                               = 8,716,288
 *   GPTQ int8 group_size -1 (per channel): 16,777,216 + 4,096 fp16 scales x 2      = 16,785,408
 *   MXFP4: 8,388,608 + 4,096 x 128 blocks of 32 x 1 (e8m0)                         = 8,912,896
 *                      (0.5 + 1/32 = 0.53125 bytes per weight)
 *   NVFP4 (modelopt): 8,388,608 + 4,096 x 256 groups of 16 x 1 (e4m3) + 4 (fp32
 *                      weight_scale_2) + 4 (fp32 input_scale)                      = 9,437,192
 *                      (0.5 + 1/16 = 0.5625 bytes per weight)
 *   NVFP4 (compressed-tensors tensor_group): + 4 (fp32 global scale), dynamic input = 9,437,188
 */
static void bytes_per_scheme(void)
{
    static const struct {
        const char *file;
        double bytes;
        sim_gemm_math math;
    } cases[] = {
        {"fp8_tensor", 16777220.0, SIM_GEMM_MATH_FP8},
        {"fp8_tensor_static", 16777224.0, SIM_GEMM_MATH_FP8},
        {"compression_config", 16777220.0, SIM_GEMM_MATH_FP8},
        {"fp8_block", 16781312.0, SIM_GEMM_MATH_FP8},
        {"ct_fp8_channel", 16785408.0, SIM_GEMM_MATH_FP8},
        {"ct_fp8_tensor_static", 16777220.0, SIM_GEMM_MATH_FP8},
        {"ct_int8_channel", 16785408.0, SIM_GEMM_MATH_INT8},
        {"ct_w4a16", 8650752.0, SIM_GEMM_MATH_16},
        {"ct_w4a16_asym", 8716288.0, SIM_GEMM_MATH_16},
        {"awq", 8716288.0, SIM_GEMM_MATH_16},
        {"gptq_sym", 8650752.0, SIM_GEMM_MATH_16},
        {"gptq_asym", 8716288.0, SIM_GEMM_MATH_16},
        {"gptq_int8_channel", 16785408.0, SIM_GEMM_MATH_16},
        {"mxfp4", 8912896.0, SIM_GEMM_MATH_16},
        {"nvfp4", 9437192.0, SIM_GEMM_MATH_FP4},
        {"nvfp4_nested", 9437192.0, SIM_GEMM_MATH_FP4},
        {"ct_nvfp4", 9437188.0, SIM_GEMM_MATH_FP4},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_model m;
        if (load_quant(cases[i].file, &m) != 0)
            continue;
        double got = sim_model_linear_bytes(&m, SIM_DTYPE_BF16, 4096.0, 4096.0);
        if (got != cases[i].bytes)
            printf("  (scheme %s)\n", cases[i].file);
        CHECK_REL(got, cases[i].bytes, 0.0);
        CHECK(m.quant.math == cases[i].math);
        CHECK(m.quant.method != SIM_QUANT_NONE);
    }
}

/*
 * Block scales round up at ragged edges: fp8 block 128x128 on [1000 x 4096]:
 * 4,096,000 + ceil(1000/128) = 8 x 32 blocks x 4 bytes = 4,097,024.
 * Groups along k likewise: AWQ g128 on [4096 x 200]: 409,600 + 4,096 x ceil(200/128) = 2
 * x 2.5 = 20,480 -> 430,080.
 */
static void ragged_edges(void)
{
    sim_model m;
    if (load_quant("fp8_block", &m) == 0)
        CHECK_REL(sim_model_linear_bytes(&m, SIM_DTYPE_BF16, 1000.0, 4096.0), 4097024.0, 0.0);
    if (load_quant("awq", &m) == 0)
        CHECK_REL(sim_model_linear_bytes(&m, SIM_DTYPE_BF16, 4096.0, 200.0), 430080.0, 0.0);
}

/* A checkpoint's bytes at TP 1: the weights without the RoPE cos/sin caches, which vLLM builds
 * when it loads a model and no checkpoint holds (test_model.c, rope_caches). */
static double ckpt_bytes(const sim_model *m, sim_dtype dtype)
{
    sim_weight_bytes w;
    sim_model_weight_bytes(m, 1, dtype, &w);
    return w.total - w.rope;
}

/*
 * A tiny llama (the configs in tests/data/quant: d 256, 2 layers, 2 heads of 128, 2 KV heads,
 * F 512, vocab 1000, untied), AWQ int4 g128 with zero points (2.5 bytes per group of 128):
 *   embedding and LM head 16-bit: 2 x 1000 x 256 x 2                     = 1,024,000
 *   q, k, v, o [256 x 256]: 32,768 + 256 x 2 groups x 2.5 = 34,048 each; 4 per layer = 136,192
 *   gate, up [512 x 256]: 65,536 + 512 x 2 x 2.5 = 68,096; down [256 x 512]: 65,536
 *     + 256 x 4 x 2.5 = 68,096; 204,288 per layer
 *   norms (2 x 2 + 1) x 256 x 2                                           = 2,560
 * All quantized: 1,024,000 + 2 x (136,192 + 204,288) + 2,560 = 1,707,520.
 * Layer 0's attention excluded (modules_to_not_convert names its q, k, v, o): that layer's
 * attention is 4 x 65,536 x 2 = 524,288 instead: 1,707,520 - 136,192 + 524,288 = 2,095,616.
 * compressed-tensors W4A16 g128 symmetric (2 bytes per group): q..o 32,768 + 256 x 2 x 2 =
 * 33,792, x 4 = 135,168; gate/up 65,536 + 512 x 2 x 2 = 67,584; down 65,536 + 256 x 4 x 2 =
 * 67,584; MLP 202,752. With layer 1's down_proj ignored, layer 1's MLP is counted 16-bit
 * whole (3 x 131,072 x 2 = 786,432): 1,024,000 + 2 x 135,168 + 202,752 + 786,432 + 2,560 =
 * 2,286,080.
 * MXFP4 (gpt-oss's modules_to_not_convert: every self_attn): attention 16-bit in both layers
 * (2 x 524,288), MLP gate/up 65,536 + 512 x 8 blocks x 1 = 69,632, down 65,536 + 256 x 16 =
 * 69,632; 1,024,000 + 1,048,576 + 2 x 208,896 + 2,560 = 2,492,928.
 * GPTQ with lm_head: true quantizes the LM head [1000 x 256] too: 128,000 + 1000 x 2 x 2 =
 * 132,000 instead of 512,000; q..o 33,792 each (symmetric), MLP 202,752:
 * 512,000 + 132,000 + 2 x (135,168 + 202,752) + 2,560 = 1,322,400.
 */
static void whole_model_and_exclusions(void)
{
    sim_model m;
    if (load_quant("awq", &m) == 0)
        CHECK_REL(ckpt_bytes(&m, SIM_DTYPE_FP16), 1707520.0, 0.0);
    if (load_quant("awq_ignore_layer0_attn", &m) == 0) {
        CHECK(m.quant.n_attn_excluded_layers == 1 && !m.quant.attn_excluded);
        CHECK_REL(ckpt_bytes(&m, SIM_DTYPE_BF16), 2095616.0, 0.0);
    }
    if (load_quant("ct_ignore_layer1_mlp", &m) == 0) {
        CHECK(m.quant.n_mlp_excluded_layers == 1);
        CHECK_REL(ckpt_bytes(&m, SIM_DTYPE_BF16), 2286080.0, 0.0);
    }
    if (load_quant("mxfp4", &m) == 0) {
        CHECK(m.quant.attn_excluded && !m.quant.mlp_excluded);
        CHECK_REL(ckpt_bytes(&m, SIM_DTYPE_BF16), 2492928.0, 0.0);
    }
    if (load_quant("gptq_lm_head", &m) == 0)
        CHECK_REL(ckpt_bytes(&m, SIM_DTYPE_BF16), 1322400.0, 0.0);
}

/*
 * Kimi-K2.5's exclusion list on a tiny DeepSeek-V3-shaped MoE (tests/data/quant/
 * ct_w4a16_moe_partial.json: d 256, 3 layers, layer 0 dense with F 512, layers 1-2 with 4
 * routed experts and 1 shared of Fe 128; compressed-tensors W4A16 symmetric, groups of 32 along
 * k, one bf16 scale a group: 0.5 + 2/32 = 0.5625 bytes a weight). "re:.*self_attn.*" leaves all
 * attention 16-bit, "re:.*shared_experts.*" the shared experts, "re:.*mlp\.(gate|up|gate_up|
 * down)_proj.*" the dense MLP (its projections follow "mlp." directly, the experts' follow
 * "mlp.experts.N."), the vision names nothing of the language model; two names of layer 2's
 * shared expert count that layer once. So:
 *   routed experts 2 layers x 4 x 3 x 256 x 128 x 0.5625 = 442,368 bytes (int4);
 *   gate_up: dense 2 x 512 x 256 x 2 + shared 2 layers x 2 x 128 x 256 x 2 = 524,288 + 262,144
 *            = 786,432; down 512 x 256 x 2 + 2 x 128 x 256 x 2 = 262,144 + 131,072 = 393,216;
 *   attention: the bytes of the same model without quantization_config.
 * And the step's dense/shared MLP operator runs 16-bit, the experts as the W4A16 class.
 */
static void partial_moe_exclusions(void)
{
    sim_model m;
    if (load_quant("ct_w4a16_moe_partial", &m) != 0)
        return;
    CHECK(m.quant.attn_excluded && m.quant.dense_mlp_excluded && m.quant.shared_excluded);
    CHECK(!m.quant.mlp_excluded);
    CHECK_INT(m.quant.n_shared_excluded_layers, 1);
    CHECK_INT(m.quant.n_mlp_excluded_layers, 0);
    sim_weight_bytes w, w16;
    sim_model_weight_bytes(&m, 1, SIM_DTYPE_BF16, &w);
    CHECK_REL(w.experts, 442368.0, 1e-15);
    CHECK_REL(w.gate_up, 786432.0, 1e-15);
    CHECK_REL(w.down, 393216.0, 1e-15);
    sim_model plain = m;
    plain.quant = (sim_quant){0};
    sim_model_weight_bytes(&plain, 1, SIM_DTYPE_BF16, &w16);
    CHECK_REL(w.qkv, w16.qkv, 0.0);
    CHECK_REL(w.o, w16.o, 0.0);
    CHECK_REL(w.gate_up, w16.gate_up, 0.0);
    CHECK_REL(w.down, w16.down, 0.0);
    CHECK(w.experts < 0.3 * w16.experts);
}

/*
 * A multimodal wrapper quantized at the top level (tests/data/quant/qwen3vl_fp8_top.json:
 * Qwen3-VL-8B with the Qwen FP8 checkpoints' block-fp8 quantization_config, whose
 * modules_to_not_convert names the vision tower and the LM head). The language model's q, k, v
 * per layer: 4096 x (4096 + 2 x 1024) = 25,165,824 fp8 bytes plus fp32 scales per 128 x 128
 * block, (32 x 32 + 2 x 8 x 32) x 4 = 6,144: 25,171,968; x 36 layers = 906,190,848. The vision
 * tower stays 16-bit: 576,388,336 x 2 bytes at TP 1, as the unquantized model's. A second
 * quantization_config in text_config is an error.
 */
static void multimodal_quantized(void)
{
    sim_model m, m16;
    if (load_quant("qwen3vl_fp8_top", &m) != 0 || load_model("qwen3-vl-8b", &m16) != 0)
        return;
    CHECK_INT(m.quant.method, SIM_QUANT_FP8);
    CHECK_INT(m.quant.block_n, 128);
    CHECK(!m.quant.attn_excluded && !m.quant.mlp_excluded);
    sim_weight_bytes w, w16;
    sim_model_weight_bytes(&m, 1, SIM_DTYPE_BF16, &w);
    sim_model_weight_bytes(&m16, 1, SIM_DTYPE_BF16, &w16);
    CHECK_REL(w.qkv, 906190848.0, 1e-15);
    CHECK_REL(w.vision, 576388336.0 * 2.0, 0.0);
    CHECK_REL(w.vision, w16.vision, 0.0);
    char path[1024];
    struct sim_err err;
    snprintf(path, sizeof(path), "%s/model_mm_two_quant.json", SIM_TEST_DATA);
    CHECK(sim_model_load(path, "x", &m, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "quantization_config: given both here and in text_config");
}

/*
 * Unknown quant_method and unplaceable exclusion names are errors naming the field.
 */
static void rejected(void)
{
    char path[1024];
    sim_model m;
    struct sim_err err;
    snprintf(path, sizeof(path), "%s/model_unknown_quant.json", SIM_TEST_DATA);
    CHECK(sim_model_load(path, "x", &m, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "quantization_config.quant_method: unsupported quantization method");
    CHECK_CONTAINS(err.msg, "got 'bitsandbytes'");
    snprintf(path, sizeof(path), "%s/model_quant_bad_ignore.json", SIM_TEST_DATA);
    CHECK(sim_model_load(path, "x", &m, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "quantization_config.modules_to_not_convert: cannot tell which "
                            "layers 'model.speech_adapter' names");
}

/*
 * Bundled quantized configs against the published checkpoints.
 *
 * Llama-3.1-70B (d 8192, L 80, 64/8 heads of 128, F 28672, V 128256, untied):
 *   params: embed + head 2 x 1,050,673,152; attention 80 x 150,994,944 = 12,079,595,520;
 *   MLP 80 x 704,643,072 = 56,371,445,760; norms 161 x 8192 = 1,318,912;
 *   total 70,553,706,496 (Meta: 70.6B).
 * llama-3.1-70b-awq (hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4, int4 g128 with
 *   zero points, fp16 scales) per layer: q and o [8192 x 8192] 33,554,432 + 8192 x 64 x 2.5 =
 *   34,865,152 each; k and v [1024 x 8192] 4,194,304 + 1024 x 64 x 2.5 = 4,358,144 each;
 *   gate and up [28672 x 8192] 117,440,512 + 28672 x 64 x 2.5 = 122,028,032 each; down
 *   [8192 x 28672] 117,440,512 + 8192 x 224 x 2.5 = 122,028,032; layer 444,530,688;
 *   x 80 = 35,562,455,040; + fp16 embed and head 4,202,692,608 + norms 2,637,824
 *   = 39,767,785,472 bytes. Published: the checkpoint's safetensors total about 39.8 GB
 *   (hugging-quants model card; figure quoted in issue 9).
 * llama-3.1-70b-fp8 (RedHatAI, FP8 static per tensor, bf16 weight and input scales):
 *   linear 68,451,041,280 x 1 + 80 layers x 7 matrices x 4 bytes = 2,240; + bf16 embed and head
 *   4,202,692,608 + norms 2,637,824 = 72,656,373,952. No published safetensors total was at
 *   hand: the reference is derived from published facts, the BF16 checkpoint's
 *   2 x 70,553,706,496 = 141,107,412,992 bytes with only the block linears (68,451,041,280
 *   parameters) halved (model card: "only the weights and activations of the linear
 *   operators within transformers blocks are quantized") = 72,656,371,712.
 * Llama-3.1-8B fp8 (same recipe): linear 6,979,321,856 + 32 x 7 x 4 = 896; embed and head
 *   2,101,346,304; norms 532,480; = 9,081,201,536. Published: 8.4575 GiB = 9.0812e9 bytes of
 *   parameters in memory for nm-testing/Meta-Llama-3.1-8B-Instruct-FP8-hf (HuggingFace
 *   transformers documentation, quantization/compressed_tensors.md).
 * Qwen3-32B (d 5120, L 64, 64/8 heads of 128, F 25600, V 151936, untied, q/k norms):
 *   params: embed + head 2 x 777,912,320; per layer attention 94,371,840 + 256, MLP
 *   393,216,000; norms 129 x 5120; total 32,762,123,264 (Qwen: 32.8B).
 *   qwen3-32b-fp8 (128x128 fp32 block scales): per layer scales q 64 x 40 = 2,560,
 *   k and v 8 x 40 = 320 each, o 40 x 64 = 2,560, gate and up 200 x 40 = 8,000 each, down
 *   40 x 200 = 8,000; 29,760 x 4 = 119,040 bytes, x 64 = 7,618,560; linear 31,205,621,760;
 *   16-bit rest (1,555,824,640 + 660,480 + 16,384) x 2 = 3,113,003,008; = 34,326,243,328.
 */
static void bundled_checkpoints(void)
{
    static const struct {
        const char *id;
        double params, bytes, published, tol;
    } cases[] = {
        {"llama-3.1-70b-awq", 70553706496.0, 39767785472.0, 39.8e9, 0.03},
        {"llama-3.1-70b-fp8", 70553706496.0, 72656373952.0, 72656371712.0, 0.03},
        {"llama-3.1-8b-fp8", 8030261248.0, 9081201536.0, 8.4575 * 1073741824.0, 0.03},
        {"qwen3-32b-fp8", 32762123264.0, 34326243328.0, 34326243328.0, 0.0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_model m;
        sim_param_count p;
        if (load_model_params(cases[i].id, &m, &p) != 0)
            continue;
        CHECK_REL(p.total, cases[i].params, 0.0);
        double b = ckpt_bytes(&m, m.dtype);
        CHECK_REL(b, cases[i].bytes, 0.0);
        CHECK_REL(b, cases[i].published, cases[i].tol);
    }
}

/*
 * The step streams the quantized bytes and computes in the scheme's math.
 * llama-3.1-70b-awq, TP 1, one decode token: per layer q+k+v 34,865,152 + 2 x 4,358,144 =
 * 43,581,440, x 80 = 3,486,515,200; o 80 x 34,865,152 = 2,789,212,160; gate+up 80 x
 * 244,056,064 = 19,524,485,120; down 80 x 122,028,032 = 9,762,242,560; the LM head stays fp16:
 * 128256 x 8192 x 2 = 2,101,346,304.
 * Compute ceilings on h100-sxm: AWQ is weight-only (Marlin), so its QKV GEMM is timed at the
 * fp16 peak x gemm_eff_fp16; the fp8 W8A8 8B at the fp8 peak x gemm_eff_fp8; both read from
 * the profile here, not from ops.c.
 */
static void step_bytes_and_math(void)
{
    sim_model m;
    sim_hw hw;
    if (load_model("llama-3.1-70b-awq", &m) != 0 || load_hw("h100-sxm", &hw) != 0)
        return;
    sim_run_cfg cfg = {.tp = 1,
                       .dtype = SIM_DTYPE_FP16,
                       .kv_dtype = SIM_DTYPE_FP16,
                       .mode = SIM_ROOFLINE_OP,
                       .alpha = 1.0};
    sim_step st = {.n_groups = 1, .groups = {{1, 1, 1024, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &st, &c);
    CHECK_REL(c.ops[SIM_OP_QKV].weight_bytes, 3486515200.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_O_PROJ].weight_bytes, 2789212160.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_MLP_GATE_UP].weight_bytes, 19524485120.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_MLP_DOWN].weight_bytes, 9762242560.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_LM_HEAD].weight_bytes, 2101346304.0, 1e-15);

    sim_step pf = {.n_groups = 1, .groups = {{4, 4096, 0, 1}}};
    sim_step_cost_compute(&m, &hw, &cfg, &pf, &c);
    CHECK_REL(c.ops[SIM_OP_QKV].compute_s,
              c.ops[SIM_OP_QKV].flops / (hw.v[SIM_HWF_PEAK_FP16] * hw.v[SIM_HWF_GEMM_EFF_FP16]),
              1e-12);

    /*
     * Per-tensor fp8 (Llama-3.1-8B FP8) runs vLLM's scaled-mm as validate-kernels times it
     * (docs/model.md, "fp8 GEMMs: dispatch tiles and the quantization kernel"): the 16384
     * tokens of the step times 6144 QKV outputs ((32 + 2 x 8) x 128) pick the last H100
     * dispatch entry (m > 128: 128 x 128 tiles in clusters of 2 x 1), gm = ceil(128 / 2) x 2
     * = 128, gn = 48, 6144 tiles on 132 SMs in ceil(6144 / 132) = 47 waves: efficiency
     * 6144 / (47 x 132) = 6144 / 6204. Each of the 32 layers first quantizes its T x d bf16
     * activations in a kernel of its own: 3 T d bytes at bw_stream_scale.
     */
    if (load_model("llama-3.1-8b-fp8", &m) != 0)
        return;
    cfg.dtype = cfg.kv_dtype = SIM_DTYPE_BF16;
    sim_step_cost_compute(&m, &hw, &cfg, &pf, &c);
    const double T = 16384.0;
    CHECK_REL(c.ops[SIM_OP_QKV].compute_s,
              c.ops[SIM_OP_QKV].flops /
                      (hw.v[SIM_HWF_PEAK_FP8] * hw.v[SIM_HWF_GEMM_EFF_FP8] * (6144.0 / 6204.0)) +
                  32.0 * 3.0 * T * 4096.0 / hw.v[SIM_HWF_BW_STREAM_SCALE],
              1e-12);

    /*
     * Block fp8 (Qwen3-32B-FP8, 128 x 128 weight blocks) runs at the fp8 peak with the block
     * kernel's own efficiency (gemm_eff_fp8_block_frac), after a per-token-group quantization
     * kernel per layer: bf16 in (2 B), fp8 out (1 B) and an fp32 scale per 128 elements
     * (4/128 B): (2 + 1 + 4/128) T d bytes at bw_stream_scale, d = 5120, 64 layers. The
     * weights stream at bw_factor_weights_fp8_block_frac: a decode step of one token is
     * memory-bound, its QKV memory time 64 x gemm_fixed_fp8_block_s + bytes / (copy x f).
     */
    if (load_model("qwen3-32b-fp8", &m) != 0)
        return;
    sim_step_cost_compute(&m, &hw, &cfg, &pf, &c);
    CHECK_REL(c.ops[SIM_OP_QKV].compute_s,
              c.ops[SIM_OP_QKV].flops /
                      (hw.v[SIM_HWF_PEAK_FP8] * hw.v[SIM_HWF_GEMM_EFF_FP8_BLOCK]) +
                  64.0 * (3.0 + 4.0 / 128.0) * T * 5120.0 / hw.v[SIM_HWF_BW_STREAM_SCALE],
              1e-12);
    CHECK(hw.v[SIM_HWF_GEMM_EFF_FP8_BLOCK] != hw.v[SIM_HWF_GEMM_EFF_FP8]);
    sim_step_cost_compute(&m, &hw, &cfg, &st, &c);
    const double q1 = 64.0 * (3.0 + 4.0 / 128.0) * 1.0 * 5120.0 / hw.v[SIM_HWF_BW_STREAM_SCALE];
    CHECK_REL(c.ops[SIM_OP_QKV].memory_s,
              64.0 * hw.v[SIM_HWF_GEMM_FIXED_FP8_BLOCK] +
                  c.ops[SIM_OP_QKV].bytes /
                      (hw.v[SIM_HWF_BW_STREAM_COPY] * hw.v[SIM_HWF_BW_FACTOR_WEIGHTS_FP8_BLOCK]) +
                  q1,
              1e-12);
}

/*
 * GEMM kinds (hw.h sim_hw_gemm_figs, kernels.h sim_gemm_kind_time), from the shipped
 * profiles: B200 has an fp4 peak (9 PFLOP/s dense, datasheet) and derived fp4 figures;
 * H100 has none, so fp4 math falls back to its fp8 peak and efficiency; A100 has no fp8
 * units, so block fp8 runs weight-only at the 16-bit peak (FP8 Marlin). NVFP4 stores
 * 0.5 B per weight and an e4m3 scale per 16 (1/16 B): 0.5625 B.
 * One decode-like NVFP4 GEMM on B200, m = 1, n = k = 8192, by hand:
 *   bytes   = 8192^2 x 0.5625 (weights) + 8192 x 0.5625 (fp4 activations) + 2 x 8192 (out)
 *   memory  = gemm_fixed_fp4_s + bytes / (copy x bw_factor_weights_fp4_frac)
 *   quant   = (2 + 0.5625) x 8192 / bw_stream_scale (bf16 in, fp4 + scales out)
 *   time    = max(compute, memory) + quant; compute = 2 x 8192^2 / (9e15 x eff) is far less.
 */
static void gemm_kinds(void)
{
    sim_hw b200, h100, a100;
    if (load_hw("b200", &b200) != 0 || load_hw("h100-sxm", &h100) != 0 ||
        load_hw("a100-sxm-80gb", &a100) != 0)
        return;
    sim_gemm_figs g;
    sim_hw_gemm_figs(&b200, SIM_GEMM_KIND_FP4, &g);
    CHECK_REL(g.peak_flops_per_s, 9e15, 0.0);
    CHECK_REL(g.eff_frac, b200.v[SIM_HWF_GEMM_EFF_FP4], 0.0);
    CHECK_REL(g.weight_bytes, 0.5625, 0.0);
    sim_hw_gemm_figs(&h100, SIM_GEMM_KIND_FP4, &g);
    CHECK_REL(g.peak_flops_per_s, h100.v[SIM_HWF_PEAK_FP8], 0.0);
    CHECK_REL(g.eff_frac, h100.v[SIM_HWF_GEMM_EFF_FP8], 0.0);
    CHECK_REL(g.bw_factor_frac, h100.v[SIM_HWF_BW_FACTOR_WEIGHTS_FP8], 0.0);
    sim_hw_gemm_figs(&a100, SIM_GEMM_KIND_FP8_BLOCK, &g);
    CHECK_REL(g.peak_flops_per_s, a100.v[SIM_HWF_PEAK_BF16], 0.0);
    CHECK_REL(g.eff_frac, a100.v[SIM_HWF_GEMM_EFF_FP16], 0.0);
    CHECK_REL(g.weight_bytes, 1.0 + 4.0 / 16384.0, 0.0);

    sim_kernel_time kt;
    sim_gemm_kind_time(&b200, SIM_GEMM_KIND_FP4, SIM_GEMM_FLAT, 1.0, 8192.0, 8192.0, &kt);
    const double bytes = 8192.0 * 8192.0 * 0.5625 + 8192.0 * 0.5625 + 2.0 * 8192.0;
    const double mem =
        b200.v[SIM_HWF_GEMM_FIXED_FP4] +
        bytes / (b200.v[SIM_HWF_BW_STREAM_COPY] * b200.v[SIM_HWF_BW_FACTOR_WEIGHTS_FP4]);
    const double quant = 2.5625 * 8192.0 / b200.v[SIM_HWF_BW_STREAM_SCALE];
    CHECK_REL(kt.time_s, mem + quant, 1e-12);
    CHECK_INT(kt.bound, SIM_BOUND_MEMORY);
}

int main(void)
{
    multimodal_quantized();
    partial_moe_exclusions();
    bytes_per_scheme();
    ragged_edges();
    whole_model_and_exclusions();
    rejected();
    bundled_checkpoints();
    step_bytes_and_math();
    gemm_kinds();
    return check_report("test_quant");
}
