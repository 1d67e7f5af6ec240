"""llmstep from Python: predicted vLLM step, batch and serving latency, and memory, on a GPU.

A thin layer over the C library (include/llmstep.h) through ctypes. Units are SI base units
and every key names its unit (``_s`` seconds, ``_bytes``, ``_per_s``, ``_frac``).

    >>> import llmstep
    >>> d = llmstep.deploy("llama-3.1-8b", "h100-sxm", tp=1)
    >>> d.step([(32, 1, 1024)])["step_s"]                    # one decode step, seconds
    >>> d.step_grid(count=batches, context_tokens=contexts)  # NumPy arrays in and out
    >>> d.serve(concurrency=64, prompt_tokens=1024, output_tokens=128)["ttft_s"]["p90"]
    >>> d.capacity(1152)["max_seqs_at_context"]

Errors raise ``llmstep.Error`` (a ``ValueError``) with the library's one-line message, which
names the file, line and field at fault.
"""

import ctypes
import json
import math
import operator
import os

from . import _lib

__all__ = ["Context", "Deployment", "Error", "deploy", "serve", "sweep", "validate", "calibrate",
           "to_frame", "version", "default_context"]


class Error(ValueError):
    """A failure reported by the library; ``code`` is the llmstep_status value."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _check(status, err):
    if status != 0:
        raise Error(status, err.message.decode("utf-8", "replace"))


class _sigint_stops:
    """While a sweep with a callback runs in the main thread, Ctrl-C (SIGINT) only records a
    KeyboardInterrupt in ``stop``; the callback sees it at the next row and stops the C loop,
    and the sweep raises it once the call returns. A KeyboardInterrupt raised inside a ctypes
    callback would be printed and ignored instead. ``stop`` None: nothing is changed."""

    def __init__(self, stop):
        self.stop, self.old = stop, None

    def __enter__(self):
        import signal
        import threading
        if self.stop is None or threading.current_thread() is not threading.main_thread():
            return self
        stop = self.stop

        def on_sigint(_sig, _frame):
            if not stop:
                stop.append(KeyboardInterrupt())

        self.old = signal.signal(signal.SIGINT, on_sigint)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            import signal
            signal.signal(signal.SIGINT, self.old)
        return False


def _progress_callback(progress, total, stoppable=False):
    """The llmstep_sweep callback for ``progress`` (None: none, or with ``stoppable`` one that
    only stops the sweep after Ctrl-C): reports about every 1% of total rows, and stops the
    sweep on KeyboardInterrupt or on an exception of the callable, which it keeps in the
    returned list to be raised once the C call returns."""
    if progress is None or progress is False:
        if not stoppable:
            return None, []
        stop = []

        def only_stop(_user, _row):
            return 1 if stop else 0

        return _lib.SweepCb(only_stop), stop
    if progress is True:
        import sys

        def progress(done, tot):
            width = 40
            fill = width * done // max(tot, 1)
            sys.stderr.write(f"\rsweep [{'#' * fill}{'.' * (width - fill)}] {done}/{tot} rows")
            if done >= tot:
                sys.stderr.write("\n")
            sys.stderr.flush()
    if not callable(progress):
        raise TypeError(f"progress: expected a callable, True or None, got {progress!r}")
    step = max(1, total // 100)
    state = {"done": 0}
    stop = []

    def on_row(_user, _row):
        if stop:  # Ctrl-C (_sigint_stops) or an earlier exception: stop the C loop
            return 1
        try:
            state["done"] += 1
            done = state["done"]
            if done % step == 0 or done == total:
                progress(done, total)
            return 0
        except BaseException as exc:  # KeyboardInterrupt included: stop the C loop
            stop.append(exc)
            return 1

    cb = _lib.SweepCb(on_row)
    return cb, stop


def _as_array(structs):
    """A NumPy view of a ctypes struct array. NumPy warns that the PEP 3118 format of a padded
    struct does not match its size and then builds the right dtype from the ctypes fields,
    which the tests check field by field against the C results; the warning says nothing."""
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.ctypeslib.as_array(structs)


def _int(v, name, lo=-(1 << 63), hi=(1 << 63) - 1):
    """An integer argument for the C library, never silently changed: a bool, an int, a NumPy
    integer or an integral float; TypeError for anything else (2.9, "3"), OverflowError
    outside [lo, hi] (the C type's range: a Python int would wrap modulo 2**64)."""
    if isinstance(v, float):
        if not v.is_integer():
            raise TypeError(f"{name}: expected an integer, got {v!r}")
        v = int(v)
    else:
        try:
            v = operator.index(v)
        except TypeError:
            raise TypeError(f"{name}: expected an integer, got {v!r}") from None
    if not lo <= v <= hi:
        raise OverflowError(f"{name}: {v} is outside {lo}..{hi}")
    return v


_C_INT = (-(1 << 31), (1 << 31) - 1)


def _float(v, name):
    """A real-number argument: a bool, int, float or NumPy number; TypeError for a string or
    anything else (float("5") would have taken it)."""
    if isinstance(v, (str, bytes)):
        raise TypeError(f"{name}: expected a number, got {v!r}")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a number, got {v!r}") from None


def _flag(v, name, none=None):
    """A switch: True/False or 1/0 (NumPy's too) to 1 or 0, None to ``none`` where None is
    allowed; TypeError/ValueError otherwise (bool("no") was True)."""
    if v is None and none is not None:
        return none
    x = _int(v, name)
    if x not in (0, 1):
        raise ValueError(f"{name}: expected True/False (or 1/0), got {v!r}")
    return x


def _level(v):
    """A band level (interval=): an integer the library accepts (10, 20, ..., 100)."""
    level = _int(v, "interval", *_C_INT)
    err = _lib.Error()
    _check(_lib.lib.llmstep_band_level_check(level, ctypes.byref(err)), err)
    return level


def _range_ratio(r):
    """None: the default spread of `llmstep serve` (-1 to the library)."""
    return -1.0 if r is None else _float(r, "range_ratio")


def _enc(s):
    """A string for the C library: None stays NULL; a NUL inside is a ValueError (C would
    read the string up to it: 'h100-sxm\\0x' named h100-sxm)."""
    if s is None:
        return s
    b = s if isinstance(s, bytes) else os.fsencode(s) if isinstance(s, os.PathLike) \
        else str(s).encode()
    if b"\0" in b:
        raise ValueError(f"embedded NUL character in {s!r}")
    return b


def _strv(items, keep):
    """A C array of encoded strings (kept alive in ``keep``) and its length; one string is one
    item (not its characters)."""
    items = [items] if isinstance(items, (str, bytes, os.PathLike)) else list(items)
    arr = (ctypes.c_char_p * max(len(items), 1))(*[_enc(x) for x in items])
    keep.append(arr)
    return arr, len(items)


def _columns(arr, skip=(), flags=()):
    """The fields of a NumPy array of result structs as columns: nested distributions as
    ``ttft_s_p90`` style keys (a ``_dist`` in the field name dropped), flags as bool."""
    out = {}
    for name in arr.dtype.names:
        if name in skip:
            continue
        if arr.dtype[name].names:
            for stat in arr.dtype[name].names:
                out["%s_%s" % (name.replace("_dist", ""), stat)] = arr[name][stat].copy()
        elif name in flags:
            out[name] = arr[name].astype(bool)
        else:
            out[name] = arr[name].copy()
    return out


def _sweep_default(axis):
    """The values `llmstep sweep` takes for an axis it is not given."""
    buf = (ctypes.c_int64 * 64)()
    n = _lib.lib.llmstep_sweep_default_axis(axis.encode(), buf, 64)
    return [int(v) for v in buf[:n]]


def _struct_dict(st):
    out = {}
    for name, _ in st._fields_:
        v = getattr(st, name)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, _lib.Dist):
            v = {"mean": v.mean, "p50": v.p50, "p90": v.p90, "p99": v.p99}
        out[name] = v
    return out


