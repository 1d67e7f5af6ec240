/*
 * test_arch.c - the architecture-traits table (sim/core/arch.h) against what each
 * architecture's makers publish, and the table's lookups.
 */
#include <string.h>

#include "arch.h"
#include "check.h"

/*
 * One row per supported model_type. The oracle is the published architecture, not the table:
 * - Llama: a dense decoder with SwiGLU (Touvron et al. 2023, arXiv:2302.13971, section 2.2);
 *   grouped-query attention (Llama 2, arXiv:2307.09288; Llama 3, arXiv:2407.21783).
 * - Mistral 7B: GQA and sliding-window attention in every layer (arXiv:2310.06825, section 2).
 * - Qwen2: GQA with a bias on q, k and v (Qwen2 technical report, arXiv:2407.10671, 2.2.1).
 * - Qwen3: Qwen2's QKV bias removed and QK-Norm added; the MoE models route among 128 experts
 *   without shared experts (Qwen3 technical report, arXiv:2505.09388, section 2).
 * - Qwen2 and Qwen3 window only with use_sliding_window, from layer max_window_layers on
 *   (HF Qwen2Config and Qwen2Attention).
 * - Mixtral: a sparse mixture of experts in every layer (arXiv:2401.04088, section 2.1).
 * - DeepSeek-V2 and V3: multi-head latent attention and DeepSeekMoE with shared experts
 *   (arXiv:2405.04434, section 2; arXiv:2412.19437, section 2.1); V3's auxiliary-loss-free
 *   balancing adds a bias to the routing scores (arXiv:2412.19437, 2.1.2), HF
 *   DeepseekV3Config's default topk_method noaux_tc.
 * - Kimi K2: DeepSeek-V3's architecture, MLA and an MoE of 384 experts (arXiv:2507.20534).
 * - Phi-3: the Llama-2 block structure (arXiv:2404.14219, section 2).
 * - Gemma 2: local sliding-window and global attention alternating every other layer, logit
 *   soft-capping, post-norm and pre-norm with RMSNorm, GeGLU (arXiv:2408.00118, section 2 and
 *   Table 1); the embedding scaled by sqrt(d_model) (HF Gemma2Model's normalizer).
 * - Gemma 3: five local layers for every global one, Gemma 2's soft-capping replaced by
 *   QK-norm, post-norm and pre-norm with RMSNorm, a SigLIP vision encoder (arXiv:2503.19786,
 *   section 2); the embedding scaled as Gemma 2's (HF Gemma3TextScaledWordEmbedding).
 * - gpt-oss: MoE in every block, alternating banded-window (128) and dense attention, a
 *   learned bias in each head's softmax denominator, a clamped SwiGLU with a residual term
 *   (gpt-oss-120b and gpt-oss-20b model card, arXiv:2508.10925).
 * - Llama 4: MoE layers of routed experts and a shared expert (alternating with dense layers
 *   in Maverick), interleaved attention layers without positional embeddings (iRoPE), native
 *   multimodality with an early-fusion vision encoder (Meta, "The Llama 4 herd", 2025-04-05).
 */
