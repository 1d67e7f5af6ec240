/*
 * errf.h - printf-style formatting into a struct sim_err for simio. (The core has
 * its own stdio-free sim__errf; calibrate/ keeps its own because it links no simio.)
 */
#ifndef SIM_ERRF_H
#define SIM_ERRF_H

#include "status.h"

/* Formats the message into err->msg, truncating to fit. */
void sim_io_errf(struct sim_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
