/* kernel_tables.c - aic and vidur kernel tables to kernel samples (see kernel_tables.h). */
#include "kernel_tables.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "kernels.h"

/* Bounds of the strict field checks: generous, but they reject garbage and overflow. */
#define MAX_DIM        (INT64_C(1) << 31) /* GEMM dimensions, tokens, sequence lengths */
#define MAX_HEADS      INT64_C(4096)
#define MAX_GPUS       INT64_C(1024)
#define MAX_LATENCY_MS 1e7 /* about three hours: no single kernel takes longer */
#define MS_TO_S        1e-3
#define MAX_EXPERTS    INT64_C(4096) /* 8x the largest routed-expert count in use (512) */

static const struct {
    const char *name;
    sim_kfam fam;
} ksrc[] = {
#define XX(e, name, fam) {name, SIM_KFAM_##fam},
    SIM_KSRC_MAP(XX)
#undef XX
};

static const char *const kfam[] = {
#define XX(e, name) name,
    SIM_KFAM_MAP(XX)
#undef XX
};

static const char *const aic_names[SIM_AIC_TABLE_COUNT] = {"gemm_perf",
                                                           "generation_attention_perf",
                                                           "context_attention_perf",
                                                           "custom_allreduce_perf",
                                                           "mla_context_module_perf",
                                                           "mla_generation_module_perf",
                                                           "moe_perf"};

/* Attention kernels vLLM runs by default: FlashAttention 3 (Hopper) and 2 (Ampere). */
static const char *const attn_kernels[] = {"vllm_flash_attn_fa3", "vllm_flash_attn"};

const char *sim_kfam_name(sim_kfam f) { return f >= 0 && f < SIM_KFAM_COUNT ? kfam[f] : "?"; }

const char *sim_ksrc_name(sim_ksrc s) { return s >= 0 && s < SIM_KSRC_COUNT ? ksrc[s].name : "?"; }

sim_kfam sim_ksrc_family(sim_ksrc s) { return ksrc[s].fam; }

const char *sim_aic_table_name(sim_aic_table t)
{
    return t >= 0 && t < SIM_AIC_TABLE_COUNT ? aic_names[t] : "?";
}

void sim_kset_init(sim_kset *set)
{
    set->v = NULL;
    set->n = set->cap = 0;
}

void sim_kset_free(sim_kset *set)
{
    free(set->v);
    sim_kset_init(set);
}

/* Appends a copy of *s; SIM_ENOMEM when the array cannot grow. */
static sim_status push(sim_kset *set, const sim_ksample *s, struct sim_err *err)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 1024;
        sim_ksample *v = realloc(set->v, cap * sizeof(*v));
        if (!v) {
            sim_errf(err, "out of memory (%zu kernel samples)", set->n);
            return SIM_ENOMEM;
        }
        set->v = v;
        set->cap = cap;
    }
    set->v[set->n++] = *s;
    return SIM_OK;
}

/*
 * Opens a table and looks up every name of cols[] (NULL-terminated) into idx[]; a
 * missing column is an error. On success the caller frees *out with sim_csv_free; on
 * failure *out is NULL.
 */
static sim_status open_table(const char *path, const char *const *cols, int *idx, sim_csv **out,
                             struct sim_err *err)
{
    sim_status st = sim_csv_open(path, out, err);
    for (int i = 0; st == SIM_OK && cols[i]; i++)
        st = sim_csv_require(*out, cols[i], &idx[i], err);
    if (st != SIM_OK) {
        sim_csv_free(*out);
        *out = NULL;
    }
    return st;
}

/* A sample of the current row: src, GPU and dtype set, every other figure 0. */
static sim_ksample row_sample(const sim_csv *c, sim_ksrc src, int gpu, sim_dtype dtype)
{
    sim_ksample s;
    memset(&s, 0, sizeof(s));
    s.src = src;
    s.gpu = gpu;
    s.dtype = dtype;
    s.line = sim_csv_line(c);
    return s;
}

static int field_is(const sim_csv *c, int col, const char *want)
{
    return strcmp(sim_csv_field(c, col), want) == 0;
}

/* An integer column of a row: its index, bounds and destination. */
typedef struct int_col {
    int col;
    int64_t min, max;
    int64_t *out;
} int_col;

/* Reads the n integer columns of f in order; stops at the first failure (its status, with
 * "<path>:<line>: <column>: ..." in err). */
