#!/usr/bin/env python3
"""Every scalar figure of a hardware profile changes some prediction, or is documented as
informational (issue 24, item 5).

For each figure of SIM_HW_FIELDS (sim/core/hw.h) and each of two bundled profiles, the
script writes a copy of the profile with that one figure changed (scaled by 0.7 when it has
a value, set to a typical magnitude when it is absent or 0, flipped when it is a flag),
runs a fixed battery of commands with `--hw COPY` (decode, prefill and mixed steps; bf16,
fp16, fp8 and fp8-KV; dense, MoE, MLA and mxfp4 checkpoints; TP within and across nodes,
PP, DP with EP; capacity; a short serving run) and compares their output with the unchanged profile's. A figure
is used when at least one output differs on one of the profiles.

The oracle is the list INFORMATIONAL below, whose entries docs/hwprofile.md must mark as
informational: a figure on the list that changes a prediction, or a figure off the list that
changes none, fails the test. The first is the bug of issue 24 item 6 (a figure the step
model ignored, so fits found it "undetermined").

usage: figures_used.py LLMSTEP_BINARY SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# Figures no prediction reads: shown by `hw show`, used by `hw import` or kept for the
# record. docs/hwprofile.md, "Informational figures", says why for each.
INFORMATIONAL = {
    "bw_stream_add_bytes_per_s",
    "bw_stream_triad_bytes_per_s",
    "l2_bytes",
}

PROFILES = ["h100-sxm", "b200"]

# Figures that act only together with another: both the reference and the changed profile
# get the companion's value, so the figure's own change is what the battery sees.
COMPANIONS = {
    "gemm_eff_small_m_frac": {"gemm_small_m_rows": 256.0},
    "gemm_small_m_rows": {"gemm_eff_small_m_frac": 0.1},
    "attn_decode_block_bw_bytes_per_s": {"smem_per_sm_bytes": 65536.0},
    "smem_per_sm_bytes": {"attn_decode_block_bw_bytes_per_s": 8e9},
}

# Lines about where figures come from, not what they give.
NOTE = re.compile(r"not in the profile|figures of .* are defaults|--verbose lists")

BATTERY = [
    "predict --model llama-3.1-8b --decode 64x2048",
    "predict --model llama-3.1-8b --prefill 2x2048",
    "predict --model llama-3.1-8b --prefill 1x300 --decode 32x1024",
    "predict --model llama-3.1-8b --decode 64x2048 --kv-dtype fp8",
    "predict --model llama-3.1-8b --prefill 1x512 --decode 64x2048 --kv-dtype fp8 --chunk 1x256x2048",
    "predict --model llama-2-7b --decode 16x1024 --prefill 1x1024",
    "predict --model mistral-7b --engine vllm-v0 --decode 64x2048",
    "predict --model llama-3.1-70b-fp8 --tp 4 --decode 64x2048 --prefill 1x1024",
    "predict --model qwen3-32b-fp8 --tp 2 --decode 64x2048 --prefill 1x2048",
    "predict --model qwen3-30b-a3b --tp 2 --decode 64x1024 --prefill 1x2048",
    "predict --model qwen3-30b-a3b --tp 1 --dp 2 --ep --decode 64x1024 --prefill 1x2048",
    "predict --model deepseek-v3 --tp 8 --decode 32x2048 --prefill 1x1024",
    "predict --model gpt-oss-120b --tp 2 --decode 64x2048 --prefill 1x2048",
    "predict --model llama-3.1-405b --tp 16 --decode 64x2048",
    "predict --model llama-3.1-405b --tp 8 --pp 2 --decode 64x2048",
    "predict --model llama-3.1-70b --tp 4 --pp 2 --decode 64x2048",
    "predict --model {src}/tests/data/quant/ct_nvfp4.json --decode 16x1024 --prefill 1x1024",
    "predict --model qwen3-30b-a3b --dtype fp8 --tp 2 --decode 64x1024 --prefill 1x2048",
    "predict --model {src}/tests/data/quant/nvfp4_moe.json --decode 64x1024 --prefill 1x2048",
    "capacity --model llama-3.1-8b",
    "capacity --model llama-3.1-70b-fp8 --tp 4",
    "serve --model llama-3.1-8b --concurrency 2 --prompt-tokens 256 --output-tokens 8 --num-requests 4",
]

# Magnitudes for a figure that is absent or 0, by its unit.
def typical(key):
    if key.endswith("_flag"):
        return 1.0
    if key == "smem_per_sm_bytes":
        return 65536.0
    # Rates before times: a rate's key ends in "_s" too.
    if key.endswith("_bytes_per_s"):
        return 1e11
    if key.endswith("_flops_per_s"):
        return 1e15
    if key == "client_path_s":
        return 0.01
    if key.endswith("_s"):
        return 1e-5
    if key.endswith("_frac"):
        return 0.5
    if key.endswith("_tokens") or key.endswith("_elems") or key.endswith("_rows"):
        return 256.0
    if key.endswith("_bytes"):
        return 4e10
    if key == "n_gpus_per_node":
        return 4.0
    if key == "n_sm":
        return 100.0
    raise SystemExit(f"figures_used: no typical value for {key}")


def changed_value(key, fig):
    v = fig.get("value") if isinstance(fig, dict) else None
    if key.endswith("_flag"):
        return 0.0 if v else 1.0
    if not v:
        return typical(key)
    if key in ("n_sm", "n_gpus_per_node"):
        return float(max(1, round(v * 0.5)))
    return v * 0.7


def fields(src):
    text = open(os.path.join(src, "sim/core/hw.h")).read()
    return re.findall(r'XX\([A-Z0-9_]+, "([a-z0-9_]+)", [01]\)', text)


def run_battery(binary, src, hw, env):
    outs = []
    for cmd in BATTERY:
        args = [binary] + cmd.format(src=src).split() + ["--hw", hw, "--ignore-memory"]
        if cmd.startswith("capacity") or cmd.startswith("serve"):
            args.remove("--ignore-memory")
        p = subprocess.run(args, capture_output=True, text=True, env=env)
        # Notes say which figures are defaults; the profile's path is printed in headers.
        # Only what the step, memory and layout figures give counts.
        lines = [ln for ln in (p.stdout + p.stderr).replace(hw, "HW").splitlines()
                 if not NOTE.search(ln)]
        outs.append((p.returncode, "\n".join(lines)))
    return outs


def main():
    binary, src = sys.argv[1], sys.argv[2]
    env = dict(os.environ, LC_ALL="C")
    keys = fields(src)
    if len(keys) < 40:
        print(f"figures_used: read {len(keys)} figures from sim/core/hw.h (expected 40 or more)")
        return 1
    used = {k: [] for k in keys}
    with tempfile.TemporaryDirectory() as tmp:
        for prof in PROFILES:
            base = json.load(open(os.path.join(src, "hwprofiles", prof + ".json")))
            path = os.path.join(tmp, prof + ".json")
            json.dump(base, open(path, "w"))
            ref = run_battery(binary, src, path, env)
            for rc, out in ref:
                if rc != 0:
                    print(f"figures_used: a battery command fails on {prof}:\n{out}")
                    return 1
            for k in keys:
                d = json.loads(json.dumps(base))
                comp = COMPANIONS.get(k, {})
                for ck, cv in comp.items():
                    d[ck] = {"value": cv, "status": "estimated", "source": "figures_used.py"}
                cref = ref
                if comp:
                    json.dump(d, open(path, "w"))
                    cref = run_battery(binary, src, path, env)
                fig = d.get(k)
                new = changed_value(k, fig)
                if isinstance(fig, dict):
                    fig["value"] = new
                else:
                    d[k] = {"value": new, "status": "estimated", "source": "figures_used.py"}
                json.dump(d, open(path, "w"))
                got = run_battery(binary, src, path, env)
                for i, (a, b) in enumerate(zip(cref, got)):
                    # A refused profile (the changed figure out of its range or against
                    # another figure) says nothing about use.
                    if b[0] == 0 and a != b:
                        used[k].append(f"{prof}: {BATTERY[i]}")
    doc = open(os.path.join(src, "docs/hwprofile.md")).read()
    fail = 0
    for k in keys:
        if k in INFORMATIONAL:
            if used[k]:
                print(f"FAIL {k}: listed as informational but changes '{used[k][0]}'")
                fail += 1
            elif not re.search(r"`%s`[^\n]*informational" % re.escape(k), doc):
                print(f"FAIL {k}: informational but docs/hwprofile.md does not say so")
                fail += 1
        elif not used[k]:
            print(f"FAIL {k}: changing it changes no prediction of the battery")
            fail += 1
    n_used = sum(1 for k in keys if used[k])
    print(f"figures_used: {len(keys)} figures, {n_used} change a prediction, "
          f"{len(INFORMATIONAL)} informational; {fail} failed")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
