/* model_json.c - see model_json.h. */
#include "model_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch.h"
#include "json_util.h"

/* Keys llmstep reads. */
static const char *const used_keys[] = {
    "model_type",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
    "tie_word_embeddings",
    "sliding_window",
    "use_sliding_window",
    "torch_dtype",
    "dtype",
    "attention_bias",
    "num_local_experts",
    "num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "mlp_only_layers",
    "decoder_sparse_step",
    "max_window_layers",
    "quantization_config",
    "compression_config",
    /* MLA models (deepseek_v2, deepseek_v3, kimi_k2) */
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "n_routed_experts",
    "n_shared_experts",
    "first_k_dense_replace",
    "moe_layer_freq",
    "n_group",
    "topk_group",
    "topk_method",
    "scoring_func",
    "num_nextn_predict_layers",
    /* gpt-oss, Gemma-3: which layers slide ("sliding_attention") and which attend fully */
    "layer_types",
    /* Gemma-3: every p-th layer global (older configs; newer ones write layer_types) */
    "sliding_window_pattern",
    /* RoPE: its scaling sizes the cos/sin caches vLLM keeps on every GPU (parse_rope) */
    "rope_scaling",
    "rope_parameters",
    "rotary_dim",
    "partial_rotary_factor",
    /* Llama-4 (text_config) */
    "attention_chunk_size",
    "no_rope_layers",
    "no_rope_layer_interval",
    "use_qk_norm",
    "interleave_moe_layer_step",
    "moe_layers",
    "intermediate_size_mlp",
};

/* Keys of HF configs that do not change FLOPs or bytes. */
static const char *const ignored_keys[] = {
    "_name_or_path",
    "architectures",
    "attention_dropout",
    "auto_map",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "hidden_act",
    "initializer_range",
    "mlp_bias",
    "pretraining_tp",
    "rms_norm_eps",
    "rope_theta",
    "transformers_version",
    "use_cache",
    "norm_topk_prob",
    "output_router_logits",
    "router_aux_loss_coef",
    "router_jitter_noise",
    "_comment",
    "bos_token",
    "eos_token",
    "ep_size",
    "routed_scaling_factor",
    "aux_loss_alpha",
    "seq_aux",
    /* Phi-3/Phi-4: dropout rates and the pre-extension context (LongRoPE scaling, whose
     * caches it sizes, lives in rope_scaling). */
    "embd_pdrop",
    "resid_pdrop",
    "original_max_position_embeddings",
    /* Gemma-2: tanh soft-capping of attention scores and final logits (elementwise, inside the
     * attention kernel and on the sampled rows), the query scale, the activation's name, the
     * window's other spelling and HF's cache class. */
    "attn_logit_softcapping",
    "final_logit_softcapping",
    "query_pre_attn_scalar",
    "hidden_activation",
    "sliding_window_size",
    "cache_implementation",
    /* gpt-oss: the top-k's other spelling, the YaRN base context, the SwiGLU clamp. */
    "experts_per_token",
    "initial_context_length",
    "swiglu_limit",
    /* Gemma-3: the local layers' RoPE base. */
    "rope_local_base_freq",
    /* Llama-4: the NoPE layers' query temperature (an elementwise scale), a loader flag of
     * HF's and its attention-implementation marker. */
    "attn_scale",
    "attn_temperature_tuning",
    "floor_scale",
    "for_llm_compressor",
    "_attn_implementation_autoset",
};

/* Top-level keys of a multimodal config (Gemma-3 model_type gemma3, Llama-4 llama4), whose
 * language model is under text_config and vision encoder under vision_config. */
static const char *const mm_used_keys[] = {
    "model_type", "text_config",         "vision_config",       "torch_dtype",
    "dtype",      "tie_word_embeddings", "quantization_config",
};
static const char *const mm_ignored_keys[] = {
    "_comment",
    "architectures",
    "transformers_version",
    "boi_token_index",
    "eoi_token_index",
    "image_token_index",
    "mm_tokens_per_image",
    "initializer_range",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    /* Kimi-K2.5's special tokens and loader keys */
    "media_placeholder_token_id",
    "ignore_index",
    "use_unified_vision_chunk",
    "video_placeholder",
    "auto_map",
    /* Qwen3-VL's special token ids */
    "image_token_id",
    "video_token_id",
    "vision_start_token_id",
    "vision_end_token_id",
};

/* vision_config keys: those counted, then what does not change the parameter count. */
static const char *const vision_used_keys[] = {
    "num_hidden_layers",
    "hidden_size",
    "intermediate_size",
    "patch_size",
    "image_size",
    "num_channels",
    "vision_use_head",
    "projector_input_dim",
    "projector_output_dim",
    "vision_output_dim",
    "multi_modal_projector_bias",
};
/* Qwen3-VL's vision_config keys (HF Qwen3VLVisionConfig): those counted, then the rest. */
static const char *const qwen3vl_used_keys[] = {
    "depth",
    "hidden_size",
    "intermediate_size",
    "patch_size",
    "in_channels",
    "temporal_patch_size",
    "num_position_embeddings",
    "spatial_merge_size",
    "out_hidden_size",
    "deepstack_visual_indexes",
};
static const char *const qwen3vl_ignored_keys[] = {
    "model_type", "num_heads", "hidden_act", "initializer_range", "dtype", "torch_dtype",
};
/* Kimi-K2.5's vision_config keys (the checkpoint's MoonViT config, vt_ names): those counted,
 * then the rest (the temporal position table is a fixed buffer, not parameters). */
static const char *const moonvit_used_keys[] = {
    "vt_num_hidden_layers", "vt_hidden_size",     "vt_intermediate_size", "patch_size",
    "init_pos_emb_height",  "init_pos_emb_width", "merge_kernel_size",    "mm_projector_type",
    "mm_hidden_size",       "text_hidden_size",   "num_channels",
};
static const char *const moonvit_ignored_keys[] = {
    "model_type",           "vt_num_attention_heads",
    "init_pos_emb_time",    "pos_emb_type",
    "merge_type",           "video_attn_type",
    "projector_hidden_act", "projector_ln_eps",
    "_attn_implementation", "dtype",
    "torch_dtype",          "initializer_range",
};
static const char *const vision_ignored_keys[] = {
    "model_type",
    "num_attention_heads",
    "attention_dropout",
    "hidden_act",
    "layer_norm_eps",
    "norm_eps",
    "initializer_range",
    "pixel_shuffle_ratio",
    "projector_dropout",
    "rope_theta",
    "vision_feature_layer",
    "vision_feature_select_strategy",
    "_attn_implementation_autoset",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
/* Limits (docs/limits.md): far above any real model, and small enough that every count and
 * product the step model forms stays exact in double and every loop over layers is short. */
#define MAX_DIM    1000000000LL
#define MAX_LAYERS 4096LL

/* Reads model_type into *row, its row of the traits table (arch.h). An architecture vLLM
 * serves but llmstep does not model yet is refused with the reason, before any key is checked;
 * any other type with the list of the table's. */
static sim_status parse_arch(const sim_jctx *ctx, const cJSON *root, const sim_arch_traits **row)
{
    char mt[64];
    sim_status st = sim_j_str(ctx, root, "model_type", 1, mt, sizeof(mt), NULL);
    if (st != SIM_OK)
        return st;
    *row = sim_arch_find(mt);
    if (*row)
        return SIM_OK;
    const char *why = sim_arch_unmodelled_why(mt);
    if (why)
        return sim_j_fail(ctx, "model_type", "'%s': %s (docs/model.md, \"Model configs\")", mt,
                          why);
    char types[320] = "";
    size_t len = 0;
    for (size_t i = 0; i < sim_arch_n_rows() && len < sizeof(types); i++)
        len += (size_t)snprintf(types + len, sizeof(types) - len, "%s%s", i > 0 ? ", " : "",
                                sim_arch_row(i)->model_type);
    return sim_j_fail(ctx, "model_type", "unsupported model type (expected one of %s, got '%s')",
                      types, mt);
}

static sim_status parse_dtype(const sim_jctx *ctx, const cJSON *root, sim_model *m)
{
    char s[32], t[32];
    int present = 0, has_new = 0;
    /* Transformers 4.56 and later write "dtype"; earlier configs "torch_dtype". */
    sim_status st = sim_j_str(ctx, root, "torch_dtype", 0, s, sizeof(s), &present);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "dtype", 0, t, sizeof(t), &has_new);
    if (st != SIM_OK)
        return st;
    if (has_new && present && strcmp(s, t) != 0)
        return sim_j_fail(ctx, "dtype", "disagrees with torch_dtype ('%s' against '%s')", t, s);
    const char *key = has_new ? "dtype" : "torch_dtype";
    if (has_new) {
        memcpy(s, t, sizeof(s));
        present = 1;
    }
    /* vLLM's dtype "auto": fp16 and fp32 checkpoints run in fp16, bf16 ones in bf16. */
    m->dtype = SIM_DTYPE_FP16;
    if (!present || strcmp(s, "float16") == 0 || strcmp(s, "float32") == 0)
        return SIM_OK;
    if (strcmp(s, "bfloat16") == 0) {
        m->dtype = SIM_DTYPE_BF16;
        return SIM_OK;
    }
    return sim_j_fail(ctx, key,
                      "unsupported dtype (expected float16, bfloat16 or float32, got '%s')", s);
}

