/*
 * paths.h - resolves model and hardware names to files.
 *
 * A name containing '/' or ending in ".json" is a path. Otherwise it is an id,
 * looked up as <data>/models/<id>.json or <data>/hwprofiles/<id>.json, where
 * <data> is $LLMSTEP_DATA_DIR when set, else the source tree the binary was
 * built from. Ids are restricted to [A-Za-z0-9._-] so they cannot escape.
 */
#ifndef SIM_PATHS_H
#define SIM_PATHS_H

#include <stddef.h>

#include "status.h"

/* kind is "models" or "hwprofiles". Writes the file path to out. */
sim_status sim_path_resolve(const char *data_dir, const char *kind, const char *name, char *out,
                            size_t cap, struct sim_err *err /* OUT */);

/*
 * Lists the ids (file names without .json) in <data_dir>/<kind>, sorted. Fills
 * up to cap entries of ids (each up to 64 bytes) and returns the count, or -1
 * when the directory cannot be read.
 */
int sim_path_list(const char *data_dir, const char *kind, char (*ids)[64], int cap);

#endif
