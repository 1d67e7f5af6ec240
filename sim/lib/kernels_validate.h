/*
 * kernels_validate.h - what `llmstep validate-kernels` computes: the single-kernel rooflines
 * of kernels.h, uncalibrated (alpha = 1, beta = 0), against the measured kernel tables of
 * ../shared/data/kernels (aic and vidur, read by kernel_tables.h), and the GPU speed-up
 * check of decode steps (docs/validate-kernels.md has the method).
 *
 * A run is opened once (sim_kval_open: the table folder and set, the hardware profiles and
 * every table of their GPUs), then either validated (sim_kval_validate: every sample predicted,
 * samples faster than the datasheet peak left out, and the error statistics of the report's
 * groups: MAPE, median and maximum APE and the mean signed error per operator family, token
 * range, GPU and source table) or used for the speed-up check (sim_kval_speedup: measured and
 * predicted decode-step times on H100, H200 and B200 and their ratios to H100's).
 * Nothing here prints: results are plain structs, problems are messages in a sim_kval_err
 * whose fault says what kind of problem it is (the CLI's exit code).
 */
#ifndef SIM_KERNELS_VALIDATE_H
#define SIM_KERNELS_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "hw.h"
#include "step.h"
#include "metrics.h"
#include "status.h"

/* GPUs one table set covers at most (aic-vllm: six). */
#define SIM_KVAL_MAX_GPU 6
/* Notes a run keeps (more are dropped), and the size of each. */
#define SIM_KVAL_MAX_NOTES 64
#define SIM_KVAL_NOTE_SIZE 384

/* Token ranges of the report: 1-16, 17-128, 129-1024, 1025-8192, >8192 (sim_kval_range_name). */
#define SIM_KVAL_N_RANGE 5

/* Keys of a group (sim_kval_group): SIM_KVAL_ALL matches every value. The range key also takes
 * SIM_KVAL_BEYOND_L2 (every token count, only samples whose bytes exceed the GPU's L2), and,
 * for the fused MoE, SIM_KVAL_FIT_ROWS (the rows `hw import --tables` fits on) and
 * SIM_KVAL_HELD_OUT (the others). */
#define SIM_KVAL_ALL       (-1)
#define SIM_KVAL_BEYOND_L2 (-2)
#define SIM_KVAL_FIT_ROWS  (-3)
#define SIM_KVAL_HELD_OUT  (-4)

/* The kind of problem a failed call reports; the CLI's exit code follows it. */
typedef enum sim_kval_fault {
    SIM_KVAL_FAULT_INPUT = 0,   /* a folder, table, profile or model missing, unreadable or
                                 unmatched; out of memory */
    SIM_KVAL_FAULT_USAGE = 1,   /* the request contradicts itself or its table set */
    SIM_KVAL_FAULT_NUMERIC = 2, /* a prediction or a ratio is not a finite positive number */
    SIM_KVAL_FAULT_COUNT
} sim_kval_fault;

/* A failed call's message, one line without the program name, and its kind. The buffer is
 * larger than struct sim_err's: messages quote folder and profile paths (up to 4 KiB) and
 * wrap the loaders' own messages. */
typedef struct sim_kval_err {
    char msg[2048];
    sim_kval_fault fault;
} sim_kval_err;

/* What to open. */
typedef struct sim_kval_opts {
    const char *data_dir;    /* the folder of models/ and hwprofiles/ (ids resolve there) */
    const char *kernels_dir; /* the kernel tables; NULL: <data_dir>/../shared/data/kernels */
    const char *tables;      /* "aic" or "aic-vllm"; NULL: aic-vllm when <kernels_dir>/aic-vllm
                                is a folder, else aic */
    const char *const *hw;   /* profiles to test (ids or paths), each picking its GPU's tables */
    int n_hw;                /* 0..SIM_KVAL_MAX_GPU; 0: every GPU of the set (speedup: H100,
                                H200 and B200) */
    sim_gemm_model gemm;     /* the GEMM model of the predictions */
    int speedup;             /* 1: for sim_kval_speedup (aic-vllm tables; no hw, or exactly the
                                SIM_KVAL_SU_N_GPU profiles in the order of sim_kval_speedup_gpu) */
} sim_kval_opts;

