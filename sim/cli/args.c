/* args.c - strict argument parsing and shared loaders for the CLI (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_json.h"
#include "err.h"
#include "hw_json.h"
#include "json_util.h"
#include "model_json.h"
#include "paths.h"

const char *cli_progname = "llmstep";

int cli_getopt_fail(const char *cmd, int c, char *const argv[])
{
    if (c == ':')
        cli_error("%s: %s needs a value", cmd, argv[optind - 1]);
    else
        cli_error("%s: unknown option '%s' (see llmstep %s --help)", cmd, argv[optind - 1], cmd);
    return CLI_USAGE;
}

int cli_bad_value(const char *cmd, const char *name, const char *value)
{
    cli_error("%s: --%s '%s': invalid value (see llmstep %s --help)", cmd, name, value, cmd);
    return CLI_USAGE;
}

int cli_no_operands(const char *cmd, int argc, char *const argv[])
{
    if (optind >= argc)
        return CLI_OK;
    cli_error("%s: unexpected argument '%s'", cmd, argv[optind]);
    return CLI_USAGE;
}

/* What cli_error puts before each message while a measurement row is predicted. */
static char error_context[512];

void cli_error_context(const char *fmt, ...)
{
    error_context[0] = '\0';
    if (!fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(error_context, sizeof(error_context), "", 0, fmt, ap);
    va_end(ap);
}

void cli_error(const char *fmt, ...)
{
    /* Messages quote file contents and arguments: what is not text a terminal shows as text
     * (sim_text_next: controls, C1, bidi overrides, invalid UTF-8) is written as \xNN, one per
     * byte, so nothing reaches the terminal as an escape sequence. */
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(msg, sizeof(msg), error_context, 0, fmt, ap);
    va_end(ap);
    char shown[4 * sizeof(msg)];
    fprintf(stderr, "%s: %s\n", cli_progname, sim_text_escape(msg, shown, sizeof(shown)));
}

const char *cli_data_dir(void)
{
    /* Looked up once per run: the CLI is one thread, and every file it loads asks. */
    static char dir[4200];
    if (!dir[0])
        sim_deploy_find_data_dir(dir, sizeof(dir));
    return dir;
}

/* A number on the command line starts with a digit, or '-' or '.' and a digit: no blanks,
 * no '+' (strtoll and strtod would take " 5" and "+5"). */
static int starts_like_number(const char *s)
{
    const char *p = s[0] == '-' ? s + 1 : s;
    if (*p == '.')
        p++;
    return *p >= '0' && *p <= '9';
}

int cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s || !*s || !starts_like_number(s))
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0' || end == s)
        return -1;
    if (v < min || v > max)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int cli_parse_double(const char *s, double min, double max, double *out)
{
    if (!s || !*s || !starts_like_number(s))
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || *end != '\0' || end == s || !isfinite(v))
        return -1;
    if (v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Splits "AxBxC" into up to 3 integers; returns the count or -1. */
static int split_x(const char *spec, int64_t v[3])
{
    char buf[96];
    if (strlen(spec) >= sizeof(buf))
        return -1;
    strcpy(buf, spec);
    int n = 0;
    char *p = buf;
    for (;;) {
        char *x = strchr(p, 'x');
        if (x)
            *x = '\0';
        if (n == 3 || cli_parse_i64(p, 0, INT64_C(1) << 40, &v[n]) != 0)
            return -1;
        n++;
        if (!x)
            break;
        p = x + 1;
    }
    return n;
}

int cli_parse_group(char kind, const char *spec, sim_step *s, struct sim_err *err)
{
    const char *forms[] = {"BxL", "BxC", "BxTxC[:mid]"};
    const char *opt = kind == 'p' ? "--prefill" : kind == 'd' ? "--decode" : "--chunk";
    const char *form = forms[kind == 'p' ? 0 : kind == 'd' ? 1 : 2];
    char buf[96];
    snprintf(buf, sizeof(buf), "%s", spec);
    int emits = 1;
    char *colon = strchr(buf, ':');
    if (colon) {
        if (kind != 'c' || strcmp(colon, ":mid") != 0) {
            sim_errf(err, "%s '%s': expected %s", opt, spec, form);
            return -1;
        }
        *colon = '\0';
        emits = 0;
    }
    int64_t v[3] = {0, 0, 0};
    int n = split_x(buf, v);
    int want = kind == 'c' ? 3 : 2;
    if (n != want || v[0] < 1 || v[1] < 1 || (kind == 'c' && v[1] < 1)) {
        sim_errf(err, "%s '%s': expected %s with positive integers (batch >= 1, tokens >= 1)", opt,
                 spec, form);
        return -1;
    }
    if (s->n_groups >= SIM_STEP_MAX_GROUPS) {
        sim_errf(err, "too many groups (at most %d)", SIM_STEP_MAX_GROUPS);
        return -1;
    }
    sim_group *g = &s->groups[s->n_groups++];
    g->count = v[0];
    g->emits = emits;
    if (kind == 'p') {
        g->new_tokens = v[1];
        g->context_tokens = 0;
    } else if (kind == 'd') {
        g->new_tokens = 1;
        g->context_tokens = v[1];
    } else {
        g->new_tokens = v[1];
        g->context_tokens = v[2];
    }
    return 0;
}

/* The index of s among names (the enum value it names), or -1. */
static int name_index(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int cli_parse_gemm(const char *s, sim_gemm_model *out)
{
    static const char *const names[SIM_GEMM_MODEL_COUNT] = {
        [SIM_GEMM_FLAT] = "flat", [SIM_GEMM_TILE_WAVE] = "tile-wave"};
    int i = name_index(s, names, SIM_GEMM_MODEL_COUNT);
    if (i >= 0)
        *out = (sim_gemm_model)i;
    return i >= 0 ? 0 : -1;
}

int cli_parse_roofline(const char *s, sim_roofline_mode *out)
{
    static const char *const names[SIM_ROOFLINE_MODE_COUNT] = {
        [SIM_ROOFLINE_OP] = "op", [SIM_ROOFLINE_STEP] = "step"};
    int i = name_index(s, names, SIM_ROOFLINE_MODE_COUNT);
    if (i >= 0)
        *out = (sim_roofline_mode)i;
    return i >= 0 ? 0 : -1;
}

int cli_parse_sched_opt(const char *name, const char *arg, sim_sched_cfg *s)
{
    if (strcmp(name, "max-num-seqs") == 0)
        return cli_parse_i64(arg, 1, 1 << 20, &s->max_num_seqs);
    if (strcmp(name, "max-num-batched-tokens") == 0)
        return cli_parse_i64(arg, 1, INT64_C(1) << 30, &s->max_num_batched_tokens);
    if (strcmp(name, "max-model-len") == 0)
        return cli_parse_i64(arg, 1, INT64_C(1) << 30, &s->max_model_len);
    if (strcmp(name, "gpu-memory-utilization") == 0)
        return cli_parse_double(arg, 1e-3, 1.0, &s->gpu_memory_utilization);
    if (strcmp(name, "block-size") == 0)
        return cli_parse_i64(arg, 1, 1 << 20, &s->block_size);
    if (strcmp(name, "usage") == 0) {
        if (strcmp(arg, "llm") == 0)
            s->usage = SIM_USAGE_LLM;
        else if (strcmp(arg, "server") == 0)
            s->usage = SIM_USAGE_SERVER;
        else
            return -1;
        return 0;
    }
    int *onoff = strcmp(name, "chunked-prefill") == 0    ? &s->enable_chunked_prefill
                 : strcmp(name, "async-scheduling") == 0 ? &s->async_scheduling
                 : strcmp(name, "prefix-caching") == 0   ? &s->enable_prefix_caching
                                                         : NULL;
    if (onoff) {
        if (strcmp(arg, "on") == 0)
            *onoff = 1;
        else if (strcmp(arg, "off") == 0)
            *onoff = 0;
        else
            return -1;
        return 0;
    }
    return -1;
}

int cli_parse_spec_method(const char *arg, void *dst, char *msg, size_t cap)
{
    cli_spec_args *a = dst;
    if (sim_spec_method_parse(arg, &a->method) == SIM_OK)
        return 0;
    snprintf(msg, cap, "--spec '%s': expected ngram, eagle, eagle3, mtp or draft", arg);
    return -1;
}

int cli_parse_acceptance(const char *arg, void *dst, char *msg, size_t cap)
{
    cli_spec_args *a = dst;
    char buf[512];
    if (strlen(arg) >= sizeof(buf)) {
        snprintf(msg, cap, "--acceptance: too long");
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", arg);
    a->n_accept = 0;
    for (char *t = buf, *next; t; t = next) {
        char *comma = strchr(t, ',');
        next = comma ? comma + 1 : NULL;
        if (comma)
            *comma = '\0';
        if (a->n_accept >= SIM_SPEC_MAX_TOKENS ||
            cli_parse_double(t, 0.0, 1.0, &a->accept[a->n_accept]) != 0) {
            snprintf(msg, cap,
                     "--acceptance '%s': expected up to %d rates in [0, 1], comma-separated", arg,
                     SIM_SPEC_MAX_TOKENS);
            return -1;
        }
        a->n_accept++;
    }
    if (a->n_accept == 0) {
        snprintf(msg, cap, "--acceptance '%s': expected rates in [0, 1]", arg);
        return -1;
    }
    return 0;
}

int cli_spec_finish(const char *cmd, const cli_spec_args *a, sim_spec *out, const char **model)
{
    *out = (sim_spec){.method = SIM_SPEC_NONE};
    *model = NULL;
    if (a->method == SIM_SPEC_NONE) {
        if (a->k || a->n_accept || a->model) {
            cli_error("%s: --spec-tokens, --acceptance and --spec-model belong to --spec", cmd);
            return CLI_USAGE;
        }
        return CLI_OK;
    }
    if (a->k < 1 || a->n_accept == 0) {
        cli_error("%s: --spec %s needs --spec-tokens K and --acceptance A (one rate, or one per "
                  "position)",
                  cmd, sim_spec_method_name(a->method));
        return CLI_USAGE;
    }
    if ((a->method == SIM_SPEC_DRAFT) != (a->model != NULL)) {
        cli_error("%s: %s", cmd,
                  a->method == SIM_SPEC_DRAFT ? "--spec draft needs --spec-model ID"
                                              : "--spec-model belongs to --spec draft");
        return CLI_USAGE;
    }
    struct sim_err err;
    if (sim_spec_fill(a->method, a->k, a->accept, a->n_accept, out, &err) != SIM_OK) {
        cli_error("%s: %s", cmd, err.msg);
        return CLI_USAGE;
    }
    *model = a->model;
    return CLI_OK;
}

/* CLI_OK, or the message printed and CLI_BAD_INPUT. */
static int loaded(sim_status st, const struct sim_err *err)
{
    if (st == SIM_OK)
        return CLI_OK;
    cli_error("%s", err->msg);
    return CLI_BAD_INPUT;
}

int cli_load_model(const char *name, sim_model *m, char *path, size_t cap)
{
    struct sim_err err;
    sim_status st = sim_path_resolve(cli_data_dir(), "models", name, path, cap, &err);
    return loaded(st == SIM_OK ? sim_model_load(path, name, m, &err) : st, &err);
}

int cli_load_hw(const char *name, sim_hw *hw, char *path, size_t cap)
{
    struct sim_err err;
    sim_status st = sim_path_resolve(cli_data_dir(), "hwprofiles", name, path, cap, &err);
    return loaded(st == SIM_OK ? sim_hw_load(path, hw, &err) : st, &err);
}

int cli_load_engine(const char *name, sim_engine *e, char *path, size_t cap)
{
    struct sim_err err;
    sim_status st = sim_path_resolve(cli_data_dir(), "engines", name, path, cap, &err);
    return loaded(st == SIM_OK ? sim_engine_load(path, e, &err) : st, &err);
}

int cli_load_model_hw(const char *model, const char *hw_name, sim_model *m, sim_hw *hw,
                      char *model_path, char *hw_path, size_t cap)
{
    int rc = cli_load_model(model, m, model_path, cap);
    return rc == CLI_OK ? cli_load_hw(hw_name, hw, hw_path, cap) : rc;
}

int cli_load_calib(const char *path, const char *hw_id, sim_calib *c)
{
    struct sim_err err;
    if (sim_calib_load(path, c, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    if (strcmp(c->hardware, hw_id) != 0) {
        cli_error("%s: hardware: calibration is for '%s', not '%s'", path, c->hardware, hw_id);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_check_finite(const char *who, const char *what, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) {
            cli_error("%s%s is not a finite number (numerical failure; exit 3)", who, what);
            return CLI_NUMERIC;
        }
    return CLI_OK;
}
