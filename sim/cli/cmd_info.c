/* cmd_info.c - `llmstep models` and `llmstep hw list|show`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "paths.h"
#include "units.h"

#define MAX_IDS 256

/* The usages: no option has help lines of its own (--format is in the synopsis). */
static const cli_help models_help = {
    .head = "usage: llmstep models [ID|PATH...] [--format table|json]\n\n"
            "Lists the bundled models (or the named ones) with parameter count\n"
            "(billions), active parameters per token, KV-cache bytes per token at TP 1\n"
            "in the model's dtype, the weight format (the checkpoint's\n"
            "quantization_config, else its dtype) and KV-cache dtype that run by default\n"
            "(vLLM's kv_cache_dtype auto), and layer shapes.\n",
    .tail = "",
};
static const cli_help hw_help = {
    .head =
        "usage: llmstep hw list [--format table|json]\n"
        "       llmstep hw show ID|PATH\n"
        "       llmstep hw import --base ID|PATH --name NEW [--stream F] [--nccl F]... [--gemm F]\n"
        "                         [--out PATH] [--force]\n\n"
        "list: every profile in hwprofiles/ with peaks (TFLOP/s), bandwidths (TB/s), memory\n"
        "      (GiB) and the achievable ridge point (FLOP/B).\n"
        "show: every figure with its unit, status (datasheet, measured, derived, estimated,\n"
        "      default) and source, the all-reduce table and the ridge points.\n"
        "import: a new profile from a base profile and BabelStream/STREAM, nccl-tests and GEMM\n"
        "      outputs (llmstep hw import --help; docs/hardware-characterization.md).\n",
    .tail = "",
};

/* Parses --help (h) and --format for the listing command cmd ("models", "hw list"); returns
 * -1 to continue, with the operands from argv[*first] on. */
static int simple_opts(const char *cmd, int argc, char **argv, const cli_help *h,
                       const char **format, int *first)
{
    const cli_opt t[] = {CLI_STR("format", format)};
    int done, rc = cli_opts_parse_help(cmd, argc, argv, t, CLI_N(t), h, &done, first);
    if (rc != CLI_OK || done)
        return rc;
    if (strcmp(*format, "table") != 0 && strcmp(*format, "json") != 0) {
        cli_error("%s: --format '%s': expected table or json", cmd, *format);
        return CLI_USAGE;
    }
    return -1;
}

/* One model: a row of the table, or an object of the JSON array when w is not NULL. */
static void print_model(const sim_model *m, sim_jw *w)
{
    sim_param_count p;
    sim_model_params(m, &p);
    double kv = sim_model_kv_bytes_per_token(m, 1, m->dtype);
    /* What runs by default: the checkpoint's weight format (its quantization_config, else its
     * dtype) and vLLM's KV cache "auto" (the 16-bit type the model runs in). */
    const sim_run_cfg run = {.dtype = m->dtype};
    const char *weights = sim_deploy_weight_format(m, &run);
    const char *kv_dtype = sim_dtype_name(sim_model_dtype16(m));
    if (w) {
        sim_jw_object_begin(w, NULL);
        sim_jw_str(w, "id", m->id);
        sim_jw_str(w, "model_type", sim_arch_name(m->arch));
        sim_jw_num(w, "params", p.total);
        sim_jw_num(w, "active_params", p.active_per_token);
        sim_jw_num(w, "kv_bytes_per_token", kv);
        sim_jw_str(w, "dtype", sim_dtype_name(m->dtype));
        sim_jw_int(w, "num_hidden_layers", m->n_layers);
        sim_jw_int(w, "hidden_size", m->d_model);
        sim_jw_int(w, "num_attention_heads", m->n_heads);
        sim_jw_int(w, "num_key_value_heads", m->n_kv_heads);
        sim_jw_int(w, "head_dim", m->head_dim);
        sim_jw_int(w, "intermediate_size", m->d_ff);
        sim_jw_int(w, "vocab_size", m->vocab);
        sim_jw_int(w, "num_experts", m->n_experts);
        sim_jw_int(w, "num_experts_per_tok", m->n_experts_per_tok);
        sim_jw_int(w, "moe_intermediate_size", m->d_ff_expert);
        sim_jw_int(w, "sliding_window_tokens", m->sliding_window);
        sim_jw_int(w, "max_position_embeddings", m->max_pos);
        sim_jw_str(w, "weight_format", weights);
        sim_jw_str(w, "kv_dtype", kv_dtype);
        sim_jw_object_end(w);
        return;
    }
    char moe[48] = "-";
    if (m->n_experts > 0)
        snprintf(moe, sizeof(moe), "%lldx%lld top%lld", (long long)m->n_experts,
                 (long long)m->d_ff_expert, (long long)m->n_experts_per_tok);
    printf("%-18s %-11s %8.2f %8.2f %10.0f %-18s %-4s %4lld %6lld %4lld/%-3lld %4lld %6lld %-16s "
           "%7lld %7lld\n",
           m->id, sim_arch_name(m->arch), p.total / 1e9, p.active_per_token / 1e9, kv, weights,
           kv_dtype, (long long)m->n_layers, (long long)m->d_model, (long long)m->n_heads,
           (long long)m->n_kv_heads, (long long)m->head_dim, (long long)m->d_ff, moe,
           (long long)m->vocab, (long long)m->max_pos);
}

