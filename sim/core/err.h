/*
 * err.h - message formatting for struct sim_err inside the pure core.
 *
 * The core may not use stdio, so this is a minimal formatter that understands
 * %s, %d, %lld and %% only; doubles are formatted at the edges (simio, CLI).
 * Messages are truncated to fit sim_err.msg and always NUL-terminated.
 */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include "status.h"

void sim__errf(struct sim_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
