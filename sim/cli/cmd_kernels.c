/*
 * cmd_kernels.c - `llmstep validate-kernels`: the single-kernel rooflines of
 * kernels.h against the measured kernel tables of ../shared/data/kernels (aic
 * and vidur), before any calibration (alpha = 1, beta = 0). Reports MAPE,
 * median and maximum APE and the mean signed error per operator family, per
 * token range, per GPU and per source table. The tables and their filters are
 * in kernel_tables.h; the method in docs/validate-kernels.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "opts.h"
#include "kernel_tables.h"
#include "kernels.h"
#include "metrics.h"
#include "model_json.h"
#include "paths.h"

#define SCHEMA "llmstep-validate-kernels/1"

/* GPUs with kernel tables: their folders, the tables' device column, and the profile they test. */
typedef struct kgpu {
    const char *hw_id;       /* hwprofiles/<id>.json */
    const char *aic_dir;     /* <data>/<dir>/<table>.csv[.gz] */
    const char *aic_device;  /* "device" of every aic row */
    const char *attn_kernel; /* kernel_source of the attention rows; NULL = FlashAttention 2/3 */
    const char *vidur_gpu;   /* vidur/compute/<gpu>/<org>/<model>/mlp.csv; NULL = none */
    const char *vidur_net;   /* vidur/network/<dir>/all_reduce.csv; NULL = none */
} kgpu;

/* --tables aic: the V0-era aic tables and vidur (docs/validate-kernels.md, "aic and vidur"). */
static const kgpu kgpus_aic[] = {
    {"h100-sxm", "aic/h100_sxm", "NVIDIA H100 80GB HBM3", NULL, "h100", "h100_dgx"},
    {"a100-sxm-80gb", "aic/a100_sxm", "NVIDIA A100-SXM4-80GB", NULL, "a100", "a100_dgx"},
};

/*
 * --tables aic-vllm: the V1-era aic tables, one vLLM version per GPU, with the attention
 * backend vLLM selects by default on that GPU (FlashAttention on Hopper, Ampere and SM120,
 * FlashInfer on B200, FlashAttention 2 on the L40S collection of 0.24.0).
 */
static const kgpu kgpus_vllm[] = {
    {"h100-sxm", "aic-vllm/h100_sxm/0.19.0", "NVIDIA H100 80GB HBM3", "vllm_flash_attn", NULL,
     NULL},
    {"h200-sxm", "aic-vllm/h200_sxm/0.19.0", "NVIDIA H200", "vllm_flash_attn", NULL, NULL},
    {"b200", "aic-vllm/b200_sxm/0.19.0", "NVIDIA B200", "vllm_flashinfer", NULL, NULL},
    {"rtx-pro-6000", "aic-vllm/rtx_pro_6000_server/0.19.0",
     "NVIDIA RTX PRO 6000 Blackwell Server Edition", "vllm_flash_attn", NULL, NULL},
    {"l40s", "aic-vllm/l40s/0.24.0", "NVIDIA L40S", "vllm_flash_attn_fa2", NULL, NULL},
    {"a100-sxm-80gb", "aic-vllm/a100_sxm/0.14.0", "NVIDIA A100-SXM4-80GB", "vllm_flash_attn", NULL,
     NULL},
};
#define N_KGPU ((int)(sizeof(kgpus_vllm) / sizeof(kgpus_vllm[0])))

/* Token ranges of the report (upper bounds inclusive). */
static const struct {
    const char *name;
    double hi;
} ranges[] = {{"1-16", 16.0},
              {"17-128", 128.0},
              {"129-1024", 1024.0},
              {"1025-8192", 8192.0},
              {">8192", (double)INFINITY}};
#define N_RANGE ((int)(sizeof(ranges) / sizeof(ranges[0])))
#define ALL     (-1)
/* A "range" key: every token count, only samples whose bytes exceed the GPU's L2. */
#define BEYOND_L2 (-2)
/* "range" keys of the fused-MoE fit check: rows hw import --tables fits, and the others. */
#define FIT_ROWS (-3)
#define HELD_OUT (-4)
/* Flags of a sample (vk_ctx.flags). */
#define FLAG_BEYOND_L2 1u
#define FLAG_MOE_FIT   2u

#define MAX_NOTES 64

typedef struct vk_ctx {
    const char *data;
    const char *tables; /* "aic" or "aic-vllm" */
    int n_gpu;
    const kgpu *gpu[N_KGPU];
    sim_hw hw[N_KGPU];
    char hw_path[N_KGPU][4096];
    sim_gemm_model gemm;
    sim_model mla; /* models/deepseek-v3.json, for the MLA module tables */
    int has_mla;   /* 1 once mla is loaded */
    sim_kset set;
    double *pred, *meas, *scratch; /* set.n each, heap */
    unsigned char *flags;          /* set.n: FLAG_BEYOND_L2 (kernel's bytes > l2_bytes),
                                      FLAG_MOE_FIT (a row sim_moe_fit_role() fits) */
    char notes[MAX_NOTES][384];
    int n_notes;
} vk_ctx;

static void note(vk_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(vk_ctx *x, const char *fmt, ...)
{
    if (x->n_notes == MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->notes[x->n_notes++], sizeof(x->notes[0]), fmt, ap);
    va_end(ap);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* <data>/<rel>.csv, else <data>/<rel>.csv.gz, into out; returns 0 when neither exists. */
static int find_table(const char *data, const char *rel, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s.csv", data, rel);
    if (is_file(out))
        return 1;
    snprintf(out, cap, "%s/%s.csv.gz", data, rel);
    return is_file(out);
}

/*
 * vidur folder name -> models/ id: lower case, without a "meta-" prefix or
 * "-hf" / "-instruct" suffixes (Meta-Llama-3-8B -> llama-3-8b,
 * CodeLlama-34b-Instruct-hf -> codellama-34b).
 */
static void vidur_model_id(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    for (; name[n] && n + 1 < cap; n++)
        out[n] = (char)tolower((unsigned char)name[n]);
    out[n] = '\0';
    if (strncmp(out, "meta-", 5) == 0)
        memmove(out, out + 5, strlen(out + 5) + 1);
    static const char *const suffixes[] = {"-hf", "-instruct"};
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t l = strlen(out), s = strlen(suffixes[i]);
        if (l > s && strcmp(out + l - s, suffixes[i]) == 0)
            out[l - s] = '\0';
    }
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Sorted sub-folder names of dir (at most cap); returns the count, or -1 if unreadable. */
static int list_dirs(const char *dir, char (*names)[256], int cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    const struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL && n < cap) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (!is_dir(p) || strlen(e->d_name) >= 256)
            continue;
        strcpy(names[n++], e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), cmp_name);
    return n;
}

