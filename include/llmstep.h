/*
 * llmstep.h - the public C API of llmstep: predicts how long one step of an LLM inference
 * engine (vLLM) takes on a GPU, how long an offline batch takes, how a server behaves under
 * load (TTFT, TPOT), and how much fits in memory.
 *
 * How it works (docs/model.md states every formula): from a model's HuggingFace config.json
 * it counts the FLOPs and HBM bytes of every operator of one step on each GPU, turns them
 * into time with a roofline over a hardware profile's measured figures, adds the engine's
 * host time per step, and scales by a calibration: step = alpha x roofline + beta_s (+ host).
 * The offline batch and the serving run simulate the engine's scheduler step by step.
 *
 * Contract
 *  - Units: SI base units in double everywhere; the unit is in every field name
 *    (_s seconds, _bytes, _flops, _per_s, _frac in 0..1). Counts are int64_t.
 *  - Errors: every function that can fail returns an llmstep_status (0 = LLMSTEP_OK) and,
 *    when err is not NULL, fills it with the code and a one-line message that names the
 *    file, line and field at fault when a file is ("models/x.json:3:5: hidden_size: ...").
 *    Outputs are written only on success.
 *  - Ownership: a context owns the models, profiles, engines and calibrations it loads (the
 *    const pointers stay valid until llmstep_ctx_free) and loads each file once however many
 *    times it is named. A deployment is the caller's: llmstep_deploy_free releases it.
 *    Strings returned by the library are owned by the object they come from. A deployment
 *    refers to the context's loaded files: free it before llmstep_ctx_free (using it after
 *    is undefined). Getters and initializers accept NULL: a NULL object gives "" or 0 and a
 *    NULL output is not written; the functions that return a status refuse NULL with
 *    LLMSTEP_EINVAL.
 *  - Thread-safety: no global state of the library's own. GSL keeps one error handler per
 *    process: while a fit runs (llmstep_calibrate, llmstep_holdout, llmstep_validate with a
 *    fit) it is off, and the caller's is put back when the call returns. A context may be
 *    used by one thread at a time (its cache changes as files load). A deployment's const
 *    functions (llmstep_step, llmstep_step_grid, llmstep_capacity, llmstep_deploy_get_info)
 *    may run in many threads at once; llmstep_batch and llmstep_serve use the deployment's
 *    scratch, so one thread at a time per deployment. Different deployments are independent.
 *  - Data: ids ("llama-3.1-8b", "h100-sxm", "vllm-v1") resolve to <data_dir>/models,
 *    hwprofiles, engines and calibrations; a name containing '/' or ending in ".json" is
 *    a path.
 *
 * Versioning: LLMSTEP_VERSION is the release; LLMSTEP_ABI_VERSION changes whenever a
 * structure or signature here changes incompatibly (it is the shared library's SONAME
 * number). Compare llmstep_abi_version() with LLMSTEP_ABI_VERSION at run time.
 */
#ifndef LLMSTEP_H
#define LLMSTEP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLMSTEP_VERSION_MAJOR 0
#define LLMSTEP_VERSION_MINOR 5
#define LLMSTEP_VERSION_PATCH 0
#define LLMSTEP_VERSION       "0.7.0"
#define LLMSTEP_ABI_VERSION   7

#if defined(LLMSTEP_BUILDING) && defined(__GNUC__)
#define LLMSTEP_API __attribute__((visibility("default")))
#else
#define LLMSTEP_API
#endif

/* The release ("0.2.0") and the ABI number of the library actually loaded. */
LLMSTEP_API const char *llmstep_version(void);
LLMSTEP_API int llmstep_abi_version(void);

/* Status codes (the same values as the library's internal ones). */
typedef enum llmstep_status {
    LLMSTEP_OK = 0,
    LLMSTEP_EINVAL = 1, /* invalid argument (a bad option, an impossible layout) */
    LLMSTEP_EPARSE = 2, /* a file is not what it should be (JSON syntax, unknown key) */
    LLMSTEP_ERANGE = 3, /* a value out of range (does not fit, too long, not finite) */
    LLMSTEP_EIO = 4,    /* a file could not be read */
    LLMSTEP_ENOMEM = 5, /* out of memory */
    LLMSTEP_EFIT = 6,   /* a fit failed */
    LLMSTEP_STATUS_COUNT
} llmstep_status;

/* A short name for a status ("invalid argument"), "unknown status" for a value that is not
 * one; never NULL. */
LLMSTEP_API const char *llmstep_status_name(llmstep_status s);

/* What went wrong: the code and a one-line message. */
typedef struct llmstep_error {
    llmstep_status code;
    char message[512];
} llmstep_error;

/* ---- Context: where data lives, and the cache of loaded files ---------------------------- */

typedef struct llmstep_ctx llmstep_ctx;
typedef struct llmstep_model llmstep_model;
typedef struct llmstep_hw llmstep_hw;
typedef struct llmstep_engine llmstep_engine;
typedef struct llmstep_calibration llmstep_calibration;

/*
 * A new context reading ids from data_dir (NULL: $LLMSTEP_DATA_DIR; else share/llmstep of the
 * prefix the shared library (or the program) is installed in, found from its own path; else
 * the source tree the library was built from). A statically linked program is not in the
 * library's prefix: give it data_dir or $LLMSTEP_DATA_DIR. NULL on failure (err filled).
 */
