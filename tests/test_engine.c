/*
 * test_engine.c - the vLLM V0 scheduler simulation and the memory budget,
 * against step counts, block counts and preemptions derived by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundled.h"
#include "check.h"
#include "engine.h"
#include "hw.h"
#include "sched_v0.h"
#include "toys.h"

static void toy_engine(sim_engine *e)
{
    *e = (sim_engine){0};
    e->max_num_seqs = 256;
    e->block_size = 16;
    e->gpu_memory_utilization = 1.0;
    e->min_batched_tokens = 2048;
    e->chunked_batched_tokens = 64;
    e->chunked_auto_above_len = 0;
    e->watermark_frac = 0.0;
    e->host_step_s = 1e-3;
    e->host_step_tp_s = 2e-3;
    e->host_per_seq_s = 1e-5;
    e->sampler_logit_bytes = 6.0; /* engines/vllm-v0.json: the additive estimate */
    e->activation_peak_additive = 1;
}

/* The toy set-up (toys.h) on the V0 engine above. */
static void v0_setup(toy_setup *x)
{
    sim_engine e;
    toy_engine(&e);
    toy_setup_init(x, &e);
}

static sim_batch_work work;

/* Simulates batch b on the set-up x (resolved) into r; the status of sim_batch_simulate. */
static sim_status simulate(toy_setup *x, sim_batch b, sim_batch_result *r)
{
    return sim_batch_simulate(toy_su(x), &b, &work, r, &x->err);
}

/* Checks the step counts of r against a hand derivation (steps in all, steps with a prefill,
 * decode-only steps, preemptions); name labels a failure. */
static void check_steps(const char *name, const sim_batch_result *r, int64_t steps, int64_t prefill,
                        int64_t decode, int64_t preemptions)
{
    int failed_before = check_fail_count;
    CHECK_INT(r->n_steps, steps);
    CHECK_INT(r->n_prefill_steps, prefill);
    CHECK_INT(r->n_decode_steps, decode);
    CHECK_INT(r->preemptions, preemptions);
    if (check_fail_count != failed_before)
        printf("  (%s)\n", name);
}

/*
 * 4 prompts of 100 tokens, 5 output tokens, plenty of memory and budget 2048:
 * one prefill step admits all four (400 tokens) and samples token 1; then 4 decode steps.
 * Blocks: each sequence ends with 100 + 5 - 1 = 104 cached tokens = ceil(104 / 16) = 7 blocks
 * (decode positions 100..103 stay in the 7th block), so the peak is 4 x 7 = 28.
 * Host time: 1 ms + 10 us per sequence in each of the 5 steps with 4 sequences = 5 x 1.04 ms.
 */
static void batch_that_fits(void)
{
    toy_setup x;
    v0_setup(&x);
    CHECK_INT(toy_resolve(&x), SIM_OK);
    CHECK_INT(x.s.max_num_batched_tokens, 4096); /* max(max_model_len 4096, 2048) */
    sim_batch_result r;
    CHECK_INT(simulate(&x, (sim_batch){4, 100, 5}, &r), SIM_OK);
    check_steps("batch that fits", &r, 5, 1, 4, 0);
    CHECK_INT(r.peak_kv_blocks, 28);
    CHECK_REL(r.host_sum_s, 5 * 1.04e-3, 1e-12);
}

/*
 * Token budget 250 (max_model_len 200 so vLLM accepts it): 100-token prompts go two per
 * prefill step, and V0 prefers prefills, so steps are P P D D D D: 6 steps (plenty of memory:
 * no preemption).
 */
static void token_budget_splits_prefills(void)
{
    toy_setup x;
    v0_setup(&x);
    x.in.max_num_batched_tokens = 250;
    x.in.max_model_len = 200;
    x.in.max_num_seqs = 4; /* vLLM requires max_num_batched_tokens >= max_num_seqs */
    CHECK_INT(toy_resolve(&x), SIM_OK);
    sim_batch_result r;
    CHECK_INT(simulate(&x, (sim_batch){4, 100, 5}, &r), SIM_OK);
    check_steps("token budget 250", &r, 6, 2, 4, 0);
    /* vLLM rejects a token budget below max_num_seqs (256 by default). */
    x.in.max_num_seqs = -1;
    CHECK_INT(toy_resolve(&x), SIM_ERANGE);
    CHECK_CONTAINS(x.err.msg, "max_num_batched_tokens: 250 is below max_num_seqs = 256");
}

