/* json_writer.c - see json_writer.h. */
#include "json_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ---- */

__extension__ typedef unsigned __int128 jw_u128;

static const uint64_t pow10_u64[18] = {1ULL,
                                       10ULL,
                                       100ULL,
                                       1000ULL,
                                       10000ULL,
                                       100000ULL,
                                       1000000ULL,
                                       10000000ULL,
                                       100000000ULL,
                                       1000000000ULL,
                                       10000000000ULL,
                                       100000000000ULL,
                                       1000000000000ULL,
                                       10000000000000ULL,
                                       100000000000000ULL,
                                       1000000000000000ULL,
                                       10000000000000000ULL,
                                       100000000000000000ULL};

/* 5^0 .. 5^27 (5^27 < 2^63). */
static const uint64_t pow5_u64[28] = {1ULL,
                                      5ULL,
                                      25ULL,
                                      125ULL,
                                      625ULL,
                                      3125ULL,
                                      15625ULL,
                                      78125ULL,
                                      390625ULL,
                                      1953125ULL,
                                      9765625ULL,
                                      48828125ULL,
                                      244140625ULL,
                                      1220703125ULL,
                                      6103515625ULL,
                                      30517578125ULL,
                                      152587890625ULL,
                                      762939453125ULL,
                                      3814697265625ULL,
                                      19073486328125ULL,
                                      95367431640625ULL,
                                      476837158203125ULL,
                                      2384185791015625ULL,
                                      11920928955078125ULL,
                                      59604644775390625ULL,
                                      298023223876953125ULL,
                                      1490116119384765625ULL,
                                      7450580596923828125ULL};

/* The definition: printf's %.15g, %.16g, %.17g, the first that strtod reads back as v. */
static char *put_number_printf(char *p, double v)
{
    char buf[SIM_JW_NUMBER_MAX];
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (n < 0 || (size_t)n >= sizeof(buf) || strtod(buf, NULL) == v)
            break;
    }
    if (n < 0 || (size_t)n >= sizeof(buf))
        n = 0;
    memcpy(p, buf, (size_t)n);
    return p + n;
}

/* Writes g (prec significant digits, 10^(prec-1) <= g < 10^prec) with decimal exponent x as
 * printf's %.{prec}g writes it: fixed when -4 <= x < prec, else d.ddde+XX; no trailing zeros. */
static char *put_g(char *out, uint64_t g, int prec, int x)
{
    static const char pairs[201] = "00010203040506070809"
                                   "10111213141516171819"
                                   "20212223242526272829"
                                   "30313233343536373839"
                                   "40414243444546474849"
                                   "50515253545556575859"
                                   "60616263646566676869"
                                   "70717273747576777879"
                                   "80818283848586878889"
                                   "90919293949596979899";
    char d[20];
    int i = prec;
    for (; i >= 2; i -= 2) {
        const unsigned r = (unsigned)(g % 100);
        g /= 100;
        memcpy(d + i - 2, pairs + 2 * r, 2);
    }
    if (i == 1)
        d[0] = (char)('0' + g);
    int nd = prec;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    if (x < -4 || x >= prec) {
        *out++ = d[0];
        if (nd > 1) {
            *out++ = '.';
            memcpy(out, d + 1, (size_t)(nd - 1));
            out += nd - 1;
        }
        *out++ = 'e';
        *out++ = x < 0 ? '-' : '+';
        const int ax = x < 0 ? -x : x;
        if (ax >= 100)
            *out++ = (char)('0' + ax / 100);
        *out++ = (char)('0' + ax / 10 % 10);
        *out++ = (char)('0' + ax % 10);
    } else if (x >= 0) {
        memcpy(out, d, (size_t)(x + 1));
        out += x + 1;
        if (nd > x + 1) {
            *out++ = '.';
            memcpy(out, d + x + 1, (size_t)(nd - x - 1));
            out += nd - x - 1;
        }
    } else {
        *out++ = '0';
        *out++ = '.';
        for (int z = -1; z > x; z--)
            *out++ = '0';
        memcpy(out, d, (size_t)nd);
        out += nd;
    }
    return out;
}

/* The exact value |v| x 10^q, q = 16 - x, split into its 17-digit integer part and the
 * fraction rem / 2^-s (s < 0; none when s >= 0): v = m 2^e, so |v| 10^q = m 5^q 2^(e+q). */
typedef struct scaled {
    uint64_t m, n;
    jw_u128 mq, rem;
    int e, q, s, x;
} scaled;

