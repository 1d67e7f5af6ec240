/*
 * test_api.c - the public C API (include/llmstep.h), linked as a user would (libllmstep.a):
 * published architecture facts and hand-derived figures through it, the cache, errors that
 * name the file and field, and agreement between its entry points.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "check.h"
#include "llmstep.h"

static llmstep_ctx *ctx;

static llmstep_deploy *open_deploy(const char *model, const char *hw, int64_t tp, int usage)
{
    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = model;
    spec.hw = hw;
    spec.tp = tp;
    spec.usage = usage;
    llmstep_deploy *d = NULL;
    llmstep_error err;
    if (llmstep_deploy_open(ctx, &spec, &d, &err) != LLMSTEP_OK)
        printf("deploy %s on %s: %s\n", model, hw, err.message);
    CHECK(d != NULL);
    return d;
}

/* A sweep spec over the given names and axes; the rest as llmstep_sweep_spec_init leaves it. */
static void sweep_spec(llmstep_sweep_spec *s, const char *const *models, size_t n_models,
                       const char *const *hws, size_t n_hws, const int64_t *tp, size_t n_tp,
                       const int64_t *batch, size_t n_batch, const int64_t *ctxs, size_t n_ctxs)
{
    llmstep_sweep_spec_init(s);
    s->models = models;
    s->n_models = n_models;
    s->hws = hws;
    s->n_hws = n_hws;
    s->tp = tp;
    s->n_tp = n_tp;
    s->batch = batch;
    s->n_batch = n_batch;
    s->context = ctxs;
    s->n_context = n_ctxs;
}

static void version_and_abi(void)
{
    CHECK_STR(llmstep_version(), LLMSTEP_VERSION);
    CHECK_INT(llmstep_abi_version(), LLMSTEP_ABI_VERSION);
    CHECK_STR(llmstep_status_name(LLMSTEP_EINVAL), "invalid argument");
    /* A value that is no status is not named as one (it said "invalid argument"). */
    CHECK_STR(llmstep_status_name((llmstep_status)999), "unknown status");
    CHECK_STR(llmstep_status_name((llmstep_status)-1), "unknown status");
}

/* Llama-3.1-8B: 8.03e9 parameters (Meta's model card); KV cache per token at 16 bits:
 * 2 (K, V) x 32 layers x 8 KV heads x 128 head_dim x 2 bytes = 131072 bytes. */
static void model_facts_and_cache(void)
{
    const llmstep_model *m = NULL, *again = NULL;
    llmstep_error err;
    CHECK_INT(llmstep_model_load(ctx, "llama-3.1-8b", &m, &err), LLMSTEP_OK);
    size_t n = llmstep_ctx_n_loaded(ctx);
    CHECK_INT(llmstep_model_load(ctx, "llama-3.1-8b", &again, &err), LLMSTEP_OK);
    CHECK(m == again);
    CHECK_INT((long long)llmstep_ctx_n_loaded(ctx), (long long)n);
    llmstep_model_info info;
    llmstep_model_get_info(m, &info);
    CHECK_INT(info.n_layers, 32);
    CHECK_INT(info.n_kv_heads, 8);
    CHECK_REL(info.params, 8.03e9, 0.01);
    CHECK_REL(info.kv_bytes_per_token_16bit, 131072.0, 1e-12);
}

/* Errors: codes, and messages naming the file and the field. */
static void errors_name_file_and_field(void)
{
    const llmstep_model *m = NULL;
    llmstep_error err;
    CHECK_INT(llmstep_model_load(ctx, "no-such-model", &m, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "no-such-model");
    CHECK(m == NULL);
    const char *bad = SIM_SOURCE_DIR "/tests/data/model_misspelled.json";
    llmstep_status st = llmstep_model_load(ctx, bad, &m, &err);
    CHECK(st != LLMSTEP_OK);
    CHECK_CONTAINS(err.message, "model_misspelled.json:");
    CHECK_CONTAINS(err.message, "num_hidden_layer");

    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = "llama-3.1-8b";
    spec.hw = "h100-sxm";
    llmstep_deploy *d = NULL;
    spec.tp = 3; /* 32 heads do not split over 3 GPUs */
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_EINVAL);
    CHECK(d == NULL);
    spec.tp = 16; /* two H100 nodes: a hierarchical all-reduce over InfiniBand */
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_OK);
    llmstep_deploy_free(d);
    d = NULL;
    spec.tp = 1;
    spec.model = "llama-3.1-70b"; /* 141 GB of bf16 weights on one 80 GB GPU */
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "does not fit");
    spec.ignore_memory = 1;
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_OK);
    llmstep_deploy_free(d);
    spec.ignore_memory = 0;
    spec.model = "llama-3.1-8b";
    spec.dtype = "int3";
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "--dtype 'int3'");
    spec.dtype = NULL;
    spec.gpu_memory_utilization_frac = 1.5;
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "gpu_memory_utilization_frac");
}

/* A step, its operators, and the grid agree; a decode step of an 8B model on an H100 reads at
 * least the weights: 16.06e9 bytes at 3.35e12 B/s (datasheet HBM3) is 4.8 ms at the very least. */
