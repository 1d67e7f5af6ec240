/*
 * test_api.c - the public C API (include/llmstep.h), linked as a user would (libllmstep.a):
 * published architecture facts and hand-derived figures through it, the cache, errors that
 * name the file and field, and agreement between its entry points.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "llmstep.h"

static llmstep_ctx *ctx;

static llmstep_deploy *open_deploy(const char *model, const char *hw, int64_t tp, int usage)
{
    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = model;
    spec.hw = hw;
    spec.tp = tp;
    spec.usage = usage;
    llmstep_deploy *d = NULL;
    llmstep_error err;
    if (llmstep_deploy_open(ctx, &spec, &d, &err) != LLMSTEP_OK)
        printf("deploy %s on %s: %s\n", model, hw, err.message);
    CHECK(d != NULL);
    return d;
}

static void version_and_abi(void)
{
    CHECK_STR(llmstep_version(), LLMSTEP_VERSION);
    CHECK_INT(llmstep_abi_version(), LLMSTEP_ABI_VERSION);
    CHECK_STR(llmstep_status_name(LLMSTEP_EINVAL), "invalid argument");
}

/* Llama-3.1-8B: 8.03e9 parameters (Meta's model card); KV cache per token at 16 bits:
 * 2 (K, V) x 32 layers x 8 KV heads x 128 head_dim x 2 bytes = 131072 bytes. */
static void model_facts_and_cache(void)
{
    const llmstep_model *m = NULL, *again = NULL;
    llmstep_error err;
    CHECK_INT(llmstep_model_load(ctx, "llama-3.1-8b", &m, &err), LLMSTEP_OK);
    size_t n = llmstep_ctx_n_loaded(ctx);
    CHECK_INT(llmstep_model_load(ctx, "llama-3.1-8b", &again, &err), LLMSTEP_OK);
    CHECK(m == again);
    CHECK_INT((long long)llmstep_ctx_n_loaded(ctx), (long long)n);
    llmstep_model_info info;
    llmstep_model_get_info(m, &info);
    CHECK_INT(info.n_layers, 32);
    CHECK_INT(info.n_kv_heads, 8);
    CHECK_REL(info.params, 8.03e9, 0.01);
    CHECK_REL(info.kv_bytes_per_token_16bit, 131072.0, 1e-12);
}

/* Errors: codes, and messages naming the file and the field. */
static void errors_name_file_and_field(void)
{
    const llmstep_model *m = NULL;
    llmstep_error err;
    CHECK_INT(llmstep_model_load(ctx, "no-such-model", &m, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "no-such-model");
    CHECK(m == NULL);
    const char *bad = SIM_SOURCE_DIR "/tests/data/model_misspelled.json";
    llmstep_status st = llmstep_model_load(ctx, bad, &m, &err);
    CHECK(st != LLMSTEP_OK);
    CHECK_CONTAINS(err.message, "model_misspelled.json:");
    CHECK_CONTAINS(err.message, "num_hidden_layer");

    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = "llama-3.1-8b";
    spec.hw = "h100-sxm";
    llmstep_deploy *d = NULL;
    spec.tp = 3; /* 32 heads do not split over 3 GPUs */
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_EINVAL);
    CHECK(d == NULL);
    spec.tp = 16; /* more GPUs than one H100 node has */
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "exceeds the 8 GPUs");
    spec.tp = 1;
    spec.model = "llama-3.1-70b"; /* 141 GB of bf16 weights on one 80 GB GPU */
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "does not fit");
    spec.ignore_memory = 1;
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_OK);
    llmstep_deploy_free(d);
    spec.ignore_memory = 0;
    spec.model = "llama-3.1-8b";
    spec.dtype = "int3";
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "--dtype 'int3'");
    spec.dtype = NULL;
    spec.gpu_memory_utilization_frac = 1.5;
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "gpu_memory_utilization_frac");
}

/* A step, its operators, and the grid agree; a decode step of an 8B model on an H100 reads at
 * least the weights: 16.06e9 bytes at 3.35e12 B/s (datasheet HBM3) is 4.8 ms at the very least. */
