/* hw_import.c - see hw_import.h. */
#define _POSIX_C_SOURCE 200809L
#include "hw_import.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "atomic_write.h"
#include "err.h"
#include "hw_derive.h"
#include "hw_json.h"
#include "json_util.h"
#include "json_writer.h"
#include "model.h"

/* ---- fits ---- */

sim_status sim_import_allreduce_fit(const sim_nccl_result *r, const char *path, double min_bytes,
                                    double max_bytes, sim_allreduce *out, sim_fit_line *fit,
                                    size_t *n_used, int *first_line, int *last_line,
                                    struct sim_err *err)
{
    double *x = malloc((r->n_rows + 1) * sizeof(*x)), *t = malloc((r->n_rows + 1) * sizeof(*t));
    sim_status st = SIM_OK;
    size_t n = 0;
    *first_line = *last_line = 0;
    if (!x || !t) {
        st = sim_enomem(err, path);
        goto cleanup;
    }
    /* nccl-tests' bus bandwidth convention: busbw = algbw x 2(n-1)/n (all_reduce.cu
     * AllReduceGetBw), so the bus time of m bytes is 2(n-1)/n x m / busbw. */
    const double ring = 2.0 * (double)(r->n_gpus - 1) / (double)r->n_gpus;
    for (size_t i = 0; i < r->n_rows; i++) {
        const sim_nccl_row *row = &r->rows[i];
        if (row->bytes < min_bytes || row->bytes > max_bytes)
            continue;
        x[n] = ring * row->bytes;
        t[n] = row->time_oop_s;
        if (!*first_line)
            *first_line = row->line;
        *last_line = row->line;
        n++;
    }
    *n_used = n;
    st = sim_fit_rel_line(x, t, n, fit);
    if (st != SIM_OK) {
        sim_errf(err,
                 "%s:%d: cannot fit t = a + 2(n-1)/n x bytes / b: %s (%zu rows between %.0f and "
                 "%.0f bytes; need 2 or more sizes, time growing with size)",
                 path, r->header_line,
                 st == SIM_EFIT ? "time does not grow with size" : "too few rows", n, min_bytes,
                 max_bytes);
        st = SIM_EFIT;
        goto cleanup;
    }
    out->n_gpus = r->n_gpus;
    out->latency_s = fit->a;
    out->bus_bw_bytes_per_s = 1.0 / fit->b;
    out->n_regimes = 0;
cleanup:
    free(x);
    free(t);
    return st;
}

static int cmp_nccl_row_bytes(const void *p, const void *q)
{
    const sim_nccl_row *a = p, *b = q;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return a->line - b->line;
}

