/*
 * prefix_cache.c - the V1 block pool with its cache of full blocks (see prefix_cache.h).
 */
#include "prefix_cache.h"

int64_t sim_prefix_buckets(int64_t n_blocks)
{
    int64_t n = 1;
    while (n < n_blocks)
        n *= 2;
    return n;
}

void sim_prefix_init(sim_prefix_pool *p, sim_kv_block *blocks, int32_t *buckets, int64_t n_blocks)
{
    const int64_t nb = sim_prefix_buckets(n_blocks);
    for (int64_t i = 0; i < nb; i++)
        buckets[i] = -1;
    *p = (sim_prefix_pool){.b = blocks,
                           .bucket = buckets,
                           .n_blocks = n_blocks,
                           .mask = (uint64_t)nb - 1,
                           .fresh = 0,
                           .head = -1,
                           .tail = -1,
                           .n_free = n_blocks};
}

static uint64_t key_hash(int64_t owner, int64_t index)
{
    uint64_t z = (uint64_t)owner * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)index;
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

int32_t sim_prefix_lookup(const sim_prefix_pool *p, int64_t owner, int64_t index)
{
    for (int32_t id = p->bucket[key_hash(owner, index) & p->mask]; id >= 0; id = p->b[id].hnext)
        if (p->b[id].owner == owner && p->b[id].index == index)
            return id;
    return -1;
}

/* Takes block id out of the freed part of the free queue. */
static void unlink_free(sim_prefix_pool *p, int32_t id)
{
    sim_kv_block *k = &p->b[id];
    if (k->prev >= 0)
        p->b[k->prev].next = k->next;
    else
        p->head = k->next;
    if (k->next >= 0)
        p->b[k->next].prev = k->prev;
    else
        p->tail = k->prev;
    k->prev = k->next = -1;
    p->n_free--;
}

/* Removes block id's key from its hash chain. */
static void drop_key(sim_prefix_pool *p, int32_t id)
{
    int32_t *link = &p->bucket[key_hash(p->b[id].owner, p->b[id].index) & p->mask];
    while (*link != id)
        link = &p->b[*link].hnext;
    *link = p->b[id].hnext;
    p->b[id].index = -1;
    p->b[id].hnext = -1;
}

void sim_prefix_touch(sim_prefix_pool *p, int32_t id)
{
    if (p->b[id].ref++ == 0)
        unlink_free(p, id);
}

int32_t sim_prefix_alloc(sim_prefix_pool *p, int32_t prev_own)
{
    int32_t id;
    if (p->fresh < p->n_blocks) {
        id = (int32_t)p->fresh++;
        p->b[id] = (sim_kv_block){.index = -1, .prev = -1, .next = -1, .hnext = -1};
        p->n_free--;
    } else if (p->head >= 0) {
        id = p->head;
        unlink_free(p, id);
        if (p->b[id].index >= 0) {
            drop_key(p, id);
            p->evictions++;
        }
    } else {
        return -1;
    }
    p->b[id].ref = 1;
    p->b[id].own_next = prev_own;
    return id;
}

void sim_prefix_offer(sim_prefix_pool *p, int32_t id, int64_t owner, int64_t index)
{
    if (p->b[id].index >= 0 || sim_prefix_lookup(p, owner, index) >= 0)
        return;
    int32_t *head = &p->bucket[key_hash(owner, index) & p->mask];
    p->b[id].owner = owner;
    p->b[id].index = (int32_t)index;
    p->b[id].hnext = *head;
    *head = id;
}

void sim_prefix_release(sim_prefix_pool *p, int32_t id)
{
    sim_kv_block *k = &p->b[id];
    if (--k->ref > 0)
        return;
    k->prev = p->tail;
    k->next = -1;
    if (p->tail >= 0)
        p->b[p->tail].next = id;
    else
        p->head = id;
    p->tail = id;
    p->n_free++;
}
