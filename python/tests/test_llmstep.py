"""Tests of the Python package against outside oracles: the CLI's own output for the same
question, published architecture facts, hand-derived figures, and the C library's errors."""

import ctypes
import json
import os
import subprocess

import numpy as np
import pytest

import llmstep

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
CLI = os.environ.get("LLMSTEP_CLI", os.path.join(SRC, "build", "llmstep"))


@pytest.fixture(scope="module")
def ctx():
    return llmstep.Context(os.environ.get("LLMSTEP_DATA_DIR", SRC))


def cli_json(*args):
    out = subprocess.run([CLI, *args, "--format", "json"], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("workload,cli_args", [
    (dict(concurrency=16, prompt_tokens=1024, output_tokens=128),
     ["--concurrency", "16", "--prompt-tokens", "1024", "--output-tokens", "128"]),
    (dict(request_rate=8.0, prompt_tokens=512, output_tokens=256, range_ratio=0.5,
          num_requests=300, seed=7, burstiness=0.5),
     ["--request-rate", "8", "--prompt-tokens", "512", "--output-tokens", "256",
      "--range-ratio", "0.5", "--num-requests", "300", "--seed", "7", "--burstiness", "0.5"]),
])
def test_serve_matches_the_cli(ctx, workload, cli_args):
    """llmstep.serve returns the numbers `llmstep serve --format json` prints."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    want = cli_json("serve", "--model", "qwen3-32b", "--hw", "h100-sxm", "--tp", "2",
                    "--engine", "vllm-v1-0.12", *cli_args)
    d = ctx.deploy("qwen3-32b", "h100-sxm", tp=2, engine="vllm-v1-0.12", usage="server")
    got = d.serve(**workload)
    for key in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):
        for stat in ("mean", "p50", "p90", "p99"):
            assert got[key][stat] == pytest.approx(want[key][stat], rel=1e-9), (key, stat)
    for key in ("request_throughput_per_s", "output_tokens_per_s", "kv_peak_frac"):
        assert got[key] == pytest.approx(want[key], rel=1e-9), key
    for key in ("queue_peak", "preemptions"):
        assert got[key] == want[key], key


@pytest.mark.parametrize("flag,value", [("off", False), ("on", True)])
def test_async_scheduling_matches_the_cli(ctx, flag, value):
    """async_scheduling=False/True gives what `llmstep serve --async-scheduling off/on` prints
    (the engine vllm-v1 schedules asynchronously by default; off adds the host time)."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    want = cli_json("serve", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--concurrency", "8",
                    "--prompt-tokens", "512", "--output-tokens", "64", "--async-scheduling",
                    flag)
    assert want["async_scheduling"] is value
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", usage="server", async_scheduling=value)
    got = d.serve(concurrency=8, prompt_tokens=512, output_tokens=64)
    for key in ("ttft_s", "tpot_s"):
        assert got[key]["mean"] == pytest.approx(want[key]["mean"], rel=1e-9), key


@pytest.mark.parametrize("workload,cli_args,caching", [
    (dict(distinct_prompts=100), ["--distinct-prompts", "100"], None),
    (dict(distinct_prompts=100), ["--distinct-prompts", "100", "--no-prefix-caching"], False),
    (dict(prefix_tokens=512), ["--prefix-tokens", "512"], None),
])
def test_prefix_caching_matches_the_cli(ctx, workload, cli_args, caching):
    """Shared prefixes and prefix caching give, by serve, sweep and the CLI's serve and sweep,
    the same TTFT and hit rate; with caching off nothing is found."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    base = ["--model", "llama-3.1-8b", "--hw", "h100-sxm", "--concurrency", "16",
            "--prompt-tokens", "1024", "--output-tokens", "64"]
    want = cli_json("serve", *base, *cli_args)
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", usage="server", prefix_caching=caching)
    got = d.serve(concurrency=16, prompt_tokens=1024, output_tokens=64, **workload)
    assert got["prefix_hit_frac"] == want["prefix_cache"]["hit_frac"]
    assert got["ttft_s"]["mean"] == want["ttft_s"]["mean"]
    assert (got["prefix_hit_frac"] > 0.0) == (caching is not False)
    row = cli_json("sweep", "--kind", "serving", *base, *cli_args)["rows"][0]
    sw = ctx.sweep(["llama-3.1-8b"], ["h100-sxm"], kind="serving", tp=[1], concurrency=[16],
                   prompt_tokens=1024, output_tokens=64, prefix_caching=caching, jobs=1,
                   **workload)
    assert sw["prefix_hit_frac"][0] == row["prefix_hit_frac"] == got["prefix_hit_frac"]
    assert sw["ttft_s_mean"][0] == row["ttft_s"]["mean"] == got["ttft_s"]["mean"]


@pytest.mark.parametrize("kw,cli_args", [
    (dict(spec="eagle", spec_tokens=3, acceptance=[0.8, 0.7, 0.6]),
     ["--spec", "eagle", "--spec-tokens", "3", "--acceptance", "0.8,0.7,0.6"]),
    (dict(spec="ngram", spec_tokens=4, acceptance=0.5),
     ["--spec", "ngram", "--spec-tokens", "4", "--acceptance", "0.5"]),
    (dict(spec="draft", spec_tokens=2, acceptance=0.7, spec_model="llama-3.1-8b"),
     ["--spec", "draft", "--spec-tokens", "2", "--acceptance", "0.7", "--spec-model",
      "llama-3.1-8b"]),
])
def test_spec_decoding_matches_the_cli(ctx, kw, cli_args):
    """Speculative decoding gives, by serve, sweep and the CLI's serve and sweep, the same
    TPOT and TTFT."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    base = ["--model", "llama-3.1-70b", "--hw", "h100-sxm", "--concurrency", "8",
            "--prompt-tokens", "1024", "--output-tokens", "128"]
    want = cli_json("serve", *base, "--tp", "4", *cli_args)
    d = ctx.deploy("llama-3.1-70b", "h100-sxm", tp=4, usage="server", **kw)
    got = d.serve(concurrency=8, prompt_tokens=1024, output_tokens=128)
    assert got["tpot_s"]["mean"] == want["tpot_s"]["mean"]
    assert got["ttft_s"]["mean"] == want["ttft_s"]["mean"]
    assert got["spec_accepted_frac"] == pytest.approx(
        want["spec"]["accepted_tokens"] / want["spec"]["verified_tokens"], rel=1e-12)
    row = cli_json("sweep", "--kind", "serving", *base, "--tp", "4", *cli_args)["rows"][0]
    sw = ctx.sweep(["llama-3.1-70b"], ["h100-sxm"], kind="serving", tp=[4], concurrency=[8],
                   prompt_tokens=1024, output_tokens=128, jobs=1, **kw)
    assert sw["tpot_s_mean"][0] == row["tpot_s"]["mean"] == got["tpot_s"]["mean"]


