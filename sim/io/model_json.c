/* model_json.c - see model_json.h. */
#include "model_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_util.h"

/* Keys llmstep reads. */
static const char *const used_keys[] = {
    "model_type",          "hidden_size",         "num_hidden_layers",
    "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size",   "vocab_size",          "max_position_embeddings",
    "tie_word_embeddings", "sliding_window",      "use_sliding_window",
    "torch_dtype",         "attention_bias",      "num_local_experts",
    "num_experts",         "num_experts_per_tok", "moe_intermediate_size",
    "mlp_only_layers",     "decoder_sparse_step", "max_window_layers",
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
    "rope_scaling",
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
    "quantization_config",
};

#define N(a)    (sizeof(a) / sizeof((a)[0]))
#define MAX_DIM 1000000000LL

static const struct {
    const char *name;
    sim_arch arch;
} archs[] = {
    {"llama", SIM_ARCH_LLAMA}, {"mistral", SIM_ARCH_MISTRAL}, {"qwen2", SIM_ARCH_QWEN2},
    {"qwen3", SIM_ARCH_QWEN3}, {"mixtral", SIM_ARCH_MIXTRAL}, {"qwen3_moe", SIM_ARCH_QWEN3_MOE},
};

static sim_status parse_arch(const sim_jctx *ctx, const cJSON *root, sim_model *m)
{
    char mt[64];
    sim_status st = sim_j_str(ctx, root, "model_type", 1, mt, sizeof(mt), NULL);
    if (st != SIM_OK)
        return st;
    for (size_t i = 0; i < N(archs); i++) {
        if (strcmp(mt, archs[i].name) == 0) {
            m->arch = archs[i].arch;
            return SIM_OK;
        }
    }
    return sim_j_fail(ctx, "model_type",
                      "unsupported model type (expected one of llama, mistral, qwen2, qwen3, "
                      "mixtral, qwen3_moe, got '%s')",
                      mt);
}

static sim_status parse_dtype(const sim_jctx *ctx, const cJSON *root, sim_model *m)
{
    char s[32];
    int present = 0;
    sim_status st = sim_j_str(ctx, root, "torch_dtype", 0, s, sizeof(s), &present);
    if (st != SIM_OK)
        return st;
    /* vLLM's dtype "auto": fp16 and fp32 checkpoints run in fp16, bf16 ones in bf16. */
    m->dtype = SIM_DTYPE_FP16;
    if (!present || strcmp(s, "float16") == 0 || strcmp(s, "float32") == 0)
        return SIM_OK;
    if (strcmp(s, "bfloat16") == 0) {
        m->dtype = SIM_DTYPE_BF16;
        return SIM_OK;
    }
    return sim_j_fail(ctx, "torch_dtype",
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
    int64_t n = 0;
    for (int64_t i = 0; i < m->n_layers; i++) {
        int dense = (i + 1) % step != 0;
        for (const cJSON *e = only ? only->child : NULL; e; e = e->next) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0.0)
                return sim_j_fail(ctx, "mlp_only_layers",
                                  "wrong element (expected non-negative layer indices)");
            if ((int64_t)e->valuedouble == i)
                dense = 1;
        }
        n += !dense;
    }
    m->n_moe_layers = n;
    return SIM_OK;
}

