/*
 * test_step.c - per-operator FLOPs and bytes against hand derivations, and
 * properties of the roofline (monotonicity, bandwidth scaling, TP sharding,
 * the regime flip at the ridge point).
 */
#include <stdint.h>
#include <stdio.h>

#include "bundled.h"
#include "check.h"
#include "kernels.h"
#include "model_json.h"
#include "ops.h"
#include "engine.h"
#include "hw.h"
#include "step.h"
#include "toys.h"

/* A made-up GPU with "high-entropy" figures, so no number coincides by accident. */
static void test_hw(sim_hw *hw)
{
    const toy_fig figs[] = {
        {SIM_HWF_PEAK_FP16, 523.7e12},
        {SIM_HWF_PEAK_BF16, 523.7e12},
        {SIM_HWF_PEAK_FP8, 1047.4e12},
        {SIM_HWF_PEAK_FP32, 41.3e12},
        {SIM_HWF_MEM_CAPACITY, 64e9},
        {SIM_HWF_BW_HBM_PEAK, 2.385e12},
        {SIM_HWF_BW_STREAM_COPY, 2.04e12},
        {SIM_HWF_GEMM_EFF_FP16, 0.763},
        {SIM_HWF_BW_FACTOR_WEIGHTS, 0.917},
        {SIM_HWF_BW_FACTOR_KV, 0.681},
        {SIM_HWF_N_SM, 97},
        {SIM_HWF_L2, 37e6},
    };
    toy_hw_figs(hw, "", figs, sizeof(figs) / sizeof(figs[0]), SIM_PROV_ESTIMATED);
    hw->n_allreduce = 1;
    hw->allreduce[0] = (sim_allreduce){
        .n_gpus = 2, .latency_s = 7.3e-6, .bus_bw_bytes_per_s = 187e9, .prov = SIM_PROV_ESTIMATED};
    sim_hw_apply_defaults(hw);
}

/* The bundled model id on test_hw; 0, or -1 after counting a failed load. */
static int load_on_test_hw(const char *id, sim_model *m, sim_hw *hw)
{
    test_hw(hw);
    return load_model(id, m);
}

/*
 * Llama-2-7B, one sequence decoding at context 1024, fp16 (the acceptance case of issue 2).
 * d 4096, L 32, 32 heads of 128, F 11008, V 32000.
 * qkv: FLOPs 32 x 2 x 1 x 4096 x 12288 = 3,221,225,472;
 *      bytes 32 x (4096 x 12288 x 2 weights + 1 x (4096 + 12288) x 2 act) = 3,222,274,048.
 * attention: 1025 keys (1024 cached + the new one): FLOPs 32 x 4 x 32 x 128 x 1025 =
 *      537,395,200; bytes 32 x (2 x 1 x 32 x 128 x 2 (q in, o out) + 1025 x 2 x 32 x 128 x 2
 *      (K and V)) = 32 x (16,384 + 16,793,600) = 537,919,488.
 * o_proj: FLOPs 32 x 2 x 4096 x 4096 = 1,073,741,824. gate_up: 32 x 2 x 4096 x 22016 =
 *      5,771,362,304. down: 32 x 2 x 11008 x 4096 = 2,885,681,152.
 * lm_head: FLOPs 2 x 4096 x 32000 = 262,144,000; bytes 32000 x 4096 x 2 + (4096 + 32000) x 2
 *      = 262,216,192.
 * At TP 2 every sharded count halves (16 heads, 5504 of F, 16000 vocab rows).
 */
static void llama2_7b_decode_counts(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-2-7b", &m, &hw) != 0)
        return;
    sim_step s = {1, {{1, 1, 1024, 1}}};
    sim_step_cost c1, c2;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    sim_step_cost_compute(&m, &hw, &cfg, &s, &c1);
    CHECK_REL(c1.ops[SIM_OP_QKV].flops, 3221225472.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_QKV].bytes, 3222274048.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_ATTN_DECODE].flops, 537395200.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_ATTN_DECODE].bytes, 537919488.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_O_PROJ].flops, 1073741824.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_MLP_GATE_UP].flops, 5771362304.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_MLP_DOWN].flops, 2885681152.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_LM_HEAD].flops, 262144000.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_LM_HEAD].bytes, 262216192.0, 0.0);
    CHECK_REL(c1.ops[SIM_OP_ATTN_PREFILL].flops, 0.0, 0.0);
    CHECK_INT(c1.n_allreduce, 0);
    CHECK_REL(c1.comm_s, 0.0, 0.0);

    cfg = sim_run_cfg_plain(2, SIM_DTYPE_FP16);
    sim_step_cost_compute(&m, &hw, &cfg, &s, &c2);
    CHECK_REL(c2.ops[SIM_OP_QKV].flops, 3221225472.0 / 2.0, 0.0);
    CHECK_REL(c2.ops[SIM_OP_ATTN_DECODE].flops, 537395200.0 / 2.0, 0.0);
    CHECK_REL(c2.ops[SIM_OP_ATTN_DECODE].bytes, 537919488.0 / 2.0, 0.0);
    CHECK_REL(c2.ops[SIM_OP_LM_HEAD].flops, 262144000.0 / 2.0, 0.0);
    /* 65 all-reduces (2 per layer + embedding) of 1 x 4096 x 2 = 8192 bytes:
     * 65 x (7.3e-6 + 2 x 1/2 x 8192 / 187e9) s. */
    CHECK_INT(c2.n_allreduce, 65);
    CHECK_REL(c2.ops[SIM_OP_ALLREDUCE].time_s, 65.0 * (7.3e-6 + 8192.0 / 187e9), 1e-12);
    /* The gather of 1 x 32000 logits x 2 bytes, half of which come from the other GPU. */
    CHECK_REL(c2.ops[SIM_OP_LOGITS_GATHER].time_s, 7.3e-6 + 0.5 * 64000.0 / 187e9, 1e-12);
    /* About half per GPU overall (acceptance): the unsharded norms/embedding are tiny here. */
    CHECK_REL(c2.flops / c1.flops, 0.5, 0.01);
    CHECK_REL(c2.bytes / c1.bytes, 0.5, 0.01);
}

/*
 * Llama-3.1-8B prefill of one 1024-token prompt, bf16 (GQA 32/8, F 14336, V 128256).
 * qkv: 32 x 2 x 1024 x 4096 x (32 + 2 x 8) x 128 = 1,649,267,441,664 FLOPs.
 * attention (causal): pairs 1024 x 1025 / 2 = 524,800; 32 x 4 x 32 x 128 x 524,800 =
 *      275,146,342,400 FLOPs; K/V read once: 32 x 1024 x 2 x 8 x 128 x 2 = 134,217,728 bytes
 *      plus q and o: 32 x 2 x 1024 x 32 x 128 x 2 = 536,870,912 -> 671,088,640 bytes.
 * gate_up: 32 x 2 x 1024 x 4096 x 28672 = 7,696,581,394,432; down 3,848,290,697,216.
 * lm_head: only the last token samples: 2 x 4096 x 128256 = 1,050,673,152.
 * TP 2: 16 heads and 4 KV heads per GPU, 7168 of F, 64128 vocab rows: all of these halve.
 */
static void llama31_8b_prefill_counts(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-3.1-8b", &m, &hw) != 0)
        return;
    sim_step s = {1, {{1, 1024, 0, 1}}};
    for (int tp = 1; tp <= 2; tp++) {
        sim_step_cost c;
        sim_run_cfg cfg = sim_run_cfg_plain(tp, SIM_DTYPE_BF16);
        sim_step_cost_compute(&m, &hw, &cfg, &s, &c);
        double k = 1.0 / tp;
        CHECK_REL(c.ops[SIM_OP_QKV].flops, 1649267441664.0 * k, 0.0);
        CHECK_REL(c.ops[SIM_OP_ATTN_PREFILL].flops, 275146342400.0 * k, 0.0);
        CHECK_REL(c.ops[SIM_OP_ATTN_PREFILL].bytes, 671088640.0 * k, 0.0);
        CHECK_REL(c.ops[SIM_OP_MLP_GATE_UP].flops, 7696581394432.0 * k, 0.0);
        CHECK_REL(c.ops[SIM_OP_MLP_DOWN].flops, 3848290697216.0 * k, 0.0);
        CHECK_REL(c.ops[SIM_OP_LM_HEAD].flops, 1050673152.0 * k, 0.0);
        CHECK_REL(c.tokens, 1024.0, 0.0);
    }
}

/*
 * Mixtral-8x7B: 8 experts of 14336, top 2, 32 layers.
 * One decoding token touches 2 experts: E(1 - (1 - k/E)^1) = 8 x 0.25 = 2, so expert weights
 * read are 32 x 2 x 3 x 4096 x 14336 x 2 bytes = 22,548,578,304.
 * Four tokens: 8 x (1 - 0.75^4) = 8 x 0.68359375 = 5.46875 experts.
 * A 512-token prefill touches all 8 (to 1e-60): 32 x 8 x 3 x 4096 x 14336 x 2 =
 *      90,194,313,216 bytes; expert FLOPs 32 x 512 x 2 x (2 x 3 x 4096 x 14336 + 5 x 14336)
 *      = 32 x 1024 x 352,393,216 = 11,547,220,901,888.
 * At TP 2 each expert's intermediate dimension halves (7168): weights and FLOPs halve.
 */
static void mixtral_expert_counts(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("mixtral-8x7b", &m, &hw) != 0)
        return;
    CHECK_REL(sim_moe_expected_experts(8, 2, 1), 2.0, 1e-15);
    CHECK_REL(sim_moe_expected_experts(8, 2, 4), 5.46875, 1e-15);
    sim_step_cost c;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    sim_step dec = {1, {{1, 1, 1024, 1}}};
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_MOE_EXPERTS].weight_bytes, 22548578304.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_MLP_GATE_UP].flops, 0.0, 0.0);
    sim_step pre = {1, {{1, 512, 0, 1}}};
    for (int tp = 1; tp <= 2; tp++) {
        cfg = sim_run_cfg_plain(tp, SIM_DTYPE_BF16);
        sim_step_cost_compute(&m, &hw, &cfg, &pre, &c);
        CHECK_REL(c.ops[SIM_OP_MOE_EXPERTS].weight_bytes, 90194313216.0 / tp, 1e-15);
        CHECK_REL(c.ops[SIM_OP_MOE_EXPERTS].flops, 11547220901888.0 / tp, 1e-15);
        /* The router is replicated: 32 x 2 x 512 x 4096 x 8 FLOPs at any TP. */
        CHECK_REL(c.ops[SIM_OP_MOE_ROUTER].flops, 1073741824.0, 0.0);
    }
}

/*
 * The MoE router is never quantized and MiniMax-M2's runs in fp32 (vLLM minimax_m2.py:
 * MiniMaxM2MoE builds the gate as ReplicatedLinear(hidden, experts, params_dtype=torch.float32,
 * quant_config=None) and casts its input to fp32; every other MoE gate vLLM builds also has
 * quant_config=None, in the 16-bit dtype). MiniMax-M2.5 (../shared/data/hf-configs; skipped
 * without it): L 62, d 3072, E 256. A 512-token prefill at TP 2 (the router is replicated):
 *   FLOPs 62 x 2 x 512 x 3072 x 256 = 49,928,994,816;
 *   bytes 62 x (3072 x 256 x 4 weights + 512 x (3072 + 256) x 4 input and logits
 *              + 512 x 3072 x 4 the fp32 copy of the input)
 *         = 62 x (3,145,728 + 6,815,744 + 6,291,456) = 1,007,681,536;
 *   compute at the fp32 peak x the 16-bit GEMM efficiency: 49,928,994,816 / (41.3e12 x 0.763);
 *   memory: bytes / (copy 2.04e12 x weights factor 0.917) + 2 kernels x 62 x gemm_fixed_s.
 * Resident router weights: 62 x (3072 x 256 x 4 + 256 x 4 bias) = 195,098,624 bytes a GPU.
 * The fp8-block checkpoint's router equals that of the same model without quantization_config,
 * and a 16-bit router counts 2-byte weights, input and logits at the bf16 peak.
 */
