/*
 * sched_v0.c - the V0 scheduler on an offline batch, and the batch entry point of
 * both engines (see sched_v0.h; formulas in docs/model.md, "Engine").
 */
#include "sched_v0.h"

#include <stddef.h>

#include "err.h"
#include "memory.h"
#include "sched_v1.h"
#include "step.h"

/* Megabytes for a message, clamped so the conversion to an integer is defined. */
static double clamp_mb(double bytes)
{
    double mb = bytes / 1e6;
    return mb > 9e15 ? 9e15 : (mb < -9e15 ? -9e15 : mb);
}

typedef struct sim_state {
    sim_setup su; /* the run's inputs (setup.h) */
    const sim_batch *b;
    sim_batch_work *w;
    sim_batch_result *out;
    int64_t free_blocks, total_blocks, watermark;
    int n_queue, n_running;
    sim_step_cost cost; /* the previous step's: sim_step_cost_next reuses it */
    int merged;         /* the last schedule_decodes merged contexts into shared groups */
    int stepwise;       /* time decode runs step by step (sim_batch_simulate_stepwise) */
} sim_state;

/* Recompute preemption of the newest running sequence: free its blocks, queue it first. */
static void preempt_last(sim_state *x)
{
    sim_batch_work *w = x->w;
    int32_t id = w->running[--x->n_running];
    x->free_blocks += w->blocks[id];
    w->blocks[id] = 0;
    w->cached[id] = 0;
    w->todo[id] = 0;
    for (int i = x->n_queue; i > 0; i--)
        w->queue[i] = w->queue[i - 1];
    w->queue[0] = id;
    x->n_queue++;
    x->out->preemptions++;
}

/* Adds n steps to the totals: their summed roofline and calibrated times, each with the host
 * time of seqs sequences. */
static void add_steps(sim_state *x, int64_t n, double roofline_s, double step_s, double seqs,
                      int is_prefill)
{
    const double host = (double)n * sim_engine_host_s(x->su.engine, x->su.run->tp, seqs);
    const double t = step_s + host;
    sim_batch_result *o = x->out;
    o->latency_s += t;
    o->roofline_sum_s += roofline_s;
    o->host_sum_s += host;
    o->n_steps += n;
    if (is_prefill) {
        o->prefill_s += t;
        o->n_prefill_steps += n;
    } else {
        o->decode_s += t;
        o->n_decode_steps += n;
    }
    int64_t used = x->total_blocks - x->free_blocks;
    if (used > o->peak_kv_blocks)
        o->peak_kv_blocks = used;
}

/* Times one step and adds it to the totals. */
static void account(sim_state *x, const sim_step *st, int is_prefill)
{
    sim_step_cost_next(x->su.model, x->su.hw, x->su.run, st, &x->cost);
    add_steps(x, 1, x->cost.roofline_s, x->cost.step_s, x->cost.seqs, is_prefill);
}

/* Decode slots for every running sequence that has finished its prefill, preempting from
 * the tail when blocks run out (vLLM V0 _schedule_running: each sequence needs a free block to
 * be scheduled). Adds the decodes to st and marks them; returns the number scheduled. */
/* Adds n decodes at context c as sim_step_add_group would one by one: at once when the step
 * has their group or room for it (then the n calls would all end in the same group), else one
 * at a time (the merging of a full step rounds each time). Returns 1 when it merged
 * contexts. */
static int add_decodes(sim_step *st, int64_t n, int64_t c)
{
    int room = st->n_groups < SIM_STEP_MAX_GROUPS;
    for (int i = 0; !room && i < st->n_groups; i++)
        room = st->groups[i].new_tokens == 1 && st->groups[i].context_tokens == c &&
               st->groups[i].emits == 1;
    if (room) {
        sim_step_add_group(st, n, 1, c, 1);
        return 0;
    }
    for (int64_t k = 0; k < n; k++)
        sim_step_add_group(st, 1, 1, c, 1);
    return 1;
}

