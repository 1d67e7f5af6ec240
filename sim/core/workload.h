/*
 * workload.h - the requests a simulation serves, and the generator of a
 * closed-loop or Poisson/gamma workload as vllm bench serve draws one: lengths
 * uniform around a mean, open-loop arrivals with gamma inter-arrival times
 * (shape = burstiness; 1: Poisson), from a seeded splitmix64 generator, so the
 * same seed gives the same workload. Traces are read by simio (trace_json.h)
 * into the same sim_request array. Pure: no I/O, no allocation; the caller
 * owns every array.
 */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include <stdint.h>

/*
 * One request as the V1 simulation (sched_v1.h) tracks it. The caller fills the
 * inputs; the simulation writes the outputs and uses the state fields.
 */
typedef struct sim_request {
    double arrival_s;      /* IN: arrival at the engine (closed loop: set by the simulation) */
    int64_t prompt_tokens; /* IN: >= 1 */
    int64_t output_tokens; /* IN: tokens to generate, >= 1 */
    double first_token_s;  /* OUT: end of the step that sampled the first token */
    double finish_s;       /* OUT: end of the step that sampled the last token */
    int64_t n_preemptions; /* OUT: times preempted by recompute */
    double first_sched_s;  /* OUT: start of the step that first scheduled it (its queueing
                              ends; serve_stats.h's queue_s) */
    /* Prefix caching (sched_v1.h, "Prefix caching"): the first prefix_tokens tokens of the
     * prompt are the same as those of every other request of prefix_group (a shared system
     * prompt, a prompt drawn again from a pool, a conversation's history); 0: none shared. */
    int64_t prefix_tokens; /* IN: 0 <= prefix_tokens <= prompt_tokens */
    int64_t prefix_group;  /* IN: >= 0 */
    /* IN: 1 when the request is a turn of a conversation (prefix_group): its whole sequence,
     * prompt and answer, is the conversation's so far, which a later turn resends (its
     * prefix_tokens then cover the earlier turns' prompts and answers); 0: only the first
     * prefix_tokens tokens are shared. */
    int64_t prefix_session;
    int64_t cached_tokens; /* OUT: tokens found in the prefix cache when first scheduled */
    /* Disaggregated decode (sched_v1.h, "Remote prefill"): the KV cache of the first
     * remote_tokens prompt tokens was computed by a prefill instance and is pulled when the
     * request is admitted, taking xfer_s; 0: none. */
    int64_t remote_tokens; /* IN: 0 <= remote_tokens < prompt_tokens */
    double xfer_s;         /* IN: the transfer's duration, seconds */
    double ready_s;        /* state: when the pulled KV is in place */
    /* State during the simulation. */
    double last_token_s; /* when the latest token was sampled */
    int64_t computed;    /* tokens in the KV cache */
    int64_t generated;   /* tokens sampled so far */
    int64_t blocks;      /* KV blocks held */
    int64_t sched;       /* tokens scheduled in the current step (0 = not scheduled) */
    int64_t batch;       /* with pipeline stages: the batch in flight it rides when sched > 0 */
    int64_t hit_blocks;  /* prefix cache: leading blocks held from the cache */
    int64_t hashed;      /* prefix cache: leading blocks full and offered to the cache */
    int32_t own_head;    /* prefix cache: newest block it allocated itself (-1: none) */
    int32_t spec_sched;  /* speculative tokens verified in the current step (spec.h) */
} sim_request;

/* How requests arrive. */
typedef enum sim_arrival {
    SIM_ARRIVAL_CLOSED = 0,  /* concurrency clients, each sends its next request on completion */
    SIM_ARRIVAL_POISSON = 1, /* open loop: gamma inter-arrivals (shape = burstiness; 1: Poisson) */
    SIM_ARRIVAL_TRACE = 2,   /* open loop: arrival times and lengths given */
    SIM_ARRIVAL_COUNT
} sim_arrival;

