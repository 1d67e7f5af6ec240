/*
 * cache.h - model configs, hardware profiles, engine profiles and calibrations loaded once
 * each: the first request for a name resolves it (paths.h) and loads the file; later ones
 * for the same resolved path return the loaded object. Used by the library's context and by
 * the measurement predictions, which name the same few files for hundreds of rows.
 * Objects stay valid until sim_cache_free. Not thread-safe.
 */
#ifndef SIM_CACHE_H
#define SIM_CACHE_H

#include <stddef.h>

#include "calib_json.h"
#include "engine.h"
#include "hw.h"
#include "model.h"
#include "status.h"

typedef struct sim_cache sim_cache;

/* A cache resolving ids in data_dir (copied). NULL when out of memory. */
sim_cache *sim_cache_alloc(const char *data_dir);
void sim_cache_free(sim_cache *c);
const char *sim_cache_data_dir(const sim_cache *c);
/* Files loaded so far. */
size_t sim_cache_size(const sim_cache *c);

/* The file of loaded entry i (0 .. sim_cache_size - 1), or NULL for an entry that is no file
 * (a profile with a calibration's figures applied) or i out of range. */
const char *sim_cache_file_at(const sim_cache *c, size_t i);

/*
 * An output must not replace a file the command read (issue 27). SIM_EINVAL with "<who>: <opt>
 * <path> is the input <file>; it would be replaced" when path names a file c loaded (c may be
 * NULL) or one of inputs[0 .. n) (NULL and empty entries skipped), compared as sim_path_same
 * does (the same folder and name, or the same inode); else SIM_OK. The one check behind the
 * CLI's cli_output_clear and the measurement writers' sim_meas_output_clear.
 */
sim_status sim_output_clear(const char *path, const sim_cache *c, const char *const *inputs,
                            size_t n, const char *who, const char *opt, struct sim_err *err);

/* The object loaded from name (an id or a path); *path (when not NULL) gets the resolved
 * path, owned by the cache. The loaders' errors (file:line:col: field: ...) on failure. */
sim_status sim_cache_model(sim_cache *c, const char *name, const sim_model **out, const char **path,
                           struct sim_err *err);
sim_status sim_cache_hw(sim_cache *c, const char *name, const sim_hw **out, const char **path,
                        struct sim_err *err);
sim_status sim_cache_engine(sim_cache *c, const char *name, const sim_engine **out,
                            const char **path, struct sim_err *err);
sim_status sim_cache_calib(sim_cache *c, const char *name, const sim_calib **out, const char **path,
                           struct sim_err *err);

/*
 * hw with the figures of the calibration cal (loaded from cal_path) applied
 * (sim_calib_apply_figures), made once per (hw, cal) pair and kept by the cache; hw itself
 * when cal has no figures. hw and cal must be objects of this cache.
 */
sim_status sim_cache_hw_calibrated(sim_cache *c, const sim_hw *hw, const sim_calib *cal,
                                   const char *cal_path, const sim_hw **out, struct sim_err *err);

#endif
