/*
 * meas_fig.h - fitting hardware-profile figures to measurement rows together with alpha and
 * beta_s (`llmstep calibrate --fit`, `validate --holdout ... --fit`; docs/calibration.md,
 * "Fitting profile figures"). Each trial of the figures re-simulates the rows on a copy of
 * the profile; calib_fig.h does the bounded, robust, regularized least squares and the
 * guards. Here: which figures, their priors from the profile, and the GQA behaviour of
 * decode attention (attn_decode_kv_per_q_head_flag, 0 or 1), chosen by fitting both.
 *
 * Priors: each figure's prior is the profile's value; its width is 10% of max(|value|,
 * scale) for a measured, derived or datasheet figure (tight) and 100% for an estimated or
 * default one (loose). sigma_row, which weighs a prior against a row's relative residual,
 * is the root-mean-square relative residual of the alpha/beta-only fit on the same rows
 * (at least 1%).
 *
 * The default set (`--fit profile`), by what the training rows span:
 *   gemm_eff_<dtype>_frac      batches vary (the compute-bound share of the time moves)
 *   bw_factor_weights_frac     batches vary (small batches stream the weights)
 *   bw_factor_kv_gather_frac   batches and sequence lengths vary (the KV bytes move)
 *   attn_decode_seq_head_s     at least 3 batch sizes (a cost per sequence)
 *   gemm_fixed_s               at least 2 layer counts and 2 TPs (a time per kernel: kernels
 *                              per step change with layers, work per kernel with TP)
 *   attn_decode_kv_per_q_head_flag   a GQA model among the rows (compared, 0 and 1)
 * Only step and offline-batch rows (serving rows are refused).
 *
 * The default set must also beat alpha/beta where its own rows can check it: leave-one-
 * model-out within the training rows (leave-one-TP-out when they hold one model), fitting the
 * chosen figures (and comparing the flag) on the other groups and alpha/beta only on the same
 * groups. When the figures' pooled held-out MAPE is the larger, or they make any one held-out
 * group worse than alpha/beta only does (a model unlike the others, which a pooled figure
 * hides), the fit falls back to alpha/beta only on the profile as it is (every figure held,
 * SIM_FIG_HELD_HOLDOUT; the profile's flag); so it does when the rows hold one model at one TP
 * (nothing to hold out). The pooled win must also exceed one standard error of the cross-
 * validation estimate, computed from the folds' paired MAPE differences (the one-standard-error
 * rule, Hastie, Tibshirani and Friedman, ESL 7.10). When the set passes, the same comparison is
 * made once more for the whole procedure (nested cross-validation: in each fold the default
 * set is chosen, fitted and checked as here, falling back as here), because what a user gets
 * is the procedure's result, and a check of the figures alone is optimistic about it (Varma
 * and Simon 2006; Cawley and Talbot 2010). A figure fit stores structural errors of the rows in the
 * figures as readily as it measures them (docs/calibration.md, "Self-check"); only a held-out
 * comparison tells the two apart. A list of figures asked for by name is fitted as asked (calibrate
 * prints the comparison).
 */
#ifndef SIM_MEAS_FIG_H
#define SIM_MEAS_FIG_H

#include "calib_fig.h"
#include "hw.h"
#include "meas_pred.h"

/* What to fit. */
typedef struct sim_meas_figspec {
    int profile; /* 1: the default set the rows support (above); f and n ignored */
    int n;
    sim_hw_field f[SIM_FIG_MAX]; /* figures to fit continuously */
    int flag;                    /* 1: choose attn_decode_kv_per_q_head_flag by comparing fits */
    sim_fit_loss loss;
    int nested; /* set internally: a fit inside the procedure check (runs no procedure check) */
} sim_meas_figspec;

/* Parses "profile" or "FIGURE[,FIGURE...]" (the figures of sim_hw_field_fit_range, and
 * attn_decode_kv_per_q_head_flag). SIM_EINVAL with the offending name otherwise. */
sim_status sim_meas_figspec_parse(const char *s, sim_fit_loss loss, sim_meas_figspec *out,
                                  struct sim_err *err);

