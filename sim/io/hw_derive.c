/* hw_derive.c - profile figures from aic kernel tables (see hw_derive.h). */
#define _POSIX_C_SOURCE 200809L
#include "hw_derive.h"

#include "kernels.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_parse.h"
#include "csv.h"
#include "err.h"
#include "fit_rel.h"
#include "hw_import.h"
#include "kernel_tables.h"

#define MIB 1048576.0

static const char *const default_attn[] = {"vllm_flash_attn_fa3", "vllm_flash_attn",
                                           "vllm_flash_attn_fa2", "vllm_flashinfer"};

static void dnote(sim_derive_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void dnote(sim_derive_result *r, const char *fmt, ...)
{
    if (r->n_notes >= SIM_DERIVE_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(r->notes[r->n_notes++], SIM_HW_SOURCE_LEN, "", 0, fmt, ap);
    va_end(ap);
}

static void set_fig(sim_hw *hw, sim_derive_result *r, sim_hw_field f, double v, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));

static void set_fig(sim_hw *hw, sim_derive_result *r, sim_hw_field f, double v, const char *fmt,
                    ...)
{
    hw->v[f] = v;
    hw->prov[f] = SIM_PROV_DERIVED;
    r->changed[f] = 1;
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(hw->src[f], SIM_HW_SOURCE_LEN, "", 0, fmt, ap);
    va_end(ap);
}

/* <dir>/<stem>.csv or .csv.gz into out; 0 when neither exists. */
static int table_path(const char *dir, const char *stem, char *out, size_t cap)
{
    struct stat st;
    snprintf(out, cap, "%s/%s.csv", dir, stem);
    if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
        return 1;
    snprintf(out, cap, "%s/%s.csv.gz", dir, stem);
    return stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

/* framework, version and device of the first data row. */
static sim_status first_row(const char *path, sim_derive_result *r, struct sim_err *err)
{
    sim_csv *c = NULL;
    int cf, cv, cd, has = 0;
    sim_status st = sim_csv_open(path, &c, err);
    if (st == SIM_OK)
        st = sim_csv_require(c, "framework", &cf, err);
    if (st == SIM_OK)
        st = sim_csv_require(c, "version", &cv, err);
    if (st == SIM_OK)
        st = sim_csv_require(c, "device", &cd, err);
    if (st == SIM_OK)
        st = sim_csv_next(c, &has, err);
    if (st == SIM_OK && !has) {
        sim_errf(err, "%s: no rows", path);
        st = SIM_EPARSE;
    }
    if (st == SIM_OK) {
        snprintf(r->framework, sizeof(r->framework), "%s", sim_csv_field(c, cf));
        snprintf(r->version, sizeof(r->version), "%s", sim_csv_field(c, cv));
        snprintf(r->device, sizeof(r->device), "%s", sim_csv_field(c, cd));
    }
    sim_csv_free(c);
    return st;
}

static sim_status solve3(double a[3][3], double b[3], int k, double *c)
{
    for (int i = 0; i < k; i++) {
        int p = i;
        for (int j = i + 1; j < k; j++)
            if (fabs(a[j][i]) > fabs(a[p][i]))
                p = j;
        if (!(fabs(a[p][i]) > 0.0))
            return SIM_EFIT;
        for (int j = 0; j < k; j++) {
            double t = a[i][j];
            a[i][j] = a[p][j];
            a[p][j] = t;
        }
        double t = b[i];
        b[i] = b[p];
        b[p] = t;
        for (int j = 0; j < k; j++) {
            if (j == i)
                continue;
            const double f = a[j][i] / a[i][i];
            for (int l = i; l < k; l++)
                a[j][l] -= f * a[i][l];
            b[j] -= f * b[i];
        }
    }
    for (int i = 0; i < k; i++)
        c[i] = b[i] / a[i][i];
    return SIM_OK;
}

sim_status sim_fit_rel_multi(const double *x, const double *t, size_t n, int k, double *c,
                             double *mape_frac)
{
    if (k < 1 || k > 3 || n < (size_t)k)
        return SIM_EINVAL;
    /* Scale each column so the normal equations are well conditioned (bytes ~1e9, 1 ~ 1). */
    double scale[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < k; j++)
            if (fabs(x[i * (size_t)k + (size_t)j] / t[i]) > scale[j])
                scale[j] = fabs(x[i * (size_t)k + (size_t)j] / t[i]);
    double a[3][3] = {{0}}, b[3] = {0};
    for (size_t i = 0; i < n; i++) {
        double z[3];
        for (int j = 0; j < k; j++)
            z[j] = scale[j] > 0.0 ? x[i * (size_t)k + (size_t)j] / t[i] / scale[j] : 0.0;
        for (int j = 0; j < k; j++) {
            b[j] += z[j];
            for (int l = 0; l < k; l++)
                a[j][l] += z[j] * z[l];
        }
    }
    sim_status st = solve3(a, b, k, c);
    if (st != SIM_OK)
        return st;
    for (int j = 0; j < k; j++)
        c[j] = scale[j] > 0.0 ? c[j] / scale[j] : 0.0;
    double e = 0.0;
    for (size_t i = 0; i < n; i++) {
        double p = 0.0;
        for (int j = 0; j < k; j++)
            p += c[j] * x[i * (size_t)k + (size_t)j];
        e += fabs(p - t[i]) / t[i];
    }
    *mape_frac = e / (double)n;
    return SIM_OK;
}

/* Appends the rows of device (and of kernel, for attention tables) of an aic table to set. */
static sim_status load_table(const char *path, sim_aic_table tab, const char *kernel,
                             const char *device, sim_kset *set, struct sim_err *err)
{
    size_t skipped = 0;
    return sim_kset_load_aic(path, tab, device, kernel, 0, set, &skipped, err);
}

/*
 * Scratch space for a table's rows: per_row x (set->n + 1) elements of size bytes, so an
 * empty table still gets some. Does nothing and returns NULL when *st is already a
 * failure; when out of memory, returns NULL with *st = SIM_ENOMEM and the message in err.
 */
static void *row_scratch(const sim_kset *set, size_t per_row, size_t size, const char *path,
                         sim_status *st, struct sim_err *err)
{
    if (*st != SIM_OK)
        return NULL;
    void *p = malloc(per_row * (set->n + 1) * size);
    if (!p)
        *st = sim_enomem(err, path);
    return p;
}

/* ---- GEMM ---- */

/* The longest fixed time per GEMM kernel accepted from a table, s: launch plus the prologue
 * of a small GEMM is a few microseconds on these GPUs (derived 2-15 us elsewhere in the
 * profiles); anything over 50 us is the host's time, not the kernel's. */
#define SIM_DERIVE_MAX_GEMM_FIXED_S 50e-6

/*
 * Figures of a block-fp8 or NVFP4 GEMM kind (sim_gemm_kind_time, kernels.h) from its rows
 * of the set, fastest row per shape, each time net of the activation quantization kernel
 * (sim_gemm_act_quant_s): the efficiency as the median 2mnk / t / peak over m, n, k >= 4096;
 * the weights factor as the median bytes / t / copy over m <= 16 with weights >= 2 x L2; the
 * fixed time as the median t - bytes / (copy f) over m <= 16 with bytes < 1 MiB. t and v are
 * scratch of set.n rows.
 */
static void derive_gemm_kind(const char *path, const sim_kset *set, sim_gemm_kind kind,
                             sim_gemm_table *t, double *v, sim_hw *hw, sim_derive_result *r)
{
    const sim_ksrc src =
        kind == SIM_GEMM_KIND_FP4 ? SIM_KSRC_AIC_GEMM_FP4 : SIM_KSRC_AIC_GEMM_FP8_BLOCK;
    const sim_hw_field eff_f =
        kind == SIM_GEMM_KIND_FP4 ? SIM_HWF_GEMM_EFF_FP4 : SIM_HWF_GEMM_EFF_FP8_BLOCK;
    const sim_hw_field bw_f = kind == SIM_GEMM_KIND_FP4 ? SIM_HWF_BW_FACTOR_WEIGHTS_FP4
                                                        : SIM_HWF_BW_FACTOR_WEIGHTS_FP8_BLOCK;
    const sim_hw_field fx_f =
        kind == SIM_GEMM_KIND_FP4 ? SIM_HWF_GEMM_FIXED_FP4 : SIM_HWF_GEMM_FIXED_FP8_BLOCK;
    const char *cls = kind == SIM_GEMM_KIND_FP4 ? "nvfp4" : "fp8_block";
    t->n_rows = 0;
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].src == src)
            t->rows[t->n_rows++] =
                (sim_gemm_row){set->v[i].m,          set->v[i].n,   set->v[i].k,
                               set->v[i].measured_s, SIM_DTYPE_FP8, (int)set->v[i].line};
    if (t->n_rows == 0) {
        dnote(r, "%s: no %s rows; %s figures kept", path, cls, cls);
        return;
    }
    if (hw->prov[SIM_HWF_PEAK_FP8] == SIM_PROV_ABSENT) {
        dnote(r, "%s: no fp8 peak in the base profile; %s rows not used", path, cls);
        return;
    }
    sim_gemm_table_best(t);
    sim_gemm_figs g;
    sim_hw_gemm_figs(hw, kind, &g);
    const double copy = hw->v[SIM_HWF_BW_STREAM_COPY], l2 = hw->v[SIM_HWF_L2];
    size_t n = 0, too_fast = 0;
    /* The efficiency needs the kind's own peak: fp4 without one runs at fp8's (hw.h). */
    if (kind != SIM_GEMM_KIND_FP4 || hw->prov[SIM_HWF_PEAK_FP4] != SIM_PROV_ABSENT) {
        for (size_t i = 0; i < t->n_rows; i++) {
            const sim_gemm_row *w = &t->rows[i];
            const double tg = w->time_s - sim_gemm_act_quant_s(hw, kind, w->m, w->k);
            if (w->m < SIM_IMPORT_COMPUTE_MIN_DIM || w->n < SIM_IMPORT_COMPUTE_MIN_DIM ||
                w->k < SIM_IMPORT_COMPUTE_MIN_DIM)
                continue;
            const double e = tg > 0.0 ? 2.0 * w->m * w->n * w->k / tg / g.peak_flops_per_s : 2.0;
            if (e > 1.0) { /* faster than the peak: not a possible measurement */
                too_fast++;
                continue;
            }
            v[n++] = e;
        }
        if (too_fast)
            dnote(r, "%s: %zu %s shapes faster than the peak left out", path, too_fast, cls);
        if (n)
            set_fig(hw, r, eff_f, sim_median(v, n),
                    "%s: median 2mnk/(t - quant)/peak over %zu %s shapes with m,n,k >= 4096 "
                    "(fastest row per shape), %s %s",
                    path, n, cls, r->framework, r->version);
        else
            dnote(r, "%s: no %s shape with m, n, k >= 4096", path, cls);
    } else {
        dnote(r, "%s: no peak_fp4_flops_per_s in the base profile; gemm_eff_fp4_frac not derived",
              path);
    }
    n = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        const sim_gemm_row *w = &t->rows[i];
        const double tg = w->time_s - sim_gemm_act_quant_s(hw, kind, w->m, w->k);
        if (w->m > SIM_IMPORT_MEMORY_MAX_M || w->k * w->n * g.weight_bytes < 2.0 * l2 || tg <= 0.0)
            continue;
        v[n++] = sim_gemm_kind_bytes(hw, kind, w->m, w->n, w->k) / tg / copy;
    }
    if (n == 0) {
        dnote(r, "%s: no %s shape with m <= 16 and weights >= 2 x L2", path, cls);
        return;
    }
    const size_t n_f = n;
    const double f = sim_median(v, n);
    set_fig(hw, r, bw_f, f,
            "%s: median bytes/(t - quant)/copy over %zu %s shapes with m <= 16 and weights >= 2 "
            "x L2 (copy %.4g B/s)",
            path, n_f, cls, copy);
    n = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        const sim_gemm_row *w = &t->rows[i];
        const double bytes = sim_gemm_kind_bytes(hw, kind, w->m, w->n, w->k);
        if (w->m > SIM_IMPORT_MEMORY_MAX_M || bytes >= MIB)
            continue;
        v[n++] = w->time_s - sim_gemm_act_quant_s(hw, kind, w->m, w->k) - bytes / (copy * f);
    }
    if (n) {
        double t0 = sim_median(v, n);
        /* A fixed time this long is not a GPU kernel's: the collector launched this kind
         * eagerly (e.g. a Triton kernel through Python) and its rows are host-bound, which
         * a CUDA-graph engine step does not pay (the MLA module tables of the same GPU, timed
         * with the kernel inside, show it). Kept, not derived. */
        if (t0 > SIM_DERIVE_MAX_GEMM_FIXED_S) {
            dnote(r,
                  "%s: %s median fixed time %.0f us over %zu shapes with m <= 16: host-bound "
                  "in the collector, not a GPU time; %s kept",
                  path, cls, t0 * 1e6, n, sim_hw_field_key(fx_f));
            return;
        }
        set_fig(hw, r, fx_f, t0 > 0.0 ? t0 : 0.0,
                "%s: median t - quant - bytes/(copy f) over %zu %s shapes with m <= 16, bytes < "
                "1 MiB",
                path, n, cls);
    }
}

