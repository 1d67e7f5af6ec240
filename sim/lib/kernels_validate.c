/*
 * kernels_validate.c - see kernels_validate.h. The tables and their filters are in
 * kernel_tables.h; the method in docs/validate-kernels.md. Messages are those of
 * `llmstep validate-kernels`, this module's one caller, and name its options.
 */
#define _POSIX_C_SOURCE 200809L
#include "kernels_validate.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "kernel_tables.h"
#include "kernels.h"
#include "model_json.h"
#include "hw_json.h"
#include "paths.h"

#define WHO "validate-kernels"

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
#define N_KGPU_AIC ((int)(sizeof(kgpus_aic) / sizeof(kgpus_aic[0])))

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
#define N_KGPU_VLLM ((int)(sizeof(kgpus_vllm) / sizeof(kgpus_vllm[0])))
_Static_assert(N_KGPU_VLLM <= SIM_KVAL_MAX_GPU && N_KGPU_AIC <= SIM_KVAL_MAX_GPU,
               "SIM_KVAL_MAX_GPU covers every table set");

/* Token ranges of the report (upper bounds inclusive). */
static const struct {
    const char *name;
    double hi;
} ranges[SIM_KVAL_N_RANGE] = {{"1-16", 16.0},
                              {"17-128", 128.0},
                              {"129-1024", 1024.0},
                              {"1025-8192", 8192.0},
                              {">8192", (double)INFINITY}};

/* Flags of a kept sample (sim_kval_data.flags). */
#define FLAG_BEYOND_L2 1u
#define FLAG_MOE_FIT   2u

/* vidur folders listed per level (organisations, then their models). */
#define MAX_VIDUR_DIRS 64

struct sim_kval_data {
    char *data_dir; /* models/ and hwprofiles/, heap copy */
    const kgpu *gpu[SIM_KVAL_MAX_GPU];
    sim_kset set;
    sim_model mla;                 /* models/deepseek-v3.json, for the MLA module tables */
    int has_mla;                   /* 1 once mla is loaded */
    double *pred, *meas, *scratch; /* set.n each (pred and meas: twice, see group), heap */
    unsigned char *flags;          /* set.n: FLAG_BEYOND_L2 (kernel's bytes > l2_bytes),
                                      FLAG_MOE_FIT (a row sim_moe_fit_role() fits) */
    sim_kval_group *groups;
    size_t n_groups, cap_groups;
    char orgs[MAX_VIDUR_DIRS][256], models[MAX_VIDUR_DIRS][256]; /* vidur folder names */
};

