/*
 * test_opts.c - the CLI's table-driven option layer (sim/cli/opts.c): each kind stores what
 * its argument says, ranges and choices refuse what they should (exit code 2, CLI_USAGE),
 * files options take the arguments that follow, operands are returned or refused, --help
 * stops parsing, and only a repeatable option may be given twice. Messages go to stderr
 * (the golden CLI tests check their text).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "opts.h"

static const cli_help test_help = {"usage: test\n", ""};

/* Runs the parser on a NULL-terminated argument list (argv[0] is the command). */
static int run(const cli_opt *t, int n, const char *const *args, int *done, int *first)
{
    char *argv[32];
    int argc = 0;
    for (; args[argc] && argc < 31; argc++)
        argv[argc] = (char *)(uintptr_t)args[argc];
    argv[argc] = NULL;
    return cli_opts_parse_help("test", argc, argv, t, n, &test_help, done, first);
}

static int parse_even(const char *arg, void *dst, char *msg, size_t cap)
{
    int64_t v;
    if (cli_parse_i64(arg, 0, 100, &v) != 0 || v % 2) {
        snprintf(msg, cap, "--even '%s': expected an even number", arg);
        return -1;
    }
    *(int64_t *)dst = v;
    return 0;
}

static void kinds_store_their_values(void)
{
    const char *s = NULL, *choice = "table", *files_v[4], *list_v[4];
    int64_t i = 0, even = 0;
    uint64_t u = 0;
    double d = 0.0, ms = 0.0;
    int flag = 0, seen = 0, done = 0;
    sim_sched_cfg sc;
    sim_sched_cfg_unset(&sc);
    sim_roofline_mode mode = SIM_ROOFLINE_OP;
    sim_gemm_model gemm = SIM_GEMM_FLAT;
    cli_opt_list files = {files_v, 0, 4}, list = {list_v, 0, 2};
    const cli_opt t[] = {
        CLI_STR_SEEN("str", &s, &seen),
        CLI_I64("int", &i, 1, 10),
        CLI_U64("seed", &u, 0, 9.3e18),
        CLI_DBL("num", &d, 0.5, 2.0),
        CLI_MS("slo-ms", &ms, 1e-6, 1e9),
        CLI_FLAG("flag", &flag),
        CLI_SCHED("max-num-seqs", &sc),
        CLI_ROOFLINE("roofline", &mode),
        CLI_GEMM("gemm", &gemm),
        CLI_FILES("files", &files),
        CLI_LIST("item", &list),
        CLI_CUSTOM("even", parse_even, &even),
        CLI_CHOICE("format", &choice, "table|json|csv"),
    };
    const char *args[] = {"test",
                          "--str",
                          "x",
                          "--int",
                          "7",
                          "--seed",
                          "12345678901234",
                          "--num",
                          "1.5",
                          "--slo-ms",
                          "250",
                          "--flag",
                          "--max-num-seqs",
                          "64",
                          "--roofline",
                          "step",
                          "--gemm",
                          "tile-wave",
                          "--files",
                          "a",
                          "b",
                          "--item",
                          "p",
                          "--even",
                          "42",
                          "--format",
                          "json",
                          NULL};
    CHECK_INT(run(t, CLI_N(t), args, &done, NULL), CLI_OK);
    CHECK_INT(done, 0);
    CHECK_STR(s, "x");
    CHECK_INT(seen, 1);
    CHECK_INT(i, 7);
    CHECK(u == UINT64_C(12345678901234));
    CHECK_REL(d, 1.5, 0.0);
    CHECK_REL(ms, 0.25, 1e-15); /* milliseconds stored in seconds */
    CHECK_INT(flag, 1);
    CHECK_INT(sc.max_num_seqs, 64);
    CHECK_INT(mode, SIM_ROOFLINE_STEP);
    CHECK_INT(gemm, SIM_GEMM_TILE_WAVE);
    CHECK_INT(files.n, 2); /* "b" follows "--files a" */
    CHECK_STR(files_v[1], "b");
    CHECK_INT(list.n, 1);
    CHECK_INT(even, 42);
    CHECK_STR(choice, "json");
}