LLMSTEP_API llmstep_ctx *llmstep_ctx_new(const char *data_dir, llmstep_error *err /* OUT */);
/* Frees the context and everything it loaded. NULL is allowed. */
LLMSTEP_API void llmstep_ctx_free(llmstep_ctx *ctx);
/* The folder ids resolve in. */
LLMSTEP_API const char *llmstep_ctx_data_dir(const llmstep_ctx *ctx);
/* Files loaded so far (each loaded once, whatever the number of requests). */
LLMSTEP_API size_t llmstep_ctx_n_loaded(const llmstep_ctx *ctx);

/* Loads (or finds in the cache) a model config, a hardware profile, an engine profile or a
 * calibration by id or path. The result is owned by the context. */
LLMSTEP_API llmstep_status llmstep_model_load(llmstep_ctx *ctx, const char *name,
                                              const llmstep_model **out /* OUT */,
                                              llmstep_error *err /* OUT */);
LLMSTEP_API llmstep_status llmstep_hw_load(llmstep_ctx *ctx, const char *name,
                                           const llmstep_hw **out /* OUT */,
                                           llmstep_error *err /* OUT */);
LLMSTEP_API llmstep_status llmstep_engine_load(llmstep_ctx *ctx, const char *name,
                                               const llmstep_engine **out /* OUT */,
                                               llmstep_error *err /* OUT */);
LLMSTEP_API llmstep_status llmstep_calibration_load(llmstep_ctx *ctx, const char *name,
                                                    const llmstep_calibration **out /* OUT */,
                                                    llmstep_error *err /* OUT */);

/* Facts of a loaded model. */
typedef struct llmstep_model_info {
    char id[128];
    int64_t n_layers;
    int64_t d_model;
    int64_t n_heads;
    int64_t n_kv_heads;
    int64_t head_dim;
    int64_t vocab_size;
    int64_t max_position_embeddings;
    int64_t n_experts;               /* 0: dense */
    double params;                   /* parameters, all of them (embedding and LM head included) */
    double kv_bytes_per_token_16bit; /* KV cache per token on one GPU at TP 1, 16-bit */
} llmstep_model_info;
LLMSTEP_API void llmstep_model_get_info(const llmstep_model *m, llmstep_model_info *out /* OUT */);
/* Id of a hardware profile, engine or calibration's hardware. */
LLMSTEP_API const char *llmstep_hw_id(const llmstep_hw *hw);
LLMSTEP_API const char *llmstep_engine_id(const llmstep_engine *e);
LLMSTEP_API const char *llmstep_calibration_hw_id(const llmstep_calibration *c);
/* Facts of a hardware profile (added in release 0.7.0, ABI 7 unchanged: a new function): its
 * name, memory, GPUs per node and the roofs `llmstep plot roofline` draws (HBM datasheet peak
 * and achievable = STREAM copy x the weights' access factor; tensor peaks and achievable rates
 * = peak x gemm_eff_<dtype>_frac; fp8 figures 0 without an fp8 peak). */
typedef struct llmstep_hw_info {
    char id[64];
    char name[128];
    double memory_bytes;
    int64_t n_gpus_per_node;
    double hbm_peak_bytes_per_s, hbm_achievable_bytes_per_s;
    double bf16_peak_flops_per_s, bf16_achievable_flops_per_s;
    int has_fp8;
    double fp8_peak_flops_per_s, fp8_achievable_flops_per_s;
    double fp32_peak_flops_per_s;
    double ridge_bf16_flops_per_byte;
} llmstep_hw_info;
LLMSTEP_API void llmstep_hw_get_info(const llmstep_hw *hw, llmstep_hw_info *out /* OUT */);
/* alpha and beta_s of a calibration. */
LLMSTEP_API void llmstep_calibration_get(const llmstep_calibration *c, double *alpha /* OUT */,
                                         double *beta_s /* OUT */);

/* ---- Deployment: a model on a GPU type at a parallel layout, with an engine -------------- */

typedef struct llmstep_deploy llmstep_deploy;

/* What to deploy. Fill with llmstep_deploy_spec_init, then set what differs. */
typedef struct llmstep_deploy_spec {
    const char *model;       /* id or path (required) */
    const char *hw;          /* id or path (required) */
    const char *engine;      /* NULL: the calibration's engine, else "vllm-v1" */
    const char *calibration; /* NULL: uncalibrated (alpha 1, beta_s 0) */
    const char *dtype;       /* NULL or "auto": the model's; "fp16", "bf16", "fp8" */
    const char *kv_dtype;    /* NULL or "auto": vLLM's auto; "fp16", "bf16", "fp8" */
    int64_t tp;              /* tensor-parallel GPUs (default 1) */
    /* Scheduler settings; 0 (or -1 for the switches) takes the engine's default for the
     * version, usage context and GPU, as vLLM does. */
    int64_t max_num_seqs;
    int64_t max_num_batched_tokens;
    int64_t max_model_len;
    int64_t block_size;
    double gpu_memory_utilization_frac;
    int chunked_prefill; /* -1 default, 0 off, 1 on */
    /* 0 the LLM class's defaults (offline), 1 the OpenAI server's; -1 (default): the LLM
     * class's, except that llmstep_serve and llmstep_serve_sweep simulate the server, as
     * `llmstep serve` does (ABI 6; before, they kept the LLM class's budget). */
    int usage;
    int roofline_step;  /* 0: sum of per-operator maxima (default); 1: one max per step */
    int gemm_tile_wave; /* 0: flat GEMM efficiency (default); 1: tile and wave quantization */
    int ignore_memory;  /* 1: open even when the model does not fit (capacity studies) */
    /* Layout beyond TP (0 takes the default: 1 stage, 1 rank, no EP), as the CLI's --pp, --dp,
     * --ep: pipeline stages; data-parallel ranks (llmstep_step deals each group's sequences
     * to the ranks and times the busiest, as predict; llmstep_batch spreads the batch likewise,
     * llmstep_serve deals the workload to the ranks' engines); expert parallelism (MoE). */
    int64_t pp;
    int64_t dp;
    int ep;
    /* V1 async scheduling (the next step's host work overlaps the GPU, step = max of the two):
     * -1 the engine version's default (on from vLLM 0.14), 0 off, 1 on (--async-scheduling).
     * ABI 4. */
    int async_scheduling;
    /* V1 prefix caching (--prefix-caching): -1 the engine's default (on for V1, off for V0),
     * 0 off, 1 on. It matters when a workload shares prefixes (llmstep_workload). ABI 7. */
    int prefix_caching;
    /* Speculative decoding (ABI 7), as `llmstep serve --spec`: spec_method NULL (none) or
     * "ngram", "eagle", "eagle3", "mtp", "draft"; spec_tokens draft tokens per step (1-16);
     * spec_acceptance n_spec_acceptance rates in [0, 1] (one for every position, or one per
     * position, each given the ones before it); spec_model the draft model of "draft". Served
     * by llmstep_serve; the drafter's weights and KV cache count in every memory figure. */
    const char *spec_method;
    int64_t spec_tokens;
    const double *spec_acceptance;
    size_t n_spec_acceptance;
    const char *spec_model;
} llmstep_deploy_spec;