static void step_ops_and_grid(llmstep_deploy *d)
{
    llmstep_group g = {32, 1, 1024, 1};
    llmstep_step_result r;
    llmstep_op ops[LLMSTEP_MAX_OPS];
    size_t n_ops = 0;
    llmstep_error err;
    CHECK_INT(llmstep_step(d, &g, 1, &r, ops, LLMSTEP_MAX_OPS, &n_ops, &err), LLMSTEP_OK);
    CHECK(n_ops >= 10);
    double sum = 0.0, flops = 0.0;
    for (size_t i = 0; i < n_ops; i++) {
        sum += ops[i].time_s;
        flops += ops[i].flops;
    }
    CHECK_REL(sum, r.roofline_s, 1e-9);
    CHECK_REL(flops, r.flops, 1e-9);
    CHECK(r.bytes >= 16.06e9);
    CHECK(r.gpu_s >= 16.06e9 / 3.35e12);
    CHECK(r.step_s >= r.gpu_s);
    CHECK_STR(r.bound, "memory");
    int64_t count[3] = {32, 1, 8}, tokens[3] = {1, 2048, 1}, ctxs[3] = {1024, 0, 4096};
    double out[3];
    CHECK_INT(llmstep_step_grid(d, 3, count, tokens, ctxs, out, &err), LLMSTEP_OK);
    CHECK_REL(out[0], r.step_s, 1e-12);
    llmstep_group p = {1, 2048, 0, 1};
    CHECK_INT(llmstep_step(d, &p, 1, &r, NULL, 0, NULL, &err), LLMSTEP_OK);
    CHECK_REL(out[1], r.step_s, 1e-12);
    ctxs[2] = 1 << 20; /* beyond the model's 131072 positions */
    CHECK_INT(llmstep_step_grid(d, 3, count, tokens, ctxs, out, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "point 2");
}

/* Capacity: min(max_num_seqs, floor(kv_blocks / ceil(C / block_size))) from the info. */
static void capacity_rule(llmstep_deploy *d)
{
    llmstep_deploy_info info;
    llmstep_deploy_get_info(d, &info);
    CHECK_INT(info.max_num_batched_tokens, 8192); /* vLLM's server default on >= 70 GiB */
    CHECK_INT(info.kv_capacity_tokens, info.kv_blocks * info.block_size);
    llmstep_capacity_result c;
    llmstep_error err;
    CHECK_INT(llmstep_capacity(d, 1152, &c, &err), LLMSTEP_OK);
    int64_t per_seq = (1152 + info.block_size - 1) / info.block_size;
    int64_t by_kv = info.kv_blocks / per_seq;
    CHECK_INT(c.max_seqs_at_context, by_kv < info.max_num_seqs ? by_kv : info.max_num_seqs);
    CHECK_INT(llmstep_capacity(d, 0, &c, &err), LLMSTEP_ERANGE);
}

/* Serving: a closed loop obeys Little's law (throughput = concurrency / mean E2E, up to the
 * ramp at start and end); the same seed gives the same numbers; bad workloads are refused. */
static void serving(llmstep_deploy *d)
{
    llmstep_workload w;
    llmstep_workload_init(&w);
    w.concurrency = 32;
    w.num_requests = 2000;
    w.range_ratio = 0.3;
    llmstep_serve_result a, b;
    llmstep_error err;
    CHECK_INT(llmstep_serve(d, &w, &a, &err), LLMSTEP_OK);
    CHECK_REL(a.request_throughput_per_s, 32.0 / a.e2e_s.mean, 0.03);
    CHECK_INT(a.n_requests, 2000);
    CHECK_INT(llmstep_serve(d, &w, &b, &err), LLMSTEP_OK);
    CHECK_REL(b.ttft_s.p90, a.ttft_s.p90, 0.0);
    w.concurrency = 0;
    CHECK_INT(llmstep_serve(d, &w, &a, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "concurrency");
    llmstep_workload_init(&w);
    w.arrival = LLMSTEP_ARRIVAL_TRACE;
    w.trace_path = SIM_SOURCE_DIR "/tests/data/no-such-trace.jsonl";
    CHECK(llmstep_serve(d, &w, &a, &err) != LLMSTEP_OK);
    CHECK_CONTAINS(err.message, "no-such-trace.jsonl");
    llmstep_batch_result br;
    CHECK_INT(llmstep_batch(d, 8, 1024, 128, &br, &err), LLMSTEP_OK);
    CHECK_INT(br.n_decode_steps + br.n_prefill_steps, br.n_steps);
    CHECK(br.latency_s > 127 * 0.004); /* 127 decode steps of at least 4.8 ms (see above) */
}

/* A measurement spec of the bundled measurements/example.jsonl's h100-sxm rows. */
static void example_h100_rows(llmstep_meas_spec *spec)
{
    static const char *const files[] = {SIM_SOURCE_DIR "/measurements/example.jsonl"};
    static const char *const sel[] = {"hardware=h100-sxm"};
    llmstep_meas_spec_init(spec);
    spec->files = files;
    spec->n_files = 1;
    spec->select = sel;
    spec->n_select = 1;
}

/* Measurements: validate's errors are those of the rows it returns (recomputed here), a
 * calibration fitted on the rows reproduces its own reported fit when validated with it, and
 * holdout predicts every row once. Rows: the bundled measurements/example.jsonl. */
static void measurements(void)
{
    llmstep_meas_spec spec;
    example_h100_rows(&spec);
    double pred[64], meas[64];
    llmstep_validation v;
    llmstep_error err;
    CHECK_INT(llmstep_validate(ctx, &spec, SIM_SOURCE_DIR "/calibrations/h100-sxm.json", pred, meas,
                               64, &v, &err),
              LLMSTEP_OK);
    CHECK(v.n_rows >= 2 && v.n_rows <= 64);
    double sum = 0.0;
    for (int64_t i = 0; i < v.n_rows; i++)
        sum += fabs(pred[i] - meas[i]) / meas[i] * 100.0;
    CHECK_REL(v.mape_pct, sum / (double)v.n_rows, 1e-12);

    llmstep_fit fit;
    CHECK_INT(llmstep_calibrate(ctx, &spec, &fit, &err), LLMSTEP_OK);
    CHECK_STR(fit.hardware, "h100-sxm");
    CHECK_INT(fit.n_rows, v.n_rows);
    /* Validating with the fitted figures gives the fit's own errors. */
    const char *tmpl = "/tmp/llmstep-test-api-calib-XXXXXX";
    char path[64];
    snprintf(path, sizeof(path), "%s", tmpl);
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        fprintf(f,
                "{\"schema\": \"llmstep-calibration/1\", \"hardware\": \"h100-sxm\", "
                "\"engine\": \"%s\", \"alpha\": %.17g, \"beta_s\": %.17g}\n",
                fit.engine, fit.alpha, fit.beta_s);
        fclose(f);
        llmstep_validation v2;
        llmstep_status st = llmstep_validate(ctx, &spec, path, NULL, NULL, 0, &v2, &err);
        if (st != LLMSTEP_OK)
            printf("validate with the fitted calibration: %s\n", err.message);
        CHECK_INT(st, LLMSTEP_OK);
        CHECK_REL(v2.mape_pct, fit.fit.mape_pct, 1e-9);
        remove(path);
    }
    /* A figure fit's file whose domain holds none of the rows' models (MoE with MLA): every
     * row gets alpha_beta_only (here the fit above) on the profile without the figure, so
     * the errors are the fit's own; with every class in the domain the figure (a KV gather
     * at half the profile's rate) applies and they are not. */
    for (int all = 0; all <= 1; all++) {
        snprintf(path, sizeof(path), "%s", tmpl);
        fd = mkstemp(path);
        CHECK(fd >= 0);
        if (fd < 0)
            break;
        FILE *f = fdopen(fd, "w");
        fprintf(f,
                "{\"schema\": \"llmstep-calibration/1\", \"hardware\": \"h100-sxm\", "
                "\"engine\": \"%s\", \"alpha\": 1.0, \"beta_s\": 0.0,\n"
                "\"figures\": {\"bw_factor_kv_gather_frac\": {\"value\": 0.5}},\n"
                "\"figure_domain\": [%s],\n"
                "\"alpha_beta_only\": {\"alpha\": %.17g, \"beta_s\": %.17g}}\n",
                fit.engine,
                all ? "\"dense-mha\", \"dense-gqa\", \"dense-mla\", \"moe-mha\", "
                      "\"moe-gqa\", \"moe-mla\""
                    : "\"moe-mla\"",
                fit.alpha, fit.beta_s);
        fclose(f);
        llmstep_validation v3;
        CHECK_INT(llmstep_validate(ctx, &spec, path, NULL, NULL, 0, &v3, &err), LLMSTEP_OK);
        if (all)
            CHECK(fabs(v3.mape_pct - fit.fit.mape_pct) > 1e-6);
        else
            CHECK_REL(v3.mape_pct, fit.fit.mape_pct, 1e-9);
        remove(path);
    }

    llmstep_validation h;
    CHECK_INT(llmstep_holdout(ctx, &spec, "model", pred, meas, 64, &h, &err), LLMSTEP_OK);
    CHECK_INT(h.n_rows, v.n_rows);
    CHECK_INT(llmstep_holdout(ctx, &spec, "colour", NULL, NULL, 0, &h, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "colour");

    const char *bad_sel[] = {"hardwar=h100-sxm"};
    spec.select = bad_sel;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &v, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "hardwar");
    const char *none_sel[] = {"hardware=b200"};
    spec.select = none_sel;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &v, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "no row matches");
}

