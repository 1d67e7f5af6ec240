/*
 * num_parse.h - the strict text-to-number parsers of simio (STYLE 9, redis
 * string2d): the benchmark readers, the kernel-table CSV reader and the --select
 * terms all read numbers through these two functions.
 *
 * A number is the whole string, with nothing but decimal number characters: no
 * blanks, no "inf", "nan" or hex, no trailing text. Doubles must be finite and
 * not overflow or underflow (strtod's ERANGE); integers must fit int64_t. Then
 * the value must lie in [min, max].
 */
#ifndef SIM_NUM_PARSE_H
#define SIM_NUM_PARSE_H

#include <stdint.h>

#include "status.h"

/* Which optional sign an integer may carry: the CSV tables take "-3", --select takes "+3". */
typedef enum sim_num_sign {
    SIM_NUM_SIGN_MINUS = 0, /* "7" or "-3"; "+7" is not a number */
    SIM_NUM_SIGN_PLUS = 1,  /* "7" or "+7"; "-3" is not a number */
    SIM_NUM_SIGN_COUNT
} sim_num_sign;

/*
 * Parses s as a decimal floating-point number ("2.5", "-4e-3", "+.5"). Returns
 * SIM_OK with *out set, SIM_EPARSE when s is not a finite decimal number, or
 * SIM_ERANGE when it is outside [min, max]; *out is unchanged on failure.
 */
sim_status sim_num_parse_double(const char *s, double min, double max, double *out /* OUT */);

/*
 * Parses s as a decimal integer: one optional sign as sign allows, then digits.
 * Returns SIM_OK, SIM_EPARSE (not such an integer, or beyond int64_t) or
 * SIM_ERANGE (outside [min, max]); *out is unchanged on failure.
 */
sim_status sim_num_parse_i64(const char *s, sim_num_sign sign, int64_t min, int64_t max,
                             int64_t *out /* OUT */);

#endif
