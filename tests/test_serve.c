/*
 * test_serve.c - the V1 scheduler and the serving statistics, against schedules,
 * block counts, preemptions and percentiles derived by hand, and Little's law.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "hw.h"
#include "pipeline.h"
#include "sched_v1.h"
#include "spec.h"
#include "trace_json.h"
#include "toys.h"

/* Records every step the simulation reports. */
#define MAX_STEPS 64
typedef struct steps_seen {
    int n;
    sim_serve_step s[MAX_STEPS];
} steps_seen;

static void record(void *ctx, const sim_serve_step *st)
{
    steps_seen *seen = ctx;
    if (seen->n < MAX_STEPS)
        seen->s[seen->n] = *st;
    seen->n++;
}

/* The toy set-up (toys.h) on the V1 engine above, with max_num_seqs seqs, a budget of tokens,
 * max_model_len max_len, and, when blocks > 0, memory for exactly that many KV blocks. */
static void make_setup(toy_setup *x, int64_t seqs, int64_t tokens, int64_t max_len, int64_t blocks)
{
    sim_engine e;
    toy_v1(&e);
    toy_setup_init(x, &e);
    x->in.max_num_seqs = seqs;
    x->in.max_num_batched_tokens = tokens;
    x->in.max_model_len = max_len;
    CHECK_INT(toy_resolve(x), SIM_OK);
    if (blocks > 0)
        toy_set_blocks(x, blocks);
}

/* Serves n requests (conc clients, or 0 for open arrivals) on x, with scratch sized for the
 * tests, recording every step in *seen; the status, with the message in x->err. */
static sim_status serve(toy_setup *x, sim_request *req, int64_t n, int64_t conc, steps_seen *seen,
                        sim_serve_result *r)
{
    static int32_t queue[1024], running[1024];
    static sim_itl_entry itl[4096];
    sim_workload w = {req, n, conc};
    sim_serve_scratch scr = {queue, running, itl, 4096, 0, NULL, NULL, NULL, 0};
    sim_status st = sim_serve_simulate(toy_su(x), &w, &scr, record, seen, r, &x->err);
    if (st != SIM_OK)
        printf("serve: %s\n", x->err.msg);
    return st;
}

/*
 * Budget 64 tokens: request A (prompt 8, output 4) and B (prompt 100, output 2) arrive at
 * t = 0. Step 1: running is empty; waiting A takes 8 tokens, B the remaining 56 (a chunk).
 * Step 2: running first: A decodes 1 token, B continues with 44 (its last prompt tokens,
 * it samples). Step 3: A 1, B 1 (B's second token: B done). Step 4: A alone (its 4th token).
 * Tokens per step: 64, 45, 2, 1; prefill tokens 56 (A's 8 are a whole prompt but count as
 * prefill too: 64), then 44, 0, 0.
 */
static void budget_split_between_decodes_and_a_chunk(void)
{
    toy_setup x;
    make_setup(&x, 256, 64, 4096, 0);
    sim_request req[2] = {{.prompt_tokens = 8, .output_tokens = 4},
                          {.prompt_tokens = 100, .output_tokens = 2}};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 2, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.n_steps, 4);
    const int64_t tokens[4] = {64, 45, 2, 1}, prefill[4] = {64, 44, 0, 0};
    for (int i = 0; i < 4 && i < seen.n; i++) {
        CHECK_INT(seen.s[i].n_tokens, tokens[i]);
        CHECK_INT(seen.s[i].n_prefill_tokens, prefill[i]);
    }
    /* A's first token ends step 1, B's ends step 2; A finishes at step 4, B at step 3. */
    double end[4], t = 0.0;
    for (int i = 0; i < 4; i++)
        end[i] = (t += seen.s[i].wall_s);
    CHECK_REL(req[0].first_token_s, end[0], 1e-12);
    CHECK_REL(req[1].first_token_s, end[1], 1e-12);
    CHECK_REL(req[1].finish_s, end[2], 1e-12);
    CHECK_REL(req[0].finish_s, end[3], 1e-12);
    /* Host time of each step: 1 ms + 10 us per request scheduled (2, 2, 2, 1). */
    CHECK_REL(seen.s[0].host_s, 1.02e-3, 1e-12);
    CHECK_REL(seen.s[3].host_s, 1.01e-3, 1e-12);
    CHECK_REL(seen.s[0].wall_s, seen.s[0].gpu_s + seen.s[0].host_s, 1e-12);
}

/*
 * max_num_seqs 2: three 10-token prompts (output 3) at t = 0. Steps 1-3 run requests 0 and 1
 * (prefill + 2 decodes); the third waits (queue 1 after scheduling), is admitted at step 4
 * when both have left, and finishes at step 6.
 */
static void max_num_seqs_holds_admissions(void)
{
    toy_setup x;
    make_setup(&x, 2, 2048, 4096, 0);
    sim_request req[3];
    for (int i = 0; i < 3; i++)
        req[i] = (sim_request){.prompt_tokens = 10, .output_tokens = 3};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 3, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.n_steps, 6);
    CHECK_INT(seen.s[0].n_seqs, 2);
    CHECK_INT(seen.s[0].n_waiting, 1);
    CHECK_INT(seen.s[3].n_seqs, 1);
    CHECK_INT(seen.s[3].n_prefill_tokens, 10);
    CHECK_INT(r.queue_peak, 1);
    CHECK_INT(r.running_peak, 2);
    CHECK(req[2].first_token_s > req[0].finish_s);
    /* Queueing ends at the first step that schedules a request: requests 0 and 1 at t = 0,
     * request 2 at the start of step 4, after steps 1-3. The queue statistic is the mean of
     * (0, 0, t3) and the TTFTs are w1, w1 and t3 + w4 (w_k: step k's wall time). */
    const double t3 = seen.s[0].wall_s + seen.s[1].wall_s + seen.s[2].wall_s;
    CHECK_REL(req[0].first_sched_s, 0.0, 0.0);
    CHECK_REL(req[1].first_sched_s, 0.0, 0.0);
    CHECK_REL(req[2].first_sched_s, t3, 1e-12);
    CHECK_REL(req[2].first_sched_s, seen.s[3].start_s, 1e-12);
    sim_serve_stats st;
    double scratch[3];
    CHECK_INT(sim_serve_stats_compute(req, 3, NULL, 0, 0.0, 0.0, 0.0, scratch, &st), SIM_OK);
    CHECK_REL(st.queue_s.mean, t3 / 3.0, 1e-12);
    CHECK_REL(st.queue_s.p50, 0.0, 0.0);
    CHECK_REL(st.queue_s.p99, 0.98 * t3, 1e-12); /* numpy: position 0.99 x 2 = 1.98 */
    CHECK_REL(st.ttft_s.mean, (2.0 * seen.s[0].wall_s + t3 + seen.s[3].wall_s) / 3.0, 1e-12);
    /* Regime: queued when t3 / 3 >= (2 w1 + t3 + w4) / 6, i.e. t3 >= 2 w1 + w4, so when the
     * two decodes of steps 2-3 take at least a prefill step (w1 + w2 + w3 >= 2 w1 + w4). The
     * toy's steps are host-bound (1 ms + 2 ms, tiny GPU work), so every step takes about the
     * same: 3 w >= 3 w holds within a few percent either way; the rule's answer must equal
     * the hand comparison. */
    const int queued = t3 >= 2.0 * seen.s[0].wall_s + seen.s[3].wall_s;
    CHECK_INT(sim_serve_ttft_queued(&st), queued);
}

/*
 * TTFT under queueing: max_num_seqs 1, three identical requests (prompt 10, output 20) at
 * t = 0 are served one after another. Each takes the same service time T (a prefill step
 * of wall wp and 19 decode steps), so request k first runs at k T: queue mean (0 + T + 2T) / 3
 * = T, TTFT mean wp + T. Mostly queueing: T >= (wp + T) / 2 as T >= wp. Stats of requests
 * built outside a simulation (first_sched_s < 0) have no queueing.
 */
static void ttft_under_queueing(void)
{
    toy_setup x;
    make_setup(&x, 1, 2048, 4096, 0);
    sim_request req[3];
    for (int i = 0; i < 3; i++)
        req[i] = (sim_request){.prompt_tokens = 10, .output_tokens = 20};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 3, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.n_steps, 60);
    const double service = req[0].finish_s, wp = seen.s[0].wall_s;
    CHECK_REL(req[1].first_sched_s, service, 1e-12);
    CHECK_REL(req[2].first_sched_s, 2.0 * service, 1e-12);
    sim_serve_stats st;
    double scratch[3];
    CHECK_INT(sim_serve_stats_compute(req, 3, NULL, 0, 0.0, 0.0, 0.0, scratch, &st), SIM_OK);
    CHECK_REL(st.queue_s.mean, service, 1e-12);
    CHECK_REL(st.ttft_s.mean, wp + service, 1e-12);
    CHECK_INT(sim_serve_ttft_queued(&st), 1);
    CHECK_INT(sim_ttft_queued_means(0.5, 1.0), 1); /* the boundary is queued */
    CHECK_INT(sim_ttft_queued_means(0.49, 1.0), 0);
    CHECK_INT(sim_ttft_queued_means(0.0, 0.0), 0);
    for (int i = 0; i < 3; i++)
        req[i].first_sched_s = -1.0;
    CHECK_INT(sim_serve_stats_compute(req, 3, NULL, 0, 0.0, 0.0, 0.0, scratch, &st), SIM_OK);
    CHECK_REL(st.queue_s.mean, 0.0, 0.0);
    CHECK_INT(sim_serve_ttft_queued(&st), 0);
}

/*
 * Preemption by recompute (blocks of 4 tokens; 6 blocks, one of them vLLM's null block,
 * so 5 usable). Two 8-token prompts, 5 output tokens each, max_model_len 24.
 * Step 1: both prefilled (2 blocks each), free 1. Step 2: request 0 needs a 3rd block
 * (9 tokens): free 0; request 1 needs one too, none is free: the last running request is
 * preempted, and it is request 1 itself (its 2 blocks freed: free 2); nothing waiting is
 * admitted in a step that preempted. Steps 3-5: request 0 decodes (10, 11, 12 tokens fit
 * 3 blocks); request 1 (waiting, 8 + 1 = 9 tokens to recompute = 3 blocks) does not fit in
 * 2 free blocks. Request 0 finishes at step 5 (its 5th token), freeing 3. Step 6: request 1
 * recomputes 9 tokens and samples its 2nd token; steps 7-9 decode its 3rd-5th.
 * 9 steps, 1 preemption, 8 tokens recomputed (the 9th was never computed). KV use is
 * read after each step's scheduling: 4 blocks after step 1, 3 after step 2 (request 0's
 * third block taken, request 1's two freed), so the peak is 4.
 */