/* Fills err and returns st. */
static sim_status fail(sim_kval_err *err, sim_kval_fault fault, sim_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static sim_status fail(sim_kval_err *err, sim_kval_fault fault, sim_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(err->msg, sizeof(err->msg), "", 0, fmt, ap);
    va_end(ap);
    err->fault = fault;
    return st;
}

static void note(sim_kval *kv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(sim_kval *kv, const char *fmt, ...)
{
    if (kv->n_notes == SIM_KVAL_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(kv->notes[kv->n_notes++], sizeof(kv->notes[0]), "", 0, fmt, ap);
    va_end(ap);
}

sim_kval *sim_kval_alloc(void)
{
    sim_kval *kv = calloc(1, sizeof(*kv));
    if (!kv)
        return NULL;
    kv->data = calloc(1, sizeof(*kv->data));
    if (!kv->data) {
        free(kv);
        return NULL;
    }
    sim_kset_init(&kv->data->set);
    return kv;
}

void sim_kval_free(sim_kval *kv)
{
    if (!kv)
        return;
    struct sim_kval_data *d = kv->data;
    free(d->data_dir);
    free(d->pred);
    free(d->meas);
    free(d->scratch);
    free(d->flags);
    free(d->groups);
    sim_kset_free(&d->set);
    free(d);
    free(kv);
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

/* A model config by id or path from the data folder: the loaders' message on failure. */
static sim_status load_model(const char *data_dir, const char *name, sim_model *m,
                             struct sim_err *err)
{
    char path[4096];
    sim_status st = sim_path_resolve(data_dir, "models", name, path, sizeof(path), err);
    return st == SIM_OK ? sim_model_load(path, name, m, err) : st;
}

/* The aic tables of GPU g (the MLA module tables with DeepSeek-V3's config). */
static sim_status load_aic(sim_kval *kv, int g, sim_kval_err *err)
{
    struct sim_kval_data *d = kv->data;
    const kgpu *k = d->gpu[g];
    char rel[1024], path[4096];
    struct sim_err e;
    size_t skipped = 0;
    for (int t = 0; t < SIM_AIC_TABLE_COUNT; t++) {
        snprintf(rel, sizeof(rel), "%s/%s", k->aic_dir, sim_aic_table_name((sim_aic_table)t));
        if (!find_table(kv->kernels_dir, rel, path, sizeof(path))) {
            note(kv, "%s: no table (.csv or .csv.gz); skipped", rel);
            continue;
        }
        if ((t == SIM_AIC_MLA_CONTEXT || t == SIM_AIC_MLA_GEN) && !d->has_mla) {
            /* The module tables time DeepSeek-V3's attention: its shapes come from its config. */
            sim_status st = load_model(d->data_dir, "deepseek-v3", &d->mla, &e);
            if (st != SIM_OK)
                return fail(err, SIM_KVAL_FAULT_INPUT, st, "%s", e.msg);
            d->has_mla = 1;
        }
        size_t before = d->set.n;
        sim_status st = sim_kset_load_aic(path, (sim_aic_table)t, k->aic_device, k->attn_kernel, g,
                                          &d->set, &skipped, &e);
        if (st != SIM_OK)
            return fail(err, SIM_KVAL_FAULT_INPUT, st, WHO ": %s", e.msg);
        note(kv, "%s: %zu kernel samples, %zu rows outside the filters",
             path + strlen(kv->kernels_dir) + 1, d->set.n - before, skipped);
        if (t == SIM_AIC_MOE && skipped)
            note(kv,
                 "%s: rows outside the filters are the quantized fused-MoE kernels (Marlin "
                 "int4_wo, fp8_block, nvfp4, w4a16_mxfp4) and expert parallel > 1: not modelled",
                 rel);
    }
    return SIM_OK;
}

/* The vidur mlp.csv of one model folder (vidur/compute/<gpu>/<org>/<model>) of GPU g. */
static sim_status load_vidur_mlp(sim_kval *kv, int g, const char *org, const char *model,
                                 sim_kval_err *err)
{
    struct sim_kval_data *d = kv->data;
    char rel[1024], path[4096];
    snprintf(rel, sizeof(rel), "vidur/compute/%s/%s/%s/mlp.csv", d->gpu[g]->vidur_gpu, org, model);
    snprintf(path, sizeof(path), "%s/%s", kv->kernels_dir, rel);
    if (!is_file(path))
        return SIM_OK;
    char id[256], mpath[4096];
    struct sim_err e;
    vidur_model_id(model, id, sizeof(id));
    if (sim_path_resolve(d->data_dir, "models", id, mpath, sizeof(mpath), &e) != SIM_OK ||
        !is_file(mpath)) {
        note(kv, "%s: no model config models/%s.json; skipped", rel, id);
        return SIM_OK;
    }
    sim_model m;
    sim_status st = sim_model_load(mpath, id, &m, &e);
    if (st != SIM_OK)
        return fail(err, SIM_KVAL_FAULT_INPUT, st, WHO ": %s", e.msg);
    size_t before = d->set.n, skipped = 0;
    st = sim_kset_load_vidur_mlp(path, &m, g, &d->set, &skipped, &e);
    if (st != SIM_OK)
        return fail(err, SIM_KVAL_FAULT_INPUT, st, WHO ": %s", e.msg);
    note(kv, "%s: %zu kernel samples (4 GEMMs per row, shapes of models/%s.json)", rel,
         d->set.n - before, id);
    return SIM_OK;
}

/* The vidur tables of GPU g: linear operators, one folder per model, then all-reduces. */
static sim_status load_vidur(sim_kval *kv, int g, sim_kval_err *err)
{
    struct sim_kval_data *d = kv->data;
    const kgpu *k = d->gpu[g];
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/vidur/compute/%s", kv->kernels_dir, k->vidur_gpu);
    int n_org = sim_path_list_dirs(dir, d->orgs, MAX_VIDUR_DIRS);
    if (n_org < 0)
        note(kv, "vidur/compute/%s: no folder; skipped", k->vidur_gpu);
    for (int o = 0; o < n_org; o++) {
        char odir[4096];
        snprintf(odir, sizeof(odir), "%s/%s", dir, d->orgs[o]);
        int n_model = sim_path_list_dirs(odir, d->models, MAX_VIDUR_DIRS);
        for (int i = 0; i < n_model; i++) {
            sim_status st = load_vidur_mlp(kv, g, d->orgs[o], d->models[i], err);
            if (st != SIM_OK)
                return st;
        }
    }

    char rel[1024], path[4096];
    struct sim_err e;
    snprintf(rel, sizeof(rel), "vidur/network/%s/all_reduce", k->vidur_net);
    if (!find_table(kv->kernels_dir, rel, path, sizeof(path))) {
        note(kv, "%s: no table; skipped", rel);
        return SIM_OK;
    }
    size_t before = d->set.n, skipped = 0;
    sim_status st = sim_kset_load_vidur_allreduce(path, g, &d->set, &skipped, &e);
    if (st != SIM_OK)
        return fail(err, SIM_KVAL_FAULT_INPUT, st, WHO ": %s", e.msg);
    note(kv, "%s: %zu kernel samples, %zu rows outside the filters (multi-node)",
         path + strlen(kv->kernels_dir) + 1, d->set.n - before, skipped);
    return SIM_OK;
}

/* The data folder and the table set: the V1-era tables when present, else aic and vidur. */
static sim_status resolve_tables(sim_kval *kv, const sim_kval_opts *o, sim_kval_err *err)
{
    if (o->kernels_dir)
        snprintf(kv->kernels_dir, sizeof(kv->kernels_dir), "%s", o->kernels_dir);
    else
        snprintf(kv->kernels_dir, sizeof(kv->kernels_dir), "%s/../shared/data/kernels",
                 o->data_dir);
    if (!is_dir(kv->kernels_dir))
        return fail(err, SIM_KVAL_FAULT_INPUT, SIM_EIO,
                    WHO ": kernel data folder '%s' not found (give --data DIR)", kv->kernels_dir);
    kv->tables = o->tables;
    if (!kv->tables) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/aic-vllm", kv->kernels_dir);
        kv->tables = is_dir(p) ? "aic-vllm" : "aic";
    }
    return SIM_OK;
}

/* The profiles of the speed-up check: H100, H200 and B200 (H100 is the reference). */
static const char *const su_gpus[SIM_KVAL_SU_N_GPU] = {"h100-sxm", "h200-sxm", "b200"};

const char *sim_kval_speedup_gpu(int g)
{
    return g >= 0 && g < SIM_KVAL_SU_N_GPU ? su_gpus[g] : NULL;
}

/* The profile names to load: o->hw, or the speed-up check's GPUs, or every GPU of the set. */
static sim_status hw_names(const sim_kval_opts *o, const kgpu *kgpus, int n_kgpu,
                           const char **names, int *n, sim_kval_err *err)
{
    if (o->n_hw < 0 || o->n_hw > SIM_KVAL_MAX_GPU)
        return fail(err, SIM_KVAL_FAULT_USAGE, SIM_EINVAL, WHO ": at most %d --hw",
                    SIM_KVAL_MAX_GPU);
    if (o->speedup) {
        /* The check compares H100, H200 and B200, in that order (H100 is the reference). */
        if (kgpus != kgpus_vllm)
            return fail(err, SIM_KVAL_FAULT_USAGE, SIM_EINVAL,
                        WHO ": --speedup needs the aic-vllm tables");
        if (o->n_hw != 0 && o->n_hw != SIM_KVAL_SU_N_GPU)
            return fail(err, SIM_KVAL_FAULT_USAGE, SIM_EINVAL,
                        WHO ": --speedup takes no --hw or exactly %d (profiles for %s, %s and %s, "
                            "in that order)",
                        SIM_KVAL_SU_N_GPU, su_gpus[0], su_gpus[1], su_gpus[2]);
    }
    *n = 0;
    if (o->n_hw > 0)
        for (int i = 0; i < o->n_hw; i++)
            names[(*n)++] = o->hw[i];
    else if (o->speedup)
        for (int g = 0; g < SIM_KVAL_SU_N_GPU; g++)
            names[(*n)++] = su_gpus[g];
    else
        for (int g = 0; g < n_kgpu; g++)
            names[(*n)++] = kgpus[g].hw_id;
    return SIM_OK;
}

/* The tables of profile i: its GPU's entry of kgpus, matched by the profile's id. */
static sim_status match_gpu(sim_kval *kv, int i, const kgpu *kgpus, int n_kgpu, sim_kval_err *err)
{
    int k = 0;
    while (k < n_kgpu && strcmp(kgpus[k].hw_id, kv->hw[i].id) != 0)
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
        return fail(err, SIM_KVAL_FAULT_INPUT, SIM_EINVAL,
                    WHO ": %s: no kernel tables for hardware '%s' (%s tables exist for %s)",
                    kv->hw_path[i], kv->hw[i].id, kv->tables, list);
    }
    sim_status st = SIM_OK;
    for (int j = 0; j < i; j++)
        if (kv->data->gpu[j] == &kgpus[k])
            st = fail(err, SIM_KVAL_FAULT_USAGE, SIM_EINVAL, WHO ": --hw: '%s' given twice",
                      kv->hw[i].id);
    kv->data->gpu[i] = &kgpus[k];
    kv->n_gpu = i + 1;
    return st;
}

/* Loads the profiles named (or every one with tables; for --speedup H100, H200, B200) and
 * matches each to its tables. */
static sim_status load_profiles(sim_kval *kv, const sim_kval_opts *o, sim_kval_err *err)
{
    const int vllm = strcmp(kv->tables, "aic-vllm") == 0;
    const kgpu *kgpus = vllm ? kgpus_vllm : kgpus_aic;
    const int n_kgpu = vllm ? N_KGPU_VLLM : N_KGPU_AIC;
    const char *names[SIM_KVAL_MAX_GPU];
    int n = 0;
    sim_status st = hw_names(o, kgpus, n_kgpu, names, &n, err);
    for (int i = 0; i < n && st == SIM_OK; i++) {
        struct sim_err e;
        st = sim_path_resolve(kv->data->data_dir, "hwprofiles", names[i], kv->hw_path[i],
                              sizeof(kv->hw_path[i]), &e);
        if (st == SIM_OK)
            st = sim_hw_load(kv->hw_path[i], &kv->hw[i], &e);
        if (st != SIM_OK)
            return fail(err, SIM_KVAL_FAULT_INPUT, st, "%s", e.msg);
        st = match_gpu(kv, i, kgpus, n_kgpu, err);
    }
    for (int g = 0; o->speedup && g < kv->n_gpu && st == SIM_OK; g++)
        if (strcmp(kv->hw[g].id, su_gpus[g]) != 0)
            st = fail(err, SIM_KVAL_FAULT_USAGE, SIM_EINVAL,
                      WHO ": --speedup: profile %d is '%s', expected '%s'", g + 1, kv->hw[g].id,
                      su_gpus[g]);
    return st;
}

sim_status sim_kval_open(sim_kval *kv, const sim_kval_opts *o, sim_kval_err *err)
{
    kv->gemm = o->gemm;
    free(kv->data->data_dir);
    kv->data->data_dir = strdup(o->data_dir);
    if (!kv->data->data_dir)
        return fail(err, SIM_KVAL_FAULT_INPUT, SIM_ENOMEM, WHO ": out of memory");
    sim_status st = resolve_tables(kv, o, err);
    if (st == SIM_OK)
        st = load_profiles(kv, o, err);
    for (int g = 0; g < kv->n_gpu && st == SIM_OK; g++) {
        st = load_aic(kv, g, err);
        if (st == SIM_OK && kv->data->gpu[g]->vidur_gpu)
            st = load_vidur(kv, g, err);
    }
    return st;
}

/* ---- predictions and the report's groups ---- */

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
    sim_run_cfg cfg = sim_run_cfg_plain(1, SIM_DTYPE_BF16);
    cfg.kv_dtype = s->kv_bytes < 2.0 ? SIM_DTYPE_FP8 : SIM_DTYPE_BF16;
    cfg.gemm = gm;
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
 * The uncalibrated roofline time of one sample, through the functions step.c uses.
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
    case SIM_KFAM_MOE_FP8:
    case SIM_KFAM_MOE_FP8_BLOCK:
    case SIM_KFAM_MOE_MXFP4:
    case SIM_KFAM_MOE_NVFP4: {
        sim_moe_shape sh;
        sim_moe_figs g;
        sim_ksample_moe_shape(s, &sh);
        sim_fused_moe_time(hw, s->moe_cls, &sh, &kt);
        sim_hw_moe_figs(hw, s->moe_cls, &g);
        *floor_s = kt.flops / g.peak_flops_per_s;
        *bytes = sh.touched * sh.weight_bytes;
        return kt.time_s;
    }
    case SIM_KFAM_ALLREDUCE:
    case SIM_KFAM_COUNT:
    default:
        return sim_allreduce_time_s(hw, s->n_gpus, s->bytes);
    }
}

