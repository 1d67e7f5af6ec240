/*
 * llmstep.c - the public C API (include/llmstep.h) on simcore, simio and deploy.c: a
 * context that loads each file once, deployments that hold the resolved settings, and the
 * predictions. Allocation and file access happen here, at the edge; the numbers come from
 * the pure core.
 */
#include "llmstep.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_fit.h"
#include "calib_json.h"
#include "err.h"
#include "capacity.h"
#include "deploy.h"
#include "engine.h"
#include "hw.h"
#include "meas_pred.h"
#include "paths.h"
#include "memory.h"
#include "metrics.h"
#include "model.h"
#include "pipeline.h"
#include "sched_v0.h"
#include "sched_v1.h"
#include "step.h"
#include "sweep_drive.h"

_Static_assert((int)LLMSTEP_OK == (int)SIM_OK && (int)LLMSTEP_EINVAL == (int)SIM_EINVAL &&
                   (int)LLMSTEP_EPARSE == (int)SIM_EPARSE &&
                   (int)LLMSTEP_ERANGE == (int)SIM_ERANGE && (int)LLMSTEP_EIO == (int)SIM_EIO &&
                   (int)LLMSTEP_ENOMEM == (int)SIM_ENOMEM && (int)LLMSTEP_EFIT == (int)SIM_EFIT &&
                   (int)LLMSTEP_STATUS_COUNT == (int)SIM_STATUS_COUNT,
               "llmstep_status mirrors sim_status");
_Static_assert(sizeof(((llmstep_error *)0)->message) == sizeof(((struct sim_err *)0)->msg),
               "one message size");

/* The handles are the cache's objects: an llmstep_model * is a sim_model *, and so on (the
 * public structs are never defined, only converted back). */
#define MODEL(h)  ((const sim_model *)(const void *)(h))
#define HW(h)     ((const sim_hw *)(const void *)(h))
#define ENGINE(h) ((const sim_engine *)(const void *)(h))
#define CALIB(h)  ((const sim_calib *)(const void *)(h))

struct llmstep_ctx {
    sim_cache *cache;
};

struct llmstep_deploy {
    sim_deployment d;
    sim_batch_work *work;
    /* The deployment llmstep_serve runs: d, or with the default usage (-1) its twin with the
     * OpenAI server's defaults, as `llmstep serve` (and a serving sweep) resolve them; a twin
     * that failed to open keeps its status and message for the serving calls. */
    sim_deployment srv;
    int have_srv;
    sim_status srv_status;
    struct sim_err srv_err;
};

static llmstep_status fail(llmstep_error *err, sim_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static llmstep_status fail(llmstep_error *err, sim_status st, const char *fmt, ...)
{
    if (err) {
        err->code = (llmstep_status)st;
        va_list ap;
        va_start(ap, fmt);
        sim_vfmt(err->message, sizeof(err->message), "", 0, fmt, ap);
        va_end(ap);
    }
    return (llmstep_status)st;
}

static llmstep_status fail_err(llmstep_error *err, sim_status st, const struct sim_err *e)
{
    return fail(err, st, "%s", e->msg);
}

static void ok(llmstep_error *err)
{
    if (err) {
        err->code = LLMSTEP_OK;
        err->message[0] = '\0';
    }
}

const char *llmstep_version(void) { return LLMSTEP_VERSION; }

int llmstep_abi_version(void) { return LLMSTEP_ABI_VERSION; }

const char *llmstep_status_name(llmstep_status s)
{
    return (unsigned)s < (unsigned)SIM_STATUS_COUNT ? sim_strerror((sim_status)s)
                                                    : "unknown status";
}

llmstep_ctx *llmstep_ctx_new(const char *data_dir, llmstep_error *err)
{
    llmstep_ctx *ctx = calloc(1, sizeof(*ctx));
    char found[4200];
    if (!(data_dir && *data_dir))
        sim_deploy_find_data_dir(found, sizeof(found));
    const char *d = data_dir && *data_dir ? data_dir : found;
    if (ctx)
        ctx->cache = sim_cache_alloc(d);
    if (!ctx || !ctx->cache) {
        free(ctx);
        fail(err, SIM_ENOMEM, "out of memory (or a data_dir longer than 4095 bytes)");
        return NULL;
    }
    ok(err);
    return ctx;
}

void llmstep_ctx_free(llmstep_ctx *ctx)
{
    if (!ctx)
        return;
    sim_cache_free(ctx->cache);
    free(ctx);
}

/* Getters and initializers are defined for NULL (llmstep.h): "" or 0 out, nothing written. */
const char *llmstep_ctx_data_dir(const llmstep_ctx *ctx)
{
    return ctx ? sim_cache_data_dir(ctx->cache) : "";
}

size_t llmstep_ctx_n_loaded(const llmstep_ctx *ctx) { return ctx ? sim_cache_size(ctx->cache) : 0; }

static llmstep_status loaded(sim_status st, const struct sim_err *e, llmstep_error *err)
{
    if (st != SIM_OK)
        return fail_err(err, st, e);
    ok(err);
    return LLMSTEP_OK;
}

/* The four loaders: the cache's object of a kind, as the public handle. */
#define LOADER(fn, handle, sim_type, cache_fn, what)                                               \
    llmstep_status fn(llmstep_ctx *ctx, const char *name, const handle **out, llmstep_error *err)  \
    {                                                                                              \
        if (!ctx || !name || !out)                                                                 \
            return fail(err, SIM_EINVAL, what ": NULL argument");                                  \
        struct sim_err e;                                                                          \
        const sim_type *obj = NULL;                                                                \
        sim_status st = cache_fn(ctx->cache, name, &obj, NULL, &e);                                \
        *out = (const handle *)(const void *)obj;                                                  \
        return loaded(st, &e, err);                                                                \
    }
LOADER(llmstep_model_load, llmstep_model, sim_model, sim_cache_model, "model")
LOADER(llmstep_hw_load, llmstep_hw, sim_hw, sim_cache_hw, "hw")
LOADER(llmstep_engine_load, llmstep_engine, sim_engine, sim_cache_engine, "engine")
LOADER(llmstep_calibration_load, llmstep_calibration, sim_calib, sim_cache_calib, "calibration")
#undef LOADER

void llmstep_model_get_info(const llmstep_model *mm, llmstep_model_info *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!mm)
        return;
    const sim_model *m = MODEL(mm);
    snprintf(out->id, sizeof(out->id), "%s", m->id);
    out->n_layers = m->n_layers;
    out->d_model = m->d_model;
    out->n_heads = m->n_heads;
    out->n_kv_heads = m->n_kv_heads;
    out->head_dim = m->head_dim;
    out->vocab_size = m->vocab;
    out->max_position_embeddings = m->max_pos;
    out->n_experts = m->n_experts;
    sim_param_count pc;
    sim_model_params(m, &pc);
    out->params = pc.total;
    out->kv_bytes_per_token_16bit = sim_model_kv_bytes_per_token(m, 1, SIM_DTYPE_BF16);
}

const char *llmstep_hw_id(const llmstep_hw *hw) { return hw ? HW(hw)->id : ""; }

void llmstep_hw_get_info(const llmstep_hw *hh, llmstep_hw_info *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!hh)
        return;
    const sim_hw *hw = HW(hh);
    snprintf(out->id, sizeof(out->id), "%s", hw->id);
    snprintf(out->name, sizeof(out->name), "%s", hw->name);
    out->memory_bytes = hw->v[SIM_HWF_MEM_CAPACITY];
    out->n_gpus_per_node = (int64_t)hw->v[SIM_HWF_N_GPUS_PER_NODE];
    sim_hw_roofs r;
    sim_hw_roofs_of(hw, &r);
    out->hbm_peak_bytes_per_s = r.hbm_peak_bytes_per_s;
    out->hbm_achievable_bytes_per_s = r.hbm_achievable_bytes_per_s;
    out->bf16_peak_flops_per_s = r.bf16_peak_flops_per_s;
    out->bf16_achievable_flops_per_s = r.bf16_achievable_flops_per_s;
    out->has_fp8 = r.has_fp8;
    out->fp8_peak_flops_per_s = r.fp8_peak_flops_per_s;
    out->fp8_achievable_flops_per_s = r.fp8_achievable_flops_per_s;
    out->fp32_peak_flops_per_s = r.fp32_peak_flops_per_s;
    out->ridge_bf16_flops_per_byte = r.ridge_bf16_flops_per_byte;
}

const char *llmstep_engine_id(const llmstep_engine *e) { return e ? ENGINE(e)->id : ""; }

const char *llmstep_calibration_hw_id(const llmstep_calibration *c)
{
    return c ? CALIB(c)->hardware : "";
}

void llmstep_calibration_get(const llmstep_calibration *c, double *alpha, double *beta_s)
{
    if (alpha)
        *alpha = c ? CALIB(c)->alpha : 0.0;
    if (beta_s)
        *beta_s = c ? CALIB(c)->beta_s : 0.0;
}

void llmstep_deploy_spec_init(llmstep_deploy_spec *spec)
{
    if (!spec)
        return;
    memset(spec, 0, sizeof(*spec));
    spec->tp = 1;
    spec->chunked_prefill = -1;
    spec->usage = -1;
    spec->async_scheduling = -1;
    spec->prefix_caching = -1;
}

