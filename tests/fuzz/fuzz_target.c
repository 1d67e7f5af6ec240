/*
 * fuzz_target.c - libFuzzer targets for every loader and the command-line parsers.
 *
 * One source, one target per FUZZ_TARGET value (tests/fuzz/CMakeLists.txt builds
 * each as fuzz_<name>). Loaders read files, so each input is written to a private
 * temporary file first. Besides memory safety (ASan) and undefined behaviour
 * (UBSan with float-cast-overflow), each target checks the project's contract on
 * what a loader accepts: a model or profile that loads must give finite counts
 * and a finite step time, because a command would print them with exit 0.
 * A violation aborts, which libFuzzer reports as a crash with the input saved.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_aiperf.h"
#include "bench_parse.h"
#include "bench_inferencex.h"
#include "bench_lss.h"
#include "bench_mlperf.h"
#include "bench_vllm.h"
#include "calib_json.h"
#include "cli.h"
#include "engine.h"
#include "engine_json.h"
#include "hw.h"
#include "hw_json.h"
#include "kernel_tables.h"
#include "meas_json.h"
#include "model.h"
#include "model_json.h"
#include "sched_v1.h"
#include "step.h"
#include "trace_json.h"

#include "../toys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

__attribute__((unused)) static int write_input(const uint8_t *data, size_t size)
{
    /* /dev/shm (memory) when there is one: the loaders read files, and this is the hot path. */
    if (!path[0])
        snprintf(path, sizeof(path), "%s/llmstep-fuzz-%d.in",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, size, f);
    return fclose(f) == 0 && n == size ? 0 : -1;
}

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "contract violated: %s (%s:%d)\n", #cond, __FILE__, __LINE__);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#if FUZZ_TARGET == 14
#include <cjson/cJSON.h>

#include "web_api.h"

/* The web planner's JSON API (sim/cli/web_api.c) on arbitrary bodies: the first byte picks the
 * route and method, the rest is the body. Every answer is JSON with a known status; a refusal
 * carries a message. The server's work bound is lowered so that no input runs for long. */
static web_api *web_a;

/* At exit: the API's temporary folder goes with it. */
static void web_free(void) { web_api_free(web_a); }

static void web_one(const uint8_t *data, size_t size)
{
    web_api *a = web_a;
    if (!a) {
        char err[512] = "";
        a = web_api_new(SIM_SOURCE_DIR, err, sizeof(err));
        REQUIRE(a != NULL);
        /* A few hundred simulated requests at most: a legal question of 2,560 requests of
         * 16k-token answers with 13k preemptions takes 0.06 s in a Release build but 4.5 s
         * under the fuzz build's sanitizers and coverage, past libFuzzer's 1 s timeout. */
        web_api_set_max_sim_requests(a, 300.0);
        web_a = a;
        atexit(web_free);
    }
    static const char *const paths[] = {"/api/capacity", "/api/serving", "/api/step",
                                        "/api/catalog", "/api/x"};
    const char *route = paths[size ? data[0] % 5 : 0];
    const char *method = size && data[0] >= 128 ? "GET" : "POST";
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    if (web_api_handle(a, method, route, size ? (const char *)data + 1 : "", size ? size - 1 : 0,
                       &out, &len, &status) != 0)
        return; /* out of memory */
    REQUIRE(status == 200 || status == 400 || status == 404 || status == 405 || status == 413);
    cJSON *j = cJSON_ParseWithLength(out, len);
    REQUIRE(j != NULL && cJSON_IsObject(j));
    if (status != 200)
        REQUIRE(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "error")));
    cJSON_Delete(j);
    free(out);
}
#endif

#if FUZZ_TARGET == 12
#include "llmstep.h"

/* Bytes as small numbers, one after the other (0 when the input runs out). */
typedef struct bytes {
    const uint8_t *p;
    size_t n, i;
} bytes;

static int64_t next(bytes *b, int64_t mod)
{
    int64_t v = b->i < b->n ? b->p[b->i] : 0;
    b->i++;
    if (b->i < b->n)
        v = v * 256 + b->p[b->i++];
    return mod > 0 ? v % mod : v;
}