static void moe_router_unquantized_fp32(void)
{
    sim_model m;
    if (load_shared_config("minimax-m2.5.json", "moe_router_unquantized_fp32", &m) != 0)
        return;
    sim_hw hw;
    test_hw(&hw);
    CHECK(m.router_fp32);
    CHECK_INT(m.quant.method, SIM_QUANT_FP8);
    sim_weight_bytes w;
    sim_model_weight_bytes(&m, 2, SIM_DTYPE_BF16, &w);
    CHECK_REL(w.router, 195098624.0, 1e-15);

    sim_run_cfg cfg = sim_run_cfg_plain(2, SIM_DTYPE_BF16);
    sim_step pre = {1, {{1, 512, 0, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &pre, &c);
    const sim_op_cost *r = &c.ops[SIM_OP_MOE_ROUTER];
    CHECK_REL(r->flops, 49928994816.0, 1e-15);
    CHECK_REL(r->bytes, 1007681536.0, 1e-15);
    CHECK_REL(r->compute_s, 49928994816.0 / (41.3e12 * 0.763), 1e-12);
    CHECK_REL(r->memory_s, 1007681536.0 / (2.04e12 * 0.917) + 2.0 * 62.0 * hw.v[SIM_HWF_GEMM_FIXED],
              1e-12);

    sim_model plain = m;
    plain.quant = (sim_quant){0};
    sim_step_cost cp;
    sim_step_cost_compute(&plain, &hw, &cfg, &pre, &cp);
    CHECK_REL(cp.ops[SIM_OP_MOE_ROUTER].bytes, r->bytes, 0.0);
    CHECK_REL(cp.ops[SIM_OP_MOE_ROUTER].time_s, r->time_s, 0.0);

    /* A 16-bit router: 62 x (3072 x 256 x 2 + 512 x 3328 x 2) = 62 x 4,980,736 bytes, computed
     * at the bf16 peak x efficiency; the fp8-block checkpoint still leaves it unquantized. */
    sim_model half = m;
    half.router_fp32 = false;
    sim_step_cost ch;
    sim_step_cost_compute(&half, &hw, &cfg, &pre, &ch);
    CHECK_REL(ch.ops[SIM_OP_MOE_ROUTER].bytes, 62.0 * 4980736.0, 1e-15);
    CHECK_REL(ch.ops[SIM_OP_MOE_ROUTER].compute_s, 49928994816.0 / (523.7e12 * 0.763), 1e-12);
}

/*
 * MiniMax-M2's q/k RMSNorms span all heads of the layer (vLLM MiniMaxText01RMSNormTP.forward_qk),
 * so at TP > 1 each layer all-reduces every token's q and k variances: 2 fp32 values a token.
 * A decode of 4 tokens at TP 2 (L 62, d 3072, hb 2): the Megatron all-reduces, 2 a layer and
 * one after the embedding, of 4 x 3072 x 2 = 24,576 bytes (125), and 62 more of 4 x 2 x 4 = 32
 * bytes: 187 all-reduces, 125 x 24,576 + 62 x 32 = 3,073,984 bytes, each timed as an all-reduce
 * of its size. At TP 1 there is none.
 */
static void minimax_qk_norm_allreduce(void)
{
    sim_model m;
    if (load_shared_config("minimax-m2.5.json", "minimax_qk_norm_allreduce", &m) != 0)
        return;
    CHECK(m.qk_norm_all_heads);
    sim_hw hw;
    test_hw(&hw);
    sim_run_cfg cfg = sim_run_cfg_plain(2, SIM_DTYPE_BF16);
    sim_step dec = {1, {{4, 1, 1000, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_INT(c.n_allreduce, 187);
    CHECK_REL(c.ops[SIM_OP_ALLREDUCE].bytes, 3073984.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_ALLREDUCE].time_s,
              125.0 * sim_allreduce_time_s(&hw, 2, 24576.0) +
                  62.0 * sim_allreduce_time_s(&hw, 2, 32.0),
              1e-12);
    cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_INT(c.n_allreduce, 0);
}

/* sum_{i=1..t} min(c + i, W): hand cases. */
static void attention_pairs(void)
{
    CHECK_REL(sim_attn_pairs(1, 1024, 0), 1025.0, 0.0);
    CHECK_REL(sim_attn_pairs(4, 0, 0), 10.0, 0.0);           /* 1 + 2 + 3 + 4 */
    CHECK_REL(sim_attn_pairs(4, 10, 0), 4 * 10 + 10.0, 0.0); /* 11 + 12 + 13 + 14 */
    CHECK_REL(sim_attn_pairs(4, 10, 12), 11 + 12 + 12 + 12.0, 0.0);
    CHECK_REL(sim_attn_pairs(3, 0, 2), 1 + 2 + 2.0, 0.0);
    CHECK_REL(sim_attn_pairs(1, 5000, 4096), 4096.0, 0.0);
}

/* Step time never decreases as batch, context or prompt length grow: one field of a single
 * group swept from lo to hi by inc, the others held. */
static void monotone_in_tokens_and_context(void)
{
    static const struct {
        const char *name;
        sim_group base;
        int field; /* 0 count (batch), 1 new_tokens (prompt), 2 context_tokens */
        int64_t lo, hi, inc;
    } sweeps[] = {
        {"batch at context 2048", {1, 1, 2048, 1}, 0, 1, 512, 1},
        {"context of 16 decodes", {16, 1, 0, 1}, 2, 0, 32768, 97},
        {"prompt length", {1, 1, 0, 1}, 1, 1, 16384, 61},
    };
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-3.1-8b", &m, &hw) != 0)
        return;
    for (int tp = 1; tp <= 4; tp *= 2) {
        sim_run_cfg cfg = sim_run_cfg_plain(tp, SIM_DTYPE_BF16);
        for (size_t k = 0; k < sizeof(sweeps) / sizeof(sweeps[0]); k++) {
            double prev = 0.0;
            int ok = 1;
            for (int64_t v = sweeps[k].lo; v <= sweeps[k].hi; v += sweeps[k].inc) {
                sim_step s = {1, {sweeps[k].base}};
                int64_t *f[] = {&s.groups[0].count, &s.groups[0].new_tokens,
                                &s.groups[0].context_tokens};
                *f[sweeps[k].field] = v;
                sim_step_cost c;
                sim_step_cost_compute(&m, &hw, &cfg, &s, &c);
                ok &= c.step_s >= prev;
                prev = c.step_s;
            }
            if (!ok)
                printf("  (%s, TP %d)\n", sweeps[k].name, tp);
            CHECK(ok);
        }
    }
}

/* A memory-bound step (decode, TP 1, no comm) takes exactly half as long at twice the bandwidth. */
static void memory_bound_time_halves_with_double_bandwidth(void)
{
    sim_model m;
    sim_hw hw, hw2;
    if (load_on_test_hw("llama-2-7b", &m, &hw) != 0)
        return;
    hw2 = hw;
    hw2.v[SIM_HWF_BW_STREAM_COPY] *= 2.0;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    sim_step s = {1, {{8, 1, 3000, 1}}};
    sim_step_cost a, b;
    sim_step_cost_compute(&m, &hw, &cfg, &s, &a);
    sim_step_cost_compute(&m, &hw2, &cfg, &s, &b);
    CHECK(a.compute_s < a.memory_s);
    for (int i = 0; i < SIM_OP_COUNT; i++)
        CHECK(a.ops[i].bound != SIM_BOUND_COMPUTE);
    CHECK_REL(b.roofline_s, a.roofline_s / 2.0, 1e-12);
}

/* MHA: the sharded traffic (weights, KV cache, attention) per GPU halves from TP 1 to TP 2. */
static void mha_sharded_bytes_halve(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-2-7b", &m, &hw) != 0)
        return;
    sim_step s = {2, {{3, 1, 777, 1}, {1, 211, 0, 1}}};
    sim_step_cost c1, c2;
    sim_run_cfg cfg1 = sim_run_cfg_plain(1, SIM_DTYPE_FP16),
                cfg2 = sim_run_cfg_plain(2, SIM_DTYPE_FP16);
    sim_step_cost_compute(&m, &hw, &cfg1, &s, &c1);
    sim_step_cost_compute(&m, &hw, &cfg2, &s, &c2);
    static const sim_op_kind sharded[] = {SIM_OP_QKV, SIM_OP_O_PROJ, SIM_OP_MLP_GATE_UP,
                                          SIM_OP_MLP_DOWN, SIM_OP_LM_HEAD};
    for (size_t i = 0; i < sizeof(sharded) / sizeof(sharded[0]); i++)
        CHECK_REL(c2.ops[sharded[i]].weight_bytes, c1.ops[sharded[i]].weight_bytes / 2.0, 1e-15);
    CHECK_REL(c2.ops[SIM_OP_ATTN_DECODE].bytes, c1.ops[SIM_OP_ATTN_DECODE].bytes / 2.0, 1e-15);
    CHECK_REL(c2.ops[SIM_OP_ATTN_PREFILL].bytes, c1.ops[SIM_OP_ATTN_PREFILL].bytes / 2.0, 1e-15);
    CHECK_REL(c2.ops[SIM_OP_KV_WRITE].bytes, c1.ops[SIM_OP_KV_WRITE].bytes / 2.0, 1e-15);
}

/* A GEMM is memory-bound below the ridge point and compute-bound above it. */
static void regime_flips_at_ridge(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-2-7b", &m, &hw) != 0)
        return;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    double ridge = sim_hw_ridge_flops_per_byte(&hw, SIM_DTYPE_FP16);
    /* 523.7e12 x 0.763 / (2.04e12 x 0.917) = 213.6 FLOP/B. */
    CHECK_REL(ridge, 523.7e12 * 0.763 / (2.04e12 * 0.917), 1e-15);
    int flipped = 0, consistent = 1;
    for (int64_t t = 1; t <= 4096; t *= 2) {
        sim_step s = {1, {{1, t, 0, 1}}};
        sim_step_cost c;
        sim_step_cost_compute(&m, &hw, &cfg, &s, &c);
        const sim_op_cost *q = &c.ops[SIM_OP_QKV];
        double ai = q->flops / q->bytes;
        sim_bound want = ai > ridge ? SIM_BOUND_COMPUTE : SIM_BOUND_MEMORY;
        consistent &= q->bound == want;
        flipped |= q->bound == SIM_BOUND_COMPUTE;
    }
    CHECK(consistent);
    CHECK(flipped);
}

/* Whole-step mode: max of sums <= sum of maxima, and >= each sum. */
static void step_mode_bounds(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-3.1-8b", &m, &hw) != 0)
        return;
    sim_step s = {2, {{1, 900, 0, 1}, {40, 1, 1500, 1}}};
    sim_run_cfg op = sim_run_cfg_plain(2, SIM_DTYPE_BF16), st = op;
    st.mode = SIM_ROOFLINE_STEP;
    sim_step_cost a, b;
    sim_step_cost_compute(&m, &hw, &op, &s, &a);
    sim_step_cost_compute(&m, &hw, &st, &s, &b);
    CHECK(b.roofline_s <= a.roofline_s);
    CHECK(b.roofline_s >= b.compute_s + b.comm_s && b.roofline_s >= b.memory_s + b.comm_s);
}

/* Calibration: step = alpha x roofline + beta. */
static void calibration_applies(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-3.1-8b", &m, &hw) != 0)
        return;
    sim_step s = {1, {{7, 1, 333, 1}}};
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    sim_step_cost a, b;
    sim_step_cost_compute(&m, &hw, &cfg, &s, &a);
    cfg.alpha = 1.173;
    cfg.beta_s = 4.21e-4;
    sim_step_cost_compute(&m, &hw, &cfg, &s, &b);
    CHECK_REL(b.step_s, 1.173 * a.roofline_s + 4.21e-4, 1e-15);
}

static void step_check_rejects_bad_steps(void)
{
    sim_model m;
    if (load_model("llama-2-7b", &m) != 0)
        return;
    struct sim_err err;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    sim_step beyond = {1, {{1, 1, 4096, 1}}}; /* 4096 + 1 > max_position_embeddings 4096 */
    CHECK(sim_step_check(&m, &cfg, &beyond, &err) == SIM_ERANGE);
    CHECK_CONTAINS(err.msg, "exceeds max_position_embeddings = 4096");
    sim_step fits = {1, {{1, 1, 4095, 1}}};
    CHECK(sim_step_check(&m, &cfg, &fits, &err) == SIM_OK);
    sim_step empty = {0, {{0}}};
    CHECK(sim_step_check(&m, &cfg, &empty, &err) == SIM_EINVAL);
    cfg.tp = 3;
    CHECK(sim_step_check(&m, &cfg, &fits, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "does not divide num_attention_heads = 32");
}

/* Mistral's 4096-token sliding window caps decode attention at 4096 keys. */
static void sliding_window_caps_context(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("mistral-7b", &m, &hw) != 0)
        return;
    CHECK_INT(m.sliding_window, 4096);
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    sim_step a = {1, {{1, 1, 8000, 1}}}, b = {1, {{1, 1, 20000, 1}}};
    sim_step_cost ca, cb;
    sim_step_cost_compute(&m, &hw, &cfg, &a, &ca);
    sim_step_cost_compute(&m, &hw, &cfg, &b, &cb);
    /* 32 layers x 4 x 32 heads x 128 x 4096 keys. */
    CHECK_REL(ca.ops[SIM_OP_ATTN_DECODE].flops, 32.0 * 4 * 32 * 128 * 4096, 0.0);
    CHECK_REL(cb.ops[SIM_OP_ATTN_DECODE].bytes, ca.ops[SIM_OP_ATTN_DECODE].bytes, 0.0);
}

/*
 * The single-kernel timing figures of issue 9, on test_hw (copy 2.04e12 B/s), by hand:
 * fp8 GEMM m 4 x k 8192 -> n 8192 with bw_factor_weights_fp8_frac 0.5 and gemm_fixed_fp8_s
 *   6e-6: bytes = 8192 x 8192 x 1 + 4 x (8192 + 8192) x 2 = 67,108,864 + 131,072 =
 *   67,239,936; memory = 6e-6 + 67,239,936 / (2.04e12 x 0.5) = 6e-6 + 65.9215e-6 s;
 *   compute = 2 x 4 x 8192^2 / (1047.4e12 x 0.70 default) = 0.7323e-6 s -> memory-bound.
 *   The bf16 GEMM of the same shape keeps gemm_fixed_s (0) and factor 0.917.
 * decode: batch 16 x 4096 keys, 32 heads, 8 KV heads of 128, fp8 KV (1 B), with
 *   bw_factor_kv_gather_fp8_frac 0.4, attn_fixed_s 9e-6, attn_decode_seq_head_s 2e-9:
 *   bytes = 16 x (2 x 32 x 128 x 2 + 4096 x 2 x 8 x 128 x 1) = 16 x (16,384 + 8,388,608)
 *   = 134,479,872; memory = 9e-6 + 2e-9 x 16 x 32 + 134,479,872 / (2.04e12 x 0.4)
 *   = 9e-6 + 1.024e-6 + 164.8038e-6 s.
 * prefill: 1 prompt of 1024 tokens, 32 heads, 8 KV heads of 128, attn_eff 0.5,
 *   attn_prefill_fixed_s 8e-6, attn_prefill_seq_half_tokens 512: FLOPs = 4 x 32 x 128 x
 *   1024 x 1025 / 2 = 8,598,323,200; compute = 8e-6 + 8,598,323,200 / (523.7e12 x 0.5) x
 *   (1 + 512/1024) = 8e-6 + 49.2552e-6 s.
 */
static void issue9_kernel_figures(void)
{
    sim_hw hw;
    test_hw(&hw);
    hw.v[SIM_HWF_BW_FACTOR_WEIGHTS_FP8] = 0.5;
    hw.v[SIM_HWF_GEMM_FIXED_FP8] = 6e-6;
    hw.v[SIM_HWF_BW_FACTOR_KV_FP8] = 0.4;
    hw.v[SIM_HWF_ATTN_FIXED] = 9e-6;
    hw.v[SIM_HWF_ATTN_DECODE_SEQ_HEAD] = 2e-9;
    hw.v[SIM_HWF_ATTN_EFF] = 0.5;
    hw.v[SIM_HWF_ATTN_PREFILL_FIXED] = 8e-6;
    hw.v[SIM_HWF_ATTN_PREFILL_SEQ_HALF] = 512.0;
    sim_kernel_time k;
    sim_gemm_time(&hw, SIM_DTYPE_FP8, SIM_GEMM_FLAT, 4.0, 8192.0, 8192.0, &k);
    CHECK_REL(k.bytes, 67239936.0, 0.0);
    CHECK_REL(k.time_s, 6e-6 + 67239936.0 / (2.04e12 * 0.5), 1e-12);
    CHECK_INT(k.bound, SIM_BOUND_MEMORY);
    sim_gemm_time(&hw, SIM_DTYPE_BF16, SIM_GEMM_FLAT, 4.0, 8192.0, 8192.0, &k);
    CHECK_REL(k.time_s, (8192.0 * 8192.0 * 2.0 + 131072.0) / (2.04e12 * 0.917), 1e-12);

    sim_attn_decode_time(&hw, 16.0, 4096.0, 32.0, 8.0, 128.0, 1.0, &k);
    CHECK_REL(k.bytes, 134479872.0, 0.0);
    CHECK_REL(k.time_s, 9e-6 + 1.024e-6 + 134479872.0 / (2.04e12 * 0.4), 1e-12);
    /* bf16 KV: twice the KV bytes at bw_factor_kv_gather_frac 0.681. */
    sim_attn_decode_time(&hw, 16.0, 4096.0, 32.0, 8.0, 128.0, 2.0, &k);
    CHECK_REL(k.time_s, 9e-6 + 1.024e-6 + (16.0 * (16384.0 + 16777216.0)) / (2.04e12 * 0.681),
              1e-12);

    sim_attn_prefill_time(&hw, 1.0, 1024.0, 32.0, 8.0, 128.0, &k);
    CHECK_REL(k.flops, 8598323200.0, 0.0);
    CHECK_REL(k.time_s, 8e-6 + 8598323200.0 / (523.7e12 * 0.5) * 1.5, 1e-12);
    CHECK_INT(k.bound, SIM_BOUND_COMPUTE);
}

/*
 * fp8 GEMMs with a gemm_fp8_dispatch table, on test_hw (97 SMs, copy = scale 2.04e12 B/s,
 * fp8 peak 1047.4e12) with gemm_eff_fp8_frac 0.6, bw_factor_weights_fp8_frac 0.5 and
 * gemm_fixed_fp8_s 6e-6; table [[64, 0, 64, 64, 1, 1], [0, 0, 128, 128, 2, 1]], by hand:
 * m 300 x k 4096 -> n 1000 takes the second entry: ceil(300/128) = 3 tiles, rounded up to
 *   whole clusters of 2 -> 4; ceil(1000/128) = 8; tile_eff = 300 x 1000 / (512 x 1024) =
 *   0.57220458984375; 32 tiles on 97 SMs: wq_eff = 32/97; dim_eff = 0.188771...
 *   compute = 2 x 300 x 1000 x 4096 / (1047.4e12 x 0.6 x dim_eff) = 20.7165 us;
 *   GEMM bytes = 4096 x 1000 + 300 x 4096 (fp8 activations) + 2 x 300 x 1000 = 5,924,800,
 *   memory = 6e-6 + 5,924,800 / 1.02e12 = 11.8086 us -> compute-bound;
 *   quantization kernel = 3 x 300 x 4096 / 2.04e12 = 1.80706 us, added: 22.5236 us.
 * m 48 x k 4096 -> n 2000 takes the first entry: one m tile of 64, 32 n tiles;
 *   dim_eff = 48 x 2000 / (64 x 2048) x 32/97 = 0.2416241...
 */
static void fp8_dispatch_tiles_and_quant_kernel(void)
{
    sim_hw hw;
    test_hw(&hw);
    hw.v[SIM_HWF_GEMM_EFF_FP8] = 0.6;
    hw.v[SIM_HWF_BW_FACTOR_WEIGHTS_FP8] = 0.5;
    hw.v[SIM_HWF_GEMM_FIXED_FP8] = 6e-6;
    hw.n_fp8_cfg = 2;
    hw.fp8_cfg[0] = (struct sim_fp8_cfg){64, 0, 64, 64, 1, 1};
    hw.fp8_cfg[1] = (struct sim_fp8_cfg){0, 0, 128, 128, 2, 1};
    const double dim = 300.0 * 1000.0 / (512.0 * 1024.0) * 32.0 / 97.0;
    CHECK_REL(sim_gemm_fp8_dispatch_eff(&hw, 300.0, 1000.0), dim, 1e-15);
    CHECK_REL(sim_gemm_fp8_dispatch_eff(&hw, 48.0, 2000.0),
              48.0 * 2000.0 / (64.0 * 2048.0) * 32.0 / 97.0, 1e-15);
    sim_kernel_time k;
    sim_gemm_time(&hw, SIM_DTYPE_FP8, SIM_GEMM_FLAT, 300.0, 1000.0, 4096.0, &k);
    const double compute = 2457600000.0 / (1047.4e12 * 0.6 * dim), quant = 3686400.0 / 2.04e12;
    CHECK_REL(compute, 20.7165e-6, 1e-5); /* the hand value above */
    CHECK_REL(k.time_s, compute + quant, 1e-12);
    CHECK_REL(k.time_s, 22.5236e-6, 1e-5);
    CHECK_REL(k.bytes, 5924800.0 + 3686400.0, 0.0);
    CHECK_INT(k.bound, SIM_BOUND_COMPUTE);
    /* The tile-wave model takes the dispatched tiles for fp8, not gemm_tiles. */
    sim_kernel_time kw;
    sim_gemm_time(&hw, SIM_DTYPE_FP8, SIM_GEMM_TILE_WAVE, 300.0, 1000.0, 4096.0, &kw);
    CHECK_REL(kw.time_s, k.time_s, 0.0);
    /* bf16 GEMMs are untouched by the fp8 table. */
    sim_gemm_time(&hw, SIM_DTYPE_BF16, SIM_GEMM_FLAT, 4.0, 8192.0, 8192.0, &k);
    CHECK_REL(k.time_s, (8192.0 * 8192.0 * 2.0 + 131072.0) / (2.04e12 * 0.917), 1e-12);
}

/*
 * Step reuse and decode runs (docs/model.md, "Decode runs"). sim_step_cost_next must give
 * the same cost, bit for bit, as sim_step_cost_compute for a sequence of steps that reuse or
 * change the token count. sim_step_cost_decode_run must equal the sum of the n steps' roofline
 * times computed one by one (to rounding, 1e-12), in both roofline modes, including runs in
 * which attention (op mode) or the whole step (step mode) crosses from memory- to
 * compute-bound: the GPU's 16-bit peak is swept down so the crossing falls inside runs, and
 * the test counts that it did. A sliding window reached within the run, or a prefill group,
 * is refused.
 */
static void decode_runs_sum_steps(void)
{
    const char *ids[] = {"llama-2-7b", "llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"};
    const double peaks[] = {523.7e12, 40e12,  20e12,  14e12,  10e12,  7e12,
                            5e12,     3.5e12, 2.5e12, 1.8e12, 1.3e12, 1e12};
    const int64_t lens[] = {2, 3, 100, 1000};
    int crossed_op = 0, crossed_step = 0, cases = 0;
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        sim_model m;
        if (load_model(ids[i], &m) != 0)
            return;
        for (size_t p = 0; p < sizeof(peaks) / sizeof(peaks[0]); p++) {
            sim_hw hw;
            test_hw(&hw);
            hw.v[SIM_HWF_PEAK_BF16] = hw.v[SIM_HWF_PEAK_FP16] = peaks[p];
            for (int mode = 0; mode < SIM_ROOFLINE_MODE_COUNT; mode++) {
                sim_run_cfg cfg = sim_run_cfg_plain(2, SIM_DTYPE_BF16);
                cfg.mode = (sim_roofline_mode)mode;
                cfg.alpha = 1.13;
                cfg.beta_s = 2e-4;
                for (size_t l = 0; l < 2 * sizeof(lens) / sizeof(lens[0]); l++) {
                    const int64_t n = lens[l % 4];
                    /* Long contexts, and short ones (Q and O bytes weigh at first). */
                    sim_step st =
                        l < 4 ? (sim_step){3, {{5, 1, 17, 1}, {2, 1, 700, 1}, {9, 1, 3000, 1}}}
                              : (sim_step){2, {{5, 1, 3, 1}, {2, 1, 30, 1}}};
                    sim_step_cost last, one, reuse = {0}, first = {0}, end = {0};
                    double sum = 0.0, want = 0.0;
                    CHECK_INT(sim_step_cost_decode_run(&m, &hw, &cfg, &st, n, &last, &sum), 1);
                    for (int64_t k = 0; k < n; k++) {
                        sim_step sk = st;
                        for (int g = 0; g < sk.n_groups; g++)
                            sk.groups[g].context_tokens += k;
                        sim_step_cost_compute(&m, &hw, &cfg, &sk, &one);
                        sim_step_cost_next(&m, &hw, &cfg, &sk, &reuse);
                        CHECK(reuse.roofline_s == one.roofline_s && reuse.flops == one.flops &&
                              reuse.memory_s == one.memory_s);
                        want += one.roofline_s;
                        if (k == 0)
                            first = one;
                        end = one;
                    }
                    CHECK_REL(sum, want, 1e-12);
                    CHECK(last.roofline_s == end.roofline_s);
                    crossed_op += mode == SIM_ROOFLINE_OP && first.ops[SIM_OP_ATTN_DECODE].bound !=
                                                                 end.ops[SIM_OP_ATTN_DECODE].bound;
                    crossed_step += mode == SIM_ROOFLINE_STEP && first.bound != end.bound;
                    cases++;
                }
            }
        }
    }
    CHECK(cases == 4 * 12 * 2 * 8);
    CHECK(crossed_op > 0);
    CHECK(crossed_step > 0);
    /* A prefill then a decode: the token count changes, so next recomputes everything. */
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-3.1-8b", &m, &hw) != 0)
        return;
    const sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    sim_step pf = {1, {{2, 300, 0, 1}}}, dec = {1, {{2, 1, 300, 1}}};
    sim_step_cost a = {0}, b;
    sim_step_cost_next(&m, &hw, &cfg, &pf, &a);
    sim_step_cost_compute(&m, &hw, &cfg, &pf, &b);
    CHECK(a.roofline_s == b.roofline_s && a.bytes == b.bytes);
    sim_step_cost_next(&m, &hw, &cfg, &dec, &a);
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &b);
    CHECK(a.roofline_s == b.roofline_s && a.bytes == b.bytes && a.tokens == 2.0);
    /* Not a decode run: a prefill group; a 4096-token window reached at step 97 of 100. */
    double sum = -1.0;
    CHECK_INT(sim_step_cost_decode_run(&m, &hw, &cfg, &pf, 10, &b, &sum), 0);
    m.sliding_window = 4096;
    sim_step w = {1, {{2, 1, 4000, 1}}};
    CHECK_INT(sim_step_cost_decode_run(&m, &hw, &cfg, &w, 96, &b, &sum), 1);
    CHECK_INT(sim_step_cost_decode_run(&m, &hw, &cfg, &w, 100, &b, &sum), 0);
    CHECK_INT(sim_step_cost_decode_run(&m, &hw, &cfg, &w, 1, &b, &sum), 0);
}

/*
 * Qwen2's max_window_layers (HF Qwen2Attention: the window applies to layers >= it): Qwen2-7B
 * (28 layers, 28/4 heads of 128) with use_sliding_window, a 4096-token window and
 * max_window_layers 20: 20 layers attend to all 10001 keys of a decode at context 10000, 8
 * to 4096. FLOPs 4 x 28 x 128 x (8 x 4096 + 20 x 10001) = 14336 x 232788 = 3,337,248,768;
 * bytes 28 x 2 x 28 x 128 x 2 (q, o) + (8 x 4096 + 20 x 10001) x 2 x 4 x 128 x 2 (K, V)
 * = 401,408 + 476,749,824 = 477,151,232. With max_window_layers 28 no layer is windowed.
 */
static void qwen2_max_window_layers(void)
{
    sim_model m;
    sim_hw hw;
    struct sim_err err;
    test_hw(&hw);
    if (sim_model_load(SIM_SOURCE_DIR "/tests/data/model_qwen2_window.json", "qwen2-window", &m,
                       &err) != SIM_OK) {
        printf("FAIL load: %s\n", err.msg);
        check_fail_count++;
        return;
    }
    CHECK_INT(m.sliding_window, 4096);
    CHECK_INT(m.full_attn_layers, 20);
    const sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    const sim_step dec = {1, {{1, 1, 10000, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 3337248768.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 477151232.0, 0.0);
    m.full_attn_layers = 0;
    m.sliding_window = 0;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 14336.0 * 28 * 10001, 0.0);
    m.sliding_window = 4096;
    m.full_attn_layers = 28; /* as many as the layers: refused */
    CHECK_INT(sim_model_validate(&m, &err), SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "max_window_layers");
}

/*
 * GQA reuse in decode attention (hw flag attn_decode_kv_per_q_head_flag; docs/model.md,
 * "Attention"). Llama-3.1-8B, TP 1, bf16, one sequence decoding at context 1024 (1025 keys):
 *   shared per KV head (flag 0): 32 x (2 x 32 x 128 x 2 + 1025 x 2 x 8 x 128 x 2)
 *                              = 32 x (16,384 + 4,198,400) = 134,873,088 bytes;
 *   per query head (flag 1):     32 x (16,384 + 1025 x 2 x 32 x 128 x 2) = 537,919,488 bytes,
 * as a full-attention (MHA) model's would be. FLOPs, prefill and the other operators are the
 * same either way.
 */
static void gqa_reuse_flag(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-3.1-8b", &m, &hw) != 0)
        return;
    const sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    const sim_step dec = {1, {{1, 1, 1024, 1}}}, pf = {1, {{1, 512, 0, 1}}};
    sim_step_cost a, b, pa, pb;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &a);
    sim_step_cost_compute(&m, &hw, &cfg, &pf, &pa);
    CHECK_REL(a.ops[SIM_OP_ATTN_DECODE].bytes, 134873088.0, 0.0);
    hw.v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] = 1.0;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &b);
    sim_step_cost_compute(&m, &hw, &cfg, &pf, &pb);
    CHECK_REL(b.ops[SIM_OP_ATTN_DECODE].bytes, 537919488.0, 0.0);
    CHECK_REL(b.ops[SIM_OP_ATTN_DECODE].flops, a.ops[SIM_OP_ATTN_DECODE].flops, 0.0);
    CHECK_REL(b.ops[SIM_OP_QKV].time_s, a.ops[SIM_OP_QKV].time_s, 0.0);
    CHECK_REL(pb.roofline_s, pa.roofline_s, 0.0);
    CHECK(b.roofline_s > a.roofline_s);
    /* Only 0 and 1 are flags. */
    struct sim_err err;
    hw.v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] = 0.5;
    CHECK_INT(sim_hw_validate(&hw, &err), SIM_ERANGE);
    CHECK_CONTAINS(err.msg, "attn_decode_kv_per_q_head_flag: must be 0 or 1");
    /* The blocks-in-flight figures: a shared memory in MB (not bytes) or a block rate in
     * GB/s written as 8 (B/s) is a unit mistake (docs/limits.md). */
    hw.v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] = 0.0;
    hw.v[SIM_HWF_SMEM_PER_SM] = 64.0;
    hw.prov[SIM_HWF_SMEM_PER_SM] = SIM_PROV_DATASHEET;
    CHECK_INT(sim_hw_validate(&hw, &err), SIM_ERANGE);
    CHECK_CONTAINS(err.msg, "smem_per_sm_bytes: out of its physical range");
    hw.v[SIM_HWF_SMEM_PER_SM] = 65536.0;
    hw.v[SIM_HWF_ATTN_DECODE_BLOCK_BW] = 8.0;
    hw.prov[SIM_HWF_ATTN_DECODE_BLOCK_BW] = SIM_PROV_DERIVED;
    CHECK_INT(sim_hw_validate(&hw, &err), SIM_ERANGE);
    CHECK_CONTAINS(err.msg, "attn_decode_block_bw_bytes_per_s: out of its physical range");
    hw.v[SIM_HWF_ATTN_DECODE_BLOCK_BW] = 8e9;
    CHECK_INT(sim_hw_validate(&hw, &err), SIM_OK);
}