def test_spec_options_refused_alike(ctx):
    """Bad speculative-decoding settings: the library's messages, as the CLI's."""
    with pytest.raises(llmstep.Error, match="expected ngram, eagle"):
        ctx.deploy("llama-3.1-8b", "h100-sxm", spec="medusa", spec_tokens=2, acceptance=0.5)
    with pytest.raises(llmstep.Error, match="one acceptance rate, or one per token"):
        ctx.deploy("llama-3.1-8b", "h100-sxm", spec="eagle", spec_tokens=3,
                   acceptance=[0.5, 0.4])
    with pytest.raises(llmstep.Error, match="no multi-token-prediction layer"):
        ctx.deploy("llama-3.1-8b", "h100-sxm", spec="mtp", spec_tokens=1, acceptance=0.8)


def test_serve_disagg_matches_the_cli(ctx):
    """Deployment.serve_disagg gives what `llmstep serve --disagg 1P2D` prints, and refuses a
    closed loop as the CLI does."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    want = cli_json("serve", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--disagg", "1P2D",
                    "--prefill-tp", "2", "--decode-tp", "1", "--request-rate", "5",
                    "--prompt-tokens", "2048", "--output-tokens", "128", "--num-requests", "100")
    p = ctx.deploy("llama-3.1-8b", "h100-sxm", tp=2, usage="server")
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", tp=1, usage="server")
    got = p.serve_disagg(d, 1, 2, request_rate=5, prompt_tokens=2048, output_tokens=128,
                         num_requests=100)
    for key in ("ttft_s", "tpot_s", "e2e_s"):
        assert got[key]["p90"] == want[key]["p90"], key
    assert got["kv_transfer_mean_s"] == want["disagg"]["kv_transfer_mean_s"]
    with pytest.raises(llmstep.Error, match="closed loop"):
        lib = llmstep._lib
        w = lib.Workload()
        lib.lib.llmstep_workload_init(ctypes.byref(w))
        res, err = lib.ServeResult(), lib.Error()
        llmstep._check(lib.lib.llmstep_serve_disagg(p._h, d._h, 1, 1, ctypes.byref(w),
                                                    ctypes.byref(res), None, ctypes.byref(err)),
                       err)


def test_prefix_options_refused_alike(ctx):
    """Both shared-prefix options at once: the library's message, as the CLI's."""
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", usage="server")
    with pytest.raises(llmstep.Error, match="one of them"):
        d.serve(concurrency=4, prefix_tokens=64, distinct_prompts=10)
    if os.path.exists(CLI):
        out = subprocess.run([CLI, "sweep", "--kind", "serving", "--model", "llama-3.1-8b",
                              "--hw", "h100-sxm", "--prompt-tokens", "100", "--output-tokens",
                              "10", "--prefix-tokens", "64", "--distinct-prompts", "10"],
                             capture_output=True, text=True)
        assert out.returncode != 0 and "one of them" in out.stderr


@pytest.mark.parametrize("loads,kind,percentile", [
    ([1, 8, 64], "concurrency", 90),
    ([2.0, 20.0], "request-rate", 50),
])
def test_serve_sweep_matches_the_cli(ctx, loads, kind, percentile):
    """Deployment.serve_sweep (one C call for all loads) returns, load by load, the TTFT and
    TPOT percentiles and the meets_slo verdict that `llmstep sweep --kind serving` prints for
    the same SLOs; an SLO that the heaviest load misses is missed there."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    want = cli_json("sweep", "--kind", "serving", "--model", "llama-3.1-8b", "--hw", "h100-sxm",
                    "--tp", "1", "--prompt-tokens", "1024", "--output-tokens", "128",
                    "--num-requests", "200", "--slo-ttft-ms", "200", "--slo-tpot-ms", "20",
                    "--slo-percentile", str(percentile),
                    "--" + kind, ",".join(str(x) for x in loads))["rows"]
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", usage="server")
    arg = {"concurrency" if kind == "concurrency" else "request_rate": loads}
    got = d.serve_sweep(**arg, prompt_tokens=1024, output_tokens=128, num_requests=200,
                        slo_ttft_s=0.2, slo_tpot_s=0.02, slo_percentile=percentile)
    assert list(got["load"]) == [float(x) for x in loads]
    assert len(want) == len(loads)
    p = "p%d" % percentile
    for i, row in enumerate(want):
        for key in ("ttft_s", "tpot_s", "e2e_s"):
            assert got[key + "_" + p][i] == pytest.approx(row[key][p], rel=1e-9), (key, i)
        assert bool(got["meets_slo"][i]) == row["meets_slo"], i
    if kind == "concurrency":
        assert got["meets_slo"][0] and not got["meets_slo"][-1]


def test_serve_sweep_releases_the_gil(ctx):
    """serve_sweep is one C call through ctypes.CDLL, which releases the GIL: another Python
    thread keeps running during it (a held GIL would stop it for the whole call), so threads can
    sweep deployments side by side. The results equal those of the same call made alone."""
    import threading
    import time
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", usage="server")
    arg = dict(concurrency=[256, 384, 512], prompt_tokens=1024, output_tokens=1024)
    t0 = time.monotonic()
    alone = d.serve_sweep(**arg)
    took = time.monotonic() - t0
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        while count[0] == 0:  # the spinning thread is running before the call
            time.sleep(0.001)
        before = count[0]
        got = d.serve_sweep(**arg)
        during = count[0] - before
    finally:
        stop.set()
        t.join()
    # The call takes a few hundred ms (took); with the GIL held the other thread would count
    # nothing during it, with it released it counts at every chance the OS gives it.
    assert during > 1000, (during, took)
    assert sorted(got) == sorted(alone) and "ttft_s_p90" in got, sorted(got)
    for key in got:
        a, b = np.asarray(got[key]), np.asarray(alone[key])
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), key


def test_serve_sweep_refuses_bad_loads(ctx):
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", usage="server")
    with pytest.raises(llmstep.Error, match="concurrency is a whole number"):
        d.serve_sweep(concurrency=[1.5])
    with pytest.raises(llmstep.Error, match="slo_percentile"):
        d.serve_sweep(concurrency=[1], slo_percentile=75)
    with pytest.raises(llmstep.Error, match="rate_per_s"):
        d.serve_sweep(request_rate=[float("nan")])