/*
 * Preemption by recompute, with vLLM V0's block manager rules: a running sequence is decoded
 * only if at least one block is free (BlockSpaceManagerV1.can_append_slots), and a prompt is
 * admitted only if `watermark` blocks stay free. 12 blocks of 16 tokens, watermark 25% = 3
 * blocks; 2 prompts of 64 tokens (4 blocks each), 40 output tokens.
 * - Step 1: prefill both (12 - 4 = 8 >= 3, 8 - 4 = 4 >= 3): 4 free; 1 token sampled each.
 * - Decode 1 writes position 64: a new block each (2 free). Decodes 2-16: none.
 * - Decode 17 (position 80): a new block each: 0 free. 18 tokens sampled each.
 * - Decode 18: seq 0 finds no free block, so the newest running sequence (seq 1, 6 blocks)
 *   is preempted and queued: 6 free. Seq 1 needs 64 + 18 = 82 tokens = 6 blocks to come
 *   back, which leaves 0 < 3 free: it waits while seq 0 runs (free falls to 5 and 4 at
 *   positions 96 and 112).
 * - Seq 0 needs 39 decode steps in all (steps 2-40), then frees its 7 blocks (12 free).
 * - Step 41: seq 1 re-prefills its 82 tokens and samples its 19th; 21 decodes follow.
 * Total 62 steps = 2 prefill + 60 decode; 1 preemption; 82 recomputed tokens; peak 12 blocks.
 */
static void batch_that_preempts(void)
{
    toy_setup x;
    v0_setup(&x);
    x.e.watermark_frac = 0.25;
    CHECK_INT(toy_resolve(&x), SIM_OK);
    toy_set_blocks(&x, 12);
    sim_memory mem;
    sim_memory_compute(toy_su(&x), &mem);
    CHECK_INT(mem.kv_blocks, 12);
    CHECK_INT(mem.kv_capacity_tokens, 192);
    sim_batch_result r;
    CHECK_INT(simulate(&x, (sim_batch){2, 64, 40}, &r), SIM_OK);
    check_steps("batch that preempts", &r, 62, 2, 60, 1);
    CHECK_INT(r.recomputed_tokens, 82);
    CHECK_INT(r.peak_kv_blocks, 12);
    CHECK_REL(r.peak_kv_frac, 1.0, 0.0);
}

/*
 * Chunked prefill, budget 64 tokens, 2 prompts of 100, 3 output tokens:
 * step 1: seq 0 chunk 64.  step 2: seq 0 chunk 36 (done, samples 1), seq 1 chunk 28.
 * step 3: seq 0 decodes (2), seq 1 chunk 63.  step 4: seq 0 decodes (3, finished), seq 1
 * chunk 9 (done, samples 1).  steps 5, 6: seq 1 decodes (2, 3).
 * 6 steps: 4 with prefill chunks, 2 decode-only.
 */
static void chunked_prefill_steps(void)
{
    toy_setup x;
    v0_setup(&x);
    x.in.enable_chunked_prefill = 1;
    CHECK_INT(toy_resolve(&x), SIM_OK);
    CHECK_INT(x.s.max_num_batched_tokens, 64);
    sim_batch_result r;
    CHECK_INT(simulate(&x, (sim_batch){2, 100, 3}, &r), SIM_OK);
    check_steps("chunked prefill", &r, 6, 4, 2, 0);
}

/*
 * Memory budget of Llama-2-7B fp16 on an 80 GiB GPU at utilization 0.9 with a 1 GiB reserve:
 * usable 0.9 x 85,899,345,920 = 77,309,411,328; weights 2 x 6,738,415,616 = 13,476,831,232
 * plus the RoPE cos/sin cache, 4096 positions x 128 x 2 = 1,048,576: 13,477,879,808;
 * activations (profiling pass of 4096 tokens, 256 sequences; V0's additive estimate, forward
 * pass plus sampler, docs/engine.md): 4096 x (2 x 4096 + 3 x 11008) x 2 + 256 x 32000 x (2 + 6)
 * = 337,641,472 + 65,536,000 = 403,177,472; budget 62,354,612,224;
 * a block of 16 tokens x 524,288 B = 8,388,608 B -> 7433 blocks = 118,928 tokens.
 */