static void step_ops_and_grid(void)
{
    llmstep_deploy *d = open_deploy("llama-3.1-8b", "h100-sxm", 1, 1);
    if (!d)
        return;
    llmstep_group g = {32, 1, 1024, 1};
    llmstep_step_result r;
    llmstep_op ops[LLMSTEP_MAX_OPS];
    size_t n_ops = 0;
    llmstep_error err;
    CHECK_INT(llmstep_step(d, &g, 1, &r, ops, LLMSTEP_MAX_OPS, &n_ops, &err), LLMSTEP_OK);
    CHECK(n_ops >= 10);
    double sum = 0.0, flops = 0.0;
    for (size_t i = 0; i < n_ops; i++) {
        sum += ops[i].time_s;
        flops += ops[i].flops;
    }
    CHECK_REL(sum, r.roofline_s, 1e-9);
    CHECK_REL(flops, r.flops, 1e-9);
    CHECK(r.bytes >= 16.06e9);
    CHECK(r.gpu_s >= 16.06e9 / 3.35e12);
    CHECK(r.step_s >= r.gpu_s);
    CHECK_STR(r.bound, "memory");
    int64_t count[3] = {32, 1, 8}, tokens[3] = {1, 2048, 1}, ctxs[3] = {1024, 0, 4096};
    double out[3];
    CHECK_INT(llmstep_step_grid(d, 3, count, tokens, ctxs, out, &err), LLMSTEP_OK);
    CHECK_REL(out[0], r.step_s, 1e-12);
    llmstep_group p = {1, 2048, 0, 1};
    CHECK_INT(llmstep_step(d, &p, 1, &r, NULL, 0, NULL, &err), LLMSTEP_OK);
    CHECK_REL(out[1], r.step_s, 1e-12);
    ctxs[2] = 1 << 20; /* beyond the model's 131072 positions */
    CHECK_INT(llmstep_step_grid(d, 3, count, tokens, ctxs, out, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "point 2");
    llmstep_deploy_free(d);
}

/* Capacity: min(max_num_seqs, floor(kv_blocks / ceil(C / block_size))) from the info. */
static void capacity_rule(void)
{
    llmstep_deploy *d = open_deploy("llama-3.1-8b", "h100-sxm", 1, 1);
    if (!d)
        return;
    llmstep_deploy_info info;
    llmstep_deploy_get_info(d, &info);
    CHECK_INT(info.max_num_batched_tokens, 8192); /* vLLM's server default on >= 70 GiB */
    CHECK_INT(info.kv_capacity_tokens, info.kv_blocks * info.block_size);
    llmstep_capacity_result c;
    llmstep_error err;
    CHECK_INT(llmstep_capacity(d, 1152, &c, &err), LLMSTEP_OK);
    int64_t per_seq = (1152 + info.block_size - 1) / info.block_size;
    int64_t by_kv = info.kv_blocks / per_seq;
    CHECK_INT(c.max_seqs_at_context, by_kv < info.max_num_seqs ? by_kv : info.max_num_seqs);
    CHECK_INT(llmstep_capacity(d, 0, &c, &err), LLMSTEP_ERANGE);
    llmstep_deploy_free(d);
}

/* Serving: a closed loop obeys Little's law (throughput = concurrency / mean E2E, up to the
 * ramp at start and end); the same seed gives the same numbers; bad workloads are refused. */
static void serving(void)
{
    llmstep_deploy *d = open_deploy("llama-3.1-8b", "h100-sxm", 1, 1);
    if (!d)
        return;
    llmstep_workload w;
    llmstep_workload_init(&w);
    w.concurrency = 32;
    w.num_requests = 2000;
    w.range_ratio = 0.3;
    llmstep_serve_result a, b;
    llmstep_error err;
    CHECK_INT(llmstep_serve(d, &w, &a, &err), LLMSTEP_OK);
    CHECK_REL(a.request_throughput_per_s, 32.0 / a.e2e_s.mean, 0.03);
    CHECK_INT(a.n_requests, 2000);
    CHECK_INT(llmstep_serve(d, &w, &b, &err), LLMSTEP_OK);
    CHECK_REL(b.ttft_s.p90, a.ttft_s.p90, 0.0);
    w.concurrency = 0;
    CHECK_INT(llmstep_serve(d, &w, &a, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "concurrency");
    llmstep_workload_init(&w);
    w.arrival = LLMSTEP_ARRIVAL_TRACE;
    w.trace_path = SIM_SOURCE_DIR "/tests/data/no-such-trace.jsonl";
    CHECK(llmstep_serve(d, &w, &a, &err) != LLMSTEP_OK);
    CHECK_CONTAINS(err.message, "no-such-trace.jsonl");
    llmstep_batch_result br;
    CHECK_INT(llmstep_batch(d, 8, 1024, 128, &br, &err), LLMSTEP_OK);
    CHECK_INT(br.n_decode_steps + br.n_prefill_steps, br.n_steps);
    CHECK(br.latency_s > 127 * 0.004); /* 127 decode steps of at least 4.8 ms (see above) */
    llmstep_deploy_free(d);
}

int main(void)
{
    llmstep_error err;
    ctx = llmstep_ctx_new(SIM_SOURCE_DIR, &err);
    if (!ctx) {
        printf("FAIL context: %s\n", err.message);
        return 1;
    }
    version_and_abi();
    model_facts_and_cache();
    errors_name_file_and_field();
    step_ops_and_grid();
    capacity_rule();
    serving();
    llmstep_ctx_free(ctx);
    return check_report("test_api");
}
