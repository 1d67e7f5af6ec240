/*
 * sweep_run.c - the CLI side of sweeps (see sweep_cli.h): the driver (sim/lib/sweep_drive.c)
 * with the CLI's messages and exit codes, list parsing, and the CSV writer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastfmt.h"
#include "sweep_cli.h"

int cli_sweep_default_jobs(void)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > SIM_SWEEP_MAX_JOBS ? SIM_SWEEP_MAX_JOBS : (cores > 1 ? (int)cores : 1);
}

void cli_sweep_opts_init(cli_sweep_opts *o)
{
    sim_sweep_opts_init(o);
    o->calib_opt = "--calibration";
}

int cli_sweep_run(const cli_sweep_opts *o, const cli_sweep_sink *sink)
{
    sim_cache *cache = sim_cache_alloc(cli_data_dir());
    if (!cache) {
        cli_error("out of memory");
        return CLI_NUMERIC;
    }
    struct sim_err err;
    int stopped = 0;
    sim_status st = sim_sweep_drive(cache, o, sink, &stopped, &err);
    sim_cache_free(cache);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    return stopped;
}

int cli_split_names(char *buf, const char **names, size_t cap, size_t *n)
{
    *n = 0;
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p || *n == cap)
            return -1;
        names[(*n)++] = p;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/*
 * --request-rate LIST: comma-separated rates in requests/s, each a number > 0 or a range a:b
 * (a, 2a, 4a, ... <= b, as the integer axes). Prints the error and returns CLI_USAGE.
 */
int cli_sweep_parse_rates(const char *cmd, const char *spec, double *out, size_t cap, size_t *n)
{
    char buf[4096];
    *n = 0;
    if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf)) {
        cli_error("%s: --request-rate: the list is too long", cmd);
        return CLI_USAGE;
    }
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        char *colon = strchr(p, ':');
        if (colon)
            *colon = '\0';
        double a, b;
        if (cli_parse_double(p, 1e-6, 1e7, &a) != 0 ||
            (colon && (cli_parse_double(colon + 1, 1e-6, 1e7, &b) != 0 || b < a))) {
            cli_error("%s: --request-rate '%s': expected requests/s > 0 (up to 1e7) and "
                      "ranges a:b with a <= b, separated by commas",
                      cmd, spec);
            return CLI_USAGE;
        }
        if (!colon)
            b = a;
        /* b x (1 + 1e-12): 0.3:2.4 ends at 8 x 0.3, which may round just above 2.4. */
        for (double v = a; v <= b * (1.0 + 1e-12); v *= 2.0) {
            if (*n == cap) {
                cli_error("%s: --request-rate '%s': more than %zu values", cmd, spec, cap);
                return CLI_USAGE;
            }
            out[(*n)++] = v;
        }
        if (!comma)
            return CLI_OK;
        p = comma + 1;
    }
}

int cli_outbuf_init(cli_outbuf *o, FILE *f, size_t cap)
{
    o->f = f;
    o->len = 0;
    o->cap = cap;
    o->failed = 0;
    o->buf = malloc(cap);
    return o->buf ? 0 : -1;
}

int cli_outbuf_flush(cli_outbuf *o)
{
    if (o->len > 0 && o->f && fwrite(o->buf, 1, o->len, o->f) != o->len)
        o->failed = 1;
    o->len = 0;
    return o->failed ? -1 : 0;
}

int cli_outbuf_close(cli_outbuf *o)
{
    if (o->buf)
        cli_outbuf_flush(o);
    if (o->f && fflush(o->f) != 0)
        o->failed = 1;
    free(o->buf);
    o->buf = NULL;
    return o->failed ? -1 : 0;
}

/* Room for one row: ids are at most 128 bytes, numbers at most CLI_FMT_MAX. */
#define ROW_MAX 8192

static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* A fixed-point field, or an empty one for NaN; then the separator. */
static char *put_num(char *p, double v, int decimals)
{
    if (isfinite(v))
        p = cli_fmt_fixed(p, v, decimals);
    *p++ = ',';
    return p;
}

