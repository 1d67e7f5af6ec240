/*
 * opts.h - the option layer every command shares: a command describes its options in a
 * table (name, kind, destination, range, help lines) and cli_opts_parse_help runs getopt_long
 * over it, so parsing, ranges, --help, missing values, unknown options, invalid values and
 * stray operands are handled once, and an error names the option getopt matched (its own index),
 * never one guessed from argv.
 */
#ifndef SIM_CLI_OPTS_H
#define SIM_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "step.h"

typedef enum cli_opt_kind {
    CLI_OPT_STR = 0,  /* const char **dst = optarg */
    CLI_OPT_I64,      /* int64_t *dst, whole number in [min, max] */
    CLI_OPT_U64,      /* uint64_t *dst, whole number in [min, max] (e.g. a seed) */
    CLI_OPT_DBL,      /* double *dst, finite number in [min, max] */
    CLI_OPT_MS,       /* double *dst: a number of milliseconds in [min, max], stored in s */
    CLI_OPT_FLAG,     /* int *dst = 1; takes no value */
    CLI_OPT_SCHED,    /* sim_sched_cfg *dst: cli_parse_sched_opt by the option's name */
    CLI_OPT_ROOFLINE, /* sim_roofline_mode *dst: "op" or "step" */
    CLI_OPT_GEMM,     /* sim_gemm_model *dst: "flat" or "tile-wave" */
    CLI_OPT_LIST,     /* cli_opt_list *dst: appended (repeatable) */
    CLI_OPT_FILES,    /* as LIST, and the arguments that follow up to the next option too */
    CLI_OPT_CUSTOM,   /* parse(arg, dst) returns 0 when the value is good */
    CLI_OPT_CHOICE,   /* const char **dst = optarg, one of the '|'-separated choices */
    CLI_OPT_KIND_COUNT
} cli_opt_kind;

/* A repeatable option's values. */
typedef struct cli_opt_list {
    const char **v;
    int n, cap;
} cli_opt_list;

typedef struct cli_opt {
    const char *name; /* long name without the dashes */
    cli_opt_kind kind;
    void *dst;
    double min, max; /* CLI_OPT_I64/U64/DBL/MS */
    int *seen;       /* NULL, or set to 1 when the option is given */
    /* CLI_OPT_CUSTOM: 0 when the value is good; otherwise it may write the whole message
     * after "CMD: " into msg (cap bytes), else the message is the generic one. */
    int (*parse)(const char *arg, void *dst, char *msg, size_t cap);
    const char *expect;  /* NULL, or what a bad value should have been ("op or step") */
    const char *choices; /* CLI_OPT_CHOICE: "table|json" */
    /* The option's lines of the usage, whole and as printed ("  --tp N   ...\n" and its
     * continuation lines), or NULL: an option with no line of its own (a hidden alias, or one
     * listed on another option's line). cli_opts_usage prints them in table order. */
    const char *help;
    /* NULL, or a line printed before help: the heading of a group ("Options:\n"). */
    const char *heading;
    /* 1: the option may be given more than once (each value is kept, or for a single
     * destination the last one wins). CLI_OPT_LIST and CLI_OPT_FILES are repeatable whatever
     * this says. Any other option given a second time, under its name or an abbreviation
     * getopt accepts, is a usage error rather than getopt's silent "last one wins": "CMD:
     * option '--NAME' given twice (it takes one value)". */
    int repeatable;
    /* NULL, or the name of the option this hidden entry is another spelling of (sweep's
     * --ep-values, which "--ep 0,1" becomes): given both, the option is given twice. */
    const char *same_as;
} cli_opt;

/* A command's usage: head, the help of its options (cli_opts_usage), then tail. */
typedef struct cli_help {
    const char *head, *tail;
} cli_help;

/* Table entries (designated initializers: the unused fields stay zero). */
#define CLI_STR(n, d)                                                                              \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_STR, .dst = (d)                                               \
    }
#define CLI_STR_SEEN(n, d, s)                                                                      \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_STR, .dst = (d), .seen = (s)                                  \
    }
#define CLI_I64(n, d, lo, hi)                                                                      \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_I64, .dst = (d), .min = (lo), .max = (hi)                     \
    }
#define CLI_I64_SEEN(n, d, lo, hi, s)                                                              \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_I64, .dst = (d), .min = (lo), .max = (hi), .seen = (s)        \
    }
#define CLI_U64(n, d, lo, hi)                                                                      \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_U64, .dst = (d), .min = (lo), .max = (hi)                     \
    }