static void preemption_and_resumption(void)
{
    toy_setup x;
    make_setup(&x, 256, 2048, 24, 6);
    sim_request req[2] = {{.prompt_tokens = 8, .output_tokens = 5},
                          {.prompt_tokens = 8, .output_tokens = 5}};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 2, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.kv_blocks, 6);
    CHECK_INT(r.n_steps, 9);
    CHECK_INT(r.preemptions, 1);
    CHECK_INT(r.recomputed_tokens, 8);
    CHECK_INT(req[1].n_preemptions, 1);
    CHECK_INT(req[0].n_preemptions, 0);
    CHECK_INT(seen.s[1].n_preempted, 1);
    CHECK_INT(seen.s[1].n_seqs, 1);
    CHECK_INT(seen.s[2].n_seqs, 1);
    CHECK_INT(seen.s[5].n_prefill_tokens, 9);
    CHECK_INT(r.peak_kv_blocks, 4);
    double t = 0.0;
    for (int i = 0; i < 5; i++)
        t += seen.s[i].wall_s;
    CHECK_REL(req[0].finish_s, t, 1e-12);
}

/*
 * One request alone: TTFT is the prefill step, each further token one decode step at the
 * growing context, so E2E = sum of the steps and TPOT = (E2E - TTFT) / (O - 1).
 * With async scheduling a step takes max(GPU, host) instead of the sum.
 */
static void single_request_latencies(void)
{
    for (int async = 0; async < 2; async++) {
        toy_setup x;
        make_setup(&x, 256, 2048, 4096, 0);
        x.e.async_scheduling = async;
        sim_request req = {.prompt_tokens = 33, .output_tokens = 4};
        steps_seen seen = {0};
        sim_serve_result r;
        CHECK_INT(serve(&x, &req, 1, 0, &seen, &r), SIM_OK);
        CHECK_INT(r.n_steps, 4);
        double want_e2e = 0.0;
        for (int i = 0; i < 4; i++) {
            sim_step st = {0};
            st.n_groups = 1;
            st.groups[0] = i == 0 ? (sim_group){1, 33, 0, 1} : (sim_group){1, 1, 32 + i, 1};
            sim_step_cost c;
            sim_step_cost_compute(&x.m, &x.hw, &x.run, &st, &c);
            double host = 1e-3 + 1e-5;
            double wall = async ? fmax(c.step_s, host) : c.step_s + host;
            want_e2e += wall;
            if (i == 0)
                CHECK_REL(req.first_token_s, wall, 1e-12);
        }
        CHECK_REL(req.finish_s, want_e2e, 1e-12);
        double scratch[1];
        sim_serve_stats stt;
        CHECK_INT(sim_serve_stats_compute(&req, 1, NULL, 0, 0.0, 0.0, 0.0, scratch, &stt), SIM_OK);
        CHECK_REL(stt.tpot_s.mean, (want_e2e - req.first_token_s) / 3.0, 1e-12);
        CHECK_REL(stt.e2e_s.p99, want_e2e, 1e-12);
    }
}

/*
 * A closed-loop client's next request reaches the engine only after the engine has scheduled
 * its next step (vLLM's EngineCore busy loop emits a step's outputs and schedules the next step
 * before a client can answer), except when the engine is idle and blocks on its input queue.
 * Two clients, four 8-token prompts; outputs 2, 5, 2, 1 tokens. By hand, synchronous loop:
 *   step 1: requests 0 and 1 prefill (16 tokens), each samples its first token;
 *   step 2: both decode (2 tokens); request 0 has its 2 tokens and leaves: its client sends
 *           request 2 at the end of step 2;
 *   step 3: request 1 alone (1 token): request 2 is not seen yet;
 *   step 4: request 1 decodes, request 2 prefills (9 tokens);
 *   step 5: both decode (2 tokens); both leave; request 3 is sent at the end of step 5;
 *   step 6: the engine was idle, so request 3 is taken at once: 8 tokens, its only token.
 * With async scheduling (vLLM 0.14 and later) the engine keeps one step scheduled ahead, so
 * the step after next is already scheduled when a request leaves, and its client's next
 * request joins the step after that:
 *   steps 1 and 2 as above; steps 3 and 4: request 1 alone (1 token each; both were
 *   scheduled before request 2 came); step 5: request 1's 5th token, request 2 prefills (9
 *   tokens); request 1 leaves and request 3 is sent at the end of step 5; step 6: request 2's
 *   second token (1 token); it leaves; step 7: nothing was left to schedule ahead, so the
 *   engine took request 3 as it came: 8 tokens.
 */
static void closed_loop_request_reaches_the_engine_late(void)
{
    static const struct {
        int n_steps;
        int64_t tokens[7];
        int first2, first3; /* steps (0-based) that sample the first tokens of requests 2, 3 */
    } want[2] = {{6, {16, 2, 1, 9, 2, 8}, 3, 5}, {7, {16, 2, 1, 1, 9, 1, 8}, 4, 6}};
    for (int async = 0; async < 2; async++) {
        toy_setup x;
        make_setup(&x, 256, 2048, 4096, 0);
        x.e.async_scheduling = async;
        sim_request req[4] = {{.prompt_tokens = 8, .output_tokens = 2},
                              {.prompt_tokens = 8, .output_tokens = 5},
                              {.prompt_tokens = 8, .output_tokens = 2},
                              {.prompt_tokens = 8, .output_tokens = 1}};
        steps_seen seen = {0};
        sim_serve_result r;
        const int n = want[async].n_steps;
        CHECK_INT(serve(&x, req, 4, 2, &seen, &r), SIM_OK);
        CHECK_INT(r.n_steps, n);
        double end[7], t = 0.0;
        for (int i = 0; i < n && i < seen.n; i++) {
            CHECK_INT(seen.s[i].n_tokens, want[async].tokens[i]);
            end[i] = (t += seen.s[i].wall_s);
        }
        if (seen.n < n)
            continue;
        CHECK_REL(req[2].arrival_s, end[1], 1e-12);
        CHECK_REL(req[2].first_token_s, end[want[async].first2], 1e-12);
        CHECK_REL(req[3].arrival_s, end[4], 1e-12);
        CHECK_REL(req[3].first_token_s, end[want[async].first3], 1e-12);
    }
}

/*
 * An open-loop request that arrives while a step runs is seen by the next scheduling: with
 * the synchronous loop that is the next step; with async scheduling the next step was
 * scheduled when the running one started, so it is the one after. Request 0 (prompt 8,
 * output 6) arrives at 0; request 1 (prompt 8, output 1) arrives during step 2 (halfway
 * through it, at end 1 + wall 2 / 2). Synchronous: request 1 prefills in step 3; async: in
 * step 4.
 */
static void open_loop_arrival_with_async_scheduling(void)
{
    for (int async = 0; async < 2; async++) {
        toy_setup x;
        make_setup(&x, 256, 2048, 4096, 0);
        x.e.async_scheduling = async;
        /* The step times of request 0 alone, to place request 1 inside step 2. */
        sim_request alone = {.prompt_tokens = 8, .output_tokens = 6};
        steps_seen first = {0};
        sim_serve_result r;
        CHECK_INT(serve(&x, &alone, 1, 0, &first, &r), SIM_OK);
        sim_request req[2] = {{.prompt_tokens = 8, .output_tokens = 6},
                              {.prompt_tokens = 8, .output_tokens = 1}};
        req[1].arrival_s = first.s[0].wall_s + 0.5 * first.s[1].wall_s;
        steps_seen seen = {0};
        CHECK_INT(serve(&x, req, 2, 0, &seen, &r), SIM_OK);
        const int want = async ? 3 : 2; /* index of the step that prefills request 1 */
        for (int i = 0; i < seen.n && i < MAX_STEPS; i++)
            CHECK_INT(seen.s[i].n_prefill_tokens, i == 0 || i == want ? 8 : 0);
    }
}

/*
 * Little's law for a closed loop with no think time: every client always has one request
 * in the system, so throughput x mean E2E = concurrency, up to the ramp at both ends of the
 * measured window (2000 requests after 200 warm-up: within 2%).
 */
static void closed_loop_obeys_littles_law(void)
{
    toy_setup x;
    make_setup(&x, 256, 256, 4096, 0);
    static sim_request req[2200];
    sim_workload_spec spec = {SIM_ARRIVAL_CLOSED, 16, 0.0, 1.0, 100, 20, 0.3, 2000, 200, 7, 0, 0};
    sim_workload_generate(&spec, req, 2200);
    static int32_t queue[2201], running[2200];
    static sim_itl_entry itl[2200 * 30];
    static double scratch[2200];
    sim_workload w = {req, 2200, 16};
    sim_serve_scratch scr = {queue, running, itl, 2200 * 30, 0, NULL, NULL, NULL, 0};
    sim_serve_result r;
    CHECK_INT(sim_serve_simulate(toy_su(&x), &w, &scr, NULL, NULL, &r, &x.err), SIM_OK);
    sim_serve_stats st;
    CHECK_INT(sim_serve_stats_compute(req + 200, 2000, itl, r.n_itl, 0.0, 0.0, 0.0, scratch, &st),
              SIM_OK);
    CHECK_REL(st.request_throughput_per_s * st.e2e_s.mean, 16.0, 0.02);
    CHECK_INT(r.running_peak, 16);
    /* Closed loop: a client's next request arrives when its previous one finishes. */
    int64_t arrivals_at_finish = 0;
    for (int i = 16; i < 2200; i++)
        for (int j = 0; j < i && !arrivals_at_finish; j++)
            if (req[j].finish_s == req[i].arrival_s)
                arrivals_at_finish++;
    CHECK(arrivals_at_finish > 0);
}

/*
 * Decode runs (sched_v1.c decode_run) price stretches of identical decode steps without the
 * scheduler, in closed form; they must change nothing but rounding. On 300 random workloads
 * (closed loops and Poisson or bursty open loops; short and long prompts, so chunked prefill;
 * tight KV pools, so preemption; small max_num_seqs, so a waiting queue; with and without
 * async scheduling) every count equals the step-by-step run's (exact_steps) and every
 * request's times, every summed time and every ITL entry agree to 1e-9 relative (issue 26:
 * the same decisions, the same per-request times to 1e-9). (Data-parallel ranks run this same
 * function; pipeline stages step every batch.)
 */
/* splitmix64: the next of a sequence of random 64-bit numbers. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* |a - b| <= 1e-9 max(|a|, |b|): the same time up to the rounding of a closed-form sum. */
static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

