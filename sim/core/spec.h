/*
 * spec.h - speculative decoding in vLLM V1 (docs/engine.md, "Speculative decoding"): a
 * drafter proposes k tokens per decoding request; the next step verifies them with the
 * target model (k + 1 tokens per request, as one chunk at the request's context) and keeps
 * the accepted ones and one more.
 *
 * Methods (vLLM --speculative-config "method"):
 *  - ngram: prompt lookup on the CPU (vllm/v1/spec_decode/ngram_proposer.py): no GPU cost;
 *  - eagle, eagle3: a one-layer head on the target's hidden states
 *    (vllm/v1/spec_decode/eagle.py): its first pass runs over every token the step scheduled,
 *    then k - 1 passes of one token per decoding request; eagle shares the target's
 *    embedding and LM head, eagle3 has an LM head of its own over a 32,000-token draft
 *    vocabulary (draft_vocab_size of the published EAGLE-3 heads);
 *  - mtp: the checkpoint's multi-token-prediction layer (DeepSeek-V3
 *    num_nextn_predict_layers; vLLM runs it through the EAGLE proposer), one layer of the
 *    target's kind, embedding and LM head shared;
 *  - draft: a separate, smaller model (the same passes as eagle, all its layers).
 * Acceptance: accept[i] is the probability that draft token i + 1 is accepted when tokens
 * 1 .. i were (the conditional acceptance rate per position). A verify step of s spec tokens
 * keeps n of them, the first rejection ending the run, and emits n + 1 tokens.
 * Pure: no I/O, no allocation.
 */
#ifndef SIM_SPEC_H
#define SIM_SPEC_H

#include <stdint.h>

#include "model.h"
#include "ops.h"
#include "status.h"

typedef enum sim_spec_method {
    SIM_SPEC_NONE = 0,
    SIM_SPEC_NGRAM,
    SIM_SPEC_EAGLE,
    SIM_SPEC_EAGLE3,
    SIM_SPEC_MTP,
    SIM_SPEC_DRAFT,
    SIM_SPEC_METHOD_COUNT
} sim_spec_method;

/* Most speculative tokens per step (vLLM's num_speculative_tokens; published runs use 1-8). */
#define SIM_SPEC_MAX_TOKENS 16

/* The draft vocabulary of EAGLE-3 heads (their config's draft_vocab_size). */
#define SIM_SPEC_EAGLE3_VOCAB 32000

typedef struct sim_spec {
    sim_spec_method method;
    int64_t k;                          /* speculative tokens per step, 1 .. SIM_SPEC_MAX_TOKENS */
    double accept[SIM_SPEC_MAX_TOKENS]; /* conditional acceptance per position, [0, 1] */
    /* Set by sim_spec_resolve: */
    sim_model draft;                 /* the drafter's model (eagle, eagle3, mtp: one layer) */
    double draft_weight_bytes;       /* per GPU, beyond the target's (shared parts left out) */
    double draft_kv_bytes_per_token; /* per GPU: the drafter's layers' KV cache */
} sim_spec;

/* "ngram", "eagle", "eagle3", "mtp", "draft"; "none"; "?" out of range. */
const char *sim_spec_method_name(sim_spec_method m);

/* Parses a method name; SIM_EINVAL for others ("none" is not a method to parse). */
sim_status sim_spec_method_parse(const char *name, sim_spec_method *out /* OUT */);

/*
 * Checks k and the acceptance rates and derives the drafter (draft, its weights and KV bytes
 * per GPU at run's tp and dtypes) for target. draft_model: the separate model of method draft
 * (required there, NULL otherwise). SIM_EINVAL naming the field on failure: k out of range,
 * an acceptance outside [0, 1] or not finite, mtp on a model without MTP layers
 * (num_nextn_predict_layers), a draft model with another vocabulary.
 */
sim_status sim_spec_resolve(sim_spec *s, const sim_model *target, const sim_model *draft_model,
                            const sim_run_cfg *run, struct sim_err *err /* OUT */);

/* The drafter's weight bytes per GPU beyond the target's and its KV bytes per token per GPU, at
 * run's TP, DP, EP and dtypes (s resolved for target; 0 for ngram): the memory model calls it
 * for each layout, sim_spec_resolve for the deployment's. */
void sim_spec_draft_bytes(const sim_spec *s, const sim_model *target, const sim_run_cfg *run,
                          double *weight_bytes /* OUT */, double *kv_bytes_per_token /* OUT */);

/* A spec of method m with k tokens from n acceptance rates: one rate for every position, or
 * one per position (n == k). SIM_EINVAL with a message naming the options otherwise (the
 * range checks are sim_spec_resolve's). */
sim_status sim_spec_fill(sim_spec_method m, int64_t k, const double *rates, int64_t n,
                         sim_spec *out /* OUT */, struct sim_err *err /* OUT */);

/* Expected tokens a verify step of all k spec tokens emits: 1 + sum_{i=1..k} prod_{j<=i}
 * accept[j-1]. */
double sim_spec_expected_tokens(const sim_spec *s);

/* Spec tokens kept of s scheduled (0 .. s), drawn with the acceptance rates from key (a
 * splitmix64 hash: the same key, the same draw; rates of 0 and 1 are exact). */
int64_t sim_spec_accepted(const sim_spec *s, int64_t scheduled, uint64_t key);

#endif
