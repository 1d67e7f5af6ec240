/*
 * model.c - parameter counts, KV-cache size and TP legality of a sim_model.
 * Formulas: docs/model.md, "Parameters" and "KV cache".
 */
#include "model.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "arch.h"
#include "err.h"

#define SET_ERR sim_errf

static const char *const dtype_names[SIM_DTYPE_COUNT] = {"fp16", "bf16", "fp8", "fp32"};
static const double dtype_bytes[SIM_DTYPE_COUNT] = {2.0, 2.0, 1.0, 4.0};

double sim_dtype_bytes(sim_dtype dtype)
{
    if ((int)dtype < 0 || dtype >= SIM_DTYPE_COUNT)
        return 0.0;
    return dtype_bytes[dtype];
}

const char *sim_dtype_name(sim_dtype dtype)
{
    if ((int)dtype < 0 || dtype >= SIM_DTYPE_COUNT)
        return "?";
    return dtype_names[dtype];
}

static int str_eq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

sim_status sim_dtype_parse(const char *name, sim_dtype *out)
{
    for (int i = 0; i < SIM_DTYPE_COUNT; i++) {
        if (str_eq(name, dtype_names[i])) {
            *out = (sim_dtype)i;
            return SIM_OK;
        }
    }
    return SIM_EINVAL;
}

/* The family's first row in the architecture table (arch.c): "gemma3", not "gemma3_text". */
const char *sim_arch_name(sim_arch arch)
{
    const sim_arch_traits *t = sim_arch_traits_of(arch);
    return t ? t->model_type : "?";
}