int cmd_models(int argc, char **argv)
{
    const char *format = "table";
    int first = argc;
    int rc = simple_opts("models", argc, argv, &models_help, &format, &first);
    if (rc >= 0)
        return rc;
    int json = strcmp(format, "json") == 0;
    char ids[MAX_IDS][64];
    const char *names[MAX_IDS];
    int n = 0;
    if (first < argc) {
        for (int i = first; i < argc && n < MAX_IDS; i++)
            names[n++] = argv[i];
    } else {
        n = sim_path_list(cli_data_dir(), "models", ids, MAX_IDS);
        if (n < 0) {
            cli_error("models: cannot read %s/models", cli_data_dir());
            return CLI_BAD_INPUT;
        }
        for (int i = 0; i < n; i++)
            names[i] = ids[i];
    }
    /* Load everything first, so a bad file leaves stdout empty. */
    static sim_model models[MAX_IDS];
    for (int i = 0; i < n; i++) {
        char path[4096];
        rc = cli_load_model(names[i], &models[i], path, sizeof(path));
        if (rc != CLI_OK)
            return rc;
    }
    sim_jw w;
    if (json) {
        /* One model a line. */
        cli_json_open(&w);
        sim_jw_array_begin_lines(&w, NULL, SIM_JW_LINES_BETWEEN);
    } else {
        printf("%-18s %-11s %8s %8s %10s %-18s %-4s %4s %6s %8s %4s %6s %-16s %7s %7s\n", "id",
               "type", "params_B", "active_B", "kv_B/tok", "weights", "kv", "L", "d", "H/KV", "hd",
               "d_ff", "experts", "vocab", "max_pos");
    }
    for (int i = 0; i < n; i++)
        print_model(&models[i], json ? &w : NULL);
    if (!json)
        return CLI_OK;
    sim_jw_array_end(&w);
    return cli_json_close(&w, "models");
}

static const char *unit_of(const char *key)
{
    if (strstr(key, "_flops_per_s"))
        return "FLOP/s";
    if (strstr(key, "_bytes_per_s"))
        return "B/s";
    if (strstr(key, "_bytes"))
        return "B";
    if (strstr(key, "_frac"))
        return "";
    return "";
}

