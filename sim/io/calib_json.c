/* calib_json.c - see calib_json.h. */
#include "calib_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static sim_status parse(const sim_jctx *ctx, const cJSON *root, sim_calib *c)
{
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
        st = sim_j_num(ctx, root, "alpha", 1, 1e-6, 1e6, &c->alpha, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "beta_s", 1, -1e3, 1e3, &c->beta_s, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "alpha_stderr", 0, 0.0, 1e300, &c->alpha_stderr, NULL);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "beta_stderr_s", 0, 0.0, 1e300, &c->beta_stderr_s, NULL);
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
    char *buf = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    memset(c, 0, sizeof(*c));
    c->alpha_stderr = NAN;
    c->beta_stderr_s = NAN;
    sim_status st = sim_json_read_file(path, &buf, &len, err);
    if (st != SIM_OK)
        goto cleanup;
    sim_jctx ctx = {path, buf, NULL, "", 0, err};
    root = sim_json_parse(&ctx, len);
    if (!root) {
        st = SIM_EPARSE;
        goto cleanup;
    }
    st = parse(&ctx, root, c);
cleanup:
    cJSON_Delete(root);
    free(buf);
    return st;
}