static sim_status read_ints(const sim_csv *c, const int_col *f, size_t n, struct sim_err *err)
{
    sim_status st = SIM_OK;
    for (size_t i = 0; i < n && st == SIM_OK; i++)
        st = sim_csv_i64(c, f[i].col, f[i].min, f[i].max, f[i].out, err);
    return st;
}

/* A latency column, milliseconds: positive and at most MAX_LATENCY_MS. */
static sim_status read_latency(const sim_csv *c, int col, double *ms, struct sim_err *err)
{
    return sim_csv_double(c, col, 0x1p-60, MAX_LATENCY_MS, ms, err);
}

/* read_ints, then the latency column lat_col into *lat_ms: the columns of most rows. */
static sim_status read_row(const sim_csv *c, const int_col *f, size_t n, int lat_col,
                           double *lat_ms, struct sim_err *err)
{
    sim_status st = read_ints(c, f, n, err);
    return st == SIM_OK ? read_latency(c, lat_col, lat_ms, err) : st;
}

static int is_attn_kernel(const char *s)
{
    for (size_t i = 0; i < sizeof(attn_kernels) / sizeof(attn_kernels[0]); i++)
        if (strcmp(s, attn_kernels[i]) == 0)
            return 1;
    return 0;
}

enum { G_DEV, G_DTYPE, G_M, G_N, G_K, G_LAT, G_NCOL };
static const char *const gemm_cols[] = {"device", "gemm_dtype", "m", "n", "k", "latency", NULL};

/* gemm_perf: bf16, per-tensor fp8, block fp8 and NVFP4 rows. */
static sim_status gemm_row(const sim_csv *c, const int *col, sim_ksample *s, int *keep,
                           struct sim_err *err)
{
    int64_t m, n, k;
    double lat;
    *keep = 1;
    if (field_is(c, col[G_DTYPE], "bfloat16")) {
        s->src = SIM_KSRC_AIC_GEMM;
        s->dtype = SIM_DTYPE_BF16;
        s->gemm_kind = SIM_GEMM_KIND_16;
    } else if (field_is(c, col[G_DTYPE], "fp8")) {
        s->src = SIM_KSRC_AIC_GEMM_FP8;
        s->dtype = SIM_DTYPE_FP8;
        s->gemm_kind = SIM_GEMM_KIND_FP8;
    } else if (field_is(c, col[G_DTYPE], "fp8_block")) {
        s->src = SIM_KSRC_AIC_GEMM_FP8_BLOCK;
        s->dtype = SIM_DTYPE_FP8;
        s->gemm_kind = SIM_GEMM_KIND_FP8_BLOCK;
    } else if (field_is(c, col[G_DTYPE], "nvfp4")) {
        s->src = SIM_KSRC_AIC_GEMM_FP4;
        s->dtype = SIM_DTYPE_FP8; /* the closest storage type; the kind says fp4 */
        s->gemm_kind = SIM_GEMM_KIND_FP4;
    } else {
        *keep = 0;
        return SIM_OK;
    }
    const int_col f[] = {
        {col[G_M], 1, MAX_DIM, &m}, {col[G_N], 1, MAX_DIM, &n}, {col[G_K], 1, MAX_DIM, &k}};
    sim_status st = read_row(c, f, 3, col[G_LAT], &lat, err);
    if (st != SIM_OK)
        return st;
    s->m = (double)m;
    s->n = (double)n;
    s->k = (double)k;
    s->tokens = s->m;
    s->measured_s = lat * MS_TO_S;
    return SIM_OK;
}

enum { A_DEV, A_SRC, A_B, A_ISL, A_H, A_KV, A_HD, A_BEAM, A_ADT, A_KVDT, A_STEP, A_LAT, A_NCOL };
static const char *const attn_cols[] = {
    "device",     "kernel_source",       "batch_size", "isl",
    "num_heads",  "num_key_value_heads", "head_dim",   "beam_width",
    "attn_dtype", "kv_cache_dtype",      "step",       "latency",
    NULL};

/*
 * generation_attention_perf (decode: isl 1, step = past KV length, so ctx = step + 1 keys
 * with the new token's) and context_attention_perf (prefill: step 0, isl prompt tokens).
 * window_size is absent from the A100 tables; where present it must be 0.
 */
