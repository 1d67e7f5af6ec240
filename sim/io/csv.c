/* csv.c - strict reader of plain or gzip-compressed kernel tables (see csv.h). */
#include "csv.h"

#include "err.h"
#include "num_parse.h"
#include "textin.h"

#include <stdlib.h>
#include <string.h>

/* A line longer than this is not a kernel table (the widest, vidur mlp.csv, is ~1.2 kB). */
#define CSV_MAX_LINE_BYTES ((size_t)16 << 20)
#define CSV_MAX_COLUMNS    4096
/* A whole table, decompressed, as the other importers' inputs (docs/limits.md): the largest
 * shipped table (aic-vllm gemm_perf, 115k rows) is about 17 MB; the rows a reader's caller
 * keeps grow with it, so a small gzip of millions of rows stops here. */
#define CSV_MAX_TABLE_BYTES ((size_t)64 << 20)

struct sim_csv {
    sim_textin *in;
    char *hdr_buf; /* the header line, split in place */
    char **hdr;    /* n_cols names, pointing into hdr_buf */
    char **fields; /* n_cols fields of the current row, pointing into the reader's line */
    size_t bytes;  /* of the lines read so far (CSV_MAX_TABLE_BYTES) */
    int n_cols;
};

/* Splits line at commas into at most max pointers; returns the field count, or max + 1 if more. */
static int split(char *line, char **out, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return max + 1;
        out[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            return n;
        *comma = '\0';
        p = comma + 1;
    }
}

static int count_fields(const char *line)
{
    int n = 1;
    for (const char *p = line; *p; p++)
        n += *p == ',';
    return n;
}

void sim_csv_free(sim_csv *c)
{
    if (!c)
        return;
    sim_textin_free(c->in);
    free(c->hdr_buf);
    free(c->hdr);
    free(c->fields);
    free(c);
}

sim_status sim_csv_open(const char *path, sim_csv **out, struct sim_err *err)
{
    *out = NULL;
    sim_csv *c = calloc(1, sizeof(*c));
    if (!c)
        return sim_enomem(err, path);
    char *line = NULL;
    sim_status st = sim_textin_open(path, &c->in, err);
    if (st == SIM_OK)
        st = sim_textin_line(c->in, CSV_MAX_LINE_BYTES, &line, err);
    if (st != SIM_OK)
        goto cleanup;
    if (!line) {
        sim_errf(err, "%s:1: empty file (expected a header line of column names)", path);
        st = SIM_EPARSE;
        goto cleanup;
    }
    if (strchr(line, '"')) {
        sim_errf(err, "%s:1: quoted fields are not supported", path);
        st = SIM_EPARSE;
        goto cleanup;
    }
    int n = count_fields(line);
    if (n > CSV_MAX_COLUMNS) {
        sim_errf(err, "%s:1: %d columns (expected at most %d)", path, n, CSV_MAX_COLUMNS);
        st = SIM_EPARSE;
        goto cleanup;
    }
    c->hdr_buf = malloc(strlen(line) + 1);
    c->hdr = malloc((size_t)n * sizeof(char *));
    c->fields = malloc((size_t)n * sizeof(char *));
    if (!c->hdr_buf || !c->hdr || !c->fields) {
        st = sim_enomem(err, path);
        goto cleanup;
    }
    strcpy(c->hdr_buf, line);
    c->n_cols = split(c->hdr_buf, c->hdr, n);
    for (int i = 0; i < c->n_cols; i++)
        for (int j = 0; j < i; j++)
            if (c->hdr[i][0] && strcmp(c->hdr[i], c->hdr[j]) == 0) {
                sim_errf(err, "%s:1: %s: duplicate column (columns %d and %d)", path, c->hdr[i],
                         j + 1, i + 1);
                st = SIM_EPARSE;
                goto cleanup;
            }
cleanup:
    if (st != SIM_OK) {
        sim_csv_free(c);
        return st;
    }
    *out = c;
    return SIM_OK;
}

