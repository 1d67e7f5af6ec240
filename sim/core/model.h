/*
 * model.h - the transformer architecture facts llmstep counts with.
 *
 * A sim_model is filled from a HuggingFace config.json by simio (model_json.c)
 * and checked by sim_model_validate(). It describes a decoder-only transformer
 * with rotary attention, grouped-query attention (n_kv_heads <= n_heads), a
 * gated MLP (gate, up, down; SiLU) and optionally a mixture-of-experts MLP
 * (n_experts experts of d_ff_expert, n_experts_per_tok routed per token).
 * DeepSeek-V2/V3 and Kimi-K2 replace the q, k, v projections by multi-head latent
 * attention (MLA: low-rank q and a shared kv latent, arXiv:2405.04434 section 2.1) and
 * add always-active shared experts to every MoE layer (mla and n_shared_experts).
 * Gemma-2/3, gpt-oss and Llama-4 interleave windowed and full-attention layers
 * (window_period); Llama-4's window is chunked rather than sliding (window_chunked).
 * Multimodal checkpoints (Gemma-3, Llama-4) also hold a vision encoder (vision), whose
 * weights vLLM loads but which llmstep does not run per step.
 * Counting formulas are in docs/model.md ("Parameters", "KV cache", "MLA", "Gemma-3",
 * "Llama-4").
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

/*
 * Weight quantization of a checkpoint, from its config.json quantization_config
 * (docs/model.md, "Quantized weights"). Only the linear layers of the transformer
 * blocks (q, k, v, o, gate, up, down and the experts) are quantized; the embedding,
 * norms, MoE router and (unless lm_head_quantized) the LM head stay in the model's
 * 16-bit dtype, as do layers the config excludes (ignore / modules_to_not_convert).
 * Bytes of one quantized [n x k] weight (n outputs, k inputs):
 *   n k weight_bits / 8                                  (packed weights)
 *   + n_scales x (scale_bits + zero_bits) / 8            (scales, zero points)
 *   + tensor_scale_bytes                                 (per-tensor scales)
 * with n_scales = n ceil(k / group_k) for group/block scales along k (block scales
 * also group block_n rows: ceil(n / block_n) ceil(k / group_k)), n for per-channel
 * scales (group_k = 0, per_channel), 0 for per-tensor scales.
 */
typedef enum sim_quant_method {
    SIM_QUANT_NONE = 0,               /* 16-bit checkpoint (or --dtype fp8 online quantization) */
    SIM_QUANT_FP8 = 1,                /* quant_method fp8: per-tensor, or 128x128 block scales */
    SIM_QUANT_COMPRESSED_TENSORS = 2, /* quant_method compressed-tensors (llm-compressor) */
    SIM_QUANT_AWQ = 3,                /* quant_method awq: int4, group scales and zero points */
    SIM_QUANT_GPTQ = 4,               /* quant_method gptq: int4/int8, group scales (+ zeros) */
    SIM_QUANT_MXFP4 = 5,              /* quant_method mxfp4 (gpt-oss): e2m1, e8m0 scale per 32 */
    SIM_QUANT_NVFP4 = 6,              /* modelopt NVFP4: e2m1, e4m3 scale per 16, fp32 per tensor */
    SIM_QUANT_MODELOPT_FP8 = 7,       /* modelopt FP8: per-tensor fp8 */
    SIM_QUANT_METHOD_COUNT
} sim_quant_method;

/* The math a quantized GEMM runs (the kernel vLLM picks). */
typedef enum sim_gemm_math {
    SIM_GEMM_MATH_16 = 0,   /* 16-bit tensor cores: weight-only schemes (Marlin, W4A16/W8A16) */
    SIM_GEMM_MATH_FP8 = 1,  /* fp8 x fp8 (W8A8 fp8; falls back to weight-only without fp8 units) */
    SIM_GEMM_MATH_INT8 = 2, /* int8 x int8 (W8A8 int8) */
    SIM_GEMM_MATH_FP4 = 3,  /* fp4 x fp4 (NVFP4 W4A4, Blackwell) */
    SIM_GEMM_MATH_COUNT
} sim_gemm_math;

