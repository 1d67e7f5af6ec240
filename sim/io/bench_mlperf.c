/* bench_mlperf.c - see bench_mlperf.h. */
#include "bench_mlperf.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "num_parse.h"
#include "textin.h"

/* A summary is a few kB; anything past 1 MiB is not one. */
#define ML_MAX_BYTES ((size_t)1 << 20)
/* Latencies: 0 to about a year, in ns. */
#define ML_NS_MAX 3.2e16

/* The keys read: where each value goes. */
enum {
    K_SCENARIO,
    K_MODE,
    K_RESULT,
    K_QPS,
    K_MIN_DUR,
    K_MIN_QUERIES,
    K_SPQ,
    K_SPS,
    K_STATS, /* then SIM_VB_FAMILIES x SIM_VB_STATS latency keys */
    K_COUNT = K_STATS + SIM_VB_FAMILIES * SIM_VB_STATS
};

static const char *const fixed_key[K_STATS] = {"Scenario",          "Mode",
                                               "Result is",         "target_qps",
                                               "min_duration (ms)", "min_query_count",
                                               "samples_per_query", "Samples per second"};

/* The latency keys LoadGen prints, per family (ttft, tpot, e2e) and statistic. */
static const char *const stat_key[SIM_VB_FAMILIES][SIM_VB_STATS] = {
    {"Mean First Token latency (ns)", "50.00 percentile first token latency (ns)",
     "90.00 percentile first token latency (ns)", "99.00 percentile first token latency (ns)"},
    {"Mean Time per Output Token (ns)", "50.00 percentile time to output token (ns)",
     "90.00 percentile time to output token (ns)", "99.00 percentile time to output token (ns)"},
    {"Mean latency (ns)", "50.00 percentile latency (ns)", "90.00 percentile latency (ns)",
     "99.00 percentile latency (ns)"}};

static const char *key_name(int k)
{
    return k < K_STATS ? fixed_key[k]
                       : stat_key[(k - K_STATS) / SIM_VB_STATS][(k - K_STATS) % SIM_VB_STATS];
}

