/* serve_run.c - preparing and simulating a served workload for the CLI (see cli.h); the work
 * is sim_served_* (deploy.h), shared with the library. */
#include <stdio.h>

#include "cli.h"

int cli_serve_prepare(cli_serve *sv, const sim_workload_spec *spec, const char *trace_path)
{
    struct sim_err err;
    sim_status st = sim_served_prepare(sv, spec, trace_path, 1, &err);
    if (st != SIM_OK) {
        cli_error("%s", err.msg);
        return cli_exit_of(st);
    }
    return CLI_OK;
}

int cli_serve_run(cli_run *run, cli_serve *sv, double slo_ttft_s, double slo_tpot_s,
                  sim_serve_observer obs, void *obs_ctx, sim_serve_result *res, sim_serve_stats *st)
{
    struct sim_err err;
    const sim_setup su = cli_run_setup(run);
    if (sim_served_run(&su, sv, obs, obs_ctx, res, &err) != SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_BAD_INPUT;
    }
    if (sim_served_stats(&run->model, &run->hw, sv, res, slo_ttft_s, slo_tpot_s, st, &err) !=
        SIM_OK) {
        cli_error("%s", err.msg);
        return CLI_NUMERIC;
    }
    return CLI_OK;
}

void cli_serve_free(cli_serve *sv) { sim_served_free(sv); }