/* Predicts every sample; samples faster than the datasheet peak allows are not
 * measurements of what their columns say (H200 context_attention_perf has many): dropped
 * and counted per source. */
static sim_status predict_samples(sim_kval *kv, sim_kval_err *err)
{
    struct sim_kval_data *d = kv->data;
    /* pred and meas hold the samples, then room for one group; scratch one group. */
    d->pred = malloc(2 * d->set.n * sizeof(double));
    d->meas = malloc(2 * d->set.n * sizeof(double));
    d->scratch = malloc(d->set.n * sizeof(double));
    d->flags = malloc(d->set.n + 1);
    if (!d->pred || !d->meas || !d->scratch || !d->flags)
        return fail(err, SIM_KVAL_FAULT_INPUT, SIM_ENOMEM, WHO ": out of memory");
    size_t kept = 0, n_fast[SIM_KVAL_MAX_GPU][SIM_KSRC_COUNT];
    memset(n_fast, 0, sizeof(n_fast));
    for (size_t i = 0; i < d->set.n; i++) {
        const sim_ksample *s = &d->set.v[i];
        const sim_hw *hw = &kv->hw[s->gpu];
        double floor_s, bytes;
        const double p = predict(hw, kv->gemm, &d->mla, s, &floor_s, &bytes);
        if (!isfinite(p) || !(p > 0.0))
            return fail(err, SIM_KVAL_FAULT_NUMERIC, SIM_ERANGE,
                        WHO ": %s line %lld: prediction %g s is not a positive number",
                        sim_ksrc_name(s->src), (long long)s->line, p);
        if (s->measured_s < floor_s) {
            n_fast[s->gpu][s->src]++;
            continue;
        }
        d->flags[kept] =
            (unsigned char)((bytes > hw->v[SIM_HWF_L2] ? FLAG_BEYOND_L2 : 0u) |
                            (sim_moe_fit_role(s, hw->v[SIM_HWF_L2]) ? FLAG_MOE_FIT : 0u));
        d->meas[kept] = s->measured_s;
        d->pred[kept] = p;
        d->set.v[kept++] = *s;
    }
    d->set.n = kept;
    for (int g = 0; g < kv->n_gpu; g++)
        for (int k = 0; k < SIM_KSRC_COUNT; k++)
            if (n_fast[g][k])
                note(kv, "%s %s: %zu samples faster than the datasheet peak left out", kv->hw[g].id,
                     sim_ksrc_name((sim_ksrc)k), n_fast[g][k]);
    return SIM_OK;
}