@pytest.mark.parametrize("kw,cli_args", [
    (dict(kind="decode", tp=[1, 2], batch=[1, 64], context=[1024, 8192], gpu_hour_usd=2.5,
          slo_tpot_s=0.01),
     ["--tp", "1,2", "--batch", "1,64", "--context", "1024,8192", "--gpu-hour-usd", "2.5",
      "--slo-tpot-ms", "10"]),
    (dict(kind="offline", tp=[1], batch=[4, 16], prompt_tokens=512, output_tokens=64),
     ["--kind", "offline", "--tp", "1", "--batch", "4,16", "--prompt-tokens", "512",
      "--output-tokens", "64"]),
    (dict(kind="serving", tp=[1], request_rate=[1.0, 4.0], prompt_tokens=256, output_tokens=32,
          num_requests=60),
     ["--kind", "serving", "--tp", "1", "--request-rate", "1,4", "--prompt-tokens", "256",
      "--output-tokens", "32", "--num-requests", "60"]),
])
def test_sweep_matches_the_cli(ctx, kw, cli_args):
    """llmstep.sweep returns the rows `llmstep sweep --format json` prints, in its order."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    models, hws = ["llama-3.1-8b", "llama-2-7b"], ["h100-sxm", "a100-sxm-80gb"]
    want = cli_json("sweep", "--model", ",".join(models), "--hw", ",".join(hws),
                    *cli_args)["rows"]
    got = ctx.sweep(models, hws, **kw)
    assert len(got["time_s"]) == len(want)
    for i, row in enumerate(want):
        assert got["model"][i] == row["model"] and got["hardware"][i] == row["hardware"]
        assert got["status"][i] == row["status"] and bool(got["fits"][i]) == row["fits"]
        assert bool(got["meets_slo"][i]) == row["meets_slo"]
        for key in ("time_s", "tpot_s", "ttft_s", "tokens_per_s", "cost_per_mtok_usd"):
            if key in row and not isinstance(row[key], dict):
                if row[key] is None:
                    assert np.isnan(got[key][i]), (key, i)
                else:
                    assert got[key][i] == pytest.approx(row[key], rel=1e-9), (key, i)
        if kw["kind"] == "serving":
            assert got["ttft_s_p90"][i] == pytest.approx(row["ttft_s"]["p90"], rel=1e-9)
    pd = pytest.importorskip("pandas")
    frame = llmstep.to_frame(got)
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(want)


def test_model_facts(ctx):
    """Llama-3.1-8B: 8.03e9 parameters (Meta's model card); KV bytes per token at 16 bits:
    2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131072."""
    info = ctx.model_info("llama-3.1-8b")
    assert info["params"] == pytest.approx(8.03e9, rel=0.01)
    assert info["kv_bytes_per_token_16bit"] == 131072.0
    n = ctx.n_loaded
    ctx.model_info("llama-3.1-8b")
    assert ctx.n_loaded == n  # loaded once


def test_grid_is_the_step(ctx):
    d = ctx.deploy("llama-3.1-8b", "h100-sxm")
    batches = np.array([1, 7, 64, 256])
    contexts = np.array([[128], [4096], [32768]])
    grid = d.step_grid(count=batches, context_tokens=contexts)
    assert grid.shape == (3, 4)
    for i, c in enumerate(contexts[:, 0]):
        for j, b in enumerate(batches):
            try:
                assert grid[i, j] == d.step([(int(b), 1, int(c))])["step_s"]
            except llmstep.Error as e:
                # A step whose KV cache does not fit: step() refuses it, the grid says NaN.
                assert "does not fit" in str(e) and np.isnan(grid[i, j])
    # 256 sequences of 32769 tokens hold 8.4 M KV tokens; an H100 holds about 0.44 M (27,403 blocks of 16).
    assert np.isnan(grid[2, 3]) and not np.isnan(grid[0, 3])
    prefill = d.step_grid(count=1, new_tokens=[512, 2048], context_tokens=0)
    assert prefill[1] > prefill[0] > 0.0
    # A decode step reads at least the 16.06e9 bytes of weights at the H100's 3.35e12 B/s.
    assert np.nanmin(grid) > 16.06e9 / 3.35e12


def test_step_ops_sum_to_the_roofline(ctx):
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", tp=2)
    r = d.step([(32, 1, 1024), (1, 512, 0)], ops=True)
    assert sum(op["time_s"] for op in r["ops"]) == pytest.approx(r["roofline_s"], rel=1e-9)
    assert any(op["name"] == "allreduce" and op["time_s"] > 0 for op in r["ops"])


def test_capacity_rule(ctx):
    """min(max_num_seqs, floor(kv_blocks / ceil(C / block_size)))."""
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", usage="server")
    info = d.info
    cap = d.capacity(1152)
    per_seq = -(-1152 // info["block_size"])
    assert cap["max_seqs_at_context"] == min(info["max_num_seqs"],
                                             info["kv_blocks"] // per_seq)


def test_batch(ctx):
    d = ctx.deploy("llama-3.1-8b", "h100-sxm")
    r = d.batch(8, 1024, 128)
    assert r["n_prefill_steps"] + r["n_decode_steps"] == r["n_steps"]
    assert r["latency_s"] > 127 * 16.06e9 / 3.35e12


def test_errors_name_the_problem(ctx):
    with pytest.raises(llmstep.Error, match="no-such-model"):
        ctx.deploy("no-such-model", "h100-sxm")
    with pytest.raises(llmstep.Error, match="model_misspelled.json:.*num_hidden_layer"):
        ctx.model_info(os.path.join(SRC, "tests", "data", "model_misspelled.json"))
    with pytest.raises(llmstep.Error, match="does not fit"):
        ctx.deploy("llama-3.1-70b", "h100-sxm", tp=1)
    with pytest.raises(llmstep.Error, match="does not divide"):
        ctx.deploy("llama-3.1-8b", "h100-sxm", tp=3)
    d = ctx.deploy("llama-3.1-8b", "h100-sxm")
    with pytest.raises(llmstep.Error, match="point 1"):
        d.step_grid(count=[1, 1], context_tokens=[10, 10**7])
    with pytest.raises(llmstep.Error, match="exactly one"):
        d.serve(concurrency=4, request_rate=2.0)
    with pytest.raises(llmstep.Error, match="concurrency"):
        d.serve(concurrency=0)


def test_numbers_are_never_silently_changed(ctx):
    """Integers reach the C library as given or not at all (issue 27): a fractional tp is a
    TypeError (it was truncated to 2), 2**64 + 100 an OverflowError (it wrapped to 100)."""
    with pytest.raises(TypeError, match="tp: expected an integer"):
        ctx.deploy("llama-3.1-8b", "h100-sxm", tp=2.9)
    with pytest.raises(TypeError, match="tp: expected an integer"):
        ctx.deploy("llama-3.1-8b", "h100-sxm", tp="2")
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", tp=2.0)  # an integral float is that integer
    assert d.info["tp"] == 2
    with pytest.raises(OverflowError, match="context_tokens"):
        d.capacity(2**64 + 100)
    with pytest.raises(OverflowError, match="seed"):
        d.serve(concurrency=4, seed=-1)
    import numpy as np
    assert d.capacity(np.int64(1000))["max_seqs_at_context"] > 0


def test_arrays_are_never_silently_changed(ctx):
    """The same rule for arrays (issue 27): a sweep's batch [2.5] was truncated to 2, and a
    grid context nan became -2**63 (refused in C with a message about the group, after a NumPy
    warning); now a TypeError names the argument. Integral floats and NumPy integers pass."""
    with pytest.raises(TypeError, match="batch: expected integers, got 2.5"):
        ctx.sweep(["llama-3.1-8b"], ["h100-sxm"], batch=[2.5], context=[128])
    with pytest.raises(OverflowError, match="context"):
        ctx.sweep(["llama-3.1-8b"], ["h100-sxm"], batch=[1], context=[2**70])
    d = ctx.deploy("llama-3.1-8b", "h100-sxm")
    with pytest.raises(TypeError, match="context_tokens: expected integers, got nan"):
        d.step_grid([1], [float("nan")])
    import numpy as np
    a = d.step_grid([1.0, 2.0], np.array([128, 256], dtype=np.int32))
    assert (a == d.step_grid([1, 2], [128, 256])).all()


def test_strings_and_numbers_are_checked(ctx, tmp_path):
    """Held-out hostile cases (issue 27): a NUL inside a string was cut there by C
    ('h100-sxm\\0x' opened h100-sxm); a NumPy uint64 2**64-1 wrapped to -1; strings passed
    as floats (request_rate='5'); emits="no" was True; a sweep took a negative price or SLO
    and a level no band has (its bands silently NaN)."""
    import numpy as np
    with pytest.raises(ValueError, match="NUL"):
        ctx.deploy("llama-3.1-8b", "h100-sxm\0anything")
    with pytest.raises(ValueError, match="NUL"):
        ctx.sweep("llama-3.1-8b\0x", "h100-sxm", tp=[1], batch=[1], context=[128])
    d = ctx.deploy("llama-3.1-8b", "h100-sxm")
    with pytest.raises(ValueError, match="NUL"):
        d.band("tpot\0x")
    with pytest.raises(OverflowError, match="count"):
        d.step_grid(np.array([2**64 - 1], dtype=np.uint64), [128])
    with pytest.raises(OverflowError, match="batch"):
        ctx.sweep("llama-3.1-8b", "h100-sxm", tp=[1], batch=np.array([2**64 - 1], np.uint64),
                  context=[128])
    with pytest.raises(TypeError, match="request_rate: expected a number"):
        d.serve(request_rate="5", prompt_tokens=16, output_tokens=4)
    with pytest.raises(TypeError, match="burstiness"):
        d.serve(request_rate=5, burstiness="2", prompt_tokens=16, output_tokens=4)
    with pytest.raises(TypeError, match="range_ratio"):
        d.serve(concurrency=2, range_ratio="0.5", prompt_tokens=16, output_tokens=4)
    with pytest.raises(TypeError, match="concurrency: expected numbers"):
        d.serve_sweep(concurrency=["4"], prompt_tokens=16, output_tokens=4)
    with pytest.raises(TypeError, match="emits"):
        d.step([(1, 1, 100, "no")])
    with pytest.raises(ValueError, match="emits"):
        d.step([(1, 1, 100, 2)])
    assert d.step([(1, 1, 100, False)])["step_s"] > 0  # a bool is 0 or 1
    for kw, what in ((dict(gpu_hour_usd=-1), "gpu_hour_usd"), (dict(slo_tpot_s=-1), "slo_tpot_s"),
                     (dict(slo_ttft_s=float("nan")), "slo_ttft_s")):
        with pytest.raises(ValueError, match=what):
            ctx.sweep("llama-3.1-8b", "h100-sxm", tp=[1], batch=[1], context=[128], **kw)
    # Switches are True/False or 1/0 (bool("no") was True; a dict lookup raised KeyError).
    for kw in (dict(chunked_prefill="yes"), dict(ep="no"), dict(ignore_memory="no")):
        with pytest.raises(TypeError):
            ctx.deploy("llama-3.1-8b", "h100-sxm", **kw)
    with pytest.raises(ValueError, match="chunked_prefill"):
        ctx.sweep("llama-3.1-8b", "h100-sxm", tp=[1], batch=[1], context=[16], chunked_prefill=2)
    with pytest.raises(TypeError, match="gpu_memory_utilization"):
        ctx.deploy("llama-3.1-8b", "h100-sxm", gpu_memory_utilization="0.5")
    # The library's checks come before the rows are allocated (4.9 M TP values held 3.4 GB
    # before the library refused the axis).
    with pytest.raises(llmstep.Error, match="tp: expected 1 to 4096 values"):
        ctx.sweep("llama-3.1-8b", "h100-sxm", tp=[1] * 5000, batch=[1], context=[1])
    cal = os.path.join(SRC, "tests", "data", "calib_band_decode.json")
    for level in (85, 0):
        with pytest.raises(llmstep.Error, match="expected 10, 20, ..., 100"):
            ctx.sweep("llama-3.1-8b", "h100-sxm", tp=[1], batch=[1], context=[128],
                      calibration=cal, interval=level)


def test_one_string_is_one_item(ctx):
    """A string where a list is taken is one item, not its characters: select="hardware=..."
    said "--select 'h': no '='", and sweep("llama-3.1-8b", ...) asked for models 'l', 'l', ..."""
    meas = os.path.join(SRC, "measurements", "example.jsonl")
    one = ctx.validate(meas, select="hardware=h100-sxm")
    assert one["n_rows"] == ctx.validate(meas, select=["hardware=h100-sxm"])["n_rows"]
    rows = ctx.sweep("llama-3.1-8b", "h100-sxm", tp=[1], batch=[1], context=[128])
    assert list(rows["model"]) == ["llama-3.1-8b"]


def test_sweep_defaults_are_the_clis(ctx):
    """Axes not given take the CLI's defaults (one home: SIM_SWEEP_DEFAULT_*, reached through
    llmstep_sweep_default_axis): TP 1, 2, 4, 8, batch 1:256 and context 2048 for a decode
    sweep; concurrency 1:256 for a serving one. It defaulted to TP 1 only."""
    got = ctx.sweep("llama-3.1-8b", "h100-sxm")
    want = cli_json("sweep", "--model", "llama-3.1-8b", "--hw", "h100-sxm")["rows"]
    assert len(want) == 4 * 9
    assert list(got["tp"]) == [r["tp"] for r in want]
    assert list(got["batch"]) == [r["batch"] for r in want]
    assert list(got["context_tokens"]) == [r["context_tokens"] for r in want] == [2048] * 36
    assert list(got["time_s"]) == [r["time_s"] for r in want]
    srv = ctx.sweep("llama-3.1-8b", "h100-sxm", kind="serving", tp=[1], prompt_tokens=128,
                    output_tokens=16, num_requests=8)
    assert list(srv["concurrency"]) == [1 << i for i in range(9)]


def test_serve_client_path_matches_the_cli(ctx):
    """A calibration with a client path (the shipped H200 file: client_path_s fitted from TTFT
    rows; docs/serving.md, "The client path") gives by llmstep.serve the TTFT and E2E that
    `llmstep serve` prints, the client path in both, and the TPOT of the engine alone."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    cal = os.path.join(SRC, "calibrations", "h200-sxm-vllm-v1.json")
    want = cli_json("serve", "--model", "llama-3.1-8b", "--hw", "h200-sxm", "--calibration", cal,
                    "--concurrency", "8", "--prompt-tokens", "1024", "--output-tokens", "64")
    assert want["client_path_s"] > 0.0
    d = ctx.deploy("llama-3.1-8b", "h200-sxm", calibration=cal, usage="server")
    got = d.serve(concurrency=8, prompt_tokens=1024, output_tokens=64)
    for key in ("ttft_s", "tpot_s", "e2e_s"):
        for stat in ("mean", "p50", "p90", "p99"):
            assert got[key][stat] == pytest.approx(want[key][stat], rel=1e-9), (key, stat)


