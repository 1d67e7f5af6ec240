/*
 * atomic_write.h - writes a file so that readers see either the old or the
 * complete new content: write <path>.tmp.<pid>, fsync, rename over path. On any
 * failure the temporary file is removed and path is untouched. A path that exists
 * and is not a regular file (a device, a FIFO, a directory, a symbolic link) is
 * refused with SIM_EINVAL and left alone.
 */
#ifndef SIM_ATOMIC_WRITE_H
#define SIM_ATOMIC_WRITE_H

#include <stddef.h>

#include "status.h"

sim_status sim_write_atomic(const char *path, const char *data, size_t len,
                            struct sim_err *err /* OUT */);

/* Whether sim_write_atomic(path) would be refused for the path itself (an empty name, an
 * existing file that is not a regular file, a folder that does not exist or cannot take a
 * file): the same messages, without writing anything. For commands that write two files, so
 * that a refusal of the second leaves the first untouched (import-bench --out and --trace). */
sim_status sim_write_check(const char *path, struct sim_err *err /* OUT */);

#endif