static int range_of(double tokens)
{
    for (int r = 0; r < SIM_KVAL_N_RANGE; r++)
        if (tokens <= ranges[r].hi)
            return r;
    return SIM_KVAL_N_RANGE - 1;
}

static int matches(const sim_ksample *s, int fam, int gpu, int range, int src)
{
    return (fam == SIM_KVAL_ALL || (int)sim_ksrc_family(s->src) == fam) &&
           (gpu == SIM_KVAL_ALL || s->gpu == gpu) && (src == SIM_KVAL_ALL || (int)s->src == src) &&
           (range < 0 || range_of(s->tokens) == range);
}

/*
 * Metrics of the samples matching every key of *g that is not SIM_KVAL_ALL into g->m and
 * g->bias_pct; returns 0 when none match. The group is gathered into the second halves of
 * pred and meas.
 */
static int group(const struct sim_kval_data *d, sim_kval_group *g)
{
    double *gp = d->pred + d->set.n, *gm = d->meas + d->set.n;
    size_t n = 0;
    double bias = 0.0;
    for (size_t i = 0; i < d->set.n; i++) {
        if (!matches(&d->set.v[i], g->family, g->gpu, g->range, g->source) ||
            (g->range == SIM_KVAL_BEYOND_L2 && !(d->flags[i] & FLAG_BEYOND_L2)) ||
            (g->range == SIM_KVAL_FIT_ROWS && !(d->flags[i] & FLAG_MOE_FIT)) ||
            (g->range == SIM_KVAL_HELD_OUT && (d->flags[i] & FLAG_MOE_FIT)))
            continue;
        gp[n] = d->pred[i];
        gm[n] = d->meas[i];
        bias += (gp[n] - gm[n]) / gm[n];
        n++;
    }
    if (n == 0 || sim_metrics_compute(gp, gm, n, d->scratch, &g->m) != SIM_OK)
        return 0;
    g->bias_pct = 100.0 * bias / (double)n;
    return 1;
}