/* The scheduler options of spec as the core takes them (unset = -1). */
/* The scheduler settings a deployment or a sweep spec carries (the same names in both). */
typedef struct sched_fields {
    int64_t max_num_seqs, max_num_batched_tokens, max_model_len, block_size;
    double gpu_memory_utilization_frac;
    int chunked_prefill, usage, async_scheduling, prefix_caching;
} sched_fields;

#define SCHED_FIELDS_OF(spec)                                                                      \
    ((sched_fields){(spec)->max_num_seqs, (spec)->max_num_batched_tokens, (spec)->max_model_len,   \
                    (spec)->block_size, (spec)->gpu_memory_utilization_frac,                       \
                    (spec)->chunked_prefill, (spec)->usage, (spec)->async_scheduling,              \
                    (spec)->prefix_caching})

static llmstep_status sched_of(const sched_fields *spec, sim_sched_cfg *c, llmstep_error *err)
{
    sim_sched_cfg_unset(c);
    const struct {
        const char *name;
        int64_t v;
        int64_t *dst;
    } ints[] = {
        {"max_num_seqs", spec->max_num_seqs, &c->max_num_seqs},
        {"max_num_batched_tokens", spec->max_num_batched_tokens, &c->max_num_batched_tokens},
        {"max_model_len", spec->max_model_len, &c->max_model_len},
        {"block_size", spec->block_size, &c->block_size}};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        if (ints[i].v < 0 || ints[i].v > (INT64_C(1) << 30))
            return fail(err, SIM_ERANGE, "%s: expected 0 (default) to 2^30, got %lld", ints[i].name,
                        (long long)ints[i].v);
        if (ints[i].v > 0)
            *ints[i].dst = ints[i].v;
    }
    const double g = spec->gpu_memory_utilization_frac;
    if (!(g == 0.0 || (g >= 1e-3 && g <= 1.0)))
        return fail(err, SIM_ERANGE,
                    "gpu_memory_utilization_frac: expected 0 (default) or 0.001 to 1, got %g", g);
    if (g > 0.0)
        c->gpu_memory_utilization = g;
    if (spec->chunked_prefill < -1 || spec->chunked_prefill > 1)
        return fail(err, SIM_EINVAL, "chunked_prefill: expected -1, 0 or 1, got %d",
                    spec->chunked_prefill);
    c->enable_chunked_prefill = spec->chunked_prefill;
    if (spec->usage < -1 || spec->usage > 1)
        return fail(err, SIM_EINVAL, "usage: expected -1, 0 (llm) or 1 (server), got %d",
                    spec->usage);
    c->usage = spec->usage < 0 ? -1 : spec->usage == 0 ? SIM_USAGE_LLM : SIM_USAGE_SERVER;
    if (spec->async_scheduling < -1 || spec->async_scheduling > 1)
        return fail(err, SIM_EINVAL, "async_scheduling: expected -1, 0 or 1, got %d",
                    spec->async_scheduling);
    c->async_scheduling = spec->async_scheduling;
    if (spec->prefix_caching < -1 || spec->prefix_caching > 1)
        return fail(err, SIM_EINVAL, "prefix_caching: expected -1, 0 or 1, got %d",
                    spec->prefix_caching);
    c->enable_prefix_caching = spec->prefix_caching;
    return LLMSTEP_OK;
}

/* Speculative decoding as the library's specs give it (method NULL: none), checked as the
 * CLI's options are (sim_spec_fill). */
static llmstep_status spec_of(const char *method, int64_t k, const double *rates, size_t n,
                              const char *model, sim_spec *out, llmstep_error *err)
{
    *out = (sim_spec){.method = SIM_SPEC_NONE};
    if (!method) {
        if (k != 0 || n != 0 || rates || model)
            return fail(err, SIM_EINVAL,
                        "spec_tokens, spec_acceptance and spec_model: need spec_method");
        return LLMSTEP_OK;
    }
    sim_spec_method m;
    if (sim_spec_method_parse(method, &m) != SIM_OK)
        return fail(err, SIM_EINVAL,
                    "spec_method: expected ngram, eagle, eagle3, mtp or draft, got '%s'", method);
    if ((m == SIM_SPEC_DRAFT) != (model != NULL))
        return fail(err, SIM_EINVAL, "spec_model: %s",
                    m == SIM_SPEC_DRAFT ? "method draft needs the draft model"
                                        : "only method draft takes a draft model");
    struct sim_err e;
    if (n > SIM_SPEC_MAX_TOKENS || sim_spec_fill(m, k, rates, (int64_t)n, out, &e) != SIM_OK)
        return n > SIM_SPEC_MAX_TOKENS
                   ? fail(err, SIM_EINVAL, "spec_acceptance: at most %d rates", SIM_SPEC_MAX_TOKENS)
                   : fail_err(err, SIM_EINVAL, &e);
    return LLMSTEP_OK;
}

llmstep_status llmstep_deploy_open(llmstep_ctx *ctx, const llmstep_deploy_spec *spec,
                                   llmstep_deploy **out, llmstep_error *err)
{
    if (!ctx || !spec || !out)
        return fail(err, SIM_EINVAL, "deploy: NULL argument");
    *out = NULL;
    if (!spec->model || !spec->hw)
        return fail(err, SIM_EINVAL, "deploy: model and hw are required");
    if (spec->tp < 1 || spec->tp > 4096)
        return fail(err, SIM_ERANGE, "tp: expected 1 to 4096, got %lld", (long long)spec->tp);
    if (spec->pp < 0 || spec->pp > SIM_PP_MAX || spec->dp < 0 || spec->dp > SIM_DP_MAX ||
        spec->ep < 0 || spec->ep > 1)
        return fail(err, SIM_ERANGE, "pp, dp, ep: expected pp 0 to %d, dp 0 to %d, ep 0 or 1",
                    SIM_PP_MAX, SIM_DP_MAX);
    if (spec->roofline_step < 0 || spec->roofline_step > 1 || spec->gemm_tile_wave < 0 ||
        spec->gemm_tile_wave > 1)
        return fail(err, SIM_EINVAL, "roofline_step and gemm_tile_wave: expected 0 or 1");
    struct sim_err e;
    sim_status st;
    sim_deploy_in in = {0};
    in.model = spec->model;
    in.hw = spec->hw;
    in.engine = spec->engine;
    in.default_engine = SIM_DEFAULT_ENGINE;
    in.engine_opt = "engine";
    in.calibration = spec->calibration;
    in.dtype = spec->dtype;
    in.kv_dtype = spec->kv_dtype;
    in.tp = spec->tp;
    in.pp = spec->pp > 1 ? spec->pp : 1;
    in.dp = spec->dp > 1 ? spec->dp : 1;
    in.ep = spec->ep;
    in.mode = spec->roofline_step ? SIM_ROOFLINE_STEP : SIM_ROOFLINE_OP;
    in.gemm = spec->gemm_tile_wave ? SIM_GEMM_TILE_WAVE : SIM_GEMM_FLAT;
    in.alpha = 1.0;
    in.beta_s = 0.0;
    in.check_memory = !spec->ignore_memory;
    in.memory_hint = " (ignore_memory to go on)";
    const sched_fields sf = SCHED_FIELDS_OF(spec);
    llmstep_status ls = sched_of(&sf, &in.sched, err);
    if (ls != LLMSTEP_OK)
        return ls;
    sim_spec sp;
    ls = spec_of(spec->spec_method, spec->spec_tokens, spec->spec_acceptance,
                 spec->n_spec_acceptance, spec->spec_model, &sp, err);
    if (ls != LLMSTEP_OK)
        return ls;
    in.spec = sp.method != SIM_SPEC_NONE ? &sp : NULL;
    in.spec_model = spec->spec_model;
    llmstep_deploy *h = calloc(1, sizeof(*h));
    if (h)
        h->work = malloc(sizeof(*h->work));
    if (!h || !h->work) {
        free(h);
        return fail(err, SIM_ENOMEM, "out of memory");
    }
    sim_deployment *d = &h->d;
    st = sim_deploy_open(ctx->cache, &in, d, &e);
    if (st != SIM_OK) {
        llmstep_deploy_free(h);
        return fail_err(err, st, &e);
    }
    if (sim_usage_for_serving(in.sched.usage) != in.sched.usage) { /* as the CLI's serve */
        in.sched.usage = sim_usage_for_serving(in.sched.usage);
        h->srv_status = sim_deploy_open(ctx->cache, &in, &h->srv, &h->srv_err);
        h->have_srv = 1;
    }
    *out = h;
    ok(err);
    return LLMSTEP_OK;
}

void llmstep_deploy_free(llmstep_deploy *d)
{
    if (!d)
        return;
    free(d->work);
    free(d);
}