static int load_gpu(vk_ctx *x, int g)
{
    const kgpu *k = x->gpu[g];
    char rel[1024], path[4096];
    struct sim_err err;
    size_t skipped = 0;
    for (int t = 0; t < SIM_AIC_TABLE_COUNT; t++) {
        snprintf(rel, sizeof(rel), "%s/%s", k->aic_dir, sim_aic_table_name((sim_aic_table)t));
        if (!find_table(x->data, rel, path, sizeof(path))) {
            note(x, "%s: no table (.csv or .csv.gz); skipped", rel);
            continue;
        }
        if ((t == SIM_AIC_MLA_CONTEXT || t == SIM_AIC_MLA_GEN) && !x->has_mla) {
            /* The module tables time DeepSeek-V3's attention: its shapes come from its config. */
            char mpath[4096];
            if (cli_load_model("deepseek-v3", &x->mla, mpath, sizeof(mpath)) != CLI_OK)
                return CLI_BAD_INPUT;
            x->has_mla = 1;
        }
        size_t before = x->set.n;
        sim_status st = sim_kset_load_aic(path, (sim_aic_table)t, k->aic_device, k->attn_kernel, g,
                                          &x->set, &skipped, &err);
        if (st != SIM_OK) {
            cli_error("validate-kernels: %s", err.msg);
            return CLI_BAD_INPUT;
        }
        note(x, "%s: %zu kernel samples, %zu rows outside the filters", path + strlen(x->data) + 1,
             x->set.n - before, skipped);
        if (t == SIM_AIC_MOE && skipped)
            note(x,
                 "%s: rows outside the filters are the quantized fused-MoE kernels (Marlin "
                 "int4_wo, fp8_block, nvfp4, w4a16_mxfp4) and expert parallel > 1: not modelled",
                 rel);
    }

    if (!k->vidur_gpu)
        return CLI_OK;
    /* vidur linear operators, one folder per model. */
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/vidur/compute/%s", x->data, k->vidur_gpu);
    static char orgs[64][256], models[64][256];
    int n_org = list_dirs(dir, orgs, 64);
    if (n_org < 0)
        note(x, "vidur/compute/%s: no folder; skipped", k->vidur_gpu);
    for (int o = 0; o < n_org; o++) {
        char odir[4096];
        snprintf(odir, sizeof(odir), "%s/%s", dir, orgs[o]);
        int n_model = list_dirs(odir, models, 64);
        for (int i = 0; i < n_model; i++) {
            snprintf(rel, sizeof(rel), "vidur/compute/%s/%s/%s/mlp.csv", k->vidur_gpu, orgs[o],
                     models[i]);
            snprintf(path, sizeof(path), "%s/%s", x->data, rel);
            if (!is_file(path))
                continue;
            char id[256], mpath[4096];
            vidur_model_id(models[i], id, sizeof(id));
            if (sim_path_resolve(cli_data_dir(), "models", id, mpath, sizeof(mpath), &err) !=
                    SIM_OK ||
                !is_file(mpath)) {
                note(x, "%s: no model config models/%s.json; skipped", rel, id);
                continue;
            }
            sim_model m;
            if (sim_model_load(mpath, id, &m, &err) != SIM_OK) {
                cli_error("validate-kernels: %s", err.msg);
                return CLI_BAD_INPUT;
            }
            size_t before = x->set.n;
            sim_status st = sim_kset_load_vidur_mlp(path, &m, g, &x->set, &skipped, &err);
            if (st != SIM_OK) {
                cli_error("validate-kernels: %s", err.msg);
                return CLI_BAD_INPUT;
            }
            note(x, "%s: %zu kernel samples (4 GEMMs per row, shapes of models/%s.json)", rel,
                 x->set.n - before, id);
        }
    }

    snprintf(rel, sizeof(rel), "vidur/network/%s/all_reduce", k->vidur_net);
    if (!find_table(x->data, rel, path, sizeof(path))) {
        note(x, "%s: no table; skipped", rel);
        return CLI_OK;
    }
    size_t before = x->set.n;
    sim_status st = sim_kset_load_vidur_allreduce(path, g, &x->set, &skipped, &err);
    if (st != SIM_OK) {
        cli_error("validate-kernels: %s", err.msg);
        return CLI_BAD_INPUT;
    }
    note(x, "%s: %zu kernel samples, %zu rows outside the filters (multi-node)",
         path + strlen(x->data) + 1, x->set.n - before, skipped);
    return CLI_OK;
}

/*
 * One MLA module sample through the step model itself (docs/validate-kernels.md, "MLA
 * modules"): DeepSeek-V3 cut to one layer of the row's heads at TP 1, its projections in bf16
 * or in the checkpoint's fp8 blocks, the row's KV dtype, a prefill of batch x isl or a decode
 * of batch sequences with ctx keys; the time is the sum of the operators of vLLM's
 * DeepseekV2MLAAttention forward: qkv_proj (q_a, kv_a, q_b), rope_qk_norm, kv_cache_write,
 * attention, mla_kv_up_proj and o_proj. *floor_s: their FLOPs at the fp8 (or bf16) peak.
 */
static double predict_mla(const sim_hw *hw, sim_gemm_model gm, const sim_model *base,
                          const sim_ksample *s, double *floor_s, double *bytes)
{
    sim_model m = *base;
    m.n_layers = 1;
    m.n_heads = (int64_t)s->heads;
    m.n_moe_layers = 0; /* one layer: its MLP is not part of the module */
    if (s->dtype != SIM_DTYPE_FP8)
        m.quant = (sim_quant){0};
    const sim_run_cfg cfg = {1,
                             SIM_DTYPE_BF16,
                             s->kv_bytes < 2.0 ? SIM_DTYPE_FP8 : SIM_DTYPE_BF16,
                             SIM_ROOFLINE_OP,
                             1.0,
                             0.0,
                             gm,
                             1,
                             1,
                             0};
    const int decode = s->src == SIM_KSRC_AIC_MLA_GEN;
    const sim_step st = {
        1,
        {{(int64_t)s->batch, decode ? 1 : (int64_t)s->ctx, decode ? (int64_t)s->ctx - 1 : 0, 0}}};
    sim_step_cost c;
    sim_step_cost_compute(&m, hw, &cfg, &st, &c);
    static const sim_op_kind module_ops[] = {
        SIM_OP_QKV,          SIM_OP_ROPE,        SIM_OP_KV_WRITE, SIM_OP_ATTN_PREFILL,
        SIM_OP_ATTN_CHUNKED, SIM_OP_ATTN_DECODE, SIM_OP_MLA_UP,   SIM_OP_O_PROJ};
    double t = 0.0, fl = 0.0;
    *bytes = 0.0;
    for (size_t i = 0; i < sizeof(module_ops) / sizeof(module_ops[0]); i++) {
        t += c.ops[module_ops[i]].time_s;
        fl += c.ops[module_ops[i]].flops;
        *bytes += c.ops[module_ops[i]].bytes;
    }
    *floor_s = fl / sim_hw_peak_flops_per_s(hw, s->dtype);
    return t;
}

