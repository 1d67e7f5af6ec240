/*
 * test_json_writer.c - the JSON writer of every output (sim/io/json_writer.h): its numbers
 * against their definition (printf and strtod), its strings, commas and layouts against
 * cJSON's printers, its FILE output, and its refusals.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "json_util.h"
#include "json_writer.h"

/* The definition of a JSON number of llmstep: %.15g, %.16g, %.17g, the first that reads back. */
static void reference(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "null");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static int n_number_mismatches;

static void number_is(double v)
{
    char want[64], got[SIM_JW_NUMBER_MAX + 1];
    reference(want, sizeof(want), v);
    char *end = sim_jw_put_number(got, v);
    *end = '\0';
    if (strcmp(got, want) != 0 && n_number_mismatches++ < 10)
        printf("FAIL number %a: got %s, want %s\n", v, got, want);
}

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A uniform double in [0, 1). */
static double unit(void) { return (double)(rng() >> 11) * 0x1p-53; }

/* Random bit patterns, log-uniform magnitudes over and beyond the exact path's range, short
 * decimals and their neighbours, integers and half-integers, powers of two and of ten. */
static void numbers_match_their_definition(void)
{
    for (int i = 0; i < 40000; i++) {
        uint64_t bits = rng();
        double v;
        memcpy(&v, &bits, sizeof(v));
        number_is(v);
        const double u = exp(unit() * 80.0 - 40.0);
        number_is(u);
        number_is(-u);
        char dec[64];
        snprintf(dec, sizeof(dec), "%llue%d", (unsigned long long)(rng() % 100000000000000000ULL),
                 (int)(rng() % 40) - 30);
        const double d = strtod(dec, NULL);
        number_is(d);
        number_is(nextafter(d, (double)INFINITY));
        number_is(nextafter(d, 0.0));
        snprintf(dec, sizeof(dec), "%llue%d", (unsigned long long)(rng() % 100000),
                 (int)(rng() % 30) - 20);
        number_is(strtod(dec, NULL));
        const double k = (double)(rng() >> (rng() % 64));
        number_is(k);
        number_is(k + 0.5);
        const double p2 = ldexp(1.0, (int)(rng() % 160) - 80);
        number_is(p2);
        number_is(nextafter(p2, 0.0));
        number_is(nextafter(p2, (double)INFINITY));
    }
    for (int e = -14; e <= 19; e++) {
        double p = pow(10.0, e), lo = p, hi = p;
        number_is(p);
        for (int j = 0; j < 3; j++) {
            lo = nextafter(lo, 0.0);
            hi = nextafter(hi, (double)INFINITY);
            number_is(lo);
            number_is(hi);
        }
    }
    const double specials[] = {0.0,
                               -0.0,
                               0.1,
                               0.3,
                               1.0 / 3.0,
                               1e-11,
                               1e17,
                               5e-324,
                               2.2250738585072014e-308,
                               1.7976931348623157e308,
                               1e15,
                               1e16,
                               123456789012345680.0,
                               0.5,
                               1.5,
                               (double)NAN,
                               (double)INFINITY,
                               -(double)INFINITY};
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
        number_is(specials[i]);
    CHECK(n_number_mismatches == 0);
    char buf[8];
    CHECK(sim_j_format_number(buf, sizeof(buf), 0.1) == 3 && strcmp(buf, "0.1") == 0);
    CHECK(sim_j_format_number(buf, 4, 1234.5) == 6 && strcmp(buf, "123") == 0);
    CHECK(sim_j_format_number(buf, sizeof(buf), (double)NAN) == 4 && strcmp(buf, "null") == 0);
}

/* The buffer writer's text; the caller frees it. */
static char *text_of(sim_jw *w)
{
    CHECK(sim_jw_finish(w) == SIM_OK);
    return sim_jw_take(w, NULL);
}

#define CHECK_TEXT(w, want)                                                                        \
    do {                                                                                           \
        char *got_ = text_of(w);                                                                   \
        CHECK_STR(got_ ? got_ : "(null)", want);                                                   \
        free(got_);                                                                                \
    } while (0)

