/*
 * cmd_capacity.c - `llmstep capacity`: the memory budget of one GPU (weights,
 * activation peak, reserve, KV cache), the KV capacity in tokens and blocks,
 * how many sequences of a context fit, whether the engine starts at all, and
 * the smallest TP at which it does. All figures come from the engine's memory
 * model (sim_memory_compute via sim_capacity_compute), the one the batch
 * simulation admits sequences by.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "cli.h"
#include "opts.h"
#include "units.h"

/* The usage around the options' help, which the option table holds. */
static const cli_help capacity_help = {
    .head =
        "usage: llmstep capacity --model ID --hw ID [--tp N | --tp all] [--pp N] [--dp N] [--ep]\n"
        "                        [--dtype T]\n"
        "                        [--kv-dtype T] [--max-model-len N] [--gpu-memory-utilization F]\n"
        "                        [--context C | --prompt-tokens L --output-tokens O] [--usage U]\n"
        "                        [--engine ID] [--format table|json]\n"
        "\n"
        "Memory of one GPU of a tensor-parallel group as vLLM budgets it at start-up\n"
        "(docs/engine.md):\n"
        "  usable      = device memory x gpu_memory_utilization (V1: the memory CUDA reports,\n"
        "                mem_cuda_total_bytes; an 80 GB H100 reports 79.19 GiB)\n"
        "  weights     = this GPU's shard of the weights (docs/model.md, weights per GPU)\n"
        "  activations = peak of vLLM's profiling forward pass: max_num_batched_tokens x\n"
        "                (2 d + 3 F/tp) x 2 bytes (residual, normed input, gate/up and\n"
        "                activation outputs) + max_num_seqs x vocab x 8 bytes (fp32 logits and\n"
        "                probabilities of the sampler)\n"
        "  reserve     = the engine profile's reserve_bytes (V1: non-torch memory, 0.25 GiB;\n"
        "                V0: CUDA context and workspaces, 1 GiB) plus reserve_tp_bytes at TP > 1\n"
        "  KV budget   = usable - weights - activations - reserve\n"
        "  KV blocks   = floor(KV budget / (block_size x KV bytes per token per GPU))\n"
        "Weights of quantized configs (quantization_config) include scales and zero points.\n"
        "The engine starts (fits) when the KV cache holds one max_model_len sequence. At\n"
        "context C, max sequences = min(max_num_seqs, floor(KV blocks / ceil(C / block_size))):\n"
        "with --prompt-tokens L --output-tokens O, C = L + O, the concurrency the cache holds\n"
        "before requests wait for blocks or are preempted. The smallest layout that fits is\n"
        "searched over TP (powers of two) x PP of up to 64 GPUs, one node or whole nodes:\n"
        "fewest GPUs, then TP within a node and PP across nodes.\n"
        "\n",
    .tail = "\n"
            "Example:\n"
            "  llmstep capacity --model llama-3.1-70b --hw h100-sxm --tp 2 --max-model-len 8192 "
            "--context 4096\n",
};

/* TPs that --tp all considers: powers of two up to the profile's n_gpus_per_node (8). */
static const int64_t all_tps[] = {1, 2, 4, 8, 16, 32, 64};
#define N_ALL_TPS ((int)(sizeof(all_tps) / sizeof(all_tps[0])))

typedef struct tp_result {
    int64_t tp, pp;
    int legal;
    char why[512]; /* when not legal */
    sim_capacity cap;
    int spec;                  /* speculative decoding: the drafter's share (spec.h) */
    double draft_weight_bytes; /* per GPU, in the weights */
    double draft_kv_bytes;     /* per token per GPU, in the KV cache's */
} tp_result;

static void compute_tp(const cli_run *r, int64_t tp, int64_t pp, int64_t context, tp_result *out)
{
    struct sim_err err;
    memset(out, 0, sizeof(*out));
    out->tp = tp;
    out->pp = pp;
    sim_run_cfg cfg = r->cfg;
    cfg.tp = (int)tp;
    cfg.pp = (int)pp;
    out->legal = sim_model_check_tp(&r->model, (int)tp, &err) == SIM_OK &&
                 sim_deploy_check_layout(&r->model, &r->hw, tp, pp, "", &err) == SIM_OK &&
                 sim_moe_layout_check(&r->model, &cfg, &err) == SIM_OK;
    if (!out->legal) {
        snprintf(out->why, sizeof(out->why), "%s", err.msg);
        return;
    }
    sim_setup su = cli_run_setup(r);
    su.run = &cfg;
    sim_capacity_compute(&su, context, &out->cap);
    if (cfg.spec) {
        out->spec = 1;
        sim_spec_draft_bytes(cfg.spec, &r->model, &cfg, &out->draft_weight_bytes,
                             &out->draft_kv_bytes);
    }
}

