/* bench_parse.c - see bench_parse.h. */
#include "bench_parse.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "num_parse.h"
#include "textin.h"

#define MAX_FIELDS 96

/* Formats "<path>:<line>: <message>" into err and returns status. */
static sim_status fail(struct sim_err *err, sim_status st, const char *path, int line,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static sim_status fail(struct sim_err *err, sim_status st, const char *path, int line,
                       const char *fmt, ...)
{
    char loc[sizeof(err->msg)];
    snprintf(loc, sizeof(loc), "%s:%d: ", path, line);
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(err->msg, sizeof(err->msg), loc, 400, fmt, ap);
    va_end(ap);
    return st;
}

/* Line-by-line reader over a whole file read into memory first. */
typedef struct reader {
    const char *path;
    sim_textin *in;
    int line; /* 1-based number of the line last returned */
} reader;

/* Largest benchmark output read, decompressed (docs/limits.md): benchmark outputs are small,
 * so a larger one, or a gzip bomb, is refused before it fills memory. */
#define BENCH_MAX_BYTES ((size_t)64 << 20)

/*
 * Reads the whole file into r (release it with reader_close, also after a failure), so
 * that a read error, a gzip bomb or a NUL byte is refused before any line is parsed.
 * Empty or blank files are errors here.
 */
static sim_status reader_open(reader *r, const char *path, const char *what, struct sim_err *err)
{
    const char *text = NULL;
    size_t len = 0;
    r->path = path;
    r->line = 0;
    sim_status st = sim_textin_open(path, &r->in, err);
    if (st == SIM_OK)
        st = sim_textin_read_all(r->in, BENCH_MAX_BYTES, "a benchmark output", &text, &len, err);
    if (st != SIM_OK)
        return st;
    if (memchr(text, '\0', len))
        return fail(err, SIM_EPARSE, path, 1, "binary data (NUL byte): expected %s", what);
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    if (i == len)
        return fail(err, SIM_EPARSE, path, 1, "empty file (expected %s)", what);
    return SIM_OK;
}

static void reader_close(reader *r) { sim_textin_free(r->in); }

/* Returns the next line without its '\n' or "\r\n", or NULL at the end. */
static char *reader_next(reader *r)
{
    /* The text is in memory: taking a line from it cannot fail. */
    struct sim_err unused;
    char *line = NULL;
    if (sim_textin_line(r->in, BENCH_MAX_BYTES, &line, &unused) != SIM_OK)
        return NULL;
    r->line = (int)sim_textin_line_no(r->in);
    return line;
}

static int is_blank(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

/* Splits s in place at runs of white space; returns the count (at most cap). */
static int split_ws(char *s, char **tok, int cap)
{
    int n = 0;
    char *p = s;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || n == cap)
            return n;
        tok[n++] = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (*p)
            *p++ = '\0';
    }
}

/* Splits s in place at commas, trimming each field; returns the count (at most cap). */
static int split_csv(char *s, char **tok, int cap)
{
    int n = 0;
    char *p = s;
    while (n < cap) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        tok[n++] = sim_text_trim(p);
        if (!c)
            break;
        p = c + 1;
    }
    return n;
}

/* Strict number: the whole string, finite, decimal (num_parse.h). Returns 1 on success. */
static int parse_num(const char *s, double *out)
{
    return sim_num_parse_double(s, -DBL_MAX, DBL_MAX, out) == SIM_OK;
}

/* Largest all-reduce group an nccl-tests header may describe (docs/limits.md). */
#define NCCL_MAX_RANKS 65536

/* A positive integer below 2^53 written without fraction, e.g. a size or a GEMM dimension. */
static int parse_count(const char *s, double *out)
{
    double v = 0.0;
    if (sim_num_parse_double(s, 1.0, 9007199254740992.0, &v) != SIM_OK || v != floor(v))
        return 0;
    *out = v;
    return 1;
}

/*
 * Makes room for one more of n elements of size bytes in rows (capacity *cap, doubling
 * from first). Returns the array, moved or not, or NULL when out of memory (rows is
 * then still valid and owned by the caller).
 */