sim_status sim_model_validate(const sim_model *m, struct sim_err *err)
{
    const struct {
        const char *key;
        int64_t v;
    } pos[] = {
        {"num_hidden_layers", m->n_layers},
        {"hidden_size", m->d_model},
        {"num_attention_heads", m->n_heads},
        {"num_key_value_heads", m->n_kv_heads},
        {"head_dim", m->head_dim},
        {"vocab_size", m->vocab},
        {"max_position_embeddings", m->max_pos},
    };
    for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++) {
        if (pos[i].v < 1) {
            SET_ERR(err, "%s: must be >= 1 (got %lld)", pos[i].key, (long long)pos[i].v);
            return SIM_EINVAL;
        }
    }
    if (m->n_kv_heads > m->n_heads || m->n_heads % m->n_kv_heads != 0) {
        SET_ERR(err,
                "num_key_value_heads: must divide num_attention_heads (expected a divisor of "
                "%lld, got %lld)",
                (long long)m->n_heads, (long long)m->n_kv_heads);
        return SIM_EINVAL;
    }
    if (m->sliding_window < 0) {
        SET_ERR(err, "sliding_window: must be >= 0 (got %lld)", (long long)m->sliding_window);
        return SIM_EINVAL;
    }
    if (m->full_attn_layers < 0 ||
        (m->full_attn_layers > 0 &&
         (m->sliding_window == 0 || m->full_attn_layers >= m->n_layers))) {
        SET_ERR(err,
                "max_window_layers: the layers without the sliding window must be fewer than "
                "num_hidden_layers = %lld, with a window (got %lld)",
                (long long)m->n_layers, (long long)m->full_attn_layers);
        return SIM_EINVAL;
    }
    if (m->n_experts > 0) {
        if (m->n_experts_per_tok < 1 || m->n_experts_per_tok > m->n_experts) {
            SET_ERR(err, "num_experts_per_tok: must be in [1, %lld] (got %lld)",
                    (long long)m->n_experts, (long long)m->n_experts_per_tok);
            return SIM_EINVAL;
        }
        if (m->d_ff_expert < 1) {
            SET_ERR(err, "moe_intermediate_size: must be >= 1 (got %lld)",
                    (long long)m->d_ff_expert);
            return SIM_EINVAL;
        }
        if (m->n_moe_layers < 0 || m->n_moe_layers > m->n_layers) {
            SET_ERR(err, "mlp_only_layers: MoE layer count %lld outside [0, %lld]",
                    (long long)m->n_moe_layers, (long long)m->n_layers);
            return SIM_EINVAL;
        }
    } else if (m->n_moe_layers != 0) {
        SET_ERR(err, "num_experts: MoE layers given without experts");
        return SIM_EINVAL;
    }
    if (m->mla) {
        const struct {
            const char *key;
            int64_t v;
        } mla[] = {{"kv_lora_rank", m->kv_lora_rank},
                   {"qk_nope_head_dim", m->qk_nope_dim},
                   {"qk_rope_head_dim", m->qk_rope_dim},
                   {"v_head_dim", m->v_head_dim}};
        for (size_t i = 0; i < sizeof(mla) / sizeof(mla[0]); i++) {
            if (mla[i].v < 1) {
                SET_ERR(err, "%s: must be >= 1 (got %lld)", mla[i].key, (long long)mla[i].v);
                return SIM_EINVAL;
            }
        }
        if (m->q_lora_rank < 0 || m->n_shared_experts < 0 || m->n_mtp_layers < 0) {
            SET_ERR(err, "q_lora_rank: must be >= 0 (got %lld)", (long long)m->q_lora_rank);
            return SIM_EINVAL;
        }
    }
    if (m->window_chunked && m->sliding_window < 1) {
        SET_ERR(err, "attention_chunk_size: must be >= 1 with chunked attention (got %lld)",
                (long long)m->sliding_window);
        return SIM_EINVAL;
    }
    if (m->vision.kind != SIM_VISION_NONE) {
        const sim_vision *v = &m->vision;
        const int sizes_ok = v->n_layers >= 1 && v->d_model >= 1 && v->d_ff >= 1 && v->patch >= 1 &&
                             v->n_channels >= 1;
        if (v->kind == SIM_VISION_MOONVIT) {
            if (!sizes_ok || v->n_pos < 1 || v->merge < 1 || v->merge_w < 1) {
                SET_ERR(err, "vision_config: needs positive sizes (vt_num_hidden_layers, "
                             "vt_hidden_size, vt_intermediate_size, patch_size, "
                             "init_pos_emb_height, init_pos_emb_width, merge_kernel_size)");
                return SIM_EINVAL;
            }
        } else if (v->kind == SIM_VISION_QWEN3VL) {
            if (!sizes_ok || v->t_patch < 1 || v->n_pos < 1 || v->merge < 1 || v->d_out < 1) {
                SET_ERR(err, "vision_config: needs positive sizes (depth, hidden_size, "
                             "intermediate_size, patch_size, in_channels, temporal_patch_size, "
                             "num_position_embeddings, spatial_merge_size, out_hidden_size)");
                return SIM_EINVAL;
            }
        } else if (!sizes_ok || v->image < v->patch || v->image % v->patch != 0) {
            SET_ERR(err,
                    "vision_config: needs positive sizes and image_size a multiple of patch_size "
                    "(got image_size %lld, patch_size %lld)",
                    (long long)v->image, (long long)v->patch);
            return SIM_EINVAL;
        }
    }
    if (m->n_moe_layers < m->n_layers && m->d_ff < 1) {
        SET_ERR(err, "intermediate_size: must be >= 1 (got %lld)", (long long)m->d_ff);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

/*
 * Parameters of one MLA attention block (docs/model.md, "MLA"): q_a (d x q_lora) and its
 * RMSNorm, q_b (q_lora x H (nope + rope)), or a plain q (d x H (nope + rope)) without
 * q_lora; kv_a_proj_with_mqa (d x (kv_lora + rope)) and its RMSNorm over kv_lora;
 * kv_b (kv_lora x H (nope + v)); o (H v x d).
 */
static double mla_attn_params(const sim_model *m)
{
    const double d = (double)m->d_model, H = (double)m->n_heads;
    const double ql = (double)m->q_lora_rank, kvl = (double)m->kv_lora_rank;
    const double qk = (double)(m->qk_nope_dim + m->qk_rope_dim);
    const double q = ql > 0.0 ? d * ql + ql + ql * H * qk : d * H * qk;
    return q + d * (kvl + (double)m->qk_rope_dim) + kvl +
           kvl * H * (double)(m->qk_nope_dim + m->v_head_dim) + H * (double)m->v_head_dim * d;
}

/*
 * Vision encoder and projector parameters (docs/model.md, "Vision encoders"); c channels,
 * patch p, n = (image / p)^2 patches, e the encoder width, f its MLP width, l its layers,
 * d the language model's hidden size. Both encoders are pre-LayerNorm ViTs whose layer holds
 * q, k, v, o with biases (4 (e^2 + e)), fc1 and fc2 with biases (2 e f + f + e) and two
 * LayerNorms with biases (4 e).
 * SigLIP (HF SiglipVisionTransformer, vision_use_head false): a patch convolution with bias
 * (c p^2 e + e), n position embeddings (n e), the layers and a post-LayerNorm (2 e); the
 * Gemma-3 projector (Gemma3MultiModalProjector) is an e x d matrix and an RMSNorm over e.
 * Llama-4 (HF Llama4VisionModel): the patch linear without bias (c p^2 e), a class embedding
 * (e) and n + 1 position embeddings, pre- and post-LayerNorms (4 e), the layers, the
 * pixel-shuffle MLP (f x proj_in and proj_out x proj_out, no biases) and the projector
 * (vision_output_dim x d, no bias).
 * Qwen3-VL (HF Qwen3VLVisionModel): a patch Conv3d with bias over t frames (c t p^2 e + e),
 * num_position_embeddings position embeddings (n_pos e), the layers (the same form: fused
 * qkv 3 e^2 + 3 e and proj e^2 + e with biases, fc1 and fc2 with biases, two LayerNorms) and
 * 1 + n_deepstack patch mergers (Qwen3VLVisionPatchMerger) over H = merge^2 e: a LayerNorm
 * with bias (over e for the final merger, over H for the DeepStack ones), fc1 H x H and fc2
 * H x out_hidden_size, both with biases. The mergers' output is the language model's input,
 * so there is no separate projector.
 * MoonViT (Kimi-K2.5; vLLM kimi_k25_vit.py, the checkpoint's vision_tower and mm_projector
 * tensors): a patch Conv2d with bias (c p^2 e + e), a learnable grid of init_pos_emb_height x
 * init_pos_emb_width position embeddings (n_pos e; the temporal one is a fixed sin/cos buffer),
 * the layers (the same form: fused wqkv 3 e^2 + 3 e and wo e^2 + e with biases, fc0 and fc1
 * with biases, two LayerNorms with biases), a final LayerNorm (2 e), and the patch-merger
 * projector over H = merge x merge_w x e: a LayerNorm over e (2 e), linear_1 H x H and
 * linear_2 H x d, both with biases.
 */
double sim_model_vision_params(const sim_model *m)
{
    const sim_vision *v = &m->vision;
    if (v->kind == SIM_VISION_NONE)
        return 0.0;
    const double e = (double)v->d_model, f = (double)v->d_ff, l = (double)v->n_layers;
    const double side = (double)(v->image / v->patch), n = side * side;
    /* In double: channels x patch^2 of a hostile config would overflow int64. */
    const double p = (double)v->patch, patch_in = (double)v->n_channels * p * p;
    const double layer = 4.0 * (e * e + e) + 2.0 * e * f + f + e + 4.0 * e;
    const double d = (double)m->d_model;
    if (v->kind == SIM_VISION_SIGLIP)
        return patch_in * e + e + n * e + l * layer + 2.0 * e + e * d + e;
    if (v->kind == SIM_VISION_MOONVIT)
        return l * layer + sim_model_vision_replicated_params(m);
    if (v->kind == SIM_VISION_QWEN3VL) {
        const double H = (double)v->merge * (double)v->merge * e, o = (double)v->d_out;
        const double merger = H * H + H + H * o + o;
        return patch_in * (double)v->t_patch * e + e + (double)v->n_pos * e + l * layer +
               (merger + 2.0 * e) + (double)v->n_deepstack * (merger + 2.0 * H);
    }
    return patch_in * e + e + (n + 1.0) * e + 4.0 * e + l * layer + f * (double)v->d_proj_in +
           (double)v->d_proj_out * (double)v->d_proj_out + (double)v->d_out * d;
}

double sim_model_vision_replicated_params(const sim_model *m)
{
    const sim_vision *v = &m->vision;
    if (v->kind != SIM_VISION_MOONVIT)
        return 0.0;
    /* The patch embedding, the position grid, the final LayerNorm and the projector: plain
     * torch modules and ReplicatedLinear in vLLM's kimi_k25_vit.py and kimi_k25.py. */
    const double e = (double)v->d_model, p = (double)v->patch, d = (double)m->d_model;
    const double H = (double)v->merge * (double)v->merge_w * e;
    return (double)v->n_channels * p * p * e + e + (double)v->n_pos * e + 2.0 * e + 2.0 * e +
           H * H + H + H * d + d;
}

double sim_model_norms_per_layer(const sim_model *m) { return 2.0 + (double)m->extra_norms; }

void sim_model_params(const sim_model *m, sim_param_count *out)
{
    const double d = (double)m->d_model, L = (double)m->n_layers;
    const double q = (double)(m->n_heads * m->head_dim);
    const double kv = (double)(m->n_kv_heads * m->head_dim);
    const double n_moe = (double)m->n_moe_layers, n_dense = L - n_moe;
    const double E = (double)m->n_experts, k = (double)m->n_experts_per_tok;
    const double Fe = (double)m->d_ff_expert, F = (double)m->d_ff;

    out->embedding = (double)m->vocab * d;
    out->lm_head = m->tie_embeddings ? 0.0 : (double)m->vocab * d;
    /* q, k, v, o projections; biases on q, k, v (qwen2); q/k RMSNorm weights (qwen3). */
    double attn_layer = d * (q + 2.0 * kv) + q * d;
    if (m->qkv_bias)
        attn_layer += q + 2.0 * kv;
    if (m->qk_norm)
        attn_layer += 2.0 * (double)m->head_dim;
    if (m->o_bias)
        attn_layer += d;
    if (m->attn_sinks)
        attn_layer += (double)m->n_heads;
    if (m->mla)
        attn_layer = mla_attn_params(m);
    out->attention = L * attn_layer;
    /* Gated MLP: gate, up (d x F each) and down (F x d); MoE: E such experts plus a d x E router
     * (+ E correction biases), and n_shared always-active experts. */
    const double expert = 3.0 * d * Fe + (m->expert_bias ? 2.0 * Fe + d : 0.0);
    const double moe_layer =
        (E + (double)m->n_shared_experts) * expert + d * E + (m->router_bias ? E : 0.0);
    out->mlp = n_dense * 3.0 * d * F + n_moe * moe_layer;
    out->norms = (sim_model_norms_per_layer(m) * L + 1.0) * d;
    out->vision = sim_model_vision_params(m);
    out->total = out->embedding + out->lm_head + out->attention + out->mlp + out->norms;
    out->active_per_token = out->total - n_moe * (E - k) * expert;
    /* Added after the active count: a text token does not touch the vision encoder (and
     * x + 0 = x keeps text-only models' totals bit for bit). */
    out->total += out->vision;
    /* A DeepSeek-V3 MTP module (arXiv:2412.19437 section 2.2; HF checkpoint layer L): a
     * decoder layer (MoE when the model has experts), enorm and hnorm, eh_proj (2d x d), its
     * own shared_head norm, and the checkpoint's copies of the embedding and LM head. */
    const double mtp_block = attn_layer + (n_moe > 0.0 ? moe_layer : 3.0 * d * F) + 2.0 * d;
    out->mtp =
        (double)m->n_mtp_layers * (mtp_block + 2.0 * d * d + 3.0 * d + 2.0 * (double)m->vocab * d);
}

static const char *const mclass_names[SIM_MCLASS_COUNT] = {"dense-mha", "dense-gqa", "dense-mla",
                                                           "moe-mha",   "moe-gqa",   "moe-mla"};

sim_model_class sim_model_class_of(const sim_model *m)
{
    const int attn = m->mla ? 2 : m->n_kv_heads < m->n_heads ? 1 : 0;
    return (sim_model_class)((m->n_experts > 0 ? 3 : 0) + attn);
}

const char *sim_model_class_name(sim_model_class c)
{
    return (unsigned)c < SIM_MCLASS_COUNT ? mclass_names[c] : "?";
}

int sim_model_class_find(const char *name)
{
    for (int c = 0; c < SIM_MCLASS_COUNT; c++)
        if (strcmp(name, mclass_names[c]) == 0)
            return c;
    return -1;
}

int sim_model_in_classes(const sim_model *m, unsigned classes)
{
    return (int)((classes >> sim_model_class_of(m)) & 1u);
}

int64_t sim_model_kv_heads_per_gpu(const sim_model *m, int tp)
{
    if (m->mla)
        return 1;
    int64_t h = m->n_kv_heads / (int64_t)tp;
    return h < 1 ? 1 : h;
}

double sim_model_kv_bytes_per_token(const sim_model *m, int tp, sim_dtype kv_dtype)
{
    /* MLA: one latent of kv_lora + rope per token and layer, on every GPU (vLLM
     * MLAAttentionSpec, num_kv_heads = 1, head_size 576 for DeepSeek-V3). */
    if (m->mla)
        return (double)m->n_layers * (double)(m->kv_lora_rank + m->qk_rope_dim) *
               sim_dtype_bytes(kv_dtype);
    return 2.0 * (double)m->n_layers * (double)sim_model_kv_heads_per_gpu(m, tp) *
           (double)m->head_dim * sim_dtype_bytes(kv_dtype);
}

int64_t sim_model_full_layers_in(const sim_model *m, int64_t start, int64_t n)
{
    if (m->sliding_window == 0)
        return n;
    /* Layer i is full iff i % p == p - 1: floor(end / p) - floor(start / p) of [start, end). */
    if (m->window_period > 0)
        return (start + n) / m->window_period - start / m->window_period;
    int64_t lf = m->full_attn_layers - start;
    return lf < 0 ? 0 : (lf > n ? n : lf);
}

static int64_t cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }

