/*
 * web_api.c - the JSON API of `llmstep web` (see web_api.h, docs/web.md).
 *
 * Each question is read into one struct, from which both the library call and the `llmstep`
 * command line that prints the same numbers are made, so the page's "copy the CLI command"
 * reproduces what it shows (tests/web/browser_test.py checks it against the CLI).
 */
#define _POSIX_C_SOURCE 200809L
#include "web_api.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_write.h"
#include "json_writer.h"
#include "llmstep.h"
#include "paths.h"
#include "sweep_drive.h"
#include "units.h"

#define MAX_IDS 256
/* Distinct pasted configs before the context is renewed (its cache keeps every loaded file). */
#define MAX_PASTES 64

typedef struct id_list {
    char (*ids)[64];
    int n;
} id_list;

struct web_api {
    char data_dir[1024];
    char tmp_dir[256]; /* the server's own folder for pasted configs and traces */
    llmstep_ctx *ctx;
    id_list models, hws, engines, calibs;
    char *catalog; /* the answer of GET /api/catalog, made once */
    size_t catalog_len;
    int n_pastes;
    double max_sim_requests;
    pthread_mutex_t lock; /* one computation at a time */
};

/* ---- Small helpers ----------------------------------------------------------------------- */

/* A growing text (the command lines). */
typedef struct sbuf {
    char b[4096];
    size_t n;
} sbuf;

static void sb_add(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *s, const char *fmt, ...)
{
    if (s->n >= sizeof(s->b))
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(s->b + s->n, sizeof(s->b) - s->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        s->n = (size_t)k < sizeof(s->b) - s->n ? s->n + (size_t)k : sizeof(s->b);
}

/* A number as every JSON number of llmstep is written (sim_jw_put_number: the shortest of
 * %.15g, %.16g, %.17g that reads back as v; 1.6, not 1.6000000000000001), NUL-terminated: on a
 * command line it parses to the same double the page sent. */
typedef struct num_text {
    char s[SIM_JW_NUMBER_MAX + 1];
} num_text;

static const char *num_repr(double v, num_text *t)
{
    *sim_jw_put_number(t->s, v) = '\0';
    return t->s;
}

static int id_known(const id_list *l, const char *id)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->ids[i], id) == 0)
            return 1;
    return 0;
}

static int list_ids(const char *dir, const char *kind, id_list *l)
{
    l->ids = calloc(MAX_IDS, sizeof(*l->ids));
    if (!l->ids)
        return -1;
    l->n = sim_path_list(dir, kind, l->ids, MAX_IDS);
    if (l->n < 0)
        l->n = 0;
    return 0;
}

/* The message of a failed request. */
typedef struct req_err {
    char msg[768];
} req_err;

static int fail(req_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(req_err *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* The library's message with the server's temporary folder taken out, so a pasted config
 * reads as the CLI's message for a file config.json in the current folder. */
static int lib_fail(const web_api *a, req_err *e, const llmstep_error *err)
{
    char prefix[300];
    snprintf(prefix, sizeof(prefix), "%s/", a->tmp_dir);
    const char *m = err->message;
    size_t pl = strlen(prefix), o = 0;
    while (*m && o + 1 < sizeof(e->msg)) {
        if (strncmp(m, prefix, pl) == 0) {
            m += pl;
            /* <tmp>/<hash>/config.json -> config.json */
            const char *slash = strchr(m, '/');
            if (slash)
                m = slash + 1;
            continue;
        }
        e->msg[o++] = *m++;
    }
    e->msg[o] = '\0';
    /* The library names its field where the CLI names its option. */
    static const char lib_hint[] = " (ignore_memory to go on)",
                      cli_hint[] = " (--ignore-memory to go on)";
    char *h = strstr(e->msg, lib_hint);
    if (h && strlen(e->msg) + 2 < sizeof(e->msg)) {
        memmove(h + sizeof(cli_hint) - 1, h + sizeof(lib_hint) - 1,
                strlen(h + sizeof(lib_hint) - 1) + 1);
        memcpy(h, cli_hint, sizeof(cli_hint) - 1);
    }
    return -1;
}

/* ---- Reading a request ------------------------------------------------------------------- */

static int check_keys(const cJSON *o, const char *const *keys, req_err *e)
{
    for (const cJSON *it = o->child; it; it = it->next) {
        int ok = 0;
        for (int k = 0; keys[k] && !ok; k++)
            ok = strcmp(it->string, keys[k]) == 0;
        if (!ok)
            return fail(e, "request: unknown field '%s'", it->string);
    }
    return 0;
}

static const cJSON *field(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

static int get_str(const cJSON *o, const char *key, size_t max_len, const char **out, req_err *e)
{
    const cJSON *v = field(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsString(v) || !v->valuestring)
        return fail(e, "request: '%s': expected a string", key);
    if (strlen(v->valuestring) > max_len)
        return fail(e, "request: '%s': longer than %zu bytes", key, max_len);
    *out = v->valuestring;
    return 0;
}

static int num_of(const cJSON *v, const char *key, double lo, double hi, int whole, double *out,
                  req_err *e)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi || (whole && v->valuedouble != floor(v->valuedouble)))
        return fail(e, "request: '%s': expected %s from %.17g to %.17g", key,
                    whole ? "a whole number" : "a number", lo, hi);
    *out = v->valuedouble;
    return 0;
}

static int get_num(const cJSON *o, const char *key, double lo, double hi, int whole, double *out,
                   req_err *e)
{
    const cJSON *v = field(o, key);
    return v ? num_of(v, key, lo, hi, whole, out, e) : 0;
}

static int get_i64(const cJSON *o, const char *key, int64_t lo, int64_t hi, int64_t *out,
                   req_err *e)
{
    double d = (double)*out;
    if (get_num(o, key, (double)lo, (double)hi, 1, &d, e) != 0)
        return -1;
    *out = (int64_t)d;
    return 0;
}

/* A list of 1..cap numbers (a single number counts as a list of one). */
static int get_nums(const cJSON *o, const char *key, double lo, double hi, int whole, double *out,
                    size_t cap, size_t *n, req_err *e)
{
    const cJSON *v = field(o, key);
    *n = 0;
    if (!v)
        return 0;
    if (cJSON_IsNumber(v)) {
        *n = 1;
        return num_of(v, key, lo, hi, whole, out, e);
    }
    if (!cJSON_IsArray(v))
        return fail(e, "request: '%s': expected a list of numbers", key);
    for (const cJSON *it = v->child; it; it = it->next) {
        if (*n >= cap)
            return fail(e, "request: '%s': at most %zu values", key, cap);
        if (num_of(it, key, lo, hi, whole, &out[*n], e) != 0)
            return -1;
        (*n)++;
    }
    return 0;
}

/* What every question shares: the model and how it is deployed. */
typedef struct deploy_q {
    char model[600];    /* an id, or the path of the pasted config */
    int pasted;         /* the command line then says config.json */
    const char *engine; /* NULL: the default */
    const char *calib;  /* NULL: none; "shipped": the calibrations folder; else an id */
    char calib_path[1100];
    const char *dtype, *kv_dtype; /* NULL: the model's */
    int64_t max_model_len;
    double gpu_mem_util_frac;
} deploy_q;

/* FNV-1a of the pasted text: its folder, so the same text is one file (and one cache entry). */
static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Writes text to <tmp>/<hash>/name; the path to out. */
static int write_paste(web_api *a, const char *text, const char *name, char *out, size_t cap,
                       req_err *e)
{
    size_t n = strlen(text);
    char dir[400];
    snprintf(dir, sizeof(dir), "%s/%016llx", a->tmp_dir, (unsigned long long)fnv1a(text, n));
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return fail(e, "server: cannot make a temporary folder: %s", strerror(errno));
    snprintf(out, cap, "%s/%s", dir, name);
    struct stat sb;
    if (stat(out, &sb) == 0)
        return 0; /* the same text, written before */
    struct sim_err err;
    if (sim_write_atomic(out, text, n, &err) != SIM_OK)
        return fail(e, "server: cannot keep the pasted %s: %s", name, err.msg);
    a->n_pastes++;
    return 0;
}

static int check_choice(const char *key, const char *v, const char *const *choices, req_err *e)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(v, choices[i]) == 0)
            return 0;
    return fail(e, "request: '%s': '%s' is not one of the choices", key, v);
}