static sim_status attn_row(const sim_csv *c, const int *col, int win_col, int decode,
                           const char *attn_kernel, sim_ksample *s, int *keep, struct sim_err *err)
{
    int64_t b, isl, h, kv, hd, beam, step, win = 0;
    double lat;
    *keep = 0;
    const int kernel_ok = attn_kernel ? field_is(c, col[A_SRC], attn_kernel)
                                      : is_attn_kernel(sim_csv_field(c, col[A_SRC]));
    const int kv_fp8 = field_is(c, col[A_KVDT], "fp8");
    if (!kernel_ok || !field_is(c, col[A_ADT], "bfloat16") ||
        !(kv_fp8 || field_is(c, col[A_KVDT], "bfloat16")))
        return SIM_OK;
    const int_col f[] = {{col[A_B], 1, MAX_DIM, &b},       {col[A_ISL], 1, MAX_DIM, &isl},
                         {col[A_H], 1, MAX_HEADS, &h},     {col[A_KV], 1, MAX_HEADS, &kv},
                         {col[A_HD], 1, MAX_HEADS, &hd},   {col[A_BEAM], 1, MAX_HEADS, &beam},
                         {col[A_STEP], 0, MAX_DIM, &step}, {win_col, 0, MAX_DIM, &win}};
    /* window_size, the last, only where the table has it. */
    sim_status st = read_row(c, f, win_col >= 0 ? 8 : 7, col[A_LAT], &lat, err);
    if (st != SIM_OK)
        return st;
    if (beam != 1 || win != 0 || (decode ? isl != 1 : step != 0))
        return SIM_OK;
    *keep = 1;
    s->src = decode ? (kv_fp8 ? SIM_KSRC_AIC_DECODE_FP8KV : SIM_KSRC_AIC_DECODE)
                    : (kv_fp8 ? SIM_KSRC_AIC_PREFILL_FP8KV : SIM_KSRC_AIC_PREFILL);
    s->kv_bytes = kv_fp8 ? 1.0 : 2.0;
    s->batch = (double)b;
    s->ctx = decode ? (double)(step + 1) : (double)isl;
    s->heads = (double)h;
    s->kv_heads = (double)kv;
    s->head_dim = (double)hd;
    s->tokens = decode ? s->batch : s->batch * (double)isl;
    s->measured_s = lat * MS_TO_S;
    return SIM_OK;
}

enum { R_DEV, R_SRC, R_DTYPE, R_N, R_SIZE, R_LAT, R_NCOL };
static const char *const ar_cols[] = {
    "device", "kernel_source", "allreduce_dtype", "num_gpus", "message_size", "latency", NULL};

/* custom_allreduce_perf: the CUDA-graph variant (what vLLM replays), bf16 elements. */
static sim_status ar_row(const sim_csv *c, const int *col, sim_ksample *s, int *keep,
                         struct sim_err *err)
{
    int64_t n, elems;
    double lat;
    *keep = 0;
    if (!field_is(c, col[R_SRC], "vLLM_custom_graph") || !field_is(c, col[R_DTYPE], "bfloat16"))
        return SIM_OK;
    const int_col f[] = {{col[R_N], 2, MAX_GPUS, &n}, {col[R_SIZE], 1, MAX_DIM * 16, &elems}};
    sim_status st = read_row(c, f, 2, col[R_LAT], &lat, err);
    if (st != SIM_OK)
        return st;
    *keep = 1;
    s->src = SIM_KSRC_AIC_CUSTOM_AR;
    s->n_gpus = (int)n;
    s->bytes = 2.0 * (double)elems;
    s->tokens = s->bytes / (2.0 * SIM_KTAB_AR_HIDDEN);
    s->measured_s = lat * MS_TO_S;
    return SIM_OK;
}

enum { M_DEV, M_MODEL, M_TP, M_MDT, M_KVDT, M_GEMM, M_H, M_B, M_ISL, M_STEP, M_LAT, M_NCOL };
static const char *const mla_cols[] = {
    "device",    "model",      "tp_size", "mla_dtype", "kv_cache_dtype", "gemm_type",
    "num_heads", "batch_size", "isl",     "step",      "latency",        NULL};

/*
 * mla_context_module_perf (prefill: batch prompts of isl tokens, step 0) and
 * mla_generation_module_perf (decode: isl 1, step = keys per sequence, step - 1 of them cached;
 * the aic collector's seq_len). Only DeepSeek-V3 at TP 1 with 16-bit attention math.
 */
