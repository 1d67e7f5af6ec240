/*
 * model.h - the transformer architecture facts llmstep counts with.
 *
 * A sim_model is filled from a HuggingFace config.json by simio (model_json.c)
 * and checked by sim_model_validate(). It describes a decoder-only transformer
 * with rotary attention, grouped-query attention (n_kv_heads <= n_heads), a
 * gated MLP (gate, up, down; SiLU) and optionally a mixture-of-experts MLP
 * (n_experts experts of d_ff_expert, n_experts_per_tok routed per token).
 * Counting formulas are in docs/model.md ("Parameters", "KV cache").
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

/* Numeric formats. Sizes are in sim_dtype_bytes(). */
typedef enum sim_dtype {
    SIM_DTYPE_FP16 = 0,
    SIM_DTYPE_BF16 = 1,
    SIM_DTYPE_FP8 = 2,
    SIM_DTYPE_FP32 = 3,
    SIM_DTYPE_COUNT
} sim_dtype;

/* Supported HuggingFace model_type values. */
typedef enum sim_arch {
    SIM_ARCH_LLAMA = 0,
    SIM_ARCH_MISTRAL = 1,
    SIM_ARCH_QWEN2 = 2,
    SIM_ARCH_QWEN3 = 3,
    SIM_ARCH_MIXTRAL = 4,
    SIM_ARCH_QWEN3_MOE = 5,
    SIM_ARCH_COUNT
} sim_arch;

typedef struct sim_model {
    char id[128];              /* model id or path it was loaded from */
    sim_arch arch;             /* model_type */
    int64_t n_layers;          /* num_hidden_layers */
    int64_t d_model;           /* hidden_size */
    int64_t n_heads;           /* num_attention_heads */
    int64_t n_kv_heads;        /* num_key_value_heads (defaults to n_heads) */
    int64_t head_dim;          /* head_dim, or hidden_size / num_attention_heads */
    int64_t d_ff;              /* intermediate_size of a dense MLP */
    int64_t vocab;             /* vocab_size */
    int64_t max_pos;           /* max_position_embeddings, tokens */
    int64_t sliding_window;    /* attended-context cap in tokens; 0 = none */
    int64_t n_experts;         /* routed experts per MoE layer; 0 = dense model */
    int64_t n_experts_per_tok; /* experts each token is routed to (top-k) */
    int64_t d_ff_expert;       /* intermediate size of one expert */
    int64_t n_moe_layers;      /* layers whose MLP is MoE (rest are dense) */
    bool tie_embeddings;       /* tie_word_embeddings: LM head shares the embedding */
    bool qk_norm;              /* per-head RMSNorm on q and k (qwen3) */
    bool qkv_bias;             /* bias on the q, k, v projections (qwen2) */
    sim_dtype dtype;           /* torch_dtype mapped to what vLLM runs by default */
} sim_model;

/* Bytes per element of a dtype (fp16/bf16 2, fp8 1, fp32 4). */
double sim_dtype_bytes(sim_dtype dtype);

/* Short lower-case name ("fp16"); "?" for out-of-range values. */
const char *sim_dtype_name(sim_dtype dtype);

/* Parses "fp16", "bf16", "fp8", "fp32" into *out; returns SIM_EINVAL otherwise. */
sim_status sim_dtype_parse(const char *name, sim_dtype *out /* OUT */);

/* HuggingFace model_type string of an arch ("llama"). */
const char *sim_arch_name(sim_arch arch);

/*
 * Cross-field checks that a loader cannot do field by field: positive sizes,
 * n_heads divisible by n_kv_heads, head count times head_dim sensible, MoE
 * fields consistent. On failure returns SIM_EINVAL and writes the reason, naming
 * the offending config key, to err.
 */
sim_status sim_model_validate(const sim_model *m, struct sim_err *err /* OUT */);

/* Parameter breakdown of the whole (unsharded) model, in parameters (elements). */
typedef struct sim_param_count {
    double embedding; /* vocab x d_model */
    double lm_head;   /* vocab x d_model, 0 when tied */
    double attention; /* all layers: q, k, v, o (+ biases, q/k norms) */
    double mlp;       /* all layers: dense MLP or all experts, plus routers */
    double norms;     /* all RMSNorm weights */
    double total;
    double active_per_token; /* parameters one token touches (top-k experts only) */
} sim_param_count;

void sim_model_params(const sim_model *m, sim_param_count *out /* OUT */);

/*
 * KV-cache bytes per token on one GPU at tensor-parallel degree tp:
 * 2 (K and V) x n_layers x kv_heads_per_gpu x head_dim x bytes(kv_dtype).
 * kv_heads_per_gpu = max(1, n_kv_heads / tp) (vLLM replicates KV heads when
 * there are fewer of them than GPUs). tp = 1 gives the whole model's figure.
 */
double sim_model_kv_bytes_per_token(const sim_model *m, int tp, sim_dtype kv_dtype);

/* KV heads held by one GPU at tp (see above); heads per GPU is n_heads / tp. */
int64_t sim_model_kv_heads_per_gpu(const sim_model *m, int tp);

/*
 * Checks that tp is a legal tensor-parallel degree for the model in vLLM:
 * tp >= 1, n_heads % tp == 0, and either n_kv_heads % tp == 0 or
 * tp % n_kv_heads == 0 (replication), and the MLP sizes divide by tp.
 */
sim_status sim_model_check_tp(const sim_model *m, int tp, struct sim_err *err /* OUT */);

/* Weight bytes resident on one GPU at tp with weights of dtype (vocab rows padded to tp). */
double sim_model_weight_bytes_per_gpu(const sim_model *m, int tp, sim_dtype dtype);

#endif