static void decode_runs_equal_stepping(void)
{
    static sim_request a[400], b[400], c[400];
    static int32_t queue[401], running[400], heap[400];
    static sim_itl_entry itl_a[400 * 160], itl_b[400 * 160], itl_c[400 * 160];
    uint64_t g = 12345;
    int n_cases = 0, with_preemption = 0, with_queue = 0;
    for (int t = 0; t < 300; t++) {
        toy_setup x;
        const int64_t seqs = 2 + (int64_t)(next_u64(&g) % 40);
        const int64_t budget = 16 + (int64_t)(next_u64(&g) % 200);
        make_setup(&x, seqs, budget, 400, 0); /* prompts <= 224, outputs <= 112 tokens */
        x.e.async_scheduling = (int)(next_u64(&g) & 1);
        /* 101 blocks of 4 tokens hold one max_model_len request: a tight pool preempts. */
        const int tight = next_u64(&g) % 2 == 0;
        toy_set_blocks(&x, tight ? 101 + (int64_t)(next_u64(&g) % 100) : 4000);
        const int closed = (int)(next_u64(&g) & 1);
        const int64_t n = 50 + (int64_t)(next_u64(&g) % 300);
        const int64_t conc = closed ? 1 + (int64_t)(next_u64(&g) % 48) : 0;
        const double rate = 5.0 + (double)(next_u64(&g) % 400);
        const double burst = next_u64(&g) % 2 ? 1.0 : 0.3;
        const int64_t prompt = 4 + (int64_t)(next_u64(&g) % 120);
        const int64_t out = 2 + (int64_t)(next_u64(&g) % 60);
        const double range = (double)(next_u64(&g) % 9) / 10.0;
        sim_workload_spec spec = {closed ? SIM_ARRIVAL_CLOSED : SIM_ARRIVAL_POISSON,
                                  conc,
                                  closed ? 0.0 : rate,
                                  burst,
                                  prompt,
                                  out,
                                  range,
                                  n,
                                  0,
                                  next_u64(&g),
                                  0,
                                  0};
        sim_workload_generate(&spec, a, n);
        for (int64_t i = 0; i < n; i++)
            b[i] = c[i] = a[i];
        /* a: decode runs and the decode aggregate (sched_v1.c); c: decode runs only. */
        sim_serve_scratch fast = {queue, running, itl_a, 400 * 160, 0, heap, NULL, NULL, 0};
        sim_serve_scratch exact = {queue, running, itl_b, 400 * 160, 1, NULL, NULL, NULL, 0};
        sim_serve_scratch runs = {queue, running, itl_c, 400 * 160, 0, NULL, NULL, NULL, 0};
        sim_serve_result ra, rb, rc;
        sim_status sa = sim_serve_simulate(toy_su(&x), &(sim_workload){a, n, conc}, &fast, NULL,
                                           NULL, &ra, &x.err);
        sim_status sb = sim_serve_simulate(toy_su(&x), &(sim_workload){b, n, conc}, &exact, NULL,
                                           NULL, &rb, &x.err);
        sim_status sc = sim_serve_simulate(toy_su(&x), &(sim_workload){c, n, conc}, &runs, NULL,
                                           NULL, &rc, &x.err);
        CHECK_INT(sa, sb);
        CHECK_INT(sc, sb);
        if (sa != SIM_OK || sb != SIM_OK || sc != SIM_OK)
            continue;
        CHECK_INT(rc.n_steps, rb.n_steps);
        CHECK_INT(rc.n_itl, rb.n_itl);
        CHECK(near(rc.end_s, rb.end_s) && near(rc.roofline_sum_s, rb.roofline_sum_s));
        int same_c = 1;
        for (int64_t i = 0; i < n; i++)
            same_c &= near(c[i].first_token_s, b[i].first_token_s) &&
                      near(c[i].finish_s, b[i].finish_s) && near(c[i].arrival_s, b[i].arrival_s) &&
                      near(c[i].first_sched_s, b[i].first_sched_s) &&
                      c[i].n_preemptions == b[i].n_preemptions;
        CHECK(same_c);
        n_cases++;
        with_preemption += rb.preemptions > 0;
        with_queue += rb.queue_peak > 0;
        CHECK_INT(ra.n_steps, rb.n_steps);
        CHECK_INT(ra.preemptions, rb.preemptions);
        CHECK_INT(ra.recomputed_tokens, rb.recomputed_tokens);
        CHECK_INT(ra.peak_kv_blocks, rb.peak_kv_blocks);
        CHECK_INT(ra.queue_peak, rb.queue_peak);
        CHECK_INT(ra.running_peak, rb.running_peak);
        CHECK_INT(ra.n_prefill_steps, rb.n_prefill_steps);
        CHECK_INT(ra.n_itl, rb.n_itl);
        CHECK(near(ra.end_s, rb.end_s) && near(ra.busy_s, rb.busy_s) &&
              near(ra.prefill_s, rb.prefill_s) && near(ra.roofline_sum_s, rb.roofline_sum_s) &&
              near(ra.host_sum_s, rb.host_sum_s));
        int same = 1;
        for (int64_t i = 0; i < n; i++)
            same &= near(a[i].first_token_s, b[i].first_token_s) &&
                    near(a[i].finish_s, b[i].finish_s) && near(a[i].arrival_s, b[i].arrival_s) &&
                    near(a[i].first_sched_s, b[i].first_sched_s) &&
                    a[i].n_preemptions == b[i].n_preemptions;
        for (int64_t i = 0; i < ra.n_itl && i < rb.n_itl; i++)
            same &= near(itl_a[i].itl_s, itl_b[i].itl_s) && itl_a[i].count == itl_b[i].count;
        CHECK(same);
    }
    printf("  decode runs: %d workloads compared, %d with preemption, %d with a queue\n", n_cases,
           with_preemption, with_queue);
    CHECK(n_cases > 250);
    CHECK(with_preemption > 20);
    CHECK(with_queue > 100);
}

/* The schedule's invariants after every step (the serving fuzz target checks the same). */
typedef struct step_props {
    int64_t max_seqs, max_tokens, pp, n, bad;
    double last_start;
} step_props;

static void check_props(void *ctx, const sim_serve_step *st)
{
    step_props *c = ctx;
    c->n++;
    /* With pp batches in flight, each batch holds at most max_num_seqs requests and the
     * budget; the KV pool is shared. Steps are scheduled in time order. */
    c->bad += !(st->n_seqs >= 1 && st->n_seqs <= c->max_seqs);
    c->bad += !(st->n_tokens >= st->n_seqs && st->n_tokens <= c->max_tokens);
    c->bad += !(st->n_prefill_tokens >= 0 && st->n_prefill_tokens <= st->n_tokens);
    c->bad += !(st->n_prefill_seqs >= 0 && st->n_prefill_seqs <= st->n_seqs);
    c->bad += !(st->kv_used_blocks >= 0 && st->kv_used_blocks <= st->kv_blocks);
    c->bad += !(isfinite(st->wall_s) && st->wall_s > 0.0 && st->start_s >= c->last_start);
    c->last_start = st->start_s;
}

/*
 * A property test of the scheduler on random workloads, with and without pipeline stages (2 to
 * 4, batches in flight), tight KV pools (preemption), small budgets (chunked prefill) and small
 * max_num_seqs (a queue): every step keeps the invariants above, every request is served whole
 * (all its tokens, first token after arrival, finish after first token, by the run's end), and
 * the preemptions counted per request add up to the run's.
 */
static void schedule_properties_on_random_workloads(void)
{
    static sim_request req[300];
    static int32_t queue[301], running[300];
    uint64_t g = 777;
    int n_cases = 0, with_pp = 0, with_preemption = 0;
    for (int t = 0; t < 200; t++) {
        toy_setup x;
        const int64_t seqs = 2 + (int64_t)(next_u64(&g) % 30);
        const int64_t budget = 16 + (int64_t)(next_u64(&g) % 200);
        make_setup(&x, seqs, budget, 400, 0);
        x.m.n_layers = 4; /* up to a layer a stage */
        x.e.async_scheduling = (int)(next_u64(&g) & 1);
        x.run.pp = next_u64(&g) % 2 ? 1 : 2 + (int)(next_u64(&g) % 3);
        toy_set_blocks(&x, next_u64(&g) % 2 ? 101 + (int64_t)(next_u64(&g) % 100) : 4000);
        const int closed = (int)(next_u64(&g) & 1);
        const int64_t n = 20 + (int64_t)(next_u64(&g) % 200);
        sim_workload_spec spec = {closed ? SIM_ARRIVAL_CLOSED : SIM_ARRIVAL_POISSON,
                                  closed ? 1 + (int64_t)(next_u64(&g) % 40) : 0,
                                  5.0 + (double)(next_u64(&g) % 300),
                                  1.0,
                                  4 + (int64_t)(next_u64(&g) % 120),
                                  2 + (int64_t)(next_u64(&g) % 60),
                                  (double)(next_u64(&g) % 9) / 10.0,
                                  n,
                                  0,
                                  next_u64(&g),
                                  0,
                                  0};
        sim_workload_generate(&spec, req, n);
        step_props c = {x.s.max_num_seqs, x.s.max_num_batched_tokens, x.run.pp, 0, 0, 0.0};
        sim_serve_scratch scr = {queue, running, NULL, 0, 0, NULL, NULL, NULL, 0};
        sim_serve_result r;
        if (sim_serve_simulate(toy_su(&x), &(sim_workload){req, n, spec.concurrency}, &scr,
                               check_props, &c, &r, &x.err) != SIM_OK) {
            printf("  properties: case %d: %s\n", t, x.err.msg);
            CHECK(0);
            continue;
        }
        n_cases++;
        with_pp += x.run.pp > 1;
        with_preemption += r.preemptions > 0;
        CHECK_INT(c.bad, 0);
        CHECK_INT(c.n, r.n_steps);
        int64_t preempted = 0, whole = 1;
        for (int64_t i = 0; i < n; i++) {
            const sim_request *q = &req[i];
            preempted += q->n_preemptions;
            whole &= q->generated == q->output_tokens && q->first_token_s > q->arrival_s &&
                     q->finish_s >= q->first_token_s && q->finish_s <= r.end_s && q->blocks == 0;
        }
        CHECK(whole);
        CHECK_INT(preempted, r.preemptions);
    }
    printf("  properties: %d workloads, %d with pipeline stages, %d with preemption\n", n_cases,
           with_pp, with_preemption);
    CHECK(n_cases == 200 && with_pp > 50 && with_preemption > 20);
}

/*
 * numpy.percentile (linear): for {1, 2, 3, 4}, p50 at position 1.5 = 2.5, p90 at 2.7 = 3.7,
 * p99 at 2.97 = 3.97. ITL run-length list {0.01 x 3, 0.02 x 1} expands to
 * {0.01, 0.01, 0.01, 0.02}: p50 (position 1.5) = 0.01, p90 (2.7) = 0.01 + 0.7 x 0.01 =
 * 0.017, mean 0.0125.
 */
