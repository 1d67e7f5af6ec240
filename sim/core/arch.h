/*
 * arch.h - the architecture-traits table: one row per HuggingFace model_type llmstep supports.
 *
 * A row says what an architecture is, whatever the checkpoint: its attention (grouped-query or
 * multi-head latent), MLP layout (dense or which mixture of experts), which layers a sliding or
 * chunked window applies to, the defaults of config keys a config may leave out, and the
 * per-layer extras (biases, q/k norms, extra norms, sinks) the counts add. The loader
 * (sim/io/model_json.c) looks up the row of a config's model_type and reads the keys the row's
 * kinds name, with the row's defaults; the counts (model.c) and operators (step.c) then read the
 * sim_model it filled, never the model_type. Adding an architecture is one row here, plus the
 * keys and operators of any layout no row has yet. Every supported architecture is a pre-norm
 * decoder with RMSNorm and rotary position embeddings (Llama-4's global layers: none).
 * Sources per row: docs/model.md, "Model configs", and the HF and vLLM classes cited there.
 */
#ifndef SIM_ARCH_H
#define SIM_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* How the attention projects q, k and v. */
typedef enum sim_attn_kind {
    SIM_ATTN_GQA = 0, /* q, k, v projections, num_key_value_heads KV heads (absent: MHA) */
    SIM_ATTN_MLA = 1, /* multi-head latent attention (arXiv:2405.04434 section 2.1) */
    SIM_ATTN_KIND_COUNT
} sim_attn_kind;

/* Which layers have a mixture-of-experts MLP, and the keys that say so. */
typedef enum sim_moe_kind {
    SIM_MOE_NONE = 0,        /* a dense gated MLP of intermediate_size in every layer */
    SIM_MOE_EVERY_LAYER = 1, /* num_local_experts of intermediate_size in every layer */
    SIM_MOE_SPARSE_STEP = 2, /* num_experts of moe_intermediate_size; decoder_sparse_step,
                                mlp_only_layers */
    SIM_MOE_DEEPSEEK = 3,    /* n_routed_experts and n_shared_experts of moe_intermediate_size
                                from layer first_k_dense_replace on, every moe_layer_freq-th;
                                dense without n_routed_experts */
    SIM_MOE_INTERLEAVED = 4, /* num_local_experts and one shared expert of intermediate_size
                                every interleave_moe_layer_step-th layer; dense layers of
                                intermediate_size_mlp */
    SIM_MOE_KIND_COUNT
} sim_moe_kind;

/* Which layers a window applies to, and the keys that say so (docs/model.md, "Windowed
 * layers"). */
typedef enum sim_window_kind {
    SIM_WINDOW_UNIFORM = 0,    /* sliding_window, when set, on every layer */
    SIM_WINDOW_FROM_LAYER = 1, /* sliding_window only with use_sliding_window, on the layers
                                  from max_window_layers on */
    SIM_WINDOW_ALTERNATE = 2,  /* sliding_window on the even layers, full attention on the odd */
    SIM_WINDOW_PERIODIC = 3,   /* sliding_window on every layer but each p-th (p:
                                  sliding_window_pattern, or as layer_types lists them) */
    SIM_WINDOW_CHUNKED = 4,    /* chunked local attention of attention_chunk_size on the RoPE
                                  layers, full attention on the NoPE layers (no_rope_layers) */
    SIM_WINDOW_KIND_COUNT
} sim_window_kind;

/* When the LM head is tied to the embedding without tie_word_embeddings true. */
typedef enum sim_tie_default {
    SIM_TIE_DEFAULT_NO = 0,     /* never: untied unless the key says true */
    SIM_TIE_DEFAULT_ABSENT = 1, /* when the key is absent (false or null unties) */
    SIM_TIE_DEFAULT_UNSET = 2,  /* unless a value is given (null counts as none), in
                                   text_config or at the top of a multimodal config */
    SIM_TIE_DEFAULT_COUNT
} sim_tie_default;

/* The MLP's activation. Elementwise, and costed alike (docs/model.md, "Elementwise
 * operators"); recorded so that the table holds the architecture's facts. */