static void compact_layouts(void)
{
    sim_jw w;
    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_object_begin(&w, NULL);
    sim_jw_str(&w, "s", "a\"b\\c\n\t\x01/");
    sim_jw_num(&w, "x", 0.1);
    sim_jw_num(&w, "nan", (double)NAN);
    sim_jw_int(&w, "i", INT64_MIN);
    sim_jw_uint(&w, "u", UINT64_MAX);
    sim_jw_bool(&w, "t", 1);
    sim_jw_bool(&w, "f", 0);
    sim_jw_null(&w, "n");
    sim_jw_array_begin(&w, "a");
    sim_jw_int(&w, NULL, 1);
    sim_jw_object_begin(&w, NULL);
    sim_jw_object_end(&w);
    sim_jw_array_begin(&w, NULL);
    sim_jw_array_end(&w);
    sim_jw_array_end(&w);
    sim_jw_key(&w, "k");
    sim_jw_num(&w, NULL, -2.5e-7);
    sim_jw_object_end(&w);
    CHECK_TEXT(&w, "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001/\",\"x\":0.1,\"nan\":null,"
                   "\"i\":-9223372036854775808,\"u\":18446744073709551615,\"t\":true,\"f\":false,"
                   "\"n\":null,\"a\":[1,{},[]],\"k\":-2.5e-07}\n");

    /* Rows a line each: between (models, hw list) and around (sweep). */
    const sim_jw_lines lines[] = {SIM_JW_LINES_BETWEEN, SIM_JW_LINES_AROUND};
    const char *const want[] = {"[1,\n2,\n3]\n", "{\"rows\":[\n1,\n2,\n3\n]}\n"};
    for (int k = 0; k < 2; k++) {
        sim_jw_init_buffer(&w, SIM_JW_COMPACT);
        if (k)
            sim_jw_object_begin(&w, NULL);
        sim_jw_array_begin_lines(&w, k ? "rows" : NULL, lines[k]);
        for (int i = 1; i <= 3; i++)
            sim_jw_int(&w, NULL, i);
        sim_jw_array_end(&w);
        if (k)
            sim_jw_object_end(&w);
        CHECK_TEXT(&w, want[k]);
    }
    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_array_begin_lines(&w, NULL, SIM_JW_LINES_AROUND);
    sim_jw_array_end(&w);
    CHECK_TEXT(&w, "[\n]\n");
}

