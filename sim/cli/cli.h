/*
 * cli.h - shared pieces of the llmstep command-line tool: exit codes, strict
 * argument parsing, and the loaders every command uses.
 */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "calib_json.h"
#include "hw.h"
#include "model.h"
#include "status.h"
#include "step.h"

/* Exit codes (../shared/MEASUREMENTS.md): jq-style enum. */
enum cli_exit {
    CLI_OK = 0,
    CLI_BAD_INPUT = 1,
    CLI_USAGE = 2,
    CLI_NUMERIC = 3,
};

extern const char *cli_progname;

/* Prints "llmstep: <message>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The folder holding models/ and hwprofiles/: $LLMSTEP_DATA_DIR or the build's source dir. */
const char *cli_data_dir(void);

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

/* Resolve and load by id or path; print the error and return CLI_BAD_INPUT on failure. */
int cli_load_model(const char *name, sim_model *m, char *path_out, size_t cap);
int cli_load_hw(const char *name, sim_hw *hw, char *path_out, size_t cap);
/* Loads a calibration and checks it names hw_id. */
int cli_load_calib(const char *path, const char *hw_id, sim_calib *c);

/* Commands. argc/argv start at the command name. */
int cmd_predict(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_hw(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
