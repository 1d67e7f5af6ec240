/* meas_json.c - see meas_json.h. */
#include "meas_json.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json_util.h"
#include "num_parse.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Largest tensor-parallel degree accepted; it must fit the core's int tp. */
#define MEAS_TP_MAX 65536
/* Largest sequence or token count accepted (2^40): far above any real run, and
 * small enough that products of two counts stay exact in int64_t and double. */
#define MEAS_COUNT_MAX (INT64_C(1) << 40)
/* Measured times accepted, seconds: a nanosecond to about a year. */
#define MEAS_SECONDS_MIN 1e-9
#define MEAS_SECONDS_MAX 3.2e7

/* A row as it is parsed: its strings in buffers of the sizes the format allows (longer values
 * are refused with the field named, or truncated where meas_json.h says so). load_line parses
 * into one of these and stores it in the set (store_row). */
typedef struct row_buf {
    char id[128];
    char source[256];
    char hardware[256];
    char model[256];
    char model_arg[256];
    int64_t tp;
    int64_t dp;
    int ep;
    sim_dtype dtype;
    sim_dtype kv_dtype;
    char engine[64];
    char engine_version[64];
    sim_meas_kind kind;
    double measured_s;
    int64_t batch;
    int64_t prompt_tokens;
    int64_t output_tokens;
    int64_t context_tokens;
    int n_groups;
    sim_group groups[SIM_STEP_MAX_GROUPS];
    sim_sched_cfg sched;
    sim_serve_metric metric;
    sim_workload_spec workload;
    int64_t concurrency;
    char trace[1024];
    char file[256];
    int line;
    char unmodelled[512];
    char assumed[256];
} row_buf;

/* ---- The pool of a set's strings and groups --------------------------------------------- */

/* Chunks of bytes handed out in order, and a hash set of the strings interned in them (one
 * copy of each distinct string: a file's rows repeat their hardware, model, source...). */
typedef struct pool_chunk {
    struct pool_chunk *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
} pool_chunk;

struct sim_meas_pool {
    pool_chunk *chunks;  /* newest first */
    const char **slot;   /* interned strings, open addressing; NULL is empty */
    size_t mask, n_slot; /* slots - 1 (a power of two minus 1, or 0 before the first), in use */
};

#define POOL_CHUNK_BYTES ((size_t)64 << 10)

static void pool_free(struct sim_meas_pool *p)
{
    if (!p)
        return;
    for (pool_chunk *c = p->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(p->slot);
    free(p);
}

/* n bytes aligned for any type, or NULL. */
static void *pool_alloc(struct sim_meas_pool *p, size_t n)
{
    const size_t a = _Alignof(max_align_t);
    n = (n + a - 1) / a * a;
    pool_chunk *c = p->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > POOL_CHUNK_BYTES ? n : POOL_CHUNK_BYTES;
        c = malloc(sizeof(*c) + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = p->chunks;
        p->chunks = c;
    }
    void *out = c->data + c->used;
    c->used += n;
    return out;
}

static size_t hash_str(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a, 64 bit */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(1099511628211);
    }
    return (size_t)h;
}

/* Doubles the hash set (or makes its first 64 slots). */
static sim_status pool_grow(struct sim_meas_pool *p)
{
    size_t cap = p->slot ? (p->mask + 1) * 2 : 64;
    if (cap > SIZE_MAX / sizeof(*p->slot))
        return SIM_ENOMEM;
    const char **slot = calloc(cap, sizeof(*slot));
    if (!slot)
        return SIM_ENOMEM;
    for (size_t i = 0; p->slot && i <= p->mask; i++)
        if (p->slot[i]) {
            size_t h = hash_str(p->slot[i]) & (cap - 1);
            while (slot[h])
                h = (h + 1) & (cap - 1);
            slot[h] = p->slot[i];
        }
    free(p->slot);
    p->slot = slot;
    p->mask = cap - 1;
    return SIM_OK;
}

/* The pool's copy of s (made when it has none), or NULL when memory runs out. */
static const char *pool_intern(struct sim_meas_pool *p, const char *s)
{
    if (!p->slot || (p->n_slot + 1) * 2 > p->mask + 1) {
        if (pool_grow(p) != SIM_OK)
            return NULL;
    }
    size_t h = hash_str(s) & p->mask;
    for (; p->slot[h]; h = (h + 1) & p->mask)
        if (strcmp(p->slot[h], s) == 0)
            return p->slot[h];
    const size_t n = strlen(s) + 1;
    char *copy = pool_alloc(p, n);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    p->slot[h] = copy;
    p->n_slot++;
    return copy;
}

