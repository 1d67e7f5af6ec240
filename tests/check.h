/*
 * check.h - a minimal test harness: one line per failed check with file:line
 * and both values; main returns check_report() (non-zero on any failure).
 * CHECK_REL follows GSL's gsl_test_rel: a zero expected value compares
 * absolutely, and NaN/Inf must match exactly.
 */
#ifndef SIM_CHECK_H
#define SIM_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_fail_count;
static int check_count;

static inline void check_rel_at(const char *file, int line, const char *expr, double got,
                                double want, double rtol)
{
    check_count++;
    int ok;
    if (isnan(want) || isnan(got))
        ok = isnan(want) && isnan(got);
    else if (isinf(want) || isinf(got))
        ok = got == want;
    else if (want == 0.0)
        ok = fabs(got) <= rtol;
    else
        ok = fabs(got - want) <= rtol * fabs(want);
    if (!ok) {
        check_fail_count++;
        printf("FAIL %s:%d: %s: got %.17g, want %.17g (rtol %g)\n", file, line, expr, got, want,
               rtol);
    }
}

static inline void check_abs_at(const char *file, int line, const char *expr, double got,
                                double want, double atol)
{
    check_count++;
    if (!(fabs(got - want) <= atol)) {
        check_fail_count++;
        printf("FAIL %s:%d: %s: got %.17g, want %.17g (atol %g)\n", file, line, expr, got, want,
               atol);
    }
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(cond)) {                                                                             \
            check_fail_count++;                                                                    \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                 \
        }                                                                                          \
    } while (0)

#define CHECK_INT(got, want)                                                                       \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        check_count++;                                                                             \
        if (g_ != w_) {                                                                            \
            check_fail_count++;                                                                    \
            printf("FAIL %s:%d: %s: got %lld, want %lld\n", __FILE__, __LINE__, #got, g_, w_);     \
        }                                                                                          \
    } while (0)

#define CHECK_STR(got, want)                                                                       \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        check_count++;                                                                             \
        if (!g_ || strcmp(g_, w_) != 0) {                                                          \
            check_fail_count++;                                                                    \
            printf("FAIL %s:%d: %s: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, #got,          \
                   g_ ? g_ : "(null)", w_);                                                        \
        }                                                                                          \
    } while (0)

/* Substring check, for error messages. */
#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        check_count++;                                                                             \
        if (!h_ || !strstr(h_, n_)) {                                                              \
            check_fail_count++;                                                                    \
            printf("FAIL %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,             \
                   h_ ? h_ : "(null)", n_);                                                        \
        }                                                                                          \
    } while (0)

#define CHECK_REL(got, want, rtol) check_rel_at(__FILE__, __LINE__, #got, (got), (want), (rtol))
#define CHECK_ABS(got, want, atol) check_abs_at(__FILE__, __LINE__, #got, (got), (want), (atol))

static inline int check_report(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_fail_count);
    return check_fail_count ? 1 : 0;
}

#endif