typedef struct sim_quant {
    sim_quant_method method;
    char name[48];                  /* short label for reports, e.g. "awq-int4-g128" */
    int weight_bits;                /* bits per stored weight element (4 or 8) */
    int64_t group_k;                /* weights along k sharing one scale; 0 = per channel/tensor */
    int64_t block_n;                /* rows sharing one block scale (fp8 block); 0 otherwise */
    int per_channel;                /* 1: one scale per output row (when group_k == 0) */
    int scale_bits;                 /* bits of one group/block/channel scale */
    int zero_bits;                  /* bits of one stored zero point per group (0 = symmetric) */
    double tensor_scale_bytes;      /* per-tensor scale bytes of one weight matrix */
    sim_gemm_math math;             /* what the GEMM computes in */
    bool lm_head_quantized;         /* LM head stored like the block linears (GPTQ lm_head) */
    bool attn_excluded;             /* every attention projection excluded (16-bit) */
    bool mlp_excluded;              /* every MLP/expert projection excluded (16-bit) */
    bool dense_mlp_excluded;        /* every dense (non-MoE) layer's MLP excluded, not experts */
    bool shared_excluded;           /* every shared expert excluded, not the routed ones */
    int64_t n_attn_excluded_layers; /* layers whose attention is excluded by name */
    int64_t n_mlp_excluded_layers;  /* layers whose MLP is excluded by name */
    int64_t n_shared_excluded_layers; /* MoE layers whose shared experts are excluded by name */
} sim_quant;

/* Architecture families: one per supported HuggingFace model_type, but one for the multimodal
 * and text-only forms of Gemma-3 and Llama-4. What each one is lives in the traits table
 * (arch.h). */
typedef enum sim_arch {
    SIM_ARCH_LLAMA = 0,
    SIM_ARCH_MISTRAL = 1,
    SIM_ARCH_QWEN2 = 2,
    SIM_ARCH_QWEN3 = 3,
    SIM_ARCH_MIXTRAL = 4,
    SIM_ARCH_QWEN3_MOE = 5,
    SIM_ARCH_DEEPSEEK_V2 = 6,
    SIM_ARCH_DEEPSEEK_V3 = 7,
    SIM_ARCH_KIMI_K2 = 8,
    SIM_ARCH_PHI3 = 9,        /* Phi-3, Phi-4: Llama's math with packed qkv_proj and gate_up_proj */
    SIM_ARCH_GEMMA2 = 10,     /* Gemma-2: sliding window on every other layer, four norms a layer */
    SIM_ARCH_GPT_OSS = 11,    /* gpt-oss: MoE in every layer, alternating 128-token window, sinks */
    SIM_ARCH_GEMMA3 = 12,     /* Gemma-3: 5 sliding-window layers then 1 global, q/k norms */
    SIM_ARCH_LLAMA4 = 13,     /* Llama-4: MoE (+ shared expert), chunked attention, NoPE layers */
    SIM_ARCH_MINIMAX_M2 = 14, /* MiniMax-M2/M2.5: MoE in every layer, full attention, q/k norms */
    SIM_ARCH_KIMI_K25 = 15, /* Kimi-K2.5: Kimi-K2 (MLA, DeepSeek MoE) under text_config, MoonViT */
    SIM_ARCH_COUNT
} sim_arch;

/* The vision encoder of a multimodal checkpoint (vision_config) and its projector into the
 * language model (docs/model.md, "Vision encoders"). */
typedef enum sim_vision_kind {
    SIM_VISION_NONE = 0,    /* text-only model */
    SIM_VISION_SIGLIP = 1,  /* Gemma-3: SigLIP ViT (no head) + Gemma3MultiModalProjector */
    SIM_VISION_LLAMA4 = 2,  /* Llama-4: Llama4VisionModel (pixel-shuffle adapter) + projector */
    SIM_VISION_QWEN3VL = 3, /* Qwen3-VL: Qwen3VLVisionModel (patch merger and DeepStack mergers) */
    SIM_VISION_MOONVIT = 4, /* Kimi-K2.5: MoonViT (2D grid position embedding) + patch merger MLP */
    SIM_VISION_COUNT
} sim_vision_kind;