/* Counts MoE layers: layer i is MoE unless listed in mlp_only_layers, every decoder_sparse_step. */
static sim_status count_moe_layers(const sim_jctx *ctx, const cJSON *root, sim_model *m)
{
    int64_t step = 1;
    sim_status st = sim_j_int(ctx, root, "decoder_sparse_step", 0, 1, MAX_DIM, &step, NULL);
    if (st != SIM_OK)
        return st;
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(root, "mlp_only_layers");
    if (only && !cJSON_IsNull(only) && !cJSON_IsArray(only))
        return sim_j_fail(ctx, "mlp_only_layers", "wrong type (expected an array of integers)");
    /* Mark the listed layers first (each a whole number below num_hidden_layers, which is at
     * most MAX_LAYERS), then count: linear in the layers and the list. */
    unsigned char dense_listed[MAX_LAYERS] = {0};
    for (const cJSON *e = only && cJSON_IsArray(only) ? only->child : NULL; e; e = e->next) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0.0) ||
            e->valuedouble != floor(e->valuedouble) || e->valuedouble >= (double)m->n_layers)
            return sim_j_fail(ctx, "mlp_only_layers",
                              "wrong element (expected whole layer indices from 0 to %lld)",
                              (long long)m->n_layers - 1);
        dense_listed[(int64_t)e->valuedouble] = 1;
    }
    int64_t n = 0;
    for (int64_t i = 0; i < m->n_layers; i++)
        n += (i + 1) % step == 0 && !dense_listed[i];
    m->n_moe_layers = n;
    return SIM_OK;
}

/* A size key of a config: where it goes, whether it is required, and (not NULL) whether it
 * was given. */
typedef struct size_key {
    const char *key;
    int64_t *out;
    int required;
    int *present;
} size_key;

/* Reads the positive sizes k[0..n) of obj, k[0] a layer count (at most MAX_LAYERS), the others
 * at most MAX_DIM; stops at the first bad one. */
static sim_status read_sizes(const sim_jctx *ctx, const cJSON *obj, const size_key *k, size_t n)
{
    sim_status st = SIM_OK;
    for (size_t i = 0; st == SIM_OK && i < n; i++)
        st = sim_j_int(ctx, obj, k[i].key, k[i].required, 1, i == 0 ? MAX_LAYERS : MAX_DIM,
                       k[i].out, k[i].present);
    return st;
}

/*
 * Multi-head latent attention (docs/model.md, "MLA"; vLLM DeepseekV2MLAAttention): the latent
 * shapes. Every head reads the one latent (MQA-like, vLLM num_kv_heads = 1): the config's
 * num_key_value_heads does not shape the cache.
 */
static sim_status parse_mla(const sim_jctx *ctx, const cJSON *root, sim_model *m)
{
    const struct {
        const char *key;
        int64_t *out;
        int required;
    } ints[] = {
        {"q_lora_rank", &m->q_lora_rank, 0},      {"kv_lora_rank", &m->kv_lora_rank, 1},
        {"qk_nope_head_dim", &m->qk_nope_dim, 1}, {"qk_rope_head_dim", &m->qk_rope_dim, 1},
        {"v_head_dim", &m->v_head_dim, 1},
    };
    m->mla = true;
    sim_status st = SIM_OK;
    for (size_t i = 0; st == SIM_OK && i < N(ints); i++)
        st = sim_j_int(ctx, root, ints[i].key, ints[i].required, 1, MAX_DIM, ints[i].out, NULL);
    if (st != SIM_OK)
        return st;
    m->n_kv_heads = 1;
    m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
    return SIM_OK;
}

/*
 * The DeepSeek MoE layout (SIM_MOE_DEEPSEEK) of vLLM's DeepseekV2DecoderLayer
 * (vllm/model_executor/models/deepseek_v2.py): layer i has an MoE MLP when n_routed_experts is
 * set, i >= first_k_dense_replace and i % moe_layer_freq == 0, each with n_shared_experts
 * shared experts; the rest are dense MLPs of intermediate_size. The router (n_group /
 * topk_group grouped top-k) costs only its gate GEMM; topk_method (default: the row's)
 * noaux_tc adds the e_score_correction_bias.
 */
static sim_status parse_deepseek_moe(const sim_jctx *ctx, const cJSON *root,
                                     const sim_arch_traits *t, sim_model *m)
{
    int64_t first_dense = 0, freq = 1, n_group = 1, topk_group = 1;
    int has_experts = 0;
    char topk[32], scoring[32] = "softmax";
    snprintf(topk, sizeof(topk), "%s", t->topk_method);
    const struct {
        const char *key;
        int64_t *out, min, max;
        int *present;
    } ints[] = {
        {"n_routed_experts", &m->n_experts, 1, MAX_DIM, &has_experts},
        {"n_shared_experts", &m->n_shared_experts, 0, MAX_DIM, NULL},
        {"first_k_dense_replace", &first_dense, 0, MAX_LAYERS, NULL},
        {"moe_layer_freq", &freq, 1, MAX_DIM, NULL},
        {"n_group", &n_group, 1, MAX_DIM, NULL},
        {"topk_group", &topk_group, 1, MAX_DIM, NULL},
        {"num_nextn_predict_layers", &m->n_mtp_layers, 0, MAX_DIM, NULL},
    };
    sim_status st = SIM_OK;
    for (size_t i = 0; st == SIM_OK && i < N(ints); i++)
        st = sim_j_int(ctx, root, ints[i].key, 0, ints[i].min, ints[i].max, ints[i].out,
                       ints[i].present);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "topk_method", 0, topk, sizeof(topk), NULL);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "scoring_func", 0, scoring, sizeof(scoring), NULL);
    if (st != SIM_OK)
        return st;
    if (strcmp(topk, "noaux_tc") != 0 && strcmp(topk, "greedy") != 0 &&
        strcmp(topk, "group_limited_greedy") != 0)
        return sim_j_fail(ctx, "topk_method",
                          "unsupported routing (expected greedy, group_limited_greedy or "
                          "noaux_tc, got '%s')",
                          topk);
    if (strcmp(scoring, "softmax") != 0 && strcmp(scoring, "sigmoid") != 0)
        return sim_j_fail(ctx, "scoring_func",
                          "unsupported scoring (expected softmax or sigmoid, got '%s')", scoring);
    if (topk_group > n_group || (has_experts && m->n_experts % n_group != 0))
        return sim_j_fail(ctx, "topk_group",
                          "grouped routing does not fit (expected topk_group <= n_group = %lld "
                          "and n_group dividing n_routed_experts, got %lld)",
                          (long long)n_group, (long long)topk_group);
    m->router_bias = strcmp(topk, "noaux_tc") == 0;
    if (!has_experts) {
        m->n_experts = 0;
        return SIM_OK;
    }
    st = sim_j_int(ctx, root, "num_experts_per_tok", 1, 1, MAX_DIM, &m->n_experts_per_tok, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "moe_intermediate_size", 1, 1, MAX_DIM, &m->d_ff_expert, NULL);
    if (st != SIM_OK)
        return st;
    int64_t n = 0;
    for (int64_t i = 0; i < m->n_layers; i++)
        n += i >= first_dense && i % freq == 0;
    m->n_moe_layers = n;
    return SIM_OK;
}

/* ---- quantization_config (docs/model.md, "Quantized weights") ---- */

/* What a name in an exclusion list (ignore, modules_to_not_convert, ...) refers to. */
enum excl_kind {
    EXCL_NONE = 0,
    EXCL_ATTN = 1,
    EXCL_MLP = 2,    /* the MLP of a layer, experts included */
    EXCL_DENSE = 3,  /* a dense MLP's projections (mlp.gate_proj ..., not mlp.experts.N.*) */
    EXCL_SHARED = 4, /* shared experts only */
    EXCL_UNKNOWN = 5
};

static int has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* Layers already 16-bit (LM head, embedding, norms, router, and a multimodal checkpoint's vision
 * encoder and projector) need nothing; attention and MLP projections are excluded; anything
 * else is a name llmstep cannot place. */
static enum excl_kind classify_excluded(const char *name)
{
    if (has(name, "lm_head") || has(name, "embed") || has(name, "norm"))
        return EXCL_NONE;
    /* The vision encoder and its projector (Gemma-3 vision_tower and multi_modal_projector,
     * Llama-4 vision_model, Qwen3-VL visual, Kimi-K2.5 vision_tower and mm_projector): counted
     * 16-bit whatever the checkpoint ("Vision encoders"), before their attn and mlp names
     * could be taken for the language model's. */
    if (has(name, "vision") || has(name, "visual") || has(name, "mm_projector") ||
        has(name, "multi_modal_projector"))
        return EXCL_NONE;
    /* The router, its gate, and the router's score-correction bias (DeepSeek-V3 and
     * MiniMax-M2 e_score_correction_bias): 16-bit or fp32 already. */
    if (has(name, "router") || has(name, "shared_expert_gate") ||
        has(name, "e_score_correction_bias"))
        return EXCL_NONE;
    size_t n = strlen(name);
    if (n >= 4 && strcmp(name + n - 4, "gate") == 0) /* the MoE router: mlp.gate */
        return EXCL_NONE;
    if (has(name, "shared_expert"))
        return EXCL_SHARED;
    /* "mlp.down_proj", or the regex "mlp\\.(gate|up|gate_up|down)_proj": projections right
     * after "mlp.", which in a MoE model are the dense layers' (experts are mlp.experts.N.*). */
    const char *mp = strstr(name, "mlp");
    if (mp && !has(name, "expert")) {
        const char *q = mp + 3;
        if (*q == '\\')
            q++;
        if (*q == '.') {
            q++;
            if (*q == '(')
                q++;
            if (strncmp(q, "gate", 4) == 0 || strncmp(q, "up", 2) == 0 ||
                strncmp(q, "down", 4) == 0)
                return EXCL_DENSE;
        }
    }
    if (has(name, "attn") || has(name, "q_proj") || has(name, "k_proj") || has(name, "v_proj") ||
        has(name, "o_proj") || has(name, "qkv_proj"))
        return EXCL_ATTN;
    if (has(name, "mlp") || has(name, "gate_proj") || has(name, "up_proj") ||
        has(name, "down_proj") || has(name, "experts"))
        return EXCL_MLP;
    return EXCL_UNKNOWN;
}

