/*
 * prefix_cache.h - the KV blocks of the V1 engine's pool one by one, with the cache of full
 * blocks that prefix caching reuses: vLLM's BlockPool and KVCacheManager
 * (vllm/v1/core/block_pool.py, kv_cache_manager.py, kv_cache_utils.py FreeKVCacheBlockQueue;
 * docs/engine.md, "Prefix caching").
 *
 *  - Every block has a reference count. The free queue holds the blocks nobody references,
 *    least recently freed first: blocks never used come first, a block freed goes to the
 *    tail, an allocation takes the head.
 *  - A full block may carry a key, (owner, index): the content it holds, named by who shares
 *    it (a prefix group, or one request alone) and its position. A keyed block stays keyed
 *    when freed, so a later request with the same content finds it (a hit, taking it out of
 *    the free queue if nobody referenced it); it loses its key when an allocation takes it
 *    from the head of the queue (eviction, least recently used first).
 *  - vLLM may keep two blocks with the same content (computed by two requests at once); here
 *    the second stays unkeyed, so a hit finds the first (sim_prefix_offer).
 *
 * Blocks are numbered 0 .. n_blocks - 1 and taken from the caller's array, those never used
 * only when first allocated (a zero-filled array costs memory only where it is touched).
 * Pure: no I/O, no allocation.
 */
#ifndef SIM_PREFIX_CACHE_H
#define SIM_PREFIX_CACHE_H

#include <stdint.h>

/* One block of the pool (32 bytes). */
typedef struct sim_kv_block {
    int64_t owner; /* key: prefix group (>= 0) or -(request + 1) */
    int32_t index; /* key: block position in the sequence; -1: no key */
    int32_t ref;   /* requests holding it */
    int32_t prev;  /* free queue neighbours (-1: none): prev and next */
    int32_t next;
    int32_t hnext;    /* hash chain (-1: end) */
    int32_t own_next; /* the previous block its allocating request took (-1: none) */
} sim_kv_block;

/* Most blocks a simulated pool may have (docs/limits.md): 512 MiB of blocks at most. */
#define SIM_PREFIX_MAX_BLOCKS (INT64_C(1) << 24)

typedef struct sim_prefix_pool {
    sim_kv_block *b;    /* n_blocks blocks (caller-owned) */
    int32_t *bucket;    /* n_buckets hash chain heads (caller-owned; -1: empty) */
    int64_t n_blocks;   /* 1 .. SIM_PREFIX_MAX_BLOCKS */
    uint64_t mask;      /* n_buckets - 1, n_buckets a power of two */
    int64_t fresh;      /* blocks fresh .. n_blocks - 1 were never used: the queue's head */
    int32_t head, tail; /* the freed part of the free queue (-1: empty) */
    int64_t n_free;     /* blocks in the free queue */
    int64_t evictions;  /* keyed blocks taken by an allocation */
} sim_prefix_pool;

/* Hash buckets for a pool of n blocks: the power of two at or above n. */
int64_t sim_prefix_buckets(int64_t n_blocks);

/* An empty pool over the caller's blocks (contents ignored: a block is set up when first
 * allocated) and buckets (set to empty here, sim_prefix_buckets(n_blocks) of them). */
void sim_prefix_init(sim_prefix_pool *p, sim_kv_block *blocks, int32_t *buckets, int64_t n_blocks);

/* The keyed block of (owner, index), or -1. */
int32_t sim_prefix_lookup(const sim_prefix_pool *p, int64_t owner, int64_t index);

/* One more holder of block id (a hit): out of the free queue if nobody held it. */
void sim_prefix_touch(sim_prefix_pool *p, int32_t id);

/* Takes the head of the free queue (evicting its key), held once, unkeyed; -1 when empty.
 * own_next is set to prev_own. */
int32_t sim_prefix_alloc(sim_prefix_pool *p, int32_t prev_own);

/* Block id, now full, offers its content as (owner, index): keyed unless that key already
 * names a block. */
void sim_prefix_offer(sim_prefix_pool *p, int32_t id, int64_t owner, int64_t index);

/* One holder fewer; a block nobody holds goes to the tail of the free queue, key kept. */
void sim_prefix_release(sim_prefix_pool *p, int32_t id);

#endif
