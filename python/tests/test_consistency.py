"""One deployment, one answer: the same question asked through the CLI, the C library (through
this package's ctypes calls: Python is the C API here) and Python gives the same number, bit for
bit where both print full precision, with and without a calibration, on the V0 and V1 engines.

The oracle is the other path, not a stored number: each question is asked twice (or three
times) and the answers must agree. The questions (issue "one deployment, one answer"):
  1. a step's time (predict / Deployment.step), uncalibrated V1, a V0 calibration, a V1 one
  2. a decode sweep row's time (sweep / predict)
  3. an offline batch's latency (latency / Deployment.batch)
  4. serving TTFT p90 and 5. TPOT p90 (serve / Deployment.serve / sweep --kind serving)
  6. KV capacity (capacity / Deployment.capacity)
  7. the best layout under SLOs (sweep --best / sweep(best=True) / serve at every point)
  8. the engine a calibration implies (predict, sweep's header, Deployment.info)
"""
import csv
import io
import json
import os
import subprocess

import pytest

import llmstep

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CLI = os.environ.get("LLMSTEP_CLI", os.path.join(SRC, "build", "llmstep"))
CAL_V0 = "calibrations/h100-sxm.json"  # vllm-v0 (Argonne offline batches)
CAL_V1 = "calibrations/h100-sxm-v1.json"  # vllm-v1-0.12 (aiconfigurator serving runs)


def run(*args, fmt="json"):
    out = subprocess.run([CLI, *args] + (["--format", fmt] if fmt else []), cwd=SRC,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout) if fmt == "json" else out.stdout


def deploy(**kw):
    cal = kw.pop("calibration", None)
    return llmstep.deploy("llama-3.1-8b", "h100-sxm",
                          calibration=os.path.join(SRC, cal) if cal else None, **kw)


@pytest.mark.parametrize("cal", [None, CAL_V0, CAL_V1])
def test_step_time(cal):
    args = ["predict", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--tp", "2",
            "--decode", "64x2048"] + (["--calibration", cal] if cal else [])
    p = run(*args)
    d = deploy(tp=2, calibration=cal)
    s = d.step([(64, 1, 2048)])
    assert p["step_time_s"] == s["step_s"]
    assert p["host_time_s"] == s["host_s"]
    # The engine: the calibration's, else vllm-v1 (question 8).
    assert p["engine"] == d.info["engine_id"]
    assert p["engine"] == {None: "vllm-v1", CAL_V0: "vllm-v0", CAL_V1: "vllm-v1-0.12"}[cal]


@pytest.mark.parametrize("cal", [None, CAL_V0, CAL_V1])
def test_decode_sweep_row_is_predict(cal):
    extra = ["--calibration", cal] if cal else []
    rows = list(csv.DictReader(io.StringIO(run(
        "sweep", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--tp", "2", "--batch", "64",
        "--context", "2048", *extra, fmt="csv"))))
    p = run("predict", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--tp", "2", "--decode",
            "64x2048", *extra)
    # CSV writes seconds to 9 decimals (fastfmt); JSON and the library in full.
    assert float(rows[0]["time_s"]) == pytest.approx(p["step_time_s"], abs=1e-9)
    header = run("sweep", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--tp", "2", "--batch",
                 "64", "--context", "2048", *extra)
    assert header["engine"] == p["engine"]
    assert header["rows"][0]["time_s"] == p["step_time_s"]
    # The library's sweep: the same row, exactly.
    lib = llmstep.sweep("llama-3.1-8b", "h100-sxm", tp=[2], batch=[64], context=[2048],
                        calibration=os.path.join(SRC, cal) if cal else None)
    assert lib["time_s"][0] == p["step_time_s"]


@pytest.mark.parametrize("cal", [None, CAL_V0])
def test_offline_latency(cal):
    extra = ["--calibration", cal] if cal else []
    lat = run("latency", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--batch", "16",
              "--prompt-tokens", "1024", "--output-tokens", "256", *extra)
    b = deploy(calibration=cal).batch(16, 1024, 256)
    assert lat["latency_s"] == b["latency_s"]
    assert lat["engine"] == ("vllm-v0" if cal else "vllm-v1")