static sim_status derive_gemm(const char *path, sim_hw *hw, sim_derive_result *r,
                              struct sim_err *err)
{
    sim_kset set;
    sim_kset_init(&set);
    sim_gemm_table t;
    memset(&t, 0, sizeof(t));
    double *v = NULL;
    sim_status st = load_table(path, SIM_AIC_GEMM, NULL, r->device, &set, err);
    t.rows = row_scratch(&set, 1, sizeof(*t.rows), path, &st, err);
    v = row_scratch(&set, 1, sizeof(*v), path, &st, err);
    if (st != SIM_OK)
        goto cleanup;
    for (size_t i = 0; i < set.n; i++) {
        const sim_ksample *s = &set.v[i];
        if (s->src == SIM_KSRC_AIC_GEMM || s->src == SIM_KSRC_AIC_GEMM_FP8)
            t.rows[t.n_rows++] =
                (sim_gemm_row){s->m, s->n, s->k, s->measured_s, s->dtype, (int)s->line};
    }
    sim_gemm_table_best(&t);
    const double copy = hw->v[SIM_HWF_BW_STREAM_COPY], l2 = hw->v[SIM_HWF_L2];
    for (int fp8 = 0; fp8 <= 1; fp8++) {
        const char *cls = fp8 ? "fp8 (per-tensor)" : "bfloat16";
        if (fp8 && hw->prov[SIM_HWF_PEAK_FP8] == SIM_PROV_ABSENT) {
            dnote(r, "%s: no fp8 peak in the base profile; fp8 rows not used", path);
            continue;
        }
        /* With a gemm_fp8_dispatch table the fp8 rows are timed as quantization kernel +
         * GEMM (kernels.h): the efficiency is of the GEMM alone, net of its dispatched
         * kernel's tile/cluster/wave quantization, and the memory figures are of its bytes. */
        const int dispatch = fp8 && hw->n_fp8_cfg > 0;
        size_t used = 0;
        double eff;
        if (dispatch) {
            for (size_t i = 0; i < t.n_rows; i++) {
                const sim_gemm_row *g = &t.rows[i];
                const double tg = g->time_s - sim_gemm_fp8_quant_s(hw, g->m, g->k);
                if (g->dtype != SIM_DTYPE_FP8 || g->m < SIM_IMPORT_COMPUTE_MIN_DIM ||
                    g->n < SIM_IMPORT_COMPUTE_MIN_DIM || g->k < SIM_IMPORT_COMPUTE_MIN_DIM ||
                    tg <= 0.0)
                    continue;
                v[used++] = 2.0 * g->m * g->n * g->k / tg / hw->v[SIM_HWF_PEAK_FP8] /
                            sim_gemm_fp8_dispatch_eff(hw, g->m, g->n);
            }
            eff = sim_median(v, used);
        } else {
            eff = sim_import_gemm_eff(&t, hw, fp8, SIM_IMPORT_COMPUTE_MIN_DIM, &used);
        }
        if (used == 0) {
            dnote(r, "%s: no %s shape with m, n, k >= 4096", path, cls);
            continue;
        }
        if (dispatch)
            set_fig(hw, r, SIM_HWF_GEMM_EFF_FP8, eff,
                    "%s: median 2mnk/(t - quant)/peak/dispatch_eff over %zu %s shapes with "
                    "m,n,k >= 4096 (fastest row per shape; gemm_fp8_dispatch tiles), %s %s",
                    path, used, cls, r->framework, r->version);
        else
            set_fig(hw, r, fp8 ? SIM_HWF_GEMM_EFF_FP8 : SIM_HWF_GEMM_EFF_FP16, eff,
                    "%s: median 2mnk/t/peak over %zu %s shapes with m,n,k >= 4096 (fastest row "
                    "per shape), %s %s",
                    path, used, cls, r->framework, r->version);
        /* Weight streaming rate: m <= 16, weights at least twice the L2. Bytes and the
         * quantization kernel's time as in sim_gemm_time(). */
        const sim_dtype dt = fp8 ? SIM_DTYPE_FP8 : SIM_DTYPE_BF16;
        size_t n = 0;
        for (size_t i = 0; i < t.n_rows; i++) {
            const sim_gemm_row *g = &t.rows[i];
            const double tg = g->time_s - (fp8 ? sim_gemm_fp8_quant_s(hw, g->m, g->k) : 0.0);
            if ((g->dtype == SIM_DTYPE_FP8) != fp8 || g->m > SIM_IMPORT_MEMORY_MAX_M ||
                g->k * g->n * sim_dtype_bytes(dt) < 2.0 * l2 || tg <= 0.0)
                continue;
            v[n++] = sim_gemm_bytes(hw, dt, g->m, g->n, g->k) / tg / copy;
        }
        if (n == 0) {
            dnote(r, "%s: no %s shape with m <= 16 and weights >= 2 x L2", path, cls);
            continue;
        }
        const size_t n_f = n;
        const double f = sim_median(v, n);
        n = 0;
        for (size_t i = 0; i < t.n_rows; i++) {
            const sim_gemm_row *g = &t.rows[i];
            const double bytes = sim_gemm_bytes(hw, dt, g->m, g->n, g->k);
            if ((g->dtype == SIM_DTYPE_FP8) != fp8 || g->m > SIM_IMPORT_MEMORY_MAX_M ||
                bytes >= MIB)
                continue;
            v[n++] =
                g->time_s - (fp8 ? sim_gemm_fp8_quant_s(hw, g->m, g->k) : 0.0) - bytes / (copy * f);
        }
        double t0 = n ? sim_median(v, n) : 0.0;
        if (t0 < 0.0)
            t0 = 0.0;
        set_fig(hw, r, fp8 ? SIM_HWF_BW_FACTOR_WEIGHTS_FP8 : SIM_HWF_BW_FACTOR_WEIGHTS, f,
                "%s: median bytes/t/copy over %zu %s shapes with m <= 16 and weights >= 2 x L2 "
                "(copy %.4g B/s%s)",
                path, n_f, cls, copy, dispatch ? "; net of the quantization kernel" : "");
        if (n)
            set_fig(
                hw, r, fp8 ? SIM_HWF_GEMM_FIXED_FP8 : SIM_HWF_GEMM_FIXED, t0,
                "%s: median t - bytes/(copy f) over %zu %s shapes with m <= 16, bytes < 1 MiB%s",
                path, n, cls, dispatch ? " (net of the quantization kernel)" : "");
    }
    for (int kd = SIM_GEMM_KIND_FP8_BLOCK; st == SIM_OK && kd <= SIM_GEMM_KIND_FP4; kd++)
        derive_gemm_kind(path, &set, (sim_gemm_kind)kd, &t, v, hw, r);
cleanup:
    free(v);
    free(t.rows);
    sim_kset_free(&set);
    return st;
}

