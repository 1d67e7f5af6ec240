/*
 * cmd_kernels.c - `llmstep validate-kernels`: parses the options, runs the check of
 * kernels_validate.h (the single-kernel rooflines of kernels.h against the measured kernel
 * tables of ../shared/data/kernels, uncalibrated, or the GPU speed-up check) and prints its
 * result as a table or JSON. The method is in docs/validate-kernels.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "kernel_tables.h"
#include "kernels_validate.h"

#define SCHEMA "llmstep-validate-kernels/1"

/* The exit code of a failed call, after its message. */
static int failed(const sim_kval_err *err)
{
    cli_error("%s", err->msg);
    return err->fault == SIM_KVAL_FAULT_USAGE     ? CLI_USAGE
           : err->fault == SIM_KVAL_FAULT_NUMERIC ? CLI_NUMERIC
                                                  : CLI_BAD_INPUT;
}

static const char *gpu_name(const sim_kval *kv, int g)
{
    return g == SIM_KVAL_ALL ? "all" : kv->hw[g].id;
}

/* Prints one group: a table row, or an object of the JSON array when w is not NULL. */
static void print_group(const sim_kval *kv, const sim_kval_group *s, sim_jw *w)
{
    const char *fname = sim_kval_family_name(s->family);
    const char *rname = sim_kval_range_name(s->range);
    const char *sname = sim_kval_source_name(s->source);
    if (w) {
        sim_jw_object_begin(w, NULL);
        sim_jw_str(w, "family", fname);
        sim_jw_str(w, "gpu", gpu_name(kv, s->gpu));
        sim_jw_str(w, "range", rname);
        sim_jw_str(w, "source", sname);
        sim_jw_uint(w, "n", s->m.n);
        sim_jw_num(w, "mape_pct", s->m.mape_pct);
        sim_jw_num(w, "median_ape_pct", s->m.median_ape_pct);
        sim_jw_num(w, "max_ape_pct", s->m.max_ape_pct);
        sim_jw_num(w, "bias_pct", s->bias_pct);
        sim_jw_object_end(w);
        return;
    }
    printf("  %-13s %-14s %-10s %-30s %7zu %8.2f %8.2f %9.1f %+8.2f\n", fname, gpu_name(kv, s->gpu),
           rname, sname, s->m.n, s->m.mape_pct, s->m.median_ape_pct, s->m.max_ape_pct, s->bias_pct);
}

static void header(const char *title)
{
    printf("\n%s\n  %-13s %-14s %-10s %-30s %7s %8s %8s %9s %8s\n", title, "family", "gpu",
           "tokens", "source", "n", "MAPE%", "medAPE%", "maxAPE%", "bias%");
}

/* The table's heading of each section (sim_kval_section). */
static const char *const section_title[SIM_KVAL_SEC_COUNT] = {
    "by family and GPU",
    "GEMMs and decode attention whose bytes exceed the GPU's L2 (weights or KV cache "
    "not left in L2 by the previous replay)",
    "fused MoE: the rows `hw import --tables` fits its moe figures on (fit: tokens <= 16 "
    "with weights >= 2 x L2, tokens >= 4096) and the others (held-out)",
    "by family, GPU and token range",
    "by source table and GPU",
    "by source table, GPU and token range",
};

