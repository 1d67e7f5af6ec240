/*
 * meas_pred.h - predicting measurement rows (../shared/MEASUREMENTS.md) and fitting alpha and
 * beta_s to them: what `llmstep validate` and `llmstep calibrate` compute, and what the
 * library offers for rows in memory or in files. Each row is predicted once without
 * calibration (a step or an offline batch is linear in alpha and beta_s:
 * alpha x roofline_s + beta_s x n_steps + host_s); serving rows share one simulation per run
 * (same setup and workload) and are simulated again for each (alpha, beta_s) a fit tries.
 * Models, profiles and engines come from a load-once cache, so hundreds of rows naming the
 * same files load each file once. Messages start with the row's "file:line: id: ".
 */
#ifndef SIM_MEAS_PRED_H
#define SIM_MEAS_PRED_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "calib_fit.h"
#include "calib_json.h"
#include "deploy.h"
#include "meas_json.h"
#include "sched_v0.h"
#include "status.h"

/* The engine profile for rows that name no engine_version (the V0 offline-batch data). */
#define SIM_MEAS_DEFAULT_ENGINE "vllm-v0"

/* How rows are predicted. */
typedef struct sim_meas_opts {
    const char *engine; /* the engine profile for rows without a usable engine_version */
    int engine_given;   /* 1: engine for every row, whatever its engine_version */
    sim_roofline_mode mode;
    sim_gemm_model gemm;
    int no_host; /* 1: the engine's host time is left out */
    sim_fit_opts fit;
    /* NULL: each row's named hardware profile. Else every row is predicted on this profile
     * (rows of one hardware: the profile with a calibration's figures, or a fit's trial). */
    const sim_hw *hw;
    /* 0: every row on hw. Else the model classes (bit sim_model_class) hw's figures were
     * fitted on: rows of a model of another class are predicted on hw_other (NULL: the row's
     * named profile) and marked in sim_meas_pred.other (a calibration's figure domain). */
    unsigned domain;
    const sim_hw *hw_other;
    /* NULL: fits are of alpha and beta_s only. Else the figures fits add (meas_fig.h); used
     * by sim_meas_holdout. */
    const struct sim_meas_figspec *figs;
    /* 0 (default): rows with a per-call constant (sim_meas_call_constants) are predicted and
     * reported but never fitted; 1: fitted like the others (--keep-outliers). */
    int keep_outliers;
} sim_meas_opts;

/* The uncalibrated parts of one row's prediction: alpha x roofline_s + beta_s x n_steps +
 * host_s. */
typedef struct sim_row_pred {
    double roofline_s; /* sum of roofline step times */
    double n_steps;    /* engine steps */
    double host_s;     /* engine host time (0 with no_host) */
    double comm_s;     /* all-reduce part of roofline_s (single steps only; batches: 0) */
    int64_t preemptions;
} sim_row_pred;

/*
 * The engine profile of a row (MEASUREMENTS.md): opts->engine when engine_given; else from
 * the row's engine_version for vLLM (before 0.8.0 the V0 engine; 0.8-0.13 vllm-v1-0.12;
 * later vllm-v1); else opts->engine.
 */
const char *sim_meas_row_engine(const sim_meas_opts *o, const sim_meas_row *r);

/* Most select and exclude terms one load takes. */
#define SIM_MEAS_MAX_FILTERS 64

/*
 * Loads n_files measurement files into set and keeps the rows that match every select term
 * and no exclude term ("field=value", sim_meas_filter_parse). who prefixes the messages of
 * the selection ("calibrate: "): a bad term is SIM_EINVAL with "<who>--select <problem>" and
 * *bad_term set; a bad file is the loader's status and message; no row left is SIM_EINVAL
 * with "<who>no row matches the selection". NULL names are refused (SIM_EINVAL).
 */
sim_status sim_meas_load_selected(const char *const *files, size_t n_files, const char *const *sel,
                                  size_t n_sel, const char *const *exc, size_t n_exc,
                                  const char *who, sim_meas_set *set, int *bad_term,
                                  struct sim_err *err);

/*
 * Engine arguments a deployment tool gives its runs, for rows that do not carry their own
 * ("scheduler" object absent): the rows were measured on engines started with them.
 *   SIM_SCHED_RULE_DEFAULTS       "engine-defaults": the engine's defaults (nothing changes)
 *   SIM_SCHED_RULE_AIC_BENCHMARK  "aic-benchmark": aiconfigurator's generator in benchmark
 *       mode for vLLM aggregated serving (rule_plugin/benchmark/vllm.rule, from 2026-01-30;
 *       flags passed by backend_templates/vllm/cli_args.j2 from 2026-01-08), with the run's
 *       batch size equal to its concurrency N, prompt L and output O tokens:
 *       max_num_seqs = N, max_num_batched_tokens = N + L + 1500, max_model_len = L + O + 1500.
 *       Closed-loop serving rows only (others have no batch size; they keep the defaults).
 */
