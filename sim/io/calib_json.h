/*
 * calib_json.h - reads the calibration file of ../shared/MEASUREMENTS.md:
 * {"schema": "llmstep-calibration/1", "hardware": id, "alpha": a, "beta_s": b, ...}.
 * Only alpha, beta_s, hardware and the optional "figures" change predictions; the other
 * documented fields (standard errors, bounds, fit metrics, training set, "figure_fit") are
 * checked for type and kept out of the core. "figures" ({"<figure key>": {"value": v,
 * "stderr": s}}, written by `llmstep calibrate --fit`) are hardware-profile figures that
 * replace the profile's before predicting (sim_calib_apply_figures); a key that is not a
 * profile figure is an error naming the file, line and key.
 */
#ifndef SIM_CALIB_JSON_H
#define SIM_CALIB_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "hw.h"
#include "model.h"
#include "status.h"

#define SIM_CALIB_SCHEMA "llmstep-calibration/1"

/* beta_s, the fixed time a calibration adds to every step, is in [0, SIM_BETA_MAX_S] seconds
 * wherever it is read or fitted: a negative one made steps of negative time (every command,
 * the library and Python check it against these). */
#define SIM_BETA_MAX_S 1e3

/*
 * The band of a calibration (docs/calibration.md, "Prediction intervals"): for each metric
 * family, the quantiles of measured / predicted over the training rows, each predicted by a
 * fit that did not see it (leave-one-group-out by held_out_by). Quantile k is at 5 k percent
 * (k = 0..20: minimum, 5%, ..., 95%, maximum), linear between the sorted ratios (NumPy's
 * default). n_rows 0: no band for the family.
 */
enum {
    SIM_BAND_OFFLINE, /* offline_batch rows */
    SIM_BAND_PREFILL,
    SIM_BAND_DECODE,
    SIM_BAND_STEP,
    SIM_BAND_TTFT,        /* serving rows by metric */
    SIM_BAND_TTFT_QUEUED, /* TTFT of runs whose TTFT is mostly queueing (sim_serve_ttft_queued) */
    SIM_BAND_TPOT,
    SIM_BAND_E2E,
    SIM_BAND_FAMILIES
};
#define SIM_BAND_QUANTILES 21
typedef struct sim_calib_band {
    char held_out_by[32]; /* the field of the folds; "" when the file has no band */
    int64_t n_rows[SIM_BAND_FAMILIES];
    double ratio_q[SIM_BAND_FAMILIES][SIM_BAND_QUANTILES];
} sim_calib_band;

/* "offline_batch", "prefill", "decode", "step", "ttft", "ttft_queued", "tpot", "e2e"; "?"
 * otherwise. */
const char *sim_band_family_name(int family);

/*
 * The central level_pct interval of a family's band as ratios to the prediction: lo at
 * (100 - level) / 2 percent, hi at (100 + level) / 2 percent. level_pct: 10 to 100 in steps of
 * 10. Returns 0 (and leaves lo, hi) when the family has no band or the level is not one of
 * those.
 */
int sim_band_interval(const sim_calib_band *b, int family, int level_pct, double *lo, double *hi);

/* Whether level_pct is one a band gives (10, 20, ..., 100), and the rule as messages say it. */
int sim_band_level_valid(int64_t level_pct);
#define SIM_BAND_LEVEL_RULE "expected 10, 20, ..., 100 (the band's quantiles are 5% apart)"

/*
 * The band of one prediction (docs/calibration.md, "Prediction intervals and the drift
 * alarm"): the central level_pct interval of the measured / predicted ratios a calibration
 * recorded for one family of rows, predicted by fits that had not seen them. A prediction p of
 * that family lies in [lo_frac p, hi_frac p] as often as those held-out rows did. Taken by
 * sim_deploy_band (deploy.h), the one place every command, the library and Python get it.
 */
typedef struct sim_pred_band {
    int family;              /* SIM_BAND_* */
    int level_pct;           /* 10, 20, ..., 100 */
    double lo_frac, hi_frac; /* ratios at (100 - level) / 2 and (100 + level) / 2 percent */
    int64_t n_rows;          /* held-out rows behind the family's quantiles */
    const char *held_out_by; /* the field of the folds (owned by the calibration) */
} sim_pred_band;

struct sim_jw;
/*
 * Writes b around a prediction of predicted_s seconds as the object key: {"level_pct",
 * "family", "lo_s", "hi_s", "lo_frac", "hi_frac", "held_out_rows", "held_out_by"} (lo_s =
 * lo_frac x predicted_s; the fractions apply to any statistic of the family).
 * Returns 0, or 1 when a bound is not finite (the caller refuses the output).
 */
int sim_band_json(struct sim_jw *w, const char *key, const sim_pred_band *b, double predicted_s);

