/* report_json.c - see report_json.h. */
#include "report_json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_util.h"

#include "err.h"

/* Adds a number, remembering the first non-finite key so the caller can fail. */
static void num(cJSON *o, const char *key, double v, const char **bad)
{
    if (!isfinite(v) && !*bad)
        *bad = key;
    sim_j_add_number(o, key, isfinite(v) ? v : 0.0);
}

/* A double member of a cost struct and the key it is written under. */
typedef struct num_field {
    const char *key;
    size_t off; /* offsetof the double in the struct */
} num_field;

/* The step's time split and counts (docs/model.md), in output order. */
static const num_field step_fields[] = {
    {"step_time_s", offsetof(sim_step_cost, step_s)},
    {"roofline_time_s", offsetof(sim_step_cost, roofline_s)},
    {"compute_time_s", offsetof(sim_step_cost, compute_s)},
    {"memory_time_s", offsetof(sim_step_cost, memory_s)},
    {"comm_time_s", offsetof(sim_step_cost, comm_s)},
    {"flops_per_gpu", offsetof(sim_step_cost, flops)},
    {"hbm_bytes_per_gpu", offsetof(sim_step_cost, bytes)},
};

/* One operator's figures, in output order. */
static const num_field op_fields[] = {
    {"flops_per_gpu", offsetof(sim_op_cost, flops)},
    {"hbm_bytes_per_gpu", offsetof(sim_op_cost, bytes)},
    {"weight_bytes_per_gpu", offsetof(sim_op_cost, weight_bytes)},
    {"compute_time_s", offsetof(sim_op_cost, compute_s)},
    {"memory_time_s", offsetof(sim_op_cost, memory_s)},
    {"time_s", offsetof(sim_op_cost, time_s)},
};

/* Adds the n fields f[] of the struct at base, as num() does. */
static void nums(cJSON *o, const void *base, const num_field *f, size_t n, const char **bad)
{
    for (size_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, (const char *)base + f[i].off, sizeof(v));
        num(o, f[i].key, v, bad);
    }
}

