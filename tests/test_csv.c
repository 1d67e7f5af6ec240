/*
 * test_csv.c - the strict CSV reader (sim/io/csv.c) and the kernel-table
 * loaders (sim/io/kernel_tables.c) on the hand-made files of
 * tests/data/kernels: plain, CRLF and gzip input, every malformed-input error
 * with its file and line, and the table filters and shapes.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "csv.h"
#include "kernel_tables.h"
#include "model_json.h"

static char path_buf[4096];

static const char *data(const char *rel)
{
    snprintf(path_buf, sizeof(path_buf), "%s/kernels/%s", SIM_TEST_DATA, rel);
    return path_buf;
}

/* Reads every row of a file whose layout is a,b,c / 1,2.5,x / 3,-4e-3,y. */
static void reads_three_column_table(const char *rel)
{
    sim_csv *c = NULL;
    struct sim_err err = {{0}};
    int has = 0, a = -1, b = -1;
    CHECK_INT(sim_csv_open(data(rel), &c, &err), SIM_OK);
    if (!c) {
        printf("  (%s: %s)\n", rel, err.msg);
        return;
    }
    CHECK_INT(sim_csv_n_columns(c), 3);
    CHECK_INT(sim_csv_require(c, "a", &a, &err), SIM_OK);
    CHECK_INT(sim_csv_require(c, "b", &b, &err), SIM_OK);
    CHECK_INT(sim_csv_column(c, "c"), 2);
    CHECK_INT(sim_csv_next(c, &has, &err), SIM_OK);
    CHECK_INT(has, 1);
    CHECK_INT(sim_csv_line(c), 2);
    int64_t i = 0;
    double d = 0.0;
    CHECK_INT(sim_csv_i64(c, a, 0, 10, &i, &err), SIM_OK);
    CHECK_INT(i, 1);
    CHECK_INT(sim_csv_double(c, b, -1.0, 10.0, &d, &err), SIM_OK);
    CHECK_REL(d, 2.5, 0.0);
    CHECK_STR(sim_csv_field(c, 2), "x");
    CHECK_INT(sim_csv_next(c, &has, &err), SIM_OK);
    CHECK_INT(has, 1);
    CHECK_INT(sim_csv_double(c, b, -1.0, 10.0, &d, &err), SIM_OK);
    CHECK_REL(d, -4e-3, 0.0);
    CHECK_STR(sim_csv_field(c, 2), "y"); /* no "\r" left from CRLF, no "\n" */
    CHECK_INT(sim_csv_next(c, &has, &err), SIM_OK);
    CHECK_INT(has, 0);
    CHECK_INT(sim_csv_next(c, &has, &err), SIM_OK); /* stays at the end */
    CHECK_INT(has, 0);
    sim_csv_free(c);
}

/* Opens rel and reads rows until an error; returns that status with its message in err. */
static sim_status read_all(const char *rel, struct sim_err *err)
{
    sim_csv *c = NULL;
    sim_status st = sim_csv_open(data(rel), &c, err);
    int has = 1;
    while (st == SIM_OK && has)
        st = sim_csv_next(c, &has, err);
    sim_csv_free(c);
    return st;
}