/* Counts the points a serving sweep reports and stops after stop_after of them. */
typedef struct sweep_seen {
    int n, stop_after;
    double last_load;
} sweep_seen;

static int sweep_cb(void *user, size_t i, double load, const llmstep_serve_result *r, int meets)
{
    sweep_seen *s = user;
    (void)r;
    (void)meets;
    CHECK_INT((int)i, s->n);
    s->n++;
    s->last_load = load;
    return s->n >= s->stop_after;
}

/*
 * A serving sweep: point i is llmstep_serve at load i (same numbers, bit for bit); in a closed
 * loop more clients queue longer, so TTFT p90 does not fall with concurrency; the verdict is
 * the SLO rule applied by hand; the callback sees the points in order and stops the sweep.
 */
static void serving_sweep(llmstep_deploy *d)
{
    llmstep_workload w;
    llmstep_workload_init(&w);
    w.num_requests = 200;
    w.slo_ttft_s = 0.2;
    w.slo_tpot_s = 0.02;
    const double loads[] = {1, 8, 64};
    llmstep_serve_result r[3], one;
    int meets[3];
    llmstep_error err;
    CHECK_INT(llmstep_serve_sweep(d, &w, loads, 3, 90, r, meets, NULL, NULL, &err), LLMSTEP_OK);
    for (int i = 0; i < 3; i++) {
        llmstep_workload wi = w;
        wi.concurrency = (int64_t)loads[i];
        CHECK_INT(llmstep_serve(d, &wi, &one, &err), LLMSTEP_OK);
        CHECK(one.ttft_s.p90 == r[i].ttft_s.p90 && one.tpot_s.p99 == r[i].tpot_s.p99);
        const int want = r[i].ttft_s.p90 <= 0.2 && r[i].tpot_s.p90 <= 0.02;
        CHECK_INT(meets[i], want);
        if (i > 0)
            CHECK(r[i].ttft_s.p90 >= r[i - 1].ttft_s.p90);
    }
    CHECK_INT(meets[0], 1); /* one client: no queue */
    CHECK_INT(meets[2], 0); /* 64 clients of 1024-token prompts: TTFT p90 above 200 ms */
    sweep_seen seen = {0, 2, 0.0};
    CHECK_INT(llmstep_serve_sweep(d, &w, loads, 3, 0, NULL, NULL, sweep_cb, &seen, &err),
              LLMSTEP_OK);
    CHECK_INT(seen.n, 2);
    CHECK_REL(seen.last_load, 8.0, 0.0);
    const double half[] = {1.5};
    CHECK_INT(llmstep_serve_sweep(d, &w, half, 1, 90, r, NULL, NULL, NULL, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "whole number");
    CHECK_INT(llmstep_serve_sweep(d, &w, loads, 1, 75, r, NULL, NULL, NULL, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "slo_percentile");
    w.arrival = LLMSTEP_ARRIVAL_POISSON;
    const double rates[] = {2.0, -1.0};
    CHECK_INT(llmstep_serve_sweep(d, &w, rates, 2, 90, r, NULL, NULL, NULL, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "rate_per_s");
    w.arrival = LLMSTEP_ARRIVAL_TRACE;
    w.trace_path = "x.jsonl";
    CHECK_INT(llmstep_serve_sweep(d, &w, rates, 1, 90, r, NULL, NULL, NULL, &err), LLMSTEP_EINVAL);
}

/* Reads a whole small file into buf (NUL-terminated); its length, or 0. */
static size_t slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

/*
 * Rows in memory: the example file's text given as rows_jsonl validates as the file does;
 * a bad row is named "<rows>" with its line. llmstep_calibrate_write writes a calibration
 * file that deploys and validates with the fitted figures, and refuses a directory.
 */
static void rows_in_memory_and_calibration_file(void)
{
    static char text[1 << 16];
    const char *file = SIM_SOURCE_DIR "/measurements/example.jsonl";
    const size_t len = slurp(file, text, sizeof(text));
    CHECK(len > 0 && len < sizeof(text) - 1);
    const char *files[] = {file};
    const char *sel[] = {"hardware=h100-sxm"};
    llmstep_meas_spec spec;
    llmstep_meas_spec_init(&spec);
    spec.select = sel;
    spec.n_select = 1;
    llmstep_validation from_text, from_file;
    llmstep_error err;
    spec.rows_jsonl = text;
    spec.rows_jsonl_len = len;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &from_text, &err), LLMSTEP_OK);
    spec.rows_jsonl = NULL;
    spec.files = files;
    spec.n_files = 1;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &from_file, &err), LLMSTEP_OK);
    CHECK_INT(from_text.n_rows, from_file.n_rows);
    CHECK(from_text.mape_pct == from_file.mape_pct);
    /* Both: the same ids twice. */
    spec.rows_jsonl = text;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &from_text, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "id");
    const char bad[] = "{\"id\": \"x\", \"hardware\": \"h100-sxm\"}\n";
    spec.files = NULL;
    spec.n_files = 0;
    spec.rows_jsonl = bad;
    spec.rows_jsonl_len = sizeof(bad) - 1;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &from_text, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "<rows>:1:");
    spec.rows_jsonl = NULL;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &from_text, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "rows_jsonl");

    spec.files = files;
    spec.n_files = 1;
    char path[64];
    snprintf(path, sizeof(path), "/tmp/llmstep-test-api-%ld.json", (long)getpid());
    llmstep_fit fit;
    CHECK_INT(llmstep_calibrate_write(ctx, &spec, path, &fit, &err), LLMSTEP_OK);
    /* The file records the engine arguments the rows were predicted with (none given). */
    CHECK(slurp(path, text, sizeof(text)) > 0);
    CHECK(strstr(text, "\"scheduler_rule\":\t\"engine-defaults\"") != NULL);
    llmstep_validation v;
    CHECK_INT(llmstep_validate(ctx, &spec, path, NULL, NULL, 0, &v, &err), LLMSTEP_OK);
    CHECK(v.alpha == fit.alpha && v.beta_s == fit.beta_s);
    CHECK_REL(v.mape_pct, fit.fit.mape_pct, 1e-9);
    llmstep_deploy_spec ds;
    llmstep_deploy_spec_init(&ds);
    ds.model = "llama-3.1-8b";
    ds.hw = "h100-sxm";
    ds.calibration = path;
    llmstep_deploy *d = NULL;
    CHECK_INT(llmstep_deploy_open(ctx, &ds, &d, &err), LLMSTEP_OK);
    llmstep_deploy_free(d);
    remove(path);
    CHECK(llmstep_calibrate_write(ctx, &spec, "/tmp", &fit, &err) != LLMSTEP_OK);
    CHECK_CONTAINS(err.message, "not a regular file");
}