/*
 * The uncalibrated roofline time of one sample, through the functions ops.c uses.
 * *floor_s (OUT) is the sample's FLOPs at the datasheet peak: no kernel can be faster.
 */
static double predict(const sim_hw *hw, sim_gemm_model gm, const sim_model *mla,
                      const sim_ksample *s, double *floor_s, double *bytes)
{
    sim_kernel_time kt;
    *floor_s = 0.0;
    *bytes = s->bytes;
    switch (sim_ksrc_family(s->src)) {
    case SIM_KFAM_MLA_PREFILL:
    case SIM_KFAM_MLA_DECODE:
        return predict_mla(hw, gm, mla, s, floor_s, bytes);
    case SIM_KFAM_GEMM:
    case SIM_KFAM_GEMM_FP8:
        sim_gemm_time(hw, s->dtype, gm, s->m, s->n, s->k, &kt);
        *floor_s = kt.flops / sim_hw_peak_flops_per_s(hw, s->dtype);
        *bytes = kt.bytes;
        return kt.time_s;
    case SIM_KFAM_GEMM_FP8_BLOCK:
    case SIM_KFAM_GEMM_FP4: {
        sim_gemm_figs g;
        sim_hw_gemm_figs(hw, s->gemm_kind, &g);
        sim_gemm_kind_time(hw, s->gemm_kind, gm, s->m, s->n, s->k, &kt);
        *floor_s = kt.flops / g.peak_flops_per_s;
        *bytes = kt.bytes;
        return kt.time_s;
    }
    case SIM_KFAM_ATTN_DECODE:
    case SIM_KFAM_ATTN_DECODE_FP8KV:
        sim_attn_decode_time(hw, s->batch, s->ctx, s->heads, s->kv_heads, s->head_dim, s->kv_bytes,
                             &kt);
        *floor_s = kt.flops / sim_hw_peak_flops_per_s(hw, SIM_DTYPE_BF16);
        *bytes = kt.bytes;
        return kt.time_s;
    case SIM_KFAM_ATTN_PREFILL:
    case SIM_KFAM_ATTN_PREFILL_FP8KV:
        sim_attn_prefill_time(hw, s->batch, s->ctx, s->heads, s->kv_heads, s->head_dim, &kt);
        *floor_s = kt.flops / sim_hw_peak_flops_per_s(hw, SIM_DTYPE_BF16);
        return kt.time_s;
    case SIM_KFAM_MOE:
    case SIM_KFAM_MOE_FP8: {
        sim_moe_shape sh;
        sim_ksample_moe_shape(s, &sh);
        sim_fused_moe_time(hw, s->dtype, &sh, &kt);
        *floor_s = kt.flops / sim_hw_peak_flops_per_s(hw, s->dtype);
        *bytes = sh.touched * sh.weight_bytes;
        return kt.time_s;
    }
    case SIM_KFAM_ALLREDUCE:
    case SIM_KFAM_COUNT:
    default:
        return sim_allreduce_time_s(hw, s->n_gpus, s->bytes);
    }
}

static int range_of(double tokens)
{
    for (int r = 0; r < N_RANGE; r++)
        if (tokens <= ranges[r].hi)
            return r;
    return N_RANGE - 1;
}

typedef struct gstat {
    sim_metrics m;
    double bias_pct; /* mean of (pred - meas) / meas, percent */
} gstat;

static int matches(const sim_ksample *s, int fam, int gpu, int range, int src)
{
    return (fam == ALL || (int)sim_ksrc_family(s->src) == fam) && (gpu == ALL || s->gpu == gpu) &&
           (src == ALL || (int)s->src == src) && (range < 0 || range_of(s->tokens) == range);
}

/*
 * Metrics of the samples matching every key that is not ALL; returns 0 when
 * none match. The group is gathered into the second halves of pred and meas.
 */
