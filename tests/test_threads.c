/*
 * test_threads.c - the thread-safety contract of include/llmstep.h, exercised as a host
 * program would: four threads share one deployment for its const functions (llmstep_step,
 * llmstep_step_grid, llmstep_capacity, llmstep_deploy_get_info), each thread owns a deployment
 * for llmstep_batch and llmstep_serve, and each owns a context for llmstep_sweep with --jobs 2.
 * Every answer must equal, bit for bit, the one the main thread computed alone beforehand (the
 * oracle is the same call without concurrency: a data race or shared scratch shows as a
 * mismatch). Built with -fsanitize=thread (`make tsan`), ThreadSanitizer also checks that no
 * two threads touch the same memory unsynchronised.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "llmstep.h"

enum { N_THREADS = 4, N_ROUNDS = 12, N_GRID = 64 };

/* What one round computes (compared through digest). */
struct answers {
    llmstep_step_result step;
    llmstep_op ops[LLMSTEP_MAX_OPS];
    size_t n_ops;
    double grid_s[N_GRID];
    llmstep_capacity_result cap;
    llmstep_deploy_info info;
    llmstep_batch_result batch;
    llmstep_serve_result serve;
    llmstep_sweep_row sweep[6];
    size_t n_sweep;
};

static llmstep_ctx *shared_ctx;
static llmstep_deploy *shared_deploy; /* const functions only, from every thread */
static struct answers want;

struct job {
    int index;
    int mismatches;
    int failures;
    char message[512];
};

static llmstep_deploy *open_deploy(llmstep_ctx *ctx, int usage, llmstep_error *err)
{
    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = "llama-3.1-8b";
    spec.hw = "h100-sxm";
    spec.tp = 2;
    spec.usage = usage;
    llmstep_deploy *d = NULL;
    if (llmstep_deploy_open(ctx, &spec, &d, err) != LLMSTEP_OK)
        return NULL;
    return d;
}

/* The const functions of the shared deployment. */
static int shared_calls(struct answers *a, llmstep_error *err)
{
    /* A mixed step: 8 decodes at 1,500 cached tokens and a 512-token prefill chunk. */
    const llmstep_group groups[2] = {{8, 1, 1500, 1}, {1, 512, 0, 1}};
    if (llmstep_step(shared_deploy, groups, 2, &a->step, a->ops, LLMSTEP_MAX_OPS, &a->n_ops, err) !=
        LLMSTEP_OK)
        return 0;
    int64_t count[N_GRID], new_tokens[N_GRID], context[N_GRID];
    for (int i = 0; i < N_GRID; i++) {
        count[i] = 1 + i;
        new_tokens[i] = 1;
        context[i] = 128 * (i + 1);
    }
    if (llmstep_step_grid(shared_deploy, N_GRID, count, new_tokens, context, a->grid_s, err) !=
        LLMSTEP_OK)
        return 0;
    if (llmstep_capacity(shared_deploy, 4096, &a->cap, err) != LLMSTEP_OK)
        return 0;
    llmstep_deploy_get_info(shared_deploy, &a->info);
    return 1;
}

/* A thread's own deployment (scratch state) and context (sweeps load through its cache). */
static int owned_calls(llmstep_ctx *ctx, llmstep_deploy *own, struct answers *a, llmstep_error *err)
{
    if (llmstep_batch(own, 32, 512, 128, &a->batch, err) != LLMSTEP_OK)
        return 0;
    llmstep_workload w;
    llmstep_workload_init(&w);
    w.concurrency = 16;
    w.prompt_tokens = 1024;
    w.output_tokens = 64;
    w.num_requests = 80;
    if (llmstep_serve(own, &w, &a->serve, err) != LLMSTEP_OK)
        return 0;
    const char *models[] = {"llama-3.1-8b"};
    const char *hws[] = {"h100-sxm"};
    const int64_t tp[] = {1, 2};
    const int64_t conc[] = {1, 4, 16};
    llmstep_sweep_spec s;
    llmstep_sweep_spec_init(&s);
    s.models = models;
    s.n_models = 1;
    s.hws = hws;
    s.n_hws = 1;
    s.kind = LLMSTEP_SWEEP_SERVING;
    s.tp = tp;
    s.n_tp = 2;
    s.batch = conc;
    s.n_batch = 3;
    s.prompt_tokens = 512;
    s.output_tokens = 32;
    s.num_requests = 24;
    s.jobs = 2; /* the sweep's own worker threads, inside this thread */
    return llmstep_sweep(ctx, &s, a->sweep, 6, &a->n_sweep, NULL, NULL, err) == LLMSTEP_OK;
}

/* The numbers of a round, in a fixed order: every figure a caller reads (compared bit for bit;
 * memcmp of whole structs would also compare their padding, which the library need not set). */
enum { DIGEST_CAP = 2048 };
static void dist_in(double *d, size_t *n, const llmstep_dist *x)
{
    d[(*n)++] = x->mean;
    d[(*n)++] = x->p50;
    d[(*n)++] = x->p90;
    d[(*n)++] = x->p99;
}

