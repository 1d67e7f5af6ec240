/*
 * cli.h - shared pieces of the llmstep command-line tool: exit codes, strict
 * argument parsing, and the loaders every command uses.
 */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline.h"
#include "calib_json.h"
#include "deploy.h"
#include "engine.h"
#include "hw.h"
#include "json_writer.h"
#include "model.h"
#include "sched_v0.h"
#include "sched_v1.h"
#include "setup.h"
#include "status.h"
#include "step.h"

/* The engine profile commands use when neither --engine nor a calibration names one. */
#define CLI_DEFAULT_ENGINE SIM_DEFAULT_ENGINE

/* Exit codes (../shared/MEASUREMENTS.md): jq-style enum. */
enum cli_exit {
    CLI_OK = 0,
    CLI_BAD_INPUT = 1,
    CLI_USAGE = 2,
    CLI_NUMERIC = 3,
    CLI_DRIFT = 4, /* check: measurements left the calibration's band */
};

extern const char *cli_progname;

/* The exit code of a failed library call (the one status-to-exit map): out of memory and a
 * fit that failed numerically are CLI_NUMERIC, everything else (a file, a row, a value at
 * fault) CLI_BAD_INPUT; SIM_OK is CLI_OK. */
int cli_exit_of(sim_status st);

/* Every JSON output goes through the one writer (sim/io/json_writer.h): cli_json_open starts
 * a compact one on stdout; cli_json_close writes its final newline and flushes it. A failed
 * write (or running out of memory) is said on stderr ("WHO: writing the JSON output failed:
 * ...") and returned as its exit code (cli_exit_of); else CLI_OK. */
void cli_json_open(sim_jw *w);
int cli_json_close(sim_jw *w, const char *who);

/* Prints "llmstep: <context><message>" to stderr, on one line, with control characters and
 * invalid UTF-8 written as \xNN. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sets the context every later message starts with (NULL clears it), e.g. the
 * "file:line: id: " of the measurement row being predicted. */
void cli_error_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The option errors every subcommand CMD gives, each returning CLI_USAGE after one line:
 * cli_getopt_fail for getopt_long's ':' (missing value: "CMD: OPT needs a value") and '?'
 * ("CMD: unknown option 'OPT' (see llmstep CMD --help)") returns; cli_bad_value for a value
 * the option's parser refused ("CMD: --NAME 'VALUE': invalid value (see llmstep CMD --help)").
 * cli_no_operands returns CLI_OK when getopt left no operands, else "CMD: unexpected argument
 * 'ARG'" and CLI_USAGE. */
int cli_getopt_fail(const char *cmd, int c, char *const argv[]);
int cli_bad_value(const char *cmd, const char *name, const char *value);
int cli_no_operands(const char *cmd, int argc, char *const argv[]);

/* The folder holding models/ and hwprofiles/ (sim_deploy_find_data_dir, looked up once). */
const char *cli_data_dir(void);

/*
 * The one check before a result is printed: every value finite, else "<who><what> is not a
 * finite number" and CLI_NUMERIC (exit 3). Returns CLI_OK otherwise.
 */
int cli_check_finite(const char *who, const char *what, const double *v, size_t n);

/* Strict parsers: the whole string must be a number in [min, max]; no NaN, no overflow. */
int cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
int cli_parse_double(const char *s, double min, double max, double *out);

/*
 * Appends the groups of a step shorthand to *s:
 *   kind 'p': "BxL"        B new sequences of L tokens (prefill; they sample)
 *   kind 'd': "BxC"        B sequences decoding one token at context C
 *   kind 'c': "BxTxC[:mid]" B chunks of T tokens after C cached; ":mid" = not the last chunk
 * Returns 0 on success, or -1 with a message in err.
 */
int cli_parse_group(char kind, const char *spec, sim_step *s, struct sim_err *err);

/* "flat" or "tile-wave" -> *out; returns -1 otherwise. */
int cli_parse_gemm(const char *s, sim_gemm_model *out);

/* "op" or "step" -> *out; returns -1 otherwise. */
int cli_parse_roofline(const char *s, sim_roofline_mode *out);

/*
 * Parses the value of a scheduler option into *s, by its long name without dashes:
 * max-num-seqs (1..2^20), max-num-batched-tokens and max-model-len (1..2^30),
 * gpu-memory-utilization (1e-3..1), block-size (1..2^20), chunked-prefill (on|off),
 * usage (llm|server: which of vLLM's usage-context defaults a V1 engine takes).
 * Returns 0, or -1 for a bad value or a name that is not a scheduler option.
 */
int cli_parse_sched_opt(const char *name, const char *arg, sim_sched_cfg *s);

/* The speculative-decoding options of serve and sweep (--spec, --spec-tokens, --acceptance,
 * --spec-model), as parsed: cli_spec_finish checks them together into a sim_spec. */
