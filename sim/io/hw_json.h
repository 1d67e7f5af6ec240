/*
 * hw_json.h - loads hwprofiles/<id>.json into a sim_hw (schema: docs/hwprofile.md).
 *
 * Strict: unknown or duplicate keys, missing required figures, wrong types,
 * non-finite or non-positive values are errors naming file, line and key.
 * Every figure is an object {"value": .., "status": .., "source": ..}; absent
 * optional figures get documented defaults (sim_hw_apply_defaults), marked
 * "default" so reports can say so.
 */
#ifndef SIM_HW_JSON_H
#define SIM_HW_JSON_H

#include "hw.h"
#include "status.h"

#define SIM_HW_SCHEMA_VERSION 1

sim_status sim_hw_load(const char *path, sim_hw *hw /* OUT */, struct sim_err *err /* OUT */);

#endif
