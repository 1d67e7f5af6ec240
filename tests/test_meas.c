/*
 * test_meas.c - the measurement loader reads the documented format
 * (../shared/MEASUREMENTS.md) exactly, rejects every kind of bad row with
 * file:line:col and the field, and --select/--exclude compare as the field's type.
 * Oracles: the example rows of MEASUREMENTS.md, hand-counted columns of the bad
 * files in tests/data/meas/, and the row counts of ../shared/data's README.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "meas_json.h"
#include "meas_pred.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Writes the path of tests/data/meas/<file> into path (size bytes); returns path. */
static const char *meas_path(char *path, size_t size, const char *file)
{
    snprintf(path, size, "%s/meas/%s", SIM_TEST_DATA, file);
    return path;
}

static sim_status load(sim_meas_set *set, const char *file, struct sim_err *err)
{
    char path[1024];
    return sim_meas_load(meas_path(path, sizeof(path), file), set, err);
}

/* Loads path into set, checking that it loads and that the set then holds want_n rows;
 * returns whether it does. */
static int load_checked(sim_meas_set *set, const char *path, size_t want_n)
{
    struct sim_err err = {{0}};
    sim_status st = sim_meas_load(path, set, &err);
    if (st != SIM_OK)
        printf("%s\n", err.msg);
    CHECK_INT(st, SIM_OK);
    CHECK_INT(set->n, want_n);
    return set->n == want_n;
}

static void sched_is_unset(const sim_sched_cfg *s)
{
    CHECK_INT(s->max_num_seqs, -1);
    CHECK_INT(s->max_num_batched_tokens, -1);
    CHECK_INT(s->max_model_len, -1);
    CHECK_INT(s->block_size, -1);
    CHECK_REL(s->gpu_memory_utilization, -1.0, 0.0);
    CHECK_INT(s->enable_chunked_prefill, -1);
    CHECK_INT(s->enforce_eager, -1);
}

/* The two rows of MEASUREMENTS.md, after a comment and a blank line (rows on lines 3, 4). */
static void documented_example_loads_with_defaults(void)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    char path[1024];
    if (!load_checked(&set, meas_path(path, sizeof(path), "example.jsonl"), 2))
        goto cleanup;

    const sim_meas_row *a = &set.rows[0];
    CHECK_STR(a->id, "h100-l2-7b-b16");
    CHECK_STR(a->source, "my lab, 2026-11-02");
    CHECK_STR(a->hardware, "h100-sxm");
    CHECK_STR(a->model, "llama-2-7b");
    CHECK_INT(a->tp, 1);
    CHECK_INT(a->dtype, SIM_DTYPE_FP16);
    CHECK_INT(a->kv_dtype, SIM_DTYPE_FP16); /* defaults to dtype */
    CHECK_STR(a->engine, "");
    CHECK_STR(a->engine_version, "");
    CHECK_INT(a->kind, SIM_MEAS_OFFLINE_BATCH);
    CHECK_REL(a->measured_s, 13.17, 0.0);
    CHECK_INT(a->batch, 16);
    CHECK_INT(a->prompt_tokens, 1024);
    CHECK_INT(a->output_tokens, 1024);
    CHECK_INT(a->context_tokens, -1);
    CHECK_INT(a->n_groups, 0);
    sched_is_unset(&a->sched);
    CHECK_CONTAINS(a->file, "meas/example.jsonl");
    CHECK_INT(a->line, 3);

    const sim_meas_row *d = &set.rows[1];
    CHECK_STR(d->id, "h100-l2-7b-dec");
    CHECK_STR(d->source, "my lab");
    CHECK_STR(d->hardware, "h100-sxm");
    CHECK_STR(d->model, "llama-2-7b");
    CHECK_INT(d->tp, 2);
    CHECK_INT(d->dtype, SIM_DTYPE_BF16);    /* documented default */
    CHECK_INT(d->kv_dtype, SIM_DTYPE_BF16); /* = dtype */
    CHECK_INT(d->kind, SIM_MEAS_DECODE);
    CHECK_REL(d->measured_s, 0.0113, 0.0);
    CHECK_INT(d->batch, 32);
    CHECK_INT(d->prompt_tokens, -1);
    CHECK_INT(d->output_tokens, -1);
    CHECK_INT(d->context_tokens, 2048);
    /* A decode step is one group: 32 sequences, 1 new token each, 2048 cached, sampling. */
    CHECK_INT(d->n_groups, 1);
    CHECK_INT(d->groups[0].count, 32);
    CHECK_INT(d->groups[0].new_tokens, 1);
    CHECK_INT(d->groups[0].context_tokens, 2048);
    CHECK_INT(d->groups[0].emits, 1);
    sched_is_unset(&d->sched);
    CHECK_INT(d->line, 4);
cleanup:
    sim_meas_set_free(&set);
}

/* mixed.jsonl: prefill (line 2), blank-ish line, step with CRLF (line 4), '#', offline (line 6,
 * no final newline). */