static int stop_after_three(void *user, const llmstep_sweep_row *row)
{
    (void)row;
    return ++*(int *)user >= 3;
}

/*
 * A configuration sweep (the driver of `llmstep sweep`): each decode row is llmstep_step on a
 * deployment of the same point (engine vllm-v0, the sweep's default off serving), each
 * offline row llmstep_batch; rows come models outer, then hardware, TP, batch, context; the
 * callback can stop it; bad specs are refused naming the field.
 */
static void config_sweep(void)
{
    const char *models[] = {"llama-3.1-8b"}, *hws[] = {"h100-sxm", "a100-sxm-80gb"};
    const int64_t tp[] = {1, 2}, batch[] = {1, 32}, ctxs[] = {1024, 4096};
    llmstep_sweep_spec s;
    sweep_spec(&s, models, 1, hws, 2, tp, 2, batch, 2, ctxs, 2);
    llmstep_sweep_row rows[16];
    size_t n = 0;
    llmstep_error err;
    CHECK_INT((int)llmstep_sweep_size(&s), 16);
    CHECK_INT(llmstep_sweep(ctx, &s, rows, 16, &n, NULL, NULL, &err), LLMSTEP_OK);
    CHECK_INT((int)n, 16);
    for (size_t i = 0; i < n; i++) {
        const llmstep_sweep_row *r = &rows[i];
        /* Order: hardware, TP, batch, context. */
        CHECK_INT(r->hw_index, (int)(i / 8));
        CHECK_INT((int)r->tp, (int)tp[(i / 4) % 2]);
        CHECK_INT((int)r->batch, (int)batch[(i / 2) % 2]);
        CHECK_INT((int)r->context_tokens, (int)ctxs[i % 2]);
        llmstep_deploy_spec ds;
        llmstep_deploy_spec_init(&ds);
        ds.model = "llama-3.1-8b";
        ds.hw = hws[r->hw_index];
        ds.tp = r->tp;
        ds.ignore_memory = 1; /* the sweep's default engine is every command's: vllm-v1 */
        llmstep_deploy *d = NULL;
        CHECK_INT(llmstep_deploy_open(ctx, &ds, &d, &err), LLMSTEP_OK);
        if (!d)
            continue;
        llmstep_group g = {r->batch, 1, r->context_tokens, 1};
        llmstep_step_result sr;
        CHECK_INT(llmstep_step(d, &g, 1, &sr, NULL, 0, NULL, &err), LLMSTEP_OK);
        CHECK_REL(r->time_s, sr.step_s, 1e-12);
        CHECK_REL(r->tokens_per_s, (double)r->batch / sr.step_s, 1e-12);
        llmstep_deploy_free(d);
    }
    int seen = 0;
    CHECK_INT(llmstep_sweep(ctx, &s, NULL, 0, &n, stop_after_three, &seen, &err), LLMSTEP_OK);
    CHECK_INT((int)n, 3);
    /* Offline: a batch of 8 prompts of 512 tokens, 64 out. */
    s.kind = LLMSTEP_SWEEP_OFFLINE;
    s.n_hws = 1;
    s.n_tp = 1;
    const int64_t eight[] = {8};
    s.batch = eight;
    s.n_batch = 1;
    s.prompt_tokens = 512;
    s.output_tokens = 64;
    CHECK_INT(llmstep_sweep(ctx, &s, rows, 16, &n, NULL, NULL, &err), LLMSTEP_OK);
    CHECK_INT((int)n, 1);
    llmstep_deploy_spec ds;
    llmstep_deploy_spec_init(&ds);
    ds.model = "llama-3.1-8b";
    ds.hw = "h100-sxm"; /* no engine named: vllm-v1, the sweep's and every command's default */
    llmstep_deploy *d = NULL;
    CHECK_INT(llmstep_deploy_open(ctx, &ds, &d, &err), LLMSTEP_OK);
    llmstep_batch_result br;
    if (d) {
        CHECK_INT(llmstep_batch(d, 8, 512, 64, &br, &err), LLMSTEP_OK);
        CHECK_REL(rows[0].time_s, br.latency_s, 1e-12);
    }
    llmstep_deploy_free(d);
    /* Refused: lengths on a decode sweep; a TP of 0; a misspelt model. */
    s.kind = LLMSTEP_SWEEP_DECODE;
    CHECK_INT(llmstep_sweep(ctx, &s, rows, 16, &n, NULL, NULL, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "prompt_tokens");
    s.prompt_tokens = s.output_tokens = 0;
    const int64_t zero[] = {0};
    s.tp = zero;
    CHECK_INT(llmstep_sweep(ctx, &s, rows, 16, &n, NULL, NULL, &err), LLMSTEP_ERANGE);
    CHECK_CONTAINS(err.message, "tp[0]");
    s.tp = tp;
    const char *typo[] = {"llama-3.1-8c"};
    s.models = typo;
    CHECK(llmstep_sweep(ctx, &s, rows, 16, &n, NULL, NULL, &err) != LLMSTEP_OK);
    CHECK_CONTAINS(err.message, "llama-3.1-8c");
    CHECK_INT((int)n, 0);
    /* Serving on threads (jobs): the rows of one thread, in the same order, bit for bit; the
     * callback still sees them in order on this thread. */
    s.models = models;
    s.kind = LLMSTEP_SWEEP_SERVING;
    s.n_hws = 2;
    s.n_tp = 2;
    const int64_t conc[] = {1, 4, 16, 64};
    s.batch = conc;
    s.n_batch = 4;
    s.n_context = 0;
    s.prompt_tokens = 512;
    s.output_tokens = 64;
    llmstep_sweep_row one[16], many[16];
    size_t n1 = 0, n4 = 0;
    s.jobs = 1;
    CHECK_INT(llmstep_sweep(ctx, &s, one, 16, &n1, NULL, NULL, &err), LLMSTEP_OK);
    s.jobs = 4;
    CHECK_INT(llmstep_sweep(ctx, &s, many, 16, &n4, NULL, NULL, &err), LLMSTEP_OK);
    CHECK_INT((int)n1, 16);
    CHECK_INT((int)n4, 16);
    int same = 1;
    for (int i = 0; i < 16; i++) {
        const llmstep_sweep_row *a = &one[i], *b = &many[i];
        same &= a->tp == b->tp && a->concurrency == b->concurrency && a->status == b->status &&
                a->meets_slo == b->meets_slo && a->time_s == b->time_s &&
                a->tokens_per_s == b->tokens_per_s && a->preemptions == b->preemptions &&
                a->kv_peak_frac == b->kv_peak_frac && a->requests_per_s == b->requests_per_s &&
                a->ttft_dist_s.mean == b->ttft_dist_s.mean &&
                a->ttft_dist_s.p99 == b->ttft_dist_s.p99 &&
                a->tpot_dist_s.p50 == b->tpot_dist_s.p50 &&
                a->tpot_dist_s.p90 == b->tpot_dist_s.p90 && a->e2e_dist_s.p90 == b->e2e_dist_s.p90;
    }
    CHECK(same);
    seen = 0;
    CHECK_INT(llmstep_sweep(ctx, &s, NULL, 0, &n, stop_after_three, &seen, &err), LLMSTEP_OK);
    CHECK_INT((int)n, 3);
    s.jobs = -1;
    CHECK_INT(llmstep_sweep(ctx, &s, many, 16, &n, NULL, NULL, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "jobs: expected 0 to 256 threads, got -1");
    s.jobs = 257;
    CHECK_INT(llmstep_sweep(ctx, &s, many, 16, &n, NULL, NULL, &err), LLMSTEP_EINVAL);
}

/*
 * spec.scheduler_rule "aic-benchmark" gives a closed-loop serving row without a "scheduler"
 * object the engine arguments aiconfigurator's benchmark mode starts vLLM with (meas_pred.h),
 * by hand for 64 clients, 1024 + 128 tokens: max_num_seqs 64, max_num_batched_tokens
 * 64 + 1024 + 1500 = 2588, max_model_len 1024 + 128 + 1500 = 2652. So the bare row predicts
 * exactly what the same row with those arguments written out predicts, and (the budget being
 * a quarter of vLLM 0.12's server default of 8192 tokens on an H100) not what it predicts
 * under the engine's defaults. An unknown rule is refused naming the field.
 */
static void scheduler_rule(void)
{
#define SR_ROW(ID, SCHED)                                                                          \
    "{\"id\":\"" ID "\",\"source\":\"t\",\"hardware\":\"h100-sxm\",\"model\":\"qwen3-32b\","       \
    "\"tp\":2,\"kind\":\"serving\",\"engine\":\"vllm\",\"engine_version\":\"0.12.0\","             \
    "\"metric\":\"ttft_mean\",\"workload\":{\"arrival\":\"closed\",\"concurrency\":64,"            \
    "\"prompt_tokens\":1024,\"output_tokens\":128}" SCHED ",\"measured_s\":0.38}\n"
    static const char bare[] = SR_ROW("bare", ""),
                      given[] = SR_ROW("given", ",\"scheduler\":{\"max_num_seqs\":64,"
                                                "\"max_num_batched_tokens\":2588,"
                                                "\"max_model_len\":2652}");
#undef SR_ROW
    llmstep_meas_spec spec;
    llmstep_meas_spec_init(&spec);
    CHECK(spec.scheduler_rule == NULL);
    llmstep_validation v;
    llmstep_error err;
    double p_bare_rule = 0, p_bare_default = 0, p_given = 0, m = 0;
    spec.rows_jsonl = bare;
    spec.rows_jsonl_len = sizeof(bare) - 1;
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, &p_bare_default, &m, 1, &v, &err), LLMSTEP_OK);
    spec.scheduler_rule = "aic-benchmark";
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, &p_bare_rule, &m, 1, &v, &err), LLMSTEP_OK);
    spec.rows_jsonl = given;
    spec.rows_jsonl_len = sizeof(given) - 1;
    spec.scheduler_rule = "engine-defaults";
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, &p_given, &m, 1, &v, &err), LLMSTEP_OK);
    CHECK(p_given > 0.0 && p_bare_rule == p_given);
    CHECK(fabs(p_bare_default / p_given - 1.0) > 0.01);
    spec.scheduler_rule = "aic";
    CHECK_INT(llmstep_validate(ctx, &spec, NULL, NULL, NULL, 0, &v, &err), LLMSTEP_EINVAL);
    CHECK_CONTAINS(err.message, "scheduler_rule");
    CHECK_CONTAINS(err.message, "engine-defaults or aic-benchmark");
}