sim_status sim_import_allreduce_fit_regimes(const sim_nccl_result *r, const char *path,
                                            double min_bytes, double max_bytes, int max_regimes,
                                            sim_allreduce *out, sim_fit_segments *fit,
                                            size_t *n_used, int *first_line, int *last_line,
                                            struct sim_err *err)
{
    sim_nccl_row *rows = malloc((r->n_rows + 1) * sizeof(*rows));
    double *x = malloc((r->n_rows + 1) * sizeof(*x)), *t = malloc((r->n_rows + 1) * sizeof(*t));
    sim_status st = SIM_OK;
    size_t n = 0;
    *first_line = *last_line = 0;
    if (!rows || !x || !t) {
        st = sim_enomem(err, path);
        goto cleanup;
    }
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].bytes >= min_bytes && r->rows[i].bytes <= max_bytes)
            rows[n++] = r->rows[i];
    qsort(rows, n, sizeof(*rows), cmp_nccl_row_bytes);
    /* Bus time of m bytes: 2(n-1)/n x m / busbw (nccl-tests' convention, as above). */
    const double ring = 2.0 * (double)(r->n_gpus - 1) / (double)r->n_gpus;
    for (size_t i = 0; i < n; i++) {
        x[i] = ring * rows[i].bytes;
        t[i] = rows[i].time_oop_s;
        if (!*first_line || rows[i].line < *first_line)
            *first_line = rows[i].line;
        if (rows[i].line > *last_line)
            *last_line = rows[i].line;
    }
    *n_used = n;
    st = n >= SIM_IMPORT_AR_REGIME_MIN_SIZES
             ? sim_fit_rel_segments(x, t, n, max_regimes, SIM_IMPORT_AR_REGIME_MIN_SIZES, fit)
             : SIM_EINVAL;
    if (st != SIM_OK) {
        sim_errf(err,
                 "%s:%d: cannot fit t = a + 2(n-1)/n x bytes / b: %s (%zu rows between %.0f and "
                 "%.0f bytes; need %d or more sizes, time growing with size)",
                 path, r->header_line,
                 st == SIM_EFIT ? "time does not grow with size" : "too few rows", n, min_bytes,
                 max_bytes, SIM_IMPORT_AR_REGIME_MIN_SIZES);
        st = SIM_EFIT;
        goto cleanup;
    }
    out->n_gpus = r->n_gpus;
    out->latency_s = fit->line[0].a;
    out->bus_bw_bytes_per_s = 1.0 / fit->line[0].b;
    out->n_regimes = fit->k - 1;
    for (int j = 1; j < fit->k; j++) {
        out->regimes[j - 1].from_bytes = rows[fit->start[j]].bytes;
        out->regimes[j - 1].latency_s = fit->line[j].a;
        out->regimes[j - 1].bus_bw_bytes_per_s = 1.0 / fit->line[j].b;
    }
cleanup:
    free(rows);
    free(x);
    free(t);
    return st;
}

static int cmp_gemm(const void *p, const void *q)
{
    const sim_gemm_row *a = p, *b = q;
    if (a->dtype != b->dtype)
        return (int)a->dtype - (int)b->dtype;
    if (a->m != b->m)
        return a->m < b->m ? -1 : 1;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? -1 : 1;
    return a->line - b->line;
}

void sim_gemm_table_best(sim_gemm_table *t)
{
    if (t->n_rows == 0)
        return;
    qsort(t->rows, t->n_rows, sizeof(*t->rows), cmp_gemm);
    size_t w = 1;
    for (size_t i = 1; i < t->n_rows; i++) {
        const sim_gemm_row *p = &t->rows[w - 1], *c = &t->rows[i];
        if (c->dtype == p->dtype && c->m == p->m && c->n == p->n && c->k == p->k)
            continue; /* sorted by time within a shape: the first is the fastest */
        t->rows[w++] = *c;
    }
    t->n_rows = w;
}

static int is_fp8(sim_dtype d) { return d == SIM_DTYPE_FP8; }

double sim_import_gemm_eff(const sim_gemm_table *t, const sim_hw *base, int want_fp8,
                           double min_dim, size_t *n_used)
{
    *n_used = 0;
    double *eff = malloc((t->n_rows + 1) * sizeof(*eff));
    if (!eff)
        return (double)NAN;
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        const sim_gemm_row *r = &t->rows[i];
        if (is_fp8(r->dtype) != want_fp8 || r->m < min_dim || r->n < min_dim || r->k < min_dim)
            continue;
        const double peak = r->dtype == SIM_DTYPE_FP8    ? base->v[SIM_HWF_PEAK_FP8]
                            : r->dtype == SIM_DTYPE_BF16 ? base->v[SIM_HWF_PEAK_BF16]
                                                         : base->v[SIM_HWF_PEAK_FP16];
        eff[n++] = 2.0 * r->m * r->n * r->k / r->time_s / peak;
    }
    *n_used = n;
    double med = sim_median(eff, n);
    free(eff);
    return med;
}