LLMSTEP_API void llmstep_deploy_spec_init(llmstep_deploy_spec *spec /* OUT */);

/*
 * Loads (through the context's cache) and checks everything, resolves the engine's
 * defaults and the memory budget. Fails with LLMSTEP_ERANGE when the model does not fit
 * (unless ignore_memory), LLMSTEP_EINVAL for an impossible layout (TP not dividing the
 * heads, a TP above one node that is not a multiple of its GPUs) or a bad option. A TP
 * over several nodes all-reduces hierarchically over the profile's inter-node fabric; a
 * layout the model refuses (more stages than layers, experts that do not divide over
 * DP x TP, EP on a dense model) is LLMSTEP_EINVAL.
 */
LLMSTEP_API llmstep_status llmstep_deploy_open(llmstep_ctx *ctx, const llmstep_deploy_spec *spec,
                                               llmstep_deploy **out /* OUT */,
                                               llmstep_error *err /* OUT */);
LLMSTEP_API void llmstep_deploy_free(llmstep_deploy *d);

/* The resolved settings and the memory budget of one GPU. */
typedef struct llmstep_deploy_info {
    char model_id[128];
    char hw_id[64];
    char engine_id[64];
    char weight_format[32]; /* "bf16", "fp8", "awq-int4-g128", ... */
    char kv_dtype[16];
    int64_t tp;
    int64_t max_num_seqs;
    int64_t max_num_batched_tokens;
    int64_t max_model_len;
    int64_t block_size;
    double gpu_memory_utilization_frac;
    int chunked_prefill;
    double alpha;
    double beta_s;
    double capacity_bytes;     /* device memory as the engine sees it */
    double usable_bytes;       /* capacity x gpu_memory_utilization */
    double weights_bytes;      /* per GPU */
    double activation_bytes;   /* activation peak of the engine's profiling run */
    double reserve_bytes;      /* non-torch memory, CUDA graphs */
    double kv_bytes_per_token; /* per GPU */
    double kv_budget_bytes;
    int64_t kv_blocks;
    int64_t kv_capacity_tokens;
    int fits;   /* the engine starts: weights fit and one max_model_len sequence fits */
    int64_t pp; /* pipeline stages (1: none) */
    int64_t dp; /* data-parallel ranks (1: none) */
    int ep;     /* expert parallelism */
} llmstep_deploy_info;
LLMSTEP_API void llmstep_deploy_get_info(const llmstep_deploy *d,
                                         llmstep_deploy_info *out /* OUT */);

/* ---- One step ------------------------------------------------------------------------------ */

/* count sequences that each process new_tokens tokens after context_tokens cached ones.
 * Prefill: context 0; decode: new_tokens 1; a chunk of a prefill: both > 0. emits: 1 when
 * each samples a token this step (the last chunk of a prompt, a decode). */
typedef struct llmstep_group {
    int64_t count;
    int64_t new_tokens;
    int64_t context_tokens;
    int emits;
} llmstep_group;

/* One operator of a step on one GPU. */
typedef struct llmstep_op {
    const char *name;  /* "qkv_proj", "attn_decode_paged", "allreduce", ... (static) */
    const char *bound; /* "compute", "memory", "comm" or "none" (static) */
    double flops;
    double bytes;     /* HBM bytes (comm operators: message bytes) */
    double n_kernels; /* kernel launches */
    double time_s;    /* roofline time, before alpha */
} llmstep_op;

/* Most operators a step reports. */
#define LLMSTEP_MAX_OPS 32

typedef struct llmstep_step_result {
    double step_s;     /* the predicted wall time: gpu_s and host_s (overlapped if async) */
    double gpu_s;      /* alpha x roofline_s + beta_s */
    double roofline_s; /* sum over operators (or the step maximum) incl. communication */
    double host_s;     /* the engine's host time for this step */
    double comm_s;     /* all-reduce part of roofline_s */
    double flops;      /* per GPU */
    double bytes;      /* HBM bytes per GPU */
    double tokens;     /* new tokens */
    double seqs;       /* sequences */
    const char *bound; /* "compute" or "memory": the larger of the step's totals (static) */
} llmstep_step_result;

