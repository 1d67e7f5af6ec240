"""Finding and declaring the C library (libllmstep.so) for ctypes.

The library is looked for, in order: $LLMSTEP_LIBRARY (a path to the .so); a copy installed
inside this package; the libdir pkg-config gives for llmstep; the system's library path
(ctypes.util.find_library); the build tree of the source checkout this package sits in
(build/lib). Structures mirror include/llmstep.h field by field; LLMSTEP_ABI_VERSION is
checked at load time, so a header change without a matching change here fails loudly.
"""

import ctypes
import ctypes.util
import os
import subprocess

ABI_VERSION = 7

_here = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("LLMSTEP_LIBRARY")
    if env:
        yield env
        return
    for name in sorted(os.listdir(_here)):
        if name.startswith("libllmstep.so"):
            yield os.path.join(_here, name)
    try:
        libdir = subprocess.run(
            ["pkg-config", "--variable=libdir", "llmstep"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
        if libdir:
            yield os.path.join(libdir, "libllmstep.so")
    except (OSError, subprocess.SubprocessError):
        pass
    found = ctypes.util.find_library("llmstep")
    if found:
        yield found
    yield os.path.join(_here, "..", "..", "build", "lib", "libllmstep.so")


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path}: {exc}")
    raise ImportError(
        "llmstep: cannot load libllmstep.so (build the C library, `cmake --install` it, or "
        "set LLMSTEP_LIBRARY); tried: " + "; ".join(tried)
    )


lib = _load()

i64 = ctypes.c_int64
dbl = ctypes.c_double
cint = ctypes.c_int
cstr = ctypes.c_char_p


class Error(ctypes.Structure):
    _fields_ = [("code", cint), ("message", ctypes.c_char * 512)]


class ModelInfo(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char * 128), ("n_layers", i64), ("d_model", i64),
                ("n_heads", i64), ("n_kv_heads", i64), ("head_dim", i64),
                ("vocab_size", i64), ("max_position_embeddings", i64), ("n_experts", i64),
                ("params", dbl), ("kv_bytes_per_token_16bit", dbl)]


class DeploySpec(ctypes.Structure):
    _fields_ = [("model", cstr), ("hw", cstr), ("engine", cstr), ("calibration", cstr),
                ("dtype", cstr), ("kv_dtype", cstr), ("tp", i64), ("max_num_seqs", i64),
                ("max_num_batched_tokens", i64), ("max_model_len", i64), ("block_size", i64),
                ("gpu_memory_utilization_frac", dbl), ("chunked_prefill", cint),
                ("usage", cint), ("roofline_step", cint), ("gemm_tile_wave", cint),
                ("ignore_memory", cint), ("pp", i64), ("dp", i64), ("ep", cint),
                ("async_scheduling", cint), ("prefix_caching", cint), ("spec_method", cstr),
                ("spec_tokens", i64), ("spec_acceptance", ctypes.POINTER(dbl)),
                ("n_spec_acceptance", ctypes.c_size_t), ("spec_model", cstr)]


class DeployInfo(ctypes.Structure):
    _fields_ = [("model_id", ctypes.c_char * 128), ("hw_id", ctypes.c_char * 64),
                ("engine_id", ctypes.c_char * 64), ("weight_format", ctypes.c_char * 32),
                ("kv_dtype", ctypes.c_char * 16), ("tp", i64), ("max_num_seqs", i64),
                ("max_num_batched_tokens", i64), ("max_model_len", i64), ("block_size", i64),
                ("gpu_memory_utilization_frac", dbl), ("chunked_prefill", cint),
                ("alpha", dbl), ("beta_s", dbl), ("capacity_bytes", dbl),
                ("usable_bytes", dbl), ("weights_bytes", dbl), ("activation_bytes", dbl),
                ("reserve_bytes", dbl), ("kv_bytes_per_token", dbl),
                ("kv_budget_bytes", dbl), ("kv_blocks", i64), ("kv_capacity_tokens", i64),
                ("fits", cint), ("pp", i64), ("dp", i64), ("ep", cint)]


