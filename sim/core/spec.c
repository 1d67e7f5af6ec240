/*
 * spec.c - speculative decoding: methods, the drafter, acceptance (see spec.h).
 */
#include "spec.h"

#include <math.h>
#include <string.h>

#include "err.h"

static const char *const method_names[SIM_SPEC_METHOD_COUNT] = {"none",   "ngram", "eagle",
                                                                "eagle3", "mtp",   "draft"};

const char *sim_spec_method_name(sim_spec_method m)
{
    return (unsigned)m < SIM_SPEC_METHOD_COUNT ? method_names[m] : "?";
}

sim_status sim_spec_method_parse(const char *name, sim_spec_method *out)
{
    for (int i = 1; i < SIM_SPEC_METHOD_COUNT; i++)
        if (strcmp(name, method_names[i]) == 0) {
            *out = (sim_spec_method)i;
            return SIM_OK;
        }
    return SIM_EINVAL;
}

/* The one-layer drafter of eagle, eagle3 and mtp, from the target. eagle and eagle3 heads are
 * a dense decoder layer of the target's width (the published heads for Llama, Qwen and
 * gpt-oss targets; a MoE target's head takes the routed width top-k x expert size), in 16
 * bits; mtp is one more layer of the target's own kind (MoE and MLA for DeepSeek-V3). */
static void head_model(const sim_model *t, sim_spec_method method, sim_model *h)
{
    *h = *t;
    h->n_layers = 1;
    h->sliding_window = 0;
    h->full_attn_layers = 0;
    h->window_period = 0;
    h->window_chunked = false;
    h->n_mtp_layers = 0;
    h->vision = (sim_vision){0};
    if (method == SIM_SPEC_MTP) {
        h->n_moe_layers = t->n_experts > 0 ? 1 : 0;
        return;
    }
    h->quant = (sim_quant){0};
    if (t->n_experts > 0) {
        if (t->d_ff <= 0 || t->n_moe_layers == t->n_layers)
            h->d_ff = t->n_experts_per_tok * t->d_ff_expert;
        h->n_experts = h->n_experts_per_tok = h->d_ff_expert = h->n_moe_layers = 0;
        h->n_shared_experts = 0;
        h->router_bias = h->router_fp32 = h->expert_bias = false;
    }
    if (method == SIM_SPEC_EAGLE3) {
        h->vocab = SIM_SPEC_EAGLE3_VOCAB;
        h->tie_embeddings = false;
    }
}

sim_status sim_spec_resolve(sim_spec *s, const sim_model *target, const sim_model *draft_model,
                            const sim_run_cfg *run, struct sim_err *err)
{
    if (s->method <= SIM_SPEC_NONE || s->method >= SIM_SPEC_METHOD_COUNT) {
        sim_errf(err, "speculative decoding: unknown method");
        return SIM_EINVAL;
    }
    if (s->k < 1 || s->k > SIM_SPEC_MAX_TOKENS) {
        sim_errf(err, "spec_tokens: expected 1 to %d speculative tokens, got %lld",
                 SIM_SPEC_MAX_TOKENS, (long long)s->k);
        return SIM_EINVAL;
    }
    for (int64_t i = 0; i < s->k; i++)
        if (!(s->accept[i] >= 0.0 && s->accept[i] <= 1.0)) {
            sim_errf(err, "acceptance: position %lld: expected a rate in [0, 1], got %g",
                     (long long)(i + 1), s->accept[i]);
            return SIM_EINVAL;
        }
    if ((s->method == SIM_SPEC_DRAFT) != (draft_model != NULL)) {
        sim_errf(err, "spec_model: %s",
                 s->method == SIM_SPEC_DRAFT ? "method draft needs the draft model (--spec-model)"
                                             : "only method draft takes a draft model");
        return SIM_EINVAL;
    }
    if (s->method == SIM_SPEC_MTP && target->n_mtp_layers < 1) {
        sim_errf(err,
                 "spec: method mtp: %s has no multi-token-prediction layer "
                 "(num_nextn_predict_layers)",
                 target->id);
        return SIM_EINVAL;
    }
    s->draft_weight_bytes = s->draft_kv_bytes_per_token = 0.0;
    if (s->method == SIM_SPEC_NGRAM)
        return SIM_OK;
    if (s->method == SIM_SPEC_DRAFT) {
        if (draft_model->vocab != target->vocab) {
            sim_errf(err,
                     "spec_model: %s has a vocabulary of %lld tokens, the target %s %lld (a "
                     "draft model must share the target's tokenizer)",
                     draft_model->id, (long long)draft_model->vocab, target->id,
                     (long long)target->vocab);
            return SIM_EINVAL;
        }
        s->draft = *draft_model;
    } else {
        head_model(target, s->method, &s->draft);
    }
    sim_status st = sim_model_validate(&s->draft, err);
    if (st != SIM_OK)
        return st;
    sim_spec_draft_bytes(s, target, run, &s->draft_weight_bytes, &s->draft_kv_bytes_per_token);
    return SIM_OK;
}

