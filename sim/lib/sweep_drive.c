/*
 * sweep_drive.c - the sweep driver (see sweep_drive.h). Models, hardware and engines are
 * loaded once through the cache; the memory budget once per TP; each point costs one core
 * call (one serving simulation for serving points) and one call of the sink.
 */
#include "sweep_drive.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calib_json.h"
#include "deploy.h"
#include "err.h"

void sim_sweep_opts_init(sim_sweep_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->kind = SIM_SWEEP_DECODE;
    o->prompt_tokens = -1;
    o->output_tokens = -1;
    o->engine = NULL;
    o->calib_opt = "calibration";
    o->host_time = 1;
    o->range_ratio = -1.0; /* the default spread (sim_workload_range_ratio) */
    sim_sched_cfg_unset(&o->sched);
}

int64_t sim_sweep_batch_max(sim_sweep_kind kind)
{
    /* Offline: the sequences the batch simulation tracks; serving: 65,536 clients. */
    return kind == SIM_SWEEP_OFFLINE   ? SIM_BATCH_MAX_SEQS
           : kind == SIM_SWEEP_SERVING ? 65536
                                       : INT64_C(1) << 30;
}

int64_t sim_sweep_context_min(sim_sweep_kind kind) { return kind == SIM_SWEEP_DECODE ? 0 : 1; }

/*
 * A calibration file or id (not a folder) must name one of the swept GPUs: *file gets it, and
 * the blocks of the other GPUs run uncalibrated. A folder's files are matched per block
 * (sim_deploy_find_calib).
 */
static sim_status load_calibration_file(sim_cache *cache, const sim_sweep_opts *o,
                                        const sim_calib **file, struct sim_err *err)
{
    struct stat st;
    *file = NULL;
    if (!o->calibration || (stat(o->calibration, &st) == 0 && S_ISDIR(st.st_mode)))
        return SIM_OK;
    const sim_calib *c;
    sim_status s = sim_cache_calib(cache, o->calibration, &c, NULL, err);
    int match = 0;
    for (size_t i = 0; s == SIM_OK && i < o->n_hws && !match; i++) {
        const sim_hw *hw;
        s = sim_cache_hw(cache, o->hws[i], &hw, NULL, err);
        match = s == SIM_OK && strcmp(hw->id, c->hardware) == 0;
    }
    if (s == SIM_OK && !match) {
        sim_errf(err,
                 "%s: hardware: calibration is for '%s', which is not swept (use a folder of "
                 "calibrations for several)",
                 o->calibration, c->hardware);
        s = SIM_EINVAL;
    }
    if (s == SIM_OK)
        *file = c;
    return s;
}

/* What one (model, hardware) block evaluates with. */
typedef struct block_in {
    const sim_sweep_opts *o;
    sim_cache *cache;
    const sim_calib *cal_file; /* a calibration file or id given, or NULL */
    const sim_sched_cfg *sched_in;
    sim_setup su; /* the block's deployment (su.run: each point's configuration) */
    const sim_sweep_block *b;
    const sim_sweep_sink *sink;
    double price;
    size_t mi, hi; /* the block's model and hardware indices */
    int *stopped;
} block_in;

/* The served workload of one serving point. */
static sim_workload_spec serving_spec(const sim_sweep_opts *o, int open_loop, size_t k)
{
    return (sim_workload_spec){
        .arrival = open_loop ? SIM_ARRIVAL_POISSON : SIM_ARRIVAL_CLOSED,
        .concurrency = open_loop ? 0 : o->axes.batch[k],
        .rate_per_s = open_loop ? o->rates[k] : 0.0,
        .burstiness = o->burstiness > 0.0 ? o->burstiness : 1.0,
        .prompt_tokens = o->prompt_tokens,
        .output_tokens = o->output_tokens,
        .range_ratio = o->range_ratio,
        .num_requests = o->num_requests,
        .warmup_requests = -1,
        .seed = o->seed,
        .prefix_tokens = o->prefix_tokens,
        .distinct_prompts = o->distinct_prompts,
    };
}