class Group(ctypes.Structure):
    _fields_ = [("count", i64), ("new_tokens", i64), ("context_tokens", i64),
                ("emits", cint)]


class Op(ctypes.Structure):
    _fields_ = [("name", cstr), ("bound", cstr), ("flops", dbl), ("bytes", dbl),
                ("n_kernels", dbl), ("time_s", dbl)]


class StepResult(ctypes.Structure):
    _fields_ = [("step_s", dbl), ("gpu_s", dbl), ("roofline_s", dbl), ("host_s", dbl),
                ("comm_s", dbl), ("flops", dbl), ("bytes", dbl), ("tokens", dbl),
                ("seqs", dbl), ("bound", cstr)]


class CapacityResult(ctypes.Structure):
    _fields_ = [("context_tokens", i64), ("blocks_per_seq", i64), ("max_seqs_by_kv", i64),
                ("max_seqs_at_context", i64), ("fits", cint)]


class BatchResult(ctypes.Structure):
    _fields_ = [("latency_s", dbl), ("prefill_s", dbl), ("decode_s", dbl),
                ("roofline_sum_s", dbl), ("host_sum_s", dbl), ("n_steps", i64),
                ("n_prefill_steps", i64), ("n_decode_steps", i64), ("preemptions", i64),
                ("peak_kv_frac", dbl)]


class Workload(ctypes.Structure):
    _fields_ = [("arrival", cint), ("concurrency", i64), ("rate_per_s", dbl),
                ("burstiness", dbl), ("prompt_tokens", i64), ("output_tokens", i64),
                ("range_ratio", dbl), ("num_requests", i64), ("warmup_requests", i64),
                ("seed", ctypes.c_uint64), ("trace_path", cstr), ("slo_ttft_s", dbl),
                ("slo_tpot_s", dbl), ("prefix_tokens", i64), ("distinct_prompts", i64)]


class Dist(ctypes.Structure):
    _fields_ = [("mean", dbl), ("p50", dbl), ("p90", dbl), ("p99", dbl)]


class ServeResult(ctypes.Structure):
    _fields_ = [("ttft_s", Dist), ("tpot_s", Dist), ("itl_s", Dist), ("e2e_s", Dist),
                ("request_throughput_per_s", dbl), ("output_tokens_per_s", dbl),
                ("goodput_per_s", dbl), ("duration_s", dbl), ("kv_peak_frac", dbl),
                ("queue_peak", i64), ("preemptions", i64), ("n_requests", i64),
                ("n_steps", i64), ("queue_s", Dist), ("ttft_queued", ctypes.c_int32),
                ("prefix_hit_frac", dbl), ("spec_accepted_frac", dbl)]


class SweepSpec(ctypes.Structure):
    _fields_ = [("models", ctypes.POINTER(cstr)), ("n_models", ctypes.c_size_t),
                ("hws", ctypes.POINTER(cstr)), ("n_hws", ctypes.c_size_t), ("kind", cint),
                ("tp", ctypes.POINTER(i64)), ("n_tp", ctypes.c_size_t),
                ("batch", ctypes.POINTER(i64)), ("n_batch", ctypes.c_size_t),
                ("context", ctypes.POINTER(i64)), ("n_context", ctypes.c_size_t),
                ("prompt_tokens", i64), ("output_tokens", i64),
                ("rates", ctypes.POINTER(dbl)), ("n_rates", ctypes.c_size_t),
                ("num_requests", i64), ("range_ratio", dbl), ("burstiness", dbl),
                ("seed", ctypes.c_uint64), ("calibration", cstr), ("engine", cstr),
                ("dtype", cstr), ("kv_dtype", cstr), ("no_host", cint), ("slo_ttft_s", dbl),
                ("slo_tpot_s", dbl), ("slo_percentile", cint), ("gpu_hour_usd", dbl),
                ("max_num_seqs", i64), ("max_num_batched_tokens", i64),
                ("max_model_len", i64), ("block_size", i64),
                ("gpu_memory_utilization_frac", dbl), ("chunked_prefill", cint),
                ("usage", cint), ("pp", ctypes.POINTER(i64)), ("n_pp", ctypes.c_size_t),
                ("dp", ctypes.POINTER(i64)), ("n_dp", ctypes.c_size_t), ("ep", cint),
                ("eps", ctypes.POINTER(cint)), ("n_ep", ctypes.c_size_t), ("n_seeds", i64),
                ("async_scheduling", cint), ("jobs", cint), ("prefix_caching", cint),
                ("prefix_tokens", i64), ("distinct_prompts", i64), ("spec_method", cstr),
                ("spec_tokens", i64), ("spec_acceptance", ctypes.POINTER(dbl)),
                ("n_spec_acceptance", ctypes.c_size_t), ("spec_model", cstr)]