void sim_model_kv_layout(const sim_model *m, int tp, sim_dtype kv_dtype, bool hybrid,
                         sim_kv_layout *out)
{
    /* One layer's share of sim_model_kv_bytes_per_token (same factors, so exact). */
    out->layer_token_bytes =
        m->mla ? (double)(m->kv_lora_rank + m->qk_rope_dim) * sim_dtype_bytes(kv_dtype)
               : 2.0 * (double)sim_model_kv_heads_per_gpu(m, tp) * (double)m->head_dim *
                     sim_dtype_bytes(kv_dtype);
    const int64_t full = hybrid ? sim_model_full_layers_in(m, 0, m->n_layers) : m->n_layers;
    out->n_full_layers = full;
    out->n_window_layers = m->n_layers - full;
    out->window = out->n_window_layers > 0 ? m->sliding_window : 0;
    out->chunked = out->n_window_layers > 0 && m->window_chunked;
    if (out->n_window_layers == 0 || full == 0) {
        /* One kind of layer: a single group of all of them (vLLM
         * _get_kv_cache_groups_uniform_spec). */
        out->group_layers = m->n_layers;
        out->n_full_groups = full > 0 ? 1 : 0;
        out->n_window_groups = full > 0 ? 0 : 1;
        return;
    }
    /* Two kinds (vLLM _get_kv_cache_groups_uniform_page_size): G is the smaller count, or the
     * larger one when it is below 1.25 times the smaller (less padding). Compared in integers:
     * max < 1.25 min  <=>  4 max < 5 min. */
    const int64_t lo = full < out->n_window_layers ? full : out->n_window_layers;
    const int64_t hi = full < out->n_window_layers ? out->n_window_layers : full;
    out->group_layers = 4 * hi < 5 * lo ? hi : lo;
    out->n_full_groups = cdiv64(full, out->group_layers);
    out->n_window_groups = cdiv64(out->n_window_layers, out->group_layers);
}