/*
 * vLLM PagedAttention's V1/V2 choice (sim_decode_attn; vllm/attention/ops/paged_attn.py:
 * use_v1 = max_seq_len <= 8192 and (partitions == 1 or num_seqs x num_heads > 512),
 * partitions of 512 tokens; under CUDA graphs the kernel was recorded with max_seq_len 8192
 * and the batch padded to 1, 2, 4 or a multiple of 8, up to 256). Mistral-7B (L 32, 32 query
 * heads, 8 KV heads of 128, window 4096), TP 1, fp16, decodes at context 2047 (2048 keys).
 * Bytes per sequence, all layers:
 *   V2 (K/V once per KV head): 32 x (2 x 32 x 128 x 2 + 2048 x 2 x 8 x 128 x 2)
 *                            = 32 x (16,384 + 8,388,608) = 268,959,744
 *   V1 (once per query head):  32 x (16,384 + 2048 x 2 x 32 x 128 x 2) = 1,074,266,112
 * Graphs: 32 sequences x 32 heads = 1024 > 512: V1; 16 x 32 = 512: V2; 17 pads to 24,
 * 24 x 32 = 768: V1; 300 > 256 runs eagerly at max_seq_len 2048 (4 partitions), 9600: V1.
 * Eager: 4 sequences at 2048 (4 partitions, 128): V2; 17 at context 99 (100 tokens, one
 * partition): V1; 32 at context 9000 (max_seq_len 9001 > 8192): V2.
 * TP 2 (16 query heads per GPU): 32 x 16 = 512: V2; 64 x 16 = 1024: V1.
 */