static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * The statistics select ranks in place without the C library (serve_stats.c); on large random
 * sets, sorted, reversed and with many equal values, the percentiles equal those of a
 * qsort-sorted copy read the numpy way (rank p/100 x (n - 1), linear between neighbours),
 * exactly, and an ITL run-length list gives the percentiles of its expansion, exactly.
 */
static void percentiles_of_large_sets(void)
{
    enum { N = 5000 };
    static sim_request req[N];
    static double scratch[N], ref[N];
    static sim_itl_entry itl[N];
    static double expanded[N * 3];
    uint64_t g = 99;
    for (int shape = 0; shape < 4; shape++) {
        int64_t n_exp = 0;
        for (int i = 0; i < N; i++) {
            double ttft;
            if (shape == 0)
                ttft = (double)(next_u64(&g) % 1000000) * 1e-6;
            else if (shape == 1)
                ttft = (double)i * 1e-3;
            else if (shape == 2)
                ttft = (double)(N - i) * 1e-3;
            else
                ttft = (double)(next_u64(&g) % 7) * 0.01; /* many equal values */
            req[i] = (sim_request){.arrival_s = 0.0,
                                   .prompt_tokens = 1,
                                   .output_tokens = 2,
                                   .first_token_s = ttft,
                                   .finish_s = ttft + 1.0,
                                   .generated = 2};
            ref[i] = ttft;
            const double c = (double)(1 + next_u64(&g) % 3);
            itl[i] = (sim_itl_entry){shape == 3 ? ttft : (double)(next_u64(&g) % 5000) * 1e-5, c};
            for (int k = 0; k < (int)c; k++)
                expanded[n_exp++] = itl[i].itl_s;
        }
        sim_serve_stats st;
        CHECK_INT(sim_serve_stats_compute(req, N, itl, N, 0.0, 0.0, 0.0, scratch, &st), SIM_OK);
        qsort(ref, N, sizeof(double), cmp_dbl);
        qsort(expanded, (size_t)n_exp, sizeof(double), cmp_dbl);
        CHECK(st.ttft_s.p50 == sim_percentile_sorted(ref, N, 50.0));
        CHECK(st.ttft_s.p90 == sim_percentile_sorted(ref, N, 90.0));
        CHECK(st.ttft_s.p99 == sim_percentile_sorted(ref, N, 99.0));
        CHECK(st.e2e_s.p90 == st.ttft_s.p90 + 1.0 ||
              fabs(st.e2e_s.p90 - st.ttft_s.p90 - 1.0) < 1e-12);
        CHECK(st.itl_s.p50 == sim_percentile_sorted(expanded, n_exp, 50.0));
        CHECK(st.itl_s.p90 == sim_percentile_sorted(expanded, n_exp, 90.0));
        CHECK(st.itl_s.p99 == sim_percentile_sorted(expanded, n_exp, 99.0));
    }
}

static void percentiles_on_hand_made_sets(void)
{
    const double v[4] = {1, 2, 3, 4};
    CHECK_REL(sim_percentile_sorted(v, 4, 50.0), 2.5, 1e-15);
    CHECK_REL(sim_percentile_sorted(v, 4, 90.0), 3.7, 1e-15);
    CHECK_REL(sim_percentile_sorted(v, 4, 99.0), 3.97, 1e-15);
    CHECK_REL(sim_percentile_sorted(v, 1, 99.0), 1.0, 0.0);
    /* Two requests served by hand: TTFT 0.1 and 0.3, E2E 1.1 and 0.9, 3 outputs each. */
    sim_request req[2] = {
        {.arrival_s = 0.0,
         .prompt_tokens = 5,
         .output_tokens = 3,
         .first_token_s = 0.1,
         .finish_s = 1.1,
         .generated = 3},
        {.arrival_s = 0.5,
         .prompt_tokens = 5,
         .output_tokens = 3,
         .first_token_s = 0.8,
         .finish_s = 1.4,
         .generated = 3},
    };
    sim_itl_entry itl[2] = {{0.02, 1.0}, {0.01, 3.0}};
    double scratch[2];
    sim_serve_stats st;
    CHECK_INT(sim_serve_stats_compute(req, 2, itl, 2, 0.2, 0.5, 0.0, scratch, &st), SIM_OK);
    CHECK_REL(st.ttft_s.mean, 0.2, 1e-12);
    CHECK_REL(st.ttft_s.p50, 0.2, 1e-12);
    CHECK_REL(st.ttft_s.p90, 0.1 + 0.9 * 0.2, 1e-12);
    CHECK_REL(st.tpot_s.mean, (0.5 + 0.3) / 2.0, 1e-12); /* (1.0 / 2, 0.6 / 2) */
    CHECK_REL(st.e2e_s.mean, 1.0, 1e-12);
    CHECK_REL(st.itl_s.mean, 0.0125, 1e-12);
    CHECK_REL(st.itl_s.p50, 0.01, 1e-12);
    CHECK_REL(st.itl_s.p90, 0.017, 1e-12);
    CHECK_REL(st.duration_s, 1.4, 1e-12);
    CHECK_REL(st.request_throughput_per_s, 2.0 / 1.4, 1e-12);
    CHECK_REL(st.output_tokens_per_s, 6.0 / 1.4, 1e-12);
    /* SLOs TTFT 0.2 s, TPOT 0.5 s: the first request (0.1, 0.5) meets both; the second's
     * TTFT 0.3 misses. */
    CHECK_INT(st.n_good, 1);
    CHECK_REL(sim_serve_stats_metric(&st, SIM_METRIC_TPOT_MEAN), 0.4, 1e-12);
    CHECK_REL(sim_serve_stats_metric(&st, SIM_METRIC_E2E_P50), 1.0, 1e-12);
    /* A client path of 50 ms (docs/serving.md, "The client path") lies outside the engine:
     * every TTFT and E2E is 50 ms longer (TTFT 0.15 and 0.35: mean 0.25; E2E 1.15 and 0.95),
     * TPOT and ITL are the engine's, and the run lasts 1.4 + 0.05 s as the client sees it.
     * The first request's TTFT (0.15 s) still meets the 0.2 s SLO: one good request. */
    itl[0] = (sim_itl_entry){0.02, 1.0};
    itl[1] = (sim_itl_entry){0.01, 3.0};
    CHECK_INT(sim_serve_stats_compute(req, 2, itl, 2, 0.2, 0.5, 0.05, scratch, &st), SIM_OK);
    CHECK_REL(st.ttft_s.mean, 0.25, 1e-12);
    CHECK_REL(st.ttft_s.p90, 0.15 + 0.9 * 0.2, 1e-12);
    CHECK_REL(st.e2e_s.mean, 1.05, 1e-12);
    CHECK_REL(st.tpot_s.mean, 0.4, 1e-12);
    CHECK_REL(st.itl_s.mean, 0.0125, 1e-12);
    CHECK_REL(st.duration_s, 1.45, 1e-12);
    CHECK_INT(st.n_good, 1);
    /* With a client path of 0.15 s the first request's TTFT (0.1 + 0.15 = 0.25 s) misses the
     * 0.2 s SLO too: no good request. */
    CHECK_INT(sim_serve_stats_compute(req, 2, itl, 2, 0.2, 0.5, 0.15, scratch, &st), SIM_OK);
    CHECK_INT(st.n_good, 0);
}

/*
 * The V1 memory budget: CUDA-reported total x utilization - weights - activations -
 * (reserve + reserve per TP + CUDA graphs). Toy numbers: total 10 GB reported, utilization
 * 0.9, reserve 0.5 GB, CUDA graphs 0.25 GB. Weights of the toy model at fp16: embedding and
 * LM head 2 x 64 x 64, q, k, v, o 4 x 64 x 64, MLP 3 x 64 x 128, norms 3 x 64 elements:
 * (8192 + 16384 + 24576 + 192) x 2 B = 98688 B. Activations, the larger phase of the profiling
 * run (budget 2048 tokens, 256 sequences, vocabulary 64, 100 SMs): the forward pass
 * 2048 x (2 x 64 + 3 x 128) x 2 B = 2097152 B against the sampler 256 x 64 x (2 + b) +
 * 100 x 64 x b_sm + 2048 x 64 x 2 B: with the toy engine's b = b_sm = 0, 32768 + 262144 =
 * 294912 B, so 2097152 B; with b = 200 and b_sm = 4, 3309568 + 25600 + 262144 = 3597312 B.
 * KV bytes per token: 2 x 1 layer x 1 head x 64 x 2 B = 256 B; blocks of 4 tokens = 1 KiB.
 */
static void v1_memory_budget(void)
{
    toy_setup x;
    make_setup(&x, 256, 2048, 4096, 0);
    x.e.reserve_bytes = 0.5e9;
    x.e.cudagraph_bytes = 0.25e9;
    x.hw.v[SIM_HWF_MEM_CUDA_TOTAL] = 10e9;
    x.s.gpu_memory_utilization = 0.9;
    sim_memory mem;
    sim_memory_compute(toy_su(&x), &mem);
    CHECK_REL(mem.capacity_bytes, 10e9, 0.0);
    CHECK_REL(mem.weights_bytes, 98688.0, 1e-12);
    CHECK_REL(mem.activation_bytes, 2097152.0, 1e-12);
    CHECK_REL(mem.reserve_bytes, 0.75e9, 1e-12);
    const double budget = 9e9 - 98688.0 - 2097152.0 - 0.75e9;
    CHECK_REL(mem.kv_budget_bytes, budget, 1e-12);
    CHECK_INT(mem.kv_blocks, (int64_t)floor(budget / 1024.0));
    /* A sampler working set larger than the forward pass sets the peak. */
    x.e.sampler_logit_bytes = 200.0;
    x.e.sampler_sm_vocab_bytes = 4.0;
    sim_memory_compute(toy_su(&x), &mem);
    CHECK_REL(mem.activation_bytes, 3597312.0, 1e-12);
    x.e.sampler_logit_bytes = 0.0;
    x.e.sampler_sm_vocab_bytes = 0.0;
    /* Eager mode captures no graphs. */
    x.s.enforce_eager = 1;
    sim_memory_compute(toy_su(&x), &mem);
    CHECK_REL(mem.reserve_bytes, 0.5e9, 1e-12);
}