static sim_status mla_row(const sim_csv *c, const int *col, int decode, sim_ksample *s, int *keep,
                          struct sim_err *err)
{
    int64_t tp, h, b, isl, step;
    double lat;
    *keep = 0;
    const int kv_fp8 = field_is(c, col[M_KVDT], "fp8");
    const int g_fp8 = field_is(c, col[M_GEMM], "fp8_block");
    if (!field_is(c, col[M_MODEL], "deepseek-ai/DeepSeek-V3") ||
        !field_is(c, col[M_MDT], "bfloat16") || !(kv_fp8 || field_is(c, col[M_KVDT], "bfloat16")) ||
        !(g_fp8 || field_is(c, col[M_GEMM], "bfloat16")))
        return SIM_OK;
    const int_col f[] = {{col[M_TP], 1, MAX_GPUS, &tp},
                         {col[M_H], 1, MAX_HEADS, &h},
                         {col[M_B], 1, MAX_DIM, &b},
                         {col[M_ISL], 1, MAX_DIM, &isl},
                         {col[M_STEP], 0, MAX_DIM, &step}};
    sim_status st = read_row(c, f, 5, col[M_LAT], &lat, err);
    if (st != SIM_OK)
        return st;
    if (tp != 1 || (decode ? isl != 1 || step < 1 : step != 0))
        return SIM_OK;
    *keep = 1;
    s->src = decode ? SIM_KSRC_AIC_MLA_GEN : SIM_KSRC_AIC_MLA_CONTEXT;
    s->dtype = g_fp8 ? SIM_DTYPE_FP8 : SIM_DTYPE_BF16;
    s->kv_bytes = kv_fp8 ? 1.0 : 2.0;
    s->batch = (double)b;
    s->ctx = decode ? (double)step : (double)isl;
    s->heads = (double)h;
    s->tokens = decode ? s->batch : s->batch * (double)isl;
    s->measured_s = lat * MS_TO_S;
    return SIM_OK;
}

/* The fused-MoE kernels taken (kernel_tables.h), vLLM 0.14-0.19 and 0.24 names: the Triton
 * fused_experts path under any of its names, its class from moe_dtype; and two kernels of
 * their own class. Not taken: 0.19's "vllm_mxfp4_moe" rows, which time whichever MXFP4
 * backend vLLM auto-selected (Marlin, triton_kernels, FlashInfer) without naming it, so they
 * describe no one kernel; 0.24 names the Marlin one. */
static const char *const moe_triton[] = {
    "vllm_fused_moe", "vllm_unquantizedfusedmoe_triton_tritonexperts",
    "vllm_modeloptfp8moe_triton_tritonexperts", "vllm_fp8moe_triton_tritonexperts"};
static const struct {
    const char *kernel, *dtype; /* kernel NULL: any of moe_triton */
    sim_moe_class cls;
} moe_kernels[] = {
    {NULL, "bfloat16", SIM_MOE_CLASS_16},
    {NULL, "fp8", SIM_MOE_CLASS_FP8},
    {NULL, "fp8_block", SIM_MOE_CLASS_FP8_BLOCK},
    {"vllm_gptossmxfp4moe_marlin_marlinexperts", "w4a16_mxfp4", SIM_MOE_CLASS_MXFP4},
    {"vllm_flashinfer_trtllm_moe_fp4", "nvfp4", SIM_MOE_CLASS_NVFP4},
};

enum { E_DEV, E_SRC, E_DTYPE, E_TOK, E_D, E_F, E_TOPK, E_E, E_TP, E_EP, E_DIST, E_LAT, E_NCOL };
static const char *const moe_cols[] = {
    "device",       "kernel_source", "moe_dtype",   "num_tokens",  "hidden_size",
    "inter_size",   "topk",          "num_experts", "moe_tp_size", "moe_ep_size",
    "distribution", "latency",       NULL};