void llmstep_deploy_get_info(const llmstep_deploy *d, llmstep_deploy_info *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!d)
        return;
    snprintf(out->model_id, sizeof(out->model_id), "%s", d->d.m->id);
    snprintf(out->hw_id, sizeof(out->hw_id), "%s", d->d.hw->id);
    snprintf(out->engine_id, sizeof(out->engine_id), "%s", d->d.e.id);
    snprintf(out->weight_format, sizeof(out->weight_format), "%s",
             sim_deploy_weight_format(d->d.m, &d->d.cfg));
    snprintf(out->kv_dtype, sizeof(out->kv_dtype), "%s", sim_dtype_name(d->d.cfg.kv_dtype));
    out->tp = d->d.cfg.tp;
    out->max_num_seqs = d->d.s.max_num_seqs;
    out->max_num_batched_tokens = d->d.s.max_num_batched_tokens;
    out->max_model_len = d->d.s.max_model_len;
    out->block_size = d->d.s.block_size;
    out->gpu_memory_utilization_frac = d->d.s.gpu_memory_utilization;
    out->chunked_prefill = d->d.s.enable_chunked_prefill;
    out->alpha = d->d.cfg.alpha;
    out->beta_s = d->d.cfg.beta_s;
    out->capacity_bytes = d->d.mem.capacity_bytes;
    out->usable_bytes = d->d.mem.usable_bytes;
    out->weights_bytes = d->d.mem.weights_bytes;
    out->activation_bytes = d->d.mem.activation_bytes;
    out->reserve_bytes = d->d.mem.reserve_bytes;
    out->kv_bytes_per_token = d->d.mem.kv_bytes_per_token;
    out->kv_budget_bytes = d->d.mem.kv_budget_bytes;
    out->kv_blocks = d->d.mem.kv_blocks;
    out->kv_capacity_tokens = d->d.mem.kv_capacity_tokens;
    out->fits = d->d.mem.fits;
    out->pp = d->d.cfg.pp > 1 ? d->d.cfg.pp : 1;
    out->dp = sim_run_dp(&d->d.cfg);
    out->ep = d->d.cfg.ep != 0;
}

static llmstep_status check_finite(const char *what, double v, llmstep_error *err)
{
    if (!isfinite(v))
        return fail(err, SIM_ERANGE, "%s is not a finite number (numerical failure)", what);
    return LLMSTEP_OK;
}

llmstep_status llmstep_step(const llmstep_deploy *d, const llmstep_group *groups, size_t n_groups,
                            llmstep_step_result *out, llmstep_op *ops, size_t ops_cap,
                            size_t *n_ops, llmstep_error *err)
{
    if (!d || !groups || !out)
        return fail(err, SIM_EINVAL, "step: NULL argument");
    if (n_groups < 1 || n_groups > SIM_STEP_MAX_GROUPS)
        return fail(err, SIM_EINVAL, "step: expected 1 to %d groups, got %zu", SIM_STEP_MAX_GROUPS,
                    n_groups);
    sim_step st = {0};
    st.n_groups = (int)n_groups;
    for (size_t i = 0; i < n_groups; i++)
        st.groups[i] = (sim_group){groups[i].count, groups[i].new_tokens, groups[i].context_tokens,
                                   groups[i].emits ? 1 : 0};
    struct sim_err e;
    sim_deploy_step_out so;
    sim_status s = sim_deploy_step(&d->d, &st, "", &so, &e);
    if (s != SIM_OK)
        return fail_err(err, s, &e);
    const sim_step_cost c = so.cost;
    llmstep_status ls = check_finite("step_s", so.wall_s, err);
    if (ls != LLMSTEP_OK)
        return ls;
    *out = (llmstep_step_result){
        so.wall_s, c.step_s, c.roofline_s, so.host_s, c.comm_s,
        c.flops,   c.bytes,  c.tokens,     c.seqs,    sim_bound_name(c.bound)};
    size_t k = 0;
    for (int i = 0; ops && i < SIM_OP_COUNT && k < ops_cap; i++) {
        const sim_op_cost *o = &c.ops[i];
        ops[k++] = (llmstep_op){sim_op_name((sim_op_kind)i),
                                sim_bound_name(o->bound),
                                o->flops,
                                o->bytes,
                                o->n_kernels,
                                o->time_s};
    }
    if (n_ops)
        *n_ops = k;
    ok(err);
    return LLMSTEP_OK;
}

llmstep_status llmstep_step_grid(const llmstep_deploy *d, size_t n, const int64_t *count,
                                 const int64_t *new_tokens, const int64_t *context_tokens,
                                 double *step_s, llmstep_error *err)
{
    if (!d || (n > 0 && (!count || !new_tokens || !context_tokens || !step_s)))
        return fail(err, SIM_EINVAL, "step_grid: NULL argument");
    sim_step st = {0};
    st.n_groups = 1;
    for (size_t i = 0; i < n; i++) {
        st.groups[0] = (sim_group){count[i], new_tokens[i], context_tokens[i], 1};
        struct sim_err e;
        sim_deploy_step_out so;
        sim_status s = sim_deploy_step(&d->d, &st, "", &so, &e);
        if (s == SIM_ERANGE && so.no_fit) { /* the engine could not hold these sequences */
            step_s[i] = (double)NAN;
            continue;
        }
        if (s != SIM_OK)
            return fail(err, s, "point %zu: %s", i, e.msg);
        step_s[i] = so.wall_s;
        if (!isfinite(step_s[i]))
            return fail(err, SIM_ERANGE, "point %zu: step_s is not a finite number", i);
    }
    ok(err);
    return LLMSTEP_OK;
}

llmstep_status llmstep_deploy_band(const llmstep_deploy *d, const char *family, int level_pct,
                                   double *lo_frac, double *hi_frac, int64_t *n_rows,
                                   llmstep_error *err)
{
    if (!d || !family || !lo_frac || !hi_frac)
        return fail(err, SIM_EINVAL, "band: NULL argument");
    int f = -1;
    for (int i = 0; i < SIM_BAND_FAMILIES && f < 0; i++)
        if (strcmp(family, sim_band_family_name(i)) == 0)
            f = i;
    if (f < 0)
        return fail(err, SIM_EINVAL,
                    "band: unknown family '%s' (expected offline_batch, prefill, decode, step, "
                    "ttft, ttft_queued, tpot or e2e)",
                    family);
    sim_pred_band b;
    struct sim_err e;
    if (sim_deploy_band(&d->d, f, level_pct, &b, &e) != SIM_OK)
        return fail(err, SIM_EINVAL, "band: %s", e.msg);
    *lo_frac = b.lo_frac;
    *hi_frac = b.hi_frac;
    if (n_rows)
        *n_rows = b.n_rows;
    ok(err);
    return LLMSTEP_OK;
}

llmstep_status llmstep_band_level_check(int level_pct, llmstep_error *err)
{
    if (!sim_band_level_valid(level_pct))
        return fail(err, SIM_EINVAL, "level %d%%: %s", level_pct, SIM_BAND_LEVEL_RULE);
    ok(err);
    return LLMSTEP_OK;
}

const char *llmstep_ttft_band_family(int ttft_queued)
{
    return sim_band_family_name(ttft_queued ? SIM_BAND_TTFT_QUEUED : SIM_BAND_TTFT);
}

const char *llmstep_step_band_family(const llmstep_group *groups, size_t n_groups)
{
    if (!groups || n_groups < 1)
        return "";
    int f = -1;
    for (size_t i = 0; i < n_groups; i++)
        f = sim_band_family_join(f, &(sim_group){groups[i].count, groups[i].new_tokens,
                                                 groups[i].context_tokens, groups[i].emits});
    return sim_band_family_name(f);
}

llmstep_status llmstep_capacity(const llmstep_deploy *d, int64_t context_tokens,
                                llmstep_capacity_result *out, llmstep_error *err)
{
    if (!d || !out)
        return fail(err, SIM_EINVAL, "capacity: NULL argument");
    if (context_tokens < 1 || context_tokens > (INT64_C(1) << 40))
        return fail(err, SIM_ERANGE, "context_tokens: expected 1 to 2^40, got %lld",
                    (long long)context_tokens);
    const sim_setup su = sim_deployment_setup(&d->d);
    sim_capacity c;
    sim_capacity_compute(&su, context_tokens, &c);
    *out = (llmstep_capacity_result){c.context_tokens, c.blocks_per_seq, c.max_seqs_by_kv,
                                     c.max_seqs_at_context, c.fits};
    ok(err);
    return LLMSTEP_OK;
}

llmstep_status llmstep_batch(llmstep_deploy *d, int64_t batch, int64_t prompt_tokens,
                             int64_t output_tokens, llmstep_batch_result *out, llmstep_error *err)
{
    if (!d || !out)
        return fail(err, SIM_EINVAL, "batch: NULL argument");
    if (batch < 1 || batch > SIM_BATCH_MAX_SEQS || prompt_tokens < 1 || output_tokens < 1 ||
        prompt_tokens > (INT64_C(1) << 30) || output_tokens > (INT64_C(1) << 30))
        return fail(err, SIM_ERANGE,
                    "batch: expected 1 to %d sequences of 1 to 2^30 prompt and output tokens",
                    SIM_BATCH_MAX_SEQS);
    /* With DP ranks the batch is spread over them and the busiest rank is timed (as the CLI's
     * latency --dp). */
    sim_batch b = {sim_dp_rank_share(&d->d.cfg, batch), prompt_tokens, output_tokens};
    sim_batch_result r;
    struct sim_err e;
    const sim_model *m = d->d.m;
    const sim_setup su = sim_deployment_setup(&d->d);
    sim_status s = sim_batch_simulate(&su, &b, d->work, &r, &e);
    if (s != SIM_OK)
        return fail(err, s, "%s on %s at TP %d: %s", m->id, d->d.hw->id, d->d.cfg.tp, e.msg);
    llmstep_status ls = check_finite("latency_s", r.latency_s, err);
    if (ls != LLMSTEP_OK)
        return ls;
    *out = (llmstep_batch_result){r.latency_s,   r.prefill_s,   r.decode_s,        r.roofline_sum_s,
                                  r.host_sum_s,  r.n_steps,     r.n_prefill_steps, r.n_decode_steps,
                                  r.preemptions, r.peak_kv_frac};
    ok(err);
    return LLMSTEP_OK;
}