typedef enum sim_sched_rule {
    SIM_SCHED_RULE_DEFAULTS = 0,
    SIM_SCHED_RULE_AIC_BENCHMARK = 1
} sim_sched_rule;

/* Parses a rule's name; SIM_EINVAL naming the known rules otherwise. */
sim_status sim_sched_rule_parse(const char *name, sim_sched_rule *out, struct sim_err *err);

/* The rule's name ("engine-defaults", "aic-benchmark"). */
const char *sim_sched_rule_name(sim_sched_rule rule);

/* Applies rule to the rows of set it covers whose "scheduler" object is absent; returns how
 * many rows it changed. */
size_t sim_meas_apply_sched_rule(sim_meas_set *set, sim_sched_rule rule);

/* One step or offline-batch row (not serving), uncalibrated. work: scratch of a batch. hw: NULL
 * for the row's named profile, else the profile to use. */
sim_status sim_meas_predict_one(sim_cache *c, const sim_meas_row *row, const char *engine,
                                const sim_hw *hw, sim_roofline_mode mode, sim_gemm_model gemm,
                                int no_host, sim_batch_work *work, sim_row_pred *out,
                                struct sim_err *err);

/* A serving simulation shared by the rows that measured statistics of the same run. Its
 * requests are built for each simulation and freed after it, so a set of rows holds one run's
 * requests at a time, not every run's (issue 27: three rows of 2^24 requests held 5 GB). */
typedef struct sim_serve_group {
    sim_deployment d;
    int have; /* st and res hold the run at (alpha, beta_s) */
    double alpha, beta_s;
    sim_serve_stats st;
    sim_serve_result res;
} sim_serve_group;

/* Everything needed to predict every row of a set at any (alpha, beta_s). */
typedef struct sim_meas_pred {
    const sim_meas_set *set;
    sim_cache *cache;
    sim_row_pred *p; /* per row; serving rows: preemptions only */
    int *group;      /* per row: its serving group, or -1 */
    sim_serve_group *g;
    int n_groups;
    sim_batch_work *work;
    unsigned char *other; /* per row: 1 when predicted on opts.hw_other (opts.domain) */
    /* per row: the per-call constant of its length series, seconds, and that constant over
     * the series' shortest run (0 and 0 when the row has none; sim_meas_call_constants) */
    double *call_const_s;
    double *call_const_frac;
    int keep_outliers; /* opts.keep_outliers, as the fits read it */
    /* per row: 1 when its latest prediction (sim_meas_predict_row) was of a serving run whose
     * TTFT is mostly queueing (sim_serve_ttft_queued), else 0: the regime of that prediction */
    unsigned char *queued;
} sim_meas_pred;

/*
 * Rows whose structure says "per-call constant" (docs/calibration.md, "Rows with a per-call
 * constant"). Offline-batch rows that differ only in length (the same hardware, model,
 * parallel layout, dtypes, engine and version, scheduler settings and batch, with prompt and
 * output tokens in one ratio) form a series. A series of at least SIM_CALL_CONST_MIN_LENGTHS
 * distinct lengths is fitted by least squares, t = c + k x output_tokens; every step then
 * grows with the lengths (attention faster than linearly), so the intercept c of a run without
 * a per-call cost is at most noise. When k > 0 and c > SIM_CALL_CONST_FRAC x the series'
 * shortest time, every row of the series gets const_s = c and const_frac = c / shortest;
 * other rows 0. Both arrays hold set->n entries. SIM_ENOMEM leaves them zeroed.
 */
#define SIM_CALL_CONST_MIN_LENGTHS 3
#define SIM_CALL_CONST_FRAC        0.10
sim_status sim_meas_call_constants(const sim_meas_set *set, double *const_s /* OUT */,
                                   double *const_frac /* OUT */);

/* 1 when row i enters fits: in mask (NULL: every row) and not a row with a per-call constant
 * (unless keep_outliers). */
int sim_meas_row_fitted(const sim_meas_pred *mp, const unsigned char *mask, size_t i);

/* Predicts every row of set (uncalibrated parts; serving rows get their simulation ready).
 * On failure mp holds what was built: sim_meas_pred_free it. */
sim_status sim_meas_predict_all(const sim_meas_opts *o, const sim_meas_set *set, sim_cache *c,
                                sim_meas_pred *mp, struct sim_err *err);

/* Row i's prediction at (alpha, beta_s), seconds. */
sim_status sim_meas_predict_row(sim_meas_pred *mp, size_t i, double alpha, double beta_s,
                                double *out, struct sim_err *err);