/* Valid UTF-8 passes through; a byte outside it becomes U+FFFD, so the text stays JSON. */
static void utf8(void)
{
    sim_jw w;
    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_array_begin(&w, NULL);
    sim_jw_str(&w, NULL, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f");
    sim_jw_str(&w, NULL, "\xff|\xc3|\xe2\x82|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\x80");
    sim_jw_array_end(&w);
    CHECK_TEXT(&w, "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f\","
                   "\"\\ufffd|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
                   "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\"]\n");
}

/* One document written twice: as a cJSON tree and through the writer. */
static void build(cJSON *root, sim_jw *w)
{
    sim_jw_object_begin(w, NULL);
    cJSON_AddStringToObject(root, "schema", "llmstep-calibration/1");
    sim_jw_str(w, "schema", "llmstep-calibration/1");
    sim_j_add_number(root, "alpha", 1.173);
    sim_jw_num(w, "alpha", 1.173);
    cJSON *o = cJSON_AddObjectToObject(root, "bounds");
    sim_jw_object_begin(w, "bounds");
    sim_j_add_number(o, "alpha_min", 0.1);
    sim_jw_num(w, "alpha_min", 0.1);
    cJSON_AddBoolToObject(o, "at_bound", 0);
    sim_jw_bool(w, "at_bound", 0);
    cJSON_AddNullToObject(o, "stderr");
    sim_jw_null(w, "stderr");
    cJSON *inner = cJSON_AddObjectToObject(o, "empty");
    (void)inner;
    sim_jw_object_begin(w, "empty");
    sim_jw_object_end(w);
    sim_jw_object_end(w);
    cJSON *a = cJSON_AddArrayToObject(root, "files");
    sim_jw_array_begin(w, "files");
    const char *files[] = {"a.jsonl", "tab\there", "\x01"};
    for (int i = 0; i < 3; i++) {
        cJSON_AddItemToArray(a, cJSON_CreateString(files[i]));
        sim_jw_str(w, NULL, files[i]);
    }
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddItemToArray(a, obj);
    sim_jw_object_begin(w, NULL);
    sim_j_add_number(obj, "x", 2.0);
    sim_jw_num(w, "x", 2.0);
    cJSON *deep = cJSON_AddArrayToObject(obj, "deep");
    sim_jw_array_begin(w, "deep");
    cJSON_AddItemToArray(deep, cJSON_CreateObject());
    sim_jw_object_begin(w, NULL);
    sim_jw_object_end(w);
    sim_jw_array_end(w);
    sim_jw_object_end(w);
    sim_jw_array_end(w);
    cJSON_AddArrayToObject(root, "none");
    sim_jw_array_begin(w, "none");
    sim_jw_array_end(w);
    sim_jw_object_end(w);
}

/* SIM_JW_TABS is cJSON_Print's layout and SIM_JW_COMPACT cJSON_PrintUnformatted's. */
static void same_layout_as_cjson(void)
{
    for (int tabs = 0; tabs < 2; tabs++) {
        cJSON *root = cJSON_CreateObject();
        sim_jw w;
        sim_jw_init_buffer(&w, tabs ? SIM_JW_TABS : SIM_JW_COMPACT);
        build(root, &w);
        char *want = tabs ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
        char *got = text_of(&w);
        size_t n = strlen(want);
        CHECK(got && strlen(got) == n + 1 && strncmp(got, want, n) == 0 && got[n] == '\n');
        if (got && strncmp(got, want, n) != 0)
            printf("cJSON:\n%s\nwriter:\n%s", want, got);
        free(got);
        cJSON_free(want);
        cJSON_Delete(root);
    }
}

/* A parsed and edited tree written back (hw import): cJSON_Print's layout, and its numbers in
 * the one format, so a parsed value comes back exactly (cJSON's printer can drop its last
 * bit: 6.863711918450531e-06 came out as 6.86371191845053e-06). */
static void tree_written_back(void)
{
    const char *text =
        "{\"a\": [1, 2.5, true, null, \"s\"], \"b\": {\"x\": 6.863711918450531e-06}}";
    cJSON *root = cJSON_Parse(text);
    CHECK(root != NULL);
    if (!root)
        return;
    sim_j_add_number(root, "c", 0.1);
    sim_jw w;
    sim_jw_init_buffer(&w, SIM_JW_TABS);
    sim_j_write_tree(&w, NULL, root);
    CHECK_TEXT(&w, "{\n\t\"a\":\t[1, 2.5, true, null, \"s\"],\n\t\"b\":\t{\n\t\t\"x\":\t"
                   "6.863711918450531e-06\n\t},\n\t\"c\":\t0.1\n}\n");
    cJSON_Delete(root);

    /* As deep as cJSON reads (a profile's "_comment" may nest): written back as it was. */
    enum { DEEP = 900 };
    char deep[2 * DEEP + 2];
    memset(deep, '[', DEEP);
    memset(deep + DEEP, ']', DEEP);
    deep[2 * DEEP] = '\n';
    deep[2 * DEEP + 1] = '\0';
    root = cJSON_Parse(deep);
    CHECK(root != NULL);
    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_j_write_tree(&w, NULL, root);
    CHECK_TEXT(&w, deep);
    cJSON_Delete(root);
}

/* A FILE writer: the same text as the buffer writer, across many buffer flushes. */
static void file_output(void)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f)
        return;
    sim_jw wf, wb;
    sim_jw_init_file(&wf, f, SIM_JW_COMPACT);
    sim_jw_init_buffer(&wb, SIM_JW_COMPACT);
    sim_jw *ws[2] = {&wf, &wb};
    char name[64];
    for (int k = 0; k < 2; k++) {
        sim_jw_array_begin_lines(ws[k], NULL, SIM_JW_LINES_AROUND);
        for (int i = 0; i < 20000; i++) {
            snprintf(name, sizeof(name), "row %d", i);
            sim_jw_object_begin(ws[k], NULL);
            sim_jw_str(ws[k], "name", name);
            sim_jw_num(ws[k], "v", i / 7.0);
            sim_jw_object_end(ws[k]);
        }
        sim_jw_array_end(ws[k]);
    }
    CHECK(sim_jw_finish(&wf) == SIM_OK);
    sim_jw_free(&wf);
    size_t n = 0;
    char *want = text_of(&wb);
    long size = ftell(f);
    CHECK(want && size > 0 && (size_t)size == strlen(want));
    char *got = malloc((size_t)size + 1);
    rewind(f);
    if (got && want) {
        n = fread(got, 1, (size_t)size, f);
        CHECK(n == (size_t)size && memcmp(got, want, n) == 0);
    }
    free(got);
    free(want);
    fclose(f);
}

/* Misuse is an error that sticks: no key in an object, a key in an array, ends that do not
 * match, an unclosed document, nesting too deep. */
static void misuse_is_refused(void)
{
    sim_jw w;
    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_object_begin(&w, NULL);
    sim_jw_int(&w, NULL, 1);
    CHECK(sim_jw_finish(&w) == SIM_EINVAL);
    CHECK(sim_jw_take(&w, NULL) == NULL);

    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_array_begin(&w, NULL);
    sim_jw_int(&w, "k", 1);
    CHECK(sim_jw_finish(&w) == SIM_EINVAL);
    sim_jw_free(&w);

    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_array_begin(&w, NULL);
    sim_jw_object_end(&w);
    CHECK(sim_jw_finish(&w) == SIM_EINVAL);
    sim_jw_free(&w);

    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    sim_jw_object_begin(&w, NULL);
    CHECK(sim_jw_finish(&w) == SIM_EINVAL);
    sim_jw_free(&w);

    sim_jw_init_buffer(&w, SIM_JW_COMPACT);
    for (int i = 0; i <= SIM_JW_MAX_DEPTH; i++)
        sim_jw_array_begin(&w, NULL);
    CHECK(w.err == SIM_EINVAL);
    sim_jw_free(&w);
}

int main(void)
{
    numbers_match_their_definition();
    compact_layouts();
    utf8();
    same_layout_as_cjson();
    tree_written_back();
    file_output();
    misuse_is_refused();
    return check_report("test_json_writer");
}
