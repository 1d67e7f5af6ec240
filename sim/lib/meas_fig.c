/* meas_fig.c - figure fits on measurement rows (see meas_fig.h). */
#include "meas_fig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#define PRIOR_TIGHT_FRAC 0.1 /* measured, derived, datasheet */
#define PRIOR_LOOSE_FRAC 1.0 /* estimated, default */
#define SIGMA_ROW_MIN    0.01

const char *sim_meas_fig_held_name(sim_fig_held h)
{
    switch (h) {
    case SIM_FIG_HELD_BOUND:
        return "on its bound";
    case SIM_FIG_HELD_STDERR:
        return "relative stderr above 25%";
    case SIM_FIG_HELD_CORR:
        return "|correlation| above 0.95";
    case SIM_FIG_HELD_PRIOR:
        return "more than 3 prior widths from the profile's value";
    case SIM_FIG_HELD_HOLDOUT:
        return "the fitted set loses to alpha/beta only held out within the training rows";
    default:
        return "fitted";
    }
}

sim_status sim_meas_figspec_parse(const char *s, sim_fit_loss loss, sim_meas_figspec *out,
                                  struct sim_err *err)
{
    *out = (sim_meas_figspec){0};
    out->loss = loss;
    if (strcmp(s, "profile") == 0) {
        out->profile = 1;
        return SIM_OK;
    }
    const char *p = s;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[96];
        if (len == 0 || len >= sizeof(name)) {
            sim_errf(err, "--fit '%s': expected profile or FIGURE[,FIGURE...]", s);
            return SIM_EINVAL;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        const int f = sim_hw_field_find(name);
        double lo, hi, sc;
        if (f == SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD) {
            out->flag = 1;
        } else if (f < 0 || !sim_hw_field_fit_range((sim_hw_field)f, &lo, &hi, &sc)) {
            sim_errf(err,
                     "--fit '%s': not a figure the fit takes (expected an efficiency or "
                     "bandwidth factor *_frac, a fixed time *_fixed_s, "
                     "attn_decode_seq_head_s, attn_prefill_seq_half_tokens, "
                     "attn_decode_block_bw_bytes_per_s or attn_decode_kv_per_q_head_flag)",
                     name);
            return SIM_EINVAL;
        } else {
            for (int k = 0; k < out->n; k++)
                if ((int)out->f[k] == f) {
                    sim_errf(err, "--fit: '%s' given twice", name);
                    return SIM_EINVAL;
                }
            if (out->n == SIM_FIG_MAX) {
                sim_errf(err, "--fit: at most %d figures", SIM_FIG_MAX);
                return SIM_EINVAL;
            }
            out->f[out->n++] = (sim_hw_field)f;
        }
        p = end ? end + 1 : p + len;
    }
    return SIM_OK;
}

/* Distinct values of a row property among the masked rows (at most 64 tracked). */
typedef struct span {
    int64_t v[64];
    int n;
    int64_t lo, hi;
} span;

static void span_add(span *s, int64_t v)
{
    if (s->n == 0 || v < s->lo)
        s->lo = v;
    if (s->n == 0 || v > s->hi)
        s->hi = v;
    for (int k = 0; k < s->n; k++)
        if (s->v[k] == v)
            return;
    if (s->n < 64)
        s->v[s->n++] = v;
}

static void add_fig(sim_meas_figfit *out, sim_hw_field f, const char *why)
{
    out->f[out->n] = f;
    snprintf(out->why[out->n], sizeof(out->why[0]), "%s", why);
    out->n++;
}

static void add_skip(sim_meas_figfit *out, const char *what)
{
    size_t u = strlen(out->skipped);
    snprintf(out->skipped + u, sizeof(out->skipped) - u, "%s%s", u ? "; " : "", what);
}

/* The default set from the rows' span (meas_fig.h); *gqa: a GQA model among the rows. */
static sim_status choose(sim_cache *c, const sim_meas_set *set, const unsigned char *mask,
                         int want_profile, sim_meas_figfit *out, int *gqa, struct sim_err *err)