static void paged_attention_kernel_choice(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("mistral-7b", &m, &hw) != 0)
        return;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    const sim_decode_attn rule = {.paged = 1,
                                  .v1_max_seq_len = 8192,
                                  .v1_min_seq_heads = 512,
                                  .partition_tokens = 512,
                                  .graph_max_seq_len = 8192,
                                  .graph_max_batch = 256,
                                  .graph_batch_align = 8};
    const double v2 = 268959744.0, v1 = 1074266112.0;
    const struct {
        int64_t seqs, context;
        int eager, tp;
        sim_decode_kernel k;
        double bytes_per_seq; /* at TP 1 */
    } cases[] = {
        {32, 2047, 0, 1, SIM_DECODE_PAGED_V1, v1},  {16, 2047, 0, 1, SIM_DECODE_PAGED_V2, v2},
        {17, 2047, 0, 1, SIM_DECODE_PAGED_V1, v1},  {300, 2047, 0, 1, SIM_DECODE_PAGED_V1, v1},
        {4, 2047, 1, 1, SIM_DECODE_PAGED_V2, v2},   {17, 99, 1, 1, SIM_DECODE_PAGED_V1, 0.0},
        {32, 9000, 1, 1, SIM_DECODE_PAGED_V2, 0.0}, {32, 2047, 0, 2, SIM_DECODE_PAGED_V2, 0.0},
        {64, 2047, 0, 2, SIM_DECODE_PAGED_V1, 0.0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cfg = sim_run_cfg_plain(cases[i].tp, SIM_DTYPE_FP16);
        cfg.decode = rule;
        cfg.decode.eager = cases[i].eager;
        const sim_step st = {1, {{cases[i].seqs, 1, cases[i].context, 1}}};
        sim_step_cost c;
        sim_step_cost_compute(&m, &hw, &cfg, &st, &c);
        CHECK_INT(c.decode_kernel, cases[i].k);
        if (cases[i].bytes_per_seq > 0.0)
            CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes,
                      (double)cases[i].seqs * cases[i].bytes_per_seq, 1e-15);
    }
    /* Under pipeline stages the step reports the kernel its stages ran (each stage's choice
     * depends on the step and the heads per GPU, not on its layers). */
    cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    cfg.decode = rule;
    cfg.pp = 2;
    {
        const sim_step st = {1, {{32, 1, 2047, 1}}};
        sim_step_cost c;
        sim_step_cost_compute(&m, &hw, &cfg, &st, &c);
        CHECK_INT(c.decode_kernel, SIM_DECODE_PAGED_V1);
    }
    /* Without the rule: the shared-KV kernel, V2's bytes. */
    cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    const sim_step st = {1, {{32, 1, 2047, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &st, &c);
    CHECK_INT(c.decode_kernel, SIM_DECODE_SHARED_KV);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 32.0 * v2, 1e-15);
    /* The engine's rule applies to a windowed model only (sim_decode_attn_resolve). */
    sim_engine e = {.paged_decode_sliding_window = 1, .paged_v1_max_seq_len = 8192};
    sim_sched_resolved sr = {.enforce_eager = 1};
    sim_decode_attn a;
    sim_decode_attn_resolve(&e, &m, NULL, &sr, &a);
    CHECK_INT(a.paged, 1);
    CHECK_INT(a.why, SIM_PAGED_SLIDING_WINDOW);
    CHECK_INT(a.eager, 1);
    CHECK_REL(a.v1_max_seq_len, 8192.0, 0.0);
    m.sliding_window = 0;
    sim_decode_attn_resolve(&e, &m, NULL, &sr, &a);
    CHECK_INT(a.paged, 0);
    /* V0's ROCm backend decodes every model with PagedAttention (rocm_flash_attn.py up to
     * v0.6.1): on a profile of vendor "amd" only, and not for MLA. The capture length is
     * capped at max_model_len (ModelConfig._verify_cuda_graph): 4096 of the engine's 8192. */
    e.paged_decode_rocm = 1;
    e.graph_max_seq_len = 8192;
    sr.max_model_len = 4096;
    snprintf(hw.vendor, sizeof(hw.vendor), "%s", "nvidia");
    sim_decode_attn_resolve(&e, &m, &hw, &sr, &a);
    CHECK_INT(a.paged, 0);
    snprintf(hw.vendor, sizeof(hw.vendor), "%s", "amd");
    sim_decode_attn_resolve(&e, &m, &hw, &sr, &a);
    CHECK_INT(a.paged, 1);
    CHECK_INT(a.why, SIM_PAGED_ROCM);
    CHECK_REL(a.graph_max_seq_len, 4096.0, 0.0);
    sr.max_model_len = 32768;
    sim_decode_attn_resolve(&e, &m, &hw, &sr, &a);
    CHECK_REL(a.graph_max_seq_len, 8192.0, 0.0);
    m.mla = true;
    sim_decode_attn_resolve(&e, &m, &hw, &sr, &a);
    CHECK_INT(a.paged, 0);
}

/*
 * PagedAttention's blocks in flight (docs/model.md, "Decode attention kernel choice").
 * Llama-2-7B (L 32, 32 heads of 128, MHA), TP 1, fp16, 32 sequences decoding at context 2047
 * (2048 keys) under CUDA graphs; a GPU of 304 SMs with 65,536 B of shared memory each and a
 * rate of 8e9 B/s per block. Decode bytes (Q read, O written, K/V once per head):
 *   32 x 32 x (2 x 32 x 128 x 2 + 2048 x 2 x 32 x 128 x 2) = 1024 x 33,570,816
 *   = 34,376,515,584
 * Capture length 4096: V1 (32 x 32 = 1024 > 512 blocks); shared memory per block
 * 4 x 4096 (logits) + 128 x 2 (the query) + 32 (reduction) = 16,672 B, 3 per SM, 912 resident
 * of the 1024: the step's memory time grows by 34,376,515,584 / (912 x 8e9) s.
 * Capture length 8192: 33,056 B, 1 per SM, 304 resident.
 * 16 sequences: V2 (16 x 32 = 512), 4 partitions of 512 with work: 2048 blocks of
 * 4 x 512 + 288 = 2336 B, 28 per SM (8512): all 2048 resident. Bytes 512 x 33,570,816.
 * Without the rate, or without the shared memory figure, nothing changes.
 */