static sim_status parse(const sim_jctx *ctx, const cJSON *root, sim_model *m)
{
    sim_status st;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object");
    st = sim_j_check_keys(ctx, root, used_keys, N(used_keys), ignored_keys, N(ignored_keys), 0);
    if (st == SIM_OK)
        st = parse_arch(ctx, root, m);
    if (st == SIM_OK)
        st = parse_dtype(ctx, root, m);
    if (st != SIM_OK)
        return st;

    int has_kv = 0, has_hd = 0, tie = 0, bias = 0, use_sw = 1, has_sw = 0;
    const struct {
        const char *key;
        int64_t *out;
        int required;
        int *present;
    } ints[] = {
        {"num_hidden_layers", &m->n_layers, 1, NULL},
        {"hidden_size", &m->d_model, 1, NULL},
        {"num_attention_heads", &m->n_heads, 1, NULL},
        {"num_key_value_heads", &m->n_kv_heads, 0, &has_kv},
        {"head_dim", &m->head_dim, 0, &has_hd},
        {"intermediate_size", &m->d_ff, 1, NULL},
        {"vocab_size", &m->vocab, 1, NULL},
        {"max_position_embeddings", &m->max_pos, 1, NULL},
    };
    for (size_t i = 0; i < N(ints); i++) {
        st = sim_j_int(ctx, root, ints[i].key, ints[i].required, 1, MAX_DIM, ints[i].out,
                       ints[i].present);
        if (st != SIM_OK)
            return st;
    }
    if (!has_kv)
        m->n_kv_heads = m->n_heads;
    if (!has_hd) {
        if (m->d_model % m->n_heads != 0)
            return sim_j_fail(ctx, "hidden_size",
                              "not divisible by num_attention_heads and no head_dim given "
                              "(expected a multiple of %lld, got %lld)",
                              (long long)m->n_heads, (long long)m->d_model);
        m->head_dim = m->d_model / m->n_heads;
    }
    if ((st = sim_j_bool(ctx, root, "tie_word_embeddings", 0, &tie, NULL)) != SIM_OK ||
        (st = sim_j_bool(ctx, root, "attention_bias", 0, &bias, NULL)) != SIM_OK ||
        (st = sim_j_bool(ctx, root, "use_sliding_window", 0, &use_sw, NULL)) != SIM_OK)
        return st;
    m->tie_embeddings = tie != 0;
    /* Qwen2's attention always has q, k, v biases (HF Qwen2Attention, bias=True). */
    m->qkv_bias = bias != 0 || m->arch == SIM_ARCH_QWEN2;
    m->qk_norm = m->arch == SIM_ARCH_QWEN3 || m->arch == SIM_ARCH_QWEN3_MOE;

    int64_t sw = 0;
    st = sim_j_int(ctx, root, "sliding_window", 0, 1, MAX_DIM, &sw, &has_sw);
    if (st != SIM_OK)
        return st;
    /* Mistral applies its window whenever it is set; Qwen2/3 only with use_sliding_window. */
    int qwen =
        m->arch == SIM_ARCH_QWEN2 || m->arch == SIM_ARCH_QWEN3 || m->arch == SIM_ARCH_QWEN3_MOE;
    m->sliding_window = (has_sw && (!qwen || use_sw)) ? sw : 0;
    if (qwen && !cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window"))
        m->sliding_window = 0;

    if (m->arch == SIM_ARCH_MIXTRAL) {
        st = sim_j_int(ctx, root, "num_local_experts", 1, 1, MAX_DIM, &m->n_experts, NULL);
        if (st == SIM_OK)
            st = sim_j_int(ctx, root, "num_experts_per_tok", 1, 1, MAX_DIM, &m->n_experts_per_tok,
                           NULL);
        m->d_ff_expert = m->d_ff;
        m->n_moe_layers = m->n_layers;
    } else if (m->arch == SIM_ARCH_QWEN3_MOE) {
        st = sim_j_int(ctx, root, "num_experts", 1, 1, MAX_DIM, &m->n_experts, NULL);
        if (st == SIM_OK)
            st = sim_j_int(ctx, root, "num_experts_per_tok", 1, 1, MAX_DIM, &m->n_experts_per_tok,
                           NULL);
        if (st == SIM_OK)
            st =
                sim_j_int(ctx, root, "moe_intermediate_size", 1, 1, MAX_DIM, &m->d_ff_expert, NULL);
        if (st == SIM_OK)
            st = count_moe_layers(ctx, root, m);
    }
    if (st == SIM_OK && m->n_experts_per_tok > m->n_experts && m->n_experts > 0)
        return sim_j_fail(ctx, "num_experts_per_tok",
                          "more than the experts (expected at most %lld, got %lld)",
                          (long long)m->n_experts, (long long)m->n_experts_per_tok);
    return st;
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