void llmstep_workload_init(llmstep_workload *w)
{
    if (!w)
        return;
    memset(w, 0, sizeof(*w));
    w->arrival = LLMSTEP_ARRIVAL_CLOSED;
    w->concurrency = 1;
    w->rate_per_s = 1.0;
    w->burstiness = 1.0;
    w->range_ratio = -1.0; /* the default spread, as `llmstep serve` */
    w->prompt_tokens = 1024;
    w->output_tokens = 128;
    w->warmup_requests = -1;
}

/* The workload as the core takes it, with the CLI's ranges. */
static llmstep_status workload_of(const llmstep_workload *w, sim_workload_spec *spec,
                                  llmstep_error *err)
{
    if ((unsigned)w->arrival >= (unsigned)LLMSTEP_ARRIVAL_COUNT)
        return fail(err, SIM_EINVAL, "arrival: expected 0 (closed), 1 (poisson) or 2 (trace)");
    if (w->arrival == LLMSTEP_ARRIVAL_TRACE && !w->trace_path)
        return fail(err, SIM_EINVAL, "trace_path: required for a trace workload");
    if (w->concurrency < 1 || w->concurrency > (1 << 20))
        return fail(err, SIM_ERANGE, "concurrency: expected 1 to 2^20, got %lld",
                    (long long)w->concurrency);
    if (!(w->rate_per_s >= 1e-6 && w->rate_per_s <= 1e7))
        return fail(err, SIM_ERANGE, "rate_per_s: expected 1e-6 to 1e7, got %g", w->rate_per_s);
    if (!(w->burstiness >= 1e-3 && w->burstiness <= 1e3))
        return fail(err, SIM_ERANGE, "burstiness: expected 0.001 to 1000, got %g", w->burstiness);
    if (w->prompt_tokens < 1 || w->prompt_tokens > (1 << 24) || w->output_tokens < 1 ||
        w->output_tokens > (1 << 24))
        return fail(err, SIM_ERANGE, "prompt_tokens and output_tokens: expected 1 to 2^24");
    if (!(w->range_ratio == -1.0 || (w->range_ratio >= 0.0 && w->range_ratio < 1.0)))
        return fail(err, SIM_ERANGE, "range_ratio: expected -1 (default) or 0 <= r < 1, got %g",
                    w->range_ratio);
    if (w->num_requests < 0 || w->num_requests > SIM_WORKLOAD_MAX_REQUESTS ||
        w->warmup_requests < -1 || w->warmup_requests > SIM_WORKLOAD_MAX_REQUESTS)
        return fail(err, SIM_ERANGE, "num_requests and warmup_requests: expected up to 2^20");
    if (!(w->slo_ttft_s >= 0.0 && w->slo_ttft_s < 1e9 && w->slo_tpot_s >= 0.0 &&
          w->slo_tpot_s < 1e9))
        return fail(err, SIM_ERANGE, "slo_ttft_s and slo_tpot_s: expected >= 0 (0: none)");
    struct sim_err e;
    if (sim_workload_prefix_check(w->prefix_tokens, w->distinct_prompts,
                                  w->arrival == LLMSTEP_ARRIVAL_TRACE, &e) != SIM_OK)
        return fail_err(err, SIM_EINVAL, &e);
    *spec = (sim_workload_spec){
        (sim_arrival)w->arrival, w->concurrency,   w->rate_per_s,    w->burstiness,
        w->prompt_tokens,        w->output_tokens, w->range_ratio,   w->num_requests,
        w->warmup_requests,      w->seed,          w->prefix_tokens, w->distinct_prompts};
    return LLMSTEP_OK;
}

static llmstep_dist dist_of(sim_dist d) { return (llmstep_dist){d.mean, d.p50, d.p90, d.p99}; }

/* The library's serving result from the statistics of the measured requests and the run. */
static llmstep_serve_result serve_result_of(const sim_serve_stats *st, const sim_serve_result *res)
{
    return (llmstep_serve_result){dist_of(st->ttft_s),
                                  dist_of(st->tpot_s),
                                  dist_of(st->itl_s),
                                  dist_of(st->e2e_s),
                                  st->request_throughput_per_s,
                                  st->output_tokens_per_s,
                                  st->goodput_per_s,
                                  st->duration_s,
                                  res->peak_kv_frac,
                                  res->queue_peak,
                                  res->preemptions,
                                  st->n_requests,
                                  res->n_steps,
                                  dist_of(st->queue_s),
                                  sim_serve_ttft_queued(st),
                                  sim_serve_prefix_hit_frac(res),
                                  sim_serve_spec_accepted_frac(res)};
}

/* The deployment a serving call simulates (*out); the twin's failure when it did not open. */
static llmstep_status serving_of(const llmstep_deploy *d, const sim_deployment **out,
                                 llmstep_error *err)
{
    *out = d->have_srv ? &d->srv : &d->d;
    return d->have_srv && d->srv_status != SIM_OK ? fail_err(err, d->srv_status, &d->srv_err)
                                                  : LLMSTEP_OK;
}

/* Serves the checked workload spec (w for the trace and the SLOs) on d into out. */
static llmstep_status serve_spec(llmstep_deploy *d, const sim_workload_spec *spec,
                                 const llmstep_workload *w, llmstep_serve_result *out,
                                 llmstep_error *err)
{
    const sim_deployment *dd;
    llmstep_status ls = serving_of(d, &dd, err);
    if (ls != LLMSTEP_OK)
        return ls;
    const sim_model *m = dd->m;
    const sim_hw *hw = dd->hw;
    struct sim_err e;
    sim_served sv;
    sim_serve_result res = {0};
    sim_serve_stats st = {0};
    sim_status s = sim_served_prepare(&sv, spec, w->trace_path, 1, &e);
    const sim_setup su = sim_deployment_setup(dd);
    if (s == SIM_OK)
        s = sim_served_run(&su, &sv, NULL, NULL, &res, &e);
    if (s == SIM_OK)
        s = sim_served_stats(m, hw, &sv, &res, w->slo_ttft_s, w->slo_tpot_s, &st, &e);
    sim_served_free(&sv);
    if (s != SIM_OK)
        return fail_err(err, s, &e);
    ls = check_finite("ttft_s", st.ttft_s.mean + st.e2e_s.p99 + st.tpot_s.mean, err);
    if (ls != LLMSTEP_OK)
        return ls;
    *out = serve_result_of(&st, &res);
    return LLMSTEP_OK;
}

llmstep_status llmstep_serve_disagg(llmstep_deploy *prefill, llmstep_deploy *decode,
                                    int64_t n_prefill, int64_t n_decode, const llmstep_workload *w,
                                    llmstep_serve_result *out, double *kv_transfer_mean_s,
                                    llmstep_error *err)
{
    if (!prefill || !decode || !w || !out)
        return fail(err, SIM_EINVAL, "serve_disagg: NULL argument");
    sim_workload_spec spec;
    llmstep_status ls = workload_of(w, &spec, err);
    const sim_deployment *pd = NULL, *dd = NULL;
    if (ls == LLMSTEP_OK)
        ls = serving_of(prefill, &pd, err);
    if (ls == LLMSTEP_OK)
        ls = serving_of(decode, &dd, err);
    if (ls != LLMSTEP_OK)
        return ls;
    if (strcmp(pd->m->id, dd->m->id) != 0)
        return fail(err, SIM_EINVAL,
                    "serve_disagg: the prefill and decode deployments must be of one model");
    if (n_prefill < 1 || n_decode < 1 || n_prefill > SIM_DP_MAX || n_decode > SIM_DP_MAX)
        return fail(err, SIM_ERANGE, "n_prefill and n_decode: 1 to %d instances each", SIM_DP_MAX);
    struct sim_err e;
    sim_served sv;
    sim_serve_result pres, dres;
    sim_serve_stats st = {0};
    sim_disagg_link link;
    double xfer = 0.0;
    const sim_setup psu = sim_deployment_setup(pd), dsu = sim_deployment_setup(dd);
    const int64_t gpus = n_prefill * pd->cfg.tp + n_decode * dd->cfg.tp;
    sim_status s = sim_served_prepare(&sv, &spec, w->trace_path, 1, &e);
    if (s == SIM_OK)
        s = sim_disagg_link_of(pd->hw, dd->hw, gpus, &link, &e);
    if (s == SIM_OK)
        s = sim_disagg_run(&psu, &dsu, n_prefill, n_decode, &link, &sv, &pres, &dres, &xfer, &e);
    if (s == SIM_OK)
        s = sim_served_stats(dd->m, dd->hw, &sv, &dres, w->slo_ttft_s, w->slo_tpot_s, &st, &e);
    sim_served_free(&sv);
    if (s != SIM_OK)
        return fail_err(err, s, &e);
    *out = serve_result_of(&st, &dres);
    if (kv_transfer_mean_s)
        *kv_transfer_mean_s = xfer;
    ok(err);
    return LLMSTEP_OK;
}

