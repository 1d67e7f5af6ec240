/*
 * errf.h - the one printf-style formatter of simio. Every message simio writes into a
 * struct sim_err, and every note or figure source it formats, goes through
 * sim_io_vfmt; the wrappers only put a location ("<file>:<line>: ") in front. (The
 * core has its own stdio-free sim__errf; calibrate/ keeps its own because it links no
 * simio.)
 */
#ifndef SIM_ERRF_H
#define SIM_ERRF_H

#include <stdarg.h>
#include <stddef.h>

#include "status.h"

/*
 * Writes loc, then the message formatted from fmt and ap, into dst (cap > 0 bytes),
 * always NUL-terminated. The whole is cut to cap - 1 bytes; when msg_cap > 0 the
 * message alone is also cut to msg_cap - 1 bytes, the limit the benchmark and JSON
 * loaders have always put on the part after the location.
 */
void sim_io_vfmt(char *dst, size_t cap, const char *loc, size_t msg_cap, const char *fmt,
                 va_list ap) __attribute__((format(printf, 5, 0)));

/* Formats the message into err->msg, truncating to fit. */
void sim_io_errf(struct sim_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes "<what>: out of memory" into err and returns SIM_ENOMEM. */
sim_status sim_io_enomem(struct sim_err *err, const char *what);

#endif
