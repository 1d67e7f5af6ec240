/*
 * step.h - one engine step under a run configuration: its groups as a
 * scheduler adds them, its check against the model and configuration, its
 * operators counted and timed (ops.h) over the whole model or through the
 * pipeline stages of pipeline.h, the same cost reused from the previous step of
 * a simulation, and a run of decode steps summed in closed form (docs/model.md,
 * "Decode runs"). The types of a step, its run configuration and its cost are
 * ops.h's, which this header includes. Everything here is pure: no I/O, no
 * allocation, no globals.
 */
#ifndef SIM_STEP_H
#define SIM_STEP_H

#include <stdint.h>

#include "hw.h"
#include "model.h"
#include "ops.h"
#include "status.h"

/*
 * Checks a step against the model and configuration: at least one group, every
 * count and new_tokens >= 1, context >= 0, context + new_tokens within the
 * model's max_position_embeddings, a legal tp, alpha > 0, finite beta.
 * Returns SIM_EINVAL/SIM_ERANGE with a message naming the group on failure.
 */
sim_status sim_step_check(const sim_model *m, const sim_run_cfg *cfg, const sim_step *s,
                          struct sim_err *err /* OUT */);

/*
 * Adds n sequences that each process t new tokens after c cached ones (emits: they
 * sample) to a step, merging them into an equal group. When all SIM_STEP_MAX_GROUPS
 * groups are taken, they join the group of the same shape with the nearest context at
 * the count-weighted mean context (exact for decode attention, linear in the context).
 */
void sim_step_add_group(sim_step *st, int64_t n, int64_t t, int64_t c, int emits);

/*
 * Counts and times one step. The inputs must have passed sim_step_check(),
 * sim_model_validate() and sim_hw_validate() (asserted). Pure and allocation-free.
 */
void sim_step_cost_compute(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                           const sim_step *s, sim_step_cost *out /* OUT */);

/*
 * With cfg->pp > 1 the step runs through the pipeline (pipeline.h): operators and totals
 * are summed over the stages (one GPU of each), comm_s includes the inter-stage transfers
 * and roofline_s is the pipeline latency of the step, one batch in flight.
 */

/*
 * The same cost, bit for bit, for a simulation that times step after step: cost holds
 * the previous step's result for the same model, hardware and configuration (or is
 * zeroed before the first). Every operator but attention is a function of the step's
 * new tokens and sampling sequences alone, so when those are unchanged (a run of decode
 * steps) only attention is recounted. Pure and allocation-free.
 */
void sim_step_cost_next(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                        const sim_step *s, sim_step_cost *cost /* IN/OUT */);

/*
 * A run of n >= 2 decode steps in one sum: step k (0 <= k < n) is s with every group's
 * context_tokens + k. Only attention changes along such a run and its compute and memory
 * times are affine in k, so the sum of the roofline times over the run is exact up to
 * rounding (docs/model.md, "Decode runs"). Sets *sum_roofline_s, *last to the cost of
 * step n - 1, and returns 1; returns 0 and sets nothing when the run is not of that form
 * (a group that is not a decode, a sliding window reached within the run, n < 2).
 * The step must have passed sim_step_check(). Pure and allocation-free.
 */
int sim_step_cost_decode_run(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                             const sim_step *s, int64_t n, sim_step_cost *last /* OUT */,
                             double *sum_roofline_s /* OUT */);

/*
 * An affine function of a run's step index k, f(k) = at0_s + slope_s k (seconds), and the
 * sums the decode runs take of them (docs/model.md, "Decode runs"): sim_line_sum is
 * sum_{k=a}^{b-1} f(k); sim_lines_max_at is max_i f_i(k) over n lines; sim_lines_max_sum is
 * sum_{k=a}^{b-1} max_i f_i(k) (1 <= n <= SIM_LINES_MAX), the upper envelope cut where two
 * lines cross. Exact up to rounding. Pure.
 */
typedef struct sim_line {
    double at0_s, slope_s;
} sim_line;
#define SIM_LINES_MAX 4
double sim_line_sum(sim_line f, int64_t a, int64_t b);
double sim_lines_max_at(const sim_line *f, int n, int64_t k);
double sim_lines_max_sum(const sim_line *f, int n, int64_t a, int64_t b);

/*
 * The roofline time of step k of a run of n >= 2 decode steps (first: step 0, last: step
 * n - 1; only attention changes along it) as max(uv[0](k), uv[1](k)) + *rest_s: the compute
 * and memory sides of the decode attention and the other operators plus communication
 * (SIM_ROOFLINE_OP), or the step's compute and memory totals and its communication
 * (SIM_ROOFLINE_STEP). Pure.
 */
void sim_step_run_lines(const sim_run_cfg *cfg, const sim_step_cost *first,
                        const sim_step_cost *last, int64_t n, sim_line uv[2] /* OUT */,
                        double *rest_s /* OUT */);

#endif
