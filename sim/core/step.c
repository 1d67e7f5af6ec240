/*
 * step.c - one engine step under a run configuration: its groups as a scheduler
 * adds them, its check, its operators counted over the whole model (ops.c) or
 * through pipeline stages (pipeline.c), the cost reused from the previous step, and
 * summed over a run of decode steps (see step.h; docs/model.md, "Decode runs").
 */
#include "step.h"

#include <assert.h>
#include <math.h>

#include "err.h"
#include "pipeline.h"

sim_status sim_step_check(const sim_model *m, const sim_run_cfg *cfg, const sim_step *s,
                          struct sim_err *err)
{
    sim_status st = sim_model_check_tp(m, cfg->tp, err);
    if (st == SIM_OK && cfg->pp > 1)
        st = sim_pp_check(m, cfg->pp, err);
    if (st == SIM_OK)
        st = sim_moe_layout_check(m, cfg, err);
    if (st != SIM_OK)
        return st;
    if (s->n_groups < 1 || s->n_groups > SIM_STEP_MAX_GROUPS) {
        sim_errf(err, "step: needs 1 to %d sequence groups (got %d)", SIM_STEP_MAX_GROUPS,
                 s->n_groups);
        return SIM_EINVAL;
    }
    for (int i = 0; i < s->n_groups; i++) {
        const sim_group *g = &s->groups[i];
        if (g->count < 1 || g->new_tokens < 1 || g->context_tokens < 0) {
            sim_errf(err,
                     "group %d: needs count >= 1, new_tokens >= 1, context_tokens >= 0 (got "
                     "%lld, %lld, %lld)",
                     i + 1, (long long)g->count, (long long)g->new_tokens,
                     (long long)g->context_tokens);
            return SIM_ERANGE;
        }
        if (g->context_tokens > m->max_pos - g->new_tokens) {
            sim_errf(err,
                     "group %d: context %lld + new tokens %lld exceeds max_position_embeddings "
                     "= %lld",
                     i + 1, (long long)g->context_tokens, (long long)g->new_tokens,
                     (long long)m->max_pos);
            return SIM_ERANGE;
        }
    }
    if (!(cfg->alpha > 0.0) || !isfinite(cfg->alpha) || !isfinite(cfg->beta_s)) {
        sim_errf(err, "calibration: alpha must be finite and > 0, beta_s finite");
        return SIM_ERANGE;
    }
    return SIM_OK;
}

void sim_step_add_group(sim_step *st, int64_t n, int64_t t, int64_t c, int emits)
{
    for (int i = 0; i < st->n_groups; i++) {
        sim_group *g = &st->groups[i];
        if (g->new_tokens == t && g->context_tokens == c && g->emits == emits) {
            g->count += n;
            return;
        }
    }
    if (st->n_groups < SIM_STEP_MAX_GROUPS) {
        st->groups[st->n_groups++] = (sim_group){n, t, c, emits};
        return;
    }
    /* Full: merge into the group of the same shape with the nearest context, at the
     * count-weighted mean context (exact for decode attention, which is linear in c). */
    int best = -1;
    int64_t bd = 0;
    for (int i = 0; i < st->n_groups; i++) {
        sim_group *g = &st->groups[i];
        if (g->new_tokens != t || g->emits != emits)
            continue;
        int64_t dd = g->context_tokens > c ? g->context_tokens - c : c - g->context_tokens;
        if (best < 0 || dd < bd) {
            best = i;
            bd = dd;
        }
    }
    if (best < 0)
        best = st->n_groups - 1;
    sim_group *g = &st->groups[best];
    g->context_tokens = (g->context_tokens * g->count + c * n) / (g->count + n);
    g->count += n;
}

void sim_step_cost_compute(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                           const sim_step *s, sim_step_cost *out)
{
    if (cfg->pp > 1) {
        sim__pp_step_cost(m, hw, cfg, s, out); /* pipeline.c */
        return;
    }
    sim__step_stage_cost(m, hw, cfg, 0, m->n_layers, 1, 1, s, out);
}

void sim_step_cost_next(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                        const sim_step *s, sim_step_cost *cost)
{
    assert(cfg->tp >= 1 && m->n_heads % cfg->tp == 0);
    assert(s->n_groups >= 1 && s->n_groups <= SIM_STEP_MAX_GROUPS);
    if (cfg->pp > 1) { /* the stages are recounted whole */
        sim_step_cost_compute(m, hw, cfg, s, cost);
        return;
    }
    sim__step_whole_cost_next(m, hw, cfg, s, cost); /* ops.c */
}

double sim_line_sum(sim_line f, int64_t a, int64_t b)
{
    if (b <= a)
        return 0.0;
    const double cnt = (double)(b - a);
    return cnt * f.at0_s + f.slope_s * ((double)a + (double)b - 1.0) * cnt / 2.0;
}