/* *gqa: 1 when the flag can be chosen: the rows hold a GQA model and at least two ratios of
 * query to KV heads. With one ratio, K/V read per query head (flag 1) is the same time as
 * per KV head (flag 0) at bw_factor_kv_gather_frac divided by the ratio: not identifiable. */
{
    span batch = {0}, len = {0}, layers = {0}, tp = {0}, ratio = {0};
    int fp8 = 0, serving = 0;
    *gqa = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (mask && !mask[i])
            continue;
        const sim_meas_row *r = &set->rows[i];
        serving |= r->kind == SIM_MEAS_SERVING;
        const sim_model *m;
        sim_status st = sim_cache_model(c, r->model, &m, NULL, err);
        if (st != SIM_OK)
            return st;
        *gqa |= m->n_kv_heads < m->n_heads;
        out->domain |= 1u << sim_model_class_of(m);
        fp8 |= r->dtype == SIM_DTYPE_FP8;
        span_add(&layers, m->n_layers);
        span_add(&ratio, m->n_kv_heads > 0 ? m->n_heads / m->n_kv_heads : 0);
        span_add(&tp, r->tp);
        if (r->kind == SIM_MEAS_STEP) {
            for (int g = 0; g < r->n_groups; g++) {
                span_add(&batch, r->groups[g].count);
                span_add(&len, r->groups[g].context_tokens + r->groups[g].new_tokens);
            }
        } else {
            span_add(&batch, r->batch);
            span_add(&len, r->prompt_tokens + (r->output_tokens > 0 ? r->output_tokens : 0) +
                               (r->context_tokens > 0 ? r->context_tokens : 0));
        }
    }
    if (*gqa && ratio.n < 2) {
        *gqa = 0;
        add_skip(out, "attn_decode_kv_per_q_head_flag: one ratio of query to KV heads among "
                      "the rows (the flag is then a rescaling of bw_factor_kv_gather_frac)");
    } else if (!*gqa) {
        add_skip(out, "attn_decode_kv_per_q_head_flag: no GQA model");
    }
    if (!want_profile)
        return SIM_OK;
    if (serving)
        add_skip(out, "serving rows: the default set reads the batch sizes and lengths of step "
                      "and offline rows; name the figures a serving fit takes (--fit FIGURE,...)");
    char why[112];
    if (batch.n >= 2) {
        snprintf(why, sizeof(why), "batches %lld..%lld (%d sizes)", (long long)batch.lo,
                 (long long)batch.hi, batch.n);
        add_fig(out, fp8 ? SIM_HWF_GEMM_EFF_FP8 : SIM_HWF_GEMM_EFF_FP16, why);
        add_fig(out, fp8 ? SIM_HWF_BW_FACTOR_WEIGHTS_FP8 : SIM_HWF_BW_FACTOR_WEIGHTS, why);
    } else {
        add_skip(out, "gemm_eff and bw_factor_weights: one batch size");
    }
    if (batch.n >= 2 && len.n >= 2) {
        snprintf(why, sizeof(why), "batches %d sizes, sequence lengths %lld..%lld (%d)", batch.n,
                 (long long)len.lo, (long long)len.hi, len.n);
        add_fig(out, SIM_HWF_BW_FACTOR_KV, why);
    } else {
        add_skip(out, "bw_factor_kv_gather_frac: batches or lengths do not vary");
    }
    if (batch.n >= 3) {
        snprintf(why, sizeof(why), "%d batch sizes (a cost per sequence)", batch.n);
        add_fig(out, SIM_HWF_ATTN_DECODE_SEQ_HEAD, why);
    } else {
        add_skip(out, "attn_decode_seq_head_s: fewer than 3 batch sizes");
    }
    if (layers.n >= 2 && tp.n >= 2) {
        snprintf(why, sizeof(why), "layer counts %lld..%lld and TP %lld..%lld (a time per kernel)",
                 (long long)layers.lo, (long long)layers.hi, (long long)tp.lo, (long long)tp.hi);
        add_fig(out, SIM_HWF_GEMM_FIXED, why);
    } else {
        snprintf(why, sizeof(why), "gemm_fixed_s: %d layer count(s) and %d TP(s), needs 2 and 2",
                 layers.n, tp.n);
        add_skip(out, why);
    }
    return SIM_OK;
}

