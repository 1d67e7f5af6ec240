/* bundled.h - loads the files the source tree ships (models/, hwprofiles/, engines/) by id, for
 * the tests that take their figures from them. A file that does not load is a failed check:
 * the loader prints "FAIL load <path>: <message>", counts the failure (check.h) and returns -1,
 * and the caller skips the checks that needed the file. Needs SIM_SOURCE_DIR. */
#ifndef LLMSTEP_TESTS_BUNDLED_H
#define LLMSTEP_TESTS_BUNDLED_H

#include <stdio.h>

#include "check.h"
#include "engine_json.h"
#include "hw_json.h"
#include "model_json.h"

typedef enum bundled_kind { BUNDLED_MODEL, BUNDLED_HW, BUNDLED_ENGINE } bundled_kind;

/* <dir of kind>/<id>.json into *out, a sim_model, sim_hw or sim_engine as kind says; 0, or -1
 * after counting a failure. Call it through the typed wrappers below. */
static inline int load_bundled(bundled_kind kind, const char *id, void *out)
{
    static const char *const dirs[] = {"models", "hwprofiles", "engines"};
    char path[4096];
    struct sim_err err;
    snprintf(path, sizeof(path), "%s/%s/%s.json", SIM_SOURCE_DIR, dirs[kind], id);
    sim_status st = kind == BUNDLED_MODEL ? sim_model_load(path, id, out, &err)
                    : kind == BUNDLED_HW  ? sim_hw_load(path, out, &err)
                                          : sim_engine_load(path, out, &err);
    if (st != SIM_OK) {
        printf("FAIL load %s: %s\n", path, err.msg);
        check_fail_count++;
        return -1;
    }
    return 0;
}

static inline int load_model(const char *id, sim_model *m)
{
    return load_bundled(BUNDLED_MODEL, id, m);
}

static inline int load_hw(const char *id, sim_hw *hw) { return load_bundled(BUNDLED_HW, id, hw); }

static inline int load_engine(const char *id, sim_engine *e)
{
    return load_bundled(BUNDLED_ENGINE, id, e);
}

/* A model config at path into *m (the path is its id); 0, or -1 after counting a failed load. */
static inline int load_model_path(const char *path, sim_model *m)
{
    struct sim_err err;
    if (sim_model_load(path, path, m, &err) != SIM_OK) {
        printf("FAIL load %s: %s\n", path, err.msg);
        check_fail_count++;
        return -1;
    }
    return 0;
}

/* models/<id>.json into *m, and its parameter counts into *p; 0, or -1 after counting a failed
 * load. */
static inline int load_model_params(const char *id, sim_model *m, sim_param_count *p)
{
    if (load_model(id, m) != 0)
        return -1;
    sim_model_params(m, p);
    return 0;
}

/* ../shared/data/hf-configs/<file> into *m for the test named who: 0; 1 after printing
 * "SKIP who: ... not found" when the shared data is absent (the test then skips); -1 after
 * counting a failed load. Needs SIM_SHARED_DATA. */
static inline int load_shared_config(const char *file, const char *who, sim_model *m)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/hf-configs/%s", SIM_SHARED_DATA, file);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("SKIP %s: %s not found (../shared/data absent)\n", who, path);
        return 1;
    }
    fclose(f);
    return load_model_path(path, m);
}

#endif