int64_t sim_kv_skipped_tokens(const sim_kv_layout *k, int64_t computed)
{
    if (k->n_window_layers == 0)
        return 0;
    if (k->chunked) /* vLLM ChunkedLocalAttentionManager: only the current chunk */
        return computed / k->window * k->window;
    int64_t s = computed - k->window + 1;
    return s > 0 ? s : 0;
}

int64_t sim_kv_request_blocks(const sim_kv_layout *k, int64_t block_size, int64_t computed,
                              int64_t tokens)
{
    assert(block_size >= 1 && computed >= 0 && computed <= tokens);
    const int64_t slots = cdiv64(tokens, block_size);
    if (k->n_window_groups == 0)
        return k->n_full_groups * slots;
    const int64_t freed = sim_kv_skipped_tokens(k, computed) / block_size;
    return k->n_full_groups * slots + k->n_window_groups * (slots - freed);
}

int64_t sim_kv_max_request_blocks(const sim_kv_layout *k, int64_t block_size,
                                  int64_t max_batched_tokens, int64_t len)
{
    assert(block_size >= 1 && len >= 1);
    const int64_t full = k->n_full_groups * cdiv64(len, block_size);
    if (k->n_window_groups == 0)
        return full;
    /* vLLM max_admission_blocks_per_request: SlidingWindowSpec
     * cdiv(min(W - 1 + T, len), bs) + 1; ChunkedLocalAttentionSpec cdiv(min(W + T, len), bs). */
    int64_t w = (k->chunked ? k->window : k->window - 1) + max_batched_tokens;
    w = w < len ? w : len;
    return full + k->n_window_groups * (cdiv64(w, block_size) + (k->chunked ? 0 : 1));
}

