/*
 * test_json.c - the loaders accept good files and reject every kind of bad
 * input with one line naming file, line, column and key.
 */
#include <stdio.h>

#include "calib_json.h"
#include "check.h"
#include "hw_json.h"
#include "json_util.h"
#include "kernels.h"
#include "model_json.h"

enum kind { HW, MODEL, CALIB };

static sim_status load(enum kind k, const char *file, struct sim_err *err)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", SIM_TEST_DATA, file);
    sim_hw hw;
    sim_model m;
    sim_calib c;
    switch (k) {
    case HW:
        return sim_hw_load(path, &hw, err);
    case MODEL:
        return sim_model_load(path, file, &m, err);
    case CALIB:
        return sim_calib_load(path, &c, err);
    }
    return SIM_EINVAL;
}

static void bad_files_are_rejected_with_location(void)
{
    static const struct {
        const char *name;
        enum kind kind;
        const char *file;
        sim_status want;
        const char *msg; /* expected substring: location, key and problem */
    } cases[] = {
        {"malformed json", HW, "hw_malformed.json", SIM_EPARSE,
         "hw_malformed.json:12:25: malformed JSON"},
        {"truncated json", HW, "hw_truncated.json", SIM_EPARSE,
         ":15:1: malformed JSON (unexpected end"},
        {"misspelled key", HW, "hw_misspelled_key.json", SIM_EINVAL,
         ":11:3: bw_stream_copy_byte_per_s: unknown key (did you mean "
         "'bw_stream_copy_bytes_per_s'?)"},
        {"unknown key", HW, "hw_unknown_key.json", SIM_EINVAL,
         ":13:3: l3_cache_bytes: unknown key"},
        {"missing required", HW, "hw_missing_required.json", SIM_EINVAL,
         "peak_bf16_flops_per_s: required figure missing"},
        {"wrong type", HW, "hw_wrong_type.json", SIM_EINVAL,
         ":12:12: n_sm.value: wrong type (expected a number, got a string)"},
        {"negative", HW, "hw_negative.json", SIM_EINVAL,
         ":9:26: mem_capacity_bytes.value: must be > 0"},
        {"non-finite", HW, "hw_infinite.json", SIM_EINVAL,
         ":9:26: mem_capacity_bytes.value: not a finite number"},
        {"duplicate key", HW, "hw_duplicate_key.json", SIM_EINVAL,
         ":14:3: l2_bytes: duplicate key"},
        /* A nested duplicate at its own line and path, not at the file's second "value". */
        {"nested duplicate key", HW, "hw_duplicate_nested.json", SIM_EINVAL,
         ":13:25: n_sm.value: duplicate key"},
        {"stream above peak", HW, "hw_stream_above_peak.json", SIM_EINVAL,
         ":11:3: bw_stream_copy_bytes_per_s: above bw_hbm_peak_bytes_per_s"},
        {"unknown status", HW, "hw_bad_status.json", SIM_EINVAL, "n_sm.status: unknown status"},
        {"fp8 dispatch without a catch-all entry", HW, "hw_fp8_dispatch_unbounded.json", SIM_EINVAL,
         "gemm_fp8_dispatch.configs: the last entry must have no bounds"},
        {"allreduce order", HW, "hw_allreduce_order.json", SIM_EINVAL,
         ":14:3: allreduce[1]: n_gpus must increase strictly"},
        /* All-reduce size regimes (docs/hwprofile.md): from_bytes must grow; keys are checked. */
        {"allreduce regimes order", HW, "hw_ar_regime_order.json", SIM_EINVAL,
         ":14:3: allreduce[0].regimes[1]: from_bytes must increase strictly"},
        {"allreduce regime key", HW, "hw_ar_regime_key.json", SIM_EINVAL,
         ":17:19: allreduce[0].regimes[1].from_byte: unknown key (did you mean 'from_bytes'?)"},
        {"unknown model type", MODEL, "model_unknown_type.json", SIM_EINVAL,
         ":12:3: model_type: unsupported model type (expected one of llama, mistral, qwen2, qwen3, "
         "mixtral, qwen3_moe, deepseek_v2, deepseek_v3, kimi_k2, phi3, gemma2, gpt_oss, gemma3, "
         "gemma3_text, llama4, llama4_text, qwen3_vl, qwen3_vl_moe, minimax_m2, kimi_k25, got "
         "'gpt_neox')"},
        /* Kimi-K2.5's MoonViT: the merge kernel is [height, width], the projector maps into the
         * language model's width. */
        {"MoonViT merge kernel", MODEL, "model_kimi_k25_bad_merge.json", SIM_EINVAL,
         ":105:5: vision_config.merge_kernel_size: wrong value (expected [height, width]"},
        {"MoonViT projector width", MODEL, "model_kimi_k25_bad_text_hidden.json", SIM_EINVAL,
         ":115:5: vision_config.text_hidden_size: expected the language model's hidden_size = "
         "7168 (got 4096)"},
        /* An MLA config must give every latent-attention shape. */
        {"MLA model without qk_nope_head_dim", MODEL, "model_mla.json", SIM_EINVAL,
         ":1:1: qk_nope_head_dim: required field missing"},
        {"misspelled MLA key", MODEL, "model_mla_typo.json", SIM_EINVAL,
         ":21:3: kv_lora_rnak: unknown key (did you mean 'kv_lora_rank'?)"},
        {"unknown MLA routing", MODEL, "model_mla_bad_routing.json", SIM_EINVAL,
         ":62:3: topk_method: unsupported routing (expected greedy, group_limited_greedy or "
         "noaux_tc, got 'random')"},
        /* gpt-oss: only the published alternating window pattern is modelled. */
        {"gpt-oss layer_types", MODEL, "model_gpt_oss_layer_types.json", SIM_EINVAL,
         ":15:3: layer_types: only the alternating pattern"},
        /* Gemma-3 and Llama-4: only every p-th layer global is modelled; a pattern that breaks
         * it is refused at the key, inside text_config for a multimodal config. */
        {"gemma3 layer_types against sliding_window_pattern", MODEL,
         "model_gemma3_bad_layer_types.json", SIM_EINVAL,
         ":21:3: layer_types: only every p-th layer global is modelled (layer i global iff "
         "(i + 1) % p == 0, p = 6 from sliding_window_pattern); element 11 is local (expected "
         "global)"},
        {"llama4 irregular no_rope_layers", MODEL, "model_llama4_bad_no_rope.json", SIM_EINVAL,
         ":84:5: text_config.no_rope_layers: only every p-th layer global is modelled (layer i "
         "global iff (i + 1) % p == 0, p = 4 from the first NoPE layer); element 6 is global "
         "(expected local)"},
        /* Qwen3-VL: a DeepStack merger taps a block of the tower (HF Qwen3VLVisionModel). */
        {"qwen3_vl deepstack index past depth", MODEL, "model_qwen3vl_bad_deepstack.json",
         SIM_EINVAL,
         ":32:5: vision_config.deepstack_visual_indexes: element 2: expected a block index from 0 "
         "to depth - 1 = 26"},
        {"hybrid linear-attention model", MODEL, "model_hybrid.json", SIM_EINVAL,
         ":5:3: model_type: 'qwen3_next': a hybrid of linear"},
        {"dtype and torch_dtype disagree", MODEL, "model_dtype_conflict.json", SIM_EINVAL,
         ":34:3: dtype: disagrees with torch_dtype ('float16' against 'bfloat16')"},
        {"misspelled model key", MODEL, "model_misspelled.json", SIM_EINVAL,
         ":24:3: num_hidden_layer: unknown key (did you mean 'num_hidden_layers'?)"},
        {"kv heads do not divide", MODEL, "model_bad_kv_heads.json", SIM_EINVAL,
         ":15:3: num_key_value_heads: must divide num_attention_heads"},
        {"non-integer", MODEL, "model_noninteger.json", SIM_EINVAL,
         ":8:3: hidden_size: not an integer (expected an integer, got 4096.5)"},
        {"missing vocab", MODEL, "model_missing_vocab.json", SIM_EINVAL,
         "vocab_size: required field missing"},
        {"negative size", MODEL, "model_negative.json", SIM_EINVAL,
         ":10:3: intermediate_size: out of range"},
        {"bad dtype", MODEL, "model_bad_dtype.json", SIM_EINVAL, "torch_dtype: unsupported dtype"},
        {"not an object", MODEL, "model_not_object.json", SIM_EINVAL,
         ":1:1: top level: expected a JSON object"},
        {"missing file", MODEL, "no_such_file.json", SIM_EIO, "no_such_file.json: cannot open"},
        {"calibration schema", CALIB, "calib_bad_schema.json", SIM_EINVAL,
         "schema: unsupported schema"},
        {"calibration type", CALIB, "calib_bad_alpha.json", SIM_EINVAL,
         ":3:2: alpha: wrong type (expected a number, got a string)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sim_err err = {{0}};
        sim_status st = load(cases[i].kind, cases[i].file, &err);
        if (st != cases[i].want)
            printf("case '%s': status %d (%s)\n", cases[i].name, (int)st, err.msg);
        CHECK_INT(st, cases[i].want);
        CHECK_CONTAINS(err.msg, cases[i].msg);
        CHECK_CONTAINS(err.msg, cases[i].file);
    }
}

static void good_files_load(void)
{
    struct sim_err err = {{0}};
    char path[1024];
    snprintf(path, sizeof(path), "%s/hw_ok.json", SIM_TEST_DATA);
    sim_hw hw;
    CHECK_INT(sim_hw_load(path, &hw, &err), SIM_OK);
    CHECK_STR(hw.id, "test-gpu");
    CHECK_INT(hw.n_allreduce, 2);
    CHECK_REL(hw.v[SIM_HWF_BW_STREAM_COPY], 2.04e12, 0.0);
    CHECK_INT(hw.prov[SIM_HWF_BW_STREAM_COPY], SIM_PROV_MEASURED);
    /* Absent optional figures get their documented defaults, marked as such. */
    CHECK_INT(hw.prov[SIM_HWF_GEMM_EFF_FP16], SIM_PROV_DEFAULT);
    CHECK_REL(hw.v[SIM_HWF_GEMM_EFF_FP16], 0.70, 0.0);
    CHECK_INT(hw.prov[SIM_HWF_PEAK_FP8], SIM_PROV_ABSENT);
    /* No fp8 units: fp8 runs at the fp16 peak. */
    CHECK_REL(sim_hw_peak_flops_per_s(&hw, SIM_DTYPE_FP8), 523.7e12, 0.0);
    /* Nearest measured GPU count for 8 GPUs is the 4-GPU entry. */
    sim_allreduce a;
    sim_hw_allreduce_for(&hw, 8, &a);
    CHECK_INT(a.n_gpus, 4);
    CHECK_REL(a.latency_s, 9.1e-6, 0.0);

    /*
     * Size regimes of the 4-GPU entry (hw_ar_regimes.json): below 512 KiB 4 us + 1.5 B /
     * 200e9, from 512 KiB 8 us + 1.5 B / 150e9, from 16 MiB 20 us + 1.5 B / 300e9
     * (2(n-1)/n = 1.5 at n = 4). By hand:
     *   256 KiB = 262144 B: 4e-6 + 1.5 x 262144 / 200e9 = 4e-6 + 1.96608e-6 = 5.96608e-6 s
     *   512 KiB = 524288 B: 8e-6 + 1.5 x 524288 / 150e9 = 8e-6 + 5.24288e-6 = 13.24288e-6 s
     *   32 MiB = 33554432 B: 20e-6 + 1.5 x 33554432 / 300e9 = 20e-6 + 167.77216e-6 s
     * The 2-GPU entry has no regimes: 1 MiB is 5e-6 + 1 x 1048576 / 100e9 = 15.48576e-6 s.
     */
    snprintf(path, sizeof(path), "%s/hw_ar_regimes.json", SIM_TEST_DATA);
    CHECK_INT(sim_hw_load(path, &hw, &err), SIM_OK);
    CHECK_INT(hw.allreduce[1].n_regimes, 2);
    CHECK_REL(sim_allreduce_time_s(&hw, 4, 262144.0), 5.96608e-6, 1e-12);
    CHECK_REL(sim_allreduce_time_s(&hw, 4, 524288.0), 13.24288e-6, 1e-12);
    CHECK_REL(sim_allreduce_time_s(&hw, 4, 33554432.0), 187.77216e-6, 1e-12);
    CHECK_REL(sim_allreduce_time_s(&hw, 2, 1048576.0), 15.48576e-6, 1e-12);

    sim_calib c;
    snprintf(path, sizeof(path), "%s/calib_ok.json", SIM_TEST_DATA);
    CHECK_INT(sim_calib_load(path, &c, &err), SIM_OK);
    CHECK_REL(c.alpha, 1.173, 0.0);
    CHECK_REL(c.beta_s, 0.000421, 0.0);
    CHECK_STR(c.hardware, "test-gpu");
    CHECK_INT(c.fig_domain, 0); /* no figures, no domain: figures (none) apply everywhere */

    /* A figure fit's file: the classes it applies to and the alpha/beta-only fit, as written
     * in calib_domain.json (dense-gqa is bit 1, moe-gqa bit 4: sim_model_class). */
    snprintf(path, sizeof(path), "%s/calib_domain.json", SIM_TEST_DATA);
    CHECK_INT(sim_calib_load(path, &c, &err), SIM_OK);
    CHECK_INT(c.n_figures, 2);
    CHECK_INT(c.fig_domain, (1u << 1) | (1u << 4));
    CHECK_REL(c.ab_alpha, 1.02, 0.0);
    CHECK_REL(c.ab_beta_s, 0.0004, 0.0);

    /* The newer HF key "dtype" (transformers 4.56+) reads as torch_dtype did: this is
     * Llama-3.1-8B's config with "torch_dtype": "bfloat16" renamed. */
    sim_model m;
    snprintf(path, sizeof(path), "%s/model_new_dtype.json", SIM_TEST_DATA);
    CHECK_INT(sim_model_load(path, "new-dtype", &m, &err), SIM_OK);
    CHECK_INT(m.dtype, SIM_DTYPE_BF16);
    CHECK_INT(m.d_model, 4096);
}

static void edit_distance(void)
{
    CHECK_INT(sim_j_edit_distance("kitten", "sitting"), 3);
    CHECK_INT(sim_j_edit_distance("n_sm", "n_sm"), 0);
    CHECK_INT(sim_j_edit_distance("", "abc"), 3);
}

/* Every bundled model and hardware profile loads. */
static void bundled_files_load(void)
{
    static const char *const models[] = {
        "llama-2-7b",       "llama-2-70b",     "llama-3-8b",    "llama-3-70b",   "llama-3.1-8b",
        "llama-3.1-70b",    "mistral-7b",      "mixtral-8x7b",  "qwen2-7b",      "qwen2-72b",
        "qwen2.5-7b",       "qwen3-32b",       "codellama-34b", "qwen3-30b-a3b", "llama-3.1-405b",
        "mixtral-8x22b",    "qwen3-235b-a22b", "gemma-3-27b",   "llama-4-scout", "qwen3-vl-8b",
        "qwen3-vl-30b-a3b", "kimi-k2.5",
    };
    /* Issue 2's four, issue 3's full list and issue 9's two PCIe cards. */
    static const char *const hws[] = {"h100-sxm", "h100-pcie",     "h200-sxm",      "gh200",
                                      "b200",     "a100-sxm-80gb", "a100-sxm-40gb", "l40s",
                                      "l4",       "mi300x",        "mi325x",        "mi250",
                                      "mi250x",   "mi210",         "rtx-pro-6000",  "rtx-4090"};
    char path[1024];
    struct sim_err err = {{0}};
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
        sim_model m;
        snprintf(path, sizeof(path), "%s/models/%s.json", SIM_SOURCE_DIR, models[i]);
        sim_status st = sim_model_load(path, models[i], &m, &err);
        if (st != SIM_OK)
            printf("%s\n", err.msg);
        CHECK_INT(st, SIM_OK);
    }
    for (size_t i = 0; i < sizeof(hws) / sizeof(hws[0]); i++) {
        sim_hw hw;
        snprintf(path, sizeof(path), "%s/hwprofiles/%s.json", SIM_SOURCE_DIR, hws[i]);
        sim_status st = sim_hw_load(path, &hw, &err);
        if (st != SIM_OK)
            printf("%s\n", err.msg);
        CHECK_INT(st, SIM_OK);
        /* Every figure says where it came from: a status and a non-empty source. */
        for (int f = 0; st == SIM_OK && f < SIM_HWF_COUNT; f++) {
            if (hw.prov[f] == SIM_PROV_ABSENT)
                continue;
            if (hw.src[f][0] == '\0')
                printf("%s: %s has no source\n", hws[i], sim_hw_field_key((sim_hw_field)f));
            CHECK_INT(hw.src[f][0] != '\0', 1);
        }
        for (int a = 0; st == SIM_OK && a < hw.n_allreduce; a++)
            CHECK_INT(hw.allreduce[a].source[0] != '\0', 1);
    }
}