/* vLLM's usage-context defaults: large (>= 70 GiB, not an A100) versus other GPUs. */
static void v1_defaults_by_usage_and_memory(void)
{
    sim_engine e;
    toy_v1(&e);
    e.default_seqs[SIM_USAGE_SERVER][1] = 1024;
    e.default_tokens[SIM_USAGE_SERVER][1] = 8192;
    e.default_tokens[SIM_USAGE_SERVER][0] = 2048;
    e.default_tokens[SIM_USAGE_LLM][1] = 16384;
    e.large_gpu_min_bytes = 70.0 * 1073741824.0;
    snprintf(e.large_gpu_exclude, sizeof(e.large_gpu_exclude), "a100");
    toy_setup x;
    toy_setup_init(&x, &e);
    x.m.max_pos = 32768;
    toy_hw(&x.hw, 85e9);
    x.hw.v[SIM_HWF_MEM_CUDA_TOTAL] = 85e9;
    x.in.usage = SIM_USAGE_SERVER;
    CHECK_INT(toy_resolve(&x), SIM_OK);
    CHECK_INT(x.s.max_num_batched_tokens, 8192);
    CHECK_INT(x.s.max_num_seqs, 1024);
    CHECK_INT(x.s.enable_chunked_prefill, 1);
    x.in.usage = SIM_USAGE_LLM;
    CHECK_INT(toy_resolve(&x), SIM_OK);
    CHECK_INT(x.s.max_num_batched_tokens, 16384);
    /* An 80 GB A100 gets the small defaults. */
    snprintf(x.hw.name, sizeof(x.hw.name), "NVIDIA A100 SXM4 80GB");
    x.in.usage = SIM_USAGE_SERVER;
    CHECK_INT(toy_resolve(&x), SIM_OK);
    CHECK_INT(x.s.max_num_batched_tokens, 2048);
    /* So does a 24 GB GPU. */
    toy_hw(&x.hw, 24e9);
    CHECK_INT(toy_resolve(&x), SIM_OK);
    CHECK_INT(x.s.max_num_batched_tokens, 2048);
    CHECK_INT(x.s.max_num_seqs, 256);
    /* V1 always chunks prefills. */
    x.in.enable_chunked_prefill = 0;
    CHECK_INT(toy_resolve(&x), SIM_EINVAL);
}

/* Bad workloads are refused with the request named: request 1 arrives at 1.0 s with 8 + 4
 * tokens (max_model_len 100); each case changes request 2, or request 1's output. */
static void bad_workloads_refused(void)
{
    static const struct {
        double arrival_2_s;
        int64_t prompt_2, output_1;
        const char *msg;
    } cases[] = {
        {0.5, 8, 4, "request 2: arrival_s"},
        {2.0, 99, 4, "request 2: prompt_tokens 99 + output_tokens 4 exceed max_model_len"},
        {2.0, 8, 0, "request 1: prompt_tokens and output_tokens must be >= 1"},
    };
    toy_setup x;
    make_setup(&x, 256, 2048, 100, 0);
    static int32_t queue[3], running[2];
    sim_serve_scratch scr = {queue, running, NULL, 0, 0, NULL, NULL, NULL, 0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_request req[2] = {
            {.arrival_s = 1.0, .prompt_tokens = 8, .output_tokens = cases[i].output_1},
            {.arrival_s = cases[i].arrival_2_s,
             .prompt_tokens = cases[i].prompt_2,
             .output_tokens = 4}};
        sim_workload w = {req, 2, 0};
        sim_serve_result r;
        CHECK_INT(sim_serve_simulate(toy_su(&x), &w, &scr, NULL, NULL, &r, &x.err), SIM_ERANGE);
        CHECK_CONTAINS(x.err.msg, cases[i].msg);
    }
}

/* Trace files: good lines load; every bad one is named by file, line and field. */
static void trace_files(void)
{
    static const struct {
        const char *file;
        sim_status want;
        const char *msg;
    } cases[] = {
        {"good.jsonl", SIM_OK, ""},
        {"bad_unsorted.jsonl", SIM_EINVAL,
         "bad_unsorted.jsonl:4:2: arrival_s: before the previous request's"},
        {"bad_field.jsonl", SIM_EINVAL, "bad_field.jsonl:2:"},
        {"bad_negative.jsonl", SIM_EINVAL, "bad_negative.jsonl:1:2: arrival_s: out of range"},
        {"bad_tokens.jsonl", SIM_EINVAL, "bad_tokens.jsonl:2:"},
        {"bad_json.jsonl", SIM_EPARSE, "bad_json.jsonl:3:"},
        {"empty.jsonl", SIM_EINVAL, "empty.jsonl: no requests"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/trace/%s", SIM_TEST_DATA, cases[i].file);
        sim_request *req = NULL;
        int64_t n = 0;
        struct sim_err err = {{0}};
        sim_status st = sim_trace_load(path, &req, &n, &err);
        if (st != cases[i].want || !strstr(err.msg, cases[i].msg))
            printf("trace %s: status %d: %s\n", cases[i].file, (int)st, err.msg);
        CHECK_INT(st, cases[i].want);
        CHECK_CONTAINS(err.msg, cases[i].msg);
        if (st == SIM_OK) {
            CHECK_INT(n, 3);
            CHECK_REL(req[2].arrival_s, 0.75, 0.0);
            CHECK_INT(req[1].prompt_tokens, 1034);
            CHECK_INT(req[1].output_tokens, 769);
        } else {
            CHECK(req == NULL);
        }
        free(req);
    }
}

/*
 * Generated workloads: lengths in [floor(L(1-r)), floor(L(1+r))]; Poisson gaps with the
 * mean 1/rate (1000 gaps at 10/s: mean within 10% of 0.1 s, 3 standard errors); the same
 * seed gives the same workload.
 */
static void generated_workloads(void)
{
    static sim_request a[1001], b[1001];
    sim_workload_spec spec = {SIM_ARRIVAL_POISSON, 0, 10.0, 1.0, 1000, 200, 0.5, 1001, 0, 42, 0, 0};
    sim_workload_generate(&spec, a, 1001);
    sim_workload_generate(&spec, b, 1001);
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    CHECK_REL(a[0].arrival_s, 0.0, 0.0);
    int in_range = 1;
    for (int i = 0; i < 1001; i++)
        in_range &= a[i].prompt_tokens >= 500 && a[i].prompt_tokens <= 1500 &&
                    a[i].output_tokens >= 100 && a[i].output_tokens <= 300;
    CHECK(in_range);
    CHECK_REL(a[1000].arrival_s / 1000.0, 0.1, 0.1);
    spec.seed = 43;
    sim_workload_generate(&spec, b, 1001);
    CHECK(memcmp(a, b, sizeof(a)) != 0);
    spec.arrival = SIM_ARRIVAL_CLOSED;
    spec.concurrency = 8;
    CHECK_INT(sim_workload_default_requests(&spec), 80);
    /* aiperf drains its warm-up phase before profiling: the measured phase starts idle. */
    CHECK_INT(sim_workload_default_warmup(&spec), 0);
}

/*
 * Pipeline stages (pp 2), vLLM's batch queue (sched_v1.c serve_pipeline). Budget 8 tokens; A and B
 * (prompt 8, output 1) arrive at t = 0, so each batch holds one of them, which leaves when its
 * prefill samples. The engine schedules batch 1 (A) at 0 and submits it after the host time h of
 * a one-sequence step; with one batch in flight and B waiting, it schedules batch 2 (B) at h
 * without waiting for A and submits it at 2h; then, the queue full, it waits for A's output, and
 * then for B's. A token is out when the engine has its batch's output. Stage times t0, t1 and
 * the transfer x after stage 0 are those of an 8-token prefill (sim_pp_step, tested in
 * test_pipeline.c). A flow shop:
 *   A: stage 0 from h to h + t0, stage 1 from h + t0 + x to a = h + t0 + x + t1;
 *      first token at max(a, 2h)
 *   B: stage 0 from s0 = max(2h, h + t0) (stage 0 is A's until h + t0) to s0 + t0,
 *      stage 1 from max(s0 + t0 + x, a) to b = that + t1; first token at max(b, A's)
 * One batch in flight (every request in one schedule, waiting for it) would give B its first
 * token at 2 (h + t0 + x + t1), later than the pipeline's.
 */
static void pipeline_batches_in_flight(void)
{
    toy_setup x;
    make_setup(&x, 256, 8, 4096, 0);
    x.m.n_layers = 2; /* a layer a stage */
    x.run.pp = 2;
    sim_request req[2] = {{.prompt_tokens = 8, .output_tokens = 1},
                          {.prompt_tokens = 8, .output_tokens = 1}};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 2, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.n_steps, 2);
    sim_step st = {0};
    sim_step_add_group(&st, 1, 8, 0, 1);
    sim_pp_cost pc;
    sim_pp_step(&x.m, &x.hw, &x.run, &st, &pc);
    const double h = sim_engine_host_s(&x.e, 1, 1.0), t0 = pc.stage_s[0], t1 = pc.stage_s[1],
                 xf = pc.transfer_s[0];
    CHECK(t0 > 0.0 && t1 > 0.0 && xf > 0.0 && h > 0.0);
    const double a = h + t0 + xf + t1, a_first = fmax(a, 2.0 * h);
    const double s0 = fmax(2.0 * h, h + t0);
    const double b_first = fmax(fmax(s0 + t0 + xf, a) + t1, a_first);
    CHECK_REL(req[0].first_token_s, a_first, 1e-12);
    CHECK_REL(req[1].first_token_s, b_first, 1e-12);
    CHECK(b_first < 2.0 * a);
    CHECK_REL(req[1].finish_s, b_first, 1e-12);
    /* The second batch was scheduled at h, before the first came back. */
    CHECK_INT(seen.n, 2);
    if (seen.n == 2)
        CHECK_REL(seen.s[1].start_s, h, 1e-12);
    /* More stages than layers: refused, not simulated. */
    x.run.pp = 3;
    CHECK_INT(sim_serve_simulate(toy_su(&x), &(sim_workload){req, 2, 0},
                                 &(sim_serve_scratch){(int32_t[3]){0}, (int32_t[2]){0}, NULL, 0, 0,
                                                      NULL, NULL, NULL, 0},
                                 NULL, NULL, &r, &x.err),
              SIM_EINVAL);
    CHECK_CONTAINS(x.err.msg, "--pp 3");
}

/*
 * Preemption with a batch in flight (pp 2): blocks of 4 tokens, 5 blocks (4 usable: one is the
 * null block), budget 8 tokens; A (prompt 8, output 2) and B (prompt 8, output 6) arrive at 0.
 *   batch 1: A's prompt (2 blocks; 2 free). batch 2, while 1 is in flight: B's prompt (0 free).
 *   batch 1 back: A samples its first token. Schedule: A needs a third block, none is free;
 *     the last running request, B, is in flight, so A itself is preempted (vLLM: the popped
 *     request is the one being scheduled, which is then not scheduled). 2 blocks free.
 *   batch 2 back: B samples. B's tokens 9 to 13 run one a batch (the 9th takes a third block,
 *     1 free; the 13th the fourth, 0 free); A waits meanwhile: the 7 or 8 tokens it would
 *     recompute need 2 blocks. B is done with its 6th token (4 free).
 *   A recomputes 8 of its 9 tokens, then the 9th, and samples its second token.
 * One preemption (A's), nine batches: 8, 8, then B's five single tokens, then A's 8 and 1.
 * Before the fix A, preempted, was also given a block it kept while waiting: B then found no
 * block for its 13th token and was preempted too.
 */