/* The run's setup: JSON members before "groups" (w not NULL), or the table's opening lines. */
static void report_head(const sim_kval *kv, sim_jw *w)
{
    const char *gemm = kv->gemm == SIM_GEMM_TILE_WAVE ? "tile-wave" : "flat";
    if (w) {
        sim_jw_str(w, "schema_version", SCHEMA);
        sim_jw_str(w, "data", kv->kernels_dir);
        sim_jw_str(w, "gemm_model", gemm);
        sim_jw_num(w, "alpha", 1.0);
        sim_jw_num(w, "beta_s", 0.0);
        sim_jw_int(w, "allreduce_tokens_hidden", SIM_KTAB_AR_HIDDEN);
        sim_jw_array_begin(w, "hardware");
        for (int g = 0; g < kv->n_gpu; g++) {
            sim_jw_object_begin(w, NULL);
            sim_jw_str(w, "id", kv->hw[g].id);
            sim_jw_str(w, "path", kv->hw_path[g]);
            sim_jw_object_end(w);
        }
        sim_jw_array_end(w);
        return;
    }
    printf("llmstep validate-kernels: %s, GEMM model %s, uncalibrated (alpha = 1, beta = 0)\n",
           kv->kernels_dir, gemm);
    for (int g = 0; g < kv->n_gpu; g++)
        printf("  %-14s %s\n", kv->hw[g].id, kv->hw_path[g]);
    printf("tokens: GEMM m; decode attention batch; prefill attention batch x prompt; MoE "
           "tokens;\n"
           "all-reduce bytes / (2 x %d), the tokens of a bf16 hidden state of %d.\n"
           "APE = |pred - meas| / meas; bias = mean (pred - meas) / meas.\n",
           SIM_KTAB_AR_HIDDEN, SIM_KTAB_AR_HIDDEN);
}

/* The report: the setup, the groups section by section, then the notes. Returns the exit
 * code. */
static int report(const sim_kval *kv, const sim_kval_group *groups, size_t n_groups, int json)
{
    sim_jw w;
    if (json) {
        cli_json_open(&w);
        sim_jw_object_begin(&w, NULL);
    }
    report_head(kv, json ? &w : NULL);
    if (json)
        sim_jw_array_begin(&w, "groups");
    size_t i = 0;
    for (int sec = 0; sec < SIM_KVAL_SEC_COUNT; sec++) {
        if (!json)
            header(section_title[sec]);
        for (; i < n_groups && (int)groups[i].section == sec; i++)
            print_group(kv, &groups[i], json ? &w : NULL);
    }
    if (json) {
        sim_jw_array_end(&w);
        sim_jw_array_begin(&w, "notes");
        for (int k = 0; k < kv->n_notes; k++)
            sim_jw_str(&w, NULL, kv->notes[k]);
        sim_jw_array_end(&w);
        sim_jw_object_end(&w);
        return cli_json_close(&w, "validate-kernels");
    }
    printf("\nnotes:\n");
    for (int k = 0; k < kv->n_notes; k++)
        printf("  %s\n", kv->notes[k]);
    return CLI_OK;
}

/* ---- --speedup ---- */

/* One row of the speed-up report: a table row, or an object of the JSON array (w). */
static void su_print_row(const sim_kval *kv, const sim_kval_su_row *r, sim_jw *w)
{
    static const char *const cls_name[SIM_KVAL_CLASS_COUNT] = {"gemm", "attn", "allreduce"};
    const char *gpu = kv->hw[r->gpu].id;
    if (w) {
        sim_jw_object_begin(w, NULL);
        sim_jw_str(w, "model", r->model);
        sim_jw_int(w, "tp", r->tp);
        sim_jw_int(w, "batch", r->batch);
        sim_jw_str(w, "gpu", gpu);
        sim_jw_num(w, "measured_s", r->measured_s);
        sim_jw_num(w, "predicted_s", r->predicted_s);
        sim_jw_num(w, "measured_ratio", r->measured_ratio);
        sim_jw_num(w, "predicted_ratio", r->predicted_ratio);
        sim_jw_num(w, "diff_pct", r->diff_pct);
        for (int c = 0; c < SIM_KVAL_CLASS_COUNT; c++) {
            char key[64];
            snprintf(key, sizeof(key), "%s_measured_s", cls_name[c]);
            sim_jw_num(w, key, r->meas_s[c]);
            snprintf(key, sizeof(key), "%s_predicted_s", cls_name[c]);
            sim_jw_num(w, key, r->pred_s[c]);
            snprintf(key, sizeof(key), "%s_measured_ratio", cls_name[c]);
            sim_jw_num(w, key, r->class_measured_ratio[c]);
            snprintf(key, sizeof(key), "%s_predicted_ratio", cls_name[c]);
            sim_jw_num(w, key, r->class_predicted_ratio[c]);
        }
        sim_jw_object_end(w);
        return;
    }
    /* The model is named on its first GPU's row only. */
    printf("  %-15s %2d  %5lld  %-9s %8.4f %8.4f  %10.3f  %10.3f  %+6.1f", r->gpu ? "" : r->model,
           r->tp, (long long)r->batch, gpu, 1e3 * r->measured_s, 1e3 * r->predicted_s,
           r->measured_ratio, r->predicted_ratio, r->diff_pct);
    for (int c = 0; c < SIM_KVAL_CLASS_COUNT; c++) {
        if (r->ref_meas_s[c] > 0.0)
            printf("   %5.3f/%5.3f", r->class_measured_ratio[c], r->class_predicted_ratio[c]);
        else
            printf("   %11s", "-");
    }
    printf("\n");
}