int64_t sim_moe_routing_counts(int64_t tokens, int64_t n_experts, int64_t topk, double alpha,
                               double block_m, int64_t *counts, double *weights,
                               double *rows_padded)
{
    const int64_t E = n_experts, rows = tokens * topk;
    for (int64_t e = 0; e < E; e++)
        counts[e] = 0;
    if (alpha <= 0.0) {
        const int64_t stride = (E + topk - 1) / topk;
        if (tokens < stride) {
            for (int64_t t = 0; t < tokens; t++)
                for (int64_t j = 0; j < topk; j++)
                    counts[((t * stride) / tokens + j * stride) % E]++;
        } else {
            /* Slot j sends tokens 0 .. T-1 to j s, j s + 1, ... mod E: T / E full turns and
             * the first T mod E experts once more. */
            for (int64_t j = 0; j < topk; j++) {
                for (int64_t e = 0; e < E; e++)
                    counts[e] += tokens / E;
                for (int64_t i = 0; i < tokens % E; i++)
                    counts[(j * stride + i) % E]++;
            }
        }
    } else {
        /* Weights at the power law's quantiles, then rows in proportion. */
        const double lo = rows > E ? 1.0 : 0.01, hi = rows > E ? 0.8 * (double)tokens : 2.0;
        const double a = 1.0 - alpha, la = pow(lo, a), ha = pow(hi, a);
        double sum = 0.0;
        for (int64_t e = 0; e < E; e++) {
            weights[e] = pow((ha - la) * ((double)e + 0.5) / (double)E + la, 1.0 / a);
            sum += weights[e];
        }
        int64_t total = 0;
        for (int64_t e = 0; e < E; e++) {
            counts[e] = (int64_t)nearbyint(weights[e] / sum * (double)rows);
            total += counts[e];
        }
        int64_t delta = rows - total;
        /* counts[] is increasing in e (quantiles ascend), so the largest is the last. */
        for (int64_t i = 0; delta > 0; i++, delta--)
            counts[E - 1 - i % E]++;
        /* Taken from the smallest in turn; a zero count gives the row up from the largest. */
        for (int64_t i = 0; delta < 0; i++, delta++)
            counts[counts[i % E] > 0 ? i % E : E - 1]--;
    }
    int64_t touched = 0;
    double padded = 0.0;
    for (int64_t e = 0; e < E; e++)
        if (counts[e] > 0) {
            touched++;
            padded += ceil((double)counts[e] / block_m) * block_m;
        }
    *rows_padded = padded;
    return touched;
}

int sim_moe_fit_role(const sim_ksample *s, double l2_bytes)
{
    const sim_kfam f = sim_ksrc_family(s->src);
    if (f != SIM_KFAM_MOE && f != SIM_KFAM_MOE_FP8 && f != SIM_KFAM_MOE_FP8_BLOCK &&
        f != SIM_KFAM_MOE_MXFP4 && f != SIM_KFAM_MOE_NVFP4)
        return 0;
    sim_moe_shape sh;
    sim_ksample_moe_shape(s, &sh);
    if (s->m <= 16.0 && sh.touched * sh.weight_bytes >= 2.0 * l2_bytes)
        return 1;
    return s->m >= 4096.0 ? 2 : 0;
}

void sim_ksample_moe_shape(const sim_ksample *s, sim_moe_shape *out)
{
    *out = (sim_moe_shape){
        .tokens = s->m,
        .rows = s->m * s->topk,
        .rows_padded = s->rows_padded,
        .touched = s->touched,
        .d = s->k,
        .f = s->n,
        .weight_bytes = 3.0 * s->k * s->n * sim_moe_class_weight_bytes(s->moe_cls),
    };
}