static int64_t schedule_decodes(sim_state *x, sim_step *st)
{
    sim_batch_work *w = x->w;
    const int64_t bs = x->su.sched->block_size;
    int64_t n = 0, run_n = 0, run_c = 0; /* a run of consecutive decodes at one context */
    x->merged = 0;
    for (int i = 0; i < x->n_running; i++)
        w->decoded[w->running[i]] = 0;
    for (int i = 0; i < x->n_running; i++) {
        int32_t id = w->running[i];
        if (w->todo[id] > 0)
            continue; /* still prefilling (chunked) */
        while (x->free_blocks < 1 && x->n_running > i + 1)
            preempt_last(x);
        if (x->free_blocks < 1) {
            preempt_last(x); /* the sequence itself */
            break;
        }
        /* The input token's KV goes at position cached; a new block starts every bs tokens. */
        if (w->cached[id] % bs == 0) {
            w->blocks[id]++;
            x->free_blocks--;
        }
        w->decoded[id] = 1;
        if (run_n > 0 && w->cached[id] != run_c) {
            x->merged |= add_decodes(st, run_n, run_c);
            run_n = 0;
        }
        run_c = w->cached[id];
        run_n++;
        n++;
    }
    if (run_n > 0)
        x->merged |= add_decodes(st, run_n, run_c);
    return n;
}

/* After a step: decoded sequences gain a cached and a sampled token; finished ones leave. */
static void finish_step(sim_state *x, int64_t *done)
{
    sim_batch_work *w = x->w;
    const int64_t O = x->b->output_tokens;
    int k = 0;
    for (int i = 0; i < x->n_running; i++) {
        int32_t id = w->running[i];
        if (w->decoded[id]) {
            w->cached[id]++;
            w->generated[id]++;
            w->decoded[id] = 0;
        }
        if (w->generated[id] >= O) {
            x->free_blocks += w->blocks[id];
            w->blocks[id] = 0;
            (*done)++;
            continue;
        }
        w->running[k++] = id;
    }
    x->n_running = k;
}

/* Blocks one sequence starts in k decode steps from context c: it has c + 1 + j cached at step
 * j and starts a block when that is a multiple of bs (the multiples of bs in [c + 1, c + k]). */
static int64_t blocks_started(int64_t c, int64_t k, int64_t bs) { return (c + k) / bs - c / bs; }

/* Blocks that the sequences of st0's groups start over the first k steps of a decode run. */
static int64_t run_blocks(const sim_step *st0, int64_t k, int64_t bs)
{
    int64_t need = 0;
    for (int g = 0; g < st0->n_groups; g++)
        need += st0->groups[g].count * blocks_started(st0->groups[g].context_tokens, k, bs);
    return need;
}

/*
 * After a pure decode step st0 that admitted nothing and in which every running sequence
 * decoded and none finished: the steps that follow are the same step with every context one
 * larger, until a sequence finishes or a step's new blocks would leave none free (admission
 * stays impossible meanwhile: the sequences and tokens it checks are unchanged and the free
 * blocks only fall). Times those steps without the per-sequence scheduling loops, in one sum
 * (sim_step_cost_decode_run) or, where that does not apply or x->stepwise asks, step by
 * step with the same groups in the same order; leaves the finishing or preempting step to
 * the caller. Skipped when st0 merged contexts into shared groups (then its groups are not
 * the distinct contexts).
 */