/* ---- attention ---- */

static double kv_bytes_of(const sim_ksample *s)
{
    return s->batch * s->ctx * 2.0 * s->kv_heads * s->head_dim * s->kv_bytes;
}

/* Picks the attention kernel: the given one, else the first default with decode rows. */
static sim_status pick_kernel(const char *path, const char *want, sim_derive_result *r,
                              sim_kset *set, struct sim_err *err)
{
    if (want) {
        snprintf(r->attn_kernel, sizeof(r->attn_kernel), "%s", want);
        return load_table(path, SIM_AIC_DECODE, want, r->device, set, err);
    }
    for (size_t i = 0; i < sizeof(default_attn) / sizeof(default_attn[0]); i++) {
        sim_status st = load_table(path, SIM_AIC_DECODE, default_attn[i], r->device, set, err);
        if (st != SIM_OK || set->n > 0) {
            snprintf(r->attn_kernel, sizeof(r->attn_kernel), "%s", default_attn[i]);
            return st;
        }
    }
    return SIM_OK;
}

static sim_status derive_decode(const char *path, const char *want, sim_hw *hw,
                                sim_derive_result *r, struct sim_err *err)
{
    sim_kset set;
    sim_kset_init(&set);
    double *x = NULL, *t = NULL;
    sim_status st = pick_kernel(path, want, r, &set, err);
    if (st != SIM_OK || set.n == 0) {
        if (st == SIM_OK)
            dnote(r, "%s: no rows of a known attention kernel; decode figures kept", path);
        goto cleanup;
    }
    x = row_scratch(&set, 3, sizeof(*x), path, &st, err);
    t = row_scratch(&set, 1, sizeof(*t), path, &st, err);
    if (st != SIM_OK)
        goto cleanup;
    const double copy = hw->v[SIM_HWF_BW_STREAM_COPY], l2 = hw->v[SIM_HWF_L2];
    size_t n = 0;
    for (size_t i = 0; i < set.n; i++) {
        const sim_ksample *s = &set.v[i];
        const double b = kv_bytes_of(s);
        if (s->src != SIM_KSRC_AIC_DECODE || (b > l2 / 16.0 && b < 2.0 * l2))
            continue;
        x[3 * n] = 1.0;
        x[3 * n + 1] = b / copy;
        x[3 * n + 2] = s->batch * s->heads;
        t[n++] = s->measured_s;
    }
    double c[3], mape = 0.0;
    if (n < 3 || sim_fit_rel_multi(x, t, n, 3, c, &mape) != SIM_OK || c[0] < 0.0 || c[1] <= 0.0 ||
        c[2] < 0.0) {
        dnote(r, "%s: the decode fit failed or gave a negative term (%zu rows); figures kept", path,
              n);
        goto cleanup;
    }
    set_fig(hw, r, SIM_HWF_BW_FACTOR_KV, 1.0 / c[1],
            "%s: %s bf16 KV, %zu rows (KV <= L2/16 or >= 2 L2): relative LS of t = t0 + "
            "bytes/(copy f) + c batch heads, MAPE %.1f%%",
            path, r->attn_kernel, n, 100.0 * mape);
    set_fig(hw, r, SIM_HWF_ATTN_FIXED, c[0],
            "%s: intercept t0 of the decode fit (bw_factor_kv_gather)", path);
    set_fig(hw, r, SIM_HWF_ATTN_DECODE_SEQ_HEAD, c[2],
            "%s: per sequence x query head term c of the decode fit (bw_factor_kv_gather)", path);
    size_t m = 0;
    for (size_t i = 0; i < set.n; i++) {
        const sim_ksample *s = &set.v[i];
        const double b = kv_bytes_of(s);
        const double rest = s->measured_s - c[0] - c[2] * s->batch * s->heads;
        if (s->src != SIM_KSRC_AIC_DECODE_FP8KV || b < 2.0 * l2 || rest <= 0.0)
            continue;
        t[m++] = b / (copy * rest);
    }
    if (m > 0)
        set_fig(hw, r, SIM_HWF_BW_FACTOR_KV_FP8, sim_median(t, m),
                "%s: %s fp8 KV, median bytes/(copy (t - t0 - c batch heads)) over %zu rows with KV "
                ">= 2 L2",
                path, r->attn_kernel, m);
    else
        dnote(r, "%s: no fp8-KV decode rows with KV >= 2 x L2; fp8 factor kept", path);
cleanup:
    free(x);
    free(t);
    sim_kset_free(&set);
    return st;
}

