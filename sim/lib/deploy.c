/* deploy.c - checks, defaults and served workloads shared by the library and the CLI
 * (see deploy.h). */
#define _GNU_SOURCE /* dladdr */
#include "deploy.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "capacity.h"
#include "paths.h"
#include "pipeline.h"
#include "trace_json.h"
#include "units.h"

/* share/llmstep next to the object holding this code (<prefix>/bin, <prefix>/lib or
 * <prefix>/lib/<multiarch>), when it has models/. */
static int installed_data_dir(char *out, size_t cap)
{
    Dl_info info;
    if (!dladdr((void *)(size_t)&sim_deploy_find_data_dir, &info) || !info.dli_fname)
        return 0;
    char self[PATH_MAX];
    if (!realpath(info.dli_fname, self))
        return 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    static const char *const up[] = {"/..", "/../.."};
    for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
        char probe[PATH_MAX + 64];
        struct stat sb;
        int n = snprintf(probe, sizeof(probe), "%s%s/share/llmstep/models", self, up[i]);
        if (n < 0 || (size_t)n >= sizeof(probe) || stat(probe, &sb) != 0 || !S_ISDIR(sb.st_mode))
            continue;
        n = snprintf(out, cap, "%s%s/share/llmstep", self, up[i]);
        return n > 0 && (size_t)n < cap;
    }
    return 0;
}