/*
 * Predicts one step of n_groups groups (1..64). ops: NULL, or room for ops_cap operators;
 * *n_ops (when not NULL) gets the number written, in execution order. With data-parallel
 * ranks each group's sequences are dealt to the ranks and the busiest rank is timed, as
 * `llmstep predict` does. Unless the deployment was opened with ignore_memory, a step the
 * engine could not hold (its sequences' KV blocks above the cache, more than max_num_seqs,
 * or longer than max_model_len) is LLMSTEP_ERANGE, as `llmstep predict` refuses it.
 */
LLMSTEP_API llmstep_status llmstep_step(const llmstep_deploy *d, const llmstep_group *groups,
                                        size_t n_groups, llmstep_step_result *out /* OUT */,
                                        llmstep_op *ops /* OUT */, size_t ops_cap,
                                        size_t *n_ops /* OUT */, llmstep_error *err /* OUT */);

/*
 * n steps of one group each (count[i] sequences of new_tokens[i] tokens after
 * context_tokens[i], all sampling), step_s[i] = the predicted wall time: the fast path for
 * sweeps (a few hundred nanoseconds per point). A point the engine could not hold (as in
 * llmstep_step) gets NaN. Fails on the first bad point, naming its index; step_s is then
 * partly written.
 */
LLMSTEP_API llmstep_status llmstep_step_grid(const llmstep_deploy *d, size_t n,
                                             const int64_t *count, const int64_t *new_tokens,
                                             const int64_t *context_tokens,
                                             double *step_s /* OUT */,
                                             llmstep_error *err /* OUT */);

/* ---- Prediction bands ------------------------------------------------------------------------ */

/*
 * The band of a prediction (docs/calibration.md, "Prediction intervals and the drift alarm"):
 * the central level_pct interval (10, 20, ..., 100) of the measured / predicted ratios that
 * the deployment's calibration recorded for one family of rows ("offline_batch", "prefill",
 * "decode", "step", "ttft", "ttft_queued", "tpot" or "e2e"), predicted by fits that had not seen
 * them. A prediction p of that family lies in [*lo_frac x p, *hi_frac x p] as often as those rows
 * did; *n_rows (may be NULL) is how many there were. The same numbers as the CLI's
 * --interval. LLMSTEP_EINVAL with the reason: an unknown family or level, an uncalibrated
 * deployment, a calibration without a band or without rows of that family.
 */
LLMSTEP_API llmstep_status llmstep_deploy_band(const llmstep_deploy *d, const char *family,
                                               int level_pct, double *lo_frac /* OUT */,
                                               double *hi_frac /* OUT */, int64_t *n_rows /* OUT */,
                                               llmstep_error *err /* OUT */);

/* LLMSTEP_OK when level_pct is a level a band gives (10, 20, ..., 100), else LLMSTEP_EINVAL
 * with the CLI's message for --interval ("level 85%: expected 10, 20, ..., 100 ..."). ABI 6. */
LLMSTEP_API llmstep_status llmstep_band_level_check(int level_pct, llmstep_error *err /* OUT */);

/* The band family of a serving run's TTFT, as `llmstep serve --interval` and `sweep --interval`
 * pick it: "ttft_queued" when ttft_queued (llmstep_serve_result, llmstep_sweep_row) is
 * non-zero, else "ttft". ABI 6. */
LLMSTEP_API const char *llmstep_ttft_band_family(int ttft_queued);

/* The band family of a step of these groups, as the CLI's predict --interval picks it:
 * "decode" when every group decodes (one new token after cached ones), "prefill" when every
 * group is a whole prompt (none cached), else "step"; "" for NULL or no group. */
LLMSTEP_API const char *llmstep_step_band_family(const llmstep_group *groups, size_t n_groups);

/* ---- Capacity ------------------------------------------------------------------------------ */

typedef struct llmstep_capacity_result {
    int64_t context_tokens;      /* tokens held per sequence (prompt + output) */
    int64_t blocks_per_seq;      /* ceil(context / block_size) */
    int64_t max_seqs_by_kv;      /* sequences the KV cache holds */
    int64_t max_seqs_at_context; /* min(that, max_num_seqs); 0 if the engine does not start */
    int fits;
} llmstep_capacity_result;

/* How many sequences of context_tokens (>= 1) tokens run at once. */
LLMSTEP_API llmstep_status llmstep_capacity(const llmstep_deploy *d, int64_t context_tokens,
                                            llmstep_capacity_result *out /* OUT */,
                                            llmstep_error *err /* OUT */);

/* ---- Offline batch ------------------------------------------------------------------------- */

typedef struct llmstep_batch_result {
    double latency_s; /* the whole batch */
    double prefill_s;
    double decode_s;
    double roofline_sum_s;
    double host_sum_s;
    int64_t n_steps;
    int64_t n_prefill_steps;
    int64_t n_decode_steps;
    int64_t preemptions;
    double peak_kv_frac;
} llmstep_batch_result;

/* batch prompts of prompt_tokens tokens, each generating output_tokens, added at once (the
 * LLM class's generate()). batch <= 4096. */
LLMSTEP_API llmstep_status llmstep_batch(llmstep_deploy *d, int64_t batch, int64_t prompt_tokens,
                                         int64_t output_tokens, llmstep_batch_result *out /* OUT */,
                                         llmstep_error *err /* OUT */);

/* ---- Serving ------------------------------------------------------------------------------- */