/*
 * An open run: the resolved setup, the profiles and the notes, public; the samples and their
 * predictions, private. Made by sim_kval_alloc, filled by sim_kval_open, freed by sim_kval_free.
 */
typedef struct sim_kval {
    char kernels_dir[4096]; /* the folder read */
    const char *tables;     /* "aic" or "aic-vllm" (static) */
    sim_gemm_model gemm;
    int n_gpu; /* profiles loaded */
    sim_hw hw[SIM_KVAL_MAX_GPU];
    char hw_path[SIM_KVAL_MAX_GPU][4096]; /* the file each profile came from */
    /* What was read, skipped and left out, in order: a table's sample and skipped-row counts,
     * a missing table or model config, samples faster than the datasheet peak. */
    char notes[SIM_KVAL_MAX_NOTES][SIM_KVAL_NOTE_SIZE];
    int n_notes;
    struct sim_kval_data *data; /* private (kernels_validate.c) */
} sim_kval;

/* A zeroed run on the heap (the caller owns it), or NULL when out of memory. */
sim_kval *sim_kval_alloc(void);
/* Frees the run and everything it holds; accepts NULL. */
void sim_kval_free(sim_kval *kv);

/*
 * Resolves the table folder and set, loads the profiles of o->hw (or every GPU of the set)
 * and matches each to its GPU's tables, then reads every table of those GPUs: the aic
 * tables, and for the aic set the vidur linear operators (one folder per model, shapes from
 * models/<id>.json) and all-reduces. Missing tables and model configs are notes, not
 * failures. Returns SIM_OK, or a status with err filled: SIM_KVAL_FAULT_INPUT for a missing
 * folder, a profile or table that does not load, or a GPU without tables;
 * SIM_KVAL_FAULT_USAGE for a profile given twice and the speed-up's conditions (o->speedup).
 * Tables already read stay in kv (sim_kval_free). Call once per run.
 */
sim_status sim_kval_open(sim_kval *kv, const sim_kval_opts *o, sim_kval_err *err);

/* The groups of the report, in the order it lists them (a heading before each section). */
typedef enum sim_kval_section {
    SIM_KVAL_SEC_FAMILY = 0,       /* per family and GPU, and over all GPUs when several */
    SIM_KVAL_SEC_BEYOND_L2 = 1,    /* GEMM, decode-attention and MoE samples with bytes > L2 */
    SIM_KVAL_SEC_MOE_FIT = 2,      /* fused MoE: fit rows and held-out rows */
    SIM_KVAL_SEC_RANGE = 3,        /* per family, GPU and token range */
    SIM_KVAL_SEC_SOURCE = 4,       /* per source table and GPU */
    SIM_KVAL_SEC_SOURCE_RANGE = 5, /* per source table, GPU and token range */
    SIM_KVAL_SEC_COUNT
} sim_kval_section;

/* The statistics of one group of samples: those matching every key that is not SIM_KVAL_ALL. */
typedef struct sim_kval_group {
    sim_kval_section section;
    int family;    /* sim_kfam, or SIM_KVAL_ALL */
    int gpu;       /* index into sim_kval.hw, or SIM_KVAL_ALL */
    int range;     /* 0..SIM_KVAL_N_RANGE-1, SIM_KVAL_ALL, SIM_KVAL_BEYOND_L2, SIM_KVAL_FIT_ROWS or
                      SIM_KVAL_HELD_OUT */
    int source;    /* sim_ksrc, or SIM_KVAL_ALL */
    sim_metrics m; /* n, MAPE, median and maximum APE (percent; r2 unused) */
    double bias_pct; /* mean of (pred - meas) / meas, percent */
} sim_kval_group;

/*
 * Predicts every sample of the run with the rooflines step.c uses (MLA module rows through
 * the step model itself), leaves out the samples measured faster than their FLOPs at the
 * datasheet peak allow (a note per GPU and source), and computes the report's groups:
 * *groups (OUT, owned by kv, valid until sim_kval_free) gets the *n_groups groups that have
 * samples, in report order. Call once per run. Returns SIM_OK, or a status with err filled:
 * SIM_KVAL_FAULT_INPUT when the run has no samples or memory runs out, SIM_KVAL_FAULT_NUMERIC
 * when a prediction is not a positive number.
 */