#define CLI_DBL(n, d, lo, hi)                                                                      \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_DBL, .dst = (d), .min = (lo), .max = (hi)                     \
    }
#define CLI_DBL_SEEN(n, d, lo, hi, s)                                                              \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_DBL, .dst = (d), .min = (lo), .max = (hi), .seen = (s)        \
    }
#define CLI_U64_SEEN(n, d, lo, hi, s)                                                              \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_U64, .dst = (d), .min = (lo), .max = (hi), .seen = (s)        \
    }
#define CLI_CUSTOM_SEEN(n, fn, d, s)                                                               \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_CUSTOM, .dst = (d), .parse = (fn), .seen = (s)                \
    }
#define CLI_MS(n, d, lo, hi)                                                                       \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_MS, .dst = (d), .min = (lo), .max = (hi)                      \
    }
#define CLI_CHOICE(n, d, c)                                                                        \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_CHOICE, .dst = (d), .choices = (c)                            \
    }
#define CLI_FLAG(n, d)                                                                             \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_FLAG, .dst = (d)                                              \
    }
#define CLI_SCHED(n, sc)                                                                           \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_SCHED, .dst = (sc)                                            \
    }
#define CLI_ROOFLINE(n, d)                                                                         \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_ROOFLINE, .dst = (d)                                          \
    }
#define CLI_GEMM(n, d)                                                                             \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_GEMM, .dst = (d)                                              \
    }
#define CLI_LIST(n, l)                                                                             \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_LIST, .dst = (l)                                              \
    }
#define CLI_FILES(n, l)                                                                            \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_FILES, .dst = (l)                                             \
    }
#define CLI_CUSTOM(n, fn, d)                                                                       \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_CUSTOM, .dst = (d), .parse = (fn)                             \
    }
/* Table entries with their help lines (cli_opts_usage prints h; see cli_opt.help). */
#define CLI_STR_H(n, d, h)                                                                         \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_STR, .dst = (d), .help = (h)                                  \
    }
#define CLI_NUM_H(n, k, d, lo, hi, h)                                                              \
    {                                                                                              \
        .name = (n), .kind = (k), .dst = (d), .min = (lo), .max = (hi), .help = (h)                \
    }
#define CLI_I64_H(n, d, lo, hi, h) CLI_NUM_H(n, CLI_OPT_I64, d, lo, hi, h)
/* --interval L of the prediction commands (cli_band): the same option and help everywhere. */
#define CLI_INTERVAL_H(d)                                                                          \
    CLI_I64_H(                                                                                     \
        "interval", d, 10, 100,                                                                    \
        "  --interval L          with --calibration: the L% band (10, 20, ..., 100) around\n"      \
        "                        the prediction, from the calibration's held-out rows\n")
#define CLI_U64_H(n, d, lo, hi, h) CLI_NUM_H(n, CLI_OPT_U64, d, lo, hi, h)
#define CLI_DBL_H(n, d, lo, hi, h) CLI_NUM_H(n, CLI_OPT_DBL, d, lo, hi, h)
#define CLI_MS_H(n, d, lo, hi, h)  CLI_NUM_H(n, CLI_OPT_MS, d, lo, hi, h)
#define CLI_KIND_H(n, k, d, h)                                                                     \
    {                                                                                              \
        .name = (n), .kind = (k), .dst = (d), .help = (h)                                          \
    }
#define CLI_FLAG_H(n, d, h)     CLI_KIND_H(n, CLI_OPT_FLAG, d, h)
#define CLI_SCHED_H(n, sc, h)   CLI_KIND_H(n, CLI_OPT_SCHED, sc, h)
#define CLI_ROOFLINE_H(n, d, h) CLI_KIND_H(n, CLI_OPT_ROOFLINE, d, h)
#define CLI_GEMM_H(n, d, h)     CLI_KIND_H(n, CLI_OPT_GEMM, d, h)
#define CLI_STR_SEEN_H(n, d, s, h)                                                                 \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_STR, .dst = (d), .seen = (s), .help = (h)                     \
    }
#define CLI_NUM_SEEN_H(n, k, d, lo, hi, s, h)                                                      \
    {                                                                                              \
        .name = (n), .kind = (k), .dst = (d), .min = (lo), .max = (hi), .seen = (s), .help = (h)   \
    }
#define CLI_I64_SEEN_H(n, d, lo, hi, s, h) CLI_NUM_SEEN_H(n, CLI_OPT_I64, d, lo, hi, s, h)
#define CLI_CUSTOM_H(n, fn, d, h)                                                                  \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_CUSTOM, .dst = (d), .parse = (fn), .help = (h)                \
    }
