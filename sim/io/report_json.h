/*
 * report_json.h - JSON output of `llmstep predict` (keys documented in
 * docs/cli.md), written with the JSON writer of every output (json_writer.h). A
 * number that is not finite fails the report (the writer would write it as null).
 */
#ifndef SIM_REPORT_JSON_H
#define SIM_REPORT_JSON_H

#include "calib_json.h"
#include "hw.h"
#include "model.h"
#include "pipeline.h"
#include "status.h"
#include "step.h"

#define SIM_REPORT_SCHEMA "llmstep-predict/1"

typedef struct sim_predict_report {
    const char *model_path, *hw_path, *calib_path; /* calib_path NULL = uncalibrated */
    const sim_model *m;
    const sim_hw *hw;
    const sim_run_cfg *cfg;
    const sim_step *step;
    const sim_step_cost *cost;
    const sim_step_cost *tp1; /* the same step at tp 1, or NULL when tp == 1 */
    double weights_bytes_per_gpu;
    double kv_bytes_per_token_per_gpu;
    const char *engine; /* engine whose host time is in step_time_s */
    double host_s;      /* that host time, seconds */
    int async;          /* 1: the engine overlaps host and GPU (step = max of the two) */
    const char *const *notes;
    int n_notes;
    const sim_pp_cost *pp;     /* the step stage by stage with pipeline stages (pp > 1), or NULL */
    const sim_pred_band *band; /* --interval: the band around the step time, or NULL */
} sim_predict_report;

/*
 * Renders the report as one JSON object followed by a newline. Returns a heap
 * string the caller frees with free(), or NULL with err set (non-finite value
 * or out of memory).
 */
char *sim_report_predict_json(const sim_predict_report *r, struct sim_err *err /* OUT */);

#endif