llmstep_status llmstep_serve(llmstep_deploy *d, const llmstep_workload *w,
                             llmstep_serve_result *out, llmstep_error *err)
{
    if (!d || !w || !out)
        return fail(err, SIM_EINVAL, "serve: NULL argument");
    sim_workload_spec spec;
    llmstep_status ls = workload_of(w, &spec, err);
    if (ls == LLMSTEP_OK)
        ls = serve_spec(d, &spec, w, out, err);
    if (ls == LLMSTEP_OK)
        ok(err);
    return ls;
}

int llmstep_meets_slo(const llmstep_serve_result *r, double slo_ttft_s, double slo_tpot_s,
                      int percentile)
{
    if (!r)
        return 0;
    /* The rule and percentile of `llmstep sweep --kind serving` (sweep.h). */
    const sim_dist ttft = {r->ttft_s.mean, r->ttft_s.p50, r->ttft_s.p90, r->ttft_s.p99};
    const sim_dist tpot = {r->tpot_s.mean, r->tpot_s.p50, r->tpot_s.p90, r->tpot_s.p99};
    const sim_sweep_slo slo = {slo_tpot_s, slo_ttft_s, percentile};
    return sim_sweep_slo_holds(&slo, sim_sweep_dist_at(&ttft, percentile),
                               sim_sweep_dist_at(&tpot, percentile));
}

llmstep_status llmstep_serve_sweep(llmstep_deploy *d, const llmstep_workload *w,
                                   const double *loads, size_t n, int slo_percentile,
                                   llmstep_serve_result *out, int *meets_slo, llmstep_serve_cb cb,
                                   void *user, llmstep_error *err)
{
    if (!d || !w || (n > 0 && !loads))
        return fail(err, SIM_EINVAL, "serve_sweep: NULL argument");
    if (w->arrival == LLMSTEP_ARRIVAL_TRACE)
        return fail(err, SIM_EINVAL,
                    "serve_sweep: a trace fixes its load; sweep a closed or "
                    "Poisson workload");
    if (slo_percentile != 0 && slo_percentile != 50 && slo_percentile != 90 && slo_percentile != 99)
        return fail(err, SIM_ERANGE, "slo_percentile: expected 50, 90 or 99 (0: 90), got %d",
                    slo_percentile);
    for (size_t i = 0; i < n; i++) {
        llmstep_workload wi = *w;
        const double load = loads[i];
        if (w->arrival == LLMSTEP_ARRIVAL_CLOSED) {
            if (!(load >= 1.0 && load <= (double)(1 << 20) && load == floor(load)))
                return fail(err, SIM_ERANGE,
                            "loads[%zu]: a closed loop's concurrency is a whole number from 1 "
                            "to 2^20, got %g",
                            i, load);
            wi.concurrency = (int64_t)load;
        } else {
            wi.rate_per_s = load;
        }
        sim_workload_spec spec;
        llmstep_serve_result r;
        llmstep_status ls = workload_of(&wi, &spec, err);
        if (ls == LLMSTEP_OK)
            ls = serve_spec(d, &spec, &wi, &r, err);
        if (ls != LLMSTEP_OK)
            return ls;
        const int meets = llmstep_meets_slo(&r, w->slo_ttft_s, w->slo_tpot_s, slo_percentile);
        if (out)
            out[i] = r;
        if (meets_slo)
            meets_slo[i] = meets;
        if (cb && cb(user, i, load, &r, meets) != 0)
            break;
    }
    ok(err);
    return LLMSTEP_OK;
}

/* ---- Configuration sweeps ---------------------------------------------------------------- */

void llmstep_sweep_spec_init(llmstep_sweep_spec *spec)
{
    if (!spec)
        return;
    memset(spec, 0, sizeof(*spec));
    spec->kind = LLMSTEP_SWEEP_DECODE;
    spec->chunked_prefill = -1;
    spec->usage = -1;
    spec->async_scheduling = -1;
    spec->prefix_caching = -1;
    spec->range_ratio = -1.0; /* the default spread, as `llmstep sweep` */
}

size_t llmstep_sweep_default_axis(const char *axis, int64_t *out, size_t cap)
{
    const char *spec = !axis                     ? NULL
                       : strcmp(axis, "tp") == 0 ? SIM_SWEEP_DEFAULT_TP
                       : strcmp(axis, "batch") == 0 || strcmp(axis, "concurrency") == 0
                           ? SIM_SWEEP_DEFAULT_BATCH
                       : strcmp(axis, "context") == 0 ? SIM_SWEEP_DEFAULT_CONTEXT
                                                      : NULL;
    int64_t v[64];
    size_t n = 0;
    struct sim_err e;
    if (!spec || sim_sweep_parse_list(spec, 0, INT64_MAX, v, 64, &n, &e) != SIM_OK)
        return 0;
    for (size_t i = 0; out && i < n && i < cap; i++)
        out[i] = v[i];
    return n;
}

/* Loads per TP of a block. */
static size_t sweep_points_per_tp(const llmstep_sweep_spec *spec)
{
    switch (spec->kind) {
    case LLMSTEP_SWEEP_DECODE:
    case LLMSTEP_SWEEP_PREFILL:
        return spec->n_batch * spec->n_context;
    case LLMSTEP_SWEEP_OFFLINE:
        return spec->n_batch;
    case LLMSTEP_SWEEP_SERVING:
        return spec->n_rates > 0 ? spec->n_rates : spec->n_batch;
    case LLMSTEP_SWEEP_KIND_COUNT:
        break;
    }
    return 0;
}

size_t llmstep_sweep_size(const llmstep_sweep_spec *spec)
{
    if (!spec)
        return 0;
    return spec->n_models * spec->n_hws * (spec->n_pp ? spec->n_pp : 1) *
           (spec->n_dp ? spec->n_dp : 1) * (spec->n_ep ? spec->n_ep : 1) * spec->n_tp *
           sweep_points_per_tp(spec);
}

/* The fields sim_sweep_better compares. */
static sim_sweep_row rank_of(const llmstep_sweep_row *r)
{
    sim_sweep_row x = {0};
    x.kind = (sim_sweep_kind)r->kind;
    x.tokens_per_s_per_gpu = r->tokens_per_s_per_gpu;
    x.ttft_s = r->ttft_s;
    x.tpot_s = r->tpot_s;
    return x;
}

int llmstep_sweep_planning_seeds(void) { return SIM_SWEEP_PLANNING_SEEDS; }

long long llmstep_sweep_best(const llmstep_sweep_row *rows, size_t n)
{
    long long best = -1;
    sim_sweep_row b = {0};
    for (size_t i = 0; rows && i < n; i++) {
        if (!rows[i].meets_slo)
            continue;
        const sim_sweep_row x = rank_of(&rows[i]);
        if (best < 0 || sim_sweep_better(&x, &b)) {
            best = (long long)i;
            b = x;
        }
    }
    return best;
}

const char *llmstep_sweep_status_name(int status)
{
    return status >= 0 && status < SIM_SWEEP_STATUS_COUNT
               ? sim_sweep_status_name((sim_sweep_status)status)
               : "?";
}

/* An axis: n values (n >= 1 unless may_be_empty) in [min, max]. */
static llmstep_status check_axis(const char *name, const int64_t *v, size_t n, int64_t min,
                                 int64_t max, int may_be_empty, llmstep_error *err)
{
    if ((n == 0 && !may_be_empty) || n > 4096 || (n > 0 && !v))
        return fail(err, SIM_EINVAL, "%s: expected 1 to 4096 values", name);
    for (size_t i = 0; i < n; i++)
        if (v[i] < min || v[i] > max)
            return fail(err, SIM_ERANGE, "%s[%zu]: expected %lld to %lld, got %lld", name, i,
                        (long long)min, (long long)max, (long long)v[i]);
    return LLMSTEP_OK;
}

