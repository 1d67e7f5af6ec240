/* cmd_predict.c - `llmstep predict`: one step's per-operator cost and time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "report_json.h"
#include "units.h"

/* The usage around the options' help (the table in parse_predict). */
/* Which decode-attention kernel the step assumed, and why, when it is not one that reads each
 * KV head once for its query group (docs/model.md, "Decode attention kernel choice"). */
static void decode_kernel_line(const sim_predict_report *r, const sim_step_cost *c)
{
    const sim_decode_attn *a = &r->cfg->decode;
    switch (c->decode_kernel) {
    case SIM_DECODE_PER_Q_HEAD:
        printf("  decode attention K/V read once per query head (profile: "
               "attn_decode_kv_per_q_head_flag)\n");
        break;
    case SIM_DECODE_PAGED_V1:
    case SIM_DECODE_PAGED_V2: {
        const int v1 = c->decode_kernel == SIM_DECODE_PAGED_V1;
        const int per_q = sim_decode_kernel_per_q_head(c->decode_kernel, r->hw);
        printf("  decode attention vLLM PagedAttention %s (engine %s: %s; V1 when max_seq_len <= "
               "%.0f and (1 partition or seqs x heads > %.0f)",
               v1 ? "V1" : "V2", r->engine,
               a->why == SIM_PAGED_ROCM ? "ROCm backend" : "sliding window -> XFormers",
               a->v1_max_seq_len, a->v1_min_seq_heads);
        if (!a->eager)
            printf("; CUDA graphs: max_seq_len = capture length %.0f", a->graph_max_seq_len);
        printf("): K/V read once per %s\n", per_q ? "query head" : "KV head");
        if (c->decode_blocks_resident > 0.0)
            printf("  decode blocks    %.0f resident at once (shared memory %.0f B per SM), %.3g "
                   "GB/s each (attn_decode_block_bw_bytes_per_s)\n",
                   c->decode_blocks_resident, r->hw->v[SIM_HWF_SMEM_PER_SM],
                   r->hw->v[SIM_HWF_ATTN_DECODE_BLOCK_BW] / 1e9);
        break;
    }
    default:
        break;
    }
}

/* The fused-MoE kernel class the routed experts were timed with (hw.h, sim_moe_class), and
 * whether the profile has that class's own figures or borrows another's. */
static void moe_kernel_line(const sim_predict_report *r)
{
    if (r->m->n_experts <= 0 || r->m->n_moe_layers <= 0)
        return;
    const sim_moe_class cls = sim_moe_class_of(r->m, r->cfg);
    const int own = r->hw->prov[sim_hw_moe_field(cls, SIM_MOE_FIG_EFF)] != SIM_PROV_DEFAULT;
    printf("  moe experts      %s fused-MoE kernel (%s figures of the profile)\n",
           sim_moe_class_name(cls), own ? "its own" : "defaulted: another class's");
}

static const cli_help predict_help = {
    .head = "usage: llmstep predict --model ID|PATH --hw ID|PATH [options] STEP...\n"
            "\n"
            "Predicts the time of one vLLM engine step on one GPU of a tensor-parallel group,\n"
            "with every operator's FLOPs and HBM bytes per GPU.\n"
            "\n",
    .tail = "  -h, --help            this help\n"
            "\n"
            "Example:\n"
            "  llmstep predict --model llama-3.1-8b --hw h100-sxm --tp 2 --decode 32x2048\n",
};

static void fmt_bytes(char *b, size_t n, double v)
{
    if (v >= SIM_GB)
        snprintf(b, n, "%.3f GB", v / SIM_GB);
    else if (v >= SIM_MB)
        snprintf(b, n, "%.3f MB", v / SIM_MB);
    else
        snprintf(b, n, "%.0f B", v);
}

static void fmt_time(char *b, size_t n, double s)
{
    if (s >= 1.0)
        snprintf(b, n, "%.4f s", s);
    else if (s >= 1e-3)
        snprintf(b, n, "%.4f ms", sim_s_to_ms(s));
    else
        snprintf(b, n, "%.2f us", sim_s_to_us(s));
}

