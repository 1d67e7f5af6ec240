/*
 * test_capacity.c - weights and KV bytes per GPU and the KV-cache capacity,
 * against figures derived by hand from the models' config.json for an MHA
 * (Llama-2-7B), a GQA (Llama-3.1-70B) and a MoE (Mixtral-8x7B) model at two
 * TPs each, through sim_capacity_compute (which calls the engine's
 * sim_memory_compute), so the numbers are the ones the batch simulation uses.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bundled.h"
#include "capacity.h"
#include "check.h"
#include "toys.h"

/* model on the H100 SXM profile with the vllm-v0 engine, the scheduler resolved at
 * max_model_len, and a bf16 run at TP tp; 0, or -1 after counting a failed load. */
static int h100_v0(toy_setup *x, const char *model, int64_t max_model_len, int tp)
{
    if (load_model(model, &x->m) != 0 || load_hw("h100-sxm", &x->hw) != 0 ||
        load_engine("vllm-v0", &x->e) != 0)
        return -1;
    sim_sched_cfg_unset(&x->in);
    x->in.max_model_len = max_model_len;
    CHECK(toy_resolve(x) == SIM_OK);
    x->run = (sim_run_cfg){
        tp, SIM_DTYPE_BF16, SIM_DTYPE_BF16, SIM_ROOFLINE_OP, 1.0, 0.0, SIM_GEMM_FLAT, 1, 1, 0};
    return 0;
}

/*
 * Hand derivations (bf16: 2 bytes per element; Vg = ceil(V / tp) rows of embedding and LM head;
 * q, k, v, o, gate, up, down and experts divided by tp; norms (2L+1) d and routers replicated).
 *
 * Llama-2-7B: L 32, d 4096, H = K = 32, dh 128, F 11008, V 32000.
 *   per layer: attention d (H dh + 2 K dh) + H dh d = 67,108,864; MLP 3 d F = 135,266,304
 *   TP 1: 2 x 32000 x 4096 + 32 x 202,375,168 + 65 x 4096 = 6,738,415,616 params
 *         = 13,476,831,232 bytes; KV 2 x 32 x 32 x 128 x 2 = 524,288 bytes per token
 *   TP 2: 2 x 16000 x 4096 + 32 x 101,187,584 + 266,240 = 3,369,340,928 params
 *         = 6,738,681,856 bytes; KV 262,144
 * Llama-3.1-70B: L 80, d 8192, H 64, K 8, dh 128, F 28672, V 128256.
 *   per layer: attention 8192 (8192 + 2048) + 8192 x 8192 = 150,994,944; MLP 704,643,072
 *   TP 2: 2 x 64128 x 8192 + 80 x 855,638,016 / 2 + 161 x 8192 = 35,277,512,704 params
 *         = 70,555,025,408 bytes; KV 2 x 80 x 4 x 128 x 2 = 163,840
 *   TP 8: 2 x 16032 x 8192 + 80 x 855,638,016 / 8 + 1,318,912 = 8,820,367,360 params
 *         = 17,640,734,720 bytes; KV heads max(1, 8/8) = 1: 40,960
 * Mixtral-8x7B: L 32, d 4096, H 32, K 8, dh 128, E 8 experts of Fe 14336, V 32000.
 *   per layer: attention 4096 (4096 + 2048) + 4096 x 4096 = 41,943,040;
 *   experts 8 x 3 x 4096 x 14336 = 1,409,286,144; router 4096 x 8 = 32,768 (replicated)
 *   TP 1: 2 x 32000 x 4096 + 32 x 1,451,261,952 + 266,240 = 46,702,792,704 params
 *         = 93,405,585,408 bytes; KV 2 x 32 x 8 x 128 x 2 = 131,072
 *   TP 2: 2 x 16000 x 4096 + 32 x (20,971,520 + 704,643,072 + 32,768) + 266,240
 *         = 23,352,053,760 params = 46,704,107,520 bytes; KV 65,536
 */
static const struct {
    const char *name, *model;
    int tp;
    double weights_bytes, kv_bytes_per_token;
} per_gpu[] = {
    {"mha_llama2_7b_tp1", "llama-2-7b", 1, 13476831232.0, 524288.0},
    {"mha_llama2_7b_tp2", "llama-2-7b", 2, 6738681856.0, 262144.0},
    {"gqa_llama31_70b_tp2", "llama-3.1-70b", 2, 70555025408.0, 163840.0},
    {"gqa_llama31_70b_tp8_replicates_kv_head", "llama-3.1-70b", 8, 17640734720.0, 40960.0},
    {"moe_mixtral_tp1", "mixtral-8x7b", 1, 93405585408.0, 131072.0},
    {"moe_mixtral_tp2_router_replicated", "mixtral-8x7b", 2, 46704107520.0, 65536.0},
};

