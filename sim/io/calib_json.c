/* calib_json.c - see calib_json.h. */
#include "calib_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "atomic_write.h"
#include "errf.h"
#include "json_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static sim_status parse(const sim_jctx *ctx, const cJSON *root, void *out)
{
    sim_calib *c = out;
    static const char *const keys[] = {
        "schema",        "hardware",  "alpha",   "beta_s",     "alpha_stderr", "beta_stderr_s",
        "bounds",        "n_rows",    "fit",     "trained_on", "engine",       "engine_version",
        "roofline_mode", "weighting", "command", "covariance"};
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
        st = sim_j_num(ctx, root, "beta_s", 1, -1e3, 1e3, &c->beta_s, NULL);
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
    static const char *const objs[] = {"bounds", "fit", "trained_on"};
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
    return sim_json_load_file(path, parse, c, err);
}

static cJSON *strings(const char *const *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

/* Adds key: v; NaN allowed only when nan_ok (written as null). Returns 0 on a bad number. */
static int add_num(cJSON *o, const char *key, double v, int nan_ok)
{
    if (isfinite(v)) {
        cJSON_AddNumberToObject(o, key, v);
        return 1;
    }
    cJSON_AddNullToObject(o, key);
    return nan_ok && isnan(v);
}

/* A number of the calibration file, for add_nums. */
typedef struct num_item {
    const char *key;
    double v;
    int nan_ok;
} num_item;

/* Adds the n numbers f[] with add_num (none when o is NULL); returns 0 on a bad number. */
static int add_nums(cJSON *o, const num_item *f, size_t n)
{
    int ok = 1;
    for (size_t i = 0; o && i < n; i++)
        ok &= add_num(o, f[i].key, f[i].v, f[i].nan_ok);
    return ok;
}

sim_status sim_calib_write(const char *path, const sim_calib_out *c, struct sim_err *err)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        sim_io_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
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
    int ok = 1;
    cJSON_AddStringToObject(o, "schema", SIM_CALIB_SCHEMA);
    cJSON_AddStringToObject(o, "hardware", c->hardware);
    ok &= add_nums(o, fitted, N(fitted));
    ok &= add_nums(cJSON_AddObjectToObject(o, "covariance"), cov, N(cov));
    cJSON *b = cJSON_AddObjectToObject(o, "bounds");
    ok &= add_nums(b, bounds, N(bounds));
    if (b) {
        cJSON_AddBoolToObject(b, "alpha_at_bound", c->alpha_at_bound);
        cJSON_AddBoolToObject(b, "beta_at_bound", c->beta_at_bound);
    }
    cJSON_AddNumberToObject(o, "n_rows", (double)c->n_rows);
    ok &= add_nums(cJSON_AddObjectToObject(o, "fit"), fit, N(fit));
    cJSON *t = cJSON_AddObjectToObject(o, "trained_on");
    if (t) {
        cJSON_AddItemToObject(t, "files", strings(c->files, c->n_files));
        cJSON_AddItemToObject(t, "select", strings(c->select, c->n_select));
        cJSON_AddItemToObject(t, "exclude", strings(c->exclude, c->n_exclude));
    }
    cJSON_AddStringToObject(o, "engine", c->engine);
    cJSON_AddStringToObject(o, "roofline_mode", c->roofline_mode);
    cJSON_AddStringToObject(o, "weighting", c->weighting);
    cJSON_AddStringToObject(o, "command", c->command);
    if (!ok) {
        cJSON_Delete(o);
        sim_io_errf(err, "%s: a fitted value is not finite; nothing written", path);
        return SIM_ERANGE;
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (!s) {
        sim_io_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    size_t n = strlen(s);
    char *text = malloc(n + 2);
    sim_status st = SIM_ENOMEM;
    if (text) {
        memcpy(text, s, n);
        text[n] = '\n';
        text[n + 1] = '\0';
        st = sim_write_atomic(path, text, n + 1, err);
        free(text);
    } else {
        sim_io_errf(err, "out of memory");
    }
    cJSON_free(s);
    return st;
}
