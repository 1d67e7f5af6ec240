/* toys.h - the toy model and GPU the engine and serving tests derive their expectations from:
 * small round numbers, so every count and time can be followed by hand. The builders under them,
 * toy_llama and toy_hw_figs, also make test_step's made-up GPU and the fuzz targets' reference
 * pair. toy_setup is the set-up of one engine or serving test: model, GPU, engine, scheduler
 * options and run configuration, resolved as sim_sched_resolve does for a command. */
#ifndef LLMSTEP_TESTS_TOYS_H
#define LLMSTEP_TESTS_TOYS_H

#include <stdio.h>

#include "engine.h"
#include "hw.h"
#include "memory.h"
#include "model.h"
#include "setup.h"

/* The config.json shape of a Llama-architecture model, in the order of sim_model. */
typedef struct toy_shape {
    int64_t n_layers, d_model, n_heads, n_kv_heads, head_dim, d_ff, vocab, max_pos;
    sim_dtype dtype;
} toy_shape;

/* A dense Llama model of shape sh named id; every other field is zero (no window, no MoE). */
static inline void toy_llama(sim_model *m, const char *id, const toy_shape *sh)
{
    *m = (sim_model){.arch = SIM_ARCH_LLAMA,
                     .n_layers = sh->n_layers,
                     .d_model = sh->d_model,
                     .n_heads = sh->n_heads,
                     .n_kv_heads = sh->n_kv_heads,
                     .head_dim = sh->head_dim,
                     .d_ff = sh->d_ff,
                     .vocab = sh->vocab,
                     .max_pos = sh->max_pos,
                     .dtype = sh->dtype};
    snprintf(m->id, sizeof(m->id), "%s", id);
}

/* One figure of a made-up profile. */
typedef struct toy_fig {
    sim_hw_field f;
    double v;
} toy_fig;

/* Clears *hw, names it id, and sets the n figures with provenance prov. The caller sets anything
 * else (all-reduce entries) and then calls sim_hw_apply_defaults(). */
static inline void toy_hw_figs(sim_hw *hw, const char *id, const toy_fig *figs, size_t n,
                               sim_prov prov)
{
    *hw = (sim_hw){0};
    snprintf(hw->id, sizeof(hw->id), "%s", id);
    for (size_t i = 0; i < n; i++) {
        hw->v[figs[i].f] = figs[i].v;
        hw->prov[figs[i].f] = prov;
    }
}

/* A one-layer toy model: small numbers, so every count below can be followed by hand. */
static inline void toy_model(sim_model *m)
{
    const toy_shape sh = {1, 64, 1, 1, 64, 128, 64, 4096, SIM_DTYPE_FP16};
    toy_llama(m, "", &sh);
}

/* A GPU of round figures (100 TFLOP/s, 1 TB/s) with capacity_bytes of memory; the rest are the
 * profile defaults. */
static inline void toy_hw(sim_hw *hw, double capacity_bytes)
{
    const toy_fig figs[] = {
        {SIM_HWF_PEAK_FP16, 1e14},
        {SIM_HWF_PEAK_BF16, 1e14},
        {SIM_HWF_PEAK_FP32, 1e13},
        {SIM_HWF_N_SM, 100},
        {SIM_HWF_MEM_CAPACITY, capacity_bytes},
        {SIM_HWF_L2, 1e7},
        {SIM_HWF_BW_HBM_PEAK, 1e12},
    };
    toy_hw_figs(hw, "toy", figs, sizeof(figs) / sizeof(figs[0]), SIM_PROV_ESTIMATED);
    snprintf(hw->name, sizeof(hw->name), "Toy GPU");
    sim_hw_apply_defaults(hw);
}

/* Capacity that leaves exactly n_blocks KV blocks (plus half a block of slack) for model m on
 * engine e under the resolved scheduler s and run configuration run. */
static inline double toy_capacity_for_blocks(const sim_engine *e, const sim_model *m,
                                             const sim_run_cfg *run, const sim_sched_resolved *s,
                                             int64_t n_blocks)
{
    sim_hw hw;
    toy_hw(&hw, 1e12);
    sim_memory mem;
    sim_memory_compute(&(sim_setup){e, m, &hw, run, s}, &mem);
    double other = mem.usable_bytes - mem.kv_budget_bytes; /* weights + activations + reserve */
    return other + ((double)n_blocks + 0.5) * mem.kv_block_bytes;
}

/* A V1 engine with round numbers (block size 4, budget 2048, 256 sequences, host 1 ms + 10 us
 * per request at TP 1): test_serve.c and test_disagg.c set the rest per test. */
static inline void toy_v1(sim_engine *e)
{
    *e = (sim_engine){0};
    e->kind = SIM_SCHED_V1;
    e->max_num_seqs = 256;
    e->block_size = 4;
    e->gpu_memory_utilization = 1.0;
    for (int u = 0; u < SIM_USAGE_COUNT; u++)
        for (int l = 0; l < 2; l++) {
            e->default_seqs[u][l] = 256;
            e->default_tokens[u][l] = 2048;
        }
    e->host_step_s = 1e-3;
    e->host_step_tp_s = 2e-3;
    e->host_per_seq_s = 1e-5;
}

/* The set-up of one test: set fields after toy_setup_init, then call toy_resolve. */
typedef struct toy_setup {
    sim_model m;
    sim_hw hw;
    sim_engine e;
    sim_sched_cfg in; /* the scheduler options as given (unset: vLLM's defaults) */
    sim_sched_resolved s;
    sim_run_cfg run;
    struct sim_err err; /* the message of the last failure */
    sim_setup su;       /* the fields above as one setup (toy_su) */
} toy_setup;

/* The toy model on a toy GPU of 1 TB with engine e, every scheduler option unset, and one GPU
 * at fp16 with alpha 1 and beta 0. */
static inline void toy_setup_init(toy_setup *x, const sim_engine *e)
{
    toy_model(&x->m);
    toy_hw(&x->hw, 1e12);
    x->e = *e;
    sim_sched_cfg_unset(&x->in);
    x->run = sim_run_cfg_plain(1, SIM_DTYPE_FP16);
    x->err.msg[0] = '\0';
}

/* Resolves x->in into x->s for the engine, model and GPU of x; the status of sim_sched_resolve. */
static inline sim_status toy_resolve(toy_setup *x)
{
    return sim_sched_resolve(&x->e, &x->m, &x->hw, &x->in, &x->s, &x->err);
}

/* x's engine, model, GPU, run configuration and resolved scheduler as the one sim_setup the
 * memory model and the schedulers take (x->su, pointing into x). */
static inline const sim_setup *toy_su(toy_setup *x)
{
    x->su = (sim_setup){&x->e, &x->m, &x->hw, &x->run, &x->s};
    return &x->su;
}

/* Gives the GPU of x the memory for exactly n_blocks KV blocks under the resolved x->s. */
static inline void toy_set_blocks(toy_setup *x, int64_t n_blocks)
{
    toy_hw(&x->hw, toy_capacity_for_blocks(&x->e, &x->m, &x->run, &x->s, n_blocks));
}

#endif