typedef struct sim_vision {
    sim_vision_kind kind;
    int64_t n_layers;    /* vision_config.num_hidden_layers (Qwen3-VL: depth) */
    int64_t d_model;     /* vision_config.hidden_size */
    int64_t d_ff;        /* vision_config.intermediate_size */
    int64_t patch;       /* vision_config.patch_size, pixels */
    int64_t image;       /* vision_config.image_size, pixels (Qwen3-VL: none, any size) */
    int64_t n_channels;  /* vision_config.num_channels (Qwen3-VL: in_channels; 3) */
    int64_t d_proj_in;   /* Llama-4: projector_input_dim (pixel-shuffle MLP fc1 out) */
    int64_t d_proj_out;  /* Llama-4: projector_output_dim (fc2 in and out) */
    int64_t d_out;       /* Llama-4: vision_output_dim (multimodal projector in); Qwen3-VL:
                            out_hidden_size (the mergers' output) */
    int64_t t_patch;     /* Qwen3-VL: temporal_patch_size, frames a patch spans */
    int64_t n_pos;       /* Qwen3-VL: num_position_embeddings; Kimi-K2.5: init_pos_emb_height x
                            init_pos_emb_width (the learnable grid) */
    int64_t merge;       /* Qwen3-VL: spatial_merge_size (merge x merge patches a token);
                            Kimi-K2.5: merge_kernel_size[0] */
    int64_t merge_w;     /* Kimi-K2.5: merge_kernel_size[1] (merge x merge_w patches a token) */
    int64_t n_deepstack; /* Qwen3-VL: deepstack_visual_indexes, how many (one merger each) */
} sim_vision;

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
    int64_t rotary_dim;        /* elements of a head that RoPE rotates (rotary_dim,
                                  partial_rotary_factor; MLA: qk_rope_head_dim); 0 = no RoPE */
    int64_t rope_cache_rows;   /* rows of all RoPE cos/sin caches vLLM builds (one per distinct
                                  rotary configuration: sim_rope_cache_rows, docs/model.md
                                  "Weights per GPU"); each row holds rotary_dim values */
    int64_t sliding_window;    /* attended-context cap in tokens; 0 = none */
    int64_t full_attn_layers;  /* with a window: the first layers that attend without it (HF
                                  Qwen2/3 max_window_layers); 0 = every layer is windowed */
    int64_t window_period;     /* with a window: 0, or p when the full-attention layers are
                                  every p-th (layer i is full iff i % p == p - 1; Gemma-2 and
                                  gpt-oss: 2, Llama-4: 4, Gemma-3: 6);
                                  full_attn_layers then counts them (n_layers / p) */
    bool window_chunked;       /* the window is chunked, not sliding (Llama-4 attention_chunk_size):
                                  a token at position p attends to positions floor(p / W) W .. p
                                  of its own W-token chunk, not to the last W */
    int64_t extra_norms;       /* RMSNorms per layer beyond the two pre-norms (Gemma-2/3: 2) */
    bool o_bias;               /* bias on the o projection (gpt-oss attention_bias) */
    bool attn_sinks;           /* one learned softmax sink per query head and layer (gpt-oss) */
    bool expert_bias;          /* biases on every expert's gate_up (2 Fe) and down (d) (gpt-oss) */
    int64_t n_experts;         /* routed experts per MoE layer; 0 = dense model */
    int64_t n_experts_per_tok; /* experts each token is routed to (top-k) */
    int64_t d_ff_expert;       /* intermediate size of one expert */
    int64_t n_moe_layers;      /* layers whose MLP is MoE (rest are dense) */
    bool tie_embeddings;       /* tie_word_embeddings: LM head shares the embedding */
    bool qk_norm;              /* per-head RMSNorm on q and k (qwen3, gemma3) */
    bool qk_l2_norm;           /* per-head L2 norm on q and k, no weights, on the windowed
                                  (RoPE) layers only (Llama-4 use_qk_norm) */
    bool qkv_bias;             /* bias on the q, k, v projections (qwen2) */
    /* Multi-head latent attention (deepseek_v2, deepseek_v3, kimi_k2); zero otherwise. With
     * mla, n_kv_heads = 1 (the latent) and head_dim = qk_nope_dim + qk_rope_dim (the q/k head of
     * the prefill path); the KV cache holds one latent of kv_lora_rank + qk_rope_dim. */
    bool mla;
    int64_t q_lora_rank;      /* q_lora_rank; 0 = a plain d x H (nope + rope) q projection */
    int64_t kv_lora_rank;     /* kv_lora_rank: the cached latent */
    int64_t qk_nope_dim;      /* qk_nope_head_dim */
    int64_t qk_rope_dim;      /* qk_rope_head_dim: the rotary part, shared by all heads in k */
    int64_t v_head_dim;       /* v_head_dim */
    int64_t n_shared_experts; /* n_shared_experts: a dense MLP of n_shared x d_ff_expert */
    bool router_bias;         /* e_score_correction_bias (E fp32 values per MoE layer) */
    bool qk_norm_all_heads;   /* q/k RMSNorms over all heads: one more all-reduce a layer at
                                 TP > 1, of 2 fp32 values a token (MiniMax-M2) */
    bool router_fp32;         /* the router GEMM runs in fp32 (weights, input, logits), not in
                                 the 16-bit dtype; never in the checkpoint's quantized format */
    int64_t n_mtp_layers;     /* num_nextn_predict_layers: MTP modules, not loaded by vLLM
                                 without speculative decoding (counted apart) */
    sim_dtype dtype;          /* torch_dtype mapped to what vLLM runs by default */
    sim_quant quant;          /* quantization_config; method SIM_QUANT_NONE when absent */
    sim_vision vision;        /* vision encoder; kind SIM_VISION_NONE for text-only models */
} sim_model;