static int group(const vk_ctx *x, int fam, int gpu, int range, int src, gstat *out)
{
    double *gp = x->pred + x->set.n, *gm = x->meas + x->set.n;
    size_t n = 0;
    double bias = 0.0;
    for (size_t i = 0; i < x->set.n; i++) {
        if (!matches(&x->set.v[i], fam, gpu, range, src) ||
            (range == BEYOND_L2 && !(x->flags[i] & FLAG_BEYOND_L2)) ||
            (range == FIT_ROWS && !(x->flags[i] & FLAG_MOE_FIT)) ||
            (range == HELD_OUT && (x->flags[i] & FLAG_MOE_FIT)))
            continue;
        gp[n] = x->pred[i];
        gm[n] = x->meas[i];
        bias += (gp[n] - gm[n]) / gm[n];
        n++;
    }
    if (n == 0 || sim_metrics_compute(gp, gm, n, x->scratch, &out->m) != SIM_OK)
        return 0;
    out->bias_pct = 100.0 * bias / (double)n;
    return 1;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static const char *gpu_name(const vk_ctx *x, int g) { return g == ALL ? "all" : x->hw[g].id; }

/* Prints one group (table row or JSON object) when it has samples. */
static void emit(const vk_ctx *x, int json, int *first, int fam, int gpu, int range, int src)
{
    gstat s;
    if (!group(x, fam, gpu, range, src, &s))
        return;
    const char *fname = fam == ALL ? "all" : sim_kfam_name((sim_kfam)fam);
    const char *rname = range == ALL         ? "all"
                        : range == BEYOND_L2 ? "bytes>L2"
                        : range == FIT_ROWS  ? "fit"
                        : range == HELD_OUT  ? "held-out"
                                             : ranges[range].name;
    const char *sname = src == ALL ? "all" : sim_ksrc_name((sim_ksrc)src);
    if (json) {
        printf("%s{\"family\":\"%s\",\"gpu\":\"%s\",\"range\":\"%s\",\"source\":\"%s\",\"n\":%zu,"
               "\"mape_pct\":%.17g,\"median_ape_pct\":%.17g,\"max_ape_pct\":%.17g,"
               "\"bias_pct\":%.17g}",
               *first ? "" : ",", fname, gpu_name(x, gpu), rname, sname, s.m.n, s.m.mape_pct,
               s.m.median_ape_pct, s.m.max_ape_pct, s.bias_pct);
        *first = 0;
        return;
    }
    printf("  %-13s %-14s %-10s %-30s %7zu %8.2f %8.2f %9.1f %+8.2f\n", fname, gpu_name(x, gpu),
           rname, sname, s.m.n, s.m.mape_pct, s.m.median_ape_pct, s.m.max_ape_pct, s.bias_pct);
}

static void header(const char *title)
{
    printf("\n%s\n  %-13s %-14s %-10s %-30s %7s %8s %8s %9s %8s\n", title, "family", "gpu",
           "tokens", "source", "n", "MAPE%", "medAPE%", "maxAPE%", "bias%");
}

static void report(const vk_ctx *x, int json)
{
    int first = 1;
    const int gpus_all = x->n_gpu > 1;
    if (json) {
        printf("{\"schema_version\":\"%s\",\"data\":", SCHEMA);
        json_str(x->data);
        printf(",\"gemm_model\":\"%s\",\"alpha\":1,\"beta_s\":0,\"allreduce_tokens_hidden\":%d,"
               "\"hardware\":[",
               x->gemm == SIM_GEMM_TILE_WAVE ? "tile-wave" : "flat", SIM_KTAB_AR_HIDDEN);
        for (int g = 0; g < x->n_gpu; g++) {
            printf("%s{\"id\":", g ? "," : "");
            json_str(x->hw[g].id);
            printf(",\"path\":");
            json_str(x->hw_path[g]);
            printf("}");
        }
        printf("],\"groups\":[");
    } else {
        printf("llmstep validate-kernels: %s, GEMM model %s, uncalibrated (alpha = 1, beta = 0)\n",
               x->data, x->gemm == SIM_GEMM_TILE_WAVE ? "tile-wave" : "flat");
        for (int g = 0; g < x->n_gpu; g++)
            printf("  %-14s %s\n", x->hw[g].id, x->hw_path[g]);
        printf("tokens: GEMM m; decode attention batch; prefill attention batch x prompt; MoE "
               "tokens;\n"
               "all-reduce bytes / (2 x %d), the tokens of a bf16 hidden state of %d.\n"
               "APE = |pred - meas| / meas; bias = mean (pred - meas) / meas.\n",
               SIM_KTAB_AR_HIDDEN, SIM_KTAB_AR_HIDDEN);
        header("by family and GPU");
    }
    for (int f = 0; f < SIM_KFAM_COUNT; f++) {
        for (int g = 0; g < x->n_gpu; g++)
            emit(x, json, &first, f, g, ALL, ALL);
        if (gpus_all)
            emit(x, json, &first, f, ALL, ALL, ALL);
    }
    if (!json)
        header("GEMMs and decode attention whose bytes exceed the GPU's L2 (weights or KV cache "
               "not left in L2 by the previous replay)");
    static const sim_kfam l2_fams[] = {
        SIM_KFAM_GEMM,     SIM_KFAM_GEMM_FP8,    SIM_KFAM_GEMM_FP8_BLOCK,
        SIM_KFAM_GEMM_FP4, SIM_KFAM_ATTN_DECODE, SIM_KFAM_ATTN_DECODE_FP8KV,
        SIM_KFAM_MOE,      SIM_KFAM_MOE_FP8};
    for (size_t i = 0; i < sizeof(l2_fams) / sizeof(l2_fams[0]); i++)
        for (int g = 0; g < x->n_gpu; g++)
            emit(x, json, &first, (int)l2_fams[i], g, BEYOND_L2, ALL);
    if (!json)
        header(
            "fused MoE: the rows `hw import --tables` fits its moe figures on (fit: tokens <= 16 "
            "with weights >= 2 x L2, tokens >= 4096) and the others (held-out)");
    static const sim_kfam moe_fams[] = {SIM_KFAM_MOE, SIM_KFAM_MOE_FP8};
    for (size_t i = 0; i < sizeof(moe_fams) / sizeof(moe_fams[0]); i++)
        for (int g = 0; g < x->n_gpu; g++) {
            emit(x, json, &first, (int)moe_fams[i], g, FIT_ROWS, ALL);
            emit(x, json, &first, (int)moe_fams[i], g, HELD_OUT, ALL);
        }
    if (!json)
        header("by family, GPU and token range");
    for (int f = 0; f < SIM_KFAM_COUNT; f++)
        for (int g = 0; g < x->n_gpu; g++)
            for (int r = 0; r < N_RANGE; r++)
                emit(x, json, &first, f, g, r, ALL);
    if (!json)
        header("by source table and GPU");
    for (int s = 0; s < SIM_KSRC_COUNT; s++)
        for (int g = 0; g < x->n_gpu; g++)
            emit(x, json, &first, (int)sim_ksrc_family((sim_ksrc)s), g, ALL, s);
    if (!json)
        header("by source table, GPU and token range");
    for (int s = 0; s < SIM_KSRC_COUNT; s++)
        for (int g = 0; g < x->n_gpu; g++)
            for (int r = 0; r < N_RANGE; r++)
                emit(x, json, &first, (int)sim_ksrc_family((sim_ksrc)s), g, r, s);
    if (json) {
        printf("],\"notes\":[");
        for (int i = 0; i < x->n_notes; i++) {
            printf("%s", i ? "," : "");
            json_str(x->notes[i]);
        }
        printf("]}\n");
        return;
    }
    printf("\nnotes:\n");
    for (int i = 0; i < x->n_notes; i++)
        printf("  %s\n", x->notes[i]);
}

/* ---- --speedup: GPU speed-ups of decode steps, measured tables against the step model ---- */

/*
 * Decode steps of the check (docs/validate-kernels.md, "GPU speed-ups"): each model at its TP,
 * batch sequences each attending SU_KEYS keys (SU_KEYS - 1 cached + the new token, the
 * tables' step = SU_KEYS - 1 rows), bf16 weights and KV cache. H100 is the reference.
 */
#define SU_KEYS 2048
static const struct {
    const char *model;
    int tp;
} su_models[] = {{"llama-3.1-8b", 1}, {"llama-3.1-70b", 4}};
static const int64_t su_batch[] = {1, 8, 64};
static const char *const su_gpus[] = {"h100-sxm", "h200-sxm", "b200"};
#define SU_N_GPU   3
#define SU_N_MODEL ((int)(sizeof(su_models) / sizeof(su_models[0])))
#define SU_N_BATCH ((int)(sizeof(su_batch) / sizeof(su_batch[0])))

/* Operator classes of the comparison. */
enum { SU_GEMM = 0, SU_ATTN = 1, SU_AR = 2, SU_N_CLASS = 3 };

/* Measured time of the bf16 GEMM row (m, n, k) of GPU g, or -1 when the table has none. */
static double gemm_row(const sim_kset *set, int g, double m, double n, double k)
{
    for (size_t i = 0; i < set->n; i++) {
        const sim_ksample *s = &set->v[i];
        if (s->gpu == g && s->src == SIM_KSRC_AIC_GEMM && s->m == m && s->n == n && s->k == k)
            return s->measured_s;
    }
    return -1.0;
}

/*
 * Measured time of a bf16 GEMM m x k -> n on GPU g: the row itself, else bilinear
 * interpolation in (n, k) between the nearest measured n and k on both sides at the same m
 * (time is affine in n k on both sides of the roofline, so the interpolation is exact for a
 * GEMM that stays in one regime). *interp is set to 1 when interpolated. Returns -1 when a
 * corner is missing.
 */
static double gemm_meas(const sim_kset *set, int g, double m, double n, double k, int *interp)
{
    double n0 = -HUGE_VAL, n1 = HUGE_VAL, k0 = -HUGE_VAL, k1 = HUGE_VAL;
    for (size_t i = 0; i < set->n; i++) {
        const sim_ksample *s = &set->v[i];
        if (s->gpu != g || s->src != SIM_KSRC_AIC_GEMM || s->m != m)
            continue;
        if (s->n <= n && s->n > n0)
            n0 = s->n;
        if (s->n >= n && s->n < n1)
            n1 = s->n;
        if (s->k <= k && s->k > k0)
            k0 = s->k;
        if (s->k >= k && s->k < k1)
            k1 = s->k;
    }
    if (!isfinite(n0) || !isfinite(n1) || !isfinite(k0) || !isfinite(k1))
        return -1.0;
    const double t00 = gemm_row(set, g, m, n0, k0), t10 = gemm_row(set, g, m, n1, k0);
    const double t01 = gemm_row(set, g, m, n0, k1), t11 = gemm_row(set, g, m, n1, k1);
    if (t00 < 0.0 || t10 < 0.0 || t01 < 0.0 || t11 < 0.0)
        return -1.0;
    const double wn = n1 > n0 ? (n - n0) / (n1 - n0) : 0.0;
    const double wk = k1 > k0 ? (k - k0) / (k1 - k0) : 0.0;
    *interp |= n0 != n1 || k0 != k1;
    return (1.0 - wn) * (1.0 - wk) * t00 + wn * (1.0 - wk) * t10 + (1.0 - wn) * wk * t01 +
           wn * wk * t11;
}

/* Measured decode attention (bf16 KV) of GPU g, or -1: the matching rows' mean. */
static double attn_meas(const sim_kset *set, int g, double batch, double keys, double heads,
                        double kv_heads, double head_dim)
{
    double sum = 0.0;
    int n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const sim_ksample *s = &set->v[i];
        if (s->gpu == g && s->src == SIM_KSRC_AIC_DECODE && s->batch == batch && s->ctx == keys &&
            s->heads == heads && s->kv_heads == kv_heads && s->head_dim == head_dim) {
            sum += s->measured_s;
            n++;
        }
    }
    return n ? sum / n : -1.0;
}