/* The stages of a pipeline step and what they imply with 1 and pp batches in flight. */
static void print_pipeline(const sim_pp_cost *q)
{
    char t1[32], t2[32];
    printf("\n  %-8s %8s %14s %14s\n", "stage", "layers", "time", "transfer after");
    for (int i = 0; i < q->pp; i++) {
        fmt_time(t1, sizeof(t1), q->stage_s[i]);
        fmt_time(t2, sizeof(t2), q->transfer_s[i]);
        printf("  %-8d %8lld %14s %14s%s\n", i, (long long)q->layers[i], t1,
               i + 1 < q->pp ? t2 : "-",
               i + 1 < q->pp ? (q->internode[i] ? "  (inter-node)" : "  (NVLink)") : "");
    }
    fmt_time(t1, sizeof(t1), q->latency_s);
    fmt_time(t2, sizeof(t2), q->interval_s);
    printf("  pipeline latency %s (a batch through every stage); slowest stage %s\n", t1, t2);
    fmt_time(t1, sizeof(t1), sim_pp_cycle_s(q, q->pp));
    printf("  with %d batches of this shape in flight: one token each per %s, bubble %.1f%%;"
           " one batch: bubble %.1f%%\n",
           q->pp, t1, 100.0 * sim_pp_bubble_frac(q, q->pp), 100.0 * sim_pp_bubble_frac(q, 1));
}