/* Appends the group of these keys when it has samples; -1 when out of memory. */
static int add(struct sim_kval_data *d, sim_kval_section sec, int fam, int gpu, int range, int src)
{
    sim_kval_group g = {.section = sec, .family = fam, .gpu = gpu, .range = range, .source = src};
    if (!group(d, &g))
        return 0;
    if (d->n_groups == d->cap_groups) {
        size_t cap = d->cap_groups ? 2 * d->cap_groups : 256;
        sim_kval_group *v = realloc(d->groups, cap * sizeof(*v));
        if (!v)
            return -1;
        d->groups = v;
        d->cap_groups = cap;
    }
    d->groups[d->n_groups++] = g;
    return 0;
}

/* The report's groups, in its order (sim_kval_section). Returns -1 when out of memory. */
static int add_groups(struct sim_kval_data *d, int n_gpu)
{
    int rc = 0;
    for (int f = 0; f < SIM_KFAM_COUNT; f++) {
        for (int g = 0; g < n_gpu; g++)
            rc |= add(d, SIM_KVAL_SEC_FAMILY, f, g, SIM_KVAL_ALL, SIM_KVAL_ALL);
        if (n_gpu > 1)
            rc |= add(d, SIM_KVAL_SEC_FAMILY, f, SIM_KVAL_ALL, SIM_KVAL_ALL, SIM_KVAL_ALL);
    }
    static const sim_kfam l2_fams[] = {
        SIM_KFAM_GEMM,      SIM_KFAM_GEMM_FP8,    SIM_KFAM_GEMM_FP8_BLOCK,
        SIM_KFAM_GEMM_FP4,  SIM_KFAM_ATTN_DECODE, SIM_KFAM_ATTN_DECODE_FP8KV,
        SIM_KFAM_MOE,       SIM_KFAM_MOE_FP8,     SIM_KFAM_MOE_FP8_BLOCK,
        SIM_KFAM_MOE_MXFP4, SIM_KFAM_MOE_NVFP4};
    for (size_t i = 0; i < sizeof(l2_fams) / sizeof(l2_fams[0]); i++)
        for (int g = 0; g < n_gpu; g++)
            rc |= add(d, SIM_KVAL_SEC_BEYOND_L2, (int)l2_fams[i], g, SIM_KVAL_BEYOND_L2,
                      SIM_KVAL_ALL);
    static const sim_kfam moe_fams[] = {SIM_KFAM_MOE, SIM_KFAM_MOE_FP8, SIM_KFAM_MOE_FP8_BLOCK,
                                        SIM_KFAM_MOE_MXFP4, SIM_KFAM_MOE_NVFP4};
    for (size_t i = 0; i < sizeof(moe_fams) / sizeof(moe_fams[0]); i++)
        for (int g = 0; g < n_gpu; g++) {
            rc |=
                add(d, SIM_KVAL_SEC_MOE_FIT, (int)moe_fams[i], g, SIM_KVAL_FIT_ROWS, SIM_KVAL_ALL);
            rc |=
                add(d, SIM_KVAL_SEC_MOE_FIT, (int)moe_fams[i], g, SIM_KVAL_HELD_OUT, SIM_KVAL_ALL);
        }
    for (int f = 0; f < SIM_KFAM_COUNT; f++)
        for (int g = 0; g < n_gpu; g++)
            for (int r = 0; r < SIM_KVAL_N_RANGE; r++)
                rc |= add(d, SIM_KVAL_SEC_RANGE, f, g, r, SIM_KVAL_ALL);
    for (int s = 0; s < SIM_KSRC_COUNT; s++)
        for (int g = 0; g < n_gpu; g++)
            rc |=
                add(d, SIM_KVAL_SEC_SOURCE, (int)sim_ksrc_family((sim_ksrc)s), g, SIM_KVAL_ALL, s);
    for (int s = 0; s < SIM_KSRC_COUNT; s++)
        for (int g = 0; g < n_gpu; g++)
            for (int r = 0; r < SIM_KVAL_N_RANGE; r++)
                rc |= add(d, SIM_KVAL_SEC_SOURCE_RANGE, (int)sim_ksrc_family((sim_ksrc)s), g, r, s);
    return rc;
}