/* A figure fit and what it was compared with. */
typedef struct sim_meas_figfit {
    int n; /* figures fitted continuously */
    sim_hw_field f[SIM_FIG_MAX];
    double prior[SIM_FIG_MAX]; /* the profile's values (the priors) */
    /* 1: the profile lacks figure k (no such term); the fit starts it at 10 x its scale under
     * a prior as wide as its range, and held it stays absent (value 0) */
    int absent[SIM_FIG_MAX];
    char why[SIM_FIG_MAX][112]; /* why each was chosen (the rows' span), or "asked for" */
    char skipped[1024];         /* profile set: the figures left out and why */
    sim_fig_result res;         /* the chosen fit */
    int flag_compared;          /* 1: both values of the flag were fitted */
    int flag_value;             /* the chosen (or the profile's) value */
    int flag_profile;           /* the profile's value */
    double flag_cost[2], flag_mape_pct[2]; /* by flag value (when compared) */
    sim_fit_result ab;                     /* alpha and beta_s alone on the same rows */
    double sigma_row_frac;
    sim_fit_loss loss;
    long evals; /* predictions of every row the fit made */
    /* The profile set's check on the training rows (above); check_field "" when not run. */
    char check_field[16];
    int check_folds;
    double check_ab_mape_pct, check_fig_mape_pct;
    double check_diff_se_pct; /* standard error of the folds' mean paired MAPE difference */
    int check_folds_lost;     /* held-out groups the figures made worse than alpha/beta only */
    char check_worst[64];     /* the group they made worst, "" when none */
    double check_worst_ab_pct, check_worst_fig_pct; /* its MAPE each way */
    /* The procedure check (above): run only when the fixed-set check passed. */
    int proc_run;
    double proc_fig_mape_pct, proc_diff_se_pct;
    int proc_folds_lost;
    int check_fell_back;  /* 1: the figures lost; res is the alpha/beta-only fit */
    char check_note[160]; /* why the check was not run or failed, "" otherwise */
    sim_hw hw;            /* the profile with the determined figures and the chosen flag */
    /* The model classes of the rows (bit sim_model_class): the fit's domain. A model of
     * another class is predicted with alpha/beta only (ab) on the profile as it is: the
     * figures were fitted on models unlike it (sim_model_in_classes). */
    unsigned domain;
} sim_meas_figfit;

/*
 * The training check's rule fold by fold: of n held-out groups (ab[k] and fig[k] the same
 * group, held out of an alpha/beta-only fit and of the figure fit), how many the figures made
 * worse (a larger MAPE; NaN counts as worse); *worst the index of the largest loss, -1 when
 * none. The set is kept only when none is worse and the pooled MAPE is no larger.
 */
int sim_meas_folds_lost(const sim_meas_fold *ab, const sim_meas_fold *fig, int n, int *worst);

/* The standard error of the cross-validation estimate of the figures' gain, from the folds
 * (ESL 7.10; rows held out together are not independent draws, so not from the rows): the
 * sample standard deviation of the n folds' paired differences fig[k] - ab[k] of MAPE, over
 * sqrt(n). NaN below 2 folds. */
double sim_meas_fold_diff_se(const sim_meas_fold *ab, const sim_meas_fold *fig, int n);

/*
 * Fits spec's figures with alpha and beta_s on the rows whose mask is set (NULL: all) of mp,
 * on the rows' hardware profile (o->hw when set, else the profile the rows name; they must
 * name one). cmd prefixes messages. out may be large: allocate it.
 */
sim_status sim_meas_fit_figures(const sim_meas_opts *o, sim_meas_pred *mp,
                                const unsigned char *mask, const sim_meas_figspec *spec,
                                const char *cmd, sim_meas_figfit *out, struct sim_err *err);

/* Row predictions of mp's rows whose mask is set (NULL: all) on hw (alpha, beta_s applied),
 * into pred[] at the rows' indices. */
sim_status sim_meas_predict_on(const sim_meas_opts *o, sim_meas_pred *mp, const unsigned char *mask,
                               const sim_hw *hw, double alpha, double beta_s, double *pred,
                               struct sim_err *err);

/* sim_meas_calib_write with the figures of ff (NULL: none): the determined ones, and the
 * flag when the fit chose it, in "figures"; the loss and the undetermined ones in
 * "figure_fit". */
sim_status sim_meas_calib_write_figs(const char *path, const sim_meas_opts *o,
                                     const sim_meas_origin *from, const char *hardware,
                                     const char *engine, const sim_fit_result *res,
                                     const sim_meas_figfit *ff, const sim_calib_band *band,
                                     struct sim_err *err);

/* "on its bound", "relative stderr above 25%", ... */
const char *sim_meas_fig_held_name(sim_fig_held h);

#endif