/*
 * The speed-up report: per model, batch and GPU the measured and predicted step time of the
 * check's operators, their ratio to H100's (time / H100 time; the speed-up is its inverse)
 * and the relative difference of the predicted ratio from the measured one, then the same
 * ratio per operator class. When the check fails part-way, the rows before the failure are
 * printed, then the message.
 */
static int speedup_report(const sim_kval *kv, int json)
{
    sim_kval_su_result su;
    sim_kval_err err;
    sim_jw w;
    if (json) {
        cli_json_open(&w);
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "schema", SCHEMA);
        sim_jw_str(&w, "report", "speedup");
        sim_jw_int(&w, "keys", SIM_KVAL_SU_KEYS);
        sim_jw_array_begin(&w, "rows");
    } else {
        printf("decode-step speed-ups: operator times of a step (QKV, O, gate_up, down, decode "
               "attention\nover %d keys, all-reduces at TP > 1; bf16) summed from the measured "
               "aic-vllm tables\nand predicted by the step model (uncalibrated); ratio = time / "
               "H100 time\n"
               "  model           tp  batch  gpu        meas_ms  pred_ms  meas_ratio  "
               "pred_ratio  diff%%   gemm m/p     attn m/p     allreduce m/p\n",
               SIM_KVAL_SU_KEYS);
    }
    const sim_status st = sim_kval_speedup(kv, &su, &err);
    for (int i = 0; i < su.n_rows; i++)
        su_print_row(kv, &su.rows[i], json ? &w : NULL);
    if (st != SIM_OK && json) { /* the rows before the failure stay printed, as in the table */
        sim_jw_flush(&w);
        sim_jw_free(&w);
    }
    if (st != SIM_OK)
        return failed(&err);
    if (json) {
        sim_jw_array_end(&w);
        sim_jw_int(&w, "within_10pct", su.within_10pct);
        sim_jw_int(&w, "compared", su.compared);
        sim_jw_object_end(&w);
        return cli_json_close(&w, "validate-kernels");
    }
    printf("\n%d of %d predicted ratios within 10%% of the measured ones.\n", su.within_10pct,
           su.compared);
    printf("notes:\n  GEMM shapes not in gemm_perf: %s\n",
           su.interpolated ? "bilinear interpolation in (n, k) between the nearest measured sizes "
                             "at the same m"
                           : "none (every shape measured)");
    printf("  all-reduce of batch x hidden x 2 bytes, measured sizes (linear in bytes "
           "otherwise)\n");
    return CLI_OK;
}

/* The usage around the options' help (the table in parse_vk). */
static const cli_help vk_help = {
    .head =
        "usage: llmstep validate-kernels [--hw ID]... [--data DIR] [--tables aic|aic-vllm]\n"
        "                                [--gemm flat|tile-wave] [--format table|json] "
        "[--speedup]\n\n"
        "Predicts every measured kernel of the aic and vidur tables with the single-kernel\n"
        "rooflines llmstep uses for steps (uncalibrated: alpha = 1, beta = 0) and reports\n"
        "MAPE, median and max APE and the mean signed error (bias) per operator family\n"
        "(gemm, gemm_fp8, attn_decode, attn_prefill, attn_decode_fp8kv, attn_prefill_fp8kv,\n"
        "allreduce, moe, moe_fp8), per token range (1-16, 17-128, 129-1024, 1025-8192, >8192),\n"
        "per GPU and per source table; for the fused MoE also the rows `hw import --tables`\n"
        "fits on and the held-out rest.\n\n",
    .tail = "\n"
            "vidur model folders map to models/<id>.json (Meta-Llama-3-8B -> llama-3-8b); folders\n"
            "without a config are skipped and listed in the notes.\n",
};