static void pipeline_preempts_the_request_being_scheduled(void)
{
    toy_setup x;
    make_setup(&x, 256, 8, 16, 0);
    x.m.n_layers = 2; /* a layer a stage */
    x.run.pp = 2;
    toy_set_blocks(&x, 5);
    sim_request req[2] = {{.prompt_tokens = 8, .output_tokens = 2},
                          {.prompt_tokens = 8, .output_tokens = 6}};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 2, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.kv_blocks, 5);
    CHECK_INT(r.preemptions, 1);
    CHECK_INT(req[0].n_preemptions, 1);
    CHECK_INT(req[1].n_preemptions, 0);
    CHECK_INT(r.n_steps, 9);
    CHECK_INT(r.recomputed_tokens, 8);
    static const int64_t tokens[9] = {8, 8, 1, 1, 1, 1, 1, 8, 1};
    CHECK_INT(seen.n, 9);
    for (int i = 0; i < 9 && i < seen.n; i++)
        CHECK_INT(seen.s[i].n_tokens, tokens[i]);
    CHECK(req[1].finish_s < req[0].finish_s); /* B leaves before A gets its second token */
}

static void sum_walls(void *ctx, const sim_serve_step *st) { *(double *)ctx += st->wall_s; }

/* A closed loop through two stages obeys Little's law (throughput = concurrency / mean E2E), and
 * keeps more than one batch in flight: the batches' latencies, summed, exceed the time the
 * loop took (one batch at a time, they would add up to it). */
static void pipeline_closed_loop(void)
{
    toy_setup x;
    make_setup(&x, 256, 256, 4096, 0);
    x.m.n_layers = 2;
    x.run.pp = 2;
    x.e.host_step_s = x.e.host_step_tp_s = x.e.host_per_seq_s = 0.0; /* the GPUs' time alone */
    static sim_request req[1100];
    sim_workload_spec spec = {SIM_ARRIVAL_CLOSED, 16, 0.0, 1.0, 100, 20, 0.3, 1000, 100, 7, 0, 0};
    sim_workload_generate(&spec, req, 1100);
    static int32_t queue[1101], running[1100];
    static sim_itl_entry itl[1100 * 30];
    static double scratch[1100];
    sim_workload w = {req, 1100, 16};
    sim_serve_scratch scr = {queue, running, itl, 1100 * 30, 0, NULL, NULL, NULL, 0};
    sim_serve_result r;
    double latencies = 0.0;
    CHECK_INT(sim_serve_simulate(toy_su(&x), &w, &scr, sum_walls, &latencies, &r, &x.err), SIM_OK);
    sim_serve_stats st;
    CHECK_INT(sim_serve_stats_compute(req + 100, 1000, itl, r.n_itl, 0.0, 0.0, 0.0, scratch, &st),
              SIM_OK);
    CHECK_REL(st.request_throughput_per_s * st.e2e_s.mean, 16.0, 0.02);
    /* Batches overlap: their latencies, summed, exceed the span; the busy time (each batch from
     * the previous one's return) does not, and the prefill time is part of it. */
    CHECK(latencies > 1.2 * r.end_s);
    CHECK(r.busy_s <= r.end_s * (1.0 + 1e-12) && r.busy_s > 0.9 * r.end_s);
    CHECK(r.prefill_s > 0.0 && r.prefill_s < r.busy_s);
}

/*
 * The toy model with two layers, layer 0 windowed (sliding_window 8) and layer 1 full
 * (window_period 2, as Gemma-2 and gpt-oss), on the toy V1 engine (blocks of 4 tokens),
 * max_model_len mml and memory for exactly `blocks` blocks of the hybrid layout (two groups of
 * one layer: a block is 4 tokens of one layer). disable: vLLM's disable_hybrid_kv_cache_manager.
 */
static void window_setup(toy_setup *x, int64_t mml, int64_t blocks, int disable)
{
    sim_engine e;
    toy_v1(&e);
    toy_setup_init(x, &e);
    x->m.n_layers = 2;
    x->m.sliding_window = 8;
    x->m.window_period = 2;
    x->m.full_attn_layers = 1;
    x->in.max_model_len = mml;
    CHECK_INT(toy_resolve(x), SIM_OK);
    toy_set_blocks(x, blocks);
    x->in.disable_hybrid_kv = disable;
    CHECK_INT(toy_resolve(x), SIM_OK);
}

/*
 * One request, prompt 8, output 24, alone. A step that starts with c tokens computed and
 * computes one more holds, after vLLM's allocate_slots (free what the window passed, then
 * allocate):
 *   full layer ceil((c + 1) / 4) + windowed layer ceil((c + 1) / 4) - floor(max(0, c - 7) / 4)
 * Step 1 (prefill, c = 0, 8 slots): 2 + 2 = 4. Step 2 (c = 8): 3 + 3 - 0 = 6. Step 5
 * (c = 11): 3 + 3 - 1 = 5. Last step 24 (c = 30): 8 + 8 - 5 = 11, the peak (reached at c = 28).
 * With every layer full (the manager off) a block holds 4 tokens of both layers: the same
 * memory (40.5 one-layer blocks) makes floor(40.5 / 2) = 20 blocks, and the request ends on
 * ceil(31 / 4) = 8 of them, 16 one-layer pages against the credited 11.
 */
static void windowed_layer_frees_blocks_out_of_reach(void)
{
    toy_setup x;
    window_setup(&x, 64, 40, 0);
    sim_request req = {.prompt_tokens = 8, .output_tokens = 24};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, &req, 1, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.kv_blocks, 40);
    CHECK_INT(r.n_steps, 24);
    CHECK_INT(seen.s[0].kv_used_blocks, 4);
    CHECK_INT(seen.s[1].kv_used_blocks, 6);
    CHECK_INT(seen.s[4].kv_used_blocks, 5);
    CHECK_INT(seen.s[23].kv_used_blocks, 11);
    CHECK_INT(r.peak_kv_blocks, 11);
    CHECK_REL(r.peak_kv_frac, 11.0 / 39.0, 1e-15); /* one of the 40 is vLLM's null block */
    window_setup(&x, 64, 40, 1);
    seen.n = 0;
    CHECK_INT(serve(&x, &req, 1, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.kv_blocks, 20);
    CHECK_INT(r.peak_kv_blocks, 8);
}

/*
 * Two such requests at once (max_model_len 32) with memory for 23 one-layer blocks (22 usable):
 * they run in lockstep and peak together at 2 x 11 = 22, so nothing is preempted. vLLM budgets
 * one 32-token request at 8 + ceil(min(7 + 2048, 32) / 4) + 1 = 17 <= 23 blocks, so it starts.
 * Without the credit the same memory is floor(23.5 / 2) = 11 blocks (10 usable) and the two
 * need 2 x 8: one is preempted.
 */
static void windowed_credit_avoids_preemption(void)
{
    toy_setup x;
    window_setup(&x, 32, 23, 0);
    sim_request req[2] = {{.prompt_tokens = 8, .output_tokens = 24},
                          {.prompt_tokens = 8, .output_tokens = 24}};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 2, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.kv_blocks, 23);
    CHECK_INT(r.peak_kv_blocks, 22);
    CHECK_INT(r.preemptions, 0);
    window_setup(&x, 32, 23, 1);
    seen.n = 0;
    CHECK_INT(serve(&x, req, 2, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.kv_blocks, 11);
    CHECK(r.preemptions >= 1);
}

/* ---- Prefix caching (sched_v1.h, "Prefix caching"; block size 4 in these tests) ---------- */

/* Serves on x with prefix caching's pool (room for 256 blocks). */
static sim_status serve_pc(toy_setup *x, sim_request *req, int64_t n, int64_t conc,
                           steps_seen *seen, sim_serve_result *r)
{
    static int32_t queue[1024], running[1024];
    static sim_itl_entry itl[4096];
    static sim_kv_block blocks[256];
    static int32_t buckets[256];
    sim_workload w = {req, n, conc};
    sim_serve_scratch scr = {queue, running, itl, 4096, 0, NULL, blocks, buckets, 256};
    sim_status st = sim_serve_simulate(toy_su(x), &w, &scr, seen ? record : NULL, seen, r, &x->err);
    if (st != SIM_OK)
        printf("serve_pc: %s\n", x->err.msg);
    return st;
}

/*
 * A at t = 0 and B at t = 1 s (A long done), both prompt 10 whose first 8 tokens are group
 * 0's, output 2. A computes its 10 tokens; when it is scheduled its blocks 0 and 1 are full
 * (tokens 0-7) and within the prefix: cached as (0, 0) and (0, 1). B finds both: at most
 * (10 - 1) / 4 = 2 blocks may hit, so B computes 10 - 8 = 2 tokens in its first step, a chunk
 * at context 8. Hit rate: 8 of the 10 + 10 tokens looked up = 0.4. Prefix caching off: B
 * prefills its 10 tokens.
 */
static void prefix_hit_skips_the_shared_blocks(void)
{
    for (int on = 1; on >= 0; on--) {
        toy_setup x;
        make_setup(&x, 256, 2048, 256, 100);
        x.in.enable_prefix_caching = on;
        CHECK_INT(toy_resolve(&x), SIM_OK);
        toy_set_blocks(&x, 100);
        sim_request req[2] = {
            {.prompt_tokens = 10, .output_tokens = 2, .prefix_tokens = 8},
            {.arrival_s = 1.0, .prompt_tokens = 10, .output_tokens = 2, .prefix_tokens = 8}};
        steps_seen seen = {0};
        sim_serve_result r;
        CHECK_INT(serve_pc(&x, req, 2, 0, &seen, &r), SIM_OK);
        CHECK_INT(r.n_steps, 4);
        CHECK_INT(seen.s[0].n_prefill_tokens, 10);
        CHECK_INT(seen.s[2].n_prefill_tokens, on ? 2 : 10);
        CHECK_INT(r.prefix_cache_simulated, on);
        CHECK_INT(r.prefix_hit_tokens, on ? 8 : 0);
        CHECK_INT(r.prefix_query_tokens, on ? 20 : 0);
        CHECK_INT(req[0].cached_tokens, 0);
        CHECK_INT(req[1].cached_tokens, on ? 8 : 0);
        /* B's first step is cheaper than A's: 2 tokens, not 10. */
        if (on)
            CHECK(req[1].first_token_s - req[1].arrival_s < req[0].first_token_s);
    }
}