typedef struct cli_spec_args {
    sim_spec_method method; /* --spec (SIM_SPEC_NONE: not given) */
    int64_t k;              /* --spec-tokens (0: not given) */
    double accept[SIM_SPEC_MAX_TOKENS];
    int n_accept;      /* values of --acceptance (0: not given) */
    const char *model; /* --spec-model */
} cli_spec_args;
/* CLI_OPT_CUSTOM parsers: --spec into a cli_spec_args' method, --acceptance (one rate, or one
 * per position, comma-separated, each in [0, 1]) into its rates. */
int cli_parse_spec_method(const char *arg, void *dst, char *msg, size_t cap);
int cli_parse_acceptance(const char *arg, void *dst, char *msg, size_t cap);
/* The options together: none, or --spec with --spec-tokens and --acceptance (one rate for
 * every position, or k of them), --spec-model with --spec draft only. Fills out (method NONE
 * when not given) and *model; prints "<cmd>: ..." and returns CLI_USAGE otherwise. */
int cli_spec_finish(const char *cmd, const cli_spec_args *a, sim_spec *out, const char **model);

/* Resolve and load by id or path; print the error and return CLI_BAD_INPUT on failure. */
int cli_load_model(const char *name, sim_model *m, char *path_out, size_t cap);
int cli_load_hw(const char *name, sim_hw *hw, char *path_out, size_t cap);
/* A model, then a hardware profile (each path_out of cap bytes). */
int cli_load_model_hw(const char *model, const char *hw_name, sim_model *m, sim_hw *hw,
                      char *model_path_out, char *hw_path_out, size_t cap);
/* Loads a calibration and checks it names hw_id. */
int cli_load_calib(const char *path, const char *hw_id, sim_calib *c);

/* The note on stderr when the figures of the calibration at path (fitted on the model
 * classes domain) do not apply to model m (sim_calib_for_model). */
void cli_note_other_class(const char *who, const char *path, unsigned domain, const sim_model *m);

/* The note on stderr when the calibration folder given has files for d's GPU but none for
 * its engine (sim_deploy_find_calib), so d runs uncalibrated. */
void cli_note_other_engine(const char *who, const char *folder, const sim_deployment *d);

/* Prints one all-reduce entry: "<indent>N GPUs: latency .. us, bus bandwidth .. B/s  [status]
 * source", then one line per size regime ("from 512 KiB: ..."). */
void cli_print_allreduce(const sim_allreduce *a, const char *indent);

/*
 * Resolves --dtype and --kv-dtype (NULL = not given) for model m into cfg->dtype and
 * cfg->kv_dtype. Unquantized models: dtype defaults to the model's 16-bit type; fp8
 * quantizes the weights online. Quantized models carry their weight format: --dtype
 * fp16/bf16 sets the activation type, fp8 is accepted for fp8 checkpoints and refused
 * for others. kv_dtype defaults to vLLM's "auto": the 16-bit type the model runs in,
 * also under fp8 weights. "auto" is accepted for both (the default), fp8_e4m3 and
 * fp8_e5m2 for the KV cache. who prefixes messages ("predict: "). Prints the error and
 * returns CLI_USAGE on failure.
 */
int cli_resolve_dtypes(const sim_model *m, const char *dtype_s, const char *kv_s, const char *who,
                       sim_run_cfg *cfg);

/* "awq-int4-g128" for a quantized model, else the dtype name ("bf16"). */
const char *cli_weight_format(const sim_model *m, const sim_run_cfg *cfg);

/* Refuses (CLI_BAD_INPUT, message printed) a TP above the profile's n_gpus_per_node that is
 * not a multiple of it. */
int cli_check_tp_node(const sim_hw *hw, int64_t tp, const char *who);

/* "TP 4", or "TP 4 x PP 2" with pipeline stages, into buf. Returns buf. */
const char *cli_layout_name(const sim_run_cfg *cfg, char *buf, size_t cap);

/* Refuses (CLI_BAD_INPUT, message printed) a TP x PP layout sim_deploy_check_layout refuses. */
int cli_check_layout(const sim_model *m, const sim_hw *hw, int64_t tp, int64_t pp, const char *who);

/*
 * Refuses (CLI_BAD_INPUT) a configuration su whose weights, activation peak, reserve and
 * the KV cache of one max_model_len sequence do not fit the usable memory (mem.fits
 * of sim_memory_compute), saying by how much, the smallest TP that fits and the
 * longest max_model_len that fits at this TP. sc: the scheduler options as given.
 */
int cli_check_memory(const sim_setup *su, const sim_sched_cfg *sc, const sim_memory *mem,
                     const char *who);

/* Everything one prediction run needs: the names given and the loaded, resolved inputs. */
typedef struct cli_run_spec {
    const char *model, *hw, *engine, *calibration, *dtype, *kv_dtype;
    int64_t tp;
    int64_t pp; /* pipeline stages (default 1) */
    int64_t dp; /* data-parallel ranks (default 1) */
    int ep;     /* 1: expert parallelism (--ep) */
    sim_sched_cfg sched;
    sim_roofline_mode mode;
    sim_gemm_model gemm;
    int ignore_memory; /* 1: --ignore-memory (commands that check memory) */
    int no_host;       /* 1: the engine's host time is left out (--no-host-time) */
    /* 1: cli_run_open refuses an engine that would not start (unless ignore_memory), with
     * memory_hint appended; who prefixes the messages about settings ("serve: "). */
    int check_memory;
    const char *who, *memory_hint;
    sim_spec spec;          /* speculative decoding (method SIM_SPEC_NONE: off) */
    int quiet;              /* 1: cli_run_open prints no error (the caller reports it) */
    const char *spec_model; /* --spec-model: method draft's model */
} cli_run_spec;