static void malformed_files_fail_with_file_and_line(void)
{
    static const struct {
        const char *name, *file;
        sim_status want;
        const char *msg;
    } cases[] = {
        {"short_row_is_an_error", "csv/short_row.csv", SIM_EPARSE,
         "short_row.csv:3: 2 fields (expected 3 as in the header)"},
        {"empty_line_is_an_error", "csv/empty_line.csv", SIM_EPARSE,
         "empty_line.csv:3: empty line (expected 3 fields)"},
        {"empty_file_has_no_header", "csv/empty.csv", SIM_EPARSE,
         "empty.csv:1: empty file (expected a header line of column names)"},
        {"duplicate_column_is_an_error", "csv/dup_column.csv", SIM_EPARSE,
         "dup_column.csv:1: a: duplicate column (columns 1 and 3)"},
        {"quotes_are_rejected", "csv/quoted.csv", SIM_EPARSE,
         "quoted.csv:2: quoted fields are not supported"},
        {"truncated_gzip_is_not_a_short_table", "csv/truncated.csv.gz", SIM_EIO,
         "truncated.csv.gz:3: read error: unexpected end of file"},
        {"missing_file_cannot_open", "csv/no_such_file.csv", SIM_EIO,
         "no_such_file.csv: cannot open: No such file or directory"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sim_err err = {{0}};
        sim_status st = read_all(cases[i].file, &err);
        if (st != cases[i].want)
            printf("  case %s:\n", cases[i].name);
        CHECK_INT(st, cases[i].want);
        CHECK_CONTAINS(err.msg, cases[i].msg);
    }
}

static void numbers_are_parsed_strictly(void)
{
    sim_csv *c = NULL;
    struct sim_err err = {{0}};
    int has = 0;
    double d;
    int64_t i;
    CHECK_INT(sim_csv_open(data("csv/bad_numbers.csv"), &c, &err), SIM_OK);
    if (!c)
        return;
    static const char *const want[] = {
        "bad_numbers.csv:2: b: not a number (expected a finite decimal number, got 'nan')",
        "bad_numbers.csv:3: b: not a number (expected a finite decimal number, got ' 2')",
        "bad_numbers.csv:4: b: not a number (expected a finite decimal number, got '2.5x')",
        "bad_numbers.csv:5: b: not a number (expected a finite decimal number, got '1e999')",
    };
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        CHECK_INT(sim_csv_next(c, &has, &err), SIM_OK);
        CHECK_INT(sim_csv_double(c, 1, -1e300, 1e300, &d, &err), SIM_EPARSE);
        CHECK_STR(strstr(err.msg, "bad_numbers.csv"), want[k]);
    }
    CHECK_INT(sim_csv_next(c, &has, &err), SIM_OK);
    CHECK_INT(sim_csv_i64(c, 0, 0, INT64_MAX, &i, &err), SIM_EPARSE);
    CHECK_CONTAINS(err.msg, "bad_numbers.csv:6: a: not an integer (expected a decimal integer, "
                            "got '9223372036854775808')");
    CHECK_INT(sim_csv_double(c, 1, 3.0, 4.0, &d, &err), SIM_EPARSE);
    CHECK_CONTAINS(err.msg, "bad_numbers.csv:6: b: out of range (expected 3 to 4, got '2')");
    CHECK_INT(sim_csv_i64(c, 2, 4, 9, &i, &err), SIM_EPARSE);
    CHECK_CONTAINS(err.msg, "bad_numbers.csv:6: c: out of range (expected 4 to 9, got '3')");
    CHECK_INT(sim_csv_require(c, "latency", &has, &err), SIM_EPARSE);
    CHECK_CONTAINS(err.msg, "bad_numbers.csv:1: latency: missing column");
    sim_csv_free(c);
}

static void unnamed_columns_may_repeat_but_not_be_looked_up(void)
{
    sim_csv *c = NULL;
    struct sim_err err = {{0}};
    CHECK_INT(sim_csv_open(data("csv/unnamed_index.csv"), &c, &err), SIM_OK);
    if (!c)
        return;
    CHECK_INT(sim_csv_column(c, ""), -1);
    CHECK_INT(sim_csv_column(c, "x"), 1);
    CHECK_STR(sim_csv_column_name(c, 2), "y");
    sim_csv_free(c);
}

/*
 * Loads the H100 aic table rel of kind t (gpu: the GPU index the samples get) into set,
 * checking that it loads, that the set then holds want_n samples and that the loader reports
 * want_skipped rows skipped; returns whether the count matches.
 */