/* Finds x = floor(log10 |v|) and the split; 0 when q is outside 0..27 (5^q in 64 bits). */
static int scale(scaled *sc)
{
    /* floor(log10 |v|) within one to start: the binary exponent times log10(2) ~ 1233 / 4096. */
    const int ub = sc->e + 52; /* the unbiased binary exponent */
    int x = ub >= 0 ? (ub * 1233) >> 12 : -((-ub * 1233 + 4095) >> 12);
    for (int tries = 0; tries < 3; tries++) {
        const int q = 16 - x;
        if (q < 0 || q > 27)
            return 0;
        const jw_u128 mq = (jw_u128)sc->m * pow5_u64[q];
        const int s = sc->e + q;
        const jw_u128 n = s >= 0 ? mq << s : mq >> -s;
        if (n < pow10_u64[16]) {
            x--;
        } else if (n >= pow10_u64[17]) {
            x++;
        } else {
            sc->n = (uint64_t)n;
            sc->rem = s >= 0 ? 0 : mq & ((((jw_u128)1) << -s) - 1);
            sc->mq = mq;
            sc->q = q;
            sc->s = s;
            sc->x = x;
            return 1;
        }
    }
    return 0;
}

/*
 * The fast path of sim_jw_put_number for normal |v| in [1e-11, 1e17): exact integer arithmetic
 * on |v| 10^q. For each precision, the digits are the exact value rounded half to even (as
 * printf rounds), and the candidate reads back as v (as strtod rounds) when it lies within half
 * a gap of v (the gap below is half as wide at a power of two), or on that bound with an even
 * mantissa. NULL when v is outside the range.
 */
static char *put_number_exact(char *out, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    const int be = (int)((bits >> 52) & 0x7ff);
    const double a = fabs(v);
    if (be == 0 || be == 0x7ff || !(a >= 1e-11 && a < 1e17))
        return NULL;
    scaled sc = {.m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52), .e = be - 1075};
    if (!scale(&sc))
        return NULL;
    /* In units of 2^-t (t >= 0), where the quarter gap is an integer. */
    const int s = sc.s, t = s < 2 ? 2 - s : 0;
    const jw_u128 vt = sc.mq << (s + t);
    const jw_u128 half_up = (jw_u128)pow5_u64[sc.q] << (s - 1 + t);
    const jw_u128 half_down = sc.m == (1ULL << 52) && be > 1 ? half_up >> 1 : half_up;
    const int even = (sc.m & 1) == 0;
    if (signbit(v))
        *out++ = '-';
    const uint64_t n16 = sc.n / 10, n15 = sc.n / 100;
    for (int prec = 15; prec <= 17; prec++) {
        const uint64_t d = prec == 15 ? 100 : prec == 16 ? 10 : 1;
        uint64_t g = prec == 15 ? n15 : prec == 16 ? n16 : sc.n;
        const uint64_t r = sc.n - g * d;
        /* The sign of (r + fraction) - d / 2, doubled. */
        int cmp;
        if (s >= 0) {
            cmp = (2 * r > d) - (2 * r < d);
        } else {
            const jw_u128 lhs = ((jw_u128)(2 * r) << -s) + (sc.rem << 1), rhs = (jw_u128)d << -s;
            cmp = (lhs > rhs) - (lhs < rhs);
        }
        if (cmp > 0 || (cmp == 0 && (g & 1)))
            g++;
        if (prec < 17) {
            const jw_u128 dt = (jw_u128)(g * d) << t;
            const jw_u128 off = dt >= vt ? dt - vt : vt - dt, half = dt >= vt ? half_up : half_down;
            if (!(off < half || (off == half && even)))
                continue;
        }
        int x = sc.x;
        if (g == pow10_u64[prec]) {
            g /= 10;
            x++;
        }
        return put_g(out, g, prec, x);
    }
    return NULL; /* not reached: %.17g always reads back */
}

char *sim_jw_put_number(char *p, double v)
{
    if (!isfinite(v)) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    if (v == 0.0) {
        if (signbit(v))
            *p++ = '-';
        *p++ = '0';
        return p;
    }
    char *end = put_number_exact(p, v);
    return end ? end : put_number_printf(p, v);
}

/* ---- the writer ---- */

/* A FILE writer's buffer: flushed when the next piece would not fit. */
#define JW_FILE_CHUNK ((size_t)64 * 1024)

static void init(sim_jw *w, FILE *f, sim_jw_style style)
{
    memset(w, 0, sizeof(*w));
    w->f = f;
    w->style = style;
    w->err = SIM_OK;
}

void sim_jw_init_buffer(sim_jw *w, sim_jw_style style) { init(w, NULL, style); }

void sim_jw_init_file(sim_jw *w, FILE *f, sim_jw_style style) { init(w, f, style); }

static void fail(sim_jw *w, sim_status st)
{
    if (w->err == SIM_OK)
        w->err = st;
}