static void paged_attention_blocks_resident(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-2-7b", &m, &hw) != 0)
        return;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    cfg.decode = (sim_decode_attn){.paged = 1,
                                   .why = SIM_PAGED_ROCM,
                                   .v1_max_seq_len = 8192,
                                   .v1_min_seq_heads = 512,
                                   .partition_tokens = 512,
                                   .graph_max_seq_len = 4096,
                                   .graph_max_batch = 256,
                                   .graph_batch_align = 8};
    hw.v[SIM_HWF_N_SM] = 304.0;
    const sim_step s32 = {1, {{32, 1, 2047, 1}}}, s16 = {1, {{16, 1, 2047, 1}}};
    sim_step_cost base, c;
    sim_step_cost_compute(&m, &hw, &cfg, &s32, &base);
    CHECK_REL(base.decode_blocks_resident, 0.0, 0.0);
    hw.v[SIM_HWF_ATTN_DECODE_BLOCK_BW] = 8e9;
    sim_step_cost_compute(&m, &hw, &cfg, &s32, &c); /* no shared memory figure: no limit */
    CHECK_REL(c.roofline_s, base.roofline_s, 0.0);
    hw.v[SIM_HWF_SMEM_PER_SM] = 65536.0;
    sim_step_cost_compute(&m, &hw, &cfg, &s32, &c);
    CHECK_INT(c.decode_kernel, SIM_DECODE_PAGED_V1);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 34376515584.0, 1e-15);
    CHECK_REL(c.decode_blocks_resident, 912.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].memory_s - base.ops[SIM_OP_ATTN_DECODE].memory_s,
              34376515584.0 / (912.0 * 8e9), 1e-9);
    cfg.decode.graph_max_seq_len = 8192;
    sim_step_cost_compute(&m, &hw, &cfg, &s32, &c);
    CHECK_REL(c.decode_blocks_resident, 304.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].memory_s - base.ops[SIM_OP_ATTN_DECODE].memory_s,
              34376515584.0 / (304.0 * 8e9), 1e-9);
    sim_step_cost b16;
    hw.v[SIM_HWF_ATTN_DECODE_BLOCK_BW] = 0.0;
    sim_step_cost_compute(&m, &hw, &cfg, &s16, &b16);
    hw.v[SIM_HWF_ATTN_DECODE_BLOCK_BW] = 8e9;
    sim_step_cost_compute(&m, &hw, &cfg, &s16, &c);
    CHECK_INT(c.decode_kernel, SIM_DECODE_PAGED_V2);
    CHECK_REL(c.decode_blocks_resident, 2048.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].memory_s - b16.ops[SIM_OP_ATTN_DECODE].memory_s,
              512.0 * 33570816.0 / (2048.0 * 8e9), 1e-9);
    /* Under pipeline stages the step reports the blocks its stages ran (each stage's launch
     * depends on the step and the heads per GPU, not on its layers). */
    cfg.pp = 2;
    sim_step_cost_compute(&m, &hw, &cfg, &s32, &c);
    CHECK_REL(c.decode_blocks_resident, 304.0, 0.0);
}

/*
 * The small-M GEMM class (hw.h: gemm_small_m_rows, gemm_eff_small_m_frac). Llama-2-7B, TP 1,
 * fp16, on test_hw (peak 523.7 TFLOP/s, gemm_eff 0.763), 64 sequences decoding at context 100:
 * qkv FLOPs 32 x 2 x 64 x 4096 x 12288 = 206,158,430,208. With the class at 64 rows and an
 * efficiency of 0.01, the qkv compute side is 206,158,430,208 / (523.7e12 x 0.01) s; one
 * more sequence (65 rows) leaves the class: 65/64 of the FLOPs at 0.763. Rows 0 (the
 * default) and an efficiency equal to gemm_eff change nothing.
 */
static void small_m_gemm_class(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-2-7b", &m, &hw) != 0)
        return;
    const sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    const sim_step s64 = {1, {{64, 1, 100, 1}}}, s65 = {1, {{65, 1, 100, 1}}};
    sim_step_cost base, c;
    sim_step_cost_compute(&m, &hw, &cfg, &s64, &base);
    CHECK_REL(hw.v[SIM_HWF_GEMM_EFF_SMALL_M], hw.v[SIM_HWF_GEMM_EFF_FP16], 0.0);
    hw.v[SIM_HWF_GEMM_SMALL_M_ROWS] = 64.0;
    sim_step_cost_compute(&m, &hw, &cfg, &s64, &c);
    CHECK_REL(c.roofline_s, base.roofline_s, 0.0);
    hw.v[SIM_HWF_GEMM_EFF_SMALL_M] = 0.01;
    sim_step_cost_compute(&m, &hw, &cfg, &s64, &c);
    CHECK_REL(c.ops[SIM_OP_QKV].compute_s, 206158430208.0 / (523.7e12 * 0.01), 1e-12);
    sim_step_cost_compute(&m, &hw, &cfg, &s65, &c);
    CHECK_REL(c.ops[SIM_OP_QKV].compute_s, 206158430208.0 * 65.0 / 64.0 / (523.7e12 * 0.763),
              1e-12);
    /* The single-kernel GEMM time (kernels.c, validate-kernels) applies the same class: one
     * layer's qkv GEMM, 2 x 64 x 4096 x 12288 = 6,442,450,944 FLOPs, at 0.01; 65 rows at 0.763. */
    sim_kernel_time k;
    sim_gemm_time(&hw, SIM_DTYPE_FP16, SIM_GEMM_FLAT, 64.0, 12288.0, 4096.0, &k);
    CHECK_REL(k.compute_s, 6442450944.0 / (523.7e12 * 0.01), 1e-12);
    sim_gemm_time(&hw, SIM_DTYPE_FP16, SIM_GEMM_FLAT, 65.0, 12288.0, 4096.0, &k);
    CHECK_REL(k.compute_s, 6442450944.0 * 65.0 / 64.0 / (523.7e12 * 0.763), 1e-12);
}

/*
 * DeepSeek-V3 MLA at TP 8, 16-bit weights (the fp8 quantization removed so the bytes are
 * 2 per element), bf16 KV cache (docs/model.md, "MLA"). L 61, d 7168, Hg 16, q_lora 1536,
 * kv_lora 512, nope 128, rope 64, v 128; latent 576.
 * Decode, 4 sequences at context 1023 (1024 keys):
 *   attn_decode FLOPs 61 x 4 x 2 x 16 x 1024 x (576 + 512) = 8,698,986,496;
 *     bytes 61 x 4 x (1024 x 576 x 2 + 16 x (576 + 512) x 2) = 296,329,216
 *   mla_kv_up_proj (W_UK, W_UV) FLOPs 61 x 4 x 2 x 16 x 512 x (128 + 128) = 1,023,410,176;
 *     bytes: W_UK in 128 out 512, the query concatenation 576 read and written, W_UV in 512
 *     out 128: 61 x 4 x 16 x (128 + 512 + 2 x 576 + 512 + 128) x 2 = 18,989,056, + weights
 *     61 x 16 x 512 x 256 x 2 = 255,852,544 -> 274,841,600
 *   qkv_proj: q_a + kv_a 7168 -> 2112, q_b 1536 -> 16 x 192 = 3072: FLOPs
 *     61 x (2 x 4 x 7168 x 2112 + 2 x 4 x 1536 x 3072) = 9,690,415,104; bytes weights
 *     61 x 2 x (7168 x 1536 + 1536 x 3072 + 7168 x 576 + 512 x 4096) = 2,678,456,320 +
 *     activations 61 x 4 x (7168 + 2112 + 1536 + 3072) x 2 = 6,777,344 -> 2,685,233,664
 *   kv_cache_write 61 x 4 x 576 x (2 + 2) = 562,176 bytes
 *   o_proj FLOPs 61 x 2 x 4 x 16 x 128 x 7168 = 7,163,871,232
 * Prefill, 2 prompts of 512 (131,328 causal pairs each):
 *   attn_prefill FLOPs 61 x 2 x 2 x 16 x 131,328 x (192 + 128) = 164,065,443,840;
 *     bytes 61 x 2 x 2 x 512 x 16 x 320 x 2 (q, o; k, v) = 1,279,262,720
 *   mla_kv_up_proj (kv_b on 512 keys) FLOPs 61 x 2 x 2 x 512 x 512 x 16 x 256 =
 *     261,993,005,056; bytes per prompt and layer: kv_b 512 x (512 + 4096) x 2 = 4,718,592,
 *     k = [k_nope, k_pe] 512 x (16 x (128 + 192) + 64) x 2 = 5,308,416, output copy
 *     2 x 512 x 16 x 128 x 2 = 4,194,304; x 2 x 61 = 1,735,000,064, + 255,852,544 =
 *     1,990,852,608
 */
static void mla_decode_and_prefill_counts(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("deepseek-v3", &m, &hw) != 0)
        return;
    m.quant = (sim_quant){0};
    const sim_run_cfg cfg = sim_run_cfg_plain(8, SIM_DTYPE_BF16);
    sim_step_cost c;
    const sim_step dec = {1, {{4, 1, 1023, 1}}};
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 8698986496.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 296329216.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_MLA_UP].flops, 1023410176.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_MLA_UP].bytes, 274841600.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_QKV].flops, 9690415104.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_QKV].bytes, 2685233664.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_KV_WRITE].bytes, 562176.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_O_PROJ].flops, 7163871232.0, 1e-15);
    CHECK(c.ops[SIM_OP_ATTN_PREFILL].bytes == 0.0);
    /* Kernels per layer: decode attention and its combine; W_UK, concatenation, W_UV. */
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].n_kernels, 2.0 * 61, 0.0);
    CHECK_REL(c.ops[SIM_OP_MLA_UP].n_kernels, 3.0 * 61, 0.0);
    const sim_step pre = {1, {{2, 512, 0, 1}}};
    sim_step_cost_compute(&m, &hw, &cfg, &pre, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_PREFILL].flops, 164065443840.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_ATTN_PREFILL].bytes, 1279262720.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_MLA_UP].flops, 261993005056.0, 1e-15);
    CHECK_REL(c.ops[SIM_OP_MLA_UP].bytes, 1990852608.0, 1e-15);
    CHECK(c.ops[SIM_OP_ATTN_DECODE].bytes == 0.0);
    /* Shared experts run on every token as a dense MLP: 58 MoE layers of 2048 / 8 = 256 plus
     * 3 dense layers of 18432 / 8 = 2304: gate_up FLOPs 2 x 1024 x 7168 x 2 x (3 x 2304 +
     * 58 x 256) = 2 x 1024 x 7168 x 2 x 21,760 = 638,876,385,280. */
    CHECK_REL(c.ops[SIM_OP_MLP_GATE_UP].flops, 638876385280.0, 1e-15);
}

/* The 4-token fused-MoE shape of the hand cases (8 rows, 8 touched experts, padded to 128
 * rows; d 4096, F 1792) with weight_bytes of expert weights per expert. */
static sim_moe_shape four_token_shape(double weight_bytes)
{
    return (sim_moe_shape){.tokens = 4,
                           .rows = 8,
                           .rows_padded = 128,
                           .touched = 8,
                           .d = 4096,
                           .f = 1792,
                           .weight_bytes = weight_bytes};
}
/*
 * The fused-MoE kernel (kernels.h, sim_fused_moe_time) on figures chosen for hand work: bf16
 * peak 1e15, copy 2e12 B/s, bw_factor_moe 0.8, moe_fixed 30 us, moe_gemm_eff 0.5, r0 = 32
 * rows, k0 = 256. Mixtral-8x7B at TP 8: d 4096, F 14336 / 8 = 1792, 8 experts, top-2;
 * weights per expert 3 x 4096 x 1792 x 2 B = 44,040,192.
 */
static void fused_moe_hand_cases(void)
{
    sim_hw hw;
    test_hw(&hw);
    hw.v[SIM_HWF_PEAK_BF16] = 1e15;
    hw.v[SIM_HWF_BW_STREAM_COPY] = 2e12;
    hw.v[SIM_HWF_BW_FACTOR_MOE] = 0.8;
    hw.v[SIM_HWF_MOE_FIXED] = 30e-6;
    hw.v[SIM_HWF_MOE_EFF] = 0.5;
    hw.v[SIM_HWF_MOE_ROWS_HALF] = 32.0;
    hw.v[SIM_HWF_MOE_TILE_K] = 256.0;
    /* vLLM's default BLOCK_SIZE_M: 16 while tokens <= experts, else 64. */
    CHECK_REL(sim_moe_block_m(8.0, 8.0), 16.0, 0.0);
    CHECK_REL(sim_moe_block_m(9.0, 8.0), 64.0, 0.0);
    /*
     * 4 tokens, balanced: 8 rows, one per expert, each padded to 16: R = 128, r_e = 16.
     * bytes = 8 x 44,040,192 + (8 (3 x 4096 + 6 x 1792) + 4 x 4096) x 2
     *       = 352,321,536 + (184,320 + 16,384) x 2 = 352,722,944;
     * memory = 30 us + 352,722,944 / 1.6e12 = 250.45184 us;
     * work = 2 x 128 x (3 x 4096 x 1792 x (1 + 32/16) + 256 (2 x 1792 + 4096))
     *      = 256 x (66,060,288 + 1,966,080) = 17,414,750,208; compute = work / 5e14
     *      = 34.829500416 us; memory-bound. flops = 2 x 8 x 3 x 4096 x 1792 = 352,321,536.
     */
    sim_moe_shape sh = four_token_shape(44040192.0);
    sim_kernel_time k;
    sim_fused_moe_time(&hw, SIM_MOE_CLASS_16, &sh, &k);
    CHECK_REL(k.bytes, 352722944.0, 1e-15);
    CHECK_REL(k.flops, 352321536.0, 1e-15);
    CHECK_REL(k.memory_s, 250.45184e-6, 1e-12);
    CHECK_REL(k.compute_s, 34.829500416e-6, 1e-12);
    CHECK_REL(k.time_s, k.memory_s, 0.0);
    CHECK_INT(k.bound, SIM_BOUND_MEMORY);
    /*
     * 4096 tokens, balanced: 1024 rows per expert (a multiple of 64): R = 8192, r_e = 1024.
     * work = 2 x 8192 x (22,020,096 x (1 + 32/1024) + 256 x 7680)
     *      = 16384 x (22,708,224 + 1,966,080) = 404,263,796,736; compute = 808.527593472 us;
     * bytes = 352,321,536 + (8192 x 23,040 + 4096 x 4096) x 2 = 763,363,328, memory =
     * 30 us + 477.10208 us = 507.10208 us; compute-bound.
     */
    sh = (sim_moe_shape){.tokens = 4096,
                         .rows = 8192,
                         .rows_padded = 8192,
                         .touched = 8,
                         .d = 4096,
                         .f = 1792,
                         .weight_bytes = 44040192.0};
    sim_fused_moe_time(&hw, SIM_MOE_CLASS_16, &sh, &k);
    CHECK_REL(k.compute_s, 808.527593472e-6, 1e-12);
    CHECK_REL(k.memory_s, 507.10208e-6, 1e-12);
    CHECK_REL(k.time_s, k.compute_s, 0.0);
    CHECK_INT(k.bound, SIM_BOUND_COMPUTE);
    /* Uniform routing, 4 tokens: touched 8 (1 - 0.75^4) = 5.46875; one block of 16 each (87.5
     * rows) beats 8 rows + 5.46875 x 7.5 = 49.02. 4096 tokens: touched 8 (to 1e-500), 8192
     * rows + 8 x 31.5 = 8444 beats 8 x 64 = 512. */
    CHECK_REL(sim_moe_padded_rows_random(8, 2, 4, 16), 87.5, 1e-15);
    CHECK_REL(sim_moe_padded_rows_random(8, 2, 4096, 64), 8444.0, 1e-15);
    /* No rows, no kernel. */
    sh.rows = sh.touched = sh.rows_padded = 0.0;
    sim_fused_moe_time(&hw, SIM_MOE_CLASS_16, &sh, &k);
    CHECK_INT(k.bound, SIM_BOUND_NONE);
    CHECK_REL(k.time_s, 0.0, 0.0);
}