static void bad_values_are_usage_errors(void)
{
    int64_t i = 0, even = 0;
    double d = 0.0;
    const char *choice = "table", *list_v[1];
    cli_opt_list list = {list_v, 0, 1};
    int done = 0;
    const cli_opt t[] = {
        CLI_I64("int", &i, 1, 10),
        CLI_DBL("num", &d, 0.5, 2.0),
        CLI_CUSTOM("even", parse_even, &even),
        CLI_CHOICE("format", &choice, "table|json"),
        CLI_LIST("item", &list),
    };
    const char *const cases[][5] = {
        {"test", "--int", "11", NULL},          /* above the range */
        {"test", "--int", "5x", NULL},          /* not a whole number */
        {"test", "--num", "nan", NULL},         /* not finite */
        {"test", "--num", "0.4", NULL},         /* below the range */
        {"test", "--even", "3", NULL},          /* a custom parser refuses */
        {"test", "--format", "xml", NULL},      /* not a choice */
        {"test", "--item", "a", "--item", "b"}, /* the list is full */
        {"test", "--int", NULL},                /* no value */
        {"test", "--nope", NULL},               /* unknown option */
        {"test", "stray", NULL},                /* an operand where none is taken */
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const char *args[6] = {0};
        for (int a = 0; a < 5 && cases[k][a]; a++)
            args[a] = cases[k][a];
        list.n = 0;
        CHECK_INT(run(t, CLI_N(t), args, &done, NULL), CLI_USAGE);
    }
    CHECK_INT(i, 0); /* nothing stored from a refused value */
}

static void operands_and_help(void)
{
    const char *s = NULL;
    int done = 0, first = -1;
    const cli_opt t[] = {CLI_STR("str", &s)};
    const char *args[] = {"test", "--str", "v", "op1", "op2", NULL};
    CHECK_INT(run(t, CLI_N(t), args, &done, &first), CLI_OK);
    CHECK_INT(first, 3);
    const char *help[] = {"test", "--help", "--nope", NULL};
    CHECK_INT(run(t, CLI_N(t), help, &done, NULL), CLI_OK);
    CHECK_INT(done, 1); /* --help stops before the unknown option */
}

static void repeats_need_a_repeatable_option(void)
{
    const char *s = NULL, *alias = NULL, *last = NULL, *list_v[4], *files_v[4];
    int flag = 0, done = 0;
    cli_opt_list list = {list_v, 0, 4}, files = {files_v, 0, 4};
    const cli_opt t[] = {
        CLI_STR("calibration", &s),
        CLI_FLAG("ep", &flag),
        {.name = "ep-values", .kind = CLI_OPT_STR, .dst = &alias, .same_as = "ep"},
        {.name = "fit", .kind = CLI_OPT_STR, .dst = &last, .repeatable = 1},
        CLI_LIST("item", &list),
        CLI_FILES("files", &files),
    };
    const char *const refused[][6] = {
        {"test", "--calibration", "a", "--calibration", "b", NULL},
        {"test", "--calibration=a", "--calibration=b", NULL},
        {"test", "--calib", "a", "--calibration", "b", NULL}, /* an abbreviation counts */
        {"test", "--ep", "--ep", NULL},
        {"test", "--ep", "--ep-values", "0,1", NULL}, /* another spelling of --ep */
        {"test", "--ep-values", "0", "--ep-values", "1", NULL},
    };
    for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
        CHECK_INT(run(t, CLI_N(t), refused[k], &done, NULL), CLI_USAGE);
    const char *ok[] = {"test", "--calibration", "a", "--ep",   "--fit", "x",       "--fit",
                        "y",    "--item",        "p", "--item", "q",     "--files", "f",
                        "g",    "--files",       "h", NULL};
    list.n = files.n = 0;
    CHECK_INT(run(t, CLI_N(t), ok, &done, NULL), CLI_OK);
    CHECK_STR(last, "y"); /* a repeatable single value: the last one */
    CHECK_INT(list.n, 2);
    CHECK_INT(files.n, 3);
    /* The count starts afresh with each parse. */
    const char *again[] = {"test", "--calibration", "b", NULL};
    CHECK_INT(run(t, CLI_N(t), again, &done, NULL), CLI_OK);
    CHECK_STR(s, "b");
}

int main(void)
{
    kinds_store_their_values();
    bad_values_are_usage_errors();
    operands_and_help();
    repeats_need_a_repeatable_option();
    return check_report("test_opts");
}