sim_status sim_import_gemm_stream_fit(const sim_gemm_table *t, double copy_bw, double max_m,
                                      sim_fit_line *fit, size_t *n_used, int *fp8)
{
    *n_used = 0;
    *fp8 = 0;
    size_t n16 = 0;
    for (size_t i = 0; i < t->n_rows; i++)
        n16 += t->rows[i].m <= max_m && !is_fp8(t->rows[i].dtype);
    *fp8 = n16 == 0;
    double *x = malloc((t->n_rows + 1) * sizeof(*x)), *y = malloc((t->n_rows + 1) * sizeof(*y));
    sim_status st = SIM_ENOMEM;
    if (x && y) {
        size_t n = 0;
        for (size_t i = 0; i < t->n_rows; i++) {
            const sim_gemm_row *r = &t->rows[i];
            if (r->m > max_m || is_fp8(r->dtype) != *fp8)
                continue;
            /* Bytes as in sim_gemm_time() (kernels.c): weights k n in the GEMM dtype,
             * activations m (k + n) in 16 bits (fp8 GEMMs read and write bf16 activations). */
            const double wb = sim_dtype_bytes(r->dtype), hb = is_fp8(r->dtype) ? 2.0 : wb;
            x[n] = (r->k * r->n * wb + r->m * (r->k + r->n) * hb) / copy_bw;
            y[n] = r->time_s;
            n++;
        }
        *n_used = n;
        st = sim_fit_rel_line(x, y, n, fit);
        if (st == SIM_EINVAL)
            st = SIM_EFIT;
    }
    free(x);
    free(y);
    return st;
}

/* ---- the profile ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/*
 * Writes "<path><rest>" into dst (SIM_HW_SOURCE_LEN); falls back to the file's
 * base name when the full path does not fit, then truncates.
 */