/* A whole prompt in the cache still computes its last token's block: prompt 8 = prefix 8,
 * twice; at most (8 - 1) / 4 = 1 block hits, so B computes 4 tokens (vLLM
 * max_cache_hit_length = num_tokens - 1). */
static void whole_prompt_hit_recomputes_the_last_block(void)
{
    toy_setup x;
    make_setup(&x, 256, 2048, 256, 100);
    sim_request req[2] = {
        {.prompt_tokens = 8, .output_tokens = 2, .prefix_tokens = 8},
        {.arrival_s = 1.0, .prompt_tokens = 8, .output_tokens = 2, .prefix_tokens = 8}};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve_pc(&x, req, 2, 0, &seen, &r), SIM_OK);
    CHECK_INT(seen.s[2].n_prefill_tokens, 4);
    CHECK_INT(req[1].cached_tokens, 4);
}

/*
 * LRU eviction under pressure, a pool of 4 blocks (5 less the null block), one request at a
 * time (each arrives when the previous has left), output 1:
 *  - A: prompt 12 = group 1's prefix. Takes the never-used blocks 0, 1, 2, all full and cached
 *    as (1, 0), (1, 1), (1, 2); freed last block first: free queue [3 | 2, 1, 0].
 *  - C: prompt 8, nothing shared. Takes block 3, then the head 2, evicting (1, 2).
 *    C's two full blocks are cached under C alone and freed: queue [1, 0, 2, 3].
 *  - B: prompt 16, group 1's first 12. At most 15 / 4 = 3 blocks may hit; (1, 0) and (1, 1)
 *    do, (1, 2) was evicted: B computes 16 - 8 = 8 tokens, in two new blocks, the head 2 and 3,
 *    evicting C's two. Evictions: 3. With 100 blocks nothing is evicted and B computes 4.
 */
static void lru_eviction_under_pressure(void)
{
    for (int blocks = 5; blocks <= 100; blocks += 95) {
        toy_setup x;
        make_setup(&x, 256, 2048, 20, blocks);
        sim_request req[3] = {
            {.prompt_tokens = 12, .output_tokens = 1, .prefix_tokens = 12, .prefix_group = 1},
            {.arrival_s = 1.0, .prompt_tokens = 8, .output_tokens = 1},
            {.arrival_s = 2.0,
             .prompt_tokens = 16,
             .output_tokens = 1,
             .prefix_tokens = 12,
             .prefix_group = 1}};
        steps_seen seen = {0};
        sim_serve_result r;
        CHECK_INT(serve_pc(&x, req, 3, 0, &seen, &r), SIM_OK);
        CHECK_INT(r.n_steps, 3);
        CHECK_INT(seen.s[2].n_prefill_tokens, blocks == 5 ? 8 : 4);
        CHECK_INT(r.prefix_evictions, blocks == 5 ? 3 : 0);
        CHECK_INT(req[2].cached_tokens, blocks == 5 ? 8 : 12);
    }
}

/*
 * A pool of K = 3 prompts of 16 tokens, 9 requests, one client: each pass of 3 requests visits
 * every entry once (aiperf's shuffle), so the first pass misses and the other 6 requests find
 * (16 - 1) / 4 = 3 blocks = 12 tokens each. Hit rate 6 x 12 / (9 x 16) = 0.5.
 */
static void pool_of_prompts(void)
{
    sim_workload_spec spec = {.arrival = SIM_ARRIVAL_CLOSED,
                              .concurrency = 1,
                              .burstiness = 1.0,
                              .prompt_tokens = 16,
                              .output_tokens = 3,
                              .seed = 11,
                              .distinct_prompts = 3};
    sim_request req[9];
    sim_workload_generate(&spec, req, 9);
    for (int p = 0; p < 3; p++) {
        int seen_e[3] = {0};
        for (int q = 0; q < 3; q++) {
            const sim_request *r = &req[3 * p + q];
            CHECK(r->prefix_group >= 0 && r->prefix_group < 3);
            if (r->prefix_group >= 0 && r->prefix_group < 3)
                seen_e[r->prefix_group]++;
            CHECK_INT(r->prefix_tokens, 16);
        }
        CHECK(seen_e[0] == 1 && seen_e[1] == 1 && seen_e[2] == 1);
    }
    toy_setup x;
    make_setup(&x, 256, 2048, 256, 100);
    sim_serve_result r;
    CHECK_INT(serve_pc(&x, req, 9, 1, NULL, &r), SIM_OK);
    CHECK_INT(r.prefix_hit_tokens, 6 * 12);
    CHECK_INT(r.prefix_query_tokens, 9 * 16);
    /* Lengths spread: an entry keeps its length every time it is drawn. */
    spec.range_ratio = 0.5;
    spec.distinct_prompts = 4;
    sim_request more[40];
    sim_workload_generate(&spec, more, 40);
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < i; j++)
            if (more[i].prefix_group == more[j].prefix_group)
                CHECK_INT(more[i].prompt_tokens, more[j].prompt_tokens);
    /* A system prompt: every request group 0 with min(P, prompt) shared; the lengths and
     * outputs are those of the same seed without sharing. */
    sim_workload_spec sys = spec;
    sys.distinct_prompts = 0;
    sys.prefix_tokens = 10;
    sim_workload_spec plain = sys;
    plain.prefix_tokens = 0;
    sim_request a[40], b[40];
    sim_workload_generate(&sys, a, 40);
    sim_workload_generate(&plain, b, 40);
    for (int i = 0; i < 40; i++) {
        CHECK_INT(a[i].prompt_tokens, b[i].prompt_tokens);
        CHECK_INT(a[i].output_tokens, b[i].output_tokens);
        CHECK_INT(a[i].prefix_group, 0);
        CHECK_INT(a[i].prefix_tokens, a[i].prompt_tokens < 10 ? a[i].prompt_tokens : 10);
    }
}

/*
 * The pool simulated block by block gives the counted pool's schedule when nothing is found:
 * every request in a group of its own (no hits), a pool large enough that nobody is preempted.
 * 200 random workloads: every time equal to the plain run's.
 */
static void block_pool_without_hits_matches_the_count(void)
{
    uint64_t g = 99;
    for (int trial = 0; trial < 200; trial++) {
        toy_setup x;
        make_setup(&x, 1 + (int64_t)(next_u64(&g) % 8), 64 + (int64_t)(next_u64(&g) % 256), 256,
                   255);
        const int64_t n = 2 + (int64_t)(next_u64(&g) % 30);
        const int64_t conc = (int64_t)(next_u64(&g) % 4);
        sim_request a[32], b[32];
        double t = 0.0;
        for (int64_t i = 0; i < n; i++) {
            a[i] = (sim_request){.arrival_s = t,
                                 .prompt_tokens = 4 + (int64_t)(next_u64(&g) % 60),
                                 .output_tokens = 1 + (int64_t)(next_u64(&g) % 20)};
            t += 0.001 * (double)(next_u64(&g) % 10);
            b[i] = a[i];
            b[i].prefix_tokens = b[i].prompt_tokens;
            b[i].prefix_group = i;
        }
        sim_serve_result ra, rb;
        steps_seen sa = {0}, sb = {0};
        CHECK_INT(serve_pc(&x, a, n, conc, &sa, &ra), SIM_OK);
        CHECK_INT(serve_pc(&x, b, n, conc, &sb, &rb), SIM_OK);
        CHECK_INT(rb.prefix_cache_simulated, 1);
        CHECK_INT(ra.preemptions, 0);
        CHECK_INT(rb.n_steps, ra.n_steps);
        CHECK_INT(rb.peak_kv_blocks, ra.peak_kv_blocks);
        CHECK_INT(rb.prefix_hit_tokens, 0);
        for (int64_t i = 0; i < n; i++) {
            CHECK_REL(b[i].first_token_s, a[i].first_token_s, 1e-12);
            CHECK_REL(b[i].finish_s, a[i].finish_s, 1e-12);
        }
    }
}

/* Shared prefixes under pressure: 300 random workloads (a few groups, pools of 12 to 60
 * blocks, preemptions) finish, every request in order (arrival <= first token <= finish), no
 * hit beyond (prompt - 1) / 4 blocks, and hits of at most the tokens looked up. */
static void prefix_caching_under_pressure(void)
{
    uint64_t g = 7;
    int64_t preempted = 0, hits = 0;
    for (int trial = 0; trial < 300; trial++) {
        toy_setup x;
        const int64_t blocks = 12 + (int64_t)(next_u64(&g) % 49);
        make_setup(&x, 1 + (int64_t)(next_u64(&g) % 8), 16 + (int64_t)(next_u64(&g) % 64), 40,
                   blocks);
        const int64_t n = 2 + (int64_t)(next_u64(&g) % 30);
        const int64_t conc = (int64_t)(next_u64(&g) % 4);
        sim_request a[32];
        double t = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t p = 1 + (int64_t)(next_u64(&g) % 30);
            a[i] = (sim_request){.arrival_s = t,
                                 .prompt_tokens = p,
                                 .output_tokens = 1 + (int64_t)(next_u64(&g) % 10),
                                 .prefix_tokens = (int64_t)(next_u64(&g) % (uint64_t)(p + 1)),
                                 .prefix_group = (int64_t)(next_u64(&g) % 3)};
            t += 0.001 * (double)(next_u64(&g) % 10);
        }
        sim_serve_result r;
        CHECK_INT(serve_pc(&x, a, n, conc, NULL, &r), SIM_OK);
        CHECK(r.prefix_hit_tokens <= r.prefix_query_tokens);
        preempted += r.preemptions;
        hits += r.prefix_hit_tokens;
        for (int64_t i = 0; i < n; i++) {
            CHECK(a[i].first_token_s >= a[i].arrival_s && a[i].finish_s >= a[i].first_token_s);
            CHECK(a[i].cached_tokens <= (a[i].prompt_tokens - 1) / 4 * 4);
        }
    }
    printf("  prefix caching: 300 workloads, %lld preemptions, %lld tokens hit\n",
           (long long)preempted, (long long)hits);
    CHECK(preempted > 0 && hits > 0);
}

/* ---- Speculative decoding (spec.h; block size 4) ---------------------------------------- */

/* A spec of method m with k tokens, every position accepted with rate a (or the rates
 * given), resolved for x's model. */
static void make_spec(toy_setup *x, sim_spec *sp, sim_spec_method m, int64_t k, const double *a)
{
    *sp = (sim_spec){.method = m, .k = k};
    for (int64_t i = 0; i < k; i++)
        sp->accept[i] = a[i];
    CHECK_INT(sim_spec_resolve(sp, &x->m, NULL, &x->run, &x->err), SIM_OK);
    x->run.spec = sp;
}

