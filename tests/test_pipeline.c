/*
 * test_pipeline.c - pipeline parallelism and multi-node communication against hand derivations:
 * vLLM's layer split (get_pp_indices, vllm/distributed/utils.py), what each stage counts, the
 * inter-stage transfer, the pipeline's latency, cycle and bubble, the hierarchical all-reduce
 * across nodes, and Llama-3.1-405B's per-GPU weights and KV bytes at TP 8 x PP 2 on H100s.
 */
#include <stdio.h>

#include "bundled.h"
#include "check.h"
#include "kernels.h"
#include "pipeline.h"
#include "sweep.h"
#include "toys.h"

/* vLLM get_pp_indices: floor(L / pp) layers each, and the remainder r given one each to the
 * stages pp-2, pp-3, ..., pp-1-r (partitions[-i] += 1 for i in 2 .. r + 1). */
static void test_partition(void)
{
    int64_t l[SIM_PP_MAX];
    /* 126 layers (Llama-3.1-405B): 126 = 2 x 63 = 3 x 42; 126 = 4 x 31 + 2 -> stages 2 and 1
     * get one more: 31, 32, 32, 31; 126 = 5 x 25 + 1 -> stage 3: 25, 25, 25, 26, 25. */
    sim_pp_partition(126, 2, l);
    CHECK_INT(l[0], 63);
    CHECK_INT(l[1], 63);
    sim_pp_partition(126, 3, l);
    CHECK_INT(l[0], 42);
    CHECK_INT(l[1], 42);
    CHECK_INT(l[2], 42);
    sim_pp_partition(126, 4, l);
    CHECK_INT(l[0], 31);
    CHECK_INT(l[1], 32);
    CHECK_INT(l[2], 32);
    CHECK_INT(l[3], 31);
    sim_pp_partition(126, 5, l);
    CHECK_INT(l[0], 25);
    CHECK_INT(l[2], 25);
    CHECK_INT(l[3], 26);
    CHECK_INT(l[4], 25);
    /* 7 = 4 x 1 + 3: every stage but the last gets one more: 2, 2, 2, 1. */
    sim_pp_partition(7, 4, l);
    CHECK_INT(l[0], 2);
    CHECK_INT(l[1], 2);
    CHECK_INT(l[2], 2);
    CHECK_INT(l[3], 1);
    int64_t start, n;
    sim_pp_stage_range(126, 4, 2, &start, &n);
    CHECK_INT(start, 63); /* 31 + 32 */
    CHECK_INT(n, 32);
}