static void decode_run(sim_state *x, const sim_step *st0)
{
    sim_batch_work *w = x->w;
    const int64_t bs = x->su.sched->block_size, O = x->b->output_tokens;
    if (x->merged)
        return;
    int64_t n = INT64_MAX; /* steps before the one in which the first sequence finishes */
    for (int i = 0; i < x->n_running; i++) {
        int64_t left = O - w->generated[w->running[i]] - 1;
        if (left < n)
            n = left;
    }
    /* The longest run that leaves a block free after every step (the blocks only grow). */
    if (n > 0 && run_blocks(st0, n, bs) > x->free_blocks - 1) {
        int64_t lo = 0, hi = n; /* run_blocks(lo) fits, run_blocks(hi) does not */
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (run_blocks(st0, mid, bs) > x->free_blocks - 1)
                hi = mid;
            else
                lo = mid;
        }
        n = lo;
    }
    if (n <= 0)
        return;
    sim_step st = *st0;
    for (int g = 0; g < st.n_groups; g++)
        st.groups[g].context_tokens++;
    double roof = 0.0;
    sim_step_cost last;
    if (!x->stepwise &&
        sim_step_cost_decode_run(x->su.model, x->su.hw, x->su.run, &st, n, &last, &roof)) {
        x->free_blocks -= run_blocks(st0, n, bs);
        x->cost = last;
        add_steps(x, n, roof,
                  sim_calibrated_s(x->su.run->alpha, roof, x->su.run->beta_s, (double)n), last.seqs,
                  0);
    } else {
        for (int64_t k = 0; k < n; k++) {
            x->free_blocks -= run_blocks(st0, k + 1, bs) - run_blocks(st0, k, bs);
            for (int g = 0; g < st.n_groups; g++)
                st.groups[g].context_tokens = st0->groups[g].context_tokens + 1 + k;
            account(x, &st, 0);
        }
    }
    for (int i = 0; i < x->n_running; i++) {
        int32_t id = w->running[i];
        /* Its context in st0 was cached - 1. */
        w->blocks[id] += blocks_started(w->cached[id] - 1, n, bs);
        w->cached[id] += n;
        w->generated[id] += n;
    }
}

/* Ends a decode step that admitted nothing (n decodes, preemptions counted before it):
 * finishes it, then runs the identical steps that follow when it was steady (every running
 * sequence decoded, none preempted, none finished). */
static void decode_step_end(sim_state *x, const sim_step *st, int64_t n, int64_t preempted,
                            int64_t *done)
{
    const int steady = n == x->n_running && x->out->preemptions == preempted;
    const int running = x->n_running;
    finish_step(x, done);
    if (steady && x->n_running == running)
        decode_run(x, st);
}

/* Non-chunked V0 scheduling: a prefill step when any waiting prompt can be admitted,
 * else a decode step. */
static void step_default(sim_state *x, int64_t *done)
{
    sim_batch_work *w = x->w;
    const int64_t P = x->b->prompt_tokens, bs = x->su.sched->block_size;
    sim_step st = {0};
    int64_t tokens = 0;
    int admitted = 0;
    while (x->n_queue > 0) {
        int32_t id = w->queue[0];
        int64_t need_tokens = P + w->generated[id]; /* recompute: prompt and what it sampled */
        int64_t need_blocks = sim_kv_blocks_for(need_tokens, bs);
        if (tokens + need_tokens > x->su.sched->max_num_batched_tokens ||
            x->n_running + 1 > x->su.sched->max_num_seqs ||
            x->free_blocks - need_blocks < x->watermark)
            break;
        for (int i = 0; i + 1 < x->n_queue; i++)
            w->queue[i] = w->queue[i + 1];
        x->n_queue--;
        x->free_blocks -= need_blocks;
        w->blocks[id] = need_blocks;
        w->cached[id] = need_tokens;
        if (w->generated[id] > 0)
            x->out->recomputed_tokens += need_tokens;
        w->generated[id]++;
        w->running[x->n_running++] = id;
        tokens += need_tokens;
        sim_step_add_group(&st, 1, need_tokens, 0, 1);
        admitted++;
    }
    if (admitted) {
        account(x, &st, 1);
        finish_step(x, done);
        return;
    }
    const int64_t preempted = x->out->preemptions;
    const int64_t n = schedule_decodes(x, &st);
    if (n > 0) {
        account(x, &st, 0);
        decode_step_end(x, &st, n, preempted, done);
    }
}

/* Chunked V0 scheduling: decodes first, then prefill chunks under the remaining token
 * budget, in one mixed step. */