static void step_prefill_and_scheduler_rows_load(void)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    char path[1024];
    if (!load_checked(&set, meas_path(path, sizeof(path), "mixed.jsonl"), 3))
        goto cleanup;

    const sim_meas_row *p = &set.rows[0];
    CHECK_STR(p->id, "pre-1");
    CHECK_INT(p->line, 2);
    CHECK_INT(p->tp, 4);
    CHECK_INT(p->dtype, SIM_DTYPE_BF16);
    CHECK_INT(p->kv_dtype, SIM_DTYPE_FP8);
    CHECK_STR(p->engine, "vllm");
    CHECK_STR(p->engine_version, "0.6.1");
    CHECK_INT(p->kind, SIM_MEAS_PREFILL);
    CHECK_REL(p->measured_s, 0.4172, 0.0);
    /* A prefill step is one group of 3 prompts of 2385 tokens with nothing cached. */
    CHECK_INT(p->n_groups, 1);
    CHECK_INT(p->groups[0].count, 3);
    CHECK_INT(p->groups[0].new_tokens, 2385);
    CHECK_INT(p->groups[0].context_tokens, 0);
    CHECK_INT(p->groups[0].emits, 1);

    const sim_meas_row *s = &set.rows[1];
    CHECK_STR(s->id, "step-mixed");
    CHECK_INT(s->line, 4);
    CHECK_INT(s->kind, SIM_MEAS_STEP);
    CHECK_INT(s->batch, -1);
    CHECK_INT(s->prompt_tokens, -1);
    CHECK_INT(s->context_tokens, -1);
    CHECK_REL(s->measured_s, 0.0519, 0.0);
    static const sim_group want[] = {{7, 1, 913, 1}, {1, 512, 1536, 1}, {2, 333, 0, 1}};
    CHECK_INT(s->n_groups, 3);
    for (int i = 0; i < s->n_groups && i < 3; i++) {
        CHECK_INT(s->groups[i].count, want[i].count);
        CHECK_INT(s->groups[i].new_tokens, want[i].new_tokens);
        CHECK_INT(s->groups[i].context_tokens, want[i].context_tokens);
        CHECK_INT(s->groups[i].emits, want[i].emits); /* the chunk {1, 512, 1536} too */
    }
    sched_is_unset(&s->sched);

    const sim_meas_row *o = &set.rows[2];
    CHECK_STR(o->id, "off-sched");
    CHECK_INT(o->line, 6);
    CHECK_INT(o->dtype, SIM_DTYPE_FP8);
    CHECK_INT(o->kv_dtype, SIM_DTYPE_FP8);
    CHECK_INT(o->kind, SIM_MEAS_OFFLINE_BATCH);
    CHECK_INT(o->batch, 64);
    CHECK_INT(o->prompt_tokens, 2048);
    CHECK_INT(o->output_tokens, 129);
    CHECK_REL(o->measured_s, 41.25, 0.0);
    CHECK_INT(o->sched.max_num_seqs, 48);
    CHECK_INT(o->sched.max_num_batched_tokens, 8192);
    CHECK_INT(o->sched.max_model_len, 4096);
    CHECK_REL(o->sched.gpu_memory_utilization, 0.85, 0.0);
    CHECK_INT(o->sched.block_size, 32);
    CHECK_INT(o->sched.enable_chunked_prefill, 1);
    CHECK_INT(o->sched.enforce_eager, 0);
cleanup:
    sim_meas_set_free(&set);
}

/*
 * Each bad file has good rows before the bad one; the message must give the
 * file's line (not the line within the row) and the column of the field, and
 * the set must keep only what it had before the call (here: nothing).
 */
/* Serving rows: the three workload forms, metrics, selection by metric and concurrency. */
static void serving_rows_load(void)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    char path[1024];
    if (load_checked(&set, meas_path(path, sizeof(path), "serving.jsonl"), 3)) {
        const sim_meas_row *c = &set.rows[0], *p = &set.rows[1], *t = &set.rows[2];
        CHECK_INT(c->kind, SIM_MEAS_SERVING);
        CHECK_INT(c->metric, SIM_METRIC_TTFT_MEAN);
        CHECK_INT(c->workload.arrival, SIM_ARRIVAL_CLOSED);
        CHECK_INT(c->workload.concurrency, 64);
        CHECK_INT(c->concurrency, 64);
        CHECK_INT(c->prompt_tokens, 1024);
        CHECK_INT(c->workload.warmup_requests, -1);
        CHECK_INT(p->metric, SIM_METRIC_E2E_P90);
        CHECK_INT(p->workload.arrival, SIM_ARRIVAL_POISSON);
        CHECK_REL(p->workload.rate_per_s, 5.5, 0.0);
        CHECK_REL(p->workload.burstiness, 0.5, 0.0);
        CHECK_INT(p->workload.num_requests, 200);
        CHECK_INT(p->concurrency, -1);
        CHECK_INT(p->sched.max_num_batched_tokens, 2048);
        CHECK_INT(t->workload.arrival, SIM_ARRIVAL_TRACE);
        CHECK_CONTAINS(t->trace, "tests/data/meas/../trace/good.jsonl");
        CHECK_INT(t->metric, SIM_METRIC_TPOT_P99);
        sim_meas_filter f[2];
        CHECK_INT(sim_meas_filter_parse("metric=tpot_p99", &f[0], &err), SIM_OK);
        CHECK_INT(sim_meas_filter_parse("concurrency=64", &f[1], &err), SIM_OK);
        CHECK_INT(sim_meas_filter_match(&f[0], t), 1);
        CHECK_INT(sim_meas_filter_match(&f[0], c), 0);
        CHECK_INT(sim_meas_filter_match(&f[1], c), 1);
        CHECK_INT(sim_meas_filter_match(&f[1], p), 0);
        CHECK_INT(sim_meas_filter_parse("metric=ttft_p95", &f[0], &err), SIM_EINVAL);
    }
    sim_meas_set_free(&set);
}

/* A relative model path in a row is relative to the measurement file's folder
 * (MEASUREMENTS.md, "model"), as a trace is; an id stays an id; --select model= matches what
 * the row wrote. */
static void model_paths_resolve_against_the_file(void)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    char path[1024];
    if (load_checked(&set, meas_path(path, sizeof(path), "model_path.jsonl"), 2)) {
        const sim_meas_row *r = &set.rows[0], *i = &set.rows[1];
        CHECK_CONTAINS(r->model, "tests/data/meas/../quant/ct_nvfp4.json");
        CHECK_STR(r->model_arg, "../quant/ct_nvfp4.json");
        CHECK_STR(i->model, "llama-2-7b");
        sim_meas_filter f;
        CHECK_INT(sim_meas_filter_parse("model=../quant/ct_nvfp4.json", &f, &err), SIM_OK);
        CHECK_INT(sim_meas_filter_match(&f, r), 1);
        CHECK_INT(sim_meas_filter_match(&f, i), 0);
    }
    sim_meas_set_free(&set);
}