static int load_h100_aic(const char *rel, sim_aic_table t, int gpu, sim_kset *set, size_t want_n,
                         size_t want_skipped)
{
    struct sim_err err = {{0}};
    size_t skipped = 99; /* the loader must set it */
    CHECK_INT(
        sim_kset_load_aic(data(rel), t, "NVIDIA H100 80GB HBM3", NULL, gpu, set, &skipped, &err),
        SIM_OK);
    CHECK_INT(set->n, want_n);
    CHECK_INT(skipped, want_skipped);
    return set->n == want_n;
}

/* aic gemm_perf: bf16, per-tensor fp8 and fp8_block kept (each its family and GEMM kind),
 * a weight-only int4 row counted as skipped. */
static void aic_gemm_rows_become_samples(void)
{
    sim_kset set;
    sim_kset_init(&set);
    if (load_h100_aic("aic/h100_sxm/gemm_perf.csv", SIM_AIC_GEMM, 1, &set, 5, 1)) {
        const sim_ksample *s = &set.v[0];
        CHECK_INT(s->src, SIM_KSRC_AIC_GEMM);
        CHECK_INT(sim_ksrc_family(s->src), SIM_KFAM_GEMM);
        CHECK_INT(s->gpu, 1);
        CHECK_INT(s->dtype, SIM_DTYPE_BF16);
        CHECK_REL(s->m, 1.0, 0.0);
        CHECK_REL(s->n, 12288.0, 0.0);
        CHECK_REL(s->k, 4096.0, 0.0);
        CHECK_REL(s->tokens, 1.0, 0.0);
        CHECK_REL(s->measured_s, 0.0217e-3, 1e-15);
        CHECK_INT(s->line, 2);
        CHECK_INT(set.v[3].src, SIM_KSRC_AIC_GEMM_FP8);
        CHECK_INT(set.v[3].dtype, SIM_DTYPE_FP8);
        CHECK_STR(sim_kfam_name(sim_ksrc_family(set.v[3].src)), "gemm_fp8");
        CHECK_INT(set.v[3].gemm_kind, SIM_GEMM_KIND_FP8);
        CHECK_INT(set.v[4].src, SIM_KSRC_AIC_GEMM_FP8_BLOCK);
        CHECK_INT(set.v[4].gemm_kind, SIM_GEMM_KIND_FP8_BLOCK);
        CHECK_STR(sim_kfam_name(sim_ksrc_family(set.v[4].src)), "gemm_fp8_block");
        CHECK_REL(set.v[4].measured_s, 0.1100e-3, 1e-15);
    }
    sim_kset_free(&set);
    CHECK_INT(set.n, 0);
}

/* Decode from a .csv.gz: ctx = step + 1, fp8 KV kept apart (family attn_decode_fp8kv, 1 byte
 * per KV element), sliding windows skipped. */
static void aic_attention_rows_follow_the_filters(void)
{
    sim_kset set;
    sim_kset_init(&set);
    if (load_h100_aic("aic/h100_sxm/generation_attention_perf.csv.gz", SIM_AIC_DECODE, 0, &set, 3,
                      1)) {
        CHECK_INT(set.v[2].src, SIM_KSRC_AIC_DECODE_FP8KV);
        CHECK_REL(set.v[2].kv_bytes, 1.0, 0.0);
        CHECK_REL(set.v[1].kv_bytes, 2.0, 0.0);
        CHECK_INT(set.v[0].src, SIM_KSRC_AIC_DECODE);
        CHECK_REL(set.v[0].ctx, 1024.0, 0.0);
        CHECK_REL(set.v[1].batch, 64.0, 0.0);
        CHECK_REL(set.v[1].tokens, 64.0, 0.0);
        CHECK_REL(set.v[1].heads, 32.0, 0.0);
        CHECK_REL(set.v[1].kv_heads, 8.0, 0.0);
        CHECK_REL(set.v[1].head_dim, 128.0, 0.0);
    }
    /* Appended after the decode samples; FlashAttention 4 skipped. */
    if (load_h100_aic("aic/h100_sxm/context_attention_perf.csv", SIM_AIC_PREFILL, 0, &set, 5, 1)) {
        CHECK_INT(set.v[3].src, SIM_KSRC_AIC_PREFILL);
        CHECK_REL(set.v[3].ctx, 4096.0, 0.0);
        CHECK_REL(set.v[4].tokens, 8.0 * 512.0, 0.0);
    }
    sim_kset_free(&set);
}