static sim_status derive_prefill(const char *path, sim_hw *hw, sim_derive_result *r,
                                 struct sim_err *err)
{
    sim_kset set;
    sim_kset_init(&set);
    double *v = NULL, *x = NULL;
    sim_status st = load_table(path, SIM_AIC_PREFILL, r->attn_kernel[0] ? r->attn_kernel : NULL,
                               r->device, &set, err);
    v = row_scratch(&set, 1, sizeof(*v), path, &st, err);
    x = row_scratch(&set, 3, sizeof(*x), path, &st, err);
    if (st != SIM_OK)
        goto cleanup;
    const double peak = hw->v[SIM_HWF_PEAK_BF16];
    size_t n = 0, too_fast = 0, n_long = 0;
    for (size_t i = 0; i < set.n; i++) {
        const sim_ksample *s = &set.v[i];
        if (s->src != SIM_KSRC_AIC_PREFILL)
            continue;
        const double fl = s->batch * 4.0 * s->heads * s->head_dim * s->ctx * (s->ctx + 1.0) / 2.0;
        if (fl / s->measured_s > peak) {
            too_fast++;
            continue;
        }
        /* t = t0 + a fl / peak + b fl / (peak s): a = 1 / eff, b / a = s0. */
        x[3 * n] = 1.0;
        x[3 * n + 1] = fl / peak;
        x[3 * n + 2] = fl / peak / s->ctx;
        v[n++] = s->measured_s;
        n_long += s->ctx >= 4096.0;
    }
    if (too_fast)
        dnote(r,
              "%s: %zu prefill rows faster than the bf16 peak left out (not a possible "
              "measurement of causal attention)",
              path, too_fast);
    /* When the rows beating the peak outnumber the long-prompt rows the table does not measure
     * what its columns say (e.g. a window or a non-causal kernel); then none of it is used. */
    if (too_fast > n_long) {
        dnote(r,
              "%s: %zu prefill rows faster than the peak, %zu long-prompt rows: table "
              "inconsistent, prefill figures kept from the base",
              path, too_fast, n_long);
        goto cleanup;
    }
    double c[3], mape = 0.0;
    if (n < 3 || sim_fit_rel_multi(x, v, n, 3, c, &mape) != SIM_OK || c[0] < 0.0 || c[1] <= 0.0 ||
        c[2] < 0.0 || 1.0 / c[1] > 1.0) {
        dnote(r, "%s: the prefill fit failed or gave a term out of range (%zu rows); kept", path,
              n);
        goto cleanup;
    }
    set_fig(hw, r, SIM_HWF_ATTN_EFF, 1.0 / c[1],
            "%s: %s bf16 KV, %zu rows: relative LS of t = t0 + fl/(peak e) (1 + s0/s), causal fl "
            "= 4 b h d s(s+1)/2, MAPE %.1f%%",
            path, r->attn_kernel, n, 100.0 * mape);
    set_fig(hw, r, SIM_HWF_ATTN_PREFILL_SEQ_HALF, c[2] / c[1],
            "%s: s0 of the prefill fit (attn_eff_frac): rate = peak e s/(s + s0)", path);
    set_fig(hw, r, SIM_HWF_ATTN_PREFILL_FIXED, c[0], "%s: t0 of the prefill fit (attn_eff_frac)",
            path);
cleanup:
    free(v);
    free(x);
    sim_kset_free(&set);
    return st;
}