static int hw_show(const char *name)
{
    sim_hw hw;
    char path[4096];
    int rc = cli_load_hw(name, &hw, path, sizeof(path));
    if (rc != CLI_OK)
        return rc;
    printf("%s: %s\n  file: %s\n  source: %s\n", hw.id, hw.name, path, hw.source);
    printf("  stack: %s\n\n",
           hw.stack[0] ? hw.stack : "(not given: figures not tied to one software stack)");
    int counts[SIM_PROV_COUNT] = {0};
    printf("  %-30s %14s %-7s %-9s  %s\n", "figure", "value", "unit", "status", "source");
    for (int f = 0; f < SIM_HWF_COUNT; f++) {
        const char *key = sim_hw_field_key((sim_hw_field)f);
        counts[hw.prov[f]]++;
        if (hw.prov[f] == SIM_PROV_ABSENT) {
            printf("  %-30s %14s %-7s %-9s  %s\n", key, "-", "", "absent",
                   f == SIM_HWF_PEAK_FP8 ? "no fp8 units (fp8 runs weight-only)" : "");
            continue;
        }
        printf("  %-30s %14.6g %-7s %-9s  %s\n", key, hw.v[f], unit_of(key),
               sim_prov_name(hw.prov[f]), hw.src[f]);
    }
    printf("\n  all-reduce (t = latency + 2(n-1)/n x bytes / bus bandwidth):\n");
    if (hw.n_allreduce == 0) {
        sim_allreduce a;
        sim_hw_allreduce_for(&hw, 2, &a);
        printf("    none measured; %s -> %.1f us, %.4g B/s\n", a.source, sim_s_to_us(a.latency_s),
               a.bus_bw_bytes_per_s);
    }
    for (int i = 0; i < hw.n_allreduce; i++)
        cli_print_allreduce(&hw.allreduce[i], "    ");
    /* Shown when the profile has the list; without it the all-reduce default applies. */
    if (hw.n_alltoall > 0)
        printf("\n  all-to-all, all-gather, reduce-scatter (MoE dispatch with --dp; t = latency + "
               "(n-1)/n x bytes / bus bandwidth):\n");
    for (int i = 0; i < hw.n_alltoall; i++)
        cli_print_allreduce(&hw.alltoall[i], "    ");
    printf("\n  ridge point (datasheet bf16 peak / peak HBM bandwidth): %.1f FLOP/B\n",
           hw.v[SIM_HWF_PEAK_BF16] / hw.v[SIM_HWF_BW_HBM_PEAK]);
    printf("  ridge point (achievable: peak x gemm_eff / (STREAM copy x weights factor)):"
           " bf16 %.1f FLOP/B",
           sim_hw_ridge_flops_per_byte(&hw, SIM_DTYPE_BF16));
    if (hw.prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT)
        printf(", fp8 %.1f FLOP/B", sim_hw_ridge_flops_per_byte(&hw, SIM_DTYPE_FP8));
    printf("\n  figures: %d datasheet, %d measured, %d derived, %d estimated, %d default\n",
           counts[SIM_PROV_DATASHEET], counts[SIM_PROV_MEASURED], counts[SIM_PROV_DERIVED],
           counts[SIM_PROV_ESTIMATED], counts[SIM_PROV_DEFAULT]);
    return CLI_OK;
}

/* One profile of `hw list --format json`. */
static void hw_json(sim_jw *w, const sim_hw *hw, double fp8, double ridge, int measured)
{
    sim_jw_object_begin(w, NULL);
    sim_jw_str(w, "id", hw->id);
    sim_jw_str(w, "name", hw->name);
    sim_jw_num(w, "peak_bf16_flops_per_s", hw->v[SIM_HWF_PEAK_BF16]);
    sim_jw_num(w, "peak_fp8_flops_per_s", fp8);
    sim_jw_num(w, "bw_hbm_peak_bytes_per_s", hw->v[SIM_HWF_BW_HBM_PEAK]);
    sim_jw_num(w, "bw_stream_copy_bytes_per_s", hw->v[SIM_HWF_BW_STREAM_COPY]);
    sim_jw_num(w, "mem_capacity_bytes", hw->v[SIM_HWF_MEM_CAPACITY]);
    sim_jw_num(w, "ridge_point_flops_per_byte", ridge);
    sim_jw_int(w, "n_measured_figures", measured);
    sim_jw_object_end(w);
}

