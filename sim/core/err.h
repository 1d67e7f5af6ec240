/*
 * err.h - the one message formatter of llmstep. Every message written into a struct
 * sim_err (core, simio, simlib, calibrate), the library's llmstep_error, the kernel
 * validation's messages and notes, and the CLI's stderr lines are formatted by sim_vfmt;
 * the wrappers only choose the destination and put a location ("<file>:<line>: ") in
 * front. It formats into memory with vsnprintf: no I/O and no allocation, so the pure core
 * may use it (tests/purity.sh checks simcore's undefined symbols).
 */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include <stdarg.h>
#include <stddef.h>

#include "status.h"

/*
 * Writes loc, then the message formatted from fmt and ap, into dst (cap > 0 bytes),
 * always NUL-terminated. The whole is cut to cap - 1 bytes; when msg_cap > 0 the
 * message alone is also cut to msg_cap - 1 bytes, the limit the benchmark and JSON
 * loaders have always put on the part after the location.
 */
void sim_vfmt(char *dst, size_t cap, const char *loc, size_t msg_cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* Formats the message into dst (cap > 0 bytes), truncating to fit. */
void sim_fmt(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Formats the message into err->msg, truncating to fit. */
void sim_errf(struct sim_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes "<what>: out of memory" into err and returns SIM_ENOMEM. */
sim_status sim_enomem(struct sim_err *err, const char *what);

#endif