/*
 * The linear terms of a serving row (p ~ alpha R + beta_s N + H) from its statistic p0 at
 * (a0, b0_s), pa at (a0 (1 + SIM_MEAS_LIN_DA), b0_s) and pb at (a0, b0_s + SIM_MEAS_LIN_DB_S):
 * R and N the one-sided slopes, at least 0, and H = p0 - a0 R - b0_s N. The start of
 * sim_meas_fit (at 1, 0) and a figure fit's trials (meas_fig.c) linearize this way.
 */
#define SIM_MEAS_LIN_DA   0.01 /* 1% of alpha */
#define SIM_MEAS_LIN_DB_S 1e-4 /* 0.1 ms of beta_s */
void sim_meas_serving_linear(double p0, double pa, double pb, double a0, double b0_s, double *R,
                             double *N, double *H);

/*
 * Serving row i's run simulated on profile hw (NULL: the row's own) at (alpha, beta_s), its
 * statistics into *out; the cached run sim_meas_predict_row keeps is left as it was. A figure
 * fit (meas_fig.c) times trial profiles this way. SIM_EINVAL for a row that is not serving.
 */
sim_status sim_meas_serve_on(sim_meas_pred *mp, size_t i, const sim_hw *hw, double alpha,
                             double beta_s, sim_serve_stats *out, struct sim_err *err);

/*
 * Fits alpha and beta_s on the rows whose mask is set (NULL: all): by linear least squares
 * when every row is linear in them, else (serving rows) by nonlinear least squares started
 * from the linear rows' fit, or from (1, 0). cmd prefixes messages.
 */
sim_status sim_meas_fit(const sim_meas_opts *o, sim_meas_pred *mp, const unsigned char *mask,
                        const char *cmd, sim_fit_result *res, struct sim_err *err);

void sim_meas_pred_free(sim_meas_pred *mp);

/* Where the rows of a calibration came from: the files and the select/exclude terms. */
typedef struct sim_meas_origin {
    const char *const *files;
    size_t n_files;
    const char *const *select;
    size_t n_select;
    const char *const *exclude;
    size_t n_exclude;
    const char *command;          /* what made the file (the command line, or the library call) */
    const char *scheduler_rule;   /* engine arguments given to rows without their own (NULL:
                                     not recorded; sim_sched_rule_name) */
    const sim_calib_refit *refit; /* check --refit: what it replaces (NULL: none) */
} sim_meas_origin;

/*
 * Writes the calibration file of a fit atomically (MEASUREMENTS.md, "Calibration file"):
 * the fit, its bounds and options from o, the hardware and the engine whose host time it
 * took as known ("none" with o->no_host), where the rows came from, and the band (NULL or
 * empty: none; sim_meas_band_compute).
 */
sim_status sim_meas_calib_write(const char *path, const sim_meas_opts *o,
                                const sim_meas_origin *from, const char *hardware,
                                const char *engine, const sim_fit_result *res,
                                const sim_calib_band *band, struct sim_err *err);

/*
 * SIM_EINVAL with "<who>: <opt> <path> is the input <file>; it would be replaced" when path
 * names a file the rows were read or predicted from: one of files[0 .. n_files) (the
 * measurement files), a trace a row names, or a file mp->cache loaded (models, profiles,
 * engines, calibrations); else SIM_OK. What `calibrate --out`, `check --refit` and the
 * library's calibration writer check before writing (issue 27).
 */
sim_status sim_meas_output_clear(const sim_meas_pred *mp, const char *path,
                                 const char *const *files, size_t n_files, const char *who,
                                 const char *opt, struct sim_err *err);

/* A row's value of a field that holdout and group tables may use (model, hardware, kind,
 * dtype, engine, tp, batch, prompt_tokens, output_tokens, context_tokens, metric,
 * concurrency); NULL for another field. */
const char *sim_meas_group_field(const sim_meas_row *r, const char *field, char *buf, size_t cap);

/* SIM_EINVAL ("<cmd>: rows name more than one hardware profile ...") unless every row of set
 * names the same one. */
sim_status sim_meas_check_one_hw(const sim_meas_set *set, const char *cmd, struct sim_err *err);

/* One fold of a leave-one-group-out validation. */
typedef struct sim_meas_fold {
    char value[160]; /* the held-out value of the field */
    size_t n;        /* rows held out */
    double alpha, beta_s, mape_pct;
} sim_meas_fold;

/*
 * Leave-one-group-out: for each value of field, fits alpha and beta_s on the other rows and
 * predicts the held-out ones into pred[] (every row once). Up to folds_cap folds are
 * reported in folds (*n_folds of them). field must be a sim_meas_group_field name and the
 * rows of one hardware profile. queued (NULL: not wanted) gets each held-out prediction's
 * regime (sim_meas_pred.queued at the time it was made).
 */