/* The serving simulations of one point (as `llmstep serve`, one a seed) merged into r. */
static sim_status serve_point(const block_in *x, const sim_setup *su, const sim_workload_spec *spec,
                              sim_sweep_row *r, struct sim_err *err)
{
    const int64_t n_seeds = x->o->n_seeds > 1 ? x->o->n_seeds : 1;
    const sim_sweep_row blank = *r;
    sim_status s = SIM_OK;
    for (int64_t k = 0; s == SIM_OK && k < n_seeds; k++) {
        sim_workload_spec w = *spec;
        w.seed = spec->seed + (uint64_t)k;
        sim_served sv;
        sim_serve_result res;
        sim_serve_stats st;
        s = sim_served_prepare(&sv, &w, NULL, 0, err);
        if (s == SIM_OK)
            s = sim_served_run(su, &sv, NULL, NULL, &res, err);
        if (s == SIM_OK)
            s = sim_served_stats(x->su.model, x->su.hw, &sv, &res, 0.0, 0.0, &st, err);
        sim_served_free(&sv);
        if (s == SIM_OK) {
            sim_sweep_row one = blank;
            sim_sweep_serving_set(&one, &st, &res, x->o->slo.percentile);
            sim_sweep_serving_merge(r, &one, k);
        }
    }
    return s;
}

/* The model shards over cfg->tp, and with pipeline stages the TP x PP layout is legal. */
static int layout_ok(const block_in *x, const sim_run_cfg *cfg)
{
    struct sim_err e2;
    if (sim_model_check_tp(x->su.model, cfg->tp, &e2) != SIM_OK ||
        ((cfg->dp > 1 || cfg->ep) && sim_moe_layout_check(x->su.model, cfg, &e2) != SIM_OK))
        return 0;
    return cfg->pp <= 1 ||
           sim_deploy_check_layout(x->su.model, x->su.hw, cfg->tp, cfg->pp, "", &e2) == SIM_OK;
}

/* One TP of a block's serving points: its configuration, deployment and memory budget, and the
 * context the rows are initialised from (pointing at the three). */
typedef struct serving_tp {
    sim_run_cfg cfg;
    sim_setup su;
    sim_memory mem;
    sim_sweep_ctx c;
    sim_spec spec; /* speculative decoding at this TP (cfg.spec points here when on) */
} serving_tp;

/*
 * A chunk of serving points simulated on up to jobs threads (sim_sweep_opts.jobs): each worker
 * takes the next point not yet taken. The points share the block's deployment and each TP's
 * memory budget, both read only; every simulation allocates its own workload and scratch
 * (sim_served_prepare), so the threads share nothing they write but the counter. The arrays
 * hold the chunk's points, i = p - c0.
 */
typedef struct serving_chunk {
    const block_in *x;
    const serving_tp *tps;
    size_t n_load; /* points per TP: point p is load p % n_load at TP p / n_load */
    size_t c0, n;  /* the chunk: points c0 .. c0 + n - 1 */
    sim_workload_spec *specs;
    sim_sweep_row *rows;
    sim_status *status;
    struct sim_err *errs;
    size_t *order; /* the chunk's points by decreasing load: the longest simulations start first */
    atomic_size_t next;
} serving_chunk;

static void *serving_worker(void *arg)
{
    serving_chunk *b = arg;
    for (size_t j; (j = atomic_fetch_add(&b->next, 1)) < b->n;) {
        const size_t i = b->order[j];
        if (b->rows[i].status == SIM_SWEEP_OK)
            b->status[i] = serve_point(b->x, &b->tps[(b->c0 + i) / b->n_load].su, &b->specs[i],
                                       &b->rows[i], &b->errs[i]);
    }
    return NULL;
}

/* Simulates the points of b on up to jobs threads (the calling one among them); returns when
 * all are done. Threads that cannot be started leave their share to the others. */
static void serving_chunk_run(serving_chunk *b, int jobs)
{
    pthread_t tid[SIM_SWEEP_MAX_JOBS];
    int started = 0;
    for (int j = 1; j < jobs && (size_t)j < b->n; j++) {
        if (pthread_create(&tid[started], NULL, serving_worker, b) != 0)
            break;
        started++;
    }
    serving_worker(b);
    for (int j = 0; j < started; j++)
        pthread_join(tid[j], NULL);
}