/* Layer index of "...layers.N..." or -1 when the name covers every layer. */
static int64_t layer_index(const char *name)
{
    const char *p = strstr(name, "layers.");
    if (!p || p[7] < '0' || p[7] > '9')
        return -1;
    return strtoll(p + 7, NULL, 10);
}

/* Reads an exclusion list (array of module names) into m->quant. Absent or null: none. */
static sim_status parse_excluded(const sim_jctx *ctx, const cJSON *q, const char *key, sim_model *m)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(q, key);
    if (!a || cJSON_IsNull(a))
        return SIM_OK;
    if (!cJSON_IsArray(a))
        return sim_j_fail(ctx, key, "wrong type (expected an array of module names)");
    unsigned char *seen = calloc((size_t)m->n_layers * 3 + 3, 1);
    if (!seen)
        return sim_j_fail(ctx, key, "out of memory");
    sim_status st = SIM_OK;
    for (const cJSON *e = a->child; e && st == SIM_OK; e = e->next) {
        if (!cJSON_IsString(e)) {
            st = sim_j_fail(ctx, key, "wrong element (expected module name strings)");
            break;
        }
        enum excl_kind k = classify_excluded(e->valuestring);
        if (k == EXCL_UNKNOWN) {
            st = sim_j_fail(ctx, key,
                            "cannot tell which layers '%s' names (expected attention, MLP, "
                            "expert, router, embedding, norm, lm_head or vision modules)",
                            e->valuestring);
            break;
        }
        if (k == EXCL_NONE)
            continue;
        int64_t li = layer_index(e->valuestring);
        if (li < 0) {
            if (k == EXCL_ATTN)
                m->quant.attn_excluded = true;
            else if (k == EXCL_DENSE)
                m->quant.dense_mlp_excluded = true;
            else if (k == EXCL_SHARED)
                m->quant.shared_excluded = true;
            else
                m->quant.mlp_excluded = true;
            continue;
        }
        if (li >= m->n_layers) {
            st = sim_j_fail(ctx, key, "'%s' names layer %lld of a %lld-layer model", e->valuestring,
                            (long long)li, (long long)m->n_layers);
            break;
        }
        /* A layer counts once however many of its projections are named: a partly excluded
         * attention or MLP is counted 16-bit as a whole (an upper bound on its bytes). */
        unsigned char *flag = &seen[3 * li + (k == EXCL_ATTN ? 0 : k == EXCL_SHARED ? 2 : 1)];
        if (!*flag) {
            *flag = 1;
            if (k == EXCL_ATTN)
                m->quant.n_attn_excluded_layers++;
            else if (k == EXCL_SHARED)
                m->quant.n_shared_excluded_layers++;
            else
                m->quant.n_mlp_excluded_layers++;
        }
    }
    free(seen);
    return st;
}

/* Reads an optional pair [x, y] of whole numbers from 1 to max (max_text in the message, which
 * calls the two names). Absent or null: *present 0. */
static sim_status parse_pair(const sim_jctx *ctx, const cJSON *obj, const char *key,
                             const char *names, double max, const char *max_text, int64_t *x,
                             int64_t *y, int *present)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    *present = 0;
    if (!a || cJSON_IsNull(a))
        return SIM_OK;
    /* Range and integrality before the conversions (C11 6.3.1.4: out of range is undefined). */
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2 || !cJSON_IsNumber(a->child) ||
        !cJSON_IsNumber(a->child->next) || !(a->child->valuedouble >= 1.0) ||
        !(a->child->next->valuedouble >= 1.0) || a->child->valuedouble > max ||
        a->child->next->valuedouble > max ||
        a->child->valuedouble != floor(a->child->valuedouble) ||
        a->child->next->valuedouble != floor(a->child->next->valuedouble))
        return sim_j_fail(ctx, key, "wrong value (expected [%s], whole numbers from 1 to %s)",
                          names, max_text);
    *x = (int64_t)a->child->valuedouble;
    *y = (int64_t)a->child->next->valuedouble;
    *present = 1;
    return SIM_OK;
}

/* Reads an optional [rows, cols] block size. */
static sim_status parse_block(const sim_jctx *ctx, const cJSON *obj, const char *key, int64_t *bn,
                              int64_t *bk, int *present)
{
    return parse_pair(ctx, obj, key, "rows, columns", (double)MAX_DIM, "1e9", bn, bk, present);
}

static sim_status parse_fp8(const sim_jctx *ctx, const cJSON *q, sim_quant *qt)
{
    int64_t bn = 0, bk = 0;
    int blk = 0;
    char act[32] = "dynamic";
    sim_status st = parse_block(ctx, q, "weight_block_size", &bn, &bk, &blk);
    if (st == SIM_OK)
        st = sim_j_str(ctx, q, "activation_scheme", 0, act, sizeof(act), NULL);
    if (st != SIM_OK)
        return st;
    /* The two schemes of HF fp8 configs: scales per tensor measured once (static) or per
     * token at run time (dynamic). Another is a config this reader does not know. */
    if (strcmp(act, "static") != 0 && strcmp(act, "dynamic") != 0)
        return sim_j_fail(ctx, "activation_scheme",
                          "unknown scheme '%s' (expected static or dynamic)", act);
    qt->weight_bits = 8;
    qt->math = SIM_GEMM_MATH_FP8;
    if (blk) {
        /* DeepSeek-V3 style: one fp32 weight_scale_inv per bn x bk block. */
        qt->block_n = bn;
        qt->group_k = bk;
        qt->scale_bits = 32;
        snprintf(qt->name, sizeof(qt->name), "fp8-block%lldx%lld", (long long)bn, (long long)bk);
    } else {
        /* Per-tensor: one fp32 weight_scale per matrix, plus an fp32 input_scale if static. */
        qt->tensor_scale_bytes = strcmp(act, "static") == 0 ? 8.0 : 4.0;
        snprintf(qt->name, sizeof(qt->name), "fp8-tensor");
    }
    return SIM_OK;
}

static sim_status parse_int_group(const sim_jctx *ctx, const cJSON *q, sim_quant *qt, int awq)
{
    int64_t bits = 4, group = 128;
    int zp = 1, sym = 1, lm = 0, has_bits = 0, has_group = 0;
    sim_status st = sim_j_int(ctx, q, "bits", 0, 2, 8, &bits, &has_bits);
    if (st == SIM_OK && awq && !has_bits)
        st = sim_j_int(ctx, q, "w_bit", 0, 2, 8, &bits, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, q, "group_size", 0, -1, MAX_DIM, &group, &has_group);
    if (st == SIM_OK && awq && !has_group)
        st = sim_j_int(ctx, q, "q_group_size", 0, -1, MAX_DIM, &group, NULL);
    if (st == SIM_OK && awq)
        st = sim_j_bool(ctx, q, "zero_point", 0, &zp, NULL);
    if (st == SIM_OK && !awq)
        st = sim_j_bool(ctx, q, "sym", 0, &sym, NULL);
    if (st == SIM_OK && !awq)
        st = sim_j_bool(ctx, q, "lm_head", 0, &lm, NULL);
    if (st != SIM_OK)
        return st;
    if (bits != 4 && bits != 8)
        return sim_j_fail(ctx, "bits", "unsupported width (expected 4 or 8, got %lld)",
                          (long long)bits);
    if (group == 0 || group < -1)
        return sim_j_fail(ctx, "group_size", "must be -1 (per channel) or >= 1 (got %lld)",
                          (long long)group);
    /* Weight-only: vLLM's Marlin kernels dequantize to 16 bits in the GEMM. Scales are fp16,
     * one per group of group_size inputs (or per output channel at -1); zero points are
     * bits-wide integers packed like the weights (AWQ zero_point; GPTQ sym = false; vLLM
     * drops GPTQ's stored zeros of symmetric checkpoints). */
    qt->weight_bits = (int)bits;
    qt->math = SIM_GEMM_MATH_16;
    qt->scale_bits = 16;
    qt->group_k = group > 0 ? group : 0;
    qt->per_channel = group < 0;
    qt->zero_bits = (awq ? zp : !sym) ? (int)bits : 0;
    qt->lm_head_quantized = lm != 0;
    if (group > 0)
        snprintf(qt->name, sizeof(qt->name), "%s-int%lld-g%lld", awq ? "awq" : "gptq",
                 (long long)bits, (long long)group);
    else
        snprintf(qt->name, sizeof(qt->name), "%s-int%lld-channel", awq ? "awq" : "gptq",
                 (long long)bits);
    return SIM_OK;
}