/* ---- all-reduce ---- */

static sim_status derive_allreduce(const char *path, sim_hw *hw, sim_derive_result *r,
                                   struct sim_err *err)
{
    sim_kset set;
    sim_kset_init(&set);
    sim_nccl_result nr;
    memset(&nr, 0, sizeof(nr));
    sim_status st = load_table(path, SIM_AIC_CUSTOM_AR, NULL, r->device, &set, err);
    nr.rows = row_scratch(&set, 1, sizeof(*nr.rows), path, &st, err);
    if (st != SIM_OK)
        goto cleanup;
    for (int g = 2; g <= 64; g++) {
        nr.n_rows = 0;
        nr.n_gpus = g;
        nr.header_line = 1;
        for (size_t i = 0; i < set.n; i++)
            if (set.v[i].n_gpus == g)
                nr.rows[nr.n_rows++] =
                    (sim_nccl_row){set.v[i].bytes, set.v[i].measured_s, 0.0, (int)set.v[i].line};
        if (nr.n_rows == 0)
            continue;
        sim_allreduce a;
        sim_fit_segments fit;
        size_t used = 0;
        int l0 = 0, l1 = 0;
        struct sim_err ferr;
        if (sim_import_allreduce_fit_regimes(&nr, path, SIM_IMPORT_AR_MIN_BYTES,
                                             SIM_IMPORT_AR_MAX_BYTES, SIM_FIT_MAX_SEGMENTS, &a,
                                             &fit, &used, &l0, &l1, &ferr) != SIM_OK) {
            dnote(r, "%s", ferr.msg);
            continue;
        }
        a.prov = SIM_PROV_DERIVED;
        /* The regimes' first sizes, "512 KiB, 8 MiB", for the source note. */
        char from[64] = "";
        for (int k = 0; k < a.n_regimes; k++) {
            const double b = a.regimes[k].from_bytes;
            const size_t len = strlen(from);
            snprintf(from + len, sizeof(from) - len, "%s%.0f %s", k ? ", " : "",
                     b >= 1048576.0 ? b / 1048576.0 : b / 1024.0, b >= 1048576.0 ? "MiB" : "KiB");
        }
        snprintf(a.source, sizeof(a.source),
                 "%s lines %d-%d: vLLM all-reduce (CUDA graph), %zu sizes 8 KiB-256 MiB, rel. LS "
                 "of t = a + 2(n-1)/n B/b, %d regime%s%s%s (BIC), MAPE %.1f%% (one line %.1f%%)",
                 path, l0, l1, used, fit.k, fit.k > 1 ? "s, switching at " : "", from, "",
                 100.0 * fit.mape_frac, 100.0 * fit.mape_one_frac);
        int slot = -1;
        for (int j = 0; j < hw->n_allreduce; j++)
            if (hw->allreduce[j].n_gpus == g)
                slot = j;
        if (slot < 0) {
            if (hw->n_allreduce == SIM_HW_MAX_ALLREDUCE)
                continue;
            slot = hw->n_allreduce++;
        }
        hw->allreduce[slot] = a;
        r->ar_changed[slot] = 1;
    }
    /* Sorted by GPU count, carrying the changed flags. */
    sim_hw_sort_allreduce(hw, r->ar_changed);
cleanup:
    free(nr.rows);
    sim_kset_free(&set);
    return st;
}