def test_bands_match_the_cli(ctx):
    """The band of every prediction (issue 28) is the CLI's --interval band, to the bit: a
    decode step (predict), an offline batch (latency, the shipped H100 calibration) and a
    serving run (serve: TPOT only, TTFT and E2E None), from llmstep_deploy_band."""
    cal = os.path.join(SRC, "tests", "data", "calib_band_decode.json")
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", calibration=cal)
    got = d.step([(32, 1, 1024)], interval=80)["band"]
    want = cli_json("predict", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--decode",
                    "32x1024", "--calibration", cal, "--interval", "80")["band"]
    for k in ("lo_s", "hi_s", "lo_frac", "hi_frac", "family", "level_pct"):
        assert got[k] == want[k], k
    assert got["n_rows"] == want["held_out_rows"] == 21
    assert (got["lo_frac"], got["hi_frac"]) == (0.92, 1.08)  # the file's quantiles 2 and 18
    s = d.serve(concurrency=8, prompt_tokens=512, output_tokens=64, interval=80)["band"]
    w = cli_json("serve", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--calibration", cal,
                 "--concurrency", "8", "--prompt-tokens", "512", "--output-tokens", "64",
                 "--interval", "80")["band"]
    assert s["ttft_s"] is None and w["ttft_s"] is None and s["e2e_s"] is None
    assert s["tpot_s"]["lo_s"] == w["tpot_s"]["lo_s"] and s["tpot_s"]["hi_s"] == w["tpot_s"]["hi_s"]
    h = ctx.deploy("llama-2-7b", "h100-sxm", engine="vllm-v0", calibration="h100-sxm")
    b = h.batch(16, 512, 512, interval=80)["band"]
    w = cli_json("latency", "--model", "llama-2-7b", "--hw", "h100-sxm", "--engine", "vllm-v0",
                 "--batch", "16", "--prompt-tokens", "512", "--output-tokens", "512",
                 "--calibration", "h100-sxm", "--interval", "80")["band"]
    assert (b["lo_s"], b["hi_s"]) == (w["lo_s"], w["hi_s"])
    with pytest.raises(llmstep.Error, match="no band for prefill predictions"):
        d.step([(1, 1024, 0)], interval=80)
    with pytest.raises(llmstep.Error, match="uncalibrated"):
        ctx.deploy("llama-3.1-8b", "h100-sxm").band("decode")
    with pytest.raises(llmstep.Error, match="unknown family 'decodes'"):
        d.band("decodes")