/* moe_perf: the Triton fused_experts rows in bf16 and per-tensor fp8, expert parallel 1. */
static sim_status moe_row(const sim_csv *c, const int *col, int64_t *counts, double *weights,
                          sim_ksample *s, int *keep, struct sim_err *err)
{
    int64_t tok, d, f, k, e, tp, ep;
    double lat, alpha = 0.0;
    *keep = 0;
    int triton = 0, cls = -1;
    for (size_t i = 0; i < sizeof(moe_triton) / sizeof(moe_triton[0]); i++)
        triton |= field_is(c, col[E_SRC], moe_triton[i]);
    for (size_t i = 0; i < sizeof(moe_kernels) / sizeof(moe_kernels[0]) && cls < 0; i++)
        if ((moe_kernels[i].kernel ? field_is(c, col[E_SRC], moe_kernels[i].kernel) : triton) &&
            field_is(c, col[E_DTYPE], moe_kernels[i].dtype))
            cls = (int)moe_kernels[i].cls;
    if (cls < 0)
        return SIM_OK;
    const int_col shape[] = {{col[E_TOK], 1, MAX_DIM, &tok},
                             {col[E_D], 1, MAX_DIM, &d},
                             {col[E_F], 1, MAX_DIM, &f},
                             {col[E_E], 1, MAX_EXPERTS, &e}};
    sim_status st = read_ints(c, shape, 4, err);
    if (st == SIM_OK) {
        /* top-k is bounded by the expert count just read. */
        const int_col par[] = {
            {col[E_TOPK], 1, e, &k}, {col[E_TP], 1, MAX_GPUS, &tp}, {col[E_EP], 1, MAX_GPUS, &ep}};
        st = read_row(c, par, 3, col[E_LAT], &lat, err);
    }
    if (st != SIM_OK)
        return st;
    const char *dist = sim_csv_field(c, col[E_DIST]);
    if (strncmp(dist, "power_law_", 10) == 0) {
        char *end = NULL;
        alpha = strtod(dist + 10, &end);
        if (end == dist + 10 || *end != '\0' || !(alpha > 1.0 && alpha < 100.0)) {
            sim_errf(err,
                     "%s:%lld: distribution: expected balanced or power_law_<alpha> with "
                     "alpha in (1, 100), got '%s'",
                     sim_csv_path(c), (long long)sim_csv_line(c), dist);
            return SIM_EPARSE;
        }
    } else if (strcmp(dist, "balanced") != 0) {
        sim_errf(err, "%s:%lld: distribution: expected balanced or power_law_<alpha>, got '%s'",
                 sim_csv_path(c), (long long)sim_csv_line(c), dist);
        return SIM_EPARSE;
    }
    if (ep != 1 || f % tp != 0)
        return SIM_OK; /* expert parallelism is not modelled */
    *keep = 1;
    static const sim_ksrc srcs[SIM_MOE_CLASS_COUNT][2] = {
        [SIM_MOE_CLASS_16] = {SIM_KSRC_AIC_MOE_BAL, SIM_KSRC_AIC_MOE_PL},
        [SIM_MOE_CLASS_FP8] = {SIM_KSRC_AIC_MOE_FP8_BAL, SIM_KSRC_AIC_MOE_FP8_PL},
        [SIM_MOE_CLASS_FP8_BLOCK] = {SIM_KSRC_AIC_MOE_FP8B_BAL, SIM_KSRC_AIC_MOE_FP8B_PL},
        [SIM_MOE_CLASS_MXFP4] = {SIM_KSRC_AIC_MOE_MXFP4_BAL, SIM_KSRC_AIC_MOE_MXFP4_PL},
        [SIM_MOE_CLASS_NVFP4] = {SIM_KSRC_AIC_MOE_NVFP4_BAL, SIM_KSRC_AIC_MOE_NVFP4_PL},
    };
    s->src = srcs[cls][alpha > 0.0];
    s->moe_cls = (sim_moe_class)cls;
    s->dtype = cls == SIM_MOE_CLASS_16 ? SIM_DTYPE_BF16 : SIM_DTYPE_FP8;
    s->m = (double)tok;
    s->k = (double)d;
    s->n = (double)(f / tp);
    s->n_gpus = (int)tp;
    s->topk = (double)k;
    s->n_experts = (double)e;
    s->alpha = alpha;
    s->touched =
        (double)sim_moe_routing_counts(tok, e, k, alpha, sim_moe_block_m((double)tok, (double)e),
                                       counts, weights, &s->rows_padded);
    s->tokens = s->m;
    s->measured_s = lat * MS_TO_S;
    return SIM_OK;
}