/* Every getter and initializer is defined for NULL (llmstep.h): "" or 0, nothing written. */
static void null_arguments(void)
{
    CHECK_STR(llmstep_ctx_data_dir(NULL), "");
    CHECK_INT(llmstep_ctx_n_loaded(NULL), 0);
    llmstep_model_get_info(NULL, NULL);
    llmstep_model_info mi;
    mi.n_layers = 7;
    llmstep_model_get_info(NULL, &mi);
    CHECK_INT(mi.n_layers, 0);
    CHECK_STR(llmstep_hw_id(NULL), "");
    CHECK_STR(llmstep_engine_id(NULL), "");
    CHECK_STR(llmstep_calibration_hw_id(NULL), "");
    double a = 5.0, b = 5.0;
    llmstep_calibration_get(NULL, &a, &b);
    CHECK(a == 0.0 && b == 0.0);
    llmstep_calibration_get(NULL, NULL, NULL);
    llmstep_deploy_spec_init(NULL);
    llmstep_deploy_get_info(NULL, NULL);
    llmstep_deploy_info di;
    di.tp = 9;
    llmstep_deploy_get_info(NULL, &di);
    CHECK_INT(di.tp, 0);
    llmstep_workload_init(NULL);
    CHECK_INT(llmstep_meets_slo(NULL, 1.0, 1.0, 90), 0);
    llmstep_sweep_spec_init(NULL);
    CHECK_INT(llmstep_sweep_size(NULL), 0);
    CHECK_INT(llmstep_sweep_best(NULL, 3), -1);
    llmstep_error e;
    CHECK_INT(llmstep_sweep_check(NULL, &e), LLMSTEP_EINVAL);
    CHECK_INT(llmstep_band_level_check(85, NULL), LLMSTEP_EINVAL);
    CHECK_INT(llmstep_band_level_check(80, &e), LLMSTEP_OK);
    CHECK_INT(llmstep_band_level_check(0, &e), LLMSTEP_EINVAL);
    CHECK(strstr(e.message, "level 0%: expected 10, 20, ..., 100") != NULL);
    /* The sweep's own checks, without loading or computing: an axis of 5000 TPs. */
    static int64_t many[5000];
    const char *m[] = {"llama-3.1-8b"}, *h[] = {"h100-sxm"};
    const int64_t one[] = {1};
    for (int i = 0; i < 5000; i++)
        many[i] = 1;
    llmstep_sweep_spec s;
    sweep_spec(&s, m, 1, h, 1, many, 5000, one, 1, one, 1);
    CHECK_INT(llmstep_sweep_check(&s, &e), LLMSTEP_EINVAL);
    CHECK(strstr(e.message, "tp: expected 1 to 4096 values") != NULL);
    s.n_tp = 1;
    CHECK_INT(llmstep_sweep_check(&s, &e), LLMSTEP_OK);
    llmstep_meas_spec_init(NULL);
    llmstep_ctx_free(NULL);
    llmstep_deploy_free(NULL);
}