/*
 * The classes the fitted figures hold for. The small-M GEMM class (gemm_small_m_rows,
 * gemm_eff_small_m_frac) describes the BLAS at decode-sized M, the projections every
 * attention runs alike: a fit of those alone holds for each attention of the rows' dense or
 * MoE kinds (on MI300X each model's rows alone give 0.069 and 0.071; docs/calibration.md).
 * So does PagedAttention's rate per thread block (attn_decode_block_bw_bytes_per_s): the
 * kernel runs one block per query head whatever the heads' grouping, and MLA models never
 * run it. A set of fused-MoE figures alone holds for every class: it times one weight class's
 * expert kernel, which every attention runs alike and a dense model never calls, so a dense
 * model gets the fit's alpha and beta_s, not the alpha/beta-only fit, which absorbed the
 * expert kernel's miss (the MXFP4 prefill of the InferenceX gpt-oss rows: alpha 1.23 against
 * 1.09 with the figure, H100). The client path (client_path_s) is the same for every
 * model: outside the engine. Any other figure, and the attention flag, keep the rows'
 * classes.
 */
static unsigned figures_domain(const sim_meas_figfit *out, const sim_meas_figspec *spec)
{
    if (spec->profile || spec->flag || out->n == 0)
        return out->domain;
    int all_moe = 1;
    for (int k = 0; k < out->n; k++)
        all_moe &= sim_hw_field_is_moe(out->f[k]) || out->f[k] == SIM_HWF_CLIENT_PATH;
    if (all_moe)
        return (1u << SIM_MCLASS_COUNT) - 1u;
    for (int k = 0; k < out->n; k++)
        if (out->f[k] != SIM_HWF_GEMM_EFF_SMALL_M && out->f[k] != SIM_HWF_GEMM_SMALL_M_ROWS &&
            out->f[k] != SIM_HWF_ATTN_DECODE_BLOCK_BW)
            return out->domain;
    static const sim_model_class kind[2][3] = {
        {SIM_MCLASS_DENSE_MHA, SIM_MCLASS_DENSE_GQA, SIM_MCLASS_DENSE_MLA},
        {SIM_MCLASS_MOE_MHA, SIM_MCLASS_MOE_GQA, SIM_MCLASS_MOE_MLA}};
    unsigned d = out->domain;
    for (int k = 0; k < 2; k++) {
        const unsigned all = (1u << kind[k][0]) | (1u << kind[k][1]) | (1u << kind[k][2]);
        if (d & all)
            d |= all;
    }
    return d;
}

int sim_meas_folds_lost(const sim_meas_fold *ab, const sim_meas_fold *fig, int n, int *worst)
{
    int lost = 0;
    *worst = -1;
    for (int k = 0; k < n; k++) {
        /* NaN (a fold not computed) loses too: !(NaN <= x). */
        if (fig[k].mape_pct <= ab[k].mape_pct)
            continue;
        lost++;
        if (*worst < 0 ||
            !(fig[k].mape_pct - ab[k].mape_pct <= fig[*worst].mape_pct - ab[*worst].mape_pct))
            *worst = k;
    }
    return lost;
}

/* The rows a fit predicts, on a trial copy of the profile. */
typedef struct trial {
    const sim_meas_opts *o;
    sim_meas_pred *mp;
    const size_t *idx;
    size_t n;
    sim_hw *hw;
    const sim_hw_field *f;
    size_t nf;
    struct sim_err *err;
    long evals; /* predictions of the rows so far */
    /* Serving rows: each group's runs at the three points of its linear terms (serving_terms),
     * and which groups an evaluation has run so far. */
    double a0, b0_s;
    sim_serve_stats *gs;
    unsigned char *gdone;
} trial;

/*
 * A serving row is a simulation, not a sum: its time is linearized around (a0, b0_s), the
 * alpha/beta-only fit's, as p(alpha, beta_s) ~ alpha R + beta_s N + H with R and N one-sided
 * slopes of three runs and H = p(a0, b0_s) - a0 R - b0_s N. In a closed loop every step time
 * scales with alpha and the scheduler's choices depend on tokens, not times, so p is linear
 * in alpha and beta_s but for the host time and the odd arrival that lands one step apart.
 */