double sim_lines_max_at(const sim_line *f, int n, int64_t k)
{
    double best = f[0].at0_s + f[0].slope_s * (double)k;
    for (int i = 1; i < n; i++) {
        const double v = f[i].at0_s + f[i].slope_s * (double)k;
        best = v > best ? v : best;
    }
    return best;
}

double sim_lines_max_sum(const sim_line *f, int n, int64_t a, int64_t b)
{
    assert(n >= 1 && n <= SIM_LINES_MAX);
    if (b <= a)
        return 0.0;
    /* The upper envelope changes lines only where two lines cross: at the first whole k at
     * or past each crossing. Between two such cuts one line stays on top for every whole k. */
    int64_t cut[2 + SIM_LINES_MAX * (SIM_LINES_MAX - 1) / 2];
    int nc = 0;
    cut[nc++] = a;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (f[i].slope_s == f[j].slope_s)
                continue;
            const double kc = (f[j].at0_s - f[i].at0_s) / (f[i].slope_s - f[j].slope_s);
            if (kc > (double)a && kc < (double)b) {
                const int64_t m = (int64_t)ceil(kc);
                if (m > a && m < b)
                    cut[nc++] = m;
            }
        }
    cut[nc++] = b;
    for (int i = 1; i < nc; i++) /* insertion sort: a handful of cuts */
        for (int j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
            const int64_t t = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = t;
        }
    double sum = 0.0;
    for (int c = 0; c + 1 < nc; c++) {
        if (cut[c + 1] <= cut[c])
            continue;
        /* Judged at the segment's middle: at its first k two lines may be equal (a crossing
         * at a whole k), and no crossing lies further inside. */
        const double mid = 0.5 * ((double)cut[c] + (double)cut[c + 1] - 1.0);
        int top = 0;
        double best = f[0].at0_s + f[0].slope_s * mid;
        for (int i = 1; i < n; i++) {
            const double v = f[i].at0_s + f[i].slope_s * mid;
            if (v > best) {
                best = v;
                top = i;
            }
        }
        sum += sim_line_sum(f[top], cut[c], cut[c + 1]);
    }
    return sum;
}

void sim_step_run_lines(const sim_run_cfg *cfg, const sim_step_cost *first,
                        const sim_step_cost *last, int64_t n, sim_line uv[2], double *rest_s)
{
    assert(n >= 2);
    const double span = (double)(n - 1);
    double u0, u1, v0, v1;
    if (cfg->mode == SIM_ROOFLINE_STEP) {
        u0 = first->compute_s, u1 = last->compute_s, v0 = first->memory_s, v1 = last->memory_s;
        *rest_s = first->comm_s;
    } else {
        const sim_op_cost *a0 = &first->ops[SIM_OP_ATTN_DECODE],
                          *a1 = &last->ops[SIM_OP_ATTN_DECODE];
        u0 = a0->compute_s, u1 = a1->compute_s, v0 = a0->memory_s, v1 = a1->memory_s;
        *rest_s = first->roofline_s - a0->time_s;
    }
    uv[0] = (sim_line){u0, (u1 - u0) / span};
    uv[1] = (sim_line){v0, (v1 - v0) / span};
}

int sim_step_cost_decode_run(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                             const sim_step *s, int64_t n, sim_step_cost *last,
                             double *sum_roofline_s)
{
    assert(s->n_groups >= 1 && s->n_groups <= SIM_STEP_MAX_GROUPS);
    if (n < 2 || cfg->pp > 1) /* pipeline steps are summed step by step */
        return 0;
    sim_step st = *s;
    for (int i = 0; i < st.n_groups; i++) {
        const sim_group *g = &s->groups[i];
        /* Affine only for decodes whose keys no sliding window caps within the run:
         * sim_attn_pairs(1, c, W) = min(c + 1, W) and the keys read are as many. */
        if (g->new_tokens != 1 || g->context_tokens > INT64_MAX - n ||
            (m->sliding_window > 0 && g->context_tokens + n > m->sliding_window))
            return 0;
        st.groups[i].context_tokens += n - 1;
    }
    sim_step_cost first;
    sim_step_cost_compute(m, hw, cfg, s, &first);
    *last = first;
    sim_step_cost_next(m, hw, cfg, &st, last);
    /* Only the attention operators change along the run ("Decode runs", docs/model.md). */
    sim_line uv[2];
    double rest_s;
    sim_step_run_lines(cfg, &first, last, n, uv, &rest_s);
    *sum_roofline_s = sim_lines_max_sum(uv, 2, 0, n) + (double)n * rest_s;
    return 1;
}
