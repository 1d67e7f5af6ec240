/*
 * fastfmt.h - number formatting for bulk text output (sweep CSV), about ten
 * times faster than printf. cli_fmt_fixed() writes exactly what
 * printf("%.*f", decimals, v) writes, including the rounding of ties to even on
 * the exact binary value: the fast path scales by 10^decimals and rounds, and
 * the rare values whose scaled fraction lies within one rounding error of one
 * half, and values too large for the fast path, go to snprintf
 * (tests/test_sweep.c compares both on a million values).
 */
#ifndef SIM_FASTFMT_H
#define SIM_FASTFMT_H

#include <stdint.h>

/* Longest output of cli_fmt_fixed() for finite |v| < 1e300 and decimals <= 15, plus NUL. */
#define CLI_FMT_MAX 340

/*
 * Writes v with decimals (0..15) digits after the point at p, without a NUL,
 * and returns the end. p must have CLI_FMT_MAX bytes. Non-finite values are
 * written as printf would ("nan", "inf"); callers check isfinite() first.
 */
char *cli_fmt_fixed(char *p, double v, int decimals);

/* Writes the decimal integer v at p (at most 20 bytes) and returns the end. */
char *cli_fmt_i64(char *p, int64_t v);

#endif
