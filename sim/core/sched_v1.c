/*
 * sched_v1.c - the V1 engine serving a workload step by step (see sched_v1.h;
 * docs/engine.md, "V1").
 */
#include "sched_v1.h"

#include <math.h>

#include "err.h"
#include "memory.h"
#include "pipeline.h"
#include "spec.h"

/* Largest block size the decode aggregate counts blocks for (its phase table). */
#define SIM_AGG_MAX_BLOCK_SIZE 256

/* Everything one simulation carries between steps. */
typedef struct serve_state {
    sim_setup su; /* the run's inputs (setup.h) */
    const sim_workload *w;
    sim_serve_scratch *scr;
    sim_serve_result *out;
    double now_s;
    const sim_kv_layout *kv; /* the pool's groups (windowed layers free blocks) */
    int64_t free_blocks, pool_blocks;
    int64_t q_head, q_len, q_cap; /* waiting queue: ring buffer of ids */
    int64_t n_running;
    int64_t next_arrival; /* open loop: next request not yet arrived; closed: next to send */
    int64_t next_admit;   /* closed loop: next sent request the engine has not seen yet */
    int64_t done;
    int64_t step_preempted;
    int64_t batch; /* id of the batch being scheduled (pipeline stages: batches in flight) */
    int64_t work;  /* operations so far (SIM_SIM_MAX_WORK) */
    /* The decode aggregate ("Decode aggregate" below): running[0 .. dlen) holds its nd members
     * in running order and the holes finished ones left; the explicit requests (the tail)
     * follow, n_running - nd of them. A member's computed and generated are stored minus kd. */
    int agg;                            /* 1: this simulation may aggregate */
    int64_t dlen, nd, kd, sumc;         /* sumc: the members' computed tokens, summed */
    int64_t groups, bs;                 /* full-attention KV groups, block size */
    int64_t heap_n;                     /* members in scr->agg_heap, by finish_key */
    sim_step_prep prep;                 /* without pipeline stages: the step cost's constants */
    sim_step_memo memo;                 /* and its operators other than attention by (T, Se) */
    int64_t ph[SIM_AGG_MAX_BLOCK_SIZE]; /* members by stored computed mod bs */
    sim_prefix_pool *pc;                /* prefix caching with shared blocks: the pool, else NULL */
    sim_prefix_pool pool;
    const sim_spec *sp;       /* speculative decoding, else NULL */
    int remote;               /* some request's prompt KV comes from a remote prefill */
    int64_t lookahead;        /* slots allocated beyond the tokens scheduled (EAGLE's k) */
    int64_t emit_n, emit_ctx; /* this step: requests that sample, and their contexts after it */
} serve_state;

/*
 * Prefix caching (sched_v1.h): the key of block j of request r, the blocks it releases, the
 * hits it would find, and the blocks it allocates and offers to the cache.
 */
static int64_t block_owner(const serve_state *x, const sim_request *r, int64_t j)
{
    if (r->prefix_session || (j + 1) * x->bs <= r->prefix_tokens)
        return r->prefix_group;
    return -(int64_t)(r - x->w->req) - 1;
}

/* Frees request r's blocks (vLLM KVCacheManager.free: last block first): its own, newest
 * first, then its hits; keys stay for later hits. */
static void release_blocks(serve_state *x, sim_request *r)
{
    if (!x->pc) {
        x->free_blocks += r->blocks;
        r->blocks = 0;
        return;
    }
    for (int32_t id = r->own_head; id >= 0;) {
        const int32_t older = x->pc->b[id].own_next;
        sim_prefix_release(x->pc, id);
        id = older;
    }
    for (int64_t j = r->hit_blocks - 1; j >= 0; j--)
        sim_prefix_release(x->pc, sim_prefix_lookup(x->pc, block_owner(x, r, j), j));
    r->own_head = -1;
    r->blocks = r->hit_blocks = r->hashed = 0;
    x->free_blocks = x->pc->n_free;
}

/* Leading blocks of request r (nothing computed) found in the cache, at most
 * (tokens known - 1) / bs (vLLM get_computed_blocks' max_cache_hit_length); *idle: those of
 * them nobody holds (in the free queue: taking them uses free blocks). */
static int64_t cache_hits(const serve_state *x, const sim_request *r, int64_t *idle)
{
    int64_t max_hit = (r->prompt_tokens + r->generated - 1) / x->bs;
    /* A conversation's new turn looks up the history it resends, no further (its group's
     * later blocks are another turn's); after a preemption, its own blocks. */
    if (r->prefix_session && r->generated == 0 && r->prefix_tokens / x->bs < max_hit)
        max_hit = r->prefix_tokens / x->bs;
    int64_t h = 0;
    *idle = 0;
    for (; h < max_hit; h++) {
        const int32_t id = sim_prefix_lookup(x->pc, block_owner(x, r, h), h);
        if (id < 0)
            break;
        *idle += x->pc->b[id].ref == 0;
    }
    return h;
}

/* Request r takes the h cache hits found by cache_hits. */
static void take_hits(serve_state *x, sim_request *r, int64_t h)
{
    for (int64_t j = 0; j < h; j++)
        sim_prefix_touch(x->pc, sim_prefix_lookup(x->pc, block_owner(x, r, j), j));
    r->hit_blocks = r->hashed = r->blocks = h;
    r->computed = h * x->bs;
    x->free_blocks = x->pc->n_free;
    const int64_t known = r->prompt_tokens + r->generated;
    x->out->prefix_query_tokens += known;
    x->out->prefix_hit_tokens += r->computed;
    if (r->first_sched_s < 0.0)
        r->cached_tokens = r->computed;
}

/* Request r, about to compute up to `upto` tokens, allocates need blocks from the head of the
 * free queue and offers the blocks those tokens fill to the cache (vLLM allocate_slots and
 * cache_blocks, at scheduling time). */
static void pool_allocate(serve_state *x, sim_request *r, int64_t need, int64_t upto)
{
    for (int64_t i = 0; i < need; i++)
        r->own_head = sim_prefix_alloc(x->pc, r->own_head);
    x->free_blocks = x->pc->n_free;
    const int64_t known = r->prompt_tokens + r->generated;
    const int64_t full = (upto < known ? upto : known) / x->bs;
    /* The newest block is block r->blocks + need - 1; walk back to the first to offer. */
    int64_t j = r->blocks + need - 1;
    int32_t id = r->own_head;
    while (j >= full && id >= 0) {
        id = x->pc->b[id].own_next;
        j--;
    }
    for (; j >= r->hashed && id >= 0; j--) {
        sim_prefix_offer(x->pc, id, block_owner(x, r, j), j);
        id = x->pc->b[id].own_next;
    }
    if (full > r->hashed)
        r->hashed = full;
}

/* The explicit requests of the running list: after the aggregate's region. */
static int32_t *tail(const serve_state *x) { return x->scr->running + x->dlen; }
static int64_t n_tail(const serve_state *x) { return x->n_running - x->nd; }

static void q_push_back(serve_state *x, int32_t id)
{
    x->scr->queue[(x->q_head + x->q_len) % x->q_cap] = id;
    x->q_len++;
}

static void q_push_front(serve_state *x, int32_t id)
{
    x->q_head = (x->q_head + x->q_cap - 1) % x->q_cap;
    x->scr->queue[x->q_head] = id;
    x->q_len++;
}

static int32_t q_front(const serve_state *x) { return x->scr->queue[x->q_head]; }

static void q_pop_front(serve_state *x)
{
    x->q_head = (x->q_head + 1) % x->q_cap;
    x->q_len--;
}