/* compressed-tensors: the one scheme of config_groups (weights, input_activations). */
static sim_status parse_ct(const sim_jctx *ctx, const cJSON *q, sim_quant *qt)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(q, "config_groups");
    if (!cJSON_IsObject(groups) || !groups->child)
        return sim_j_fail(ctx, "config_groups", "missing or empty (expected an object of schemes)");
    const cJSON *g = groups->child;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(g, "weights");
    if (!cJSON_IsObject(w))
        return sim_j_fail(ctx, "weights", "missing (expected the weights scheme of config_groups)");
    /* Several groups must quantize weights the same way: llmstep counts one scheme. */
    for (const cJSON *o = g->next; o; o = o->next) {
        const cJSON *ow = cJSON_GetObjectItemCaseSensitive(o, "weights");
        char *a = cJSON_PrintUnformatted(w), *b = ow ? cJSON_PrintUnformatted(ow) : NULL;
        int same = a && b && strcmp(a, b) == 0;
        free(a);
        free(b);
        if (!same)
            return sim_j_fail(ctx, "config_groups",
                              "groups with different weight schemes are not modelled "
                              "(expected one scheme, '%s' differs)",
                              o->string);
    }
    sim_jctx wc = *ctx;
    wc.scope = sim_j_locate(ctx, "weights");
    wc.prefix = "quantization_config.config_groups.weights.";
    int64_t bits = 8, group = 0, bn = 0, bk = 0;
    int sym = 1, blk = 0, has_group = 0;
    char type[16] = "int", strat[24] = "tensor";
    sim_status st = sim_j_int(&wc, w, "num_bits", 1, 2, 8, &bits, NULL);
    if (st == SIM_OK)
        st = sim_j_str(&wc, w, "type", 0, type, sizeof(type), NULL);
    if (st == SIM_OK)
        st = sim_j_str(&wc, w, "strategy", 0, strat, sizeof(strat), NULL);
    if (st == SIM_OK)
        st = sim_j_int(&wc, w, "group_size", 0, 1, MAX_DIM, &group, &has_group);
    if (st == SIM_OK)
        st = sim_j_bool(&wc, w, "symmetric", 0, &sym, NULL);
    if (st == SIM_OK)
        st = parse_block(&wc, w, "block_structure", &bn, &bk, &blk);
    if (st != SIM_OK)
        return st;
    const int is_float = strcmp(type, "float") == 0;
    if (!is_float && strcmp(type, "int") != 0)
        return sim_j_fail(&wc, "type", "unsupported type (expected int or float, got '%s')", type);
    if (bits != 4 && bits != 8)
        return sim_j_fail(&wc, "num_bits", "unsupported width (expected 4 or 8, got %lld)",
                          (long long)bits);
    qt->weight_bits = (int)bits;
    /* Scales are stored in the checkpoint's 16-bit dtype; NVFP4 (float 4-bit, tensor_group)
     * has fp8 group scales and one fp32 global scale per matrix. */
    qt->scale_bits = 16;
    qt->zero_bits = sym ? 0 : (int)bits;
    if (strcmp(strat, "tensor") == 0) {
        qt->tensor_scale_bytes = 2.0;
    } else if (strcmp(strat, "channel") == 0) {
        qt->per_channel = 1;
    } else if (strcmp(strat, "group") == 0 || strcmp(strat, "tensor_group") == 0) {
        if (!has_group)
            return sim_j_fail(&wc, "group_size", "missing (expected it with strategy '%s')", strat);
        qt->group_k = group;
        if (strcmp(strat, "tensor_group") == 0) {
            qt->scale_bits = 8;
            qt->tensor_scale_bytes = 4.0;
        }
    } else if (strcmp(strat, "block") == 0) {
        if (!blk)
            return sim_j_fail(&wc, "block_structure", "missing (expected it with strategy block)");
        qt->block_n = bn;
        qt->group_k = bk;
    } else {
        return sim_j_fail(&wc, "strategy",
                          "unsupported strategy (expected tensor, channel, group, tensor_group or "
                          "block, got '%s')",
                          strat);
    }
    /* W8A8 / W4A4 quantize activations too; without input_activations the scheme is
     * weight-only (W4A16, W8A16) and runs on the 16-bit tensor cores (Marlin). */
    const cJSON *ia = cJSON_GetObjectItemCaseSensitive(g, "input_activations");
    int64_t abits = 16;
    char atype[16] = "int";
    if (ia && cJSON_IsObject(ia)) {
        sim_jctx ac = *ctx;
        ac.scope = sim_j_locate(ctx, "input_activations");
        ac.prefix = "quantization_config.config_groups.input_activations.";
        int dyn = 0;
        char astrat[24] = "tensor";
        st = sim_j_int(&ac, ia, "num_bits", 1, 2, 16, &abits, NULL);
        if (st == SIM_OK)
            st = sim_j_str(&ac, ia, "type", 0, atype, sizeof(atype), NULL);
        if (st == SIM_OK)
            st = sim_j_str(&ac, ia, "strategy", 0, astrat, sizeof(astrat), NULL);
        if (st != SIM_OK)
            return st;
        /* dynamic is true, false or "local" (NVFP4's per-group activation scales). */
        const cJSON *dy = cJSON_GetObjectItemCaseSensitive(ia, "dynamic");
        dyn = cJSON_IsTrue(dy) || cJSON_IsString(dy);
        /* A static per-tensor activation scale is one more 16-bit number per matrix. */
        if (!dyn && strcmp(astrat, "tensor") == 0)
            qt->tensor_scale_bytes += 2.0;
    }
    const int afloat = strcmp(atype, "float") == 0;
    if (abits >= 16)
        qt->math = SIM_GEMM_MATH_16;
    else if (abits == 8)
        qt->math = afloat ? SIM_GEMM_MATH_FP8 : SIM_GEMM_MATH_INT8;
    else if (abits == 4 && afloat)
        qt->math = SIM_GEMM_MATH_FP4;
    else
        return sim_j_fail(ctx, "input_activations",
                          "unsupported activation scheme (expected 8-bit int or float, or 4-bit "
                          "float, got %lld-bit %s)",
                          (long long)abits, atype);
    char gran[32];
    if (qt->group_k > 0 && qt->block_n > 0)
        snprintf(gran, sizeof(gran), "block%lldx%lld", (long long)qt->block_n,
                 (long long)qt->group_k);
    else if (qt->group_k > 0)
        snprintf(gran, sizeof(gran), "g%lld", (long long)qt->group_k);
    else
        snprintf(gran, sizeof(gran), "%s", strat);
    snprintf(qt->name, sizeof(qt->name), "ct-w%lda%ld-%s%lld-%s", (long)bits,
             abits >= 16 ? 16L : (long)abits, is_float ? "fp" : "int", (long long)bits, gran);
    return SIM_OK;
}

/* modelopt: quant_algo FP8 (per tensor) or NVFP4, flat or under "quantization". */
static sim_status parse_modelopt(const sim_jctx *ctx, const cJSON *q, sim_quant *qt,
                                 const cJSON **excl_obj)
{
    const cJSON *inner = cJSON_GetObjectItemCaseSensitive(q, "quantization");
    const cJSON *src = cJSON_IsObject(inner) ? inner : q;
    sim_jctx c = *ctx;
    if (src == inner) {
        c.scope = sim_j_locate(ctx, "quantization");
        c.prefix = "quantization_config.quantization.";
    }
    *excl_obj = src;
    char algo[32];
    int64_t group = 16;
    sim_status st = sim_j_str(&c, src, "quant_algo", 1, algo, sizeof(algo), NULL);
    if (st == SIM_OK)
        st = sim_j_int(&c, src, "group_size", 0, 1, MAX_DIM, &group, NULL);
    if (st != SIM_OK)
        return st;
    if (strcmp(algo, "FP8") == 0) {
        qt->method = SIM_QUANT_MODELOPT_FP8;
        qt->weight_bits = 8;
        qt->math = SIM_GEMM_MATH_FP8;
        qt->tensor_scale_bytes = 8.0; /* fp32 weight_scale and input_scale */
        snprintf(qt->name, sizeof(qt->name), "modelopt-fp8");
        return SIM_OK;
    }
    if (strcmp(algo, "NVFP4") == 0) {
        /* e2m1 weights, an fp8 e4m3 scale per group of 16, an fp32 weight_scale_2 and an
         * fp32 input_scale per matrix; fp4 math on Blackwell. */
        qt->method = SIM_QUANT_NVFP4;
        qt->weight_bits = 4;
        qt->group_k = group;
        qt->scale_bits = 8;
        qt->tensor_scale_bytes = 8.0;
        qt->math = SIM_GEMM_MATH_FP4;
        snprintf(qt->name, sizeof(qt->name), "nvfp4-g%lld", (long long)group);
        return SIM_OK;
    }
    return sim_j_fail(&c, "quant_algo",
                      "unsupported modelopt algorithm (expected FP8 or NVFP4, got '%s')", algo);
}

