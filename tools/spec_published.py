#!/usr/bin/env python3
"""Predicted speculative-decoding speed-ups against published measurements (issue 29).

usage: spec_published.py [--bin LLMSTEP] [--check]

Each row is one published measurement (docs/serving.md, "Speculative decoding", gives the
sources): a method, a target model and GPU, batch 1 (or a low request rate), k speculative
tokens, the acceptance the source reports, and the speed-up it measured. The acceptance is
turned into llmstep's per-position rate: a source giving the mean acceptance length tau
(tokens per verify step, the bonus token included) becomes the constant conditional rate a
with 1 + a + ... + a^k = tau; one giving the per-token rate uses it as is. The prediction is
`llmstep serve` at concurrency 1 (or the source's request rate), 10 requests of fixed length,
without and with --spec: the ratio of the mean TPOT (or of output tokens/s where the source
measured that). Rows on engines other than vLLM are predicted with the vLLM profile's proposer
figures set to 0 (spec_step_s, spec_pass_s: they are vLLM's, docs/engine.md).

--check exits 1 when a row expected within 15% is not (the rows whose disagreement the docs
explain are reported, not checked).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# id, method, model, hw, tp, prompt, output, k, acceptance kind, value, measured speed-up,
# metric (tpot or tps), request rate (None: concurrency 1), vLLM (True) or another engine,
# role: "train" (the rows the proposer figures were derived from), "check" (expected within
# 15%), "explained" (reported; docs/serving.md says why it differs).
S1 = [(2, 2.36, 4.32), (3, 2.79, 4.09), (4, 3.08, 4.05), (5, 3.32, 4.13), (6, 3.46, 4.20),
      (7, 3.54, 4.29)]
S2 = [(2, 2.10, 4.37), (3, 2.29, 4.29), (4, 2.39, 4.48), (5, 2.43, 4.71), (6, 2.45, 4.94),
      (7, 2.47, 5.20)]
S5 = [(1, 1.92, 1.78), (2, 2.58, 2.25), (3, 2.82, 2.28), (4, 2.99, 2.21), (5, 3.01, 2.15)]
ROWS = (
    [("S1", "eagle3", "llama-3.1-8b", "h100-sxm", 1, 128, 256, k, "tau", t, 7.07 / tpot, "tpot",
      None, True, "train") for k, t, tpot in S1]
    + [("S2", "eagle", "llama-3.1-8b", "h100-sxm", 1, 128, 256, k, "tau", t, 7.07 / tpot, "tpot",
        None, True, "explained") for k, t, tpot in S2]
    + [("S4", "eagle", "llama-3-8b", "h100-sxm", 1, 128, 256, 2, "tau", 1.89, 175.49 / 128.64,
        "tps", None, True, "explained"),
       ("S4", "eagle", "llama-3-8b", "h100-sxm", 1, 128, 256, 4, "tau", 2.08, 165.65 / 128.64,
        "tps", None, True, "explained"),
       ("S6", "mtp", "deepseek-v3", "h200-sxm", 8, 1024, 512, 1, "alpha", 0.82, 55.47 / 33.99,
        "tpot", 1.0, True, "explained"),
       ("S14", "mtp", "deepseek-v3", "h200-sxm", 8, 1024, 512, 1, "alpha", 0.875, 1.8, "tpot",
        None, False, "check")]
    + [("S5", "mtp", "deepseek-v3", "b200", 8, 1024, 2048, k, "tau", t, m, "tpot", None, False,
        "check") for k, t, m in S5])


def rate_for_tau(tau, k):
    """The constant conditional acceptance a with 1 + a + ... + a^k = tau."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        a = (lo + hi) / 2
        if sum(a ** i for i in range(k + 1)) < tau:
            lo = a
        else:
            hi = a
    return (lo + hi) / 2


def serve(binary, engine, model, hw, tp, prompt, output, rate, extra):
    load = ["--request-rate", str(rate)] if rate else ["--concurrency", "1"]
    args = [binary, "serve", "--model", model, "--hw", hw, "--tp", str(tp), *load,
            "--num-requests", "10", "--prompt-tokens", str(prompt), "--output-tokens",
            str(output), "--range-ratio", "0", "--format", "json", *extra]
    if engine:
        args += ["--engine", engine]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        sys.exit(f"spec_published: {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "llmstep"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    with open(os.path.join(ROOT, "engines", "vllm-v1.json")) as f:
        prof = json.load(f)
    prof["id"] = "vllm-v1-no-proposer"
    prof["spec_step_s"]["value"] = 0.0
    prof["spec_pass_s"]["value"] = 0.0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        other = os.path.join(tmp, "vllm-v1-no-proposer.json")
        with open(other, "w") as f:
            json.dump(prof, f)
        print("| source | method | model | GPU x TP | k | acceptance | a | predicted | measured "
              "| error | role |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for (sid, method, model, hw, tp, p, o, k, kind, val, meas, metric, rate, vllm,
             role) in ROWS:
            a_rate = rate_for_tau(val, k) if kind == "tau" else val
            engine = None if vllm else other
            base = serve(a.bin, engine, model, hw, tp, p, o, rate, [])
            spec = serve(a.bin, engine, model, hw, tp, p, o, rate,
                         ["--spec", method, "--spec-tokens", str(k), "--acceptance",
                          f"{a_rate:.4f}"])
            if metric == "tpot":
                pred = base["tpot_s"]["mean"] / spec["tpot_s"]["mean"]
            else:
                pred = spec["output_tokens_per_s"] / base["output_tokens_per_s"]
            err = 100.0 * (pred / meas - 1.0)
            print(f"| {sid} | {method} | {model} | {hw} x {tp} | {k} | {kind} {val:g} | "
                  f"{a_rate:.3f} | {pred:.2f}x | {meas:.2f}x | {err:+.1f}% | {role} |")
            if role == "check" and abs(err) > 15.0:
                bad += 1
    if a.check and bad:
        print(f"spec_published: {bad} checked row(s) off by more than 15%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
