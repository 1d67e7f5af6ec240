/* err.c - the one message formatter (see err.h). */
#include "err.h"

#include <stdio.h> /* vsnprintf only: formatting into memory, no I/O */

void sim_vfmt(char *dst, size_t cap, const char *loc, size_t msg_cap, const char *fmt, va_list ap)
{
    const int n = snprintf(dst, cap, "%s", loc ? loc : "");
    const size_t used = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    size_t room = cap - used;
    if (msg_cap > 0 && msg_cap < room)
        room = msg_cap;
    vsnprintf(dst + used, room, fmt, ap);
}

void sim_fmt(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(dst, cap, "", 0, fmt, ap);
    va_end(ap);
}

void sim_errf(struct sim_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_vfmt(err->msg, sizeof(err->msg), "", 0, fmt, ap);
    va_end(ap);
}

sim_status sim_enomem(struct sim_err *err, const char *what)
{
    sim_errf(err, "%s: out of memory", what);
    return SIM_ENOMEM;
}
