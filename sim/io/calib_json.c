/* calib_json.c - see calib_json.h. */
#include "calib_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "atomic_write.h"
#include "err.h"
#include "json_util.h"
#include "json_writer.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* "figures": {"<figure key>": {"value": v, "stderr": s}, ...} (calib_json.h). */
static sim_status parse_figures(const sim_jctx *parent, const cJSON *obj, sim_calib *c)
{
    if (!cJSON_IsObject(obj))
        return sim_j_fail(parent, "figures",
                          "wrong type (expected an object of {\"value\", \"stderr\"} by figure)");
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, "figures");
    ctx.prefix = "figures.";
    static const char *const keys[] = {"value", "stderr"};
    /* Duplicate keys are refused, unknown ones are checked against the figure table below. */
    for (const cJSON *e = obj->child; e; e = e->next) {
        const int f = e->string ? sim_hw_field_find(e->string) : -1;
        if (f < 0)
            return sim_j_fail(&ctx, e->string ? e->string : "",
                              "not a hardware-profile figure (expected a figure key of "
                              "docs/hwprofile.md, e.g. gemm_eff_fp16_frac)");
        for (int k = 0; k < c->n_figures; k++)
            if ((int)c->fig_field[k] == f)
                return sim_j_fail_nth(&ctx, e->string, 1, "duplicate key");
        if (!cJSON_IsObject(e))
            return sim_j_fail(&ctx, e->string,
                              "wrong type (expected an object {\"value\": v, \"stderr\": s})");
        char prefix[96];
        snprintf(prefix, sizeof(prefix), "figures.%s.", e->string);
        sim_jctx fc = ctx;
        fc.scope = sim_j_locate(&ctx, e->string);
        fc.prefix = prefix;
        sim_status st = sim_j_check_keys(&fc, e, keys, N(keys), NULL, 0, 1);
        double lo = 0.0, hi = 1e300, scale = 0.0, v = 0.0, se = (double)NAN;
        const int flag = f == SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD;
        if (flag)
            hi = 1.0;
        else
            sim_hw_field_fit_range((sim_hw_field)f, &lo, &hi, &scale);
        if (st == SIM_OK)
            st = sim_j_num(&fc, e, "value", 1, lo, hi, &v, NULL);
        if (st == SIM_OK && flag && v != 0.0 && v != 1.0)
            st = sim_j_fail(&fc, "value", "not a flag (expected 0 or 1, got %.17g)", v);
        if (st == SIM_OK)
            st = sim_j_num(&fc, e, "stderr", 0, 0.0, 1e300, &se, NULL);
        if (st != SIM_OK)
            return st;
        c->fig_field[c->n_figures] = (sim_hw_field)f;
        c->fig_value[c->n_figures] = v;
        c->fig_stderr[c->n_figures] = se;
        c->n_figures++;
    }
    return SIM_OK;
}

/* "figure_domain": ["dense-gqa", ...] and "alpha_beta_only": {"alpha", "beta_s"}, both or
 * neither (without figures they change nothing: sim_calib_figures_apply). */
static sim_status parse_domain(const sim_jctx *ctx, const cJSON *root, sim_calib *c)
{
    const cJSON *dom = cJSON_GetObjectItemCaseSensitive(root, "figure_domain");
    const cJSON *ab = cJSON_GetObjectItemCaseSensitive(root, "alpha_beta_only");
    if (!dom && !ab)
        return SIM_OK;
    if (!dom || !ab)
        return sim_j_fail(ctx, dom ? "figure_domain" : "alpha_beta_only",
                          "given without %s (a figure fit writes both)",
                          dom ? "alpha_beta_only" : "figure_domain");
    if (!cJSON_IsArray(dom) || cJSON_GetArraySize(dom) == 0)
        return sim_j_fail(ctx, "figure_domain",
                          "wrong type (expected a non-empty array of model classes)");
    for (const cJSON *e = dom->child; e; e = e->next) {
        const int k = cJSON_IsString(e) ? sim_model_class_find(e->valuestring) : -1;
        if (k < 0)
            return sim_j_fail(ctx, "figure_domain",
                              "'%s' is not a model class (expected dense-mha, dense-gqa, "
                              "dense-mla, moe-mha, moe-gqa or moe-mla)",
                              cJSON_IsString(e) ? e->valuestring : "(not a string)");
        c->fig_domain |= 1u << k;
    }
    if (!cJSON_IsObject(ab))
        return sim_j_fail(ctx, "alpha_beta_only", "wrong type (expected {\"alpha\", \"beta_s\"})");
    sim_jctx ac = *ctx;
    ac.scope = sim_j_locate(ctx, "alpha_beta_only");
    ac.prefix = "alpha_beta_only.";
    static const char *const keys[] = {"alpha", "beta_s"};
    sim_status st = sim_j_check_keys(&ac, ab, keys, N(keys), NULL, 0, 1);
    if (st == SIM_OK)
        st = sim_j_num(&ac, ab, "alpha", 1, 1e-6, 1e6, &c->ab_alpha, NULL);
    if (st == SIM_OK)
        st = sim_j_num(&ac, ab, "beta_s", 1, 0.0, SIM_BETA_MAX_S, &c->ab_beta_s, NULL);
    return st;
}

