/*
 * test_kernels_validate.c - the validate-kernels module (sim/lib/kernels_validate.h) on the
 * small hand-made table tree tests/data/kernels (aic and vidur tables of H100): what a run
 * opens, the report's groups and their order, and which kind of fault each refusal is (the
 * CLI's exit code follows it). Oracles: the rows of the tree's files, counted by hand (11
 * bf16 GEMM samples kept: the golden CLI test of `--format json` shows the same), and the
 * documented table-set default (aic when there is no aic-vllm folder).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kernel_tables.h"
#include "kernels_validate.h"

/* Opens a run on tests/data/kernels<sub> with the n_hw profiles of hw; returns the status. */
static sim_status open_run(sim_kval *kv, const char *sub, const char *tables, const char *const *hw,
                           int n_hw, int speedup, sim_kval_err *err)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/kernels%s", SIM_TEST_DATA, sub);
    const sim_kval_opts o = {SIM_SOURCE_DIR, dir, tables, hw, n_hw, SIM_GEMM_FLAT, speedup};
    return sim_kval_open(kv, &o, err);
}

static int has_note(const sim_kval *kv, const char *needle)
{
    for (int i = 0; i < kv->n_notes; i++)
        if (strstr(kv->notes[i], needle))
            return 1;
    return 0;
}

static void small_tree_opens_aic_and_vidur_and_reports_groups_in_order(void)
{
    static const char *const hw[] = {"h100-sxm"};
    sim_kval *kv = sim_kval_alloc();
    sim_kval_err err = {{0}, SIM_KVAL_FAULT_INPUT};
    CHECK(kv != NULL);
    CHECK_INT(open_run(kv, "", NULL, hw, 1, 0, &err), SIM_OK);
    CHECK_STR(kv->tables, "aic");
    CHECK_INT(kv->n_gpu, 1);
    CHECK_STR(kv->hw[0].id, "h100-sxm");
    CHECK(has_note(kv, "phi-2/mlp.csv: no model config models/phi-2.json; skipped"));
    CHECK(has_note(kv, "Llama-2-7b-hf/mlp.csv"));

    const sim_kval_group *g = NULL;
    size_t n = 0;
    CHECK_INT(sim_kval_validate(kv, &g, &n, &err), SIM_OK);
    CHECK(n > 0);
    if (n > 0) {
        /* The first group: bf16 GEMMs of the one GPU, every range and source. */
        CHECK_INT(g[0].section, SIM_KVAL_SEC_FAMILY);
        CHECK_INT(g[0].family, SIM_KFAM_GEMM);
        CHECK_INT(g[0].gpu, 0);
        CHECK_INT(g[0].range, SIM_KVAL_ALL);
        CHECK_INT(g[0].source, SIM_KVAL_ALL);
        CHECK_INT(g[0].m.n, 11);
    }
    for (size_t i = 0; i < n; i++) {
        CHECK(g[i].m.n > 0);
        CHECK(g[i].gpu == 0); /* one GPU: no "all" rows */
        if (i > 0)
            CHECK(g[i].section >= g[i - 1].section);
    }
    sim_kval_free(kv);
}

static void key_names_are_the_reports(void)
{
    CHECK_STR(sim_kval_family_name(SIM_KVAL_ALL), "all");
    CHECK_STR(sim_kval_family_name(SIM_KFAM_MOE_FP8), "moe_fp8");
    CHECK_STR(sim_kval_range_name(SIM_KVAL_ALL), "all");
    CHECK_STR(sim_kval_range_name(0), "1-16");
    CHECK_STR(sim_kval_range_name(SIM_KVAL_N_RANGE - 1), ">8192");
    CHECK_STR(sim_kval_range_name(SIM_KVAL_BEYOND_L2), "bytes>L2");
    CHECK_STR(sim_kval_range_name(SIM_KVAL_FIT_ROWS), "fit");
    CHECK_STR(sim_kval_range_name(SIM_KVAL_HELD_OUT), "held-out");
    CHECK_STR(sim_kval_source_name(SIM_KSRC_AIC_GEMM), "aic:gemm_perf");
    CHECK_STR(sim_kval_speedup_gpu(0), "h100-sxm");
    CHECK_STR(sim_kval_speedup_gpu(2), "b200");
    CHECK(sim_kval_speedup_gpu(SIM_KVAL_SU_N_GPU) == NULL);
}

/* Each refusal and the kind of fault it is. */
static void refusals_say_what_kind_of_fault(void)
{
    static const char *const twice[] = {"h100-sxm", SIM_SOURCE_DIR "/hwprofiles/h100-sxm.json"};
    static const char *const no_tables[] = {"a100-sxm-40gb"};
    static const char *const one[] = {"h100-sxm"};
    static const struct {
        const char *name, *sub, *tables;
        const char *const *hw;
        int n_hw, speedup;
        sim_kval_fault fault;
        const char *msg;
    } cases[] = {
        {"missing_folder_is_bad_input", "/no-such-folder", NULL, NULL, 0, 0, SIM_KVAL_FAULT_INPUT,
         "kernel data folder"},
        {"profile_given_twice_is_usage", "", NULL, twice, 2, 0, SIM_KVAL_FAULT_USAGE,
         "'h100-sxm' given twice"},
        {"gpu_without_tables_is_bad_input", "", NULL, no_tables, 1, 0, SIM_KVAL_FAULT_INPUT,
         "no kernel tables for hardware 'a100-sxm-40gb'"},
        {"speedup_on_aic_tables_is_usage", "", NULL, NULL, 0, 1, SIM_KVAL_FAULT_USAGE,
         "--speedup needs the aic-vllm tables"},
        {"malformed_table_is_bad_input", "/bad-tree", "aic", one, 1, 0, SIM_KVAL_FAULT_INPUT,
         "latency: not a number"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_kval *kv = sim_kval_alloc();
        sim_kval_err err = {{0}, SIM_KVAL_FAULT_COUNT};
        sim_status st = open_run(kv, cases[i].sub, cases[i].tables, cases[i].hw, cases[i].n_hw,
                                 cases[i].speedup, &err);
        if (st == SIM_OK)
            printf("FAIL %s: opened\n", cases[i].name);
        CHECK(st != SIM_OK);
        CHECK_INT(err.fault, cases[i].fault);
        CHECK_CONTAINS(err.msg, cases[i].msg);
        sim_kval_free(kv);
    }

    /* aic-vllm on a tree without it: every table is a note, and validating has no samples. */
    sim_kval *kv = sim_kval_alloc();
    sim_kval_err err = {{0}, SIM_KVAL_FAULT_COUNT};
    CHECK_INT(open_run(kv, "", "aic-vllm", one, 1, 0, &err), SIM_OK);
    CHECK(has_note(kv, "aic-vllm/h100_sxm/0.19.0/gemm_perf: no table (.csv or .csv.gz); skipped"));
    const sim_kval_group *g;
    size_t n;
    CHECK(sim_kval_validate(kv, &g, &n, &err) != SIM_OK);
    CHECK_INT(err.fault, SIM_KVAL_FAULT_INPUT);
    CHECK_CONTAINS(err.msg, "no kernel tables under");
    CHECK_INT(n, 0);
    sim_kval_free(kv);
    sim_kval_free(NULL);
}

int main(void)
{
    small_tree_opens_aic_and_vidur_and_reports_groups_in_order();
    key_names_are_the_reports();
    refusals_say_what_kind_of_fault();
    return check_report("test_kernels_validate");
}