/* A copy of s not interned (ids are unique: a hash entry each would only cost). */
static const char *pool_strdup(struct sim_meas_pool *p, const char *s)
{
    const size_t n = strlen(s) + 1;
    char *copy = pool_alloc(p, n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

/* The set's pool, made on first use; NULL when memory runs out. */
static struct sim_meas_pool *set_pool(sim_meas_set *set)
{
    if (!set->pool)
        set->pool = calloc(1, sizeof(*set->pool));
    return set->pool;
}

/* Points r's strings and groups at p's copies of what they point to now. */
static sim_status rehome(struct sim_meas_pool *p, sim_meas_row *r)
{
    const char **s[] = {&r->source,         &r->hardware, &r->model, &r->model_arg,  &r->engine,
                        &r->engine_version, &r->trace,    &r->file,  &r->unmodelled, &r->assumed};
    int ok = (r->id = pool_strdup(p, r->id)) != NULL; /* ids are unique: not interned */
    for (size_t i = 0; i < N(s); i++)
        ok &= (*s[i] = pool_intern(p, *s[i])) != NULL;
    if (r->n_groups > 0) {
        sim_group *g = pool_alloc(p, (size_t)r->n_groups * sizeof(*g));
        if (g)
            memcpy(g, r->groups, (size_t)r->n_groups * sizeof(*g));
        r->groups = g;
        ok &= g != NULL;
    }
    return ok ? SIM_OK : SIM_ENOMEM;
}

/* r: the parsed row b, its strings and groups in p. The structs are copied with their
 * padding (b's is zero: load_line clears it), so rows compare equal with memcmp. */
static sim_status store_row(struct sim_meas_pool *p, const row_buf *b, sim_meas_row *r)
{
    memset(r, 0, sizeof(*r));
    r->tp = b->tp;
    r->dp = b->dp;
    r->ep = b->ep;
    r->dtype = b->dtype;
    r->kv_dtype = b->kv_dtype;
    r->kind = b->kind;
    r->measured_s = b->measured_s;
    r->batch = b->batch;
    r->prompt_tokens = b->prompt_tokens;
    r->output_tokens = b->output_tokens;
    r->context_tokens = b->context_tokens;
    r->n_groups = b->n_groups;
    memcpy(&r->sched, &b->sched, sizeof(r->sched));
    r->metric = b->metric;
    memcpy(&r->workload, &b->workload, sizeof(r->workload));
    r->concurrency = b->concurrency;
    r->line = b->line;
    /* The strings and groups of b, then p's copies of them. */
    r->id = b->id;
    r->source = b->source;
    r->hardware = b->hardware;
    r->model = b->model;
    r->model_arg = b->model_arg;
    r->engine = b->engine;
    r->engine_version = b->engine_version;
    r->trace = b->trace;
    r->file = b->file;
    r->unmodelled = b->unmodelled;
    r->assumed = b->assumed;
    r->groups = b->groups;
    return rehome(p, r);
}

static const char *const kind_names[SIM_MEAS_KIND_COUNT] = {"prefill", "decode", "step",
                                                            "offline_batch", "serving"};

const char *sim_meas_kind_name(sim_meas_kind k)
{
    if ((int)k < 0 || k >= SIM_MEAS_KIND_COUNT)
        return "?";
    return kind_names[k];
}

sim_status sim_meas_kind_parse(const char *name, sim_meas_kind *out)
{
    for (int k = 0; k < SIM_MEAS_KIND_COUNT; k++) {
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (sim_meas_kind)k;
            return SIM_OK;
        }
    }
    return SIM_EINVAL;
}

/* The measurement format knows fp16, bf16 and fp8 (not fp32, which the core also has). */
static int meas_dtype_parse(const char *name, sim_dtype *out)
{
    sim_dtype d;
    if (sim_dtype_parse(name, &d) != SIM_OK || d == SIM_DTYPE_FP32)
        return 0;
    *out = d;
    return 1;
}

/* Every string "", every count absent: what a field's name can be checked against. */
static const sim_meas_row blank_row = {
    .id = "",
    .source = "",
    .hardware = "",
    .model = "",
    .model_arg = "",
    .tp = -1,
    .dp = 1,
    .engine = "",
    .engine_version = "",
    .batch = -1,
    .prompt_tokens = -1,
    .output_tokens = -1,
    .context_tokens = -1,
    .concurrency = -1,
    .trace = "",
    .file = "",
    .unmodelled = "",
    .assumed = "",
};

const sim_meas_row *sim_meas_row_blank(void) { return &blank_row; }

void sim_meas_set_init(sim_meas_set *s)
{
    s->rows = NULL;
    s->n = 0;
    s->cap = 0;
    s->pool = NULL;
}

static void pool_free(struct sim_meas_pool *p);

void sim_meas_set_free(sim_meas_set *s)
{
    if (!s)
        return;
    free(s->rows);
    pool_free(s->pool);
    sim_meas_set_init(s);
}

/* ---- Loading ---------------------------------------------------------------------------- */

/* Every key a row may hold; which of the kind-specific ones are allowed is in kinds[]. */
static const char *const row_keys[] = {
    "id",         "source",    "hardware",      "model",          "tp",
    "dtype",      "kv_dtype",  "engine",        "engine_version", "kind",
    "measured_s", "batch",     "prompt_tokens", "output_tokens",  "context_tokens",
    "groups",     "scheduler", "metric",        "workload",       "run",
};

/* Kind-specific fields, as bits. */
enum {
    KF_BATCH = 1 << 0,
    KF_PROMPT = 1 << 1,
    KF_OUTPUT = 1 << 2,
    KF_CONTEXT = 1 << 3,
    KF_GROUPS = 1 << 4,
    KF_SCHED = 1 << 5,
    KF_METRIC = 1 << 6,
    KF_WORKLOAD = 1 << 7,
    KF_COUNT = 8
};
static const char *const kf_keys[KF_COUNT] = {"batch",          "prompt_tokens", "output_tokens",
                                              "context_tokens", "groups",        "scheduler",
                                              "metric",         "workload"};

/* Per kind: fields that must be present, and fields that may be (MEASUREMENTS.md "Kinds"). */
static const struct {
    unsigned required, allowed;
} kinds[SIM_MEAS_KIND_COUNT] = {
    [SIM_MEAS_PREFILL] = {KF_BATCH | KF_PROMPT, KF_BATCH | KF_PROMPT},
    [SIM_MEAS_DECODE] = {KF_BATCH | KF_CONTEXT, KF_BATCH | KF_CONTEXT},
    [SIM_MEAS_STEP] = {KF_GROUPS, KF_GROUPS},
    [SIM_MEAS_OFFLINE_BATCH] = {KF_BATCH | KF_PROMPT | KF_OUTPUT,
                                KF_BATCH | KF_PROMPT | KF_OUTPUT | KF_SCHED},
    [SIM_MEAS_SERVING] = {KF_METRIC | KF_WORKLOAD, KF_METRIC | KF_WORKLOAD | KF_SCHED},
};

/* "batch, prompt_tokens" for the message about a field of another kind. */
static void kind_fields(unsigned allowed, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int b = 0; b < KF_COUNT; b++) {
        if (!(allowed & (1u << b)))
            continue;
        int n = snprintf(out + used, cap - used, "%s%s", used ? ", " : "", kf_keys[b]);
        if (n < 0 || (size_t)n >= cap - used)
            return;
        used += (size_t)n;
    }
}

/* A required string must also be non-empty: an empty id or model names nothing. */
static sim_status get_str(const sim_jctx *ctx, const cJSON *obj, const char *key, int required,
                          char *out, size_t cap)
{
    out[0] = '\0';
    int present = 0;
    sim_status st = sim_j_str(ctx, obj, key, required, out, cap, &present);
    if (st == SIM_OK && present && out[0] == '\0')
        return sim_j_fail(ctx, key, "empty string (expected a non-empty string)");
    return st;
}

static sim_status get_dtype(const sim_jctx *ctx, const cJSON *obj, const char *key, sim_dtype *out,
                            int *present)
{
    char word[32];
    sim_status st = sim_j_str(ctx, obj, key, 0, word, sizeof(word), present);
    if (st != SIM_OK || !*present)
        return st;
    if (!meas_dtype_parse(word, out))
        return sim_j_fail(ctx, key, "unsupported dtype (expected fp16, bf16 or fp8, got '%s')",
                          word);
    return SIM_OK;
}

static sim_status parse_groups(const sim_jctx *parent, const cJSON *arr, row_buf *r)
{
    if (!cJSON_IsArray(arr))
        return sim_j_fail(parent, "groups",
                          "wrong type (expected an array of {\"count\", \"new_tokens\", "
                          "\"context_tokens\"} objects)");
    int n = cJSON_GetArraySize(arr);
    if (n < 1 || n > SIM_STEP_MAX_GROUPS)
        return sim_j_fail(parent, "groups", "wrong number of groups (expected 1 to %d, got %d)",
                          SIM_STEP_MAX_GROUPS, n);
    static const char *const keys[] = {"count", "new_tokens", "context_tokens"};
    sim_jctx ctx = *parent;
    /* Each element's keys are searched from its own '{'; elements hold no nested objects. */
    const char *at = sim_j_locate(parent, "groups");
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        char prefix[48];
        snprintf(prefix, sizeof(prefix), "groups[%d].", i);
        ctx.prefix = prefix;
        const char *brace = strchr(at, '{');
        ctx.scope = brace ? brace : at;
        if (!cJSON_IsObject(e))
            return sim_j_fail_loc(&ctx, NULL, "groups[%d]: wrong type (expected an object)", i);
        sim_group *g = &r->groups[i];
        sim_status st = sim_j_check_keys(&ctx, e, keys, N(keys), NULL, 0, 1);
        if (st == SIM_OK)
            st = sim_j_int(&ctx, e, "count", 1, 1, MEAS_COUNT_MAX, &g->count, NULL);
        if (st == SIM_OK)
            st = sim_j_int(&ctx, e, "new_tokens", 1, 1, MEAS_COUNT_MAX, &g->new_tokens, NULL);
        if (st == SIM_OK)
            st = sim_j_int(&ctx, e, "context_tokens", 1, 0, MEAS_COUNT_MAX, &g->context_tokens,
                           NULL);
        if (st != SIM_OK)
            return st;
        /* Decodes (t == 1) and whole prefills (c == 0) sample; a chunk (t > 1, c > 0) is
         * taken to be a prompt's last chunk, which samples too (see meas_json.h). */
        g->emits = 1;
        at = ctx.scope + 1;
    }
    r->n_groups = n;
    return SIM_OK;
}