static const char *const band_names[SIM_BAND_FAMILIES] = {
    "offline_batch", "prefill", "decode", "step", "ttft", "ttft_queued", "tpot", "e2e"};

const char *sim_band_family_name(int family)
{
    return family >= 0 && family < SIM_BAND_FAMILIES ? band_names[family] : "?";
}

int sim_band_level_valid(int64_t level_pct)
{
    return level_pct >= 10 && level_pct <= 100 && level_pct % 10 == 0;
}

int sim_band_interval(const sim_calib_band *b, int family, int level_pct, double *lo, double *hi)
{
    if (!b->held_out_by[0] || family < 0 || family >= SIM_BAND_FAMILIES || b->n_rows[family] < 1 ||
        !sim_band_level_valid(level_pct))
        return 0;
    /* Quantile k is at 5 k percent: (100 - level) / 2 percent is k = (100 - level) / 10. */
    const int k = (100 - level_pct) / 10;
    *lo = b->ratio_q[family][k];
    *hi = b->ratio_q[family][SIM_BAND_QUANTILES - 1 - k];
    return 1;
}

/* "band": {"held_out_by": FIELD, "families": {NAME: {"n_rows": n, "ratio_quantiles": [21
 * positive numbers, non-decreasing]}, ...}}. */
static sim_status parse_band(const sim_jctx *parent, const cJSON *obj, sim_calib_band *b)
{
    sim_jctx ctx = *parent;
    ctx.prefix = "band.";
    static const char *const keys[] = {"held_out_by", "families"};
    if (!cJSON_IsObject(obj))
        return sim_j_fail(parent, "band", "wrong type (expected an object)");
    sim_status st = sim_j_check_keys(&ctx, obj, keys, N(keys), NULL, 0, 1);
    if (st == SIM_OK)
        st = sim_j_str(&ctx, obj, "held_out_by", 1, b->held_out_by, sizeof(b->held_out_by), NULL);
    if (st == SIM_OK && !b->held_out_by[0])
        return sim_j_fail(&ctx, "held_out_by", "empty (expected the field of the folds)");
    const cJSON *fams = cJSON_GetObjectItemCaseSensitive(obj, "families");
    if (st != SIM_OK)
        return st;
    if (!cJSON_IsObject(fams))
        return sim_j_fail(&ctx, "families", "wrong type (expected an object)");
    sim_jctx famc = ctx;
    famc.prefix = "band.families.";
    st = sim_j_check_keys(&famc, fams, band_names, N(band_names), NULL, 0, 1);
    for (int f = 0; st == SIM_OK && f < SIM_BAND_FAMILIES; f++) {
        const cJSON *fo = cJSON_GetObjectItemCaseSensitive(fams, band_names[f]);
        if (!fo)
            continue;
        sim_jctx fc = ctx;
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "band.families.%s.", band_names[f]);
        fc.prefix = prefix;
        static const char *const fkeys[] = {"n_rows", "ratio_quantiles"};
        if (!cJSON_IsObject(fo))
            return sim_j_fail(&famc, band_names[f], "wrong type (expected an object)");
        st = sim_j_check_keys(&fc, fo, fkeys, N(fkeys), NULL, 0, 1);
        if (st == SIM_OK)
            st = sim_j_int(&fc, fo, "n_rows", 1, 1, 1000000000, &b->n_rows[f], NULL);
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(fo, "ratio_quantiles");
        if (st == SIM_OK && (!cJSON_IsArray(q) || cJSON_GetArraySize(q) != SIM_BAND_QUANTILES))
            return sim_j_fail(&fc, "ratio_quantiles",
                              "expected %d ratios (measured / predicted at 0, 5, ..., 100 %%)",
                              SIM_BAND_QUANTILES);
        int k = 0;
        for (const cJSON *v = q ? q->child : NULL; st == SIM_OK && v; v = v->next, k++) {
            const double r = cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
            if (!(r > 0.0 && r < 1e6) || (k > 0 && r < b->ratio_q[f][k - 1]))
                return sim_j_fail(&fc, "ratio_quantiles",
                                  "element %d: expected a positive ratio below 1e6, not below "
                                  "the one before",
                                  k);
            b->ratio_q[f][k] = r;
        }
    }
    return st;
}

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *out)
{
    sim_calib *c = out;
    static const char *const keys[] = {
        "schema",        "hardware",       "alpha",         "beta_s",        "alpha_stderr",
        "beta_stderr_s", "bounds",         "n_rows",        "fit",           "trained_on",
        "engine",        "engine_version", "roofline_mode", "weighting",     "command",
        "covariance",    "figures",        "figure_fit",    "figure_domain", "alpha_beta_only",
        "band",          "refit_of"};
    static const char *const ignored[] = {"_comment"};
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected a JSON object");
    sim_status st = sim_j_check_keys(ctx, root, keys, N(keys), ignored, N(ignored), 1);
    char schema[64];
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "schema", 1, schema, sizeof(schema), NULL);
    if (st == SIM_OK && strcmp(schema, SIM_CALIB_SCHEMA) != 0)
        return sim_j_fail(ctx, "schema", "unsupported schema (expected '%s', got '%s')",
                          SIM_CALIB_SCHEMA, schema);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "hardware", 1, c->hardware, sizeof(c->hardware), NULL);
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "engine", 0, c->engine, sizeof(c->engine), NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "alpha", 1, 1e-6, 1e6, &c->alpha, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "beta_s", 1, 0.0, SIM_BETA_MAX_S, &c->beta_s, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "alpha_stderr", 0, 0.0, 1e300, &c->alpha_stderr, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "beta_stderr_s", 0, 0.0, 1e300, &c->beta_stderr_s, NULL);
    const cJSON *cov = cJSON_GetObjectItemCaseSensitive(root, "covariance");
    if (st == SIM_OK && cov && !cJSON_IsObject(cov))
        st = sim_j_fail(ctx, "covariance", "wrong type (expected an object)");
    int64_t n = -1;
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "n_rows", 0, 0, 1000000000, &n, NULL);
    c->n_rows = (long long)n;
    const cJSON *figs = cJSON_GetObjectItemCaseSensitive(root, "figures");
    if (st == SIM_OK && figs)
        st = parse_figures(ctx, figs, c);
    if (st == SIM_OK)
        st = parse_domain(ctx, root, c);
    const cJSON *band = cJSON_GetObjectItemCaseSensitive(root, "band");
    if (st == SIM_OK && band)
        st = parse_band(ctx, band, &c->band);
    /* How it was fitted: one of the values calibrate writes (an unknown one is a file that was
     * not made by calibrate, or a typo). */
    static const struct {
        const char *key, *a, *b;
    } modes[] = {{"roofline_mode", "op", "step"}, {"weighting", "relative", "absolute"}};
    for (size_t i = 0; st == SIM_OK && i < N(modes); i++) {
        char v[32];
        int present = 0;
        st = sim_j_str(ctx, root, modes[i].key, 0, v, sizeof(v), &present);
        if (st == SIM_OK && present && strcmp(v, modes[i].a) != 0 && strcmp(v, modes[i].b) != 0)
            st = sim_j_fail(ctx, modes[i].key, "unknown value '%s' (expected %s or %s)", v,
                            modes[i].a, modes[i].b);
    }
    /* Provenance: read by people, only its type checked. */
    static const char *const objs[] = {"bounds", "fit", "trained_on", "figure_fit", "refit_of"};
    for (size_t i = 0; st == SIM_OK && i < N(objs); i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, objs[i]);
        if (o && !cJSON_IsObject(o))
            st = sim_j_fail(ctx, objs[i], "wrong type (expected an object)");
    }
    return st;
}