/*
 * MoE weight classes (hw.h, sim_moe_class). On test_hw (bf16 peak 523.7e12, fp8 1047.4e12, no
 * fp4 peak, no MoE figures): every class's figures are defaults, MXFP4 the 16-bit set (a W4A16
 * kernel) at the bf16 peak, block fp8 and NVFP4 the fp8 set at the fp8 peak (NVFP4 without an
 * fp4 peak). With peak_fp4 2094.8e12 and NVFP4 figures of its own the NVFP4 class runs at the
 * fp4 peak with them. Weight bytes per element (scales included): fp8 block 1 + 4/16384
 * (one fp32 per 128 x 128), MXFP4 0.5 + 1/32 (one e8m0 per 32), NVFP4 0.5 + 1/16 (one e4m3
 * per 16). A checkpoint's class: gpt-oss (quant_method mxfp4) mxfp4; DeepSeek-V3 (fp8,
 * weight_block_size 128 x 128) fp8_block; Qwen3-30B-A3B bf16, or fp8 with --dtype fp8.
 */
static void moe_classes(void)
{
    sim_hw hw;
    test_hw(&hw);
    sim_moe_figs g16, g;
    sim_hw_moe_figs(&hw, SIM_MOE_CLASS_16, &g16);
    CHECK_REL(g16.peak_flops_per_s, 523.7e12, 0.0);
    CHECK_REL(g16.weight_bytes, 2.0, 0.0);
    sim_hw_moe_figs(&hw, SIM_MOE_CLASS_MXFP4, &g);
    CHECK_REL(g.peak_flops_per_s, 523.7e12, 0.0);
    CHECK_REL(g.eff_frac, g16.eff_frac, 0.0);
    CHECK_REL(g.fixed_s, g16.fixed_s, 0.0);
    CHECK_REL(g.bw_factor_frac, g16.bw_factor_frac, 0.0);
    CHECK_REL(g.weight_bytes, 0.53125, 0.0);
    sim_moe_figs g8;
    sim_hw_moe_figs(&hw, SIM_MOE_CLASS_FP8, &g8);
    CHECK_REL(g8.peak_flops_per_s, 1047.4e12, 0.0);
    sim_hw_moe_figs(&hw, SIM_MOE_CLASS_FP8_BLOCK, &g);
    CHECK_REL(g.peak_flops_per_s, 1047.4e12, 0.0);
    CHECK_REL(g.eff_frac, g8.eff_frac, 0.0);
    CHECK_REL(g.weight_bytes, 1.000244140625, 0.0);
    sim_hw_moe_figs(&hw, SIM_MOE_CLASS_NVFP4, &g);
    CHECK_REL(g.peak_flops_per_s, 1047.4e12, 0.0);
    CHECK_REL(g.weight_bytes, 0.5625, 0.0);
    hw.v[SIM_HWF_PEAK_FP4] = 2094.8e12;
    hw.prov[SIM_HWF_PEAK_FP4] = SIM_PROV_DATASHEET;
    hw.v[SIM_HWF_MOE_EFF_NVFP4] = 0.4;
    hw.prov[SIM_HWF_MOE_EFF_NVFP4] = SIM_PROV_DERIVED;
    sim_hw_moe_figs(&hw, SIM_MOE_CLASS_NVFP4, &g);
    CHECK_REL(g.peak_flops_per_s, 2094.8e12, 0.0);
    CHECK_REL(g.eff_frac, 0.4, 0.0);
    CHECK_STR(sim_moe_class_name(SIM_MOE_CLASS_FP8_BLOCK), "fp8_block");
    /* The same 4-token shape as fused_moe_hand_cases with MXFP4 weights (3 x 4096 x 1792 x
     * 0.53125 = 11,698,176 B per expert): MXFP4 without figures of its own is timed as the
     * 16-bit class, and its bytes count the packed weights. */
    sim_moe_shape sh = four_token_shape(11698176.0);
    sim_kernel_time a, b;
    sim_fused_moe_time(&hw, SIM_MOE_CLASS_MXFP4, &sh, &a);
    sim_fused_moe_time(&hw, SIM_MOE_CLASS_16, &sh, &b);
    CHECK_REL(a.time_s, b.time_s, 0.0);
    CHECK_REL(a.bytes, 8.0 * 11698176.0 + (8.0 * (3.0 * 4096 + 6.0 * 1792) + 4.0 * 4096) * 2.0,
              1e-15);
    sim_model m;
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    if (load_model("gpt-oss-120b", &m) == 0)
        CHECK_INT(sim_moe_class_of(&m, &cfg), SIM_MOE_CLASS_MXFP4);
    if (load_model("deepseek-v3", &m) == 0)
        CHECK_INT(sim_moe_class_of(&m, &cfg), SIM_MOE_CLASS_FP8_BLOCK);
    if (load_model("qwen3-30b-a3b", &m) == 0) {
        CHECK_INT(sim_moe_class_of(&m, &cfg), SIM_MOE_CLASS_16);
        cfg.dtype = SIM_DTYPE_FP8;
        CHECK_INT(sim_moe_class_of(&m, &cfg), SIM_MOE_CLASS_FP8);
    }
}

/*
 * A class without an r0 of its own (moe_rows_half_<cls>_tokens) takes the r0 of the class it
 * falls back to at the same time per weight byte: the term r0 / r_e is a re-read of each
 * touched expert's weights (docs/model.md, "Fused MoE"), so its time per expert,
 * r0 x 6 d F / (peak x eff), scales with the weight bytes and r0 by the classes'
 * (bytes per element x peak) ratio. On test_hw (bf16 peak 523.7e12, fp8 1047.4e12, no fp4)
 * with a 16-bit r0 of 93 tokens and every other r0 defaulted:
 *   fp8:       93 x (1 x 1047.4) / (2 x 523.7)                  = 93
 *   fp8 block: 93 x (1 + 4/16384) x 1047.4 / (1 x 1047.4)        = 93.022705078125
 *   MXFP4:     93 x (0.53125 x 523.7) / (2 x 523.7)              = 24.703125
 *   NVFP4:     93 x (0.5625 x 1047.4) / (1 x 1047.4)             = 52.3125
 *   NVFP4 with an fp4 peak of 2094.8e12: 93 x 0.5625 x 2          = 104.625
 * With these, the MXFP4 r0 term of one expert takes 0.265625 of the 16-bit one: on the 4-token
 * shape of moe_classes (r_e = 128 / 8 = 16 padded rows, W = 6 x 128 x 4096 x 1792), compute
 * time = W (1 + r0 / 16) / (peak eff) + the k0 term (0 here).
 */
static void moe_r0_per_byte(void)
{
    for (int fp4 = 0; fp4 < 2; fp4++) {
        sim_hw hw;
        test_hw(&hw);
        const sim_hw_field r0s[] = {SIM_HWF_MOE_ROWS_HALF_FP8, SIM_HWF_MOE_ROWS_HALF_FP8_BLOCK,
                                    SIM_HWF_MOE_ROWS_HALF_MXFP4, SIM_HWF_MOE_ROWS_HALF_NVFP4};
        for (size_t i = 0; i < sizeof(r0s) / sizeof(r0s[0]); i++)
            hw.prov[r0s[i]] = SIM_PROV_ABSENT;
        hw.v[SIM_HWF_MOE_ROWS_HALF] = 93.0;
        hw.prov[SIM_HWF_MOE_ROWS_HALF] = SIM_PROV_DERIVED;
        if (fp4) {
            hw.v[SIM_HWF_PEAK_FP4] = 2094.8e12;
            hw.prov[SIM_HWF_PEAK_FP4] = SIM_PROV_DATASHEET;
        }
        sim_hw_apply_defaults(&hw);
        CHECK_REL(hw.v[SIM_HWF_MOE_ROWS_HALF_FP8], 93.0, 1e-15);
        CHECK_REL(hw.v[SIM_HWF_MOE_ROWS_HALF_FP8_BLOCK], 93.022705078125, 1e-15);
        CHECK_REL(hw.v[SIM_HWF_MOE_ROWS_HALF_MXFP4], 24.703125, 1e-15);
        CHECK_REL(hw.v[SIM_HWF_MOE_ROWS_HALF_NVFP4], fp4 ? 104.625 : 52.3125, 1e-15);
        CHECK_INT(hw.prov[SIM_HWF_MOE_ROWS_HALF_MXFP4], SIM_PROV_DEFAULT);
        if (fp4)
            continue;
        sim_moe_shape sh = four_token_shape(11698176.0);
        sim_moe_figs g;
        sim_hw_moe_figs(&hw, SIM_MOE_CLASS_MXFP4, &g);
        const double W = 6.0 * 128 * 4096 * 1792, fps = 523.7e12 * g.eff_frac;
        sim_kernel_time a;
        sim_fused_moe_time(&hw, SIM_MOE_CLASS_MXFP4, &sh, &a);
        CHECK_REL(a.compute_s, W * (1.0 + 24.703125 / 16.0) / fps, 1e-12);
        sim_fused_moe_time(&hw, SIM_MOE_CLASS_16, &sh, &a);
        CHECK_REL(a.compute_s, W * (1.0 + 93.0 / 16.0) / fps, 1e-12);
    }
}

/*
 * Gemma-2-27B: a window of 4096 on the 23 even layers, full attention on the 23 odd ones;
 * 32 query and 16 KV heads of 128 at TP 1, bf16. One sequence decoding at context 6000
 * (6001 keys): the windowed layers read 4096 keys, the full ones 6001:
 *   bytes = 46 x 2 x 32 x 128 x 2 (Q in, O out) + (23 x 4096 + 23 x 6001) x 2 x 16 x 128 x 2
 *         = 753,664 + 232,231 x 8,192 = 1,903,190,016;
 *   FLOPs = 4 x 32 x 128 x (23 x 4096 + 23 x 6001) = 16,384 x 232,231 = 3,804,872,704.
 * Four RMSNorms a layer and the final one: 4 x 46 + 1 = 185 norm kernels. With two pipeline
 * stages of 23 layers (0-22, 23-45), the full (odd) layers are 11 and 12.
 */