/* Appends "item" to the row's list of described but unmodelled run keys ("; " between items);
 * a list that would overflow ends with "; ...". */
static void add_unmodelled(row_buf *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_unmodelled(row_buf *r, const char *fmt, ...)
{
    char raw[160], item[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    sim_text_escape(raw, item, sizeof(item)); /* keys and values from the file are printed */
    size_t n = strlen(r->unmodelled), k = strlen(item);
    const char *sep = n ? "; " : "";
    if (n + strlen(sep) + k + 6 >= sizeof(r->unmodelled)) {
        if (n + 6 < sizeof(r->unmodelled) && !strstr(r->unmodelled, "; ..."))
            strcat(r->unmodelled, "; ...");
        return;
    }
    strcat(r->unmodelled, sep);
    strcat(r->unmodelled, item);
}

/* vLLM's CUDAGraphMode names (vllm/config/compilation.py, 0.11 and later). */
static const char *const cudagraph_modes[] = {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY",
                                              "FULL_AND_PIECEWISE"};

/* A cudagraph_mode value (from run.cudagraph_mode or the compilation_config JSON): NONE runs
 * every step eagerly (enforce_eager); FULL_AND_PIECEWISE, the default since vLLM 0.11 (PR
 * #25444), is what the step model's fixed time per kernel stands for; the others replay
 * other parts of a step in graphs, which the step model does not distinguish. */
static sim_status take_cudagraph_mode(const sim_jctx *ctx, const char *key, const char *mode,
                                      row_buf *r)
{
    size_t i = 0;
    while (i < N(cudagraph_modes) && strcmp(mode, cudagraph_modes[i]) != 0)
        i++;
    if (i == N(cudagraph_modes))
        return sim_j_fail(ctx, key,
                          "unknown cudagraph_mode (expected NONE, PIECEWISE, FULL, "
                          "FULL_DECODE_ONLY or FULL_AND_PIECEWISE, got '%s')",
                          mode);
    if (i == 0) {
        if (r->sched.enforce_eager == 0)
            return sim_j_fail(ctx, key,
                              "NONE contradicts scheduler.enforce_eager false (no CUDA graphs "
                              "means eager)");
        r->sched.enforce_eager = 1;
    } else if (r->sched.enforce_eager == 1) {
        return sim_j_fail(ctx, key, "%s contradicts scheduler.enforce_eager true", mode);
    } else if (i != N(cudagraph_modes) - 1 && !strstr(r->unmodelled, "cudagraph_mode=")) {
        add_unmodelled(r, "cudagraph_mode=%s", mode);
    }
    return SIM_OK;
}

/* run.compilation_config: the JSON text the run passed to --compilation-config. Its
 * cudagraph_mode is taken as run.cudagraph_mode; pass_config's eliminate_noops removes no
 * kernel; every other pass turned on, and every other key, is reported unmodelled. */
static sim_status take_compilation_config(const sim_jctx *ctx, const char *text, row_buf *r)
{
    cJSON *cc = cJSON_Parse(text);
    if (!cc || !cJSON_IsObject(cc)) {
        cJSON_Delete(cc);
        return sim_j_fail(ctx, "compilation_config", "not a JSON object in a string");
    }
    sim_status st = SIM_OK;
    for (const cJSON *k = cc->child; k && st == SIM_OK; k = k->next) {
        if (strcmp(k->string, "cudagraph_mode") == 0 && cJSON_IsString(k)) {
            st = take_cudagraph_mode(ctx, "compilation_config", k->valuestring, r);
        } else if (strcmp(k->string, "pass_config") == 0 && cJSON_IsObject(k)) {
            for (const cJSON *p = k->child; p; p = p->next)
                if (cJSON_IsTrue(p) && strcmp(p->string, "eliminate_noops") != 0)
                    add_unmodelled(r, "compilation_config.pass_config.%.64s=true", p->string);
        } else {
            add_unmodelled(r, "compilation_config.%.64s", k->string);
        }
    }
    cJSON_Delete(cc);
    return st;
}

/* Environment variables whose value selects what the profile's figures time: the fused-MoE
 * figures of fp8 experts come from vLLM's Triton kernel (docs/model.md, "Fused MoE"), the
 * kernel these values force (vllm/envs.py; fused_moe/fp8 backend selection). */
static const struct {
    const char *key, *value;
} env_modelled[] = {{"VLLM_MOE_USE_DEEP_GEMM", "0"}, {"VLLM_USE_FLASHINFER_MOE_FP8", "0"}};

static sim_status take_env(const sim_jctx *ctx, const cJSON *env, row_buf *r)
{
    if (!cJSON_IsObject(env))
        return sim_j_fail(ctx, "env", "wrong type (expected an object of strings)");
    for (const cJSON *v = env->child; v; v = v->next) {
        if (!cJSON_IsString(v))
            return sim_j_fail(ctx, "env", "%.64s: wrong type (expected a string)", v->string);
        int known = 0;
        for (size_t i = 0; i < N(env_modelled); i++)
            known |= strcmp(v->string, env_modelled[i].key) == 0 &&
                     strcmp(v->valuestring, env_modelled[i].value) == 0;
        if (!known)
            add_unmodelled(r, "env.%.64s=%.32s", v->string, v->valuestring);
    }
    return SIM_OK;
}

/* 1 when an entry of run.assumed names a field the prediction uses: its leading name
 * (letters, digits, '_' and '.', an optional "run." dropped) is a row field, a workload or
 * scheduler field, or a run key with meaning (MEASUREMENTS.md). */
static int assumed_material(const char *entry)
{
    char name[64];
    size_t n = 0;
    while (entry[n] && n + 1 < sizeof(name) &&
           (entry[n] == '_' || entry[n] == '.' || (entry[n] >= 'a' && entry[n] <= 'z') ||
            (entry[n] >= 'A' && entry[n] <= 'Z') || (entry[n] >= '0' && entry[n] <= '9'))) {
        name[n] = entry[n];
        n++;
    }
    name[n] = '\0';
    const char *f = strncmp(name, "run.", 4) == 0 ? name + 4 : name;
    static const char *const fields[] = {"hardware",
                                         "model",
                                         "tp",
                                         "dtype",
                                         "kv_dtype",
                                         "engine",
                                         "engine_version",
                                         "kind",
                                         "measured_s",
                                         "batch",
                                         "prompt_tokens",
                                         "output_tokens",
                                         "context_tokens",
                                         "groups",
                                         "metric",
                                         "workload",
                                         "scheduler",
                                         "concurrency",
                                         "num_requests",
                                         "range_ratio",
                                         "warmup_requests",
                                         "rate_per_s",
                                         "burstiness",
                                         "arrival",
                                         "trace",
                                         "prefix_caching",
                                         "async_scheduling",
                                         "cudagraph_mode",
                                         "max_cudagraph_capture_size",
                                         "compilation_config",
                                         "expert_parallel",
                                         "data_parallel",
                                         "ep_size",
                                         "attention_backend",
                                         "env"};
    for (size_t i = 0; i < N(fields); i++) {
        size_t k = strlen(fields[i]);
        if (strncmp(f, fields[i], k) == 0 && (f[k] == '\0' || f[k] == '.'))
            return 1;
    }
    return 0;
}

/* A list of strings at key (absent: nothing); each string that passes keep (NULL: none) is
 * appended to out, "; " between them. */
static sim_status take_strings(const sim_jctx *ctx, const cJSON *obj, const char *key,
                               int (*keep)(const char *), char *out, size_t cap)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!a || cJSON_IsNull(a))
        return SIM_OK;
    if (!cJSON_IsArray(a))
        return sim_j_fail(ctx, key, "wrong type (expected a list of strings)");
    for (const cJSON *e = a->child; e; e = e->next) {
        if (!cJSON_IsString(e))
            return sim_j_fail(ctx, key, "wrong type (expected a list of strings)");
        if (!keep || !keep(e->valuestring))
            continue;
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", n ? "; " : "", e->valuestring);
    }
    return SIM_OK;
}