/* An opened run (sim_deploy_open through the run's own cache): copies of the loaded inputs
 * and the resolved settings. */
typedef struct cli_run {
    sim_deployment d; /* the resolved deployment (pointers into the cache) */
    sim_model model;
    sim_hw hw;
    sim_engine engine;
    sim_run_cfg cfg;
    sim_sched_resolved sched;
    sim_memory mem;
    sim_batch_work *work;    /* heap, owned; freed by cli_run_close */
    struct sim_cache *cache; /* owned; freed by cli_run_close */
    char model_path[4096];
} cli_run;

/* The resolved inputs of run (its copies) as one sim_setup, valid while run is. */
static inline sim_setup cli_run_setup(const cli_run *run)
{
    return (sim_setup){&run->engine, &run->model, &run->hw, &run->cfg, &run->sched};
}

void cli_run_spec_init(cli_run_spec *spec);
/* Loads and checks everything (sim_deploy_open); prints the error and returns CLI_USAGE (a
 * setting at fault), CLI_BAD_INPUT (a file) or CLI_NUMERIC (memory) on failure. Call
 * cli_run_close after a failure too. */
int cli_run_open(const cli_run_spec *spec, cli_run *run);
/* "uncalibrated: alpha = 1, beta = 0; <sim_deploy_uncalibrated_hint>" into buf. */
void cli_run_uncalibrated(const cli_run *run, char *buf, size_t cap);
/*
 * --interval L of a prediction command: run's band for family (sim_deploy_band), or the reason
 * on stderr ("<who>: --interval L: <reason>") and CLI_USAGE.
 */
int cli_band(const cli_run *run, const char *who, int family, int64_t level, sim_pred_band *out);
/* The band of a prediction of predicted_s seconds as "lo - hi" in seconds (from 1 s) or
 * milliseconds, four decimals, into buf. */
void cli_band_range(char *buf, size_t cap, const sim_pred_band *b, double predicted_s);
/* The line a table prints under the prediction: "  [what ]L% band  <range>  (P..-P.. of
 * measured / predicted: N held-out <family> rows of the calibration, held out by F)". */
void cli_band_line(const char *what, const sim_pred_band *b, double predicted_s);
/* Simulates one offline batch; prints the error and returns CLI_BAD_INPUT on failure. */
int cli_run_batch(cli_run *run, const sim_batch *b, sim_batch_result *r);
void cli_run_close(cli_run *run);

/*
 * An output file must not be a file the command read (issue 27: `serve --timeline` replaced
 * the model file, `calibrate --out` the engine profile). CLI_OK when out (the value of option
 * opt) is none of the files cache loaded (models, profiles, engines, calibrations; cache may be
 * NULL) nor of inputs[0 .. n) (measurement files, traces; NULL entries skipped); else CLI_USAGE
 * with "<cmd>: <opt> <out> is the input <file>; it would be replaced". Compared as sim_path_same
 * does (the same folder and name, or the same inode).
 */
int cli_output_clear(const char *cmd, const char *opt, const char *out,
                     const struct sim_cache *cache, const char *const *inputs, size_t n);
int cli_load_engine(const char *name, sim_engine *e, char *path_out, size_t cap);

/* A served workload (deploy.h). */
typedef sim_served cli_serve;

/*
 * Builds the requests of a workload: generated from spec (closed or Poisson/gamma) or
 * read from trace_path (spec->arrival == SIM_ARRIVAL_TRACE). Prints the error and returns
 * CLI_BAD_INPUT (a bad trace) or CLI_NUMERIC (out of memory) on failure.
 */
int cli_serve_prepare(cli_serve *sv, const sim_workload_spec *spec, const char *trace_path);
/*
 * Serves the prepared workload on an open run (the run's alpha and beta_s apply) and
 * computes the statistics of the measured requests under the SLOs (<= 0: none). obs may
 * be NULL. Prints "model on hw at TP n: problem" and returns CLI_BAD_INPUT on failure.
 */
int cli_serve_run(cli_run *run, cli_serve *sv, double slo_ttft_s, double slo_tpot_s,
                  sim_serve_observer obs, void *obs_ctx, sim_serve_result *res,
                  sim_serve_stats *st);
void cli_serve_free(cli_serve *sv);

/* Commands. argc/argv start at the command name. */
int cmd_predict(int argc, char **argv);
int cmd_web(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_hw(int argc, char **argv);
/* `llmstep hw import` (cmd_import.c); argv[0] is "import". */
int cmd_hw_import(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_latency(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_validate_kernels(int argc, char **argv);
int cmd_import_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);

#endif
