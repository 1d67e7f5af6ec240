/*
 * engine.h - an inference engine's profile (vLLM V0 or V1): its scheduler
 * defaults, the settings of a run resolved from them, and its host time per step.
 *
 * The engine profile (engines/<id>.json, docs/engine.md) holds the scheduler
 * defaults of one engine version and its host (CPU) time per step: a fixed part
 * and a part per sequence in the step. Two schedulers:
 *  - V0 (vLLM 0.5-0.7 default scheduler): FCFS prefills under the token and
 *    sequence budgets while KV blocks are free (a step is either all prefills or
 *    all decodes), else one decode step for every running sequence, preempting
 *    the newest by recompute when a sequence finds no free block. Simulated on
 *    an offline batch by sched_v0.h.
 *  - V1 (vLLM 0.8 and later, vllm/v1/core/sched/scheduler.py): one token budget
 *    per step, running requests first, then waiting ones; chunked prefill always
 *    on. Simulated by sched_v1.h, which an offline batch on V1 also goes through.
 * The memory budget and KV capacity under an engine are memory.h's.
 * docs/model.md, "Engine".
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdint.h>

#include "hw.h"
#include "model.h"
#include "ops.h"
#include "status.h"

/* Which scheduler an engine profile describes. */
typedef enum sim_sched_kind {
    SIM_SCHED_V0 = 0, /* vLLM V0: prefill-or-decode steps, watermark, V0 defaults */
    SIM_SCHED_V1 = 1, /* vLLM V1: one token budget, running first, chunked prefill always */
    SIM_SCHED_KIND_COUNT
} sim_sched_kind;

/*
 * vLLM's usage context, which picks the V1 defaults of max_num_seqs and
 * max_num_batched_tokens (EngineArgs._set_default_args): the offline LLM class
 * or the OpenAI-compatible server.
 */
typedef enum sim_usage {
    SIM_USAGE_LLM = 0,    /* LLM(...).generate(), vllm bench latency/throughput */
    SIM_USAGE_SERVER = 1, /* vllm serve */
    SIM_USAGE_COUNT
} sim_usage;

/* "llm", "server"; "?" for out-of-range values. */
const char *sim_usage_name(sim_usage u);

/* The usage a serving simulation resolves from a sim_sched_cfg.usage: the one given, else
 * (-1) the OpenAI server's, as `vllm serve` runs: `llmstep serve`, serving sweeps and the
 * library's llmstep_serve of a deployment opened with the default usage. */
static inline int sim_usage_for_serving(int usage) { return usage < 0 ? SIM_USAGE_SERVER : usage; }

/* Scheduler and memory settings; a value < 0 means "use the engine's default". */
typedef struct sim_sched_cfg {
    int64_t max_num_seqs;
    int64_t max_num_batched_tokens;
    int64_t max_model_len;
    int64_t block_size;
    double gpu_memory_utilization; /* fraction of device memory vLLM may use */
    int enable_chunked_prefill;    /* 0/1, or -1 for the engine's rule */
    int enforce_eager;             /* 0/1, or -1: no CUDA graphs (eager launches) */
    int usage;                     /* sim_usage, or -1: SIM_USAGE_LLM */
    int disable_hybrid_kv;         /* 0/1, or -1 (= 0): vLLM V1 disable_hybrid_kv_cache_manager */
    int async_scheduling;          /* 0/1, or -1: the engine's default (V1 --async-scheduling) */
    int enable_prefix_caching;     /* 0/1, or -1: on for V1, off for V0 (vLLM's defaults) */
} sim_sched_cfg;

/* All fields unset (-1). */
void sim_sched_cfg_unset(sim_sched_cfg *c);

