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

/* Counts one check and, when ok is 0, one failure; returns ok. Every CHECK goes through it. */
static inline int check_tally(int ok)
{
    check_count++;
    if (!ok)
        check_fail_count++;
    return ok;
}

/* A numeric comparison: prints both values and the tolerance (tol_name rtol or atol) on failure. */
static inline void check_num_at(const char *file, int line, const char *expr, int ok, double got,
                                double want, const char *tol_name, double tol)
{
    if (!check_tally(ok))
        printf("FAIL %s:%d: %s: got %.17g, want %.17g (%s %g)\n", file, line, expr, got, want,
               tol_name, tol);
}

static inline void check_rel_at(const char *file, int line, const char *expr, double got,
                                double want, double rtol)
{
    int ok;
    if (isnan(want) || isnan(got))
        ok = isnan(want) && isnan(got);
    else if (isinf(want) || isinf(got))
        ok = got == want;
    else if (want == 0.0)
        ok = fabs(got) <= rtol;
    else
        ok = fabs(got - want) <= rtol * fabs(want);
    check_num_at(file, line, expr, ok, got, want, "rtol", rtol);
}

static inline void check_abs_at(const char *file, int line, const char *expr, double got,
                                double want, double atol)
{
    check_num_at(file, line, expr, fabs(got - want) <= atol, got, want, "atol", atol);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!check_tally(!!(cond)))                                                                \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                 \
    } while (0)

#define CHECK_INT(got, want)                                                                       \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        if (!check_tally(g_ == w_))                                                                \
            printf("FAIL %s:%d: %s: got %lld, want %lld\n", __FILE__, __LINE__, #got, g_, w_);     \
    } while (0)

#define CHECK_STR(got, want)                                                                       \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        if (!check_tally(g_ && strcmp(g_, w_) == 0))                                               \
            printf("FAIL %s:%d: %s: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, #got,          \
                   g_ ? g_ : "(null)", w_);                                                        \
    } while (0)

/* Substring check, for error messages. */
#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!check_tally(h_ && strstr(h_, n_) != NULL))                                            \
            printf("FAIL %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,             \
                   h_ ? h_ : "(null)", n_);                                                        \
    } while (0)

#define CHECK_REL(got, want, rtol) check_rel_at(__FILE__, __LINE__, #got, (got), (want), (rtol))
#define CHECK_ABS(got, want, atol) check_abs_at(__FILE__, __LINE__, #got, (got), (want), (atol))

static inline int check_report(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_fail_count);
    return check_fail_count ? 1 : 0;
}

#endif