typedef enum llmstep_arrival {
    LLMSTEP_ARRIVAL_CLOSED = 0,  /* concurrency clients, each sends its next on completion */
    LLMSTEP_ARRIVAL_POISSON = 1, /* open loop: gamma inter-arrivals (shape = burstiness) */
    LLMSTEP_ARRIVAL_TRACE = 2,   /* open loop: a JSONL trace (arrival_s, prompt_tokens,
                                    output_tokens per line) */
    LLMSTEP_ARRIVAL_COUNT
} llmstep_arrival;

/* A workload. Fill with llmstep_workload_init (the defaults of `llmstep serve`). */
typedef struct llmstep_workload {
    llmstep_arrival arrival;
    int64_t concurrency;     /* closed loop clients */
    double rate_per_s;       /* open loop mean request rate */
    double burstiness;       /* gamma shape of the inter-arrival times (1: Poisson) */
    int64_t prompt_tokens;   /* mean prompt length */
    int64_t output_tokens;   /* mean output length */
    double range_ratio;      /* lengths uniform in [L(1-r), L(1+r)], 0 <= r < 1; -1 (the
                                init's): the default spread, 0.1 (`llmstep serve`) */
    int64_t num_requests;    /* measured requests (0: closed 10 x concurrency, open 1000) */
    int64_t warmup_requests; /* sent first and left out (-1: none, as benchmark clients) */
    uint64_t seed;
    const char *trace_path; /* LLMSTEP_ARRIVAL_TRACE */
    double slo_ttft_s;      /* goodput: TTFT limit (0: none) */
    double slo_tpot_s;      /* goodput: TPOT limit (0: none) */
    /* Shared prefixes (ABI 7; 0: none; at most one of the two), as `llmstep serve
     * --prefix-tokens P` (every prompt starts with the same P tokens) or --distinct-prompts K
     * (prompts drawn from a pool of K, aiperf's dataset entries). Traces give them per
     * request. */
    int64_t prefix_tokens;
    int64_t distinct_prompts;
} llmstep_workload;

LLMSTEP_API void llmstep_workload_init(llmstep_workload *w /* OUT */);

typedef struct llmstep_dist {
    double mean, p50, p90, p99;
} llmstep_dist;

typedef struct llmstep_serve_result {
    llmstep_dist ttft_s; /* first token - arrival */
    llmstep_dist tpot_s; /* (finish - first token) / (output tokens - 1) */
    llmstep_dist itl_s;  /* time between consecutive tokens */
    llmstep_dist e2e_s;  /* finish - arrival */
    double request_throughput_per_s;
    double output_tokens_per_s;
    double goodput_per_s; /* requests per second meeting both SLOs */
    double duration_s;    /* first arrival to last finish */
    double kv_peak_frac;
    int64_t queue_peak;
    int64_t preemptions;
    int64_t n_requests; /* measured */
    int64_t n_steps;
    /* ABI 6: arrival to the first step that schedules the request (the part of TTFT spent
     * waiting), and whether the run's TTFT is mostly that wait (mean wait >= half the mean
     * TTFT; docs/calibration.md, "Regimes"): its band family is then "ttft_queued", else
     * "ttft" (llmstep_ttft_band_family). */
    llmstep_dist queue_s;
    int32_t ttft_queued;
    /* ABI 7: prompt tokens found in the prefix cache over those looked up (vLLM's prefix
     * cache hit rate), 0 when nothing is shared or prefix caching is off. */
    double prefix_hit_frac;
    /* ABI 7: with speculative decoding, draft tokens accepted over those verified (0 without). */
    double spec_accepted_frac;
} llmstep_serve_result;

/* Simulates the engine serving the workload, request by request and step by step. */
LLMSTEP_API llmstep_status llmstep_serve(llmstep_deploy *d, const llmstep_workload *w,
                                         llmstep_serve_result *out /* OUT */,
                                         llmstep_error *err /* OUT */);

/*
 * 1 when r meets the service-level objectives at a percentile of TTFT and TPOT (50, 90 or
 * 99; anything else: 90): each limit <= 0 is none, and a TPOT that is NaN (one-token
 * outputs) is not judged. The rule of `llmstep sweep --kind serving`'s meets_slo.
 */
LLMSTEP_API int llmstep_meets_slo(const llmstep_serve_result *r, double slo_ttft_s,
                                  double slo_tpot_s, int percentile);

/* Called after each point of a serving sweep; a non-zero return stops the sweep there. */
typedef int (*llmstep_serve_cb)(void *user, size_t i, double load, const llmstep_serve_result *r,
                                int meets_slo);

/*
 * Disaggregated serving (ABI 7), as `llmstep serve --disagg xPyD`: n_prefill instances of the
 * deployment prefill and n_decode of decode (the same model and GPU; each at its own TP), an
 * open-loop workload (rate or trace; a closed loop is LLMSTEP_EINVAL), the KV pulled over
 * NVLink when both pools fit in one node, else the inter-node fabric. out as llmstep_serve's,
 * from the client's view (TTFT from arrival to the decode instance's first token);
 * *kv_transfer_mean_s (may be NULL) the mean transfer. docs/serving.md, "Disaggregated
 * prefill and decode".
 */
LLMSTEP_API llmstep_status llmstep_serve_disagg(llmstep_deploy *prefill, llmstep_deploy *decode,
                                                int64_t n_prefill, int64_t n_decode,
                                                const llmstep_workload *w,
                                                llmstep_serve_result *out /* OUT */,
                                                double *kv_transfer_mean_s /* OUT */,
                                                llmstep_error *err /* OUT */);