/* The row's `run` object (MEASUREMENTS.md). Taken into the simulation: expert_parallel,
 * data_parallel, async_scheduling (scheduler setting), cudagraph_mode NONE (enforce_eager);
 * checked: ep_size against the layout. Keys with meaning the simulation does not follow are
 * listed in r->unmodelled; material entries of run.assumed in r->assumed. Every other key is
 * provenance and is not checked. */
static sim_status parse_run(const sim_jctx *parent, const cJSON *obj, row_buf *r)
{
    if (!cJSON_IsObject(obj))
        return sim_j_fail(parent, "run", "wrong type (expected an object)");
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, "run");
    ctx.prefix = "run.";
    sim_status st = sim_j_bool(&ctx, obj, "expert_parallel", 0, &r->ep, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "data_parallel", 0, 1, 1024, &r->dp, NULL);
    int v = -1, present = 0;
    if (st == SIM_OK)
        st = sim_j_bool(&ctx, obj, "async_scheduling", 0, &v, &present);
    if (st == SIM_OK && present)
        r->sched.async_scheduling = v;
    if (st == SIM_OK)
        st = sim_j_bool(&ctx, obj, "prefix_caching", 0, &v, &present);
    /* Prefix caching (sched_v1.h): the run's setting, as scheduler.enable_prefix_caching. */
    if (st == SIM_OK && present) {
        if (r->sched.enable_prefix_caching >= 0 && r->sched.enable_prefix_caching != v)
            return sim_j_fail(&ctx, "prefix_caching",
                              "contradicts scheduler.enable_prefix_caching (expected the same "
                              "setting)");
        r->sched.enable_prefix_caching = v;
    }
    char s[512];
    if (st == SIM_OK)
        st = sim_j_str(&ctx, obj, "cudagraph_mode", 0, s, sizeof(s), &present);
    if (st == SIM_OK && present)
        st = take_cudagraph_mode(&ctx, "cudagraph_mode", s, r);
    if (st == SIM_OK)
        st = sim_j_str(&ctx, obj, "compilation_config", 0, s, sizeof(s), &present);
    if (st == SIM_OK && present)
        st = take_compilation_config(&ctx, s, r);
    /* An integer, or its decimal digits in a string (as the rows of some files carry it). */
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(obj, "max_cudagraph_capture_size");
    if (st == SIM_OK && cap && !cJSON_IsNull(cap)) {
        char *end = NULL;
        double x = cJSON_IsNumber(cap)   ? cap->valuedouble
                   : cJSON_IsString(cap) ? strtod(cap->valuestring, &end)
                                         : -1.0;
        if (!(x >= 1.0 && x <= 1e6 && x == floor(x)) || (end && *end))
            return sim_j_fail(&ctx, "max_cudagraph_capture_size",
                              "expected an integer from 1 to 1000000");
        /* Steps of more tokens run eagerly; the step model does not tell the two apart. */
        add_unmodelled(r, "max_cudagraph_capture_size=%.0f", x);
    }
    if (st == SIM_OK)
        st = sim_j_str(&ctx, obj, "attention_backend", 0, s, sizeof(s), &present);
    /* "vllm default (auto-selected)": the backend the step model times for that version. */
    if (st == SIM_OK && present && strncmp(s, "vllm default", 12) != 0 && strcmp(s, "auto") != 0)
        add_unmodelled(r, "attention_backend=%.64s", s);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(obj, "env");
    if (st == SIM_OK && env && !cJSON_IsNull(env))
        st = take_env(&ctx, env, r);
    int64_t ep_size = 0;
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "ep_size", 0, 1, 1 << 20, &ep_size, &present);
    /* vLLM's expert group is the TP x DP ranks with expert parallelism, else each expert is
     * split over TP (ep_size 1). */
    const int64_t want = r->ep ? r->tp * r->dp : 1;
    if (st == SIM_OK && present && r->tp > 0 && ep_size != want)
        add_unmodelled(r, "ep_size=%lld (the layout gives %lld)", (long long)ep_size,
                       (long long)want);
    if (st == SIM_OK)
        st = take_strings(&ctx, obj, "assumed", assumed_material, r->assumed, sizeof(r->assumed));
    char ignored[8] = "";
    if (st == SIM_OK)
        st = take_strings(&ctx, obj, "defaults", NULL, ignored, sizeof(ignored));
    return st;
}

static sim_status parse_sched(const sim_jctx *parent, const cJSON *obj, sim_sched_cfg *s)
{
    if (!cJSON_IsObject(obj))
        return sim_j_fail(parent, "scheduler", "wrong type (expected an object)");
    static const char *const keys[] = {
        "max_num_seqs", "max_num_batched_tokens", "max_model_len", "gpu_memory_utilization",
        "block_size",   "enable_chunked_prefill", "enforce_eager", "enable_prefix_caching"};
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, "scheduler");
    ctx.prefix = "scheduler.";
    sim_status st = sim_j_check_keys(&ctx, obj, keys, N(keys), NULL, 0, 1);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "max_num_seqs", 0, 1, MEAS_COUNT_MAX, &s->max_num_seqs, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "max_num_batched_tokens", 0, 1, MEAS_COUNT_MAX,
                       &s->max_num_batched_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "max_model_len", 0, 1, MEAS_COUNT_MAX, &s->max_model_len, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "block_size", 0, 1, MEAS_COUNT_MAX, &s->block_size, NULL);
    int present = 0;
    double u = 0.0;
    if (st == SIM_OK)
        st = sim_j_num(&ctx, obj, "gpu_memory_utilization", 0, 0.0, 1.0, &u, &present);
    if (st == SIM_OK && present) {
        if (!(u > 0.0))
            return sim_j_fail(&ctx, "gpu_memory_utilization",
                              "out of range (expected 0 < x <= 1, got %.17g)", u);
        s->gpu_memory_utilization = u;
    }
    if (st == SIM_OK)
        st = sim_j_bool(&ctx, obj, "enable_chunked_prefill", 0, &s->enable_chunked_prefill, NULL);
    if (st == SIM_OK)
        st = sim_j_bool(&ctx, obj, "enforce_eager", 0, &s->enforce_eager, NULL);
    if (st == SIM_OK)
        st = sim_j_bool(&ctx, obj, "enable_prefix_caching", 0, &s->enable_prefix_caching, NULL);
    return st;
}