def test_sweep_bands_match_the_cli(ctx):
    """A sweep's --interval columns from Python equal the CLI's JSON rows (one band, one
    home: llmstep_deploy_band and sim_calib_band_get read the same quantiles)."""
    cal = os.path.join(SRC, "tests", "data", "calib_band_decode.json")
    got = ctx.sweep("llama-3.1-8b", "h100-sxm", tp=(1, 2), batch=[1, 32], context=[1024],
                    calibration=cal, interval=80)
    want = cli_json("sweep", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--tp", "1,2",
                    "--batch", "1,32", "--context", "1024", "--calibration", cal,
                    "--interval", "80")["rows"]
    assert [r["band"]["time_s"]["lo_s"] for r in want] == list(got["band_lo_s"])
    assert [r["band"]["time_s"]["hi_s"] for r in want] == list(got["band_hi_s"])
    srv = ctx.sweep("llama-3.1-8b", "h100-sxm", kind="serving", concurrency=[8],
                    prompt_tokens=512, output_tokens=64, calibration=cal, interval=80)
    w = cli_json("sweep", "--kind", "serving", "--model", "llama-3.1-8b", "--hw", "h100-sxm",
                 "--concurrency", "8", "--prompt-tokens", "512", "--output-tokens", "64",
                 "--calibration", cal, "--interval", "80")["rows"][0]["band"]
    assert srv["tpot_mean_lo_s"][0] == w["tpot_s"]["lo_s"] and np.isnan(srv["ttft_mean_lo_s"][0])