/*
 * With windowed layers credited by vLLM V1's hybrid KV-cache manager: the full layers' figure
 * per token and the windowed layers' capped bytes per sequence, apart. Printed only then, so
 * the output of models without a window is unchanged.
 */
static void print_json_window(sim_jw *w, const sim_capacity *cp)
{
    const sim_kv_layout *k = &cp->mem.kv;
    if (k->n_window_layers == 0)
        return;
    sim_jw_int(w, "kv_full_layers", k->n_full_layers);
    sim_jw_int(w, "kv_window_layers", k->n_window_layers);
    sim_jw_int(w, "sliding_window_tokens", k->window);
    sim_jw_bool(w, "window_chunked", k->chunked);
    sim_jw_int(w, "kv_cache_groups", k->n_full_groups + k->n_window_groups);
    sim_jw_int(w, "kv_group_layers", k->group_layers);
    sim_jw_num(w, "kv_full_bytes_per_token_per_gpu", cp->mem.kv_full_bytes_per_token);
    sim_jw_num(w, "kv_full_bytes_per_seq_per_gpu", cp->kv_full_bytes_per_seq);
    sim_jw_num(w, "kv_window_bytes_per_seq_per_gpu", cp->kv_window_bytes_per_seq);
    sim_jw_num(w, "kv_bytes_per_seq_per_gpu", cp->kv_bytes_per_seq);
    sim_jw_int(w, "kv_blocks_max_model_len", cp->mem.kv_blocks_max_seq);
    sim_jw_num(w, "max_concurrency_at_max_model_len", cp->max_concurrency_max_len);
}

/* One layout's figures, an object at key (NULL in an array). */
static void print_json_tp(sim_jw *w, const char *key, const tp_result *t)
{
    sim_jw_object_begin(w, key);
    sim_jw_int(w, "tp", t->tp);
    sim_jw_int(w, "pp", t->pp);
    sim_jw_bool(w, "legal", t->legal);
    if (!t->legal) {
        sim_jw_bool(w, "fits", 0);
        sim_jw_object_end(w);
        return;
    }
    const sim_memory *m = &t->cap.mem;
    sim_jw_num(w, "capacity_bytes_per_gpu", m->capacity_bytes);
    sim_jw_num(w, "usable_bytes_per_gpu", m->usable_bytes);
    sim_jw_num(w, "weights_bytes_per_gpu", m->weights_bytes);
    if (t->spec) {
        sim_jw_num(w, "draft_weight_bytes_per_gpu", t->draft_weight_bytes);
        sim_jw_num(w, "draft_kv_bytes_per_token_per_gpu", t->draft_kv_bytes);
    }
    sim_jw_num(w, "activation_bytes_per_gpu", m->activation_bytes);
    sim_jw_num(w, "activation_forward_bytes_per_gpu", m->activation_forward_bytes);
    sim_jw_num(w, "activation_sampler_bytes_per_gpu", m->activation_sampler_bytes);
    sim_jw_num(w, "reserve_bytes_per_gpu", m->reserve_bytes);
    sim_jw_num(w, "kv_budget_bytes_per_gpu", m->kv_budget_bytes);
    sim_jw_num(w, "kv_bytes_per_token_per_gpu", m->kv_bytes_per_token);
    sim_jw_int(w, "kv_blocks", m->kv_blocks);
    sim_jw_int(w, "kv_capacity_tokens", m->kv_capacity_tokens);
    sim_jw_int(w, "blocks_per_seq", t->cap.blocks_per_seq);
    sim_jw_int(w, "max_seqs_by_kv", t->cap.max_seqs_by_kv);
    sim_jw_int(w, "max_seqs_at_context", t->cap.max_seqs_at_context);
    sim_jw_int(w, "pp_stage", m->pp_stage);
    print_json_window(w, &t->cap);
    sim_jw_bool(w, "fits", t->cap.fits);
    sim_jw_object_end(w);
}