/* Whatever the library accepts must give finite numbers; whatever it refuses must say why. */
static void api_one(const uint8_t *data, size_t size)
{
    static llmstep_ctx *ctx;
    llmstep_error err;
    if (!ctx)
        ctx = llmstep_ctx_new(SIM_SOURCE_DIR, &err);
    REQUIRE(ctx != NULL);
    static const char *const models[] = {"llama-3.1-8b", "qwen3-30b-a3b", "llama-3.1-70b-awq",
                                         "mixtral-8x7b"};
    static const char *const hws[] = {"h100-sxm", "a100-sxm-40gb", "rtx-4090", "mi300x"};
    static const char *const dtypes[] = {NULL, "auto", "fp16", "bf16", "fp8", "int4"};
    bytes b = {data, size, 0};
    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = models[next(&b, 4)];
    spec.hw = hws[next(&b, 4)];
    spec.dtype = dtypes[next(&b, 6)];
    spec.kv_dtype = dtypes[next(&b, 6)];
    spec.tp = next(&b, 20) - 2;
    spec.max_num_seqs = next(&b, 600) - 10;
    spec.max_num_batched_tokens = next(&b, 20000) - 10;
    /* A budget of a few tokens makes thousands of 1-token steps: correct but slow under the
     * sanitizers, so the target keeps budgets of 512 tokens and up (and the bad values). */
    if (spec.max_num_batched_tokens > 0 && spec.max_num_batched_tokens < 512)
        spec.max_num_batched_tokens += 512;
    spec.max_model_len = next(&b, 40000) - 10;
    spec.block_size = next(&b, 40) - 2;
    spec.gpu_memory_utilization_frac = (double)next(&b, 1200) / 1000.0 - 0.05;
    spec.chunked_prefill = (int)next(&b, 4) - 1;
    spec.usage = (int)next(&b, 4) - 1;
    spec.ignore_memory = (int)next(&b, 2);
    llmstep_deploy *d = NULL;
    if (llmstep_deploy_open(ctx, &spec, &d, &err) != LLMSTEP_OK) {
        REQUIRE(err.code != LLMSTEP_OK && err.message[0]);
        return;
    }
    llmstep_group g[4];
    size_t n = (size_t)next(&b, 5);
    for (size_t i = 0; i < n; i++)
        g[i] = (llmstep_group){next(&b, 300) - 2, next(&b, 3000) - 2, next(&b, 40000) - 2,
                               (int)next(&b, 2)};
    llmstep_step_result r;
    llmstep_op ops[LLMSTEP_MAX_OPS];
    size_t n_ops = 0;
    if (llmstep_step(d, g, n, &r, ops, LLMSTEP_MAX_OPS, &n_ops, &err) == LLMSTEP_OK) {
        REQUIRE(isfinite(r.step_s) && r.step_s > 0.0 && n_ops > 0);
        for (size_t i = 0; i < n_ops; i++)
            REQUIRE(isfinite(ops[i].time_s) && ops[i].time_s >= 0.0);
    } else {
        REQUIRE(err.message[0]);
    }
    llmstep_capacity_result c;
    if (llmstep_capacity(d, next(&b, 200000) - 5, &c, &err) == LLMSTEP_OK)
        REQUIRE(c.max_seqs_at_context >= 0);
    llmstep_batch_result br;
    if (llmstep_batch(d, next(&b, 24) - 2, next(&b, 400) - 2, next(&b, 64) - 2, &br, &err) ==
        LLMSTEP_OK)
        REQUIRE(isfinite(br.latency_s) && br.latency_s > 0.0);
    llmstep_workload w;
    llmstep_workload_init(&w);
    w.arrival = (llmstep_arrival)(next(&b, 2));
    w.concurrency = next(&b, 20) - 2;
    w.rate_per_s = (double)next(&b, 500) / 10.0;
    w.burstiness = (double)next(&b, 50) / 10.0;
    w.prompt_tokens = next(&b, 300) - 2;
    w.output_tokens = next(&b, 40) - 2;
    w.range_ratio = (double)next(&b, 120) / 100.0;
    w.num_requests = next(&b, 24) - 2;
    w.seed = (uint64_t)next(&b, 0);
    llmstep_serve_result sr;
    if (llmstep_serve(d, &w, &sr, &err) == LLMSTEP_OK)
        REQUIRE(isfinite(sr.ttft_s.p99) && isfinite(sr.e2e_s.mean) && sr.n_requests > 0);
    else
        REQUIRE(err.message[0]);
    /* Two loads of the same workload; a non-whole concurrency or a bad rate is refused. */
    const double loads[2] = {(double)next(&b, 40) / 4.0 - 1.0, (double)next(&b, 40) / 4.0};
    int meets[2];
    if (llmstep_serve_sweep(d, &w, loads, 2, (int)next(&b, 100), NULL, meets, NULL, NULL, &err) ==
        LLMSTEP_OK)
        REQUIRE((meets[0] == 0 || meets[0] == 1) && (meets[1] == 0 || meets[1] == 1));
    else
        REQUIRE(err.message[0]);
    llmstep_deploy_free(d);
    /* A small sweep of the same names: every row it yields is counted and sane. */
    llmstep_sweep_spec ss;
    llmstep_sweep_spec_init(&ss);
    const char *sm[1] = {spec.model}, *sh[1] = {spec.hw};
    const int64_t tps[2] = {next(&b, 10) - 1, 1}, bs[2] = {next(&b, 300) - 2, 8},
                  cs[2] = {next(&b, 40000) - 2, 1024};
    ss.models = sm;
    ss.n_models = 1;
    ss.hws = sh;
    ss.n_hws = 1;
    ss.kind = (llmstep_sweep_kind)next(&b, 4);
    ss.tp = tps;
    ss.n_tp = 2;
    ss.batch = bs;
    ss.n_batch = 2;
    ss.context = cs;
    ss.n_context = 2;
    ss.prompt_tokens = ss.kind >= LLMSTEP_SWEEP_OFFLINE ? next(&b, 300) - 2 : 0;
    ss.output_tokens = ss.kind >= LLMSTEP_SWEEP_OFFLINE ? next(&b, 20) - 2 : 0;
    ss.num_requests = ss.kind == LLMSTEP_SWEEP_SERVING ? next(&b, 12) + 1 : 0;
    ss.dtype = spec.dtype;
    llmstep_sweep_row rows[8];
    size_t n_rows = 0;
    if (llmstep_sweep(ctx, &ss, rows, 8, &n_rows, NULL, NULL, &err) == LLMSTEP_OK) {
        REQUIRE(n_rows == llmstep_sweep_size(&ss));
        for (size_t i = 0; i < n_rows && i < 8; i++)
            REQUIRE(rows[i].status != LLMSTEP_SWEEP_OK || isfinite(rows[i].time_s));
    } else {
        REQUIRE(err.message[0]);
    }
}
#endif