/*
 * A serving sweep over load: for each of the n loads (the concurrency of a closed loop, a whole
 * number, or the request rate per second of a Poisson/gamma workload, as w->arrival says; a
 * trace is refused), serves w at that load. Results go to out[i] and meets_slo[i] (either may
 * be NULL; else room for n) and to cb (may be NULL), in order. The SLOs are w->slo_ttft_s
 * and w->slo_tpot_s at slo_percentile (50, 90 or 99; 0: 90), as llmstep_meets_slo judges.
 * Stops at the first error (earlier points are kept) or when cb returns non-zero.
 */
LLMSTEP_API llmstep_status llmstep_serve_sweep(llmstep_deploy *d, const llmstep_workload *w,
                                               const double *loads, size_t n, int slo_percentile,
                                               llmstep_serve_result *out /* OUT */,
                                               int *meets_slo /* OUT */, llmstep_serve_cb cb,
                                               void *user, llmstep_error *err /* OUT */);

/* ---- Configuration sweeps ---------------------------------------------------------------- */

typedef enum llmstep_sweep_kind {
    LLMSTEP_SWEEP_DECODE = 0,  /* one decode step of batch sequences at each context */
    LLMSTEP_SWEEP_PREFILL = 1, /* one prefill step of batch prompts of context tokens */
    LLMSTEP_SWEEP_OFFLINE = 2, /* an offline batch (llmstep_batch) of batch prompts */
    LLMSTEP_SWEEP_SERVING = 3, /* a serving run (llmstep_serve) per concurrency or rate */
    LLMSTEP_SWEEP_KIND_COUNT
} llmstep_sweep_kind;

/*
 * A sweep, as `llmstep sweep`: every model x hardware block, each over TP x batch x context
 * (decode, prefill), TP x batch (offline), or TP x load (serving: the batch values as closed
 * loop concurrencies, or rates for an open loop). Fill with llmstep_sweep_spec_init.
 */
typedef struct llmstep_sweep_spec {
    const char *const *models; /* 1..32 ids or paths */
    size_t n_models;
    const char *const *hws; /* 1..32 */
    size_t n_hws;
    llmstep_sweep_kind kind;
    const int64_t *tp; /* 1..4096 each; n_tp >= 1 */
    size_t n_tp;
    const int64_t *batch; /* sequences (serving: concurrency), >= 1 each */
    size_t n_batch;
    const int64_t *context; /* decode: cached tokens (>= 0); prefill: prompt tokens (>= 1) */
    size_t n_context;
    int64_t prompt_tokens, output_tokens; /* offline and serving (>= 1) */
    const double *rates;                  /* serving: open-loop requests/s; n_rates 0: closed */
    size_t n_rates;
    int64_t num_requests; /* serving: measured per point (0: closed 10 x concurrency, open 1000) */
    double range_ratio, burstiness; /* serving workload, as llmstep_workload (range_ratio -1:
                                       the default spread; burstiness 0: 1) */
    uint64_t seed;
    const char *calibration;       /* NULL, a file or id for one swept GPU, or a folder */
    const char *engine;            /* NULL: each GPU's calibration's, else vllm-v1 (as the CLI) */
    const char *dtype, *kv_dtype;  /* NULL: the model's */
    int no_host;                   /* 1: leave the engine's host time out */
    double slo_ttft_s, slo_tpot_s; /* <= 0: none; judged at slo_percentile (serving) */
    int slo_percentile;            /* 50, 90 or 99 (0: 90) */
    double gpu_hour_usd;           /* <= 0: no cost column */
    /* Scheduler settings, as in llmstep_deploy_spec (0 or -1: the engine's defaults; usage
     * -1: the server's for serving, else the LLM class's). */
    int64_t max_num_seqs, max_num_batched_tokens, max_model_len, block_size;
    double gpu_memory_utilization_frac;
    int chunked_prefill, usage;
    /* Layouts beyond TP, as `llmstep sweep --pp LIST --dp LIST --ep`: pipeline stages and
     * data-parallel ranks crossed with the TPs (n_pp / n_dp 0: 1 only), expert parallelism on
     * every row (ep 1), or swept as `--ep 0,1` (n_ep values of eps, each 0 or 1; n_ep 0: ep). */
    const int64_t *pp;
    size_t n_pp;
    const int64_t *dp;
    size_t n_dp;
    int ep;
    const int *eps; /* added in ABI 3 */
    size_t n_ep;
    /* Serving: each point simulated with seeds seed .. seed + n_seeds - 1 (0 or 1: one), as
     * `llmstep sweep --seeds N`: mean statistics, the SLO judged on the worst seed. ABI 3. */
    int64_t n_seeds;
    int async_scheduling; /* as in llmstep_deploy_spec: -1 default, 0 off, 1 on. ABI 4. */
    /* Serving sweeps: threads that simulate the points, as `llmstep sweep --jobs N` (0 or 1:
     * the calling thread only, the default; at most 256). The rows and their order do not
     * depend on it; the callback is called on the calling thread, the rows of 8 x jobs points
     * at a time (one with one thread), in order. ABI 5. */
    int jobs;
    /* Serving: prefix caching and shared prefixes, as llmstep_deploy_spec.prefix_caching and
     * llmstep_workload's fields (-1, 0, 0: the engine's default, nothing shared). ABI 7. */
    int prefix_caching;
    int64_t prefix_tokens, distinct_prompts;
    /* Serving: speculative decoding, as in llmstep_deploy_spec (spec_method NULL: none). ABI 7. */
    const char *spec_method;
    int64_t spec_tokens;
    const double *spec_acceptance;
    size_t n_spec_acceptance;
    const char *spec_model;
} llmstep_sweep_spec;