static void *grow_rows(void *rows, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return rows;
    const size_t ncap = *cap ? 2 * *cap : first;
    void *nr = realloc(rows, ncap * size);
    if (nr)
        *cap = ncap;
    return nr;
}

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* ---- STREAM and BabelStream ---- */

static const char stream_what[] = "BabelStream or STREAM output";

/* Maps a kernel label ("Copy", "Copy:", "Mul", "Scale") to a kernel, or -1 when it has no key. */
static int stream_kernel(const char *name)
{
    char n[32];
    snprintf(n, sizeof(n), "%s", name);
    size_t len = strlen(n);
    if (len > 0 && n[len - 1] == ':')
        n[len - 1] = '\0';
    if (ieq(n, "Copy"))
        return SIM_STREAM_KERNEL_COPY;
    if (ieq(n, "Mul") || ieq(n, "Scale"))
        return SIM_STREAM_KERNEL_SCALE;
    if (ieq(n, "Add"))
        return SIM_STREAM_KERNEL_ADD;
    if (ieq(n, "Triad"))
        return SIM_STREAM_KERNEL_TRIAD;
    return -1;
}

/* Bytes per unit of a BabelStream rate header token, or 0 when unknown. */
static double rate_unit(const char *u)
{
    if (strcmp(u, "MBytes/sec") == 0 || strcmp(u, "MB/s") == 0)
        return 1e6;
    if (strcmp(u, "MiBytes/sec") == 0 || strcmp(u, "MiB/s") == 0)
        return 1048576.0;
    if (strcmp(u, "GBytes/sec") == 0 || strcmp(u, "GB/s") == 0)
        return 1e9;
    if (strcmp(u, "GiBytes/sec") == 0 || strcmp(u, "GiB/s") == 0)
        return 1073741824.0;
    return 0.0;
}

/* Largest memory bandwidth a STREAM row may report: far above any GPU (profiles stop at 1e15). */
#define SIM_STREAM_MAX_BYTES_PER_S 1e18

/* Records one kernel's rate; rejects a second row for the same kernel or a rate out of range. */
static sim_status stream_store(sim_stream_result *out, const reader *r, const char *name,
                               double rate, struct sim_err *err)
{
    int k = stream_kernel(name);
    if (k < 0)
        return SIM_OK;
    if (out->line[k])
        return fail(err, SIM_EPARSE, r->path, r->line,
                    "%s: second row for this kernel (first at "
                    "line %d)",
                    name, out->line[k]);
    /* A finite rate in a large unit can still overflow in bytes/s (1e303 MB/s). */
    const double bw = rate * out->bytes_per_unit;
    if (!(bw >= 0.0 && bw <= SIM_STREAM_MAX_BYTES_PER_S))
        return fail(err, SIM_EPARSE, r->path, r->line,
                    "%s: rate out of range (expected 0 to %g bytes/s, got %g)", name,
                    SIM_STREAM_MAX_BYTES_PER_S, bw);
    out->bw_bytes_per_s[k] = bw;
    out->line[k] = r->line;
    return SIM_OK;
}

/* The rows of a text table, up to a blank line, a "----" rule or the end. */
static sim_status stream_text_rows(reader *r, sim_stream_result *out, int ncols, int header_line,
                                   struct sim_err *err)
{
    static const char *const col_names[] = {"function", "rate", "time", "time", "time", "time"};
    char *line;
    int rows = 0;
    while ((line = reader_next(r)) != NULL) {
        if (is_blank(line) || sim_text_trim(line)[0] == '-')
            break;
        char *tok[MAX_FIELDS];
        int n = split_ws(line, tok, MAX_FIELDS);
        if (n != ncols)
            return fail(err, SIM_EPARSE, r->path, r->line,
                        "expected %d columns as in the header at line %d, got %d", ncols,
                        header_line, n);
        for (int i = 1; i < n; i++) {
            double v = 0.0;
            if (!parse_num(tok[i], &v))
                return fail(err, SIM_EPARSE, r->path, r->line,
                            "%s: column %d (%s): not a number (got '%s')", tok[0], i + 1,
                            col_names[i < 5 ? i : 5], tok[i]);
            if (!(v > 0.0))
                return fail(err, SIM_ERANGE, r->path, r->line,
                            "%s: column %d (%s): must be > 0 (got %s)", tok[0], i + 1,
                            col_names[i < 5 ? i : 5], tok[i]);
        }
        double rate = 0.0;
        parse_num(tok[1], &rate);
        sim_status st = stream_store(out, r, tok[0], rate, err);
        if (st != SIM_OK)
            return st;
        rows++;
    }
    if (rows == 0)
        return fail(err, SIM_EPARSE, r->path, header_line, "no result rows after the header");
    return SIM_OK;
}