/* Bytes per element of a dtype (fp16/bf16 2, fp8 1, fp32 4). */
double sim_dtype_bytes(sim_dtype dtype);

/* Short lower-case name ("fp16"); "?" for out-of-range values. */
const char *sim_dtype_name(sim_dtype dtype);

/* Parses "fp16", "bf16", "fp8", "fp32" into *out; returns SIM_EINVAL otherwise. */
sim_status sim_dtype_parse(const char *name, sim_dtype *out /* OUT */);

/* HuggingFace model_type string of an arch ("llama"; "gemma3" for both Gemma-3 forms). */
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
    double vision;    /* vision encoder and multimodal projector (0 for text-only models) */
    double total;
    double active_per_token; /* parameters one text token touches (top-k experts only; not
                                the vision encoder) */
    double mtp; /* DeepSeek-V3 multi-token-prediction modules of the checkpoint, not in total
                   (vLLM loads them only for MTP speculative decoding) */
} sim_param_count;

void sim_model_params(const sim_model *m, sim_param_count *out /* OUT */);

/* How vLLM's get_rope sizes one RoPE cos/sin cache (vllm/model_executor/layers/
 * rotary_embedding/): by rope_scaling's rope_type. */
typedef enum sim_rope_kind {
    SIM_ROPE_DEFAULT = 0, /* none, default, llama3, M-RoPE: max_position_embeddings rows */
    SIM_ROPE_LINEAR,      /* linear, dynamic: max_position_embeddings x factor */
    SIM_ROPE_YARN,        /* yarn, deepseek_yarn: original_max_position_embeddings x factor */
    SIM_ROPE_LONGROPE     /* longrope: a short and a long cache, original + max rows */
} sim_rope_kind;

