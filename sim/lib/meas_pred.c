/* meas_pred.c - predicting measurement rows and fitting alpha and beta_s (see meas_pred.h). */
#include "meas_pred.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_nl.h"
#include "err.h"
#include "meas_fig.h"

const char *sim_meas_row_engine(const sim_meas_opts *o, const sim_meas_row *r)
{
    if (o->engine_given || !r->engine_version[0] || (r->engine[0] && strcmp(r->engine, "vllm")))
        return o->engine;
    int major = 0, minor = 0;
    if (sscanf(r->engine_version, "%d.%d", &major, &minor) != 2)
        return o->engine;
    if (major == 0 && minor < 8)
        return "vllm-v0";
    /* Async scheduling became the default after 0.13 (docs/engine.md). */
    return major == 0 && minor < 14 ? "vllm-v1-0.12" : "vllm-v1";
}

/* Parses n terms into f; "<who>--<opt> <problem>" for a bad one. */
static sim_status parse_terms(const char *const *terms, size_t n, const char *opt, const char *who,
                              sim_meas_filter *f, struct sim_err *err)
{
    struct sim_err e;
    for (size_t i = 0; i < n; i++) {
        if (!terms[i]) {
            sim_errf(err, "%s--%s: term %zu is NULL", who, opt, i);
            return SIM_EINVAL;
        }
        if (sim_meas_filter_parse(terms[i], &f[i], &e) != SIM_OK) {
            sim_errf(err, "%s--%s %s", who, opt, e.msg);
            return SIM_EINVAL;
        }
    }
    return SIM_OK;
}

sim_status sim_sched_rule_parse(const char *name, sim_sched_rule *out, struct sim_err *err)
{
    static const sim_sched_rule all[] = {SIM_SCHED_RULE_DEFAULTS, SIM_SCHED_RULE_AIC_BENCHMARK};
    for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(name, sim_sched_rule_name(all[i])) == 0) {
            *out = all[i];
            return SIM_OK;
        }
    sim_errf(err, "unknown scheduler rule '%s' (expected engine-defaults or aic-benchmark)",
             name ? name : "(null)");
    return SIM_EINVAL;
}

const char *sim_sched_rule_name(sim_sched_rule rule)
{
    return rule == SIM_SCHED_RULE_AIC_BENCHMARK ? "aic-benchmark" : "engine-defaults";
}

/* No field of a row's "scheduler" object given. */
static int sched_absent(const sim_sched_cfg *c)
{
    return c->max_num_seqs < 0 && c->max_num_batched_tokens < 0 && c->max_model_len < 0 &&
           c->block_size < 0 && c->gpu_memory_utilization < 0.0 && c->enable_chunked_prefill < 0 &&
           c->enforce_eager < 0 && c->usage < 0 && c->disable_hybrid_kv < 0;
}

size_t sim_meas_apply_sched_rule(sim_meas_set *set, sim_sched_rule rule)
{
    if (rule != SIM_SCHED_RULE_AIC_BENCHMARK)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        sim_meas_row *r = &set->rows[i];
        if (r->kind != SIM_MEAS_SERVING || r->concurrency < 1 || r->prompt_tokens < 1 ||
            r->output_tokens < 1 || !sched_absent(&r->sched))
            continue;
        /* The batch size of aiconfigurator's benchmark runs is the concurrency. */
        r->sched.max_num_seqs = r->concurrency;
        r->sched.max_num_batched_tokens = r->concurrency + r->prompt_tokens + 1500;
        r->sched.max_model_len = r->prompt_tokens + r->output_tokens + 1500;
        n++;
    }
    return n;
}