static void print_table(const sim_predict_report *r)
{
    const sim_step_cost *c = r->cost;
    char t1[32], t2[32], t3[32], t4[32], t5[32], b1[32], b2[32];
    char layout[64];
    cli_layout_name(r->cfg, layout, sizeof(layout));
    printf("llmstep predict: %s on %s, %s, %s weights, %s KV cache\n", r->m->id, r->hw->id, layout,
           cli_weight_format(r->m, r->cfg), sim_dtype_name(r->cfg->kv_dtype));
    printf("step: ");
    for (int i = 0; i < r->step->n_groups; i++) {
        const sim_group *g = &r->step->groups[i];
        const char *kind = g->new_tokens == 1       ? "decode"
                           : g->context_tokens == 0 ? "prefill"
                                                    : (g->emits ? "chunk" : "chunk(mid)");
        printf("%s%lld x %s %lld new + %lld cached", i ? ", " : "", (long long)g->count, kind,
               (long long)g->new_tokens, (long long)g->context_tokens);
    }
    if (r->cfg->dp > 1)
        printf("  (%.0f tokens, %.0f sequences on each of %d DP ranks)\n\n", c->tokens, c->seqs,
               r->cfg->dp);
    else
        printf("  (%.0f tokens, %.0f sequences)\n\n", c->tokens, c->seqs);
    fmt_time(t1, sizeof(t1), c->step_s);
    fmt_time(t2, sizeof(t2), c->roofline_s);
    printf("  step time        %s", t1);
    char host[32], cal[160];
    fmt_time(host, sizeof(host), r->host_s);
    if (r->calib_path)
        snprintf(cal, sizeof(cal), "%.4g x roofline + %.4g s", r->cfg->alpha, r->cfg->beta_s);
    else
        snprintf(cal, sizeof(cal), "roofline");
    if (r->async)
        printf("   = max(%s, host %s)", cal, host);
    else
        printf("   = %s + host %s", cal, host);
    if (r->calib_path)
        printf(" (calibration %s, engine %s)\n", r->calib_path, r->engine);
    else
        printf(" (engine %s; uncalibrated: alpha = 1, beta = 0)\n", r->engine);
    if (r->band)
        cli_band_line(NULL, r->band, c->step_s);
    fmt_time(t3, sizeof(t3), c->compute_s);
    fmt_time(t4, sizeof(t4), c->memory_s);
    fmt_time(t5, sizeof(t5), c->comm_s);
    printf("  roofline         %s   (%s mode; compute %s, memory %s, comm %s)\n", t2,
           r->cfg->mode == SIM_ROOFLINE_STEP ? "whole-step" : "per-operator", t3, t4, t5);
    double ai = c->bytes > 0.0 ? c->flops / c->bytes : 0.0;
    printf("  bound            %s   (arithmetic intensity %.1f FLOP/B, ridge point %.1f FLOP/B)\n",
           sim_bound_name(c->bound), ai, sim_hw_ridge_flops_per_byte(r->hw, r->cfg->dtype));
    decode_kernel_line(r, c);
    moe_kernel_line(r);
    fmt_bytes(b1, sizeof(b1), c->bytes);
    fmt_bytes(b2, sizeof(b2), r->weights_bytes_per_gpu);
    if (r->pp)
        printf("  stages' GPUs     %.4g GFLOP, %s HBM traffic (summed over one GPU of each stage);"
               "\n                   per GPU at most: weights %s; KV cache %.0f B/token\n",
               c->flops / SIM_GIGA, b1, b2, r->kv_bytes_per_token_per_gpu);
    else
        printf("  per GPU          %.4g GFLOP, %s HBM traffic; weights %s; KV cache %.0f B/token\n",
               c->flops / SIM_GIGA, b1, b2, r->kv_bytes_per_token_per_gpu);
    if (r->tp1) {
        double sp = r->tp1->roofline_s / c->roofline_s, n = (double)r->cfg->tp;
        printf("  TP scaling       %.3fx faster than TP 1 (roofline); Amdahl serial fraction %.3f;"
               " %d all-reduces\n",
               sp, (n / sp - 1.0) / (n - 1.0), c->n_allreduce);
    }
    if (r->pp) {
        print_pipeline(r->pp);
        printf("\n  operators below: summed over the %d stages, one GPU of each\n", r->pp->pp);
    }
    printf("\n  %-22s %14s %14s %12s %6s  %s\n", "operator", "GFLOP/GPU", "HBM MB/GPU", "time",
           "share", "bound");
    double total = c->roofline_s > 0.0 ? c->roofline_s : 1.0;
    for (int i = 0; i < SIM_OP_COUNT; i++) {
        const sim_op_cost *op = &c->ops[i];
        if (op->bound == SIM_BOUND_NONE)
            continue;
        fmt_time(t1, sizeof(t1), op->time_s);
        printf("  %-22s %14.4f %14.3f %12s %5.1f%%  %s\n", sim_op_name((sim_op_kind)i),
               op->flops / SIM_GIGA, op->bytes / SIM_MB, t1, 100.0 * op->time_s / total,
               sim_bound_name(op->bound));
    }
    if (r->n_notes > 0) {
        printf("\nnotes:\n");
        for (int i = 0; i < r->n_notes; i++)
            printf("  - %s\n", r->notes[i]);
    }
}

#define MAX_NOTES 24