/* BabelStream --csv: every following non-blank line is a row. */
static sim_status stream_csv_rows(reader *r, sim_stream_result *out, int ncols, int i_name,
                                  int i_rate, int i_time, int header_line, char *const *hdr,
                                  struct sim_err *err)
{
    char *line;
    int rows = 0;
    while ((line = reader_next(r)) != NULL) {
        if (is_blank(line))
            continue;
        char *tok[MAX_FIELDS];
        int n = split_csv(line, tok, MAX_FIELDS);
        if (n != ncols)
            return fail(err, SIM_EPARSE, r->path, r->line,
                        "expected %d comma-separated columns as in the header at line %d, got %d",
                        ncols, header_line, n);
        double rate = 0.0, t = 1.0;
        if (!parse_num(tok[i_rate], &rate))
            return fail(err, SIM_EPARSE, r->path, r->line, "%s: %s: not a number (got '%s')",
                        tok[i_name], hdr[i_rate], tok[i_rate]);
        if (i_time >= 0 && !parse_num(tok[i_time], &t))
            return fail(err, SIM_EPARSE, r->path, r->line, "%s: %s: not a number (got '%s')",
                        tok[i_name], hdr[i_time], tok[i_time]);
        if (!(rate > 0.0) || !(t > 0.0))
            return fail(err, SIM_ERANGE, r->path, r->line, "%s: %s: must be > 0 (got %s)",
                        tok[i_name], rate > 0.0 ? hdr[i_time] : hdr[i_rate],
                        rate > 0.0 ? tok[i_time] : tok[i_rate]);
        sim_status st = stream_store(out, r, tok[i_name], rate, err);
        if (st != SIM_OK)
            return st;
        rows++;
    }
    if (rows == 0)
        return fail(err, SIM_EPARSE, r->path, header_line, "no result rows after the header");
    return SIM_OK;
}

sim_status sim_stream_parse(const char *path, sim_stream_result *out, struct sim_err *err)
{
    reader r;
    memset(out, 0, sizeof(*out));
    sim_status st = reader_open(&r, path, stream_what, err);
    char *line;
    int found = 0;
    while (st == SIM_OK && !found && (line = reader_next(&r)) != NULL) {
        char copy[1024];
        snprintf(copy, sizeof(copy), "%s", line);
        char *tok[MAX_FIELDS];
        if (strchr(copy, ',')) {
            /* BabelStream --csv header: function,...,max_mbytes_per_sec,min_runtime,... */
            int n = split_csv(copy, tok, MAX_FIELDS);
            int i_name = -1, i_rate = -1, i_time = -1;
            for (int i = 0; i < n; i++) {
                if (strcmp(tok[i], "function") == 0)
                    i_name = i;
                else if (strcmp(tok[i], "max_mbytes_per_sec") == 0 ||
                         strcmp(tok[i], "max_mibytes_per_sec") == 0)
                    i_rate = i;
                else if (strcmp(tok[i], "min_runtime") == 0)
                    i_time = i;
            }
            if (i_name < 0 || i_rate < 0)
                continue;
            out->tool = "BabelStream CSV";
            out->bytes_per_unit = strstr(tok[i_rate], "mibytes") ? 1048576.0 : 1e6;
            found = 1;
            st = stream_csv_rows(&r, out, n, i_name, i_rate, i_time, r.line, tok, err);
            continue;
        }
        int n = split_ws(copy, tok, MAX_FIELDS);
        if (n < 2 || strcmp(tok[0], "Function") != 0)
            continue;
        found = 1;
        if (strstr(line, "Best Rate MB/s") || strstr(line, "Rate (MB/s)")) {
            out->tool = "STREAM";
            out->bytes_per_unit = 1e6;
            st = stream_text_rows(&r, out, 5, r.line, err);
            continue;
        }
        out->bytes_per_unit = rate_unit(tok[1]);
        if (out->bytes_per_unit == 0.0) {
            st = fail(err, SIM_EPARSE, path, r.line,
                      "unknown rate unit '%s' (expected MBytes/sec, MiBytes/sec, MB/s or MiB/s)",
                      tok[1]);
            continue;
        }
        out->tool = "BabelStream";
        /* 5 columns: Function, rate, Min (sec), Max, Average; BabelStream 5 may add Std. Dev. */
        st = stream_text_rows(&r, out, strstr(line, "Std.") ? 6 : 5, r.line, err);
    }
    if (st == SIM_OK && !found)
        st = fail(err, SIM_EPARSE, path, r.line,
                  "no BabelStream or STREAM result table (expected a 'Function  MBytes/sec ...', "
                  "'Function  Best Rate MB/s ...' or BabelStream --csv header)");
    if (st == SIM_OK) {
        int any = 0;
        for (int k = 0; k < SIM_STREAM_KERNEL_COUNT; k++)
            any |= out->line[k] != 0;
        if (!any)
            st = fail(err, SIM_EPARSE, path, r.line,
                      "the table has no Copy, Mul/Scale, Add or Triad row");
    }
    reader_close(&r);
    return st;
}

