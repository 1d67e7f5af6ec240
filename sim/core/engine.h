/*
 * engine.h - an inference engine's scheduler and memory model (vLLM V0 first),
 * and the simulation of an offline batch step by step.
 *
 * The engine profile (engines/<id>.json, docs/engine.md) holds the scheduler
 * defaults of one engine version and its measured host (CPU) time per step: a
 * fixed part and a part per sequence in the step. A batch of B prompts of L
 * tokens, each generating O tokens, is scheduled like vLLM V0's default
 * scheduler: FCFS prefills under the token and sequence budgets while KV blocks
 * are free (a step is either all prefills or all decodes), else one decode step
 * for every running sequence, preempting the newest by recompute when a
 * sequence finds no free block. KV capacity follows vLLM's profiling:
 * blocks = (memory x utilization - weights - activation peak - reserve) /
 * (block_size x KV bytes per token per GPU). docs/model.md, "Engine".
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdint.h>

#include "hw.h"
#include "model.h"
#include "status.h"
#include "step.h"

/* Scheduler and memory settings; a value < 0 means "use the engine's default". */
typedef struct sim_sched_cfg {
    int64_t max_num_seqs;
    int64_t max_num_batched_tokens;
    int64_t max_model_len;
    int64_t block_size;
    double gpu_memory_utilization; /* fraction of device memory vLLM may use */
    int enable_chunked_prefill;    /* 0/1, or -1 for the engine's rule */
    int enforce_eager;             /* 0/1, or -1: no CUDA graphs (eager launches) */
} sim_sched_cfg;

/* All fields unset (-1). */
void sim_sched_cfg_unset(sim_sched_cfg *c);

typedef struct sim_engine {
    char id[64];
    char source[256];
    /* Scheduler defaults of this engine version. */
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
    /* Measured host time per step: fixed + per sequence in the step. */
    double host_step_s;    /* tp == 1 */
    double host_step_tp_s; /* tp > 1 */
    double host_per_seq_s;
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
} sim_sched_resolved;

/* The memory budget of one GPU (docs/model.md, "Memory"). */
typedef struct sim_memory {
    double capacity_bytes;      /* device memory */
    double usable_bytes;        /* capacity x gpu_memory_utilization */
    double weights_bytes;       /* per GPU */
    double activation_bytes;    /* peak of the profiling forward pass */
    double reserve_bytes;       /* engine reserve */
    double kv_bytes_per_token;  /* per GPU */
    double kv_budget_bytes;     /* usable - weights - activations - reserve (may be < 0) */
    int64_t kv_blocks;          /* floor(budget / (block_size x kv bytes per token)), >= 0 */
    int64_t kv_capacity_tokens; /* kv_blocks x block_size */
    int fits;                   /* weights fit and one max_model_len sequence fits */
} sim_memory;

/*
 * Resolves unset settings from the engine and model: max_model_len = the
 * model's max_position_embeddings; chunked prefill per the engine's rule; the
 * token budget max(max_model_len, min_batched_tokens) without chunking (vLLM V0
 * SchedulerConfig), chunked_batched_tokens with it. Fails with a message when a
 * given value is out of range.
 */
sim_status sim_sched_resolve(const sim_engine *e, const sim_model *m, const sim_sched_cfg *in,
                             sim_sched_resolved *out /* OUT */, struct sim_err *err /* OUT */);

/* Memory budget and KV capacity of one GPU. */
void sim_memory_compute(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                        const sim_run_cfg *run, const sim_sched_resolved *s,
                        sim_memory *out /* OUT */);

/* Host time of a step with n_seqs sequences (engine profile). */
double sim_engine_host_s(const sim_engine *e, int tp, double n_seqs);

/* An offline batch: batch prompts of prompt_tokens, each generating output_tokens. */
typedef struct sim_batch {
    int64_t batch;
    int64_t prompt_tokens;
    int64_t output_tokens;
} sim_batch;

typedef struct sim_batch_result {
    double latency_s;      /* sum over steps of alpha x roofline + beta + host */
    double roofline_sum_s; /* sum of roofline step times */
    double host_sum_s;     /* sum of host times */
    double prefill_s;      /* time of the prefill (and recompute) steps */
    double decode_s;       /* time of the decode steps */
    int64_t n_steps;
    int64_t n_prefill_steps;
    int64_t n_decode_steps;
    int64_t preemptions;       /* sequences preempted (recompute) */
    int64_t recomputed_tokens; /* prompt + generated tokens prefilled again */
    int64_t peak_kv_blocks;
    int64_t kv_capacity_tokens;
    double peak_kv_frac; /* peak blocks used / blocks */
} sim_batch_result;

/* Upper bound on sequences the simulation tracks; larger batches are an error. */
#define SIM_BATCH_MAX_SEQS 4096

/*
 * Caller-provided scratch for the simulation (no allocation in the core):
 * per-sequence state for up to SIM_BATCH_MAX_SEQS sequences.
 */
typedef struct sim_batch_work {
    int64_t cached[SIM_BATCH_MAX_SEQS];    /* tokens in the KV cache */
    int64_t generated[SIM_BATCH_MAX_SEQS]; /* tokens sampled so far */
    int64_t blocks[SIM_BATCH_MAX_SEQS];    /* KV blocks held */
    int64_t todo[SIM_BATCH_MAX_SEQS];      /* prompt tokens still to prefill (0 = decoding) */
    uint8_t decoded[SIM_BATCH_MAX_SEQS];   /* decoded in the current step */
    int32_t queue[SIM_BATCH_MAX_SEQS];     /* waiting queue (FCFS), sequence ids */
    int32_t running[SIM_BATCH_MAX_SEQS];   /* running, in admission order */
} sim_batch_work;

/*
 * Simulates the batch and sums the predicted step times. Fails (SIM_ERANGE with
 * a message) when the model does not fit, a prompt is longer than
 * max_model_len, or one sequence cannot fit in the KV cache at all.
 */
sim_status sim_batch_simulate(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                              const sim_run_cfg *run, const sim_sched_resolved *s,
                              const sim_batch *b, sim_batch_work *work,
                              sim_batch_result *out /* OUT */, struct sim_err *err /* OUT */);

#endif