/* Measured custom all-reduce of bytes among n GPUs on GPU g: the row, else linear in bytes
 * between the nearest sizes on both sides; -1 when there are none. */
static double ar_meas(const sim_kset *set, int g, int n_gpus, double bytes, int *interp)
{
    double b0 = -HUGE_VAL, b1 = HUGE_VAL, t0 = -1.0, t1 = -1.0;
    for (size_t i = 0; i < set->n; i++) {
        const sim_ksample *s = &set->v[i];
        if (s->gpu != g || s->src != SIM_KSRC_AIC_CUSTOM_AR || s->n_gpus != n_gpus)
            continue;
        if (s->bytes <= bytes && s->bytes > b0) {
            b0 = s->bytes;
            t0 = s->measured_s;
        }
        if (s->bytes >= bytes && s->bytes < b1) {
            b1 = s->bytes;
            t1 = s->measured_s;
        }
    }
    if (t0 < 0.0 || t1 < 0.0)
        return -1.0;
    *interp |= b0 != b1;
    return b1 > b0 ? t0 + (t1 - t0) * (bytes - b0) / (b1 - b0) : t0;
}

/*
 * One case on GPU g: meas[] and pred[] get the step's time per operator class (every layer:
 * QKV, O, gate_up, down; decode attention; 2 L + 1 all-reduces at TP > 1), s. The
 * prediction is the step model's (sim_step_cost_compute, alpha 1, beta 0) for the same
 * operators. Returns 0, or -1 with a message in why when a table lacks a row.
 */
