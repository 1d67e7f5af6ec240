/* report_json.c - see report_json.h. */
#include "report_json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json_writer.h"

/* Writes a number, remembering the first non-finite key so the caller can fail. */
static void num(sim_jw *w, const char *key, double v, const char **bad)
{
    if (!isfinite(v) && !*bad)
        *bad = key;
    sim_jw_num(w, key, v);
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

/* Writes the n fields f[] of the struct at base, as num() does. */
static void nums(sim_jw *w, const void *base, const num_field *f, size_t n, const char **bad)
{
    for (size_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, (const char *)base + f[i].off, sizeof(v));
        num(w, f[i].key, v, bad);
    }
}

/* The pipeline stages (docs/model.md, "Pipeline parallelism"). */
static void pipeline(sim_jw *w, const sim_pp_cost *q, const char **bad)
{
    num(w, "pp", (double)q->pp, bad);
    num(w, "pp_latency_s", q->latency_s, bad);
    num(w, "pp_interval_s", q->interval_s, bad);
    num(w, "pp_cycle_full_s", sim_pp_cycle_s(q, q->pp), bad);
    num(w, "pp_bubble_one_batch_frac", sim_pp_bubble_frac(q, 1), bad);
    num(w, "pp_bubble_full_frac", sim_pp_bubble_frac(q, q->pp), bad);
    sim_jw_array_begin(w, "stages");
    for (int i = 0; i < q->pp; i++) {
        sim_jw_object_begin(w, NULL);
        num(w, "layers", (double)q->layers[i], bad);
        num(w, "time_s", q->stage_s[i], bad);
        num(w, "transfer_s", q->transfer_s[i], bad);
        sim_jw_bool(w, "transfer_internode", q->internode[i]);
        sim_jw_object_end(w);
    }
    sim_jw_array_end(w);
}

/* What was predicted: model, hardware, layout, dtypes and the step's groups. */
static void setup(sim_jw *w, const sim_predict_report *r, const char **bad)
{
    sim_jw_str(w, "schema_version", SIM_REPORT_SCHEMA);
    sim_jw_str(w, "model", r->m->id);
    sim_jw_str(w, "model_path", r->model_path);
    sim_jw_str(w, "hardware", r->hw->id);
    sim_jw_str(w, "hardware_path", r->hw_path);
    num(w, "tp", (double)r->cfg->tp, bad);
    /* Only with --dp/--ep, so reports without them keep their keys. "groups" then holds one
     * DP rank's step. */
    if (r->cfg->dp > 1 || r->cfg->ep) {
        num(w, "dp", (double)sim_run_dp(r->cfg), bad);
        sim_jw_bool(w, "ep", r->cfg->ep != 0);
    }
    sim_jw_str(w, "dtype", sim_dtype_name(r->cfg->dtype));
    sim_jw_str(w, "kv_dtype", sim_dtype_name(r->cfg->kv_dtype));
    sim_jw_str(w, "roofline_mode", r->cfg->mode == SIM_ROOFLINE_STEP ? "step" : "op");
    sim_jw_array_begin(w, "groups");
    for (int i = 0; i < r->step->n_groups; i++) {
        const sim_group *g = &r->step->groups[i];
        sim_jw_object_begin(w, NULL);
        num(w, "count", (double)g->count, bad);
        num(w, "new_tokens", (double)g->new_tokens, bad);
        num(w, "context_tokens", (double)g->context_tokens, bad);
        sim_jw_bool(w, "emits", g->emits);
        sim_jw_object_end(w);
    }
    sim_jw_array_end(w);
}