static sim_status parse_quant(const sim_jctx *parent, const cJSON *root, sim_model *m)
{
    const char *key = "quantization_config";
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!q || cJSON_IsNull(q)) {
        key = "compression_config";
        q = cJSON_GetObjectItemCaseSensitive(root, key);
    }
    if (!q || cJSON_IsNull(q))
        return SIM_OK;
    if (!cJSON_IsObject(q))
        return sim_j_fail(parent, key, "wrong type (expected an object)");
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, key);
    ctx.prefix =
        strcmp(key, "quantization_config") == 0 ? "quantization_config." : "compression_config.";
    char method[48];
    sim_status st = sim_j_str(&ctx, q, "quant_method", 1, method, sizeof(method), NULL);
    if (st != SIM_OK)
        return st;
    sim_quant *qt = &m->quant;
    const cJSON *excl_obj = q;
    if (strcmp(method, "fp8") == 0) {
        qt->method = SIM_QUANT_FP8;
        st = parse_fp8(&ctx, q, qt);
    } else if (strcmp(method, "compressed-tensors") == 0) {
        qt->method = SIM_QUANT_COMPRESSED_TENSORS;
        st = parse_ct(&ctx, q, qt);
    } else if (strcmp(method, "awq") == 0) {
        qt->method = SIM_QUANT_AWQ;
        st = parse_int_group(&ctx, q, qt, 1);
    } else if (strcmp(method, "gptq") == 0) {
        qt->method = SIM_QUANT_GPTQ;
        st = parse_int_group(&ctx, q, qt, 0);
    } else if (strcmp(method, "mxfp4") == 0) {
        /* OCP MX: e2m1 weights, one e8m0 (8-bit exponent) scale per 32 along k; vLLM
         * dequantizes to 16 bits (Marlin / Triton) outside Blackwell. */
        qt->method = SIM_QUANT_MXFP4;
        qt->weight_bits = 4;
        qt->group_k = 32;
        qt->scale_bits = 8;
        qt->math = SIM_GEMM_MATH_16;
        snprintf(qt->name, sizeof(qt->name), "mxfp4");
    } else if (strcmp(method, "modelopt") == 0 || strcmp(method, "modelopt_fp4") == 0) {
        st = parse_modelopt(&ctx, q, qt, &excl_obj);
    } else {
        return sim_j_fail(&ctx, "quant_method",
                          "unsupported quantization method (expected fp8, compressed-tensors, "
                          "awq, gptq, mxfp4 or modelopt, got '%s')",
                          method);
    }
    static const char *const excl_keys[] = {"ignore", "modules_to_not_convert", "ignored_layers",
                                            "exclude_modules"};
    sim_jctx ec = ctx;
    if (excl_obj != q) {
        ec.scope = sim_j_locate(&ctx, "quantization");
        ec.prefix = "quantization_config.quantization.";
    }
    for (size_t i = 0; st == SIM_OK && i < N(excl_keys); i++)
        st = parse_excluded(&ec, excl_obj, excl_keys[i], m);
    return st;
}

/*
 * Reads a per-layer attention pattern into the period p of its global layers: layer i must be
 * global iff (i + 1) % p == 0, the one interleave the step model counts (window_period).
 * Gemma-3 layer_types and Llama-4 layer_types are strings (global_name, or local_name);
 * Llama-4 no_rope_layers are numbers (0: a global NoPE layer, 1: a local RoPE one), an empty
 * list meaning HF's default. *period is the p expected on entry (0: take it from the first
 * global layer, whose source `from` names) and the p found on return (0: no global layer).
 * *present says whether the key held a pattern. Other patterns are refused at the key.
 */
static sim_status parse_layer_pattern(const sim_jctx *ctx, const cJSON *obj, const char *key,
                                      const char *global_name, const char *local_name,
                                      int64_t n_layers, const char *from, int64_t *period,
                                      int *present)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    const int numeric = global_name == NULL;
    *present = 0;
    if (!a || cJSON_IsNull(a) || (numeric && cJSON_IsArray(a) && !a->child))
        return SIM_OK;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != (int)n_layers)
        return sim_j_fail(ctx, key, "expected an array of num_hidden_layers = %lld %s",
                          (long long)n_layers, numeric ? "0/1 flags" : "strings");
    int64_t p = *period, i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        int global;
        if (numeric && cJSON_IsNumber(e) && (e->valuedouble == 0.0 || e->valuedouble == 1.0))
            global = e->valuedouble == 0.0;
        else if (!numeric && cJSON_IsString(e) && strcmp(e->valuestring, global_name) == 0)
            global = 1;
        else if (!numeric && cJSON_IsString(e) && strcmp(e->valuestring, local_name) == 0)
            global = 0;
        else if (numeric)
            return sim_j_fail(ctx, key, "element %lld is not 0 or 1", (long long)i);
        else
            return sim_j_fail(ctx, key, "element %lld is not '%s' or '%s'", (long long)i,
                              global_name, local_name);
        if (p == 0 && global)
            p = i + 1;
        const int want = p > 0 && (i + 1) % p == 0;
        if (global != want)
            return sim_j_fail(
                ctx, key,
                "only every p-th layer global is modelled (layer i global iff (i + 1) %% p == 0, "
                "p = %lld from %s); element %lld is %s (expected %s)",
                (long long)p, from, (long long)i, global ? "global" : "local",
                want ? "global" : "local");
    }
    *period = p;
    *present = 1;
    return SIM_OK;
}

/* Sets the interleave of windowed and global layers from the period p of the global ones
 * (layer i global iff (i + 1) % p == 0; 0: none global, 1: every layer global). */
static void set_window_period(sim_model *m, int64_t p)
{
    if (m->sliding_window == 0) /* no window (sliding_window null): every layer is global */
        return;
    if (p == 1) {
        m->sliding_window = 0;
        m->window_chunked = false;
        return;
    }
    if (p > 1) {
        m->window_period = p;
        m->full_attn_layers = m->n_layers / p;
    }
}

/*
 * SIM_WINDOW_ALTERNATE (Gemma-2, gpt-oss): the window on every even layer (HF Gemma2Attention:
 * sliding when layer_idx % 2 == 0; vLLM gemma2.py and gpt_oss.py the same), full attention on
 * the odd ones. Where the row reads layer_types (gpt-oss) it must say so; the published
 * configs alternate from layer 0 (sliding, full, sliding, ...).
 */
static sim_status parse_alternate(const sim_jctx *ctx, const cJSON *root, const sim_arch_traits *t,
                                  sim_model *m)
{
    const cJSON *lt = t->layer_types ? cJSON_GetObjectItemCaseSensitive(root, "layer_types") : NULL;
    if (lt) {
        if (!cJSON_IsArray(lt) || cJSON_GetArraySize(lt) != (int)m->n_layers)
            return sim_j_fail(ctx, "layer_types",
                              "expected an array of num_hidden_layers = %lld strings",
                              (long long)m->n_layers);
        int i = 0;
        for (const cJSON *e = lt->child; e; e = e->next, i++) {
            const char *want = i % 2 == 0 ? "sliding_attention" : "full_attention";
            if (!cJSON_IsString(e) || strcmp(e->valuestring, want) != 0)
                return sim_j_fail(ctx, "layer_types",
                                  "only the alternating pattern (sliding_attention on even "
                                  "layers, full_attention on odd ones) is modelled; element "
                                  "%d is not '%s'",
                                  i, want);
        }
    }
    if (m->sliding_window > 0 && m->n_layers >= 2) {
        m->window_period = 2;
        m->full_attn_layers = m->n_layers / 2;
    }
    return SIM_OK;
}

/*
 * SIM_WINDOW_PERIODIC (Gemma-3; docs/model.md, "Gemma-3"; HF Gemma3TextConfig, vLLM
 * gemma3.py): the sliding window on every layer but each sliding_window_pattern-th (default:
 * the row's, 6: five local, one global), or as layer_types lists them; both given must agree.
 */
static sim_status parse_periodic(const sim_jctx *ctx, const cJSON *obj, const sim_arch_traits *t,
                                 sim_model *m)
{
    int64_t pattern = t->window_period, p = 0;
    int has_pat = 0, has_lt = 0;
    sim_status st =
        sim_j_int(ctx, obj, "sliding_window_pattern", 0, 1, MAX_LAYERS, &pattern, &has_pat);
    if (st != SIM_OK)
        return st;
    p = has_pat ? pattern : 0;
    if (t->layer_types)
        st = parse_layer_pattern(
            ctx, obj, "layer_types", "full_attention", "sliding_attention", m->n_layers,
            has_pat ? "sliding_window_pattern" : "the first global", &p, &has_lt);
    if (st != SIM_OK)
        return st;
    set_window_period(m, has_lt ? p : pattern);
    return SIM_OK;
}

/* The MoE layers of Llama-4: layer i iff (i + 1) % interleave_moe_layer_step == 0 (vLLM
 * llama4.py Llama4DecoderLayer; HF moe_layers lists them, and must agree). */
static sim_status llama4_moe_layers(const sim_jctx *ctx, const cJSON *obj, sim_model *m)
{
    int64_t step = 1;
    sim_status st = sim_j_int(ctx, obj, "interleave_moe_layer_step", 0, 1, MAX_LAYERS, &step, NULL);
    if (st != SIM_OK)
        return st;
    m->n_moe_layers = m->n_layers / step;
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(obj, "moe_layers");
    if (!ml || cJSON_IsNull(ml))
        return SIM_OK;
    int64_t want = step - 1, n = 0;
    for (const cJSON *e = cJSON_IsArray(ml) ? ml->child : NULL; e; e = e->next, n++) {
        if (!cJSON_IsNumber(e) || e->valuedouble != (double)want)
            return sim_j_fail(ctx, "moe_layers",
                              "only the layers interleave_moe_layer_step = %lld makes MoE are "
                              "modelled (layer i iff (i + 1) %% %lld == 0); element %lld is not "
                              "%lld",
                              (long long)step, (long long)step, (long long)n, (long long)want);
        want += step;
    }
    if (!cJSON_IsArray(ml) || n != m->n_moe_layers)
        return sim_j_fail(ctx, "moe_layers",
                          "expected the %lld layer indices interleave_moe_layer_step = %lld "
                          "makes MoE (got %lld)",
                          (long long)m->n_moe_layers, (long long)step, (long long)n);
    return SIM_OK;
}

/*
 * SIM_WINDOW_CHUNKED (Llama-4; docs/model.md, "Llama-4"; HF Llama4TextConfig, vLLM llama4.py):
 * chunked local attention (attention_chunk_size) on the RoPE layers and global NoPE attention
 * on the layers no_rope_layers marks 0 (HF default: every no_rope_layer_interval-th, 4);
 * use_qk_norm: a weightless L2 norm of q and k on the RoPE layers. A null attention_chunk_size:
 * no chunking. Defaults are the row's.
 */
