/*
 * meas_json.h - reads measurement files (JSON Lines) and selects rows from them.
 *
 * The format is fixed by ../shared/MEASUREMENTS.md: one JSON object per line,
 * blank lines and lines starting with '#' ignored. Common fields id, source,
 * hardware, model, tp, dtype (default bf16), kv_dtype (default dtype), engine,
 * engine_version, kind and measured_s (seconds, > 0); then per kind:
 *   prefill:       batch, prompt_tokens        (one step prefilling batch prompts)
 *   decode:        batch, context_tokens       (one step, batch sequences decode one token)
 *   step:          groups [{count, new_tokens, context_tokens}, ...]
 *   offline_batch: batch, prompt_tokens, output_tokens, optional scheduler {...}
 *   serving:       metric (ttft_mean .. e2e_p99), workload {...}, optional scheduler {...}:
 *                  workload {"arrival": "closed", "concurrency", "prompt_tokens",
 *                  "output_tokens", "num_requests"?}, {"arrival": "poisson", "rate_per_s",
 *                  "prompt_tokens", "output_tokens", "num_requests"}, or {"trace": PATH}
 *                  (PATH relative to the measurement file's folder); llmstep's optional
 *                  extensions: "burstiness", "range_ratio", "warmup_requests"
 * A field of another kind (groups on a decode row) is an error, as is every
 * unknown field, so a typo never passes silently. Every message names the file,
 * the line of the file, the column and the field:
 *   "<file>:<line>:<col>: <field>: <problem> (expected .., got ..)".
 * JSON null counts as absent, as everywhere in simio.
 *
 * Every row is also expressed as the step groups the core times (step.h):
 *   prefill -> one group {batch, prompt_tokens, 0, emits}
 *   decode  -> one group {batch, 1, context_tokens, emits}
 *   step    -> its groups, every one emitting: a decode (t == 1) and a whole
 *              prefill (c == 0) sample a token; a chunk (t > 1, c > 0) is taken
 *              to be the prompt's last chunk, which samples too. The format has
 *              no way to mark a middle chunk, which would not sample.
 *   offline_batch -> no groups (n_groups 0); the engine simulation schedules it.
 *
 * Selection (MEASUREMENTS.md "Selecting rows"): --select FIELD=VALUE filters
 * must all hold, any --exclude FIELD=VALUE drops a row. VALUE is compared as
 * the field's type: integers numerically (tp=01 matches 1), measured_s as a
 * number, dtype/kv_dtype/kind by name, strings exactly (case-sensitive).
 */
#ifndef SIM_MEAS_JSON_H
#define SIM_MEAS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "model.h"
#include "serve_stats.h"
#include "status.h"
#include "step.h"
#include "workload.h"

typedef enum sim_meas_kind {
    SIM_MEAS_PREFILL = 0,
    SIM_MEAS_DECODE = 1,
    SIM_MEAS_STEP = 2,
    SIM_MEAS_OFFLINE_BATCH = 3,
    SIM_MEAS_SERVING = 4,
    SIM_MEAS_KIND_COUNT
} sim_meas_kind;

/*
 * One measurement. Strings are NUL-terminated and never NULL; absent optional strings are "".
 * They and the groups live in the set's pool (one copy of each distinct string), so a row is a
 * few hundred bytes whatever its file says: rows are compared and moved within a set, and read
 * only while the set that loaded them (or the one they were moved to) is alive. The lengths
 * are bounded as the file format says (MEAS_*_MAX in meas_json.c).
 */
typedef struct sim_meas_row {
    const char *id;             /* unique across every file loaded into one set */
    const char *source;         /* where the number comes from */
    const char *hardware;       /* hardware profile id or path */
    const char *model;          /* model id or path; a relative path resolved against the
                                   measurement file's folder (MEASUREMENTS.md) */
    const char *model_arg;      /* "model" as the row writes it (what --select model= matches) */
    int64_t tp;                 /* tensor-parallel degree, >= 1 */
    int64_t dp;                 /* data-parallel ranks (run.data_parallel), default 1 */
    int ep;                     /* expert parallelism (run.expert_parallel), default 0 */
    sim_dtype dtype;            /* weights and activations: fp16, bf16 (default) or fp8 */
    sim_dtype kv_dtype;         /* KV cache; defaults to dtype */
    const char *engine;         /* e.g. "vllm"; "" when absent */
    const char *engine_version; /* e.g. "0.6.1"; "" when absent */
    sim_meas_kind kind;
    double measured_s;       /* measured time, seconds, > 0 */
    int64_t batch;           /* sequences (prefill, decode, offline_batch); -1 when absent */
    int64_t prompt_tokens;   /* per sequence (prefill, offline_batch); -1 when absent */
    int64_t output_tokens;   /* generated per sequence (offline_batch); -1 when absent */
    int64_t context_tokens;  /* already cached per sequence (decode); -1 when absent */
    int n_groups;            /* step groups (see the top of this file); 0 for offline_batch */
    const sim_group *groups; /* n_groups of them (at most SIM_STEP_MAX_GROUPS) */
    sim_sched_cfg sched;     /* offline_batch "scheduler" overrides; every field -1 when unset */
    /* serving rows: the statistic measured and the workload (prompt_tokens, output_tokens
     * above mirror the workload's; concurrency is -1 unless closed loop) */
    sim_serve_metric metric;
    sim_workload_spec workload;
    int64_t concurrency;
    const char *trace; /* trace file, resolved against the measurement file's folder */
    const char *file;  /* file the row came from (truncated at 255 bytes) */
    int line;          /* 1-based line in that file */
    /* From the row's "run" object: the keys with meaning (MEASUREMENTS.md) the simulation does
     * not follow, as "key=value" items joined by "; " ("" when none), and the entries of
     * run.assumed that name a field the prediction uses (same form). */
    const char *unmodelled;
    const char *assumed;
} sim_meas_row;

