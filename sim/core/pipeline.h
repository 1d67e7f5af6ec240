/*
 * pipeline.h - pipeline parallelism (vLLM pipeline_parallel_size) and where a layout's GPUs sit.
 *
 * vLLM splits the decoder layers into pp stages of consecutive layers (get_pp_indices in
 * vllm/distributed/utils.py): floor(L / pp) each, and the remainder r = L mod pp given one
 * extra layer each to stages pp-2, pp-3, ..., pp-1-r (all but the last, which also holds the
 * final norm and the LM head). The first stage holds the embedding (and the last one too
 * when the embeddings are tied). Ranks are laid out with TP innermost
 * (rank = stage x tp + tp_rank), so a node of g GPUs holds g / tp consecutive stages when
 * tp <= g, and a TP group spans tp / g nodes when tp > g.
 *
 * Between stages each GPU sends its 1/tp slice of the hidden states and of the residual
 * (vLLM IntermediateTensors of Llama-style models; GroupCoordinator.send_tensor_dict's
 * send-allgather), and the receiving stage all-gathers them within its TP group:
 *   t_transfer = 2 (lat_link + T d hb / tp / bw_link)
 *              + (tp > 1) 2 (lat_ar(tp) + (tp - 1) / tp x T d hb / bus_bw(tp))
 * with the link NVLink (link_bw_per_dir, all-reduce latency of 2 GPUs) inside a node and
 * the fabric (bw_internode_per_gpu, internode_latency) across nodes.
 *
 * With b batches in flight (vLLM V1's batch queue holds up to pp of them,
 * vllm/v1/engine/core.py step_with_batch_queue), each batch of the same shape:
 *   latency  = sum over stages of (t_stage + t_transfer after it)   (one token of a batch)
 *   interval = max over stages of (t_stage + t_transfer after it)   (a stage's busy time)
 *   cycle(b) = max(latency, b x interval): one token for every sequence of the b batches
 *   bubble(b) = 1 - b x sum(t_stage) / (pp x cycle(b))
 * docs/model.md, "Pipeline parallelism". Pure: no I/O, no allocation.
 */
#ifndef SIM_PIPELINE_H
#define SIM_PIPELINE_H

#include <stdint.h>

#include "hw.h"
#include "model.h"
#include "ops.h"
#include "status.h"

#define SIM_PP_MAX 64 /* stages */

/* Checks pp against the model: 1 <= pp <= SIM_PP_MAX and pp <= num_hidden_layers (every
 * stage needs a layer). SIM_EINVAL with a message naming --pp otherwise. */
sim_status sim_pp_check(const sim_model *m, int pp, struct sim_err *err /* OUT */);

/* Layers of each stage, vLLM's rule above: layers[0..pp-1]. n_layers >= pp >= 1. */
void sim_pp_partition(int64_t n_layers, int pp, int64_t *layers /* OUT */);

/* First layer and layer count of stage (0 <= stage < pp). */
void sim_pp_stage_range(int64_t n_layers, int pp, int stage, int64_t *start /* OUT */,
                        int64_t *n /* OUT */);

/* 1 when the boundary after stage (between stage and stage + 1) crosses nodes. */
int sim_pp_boundary_internode(const sim_hw *hw, int tp, int stage);

/* Time of the transfer after a stage (see above) for tokens tokens. */
double sim_pp_transfer_s(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg, int stage,
                         double tokens);

/*
 * Weight bytes on one GPU of stage (0 <= stage < pp) at tp: the per-layer weights of its
 * layers, the embedding on the first stage, the LM head on the last (a copy of the
 * embedding when they are tied: vLLM's LlamaModel builds embed_tokens on the first rank,
 * and on the last when tie_word_embeddings).
 */
double sim_pp_stage_weight_bytes(const sim_model *m, int tp, int pp, int stage, sim_dtype dtype);

/* KV-cache bytes per token on one GPU of stage: its layers' share of the model's. */
double sim_pp_stage_kv_bytes_per_token(const sim_model *m, int tp, int pp, int stage,
                                       sim_dtype kv_dtype);

/* One step through the pipeline, stage by stage. */
typedef struct sim_pp_cost {
    int pp;
    int64_t layers[SIM_PP_MAX];
    double stage_s[SIM_PP_MAX];    /* alpha x roofline of the stage's GPU (+ beta on stage 0) */
    double transfer_s[SIM_PP_MAX]; /* after the stage; 0 after the last */
    int internode[SIM_PP_MAX];     /* the transfer after the stage crosses nodes */
    double latency_s;              /* sum of stage and transfer times */
    double interval_s;             /* largest stage + transfer time */
    double roofline_s;   /* sum of the stages' rooflines and transfers, uncalibrated (as the
                            roofline_s of sim__pp_step_cost) */
    double tokens, seqs; /* of the step (sim_step_cost's) */
} sim_pp_cost;

/* Stage by stage cost of one step (cfg->pp >= 1; the step passed sim_step_check). */
void sim_pp_step(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg, const sim_step *s,
                 sim_pp_cost *out /* OUT */);

/* cycle(b) = max(latency, b x interval), 1 <= b <= pp. */
double sim_pp_cycle_s(const sim_pp_cost *c, int batches);

/* bubble(b): the share of the stages' GPU time left idle with b batches in flight. */
double sim_pp_bubble_frac(const sim_pp_cost *c, int batches);

/* The step cost of sim_step_cost_compute for cfg->pp > 1: operators and totals summed over
 * the stages (one GPU of each), comm_s with the transfers, roofline_s = the pipeline latency
 * of the step (one batch in flight). Internal (step.c). */
void sim__pp_step_cost(const sim_model *m, const sim_hw *hw, const sim_run_cfg *cfg,
                       const sim_step *s, sim_step_cost *out /* OUT */);

#endif
