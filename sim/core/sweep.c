/* sweep.c - sweep points, derived figures, SLOs and the Pareto frontier (see sweep.h). */
#include "sweep.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "capacity.h"
#include "err.h"

static const char *const kind_names[SIM_SWEEP_KIND_COUNT] = {"decode", "prefill", "offline",
                                                             "serving"};

const char *sim_sweep_kind_name(sim_sweep_kind k)
{
    return (unsigned)k < SIM_SWEEP_KIND_COUNT ? kind_names[k] : "?";
}

const char *sim_sweep_status_name(sim_sweep_status s)
{
    static const char *const names[SIM_SWEEP_STATUS_COUNT] = {
#define XX(e, name) name,
        SIM_SWEEP_STATUS_MAP(XX)
#undef XX
    };
    return (unsigned)s < SIM_SWEEP_STATUS_COUNT ? names[s] : "?";
}

sim_status sim_sweep_kind_parse(const char *name, sim_sweep_kind *out)
{
    for (int k = 0; k < SIM_SWEEP_KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (sim_sweep_kind)k;
            return SIM_OK;
        }
    return SIM_EINVAL;
}

int64_t sim_sweep_count(const sim_sweep_axes *ax)
{
    return (int64_t)ax->n_tp * (int64_t)ax->n_batch * (int64_t)ax->n_context;
}

void sim_sweep_at(const sim_sweep_axes *ax, int64_t i, int64_t *tp, int64_t *batch,
                  int64_t *context)
{
    assert(i >= 0 && i < sim_sweep_count(ax));
    const int64_t nc = (int64_t)ax->n_context, nb = (int64_t)ax->n_batch;
    *context = ax->context[i % nc];
    *batch = ax->batch[(i / nc) % nb];
    *tp = ax->tp[i / (nc * nb)];
}

