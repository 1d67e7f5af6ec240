/*
 * sched_v1.h - vLLM's V1 engine serving a workload, simulated request by request
 * and step by step (the requests are workload.h's, their latency statistics
 * serve_stats.h's).
 *
 * The schedule follows vllm/v1/core/sched/scheduler.py (Scheduler.schedule, vLLM
 * 0.8-0.19; docs/engine.md cites the lines):
 *  - one token budget per step (max_num_batched_tokens);
 *  - running requests first, in admission order: each gets the tokens it has not
 *    computed yet (1 for a decode; the rest of its prompt, capped at
 *    long_prefill_token_threshold and at the budget, for a partial prefill);
 *  - a running request that finds too few free KV blocks preempts the last
 *    running request (recompute: its blocks are freed, its computed tokens
 *    reset, and it goes to the front of the waiting queue), until it fits or is
 *    itself the one preempted;
 *  - then, only if no request was preempted in this step, waiting requests in
 *    order while the budget, max_num_seqs and free blocks allow; a waiting prompt
 *    may be scheduled in part (chunked prefill is always on in V1);
 *  - a request samples a token in the step that computes its last known token;
 *    it leaves when it has output_tokens tokens, and its blocks are freed.
 * KV blocks are allocated as tokens arrive: a request holds
 * ceil(computed / block_size) blocks. One block of the pool is vLLM's null block.
 *
 * Prefix caching (vLLM KVCacheManager; docs/engine.md, "Prefix caching"), when it is on and
 * some request shares at least one full block (sim_request.prefix_tokens >= block_size): the
 * blocks are then simulated one by one (prefix_cache.h). A request scheduled with nothing
 * computed (new, or preempted) first takes the longest run of leading full blocks found in
 * the cache, at most (prompt + generated - 1) / block_size of them (the last token is always
 * computed, vLLM's max_cache_hit_length); they count as computed, and a waiting request is
 * admitted only if its new blocks plus the hits nobody held fit in the free blocks. A block's
 * content is cached as soon as it is full of tokens scheduled (vLLM caches at allocation):
 * blocks within prefix_tokens under (prefix_group, index), the others under the request
 * alone (which a preempted request finds again). Blocks are freed last block first to the
 * tail of the free queue; allocations take its head, evicting the least recently freed.
 * Without shared blocks the pool is counted, not simulated: a preempted request then
 * recomputes everything (docs/limits.md).
 *
 * Remote prefill (disaggregated serving, vLLM's KV connectors such as NixlConnector): a request
 * with remote_tokens > 0, when first admitted, takes the blocks of its whole prompt and pulls
 * that KV (xfer_s: WAITING_FOR_REMOTE_KVS) without being scheduled; once it is in place the
 * request computes the rest of its prompt (at least its last token, whose logits vLLM
 * recomputes) and decodes. An engine whose only work is waiting for transfers waits for the
 * first to end (or the next arrival). Not with pipeline stages or shared-prefix caching.
 *
 * Time: a step takes sim_engine_step_wall_s(alpha x roofline + beta_s, host).
 * Requests that arrive during a step are seen by the next one; an idle engine
 * waits for the next arrival. Closed loop: `concurrency` clients each send their
 * next request when the previous one finishes. Pure: no I/O, no allocation; the
 * caller owns every array.
 */
#ifndef SIM_SCHED_V1_H
#define SIM_SCHED_V1_H

#include <stdint.h>

#include "engine.h"
#include "hw.h"
#include "model.h"
#include "prefix_cache.h"
#include "serve_stats.h"
#include "setup.h"
#include "status.h"
#include "step.h"
#include "workload.h"

/* Caller-owned scratch: queue of n_requests + 1 ids, running list of n_requests ids, and
 * optionally (itl != NULL) room for itl_cap ITL entries; the sum of output_tokens is always
 * enough. */
typedef struct sim_serve_scratch {
    int32_t *queue;
    int32_t *running;
    sim_itl_entry *itl;
    int64_t itl_cap;
    /* 0 (default): stretches of identical decode steps are priced without the scheduler, in
     * closed form (decode_run in sched_v1.c: the same decisions, times equal to rounding);
     * 1: every step through the scheduler. */
    int exact_steps;
    /* Optional room for n_requests ids (NULL: none): the decoding requests at the head of the
     * running list are then carried as one aggregate (their count, summed context and when each
     * finishes, a heap here) instead of one by one each step; the same numbers (sched_v1.c,
     * "Decode aggregate"). Off with exact_steps. */
    int32_t *agg_heap;
    /* Prefix caching, when the workload shares blocks (above): room for prefix_cap blocks and
     * sim_prefix_buckets(prefix_cap) buckets; the pool (the KV blocks less the null block)
     * must fit, else the simulation fails naming the size. NULL: none. */
    sim_kv_block *prefix_blocks;
    int32_t *prefix_buckets;
    int64_t prefix_cap;
} sim_serve_scratch;