/* ---- nccl-tests / rccl-tests all_reduce_perf ---- */

static const char nccl_what[] = "nccl-tests all_reduce_perf output";

void sim_nccl_result_free(sim_nccl_result *r)
{
    if (!r)
        return;
    free(r->rows);
    r->rows = NULL;
    r->n_rows = 0;
}

typedef struct nccl_layout {
    int ncols;      /* columns in the header (= fields in a row) */
    int i_size;     /* message size, bytes */
    int i_time[2];  /* out-of-place, in-place time; -1 when absent */
    int i_wrong[2]; /* "#wrong" count columns; -1 when absent (old "error" columns) */
} nccl_layout;

/* Interprets a '#' line: device lines, the nThread/nGpus header or the column header. */
static void nccl_comment(char *text, int line, nccl_layout *lay, int *header_line, int *n_rank,
                         int *n_threads, int *n_gpus_per, int *units_checked, int *bad_units,
                         int *other_coll)
{
    char copy[1024];
    snprintf(copy, sizeof(copy), "%s", text + 1);
    char *tok[MAX_FIELDS];
    int n = split_ws(copy, tok, MAX_FIELDS);
    if (n == 0)
        return;
    double v = 0.0;
    if (n >= 2 && strcmp(tok[0], "Rank") == 0 && parse_num(tok[1], &v)) {
        (*n_rank)++;
        return;
    }
    if (n >= 4 && strcmp(tok[0], "Collective") == 0 && strcmp(tok[1], "test") == 0) {
        /* "# Collective test starting: all_reduce_perf" (nccl-tests 2.14+). */
        *other_coll = !strstr(text, "all_reduce");
        return;
    }
    /* A count above NCCL_MAX_RANKS is refused later (-1 marks it): converting it to int would
     * be undefined, and their product could wrap. */
    for (int i = 0; i + 1 < n; i++) {
        if (strcmp(tok[i], "nThread") == 0 && parse_count(tok[i + 1], &v))
            *n_threads = v <= NCCL_MAX_RANKS ? (int)v : -1;
        if (strcmp(tok[i], "nGpus") == 0 && parse_count(tok[i + 1], &v))
            *n_gpus_per = v <= NCCL_MAX_RANKS ? (int)v : -1;
    }
    if (*header_line && !*units_checked && line == *header_line + 1 && tok[0][0] == '(') {
        /* The units line under the header: times must be in microseconds. */
        *units_checked = 1;
        *bad_units = !strstr(text, "(us)");
        return;
    }
    if ((strcmp(tok[0], "size") == 0 || strcmp(tok[0], "bytes") == 0) && !*header_line) {
        int nt = 0, nw = 0, has_time = 0;
        for (int i = 0; i < n; i++)
            has_time |= strcmp(tok[i], "time") == 0;
        if (!has_time)
            return;
        lay->ncols = n;
        lay->i_size = 0;
        lay->i_time[0] = lay->i_time[1] = lay->i_wrong[0] = lay->i_wrong[1] = -1;
        for (int i = 0; i < n; i++) {
            if (strcmp(tok[i], "time") == 0 && nt < 2)
                lay->i_time[nt++] = i;
            if (strcmp(tok[i], "#wrong") == 0 && nw < 2)
                lay->i_wrong[nw++] = i;
        }
        *header_line = line;
    }
}