static void gemma2_interleaved_window(void)
{
    sim_model m;
    sim_hw hw;
    test_hw(&hw);
    if (load_model("gemma-2-27b", &m) != 0)
        return;
    const sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    const sim_step dec = {1, {{1, 1, 6000, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 1903190016.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 3804872704.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_NORM].n_kernels, 185.0, 0.0);
    /* Stage 0 (layers 0-22): 11 full, 12 windowed; stage 1 (23-45): 12 full, 11 windowed. */
    sim_step_cost s0, s1;
    sim__step_stage_cost(&m, &hw, &cfg, 0, 23, 1, 0, &dec, &s0);
    sim__step_stage_cost(&m, &hw, &cfg, 23, 23, 0, 1, &dec, &s1);
    CHECK_REL(s0.ops[SIM_OP_ATTN_DECODE].bytes,
              23.0 * 16384.0 + (12.0 * 4096.0 + 11.0 * 6001.0) * 8192.0, 0.0);
    CHECK_REL(s1.ops[SIM_OP_ATTN_DECODE].bytes,
              23.0 * 16384.0 + (11.0 * 4096.0 + 12.0 * 6001.0) * 8192.0, 0.0);
}

/*
 * Chunked local attention (Llama-4): the token at position p attends to the (p mod C) + 1 keys
 * of its own chunk. C = 4, positions 2, 3, 4: 3 + 4 + 1 = 8. C = 8192: a decode at 8192 (a
 * new chunk) sees 1 key, at 20000 (20000 - 2 x 8192 = 3616) 3617; a 10000-token prefill from
 * 0 sees 8192 x 8193 / 2 + 1808 x 1809 / 2 = 33,558,528 + 1,635,336 = 35,193,864 pairs; a
 * chunk of 1000 after 7692 cached crosses the boundary: positions 7692..8191 see 7693..8192
 * keys ((7693 + 8192) x 500 / 2 = 3,971,250), 8192..8691 see 1..500 (125,250): 4,096,500.
 * Inside the first chunk it is the causal count.
 */
static void chunked_attention_pairs(void)
{
    CHECK_REL(sim_attn_pairs_chunked(3, 2, 4), 8.0, 0.0);
    CHECK_REL(sim_attn_pairs_chunked(1, 8192, 8192), 1.0, 0.0);
    CHECK_REL(sim_attn_pairs_chunked(1, 20000, 8192), 3617.0, 0.0);
    CHECK_REL(sim_attn_pairs_chunked(10000, 0, 8192), 35193864.0, 0.0);
    CHECK_REL(sim_attn_pairs_chunked(1000, 7692, 8192), 4096500.0, 0.0);
    CHECK_REL(sim_attn_pairs_chunked(300, 1000, 8192), sim_attn_pairs(300, 1000, 0), 0.0);
}

/*
 * Llama-4-Scout at TP 1, bf16: 40 query and 8 KV heads of 128, 48 layers, of which 12
 * (3, 7, ..., 47) attend globally and 36 within their 8192-token chunk.
 * Decode at context 20000 (the new token at position 20000): chunked layers read
 * (20000 mod 8192) + 1 = 3617 keys, global ones 20001:
 *   FLOPs = 4 x 40 x 128 x (36 x 3617 + 12 x 20001) = 20,480 x 370,224 = 7,582,187,520;
 *   bytes = 48 x 2 x 40 x 128 x 2 (Q in, O out) + 370,224 x 2 x 8 x 128 x 2
 *         = 983,040 + 1,516,437,504 = 1,517,420,544.
 * (A sliding window of 8192 would read 8192 keys on those layers.)
 * Chunk of 1000 after 7692 cached: chunked layers 4,096,500 pairs (chunked_attention_pairs),
 * global ones 1000 x 7692 + 1000 x 1001 / 2 = 8,192,500; both read the keys from 0 (the first
 * new token's chunk starts at 0): 8692 keys.
 *   FLOPs = 20,480 x (36 x 4,096,500 + 12 x 8,192,500) = 20,480 x 245,784,000
 *         = 5,033,656,320,000;
 *   bytes = 48 x 2 x 1000 x 40 x 128 x 2 + 48 x 8692 x 4,096 = 983,040,000 + 1,708,916,736
 *         = 2,691,956,736.
 * RoPE on q and k of the decode, 3 x (40 + 8) x 128 x 48 = 884,736 FLOPs, and the weightless
 * L2 q/k norm on the 36 RoPE layers, 4 x 6144 x 36 = 884,736: 1,769,472 in 48 + 36 = 84 kernels.
 * Two pipeline stages of 24 layers hold 6 global layers each (23 and 47 end them).
 */
static void llama4_chunked_attention(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("llama-4-scout", &m, &hw) != 0)
        return;
    const sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    const sim_step dec = {1, {{1, 1, 20000, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 7582187520.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 1517420544.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ROPE].flops, 1769472.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ROPE].n_kernels, 84.0, 0.0);
    const sim_step chunk = {1, {{1, 1000, 7692, 1}}};
    sim_step_cost_compute(&m, &hw, &cfg, &chunk, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_CHUNKED].flops, 5033656320000.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_CHUNKED].bytes, 2691956736.0, 0.0);
    sim_step_cost s0, s1;
    sim__step_stage_cost(&m, &hw, &cfg, 0, 24, 1, 0, &dec, &s0);
    sim__step_stage_cost(&m, &hw, &cfg, 24, 24, 0, 1, &dec, &s1);
    const double stage = 24.0 * 20480.0 + (18.0 * 3617.0 + 6.0 * 20001.0) * 4096.0;
    CHECK_REL(s0.ops[SIM_OP_ATTN_DECODE].bytes, stage, 0.0);
    CHECK_REL(s1.ops[SIM_OP_ATTN_DECODE].bytes, stage, 0.0);
}

/*
 * One Gemma-3-27B layer at TP 1, bf16 (32 query and 16 KV heads of 128, window 1024), counted
 * as a one-layer pipeline stage without embedding or LM head.
 * Layer 0 is local. Decode at context 3000: min(3001, 1024) = 1024 keys:
 *   FLOPs = 4 x 32 x 128 x 1024 = 16,777,216;
 *   bytes = 2 x 32 x 128 x 2 + 1024 x 2 x 16 x 128 x 2 = 16,384 + 8,388,608 = 8,404,992.
 * Prefill of 2000: queries 1..1024 see 1..1024 keys, the other 976 see 1024:
 *   pairs 1024 x 1025 / 2 + 976 x 1024 = 524,800 + 999,424 = 1,524,224;
 *   FLOPs = 16,384 x 1,524,224 = 24,972,886,016;
 *   bytes = 2 x 2000 x 32 x 128 x 2 + 2000 x 2 x 16 x 128 x 2 = 32,768,000 + 16,384,000
 *         = 49,152,000.
 * Layer 5 is global: the decode reads 3001 keys: FLOPs 16,384 x 3001 = 49,168,384, bytes
 * 16,384 + 3001 x 8,192 = 24,600,576. Each layer runs four norms and the q/k norm (a second
 * RoPE kernel). The whole model has 62 / 6 = 10 global layers and 4 x 62 + 1 = 249 norms; two
 * stages of 31 layers hold 5 global layers each.
 */
static void gemma3_local_and_global_layer(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("gemma-3-27b", &m, &hw) != 0)
        return;
    const sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    const sim_step dec = {1, {{1, 1, 3000, 1}}};
    const sim_step pre = {1, {{1, 2000, 0, 1}}};
    sim_step_cost c;
    sim__step_stage_cost(&m, &hw, &cfg, 0, 1, 0, 0, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 16777216.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 8404992.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_NORM].n_kernels, 4.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ROPE].n_kernels, 2.0, 0.0);
    sim__step_stage_cost(&m, &hw, &cfg, 0, 1, 0, 0, &pre, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_PREFILL].flops, 24972886016.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_PREFILL].bytes, 49152000.0, 0.0);
    sim__step_stage_cost(&m, &hw, &cfg, 5, 1, 0, 0, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 49168384.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].bytes, 24600576.0, 0.0);
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_NORM].n_kernels, 249.0, 0.0);
    CHECK_REL(c.ops[SIM_OP_ATTN_DECODE].flops, 16384.0 * (52.0 * 1024.0 + 10.0 * 3001.0), 0.0);
    sim_step_cost s0, s1;
    sim__step_stage_cost(&m, &hw, &cfg, 0, 31, 1, 0, &dec, &s0);
    sim__step_stage_cost(&m, &hw, &cfg, 31, 31, 0, 1, &dec, &s1);
    const double stage = 31.0 * 16384.0 + (26.0 * 1024.0 + 5.0 * 3001.0) * 8192.0;
    CHECK_REL(s0.ops[SIM_OP_ATTN_DECODE].bytes, stage, 0.0);
    CHECK_REL(s1.ops[SIM_OP_ATTN_DECODE].bytes, stage, 0.0);
}

/*
 * Expert and data parallelism (docs/model.md, "Expert and data parallelism"), Mixtral-8x7B
 * (d 4096, L 32, E 8, k 2, F 14336, bf16), a 512-token prefill on each of dp 2 ranks at tp 2:
 * the MoE layers see N = 2 x 512 = 1024 tokens over G = 4 GPUs. All 8 experts are touched
 * (1 - 0.75^1024 = 1 to 1e-100). One expert is 3 x 4096 x 14336 x 2 = 352,321,536 bytes.
 *   EP: 8 / 4 = 2 whole experts a GPU: weights read 32 x 2 x 352,321,536 = 22,548,578,304;
 *       rows 1024 x 2 / 4 = 512 on average: FLOPs 32 x 512 x (2 x 3 x 4096 x 14336 + 5 x
 *       14336) = 16384 x 352,393,216 = 5,773,610,450,944 on average; the busiest of the 4
 *       GPUs (sim_moe_ep_busiest_factor) gets mu + s m_4 / sqrt(3/4) rows, mu = 512,
 *       s^2 = 2048 x 1/4 x 3/4 x 6/7 = 329.142857..., m_4 = 1.0294 (Harter 1961):
 *       1 + 18.142294 x 1.0294 / 0.8660254 / 512 = 1.0421188 times that.
 *   no EP: every expert's 14336 / 4 = 3584 slice: weights 32 x 8 x 352,321,536 / 4, the
 *       same bytes; rows 2048 at F 3584: 32 x 2048 x (6 x 4096 x 3584 + 5 x 3584), the same
 *       FLOPs.
 * Dispatch (all-gather of the 1024 tokens' hidden state and 8 router logits) and combine
 * (reduce-scatter of their outputs), per MoE layer: 1024 x (4096 + 8) x 2 = 8,404,992 and
 * 1024 x 4096 x 2 = 8,388,608 bytes; 32 layers: 537,395,200 bytes. The DP group (2 GPUs, tp
 * = 2 apart) sits in one node of 8: each collective takes the 2-GPU all-to-all entry,
 * 4.7 us + (2-1)/2 x bytes / 143e9, so 32 x (2 x 4.7e-6 + 0.5 x 16,793,600 / 143e9) s.
 * At dp 1 with EP there is no dispatch (vLLM's naive path only runs with dp > 1): the TP
 * all-reduce after each MoE layer is all.
 */