static int su_case(const vk_ctx *x, int g, const sim_model *m, int tp, int64_t batch,
                   double meas[SU_N_CLASS], double pred[SU_N_CLASS], int *interp, char *why,
                   size_t cap)
{
    const double L = (double)m->n_layers, d = (double)m->d_model, dh = (double)m->head_dim;
    const double hg = (double)m->n_heads / tp;
    const double kvg = m->n_kv_heads >= tp ? (double)m->n_kv_heads / tp : 1.0;
    const double b = (double)batch;
    const double gemms[4][2] = {{(hg + 2.0 * kvg) * dh, d}, /* QKV: n, k */
                                {d, hg * dh},               /* O */
                                {2.0 * (double)m->d_ff / tp, d},
                                {d, (double)m->d_ff / tp}};
    meas[SU_GEMM] = meas[SU_ATTN] = meas[SU_AR] = 0.0;
    for (int i = 0; i < 4; i++) {
        const double t = gemm_meas(&x->set, g, b, gemms[i][0], gemms[i][1], interp);
        if (t < 0.0) {
            snprintf(why, cap, "no gemm_perf rows around m %g, n %g, k %g", b, gemms[i][0],
                     gemms[i][1]);
            return -1;
        }
        meas[SU_GEMM] += L * t;
    }
    const double ta = attn_meas(&x->set, g, b, SU_KEYS, hg, kvg, dh);
    if (ta < 0.0) {
        snprintf(why, cap, "no generation_attention_perf row for batch %g, %d keys, %g/%g heads", b,
                 SU_KEYS, hg, kvg);
        return -1;
    }
    meas[SU_ATTN] = L * ta;
    if (tp > 1) {
        const double tr = ar_meas(&x->set, g, tp, b * d * 2.0, interp);
        if (tr < 0.0) {
            snprintf(why, cap, "no custom_allreduce_perf rows for %d GPUs", tp);
            return -1;
        }
        meas[SU_AR] = (2.0 * L + 1.0) * tr;
    }
    sim_run_cfg cfg = {tp, SIM_DTYPE_BF16, SIM_DTYPE_BF16, SIM_ROOFLINE_OP, 1.0, 0.0, x->gemm, 1, 1,
                       0};
    sim_step st = {0};
    st.n_groups = 1;
    st.groups[0] = (sim_group){batch, 1, SU_KEYS - 1, 1};
    sim_step_cost c;
    sim_step_cost_compute(m, &x->hw[g], &cfg, &st, &c);
    pred[SU_GEMM] = c.ops[SIM_OP_QKV].time_s + c.ops[SIM_OP_O_PROJ].time_s +
                    c.ops[SIM_OP_MLP_GATE_UP].time_s + c.ops[SIM_OP_MLP_DOWN].time_s;
    pred[SU_ATTN] = c.ops[SIM_OP_ATTN_DECODE].time_s;
    pred[SU_AR] = c.ops[SIM_OP_ALLREDUCE].time_s;
    return 0;
}

static double su_sum(const double v[SU_N_CLASS]) { return v[SU_GEMM] + v[SU_ATTN] + v[SU_AR]; }

/* One row of the speed-up report: a GPU's measured and predicted times and H100's. */
typedef struct su_row {
    const char *label, *model; /* label: the model on the first GPU's row, else "" */
    int tp;
    int64_t batch;
    const char *gpu;
    const double *meas, *pred, *meas0, *pred0; /* per operator class */
} su_row;

static void su_print_row(const su_row *r, int json, int *first)
{
    static const char *const cls_name[SU_N_CLASS] = {"gemm", "attn", "allreduce"};
    const double tm = su_sum(r->meas), tpd = su_sum(r->pred);
    const double rm = tm / su_sum(r->meas0), rp = tpd / su_sum(r->pred0);
    const double diff = 100.0 * (rp / rm - 1.0);
    double cm[SU_N_CLASS], cp[SU_N_CLASS];
    for (int c = 0; c < SU_N_CLASS; c++) {
        cm[c] = r->meas0[c] > 0.0 ? r->meas[c] / r->meas0[c] : 0.0;
        cp[c] = r->pred0[c] > 0.0 ? r->pred[c] / r->pred0[c] : 0.0;
    }
    if (json) {
        printf("%s{\"model\":\"%s\",\"tp\":%d,\"batch\":%lld,\"gpu\":\"%s\","
               "\"measured_s\":%.17g,\"predicted_s\":%.17g,\"measured_ratio\":%.17g,"
               "\"predicted_ratio\":%.17g,\"diff_pct\":%.17g",
               *first ? "" : ",", r->model, r->tp, (long long)r->batch, r->gpu, tm, tpd, rm, rp,
               diff);
        for (int c = 0; c < SU_N_CLASS; c++)
            printf(",\"%s_measured_s\":%.17g,\"%s_predicted_s\":%.17g,"
                   "\"%s_measured_ratio\":%.17g,\"%s_predicted_ratio\":%.17g",
                   cls_name[c], r->meas[c], cls_name[c], r->pred[c], cls_name[c], cm[c],
                   cls_name[c], cp[c]);
        printf("}");
        *first = 0;
        return;
    }
    printf("  %-15s %2d  %5lld  %-9s %8.4f %8.4f  %10.3f  %10.3f  %+6.1f", r->label, r->tp,
           (long long)r->batch, r->gpu, 1e3 * tm, 1e3 * tpd, rm, rp, diff);
    for (int c = 0; c < SU_N_CLASS; c++) {
        if (r->meas0[c] > 0.0)
            printf("   %5.3f/%5.3f", cm[c], cp[c]);
        else
            printf("   %11s", "-");
    }
    printf("\n");
}

/*
 * The speed-up report: per model, batch and GPU the measured and predicted step time of the
 * operators above, their ratio to H100's (time / H100 time; the speed-up is its inverse)
 * and the relative difference of the predicted ratio from the measured one, then the same
 * ratio per operator class. Returns CLI_OK, or CLI_BAD_INPUT when a table lacks a row.
 */