/*
 * One request, prompt 8, output 9, n-gram drafting (no GPU cost) with k = 3:
 *  - every draft accepted: step 1 prefills 8 tokens and samples token 1; each verify step
 *    schedules 1 + 3 = 4 tokens and emits 4: tokens 2-5, then 6-9. Steps: 3; tokens 8, 4, 4.
 *  - none accepted: each verify step still schedules 4 tokens and emits 1: 1 + 8 = 9 steps.
 *  - rates (1, 1, 0): each verify emits 3: tokens 1, 4, 7, then 10 capped at 9: 4 steps.
 * Expected tokens per verify step, 1 + a1 + a1 a2 + a1 a2 a3: 4, 1, 3 (and 2.952 at 0.8).
 */
static void spec_verify_steps_by_hand(void)
{
    static const struct {
        double a[3];
        int64_t steps;
        double expect;
    } cases[] = {{{1, 1, 1}, 3, 4.0}, {{0, 0, 0}, 9, 1.0}, {{1, 1, 0}, 4, 3.0}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        toy_setup x;
        make_setup(&x, 256, 2048, 256, 100);
        sim_spec sp;
        make_spec(&x, &sp, SIM_SPEC_NGRAM, 3, cases[c].a);
        CHECK_REL(sim_spec_expected_tokens(&sp), cases[c].expect, 1e-12);
        sim_request req[1] = {{.prompt_tokens = 8, .output_tokens = 9}};
        steps_seen seen = {0};
        sim_serve_result r;
        CHECK_INT(serve(&x, req, 1, 0, &seen, &r), SIM_OK);
        CHECK_INT(r.n_steps, cases[c].steps);
        CHECK_INT(seen.s[0].n_tokens, 8);
        for (int i = 1; i < seen.n && i < MAX_STEPS; i++) {
            CHECK_INT(seen.s[i].n_tokens, 4);
            CHECK_INT(seen.s[i].n_prefill_seqs, 0); /* a verify is a decode */
        }
        CHECK_INT(r.spec_verified_tokens, 3 * (cases[c].steps - 1));
    }
    /* 0.8 at every position: 1 + 0.8 + 0.64 + 0.512. */
    toy_setup x;
    make_setup(&x, 256, 2048, 256, 100);
    sim_spec sp;
    const double a8[3] = {0.8, 0.8, 0.8};
    make_spec(&x, &sp, SIM_SPEC_NGRAM, 3, a8);
    CHECK_REL(sim_spec_expected_tokens(&sp), 2.952, 1e-12);
    /* Drawn acceptance: over 200 requests of 64 output tokens the tokens per verify step
     * approach the expectation (the last step of each request is capped: compare the
     * accepted drafts per verified draft instead, (2.952 - 1) / 3 = 0.6507). */
    static sim_request many[200];
    for (int i = 0; i < 200; i++)
        many[i] = (sim_request){.arrival_s = 0.01 * i, .prompt_tokens = 8, .output_tokens = 64};
    sim_serve_result r;
    static int32_t queue[256], running[256];
    sim_workload w = {many, 200, 0};
    sim_serve_scratch scr = {queue, running, NULL, 0, 0, NULL, NULL, NULL, 0};
    CHECK_INT(sim_serve_simulate(toy_su(&x), &w, &scr, NULL, NULL, &r, &x.err), SIM_OK);
    const double frac = (double)r.spec_accepted_tokens / (double)r.spec_verified_tokens;
    printf("  spec: accepted %.4f of verified drafts (expected 0.6507)\n", frac);
    CHECK(fabs(frac - 0.6507) < 0.02);
}

/* EAGLE's drafter: one pass over the step's tokens and k - 1 one-token passes. With every
 * draft rejected the schedule is the same for k = 1 and k = 3 except the verify width; the
 * prefill step's extra cost over n-gram is the head's pass over 8 tokens, and k only adds
 * one-token passes: the first step costs the same at k = 1 and k = 3 minus 2 such passes. */
static void eagle_draft_passes(void)
{
    double first[3];
    const double a[3] = {0, 0, 0};
    for (int v = 0; v < 3; v++) {
        toy_setup x;
        make_setup(&x, 256, 2048, 256, 100);
        sim_spec sp;
        make_spec(&x, &sp, v == 0 ? SIM_SPEC_NGRAM : SIM_SPEC_EAGLE, v == 2 ? 3 : 1, a);
        toy_set_blocks(&x, 100); /* the head's weights and KV cache are in the budget now */
        sim_request req[1] = {{.prompt_tokens = 8, .output_tokens = 2}};
        steps_seen seen = {0};
        sim_serve_result r;
        CHECK_INT(serve(&x, req, 1, 0, &seen, &r), SIM_OK);
        first[v] = seen.s[0].gpu_s;
        if (v == 2) {
            /* The head: one layer of the toy model; its 8-token pass and a 1-token pass. */
            sim_step st8 = {0}, st1 = {0};
            sim_step_add_group(&st8, 1, 8, 0, 1);
            sim_step_add_group(&st1, 1, 1, 8, 1);
            sim_step_cost c8, c1;
            sim_step_cost_compute(&sp.draft, &x.hw, &x.run, &st8, &c8);
            sim_step_cost_compute(&sp.draft, &x.hw, &x.run, &st1, &c1);
            CHECK_INT(sp.draft.n_layers, 1);
            CHECK_REL(first[2] - first[0], x.run.alpha * (c8.roofline_s + 2.0 * c1.roofline_s),
                      1e-9);
            CHECK_REL(first[1] - first[0], x.run.alpha * c8.roofline_s, 1e-9);
        }
    }
    CHECK(first[2] > first[1] && first[1] > first[0]);
}

/*
 * Remote prefill (sched_v1.h): request A (prompt 10, output 3) whose first 9 prompt tokens'
 * KV a prefill instance computed, pulled in 0.5 s. Admitted at t = 0 it takes the blocks of its
 * 10 tokens (3 of 4 tokens) but is not scheduled; the engine waits to t = 0.5, then a step
 * computes its last prompt token (1 token at context 9) and samples its first token, and two
 * decode steps follow: 3 steps, TTFT = 0.5 + the first step. Request B (prompt 8, no remote
 * KV) arriving at t = 0.2, during the wait, is scheduled then, not after it.
 */
static void remote_prefill_waits_for_the_transfer(void)
{
    toy_setup x;
    make_setup(&x, 256, 2048, 256, 100);
    sim_request req[2] = {
        {.prompt_tokens = 10, .output_tokens = 3, .remote_tokens = 9, .xfer_s = 0.5},
        {.arrival_s = 0.2, .prompt_tokens = 8, .output_tokens = 1}};
    steps_seen seen = {0};
    sim_serve_result r;
    CHECK_INT(serve(&x, req, 1, 0, &seen, &r), SIM_OK);
    CHECK_INT(r.n_steps, 3);
    CHECK_INT(seen.s[0].n_tokens, 1);
    CHECK_INT(seen.s[0].kv_used_blocks, 3);
    CHECK_REL(seen.s[0].start_s, 0.5, 1e-12);
    CHECK_REL(req[0].first_token_s, 0.5 + seen.s[0].wall_s, 1e-12);
    CHECK_REL(req[0].first_sched_s, 0.0, 1e-12);
    steps_seen seen2 = {0};
    CHECK_INT(serve(&x, req, 2, 0, &seen2, &r), SIM_OK);
    CHECK_REL(seen2.s[0].start_s, 0.2, 1e-12);
    CHECK_INT(seen2.s[0].n_tokens, 8);
    CHECK_REL(req[1].first_sched_s, 0.2, 1e-12);
    CHECK(req[0].first_token_s >= 0.5);
}

/*
 * A conversation of two turns (prefix_session; block size 4). Turn 1: prompt 8, answer 8.
 * Its blocks are the conversation's: blocks 0-1 (the prompt) cached at its prefill, block 2
 * (tokens 8-11) when its decodes fill it; block 3 never fills (the 16th token is sampled, not
 * computed). Turn 2, after it: prompt 20 = the 16 tokens of history + 4 new; it looks up at most
 * 16 / 4 = 4 blocks and finds 0, 1, 2: it computes 20 - 12 = 8 tokens. Without sessions turn
 * 1's answer is its own (cached under turn 1 alone): turn 2 finds blocks 0 and 1 and computes 12.
 */
static void conversation_turn_finds_the_previous_answer(void)
{
    for (int session = 1; session >= 0; session--) {
        toy_setup x;
        make_setup(&x, 256, 2048, 256, 100);
        sim_request req[2] = {{.prompt_tokens = 8,
                               .output_tokens = 8,
                               .prefix_tokens = 8,
                               .prefix_group = 5,
                               .prefix_session = session},
                              {.arrival_s = 1.0,
                               .prompt_tokens = 20,
                               .output_tokens = 2,
                               .prefix_tokens = 16,
                               .prefix_group = 5,
                               .prefix_session = session}};
        steps_seen seen = {0};
        sim_serve_result r;
        CHECK_INT(serve_pc(&x, req, 2, 0, &seen, &r), SIM_OK);
        CHECK_INT(req[1].cached_tokens, session ? 12 : 8);
        const int s2 = 8; /* turn 1: one prefill step and 7 decode steps */
        if (seen.n > s2)
            CHECK_INT(seen.s[s2].n_prefill_tokens, session ? 8 : 12);
    }
}

int main(void)
{
    percentiles_of_large_sets();
    decode_runs_equal_stepping();
    schedule_properties_on_random_workloads();
    pipeline_preempts_the_request_being_scheduled();
    pipeline_batches_in_flight();
    pipeline_closed_loop();
    budget_split_between_decodes_and_a_chunk();
    max_num_seqs_holds_admissions();
    ttft_under_queueing();
    preemption_and_resumption();
    single_request_latencies();
    closed_loop_obeys_littles_law();
    closed_loop_request_reaches_the_engine_late();
    open_loop_arrival_with_async_scheduling();
    percentiles_on_hand_made_sets();
    v1_memory_budget();
    v1_defaults_by_usage_and_memory();
    bad_workloads_refused();
    trace_files();
    generated_workloads();
    windowed_layer_frees_blocks_out_of_reach();
    windowed_credit_avoids_preemption();
    prefix_hit_skips_the_shared_blocks();
    whole_prompt_hit_recomputes_the_last_block();
    lru_eviction_under_pressure();
    pool_of_prompts();
    block_pool_without_hits_matches_the_count();
    prefix_caching_under_pressure();
    spec_verify_steps_by_hand();
    eagle_draft_passes();
    remote_prefill_waits_for_the_transfer();
    conversation_turn_finds_the_previous_answer();
    return check_report("test_serve");
}