static int read_deploy(web_api *a, const cJSON *o, deploy_q *q, req_err *e)
{
    memset(q, 0, sizeof(*q));
    const char *model = NULL, *config = NULL;
    if (get_str(o, "model", 63, &model, e) != 0 ||
        get_str(o, "config_json", WEB_MAX_CONFIG_BYTES, &config, e) != 0)
        return -1;
    if (!model == !config)
        return fail(e, "request: give 'model' (a bundled id) or 'config_json' (a pasted "
                       "config.json), one of them");
    if (model) {
        if (!id_known(&a->models, model))
            return fail(e, "request: 'model': '%s' is not a bundled model (GET /api/catalog)",
                        model);
        snprintf(q->model, sizeof(q->model), "%s", model);
    } else {
        if (write_paste(a, config, "config.json", q->model, sizeof(q->model), e) != 0)
            return -1;
        q->pasted = 1;
        /* The loader's message once, for every view, before any GPU is tried. */
        const llmstep_model *m = NULL;
        llmstep_error err;
        if (llmstep_model_load(a->ctx, q->model, &m, &err) != LLMSTEP_OK)
            return lib_fail(a, e, &err);
    }
    if (get_str(o, "engine", 63, &q->engine, e) != 0 ||
        get_str(o, "calibration", 63, &q->calib, e) != 0 ||
        get_str(o, "dtype", 15, &q->dtype, e) != 0 || get_str(o, "kv_dtype", 15, &q->kv_dtype, e))
        return -1;
    if (q->engine && (!*q->engine || strcmp(q->engine, "default") == 0))
        q->engine = NULL;
    if (q->engine && !id_known(&a->engines, q->engine))
        return fail(e, "request: 'engine': '%s' is not a bundled engine", q->engine);
    if (q->calib && (!*q->calib || strcmp(q->calib, "none") == 0))
        q->calib = NULL;
    if (q->calib && strcmp(q->calib, "shipped") == 0)
        snprintf(q->calib_path, sizeof(q->calib_path), "%s/calibrations", a->data_dir);
    else if (q->calib && !id_known(&a->calibs, q->calib))
        return fail(e, "request: 'calibration': '%s' is not a bundled calibration", q->calib);
    else if (q->calib)
        snprintf(q->calib_path, sizeof(q->calib_path), "%s", q->calib);
    static const char *const dtypes[] = {"auto", "fp16", "bf16", "fp8", NULL};
    if ((q->dtype && check_choice("dtype", q->dtype, dtypes, e) != 0) ||
        (q->kv_dtype && check_choice("kv_dtype", q->kv_dtype, dtypes, e) != 0))
        return -1;
    if (q->dtype && strcmp(q->dtype, "auto") == 0)
        q->dtype = NULL;
    if (q->kv_dtype && strcmp(q->kv_dtype, "auto") == 0)
        q->kv_dtype = NULL;
    if (get_i64(o, "max_model_len", 0, 16777216, &q->max_model_len, e) != 0 ||
        get_num(o, "gpu_memory_utilization_frac", 0.0, 1.0, 0, &q->gpu_mem_util_frac, e) != 0)
        return -1;
    return 0;
}

/* The deployment's options on a command line (calib: whether the command takes
 * --calibration). */
static void cli_deploy(const deploy_q *q, sbuf *s, int calib)
{
    if (q->engine)
        sb_add(s, " --engine %s", q->engine);
    if (calib && q->calib)
        sb_add(s, " --calibration %s", q->calib_path);
    if (q->dtype)
        sb_add(s, " --dtype %s", q->dtype);
    if (q->kv_dtype)
        sb_add(s, " --kv-dtype %s", q->kv_dtype);
    if (q->max_model_len > 0)
        sb_add(s, " --max-model-len %lld", (long long)q->max_model_len);
    num_text nb;
    if (q->gpu_mem_util_frac > 0.0)
        sb_add(s, " --gpu-memory-utilization %s", num_repr(q->gpu_mem_util_frac, &nb));
}

static const char *model_arg(const deploy_q *q) { return q->pasted ? "config.json" : q->model; }

static void deploy_spec_of(const deploy_q *q, const char *hw, int64_t tp, int calib,
                           llmstep_deploy_spec *sp)
{
    llmstep_deploy_spec_init(sp);
    sp->model = q->model;
    sp->hw = hw;
    sp->engine = q->engine;
    sp->calibration = calib && q->calib ? q->calib_path : NULL;
    sp->dtype = q->dtype;
    sp->kv_dtype = q->kv_dtype;
    sp->tp = tp;
    sp->max_model_len = q->max_model_len;
    sp->gpu_memory_utilization_frac = q->gpu_mem_util_frac;
}