static int speedup_report(const vk_ctx *x, int json)
{
    int interp = 0, first = 1, n_rows = 0, n_ok = 0;
    if (json)
        printf("{\"schema\":\"%s\",\"report\":\"speedup\",\"keys\":%d,\"rows\":[", SCHEMA, SU_KEYS);
    else
        printf("decode-step speed-ups: operator times of a step (QKV, O, gate_up, down, decode "
               "attention\nover %d keys, all-reduces at TP > 1; bf16) summed from the measured "
               "aic-vllm tables\nand predicted by the step model (uncalibrated); ratio = time / "
               "H100 time\n"
               "  model           tp  batch  gpu        meas_ms  pred_ms  meas_ratio  "
               "pred_ratio  diff%%   gemm m/p     attn m/p     allreduce m/p\n",
               SU_KEYS);
    for (int mi = 0; mi < SU_N_MODEL; mi++) {
        sim_model m;
        char mpath[4096];
        if (cli_load_model(su_models[mi].model, &m, mpath, sizeof(mpath)) != CLI_OK)
            return CLI_BAD_INPUT;
        const int tp = su_models[mi].tp;
        for (int bi = 0; bi < SU_N_BATCH; bi++) {
            double meas[SU_N_GPU][SU_N_CLASS], pred[SU_N_GPU][SU_N_CLASS];
            char why[256];
            for (int g = 0; g < SU_N_GPU; g++)
                if (su_case(x, g, &m, tp, su_batch[bi], meas[g], pred[g], &interp, why,
                            sizeof(why)) != 0) {
                    cli_error("validate-kernels --speedup: %s: %s", x->hw[g].id, why);
                    return CLI_BAD_INPUT;
                }
            for (int g = 0; g < SU_N_GPU; g++) {
                const double rm = su_sum(meas[g]) / su_sum(meas[0]);
                const double diff = 100.0 * (su_sum(pred[g]) / su_sum(pred[0]) / rm - 1.0);
                if (!isfinite(diff)) {
                    cli_error("validate-kernels --speedup: %s: ratio is not finite", x->hw[g].id);
                    return CLI_NUMERIC;
                }
                if (g > 0) {
                    n_rows++;
                    n_ok += fabs(diff) <= 10.0;
                }
                const su_row row = {g ? "" : m.id, m.id,    tp,      su_batch[bi], x->hw[g].id,
                                    meas[g],       pred[g], meas[0], pred[0]};
                su_print_row(&row, json, &first);
            }
        }
    }
    if (json) {
        printf("],\"within_10pct\":%d,\"compared\":%d}\n", n_ok, n_rows);
        return CLI_OK;
    }
    printf("\n%d of %d predicted ratios within 10%% of the measured ones.\n", n_ok, n_rows);
    printf("notes:\n  GEMM shapes not in gemm_perf: %s\n",
           interp ? "bilinear interpolation in (n, k) between the nearest measured sizes at the "
                    "same m"
                  : "none (every shape measured)");
    printf("  all-reduce of batch x hidden x 2 bytes, measured sizes (linear in bytes "
           "otherwise)\n");
    return CLI_OK;
}

static const char usage[] =
    "usage: llmstep validate-kernels [--hw ID]... [--data DIR] [--tables aic|aic-vllm]\n"
    "                                [--gemm flat|tile-wave] [--format table|json] [--speedup]\n\n"
    "Predicts every measured kernel of the aic and vidur tables with the single-kernel\n"
    "rooflines llmstep uses for steps (uncalibrated: alpha = 1, beta = 0) and reports\n"
    "MAPE, median and max APE and the mean signed error (bias) per operator family\n"
    "(gemm, gemm_fp8, attn_decode, attn_prefill, attn_decode_fp8kv, attn_prefill_fp8kv,\n"
    "allreduce, moe, moe_fp8), per token range (1-16, 17-128, 129-1024, 1025-8192, >8192),\n"
    "per GPU and per source table; for the fused MoE also the rows `hw import --tables`\n"
    "fits on and the held-out rest.\n\n"
    "  --hw ID|PATH     profile to test (repeatable); its id picks the tables. aic-vllm:\n"
    "                   h100-sxm, h200-sxm, b200, rtx-pro-6000 (vLLM 0.19.0), l40s (0.24.0),\n"
    "                   a100-sxm-80gb (0.14.0); aic: h100-sxm (aic h100_sxm, vidur h100,\n"
    "                   h100_dgx) and a100-sxm-80gb. Default: every GPU of the set.\n"
    "  --data DIR       kernel tables (default <data>/../shared/data/kernels)\n"
    "  --tables SET     aic-vllm (V1-era aic-vllm/<gpu>/<version>/, the default when that\n"
    "                   folder exists) or aic (aic/ and vidur/)\n"
    "  --gemm MODEL     flat (default) or tile-wave (gemm_tiles of the profile)\n"
    "  --format FMT     table (default) or json\n"
    "  --speedup        instead: H200/H100 and B200/H100 time ratios of decode steps of\n"
    "                   Llama-3.1-8B (TP 1) and 70B (TP 4), batch 1, 8, 64, 2048 keys,\n"
    "                   summed from the measured tables and predicted by the step model\n\n"
    "vidur model folders map to models/<id>.json (Meta-Llama-3-8B -> llama-3-8b); folders\n"
    "without a config are skipped and listed in the notes.\n";

/* The command's settings after parsing. */
typedef struct vk_args {
    const char *hw_names[N_KGPU];
    int n_hw, json, speedup;
    const char *tables, *data;
} vk_args;

static int parse_vk(int argc, char **argv, vk_ctx *x, vk_args *a, int *done)
{
    memset(a, 0, sizeof(*a));
    const char *format = "table";
    cli_opt_bounded hw = {{a->hw_names, 0, N_KGPU}, ""};
    snprintf(hw.full, sizeof(hw.full), "at most %d --hw (one per GPU with tables)", N_KGPU);
    const cli_opt t[] = {
        CLI_CUSTOM("hw", cli_opt_parse_bounded, &hw),
        CLI_STR("data", &a->data),
        {.name = "gemm", .kind = CLI_OPT_GEMM, .dst = &x->gemm, .expect = "flat or tile-wave"},
        CLI_CHOICE("format", &format, "table|json"),
        CLI_CHOICE("tables", &a->tables, "aic|aic-vllm"),
        CLI_FLAG("speedup", &a->speedup),
    };
    int rc = cli_opts_parse_text("validate-kernels", argc, argv, t, CLI_N(t), usage, done, NULL);
    a->n_hw = hw.l.n;
    a->json = strcmp(format, "json") == 0;
    return rc;
}

/* The data folder and the table set: the V1-era tables when present, else aic and vidur. */
static int resolve_tables(vk_ctx *x, vk_args *a)
{
    static char default_data[4096];
    if (!a->data) {
        snprintf(default_data, sizeof(default_data), "%s/../shared/data/kernels", cli_data_dir());
        a->data = default_data;
    }
    x->data = a->data;
    if (!is_dir(a->data)) {
        cli_error("validate-kernels: kernel data folder '%s' not found (give --data DIR)", a->data);
        return CLI_BAD_INPUT;
    }
    if (!a->tables) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/aic-vllm", a->data);
        a->tables = is_dir(p) ? "aic-vllm" : "aic";
    }
    x->tables = a->tables;
    return CLI_OK;
}

/* Loads the profiles named (or every one with tables; for --speedup H100, H200, B200) and
 * matches each to its tables. */
