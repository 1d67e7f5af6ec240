/*
 * setup.h - one deployment's resolved inputs, bundled: the engine, the model, the
 * hardware, the run configuration (TP, PP, DP, dtypes, roofline mode, calibration) and
 * the scheduler settings after sim_sched_resolve(). The memory model (memory.h), the
 * capacity rule (capacity.h) and both schedulers (sched_v0.h, sched_v1.h) take these
 * together, so they take one sim_setup. The struct only points: the caller owns all five
 * and keeps them alive while it is used. To vary one input (say another TP), copy the
 * setup and point that field at a local. Pure: no I/O, no allocation.
 */
#ifndef SIM_SETUP_H
#define SIM_SETUP_H

#include "engine.h"
#include "hw.h"
#include "model.h"
#include "ops.h"

typedef struct sim_setup {
    const sim_engine *engine;        /* the engine profile (host times, memory rules) */
    const sim_model *model;          /* the model */
    const sim_hw *hw;                /* one GPU of the hardware, calibrated or not */
    const sim_run_cfg *run;          /* TP, PP, DP, dtypes, roofline mode, alpha and beta_s */
    const sim_sched_resolved *sched; /* scheduler settings, defaults resolved */
} sim_setup;

#endif