/* The folder part of path ("" for a bare name), to resolve a trace against. */
static void dir_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, path, n);
    out[n] = '\0';
}

static sim_status parse_workload(const sim_jctx *parent, const cJSON *obj, const char *path,
                                 row_buf *r)
{
    if (!cJSON_IsObject(obj))
        return sim_j_fail(parent, "workload", "wrong type (expected an object)");
    static const char *const keys[] = {"arrival",         "concurrency",   "rate_per_s",
                                       "prompt_tokens",   "output_tokens", "num_requests",
                                       "trace",           "burstiness",    "range_ratio",
                                       "warmup_requests", "prefix_tokens", "distinct_prompts"};
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, "workload");
    ctx.prefix = "workload.";
    sim_status st = sim_j_check_keys(&ctx, obj, keys, N(keys), NULL, 0, 1);
    if (st != SIM_OK)
        return st;
    sim_workload_spec *w = &r->workload;
    *w = (sim_workload_spec){0};
    w->burstiness = 1.0;
    w->warmup_requests = -1;
    char trace[512] = "", arrival[16] = "";
    int has_trace = 0, has_arrival = 0;
    st = sim_j_str(&ctx, obj, "trace", 0, trace, sizeof(trace), &has_trace);
    if (st == SIM_OK)
        st = sim_j_str(&ctx, obj, "arrival", 0, arrival, sizeof(arrival), &has_arrival);
    if (st != SIM_OK)
        return st;
    if (has_trace) {
        for (size_t i = 1; i < N(keys); i++)
            if (strcmp(keys[i], "trace") != 0 && cJSON_GetObjectItemCaseSensitive(obj, keys[i]))
                return sim_j_fail(&ctx, keys[i],
                                  "not allowed with a trace (expected only "
                                  "\"trace\")");
        if (has_arrival)
            return sim_j_fail(&ctx, "arrival",
                              "not allowed with a trace (expected only "
                              "\"trace\")");
        if (!trace[0])
            return sim_j_fail(&ctx, "trace", "empty string (expected a file path)");
        w->arrival = SIM_ARRIVAL_TRACE;
        char dir[512];
        dir_of(path, dir, sizeof(dir));
        int n = trace[0] == '/' ? snprintf(r->trace, sizeof(r->trace), "%s", trace)
                                : snprintf(r->trace, sizeof(r->trace), "%s%s", dir, trace);
        if (n < 0 || (size_t)n >= sizeof(r->trace))
            return sim_j_fail(&ctx, "trace", "path too long");
        return SIM_OK;
    }
    if (!has_arrival)
        return sim_j_fail(&ctx, "arrival",
                          "required field missing (expected \"closed\" or \"poisson\", or a "
                          "\"trace\")");
    if (strcmp(arrival, "closed") == 0)
        w->arrival = SIM_ARRIVAL_CLOSED;
    else if (strcmp(arrival, "poisson") == 0)
        w->arrival = SIM_ARRIVAL_POISSON;
    else
        return sim_j_fail(&ctx, "arrival", "unknown arrival (expected closed or poisson, got '%s')",
                          arrival);
    const int closed = w->arrival == SIM_ARRIVAL_CLOSED;
    st = sim_j_int(&ctx, obj, "concurrency", closed, 1, 1 << 20, &w->concurrency, NULL);
    if (st == SIM_OK && !closed && cJSON_GetObjectItemCaseSensitive(obj, "concurrency"))
        return sim_j_fail(&ctx, "concurrency", "not allowed with arrival poisson");
    if (st == SIM_OK && closed && cJSON_GetObjectItemCaseSensitive(obj, "rate_per_s"))
        return sim_j_fail(&ctx, "rate_per_s", "not allowed with arrival closed");
    if (st == SIM_OK && closed && cJSON_GetObjectItemCaseSensitive(obj, "burstiness"))
        return sim_j_fail(&ctx, "burstiness", "not allowed with arrival closed");
    if (st == SIM_OK)
        st = sim_j_num(&ctx, obj, "rate_per_s", !closed, 1e-9, 1e9, &w->rate_per_s, NULL);
    if (st == SIM_OK)
        st = sim_j_num(&ctx, obj, "burstiness", 0, 1e-3, 1e3, &w->burstiness, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "prompt_tokens", 1, 1, 1 << 24, &w->prompt_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "output_tokens", 1, 1, 1 << 24, &w->output_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "num_requests", !closed, 1, SIM_WORKLOAD_MAX_REQUESTS,
                       &w->num_requests, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "warmup_requests", 0, 0, SIM_WORKLOAD_MAX_REQUESTS,
                       &w->warmup_requests, NULL);
    if (st == SIM_OK)
        st = sim_j_num(&ctx, obj, "range_ratio", 0, 0.0, 0.999, &w->range_ratio, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "prefix_tokens", 0, 0, 1 << 24, &w->prefix_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(&ctx, obj, "distinct_prompts", 0, 1, SIM_WORKLOAD_MAX_REQUESTS,
                       &w->distinct_prompts, NULL);
    if (st == SIM_OK && w->prefix_tokens > 0 && w->distinct_prompts > 0)
        return sim_j_fail(&ctx, "distinct_prompts",
                          "not allowed with prefix_tokens (expected one of them)");
    if (st != SIM_OK)
        return st;
    r->prompt_tokens = w->prompt_tokens;
    r->output_tokens = w->output_tokens;
    if (closed)
        r->concurrency = w->concurrency;
    return SIM_OK;
}

/* Fills r from one line's object. The file name and line are set by the caller. */
/* r->model from r->model_arg: an id as written; a path (it has a '/') that is relative, against
 * the measurement file's folder, as a trace is (MEASUREMENTS.md, "model"). */
static sim_status resolve_model(const sim_jctx *ctx, row_buf *r)
{
    const char *m = r->model_arg;
    char dir[512] = "";
    if (strchr(m, '/') && m[0] != '/')
        dir_of(ctx->path, dir, sizeof(dir));
    int n = snprintf(r->model, sizeof(r->model), "%s%s", dir, m);
    if (n < 0 || (size_t)n >= sizeof(r->model))
        return sim_j_fail(ctx, "model", "path too long once resolved against the file's folder");
    return SIM_OK;
}