/* A serving point's clients or rate: what its work grows with. */
static double serving_load(const sim_sweep_opts *o, size_t k)
{
    return o->n_rates > 0 ? o->rates[k] : (double)o->axes.batch[k];
}

/*
 * The serving points of one block: TP outermost, then concurrency (closed loop) or request
 * rate (open loop). Each point that can start is one serving simulation; the others keep
 * their status. They go in chunks in row order: one point at a time on one thread (each row
 * reaches the sink as it is computed), SIM_SWEEP_JOB_CHUNK x jobs points on jobs threads. A
 * chunk's rows reach the sink in row order once all its points are done: the rows are those of
 * one thread (each simulation is a pure function of its point), and so is the first error (the
 * earliest point's; the rows before it are written). Memory: the TPs and one chunk.
 */
static sim_status serving_points(const block_in *x, const sim_run_cfg *cfg, struct sim_err *err)
{
    const sim_sweep_opts *o = x->o;
    const int jobs =
        o->jobs < 1 ? 1 : (o->jobs > SIM_SWEEP_MAX_JOBS ? SIM_SWEEP_MAX_JOBS : o->jobs);
    const int open_loop = o->n_rates > 0;
    const size_t n_load = open_loop ? o->n_rates : o->axes.n_batch, n_tp = o->axes.n_tp;
    const size_t n = n_load * n_tp;
    if (n == 0)
        return SIM_OK;
    size_t chunk = jobs > 1 ? (size_t)jobs * SIM_SWEEP_JOB_CHUNK : 1;
    if (chunk > n)
        chunk = n;
    serving_tp *tps = malloc(n_tp * sizeof(*tps));
    serving_chunk b = {.x = x, .tps = tps, .n_load = n_load};
    b.specs = malloc(chunk * sizeof(*b.specs));
    b.rows = malloc(chunk * sizeof(*b.rows));
    b.status = malloc(chunk * sizeof(*b.status));
    b.errs = malloc(chunk * sizeof(*b.errs));
    b.order = malloc(chunk * sizeof(*b.order));
    sim_status s = SIM_OK;
    if (!tps || !b.specs || !b.rows || !b.status || !b.errs || !b.order)
        s = sim_enomem(err, "the serving points of a sweep");
    for (size_t t = 0; s == SIM_OK && t < n_tp; t++) {
        serving_tp *q = &tps[t];
        q->cfg = *cfg;
        q->cfg.tp = (int)o->axes.tp[t];
        q->su = x->su;
        q->su.run = &q->cfg;
        q->mem = (sim_memory){0};
        q->c = (sim_sweep_ctx){x->su.model, x->su.hw, &q->cfg,      x->su.engine,
                               x->su.sched, &q->mem,  o->host_time, layout_ok(x, &q->cfg)};
        q->cfg.spec = NULL;
        if (q->c.tp_ok && o->spec.method != SIM_SPEC_NONE) {
            const sim_model *draft = NULL;
            struct sim_err e2;
            s = o->spec_model ? sim_cache_model(x->cache, o->spec_model, &draft, NULL, err)
                              : SIM_OK;
            if (s == SIM_OK &&
                (s = sim_spec_setup(&q->su, &o->spec, draft, &q->spec, &e2)) != SIM_OK)
                sim_errf(err, "%s on %s at TP %d: %s", x->su.model->id, x->su.hw->id, q->cfg.tp,
                         e2.msg);
            q->cfg.spec = &q->spec;
        }
        if (q->c.tp_ok)
            sim_memory_compute(&q->su, &q->mem);
    }
    for (size_t c0 = 0; c0 < n && s == SIM_OK && !*x->stopped; c0 += chunk) {
        b.c0 = c0;
        b.n = c0 + chunk < n ? chunk : n - c0;
        for (size_t i = 0; i < b.n; i++) {
            const size_t p = c0 + i, k = p % n_load;
            b.specs[i] = serving_spec(o, open_loop, k);
            sim_sweep_serving_init(&tps[p / n_load].c, open_loop ? -1 : b.specs[i].concurrency,
                                   open_loop ? b.specs[i].rate_per_s : (double)NAN,
                                   b.specs[i].prompt_tokens, b.specs[i].output_tokens, &b.rows[i]);
            b.status[i] = SIM_OK;
            /* Insertion sort by load, largest first (stable: row order among equal loads). */
            const double load = serving_load(o, k);
            size_t j = i;
            for (; j > 0 && serving_load(o, (c0 + b.order[j - 1]) % n_load) < load; j--)
                b.order[j] = b.order[j - 1];
            b.order[j] = i;
        }
        atomic_store(&b.next, 0);
        serving_chunk_run(&b, jobs);
        for (size_t i = 0; i < b.n; i++) {
            if (b.status[i] != SIM_OK) {
                *err = b.errs[i];
                s = b.status[i];
                break;
            }
            sim_sweep_finish(&b.rows[i], &o->slo, x->price);
            if ((*x->stopped = x->sink->row(x->sink->ctx, x->b, &b.rows[i])) != 0)
                break;
        }
    }
    free(tps);
    free(b.specs), free(b.rows), free(b.status), free(b.errs), free(b.order);
    return s;
}

