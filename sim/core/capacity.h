/*
 * capacity.h - how much of a model fits on one GPU of a tensor-parallel group:
 * weights, activation peak and reserve, KV-cache capacity, and how many
 * sequences of a given context run at once.
 *
 * Everything comes from the engine's memory model, sim_memory_compute()
 * (memory.h), which is also what sim_batch_simulate() admits sequences by; this
 * file only adds the per-context rule on top of it, so capacity planning and the
 * batch simulation cannot disagree:
 *   blocks_per_seq(C)    = ceil(C / block_size)           (vLLM's paged KV cache)
 *   max_seqs_at_context  = min(max_num_seqs, floor(kv_blocks / blocks_per_seq(C)))
 * and 0 when the engine would not start (fits == 0: the weights do not fit, or
 * one max_model_len sequence does not fit in the KV cache) or C > max_model_len.
 * With windowed layers under vLLM V1's hybrid KV-cache manager, blocks_per_seq(C) is
 * sim_kv_request_blocks(C computed, C slots): the full-attention groups' ceil(C / bs) plus
 * the windowed groups' blocks still in reach of the window (model.h, sim_kv_layout).
 * docs/capacity-planning.md works examples. Pure: no I/O, no allocation.
 */
#ifndef SIM_CAPACITY_H
#define SIM_CAPACITY_H

#include <stdint.h>

#include "engine.h"
#include "hw.h"
#include "memory.h"
#include "model.h"
#include "setup.h"
#include "step.h"

typedef struct sim_capacity {
    sim_memory mem;                 /* the engine's memory budget of one GPU */
    int64_t context_tokens;         /* C, tokens held per sequence */
    int64_t blocks_per_seq;         /* ceil(C / block_size) */
    int64_t max_seqs_by_kv;         /* floor(kv_blocks / blocks_per_seq), before the cap */
    int64_t max_seqs_at_context;    /* the rule above */
    double kv_bytes_per_seq;        /* KV bytes one sequence of C tokens holds (sim_kv_bytes_at) */
    double kv_full_bytes_per_seq;   /* of which the full-attention layers': C x per token */
    double kv_window_bytes_per_seq; /* of which the windowed layers', capped by the window */
    double max_concurrency_max_len; /* kv_blocks / kv_blocks_max_seq: max_model_len requests at
                                       once, as vLLM logs "Maximum concurrency" */
    int fits;                       /* mem.fits: the engine starts */
} sim_capacity;

/*
 * Largest number of sequences holding context_tokens tokens each that the
 * engine runs at once, from an already computed memory budget (the rule at the
 * top of this file). context_tokens must be >= 1 (asserted). Cheap enough to
 * call per sweep point.
 */
int64_t sim_capacity_max_seqs(const sim_memory *mem, const sim_sched_resolved *s,
                              int64_t context_tokens);

/* Whether a step's sequences can be in the KV cache at once (sim_capacity_step_fits). */
typedef struct sim_step_fit {
    int64_t seqs;           /* sequences of the step */
    int64_t blocks;         /* KV blocks they hold after the step: sum of count x
                               sim_kv_request_blocks(context + new tokens) */
    int64_t longest_tokens; /* the longest sequence's context + new tokens */
    int too_long;           /* 1: longest_tokens > max_model_len */
} sim_step_fit;

/*
 * 1 when the engine could run step st: it starts (mem->fits), no sequence is longer than
 * max_model_len, at most max_num_seqs sequences, and their blocks (as the scheduler allocates
 * them, the rule at the top of this file) at most mem->kv_blocks. The figures go to *out.
 * The single-group case agrees with sim_capacity_max_seqs.
 */
int sim_capacity_step_fits(const sim_memory *mem, const sim_sched_resolved *s, const sim_step *st,
                           sim_step_fit *out /* OUT */);

/*
 * Memory budget (sim_memory_compute) and the per-context figures for one GPU of
 * deployment su at su->run->tp. The inputs must be validated and su->sched resolved
 * (sim_sched_resolve); context_tokens >= 1.
 */
void sim_capacity_compute(const sim_setup *su, int64_t context_tokens, sim_capacity *out /* OUT */);

#endif