static int host_handler_calls;
static void host_gsl_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)reason, (void)file, (void)line, (void)gsl_errno;
    host_handler_calls++;
}

/* A fit leaves the host program's GSL error handler as it found it ("no global state"). */
static void gsl_handler_restored(void)
{
    gsl_set_error_handler(host_gsl_handler);
    llmstep_meas_spec spec;
    example_h100_rows(&spec);
    llmstep_fit fit;
    llmstep_error err;
    CHECK_INT(llmstep_calibrate(ctx, &spec, &fit, &err), LLMSTEP_OK);
    gsl_error_handler_t *now = gsl_set_error_handler(NULL);
    CHECK(now == host_gsl_handler);
    CHECK_INT(host_handler_calls, 0);
}

/*
 * llmstep_deploy_band (issue 28): tests/data/calib_band_decode.json is hand-written with
 * ratios 0.90, 0.91, ..., 1.10 at 0, 5, ..., 100 %, so the 80% band is 0.92 .. 1.08, the 100%
 * band 0.90 .. 1.10 and the 10% band 0.99 .. 1.01 (quantiles (100 - L) / 10 and 20 minus it).
 * The family of a step follows its groups (llmstep_step_band_family).
 */
static void bands(void)
{
    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = "llama-3.1-8b";
    spec.hw = "h100-sxm";
    spec.calibration = SIM_SOURCE_DIR "/tests/data/calib_band_decode.json";
    llmstep_deploy *d = NULL;
    llmstep_error err;
    CHECK_INT(llmstep_deploy_open(ctx, &spec, &d, &err), LLMSTEP_OK);
    if (!d)
        return;
    double lo = 0.0, hi = 0.0;
    int64_t n = 0;
    const int levels[3] = {80, 100, 10};
    const double want[3][2] = {{0.92, 1.08}, {0.90, 1.10}, {0.99, 1.01}};
    for (int i = 0; i < 3; i++) {
        CHECK_INT(llmstep_deploy_band(d, "decode", levels[i], &lo, &hi, &n, &err), LLMSTEP_OK);
        CHECK(lo == want[i][0] && hi == want[i][1] && n == 21);
    }
    CHECK_INT(llmstep_deploy_band(d, "tpot", 80, &lo, &hi, NULL, &err), LLMSTEP_OK);
    /* No prefill rows in this calibration; a level between the quantiles; a family that is
     * none; NULL. */
    CHECK_INT(llmstep_deploy_band(d, "prefill", 80, &lo, &hi, &n, &err), LLMSTEP_EINVAL);
    CHECK(strstr(err.message, "no band for prefill predictions") != NULL);
    CHECK_INT(llmstep_deploy_band(d, "decode", 85, &lo, &hi, &n, &err), LLMSTEP_EINVAL);
    CHECK_INT(llmstep_deploy_band(d, "decodes", 80, &lo, &hi, &n, &err), LLMSTEP_EINVAL);
    CHECK_INT(llmstep_deploy_band(d, NULL, 80, &lo, &hi, &n, &err), LLMSTEP_EINVAL);
    CHECK_INT(llmstep_deploy_band(NULL, "decode", 80, &lo, &hi, &n, &err), LLMSTEP_EINVAL);
    llmstep_deploy_free(d);
    llmstep_deploy *u = open_deploy("llama-3.1-8b", "h100-sxm", 1, 1);
    CHECK_INT(llmstep_deploy_band(u, "decode", 80, &lo, &hi, &n, &err), LLMSTEP_EINVAL);
    CHECK(strstr(err.message, "uncalibrated") != NULL);
    llmstep_deploy_free(u);
    const llmstep_group dec[2] = {{8, 1, 100, 1}, {4, 1, 900, 1}};
    const llmstep_group pre[1] = {{2, 512, 0, 1}};
    const llmstep_group mix[2] = {{8, 1, 100, 1}, {1, 512, 0, 1}};
    const llmstep_group chunk[1] = {{1, 256, 512, 1}};
    CHECK_STR(llmstep_step_band_family(dec, 2), "decode");
    CHECK_STR(llmstep_step_band_family(pre, 1), "prefill");
    CHECK_STR(llmstep_step_band_family(mix, 2), "step");
    CHECK_STR(llmstep_step_band_family(chunk, 1), "step");
    CHECK_STR(llmstep_step_band_family(NULL, 3), "");
    CHECK_STR(llmstep_ttft_band_family(0), "ttft");
    CHECK_STR(llmstep_ttft_band_family(1), "ttft_queued");
}