static void bad_rows_are_rejected_with_file_line_and_field(void)
{
    static const struct {
        const char *name;
        const char *file;
        sim_status want;
        const char *msg; /* location, field and problem */
    } cases[] = {
        {"serving: unknown metric", "bad_metric.jsonl", SIM_EINVAL,
         "bad_metric.jsonl:1:90: metric: unknown metric"},
        {"serving: workload missing", "bad_no_workload.jsonl", SIM_EINVAL,
         "bad_no_workload.jsonl:1:1: workload: required field missing"},
        {"serving: trace with other fields", "bad_trace_extra.jsonl", SIM_EINVAL,
         "concurrency: not allowed with a trace"},
        {"serving: closed loop without concurrency", "bad_closed_conc.jsonl", SIM_EINVAL,
         "bad_closed_conc.jsonl:1:"},
        {"serving: poisson without num_requests", "bad_poisson_n.jsonl", SIM_EINVAL,
         "workload.num_requests: required field missing"},
        {"serving: field of another kind", "bad_serving_batch.jsonl", SIM_EINVAL,
         "batch: not allowed for kind 'serving'"},
        {"unknown field, did you mean", "bad_unknown_field.jsonl", SIM_EINVAL,
         "bad_unknown_field.jsonl:4:141: promt_tokens: unknown key (did you mean "
         "'prompt_tokens'?)"},
        {"wrong type", "bad_wrong_type.jsonl", SIM_EINVAL,
         "bad_wrong_type.jsonl:3:79: tp: wrong type (expected an integer, got a string)"},
        {"missing required", "bad_missing_required.jsonl", SIM_EINVAL,
         "bad_missing_required.jsonl:4:1: source: required field missing"},
        {"duplicate id in one file", "bad_dup_id.jsonl", SIM_EINVAL,
         "bad_dup_id.jsonl:5:2: id: duplicate id (expected unique ids, got 'r2', first at "},
        {"kind-specific field missing", "bad_kind_missing.jsonl", SIM_EINVAL,
         "bad_kind_missing.jsonl:3:1: context_tokens: required field missing"},
        {"field of another kind", "bad_not_allowed.jsonl", SIM_EINVAL,
         "bad_not_allowed.jsonl:4:163: groups: not allowed for kind 'decode' (expected the "
         "common fields and batch, context_tokens)"},
        {"bad dtype", "bad_dtype.jsonl", SIM_EINVAL,
         "bad_dtype.jsonl:3:180: kv_dtype: unsupported dtype (expected fp16, bf16 or fp8, got "
         "'int8')"},
        {"measured_s zero", "bad_measured.jsonl", SIM_EINVAL,
         "bad_measured.jsonl:5:141: measured_s: out of range (expected seconds from 1e-9 to "
         "3.2e7, got 0)"},
        {"measured_s negative", "bad_measured_neg.jsonl", SIM_EINVAL,
         "bad_measured_neg.jsonl:2:141: measured_s: out of range (expected seconds from 1e-9 to "
         "3.2e7, got -0.5)"},
        {"measured_s denormal (issue 10: MAPE was inf)", "bad_measured_tiny.jsonl", SIM_EINVAL,
         "bad_measured_tiny.jsonl:1:"},
        {"measured_s 1e308 (issue 10: R^2 was -nan)", "bad_measured_huge.jsonl", SIM_EINVAL,
         "bad_measured_huge.jsonl:1:"},
        {"malformed line", "bad_malformed.jsonl", SIM_EPARSE, "bad_malformed.jsonl:4:"},
        {"scheduler unknown key", "bad_sched_key.jsonl", SIM_EINVAL,
         "bad_sched_key.jsonl:3:205: scheduler.max_num_seq: unknown key (did you mean "
         "'max_num_seqs'?)"},
        {"gpu_memory_utilization above 1", "bad_gpu_util.jsonl", SIM_EINVAL,
         "bad_gpu_util.jsonl:4:223: scheduler.gpu_memory_utilization: out of range (expected 0 "
         "to 1, got 1.5)"},
        {"unknown kind", "bad_kind.jsonl", SIM_EINVAL,
         "bad_kind.jsonl:2:88: kind: unknown kind (expected prefill, decode, step, "
         "offline_batch or serving, got 'decoding')"},
        {"tp below 1", "bad_tp.jsonl", SIM_EINVAL, "bad_tp.jsonl:3:79: tp: out of range"},
        {"group field", "bad_group.jsonl", SIM_EINVAL,
         "bad_group.jsonl:2:204: groups[1].new_tokens: out of range"},
        {"not an object", "bad_not_object.jsonl", SIM_EINVAL,
         "bad_not_object.jsonl:3:1: top level: expected a JSON object"},
        {"two objects on a line", "bad_two_objects.jsonl", SIM_EPARSE, "bad_two_objects.jsonl:2:"},
        {"non-integer count", "bad_nonint.jsonl", SIM_EINVAL,
         "bad_nonint.jsonl:2:106: batch: not an integer (expected an integer, got 8.5)"},
        {"empty id", "bad_empty_id.jsonl", SIM_EINVAL, "bad_empty_id.jsonl:2:2: id: empty string"},
        {"missing file", "no_such_file.jsonl", SIM_EIO, "no_such_file.jsonl: cannot open"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        sim_meas_set set;
        sim_meas_set_init(&set);
        struct sim_err err = {{0}};
        sim_status st = load(&set, cases[i].file, &err);
        if (st != cases[i].want || !strstr(err.msg, cases[i].msg))
            printf("case '%s': status %d: %s\n", cases[i].name, (int)st, err.msg);
        CHECK_INT(st, cases[i].want);
        CHECK_CONTAINS(err.msg, cases[i].msg);
        CHECK_INT(set.n, 0);
        sim_meas_set_free(&set);
    }
    /* The first occurrence is named with its line. */
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    CHECK_INT(load(&set, "bad_dup_id.jsonl", &err), SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "bad_dup_id.jsonl:3)");
    sim_meas_set_free(&set);
}

/* An id already loaded from an earlier file is a duplicate too; the set keeps its rows. */
static void duplicate_id_across_files_is_rejected(void)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    CHECK_INT(load(&set, "example.jsonl", &err), SIM_OK);
    CHECK_INT(load(&set, "mixed.jsonl", &err), SIM_OK);
    CHECK_INT(set.n, 5);
    sim_status st = load(&set, "bad_dup_across.jsonl", &err);
    CHECK_INT(st, SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "bad_dup_across.jsonl:3:2: id: duplicate id (expected unique ids, "
                            "got 'h100-l2-7b-dec', first at ");
    CHECK_CONTAINS(err.msg, "example.jsonl:4)");
    /* Row r1 of the failed file (line 2) was rolled back; the earlier rows are intact. */
    CHECK_INT(set.n, 5);
    if (set.n == 5) {
        CHECK_STR(set.rows[0].id, "h100-l2-7b-b16");
        CHECK_STR(set.rows[4].id, "off-sched");
        CHECK_INT(set.rows[4].sched.max_num_seqs, 48);
    }
    /* Loading the same file twice duplicates every id. */
    st = load(&set, "example.jsonl", &err);
    CHECK_INT(st, SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "example.jsonl:3:2: id: duplicate id");
    CHECK_INT(set.n, 5);
    sim_meas_set_free(&set);
    CHECK_INT(set.n, 0);
    CHECK(set.rows == NULL);
    sim_meas_set_free(&set); /* an empty set frees again */
    sim_meas_set_free(NULL);
}