class SweepRow(ctypes.Structure):
    _fields_ = [("model_index", ctypes.c_int32), ("hw_index", ctypes.c_int32),
                ("kind", ctypes.c_int32), ("status", ctypes.c_int32), ("fits", ctypes.c_int32),
                ("meets_slo", ctypes.c_int32), ("calibrated", ctypes.c_int32),
                ("bound", ctypes.c_int32), ("alpha", dbl), ("beta_s", dbl), ("tp", i64),
                ("batch", i64), ("context_tokens", i64), ("prompt_tokens", i64),
                ("output_tokens", i64), ("concurrency", i64), ("rate_per_s", dbl),
                ("time_s", dbl), ("tpot_s", dbl), ("ttft_s", dbl), ("tokens_per_s", dbl),
                ("tokens_per_s_per_gpu", dbl), ("cost_per_mtok_usd", dbl),
                ("n_requests", i64), ("preemptions", i64), ("requests_per_s", dbl),
                ("kv_peak_frac", dbl), ("ttft_dist_s", Dist), ("tpot_dist_s", Dist),
                ("e2e_dist_s", Dist), ("pp", i64), ("dp", i64), ("ep", ctypes.c_int32),
                ("n_seeds", i64), ("ttft_spread_s", dbl), ("tpot_spread_s", dbl),
                ("queue_mean_s", dbl), ("ttft_queued", ctypes.c_int32),
                ("prefix_hit_frac", dbl)]


class MeasSpec(ctypes.Structure):
    _fields_ = [("files", ctypes.POINTER(cstr)), ("n_files", ctypes.c_size_t),
                ("select", ctypes.POINTER(cstr)), ("n_select", ctypes.c_size_t),
                ("exclude", ctypes.POINTER(cstr)), ("n_exclude", ctypes.c_size_t),
                ("engine", cstr), ("no_host", cint), ("roofline_step", cint),
                ("gemm_tile_wave", cint), ("weighting_absolute", cint), ("alpha_min", dbl),
                ("alpha_max", dbl), ("beta_min_s", dbl), ("beta_max_s", dbl),
                ("rows_jsonl", cstr), ("rows_jsonl_len", ctypes.c_size_t),
                ("scheduler_rule", cstr)]


class Validation(ctypes.Structure):
    _fields_ = [("n_rows", i64), ("mape_pct", dbl), ("median_ape_pct", dbl),
                ("max_ape_pct", dbl), ("r2", dbl), ("alpha", dbl), ("beta_s", dbl)]


class Fit(ctypes.Structure):
    _fields_ = [("hardware", ctypes.c_char * 128), ("engine", ctypes.c_char * 64),
                ("alpha", dbl), ("beta_s", dbl), ("alpha_stderr", dbl),
                ("beta_stderr_s", dbl), ("alpha_at_bound", cint), ("beta_at_bound", cint),
                ("n_rows", i64), ("fit", Validation)]


P = ctypes.POINTER
vp = ctypes.c_void_p
# llmstep_sweep_cb: int (*)(void *user, const llmstep_sweep_row *row); non-zero stops the sweep.
SweepCb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
# llmstep_serve_cb: int (*)(void *user, size_t i, double load, const llmstep_serve_result *r,
# int meets_slo); non-zero stops the load sweep.
ServeCb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double,
                           ctypes.c_void_p, ctypes.c_int)

