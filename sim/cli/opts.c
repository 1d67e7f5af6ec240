/* opts.c - the option layer every command shares (see opts.h). */
#include "opts.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "units.h"

/* A range bound as an integer (bounds at or beyond 2^63 are the int64_t limits: converting
 * them would overflow). */
static int64_t ibound(double v)
{
    if (v >= 9.2e18)
        return INT64_MAX;
    if (v <= -9.2e18)
        return INT64_MIN;
    return (int64_t)v;
}

/* The value of option o from arg into its destination; 0 when good (msg: a custom parser's
 * message, or ""). */
static int take(const cli_opt *o, const char *arg, char *msg, size_t cap)
{
    msg[0] = '\0';
    switch (o->kind) {
    case CLI_OPT_STR:
        *(const char **)o->dst = arg;
        return 0;
    case CLI_OPT_I64:
        return cli_parse_i64(arg, ibound(o->min), ibound(o->max), o->dst);
    case CLI_OPT_U64: {
        int64_t v = 0;
        if (cli_parse_i64(arg, ibound(o->min), ibound(o->max), &v) != 0)
            return -1;
        *(uint64_t *)o->dst = (uint64_t)v;
        return 0;
    }
    case CLI_OPT_DBL:
        return cli_parse_double(arg, o->min, o->max, o->dst);
    case CLI_OPT_MS: {
        double ms = 0.0;
        if (cli_parse_double(arg, o->min, o->max, &ms) != 0)
            return -1;
        *(double *)o->dst = sim_ms_to_s(ms);
        return 0;
    }
    case CLI_OPT_FLAG:
        *(int *)o->dst = 1;
        return 0;
    case CLI_OPT_SCHED:
        return cli_parse_sched_opt(o->name, arg, o->dst);
    case CLI_OPT_ROOFLINE:
        return cli_parse_roofline(arg, o->dst);
    case CLI_OPT_GEMM:
        return cli_parse_gemm(arg, o->dst);
    case CLI_OPT_FILES:
    case CLI_OPT_LIST: {
        cli_opt_list *l = o->dst;
        if (l->n >= l->cap)
            return -1;
        l->v[l->n++] = arg;
        return 0;
    }
    case CLI_OPT_CUSTOM:
        return o->parse(arg, o->dst, msg, cap);
    case CLI_OPT_CHOICE:
        for (const char *c = o->choices; *c;) {
            size_t len = strcspn(c, "|");
            if (strlen(arg) == len && strncmp(arg, c, len) == 0) {
                *(const char **)o->dst = arg;
                return 0;
            }
            c += len + (c[len] == '|');
        }
        return -1;
    default:
        return -1;
    }
}

/* The message for a value option o refused. */
static int bad_value(const char *cmd, const cli_opt *o, const char *value, const char *msg)
{
    if (msg[0]) {
        cli_error("%s: %s", cmd, msg);
        return CLI_USAGE;
    }
    if (o->expect) {
        cli_error("%s: --%s '%s': expected %s", cmd, o->name, value, o->expect);
        return CLI_USAGE;
    }
    if (o->kind == CLI_OPT_CHOICE) {
        /* "a|b|c" reads "a, b or c". */
        char list[256] = "";
        size_t used = 0;
        for (const char *c = o->choices; *c && used < sizeof(list);) {
            size_t len = strcspn(c, "|");
            const char *sep = used == 0 ? "" : c[len] ? ", " : " or ";
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%.*s", sep, (int)len, c);
            c += len + (c[len] == '|');
        }
        cli_error("%s: --%s '%s': expected %s", cmd, o->name, value, list);
        return CLI_USAGE;
    }
    /* A number out of its range, or not a number: say the range. */
    const int whole = o->kind == CLI_OPT_I64 || o->kind == CLI_OPT_U64;
    if (whole || o->kind == CLI_OPT_DBL || o->kind == CLI_OPT_MS) {
        const char *what = whole ? "an integer" : "a number";
        if (o->max >= 1e15)
            cli_error("%s: --%s '%s': expected %s >= %.10g", cmd, o->name, value, what, o->min);
        else
            cli_error("%s: --%s '%s': expected %s from %.10g to %.10g", cmd, o->name, value, what,
                      o->min, o->max);
        return CLI_USAGE;
    }
    return cli_bad_value(cmd, o->name, value);
}

