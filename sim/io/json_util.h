/*
 * json_util.h - a hardened wrapper around cJSON for the loaders.
 *
 * cJSON is used only inside simio. Files are parsed with
 * cJSON_ParseWithLengthOpts (require null-termination) and parse errors are
 * turned into file:line:col. Fields are read only with
 * cJSON_GetObjectItemCaseSensitive; numbers through valuedouble and rejected
 * when not finite; integers must be integral and in range. Every file and line read is
 * walked once for duplicate keys at any depth (cJSON returns only the first); a pass over
 * an object's children rejects unknown keys, with a "did you mean" hint for near misses. Every
 * message has the form "<file>:<line>:<col>: <json.path>: <problem> (expected .., got ..)". cJSON
 * does not keep positions, so the line of a key is found by searching the source text for "key":
 * after the enclosing object's opening position.
 */
#ifndef SIM_JSON_UTIL_H
#define SIM_JSON_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct cJSON;

typedef struct sim_jctx {
    const char *path;   /* file name for messages */
    const char *buf;    /* the whole source text (NUL-terminated) */
    const char *scope;  /* where key searches start (the enclosing object); NULL = buf */
    const char *prefix; /* JSON path prefix for messages ("" or "scheduler.") */
    int line_base;      /* added to computed lines (JSON Lines: the line's number - 1) */
    struct sim_err *err;
} sim_jctx;

/* Limits (docs/limits.md): a JSON or JSON Lines file, and the keys of one object. */
#define SIM_JSON_MAX_FILE_BYTES (INT64_C(256) << 20)
#define SIM_JSON_MAX_KEYS       4096

/*
 * The checks every JSON or JSON Lines text passes: at most SIM_JSON_MAX_FILE_BYTES in all
 * (total, the bytes so far), and no NUL byte in text[0..len). Messages name name: "too large"
 * (SIM_EIO), "contains a NUL byte (not a text file)" (SIM_EPARSE).
 */
sim_status sim_json_check_text(const char *name, const char *text, size_t len, uint64_t total,
                               struct sim_err *err /* OUT */);

/*
 * Reads a whole file into a NUL-terminated heap buffer. The caller frees *out
 * with free(). Fails with SIM_EIO and a message naming the file.
 */
sim_status sim_json_read_file(const char *path, char **out /* OUT */, size_t *len /* OUT */,
                              struct sim_err *err /* OUT */);

/* Parses a whole document's root into the caller's struct. */
typedef sim_status (*sim_json_parse_fn)(const sim_jctx *ctx, const struct cJSON *root, void *out);

/*
 * Reads path, parses it, and calls parse with a context for messages; frees the
 * text and the tree on every path. Returns the first failure's status with its
 * message in err.
 */
sim_status sim_json_load_file(const char *path, sim_json_parse_fn parse, void *out,
                              struct sim_err *err /* OUT */);

/*
 * JSON Lines: calls line_fn for each non-blank line not starting with '#', with a context
 * whose messages carry the file's line numbers, the parsed object and the 1-based line.
 * Stops at the first failure (a line that is not JSON is SIM_EPARSE) and returns it; err
 * holds the message. Frees everything it allocated.
 */
typedef sim_status (*sim_jsonl_line_fn)(const sim_jctx *ctx, const struct cJSON *root, int line,
                                        void *user);
sim_status sim_jsonl_each(const char *path, sim_jsonl_line_fn line_fn, void *user,
                          struct sim_err *err /* OUT */);
/* The same over text read with sim_json_read_file (len bytes), whose lines it cuts out in place. */
sim_status sim_jsonl_each_text(const char *path, char *buf, size_t len, sim_jsonl_line_fn line_fn,
                               void *user, struct sim_err *err /* OUT */);

/*
 * Reports a core validator's message ("key: problem") at the line of that key:
 * "<file>:<line>:<col>: key: problem". Returns SIM_EINVAL.
 */
sim_status sim_j_fail_validator(const sim_jctx *ctx, const char *msg);

/* Parses buf; on a syntax error returns NULL and writes file:line:col to err. Caller cJSON_Deletes.
 */
struct cJSON *sim_json_parse(const sim_jctx *ctx, size_t len);