static void allreduce_rows_count_bytes_and_skip_other_kinds(void)
{
    sim_kset set;
    struct sim_err err = {{0}};
    size_t skipped = 0;
    sim_kset_init(&set);
    /* The eager row is skipped. */
    if (load_h100_aic("aic/h100_sxm/custom_allreduce_perf.csv", SIM_AIC_CUSTOM_AR, 0, &set, 2, 1)) {
        CHECK_INT(set.v[0].n_gpus, 2);
        CHECK_REL(set.v[0].bytes, 8192.0, 0.0); /* 4096 bf16 elements */
        CHECK_REL(set.v[0].tokens, 0.5, 0.0);   /* 8192 B / (2 x 8192) */
        CHECK_REL(set.v[1].measured_s, 0.095e-3, 1e-15);
    }
    CHECK_INT(sim_kset_load_vidur_allreduce(data("vidur/network/h100_dgx/all_reduce.csv"), 0, &set,
                                            &skipped, &err),
              SIM_OK);
    CHECK_INT(set.n, 4); /* the 16-GPU, two-node row is skipped */
    CHECK_INT(skipped, 1);
    if (set.n == 4) {
        CHECK_INT(set.v[3].src, SIM_KSRC_VIDUR_AR);
        CHECK_INT(set.v[3].n_gpus, 4);
        CHECK_REL(set.v[3].bytes, 16777216.0, 0.0);
        CHECK_REL(set.v[3].measured_s, 0.152e-3, 1e-15);
    }
    sim_kset_free(&set);
}

/* Llama-2-7B: d 4096, 32 heads of 128, F 11008; row 2 is TP 2 at 8 tokens. */
static void vidur_rows_take_shapes_from_the_model(void)
{
    char mpath[4096];
    sim_model m;
    sim_kset set;
    struct sim_err err = {{0}};
    size_t skipped = 0;
    snprintf(mpath, sizeof(mpath), "%s/models/llama-2-7b.json", SIM_SOURCE_DIR);
    CHECK_INT(sim_model_load(mpath, "llama-2-7b", &m, &err), SIM_OK);
    sim_kset_init(&set);
    CHECK_INT(sim_kset_load_vidur_mlp(data("vidur/compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv"),
                                      &m, 0, &set, &skipped, &err),
              SIM_OK);
    CHECK_INT(set.n, 8);
    static const struct {
        sim_ksrc src;
        double m, n, k, t_ms;
    } want[8] = {
        {SIM_KSRC_VIDUR_QKV, 4096, 12288, 4096, 0.584},
        {SIM_KSRC_VIDUR_O, 4096, 4096, 4096, 0.193},
        {SIM_KSRC_VIDUR_UP, 4096, 22016, 4096, 0.987},
        {SIM_KSRC_VIDUR_DOWN, 4096, 4096, 11008, 0.441},
        {SIM_KSRC_VIDUR_QKV, 8, 6144, 4096, 0.027},
        {SIM_KSRC_VIDUR_O, 8, 4096, 2048, 0.012},
        {SIM_KSRC_VIDUR_UP, 8, 11008, 4096, 0.035},
        {SIM_KSRC_VIDUR_DOWN, 8, 4096, 5504, 0.019},
    };
    for (size_t i = 0; i < set.n && i < 8; i++) {
        CHECK_INT(set.v[i].src, want[i].src);
        CHECK_REL(set.v[i].m, want[i].m, 0.0);
        CHECK_REL(set.v[i].n, want[i].n, 0.0);
        CHECK_REL(set.v[i].k, want[i].k, 0.0);
        CHECK_REL(set.v[i].measured_s, want[i].t_ms * 1e-3, 1e-15);
    }
    sim_kset_free(&set);

    CHECK_INT(
        sim_kset_load_vidur_mlp(data("csv/vidur_wrong_model.csv"), &m, 0, &set, &skipped, &err),
        SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "vidur_wrong_model.csv:2: n_head: 64 does not match the model config "
                            "(num_attention_heads = 32)");
    sim_kset_free(&set);
}

