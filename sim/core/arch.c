/* arch.c - see arch.h. Each row cites where its facts come from. */
#include "arch.h"

#include <string.h>

/* Gemma-3 (HF Gemma3TextConfig defaults, which multimodal configs leave out: vocab_size 262208,
 * max_position_embeddings 131072, head_dim 256, sliding_window 4096, sliding_window_pattern 6,
 * tie_word_embeddings true; Gemma3DecoderLayer: four norms and q/k RMSNorms; vLLM gemma3.py).
 * gemma3 is the multimodal config (SigLIP encoder), gemma3_text its language model alone. */
#define GEMMA3_ROW(type, vis)                                                                      \
    {                                                                                              \
        .model_type = (type), .arch = SIM_ARCH_GEMMA3, .vision = (vis), .attn = SIM_ATTN_GQA,      \
        .moe = SIM_MOE_NONE, .window = SIM_WINDOW_PERIODIC, .vocab = 262208, .max_pos = 131072,    \
        .head_dim = 256, .window_tokens = 4096, .window_period = 6, .tie = SIM_TIE_DEFAULT_UNSET,  \
        .extra_norms = 2, .qk_norm = true, .layer_types = true, .act = SIM_ACT_GELU_TANH,          \
        .embed_scale = true                                                                        \
    }

/* Llama-4 (HF Llama4TextConfig defaults: attention_chunk_size 8192, no_rope_layer_interval 4,
 * intermediate_size_mlp 16384, use_qk_norm true; vLLM llama4.py). llama4 is the multimodal
 * config (Llama4VisionModel), llama4_text its language model alone. */
#define LLAMA4_ROW(type, vis)                                                                      \
    {                                                                                              \
        .model_type = (type), .arch = SIM_ARCH_LLAMA4, .vision = (vis), .attn = SIM_ATTN_GQA,      \
        .moe = SIM_MOE_INTERLEAVED, .window = SIM_WINDOW_CHUNKED, .window_tokens = 8192,           \
        .window_period = 4, .d_ff_dense = 16384, .qk_l2_norm = true, .layer_types = true,          \
        .act = SIM_ACT_SILU                                                                        \
    }

/* Qwen3: q/k RMSNorms (HF Qwen3Attention q_norm, k_norm), no q, k, v biases. Qwen3-MoE:
 * Qwen3's attention, experts of moe_intermediate_size (HF Qwen3MoeDecoderLayer). Each is also
 * the language model of a Qwen3-VL config (qwen3_vl, qwen3_vl_moe: HF Qwen3VLConfig and
 * Qwen3VLMoeConfig; vLLM qwen3_vl.py, qwen3_vl_moe.py) under text_config, whose interleaved
 * M-RoPE (rope_scaling mrope_section) is elementwise like RoPE and not costed apart, with
 * Qwen3VLVisionModel under vision_config. */
#define QWEN3_ROW(type, a, m, vis)                                                                 \
    {                                                                                              \
        .model_type = (type), .arch = (a), .vision = (vis), .attn = SIM_ATTN_GQA, .moe = (m),      \
        .window = SIM_WINDOW_FROM_LAYER, .qk_norm = true                                           \
    }

/* DeepSeek-V2/V3 and Kimi-K2 (vLLM DeepseekV2ForCausalLM; HF DeepseekV2Config defaults
 * topk_method to greedy, DeepseekV3Config to noaux_tc; Kimi-K2 is DeepSeek-V3's shape). */
#define MLA_ROW(type, a, topk)                                                                     \
    {                                                                                              \
        .model_type = (type), .arch = (a), .attn = SIM_ATTN_MLA, .moe = SIM_MOE_DEEPSEEK,          \
        .window = SIM_WINDOW_UNIFORM, .topk_method = (topk), .act = SIM_ACT_SILU                   \
    }