/* A generated workload (closed or Poisson/gamma); traces are read by simio instead. */
typedef struct sim_workload_spec {
    sim_arrival arrival;
    int64_t concurrency;     /* closed loop clients, >= 1 */
    double rate_per_s;       /* open loop mean request rate, > 0 */
    double burstiness;       /* gamma shape of the inter-arrival times, > 0 (1 = Poisson) */
    int64_t prompt_tokens;   /* mean prompt length, >= 1 */
    int64_t output_tokens;   /* mean output length, >= 1 */
    double range_ratio;      /* lengths uniform in [L(1-r), L(1+r)], 0 <= r < 1 (0 = fixed) */
    int64_t num_requests;    /* requests measured (0: sim_workload_default_requests) */
    int64_t warmup_requests; /* requests sent first and left out of the statistics (-1: default) */
    uint64_t seed;           /* of the generator (lengths, arrivals); same seed, same workload */
    /* Shared prefixes (0: none; at most one of the two): every prompt starts with the same
     * prefix_tokens tokens (a system prompt; prompts shorter than that are all prefix), or
     * prompts are drawn from a pool of distinct_prompts prompts (aiperf's dataset entries:
     * lengths drawn once per entry, entries visited in a new shuffled order each pass). */
    int64_t prefix_tokens;
    int64_t distinct_prompts;
} sim_workload_spec;

/* Most requests one simulation holds, measured and warm-up together (about 120 bytes each:
 * 125 MB, about a second; a fit simulates a run 10 to 30 times): `serve`, `sweep`, `plot`, the
 * library and measurement rows are held to it (sim_served_prepare refuses more, naming the
 * count; issue 27: 2^24 took 1.9 GB a run, and calibrating rows of 2^22 took minutes). */
#define SIM_WORKLOAD_MAX_REQUESTS (INT64_C(1) << 20)

/*
 * Requests measured when num_requests is 0: closed loop 10 x concurrency (the request count
 * of genai-perf/aiperf sweeps, `--request-count $((concurrency*10))`); open loop 1000.
 */
int64_t sim_workload_default_requests(const sim_workload_spec *spec);

/*
 * Warm-up requests when warmup_requests < 0: none. Benchmark clients run their warm-up as a
 * phase of its own and wait for its last response before profiling starts (aiperf's docs,
 * "Warmup Phase Configuration": "AIPerf waits indefinitely for all warmup responses before
 * starting profiling"; vllm bench serve has no warm-up), so the measured requests start on an
 * idle engine, a closed loop with all its clients sending at once. A positive count sends
 * that many requests first, without draining, and leaves them out of the statistics.
 */
int64_t sim_workload_default_warmup(const sim_workload_spec *spec);

/*
 * Fills n requests of a closed or Poisson/gamma workload: lengths drawn uniformly from
 * [floor(L(1-r)), floor(L(1+r))] (at least 1) as vllm bench serve's random dataset does;
 * open-loop arrivals start at 0 and add gamma(shape = burstiness, scale =
 * 1/(rate x burstiness)) intervals (vllm bench serve --burstiness). Deterministic in seed.
 * Shared prefixes: prefix_tokens P gives every request group 0 and min(P, its prompt) shared
 * tokens; distinct_prompts K gives request i the entry e of pass i / K (a permutation of the
 * K entries drawn for that pass), group e, entry e's prompt length (drawn from a generator of
 * its own, so lengths and arrivals are those of the same seed without a pool) and its whole
 * prompt shared.
 */
void sim_workload_generate(const sim_workload_spec *spec, sim_request *req, int64_t n);

/* The requests to serve. */
typedef struct sim_workload {
    sim_request *req;    /* n_requests requests; open loop: sorted by arrival_s */
    int64_t n_requests;  /* >= 1 */
    int64_t concurrency; /* > 0: closed loop with this many clients; 0: open loop */
} sim_workload;

#endif