static void expert_and_data_parallel_counts(void)
{
    sim_model m;
    sim_hw hw;
    if (load_on_test_hw("mixtral-8x7b", &m, &hw) != 0)
        return;
    hw.n_alltoall = 1;
    hw.alltoall[0] = (sim_allreduce){
        .n_gpus = 2, .latency_s = 4.7e-6, .bus_bw_bytes_per_s = 143e9, .prov = SIM_PROV_ESTIMATED};
    const sim_step pre = {1, {{1, 512, 0, 1}}};
    for (int ep = 0; ep <= 1; ep++) {
        sim_run_cfg cfg = sim_run_cfg_plain(2, SIM_DTYPE_BF16);
        cfg.dp = 2;
        cfg.ep = ep;
        sim_step_cost c;
        sim_step_cost_compute(&m, &hw, &cfg, &pre, &c);
        CHECK_REL(c.ops[SIM_OP_MOE_EXPERTS].weight_bytes, 22548578304.0, 1e-14);
        const double busy =
            ep ? 1.0 + sqrt(2048.0 * 0.25 * 0.75 * 6.0 / 7.0) * 1.0294 / sqrt(0.75) / 512.0 : 1.0;
        CHECK_REL(c.ops[SIM_OP_MOE_EXPERTS].flops, 5773610450944.0 * busy, 1e-14);
        CHECK_REL(c.ops[SIM_OP_MOE_DISPATCH].bytes, 537395200.0, 1e-15);
        CHECK_REL(c.ops[SIM_OP_MOE_DISPATCH].time_s,
                  32.0 * (2.0 * 4.7e-6 + 0.5 * 16793600.0 / 143e9), 1e-12);
        CHECK_INT(c.ops[SIM_OP_MOE_DISPATCH].bound, SIM_BOUND_COMM);
        /* The router stays on the rank's 512 tokens: 32 x 2 x 512 x 4096 x 8. */
        CHECK_REL(c.ops[SIM_OP_MOE_ROUTER].flops, 1073741824.0, 0.0);
    }
    /* TP 8 with EP, dp 1: one whole expert a GPU; a 4-token decode touches 5.46875 of the 8
     * experts, 5.46875 / 8 of them per GPU: 32 x 0.68359375 x 352,321,536 bytes. */
    sim_run_cfg cfg = sim_run_cfg_plain(8, SIM_DTYPE_BF16);
    cfg.ep = 1;
    const sim_step dec = {1, {{4, 1, 1024, 1}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, &hw, &cfg, &dec, &c);
    CHECK_REL(c.ops[SIM_OP_MOE_EXPERTS].weight_bytes, 32.0 * 0.68359375 * 352321536.0, 1e-14);
    CHECK_INT(c.ops[SIM_OP_MOE_DISPATCH].bound, SIM_BOUND_NONE);
    CHECK_INT(c.n_allreduce, 65);
}

/*
 * The busiest EP GPU's rows over the mean (sim_moe_ep_busiest_factor). Qwen3-30B-A3B (E 128,
 * k 8), a 64-token decode over G = 8 GPUs: mu = 512 / 8 = 64, s^2 = 512 x 1/8 x 7/8 x 120/127
 * = 52.913386, m_8 = 1.4236 (Harter 1961): 1 + 7.2741588 x 1.4236 / sqrt(7/8) / 64 = 1.17297.
 * An 8192-token prefill: mu = 8192, s^2 = 65536 x 0.109375 x 0.9448819 = 6772.9134:
 * 1 + 82.29771 x 1.4236 / 0.9354143 / 8192 = 1.015289.
 * G 6 lies between m_4 and m_8 linearly in log2 G; G 1 (no EP split) and no tokens give 1.
 */
static void ep_busiest_gpu_factor(void)
{
    const double f64 =
        1.0 + sqrt(512.0 / 8.0 * 7.0 / 8.0 * 120.0 / 127.0) * 1.4236 / sqrt(7.0 / 8.0) / 64.0;
    CHECK_REL(sim_moe_ep_busiest_factor(128.0, 8.0, 64.0, 8), f64, 1e-12);
    CHECK_REL(f64, 1.17297, 1e-5);
    const double f8k =
        1.0 + sqrt(65536.0 / 8.0 * 7.0 / 8.0 * 120.0 / 127.0) * 1.4236 / sqrt(7.0 / 8.0) / 8192.0;
    CHECK_REL(sim_moe_ep_busiest_factor(128.0, 8.0, 8192.0, 8), f8k, 1e-12);
    CHECK_REL(f8k, 1.015289, 1e-6);
    const double m6 = 1.0294 + (log2(6.0) - 2.0) * (1.4236 - 1.0294);
    CHECK_REL(sim_moe_ep_busiest_factor(128.0, 8.0, 64.0, 6),
              1.0 + sqrt(512.0 / 6.0 * 5.0 / 6.0 * 120.0 / 127.0) * m6 / sqrt(5.0 / 6.0) /
                        (512.0 / 6.0),
              1e-12);
    CHECK_REL(sim_moe_ep_busiest_factor(128.0, 8.0, 64.0, 1), 1.0, 0.0);
    CHECK_REL(sim_moe_ep_busiest_factor(128.0, 8.0, 0.0, 8), 1.0, 0.0);
}

/* A DP group spread over nodes (sim_alltoall_time_s): 4 GPUs 8 apart on nodes of 8, so one
 * per node: 3 inter-node steps and 3/4 of the buffer over each GPU's NIC; 16 GPUs 2 apart:
 * 4 per node (the 4-GPU entry on 4/16 of the buffer) and 12/16 of it across 4 nodes. */
static void alltoall_across_nodes(void)
{
    sim_hw hw;
    test_hw(&hw);
    hw.n_alltoall = 1;
    hw.alltoall[0] = (sim_allreduce){
        .n_gpus = 4, .latency_s = 6.1e-6, .bus_bw_bytes_per_s = 211e9, .prov = SIM_PROV_ESTIMATED};
    const double B = 3.7e6, lat = hw.v[SIM_HWF_INTERNODE_LATENCY], bw = hw.v[SIM_HWF_BW_INTERNODE];
    CHECK_REL(hw.v[SIM_HWF_N_GPUS_PER_NODE], 8.0, 0.0);
    CHECK_REL(sim_alltoall_time_s(&hw, 4, 8, B), 3.0 * lat + 0.75 * B / bw, 1e-15);
    CHECK_REL(sim_alltoall_time_s(&hw, 4, 1, B), 6.1e-6 + 0.75 * B / 211e9, 1e-15);
    CHECK_REL(sim_alltoall_time_s(&hw, 16, 2, B),
              6.1e-6 + 0.75 * (B / 4.0) / 211e9 + 3.0 * lat + 12.0 / 16.0 * B / bw, 1e-15);
}

/*
 * Weights per GPU, Qwen3-30B-A3B (d 2048, L 48, E 128, F 768, bf16): one expert is
 * 3 x 2048 x 768 x 2 = 9,437,184 bytes. TP 4 x DP 2 with EP: 128 / 8 = 16 whole experts a GPU,
 * 48 x 16 x 9,437,184 = 7,247,757,312 bytes, next to the attention and router weights of
 * TP 4 (replicated over the 2 DP ranks). TP 8, dp 1: EP's 16 whole experts and the slices of
 * 128 experts weigh the same.
 */
static void expert_parallel_weights(void)
{
    sim_model m;
    if (load_model("qwen3-30b-a3b", &m) != 0)
        return;
    sim_weight_bytes w4, wep, w8, w8ep;
    sim_model_weight_bytes(&m, 4, SIM_DTYPE_BF16, &w4);
    sim_model_weight_bytes_moe(&m, 4, 2, 1, SIM_DTYPE_BF16, &wep);
    CHECK_REL(wep.experts, 7247757312.0, 1e-15);
    CHECK_REL(wep.total, w4.total - w4.experts + 7247757312.0, 1e-15);
    CHECK_REL(wep.qkv, w4.qkv, 0.0);
    sim_model_weight_bytes(&m, 8, SIM_DTYPE_BF16, &w8);
    sim_model_weight_bytes_moe(&m, 8, 1, 1, SIM_DTYPE_BF16, &w8ep);
    CHECK_REL(w8.experts, 7247757312.0, 1e-15);
    CHECK_REL(w8ep.total, w8.total, 1e-15);
}

/* Layouts vLLM cannot run, or llmstep does not model, are refused naming the option. */
static void moe_layout_refusals(void)
{
    static const struct {
        const char *model;
        int tp, dp, ep, pp;
        const char *want;
    } cases[] = {
        {"llama-3-8b", 2, 1, 1, 1,
         "--ep: llama-3-8b has no experts (expert parallelism applies "
         "to MoE models)"},
        {"mixtral-8x7b", 4, 4, 1, 1,
         "--ep: num_experts = 8 is not divisible by the 16 GPUs of the expert-parallel group (DP "
         "4 x TP 4)"},
        {"mixtral-8x7b", 1, 3, 0, 1,
         "--dp 3: moe_intermediate_size = 14336 is not divisible by DP x TP = 3 (without --ep "
         "the experts are sliced over DP x TP GPUs)"},
        {"mixtral-8x7b", 2, 2, 1, 2,
         "--ep with --pp 2: not modelled yet (pipeline stages of DP or EP layouts)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_model m;
        if (load_model(cases[i].model, &m) != 0)
            continue;
        sim_run_cfg cfg = sim_run_cfg_plain(cases[i].tp, SIM_DTYPE_BF16);
        cfg.dp = cases[i].dp;
        cfg.ep = cases[i].ep;
        cfg.pp = cases[i].pp;
        struct sim_err err = {{0}};
        CHECK_INT(sim_moe_layout_check(&m, &cfg, &err), SIM_EINVAL);
        CHECK_STR(err.msg, cases[i].want);
    }
    /* Dense models take --dp alone: replicas. */
    sim_model m;
    if (load_model("llama-3-8b", &m) == 0) {
        sim_run_cfg cfg = sim_run_cfg_plain(2, SIM_DTYPE_BF16);
        cfg.dp = 3;
        struct sim_err err;
        CHECK_INT(sim_moe_layout_check(&m, &cfg, &err), SIM_OK);
    }
}

/* Two costs equal in every field the simulations read, bit for bit. */
static int same_cost(const sim_step_cost *a, const sim_step_cost *b)
{
    int same = a->flops == b->flops && a->bytes == b->bytes && a->compute_s == b->compute_s &&
               a->memory_s == b->memory_s && a->comm_s == b->comm_s &&
               a->roofline_s == b->roofline_s && a->step_s == b->step_s && a->tokens == b->tokens &&
               a->seqs == b->seqs && a->seqs_emitting == b->seqs_emitting &&
               a->n_allreduce == b->n_allreduce && a->decode_kernel == b->decode_kernel &&
               a->bound == b->bound;
    for (int i = 0; i < SIM_OP_COUNT; i++) {
        const sim_op_cost *x = &a->ops[i], *y = &b->ops[i];
        same &= x->flops == y->flops && x->bytes == y->bytes &&
                x->weight_bytes == y->weight_bytes && x->n_kernels == y->n_kernels &&
                x->compute_s == y->compute_s && x->memory_s == y->memory_s &&
                x->time_s == y->time_s && x->bound == y->bound;
    }
    return same;
}

/*
 * sim_step_cost_next_memo prices a sequence of steps exactly as sim_step_cost_prepared does
 * afresh: decodes of varying batch (memo hits, and misses that evict: 300 (T, Se) keys over
 * 32 entries), prefills and mixed steps, for a dense, a MoE and an MLA model at TP 2.
 */
static void step_memo_is_exact(void)
{
    const char *ids[] = {"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3"};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        sim_model m;
        sim_hw hw;
        if (load_on_test_hw(ids[i], &m, &hw) != 0)
            return;
        const sim_run_cfg cfg = sim_run_cfg_plain(2, SIM_DTYPE_BF16);
        sim_step_prep p;
        sim_step_prep_init(&p, &m, &hw, &cfg);
        sim_step_memo memo;
        sim_step_memo_init(&memo);
        sim_step_cost c = {0}, want;
        uint64_t r = 12345;
        int mismatches = 0, n = 0;
        for (int k = 0; k < 3000; k++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            const int64_t b = 1 + (int64_t)((r >> 33) % 300), ctx = 1 + (int64_t)((r >> 13) % 5000);
            sim_step st = {1, {{b, 1, ctx, 1}}};
            if ((r >> 60) == 0) /* now and then a prefill chunk with the decodes */
                st = (sim_step){2, {{b, 1, ctx, 1}, {1, 1 + (int64_t)((r >> 20) % 2048), 0, 1}}};
            else if ((r >> 60) == 1) /* or a step of the same tokens as the last */
                st.groups[0].count = c.tokens > 0.0 ? (int64_t)c.tokens : b;
            sim_step_cost_next_memo(&p, &memo, &st, &c);
            sim_step_cost_prepared(&p, &st, &want);
            mismatches += !same_cost(&c, &want);
            n++;
        }
        CHECK_INT(mismatches, 0);
        CHECK_INT(n, 3000);
    }
}

/*
 * sim_lines_max_sum (the decode runs' closed form, docs/model.md "Decode runs") against the
 * sum of max_i f_i(k) taken term by term over k = a .. b-1: 2000 random sets of 1 to 4 lines
 * whose crossings fall inside, before and after [a, b), equal slopes and a constant line
 * among them (the async host time). Relative 1e-12; the test counts sets with two or more
 * crossings inside the range.
 */
/* splitmix64: the next of a sequence of random 64-bit numbers. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void lines_max_sum_matches_terms(void)
{
    uint64_t g = 99;
    int multi = 0;
    for (int t = 0; t < 2000; t++) {
        const int n = 1 + (int)(next_rand(&g) % SIM_LINES_MAX);
        sim_line f[SIM_LINES_MAX];
        for (int i = 0; i < n; i++) {
            const double v0 = 1e-3 * (double)(next_rand(&g) % 1000) / 100.0;
            const double sl = (double)((int64_t)(next_rand(&g) % 2001) - 1000) * 1e-8;
            f[i] = (sim_line){
                v0, i == 1 && t % 5 == 0 ? 0.0 : (i == 2 && t % 7 == 0 ? f[0].slope_s : sl)};
        }
        const int64_t a = (int64_t)(next_rand(&g) % 50), b = a + (int64_t)(next_rand(&g) % 3000);
        double direct = 0.0;
        int switches = 0, prev_top = -1;
        for (int64_t k = a; k < b; k++) {
            double best = -1e300;
            int top = 0;
            for (int i = 0; i < n; i++) {
                const double v = f[i].at0_s + f[i].slope_s * (double)k;
                if (v > best) {
                    best = v;
                    top = i;
                }
            }
            switches += prev_top >= 0 && top != prev_top;
            prev_top = top;
            direct += best;
            CHECK_REL(sim_lines_max_at(f, n, k), best, 1e-15);
        }
        multi += switches >= 2;
        const double closed = sim_lines_max_sum(f, n, a, b);
        if (b == a)
            CHECK(closed == 0.0);
        else
            CHECK_REL(closed, direct, 1e-12);
    }
    printf("  lines: 2000 envelope sums, %d with two or more changes of line\n", multi);
    CHECK(multi > 25);
}

int main(void)
{
    mla_decode_and_prefill_counts();
    llama2_7b_decode_counts();
    llama31_8b_prefill_counts();
    mixtral_expert_counts();
    moe_router_unquantized_fp32();
    minimax_qk_norm_allreduce();
    moe_classes();
    moe_r0_per_byte();
    attention_pairs();
    monotone_in_tokens_and_context();
    memory_bound_time_halves_with_double_bandwidth();
    mha_sharded_bytes_halve();
    regime_flips_at_ridge();
    step_mode_bounds();
    calibration_applies();
    step_check_rejects_bad_steps();
    sliding_window_caps_context();
    issue9_kernel_figures();
    fp8_dispatch_tiles_and_quant_kernel();
    decode_runs_sum_steps();
    lines_max_sum_matches_terms();
    gqa_reuse_flag();
    paged_attention_kernel_choice();
    paged_attention_blocks_resident();
    small_m_gemm_class();
    qwen2_max_window_layers();
    fused_moe_hand_cases();
    gemma2_interleaved_window();
    chunked_attention_pairs();
    llama4_chunked_attention();
    gemma3_local_and_global_layer();
    expert_and_data_parallel_counts();
    ep_busiest_gpu_factor();
    alltoall_across_nodes();
    expert_parallel_weights();
    moe_layout_refusals();
    step_memo_is_exact();
    return check_report("test_step");
}