/* Reads a non-negative decimal integer at *p; advances *p. Returns -1 on no digits or overflow. */
static int read_int(const char **p, int64_t *v)
{
    const char *s = *p;
    int64_t x = 0;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        int d = *s - '0';
        if (x > (INT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
        s++;
    }
    *p = s;
    *v = x;
    return 0;
}

sim_status sim_sweep_parse_list(const char *spec, int64_t min, int64_t max, int64_t *out,
                                size_t cap, size_t *n, struct sim_err *err)
{
    *n = 0;
    const char *p = spec;
    for (;;) {
        int64_t a, b;
        if (read_int(&p, &a) != 0) {
            sim_errf(err, "'%s': expected integers and ranges a:b separated by commas", spec);
            return SIM_EINVAL;
        }
        b = a;
        if (*p == ':') {
            p++;
            if (read_int(&p, &b) != 0) {
                sim_errf(err, "'%s': expected a:b with integers a <= b", spec);
                return SIM_EINVAL;
            }
        }
        if (*p != ',' && *p != '\0') {
            sim_errf(err, "'%s': expected integers and ranges a:b separated by commas", spec);
            return SIM_EINVAL;
        }
        if (a < min || b > max || a > b) {
            sim_errf(err, "'%s': values must be in [%lld, %lld] with a <= b in a:b", spec,
                     (long long)min, (long long)max);
            return SIM_ERANGE;
        }
        if (a == 0 && b > 0) {
            sim_errf(err, "'%s': a range a:b doubles a, so a must be >= 1", spec);
            return SIM_ERANGE;
        }
        for (int64_t v = a;;) {
            if (*n == cap) {
                sim_errf(err, "'%s': more than %lld values", spec, (long long)cap);
                return SIM_ENOMEM;
            }
            out[(*n)++] = v;
            if (v > b / 2 || v == 0)
                break;
            v *= 2;
        }
        if (*p == '\0')
            return SIM_OK;
        p++;
    }
}

/* The step's wall time with the calibration and, when asked, the engine's host time
 * (sim_engine_step_wall_s: added, or overlapped by an async engine), as `llmstep predict`. */
static double step_time(const sim_sweep_ctx *c, const sim_step_cost *cost)
{
    if (!c->host_time)
        return cost->step_s;
    return sim_engine_step_wall_s(c->e, cost->step_s,
                                  sim_engine_host_s(c->e, c->run->tp, cost->seqs));
}

static void row_init(sim_sweep_row *out, sim_sweep_kind kind, const sim_sweep_ctx *c, int64_t batch)
{
    *out = (sim_sweep_row){0};
    out->kind = kind;
    out->tp = c->run->tp;
    out->pp = c->run->pp > 1 ? c->run->pp : 1;
    out->dp = sim_run_dp(c->run);
    out->ep = c->run->ep != 0;
    out->batch = batch;
    out->context_tokens = -1;
    out->prompt_tokens = -1;
    out->output_tokens = -1;
    out->time_s = out->tpot_s = out->ttft_s = (double)NAN;
    out->tokens_per_s = out->tokens_per_s_per_gpu = out->cost_per_mtok_usd = (double)NAN;
    out->bound = SIM_BOUND_NONE;
    out->status = c->tp_ok ? SIM_SWEEP_OK : SIM_SWEEP_BAD_TP;
    out->concurrency = -1;
    out->rate_per_s = (double)NAN;
    out->n_requests = -1;
    out->ttft_dist_s = out->tpot_dist_s = out->e2e_dist_s =
        (sim_dist){(double)NAN, (double)NAN, (double)NAN, (double)NAN};
    out->requests_per_s = (double)NAN;
    out->preemptions = -1;
    out->kv_peak_frac = (double)NAN;
    out->n_seeds = 1;
    out->ttft_spread_s = out->tpot_spread_s = 0.0;
    out->queue_mean_s = (double)NAN;
    out->prefix_hit_frac = (double)NAN;
    out->ttft_queued = 0;
}

/* GPUs of a row's layout. */
static int64_t row_gpus_n(const sim_sweep_row *r)
{
    return r->tp * (r->pp > 1 ? r->pp : 1) * (r->dp > 1 ? r->dp : 1);
}
static double row_gpus(const sim_sweep_row *r) { return (double)row_gpus_n(r); }

/* Status of batch sequences each holding tokens tokens (sim_capacity_max_seqs). */
static sim_sweep_status memory_status(const sim_sweep_ctx *c, int64_t batch, int64_t tokens)
{
    if (!c->mem->fits)
        return SIM_SWEEP_NO_MEMORY;
    if (tokens > c->sched->max_model_len)
        return SIM_SWEEP_TOO_LONG;
    return batch <= sim_capacity_max_seqs(c->mem, c->sched, tokens) ? SIM_SWEEP_OK
                                                                    : SIM_SWEEP_KV_FULL;
}

void sim_sweep_decode(const sim_sweep_ctx *c, int64_t batch, int64_t context, sim_sweep_row *out)
{
    row_init(out, SIM_SWEEP_DECODE, c, batch);
    out->context_tokens = context;
    if (!c->tp_ok)
        return;
    /* The step writes the new token's KV: each sequence holds context + 1 tokens. */
    const int64_t rank = sim_dp_rank_share(c->run, batch); /* the busiest DP rank's */
    out->status = memory_status(c, rank, context + 1);
    if (context + 1 > c->m->max_pos)
        return; /* sim_step_check would refuse it: no time */
    sim_step st;
    st.n_groups = 1;
    st.groups[0] = (sim_group){rank, 1, context, 1};
    sim_step_cost cost;
    sim_step_cost_compute(c->m, c->hw, c->run, &st, &cost);
    out->time_s = step_time(c, &cost);
    out->tpot_s = out->time_s;
    out->tokens_per_s = (double)batch / out->time_s;
    out->tokens_per_s_per_gpu = out->tokens_per_s / row_gpus(out);
    out->bound = cost.bound;
}

void sim_sweep_prefill(const sim_sweep_ctx *c, int64_t batch, int64_t prompt, sim_sweep_row *out)
{
    row_init(out, SIM_SWEEP_PREFILL, c, batch);
    out->context_tokens = prompt;
    out->prompt_tokens = prompt;
    if (!c->tp_ok)
        return;
    const int64_t rank = sim_dp_rank_share(c->run, batch);
    out->status = memory_status(c, rank, prompt);
    if (prompt > c->m->max_pos)
        return;
    sim_step st;
    st.n_groups = 1;
    st.groups[0] = (sim_group){rank, prompt, 0, 1};
    sim_step_cost cost;
    sim_step_cost_compute(c->m, c->hw, c->run, &st, &cost);
    out->time_s = step_time(c, &cost);
    out->ttft_s = out->time_s;
    out->tokens_per_s = (double)batch * (double)prompt / out->time_s;
    out->tokens_per_s_per_gpu = out->tokens_per_s / row_gpus(out);
    out->bound = cost.bound;
}

void sim_sweep_offline(const sim_sweep_ctx *c, int64_t batch, int64_t prompt, int64_t output,
                       sim_batch_work *work, sim_sweep_row *out)
{
    row_init(out, SIM_SWEEP_OFFLINE, c, batch);
    out->prompt_tokens = prompt;
    out->output_tokens = output;
    if (!c->tp_ok)
        return;
    if (!c->mem->fits) {
        out->status = SIM_SWEEP_NO_MEMORY;
        return;
    }
    if (prompt + output > c->sched->max_model_len) {
        out->status = SIM_SWEEP_TOO_LONG;
        return;
    }
    const int64_t rank = sim_dp_rank_share(c->run, batch);
    if (rank > SIM_BATCH_MAX_SEQS) {
        out->status = SIM_SWEEP_KV_FULL;
        return;
    }
    sim_batch b = {rank, prompt, output};
    sim_batch_result r;
    struct sim_err err;
    sim_engine e = *c->e;
    if (!c->host_time)
        sim_engine_drop_host(&e);
    const sim_setup su = {&e, c->m, c->hw, c->run, c->sched};
    if (sim_batch_simulate(&su, &b, work, &r, &err) != SIM_OK) {
        out->status = SIM_SWEEP_KV_FULL;
        return;
    }
    out->time_s = r.latency_s;
    out->ttft_s = r.prefill_s;
    out->tpot_s = r.n_decode_steps > 0 ? r.decode_s / (double)r.n_decode_steps : (double)NAN;
    out->tokens_per_s = (double)batch * (double)output / r.latency_s;
    out->tokens_per_s_per_gpu = out->tokens_per_s / row_gpus(out);
    /* The bound of a representative step: every sequence decoding at the mean context. */
    sim_step st;
    st.n_groups = 1;
    st.groups[0] = (sim_group){rank, 1, prompt + output / 2, 1};
    sim_step_cost cost;
    sim_step_cost_compute(c->m, c->hw, c->run, &st, &cost);
    out->bound = cost.bound;
}

void sim_sweep_serving_init(const sim_sweep_ctx *c, int64_t concurrency, double rate_per_s,
                            int64_t prompt, int64_t output, sim_sweep_row *out)
{
    row_init(out, SIM_SWEEP_SERVING, c, concurrency);
    out->concurrency = concurrency;
    out->rate_per_s = rate_per_s;
    out->prompt_tokens = prompt;
    out->output_tokens = output;
    if (!c->tp_ok)
        return;
    if (!c->mem->fits)
        out->status = SIM_SWEEP_NO_MEMORY;
    else if (prompt + output > c->sched->max_model_len)
        out->status = SIM_SWEEP_TOO_LONG;
    else if (concurrency >= 0 && concurrency < sim_run_dp(c->run))
        out->status = SIM_SWEEP_IDLE_RANK; /* sim_served_run refuses it */
}

double sim_sweep_dist_at(const sim_dist *d, int percentile)
{
    return percentile == 50 ? d->p50 : percentile == 99 ? d->p99 : d->p90;
}

void sim_sweep_serving_set(sim_sweep_row *r, const sim_serve_stats *st, const sim_serve_result *res,
                           int percentile)
{
    r->n_requests = st->n_requests;
    r->ttft_dist_s = st->ttft_s;
    r->tpot_dist_s = st->tpot_s;
    r->e2e_dist_s = st->e2e_s;
    r->ttft_s = sim_sweep_dist_at(&st->ttft_s, percentile);
    r->tpot_s = sim_sweep_dist_at(&st->tpot_s, percentile);
    r->time_s = sim_sweep_dist_at(&st->e2e_s, percentile);
    r->tokens_per_s = st->output_tokens_per_s;
    r->tokens_per_s_per_gpu = st->output_tokens_per_s / row_gpus(r);
    r->requests_per_s = st->request_throughput_per_s;
    r->preemptions = res->preemptions;
    r->kv_peak_frac = res->peak_kv_frac;
    r->queue_mean_s = st->queue_s.mean;
    r->ttft_queued = sim_serve_ttft_queued(st);
    r->prefix_hit_frac = sim_serve_prefix_hit_frac(res);
}

static double mean_in(double acc, double x, int64_t k) { return acc + (x - acc) / (double)(k + 1); }

static void dist_mean_in(sim_dist *acc, const sim_dist *x, int64_t k)
{
    acc->mean = mean_in(acc->mean, x->mean, k);
    acc->p50 = mean_in(acc->p50, x->p50, k);
    acc->p90 = mean_in(acc->p90, x->p90, k);
    acc->p99 = mean_in(acc->p99, x->p99, k);
}

/* The range of a judged figure: lo and hi kept in the spread (hi - lo) and the worst (hi). */
static void range_in(double *worst, double *spread, double x)
{
    const double lo = *worst - *spread;
    const double hi = x > *worst ? x : *worst;
    *spread = hi - (x < lo ? x : lo);
    *worst = hi;
}

void sim_sweep_serving_merge(sim_sweep_row *acc, const sim_sweep_row *one, int64_t k)
{
    if (k == 0) {
        *acc = *one;
        acc->n_seeds = 1;
        acc->ttft_spread_s = acc->tpot_spread_s = 0.0;
        return;
    }
    if (one->status != SIM_SWEEP_OK)
        acc->status = one->status;
    acc->n_seeds = k + 1;
    acc->n_requests =
        (int64_t)llround(mean_in((double)acc->n_requests, (double)one->n_requests, k));
    dist_mean_in(&acc->ttft_dist_s, &one->ttft_dist_s, k);
    dist_mean_in(&acc->tpot_dist_s, &one->tpot_dist_s, k);
    dist_mean_in(&acc->e2e_dist_s, &one->e2e_dist_s, k);
    acc->tokens_per_s = mean_in(acc->tokens_per_s, one->tokens_per_s, k);
    acc->tokens_per_s_per_gpu = mean_in(acc->tokens_per_s_per_gpu, one->tokens_per_s_per_gpu, k);
    acc->requests_per_s = mean_in(acc->requests_per_s, one->requests_per_s, k);
    if (one->preemptions > acc->preemptions)
        acc->preemptions = one->preemptions;
    if (one->kv_peak_frac > acc->kv_peak_frac)
        acc->kv_peak_frac = one->kv_peak_frac;
    range_in(&acc->ttft_s, &acc->ttft_spread_s, one->ttft_s);
    range_in(&acc->tpot_s, &acc->tpot_spread_s, one->tpot_s);
    if (one->time_s > acc->time_s)
        acc->time_s = one->time_s;
    acc->queue_mean_s = mean_in(acc->queue_mean_s, one->queue_mean_s, k);
    acc->prefix_hit_frac = mean_in(acc->prefix_hit_frac, one->prefix_hit_frac, k);
    acc->ttft_queued = sim_ttft_queued_means(acc->queue_mean_s, acc->ttft_dist_s.mean);
}

double sim_sweep_cost_per_mtok(double usd_per_gpu_hour, int64_t tp, double tokens_per_s)
{
    if (!(usd_per_gpu_hour > 0.0) || !(tokens_per_s > 0.0))
        return (double)NAN;
    /* USD per second for the group, divided by tokens per second, times a million. */
    return usd_per_gpu_hour * (double)tp / 3600.0 / tokens_per_s * 1e6;
}

void sim_sweep_finish(sim_sweep_row *r, const sim_sweep_slo *slo, double usd_per_gpu_hour)
{
    r->cost_per_mtok_usd =
        sim_sweep_cost_per_mtok(usd_per_gpu_hour, row_gpus_n(r), r->tokens_per_s);
    r->meets_slo = r->status == SIM_SWEEP_OK && isfinite(r->time_s) &&
                   sim_sweep_slo_holds(slo, r->ttft_s, r->tpot_s);
}

int sim_sweep_slo_holds(const sim_sweep_slo *slo, double ttft_s, double tpot_s)
{
    if (slo->tpot_s > 0.0 && !isnan(tpot_s) && !(tpot_s <= slo->tpot_s))
        return 0;
    return !(slo->ttft_s > 0.0 && !isnan(ttft_s) && !(ttft_s <= slo->ttft_s));
}

double sim_sweep_latency_s(const sim_sweep_row *r)
{
    return r->kind == SIM_SWEEP_PREFILL ? r->ttft_s : r->tpot_s;
}

int sim_sweep_better(const sim_sweep_row *a, const sim_sweep_row *b)
{
    if (a->tokens_per_s_per_gpu != b->tokens_per_s_per_gpu)
        return a->tokens_per_s_per_gpu > b->tokens_per_s_per_gpu;
    return sim_sweep_latency_s(a) < sim_sweep_latency_s(b);
}

/* a is at least as good as b on both axes. */
static int covers(const sim_pareto_point *a, const sim_pareto_point *b)
{
    return a->latency_s <= b->latency_s && a->throughput >= b->throughput;
}

int sim_pareto_insert(sim_pareto_point *front, size_t *n, size_t cap, sim_pareto_point p)
{
    for (size_t i = 0; i < *n; i++)
        if (covers(&front[i], &p))
            return 0;
    /* Count the members p covers (none is equal to p, so it dominates them). */
    size_t removed = 0;
    for (size_t i = 0; i < *n; i++)
        removed += (size_t)covers(&p, &front[i]);
    if (removed == 0 && *n == cap)
        return -1;
    size_t k = 0, pos = 0;
    for (size_t i = 0; i < *n; i++) {
        if (covers(&p, &front[i]))
            continue;
        front[k++] = front[i];
    }
    /* Keep latency order: members left are incomparable with p, so the order is strict. */
    while (pos < k && front[pos].latency_s < p.latency_s)
        pos++;
    for (size_t i = k; i > pos; i--)
        front[i] = front[i - 1];
    front[pos] = p;
    *n = k + 1;
    return 1;
}