/*
 * The two PCIe cards of issue 9 load with their datasheet figures (values
 * typed from the sources named in the profiles, not read back from the code):
 * RTX 4090 165.2e12 dense BF16 with FP32 accumulate, 24 GiB, 1008 GB/s, no
 * P2P so all-reduce is the estimated host-staged NCCL entry (50 us, 10 GB/s);
 * RTX PRO 6000 96 GiB, 1792 GB/s, 188 SMs, and a 2-GPU all-reduce entry
 * derived from the aic-vllm table (status derived) once the profile was
 * imported, else the estimated 4- and 8-GPU NCCL entries only.
 */
static void pcie_profiles_load(void)
{
    char path[1024];
    struct sim_err err = {{0}};
    sim_hw hw;
    snprintf(path, sizeof(path), "%s/hwprofiles/rtx-4090.json", SIM_SOURCE_DIR);
    CHECK_INT(sim_hw_load(path, &hw, &err), SIM_OK);
    CHECK_REL(hw.v[SIM_HWF_PEAK_BF16], 165.2e12, 0.0);
    CHECK_REL(hw.v[SIM_HWF_PEAK_FP8], 330.3e12, 0.0);
    CHECK_REL(hw.v[SIM_HWF_MEM_CAPACITY], 24.0 * 1073741824.0, 0.0);
    CHECK_REL(hw.v[SIM_HWF_BW_HBM_PEAK], 1008e9, 0.0);
    CHECK_INT(hw.prov[SIM_HWF_PEAK_BF16], SIM_PROV_DATASHEET);
    sim_allreduce ar;
    sim_hw_allreduce_for(&hw, 2, &ar);
    CHECK_REL(ar.latency_s, 50e-6, 0.0);
    CHECK_REL(ar.bus_bw_bytes_per_s, 10e9, 0.0);
    CHECK_INT(ar.prov, SIM_PROV_ESTIMATED);

    snprintf(path, sizeof(path), "%s/hwprofiles/rtx-pro-6000.json", SIM_SOURCE_DIR);
    CHECK_INT(sim_hw_load(path, &hw, &err), SIM_OK);
    CHECK_REL(hw.v[SIM_HWF_MEM_CAPACITY], 96.0 * 1073741824.0, 0.0);
    CHECK_REL(hw.v[SIM_HWF_BW_HBM_PEAK], 1.792e12, 0.0);
    CHECK_REL(hw.v[SIM_HWF_N_SM], 188.0, 0.0);
    sim_hw_allreduce_for(&hw, 8, &ar);
    CHECK_INT(ar.n_gpus, 8);
    CHECK_INT(ar.prov, SIM_PROV_ESTIMATED);
}