/* " x DP 2, EP 16" after a layout's TP x PP with --dp or --ep, else "". */
static const char *dp_ep_suffix(const sim_run_cfg *cfg, int64_t tp, char *buf, size_t cap)
{
    const int dp = sim_run_dp(cfg);
    int n = dp > 1 ? snprintf(buf, cap, " x DP %d", dp) : snprintf(buf, cap, "%s", "");
    if (cfg->ep && n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ", EP %lld", (long long)tp * dp);
    return buf;
}

static void print_table_tp(const tp_result *t, const sim_run_cfg *cfg, const sim_sched_resolved *s,
                           int64_t fit_len, const char *what)
{
    char sfx[48];
    dp_ep_suffix(cfg, t->tp, sfx, sizeof(sfx));
    if (t->pp > 1)
        printf("\nTP %lld x PP %lld%s%s\n", (long long)t->tp, (long long)t->pp, sfx, what);
    else
        printf("\nTP %lld%s%s\n", (long long)t->tp, sfx, what);
    if (!t->legal) {
        printf("  not a legal %s for this model: %s\n", t->pp > 1 ? "layout" : "TP", t->why);
        return;
    }
    const sim_memory *m = &t->cap.mem;
    char lab[64];
    if (t->pp > 1)
        printf("  %-26s %10d of %lld (the fewest KV blocks; it sizes every stage's cache)\n",
               "figures of stage", m->pp_stage, (long long)t->pp);
    printf("  %-26s %10.2f GB\n", "device memory", m->capacity_bytes / SIM_GB);
    snprintf(lab, sizeof(lab), "usable (x %.2f)", s->gpu_memory_utilization);
    printf("  %-26s %10.2f GB\n", lab, m->usable_bytes / SIM_GB);
    printf("  %-26s %10.2f GB\n", "weights", m->weights_bytes / SIM_GB);
    if (t->spec)
        printf("  %-26s %10.2f GB (and %.0f KV bytes per token)\n", "  of which the drafter",
               t->draft_weight_bytes / SIM_GB, t->draft_kv_bytes);
    /* Which phase of the profiling run sets the peak, or their sum (docs/engine.md). */
    char phase[96];
    if (m->activation_bytes > m->activation_forward_bytes &&
        m->activation_bytes > m->activation_sampler_bytes)
        snprintf(phase, sizeof(phase), "forward pass %.2f + sampler %.2f",
                 m->activation_forward_bytes / SIM_GB, m->activation_sampler_bytes / SIM_GB);
    else if (m->activation_sampler_bytes > m->activation_forward_bytes)
        snprintf(phase, sizeof(phase), "the sampler's; forward pass %.2f",
                 m->activation_forward_bytes / SIM_GB);
    else
        snprintf(phase, sizeof(phase), "the forward pass's; sampler %.2f",
                 m->activation_sampler_bytes / SIM_GB);
    printf("  %-26s %10.2f GB (%s)\n", "activation peak", m->activation_bytes / SIM_GB, phase);
    printf("  %-26s %10.2f GB\n", "reserve", m->reserve_bytes / SIM_GB);
    printf("  %-26s %10.2f GB\n", "KV budget", m->kv_budget_bytes / SIM_GB);
    printf("  %-26s %10.0f bytes\n", "KV per token", m->kv_bytes_per_token);
    const sim_kv_layout *k = &m->kv;
    if (k->n_window_layers > 0) {
        /* vLLM V1's hybrid KV-cache manager: windowed layers hold only their window. */
        snprintf(lab, sizeof(lab), "  of %lld full layers", (long long)k->n_full_layers);
        printf("  %-26s %10.0f bytes\n", lab, m->kv_full_bytes_per_token);
        snprintf(lab, sizeof(lab), "  %lld %s layers", (long long)k->n_window_layers,
                 k->chunked ? "chunked" : "windowed");
        printf("  %-26s %10.0f bytes a sequence of %lld tokens (%s %lld, capped)\n", lab,
               t->cap.kv_window_bytes_per_seq, (long long)t->cap.context_tokens,
               k->chunked ? "chunk" : "window", (long long)k->window);
        printf("  %-26s %10lld tokens (%lld blocks of %lld layers x %lld tokens, %lld group%s)\n",
               "KV capacity", (long long)m->kv_capacity_tokens, (long long)m->kv_blocks,
               (long long)m->kv_block_layers, (long long)s->block_size,
               (long long)(k->n_full_groups + k->n_window_groups),
               k->n_full_groups + k->n_window_groups > 1 ? "s" : "");
    } else {
        printf("  %-26s %10lld tokens (%lld blocks of %lld)\n", "KV capacity",
               (long long)m->kv_capacity_tokens, (long long)m->kv_blocks, (long long)s->block_size);
    }
    snprintf(lab, sizeof(lab), "sequences at %lld tokens", (long long)t->cap.context_tokens);
    printf("  %-26s %10lld", lab, (long long)t->cap.max_seqs_at_context);
    if (t->cap.fits && t->cap.max_seqs_by_kv > t->cap.max_seqs_at_context &&
        t->cap.context_tokens <= s->max_model_len)
        printf(" (max_num_seqs; the KV cache holds %lld)", (long long)t->cap.max_seqs_by_kv);
    if (k->n_window_layers > 0 && m->kv_blocks_max_seq > 0) {
        snprintf(lab, sizeof(lab), "sequences at %lld tokens", (long long)s->max_model_len);
        printf("\n  %-26s %10.2f (vLLM's maximum concurrency: %lld blocks budgeted a sequence)",
               lab, t->cap.max_concurrency_max_len, (long long)m->kv_blocks_max_seq);
    }
    if (t->cap.fits)
        printf("\n  %-26s yes\n", "fits");
    else if (m->kv_budget_bytes <= 0.0)
        printf("\n  %-26s no: weights, activations and reserve exceed usable memory by %.2f GB\n",
               "fits", -m->kv_budget_bytes / SIM_GB);
    else
        printf("\n  %-26s no: the KV cache cannot hold one %lld-token sequence (max_model_len)\n",
               "fits", (long long)s->max_model_len);
    if (!t->cap.fits && fit_len > 0)
        printf("  %-26s %lld tokens\n", "longest max_model_len", (long long)fit_len);
}