/*
 * moe_perf: the Triton fused_experts rows in bf16 and fp8, expert parallel 1; the routing
 * rebuilt from the collector's generator (hand derivations in the comments).
 */
static void aic_moe_rows_rebuild_the_routing(void)
{
    sim_kset set;
    sim_kset_init(&set);
    /* The Marlin int4 row, the expert-parallel row and the MXFP4 row of an unnamed backend
     * (vllm_mxfp4_moe) are outside the filters; block fp8, the named Marlin MXFP4 kernel and
     * FlashInfer's NVFP4 one are kept, each its class. */
    if (load_h100_aic("moe/moe_perf.csv", SIM_AIC_MOE, 0, &set, 6, 3)) {
        /* Balanced, 4 tokens x top-2 over 8 experts, stride ceil(8/2) = 4 <= 4 tokens: slot 0
         * sends token t to expert t, slot 1 to 4 + t; 8 experts with one row each, each padded
         * to BLOCK_SIZE_M 16 (4 tokens <= 8 experts): 128 rows. F per GPU 14336 / 8 = 1792. */
        const sim_ksample *s = &set.v[0];
        CHECK_INT(s->src, SIM_KSRC_AIC_MOE_BAL);
        CHECK_STR(sim_kfam_name(sim_ksrc_family(s->src)), "moe");
        CHECK_REL(s->touched, 8.0, 0.0);
        CHECK_REL(s->rows_padded, 128.0, 0.0);
        CHECK_REL(s->n, 1792.0, 0.0);
        CHECK_REL(s->k, 4096.0, 0.0);
        CHECK_INT(s->n_gpus, 8);
        CHECK_REL(s->measured_s, 0.25e-3, 1e-15);
        /* 2 tokens < stride 4: token t, slot j -> t x 4 / 2 + 4 j = {0, 4}, {2, 6}: 4 experts. */
        CHECK_REL(set.v[1].touched, 4.0, 0.0);
        CHECK_REL(set.v[1].rows_padded, 64.0, 0.0);
        /* Power law 1.2, 100 tokens x top-1 over 4 experts (100 > 4: weights on [1, 80]):
         * x = (1 - (1 - 80^-0.2) u)^-5 at u = 1/8, 3/8, 5/8, 7/8 = 1.4606, 3.4392, 9.6727,
         * 35.670 (sum 50.243); x / sum x 100 rows = 2.907, 6.845, 19.252, 70.996 -> 3, 7, 19,
         * 71 (sum 100, no correction); BLOCK_SIZE_M 64 (100 tokens > 4 experts): 64 + 64 + 64
         * + 128 = 320 padded rows, 4 touched. */
        s = &set.v[2];
        CHECK_INT(s->src, SIM_KSRC_AIC_MOE_FP8_PL);
        CHECK_INT(s->dtype, SIM_DTYPE_FP8);
        CHECK_REL(s->alpha, 1.2, 0.0);
        CHECK_REL(s->touched, 4.0, 0.0);
        CHECK_REL(s->rows_padded, 320.0, 0.0);
        int64_t counts[4];
        double w[4], padded;
        CHECK_INT(sim_moe_routing_counts(100, 4, 1, 1.2, 64.0, counts, w, &padded), 4);
        CHECK_INT(counts[0], 3);
        CHECK_INT(counts[1], 7);
        CHECK_INT(counts[2], 19);
        CHECK_INT(counts[3], 71);
        CHECK_INT(set.v[3].src, SIM_KSRC_AIC_MOE_FP8B_BAL);
        CHECK_INT(set.v[3].moe_cls, SIM_MOE_CLASS_FP8_BLOCK);
        CHECK_STR(sim_kfam_name(sim_ksrc_family(set.v[3].src)), "moe_fp8_block");
        CHECK_INT(set.v[4].moe_cls, SIM_MOE_CLASS_MXFP4);
        CHECK_STR(sim_kfam_name(sim_ksrc_family(set.v[4].src)), "moe_mxfp4");
        /* 4 tokens x top-4 over 128 experts: stride 32 > 4 tokens, 16 distinct experts. */
        CHECK_REL(set.v[4].touched, 16.0, 0.0);
        CHECK_INT(set.v[5].moe_cls, SIM_MOE_CLASS_NVFP4);
        /* The shape's weight bytes per class: 3 x 2880 x 2880 x 0.53125 (MXFP4). */
        sim_moe_shape sh;
        sim_ksample_moe_shape(&set.v[4], &sh);
        CHECK_REL(sh.weight_bytes, 3.0 * 2880.0 * 2880.0 * 0.53125, 1e-15);
    }
    sim_kset_free(&set);
    struct sim_err err = {{0}};
    size_t skipped = 0;
    CHECK_INT(sim_kset_load_aic(data("moe/moe_bad_distribution.csv"), SIM_AIC_MOE,
                                "NVIDIA H100 80GB HBM3", NULL, 0, &set, &skipped, &err),
              SIM_EPARSE);
    CHECK_CONTAINS(err.msg, "moe_bad_distribution.csv:2: distribution: expected balanced or "
                            "power_law_<alpha>, got 'zipf'");
    sim_kset_free(&set);
}