static sim_status parse_row(const sim_jctx *ctx, const cJSON *root, row_buf *r)
{
    if (!cJSON_IsObject(root))
        return sim_j_fail(ctx, NULL,
                          "top level: expected a JSON object (one measurement per line)");
    sim_status st = sim_j_check_keys(ctx, root, row_keys, N(row_keys), NULL, 0, 1);
    if (st != SIM_OK)
        return st;

    r->tp = -1;
    r->dtype = SIM_DTYPE_BF16;
    r->batch = r->prompt_tokens = r->output_tokens = r->context_tokens = -1;
    r->n_groups = 0;
    r->concurrency = -1;
    sim_sched_cfg_unset(&r->sched);

    st = get_str(ctx, root, "id", 1, r->id, sizeof(r->id));
    if (st == SIM_OK)
        st = get_str(ctx, root, "source", 1, r->source, sizeof(r->source));
    if (st == SIM_OK)
        st = get_str(ctx, root, "hardware", 1, r->hardware, sizeof(r->hardware));
    if (st == SIM_OK)
        st = get_str(ctx, root, "model", 1, r->model_arg, sizeof(r->model_arg));
    if (st == SIM_OK)
        st = resolve_model(ctx, r);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "tp", 1, 1, MEAS_TP_MAX, &r->tp, NULL);
    int present = 0;
    if (st == SIM_OK)
        st = get_dtype(ctx, root, "dtype", &r->dtype, &present);
    r->kv_dtype = r->dtype;
    if (st == SIM_OK)
        st = get_dtype(ctx, root, "kv_dtype", &r->kv_dtype, &present);
    if (st == SIM_OK)
        st = get_str(ctx, root, "engine", 0, r->engine, sizeof(r->engine));
    if (st == SIM_OK)
        st = get_str(ctx, root, "engine_version", 0, r->engine_version, sizeof(r->engine_version));
    char kind[32];
    if (st == SIM_OK)
        st = sim_j_str(ctx, root, "kind", 1, kind, sizeof(kind), NULL);
    if (st == SIM_OK && sim_meas_kind_parse(kind, &r->kind) != SIM_OK)
        return sim_j_fail(ctx, "kind",
                          "unknown kind (expected prefill, decode, step, offline_batch or "
                          "serving, got '%s')",
                          kind);
    if (st == SIM_OK)
        st = sim_j_num(ctx, root, "measured_s", 1, -HUGE_VAL, HUGE_VAL, &r->measured_s, NULL);
    /* A time of a nanosecond or less, or over a year, is a unit mistake, and would make
     * errors and R^2 overflow (docs/limits.md). */
    if (st == SIM_OK && !(r->measured_s >= MEAS_SECONDS_MIN && r->measured_s <= MEAS_SECONDS_MAX))
        return sim_j_fail(ctx, "measured_s",
                          "out of range (expected seconds from 1e-9 to 3.2e7, got %.17g)",
                          r->measured_s);
    if (st != SIM_OK)
        return st;

    /* Fields of another kind are errors: a decode row with groups was meant as something else. */
    unsigned allowed = kinds[r->kind].allowed;
    for (int b = 0; b < KF_COUNT; b++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, kf_keys[b]);
        if (v && !cJSON_IsNull(v) && !(allowed & (1u << b))) {
            char list[128];
            kind_fields(allowed, list, sizeof(list));
            return sim_j_fail(ctx, kf_keys[b],
                              "not allowed for kind '%s' (expected the common fields and %s)",
                              kind_names[r->kind], list);
        }
    }
    unsigned req = kinds[r->kind].required;
    /* Decode context is at least 1: the sequence has a prompt. Prefill has no context. */
    st = sim_j_int(ctx, root, "batch", (req & KF_BATCH) != 0, 1, MEAS_COUNT_MAX, &r->batch, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "prompt_tokens", (req & KF_PROMPT) != 0, 1, MEAS_COUNT_MAX,
                       &r->prompt_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "output_tokens", (req & KF_OUTPUT) != 0, 1, MEAS_COUNT_MAX,
                       &r->output_tokens, NULL);
    if (st == SIM_OK)
        st = sim_j_int(ctx, root, "context_tokens", (req & KF_CONTEXT) != 0, 1, MEAS_COUNT_MAX,
                       &r->context_tokens, NULL);
    if (st != SIM_OK)
        return st;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "groups");
    if (req & KF_GROUPS) {
        if (!v || cJSON_IsNull(v))
            return sim_j_fail(ctx, "groups", "required field missing");
        st = parse_groups(ctx, v, r);
        if (st != SIM_OK)
            return st;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "scheduler");
    if (v && !cJSON_IsNull(v)) {
        st = parse_sched(ctx, v, &r->sched);
        if (st != SIM_OK)
            return st;
    }
    r->dp = 1;
    r->ep = 0;
    v = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (v && !cJSON_IsNull(v)) {
        st = parse_run(ctx, v, r);
        if (st != SIM_OK)
            return st;
    }
    if (r->kind == SIM_MEAS_SERVING) {
        char metric[32];
        st = sim_j_str(ctx, root, "metric", 1, metric, sizeof(metric), NULL);
        if (st != SIM_OK)
            return st;
        if (sim_serve_metric_parse(metric, &r->metric) != SIM_OK)
            return sim_j_fail(ctx, "metric",
                              "unknown metric (expected ttft_mean|ttft_p50|ttft_p90|ttft_p99, "
                              "tpot_..., e2e_..., got '%s')",
                              metric);
        v = cJSON_GetObjectItemCaseSensitive(root, "workload");
        if (!v || cJSON_IsNull(v))
            return sim_j_fail(ctx, "workload", "required field missing");
        st = parse_workload(ctx, v, ctx->path, r);
        if (st != SIM_OK)
            return st;
    }

    /* The step groups the core times (meas_json.h). */
    if (r->kind == SIM_MEAS_PREFILL) {
        r->n_groups = 1;
        r->groups[0] = (sim_group){r->batch, r->prompt_tokens, 0, 1};
    } else if (r->kind == SIM_MEAS_DECODE) {
        r->n_groups = 1;
        r->groups[0] = (sim_group){r->batch, 1, r->context_tokens, 1};
    }
    return SIM_OK;
}

/*
 * Open-addressing index of ids over set->rows, for duplicate detection in linear time. Slots
 * hold row index + 1; 0 is empty. It is kept at most half full, doubling as rows come.
 */
typedef struct id_index {
    size_t *slot;
    size_t mask;
    size_t n;
} id_index;

static void id_index_put(size_t *slot, size_t mask, const sim_meas_row *rows, size_t i)
{
    size_t h = hash_str(rows[i].id) & mask;
    while (slot[h])
        h = (h + 1) & mask;
    slot[h] = i + 1;
}

/* Room for one more id (the slots rebuilt from rows when the index is half full). */
static sim_status id_index_reserve(id_index *ix, const sim_meas_row *rows)
{
    if (ix->slot && (ix->n + 1) * 2 <= ix->mask + 1)
        return SIM_OK;
    size_t cap = ix->slot ? (ix->mask + 1) * 2 : 64;
    if (cap > SIZE_MAX / sizeof(size_t))
        return SIM_ENOMEM;
    size_t *slot = calloc(cap, sizeof(size_t));
    if (!slot)
        return SIM_ENOMEM;
    for (size_t h = 0; ix->slot && h <= ix->mask; h++)
        if (ix->slot[h])
            id_index_put(slot, cap - 1, rows, ix->slot[h] - 1);
    free(ix->slot);
    ix->slot = slot;
    ix->mask = cap - 1;
    return SIM_OK;
}

/* Inserts row i; returns the index of an earlier row with the same id, or SIZE_MAX. SIM_ENOMEM
 * in *st when the index cannot grow. */
static size_t id_index_add(id_index *ix, const sim_meas_row *rows, size_t i, sim_status *st)
{
    *st = id_index_reserve(ix, rows);
    if (*st != SIM_OK)
        return SIZE_MAX;
    for (size_t h = hash_str(rows[i].id) & ix->mask;; h = (h + 1) & ix->mask) {
        if (ix->slot[h] == 0) {
            ix->slot[h] = i + 1;
            ix->n++;
            return SIZE_MAX;
        }
        if (strcmp(rows[ix->slot[h] - 1].id, rows[i].id) == 0)
            return ix->slot[h] - 1;
    }
}