/* One deployment, one answer (ABI 6): a deployment opened with the default usage is served as
 * `llmstep serve` serves (the OpenAI server's budget, 8192 tokens on an H100 for vLLM V1), not
 * with the LLM class's 16384 it keeps for steps and batches. 256 clients of 2048-token prompts
 * fill either budget, so the two usages give different runs: the default must equal the
 * server's, bit for bit, and differ from the LLM class's. */
static void serve_usage_default(void)
{
    llmstep_deploy *def = open_deploy("llama-3.1-8b", "h100-sxm", 1, -1);
    llmstep_deploy *srv = open_deploy("llama-3.1-8b", "h100-sxm", 1, 1);
    llmstep_deploy *llm = open_deploy("llama-3.1-8b", "h100-sxm", 1, 0);
    if (!def || !srv || !llm)
        goto done;
    llmstep_deploy_info info;
    llmstep_deploy_get_info(def, &info);
    CHECK_INT(info.max_num_batched_tokens, 16384); /* the deployment's own: the LLM class's */
    llmstep_workload w;
    llmstep_workload_init(&w);
    w.concurrency = 256;
    w.prompt_tokens = 2048;
    w.output_tokens = 64;
    llmstep_serve_result a, b, c;
    llmstep_error err;
    CHECK_INT(llmstep_serve(def, &w, &a, &err), LLMSTEP_OK);
    CHECK_INT(llmstep_serve(srv, &w, &b, &err), LLMSTEP_OK);
    CHECK_INT(llmstep_serve(llm, &w, &c, &err), LLMSTEP_OK);
    CHECK(a.ttft_s.mean == b.ttft_s.mean && a.tpot_s.p99 == b.tpot_s.p99 &&
          a.queue_s.mean == b.queue_s.mean && a.n_steps == b.n_steps);
    CHECK(a.ttft_s.mean != c.ttft_s.mean);
    /* queue_s is the part of TTFT before the first step: never more than the TTFT. */
    CHECK(a.queue_s.mean > 0.0 && a.queue_s.mean < a.ttft_s.mean);
    CHECK_INT(a.ttft_queued, a.queue_s.mean >= 0.5 * a.ttft_s.mean);
    /* The sweep's default axes, as `llmstep sweep --help` states them. */
    int64_t v[16];
    CHECK_INT((long long)llmstep_sweep_default_axis("tp", v, 16), 4);
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 4 && v[3] == 8);
    CHECK_INT((long long)llmstep_sweep_default_axis("batch", v, 16), 9);
    CHECK(v[0] == 1 && v[8] == 256);
    CHECK_INT((long long)llmstep_sweep_default_axis("concurrency", NULL, 0), 9);
    CHECK_INT((long long)llmstep_sweep_default_axis("context", v, 16), 1);
    CHECK_INT(v[0], 2048);
    CHECK_INT((long long)llmstep_sweep_default_axis("tps", v, 16), 0);
    CHECK_INT((long long)llmstep_sweep_default_axis(NULL, v, 16), 0);