static void llama2_7b_kv_capacity(void)
{
    toy_setup x;
    v0_setup(&x);
    if (load_model("llama-2-7b", &x.m) != 0)
        return;
    x.e.gpu_memory_utilization = 0.9;
    x.e.reserve_bytes = 1073741824.0;
    toy_hw(&x.hw, 85899345920.0);
    CHECK_INT(toy_resolve(&x), SIM_OK);
    sim_memory mem;
    sim_memory_compute(toy_su(&x), &mem);
    CHECK_REL(mem.weights_bytes, 13477879808.0, 0.0);
    CHECK_REL(mem.activation_bytes, 403177472.0, 0.0);
    CHECK_REL(mem.kv_budget_bytes, 62354612224.0, 1e-15);
    CHECK_INT(mem.kv_blocks, 7433);
    CHECK_INT(mem.kv_capacity_tokens, 118928);
    CHECK(mem.fits);
}

static void bad_batches_are_rejected(void)
{
    toy_setup x;
    v0_setup(&x);
    CHECK_INT(toy_resolve(&x), SIM_OK);
    sim_batch_result r;
    CHECK_INT(simulate(&x, (sim_batch){1, 4000, 200}, &r), SIM_ERANGE);
    CHECK_CONTAINS(x.err.msg, "exceed max_model_len = 4096");
    /* Memory for 3 blocks cannot hold one sequence of 64 + 40 tokens (7 blocks). */
    toy_set_blocks(&x, 3);
    CHECK_INT(simulate(&x, (sim_batch){1, 64, 40}, &r), SIM_ERANGE);
    CHECK_CONTAINS(x.err.msg, "memory: 3 KV blocks");
    x.in.gpu_memory_utilization = 1.5;
    CHECK_INT(toy_resolve(&x), SIM_ERANGE);
}

/*
 * Decode runs (docs/model.md, "Decode runs"): sim_batch_simulate times each run of identical
 * decode steps in one sum; sim_batch_simulate_stepwise times every step, and its counts are
 * the ones the tests above derive by hand. Over batches that fit, preempt (12 and 40 blocks),
 * run out of room, chunk, and reach a sliding window, in both roofline modes with alpha and
 * beta set: the status, every count and the peak blocks are equal, and every time equal to
 * rounding (1e-9).
 */
static void decode_runs_match_stepping(void)
{
    const int64_t blocks[] = {12, 40, 100000};
    const int64_t batches[] = {1, 3, 7, 16}, prompts[] = {20, 64}, outputs[] = {5, 40, 130};
    int cases = 0, preempting = 0;
    for (int chunked = 0; chunked < 2; chunked++)
        for (int window = 0; window < 2; window++)
            for (int mode = 0; mode < SIM_ROOFLINE_MODE_COUNT; mode++)
                for (size_t k = 0; k < sizeof(blocks) / sizeof(blocks[0]); k++) {
                    toy_setup x;
                    v0_setup(&x);
                    x.m.sliding_window = window ? 50 : 0;
                    x.e.watermark_frac = 0.1;
                    x.in.enable_chunked_prefill = chunked;
                    CHECK_INT(toy_resolve(&x), SIM_OK);
                    x.run.mode = (sim_roofline_mode)mode;
                    x.run.alpha = 1.3;
                    x.run.beta_s = 2e-5;
                    toy_set_blocks(&x, blocks[k]);
                    for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++)
                        for (size_t p = 0; p < sizeof(prompts) / sizeof(prompts[0]); p++)
                            for (size_t o = 0; o < sizeof(outputs) / sizeof(outputs[0]); o++) {
                                sim_batch bt = {batches[b], prompts[p], outputs[o]};
                                sim_batch_result r1, r2;
                                struct sim_err e1, e2;
                                sim_status s1 =
                                    sim_batch_simulate(toy_su(&x), &bt, &work, &r1, &e1);
                                sim_status s2 =
                                    sim_batch_simulate_stepwise(toy_su(&x), &bt, &work, &r2, &e2);
                                CHECK_INT(s1, s2);
                                cases++;
                                if (s1 != SIM_OK)
                                    continue;
                                preempting += r2.preemptions > 0;
                                CHECK_INT(r1.n_steps, r2.n_steps);
                                CHECK_INT(r1.n_prefill_steps, r2.n_prefill_steps);
                                CHECK_INT(r1.preemptions, r2.preemptions);
                                CHECK_INT(r1.recomputed_tokens, r2.recomputed_tokens);
                                CHECK_INT(r1.peak_kv_blocks, r2.peak_kv_blocks);
                                CHECK_REL(r1.latency_s, r2.latency_s, 1e-9);
                                CHECK_REL(r1.roofline_sum_s, r2.roofline_sum_s, 1e-9);
                                CHECK_REL(r1.host_sum_s, r2.host_sum_s, 1e-9);
                                CHECK_REL(r1.decode_s, r2.decode_s, 1e-9);
                                CHECK_REL(r1.prefill_s, r2.prefill_s, 1e-9);
                            }
                }
    CHECK_INT(cases, 2 * 2 * 2 * 3 * 4 * 2 * 3);
    CHECK(preempting > 10); /* the tight caches do preempt */
}

