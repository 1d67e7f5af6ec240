/* num_parse.c - see num_parse.h. */
#include "num_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Only the characters of a decimal number: strtod alone would take "inf", "nan", hex and blanks. */
static int decimal_chars(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!strchr("0123456789+-.eE", *s))
            return 0;
    return 1;
}

sim_status sim_num_parse_double(const char *s, double min, double max, double *out)
{
    if (!decimal_chars(s))
        return SIM_EPARSE;
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return SIM_EPARSE;
    if (v < min || v > max)
        return SIM_ERANGE;
    *out = v;
    return SIM_OK;
}

sim_status sim_num_parse_i64(const char *s, sim_num_sign sign, int64_t min, int64_t max,
                             int64_t *out)
{
    const char *p = s;
    if (*p == (sign == SIM_NUM_SIGN_PLUS ? '+' : '-'))
        p++;
    if (!(*p >= '0' && *p <= '9'))
        return SIM_EPARSE;
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return SIM_EPARSE;
    if (v < min || v > max)
        return SIM_ERANGE;
    *out = (int64_t)v;
    return SIM_OK;
}