@pytest.mark.parametrize("cal", [None, CAL_V1])
def test_serving_ttft_tpot(cal):
    extra = ["--calibration", cal] if cal else []
    wl = ["--concurrency", "32", "--prompt-tokens", "1024", "--output-tokens", "128"]
    sv = run("serve", "--model", "qwen3-32b", "--hw", "h100-sxm", "--tp", "2", *wl, *extra)
    d = llmstep.deploy("qwen3-32b", "h100-sxm", tp=2, usage="server",
                       calibration=os.path.join(SRC, cal) if cal else None)
    py = d.serve(concurrency=32, prompt_tokens=1024, output_tokens=128)
    for k in ("ttft_s", "tpot_s"):
        assert sv[k]["p90"] == py[k]["p90"], k
    rows = list(csv.DictReader(io.StringIO(run(
        "sweep", "--kind", "serving", "--model", "qwen3-32b", "--hw", "h100-sxm", "--tp", "2",
        *wl, *extra, fmt="csv"))))
    assert float(rows[0]["ttft_p90_s"]) == pytest.approx(sv["ttft_s"]["p90"], abs=1e-9)
    assert float(rows[0]["tpot_p90_s"]) == pytest.approx(sv["tpot_s"]["p90"], abs=1e-9)
    assert sv["workload"]["range_ratio"] == 0.1  # the default spread, no lockstep


def test_capacity():
    cap = run("capacity", "--model", "llama-3.1-8b", "--hw", "h100-sxm", "--tp", "2",
              "--context", "4096")
    c = deploy(tp=2).capacity(4096)
    assert cap["tp"] == 2
    assert cap["max_seqs_at_context"] == c["max_seqs_at_context"]
    assert cap["kv_blocks"] == deploy(tp=2).info["kv_blocks"]
    assert cap["kv_capacity_tokens"] == deploy(tp=2).info["kv_capacity_tokens"]


SLO = dict(slo_ttft_s=1.0, slo_tpot_s=0.05)
TPS = [2, 4, 8]
CONC = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def serve_based_best(seed, cal):
    """The SLO question answered by `serve` at every point, as a user would: each point over
    the planning seeds seed.., an SLO met only when met at every seed, the most tokens/s per
    GPU."""
    n = llmstep._lib.lib.llmstep_sweep_planning_seeds()
    best = None
    for tp in TPS:
        d = llmstep.deploy("qwen3-32b", "h100-sxm", tp=tp, usage="server", calibration=cal,
                           ignore_memory=True)
        if not d.info["fits"]:
            continue
        for c in CONC:
            runs = [d.serve(concurrency=c, prompt_tokens=1024, output_tokens=128, seed=seed + k)
                    for k in range(n)]
            ok = all(r["ttft_s"]["p90"] <= SLO["slo_ttft_s"] and
                     r["tpot_s"]["p90"] <= SLO["slo_tpot_s"] for r in runs)
            tps = sum(r["output_tokens_per_s"] for r in runs) / n / tp
            if ok and (best is None or tps > best[2]):
                best = (tp, c, tps)
    return best[:2]


@pytest.mark.parametrize("cal", [None, CAL_V1])
def test_best_layout_same_by_every_path_and_seed(cal):
    calp = os.path.join(SRC, cal) if cal else None
    extra = ["--calibration", cal] if cal else []
    answers = set()
    for seed in (0, 20, 40, 60, 80):  # five disjoint windows of the 20 planning seeds
        out = run("sweep", "--kind", "serving", "--model", "qwen3-32b", "--hw", "h100-sxm",
                  "--tp", "2,4,8", "--concurrency", "1:256", "--prompt-tokens", "1024",
                  "--output-tokens", "128", "--slo-ttft-ms", "1000", "--slo-tpot-ms", "50",
                  "--best", "--seed", str(seed), *extra, fmt="csv")
        row = list(csv.DictReader(io.StringIO(out)))[0]
        cli = (int(row["tp"]), int(row["concurrency"]))
        py = llmstep.sweep("qwen3-32b", "h100-sxm", kind="serving", tp=TPS, concurrency=CONC,
                           prompt_tokens=1024, output_tokens=128, seed=seed, best=True,
                           calibration=calp, **SLO)
        assert (int(py["tp"][0]), int(py["concurrency"][0])) == cli
        assert float(row["output_tokens_per_s_per_gpu"]) == pytest.approx(
            py["tokens_per_s_per_gpu"][0], abs=1e-3)  # CSV: 3 decimals of tokens/s
        answers.add(cli)
    assert len(answers) == 1, answers
    assert serve_based_best(0, calp) == answers.pop()