typedef struct sim_calib {
    char hardware[128];
    char engine[64]; /* engine profile whose host time the fit took as known; "" or "none" */
    double alpha;
    double beta_s;
    double alpha_stderr;  /* NaN when absent */
    double beta_stderr_s; /* NaN when absent */
    long long n_rows;     /* -1 when absent */
    int n_figures;        /* fitted profile figures, in file order */
    sim_hw_field fig_field[SIM_HWF_COUNT];
    double fig_value[SIM_HWF_COUNT];  /* in the figure's unit (its JSON key) */
    double fig_stderr[SIM_HWF_COUNT]; /* same unit; NaN when absent or null */
    /* "figure_domain": the model classes the figures were fitted on (bit sim_model_class);
     * 0 when absent (the figures apply to every model, as in files before it). Models of
     * other classes get "alpha_beta_only" (ab_alpha, ab_beta_s) without the figures
     * (sim_calib_for_model). */
    unsigned fig_domain;
    double ab_alpha, ab_beta_s;
    sim_calib_band band; /* "band", when the file has one (held_out_by "" otherwise) */
} sim_calib;

sim_status sim_calib_load(const char *path, sim_calib *c /* OUT */, struct sim_err *err /* OUT */);

/*
 * The known uncalibrated error of hardware hw_id from path (calibrations/uncalibrated/
 * known-errors.json: {"<hw id>": {"known_error_pct": number or null, "basis": "..."}}):
 * *found 1 with *pct (NaN for null) and basis (cap bytes), or 0 when hw_id has no entry.
 */
sim_status sim_calib_known_error(const char *path, const char *hw_id, double *pct, char *basis,
                                 size_t cap, int *found, struct sim_err *err);

/*
 * Applies the calibration's figures to hw (loaded from the profile c->hardware names): each
 * value replaces the profile's, marked derived with the source "fitted: <path> (llmstep
 * calibrate --fit)", and the result is checked (sim_hw_validate). SIM_EINVAL with
 * "<path>: figures.<key>: ..." when the profile lacks the figure (e.g. fp8 figures on a GPU
 * without fp8 units) or the values fail the profile's checks. No figures: hw unchanged.
 */
sim_status sim_calib_apply_figures(const sim_calib *c, const char *path, sim_hw *hw,
                                   struct sim_err *err /* OUT */);

/*
 * The calibration that applies to model m: c itself, or, when c's figures were fitted on
 * other classes of model (fig_domain lacks m's class), c without figures and with its
 * alpha/beta-only fit. *out may be c. Returns 1 when it switched, else 0.
 */
int sim_calib_for_model(const sim_calib *c, const sim_model *m, sim_calib *out);

/* 1 when c's figures apply to model m (as they are, or c has none), 0 when
 * sim_calib_for_model would switch. */
int sim_calib_figures_apply(const sim_calib *c, const sim_model *m);

/* The classes of domain as "dense-gqa, moe-gqa" into buf (cap); "" when 0. */
void sim_calib_domain_str(unsigned domain, char *buf, size_t cap);

/* Everything a calibration file records (MEASUREMENTS.md, "Calibration file"). */
typedef struct sim_calib_out {
    const char *hardware;
    double alpha, beta_s, alpha_stderr, beta_stderr_s;
    double cov_alpha_beta;
    double alpha_min, alpha_max, beta_min_s, beta_max_s;
    int alpha_at_bound, beta_at_bound;
    long long n_rows;
    double mape_pct, median_ape_pct, max_ape_pct, r2;
    const char *const *files;
    int n_files;
    const char *const *select;
    int n_select;
    const char *const *exclude;
    int n_exclude;
    const char *engine;         /* engine profile id whose host time the fit took as known */
    const char *roofline_mode;  /* "op" or "step" */
    const char *weighting;      /* "relative" or "absolute" */
    const char *command;        /* the command line that produced the file */
    const char *scheduler_rule; /* trained_on.scheduler_rule (the rows' engine arguments); NULL:
                                   not written */
    /* Fitted figures (`calibrate --fit`), written as "figures"; n_figures 0: none. */
    int n_figures;
    const sim_hw_field *fig_field;
    const double *fig_value, *fig_stderr;
    /* How they were fitted, written as "figure_fit" when fit_loss is not NULL: the loss, and
     * the figures the rows did not determine (held at the profile's value, not written in
     * "figures") with the reason. */
    const char *fit_loss;
    int n_held;
    const sim_hw_field *held_field;
    const char *const *held_reason;
    /* With figures: the model classes of the rows and the alpha/beta-only fit on them
     * ("figure_domain", "alpha_beta_only"). */
    unsigned fig_domain;
    double ab_alpha, ab_beta_s;
    /* The band, written as "band" when not NULL and held_out_by is not "". */
    const sim_calib_band *band;
    /* `check --refit`: the calibration this one replaces and why, written as "refit_of"
     * ({"calibration", "alpha", "beta_s", "level_pct", "drifted": [families]}) when not NULL. */
    const struct sim_calib_refit *refit;
} sim_calib_out;

/* What a refit replaced (sim_calib_out.refit). */
typedef struct sim_calib_refit {
    const char *calibration; /* the file checked against */
    double alpha, beta_s;    /* its fit */
    int level_pct;           /* the interval of the check */
    unsigned drifted;        /* the families that drifted, bit SIM_BAND_* */
} sim_calib_refit;

/*
 * Writes the calibration file atomically (temporary file, then rename). Non-finite
 * standard errors (two rows: no degrees of freedom) are written as null; any other
 * non-finite number is an error (SIM_ERANGE) and nothing is written.
 */
sim_status sim_calib_write(const char *path, const sim_calib_out *c, struct sim_err *err /* OUT */);

#endif