/* ---- fused MoE ---- */

/*
 * The fused-MoE figures of one weight class from the moe_perf samples (kernels.h,
 * sim_fused_moe_time; rows picked by sim_moe_fit_role):
 *   memory fit, tokens <= 16 and weights >= 2 x L2: t = moe_fixed_s + bytes / (copy f)
 *   compute fit, tokens >= 4096: t = a W + b W / r_e + c K, W = 6 R d F, K = 2 R (2 F + d),
 *     moe_gemm_eff_frac = 1 / (a peak), moe_rows_half_tokens = b / a,
 *     moe_tile_extra_k_elems = c / a.
 * Both by relative least squares.
 */
static sim_status derive_moe_class(const char *path, const sim_kset *set, sim_moe_class cls,
                                   double *x, double *t, sim_hw *hw, sim_derive_result *r)
{
    static const char *const names[SIM_MOE_CLASS_COUNT] = {"bfloat16", "fp8 (per-tensor)",
                                                           "fp8_block", "w4a16_mxfp4", "nvfp4"};
    const char *cname = names[cls];
    sim_hw_field fg[SIM_MOE_FIG_COUNT];
    for (int k = 0; k < SIM_MOE_FIG_COUNT; k++)
        fg[k] = sim_hw_moe_field(cls, (sim_moe_fig)k);
    const double copy = hw->v[SIM_HWF_BW_STREAM_COPY], l2 = hw->v[SIM_HWF_L2];
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const sim_ksample *s = &set->v[i];
        if (s->moe_cls != cls || sim_moe_fit_role(s, l2) != 1)
            continue;
        sim_moe_shape sh;
        sim_kernel_time kt;
        sim_ksample_moe_shape(s, &sh);
        sim_fused_moe_time(hw, cls, &sh, &kt);
        x[2 * n] = 1.0;
        x[2 * n + 1] = kt.bytes;
        t[n++] = s->measured_s;
    }
    if (n == 0)
        return SIM_OK; /* the table has no rows of this class: its figures are kept */
    double c[3], mape;
    if (n < 2 || sim_fit_rel_multi(x, t, n, 2, c, &mape) != SIM_OK || !(c[1] > 0.0) || c[0] < 0.0 ||
        1.0 / (c[1] * copy) > 1.5) {
        dnote(r,
              "%s: %s: no usable memory fit over %zu rows with tokens <= 16 and weights >= 2 x "
              "L2; moe memory figures kept",
              path, cname, n);
    } else {
        set_fig(hw, r, fg[SIM_MOE_FIG_FIXED], c[0],
                "%s: intercept of t = t0 + bytes/(copy f), relative least squares over %zu %s "
                "rows with tokens <= 16 and touched weights >= 2 x L2 (MAPE %.1f%%), %s %s",
                path, n, cname, 100.0 * mape, r->framework, r->version);
        set_fig(hw, r, fg[SIM_MOE_FIG_BW], 1.0 / (c[1] * copy),
                "%s: slope of the same fit, 1/(slope copy) with copy %.4g B/s (%zu %s rows)", path,
                copy, n, cname);
    }
    sim_moe_figs g;
    sim_hw_moe_figs(hw, cls, &g);
    const double peak = g.peak_flops_per_s;
    /* The three terms (W, W / r_e, K), then without a term whose coefficient came out
     * negative (a kernel without that effect): the first subset whose coefficients are all
     * >= 0 with an efficiency <= 1 (no kernel beats the peak). */
    static const int masks[] = {7, 5, 3, 1};
    int used = 0;
    double cc[3] = {0.0, 0.0, 0.0};
    for (size_t mi = 0; mi < sizeof(masks) / sizeof(masks[0]) && !used; mi++) {
        const int mask = masks[mi];
        int k = 0;
        for (int b = 0; b < 3; b++)
            k += (mask >> b) & 1;
        n = 0;
        for (size_t i = 0; i < set->n; i++) {
            const sim_ksample *s = &set->v[i];
            if (s->moe_cls != cls || sim_moe_fit_role(s, l2) != 2)
                continue;
            const double w = 6.0 * s->rows_padded * s->k * s->n;
            const double terms[3] = {w, w * s->touched / s->rows_padded,
                                     2.0 * s->rows_padded * (2.0 * s->n + s->k)};
            int j = 0;
            for (int b = 0; b < 3; b++)
                if ((mask >> b) & 1)
                    x[(size_t)k * n + (size_t)j++] = terms[b];
            t[n++] = s->measured_s;
        }
        if ((size_t)k > n || sim_fit_rel_multi(x, t, n, k, c, &mape) != SIM_OK)
            continue;
        int j = 0, ok = 1;
        for (int b = 0; b < 3; b++) {
            cc[b] = (mask >> b) & 1 ? c[j++] : 0.0;
            ok &= cc[b] >= 0.0;
        }
        used = ok && cc[0] > 0.0 && 1.0 / (cc[0] * peak) <= 1.0 ? mask : 0;
    }
    if (!used) {
        dnote(r,
              "%s: %s: no usable compute fit over %zu rows with tokens >= 4096; moe compute "
              "figures kept",
              path, cname, n);
        return SIM_OK;
    }
    c[0] = cc[0];
    c[1] = cc[1];
    c[2] = cc[2];
    set_fig(hw, r, fg[SIM_MOE_FIG_EFF], 1.0 / (c[0] * peak),
            "%s: t = (W (1 + r0/r_e) + k0 K)/(peak eff), W = 6 R d F, K = 2 R (2F + d), R padded "
            "rows, r_e = R/touched; relative least squares over %zu %s rows with tokens >= 4096 "
            "(MAPE %.1f%%%s), %s %s",
            path, n, cname, 100.0 * mape,
            used == 7   ? ""
            : used == 5 ? "; r0 held at 0, the full fit's was negative"
            : used == 3 ? "; k0 held at 0, the full fit's was negative"
                        : "; r0 and k0 held at 0, the full fit's were negative",
            r->framework, r->version);
    set_fig(hw, r, fg[SIM_MOE_FIG_R0], c[1] / c[0],
            "%s: r0 of the same fit (%zu %s rows with tokens >= 4096)", path, n, cname);
    set_fig(hw, r, fg[SIM_MOE_FIG_K0], c[2] / c[0],
            "%s: k0 of the same fit (%zu %s rows with tokens >= 4096)", path, n, cname);
    return SIM_OK;
}