/* A small, valid model and an H100-like profile to pair with what is fuzzed. */
__attribute__((unused)) static void ref_model(sim_model *m)
{
    const toy_shape sh = {4, 512, 8, 2, 64, 1376, 32000, 4096, SIM_DTYPE_BF16};
    toy_llama(m, "ref", &sh);
}

__attribute__((unused)) static void ref_hw(sim_hw *hw)
{
    const toy_fig figs[] = {
        {SIM_HWF_PEAK_FP16, 989e12},    {SIM_HWF_PEAK_BF16, 989e12},
        {SIM_HWF_PEAK_FP32, 67e12},     {SIM_HWF_N_SM, 132},
        {SIM_HWF_MEM_CAPACITY, 80e9},   {SIM_HWF_L2, 50e6},
        {SIM_HWF_BW_HBM_PEAK, 3.35e12},
    };
    toy_hw_figs(hw, "ref", figs, sizeof(figs) / sizeof(figs[0]), SIM_PROV_DATASHEET);
    sim_hw_apply_defaults(hw);
}

/* A prefill and a decode step of the pair must be finite and positive. */
__attribute__((unused)) static void check_steps(const sim_model *m, const sim_hw *hw)
{
    sim_run_cfg cfg = {.tp = 1,
                       .dtype = m->dtype,
                       .kv_dtype = m->dtype,
                       .mode = SIM_ROOFLINE_OP,
                       .alpha = 1.0,
                       .gemm = SIM_GEMM_FLAT,
                       .pp = 1,
                       .dp = 1};
    if (cfg.dtype == SIM_DTYPE_FP32)
        cfg.dtype = cfg.kv_dtype = SIM_DTYPE_BF16;
    sim_step st = {0};
    st.n_groups = 2;
    st.groups[0] = (sim_group){1, m->max_pos < 64 ? 1 : 64, 0, 1};
    st.groups[1] = (sim_group){4, 1, m->max_pos < 64 ? 0 : 32, 1};
    struct sim_err err;
    if (sim_step_check(m, &cfg, &st, &err) != SIM_OK)
        return;
    sim_step_cost c;
    sim_step_cost_compute(m, hw, &cfg, &st, &c);
    REQUIRE(isfinite(c.step_s) && c.step_s > 0.0);
    REQUIRE(isfinite(c.flops) && isfinite(c.bytes));
    sim_param_count pc;
    sim_model_params(m, &pc);
    REQUIRE(isfinite(pc.total) && pc.total > 0.0);
    REQUIRE(isfinite(sim_model_kv_bytes_per_token(m, 1, cfg.kv_dtype)));
}