void cli_opts_usage(FILE *f, const cli_opt *t, int n)
{
    for (int i = 0; i < n; i++) {
        if (t[i].heading)
            fputs(t[i].heading, f);
        if (t[i].help)
            fputs(t[i].help, f);
    }
}

void cli_help_print(FILE *f, const cli_help *h, const cli_opt *t, int n)
{
    fputs(h->head, f);
    cli_opts_usage(f, t, n);
    fputs(h->tail, f);
}

/* counts_as[i]: the entry whose count option i adds to, itself unless it is another spelling
 * of an option (same_as). */
static void count_entries(const cli_opt *t, int n, int *counts_as)
{
    for (int i = 0; i < n; i++) {
        counts_as[i] = i;
        for (int j = 0; t[i].same_as && j < n; j++)
            if (strcmp(t[j].name, t[i].same_as) == 0)
                counts_as[i] = j;
    }
}

/* 1 when option o may be given again. */
static int repeatable(const cli_opt *o)
{
    return o->repeatable || o->kind == CLI_OPT_LIST || o->kind == CLI_OPT_FILES;
}

int cli_opts_parse_help(const char *cmd, int argc, char **argv, const cli_opt *t, int n,
                        const cli_help *h, int *done, int *first_operand)
{
    struct option lo[CLI_OPTS_MAX + 2];
    *done = 0;
    if (n > CLI_OPTS_MAX) {
        cli_error("%s: more than %d options (a bug)", cmd, CLI_OPTS_MAX);
        return CLI_USAGE;
    }
    for (int i = 0; i < n; i++)
        lo[i] = (struct option){
            t[i].name, t[i].kind == CLI_OPT_FLAG ? no_argument : required_argument, NULL, 256 + i};
    lo[n] = (struct option){"help", no_argument, NULL, 'h'};
    lo[n + 1] = (struct option){NULL, 0, NULL, 0};
    /* Counted by table entry, which getopt gives for a name and for its abbreviations. */
    int given[CLI_OPTS_MAX] = {0}, counts_as[CLI_OPTS_MAX];
    count_entries(t, n, counts_as);
    optind = 1;
    opterr = 0;
    int c, idx = -1;
    while ((c = getopt_long(argc, argv, ":h", lo, &idx)) != -1) {
        if (c == 'h') {
            cli_help_print(stdout, h, t, n);
            *done = 1;
            return CLI_OK;
        }
        if (c < 256 || c >= 256 + n)
            return cli_getopt_fail(cmd, c, argv);
        const cli_opt *o = &t[c - 256], *as = &t[counts_as[c - 256]];
        if (given[counts_as[c - 256]]++ > 0 && !repeatable(as)) {
            cli_error("%s: option '--%s' given twice (it takes one value)", cmd, as->name);
            return CLI_USAGE;
        }
        if (o->seen)
            *o->seen = 1;
        char msg[512];
        if (take(o, optarg, msg, sizeof(msg)) != 0)
            return bad_value(cmd, o, optarg ? optarg : "", msg);
        /* More values may follow a files option, up to the next option. */
        while (o->kind == CLI_OPT_FILES && optind < argc && argv[optind][0] != '-') {
            const char *more = argv[optind++];
            if (take(o, more, msg, sizeof(msg)) != 0)
                return bad_value(cmd, o, more, msg);
        }
    }
    if (first_operand) {
        *first_operand = optind;
        return CLI_OK;
    }
    return cli_no_operands(cmd, argc, argv);
}

int cli_opt_parse_group(const char *arg, void *dst, char *msg, size_t cap)
{
    const cli_group_opt *g = dst;
    struct sim_err err;
    if (cli_parse_group(g->kind, arg, g->step, &err) == 0)
        return 0;
    snprintf(msg, cap, "%s", err.msg);
    return -1;
}

int cli_opt_parse_bounded(const char *arg, void *dst, char *msg, size_t cap)
{
    cli_opt_bounded *b = dst;
    if (b->l.n == b->l.cap) {
        snprintf(msg, cap, "%s", b->full);
        return -1;
    }
    b->l.v[b->l.n++] = arg;
    return 0;
}