double sim_model_kv_bytes_at(const sim_model *m, int tp, sim_dtype kv_dtype, bool hybrid,
                             int64_t block_size, int64_t context)
{
    sim_kv_layout k;
    sim_model_kv_layout(m, tp, kv_dtype, hybrid, &k);
    return sim_kv_bytes_at(&k, block_size, context);
}

double sim_kv_bytes_at(const sim_kv_layout *k, int64_t block_size, int64_t context)
{
    assert(block_size >= 1 && context >= 0);
    /* The windowed layers keep their tokens from the first block they still hold. */
    const int64_t kept = context - block_size * (sim_kv_skipped_tokens(k, context) / block_size);
    return k->layer_token_bytes *
           ((double)k->n_full_layers * (double)context + (double)k->n_window_layers * (double)kept);
}

sim_status sim_model_check_tp(const sim_model *m, int tp, struct sim_err *err)
{
    if (tp < 1) {
        SET_ERR(err, "tp: must be >= 1 (got %d)", tp);
        return SIM_EINVAL;
    }
    const int64_t t = tp;
    if (m->n_heads % t != 0) {
        SET_ERR(err, "tp: %d does not divide num_attention_heads = %lld", tp,
                (long long)m->n_heads);
        return SIM_EINVAL;
    }
    if (!m->mla && m->n_kv_heads % t != 0 && t % m->n_kv_heads != 0) {
        SET_ERR(err, "tp: %d neither divides nor is a multiple of num_key_value_heads = %lld", tp,
                (long long)m->n_kv_heads);
        return SIM_EINVAL;
    }
    if (m->n_moe_layers < m->n_layers && m->d_ff % t != 0) {
        SET_ERR(err, "tp: %d does not divide intermediate_size = %lld", tp, (long long)m->d_ff);
        return SIM_EINVAL;
    }
    if (m->n_experts > 0 && m->d_ff_expert % t != 0) {
        SET_ERR(err, "tp: %d does not divide moe_intermediate_size = %lld", tp,
                (long long)m->d_ff_expert);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

static double ceil_div_d(double a, double b) { return ceil(a / b); }

double sim_model_linear_bytes(const sim_model *m, sim_dtype dtype, double n, double k)
{
    const sim_quant *q = &m->quant;
    if (q->method == SIM_QUANT_NONE)
        return n * k * sim_dtype_bytes(dtype);
    double b = n * k * (double)q->weight_bits / 8.0 + q->tensor_scale_bytes;
    double n_scales = 0.0;
    if (q->group_k > 0)
        n_scales = (q->block_n > 0 ? ceil_div_d(n, (double)q->block_n) : n) *
                   ceil_div_d(k, (double)q->group_k);
    else if (q->per_channel)
        n_scales = n;
    return b + n_scales * (double)(q->scale_bits + q->zero_bits) / 8.0;
}

sim_dtype sim_model_dtype16(const sim_model *m)
{
    return m->dtype == SIM_DTYPE_BF16 ? SIM_DTYPE_BF16 : SIM_DTYPE_FP16;
}

const char *sim_gemm_math_name(sim_gemm_math g)
{
    static const char *const names[SIM_GEMM_MATH_COUNT] = {"16-bit", "fp8", "int8", "fp4"};
    if ((int)g < 0 || g >= SIM_GEMM_MATH_COUNT)
        return "?";
    return names[g];
}

/*
 * MLA attention weights of all layers on one GPU (docs/model.md, "MLA"): q_a and
 * kv_a_proj_with_mqa are replicated (vLLM fuses them into fused_qkv_a_proj, a
 * ReplicatedLinear), q_b and kv_b column-parallel over heads, o row-parallel; the q_a and
 * kv_a RMSNorms (16-bit) go to small. vLLM keeps 16-bit copies of kv_b split per head
 * (W_UK_T, W_UV: Hg kv_lora (nope + v) elements) for the absorbed decode
 * (vllm/v1/attention/backends/mla/common.py, process_weights_after_loading): counted in qkv
 * when kv_b is quantized.
 * n16 layers have 16-bit attention (excluded from the quantization).
 */
static void mla_weight_bytes(const sim_model *m, int tp, sim_dtype dtype, double n16,
                             sim_weight_bytes *out)
{
    const int quant = m->quant.method != SIM_QUANT_NONE;
    const double hb = quant || dtype == SIM_DTYPE_FP8 ? 2.0 : sim_dtype_bytes(dtype);
    const double d = (double)m->d_model, L = (double)m->n_layers;
    const double Hg = (double)(m->n_heads / tp), ql = (double)m->q_lora_rank;
    const double kvl = (double)m->kv_lora_rank, rope = (double)m->qk_rope_dim;
    const double qk = (double)(m->qk_nope_dim + m->qk_rope_dim);
    const double nv = (double)(m->qk_nope_dim + m->v_head_dim), vh = (double)m->v_head_dim;
    double q_w, q16;
    if (ql > 0.0) {
        q_w =
            sim_model_linear_bytes(m, dtype, ql, d) + sim_model_linear_bytes(m, dtype, Hg * qk, ql);
        q16 = (d * ql + ql * Hg * qk) * hb;
    } else {
        q_w = sim_model_linear_bytes(m, dtype, Hg * qk, d);
        q16 = d * Hg * qk * hb;
    }
    const double kv_w = sim_model_linear_bytes(m, dtype, kvl + rope, d) +
                        sim_model_linear_bytes(m, dtype, Hg * nv, kvl);
    const double kv16 = (d * (kvl + rope) + kvl * Hg * nv) * hb;
    /* The per-head copies are new tensors only when kv_b is stored quantized (dequantized
     * copies); a 16-bit kv_b is split into views of itself. */
    const double copies = quant || dtype == SIM_DTYPE_FP8 ? (L - n16) * Hg * kvl * nv * hb : 0.0;
    out->qkv = (L - n16) * (q_w + kv_w) + n16 * (q16 + kv16) + copies;
    out->o = (L - n16) * sim_model_linear_bytes(m, dtype, d, Hg * vh) + n16 * Hg * vh * d * hb;
    out->small = L * ((ql > 0.0 ? ql : 0.0) + kvl) * hb;
}

double sim_rope_cache_rows(sim_rope_kind k, double max_pos, double factor, double orig_max_pos)
{
    switch (k) {
    case SIM_ROPE_LINEAR: /* LinearScalingRotaryEmbedding, DynamicNTKScalingRotaryEmbedding */
        return max_pos * factor;
    case SIM_ROPE_YARN: /* YaRNScalingRotaryEmbedding, DeepseekScalingRotaryEmbedding */
        return ceil(orig_max_pos * factor);
    case SIM_ROPE_LONGROPE: /* Phi3LongRoPEScaledRotaryEmbedding: short and long caches */
        return orig_max_pos + max_pos;
    case SIM_ROPE_DEFAULT:
        break;
    }
    return max_pos;
}

/* The sum of a GPU's weight bytes: every part, whatever computed them. */
static void weight_total(sim_weight_bytes *w)
{
    w->total = w->embedding + w->lm_head + w->qkv + w->o + w->small + w->gate_up + w->down +
               w->experts + w->router + w->norms + w->vision + w->rope;
}

/*
 * Resident weights per GPU. Linear layers of attention and MLP use dtype (or the
 * checkpoint's quantization); the embedding, LM head, norms and MoE router stay in
 * 16 bits under fp8 and under every quantization scheme (vLLM quantizes only the
 * linear layers of the blocks). Vocab-parallel tables hold ceil(vocab / tp) rows.
 * Layers a quantized config excludes count 16-bit bytes; exclusions by layer name
 * take dense MLP layers before MoE ones.
 */
double sim_model_router_bytes(const sim_model *m, double hb) { return m->router_fp32 ? 4.0 : hb; }

void sim_model_weight_bytes(const sim_model *m, int tp, sim_dtype dtype, sim_weight_bytes *out)
{
    const int quant = m->quant.method != SIM_QUANT_NONE;
    const double hb = quant || dtype == SIM_DTYPE_FP8 ? 2.0 : sim_dtype_bytes(dtype);
    const double d = (double)m->d_model, L = (double)m->n_layers, t = (double)tp;
    const double hd = (double)m->head_dim;
    const double qg = (double)(m->n_heads / tp) * hd;
    const double kvg = (double)sim_model_kv_heads_per_gpu(m, tp) * hd;
    const double vrows = (double)((m->vocab + tp - 1) / tp);
    const double n_moe = (double)m->n_moe_layers, n_dense = L - n_moe;
    const double Fg = (double)m->d_ff / t, Feg = (double)m->d_ff_expert / t;
    const double E = (double)m->n_experts;

    *out = (sim_weight_bytes){0};
    out->embedding = vrows * d * hb;
    if (!m->tie_embeddings)
        out->lm_head = m->quant.lm_head_quantized ? sim_model_linear_bytes(m, dtype, vrows, d)
                                                  : vrows * d * hb;
    /* Attention: q, k, v column-parallel (stored as separate matrices), o row-parallel. */
    double n16 = 0.0;
    if (quant)
        n16 = m->quant.attn_excluded ? L : (double)m->quant.n_attn_excluded_layers;
    if (m->mla) {
        mla_weight_bytes(m, tp, dtype, n16, out);
    } else {
        out->qkv = (L - n16) * (sim_model_linear_bytes(m, dtype, qg, d) +
                                2.0 * sim_model_linear_bytes(m, dtype, kvg, d)) +
                   n16 * d * (qg + 2.0 * kvg) * hb;
        out->o = (L - n16) * sim_model_linear_bytes(m, dtype, d, qg) + n16 * qg * d * hb;
    }
    if (m->qkv_bias)
        out->small += L * (qg + 2.0 * kvg) * hb;
    if (m->qk_norm)
        out->small += L * 2.0 * hd * hb;
    /* gpt-oss: o bias (replicated), sinks and every expert's biases (16-bit, sharded with the
     * heads and the intermediate size). */
    if (m->o_bias)
        out->small += L * d * hb;
    if (m->attn_sinks)
        out->small += L * (double)(m->n_heads / tp) * hb;
    if (m->expert_bias)
        out->small += (double)m->n_moe_layers * (double)m->n_experts *
                      (2.0 * (double)m->d_ff_expert / (double)tp + d) * hb;
    /* MLP: gate and up column-parallel, down row-parallel; every expert likewise. */
    n16 = 0.0;
    if (quant)
        n16 = m->quant.mlp_excluded ? L : (double)m->quant.n_mlp_excluded_layers;
    /* A layer named excluded is taken dense first (exclusion lists name layer 0 of DeepSeek-V3);
     * names of the dense MLP's projections alone (mlp.down_proj, not mlp.experts.N.down_proj)
     * exclude every dense layer, and names of shared experts those of every MoE layer. */
    const double named_dense = n16 < n_dense ? n16 : n_dense, moe16 = n16 - named_dense;
    const double dense16 = m->quant.dense_mlp_excluded ? n_dense : named_dense;
    double shared16 =
        m->quant.shared_excluded ? n_moe : moe16 + (double)m->quant.n_shared_excluded_layers;
    if (shared16 > n_moe)
        shared16 = n_moe;
    if (n_dense > 0.0) {
        out->gate_up = (n_dense - dense16) * 2.0 * sim_model_linear_bytes(m, dtype, Fg, d) +
                       dense16 * 2.0 * d * Fg * hb;
        out->down =
            (n_dense - dense16) * sim_model_linear_bytes(m, dtype, d, Fg) + dense16 * Fg * d * hb;
    }
    if (n_moe > 0.0) {
        const double one_q = 2.0 * sim_model_linear_bytes(m, dtype, Feg, d) +
                             sim_model_linear_bytes(m, dtype, d, Feg);
        out->experts = (n_moe - moe16) * E * one_q + moe16 * E * 3.0 * d * Feg * hb;
        /* The router is never quantized (vLLM builds every gate with quant_config=None): 16-bit,
         * or fp32 where the model asks (MiniMax-M2); its correction bias is fp32 (vLLM
         * DeepseekV2MoE, MiniMaxM2MoE). */
        const double rb = sim_model_router_bytes(m, hb);
        out->router = n_moe * (d * E * rb + (m->router_bias ? 4.0 * E : 0.0));
        /* Shared experts: a dense gated MLP of n_shared Fe per MoE layer, TP-sharded like the
         * dense MLP (vLLM DeepseekV2MLP), so counted with gate_up and down. */
        const double Fsg = (double)m->n_shared_experts * Feg;
        if (Fsg > 0.0) {
            out->gate_up += (n_moe - shared16) * 2.0 * sim_model_linear_bytes(m, dtype, Fsg, d) +
                            shared16 * 2.0 * d * Fsg * hb;
            out->down += (n_moe - shared16) * sim_model_linear_bytes(m, dtype, d, Fsg) +
                         shared16 * Fsg * d * hb;
        }
    }
    out->norms = (sim_model_norms_per_layer(m) * L + 1.0) * d * hb;
    /* The vision encoder: 16-bit, sharded over tp as vLLM's parallel linears shard its
     * layers; its embeddings and norms (1.3% of SigLIP's, 0.2% of Llama-4's) are in fact
     * replicated, which this understates by under 0.1% of a GPU's weights. */
    const double vrep = sim_model_vision_replicated_params(m);
    out->vision = (sim_model_vision_params(m) - vrep) * hb / t + vrep * hb;
    /* RoPE's cos/sin caches: buffers of rope_cache_rows x rotary_dim values in the model's
     * 16-bit dtype, built whole by every worker (vLLM RotaryEmbedding.cos_sin_cache, base.py);
     * Llama-4 Scout's 10,485,760 positions make 2.5 GiB of them a GPU. */
    out->rope = (double)m->rope_cache_rows * (double)m->rotary_dim * hb;
    weight_total(out);
}

void sim_model_weight_bytes_moe(const sim_model *m, int tp, int dp, int ep, sim_dtype dtype,
                                sim_weight_bytes *out)
{
    sim_model_weight_bytes(m, tp, dtype, out);
    if (m->n_experts == 0 || (dp <= 1 && !ep))
        return;
    const int g = tp * (dp > 1 ? dp : 1);
    sim_weight_bytes w;
    sim_model_weight_bytes(m, ep ? 1 : g, dtype, &w);
    out->experts = ep ? w.experts / (double)g : w.experts;
    if (m->expert_bias) { /* gpt-oss: the biases go with their experts */
        const int quant = m->quant.method != SIM_QUANT_NONE;
        const double hb = quant || dtype == SIM_DTYPE_FP8 ? 2.0 : sim_dtype_bytes(dtype);
        const double nl = (double)m->n_moe_layers, E = (double)m->n_experts;
        const double d = (double)m->d_model, F = (double)m->d_ff_expert;
        const double at_tp = nl * E * (2.0 * F / (double)tp + d) * hb;
        const double at_g =
            ep ? nl * E / (double)g * (2.0 * F + d) * hb : nl * E * (2.0 * F / (double)g + d) * hb;
        out->small += at_g - at_tp;
    }
    weight_total(out);
}

double sim_model_weight_bytes_per_gpu(const sim_model *m, int tp, sim_dtype dtype)
{
    sim_weight_bytes w;
    sim_model_weight_bytes(m, tp, dtype, &w);
    return w.total;
}
