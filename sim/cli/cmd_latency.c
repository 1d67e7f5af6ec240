/* cmd_latency.c - `llmstep latency`: what `vllm bench latency` reports for one batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "units.h"

/* The usage around the options' help, which the option table holds. */
static const cli_help latency_help = {
    .head =
        "usage: llmstep latency --model ID --hw ID --batch B --prompt-tokens L --output-tokens O\n"
        "                       [--tp N] [--pp N] [--dp N] [--ep] [--dtype T] [--kv-dtype T]\n"
        "                       [--calibration FILE]\n"
        "                       [--engine ID] [scheduler options] [--format table|json]\n"
        "\n"
        "Predicts the time of one offline batch (vllm bench latency, or LLM.generate with\n"
        "ignore_eos): B prompts of L tokens, each generating exactly O tokens. The engine's\n"
        "scheduler is simulated step by step (prefills under the token budget, decode steps\n"
        "with growing context, the KV-cache limit, preemption by recompute) and the predicted\n"
        "step times are summed: alpha x roofline + beta_s + host time per step.\n"
        "\n"
        "The run is refused (exit 1) when the weights, activation peak, reserve and the KV\n"
        "cache of one max_model_len sequence do not fit one GPU, or the layout is illegal (TP\n"
        "above one node and not a multiple of it, more stages than layers).\n"
        "\n",
    .tail =
        "\n"
        "Example:\n"
        "  llmstep latency --model llama-2-7b --hw h100-sxm --batch 16 --prompt-tokens 1024 \\\n"
        "      --output-tokens 1024 --calibration calibrations/h100-sxm.json\n",
};

static int print_latency_json(const cli_run *run, const sim_batch *b, const sim_batch_result *r,
                              const char *calibration, const sim_pred_band *band)
{
    const sim_sched_resolved *s = &run->sched;
    sim_jw w;
    cli_json_open(&w);
    sim_jw_object_begin(&w, NULL);
    sim_jw_str(&w, "schema_version", "llmstep-latency/1");
    sim_jw_str(&w, "model", run->model.id);
    sim_jw_str(&w, "hardware", run->hw.id);
    sim_jw_str(&w, "engine", run->engine.id);
    sim_jw_int(&w, "tp", run->cfg.tp);
    sim_jw_int(&w, "pp", run->cfg.pp > 1 ? run->cfg.pp : 1);
    /* "dp", "ep" and the per-rank "batch_per_dp_rank" only with --dp or --ep, so outputs
     * without them keep their keys. */
    if (run->cfg.dp > 1 || run->cfg.ep) {
        sim_jw_int(&w, "dp", sim_run_dp(&run->cfg));
        sim_jw_bool(&w, "ep", run->cfg.ep);
        sim_jw_int(&w, "batch_per_dp_rank", sim_dp_rank_share(&run->cfg, b->batch));
    }
    sim_jw_str(&w, "dtype", sim_dtype_name(run->cfg.dtype));
    sim_jw_str(&w, "kv_dtype", sim_dtype_name(run->cfg.kv_dtype));
    sim_jw_int(&w, "batch", b->batch);
    sim_jw_int(&w, "prompt_tokens", b->prompt_tokens);
    sim_jw_int(&w, "output_tokens", b->output_tokens);
    sim_jw_num(&w, "latency_s", r->latency_s);
    if (band && sim_band_json(&w, "band", band, r->latency_s)) {
        sim_jw_free(&w);
        cli_error("latency: the band is not a finite number; refusing to write it");
        return CLI_NUMERIC;
    }
    sim_jw_int(&w, "n_steps", r->n_steps);
    sim_jw_int(&w, "n_prefill_steps", r->n_prefill_steps);
    sim_jw_int(&w, "n_decode_steps", r->n_decode_steps);
    sim_jw_num(&w, "prefill_s", r->prefill_s);
    sim_jw_num(&w, "decode_s", r->decode_s);
    sim_jw_num(&w, "roofline_sum_s", r->roofline_sum_s);
    sim_jw_num(&w, "host_sum_s", r->host_sum_s);
    sim_jw_num(&w, "alpha", run->cfg.alpha);
    sim_jw_num(&w, "beta_s", run->cfg.beta_s);
    sim_jw_bool(&w, "calibrated", calibration != NULL);
    sim_jw_int(&w, "kv_capacity_tokens", r->kv_capacity_tokens);
    sim_jw_int(&w, "kv_blocks", run->mem.kv_blocks);
    sim_jw_int(&w, "peak_kv_blocks", r->peak_kv_blocks);
    sim_jw_num(&w, "peak_kv_frac", r->peak_kv_frac);
    sim_jw_int(&w, "preemptions", r->preemptions);
    sim_jw_int(&w, "recomputed_tokens", r->recomputed_tokens);
    sim_jw_int(&w, "max_num_seqs", s->max_num_seqs);
    sim_jw_int(&w, "max_num_batched_tokens", s->max_num_batched_tokens);
    sim_jw_int(&w, "max_model_len", s->max_model_len);
    sim_jw_int(&w, "block_size", s->block_size);
    sim_jw_num(&w, "gpu_memory_utilization_frac", s->gpu_memory_utilization);
    sim_jw_bool(&w, "chunked_prefill", s->enable_chunked_prefill);
    sim_jw_object_end(&w);
    return cli_json_close(&w, "latency");
}