sim_status sim_mlperf_load(const char *path, sim_mlperf_run *o, struct sim_err *err)
{
    memset(o, 0, sizeof(*o));
    sim_textin *in = NULL;
    sim_status st = sim_textin_open(path, &in, err);
    if (st != SIM_OK)
        return st;
    const char *data;
    size_t len;
    st = sim_textin_read_all(in, ML_MAX_BYTES, "an MLPerf LoadGen summary", &data, &len, err);
    char val[K_COUNT][64];
    int line_of[K_COUNT] = {0};
    char *line;
    while (st == SIM_OK && (st = sim_textin_line(in, ML_MAX_BYTES, &line, err)) == SIM_OK && line) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        const char *key = sim_text_trim(line), *v = sim_text_trim(colon + 1);
        for (int k = 0; k < K_COUNT; k++) {
            if (strcmp(key, key_name(k)) != 0)
                continue;
            const int n = (int)sim_textin_line_no(in);
            if (line_of[k]) {
                sim_errf(err, "%s:%d: %s: given twice (first at line %d)", path, n, key,
                         line_of[k]);
                st = SIM_EINVAL;
            } else if (strlen(v) >= sizeof(val[k])) {
                sim_errf(err, "%s:%d: %s: value too long", path, n, key);
                st = SIM_EINVAL;
            } else {
                snprintf(val[k], sizeof(val[k]), "%s", v);
                line_of[k] = n;
            }
            break;
        }
    }
    if (st != SIM_OK) {
        sim_textin_free(in);
        return st;
    }
    /* The scenario and the mode decide which lines must be there. */
    if (!line_of[K_SCENARIO]) {
        sim_errf(err,
                 "%s: no 'Scenario :' line (is it an mlperf_log_summary.txt of MLPerf "
                 "Inference LoadGen?)",
                 path);
        st = SIM_EINVAL;
    } else if (strcmp(val[K_SCENARIO], "Server") == 0) {
        o->scenario = SIM_MLPERF_SERVER;
    } else if (strcmp(val[K_SCENARIO], "SingleStream") == 0) {
        o->scenario = SIM_MLPERF_SINGLE_STREAM;
    } else if (strcmp(val[K_SCENARIO], "Offline") == 0) {
        o->scenario = SIM_MLPERF_OFFLINE;
    } else {
        sim_errf(err,
                 "%s:%d: Scenario: '%s' (expected Server, SingleStream or Offline; a "
                 "MultiStream query of several samples at fixed intervals is no workload a row "
                 "describes)",
                 path, line_of[K_SCENARIO], val[K_SCENARIO]);
        st = SIM_EINVAL;
    }
    if (st == SIM_OK && !line_of[K_MODE]) {
        sim_errf(err, "%s: no 'Mode :' line (expected Mode : PerformanceOnly)", path);
        st = SIM_EINVAL;
    } else if (st == SIM_OK && strcmp(val[K_MODE], "PerformanceOnly") != 0) {
        sim_errf(err,
                 "%s:%d: Mode: '%s' (expected PerformanceOnly: an accuracy run's times are not "
                 "a performance measurement)",
                 path, line_of[K_MODE], val[K_MODE]);
        st = SIM_EINVAL;
    }
    o->valid = line_of[K_RESULT] && strcmp(val[K_RESULT], "VALID") == 0;
    /* The numbers: required by scenario, each at its line. */
    for (int k = K_QPS; st == SIM_OK && k < K_COUNT; k++) {
        const int f = k >= K_STATS ? (k - K_STATS) / SIM_VB_STATS : -1;
        const int need = (o->scenario == SIM_MLPERF_OFFLINE)
                             ? (k == K_SPQ || k == K_SPS)
                             : (k == K_QPS || k == K_MIN_DUR || k == K_MIN_QUERIES ||
                                (f == SIM_VB_E2E && (k - K_STATS) % SIM_VB_STATS == SIM_VB_MEAN));
        if (!line_of[k]) {
            if (need) {
                sim_errf(err, "%s: no '%s :' line (the %s scenario needs it)", path, key_name(k),
                         val[K_SCENARIO]);
                st = SIM_EINVAL;
            }
            continue;
        }
        double x = 0.0;
        const double max = k == K_QPS || k == K_SPS ? 1e9
                           : k == K_MIN_DUR         ? 3.2e10
                           : k < K_STATS            ? 1099511627776.0
                                                    : ML_NS_MAX;
        const double min = k == K_QPS || k == K_SPS || k == K_SPQ ? 1e-9 : 0.0;
        if (sim_num_parse_double(val[k], min, max, &x) != SIM_OK ||
            ((k == K_MIN_QUERIES || k == K_SPQ) && x != floor(x))) {
            sim_errf(err, "%s:%d: %s: '%s' is not a %s from %g to %g", path, line_of[k],
                     key_name(k), val[k],
                     k == K_MIN_QUERIES || k == K_SPQ ? "whole number" : "number", min, max);
            st = SIM_EINVAL;
            break;
        }
        switch (k) {
        case K_QPS:
            o->target_qps = x;
            break;
        case K_MIN_DUR:
            o->min_duration_s = x / 1000.0;
            break;
        case K_MIN_QUERIES:
            o->min_query_count = (int64_t)x;
            break;
        case K_SPQ:
            o->samples_per_query = (int64_t)x;
            break;
        case K_SPS:
            o->samples_per_s = x;
            break;
        default:
            if (o->scenario != SIM_MLPERF_OFFLINE) {
                const int s = (k - K_STATS) % SIM_VB_STATS;
                o->has[f][s] = 1;
                o->stat_s[f][s] = x / 1e9;
            }
        }
    }
    sim_textin_free(in);
    return st;
}