/*
 * Enough rows to grow the array several times (32, 64, ..., 512) and fill the id
 * index: 300 generated rows, written to the working directory and removed after.
 */
static void many_rows_grow_the_set(void)
{
    const char *path = "test_meas_grow.jsonl";
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    for (int i = 0; i < 300; i++)
        fprintf(f,
                "{\"id\":\"g%d\",\"source\":\"gen\",\"hardware\":\"h100-sxm\",\"model\":\"m\","
                "\"tp\":1,\"kind\":\"decode\",\"batch\":%d,\"context_tokens\":%d,"
                "\"measured_s\":0.01}\n",
                i, i + 1, 7 * i + 5);
    fclose(f);
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    CHECK_INT(load(&set, "example.jsonl", &err), SIM_OK);
    int loaded = load_checked(&set, path, 302);
    CHECK(set.cap >= set.n);
    if (loaded) {
        CHECK_STR(set.rows[2].id, "g0");
        CHECK_STR(set.rows[301].id, "g299");
        CHECK_INT(set.rows[301].line, 300);
        CHECK_INT(set.rows[301].groups[0].count, 300);
        CHECK_INT(set.rows[301].groups[0].context_tokens, 7 * 299 + 5);
    }
    /* A second load of the same file fails on its first row and keeps the 302. */
    sim_status st = sim_meas_load(path, &set, &err);
    CHECK_INT(st, SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "test_meas_grow.jsonl:1:2: id: duplicate id");
    CHECK_INT(set.n, 302);
    sim_meas_set_free(&set);
    remove(path);
}