LLMSTEP_API void llmstep_sweep_spec_init(llmstep_sweep_spec *spec /* OUT */);

/* The values `llmstep sweep` takes for an axis it is not given: "tp" (1, 2, 4, 8), "batch" and
 * "concurrency" (1, 2, 4, ..., 256), "context" (2048). Writes up to cap of them to out (may be
 * NULL with cap 0) and returns how many there are; 0 for an unknown or NULL axis. ABI 6. */
LLMSTEP_API size_t llmstep_sweep_default_axis(const char *axis, int64_t *out /* OUT */, size_t cap);

/* Rows the sweep yields: n_models x n_hws x max(n_pp, 1) x max(n_dp, 1) x n_tp x (n_batch x
 * n_context, n_batch, or the loads); 0 when spec is NULL. */
LLMSTEP_API size_t llmstep_sweep_size(const llmstep_sweep_spec *spec);

/* Why a point does or does not run (`llmstep sweep`'s status column). */
typedef enum llmstep_sweep_status {
    LLMSTEP_SWEEP_OK = 0,        /* fits */
    LLMSTEP_SWEEP_NO_MEMORY = 1, /* the engine does not start */
    LLMSTEP_SWEEP_KV_FULL = 2,   /* batch above the KV capacity or max_num_seqs */
    LLMSTEP_SWEEP_TOO_LONG = 3,  /* context above max_model_len */
    LLMSTEP_SWEEP_BAD_TP = 4,    /* the model cannot be sharded over tp GPUs */
    LLMSTEP_SWEEP_IDLE_RANK = 5  /* a closed loop with fewer clients than DP ranks (ABI 3) */
} llmstep_sweep_status;

/* "ok", "no_memory", "kv_full", "too_long", "bad_tp", "idle_rank"; "?" for others. */
LLMSTEP_API const char *llmstep_sweep_status_name(int status);

/* One point. Figures that do not apply to the kind are NaN (-1 for counts). */
typedef struct llmstep_sweep_row {
    int32_t model_index, hw_index; /* into spec->models and spec->hws */
    int32_t kind;                  /* llmstep_sweep_kind */
    int32_t status;                /* llmstep_sweep_status */
    int32_t fits, meets_slo, calibrated;
    int32_t bound; /* 1 compute, 2 memory, 0 none (decode, prefill, offline) */
    double alpha, beta_s;
    int64_t tp, batch, context_tokens, prompt_tokens, output_tokens;
    int64_t concurrency; /* serving closed loop; -1 */
    double rate_per_s;   /* serving open loop; NaN */
    double time_s;       /* step time, batch latency, or serving E2E at the SLO percentile */
    double tpot_s, ttft_s;
    double tokens_per_s, tokens_per_s_per_gpu, cost_per_mtok_usd;
    int64_t n_requests, preemptions; /* serving */
    double requests_per_s, kv_peak_frac;
    llmstep_dist ttft_dist_s, tpot_dist_s, e2e_dist_s; /* serving */
    int64_t pp, dp;                                    /* the layout: GPUs = tp x pp x dp */
    int32_t ep;
    /* Serving over n_seeds seeds (ABI 3): ttft_s and tpot_s are the worst seed's, the
     * spreads their range over the seeds (0 with one seed). */
    int64_t n_seeds;
    double ttft_spread_s, tpot_spread_s;
    /* Serving (ABI 6): the mean wait from arrival to the first step (NaN otherwise), and 1
     * when the TTFT is mostly that wait (as llmstep_serve_result; over seeds, on the means). */
    double queue_mean_s;
    int32_t ttft_queued;
    /* Serving (ABI 7): the prefix cache hit rate (as llmstep_serve_result; over seeds, the
     * mean; NaN otherwise). */
    double prefix_hit_frac;
} llmstep_sweep_row;

/* Called with each row in sweep order; a non-zero return stops the sweep. */
typedef int (*llmstep_sweep_cb)(void *user, const llmstep_sweep_row *row);

/*
 * Runs the sweep (the code of `llmstep sweep`, same rows): rows go to rows[0..cap) (may be
 * NULL; room for llmstep_sweep_size rows holds them all; *n_rows, when not NULL, counts the
 * rows produced) and to cb (may be NULL). Every name loads before the first row.
 */
/* The checks llmstep_sweep makes of spec before it loads or computes anything (axis lengths
 * and values, workload, SLOs), with the same status and message; a caller can run them before
 * allocating llmstep_sweep_size rows (Python does). ABI 6. */
LLMSTEP_API llmstep_status llmstep_sweep_check(const llmstep_sweep_spec *spec,
                                               llmstep_error *err /* OUT */);

LLMSTEP_API llmstep_status llmstep_sweep(llmstep_ctx *ctx, const llmstep_sweep_spec *spec,
                                         llmstep_sweep_row *rows /* OUT */, size_t cap,
                                         size_t *n_rows /* OUT */, llmstep_sweep_cb cb, void *user,
                                         llmstep_error *err /* OUT */);

/*
 * The row `llmstep sweep --best` keeps among rows[0..n) (one model and hardware block): of
 * those that meet the SLOs, the highest tokens_per_s_per_gpu, then the lowest latency (TTFT
 * for prefill, else TPOT). Its index, or -1 when none meets them. Added in ABI 3.
 */
