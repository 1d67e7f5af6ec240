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

/* kind is "models", "hwprofiles", "engines" or "calibrations". Writes the file path to out. */
sim_status sim_path_resolve(const char *data_dir, const char *kind, const char *name, char *out,
                            size_t cap, struct sim_err *err /* OUT */);

/*
 * Lists the ids (file names without .json) in <data_dir>/<kind>, sorted. Fills
 * up to cap entries of ids (each up to 64 bytes) and returns the count, or -1
 * when the directory cannot be read.
 */
int sim_path_list(const char *data_dir, const char *kind, char (*ids)[64], int cap);

/*
 * Lists the sub-folders of dir (names not starting with '.', shorter than 256 bytes; symbolic
 * links to folders count), sorted. Fills up to cap entries of names and returns the count,
 * or -1 when dir cannot be read.
 */
int sim_path_list_dirs(const char *dir, char (*names)[256], int cap);

/*
 * Input files are regular files: a directory reads as an error, a device or a pipe never
 * ends, and opening a FIFO blocks. Returns SIM_OK for a regular file (or one that does not
 * exist yet, which opening then reports), SIM_EIO with "<path>: not a regular file" else.
 */
sim_status sim_path_check_regular(const char *path, struct sim_err *err /* OUT */);

/* The folder of path ("." for a bare name), resolved to an absolute path without links, into
 * out (cap bytes). Returns 0 when it does not exist or does not fit. */
int sim_path_folder(const char *path, char *out, size_t cap);

/* 1 when paths a and b name the same file: the same resolved folder and name, or (both
 * existing) the same device and inode (a hard link); 0 otherwise. For outputs that must not
 * replace an input. */
int sim_path_same(const char *a, const char *b);

#endif
