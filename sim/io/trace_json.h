/*
 * trace_json.h - reads a request trace for `llmstep serve --trace` and for serving
 * measurements: JSON Lines, one request a line,
 *   {"arrival_s": seconds from the start (>= 0), "prompt_tokens": n >= 1,
 *    "output_tokens": n >= 1, optional "prefix_tokens": 0 <= p <= prompt_tokens with
 *    "prefix_group": g >= 0 (the first p prompt tokens are those of every request of group g:
 *    a system prompt, a conversation's history; sched_v1.h, "Prefix caching"), optional
 *    "session": true (the line is a turn of conversation prefix_group: its answer is part of
 *    the history the next turn resends)}
 * in order of arrival (a line arriving before the previous one is an error). Blank lines
 * and lines starting with '#' are skipped; unknown keys are errors. Every message names
 * file, line, column and field.
 */
#ifndef SIM_TRACE_JSON_H
#define SIM_TRACE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "workload.h"

/* Most requests one trace may hold. */
#define SIM_TRACE_MAX_REQUESTS 10000000

/*
 * Loads the trace at path into a new array *out of *n requests (inputs filled, outputs
 * zero). The caller frees *out with free(). On failure *out is NULL, *n 0, and err holds
 * one line; SIM_EIO, SIM_EPARSE, SIM_EINVAL (a bad field, an empty trace, unsorted
 * arrivals) or SIM_ENOMEM.
 */
sim_status sim_trace_load(const char *path, sim_request **out /* OUT */, int64_t *n /* OUT */,
                          struct sim_err *err /* OUT */);

struct sim_jctx;
/*
 * Room for one more request line in a growing array of elem-byte entries (*arr, *cap; n
 * used): the SIM_TRACE_MAX_REQUESTS limit (a message at ctx's line), then doubling from 1024.
 * SIM_OK, SIM_EINVAL or SIM_ENOMEM. The readers of request files (this one, bench_lss.h)
 * share it.
 */
sim_status sim_trace_grow(const struct sim_jctx *ctx, void **arr, int64_t *cap, int64_t n,
                          size_t elem);

#endif