/* The command's settings after parsing. */
typedef struct vk_args {
    const char *hw_names[SIM_KVAL_MAX_GPU];
    int n_hw, json, speedup;
    const char *tables, *data;
    sim_gemm_model gemm;
} vk_args;

static int parse_vk(int argc, char **argv, vk_args *a, int *done)
{
    memset(a, 0, sizeof(*a));
    const char *format = "table";
    cli_opt_bounded hw = {{a->hw_names, 0, SIM_KVAL_MAX_GPU}, ""};
    snprintf(hw.full, sizeof(hw.full), "at most %d --hw (one per GPU with tables)",
             SIM_KVAL_MAX_GPU);
    /* In the order of the usage. */
    const cli_opt t[] = {
        CLI_BOUNDED_H(
            "hw", &hw,
            "  --hw ID|PATH     profile to test (repeatable); its id picks the tables. aic-vllm:\n"
            "                   h100-sxm, h200-sxm, b200, rtx-pro-6000 (vLLM 0.19.0), l40s "
            "(0.24.0),\n"
            "                   a100-sxm-80gb (0.14.0); aic: h100-sxm (aic h100_sxm, vidur h100,\n"
            "                   h100_dgx) and a100-sxm-80gb. Default: every GPU of the set.\n"),
        CLI_STR_H("data", &a->data,
                  "  --data DIR       kernel tables (default <data>/../shared/data/kernels)\n"),
        {.name = "tables",
         .kind = CLI_OPT_CHOICE,
         .dst = &a->tables,
         .choices = "aic|aic-vllm",
         .help = "  --tables SET     aic-vllm (V1-era aic-vllm/<gpu>/<version>/, the default when "
                 "that\n"
                 "                   folder exists) or aic (aic/ and vidur/)\n"},
        {.name = "gemm",
         .kind = CLI_OPT_GEMM,
         .dst = &a->gemm,
         .expect = "flat or tile-wave",
         .help = "  --gemm MODEL     flat (default) or tile-wave (gemm_tiles of the profile)\n"},
        {.name = "format",
         .kind = CLI_OPT_CHOICE,
         .dst = &format,
         .choices = "table|json",
         .help = "  --format FMT     table (default) or json\n"},
        CLI_FLAG_H(
            "speedup", &a->speedup,
            "  --speedup        instead: H200/H100 and B200/H100 time ratios of decode steps of\n"
            "                   Llama-3.1-8B (TP 1) and 70B (TP 4), batch 1, 8, 64, 2048 keys,\n"
            "                   summed from the measured tables and predicted by the step model\n"),
    };
    int rc = cli_opts_parse_help("validate-kernels", argc, argv, t, CLI_N(t), &vk_help, done, NULL);
    a->n_hw = hw.l.n;
    a->json = strcmp(format, "json") == 0;
    return rc;
}

/* Runs the check and prints its report; returns the exit code. */
static int run(sim_kval *kv, const vk_args *a)
{
    sim_kval_err err;
    const sim_kval_opts o = {cli_data_dir(), a->data, a->tables, a->hw_names,
                             a->n_hw,        a->gemm, a->speedup};
    if (sim_kval_open(kv, &o, &err) != SIM_OK)
        return failed(&err);
    if (a->speedup)
        return speedup_report(kv, a->json);
    const sim_kval_group *groups;
    size_t n_groups;
    if (sim_kval_validate(kv, &groups, &n_groups, &err) != SIM_OK)
        return failed(&err);
    return report(kv, groups, n_groups, a->json);
}

int cmd_validate_kernels(int argc, char **argv)
{
    vk_args a;
    int done, rc = parse_vk(argc, argv, &a, &done);
    if (rc != CLI_OK || done)
        return rc;
    sim_kval *kv = sim_kval_alloc();
    if (!kv) {
        cli_error("validate-kernels: out of memory");
        return CLI_BAD_INPUT;
    }
    rc = run(kv, &a);
    sim_kval_free(kv);
    return rc;
}