/* The step and offline points of one block, in sim_sweep_at order. */
static sim_status step_points(const block_in *x, sim_run_cfg *cfg, sim_batch_work *work)
{
    const sim_sweep_opts *o = x->o;
    /* Offline points have no context axis. */
    static const int64_t no_context = 0;
    sim_sweep_axes ax = o->axes;
    if (o->kind == SIM_SWEEP_OFFLINE) {
        ax.context = &no_context;
        ax.n_context = 1;
    }
    sim_memory mem;
    sim_sweep_ctx c = {x->su.model, x->su.hw, cfg,          x->su.engine,
                       x->su.sched, &mem,     o->host_time, 0};
    const int64_t n = sim_sweep_count(&ax);
    int64_t cur_tp = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t tp, batch, context;
        sim_sweep_at(&ax, i, &tp, &batch, &context);
        if (tp != cur_tp) {
            cur_tp = tp;
            cfg->tp = (int)tp;
            c.tp_ok = layout_ok(x, cfg);
            if (c.tp_ok) {
                sim_setup at = x->su;
                at.run = cfg;
                sim_memory_compute(&at, &mem);
            }
        }
        sim_sweep_row r;
        if (o->kind == SIM_SWEEP_DECODE)
            sim_sweep_decode(&c, batch, context, &r);
        else if (o->kind == SIM_SWEEP_PREFILL)
            sim_sweep_prefill(&c, batch, context, &r);
        else
            sim_sweep_offline(&c, batch, o->prompt_tokens, o->output_tokens, work, &r);
        sim_sweep_finish(&r, &o->slo, x->price);
        if ((*x->stopped = x->sink->row(x->sink->ctx, x->b, &r)) != 0)
            return SIM_OK;
    }
    return SIM_OK;
}