/*
 * Requests that have reached the engine join the waiting queue. Open loop: those that arrived
 * by now. Closed loop: a client sends its next request when it receives the previous one's
 * last token, and vLLM's engine has by then already scheduled its next step: the EngineCore
 * busy loop (vllm/v1/engine/core.py, run_busy_loop) puts a step's outputs on the output queue,
 * drains the input queue without waiting and schedules the next step, all before the output
 * has reached the client and a new request could have come back. So a request sent at the end
 * of a step (arrival_s == that time) is seen by the step after next: those sent strictly
 * before the time the step is scheduled. That time (seen_s) is now, except with async
 * scheduling, where the engine keeps one step scheduled ahead (EngineCore.step_with_batch_queue,
 * a queue of two batches): the step about to be simulated was scheduled when the previous one
 * started. An idle engine blocks on its input queue (idle != 0) and takes a request as soon as
 * it comes (arrival_s <= seen_s).
 */
static void admit_arrivals(serve_state *x, double seen_s, int idle)
{
    const sim_workload *w = x->w;
    if (w->concurrency > 0) {
        while (x->next_admit < x->next_arrival &&
               (w->req[x->next_admit].arrival_s < seen_s ||
                (idle && w->req[x->next_admit].arrival_s <= seen_s)))
            q_push_back(x, (int32_t)x->next_admit++);
        return;
    }
    while (x->next_arrival < w->n_requests && w->req[x->next_arrival].arrival_s <= seen_s)
        q_push_back(x, (int32_t)x->next_arrival++);
}

/* An idle engine (nothing running or waiting): the time the next request reaches it, and that
 * request (and any sent at the same time) joins the queue. 0 when none is on its way. */
static int wait_for_arrival(serve_state *x)
{
    const sim_workload *w = x->w;
    int64_t next = w->concurrency > 0 ? x->next_admit : x->next_arrival;
    if (next >= (w->concurrency > 0 ? x->next_arrival : w->n_requests))
        return 0;
    if (w->req[next].arrival_s > x->now_s)
        x->now_s = w->req[next].arrival_s;
    admit_arrivals(x, x->now_s, 1);
    return 1;
}

/* Closed loop: a client sends its next request at time t. */
static void send_next(serve_state *x, double t)
{
    const sim_workload *w = x->w;
    if (w->concurrency <= 0 || x->next_arrival >= w->n_requests)
        return;
    w->req[x->next_arrival++].arrival_s = t; /* admit_arrivals lets the engine see it */
}

/* A running request rides a batch still in flight (pipeline stages only). */
static int in_flight(const serve_state *x, const sim_request *r)
{
    return r->sched > 0 && r->batch != x->batch;
}

/* Recompute preemption of the last running request (vLLM: self.running.pop()); with batches in
 * flight, of the last one not in flight (at least the request being scheduled is not). */
static int32_t preempt_last(serve_state *x)
{
    int32_t *running = tail(x);
    const int64_t n = n_tail(x);
    int64_t j = n - 1;
    while (j > 0 && in_flight(x, &x->w->req[running[j]]))
        j--;
    int32_t id = running[j];
    for (int64_t k = j; k + 1 < n; k++)
        running[k] = running[k + 1];
    x->n_running--;
    sim_request *r = &x->w->req[id];
    release_blocks(x, r);
    r->computed = 0;
    r->sched = 0;
    r->spec_sched = 0;
    r->n_preemptions++;
    q_push_front(x, id);
    x->out->preemptions++;
    x->step_preempted++;
    return id;
}

/* Tokens request r would compute this step before the budget: the rest of what it knows,
 * capped at long_prefill_token_threshold. */
static int64_t wanted_tokens(const serve_state *x, const sim_request *r)
{
    int64_t want = r->prompt_tokens + r->generated - r->computed;
    /* Speculative decoding: a decoding request verifies its k draft tokens with its last one
     * (num_tokens_with_spec - num_computed_tokens), within max_model_len. */
    if (x->sp && want == 1 && r->generated > 0) {
        const int64_t room = x->su.sched->max_model_len - r->computed;
        want = 1 + x->sp->k;
        if (want > room)
            want = room > 1 ? room : 1;
    }
    const int64_t thr = x->su.engine->long_prefill_threshold;
    if (thr > 0 && want > thr)
        want = thr;
    return want;
}

/*
 * Blocks request r must take from the pool (negative: returns) to hold slots for tokens tokens:
 * vLLM's allocate_slots first frees the blocks its windowed layers no longer reach, then
 * allocates (sim_kv_request_blocks). Without windowed layers: ceil(tokens / bs) - blocks held.
 */
static int64_t blocks_needed(const serve_state *x, const sim_request *r, int64_t tokens)
{
    tokens += x->lookahead;
    const int64_t need =
        sim_kv_request_blocks(x->kv, x->su.sched->block_size, r->computed, tokens) - r->blocks;
    /* With speculative decoding a request holds the blocks of its rejected slots too. */
    return x->sp && need < 0 && x->kv->n_window_groups == 0 ? 0 : need;
}

/* Adds a scheduled request to the step: decodes are summed (context clamped to the sliding
 * window, where attention stops growing), chunks are grouped. */
static void add_to_step(serve_state *x, sim_step *st, const sim_request *r, int64_t *dec_n,
                        int64_t *dec_ctx)
{
    if (r->spec_sched > 0) { /* a verify: 1 + spec tokens at the request's context */
        sim_step_add_group(st, 1, r->sched, r->computed, 1);
        x->emit_n++;
        x->emit_ctx += r->computed + r->sched;
        return;
    }
    const int emits = r->computed + r->sched == r->prompt_tokens + r->generated;
    if (emits) {
        x->emit_n++;
        x->emit_ctx += r->computed + r->sched;
    }
    if (r->sched == 1 && emits) {
        int64_t c = r->computed;
        /* Only when every layer is windowed does a longer context cost no more. */
        const int64_t W = x->su.model->full_attn_layers == 0 ? x->su.model->sliding_window : 0;
        if (W > 0 && c > W - 1)
            c = W - 1;
        (*dec_n)++;
        *dec_ctx += c;
        return;
    }
    sim_step_add_group(st, 1, r->sched, r->computed, emits);
}

/* n decodes whose contexts sum to ctx, as at most two groups of consecutive contexts (the
 * exact total): how schedule() and decode_run() both put decodes into a step. */
static void add_decodes(sim_step *st, int64_t n, int64_t ctx)
{
    if (n <= 0)
        return;
    const int64_t q = ctx / n, rem = ctx % n;
    if (n - rem > 0)
        sim_step_add_group(st, n - rem, 1, q, 1);
    if (rem > 0)
        sim_step_add_group(st, rem, 1, q + 1, 1);
}

/* Puts want tokens of request r, with the need blocks they take, into this step's batch. */
static void take(serve_state *x, sim_request *r, int64_t need, int64_t want, int64_t *budget)
{
    if (x->pc)
        pool_allocate(x, r, need, r->computed + want);
    else
        x->free_blocks -= need;
    r->blocks += need;
    r->sched = want;
    r->spec_sched =
        x->sp && want > 1 && r->generated > 0 && r->computed + 1 == r->prompt_tokens + r->generated
            ? (int32_t)(want - 1)
            : 0;
    r->batch = x->batch;
    *budget -= want;
}

/*
 * Decode aggregate (issue 26; docs/engine.md, "Decode aggregate"). At high concurrency the
 * batch changes every step (a request finishes, another is admitted), so decode runs are short,
 * yet most running requests just decode: each step they take one token, a block when theirs are
 * full, sample one token, and leave when it is their last. Requests at the head of the running
 * list that do only that are carried as one aggregate: their number nd, their summed context
 * sumc, a count of them per block phase (ph) and a heap of when each finishes. A step then
 * costs the explicit requests behind them plus the members that finish, not all running
 * requests. The aggregate heads the list, so vLLM's scheduler would reach its members first
 * and preempt them last: while the budget holds nd tokens and the free blocks hold the blocks
 * they start (agg_fits), no member can be refused or preempted (a request behind them preempts
 * from the end and never past itself). Otherwise, and before anything that reads the members
 * one by one, agg_flush writes them back. The numbers are those of scheduling each request
 * (tests/test_serve.c compares them with exact_steps on random workloads).
 */