static void write_out(sim_jw *w)
{
    if (w->len > 0 && w->f && fwrite(w->buf, 1, w->len, w->f) != w->len)
        fail(w, SIM_EIO);
    w->len = 0;
}

/* Makes room for n more bytes: a FILE writer flushes first, then the buffer grows. */
static int grow(sim_jw *w, size_t n)
{
    if (w->err != SIM_OK)
        return 0;
    if (w->f && w->len > 0) {
        write_out(w);
        if (w->err != SIM_OK)
            return 0;
        if (n <= w->cap)
            return 1;
    }
    size_t cap = w->cap ? w->cap : w->f ? JW_FILE_CHUNK : 256;
    while (cap < w->len + n) {
        if (cap > SIZE_MAX / 2) {
            fail(w, SIM_ENOMEM);
            return 0;
        }
        cap *= 2;
    }
    char *nb = realloc(w->buf, cap);
    if (!nb) {
        fail(w, SIM_ENOMEM);
        return 0;
    }
    w->buf = nb;
    w->cap = cap;
    return 1;
}

static inline int reserve(sim_jw *w, size_t n)
{
    return (w->err == SIM_OK && w->len + n <= w->cap) || grow(w, n);
}

/* The length of the valid UTF-8 sequence at u (u < end), 0 when it is not one. */
static size_t utf8_len(const unsigned char *u, const unsigned char *end)
{
    const unsigned c = u[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if ((size_t)(end - u) < n || u[1] < lo || u[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((u[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* A quoted, escaped string. */
static void put_string(sim_jw *w, const char *s)
{
    const size_t n = strlen(s);
    if (n > (SIZE_MAX - 2) / 6 || !reserve(w, 6 * n + 2)) {
        fail(w, SIM_ENOMEM);
        return;
    }
    char *p = w->buf + w->len;
    *p++ = '"';
    const unsigned char *u = (const unsigned char *)s, *end = u + n;
    while (u < end) {
        const unsigned c = *u;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            *p++ = (char)c;
            u++;
            continue;
        }
        if (c >= 0x80) {
            const size_t k = utf8_len(u, end);
            if (k) {
                memcpy(p, u, k);
                p += k;
                u += k;
            } else {
                memcpy(p, "\\ufffd", 6);
                p += 6;
                u++;
            }
            continue;
        }
        *p++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *p++ = (char)c;
            break;
        case '\b':
            *p++ = 'b';
            break;
        case '\f':
            *p++ = 'f';
            break;
        case '\n':
            *p++ = 'n';
            break;
        case '\r':
            *p++ = 'r';
            break;
        case '\t':
            *p++ = 't';
            break;
        default:
            *p++ = 'u';
            *p++ = '0';
            *p++ = '0';
            *p++ = "0123456789abcdef"[c >> 4];
            *p++ = "0123456789abcdef"[c & 15];
        }
        u++;
    }
    *p++ = '"';
    w->len = (size_t)(p - w->buf);
}

/* Before a member or an element: the comma and the layout's whitespace. */
static void separate(sim_jw *w)
{
    if (w->depth == 0)
        return;
    if (!reserve(w, (size_t)w->depth + 3))
        return;
    char *p = w->buf + w->len;
    const int lines = w->open[w->depth - 1].lines;
    unsigned char *has = &w->open[w->depth - 1].has_items;
    if (*has)
        *p++ = ',';
    if (w->style == SIM_JW_TABS) {
        if (w->open[w->depth - 1].object) {
            *p++ = '\n';
            memset(p, '\t', (size_t)w->depth);
            p += w->depth;
        } else if (*has) {
            *p++ = ' ';
        }
    } else if (lines == SIM_JW_LINES_AROUND || (lines == SIM_JW_LINES_BETWEEN && *has)) {
        *p++ = '\n';
    }
    *has = 1;
    w->len = (size_t)(p - w->buf);
}

void sim_jw_key(sim_jw *w, const char *key)
{
    if (w->err != SIM_OK)
        return;
    if (w->depth == 0 || !w->open[w->depth - 1].object || w->after_key || !key) {
        fail(w, SIM_EINVAL);
        return;
    }
    separate(w);
    put_string(w, key);
    if (!reserve(w, 2))
        return;
    w->buf[w->len++] = ':';
    if (w->style == SIM_JW_TABS)
        w->buf[w->len++] = '\t';
    w->after_key = 1;
}

/* Before a value: its key in an object (or the key already written), else the separator.
 * Returns 0 after a failure. */
static int value_start(sim_jw *w, const char *key)
{
    if (w->err != SIM_OK)
        return 0;
    if (key) {
        sim_jw_key(w, key);
    } else if (w->after_key) {
        w->after_key = 0;
        return 1;
    } else if (w->depth > 0 && w->open[w->depth - 1].object) {
        fail(w, SIM_EINVAL); /* a member without a key */
    } else {
        separate(w);
    }
    w->after_key = 0;
    return w->err == SIM_OK;
}

static void put_raw(sim_jw *w, const char *s, size_t n)
{
    if (!reserve(w, n))
        return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void begin(sim_jw *w, const char *key, int object, sim_jw_lines lines)
{
    if (!value_start(w, key))
        return;
    if (w->depth == SIM_JW_MAX_DEPTH) {
        fail(w, SIM_EINVAL);
        return;
    }
    put_raw(w, object ? "{" : "[", 1);
    w->open[w->depth].object = (unsigned char)object;
    w->open[w->depth].lines = (unsigned char)lines;
    w->open[w->depth].has_items = 0;
    w->depth++;
}

static void end(sim_jw *w, int object)
{
    if (w->err != SIM_OK)
        return;
    if (w->depth == 0 || w->open[w->depth - 1].object != object || w->after_key) {
        fail(w, SIM_EINVAL);
        return;
    }
    if (!reserve(w, (size_t)w->depth + 2))
        return;
    char *p = w->buf + w->len;
    if (w->style == SIM_JW_TABS && object) {
        *p++ = '\n';
        memset(p, '\t', (size_t)(w->depth - 1));
        p += w->depth - 1;
    } else if (w->style == SIM_JW_COMPACT && w->open[w->depth - 1].lines == SIM_JW_LINES_AROUND) {
        *p++ = '\n';
    }
    *p++ = object ? '}' : ']';
    w->len = (size_t)(p - w->buf);
    w->depth--;
}

void sim_jw_object_begin(sim_jw *w, const char *key) { begin(w, key, 1, SIM_JW_LINES_NONE); }

void sim_jw_object_end(sim_jw *w) { end(w, 1); }

void sim_jw_array_begin(sim_jw *w, const char *key) { begin(w, key, 0, SIM_JW_LINES_NONE); }

void sim_jw_array_begin_lines(sim_jw *w, const char *key, sim_jw_lines lines)
{
    begin(w, key, 0, lines);
}

void sim_jw_array_end(sim_jw *w) { end(w, 0); }

void sim_jw_str(sim_jw *w, const char *key, const char *s)
{
    if (value_start(w, key))
        put_string(w, s);
}

void sim_jw_num(sim_jw *w, const char *key, double v)
{
    if (!value_start(w, key) || !reserve(w, SIM_JW_NUMBER_MAX))
        return;
    w->len = (size_t)(sim_jw_put_number(w->buf + w->len, v) - w->buf);
}

/* Writes u in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t u)
{
    char tmp[24];
    char *s = tmp + sizeof(tmp);
    do {
        *--s = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    const size_t n = (size_t)(tmp + sizeof(tmp) - s);
    memcpy(p, s, n);
    return p + n;
}

void sim_jw_int(sim_jw *w, const char *key, int64_t v)
{
    if (!value_start(w, key) || !reserve(w, 24))
        return;
    char *p = w->buf + w->len;
    if (v < 0) {
        *p++ = '-';
        p = put_u64(p, (uint64_t)0 - (uint64_t)v);
    } else {
        p = put_u64(p, (uint64_t)v);
    }
    w->len = (size_t)(p - w->buf);
}

void sim_jw_uint(sim_jw *w, const char *key, uint64_t v)
{
    if (!value_start(w, key) || !reserve(w, 24))
        return;
    w->len = (size_t)(put_u64(w->buf + w->len, v) - w->buf);
}

void sim_jw_bool(sim_jw *w, const char *key, int v)
{
    if (value_start(w, key))
        put_raw(w, v ? "true" : "false", v ? 4 : 5);
}

void sim_jw_null(sim_jw *w, const char *key)
{
    if (value_start(w, key))
        put_raw(w, "null", 4);
}

sim_status sim_jw_flush(sim_jw *w)
{
    if (w->f) {
        write_out(w);
        if (fflush(w->f) != 0)
            fail(w, SIM_EIO);
    }
    return w->err;
}

sim_status sim_jw_finish(sim_jw *w)
{
    if (w->err == SIM_OK && (w->depth != 0 || w->after_key))
        fail(w, SIM_EINVAL);
    put_raw(w, "\n", 1);
    return sim_jw_flush(w);
}

char *sim_jw_take(sim_jw *w, size_t *len)
{
    char *s = NULL;
    if (reserve(w, 1)) {
        w->buf[w->len] = '\0';
        s = w->buf;
        if (len)
            *len = w->len;
        w->buf = NULL;
    }
    sim_jw_free(w);
    return s;
}

void sim_jw_free(sim_jw *w)
{
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}
