/*
 * engine_json.h - loads engines/<id>.json (an engine version's scheduler
 * defaults and measured host time per step; schema in docs/engine.md) into a
 * sim_engine. Strict like the hardware profiles: every key is a figure object
 * {"value", "status", "source"}, unknown keys are errors.
 */
#ifndef SIM_ENGINE_JSON_H
#define SIM_ENGINE_JSON_H

#include "engine.h"
#include "status.h"

sim_status sim_engine_load(const char *path, sim_engine *e /* OUT */,
                           struct sim_err *err /* OUT */);

#endif