static sim_status parse_chunked(const sim_jctx *ctx, const cJSON *obj, const sim_arch_traits *t,
                                sim_model *m)
{
    int64_t chunk = t->window_tokens, interval = t->window_period, p = 0, p_lt = 0;
    int has_nr = 0, has_lt = 0, qkn = t->qk_l2_norm;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(obj, "attention_chunk_size");
    sim_status st = sim_j_int(ctx, obj, "attention_chunk_size", 0, 1, MAX_DIM, &chunk, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, obj, "no_rope_layer_interval", 0, 1, MAX_LAYERS, &interval, NULL);
    if (st == SIM_OK)
        st = sim_j_bool(ctx, obj, "use_qk_norm", 0, &qkn, NULL);
    if (st == SIM_OK)
        st = parse_layer_pattern(ctx, obj, "no_rope_layers", NULL, NULL, m->n_layers,
                                 "the first NoPE layer", &p, &has_nr);
    if (st != SIM_OK)
        return st;
    if (!has_nr)
        p = interval;
    p_lt = p;
    if (t->layer_types)
        st = parse_layer_pattern(ctx, obj, "layer_types", "full_attention", "chunked_attention",
                                 m->n_layers, "no_rope_layers", &p_lt, &has_lt);
    if (st != SIM_OK)
        return st;
    if (has_lt && p_lt != p) /* no NoPE layer in no_rope_layers, some full in layer_types */
        return sim_j_fail(ctx, "layer_types",
                          "disagrees with no_rope_layers (expected no full_attention layer, got "
                          "every %lld-th)",
                          (long long)p_lt);
    const int chunked = !(cs && cJSON_IsNull(cs));
    m->sliding_window = chunked ? chunk : 0;
    m->window_chunked = chunked;
    m->qk_l2_norm = qkn != 0 && p != 1;
    if (chunked)
        set_window_period(m, p);
    return SIM_OK;
}

/*
 * SIM_MOE_INTERLEAVED (Llama-4): experts of intermediate_size with one shared expert of the
 * same size and a bias-free router on the MoE layers, dense MLPs of intermediate_size_mlp
 * (default: the row's) on the others.
 */
static sim_status parse_interleaved_moe(const sim_jctx *ctx, const cJSON *obj,
                                        const sim_arch_traits *t, sim_model *m)
{
    int64_t mlp = t->d_ff_dense;
    sim_status st = sim_j_int(ctx, obj, "intermediate_size_mlp", 0, 1, MAX_DIM, &mlp, NULL);
    if (st != SIM_OK)
        return st;
    m->d_ff_expert = m->d_ff;
    m->d_ff = mlp;
    m->n_shared_experts = 1;
    st = sim_j_int(ctx, obj, "num_local_experts", 1, 1, MAX_DIM, &m->n_experts, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, obj, "num_experts_per_tok", 1, 1, MAX_DIM, &m->n_experts_per_tok, NULL);
    if (st == SIM_OK)
        st = llama4_moe_layers(ctx, obj, m);
    return st;
}

/* The MoE layers and experts of the row's layout (arch.h, sim_moe_kind); none when dense. */
static sim_status parse_moe(const sim_jctx *ctx, const cJSON *root, const sim_arch_traits *t,
                            sim_model *m)
{
    sim_status st = SIM_OK;
    switch (t->moe) {
    case SIM_MOE_EVERY_LAYER: /* Mixtral, gpt-oss: experts of intermediate_size */
        st = sim_j_int(ctx, root, "num_local_experts", 1, 1, MAX_DIM, &m->n_experts, NULL);
        if (st == SIM_OK)
            st = sim_j_int(ctx, root, "num_experts_per_tok", 1, 1, MAX_DIM, &m->n_experts_per_tok,
                           NULL);
        m->d_ff_expert = m->d_ff;
        m->n_moe_layers = m->n_layers;
        break;
    case SIM_MOE_SPARSE_STEP: /* Qwen3-MoE */
        st = sim_j_int(ctx, root, "num_experts", 1, 1, MAX_DIM, &m->n_experts, NULL);
        if (st == SIM_OK)
            st = sim_j_int(ctx, root, "num_experts_per_tok", 1, 1, MAX_DIM, &m->n_experts_per_tok,
                           NULL);
        if (st == SIM_OK)
            st =
                sim_j_int(ctx, root, "moe_intermediate_size", 1, 1, MAX_DIM, &m->d_ff_expert, NULL);
        if (st == SIM_OK)
            st = count_moe_layers(ctx, root, m);
        break;
    case SIM_MOE_DEEPSEEK:
        st = parse_deepseek_moe(ctx, root, t, m);
        break;
    case SIM_MOE_INTERLEAVED:
        st = parse_interleaved_moe(ctx, root, t, m);
        break;
    case SIM_MOE_NONE:
    case SIM_MOE_KIND_COUNT:
        break;
    }
    return st;
}

/*
 * Qwen3-VL's vision_config (HF Qwen3VLVisionConfig, docs/model.md "Vision encoders"): any
 * image size (patches of patch_size x patch_size pixels over temporal_patch_size frames), the
 * sizes that fix the tower's parameters, and how many DeepStack mergers it has (one per entry
 * of deepstack_visual_indexes, each an index of a block below depth).
 */
static sim_status parse_qwen3vl_vision(const sim_jctx *ctx, const cJSON *v, sim_vision *vi)
{
    sim_status st = sim_j_check_keys(ctx, v, qwen3vl_used_keys, N(qwen3vl_used_keys),
                                     qwen3vl_ignored_keys, N(qwen3vl_ignored_keys), 0);
    const size_key sizes[] = {
        {"depth", &vi->n_layers, 1, NULL},
        {"hidden_size", &vi->d_model, 1, NULL},
        {"intermediate_size", &vi->d_ff, 1, NULL},
        {"patch_size", &vi->patch, 1, NULL},
        {"in_channels", &vi->n_channels, 0, NULL},
        {"temporal_patch_size", &vi->t_patch, 1, NULL},
        {"num_position_embeddings", &vi->n_pos, 1, NULL},
        {"spatial_merge_size", &vi->merge, 1, NULL},
        {"out_hidden_size", &vi->d_out, 1, NULL},
    };
    if (st == SIM_OK)
        st = read_sizes(ctx, v, sizes, N(sizes));
    if (st != SIM_OK)
        return st;
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(v, "deepstack_visual_indexes");
    if (!ds)
        return SIM_OK;
    if (!cJSON_IsArray(ds))
        return sim_j_fail(ctx, "deepstack_visual_indexes",
                          "wrong type (expected an array of block indexes)");
    for (const cJSON *e = ds->child; e; e = e->next) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0.0 ||
            e->valuedouble >= (double)vi->n_layers || e->valuedouble != floor(e->valuedouble))
            return sim_j_fail(ctx, "deepstack_visual_indexes",
                              "element %lld: expected a block index from 0 to depth - 1 = %lld",
                              (long long)vi->n_deepstack, (long long)vi->n_layers - 1);
        vi->n_deepstack++;
    }
    return SIM_OK;
}

/*
 * Kimi-K2.5's vision_config (docs/model.md, "Vision encoders"): MoonViT's sizes, the grid of
 * learnable position embeddings, the merge kernel, and a patch-merger projector into the
 * language model's width (text_hidden_size, when given, must be it; mm_hidden_size, when given,
 * the encoder's width).
 */
static sim_status parse_moonvit_vision(const sim_jctx *ctx, const cJSON *v, const sim_model *m,
                                       sim_vision *vi)
{
    sim_status st = sim_j_check_keys(ctx, v, moonvit_used_keys, N(moonvit_used_keys),
                                     moonvit_ignored_keys, N(moonvit_ignored_keys), 0);
    int64_t pos_h = 0, pos_w = 0, mm_hidden = 0, text_hidden = 0;
    int has_mm = 0, has_text = 0;
    const size_key sizes[] = {
        {"vt_num_hidden_layers", &vi->n_layers, 1, NULL},
        {"vt_hidden_size", &vi->d_model, 1, NULL},
        {"vt_intermediate_size", &vi->d_ff, 1, NULL},
        {"patch_size", &vi->patch, 1, NULL},
        {"init_pos_emb_height", &pos_h, 1, NULL},
        {"init_pos_emb_width", &pos_w, 1, NULL},
        {"num_channels", &vi->n_channels, 0, NULL},
        {"mm_hidden_size", &mm_hidden, 0, &has_mm},
        {"text_hidden_size", &text_hidden, 0, &has_text},
    };
    if (st == SIM_OK)
        st = read_sizes(ctx, v, sizes, N(sizes));
    char proj[32] = "patchmerger";
    if (st == SIM_OK)
        st = sim_j_str(ctx, v, "mm_projector_type", 0, proj, sizeof(proj), NULL);
    if (st != SIM_OK)
        return st;
    if (strcmp(proj, "patchmerger") != 0)
        return sim_j_fail(ctx, "mm_projector_type", "unknown projector '%s' (expected patchmerger)",
                          proj);
    if (has_mm && mm_hidden != vi->d_model)
        return sim_j_fail(ctx, "mm_hidden_size",
                          "expected the encoder's width vt_hidden_size = %lld (got %lld)",
                          (long long)vi->d_model, (long long)mm_hidden);
    if (has_text && text_hidden != m->d_model)
        return sim_j_fail(ctx, "text_hidden_size",
                          "expected the language model's hidden_size = %lld (got %lld)",
                          (long long)m->d_model, (long long)text_hidden);
    /* The grid's product in double first: two hostile sizes would overflow int64. */
    if ((double)pos_h * (double)pos_w > (double)MAX_DIM)
        return sim_j_fail(ctx, "init_pos_emb_width",
                          "the position grid init_pos_emb_height x init_pos_emb_width exceeds "
                          "1e9 embeddings");
    vi->n_pos = pos_h * pos_w;
    int has_merge = 0;
    st = parse_pair(ctx, v, "merge_kernel_size", "height, width", 64.0, "64", &vi->merge,
                    &vi->merge_w, &has_merge);
    if (st == SIM_OK && !has_merge)
        return sim_j_fail(ctx, "merge_kernel_size", "missing (expected [height, width])");
    return st;
}