#if FUZZ_TARGET == 6
/* |a - b| <= 1e-9 max(|a|, |b|): the same time up to the rounding of a closed-form sum. */
static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* The schedule's invariants, checked after every step of an observed serving run: a step
 * schedules at least one request and at least a token each, within the token budget and
 * max_num_seqs; its prefill part is part of it; the KV blocks in use fit the pool; steps follow
 * one another in time (each starts no earlier than the previous one ended) and take a positive,
 * finite time. */
typedef struct step_check {
    const sim_sched_resolved *s;
    double end_s;
    int64_t n;
} step_check;

static void check_step(void *ctx, const sim_serve_step *st)
{
    step_check *c = ctx;
    REQUIRE(st->n_seqs >= 1 && st->n_seqs <= c->s->max_num_seqs);
    REQUIRE(st->n_tokens >= st->n_seqs && st->n_tokens <= c->s->max_num_batched_tokens);
    REQUIRE(st->n_prefill_seqs >= 0 && st->n_prefill_seqs <= st->n_seqs);
    REQUIRE(st->n_prefill_tokens >= 0 && st->n_prefill_tokens <= st->n_tokens);
    REQUIRE(st->kv_used_blocks >= 0 && st->kv_used_blocks <= st->kv_blocks);
    REQUIRE(st->n_waiting >= 0 && st->n_preempted >= 0);
    REQUIRE(isfinite(st->wall_s) && st->wall_s > 0.0 && st->gpu_s > 0.0 && st->host_s >= 0.0);
    REQUIRE(st->start_s >= c->end_s);
    c->end_s = st->start_s + st->wall_s;
    c->n++;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sim_err err;

#if FUZZ_TARGET == 1 || FUZZ_TARGET == 2 /* model config (1) or hardware profile (2) */
    if (write_input(data, size) != 0)
        return 0;
    /* The fuzzed file, paired with the reference other half. */
    static sim_model m;
    static sim_hw hw;
    ref_model(&m);
    ref_hw(&hw);
    sim_status st =
        FUZZ_TARGET == 1 ? sim_model_load(path, "fuzz", &m, &err) : sim_hw_load(path, &hw, &err);
    if (st == SIM_OK)
        check_steps(&m, &hw);
#elif FUZZ_TARGET == 3  /* engine profile */
    if (write_input(data, size) != 0)
        return 0;
    sim_engine e;
    if (sim_engine_load(path, &e, &err) == SIM_OK) {
        sim_model m;
        sim_hw hw;
        ref_model(&m);
        ref_hw(&hw);
        sim_sched_cfg in;
        sim_sched_cfg_unset(&in);
        sim_sched_resolved s;
        if (sim_sched_resolve(&e, &m, &hw, &in, &s, &err) == SIM_OK) {
            sim_run_cfg cfg = {
                1, SIM_DTYPE_BF16, SIM_DTYPE_BF16, SIM_ROOFLINE_OP, 1.0, 0.0, SIM_GEMM_FLAT, 1, 1,
                0};
            sim_memory mem;
            sim_memory_compute(&(sim_setup){&e, &m, &hw, &cfg, &s}, &mem);
            REQUIRE(isfinite(mem.kv_budget_bytes) && mem.kv_blocks >= 0);
            REQUIRE(isfinite(sim_engine_host_s(&e, 1, 8.0)));
        }
    }
#elif FUZZ_TARGET == 4  /* calibration file */
    if (write_input(data, size) != 0)
        return 0;
    sim_calib c;
    if (sim_calib_load(path, &c, &err) == SIM_OK) {
        REQUIRE(isfinite(c.alpha) && c.alpha > 0.0 && isfinite(c.beta_s));
        /* A domain comes with the alpha/beta-only fit its other models get. */
        REQUIRE(c.fig_domain < (1u << SIM_MCLASS_COUNT));
        REQUIRE(!c.fig_domain ||
                (isfinite(c.ab_alpha) && c.ab_alpha > 0.0 && isfinite(c.ab_beta_s)));
    }
#elif FUZZ_TARGET == 5  /* measurement file, every kind */
    if (write_input(data, size) != 0)
        return 0;
    sim_meas_set set;
    sim_meas_set_init(&set);
    if (sim_meas_load(path, &set, &err) == SIM_OK)
        for (size_t i = 0; i < set.n; i++)
            REQUIRE(isfinite(set.rows[i].measured_s) && set.rows[i].measured_s > 0.0);
    sim_meas_set_free(&set);
#elif FUZZ_TARGET == 6  /* request trace, then a short serving simulation of it */
    if (write_input(data, size) != 0)
        return 0;
    sim_request *req = NULL;
    int64_t n = 0;
    if (sim_trace_load(path, &req, &n, &err) == SIM_OK && n <= 64) {
        for (int64_t i = 0; i < n; i++) {
            /* Keep the simulation small: the trace's shape, not its size, is fuzzed. */
            req[i].prompt_tokens = 1 + req[i].prompt_tokens % 512;
            req[i].output_tokens = 1 + req[i].output_tokens % 64;
            req[i].prefix_tokens %= req[i].prompt_tokens + 1; /* shared prefixes: the pool */
        }
        sim_model m;
        sim_hw hw;
        ref_model(&m);
        ref_hw(&hw);
        sim_engine e = {0};
        e.kind = SIM_SCHED_V1;
        e.block_size = 16;
        e.gpu_memory_utilization = 0.9;
        for (int u = 0; u < SIM_USAGE_COUNT; u++)
            for (int l = 0; l < 2; l++) {
                e.default_seqs[u][l] = 64;
                e.default_tokens[u][l] = 1024;
            }
        sim_sched_cfg in;
        sim_sched_cfg_unset(&in);
        sim_sched_resolved s;
        sim_run_cfg cfg = {.tp = 1,
                           .dtype = SIM_DTYPE_BF16,
                           .kv_dtype = SIM_DTYPE_BF16,
                           .mode = SIM_ROOFLINE_OP,
                           .alpha = 1.0,
                           .gemm = SIM_GEMM_FLAT,
                           .pp = 1,
                           .dp = 1};
        static int32_t q[65], run[64], heap[64];
        /* Prefix caching's pool when the trace shares blocks (a larger pool is refused). */
        static sim_kv_block pool[1 << 17];
        static int32_t buckets[1 << 17];
        static sim_itl_entry itl[64 * 64];
        static double scratch[64];
        sim_workload w = {req, n, 0};
        sim_serve_scratch scr = {q, run, itl, 64 * 64, 0, heap, pool, buckets, 1 << 17};
        sim_serve_result r;
        if (sim_sched_resolve(&e, &m, &hw, &in, &s, &err) == SIM_OK &&
            sim_serve_simulate(&(sim_setup){&e, &m, &hw, &cfg, &s}, &w, &scr, NULL, NULL, &r,
                               &err) == SIM_OK) {
            sim_serve_stats st;
            REQUIRE(sim_serve_stats_compute(req, n, itl, r.n_itl, 0.0, 0.0, 0.0, scratch, &st) ==
                    SIM_OK);
            REQUIRE(isfinite(st.ttft_s.p99) && isfinite(st.e2e_s.mean) && st.ttft_s.mean >= 0.0);
            /* Decode runs and the decode aggregate price what stepping prices: every step
             * through the scheduler, request by request, gives the same run and the same
             * requests' times up to the rounding of the runs' closed-form sums (1e-9). */
            static sim_request again[64];
            static sim_itl_entry itl2[64 * 64];
            for (int64_t i = 0; i < n; i++)
                again[i] = req[i];
            sim_serve_scratch exact = {q, run, itl2, 64 * 64, 1, NULL, pool, buckets, 1 << 17};
            sim_serve_result r2;
            REQUIRE(sim_serve_simulate(&(sim_setup){&e, &m, &hw, &cfg, &s},
                                       &(sim_workload){again, n, 0}, &exact, NULL, NULL, &r2,
                                       &err) == SIM_OK);
            REQUIRE(r2.n_steps == r.n_steps && r2.preemptions == r.preemptions &&
                    near(r2.end_s, r.end_s) && r2.n_itl == r.n_itl &&
                    r2.peak_kv_blocks == r.peak_kv_blocks);
            for (int64_t i = 0; i < n; i++)
                REQUIRE(near(again[i].first_token_s, req[i].first_token_s) &&
                        near(again[i].finish_s, req[i].finish_s));
            /* Observed, every step is scheduled request by request and checked (check_step);
             * the run is still the same. */
            step_check chk = {&s, 0.0, 0};
            for (int64_t i = 0; i < n; i++)
                again[i] = req[i];
            REQUIRE(sim_serve_simulate(&(sim_setup){&e, &m, &hw, &cfg, &s},
                                       &(sim_workload){again, n, 0}, &exact, check_step, &chk, &r2,
                                       &err) == SIM_OK);
            REQUIRE(chk.n == r.n_steps && near(r2.end_s, r.end_s) &&
                    r2.preemptions == r.preemptions);
            for (int64_t i = 0; i < n; i++)
                REQUIRE(near(again[i].finish_s, req[i].finish_s) && again[i].finish_s <= r2.end_s);
        }
    }
    free(req);
#elif FUZZ_TARGET == 7  /* BabelStream / STREAM output */
    if (write_input(data, size) != 0)
        return 0;
    sim_stream_result r;
    if (sim_stream_parse(path, &r, &err) == SIM_OK)
        for (int k = 0; k < SIM_STREAM_KERNEL_COUNT; k++)
            REQUIRE(isfinite(r.bw_bytes_per_s[k]) && r.bw_bytes_per_s[k] >= 0.0);
#elif FUZZ_TARGET == 8  /* nccl-tests all_reduce_perf output */
    if (write_input(data, size) != 0)
        return 0;
    sim_nccl_result r = {0};
    if (sim_nccl_parse(path, &r, &err) == SIM_OK) {
        REQUIRE(r.n_gpus >= 1);
        for (size_t i = 0; i < r.n_rows; i++)
            REQUIRE(isfinite(r.rows[i].bytes) && isfinite(r.rows[i].time_oop_s));
    }
    sim_nccl_result_free(&r);
#elif FUZZ_TARGET == 9  /* GEMM tables (aic CSV, cutlass_profiler) */
    if (write_input(data, size) != 0)
        return 0;
    sim_gemm_table t = {0};
    if (sim_gemm_parse(path, &t, &err) == SIM_OK)
        for (size_t i = 0; i < t.n_rows; i++)
            REQUIRE(isfinite(t.rows[i].time_s) && t.rows[i].time_s > 0.0);
    sim_gemm_table_free(&t);
#elif FUZZ_TARGET == 10 /* command-line value parsers */
    char buf[256];
    size_t n = size < sizeof(buf) - 1 ? size : sizeof(buf) - 1;
    memcpy(buf, data, n);
    buf[n] = '\0';
    int64_t i64;
    double d;
    if (cli_parse_i64(buf, 1, INT64_C(1) << 40, &i64) == 0)
        REQUIRE(i64 >= 1 && i64 <= (INT64_C(1) << 40));
    if (cli_parse_double(buf, 1e-6, 1e6, &d) == 0)
        REQUIRE(isfinite(d) && d >= 1e-6 && d <= 1e6);
    sim_step st = {0};
    for (int k = 0; k < 3; k++)
        (void)cli_parse_group("pdc"[k], buf, &st, &err);
    for (int g = 0; g < st.n_groups; g++)
        REQUIRE(st.groups[g].count >= 1 && st.groups[g].new_tokens >= 1 &&
                st.groups[g].context_tokens >= 0);
    sim_sched_cfg sc;
    sim_sched_cfg_unset(&sc);
    static const char *const names[] = {
        "max-num-seqs", "max-num-batched-tokens", "max-model-len", "gpu-memory-utilization",
        "block-size",   "chunked-prefill",        "usage"};
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        (void)cli_parse_sched_opt(names[k], buf, &sc);
    REQUIRE(sc.gpu_memory_utilization < 0.0 ||
            (sc.gpu_memory_utilization > 0.0 && sc.gpu_memory_utilization <= 1.0));
#elif FUZZ_TARGET == 11 /* kernel tables (aic CSV): the first byte picks the table kind */
    if (size < 1 || write_input(data + 1, size - 1) != 0)
        return 0;
    sim_kset set;
    sim_kset_init(&set);
    size_t skipped = 0;
    sim_aic_table t = (sim_aic_table)(data[0] % SIM_AIC_TABLE_COUNT);
    if (sim_kset_load_aic(path, t, "NVIDIA H100 80GB HBM3", NULL, 0, &set, &skipped, &err) ==
        SIM_OK)
        for (size_t i = 0; i < set.n; i++)
            REQUIRE(isfinite(set.v[i].measured_s) && set.v[i].measured_s > 0.0);
    sim_kset_free(&set);
#elif FUZZ_TARGET == 12 /* the public C API: deployments, steps, capacity, batches, serving */
    (void)err;
    api_one(data, size);
#elif FUZZ_TARGET == 13 /* benchmark files: vllm bench, aiperf, MLPerf, InferenceX, LLMServingSim  \
                         */
    if (write_input(data, size) != 0)
        return 0;
    sim_vllm_serve r;
    if (sim_vllm_serve_load(path, &r, &err) == SIM_OK) {
        REQUIRE(r.num_prompts >= 1 && r.completed >= 0 && r.failed >= 0);
        REQUIRE(r.rate_inf || (isfinite(r.request_rate) && r.request_rate > 0.0));
        REQUIRE(isfinite(r.burstiness) && r.burstiness > 0.0);
        REQUIRE(r.n_lens == 0 || (r.in_min >= 1 && r.in_min <= r.in_max && r.out_min <= r.out_max));
        int any = 0;
        for (int f = 0; f < SIM_VB_FAMILIES; f++)
            for (int k = 0; k < SIM_VB_STATS; k++) {
                any |= r.has[f][k];
                REQUIRE(!r.has[f][k] || (isfinite(r.stat_s[f][k]) && r.stat_s[f][k] >= 0.0));
            }
        REQUIRE(any);
    }
    double avg_s = 0.0;
    int64_t n_iters = 0;
    if (sim_vllm_latency_load(path, &avg_s, &n_iters, &err) == SIM_OK)
        REQUIRE(isfinite(avg_s) && avg_s > 0.0 && n_iters >= 0);
    sim_vllm_throughput thr;
    if (sim_vllm_throughput_load(path, &thr, &err) == SIM_OK)
        REQUIRE(isfinite(thr.elapsed_s) && thr.elapsed_s > 0.0 && thr.num_requests >= 1 &&
                thr.total_tokens >= 1);
    /* aiperf / genai-perf profile exports: one load, lengths and statistics in range. */
    sim_aiperf_run ap;
    if (sim_aiperf_load(path, &ap, &err) == SIM_OK) {
        REQUIRE((ap.concurrency >= 1) != (ap.request_rate > 0.0));
        REQUIRE(ap.request_rate == 0.0 || (isfinite(ap.request_rate) && ap.completed >= 1));
        REQUIRE(ap.failed == 0 && ap.isl_avg >= 1.0 && ap.osl_avg >= 1.0);
        REQUIRE(ap.isl_min <= ap.isl_avg && (ap.isl_max == 0.0 || ap.isl_max >= ap.isl_avg));
        int any = 0;
        for (int f = 0; f < SIM_VB_FAMILIES; f++)
            for (int k = 0; k < SIM_VB_STATS; k++) {
                any |= ap.has[f][k];
                REQUIRE(!ap.has[f][k] || (isfinite(ap.stat_s[f][k]) && ap.stat_s[f][k] >= 0.0));
            }
        REQUIRE(any);
    }
    /* InferenceX agg files: one vLLM server, lengths and statistics in range. */
    sim_ix_run ix;
    if (sim_ix_load(path, &ix, &err) == SIM_OK) {
        REQUIRE(ix.conc >= 1 && ix.isl >= 1 && ix.osl >= 1 && ix.tp >= 1 && ix.ep >= 1);
        REQUIRE(!ix.dp_attention && !ix.disagg && !ix.multinode);
        for (int f = 0; f < SIM_VB_FAMILIES; f++)
            for (int k = 0; k < SIM_VB_STATS; k++)
                REQUIRE(!ix.has[f][k] || (isfinite(ix.stat_s[f][k]) && ix.stat_s[f][k] >= 0.0));
    }
    /* MLPerf LoadGen summaries: a known scenario, numbers in range. */
    sim_mlperf_run ml;
    if (sim_mlperf_load(path, &ml, &err) == SIM_OK) {
        if (ml.scenario == SIM_MLPERF_OFFLINE)
            REQUIRE(ml.samples_per_query >= 1 && ml.samples_per_s > 0.0);
        else
            REQUIRE(ml.target_qps > 0.0 && isfinite(ml.min_duration_s) && ml.min_query_count >= 0 &&
                    ml.has[SIM_VB_E2E][SIM_VB_MEAN]);
        for (int f = 0; f < SIM_VB_FAMILIES; f++)
            for (int k = 0; k < SIM_VB_STATS; k++)
                REQUIRE(!ml.has[f][k] || (isfinite(ml.stat_s[f][k]) && ml.stat_s[f][k] >= 0.0));
    }
    /* LLMServingSim's requests.jsonl: statistics finite and ordered, arrivals in order. */
    sim_lss_run lr;
    if (sim_lss_load(path, &lr, &err) == SIM_OK) {
        REQUIRE(lr.n >= 1 && lr.n_tpot >= 1 && lr.n_tpot <= lr.n && lr.arrival_s[0] == 0.0);
        for (int64_t i = 1; i < lr.n; i++)
            REQUIRE(lr.arrival_s[i] >= lr.arrival_s[i - 1]);
        for (int f = 0; f < SIM_VB_FAMILIES; f++) {
            const double *v = lr.stat_s[f];
            REQUIRE(isfinite(v[SIM_VB_MEAN]) && v[SIM_VB_MEAN] >= 0.0 && v[SIM_VB_P50] >= 0.0 &&
                    v[SIM_VB_P50] <= v[SIM_VB_P90] && v[SIM_VB_P90] <= v[SIM_VB_P99]);
        }
        sim_lss_free(&lr);
    }
#elif FUZZ_TARGET == 14 /* the web planner's JSON API */
    (void)err;
    web_one(data, size);
#else
#error "FUZZ_TARGET must be 1..14"
#endif
    return 0;
}