sim_status sim_kval_validate(sim_kval *kv, const sim_kval_group **groups, size_t *n_groups,
                             sim_kval_err *err);

/* Names of a group's keys for reports: "all" for SIM_KVAL_ALL, else the family's, the range's
 * ("1-16" ... ">8192", "bytes>L2", "fit", "held-out") and the source's. */
const char *sim_kval_family_name(int family);
const char *sim_kval_range_name(int range);
const char *sim_kval_source_name(int source);

/* ---- the GPU speed-up check of decode steps ---- */

/* Keys each sequence attends in the check's decode steps (SIM_KVAL_SU_KEYS - 1 cached). */
#define SIM_KVAL_SU_KEYS 2048
/* GPUs of the check: H100 (the reference), H200, B200 (sim_kval_speedup_gpu). */
#define SIM_KVAL_SU_N_GPU 3
/* Rows of the check: two models, three batch sizes, SIM_KVAL_SU_N_GPU GPUs. */
#define SIM_KVAL_SU_MAX_ROWS 18

/* Operator classes of the check. */
typedef enum sim_kval_class {
    SIM_KVAL_CLASS_GEMM = 0, /* QKV, O, gate_up and down projections */
    SIM_KVAL_CLASS_ATTN = 1, /* decode attention */
    SIM_KVAL_CLASS_AR = 2,   /* all-reduces (TP > 1) */
    SIM_KVAL_CLASS_COUNT
} sim_kval_class;

/* The profile id of GPU g of the check (0 <= g < SIM_KVAL_SU_N_GPU). */
const char *sim_kval_speedup_gpu(int g);

/* One model, batch and GPU of the check, with the same case on the reference GPU (H100). */
typedef struct sim_kval_su_row {
    char model[128]; /* the model's id */
    int tp;
    int64_t batch;
    int gpu; /* index into sim_kval.hw; 0 is the reference */
    double meas_s[SIM_KVAL_CLASS_COUNT], pred_s[SIM_KVAL_CLASS_COUNT];         /* per class, s */
    double ref_meas_s[SIM_KVAL_CLASS_COUNT], ref_pred_s[SIM_KVAL_CLASS_COUNT]; /* H100's, s */
    double measured_s, predicted_s;         /* step: the sum of the classes */
    double measured_ratio, predicted_ratio; /* step time / H100's (speed-up = 1 / ratio) */
    double diff_pct;                        /* predicted ratio / measured ratio - 1, percent */
    double class_measured_ratio[SIM_KVAL_CLASS_COUNT]; /* per class; 0 where H100 has none */
    double class_predicted_ratio[SIM_KVAL_CLASS_COUNT];
} sim_kval_su_row;

/* The check's result. */
typedef struct sim_kval_su_result {
    sim_kval_su_row rows[SIM_KVAL_SU_MAX_ROWS]; /* per model, batch and GPU, in that order */
    int n_rows;
    int within_10pct, compared; /* non-reference rows with |diff_pct| <= 10, and all of them */
    int interpolated;           /* 1 when a GEMM shape was interpolated between measured ones */
} sim_kval_su_result;

/*
 * The speed-up check on a run opened with o->speedup: decode steps of Llama-3.1-8B (TP 1)
 * and Llama-3.1-70B (TP 4) at batch 1, 8 and 64 with SIM_KVAL_SU_KEYS keys, bf16, their
 * operator times summed from the measured aic-vllm tables (GEMM shapes not measured: bilinear
 * interpolation in (n, k) at the same m; all-reduce sizes: linear in bytes) and predicted by
 * the step model (uncalibrated). Fills *out (OUT); on failure out->rows holds the rows
 * completed before it. Returns SIM_OK, or a status with err filled: SIM_KVAL_FAULT_INPUT when a
 * model does not load or a table lacks a row, SIM_KVAL_FAULT_NUMERIC when a ratio is not finite.
 */
sim_status sim_kval_speedup(const sim_kval *kv, sim_kval_su_result *out, sim_kval_err *err);

#endif
