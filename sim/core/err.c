/* err.c - the core's stdio-free error formatter (see err.h). */
#include "err.h"

#include <stdarg.h>
#include <stddef.h>

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void put_char(buf *b, char c)
{
    if (b->len + 1 < b->cap)
        b->p[b->len++] = c;
}

static void put_str(buf *b, const char *s)
{
    if (!s)
        s = "(null)";
    while (*s)
        put_char(b, *s++);
}

static void put_i64(buf *b, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    if (v < 0)
        put_char(b, '-');
    do {
        tmp[n++] = (char)('0' + (int)(u % 10ULL));
        u /= 10ULL;
    } while (u > 0ULL);
    while (n > 0)
        put_char(b, tmp[--n]);
}

void sim__errf(struct sim_err *err, const char *fmt, ...)
{
    buf b = {err->msg, 0, sizeof(err->msg)};
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            put_char(&b, *f);
            continue;
        }
        f++;
        if (*f == 's') {
            put_str(&b, va_arg(ap, const char *));
        } else if (*f == 'd') {
            put_i64(&b, va_arg(ap, int));
        } else if (f[0] == 'l' && f[1] == 'l' && f[2] == 'd') {
            put_i64(&b, va_arg(ap, long long));
            f += 2;
        } else if (*f == '%') {
            put_char(&b, '%');
        } else {
            put_char(&b, '?');
            if (!*f)
                break;
        }
    }
    va_end(ap);
    b.p[b.len] = '\0';
}