sim_status sim_kval_validate(sim_kval *kv, const sim_kval_group **groups, size_t *n_groups,
                             sim_kval_err *err)
{
    struct sim_kval_data *d = kv->data;
    *groups = NULL;
    *n_groups = 0;
    if (d->set.n == 0)
        return fail(err, SIM_KVAL_FAULT_INPUT, SIM_EINVAL, WHO ": no kernel tables under '%s'",
                    kv->kernels_dir);
    sim_status st = predict_samples(kv, err);
    if (st != SIM_OK)
        return st;
    if (add_groups(d, kv->n_gpu) != 0)
        return fail(err, SIM_KVAL_FAULT_INPUT, SIM_ENOMEM, WHO ": out of memory");
    *groups = d->groups;
    *n_groups = d->n_groups;
    return SIM_OK;
}

const char *sim_kval_family_name(int family)
{
    return family == SIM_KVAL_ALL ? "all" : sim_kfam_name((sim_kfam)family);
}

const char *sim_kval_range_name(int range)
{
    return range == SIM_KVAL_ALL                    ? "all"
           : range == SIM_KVAL_BEYOND_L2            ? "bytes>L2"
           : range == SIM_KVAL_FIT_ROWS             ? "fit"
           : range == SIM_KVAL_HELD_OUT             ? "held-out"
           : range >= 0 && range < SIM_KVAL_N_RANGE ? ranges[range].name
                                                    : "?";
}