/* The checks `llmstep sweep` makes on its options, on a library spec. */
static llmstep_status sweep_check(const llmstep_sweep_spec *s, llmstep_error *err)
{
    if ((unsigned)s->kind >= (unsigned)LLMSTEP_SWEEP_KIND_COUNT)
        return fail(err, SIM_EINVAL, "kind: expected 0 (decode) to 3 (serving)");
    if (s->jobs < 0 || s->jobs > SIM_SWEEP_MAX_JOBS)
        return fail(err, SIM_EINVAL, "jobs: expected 0 to %d threads, got %d", SIM_SWEEP_MAX_JOBS,
                    s->jobs);
    if (s->n_models < 1 || s->n_models > SIM_SWEEP_MAX_NAMES || !s->models || s->n_hws < 1 ||
        s->n_hws > SIM_SWEEP_MAX_NAMES || !s->hws)
        return fail(err, SIM_EINVAL, "models and hws: expected 1 to %d names each",
                    SIM_SWEEP_MAX_NAMES);
    for (size_t i = 0; i < s->n_models; i++)
        if (!s->models[i])
            return fail(err, SIM_EINVAL, "models[%zu]: NULL", i);
    for (size_t i = 0; i < s->n_hws; i++)
        if (!s->hws[i])
            return fail(err, SIM_EINVAL, "hws[%zu]: NULL", i);
    const int serving = s->kind == LLMSTEP_SWEEP_SERVING;
    const int lengths = serving || s->kind == LLMSTEP_SWEEP_OFFLINE;
    const sim_sweep_kind kind = (sim_sweep_kind)s->kind;
    llmstep_status ls = check_axis("tp", s->tp, s->n_tp, 1, SIM_SWEEP_MAX_TP, 0, err);
    if (ls == LLMSTEP_OK)
        ls = check_axis("batch", s->batch, s->n_batch, 1, sim_sweep_batch_max(kind),
                        serving && s->n_rates > 0, err);
    if (ls == LLMSTEP_OK && !lengths)
        ls = check_axis("context", s->context, s->n_context, sim_sweep_context_min(kind),
                        SIM_SWEEP_MAX_CONTEXT, 0, err);
    if (ls == LLMSTEP_OK)
        ls = check_axis("pp", s->pp, s->n_pp, 1, SIM_PP_MAX, 1, err);
    if (ls == LLMSTEP_OK)
        ls = check_axis("dp", s->dp, s->n_dp, 1, SIM_DP_MAX, 1, err);
    if (ls == LLMSTEP_OK && (s->n_ep > 2 || (s->n_ep > 0 && !s->eps)))
        return fail(err, SIM_EINVAL, "eps: expected 0 to 2 values, each 0 or 1");
    for (size_t i = 0; ls == LLMSTEP_OK && i < s->n_ep; i++)
        if (s->eps[i] != 0 && s->eps[i] != 1)
            return fail(err, SIM_EINVAL, "eps[%zu]: expected 0 or 1, got %d", i, s->eps[i]);
    if (ls == LLMSTEP_OK && (s->n_seeds < 0 || s->n_seeds > 100))
        return fail(err, SIM_ERANGE, "n_seeds: expected 0 to 100, got %lld", (long long)s->n_seeds);
    if (ls == LLMSTEP_OK && (s->ep < 0 || s->ep > 1))
        return fail(err, SIM_EINVAL, "ep: expected 0 or 1, got %d", s->ep);
    if (ls != LLMSTEP_OK)
        return ls;
    if (lengths != (s->prompt_tokens != 0 || s->output_tokens != 0) ||
        (lengths && (s->prompt_tokens < 1 || s->prompt_tokens > (1 << 24) || s->output_tokens < 1 ||
                     s->output_tokens > (1 << 24))))
        return fail(err, SIM_EINVAL,
                    "prompt_tokens and output_tokens: 1 to 2^24 for offline and serving sweeps, "
                    "0 for decode and prefill (which take context)");
    if (s->n_rates > 0 && (!serving || !s->rates || s->n_rates > 4096))
        return fail(err, SIM_EINVAL, "rates: 1 to 4096 values, for serving sweeps");
    for (size_t i = 0; i < s->n_rates; i++)
        if (!(s->rates[i] >= 1e-6 && s->rates[i] <= 1e7))
            return fail(err, SIM_ERANGE, "rates[%zu]: expected 1e-6 to 1e7, got %g", i,
                        s->rates[i]);
    if (s->num_requests < 0 || s->num_requests > SIM_WORKLOAD_MAX_REQUESTS ||
        !(s->range_ratio == -1.0 || (s->range_ratio >= 0.0 && s->range_ratio < 1.0)) ||
        !(s->burstiness == 0.0 || (s->burstiness >= 1e-3 && s->burstiness <= 1e3)))
        return fail(err, SIM_ERANGE,
                    "num_requests 0 to 2^20, range_ratio -1 (default) or in [0, 1), burstiness 0 "
                    "or 0.001 to "
                    "1000");
    if (s->slo_percentile != 0 && s->slo_percentile != 50 && s->slo_percentile != 90 &&
        s->slo_percentile != 99)
        return fail(err, SIM_ERANGE, "slo_percentile: expected 50, 90 or 99 (0: 90), got %d",
                    s->slo_percentile);
    struct sim_err e;
    if (sim_workload_prefix_check(s->prefix_tokens, s->distinct_prompts, 0, &e) != SIM_OK)
        return fail_err(err, SIM_EINVAL, &e);
    sim_spec sp;
    const llmstep_status lsp = spec_of(s->spec_method, s->spec_tokens, s->spec_acceptance,
                                       s->n_spec_acceptance, s->spec_model, &sp, err);
    if (lsp != LLMSTEP_OK)
        return lsp;
    if ((sp.method != SIM_SPEC_NONE || s->prefix_tokens || s->distinct_prompts) && !serving)
        return fail(err, SIM_EINVAL,
                    "spec_method, prefix_tokens and distinct_prompts: serving sweeps only");
    if (!isfinite(s->slo_ttft_s) || !isfinite(s->slo_tpot_s) || !isfinite(s->gpu_hour_usd))
        return fail(err, SIM_ERANGE, "slo_ttft_s, slo_tpot_s and gpu_hour_usd: finite numbers");
    sim_dtype dt = SIM_DTYPE_BF16, kdt = SIM_DTYPE_BF16;
    if ((s->dtype && sim_dtype_parse(s->dtype, &dt) != SIM_OK) ||
        (s->kv_dtype && sim_dtype_parse(s->kv_dtype, &kdt) != SIM_OK) || dt == SIM_DTYPE_FP32 ||
        kdt == SIM_DTYPE_FP32)
        return fail(err, SIM_EINVAL, "dtype and kv_dtype: expected fp16, bf16 or fp8");
    return LLMSTEP_OK;
}

/* The sink that turns the driver's rows into the library's. */
typedef struct sweep_out {
    llmstep_sweep_row *rows;
    size_t cap, n;
    llmstep_sweep_cb cb;
    void *user;
} sweep_out;

static int sweep_row(void *ctx, const sim_sweep_block *b, const sim_sweep_row *r)
{
    sweep_out *o = ctx;
    const llmstep_sweep_row row = {
        .model_index = (int32_t)b->model_index,
        .hw_index = (int32_t)b->hw_index,
        .kind = (int32_t)r->kind,
        .status = (int32_t)r->status,
        .fits = r->status == SIM_SWEEP_OK,
        .meets_slo = r->meets_slo,
        .calibrated = b->calib_path != NULL,
        .bound = (int32_t)r->bound,
        .alpha = b->alpha,
        .beta_s = b->beta_s,
        .tp = r->tp,
        .batch = r->batch,
        .context_tokens = r->context_tokens,
        .prompt_tokens = r->prompt_tokens,
        .output_tokens = r->output_tokens,
        .concurrency = r->concurrency,
        .rate_per_s = r->rate_per_s,
        .time_s = r->time_s,
        .tpot_s = r->tpot_s,
        .ttft_s = r->ttft_s,
        .tokens_per_s = r->tokens_per_s,
        .tokens_per_s_per_gpu = r->tokens_per_s_per_gpu,
        .cost_per_mtok_usd = r->cost_per_mtok_usd,
        .n_requests = r->n_requests,
        .preemptions = r->preemptions,
        .requests_per_s = r->requests_per_s,
        .kv_peak_frac = r->kv_peak_frac,
        .ttft_dist_s = dist_of(r->ttft_dist_s),
        .tpot_dist_s = dist_of(r->tpot_dist_s),
        .e2e_dist_s = dist_of(r->e2e_dist_s),
        .pp = r->pp,
        .dp = r->dp,
        .ep = r->ep,
        .n_seeds = r->n_seeds,
        .ttft_spread_s = r->ttft_spread_s,
        .tpot_spread_s = r->tpot_spread_s,
        .queue_mean_s = r->queue_mean_s,
        .ttft_queued = r->ttft_queued,
        .prefix_hit_frac = r->prefix_hit_frac,
    };
    if (o->rows && o->n < o->cap)
        o->rows[o->n] = row;
    o->n++;
    return o->cb ? o->cb(o->user, &row) : 0;
}

llmstep_status llmstep_sweep_check(const llmstep_sweep_spec *spec, llmstep_error *err)
{
    if (!spec)
        return fail(err, SIM_EINVAL, "sweep: NULL argument");
    const llmstep_status ls = sweep_check(spec, err);
    if (ls == LLMSTEP_OK)
        ok(err);
    return ls;
}