static void filter_parse_errors_name_the_bad_part(void)
{
    static const struct {
        const char *spec;
        const char *msg;
    } cases[] = {
        {"tp1", "'tp1': no '=' (expected FIELD=VALUE"},
        {"tpp=1", "'tpp=1': unknown field 'tpp' (did you mean 'tp'?)"},
        {"colour=blue", "'colour=blue': unknown field 'colour' (expected one of id, source"},
        {"=1", "'=1': empty field name (expected FIELD=VALUE)"},
        {"tp=abc", "'tp=abc': tp: bad value (expected a non-negative integer, got 'abc')"},
        {"tp=1.0", "'tp=1.0': tp: bad value (expected a non-negative integer"},
        {"tp= 1", "'tp= 1': tp: bad value"},
        {"tp=-1", "'tp=-1': tp: bad value"},
        {"batch=99999999999999999999", "batch: bad value"},
        {"tp=", "'tp=': tp: bad value"},
        {"hardware=", "'hardware=': hardware: bad value (expected a non-empty string, got '')"},
        {"dtype=fp32", "'dtype=fp32': dtype: bad value (expected fp16, bf16 or fp8, got 'fp32')"},
        {"kind=prefil",
         "kind: bad value (expected prefill, decode, step, offline_batch or serving"},
        {"measured_s=nan", "measured_s: bad value (expected a finite number, got 'nan')"},
        {"measured_s=1e999", "measured_s: bad value"},
        {"measured_s=0.5s", "measured_s: bad value"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        sim_meas_filter f;
        struct sim_err err = {{0}};
        sim_status st = sim_meas_filter_parse(cases[i].spec, &f, &err);
        CHECK_INT(st, SIM_EINVAL);
        CHECK_CONTAINS(err.msg, cases[i].msg);
    }
    /* Only the first '=' splits: the value may contain '='. */
    sim_meas_filter f;
    struct sim_err err = {{0}};
    CHECK_INT(sim_meas_filter_parse("source=a=b", &f, &err), SIM_OK);
    CHECK_STR(f.field, "source");
    CHECK_STR(f.value, "a=b");
}

/* Loads example.jsonl and mixed.jsonl: rows b16, dec, pre-1, step-mixed, off-sched. */
static int load_five(sim_meas_set *set)
{
    struct sim_err err = {{0}};
    sim_meas_set_init(set);
    if (load(set, "example.jsonl", &err) != SIM_OK || load(set, "mixed.jsonl", &err) != SIM_OK) {
        printf("%s\n", err.msg);
        return 0;
    }
    return set->n == 5;
}

static sim_meas_filter filt(const char *spec)
{
    sim_meas_filter f;
    struct sim_err err = {{0}};
    if (sim_meas_filter_parse(spec, &f, &err) != SIM_OK) {
        printf("FAIL filter '%s': %s\n", spec, err.msg);
        check_fail_count++;
    }
    return f;
}

static void filters_compare_as_the_field_type(void)
{
    sim_meas_set set;
    if (!load_five(&set)) {
        CHECK(0);
        sim_meas_set_free(&set);
        return;
    }
    const sim_meas_row *b16 = &set.rows[0], *dec = &set.rows[1], *pre = &set.rows[2];
    const sim_meas_row *step = &set.rows[3], *off = &set.rows[4];
    static const struct {
        const char *spec;
        int row; /* 0..4 */
        int want;
    } cases[] = {
        {"tp=1", 0, 1},
        {"tp=01", 0, 1},
        {"tp=+1", 0, 1},
        {"tp=1", 1, 0},
        {"tp=2", 1, 1},
        {"batch=16", 0, 1},
        {"batch=016", 0, 1},
        {"batch=16", 3, 0}, /* step rows have no batch */
        {"context_tokens=2048", 1, 1},
        {"context_tokens=2048", 0, 0},
        {"prompt_tokens=2385", 2, 1},
        {"output_tokens=129", 4, 1},
        {"measured_s=0.0113", 1, 1},
        {"measured_s=1.13e-2", 1, 1},
        {"measured_s=0.01130", 1, 1},
        {"measured_s=0.0114", 1, 0},
        {"dtype=fp16", 0, 1},
        {"dtype=bf16", 1, 1}, /* the default counts */
        {"kv_dtype=fp8", 2, 1},
        {"kv_dtype=bf16", 2, 0},
        {"kind=decode", 1, 1},
        {"kind=step", 3, 1},
        {"kind=offline_batch", 4, 1},
        {"hardware=h100-sxm", 0, 1},
        {"hardware=H100-SXM", 0, 0},
        {"hardware=h100", 0, 0},
        {"model=llama-2-7b", 1, 1},
        {"engine=vllm", 2, 1},
        {"engine=vllm", 0, 0}, /* absent never matches */
        {"engine_version=0.6.1", 2, 1},
        {"id=step-mixed", 3, 1},
        {"source=my lab", 1, 1},
        {"source=my lab", 0, 0},
    };
    const sim_meas_row *rows[] = {b16, dec, pre, step, off};
    for (size_t i = 0; i < N(cases); i++) {
        sim_meas_filter f = filt(cases[i].spec);
        int got = sim_meas_filter_match(&f, rows[cases[i].row]);
        if (got != cases[i].want)
            printf("case '%s' on row %d\n", cases[i].spec, cases[i].row);
        CHECK_INT(got, cases[i].want);
    }
    /* A string field compares text: model=1 is not tp=1. */
    sim_meas_filter f = filt("model=1");
    CHECK_INT(sim_meas_filter_match(&f, b16), 0);
    /* Hand-built filters with an unknown field or a bad value never match. */
    sim_meas_filter hb = {"tpx", "1"};
    CHECK_INT(sim_meas_filter_match(&hb, b16), 0);
    sim_meas_filter hb2 = {"batch", "-1"};
    CHECK_INT(sim_meas_filter_match(&hb2, step), 0);
    sim_meas_set_free(&set);
}

static void select_ands_and_exclude_ors(void)
{
    static const struct {
        const char *name;
        const char *sel[3];
        const char *exc[3];
        size_t want;
        const char *first; /* id of the first kept row */
    } cases[] = {
        {"no filters keep all", {NULL}, {NULL}, 5, "h100-l2-7b-b16"},
        {"one select", {"hardware=h100-sxm"}, {NULL}, 4, "h100-l2-7b-b16"},
        {"selects all hold", {"hardware=h100-sxm", "tp=1"}, {NULL}, 2, "h100-l2-7b-b16"},
        {"selects all hold (3)",
         {"hardware=h100-sxm", "tp=1", "kind=step"},
         {NULL},
         1,
         "step-mixed"},
        {"one exclude", {NULL}, {"kind=decode"}, 4, "h100-l2-7b-b16"},
        {"any exclude drops", {NULL}, {"tp=1", "tp=4"}, 1, "h100-l2-7b-dec"},
        {"select then exclude", {"hardware=h100-sxm"}, {"kind=offline_batch"}, 2, "h100-l2-7b-dec"},
        {"absent field selects nothing but its kind",
         {"context_tokens=2048"},
         {NULL},
         1,
         "h100-l2-7b-dec"},
        {"absent field excludes nothing else", {NULL}, {"output_tokens=1024"}, 4, "h100-l2-7b-dec"},
        {"no match", {"hardware=h100-sxm", "tp=2", "kind=prefill"}, {NULL}, 0, NULL},
    };
    for (size_t i = 0; i < N(cases); i++) {
        sim_meas_set set;
        if (!load_five(&set)) {
            CHECK(0);
            sim_meas_set_free(&set);
            continue;
        }
        sim_meas_filter sel[3], exc[3];
        size_t ns = 0, ne = 0;
        for (size_t j = 0; j < 3 && cases[i].sel[j]; j++)
            sel[ns++] = filt(cases[i].sel[j]);
        for (size_t j = 0; j < 3 && cases[i].exc[j]; j++)
            exc[ne++] = filt(cases[i].exc[j]);
        size_t kept = sim_meas_select(&set, sel, ns, exc, ne);
        if (kept != cases[i].want)
            printf("case '%s'\n", cases[i].name);
        CHECK_INT(kept, cases[i].want);
        CHECK_INT(set.n, cases[i].want);
        if (cases[i].first && set.n > 0)
            CHECK_STR(set.rows[0].id, cases[i].first);
        sim_meas_set_free(&set);
    }
    /* Order is preserved. */
    sim_meas_set set;
    if (load_five(&set)) {
        sim_meas_filter e = filt("kind=decode");
        CHECK_INT(sim_meas_select(&set, NULL, 0, &e, 1), 4);
        CHECK_STR(set.rows[0].id, "h100-l2-7b-b16");
        CHECK_STR(set.rows[1].id, "pre-1");
        CHECK_STR(set.rows[2].id, "step-mixed");
        CHECK_STR(set.rows[3].id, "off-sched");
    }
    sim_meas_set_free(&set);
}

static void kind_names_round_trip(void)
{
    for (int k = 0; k < SIM_MEAS_KIND_COUNT; k++) {
        sim_meas_kind got = SIM_MEAS_KIND_COUNT;
        CHECK_INT(sim_meas_kind_parse(sim_meas_kind_name((sim_meas_kind)k), &got), SIM_OK);
        CHECK_INT(got, k);
    }
    CHECK_STR(sim_meas_kind_name(SIM_MEAS_OFFLINE_BATCH), "offline_batch");
    CHECK_STR(sim_meas_kind_name(SIM_MEAS_KIND_COUNT), "?");
    sim_meas_kind k = SIM_MEAS_STEP;
    CHECK_INT(sim_meas_kind_parse("Decode", &k), SIM_EINVAL);
    CHECK_INT(k, SIM_MEAS_STEP);
}

/*
 * The Argonne offline-batch file in ../shared/data: 511 rows per its README; 20 of them
 * are h100-sxm / llama-2-7b / tp 1 (counted by hand with grep). Skipped, and not counted
 * as a pass, when the shared data is absent.
 */
static void argonne_file_loads_and_selects(void)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/measurements/argonne-vllm-offline.jsonl", SIM_SHARED_DATA);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("SKIP argonne: ../shared/data not found\n");
        return;
    }
    fclose(f);
    sim_meas_set set;
    sim_meas_set_init(&set);
    load_checked(&set, path, 511);
    sim_meas_filter sel[] = {filt("hardware=h100-sxm"), filt("model=llama-2-7b"), filt("tp=1")};
    CHECK_INT(sim_meas_select(&set, sel, N(sel), NULL, 0), 20);
    for (size_t i = 0; i < set.n; i++) {
        CHECK_INT(set.rows[i].kind, SIM_MEAS_OFFLINE_BATCH);
        CHECK_INT(set.rows[i].dtype, SIM_DTYPE_FP16);
    }
    sim_meas_set_free(&set);
}

