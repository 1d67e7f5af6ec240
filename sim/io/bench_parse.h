/*
 * bench_parse.h - readers for the text and CSV outputs of standard GPU
 * benchmarks, the inputs of `llmstep hw import` (docs/hardware-characterization.md).
 *
 * Formats and units, each checked against the tool's own output code:
 *   - BabelStream text table "Function  MBytes/sec  Min (sec)  Max  Average"
 *     (rows Copy, Mul, Add, Triad, Dot): the rate is 1.0E-6 x bytes / min time,
 *     i.e. 1 MB/s = 1e6 B/s; with --mibibytes the header says "MiBytes/sec" and
 *     1 MiB/s = 2^20 B/s. Copy and Mul count 2 arrays of bytes, Add and Triad 3.
 *   - BabelStream --csv: "function,num_times,n_elements,sizeof,max_mbytes_per_sec,
 *     min_runtime,max_runtime,avg_runtime" (max_mibytes_per_sec with --mibibytes).
 *   - McCalpin STREAM stream.c: "Function    Best Rate MB/s  Avg time  Min time  Max time"
 *     with rows "Copy:", "Scale:", "Add:", "Triad:"; rate 1.0E-06 x bytes / min time.
 *   - nccl-tests / rccl-tests all_reduce_perf: the "#  size  count  type  redop  root
 *     time  algbw  busbw  #wrong  time ..." table (older versions: "bytes N type op"
 *     or "error" columns), times in microseconds (timeUsec = sec x 1.0E6), GB/s =
 *     1e9 B/s. The GPU count is the number of "#  Rank  r Group ..." device lines,
 *     else nThread x nGpus from the "# nThread .. nGpus .." header.
 *   - GEMM tables: a CSV with columns m, n, k, a dtype column (dtype or gemm_dtype)
 *     and one time column whose name gives the unit: time or time_s (seconds),
 *     latency, latency_ms or time_ms (milliseconds, as in aiconfigurator's
 *     gemm_perf.csv), time_us or latency_us (microseconds); or the CSV of
 *     `cutlass_profiler --output=FILE.csv` (columns ..., m, n, k, A, B, ..., Runtime,
 *     GB/s, GFLOPs), whose Runtime is in milliseconds and whose A column names the
 *     dtype ("f16:column", "bf16:row", "fe4m3:row").
 * Files are read through zlib, so gzip-compressed inputs (.gz) are read like plain ones.
 * Every error is one line "<file>:<line>: <problem>" in err. Simio code; no cJSON.
 */
#ifndef SIM_BENCH_PARSE_H
#define SIM_BENCH_PARSE_H

#include <stddef.h>

#include "model.h"
#include "status.h"

/* STREAM kernels that have a profile key (Dot, Nstream, Read, Write are read and ignored). */
typedef enum sim_stream_kernel {
    SIM_STREAM_KERNEL_COPY = 0,
    SIM_STREAM_KERNEL_SCALE = 1, /* BabelStream "Mul", STREAM "Scale" */
    SIM_STREAM_KERNEL_ADD = 2,
    SIM_STREAM_KERNEL_TRIAD = 3,
    SIM_STREAM_KERNEL_COUNT
} sim_stream_kernel;

typedef struct sim_stream_result {
    const char *tool;                               /* "BabelStream", "BabelStream CSV", "STREAM" */
    double bytes_per_unit;                          /* 1e6 for MB/s, 1048576 for MiB/s */
    double bw_bytes_per_s[SIM_STREAM_KERNEL_COUNT]; /* best rate, B/s; 0 = not in the file */
    int line[SIM_STREAM_KERNEL_COUNT];              /* 1-based line of the row; 0 = absent */
} sim_stream_result;

/* Reads the first result table of a BabelStream (text or --csv) or STREAM output. */
sim_status sim_stream_parse(const char *path, sim_stream_result *out /* OUT */,
                            struct sim_err *err /* OUT */);

typedef struct sim_nccl_row {
    double bytes;      /* message size, B */
    double time_oop_s; /* out-of-place time, s */
    double time_ip_s;  /* in-place time, s; 0 when the table has no in-place columns */
    int line;
} sim_nccl_row;

typedef struct sim_nccl_result {
    int n_gpus;      /* ranks in the all-reduce */
    int header_line; /* line of the column header */
    size_t n_rows;
    sim_nccl_row *rows; /* heap, owned; free with sim_nccl_result_free */
} sim_nccl_result;

/* Reads an all_reduce_perf output. On success the caller frees out with sim_nccl_result_free. */
sim_status sim_nccl_parse(const char *path, sim_nccl_result *out /* OUT */,
                          struct sim_err *err /* OUT */);
/* Frees the rows; accepts a zeroed or already freed result. */
void sim_nccl_result_free(sim_nccl_result *r);

typedef enum sim_gemm_format {
    SIM_GEMM_FORMAT_TABLE = 0,   /* m,n,k,dtype,time CSV */
    SIM_GEMM_FORMAT_CUTLASS = 1, /* cutlass_profiler --output CSV */
    SIM_GEMM_FORMAT_COUNT
} sim_gemm_format;

typedef struct sim_gemm_row {
    double m, n, k;  /* GEMM shape: (m x k) x (k x n) */
    double time_s;   /* kernel time, s */
    sim_dtype dtype; /* SIM_DTYPE_FP16, BF16 or FP8 */
    int line;
} sim_gemm_row;

typedef struct sim_gemm_table {
    sim_gemm_format format;
    const char *time_column; /* the column the times came from, e.g. "latency" */
    double time_unit_s;      /* seconds per unit of that column */
    int header_line, last_line;
    size_t n_skipped; /* rows of other dtypes, failed or sparse cutlass runs, batched */
    size_t n_rows;
    sim_gemm_row *rows; /* heap, owned; free with sim_gemm_table_free */
} sim_gemm_table;

/* Reads a GEMM table or cutlass_profiler CSV. On success the caller frees out. */
sim_status sim_gemm_parse(const char *path, sim_gemm_table *out /* OUT */,
                          struct sim_err *err /* OUT */);
void sim_gemm_table_free(sim_gemm_table *t);

#endif