sim_status sim_calib_load(const char *path, sim_calib *c, struct sim_err *err)
{
    memset(c, 0, sizeof(*c));
    c->alpha_stderr = (double)NAN;
    c->beta_stderr_s = (double)NAN;
    for (int k = 0; k < SIM_HWF_COUNT; k++)
        c->fig_stderr[k] = (double)NAN;
    return sim_json_load_file(path, parse, c, err);
}

int sim_calib_figures_apply(const sim_calib *c, const sim_model *m)
{
    return c->n_figures == 0 || c->fig_domain == 0 || sim_model_in_classes(m, c->fig_domain);
}

int sim_calib_for_model(const sim_calib *c, const sim_model *m, sim_calib *out)
{
    if (out != c)
        *out = *c;
    if (sim_calib_figures_apply(c, m))
        return 0;
    out->alpha = c->ab_alpha;
    out->beta_s = c->ab_beta_s;
    out->alpha_stderr = out->beta_stderr_s = (double)NAN;
    out->n_figures = 0;
    return 1;
}

void sim_calib_domain_str(unsigned domain, char *buf, size_t cap)
{
    size_t u = 0;
    buf[0] = '\0';
    for (int k = 0; k < SIM_MCLASS_COUNT && u < cap; k++)
        if ((domain >> k) & 1u) {
            int w = snprintf(buf + u, cap - u, "%s%s", u ? ", " : "",
                             sim_model_class_name((sim_model_class)k));
            u += w > 0 ? (size_t)w : 0;
        }
}