def test_ttft_band_of_the_runs_regime(ctx):
    """A serving run's TTFT band is of its regime (issue 28): "ttft" when the TTFT is mostly
    the prefill, "ttft_queued" when the mean wait before the first step is at least half the
    mean TTFT; the library names the family (llmstep_ttft_band_family), and serve, sweep and
    the CLI agree to the bit. tests/data/calib_band_ttft.json: ttft 80% = 0.82-0.98,
    ttft_queued 80% = 0.68-1.32 (hand-written quantiles)."""
    cal = os.path.join(SRC, "tests", "data", "calib_band_ttft.json")
    d = ctx.deploy("llama-3.1-8b", "h100-sxm", calibration=cal)
    for conc, fam, fracs in ((1, "ttft", (0.82, 0.98)), (256, "ttft_queued", (0.68, 1.32))):
        got = d.serve(concurrency=conc, prompt_tokens=2048, output_tokens=64, interval=80)
        want = cli_json("serve", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--calibration",
                        cal, "--concurrency", str(conc), "--prompt-tokens", "2048",
                        "--output-tokens", "64", "--interval", "80")
        assert got["ttft_queued"] is want["ttft_queued"] is (fam == "ttft_queued")
        assert got["queue_s"] == want["queue_s"]
        assert got["ttft_queued"] == (got["queue_s"]["mean"] >= 0.5 * got["ttft_s"]["mean"])
        b, w = got["band"]["ttft_s"], want["band"]["ttft_s"]
        assert (b["family"], b["lo_frac"], b["hi_frac"]) == (fam,) + fracs
        assert (b["lo_s"], b["hi_s"]) == (w["lo_s"], w["hi_s"])
    srv = ctx.sweep("llama-3.1-8b", "h100-sxm", kind="serving", tp=[1], concurrency=[1, 256],
                    prompt_tokens=2048, output_tokens=64, calibration=cal, interval=80)
    rows = cli_json("sweep", "--kind", "serving", "--model", "llama-3.1-8b", "--hw", "h100-sxm",
                    "--tp", "1", "--concurrency", "1,256", "--prompt-tokens", "2048", "--output-tokens", "64",
                    "--calibration", cal, "--interval", "80")["rows"]
    assert list(srv["ttft_queued"]) == [r["ttft_queued"] for r in rows] == [False, True]
    assert list(srv["queue_s_mean"]) == [r["queue_s_mean"] for r in rows]
    assert list(srv["ttft_mean_lo_s"]) == [r["band"]["ttft_s"]["lo_s"] for r in rows]
    assert list(srv["ttft_mean_hi_s"]) == [r["band"]["ttft_s"]["hi_s"] for r in rows]


def test_calibrate_never_replaces_its_measurements(ctx, tmp_path):
    """The library refuses, as calibrate --out does, a calibration path that is one of the
    measurement files (it overwrote the rows)."""
    import shutil
    rows = tmp_path / "rows.jsonl"
    shutil.copy(os.path.join(SRC, "measurements", "example.jsonl"), rows)
    before = rows.read_bytes()
    with pytest.raises(llmstep.Error, match="is the measurement file"):
        ctx.calibrate(str(rows), out=str(rows), select=["hardware=h100-sxm"])
    assert rows.read_bytes() == before
    # Nor the engine profile it loads (sim_meas_output_clear, the check calibrate --out makes).
    eng = tmp_path / "eng.json"
    shutil.copy(os.path.join(SRC, "engines", "vllm-v0.json"), eng)
    engine_before = eng.read_bytes()
    with pytest.raises(llmstep.Error, match="is the input"):
        ctx.calibrate(str(rows), out=str(eng), select=["hardware=h100-sxm"], engine=str(eng))
    assert eng.read_bytes() == engine_before


def test_to_frame():
    pd = pytest.importorskip("pandas")
    d = llmstep.deploy("llama-3.1-8b", "h100-sxm", usage="server")
    df = llmstep.to_frame([d.serve(concurrency=c, num_requests=50) for c in (4, 8)])
    assert isinstance(df, pd.DataFrame)
    assert list(df["ttft_s_p90"] > 0) == [True, True]


def test_validate_and_calibrate_match_the_cli(ctx):
    """Context.validate and .calibrate give the numbers `llmstep validate/calibrate` print, for
    a file and for the same rows given as dicts; holdout predicts every row once."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    path = os.path.join(SRC, "measurements", "example.jsonl")
    cal = os.path.join(SRC, "calibrations", "h100-sxm.json")
    want = cli_json("validate", "--measurements", path, "--select", "hardware=h100-sxm",
                    "--calibration", cal)
    got = ctx.validate(path, select=["hardware=h100-sxm"], calibration=cal)
    assert got["n_rows"] == want["n_rows"]
    assert got["mape_pct"] == pytest.approx(want["mape_pct"], rel=1e-12)
    assert list(got["predicted_s"]) == pytest.approx([r["predicted_s"] for r in want["rows"]],
                                                     rel=1e-12)
    rows = [json.loads(line) for line in open(path) if line.strip() and line[0] != "#"]
    from_dicts = ctx.validate(rows, select=["hardware=h100-sxm"], calibration=cal)
    assert from_dicts["mape_pct"] == got["mape_pct"]
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "c.json")
        want_fit = cli_json("calibrate", "--measurements", path, "--select",
                            "hardware=h100-sxm", "--out", out)
        # The library writes the file the CLI writes, but for the command that made it.
        mine = os.path.join(tmp, "mine.json")
        ctx.calibrate(path, out=mine, select=["hardware=h100-sxm"])
        a, b = json.load(open(out)), json.load(open(mine))
        assert a.pop("command").startswith("llmstep calibrate")
        assert b.pop("command").startswith("llmstep_calibrate_write")
        assert a == b
        again = ctx.validate(path, select=["hardware=h100-sxm"], calibration=mine)
        assert again["alpha"] == a["alpha"]
        with pytest.raises(llmstep.Error, match="not a regular file"):
            ctx.calibrate(path, out=tmp, select=["hardware=h100-sxm"])
    fit = ctx.calibrate(path, select=["hardware=h100-sxm"])
    assert fit["alpha"] == pytest.approx(want_fit["alpha"], rel=1e-12)
    assert fit["beta_s"] == pytest.approx(want_fit["beta_s"], rel=1e-12, abs=1e-15)
    assert fit["fit"]["mape_pct"] == pytest.approx(want_fit["mape_pct"], rel=1e-12)
    held = ctx.holdout(path, "model", select=["hardware=h100-sxm"])
    assert held["n_rows"] == got["n_rows"]
    with pytest.raises(llmstep.Error, match="no row matches"):
        ctx.validate(path, select=["hardware=b200"])
    # Row dicts go to the library as text in memory; a bad one is named by its place.
    with pytest.raises(llmstep.Error, match=r"<rows>:2:.*measured_s"):
        ctx.validate([rows[0], dict(rows[1], measured_s="fast")])


def test_rows_set_aside_match_the_cli(ctx, tmp_path):
    """The rows the CLI keeps out by default are kept out by the library too: rows whose
    run.assumed names a field the prediction uses (neither fitted nor in the errors), and rows
    with a per-call constant (in the errors, not fitted)."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    rk = os.path.join(SRC, "tests", "data", "meas", "run_keys.jsonl")
    want = cli_json("validate", "--measurements", rk)
    got = ctx.validate(rk)
    assert want["n_rows"] == 2 and got["n_rows"] == 2
    assert got["mape_pct"] == pytest.approx(want["mape_pct"], rel=1e-12)
    want_fit = cli_json("calibrate", "--measurements", rk, "--out", str(tmp_path / "rk.json"))
    assert ctx.calibrate(rk)["alpha"] == pytest.approx(want_fit["alpha"], rel=1e-12)
    # A batch-1 series of lengths 128..512 measured as 0.9 s + 4 ms a token: its intercept,
    # 0.9 s, is 64% of its shortest run (1.412 s), so it is not fitted; batch 8 is.
    def row(b, n, t):
        return {"id": f"cc-b{b}-{n}", "source": "test", "hardware": "h100-sxm",
                "model": "llama-3.1-8b", "tp": 1, "kind": "offline_batch", "batch": b,
                "prompt_tokens": n, "output_tokens": n, "measured_s": t}
    rows = [row(1, n, 0.9 + 0.004 * n) for n in (128, 256, 512)]
    rows += [row(8, n, 0.0045 * n) for n in (128, 256, 512)]
    path = tmp_path / "cc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    want_fit = cli_json("calibrate", "--measurements", str(path), "--out",
                        str(tmp_path / "cc.json"))
    assert want_fit["n_rows"] == 3
    fit = ctx.calibrate(rows)
    assert fit["n_rows"] == 3
    assert fit["alpha"] == pytest.approx(want_fit["alpha"], rel=1e-12)
    assert ctx.validate(rows)["n_rows"] == 6