/*
 * The aic-benchmark scheduler rule (meas_pred.h), by hand from aiconfigurator's benchmark
 * rules: the closed-loop row of serving.jsonl (64 clients, 1024 + 128 tokens) gets
 * max_num_seqs 64, max_num_batched_tokens 64 + 1024 + 1500 = 2588 and max_model_len
 * 1024 + 128 + 1500 = 2652; the Poisson row carries its own "scheduler" object and keeps
 * it (2048 tokens, the rest unset); the trace row has no concurrency and keeps the defaults.
 * engine-defaults changes nothing; an unknown name is refused naming both rules.
 */
static void scheduler_rule_applies_to_closed_loop_rows(void)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    char path[1024];
    if (load_checked(&set, meas_path(path, sizeof(path), "serving.jsonl"), 3)) {
        sim_sched_rule rule = SIM_SCHED_RULE_AIC_BENCHMARK;
        CHECK_INT(sim_sched_rule_parse("engine-defaults", &rule, &err), SIM_OK);
        CHECK_INT(rule, SIM_SCHED_RULE_DEFAULTS);
        CHECK_INT((int)sim_meas_apply_sched_rule(&set, rule), 0);
        CHECK_INT(set.rows[0].sched.max_num_batched_tokens, -1);
        CHECK_INT(sim_sched_rule_parse("aic-benchmark", &rule, &err), SIM_OK);
        CHECK_INT(rule, SIM_SCHED_RULE_AIC_BENCHMARK);
        CHECK_INT((int)sim_meas_apply_sched_rule(&set, rule), 1);
        const sim_meas_row *c = &set.rows[0], *p = &set.rows[1], *t = &set.rows[2];
        CHECK_INT(c->sched.max_num_seqs, 64);
        CHECK_INT(c->sched.max_num_batched_tokens, 2588);
        CHECK_INT(c->sched.max_model_len, 2652);
        CHECK_INT(c->sched.block_size, -1);
        CHECK_INT(p->sched.max_num_batched_tokens, 2048);
        CHECK_INT(p->sched.max_num_seqs, -1);
        CHECK_INT(t->sched.max_num_batched_tokens, -1);
        CHECK_INT(t->sched.max_num_seqs, -1);
        /* Applying it again changes nothing: the row now has its engine arguments. */
        CHECK_INT((int)sim_meas_apply_sched_rule(&set, rule), 0);
        CHECK_INT(sim_sched_rule_parse("aic", &rule, &err), SIM_EINVAL);
        CHECK_CONTAINS(err.msg, "'aic'");
        CHECK_CONTAINS(err.msg, "engine-defaults or aic-benchmark");
        CHECK_INT(sim_sched_rule_parse(NULL, &rule, &err), SIM_EINVAL);
    }
    sim_meas_set_free(&set);
}

/* One serving row (H100, TP 2, closed loop) with the given "run" object, loaded from text. */
static sim_status load_run(sim_meas_set *set, const char *run, struct sim_err *err)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"id\":\"r\",\"source\":\"t\",\"hardware\":\"h100-sxm\",\"model\":\"m\",\"tp\":2,"
             "\"engine\":\"vllm\",\"engine_version\":\"0.18.0\",\"kind\":\"serving\","
             "\"metric\":\"tpot_mean\",\"workload\":{\"arrival\":\"closed\",\"concurrency\":4,"
             "\"prompt_tokens\":100,\"output_tokens\":10},\"measured_s\":0.01,\"run\":%s}\n",
             run);
    return sim_meas_load_text("run.jsonl", text, strlen(text), set, err);
}

/* MEASUREMENTS.md "run": the keys the simulation takes change the row (async_scheduling into
 * the scheduler settings, cudagraph_mode NONE = enforce_eager, expert_parallel and
 * data_parallel into the layout); the others with meaning are listed as unmodelled, each
 * once and in the order of the object; provenance keys are ignored; run.assumed entries
 * naming a field the prediction uses are kept, others dropped. */