/* A row whose strings are all "" and counts absent (-1): for checking a field name against. */
const sim_meas_row *sim_meas_row_blank(void);

/* A growable array of rows. Caller-owned: sim_meas_set_init, then sim_meas_set_free. */
typedef struct sim_meas_set {
    sim_meas_row *rows;
    size_t n;                   /* rows in use */
    size_t cap;                 /* rows allocated */
    struct sim_meas_pool *pool; /* the rows' strings and groups (NULL until a row is added) */
} sim_meas_set;

/* Makes an empty set (no allocation). */
void sim_meas_set_init(sim_meas_set *s);

/* Frees the rows and leaves an empty set. Accepts NULL and an initialized empty set. */
void sim_meas_set_free(sim_meas_set *s);

/*
 * Appends every row of the JSON Lines file at path to set. Strict: every
 * non-blank, non-comment line must be one JSON object with only the fields of
 * its kind, all of the right type and range; ids must be unique within the file
 * and against the rows already in set (e.g. from an earlier file). The
 * "scheduler" object of an offline_batch row accepts max_num_seqs,
 * max_num_batched_tokens, max_model_len, block_size (integers >= 1),
 * gpu_memory_utilization (0 < x <= 1), enable_chunked_prefill and enforce_eager
 * (booleans). Returns SIM_OK; SIM_EIO when the file cannot be read; SIM_EPARSE
 * for a line that is not JSON (or a file with a NUL byte); SIM_EINVAL for a bad
 * field; SIM_ENOMEM. On failure err holds one line naming file, line, column
 * and field, and set keeps exactly the rows it had before the call (its
 * storage may have grown).
 */
sim_status sim_meas_load(const char *path, sim_meas_set *set, struct sim_err *err /* OUT */);

/* The same for JSON Lines text in memory (len bytes; no NUL byte), named name in messages
 * and in the rows' file field. */
sim_status sim_meas_load_text(const char *name, const char *text, size_t len, sim_meas_set *set,
                              struct sim_err *err /* OUT */);

/* "prefill", "decode", "step", "offline_batch", "serving"; "?" for out-of-range values. */
/*
 * The value of a row's field as text, for grouping: strings as they are, integers
 * in decimal ("-1" when absent), dtype and kind by name, measured_s with %.17g.
 * Fields are those of the filters. Returns NULL for an unknown field; the result
 * points into the row or into buf.
 */
const char *sim_meas_field_str(const sim_meas_row *r, const char *field, char *buf, size_t cap);

const char *sim_meas_kind_name(sim_meas_kind k);

/* Parses a kind name into *out; returns SIM_EINVAL (and leaves *out alone) otherwise. */
sim_status sim_meas_kind_parse(const char *name, sim_meas_kind *out /* OUT */);

/* One --select or --exclude term: the row's field must equal value. */
typedef struct sim_meas_filter {
    char field[32];  /* one of the names listed at sim_meas_filter_parse */
    char value[256]; /* as given; parsed as the field's type when matching */
} sim_meas_filter;

/*
 * Parses "FIELD=VALUE" (split at the first '='). FIELD must be one of id,
 * source, hardware, model, tp, dtype, kv_dtype, engine, engine_version, kind,
 * measured_s, batch, prompt_tokens, output_tokens, context_tokens, metric, concurrency.
 * VALUE must
 * be non-empty and parse as the field's type: a whole decimal integer for tp,
 * batch and the token counts; a finite number for measured_s; fp16, bf16 or fp8
 * for the dtypes; a kind name for kind. Returns SIM_EINVAL with a message
 * quoting spec and naming the bad part (no '=', unknown field with a "did you
 * mean" hint, bad value).
 */
sim_status sim_meas_filter_parse(const char *spec, sim_meas_filter *out /* OUT */,
                                 struct sim_err *err /* OUT */);

/*
 * 1 when the row's field equals the filter's value compared as the field's
 * type, else 0. A row without the field (integer -1, empty string) never
 * matches; neither does a filter whose field or value does not parse.
 */
int sim_meas_filter_match(const sim_meas_filter *f, const sim_meas_row *r);

/*
 * Keeps, in place and in order, the rows that match every sel[] and no exc[];
 * returns the new set->n. Empty sel keeps everything not excluded.
 */
size_t sim_meas_select(sim_meas_set *set, const sim_meas_filter *sel, size_t n_sel,
                       const sim_meas_filter *exc, size_t n_exc);

/*
 * Moves the rows whose run.assumed names a field the prediction uses (assumed not empty)
 * from set to the end of aside, keeping both in order: such rows are reported apart and not
 * fitted (MEASUREMENTS.md, "run"). *moved (may be NULL) gets how many moved. SIM_ENOMEM
 * leaves both sets as they were.
 */
sim_status sim_meas_set_aside_assumed(sim_meas_set *set, sim_meas_set *aside,
                                      size_t *moved /* OUT */);

#endif