/*
 * Host time per step (sim_engine_host_s, docs/model.md "Calibration equation"), on the toy
 * engine (1 ms at TP 1, 2 ms at TP > 1, 10 us per sequence) with 90 us and 9.5 us per extra
 * rank, 24 sequences:
 *   TP 1: 1 ms + 24 x 10 us                                  = 1.24 ms
 *   TP 2: 2 ms + 24 x 10 us + 1 x (90 us + 24 x 9.5 us)       = 2.558 ms
 *   TP 4: 2 ms + 24 x 10 us + 3 x (90 us + 24 x 9.5 us)       = 3.194 ms
 * and every host figure dropped (--no-host-time): 0 at any TP.
 */
static void host_time_per_rank(void)
{
    sim_engine e;
    toy_engine(&e);
    e.host_step_rank_s = 90e-6;
    e.host_per_seq_rank_s = 9.5e-6;
    CHECK_REL(sim_engine_host_s(&e, 1, 24.0), 1.24e-3, 1e-12);
    CHECK_REL(sim_engine_host_s(&e, 2, 24.0), 2.558e-3, 1e-12);
    CHECK_REL(sim_engine_host_s(&e, 4, 24.0), 3.194e-3, 1e-12);
    sim_engine_drop_host(&e);
    CHECK_REL(sim_engine_host_s(&e, 4, 24.0), 0.0, 0.0);
    /* The bundled V0 profile carries the pair (engines/vllm-v0.json); V1 profiles do not. */
    sim_engine v0;
    char path[1024];
    struct sim_err err;
    snprintf(path, sizeof(path), "%s/engines/vllm-v0.json", SIM_SOURCE_DIR);
    if (sim_engine_load(path, &v0, &err) == SIM_OK) {
        CHECK_REL(v0.host_step_rank_s, 90.1e-6, 1e-12);
        CHECK_REL(v0.host_per_seq_rank_s, 9.5e-6, 1e-12);
    } else {
        CHECK(0);
    }
}

/*
 * The ROCm PagedAttention rule (engine.h paged_decode_rocm): the bundled V0 profile sets it
 * (vllm/attention/backends/rocm_flash_attn.py up to v0.6.1); a profile that sets it without
 * one of the rule's figures is refused naming the flag and the missing figure.
 */
static void rocm_paged_rule_needs_its_figures(void)
{
    char path[1024], tmp[64];
    struct sim_err err;
    sim_engine v0;
    snprintf(path, sizeof(path), "%s/engines/vllm-v0.json", SIM_SOURCE_DIR);
    CHECK(sim_engine_load(path, &v0, &err) == SIM_OK);
    CHECK_INT(v0.paged_decode_rocm, 1);
    /* The same file without paged_v1_max_seq_len and paged_decode_sliding_window. */
    FILE *in = fopen(path, "r");
    snprintf(tmp, sizeof(tmp), "/tmp/llmstep-test-engine-%ld.json", (long)getpid());
    FILE *out = fopen(tmp, "w");
    CHECK(in && out);
    if (!in || !out) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return;
    }
    char line[4096];
    while (fgets(line, sizeof(line), in))
        if (!strstr(line, "\"paged_v1_max_seq_len\"") &&
            !strstr(line, "\"paged_decode_sliding_window\""))
            fputs(line, out);
    fclose(in);
    fclose(out);
    CHECK(sim_engine_load(tmp, &v0, &err) != SIM_OK);
    CHECK_CONTAINS(err.msg, "paged_decode_rocm");
    CHECK_CONTAINS(err.msg, "paged_v1_max_seq_len is missing");
    remove(tmp);
}

int main(void)
{
    rocm_paged_rule_needs_its_figures();
    host_time_per_rank();
    batch_that_fits();
    token_budget_splits_prefills();
    batch_that_preempts();
    chunked_prefill_steps();
    llama2_7b_kv_capacity();
    bad_batches_are_rejected();
    decode_runs_match_stepping();
    return check_report("test_engine");
}