static void print_latency(const cli_run *run, const sim_batch *b, const sim_batch_result *r,
                          const char *calibration, const sim_pred_band *band)
{
    const sim_sched_resolved *s = &run->sched;
    char lay[48];
    printf("llmstep latency: %s on %s, %s, %s, engine %s\n", run->model.id, run->hw.id,
           cli_layout_name(&run->cfg, lay, sizeof(lay)), cli_weight_format(&run->model, &run->cfg),
           run->engine.id);
    if (run->cfg.pp > 1 && run->engine.kind == SIM_SCHED_V1)
        printf("pipeline: vLLM V1's batch queue, up to %d batches of disjoint requests in "
               "flight through the %d stages (docs/model.md, \"Pipeline parallelism\")\n",
               run->cfg.pp, run->cfg.pp);
    else if (run->cfg.pp > 1)
        printf("pipeline: each step is one batch through the %d stages (stage times and the "
               "transfers summed; docs/model.md, \"Pipeline parallelism\")\n",
               run->cfg.pp);
    printf("batch: %lld prompts x %lld tokens, %lld output tokens each", (long long)b->batch,
           (long long)b->prompt_tokens, (long long)b->output_tokens);
    if (run->cfg.dp > 1)
        printf("; %lld on each of %d DP ranks (in lockstep)",
               (long long)sim_dp_rank_share(&run->cfg, b->batch), run->cfg.dp);
    printf("\n\n");
    printf("  latency          %.4f s", r->latency_s);
    if (calibration)
        printf("   (alpha %.4g, beta %.4g s per step; %s)\n", run->cfg.alpha, run->cfg.beta_s,
               calibration);
    else {
        char line[512];
        cli_run_uncalibrated(run, line, sizeof(line));
        printf("   %s\n", line);
    }
    if (band)
        cli_band_line(NULL, band, r->latency_s);
    printf("  steps            %lld (%lld prefill, %lld decode)\n", (long long)r->n_steps,
           (long long)r->n_prefill_steps, (long long)r->n_decode_steps);
    printf("  prefill time     %.4f s\n  decode time      %.4f s\n", r->prefill_s, r->decode_s);
    printf("  of which host    %.4f s (engine host time per step)\n", r->host_sum_s);
    printf("  KV cache         %lld tokens (%lld blocks of %lld); peak use %.1f%%\n",
           (long long)r->kv_capacity_tokens, (long long)run->mem.kv_blocks,
           (long long)s->block_size, 100.0 * r->peak_kv_frac);
    printf("  memory per GPU   %.2f GB usable: weights %.2f GB, activations %.2f GB, "
           "reserve %.2f GB, KV %.2f GB\n",
           run->mem.usable_bytes / SIM_GB, run->mem.weights_bytes / SIM_GB,
           run->mem.activation_bytes / SIM_GB, run->mem.reserve_bytes / SIM_GB,
           run->mem.kv_budget_bytes / SIM_GB);
    printf("  preemptions      %lld (%lld tokens recomputed)\n", (long long)r->preemptions,
           (long long)r->recomputed_tokens);
    printf("  scheduler        max_num_seqs %lld, max_num_batched_tokens %lld, max_model_len "
           "%lld, chunked prefill %s\n",
           (long long)s->max_num_seqs, (long long)s->max_num_batched_tokens,
           (long long)s->max_model_len, s->enable_chunked_prefill ? "on" : "off");
}