_sigs = {
    "llmstep_version": (cstr, []),
    "llmstep_abi_version": (cint, []),
    "llmstep_sweep_best": (ctypes.c_longlong, [vp, ctypes.c_size_t]),
    "llmstep_sweep_planning_seeds": (cint, []),
    "llmstep_ctx_new": (vp, [cstr, P(Error)]),
    "llmstep_ctx_free": (None, [vp]),
    "llmstep_ctx_data_dir": (cstr, [vp]),
    "llmstep_ctx_n_loaded": (ctypes.c_size_t, [vp]),
    "llmstep_model_load": (cint, [vp, cstr, P(vp), P(Error)]),
    "llmstep_model_get_info": (None, [vp, P(ModelInfo)]),
    "llmstep_deploy_spec_init": (None, [P(DeploySpec)]),
    "llmstep_deploy_open": (cint, [vp, P(DeploySpec), P(vp), P(Error)]),
    "llmstep_deploy_free": (None, [vp]),
    "llmstep_deploy_get_info": (None, [vp, P(DeployInfo)]),
    "llmstep_step": (cint, [vp, P(Group), ctypes.c_size_t, P(StepResult), P(Op),
                            ctypes.c_size_t, P(ctypes.c_size_t), P(Error)]),
    "llmstep_step_grid": (cint, [vp, ctypes.c_size_t, P(i64), P(i64), P(i64), P(dbl),
                                 P(Error)]),
    "llmstep_capacity": (cint, [vp, i64, P(CapacityResult), P(Error)]),
    "llmstep_deploy_band": (cint, [vp, cstr, cint, P(dbl), P(dbl), P(i64), P(Error)]),
    "llmstep_step_band_family": (cstr, [P(Group), ctypes.c_size_t]),
    "llmstep_ttft_band_family": (cstr, [cint]),
    "llmstep_band_level_check": (cint, [cint, P(Error)]),
    "llmstep_sweep_default_axis": (ctypes.c_size_t, [cstr, P(i64), ctypes.c_size_t]),
    "llmstep_sweep_check": (cint, [P(SweepSpec), P(Error)]),
    "llmstep_batch": (cint, [vp, i64, i64, i64, P(BatchResult), P(Error)]),
    "llmstep_workload_init": (None, [P(Workload)]),
    "llmstep_serve": (cint, [vp, P(Workload), P(ServeResult), P(Error)]),
    "llmstep_serve_disagg": (cint, [vp, vp, i64, i64, P(Workload), P(ServeResult), P(dbl),
                                    P(Error)]),
    "llmstep_serve_sweep": (cint, [vp, P(Workload), P(dbl), ctypes.c_size_t, cint,
                                   P(ServeResult), P(cint), vp, vp, P(Error)]),
    "llmstep_sweep_spec_init": (None, [P(SweepSpec)]),
    "llmstep_sweep_size": (ctypes.c_size_t, [P(SweepSpec)]),
    "llmstep_sweep_status_name": (cstr, [cint]),
    "llmstep_sweep": (cint, [vp, P(SweepSpec), P(SweepRow), ctypes.c_size_t,
                             P(ctypes.c_size_t), vp, vp, P(Error)]),
    "llmstep_meas_spec_init": (None, [P(MeasSpec)]),
    "llmstep_validate": (cint, [vp, P(MeasSpec), cstr, P(dbl), P(dbl), ctypes.c_size_t,
                                P(Validation), P(Error)]),
    "llmstep_calibrate": (cint, [vp, P(MeasSpec), P(Fit), P(Error)]),
    "llmstep_calibrate_write": (cint, [vp, P(MeasSpec), cstr, P(Fit), P(Error)]),
    "llmstep_holdout": (cint, [vp, P(MeasSpec), cstr, P(dbl), P(dbl), ctypes.c_size_t,
                               P(Validation), P(Error)]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

if lib.llmstep_abi_version() != ABI_VERSION:
    raise ImportError(
        f"llmstep: this package speaks ABI {ABI_VERSION}, the library loaded is ABI "
        f"{lib.llmstep_abi_version()}"
    )

MAX_OPS = 32