static int load_profiles(vk_ctx *x, vk_args *a, const kgpu *kgpus, int n_kgpu)
{
    if (a->speedup) {
        /* The check compares H100, H200 and B200, in that order (H100 is the reference). */
        if (kgpus != kgpus_vllm) {
            cli_error("validate-kernels: --speedup needs the aic-vllm tables");
            return CLI_USAGE;
        }
        if (a->n_hw != 0 && a->n_hw != SU_N_GPU) {
            cli_error("validate-kernels: --speedup takes no --hw or exactly %d (profiles for %s, "
                      "%s and %s, in that order)",
                      SU_N_GPU, su_gpus[0], su_gpus[1], su_gpus[2]);
            return CLI_USAGE;
        }
        if (a->n_hw == 0)
            for (int g = 0; g < SU_N_GPU; g++)
                a->hw_names[a->n_hw++] = su_gpus[g];
    }
    if (a->n_hw == 0)
        for (int g = 0; g < n_kgpu; g++)
            a->hw_names[a->n_hw++] = kgpus[g].hw_id;
    int rc = CLI_OK;
    for (int i = 0; i < a->n_hw && rc == CLI_OK; i++) {
        rc = cli_load_hw(a->hw_names[i], &x->hw[i], x->hw_path[i], sizeof(x->hw_path[i]));
        if (rc != CLI_OK)
            break;
        int k = 0;
        while (k < n_kgpu && strcmp(kgpus[k].hw_id, x->hw[i].id) != 0)
            k++;
        if (k == n_kgpu) {
            char list[512];
            size_t len = 0;
            for (int j = 0; j < n_kgpu && len < sizeof(list); j++)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
                                        j == 0            ? ""
                                        : j == n_kgpu - 1 ? " and "
                                                          : ", ",
                                        kgpus[j].hw_id);
            cli_error("validate-kernels: %s: no kernel tables for hardware '%s' (%s tables exist "
                      "for %s)",
                      x->hw_path[i], x->hw[i].id, a->tables, list);
            return CLI_BAD_INPUT;
        }
        for (int j = 0; j < i; j++)
            if (x->gpu[j] == &kgpus[k]) {
                cli_error("validate-kernels: --hw: '%s' given twice", x->hw[i].id);
                rc = CLI_USAGE;
            }
        x->gpu[i] = &kgpus[k];
        x->n_gpu = i + 1;
    }
    for (int g = 0; a->speedup && g < x->n_gpu && rc == CLI_OK; g++)
        if (strcmp(x->hw[g].id, su_gpus[g]) != 0) {
            cli_error("validate-kernels: --speedup: profile %d is '%s', expected '%s'", g + 1,
                      x->hw[g].id, su_gpus[g]);
            rc = CLI_USAGE;
        }
    for (int g = 0; g < x->n_gpu && rc == CLI_OK; g++)
        rc = load_gpu(x, g);
    return rc;
}

/* Predicts every sample; samples faster than the datasheet peak allows are not
 * measurements of what their columns say (H200 context_attention_perf has many): dropped
 * and counted per source. */
static int predict_samples(vk_ctx *x)
{
    /* pred and meas hold the samples, then room for one group; scratch one group. */
    x->pred = malloc(2 * x->set.n * sizeof(double));
    x->meas = malloc(2 * x->set.n * sizeof(double));
    x->scratch = malloc(x->set.n * sizeof(double));
    x->flags = malloc(x->set.n + 1);
    if (!x->pred || !x->meas || !x->scratch || !x->flags) {
        cli_error("validate-kernels: out of memory");
        return CLI_BAD_INPUT;
    }
    size_t kept = 0, n_fast[N_KGPU][SIM_KSRC_COUNT];
    memset(n_fast, 0, sizeof(n_fast));
    for (size_t i = 0; i < x->set.n; i++) {
        const sim_ksample *s = &x->set.v[i];
        double floor_s, bytes;
        const double p = predict(&x->hw[s->gpu], x->gemm, &x->mla, s, &floor_s, &bytes);
        if (!isfinite(p) || !(p > 0.0)) {
            cli_error("validate-kernels: %s line %lld: prediction %g s is not a positive number",
                      sim_ksrc_name(s->src), (long long)s->line, p);
            return CLI_NUMERIC;
        }
        if (s->measured_s < floor_s) {
            n_fast[s->gpu][s->src]++;
            continue;
        }
        x->flags[kept] =
            (unsigned char)((bytes > x->hw[s->gpu].v[SIM_HWF_L2] ? FLAG_BEYOND_L2 : 0u) |
                            (sim_moe_fit_role(s, x->hw[s->gpu].v[SIM_HWF_L2]) ? FLAG_MOE_FIT : 0u));
        x->meas[kept] = s->measured_s;
        x->pred[kept] = p;
        x->set.v[kept++] = *s;
    }
    x->set.n = kept;
    for (int g = 0; g < x->n_gpu; g++)
        for (int k = 0; k < SIM_KSRC_COUNT; k++)
            if (n_fast[g][k])
                note(x, "%s %s: %zu samples faster than the datasheet peak left out", x->hw[g].id,
                     sim_ksrc_name((sim_ksrc)k), n_fast[g][k]);
    return CLI_OK;
}

int cmd_validate_kernels(int argc, char **argv)
{
    static vk_ctx x;
    memset(&x, 0, sizeof(x));
    sim_kset_init(&x.set);
    vk_args a;
    int done, rc = parse_vk(argc, argv, &x, &a, &done);
    if (rc != CLI_OK || done)
        return rc;
    rc = resolve_tables(&x, &a);
    if (rc != CLI_OK)
        return rc;
    const int vllm = strcmp(a.tables, "aic-vllm") == 0;
    const kgpu *kgpus = vllm ? kgpus_vllm : kgpus_aic;
    const int n_kgpu = vllm ? N_KGPU : (int)(sizeof(kgpus_aic) / sizeof(kgpus_aic[0]));
    rc = load_profiles(&x, &a, kgpus, n_kgpu);
    if (a.speedup) {
        if (rc == CLI_OK)
            rc = speedup_report(&x, a.json);
        sim_kset_free(&x.set);
        return rc;
    }
    if (rc == CLI_OK && x.set.n == 0) {
        cli_error("validate-kernels: no kernel tables under '%s'", a.data);
        rc = CLI_BAD_INPUT;
    }
    if (rc == CLI_OK)
        rc = predict_samples(&x);
    if (rc == CLI_OK)
        report(&x, a.json);
    free(x.pred);
    free(x.meas);
    free(x.scratch);
    free(x.flags);
    sim_kset_free(&x.set);
    return rc;
}