static void source_of(char *dst, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void source_of(char *dst, const char *path, const char *fmt, ...)
{
    char rest[SIM_HW_SOURCE_LEN];
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(rest, sizeof(rest), "", 0, fmt, ap);
    va_end(ap);
    size_t need = strlen(path) + strlen(rest);
    snprintf(dst, SIM_HW_SOURCE_LEN, "%s%s", need < SIM_HW_SOURCE_LEN ? path : base_name(path),
             rest);
}

static void note(sim_import_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void note(sim_import_result *res, const char *fmt, ...)
{
    if (res->n_notes >= (int)(sizeof(res->notes) / sizeof(res->notes[0])))
        return;
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(res->notes[res->n_notes++], SIM_HW_SOURCE_LEN, "", 0, fmt, ap);
    va_end(ap);
}

static void set_fig(sim_hw *hw, sim_import_result *res, sim_hw_field f, double v, sim_prov p)
{
    hw->v[f] = v;
    hw->prov[f] = p;
    res->changed[f] = 1;
}

static sim_status import_stream(const char *path, sim_hw *hw, sim_import_result *res,
                                struct sim_err *err)
{
    sim_stream_result s;
    sim_status st = sim_stream_parse(path, &s, err);
    if (st != SIM_OK)
        return st;
    static const sim_hw_field keys[SIM_STREAM_KERNEL_COUNT] = {
        SIM_HWF_BW_STREAM_COPY, SIM_HWF_BW_STREAM_SCALE, SIM_HWF_BW_STREAM_ADD,
        SIM_HWF_BW_STREAM_TRIAD};
    static const char *const names[2][SIM_STREAM_KERNEL_COUNT] = {
        {"Copy", "Mul", "Add", "Triad"}, {"Copy", "Scale", "Add", "Triad"}};
    const int classic = strcmp(s.tool, "STREAM") == 0;
    for (int k = 0; k < SIM_STREAM_KERNEL_COUNT; k++) {
        if (!s.line[k]) {
            note(res, "%s: no %s row; %s kept from the base", base_name(path), names[classic][k],
                 sim_hw_field_key(keys[k]));
            continue;
        }
        set_fig(hw, res, keys[k], s.bw_bytes_per_s[k], SIM_PROV_MEASURED);
        source_of(hw->src[keys[k]], path, " line %d: %s %s best rate (1 %s/s = %.0f B/s)",
                  s.line[k], s.tool, names[classic][k], s.bytes_per_unit == 1e6 ? "MB" : "MiB",
                  s.bytes_per_unit);
    }
    return SIM_OK;
}

static sim_status import_nccl(const sim_import_opts *o, sim_hw *hw, sim_import_result *res,
                              struct sim_err *err)
{
    for (int i = 0; i < o->n_nccl; i++) {
        const char *path = o->nccl_paths[i];
        sim_nccl_result r;
        sim_status st = sim_nccl_parse(path, &r, err);
        if (st != SIM_OK)
            return st;
        sim_allreduce a;
        sim_fit_line fit;
        size_t used = 0;
        int l0 = 0, l1 = 0;
        st = sim_import_allreduce_fit(&r, path, SIM_IMPORT_AR_MIN_BYTES, SIM_IMPORT_AR_MAX_BYTES,
                                      &a, &fit, &used, &l0, &l1, err);
        sim_nccl_result_free(&r);
        if (st != SIM_OK)
            return st;
        a.prov = SIM_PROV_DERIVED;
        source_of(a.source, path,
                  " lines %d-%d: all_reduce_perf out-of-place, %zu sizes 8 KiB-256 MiB, relative "
                  "LS of t = a + 2(n-1)/n B/b%s, MAPE %.1f%%",
                  l0, l1, used, fit.through_origin ? " (a < 0: refit with a = 0)" : "",
                  100.0 * fit.mape_frac);
        int slot = -1;
        for (int j = 0; j < hw->n_allreduce; j++) {
            if (hw->allreduce[j].n_gpus != a.n_gpus)
                continue;
            if (res->ar_changed[j]) {
                sim_errf(err,
                         "%s:1: a second all-reduce file for %d GPUs (expected one file per GPU "
                         "count)",
                         path, a.n_gpus);
                return SIM_EINVAL;
            }
            slot = j;
        }
        if (slot < 0) {
            if (hw->n_allreduce == SIM_HW_MAX_ALLREDUCE) {
                sim_errf(err, "%s:1: too many all-reduce GPU counts (at most %d in a profile)",
                         path, SIM_HW_MAX_ALLREDUCE);
                return SIM_EINVAL;
            }
            slot = hw->n_allreduce++;
        }
        hw->allreduce[slot] = a;
        res->ar_changed[slot] = 1;
    }
    for (int j = 0; j < hw->n_allreduce; j++)
        if (!res->ar_changed[j])
            note(res, "allreduce %d GPUs: not measured here, kept from the base (%s)",
                 hw->allreduce[j].n_gpus, sim_prov_name(hw->allreduce[j].prov));
    sim_hw_sort_allreduce(hw, res->ar_changed); /* carrying the changed flags */
    return SIM_OK;
}

static sim_status import_gemm(const char *path, const sim_hw *base, sim_hw *hw,
                              sim_import_result *res, struct sim_err *err)
{
    sim_gemm_table t;
    sim_status st = sim_gemm_parse(path, &t, err);
    if (st != SIM_OK)
        return st;
    sim_gemm_table_best(&t);
    const char *bn = base_name(path);
    const char *fmt = t.format == SIM_GEMM_FORMAT_CUTLASS ? "cutlass_profiler" : "GEMM table";
    for (int fp8 = 0; fp8 <= 1; fp8++) {
        size_t used = 0;
        const sim_hw_field f = fp8 ? SIM_HWF_GEMM_EFF_FP8 : SIM_HWF_GEMM_EFF_FP16;
        const double eff = sim_import_gemm_eff(&t, base, fp8, SIM_IMPORT_COMPUTE_MIN_DIM, &used);
        if (used == 0) {
            note(res, "%s: no %s shape with m, n, k >= 4096; %s kept from the base", bn,
                 fp8 ? "fp8" : "bf16/fp16", sim_hw_field_key(f));
            continue;
        }
        if (fp8 && base->prov[SIM_HWF_PEAK_FP8] == SIM_PROV_ABSENT) {
            sim_errf(err,
                     "%s:%d: fp8 GEMM rows, but the base profile has no peak_fp8_flops_per_s "
                     "(no fp8 units): remove the fp8 rows or pick another base",
                     path, t.header_line);
            st = SIM_EINVAL;
            goto cleanup;
        }
        set_fig(hw, res, f, eff, SIM_PROV_DERIVED);
        source_of(hw->src[f], path,
                  " lines %d-%d: %s, median 2mnk/t/peak over %zu %s shapes with m,n,k >= 4096 "
                  "(fastest row per shape; %s in %s)",
                  t.header_line + 1, t.last_line, fmt, used, fp8 ? "fp8" : "bf16/fp16",
                  t.time_column,
                  t.time_unit_s == 1.0    ? "s"
                  : t.time_unit_s == 1e-3 ? "ms"
                                          : "us");
    }
    sim_fit_line fit;
    size_t used = 0;
    int fp8 = 0;
    const double copy = hw->v[SIM_HWF_BW_STREAM_COPY];
    st = sim_import_gemm_stream_fit(&t, copy, SIM_IMPORT_MEMORY_MAX_M, &fit, &used, &fp8);
    if (st == SIM_ENOMEM) {
        sim_errf(err, "%s: out of memory", path);
        goto cleanup;
    }
    st = SIM_OK;
    if (used < 2 || fit.b <= 0.0) {
        note(res,
             "%s: %zu memory-bound shapes (m <= 16), need 2 sizes: bw_factor_weights_frac "
             "and gemm_fixed_s kept from the base",
             bn, used);
        goto cleanup;
    }
    const char *copy_from = res->changed[SIM_HWF_BW_STREAM_COPY]
                                ? "imported"
                                : sim_prov_name(hw->prov[SIM_HWF_BW_STREAM_COPY]);
    set_fig(hw, res, SIM_HWF_BW_FACTOR_WEIGHTS, 1.0 / fit.b, SIM_PROV_DERIVED);
    source_of(hw->src[SIM_HWF_BW_FACTOR_WEIGHTS], path,
              " lines %d-%d: %zu %s shapes with m <= 16, relative LS of t = t0 + bytes/(copy f), "
              "copy = %.4g B/s (%s), MAPE %.1f%%",
              t.header_line + 1, t.last_line, used, fp8 ? "fp8" : "bf16/fp16", copy, copy_from,
              100.0 * fit.mape_frac);
    if (fit.through_origin) {
        note(res,
             "%s: the fitted GEMM intercept was negative; gemm_fixed_s kept from the base "
             "and f refit with t0 = 0",
             bn);
    } else {
        set_fig(hw, res, SIM_HWF_GEMM_FIXED, fit.a, SIM_PROV_DERIVED);
        source_of(hw->src[SIM_HWF_GEMM_FIXED], path,
                  ": intercept t0 of the weight-streaming fit (bw_factor_weights_frac), %zu "
                  "shapes with m <= 16",
                  used);
    }
cleanup:
    sim_gemm_table_free(&t);
    return st;
}

/* {"value": v, "status": s, "source": src}, or NULL when out of memory. */
static cJSON *figure_json(double v, sim_prov p, const char *src)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !sim_j_add_number(o, "value", v) ||
        !cJSON_AddStringToObject(o, "status", sim_prov_name(p)) ||
        !cJSON_AddStringToObject(o, "source", src)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Replaces key in obj with item (or adds it); takes ownership of item. Returns 0 on failure. */
static int put(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return 0;
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item) ? 1 : (cJSON_Delete(item), 0);
    return cJSON_AddItemToObject(obj, key, item) ? 1 : (cJSON_Delete(item), 0);
}

/* The base's allreduce entry object for n GPUs, or NULL. */
static const cJSON *base_ar_entry(const cJSON *arr, int n)
{
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) {
        const cJSON *ng = cJSON_GetObjectItemCaseSensitive(e, "n_gpus");
        if (cJSON_IsNumber(ng) && ng->valuedouble == (double)n)
            return e;
    }
    return NULL;
}