/* Formats "<file>:<line>:<col>: <prefix><key>: <message>" into ctx->err. Returns SIM_EINVAL. */
sim_status sim_j_fail(const sim_jctx *ctx, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like sim_j_fail but locates the nth (0-based) occurrence of key, for duplicates. */
sim_status sim_j_fail_nth(const sim_jctx *ctx, const char *key, int nth, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Like sim_j_fail, but the message stands alone: only the location comes from key. */
sim_status sim_j_fail_loc(const sim_jctx *ctx, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Pointer to the first "key": in the scope, or the scope start when not found. */
const char *sim_j_locate(const sim_jctx *ctx, const char *key);

/*
 * Typed getters. Absent keys (or JSON null when allow_null) leave *out unchanged,
 * set *present = 0 and fail only when required. Values outside [min, max] fail
 * with the expected range in the message.
 */
sim_status sim_j_num(const sim_jctx *ctx, const struct cJSON *obj, const char *key, int required,
                     double min, double max, double *out, int *present);
sim_status sim_j_int(const sim_jctx *ctx, const struct cJSON *obj, const char *key, int required,
                     int64_t min, int64_t max, int64_t *out, int *present);
sim_status sim_j_bool(const sim_jctx *ctx, const struct cJSON *obj, const char *key, int required,
                      int *out, int *present);
/*
 * Text a terminal shows as text (the one rule for strings from files and arguments that the
 * tools print): valid UTF-8 without C0 controls (U+0000-U+001F), DEL, C1 controls
 * (U+0080-U+009F: 8-bit escape sequences, e.g. U+009B CSI) and the bidirectional embeddings,
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069), which reorder what follows.
 * sim_text_next measures the character at s[0..n) (n > 0): its length in bytes, or 0 when it
 * is not valid UTF-8; *cp gets its code point and *safe whether it passes.
 * sim_text_unsafe: the byte position of the first character that does not pass, or n.
 */
size_t sim_text_next(const unsigned char *s, size_t n, uint32_t *cp, int *safe);
size_t sim_text_unsafe(const char *s, size_t n);

/* s with every byte of what sim_text_next does not pass written as \xNN, into out (cap bytes,
 * always NUL-terminated, truncated at a whole character or escape): how text from a file or
 * an argument is shown when it cannot be refused (messages, reported keys). Returns out. */
char *sim_text_escape(const char *s, char *out, size_t cap);

/* Copies a string into out (size cap); fails when longer, or when it is not text a terminal
 * shows as text (sim_text_unsafe), naming the character and its position. */
sim_status sim_j_str(const sim_jctx *ctx, const struct cJSON *obj, const char *key, int required,
                     char *out, size_t cap, int *present);

/* One string field of an object, for sim_j_strs. */
typedef struct sim_j_strfield {
    const char *key;
    int required;
    char *out;  /* where the string goes */
    size_t cap; /* size of out, bytes */
} sim_j_strfield;

/* Reads the n string fields f[] in turn with sim_j_str; stops at the first failure. */
sim_status sim_j_strs(const sim_jctx *ctx, const struct cJSON *obj, const sim_j_strfield *f,
                      size_t n);

/*
 * Reads the provenance of a figure object: "status", one of datasheet, measured,
 * derived, estimated (its index 0..3 goes to *status), and "source", copied into
 * source (cap). Both are required.
 */
sim_status sim_j_status(const sim_jctx *ctx, const struct cJSON *obj, int *status /* OUT */,
                        char *source /* OUT */, size_t cap);

/*
 * Reads a figure object {"value": number, "status": word, "source": string, "note"?}
 * at key: value in [min, max], and > 0 when positive; status one of datasheet,
 * measured, derived, estimated (its index 0..3 goes to *status); source copied
 * into source (cap). Absent: *present = 0, an error only when required. JSON null
 * is not absent: it is a figure of the wrong type.
 */
sim_status sim_j_figure(const sim_jctx *ctx, const struct cJSON *obj, const char *key, int required,
                        double min, double max, int positive, double *value, int *status,
                        char *source, size_t cap, int *present);

/*
 * Walks obj's children (of a tree sim_json_load_file or sim_jsonl_each read: duplicate keys
 * were refused there, at any depth): rejects more than SIM_JSON_MAX_KEYS keys; keys not in
 * known[] when strict, or (when not strict) only keys within edit distance 2 of
 * a known key, which are taken for misspellings. Keys in ignored[] are accepted.
 */
sim_status sim_j_check_keys(const sim_jctx *ctx, const struct cJSON *obj, const char *const *known,
                            size_t n_known, const char *const *ignored, size_t n_ignored,
                            int strict);

/* Levenshtein distance between two short ASCII strings (capped at 64 characters). */
int sim_j_edit_distance(const char *a, const char *b);

/* A number as every JSON output of llmstep writes it (sim_jw_put_number, json_writer.h): the
 * shortest of %.15g, %.16g and %.17g that reads back as exactly v; "null" when not finite.
 * Returns snprintf's count (the length, even when cap cut it short). */
int sim_j_format_number(char *buf, size_t cap, double v);

/* Adds key: v to obj in that form (cJSON's own printer may drop the last bit). NULL when
 * out of memory. */
struct cJSON *sim_j_add_number(struct cJSON *obj, const char *key, double v);

/* Writes a cJSON tree (a document read and edited, such as `hw import`'s profile) through the
 * JSON writer, key NULL for an array element or the top level: its numbers, parsed ones and
 * sim_j_add_number's alike, in the one format of every output. */
struct sim_jw;
void sim_j_write_tree(struct sim_jw *w, const char *key, const struct cJSON *item);

#endif
