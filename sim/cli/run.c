/* run.c - loading and resolving the inputs of a prediction run (see cli.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cli.h"
#include "deploy.h"
#include "units.h"

int cli_exit_of(sim_status st)
{
    if (st == SIM_OK)
        return CLI_OK;
    return st == SIM_ENOMEM || st == SIM_EFIT ? CLI_NUMERIC : CLI_BAD_INPUT;
}

void cli_json_open(sim_jw *w) { sim_jw_init_file(w, stdout, SIM_JW_COMPACT); }

int cli_json_close(sim_jw *w, const char *who)
{
    const sim_status st = sim_jw_finish(w);
    sim_jw_free(w);
    if (st == SIM_OK)
        return CLI_OK;
    cli_error("%s: writing the JSON output failed: %s", who, sim_strerror(st));
    return cli_exit_of(st);
}

void cli_run_spec_init(cli_run_spec *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->engine = NULL; /* the calibration's engine, else CLI_DEFAULT_ENGINE */
    spec->tp = 1;
    spec->pp = 1;
    spec->dp = 1;
    spec->mode = SIM_ROOFLINE_OP;
    sim_sched_cfg_unset(&spec->sched);
}

int cli_run_open(const cli_run_spec *spec, cli_run *run)
{
    memset(run, 0, sizeof(*run));
    run->cache = sim_cache_alloc(cli_data_dir());
    run->work = malloc(sizeof(*run->work));
    if (!run->cache || !run->work) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    const sim_deploy_in in = {.model = spec->model,
                              .hw = spec->hw,
                              .engine = spec->engine,
                              .default_engine = CLI_DEFAULT_ENGINE,
                              .engine_opt = "--engine",
                              .calibration = spec->calibration,
                              .dtype = spec->dtype,
                              .kv_dtype = spec->kv_dtype,
                              .tp = spec->tp,
                              .pp = spec->pp,
                              .dp = spec->dp,
                              .ep = spec->ep,
                              .sched = spec->sched,
                              .mode = spec->mode,
                              .gemm = spec->gemm,
                              .alpha = 1.0,
                              .no_host = spec->no_host,
                              .who = spec->who,
                              .check_memory = spec->check_memory && !spec->ignore_memory,
                              .memory_hint = spec->memory_hint,
                              .spec = spec->spec.method != SIM_SPEC_NONE ? &spec->spec : NULL,
                              .spec_model = spec->spec_model};
    sim_deployment d;
    struct sim_err err;
    sim_status st = sim_deploy_open(run->cache, &in, &d, &err);
    if (st != SIM_OK) {
        if (!spec->quiet)
            cli_error("%s", err.msg);
        return d.bad_option && st != SIM_ENOMEM ? CLI_USAGE : cli_exit_of(st);
    }
    if (d.cal_other_engine)
        cli_note_other_engine("llmstep", spec->calibration, &d);
    if (d.cal_other_class)
        cli_note_other_class("llmstep", d.cal_path, d.cal->fig_domain, d.m);
    run->d = d;
    sim_deployment_rebase(&run->d);
    run->model = *d.m;
    run->hw = *d.hw;
    run->engine = d.e;
    run->cfg = run->d.cfg;
    run->sched = d.s;
    run->mem = d.mem;
    snprintf(run->model_path, sizeof(run->model_path), "%s", d.model_path);
    return CLI_OK;
}

void cli_run_uncalibrated(const cli_run *run, char *buf, size_t cap)
{
    char hint[448];
    sim_deploy_uncalibrated_hint(run->cache, &run->d, hint, sizeof(hint));
    snprintf(buf, cap, "uncalibrated: alpha = 1, beta = 0; %s", hint);
}

void cli_note_other_engine(const char *who, const char *folder, const sim_deployment *d)
{
    fprintf(stderr,
            "%s: note: %s has no calibration of %s for engine %s (%s is for another engine): "
            "uncalibrated\n",
            who, folder, d->hw->id, d->e.id, d->cal_other_engine);
}