LLMSTEP_API long long llmstep_sweep_best(const llmstep_sweep_row *rows, size_t n);

/* The seeds `llmstep sweep --best` judges a serving point over by default when the workload
 * is random (n_seeds for a planning answer; 20). Added in ABI 3. */
LLMSTEP_API int llmstep_sweep_planning_seeds(void);

/* ---- Measurements: validate, calibrate, holdout ------------------------------------------- */

/*
 * Which measurement rows (../shared/MEASUREMENTS.md JSON Lines) and how to predict and fit
 * them. Fill with llmstep_meas_spec_init. The rows are those of rows_jsonl (text in memory,
 * when not NULL; messages name it "<rows>") followed by those of the files; at least one of
 * the two must be given.
 */
typedef struct llmstep_meas_spec {
    const char *const *files; /* n_files paths (0..64) */
    size_t n_files;
    const char *const *select; /* "field=value" terms every kept row matches (as --select) */
    size_t n_select;
    const char *const *exclude; /* "field=value" terms no kept row matches (as --exclude) */
    size_t n_exclude;
    const char *engine; /* NULL: each row's engine_version decides ("vllm-v0" without one) */
    int no_host;        /* 1: leave the engine's host time out of the predictions */
    int roofline_step;  /* as in llmstep_deploy_spec */
    int gemm_tile_wave;
    int weighting_absolute; /* 0: relative errors (default); 1: seconds */
    double alpha_min, alpha_max, beta_min_s, beta_max_s; /* box of the fit (defaults: [0.1, 10],
                                                            [0, 1] s) */
    const char *rows_jsonl; /* NULL, or rows_jsonl_len bytes of JSON Lines rows (no NUL) */
    size_t rows_jsonl_len;
    /* NULL or "engine-defaults": rows without a "scheduler" object run with the engine's
     * defaults; "aic-benchmark": closed-loop serving rows without one get the engine
     * arguments of aiconfigurator's benchmark mode (as validate --scheduler-rule; see
     * docs/model.md, "Engine arguments of measured rows"). Added in ABI 2. */
    const char *scheduler_rule;
} llmstep_meas_spec;

LLMSTEP_API void llmstep_meas_spec_init(llmstep_meas_spec *spec /* OUT */);

/* Errors of predictions against measurements. */
typedef struct llmstep_validation {
    int64_t n_rows;
    double mape_pct;
    double median_ape_pct;
    double max_ape_pct;
    double r2;            /* NaN when undefined (fewer than 2 distinct measurements) */
    double alpha, beta_s; /* applied (validate); the last fold's (holdout) */
} llmstep_validation;

/* A fitted calibration. */
typedef struct llmstep_fit {
    char hardware[128];
    char engine[64]; /* whose host time the fit took as known; "none" with no_host */
    double alpha, beta_s;
    double alpha_stderr, beta_stderr_s; /* NaN with only two rows */
    int alpha_at_bound, beta_at_bound;
    int64_t n_rows;
    llmstep_validation fit; /* the errors of the fit on its own rows */
} llmstep_fit;

/*
 * Rows left out, as the commands leave them out by default (docs/calibration.md): rows whose
 * run.assumed names a field the prediction uses are neither predicted nor fitted here; rows
 * with a per-call constant are in the errors but no fit takes them.
 *
 * Predicts the selected rows with calibration (NULL: alpha 1, beta_s 0; a calibration must
 * be for the rows' one hardware profile) and reports the errors. predicted_s and
 * measured_s: NULL or room for cap rows, filled in file order (the first cap rows).
 */
LLMSTEP_API llmstep_status llmstep_validate(llmstep_ctx *ctx, const llmstep_meas_spec *spec,
                                            const char *calibration, double *predicted_s /* OUT */,
                                            double *measured_s /* OUT */, size_t cap,
                                            llmstep_validation *out /* OUT */,
                                            llmstep_error *err /* OUT */);

/* Fits alpha and beta_s to the selected rows (one hardware profile, one engine, >= 2 rows). */
LLMSTEP_API llmstep_status llmstep_calibrate(llmstep_ctx *ctx, const llmstep_meas_spec *spec,
                                             llmstep_fit *out /* OUT */,
                                             llmstep_error *err /* OUT */);

/*
 * The same fit, then the calibration file written to path atomically (a temporary file
 * renamed over it; a path that exists and is not a regular file is refused), in the format
 * `llmstep calibrate --out` writes and --calibration and llmstep_deploy_spec read
 * (../shared/MEASUREMENTS.md, "Calibration file"). Nothing is written when the fit fails.
 */
LLMSTEP_API llmstep_status llmstep_calibrate_write(llmstep_ctx *ctx, const llmstep_meas_spec *spec,
                                                   const char *path, llmstep_fit *out /* OUT */,
                                                   llmstep_error *err /* OUT */);

/*
 * Leave-one-group-out: for each value of field (model, hardware, kind, dtype, engine, tp,
 * batch, prompt_tokens, output_tokens, context_tokens, metric, concurrency), a fit on the
 * other rows predicts the held-out ones; the errors are over every row so predicted.
 */
LLMSTEP_API llmstep_status llmstep_holdout(llmstep_ctx *ctx, const llmstep_meas_spec *spec,
                                           const char *field, double *predicted_s /* OUT */,
                                           double *measured_s /* OUT */, size_t cap,
                                           llmstep_validation *out /* OUT */,
                                           llmstep_error *err /* OUT */);

#ifdef __cplusplus
}
#endif

#endif