static int serving_terms(trial *t, size_t j, double *R, double *N, double *H)
{
    const size_t i = t->idx[j];
    const int gi = t->mp->group[i];
    sim_serve_stats *s = &t->gs[3 * (size_t)gi];
    if (!t->gdone[gi]) {
        const double a0 = t->a0, b0 = t->b0_s;
        if (sim_meas_serve_on(t->mp, i, t->hw, a0, b0, &s[0], t->err) != SIM_OK ||
            sim_meas_serve_on(t->mp, i, t->hw, a0 * (1.0 + SIM_MEAS_LIN_DA), b0, &s[1], t->err) !=
                SIM_OK ||
            sim_meas_serve_on(t->mp, i, t->hw, a0, b0 + SIM_MEAS_LIN_DB_S, &s[2], t->err) != SIM_OK)
            return -1;
        t->gdone[gi] = 1;
    }
    const sim_serve_metric m = t->mp->set->rows[i].metric;
    sim_meas_serving_linear(sim_serve_stats_metric(&s[0], m), sim_serve_stats_metric(&s[1], m),
                            sim_serve_stats_metric(&s[2], m), t->a0, t->b0_s, R, N, H);
    return 0;
}

static int trial_pred(void *ctx, const double *fig, double *R, double *N, double *H)
{
    trial *t = ctx;
    t->evals++;
    for (size_t k = 0; k < t->nf; k++)
        t->hw->v[t->f[k]] = fig[k];
    if (t->gdone)
        memset(t->gdone, 0, (size_t)t->mp->n_groups);
    sim_meas_opts o = *t->o;
    o.hw = t->hw;
    for (size_t j = 0; j < t->n; j++) {
        const sim_meas_row *r = &t->mp->set->rows[t->idx[j]];
        if (t->mp->group[t->idx[j]] >= 0) {
            if (serving_terms(t, j, &R[j], &N[j], &H[j]))
                return -1;
            continue;
        }
        sim_row_pred p;
        if (sim_meas_predict_one(t->mp->cache, r, sim_meas_row_engine(&o, r), t->hw, o.mode, o.gemm,
                                 o.no_host, t->mp->work, &p, t->err) != SIM_OK)
            return -1;
        R[j] = p.roofline_s;
        N[j] = p.n_steps;
        H[j] = p.host_s;
    }
    return 0;
}

sim_status sim_meas_predict_on(const sim_meas_opts *o, sim_meas_pred *mp, const unsigned char *mask,
                               const sim_hw *hw, double alpha, double beta_s, double *pred,
                               struct sim_err *err)
{
    sim_meas_opts oo = *o;
    oo.hw = hw;
    /* Serving rows of one run share its simulation: the last group run is kept. */
    int last_group = -1;
    sim_serve_stats last;
    for (size_t i = 0; i < mp->set->n; i++) {
        if (mask && !mask[i])
            continue;
        const sim_meas_row *r = &mp->set->rows[i];
        const int gi = mp->group[i];
        if (gi >= 0) {
            if (gi != last_group) {
                sim_status st = sim_meas_serve_on(mp, i, hw, alpha, beta_s, &last, err);
                if (st != SIM_OK)
                    return st;
                last_group = gi;
            }
            pred[i] = sim_serve_stats_metric(&last, r->metric);
            continue;
        }
        sim_row_pred p;
        sim_status st = sim_meas_predict_one(mp->cache, r, sim_meas_row_engine(&oo, r), hw, oo.mode,
                                             oo.gemm, oo.no_host, mp->work, &p, err);
        if (st != SIM_OK)
            return st;
        pred[i] = sim_calibrated_s(alpha, p.roofline_s, beta_s, p.n_steps) + p.host_s;
    }
    return SIM_OK;
}

