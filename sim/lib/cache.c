/* cache.c - files loaded once (see cache.h). */
#include "cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_json.h"
#include "err.h"
#include "hw_json.h"
#include "model_json.h"
#include "paths.h"

#define PATH_CAP 4096

enum { K_MODEL, K_HW, K_ENGINE, K_CALIB, K_HW_CALIBRATED, K_COUNT };

typedef struct entry {
    int kind;
    char path[PATH_CAP];
    void *obj;
} entry;

struct sim_cache {
    char data_dir[PATH_CAP];
    entry **e; /* each entry on the heap: the paths handed out stay put as the array grows */
    size_t n, cap;
};

static const char *const kind_dir[K_COUNT] = {"models", "hwprofiles", "engines", "calibrations",
                                              ""};
static const size_t kind_size[K_COUNT] = {sizeof(sim_model), sizeof(sim_hw), sizeof(sim_engine),
                                          sizeof(sim_calib), sizeof(sim_hw)};

sim_cache *sim_cache_alloc(const char *data_dir)
{
    sim_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    size_t n = strlen(data_dir);
    if (n >= sizeof(c->data_dir)) {
        free(c);
        return NULL;
    }
    memcpy(c->data_dir, data_dir, n + 1);
    return c;
}

void sim_cache_free(sim_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i]->obj);
        free(c->e[i]);
    }
    free(c->e);
    free(c);
}

const char *sim_cache_data_dir(const sim_cache *c) { return c->data_dir; }

size_t sim_cache_size(const sim_cache *c) { return c->n; }

const char *sim_cache_file_at(const sim_cache *c, size_t i)
{
    return i < c->n && c->e[i]->kind != K_HW_CALIBRATED ? c->e[i]->path : NULL;
}

sim_status sim_output_clear(const char *path, const sim_cache *c, const char *const *inputs,
                            size_t n, const char *who, const char *opt, struct sim_err *err)
{
    const size_t n_cache = c ? c->n : 0;
    for (size_t i = 0; path && i < n_cache + n; i++) {
        const char *in = i < n_cache ? sim_cache_file_at(c, i) : inputs[i - n_cache];
        if (in && in[0] && sim_path_same(path, in)) {
            sim_errf(err, "%s: %s %s is the input %s; it would be replaced", who, opt, path, in);
            return SIM_EINVAL;
        }
    }
    return SIM_OK;
}

/* Makes room for one more entry. */
static sim_status grow(sim_cache *c, struct sim_err *err)
{
    if (c->n < c->cap)
        return SIM_OK;
    size_t cap = c->cap ? 2 * c->cap : 16;
    entry **grown = realloc(c->e, cap * sizeof(*grown));
    if (!grown) {
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    c->e = grown;
    c->cap = cap;
    return SIM_OK;
}

/* A new entry at the end (grow has made room), or NULL when out of memory. */
static entry *append(sim_cache *c, int kind, const char *path, void *obj)
{
    entry *e = malloc(sizeof(*e));
    if (!e)
        return NULL;
    e->kind = kind;
    snprintf(e->path, sizeof(e->path), "%s", path);
    e->obj = obj;
    c->e[c->n++] = e;
    return e;
}

sim_status sim_cache_hw_calibrated(sim_cache *c, const sim_hw *hw, const sim_calib *cal,
                                   const char *cal_path, const sim_hw **out, struct sim_err *err)
{
    if (cal->n_figures == 0) {
        *out = hw;
        return SIM_OK;
    }
    /* The key: both objects, which the cache owns and keeps at fixed addresses. */
    char key[PATH_CAP];
    snprintf(key, sizeof(key), "%p %p", (const void *)hw, (const void *)cal);
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i]->kind == K_HW_CALIBRATED && strcmp(c->e[i]->path, key) == 0) {
            *out = c->e[i]->obj;
            return SIM_OK;
        }
    sim_status st = grow(c, err);
    sim_hw *copy = st == SIM_OK ? malloc(sizeof(*copy)) : NULL;
    if (st == SIM_OK && !copy) {
        sim_errf(err, "out of memory");
        st = SIM_ENOMEM;
    }
    if (st == SIM_OK) {
        *copy = *hw;
        st = sim_calib_apply_figures(cal, cal_path, copy, err);
    }
    if (st != SIM_OK) {
        free(copy);
        return st;
    }
    if (!append(c, K_HW_CALIBRATED, key, copy)) {
        free(copy);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    *out = copy;
    return SIM_OK;
}

static sim_status load(sim_cache *c, int kind, const char *name, const void **out,
                       const char **path_out, struct sim_err *err)
{
    char path[PATH_CAP];
    sim_status st = sim_path_resolve(c->data_dir, kind_dir[kind], name, path, sizeof(path), err);
    if (st != SIM_OK)
        return st;
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i]->kind == kind && strcmp(c->e[i]->path, path) == 0) {
            *out = c->e[i]->obj;
            if (path_out)
                *path_out = c->e[i]->path;
            return SIM_OK;
        }
    if ((st = grow(c, err)) != SIM_OK)
        return st;
    void *obj = calloc(1, kind_size[kind]);
    if (!obj) {
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    switch (kind) {
    case K_MODEL:
        st = sim_model_load(path, name, obj, err);
        break;
    case K_HW:
        st = sim_hw_load(path, obj, err);
        break;
    case K_ENGINE:
        st = sim_engine_load(path, obj, err);
        break;
    default:
        st = sim_calib_load(path, obj, err);
        break;
    }
    if (st != SIM_OK) {
        free(obj);
        return st;
    }
    entry *e = append(c, kind, path, obj);
    if (!e) {
        free(obj);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    *out = obj;
    if (path_out)
        *path_out = e->path;
    return SIM_OK;
}

sim_status sim_cache_model(sim_cache *c, const char *name, const sim_model **out, const char **path,
                           struct sim_err *err)
{
    return load(c, K_MODEL, name, (const void **)out, path, err);
}

sim_status sim_cache_hw(sim_cache *c, const char *name, const sim_hw **out, const char **path,
                        struct sim_err *err)
{
    return load(c, K_HW, name, (const void **)out, path, err);
}

sim_status sim_cache_engine(sim_cache *c, const char *name, const sim_engine **out,
                            const char **path, struct sim_err *err)
{
    return load(c, K_ENGINE, name, (const void **)out, path, err);
}

sim_status sim_cache_calib(sim_cache *c, const char *name, const sim_calib **out, const char **path,
                           struct sim_err *err)
{
    return load(c, K_CALIB, name, (const void **)out, path, err);
}
