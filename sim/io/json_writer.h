/*
 * json_writer.h - the one JSON writer of every llmstep output: a streaming writer (no tree)
 * into a growable buffer or through a buffer to a FILE.
 *
 * Objects and arrays are opened and closed with automatic commas; every value function takes
 * the member's key (NULL for an array element, the top-level value, or after sim_jw_key).
 * Numbers are written as sim_jw_put_number writes them (the shortest of %.15g, %.16g and %.17g
 * that reads back as the same double; null when not finite), strings with JSON's escapes
 * (\" \\ \b \f \n \r \t, \u00XX for the other control characters) and valid UTF-8 passed
 * through as it is; a byte that is not part of valid UTF-8 is written as \ufffd, so the output
 * is always valid JSON.
 *
 * Layouts: SIM_JW_COMPACT has no whitespace (cJSON_PrintUnformatted's layout), optionally with
 * the elements of an array on lines of their own (sim_jw_array_begin_lines); SIM_JW_TABS is
 * cJSON_Print's layout (one member a line, indented with tabs, "key":<TAB>value, arrays on one
 * line with ", " between elements).
 *
 * Errors (out of memory, a failed write, ends that do not match their beginnings, nesting
 * deeper than SIM_JW_MAX_DEPTH) are kept: later calls do nothing, and sim_jw_finish returns
 * the first one.
 */
#ifndef SIM_JSON_WRITER_H
#define SIM_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

/* Bytes sim_jw_put_number may write ("-2.2250738585072014e-308" is 24), with room to spare. */
#define SIM_JW_NUMBER_MAX 32
/* Containers open at once: cJSON's own nesting limit (CJSON_NESTING_LIMIT), so a document cJSON
 * read can be written back (sim_j_write_tree). */
#define SIM_JW_MAX_DEPTH 1000

typedef enum sim_jw_style {
    SIM_JW_COMPACT, /* {"a":1,"b":[1,2]} */
    SIM_JW_TABS     /* cJSON_Print's: "{\n\t\"a\":\t1,\n\t\"b\":\t[1, 2]\n}" */
} sim_jw_style;

/* Where the elements of an array go in SIM_JW_COMPACT (sim_jw_array_begin_lines). */
typedef enum sim_jw_lines {
    SIM_JW_LINES_NONE,    /* [a,b,c] */
    SIM_JW_LINES_BETWEEN, /* [a,\nb,\nc]: a line for each element, the first after the '[' */
    SIM_JW_LINES_AROUND   /* [\na,\nb,\nc\n]: a line for each element and for the ']' */
} sim_jw_lines;

typedef struct sim_jw {
    char *buf;
    size_t len, cap;
    FILE *f; /* NULL: the text stays in buf (sim_jw_take); else flushed to f */
    sim_jw_style style;
    sim_status err; /* the first failure, SIM_OK until then */
    int depth;      /* containers open */
    int after_key;  /* a key was written; its value comes next */
    struct {
        unsigned char object, lines, has_items;
    } open[SIM_JW_MAX_DEPTH];
} sim_jw;

/* A writer whose text stays in memory (sim_jw_take), or one flushed to f as it grows. */
void sim_jw_init_buffer(sim_jw *w, sim_jw_style style);
void sim_jw_init_file(sim_jw *w, FILE *f, sim_jw_style style);

void sim_jw_object_begin(sim_jw *w, const char *key);
void sim_jw_object_end(sim_jw *w);
void sim_jw_array_begin(sim_jw *w, const char *key);
void sim_jw_array_begin_lines(sim_jw *w, const char *key, sim_jw_lines lines);
void sim_jw_array_end(sim_jw *w);

/* A member's key alone; its value follows with key NULL. */
void sim_jw_key(sim_jw *w, const char *key);
void sim_jw_str(sim_jw *w, const char *key, const char *s);
void sim_jw_num(sim_jw *w, const char *key, double v); /* null when not finite */
void sim_jw_int(sim_jw *w, const char *key, int64_t v);
void sim_jw_uint(sim_jw *w, const char *key, uint64_t v);
void sim_jw_bool(sim_jw *w, const char *key, int v);
void sim_jw_null(sim_jw *w, const char *key);

/* FILE writers: writes out what is buffered (text that ends mid-value included). */
sim_status sim_jw_flush(sim_jw *w);
/* Ends the output with a newline (every llmstep output does) and, for a FILE, flushes it.
 * Returns the first failure: SIM_ENOMEM, SIM_EIO (a failed write) or SIM_EINVAL (misuse). */
sim_status sim_jw_finish(sim_jw *w);
/* Buffer writers: the NUL-terminated text (its length in *len when len is not NULL), which the
 * caller frees with free(); NULL after a failure. The writer is left empty. */
char *sim_jw_take(sim_jw *w, size_t *len);
/* Frees what the writer holds (after sim_jw_finish or instead of sim_jw_take). */
void sim_jw_free(sim_jw *w);

/*
 * Writes v at p, without a NUL, as every JSON number of llmstep is written: the shortest of
 * printf's %.15g, %.16g and %.17g that strtod reads back as exactly v; "null" when v is not
 * finite. Returns the end. p must have SIM_JW_NUMBER_MAX bytes. Values from 1e-11 to 1e17
 * are formatted with exact integer arithmetic (about ten times faster than printf), the
 * others by printf and strtod; tests/test_json_writer.c compares the two.
 */
char *sim_jw_put_number(char *p, double v);

#endif