/* The GPUs of a question ("hws": one id or a list). */
static int read_hws(const web_api *a, const cJSON *o, const char **hws, size_t *n, req_err *e)
{
    const cJSON *v = field(o, "hws");
    *n = 0;
    if (!v)
        return fail(e, "request: 'hws': give one GPU or a list");
    if (cJSON_IsString(v)) {
        hws[(*n)++] = v->valuestring;
    } else if (cJSON_IsArray(v)) {
        for (const cJSON *it = v->child; it; it = it->next) {
            if (*n >= WEB_MAX_HWS)
                return fail(e, "request: 'hws': at most %d GPUs", WEB_MAX_HWS);
            if (!cJSON_IsString(it))
                return fail(e, "request: 'hws': expected GPU ids");
            hws[(*n)++] = it->valuestring;
        }
    } else {
        return fail(e, "request: 'hws': expected a GPU id or a list of them");
    }
    if (*n == 0)
        return fail(e, "request: 'hws': give at least one GPU");
    for (size_t i = 0; i < *n; i++) {
        if (!id_known(&a->hws, hws[i]))
            return fail(e, "request: 'hws': '%.64s' is not a bundled GPU profile", hws[i]);
        for (size_t k = 0; k < i; k++)
            if (strcmp(hws[k], hws[i]) == 0)
                return fail(e, "request: 'hws': '%s' given twice", hws[i]);
    }
    return 0;
}

static int read_tps(const cJSON *o, int64_t *tps, size_t *n, req_err *e)
{
    double d[WEB_MAX_TPS];
    if (get_nums(o, "tps", 1, 64, 1, d, WEB_MAX_TPS, n, e) != 0)
        return -1;
    if (*n == 0)
        return fail(e, "request: 'tps': give at least one tensor-parallel size");
    for (size_t i = 0; i < *n; i++)
        tps[i] = (int64_t)d[i];
    return 0;
}

static void cli_list_i64(sbuf *s, const char *opt, const int64_t *v, size_t n)
{
    sb_add(s, " %s ", opt);
    for (size_t i = 0; i < n; i++)
        sb_add(s, "%s%lld", i ? "," : "", (long long)v[i]);
}

static void cli_list_num(sbuf *s, const char *opt, const double *v, size_t n)
{
    sb_add(s, " %s ", opt);
    for (size_t i = 0; i < n; i++) {
        num_text nb;
        sb_add(s, "%s%s", i ? "," : "", num_repr(v[i], &nb));
    }
}

static void cli_list_str(sbuf *s, const char *opt, const char *const *v, size_t n)
{
    sb_add(s, " %s ", opt);
    for (size_t i = 0; i < n; i++)
        sb_add(s, "%s%s", i ? "," : "", v[i]);
}

/* ---- JSON out ---------------------------------------------------------------------------- */

/* A number in the shortest form that reads back as the same double (cJSON's printer keeps 15
 * digits when they are "close enough", and the page must show the CLI's numbers to the last
 * bit), null when not finite (JSON has no NaN). */
static void put_num(cJSON *o, const char *key, double v)
{
    num_text nb;
    if (isfinite(v))
        cJSON_AddRawToObject(o, key, num_repr(v, &nb));
    else
        cJSON_AddNullToObject(o, key);
}

static void put_dist(cJSON *o, const char *key, const llmstep_dist *d)
{
    cJSON *x = cJSON_AddObjectToObject(o, key);
    if (!x)
        return;
    put_num(x, "mean", d->mean);
    put_num(x, "p50", d->p50);
    put_num(x, "p90", d->p90);
    put_num(x, "p99", d->p99);
}

/* ---- Questions ----------------------------------------------------------------------------- */

/* Memory and KV capacity of each GPU at each TP (`llmstep capacity`). */
static cJSON *q_capacity(web_api *a, const cJSON *o, req_err *e)
{
    deploy_q q;
    const char *hws[WEB_MAX_HWS];
    int64_t tps[WEB_MAX_TPS];
    size_t n_hw = 0, n_tp = 0;
    int64_t prompt = 1024, output = 256;
    if (read_deploy(a, o, &q, e) != 0 || read_hws(a, o, hws, &n_hw, e) != 0 ||
        read_tps(o, tps, &n_tp, e) != 0 || get_i64(o, "prompt_tokens", 1, 16777216, &prompt, e) ||
        get_i64(o, "output_tokens", 1, 16777216, &output, e))
        return NULL;
    cJSON *root = cJSON_CreateObject(), *res = cJSON_AddArrayToObject(root, "results");
    if (!res) {
        cJSON_Delete(root);
        fail(e, "server: out of memory");
        return NULL;
    }
    for (size_t h = 0; h < n_hw; h++)
        for (size_t t = 0; t < n_tp; t++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddItemToArray(res, r);
            cJSON_AddStringToObject(r, "hw", hws[h]);
            put_num(r, "tp", (double)tps[t]);
            sbuf cli = {.n = 0};
            sb_add(&cli, "llmstep capacity --model %s --hw %s --tp %lld", model_arg(&q), hws[h],
                   (long long)tps[t]);
            cli_deploy(&q, &cli, 0);
            sb_add(&cli, " --prompt-tokens %lld --output-tokens %lld --format json",
                   (long long)prompt, (long long)output);
            cJSON_AddStringToObject(r, "cli", cli.b);
            llmstep_deploy_spec sp;
            deploy_spec_of(&q, hws[h], tps[t], 0, &sp);
            sp.ignore_memory = 1; /* the breakdown also when it does not fit, as the CLI */
            llmstep_deploy *d = NULL;
            llmstep_error err;
            llmstep_capacity_result c;
            if (llmstep_deploy_open(a->ctx, &sp, &d, &err) != LLMSTEP_OK ||
                llmstep_capacity(d, prompt + output, &c, &err) != LLMSTEP_OK) {
                req_err le;
                lib_fail(a, &le, &err);
                cJSON_AddStringToObject(r, "error", le.msg);
                llmstep_deploy_free(d);
                continue;
            }
            llmstep_deploy_info in;
            llmstep_deploy_get_info(d, &in);
            cJSON_AddStringToObject(r, "engine", in.engine_id);
            cJSON_AddStringToObject(r, "weights", in.weight_format);
            cJSON_AddStringToObject(r, "kv_dtype", in.kv_dtype);
            cJSON_AddBoolToObject(r, "fits", in.fits);
            put_num(r, "capacity_bytes_per_gpu", in.capacity_bytes);
            put_num(r, "usable_bytes_per_gpu", in.usable_bytes);
            put_num(r, "weights_bytes_per_gpu", in.weights_bytes);
            put_num(r, "activation_bytes_per_gpu", in.activation_bytes);
            put_num(r, "reserve_bytes_per_gpu", in.reserve_bytes);
            put_num(r, "kv_budget_bytes_per_gpu", in.kv_budget_bytes);
            put_num(r, "kv_bytes_per_token_per_gpu", in.kv_bytes_per_token);
            put_num(r, "kv_blocks", (double)in.kv_blocks);
            put_num(r, "kv_capacity_tokens", (double)in.kv_capacity_tokens);
            put_num(r, "block_size", (double)in.block_size);
            put_num(r, "max_num_seqs", (double)in.max_num_seqs);
            put_num(r, "max_model_len", (double)in.max_model_len);
            put_num(r, "context_tokens", (double)c.context_tokens);
            put_num(r, "max_seqs_by_kv", (double)c.max_seqs_by_kv);
            put_num(r, "max_seqs_at_context", (double)c.max_seqs_at_context);
            llmstep_deploy_free(d);
        }
    return root;
}