static sim_status derive_moe(const char *path, sim_hw *hw, sim_derive_result *r,
                             struct sim_err *err)
{
    sim_kset set;
    sim_kset_init(&set);
    sim_status st = load_table(path, SIM_AIC_MOE, NULL, r->device, &set, err);
    double *x = row_scratch(&set, 3, sizeof(*x), path, &st, err);
    double *t = row_scratch(&set, 1, sizeof(*t), path, &st, err);
    for (int cls = 0; cls < SIM_MOE_CLASS_COUNT && st == SIM_OK; cls++) {
        if (cls != SIM_MOE_CLASS_16 && cls != SIM_MOE_CLASS_MXFP4 &&
            hw->prov[SIM_HWF_PEAK_FP8] == SIM_PROV_ABSENT) {
            dnote(r, "%s: no fp8 peak in the base profile; %s rows not used", path,
                  sim_moe_class_name((sim_moe_class)cls));
            continue;
        }
        st = derive_moe_class(path, &set, (sim_moe_class)cls, x, t, hw, r);
    }
    free(x);
    free(t);
    sim_kset_free(&set);
    return st;
}

sim_status sim_hw_derive_tables(const char *dir, const char *attn_kernel, sim_hw *hw,
                                sim_derive_result *res, struct sim_err *err)
{
    memset(res, 0, sizeof(*res));
    char path[4096];
    if (!table_path(dir, "gemm_perf", path, sizeof(path))) {
        sim_errf(err, "%s: no gemm_perf.csv or gemm_perf.csv.gz (expected an aic table folder)",
                 dir);
        return SIM_EINVAL;
    }
    sim_status st = first_row(path, res, err);
    if (st == SIM_OK)
        st = derive_gemm(path, hw, res, err);
    if (st == SIM_OK) {
        if (table_path(dir, "generation_attention_perf", path, sizeof(path)))
            st = derive_decode(path, attn_kernel, hw, res, err);
        else
            dnote(res, "%s: no generation_attention_perf table; decode figures kept", dir);
    }
    if (st == SIM_OK) {
        if (table_path(dir, "context_attention_perf", path, sizeof(path)))
            st = derive_prefill(path, hw, res, err);
        else
            dnote(res, "%s: no context_attention_perf table; attn_eff_frac kept", dir);
    }
    if (st == SIM_OK) {
        if (table_path(dir, "custom_allreduce_perf", path, sizeof(path)))
            st = derive_allreduce(path, hw, res, err);
        else
            dnote(res, "%s: no custom_allreduce_perf table; all-reduce entries kept", dir);
    }
    if (st == SIM_OK) {
        if (table_path(dir, "moe_perf", path, sizeof(path)))
            st = derive_moe(path, hw, res, err);
        else
            dnote(res, "%s: no moe_perf table; fused-MoE figures kept", dir);
    }
    if (st == SIM_OK)
        snprintf(hw->stack, sizeof(hw->stack), "%s %s (%s; kernel tables %s)", res->framework,
                 res->version, res->device, dir);
    return st;
}