static int hw_list(int json)
{
    char ids[MAX_IDS][64];
    int n = sim_path_list(cli_data_dir(), "hwprofiles", ids, MAX_IDS);
    if (n < 0) {
        cli_error("hw list: cannot read %s/hwprofiles", cli_data_dir());
        return CLI_BAD_INPUT;
    }
    sim_jw w;
    if (json) {
        /* One profile a line. */
        cli_json_open(&w);
        sim_jw_array_begin_lines(&w, NULL, SIM_JW_LINES_BETWEEN);
    } else {
        printf("%-14s %-34s %10s %10s %9s %9s %8s %8s %8s\n", "id", "name", "bf16_TF/s", "fp8_TF/s",
               "HBM_TB/s", "copy_TB/s", "mem_GiB", "ridge", "measured");
    }
    for (int i = 0; i < n; i++) {
        sim_hw hw;
        char path[4096];
        int rc = cli_load_hw(ids[i], &hw, path, sizeof(path));
        if (rc != CLI_OK) {
            if (json) { /* the profiles before it stay printed, as in the table */
                sim_jw_flush(&w);
                sim_jw_free(&w);
            }
            return rc;
        }
        int measured = 0;
        for (int f = 0; f < SIM_HWF_COUNT; f++)
            measured += hw.prov[f] == SIM_PROV_MEASURED || hw.prov[f] == SIM_PROV_DERIVED;
        double fp8 = hw.prov[SIM_HWF_PEAK_FP8] != SIM_PROV_ABSENT ? hw.v[SIM_HWF_PEAK_FP8] : 0.0;
        double ridge = sim_hw_ridge_flops_per_byte(&hw, SIM_DTYPE_BF16);
        if (json)
            hw_json(&w, &hw, fp8, ridge, measured);
        else
            printf("%-14s %-34.34s %10.1f %10.1f %9.3f %9.3f %8.1f %8.1f %8d\n", hw.id, hw.name,
                   hw.v[SIM_HWF_PEAK_BF16] / SIM_TERA, fp8 / SIM_TERA,
                   hw.v[SIM_HWF_BW_HBM_PEAK] / SIM_TB, hw.v[SIM_HWF_BW_STREAM_COPY] / SIM_TB,
                   hw.v[SIM_HWF_MEM_CAPACITY] / SIM_GIB, ridge, measured);
    }
    if (json) {
        sim_jw_array_end(&w);
        return cli_json_close(&w, "hw list");
    }
    printf("\nridge = achievable bf16 ridge point, FLOP/B; measured = figures measured or "
           "derived from measurements\n");
    return CLI_OK;
}

int cmd_hw(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        cli_help_print(argc < 2 ? stderr : stdout, &hw_help, NULL, 0); /* no option lines */
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    const char *format = "table";
    int first = argc;
    if (strcmp(argv[1], "list") == 0) {
        int rc = simple_opts("hw list", argc - 1, argv + 1, &hw_help, &format, &first);
        if (rc >= 0)
            return rc;
        if (first < argc - 1) {
            cli_error("hw list: unexpected argument '%s'", argv[first + 1]);
            return CLI_USAGE;
        }
        return hw_list(strcmp(format, "json") == 0);
    }
    if (strcmp(argv[1], "show") == 0) {
        int rc = simple_opts("hw show", argc - 1, argv + 1, &hw_help, &format, &first);
        if (rc >= 0)
            return rc;
        if (first != argc - 2) {
            cli_error("hw show: expected exactly one ID or PATH");
            return CLI_USAGE;
        }
        return hw_show(argv[first + 1]);
    }
    if (strcmp(argv[1], "import") == 0)
        return cmd_hw_import(argc - 1, argv + 1);
    cli_error("hw: unknown subcommand '%s' (expected list, show or import)", argv[1]);
    return CLI_USAGE;
}

void cli_print_allreduce(const sim_allreduce *a, const char *indent)
{
    printf("%s%d GPUs: latency %.2f us, bus bandwidth %.4g B/s  [%s] %s\n", indent, a->n_gpus,
           sim_s_to_us(a->latency_s), a->bus_bw_bytes_per_s, sim_prov_name(a->prov), a->source);
    for (int k = 0; k < a->n_regimes; k++) {
        const double b = a->regimes[k].from_bytes;
        printf("%s  from %.0f %s: latency %.2f us, bus bandwidth %.4g B/s\n", indent,
               b >= 1048576.0 ? b / 1048576.0 : b / 1024.0, b >= 1048576.0 ? "MiB" : "KiB",
               sim_s_to_us(a->regimes[k].latency_s), a->regimes[k].bus_bw_bytes_per_s);
    }
}