def test_validate_scheduler_rule_matches_the_cli(ctx):
    """scheduler_rule="aic-benchmark" predicts a closed-loop serving row as
    `llmstep validate --scheduler-rule aic-benchmark` does, and not as the engine defaults do
    (the rule's budget, 64 + 1024 + 1500 = 2588 tokens, is not vLLM 0.12's 8192)."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    path = os.path.join(SRC, "tests", "data", "meas", "serving.jsonl")
    sel = ["metric=ttft_mean"]
    want = cli_json("validate", "--measurements", path, "--select", sel[0],
                    "--scheduler-rule", "aic-benchmark")
    got = ctx.validate(path, select=sel, scheduler_rule="aic-benchmark")
    assert got["n_rows"] == want["n_rows"] == 1
    assert got["predicted_s"][0] == pytest.approx(want["rows"][0]["predicted_s"], rel=1e-12)
    default = ctx.validate(path, select=sel)
    assert default["predicted_s"][0] != pytest.approx(got["predicted_s"][0], rel=1e-2)
    with pytest.raises(llmstep.Error, match="scheduler_rule.*engine-defaults or aic-benchmark"):
        ctx.validate(path, select=sel, scheduler_rule="aic")


@pytest.mark.parametrize("layout,cli_args", [
    (dict(tp=8, pp=2), ["--tp", "8", "--pp", "2"]),
    (dict(tp=1, dp=8, ep=True), ["--tp", "1", "--dp", "8", "--ep"]),
])
def test_layouts_beyond_tp_match_the_cli(ctx, layout, cli_args):
    """deploy(pp=, dp=, ep=) serves as `llmstep serve --pp/--dp/--ep` does, and its info says
    the layout."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    model = "llama-3.1-405b" if layout.get("pp") else "qwen3-30b-a3b"
    extra = ["--max-model-len", "8192"] if layout.get("pp") else []
    want = cli_json("serve", "--model", model, "--hw", "h100-sxm", *cli_args, *extra,
                    "--concurrency", "32", "--prompt-tokens", "1024", "--output-tokens", "64")
    d = ctx.deploy(model, "h100-sxm", usage="server",
                   max_model_len=8192 if layout.get("pp") else None, **layout)
    info = d.info
    assert (info["pp"], info["dp"], info["ep"]) == (layout.get("pp", 1), layout.get("dp", 1),
                                                    int(layout.get("ep", False)))
    got = d.serve(concurrency=32, prompt_tokens=1024, output_tokens=64)
    for key in ("ttft_s", "tpot_s", "e2e_s"):
        assert got[key]["mean"] == pytest.approx(want[key]["mean"], rel=1e-9), key
    assert got["request_throughput_per_s"] == pytest.approx(want["request_throughput_per_s"],
                                                            rel=1e-9)


def test_layout_refusals(ctx):
    """EP on a dense model and more stages than layers are the C library's errors."""
    with pytest.raises(llmstep.Error):
        ctx.deploy("llama-3.1-8b", "h100-sxm", ep=True)
    with pytest.raises(llmstep.Error):
        ctx.deploy("llama-2-7b", "h100-sxm", pp=33)


def test_sweep_layouts_match_the_cli(ctx):
    """llmstep.sweep(pp=, dp=, ep=) returns the rows, layouts and numbers of `llmstep sweep
    --pp --dp --ep --format json`, and llmstep_sweep_size counts the crossed layouts."""
    if not os.path.exists(CLI):
        pytest.skip(f"CLI not built at {CLI}")
    want = cli_json("sweep", "--model", "qwen3-30b-a3b", "--hw", "h100-sxm", "--tp", "1,2",
                    "--dp", "1,4", "--ep", "--batch", "8,64", "--context", "512")["rows"]
    got = ctx.sweep(["qwen3-30b-a3b"], ["h100-sxm"], tp=[1, 2], dp=[1, 4], ep=True,
                    batch=[8, 64], context=[512])
    assert len(want) == 8 and len(got["time_s"]) == 8
    for i, row in enumerate(want):
        assert (got["tp"][i], got["dp"][i], bool(got["ep"][i])) == (row["tp"], row["dp"],
                                                                    row["ep"])
        assert got["status"][i] == row["status"]
        assert got["tokens_per_s_per_gpu"][i] == pytest.approx(row["tokens_per_s_per_gpu"],
                                                               rel=1e-9)