/*
 * vision_config of a multimodal config (docs/model.md, "Vision encoders"): the sizes that
 * fix the encoder's parameters. Gemma-3: SigLIP without its pooling head; Llama-4: its
 * encoder, pixel-shuffle MLP and projector, all without biases in the projector.
 */
static sim_status parse_vision(const sim_jctx *parent, const cJSON *root, const sim_arch_traits *t,
                               sim_model *m)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "vision_config");
    if (!v || !cJSON_IsObject(v))
        return sim_j_fail(parent, "vision_config",
                          "%s (expected the vision encoder's config object)",
                          v ? "wrong type" : "missing");
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, "vision_config");
    ctx.prefix = "vision_config.";
    sim_vision *vi = &m->vision;
    const int l4 = t->vision == SIM_VISION_LLAMA4;
    vi->kind = t->vision;
    vi->n_channels = 3;
    if (t->vision == SIM_VISION_QWEN3VL)
        return parse_qwen3vl_vision(&ctx, v, vi);
    if (t->vision == SIM_VISION_MOONVIT)
        return parse_moonvit_vision(&ctx, v, m, vi);
    sim_status st = sim_j_check_keys(&ctx, v, vision_used_keys, N(vision_used_keys),
                                     vision_ignored_keys, N(vision_ignored_keys), 0);
    const size_key sizes[] = {
        {"num_hidden_layers", &vi->n_layers, 1, NULL},
        {"hidden_size", &vi->d_model, 1, NULL},
        {"intermediate_size", &vi->d_ff, 1, NULL},
        {"patch_size", &vi->patch, 1, NULL},
        {"image_size", &vi->image, 1, NULL},
        {"num_channels", &vi->n_channels, 0, NULL},
        {"projector_input_dim", &vi->d_proj_in, l4, NULL},
        {"projector_output_dim", &vi->d_proj_out, l4, NULL},
        {"vision_output_dim", &vi->d_out, l4, NULL},
    };
    if (st == SIM_OK)
        st = read_sizes(&ctx, v, sizes, N(sizes));
    int head = 0, proj_bias = 0;
    if (st == SIM_OK)
        st = sim_j_bool(&ctx, v, "vision_use_head", 0, &head, NULL);
    if (st == SIM_OK)
        st = sim_j_bool(&ctx, v, "multi_modal_projector_bias", 0, &proj_bias, NULL);
    if (st != SIM_OK)
        return st;
    if (head)
        return sim_j_fail(&ctx, "vision_use_head",
                          "SigLIP's pooling head is not modelled (Gemma-3 runs without it)");
    if (proj_bias)
        return sim_j_fail(&ctx, "multi_modal_projector_bias",
                          "a biased projector is not modelled (expected false)");
    return SIM_OK;
}

/* The rows of the cos/sin cache one rope object asks for (rope_scaling, or transformers 5's
 * rope_parameters), read in the scope sc; root for Phi-3's top-level original context. */
static sim_status rope_object_rows(const sim_jctx *ctx, const sim_jctx *sc, const cJSON *root,
                                   const cJSON *rs, double max_pos, double *rows)
{
    char type[32] = "default";
    int has_type = 0;
    sim_status st = sim_j_str(sc, rs, "rope_type", 0, type, sizeof(type), &has_type);
    if (st == SIM_OK && !has_type) /* the older spelling (DeepSeek-V3, Kimi-K2) */
        st = sim_j_str(sc, rs, "type", 0, type, sizeof(type), NULL);
    if (st != SIM_OK)
        return st;
    sim_rope_kind k = SIM_ROPE_DEFAULT;
    if (strcmp(type, "linear") == 0 || strcmp(type, "dynamic") == 0)
        k = SIM_ROPE_LINEAR;
    else if (strcmp(type, "yarn") == 0 || strcmp(type, "deepseek_yarn") == 0)
        k = SIM_ROPE_YARN;
    else if (strcmp(type, "longrope") == 0 || strcmp(type, "su") == 0)
        k = SIM_ROPE_LONGROPE;
    double factor = 1.0, orig = 0.0;
    int64_t o = 0;
    if (k == SIM_ROPE_LINEAR || k == SIM_ROPE_YARN)
        st = sim_j_num(sc, rs, "factor", 1, 1e-6, 1e6, &factor, NULL);
    if (st == SIM_OK && (k == SIM_ROPE_YARN || k == SIM_ROPE_LONGROPE)) {
        /* longrope configs (Phi-3) may keep it at the top level */
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(rs, "original_max_position_embeddings");
        st =
            in || k == SIM_ROPE_YARN
                ? sim_j_int(sc, rs, "original_max_position_embeddings", 1, 1, MAX_DIM, &o, NULL)
                : sim_j_int(ctx, root, "original_max_position_embeddings", 1, 1, MAX_DIM, &o, NULL);
        orig = (double)o;
    }
    if (st == SIM_OK)
        *rows = sim_rope_cache_rows(k, max_pos, factor, orig);
    return st;
}

/*
 * The RoPE cos/sin caches vLLM builds on every GPU (docs/model.md, "Weights per GPU").
 * get_rope (vllm/model_executor/layers/rotary_embedding/__init__.py) makes one
 * RotaryEmbedding per distinct configuration; its buffer cos_sin_cache holds rows x rotary_dim
 * values in the model's dtype (base.py), rows by the rope object's rope_type
 * (sim_rope_cache_rows). The rope object is rope_scaling, or transformers 5's rope_parameters
 * (its full_attention entry when it holds one per layer type). The rotary share of a head is
 * rotary_dim (MiniMax-M2), else head_dim x partial_rotary_factor (top level, or in
 * rope_parameters), else the head (MLA: qk_rope_head_dim). Gemma-3 keeps two caches: its local
 * layers' default one beside its global layers' scaled one (gemma3.py). A rope_type vLLM sizes
 * otherwise than these (ntk, xdrope, ...) is taken at max_position_embeddings rows.
 */
static sim_status parse_rope(const sim_jctx *ctx, const cJSON *root, const sim_arch_traits *t,
                             sim_model *m)
{
    const char *const key[2] = {"rope_scaling", "rope_parameters"};
    const cJSON *rs = NULL;
    const char *rkey = "max_position_embeddings";
    char prefix[96];
    sim_jctx sc = *ctx;
    for (int i = 0; i < 2 && !rs; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key[i]);
        if (!o || cJSON_IsNull(o))
            continue;
        if (!cJSON_IsObject(o))
            return sim_j_fail(ctx, key[i], "wrong type (expected an object or null)");
        const cJSON *full = i == 1 ? cJSON_GetObjectItemCaseSensitive(o, "full_attention") : NULL;
        if (full && !cJSON_IsObject(full))
            return sim_j_fail(ctx, key[i], "full_attention: wrong type (expected an object)");
        snprintf(prefix, sizeof(prefix), "%s%s.%s", ctx->prefix ? ctx->prefix : "", key[i],
                 full ? "full_attention." : "");
        sc.scope = sim_j_locate(ctx, key[i]);
        sc.prefix = prefix;
        rs = full ? full : o;
        rkey = key[i];
    }
    int64_t rd = 0;
    double prf = 1.0;
    int has_rd = 0, has_prf = 0;
    sim_status st = sim_j_int(ctx, root, "rotary_dim", 0, 1, MAX_DIM, &rd, &has_rd);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "partial_rotary_factor", 0, 1e-6, 1.0, &prf, &has_prf);
    if (st == SIM_OK && !has_prf && rs)
        st = sim_j_num(&sc, rs, "partial_rotary_factor", 0, 1e-6, 1.0, &prf, &has_prf);
    if (st != SIM_OK)
        return st;
    const int64_t head = m->mla ? m->qk_rope_dim : m->head_dim;
    if (has_rd && rd > head)
        return sim_j_fail(ctx, "rotary_dim", "more than the head (expected at most %lld, got %lld)",
                          (long long)head, (long long)rd);
    m->rotary_dim = has_rd ? rd : has_prf ? (int64_t)((double)head * prf) : head;
    const double max_pos = (double)m->max_pos;
    double rows = max_pos;
    if (rs && (st = rope_object_rows(ctx, &sc, root, rs, max_pos, &rows)) != SIM_OK)
        return st;
    if (t->arch == SIM_ARCH_GEMMA3) /* the local layers' unscaled cache */
        rows += max_pos;
    if (!(rows <= 1e12))
        return sim_j_fail(ctx, rkey, "gives a RoPE cache of %.4g positions (expected at most 1e12)",
                          rows);
    m->rope_cache_rows = (int64_t)rows;
    return SIM_OK;
}

/*
 * The language model's keys, in root (a text-only config) or in a multimodal config's
 * text_config (top is then the whole config, else NULL; ctx locates keys in text_config), as
 * the architecture's row t says (arch.h): its defaults for keys a config leaves out, what every
 * layer has, and the keys its attention, window and MoE layouts name.
 */