/* Notes: every defaulted figure this prediction used, and the fp8 fallback. */
static int predict_notes(const cli_run *run, const sim_step *st, int verbose,
                         const char *uncalibrated, char note_buf[][512], const char **notes)
{
    const sim_model *m = &run->model;
    const sim_hw *hw = &run->hw;
    const sim_run_cfg *cfg = &run->cfg;
    int n_other = 0;
    int n_notes = 0;
    if (uncalibrated && n_notes < MAX_NOTES) {
        snprintf(note_buf[n_notes], sizeof(note_buf[0]), "%s", uncalibrated);
        notes[n_notes] = note_buf[n_notes];
        n_notes++;
    }
    for (int f = 0; f < SIM_HWF_COUNT && n_notes < MAX_NOTES; f++) {
        if (hw->prov[f] != SIM_PROV_DEFAULT)
            continue;
        if (f == SIM_HWF_N_GPUS_PER_NODE)
            continue;
        if (!verbose && !sim_deploy_field_relevant(&run->d, (sim_hw_field)f, st)) {
            n_other++;
            continue;
        }
        snprintf(note_buf[n_notes], sizeof(note_buf[0]), "%s not in the profile: %s",
                 sim_hw_field_key((sim_hw_field)f), hw->src[f]);
        notes[n_notes] = note_buf[n_notes];
        n_notes++;
    }
    if (n_other > 0 && n_notes < MAX_NOTES) {
        snprintf(note_buf[n_notes], sizeof(note_buf[0]),
                 "%d more figures of %s are defaults this step does not use (--verbose lists "
                 "them)",
                 n_other, hw->id);
        notes[n_notes] = note_buf[n_notes];
        n_notes++;
    }
    if (cfg->tp > 1 && n_notes < MAX_NOTES) {
        sim_allreduce ar;
        sim_hw_allreduce_for(hw, cfg->tp, &ar);
        if (ar.prov == SIM_PROV_DEFAULT || ar.n_gpus != cfg->tp) {
            snprintf(note_buf[n_notes], sizeof(note_buf[0]),
                     "no all-reduce measurement for %d GPUs: using %s", cfg->tp,
                     ar.prov == SIM_PROV_DEFAULT ? ar.source : "the nearest GPU count");
            notes[n_notes] = note_buf[n_notes];
            n_notes++;
        }
    }
    if (m->quant.method != SIM_QUANT_NONE && n_notes < MAX_NOTES) {
        const sim_gemm_math gm = m->quant.math;
        const int no_fp8 = hw->prov[SIM_HWF_PEAK_FP8] == SIM_PROV_ABSENT;
        snprintf(note_buf[n_notes], sizeof(note_buf[0]),
                 "weights %s (quantization_config): GEMMs stream the packed weights with their "
                 "scales and compute at the %s peak%s",
                 m->quant.name,
                 gm == SIM_GEMM_MATH_16 || no_fp8 ? sim_dtype_name(sim_model_dtype16(m)) : "fp8",
                 gm == SIM_GEMM_MATH_INT8 || gm == SIM_GEMM_MATH_FP4
                     ? " (the profile has no int8/fp4 peak; the fp8 one stands in)"
                 : gm == SIM_GEMM_MATH_FP8 && no_fp8 ? " (no fp8 tensor cores: weight-only, Marlin)"
                                                     : "");
        notes[n_notes] = note_buf[n_notes];
        n_notes++;
    }
    if (cfg->dtype == SIM_DTYPE_FP8 && hw->prov[SIM_HWF_PEAK_FP8] == SIM_PROV_ABSENT &&
        n_notes < MAX_NOTES) {
        snprintf(note_buf[n_notes], sizeof(note_buf[0]),
                 "%s has no fp8 tensor cores: fp8 runs weight-only at the fp16 peak", hw->id);
        notes[n_notes] = note_buf[n_notes];
        n_notes++;
    }
    return n_notes;
}

/* Every printed figure must be finite. */
static int check_cost(const sim_step_cost *cost, const sim_step_cost *tp1, double host_s, int tp)
{
    const double printed[] = {cost->step_s, cost->roofline_s, cost->flops,
                              cost->bytes,  cost->compute_s,  cost->memory_s,
                              cost->comm_s, host_s,           tp > 1 ? tp1->roofline_s : 1.0};
    int rc = cli_check_finite("predict: ", "the step time", printed,
                              sizeof(printed) / sizeof(printed[0]));
    for (int k = 0; rc == CLI_OK && k < SIM_OP_COUNT; k++) {
        const double op[] = {cost->ops[k].time_s, cost->ops[k].flops, cost->ops[k].bytes};
        rc = cli_check_finite("predict: ", sim_op_name((sim_op_kind)k), op, 3);
    }
    return rc;
}

/* Prints the report as a table or JSON. */
static int print_report(const sim_predict_report *r, int json)
{
    if (!json) {
        print_table(r);
        return CLI_OK;
    }
    struct sim_err err;
    char *s = sim_report_predict_json(r, &err);
    if (!s) {
        cli_error("predict: %s", err.msg);
        return CLI_NUMERIC;
    }
    fputs(s, stdout);
    free(s);
    return CLI_OK;
}

/* What the options give. */
typedef struct predict_args {
    const char *model_name, *hw_name, *calib_path, *format, *engine_name, *dtype_s, *kv_dtype_s;
    sim_step step;
    sim_run_cfg cfg;
    int64_t tp, pp, dp;
    int ep;
    int ignore_memory, no_host, verbose;
    int64_t interval; /* --interval L (0: none) */
    sim_sched_cfg sched_cfg;
} predict_args;