int cmd_latency(int argc, char **argv)
{
    cli_run_spec spec;
    cli_run_spec_init(&spec);
    const char *format = "table";
    int64_t batch = -1, prompt = -1, output = -1, interval = 0;
    /* In the order of the usage. No help of their own: the options of the synopsis (--model,
     * --hw, --tp, --calibration, --batch, --prompt-tokens, --output-tokens) and --gemm. */
    const cli_opt t[] = {
        {.name = "pp",
         .kind = CLI_OPT_I64,
         .dst = &spec.pp,
         .min = 1,
         .max = SIM_PP_MAX,
         .heading = "Options:\n",
         .help = "  --pp N                        pipeline stages (default 1): with the V1 engine "
                 "up to\n"
                 "                                N batches of disjoint requests in flight through "
                 "the\n"
                 "                                stages, as vLLM's batch queue (V0: one batch a "
                 "step;\n"
                 "                                docs/engine.md)\n"},
        CLI_I64_H(
            "dp", &spec.dp, 1, SIM_DP_MAX,
            "  --dp N                        data-parallel ranks (vLLM --data-parallel-size; "
            "default\n"
            "                                1): the B prompts spread over N copies of the "
            "model,\n"
            "                                ceil(B / N) on the busiest, which sets the time; "
            "MoE\n"
            "                                layers gather the N ranks' tokens (docs/model.md,\n"
            "                                \"Expert and data parallelism\")\n"),
        CLI_FLAG_H("ep", &spec.ep,
                   "  --ep                          expert parallelism (vLLM "
                   "--enable-expert-parallel): each\n"
                   "                                of the DP x TP GPUs holds num_experts / (DP x "
                   "TP) whole\n"
                   "                                experts instead of a slice of every expert\n"),
        CLI_STR_H("dtype", &spec.dtype,
                  "  --dtype T                     fp16|bf16|fp8 for unquantized models (fp8: "
                  "online fp8\n"
                  "                                weights); quantized configs carry their own "
                  "format\n"),
        CLI_STR_H(
            "kv-dtype", &spec.kv_dtype,
            "  --kv-dtype T                  default: the model's 16-bit type (vLLM 'auto')\n"),
        CLI_FLAG_H("ignore-memory", &spec.ignore_memory,
                   "  --ignore-memory               simulate even when the memory check fails\n"),
        CLI_STR_H("engine", &spec.engine,
                  "  --engine ID                   engine profile (engines/ID.json; default: the\n"
                  "                                calibration's engine, else vllm-v1; vllm-v0 for "
                  "V0)\n"),
        CLI_SCHED_H(
            "usage", &spec.sched,
            "  --usage llm|server            vLLM's usage-context defaults (default llm)\n"),
        CLI_SCHED_H("max-num-seqs", &spec.sched,
                    "  --max-num-seqs N              default: the engine's (V1: by usage and GPU "
                    "memory)\n"),
        CLI_SCHED_H(
            "max-num-batched-tokens", &spec.sched,
            "  --max-num-batched-tokens N    default: the engine's (V1: 16384 or 8192 for llm;\n"
            "                                V0: max(max_model_len, 2048), 512 when chunked)\n"),
        CLI_SCHED_H(
            "max-model-len", &spec.sched,
            "  --max-model-len N             default: the model's max_position_embeddings\n"),
        CLI_SCHED_H("gpu-memory-utilization", &spec.sched,
                    "  --gpu-memory-utilization F    default: the engine's (0.9)\n"),
        CLI_SCHED_H("block-size", &spec.sched,
                    "  --block-size N                default: the engine's (16 tokens)\n"),
        CLI_FLAG_H("disable-hybrid-kv-cache-manager", &spec.sched.disable_hybrid_kv,
                   "  --disable-hybrid-kv-cache-manager   V1: sliding-window layers keep the whole "
                   "context\n"),
        CLI_SCHED_H(
            "async-scheduling", &spec.sched,
            "  --async-scheduling on|off     V1: the next step's host work overlaps the GPU\n"
            "                                (default: the engine's; on from vLLM 0.14)\n"),
        CLI_SCHED_H("chunked-prefill", &spec.sched,
                    "  --chunked-prefill on|off      V0 only (V1 always chunks): default on when\n"
                    "                                max_model_len > 32768\n"),
        CLI_ROOFLINE_H("roofline", &spec.mode,
                       "  --roofline op|step            roofline mode (see predict --help)\n"),
        CLI_STR_H("format", &format,
                  "  --format table|json           output format (default table)\n"),
        CLI_I64_H(
            "interval", &interval, 10, 100,
            "  --interval L                  with --calibration: the L% band (10, 20, ...,\n"
            "                                100) around the latency, from the calibration's\n"
            "                                held-out offline batches\n"),
        {.name = "model", .kind = CLI_OPT_STR, .dst = &spec.model},
        {.name = "hw", .kind = CLI_OPT_STR, .dst = &spec.hw},
        {.name = "tp", .kind = CLI_OPT_I64, .dst = &spec.tp, .min = 1, .max = 4096},
        {.name = "calibration", .kind = CLI_OPT_STR, .dst = &spec.calibration},
        {.name = "batch", .kind = CLI_OPT_I64, .dst = &batch, .min = 1, .max = SIM_BATCH_MAX_SEQS},
        {.name = "prompt-tokens",
         .kind = CLI_OPT_I64,
         .dst = &prompt,
         .min = 1,
         .max = (double)(INT64_C(1) << 30)},
        {.name = "output-tokens",
         .kind = CLI_OPT_I64,
         .dst = &output,
         .min = 1,
         .max = (double)(INT64_C(1) << 30)},
        {.name = "gemm", .kind = CLI_OPT_GEMM, .dst = &spec.gemm},
    };
    int done,
        rc = cli_opts_parse_help("latency", argc, argv, t, CLI_N(t), &latency_help, &done, NULL);
    if (rc != CLI_OK || done)
        return rc;
    if (!spec.model || !spec.hw || batch < 0 || prompt < 0 || output < 0) {
        cli_error("latency: --model, --hw, --batch, --prompt-tokens and --output-tokens are "
                  "required (see llmstep latency --help)");
        return CLI_USAGE;
    }
    if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0) {
        cli_error("latency: --format '%s': expected table or json", format);
        return CLI_USAGE;
    }
    cli_run run;
    spec.check_memory = 1;
    spec.who = "latency: ";
    spec.memory_hint = " (--ignore-memory to go on)";
    rc = cli_run_open(&spec, &run);
    if (rc != CLI_OK) {
        cli_run_close(&run);
        return rc;
    }
    sim_batch b = {batch, prompt, output};
    sim_batch rank = b; /* one DP rank's share: the whole batch without --dp */
    rank.batch = sim_dp_rank_share(&run.cfg, b.batch);
    sim_batch_result r;
    rc = cli_run_batch(&run, &rank, &r);
    if (rc == CLI_OK) {
        const double printed[] = {r.latency_s,
                                  r.prefill_s,
                                  r.decode_s,
                                  r.roofline_sum_s,
                                  r.host_sum_s,
                                  r.peak_kv_frac,
                                  run.mem.kv_budget_bytes};
        rc = cli_check_finite("latency: ", "the batch time", printed,
                              sizeof(printed) / sizeof(printed[0]));
    }
    if (rc != CLI_OK) {
        cli_run_close(&run);
        return rc;
    }
    sim_pred_band band;
    if (interval && (rc = cli_band(&run, "latency", SIM_BAND_OFFLINE, interval, &band)) != CLI_OK) {
        cli_run_close(&run);
        return rc;
    }
    if (strcmp(format, "json") == 0)
        rc = print_latency_json(&run, &b, &r, spec.calibration, interval ? &band : NULL);
    else
        print_latency(&run, &b, &r, spec.calibration, interval ? &band : NULL);
    cli_run_close(&run);
    return rc;
}