static void run_object_is_taken_or_reported(void)
{
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    sim_status st = load_run(
        &set,
        "{\"image\":\"x\",\"async_scheduling\":false,\"prefix_caching\":true,"
        "\"cudagraph_mode\":\"PIECEWISE\",\"compilation_config\":"
        "\"{\\\"cudagraph_mode\\\":\\\"PIECEWISE\\\",\\\"pass_config\\\":{\\\"fuse_allreduce_"
        "rms\\\":"
        "true,\\\"eliminate_noops\\\":true}}\",\"max_cudagraph_capture_size\":\"2048\","
        "\"attention_backend\":\"vllm default "
        "(auto-selected)\",\"env\":{\"VLLM_MOE_USE_DEEP_GEMM\":"
        "\"0\",\"VLLM_MXFP4_USE_MARLIN\":\"1\"},\"expert_parallel\":true,\"data_parallel\":2,"
        "\"ep_size\":4,\"assumed\":[\"source_config (commit guessed)\",\"tp (data parallel not "
        "expressible)\",\"run.env\"],\"defaults\":[\"kv_dtype\"]}",
        &err);
    if (st != SIM_OK)
        printf("%s\n", err.msg);
    CHECK_INT(st, SIM_OK);
    if (set.n == 1) {
        const sim_meas_row *r = &set.rows[0];
        CHECK_INT(r->sched.async_scheduling, 0);
        CHECK_INT(r->sched.enable_prefix_caching, 1); /* taken: sched_v1.h simulates it */
        CHECK_INT(r->sched.enforce_eager, -1);
        CHECK_INT(r->ep, 1);
        CHECK_INT(r->dp, 2);
        /* ep_size 4 = TP 2 x DP 2: consistent, not listed. */
        CHECK_STR(r->unmodelled, "cudagraph_mode=PIECEWISE; "
                                 "compilation_config.pass_config.fuse_allreduce_rms=true; "
                                 "max_cudagraph_capture_size=2048; env.VLLM_MXFP4_USE_MARLIN=1");
        CHECK_STR(r->assumed, "tp (data parallel not expressible); run.env");
    }
    /* Set aside: the row moves, in order, and the set keeps the others. */
    sim_meas_set aside;
    sim_meas_set_init(&aside);
    CHECK_INT(load_run(&set, "{\"cudagraph_mode\":\"NONE\",\"ep_size\":2}", &err), SIM_EINVAL);
    size_t moved = 9;
    CHECK_INT(sim_meas_set_aside_assumed(&set, &aside, &moved), SIM_OK);
    CHECK_INT(moved, 1);
    CHECK_INT(set.n, 0);
    CHECK_INT(aside.n, 1);
    sim_meas_set_free(&set);
    sim_meas_set_free(&aside);

    /* NONE runs eagerly; ep_size 2 without expert parallelism contradicts the layout (1). */
    sim_meas_set_init(&set);
    st = load_run(&set, "{\"cudagraph_mode\":\"NONE\",\"ep_size\":2,\"prefix_caching\":false}",
                  &err);
    CHECK_INT(st, SIM_OK);
    if (set.n == 1) {
        CHECK_INT(set.rows[0].sched.enforce_eager, 1);
        CHECK_INT(set.rows[0].sched.async_scheduling, -1);
        CHECK_INT(set.rows[0].sched.enable_prefix_caching, 0);
        CHECK_STR(set.rows[0].unmodelled, "ep_size=2 (the layout gives 1)");
        CHECK_STR(set.rows[0].assumed, "");
    }
    sim_meas_set_free(&set);

    /* Bad values: one message naming the field. */
    static const struct {
        const char *run, *want;
    } bad[] = {
        {"{\"cudagraph_mode\":\"FULLY\"}", "run.cudagraph_mode: unknown cudagraph_mode"},
        {"{\"compilation_config\":\"{nope\"}", "run.compilation_config: not a JSON object"},
        {"{\"compilation_config\":\"{\\\"cudagraph_mode\\\":\\\"SOME\\\"}\"}",
         "run.compilation_config: unknown cudagraph_mode"},
        {"{\"max_cudagraph_capture_size\":\"20x\"}", "run.max_cudagraph_capture_size: expected"},
        {"{\"max_cudagraph_capture_size\":0}", "run.max_cudagraph_capture_size: expected"},
        {"{\"async_scheduling\":\"yes\"}", "run.async_scheduling"},
        {"{\"env\":{\"A\":1}}", "run.env: A: wrong type"},
        {"{\"env\":[]}", "run.env: wrong type"},
        {"{\"assumed\":\"tp\"}", "run.assumed: wrong type"},
        {"{\"defaults\":[1]}", "run.defaults: wrong type"},
    };
    for (size_t i = 0; i < N(bad); i++) {
        sim_meas_set_init(&set);
        err.msg[0] = '\0';
        CHECK(load_run(&set, bad[i].run, &err) != SIM_OK);
        CHECK_CONTAINS(err.msg, bad[i].want);
        CHECK_CONTAINS(err.msg, "run.jsonl:1:");
        CHECK_INT(set.n, 0);
        sim_meas_set_free(&set);
    }
    /* A scheduler object saying enforce_eager false contradicts cudagraph_mode NONE. */
    sim_meas_set_init(&set);
    const char *text =
        "{\"id\":\"r\",\"source\":\"t\",\"hardware\":\"h\",\"model\":\"m\",\"tp\":1,"
        "\"kind\":\"offline_batch\",\"batch\":1,\"prompt_tokens\":10,\"output_tokens\":10,"
        "\"measured_s\":0.01,"
        "\"scheduler\":{\"enforce_eager\":false},\"run\":{\"cudagraph_mode\":\"NONE\"}}\n";
    CHECK(sim_meas_load_text("run.jsonl", text, strlen(text), &set, &err) != SIM_OK);
    CHECK_CONTAINS(err.msg, "contradicts scheduler.enforce_eager");
    sim_meas_set_free(&set);
    /* Likewise run.prefix_caching against scheduler.enable_prefix_caching. */
    sim_meas_set_init(&set);
    text = "{\"id\":\"r\",\"source\":\"t\",\"hardware\":\"h\",\"model\":\"m\",\"tp\":1,"
           "\"kind\":\"offline_batch\",\"batch\":1,\"prompt_tokens\":10,\"output_tokens\":10,"
           "\"measured_s\":0.01,\"scheduler\":{\"enable_prefix_caching\":false},"
           "\"run\":{\"prefix_caching\":true}}\n";
    CHECK(sim_meas_load_text("run.jsonl", text, strlen(text), &set, &err) != SIM_OK);
    CHECK_CONTAINS(err.msg, "run.prefix_caching: contradicts scheduler.enable_prefix_caching");
    sim_meas_set_free(&set);
    /* A serving workload's shared prefixes: taken; both at once refused. */
    static const char serving[] =
        "{\"id\":\"s\",\"source\":\"t\",\"hardware\":\"h\",\"model\":\"m\",\"tp\":1,"
        "\"kind\":\"serving\",\"metric\":\"ttft_mean\",\"measured_s\":0.1,"
        "\"workload\":{\"arrival\":\"closed\",\"concurrency\":4,\"prompt_tokens\":100,"
        "\"output_tokens\":10,%s}}\n";
    char buf[512];
    snprintf(buf, sizeof(buf), serving, "\"distinct_prompts\":100");
    sim_meas_set_init(&set);
    CHECK_INT(sim_meas_load_text("w.jsonl", buf, strlen(buf), &set, &err), SIM_OK);
    if (set.n == 1)
        CHECK_INT(set.rows[0].workload.distinct_prompts, 100);
    sim_meas_set_free(&set);
    snprintf(buf, sizeof(buf), serving, "\"prefix_tokens\":64,\"distinct_prompts\":100");
    sim_meas_set_init(&set);
    CHECK(sim_meas_load_text("w.jsonl", buf, strlen(buf), &set, &err) != SIM_OK);
    CHECK_CONTAINS(err.msg, "workload.distinct_prompts: not allowed with prefix_tokens");
    sim_meas_set_free(&set);
}

