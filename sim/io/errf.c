/* errf.c - see errf.h. */
#include "errf.h"

#include <stdio.h>

void sim_io_vfmt(char *dst, size_t cap, const char *loc, size_t msg_cap, const char *fmt,
                 va_list ap)
{
    const int n = snprintf(dst, cap, "%s", loc);
    const size_t used = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    size_t room = cap - used;
    if (msg_cap > 0 && msg_cap < room)
        room = msg_cap;
    vsnprintf(dst + used, room, fmt, ap);
}

void sim_io_errf(struct sim_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_io_vfmt(err->msg, sizeof(err->msg), "", 0, fmt, ap);
    va_end(ap);
}

sim_status sim_io_enomem(struct sim_err *err, const char *what)
{
    sim_io_errf(err, "%s: out of memory", what);
    return SIM_ENOMEM;
}