static void step_chunked(sim_state *x, int64_t *done)
{
    sim_batch_work *w = x->w;
    const int64_t P = x->b->prompt_tokens, bs = x->su.sched->block_size;
    sim_step st = {0};
    const int64_t preempted = x->out->preemptions;
    const int64_t n_dec = schedule_decodes(x, &st);
    int64_t budget = x->su.sched->max_num_batched_tokens - n_dec;
    int any_prefill = 0;
    /* Pass 0 continues partial prefills of running sequences; pass 1 admits waiting prompts
     * (FCFS) while sequences, tokens and blocks (above the watermark) allow. */
    for (int pass = 0; pass < 2; pass++) {
        int i = 0;
        while (budget > 0) {
            int32_t id;
            if (pass == 0) {
                if (i >= x->n_running)
                    break;
                id = w->running[i++];
                if (w->todo[id] == 0)
                    continue;
            } else {
                if (x->n_queue == 0 || x->n_running + 1 > x->su.sched->max_num_seqs)
                    break;
                id = w->queue[0];
                w->todo[id] = P + w->generated[id];
            }
            int64_t chunk = w->todo[id] < budget ? w->todo[id] : budget;
            int64_t need = sim_kv_blocks_for(w->cached[id] + chunk, bs) - w->blocks[id];
            if (x->free_blocks - need < (pass ? x->watermark : 0)) {
                if (pass == 1)
                    w->todo[id] = 0;
                break;
            }
            if (pass == 1) {
                for (int q = 0; q + 1 < x->n_queue; q++)
                    w->queue[q] = w->queue[q + 1];
                x->n_queue--;
                w->running[x->n_running++] = id;
                if (w->generated[id] > 0)
                    x->out->recomputed_tokens += w->todo[id];
            }
            x->free_blocks -= need;
            w->blocks[id] += need;
            w->todo[id] -= chunk;
            int completes = w->todo[id] == 0;
            sim_step_add_group(&st, 1, chunk, w->cached[id], completes);
            w->cached[id] += chunk;
            if (completes)
                w->generated[id]++;
            budget -= chunk;
            any_prefill = 1;
        }
    }
    if (st.n_groups == 0)
        return;
    account(x, &st, any_prefill);
    if (any_prefill)
        finish_step(x, done);
    else
        decode_step_end(x, &st, n_dec, preempted, done); /* pass 1 could admit no prompt */
}

/* An offline batch on the V1 engine: every request arrives at t = 0 and the serving
 * simulation runs it; its step totals are the batch's. */
static sim_status batch_v1(const sim_setup *su, const sim_batch *b, sim_batch_work *work,
                           sim_batch_result *out, struct sim_err *err)
{
    for (int64_t i = 0; i < b->batch; i++)
        work->req[i] =
            (sim_request){.prompt_tokens = b->prompt_tokens, .output_tokens = b->output_tokens};
    sim_workload w = {work->req, b->batch, 0};
    sim_serve_scratch scr = {
        work->v1_queue, work->v1_running, NULL, 0, 0, work->v1_heap, NULL, NULL, 0};
    sim_serve_result r;
    sim_status st = sim_serve_simulate(su, &w, &scr, NULL, NULL, &r, err);
    if (st != SIM_OK)
        return st;
    out->latency_s = r.end_s;
    out->roofline_sum_s = r.roofline_sum_s;
    out->host_sum_s = r.host_sum_s;
    out->prefill_s = r.prefill_s;
    out->decode_s = r.end_s - r.prefill_s;
    out->n_steps = r.n_steps;
    out->n_prefill_steps = r.n_prefill_steps;
    out->n_decode_steps = r.n_steps - r.n_prefill_steps;
    out->preemptions = r.preemptions;
    out->recomputed_tokens = r.recomputed_tokens;
    out->peak_kv_blocks = r.peak_kv_blocks;
    out->kv_capacity_tokens = r.kv_capacity_tokens;
    out->peak_kv_frac = r.peak_kv_frac;
    return SIM_OK;
}