void sim_deploy_find_data_dir(char *out, size_t cap)
{
    const char *d = getenv("LLMSTEP_DATA_DIR");
    if (d && *d) {
        snprintf(out, cap, "%s", d);
        return;
    }
    if (installed_data_dir(out, cap))
        return;
#ifdef LLMSTEP_INSTALL_DATA_DIR
    /* A program linked statically, elsewhere than <prefix>/bin: the configured prefix. */
    struct stat sb;
    if (stat(LLMSTEP_INSTALL_DATA_DIR "/models", &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(out, cap, "%s", LLMSTEP_INSTALL_DATA_DIR);
        return;
    }
#endif
#ifdef LLMSTEP_DATA_DIR
    snprintf(out, cap, "%s", LLMSTEP_DATA_DIR);
#else
    snprintf(out, cap, ".");
#endif
}

sim_status sim_deploy_resolve_dtypes(const sim_model *m, const char *dtype_s, const char *kv_s,
                                     const char *who, sim_run_cfg *cfg, struct sim_err *err)
{
    /* vLLM's own spellings: "auto" is the default; fp8_e4m3 and fp8_e5m2 KV caches are fp8
     * (both one byte per element). */
    if (dtype_s && strcmp(dtype_s, "auto") == 0)
        dtype_s = NULL;
    if (kv_s && strcmp(kv_s, "auto") == 0)
        kv_s = NULL;
    if (kv_s && (strcmp(kv_s, "fp8_e4m3") == 0 || strcmp(kv_s, "fp8_e5m2") == 0))
        kv_s = "fp8";
    const sim_dtype d16 = sim_model_dtype16(m);
    sim_dtype d = d16;
    if (dtype_s && sim_dtype_parse(dtype_s, &d) != SIM_OK) {
        sim_errf(err, "%s--dtype '%s': expected fp16, bf16 or fp8", who, dtype_s);
        return SIM_EINVAL;
    }
    if (d == SIM_DTYPE_FP32) {
        sim_errf(err, "%sfp32 inference is not modelled; use fp16, bf16 or fp8", who);
        return SIM_EINVAL;
    }
    const sim_quant *q = &m->quant;
    if (q->method != SIM_QUANT_NONE && d == SIM_DTYPE_FP8) {
        /* A quantized checkpoint brings its own weight format. --dtype fp8 agrees with an
         * 8-bit float one (measurement rows spell fp8 checkpoints that way) and otherwise
         * conflicts; --dtype fp16/bf16 sets the activation type, as vLLM's --dtype does. */
        int fp8_ckpt =
            q->weight_bits == 8 && (q->math == SIM_GEMM_MATH_FP8 || q->method == SIM_QUANT_FP8);
        if (!fp8_ckpt) {
            sim_errf(err,
                     "%s--dtype fp8: %s is already quantized (%s, from its "
                     "quantization_config); --dtype only sets its 16-bit activation type "
                     "(fp16 or bf16)",
                     who, m->id, q->name);
            return SIM_EINVAL;
        }
        d = d16;
    }
    cfg->dtype = d;
    /* vLLM's kv_cache_dtype "auto": the 16-bit type the model runs in, also under fp8 weights;
     * an fp8 KV cache only when asked for. */
    cfg->kv_dtype = d == SIM_DTYPE_FP8 ? d16 : d;
    if (kv_s && sim_dtype_parse(kv_s, &cfg->kv_dtype) != SIM_OK) {
        sim_errf(err, "%s--kv-dtype '%s': expected fp16, bf16 or fp8", who, kv_s);
        return SIM_EINVAL;
    }
    if (cfg->kv_dtype == SIM_DTYPE_FP32) {
        sim_errf(err, "%sfp32 inference is not modelled; use fp16, bf16 or fp8", who);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

const char *sim_deploy_weight_format(const sim_model *m, const sim_run_cfg *cfg)
{
    return m->quant.method != SIM_QUANT_NONE ? m->quant.name : sim_dtype_name(cfg->dtype);
}

sim_status sim_deploy_check_tp_node(const sim_hw *hw, int64_t tp, const char *who,
                                    struct sim_err *err)
{
    const double n = hw->v[SIM_HWF_N_GPUS_PER_NODE];
    /* A TP group over several nodes takes whole nodes (docs/model.md, "Communication across
     * nodes"): its all-reduce is hierarchical, g GPUs in each of tp / g nodes. */
    if ((double)tp > n && fmod((double)tp, n) != 0.0) {
        sim_errf(err,
                 "%sTP %lld spans %s nodes of %.0f GPUs but is not a multiple of %.0f: a "
                 "tensor-parallel group across nodes takes whole nodes",
                 who, (long long)tp, hw->id, n, n);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

sim_status sim_deploy_check_layout(const sim_model *m, const sim_hw *hw, int64_t tp, int64_t pp,
                                   const char *who, struct sim_err *err)
{
    sim_status st = sim_deploy_check_tp_node(hw, tp, who, err);
    if (st != SIM_OK)
        return st;
    struct sim_err e2;
    if (pp < 1 || pp > SIM_PP_MAX || sim_pp_check(m, (int)pp, &e2) != SIM_OK) {
        if (pp < 1 || pp > SIM_PP_MAX)
            snprintf(e2.msg, sizeof(e2.msg), "--pp %lld: expected 1 to %d pipeline stages",
                     (long long)pp, SIM_PP_MAX);
        sim_errf(err, "%s%s", who, e2.msg);
        return SIM_EINVAL;
    }
    /* A pipeline stage's TP group sits in one node or takes whole nodes: with tp < g the
     * stages of a node must tile it (rank = stage x tp + tp_rank). */
    const double n = hw->v[SIM_HWF_N_GPUS_PER_NODE];
    if (pp > 1 && (double)tp < n && fmod(n, (double)tp) != 0.0) {
        sim_errf(err,
                 "%sTP %lld x PP %lld: TP must divide the %.0f GPUs of one %s node so that "
                 "no stage's TP group straddles two nodes",
                 who, (long long)tp, (long long)pp, n, hw->id);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

/* Whether the engine starts with su's inputs but the run configuration run (when not NULL)
 * and the scheduler settings s (when not NULL). */
static int fits_with(const sim_setup *su, const sim_run_cfg *run, const sim_sched_resolved *s)
{
    sim_setup at = *su;
    if (run)
        at.run = run;
    if (s)
        at.sched = s;
    sim_memory mem;
    sim_memory_compute(&at, &mem);
    return mem.fits;
}

int64_t sim_deploy_smallest_tp(const sim_setup *su)
{
    const sim_model *m = su->model;
    const sim_hw *hw = su->hw;
    for (int64_t tp = 1; (double)tp <= hw->v[SIM_HWF_N_GPUS_PER_NODE]; tp *= 2) {
        struct sim_err err;
        if (sim_model_check_tp(m, (int)tp, &err) != SIM_OK)
            continue;
        sim_run_cfg c = *su->run;
        c.tp = (int)tp;
        if (fits_with(su, &c, NULL))
            return tp;
    }
    return -1;
}

int sim_deploy_smallest_layout(const sim_setup *su, int64_t *tp_out, int64_t *pp_out)
{
    const sim_model *m = su->model;
    const sim_hw *hw = su->hw;
    const int64_t g = (int64_t)hw->v[SIM_HWF_N_GPUS_PER_NODE];
    /* By GPU count; at equal count the larger TP up to one node first (TP on the scale-up
     * link, PP across nodes, as vLLM's documentation advises), then TP across nodes. */
    for (int64_t gpus = 1; gpus <= SIM_DEPLOY_MAX_LAYOUT_GPUS; gpus++) {
        /* Beyond one node, whole nodes: a deployment rents nodes, not GPUs. */
        if (gpus > g && gpus % g != 0)
            continue;
        int64_t best_tp = -1, best_pp = -1;
        for (int64_t tp = 1; tp <= gpus; tp *= 2) {
            if (gpus % tp != 0)
                continue;
            const int64_t pp = gpus / tp;
            struct sim_err err;
            if (pp > SIM_PP_MAX || sim_model_check_tp(m, (int)tp, &err) != SIM_OK ||
                sim_deploy_check_layout(m, hw, tp, pp, "", &err) != SIM_OK)
                continue;
            sim_run_cfg c = *su->run;
            c.tp = (int)tp;
            c.pp = (int)pp;
            /* --dp/--ep: the experts must split over dp x tp GPUs (the dp copies are not
             * counted in gpus: each holds the same TP x PP layout). */
            if (sim_moe_layout_check(m, &c, &err) != SIM_OK)
                continue;
            if (!fits_with(su, &c, NULL))
                continue;
            const int in_node = tp <= g, best_in_node = best_tp > 0 && best_tp <= g;
            if (best_tp < 0 || (in_node && (!best_in_node || tp > best_tp)) ||
                (!in_node && !best_in_node && tp < best_tp)) {
                best_tp = tp;
                best_pp = pp;
            }
        }
        if (best_tp > 0) {
            *tp_out = best_tp;
            *pp_out = best_pp;
            return 1;
        }
    }
    return 0;
}

/* Whether the engine starts at max_model_len len (the other settings of sc). */
static int fits_at(const sim_setup *su, const sim_sched_cfg *sc, int64_t len)
{
    sim_sched_cfg c = *sc;
    c.max_model_len = len;
    sim_sched_resolved r;
    struct sim_err err;
    return sim_sched_resolve(su->engine, su->model, su->hw, &c, &r, &err) == SIM_OK &&
           fits_with(su, NULL, &r);
}

int64_t sim_deploy_largest_len(const sim_setup *su, const sim_sched_cfg *sc)
{
    const sim_engine *e = su->engine;
    const int64_t bs = su->sched->block_size, top = su->model->max_pos;
    /* The candidates are the model's limit and every multiple of block_size below it. Between
     * the lengths where the engine's defaults change (V0: chunked prefill turns on above
     * chunked_auto_above_len, shrinking the activation peak; the token budget follows
     * max_model_len above min_batched_tokens) a longer max_model_len needs as many KV blocks
     * and activations or more, so the engine starts up to some length and not beyond: each
     * such range is bisected, longest range first (tests/test_capacity.c checks this against
     * trying every candidate). A max_position_embeddings of 1e9 takes some 60 budgets. */
    int64_t cuts[4] = {top, e->chunked_auto_above_len, e->min_batched_tokens, 0};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (cuts[j] > cuts[i]) {
                const int64_t t = cuts[i];
                cuts[i] = cuts[j];
                cuts[j] = t;
            }
    for (int i = 0; i + 1 < 4; i++) {
        const int64_t hi = cuts[i] < top ? cuts[i] : top, lo = cuts[i + 1]; /* range (lo, hi] */
        if (hi <= lo)
            continue;
        /* The candidates in (lo, hi]: hi itself when it is the model's limit, else multiples
         * of bs; k indexes the multiples k x bs. */
        if (hi == top && fits_at(su, sc, top))
            return top;
        int64_t k_hi = (hi == top ? hi - 1 : hi) / bs, k_lo = lo / bs + 1;
        if (k_hi < k_lo || !fits_at(su, sc, k_lo * bs))
            continue;
        while (k_lo < k_hi) { /* k_lo fits; the largest fitting k in [k_lo, k_hi] */
            const int64_t mid = k_lo + (k_hi - k_lo + 1) / 2;
            if (fits_at(su, sc, mid * bs))
                k_lo = mid;
            else
                k_hi = mid - 1;
        }
        return k_lo * bs;
    }
    return 0;
}

/* "TP 4", or "TP 4 x PP 2" with pipeline stages: the layout the memory messages name. */
static void tp_pp_name(const sim_run_cfg *cfg, char *buf, size_t cap)
{
    if (cfg->pp > 1)
        snprintf(buf, cap, "TP %d x PP %d", cfg->tp, cfg->pp);
    else
        snprintf(buf, cap, "TP %d", cfg->tp);
}

sim_status sim_deploy_check_memory(const sim_setup *su, const sim_sched_cfg *sc,
                                   const sim_memory *mem, const char *who, const char *hint,
                                   struct sim_err *err)
{
    const sim_model *m = su->model;
    const sim_hw *hw = su->hw;
    const sim_run_cfg *cfg = su->run;
    const sim_sched_resolved *s = su->sched;
    if (mem->fits)
        return SIM_OK;
    /* What vLLM budgets for one max_model_len sequence: whole blocks of every layer, or with
     * the V1 hybrid manager the windowed layers' capped share (sim_kv_max_request_blocks). */
    const double seq_kv = (double)mem->kv_blocks_max_seq * mem->kv_block_bytes;
    const double need = mem->weights_bytes + mem->activation_bytes + mem->reserve_bytes + seq_kv;
    const int64_t best = sim_deploy_smallest_tp(su);
    char tail[160];
    int64_t ltp, lpp;
    if (best > 0)
        snprintf(tail, sizeof(tail), "smallest TP that fits: %lld", (long long)best);
    else if (sim_deploy_smallest_layout(su, &ltp, &lpp))
        snprintf(tail, sizeof(tail),
                 "no TP up to %.0f fits; smallest layout that fits: --tp %lld --pp %lld",
                 hw->v[SIM_HWF_N_GPUS_PER_NODE], (long long)ltp, (long long)lpp);
    else
        snprintf(tail, sizeof(tail), "no TP up to %.0f fits, nor a layout of up to %d GPUs",
                 hw->v[SIM_HWF_N_GPUS_PER_NODE], SIM_DEPLOY_MAX_LAYOUT_GPUS);
    char layout[64];
    tp_pp_name(cfg, layout, sizeof(layout));
    char len_hint[96] = "";
    const int64_t len = sim_deploy_largest_len(su, sc);
    if (len > 0)
        snprintf(len_hint, sizeof(len_hint), ", or --max-model-len %lld at this TP",
                 (long long)len);
    sim_errf(err,
             "%s%s does not fit on %s at %s: weights %.2f GB + activations %.2f GB + "
             "reserve %.2f GB + the KV cache of one %lld-token sequence %.2f GB exceed the "
             "usable %.2f GB by %.2f GB; %s%s%s",
             who, m->id, hw->id, layout, mem->weights_bytes / SIM_GB,
             mem->activation_bytes / SIM_GB, mem->reserve_bytes / SIM_GB,
             (long long)s->max_model_len, seq_kv / SIM_GB, mem->usable_bytes / SIM_GB,
             (need - mem->usable_bytes) / SIM_GB, tail, len_hint, hint ? hint : "");
    return SIM_ERANGE;
}

sim_status sim_deploy_pick_engine(const char *engine, const sim_calib *cal, const char *cal_path,
                                  const char *def, const char *who, const char *opt,
                                  const char **out, const char **cal_engine, struct sim_err *err)
{
    /* A calibration was fitted with one engine's host time and schedule: use that engine
     * unless one is named, and refuse a different one. */
    const char *ce = cal && cal->engine[0] && strcmp(cal->engine, "none") != 0 ? cal->engine : NULL;
    if (cal_engine)
        *cal_engine = ce;
    if (engine && ce && strcmp(engine, ce) != 0) {
        sim_errf(err, "%s%s %s, but %s was fitted with engine %s", who, opt, engine, cal_path, ce);
        return SIM_EINVAL;
    }
    *out = engine ? engine : ce ? ce : def;
    return SIM_OK;
}

/* The engine a calibration names, or NULL ("" and "none": fitted without host time). */
static const char *calib_engine(const sim_calib *cal)
{
    return cal->engine[0] && strcmp(cal->engine, "none") != 0 ? cal->engine : NULL;
}

/* The calibration of hw_id in the folder dir (see deploy.h). */
static sim_status find_in_folder(sim_cache *c, const char *dir, const char *hw_id,
                                 const char *engine, const char *def_engine, const sim_calib **out,
                                 const char **path, struct sim_err *err)
{
    enum { MAX_FILES = 128 };
    char(*names)[64] = malloc(MAX_FILES * sizeof(*names));
    if (!names) {
        sim_errf(err, "out of memory");
        return SIM_ENOMEM;
    }
    /* The folder's *.json files, sorted, as the data folder's ids are listed. */
    const int n = sim_path_list(dir, ".", names, MAX_FILES);
    if (n < 0) {
        free(names);
        sim_errf(err, "%s: cannot read the folder", dir);
        return SIM_EIO;
    }
    /* Every file of the folder is a calibration; those of hw_id are the candidates. */
    const sim_calib *cand[MAX_FILES];
    const char *cand_path[MAX_FILES];
    int n_cand = 0;
    sim_status st = SIM_OK;
    for (int i = 0; i < n && st == SIM_OK; i++) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s.json", dir, names[i]);
        const sim_calib *cal;
        const char *cp;
        st = sim_cache_calib(c, p, &cal, &cp, err);
        if (st == SIM_OK && strcmp(cal->hardware, hw_id) == 0) {
            cand[n_cand] = cal;
            cand_path[n_cand++] = cp;
        }
    }
    free(names);
    if (st != SIM_OK)
        return st;
    /* Named engine: the one fitted with it. Else the only one, or the default engine's. */
    const char *want = engine ? engine : n_cand > 1 ? def_engine : NULL;
    int pick = -1, n_match = 0;
    for (int i = 0; i < n_cand; i++) {
        const char *ce = calib_engine(cand[i]);
        if (!want || (ce && strcmp(ce, want) == 0)) {
            pick = i;
            n_match++;
        }
    }
    if (n_cand > 0 && n_match == 0) {
        /* Calibrations of this GPU, none for this engine: uncalibrated, and said (*path). */
        *out = NULL;
        *path = cand_path[0];
        return SIM_OK;
    }
    if (n_cand > 0 && n_match != 1) {
        char list[400] = "";
        size_t used = 0;
        for (int i = 0; i < n_cand; i++) {
            const char *ce = calib_engine(cand[i]);
            int w = snprintf(list + used, sizeof(list) - used, "%s%s (%s)", i ? ", " : "",
                             cand_path[i], ce ? ce : "no engine");
            if (w > 0 && used + (size_t)w < sizeof(list))
                used += (size_t)w;
        }
        sim_errf(err,
                 "%s: more than one calibration of %s for engine %s (%s); name the file "
                 "with --calibration",
                 dir, hw_id, want, list);
        return SIM_EINVAL;
    }
    *out = n_cand > 0 ? cand[pick] : NULL;
    *path = n_cand > 0 ? cand_path[pick] : NULL;
    return SIM_OK;
}

sim_status sim_deploy_find_calib(sim_cache *c, const char *name, const char *hw_id,
                                 const char *engine, const char *def_engine, const sim_calib **out,
                                 const char **path, struct sim_err *err)
{
    *out = NULL;
    *path = NULL;
    if (!name)
        return SIM_OK;
    struct stat sb;
    if (stat(name, &sb) == 0 && S_ISDIR(sb.st_mode))
        return find_in_folder(c, name, hw_id, engine, def_engine, out, path, err);
    sim_status st = sim_cache_calib(c, name, out, path, err);
    if (st == SIM_OK && strcmp((*out)->hardware, hw_id) != 0) {
        sim_errf(err, "%s: hardware: calibration is for '%s', not '%s'", name, (*out)->hardware,
                 hw_id);
        *out = NULL;
        st = SIM_EINVAL;
    }
    return st;
}

static int has(const char *key, const char *part) { return strstr(key, part) != NULL; }

int sim_deploy_field_relevant(const sim_deployment *d, sim_hw_field f, const sim_step *st)
{
    const char *k = sim_hw_field_key(f);
    const sim_model *m = d->m;
    const sim_quant *q = &m->quant;
    const int fp8_w = d->cfg.dtype == SIM_DTYPE_FP8 || q->math == SIM_GEMM_MATH_FP8 ||
                      q->math == SIM_GEMM_MATH_INT8 || (q->weight_bits == 8 && q->block_n == 0);
    const int fp8_block = q->block_n > 0;
    const int fp4 = q->math == SIM_GEMM_MATH_FP4 || q->method == SIM_QUANT_MXFP4 ||
                    q->method == SIM_QUANT_NVFP4;
    const int fp8_kv = d->cfg.kv_dtype == SIM_DTYPE_FP8;
    int prefill = st == NULL, decode = st == NULL;
    for (int i = 0; st && i < st->n_groups; i++) {
        if (st->groups[i].new_tokens == 1)
            decode = 1;
        else
            prefill = 1;
    }
    const double per_node = d->hw->v[SIM_HWF_N_GPUS_PER_NODE];
    /* STREAM add and triad rates are recorded for reference; no operator is priced by them. */
    if (f == SIM_HWF_BW_STREAM_ADD || f == SIM_HWF_BW_STREAM_TRIAD)
        return 0;
    if (has(k, "internode"))
        return (double)(d->cfg.tp * (d->cfg.pp > 1 ? d->cfg.pp : 1)) > per_node;
    if (f == SIM_HWF_LINK_BW)
        return d->cfg.tp > 1 || d->cfg.pp > 1 || d->cfg.dp > 1;
    if (has(k, "moe") && m->n_experts == 0)
        return 0;
    if (has(k, "fp8_block"))
        return fp8_block;
    if (has(k, "fp4"))
        return fp4;
    if (has(k, "kv_gather_fp8"))
        return fp8_kv;
    if (has(k, "fp8"))
        return fp8_w || fp8_block || fp4;
    if (has(k, "attn_prefill"))
        return prefill;
    if (has(k, "attn_decode"))
        return decode;
    return 1;
}

void sim_deploy_uncalibrated_hint(sim_cache *c, const sim_deployment *d, char *buf, size_t cap)
{
    const char *data_dir = sim_cache_data_dir(c);
    char ids[128][64];
    const int n = sim_path_list(data_dir, "calibrations", ids, 128);
    int best = -1;
    const char *best_engine = NULL;
    for (int i = 0; i < n; i++) {
        const sim_calib *cal;
        struct sim_err e;
        if (sim_cache_calib(c, ids[i], &cal, NULL, &e) != SIM_OK ||
            strcmp(cal->hardware, d->hw->id) != 0)
            continue;
        const char *ce = calib_engine(cal);
        const int same = ce && strcmp(ce, d->e.id) == 0;
        if (best < 0 || same) {
            best = i;
            best_engine = ce;
        }
        if (same)
            break;
    }
    if (best >= 0) {
        snprintf(buf, cap, "shipped for %s: --calibration %s (fitted with engine %s)", d->hw->id,
                 ids[best], best_engine ? best_engine : "none");
        return;
    }
    char path[4096], basis[400];
    double pct;
    int found = 0;
    struct sim_err e;
    snprintf(path, sizeof(path), "%s/calibrations/uncalibrated/known-errors.json", data_dir);
    if (sim_calib_known_error(path, d->hw->id, &pct, basis, sizeof(basis), &found, &e) == SIM_OK &&
        found && isfinite(pct))
        snprintf(buf, cap, "no calibration for %s; known uncalibrated error %.1f%% (%s)", d->hw->id,
                 pct, basis);
    else
        snprintf(buf, cap, "no calibration for %s and no measurements: its error is unknown",
                 d->hw->id);
}

sim_status sim_spec_setup(const sim_setup *su, const sim_spec *in, const sim_model *draft,
                          sim_spec *out, struct sim_err *err)
{
    const sim_run_cfg *run = su->run;
    if (su->engine->kind != SIM_SCHED_V1 || run->pp > 1) {
        sim_errf(err, "speculative decoding: simulated on the V1 engine without pipeline "
                      "stages (docs/limits.md)");
        return SIM_EINVAL;
    }
    sim_kv_layout k;
    sim_model_kv_layout(su->model, run->tp, run->kv_dtype,
                        sim_sched_hybrid_kv(su->engine, su->sched), &k);
    if (k.n_full_groups > 0 && k.n_window_groups > 0) {
        sim_errf(err,
                 "speculative decoding: %s has sliding-window layers; a drafter on a hybrid KV "
                 "cache is not simulated (docs/limits.md)",
                 su->model->id);
        return SIM_EINVAL;
    }
    *out = *in;
    sim_status st = sim_spec_resolve(out, su->model, draft, run, err);
    if (st != SIM_OK)
        return st;
    if (draft && draft->max_pos < su->sched->max_model_len) {
        sim_errf(err,
                 "spec_model: %s holds %lld positions, below max_model_len %lld (pass "
                 "--max-model-len)",
                 draft->id, (long long)draft->max_pos, (long long)su->sched->max_model_len);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

/* Speculative decoding for the opened deployment d (sim_spec_setup), the draft model of
 * method draft loaded through the cache. */
static sim_status deploy_spec(sim_cache *c, const sim_deploy_in *in, sim_deployment *d,
                              const char *who, struct sim_err *err)
{
    const sim_model *draft = NULL;
    sim_status st = SIM_OK;
    if (in->spec_model && (st = sim_cache_model(c, in->spec_model, &draft, NULL, err)) != SIM_OK)
        return st;
    struct sim_err e2;
    const sim_setup su = sim_deployment_setup(d);
    if ((st = sim_spec_setup(&su, in->spec, draft, &d->spec, &e2)) != SIM_OK) {
        sim_errf(err, "%s%s", who, e2.msg);
        d->bad_option = 1;
        return st;
    }
    sim_deployment_rebase(d);
    return SIM_OK;
}

sim_status sim_deploy_open(sim_cache *c, const sim_deploy_in *in, sim_deployment *d,
                           struct sim_err *err)
{
    memset(d, 0, sizeof(*d));
    const sim_engine *e = NULL;
    const char *engine = in->engine;
    sim_status st = sim_cache_model(c, in->model, &d->m, &d->model_path, err);
    d->hw_path = in->hw;
    if (st == SIM_OK && in->hw_obj)
        d->hw = in->hw_obj;
    else if (st == SIM_OK)
        st = sim_cache_hw(c, in->hw, &d->hw, &d->hw_path, err);
    const char *cal_path = NULL;
    if (st == SIM_OK)
        st = sim_deploy_find_calib(c, in->calibration, d->hw->id, in->engine, in->default_engine,
                                   &d->cal, &cal_path, err);
    d->cal_path = d->cal ? cal_path : NULL;
    d->cal_other_engine = !d->cal ? cal_path : NULL;
    if (st == SIM_OK && d->cal) {
        /* Figures fitted on other classes of model are not applied (calib_json.h). */
        d->cal_other_class = !sim_calib_figures_apply(d->cal, d->m);
        if (!d->cal_other_class)
            st = sim_cache_hw_calibrated(c, d->hw, d->cal, cal_path, &d->hw, err);
    }
    if (st != SIM_OK)
        return st;
    const char *who = in->who ? in->who : "";
    st = sim_deploy_pick_engine(in->engine, d->cal, cal_path, in->default_engine, who,
                                in->engine_opt ? in->engine_opt : "engine", &engine, &d->cal_engine,
                                err);
    if (st != SIM_OK) {
        d->bad_option = 1;
        return st;
    }
    if (!engine) {
        sim_errf(err, "engine: none named and no default");
        d->bad_option = 1;
        return SIM_EINVAL;
    }
    if ((st = sim_cache_engine(c, engine, &e, NULL, err)) != SIM_OK)
        return st;
    d->e = *e;
    if (in->no_host)
        sim_engine_drop_host(&d->e);
    /* The calibration's alpha and beta_s, or its alpha/beta-only fit for another class. */
    const double alpha = !d->cal              ? in->alpha
                         : d->cal_other_class ? d->cal->ab_alpha
                                              : d->cal->alpha;
    const double beta_s = !d->cal              ? in->beta_s
                          : d->cal_other_class ? d->cal->ab_beta_s
                                               : d->cal->beta_s;
    d->cfg = (sim_run_cfg){.tp = (int)in->tp,
                           .dtype = d->m->dtype,
                           .kv_dtype = d->m->dtype,
                           .mode = in->mode,
                           .alpha = alpha,
                           .beta_s = beta_s,
                           .gemm = in->gemm,
                           .pp = in->pp > 1 ? (int)in->pp : 1,
                           .dp = in->dp > 1 ? (int)in->dp : 1,
                           .ep = in->ep ? 1 : 0};
    st = sim_deploy_resolve_dtypes(d->m, in->dtype, in->kv_dtype, who, &d->cfg, err);
    if (st != SIM_OK) {
        d->bad_option = 1;
        return st;
    }
    st = sim_deploy_check_layout(d->m, d->hw, in->tp, in->pp > 1 ? in->pp : 1, who, err);
    if (st != SIM_OK)
        return st;
    struct sim_err e2;
    if (in->dp < 0 || in->dp > SIM_DP_MAX) {
        sim_errf(err, "--dp %lld: expected 1 to %d data-parallel ranks", (long long)in->dp,
                 SIM_DP_MAX);
        return SIM_EINVAL;
    }
    if ((st = sim_moe_layout_check(d->m, &d->cfg, &e2)) != SIM_OK) {
        sim_errf(err, "%s%s", who, e2.msg);
        return st;
    }
    d->sc = in->sched;
    if ((st = sim_model_check_tp(d->m, d->cfg.tp, &e2)) != SIM_OK ||
        (st = sim_sched_resolve(&d->e, d->m, d->hw, &d->sc, &d->s, &e2)) != SIM_OK) {
        sim_errf(err, "%s: %s", d->model_path, e2.msg);
        return st;
    }
    /* The run's choice (--async-scheduling, a row's run.async_scheduling) replaces the engine
     * version's default in the deployment's copy, which every step and serving path reads. */
    d->e.async_scheduling = d->s.async_scheduling;
    sim_decode_attn_resolve(&d->e, d->m, d->hw, &d->s, &d->cfg.decode);
    if (in->spec && in->spec->method != SIM_SPEC_NONE &&
        (st = deploy_spec(c, in, d, who, err)) != SIM_OK)
        return st;
    const sim_setup su = sim_deployment_setup(d);
    sim_memory_compute(&su, &d->mem);
    d->check_memory = in->check_memory;
    d->memory_hint = in->memory_hint ? in->memory_hint : "";
    if (d->check_memory)
        return sim_deploy_check_memory(&su, &d->sc, &d->mem, who, d->memory_hint, err);
    return SIM_OK;
}

sim_status sim_deploy_step(const sim_deployment *d, const sim_step *st, const char *who,
                           sim_deploy_step_out *out, struct sim_err *err)
{
    struct sim_err e2;
    out->no_fit = 0;
    out->rank = *st;
    for (int i = 0; i < out->rank.n_groups; i++)
        out->rank.groups[i].count = sim_dp_rank_share(&d->cfg, out->rank.groups[i].count);
    sim_status s = sim_step_check(d->m, &d->cfg, &out->rank, &e2);
    if (s != SIM_OK) {
        sim_errf(err, "%s: %s", d->model_path, e2.msg);
        return s;
    }
    if (d->check_memory) {
        sim_step_fit f;
        if (!sim_capacity_step_fits(&d->mem, &d->s, &out->rank, &f)) {
            char layout[64];
            tp_pp_name(&d->cfg, layout, sizeof(layout));
            if (f.too_long)
                sim_errf(err,
                         "%sthe step does not fit: a sequence of %lld tokens exceeds "
                         "max_model_len %lld%s",
                         who, (long long)f.longest_tokens, (long long)d->s.max_model_len,
                         d->memory_hint);
            else if (f.seqs > d->s.max_num_seqs)
                sim_errf(err,
                         "%sthe step does not fit: %lld sequences%s exceed max_num_seqs "
                         "%lld of %s at %s (--max-num-seqs to raise it)%s",
                         who, (long long)f.seqs, d->cfg.dp > 1 ? " on one DP rank" : "",
                         (long long)d->s.max_num_seqs, d->e.id, layout, d->memory_hint);
            else
                sim_errf(err,
                         "%sthe step does not fit: its KV cache needs %lld blocks (%.2f GB) "
                         "per GPU%s, but %s at %s holds %lld (%.2f GB)%s",
                         who, (long long)f.blocks,
                         (double)f.blocks * d->mem.kv_block_bytes / SIM_GB,
                         d->cfg.dp > 1 ? " on one DP rank" : "", d->hw->id, layout,
                         (long long)d->mem.kv_blocks,
                         (double)d->mem.kv_blocks * d->mem.kv_block_bytes / SIM_GB, d->memory_hint);
            out->no_fit = 1;
            return SIM_ERANGE;
        }
    }
    sim_step_cost_compute(d->m, d->hw, &d->cfg, &out->rank, &out->cost);
    out->host_s = sim_engine_host_s(&d->e, d->cfg.tp, out->cost.seqs);
    out->wall_s = sim_engine_step_wall_s(&d->e, out->cost.step_s, out->host_s);
    return SIM_OK;
}

sim_status sim_workload_prefix_check(int64_t prefix_tokens, int64_t distinct_prompts, int trace,
                                     struct sim_err *err)
{
    if (prefix_tokens >= 0 && prefix_tokens <= (INT64_C(1) << 24) && distinct_prompts >= 0 &&
        distinct_prompts <= SIM_WORKLOAD_MAX_REQUESTS &&
        !(prefix_tokens > 0 && distinct_prompts > 0) &&
        !(trace && (prefix_tokens > 0 || distinct_prompts > 0)))
        return SIM_OK;
    sim_errf(err,
             "workload: prefix_tokens (--prefix-tokens, 0 to 2^24) or distinct_prompts "
             "(--distinct-prompts, 0 to %lld): one of them, and neither with a trace, whose "
             "lines give prefix_tokens and prefix_group",
             (long long)SIM_WORKLOAD_MAX_REQUESTS);
    return SIM_EINVAL;
}

sim_status sim_served_prepare(sim_served *sv, const sim_workload_spec *spec, const char *trace_path,
                              int with_itl, struct sim_err *err)
{
    memset(sv, 0, sizeof(*sv));
    if (sim_workload_prefix_check(spec->prefix_tokens, spec->distinct_prompts,
                                  spec->arrival == SIM_ARRIVAL_TRACE, err) != SIM_OK)
        return SIM_EINVAL;
    if (spec->arrival == SIM_ARRIVAL_TRACE) {
        sim_status st = sim_trace_load(trace_path, &sv->req, &sv->n, err);
        if (st != SIM_OK)
            return st;
        if (sv->n > SIM_WORKLOAD_MAX_REQUESTS) {
            sim_errf(err,
                     "%s: %lld requests exceed the limit of %lld a simulation holds "
                     "(docs/limits.md)",
                     trace_path, (long long)sv->n, (long long)SIM_WORKLOAD_MAX_REQUESTS);
            return SIM_ERANGE;
        }
    } else {
        int64_t measured =
            spec->num_requests > 0 ? spec->num_requests : sim_workload_default_requests(spec);
        sv->warmup =
            spec->warmup_requests >= 0 ? spec->warmup_requests : sim_workload_default_warmup(spec);
        sv->n = measured + sv->warmup;
        sv->concurrency = spec->arrival == SIM_ARRIVAL_CLOSED ? spec->concurrency : 0;
        if (sv->n > SIM_WORKLOAD_MAX_REQUESTS) {
            sim_errf(err,
                     "workload: %lld requests to simulate (%lld measured%s + %lld warm-up) exceed "
                     "the limit of %lld (docs/limits.md); give fewer requests",
                     (long long)sv->n, (long long)measured,
                     spec->num_requests > 0 ? "" : ", 10 x concurrency by default",
                     (long long)sv->warmup, (long long)SIM_WORKLOAD_MAX_REQUESTS);
            sv->n = 0;
            return SIM_ERANGE;
        }
        sv->req = calloc((size_t)sv->n, sizeof(*sv->req));
        if (!sv->req) {
            sim_errf(err, "out of memory for %lld requests", (long long)sv->n);
            return SIM_ENOMEM;
        }
        sim_workload_spec w = *spec;
        w.range_ratio = sim_workload_range_ratio(spec->range_ratio);
        sim_workload_generate(&w, sv->req, sv->n);
    }
    for (int64_t i = 0; with_itl && i < sv->n; i++)
        sv->itl_cap += sv->req[i].output_tokens;
    sv->queue = malloc((size_t)(sv->n + 1) * sizeof(*sv->queue));
    sv->running = malloc((size_t)sv->n * sizeof(*sv->running));
    sv->agg_heap = malloc((size_t)sv->n * sizeof(*sv->agg_heap));
    sv->itl = with_itl ? malloc((size_t)sv->itl_cap * sizeof(*sv->itl)) : NULL;
    sv->scratch = malloc((size_t)sv->n * sizeof(*sv->scratch));
    if (!sv->queue || !sv->running || !sv->agg_heap || (with_itl && !sv->itl) || !sv->scratch) {
        sim_errf(err, "out of memory for %lld requests", (long long)sv->n);
        return SIM_ENOMEM;
    }
    return SIM_OK;
}

static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

/* One engine's run folded into the result of several (DP ranks, a disaggregated pool): the
 * sums of counts, the largest times, steps and peaks (per GPU). */
static void merge_rank(sim_serve_result *res, const sim_serve_result *one)
{
    res->end_s = fmax(res->end_s, one->end_s);
    res->roofline_sum_s = fmax(res->roofline_sum_s, one->roofline_sum_s);
    res->host_sum_s = fmax(res->host_sum_s, one->host_sum_s);
    res->busy_s = fmax(res->busy_s, one->busy_s);
    res->prefill_s = fmax(res->prefill_s, one->prefill_s);
    res->n_steps = max_i64(res->n_steps, one->n_steps);
    res->n_prefill_steps = max_i64(res->n_prefill_steps, one->n_prefill_steps);
    res->preemptions += one->preemptions;
    res->recomputed_tokens += one->recomputed_tokens;
    res->kv_blocks = one->kv_blocks ? one->kv_blocks : res->kv_blocks;
    res->kv_capacity_tokens =
        one->kv_capacity_tokens ? one->kv_capacity_tokens : res->kv_capacity_tokens;
    res->peak_kv_blocks = max_i64(res->peak_kv_blocks, one->peak_kv_blocks);
    res->peak_kv_frac = fmax(res->peak_kv_frac, one->peak_kv_frac);
    res->queue_peak = max_i64(res->queue_peak, one->queue_peak);
    res->running_peak = max_i64(res->running_peak, one->running_peak);
    res->n_itl += one->n_itl;
    res->prefix_query_tokens += one->prefix_query_tokens;
    res->prefix_hit_tokens += one->prefix_hit_tokens;
    res->prefix_evictions += one->prefix_evictions;
    res->prefix_cache_simulated |= one->prefix_cache_simulated;
    res->spec_verified_tokens += one->spec_verified_tokens;
    res->spec_accepted_tokens += one->spec_accepted_tokens;
}

/* Prefix caching with shared blocks simulates the pool block by block (sched_v1.h): room for
 * the pool of su's KV cache (the blocks less vLLM's null block), once per served workload.
 * A pool above SIM_PREFIX_MAX_BLOCKS gets none: the simulation then says so. */
static sim_status prefix_scratch(const sim_setup *su, sim_served *sv, struct sim_err *err)
{
    const sim_workload all = {sv->req, sv->n, sv->concurrency};
    if (!su->sched->enable_prefix_caching || !sim_serve_shares_blocks(&all, su->sched->block_size))
        return SIM_OK;
    sim_memory mem;
    sim_memory_compute(su, &mem);
    const int64_t pool = mem.kv_blocks - 1;
    if (pool < 1 || pool > SIM_PREFIX_MAX_BLOCKS || pool <= sv->prefix_cap)
        return SIM_OK;
    free(sv->prefix_blocks);
    free(sv->prefix_buckets);
    sv->prefix_cap = 0;
    sv->prefix_blocks = malloc((size_t)pool * sizeof(*sv->prefix_blocks));
    sv->prefix_buckets = malloc((size_t)sim_prefix_buckets(pool) * sizeof(*sv->prefix_buckets));
    if (!sv->prefix_blocks || !sv->prefix_buckets) {
        sim_errf(err, "out of memory for a prefix cache of %lld KV blocks", (long long)pool);
        return SIM_ENOMEM;
    }
    sv->prefix_cap = pool;
    return SIM_OK;
}

/* The run of one DP rank into res (its results written back into sv's requests). */
static sim_status serve_rank(const sim_setup *su, sim_served *sv, sim_request *sub, int64_t n_ranks,
                             int64_t rank, int64_t itl_used, sim_serve_observer obs, void *obs_ctx,
                             sim_serve_result *res, struct sim_err *err)
{
    /* Requests rank, rank + n_ranks, ... (the order they are sent in); a closed loop's
     * clients likewise, concurrency / n_ranks each (the first ones one more). */
    int64_t n = 0;
    for (int64_t i = rank; i < sv->n; i += n_ranks)
        sub[n++] = sv->req[i];
    const int64_t conc =
        sv->concurrency > 0 ? sv->concurrency / n_ranks + (rank < sv->concurrency % n_ranks ? 1 : 0)
                            : 0;
    if (n == 0) { /* fewer requests than ranks: this one idles */
        *res = (sim_serve_result){0};
        return SIM_OK;
    }
    sim_workload w = {sub, n, conc};
    sim_serve_scratch scr = {sv->queue,
                             sv->running,
                             sv->itl ? sv->itl + itl_used : NULL,
                             sv->itl_cap - itl_used,
                             sv->exact_steps,
                             sv->agg_heap,
                             sv->prefix_blocks,
                             sv->prefix_buckets,
                             sv->prefix_cap};
    sim_status rc = sim_serve_simulate(su, &w, &scr, obs, obs_ctx, res, err);
    for (int64_t i = rank, k = 0; rc == SIM_OK && i < sv->n; i += n_ranks)
        sv->req[i] = sub[k++];
    return rc;
}

sim_status sim_served_run(const sim_setup *su, sim_served *sv, sim_serve_observer obs,
                          void *obs_ctx, sim_serve_result *res, struct sim_err *err)
{
    const sim_model *m = su->model;
    const sim_hw *hw = su->hw;
    const sim_run_cfg *cfg = su->run;
    struct sim_err e2;
    sim_status pst = prefix_scratch(su, sv, err);
    if (pst != SIM_OK)
        return pst;
    if (cfg->dp <= 1) {
        sim_workload w = {sv->req, sv->n, sv->concurrency};
        sim_serve_scratch scr = {sv->queue,         sv->running,        sv->itl,
                                 sv->itl_cap,       sv->exact_steps,    sv->agg_heap,
                                 sv->prefix_blocks, sv->prefix_buckets, sv->prefix_cap};
        sim_status rc = sim_serve_simulate(su, &w, &scr, obs, obs_ctx, res, &e2);
        if (rc != SIM_OK)
            sim_errf(err, "%s on %s at TP %d: %s", m->id, hw->id, cfg->tp, e2.msg);
        return rc;
    }
    /*
     * Data parallelism: dp engines, each with its own scheduler and KV cache, the requests
     * dealt to them in turn (vLLM's front end balances the load over the DP engines; for
     * requests of like lengths round robin is that balance), each rank simulated with the
     * step of cfg (whose MoE layers gather dp ranks' tokens of the same shape: vLLM keeps
     * MoE ranks in lockstep). The result: the sums over ranks of counts, the largest of
     * times, steps and peaks (per GPU), every request's times from its own rank.
     */
    const int64_t n_ranks = cfg->dp;
    if (sv->concurrency > 0 && sv->concurrency < n_ranks) {
        sim_errf(err, "--dp %lld: a closed loop of %lld clients leaves a rank without one",
                 (long long)n_ranks, (long long)sv->concurrency);
        return SIM_EINVAL;
    }
    sim_request *sub = malloc((size_t)(sv->n / n_ranks + 1) * sizeof(*sub));
    if (!sub) {
        sim_errf(err, "out of memory for %lld requests", (long long)sv->n);
        return SIM_ENOMEM;
    }
    *res = (sim_serve_result){0};
    sim_status rc = SIM_OK;
    for (int64_t r = 0; r < n_ranks && rc == SIM_OK; r++) {
        sim_serve_result one;
        rc = serve_rank(su, sv, sub, n_ranks, r, res->n_itl, obs, obs_ctx, &one, &e2);
        if (rc != SIM_OK) {
            sim_errf(err, "%s on %s at TP %d x DP %lld, rank %lld: %s", m->id, hw->id, cfg->tp,
                     (long long)n_ranks, (long long)r, e2.msg);
            break;
        }
        merge_rank(res, &one);
    }
    free(sub);
    return rc;
}

sim_status sim_served_stats(const sim_model *m, const sim_hw *hw, sim_served *sv,
                            const sim_serve_result *res, double slo_ttft_s, double slo_tpot_s,
                            sim_serve_stats *st, struct sim_err *err)
{
    /* The warm-up requests' tokens stay in the ITL list: they share steps with the measured
     * ones, and ITL is a property of the steps. */
    if (sim_serve_stats_compute(sv->req + sv->warmup, sv->n - sv->warmup, sv->itl, res->n_itl,
                                slo_ttft_s, slo_tpot_s, sim_hw_client_path_s(hw), sv->scratch,
                                st) != SIM_OK) {
        sim_errf(err, "%s on %s: no request was measured", m->id, hw->id);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

void sim_served_free(sim_served *sv)
{
    free(sv->req);
    free(sv->queue);
    free(sv->running);
    free(sv->agg_heap);
    free(sv->prefix_blocks);
    free(sv->prefix_buckets);
    free(sv->itl);
    free(sv->scratch);
    memset(sv, 0, sizeof(*sv));
}

sim_status sim_deploy_band(const sim_deployment *d, int family, int level_pct, sim_pred_band *out,
                           struct sim_err *err)
{
    return sim_calib_band_get(d->cal, d->cal_path, family, level_pct, out, err);
}

sim_status sim_calib_band_get(const sim_calib *cal, const char *cal_path, int family, int level_pct,
                              sim_pred_band *out, struct sim_err *err)
{
    *out = (sim_pred_band){.family = family, .level_pct = level_pct};
    const char *fam = sim_band_family_name(family);
    if (family < 0 || family >= SIM_BAND_FAMILIES) {
        sim_errf(err, "unknown band family %d", family);
        return SIM_EINVAL;
    }
    if (!sim_band_level_valid(level_pct)) {
        sim_errf(err, "level %d%%: %s", level_pct, SIM_BAND_LEVEL_RULE);
        return SIM_EINVAL;
    }
    if (!cal) {
        sim_errf(err, "the prediction is uncalibrated; a band comes from a calibration "
                      "(calibrate records one: docs/calibration.md, \"Prediction intervals\")");
        return SIM_EINVAL;
    }
    const sim_calib_band *b = &cal->band;
    if (!b->held_out_by[0]) {
        sim_errf(err,
                 "calibration %s has no band (made with --no-band, from rows no field "
                 "splits, or before bands: re-run its recorded command)",
                 cal_path ? cal_path : cal->hardware);
        return SIM_EINVAL;
    }
    if (!sim_band_interval(b, family, level_pct, &out->lo_frac, &out->hi_frac)) {
        char have[160] = "";
        size_t n = 0;
        for (int f = 0; f < SIM_BAND_FAMILIES; f++)
            if (b->n_rows[f] > 0 && n < sizeof(have))
                n += (size_t)snprintf(have + n, sizeof(have) - n, "%s%s", n ? ", " : "",
                                      sim_band_family_name(f));
        sim_errf(err,
                 "calibration %s has no band for %s predictions (%s%s%s; calibrate on %s rows "
                 "for one)",
                 cal_path ? cal_path : cal->hardware, fam,
                 have[0] ? "it was fitted on " : "its band has no family", have,
                 have[0] ? " rows" : "", fam);
        return SIM_EINVAL;
    }
    out->n_rows = b->n_rows[family];
    out->held_out_by = b->held_out_by;
    return SIM_OK;
}

int sim_band_family_join(int family, const sim_group *g)
{
    const int own = g->new_tokens == 1 && g->context_tokens > 0 ? SIM_BAND_DECODE
                    : g->context_tokens == 0                    ? SIM_BAND_PREFILL
                                                                : SIM_BAND_STEP;
    return family < 0 || family == own ? own : SIM_BAND_STEP;
}

int sim_step_band_family(const sim_step *st)
{
    int f = -1;
    for (int i = 0; i < st->n_groups; i++)
        f = sim_band_family_join(f, &st->groups[i]);
    return f < 0 ? SIM_BAND_STEP : f;
}

sim_status sim_disagg_link_of(const sim_hw *prefill_hw, const sim_hw *decode_hw, int64_t n_gpus,
                              sim_disagg_link *out, struct sim_err *err)
{
    const sim_hw *hw = decode_hw;
    const int same_gpu = strcmp(prefill_hw->id, decode_hw->id) == 0;
    const double per_node =
        hw->v[SIM_HWF_N_GPUS_PER_NODE] > 0.0 ? hw->v[SIM_HWF_N_GPUS_PER_NODE] : 8.0;
    /* Pools of two GPU types are two kinds of node: the fabric between them, at the slower
     * side's bandwidth and the longer latency. */
    out->same_node = same_gpu && (double)n_gpus <= per_node;
    if (out->same_node) {
        out->bw_bytes_per_s = hw->v[SIM_HWF_LINK_BW];
        out->latency_s = 0.0;
    } else {
        const double bp = prefill_hw->v[SIM_HWF_BW_INTERNODE], bd = hw->v[SIM_HWF_BW_INTERNODE];
        const double lp = prefill_hw->v[SIM_HWF_INTERNODE_LATENCY];
        out->bw_bytes_per_s = bp < bd ? bp : bd;
        out->latency_s =
            lp > hw->v[SIM_HWF_INTERNODE_LATENCY] ? lp : hw->v[SIM_HWF_INTERNODE_LATENCY];
    }
    if (!(out->bw_bytes_per_s > 0.0)) {
        sim_errf(err,
                 "%s: no %s in the profile: the KV transfer of disaggregated serving cannot be "
                 "priced",
                 out->same_node ? hw->id : (same_gpu ? hw->id : "the two GPU types"),
                 out->same_node ? "link_bw_per_dir_bytes_per_s (NVLink within a node)"
                                : "bw_internode_per_gpu_bytes_per_s (the inter-node fabric)");
        return SIM_EINVAL;
    }
    return SIM_OK;
}

double sim_disagg_xfer_s(const sim_model *m, sim_dtype kv_dtype, int64_t tokens, int tp_p, int tp_d,
                         const sim_disagg_link *link)
{
    const double bytes = (double)tokens * sim_model_kv_bytes_per_token(m, 1, kv_dtype);
    const double pairs = (double)(tp_p < tp_d ? tp_p : tp_d);
    return bytes / (pairs * link->bw_bytes_per_s) + link->latency_s;
}

/* An index with the time it is ordered by. */
typedef struct timed_index {
    double t;
    int64_t i;
} timed_index;

static int by_time(const void *a, const void *b)
{
    const timed_index *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : (x->i > y->i) - (x->i < y->i);
}

sim_status sim_disagg_run(const sim_setup *p_su, const sim_setup *d_su, int64_t n_prefill,
                          int64_t n_decode, const sim_disagg_link *link, sim_served *sv,
                          sim_serve_result *pres, sim_serve_result *dres, double *xfer_mean_s,
                          struct sim_err *err)
{
    *pres = *dres = (sim_serve_result){0};
    *xfer_mean_s = 0.0;
    if (sv->concurrency > 0) {
        sim_errf(err, "--disagg: a closed loop couples the pools through its clients, which is "
                      "not simulated; give --request-rate or --trace");
        return SIM_EINVAL;
    }
    if (n_prefill < 1 || n_decode < 1 || n_prefill > SIM_DP_MAX || n_decode > SIM_DP_MAX) {
        sim_errf(err, "--disagg: 1 to %d prefill and decode instances", SIM_DP_MAX);
        return SIM_EINVAL;
    }
    const int64_t n = sv->n;
    sim_request *sub = malloc((size_t)n * sizeof(*sub));
    timed_index *ord = malloc((size_t)n * sizeof(*ord));
    double *pfin = malloc((size_t)n * sizeof(*pfin));
    if (!sub || !ord || !pfin) {
        free(sub);
        free(ord);
        free(pfin);
        sim_errf(err, "out of memory for %lld requests", (long long)n);
        return SIM_ENOMEM;
    }
    sim_status rc = SIM_OK;
    struct sim_err e2;
    /* The prefill pool: request i to instance i mod x (the proxy's round robin), each a prompt
     * and the one token vLLM's prefill instance samples (max_tokens 1). */
    for (int64_t r = 0; rc == SIM_OK && r < n_prefill; r++) {
        int64_t k = 0;
        for (int64_t i = r; i < n; i += n_prefill)
            sub[k++] = (sim_request){.arrival_s = sv->req[i].arrival_s,
                                     .prompt_tokens = sv->req[i].prompt_tokens,
                                     .output_tokens = 1};
        if (k == 0)
            continue;
        sim_workload w = {sub, k, 0};
        sim_serve_scratch scr = {sv->queue, sv->running, NULL, 0, sv->exact_steps,
                                 NULL,      NULL,        NULL, 0};
        sim_serve_result one;
        rc = sim_serve_simulate(p_su, &w, &scr, NULL, NULL, &one, &e2);
        if (rc != SIM_OK) {
            sim_errf(err, "%s on %s, prefill instance %lld: %s", p_su->model->id, p_su->hw->id,
                     (long long)r, e2.msg);
            break;
        }
        merge_rank(pres, &one);
        k = 0;
        for (int64_t i = r; i < n; i += n_prefill, k++) {
            pfin[i] = sub[k].finish_s;
            sv->req[i].first_sched_s = sub[k].first_sched_s;
        }
    }
    /* The decode pool: requests in the order their prefill ends, dealt in turn; each arrives
     * with its prompt's KV but the last token's computed remotely, pulled in xfer_s. */
    for (int64_t i = 0; rc == SIM_OK && i < n; i++)
        ord[i] = (timed_index){pfin[i], i};
    if (rc == SIM_OK)
        qsort(ord, (size_t)n, sizeof(*ord), by_time);
    double xfer_sum = 0.0;
    for (int64_t r = 0; rc == SIM_OK && r < n_decode; r++) {
        int64_t k = 0;
        for (int64_t j = r; j < n; j += n_decode) {
            const sim_request *q = &sv->req[ord[j].i];
            const int64_t remote = q->prompt_tokens - 1;
            const double xs = sim_disagg_xfer_s(d_su->model, d_su->run->kv_dtype, remote,
                                                p_su->run->tp, d_su->run->tp, link);
            xfer_sum += xs;
            sub[k++] = (sim_request){.arrival_s = ord[j].t,
                                     .prompt_tokens = q->prompt_tokens,
                                     .output_tokens = q->output_tokens,
                                     .remote_tokens = remote,
                                     .xfer_s = xs};
        }
        if (k == 0)
            continue;
        sim_workload w = {sub, k, 0};
        sim_serve_scratch scr = {sv->queue,
                                 sv->running,
                                 sv->itl ? sv->itl + dres->n_itl : NULL,
                                 sv->itl_cap - dres->n_itl,
                                 sv->exact_steps,
                                 NULL,
                                 NULL,
                                 NULL,
                                 0};
        sim_serve_result one;
        rc = sim_serve_simulate(d_su, &w, &scr, NULL, NULL, &one, &e2);
        if (rc != SIM_OK) {
            sim_errf(err, "%s on %s, decode instance %lld: %s", d_su->model->id, d_su->hw->id,
                     (long long)r, e2.msg);
            break;
        }
        merge_rank(dres, &one);
        k = 0;
        for (int64_t j = r; j < n; j += n_decode, k++) {
            sim_request *q = &sv->req[ord[j].i];
            q->first_token_s = sub[k].first_token_s;
            q->finish_s = sub[k].finish_s;
            q->n_preemptions = sub[k].n_preemptions;
            q->generated = sub[k].generated;
        }
    }
    *xfer_mean_s = n > 0 ? xfer_sum / (double)n : 0.0;
    free(sub);
    free(ord);
    free(pfin);
    return rc;
}