const char *sim_kval_source_name(int source)
{
    return source == SIM_KVAL_ALL ? "all" : sim_ksrc_name((sim_ksrc)source);
}

/* ---- the GPU speed-up check of decode steps, measured tables against the step model ---- */

/*
 * Decode steps of the check (docs/validate-kernels.md, "GPU speed-ups"): each model at its TP,
 * batch sequences each attending SIM_KVAL_SU_KEYS keys (SIM_KVAL_SU_KEYS - 1 cached + the new
 * token, the tables' step = SIM_KVAL_SU_KEYS - 1 rows), bf16 weights and KV cache. H100 is
 * the reference.
 */
static const struct {
    const char *model;
    int tp;
} su_models[] = {{"llama-3.1-8b", 1}, {"llama-3.1-70b", 4}};
static const int64_t su_batch[] = {1, 8, 64};
#define SU_N_MODEL ((int)(sizeof(su_models) / sizeof(su_models[0])))
#define SU_N_BATCH ((int)(sizeof(su_batch) / sizeof(su_batch[0])))
_Static_assert(SU_N_MODEL *SU_N_BATCH *SIM_KVAL_SU_N_GPU <= SIM_KVAL_SU_MAX_ROWS,
               "SIM_KVAL_SU_MAX_ROWS covers every case");

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
static int su_case(const sim_kval *kv, int g, const sim_model *m, int tp, int64_t batch,
                   double meas[SIM_KVAL_CLASS_COUNT], double pred[SIM_KVAL_CLASS_COUNT],
                   int *interp, char *why, size_t cap)
{
    const sim_kset *set = &kv->data->set;
    const double L = (double)m->n_layers, d = (double)m->d_model, dh = (double)m->head_dim;
    const double hg = (double)m->n_heads / tp;
    const double kvg = m->n_kv_heads >= tp ? (double)m->n_kv_heads / tp : 1.0;
    const double b = (double)batch;
    const double gemms[4][2] = {{(hg + 2.0 * kvg) * dh, d}, /* QKV: n, k */
                                {d, hg * dh},               /* O */
                                {2.0 * (double)m->d_ff / tp, d},
                                {d, (double)m->d_ff / tp}};
    meas[SIM_KVAL_CLASS_GEMM] = meas[SIM_KVAL_CLASS_ATTN] = meas[SIM_KVAL_CLASS_AR] = 0.0;
    for (int i = 0; i < 4; i++) {
        const double t = gemm_meas(set, g, b, gemms[i][0], gemms[i][1], interp);
        if (t < 0.0) {
            snprintf(why, cap, "no gemm_perf rows around m %g, n %g, k %g", b, gemms[i][0],
                     gemms[i][1]);
            return -1;
        }
        meas[SIM_KVAL_CLASS_GEMM] += L * t;
    }
    const double ta = attn_meas(set, g, b, SIM_KVAL_SU_KEYS, hg, kvg, dh);
    if (ta < 0.0) {
        snprintf(why, cap, "no generation_attention_perf row for batch %g, %d keys, %g/%g heads", b,
                 SIM_KVAL_SU_KEYS, hg, kvg);
        return -1;
    }
    meas[SIM_KVAL_CLASS_ATTN] = L * ta;
    if (tp > 1) {
        const double tr = ar_meas(set, g, tp, b * d * 2.0, interp);
        if (tr < 0.0) {
            snprintf(why, cap, "no custom_allreduce_perf rows for %d GPUs", tp);
            return -1;
        }
        meas[SIM_KVAL_CLASS_AR] = (2.0 * L + 1.0) * tr;
    }
    sim_run_cfg cfg = sim_run_cfg_plain(tp, SIM_DTYPE_BF16);
    cfg.gemm = kv->gemm;
    sim_step st = {0};
    st.n_groups = 1;
    st.groups[0] = (sim_group){batch, 1, SIM_KVAL_SU_KEYS - 1, 1};
    sim_step_cost c;
    sim_step_cost_compute(m, &kv->hw[g], &cfg, &st, &c);
    pred[SIM_KVAL_CLASS_GEMM] = c.ops[SIM_OP_QKV].time_s + c.ops[SIM_OP_O_PROJ].time_s +
                                c.ops[SIM_OP_MLP_GATE_UP].time_s + c.ops[SIM_OP_MLP_DOWN].time_s;
    pred[SIM_KVAL_CLASS_ATTN] = c.ops[SIM_OP_ATTN_DECODE].time_s;
    pred[SIM_KVAL_CLASS_AR] = c.ops[SIM_OP_ALLREDUCE].time_s;
    return 0;
}