void sim_spec_draft_bytes(const sim_spec *s, const sim_model *target, const sim_run_cfg *run,
                          double *weight_bytes, double *kv_bytes_per_token)
{
    *weight_bytes = *kv_bytes_per_token = 0.0;
    if (s->method == SIM_SPEC_NONE || s->method == SIM_SPEC_NGRAM)
        return;
    const sim_dtype dt = s->method == SIM_SPEC_DRAFT || s->method == SIM_SPEC_MTP
                             ? run->dtype
                             : sim_model_dtype16(target);
    sim_weight_bytes wb;
    sim_model_weight_bytes_moe(&s->draft, run->tp, run->dp, run->ep, dt, &wb);
    double w = wb.total - wb.vision;
    /* eagle and mtp use the target's embedding and LM head, eagle3 its embedding. */
    if (s->method != SIM_SPEC_DRAFT)
        w -= wb.embedding;
    /* get_rope keeps one cos/sin cache per distinct rotary configuration in the process, so a
     * drafter whose heads, rotary share and positions are the target's (eagle and mtp heads;
     * Llama-3.1-8B drafting for Llama-3.1-70B) shares the target's; another builds its own. */
    const sim_model *dm = &s->draft;
    if (s->method != SIM_SPEC_DRAFT ||
        (dm->head_dim == target->head_dim && dm->rotary_dim == target->rotary_dim &&
         dm->max_pos == target->max_pos && dm->rope_cache_rows == target->rope_cache_rows))
        w -= wb.rope;
    if (s->method == SIM_SPEC_EAGLE || s->method == SIM_SPEC_MTP)
        w -= wb.lm_head;
    /* The heads' input layer fuses hidden states: eagle d x 2d (the token's embedding and the
     * target's last hidden state), eagle3 d x 3d (three of the target's layers), unsharded. */
    if (s->method == SIM_SPEC_EAGLE || s->method == SIM_SPEC_EAGLE3) {
        const double d = (double)target->d_model;
        w += (s->method == SIM_SPEC_EAGLE ? 2.0 : 3.0) * d * d * sim_dtype_bytes(dt);
    }
    *weight_bytes = w > 0.0 ? w : 0.0;
    *kv_bytes_per_token = sim_model_kv_bytes_per_token(&s->draft, run->tp, run->kv_dtype);
}

sim_status sim_spec_fill(sim_spec_method m, int64_t k, const double *rates, int64_t n,
                         sim_spec *out, struct sim_err *err)
{
    *out = (sim_spec){.method = m, .k = k};
    if (k < 1 || k > SIM_SPEC_MAX_TOKENS || n < 1 || (n != 1 && n != k) || !rates) {
        sim_errf(err,
                 "spec_tokens and acceptance: expected 1 to %d speculative tokens and one "
                 "acceptance rate, or one per token (got %lld tokens, %lld rates)",
                 SIM_SPEC_MAX_TOKENS, (long long)k, (long long)n);
        return SIM_EINVAL;
    }
    for (int64_t i = 0; i < k; i++)
        out->accept[i] = rates[n == 1 ? 0 : i];
    return SIM_OK;
}

double sim_spec_expected_tokens(const sim_spec *s)
{
    double p = 1.0, e = 1.0;
    for (int64_t i = 0; i < s->k; i++) {
        p *= s->accept[i];
        e += p;
    }
    return e;
}

/* splitmix64 (as workload.c). */
static uint64_t mix(uint64_t *z)
{
    uint64_t v = (*z += UINT64_C(0x9E3779B97F4A7C15));
    v = (v ^ (v >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    v = (v ^ (v >> 27)) * UINT64_C(0x94D049BB133111EB);
    return v ^ (v >> 31);
}

int64_t sim_spec_accepted(const sim_spec *s, int64_t scheduled, uint64_t key)
{
    uint64_t z = key;
    for (int64_t i = 0; i < scheduled && i < s->k; i++) {
        const double a = s->accept[i];
        if (a >= 1.0)
            continue;
        if (a <= 0.0)
            return i;
        const double u = ((double)(mix(&z) >> 11) + 0.5) * 0x1.0p-53;
        if (u >= a)
            return i;
    }
    return scheduled < s->k ? scheduled : s->k;
}