typedef struct sim_engine {
    char id[64];
    char source[256];
    sim_sched_kind kind;
    /* Scheduler defaults of this engine version (V0; V1 uses max_num_seqs only when no
     * usage-context default applies). */
    int64_t max_num_seqs;
    int64_t block_size;
    double gpu_memory_utilization;
    int64_t min_batched_tokens;     /* non-chunked budget = max(max_model_len, this) */
    int64_t chunked_batched_tokens; /* budget when chunked prefill is on */
    int64_t chunked_auto_above_len; /* chunked prefill on by default above this max_model_len; 0 =
                                       never */
    double watermark_frac;          /* blocks kept free when admitting prefills */
    /* Memory not available to the KV cache besides weights and activations. */
    double reserve_bytes;    /* CUDA context, allocator slack */
    double reserve_tp_bytes; /* extra per GPU when tp > 1 (NCCL / custom all-reduce buffers) */
    /* Measured host time per step: fixed + per sequence in the step, and at tp > 1 the same
     * pair again per extra rank (sim_engine_host_s). */
    double host_step_s;    /* tp == 1 */
    double host_step_tp_s; /* tp > 1 */
    double host_per_seq_s;
    double host_step_rank_s;    /* per step, per rank beyond the first (0: none) */
    double host_per_seq_rank_s; /* per sequence in the step, per rank beyond the first */
    /* V1: defaults by usage context and device memory (vLLM EngineArgs._set_default_args):
     * [usage][large], large = CUDA-reported memory >= large_gpu_min_bytes and the GPU's
     * name does not contain large_gpu_exclude (case-insensitive; "" = none). */
    int64_t default_seqs[SIM_USAGE_COUNT][2];
    int64_t default_tokens[SIM_USAGE_COUNT][2];
    double large_gpu_min_bytes;
    char large_gpu_exclude[32];
    int64_t long_prefill_threshold; /* tokens; a prefill chunk is capped at this (0 = off) */
    /* V1 memory: CUDA-graph memory counted before the KV cache is sized (0 = not counted). */
    double cudagraph_bytes;
    /* The profiling run's peak (sim_memory_compute, docs/engine.md "The profiling run's
     * peak"): bytes live per (sequence x vocabulary entry) while the dummy sampler runs over
     * max_num_seqs rows; bytes per (SM x vocabulary entry) of a buffer the sampler keeps (the
     * Triton top-k/top-p kernel's [SMs, vocab] fp32 rows; 0 = none); and 1 when the fused-MoE
     * kernel's workspace stays allocated after the forward pass (vLLM's WorkspaceManager),
     * so it adds to the sampler's peak for unquantized experts. activation_peak_additive 1:
     * the peak is the forward pass plus the sampler (V0's estimate, not re-derived), not the
     * larger of the two. */
    double sampler_logit_bytes;
    double sampler_sm_vocab_bytes;
    int64_t moe_workspace_persistent;
    int64_t activation_peak_additive;
    /* V1: 1 when the host work of step n+1 overlaps the GPU work of step n (async
     * scheduling), so a step takes max(GPU, host) instead of GPU + host. */
    int async_scheduling;
    /* V1: 1 when a waiting request is admitted only if its whole current sequence (prompt and
     * tokens generated so far) fits in the free blocks, not just its first chunk
     * (scheduler_reserve_full_isl, vLLM 0.19). */
    int admit_full_sequence;
    /* Decode attention of a model with a sliding window (sim_decode_attn, ops.h): 1 when this
     * version runs it with vLLM's PagedAttention V1/V2 (V0 0.5-0.6: FlashAttention-2 refuses
     * a sliding window and the XFormers backend decodes with PagedAttention), with the
     * kernel rule's thresholds and the CUDA-graph capture that sets what the kernel sees. */
    int64_t paged_decode_sliding_window;
    /* 1 when this version's ROCm backend decodes every model with the same PagedAttention
     * (V0 up to 0.6.1: vllm/attention/backends/rocm_flash_attn.py, before the custom ROCm
     * kernel of vLLM PR #8310); a GPU whose profile names vendor "amd" runs it. */
    int64_t paged_decode_rocm;
    int64_t paged_v1_max_seq_len, paged_v1_min_seq_heads, paged_partition_tokens;
    int64_t graph_max_seq_len, graph_max_batch, graph_batch_align;
    /* V1 speculative decoding (spec.h): time a verify step adds beyond the priced target and
     * drafter passes (rejection sampling, the proposer's set-up), and each drafter pass of
     * eagle, eagle3, mtp and draft adds (the proposer's loop on the worker: metadata and
     * launches), seconds, on the GPU's critical path (not overlapped by async scheduling).
     * 0 when the profile has none. */
    double spec_step_s;
    double spec_pass_s;
} sim_engine;

