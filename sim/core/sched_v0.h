/*
 * sched_v0.h - an offline batch simulated step by step: on vLLM's V0 scheduler
 * (vLLM 0.5-0.7 default scheduler), or for a V1 engine through the V1 serve loop
 * of sched_v1.h with every request arriving at t = 0.
 *
 * V0: FCFS prefills under the token and sequence budgets while KV blocks are
 * free above the watermark (a step is either all prefills or all decodes), else
 * one decode step for every running sequence, preempting the newest by
 * recompute when a sequence finds no free block; with chunked prefill, decodes
 * first and then prefill chunks under the remaining token budget, in one mixed
 * step. Runs of identical decode steps are summed in closed form (docs/model.md,
 * "Decode runs"). docs/engine.md, "V0". Pure: no I/O, no allocation; the caller
 * owns the scratch.
 */
#ifndef SIM_SCHED_V0_H
#define SIM_SCHED_V0_H

#include <stdint.h>

#include "engine.h"
#include "hw.h"
#include "model.h"
#include "ops.h"
#include "setup.h"
#include "status.h"
#include "workload.h"

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
    /* V1 engines: the batch as requests arriving together, and the queues. */
    sim_request req[SIM_BATCH_MAX_SEQS];
    int32_t v1_queue[SIM_BATCH_MAX_SEQS + 1];
    int32_t v1_running[SIM_BATCH_MAX_SEQS];
    int32_t v1_heap[SIM_BATCH_MAX_SEQS]; /* the decode aggregate's (sim_serve_scratch.agg_heap) */
} sim_batch_work;

/*
 * Simulates the batch on deployment su and sums the predicted step times. Fails (SIM_ERANGE with
 * a message) when the model does not fit, a prompt is longer than
 * max_model_len, or one sequence cannot fit in the KV cache at all.
 */
sim_status sim_batch_simulate(const sim_setup *su, const sim_batch *b, sim_batch_work *work,
                              sim_batch_result *out /* OUT */, struct sim_err *err /* OUT */);

/*
 * The same simulation with every step of the V0 engines timed one by one: the runs of
 * identical decode steps that sim_batch_simulate sums in closed form (docs/model.md,
 * "Decode runs") are stepped here. Slower; tests compare the two.
 */
sim_status sim_batch_simulate_stepwise(const sim_setup *su, const sim_batch *b,
                                       sim_batch_work *work, sim_batch_result *out /* OUT */,
                                       struct sim_err *err /* OUT */);

#endif
