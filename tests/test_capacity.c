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
#include "deploy.h"
#include "toys.h"

/* model on h100-sxm under the bundled engine profile, every scheduler input unset; 0, or -1 when
 * a file does not load (reported). */
static int h100_load(toy_setup *x, const char *model, const char *engine)
{
    if (load_model(model, &x->m) != 0 || load_hw("h100-sxm", &x->hw) != 0 ||
        load_engine(engine, &x->e) != 0)
        return -1;
    sim_sched_cfg_unset(&x->in);
    return 0;
}

/* model on the H100 SXM profile with the vllm-v0 engine, the scheduler resolved at
 * max_model_len, and a bf16 run at TP tp; 0, or -1 after counting a failed load. */
static int h100_v0(toy_setup *x, const char *model, int64_t max_model_len, int tp)
{
    if (h100_load(x, model, "vllm-v0") != 0)
        return -1;
    x->in.max_model_len = max_model_len;
    CHECK(toy_resolve(x) == SIM_OK);
    x->run = sim_run_cfg_plain(tp, SIM_DTYPE_BF16);
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
 * Each GPU also holds the RoPE cos/sin cache whole (vLLM rotary_embedding/base.py: a buffer of
 * max_position_embeddings x rotary_dim values, 16-bit): Llama-2-7B 4096 x 128 x 2 = 1,048,576,
 * Llama-3.1-70B 131072 x 128 x 2 = 33,554,432, Mixtral 32768 x 128 x 2 = 8,388,608 bytes, added
 * to the weights below.
 */
static const struct {
    const char *name, *model;
    int tp;
    double weights_bytes, kv_bytes_per_token;
} per_gpu[] = {
    {"mha_llama2_7b_tp1", "llama-2-7b", 1, 13477879808.0, 524288.0},
    {"mha_llama2_7b_tp2", "llama-2-7b", 2, 6739730432.0, 262144.0},
    {"gqa_llama31_70b_tp2", "llama-3.1-70b", 2, 70588579840.0, 163840.0},
    {"gqa_llama31_70b_tp8_replicates_kv_head", "llama-3.1-70b", 8, 17674289152.0, 40960.0},
    {"moe_mixtral_tp1", "mixtral-8x7b", 1, 93413974016.0, 131072.0},
    {"moe_mixtral_tp2_router_replicated", "mixtral-8x7b", 2, 46712496128.0, 65536.0},
};

static void weights_and_kv_per_gpu_match_hand_derivation(void)
{
    static toy_setup x;
    for (size_t i = 0; i < sizeof(per_gpu) / sizeof(per_gpu[0]); i++) {
        if (h100_v0(&x, per_gpu[i].model, 4096, per_gpu[i].tp) != 0)
            continue;
        sim_capacity c;
        sim_capacity_compute(toy_su(&x), 4096, &c);
        printf("  %s\n", per_gpu[i].name);
        CHECK_REL(c.mem.weights_bytes, per_gpu[i].weights_bytes, 0.0);
        CHECK_REL(c.mem.kv_bytes_per_token, per_gpu[i].kv_bytes_per_token, 0.0);
        /* The figures are the engine's memory model, not a second one. */
        sim_memory mem;
        sim_memory_compute(toy_su(&x), &mem);
        CHECK_INT(c.mem.kv_blocks, mem.kv_blocks);
        CHECK_INT(c.fits, mem.fits);
    }
}

/*
 * Llama-3.1-70B on H100 SXM at TP 2, max_model_len 8192, vllm-v0 defaults:
 *   usable      = 85,899,345,920 x 0.9                                   = 77,309,411,328
 *   activations = 8192 tokens x (2 x 8192 + 3 x 28672/2) x 2 + 256 x 128256 x (2 + 6)
 *                 (V0's additive estimate: forward pass plus sampler, docs/engine.md)
 *               = 973,078,528 + 262,668,288                              =  1,235,746,816
 *   reserve     = 1 GiB + 1,922,000,000 (tp > 1, the measured 1.79 GiB)  =  2,995,741,824
 *   weights     = 70,555,025,408 + 33,554,432 (RoPE cache, above)    = 70,588,579,840
 *   KV budget   = 77,309,411,328 - 70,588,579,840 - 1,235,746,816 - 2,995,741,824
 *                                                                        =  2,489,342,848
 *   blocks      = floor(2,489,342,848 / (16 x 163,840)) = floor(949.6)   = 949
 *   tokens      = 949 x 16 = 15,184 >= 8192: fits
 *   sequences at 4096 tokens = floor(949 / 256) = 3; at 4097: floor(949 / 257) = 3;
 *   at 1000: floor(949 / 63) = 15; at 8193 (> max_model_len): 0
 */
static void llama70b_tp2_capacity_matches_hand_derivation(void)
{
    static toy_setup x;
    if (h100_v0(&x, "llama-3.1-70b", 8192, 2) != 0)
        return;
    sim_capacity c;
    sim_capacity_compute(toy_su(&x), 4096, &c);
    CHECK_REL(c.mem.usable_bytes, 77309411328.0, 1e-15);
    CHECK_REL(c.mem.activation_bytes, 1235746816.0, 0.0);
    CHECK_REL(c.mem.activation_forward_bytes, 973078528.0, 0.0);
    CHECK_REL(c.mem.activation_sampler_bytes, 262668288.0, 0.0);
    CHECK_REL(c.mem.reserve_bytes, 2995741824.0, 0.0);
    CHECK_REL(c.mem.kv_budget_bytes, 2489342848.0, 1e-12);
    CHECK_INT(c.mem.kv_blocks, 949);
    CHECK_INT(c.mem.kv_capacity_tokens, 15184);
    CHECK_INT(c.fits, 1);
    CHECK_INT(c.blocks_per_seq, 256);
    CHECK_INT(c.max_seqs_at_context, 3);
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 4097), 3);
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 1000), 15);
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 8193), 0);
    /* Short contexts are capped by max_num_seqs (256): 949 blocks hold 949 one-block seqs. */
    CHECK_INT(sim_capacity_max_seqs(&c.mem, &x.s, 16), 256);
    /* The default max_model_len (131072) does not fit in 15,184 tokens: the engine refuses. */
    sim_sched_cfg_unset(&x.in);
    CHECK(toy_resolve(&x) == SIM_OK);
    sim_capacity_compute(toy_su(&x), 4096, &c);
    CHECK_INT(c.fits, 0);
    CHECK_INT(c.max_seqs_at_context, 0);
    /* TP 1 cannot hold 141 GB of weights on 80 GiB. */
    x.run.tp = 1;
    sim_capacity_compute(toy_su(&x), 4096, &c);
    CHECK_INT(c.fits, 0);
    CHECK(c.mem.kv_budget_bytes < 0.0);
    CHECK_INT(c.mem.kv_blocks, 0);
}