/* A serving sweep per GPU over TP x load (`llmstep sweep --kind serving`), all its rows or,
 * with "best", the row --best keeps. */
typedef struct serving_q {
    deploy_q dq;
    const char *hws[WEB_MAX_HWS];
    size_t n_hw;
    int64_t tps[WEB_MAX_TPS];
    size_t n_tp;
    int open_loop;
    double loads[WEB_MAX_LOADS];
    size_t n_loads;
    int64_t prompt, output, num_requests, seed, percentile;
    double range_ratio; /* -1: the default spread */
    double slo_ttft_ms, slo_tpot_ms;
    double prices[WEB_MAX_HWS];
    size_t n_prices;
    int best;
    int64_t n_seeds;
    double demand_per_s; /* requests/s the fleet must serve (0: none) */
    char trace[600];     /* a pasted trace (the server's copy); "": none */
} serving_q;

/* The SLOs and prices, as a sweep and a trace take them. */
static int read_slos_prices(const cJSON *o, serving_q *q, req_err *e)
{
    if (get_i64(o, "slo_percentile", 50, 99, &q->percentile, e) ||
        get_num(o, "slo_ttft_ms", 0.0, 1e7, 0, &q->slo_ttft_ms, e) ||
        get_num(o, "slo_tpot_ms", 0.0, 1e7, 0, &q->slo_tpot_ms, e) ||
        get_nums(o, "gpu_hour_usd", 1e-9, 1e9, 0, q->prices, WEB_MAX_HWS, &q->n_prices, e))
        return -1;
    if (q->percentile != 50 && q->percentile != 90 && q->percentile != 99)
        return fail(e, "request: 'slo_percentile': expected 50, 90 or 99");
    if (q->n_prices > 1 && q->n_prices != q->n_hw)
        return fail(e, "request: 'gpu_hour_usd': one price for all GPUs or one per GPU (%zu)",
                    q->n_hw);
    return 0;
}

/* The price per GPU-hour of the h-th GPU (0: none given). */
static double price_of(const serving_q *q, size_t h)
{
    return q->n_prices == 0 ? 0.0 : q->prices[q->n_prices == 1 ? 0 : h];
}

static int read_serving(web_api *a, const cJSON *o, serving_q *q, req_err *e)
{
    memset(q, 0, sizeof(*q));
    q->prompt = 1024;
    q->output = 256;
    q->percentile = 90;
    q->range_ratio = -1.0;
    const char *arrival = "closed";
    if (read_deploy(a, o, &q->dq, e) != 0 || read_hws(a, o, q->hws, &q->n_hw, e) != 0 ||
        read_tps(o, q->tps, &q->n_tp, e) != 0 || get_str(o, "arrival", 15, &arrival, e) != 0)
        return -1;
    if (strcmp(arrival, "closed") != 0 && strcmp(arrival, "poisson") != 0)
        return fail(e, "request: 'arrival': expected closed or poisson");
    q->open_loop = strcmp(arrival, "poisson") == 0;
    const char *trace = NULL;
    if (get_str(o, "trace_jsonl", WEB_MAX_TRACE_BYTES, &trace, e) != 0 ||
        get_num(o, "demand_requests_per_s", 0.0, 1e9, 0, &q->demand_per_s, e) != 0)
        return -1;
    if (trace) {
        /* A trace fixes the arrivals and lengths: one run per layout, no load axis. */
        if (field(o, "loads") || field(o, "arrival") || field(o, "best") ||
            field(o, "prompt_tokens") || field(o, "output_tokens") || field(o, "range_ratio") ||
            field(o, "num_requests") || field(o, "seed"))
            return fail(e, "request: 'trace_jsonl' gives the arrivals and lengths: leave out "
                           "arrival, loads, best, prompt_tokens, output_tokens, range_ratio, "
                           "num_requests and seed");
        if (write_paste(a, trace, "trace.jsonl", q->trace, sizeof(q->trace), e) != 0)
            return -1;
        q->n_seeds = 1;
        return read_slos_prices(o, q, e);
    }
    if (get_nums(o, "loads", q->open_loop ? 1e-6 : 1, q->open_loop ? 1e5 : 4096, !q->open_loop,
                 q->loads, WEB_MAX_LOADS, &q->n_loads, e) != 0)
        return -1;
    if (q->n_loads == 0)
        return fail(e, "request: 'loads': give the %s",
                    q->open_loop ? "request rates (requests/s)" : "concurrencies (clients)");
    const cJSON *best = field(o, "best");
    if (best && !cJSON_IsBool(best))
        return fail(e, "request: 'best': expected true or false");
    q->best = best && cJSON_IsTrue(best);
    if (get_i64(o, "prompt_tokens", 1, 16777216, &q->prompt, e) ||
        get_i64(o, "output_tokens", 1, 16777216, &q->output, e) ||
        get_i64(o, "num_requests", 0, 20000, &q->num_requests, e) ||
        get_i64(o, "seed", 0, 1000000000, &q->seed, e) ||
        get_num(o, "range_ratio", 0.0, 0.99, 0, &q->range_ratio, e) || read_slos_prices(o, q, e))
        return -1;
    q->n_seeds = sim_sweep_default_seeds(q->best, q->open_loop, q->range_ratio);
    /* The work, bounded: points x seeds x requests each. */
    double work = 0.0;
    for (size_t i = 0; i < q->n_loads; i++)
        work += q->num_requests > 0 ? (double)q->num_requests
                : q->open_loop      ? 1000.0
                                    : 10.0 * q->loads[i];
    work *= (double)(q->n_hw * q->n_tp) * (double)q->n_seeds;
    if (work > a->max_sim_requests)
        return fail(e,
                    "request: %.0f requests to simulate, above the server's %.0f: fewer GPUs, "
                    "layouts or loads, or a smaller num_requests",
                    work, a->max_sim_requests);
    return 0;
}

/* The SLO options of a command line (sweep and serve take them alike). */
static void cli_slos(const serving_q *q, sbuf *s)
{
    num_text nb;
    if (q->slo_ttft_ms > 0.0)
        sb_add(s, " --slo-ttft-ms %s", num_repr(q->slo_ttft_ms, &nb));
    if (q->slo_tpot_ms > 0.0)
        sb_add(s, " --slo-tpot-ms %s", num_repr(q->slo_tpot_ms, &nb));
}

