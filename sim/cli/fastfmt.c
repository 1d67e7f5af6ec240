/* fastfmt.c - fixed-point and integer formatting for bulk output (see fastfmt.h). */
#include "fastfmt.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

/* Writes u in decimal, zero-padded to at least width digits; returns the end. */
static char *put_u64(char *p, uint64_t u, int width)
{
    char tmp[24];
    char *e = tmp + sizeof(tmp), *s = e;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        s -= 2;
        memcpy(s, digit_pairs + 2 * r, 2);
    }
    if (u >= 10) {
        s -= 2;
        memcpy(s, digit_pairs + 2 * u, 2);
    } else {
        *--s = (char)('0' + u);
    }
    for (int n = (int)(e - s); n < width; n++)
        *p++ = '0';
    memcpy(p, s, (size_t)(e - s));
    return p + (e - s);
}

char *cli_fmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v, 1);
    }
    return put_u64(p, (uint64_t)v, 1);
}

char *cli_fmt_fixed(char *p, double v, int decimals)
{
    static const double pow10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    static const uint64_t ipow10[16] = {1ULL,
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
                                        1000000000000000ULL};
    assert(decimals >= 0 && decimals <= 15);
    double a = fabs(v);
    double s = a * pow10[decimals];
    /* Below 2^52 the scaled value's integer and fraction parts are exact doubles. */
    if (!(s < 4503599627370496.0))
        return p + snprintf(p, CLI_FMT_MAX, "%.*f", decimals, v);
    double fl = floor(s), fr = s - fl;
    /* s is the exact a x 10^d rounded once: within s 2^-53 of it. Only a fraction that
     * close to one half can round differently from printf; let printf decide those. */
    if (fabs(fr - 0.5) <= s * 0x1p-52 + 0x1p-1074)
        return p + snprintf(p, CLI_FMT_MAX, "%.*f", decimals, v);
    uint64_t n = (uint64_t)fl + (fr > 0.5);
    if (signbit(v))
        *p++ = '-';
    p = put_u64(p, n / ipow10[decimals], 1);
    if (decimals > 0) {
        *p++ = '.';
        p = put_u64(p, n % ipow10[decimals], decimals);
    }
    return p;
}