/* Adds "regimes" to an allreduce entry object when a has any; 0 when out of memory. */
static int add_regimes(cJSON *e, const sim_allreduce *a)
{
    if (a->n_regimes == 0)
        return 1;
    cJSON *arr = cJSON_AddArrayToObject(e, "regimes");
    for (int k = 0; arr && k < a->n_regimes; k++) {
        cJSON *g = cJSON_CreateObject();
        if (!g || !cJSON_AddItemToArray(arr, g)) {
            cJSON_Delete(g);
            return 0;
        }
        if (!sim_j_add_number(g, "from_bytes", a->regimes[k].from_bytes) ||
            !sim_j_add_number(g, "latency_s", a->regimes[k].latency_s) ||
            !sim_j_add_number(g, "bus_bw_bytes_per_s", a->regimes[k].bus_bw_bytes_per_s))
            return 0;
    }
    return arr != NULL;
}

static cJSON *allreduce_json(const sim_hw *hw, const sim_import_result *res, const cJSON *base)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < hw->n_allreduce; i++) {
        const sim_allreduce *a = &hw->allreduce[i];
        cJSON *e = NULL;
        if (res->ar_changed[i]) {
            e = cJSON_CreateObject();
            if (e && (!sim_j_add_number(e, "n_gpus", a->n_gpus) ||
                      !sim_j_add_number(e, "latency_s", a->latency_s) ||
                      !sim_j_add_number(e, "bus_bw_bytes_per_s", a->bus_bw_bytes_per_s) ||
                      !add_regimes(e, a) ||
                      !cJSON_AddStringToObject(e, "status", sim_prov_name(a->prov)) ||
                      !cJSON_AddStringToObject(e, "source", a->source))) {
                cJSON_Delete(e);
                e = NULL;
            }
        } else {
            e = cJSON_Duplicate(base_ar_entry(base, a->n_gpus), 1);
        }
        if (!e || !cJSON_AddItemToArray(arr, e)) {
            cJSON_Delete(e);
            cJSON_Delete(arr);
            arr = NULL;
        }
    }
    return arr;
}