static void serving_cli(const serving_q *q, sbuf *s)
{
    sb_add(s, "llmstep sweep --kind serving --model %s", model_arg(&q->dq));
    cli_list_str(s, "--hw", q->hws, q->n_hw);
    cli_list_i64(s, "--tp", q->tps, q->n_tp);
    if (q->open_loop)
        cli_list_num(s, "--request-rate", q->loads, q->n_loads);
    else
        cli_list_num(s, "--concurrency", q->loads, q->n_loads);
    sb_add(s, " --prompt-tokens %lld --output-tokens %lld", (long long)q->prompt,
           (long long)q->output);
    cli_deploy(&q->dq, s, 1);
    num_text nb;
    if (q->range_ratio >= 0.0)
        sb_add(s, " --range-ratio %s", num_repr(q->range_ratio, &nb));
    if (q->num_requests > 0)
        sb_add(s, " --num-requests %lld", (long long)q->num_requests);
    if (q->seed > 0)
        sb_add(s, " --seed %lld", (long long)q->seed);
    cli_slos(q, s);
    if (q->percentile != 90)
        sb_add(s, " --slo-percentile %lld", (long long)q->percentile);
    if (q->n_prices > 0)
        cli_list_num(s, "--gpu-hour-usd", q->prices, q->n_prices);
    if (q->best)
        sb_add(s, " --best --seeds %lld", (long long)q->n_seeds);
    sb_add(s, " --format json");
}

/* The fleet a demand of demand_per_s requests per second takes at a point that meets the
 * SLOs: replicas = ceil(demand / the point's requests per second), GPUs = replicas x the
 * layout's GPUs (docs/web.md, "GPUs for a demand"). Not given (null) for a point that misses
 * the SLOs or without a demand. */
static void put_fleet(cJSON *x, double demand_per_s, int meets_slo, double requests_per_s,
                      double gpus)
{
    if (demand_per_s > 0.0 && meets_slo && requests_per_s > 0.0) {
        double replicas = ceil(demand_per_s / requests_per_s);
        put_num(x, "replicas_for_demand", replicas);
        put_num(x, "gpus_for_demand", replicas * gpus);
    } else {
        cJSON_AddNullToObject(x, "replicas_for_demand");
        cJSON_AddNullToObject(x, "gpus_for_demand");
    }
}

static void put_row(cJSON *arr, const llmstep_sweep_row *r, const char *hw, double demand_per_s)
{
    cJSON *x = cJSON_CreateObject();
    if (!x)
        return;
    cJSON_AddItemToArray(arr, x);
    cJSON_AddStringToObject(x, "hw", hw);
    put_num(x, "tp", (double)r->tp);
    put_num(x, "gpus", (double)(r->tp * r->pp * r->dp));
    if (r->concurrency >= 0)
        put_num(x, "concurrency", (double)r->concurrency);
    else
        cJSON_AddNullToObject(x, "concurrency");
    put_num(x, "request_rate_per_s", r->rate_per_s);
    cJSON_AddStringToObject(x, "status", llmstep_sweep_status_name(r->status));
    cJSON_AddBoolToObject(x, "fits", r->fits);
    cJSON_AddBoolToObject(x, "meets_slo", r->meets_slo);
    cJSON_AddBoolToObject(x, "calibrated", r->calibrated);
    put_num(x, "n_seeds", (double)r->n_seeds);
    put_num(x, "n_requests", (double)r->n_requests);
    put_dist(x, "ttft_s", &r->ttft_dist_s);
    put_dist(x, "tpot_s", &r->tpot_dist_s);
    put_dist(x, "e2e_s", &r->e2e_dist_s);
    put_num(x, "ttft_slo_s", r->ttft_s);
    put_num(x, "tpot_slo_s", r->tpot_s);
    put_num(x, "requests_per_s", r->requests_per_s);
    put_num(x, "output_tokens_per_s", r->tokens_per_s);
    put_num(x, "output_tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
    put_num(x, "cost_per_mtok_usd", r->cost_per_mtok_usd);
    put_num(x, "kv_peak_frac", r->kv_peak_frac);
    put_num(x, "preemptions", (double)r->preemptions);
    put_fleet(x, demand_per_s, r->status == LLMSTEP_SWEEP_OK && r->meets_slo, r->requests_per_s,
              (double)(r->tp * r->pp * r->dp));
}

/* A pasted trace served by each layout (`llmstep serve --trace`): one row per GPU and TP. */
static cJSON *serve_trace(web_api *a, const serving_q *q, req_err *e)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    sbuf all = {.n = 0};
    for (size_t h = 0; h < q->n_hw; h++)
        for (size_t t = 0; t < q->n_tp; t++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddItemToArray(rows, x);
            cJSON_AddStringToObject(x, "hw", q->hws[h]);
            put_num(x, "tp", (double)q->tps[t]);
            put_num(x, "gpus", (double)q->tps[t]);
            sbuf cli = {.n = 0};
            sb_add(&cli, "llmstep serve --model %s --hw %s --tp %lld --trace trace.jsonl",
                   model_arg(&q->dq), q->hws[h], (long long)q->tps[t]);
            cli_deploy(&q->dq, &cli, 1);
            cli_slos(q, &cli);
            sb_add(&cli, " --format json");
            cJSON_AddStringToObject(x, "cli", cli.b);
            sb_add(&all, "%s%s", all.n ? "\n" : "", cli.b);
            llmstep_deploy_spec sp;
            deploy_spec_of(&q->dq, q->hws[h], q->tps[t], 1, &sp);
            llmstep_workload w;
            llmstep_workload_init(&w);
            w.arrival = LLMSTEP_ARRIVAL_TRACE;
            w.trace_path = q->trace;
            w.slo_ttft_s = sim_ms_to_s(q->slo_ttft_ms);
            w.slo_tpot_s = sim_ms_to_s(q->slo_tpot_ms);
            llmstep_deploy *d = NULL;
            llmstep_error err;
            llmstep_serve_result r;
            if (llmstep_deploy_open(a->ctx, &sp, &d, &err) != LLMSTEP_OK ||
                llmstep_serve(d, &w, &r, &err) != LLMSTEP_OK) {
                llmstep_deploy_free(d);
                req_err le;
                lib_fail(a, &le, &err);
                /* A trace the loader refuses fails every layout alike: say it once. */
                if (strncmp(le.msg, "trace.jsonl", 11) == 0) {
                    snprintf(e->msg, sizeof(e->msg), "%s", le.msg);
                    cJSON_Delete(root);
                    return NULL;
                }
                cJSON_AddStringToObject(x, "status", "error");
                cJSON_AddStringToObject(x, "error", le.msg);
                continue;
            }
            llmstep_deploy_free(d);
            const double gpus = (double)q->tps[t];
            const int meets = llmstep_meets_slo(&r, w.slo_ttft_s, w.slo_tpot_s, (int)q->percentile);
            cJSON_AddStringToObject(x, "status", "ok");
            cJSON_AddBoolToObject(x, "meets_slo", meets);
            put_num(x, "n_requests", (double)r.n_requests);
            put_dist(x, "ttft_s", &r.ttft_s);
            put_dist(x, "tpot_s", &r.tpot_s);
            put_dist(x, "e2e_s", &r.e2e_s);
            put_num(x, "requests_per_s", r.request_throughput_per_s);
            put_num(x, "output_tokens_per_s", r.output_tokens_per_s);
            put_num(x, "output_tokens_per_s_per_gpu", r.output_tokens_per_s / gpus);
            put_num(x, "cost_per_mtok_usd",
                    sim_sweep_cost_per_mtok(price_of(q, h), q->tps[t], r.output_tokens_per_s));
            put_num(x, "kv_peak_frac", r.kv_peak_frac);
            put_num(x, "preemptions", (double)r.preemptions);
            put_fleet(x, q->demand_per_s, meets, r.request_throughput_per_s, gpus);
        }
    cJSON_AddStringToObject(root, "cli", all.b);
    put_num(root, "n_seeds", 1.0);
    return root;
}