static size_t digest(const struct answers *a, double *d)
{
    size_t n = 0;
    const llmstep_step_result *s = &a->step;
    const double step[] = {s->step_s, s->gpu_s, s->roofline_s, s->host_s, s->comm_s,
                           s->flops,  s->bytes, s->tokens,     s->seqs};
    for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++)
        d[n++] = step[i];
    d[n++] = (double)a->n_ops;
    for (size_t i = 0; i < a->n_ops; i++) {
        d[n++] = a->ops[i].flops;
        d[n++] = a->ops[i].bytes;
        d[n++] = a->ops[i].n_kernels;
        d[n++] = a->ops[i].time_s;
    }
    for (int i = 0; i < N_GRID; i++)
        d[n++] = a->grid_s[i];
    d[n++] = (double)a->cap.max_seqs_by_kv;
    d[n++] = (double)a->cap.max_seqs_at_context;
    d[n++] = a->info.kv_budget_bytes;
    d[n++] = (double)a->info.kv_blocks;
    d[n++] = a->info.weights_bytes;
    const llmstep_batch_result *b = &a->batch;
    const double batch[] = {b->latency_s,           b->prefill_s,   b->decode_s,
                            b->roofline_sum_s,      b->host_sum_s,  (double)b->n_steps,
                            (double)b->preemptions, b->peak_kv_frac};
    for (size_t i = 0; i < sizeof(batch) / sizeof(batch[0]); i++)
        d[n++] = batch[i];
    const llmstep_serve_result *r = &a->serve;
    dist_in(d, &n, &r->ttft_s);
    dist_in(d, &n, &r->tpot_s);
    dist_in(d, &n, &r->itl_s);
    dist_in(d, &n, &r->e2e_s);
    dist_in(d, &n, &r->queue_s);
    d[n++] = r->output_tokens_per_s;
    d[n++] = (double)r->n_steps;
    d[n++] = (double)r->preemptions;
    d[n++] = (double)r->ttft_queued;
    d[n++] = (double)a->n_sweep;
    for (size_t i = 0; i < a->n_sweep; i++) {
        const llmstep_sweep_row *w = &a->sweep[i];
        d[n++] = (double)w->status;
        d[n++] = w->time_s;
        d[n++] = w->tokens_per_s;
        dist_in(d, &n, &w->ttft_dist_s);
        dist_in(d, &n, &w->tpot_dist_s);
        d[n++] = w->queue_mean_s;
        d[n++] = (double)w->n_requests;
    }
    return n;
}

/* Bitwise equality of two rounds' numbers. */
static int same(const struct answers *x, const struct answers *y)
{
    static _Thread_local double dx[DIGEST_CAP], dy[DIGEST_CAP];
    const size_t nx = digest(x, dx), ny = digest(y, dy);
    return nx == ny && memcmp(dx, dy, nx * sizeof(double)) == 0;
}

static void *worker(void *arg)
{
    struct job *job = arg;
    llmstep_error err;
    llmstep_ctx *ctx = llmstep_ctx_new(SIM_SOURCE_DIR, &err);
    llmstep_deploy *own = ctx ? open_deploy(ctx, 1, &err) : NULL;
    if (!own) {
        job->failures++;
        snprintf(job->message, sizeof job->message, "thread %d: %s", job->index, err.message);
    }
    for (int r = 0; own && r < N_ROUNDS; r++) {
        struct answers got;
        memset(&got, 0, sizeof got);
        if (!shared_calls(&got, &err) || !owned_calls(ctx, own, &got, &err)) {
            job->failures++;
            snprintf(job->message, sizeof job->message, "thread %d: %s", job->index, err.message);
            break;
        }
        if (!same(&got, &want))
            job->mismatches++;
    }
    llmstep_deploy_free(own);
    llmstep_ctx_free(ctx);
    return NULL;
}

int main(void)
{
    llmstep_error err;
    shared_ctx = llmstep_ctx_new(SIM_SOURCE_DIR, &err);
    if (!shared_ctx) {
        printf("FAIL context: %s\n", err.message);
        return 1;
    }
    shared_deploy = open_deploy(shared_ctx, 1, &err);
    CHECK(shared_deploy != NULL);
    if (!shared_deploy) {
        printf("FAIL deploy: %s\n", err.message);
        return check_report("test_threads");
    }

    /* The oracle: every call once, alone, on the main thread, with its own context. */
    llmstep_ctx *ctx = llmstep_ctx_new(SIM_SOURCE_DIR, &err);
    llmstep_deploy *own = ctx ? open_deploy(ctx, 1, &err) : NULL;
    memset(&want, 0, sizeof want);
    int ok = own && shared_calls(&want, &err) && owned_calls(ctx, own, &want, &err);
    if (!ok)
        printf("FAIL oracle: %s\n", err.message);
    CHECK(ok);
    llmstep_deploy_free(own);
    llmstep_ctx_free(ctx);
    if (!ok)
        return check_report("test_threads");
    /* The oracle computed something: a finite step, the serving run, every sweep row. */
    CHECK(want.step.step_s > 0 && isfinite(want.step.step_s));
    CHECK(want.n_ops > 0);
    CHECK(want.serve.n_requests == 80);
    CHECK(want.n_sweep == 6);
    double d[DIGEST_CAP];
    CHECK(digest(&want, d) < DIGEST_CAP);

    pthread_t tid[N_THREADS];
    struct job jobs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].index = i;
        CHECK(pthread_create(&tid[i], NULL, worker, &jobs[i]) == 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(tid[i], NULL);
        if (jobs[i].failures)
            printf("FAIL %s\n", jobs[i].message);
        CHECK_INT(jobs[i].failures, 0);
        CHECK_INT(jobs[i].mismatches, 0);
    }
    llmstep_deploy_free(shared_deploy);
    llmstep_ctx_free(shared_ctx);
    return check_report("test_threads");
}