/*
 * Edits the base profile's JSON tree in place: id, source, the changed figures,
 * the allreduce list, and a "_comment" that keeps the base's own source note.
 */
static int edit_tree(cJSON *root, const sim_import_opts *o, const sim_hw *base, const sim_hw *hw,
                     const sim_import_result *res)
{
    char src[SIM_HW_SOURCE_LEN], files[SIM_HW_SOURCE_LEN * 4] = "";
    size_t len = 0;
    const char *sep = "";
    if (o->stream_path) {
        len += (size_t)snprintf(files + len, sizeof(files) - len, "stream %s", o->stream_path);
        sep = "; ";
    }
    for (int i = 0; i < o->n_nccl && len < sizeof(files); i++) {
        len += (size_t)snprintf(files + len, sizeof(files) - len, "%s%s%s", i ? ", " : sep,
                                i ? "" : "nccl ", o->nccl_paths[i]);
        sep = "; ";
    }
    if (o->gemm_path && len < sizeof(files)) {
        len += (size_t)snprintf(files + len, sizeof(files) - len, "%sgemm %s", sep, o->gemm_path);
        sep = "; ";
    }
    if (o->tables_path && len < sizeof(files))
        snprintf(files + len, sizeof(files) - len, "%skernel tables %s", sep, o->tables_path);
    snprintf(src, sizeof(src), "llmstep hw import from base '%s' (%s): %s", base->id,
             base_name(o->base_path), files);
    int ok = put(root, "id", cJSON_CreateString(o->name)) &&
             put(root, "source", cJSON_CreateString(src));
    if (ok && o->tables_path && hw->stack[0])
        ok = put(root, "stack", cJSON_CreateString(hw->stack));
    for (int f = 0; ok && f < SIM_HWF_COUNT; f++)
        if (res->changed[f])
            ok = put(root, sim_hw_field_key((sim_hw_field)f),
                     figure_json(hw->v[f], hw->prov[f], hw->src[f]));
    int any_ar = 0;
    for (int i = 0; i < hw->n_allreduce; i++)
        any_ar |= res->ar_changed[i];
    if (ok && any_ar)
        ok = put(root, "allreduce",
                 allreduce_json(hw, res, cJSON_GetObjectItemCaseSensitive(root, "allreduce")));
    /* Keep the base's source note, which "source" no longer holds. */
    char keep[SIM_HW_SOURCE_LEN + 64];
    snprintf(keep, sizeof(keep), "imported from base '%s', whose source was: %s", base->id,
             base->source);
    cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "_comment");
    /* Re-importing into the same profile from the same inputs keeps one note, not a chain. */
    if (strcmp(base->source, src) == 0)
        return ok;
    if (ok && !c) {
        ok = put(root, "_comment", cJSON_CreateString(keep));
    } else if (ok && cJSON_IsArray(c)) {
        ok = cJSON_AddItemToArray(c, cJSON_CreateString(keep));
    } else if (ok) {
        cJSON *arr = cJSON_CreateArray();
        ok = arr && cJSON_AddItemToArray(arr, cJSON_Duplicate(c, 1)) &&
             cJSON_AddItemToArray(arr, cJSON_CreateString(keep));
        ok = ok ? put(root, "_comment", arr) : (cJSON_Delete(arr), 0);
    }
    return ok;
}