/*
 * KV bytes one gpt-oss-120b request holds on one GPU (sim_model_kv_bytes_at): 36 layers, the
 * even ones windowed (sliding_window 128), 8 KV heads of 64, bf16 KV, block_size 16.
 *   bytes per token and layer = 2 (K, V) x 8 x 64 x 2 = 2048 (TP 8: 1 head, 256)
 *   full layers: 18 x C x 2048
 *   windowed layers: 18 x kept(C) x 2048, kept(C) = C - 16 floor(max(0, C - 127) / 16)
 * C = 100: nothing skipped, kept 100; 36 x 100 x 2048 = 7,372,800 (as without a window).
 * C = 1000: skipped 873, 54 blocks (864 tokens) freed, kept 136:
 *   18 x 1000 x 2048 + 18 x 136 x 2048 = 36,864,000 + 5,013,504 = 41,877,504.
 * C = 131072: skipped 130945, 8184 blocks (130944 tokens) freed, kept 128:
 *   18 x 131072 x 2048 + 18 x 128 x 2048 = 4,831,838,208 + 4,718,592 = 4,836,556,800,
 *   against 36 x 131072 x 2048 = 9,663,676,416 with every layer full (hybrid manager off).
 */
static void gpt_oss_kv_bytes_per_request_match_hand_derivation(void)
{
    static sim_model m;
    if (load_model("gpt-oss-120b", &m) != 0)
        return;
    const sim_dtype b = SIM_DTYPE_BF16;
    CHECK_REL(sim_model_kv_bytes_at(&m, 1, b, true, 16, 100), 7372800.0, 0.0);
    CHECK_REL(sim_model_kv_bytes_at(&m, 1, b, true, 16, 1000), 41877504.0, 0.0);
    CHECK_REL(sim_model_kv_bytes_at(&m, 1, b, true, 16, 131072), 4836556800.0, 0.0);
    CHECK_REL(sim_model_kv_bytes_at(&m, 1, b, false, 16, 131072), 9663676416.0, 0.0);
    CHECK_REL(sim_model_kv_bytes_at(&m, 1, b, false, 16, 131072),
              131072.0 * sim_model_kv_bytes_per_token(&m, 1, b), 0.0);
    /* TP 8: one KV head a GPU, an eighth of the bytes. */
    CHECK_REL(sim_model_kv_bytes_at(&m, 8, b, true, 16, 131072), 4836556800.0 / 8.0, 0.0);
    /* A window layer never keeps more than W - 1 + (bs - 1) = 142 tokens. */
    for (int64_t c = 1; c <= 4096; c += 7) {
        const double full = 18.0 * (double)c * 2048.0;
        const double w = sim_model_kv_bytes_at(&m, 1, b, true, 16, c) - full;
        const double cap = 18.0 * (double)(c < 142 ? c : 142) * 2048.0;
        CHECK(w <= cap && w >= 18.0 * (double)(c < 127 ? c : 127) * 2048.0);
    }
}