/* The scheduler options, in the order the commands list them. */
#define CLI_SCHED_OPTS(sc)                                                                         \
    CLI_SCHED("max-num-seqs", sc), CLI_SCHED("max-num-batched-tokens", sc),                        \
        CLI_SCHED("max-model-len", sc), CLI_SCHED("gpu-memory-utilization", sc),                   \
        CLI_SCHED("block-size", sc), CLI_SCHED("usage", sc),                                       \
        CLI_FLAG("disable-hybrid-kv-cache-manager", &(sc)->disable_hybrid_kv)
/* What names a run (cli_run_spec *sp): model, hardware, TP, PP, DP, EP, dtypes, calibration,
 * engine. */
#define CLI_RUN_OPTS(sp)                                                                           \
    CLI_STR("model", &(sp)->model), CLI_STR("hw", &(sp)->hw), CLI_I64("tp", &(sp)->tp, 1, 4096),   \
        CLI_I64("pp", &(sp)->pp, 1, SIM_PP_MAX), CLI_I64("dp", &(sp)->dp, 1, SIM_DP_MAX),          \
        CLI_FLAG("ep", &(sp)->ep), CLI_STR("dtype", &(sp)->dtype),                                 \
        CLI_STR("kv-dtype", &(sp)->kv_dtype), CLI_STR("calibration", &(sp)->calibration),          \
        CLI_STR("engine", &(sp)->engine)
#define CLI_N(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* Prints the heading and help lines of the n options of t in table order (options without
 * help print nothing). */
void cli_opts_usage(FILE *f, const cli_opt *t, int n);
/* Prints h->head, the options' help (cli_opts_usage) and h->tail. */
void cli_help_print(FILE *f, const cli_help *h, const cli_opt *t, int n);

/* A step group option (--prefill, --decode, --chunk): dst of CLI_CUSTOM or CLI_GROUP_H for
 * cli_opt_parse_group, which adds the group to step (cli_parse_group, kind 'p', 'd' or 'c')
 * and gives cli_parse_group's message for a bad one. */
typedef struct cli_group_opt {
    sim_step *step;
    char kind;
} cli_group_opt;
int cli_opt_parse_group(const char *arg, void *dst, char *msg, size_t cap);

/* A repeatable option of at most l.cap values: dst of CLI_BOUNDED(_H) for cli_opt_parse_bounded,
 * which refuses one more with the message in full ("at most 8 --nccl files"). */
typedef struct cli_opt_bounded {
    cli_opt_list l;
    char full[128];
} cli_opt_bounded;
int cli_opt_parse_bounded(const char *arg, void *dst, char *msg, size_t cap);

/* A step group (cli_group_opt *g), repeatable: several make a mixed step. */
#define CLI_GROUP_H(n, g, h)                                                                       \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_CUSTOM, .dst = (g), .parse = cli_opt_parse_group,             \
        .repeatable = 1, .help = (h)                                                               \
    }
/* A repeatable option of a bounded number of values (cli_opt_bounded *b). */
#define CLI_BOUNDED_H(n, b, h)                                                                     \
    {                                                                                              \
        .name = (n), .kind = CLI_OPT_CUSTOM, .dst = (b), .parse = cli_opt_parse_bounded,           \
        .repeatable = 1, .help = (h)                                                               \
    }
#define CLI_BOUNDED(n, b) CLI_BOUNDED_H(n, b, NULL)

/* Most options one command has. */
#define CLI_OPTS_MAX 64

/*
 * Parses argv[1..] (argv[0] is the command's name) against the n options of t, plus -h and
 * --help, which print the usage h (cli_help_print) to stdout and set *done. Operands are
 * left for the caller, from argv[*first_operand] on; with first_operand NULL the command
 * takes none. Returns CLI_OK, or CLI_USAGE after one line: "CMD: OPT needs a value", "CMD:
 * unknown option 'OPT' (see llmstep CMD --help)", "CMD: --NAME 'VALUE': expected EXPECT"
 * (the option's expect), a custom parser's message, "CMD: --NAME 'VALUE': invalid value (see
 * llmstep CMD --help)", "CMD: option '--NAME' given twice (it takes one value)" (see
 * cli_opt.repeatable) or "CMD: unexpected argument 'ARG'".
 */
int cli_opts_parse_help(const char *cmd, int argc, char **argv, const cli_opt *t, int n,
                        const cli_help *h, int *done, int *first_operand);

#endif