/* One offline_batch row as text: batch b, prompt p, output o tokens, t seconds. */
static void cc_row(char *buf, size_t cap, const char *id, int b, int p, int o, double t)
{
    snprintf(buf, cap,
             "{\"id\":\"%s\",\"source\":\"t\",\"hardware\":\"h\",\"model\":\"m\",\"tp\":1,"
             "\"kind\":\"offline_batch\",\"batch\":%d,\"prompt_tokens\":%d,"
             "\"output_tokens\":%d,\"measured_s\":%.17g}\n",
             id, b, p, o, t);
}

/*
 * sim_meas_call_constants on hand-made series. Oracle: least squares of t = c + k L by hand.
 * Series A (batch 1, prompt = output = L): t = 0.5 + 0.01 L at L = 100, 200, 400 gives
 * c = 0.5 exactly, shortest run 1.5 s, c / shortest = 1/3 > 0.10: flagged.
 * Series B (batch 2, same lengths): t = 0.05 + 0.01 L: c = 0.05, shortest 1.05 s, 4.8%: not.
 * Series C (batch 4): two lengths only: never judged, however large its intercept.
 * Series D (batch 8, prompt = 2 x output): t = 2 + 0.001 L, c = 2 > 10% of 2.1 s: flagged;
 * its row with prompt = output (another ratio) is not of the series: not flagged.
 */
static void call_constants_flag_series_with_a_large_intercept(void)
{
    static const struct {
        const char *id;
        int b, p, o;
        double t;
        double want_c;
    } rows[] = {
        {"a1", 1, 100, 100, 1.5, 0.5}, {"a2", 1, 200, 200, 2.5, 0.5}, {"a3", 1, 400, 400, 4.5, 0.5},
        {"b1", 2, 100, 100, 1.05, 0},  {"b2", 2, 200, 200, 2.05, 0},  {"b3", 2, 400, 400, 4.05, 0},
        {"c1", 4, 100, 100, 9.0, 0},   {"c2", 4, 200, 200, 9.5, 0},   {"d1", 8, 200, 100, 2.1, 2.0},
        {"d2", 8, 400, 200, 2.2, 2.0}, {"d3", 8, 800, 400, 2.4, 2.0}, {"d4", 8, 100, 100, 2.1, 0},
    };
    char text[4096] = "", line[512];
    for (size_t i = 0; i < N(rows); i++) {
        cc_row(line, sizeof(line), rows[i].id, rows[i].b, rows[i].p, rows[i].o, rows[i].t);
        strncat(text, line, sizeof(text) - strlen(text) - 1);
    }
    sim_meas_set set;
    sim_meas_set_init(&set);
    struct sim_err err = {{0}};
    CHECK_INT(sim_meas_load_text("cc.jsonl", text, strlen(text), &set, &err), SIM_OK);
    CHECK_INT(set.n, N(rows));
    double c[N(rows)], frac[N(rows)];
    CHECK_INT(sim_meas_call_constants(&set, c, frac), SIM_OK);
    for (size_t i = 0; i < N(rows) && set.n == N(rows); i++) {
        if (rows[i].want_c > 0.0) {
            CHECK_REL(c[i], rows[i].want_c, 1e-9);
            const double shortest = rows[i].id[0] == 'a' ? 1.5 : 2.1;
            CHECK_REL(frac[i], rows[i].want_c / shortest, 1e-9);
        } else {
            CHECK_REL(c[i], 0.0, 0.0);
            CHECK_REL(frac[i], 0.0, 0.0);
        }
    }
    sim_meas_set_free(&set);
}

int main(void)
{
    run_object_is_taken_or_reported();
    serving_rows_load();
    model_paths_resolve_against_the_file();
    scheduler_rule_applies_to_closed_loop_rows();
    documented_example_loads_with_defaults();
    step_prefill_and_scheduler_rows_load();
    bad_rows_are_rejected_with_file_line_and_field();
    duplicate_id_across_files_is_rejected();
    many_rows_grow_the_set();
    filter_parse_errors_name_the_bad_part();
    filters_compare_as_the_field_type();
    select_ands_and_exclude_ors();
    kind_names_round_trip();
    argonne_file_loads_and_selects();
    call_constants_flag_series_with_a_large_intercept();
    return check_report("test_meas");
}
