/*
 * units.h - named unit constants and conversions.
 *
 * Every physical quantity inside llmstep is a double in SI base units: seconds,
 * bytes, FLOPs, bytes per second, FLOPs per second. Ratios are fractions in 0..1.
 * Scaled units (ms, GB, TFLOP/s) appear only at the edges, in report code, and
 * always through the named constants below so decimal versus binary is explicit.
 */
#ifndef SIM_UNITS_H
#define SIM_UNITS_H

#define SIM_KIB  1024.0
#define SIM_MIB  1048576.0
#define SIM_GIB  1073741824.0
#define SIM_KB   1e3
#define SIM_MB   1e6
#define SIM_GB   1e9
#define SIM_TB   1e12
#define SIM_GIGA 1e9
#define SIM_TERA 1e12

static inline double sim_s_to_ms(double s) { return s * 1e3; }
/* Milliseconds as given (--slo-ttft-ms, the web planner's slo_ttft_ms) to seconds. */
static inline double sim_ms_to_s(double ms) { return ms * 1e-3; }

static inline double sim_s_to_us(double s) { return s * 1e6; }

#endif