llmstep_status llmstep_sweep(llmstep_ctx *ctx, const llmstep_sweep_spec *spec,
                             llmstep_sweep_row *rows, size_t cap, size_t *n_rows,
                             llmstep_sweep_cb cb, void *user, llmstep_error *err)
{
    if (n_rows)
        *n_rows = 0;
    if (!ctx || !spec)
        return fail(err, SIM_EINVAL, "sweep: NULL argument");
    llmstep_status ls = sweep_check(spec, err);
    if (ls != LLMSTEP_OK)
        return ls;
    sim_sweep_opts o;
    sim_sweep_opts_init(&o);
    o.engine = spec->engine;
    for (size_t i = 0; i < spec->n_models; i++)
        o.models[i] = spec->models[i];
    o.n_models = spec->n_models;
    for (size_t i = 0; i < spec->n_hws; i++)
        o.hws[i] = spec->hws[i];
    o.n_hws = spec->n_hws;
    static const int64_t none = 0;
    o.axes = (sim_sweep_axes){spec->tp,
                              spec->n_tp,
                              spec->n_batch ? spec->batch : &none,
                              spec->n_batch,
                              spec->n_context ? spec->context : &none,
                              spec->n_context};
    o.kind = (sim_sweep_kind)spec->kind;
    o.prompt_tokens = spec->prompt_tokens > 0 ? spec->prompt_tokens : -1;
    o.output_tokens = spec->output_tokens > 0 ? spec->output_tokens : -1;
    o.rates = spec->rates;
    o.n_rates = spec->n_rates;
    o.num_requests = spec->num_requests;
    o.range_ratio = spec->range_ratio;
    o.burstiness = spec->burstiness;
    o.seed = spec->seed;
    o.prefix_tokens = spec->prefix_tokens;
    o.distinct_prompts = spec->distinct_prompts;
    ls = spec_of(spec->spec_method, spec->spec_tokens, spec->spec_acceptance,
                 spec->n_spec_acceptance, spec->spec_model, &o.spec, err);
    if (ls != LLMSTEP_OK)
        return ls;
    o.spec_model = spec->spec_model;
    o.calibration = spec->calibration;
    o.dtype = spec->dtype;
    o.kv_dtype = spec->kv_dtype;
    o.host_time = !spec->no_host;
    o.slo = (sim_sweep_slo){spec->slo_tpot_s, spec->slo_ttft_s,
                            spec->slo_percentile ? spec->slo_percentile : 90};
    o.gpu_hour_usd = spec->gpu_hour_usd;
    o.pp = spec->pp;
    o.n_pp = spec->n_pp;
    o.dp = spec->dp;
    o.n_dp = spec->n_dp;
    static const int ep_on = 1;
    o.eps = spec->n_ep > 0 ? spec->eps : spec->ep ? &ep_on : NULL;
    o.n_ep = spec->n_ep > 0 ? spec->n_ep : spec->ep ? 1 : 0;
    o.n_seeds = spec->n_seeds;
    o.jobs = spec->jobs;
    const sched_fields sf = SCHED_FIELDS_OF(spec);
    if ((ls = sched_of(&sf, &o.sched, err)) != LLMSTEP_OK)
        return ls;
    sweep_out out = {rows, rows ? cap : 0, 0, cb, user};
    const sim_sweep_sink sink = {&out, NULL, sweep_row, NULL};
    struct sim_err e;
    int stopped = 0;
    sim_status st = sim_sweep_drive(ctx->cache, &o, &sink, &stopped, &e);
    if (n_rows)
        *n_rows = out.n;
    if (st != SIM_OK)
        return fail_err(err, st, &e);
    ok(err);
    return LLMSTEP_OK;
}

/* ---- Measurements ----------------------------------------------------------------------- */

#define MEAS_MAX_FILES 64

void llmstep_meas_spec_init(llmstep_meas_spec *spec)
{
    if (!spec)
        return;
    memset(spec, 0, sizeof(*spec));
    sim_fit_opts f;
    sim_fit_opts_default(&f);
    spec->alpha_min = f.alpha_min;
    spec->alpha_max = f.alpha_max;
    spec->beta_min_s = f.beta_min_s;
    spec->beta_max_s = f.beta_max_s;
}

/* The selected rows of spec's files, and the prediction options. */
static llmstep_status meas_open(const llmstep_meas_spec *spec, sim_meas_set *set, sim_meas_opts *o,
                                llmstep_error *err)
{
    if (!spec || (spec->n_files && !spec->files) || spec->n_files > MEAS_MAX_FILES ||
        (spec->n_files == 0 && !spec->rows_jsonl))
        return fail(err, SIM_EINVAL, "measurements: expected rows_jsonl or 1 to %d files",
                    MEAS_MAX_FILES);
    if (spec->n_select > SIM_MEAS_MAX_FILTERS || spec->n_exclude > SIM_MEAS_MAX_FILTERS ||
        (spec->n_select && !spec->select) || (spec->n_exclude && !spec->exclude))
        return fail(err, SIM_EINVAL, "select/exclude: at most %d terms each", SIM_MEAS_MAX_FILTERS);
    *o = (sim_meas_opts){0};
    o->engine = spec->engine ? spec->engine : SIM_MEAS_DEFAULT_ENGINE;
    o->engine_given = spec->engine != NULL;
    o->mode = spec->roofline_step ? SIM_ROOFLINE_STEP : SIM_ROOFLINE_OP;
    o->gemm = spec->gemm_tile_wave ? SIM_GEMM_TILE_WAVE : SIM_GEMM_FLAT;
    o->no_host = spec->no_host != 0;
    sim_fit_opts_default(&o->fit);
    o->fit.weight = spec->weighting_absolute ? SIM_FIT_ABSOLUTE : SIM_FIT_RELATIVE;
    o->fit.alpha_min = spec->alpha_min;
    o->fit.alpha_max = spec->alpha_max;
    o->fit.beta_min_s = spec->beta_min_s;
    o->fit.beta_max_s = spec->beta_max_s;
    if (!(o->fit.alpha_min <= o->fit.alpha_max && o->fit.beta_min_s <= o->fit.beta_max_s &&
          isfinite(o->fit.alpha_min) && isfinite(o->fit.alpha_max) && isfinite(o->fit.beta_min_s) &&
          isfinite(o->fit.beta_max_s) && o->fit.alpha_min >= 0.0 && o->fit.beta_min_s >= 0.0 &&
          o->fit.beta_max_s <= SIM_BETA_MAX_S))
        return fail(err, SIM_ERANGE,
                    "alpha_min <= alpha_max and beta_min_s <= beta_max_s, "
                    "finite, alpha_min >= 0, beta_s bounds in 0 to %g s",
                    SIM_BETA_MAX_S);
    struct sim_err e;
    sim_sched_rule rule = SIM_SCHED_RULE_DEFAULTS;
    if (spec->scheduler_rule && sim_sched_rule_parse(spec->scheduler_rule, &rule, &e) != SIM_OK)
        return fail(err, SIM_EINVAL, "scheduler_rule: %s", e.msg);
    int bad_term;
    sim_status st = SIM_OK;
    if (spec->rows_jsonl)
        st = sim_meas_load_text("<rows>", spec->rows_jsonl, spec->rows_jsonl_len, set, &e);
    if (st == SIM_OK)
        st = sim_meas_load_selected(spec->files, spec->n_files, spec->select, spec->n_select,
                                    spec->exclude, spec->n_exclude, "", set, &bad_term, &e);
    if (st != SIM_OK)
        return fail_err(err, st, &e);
    sim_meas_apply_sched_rule(set, rule);
    /* Rows whose run.assumed names a field the prediction uses are neither fitted nor in the
     * errors, as calibrate and validate do by default (MEASUREMENTS.md, "run"). */
    sim_meas_set aside;
    sim_meas_set_init(&aside);
    st = sim_meas_set_aside_assumed(set, &aside, NULL);
    llmstep_status ls = LLMSTEP_OK;
    if (st != SIM_OK)
        ls = fail(err, st, "out of memory");
    else if (set->n == 0)
        ls = fail(err, SIM_EINVAL,
                  "every selected row has run.assumed naming a field the prediction uses "
                  "(%s:%d: %s: %s)",
                  aside.rows[0].file, aside.rows[0].line, aside.rows[0].id, aside.rows[0].assumed);
    sim_meas_set_free(&aside);
    return ls;
}

static llmstep_status meas_status(sim_status st, const struct sim_err *e, llmstep_error *err)
{
    return st == SIM_OK ? LLMSTEP_OK : fail_err(err, st, e);
}

