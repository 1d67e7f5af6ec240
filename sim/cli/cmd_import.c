/*
 * cmd_import.c - `llmstep hw import`: a new hardware profile from a base profile
 * and the outputs of STREAM/BabelStream, nccl-tests all_reduce_perf and a GEMM
 * sweep (sim/io/hw_import.h; docs/hardware-characterization.md).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "hw_import.h"
#include "paths.h"
#include "units.h"

/* The usage around the options' help (the table in cmd_hw_import). */
static const cli_help import_help = {
    .head =
        "usage: llmstep hw import --base ID|PATH --name NEW [--stream FILE] [--nccl FILE]...\n"
        "                         [--gemm FILE] [--tables DIR [--attn-kernel NAME]]\n"
        "                         [--out PATH] [--force]\n\n"
        "Writes a new profile (default hwprofiles/NEW.json in the data folder) that starts from\n"
        "the base profile and replaces the figures the files measure, each marked measured or\n"
        "derived with the file and lines it came from:\n",
    .tail = "--stream, --nccl and --gemm inputs must be uncompressed. See\n"
            "docs/hardware-characterization.md.\n",
};

static void print_result(const sim_import_opts *o, const sim_import_result *r)
{
    const sim_hw *hw = &r->hw;
    printf("wrote %s (id %s, base %s)\n", o->out_path, hw->id, o->base_path);
    if (hw->stack[0])
        printf("  stack: %s\n", hw->stack);
    printf("  %-30s %14s %-9s  %s\n", "figure", "value", "status", "source");
    for (int f = 0; f < SIM_HWF_COUNT; f++) {
        if (!r->changed[f])
            continue;
        printf("  %-30s %14.6g %-9s  %s\n", sim_hw_field_key((sim_hw_field)f), hw->v[f],
               sim_prov_name(hw->prov[f]), hw->src[f]);
    }
    /* The written file's entries are in the same order as the import's (sorted by n_gpus). */
    for (int i = 0; i < hw->n_allreduce; i++) {
        if (!r->ar_changed[i])
            continue;
        cli_print_allreduce(&hw->allreduce[i], "  allreduce ");
    }
    for (int i = 0; i < r->n_notes; i++)
        printf("  note: %s\n", r->notes[i]);
}

int cmd_hw_import(int argc, char **argv)
{
    sim_import_opts o;
    memset(&o, 0, sizeof(o));
    const char *base = NULL;
    cli_opt_bounded nccl = {{o.nccl_paths, 0, SIM_HW_MAX_ALLREDUCE}, ""};
    snprintf(nccl.full, sizeof(nccl.full), "at most %d --nccl files", SIM_HW_MAX_ALLREDUCE);
    /* In the order of the usage. No help of their own: --base, --name and --force (the
     * synopsis). */
    const cli_opt t[] = {
        CLI_STR_H("stream", &o.stream_path,
                  "  --stream FILE  BabelStream (text or --csv) or STREAM output -> "
                  "bw_stream_*_bytes_per_s\n"),
        CLI_BOUNDED_H(
            "nccl", &nccl,
            "  --nccl FILE    nccl-tests/rccl-tests all_reduce_perf output, one per GPU count\n"
            "                 (repeat the option) -> allreduce latency and bus bandwidth (fit "
            "over\n"
            "                 8 KiB-256 MiB)\n"),
        CLI_STR_H("gemm", &o.gemm_path,
                  "  --gemm FILE    CSV with m,n,k,dtype and time [s] or latency [ms], or a\n"
                  "                 cutlass_profiler --output CSV -> gemm_eff_fp16/fp8_frac,\n"
                  "                 bw_factor_weights_frac, gemm_fixed_s\n"),
        CLI_STR_H(
            "tables", &o.tables_path,
            "  --tables DIR   folder of aic kernel tables (gemm_perf, generation_attention_perf,\n"
            "                 context_attention_perf, custom_allreduce_perf; .csv or .csv.gz), "
            "e.g.\n"
            "                 ../shared/data/kernels/aic-vllm/h100_sxm/0.19.0 -> GEMM efficiency,\n"
            "                 weight-streaming factor and fixed time per dtype (bf16, fp8), "
            "decode\n"
            "                 attention factors (bf16 and fp8 KV), attn_eff_frac, all-reduce per "
            "GPU\n"
            "                 count, and \"stack\" (framework and version of the tables)\n"),
        CLI_STR_H(
            "attn-kernel", &o.attn_kernel,
            "  --attn-kernel NAME  kernel_source of the attention rows (default: the first of\n"
            "                 vllm_flash_attn_fa3, vllm_flash_attn, vllm_flash_attn_fa2, "
            "vllm_flashinfer)\n"),
        CLI_STR_H("out", &o.out_path,
                  "  --out PATH     where to write (refused if it exists, unless --force)\n"),
        CLI_STR("base", &base),
        CLI_STR("name", &o.name),
        CLI_FLAG("force", &o.force),
    };
    int done,
        rc = cli_opts_parse_help("hw import", argc, argv, t, CLI_N(t), &import_help, &done, NULL);
    if (rc != CLI_OK || done)
        return rc;
    o.n_nccl = nccl.l.n;
    if (!base || !o.name) {
        cli_error("hw import: --base and --name are required (see llmstep hw import --help)");
        return CLI_USAGE;
    }
    if (!o.stream_path && o.n_nccl == 0 && !o.gemm_path && !o.tables_path) {
        cli_error("hw import: nothing to import (give --stream, --nccl, --gemm or --tables)");
        return CLI_USAGE;
    }
    struct sim_err err;
    char base_path[4096], out_path[4096];
    if (sim_path_resolve(cli_data_dir(), "hwprofiles", base, base_path, sizeof(base_path), &err) !=
        SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    o.base_path = base_path;
    if (!o.out_path) {
        if ((size_t)snprintf(out_path, sizeof(out_path), "%s/hwprofiles/%s.json", cli_data_dir(),
                             o.name) >= sizeof(out_path)) {
            cli_error("hw import: output path too long");
            return CLI_USAGE;
        }
        o.out_path = out_path;
    }
    /* --force replaces an earlier output, never one of the files imported from. */
    const char *inputs[3 + SIM_HW_MAX_ALLREDUCE] = {o.base_path, o.stream_path, o.gemm_path};
    for (int i = 0; i < o.n_nccl; i++)
        inputs[3 + i] = o.nccl_paths[i];
    rc = cli_output_clear("hw import", "--out", o.out_path, NULL, inputs, 3 + (size_t)o.n_nccl);
    if (rc != CLI_OK)
        return rc;
    /* Nor into the folder of kernel tables it reads (its files are inputs too). */
    char out_dir[4096];
    if (o.tables_path && sim_path_folder(o.out_path, out_dir, sizeof(out_dir))) {
        if (sim_path_same(out_dir, o.tables_path)) {
            cli_error("hw import: --out %s is in the folder of kernel tables %s, whose files it "
                      "reads; write it elsewhere",
                      o.out_path, o.tables_path);
            return CLI_USAGE;
        }
    }
    static sim_import_result res;
    sim_status st = sim_hw_import(&o, &res, &err);
    if (st != SIM_OK) {
        cli_error("hw import: %s", err.msg);
        return st == SIM_EFIT ? CLI_NUMERIC : CLI_BAD_INPUT;
    }
    print_result(&o, &res);
    return CLI_OK;
}