typedef enum sim_act {
    SIM_ACT_SILU = 0,         /* SiLU(gate) x up */
    SIM_ACT_GELU_TANH = 1,    /* GELU with the tanh approximation (gate) x up */
    SIM_ACT_SWIGLU_CLAMP = 2, /* gate x sigmoid(1.702 gate) x (up + 1), both clamped */
    SIM_ACT_COUNT
} sim_act;

typedef struct sim_arch_traits {
    const char *model_type; /* HF model_type */
    sim_arch arch;          /* the family; a multimodal type and its text-only form share it */
    sim_vision_kind vision; /* not NONE: a multimodal config, the language model's keys under
                               text_config and this vision encoder's under vision_config */
    sim_attn_kind attn;     /* q, k, v projections */
    sim_moe_kind moe;       /* MLP layout */
    sim_window_kind window; /* which layers a window applies to */
    /* Defaults of keys a config may leave out; 0 or NULL: none (required, derived or off). */
    int64_t vocab;           /* vocab_size */
    int64_t max_pos;         /* max_position_embeddings, tokens */
    int64_t head_dim;        /* head_dim (none: hidden_size / num_attention_heads) */
    int64_t window_tokens;   /* sliding_window when the key is absent (a null: no window);
                                SIM_WINDOW_CHUNKED: attention_chunk_size */
    int64_t window_period;   /* SIM_WINDOW_PERIODIC: sliding_window_pattern;
                                SIM_WINDOW_CHUNKED: no_rope_layer_interval */
    int64_t d_ff_dense;      /* SIM_MOE_INTERLEAVED: intermediate_size_mlp */
    const char *topk_method; /* SIM_MOE_DEEPSEEK: topk_method */
    bool qk_l2_norm;         /* SIM_WINDOW_CHUNKED: use_qk_norm (a weightless L2 q/k norm on
                                the RoPE layers) */
    sim_tie_default tie;     /* tie_word_embeddings */
    /* What every layer has, whatever the config says. */
    int64_t extra_norms;    /* RMSNorms beyond the two pre-norms */
    bool qkv_bias;          /* biases on q, k, v even without attention_bias */
    bool o_bias;            /* attention_bias biases o as well as q, k, v */
    bool qk_norm;           /* a per-head RMSNorm on q and on k */
    bool qk_norm_all_heads; /* the q and k RMSNorms span all heads of the layer, so at TP > 1
                               each layer all-reduces every token's two fp32 variances */
    bool attn_sinks;        /* one learned softmax sink per query head */
    bool expert_bias;       /* biases on every expert's gate_up and down */
    bool router_bias;       /* a bias on the router (SIM_MOE_DEEPSEEK: topk_method decides) */
    bool router_fp32;       /* the router's weights, input and logits are fp32 (vLLM builds the
                               gate with params_dtype=torch.float32); otherwise 16-bit */
    bool layer_types;       /* layer_types is read, and must match the window's layers */
    /* Elementwise facts, costed like Llama's (docs/model.md, "Model configs"). */
    sim_act act;      /* MLP activation */
    bool softcap;     /* tanh soft-capping of attention scores and final logits */
    bool embed_scale; /* embedding output scaled by sqrt(hidden_size) */
} sim_arch_traits;

/* Rows of the table, in the order error messages list the supported types. */
size_t sim_arch_n_rows(void);

/* Row i of the table; NULL when i >= sim_arch_n_rows(). */
const sim_arch_traits *sim_arch_row(size_t i);

/* The row of an HF model_type (exact, case-sensitive); NULL when it is not supported. */
const sim_arch_traits *sim_arch_find(const char *model_type);

/* The first row of a family (its multimodal or only model_type); NULL out of range. */
const sim_arch_traits *sim_arch_traits_of(sim_arch arch);

/* Why an architecture vLLM serves is not modelled yet ("a hybrid of Mamba and attention
 * layers: not modelled"), or NULL when model_type is not one of those. */
const char *sim_arch_unmodelled_why(const char *model_type);

#endif