/* Rows of one cos/sin cache of kind k (docs/model.md, "Weights per GPU"); factor and orig_max_pos
 * are read only by the kinds that use them. */
double sim_rope_cache_rows(sim_rope_kind k, double max_pos, double factor, double orig_max_pos);

/* Parameters of the vision encoder and its projector (docs/model.md, "Vision encoders");
 * 0 without one. */
double sim_model_vision_params(const sim_model *m);

/* The part of them every TP rank holds whole (vLLM's plain modules and ReplicatedLinear): the
 * patch and position embeddings, final norm and projector of MoonViT; 0 for the other kinds,
 * whose weights are counted divided over TP. */
double sim_model_vision_replicated_params(const sim_model *m);

/* RMSNorms of one decoder layer: the two pre-norms, plus Gemma-2's post-norms (extra_norms). */
double sim_model_norms_per_layer(const sim_model *m);

/*
 * KV-cache bytes per token on one GPU at tensor-parallel degree tp:
 * 2 (K and V) x n_layers x kv_heads_per_gpu x head_dim x bytes(kv_dtype).
 * kv_heads_per_gpu = max(1, n_kv_heads / tp) (vLLM replicates KV heads when
 * there are fewer of them than GPUs). tp = 1 gives the whole model's figure.
 * MLA: n_layers x (kv_lora_rank + qk_rope_dim) x bytes(kv_dtype), the same on every
 * GPU (vLLM MLAAttentionSpec: one latent "head", replicated over TP).
 */
double sim_model_kv_bytes_per_token(const sim_model *m, int tp, sim_dtype kv_dtype);

/*
 * A model's structural class, the domain of a figure fit (lib/meas_fig.h): dense or MoE (the
 * experts run the fused-MoE kernel, whose figures a dense model's rows do not see), and
 * multi-head (one KV head per query head), grouped (fewer KV heads: GQA, MQA) or latent (MLA)
 * attention (each reads a different share of KV bytes per flop in decode).
 */
typedef enum sim_model_class {
    SIM_MCLASS_DENSE_MHA,
    SIM_MCLASS_DENSE_GQA,
    SIM_MCLASS_DENSE_MLA,
    SIM_MCLASS_MOE_MHA,
    SIM_MCLASS_MOE_GQA,
    SIM_MCLASS_MOE_MLA,
    SIM_MCLASS_COUNT
} sim_model_class;

sim_model_class sim_model_class_of(const sim_model *m);
const char *sim_model_class_name(sim_model_class c); /* "dense-gqa", ... */
int sim_model_class_find(const char *name);          /* -1 when unknown */
/* 1 when m's class is among classes (bit sim_model_class), else 0. */
int sim_model_in_classes(const sim_model *m, unsigned classes);

/* KV heads held by one GPU at tp (see above; 1 with MLA); heads per GPU is n_heads / tp. */
int64_t sim_model_kv_heads_per_gpu(const sim_model *m, int tp);

/* Full-attention layers among layers [start, start + n): all of them without a window, else
 * the first full_attn_layers (Qwen2 max_window_layers) or every window_period-th layer. */
int64_t sim_model_full_layers_in(const sim_model *m, int64_t start, int64_t n);

/*
 * The KV cache of one GPU as vLLM V1's hybrid KV-cache manager lays it out (docs/model.md,
 * "KV cache"; vllm/v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size and
 * get_kv_cache_config_from_groups, vLLM 0.10 to 0.19). Layers with a sliding window
 * (SlidingWindowSpec) keep only the blocks their window can still reach; full-attention layers
 * keep the whole context. Layers of one kind are split into KV-cache groups of G layers each
 * (G = the smaller layer count of the two kinds, or the larger when it is below 1.25 times the
 * smaller; the last group of a kind is padded), every group has its own block table, and one
 * block of the shared pool is one page (block_size tokens of one layer) in each of G layers.
 * A model without windowed layers, or with the hybrid manager off (hybrid = false: vLLM's
 * disable_hybrid_kv_cache_manager, forced by some KV connectors, and the V0 engine), is one
 * group of all its layers, every layer full: the classic paged cache.
 */