static int parse_predict(int argc, char **argv, predict_args *a, int *done)
{
    memset(a, 0, sizeof(*a));
    a->format = "table";
    a->cfg = (sim_run_cfg){.tp = 1, .mode = SIM_ROOFLINE_OP, .alpha = 1.0, .beta_s = 0.0};
    a->tp = a->pp = a->dp = 1;
    sim_sched_cfg_unset(&a->sched_cfg);
    cli_group_opt prefill = {&a->step, 'p'}, decode = {&a->step, 'd'}, chunk = {&a->step, 'c'};
    const cli_opt t[] = {
        {.name = "prefill",
         .kind = CLI_OPT_CUSTOM,
         .dst = &prefill,
         .parse = cli_opt_parse_group,
         .repeatable = 1,
         .heading = "Step (at least one; several make a mixed step):\n",
         .help = "  --prefill BxL         B new sequences of L prompt tokens\n"},
        CLI_GROUP_H(
            "decode", &decode,
            "  --decode BxC          B sequences decoding one token, C tokens already cached\n"),
        CLI_GROUP_H(
            "chunk", &chunk,
            "  --chunk BxTxC[:mid]   B chunked prefills of T tokens after C cached tokens;\n"
            "                        ':mid' = not the prompt's last chunk (samples no token)\n"),
        {.name = "model",
         .kind = CLI_OPT_STR,
         .dst = &a->model_name,
         .heading = "Options:\n",
         .help =
             "  --model ID|PATH       model id (llmstep models) or a HuggingFace config.json\n"},
        CLI_STR_H(
            "hw", &a->hw_name,
            "  --hw ID|PATH          hardware profile id (llmstep hw list) or a profile file\n"),
        {.name = "tp",
         .kind = CLI_OPT_I64,
         .dst = &a->tp,
         .min = 1,
         .max = 4096,
         .expect = "an integer >= 1",
         .help =
             "  --tp N                tensor-parallel degree (default 1); above the profile's\n"
             "                        n_gpus_per_node a multiple of it (hierarchical all-reduce\n"
             "                        over the inter-node fabric)\n"},
        CLI_I64_H(
            "pp", &a->pp, 1, SIM_PP_MAX,
            "  --pp N                pipeline stages (default 1): layers split as vLLM's\n"
            "                        get_pp_indices; prints each stage, the transfers, the\n"
            "                        pipeline latency and the cycle with N batches in flight\n"),
        CLI_I64_H(
            "dp", &a->dp, 1, SIM_DP_MAX,
            "  --dp N                data-parallel ranks (vLLM --data-parallel-size, default 1):\n"
            "                        the step's sequences spread over N copies of the model,\n"
            "                        ceil(B / N) of each group on the busiest rank, which is\n"
            "                        timed; MoE layers gather all N ranks' tokens and add a\n"
            "                        moe_dispatch_combine operator (all-gather, "
            "reduce-scatter)\n"),
        CLI_FLAG_H(
            "ep", &a->ep,
            "  --ep                  expert parallelism (vLLM --enable-expert-parallel): the\n"
            "                        MoE layers hold num_experts / (DP x TP) whole experts a GPU\n"
            "                        and read only those the tokens touch\n"),
        CLI_STR_H(
            "dtype", &a->dtype_s,
            "  --dtype T             fp16|bf16|fp8 weights of an unquantized model (default: its\n"
            "                        torch_dtype); a quantized config (quantization_config)\n"
            "                        carries its own weight format, --dtype then sets only the\n"
            "                        16-bit activation type\n"),
        CLI_STR_H(
            "kv-dtype", &a->kv_dtype_s,
            "  --kv-dtype T          fp16|bf16|fp8 KV cache (default: the model's 16-bit type,\n"
            "                        vLLM's 'auto', also with fp8 weights)\n"),
        CLI_SCHED_H(
            "max-model-len", &a->sched_cfg,
            "  --max-model-len N     for the memory check (default: max_position_embeddings)\n"),
        CLI_SCHED_H("max-num-seqs", &a->sched_cfg,
                    "  --max-num-seqs N      for the memory check (default: the engine's)\n"),
        CLI_SCHED_H(
            "gpu-memory-utilization", &a->sched_cfg,
            "  --gpu-memory-utilization F  for the memory check (default: the engine's, 0.9)\n"),
        CLI_SCHED_H("async-scheduling", &a->sched_cfg,
                    "  --async-scheduling on|off  V1: step = max(GPU, host) instead of their sum\n"
                    "                        (default: the engine's; on from vLLM 0.14)\n"),
        CLI_FLAG_H(
            "ignore-memory", &a->ignore_memory,
            "  --ignore-memory       predict even when the engine would not start (weights,\n"
            "                        activations, reserve and one max_model_len sequence's KV\n"
            "                        cache) or the step's sequences do not fit its KV cache or\n"
            "                        max_num_seqs\n"),
        CLI_STR_H(
            "calibration", &a->calib_path,
            "  --calibration FILE|ID|DIR  apply step = alpha x roofline + beta_s: a file, an id\n"
            "                        (calibrations/ID.json of the data folder) or a folder\n"
            "                        (the file of this GPU and engine)\n"),
        CLI_STR_H(
            "engine", &a->engine_name,
            "  --engine ID           the engine whose memory budget and host time per step apply\n"
            "                        (engines/ID.json; default: the calibration's, else "
            "vllm-v1)\n"),
        CLI_FLAG_H("no-host-time", &a->no_host,
                   "  --no-host-time        leave out the engine's host time\n"),
        CLI_INTERVAL_H(&a->interval),
        CLI_FLAG_H(
            "verbose", &a->verbose,
            "  --verbose             note every defaulted profile figure, not only those this\n"
            "                        step can use\n"),
        {.name = "roofline",
         .kind = CLI_OPT_ROOFLINE,
         .dst = &a->cfg.mode,
         .expect = "op or step",
         .help =
             "  --roofline op|step    sum of per-operator maxima (default) or one max per step\n"},
        {.name = "gemm",
         .kind = CLI_OPT_GEMM,
         .dst = &a->cfg.gemm,
         .expect = "flat or tile-wave",
         .help =
             "  --gemm flat|tile-wave GEMM compute ceiling: flat efficiency (default) or with "
             "tile\n"
             "                        and wave quantization (needs gemm_tiles in the profile)\n"},
        CLI_STR_H("format", &a->format, "  --format table|json   output format (default table)\n"),
    };
    int rc = cli_opts_parse_help("predict", argc, argv, t, CLI_N(t), &predict_help, done, NULL);
    if (rc != CLI_OK || *done)
        return rc;
    if (!a->model_name || !a->hw_name) {
        cli_error("predict: --model and --hw are required (see llmstep predict --help)");
        return CLI_USAGE;
    }
    if (a->step.n_groups == 0) {
        cli_error("predict: give the step with --prefill, --decode or --chunk");
        return CLI_USAGE;
    }
    if (strcmp(a->format, "table") != 0 && strcmp(a->format, "json") != 0) {
        cli_error("predict: --format '%s': expected table or json", a->format);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Prints the prediction of the step so on run. */
static int predict_print(const predict_args *a, const cli_run *run, const sim_deploy_step_out *so)
{
    const sim_run_cfg cfg = run->cfg;
    const sim_model *m = &run->model;
    const sim_hw *hw = &run->hw;
    sim_step_cost cost = so->cost, tp1;
    const char *calib_path = run->d.cal_path;
    const char *engine_id = run->engine.id;
    const double host_s = so->host_s;
    cost.step_s = so->wall_s;
    if (cfg.tp > 1) {
        sim_run_cfg c1 = cfg;
        c1.tp = 1;
        sim_step_cost_compute(m, hw, &c1, &so->rank, &tp1);
    }
    int rc = check_cost(&cost, &tp1, host_s, cfg.tp);
    if (rc != CLI_OK)
        return rc;
    static sim_pp_cost pq;
    sim_weight_bytes wb;
    sim_model_weight_bytes_moe(m, cfg.tp, cfg.dp, cfg.ep, cfg.dtype, &wb);
    double weights = wb.total;
    double kv = sim_model_kv_bytes_per_token(m, cfg.tp, cfg.kv_dtype);
    if (cfg.pp > 1) {
        sim_pp_step(m, hw, &cfg, &so->rank, &pq);
        /* Per GPU: the most loaded stage's (the layer counts differ by at most one). */
        weights = kv = 0.0;
        for (int i = 0; i < cfg.pp; i++) {
            const double w = sim_pp_stage_weight_bytes(m, cfg.tp, cfg.pp, i, cfg.dtype);
            const double k = sim_pp_stage_kv_bytes_per_token(m, cfg.tp, cfg.pp, i, cfg.kv_dtype);
            weights = w > weights ? w : weights;
            kv = k > kv ? k : kv;
        }
    }

    static char note_buf[MAX_NOTES][512];
    const char *notes[MAX_NOTES];
    char uncal[512];
    if (!calib_path)
        cli_run_uncalibrated(run, uncal, sizeof(uncal));
    const int n_notes =
        predict_notes(run, &so->rank, a->verbose, calib_path ? NULL : uncal, note_buf, notes);
    sim_pred_band band;
    if (a->interval && (rc = cli_band(run, "predict", sim_step_band_family(&a->step), a->interval,
                                      &band)) != CLI_OK)
        return rc;
    sim_predict_report r = {
        .model_path = run->model_path,
        .hw_path = run->d.hw_path,
        .calib_path = calib_path,
        .m = m,
        .hw = hw,
        .cfg = &cfg,
        .step = &so->rank,
        .cost = &cost,
        .tp1 = cfg.tp > 1 ? &tp1 : NULL,
        .weights_bytes_per_gpu = weights,
        .kv_bytes_per_token_per_gpu = kv,
        .engine = engine_id,
        .host_s = host_s,
        .async = run->engine.async_scheduling,
        .notes = notes,
        .n_notes = n_notes,
        .pp = cfg.pp > 1 ? &pq : NULL,
        .band = a->interval ? &band : NULL,
    };
    return print_report(&r, strcmp(a->format, "json") == 0);
}

int cmd_predict(int argc, char **argv)
{
    static predict_args a;
    int done, rc = parse_predict(argc, argv, &a, &done);
    if (rc != CLI_OK || done)
        return rc;
    /* The deployment as every command resolves it (sim_deploy_open): engine, calibration,
     * dtypes, layout, scheduler and the memory check. */
    cli_run_spec spec;
    cli_run_spec_init(&spec);
    spec.model = a.model_name;
    spec.hw = a.hw_name;
    spec.engine = a.engine_name;
    spec.calibration = a.calib_path;
    spec.dtype = a.dtype_s;
    spec.kv_dtype = a.kv_dtype_s;
    spec.tp = a.tp;
    spec.pp = a.pp;
    spec.dp = a.dp;
    spec.ep = a.ep;
    spec.sched = a.sched_cfg;
    spec.mode = a.cfg.mode;
    spec.gemm = a.cfg.gemm;
    spec.ignore_memory = a.ignore_memory;
    spec.no_host = a.no_host;
    spec.check_memory = 1;
    spec.who = "predict: ";
    spec.memory_hint = " (--ignore-memory to go on)";
    static cli_run run;
    rc = cli_run_open(&spec, &run);
    sim_deploy_step_out so;
    if (rc == CLI_OK) {
        struct sim_err err;
        sim_status st = sim_deploy_step(&run.d, &a.step, "predict: ", &so, &err);
        if (st != SIM_OK) {
            cli_error("%s", err.msg);
            rc = CLI_BAD_INPUT;
        }
    }
    if (rc != CLI_OK) {
        cli_run_close(&run);
        return rc;
    }
    rc = predict_print(&a, &run, &so);
    cli_run_close(&run);
    return rc;
}