def test_sweep_bounded_before_allocation(ctx):
    """A sweep larger than max_rows is refused with the row count, before any row is computed
    or allocated (7 M rows would need 2.3 GB)."""
    with pytest.raises(llmstep.Error, match=r"1048576 rows .* exceed max_rows = 1000"):
        ctx.sweep("llama-3.1-8b", "h100-sxm", tp=[1, 2, 4, 8], batch=list(range(1, 257)),
                  context=[64 * (i + 1) for i in range(1024)], max_rows=1000)


def test_sweep_progress_and_cancellation(ctx):
    """progress(done, total) comes about every 1% of the rows, in order, ending at the total,
    and the rows are those of the sweep without it. An exception raised by it (as Ctrl-C's
    KeyboardInterrupt would be) stops the C loop at that row and is raised from sweep."""
    arg = dict(tp=[1, 2], batch=list(range(1, 101)), context=[512, 1024])
    calls = []
    got = ctx.sweep("llama-3.1-8b", "h100-sxm", progress=lambda d, t: calls.append((d, t)), **arg)
    plain = ctx.sweep("llama-3.1-8b", "h100-sxm", **arg)
    assert calls[-1] == (400, 400) and len(calls) == 100
    assert all(a[0] < b[0] for a, b in zip(calls, calls[1:]))
    assert np.array_equal(got["time_s"], plain["time_s"])

    class Stop(Exception):
        pass

    seen = []

    def stop_at_ten_percent(done, total):
        seen.append(done)
        if done >= total // 10:
            raise Stop(done)

    with pytest.raises(Stop):
        ctx.sweep("llama-3.1-8b", "h100-sxm", progress=stop_at_ten_percent, **arg)
    # The C loop stopped: no row after the one that raised called back again.
    assert seen[-1] == 40 and len(seen) == 10, seen
    with pytest.raises(TypeError, match="progress"):
        ctx.sweep("llama-3.1-8b", "h100-sxm", progress="yes", **arg)


@pytest.mark.parametrize("call", [
    "ctx.sweep('llama-3.1-8b', 'h100-sxm', kind='serving', tp=[1, 2, 4, 8], "
    "concurrency=list(range(1, 257)), prompt_tokens=2048, output_tokens=2048, seeds=4, "
    "progress=lambda d, t: None)",
    "ctx.sweep('llama-3.1-8b', 'h100-sxm', kind='serving', tp=[1, 2, 4, 8], "
    "concurrency=list(range(1, 257)), prompt_tokens=2048, output_tokens=2048, seeds=4)",
    "ctx.deploy('llama-3.1-8b', 'h100-sxm', usage='server').serve_sweep("
    "concurrency=list(range(1, 513)), prompt_tokens=2048, output_tokens=2048)",
    "ctx.sweep(['llama-3.1-8b', 'qwen3-32b', 'llama-3.1-70b'], 'h100-sxm', kind='decode', "
    "tp=[1, 2, 4, 8], batch=list(range(1, 257)), context=list(range(128, 128 * 257, 128)))",
], ids=["sweep-progress", "sweep", "serve_sweep", "decode-sweep"])
def test_ctrl_c_stops_the_c_loop(tmp_path, call):
    """Ctrl-C (SIGINT) during a long serving sweep, with or without progress, or a long
    serve_sweep: the C loop stops at the next row (load) and KeyboardInterrupt comes out, long
    before the sweep would have ended (5-15 s on the 2-core development machine; it is
    interrupted after 0.5 s). A decode sweep of 786,432 rows without progress (about 2 s) stops
    between two of its C calls."""
    import signal
    import sys
    import time
    script = tmp_path / "long_sweep.py"
    script.write_text(
        "import sys, llmstep\n"
        "ctx = llmstep.Context(sys.argv[1])\n"
        "print('started', flush=True)\n"
        f"rows = {call}\n"
        "print('finished', flush=True)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
    p = subprocess.Popen([sys.executable, str(script), os.environ.get("LLMSTEP_DATA_DIR", SRC)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "started"
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    waited = time.monotonic() - t0
    assert "KeyboardInterrupt" in err and "finished" not in out, (out, err)
    assert waited < 5.0, waited


@pytest.mark.parametrize("kind", ["decode", "prefill"])
def test_chunked_sweep_gives_the_rows_of_one_call(ctx, monkeypatch, kind):
    """A decode or prefill sweep without progress runs as C calls along the batch axis (so
    Ctrl-C is seen between them): the same arrays as one call (the progress path), bit for bit,
    with chunks that do not divide the batch axis."""
    arg = dict(kind=kind, tp=[1, 2], batch=list(range(1, 41)), context=[128, 512, 2048, 8192])
    models = ["llama-3.1-8b", "qwen3-32b"]
    one = ctx.sweep(models, ["h100-sxm", "a100-sxm-80gb"], progress=lambda d, t: None, **arg)
    # 7 batches a call: 2 models x 2 GPUs x 2 TPs x 4 contexts = 32 rows a batch
    monkeypatch.setattr(llmstep.Context, "_SWEEP_CHUNK_ROWS", 7 * 32)
    calls = []
    real = llmstep._lib.lib.llmstep_sweep
    monkeypatch.setattr(llmstep._lib.lib, "llmstep_sweep",
                        lambda *a: calls.append(1) or real(*a), raising=True)
    chunked = ctx.sweep(models, ["h100-sxm", "a100-sxm-80gb"], **arg)
    assert len(calls) == 6  # ceil(40 / 7)
    for key in one:
        a, b = np.asarray(one[key]), np.asarray(chunked[key])
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), key


def test_serving_sweep_threads_give_the_same_rows(ctx):
    """sweep(jobs=N) simulates the serving points on N threads (the default: the online
    cores, as the CLI): the same arrays as one thread, bit for bit; jobs out of range refused."""
    arg = dict(kind="serving", tp=[1, 2], concurrency=[1, 8, 32, 128], prompt_tokens=512,
               output_tokens=64)
    one = ctx.sweep(["llama-3.1-8b", "qwen3-32b"], "h100-sxm", jobs=1, **arg)
    many = ctx.sweep(["llama-3.1-8b", "qwen3-32b"], "h100-sxm", jobs=3, **arg)
    default = ctx.sweep(["llama-3.1-8b", "qwen3-32b"], "h100-sxm", **arg)
    for key in one:
        for other in (many, default):
            a, b = np.asarray(one[key]), np.asarray(other[key])
            assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), key
    with pytest.raises(OverflowError, match="jobs"):
        ctx.sweep("llama-3.1-8b", "h100-sxm", jobs=300, **arg)