sim_status sim_meas_holdout(const sim_meas_opts *o, sim_meas_pred *mp, const char *field,
                            double *pred, unsigned char *queued, sim_meas_fold *folds,
                            int folds_cap, int *n_folds, struct sim_err *err);

/* sim_meas_holdout among the rows whose within[] is set (NULL: all): the others are neither
 * fitted on nor predicted (pred[] keeps their entries). */
sim_status sim_meas_holdout_in(const sim_meas_opts *o, sim_meas_pred *mp,
                               const unsigned char *within, const char *field, double *pred,
                               unsigned char *queued, sim_meas_fold *folds, int folds_cap,
                               int *n_folds, struct sim_err *err);

/* Distinct values of a sim_meas_group_field among the rows whose mask is set (NULL: all). */
/* Among the rows of mask (NULL: all), the fewest left when the rows of one value of field are
 * left out (what a holdout fold fits on), and that value (in buf). */
size_t sim_meas_fewest_left(const sim_meas_set *set, const unsigned char *mask, const char *field,
                            char *buf, size_t cap);

int64_t sim_meas_count_values(const sim_meas_set *set, const unsigned char *mask,
                              const char *field);

/* The band family of a row (SIM_BAND_*: its kind, and for serving rows its metric's; a TTFT
 * row predicted by a run whose TTFT is mostly queueing, queued 1, is SIM_BAND_TTFT_QUEUED). */
int sim_meas_row_band_family(const sim_meas_row *r, int queued);

/* Most groups a band's folds may have. */
#define SIM_BAND_MAX_FOLDS 64

/*
 * The band a calibration records (sim_calib_band; docs/calibration.md, "Prediction
 * intervals"): the rows that fits take (sim_meas_row_fitted) are each predicted by an
 * alpha/beta fit on the others, leaving out one group at a time of the first field among
 * model, tp, batch, concurrency, prompt_tokens, output_tokens and context_tokens that splits
 * them into 2 to SIM_BAND_MAX_FOLDS groups each leaving 2 rows; the ratios measured /
 * predicted give each family's quantiles. When no field does, or a held-out fit fails, the
 * band is empty (held_out_by "") and why (why_cap bytes) says so; SIM_ENOMEM is the only
 * failure.
 */
sim_status sim_meas_band_compute(const sim_meas_opts *o, sim_meas_pred *mp,
                                 sim_calib_band *band /* OUT */, char *why /* OUT */,
                                 size_t why_cap, struct sim_err *err /* OUT */);

/* sim_meas_band_compute over the rows whose within[] is set (NULL: all), as a calibration
 * fitted on those rows alone would record it. */
sim_status sim_meas_band_compute_in(const sim_meas_opts *o, sim_meas_pred *mp,
                                    const unsigned char *within, sim_calib_band *band /* OUT */,
                                    char *why /* OUT */, size_t why_cap,
                                    struct sim_err *err /* OUT */);

/* How many rows of one family fall in the band's interval at some level. */
typedef struct sim_band_cover {
    int64_t n;                    /* rows of the family (0: none, or no band for it) */
    int64_t inside, below, above; /* measured / predicted inside, below, above the interval */
    double ratio_lo, ratio_hi;    /* the interval, as ratios to the prediction */
    double ratio_median;          /* median measured / predicted of the rows */
} sim_band_cover;

/*
 * The rows of set, predicted as pred[] (seconds, > 0) in the regimes queued[] (NULL: none
 * queued), against band b's level_pct interval, per family (sim_band_interval); *no_band
 * counts rows whose family has no band.
 */
sim_status sim_meas_band_cover(const sim_meas_set *set, const double *pred,
                               const unsigned char *queued, const sim_calib_band *b, int level_pct,
                               sim_band_cover out[SIM_BAND_FAMILIES] /* OUT */,
                               int64_t *no_band /* OUT */, struct sim_err *err /* OUT */);

/*
 * The band's coverage where no row saw its own band: for each value of field, the band that a
 * calibration on the other groups' rows records (sim_meas_band_compute_in, whose folds hold out
 * by a field of their own) against the group's rows predicted as pred[] in the regimes
 * queued[] (sim_meas_holdout's fit on the other groups; queued NULL: none). out[] pools the groups
 * per family: ratio_lo and ratio_hi are the intervals' means over the rows; *no_band counts rows
 * whose fold has no band for their family; held_out_by (by_cap bytes) lists the folds' fields.
 * SIM_ENOMEM is the only failure.
 */
sim_status sim_meas_band_holdout(const sim_meas_opts *o, sim_meas_pred *mp, const char *field,
                                 const double *pred, const unsigned char *queued, int level_pct,
                                 sim_band_cover out[SIM_BAND_FAMILIES] /* OUT */,
                                 int64_t *no_band /* OUT */, char *held_out_by /* OUT */,
                                 size_t by_cap, struct sim_err *err /* OUT */);

#endif