static char *put_int(char *p, int64_t v)
{
    if (v >= 0)
        p = cli_fmt_i64(p, v);
    *p++ = ',';
    return p;
}

/* A serving distribution's four columns. */
static char *put_dist(char *p, const sim_dist *d)
{
    p = put_num(p, d->mean, 9);
    p = put_num(p, d->p50, 9);
    p = put_num(p, d->p90, 9);
    return put_num(p, d->p99, 9);
}

/* The columns every CSV row starts with (model, hardware, kind) after making room for a row,
 * and those it ends with (calibrated, meets_slo, cost); the kinds differ in between. */
static char *csv_row_open(cli_outbuf *o, const cli_sweep_block *b, const sim_sweep_row *r)
{
    if (o->len + ROW_MAX > o->cap)
        cli_outbuf_flush(o);
    char *p = o->buf + o->len;
    p = put_str(p, b->model);
    *p++ = ',';
    p = put_str(p, b->hw);
    *p++ = ',';
    p = put_str(p, sim_sweep_kind_name(r->kind));
    *p++ = ',';
    return p;
}

static void csv_row_close(cli_outbuf *o, char *p, const cli_sweep_block *b, const sim_sweep_row *r)
{
    p = put_str(p, b->calib_path ? "true," : "false,");
    p = put_str(p, r->meets_slo ? "true," : "false,");
    if (isfinite(r->cost_per_mtok_usd))
        p = cli_fmt_fixed(p, r->cost_per_mtok_usd, 6);
    *p++ = '\n';
    o->len = (size_t)(p - o->buf);
}

void cli_sweep_serving_csv_row(cli_outbuf *o, const cli_sweep_block *b, const sim_sweep_row *r)
{
    char *p = csv_row_open(o, b, r);
    p = put_int(p, r->tp);
    p = put_int(p, r->concurrency);
    p = put_num(p, r->rate_per_s, 6);
    p = put_int(p, r->prompt_tokens);
    p = put_int(p, r->output_tokens);
    p = put_int(p, r->n_requests);
    p = put_dist(p, &r->ttft_dist_s);
    p = put_dist(p, &r->tpot_dist_s);
    p = put_dist(p, &r->e2e_dist_s);
    p = put_num(p, r->requests_per_s, 6);
    p = put_num(p, r->tokens_per_s, 3);
    p = put_num(p, r->tokens_per_s_per_gpu, 3);
    p = put_int(p, r->preemptions);
    p = put_num(p, r->kv_peak_frac, 6);
    p = put_str(p, r->status == SIM_SWEEP_OK ? "true," : "false,");
    p = put_str(p, sim_sweep_status_name(r->status));
    *p++ = ',';
    csv_row_close(o, p, b, r);
}

void cli_sweep_csv_header(cli_outbuf *o)
{
    static const char h[] = CLI_SWEEP_CSV_HEADER;
    memcpy(o->buf + o->len, h, sizeof(h) - 1);
    o->len += sizeof(h) - 1;
}

void cli_sweep_csv_row(cli_outbuf *o, const cli_sweep_block *b, const sim_sweep_row *r)
{
    char *p = csv_row_open(o, b, r);
    p = put_int(p, r->tp);
    p = put_int(p, r->batch);
    p = put_int(p, r->kind == SIM_SWEEP_DECODE ? r->context_tokens : -1);
    p = put_int(p, r->prompt_tokens);
    p = put_int(p, r->output_tokens);
    /* Seconds to the nanosecond; rates to a thousandth; cost to a millionth of a dollar. */
    p = put_num(p, r->time_s, 9);
    p = put_num(p, r->tpot_s, 9);
    p = put_num(p, r->ttft_s, 9);
    p = put_num(p, r->tokens_per_s, 3);
    p = put_num(p, r->tokens_per_s_per_gpu, 3);
    p = put_str(p, r->status == SIM_SWEEP_OK ? "true," : "false,");
    p = put_str(p, sim_sweep_status_name(r->status));
    *p++ = ',';
    p = put_str(p, r->bound == SIM_BOUND_NONE ? "" : sim_bound_name(r->bound));
    *p++ = ',';
    csv_row_close(o, p, b, r);
}