static sim_status batch_simulate(const sim_setup *su, const sim_batch *b, sim_batch_work *work,
                                 int stepwise, sim_batch_result *out, struct sim_err *err)
{
    const sim_engine *e = su->engine;
    const sim_sched_resolved *s = su->sched;
    *out = (sim_batch_result){0};
    if (b->batch < 1 || b->batch > SIM_BATCH_MAX_SEQS || b->prompt_tokens < 1 ||
        b->output_tokens < 1) {
        sim_errf(err, "batch: needs 1 to %d sequences, prompt and output tokens >= 1",
                 SIM_BATCH_MAX_SEQS);
        return SIM_ERANGE;
    }
    if (b->prompt_tokens + b->output_tokens > s->max_model_len) {
        sim_errf(err, "prompt_tokens: %lld + output_tokens %lld exceed max_model_len = %lld",
                 (long long)b->prompt_tokens, (long long)b->output_tokens,
                 (long long)s->max_model_len);
        return SIM_ERANGE;
    }
    if (e->kind == SIM_SCHED_V1)
        return batch_v1(su, b, work, out, err);
    sim_memory mem;
    sim_memory_compute(su, &mem);
    out->kv_capacity_tokens = mem.kv_capacity_tokens;
    const int64_t seq_blocks =
        sim_kv_blocks_for(b->prompt_tokens + b->output_tokens, s->block_size);
    if (mem.kv_blocks < seq_blocks + 1) {
        sim_errf(err,
                 "memory: %lld KV blocks of %lld tokens fit per GPU, one sequence needs %lld "
                 "(weights %lld MB, KV budget %lld MB)",
                 (long long)mem.kv_blocks, (long long)s->block_size, (long long)seq_blocks,
                 (long long)clamp_mb(mem.weights_bytes), (long long)clamp_mb(mem.kv_budget_bytes));
        return SIM_ERANGE;
    }
    sim_state x = {.su = *su,
                   .b = b,
                   .w = work,
                   .out = out,
                   .free_blocks = mem.kv_blocks,
                   .total_blocks = mem.kv_blocks,
                   .stepwise = stepwise};
    /* vLLM BlockSpaceManager watermark: admit a prefill only if this many blocks stay free. */
    x.watermark = (int64_t)(e->watermark_frac * (double)mem.kv_blocks);
    for (int32_t i = 0; i < (int32_t)b->batch; i++) {
        work->cached[i] = work->generated[i] = work->blocks[i] = work->todo[i] = 0;
        work->decoded[i] = 0;
        work->queue[i] = i;
    }
    x.n_queue = (int)b->batch;
    int64_t done = 0;
    /* Each step makes progress; the bound guards against a scheduling bug looping forever. */
    int64_t max_steps = 16 * b->batch * (b->prompt_tokens + b->output_tokens) + 16;
    if (max_steps > SIM_SIM_MAX_STEPS)
        max_steps = SIM_SIM_MAX_STEPS; /* a bound on time as well (docs/limits.md) */
    while (done < b->batch) {
        int64_t before = out->n_steps;
        if (s->enable_chunked_prefill)
            step_chunked(&x, &done);
        else
            step_default(&x, &done);
        if (out->n_steps == before) {
            sim_errf(err, "scheduler: no progress after %lld steps (%lld of %lld done)",
                     (long long)out->n_steps, (long long)done, (long long)b->batch);
            return SIM_EINVAL;
        }
        if (out->n_steps > max_steps) {
            sim_errf(err,
                     "scheduler: more than %lld steps (%lld of %lld sequences done); the "
                     "simulation stops there (docs/limits.md)",
                     (long long)max_steps, (long long)done, (long long)b->batch);
            return SIM_ERANGE;
        }
    }
    out->peak_kv_frac =
        mem.kv_blocks > 0 ? (double)out->peak_kv_blocks / (double)mem.kv_blocks : 0.0;
    return SIM_OK;
}

sim_status sim_batch_simulate(const sim_setup *su, const sim_batch *b, sim_batch_work *work,
                              sim_batch_result *out, struct sim_err *err)
{
    return batch_simulate(su, b, work, 0, out, err);
}

sim_status sim_batch_simulate_stepwise(const sim_setup *su, const sim_batch *b,
                                       sim_batch_work *work, sim_batch_result *out,
                                       struct sim_err *err)
{
    return batch_simulate(su, b, work, 1, out, err);
}