done:
    llmstep_deploy_free(def);
    llmstep_deploy_free(srv);
    llmstep_deploy_free(llm);
}

int main(void)
{
    llmstep_error err;
    ctx = llmstep_ctx_new(SIM_SOURCE_DIR, &err);
    if (!ctx) {
        printf("FAIL context: %s\n", err.message);
        return 1;
    }
    version_and_abi();
    model_facts_and_cache();
    errors_name_file_and_field();
    /* Each on a fresh deployment of Llama-3.1-8B on one H100 SXM, server usage. */
    void (*const on_h100_8b[])(llmstep_deploy *) = {step_ops_and_grid, capacity_rule, serving,
                                                    serving_sweep};
    for (size_t i = 0; i < sizeof(on_h100_8b) / sizeof(on_h100_8b[0]); i++) {
        llmstep_deploy *d = open_deploy("llama-3.1-8b", "h100-sxm", 1, 1);
        if (d)
            on_h100_8b[i](d);
        llmstep_deploy_free(d);
    }
    null_arguments();
    gsl_handler_restored();
    measurements();
    rows_in_memory_and_calibration_file();
    scheduler_rule();
    config_sweep();
    bands();
    serve_usage_default();
    llmstep_ctx_free(ctx);
    return check_report("test_api");
}