/* Errors of pred against the rows into out, and the first cap rows into the arrays. */
static llmstep_status report(const sim_meas_set *set, const double *pred, double *predicted_s,
                             double *measured_s, size_t cap, llmstep_validation *out,
                             llmstep_error *err)
{
    double *meas = malloc(set->n * sizeof(*meas)), *scratch = malloc(set->n * sizeof(*scratch));
    if (!meas || !scratch) {
        free(meas);
        free(scratch);
        return fail(err, SIM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < set->n; i++)
        meas[i] = set->rows[i].measured_s;
    sim_metrics mt;
    sim_status st = sim_metrics_compute(pred, meas, set->n, scratch, &mt);
    for (size_t i = 0; i < set->n && i < cap; i++) {
        if (predicted_s)
            predicted_s[i] = pred[i];
        if (measured_s)
            measured_s[i] = meas[i];
    }
    free(meas);
    free(scratch);
    if (st != SIM_OK || !isfinite(mt.mape_pct) || !isfinite(mt.max_ape_pct))
        return fail(err, SIM_EFIT, "the errors are not finite numbers");
    out->n_rows = (int64_t)mt.n;
    out->mape_pct = mt.mape_pct;
    out->median_ape_pct = mt.median_ape_pct;
    out->max_ape_pct = mt.max_ape_pct;
    out->r2 = mt.r2;
    return LLMSTEP_OK;
}

/* validate (field NULL) or holdout (field set). */
static llmstep_status validate(llmstep_ctx *ctx, const llmstep_meas_spec *spec,
                               const char *calibration, const char *field, double *predicted_s,
                               double *measured_s, size_t cap, llmstep_validation *out,
                               llmstep_error *err)
{
    if (!ctx || !out)
        return fail(err, SIM_EINVAL, "validate: NULL argument");
    sim_meas_set set;
    sim_meas_set_init(&set);
    sim_meas_opts o;
    sim_meas_pred mp = {0};
    double *pred = NULL;
    double alpha = 1.0, beta_s = 0.0, ab_alpha = 1.0, ab_beta_s = 0.0;
    struct sim_err e;
    llmstep_status ls = meas_open(spec, &set, &o, err);
    if (ls == LLMSTEP_OK && calibration) {
        const sim_calib *cal = NULL;
        sim_status st = sim_meas_check_one_hw(&set, "validate", &e);
        if (st == SIM_OK)
            st = sim_cache_calib(ctx->cache, calibration, &cal, NULL, &e);
        ls = meas_status(st, &e, err);
        if (ls == LLMSTEP_OK && strcmp(cal->hardware, set.rows[0].hardware) != 0)
            ls = fail(err, SIM_EINVAL, "%s: hardware: calibration is for '%s', not '%s'",
                      calibration, cal->hardware, set.rows[0].hardware);
        if (ls == LLMSTEP_OK) {
            alpha = cal->alpha;
            beta_s = cal->beta_s;
            ab_alpha = cal->ab_alpha;
            ab_beta_s = cal->ab_beta_s;
        }
        /* Its fitted figures replace the profile's. */
        const sim_hw *hw = NULL;
        if (ls == LLMSTEP_OK && cal->n_figures > 0) {
            st = sim_cache_hw(ctx->cache, set.rows[0].hardware, &hw, NULL, &e);
            if (st == SIM_OK)
                st = sim_cache_hw_calibrated(ctx->cache, hw, cal, calibration, &hw, &e);
            ls = meas_status(st, &e, err);
            o.hw = hw;
            o.domain = cal->fig_domain; /* other models: the profile, alpha_beta_only */
        }
    }
    if (ls == LLMSTEP_OK)
        ls = meas_status(sim_meas_predict_all(&o, &set, ctx->cache, &mp, &e), &e, err);
    if (ls == LLMSTEP_OK && !(pred = malloc(set.n * sizeof(*pred))))
        ls = fail(err, SIM_ENOMEM, "out of memory");
    for (size_t i = 0; ls == LLMSTEP_OK && i < set.n; i++)
        ls = meas_status(sim_meas_predict_row(&mp, i, mp.other[i] ? ab_alpha : alpha,
                                              mp.other[i] ? ab_beta_s : beta_s, &pred[i], &e),
                         &e, err);
    if (ls == LLMSTEP_OK && field) {
        sim_meas_fold fold;
        int n_folds = 0;
        ls = meas_status(sim_meas_holdout(&o, &mp, field, pred, NULL, &fold, 1, &n_folds, &e), &e,
                         err);
    }
    if (ls == LLMSTEP_OK)
        ls = report(&set, pred, predicted_s, measured_s, cap, out, err);
    if (ls == LLMSTEP_OK) {
        out->alpha = alpha;
        out->beta_s = beta_s;
        ok(err);
    }
    free(pred);
    sim_meas_pred_free(&mp);
    sim_meas_set_free(&set);
    return ls;
}

llmstep_status llmstep_validate(llmstep_ctx *ctx, const llmstep_meas_spec *spec,
                                const char *calibration, double *predicted_s, double *measured_s,
                                size_t cap, llmstep_validation *out, llmstep_error *err)
{
    return validate(ctx, spec, calibration, NULL, predicted_s, measured_s, cap, out, err);
}

llmstep_status llmstep_holdout(llmstep_ctx *ctx, const llmstep_meas_spec *spec, const char *field,
                               double *predicted_s, double *measured_s, size_t cap,
                               llmstep_validation *out, llmstep_error *err)
{
    if (!field)
        return fail(err, SIM_EINVAL, "holdout: field is required");
    return validate(ctx, spec, NULL, field, predicted_s, measured_s, cap, out, err);
}

/* Fits, and writes the calibration file to path when it is not NULL. */
static llmstep_status calibrate(llmstep_ctx *ctx, const llmstep_meas_spec *spec, const char *path,
                                llmstep_fit *out, llmstep_error *err)
{
    if (!ctx || !out)
        return fail(err, SIM_EINVAL, "calibrate: NULL argument");
    sim_meas_set set;
    sim_meas_set_init(&set);
    sim_meas_opts o;
    sim_meas_pred mp = {0};
    struct sim_err e;
    llmstep_status ls = meas_open(spec, &set, &o, err);
    if (ls == LLMSTEP_OK)
        ls = meas_status(sim_meas_check_one_hw(&set, "calibrate", &e), &e, err);
    if (ls == LLMSTEP_OK && set.n < 2)
        ls = fail(err, SIM_EINVAL, "calibrate: %zu row selected; alpha and beta need at least 2",
                  set.n);
    const char *engine = ls == LLMSTEP_OK ? sim_meas_row_engine(&o, &set.rows[0]) : "";
    for (size_t i = 1; ls == LLMSTEP_OK && i < set.n; i++)
        if (strcmp(sim_meas_row_engine(&o, &set.rows[i]), engine) != 0)
            ls = fail(err, SIM_EINVAL,
                      "calibrate: rows are predicted with different engines (%s at %s:%d, %s at "
                      "%s:%d); select rows of one engine version or name the engine",
                      engine, set.rows[0].file, set.rows[0].line,
                      sim_meas_row_engine(&o, &set.rows[i]), set.rows[i].file, set.rows[i].line);
    if (ls == LLMSTEP_OK)
        ls = meas_status(sim_meas_predict_all(&o, &set, ctx->cache, &mp, &e), &e, err);
    sim_fit_result res;
    if (ls == LLMSTEP_OK)
        ls = meas_status(sim_meas_fit(&o, &mp, NULL, "calibrate", &res, &e), &e, err);
    sim_calib_band band;
    char why[256];
    if (ls == LLMSTEP_OK && path)
        ls = meas_status(sim_meas_band_compute(&o, &mp, &band, why, sizeof(why), &e), &e, err);
    if (ls == LLMSTEP_OK && path) /* nor a trace a row names, nor a file predicting loaded */
        ls = meas_status(
            sim_meas_output_clear(&mp, path, spec->files, spec->n_files, "calibrate", "--out", &e),
            &e, err);
    if (ls == LLMSTEP_OK && path) {
        const sim_meas_origin from = {spec->files,
                                      spec->n_files,
                                      spec->select,
                                      spec->n_select,
                                      spec->exclude,
                                      spec->n_exclude,
                                      "llmstep_calibrate_write (libllmstep " LLMSTEP_VERSION ")",
                                      spec->scheduler_rule
                                          ? spec->scheduler_rule
                                          : sim_sched_rule_name(SIM_SCHED_RULE_DEFAULTS),
                                      NULL};
        ls = meas_status(
            sim_meas_calib_write(path, &o, &from, set.rows[0].hardware, engine, &res, &band, &e),
            &e, err);
    }
    if (ls == LLMSTEP_OK) {
        memset(out, 0, sizeof(*out));
        snprintf(out->hardware, sizeof(out->hardware), "%s", set.rows[0].hardware);
        snprintf(out->engine, sizeof(out->engine), "%s", o.no_host ? "none" : engine);
        out->alpha = res.alpha;
        out->beta_s = res.beta_s;
        out->alpha_stderr = res.alpha_stderr;
        out->beta_stderr_s = res.beta_stderr_s;
        out->alpha_at_bound = res.alpha_at_bound;
        out->beta_at_bound = res.beta_at_bound;
        out->n_rows = (int64_t)res.n_rows;
        out->fit =
            (llmstep_validation){(int64_t)res.fit.n,  res.fit.mape_pct, res.fit.median_ape_pct,
                                 res.fit.max_ape_pct, res.fit.r2,       res.alpha,
                                 res.beta_s};
        ok(err);
    }
    sim_meas_pred_free(&mp);
    sim_meas_set_free(&set);
    return ls;
}

llmstep_status llmstep_calibrate(llmstep_ctx *ctx, const llmstep_meas_spec *spec, llmstep_fit *out,
                                 llmstep_error *err)
{
    return calibrate(ctx, spec, NULL, out, err);
}

llmstep_status llmstep_calibrate_write(llmstep_ctx *ctx, const llmstep_meas_spec *spec,
                                       const char *path, llmstep_fit *out, llmstep_error *err)
{
    if (!path)
        return fail(err, SIM_EINVAL, "calibrate: path is required");
    /* As the CLI's --out: the file must not be one of the measurements it is fitted on. */
    for (size_t i = 0; spec && spec->files && i < spec->n_files; i++)
        if (spec->files[i] && sim_path_same(path, spec->files[i]))
            return fail(err, SIM_EINVAL,
                        "calibrate: --out %s is the measurement file %s; it would be replaced",
                        path, spec->files[i]);
    /* Nor the engine, models and profiles it loads, nor the rows' traces: checked once they
     * are known, before writing (sim_meas_output_clear in calibrate). */
    return calibrate(ctx, spec, path, out, err);
}