sim_status sim_kset_load_aic(const char *path, sim_aic_table t, const char *device,
                             const char *attn_kernel, int gpu, sim_kset *set, size_t *n_skipped,
                             struct sim_err *err)
{
    sim_csv *c = NULL;
    int col[(int)A_NCOL > (int)M_NCOL ? ((int)A_NCOL > (int)E_NCOL ? (int)A_NCOL : (int)E_NCOL)
                                      : ((int)M_NCOL > (int)E_NCOL ? (int)M_NCOL : (int)E_NCOL)];
    int64_t *counts = NULL;
    double *weights = NULL;
    *n_skipped = 0;
    const int mla = t == SIM_AIC_MLA_CONTEXT || t == SIM_AIC_MLA_GEN;
    const char *const *cols = t == SIM_AIC_GEMM        ? gemm_cols
                              : t == SIM_AIC_CUSTOM_AR ? ar_cols
                              : mla                    ? mla_cols
                              : t == SIM_AIC_MOE       ? moe_cols
                                                       : attn_cols;
    sim_status st = open_table(path, cols, col, &c, err);
    if (st != SIM_OK)
        return st;
    if (t == SIM_AIC_MOE) {
        counts = malloc((size_t)MAX_EXPERTS * sizeof(*counts));
        weights = malloc((size_t)MAX_EXPERTS * sizeof(*weights));
        if (!counts || !weights) {
            free(counts);
            free(weights);
            sim_csv_free(c);
            return sim_enomem(err, path);
        }
    }
    const int win_col = sim_csv_column(c, "window_size");
    for (;;) {
        int has_row = 0, keep = 0;
        st = sim_csv_next(c, &has_row, err);
        if (st != SIM_OK || !has_row)
            break;
        /* The device column comes first in every aic table (index 0 of each column list). */
        if (!field_is(c, col[0], device)) {
            sim_errf(err, "%s:%lld: device: table of another GPU (expected '%s', got '%s')", path,
                     (long long)sim_csv_line(c), device, sim_csv_field(c, col[0]));
            st = SIM_EPARSE;
            break;
        }
        /* The row function sets src. */
        sim_ksample s = row_sample(c, SIM_KSRC_AIC_GEMM, gpu, SIM_DTYPE_BF16);
        switch (t) {
        case SIM_AIC_GEMM:
            st = gemm_row(c, col, &s, &keep, err);
            break;
        case SIM_AIC_DECODE:
        case SIM_AIC_PREFILL:
            st = attn_row(c, col, win_col, t == SIM_AIC_DECODE, attn_kernel, &s, &keep, err);
            break;
        case SIM_AIC_MLA_CONTEXT:
        case SIM_AIC_MLA_GEN:
            st = mla_row(c, col, t == SIM_AIC_MLA_GEN, &s, &keep, err);
            break;
        case SIM_AIC_MOE:
            st = moe_row(c, col, counts, weights, &s, &keep, err);
            break;
        case SIM_AIC_CUSTOM_AR:
        default:
            st = ar_row(c, col, &s, &keep, err);
            break;
        }
        if (st == SIM_OK && keep)
            st = push(set, &s, err);
        if (st != SIM_OK)
            break;
        *n_skipped += !keep;
    }
    free(counts);
    free(weights);
    sim_csv_free(c);
    return st;
}

enum { V_H, V_KV, V_D, V_F, V_GATED, V_TOK, V_TP, V_QKV, V_O, V_UP, V_DOWN, V_NCOL };
static const char *const vidur_cols[] = {"n_head",
                                         "n_kv_head",
                                         "n_embd",
                                         "n_expanded_embd",
                                         "use_gated_mlp",
                                         "num_tokens",
                                         "num_tensor_parallel_workers",
                                         "time_stats.attn_pre_proj.median",
                                         "time_stats.attn_post_proj.median",
                                         "time_stats.mlp_up_proj.median",
                                         "time_stats.mlp_down_proj.median",
                                         NULL};

/* The row's architecture column must equal the config's figure. */
static sim_status check_arch(const sim_csv *c, int col, int64_t want, const char *key,
                             struct sim_err *err)
{
    int64_t v;
    sim_status st = sim_csv_i64(c, col, 1, MAX_DIM, &v, err);
    if (st == SIM_OK && v != want) {
        sim_errf(err, "%s:%lld: %s: %lld does not match the model config (%s = %lld)",
                 sim_csv_path(c), (long long)sim_csv_line(c), sim_csv_column_name(c, col),
                 (long long)v, key, (long long)want);
        st = SIM_EINVAL;
    }
    return st;
}