char *sim_report_predict_json(const sim_predict_report *r, struct sim_err *err)
{
    const char *bad = NULL;
    const sim_step_cost *c = r->cost;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        goto oom;
    cJSON_AddStringToObject(o, "schema_version", SIM_REPORT_SCHEMA);
    cJSON_AddStringToObject(o, "model", r->m->id);
    cJSON_AddStringToObject(o, "model_path", r->model_path);
    cJSON_AddStringToObject(o, "hardware", r->hw->id);
    cJSON_AddStringToObject(o, "hardware_path", r->hw_path);
    num(o, "tp", (double)r->cfg->tp, &bad);
    /* Only with --dp/--ep, so reports without them keep their keys. "groups" then holds one
     * DP rank's step. */
    if (r->cfg->dp > 1 || r->cfg->ep) {
        num(o, "dp", (double)sim_run_dp(r->cfg), &bad);
        cJSON_AddBoolToObject(o, "ep", r->cfg->ep != 0);
    }
    cJSON_AddStringToObject(o, "dtype", sim_dtype_name(r->cfg->dtype));
    cJSON_AddStringToObject(o, "kv_dtype", sim_dtype_name(r->cfg->kv_dtype));
    cJSON_AddStringToObject(o, "roofline_mode", r->cfg->mode == SIM_ROOFLINE_STEP ? "step" : "op");
    cJSON *groups = cJSON_AddArrayToObject(o, "groups");
    for (int i = 0; groups && i < r->step->n_groups; i++) {
        const sim_group *g = &r->step->groups[i];
        cJSON *gj = cJSON_CreateObject();
        if (!gj)
            goto oom;
        num(gj, "count", (double)g->count, &bad);
        num(gj, "new_tokens", (double)g->new_tokens, &bad);
        num(gj, "context_tokens", (double)g->context_tokens, &bad);
        cJSON_AddBoolToObject(gj, "emits", g->emits);
        cJSON_AddItemToArray(groups, gj);
    }
    nums(o, c, step_fields, sizeof(step_fields) / sizeof(step_fields[0]), &bad);
    num(o, "arithmetic_intensity_flops_per_byte", c->bytes > 0.0 ? c->flops / c->bytes : 0.0, &bad);
    num(o, "ridge_point_flops_per_byte", sim_hw_ridge_flops_per_byte(r->hw, r->cfg->dtype), &bad);
    cJSON_AddStringToObject(o, "bound", sim_bound_name(c->bound));
    num(o, "alpha", r->cfg->alpha, &bad);
    num(o, "beta_s", r->cfg->beta_s, &bad);
    cJSON_AddBoolToObject(o, "calibrated", r->calib_path != NULL);
    if (r->calib_path)
        cJSON_AddStringToObject(o, "calibration", r->calib_path);
    else
        cJSON_AddNullToObject(o, "calibration");
    num(o, "host_time_s", r->host_s, &bad);
    if (r->engine)
        cJSON_AddStringToObject(o, "engine", r->engine);
    else
        cJSON_AddNullToObject(o, "engine");
    num(o, "tokens", c->tokens, &bad);
    num(o, "sequences", c->seqs, &bad);
    num(o, "weights_bytes_per_gpu", r->weights_bytes_per_gpu, &bad);
    num(o, "kv_bytes_per_token_per_gpu", r->kv_bytes_per_token_per_gpu, &bad);
    num(o, "n_allreduce", (double)c->n_allreduce, &bad);
    if (r->tp1) {
        double speedup = r->tp1->roofline_s / c->roofline_s, n = (double)r->cfg->tp;
        num(o, "tp1_roofline_time_s", r->tp1->roofline_s, &bad);
        num(o, "tp_speedup", speedup, &bad);
        num(o, "amdahl_serial_frac", (n / speedup - 1.0) / (n - 1.0), &bad);
    }
    if (r->pp) {
        /* Pipeline stages (docs/model.md, "Pipeline parallelism"). */
        const sim_pp_cost *q = r->pp;
        num(o, "pp", (double)q->pp, &bad);
        num(o, "pp_latency_s", q->latency_s, &bad);
        num(o, "pp_interval_s", q->interval_s, &bad);
        num(o, "pp_cycle_full_s", sim_pp_cycle_s(q, q->pp), &bad);
        num(o, "pp_bubble_one_batch_frac", sim_pp_bubble_frac(q, 1), &bad);
        num(o, "pp_bubble_full_frac", sim_pp_bubble_frac(q, q->pp), &bad);
        cJSON *st = cJSON_AddArrayToObject(o, "stages");
        for (int i = 0; st && i < q->pp; i++) {
            cJSON *sj = cJSON_CreateObject();
            if (!sj)
                goto oom;
            num(sj, "layers", (double)q->layers[i], &bad);
            num(sj, "time_s", q->stage_s[i], &bad);
            num(sj, "transfer_s", q->transfer_s[i], &bad);
            cJSON_AddBoolToObject(sj, "transfer_internode", q->internode[i]);
            cJSON_AddItemToArray(st, sj);
        }
    }
    cJSON *ops = cJSON_AddArrayToObject(o, "ops");
    for (int i = 0; ops && i < SIM_OP_COUNT; i++) {
        const sim_op_cost *op = &c->ops[i];
        if (op->bound == SIM_BOUND_NONE)
            continue;
        cJSON *oj = cJSON_CreateObject();
        if (!oj)
            goto oom;
        cJSON_AddStringToObject(oj, "name", sim_op_name((sim_op_kind)i));
        nums(oj, op, op_fields, sizeof(op_fields) / sizeof(op_fields[0]), &bad);
        cJSON_AddStringToObject(oj, "bound", sim_bound_name(op->bound));
        cJSON_AddItemToArray(ops, oj);
    }
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (int i = 0; notes && i < r->n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(r->notes[i]));
    if (bad) {
        sim_errf(err, "%s: not a finite number; refusing to write it", bad);
        cJSON_Delete(o);
        return NULL;
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s)
        goto oom_nodel;
    size_t n = strlen(s);
    char *out = malloc(n + 2);
    if (!out) {
        cJSON_free(s);
        goto oom_nodel;
    }
    memcpy(out, s, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    cJSON_free(s);
    return out;
oom:
    cJSON_Delete(o);
oom_nodel:
    sim_errf(err, "out of memory while writing JSON");
    return NULL;
}