typedef struct sim_kv_layout {
    double layer_token_bytes; /* KV bytes of one token in one layer on one GPU */
    int64_t n_full_layers;    /* layers that keep the whole context */
    int64_t n_window_layers;  /* layers that keep only what the window reaches */
    int64_t window;           /* sliding_window in tokens; 0 when n_window_layers == 0 */
    bool chunked;             /* the window is a chunk (Llama-4 chunked local attention) */
    int64_t group_layers;     /* G: layers per KV-cache group (one pool block = G pages) */
    int64_t n_full_groups;    /* ceil(n_full_layers / G) */
    int64_t n_window_groups;  /* ceil(n_window_layers / G) */
} sim_kv_layout;

/* The layout of the whole model on one GPU at tp (see sim_kv_layout). */
void sim_model_kv_layout(const sim_model *m, int tp, sim_dtype kv_dtype, bool hybrid,
                         sim_kv_layout *out /* OUT */);

/*
 * Tokens at the start of a sequence whose KV a windowed layer no longer needs once computed
 * tokens are in the cache (vLLM SlidingWindowManager.get_num_skipped_tokens):
 *   skipped(c) = max(0, c - W + 1)
 * (the next token attends to the W - 1 before it); for a chunked window (vLLM
 * ChunkedLocalAttentionManager: the next token attends to its own chunk only)
 *   skipped(c) = floor(c / W) W.
 * vLLM frees the whole blocks among them, floor(skipped / block_size) (remove_skipped_blocks).
 * 0 without windowed layers.
 */
int64_t sim_kv_skipped_tokens(const sim_kv_layout *k, int64_t computed);

/*
 * Blocks of the pool one request holds after vLLM allocated slots for tokens tokens, computed
 * of which are in the cache (allocate_slots frees the skipped blocks first):
 *   n_full_groups ceil(t / bs) + n_window_groups (ceil(t / bs) - floor(skipped(c) / bs))
 * Without windowed layers: ceil(t / bs), the classic count. 0 <= computed <= tokens.
 */
int64_t sim_kv_request_blocks(const sim_kv_layout *k, int64_t block_size, int64_t computed,
                              int64_t tokens);

/*
 * Blocks vLLM budgets for one request of len tokens at most (the pool check at start-up and
 * the maximum concurrency it logs; kv_cache_interface.py max_memory_usage_bytes, and
 * kv_cache_utils.py get_max_concurrency_for_kv_cache_config):
 *   n_full_groups ceil(len / bs) + n_window_groups (ceil(min(W - 1 + T, len) / bs) + 1)
 * with T = max_num_batched_tokens: a prefill chunk of T tokens is allocated before the blocks
 * its window passes are freed, and the window may start inside a block (the + 1). A chunked
 * window starts on a chunk boundary: n_window_groups ceil(min(W + T, len) / bs)
 * (ChunkedLocalAttentionSpec.max_admission_blocks_per_request).
 */
int64_t sim_kv_max_request_blocks(const sim_kv_layout *k, int64_t block_size,
                                  int64_t max_batched_tokens, int64_t len);

/*
 * KV bytes one request holds on one GPU with context tokens in the cache, between steps:
 *   layer_token_bytes x (n_full_layers x C + n_window_layers x kept(C))
 *   kept(C) = C - bs x floor(skipped(C) / bs)
 * so a windowed layer keeps min(C, W - 1 + up to bs - 1) tokens: the window and the part of
 * its first block that lies before it. Counts tokens, not the padding of the last block.
 * hybrid = false counts every layer full: layers x C x bytes per token and layer, which is
 * sim_model_kv_bytes_per_token x C. context >= 0, block_size >= 1.
 */
double sim_model_kv_bytes_at(const sim_model *m, int tp, sim_dtype kv_dtype, bool hybrid,
                             int64_t block_size, int64_t context);