void cli_note_other_class(const char *who, const char *path, unsigned domain, const sim_model *m)
{
    char classes[128];
    sim_calib_domain_str(domain, classes, sizeof(classes));
    fprintf(stderr,
            "%s: note: %s's figures were fitted on %s models, not %s: using its "
            "alpha/beta-only fit on the profile as it is\n",
            who, path, classes, sim_model_class_name(sim_model_class_of(m)));
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

const char *cli_layout_name(const sim_run_cfg *cfg, char *buf, size_t cap)
{
    int n = cfg->pp > 1 ? snprintf(buf, cap, "TP %d x PP %d", cfg->tp, cfg->pp)
                        : snprintf(buf, cap, "TP %d", cfg->tp);
    if (n > 0 && (size_t)n < cap && cfg->dp > 1)
        n += snprintf(buf + n, cap - (size_t)n, " x DP %d", cfg->dp);
    if (n > 0 && (size_t)n < cap && cfg->ep)
        snprintf(buf + n, cap - (size_t)n, ", EP %d", cfg->tp * sim_run_dp(cfg));
    return buf;
}

int cli_check_layout(const sim_model *m, const sim_hw *hw, int64_t tp, int64_t pp, const char *who)
{
    struct sim_err err;
    if (sim_deploy_check_layout(m, hw, tp, pp, who, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_check_memory(const sim_setup *su, const sim_sched_cfg *sc, const sim_memory *mem,
                     const char *who)
{
    struct sim_err err;
    /* A serving simulation cannot go on without its KV cache. */
    const char *hint = strcmp(who, "serve: ") == 0 ? "" : " (--ignore-memory to go on)";
    if (sim_deploy_check_memory(su, sc, mem, who, hint, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_run_batch(cli_run *run, const sim_batch *b, sim_batch_result *r)
{
    struct sim_err err;
    const sim_setup su = cli_run_setup(run);
    if (sim_batch_simulate(&su, b, run->work, r, &err) != SIM_OK) {
        cli_error("%s on %s at TP %d: %s", run->model.id, run->hw.id, run->cfg.tp, err.msg);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_output_clear(const char *cmd, const char *opt, const char *out, const sim_cache *cache,
                     const char *const *inputs, size_t n)
{
    struct sim_err err;
    if (sim_output_clear(out, cache, inputs, n, cmd, opt, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_USAGE;
    }
    return CLI_OK;
}

void cli_run_close(cli_run *run)
{
    free(run->work);
    run->work = NULL;
    sim_cache_free(run->cache);
    run->cache = NULL;
}

int cli_band(const cli_run *run, const char *who, int family, int64_t level, sim_pred_band *out)
{
    struct sim_err err;
    if (sim_deploy_band(&run->d, family, (int)level, out, &err) == SIM_OK)
        return CLI_OK;
    cli_error("%s: --interval %lld: %s", who, (long long)level, err.msg);
    return CLI_USAGE;
}

void cli_band_range(char *buf, size_t cap, const sim_pred_band *b, double predicted_s)
{
    const double lo = b->lo_frac * predicted_s, hi = b->hi_frac * predicted_s;
    if (predicted_s >= 1.0)
        snprintf(buf, cap, "%.4f - %.4f s", lo, hi);
    else
        snprintf(buf, cap, "%.4f - %.4f ms", sim_s_to_ms(lo), sim_s_to_ms(hi));
}

void cli_band_line(const char *what, const sim_pred_band *b, double predicted_s)
{
    char label[48], range[64];
    if (what)
        snprintf(label, sizeof(label), "%s %d%% band", what, b->level_pct);
    else
        snprintf(label, sizeof(label), "%d%% band", b->level_pct);
    cli_band_range(range, sizeof(range), b, predicted_s);
    printf("  %-16s %s   (P%d-P%d of measured / predicted: %lld held-out %s rows of the "
           "calibration, held out by %s)\n",
           label, range, (100 - b->level_pct) / 2, (100 + b->level_pct) / 2, (long long)b->n_rows,
           sim_band_family_name(b->family), b->held_out_by);
}