static cJSON *q_serving(web_api *a, const cJSON *o, req_err *e)
{
    serving_q q;
    if (read_serving(a, o, &q, e) != 0)
        return NULL;
    if (q.trace[0])
        return serve_trace(a, &q, e);
    sbuf cli = {.n = 0};
    serving_cli(&q, &cli);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "cli", cli.b);
    put_num(root, "n_seeds", (double)q.n_seeds);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    int64_t conc[WEB_MAX_LOADS];
    for (size_t i = 0; i < q.n_loads; i++)
        conc[i] = (int64_t)q.loads[i];
    for (size_t h = 0; h < q.n_hw; h++) {
        /* One sweep per GPU, each with its price (the CLI's --gpu-hour-usd P1,P2 does the
         * same per block). */
        const char *models[1] = {q.dq.model};
        llmstep_sweep_spec sp;
        llmstep_sweep_spec_init(&sp);
        sp.models = models;
        sp.n_models = 1;
        sp.hws = &q.hws[h];
        sp.n_hws = 1;
        sp.kind = LLMSTEP_SWEEP_SERVING;
        sp.tp = q.tps;
        sp.n_tp = q.n_tp;
        if (q.open_loop) {
            sp.rates = q.loads;
            sp.n_rates = q.n_loads;
        } else {
            sp.batch = conc;
            sp.n_batch = q.n_loads;
        }
        sp.prompt_tokens = q.prompt;
        sp.output_tokens = q.output;
        sp.num_requests = q.num_requests;
        sp.range_ratio = q.range_ratio;
        sp.seed = (uint64_t)q.seed;
        sp.calibration = q.dq.calib ? q.dq.calib_path : NULL;
        sp.engine = q.dq.engine;
        sp.dtype = q.dq.dtype;
        sp.kv_dtype = q.dq.kv_dtype;
        sp.max_model_len = q.dq.max_model_len;
        sp.gpu_memory_utilization_frac = q.dq.gpu_mem_util_frac;
        sp.slo_ttft_s = sim_ms_to_s(q.slo_ttft_ms);
        sp.slo_tpot_s = sim_ms_to_s(q.slo_tpot_ms);
        sp.slo_percentile = (int)q.percentile;
        sp.gpu_hour_usd = price_of(&q, h);
        sp.n_seeds = q.n_seeds;
        sp.jobs = 2;
        size_t n = llmstep_sweep_size(&sp), got = 0;
        llmstep_sweep_row *rr = calloc(n ? n : 1, sizeof(*rr));
        llmstep_error err;
        if (!rr) {
            cJSON_Delete(root);
            fail(e, "server: out of memory");
            return NULL;
        }
        if (llmstep_sweep(a->ctx, &sp, rr, n, &got, NULL, NULL, &err) != LLMSTEP_OK) {
            free(rr);
            cJSON_Delete(root);
            lib_fail(a, e, &err);
            return NULL;
        }
        if (q.best) {
            long long b = llmstep_sweep_best(rr, got);
            if (b >= 0)
                put_row(rows, &rr[b], q.hws[h], q.demand_per_s);
            else {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddItemToArray(rows, x);
                cJSON_AddStringToObject(x, "hw", q.hws[h]);
                cJSON_AddStringToObject(x, "status", "none_meets_slo");
            }
        } else {
            for (size_t i = 0; i < got; i++)
                put_row(rows, &rr[i], q.hws[h], q.demand_per_s);
        }
        free(rr);
    }
    return root;
}

/* One step on one GPU, per operator, with the roofs (`llmstep predict`). */
static cJSON *q_step(web_api *a, const cJSON *o, req_err *e)
{
    deploy_q q;
    const char *hw = NULL, *phase = "decode";
    int64_t tp = 1, batch = 32, tokens = 2048;
    if (read_deploy(a, o, &q, e) != 0 || get_str(o, "hw", 63, &hw, e) != 0 ||
        get_str(o, "phase", 15, &phase, e) != 0 || get_i64(o, "tp", 1, 64, &tp, e) != 0 ||
        get_i64(o, "batch", 1, 65536, &batch, e) != 0 ||
        get_i64(o, "tokens", 1, 16777216, &tokens, e) != 0)
        return NULL;
    if (!hw || !id_known(&a->hws, hw)) {
        fail(e, "request: 'hw': give a bundled GPU profile");
        return NULL;
    }
    int decode = strcmp(phase, "decode") == 0;
    if (!decode && strcmp(phase, "prefill") != 0) {
        fail(e, "request: 'phase': expected decode or prefill");
        return NULL;
    }
    sbuf cli = {.n = 0};
    sb_add(&cli, "llmstep predict --model %s --hw %s --tp %lld --%s %lldx%lld", model_arg(&q), hw,
           (long long)tp, decode ? "decode" : "prefill", (long long)batch, (long long)tokens);
    cli_deploy(&q, &cli, 1);
    sb_add(&cli, " --format json");
    llmstep_deploy_spec sp;
    deploy_spec_of(&q, hw, tp, 1, &sp);
    llmstep_deploy *d = NULL;
    llmstep_error err;
    llmstep_group g = {.count = batch,
                       .new_tokens = decode ? 1 : tokens,
                       .context_tokens = decode ? tokens : 0,
                       .emits = 1};
    llmstep_step_result res;
    llmstep_op ops[LLMSTEP_MAX_OPS];
    size_t n_ops = 0;
    const llmstep_hw *h = NULL;
    if (llmstep_deploy_open(a->ctx, &sp, &d, &err) != LLMSTEP_OK ||
        llmstep_step(d, &g, 1, &res, ops, LLMSTEP_MAX_OPS, &n_ops, &err) != LLMSTEP_OK ||
        llmstep_hw_load(a->ctx, hw, &h, &err) != LLMSTEP_OK) {
        llmstep_deploy_free(d);
        lib_fail(a, e, &err);
        return NULL;
    }
    llmstep_deploy_info in;
    llmstep_deploy_get_info(d, &in);
    llmstep_hw_info hi;
    llmstep_hw_get_info(h, &hi);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "cli", cli.b);
    cJSON_AddStringToObject(root, "hw", hw);
    put_num(root, "tp", (double)tp);
    cJSON_AddStringToObject(root, "weights", in.weight_format);
    put_num(root, "alpha", in.alpha);
    put_num(root, "beta_s", in.beta_s);
    put_num(root, "step_time_s", res.step_s);
    put_num(root, "gpu_time_s", res.gpu_s);
    put_num(root, "roofline_time_s", res.roofline_s);
    put_num(root, "host_time_s", res.host_s);
    put_num(root, "comm_time_s", res.comm_s);
    put_num(root, "flops_per_gpu", res.flops);
    put_num(root, "hbm_bytes_per_gpu", res.bytes);
    cJSON_AddStringToObject(root, "bound", res.bound ? res.bound : "");
    cJSON *roofs = cJSON_AddObjectToObject(root, "roofs");
    put_num(roofs, "hbm_peak_bytes_per_s", hi.hbm_peak_bytes_per_s);
    put_num(roofs, "hbm_achievable_bytes_per_s", hi.hbm_achievable_bytes_per_s);
    put_num(roofs, "bf16_peak_flops_per_s", hi.bf16_peak_flops_per_s);
    put_num(roofs, "bf16_achievable_flops_per_s", hi.bf16_achievable_flops_per_s);
    put_num(roofs, "fp8_peak_flops_per_s", hi.has_fp8 ? hi.fp8_peak_flops_per_s : (double)NAN);
    put_num(roofs, "fp8_achievable_flops_per_s",
            hi.has_fp8 ? hi.fp8_achievable_flops_per_s : (double)NAN);
    put_num(roofs, "fp32_peak_flops_per_s", hi.fp32_peak_flops_per_s);
    put_num(roofs, "ridge_bf16_flops_per_byte", hi.ridge_bf16_flops_per_byte);
    cJSON *arr = cJSON_AddArrayToObject(root, "ops");
    for (size_t i = 0; i < n_ops; i++) {
        if (strcmp(ops[i].bound, "none") == 0)
            continue; /* an operator this model has not (as `llmstep predict` lists them) */
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, x);
        cJSON_AddStringToObject(x, "name", ops[i].name);
        cJSON_AddStringToObject(x, "bound", ops[i].bound);
        put_num(x, "flops_per_gpu", ops[i].flops);
        put_num(x, "hbm_bytes_per_gpu", ops[i].bytes);
        put_num(x, "time_s", ops[i].time_s);
    }
    llmstep_deploy_free(d);
    return root;
}