int sim_csv_column(const sim_csv *c, const char *name)
{
    if (!name[0])
        return -1;
    for (int i = 0; i < c->n_cols; i++)
        if (strcmp(c->hdr[i], name) == 0)
            return i;
    return -1;
}

sim_status sim_csv_require(const sim_csv *c, const char *name, int *col, struct sim_err *err)
{
    *col = sim_csv_column(c, name);
    if (*col < 0) {
        sim_errf(err, "%s:1: %s: missing column", sim_csv_path(c), name);
        return SIM_EPARSE;
    }
    return SIM_OK;
}

sim_status sim_csv_next(sim_csv *c, int *has_row, struct sim_err *err)
{
    char *line = NULL;
    *has_row = 0;
    sim_status st = sim_textin_line(c->in, CSV_MAX_LINE_BYTES, &line, err);
    if (st != SIM_OK || !line)
        return st;
    const char *path = sim_csv_path(c);
    const long long at = (long long)sim_csv_line(c);
    c->bytes += strlen(line) + 1;
    if (c->bytes > CSV_MAX_TABLE_BYTES) {
        sim_errf(err, "%s:%lld: more than %zu MiB (decompressed); not a kernel table", path, at,
                 CSV_MAX_TABLE_BYTES >> 20);
        return SIM_EPARSE;
    }
    if (!line[0]) {
        sim_errf(err, "%s:%lld: empty line (expected %d fields)", path, at, c->n_cols);
        return SIM_EPARSE;
    }
    if (strchr(line, '"')) {
        sim_errf(err, "%s:%lld: quoted fields are not supported", path, at);
        return SIM_EPARSE;
    }
    int n = count_fields(line);
    if (n != c->n_cols) {
        sim_errf(err, "%s:%lld: %d fields (expected %d as in the header)", path, at, n, c->n_cols);
        return SIM_EPARSE;
    }
    split(line, c->fields, c->n_cols);
    *has_row = 1;
    return SIM_OK;
}

const char *sim_csv_field(const sim_csv *c, int col) { return c->fields[col]; }

const char *sim_csv_path(const sim_csv *c) { return sim_textin_path(c->in); }

int64_t sim_csv_line(const sim_csv *c) { return sim_textin_line_no(c->in); }

int sim_csv_n_columns(const sim_csv *c) { return c->n_cols; }

const char *sim_csv_column_name(const sim_csv *c, int col) { return c->hdr[col]; }

sim_status sim_csv_double(const sim_csv *c, int col, double min, double max, double *out,
                          struct sim_err *err)
{
    const char *s = c->fields[col];
    const sim_status st = sim_num_parse_double(s, min, max, out);
    if (st == SIM_EPARSE)
        sim_errf(err, "%s:%lld: %s: not a number (expected a finite decimal number, got '%s')",
                 sim_csv_path(c), (long long)sim_csv_line(c), c->hdr[col], s);
    else if (st == SIM_ERANGE)
        sim_errf(err, "%s:%lld: %s: out of range (expected %.17g to %.17g, got '%s')",
                 sim_csv_path(c), (long long)sim_csv_line(c), c->hdr[col], min, max, s);
    return st == SIM_OK ? SIM_OK : SIM_EPARSE;
}

sim_status sim_csv_i64(const sim_csv *c, int col, int64_t min, int64_t max, int64_t *out,
                       struct sim_err *err)
{
    const char *s = c->fields[col];
    const sim_status st = sim_num_parse_i64(s, SIM_NUM_SIGN_MINUS, min, max, out);
    if (st == SIM_EPARSE)
        sim_errf(err, "%s:%lld: %s: not an integer (expected a decimal integer, got '%s')",
                 sim_csv_path(c), (long long)sim_csv_line(c), c->hdr[col], s);
    else if (st == SIM_ERANGE)
        sim_errf(err, "%s:%lld: %s: out of range (expected %lld to %lld, got '%s')",
                 sim_csv_path(c), (long long)sim_csv_line(c), c->hdr[col], (long long)min,
                 (long long)max, s);
    return st == SIM_OK ? SIM_OK : SIM_EPARSE;
}