/* The same from a layout (its layer counts: a pipeline stage's, see sim_memory.kv). */
double sim_kv_bytes_at(const sim_kv_layout *k, int64_t block_size, int64_t context);

/*
 * Checks that tp is a legal tensor-parallel degree for the model in vLLM:
 * tp >= 1, n_heads % tp == 0, and either n_kv_heads % tp == 0 or
 * tp % n_kv_heads == 0 (replication), and the MLP sizes divide by tp.
 */
sim_status sim_model_check_tp(const sim_model *m, int tp, struct sim_err *err /* OUT */);

/*
 * Bytes of one [n x k] linear weight of the transformer blocks: under the model's
 * quantization when it has one (scales and zero points included, see sim_quant),
 * else n x k x bytes(dtype). n and k are the per-GPU (sharded) dimensions.
 */
double sim_model_linear_bytes(const sim_model *m, sim_dtype dtype, double n, double k);

/* Weight bytes on one GPU, by part (all layers summed), including scales and zero points. */
typedef struct sim_weight_bytes {
    double embedding; /* vocab-parallel embedding, 16-bit */
    double lm_head;   /* vocab-parallel LM head; 0 when tied */
    double qkv;       /* q, k, v projections; MLA: q_a, q_b, kv_a, kv_b and vLLM's 16-bit
                         copies of kv_b for the absorbed decode (W_UK, W_UV) */
    double o;         /* o projection */
    double small;     /* q/k/v biases and q/k norm weights; MLA: q_a and kv_a norms */
    double gate_up;   /* dense MLP gate and up (and the MoE layers' shared experts) */
    double down;      /* dense MLP down (and the shared experts') */
    double experts;   /* every routed expert of every MoE layer (gate, up, down) */
    double router;    /* MoE routers, 16-bit (+ fp32 e_score_correction_bias) */
    double norms;     /* RMSNorm weights */
    double vision;    /* vision encoder and projector, 16-bit, sharded over tp (loaded, not
                         streamed per step) */
    double rope;      /* RoPE cos/sin caches, 16-bit, whole on every GPU (buffers vLLM builds
                         when it loads the model, not streamed per step) */
    double total;
} sim_weight_bytes;

void sim_model_weight_bytes(const sim_model *m, int tp, sim_dtype dtype,
                            sim_weight_bytes *out /* OUT */);

/*
 * sim_model_weight_bytes of one GPU when the MoE layers spread over G = dp x tp GPUs (vLLM
 * FusedMoEParallelConfig: TP flattened across DP; docs/model.md, "Expert and data
 * parallelism"): with ep, n_experts / G whole experts (the tp = 1 bytes / G); without, every
 * expert's 1/G slice (the experts at tp = G). Attention, dense and shared-expert layers stay
 * at tp (replicated over dp). dp <= 1 and ep 0: exactly sim_model_weight_bytes.
 */
void sim_model_weight_bytes_moe(const sim_model *m, int tp, int dp, int ep, sim_dtype dtype,
                                sim_weight_bytes *out /* OUT */);

/*
 * Weight bytes resident on one GPU at tp (vocab rows padded to tp). Unquantized
 * models: linear layers in dtype (fp8 with --dtype fp8), the rest in 16 bits.
 * Quantized models: linear layers as their checkpoint stores them (dtype only
 * says the 16-bit type of the rest).
 */
double sim_model_weight_bytes_per_gpu(const sim_model *m, int tp, sim_dtype dtype);

/* Bytes per element of the MoE router's weights, input and logits: 4 when the model runs it in
 * fp32 (router_fp32), else hb, the model's 16-bit activation bytes. The router is never in the
 * checkpoint's quantized format (vLLM builds every gate with quant_config=None). */
double sim_model_router_bytes(const sim_model *m, double hb);

/* The model's 16-bit dtype (fp16 or bf16): what vLLM's kv_cache_dtype "auto" stores. */
sim_dtype sim_model_dtype16(const sim_model *m);

/* Short name of a GEMM math ("fp8"). */
const char *sim_gemm_math_name(sim_gemm_math g);

#endif