/* ---- The catalog --------------------------------------------------------------------------- */

static void put_ids(cJSON *root, const char *key, const id_list *l)
{
    cJSON *arr = cJSON_AddArrayToObject(root, key);
    for (int i = 0; i < l->n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(l->ids[i]));
}

static char *make_catalog(web_api *a)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *models = cJSON_AddArrayToObject(root, "models");
    for (int i = 0; i < a->models.n; i++) {
        const llmstep_model *m = NULL;
        llmstep_error err;
        if (llmstep_model_load(a->ctx, a->models.ids[i], &m, &err) != LLMSTEP_OK)
            continue; /* a file the loader refuses is not offered */
        llmstep_model_info mi;
        llmstep_model_get_info(m, &mi);
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(models, x);
        cJSON_AddStringToObject(x, "id", a->models.ids[i]);
        put_num(x, "params", mi.params);
        put_num(x, "num_experts", (double)mi.n_experts);
        put_num(x, "max_position_embeddings", (double)mi.max_position_embeddings);
    }
    cJSON *hws = cJSON_AddArrayToObject(root, "hws");
    for (int i = 0; i < a->hws.n; i++) {
        const llmstep_hw *h = NULL;
        llmstep_error err;
        if (llmstep_hw_load(a->ctx, a->hws.ids[i], &h, &err) != LLMSTEP_OK)
            continue;
        llmstep_hw_info hi;
        llmstep_hw_get_info(h, &hi);
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(hws, x);
        cJSON_AddStringToObject(x, "id", a->hws.ids[i]);
        cJSON_AddStringToObject(x, "name", hi.name);
        put_num(x, "memory_bytes", hi.memory_bytes);
        put_num(x, "n_gpus_per_node", (double)hi.n_gpus_per_node);
    }
    put_ids(root, "engines", &a->engines);
    cJSON *cal = cJSON_AddArrayToObject(root, "calibrations");
    for (int i = 0; i < a->calibs.n; i++) {
        const llmstep_calibration *c = NULL;
        llmstep_error err;
        if (llmstep_calibration_load(a->ctx, a->calibs.ids[i], &c, &err) != LLMSTEP_OK)
            continue;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(cal, x);
        cJSON_AddStringToObject(x, "id", a->calibs.ids[i]);
        cJSON_AddStringToObject(x, "hw", llmstep_calibration_hw_id(c));
    }
    cJSON *lim = cJSON_AddObjectToObject(root, "limits");
    cJSON_AddNumberToObject(lim, "max_body_bytes", WEB_MAX_BODY_BYTES);
    cJSON_AddNumberToObject(lim, "max_hws", WEB_MAX_HWS);
    cJSON_AddNumberToObject(lim, "max_tps", WEB_MAX_TPS);
    cJSON_AddNumberToObject(lim, "max_loads", WEB_MAX_LOADS);
    cJSON_AddNumberToObject(lim, "max_sim_requests", WEB_MAX_SIM_REQUESTS);
    cJSON_AddStringToObject(root, "version", llmstep_version());
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

/* ---- The API --------------------------------------------------------------------------------- */

static int make_tmp(web_api *a, char *err, size_t cap)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(a->tmp_dir, sizeof(a->tmp_dir), "%s/llmstep-web-XXXXXX", base);
    if (!mkdtemp(a->tmp_dir)) {
        snprintf(err, cap, "web: cannot make a temporary folder in %s: %s", base, strerror(errno));
        a->tmp_dir[0] = '\0';
        return -1;
    }
    return 0;
}

static int open_ctx(web_api *a, char *err, size_t cap)
{
    llmstep_error le;
    a->ctx = llmstep_ctx_new(a->data_dir[0] ? a->data_dir : NULL, &le);
    if (!a->ctx) {
        snprintf(err, cap, "web: %s", le.message);
        return -1;
    }
    return 0;
}