def version():
    """The C library's release (LLMSTEP_VERSION, e.g. "0.4.0")."""
    return _lib.lib.llmstep_version().decode()


class Context:
    """Where data lives (``data_dir``; None: $LLMSTEP_DATA_DIR or the installed data) and a
    cache that loads each model, profile, engine and calibration file once."""

    def __init__(self, data_dir=None):
        err = _lib.Error()
        self._h = _lib.lib.llmstep_ctx_new(_enc(data_dir), ctypes.byref(err))
        if not self._h:
            raise Error(err.code, err.message.decode())

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _lib.lib.llmstep_ctx_free(h)

    @property
    def data_dir(self):
        return _lib.lib.llmstep_ctx_data_dir(self._h).decode()

    @property
    def n_loaded(self):
        """Files loaded so far."""
        return _lib.lib.llmstep_ctx_n_loaded(self._h)

    def model_info(self, model):
        """Architecture facts of a model (id or path): layers, heads, parameters, KV bytes."""
        h = ctypes.c_void_p()
        err = _lib.Error()
        _check(_lib.lib.llmstep_model_load(self._h, _enc(model), ctypes.byref(h),
                                           ctypes.byref(err)), err)
        info = _lib.ModelInfo()
        _lib.lib.llmstep_model_get_info(h, ctypes.byref(info))
        return _struct_dict(info)

    def deploy(self, model, hw, tp=1, engine=None, calibration=None, dtype=None,
               kv_dtype=None, usage=None, max_num_seqs=None, max_num_batched_tokens=None,
               max_model_len=None, block_size=None, gpu_memory_utilization=None,
               chunked_prefill=None, roofline="op", gemm="flat", ignore_memory=False,
               pp=1, dp=1, ep=False, async_scheduling=None, prefix_caching=None, spec=None,
               spec_tokens=None, acceptance=None, spec_model=None):
        """A model on a GPU type at tensor-parallel degree ``tp`` with an engine (default
        ``vllm-v1``, or the calibration's). ``usage`` is "llm" (the LLM class's defaults) or
        "server" (the OpenAI server's); None (the default) takes the LLM class's for step,
        batch and capacity and the server's for serve and serve_sweep, as the CLI's commands
        do (``llmstep serve`` simulates the server). Scheduler settings left None
        take the engine's defaults for the version and GPU, as vLLM does. ``pp`` pipeline
        stages, ``dp`` data-parallel ranks and ``ep`` expert parallelism as the CLI's --pp,
        --dp, --ep (step, batch and serve deal the load to the DP ranks and time the busiest).
        ``async_scheduling`` True/False as --async-scheduling on/off (None: the engine's);
        ``prefix_caching`` likewise as --prefix-caching on/off (None: on for V1). ``spec``
        ("ngram", "eagle", "eagle3", "mtp", "draft"), ``spec_tokens``, ``acceptance`` (one
        rate or one per position) and ``spec_model`` as --spec, --spec-tokens, --acceptance,
        --spec-model: speculative decoding for serve."""
        return Deployment(self, model, hw, tp, engine, calibration, dtype, kv_dtype, usage,
                          max_num_seqs, max_num_batched_tokens, max_model_len, block_size,
                          gpu_memory_utilization, chunked_prefill, roofline, gemm,
                          ignore_memory, pp, dp, ep, async_scheduling, prefix_caching,
                          (spec, spec_tokens, acceptance, spec_model))

    # ---- configuration sweeps ----

    _KINDS = ("decode", "prefill", "offline", "serving")
    # Rows of one C call of a decode or prefill sweep without progress (a few ms; larger
    # calls were slower, their buffer out of the caches): Ctrl-C is raised between two calls.
    _SWEEP_CHUNK_ROWS = 1 << 14

    def sweep(self, models, hws, kind="decode", tp=None, batch=None, context=None,
              prompt_tokens=None, output_tokens=None, concurrency=None, request_rate=None,
              num_requests=0, range_ratio=None, burstiness=1.0, seed=0, calibration=None,
              engine=None, dtype=None, kv_dtype=None, no_host=False, slo_ttft_s=0.0,
              slo_tpot_s=0.0, slo_percentile=90, gpu_hour_usd=0.0, usage=None,
              max_num_seqs=None, max_num_batched_tokens=None, max_model_len=None,
              block_size=None, gpu_memory_utilization=None, chunked_prefill=None,
              pp=None, dp=None, ep=False, seeds=None, best=False, async_scheduling=None,
              max_rows=5_000_000, progress=None, jobs=None, interval=None, prefix_caching=None,
              prefix_tokens=0, distinct_prompts=0, spec=None, spec_tokens=None,
              acceptance=None, spec_model=None):
        """A configuration sweep, as ``llmstep sweep`` (the same rows, from one C call):
        every model x hardware, over TP x batch x context (``kind`` "decode" or "prefill"),
        TP x batch ("offline", with prompt_tokens and output_tokens) or TP x load
        ("serving": ``concurrency`` for closed loops or ``request_rate`` for open ones). Axes
        not given take the CLI's defaults: TP 1, 2, 4, 8; batch (serving: concurrency) 1 to 256
        in powers of 2; context 2048 (llmstep_sweep_default_axis). Returns a dict of NumPy
        arrays, one entry per row: model, hardware, kind, tp, batch, context_tokens,
        prompt_tokens, output_tokens, time_s, tpot_s, ttft_s, tokens_per_s,
        tokens_per_s_per_gpu, cost_per_mtok_usd, fits, status, bound, meets_slo, calibrated,
        alpha, beta_s, and for serving concurrency, rate_per_s, n_requests, ttft_s_p90 style
        percentiles, requests_per_s, preemptions, kv_peak_frac, queue_s_mean and ttft_queued
        (the wait before the first step, and whether it is most of the TTFT), prefix_hit_frac
        (with ``prefix_tokens`` or ``distinct_prompts`` and ``prefix_caching`` as the CLI's
        --prefix-tokens, --distinct-prompts, --prefix-caching), and the layout's pp, dp and ep. ``pp`` and ``dp`` (lists) cross pipeline stages and data-parallel ranks
        with the TPs and ``ep`` turns on expert parallelism
        (True) or sweeps it ([0, 1]), as ``--pp``, ``--dp``, ``--ep``. ``seeds`` (serving)
        simulates each point over that many workload seeds, as ``--seeds`` (None: 20 with
        ``best`` unless the workload is deterministic, else 1, as the CLI). ``best`` keeps
        per model and hardware only the row ``llmstep sweep --best`` keeps.
        ``to_frame`` makes it a DataFrame.

        A sweep of more than ``max_rows`` rows (about 330 bytes each) is refused before anything
        is allocated or computed; raise it, or sweep in parts. ``progress``: a callable
        ``progress(done, total)`` called about every 1% of the rows (and at the end), or True
        for a bar on stderr. With it, Ctrl-C stops the C loop at the next row (KeyboardInterrupt
        is raised when the call returns); so does an exception the callable raises, which is
        then raised. Without it serving and offline sweeps stop as well at the next row, and
        decode and prefill sweeps (150 ns a row, less than a call into Python) run as C calls
        of about 16,000 rows, with Ctrl-C raised between two of them.
        ``jobs`` (serving): threads that simulate the points, as ``--jobs`` (None: the online
        cores, as the CLI; 1: this thread only); the rows do not depend on it.
        ``interval`` (a level, e.g. 80) adds each row's band from its GPU's calibration, the
        columns of ``--interval``: band_lo_s and band_hi_s around time_s, or for serving
        ttft_mean_lo_s, ttft_mean_hi_s, tpot_mean_lo_s and tpot_mean_hi_s; NaN where that
        calibration has none."""
        import numpy as np

        models = [models] if isinstance(models, str) else list(models)
        hws = [hws] if isinstance(hws, str) else list(hws)
        if kind not in self._KINDS:
            raise Error(1, f"kind: expected one of {self._KINDS}, got {kind!r}")
        serving = kind == "serving"
        if serving:
            if concurrency is not None and request_rate is not None:
                raise Error(1, "sweep: a serving sweep takes one of concurrency, request_rate")
            batch = concurrency
        elif concurrency is not None or request_rate is not None:
            raise Error(1, "sweep: concurrency and request_rate belong to kind='serving'")
        # Axes not given: the CLI's defaults, from the library (llmstep_sweep_default_axis).
        if tp is None:
            tp = _sweep_default("tp")
        if context is None:
            context = _sweep_default("context")
        if batch is None and not (serving and request_rate is not None):
            batch = _sweep_default("concurrency" if serving else "batch")
        spec_method = spec  # the speculative-decoding method; spec is the C spec from here
        spec = _lib.SweepSpec()
        _lib.lib.llmstep_sweep_spec_init(ctypes.byref(spec))
        keep = []

        def strv(items):
            return _strv(items, keep)

        def i64v(items, name):
            a = _i64_array(name, items)
            keep.append(a)
            return a.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), a.size

        spec.models, spec.n_models = strv(models)
        spec.hws, spec.n_hws = strv(hws)
        spec.kind = self._KINDS.index(kind)
        spec.tp, spec.n_tp = i64v(tp, "tp")
        if pp is not None:
            spec.pp, spec.n_pp = i64v(pp, "pp")
        if dp is not None:
            spec.dp, spec.n_dp = i64v(dp, "dp")
        if isinstance(ep, (list, tuple, np.ndarray)):
            e = (ctypes.c_int * max(len(ep), 1))(*[_int(x, "ep", 0, 1) for x in ep])
            keep.append(e)
            spec.eps, spec.n_ep = e, len(ep)
        else:
            spec.ep = _flag(ep, "ep")
        if seeds is None:
            deterministic = request_rate is None and range_ratio == 0
            seeds = (_lib.lib.llmstep_sweep_planning_seeds()
                     if best and serving and not deterministic else 1)
        spec.n_seeds = _int(seeds, "seeds")
        spec.batch, spec.n_batch = i64v(batch, "batch")
        if kind in ("decode", "prefill"):
            spec.context, spec.n_context = i64v(context, "context")
        spec.prompt_tokens = _int(prompt_tokens or 0, "prompt_tokens")
        spec.output_tokens = _int(output_tokens or 0, "output_tokens")
        if request_rate is not None:
            r = _f64_array("request_rate", request_rate)
            keep.append(r)
            spec.rates, spec.n_rates = r.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), r.size
        spec.num_requests, spec.range_ratio = _int(num_requests, "num_requests"), _range_ratio(range_ratio)
        spec.burstiness = _float(burstiness, "burstiness")
        spec.seed = _int(seed, "seed", 0, (1 << 64) - 1)
        for name, val in (("calibration", calibration), ("engine", engine), ("dtype", dtype),
                          ("kv_dtype", kv_dtype)):
            b = _enc(val)
            keep.append(b)
            setattr(spec, name, b)
        spec.no_host = _flag(no_host, "no_host")
        # 0 is none; a negative or non-finite limit or price is refused, as the CLI's options.
        for name, val in (("slo_ttft_s", slo_ttft_s), ("slo_tpot_s", slo_tpot_s),
                          ("gpu_hour_usd", gpu_hour_usd)):
            x = _float(val, name)
            if not (x >= 0.0 and math.isfinite(x)):
                raise ValueError(f"{name}: expected 0 (none) or a positive number, got {val!r}")
            setattr(spec, name, x)
        spec.slo_percentile = _int(slo_percentile, "slo_percentile", *_C_INT)
        if interval is not None:
            interval = _level(interval)
        usages = {None: -1, "llm": 0, "server": 1}
        if usage not in usages:
            raise Error(1, f"usage: expected 'llm' or 'server', got {usage!r}")
        spec.usage = usages[usage]
        spec.max_num_seqs = _int(max_num_seqs or 0, "max_num_seqs")
        spec.max_num_batched_tokens = _int(max_num_batched_tokens or 0, "max_num_batched_tokens")
        spec.max_model_len = _int(max_model_len or 0, "max_model_len")
        spec.block_size = _int(block_size or 0, "block_size")
        spec.gpu_memory_utilization_frac = _float(gpu_memory_utilization or 0.0,
                                                  "gpu_memory_utilization")
        spec.chunked_prefill = _flag(chunked_prefill, "chunked_prefill", -1)
        spec.async_scheduling = _flag(async_scheduling, "async_scheduling", -1)
        spec.prefix_caching = _flag(prefix_caching, "prefix_caching", -1)
        spec.prefix_tokens = _int(prefix_tokens, "prefix_tokens")
        spec.distinct_prompts = _int(distinct_prompts, "distinct_prompts")
        spec_keep = []
        _set_spec(spec, spec_keep, spec_method, spec_tokens, acceptance, spec_model)
        if jobs is None:
            jobs = min(os.cpu_count() or 1, 256) if serving else 1
        spec.jobs = _int(jobs, "jobs", 0, 256)
        # The library's checks of the axes and workload first: a refused spec allocates nothing.
        chk = _lib.Error()
        _check(_lib.lib.llmstep_sweep_check(ctypes.byref(spec), ctypes.byref(chk)), chk)
        n = _lib.lib.llmstep_sweep_size(ctypes.byref(spec))
        limit = _int(max_rows, "max_rows")
        if n > limit:
            raise Error(1, f"sweep: {n} rows ({n * ctypes.sizeof(_lib.SweepRow) / 1e9:.1f} GB) "
                           f"exceed max_rows = {limit}: narrow the axes, sweep in parts, or "
                           f"raise max_rows")
        rows = (_lib.SweepRow * max(n, 1))()
        got = ctypes.c_size_t(0)
        err = _lib.Error()
        # Serving and offline rows take milliseconds each: a row callback costs nothing there,
        # so Ctrl-C stops them even without progress. Decode and prefill rows take about 150 ns,
        # less than a callback: without progress they run in chunks (below).
        cb, stop = _progress_callback(progress, n, stoppable=kind in ("serving", "offline"))
        if cb is None and kind in ("decode", "prefill") and n > self._SWEEP_CHUNK_ROWS:
            # No callback: the sweep runs as C calls of about _SWEEP_CHUNK_ROWS rows each,
            # along the batch axis (rows are ordered ... x batch x context), so Ctrl-C is
            # raised between two of them. The rows are those of one call.
            nb, nc = spec.n_batch, spec.n_context
            outer = n // (nb * nc)
            size = ctypes.sizeof(_lib.SweepRow)
            whole = np.frombuffer(rows, dtype=np.uint8).reshape(outer, nb, nc * size)
            step = max(1, self._SWEEP_CHUNK_ROWS // max(outer * nc, 1))
            all_batch = np.ascontiguousarray(batch, dtype=np.int64).ravel()
            chunk = (_lib.SweepRow * (outer * min(step, nb) * nc))()
            chunk_bytes = np.frombuffer(chunk, dtype=np.uint8)
            for b0 in range(0, nb, step):
                part = all_batch[b0:b0 + step]
                spec.batch = part.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
                spec.n_batch = part.size
                m = outer * part.size * nc
                _check(_lib.lib.llmstep_sweep(self._h, ctypes.byref(spec), chunk, m,
                                              ctypes.byref(got), None, None,
                                              ctypes.byref(err)), err)
                whole[:, b0:b0 + part.size, :] = chunk_bytes[:m * size].reshape(
                    outer, part.size, nc * size)
            got = ctypes.c_size_t(n)
        else:
            with _sigint_stops(stop if cb else None):
                _check(_lib.lib.llmstep_sweep(self._h, ctypes.byref(spec), rows, n,
                                              ctypes.byref(got),
                                              ctypes.cast(cb, ctypes.c_void_p) if cb else None,
                                              None, ctypes.byref(err)), err)
        if stop:
            raise stop[0]
        arr = _as_array(rows)[:got.value]
        if best:
            keep_rows = []
            for mi in range(len(models)):
                for hi in range(len(hws)):
                    idx = np.flatnonzero((arr["model_index"] == mi) & (arr["hw_index"] == hi))
                    block = np.ascontiguousarray(arr[idx])
                    k = _lib.lib.llmstep_sweep_best(block.ctypes.data, block.size)
                    if k >= 0:
                        keep_rows.append(idx[k])
            arr = arr[np.array(keep_rows, dtype=np.int64)]
        out = {"model": np.array(models, dtype=object)[arr["model_index"]],
               "hardware": np.array(hws, dtype=object)[arr["hw_index"]],
               "kind": np.array(self._KINDS, dtype=object)[arr["kind"]]}
        names = np.array([_lib.lib.llmstep_sweep_status_name(i).decode() for i in range(6)],
                         dtype=object)
        out["status"] = names[arr["status"]]
        out["bound"] = np.array(["none", "compute", "memory", "comm"], dtype=object)[arr["bound"]]
        out.update(_columns(arr, skip=("model_index", "hw_index", "kind", "status", "bound"),
                            flags=("fits", "meets_slo", "calibrated", "ep", "ttft_queued")))
        out["queue_s_mean"] = out.pop("queue_mean_s")  # the CLI's key, as ttft_s_mean
        if interval is not None:
            self._sweep_bands(out, arr, models, hws, kind, interval, calibration, engine)
        return out

    def _sweep_bands(self, out, arr, models, hws, kind, interval, calibration, engine):
        """The --interval columns of a sweep: each (model, hardware) block's band from the
        calibration its rows used (the deployment's: llmstep_deploy_band)."""
        import numpy as np

        serving = kind == "serving"
        cols = (("ttft_mean", "ttft", "ttft_s_mean"), ("tpot_mean", "tpot", "tpot_s_mean")) \
            if serving else (("band", "offline_batch" if kind == "offline" else kind, "time_s"),)
        # A serving row's TTFT band is of its regime (the library names the family).
        ttft_fam = {q: _lib.lib.llmstep_ttft_band_family(q).decode() for q in (0, 1)}
        n = arr.size
        for name, _, _ in cols:
            out[name + "_lo_s"] = np.full(n, np.nan)
            out[name + "_hi_s"] = np.full(n, np.nan)
        for mi, m in enumerate(models):
            for hi, h in enumerate(hws):
                idx = np.flatnonzero((arr["model_index"] == mi) & (arr["hw_index"] == hi))
                if idx.size == 0:
                    continue
                d = self.deploy(m, h, calibration=calibration, engine=engine,
                                ignore_memory=True)
                for name, fam, at in cols:
                    parts = [(fam, idx)] if fam != "ttft" else \
                        [(ttft_fam[q], idx[arr["ttft_queued"][idx] == q]) for q in (0, 1)]
                    for f, rows in parts:
                        try:
                            b = d.band(f, interval)
                        except Error:
                            continue  # no band for these rows: NaN, as the CLI's empty field
                        out[name + "_lo_s"][rows] = b["lo_frac"] * out[at][rows]
                        out[name + "_hi_s"][rows] = b["hi_frac"] * out[at][rows]

    # ---- measurements (../shared/MEASUREMENTS.md rows) ----

    @staticmethod
    def _meas_spec(measurements, select, exclude, engine, no_host, roofline, gemm, weighting,
                   alpha_bounds, beta_bounds_s, scheduler_rule):
        """The C spec for measurement files, or for rows given as dicts (passed to the library
        as JSON Lines text in memory), the objects it points to (to keep alive), and an upper
        bound on the rows (the inputs' lines)."""
        rows_text = None
        if isinstance(measurements, (str, os.PathLike)):
            files = [os.fspath(measurements)]
        elif measurements and isinstance(measurements[0], dict):
            rows_text = "".join(json.dumps(row) + "\n" for row in measurements).encode()
            files = []
        else:
            files = [os.fspath(x) for x in measurements]
        n_lines = len(measurements) if rows_text is not None else 0
        for path in files:
            try:
                with open(path, "rb") as f:
                    n_lines += sum(1 for _ in f)
            except OSError:
                pass  # the library reports the file
        spec = _lib.MeasSpec()
        _lib.lib.llmstep_meas_spec_init(ctypes.byref(spec))
        keep = []

        def strv(items):
            return _strv(items, keep)

        spec.files, spec.n_files = strv(files)
        if rows_text is not None:
            keep.append(rows_text)
            spec.rows_jsonl, spec.rows_jsonl_len = rows_text, len(rows_text)
        spec.select, spec.n_select = strv(select)
        spec.exclude, spec.n_exclude = strv(exclude)
        eng = _enc(engine)
        keep.append(eng)
        spec.engine = eng
        spec.no_host = _flag(no_host, "no_host")
        if roofline not in ("op", "step") or gemm not in ("flat", "tile-wave"):
            raise Error(1, "roofline: 'op' or 'step'; gemm: 'flat' or 'tile-wave'")
        if weighting not in ("relative", "absolute"):
            raise Error(1, f"weighting: 'relative' or 'absolute', got {weighting!r}")
        spec.roofline_step = int(roofline == "step")
        spec.gemm_tile_wave = int(gemm == "tile-wave")
        spec.weighting_absolute = int(weighting == "absolute")
        if alpha_bounds is not None:
            spec.alpha_min, spec.alpha_max = map(float, alpha_bounds)
        if beta_bounds_s is not None:
            spec.beta_min_s, spec.beta_max_s = map(float, beta_bounds_s)
        rule = _enc(scheduler_rule)
        keep.append(rule)
        spec.scheduler_rule = rule
        return spec, keep, n_lines

    @staticmethod
    def _meas_opts(kw):
        """The measurement options with their defaults; unknown names are refused."""
        opts = dict(select=(), exclude=(), engine=None, no_host=False, roofline="op",
                    gemm="flat", weighting="relative", alpha_bounds=None, beta_bounds_s=None,
                    scheduler_rule=None)
        unknown = set(kw) - set(opts)
        if unknown:
            raise TypeError(f"unexpected arguments: {sorted(unknown)}")
        opts.update(kw)
        return opts

    def _validate(self, fn, extra, measurements, kw):
        import numpy as np

        spec, _keep, cap = self._meas_spec(measurements, **self._meas_opts(kw))
        v = _lib.Validation()
        err = _lib.Error()
        cap = max(cap, 1)  # rows <= lines of the inputs
        pred = np.empty(cap)
        meas = np.empty(cap)
        dp = ctypes.POINTER(ctypes.c_double)
        _check(fn(self._h, ctypes.byref(spec), extra, pred.ctypes.data_as(dp),
                  meas.ctypes.data_as(dp), cap, ctypes.byref(v), ctypes.byref(err)), err)
        out = _struct_dict(v)
        n = out["n_rows"]
        out["predicted_s"] = pred[:n].copy()
        out["measured_s"] = meas[:n].copy()
        return out

    def validate(self, measurements, calibration=None, **kw):
        """Predicts measurement rows (a file, a list of files, or a list of row dicts in the
        format of MEASUREMENTS.md) and reports MAPE, median and max APE and R^2, with the
        arrays predicted_s and measured_s. Options: select/exclude ("field=value" terms),
        engine, no_host, roofline, gemm, scheduler_rule ("engine-defaults" or
        "aic-benchmark", as validate --scheduler-rule); calibration applies alpha and
        beta_s."""
        return self._validate(_lib.lib.llmstep_validate, _enc(calibration), measurements, kw)

    def holdout(self, measurements, field, **kw):
        """Leave-one-group-out over ``field`` (e.g. "model"): each group is predicted by alpha
        and beta_s fitted on the others. Returns what validate returns."""
        return self._validate(_lib.lib.llmstep_holdout, _enc(field), measurements, kw)

    def calibrate(self, measurements, out=None, **kw):
        """Fits alpha and beta_s to the rows (one hardware profile, one engine): returns
        hardware, engine, alpha, beta_s, their standard errors, bound flags, n_rows and the
        fit's own errors ("fit"). With ``out`` (a path), also writes the calibration file
        atomically, as ``llmstep calibrate --out`` does, for ``calibration=`` to use."""
        spec, _keep, _ = self._meas_spec(measurements, **self._meas_opts(kw))
        f = _lib.Fit()
        err = _lib.Error()
        if out is None:
            st = _lib.lib.llmstep_calibrate(self._h, ctypes.byref(spec), ctypes.byref(f),
                                            ctypes.byref(err))
        else:
            st = _lib.lib.llmstep_calibrate_write(self._h, ctypes.byref(spec),
                                                  _enc(os.fspath(out)), ctypes.byref(f),
                                                  ctypes.byref(err))
        _check(st, err)
        out = _struct_dict(f)
        out["fit"] = _struct_dict(f.fit)
        out["alpha_at_bound"] = bool(out["alpha_at_bound"])
        out["beta_at_bound"] = bool(out["beta_at_bound"])
        return out


_default = None


def default_context():
    """The context module-level functions use (created on first use)."""
    global _default
    if _default is None:
        _default = Context()
    return _default


def _i64_array(name, a):
    """A flat int64 array of the integers in a, never silently changed (the rule of _int for
    each element): integral finite floats are taken, TypeError for 2.5, nan or strings,
    OverflowError outside the int64 range (np.asarray(..., dtype=np.int64) truncated 2.5 to
    2 and turned nan into -2**63)."""
    import numpy as np

    raw = np.asarray(a if a is not None else [])
    if raw.dtype.kind == "u" and raw.size and raw.max() > np.iinfo(np.int64).max:
        raise OverflowError(f"{name}: {raw.max()!r} is outside the int64 range")
    if raw.dtype.kind in "iub":
        return np.ascontiguousarray(raw, dtype=np.int64).ravel()
    if raw.dtype.kind == "f":
        bad = ~np.isfinite(raw) | (raw != np.floor(raw))
        if bad.any():
            raise TypeError(f"{name}: expected integers, got {raw[bad].ravel()[0]!r}")
        if (np.abs(raw) >= 2.0**63).any():
            raise OverflowError(f"{name}: {raw[np.abs(raw) >= 2.0**63].ravel()[0]!r} is outside "
                                f"the int64 range")
        return np.ascontiguousarray(raw, dtype=np.int64).ravel()
    # Python ints beyond int64, or anything else: element by element.
    return np.array([_int(v, name) for v in raw.ravel().tolist()], dtype=np.int64)


def _f64_array(name, a):
    """A flat float64 array of the numbers in a; TypeError for strings or objects (NumPy would
    have converted ['4'] to 4.0)."""
    import numpy as np

    raw = np.asarray(a)
    if raw.dtype.kind not in "iubf":
        raise TypeError(f"{name}: expected numbers, got {a!r}")
    return np.ascontiguousarray(raw, dtype=np.float64).ravel()


def _as_i64(name, a, n):
    import numpy as np

    return np.ascontiguousarray(np.broadcast_to(_i64_array(name, a), (n,)))


def _set_spec(spec, keep, method, tokens, acceptance, model):
    """Speculative decoding onto a DeploySpec or SweepSpec (the C library checks it)."""
    if method is None:
        if tokens is not None or acceptance is not None or model is not None:
            raise Error(1, "spec_tokens, acceptance and spec_model: need spec")
        return
    rates = [acceptance] if isinstance(acceptance, (int, float)) else list(acceptance or [])
    arr = (ctypes.c_double * max(len(rates), 1))(*[_float(r, "acceptance") for r in rates])
    keep += [_enc(method), _enc(model), arr]
    spec.spec_method, spec.spec_model = keep[-3], keep[-2]
    spec.spec_tokens = _int(tokens if tokens is not None else 0, "spec_tokens")
    spec.spec_acceptance = ctypes.cast(arr, ctypes.POINTER(ctypes.c_double))
    spec.n_spec_acceptance = len(rates)


class Deployment:
    """A deployment (see Context.deploy). Not for use by two threads at once."""

    def __init__(self, ctx, model, hw, tp, engine, calibration, dtype, kv_dtype, usage,
                 max_num_seqs, max_num_batched_tokens, max_model_len, block_size,
                 gpu_memory_utilization, chunked_prefill, roofline, gemm, ignore_memory,
                 pp=1, dp=1, ep=False, async_scheduling=None, prefix_caching=None,
                 spec_args=(None, None, None, None)):
        self._ctx = ctx  # keeps the loaded files alive
        spec = _lib.DeploySpec()
        _lib.lib.llmstep_deploy_spec_init(ctypes.byref(spec))
        self._keep = [_enc(x) for x in (model, hw, engine, calibration, dtype, kv_dtype)]
        (spec.model, spec.hw, spec.engine, spec.calibration, spec.dtype,
         spec.kv_dtype) = self._keep
        spec.tp = _int(tp, "tp")
        for name, v in (("max_num_seqs", max_num_seqs),
                        ("max_num_batched_tokens", max_num_batched_tokens),
                        ("max_model_len", max_model_len), ("block_size", block_size)):
            if v is not None:
                if _int(v, name) < 1:
                    raise Error(3, f"{name}: expected >= 1, got {v}")
                setattr(spec, name, _int(v, name))
        if gpu_memory_utilization is not None:
            u = _float(gpu_memory_utilization, "gpu_memory_utilization")
            if not 0.0 < u <= 1.0:
                raise Error(3, f"gpu_memory_utilization: expected 0 < u <= 1, got "
                               f"{gpu_memory_utilization}")
            spec.gpu_memory_utilization_frac = u
        spec.chunked_prefill = _flag(chunked_prefill, "chunked_prefill", -1)
        spec.async_scheduling = _flag(async_scheduling, "async_scheduling", -1)
        spec.prefix_caching = _flag(prefix_caching, "prefix_caching", -1)
        _set_spec(spec, self._keep, *spec_args)
        usages = {None: -1, "llm": 0, "server": 1}
        if usage not in usages:
            raise Error(1, f"usage: expected 'llm' or 'server', got {usage!r}")
        spec.usage = usages[usage]
        if roofline not in ("op", "step") or gemm not in ("flat", "tile-wave"):
            raise Error(1, "roofline: 'op' or 'step'; gemm: 'flat' or 'tile-wave'")
        spec.roofline_step = int(roofline == "step")
        spec.gemm_tile_wave = int(gemm == "tile-wave")
        spec.ignore_memory = _flag(ignore_memory, "ignore_memory")
        spec.pp, spec.dp, spec.ep = _int(pp, "pp"), _int(dp, "dp"), _flag(ep, "ep")
        self._h = ctypes.c_void_p()
        err = _lib.Error()
        _check(_lib.lib.llmstep_deploy_open(ctx._h, ctypes.byref(spec), ctypes.byref(self._h),
                                            ctypes.byref(err)), err)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _lib.lib.llmstep_deploy_free(h)

    @property
    def info(self):
        """The resolved settings and the memory budget of one GPU."""
        out = _lib.DeployInfo()
        _lib.lib.llmstep_deploy_get_info(self._h, ctypes.byref(out))
        d = _struct_dict(out)
        d["fits"] = bool(d["fits"])
        d["chunked_prefill"] = bool(d["chunked_prefill"])
        return d

    def band(self, family, level=80):
        """The band of this deployment's calibration for one family of predictions
        ("offline_batch", "prefill", "decode", "step", "ttft", "ttft_queued", "tpot", "e2e") at
        ``level`` percent (10, 20, ..., 100): a dict of family, level_pct, lo_frac, hi_frac (measured /
        predicted of the calibration's held-out rows at (100 - level) / 2 and (100 + level) / 2
        percent) and n_rows. ``llmstep.Error`` with the reason when there is none (uncalibrated,
        a calibration without a band or without rows of that family). The CLI's --interval."""
        lo, hi, n = ctypes.c_double(), ctypes.c_double(), ctypes.c_int64()
        err = _lib.Error()
        _check(_lib.lib.llmstep_deploy_band(self._h, _enc(family), _int(level, "level", 0, 100),
                                            ctypes.byref(lo), ctypes.byref(hi), ctypes.byref(n),
                                            ctypes.byref(err)), err)
        return {"family": family, "level_pct": int(level), "lo_frac": lo.value,
                "hi_frac": hi.value, "n_rows": n.value}

    def _band_around(self, family, level, predicted_s):
        b = self.band(family, level)
        b["lo_s"], b["hi_s"] = b["lo_frac"] * predicted_s, b["hi_frac"] * predicted_s
        return b

    def step(self, groups, ops=False, interval=None):
        """One step of ``groups``: (count, new_tokens, context_tokens[, emits]) tuples.
        Returns step_s (the predicted wall time), gpu_s, roofline_s, host_s, comm_s, flops,
        bytes, tokens, seqs and bound; with ops=True also ``ops``, one dict per operator; with
        ``interval`` (a level, e.g. 80) also ``band``: the calibration's band around step_s
        (lo_s, hi_s and the fields of band()), as ``llmstep predict --interval``."""
        n = len(groups)
        arr = (_lib.Group * max(n, 1))()
        for i, g in enumerate(groups):
            emits = _int(g[3] if len(g) > 3 else 1, "emits")
            if emits not in (0, 1):
                raise ValueError(f"emits: expected True/False or 1/0, got {g[3]!r}")
            arr[i] = _lib.Group(_int(g[0], "count"), _int(g[1], "new_tokens"),
                                _int(g[2], "context_tokens"), emits)
        res = _lib.StepResult()
        err = _lib.Error()
        op_arr = (_lib.Op * _lib.MAX_OPS)() if ops else None
        n_ops = ctypes.c_size_t(0)
        _check(_lib.lib.llmstep_step(self._h, arr, n, ctypes.byref(res), op_arr,
                                     _lib.MAX_OPS if ops else 0, ctypes.byref(n_ops),
                                     ctypes.byref(err)), err)
        out = _struct_dict(res)
        if ops:
            out["ops"] = [_struct_dict(op_arr[i]) for i in range(n_ops.value)]
        if interval is not None:
            fam = _lib.lib.llmstep_step_band_family(arr, n).decode()
            out["band"] = self._band_around(fam, interval, out["step_s"])
        return out

    def step_grid(self, count, context_tokens, new_tokens=1):
        """Predicted wall time (seconds) of steps of one group each, for every point of the
        broadcast of ``count``, ``new_tokens`` and ``context_tokens`` (NumPy arrays or
        scalars): one call into C for the whole grid. Returns a float64 array of that
        shape."""
        import numpy as np

        shape = np.broadcast_shapes(np.shape(count), np.shape(new_tokens),
                                    np.shape(context_tokens))
        n = int(np.prod(shape, dtype=np.int64))
        c = _as_i64("count", np.broadcast_to(count, shape).ravel(), n)
        t = _as_i64("new_tokens", np.broadcast_to(new_tokens, shape).ravel(), n)
        x = _as_i64("context_tokens", np.broadcast_to(context_tokens, shape).ravel(), n)
        out = np.empty(n, dtype=np.float64)
        err = _lib.Error()
        ptr = ctypes.POINTER(ctypes.c_int64)
        _check(_lib.lib.llmstep_step_grid(
            self._h, n, c.ctypes.data_as(ptr), t.ctypes.data_as(ptr), x.ctypes.data_as(ptr),
            out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ctypes.byref(err)), err)
        return out.reshape(shape)

    def capacity(self, context_tokens):
        """How many sequences holding ``context_tokens`` tokens each run at once."""
        res = _lib.CapacityResult()
        err = _lib.Error()
        _check(_lib.lib.llmstep_capacity(self._h, _int(context_tokens, "context_tokens"), ctypes.byref(res),
                                         ctypes.byref(err)), err)
        d = _struct_dict(res)
        d["fits"] = bool(d["fits"])
        return d

    def batch(self, batch, prompt_tokens, output_tokens, interval=None):
        """An offline batch (the LLM class's generate()): latency_s and its parts; with
        ``interval`` also ``band`` around latency_s (``llmstep latency --interval``)."""
        res = _lib.BatchResult()
        err = _lib.Error()
        _check(_lib.lib.llmstep_batch(self._h, _int(batch, "batch"), _int(prompt_tokens, "prompt_tokens"),
                                      _int(output_tokens, "output_tokens"), ctypes.byref(res),
                                      ctypes.byref(err)), err)
        out = _struct_dict(res)
        if interval is not None:
            out["band"] = self._band_around("offline_batch", interval, out["latency_s"])
        return out

    @staticmethod
    def _workload(arrival, prompt_tokens, output_tokens, burstiness, range_ratio,
                  num_requests, warmup_requests, seed, slo_ttft_s, slo_tpot_s, prefix_tokens=0,
                  distinct_prompts=0):
        w = _lib.Workload()
        _lib.lib.llmstep_workload_init(ctypes.byref(w))
        w.arrival = arrival
        w.prompt_tokens = _int(prompt_tokens, "prompt_tokens")
        w.output_tokens = _int(output_tokens, "output_tokens")
        w.burstiness, w.range_ratio = _float(burstiness, "burstiness"), _range_ratio(range_ratio)
        w.num_requests = _int(num_requests, "num_requests")
        w.warmup_requests = -1 if warmup_requests is None else _int(warmup_requests,
                                                                       "warmup_requests")
        w.seed = _int(seed, "seed", 0, (1 << 64) - 1)
        w.slo_ttft_s = _float(slo_ttft_s, "slo_ttft_s")
        w.slo_tpot_s = _float(slo_tpot_s, "slo_tpot_s")
        w.prefix_tokens = _int(prefix_tokens, "prefix_tokens")
        w.distinct_prompts = _int(distinct_prompts, "distinct_prompts")
        return w

    @staticmethod
    def _load(w, concurrency, request_rate, trace):
        """The one load given onto workload w; returns the encoded trace path (None without a
        trace), which the caller keeps alive while the C call reads w."""
        if concurrency is not None:
            w.concurrency = _int(concurrency, "concurrency")
        elif request_rate is not None:
            w.rate_per_s = _float(request_rate, "request_rate")
        else:
            trace_b = _enc(trace)
            w.trace_path = trace_b
            return trace_b
        return None

    def serve(self, concurrency=None, request_rate=None, trace=None, prompt_tokens=1024,
              output_tokens=128, burstiness=1.0, range_ratio=None, num_requests=0,
              warmup_requests=None, seed=0, slo_ttft_s=0.0, slo_tpot_s=0.0, interval=None,
              prefix_tokens=0, distinct_prompts=0):
        """Simulates the engine serving a workload: exactly one of ``concurrency`` (closed
        loop), ``request_rate`` (open loop, gamma arrivals of shape ``burstiness``) or
        ``trace`` (a JSONL file). The defaults are those of ``llmstep serve``. Returns the
        keys of ``llmstep serve --format json``: ttft_s, tpot_s, itl_s, e2e_s (each with mean,
        p50, p90, p99), request_throughput_per_s, output_tokens_per_s, goodput_per_s,
        duration_s, kv_peak_frac, queue_peak, preemptions, n_requests, n_steps, queue_s (arrival
        to the first step: mean, p50, p90, p99), ttft_queued and prefix_hit_frac (the prefix
        cache hit rate; ``prefix_tokens`` and ``distinct_prompts`` as --prefix-tokens and
        --distinct-prompts); with
        ``interval`` also ``band``: for ttft_s, tpot_s and e2e_s the calibration's band around
        the mean, or None for a family it has no rows of (``llmstep serve --interval``); ttft_s's
        band is of the run's regime: "ttft_queued" when ``ttft_queued`` (the mean wait before
        the first step, ``queue_s``, is at least half the mean TTFT), else "ttft"."""
        given = [x is not None for x in (concurrency, request_rate, trace)]
        if sum(given) != 1:
            raise Error(1, "serve: give exactly one of concurrency, request_rate, trace")
        arrival = 0 if concurrency is not None else (1 if request_rate is not None else 2)
        w = self._workload(arrival, prompt_tokens, output_tokens, burstiness, range_ratio,
                           num_requests, warmup_requests, seed, slo_ttft_s, slo_tpot_s,
                           prefix_tokens, distinct_prompts)
        trace_b = self._load(w, concurrency, request_rate, trace)  # kept alive for the call
        res = _lib.ServeResult()
        err = _lib.Error()
        bands = self._serve_bands(interval) if interval is not None else None
        _check(_lib.lib.llmstep_serve(self._h, ctypes.byref(w), ctypes.byref(res),
                                      ctypes.byref(err)), err)
        out = _struct_dict(res)
        out["ttft_queued"] = bool(out["ttft_queued"])
        if bands is not None:
            fams = {"ttft_s": _lib.lib.llmstep_ttft_band_family(res.ttft_queued).decode(),
                    "tpot_s": "tpot", "e2e_s": "e2e"}
            out["band"] = {k: None if bands[f] is None else
                           dict(bands[f], lo_s=bands[f]["lo_frac"] * out[k]["mean"],
                                hi_s=bands[f]["hi_frac"] * out[k]["mean"])
                           for k, f in fams.items()}
        return out

    def serve_disagg(self, decode, n_prefill, n_decode, request_rate=None, trace=None,
                     prompt_tokens=1024, output_tokens=128, burstiness=1.0, range_ratio=None,
                     num_requests=0, warmup_requests=None, seed=0, slo_ttft_s=0.0,
                     slo_tpot_s=0.0):
        """Disaggregated serving, as ``llmstep serve --disagg xPyD``: ``n_prefill`` instances
        of this deployment prefill and ``n_decode`` of ``decode`` (another Deployment of the
        same model and GPU, at its own TP) decode an open-loop workload (``request_rate`` or
        ``trace``). Returns serve's keys (TTFT from the arrival to the decode instance's first
        token) and ``kv_transfer_mean_s``."""
        if (request_rate is None) == (trace is None):
            raise Error(1, "serve_disagg: give exactly one of request_rate, trace")
        w = self._workload(1 if request_rate is not None else 2, prompt_tokens, output_tokens,
                           burstiness, range_ratio, num_requests, warmup_requests, seed,
                           slo_ttft_s, slo_tpot_s)
        trace_b = self._load(w, None, request_rate, trace)  # kept alive for the call
        res = _lib.ServeResult()
        xfer = ctypes.c_double(0.0)
        err = _lib.Error()
        _check(_lib.lib.llmstep_serve_disagg(self._h, decode._h, _int(n_prefill, "n_prefill"),
                                             _int(n_decode, "n_decode"), ctypes.byref(w),
                                             ctypes.byref(res), ctypes.byref(xfer),
                                             ctypes.byref(err)), err)
        out = _struct_dict(res)
        out["ttft_queued"] = bool(out["ttft_queued"])
        out["kv_transfer_mean_s"] = xfer.value
        return out

    def _serve_bands(self, level):
        """The bands serve(interval=) may report, by family: TTFT in either regime, TPOT and
        E2E, each the calibration has (else None); none at all raises the first one's reason
        (as the CLI)."""
        bands, first = {}, None
        for fam in ("ttft", "ttft_queued", "tpot", "e2e"):
            try:
                bands[fam] = self.band(fam, level)
            except Error as e:
                bands[fam] = None
                first = first or e
        if all(b is None for b in bands.values()):
            raise first
        return bands

    def serve_sweep(self, concurrency=None, request_rate=None, slo_ttft_s=0.0, slo_tpot_s=0.0,
                    slo_percentile=90, prompt_tokens=1024, output_tokens=128, burstiness=1.0,
                    range_ratio=None, num_requests=0, warmup_requests=None, seed=0,
                    prefix_tokens=0, distinct_prompts=0):
        """Serves the workload at each load of ``concurrency`` (closed loops) or
        ``request_rate`` (open loops), a sequence, in one call to the library
        (llmstep_serve_sweep). Returns a dict of NumPy arrays, one entry per load: ``load``,
        the ``mean``/``p50``/``p90``/``p99`` of ttft_s, tpot_s, itl_s and e2e_s as
        ``ttft_s_p90`` style keys, request_throughput_per_s, output_tokens_per_s,
        goodput_per_s, duration_s, kv_peak_frac, queue_peak, preemptions, n_requests,
        n_steps, and ``meets_slo`` (bool: TTFT and TPOT at ``slo_percentile`` within the
        limits; 0 is no limit, as ``llmstep sweep --kind serving``)."""
        import numpy as np

        if (concurrency is None) == (request_rate is None):
            raise Error(1, "serve_sweep: give exactly one of concurrency, request_rate")
        arrival = 0 if concurrency is not None else 1
        loads = _f64_array("concurrency" if concurrency is not None else "request_rate",
                           concurrency if concurrency is not None else request_rate)
        w = self._workload(arrival, prompt_tokens, output_tokens, burstiness, range_ratio,
                           num_requests, warmup_requests, seed, slo_ttft_s, slo_tpot_s,
                           prefix_tokens, distinct_prompts)
        n = loads.size
        res = (_lib.ServeResult * max(n, 1))()
        meets = np.zeros(max(n, 1), dtype=np.intc)
        err = _lib.Error()
        # Ctrl-C stops the C loop before the next load (each takes milliseconds or more).
        stop = []
        cb = _lib.ServeCb(lambda _u, _i, _load, _r, _m: 1 if stop else 0)
        with _sigint_stops(stop):
            _check(_lib.lib.llmstep_serve_sweep(
                self._h, ctypes.byref(w), loads.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), n,
                _int(slo_percentile, "slo_percentile", *_C_INT), res, meets.ctypes.data_as(ctypes.POINTER(ctypes.c_int)),
                ctypes.cast(cb, ctypes.c_void_p), None, ctypes.byref(err)), err)
        if stop:
            raise stop[0]
        arr = _as_array(res)[:n]
        out = {"load": loads.copy()}
        out.update(_columns(arr))
        out["meets_slo"] = meets[:n].astype(bool)
        return out