static void rows_match_published_architectures(void)
{
    static const struct {
        const char *name;
        sim_attn_kind attn;
        int moe; /* 1: a mixture of experts */
        sim_window_kind window;
        int qk_norm, qkv_bias, softcap, sinks, extra_norms;
        sim_act act;
        sim_vision_kind vision;
    } cases[] = {
        {"llama", SIM_ATTN_GQA, 0, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"mistral", SIM_ATTN_GQA, 0, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"qwen2", SIM_ATTN_GQA, 0, SIM_WINDOW_FROM_LAYER, 0, 1, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"qwen3", SIM_ATTN_GQA, 0, SIM_WINDOW_FROM_LAYER, 1, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"mixtral", SIM_ATTN_GQA, 1, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"qwen3_moe", SIM_ATTN_GQA, 1, SIM_WINDOW_FROM_LAYER, 1, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"deepseek_v2", SIM_ATTN_MLA, 1, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"deepseek_v3", SIM_ATTN_MLA, 1, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"kimi_k2", SIM_ATTN_MLA, 1, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        {"phi3", SIM_ATTN_GQA, 0, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU, SIM_VISION_NONE},
        {"gemma2", SIM_ATTN_GQA, 0, SIM_WINDOW_ALTERNATE, 0, 0, 1, 0, 2, SIM_ACT_GELU_TANH,
         SIM_VISION_NONE},
        {"gpt_oss", SIM_ATTN_GQA, 1, SIM_WINDOW_ALTERNATE, 0, 0, 0, 1, 0, SIM_ACT_SWIGLU_CLAMP,
         SIM_VISION_NONE},
        {"gemma3", SIM_ATTN_GQA, 0, SIM_WINDOW_PERIODIC, 1, 0, 0, 0, 2, SIM_ACT_GELU_TANH,
         SIM_VISION_SIGLIP},
        {"gemma3_text", SIM_ATTN_GQA, 0, SIM_WINDOW_PERIODIC, 1, 0, 0, 0, 2, SIM_ACT_GELU_TANH,
         SIM_VISION_NONE},
        {"llama4", SIM_ATTN_GQA, 1, SIM_WINDOW_CHUNKED, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_LLAMA4},
        {"llama4_text", SIM_ATTN_GQA, 1, SIM_WINDOW_CHUNKED, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        /* HF configuration_qwen3_vl.py: Qwen3's text layers (q/k norms) and a vision tower. */
        {"qwen3_vl", SIM_ATTN_GQA, 0, SIM_WINDOW_FROM_LAYER, 1, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_QWEN3VL},
        {"qwen3_vl_moe", SIM_ATTN_GQA, 1, SIM_WINDOW_FROM_LAYER, 1, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_QWEN3VL},
        /* HF configuration_minimax_m2.py, vLLM minimax_m2.py: q/k norms, MoE in every layer. */
        {"minimax_m2", SIM_ATTN_GQA, 1, SIM_WINDOW_UNIFORM, 1, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_NONE},
        /* Kimi-K2.5: Kimi-K2's MLA and DeepSeek MoE under text_config, MoonViT. */
        {"kimi_k25", SIM_ATTN_MLA, 1, SIM_WINDOW_UNIFORM, 0, 0, 0, 0, 0, SIM_ACT_SILU,
         SIM_VISION_MOONVIT},
    };
    const size_t n = sizeof(cases) / sizeof(cases[0]);
    CHECK_INT(sim_arch_n_rows(), n);
    for (size_t i = 0; i < n; i++) {
        const sim_arch_traits *t = sim_arch_row(i);
        if (!t)
            continue;
        /* The rows are in the order the unknown-type message lists them. */
        CHECK_STR(t->model_type, cases[i].name);
        CHECK_INT(t->attn, cases[i].attn);
        CHECK_INT(t->moe != SIM_MOE_NONE, cases[i].moe);
        CHECK_INT(t->window, cases[i].window);
        CHECK_INT(t->qk_norm, cases[i].qk_norm);
        CHECK_INT(t->qkv_bias, cases[i].qkv_bias);
        CHECK_INT(t->softcap, cases[i].softcap);
        CHECK_INT(t->attn_sinks, cases[i].sinks);
        CHECK_INT(t->extra_norms, cases[i].extra_norms);
        CHECK_INT(t->act, cases[i].act);
        CHECK_INT(t->vision, cases[i].vision);
    }
}

/* The numbers the papers give for the rows' defaults and MoE layouts (sources above). */
static void rows_carry_published_defaults(void)
{
    const sim_arch_traits *g3 = sim_arch_find("gemma3_text");
    const sim_arch_traits *v3 = sim_arch_find("deepseek_v3");
    const sim_arch_traits *oss = sim_arch_find("gpt_oss");
    const sim_arch_traits *q3 = sim_arch_find("qwen3_moe");
    const sim_arch_traits *l4 = sim_arch_find("llama4");
    if (!g3 || !v3 || !oss || !q3 || !l4) {
        CHECK(0);
        return;
    }
    CHECK_INT(g3->window_period, 6); /* five local layers, then one global */
    CHECK(g3->embed_scale && !g3->softcap);
    CHECK_INT(v3->moe, SIM_MOE_DEEPSEEK); /* routed and shared experts */
    CHECK_STR(v3->topk_method, "noaux_tc");
    CHECK(oss->o_bias && oss->expert_bias && oss->router_bias && !oss->embed_scale);
    CHECK_INT(oss->moe, SIM_MOE_EVERY_LAYER);
    CHECK_INT(q3->moe, SIM_MOE_SPARSE_STEP); /* no shared experts */
    CHECK_INT(l4->moe, SIM_MOE_INTERLEAVED); /* routed experts and a shared one */
    /* The router's dtype (vllm-project/vllm 055e47c and 01d9958): MiniMax-M2 builds its gate
     * with params_dtype=torch.float32; Mixtral, Qwen3-MoE, DeepSeek, gpt-oss and Llama-4 in the
     * model's dtype. */
    const sim_arch_traits *mm = sim_arch_find("minimax_m2");
    CHECK(mm && mm->router_fp32 && mm->qk_norm_all_heads);
    CHECK(!sim_arch_find("qwen3")->qk_norm_all_heads); /* Qwen3's q/k norms are per head */
    CHECK(!v3->router_fp32 && !oss->router_fp32 && !q3->router_fp32 && !l4->router_fp32);
    CHECK(!sim_arch_find("mixtral")->router_fp32);
}

/* Lookups: every row by its name, every family by its first row, and the refusals. */
static void lookups_find_every_row(void)
{
    for (size_t i = 0; i < sim_arch_n_rows(); i++) {
        const sim_arch_traits *t = sim_arch_row(i);
        CHECK(sim_arch_find(t->model_type) == t);
        CHECK(sim_arch_traits_of(t->arch) != NULL);
        CHECK_INT(t->attn == SIM_ATTN_MLA, t->moe == SIM_MOE_DEEPSEEK);
        CHECK_INT(t->topk_method != NULL, t->moe == SIM_MOE_DEEPSEEK);
    }
    CHECK(sim_arch_row(sim_arch_n_rows()) == NULL);
    for (int a = 0; a < SIM_ARCH_COUNT; a++) {
        const sim_arch_traits *t = sim_arch_traits_of((sim_arch)a);
        CHECK(t && (int)t->arch == a);
    }
    CHECK(sim_arch_traits_of(SIM_ARCH_COUNT) == NULL);
    CHECK_STR(sim_arch_name(SIM_ARCH_GEMMA3), "gemma3");
    CHECK_STR(sim_arch_name(SIM_ARCH_LLAMA4), "llama4");
    CHECK_STR(sim_arch_name(SIM_ARCH_COUNT), "?");
    CHECK(sim_arch_find("gpt_neox") == NULL);
    CHECK(sim_arch_find("Llama") == NULL); /* case-sensitive, as HF's model_type */
    CHECK(sim_arch_unmodelled_why("jamba") != NULL);
    CHECK(sim_arch_unmodelled_why("llama") == NULL);
}

int main(void)
{
    rows_match_published_architectures();
    rows_carry_published_defaults();
    lookups_find_every_row();
    return check_report("test_arch");
}