/*
 * Llama-4-Scout's chunked local attention (attention_chunk_size 8192 on 36 of its 48 layers,
 * every 4th layer global; 8 KV heads of 128, bf16 KV; vLLM ChunkedLocalAttentionManager keeps
 * only the current chunk). At TP 8 one KV head a GPU: 2 x 1 x 128 x 2 = 512 bytes per token and
 * layer.
 *   C = 20000: skipped floor(20000 / 8192) x 8192 = 16384 tokens, 1024 whole blocks freed, kept
 *   3616: 512 x (12 x 20000 + 36 x 3616) = 512 x 370,176 = 189,530,112 bytes.
 *   C = 8191: nothing skipped: 512 x 48 x 8191 = 201,302,016.
 * Groups: 12 full and 36 chunked layers, G = 12 (36 >= 1.25 x 12): 1 full group, 3 chunked.
 * Blocks vLLM budgets for one 131,072-token request at T = 16,384 (ChunkedLocalAttentionSpec:
 * cdiv(min(W + T, len), bs), no + 1): 1 x 131072 / 16 + 3 x cdiv(24576, 16) = 8192 + 4608 =
 * 12,800.
 */
static void llama4_chunked_kv_matches_hand_derivation(void)
{
    static sim_model m;
    if (load_model("llama-4-scout", &m) != 0)
        return;
    const sim_dtype b = SIM_DTYPE_BF16;
    CHECK_REL(sim_model_kv_bytes_at(&m, 8, b, true, 16, 20000), 189530112.0, 0.0);
    CHECK_REL(sim_model_kv_bytes_at(&m, 8, b, true, 16, 8191), 201302016.0, 0.0);
    sim_kv_layout k;
    sim_model_kv_layout(&m, 8, b, true, &k);
    CHECK(k.chunked);
    CHECK_INT(k.n_full_layers, 12);
    CHECK_INT(k.n_window_layers, 36);
    CHECK_INT(k.n_full_groups, 1);
    CHECK_INT(k.n_window_groups, 3);
    CHECK_INT(sim_kv_max_request_blocks(&k, 16, 16384, 131072), 12800);
    CHECK_INT(sim_kv_skipped_tokens(&k, 20000), 16384);
}

