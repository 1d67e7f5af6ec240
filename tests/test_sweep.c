/*
 * test_sweep.c - the sweep core (sweep.h): axis syntax, point order, derived
 * figures (TPOT, tokens/s per GPU, cost per million tokens), SLO filtering, the
 * Pareto frontier on a hand-made set, and the CLI's fast number formatter
 * (fastfmt.h) against snprintf.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capacity.h"
#include "check.h"
#include "engine_json.h"
#include "fastfmt.h"
#include "hw_json.h"
#include "model_json.h"
#include "sweep.h"

#define NA ((double)NAN) /* a figure the kind does not have */

static void parse_list_accepts_lists_and_doubling_ranges(void)
{
    static const struct {
        const char *spec;
        size_t n;
        int64_t v[12];
    } cases[] = {
        {"1,2,4,8", 4, {1, 2, 4, 8}},
        {"1:256", 9, {1, 2, 4, 8, 16, 32, 64, 128, 256}},
        {"3:20", 3, {3, 6, 12}},
        {"512:8192,12288", 6, {512, 1024, 2048, 4096, 8192, 12288}},
        {"7", 1, {7}},
        {"5:5", 1, {5}},
        {"1:2,1:2", 4, {1, 2, 1, 2}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t out[16];
        size_t n = 0;
        struct sim_err err;
        CHECK(sim_sweep_parse_list(cases[i].spec, 1, 1 << 20, out, 16, &n, &err) == SIM_OK);
        CHECK_INT(n, cases[i].n);
        for (size_t k = 0; k < n && k < cases[i].n; k++)
            CHECK_INT(out[k], cases[i].v[k]);
    }
}

static void parse_list_rejects_bad_specs(void)
{
    static const struct {
        const char *spec;
        sim_status want;
    } cases[] = {
        {"", SIM_EINVAL},          {"1,,2", SIM_EINVAL}, {"a", SIM_EINVAL},
        {"1:", SIM_EINVAL},        {"1,", SIM_EINVAL},   {"-1", SIM_EINVAL},
        {"8:4", SIM_ERANGE},       {"0", SIM_ERANGE},    {"2000000", SIM_ERANGE},
        {"1:1048576", SIM_ENOMEM}, {"1 ,2", SIM_EINVAL}, {"99999999999999999999", SIM_EINVAL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t out[16];
        size_t n = 0;
        struct sim_err err = {{0}};
        sim_status st = sim_sweep_parse_list(cases[i].spec, 1, 1 << 20, out, 16, &n, &err);
        if (st != cases[i].want)
            printf("  spec '%s': status %d, want %d\n", cases[i].spec, (int)st, (int)cases[i].want);
        CHECK(st == cases[i].want);
        CHECK(err.msg[0] != '\0');
    }
}

static void sweep_order_is_tp_then_batch_then_context(void)
{
    static const int64_t tp[] = {1, 2}, batch[] = {1, 4, 16}, ctx[] = {100, 200};
    sim_sweep_axes ax = {tp, 2, batch, 3, ctx, 2};
    CHECK_INT(sim_sweep_count(&ax), 12);
    static const int64_t want[12][3] = {{1, 1, 100},  {1, 1, 200},  {1, 4, 100},  {1, 4, 200},
                                        {1, 16, 100}, {1, 16, 200}, {2, 1, 100},  {2, 1, 200},
                                        {2, 4, 100},  {2, 4, 200},  {2, 16, 100}, {2, 16, 200}};
    for (int64_t i = 0; i < 12; i++) {
        int64_t t, b, c;
        sim_sweep_at(&ax, i, &t, &b, &c);
        CHECK_INT(t, want[i][0]);
        CHECK_INT(b, want[i][1]);
        CHECK_INT(c, want[i][2]);
    }
}

static void cost_per_million_tokens_is_price_times_gpus_over_rate(void)
{
    /* 2.385 USD per GPU-hour x 4 GPUs = 9.54 USD/h = 0.00265 USD/s; at 1234.5 tokens/s that is
     * 2.1466180639935196e-6 USD per token, 2.1466180639935196 USD per million. */
    CHECK_REL(sim_sweep_cost_per_mtok(2.385, 4, 1234.5), 2.1466180639935196, 1e-14);
    CHECK(isnan(sim_sweep_cost_per_mtok(0.0, 4, 1234.5)));
    CHECK(isnan(sim_sweep_cost_per_mtok(2.0, 4, 0.0)));
}

static sim_sweep_row row(sim_sweep_kind k, double tpot, double ttft, sim_sweep_status st)
{
    sim_sweep_row r = {0};
    r.kind = k;
    r.tp = 2;
    r.time_s = k == SIM_SWEEP_PREFILL ? ttft : tpot;
    r.tpot_s = tpot;
    r.ttft_s = ttft;
    r.tokens_per_s = 1000.0;
    r.status = st;
    return r;
}

static void slo_filter_keeps_fitting_rows_within_every_applicable_objective(void)
{
    static const struct {
        const char *name;
        sim_sweep_kind kind;
        double tpot, ttft;
        sim_sweep_status st;
        double slo_tpot, slo_ttft;
        int want;
    } cases[] = {
        {"decode_under_tpot", SIM_SWEEP_DECODE, 0.0415, NA, SIM_SWEEP_OK, 0.05, 0, 1},
        {"decode_at_tpot", SIM_SWEEP_DECODE, 0.05, NA, SIM_SWEEP_OK, 0.05, 0, 1},
        {"decode_over_tpot", SIM_SWEEP_DECODE, 0.0615, NA, SIM_SWEEP_OK, 0.05, 0, 0},
        {"decode_not_fitting", SIM_SWEEP_DECODE, 0.01, NA, SIM_SWEEP_KV_FULL, 0.05, 0, 0},
        {"decode_no_slo_fits", SIM_SWEEP_DECODE, 0.9, NA, SIM_SWEEP_OK, 0, 0, 1},
        {"decode_ignores_ttft", SIM_SWEEP_DECODE, 0.03, NA, SIM_SWEEP_OK, 0.05, 0.001, 1},
        {"prefill_ignores_tpot", SIM_SWEEP_PREFILL, NA, 0.2, SIM_SWEEP_OK, 0.05, 0, 1},
        {"prefill_over_ttft", SIM_SWEEP_PREFILL, NA, 0.2, SIM_SWEEP_OK, 0, 0.1, 0},
        {"offline_both_hold", SIM_SWEEP_OFFLINE, 0.02, 0.4, SIM_SWEEP_OK, 0.05, 0.5, 1},
        {"offline_ttft_fails", SIM_SWEEP_OFFLINE, 0.02, 0.6, SIM_SWEEP_OK, 0.05, 0.5, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_sweep_row r = row(cases[i].kind, cases[i].tpot, cases[i].ttft, cases[i].st);
        sim_sweep_slo slo = {cases[i].slo_tpot, cases[i].slo_ttft, 90};
        sim_sweep_finish(&r, &slo, 0.0);
        if (r.meets_slo != cases[i].want)
            printf("  case %s\n", cases[i].name);
        CHECK_INT(r.meets_slo, cases[i].want);
        CHECK(isnan(r.cost_per_mtok_usd));
    }
}

/* Brute force: p is on the frontier of pts when nothing strictly dominates it. */
static int dominated(const sim_pareto_point *pts, size_t n, sim_pareto_point p)
{
    for (size_t i = 0; i < n; i++)
        if (pts[i].latency_s <= p.latency_s && pts[i].throughput >= p.throughput &&
            (pts[i].latency_s < p.latency_s || pts[i].throughput > p.throughput))
            return 1;
    return 0;
}

static void pareto_frontier_of_a_hand_made_set(void)
{
    /* (latency, throughput): C and D are dominated by B; G equals E (first kept); H by E. */
    static const sim_pareto_point pts[] = {
        {1.0, 10.0, 0}, /* A */ {2.0, 20.0, 1}, /* B */ {2.0, 15.0, 2}, /* C */
        {3.0, 18.0, 3}, /* D */ {4.0, 30.0, 4}, /* E */ {0.5, 5.0, 5},  /* F */
        {4.0, 30.0, 6}, /* G */ {5.0, 29.0, 7},                         /* H */
    };
    const size_t n = sizeof(pts) / sizeof(pts[0]);
    static const int64_t want[] = {5, 0, 1, 4}; /* F, A, B, E in latency order */
    static const int orders[3][8] = {
        {0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {3, 7, 2, 0, 6, 5, 1, 4}};
    for (int o = 0; o < 3; o++) {
        sim_pareto_point front[8];
        size_t nf = 0;
        for (size_t i = 0; i < n; i++)
            sim_pareto_insert(front, &nf, 8, pts[orders[o][i]]);
        CHECK_INT(nf, 4);
        for (size_t i = 0; i < nf && i < 4; i++) {
            /* G and E are equal: whichever came first stands for both. */
            int64_t id = front[i].id == 6 ? 4 : front[i].id;
            CHECK_INT(id, want[i]);
            CHECK(!dominated(pts, n, front[i]));
        }
        for (size_t i = 1; i < nf; i++)
            CHECK(front[i - 1].latency_s < front[i].latency_s);
    }
    /* A full frontier refuses a new member without changing. */
    sim_pareto_point small[2];
    size_t ns = 0;
    CHECK_INT(sim_pareto_insert(small, &ns, 2, pts[0]), 1);
    CHECK_INT(sim_pareto_insert(small, &ns, 2, pts[1]), 1);
    CHECK_INT(sim_pareto_insert(small, &ns, 2, pts[4]), -1);
    CHECK_INT(sim_pareto_insert(small, &ns, 2, pts[2]), 0);
    CHECK_INT(ns, 2);
    /* A point dominating every member replaces them all. */
    CHECK_INT(sim_pareto_insert(small, &ns, 2, (sim_pareto_point){0.1, 100.0, 9}), 1);
    CHECK_INT(ns, 1);
    CHECK_INT(small[0].id, 9);
}

static void decode_point_figures_follow_from_the_step_time(void)
{
    static sim_model m;
    static sim_hw hw;
    static sim_engine e;
    char path[4096];
    struct sim_err err;
    snprintf(path, sizeof(path), "%s/models/llama-2-7b.json", SIM_SOURCE_DIR);
    CHECK(sim_model_load(path, "llama-2-7b", &m, &err) == SIM_OK);
    snprintf(path, sizeof(path), "%s/hwprofiles/h100-sxm.json", SIM_SOURCE_DIR);
    CHECK(sim_hw_load(path, &hw, &err) == SIM_OK);
    snprintf(path, sizeof(path), "%s/engines/vllm-v0.json", SIM_SOURCE_DIR);
    CHECK(sim_engine_load(path, &e, &err) == SIM_OK);
    sim_sched_cfg in;
    sim_sched_cfg_unset(&in);
    sim_sched_resolved s;
    CHECK(sim_sched_resolve(&e, &m, &hw, &in, &s, &err) == SIM_OK);
    sim_run_cfg run = sim_run_cfg_plain(2, SIM_DTYPE_FP16);
    run.alpha = 1.173;
    run.beta_s = 4.21e-4;
    sim_memory mem;
    sim_memory_compute(&(sim_setup){&e, &m, &hw, &run, &s}, &mem);
    sim_sweep_ctx c = {&m, &hw, &run, &e, &s, &mem, 1, 1};
    sim_sweep_row r;
    sim_sweep_decode(&c, 24, 1500, &r);
    sim_step st = {1, {{24, 1, 1500, 1}}};
    sim_step_cost cost;
    sim_step_cost_compute(&m, &hw, &run, &st, &cost);
    /* Host time at TP 2: the TP > 1 base and per-sequence time, and one extra rank's pair. */
    double want = cost.step_s + e.host_step_tp_s + e.host_per_seq_s * 24.0 + e.host_step_rank_s +
                  e.host_per_seq_rank_s * 24.0;
    CHECK_REL(r.time_s, want, 1e-15);
    CHECK_REL(r.tpot_s, want, 1e-15);
    CHECK(isnan(r.ttft_s));
    CHECK_REL(r.tokens_per_s, 24.0 / want, 1e-15);
    CHECK_REL(r.tokens_per_s_per_gpu, 12.0 / want, 1e-15);
    CHECK_INT(r.status, SIM_SWEEP_OK);
    CHECK_INT(r.bound, cost.bound);
    /* Batch above the KV capacity at this context is kept and marked. */
    int64_t cap = sim_capacity_max_seqs(&mem, &s, 1501);
    sim_sweep_decode(&c, cap, 1500, &r);
    CHECK_INT(r.status, SIM_SWEEP_OK);
    sim_sweep_decode(&c, cap + 1, 1500, &r);
    CHECK_INT(r.status, SIM_SWEEP_KV_FULL);
    CHECK(isfinite(r.time_s));
    /* Context 4095 decodes to 4096 = max_model_len; 4096 would need 4097. */
    sim_sweep_decode(&c, 1, 4095, &r);
    CHECK_INT(r.status, SIM_SWEEP_OK);
    sim_sweep_decode(&c, 1, 4096, &r);
    CHECK_INT(r.status, SIM_SWEEP_TOO_LONG);
    CHECK(isnan(r.time_s));
    /* A prefill point: tokens/s counts prompt tokens. */
    sim_sweep_prefill(&c, 3, 777, &r);
    CHECK_REL(r.tokens_per_s, 3.0 * 777.0 / r.ttft_s, 1e-15);
    CHECK(isnan(r.tpot_s));
    /* DP 3 (a dense model: each rank's step is the one above at its share): 25 sequences put
     * ceil(25 / 3) = 9 on the busiest rank, whose step is the time; tokens/s counts all 25, and
     * per GPU divides by TP 2 x DP 3 = 6 GPUs; the memory check is the rank's (9 sequences). */
    run.dp = 3;
    sim_memory_compute(&(sim_setup){&e, &m, &hw, &run, &s}, &mem);
    sim_sweep_decode(&c, 25, 1500, &r);
    sim_step st9 = {1, {{9, 1, 1500, 1}}};
    sim_step_cost_compute(&m, &hw, &run, &st9, &cost);
    want = cost.step_s + e.host_step_tp_s + e.host_per_seq_s * 9.0 + e.host_step_rank_s +
           e.host_per_seq_rank_s * 9.0;
    CHECK_REL(r.time_s, want, 1e-15);
    CHECK_REL(r.tokens_per_s, 25.0 / want, 1e-15);
    CHECK_REL(r.tokens_per_s_per_gpu, 25.0 / want / 6.0, 1e-15);
    CHECK_INT(r.dp, 3);
    CHECK_INT(r.status, SIM_SWEEP_OK);
    sim_sweep_decode(&c, 3 * cap, 1500, &r);
    CHECK_INT(r.status, SIM_SWEEP_OK);
    sim_sweep_decode(&c, 3 * cap + 1, 1500, &r);
    CHECK_INT(r.status, SIM_SWEEP_KV_FULL);
    /* The cost counts the 6 GPUs: USD 2 per GPU-hour x 6 / 3600 / (tokens/s) x 1e6. */
    sim_sweep_decode(&c, 25, 1500, &r);
    sim_sweep_finish(&r, &(sim_sweep_slo){0}, 2.0);
    CHECK_REL(r.cost_per_mtok_usd, 2.0 * 6.0 / 3600.0 / (25.0 / want) * 1e6, 1e-12);
    run.dp = 1;
    sim_memory_compute(&(sim_setup){&e, &m, &hw, &run, &s}, &mem);
    /* An illegal TP marks the point and computes nothing. */
    c.tp_ok = 0;
    sim_sweep_decode(&c, 1, 100, &r);
    CHECK_INT(r.status, SIM_SWEEP_BAD_TP);
    CHECK(isnan(r.time_s));
}

static void best_prefers_throughput_per_gpu_then_latency(void)
{
    sim_sweep_row a = row(SIM_SWEEP_DECODE, 0.02, (double)NAN, SIM_SWEEP_OK);
    sim_sweep_row b = a;
    a.tokens_per_s_per_gpu = 500.0;
    b.tokens_per_s_per_gpu = 400.0;
    CHECK(sim_sweep_better(&a, &b));
    CHECK(!sim_sweep_better(&b, &a));
    b.tokens_per_s_per_gpu = 500.0;
    b.tpot_s = 0.01;
    CHECK(sim_sweep_better(&b, &a));
}

/* xorshift64*: a reproducible stream of test values. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static void fast_fixed_format_matches_snprintf(void)
{
    static const struct {
        double v;
        int d;
    } ties[] = {
        {0.125, 2},
        {0.375, 2},
        {2.5, 0},
        {3.5, 0},
        {-0.125, 2},
        {1e-10, 3},
        {-1e-10, 3},
        {0.0, 9},
        {-0.0, 3},
        {0.5, 0},
        {1.5, 0},
        {1.005, 2},
        {2.675, 2},
        {1e15, 3},
        {123456.0, 9},
        {9.9995, 3},
        {0.00049999999999999999, 3},
    };
    char a[CLI_FMT_MAX + 8], b[CLI_FMT_MAX + 8];
    int bad = 0;
    for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++) {
        *cli_fmt_fixed(a, ties[i].v, ties[i].d) = '\0';
        snprintf(b, sizeof(b), "%.*f", ties[i].d, ties[i].v);
        CHECK_STR(a, b);
    }
    for (int i = 0; i < 1000000; i++) {
        uint64_t r = rng();
        int d = (int)(r % 13);
        double mant = (double)(rng() >> 11) * 0x1p-53;
        double v = mant * pow(10.0, (double)((int)((r >> 8) % 25) - 12));
        if (r & (1u << 20))
            v = -v;
        if ((r >> 21) % 8 == 0) /* values on a decimal grid, where ties live */
            v = (double)(int64_t)(rng() % 100000) / pow(10.0, (double)((r >> 24) % 6));
        *cli_fmt_fixed(a, v, d) = '\0';
        snprintf(b, sizeof(b), "%.*f", d, v);
        if (strcmp(a, b) != 0 && bad++ < 5)
            printf("FAIL fmt %.17g with %d decimals: got %s, want %s\n", v, d, a, b);
    }
    CHECK_INT(bad, 0);
    static const int64_t ints[] = {0, 7, 10, 99, 100, 12345, -1, -987654321, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        *cli_fmt_i64(a, ints[i]) = '\0';
        snprintf(b, sizeof(b), "%lld", (long long)ints[i]);
        CHECK_STR(a, b);
    }
}

/* A serving row of tp GPUs from hand-made statistics (sim_sweep_serving_init and _set). */
static sim_sweep_row serving_row(int64_t tp, int64_t conc, sim_dist ttft, sim_dist tpot,
                                 double out_tok_per_s, int percentile)
{
    static sim_memory mem;
    static sim_sched_resolved s;
    static sim_run_cfg run;
    mem.fits = 1;
    s.max_model_len = 4096;
    run.tp = (int)tp;
    sim_sweep_ctx c = {NULL, NULL, &run, NULL, &s, &mem, 1, 1};
    sim_sweep_row r;
    sim_sweep_serving_init(&c, conc, (double)NAN, 1000, 128, &r);
    sim_serve_stats st = {0};
    st.n_requests = 10 * conc;
    st.ttft_s = ttft;
    st.tpot_s = tpot;
    st.e2e_s = (sim_dist){7.5, 7.25, 8.125, 9.0625};
    st.output_tokens_per_s = out_tok_per_s;
    st.request_throughput_per_s = out_tok_per_s / 128.0;
    sim_serve_result res = {0};
    res.preemptions = 3;
    res.peak_kv_frac = 0.625;
    sim_sweep_serving_set(&r, &st, &res, percentile);
    return r;
}

static void serving_rows_judge_slos_at_the_chosen_percentile(void)
{
    const sim_dist ttft = {0.31, 0.2385, 0.5125, 0.9}, tpot = {0.021, 0.0195, 0.0317, 0.04};
    const sim_sweep_slo slo90 = {0.035, 0.5, 90}, slo50 = {0.035, 0.5, 50},
                        slo99 = {0.045, 1.0, 99};
    sim_sweep_row r = serving_row(4, 32, ttft, tpot, 2469.0, 90);
    CHECK_INT(r.kind, SIM_SWEEP_SERVING);
    CHECK_INT(r.status, SIM_SWEEP_OK);
    CHECK_INT(r.batch, 32);
    CHECK_INT(r.concurrency, 32);
    CHECK(isnan(r.rate_per_s));
    CHECK_REL(r.ttft_s, 0.5125, 0.0);
    CHECK_REL(r.tpot_s, 0.0317, 0.0);
    CHECK_REL(r.time_s, 8.125, 0.0);
    CHECK_REL(r.tokens_per_s_per_gpu, 617.25, 1e-15); /* 2469 / 4 */
    CHECK_REL(r.requests_per_s, 2469.0 / 128.0, 1e-15);
    CHECK_INT(r.preemptions, 3);
    CHECK_INT(r.n_requests, 320);
    sim_sweep_finish(&r, &slo90, 3.0);
    CHECK_INT(r.meets_slo, 0); /* TTFT p90 0.5125 s > 0.5 s */
    /* 3 USD x 4 GPUs / 3600 s / 2469 tokens/s x 1e6 = 1e6 / 740700 */
    CHECK_REL(r.cost_per_mtok_usd, 1e6 / 740700.0, 1e-14);
    r = serving_row(4, 32, ttft, tpot, 2469.0, 50);
    CHECK_REL(r.ttft_s, 0.2385, 0.0);
    CHECK_REL(r.tpot_s, 0.0195, 0.0);
    sim_sweep_finish(&r, &slo50, 0.0);
    CHECK_INT(r.meets_slo, 1); /* 0.2385 <= 0.5 and 0.0195 <= 0.035 */
    CHECK(isnan(r.cost_per_mtok_usd));
    r = serving_row(4, 32, ttft, tpot, 2469.0, 99);
    CHECK_REL(r.ttft_s, 0.9, 0.0);
    sim_sweep_finish(&r, &slo99, 0.0);
    CHECK_INT(r.meets_slo, 1); /* 0.9 <= 1.0 and 0.04 <= 0.045 */
    /* Points that cannot start are marked and never meet an SLO. */
    static sim_memory mem;
    static sim_sched_resolved s;
    static sim_run_cfg run;
    run.tp = 2;
    s.max_model_len = 4096;
    sim_sweep_ctx c = {NULL, NULL, &run, NULL, &s, &mem, 1, 1};
    const sim_sweep_slo none = {0.0, 0.0, 90};
    mem.fits = 1;
    sim_sweep_serving_init(&c, 8, (double)NAN, 3968, 128, &r); /* 4096: fits exactly */
    CHECK_INT(r.status, SIM_SWEEP_OK);
    sim_sweep_serving_init(&c, 8, (double)NAN, 3969, 128, &r);
    CHECK_INT(r.status, SIM_SWEEP_TOO_LONG);
    sim_sweep_finish(&r, &none, 0.0);
    CHECK_INT(r.meets_slo, 0);
    CHECK(isnan(r.tokens_per_s_per_gpu));
    mem.fits = 0;
    sim_sweep_serving_init(&c, -1, 2.5, 100, 100, &r);
    CHECK_INT(r.status, SIM_SWEEP_NO_MEMORY);
    CHECK_INT(r.concurrency, -1);
    CHECK_REL(r.rate_per_s, 2.5, 0.0);
    c.tp_ok = 0;
    sim_sweep_serving_init(&c, 8, (double)NAN, 100, 100, &r);
    CHECK_INT(r.status, SIM_SWEEP_BAD_TP);
}

static void serving_best_is_highest_output_per_gpu_within_slo(void)
{
    /* TP 1 is fastest per GPU but misses the TTFT SLO; TP 2 and TP 4 tie at 700 tokens/s
     * per GPU (1400 / 2, 2800 / 4) and TP 4 has the lower TPOT p90; TP 8 is slower. */
    const sim_sweep_slo slo = {0.05, 0.5, 90};
    const sim_dist ok_ttft = {0.3, 0.3, 0.4, 0.45}, bad_ttft = {0.6, 0.6, 0.7, 0.8};
    sim_sweep_row rows[4] = {
        serving_row(1, 64, bad_ttft, (sim_dist){0.03, 0.03, 0.03, 0.03}, 900.0, 90),
        serving_row(2, 64, ok_ttft, (sim_dist){0.04, 0.04, 0.045, 0.05}, 1400.0, 90),
        serving_row(4, 64, ok_ttft, (sim_dist){0.03, 0.03, 0.035, 0.04}, 2800.0, 90),
        serving_row(8, 64, ok_ttft, (sim_dist){0.02, 0.02, 0.025, 0.03}, 3200.0, 90),
    };
    int best = -1;
    for (int i = 0; i < 4; i++) {
        sim_sweep_finish(&rows[i], &slo, 0.0);
        if (rows[i].meets_slo && (best < 0 || sim_sweep_better(&rows[i], &rows[best])))
            best = i;
    }
    CHECK_INT(rows[0].meets_slo, 0);
    CHECK_INT(best, 2);
}

int main(void)
{
    parse_list_accepts_lists_and_doubling_ranges();
    parse_list_rejects_bad_specs();
    sweep_order_is_tp_then_batch_then_context();
    cost_per_million_tokens_is_price_times_gpus_over_rate();
    slo_filter_keeps_fitting_rows_within_every_applicable_objective();
    pareto_frontier_of_a_hand_made_set();
    decode_point_figures_follow_from_the_step_time();
    best_prefers_throughput_per_gpu_then_latency();
    fast_fixed_format_matches_snprintf();
    serving_rows_judge_slos_at_the_chosen_percentile();
    serving_best_is_highest_output_per_gpu_within_slo();
    return check_report("test_sweep");
}