/* Makes room for one more row, doubling the storage. */
static sim_status reserve_one(sim_meas_set *set)
{
    if (set->n < set->cap)
        return SIM_OK;
    size_t cap = set->cap ? set->cap : 32;
    if (set->cap) {
        if (cap > SIZE_MAX / 2 / sizeof(sim_meas_row))
            return SIM_ENOMEM;
        cap *= 2;
    }
    sim_meas_row *rows = realloc(set->rows, cap * sizeof(sim_meas_row));
    if (!rows)
        return SIM_ENOMEM;
    set->rows = rows;
    set->cap = cap;
    return SIM_OK;
}

/* What sim_meas_load carries from line to line. */
typedef struct load_ctx {
    sim_meas_set *set;
    id_index ix;
    row_buf *buf; /* the line being parsed */
} load_ctx;

static sim_status load_line(const sim_jctx *ctx, const cJSON *root, int line, void *user)
{
    load_ctx *lc = user;
    sim_meas_set *set = lc->set;
    sim_status st = reserve_one(set);
    if (st != SIM_OK)
        return st;
    row_buf *b = lc->buf;
    memset(b, 0, sizeof(*b));
    snprintf(b->file, sizeof(b->file), "%s", ctx->path);
    b->line = line;
    st = parse_row(ctx, root, b);
    if (st != SIM_OK)
        return st;
    struct sim_meas_pool *p = set_pool(set);
    if (!p || store_row(p, b, &set->rows[set->n]) != SIM_OK)
        return SIM_ENOMEM;
    size_t dup = id_index_add(&lc->ix, set->rows, set->n, &st);
    if (st != SIM_OK)
        return st;
    if (dup != SIZE_MAX)
        return sim_j_fail(ctx, "id", "duplicate id (expected unique ids, got '%s', first at %s:%d)",
                          b->id, set->rows[dup].file, set->rows[dup].line);
    set->n++;
    return SIM_OK;
}

/* Appends the rows of path (read a line at a time) or, when buf is not NULL, of buf (len bytes,
 * NUL-terminated, owned: freed here) named path. */
static sim_status load_rows(const char *path, char *buf, size_t len, sim_meas_set *set,
                            struct sim_err *err)
{
    load_ctx lc = {set, {NULL, 0, 0}, malloc(sizeof(row_buf))};
    const size_t n0 = set->n;
    sim_status st = lc.buf ? SIM_OK : SIM_ENOMEM;
    for (size_t i = 0; st == SIM_OK && i < set->n; i++)
        (void)id_index_add(&lc.ix, set->rows, i, &st);
    if (st == SIM_OK)
        st = buf ? sim_jsonl_each_text(path, buf, len, load_line, &lc, err)
                 : sim_jsonl_each(path, load_line, &lc, err);
    if (st == SIM_ENOMEM)
        sim_enomem(err, path);
    if (st != SIM_OK)
        set->n = n0;
    free(lc.buf);
    free(lc.ix.slot);
    free(buf);
    return st;
}

sim_status sim_meas_load(const char *path, sim_meas_set *set, struct sim_err *err)
{
    return load_rows(path, NULL, 0, set, err);
}