sim_status sim_calib_apply_figures(const sim_calib *c, const char *path, sim_hw *hw,
                                   struct sim_err *err)
{
    for (int k = 0; k < c->n_figures; k++) {
        const sim_hw_field f = c->fig_field[k];
        if (!sim_hw_field_fit_may_set(hw, f)) {
            sim_errf(err, "%s: figures.%s: hardware profile '%s' has no such figure", path,
                     sim_hw_field_key(f), hw->id);
            return SIM_EINVAL;
        }
        hw->v[f] = c->fig_value[k];
        hw->prov[f] = SIM_PROV_DERIVED;
        snprintf(hw->src[f], sizeof(hw->src[f]), "fitted: %s (llmstep calibrate --fit)", path);
    }
    struct sim_err e;
    if (c->n_figures && sim_hw_validate(hw, &e) != SIM_OK) {
        sim_errf(err, "%s: figures: %s", path, e.msg);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

/* key: [the n strings v]. */
static void strings(sim_jw *w, const char *key, const char *const *v, int n)
{
    sim_jw_array_begin(w, key);
    for (int i = 0; i < n; i++)
        sim_jw_str(w, NULL, v[i]);
    sim_jw_array_end(w);
}

/* Writes key: v (null when not finite); NaN is allowed only when nan_ok. Returns 0 on a bad
 * number. */
static int add_num(sim_jw *w, const char *key, double v, int nan_ok)
{
    sim_jw_num(w, key, v);
    return isfinite(v) || (nan_ok && isnan(v));
}

/* A number of the calibration file, for add_nums. */
typedef struct num_item {
    const char *key;
    double v;
    int nan_ok;
} num_item;

/* Writes the n numbers f[] with add_num, in an object at key when key is not NULL; returns 0
 * on a bad number. */
static int add_nums(sim_jw *w, const char *key, const num_item *f, size_t n)
{
    int ok = 1;
    if (key)
        sim_jw_object_begin(w, key);
    for (size_t i = 0; i < n; i++)
        ok &= add_num(w, f[i].key, f[i].v, f[i].nan_ok);
    if (key)
        sim_jw_object_end(w);
    return ok;
}

/* The figure fit: "figures", "figure_domain" and "alpha_beta_only", "figure_fit". */
static int write_figures(sim_jw *w, const sim_calib_out *c)
{
    int ok = 1;
    if (c->n_figures > 0) {
        sim_jw_object_begin(w, "figures");
        for (int k = 0; k < c->n_figures; k++) {
            const num_item fig[] = {{"value", c->fig_value[k], 0}, {"stderr", c->fig_stderr[k], 1}};
            ok &= add_nums(w, sim_hw_field_key(c->fig_field[k]), fig, N(fig));
        }
        sim_jw_object_end(w);
    }
    if (c->n_figures > 0 && c->fig_domain) {
        sim_jw_array_begin(w, "figure_domain");
        for (int k = 0; k < SIM_MCLASS_COUNT; k++)
            if ((c->fig_domain >> k) & 1u)
                sim_jw_str(w, NULL, sim_model_class_name((sim_model_class)k));
        sim_jw_array_end(w);
        const num_item ab[] = {{"alpha", c->ab_alpha, 0}, {"beta_s", c->ab_beta_s, 0}};
        ok &= add_nums(w, "alpha_beta_only", ab, N(ab));
    }
    if (c->fit_loss) {
        sim_jw_object_begin(w, "figure_fit");
        sim_jw_str(w, "loss", c->fit_loss);
        sim_jw_object_begin(w, "undetermined");
        for (int k = 0; k < c->n_held; k++)
            sim_jw_str(w, sim_hw_field_key(c->held_field[k]), c->held_reason[k]);
        sim_jw_object_end(w);
        sim_jw_object_end(w);
    }
    return ok;
}

sim_status sim_calib_write(const char *path, const sim_calib_out *c, struct sim_err *err)
{
    const num_item fitted[] = {{"alpha", c->alpha, 0},
                               {"beta_s", c->beta_s, 0},
                               {"alpha_stderr", c->alpha_stderr, 1},
                               {"beta_stderr_s", c->beta_stderr_s, 1}};
    const num_item cov[] = {{"alpha_beta_s", c->cov_alpha_beta, 1}};
    const num_item bounds[] = {{"alpha_min", c->alpha_min, 0},
                               {"alpha_max", c->alpha_max, 0},
                               {"beta_min_s", c->beta_min_s, 0},
                               {"beta_max_s", c->beta_max_s, 0}};
    const num_item fit[] = {{"mape_pct", c->mape_pct, 0},
                            {"median_ape_pct", c->median_ape_pct, 0},
                            {"max_ape_pct", c->max_ape_pct, 0},
                            {"r2", c->r2, 1}};
    /* cJSON_Print's layout, which the shipped calibrations/ files have. */
    sim_jw w;
    sim_jw_init_buffer(&w, SIM_JW_TABS);
    sim_jw_object_begin(&w, NULL);
    sim_jw_str(&w, "schema", SIM_CALIB_SCHEMA);
    sim_jw_str(&w, "hardware", c->hardware);
    int ok = add_nums(&w, NULL, fitted, N(fitted));
    ok &= add_nums(&w, "covariance", cov, N(cov));
    sim_jw_object_begin(&w, "bounds");
    ok &= add_nums(&w, NULL, bounds, N(bounds));
    sim_jw_bool(&w, "alpha_at_bound", c->alpha_at_bound);
    sim_jw_bool(&w, "beta_at_bound", c->beta_at_bound);
    sim_jw_object_end(&w);
    sim_jw_num(&w, "n_rows", (double)c->n_rows);
    ok &= add_nums(&w, "fit", fit, N(fit));
    sim_jw_object_begin(&w, "trained_on");
    strings(&w, "files", c->files, c->n_files);
    strings(&w, "select", c->select, c->n_select);
    strings(&w, "exclude", c->exclude, c->n_exclude);
    if (c->scheduler_rule)
        sim_jw_str(&w, "scheduler_rule", c->scheduler_rule);
    sim_jw_object_end(&w);
    sim_jw_str(&w, "engine", c->engine);
    sim_jw_str(&w, "roofline_mode", c->roofline_mode);
    sim_jw_str(&w, "weighting", c->weighting);
    sim_jw_str(&w, "command", c->command);
    if (c->refit) {
        sim_jw_object_begin(&w, "refit_of");
        sim_jw_str(&w, "calibration", c->refit->calibration);
        ok &= add_num(&w, "alpha", c->refit->alpha, 0);
        ok &= add_num(&w, "beta_s", c->refit->beta_s, 0);
        sim_jw_int(&w, "level_pct", c->refit->level_pct);
        sim_jw_array_begin(&w, "drifted");
        for (int f = 0; f < SIM_BAND_FAMILIES; f++)
            if ((c->refit->drifted >> f) & 1u)
                sim_jw_str(&w, NULL, band_names[f]);
        sim_jw_array_end(&w);
        sim_jw_object_end(&w);
    }
    ok &= write_figures(&w, c);
    if (c->band && c->band->held_out_by[0]) {
        sim_jw_object_begin(&w, "band");
        sim_jw_str(&w, "held_out_by", c->band->held_out_by);
        sim_jw_object_begin(&w, "families");
        for (int f = 0; f < SIM_BAND_FAMILIES; f++) {
            if (c->band->n_rows[f] < 1)
                continue;
            sim_jw_object_begin(&w, band_names[f]);
            sim_jw_int(&w, "n_rows", c->band->n_rows[f]);
            sim_jw_array_begin(&w, "ratio_quantiles");
            for (int k = 0; k < SIM_BAND_QUANTILES; k++) {
                ok &= isfinite(c->band->ratio_q[f][k]);
                sim_jw_num(&w, NULL, c->band->ratio_q[f][k]);
            }
            sim_jw_array_end(&w);
            sim_jw_object_end(&w);
        }
        sim_jw_object_end(&w);
        sim_jw_object_end(&w);
    }
    sim_jw_object_end(&w);
    if (!ok) {
        sim_jw_free(&w);
        sim_errf(err, "%s: a fitted value is not finite; nothing written", path);
        return SIM_ERANGE;
    }
    size_t n = 0;
    char *text = sim_jw_finish(&w) == SIM_OK ? sim_jw_take(&w, &n) : NULL;
    if (!text) {
        sim_jw_free(&w);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    sim_status st = sim_write_atomic(path, text, n, err);
    free(text);
    return st;
}

/* What parse_known_error fills: the entry of one hardware id. */
typedef struct known_error_q {
    const char *hw_id;
    double *pct;
    char *basis;
    size_t cap;
    int found;
} known_error_q;

static sim_status parse_known_error(const sim_jctx *ctx, const cJSON *root, void *out)
{
    known_error_q *q = out;
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL, "top level: expected an object of hardware ids");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, q->hw_id);
    if (!e)
        return SIM_OK;
    if (!cJSON_IsObject(e))
        return sim_j_fail(ctx, q->hw_id, "wrong type (expected an object)");
    sim_jctx c = *ctx;
    c.scope = sim_j_locate(ctx, q->hw_id);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "known_error_pct");
    *q->pct = (double)NAN;
    if (v && !cJSON_IsNull(v)) {
        sim_status st = sim_j_num(&c, e, "known_error_pct", 1, 0.0, 1e6, q->pct, NULL);
        if (st != SIM_OK)
            return st;
    }
    sim_status st = sim_j_str(&c, e, "basis", 1, q->basis, q->cap, NULL);
    q->found = st == SIM_OK;
    return st;
}

sim_status sim_calib_known_error(const char *path, const char *hw_id, double *pct, char *basis,
                                 size_t cap, int *found, struct sim_err *err)
{
    known_error_q q = {hw_id, pct, basis, cap, 0};
    sim_status st = sim_json_load_file(path, parse_known_error, &q, err);
    *found = q.found;
    return st;
}

int sim_band_json(struct sim_jw *w, const char *key, const sim_pred_band *b, double predicted_s)
{
    const double lo = b->lo_frac * predicted_s, hi = b->hi_frac * predicted_s;
    sim_jw_object_begin(w, key);
    sim_jw_int(w, "level_pct", b->level_pct);
    sim_jw_str(w, "family", sim_band_family_name(b->family));
    sim_jw_num(w, "lo_s", lo);
    sim_jw_num(w, "hi_s", hi);
    sim_jw_num(w, "lo_frac", b->lo_frac);
    sim_jw_num(w, "hi_frac", b->hi_frac);
    sim_jw_int(w, "held_out_rows", b->n_rows);
    sim_jw_str(w, "held_out_by", b->held_out_by ? b->held_out_by : "");
    sim_jw_object_end(w);
    return !(isfinite(lo) && isfinite(hi));
}