def deploy(model, hw, tp=1, **kw):
    """Context.deploy on the default context."""
    return default_context().deploy(model, hw, tp=tp, **kw)


def serve(model, hw, tp=1, engine=None, calibration=None, usage="server", prefix_caching=None,
          spec=None, spec_tokens=None, acceptance=None, spec_model=None, **workload):
    """One serving simulation: deploy(model, hw, tp, ...) then Deployment.serve(**workload).
    The OpenAI server's defaults apply unless ``usage="llm"``."""
    d = deploy(model, hw, tp=tp, engine=engine, calibration=calibration, usage=usage,
               prefix_caching=prefix_caching, spec=spec, spec_tokens=spec_tokens,
               acceptance=acceptance, spec_model=spec_model)
    return d.serve(**workload)


def sweep(models, hws, **kw):
    """Context.sweep on the default context."""
    return default_context().sweep(models, hws, **kw)


def validate(measurements, calibration=None, **kw):
    """Context.validate on the default context."""
    return default_context().validate(measurements, calibration=calibration, **kw)


def calibrate(measurements, **kw):
    """Context.calibrate on the default context."""
    return default_context().calibrate(measurements, **kw)


def to_frame(rows):
    """A list of result dicts (or one) as a pandas DataFrame, nested statistics flattened to
    ``ttft_s_p90`` style columns; a dict of equal-length arrays (``sweep``, ``serve_sweep``)
    becomes one row per element. Needs pandas."""
    import numpy as np
    import pandas as pd

    if isinstance(rows, dict) and rows and all(isinstance(v, np.ndarray) for v in rows.values()):
        return pd.DataFrame(rows)
    if isinstance(rows, dict):
        rows = [rows]
    flat = []
    for r in rows:
        f = {}
        for k, v in r.items():
            if isinstance(v, dict):
                for kk, vv in v.items():
                    f[f"{k}_{kk}"] = vv
            elif not isinstance(v, list):
                f[k] = v
        flat.append(f)
    return pd.DataFrame(flat)