static void weights_and_kv_per_gpu_match_hand_derivation(void)
{
    static toy_setup x;
    for (size_t i = 0; i < sizeof(per_gpu) / sizeof(per_gpu[0]); i++) {
        if (h100_v0(&x, per_gpu[i].model, 4096, per_gpu[i].tp) != 0)
            continue;
        sim_capacity c;
        sim_capacity_compute(&x.e, &x.m, &x.hw, &x.run, &x.s, 4096, &c);
        printf("  %s\n", per_gpu[i].name);
        CHECK_REL(c.mem.weights_bytes, per_gpu[i].weights_bytes, 0.0);
        CHECK_REL(c.mem.kv_bytes_per_token, per_gpu[i].kv_bytes_per_token, 0.0);
        /* The figures are the engine's memory model, not a second one. */
        sim_memory mem;
        sim_memory_compute(&x.e, &x.m, &x.hw, &x.run, &x.s, &mem);
        CHECK_INT(c.mem.kv_blocks, mem.kv_blocks);
        CHECK_INT(c.fits, mem.fits);
    }
}

/*
 * Llama-3.1-70B on H100 SXM at TP 2, max_model_len 8192, vllm-v0 defaults:
 *   usable      = 85,899,345,920 x 0.9                                   = 77,309,411,328
 *   activations = 8192 tokens x (2 x 8192 + 3 x 28672/2) x 2 + 256 x 128256 x 8
 *               = 973,078,528 + 262,668,288                              =  1,235,746,816
 *   reserve     = 1 GiB + 0.5 GiB (tp > 1)                               =  1,610,612,736
 *   KV budget   = 77,309,411,328 - 70,555,025,408 - 1,235,746,816 - 1,610,612,736
 *                                                                        =  3,908,026,368
 *   blocks      = floor(3,908,026,368 / (16 x 163,840)) = floor(1490.8)  = 1490
 *   tokens      = 1490 x 16 = 23,840 >= 8192: fits
 *   sequences at 4096 tokens = floor(1490 / 256) = 5; at 4097: floor(1490 / 257) = 5;
 *   at 1000: floor(1490 / 63) = 23; at 8193 (> max_model_len): 0
 */
static void llama70b_tp2_capacity_matches_hand_derivation(void)
{
    static toy_setup x;
    if (h100_v0(&x, "llama-3.1-70b", 8192, 2) != 0)
        return;
    sim_capacity c;
    sim_capacity_compute(&x.e, &x.m, &x.hw, &x.run, &x.s, 4096, &c);
    CHECK_REL(c.mem.usable_bytes, 77309411328.0, 1e-15);
    CHECK_REL(c.mem.activation_bytes, 1235746816.0, 0.0);
    CHECK_REL(c.mem.reserve_bytes, 1610612736.0, 0.0);
    CHECK_REL(c.mem.kv_budget_bytes, 3908026368.0, 1e-12);
    CHECK_INT(c.mem.kv_blocks, 1490);
    CHECK_INT(c.mem.kv_capacity_tokens, 23840);
    CHECK_INT(c.fits, 1);
    CHECK_INT(c.blocks_per_seq, 256);
    CHECK_INT(c.max_seqs_at_context, 5);
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 4097), 5);
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 1000), 23);
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 8193), 0);
    /* Short contexts are capped by max_num_seqs (256): 1490 blocks hold 1490 one-block seqs. */
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 16), 256);
    /* The default max_model_len (131072) does not fit in 23,840 tokens: the engine refuses. */
    sim_sched_cfg_unset(&x.in);
    CHECK(toy_resolve(&x) == SIM_OK);
    sim_capacity_compute(&x.e, &x.m, &x.hw, &x.run, &x.s, 4096, &c);
    CHECK_INT(c.fits, 0);
    CHECK_INT(c.max_seqs_at_context, 0);
    /* TP 1 cannot hold 141 GB of weights on 80 GiB. */
    x.run.tp = 1;
    sim_capacity_compute(&x.e, &x.m, &x.hw, &x.run, &x.s, 4096, &c);
    CHECK_INT(c.fits, 0);
    CHECK(c.mem.kv_budget_bytes < 0.0);
    CHECK_INT(c.mem.kv_blocks, 0);
}

/*
 * Mixtral-8x7B at TP 2 x DP 2 (docs/model.md, "Expert and data parallelism"): the experts
 * spread over DP x TP = 4 GPUs, 2 whole experts a GPU with --ep (8 / 4) or a 14336 / 4 slice of
 * each without: 32 x 2 x 176,160,768 = 11,274,289,152 expert params either way. The rest is the
 * TP 2 shard, replicated over DP: 2 x 16000 x 4096 + 32 x (20,971,520 + 32,768) + 266,240.
 *   total 131,072,000 + 32 x 373,325,824 + 266,240 = 12,077,764,608 params
 *         = 24,155,529,216 bytes; KV per token as at TP 2, 65,536 (each DP copy its own cache).
 */
static void mixtral_dp_ep_weights_match_hand_derivation(void)
{
    static toy_setup x;
    for (int ep = 0; ep <= 1; ep++) {
        if (h100_v0(&x, "mixtral-8x7b", 4096, 2) != 0)
            return;
        x.run.dp = 2;
        x.run.ep = ep;
        sim_capacity c;
        sim_capacity_compute(&x.e, &x.m, &x.hw, &x.run, &x.s, 4096, &c);
        CHECK_REL(c.mem.weights_bytes, 24155529216.0, 1e-15);
        CHECK_REL(c.mem.kv_bytes_per_token, 65536.0, 0.0);
    }
}

int main(void)
{
    mixtral_dp_ep_weights_match_hand_derivation();
    weights_and_kv_per_gpu_match_hand_derivation();
    llama70b_tp2_capacity_matches_hand_derivation();
    return check_report("test_capacity");
}
