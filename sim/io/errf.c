/* errf.c - see errf.h. */
#include "errf.h"

#include <stdarg.h>
#include <stdio.h>

void sim_io_errf(struct sim_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
}