static const sim_arch_traits rows[] = {
    /* Llama, Mistral and Phi-3/Phi-4 (packed qkv_proj and gate_up_proj, which vLLM runs as
     * Llama's one QKV and one gate_up GEMM): the plain GQA layer; Mistral's and Phi's window,
     * when set, applies to every layer. */
    {.model_type = "llama",
     .arch = SIM_ARCH_LLAMA,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_NONE,
     .window = SIM_WINDOW_UNIFORM},
    {.model_type = "mistral",
     .arch = SIM_ARCH_MISTRAL,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_NONE,
     .window = SIM_WINDOW_UNIFORM},
    /* Qwen2: q, k, v biases always (HF Qwen2Attention, bias=True); the window only with
     * use_sliding_window, from layer max_window_layers on. */
    {.model_type = "qwen2",
     .arch = SIM_ARCH_QWEN2,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_NONE,
     .window = SIM_WINDOW_FROM_LAYER,
     .qkv_bias = true},
    QWEN3_ROW("qwen3", SIM_ARCH_QWEN3, SIM_MOE_NONE, SIM_VISION_NONE),
    /* Mixtral: every layer MoE, experts of intermediate_size (HF MixtralSparseMoeBlock). */
    {.model_type = "mixtral",
     .arch = SIM_ARCH_MIXTRAL,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_EVERY_LAYER,
     .window = SIM_WINDOW_UNIFORM},
    QWEN3_ROW("qwen3_moe", SIM_ARCH_QWEN3_MOE, SIM_MOE_SPARSE_STEP, SIM_VISION_NONE),
    MLA_ROW("deepseek_v2", SIM_ARCH_DEEPSEEK_V2, "greedy"),
    MLA_ROW("deepseek_v3", SIM_ARCH_DEEPSEEK_V3, "noaux_tc"),
    MLA_ROW("kimi_k2", SIM_ARCH_KIMI_K2, "noaux_tc"),
    {.model_type = "phi3",
     .arch = SIM_ARCH_PHI3,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_NONE,
     .window = SIM_WINDOW_UNIFORM},
    /* Gemma-2 (HF Gemma2Config, Gemma2DecoderLayer; vLLM gemma2.py): the window on the even
     * layers, four norms a layer, the LM head tied unless the config says otherwise, GELU-tanh,
     * soft-capped attention scores and logits, the embedding scaled by sqrt(d). */
    {.model_type = "gemma2",
     .arch = SIM_ARCH_GEMMA2,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_NONE,
     .window = SIM_WINDOW_ALTERNATE,
     .tie = SIM_TIE_DEFAULT_ABSENT,
     .extra_norms = 2,
     .act = SIM_ACT_GELU_TANH,
     .softcap = true,
     .embed_scale = true},
    /* gpt-oss (HF GptOssAttention, GptOssExperts, GptOssTopKRouter; vLLM gpt_oss.py): MoE in
     * every layer with biased experts and router, attention_bias on q, k, v and o, a sink per
     * head, the window on the even layers as layer_types marks them, the clamped SwiGLU. */
    {.model_type = "gpt_oss",
     .arch = SIM_ARCH_GPT_OSS,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_EVERY_LAYER,
     .window = SIM_WINDOW_ALTERNATE,
     .o_bias = true,
     .attn_sinks = true,
     .expert_bias = true,
     .router_bias = true,
     .layer_types = true,
     .act = SIM_ACT_SWIGLU_CLAMP},
    GEMMA3_ROW("gemma3", SIM_VISION_SIGLIP),
    GEMMA3_ROW("gemma3_text", SIM_VISION_NONE),
    LLAMA4_ROW("llama4", SIM_VISION_LLAMA4),
    LLAMA4_ROW("llama4_text", SIM_VISION_NONE),
    QWEN3_ROW("qwen3_vl", SIM_ARCH_QWEN3, SIM_MOE_NONE, SIM_VISION_QWEN3VL),
    QWEN3_ROW("qwen3_vl_moe", SIM_ARCH_QWEN3_MOE, SIM_MOE_SPARSE_STEP, SIM_VISION_QWEN3VL),
    /* MiniMax-M2 and M2.5 (HF MiniMaxM2Config, configuration_minimax_m2.py; vLLM
     * minimax_m2.py MiniMaxM2ForCausalLM): full GQA attention in every layer with RMSNorms on
     * q and k over all heads of the layer (MiniMaxText01RMSNormTP in vLLM's
     * mamba/linear_attn.py, whatever qk_norm_type says: the same elements as per-head norms,
     * and at TP > 1 an all-reduce of each token's q and k variances, forward_qk), MoE in every
     * layer with experts of intermediate_size and num_local_experts (as Mixtral), a sigmoid router
     * with a correction bias (use_routing_bias) and an fp32 gate (MiniMaxM2MoE: ReplicatedLinear
     * with params_dtype=torch.float32, quant_config=None, its input cast to fp32), no shared
     * expert; the MTP modules (use_mtp) run only under speculative decoding, which llmstep does not
     * model. */
    {.model_type = "minimax_m2",
     .arch = SIM_ARCH_MINIMAX_M2,
     .attn = SIM_ATTN_GQA,
     .moe = SIM_MOE_EVERY_LAYER,
     .window = SIM_WINDOW_UNIFORM,
     .qk_norm = true,
     .qk_norm_all_heads = true,
     .router_bias = true,
     .router_fp32 = true},
    /* Kimi-K2.5 (moonshotai/Kimi-K2.5, KimiK25ForConditionalGeneration; vLLM kimi_k25.py and
     * kimi_k25_vit.py): Kimi-K2's language model (DeepSeek-V3's MLA and MoE) under text_config
     * and the MoonViT encoder with its patch-merger projector under vision_config. */
    {.model_type = "kimi_k25",
     .arch = SIM_ARCH_KIMI_K25,
     .vision = SIM_VISION_MOONVIT,
     .attn = SIM_ATTN_MLA,
     .moe = SIM_MOE_DEEPSEEK,
     .window = SIM_WINDOW_UNIFORM,
     .topk_method = "noaux_tc",
     .act = SIM_ACT_SILU},
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

/* Architectures vLLM serves that llmstep recognises but does not model yet, and why: refused
 * by model_type before any key is checked, so the message names the real reason. */
static const struct {
    const char *model_type, *why;
} unmodelled[] = {
    {"qwen3_next", "a hybrid of linear (Gated DeltaNet) and full attention: not modelled"},
    {"jamba", "a hybrid of Mamba and attention layers: not modelled"},
    {"mamba", "a state-space model without attention: not modelled"},
    {"mamba2", "a state-space model without attention: not modelled"},
    {"falcon_h1", "a hybrid of Mamba and attention layers: not modelled"},
    {"zamba2", "a hybrid of Mamba and attention layers: not modelled"},
    {"nemotron_h", "a hybrid of Mamba and attention layers: not modelled"},
    {"granitemoehybrid", "a hybrid of Mamba and attention layers: not modelled"},
    {"minimax", "a hybrid of linear (lightning) and softmax attention: not modelled"},
    {"recurrent_gemma", "a recurrent (Griffin) model: not modelled"},
    {"rwkv", "a recurrent (RWKV) model without attention: not modelled"},
};

size_t sim_arch_n_rows(void) { return N_ROWS; }

const sim_arch_traits *sim_arch_row(size_t i) { return i < N_ROWS ? &rows[i] : NULL; }

const sim_arch_traits *sim_arch_find(const char *model_type)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (strcmp(model_type, rows[i].model_type) == 0)
            return &rows[i];
    return NULL;
}

const sim_arch_traits *sim_arch_traits_of(sim_arch arch)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (rows[i].arch == arch)
            return &rows[i];
    return NULL;
}

const char *sim_arch_unmodelled_why(const char *model_type)
{
    for (size_t i = 0; i < sizeof(unmodelled) / sizeof(unmodelled[0]); i++)
        if (strcmp(model_type, unmodelled[i].model_type) == 0)
            return unmodelled[i].why;
    return NULL;
}
