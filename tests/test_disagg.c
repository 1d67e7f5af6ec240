/*
 * test_disagg.c - disaggregated serving (sim_disagg_run, deploy.h) against the aggregated
 * engine: one prefill and one decode instance with a free transfer serve a request as one
 * engine would, but for the decode instance's step that recomputes the last prompt token.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "deploy.h"
#include "sched_v1.h"
#include "toys.h"

/* A served workload of n requests (sim_served, as sim_served_prepare lays it out). */
static void served_of(sim_served *sv, const sim_request *req, int64_t n)
{
    memset(sv, 0, sizeof(*sv));
    sv->n = n;
    sv->req = malloc((size_t)n * sizeof(*sv->req));
    memcpy(sv->req, req, (size_t)n * sizeof(*req));
    for (int64_t i = 0; i < n; i++)
        sv->itl_cap += req[i].output_tokens;
    sv->queue = malloc((size_t)(n + 1) * sizeof(*sv->queue));
    sv->running = malloc((size_t)n * sizeof(*sv->running));
    sv->agg_heap = malloc((size_t)n * sizeof(*sv->agg_heap));
    sv->itl = malloc((size_t)sv->itl_cap * sizeof(*sv->itl));
    sv->scratch = malloc((size_t)n * sizeof(*sv->scratch));
}

/*
 * x = y = 1, transfer time 0 (an infinitely fast link): request A (prompt 10, output 4) alone.
 * Aggregated: step 1 prefills 10 tokens and samples token 1 at t1; three decode steps at
 * contexts 10, 11, 12 end at t2, t3, t4. Disaggregated: the prefill instance's step is step 1
 * (the same 10 tokens), then the decode instance computes the last prompt token (1 token at
 * context 9) and samples token 1, then decodes at contexts 10, 11, 12: the same three steps.
 * So TPOT is the aggregated one exactly, and TTFT exceeds it by one decode step (the recompute
 * at context 9, within 1% of the step at context 10, t2 - t1).
 */
static void one_to_one_without_transfer_is_the_aggregated_engine(void)
{
    sim_engine e;
    toy_v1(&e);
    toy_setup x;
    toy_setup_init(&x, &e);
    x.in.max_model_len = 256;
    CHECK_INT(toy_resolve(&x), SIM_OK);
    toy_set_blocks(&x, 100);
    const sim_request a = {.prompt_tokens = 10, .output_tokens = 4};
    /* Aggregated. */
    sim_served agg;
    served_of(&agg, &a, 1);
    sim_serve_result ra;
    struct sim_err err;
    CHECK_INT(sim_served_run(toy_su(&x), &agg, NULL, NULL, &ra, &err), SIM_OK);
    const sim_request *q = &agg.req[0];
    const double ttft_a = q->first_token_s, tpot_a = (q->finish_s - q->first_token_s) / 3.0;
    /* Disaggregated, the link free. */
    sim_served dis;
    served_of(&dis, &a, 1);
    const sim_disagg_link free_link = {.bw_bytes_per_s = (double)INFINITY, .latency_s = 0.0};
    CHECK_REL(sim_disagg_xfer_s(&x.m, x.run.kv_dtype, 9, 1, 1, &free_link), 0.0, 0.0);
    sim_serve_result rp, rd;
    double xfer = -1.0;
    err.msg[0] = '\0';
    CHECK_INT(sim_disagg_run(toy_su(&x), toy_su(&x), 1, 1, &free_link, &dis, &rp, &rd, &xfer, &err),
              SIM_OK);
    if (err.msg[0])
        printf("%s\n", err.msg);
    CHECK_REL(xfer, 0.0, 0.0);
    const sim_request *d = &dis.req[0];
    const double tpot_d = (d->finish_s - d->first_token_s) / 3.0;
    CHECK_REL(tpot_d, tpot_a, 1e-12);
    /* The aggregated decode step at context 10: the first of the three. */
    const double step = tpot_a; /* the three decode steps differ by their context only */
    CHECK(fabs(d->first_token_s - (ttft_a + step)) <= 0.01 * step);
    CHECK_INT(rp.n_steps, 1);
    CHECK_INT(rd.n_steps, 4);
    /* A closed loop is refused: its clients couple the two pools. */
    dis.concurrency = 1;
    CHECK_INT(sim_disagg_run(toy_su(&x), toy_su(&x), 1, 1, &free_link, &dis, &rp, &rd, &xfer, &err),
              SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "closed loop");
    sim_served_free(&agg);
    sim_served_free(&dis);
}

int main(void)
{
    one_to_one_without_transfer_is_the_aggregated_engine();
    return check_report("test_disagg");
}