static void test_refusals(void)
{
    sim_model m;
    const toy_shape sh = {4, 64, 1, 1, 64, 128, 64, 4096, SIM_DTYPE_FP16};
    toy_llama(&m, "toy4", &sh);
    struct sim_err err;
    CHECK(sim_pp_check(&m, 4, &err) == SIM_OK);
    CHECK(sim_pp_check(&m, 5, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "--pp 5: more pipeline stages than the model's 4 layers");
    CHECK(sim_pp_check(&m, 0, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "--pp 0: expected 1 to 64");
    sim_hw hw;
    toy_hw(&hw, 1e11);
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    cfg.pp = 5;
    sim_step s = {1, {{1, 1, 10, 1}}};
    CHECK(sim_step_check(&m, &cfg, &s, &err) == SIM_EINVAL);
}

/*
 * Toy model: L 4, d 64, H = K = 1, dh 64, F 128, V 64, fp16 (hb 2). One decode (T = S_e = 1).
 * PP 2 -> stages of 2 layers. Per stage of 2 layers:
 *   qkv_proj FLOPs   = 2 x 2 T d (H + 2K) dh = 2 x 2 x 64 x 192 = 49,152 (whole model 98,304)
 *   norms FLOPs      = n_norms x 5 T d: stage 0 4 x 320 = 1,280; last stage 5 x 320 = 1,600
 *   embedding        only on stage 0; lm_head 2 S_e d V = 8,192 FLOPs only on stage 1
 */
static void test_stage_counts(void)
{
    sim_model m;
    const toy_shape sh = {4, 64, 1, 1, 64, 128, 64, 4096, SIM_DTYPE_FP16};
    toy_llama(&m, "toy4", &sh);
    sim_hw hw;
    toy_hw(&hw, 1e11);
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    cfg.pp = 2;
    const sim_step s = {1, {{1, 1, 10, 1}}};
    sim_step_cost a, b;
    sim__step_stage_cost(&m, &hw, &cfg, 0, 2, 1, 0, &s, &a);
    sim__step_stage_cost(&m, &hw, &cfg, 2, 2, 0, 1, &s, &b);
    CHECK_REL(a.ops[SIM_OP_QKV].flops, 49152.0, 1e-12);
    CHECK_REL(b.ops[SIM_OP_QKV].flops, 49152.0, 1e-12);
    CHECK_REL(a.ops[SIM_OP_NORM].flops, 1280.0, 1e-12);
    CHECK_REL(b.ops[SIM_OP_NORM].flops, 1600.0, 1e-12);
    CHECK(a.ops[SIM_OP_EMBED].bytes > 0.0);
    CHECK(b.ops[SIM_OP_EMBED].bytes == 0.0);
    CHECK(a.ops[SIM_OP_LM_HEAD].flops == 0.0);
    CHECK_REL(b.ops[SIM_OP_LM_HEAD].flops, 8192.0, 1e-12);
    CHECK(a.ops[SIM_OP_SAMPLER].bound == SIM_BOUND_NONE);
    /* The pipeline step sums the stages' operators: the whole model's qkv count. */
    sim_step_cost whole;
    sim_step_cost_compute(&m, &hw, &cfg, &s, &whole);
    CHECK_REL(whole.ops[SIM_OP_QKV].flops, 98304.0, 1e-12);
    /* All-reduces at TP 2 (H = K = 2): two per layer, and the embedding's on the first stage:
     * 2 x 2 + 1 = 5 and 2 x 2 = 4; the pipeline does 2 L + 1 = 9 in all, as without PP. */
    const toy_shape sh2 = {4, 64, 2, 2, 32, 128, 64, 4096, SIM_DTYPE_FP16};
    toy_llama(&m, "toy4h2", &sh2);
    sim_run_cfg c2 = cfg;
    c2.tp = 2;
    sim__step_stage_cost(&m, &hw, &c2, 0, 2, 1, 0, &s, &a);
    sim__step_stage_cost(&m, &hw, &c2, 2, 2, 0, 1, &s, &b);
    CHECK_INT(a.n_allreduce, 5);
    CHECK_INT(b.n_allreduce, 4);
    sim_step_cost_compute(&m, &hw, &c2, &s, &whole);
    CHECK_INT(whole.n_allreduce, 9);
    /* The logits are gathered from the vocabulary shards on the last stage only. */
    CHECK(a.ops[SIM_OP_LOGITS_GATHER].bound == SIM_BOUND_NONE);
    CHECK(b.ops[SIM_OP_LOGITS_GATHER].bound == SIM_BOUND_COMM);
}

/*
 * Transfer of T = 1000 tokens, d 64, hb 2: one tensor T d hb = 128,000 bytes, two of them
 * (hidden states and residual). The toy GPU has the default link (32e9 B/s), no all-reduce
 * entry (latency 30 us, bus bandwidth 0.7 x 32e9 = 22.4e9) and 8 GPUs per node; the fabric
 * defaults to 25e9 B/s and 5 us per hop.
 *   TP 1, same node:   2 (30e-6 + 128000 / 32e9)            = 2 (30 + 4) us     = 68 us
 *   TP 1, two nodes:   2 (5e-6 + 128000 / 25e9)             = 2 (5 + 5.12) us   = 20.24 us
 *   TP 2, same node:   2 (30e-6 + 64000 / 32e9)
 *                      + 2 (30e-6 + 1/2 x 128000 / 22.4e9)  = 64 us + 65.714285714 us
 */
static void test_transfer(void)
{
    sim_model m;
    const toy_shape sh = {4, 64, 2, 2, 32, 128, 64, 4096, SIM_DTYPE_FP16};
    toy_llama(&m, "toy4", &sh);
    sim_hw hw;
    toy_hw(&hw, 1e11);
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    cfg.pp = 2;
    CHECK(!sim_pp_boundary_internode(&hw, 1, 0));
    CHECK_REL(sim_pp_transfer_s(&m, &hw, &cfg, 0, 1000.0), 68e-6, 1e-12);
    cfg.tp = 2;
    CHECK_REL(sim_pp_transfer_s(&m, &hw, &cfg, 0, 1000.0), 64e-6 + 65.714285714285714e-6, 1e-12);
    /* TP 8 on 8-GPU nodes: every stage boundary is a node boundary. */
    CHECK(sim_pp_boundary_internode(&hw, 8, 0));
    /* TP 4: stages 0 and 1 share node 0, stage 2 starts node 1. */
    CHECK(!sim_pp_boundary_internode(&hw, 4, 0));
    CHECK(sim_pp_boundary_internode(&hw, 4, 1));
    hw.v[SIM_HWF_N_GPUS_PER_NODE] = 1.0;
    cfg.tp = 1;
    CHECK(sim_pp_boundary_internode(&hw, 1, 0));
    CHECK_REL(sim_pp_transfer_s(&m, &hw, &cfg, 0, 1000.0), 20.24e-6, 1e-12);
}

/*
 * Two stages of 1 s each and a 0.1 s transfer between them:
 *   latency  = 1 + 0.1 + 1 = 2.1 s; interval = max(1.1, 1) = 1.1 s
 *   cycle(1) = max(2.1, 1.1) = 2.1 s; cycle(2) = max(2.1, 2 x 1.1) = 2.2 s
 *   bubble(1) = 1 - 1 x 2 / (2 x 2.1) = 0.476190...; bubble(2) = 1 - 2 x 2 / (2 x 2.2) = 1/11
 * Four equal stages of 1 s without transfers: cycle(4) = 4 s, bubble(4) = 0, bubble(1) = 3/4.
 */
static void test_cycle_bubble(void)
{
    sim_pp_cost c = {.pp = 2};
    c.stage_s[0] = c.stage_s[1] = 1.0;
    c.transfer_s[0] = 0.1;
    c.latency_s = 2.1;
    c.interval_s = 1.1;
    CHECK_REL(sim_pp_cycle_s(&c, 1), 2.1, 1e-15);
    CHECK_REL(sim_pp_cycle_s(&c, 2), 2.2, 1e-15);
    CHECK_REL(sim_pp_bubble_frac(&c, 1), 1.0 - 2.0 / 4.2, 1e-12);
    CHECK_REL(sim_pp_bubble_frac(&c, 2), 1.0 / 11.0, 1e-12);
    sim_pp_cost q = {.pp = 4, .latency_s = 4.0, .interval_s = 1.0};
    for (int i = 0; i < 4; i++)
        q.stage_s[i] = 1.0;
    CHECK_REL(sim_pp_cycle_s(&q, 4), 4.0, 1e-15);
    CHECK_ABS(sim_pp_bubble_frac(&q, 4), 0.0, 1e-15);
    CHECK_REL(sim_pp_bubble_frac(&q, 1), 0.75, 1e-15);
}

/*
 * A toy node of 8 GPUs with a measured 8-GPU all-reduce (20 us, bus bandwidth 100e9 B/s) and a
 * fabric of 50e9 B/s per GPU and 5 us per hop; M = 8e6 bytes:
 *   8 GPUs:  20e-6 + 2 x 7/8 x 8e6 / 100e9 = 20 + 140 us = 160 us
 *   16 GPUs (k = 2 nodes): 160 us + 2 x 1 x 5 us + 2 x 1/2 x (8e6 / 8) / 50e9 = 160 + 10 + 20 us
 *   32 GPUs (k = 4): 160 us + 2 x 3 x 5 us + 2 x 3/4 x 1e6 / 50e9 = 160 + 30 + 30 us
 */
static void test_hierarchical_allreduce(void)
{
    sim_hw hw;
    toy_hw(&hw, 1e11);
    hw.n_allreduce = 1;
    hw.allreduce[0] = (sim_allreduce){
        .n_gpus = 8, .latency_s = 20e-6, .bus_bw_bytes_per_s = 100e9, .prov = SIM_PROV_MEASURED};
    hw.v[SIM_HWF_BW_INTERNODE] = 50e9;
    hw.v[SIM_HWF_INTERNODE_LATENCY] = 5e-6;
    CHECK_REL(sim_allreduce_time_s(&hw, 8, 8e6), 160e-6, 1e-12);
    CHECK_REL(sim_allreduce_time_s(&hw, 16, 8e6), 190e-6, 1e-12);
    CHECK_REL(sim_allreduce_time_s(&hw, 32, 8e6), 220e-6, 1e-12);
}

/*
 * Llama-3.1-405B (L 126, d 16384, H 128, K 8, dh 128, F 53248, V 128256, untied), bf16, TP 8 x
 * PP 2 (63 layers a stage). Sharded parameters per layer: q and o 16384^2 each, k and v
 * 16384 x 1024 each, gate, up, down 3 x 16384 x 53248: 3,187,671,040; two norms of 16384.
 *   63 layers / 8 x 2 B          = 200,823,275,520 / 8 x 2 = 50,205,818,880 bytes
 *   norms, replicated            = 63 x 2 x 16384 x 2      =      4,128,768
 *   embedding (stage 0)          = 128256 / 8 x 16384 x 2  =    525,336,576
 *   final norm (stage 1)         = 16384 x 2               =         32,768
 *   LM head (stage 1, untied)    = 525,336,576
 *   RoPE cos/sin cache (each stage builds it whole; rope_scaling llama3: 131,072 positions)
 *                                = 131072 x 128 x 2        =     33,554,432
 * stage 0: 50,768,838,656; stage 1: 50,768,871,424 bytes (each about 811.7 GB / 16).
 * KV per token per GPU: 2 x 63 layers x (8 / 8) KV heads x 128 x 2 B = 32,256 bytes.
 * At TP 8 without PP one GPU holds 811.7 / 8 = 101 GB of weights: more than an H100's 80 GB.
 */
static void test_405b(void)
{
    sim_model m;
    sim_hw hw;
    sim_engine e;
    if (load_model("llama-3.1-405b", &m) != 0 || load_hw("h100-sxm", &hw) != 0 ||
        load_engine("vllm-v1", &e) != 0)
        return;
    CHECK_REL(sim_pp_stage_weight_bytes(&m, 8, 2, 0, SIM_DTYPE_BF16), 50768838656.0, 1e-15);
    CHECK_REL(sim_pp_stage_weight_bytes(&m, 8, 2, 1, SIM_DTYPE_BF16), 50768871424.0, 1e-15);
    CHECK_REL(sim_pp_stage_kv_bytes_per_token(&m, 8, 2, 1, SIM_DTYPE_BF16), 32256.0, 1e-15);
    sim_sched_cfg in;
    sim_sched_cfg_unset(&in);
    in.max_model_len = 8192;
    sim_sched_resolved s;
    struct sim_err err;
    CHECK(sim_sched_resolve(&e, &m, &hw, &in, &s, &err) == SIM_OK);
    sim_run_cfg run = sim_run_cfg_plain(8, SIM_DTYPE_BF16);
    sim_memory mem;
    sim_memory_compute(&(sim_setup){&e, &m, &hw, &run, &s}, &mem);
    CHECK(!mem.fits);
    CHECK(mem.weights_bytes > 100e9);
    run.pp = 2;
    sim_memory_compute(&(sim_setup){&e, &m, &hw, &run, &s}, &mem);
    CHECK(mem.fits);
    /* Stage 0 has 32,768 bytes less weight and the same KV per token: it has more blocks, so
     * the last stage (1) sizes the cache. */
    CHECK_INT(mem.pp_stage, 1);
    CHECK_REL(mem.weights_bytes, 50768871424.0, 1e-15);
    CHECK_REL(mem.kv_bytes_per_token, 32256.0, 1e-15);
}

/* A sweep row of TP 2 x PP 2 runs on 4 GPUs: 1000 tokens/s at 3.6 USD per GPU-hour cost
 * 3.6 x 4 / 3600 s x 1e6 / 1000 = 4 USD per million tokens. */
static void test_sweep_cost(void)
{
    sim_sweep_row r = {.kind = SIM_SWEEP_DECODE, .tp = 2, .pp = 2, .tokens_per_s = 1000.0};
    const sim_sweep_slo slo = {0};
    sim_sweep_finish(&r, &slo, 3.6);
    CHECK_REL(r.cost_per_mtok_usd, 4.0, 1e-12);
}

int main(void)
{
    test_partition();
    test_refusals();
    test_stage_counts();
    test_transfer();
    test_cycle_bubble();
    test_hierarchical_allreduce();
    test_405b();
    test_sweep_cost();
    return check_report("test_pipeline");
}