/* Every figure and all-reduce number finite before printing (cJSON writes NaN as null). */
static int all_finite(const sim_hw *hw)
{
    for (int f = 0; f < SIM_HWF_COUNT; f++)
        if (!isfinite(hw->v[f]))
            return 0;
    for (int i = 0; i < hw->n_allreduce; i++) {
        const sim_allreduce *a = &hw->allreduce[i];
        if (!isfinite(a->latency_s) || !isfinite(a->bus_bw_bytes_per_s))
            return 0;
        for (int k = 0; k < a->n_regimes; k++)
            if (!isfinite(a->regimes[k].from_bytes) || !isfinite(a->regimes[k].latency_s) ||
                !isfinite(a->regimes[k].bus_bw_bytes_per_s))
                return 0;
    }
    return 1;
}

static int valid_id(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof(((sim_hw *)0)->id))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

sim_status sim_hw_import(const sim_import_opts *o, sim_import_result *res, struct sim_err *err)
{
    memset(res, 0, sizeof(*res));
    sim_hw *base = malloc(sizeof(*base)), *hw = malloc(sizeof(*hw));
    char *buf = NULL, *out = NULL;
    cJSON *root = NULL;
    sim_status st = SIM_OK;
    if (!base || !hw) {
        sim_errf(err, "out of memory");
        st = SIM_ENOMEM;
        goto cleanup;
    }
    if (!valid_id(o->name)) {
        sim_errf(err, "--name '%s': expected 1 to 63 characters from [A-Za-z0-9._-]", o->name);
        st = SIM_EINVAL;
        goto cleanup;
    }
    struct stat sb;
    if (!o->out_path[0]) {
        sim_errf(err, "--out: an empty file name (expected a path to write)");
        st = SIM_EINVAL;
        goto cleanup;
    }
    if (!o->force && stat(o->out_path, &sb) == 0) {
        sim_errf(err, "%s exists (use --force to overwrite it)", o->out_path);
        st = SIM_EINVAL;
        goto cleanup;
    }
    if (!o->stream_path && o->n_nccl == 0 && !o->gemm_path && !o->tables_path) {
        sim_errf(err, "nothing to import (give --stream, --nccl, --gemm or --tables)");
        st = SIM_EINVAL;
        goto cleanup;
    }
    st = sim_hw_load(o->base_path, base, err);
    if (st != SIM_OK)
        goto cleanup;
    *hw = *base;
    if (o->stream_path)
        st = import_stream(o->stream_path, hw, res, err);
    if (st == SIM_OK && o->n_nccl > 0)
        st = import_nccl(o, hw, res, err);
    if (st == SIM_OK && o->gemm_path)
        st = import_gemm(o->gemm_path, base, hw, res, err);
    if (st == SIM_OK && o->tables_path) {
        static sim_derive_result dr;
        st = sim_hw_derive_tables(o->tables_path, o->attn_kernel, hw, &dr, err);
        for (int f = 0; st == SIM_OK && f < SIM_HWF_COUNT; f++)
            res->changed[f] |= dr.changed[f];
        for (int j = 0; st == SIM_OK && j < SIM_HW_MAX_ALLREDUCE; j++)
            res->ar_changed[j] |= dr.ar_changed[j];
        for (int i = 0; st == SIM_OK && i < dr.n_notes; i++)
            note(res, "%s", dr.notes[i]);
    }
    if (st != SIM_OK)
        goto cleanup;
    struct sim_err verr;
    if (!all_finite(hw) || sim_hw_validate(hw, &verr) != SIM_OK) {
        sim_errf(err,
                 "the imported figures fail the profile checks: %s (wrong base profile, or MiB/s "
                 "read as MB/s?)",
                 all_finite(hw) ? verr.msg : "a value is not finite");
        st = SIM_ERANGE;
        goto cleanup;
    }
    /* Edit the base's own JSON so everything not imported stays exactly as it was. */
    size_t len = 0;
    st = sim_json_read_file(o->base_path, &buf, &len, err);
    if (st != SIM_OK)
        goto cleanup;
    sim_jctx ctx = {o->base_path, buf, NULL, "", 0, err};
    root = sim_json_parse(&ctx, len);
    if (!root || !edit_tree(root, o, base, hw, res)) {
        if (root)
            sim_errf(err, "out of memory building the profile");
        st = root ? SIM_ENOMEM : SIM_EPARSE;
        goto cleanup;
    }
    /* cJSON_Print's layout (the profiles' own), through the writer of every output. */
    sim_jw w;
    sim_jw_init_buffer(&w, SIM_JW_TABS);
    sim_j_write_tree(&w, NULL, root);
    size_t tl = 0;
    st = sim_jw_finish(&w);
    out = st == SIM_OK ? sim_jw_take(&w, &tl) : NULL;
    sim_jw_free(&w);
    if (!out) {
        st = st != SIM_OK ? st : SIM_ENOMEM;
        sim_errf(err, "writing the profile: %s", sim_strerror(st));
        goto cleanup;
    }
    /* The profile must pass the loader's own rules (its limits go beyond sim_hw_validate)
     * before it replaces anything: write it under a temporary name, load that, and only
     * then rename it into place; on failure nothing is left behind. */
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.check.%ld", o->out_path, (long)getpid()) >=
        sizeof(tmp)) {
        sim_errf(err, "%s: path too long", o->out_path);
        st = SIM_EINVAL;
        goto cleanup;
    }
    st = sim_write_atomic(tmp, out, tl, err);
    if (st != SIM_OK)
        goto cleanup;
    struct sim_err lerr;
    st = sim_hw_load(tmp, &res->hw, &lerr);
    if (st != SIM_OK) {
        remove(tmp);
        /* Name the file that would have been written, not the temporary one. */
        const char *at = strstr(lerr.msg, tmp);
        const char *rest = at ? at + strlen(tmp) : lerr.msg;
        sim_errf(err, "the imported profile fails the loader's checks, nothing written: %s%s",
                 at ? o->out_path : "", rest);
        goto cleanup;
    }
    struct stat osb;
    if (lstat(o->out_path, &osb) == 0 && !S_ISREG(osb.st_mode)) {
        remove(tmp);
        sim_errf(err, "%s: exists and is not a regular file; not replaced", o->out_path);
        st = SIM_EINVAL;
        goto cleanup;
    }
    if (rename(tmp, o->out_path) != 0) {
        sim_errf(err, "%s: cannot write: %s", o->out_path, strerror(errno));
        remove(tmp);
        st = SIM_EIO;
    }
cleanup:
    free(out);
    cJSON_Delete(root);
    free(buf);
    free(base);
    free(hw);
    return st;
}
