/* run.c - loading and resolving the inputs of a prediction run (see cli.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "deploy.h"
#include "units.h"

void cli_run_spec_init(cli_run_spec *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->engine = NULL; /* the calibration's engine, else CLI_DEFAULT_ENGINE */
    spec->tp = 1;
    spec->mode = SIM_ROOFLINE_OP;
    sim_sched_cfg_unset(&spec->sched);
}

int cli_run_open(const cli_run_spec *spec, cli_run *run)
{
    memset(run, 0, sizeof(*run));
    struct sim_err err;
    int rc = cli_load_model_hw(spec->model, spec->hw, &run->model, &run->hw, run->model_path,
                               run->hw_path, sizeof(run->model_path));
    if (rc == CLI_OK && spec->calibration)
        rc = cli_load_calib(spec->calibration, run->hw.id, &run->calib);
    if (rc != CLI_OK)
        return rc;
    const char *engine;
    struct sim_err e;
    if (sim_deploy_pick_engine(spec->engine, spec->calibration ? &run->calib : NULL,
                               spec->calibration, CLI_DEFAULT_ENGINE, "", "--engine", &engine, NULL,
                               &e) != SIM_OK) {
        cli_error("%s", e.msg);
        return CLI_USAGE;
    }
    rc = cli_load_engine(engine, &run->engine, run->engine_path, sizeof(run->engine_path));
    if (rc != CLI_OK)
        return rc;
    sim_run_cfg *cfg = &run->cfg;
    *cfg = (sim_run_cfg){(int)spec->tp, run->model.dtype, run->model.dtype, spec->mode, 1.0,
                         0.0,           spec->gemm};
    rc = cli_resolve_dtypes(&run->model, spec->dtype, spec->kv_dtype, "", cfg);
    if (rc != CLI_OK)
        return rc;
    if (spec->calibration) {
        cfg->alpha = run->calib.alpha;
        cfg->beta_s = run->calib.beta_s;
    }
    rc = cli_check_tp_node(&run->hw, cfg->tp, "");
    if (rc != CLI_OK)
        return rc;
    if (sim_model_check_tp(&run->model, cfg->tp, &err) != SIM_OK ||
        sim_sched_resolve(&run->engine, &run->model, &run->hw, &spec->sched, &run->sched, &err) !=
            SIM_OK) {
        cli_error("%s: %s", run->model_path, err.msg);
        return CLI_BAD_INPUT;
    }
    sim_memory_compute(&run->engine, &run->model, &run->hw, cfg, &run->sched, &run->mem);
    run->work = malloc(sizeof(*run->work));
    if (!run->work) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    return CLI_OK;
}

int cli_resolve_dtypes(const sim_model *m, const char *dtype_s, const char *kv_s, const char *who,
                       sim_run_cfg *cfg)
{
    struct sim_err err;
    if (sim_deploy_resolve_dtypes(m, dtype_s, kv_s, who, cfg, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_USAGE;
    }
    return CLI_OK;
}

const char *cli_weight_format(const sim_model *m, const sim_run_cfg *cfg)
{
    return sim_deploy_weight_format(m, cfg);
}

int cli_check_tp_node(const sim_hw *hw, int64_t tp, const char *who)
{
    struct sim_err err;
    if (sim_deploy_check_tp_node(hw, tp, who, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_check_memory(const sim_engine *e, const sim_model *m, const sim_hw *hw,
                     const sim_run_cfg *cfg, const sim_sched_cfg *sc, const sim_sched_resolved *s,
                     const sim_memory *mem, const char *who)
{
    struct sim_err err;
    /* A serving simulation cannot go on without its KV cache. */
    const char *hint = strcmp(who, "serve: ") == 0 ? "" : " (--ignore-memory to go on)";
    if (sim_deploy_check_memory(e, m, hw, cfg, sc, s, mem, who, hint, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_run_batch(cli_run *run, const sim_batch *b, sim_batch_result *r)
{
    struct sim_err err;
    if (sim_batch_simulate(&run->engine, &run->model, &run->hw, &run->cfg, &run->sched, b,
                           run->work, r, &err) != SIM_OK) {
        cli_error("%s on %s at TP %d: %s", run->model.id, run->hw.id, run->cfg.tp, err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

void cli_run_close(cli_run *run)
{
    free(run->work);
    run->work = NULL;
}