char *sim_report_predict_json(const sim_predict_report *r, struct sim_err *err)
{
    const char *bad = NULL;
    const sim_step_cost *c = r->cost;
    sim_jw w;
    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_object_begin(&w, NULL);
    setup(&w, r, &bad);
    nums(&w, c, step_fields, sizeof(step_fields) / sizeof(step_fields[0]), &bad);
    num(&w, "arithmetic_intensity_flops_per_byte", c->bytes > 0.0 ? c->flops / c->bytes : 0.0,
        &bad);
    num(&w, "ridge_point_flops_per_byte", sim_hw_ridge_flops_per_byte(r->hw, r->cfg->dtype), &bad);
    sim_jw_str(&w, "bound", sim_bound_name(c->bound));
    sim_jw_str(&w, "decode_kernel", sim_decode_kernel_name(c->decode_kernel));
    if (c->decode_blocks_resident > 0.0) /* PagedAttention's blocks in flight, a count */
        num(&w, "decode_blocks_resident", c->decode_blocks_resident, &bad);
    else
        sim_jw_null(&w, "decode_blocks_resident");
    if (r->m->n_experts > 0 && r->m->n_moe_layers > 0)
        sim_jw_str(&w, "moe_kernel", sim_moe_class_name(sim_moe_class_of(r->m, r->cfg)));
    else
        sim_jw_null(&w, "moe_kernel");
    num(&w, "alpha", r->cfg->alpha, &bad);
    num(&w, "beta_s", r->cfg->beta_s, &bad);
    sim_jw_bool(&w, "calibrated", r->calib_path != NULL);
    if (r->calib_path)
        sim_jw_str(&w, "calibration", r->calib_path);
    else
        sim_jw_null(&w, "calibration");
    num(&w, "host_time_s", r->host_s, &bad);
    if (r->band && sim_band_json(&w, "band", r->band, c->step_s) && !bad)
        bad = "band";
    if (r->engine)
        sim_jw_str(&w, "engine", r->engine);
    else
        sim_jw_null(&w, "engine");
    num(&w, "tokens", c->tokens, &bad);
    num(&w, "sequences", c->seqs, &bad);
    num(&w, "weights_bytes_per_gpu", r->weights_bytes_per_gpu, &bad);
    num(&w, "kv_bytes_per_token_per_gpu", r->kv_bytes_per_token_per_gpu, &bad);
    num(&w, "n_allreduce", (double)c->n_allreduce, &bad);
    if (r->tp1) {
        double speedup = r->tp1->roofline_s / c->roofline_s, n = (double)r->cfg->tp;
        num(&w, "tp1_roofline_time_s", r->tp1->roofline_s, &bad);
        num(&w, "tp_speedup", speedup, &bad);
        num(&w, "amdahl_serial_frac", (n / speedup - 1.0) / (n - 1.0), &bad);
    }
    if (r->pp)
        pipeline(&w, r->pp, &bad);
    sim_jw_array_begin(&w, "ops");
    for (int i = 0; i < SIM_OP_COUNT; i++) {
        const sim_op_cost *op = &c->ops[i];
        if (op->bound == SIM_BOUND_NONE)
            continue;
        sim_jw_object_begin(&w, NULL);
        sim_jw_str(&w, "name", sim_op_name((sim_op_kind)i));
        nums(&w, op, op_fields, sizeof(op_fields) / sizeof(op_fields[0]), &bad);
        sim_jw_str(&w, "bound", sim_bound_name(op->bound));
        sim_jw_object_end(&w);
    }
    sim_jw_array_end(&w);
    sim_jw_array_begin(&w, "notes");
    for (int i = 0; i < r->n_notes; i++)
        sim_jw_str(&w, NULL, r->notes[i]);
    sim_jw_array_end(&w);
    sim_jw_object_end(&w);
    if (bad) {
        sim_errf(err, "%s: not a finite number; refusing to write it", bad);
        sim_jw_free(&w);
        return NULL;
    }
    char *out = sim_jw_finish(&w) == SIM_OK ? sim_jw_take(&w, NULL) : NULL;
    if (!out) {
        sim_jw_free(&w);
        sim_errf(err, "out of memory while writing JSON");
    }
    return out;
}