/* Settings of a run after defaults are resolved. */
typedef struct sim_sched_resolved {
    int64_t max_num_seqs;
    int64_t max_num_batched_tokens;
    int64_t max_model_len;
    int64_t block_size;
    double gpu_memory_utilization;
    int enable_chunked_prefill;
    int enforce_eager;
    sim_usage usage;
    int disable_hybrid_kv;     /* 1: windowed layers keep the whole context (vLLM V1
                                  disable_hybrid_kv_cache_manager; the V0 engine always) */
    int async_scheduling;      /* 1: host work overlaps the GPU (sim_engine.async_scheduling) */
    int enable_prefix_caching; /* 1: KV blocks of shared prompt prefixes are reused (V1 only;
                                  sched_v1.h, "Prefix caching") */
} sim_sched_resolved;

/* Most steps one simulation (offline batch or serving run) may take before it stops with an
 * error: about 10 s of simulation (docs/limits.md). */
#define SIM_SIM_MAX_STEPS INT64_C(10000000)

/* Most work one serving simulation may do, in operations: a step costs the requests it
 * schedules plus SIM_SIM_STAGE_WORK for each pipeline stage it prices (one without --pp),
 * so a limit on steps alone does not let a 64-stage pipeline run for minutes (about 10 s of
 * simulation either way; docs/limits.md). */
#define SIM_SIM_STAGE_WORK 32
#define SIM_SIM_MAX_WORK   (SIM_SIM_MAX_STEPS * SIM_SIM_STAGE_WORK)

/* 1 when the V1 hybrid KV-cache manager credits windowed layers in this run. */
static inline bool sim_sched_hybrid_kv(const sim_engine *e, const sim_sched_resolved *s)
{
    return e->kind == SIM_SCHED_V1 && !s->disable_hybrid_kv;
}

/*
 * Resolves unset settings from the engine, model and GPU: max_model_len = the
 * model's max_position_embeddings. V0: chunked prefill per the engine's rule;
 * the token budget max(max_model_len, min_batched_tokens) without chunking
 * (vLLM V0 SchedulerConfig), chunked_batched_tokens with it. V1: chunked prefill
 * on; max_num_seqs and max_num_batched_tokens from the usage context and the
 * GPU's CUDA-reported memory (sim_engine.default_*). Fails with a message when a
 * given value is out of range. async_scheduling: the setting, else the engine's default;
 * the V0 engine has none (asking for it is an error). enable_prefix_caching: the setting,
 * else on for V1 (vLLM 0.8+ enables it by default: EngineArgs.enable_prefix_caching, V1
 * arg_utils) and off for V0 (a V0 run with prefix caching and shared prefixes is refused by
 * the serving simulation, sched_v1.h).
 */
sim_status sim_sched_resolve(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                             const sim_sched_cfg *in, sim_sched_resolved *out /* OUT */,
                             struct sim_err *err /* OUT */);

/* Host time of a step with n_seqs sequences at tensor parallelism tp (engine profile):
 *   (tp > 1 ? host_step_tp_s : host_step_s) + host_per_seq_s x n_seqs
 *     + (tp - 1) x (host_step_rank_s + host_per_seq_rank_s x n_seqs)
 * (docs/model.md, "Calibration equation"). */
double sim_engine_host_s(const sim_engine *e, int tp, double n_seqs);

/* Drops every host-time figure of e (--no-host-time, a sweep without host time). */
void sim_engine_drop_host(sim_engine *e);

/* The decode-attention kernel rule of model m on GPU hw under engine e with scheduler
 * settings s (sim_decode_attn, ops.h): PagedAttention's when the engine decodes m's sliding
 * window with it, or every model on hw's platform (ROCm), else all zero. The CUDA-graph
 * capture length is the engine's, capped at max_model_len (vllm/config.py
 * ModelConfig._verify_cuda_graph: max_seq_len_to_capture = min(it, max_model_len)). */
void sim_decode_attn_resolve(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                             const sim_sched_resolved *s, sim_decode_attn *out /* OUT */);

/*
 * Wall time of one step from its GPU time (alpha x roofline + beta_s) and host
 * time: their sum, or their maximum when the engine overlaps them (async
 * scheduling).
 */
double sim_engine_step_wall_s(const sim_engine *e, double gpu_s, double host_s);

#endif