sim_status sim_nccl_parse(const char *path, sim_nccl_result *out, struct sim_err *err)
{
    reader r;
    memset(out, 0, sizeof(*out));
    sim_status st = reader_open(&r, path, nccl_what, err);
    nccl_layout lay = {0, 0, {-1, -1}, {-1, -1}};
    int header_line = 0, n_rank = 0, n_threads = 0, n_gpus_per = 0, units_checked = 0;
    int bad_units = 0, other_coll = 0, other_coll_line = 0;
    size_t cap = 0;
    char *line;
    while (st == SIM_OK && (line = reader_next(&r)) != NULL) {
        char *s = sim_text_trim(line);
        if (!*s)
            continue;
        if (*s == '#') {
            int was = other_coll;
            nccl_comment(s, r.line, &lay, &header_line, &n_rank, &n_threads, &n_gpus_per,
                         &units_checked, &bad_units, &other_coll);
            if (other_coll && !was)
                other_coll_line = r.line;
            if (bad_units)
                st = fail(err, SIM_EPARSE, path, r.line,
                          "time unit is not microseconds (expected '(us)' under 'time')");
            continue;
        }
        char *tok[MAX_FIELDS];
        int n = split_ws(s, tok, MAX_FIELDS);
        double size = 0.0;
        if (!parse_num(tok[0], &size))
            continue; /* log noise such as "host:pid:tid [0] NCCL INFO ..." */
        if (!header_line) {
            st = fail(err, SIM_EPARSE, path, r.line,
                      "result row before the '#  size  count  type ...' column header");
            break;
        }
        if (n != lay.ncols) {
            st = fail(err, SIM_EPARSE, path, r.line,
                      "expected %d columns as in the header at line %d, got %d", lay.ncols,
                      header_line, n);
            break;
        }
        if (!parse_count(tok[lay.i_size], &size)) {
            st = fail(err, SIM_EPARSE, path, r.line,
                      "size: expected a positive integer number of bytes, got '%s'",
                      tok[lay.i_size]);
            break;
        }
        sim_nccl_row row = {size, 0.0, 0.0, r.line};
        for (int j = 0; j < 2 && st == SIM_OK; j++) {
            if (lay.i_time[j] < 0)
                continue;
            const char *tt = tok[lay.i_time[j]];
            double us = 0.0;
            if (!parse_num(tt, &us))
                st = fail(err, SIM_EPARSE, path, r.line, "%s time: not a number (got '%s')",
                          j ? "in-place" : "out-of-place", tt);
            else if (!(us > 0.0))
                st = fail(err, SIM_ERANGE, path, r.line, "%s time: must be > 0 us (got %s)",
                          j ? "in-place" : "out-of-place", tt);
            /* nccl-tests prints timeUsec = seconds x 1.0E6. */
            (j ? &row.time_ip_s : &row.time_oop_s)[0] = us * 1e-6;
            double wrong = 0.0;
            if (st == SIM_OK && lay.i_wrong[j] >= 0 && strcmp(tok[lay.i_wrong[j]], "N/A") != 0) {
                if (!parse_num(tok[lay.i_wrong[j]], &wrong) || wrong < 0.0)
                    st = fail(err, SIM_EPARSE, path, r.line,
                              "#wrong: expected a count or N/A, got '%s'", tok[lay.i_wrong[j]]);
                else if (wrong > 0.0)
                    st = fail(err, SIM_ERANGE, path, r.line,
                              "the run reports %s wrong elements (a failed run: fix it first)",
                              tok[lay.i_wrong[j]]);
            }
        }
        if (st != SIM_OK)
            break;
        sim_nccl_row *rows = grow_rows(out->rows, &cap, out->n_rows, sizeof(*rows), 64);
        if (!rows) {
            st = fail(err, SIM_ENOMEM, path, r.line, "out of memory");
            break;
        }
        out->rows = rows;
        out->rows[out->n_rows++] = row;
    }
    if (st == SIM_OK && other_coll)
        st = fail(err, SIM_EPARSE, path, other_coll_line,
                  "not an all_reduce_perf run (expected 'Collective test starting: "
                  "all_reduce_perf')");
    if (st == SIM_OK && !header_line)
        st = fail(err, SIM_EPARSE, path, r.line,
                  "no nccl-tests result table (expected the '#  size  count  type  redop ...  "
                  "time  algbw  busbw' header of all_reduce_perf)");
    if (st == SIM_OK && out->n_rows == 0)
        st = fail(err, SIM_EPARSE, path, header_line, "no result rows after the column header");
    if (st == SIM_OK) {
        out->header_line = header_line;
        if (n_threads < 0 || n_gpus_per < 0 ||
            (int64_t)n_threads * (int64_t)n_gpus_per > NCCL_MAX_RANKS)
            st = fail(err, SIM_ERANGE, path, 1,
                      "the '# nThread t nGpus g' header names more than %d GPUs (expected t x g "
                      "<= %d)",
                      NCCL_MAX_RANKS, NCCL_MAX_RANKS);
        else
            out->n_gpus = n_rank > 0 ? n_rank : n_threads * n_gpus_per;
        if (st != SIM_OK)
            ;
        else if (out->n_gpus == 0)
            st = fail(err, SIM_EPARSE, path, 1,
                      "cannot tell the GPU count (no '#  Rank  r Group ...' device lines and no "
                      "'# nThread t nGpus g' header)");
        else if (out->n_gpus < 2)
            st = fail(err, SIM_ERANGE, path, 1,
                      "an all-reduce among %d GPU (expected 2 or more GPUs)", out->n_gpus);
    }
    if (st != SIM_OK)
        sim_nccl_result_free(out);
    reader_close(&r);
    return st;
}