static void table_errors_name_file_and_line(void)
{
    static const struct {
        const char *name, *file;
        const char *msg;
    } cases[] = {
        {"table_of_another_gpu", "csv/gemm_other_device.csv",
         "gemm_other_device.csv:2: device: table of another GPU (expected 'NVIDIA H100 80GB "
         "HBM3', got 'NVIDIA A100-SXM4-80GB')"},
        {"missing_latency_column", "csv/gemm_missing_latency.csv",
         "gemm_missing_latency.csv:1: latency: missing column"},
        {"zero_latency_out_of_range", "csv/gemm_zero_latency.csv",
         "gemm_zero_latency.csv:2: latency: out of range"},
        {"bad_number_in_a_table", "bad-tree/aic/h100_sxm/gemm_perf.csv",
         "gemm_perf.csv:3: latency: not a number (expected a finite decimal number, got 'fast')"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_kset set;
        struct sim_err err = {{0}};
        size_t skipped = 0;
        sim_kset_init(&set);
        sim_status st = sim_kset_load_aic(data(cases[i].file), SIM_AIC_GEMM,
                                          "NVIDIA H100 80GB HBM3", NULL, 0, &set, &skipped, &err);
        if (st != SIM_EPARSE)
            printf("  case %s:\n", cases[i].name);
        CHECK_INT(st, SIM_EPARSE);
        CHECK_CONTAINS(err.msg, cases[i].msg);
        sim_kset_free(&set);
    }
}

int main(void)
{
    reads_three_column_table("csv/crlf.csv");
    reads_three_column_table("csv/no_final_newline.csv");
    reads_three_column_table("csv/ok.csv.gz");
    malformed_files_fail_with_file_and_line();
    numbers_are_parsed_strictly();
    unnamed_columns_may_repeat_but_not_be_looked_up();
    aic_gemm_rows_become_samples();
    aic_attention_rows_follow_the_filters();
    allreduce_rows_count_bytes_and_skip_other_kinds();
    aic_moe_rows_rebuild_the_routing();
    vidur_rows_take_shapes_from_the_model();
    table_errors_name_file_and_line();
    return check_report("test_csv");
}
