/*
 * main.c - llmstep command dispatch. Each command parses its own options
 * (its option table, opts.h, which also refuses a single-valued option given twice),
 * calls the loaders and the core, prints, and returns an exit code: 0 ok, 1 bad
 * input, 2 usage, 3 numerical failure.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "llmstep.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"predict", cmd_predict, "predict one engine step's time, per operator"},
    {"models", cmd_models, "list the bundled models with parameters and KV bytes per token"},
    {"hw", cmd_hw, "list or show hardware profiles (hw list, hw show ID)"},
    {"latency", cmd_latency, "predict an offline batch (vllm bench latency) step by step"},
    {"serve", cmd_serve, "simulate online serving: TTFT, TPOT, ITL, E2E, throughput under load"},
    {"calibrate", cmd_calibrate, "fit alpha and beta_s to measurements (GSL least squares)"},
    {"validate", cmd_validate, "predict measurements and report MAPE, median/max APE, R^2"},
    {"check", cmd_check, "drift alarm: new measurements against a calibration's band"},
    {"validate-kernels", cmd_validate_kernels, "kernel rooflines vs measured kernel tables"},
    {"import-bench", cmd_import_bench,
     "vllm bench serve / latency result files as measurement rows"},
    {"capacity", cmd_capacity, "memory per GPU, KV capacity, sequences that fit, smallest TP"},
    {"sweep", cmd_sweep, "predict model x hw x TP x batch x context (CSV, best, Pareto)"},
    {"plot", cmd_plot, "plots (SVG/PNG via gnuplot): roofline, sweep, serving, validate"},
    {"bench", cmd_bench, "benchmark: step predictions per second on one core"},
    {"web", cmd_web, "the capacity-planning page in a browser, and its JSON API"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: llmstep COMMAND [options]   (llmstep COMMAND --help for details)\n\n"
               "Predicts vLLM step latency from a model's config and measured GPU figures.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nData: models and hwprofiles are read from %s (set LLMSTEP_DATA_DIR to change).\n",
            cli_data_dir());
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("llmstep %s\n", LLMSTEP_VERSION);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    cli_error("unknown command '%s' (see llmstep --help)", argv[1]);
    return CLI_USAGE;
}