/* What one step did, for timelines. */
typedef struct sim_serve_step {
    double start_s;         /* when the step was scheduled */
    double wall_s;          /* its duration */
    double gpu_s;           /* alpha x roofline + beta_s */
    double host_s;          /* engine host time */
    int64_t n_seqs;         /* requests scheduled */
    int64_t n_prefill_seqs; /* of which prefilling (more than one token or not sampling) */
    int64_t n_tokens;       /* tokens scheduled */
    int64_t n_prefill_tokens;
    int64_t kv_used_blocks; /* after allocation */
    int64_t kv_blocks;      /* blocks in the pool */
    int64_t n_waiting;      /* arrived requests not running, after scheduling */
    int64_t n_preempted;    /* preemptions in this step */
} sim_serve_step;

/* Called after each step when given; ctx is the caller's. */
typedef void (*sim_serve_observer)(void *ctx, const sim_serve_step *step);

typedef struct sim_serve_result {
    double end_s;          /* last request's finish */
    double roofline_sum_s; /* sum of roofline step times */
    double host_sum_s;     /* sum of host times */
    double busy_s;         /* sum of step wall times */
    double prefill_s;      /* wall time of steps with prefill tokens */
    int64_t n_steps;
    int64_t n_prefill_steps;   /* steps with at least one prefill chunk */
    int64_t preemptions;       /* recompute preemptions */
    int64_t recomputed_tokens; /* tokens prefilled again after preemption */
    int64_t kv_blocks;         /* KV blocks per GPU */
    int64_t kv_capacity_tokens;
    int64_t peak_kv_blocks;
    double peak_kv_frac;
    int64_t queue_peak;   /* most arrived requests waiting at once */
    int64_t running_peak; /* most requests running at once */
    int64_t n_itl;        /* ITL entries written */
    /* Prefix caching (vLLM's prefix cache hit rate = hit / query tokens): prompt and generated
     * tokens of the requests scheduled with nothing computed, those found in the cache, and
     * cached blocks evicted. */
    int64_t prefix_query_tokens;
    int64_t prefix_hit_tokens;
    int64_t prefix_evictions;
    int prefix_cache_simulated; /* 1: the blocks were simulated one by one (shared prefixes) */
    /* Speculative decoding (spec.h): draft tokens verified, and accepted. */
    int64_t spec_verified_tokens;
    int64_t spec_accepted_tokens;
} sim_serve_result;

/* Default cap on steps of one simulation: a bug or an absurd workload stops with an error. */
#define SIM_SERVE_MAX_STEPS SIM_SIM_MAX_STEPS

/*
 * Serves the workload on deployment su on the V1 schedule above. Fails with SIM_ERANGE and a
 * message when a request is malformed (lengths < 1, prompt + output beyond
 * max_model_len, open-loop arrivals not finite, negative or unsorted), when
 * the engine would not start (the weights, or one max_model_len sequence, do not
 * fit), or when the simulation exceeds SIM_SERVE_MAX_STEPS steps.
 */
sim_status sim_serve_simulate(const sim_setup *su, const sim_workload *w, sim_serve_scratch *scr,
                              sim_serve_observer obs, void *obs_ctx,
                              sim_serve_result *out /* OUT */, struct sim_err *err /* OUT */);

/* vLLM's prefix cache hit rate: tokens found over tokens looked up (0 when none). */
static inline double sim_serve_prefix_hit_frac(const sim_serve_result *r)
{
    return r->prefix_query_tokens > 0
               ? (double)r->prefix_hit_tokens / (double)r->prefix_query_tokens
               : 0.0;
}

/* Speculative decoding: draft tokens accepted over those verified (0 when none were). */
static inline double sim_serve_spec_accepted_frac(const sim_serve_result *r)
{
    return r->spec_verified_tokens > 0
               ? (double)r->spec_accepted_tokens / (double)r->spec_verified_tokens
               : 0.0;
}

/* 1 when some request of w shares a full block of block_size tokens (prefix_tokens >=
 * block_size): with prefix caching on, the simulation then needs the scratch's pool. */
int sim_serve_shares_blocks(const sim_workload *w, int64_t block_size);

#endif