/* Sweeps one (model, hardware) block. */
static sim_status run_block(block_in *x, sim_batch_work *work, struct sim_err *err)
{
    const sim_sweep_opts *o = x->o;
    /* The block's deployment, resolved as every command resolves one (sim_deploy_open: the
     * engine named, else the calibration's, else vllm-v1; the calibration of this GPU and
     * engine; dtypes; scheduler defaults), opened at TP 1 (always legal): the points vary the
     * layout. A calibration file of another swept GPU leaves this block uncalibrated. */
    const char *calib = o->calibration;
    if (x->cal_file && strcmp(x->cal_file->hardware, x->su.hw->id) != 0)
        calib = NULL;
    const sim_deploy_in in = {.model = o->models[x->mi],
                              .hw = o->hws[x->hi],
                              .engine = o->engine,
                              .default_engine = SIM_DEFAULT_ENGINE,
                              .engine_opt = "--engine",
                              .calibration = calib,
                              .dtype = o->dtype,
                              .kv_dtype = o->kv_dtype,
                              .tp = 1,
                              .pp = 1,
                              .dp = 1,
                              .sched = *x->sched_in,
                              .mode = SIM_ROOFLINE_OP,
                              .gemm = SIM_GEMM_FLAT,
                              .alpha = 1.0,
                              .no_host = !o->host_time};
    sim_deployment d;
    sim_status s = sim_deploy_open(x->cache, &in, &d, err);
    if (s != SIM_OK)
        return s;
    x->su.model = d.m;
    x->su.hw = d.hw;
    x->su.engine = &d.e;
    x->su.sched = &d.s;
    const sim_sweep_block b = {.model = x->su.model->id,
                               .hw = x->su.hw->id,
                               .calib_path = d.cal_path,
                               .cal = d.cal,
                               .gpu_hour_usd = x->price,
                               .alpha = d.cfg.alpha,
                               .beta_s = d.cfg.beta_s,
                               .model_index = x->mi,
                               .hw_index = x->hi,
                               .engine = d.e.id,
                               .calib_other_engine = d.cal_other_engine};
    x->b = &b;
    sim_run_cfg cfg = d.cfg;
    const sim_sweep_sink *sink = x->sink;
    if (!(sink->begin && (*x->stopped = sink->begin(sink->ctx, &b)) != 0)) {
        static const int64_t one = 1;
        static const int ep_off = 0;
        const int64_t *pps = o->n_pp > 0 ? o->pp : &one;
        const size_t n_pp = o->n_pp > 0 ? o->n_pp : 1;
        const int64_t *dps = o->n_dp > 0 ? o->dp : &one;
        const size_t n_dp = o->n_dp > 0 ? o->n_dp : 1;
        const int *eps = o->n_ep > 0 ? o->eps : &ep_off;
        const size_t n_ep = o->n_ep > 0 ? o->n_ep : 1;
        for (size_t k = 0; s == SIM_OK && !*x->stopped && k < n_pp; k++)
            for (size_t j = 0; s == SIM_OK && !*x->stopped && j < n_dp; j++)
                for (size_t q = 0; s == SIM_OK && !*x->stopped && q < n_ep; q++) {
                    cfg.pp = (int)pps[k];
                    cfg.dp = (int)dps[j];
                    cfg.ep = eps[q] != 0;
                    s = o->kind == SIM_SWEEP_SERVING ? serving_points(x, &cfg, err)
                                                     : step_points(x, &cfg, work);
                }
        if (s == SIM_OK && !*x->stopped && sink->end)
            *x->stopped = sink->end(sink->ctx, &b);
    }
    return s;
}

sim_status sim_sweep_drive(sim_cache *c, const sim_sweep_opts *o, const sim_sweep_sink *sink,
                           int *stopped, struct sim_err *err)
{
    *stopped = 0;
    const sim_calib *cal_file = NULL;
    sim_status s = load_calibration_file(c, o, &cal_file, err);
    /* The serving defaults of `llmstep serve`: vLLM's server usage context. */
    sim_sched_cfg sched_in = o->sched;
    if (o->kind == SIM_SWEEP_SERVING)
        sched_in.usage = sim_usage_for_serving(sched_in.usage);
    /* Every name must load before the first row is written. */
    const sim_model *m;
    const sim_hw *hw;
    for (size_t mi = 0; s == SIM_OK && mi < o->n_models; mi++)
        s = sim_cache_model(c, o->models[mi], &m, NULL, err);
    for (size_t hi = 0; s == SIM_OK && hi < o->n_hws; hi++)
        s = sim_cache_hw(c, o->hws[hi], &hw, NULL, err);
    sim_batch_work *work = NULL;
    if (s == SIM_OK && o->kind == SIM_SWEEP_OFFLINE && !(work = malloc(sizeof(*work)))) {
        sim_errf(err, "out of memory");
        s = SIM_ENOMEM;
    }
    for (size_t mi = 0; s == SIM_OK && !*stopped && mi < o->n_models; mi++) {
        s = sim_cache_model(c, o->models[mi], &m, NULL, err);
        for (size_t hi = 0; s == SIM_OK && !*stopped && hi < o->n_hws; hi++) {
            s = sim_cache_hw(c, o->hws[hi], &hw, NULL, err);
            const double price =
                o->gpu_hour_usd_hw[hi] > 0.0 ? o->gpu_hour_usd_hw[hi] : o->gpu_hour_usd;
            block_in x = {.o = o,
                          .cache = c,
                          .cal_file = cal_file,
                          .sched_in = &sched_in,
                          .su = {.model = m, .hw = hw},
                          .sink = sink,
                          .price = price,
                          .mi = mi,
                          .hi = hi,
                          .stopped = stopped};
            if (s == SIM_OK)
                s = run_block(&x, work, err);
        }
    }
    free(work);
    return s;
}