static sim_status parse_text(const sim_jctx *ctx, const cJSON *root, const cJSON *top,
                             const sim_arch_traits *t, sim_model *m)
{
    sim_status st =
        sim_j_check_keys(ctx, root, used_keys, N(used_keys), ignored_keys, N(ignored_keys), 0);
    if (st == SIM_OK)
        st = parse_dtype(ctx, root, m);
    if (st != SIM_OK)
        return st;

    int has_kv = 0, has_hd = 0, tie = 0, bias = 0, use_sw = 1, has_sw = 0, has_tie = 0;
    /* A key the row has a default for may be left out (Gemma-3 multimodal configs leave the
     * text model's defaults out); the others are required. */
    m->vocab = t->vocab;
    m->max_pos = t->max_pos;
    const size_key sizes[] = {
        {"num_hidden_layers", &m->n_layers, 1, NULL},
        {"hidden_size", &m->d_model, 1, NULL},
        {"num_attention_heads", &m->n_heads, 1, NULL},
        {"num_key_value_heads", &m->n_kv_heads, 0, &has_kv},
        {"head_dim", &m->head_dim, 0, &has_hd},
        {"intermediate_size", &m->d_ff, 1, NULL},
        {"vocab_size", &m->vocab, t->vocab == 0, NULL},
        {"max_position_embeddings", &m->max_pos, t->max_pos == 0, NULL},
    };
    if ((st = read_sizes(ctx, root, sizes, N(sizes))) != SIM_OK)
        return st;
    if (!has_kv)
        m->n_kv_heads = m->n_heads;
    if (!has_hd && t->head_dim > 0) {
        m->head_dim = t->head_dim;
        has_hd = 1;
    }
    if (!has_hd && t->attn != SIM_ATTN_MLA) { /* MLA: the latent's shapes give it (parse_mla) */
        if (m->d_model % m->n_heads != 0)
            return sim_j_fail(ctx, "hidden_size",
                              "not divisible by num_attention_heads and no head_dim given "
                              "(expected a multiple of %lld, got %lld)",
                              (long long)m->n_heads, (long long)m->d_model);
        m->head_dim = m->d_model / m->n_heads;
    }
    if ((st = sim_j_bool(ctx, root, "tie_word_embeddings", 0, &tie, &has_tie)) != SIM_OK ||
        (st = sim_j_bool(ctx, root, "attention_bias", 0, &bias, NULL)) != SIM_OK ||
        (st = sim_j_bool(ctx, root, "use_sliding_window", 0, &use_sw, NULL)) != SIM_OK)
        return st;
    /* A multimodal config may tie at the top level (Llama-4: false). */
    if (!has_tie && top) {
        sim_jctx tc = *ctx;
        tc.scope = NULL;
        tc.prefix = "";
        if ((st = sim_j_bool(&tc, top, "tie_word_embeddings", 0, &tie, &has_tie)) != SIM_OK)
            return st;
    }
    /* The row's default when the config does not tie: Gemma-2 ties unless the key is there
     * (HF Gemma2Config tie_word_embeddings=True), Gemma-3 unless a value is given (HF
     * Gemma3TextConfig tie_word_embeddings=True). */
    m->tie_embeddings = tie != 0 || (t->tie == SIM_TIE_DEFAULT_UNSET && !has_tie) ||
                        (t->tie == SIM_TIE_DEFAULT_ABSENT &&
                         !cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings"));
    /* What every layer of the architecture has: norms after attention and the MLP as well as
     * before (Gemma-2/3), q, k, v biases without attention_bias (Qwen2), attention_bias on o
     * too (gpt-oss), q/k norms, softmax sinks, expert and router biases. */
    m->extra_norms = t->extra_norms;
    m->qkv_bias = bias != 0 || t->qkv_bias;
    m->o_bias = t->o_bias && bias != 0;
    m->qk_norm = t->qk_norm;
    m->attn_sinks = t->attn_sinks;
    m->expert_bias = t->expert_bias;
    m->router_bias = t->router_bias;
    m->router_fp32 = t->router_fp32;
    m->qk_norm_all_heads = t->qk_norm_all_heads;

    int64_t sw = 0;
    st = sim_j_int(ctx, root, "sliding_window", 0, 1, MAX_DIM, &sw, &has_sw);
    if (st != SIM_OK)
        return st;
    /* The row's window when the key is absent (Gemma-3); a null one means none. A chunked
     * window is attention_chunk_size's (parse_chunked). */
    if (t->window_tokens > 0 && t->window != SIM_WINDOW_CHUNKED &&
        !cJSON_GetObjectItemCaseSensitive(root, "sliding_window")) {
        sw = t->window_tokens;
        has_sw = 1;
    }
    /* Mistral applies its window whenever it is set; Qwen2/3 only with use_sliding_window. */
    const int from_layer = t->window == SIM_WINDOW_FROM_LAYER;
    m->sliding_window = (has_sw && (!from_layer || use_sw)) ? sw : 0;
    if (from_layer && !cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window"))
        m->sliding_window = 0;
    /* Qwen2/3 apply the window only from layer max_window_layers on (HF Qwen2Attention:
     * layer_idx >= max_window_layers); none when that is every layer. */
    int64_t mwl = 0;
    int has_mwl = 0;
    st = sim_j_int(ctx, root, "max_window_layers", 0, 0, MAX_LAYERS, &mwl, &has_mwl);
    if (st != SIM_OK)
        return st;
    if (from_layer && m->sliding_window > 0 && has_mwl) {
        if (mwl >= m->n_layers)
            m->sliding_window = 0;
        else
            m->full_attn_layers = mwl;
    }
    switch (t->window) {
    case SIM_WINDOW_ALTERNATE:
        st = parse_alternate(ctx, root, t, m);
        break;
    case SIM_WINDOW_PERIODIC:
        st = parse_periodic(ctx, root, t, m);
        break;
    case SIM_WINDOW_CHUNKED:
        st = parse_chunked(ctx, root, t, m);
        break;
    case SIM_WINDOW_UNIFORM:
    case SIM_WINDOW_FROM_LAYER:
    case SIM_WINDOW_KIND_COUNT:
        break;
    }
    if (st == SIM_OK && t->attn == SIM_ATTN_MLA)
        st = parse_mla(ctx, root, m);
    if (st == SIM_OK)
        st = parse_rope(ctx, root, t, m);
    if (st == SIM_OK)
        st = parse_moe(ctx, root, t, m);
    if (st == SIM_OK && m->n_experts_per_tok > m->n_experts && m->n_experts > 0)
        return sim_j_fail(ctx, "num_experts_per_tok",
                          "more than the experts (expected at most %lld, got %lld)",
                          (long long)m->n_experts, (long long)m->n_experts_per_tok);
    if (st == SIM_OK)
        st = parse_quant(ctx, root, m);
    return st;
}

/*
 * A multimodal config (model_type gemma3, llama4, qwen3_vl, ...): the language model from
 * text_config, the vision encoder from vision_config, the dtype from the top level when it has
 * one, and the checkpoint's quantization from the top level (its exclusion lists name vision
 * modules too, which stay 16-bit) or from text_config, not both.
 */
static sim_status parse_multimodal(const sim_jctx *ctx, const cJSON *root, const sim_arch_traits *t,
                                   sim_model *m)
{
    sim_status st = sim_j_check_keys(ctx, root, mm_used_keys, N(mm_used_keys), mm_ignored_keys,
                                     N(mm_ignored_keys), 0);
    if (st != SIM_OK)
        return st;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "text_config");
    if (!tc || !cJSON_IsObject(tc))
        return sim_j_fail(ctx, "text_config", "%s (expected the language model's config object)",
                          tc ? "wrong type" : "missing");
    sim_jctx tctx = *ctx;
    tctx.scope = sim_j_locate(ctx, "text_config");
    tctx.prefix = "text_config.";
    st = parse_text(&tctx, tc, root, t, m);
    if (st == SIM_OK && (cJSON_GetObjectItemCaseSensitive(root, "torch_dtype") ||
                         cJSON_GetObjectItemCaseSensitive(root, "dtype")))
        st = parse_dtype(ctx, root, m);
    if (st == SIM_OK)
        st = parse_vision(ctx, root, t, m);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "quantization_config");
    if (st == SIM_OK && q && !cJSON_IsNull(q)) {
        if (m->quant.method != SIM_QUANT_NONE)
            return sim_j_fail(ctx, "quantization_config",
                              "given both here and in text_config (expected one)");
        st = parse_quant(ctx, root, m);
    }
    return st;
}

static sim_status parse(const sim_jctx *ctx, const cJSON *root, sim_model *m)
{
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object");
    /* The architecture first: a model llmstep cannot model is refused for that reason, not
     * for the first key it does not know. */
    const sim_arch_traits *t = NULL;
    sim_status st = parse_arch(ctx, root, &t);
    if (st != SIM_OK)
        return st;
    m->arch = t->arch;
    return t->vision != SIM_VISION_NONE ? parse_multimodal(ctx, root, t, m)
                                        : parse_text(ctx, root, NULL, t, m);
}

/* Parses and then runs the cross-field checks, reporting them at the offending key. */
static sim_status parse_and_validate(const sim_jctx *ctx, const cJSON *root, void *out)
{
    sim_model *m = out;
    sim_status st = parse(ctx, root, m);
    if (st != SIM_OK)
        return st;
    struct sim_err verr;
    if (sim_model_validate(m, &verr) != SIM_OK)
        return sim_j_fail_validator(ctx, verr.msg);
    return SIM_OK;
}

sim_status sim_model_load(const char *path, const char *id, sim_model *m, struct sim_err *err)
{
    memset(m, 0, sizeof(*m));
    sim_status st = sim_json_load_file(path, parse_and_validate, m, err);
    if (st == SIM_OK)
        snprintf(m->id, sizeof(m->id), "%s", id);
    return st;
}