/* One figure fit at a flag value. */
static sim_status fit_at(trial *t, const double *meas, const sim_fig_param *par,
                         const sim_fig_opts *fo, int flag, sim_fig_result *res, const char *cmd,
                         struct sim_err *err)
{
    t->hw->v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] = flag;
    struct sim_err e = {{0}}, pe = {{0}};
    t->err = &pe;
    sim_status st = sim_fit_figures(t->n, meas, t->nf, par, trial_pred, t, fo, res, &e);
    if (st != SIM_OK) {
        if (pe.msg[0])
            sim_errf(err, "%s", pe.msg);
        else
            sim_errf(err, "%s: %s", cmd, e.msg);
        return st == SIM_EINVAL ? SIM_EINVAL : SIM_EFIT;
    }
    return SIM_OK;
}

/* The fit becomes alpha/beta only on the profile as it is, as if no figure had been asked for;
 * figures not held already are held for losing held out. */
static void fall_back(sim_meas_figfit *out, const sim_hw *base)
{
    sim_fig_result *r = &out->res;
    out->check_fell_back = 1;
    for (int k = 0; k < out->n; k++) {
        r->value[k] = out->absent[k] ? 0.0 : out->prior[k];
        if (!r->held[k])
            r->held[k] = SIM_FIG_HELD_HOLDOUT; /* value_stderr stays the fit's, for reports */
    }
    r->alpha = out->ab.alpha;
    r->beta_s = out->ab.beta_s;
    r->alpha_stderr = out->ab.alpha_stderr;
    r->beta_stderr_s = out->ab.beta_stderr_s;
    r->alpha_at_bound = out->ab.alpha_at_bound;
    r->beta_at_bound = out->ab.beta_at_bound;
    r->fit = out->ab.fit;
    out->flag_value = out->flag_profile;
    out->hw = *base;
}

/* MAPE (%) of pred[] against the rows of mask (NULL: all). */
static double mape_on(const sim_meas_set *set, const unsigned char *mask, const double *pred)
{
    double sum = 0.0;
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++)
        if (!mask || mask[i]) {
            sum += fabs(pred[i] - set->rows[i].measured_s) / set->rows[i].measured_s;
            n++;
        }
    return n ? 100.0 * sum / (double)n : (double)NAN;
}

double sim_meas_fold_diff_se(const sim_meas_fold *ab, const sim_meas_fold *fig, int n)
{
    if (n < 2)
        return (double)NAN;
    double s1 = 0.0, s2 = 0.0;
    for (int k = 0; k < n; k++) {
        const double d = fig[k].mape_pct - ab[k].mape_pct;
        s1 += d;
        s2 += d * d;
    }
    const double mean = s1 / n;
    return sqrt(fmax(0.0, (s2 - n * mean * mean) / (n - 1)) / n);
}

/* The figures win held out: the pooled MAPE lower by more than se, and no fold lost. NaN (not
 * computed) loses: !(NaN < x). */
static int figures_win(double ab_pct, double fig_pct, double se_pct, int folds_lost)
{
    return fig_pct + se_pct < ab_pct && folds_lost == 0;
}

/*
 * The profile set's held-out check on its own training rows (meas_fig.h): leave-one-<field>-
 * out among them (sim_meas_holdout_in) with alpha/beta only and with the figures of out (and
 * the flag when compared). Sets out->check_*; falls back to alpha/beta only when the figures
 * lose. A held-out fit that fails (too few rows in a fold, GSL) counts as a loss, and rows of
 * one model at one TP, which nothing can be held out of, keep no figures: a set that cannot
 * be checked is not kept.
 */