/* ---- GEMM tables ---- */

static const char gemm_what[] = "a GEMM CSV (m,n,k,dtype,time) or cutlass_profiler CSV";

void sim_gemm_table_free(sim_gemm_table *t)
{
    if (!t)
        return;
    free(t->rows);
    t->rows = NULL;
    t->n_rows = 0;
}

/* Maps a dtype name to fp16, bf16 or fp8; returns 0 for others (fp32, int8, block-scaled). */
static int gemm_dtype(const char *s, sim_dtype *out)
{
    char n[48];
    snprintf(n, sizeof(n), "%s", s);
    char *colon = strchr(n, ':'); /* cutlass "f16:column" */
    if (colon)
        *colon = '\0';
    const char *p = strncmp(n, "torch.", 6) == 0 ? n + 6 : n;
    static const char *const f16[] = {"fp16", "float16", "half", "f16"};
    static const char *const b16[] = {"bf16", "bfloat16"};
    static const char *const f8[] = {
        "fp8",   "fp8_e4m3",      "e4m3",        "fe4m3",           "fp8_e5m2",       "e5m2",
        "fe5m2", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"};
    for (size_t i = 0; i < sizeof(f16) / sizeof(f16[0]); i++)
        if (ieq(p, f16[i])) {
            *out = SIM_DTYPE_FP16;
            return 1;
        }
    for (size_t i = 0; i < sizeof(b16) / sizeof(b16[0]); i++)
        if (ieq(p, b16[i])) {
            *out = SIM_DTYPE_BF16;
            return 1;
        }
    for (size_t i = 0; i < sizeof(f8) / sizeof(f8[0]); i++)
        if (ieq(p, f8[i])) {
            *out = SIM_DTYPE_FP8;
            return 1;
        }
    return 0;
}

/* Time columns of the generic table and their unit in seconds. */
static const struct {
    const char *name;
    double unit_s;
} time_cols[] = {
    {"time", 1.0},     {"time_s", 1.0},   {"latency", 1e-3},    {"latency_ms", 1e-3},
    {"time_ms", 1e-3}, {"time_us", 1e-6}, {"latency_us", 1e-6},
};

typedef struct gemm_layout {
    int ncols, i_m, i_n, i_k, i_dtype, i_time;
    int i_kind, i_status, i_disp, i_batch; /* cutlass only; -1 when absent */
} gemm_layout;

static int col_index(char *const *tok, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(tok[i], name) == 0)
            return i;
    return -1;
}