web_api *web_api_new(const char *data_dir, char *err, size_t err_cap)
{
    web_api *a = calloc(1, sizeof(*a));
    if (!a) {
        snprintf(err, err_cap, "web: out of memory");
        return NULL;
    }
    pthread_mutex_init(&a->lock, NULL);
    a->max_sim_requests = WEB_MAX_SIM_REQUESTS;
    if (data_dir)
        snprintf(a->data_dir, sizeof(a->data_dir), "%s", data_dir);
    if (open_ctx(a, err, err_cap) != 0) {
        web_api_free(a);
        return NULL;
    }
    snprintf(a->data_dir, sizeof(a->data_dir), "%s", llmstep_ctx_data_dir(a->ctx));
    if (list_ids(a->data_dir, "models", &a->models) != 0 ||
        list_ids(a->data_dir, "hwprofiles", &a->hws) != 0 ||
        list_ids(a->data_dir, "engines", &a->engines) != 0 ||
        list_ids(a->data_dir, "calibrations", &a->calibs) != 0 || make_tmp(a, err, err_cap) != 0) {
        if (!a->tmp_dir[0] && !err[0])
            snprintf(err, err_cap, "web: out of memory");
        web_api_free(a);
        return NULL;
    }
    a->catalog = make_catalog(a);
    if (!a->catalog) {
        snprintf(err, err_cap, "web: out of memory");
        web_api_free(a);
        return NULL;
    }
    a->catalog_len = strlen(a->catalog);
    return a;
}

/* Empties the temporary folder: <tmp>/<hash>/<file>, two levels (keep: leave <tmp>). */
static void clear_tmp(const char *dir, int keep)
{
    char names[256][256];
    int n = sim_path_list_dirs(dir, names, 256);
    for (int i = 0; i < n; i++) {
        char sub[600], f[900];
        snprintf(sub, sizeof(sub), "%s/%s", dir, names[i]);
        static const char *const files[] = {"config.json", "trace.jsonl"};
        for (int k = 0; k < 2; k++) {
            snprintf(f, sizeof(f), "%s/%s", sub, files[k]);
            unlink(f);
        }
        rmdir(sub);
    }
    if (!keep)
        rmdir(dir);
}

void web_api_free(web_api *a)
{
    if (!a)
        return;
    llmstep_ctx_free(a->ctx);
    if (a->tmp_dir[0])
        clear_tmp(a->tmp_dir, 0);
    free(a->models.ids);
    free(a->hws.ids);
    free(a->engines.ids);
    free(a->calibs.ids);
    cJSON_free(a->catalog);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

const char *web_api_data_dir(const web_api *a) { return a->data_dir; }

void web_api_set_max_sim_requests(web_api *a, double n) { a->max_sim_requests = n; }

static int answer_text(char *text, char **out, size_t *out_len)
{
    *out = text;
    *out_len = text ? strlen(text) : 0;
    return text ? 0 : -1;
}

static int answer_error(const char *msg, int http, int *status, char **out, size_t *out_len)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return answer_text(NULL, out, out_len);
    cJSON_AddStringToObject(o, "error", msg);
    *status = http;
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return answer_text(s, out, out_len);
}

typedef cJSON *(*question_fn)(web_api *, const cJSON *, req_err *);

static const struct {
    const char *path;
    question_fn fn;
    const char *const keys[28];
} questions[] = {
    {"/api/capacity",
     q_capacity,
     {"model", "config_json", "engine", "calibration", "dtype", "kv_dtype", "max_model_len",
      "gpu_memory_utilization_frac", "hws", "tps", "prompt_tokens", "output_tokens", NULL}},
    {"/api/serving",
     q_serving,
     {"model",
      "config_json",
      "engine",
      "calibration",
      "dtype",
      "kv_dtype",
      "max_model_len",
      "gpu_memory_utilization_frac",
      "hws",
      "tps",
      "arrival",
      "loads",
      "prompt_tokens",
      "output_tokens",
      "range_ratio",
      "num_requests",
      "seed",
      "slo_ttft_ms",
      "slo_tpot_ms",
      "slo_percentile",
      "gpu_hour_usd",
      "best",
      "trace_jsonl",
      "demand_requests_per_s",
      NULL}},
    {"/api/step",
     q_step,
     {"model", "config_json", "engine", "calibration", "dtype", "kv_dtype", "max_model_len",
      "gpu_memory_utilization_frac", "hw", "tp", "phase", "batch", "tokens", NULL}},
};

int web_api_handle(web_api *a, const char *method, const char *path, const char *body, size_t len,
                   char **out, size_t *out_len, int *status)
{
    *out = NULL;
    *out_len = 0;
    *status = 200;
    if (strcmp(path, "/api/catalog") == 0) {
        if (strcmp(method, "GET") != 0)
            return answer_error("GET /api/catalog", 405, status, out, out_len);
        char *s = malloc(a->catalog_len + 1);
        if (s)
            memcpy(s, a->catalog, a->catalog_len + 1);
        return answer_text(s, out, out_len);
    }
    size_t k = 0;
    while (k < sizeof(questions) / sizeof(questions[0]) && strcmp(path, questions[k].path) != 0)
        k++;
    if (k == sizeof(questions) / sizeof(questions[0]))
        return answer_error("no such API (GET /api/catalog; POST /api/capacity, /api/serving, "
                            "/api/step)",
                            404, status, out, out_len);
    if (strcmp(method, "POST") != 0)
        return answer_error("POST a JSON object", 405, status, out, out_len);
    if (len > WEB_MAX_BODY_BYTES)
        return answer_error("request: body above 1 MiB", 413, status, out, out_len);
    const char *end = NULL;
    cJSON *req = cJSON_ParseWithLengthOpts(body ? body : "", len, &end, 0);
    if (!req || !cJSON_IsObject(req)) {
        char m[128];
        if (!req)
            snprintf(m, sizeof(m), "request: malformed JSON at byte %td",
                     end && body ? end - body : (ptrdiff_t)0);
        else
            snprintf(m, sizeof(m), "request: expected a JSON object");
        cJSON_Delete(req);
        return answer_error(m, 400, status, out, out_len);
    }
    req_err e = {{0}};
    if (check_keys(req, questions[k].keys, &e) != 0) {
        cJSON_Delete(req);
        return answer_error(e.msg, 400, status, out, out_len);
    }
    if (pthread_mutex_trylock(&a->lock) != 0) {
        cJSON_Delete(req);
        return answer_error("busy: another question is being computed; ask again", 503, status, out,
                            out_len);
    }
    if (a->n_pastes >= MAX_PASTES) {
        /* Renew the context so its cache does not grow with every pasted config. */
        char m[256] = "";
        llmstep_ctx_free(a->ctx);
        a->ctx = NULL;
        a->n_pastes = 0;
        clear_tmp(a->tmp_dir, 1);
        if (open_ctx(a, m, sizeof(m)) != 0) {
            pthread_mutex_unlock(&a->lock);
            cJSON_Delete(req);
            return answer_error(m, 500, status, out, out_len);
        }
    }
    cJSON *res = questions[k].fn(a, req, &e);
    pthread_mutex_unlock(&a->lock);
    cJSON_Delete(req);
    if (!res)
        return answer_error(e.msg[0] ? e.msg : "server: out of memory", 400, status, out, out_len);
    char *s = cJSON_PrintUnformatted(res);
    cJSON_Delete(res);
    return answer_text(s, out, out_len);
}