static sim_status check_held_out(const sim_meas_opts *o, sim_meas_pred *mp,
                                 const unsigned char *mask, const sim_hw *base,
                                 const sim_meas_figspec *whole, sim_meas_figfit *out,
                                 struct sim_err *err)
{
    const sim_meas_set *set = mp->set;
    const char *field = "model";
    int64_t n_groups = sim_meas_count_values(set, mask, field);
    if (n_groups < 2) {
        field = "tp";
        n_groups = sim_meas_count_values(set, mask, field);
    }
    if (n_groups < 2) {
        snprintf(out->check_note, sizeof(out->check_note), "%s",
                 "one model and one TP among the rows: nothing to hold out");
        fall_back(out, base);
        return SIM_OK;
    }
    /* Each fold fits figures, alpha and beta_s on the rows it keeps: a figure fit needs 3. */
    char v[64] = "";
    const size_t left = sim_meas_fewest_left(set, mask, field, v, sizeof(v));
    if (left < 3) {
        snprintf(out->check_field, sizeof(out->check_field), "%s", field);
        out->check_folds = (int)n_groups;
        out->check_ab_mape_pct = out->check_fig_mape_pct = out->check_diff_se_pct = (double)NAN;
        snprintf(out->check_note, sizeof(out->check_note),
                 "leaving out %s=%.40s leaves %zu row%s, fewer than the 3 a figure fit needs: "
                 "nothing to check the figures on",
                 field, v, left, left == 1 ? "" : "s");
        fall_back(out, base);
        return SIM_OK;
    }
    double *pred = malloc(2 * set->n * sizeof(double));
    const int cap = (int)n_groups;
    sim_meas_fold *folds = malloc(2 * (size_t)cap * sizeof(*folds));
    if (!pred || !folds) {
        free(pred);
        free(folds);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    sim_meas_figspec spec = {
        .profile = 0, .n = out->n, .flag = out->flag_compared, .loss = out->loss};
    for (int k = 0; k < out->n; k++)
        spec.f[k] = out->f[k];
    snprintf(out->check_field, sizeof(out->check_field), "%s", field);
    out->check_folds = cap;
    out->check_ab_mape_pct = out->check_fig_mape_pct = out->check_diff_se_pct = (double)NAN;
    out->check_folds_lost = 0;
    out->check_worst[0] = '\0';
    sim_meas_opts oo = *o;
    struct sim_err e = {{0}};
    int n_folds[2] = {0, 0};
    sim_status st = SIM_OK;
    for (int with_figs = 0; with_figs <= 1 && st == SIM_OK; with_figs++) {
        oo.figs = with_figs ? &spec : NULL;
        st = sim_meas_holdout_in(&oo, mp, mask, field, pred + (size_t)with_figs * set->n, NULL,
                                 folds + with_figs * cap, cap, &n_folds[with_figs], &e);
        if (st == SIM_OK)
            *(with_figs ? &out->check_fig_mape_pct : &out->check_ab_mape_pct) =
                mape_on(set, mask, pred + (size_t)with_figs * set->n);
    }
    /* Both runs visit the groups in the same row order. */
    if (st == SIM_OK && n_folds[0] == n_folds[1]) {
        int w;
        out->check_folds_lost = sim_meas_folds_lost(folds, folds + cap, n_folds[0], &w);
        out->check_diff_se_pct = sim_meas_fold_diff_se(folds, folds + cap, n_folds[0]);
        if (w >= 0) {
            snprintf(out->check_worst, sizeof(out->check_worst), "%s", folds[w].value);
            out->check_worst_ab_pct = folds[w].mape_pct;
            out->check_worst_fig_pct = folds[cap + w].mape_pct;
        }
    } else if (st == SIM_OK) {
        out->check_folds_lost = cap; /* cannot happen: the same rows and field */
    }
    int win = st == SIM_OK && figures_win(out->check_ab_mape_pct, out->check_fig_mape_pct,
                                          out->check_diff_se_pct, out->check_folds_lost);
    /* The procedure check: the same folds, each choosing, fitting and checking the default set
     * itself (a nested fit, which runs no procedure check of its own). */
    if (win && !whole->nested) {
        sim_meas_figspec inner = *whole;
        inner.nested = 1;
        oo.figs = &inner;
        int n2 = 0;
        st = sim_meas_holdout_in(&oo, mp, mask, field, pred + set->n, NULL, folds + cap, cap, &n2,
                                 &e);
        out->proc_run = 1;
        out->proc_fig_mape_pct = out->proc_diff_se_pct = (double)NAN;
        out->proc_folds_lost = cap;
        if (st == SIM_OK && n2 == n_folds[0]) {
            int w;
            out->proc_fig_mape_pct = mape_on(set, mask, pred + set->n);
            out->proc_diff_se_pct = sim_meas_fold_diff_se(folds, folds + cap, n2);
            out->proc_folds_lost = sim_meas_folds_lost(folds, folds + cap, n2, &w);
        }
        win = st == SIM_OK && figures_win(out->check_ab_mape_pct, out->proc_fig_mape_pct,
                                          out->proc_diff_se_pct, out->proc_folds_lost);
    }
    free(folds);
    free(pred);
    if (st == SIM_ENOMEM) {
        sim_errf(err, "%s", e.msg);
        return st;
    }
    if (st != SIM_OK) {
        snprintf(out->check_note, sizeof(out->check_note), "a held-out fit failed: %.100s", e.msg);
        for (char *c = out->check_note; *c; c++)
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                *c = '\''; /* printed inside JSON strings */
    }
    if (!win)
        fall_back(out, base);
    return SIM_OK;
}

sim_status sim_meas_fit_figures(const sim_meas_opts *o, sim_meas_pred *mp,
                                const unsigned char *mask, const sim_meas_figspec *spec,
                                const char *cmd, sim_meas_figfit *out, struct sim_err *err)
{
    memset(out, 0, sizeof(*out));
    const sim_meas_set *set = mp->set;
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (!sim_meas_row_fitted(mp, mask, i))
            continue;
        n++;
    }
    if (n < 3) {
        sim_errf(err, "%s --fit: %zu rows; a figure fit needs at least 3", cmd, n);
        return SIM_EINVAL;
    }
    sim_status st = sim_meas_check_one_hw(set, cmd, err);
    const sim_hw *base = o->hw;
    for (size_t i = 0; st == SIM_OK && !base && i < set->n; i++)
        if (!mask || mask[i])
            st = sim_cache_hw(mp->cache, set->rows[i].hardware, &base, NULL, err);
    if (st != SIM_OK)
        return st;
    int gqa = 0;
    out->loss = spec->loss;
    if (!spec->profile)
        for (int k = 0; k < spec->n; k++) {
            /* A calibration may carry a figure its profile lacks only when a fit may add it
             * (sim_calib_apply_figures refuses any other on load), so such a figure is
             * refused here, before a fit that would write a file no command can read. */
            if (!sim_hw_field_fit_may_set(base, spec->f[k])) {
                sim_errf(err,
                         "%s --fit '%s': hardware profile '%s' has no such figure (a fit may "
                         "add only attn_decode_block_bw_bytes_per_s to a profile)",
                         cmd, sim_hw_field_key(spec->f[k]), base->id);
                return SIM_EINVAL;
            }
            add_fig(out, spec->f[k], "asked for");
        }
    st = choose(mp->cache, set, mask, spec->profile, out, &gqa, err);
    if (st != SIM_OK)
        return st;
    if (spec->profile) {
        /* The default set keeps only figures the profile has (or a fit may add), as above. */
        int kept = 0;
        for (int k = 0; k < out->n; k++) {
            const sim_hw_field f = out->f[k];
            if (!sim_hw_field_fit_may_set(base, f)) {
                char what[128];
                snprintf(what, sizeof(what), "%s: not in the profile", sim_hw_field_key(f));
                add_skip(out, what);
                continue;
            }
            if (kept != k) {
                out->f[kept] = f;
                memcpy(out->why[kept], out->why[k], sizeof(out->why[0]));
            }
            kept++;
        }
        out->n = kept;
    }
    out->domain = figures_domain(out, spec);
    /* The alpha/beta-only fit: the start, sigma_row, and what the figure fit is compared with. */
    st = sim_meas_fit(o, mp, mask, cmd, &out->ab, err);
    if (st != SIM_OK)
        return st;
    size_t *idx = malloc(n * sizeof(*idx));
    double *meas = malloc(n * sizeof(*meas));
    sim_hw *work = malloc(sizeof(*work));
    if (!idx || !meas || !work) {
        free(idx);
        free(meas);
        free(work);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    size_t j = 0;
    double ss = 0.0;
    for (size_t i = 0; st == SIM_OK && i < set->n; i++)
        if (sim_meas_row_fitted(mp, mask, i)) {
            idx[j] = i;
            meas[j] = set->rows[i].measured_s;
            double pred;
            st = sim_meas_predict_row(mp, i, out->ab.alpha, out->ab.beta_s, &pred, err);
            const double r = (pred - meas[j]) / meas[j];
            ss += r * r;
            j++;
        }
    if (st != SIM_OK) {
        free(idx);
        free(meas);
        free(work);
        return st;
    }
    out->sigma_row_frac = fmax(sqrt(ss / (double)n), SIGMA_ROW_MIN);
    sim_fig_param par[SIM_FIG_MAX];
    for (int k = 0; k < out->n; k++) {
        const sim_hw_field f = out->f[k];
        sim_fig_param *p = &par[k];
        sim_hw_field_fit_range(f, &p->lo, &p->hi, &p->scale);
        const sim_prov pv = base->prov[f];
        /* A figure the profile lacks (attn_decode_block_bw_bytes_per_s: no such limit) starts
         * at 10 x its scale under a prior as wide as its range: the rows alone set it. */
        const int absent = pv == SIM_PROV_ABSENT;
        p->prior = fmin(fmax(absent ? 10.0 * p->scale : base->v[f], p->lo), p->hi);
        out->prior[k] = p->prior;
        const double rel = pv == SIM_PROV_ESTIMATED || pv == SIM_PROV_DEFAULT ? PRIOR_LOOSE_FRAC
                                                                              : PRIOR_TIGHT_FRAC;
        p->prior_sd = absent ? p->hi - p->lo : rel * fmax(fabs(p->prior), p->scale);
        p->held_absent = absent;
        out->absent[k] = absent;
    }
    sim_fig_opts fo;
    sim_fig_opts_default(&fo);
    fo.loss = spec->loss;
    fo.row_sd_frac = out->sigma_row_frac;
    fo.alpha0 = out->ab.alpha;
    fo.beta0_s = out->ab.beta_s;
    fo.ab = o->fit;
    fo.ab.weight = SIM_FIT_RELATIVE;
    *work = *base;
    trial t = {.o = o,
               .mp = mp,
               .idx = idx,
               .n = n,
               .hw = work,
               .f = out->f,
               .nf = (size_t)out->n,
               .a0 = out->ab.alpha,
               .b0_s = out->ab.beta_s};
    if (mp->n_groups > 0) {
        t.gs = malloc(3 * (size_t)mp->n_groups * sizeof(*t.gs));
        t.gdone = malloc((size_t)mp->n_groups);
        if (!t.gs || !t.gdone) {
            free(t.gs);
            free(t.gdone);
            free(idx);
            free(meas);
            free(work);
            sim_errf(err, "out of memory");
            return SIM_ENOMEM;
        }
    }
    out->flag_profile = base->v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] != 0.0;
    out->flag_value = out->flag_profile;
    out->flag_compared = (spec->flag || spec->profile) && gqa;
    st = fit_at(&t, meas, par, &fo, out->flag_value, &out->res, cmd, err);
    if (st == SIM_OK && out->flag_compared) {
        /* The other value, scored with the same robust scale so the costs compare. */
        sim_fig_result alt;
        sim_fig_opts fo2 = fo;
        fo2.loss_scale_frac = out->res.loss_scale_frac;
        const int other = !out->flag_value;
        st = fit_at(&t, meas, par, &fo2, other, &alt, cmd, err);
        if (st == SIM_OK) {
            out->flag_cost[out->flag_value] = out->res.cost;
            out->flag_mape_pct[out->flag_value] = out->res.fit.mape_pct;
            out->flag_cost[other] = alt.cost;
            out->flag_mape_pct[other] = alt.fit.mape_pct;
            if (alt.cost < out->res.cost) {
                out->res = alt;
                out->flag_value = other;
            }
        }
    }
    out->evals = t.evals;
    free(t.gs);
    free(t.gdone);
    if (st == SIM_OK) {
        out->hw = *base;
        out->hw.v[SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD] = out->flag_value;
        for (int k = 0; k < out->n; k++)
            if (!out->res.held[k])
                out->hw.v[out->f[k]] = out->res.value[k];
    }
    free(idx);
    free(meas);
    free(work);
    if (st == SIM_OK && spec->profile && (out->n > 0 || out->flag_compared))
        st = check_held_out(o, mp, mask, base, spec, out, err);
    return st;
}