/* Sets up the layout from a header line; returns 0 when the line is not a GEMM header. */
static sim_status gemm_header(char *const *tok, int n, const reader *r, gemm_layout *lay,
                              sim_gemm_table *out, int *is_header, struct sim_err *err)
{
    *is_header = 0;
    lay->ncols = n;
    lay->i_m = col_index(tok, n, "m");
    lay->i_n = col_index(tok, n, "n");
    lay->i_k = col_index(tok, n, "k");
    if (lay->i_m < 0 || lay->i_n < 0 || lay->i_k < 0)
        return SIM_OK;
    *is_header = 1;
    lay->i_kind = lay->i_status = lay->i_disp = lay->i_batch = -1;
    int i_runtime = col_index(tok, n, "Runtime");
    if (i_runtime < 0)
        i_runtime = col_index(tok, n, "Runtime (ms)");
    if (i_runtime >= 0 && col_index(tok, n, "A") >= 0) {
        out->format = SIM_GEMM_FORMAT_CUTLASS;
        out->time_column = "Runtime";
        out->time_unit_s = 1e-3; /* cutlass_profiler reports Runtime in ms */
        lay->i_time = i_runtime;
        lay->i_dtype = col_index(tok, n, "A");
        lay->i_kind = col_index(tok, n, "OperationKind");
        lay->i_status = col_index(tok, n, "Status");
        lay->i_disp = col_index(tok, n, "Disposition");
        lay->i_batch = col_index(tok, n, "batch_count");
        return SIM_OK;
    }
    out->format = SIM_GEMM_FORMAT_TABLE;
    lay->i_dtype = col_index(tok, n, "dtype");
    if (lay->i_dtype < 0)
        lay->i_dtype = col_index(tok, n, "gemm_dtype");
    if (lay->i_dtype < 0)
        return fail(err, SIM_EPARSE, r->path, r->line,
                    "no dtype column (expected 'dtype' or 'gemm_dtype')");
    lay->i_time = -1;
    for (size_t c = 0; c < sizeof(time_cols) / sizeof(time_cols[0]); c++) {
        int i = col_index(tok, n, time_cols[c].name);
        if (i < 0)
            continue;
        if (lay->i_time >= 0)
            return fail(err, SIM_EPARSE, r->path, r->line,
                        "two time columns ('%s' and '%s'): keep one", out->time_column,
                        time_cols[c].name);
        lay->i_time = i;
        out->time_column = time_cols[c].name;
        out->time_unit_s = time_cols[c].unit_s;
    }
    if (lay->i_time < 0)
        return fail(err, SIM_EPARSE, r->path, r->line,
                    "no time column (expected time or time_s [s], latency, latency_ms or time_ms "
                    "[ms], time_us or latency_us [us])");
    return SIM_OK;
}

/* 1 when a cutlass row is a successful dense, unbatched GEMM; 0 to skip it. */
static int cutlass_usable(char *const *tok, const gemm_layout *lay)
{
    if (lay->i_kind >= 0 && strcmp(tok[lay->i_kind], "gemm") != 0)
        return 0; /* spgemm (2:4 sparse), conv, ... */
    if (lay->i_status >= 0 && strcmp(tok[lay->i_status], "success") != 0)
        return 0;
    if (lay->i_disp >= 0 && strcmp(tok[lay->i_disp], "passed") != 0 &&
        strcmp(tok[lay->i_disp], "not_verified") != 0 && strcmp(tok[lay->i_disp], "not_run") != 0)
        return 0;
    if (lay->i_batch >= 0 && strcmp(tok[lay->i_batch], "1") != 0)
        return 0;
    return 1;
}