/* The phase whose members start a block this step: actual computed = stored + kd = 0 mod bs. */
static int64_t agg_phase(const serve_state *x) { return (x->bs - x->kd % x->bs) % x->bs; }

/* When a member's last token is sampled: at the end of the aggregate step after which kd
 * reaches output_tokens - stored generated. */
static int64_t finish_key(const sim_request *r) { return r->output_tokens - r->generated; }

static int heap_less(const serve_state *x, int32_t a, int32_t b)
{
    return finish_key(&x->w->req[a]) < finish_key(&x->w->req[b]);
}

static void heap_push(serve_state *x, int32_t id)
{
    int32_t *h = x->scr->agg_heap;
    int64_t i = x->heap_n++;
    while (i > 0 && heap_less(x, id, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = id;
}

static int32_t heap_pop(serve_state *x)
{
    int32_t *h = x->scr->agg_heap;
    const int32_t top = h[0], last = h[--x->heap_n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= x->heap_n)
            break;
        if (c + 1 < x->heap_n && heap_less(x, h[c + 1], h[c]))
            c++;
        if (!heap_less(x, h[c], last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (x->heap_n > 0)
        h[i] = last;
    return top;
}

static int64_t mod_bs(const serve_state *x, int64_t v) { return ((v % x->bs) + x->bs) % x->bs; }

/* KV blocks a request holds for computed tokens (full-attention groups only). */
static int64_t held_blocks(const serve_state *x, int64_t computed)
{
    return x->groups * ((computed + x->bs - 1) / x->bs);
}

/* The budget and the free blocks hold every member this step (else agg_flush first). */
static int agg_fits(const serve_state *x)
{
    return x->nd <= x->su.sched->max_num_batched_tokens &&
           x->groups * x->ph[agg_phase(x)] <= x->free_blocks;
}

/* After a step that ended at t: every member computed and sampled a token; those for which it
 * was the last finish (finish_step's rules) and leave a hole. Returns the members' ITL tokens
 * (each sampled its previous token at the end of the previous step). */
static double agg_finish(serve_state *x, double t)
{
    const double same = (double)x->nd;
    x->kd++;
    x->sumc += x->nd;
    sim_request *req = x->w->req;
    while (x->heap_n > 0 && finish_key(&req[x->scr->agg_heap[0]]) <= x->kd) {
        sim_request *r = &req[heap_pop(x)];
        x->ph[mod_bs(x, r->computed)]--;
        r->computed += x->kd;
        r->generated += x->kd;
        x->sumc -= r->computed;
        x->nd--;
        x->n_running--;
        r->last_token_s = t;
        r->finish_s = t;
        x->free_blocks += held_blocks(x, r->computed);
        r->blocks = 0;
        r->sched = -1; /* a hole in the aggregate's region */
        x->done++;
        send_next(x, t);
    }
    return same;
}

/* After a step that ended at t: the explicit requests at the tail's head that have just sampled
 * a token and will only decode join the aggregate. */
static void agg_join(serve_state *x, double t)
{
    sim_request *req = x->w->req;
    while (n_tail(x) > 0) {
        sim_request *r = &req[x->scr->running[x->dlen]];
        if (!(r->sched == 0 && r->generated >= 1 && r->generated < r->output_tokens &&
              r->computed >= r->prompt_tokens &&
              r->computed + 1 == r->prompt_tokens + r->generated && r->last_token_s == t &&
              r->blocks == held_blocks(x, r->computed)))
            return;
        x->sumc += r->computed;
        r->computed -= x->kd;
        r->generated -= x->kd;
        x->ph[mod_bs(x, r->computed)]++;
        heap_push(x, x->scr->running[x->dlen]);
        x->nd++;
        x->dlen++;
    }
}

/* Writes the members back as explicit requests, in running order (their last token came at
 * the end of the previous step, last_s), and closes the holes. */
static void agg_flush(serve_state *x, double last_s)
{
    if (x->dlen == 0)
        return;
    sim_request *req = x->w->req;
    int32_t *running = x->scr->running;
    int64_t k = 0;
    for (int64_t i = 0; i < x->dlen; i++) {
        sim_request *r = &req[running[i]];
        if (r->sched == -1) {
            r->sched = 0;
            continue;
        }
        r->computed += x->kd;
        r->generated += x->kd;
        r->blocks = held_blocks(x, r->computed);
        r->last_token_s = last_s;
        running[k++] = running[i];
    }
    const int64_t nt = n_tail(x);
    for (int64_t i = 0; i < nt; i++)
        running[k + i] = running[x->dlen + i];
    for (int64_t p = 0; p < x->bs; p++)
        x->ph[p] = 0;
    x->dlen = x->nd = x->sumc = x->heap_n = 0;
}

/*
 * Schedules one step (sched_v1.h) into st. Returns the number of requests scheduled; the
 * scheduled ones have sched > 0.
 */
static int64_t schedule(serve_state *x, sim_step *st, int64_t *n_prefill_seqs,
                        int64_t *n_prefill_tokens)
{
    const sim_sched_resolved *s = x->su.sched;
    sim_request *req = x->w->req;
    int32_t *running = tail(x);
    int64_t budget = s->max_num_batched_tokens;
    int64_t dec_n = 0, dec_ctx = 0, n_sched = 0;
    x->step_preempted = 0;
    x->emit_n = x->emit_ctx = 0;

    /* The aggregate first, as it heads the running list: one token each, and a block each for
     * those whose blocks are full (agg_fits has checked that the budget and the free blocks
     * hold them all, so none is preempted). */
    if (x->nd > 0) {
        x->free_blocks -= x->groups * x->ph[agg_phase(x)];
        budget -= x->nd;
        n_sched += x->nd;
        dec_n += x->nd;
        dec_ctx += x->sumc;
    }
    for (int64_t i = 0; i < n_tail(x) && budget > 0; i++) {
        sim_request *r = &req[running[i]];
        if (in_flight(x, r)) /* vLLM: num_new_tokens == 0 until its batch comes back */
            continue;
        if (r->ready_s > x->now_s) /* its remote KV is still on its way */
            continue;
        int64_t want = wanted_tokens(x, r);
        if (want > budget)
            want = budget;
        if (want <= 0)
            continue;
        int64_t need = blocks_needed(x, r, r->computed + want);
        /* vLLM: preempt from the end until the request fits, or until it is itself the one
         * preempted (compared by id: preempt_last shifts the requests after the victim, so
         * with batches in flight behind it running[i] is then another request). */
        const int32_t self = running[i];
        int ok = 1;
        while (need > x->free_blocks) {
            if (preempt_last(x) == self) {
                ok = 0;
                break;
            }
        }
        if (!ok)
            break;
        take(x, r, need, want, &budget);
        n_sched++;
    }

    /* Waiting requests, only when nothing was preempted in this step. */
    while (x->step_preempted == 0 && x->q_len > 0 && budget > 0 && x->n_running < s->max_num_seqs) {
        int32_t id = q_front(x);
        sim_request *r = &req[id];
        /* Prefix caching: the hits count as computed and held while the request is weighed;
         * the hits nobody holds leave the free blocks when taken (vLLM allocate_slots'
         * num_evictable_computed_blocks). */
        if (x->remote && r->remote_tokens > 0 && r->n_preemptions == 0 && r->generated == 0) {
            /* Remote prefill: the prompt's blocks now, the KV pulled in xfer_s, no compute this
             * step (vLLM allocates, then waits in WAITING_FOR_REMOTE_KVS). */
            const int64_t need = blocks_needed(x, r, r->prompt_tokens);
            if (need > x->free_blocks)
                break;
            q_pop_front(x);
            if (r->first_sched_s < 0.0)
                r->first_sched_s = x->now_s;
            x->free_blocks -= need;
            r->blocks += need;
            r->computed = r->remote_tokens;
            r->ready_s = x->now_s + r->xfer_s;
            running[n_tail(x)] = id;
            x->n_running++;
            continue;
        }
        int64_t hits = 0, idle = 0;
        if (x->pc) {
            hits = cache_hits(x, r, &idle);
            r->computed = hits * x->bs;
            r->blocks = hits;
        }
        int64_t want = wanted_tokens(x, r);
        if (want > budget)
            want = budget;
        int64_t need = blocks_needed(x, r, r->computed + want);
        int fits = need + idle <= x->free_blocks;
        /* vLLM 0.19 (scheduler_reserve_full_isl): the whole current sequence must fit; a
         * windowed group's share is capped at what one request may hold at most
         * (SlidingWindowSpec.max_admission_blocks_per_request). */
        if (fits && x->su.engine->admit_full_sequence) {
            const int64_t seq = r->prompt_tokens + r->generated;
            int64_t full = blocks_needed(x, r, seq) + r->blocks;
            const int64_t cap =
                sim_kv_max_request_blocks(x->kv, s->block_size, s->max_num_batched_tokens, seq);
            fits = (full < cap ? full : cap) - r->blocks + idle <= x->free_blocks;
        }
        if (!fits) {
            r->computed = r->blocks = 0; /* (waiting requests hold nothing) */
            break;
        }
        if (x->pc)
            take_hits(x, r, hits);
        q_pop_front(x);
        if (r->first_sched_s < 0.0) /* its first admission ends its queueing */
            r->first_sched_s = x->now_s;
        running[n_tail(x)] = id;
        x->n_running++;
        if (r->generated > 0 && r->prompt_tokens + r->generated - 1 > r->computed)
            x->out->recomputed_tokens += r->prompt_tokens + r->generated - 1 - r->computed;
        take(x, r, need, want, &budget);
        n_sched++;
    }

    *n_prefill_seqs = 0;
    *n_prefill_tokens = 0;
    for (int64_t i = 0; i < n_tail(x); i++) {
        const sim_request *r = &req[running[i]];
        if (r->sched <= 0 || r->batch != x->batch)
            continue;
        int decode = (r->sched == 1 || r->spec_sched > 0) &&
                     r->computed + 1 == r->prompt_tokens + r->generated && r->generated > 0 &&
                     r->computed >= r->prompt_tokens;
        if (!decode) {
            (*n_prefill_seqs)++;
            *n_prefill_tokens += r->sched;
        }
        add_to_step(x, st, r, &dec_n, &dec_ctx);
    }
    add_decodes(st, dec_n, dec_ctx);
    return n_sched;
}

/*
 * After a step (the batch `batch`) that ended at t: its requests gain their tokens; those that
 * computed everything they know sample one; finished ones leave and free their blocks.
 * prev_end: when the previous step ended (NaN with batches in flight: every ITL is its own).
 */
static void finish_step(serve_state *x, double t, double wall_s, int64_t batch, double prev_end)
{
    sim_request *req = x->w->req;
    int32_t *running = tail(x);
    sim_serve_scratch *scr = x->scr;
    double same = 0.0; /* tokens whose previous token came at the end of the previous step */
    if (x->nd > 0)
        same += agg_finish(x, t);
    int64_t k = 0;
    const int64_t n = n_tail(x);
    for (int64_t i = 0; i < n; i++) {
        int32_t id = running[i];
        sim_request *r = &req[id];
        if (r->sched > 0 && r->batch == batch) {
            int64_t extra = 0; /* speculative tokens kept beyond the one sampled */
            if (r->spec_sched > 0) {
                /* Verified: the accepted drafts and the last token enter the KV cache, the
                 * rejected slots are dropped (vLLM num_computed_tokens -= rejected). */
                const uint64_t key = (uint64_t)(r - req) * UINT64_C(0x9E3779B97F4A7C15) ^
                                     (uint64_t)r->generated * UINT64_C(0xD1B54A32D192ED03);
                extra = sim_spec_accepted(x->sp, r->spec_sched, key);
                r->computed += 1 + extra;
                r->spec_sched = 0;
                x->out->spec_verified_tokens += r->sched - 1;
                x->out->spec_accepted_tokens += extra;
            } else {
                r->computed += r->sched;
            }
            r->sched = 0;
            if (r->computed == r->prompt_tokens + r->generated + extra) {
                r->generated += 1 + extra;
                if (r->generated > r->output_tokens)
                    r->generated = r->output_tokens;
                if (r->generated == 1) {
                    r->first_token_s = t;
                } else if (scr->itl) {
                    if (r->last_token_s == prev_end) {
                        same += 1.0;
                    } else if (x->out->n_itl < scr->itl_cap) {
                        scr->itl[x->out->n_itl++] = (sim_itl_entry){t - r->last_token_s, 1.0};
                    }
                }
                r->last_token_s = t;
            }
        }
        if (r->generated >= r->output_tokens) {
            r->finish_s = t;
            release_blocks(x, r);
            x->done++;
            send_next(x, t);
            continue;
        }
        running[k++] = id;
    }
    x->n_running = x->nd + k;
    if (same > 0.0 && scr->itl && x->out->n_itl < scr->itl_cap)
        scr->itl[x->out->n_itl++] = (sim_itl_entry){wall_s, same};
}

static sim_status check_workload(const sim_workload *w, const sim_sched_resolved *s,
                                 const sim_serve_scratch *scr, struct sim_err *err)
{
    if (w->n_requests < 1 || w->n_requests > INT32_MAX - 1 || w->concurrency < 0 || !scr ||
        !scr->queue || !scr->running) {
        sim_errf(err, "workload: needs 1 to %d requests and scratch for them", INT32_MAX - 1);
        return SIM_EINVAL;
    }
    for (int64_t i = 0; i < w->n_requests; i++) {
        const sim_request *r = &w->req[i];
        if (r->prompt_tokens < 1 || r->output_tokens < 1) {
            sim_errf(err, "request %lld: prompt_tokens and output_tokens must be >= 1",
                     (long long)(i + 1));
            return SIM_ERANGE;
        }
        if (r->remote_tokens < 0 || r->remote_tokens >= r->prompt_tokens ||
            !(isfinite(r->xfer_s) && r->xfer_s >= 0.0)) {
            sim_errf(err,
                     "request %lld: remote_tokens must be in [0, prompt_tokens) and xfer_s a "
                     "finite time >= 0",
                     (long long)(i + 1));
            return SIM_ERANGE;
        }
        if (r->prefix_tokens < 0 || r->prefix_tokens > r->prompt_tokens || r->prefix_group < 0) {
            sim_errf(err,
                     "request %lld: prefix_tokens must be in [0, prompt_tokens] and prefix_group "
                     ">= 0",
                     (long long)(i + 1));
            return SIM_ERANGE;
        }
        if (r->prompt_tokens > s->max_model_len - r->output_tokens) {
            sim_errf(err,
                     "request %lld: prompt_tokens %lld + output_tokens %lld exceed "
                     "max_model_len = %lld",
                     (long long)(i + 1), (long long)r->prompt_tokens, (long long)r->output_tokens,
                     (long long)s->max_model_len);
            return SIM_ERANGE;
        }
        if (w->concurrency == 0 && (!isfinite(r->arrival_s) || r->arrival_s < 0.0 ||
                                    (i > 0 && r->arrival_s < w->req[i - 1].arrival_s))) {
            sim_errf(err,
                     "request %lld: arrival_s must be finite, >= 0 and not before the "
                     "previous request's",
                     (long long)(i + 1));
            return SIM_ERANGE;
        }
    }
    return SIM_OK;
}

/* The step and work limits (docs/limits.md): SIM_ERANGE once out->n_steps or the work
 * reaches its limit. */
static sim_status check_step_limit(const serve_state *x, struct sim_err *err)
{
    if (x->work >= SIM_SIM_MAX_WORK) {
        sim_errf(err,
                 "scheduler: more than %lld operations in %lld steps (%lld of %lld requests "
                 "done); the simulation stops there (docs/limits.md)",
                 (long long)SIM_SIM_MAX_WORK, (long long)x->out->n_steps, (long long)x->done,
                 (long long)x->w->n_requests);
        return SIM_ERANGE;
    }
    if (x->out->n_steps < SIM_SERVE_MAX_STEPS)
        return SIM_OK;
    sim_errf(err,
             "scheduler: more than %lld steps (%lld of %lld requests done); the simulation stops "
             "there (docs/limits.md)",
             (long long)SIM_SERVE_MAX_STEPS, (long long)x->done, (long long)x->w->n_requests);
    return SIM_ERANGE;
}

/* Work waits but nothing could be scheduled (no batch in flight to wait for either). */
static sim_status stuck(const serve_state *x, struct sim_err *err)
{
    sim_errf(err,
             "scheduler: no request could be scheduled at step %lld (%lld running, %lld "
             "waiting, %lld free blocks)",
             (long long)x->out->n_steps, (long long)x->n_running, (long long)x->q_len,
             (long long)x->free_blocks);
    return SIM_EINVAL;
}

/* The run's end time and peak KV share, once every request is done. */
static sim_status end_run(serve_state *x)
{
    x->out->end_s = x->now_s;
    x->out->prefix_evictions = x->pc ? x->pc->evictions : 0;
    x->out->peak_kv_frac =
        x->pool_blocks > 0 ? (double)x->out->peak_kv_blocks / (double)x->pool_blocks : 0.0;
    return SIM_OK;
}

/* Statistics of a scheduled step; the observer's record when one is given. */
/* A step's peaks: KV blocks in use, the waiting queue, the running requests. Returns the
 * blocks in use. */
static int64_t note_peaks(serve_state *x)
{
    sim_serve_result *out = x->out;
    const int64_t used = x->pool_blocks - x->free_blocks;
    if (used > out->peak_kv_blocks)
        out->peak_kv_blocks = used;
    if (x->q_len > out->queue_peak)
        out->queue_peak = x->q_len;
    if (x->n_running > out->running_peak)
        out->running_peak = x->n_running;
    return used;
}

static void count_step(serve_state *x, const sim_memory *mem, const sim_step_cost *c, double host,
                       double busy, double obs_wall, int64_t n_sched, int64_t n_pf_seqs,
                       int64_t n_pf_tokens, sim_serve_observer obs, void *obs_ctx)
/* busy: the step's duration counted as busy (and prefill) time; with batches in flight 0
 * (serve_pipeline counts it as batches come back). obs_wall: the observer's duration (the
 * step's, or the batch's latency). */
{
    sim_serve_result *out = x->out;
    const int64_t used = note_peaks(x);
    out->n_steps++;
    x->work += n_sched + SIM_SIM_STAGE_WORK * (x->su.run->pp > 1 ? x->su.run->pp : 1);
    out->roofline_sum_s += c->roofline_s;
    out->host_sum_s += host;
    out->busy_s += busy;
    if (n_pf_seqs > 0) {
        out->n_prefill_steps++;
        out->prefill_s += busy;
    }
    if (obs) {
        sim_serve_step info = {x->now_s, obs_wall,       c->step_s,          host,
                               n_sched,  n_pf_seqs,      (int64_t)c->tokens, n_pf_tokens,
                               used,     mem->kv_blocks, x->q_len,           x->step_preempted};
        obs(obs_ctx, &info);
    }
}

/*
 * With pipeline stages: vLLM V1's batch queue (vllm/v1/engine/core.py step_with_batch_queue;
 * docs/engine.md, "Pipeline parallelism"). While fewer than pp batches are in flight and the
 * scheduler finds work among the requests not in flight, the engine schedules another batch
 * (its host time on the engine's clock) and returns without waiting; otherwise it waits for
 * the oldest batch and updates the requests from its output. A batch enters stage i when it
 * has left stage i - 1 (and the transfer after it) and stage i is free:
 *   start_i = max(end_{i-1} + transfer_{i-1}, free_i),  end_i = start_i + t_i
 * with t_i the stage times of sim_pp_step; it comes back at end_{pp-1}.
 */
static sim_status serve_pipeline(serve_state *x, const sim_memory *mem, sim_serve_observer obs,
                                 void *obs_ctx, struct sim_err *err)
{
    const sim_workload *w = x->w;
    const int pp = x->su.run->pp;
    double stage_free[SIM_PP_MAX] = {0};
    struct {
        int64_t id;
        double start_s, done_s;
        int prefill;
    } q[SIM_PP_MAX];
    double last_done = 0.0; /* when the previous batch came back */
    int n_q = 0;
    sim_step_cost c = {0};
    sim_pp_cost pc;
    x->batch = 1;
    while (x->done < w->n_requests) {
        admit_arrivals(x, x->now_s, 0);
        int64_t n_sched = 0, n_pf_seqs = 0, n_pf_tokens = 0;
        sim_step stp; /* groups[0 .. n_groups) only are read: no 2 KB clear a step */
        stp.n_groups = 0;
        if (n_q < pp && (x->n_running > 0 || x->q_len > 0))
            n_sched = schedule(x, &stp, &n_pf_seqs, &n_pf_tokens);
        if (n_sched > 0 && stp.n_groups > 0) {
            sim_pp_step(x->su.model, x->su.hw, x->su.run, &stp, &pc);
            /* The step totals count_step reports, from the same stage costs. */
            c.roofline_s = pc.roofline_s;
            c.step_s = sim_calibrated_s(x->su.run->alpha, pc.roofline_s, x->su.run->beta_s, 1.0);
            c.tokens = pc.tokens;
            const double host = sim_engine_host_s(x->su.engine, x->su.run->tp, pc.seqs);
            double a = x->now_s + host;
            for (int i = 0; i < pp; i++) {
                const double start = a > stage_free[i] ? a : stage_free[i];
                stage_free[i] = start + pc.stage_s[i];
                a = stage_free[i] + pc.transfer_s[i];
            }
            const double done = stage_free[pp - 1];
            count_step(x, mem, &c, host, 0.0, done - x->now_s, n_sched, n_pf_seqs, n_pf_tokens, obs,
                       obs_ctx);
            q[n_q].id = x->batch++;
            q[n_q].start_s = x->now_s;
            q[n_q].done_s = done;
            q[n_q].prefill = n_pf_seqs > 0;
            n_q++;
            x->now_s += host;
            sim_status st = check_step_limit(x, err);
            if (st != SIM_OK)
                return st;
            continue;
        }
        if (n_q == 0) {
            if (x->n_running == 0 && x->q_len == 0 && wait_for_arrival(x))
                continue; /* idle: the next request has reached the engine */
            return stuck(x, err);
        }
        /* Wait for the oldest batch; arrivals until then are seen by the next schedule. Busy
         * time: from the previous batch's return (or this one's scheduling) to this one's. */
        const double busy = q[0].done_s - (last_done > q[0].start_s ? last_done : q[0].start_s);
        x->out->busy_s += busy;
        if (q[0].prefill)
            x->out->prefill_s += busy;
        last_done = q[0].done_s;
        if (q[0].done_s > x->now_s)
            x->now_s = q[0].done_s;
        finish_step(x, x->now_s, q[0].done_s - q[0].start_s, q[0].id, (double)NAN);
        for (int i = 1; i < n_q; i++)
            q[i - 1] = q[i];
        n_q--;
    }
    return end_run(x);
}

/* Whether an arrival would reach the scheduler of a step scheduled at sched_s
 * (admit_arrivals' test): then a decode run ends before that step. */
static int arrival_due(const serve_state *x, double sched_s)
{
    const sim_workload *w = x->w;
    const sim_request *req = w->req;
    return w->concurrency > 0
               ? x->next_admit < x->next_arrival && req[x->next_admit].arrival_s < sched_s
               : x->next_arrival < w->n_requests && req[x->next_arrival].arrival_s <= sched_s;
}

/* Whether a decode's attention is affine in its context for every context: no sliding
 * window or chunk on any layer, and a decode kernel that does not switch with the length
 * (sim_decode_attn's PagedAttention rule can, when eager). */
static int affine_run(const sim_step_dims *d)
{
    return d->W == 0.0 && !d->chunked && !d->decode.paged;
}

/* A run's k steps counted as count_step counts them (no observer; the blocks in use, the
 * queue and the running requests do not change along the run, so the peaks are the first
 * step's). */
static void count_run(serve_state *x, int64_t k, int64_t n)
{
    if (k <= 0)
        return;
    sim_serve_result *out = x->out;
    note_peaks(x);
    out->n_steps += k;
    x->work += k * (n + SIM_SIM_STAGE_WORK);
    x->step_preempted = 0;
}

/* The run's steps one by one: step 0's cost is in c; each step's roofline, host and busy
 * time summed as count_step sums them, one ITL entry each. Returns the steps taken. */
static int64_t run_stepwise(serve_state *x, sim_step_cost *c, int64_t n, int64_t ctx, int64_t k_max,
                            double host, double *sched_s)
{
    const sim_engine *e = x->su.engine;
    sim_serve_scratch *scr = x->scr;
    sim_serve_result *out = x->out;
    int64_t k = 0;
    for (;;) {
        const double wall = sim_engine_step_wall_s(e, c->step_s, host);
        out->roofline_sum_s += c->roofline_s;
        out->host_sum_s += host;
        out->busy_s += wall;
        if (scr->itl && out->n_itl < scr->itl_cap)
            scr->itl[out->n_itl++] = (sim_itl_entry){wall, (double)n};
        *sched_s = e->async_scheduling ? x->now_s : x->now_s + wall;
        x->now_s += wall;
        if (++k >= k_max || arrival_due(x, *sched_s))
            return k;
        sim_step stp;
        stp.n_groups = 0;
        add_decodes(&stp, n, ctx + k * n);
        sim_step_cost_next_memo(&x->prep, &x->memo, &stp, c);
    }
}

/*
 * The run's steps in closed form (docs/model.md, "Decode runs"): only the decode attention
 * changes along the run, affinely in the step index j, so step j's roofline time is
 * max(u(j), v(j)) + rest and its wall time the largest of alpha (u(j) + rest) + beta [+ host],
 * alpha (v(j) + rest) + beta [+ host] and, with async scheduling, host
 * (sim_engine_step_wall_s). The clock after j steps is a sum of those; the run ends at the
 * first step whose scheduling time an arrival precedes (found by bisection) or at k_max.
 * Step 0's cost is in c; c is left holding step k_max - 1's. The same numbers as stepping,
 * up to rounding (tests/test_serve.c). Returns the steps taken.
 */
static int64_t run_closed(serve_state *x, sim_step_cost *c, int64_t n, int64_t ctx, int64_t k_max,
                          double host, double *sched_s)
{
    const sim_engine *e = x->su.engine;
    const sim_run_cfg *run = x->su.run;
    sim_serve_result *out = x->out;
    const sim_step_cost first = *c;
    sim_step stp;
    stp.n_groups = 0;
    add_decodes(&stp, n, ctx + (k_max - 1) * n);
    sim_step_cost_next_memo(&x->prep, &x->memo, &stp, c);
    sim_line uv[2];
    double rest;
    sim_step_run_lines(run, &first, c, k_max, uv, &rest);
    const int async = e->async_scheduling;
    const double a = run->alpha, add = a * rest + run->beta_s + (async ? 0.0 : host);
    const sim_line wall[3] = {{a * uv[0].at0_s + add, a * uv[0].slope_s},
                              {a * uv[1].at0_s + add, a * uv[1].slope_s},
                              {host, 0.0}};
    const int n_wall = async ? 3 : 2;
    const double t0 = x->now_s;
    /* The scheduling time of step j >= 1: the end of step j - 1, or with async scheduling
     * its start; it grows with j, so the first step j < k_max at which an arrival is due is
     * found by bisection, and ends the run. */
    const int64_t lag = async ? 1 : 0;
    int64_t lo = 0, hi = k_max; /* due at no step in 1 .. lo; due at hi, or hi = k_max */
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (arrival_due(x, t0 + sim_lines_max_sum(wall, n_wall, 0, mid - lag)))
            hi = mid;
        else
            lo = mid;
    }
    const int64_t k = hi;
    const double busy = sim_lines_max_sum(wall, n_wall, 0, k);
    out->roofline_sum_s += sim_lines_max_sum(uv, 2, 0, k) + (double)k * rest;
    out->host_sum_s += (double)k * host;
    out->busy_s += busy;
    sim_serve_scratch *scr = x->scr;
    for (int64_t j = 0; scr->itl && j < k && out->n_itl < scr->itl_cap; j++)
        scr->itl[out->n_itl++] = (sim_itl_entry){sim_lines_max_at(wall, n_wall, j), (double)n};
    x->now_s = t0 + busy;
    *sched_s = async ? t0 + sim_lines_max_sum(wall, n_wall, 0, k - 1) : x->now_s;
    return k;
}

/*
 * A decode run (docs/model.md, "Decode runs"; the V1 counterpart of sched_v0.c's): after a step
 * in which every running request decoded one token, none was admitted, preempted or finished,
 * the next steps are the same step with every context one larger, until a request would take
 * its last token, an arrival would reach the scheduler, or the KV blocks could run short. Such
 * steps change nothing the scheduler looks at: admission stays refused for the same reason
 * (the queue's front, the budget and max_num_seqs do not change, and the free blocks only
 * fall). So they are priced here without schedule() and finish_step(): each step's cost by
 * the same sim_step_cost_next_prepared call on the same groups, its statistics by count_step, one
 * ITL entry per step as finish_step makes, and the requests' tokens, blocks and last token time
 * updated once at the end. The results are those of stepping (tests/test_serve.c compares
 * them with scr->exact_steps on random workloads). Without an observer only (the timeline
 * records the KV blocks of every step), and with full-attention KV groups only.
 * Returns SIM_OK, or the step limit's error; *prev_cost and the clock are advanced.
 */
static sim_status decode_run(serve_state *x, sim_step_cost *c, double *sched_s, struct sim_err *err)
{
    const sim_workload *w = x->w;
    const sim_engine *e = x->su.engine;
    const sim_run_cfg *run = x->su.run;
    const int64_t bs = x->bs, n = x->n_running, groups = x->groups;
    sim_request *req = w->req;
    const int32_t *running = tail(x);
    const int64_t nt = n_tail(x);
    /* Steps before a request samples its last token (that step finishes it: stepped); the
     * aggregate's first to finish is its heap's top. */
    int64_t k_max = x->heap_n > 0 ? finish_key(&req[x->scr->agg_heap[0]]) - x->kd - 1 : INT64_MAX;
    int64_t ctx = x->sumc;
    for (int64_t i = 0; i < nt; i++) {
        const sim_request *r = &req[running[i]];
        const int64_t left = r->output_tokens - r->generated - 1;
        if (left < k_max)
            k_max = left;
        ctx += r->computed;
    }
    /* Each request starts at most ceil(k / bs) blocks in k steps: a run of
     * bs x floor(free / (n x groups)) steps cannot leave a request without one. */
    const int64_t per_block = n * groups;
    const int64_t k_blocks = per_block > 0 ? x->free_blocks / per_block * bs : INT64_MAX;
    if (k_blocks < k_max)
        k_max = k_blocks;
    /* The step limits (check_step_limit) end the run at the step that reaches one. */
    const int64_t work_step = n + SIM_SIM_STAGE_WORK;
    const int64_t k_work =
        x->work < SIM_SIM_MAX_WORK ? (SIM_SIM_MAX_WORK - x->work + work_step - 1) / work_step : 1;
    const int64_t k_steps =
        x->out->n_steps < SIM_SERVE_MAX_STEPS ? SIM_SERVE_MAX_STEPS - x->out->n_steps : 1;
    k_max = k_work < k_max ? k_work : k_max;
    k_max = k_steps < k_max ? k_steps : k_max;
    if (k_max <= 0 || arrival_due(x, *sched_s))
        return SIM_OK;
    sim_step stp; /* groups[0 .. n_groups) only are read: no 2 KB clear a step */
    stp.n_groups = 0;
    add_decodes(&stp, n, ctx);
    sim_step_cost_next_memo(&x->prep, &x->memo, &stp, c);
    const double host = sim_engine_host_s(e, run->tp, c->seqs);
    const int64_t k = affine_run(&x->prep.dims) && k_max >= 3
                          ? run_closed(x, c, n, ctx, k_max, host, sched_s)
                          : run_stepwise(x, c, n, ctx, k_max, host, sched_s);
    count_run(x, k, n);
    const sim_status st = check_step_limit(x, err);
    int64_t taken = 0;
    for (int64_t i = 0; i < nt; i++) {
        sim_request *r = &req[running[i]];
        r->computed += k;
        r->generated += k;
        r->last_token_s = x->now_s;
        const int64_t blocks = held_blocks(x, r->computed);
        taken += blocks - r->blocks;
        r->blocks = blocks;
    }
    /* The aggregate's members: one block each time their computed tokens reach a multiple of
     * bs, i.e. at run step j when (phase + kd + j) mod bs = 0; their last token time stays the
     * end of the previous step, now the run's last. */
    for (int64_t p = 0; x->nd > 0 && p < bs; p++) {
        if (x->ph[p] == 0)
            continue;
        const int64_t j0 = (bs - (p + x->kd) % bs) % bs;
        if (j0 < k)
            taken += x->ph[p] * groups * ((k - 1 - j0) / bs + 1);
    }
    x->kd += k;
    x->sumc += x->nd * k;
    x->free_blocks -= taken;
    /* The blocks in use only grew along the run: its last step holds the peak. */
    if (x->pool_blocks - x->free_blocks > x->out->peak_kv_blocks)
        x->out->peak_kv_blocks = x->pool_blocks - x->free_blocks;
    return st;
}

/*
 * Speculative decoding's drafter (spec.h, docs/engine.md "Speculative decoding"): after the
 * target's forward the proposer runs once over every token of the step, then k - 1 times over
 * one token of each request that sampled, each pass priced by the step model of the drafter's
 * model; n-gram drafting is host work. The step's roofline and calibrated time take them in,
 * plus the engine's spec_step_s per step and spec_pass_s per drafter pass.
 */
static void add_draft_cost(const serve_state *x, const sim_step *stp, sim_step_cost *cc)
{
    const sim_spec *sp = x->sp;
    if (x->emit_n == 0)
        return;
    const sim_run_cfg *run = x->su.run;
    const sim_engine *e = x->su.engine;
    if (sp->method == SIM_SPEC_NGRAM) {
        cc->step_s += e->spec_step_s;
        return;
    }
    sim_step_cost d;
    sim_step_cost_compute(&sp->draft, x->su.hw, run, stp, &d);
    double roof = d.roofline_s;
    if (sp->k > 1) {
        sim_step one;
        one.n_groups = 0;
        add_decodes(&one, x->emit_n, x->emit_ctx);
        sim_step_cost_compute(&sp->draft, x->su.hw, run, &one, &d);
        roof += (double)(sp->k - 1) * d.roofline_s;
    }
    cc->roofline_s += roof;
    cc->step_s = sim_calibrated_s(run->alpha, cc->roofline_s, run->beta_s, 1.0) + e->spec_step_s +
                 (double)sp->k * e->spec_pass_s;
}

/* Nothing schedulable while running requests wait for their remote KV: the clock moves to
 * the first transfer's end, or to the next request's arrival when that comes first. 0 when
 * no transfer is pending. */
static int wait_for_transfer(serve_state *x)
{
    const sim_request *req = x->w->req;
    const int32_t *running = tail(x);
    double t = (double)INFINITY;
    for (int64_t i = 0; i < n_tail(x); i++) {
        const sim_request *r = &req[running[i]];
        /* Admitted in this very step with its KV already in place (a transfer of no time):
         * vLLM schedules it at the next step, at once. */
        if (r->remote_tokens > 0 && r->generated == 0 && r->computed == r->remote_tokens &&
            r->ready_s <= x->now_s)
            return 1;
        if (r->ready_s > x->now_s && r->ready_s < t)
            t = r->ready_s;
    }
    if (!(t < (double)INFINITY))
        return 0;
    const sim_workload *w = x->w;
    const int64_t next = w->concurrency > 0 ? x->next_admit : x->next_arrival;
    const int64_t end = w->concurrency > 0 ? x->next_arrival : w->n_requests;
    if (next < end && req[next].arrival_s > x->now_s && req[next].arrival_s < t)
        t = req[next].arrival_s;
    x->now_s = t;
    return 1;
}

/* Whether the workload shares a full block (prefix caching has something to find). */
int sim_serve_shares_blocks(const sim_workload *w, int64_t block_size)
{
    for (int64_t i = 0; i < w->n_requests; i++)
        if (w->req[i].prefix_tokens >= block_size || w->req[i].prefix_session)
            return 1;
    return 0;
}

/* Prefix caching with shared blocks: the pool over the scratch (sched_v1.h). */
static sim_status prefix_setup(serve_state *x, const sim_memory *mem, struct sim_err *err)
{
    const sim_sched_resolved *s = x->su.sched;
    x->bs = s->block_size;
    if (!s->enable_prefix_caching || !sim_serve_shares_blocks(x->w, s->block_size))
        return SIM_OK;
    if (x->su.engine->kind != SIM_SCHED_V1) {
        sim_errf(err, "prefix caching: shared prefixes are simulated on the V1 engine only; pass "
                      "--no-prefix-caching or no shared prefix");
        return SIM_EINVAL;
    }
    if (mem->kv.n_window_groups > 0) {
        sim_errf(err,
                 "prefix caching: shared prefixes on a model with sliding-window layers are not "
                 "simulated (docs/limits.md); pass --no-prefix-caching or no shared prefix");
        return SIM_EINVAL;
    }
    const sim_serve_scratch *scr = x->scr;
    if (x->pool_blocks > SIM_PREFIX_MAX_BLOCKS || !scr->prefix_blocks || !scr->prefix_buckets ||
        scr->prefix_cap < x->pool_blocks) {
        sim_errf(err,
                 "prefix caching: a pool of %lld KV blocks is simulated block by block with room "
                 "for %lld (at most %lld; docs/limits.md): pass a larger --block-size or "
                 "--no-prefix-caching",
                 (long long)x->pool_blocks, (long long)scr->prefix_cap,
                 (long long)SIM_PREFIX_MAX_BLOCKS);
        return SIM_ERANGE;
    }
    sim_prefix_init(&x->pool, scr->prefix_blocks, scr->prefix_buckets, x->pool_blocks);
    x->pc = &x->pool;
    x->out->prefix_cache_simulated = 1;
    return SIM_OK;
}

sim_status sim_serve_simulate(const sim_setup *su, const sim_workload *w, sim_serve_scratch *scr,
                              sim_serve_observer obs, void *obs_ctx, sim_serve_result *out,
                              struct sim_err *err)
{
    const sim_engine *e = su->engine;
    const sim_model *m = su->model;
    const sim_hw *hw = su->hw;
    const sim_run_cfg *run = su->run;
    const sim_sched_resolved *s = su->sched;
    *out = (sim_serve_result){0};
    sim_status st = check_workload(w, s, scr, err);
    if (st == SIM_OK && run->pp > 1)
        st = sim_pp_check(m, run->pp, err);
    if (st != SIM_OK)
        return st;
    sim_memory mem;
    sim_memory_compute(su, &mem);
    out->kv_blocks = mem.kv_blocks;
    out->kv_capacity_tokens = mem.kv_capacity_tokens;
    if (!mem.fits) {
        sim_errf(err,
                 "memory: the engine would not start: %lld KV blocks of %lld tokens per GPU "
                 "hold %lld tokens, one max_model_len = %lld sequence needs more "
                 "(pass --max-model-len, a larger --tp or --gpu-memory-utilization)",
                 (long long)mem.kv_blocks, (long long)s->block_size,
                 (long long)mem.kv_capacity_tokens, (long long)s->max_model_len);
        return SIM_ERANGE;
    }
    serve_state x = {0};
    x.su = *su;
    x.w = w;
    x.scr = scr;
    x.out = out;
    x.kv = &mem.kv;
    x.pool_blocks = mem.kv_blocks - 1; /* vLLM's BlockPool keeps one null block */
    x.free_blocks = x.pool_blocks;
    x.q_cap = w->n_requests + 1;
    for (int64_t i = 0; i < w->n_requests; i++) {
        sim_request *r = &w->req[i];
        r->first_token_s = r->finish_s = r->last_token_s = 0.0;
        r->first_sched_s = -1.0;
        r->n_preemptions = r->computed = r->generated = r->blocks = r->sched = r->batch = 0;
        r->hit_blocks = r->hashed = r->cached_tokens = 0;
        r->own_head = -1;
        r->ready_s = 0.0;
        x.remote |= r->remote_tokens > 0;
    }

    if ((st = prefix_setup(&x, &mem, err)) != SIM_OK)
        return st;
    if (x.remote && (run->pp > 1 || x.pc)) {
        sim_errf(err, "remote prefill: not simulated with pipeline stages or shared-prefix "
                      "caching (docs/limits.md)");
        return SIM_EINVAL;
    }
    if (run->spec && run->spec->method != SIM_SPEC_NONE) {
        if (run->pp > 1 || e->kind != SIM_SCHED_V1) {
            sim_errf(err, "speculative decoding: simulated on the V1 engine without pipeline "
                          "stages (docs/limits.md)");
            return SIM_EINVAL;
        }
        x.sp = run->spec;
        const sim_spec_method sm = x.sp->method;
        x.lookahead =
            sm == SIM_SPEC_EAGLE || sm == SIM_SPEC_EAGLE3 || sm == SIM_SPEC_MTP ? x.sp->k : 0;
    }
    if (w->concurrency > 0)
        for (int64_t i = 0; i < w->concurrency; i++)
            send_next(&x, 0.0);
    double t0 = w->concurrency > 0 ? 0.0 : w->req[0].arrival_s;
    x.now_s = t0;
    if (run->pp > 1)
        return serve_pipeline(&x, &mem, obs, obs_ctx, err);

    sim_step_cost c = {0}; /* the previous step's cost: sim_step_cost_next_prepared reuses it */
    /* When the step about to be simulated was scheduled (admit_arrivals): when the previous
     * one ended, or with async scheduling when it started; after an idle wait, at the arrival. */
    double sched_s = x.now_s;
    /* The previous step was a decode of every running request that admitted, preempted and
     * finished nothing: a decode run may follow (decode_run). */
    int runnable = 0;
    const int runs =
        !scr->exact_steps && !obs && mem.kv.n_window_groups == 0 && !x.pc && !x.sp && !x.remote;
    /* The decode aggregate: with decode runs, a block size its phase table holds, and no
     * context clamped at the window (add_to_step: every layer windowed). */
    x.agg = runs && scr->agg_heap && s->block_size <= SIM_AGG_MAX_BLOCK_SIZE &&
            !(m->full_attn_layers == 0 && m->sliding_window > 0);
    x.groups = mem.kv.n_full_groups;
    x.bs = s->block_size;
    sim_step_prep_init(&x.prep, m, hw, run);
    sim_step_memo_init(&x.memo);
    while (x.done < w->n_requests) {
        if (runnable) {
            if ((st = decode_run(&x, &c, &sched_s, err)) != SIM_OK)
                return st;
            runnable = 0;
        }
        admit_arrivals(&x, sched_s, 0);
        if (x.n_running == 0 && x.q_len == 0) {
            if (!wait_for_arrival(&x))
                return stuck(&x, err);
            sched_s = x.now_s;
            continue; /* idle: the next request has reached the engine */
        }
        if (x.nd > 0 && !agg_fits(&x))
            agg_flush(&x, x.now_s);
        sim_step stp; /* groups[0 .. n_groups) only are read: no 2 KB clear a step */
        stp.n_groups = 0;
        int64_t n_pf_seqs, n_pf_tokens;
        const int64_t n_before = x.n_running;
        int64_t n_sched = schedule(&x, &stp, &n_pf_seqs, &n_pf_tokens);
        if ((n_sched == 0 || stp.n_groups == 0) && x.remote && wait_for_transfer(&x)) {
            sched_s = x.now_s;
            continue; /* nothing to compute until a pulled KV is in place (or a request comes) */
        }
        if (n_sched == 0 || stp.n_groups == 0)
            return stuck(&x, err);
        const int all_decoded = n_pf_seqs == 0 && x.step_preempted == 0 &&
                                x.n_running == n_before && n_sched == n_before;
        sim_step_cost_next_memo(&x.prep, &x.memo, &stp, &c);
        sim_step_cost cc = c; /* c stays the target's: the next step's cost reuses it */
        if (x.sp)
            add_draft_cost(&x, &stp, &cc);
        const double host = sim_engine_host_s(e, run->tp, cc.seqs);
        const double wall = sim_engine_step_wall_s(e, cc.step_s, host);
        count_step(&x, &mem, &cc, host, wall, wall, n_sched, n_pf_seqs, n_pf_tokens, obs, obs_ctx);
        const double t_end = x.now_s + wall;
        finish_step(&x, t_end, wall, x.batch, x.now_s);
        if (x.agg)
            agg_join(&x, t_end);
        runnable = runs && all_decoded && x.n_running == n_before;
        sched_s = e->async_scheduling ? x.now_s : t_end;
        x.now_s = t_end;
        if ((st = check_step_limit(&x, err)) != SIM_OK)
            return st;
    }
    return end_run(&x);
}