static double su_sum(const double v[SIM_KVAL_CLASS_COUNT])
{
    return v[SIM_KVAL_CLASS_GEMM] + v[SIM_KVAL_CLASS_ATTN] + v[SIM_KVAL_CLASS_AR];
}

/* The row of GPU g from its times and the reference's (GPU 0): sums, ratios, difference. */
static void su_row_fill(sim_kval_su_row *r, const sim_model *m, int tp, int64_t batch, int g,
                        const double meas[SIM_KVAL_CLASS_COUNT],
                        const double pred[SIM_KVAL_CLASS_COUNT],
                        const double meas0[SIM_KVAL_CLASS_COUNT],
                        const double pred0[SIM_KVAL_CLASS_COUNT])
{
    snprintf(r->model, sizeof(r->model), "%s", m->id);
    r->tp = tp;
    r->batch = batch;
    r->gpu = g;
    r->measured_s = su_sum(meas);
    r->predicted_s = su_sum(pred);
    r->measured_ratio = r->measured_s / su_sum(meas0);
    r->predicted_ratio = r->predicted_s / su_sum(pred0);
    r->diff_pct = 100.0 * (r->predicted_ratio / r->measured_ratio - 1.0);
    for (int c = 0; c < SIM_KVAL_CLASS_COUNT; c++) {
        r->meas_s[c] = meas[c];
        r->pred_s[c] = pred[c];
        r->ref_meas_s[c] = meas0[c];
        r->ref_pred_s[c] = pred0[c];
        r->class_measured_ratio[c] = meas0[c] > 0.0 ? meas[c] / meas0[c] : 0.0;
        r->class_predicted_ratio[c] = pred0[c] > 0.0 ? pred[c] / pred0[c] : 0.0;
    }
}

sim_status sim_kval_speedup(const sim_kval *kv, sim_kval_su_result *out, sim_kval_err *err)
{
    memset(out, 0, sizeof(*out));
    for (int mi = 0; mi < SU_N_MODEL; mi++) {
        sim_model m;
        struct sim_err e;
        sim_status st = load_model(kv->data->data_dir, su_models[mi].model, &m, &e);
        if (st != SIM_OK)
            return fail(err, SIM_KVAL_FAULT_INPUT, st, "%s", e.msg);
        const int tp = su_models[mi].tp;
        for (int bi = 0; bi < SU_N_BATCH; bi++) {
            double meas[SIM_KVAL_SU_N_GPU][SIM_KVAL_CLASS_COUNT];
            double pred[SIM_KVAL_SU_N_GPU][SIM_KVAL_CLASS_COUNT];
            char why[256];
            for (int g = 0; g < SIM_KVAL_SU_N_GPU; g++)
                if (su_case(kv, g, &m, tp, su_batch[bi], meas[g], pred[g], &out->interpolated, why,
                            sizeof(why)) != 0)
                    return fail(err, SIM_KVAL_FAULT_INPUT, SIM_EINVAL, WHO " --speedup: %s: %s",
                                kv->hw[g].id, why);
            for (int g = 0; g < SIM_KVAL_SU_N_GPU; g++) {
                sim_kval_su_row *r = &out->rows[out->n_rows];
                su_row_fill(r, &m, tp, su_batch[bi], g, meas[g], pred[g], meas[0], pred[0]);
                if (!isfinite(r->diff_pct))
                    return fail(err, SIM_KVAL_FAULT_NUMERIC, SIM_ERANGE,
                                WHO " --speedup: %s: ratio is not finite", kv->hw[g].id);
                if (g > 0) {
                    out->compared++;
                    out->within_10pct += fabs(r->diff_pct) <= 10.0;
                }
                out->n_rows++;
            }
        }
    }
    return SIM_OK;
}