/* Text a terminal shows as text (sim_text_next): code points decoded by hand from the UTF-8
 * definition (RFC 3629): C2 9B = U+009B (C1 CSI), E2 80 AE = U+202E (RIGHT-TO-LEFT OVERRIDE),
 * C3 A9 = U+00E9 (e acute, printable), F0 9F 98 80 = U+1F600; C0 80 is an overlong NUL, ED A0
 * 80 a surrogate, F4 90 80 80 above U+10FFFF. */
static void terminal_text(void)
{
    uint32_t cp;
    int safe;
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xC2\x9B", 2, &cp, &safe), 2);
    CHECK(cp == 0x9B && !safe);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xE2\x80\xAE", 3, &cp, &safe), 3);
    CHECK(cp == 0x202E && !safe);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xC3\xA9", 2, &cp, &safe), 2);
    CHECK(cp == 0xE9 && safe);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xF0\x9F\x98\x80", 4, &cp, &safe),
              4);
    CHECK(cp == 0x1F600 && safe);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xC0\x80", 2, &cp, &safe), 0);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xED\xA0\x80", 3, &cp, &safe), 0);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xF4\x90\x80\x80", 4, &cp, &safe),
              0);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\xE2\x80", 2, &cp, &safe), 0);
    CHECK_INT((long long)sim_text_next((const unsigned char *)"\x1B", 1, &cp, &safe), 1);
    CHECK(!safe);
    CHECK_INT((long long)sim_text_unsafe("ab\xC3\xA9"
                                         "c",
                                         5),
              5);
    CHECK_INT((long long)sim_text_unsafe("ab\x1B[2J", 6), 2);
    CHECK_INT((long long)sim_text_unsafe("ab\x9B", 3), 2);
    char out[64];
    CHECK_STR(sim_text_escape("a\x1B[31mb\xC2\x9B\xC3\xA9\xFF", out, sizeof(out)),
              "a\\x1B[31mb\\xC2\\x9B\xC3\xA9\\xFF");
    /* Truncated at a whole escape: "a" fits, "\x1B" (4 bytes) does not in 5 with the NUL. */
    CHECK_STR(sim_text_escape("a\x1B", out, 5), "a");
}

int main(void)
{
    terminal_text();
    bad_files_are_rejected_with_location();
    good_files_load();
    edit_distance();
    bundled_files_load();
    pcie_profiles_load();
    return check_report("test_json");
}