/* --tp N, or --tp all (every legal TP of one node). */
typedef struct tp_or_all {
    int64_t *tp;
    int all;
} tp_or_all;

static int parse_tp(const char *arg, void *dst, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    tp_or_all *t = dst;
    if (strcmp(arg, "all") == 0) {
        t->all = 1;
        return 0;
    }
    return cli_parse_i64(arg, 1, 4096, t->tp);
}

/* What the options give. */
typedef struct cap_args {
    cli_run_spec spec;
    cli_spec_args sp;
    const char *format;
    int64_t context, prompt, output, tp_asked, pp;
    int all, json;
} cap_args;

static int parse_capacity(int argc, char **argv, cap_args *a, int *done)
{
    cli_run_spec_init(&a->spec);
    a->format = "table";
    a->context = a->prompt = a->output = -1;
    a->pp = 1;
    tp_or_all tp = {&a->spec.tp, 0};
    sim_sched_cfg *sc = &a->spec.sched;
    /* In the order of the usage. No help of their own: --output-tokens and
     * --max-num-batched-tokens (on --prompt-tokens' and --max-num-seqs' lines), --model and
     * --hw (the synopsis only). */
    const cli_opt t[] = {
        {.name = "tp",
         .kind = CLI_OPT_CUSTOM,
         .dst = &tp,
         .parse = parse_tp,
         .heading = "Options:\n",
         .help = "  --tp N|all                 one TP, or 1, 2, 4, ... up to the profile's\n"
                 "                             n_gpus_per_node (default 1); above one node, a "
                 "multiple\n"
                 "                             of n_gpus_per_node (a TP group over whole nodes)\n"},
        CLI_I64_H(
            "pp", &a->pp, 1, SIM_PP_MAX,
            "  --pp N                     pipeline stages (default 1): each GPU holds its "
            "stage's\n"
            "                             layers (vLLM get_pp_indices), the embedding on the "
            "first,\n"
            "                             the LM head on the last; the figures are those of the\n"
            "                             stage with the fewest KV blocks, which sizes the "
            "cache\n"),
        CLI_I64_H(
            "dp", &a->spec.dp, 1, SIM_DP_MAX,
            "  --dp N                     data-parallel ranks (default 1): N copies of the TP "
            "layout\n"
            "                             (attention, dense layers and KV cache per copy); a MoE\n"
            "                             model's experts split over DP x TP GPUs (vLLM flattens "
            "TP\n"
            "                             across DP for the MoE layers); GPUs used = TP x PP x "
            "DP\n"),
        CLI_FLAG_H(
            "ep", &a->spec.ep,
            "  --ep                       expert parallelism: num_experts / (DP x TP) whole "
            "experts\n"
            "                             a GPU instead of a 1/(DP x TP) slice of each (the same\n"
            "                             bytes; refused when num_experts does not divide)\n"),
        CLI_I64_H("context", &a->context, 1, (double)(INT64_C(1) << 30),
                  "  --context C                tokens per sequence (default min(4096, "
                  "max_model_len))\n"),
        CLI_I64_H("prompt-tokens", &a->prompt, 1, (double)(INT64_C(1) << 30),
                  "  --prompt-tokens L --output-tokens O   requests of L + O tokens (instead of "
                  "--context)\n"),
        {.name = "output-tokens",
         .kind = CLI_OPT_I64,
         .dst = &a->output,
         .min = 1,
         .max = (double)(INT64_C(1) << 30)},
        CLI_STR_H(
            "dtype", &a->spec.dtype,
            "  --dtype T                  fp16|bf16|fp8 weights of an unquantized model "
            "(default:\n"
            "                             its torch_dtype); quantized configs bring their own\n"),
        CLI_STR_H("kv-dtype", &a->spec.kv_dtype,
                  "  --kv-dtype T               fp16|bf16|fp8 (default: the model's 16-bit type, "
                  "vLLM's\n"
                  "                             'auto', also with fp8 weights)\n"),
        CLI_SCHED_H("max-model-len", sc,
                    "  --max-model-len N          default: the model's max_position_embeddings\n"),
        CLI_SCHED_H("gpu-memory-utilization", sc,
                    "  --gpu-memory-utilization F default: the engine's (0.9)\n"),
        CLI_SCHED_H(
            "max-num-seqs", sc,
            "  --max-num-seqs N, --max-num-batched-tokens N   default: the engine's (V1: by "
            "usage\n"
            "                             context and GPU memory, docs/engine.md)\n"),
        {.name = "max-num-batched-tokens", .kind = CLI_OPT_SCHED, .dst = sc},
        CLI_SCHED_H("usage", sc,
                    "  --usage llm|server         vLLM's usage-context defaults (default llm)\n"),
        CLI_FLAG_H("disable-hybrid-kv-cache-manager", &sc->disable_hybrid_kv,
                   "  --disable-hybrid-kv-cache-manager   V1: sliding-window layers keep the whole "
                   "context\n"
                   "                             (vLLM's flag; on by default they keep only the "
                   "window)\n"),
        CLI_STR_H(
            "engine", &a->spec.engine,
            "  --engine ID                engine profile (default vllm-v1; vllm-v0 for V0)\n"),
        CLI_CUSTOM_H("spec", cli_parse_spec_method, &a->sp,
                     "  --spec M, --spec-tokens K, --acceptance A, --spec-model ID\n"
                     "                             speculative decoding (as for serve): the\n"
                     "                             drafter's weights and KV cache count\n"),
        {.name = "spec-tokens",
         .kind = CLI_OPT_I64,
         .dst = &a->sp.k,
         .min = 1,
         .max = SIM_SPEC_MAX_TOKENS},
        {.name = "acceptance",
         .kind = CLI_OPT_CUSTOM,
         .dst = &a->sp,
         .parse = cli_parse_acceptance},
        {.name = "spec-model", .kind = CLI_OPT_STR, .dst = &a->sp.model},
        CLI_STR_H("format", &a->format, "  --format table|json        default table\n"),
        {.name = "model", .kind = CLI_OPT_STR, .dst = &a->spec.model},
        {.name = "hw", .kind = CLI_OPT_STR, .dst = &a->spec.hw},
    };
    int rc = cli_opts_parse_help("capacity", argc, argv, t, CLI_N(t), &capacity_help, done, NULL);
    if (rc != CLI_OK || *done)
        return rc;
    a->all = tp.all;
    if (cli_spec_finish("capacity", &a->sp, &a->spec.spec, &a->spec.spec_model) != CLI_OK)
        return CLI_USAGE;
    if (!a->spec.model || !a->spec.hw) {
        cli_error("capacity: --model and --hw are required (see llmstep capacity --help)");
        return CLI_USAGE;
    }
    /* Requests of L prompt and O output tokens hold L + O tokens each at their end: the
     * concurrency the KV cache holds without preemption. */
    if ((a->prompt > 0) != (a->output > 0)) {
        cli_error("capacity: give --prompt-tokens and --output-tokens together");
        return CLI_USAGE;
    }
    if (a->prompt > 0) {
        if (a->context > 0) {
            cli_error("capacity: give --context or --prompt-tokens/--output-tokens, not both");
            return CLI_USAGE;
        }
        a->context = a->prompt + a->output;
    }
    a->json = strcmp(a->format, "json") == 0;
    if (!a->json && strcmp(a->format, "table") != 0) {
        cli_error("capacity: --format '%s': expected table or json", a->format);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Every TP of one node (all) or the one asked; *smallest: the smallest that fits, or -1. */
static int capacity_tps(const cap_args *a, const cli_run *run, int64_t context, tp_result *results,
                        int *n_out, int64_t *smallest)
{
    const double node = run->hw.v[SIM_HWF_N_GPUS_PER_NODE];
    int n = 0;
    *smallest = -1;
    for (int i = 0; i < N_ALL_TPS && (double)all_tps[i] <= node; i++) {
        compute_tp(run, all_tps[i], a->pp, context, &results[n]);
        if (*smallest < 0 && results[n].legal && results[n].cap.fits)
            *smallest = all_tps[i];
        if (a->all || all_tps[i] == a->tp_asked)
            n++;
    }
    if (!a->all && n == 0) {
        /* A TP that is not a power of two: the smallest fitting one of the powers above may
         * be larger than a fitting TP asked for; count the asked one too. */
        compute_tp(run, a->tp_asked, a->pp, context, &results[n]);
        if (results[n].legal && results[n].cap.fits && (*smallest < 0 || a->tp_asked < *smallest))
            *smallest = a->tp_asked;
        n++;
    }
    *n_out = n;
    if (!a->all && !results[0].legal) {
        cli_error("capacity: %s: %s", run->model_path, results[0].why);
        return CLI_BAD_INPUT;
    }
    for (int i = 0; i < n; i++) {
        const sim_memory *mm = &results[i].cap.mem;
        const double printed[] = {mm->capacity_bytes,    mm->usable_bytes,  mm->weights_bytes,
                                  mm->activation_bytes,  mm->reserve_bytes, mm->kv_budget_bytes,
                                  mm->kv_bytes_per_token};
        if (cli_check_finite("capacity: ", "the memory budget", printed,
                             sizeof(printed) / sizeof(printed[0])) != CLI_OK)
            return CLI_NUMERIC;
    }
    return CLI_OK;
}

/* The smallest TP x PP layout that fits (sim_deploy_smallest_layout), computed into *out;
 * 0 when none of up to SIM_DEPLOY_MAX_LAYOUT_GPUS GPUs does. */
static int smallest_layout(const cli_run *run, int64_t context, tp_result *out)
{
    int64_t tp, pp;
    const sim_setup su = cli_run_setup(run);
    if (!sim_deploy_smallest_layout(&su, &tp, &pp))
        return 0;
    compute_tp(run, tp, pp, context, out);
    return 1;
}

static int print_capacity_json(const cap_args *a, const cli_run *run, int64_t context,
                               const tp_result *results, int n, int64_t smallest,
                               const tp_result *layout)
{
    const sim_sched_resolved *s = &run->sched;
    sim_jw w;
    cli_json_open(&w);
    sim_jw_object_begin(&w, NULL);
    sim_jw_str(&w, "schema_version", "llmstep-capacity/1");
    sim_jw_str(&w, "model", run->model.id);
    sim_jw_str(&w, "hardware", run->hw.id);
    sim_jw_str(&w, "engine", run->engine.id);
    sim_jw_str(&w, "dtype", sim_dtype_name(run->cfg.dtype));
    sim_jw_str(&w, "weights", cli_weight_format(&run->model, &run->cfg));
    sim_jw_str(&w, "kv_dtype", sim_dtype_name(run->cfg.kv_dtype));
    sim_jw_int(&w, "max_model_len", s->max_model_len);
    sim_jw_int(&w, "max_num_seqs", s->max_num_seqs);
    sim_jw_int(&w, "max_num_batched_tokens", s->max_num_batched_tokens);
    sim_jw_int(&w, "block_size", s->block_size);
    sim_jw_num(&w, "gpu_memory_utilization_frac", s->gpu_memory_utilization);
    sim_jw_int(&w, "context_tokens", context);
    if (smallest > 0)
        sim_jw_int(&w, "smallest_tp_that_fits", smallest);
    else
        sim_jw_null(&w, "smallest_tp_that_fits");
    sim_jw_int(&w, "pp", a->pp);
    if (run->cfg.dp > 1 || run->cfg.ep) { /* only then: outputs without --dp/--ep unchanged */
        sim_jw_int(&w, "dp", sim_run_dp(&run->cfg));
        sim_jw_bool(&w, "ep", run->cfg.ep);
    }
    if (layout) {
        const double g = run->hw.v[SIM_HWF_N_GPUS_PER_NODE];
        const int dp = sim_run_dp(&run->cfg);
        const double gpus = (double)(layout->tp * layout->pp * dp);
        sim_jw_object_begin(&w, "smallest_layout_that_fits");
        sim_jw_int(&w, "tp", layout->tp);
        sim_jw_int(&w, "pp", layout->pp);
        if (dp > 1 || run->cfg.ep) { /* only then: outputs without --dp/--ep stay as they were */
            sim_jw_int(&w, "dp", dp);
            sim_jw_bool(&w, "ep", run->cfg.ep);
        }
        sim_jw_num(&w, "gpus", gpus);
        sim_jw_num(&w, "nodes", ceil(gpus / g));
        print_json_tp(&w, "figures", layout);
        sim_jw_object_end(&w);
    } else {
        sim_jw_null(&w, "smallest_layout_that_fits");
    }
    if (a->all) {
        sim_jw_array_begin(&w, "tps");
        for (int i = 0; i < n; i++)
            print_json_tp(&w, NULL, &results[i]);
        sim_jw_array_end(&w);
    } else {
        /* One TP: its figures at the top level. */
        const sim_capacity *cp = &results[0].cap;
        print_json_tp(&w, "per_tp", &results[0]);
        sim_jw_int(&w, "tp", results[0].tp);
        sim_jw_num(&w, "weights_bytes_per_gpu", cp->mem.weights_bytes);
        sim_jw_num(&w, "activation_bytes_per_gpu", cp->mem.activation_bytes);
        sim_jw_num(&w, "reserve_bytes_per_gpu", cp->mem.reserve_bytes);
        sim_jw_num(&w, "kv_bytes_per_token_per_gpu", cp->mem.kv_bytes_per_token);
        sim_jw_int(&w, "kv_blocks", cp->mem.kv_blocks);
        sim_jw_int(&w, "kv_capacity_tokens", cp->mem.kv_capacity_tokens);
        sim_jw_int(&w, "max_seqs_at_context", cp->max_seqs_at_context);
        print_json_window(&w, cp);
        sim_jw_bool(&w, "fits", cp->fits);
    }
    sim_jw_object_end(&w);
    return cli_json_close(&w, "capacity");
}

static void print_capacity_table(const cap_args *a, const cli_run *run, const tp_result *results,
                                 int n, int64_t smallest, const tp_result *layout)
{
    const sim_sched_resolved *s = &run->sched;
    const double node = run->hw.v[SIM_HWF_N_GPUS_PER_NODE];
    printf("llmstep capacity: %s on %s, %s weights, %s KV cache, engine %s\n", run->model.id,
           run->hw.id, cli_weight_format(&run->model, &run->cfg), sim_dtype_name(run->cfg.kv_dtype),
           run->engine.id);
    if (run->cfg.dp > 1 || run->cfg.ep)
        printf("data parallel %d, expert parallel %s: every layout below runs %d cop%s of its TP "
               "x PP GPUs%s\n",
               sim_run_dp(&run->cfg), run->cfg.ep ? "on" : "off", sim_run_dp(&run->cfg),
               run->cfg.dp > 1 ? "ies" : "y",
               run->model.n_experts > 0 ? ", the experts split over DP x TP of them" : "");
    printf("max_model_len %lld, max_num_seqs %lld, max_num_batched_tokens %lld, "
           "gpu_memory_utilization %.2f; figures per GPU (GB = 1e9 bytes)\n",
           (long long)s->max_model_len, (long long)s->max_num_seqs,
           (long long)s->max_num_batched_tokens, s->gpu_memory_utilization);
    for (int i = 0; i < n; i++) {
        int64_t fit_len = 0;
        if (results[i].legal && !results[i].cap.fits) {
            sim_run_cfg tpc = run->cfg;
            tpc.tp = (int)results[i].tp;
            tpc.pp = (int)results[i].pp;
            sim_setup su = cli_run_setup(run);
            su.run = &tpc;
            fit_len = sim_deploy_largest_len(&su, &a->spec.sched);
        }
        print_table_tp(&results[i], &run->cfg, s, fit_len, "");
    }
    char tps[64] = "1";
    for (int i = 1; i < N_ALL_TPS && (double)all_tps[i] <= node; i++)
        snprintf(tps + strlen(tps), sizeof(tps) - strlen(tps), ", %lld", (long long)all_tps[i]);
    if (!a->all && ((a->tp_asked & (a->tp_asked - 1)) != 0 || (double)a->tp_asked > node))
        snprintf(tps + strlen(tps), sizeof(tps) - strlen(tps), " and %lld", (long long)a->tp_asked);
    char at_pp[32] = "";
    if (a->pp > 1)
        snprintf(at_pp, sizeof(at_pp), " at PP %lld", (long long)a->pp);
    if (smallest > 0)
        printf("\nsmallest TP that fits%s (of %s): %lld\n", at_pp, tps, (long long)smallest);
    else
        printf("\nsmallest TP that fits%s (of %s): none\n", at_pp, tps);
    /* The layout search covers every layout above, so it finds one whenever one of them
     * fits, and it may find a smaller one (fewer GPUs) with PP. */
    if (layout) {
        const int dp = sim_run_dp(&run->cfg);
        const double gpus = (double)(layout->tp * layout->pp * dp);
        char sfx[48];
        printf(
            "smallest layout that fits (TP x PP of up to %d GPUs): TP %lld x PP %lld%s, %.0f GPUs "
            "on %.0f node(s) of %.0f\n",
            SIM_DEPLOY_MAX_LAYOUT_GPUS, (long long)layout->tp, (long long)layout->pp,
            dp_ep_suffix(&run->cfg, layout->tp, sfx, sizeof(sfx)), gpus, ceil(gpus / node), node);
        int shown = 0;
        for (int i = 0; i < n; i++)
            shown |= results[i].tp == layout->tp && results[i].pp == layout->pp;
        if (!shown)
            print_table_tp(layout, &run->cfg, s, 0, " (smallest layout that fits)");
    } else {
        printf("smallest layout that fits (TP x PP of up to %d GPUs): none\n",
               SIM_DEPLOY_MAX_LAYOUT_GPUS);
    }
}

int cmd_capacity(int argc, char **argv)
{
    static cap_args a;
    memset(&a, 0, sizeof(a));
    int done, rc = parse_capacity(argc, argv, &a, &done);
    if (rc != CLI_OK || done)
        return rc;
    /* Open at TP 1 (always legal for the TP checks below); each TP is computed separately. */
    a.tp_asked = a.spec.tp;
    a.spec.tp = 1;
    cli_run run;
    rc = cli_run_open(&a.spec, &run);
    if (rc == CLI_OK &&
        cli_check_layout(&run.model, &run.hw, a.all ? 1 : a.tp_asked, a.pp, "capacity: ") != CLI_OK)
        rc = CLI_BAD_INPUT;
    if (rc != CLI_OK) {
        cli_run_close(&run);
        return rc;
    }
    const sim_sched_resolved *s = &run.sched;
    int64_t context = a.context;
    if (context < 0)
        context = s->max_model_len < 4096 ? s->max_model_len : 4096;
    tp_result results[N_ALL_TPS + 1];
    int n = 0;
    int64_t smallest = -1;
    rc = capacity_tps(&a, &run, context, results, &n, &smallest);
    static tp_result layout;
    const tp_result *lay = rc == CLI_OK && smallest_layout(&run, context, &layout) ? &layout : NULL;
    if (rc == CLI_OK && a.json)
        rc = print_capacity_json(&a, &run, context, results, n, smallest, lay);
    else if (rc == CLI_OK)
        print_capacity_table(&a, &run, results, n, smallest, lay);
    cli_run_close(&run);
    return rc;
}