static sim_status gemm_row(char *const *tok, const reader *r, const gemm_layout *lay,
                           sim_gemm_table *out, size_t *cap, struct sim_err *err)
{
    if (out->format == SIM_GEMM_FORMAT_CUTLASS && !cutlass_usable(tok, lay)) {
        out->n_skipped++;
        return SIM_OK;
    }
    sim_gemm_row row;
    row.line = r->line;
    const int idx[3] = {lay->i_m, lay->i_n, lay->i_k};
    double *dst[3] = {&row.m, &row.n, &row.k};
    static const char *const names[3] = {"m", "n", "k"};
    for (int j = 0; j < 3; j++)
        if (!parse_count(tok[idx[j]], dst[j]))
            return fail(err, SIM_EPARSE, r->path, r->line,
                        "%s: expected a positive integer, got '%s'", names[j], tok[idx[j]]);
    double t = 0.0;
    if (!parse_num(tok[lay->i_time], &t))
        return fail(err, SIM_EPARSE, r->path, r->line, "%s: not a number (got '%s')",
                    out->time_column, tok[lay->i_time]);
    if (!(t > 0.0))
        return fail(err, SIM_ERANGE, r->path, r->line, "%s: must be > 0 (got %s)", out->time_column,
                    tok[lay->i_time]);
    row.time_s = t * out->time_unit_s;
    if (!gemm_dtype(tok[lay->i_dtype], &row.dtype)) {
        out->n_skipped++;
        return SIM_OK;
    }
    sim_gemm_row *rows = grow_rows(out->rows, cap, out->n_rows, sizeof(*rows), 256);
    if (!rows)
        return fail(err, SIM_ENOMEM, r->path, r->line, "out of memory");
    out->rows = rows;
    out->rows[out->n_rows++] = row;
    return SIM_OK;
}

sim_status sim_gemm_parse(const char *path, sim_gemm_table *out, struct sim_err *err)
{
    reader r;
    memset(out, 0, sizeof(*out));
    sim_status st = reader_open(&r, path, gemm_what, err);
    gemm_layout lay;
    memset(&lay, 0, sizeof(lay));
    size_t cap = 0;
    char *line;
    while (st == SIM_OK && (line = reader_next(&r)) != NULL) {
        char *s = sim_text_trim(line);
        if (!*s || *s == '#')
            continue;
        char *tok[MAX_FIELDS];
        if (!out->header_line) {
            /* Text before the header (cutlass_profiler's report when stdout was saved) is skipped.
             */
            if (!strchr(s, ','))
                continue;
            int is_header = 0;
            st = gemm_header(tok, split_csv(s, tok, MAX_FIELDS), &r, &lay, out, &is_header, err);
            if (is_header)
                out->header_line = r.line;
            continue;
        }
        int n = split_csv(s, tok, MAX_FIELDS);
        if (n != lay.ncols) {
            st = fail(err, SIM_EPARSE, path, r.line,
                      "expected %d comma-separated columns as in the header at line %d, got %d",
                      lay.ncols, out->header_line, n);
            break;
        }
        st = gemm_row(tok, &r, &lay, out, &cap, err);
        out->last_line = r.line;
    }
    if (st == SIM_OK && !out->header_line)
        st = fail(err, SIM_EPARSE, path, r.line,
                  "no GEMM table (expected a CSV header with columns m, n, k, a dtype and a time, "
                  "or a cutlass_profiler CSV)");
    if (st == SIM_OK && out->n_rows == 0)
        st = fail(err, SIM_EPARSE, path, out->header_line,
                  "no usable rows (%zu skipped: only fp16, bf16 and fp8 rows of successful dense "
                  "GEMMs count)",
                  out->n_skipped);
    if (st != SIM_OK)
        sim_gemm_table_free(out);
    reader_close(&r);
    return st;
}
