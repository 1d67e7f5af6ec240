/*
 * csv.h - a strict reader of the comma-separated kernel tables in
 * ../shared/data/kernels (aic and vidur), plain or gzip-compressed.
 *
 * Format accepted: the first line is a header of column names; every later
 * line has exactly as many comma-separated fields as the header. There is no
 * quoting (none of the tables uses it, so a '"' is an error rather than a
 * silently misread field), a trailing "\r" is dropped, and an empty line is an
 * error. Header names must be unique, except that empty names (the unnamed
 * index column pandas writes) may repeat and cannot be looked up. Files are
 * read line by line through textin.h, so "x.csv" and "x.csv.gz" are read alike;
 * a truncated or corrupt gzip stream is an error, not an early end of table.
 *
 * Errors name the file and line: "<path>:<line>: <column>: <problem> (expected
 * <constraint>, got '<text>')".
 */
#ifndef SIM_CSV_H
#define SIM_CSV_H

#include <stdint.h>

#include "status.h"

typedef struct sim_csv sim_csv; /* opaque: the text reader and the header */

/*
 * Opens path and reads its header. On success *out is a heap reader the caller
 * releases with sim_csv_free(). On failure returns SIM_EIO (cannot open or
 * read), SIM_EPARSE (empty file, bad header) or SIM_ENOMEM, with *out NULL and
 * a message in err.
 */
sim_status sim_csv_open(const char *path, sim_csv **out /* OUT */, struct sim_err *err /* OUT */);

/* Closes the file and frees the reader; accepts NULL. */
void sim_csv_free(sim_csv *c);

/* Index of the column named name, or -1 when the header has no such column. */
int sim_csv_column(const sim_csv *c, const char *name);

/* Like sim_csv_column, but a missing column is SIM_EPARSE with "<path>:1: missing column". */
sim_status sim_csv_require(const sim_csv *c, const char *name, int *col /* OUT */,
                           struct sim_err *err /* OUT */);

/*
 * Reads the next data line into the reader. Returns SIM_OK with *has_row 1, or
 * SIM_OK with *has_row 0 at the end of the table; SIM_EPARSE for a line whose
 * field count differs from the header's, an empty line or a quote; SIM_EIO for
 * a read error or a truncated/corrupt gzip stream.
 */
sim_status sim_csv_next(sim_csv *c, int *has_row /* OUT */, struct sim_err *err /* OUT */);

/* Field col of the current row (valid until the next sim_csv_next); col must be in range. */
const char *sim_csv_field(const sim_csv *c, int col);

/* The file's path as given and the 1-based line number of the current row. */
const char *sim_csv_path(const sim_csv *c);
int64_t sim_csv_line(const sim_csv *c);

/* Number of columns in the header, and the name of column col (in range). */
int sim_csv_n_columns(const sim_csv *c);
const char *sim_csv_column_name(const sim_csv *c, int col);

/*
 * Field col of the current row as a number: the whole field must be a finite
 * decimal number (sim_num_parse_double) in [min, max]; otherwise SIM_EPARSE
 * with the file, line and column name in err.
 */
sim_status sim_csv_double(const sim_csv *c, int col, double min, double max, double *out /* OUT */,
                          struct sim_err *err /* OUT */);

/* The same for an integer field (decimal, no sign other than '-', no fraction). */
sim_status sim_csv_i64(const sim_csv *c, int col, int64_t min, int64_t max, int64_t *out /* OUT */,
                       struct sim_err *err /* OUT */);

#endif