/* The grouping rule (vLLM _get_kv_cache_groups_uniform_page_size) on made-up layer counts. */
static void kv_cache_groups_follow_vllm_rule(void)
{
    static const struct {
        const char *name;
        int64_t layers, window, full_attn, period;
        int64_t want_g, want_full_groups, want_window_groups;
    } cases[] = {
        /* gpt-oss / Gemma-2: half and half, one group of each. */
        {"alternating_36_layers_two_groups_of_18", 36, 128, 18, 2, 18, 1, 1},
        /* Qwen2 max_window_layers 20 of 28: 8 windowed, 20 full; 20 >= 1.25 x 8, so G = 8 and
         * the full layers take ceil(20 / 8) = 3 groups (4 padding layers). */
        {"qwen2_20_full_8_windowed_pads_to_groups_of_8", 28, 4096, 20, 0, 8, 3, 1},
        /* 13 full, 12 windowed: 13 < 1.25 x 12, so G = 13, one group each. */
        {"near_equal_counts_use_the_larger_as_group", 25, 128, 13, 0, 13, 1, 1},
        /* Every layer windowed (Mistral-7B v0.1): one group of all of them. */
        {"all_windowed_one_group", 32, 4096, 0, 0, 32, 0, 1},
        /* No window: one group of all layers, the classic cache. */
        {"no_window_one_full_group", 32, 0, 0, 0, 32, 1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const toy_shape sh = {cases[i].layers, 512, 8, 8, 64, 1024, 1000, 8192, SIM_DTYPE_BF16};
        sim_model m;
        toy_llama(&m, cases[i].name, &sh);
        m.sliding_window = cases[i].window;
        m.full_attn_layers = cases[i].full_attn;
        m.window_period = cases[i].period;
        sim_kv_layout k;
        sim_model_kv_layout(&m, 1, SIM_DTYPE_BF16, true, &k);
        CHECK_INT(k.group_layers, cases[i].want_g);
        CHECK_INT(k.n_full_groups, cases[i].want_full_groups);
        CHECK_INT(k.n_window_groups, cases[i].want_window_groups);
        /* Off (V0, disable_hybrid_kv_cache_manager): one group, every layer full. */
        sim_model_kv_layout(&m, 1, SIM_DTYPE_BF16, false, &k);
        CHECK_INT(k.group_layers, cases[i].layers);
        CHECK_INT(k.n_full_groups, 1);
        CHECK_INT(k.n_window_groups, 0);
    }
}

/*
 * gpt-oss-120b on one H100 SXM, vLLM V1 defaults (LLM usage on a large GPU: max_num_batched_tokens
 * T = 16384, max_num_seqs 1024), max_model_len 131,072, MXFP4 experts:
 *   usable      = 85,029,615,042 (CUDA total) x 0.9                  = 76,526,653,537.8
 *   weights     = 65,248,824,960 (test_model derives the parameter count)
 *                 + 16,777,216 (RoPE cache: YaRN 4096 x 32 positions x 64 x 2) = 65,265,602,176
 *   activations = the larger phase of the profiling run (docs/engine.md): the forward pass
 *                 16384 x (2 x 2880 + 3 x 4 x 2880) x 2 = 1,321,205,760 against the sampler
 *                 1024 x 201,088 x (2 + 12) + 132 SMs x 201,088 x 4 + 16384 x 2880 x 2
 *                 = 2,882,797,568 + 106,174,464 + 94,371,840 = 3,083,343,872 (MXFP4 experts:
 *                 no fused-MoE workspace kept)
 *   reserve     = 268,435,456 (engine profile)
 *   KV budget   = 76,526,653,537.8 - 65,265,602,176 - 3,083,343,872 - 268,435,456
 *               = 7,909,272,033.8
 * Before the window credit every block held 16 tokens of all 36 layers (16 x 73,728 =
 * 1,179,648 bytes): floor(budget / 1,179,648) = 6704 blocks, 107,264 tokens < 131,072, and
 * capacity refused the model although vLLM serves it. vLLM V1 pages two groups of 18 layers
 * (18 full, 18 windowed): a block is 16 tokens of 18 layers, 16 x 18 x 2048 = 589,824 bytes,
 *   blocks = floor(7,909,272,033.8 / 589,824) = 13,409 (13,409 x 589,824 = 7,908,950,016)
 *   "GPU KV cache size" = 13,409 // 2 groups x 16 = 107,264 tokens
 * and budgets one 131,072-token request (check_enough_kv_cache_memory) as
 *   full group ceil(131072 / 16) = 8192 + windowed group ceil(min(127 + 16384, 131072) / 16)
 *   + 1 = 1032 + 1 = 1033, total 9225 blocks (5,441,126,400 bytes) <= 13,409: it fits,
 *   maximum concurrency 13,409 / 9225 = 1.4536...
 * At 4096 tokens a sequence holds 256 + (256 - floor(3969 / 16) = 8) = 264 blocks:
 * floor(13,409 / 264) = 50 sequences (26 before: 6704 / 256).
 * With the hybrid manager disabled the old figures come back.
 */
static void gpt_oss_120b_fits_one_h100_at_max_model_len(void)
{
    static toy_setup x;
    if (h100_load(&x, "gpt-oss-120b", "vllm-v1") != 0)
        return;
    CHECK(toy_resolve(&x) == SIM_OK);
    CHECK_INT(x.s.max_model_len, 131072);
    CHECK_INT(x.s.max_num_batched_tokens, 16384);
    x.run = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    sim_capacity c;
    sim_capacity_compute(toy_su(&x), 4096, &c);
    CHECK_REL(c.mem.weights_bytes, 65265602176.0, 0.0);
    CHECK_REL(c.mem.activation_bytes, 3083343872.0, 0.0);
    CHECK_REL(c.mem.reserve_bytes, 268435456.0, 0.0);
    CHECK_REL(c.mem.kv_budget_bytes, 7909272033.8, 1e-12);
    CHECK_INT(c.mem.kv.group_layers, 18);
    CHECK_REL(c.mem.kv_block_bytes, 589824.0, 0.0);
    CHECK_INT(c.mem.kv_blocks, 13409);
    CHECK_INT(c.mem.kv_capacity_tokens, 107264);
    CHECK_INT(c.mem.kv_blocks_max_seq, 9225);
    CHECK_INT(c.fits, 1);
    CHECK_REL(c.max_concurrency_max_len, 13409.0 / 9225.0, 1e-15);
    CHECK_REL(c.mem.kv_full_bytes_per_token, 36864.0, 0.0);
    CHECK_INT(c.blocks_per_seq, 264);
    CHECK_INT(c.max_seqs_at_context, 50);
    /* Bytes at 4096: 18 x 4096 x 2048 full + 18 x 128 x 2048 windowed. */
    CHECK_REL(c.kv_full_bytes_per_seq, 150994944.0, 0.0);
    CHECK_REL(c.kv_window_bytes_per_seq, 4718592.0, 0.0);
    CHECK_INT(c.mem.kv_block_layers, 18);
    /* PP 2: 18 layers a stage, 9 of each kind; the two groups are the whole model's, projected on
     * the stage: a block is 16 tokens of 9 layers (294,912 bytes), and a request is budgeted the
     * same 9225 blocks. */
    x.run.pp = 2;
    sim_capacity_compute(toy_su(&x), 4096, &c);
    CHECK_INT(c.mem.kv_block_layers, 9);
    CHECK_REL(c.mem.kv_block_bytes, 294912.0, 0.0);
    CHECK_INT(c.mem.kv.n_full_layers, 9);
    CHECK_INT(c.mem.kv.n_window_layers, 9);
    CHECK_INT(c.mem.kv_blocks_max_seq, 9225);
    CHECK_INT(c.blocks_per_seq, 264);
    x.run.pp = 1;
    /* The server's T = 8192: 8192 + ceil(8319 / 16) + 1 = 8713 blocks budgeted. */
    x.in.usage = SIM_USAGE_SERVER;
    CHECK(toy_resolve(&x) == SIM_OK);
    sim_capacity_compute(toy_su(&x), 4096, &c);
    CHECK_INT(c.mem.kv_blocks_max_seq, 8713);
    /* disable_hybrid_kv_cache_manager: every layer full, refused as before. */
    x.in.usage = -1;
    x.in.disable_hybrid_kv = 1;
    CHECK(toy_resolve(&x) == SIM_OK);
    sim_capacity_compute(toy_su(&x), 4096, &c);
    CHECK_INT(c.mem.kv_blocks, 6704);
    CHECK_INT(c.mem.kv_capacity_tokens, 107264);
    CHECK_INT(c.fits, 0);
    CHECK_INT(c.max_seqs_at_context, 0);
    CHECK_INT(c.max_seqs_by_kv, 26);
}

/*
 * Mixtral-8x7B at TP 2 x DP 2 (docs/model.md, "Expert and data parallelism"): the experts
 * spread over DP x TP = 4 GPUs, 2 whole experts a GPU with --ep (8 / 4) or a 14336 / 4 slice of
 * each without: 32 x 2 x 176,160,768 = 11,274,289,152 expert params either way. The rest is the
 * TP 2 shard, replicated over DP: 2 x 16000 x 4096 + 32 x (20,971,520 + 32,768) + 266,240.
 *   total 131,072,000 + 32 x 373,325,824 + 266,240 = 12,077,764,608 params
 *         = 24,155,529,216 bytes, + the RoPE cache 8,388,608 = 24,163,917,824; KV per token as
 *         at TP 2, 65,536 (each DP copy its own cache).
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
        sim_capacity_compute(toy_su(&x), 4096, &c);
        CHECK_REL(c.mem.weights_bytes, 24163917824.0, 1e-15);
        CHECK_REL(c.mem.kv_bytes_per_token, 65536.0, 0.0);
    }
}

/*
 * Qwen3-30B-A3B (bf16, 128 experts of 768, top 8) on one H100 SXM under vllm-v1, `vllm serve`
 * defaults (T = 8192 tokens, S = 1024 sequences): the profiling run's peak (docs/engine.md,
 * "The profiling run's peak") is the sampler's, with the fused-MoE workspace the engine keeps:
 *   forward = 8192 x (2 x 2048 + 3 x 8 x 768) x 2                        =   369,098,752
 *   sampler = 1024 x 151,936 x (2 + 12)                                  = 2,178,154,496
 *           + 132 SMs x 151,936 x 4 (the Triton top-k/top-p buffer)      =    80,222,208
 *           + 8192 x 2048 x 2 (the forward's output)                     =    33,554,432
 *           + workspace: N = 2 x 768 = 1536, K = 2048,
 *             ws1 = 8192 x 8 x max(768, 2048) = 134,217,728 elements,
 *             ws2 = 8192 x 8 x max(1536, 2048) = 134,217,728, out = 8192 x 2048 = 16,777,216;
 *             (max(ws1, out) + ws2) x 2 B                                =   536,870,912
 *           = 2,828,802,048 B (2.63 GiB; vLLM 0.19 logged a torch peak of 2.68 GiB).
 * With --dtype fp8 the experts are not the unquantized Triton kind: no workspace,
 * 2,828,802,048 - 536,870,912 = 2,291,931,136.
 */
static void moe_workspace_adds_to_the_sampler_peak(void)
{
    static toy_setup x;
    if (h100_load(&x, "qwen3-30b-a3b", "vllm-v1") != 0)
        return;
    x.in.usage = SIM_USAGE_SERVER;
    x.in.max_model_len = 8192;
    CHECK(toy_resolve(&x) == SIM_OK);
    CHECK_INT(x.s.max_num_batched_tokens, 8192);
    CHECK_INT(x.s.max_num_seqs, 1024);
    x.run = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    sim_memory mem;
    sim_memory_compute(toy_su(&x), &mem);
    CHECK_REL(mem.activation_bytes, 2828802048.0, 0.0);
    CHECK_REL(mem.activation_forward_bytes, 369098752.0, 0.0);
    CHECK_REL(mem.activation_sampler_bytes, 2828802048.0, 0.0);
    x.run.dtype = SIM_DTYPE_FP8;
    sim_memory_compute(toy_su(&x), &mem);
    CHECK_REL(mem.activation_bytes, 2291931136.0, 0.0);
}

/*
 * The longest max_model_len the engine starts with (sim_deploy_largest_len, which bisects
 * ranges where the engine's defaults do not change) is the one trying every candidate finds:
 * the model's limit, then every multiple of the block size below it, longest first, the first
 * at which the memory budget fits. Models on GPUs where the answer lies below the limit,
 * both engines (V0's chunked-prefill switch at 32768 makes the budget not monotonic),
 * several TPs and block sizes; the limits are cut to 40960 so the scan stays quick.
 */
static void largest_len_equals_scan(void)
{
    static const struct {
        const char *model, *hw, *engine;
        int tp;
        int64_t block, max_pos;
    } cases[] = {
        {"llama-3.1-70b", "h100-sxm", "vllm-v0", 2, 16, 40960},
        {"llama-3.1-70b", "h100-sxm", "vllm-v1", 2, 16, 40960},
        {"llama-3.1-70b", "a100-sxm-80gb", "vllm-v0", 2, 16, 40960},
        {"llama-3.1-70b-awq", "l40s", "vllm-v1", 1, 16, 40960},
        {"llama-3.1-70b-fp8", "h100-sxm", "vllm-v0", 1, 16, 40960},
        {"llama-3.1-70b-fp8", "h100-sxm", "vllm-v1", 1, 32, 40960},
        {"llama-3.1-8b", "rtx-4090", "vllm-v1", 1, 16, 40960},
        {"llama-3.1-8b", "l4", "vllm-v0", 1, 16, 40960},
        {"qwen3-32b", "h100-sxm", "vllm-v0", 1, 16, 40960},
        {"qwen3-32b", "h100-sxm", "vllm-v1", 1, 16, 40960},
        {"qwen3-32b", "rtx-4090", "vllm-v1", 4, 16, 40960},
        {"mixtral-8x7b", "h100-sxm", "vllm-v1", 2, 16, 32768},
        {"gemma-2-27b", "rtx-4090", "vllm-v1", 4, 16, 8192},
        {"gpt-oss-120b", "h100-sxm", "vllm-v1", 1, 16, 40960},
        {"llama-3.1-8b", "rtx-4090", "vllm-v0", 1, 1, 40960},
    };
    int below = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        static toy_setup x;
        sim_hw hw;
        if (load_model(cases[i].model, &x.m) != 0 || load_hw(cases[i].hw, &hw) != 0 ||
            load_engine(cases[i].engine, &x.e) != 0)
            continue;
        x.hw = hw;
        if (cases[i].max_pos < x.m.max_pos)
            x.m.max_pos = cases[i].max_pos;
        sim_sched_cfg_unset(&x.in);
        x.in.block_size = cases[i].block;
        CHECK(toy_resolve(&x) == SIM_OK);
        x.run = sim_run_cfg_plain(cases[i].tp, x.m.dtype);
        const sim_setup *su = toy_su(&x);
        int64_t want = 0;
        for (int64_t len = x.m.max_pos; len >= 1 && !want;) {
            sim_sched_cfg c = x.in;
            c.max_model_len = len;
            sim_sched_resolved r;
            struct sim_err err;
            sim_setup at = *su;
            at.sched = &r;
            sim_memory mem;
            if (sim_sched_resolve(&x.e, &x.m, &x.hw, &c, &r, &err) == SIM_OK) {
                sim_memory_compute(&at, &mem);
                if (mem.fits)
                    want = len;
            }
            len = len % cases[i].block ? len - len % cases[i].block : len - cases[i].block;
        }
        const int64_t got = sim_deploy_largest_len(su, &x.in);
        printf("  %s on %s, %s, TP %d, blocks of %lld: %lld\n", cases[i].model, cases[i].hw,
               cases[i].engine, cases[i].tp, (long long)cases[i].block, (long long)got);
        CHECK_INT(got, want);
        below += want > 0 && want < x.m.max_pos;
    }
    CHECK(below >= 6); /* the cases test a search, not the limit alone */
}

int main(void)
{
    largest_len_equals_scan();
    mixtral_dp_ep_weights_match_hand_derivation();
    weights_and_kv_per_gpu_match_hand_derivation();
    llama70b_tp2_capacity_matches_hand_derivation();
    gpt_oss_kv_bytes_per_request_match_hand_derivation();
    llama4_chunked_kv_matches_hand_derivation();
    kv_cache_groups_follow_vllm_rule();
    gpt_oss_120b_fits_one_h100_at_max_model_len();
    moe_workspace_adds_to_the_sampler_peak();
    return check_report("test_capacity");
}