sim_status sim_meas_load_selected(const char *const *files, size_t n_files, const char *const *sel,
                                  size_t n_sel, const char *const *exc, size_t n_exc,
                                  const char *who, sim_meas_set *set, int *bad_term,
                                  struct sim_err *err)
{
    *bad_term = 0;
    sim_meas_filter fs[SIM_MEAS_MAX_FILTERS], fe[SIM_MEAS_MAX_FILTERS];
    if (n_sel > SIM_MEAS_MAX_FILTERS || n_exc > SIM_MEAS_MAX_FILTERS) {
        sim_errf(err, "%sat most %d --select and %d --exclude terms", who, SIM_MEAS_MAX_FILTERS,
                 SIM_MEAS_MAX_FILTERS);
        *bad_term = 1;
        return SIM_EINVAL;
    }
    sim_status st = parse_terms(sel, n_sel, "select", who, fs, err);
    if (st == SIM_OK)
        st = parse_terms(exc, n_exc, "exclude", who, fe, err);
    if (st != SIM_OK) {
        *bad_term = 1;
        return st;
    }
    for (size_t i = 0; i < n_files; i++) {
        if (!files[i]) {
            sim_errf(err, "%sfile %zu is NULL", who, i);
            return SIM_EINVAL;
        }
        if ((st = sim_meas_load(files[i], set, err)) != SIM_OK)
            return st;
    }
    sim_meas_select(set, fs, n_sel, fe, n_exc);
    if (set->n == 0) {
        sim_errf(err, "%sno row matches the selection", who);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

/* "file:line: id: " and the message. */
static void row_errf(struct sim_err *err, const sim_meas_row *r, const struct sim_err *e)
{
    sim_errf(err, "%s:%d: %s: %s", r->file, r->line, r->id, e->msg);
}

static void deploy_in_of(const sim_meas_row *row, const char *engine, const sim_hw *hw,
                         sim_roofline_mode mode, sim_gemm_model gemm, sim_deploy_in *in)
{
    *in = (sim_deploy_in){0};
    in->model = row->model;
    in->hw = row->hardware;
    in->hw_obj = hw;
    in->engine = engine;
    in->tp = row->tp;
    in->dp = row->dp;
    in->ep = row->ep;
    in->dtype = sim_dtype_name(row->dtype);
    in->kv_dtype = sim_dtype_name(row->kv_dtype);
    in->mode = mode;
    in->gemm = gemm;
    in->sched = row->sched;
    in->alpha = 1.0;
}

sim_status sim_meas_predict_one(sim_cache *c, const sim_meas_row *row, const char *engine,
                                const sim_hw *hw, sim_roofline_mode mode, sim_gemm_model gemm,
                                int no_host, sim_batch_work *work, sim_row_pred *out,
                                struct sim_err *err)
{
    *out = (sim_row_pred){0};
    sim_deploy_in in;
    deploy_in_of(row, engine, hw, mode, gemm, &in);
    sim_deployment d;
    struct sim_err e;
    sim_status st = sim_deploy_open(c, &in, &d, &e);
    if (st != SIM_OK) {
        row_errf(err, row, &e);
        return st;
    }
    if (row->kind == SIM_MEAS_OFFLINE_BATCH) {
        sim_batch b = {row->batch, row->prompt_tokens, row->output_tokens};
        sim_batch_result r;
        st = sim_batch_simulate(&(sim_setup){&d.e, d.m, d.hw, &d.cfg, &d.s}, &b, work, &r, &e);
        if (st != SIM_OK) {
            sim_errf(err, "%s:%d: %s: %s on %s at TP %d: %s", row->file, row->line, row->id,
                     d.m->id, d.hw->id, d.cfg.tp, e.msg);
            return st;
        }
        out->roofline_s = r.roofline_sum_s;
        out->n_steps = (double)r.n_steps;
        out->host_s = no_host ? 0.0 : r.host_sum_s;
        out->preemptions = r.preemptions;
    } else {
        sim_step s = {0};
        s.n_groups = row->n_groups;
        for (int i = 0; i < row->n_groups; i++)
            s.groups[i] = row->groups[i];
        st = sim_step_check(d.m, &d.cfg, &s, &e);
        if (st != SIM_OK) {
            row_errf(err, row, &e);
            return st;
        }
        sim_step_cost cost;
        sim_step_cost_compute(d.m, d.hw, &d.cfg, &s, &cost);
        out->roofline_s = cost.roofline_s;
        out->n_steps = 1.0;
        out->host_s = no_host ? 0.0 : sim_engine_host_s(&d.e, d.cfg.tp, cost.seqs);
        out->comm_s = cost.comm_s;
    }
    if (!isfinite(out->roofline_s) || !isfinite(out->host_s)) {
        sim_errf(err, "%s:%d: %s: prediction is not a finite number", row->file, row->line,
                 row->id);
        return SIM_EFIT;
    }
    return SIM_OK;
}

static int same_setup(const sim_meas_row *a, const sim_meas_row *b)
{
    return strcmp(a->hardware, b->hardware) == 0 && strcmp(a->model, b->model) == 0 &&
           a->tp == b->tp && a->dp == b->dp && a->ep == b->ep && a->dtype == b->dtype &&
           a->kv_dtype == b->kv_dtype && strcmp(a->engine, b->engine) == 0 &&
           strcmp(a->engine_version, b->engine_version) == 0 &&
           memcmp(&a->sched, &b->sched, sizeof(a->sched)) == 0 &&
           memcmp(&a->workload, &b->workload, sizeof(a->workload)) == 0 &&
           strcmp(a->trace, b->trace) == 0;
}

/* The profile row is predicted on (o->hw, or o->hw_other for a model outside o->domain);
 * *other 1 for the latter. */
static sim_status row_hw(const sim_meas_opts *o, sim_cache *c, const sim_meas_row *row,
                         const sim_hw **hw, int *other, struct sim_err *err)
{
    *hw = o->hw;
    *other = 0;
    if (!o->domain)
        return SIM_OK;
    const sim_model *m;
    sim_status st = sim_cache_model(c, row->model, &m, NULL, err);
    if (st == SIM_OK && !sim_model_in_classes(m, o->domain)) {
        *hw = o->hw_other;
        *other = 1;
    }
    return st;
}

/* Opens the deployment and the workload of a serving row (the OpenAI server's defaults). */
static sim_status open_group(const sim_meas_opts *o, sim_cache *c, const sim_meas_row *row,
                             const sim_hw *hw, sim_serve_group *g, struct sim_err *err)
{
    sim_deploy_in in;
    deploy_in_of(row, sim_meas_row_engine(o, row), hw, o->mode, o->gemm, &in);
    in.sched.usage = SIM_USAGE_SERVER;
    in.no_host = o->no_host;
    struct sim_err e;
    sim_status st = sim_deploy_open(c, &in, &g->d, &e);
    if (st != SIM_OK)
        row_errf(err, row, &e);
    return st;
}

sim_status sim_meas_predict_all(const sim_meas_opts *o, const sim_meas_set *set, sim_cache *c,
                                sim_meas_pred *mp, struct sim_err *err)
{
    memset(mp, 0, sizeof(*mp));
    mp->set = set;
    mp->cache = c;
    mp->p = calloc(set->n ? set->n : 1, sizeof(*mp->p));
    mp->group = malloc((set->n ? set->n : 1) * sizeof(*mp->group));
    mp->g = calloc(set->n ? set->n : 1, sizeof(*mp->g));
    mp->work = malloc(sizeof(*mp->work));
    mp->other = calloc(set->n ? set->n : 1, 1);
    mp->call_const_s = calloc(set->n ? set->n : 1, sizeof(double));
    mp->call_const_frac = calloc(set->n ? set->n : 1, sizeof(double));
    mp->queued = calloc(set->n ? set->n : 1, 1);
    mp->keep_outliers = o->keep_outliers;
    if (!mp->p || !mp->group || !mp->g || !mp->work || !mp->other || !mp->call_const_s ||
        !mp->call_const_frac || !mp->queued ||
        sim_meas_call_constants(set, mp->call_const_s, mp->call_const_frac) != SIM_OK) {
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < set->n; i++) {
        const sim_meas_row *r = &set->rows[i];
        mp->group[i] = -1;
        const sim_hw *hw;
        int other;
        sim_status hs = row_hw(o, c, r, &hw, &other, err);
        if (hs != SIM_OK)
            return hs;
        mp->other[i] = (unsigned char)other;
        if (r->kind == SIM_MEAS_SERVING) {
            for (size_t j = 0; j < i && mp->group[i] < 0; j++)
                if (mp->group[j] >= 0 && same_setup(&set->rows[j], r) &&
                    mp->other[j] == mp->other[i])
                    mp->group[i] = mp->group[j];
            if (mp->group[i] < 0) {
                mp->group[i] = mp->n_groups++;
                sim_status st = open_group(o, c, r, hw, &mp->g[mp->group[i]], err);
                if (st != SIM_OK)
                    return st;
            }
            continue;
        }
        sim_status st = sim_meas_predict_one(c, r, sim_meas_row_engine(o, r), hw, o->mode, o->gemm,
                                             o->no_host, mp->work, &mp->p[i], err);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

/* One simulation of serving group g (row r's) at g->d's settings into *res and *st. */
static sim_status run_group(sim_serve_group *g, const sim_meas_row *r, sim_serve_result *res,
                            sim_serve_stats *st_out, struct sim_err *err)
{
    struct sim_err e;
    const sim_setup su = sim_deployment_setup(&g->d);
    /* The rows measure TTFT, TPOT and E2E: no inter-token list (with_itl 0). */
    sim_served sv;
    sim_status st = sim_served_prepare(&sv, &r->workload, r->trace, 0, &e);
    if (st == SIM_OK)
        st = sim_served_run(&su, &sv, NULL, NULL, res, &e);
    if (st == SIM_OK)
        st = sim_served_stats(g->d.m, g->d.hw, &sv, res, 0.0, 0.0, st_out, &e);
    sim_served_free(&sv);
    if (st != SIM_OK)
        row_errf(err, r, &e);
    return st;
}

sim_status sim_meas_predict_row(sim_meas_pred *mp, size_t i, double alpha, double beta_s,
                                double *out, struct sim_err *err)
{
    const sim_row_pred *p = &mp->p[i];
    const sim_meas_row *r = &mp->set->rows[i];
    if (mp->group[i] < 0) {
        *out = sim_calibrated_s(alpha, p->roofline_s, beta_s, p->n_steps) + p->host_s;
        return SIM_OK;
    }
    sim_serve_group *g = &mp->g[mp->group[i]];
    if (!g->have || g->alpha != alpha || g->beta_s != beta_s) {
        g->d.cfg.alpha = alpha;
        g->d.cfg.beta_s = beta_s;
        g->have = 0;
        sim_status st = run_group(g, r, &g->res, &g->st, err);
        if (st != SIM_OK)
            return st;
        g->have = 1;
        g->alpha = alpha;
        g->beta_s = beta_s;
    }
    mp->p[i].preemptions = g->res.preemptions;
    mp->queued[i] = (unsigned char)sim_serve_ttft_queued(&g->st);
    *out = sim_serve_stats_metric(&g->st, r->metric);
    if (!isfinite(*out)) {
        sim_errf(err, "%s:%d: %s: prediction is not a finite number", r->file, r->line, r->id);
        return SIM_EFIT;
    }
    return SIM_OK;
}

sim_status sim_meas_serve_on(sim_meas_pred *mp, size_t i, const sim_hw *hw, double alpha,
                             double beta_s, sim_serve_stats *out, struct sim_err *err)
{
    const sim_meas_row *r = &mp->set->rows[i];
    if (mp->group[i] < 0) {
        sim_errf(err, "%s:%d: %s: not a serving row", r->file, r->line, r->id);
        return SIM_EINVAL;
    }
    sim_serve_group *g = &mp->g[mp->group[i]];
    /* The group's own run (g->res, g->st and its key) stays as it was: only the deployment's
     * profile and calibration change for this run, and are put back after it. */
    const sim_hw *keep_hw = g->d.hw;
    const double keep_alpha = g->d.cfg.alpha, keep_beta_s = g->d.cfg.beta_s;
    if (hw)
        g->d.hw = hw;
    g->d.cfg.alpha = alpha;
    g->d.cfg.beta_s = beta_s;
    sim_serve_result res;
    sim_status st = run_group(g, r, &res, out, err);
    g->d.hw = keep_hw;
    g->d.cfg.alpha = keep_alpha;
    g->d.cfg.beta_s = keep_beta_s;
    return st;
}

void sim_meas_serving_linear(double p0, double pa, double pb, double a0, double b0_s, double *R,
                             double *N, double *H)
{
    *R = fmax((pa - p0) / (a0 * SIM_MEAS_LIN_DA), 0.0);
    *N = fmax((pb - p0) / SIM_MEAS_LIN_DB_S, 0.0);
    *H = p0 - a0 * *R - b0_s * *N;
}

typedef struct nl_rows {
    sim_meas_pred *mp;
    size_t *idx;
    struct sim_err *err; /* the first failure's message */
} nl_rows;

static int nl_pred(void *ctx, size_t k, double alpha, double beta_s, double *pred_s)
{
    nl_rows *nr = ctx;
    return sim_meas_predict_row(nr->mp, nr->idx[k], alpha, beta_s, pred_s, nr->err) != SIM_OK;
}

/*
 * The start of the nonlinear fit: every row linearized at alpha 1, beta_s 0, as
 * p(alpha, beta) ~ alpha R + beta S + (p(1, 0) - R), with R and S its one-sided slopes in
 * alpha and beta (a simulated serving row), or its own linear terms (any other row); the
 * linear fit of those starts the trust region near the optimum, where the simulation's
 * discrete events (an arrival one step later) make the surface rough further out. rows: n
 * entries, written. Returns 0 when a row's simulation fails (the fit then starts at 1, 0).
 */
static int linear_start(sim_meas_pred *mp, nl_rows *nr, const double *meas, size_t n,
                        sim_fit_row *rows)
{
    for (size_t k = 0; k < n; k++) {
        const size_t i = nr->idx[k];
        if (mp->group[i] < 0) {
            const sim_row_pred *p = &mp->p[i];
            rows[k] = (sim_fit_row){p->roofline_s, p->n_steps, meas[k], p->host_s};
            continue;
        }
        double p0, pa, pb;
        if (nl_pred(nr, k, 1.0, 0.0, &p0) || nl_pred(nr, k, 1.0 + SIM_MEAS_LIN_DA, 0.0, &pa) ||
            nl_pred(nr, k, 1.0, SIM_MEAS_LIN_DB_S, &pb))
            return 0;
        double R, S, H;
        sim_meas_serving_linear(p0, pa, pb, 1.0, 0.0, &R, &S, &H);
        rows[k] = (sim_fit_row){R, S, meas[k], fmax(H, 0.0)};
    }
    return 1;
}

int sim_meas_row_fitted(const sim_meas_pred *mp, const unsigned char *mask, size_t i)
{
    return (!mask || mask[i]) &&
           (mp->keep_outliers || !mp->call_const_s || !(mp->call_const_s[i] > 0.0));
}

sim_status sim_meas_fit(const sim_meas_opts *o, sim_meas_pred *mp, const unsigned char *mask,
                        const char *cmd, sim_fit_result *res, struct sim_err *err)
{
    const sim_meas_set *set = mp->set;
    size_t cap = set->n ? set->n : 1;
    sim_fit_row *rows = malloc(cap * sizeof(*rows));
    size_t *idx = malloc(cap * sizeof(*idx));
    double *meas = malloc(cap * sizeof(*meas));
    if (!rows || !idx || !meas) {
        free(rows);
        free(idx);
        free(meas);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    size_t n = 0, n_lin = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (!sim_meas_row_fitted(mp, mask, i))
            continue;
        idx[n] = i;
        meas[n++] = set->rows[i].measured_s;
        if (mp->group[i] < 0) {
            const sim_row_pred *p = &mp->p[i];
            rows[n_lin++] =
                (sim_fit_row){p->roofline_s, p->n_steps, set->rows[i].measured_s, p->host_s};
        }
    }
    struct sim_err e;
    char pe_msg[sizeof(e.msg)] = "";
    sim_status st;
    if (n_lin == n) {
        st = sim_fit_alpha_beta(rows, n, &o->fit, res, &e);
    } else {
        double a0 = 1.0, b0 = 0.0;
        struct sim_err pe = {{0}};
        nl_rows nr = {mp, idx, &pe};
        sim_fit_result lin;
        if (linear_start(mp, &nr, meas, n, rows) &&
            sim_fit_alpha_beta(rows, n, &o->fit, &lin, &e) == SIM_OK) {
            a0 = lin.alpha;
            b0 = lin.beta_s;
        }
        st = sim_fit_alpha_beta_nl(n, meas, nl_pred, &nr, &o->fit, a0, b0, res, &e);
        memcpy(pe_msg, pe.msg, sizeof(pe_msg));
    }
    free(rows);
    free(idx);
    free(meas);
    if (st != SIM_OK && pe_msg[0]) {
        sim_errf(err, "%s", pe_msg); /* a row's simulation failed inside the fit */
        return SIM_EFIT;
    }
    if (st != SIM_OK) {
        sim_errf(err, "%s: %s", cmd, e.msg);
        /* Too few rows is the input's fault; anything else is numerical. */
        return st == SIM_EINVAL && n < 2 ? SIM_EINVAL : SIM_EFIT;
    }
    return SIM_OK;
}

sim_status sim_meas_output_clear(const sim_meas_pred *mp, const char *path,
                                 const char *const *files, size_t n_files, const char *who,
                                 const char *opt, struct sim_err *err)
{
    sim_status st = sim_output_clear(path, mp->cache, files, n_files, who, opt, err);
    for (size_t i = 0; st == SIM_OK && mp->set && i < mp->set->n; i++)
        st = sim_output_clear(path, NULL, &mp->set->rows[i].trace, 1, who, opt, err);
    return st;
}

void sim_meas_pred_free(sim_meas_pred *mp)
{
    free(mp->g);
    free(mp->group);
    free(mp->p);
    free(mp->work);
    free(mp->other);
    free(mp->call_const_s);
    free(mp->call_const_frac);
    free(mp->queued);
    memset(mp, 0, sizeof(*mp));
}

const char *sim_meas_group_field(const sim_meas_row *r, const char *field, char *buf, size_t cap)
{
    static const char *const allowed[] = {
        "model", "hardware",      "kind",          "dtype",          "engine", "tp",
        "batch", "prompt_tokens", "output_tokens", "context_tokens", "metric", "concurrency"};
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
        if (strcmp(field, allowed[i]) == 0)
            return sim_meas_field_str(r, field, buf, cap);
    return NULL;
}

sim_status sim_meas_check_one_hw(const sim_meas_set *set, const char *cmd, struct sim_err *err)
{
    for (size_t i = 1; i < set->n; i++)
        if (strcmp(set->rows[i].hardware, set->rows[0].hardware) != 0) {
            sim_errf(err,
                     "%s: rows name more than one hardware profile ('%s' at %s:%d, '%s' at "
                     "%s:%d); select one with --select hardware=ID",
                     cmd, set->rows[0].hardware, set->rows[0].file, set->rows[0].line,
                     set->rows[i].hardware, set->rows[i].file, set->rows[i].line);
            return SIM_EINVAL;
        }
    return SIM_OK;
}

/* Among the rows of mask (NULL: all), the fewest left when the rows of one value of field are
 * left out (what a holdout fold fits on), and that value (in buf). */
size_t sim_meas_fewest_left(const sim_meas_set *set, const unsigned char *mask, const char *field,
                            char *buf, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++)
        n += !mask || mask[i];
    size_t fewest = n;
    char vb[64], wb[64];
    for (size_t i = 0; i < set->n; i++) {
        if (mask && !mask[i])
            continue;
        const char *v = sim_meas_group_field(&set->rows[i], field, vb, sizeof(vb));
        size_t in = 0;
        for (size_t j = 0; j < set->n; j++)
            in += (!mask || mask[j]) &&
                  strcmp(sim_meas_group_field(&set->rows[j], field, wb, sizeof(wb)), v) == 0;
        if (n - in < fewest) {
            fewest = n - in;
            snprintf(buf, cap, "%s", v);
        }
    }
    return fewest;
}

int64_t sim_meas_count_values(const sim_meas_set *set, const unsigned char *mask, const char *field)
{
    char a[64], b[64];
    int64_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (mask && !mask[i])
            continue;
        const char *v = sim_meas_group_field(&set->rows[i], field, a, sizeof(a));
        size_t j = 0;
        while (j < i && ((mask && !mask[j]) ||
                         strcmp(sim_meas_group_field(&set->rows[j], field, b, sizeof(b)), v) != 0))
            j++;
        n += j == i;
    }
    return n;
}

sim_status sim_meas_holdout(const sim_meas_opts *o, sim_meas_pred *mp, const char *field,
                            double *pred, unsigned char *queued, sim_meas_fold *folds,
                            int folds_cap, int *n_folds, struct sim_err *err)
{
    return sim_meas_holdout_in(o, mp, NULL, field, pred, queued, folds, folds_cap, n_folds, err);
}

sim_status sim_meas_holdout_in(const sim_meas_opts *o, sim_meas_pred *mp,
                               const unsigned char *within, const char *field, double *pred,
                               unsigned char *queued, sim_meas_fold *folds, int folds_cap,
                               int *n_folds, struct sim_err *err)
{
    const sim_meas_set *set = mp->set;
    *n_folds = 0;
    char probe[64];
    if (!sim_meas_group_field(sim_meas_row_blank(), field, probe, sizeof(probe))) {
        sim_errf(err,
                 "holdout field '%s': expected model, hardware, kind, dtype, engine, tp, "
                 "batch, prompt_tokens, output_tokens, context_tokens, metric or "
                 "concurrency",
                 field);
        return SIM_EINVAL;
    }
    sim_status st = sim_meas_check_one_hw(set, "validate", err);
    if (st != SIM_OK)
        return st;
    size_t cap = set->n ? set->n : 1;
    unsigned char *done_rows = calloc(cap, 1), *mask = malloc(cap), *held = malloc(cap);
    unsigned char *figs_held = o->figs ? malloc(cap) : NULL;
    sim_meas_figfit *ff = o->figs ? malloc(sizeof(*ff)) : NULL;
    if (!done_rows || !mask || !held || (o->figs && (!ff || !figs_held))) {
        free(done_rows);
        free(mask);
        free(held);
        free(figs_held);
        free(ff);
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    for (size_t i = 0; st == SIM_OK && i < set->n; i++) {
        if (done_rows[i] || (within && !within[i]))
            continue;
        char vb[64], wb[64];
        const char *v = sim_meas_group_field(&set->rows[i], field, vb, sizeof(vb));
        size_t n_in = 0;
        for (size_t j = 0; j < set->n; j++) {
            const int in_group =
                strcmp(sim_meas_group_field(&set->rows[j], field, wb, sizeof(wb)), v) == 0;
            const int in = !within || within[j];
            mask[j] = in && !in_group; /* fitted on */
            held[j] = in && in_group;  /* predicted */
            n_in += held[j];
        }
        sim_fit_result res;
        if (o->figs) {
            /* Figures with alpha and beta_s on the other groups; the held-out rows are
             * predicted on the profile with the fitted figures. */
            st = sim_meas_fit_figures(o, mp, mask, o->figs, "validate --holdout", ff, err);
            /* A held-out model of a class the fold's rows lack gets the fold's alpha/beta-only
             * fit on the profile as it is (mp's predictions); the others the figures. */
            for (size_t j = 0; st == SIM_OK && j < set->n; j++) {
                figs_held[j] = 0;
                if (!held[j])
                    continue;
                const sim_model *m;
                st = sim_cache_model(mp->cache, set->rows[j].model, &m, NULL, err);
                if (st == SIM_OK && sim_model_in_classes(m, ff->domain))
                    figs_held[j] = 1;
                else if (st == SIM_OK)
                    st = sim_meas_predict_row(mp, j, ff->ab.alpha, ff->ab.beta_s, &pred[j], err);
            }
            if (st == SIM_OK)
                st = sim_meas_predict_on(o, mp, figs_held, &ff->hw, ff->res.alpha, ff->res.beta_s,
                                         pred, err);
            res.alpha = ff->res.alpha;
            res.beta_s = ff->res.beta_s;
        } else {
            st = sim_meas_fit(o, mp, mask, "validate --holdout", &res, err);
        }
        if (st != SIM_OK)
            break;
        double sum = 0.0;
        for (size_t j = 0; st == SIM_OK && j < set->n; j++) {
            if (!held[j])
                continue;
            if (!o->figs)
                st = sim_meas_predict_row(mp, j, res.alpha, res.beta_s, &pred[j], err);
            if (queued) /* the regime of this prediction, before later folds predict j again */
                queued[j] = mp->queued[j];
            sum += fabs(pred[j] - set->rows[j].measured_s) / set->rows[j].measured_s * 100.0;
            done_rows[j] = 1;
        }
        if (*n_folds < folds_cap) {
            sim_meas_fold *f = &folds[(*n_folds)++];
            snprintf(f->value, sizeof(f->value), "%s", v);
            f->n = n_in;
            f->alpha = res.alpha;
            f->beta_s = res.beta_s;
            f->mape_pct = sum / (double)n_in;
        }
    }
    free(done_rows);
    free(mask);
    free(held);
    free(ff);
    free(figs_held);
    return st;
}

sim_status sim_meas_calib_write(const char *path, const sim_meas_opts *o,
                                const sim_meas_origin *from, const char *hardware,
                                const char *engine, const sim_fit_result *res,
                                const sim_calib_band *band, struct sim_err *err)
{
    return sim_meas_calib_write_figs(path, o, from, hardware, engine, res, NULL, band, err);
}

sim_status sim_meas_calib_write_figs(const char *path, const sim_meas_opts *o,
                                     const sim_meas_origin *from, const char *hardware,
                                     const char *engine, const sim_fit_result *res,
                                     const sim_meas_figfit *ff, const sim_calib_band *band,
                                     struct sim_err *err)
{
    sim_calib_out c = {
        .band = band,
        .hardware = hardware,
        .alpha = res->alpha,
        .beta_s = res->beta_s,
        .alpha_stderr = res->alpha_stderr,
        .beta_stderr_s = res->beta_stderr_s,
        .cov_alpha_beta = res->cov_alpha_beta,
        .alpha_min = o->fit.alpha_min,
        .alpha_max = o->fit.alpha_max,
        .beta_min_s = o->fit.beta_min_s,
        .beta_max_s = o->fit.beta_max_s,
        .alpha_at_bound = res->alpha_at_bound,
        .beta_at_bound = res->beta_at_bound,
        .n_rows = (long long)res->n_rows,
        .mape_pct = res->fit.mape_pct,
        .median_ape_pct = res->fit.median_ape_pct,
        .max_ape_pct = res->fit.max_ape_pct,
        .r2 = res->fit.r2,
        .files = from->files,
        .n_files = (int)from->n_files,
        .select = from->select,
        .n_select = (int)from->n_select,
        .exclude = from->exclude,
        .n_exclude = (int)from->n_exclude,
        .engine = o->no_host ? "none" : engine,
        .roofline_mode = o->mode == SIM_ROOFLINE_STEP ? "step" : "op",
        .weighting = o->fit.weight == SIM_FIT_ABSOLUTE ? "absolute" : "relative",
        .command = from->command,
        .scheduler_rule = from->scheduler_rule,
        .refit = from->refit,
    };
    sim_hw_field fig_field[SIM_FIG_MAX + 1], held_field[SIM_FIG_MAX];
    double fig_value[SIM_FIG_MAX + 1], fig_stderr[SIM_FIG_MAX + 1];
    const char *held_reason[SIM_FIG_MAX];
    if (ff) {
        for (int k = 0; k < ff->n; k++) {
            if (ff->res.held[k]) {
                held_field[c.n_held] = ff->f[k];
                held_reason[c.n_held++] = sim_meas_fig_held_name(ff->res.held[k]);
                continue;
            }
            fig_field[c.n_figures] = ff->f[k];
            fig_value[c.n_figures] = ff->res.value[k];
            fig_stderr[c.n_figures++] = ff->res.value_stderr[k];
        }
        /* The GQA behaviour, when the fit chose it (a discrete choice: no stderr). */
        if (ff->flag_compared) {
            fig_field[c.n_figures] = SIM_HWF_ATTN_DECODE_KV_PER_Q_HEAD;
            fig_value[c.n_figures] = ff->flag_value;
            fig_stderr[c.n_figures++] = (double)NAN;
        }
        c.fig_field = fig_field;
        c.fig_value = fig_value;
        c.fig_stderr = fig_stderr;
        c.held_field = held_field;
        c.held_reason = held_reason;
        c.fit_loss = sim_fit_loss_name(ff->loss);
        c.fig_domain = ff->domain;
        c.ab_alpha = ff->ab.alpha;
        c.ab_beta_s = ff->ab.beta_s;
    }
    return sim_calib_write(path, &c, err);
}