sim_status sim_meas_load_text(const char *name, const char *text, size_t len, sim_meas_set *set,
                              struct sim_err *err)
{
    const sim_status st = sim_json_check_text(name, text, len, (uint64_t)len, err);
    if (st != SIM_OK)
        return st;
    char *buf = malloc(len + 1);
    if (!buf) {
        sim_enomem(err, name);
        return SIM_ENOMEM;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    return load_rows(name, buf, len, set, err);
}

/* ---- Selection -------------------------------------------------------------------------- */

typedef enum ftype { FT_STR, FT_INT, FT_NUM, FT_DTYPE, FT_KIND, FT_METRIC } ftype;

/* The selectable fields: the common ones and the kind-specific counts (MEASUREMENTS.md). */
static const struct {
    const char *name;
    ftype type;
    size_t off;
} fields[] = {
    {"id", FT_STR, offsetof(sim_meas_row, id)},
    {"source", FT_STR, offsetof(sim_meas_row, source)},
    {"hardware", FT_STR, offsetof(sim_meas_row, hardware)},
    {"model", FT_STR, offsetof(sim_meas_row, model_arg)},
    {"tp", FT_INT, offsetof(sim_meas_row, tp)},
    {"dtype", FT_DTYPE, offsetof(sim_meas_row, dtype)},
    {"kv_dtype", FT_DTYPE, offsetof(sim_meas_row, kv_dtype)},
    {"engine", FT_STR, offsetof(sim_meas_row, engine)},
    {"engine_version", FT_STR, offsetof(sim_meas_row, engine_version)},
    {"kind", FT_KIND, offsetof(sim_meas_row, kind)},
    {"measured_s", FT_NUM, offsetof(sim_meas_row, measured_s)},
    {"batch", FT_INT, offsetof(sim_meas_row, batch)},
    {"prompt_tokens", FT_INT, offsetof(sim_meas_row, prompt_tokens)},
    {"output_tokens", FT_INT, offsetof(sim_meas_row, output_tokens)},
    {"context_tokens", FT_INT, offsetof(sim_meas_row, context_tokens)},
    {"metric", FT_METRIC, offsetof(sim_meas_row, metric)},
    {"concurrency", FT_INT, offsetof(sim_meas_row, concurrency)},
};

static int find_field(const char *name, size_t len)
{
    for (size_t i = 0; i < N(fields); i++)
        if (strlen(fields[i].name) == len && strncmp(fields[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

static const char *type_expect(ftype t)
{
    switch (t) {
    case FT_STR:
        return "a non-empty string";
    case FT_INT:
        return "a non-negative integer";
    case FT_NUM:
        return "a finite number";
    case FT_DTYPE:
        return "fp16, bf16 or fp8";
    case FT_KIND:
        return "prefill, decode, step, offline_batch or serving";
    case FT_METRIC:
        return "ttft_mean, ttft_p50, ..., e2e_p99";
    }
    return "?";
}

/* Parses value as fields[fi]'s type; 1 on success. Outputs are those of the type. */
static int parse_value(int fi, const char *value, int64_t *i, double *d, int *e)
{
    sim_dtype dt;
    sim_meas_kind k;
    switch (fields[fi].type) {
    case FT_STR:
        return value[0] != '\0';
    case FT_INT:
        return sim_num_parse_i64(value, SIM_NUM_SIGN_PLUS, 0, INT64_MAX, i) == SIM_OK;
    case FT_NUM:
        return sim_num_parse_double(value, -DBL_MAX, DBL_MAX, d) == SIM_OK;
    case FT_DTYPE:
        if (!meas_dtype_parse(value, &dt))
            return 0;
        *e = (int)dt;
        return 1;
    case FT_KIND:
        if (sim_meas_kind_parse(value, &k) != SIM_OK)
            return 0;
        *e = (int)k;
        return 1;
    case FT_METRIC: {
        sim_serve_metric mt;
        if (sim_serve_metric_parse(value, &mt) != SIM_OK)
            return 0;
        *e = (int)mt;
        return 1;
    }
    }
    return 0;
}

sim_status sim_meas_filter_parse(const char *spec, sim_meas_filter *out, struct sim_err *err)
{
    memset(out, 0, sizeof(*out));
    const char *eq = strchr(spec, '=');
    if (!eq) {
        sim_errf(err, "'%s': no '=' (expected FIELD=VALUE, e.g. hardware=h100-sxm)", spec);
        return SIM_EINVAL;
    }
    size_t flen = (size_t)(eq - spec);
    if (flen == 0) {
        sim_errf(err, "'%s': empty field name (expected FIELD=VALUE)", spec);
        return SIM_EINVAL;
    }
    int fi = find_field(spec, flen);
    if (fi < 0) {
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)(flen < 63 ? flen : 63), spec);
        const char *best = NULL;
        int bd = 3;
        for (size_t i = 0; i < N(fields); i++) {
            int dd = sim_j_edit_distance(name, fields[i].name);
            if (dd < bd) {
                bd = dd;
                best = fields[i].name;
            }
        }
        if (best)
            sim_errf(err, "'%s': unknown field '%s' (did you mean '%s'?)", spec, name, best);
        else
            sim_errf(err,
                     "'%s': unknown field '%s' (expected one of id, source, hardware, model, tp, "
                     "dtype, kv_dtype, engine, engine_version, kind, measured_s, batch, "
                     "prompt_tokens, output_tokens, context_tokens, metric, concurrency)",
                     spec, name);
        return SIM_EINVAL;
    }
    const char *value = eq + 1;
    size_t vlen = strlen(value);
    if (vlen >= sizeof(out->value)) {
        sim_errf(err, "%s: value too long (expected at most %zu characters, got %zu)",
                 fields[fi].name, sizeof(out->value) - 1, vlen);
        return SIM_EINVAL;
    }
    int64_t iv;
    double dv;
    int ev;
    if (!parse_value(fi, value, &iv, &dv, &ev)) {
        sim_errf(err, "'%s': %s: bad value (expected %s, got '%s')", spec, fields[fi].name,
                 type_expect(fields[fi].type), value);
        return SIM_EINVAL;
    }
    memcpy(out->field, fields[fi].name, strlen(fields[fi].name) + 1);
    memcpy(out->value, value, vlen + 1);
    return SIM_OK;
}

const char *sim_meas_field_str(const sim_meas_row *r, const char *field, char *buf, size_t cap)
{
    int fi = find_field(field, strlen(field));
    if (fi < 0)
        return NULL;
    const char *base = (const char *)r + fields[fi].off;
    switch (fields[fi].type) {
    case FT_STR: {
        const char *v;
        memcpy(&v, base, sizeof(v));
        return v;
    }
    case FT_INT: {
        int64_t v;
        memcpy(&v, base, sizeof(v));
        snprintf(buf, cap, "%lld", (long long)v);
        return buf;
    }
    case FT_NUM: {
        double v;
        memcpy(&v, base, sizeof(v));
        snprintf(buf, cap, "%.17g", v);
        return buf;
    }
    case FT_DTYPE: {
        sim_dtype v;
        memcpy(&v, base, sizeof(v));
        return sim_dtype_name(v);
    }
    case FT_KIND: {
        sim_meas_kind v;
        memcpy(&v, base, sizeof(v));
        return sim_meas_kind_name(v);
    }
    case FT_METRIC: {
        sim_serve_metric v;
        memcpy(&v, base, sizeof(v));
        return r->kind == SIM_MEAS_SERVING ? sim_serve_metric_name(v) : "";
    }
    }
    return NULL;
}

int sim_meas_filter_match(const sim_meas_filter *f, const sim_meas_row *r)
{
    /* Hand-built filters are checked too: both strings must be terminated. */
    if (!memchr(f->field, '\0', sizeof(f->field)) || !memchr(f->value, '\0', sizeof(f->value)))
        return 0;
    int fi = find_field(f->field, strlen(f->field));
    if (fi < 0)
        return 0;
    int64_t iv = 0;
    double dv = 0.0;
    int ev = 0;
    if (!parse_value(fi, f->value, &iv, &dv, &ev))
        return 0;
    const char *base = (const char *)r + fields[fi].off;
    switch (fields[fi].type) {
    case FT_STR: {
        const char *have;
        memcpy(&have, base, sizeof(have));
        return have[0] != '\0' && strcmp(have, f->value) == 0;
    }
    case FT_INT: {
        int64_t have;
        memcpy(&have, base, sizeof(have));
        return have >= 0 && have == iv;
    }
    case FT_NUM: {
        double have;
        memcpy(&have, base, sizeof(have));
        return have == dv;
    }
    case FT_DTYPE: {
        sim_dtype have;
        memcpy(&have, base, sizeof(have));
        return (int)have == ev;
    }
    case FT_KIND: {
        sim_meas_kind have;
        memcpy(&have, base, sizeof(have));
        return (int)have == ev;
    }
    case FT_METRIC: {
        sim_serve_metric have;
        memcpy(&have, base, sizeof(have));
        return r->kind == SIM_MEAS_SERVING && (int)have == ev;
    }
    }
    return 0;
}

size_t sim_meas_select(sim_meas_set *set, const sim_meas_filter *sel, size_t n_sel,
                       const sim_meas_filter *exc, size_t n_exc)
{
    size_t kept = 0;
    for (size_t i = 0; i < set->n; i++) {
        const sim_meas_row *r = &set->rows[i];
        int keep = 1;
        for (size_t j = 0; j < n_sel && keep; j++)
            keep = sim_meas_filter_match(&sel[j], r);
        for (size_t j = 0; j < n_exc && keep; j++)
            keep = !sim_meas_filter_match(&exc[j], r);
        if (!keep)
            continue;
        if (kept != i)
            set->rows[kept] = set->rows[i];
        kept++;
    }
    set->n = kept;
    return kept;
}

sim_status sim_meas_set_aside_assumed(sim_meas_set *set, sim_meas_set *aside, size_t *moved)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++)
        n += set->rows[i].assumed[0] != '\0';
    if (moved)
        *moved = 0;
    if (n == 0)
        return SIM_OK;
    const size_t base = aside->n;
    for (size_t k = 0; k < n; k++) {
        if (reserve_one(aside) != SIM_OK) {
            aside->n = base;
            return SIM_ENOMEM;
        }
        aside->n++; /* reserve_one grows for the next row only */
    }
    aside->n = base;
    /* The moved rows' strings are copied into aside's pool: aside may outlive set. */
    struct sim_meas_pool *p = set_pool(aside);
    size_t k = base;
    for (size_t i = 0; p && i < set->n; i++) {
        const sim_meas_row *r = &set->rows[i];
        if (!r->assumed[0])
            continue;
        memcpy(&aside->rows[k], r, sizeof(*r));
        if (rehome(p, &aside->rows[k]) != SIM_OK)
            return SIM_ENOMEM; /* aside->n is still base */
        k++;
    }
    if (!p)
        return SIM_ENOMEM;
    aside->n = k;
    size_t kept = 0;
    for (size_t i = 0; i < set->n; i++)
        if (!set->rows[i].assumed[0])
            set->rows[kept++] = set->rows[i];
    set->n = kept;
    if (moved)
        *moved = n;
    return SIM_OK;
}