sim_status sim_kset_load_vidur_mlp(const char *path, const sim_model *m, int gpu, sim_kset *set,
                                   size_t *n_skipped, struct sim_err *err)
{
    sim_csv *c = NULL;
    int col[V_NCOL];
    *n_skipped = 0;
    sim_status st = open_table(path, vidur_cols, col, &c, err);
    if (st != SIM_OK)
        return st;
    if (m->n_experts > 0) {
        sim_errf(err, "%s: model %s is a mixture of experts; vidur profiles dense MLPs", path,
                 m->id);
        st = SIM_EINVAL;
        goto cleanup;
    }
    for (;;) {
        int has_row = 0;
        int64_t tok, tp;
        double t[4];
        st = sim_csv_next(c, &has_row, err);
        if (st != SIM_OK || !has_row)
            break;
        st = check_arch(c, col[V_H], m->n_heads, "num_attention_heads", err);
        if (st == SIM_OK)
            st = check_arch(c, col[V_KV], m->n_kv_heads, "num_key_value_heads", err);
        if (st == SIM_OK)
            st = check_arch(c, col[V_D], m->d_model, "hidden_size", err);
        if (st == SIM_OK)
            st = check_arch(c, col[V_F], m->d_ff, "intermediate_size", err);
        if (st == SIM_OK && !field_is(c, col[V_GATED], "True")) {
            sim_errf(err, "%s:%lld: use_gated_mlp: expected True (a gated SiLU MLP), got '%s'",
                     path, (long long)sim_csv_line(c), sim_csv_field(c, col[V_GATED]));
            st = SIM_EINVAL;
        }
        const int_col f[] = {{col[V_TOK], 1, MAX_DIM, &tok}, {col[V_TP], 1, MAX_GPUS, &tp}};
        if (st == SIM_OK)
            st = read_ints(c, f, 2, err);
        for (int i = 0; i < 4 && st == SIM_OK; i++)
            st = read_latency(c, col[V_QKV + i], &t[i], err);
        if (st == SIM_OK && (m->n_heads % tp != 0 || m->d_ff % tp != 0)) {
            sim_errf(err,
                     "%s:%lld: num_tensor_parallel_workers: %lld does not divide the heads (%lld) "
                     "and intermediate size (%lld)",
                     path, (long long)sim_csv_line(c), (long long)tp, (long long)m->n_heads,
                     (long long)m->d_ff);
            st = SIM_EINVAL;
        }
        if (st != SIM_OK)
            break;
        /* Column-parallel QKV and gate/up, row-parallel O and down (docs/model.md, Operators);
         * vLLM keeps max(1, K / tp) KV heads per GPU. */
        const int64_t hg = m->n_heads / tp, kg = m->n_kv_heads / tp > 0 ? m->n_kv_heads / tp : 1;
        const int64_t dh = m->head_dim, d = m->d_model, fg = m->d_ff / tp;
        const int64_t shape[4][2] = {{d, (hg + 2 * kg) * dh}, {hg * dh, d}, {d, 2 * fg}, {fg, d}};
        static const sim_ksrc srcs[4] = {SIM_KSRC_VIDUR_QKV, SIM_KSRC_VIDUR_O, SIM_KSRC_VIDUR_UP,
                                         SIM_KSRC_VIDUR_DOWN};
        for (int i = 0; i < 4 && st == SIM_OK; i++) {
            sim_ksample s = row_sample(c, srcs[i], gpu, SIM_DTYPE_FP16);
            s.m = (double)tok;
            s.k = (double)shape[i][0];
            s.n = (double)shape[i][1];
            s.tokens = s.m;
            s.measured_s = t[i] * MS_TO_S;
            st = push(set, &s, err);
        }
        if (st != SIM_OK)
            break;
    }
cleanup:
    sim_csv_free(c);
    return st;
}

enum { N_SIZE, N_WORKERS, N_PER_NODE, N_COLL, N_LAT, N_NCOL };
static const char *const vnet_cols[] = {
    "size", "num_workers", "devices_per_node", "collective", "time_stats.all_reduce.median", NULL};

sim_status sim_kset_load_vidur_allreduce(const char *path, int gpu, sim_kset *set,
                                         size_t *n_skipped, struct sim_err *err)
{
    sim_csv *c = NULL;
    int col[N_NCOL];
    *n_skipped = 0;
    sim_status st = open_table(path, vnet_cols, col, &c, err);
    if (st != SIM_OK)
        return st;
    for (;;) {
        int has_row = 0;
        int64_t size, n, per_node;
        double lat;
        st = sim_csv_next(c, &has_row, err);
        if (st != SIM_OK || !has_row)
            break;
        const int_col f[] = {{col[N_SIZE], 1, MAX_DIM * 16, &size},
                             {col[N_WORKERS], 1, MAX_GPUS, &n},
                             {col[N_PER_NODE], 1, MAX_GPUS, &per_node}};
        st = read_row(c, f, 3, col[N_LAT], &lat, err);
        if (st != SIM_OK)
            break;
        /* Multi-node rows cross InfiniBand, which no profile figure describes. */
        if (n < 2 || per_node != n || !field_is(c, col[N_COLL], "all_reduce")) {
            (*n_skipped)++;
            continue;
        }
        sim_ksample s = row_sample(c, SIM_KSRC_VIDUR_AR, gpu, SIM_DTYPE_FP16);
        s.n_gpus = (int)n;
        s.bytes = (double)size;
        s.tokens = s.bytes / (2.0 * SIM_KTAB_AR_HIDDEN);
        s.measured_s = lat * MS_TO_S;
        st = push(set, &s, err);
        if (st != SIM_OK)
            break;
    }
    sim_csv_free(c);
    return st;
}
