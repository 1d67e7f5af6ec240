/*
 * memory.h - the memory budget of one GPU under an engine, and the KV-cache
 * capacity it leaves (docs/model.md, "Memory").
 *
 * KV capacity follows vLLM's profiling:
 * blocks = (memory x utilization - weights - activation peak - reserve) /
 * (block_size x KV bytes per token per GPU). With windowed layers and the V1
 * hybrid KV-cache manager a block is one page in each of G layers (model.h,
 * sim_kv_layout); with pipeline stages the stage with the fewest blocks sets
 * the cache (pipeline.h). Pure: no I/O, no allocation.
 */
#ifndef SIM_MEMORY_H
#define SIM_MEMORY_H

#include <stdint.h>

#include "engine.h"
#include "hw.h"
#include "model.h"
#include "ops.h"
#include "setup.h"

/* KV blocks of block_size tokens that hold tokens tokens (paged attention rounds up). */
static inline int64_t sim_kv_blocks_for(int64_t tokens, int64_t block_size)
{
    return (tokens + block_size - 1) / block_size;
}

/* Largest KV block count the memory model reports (docs/limits.md). */
#define SIM_KV_BLOCKS_MAX 1099511627776.0

/* The memory budget of one GPU (docs/model.md, "Memory"). */
typedef struct sim_memory {
    double capacity_bytes;           /* device memory (V1: the total CUDA reports) */
    double usable_bytes;             /* capacity x gpu_memory_utilization */
    double weights_bytes;            /* per GPU */
    double activation_bytes;         /* peak of the profiling run: the larger of the two phases
                                        below, or their sum (activation_peak_additive) */
    double activation_forward_bytes; /* its forward pass */
    double activation_sampler_bytes; /* its dummy sampler (V1: with the forward's output and a
                                        kept fused-MoE workspace) */
    double reserve_bytes;            /* engine reserve (V1: non-torch memory and CUDA graphs) */
    double kv_bytes_per_token;       /* per GPU, every layer counted (what a token costs without the
                                        window credit) */
    double kv_full_bytes_per_token;  /* per GPU, the full-attention layers only (all layers
                                        without the hybrid KV-cache manager) */
    double kv_budget_bytes;          /* usable - weights - activations - reserve (may be < 0) */
    sim_kv_layout kv;        /* how the V1 hybrid manager groups the layers (model.h); at pp > 1 the
                                layer counts are the reported stage's, the groups the whole model's */
    double kv_block_bytes;   /* one block of the pool: block_size x kv bytes per token, or
                                with windowed layers block_size x G pages of one layer */
    int64_t kv_block_layers; /* layers one block spans on this GPU: all its layers, or G (a
                                stage's share of G at pp > 1) with two kinds of layers */
    int64_t kv_blocks;       /* floor(budget / kv_block_bytes), >= 0 */
    int64_t kv_capacity_tokens; /* tokens of every group: kv_blocks / groups x block_size (what
                                   vLLM logs as "GPU KV cache size") */
    int64_t kv_blocks_max_seq;  /* blocks vLLM budgets for one max_model_len sequence
                                   (sim_kv_max_request_blocks) */
    int fits;     /* weights fit and one max_model_len sequence fits: kv_blocks >= kv_blocks_max_seq
                     (vLLM check_enough_kv_cache_memory) */
    int pp_stage; /* with pipeline stages: the stage whose GPU has the fewest KV blocks, whose
                     weights, KV bytes per token and budget are the figures above; else 0 */
} sim_memory;

/* Memory budget and KV capacity of one GPU of deployment su. */
void sim_memory_compute(const sim_setup *su, sim_memory *out /* OUT */);

#endif
