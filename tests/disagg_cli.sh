#!/bin/sh
# Disaggregated serving by hand (issue 29; docs/serving.md, "Disaggregated prefill and decode"):
# one request of 2048 prompt and 3 output tokens, Llama-3.1-70B FP8 on H100, 1P1D at TP 2 each.
#  - The KV transfer: the prompt's tokens but the last, 2047, x 80 layers x 2 (K, V) x 8 KV
#    heads x 128 x 2 bytes (bf16 cache) = 2047 x 327,680 B = 670.8 MB, over 2 GPU pairs of
#    NVLink at 450 GB/s per direction (the profile's link_bw_per_dir_bytes_per_s; both pools
#    in one node), no latency: 0.74529 ms.
#  - TTFT = the prefill instance's step (the request alone, output 1: aggregated serve's TTFT)
#    + the transfer + the decode instance's first step, which computes the last prompt token at
#    context 2047: a decode step, within 1% of the next two (TPOT).
# usage: disagg_cli.sh LLMSTEP
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf '{"arrival_s": 0.0, "prompt_tokens": 2048, "output_tokens": 3}\n' >"$tmp/one.jsonl"
printf '{"arrival_s": 0.0, "prompt_tokens": 2048, "output_tokens": 1}\n' >"$tmp/pre.jsonl"
m="--model llama-3.1-70b-fp8 --hw h100-sxm"
"$bin" serve $m --disagg 1P1D --prefill-tp 2 --decode-tp 2 --trace "$tmp/one.jsonl" \
    --format json >"$tmp/d.json" || { echo "FAIL disagg run exit $?"; exit 1; }
"$bin" serve $m --tp 2 --trace "$tmp/pre.jsonl" --format json >"$tmp/p.json" ||
    { echo "FAIL prefill run exit $?"; exit 1; }
python3 - "$tmp/d.json" "$tmp/p.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
xfer = 2047 * 80 * 2 * 8 * 128 * 2 / (2 * 450e9)
ok = True
def check(what, got, want, rel):
    global ok
    good = abs(got - want) <= rel * abs(want)
    print(("ok  " if good else "FAIL") + f" {what}: {got:.9g} (want {want:.9g}, rel {rel})")
    ok &= good
check("transfer", d["disagg"]["kv_transfer_mean_s"], xfer, 1e-9)
check("link", 1.0 if d["disagg"]["link"] == "nvlink" else 0.0, 1.0, 0)
want = p["ttft_s"]["mean"] + xfer + d["tpot_s"]["mean"]
check("TTFT = prefill + transfer + one decode step", d["ttft_s"]["mean"], want, 0.01)
sys.exit(0 if ok else 1)
PY
# The pools span two nodes: 2P2D at TP 4 is 16 GPUs of 8-GPU nodes, the inter-node fabric.
"$bin" serve $m --disagg 2P2D --prefill-tp 4 --decode-tp 4 --trace "$tmp/one.jsonl" \
    --format json >"$tmp/d2.json" || { echo "FAIL 16-GPU run exit $?"; exit 1; }
grep -q '"link":"internode"' "$tmp/d2.json" && echo "ok   16 GPUs: inter-node fabric" ||
    { echo "FAIL 16 GPUs: $(cat "$tmp/d2.json")"; fail=1; }
# Pools of two GPU types meet over the inter-node fabric: the prefill pool on H200 (TP 4) and
# the decode pool on H100 (TP 4): 670.8 MB over 4 pairs at the profiles' 50 GB/s per GPU, plus
# their 5 us latency: 3.3590 ms.
"$bin" serve $m --disagg 1P1D --prefill-hw h200-sxm --prefill-tp 4 --decode-tp 4 \
    --trace "$tmp/one.jsonl" --format json >"$tmp/mix.json" || { echo "FAIL mixed exit $?"; exit 1; }
python3 - "$tmp/mix.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))["disagg"]
want = 2047 * 80 * 2 * 8 * 128 * 2 / (4 * 50e9) + 5e-6
good = abs(d["kv_transfer_mean_s"] - want) <= 1e-9 * want and d["link"] == "internode" \
    and d["prefill_hardware"] == "h200-sxm"
print(("ok  " if good else "FAIL") + f" mixed GPUs: {d['kv_transfer_mean_s']:.9g} s (want {want:.9g})")
sys.exit(0 if good else 1)
PY
# sweep --disagg gives, per layout, the numbers of serve for that layout: 4 GPUs at TP 2, the
# aggregated TP 2 x DP 2 (serve --tp 2 --dp 2) and 1P1D (serve --disagg 1P1D).
w="--request-rate 2 --num-requests 40 --prompt-tokens 1024 --output-tokens 64"
"$bin" sweep --kind serving --disagg $m --gpus 4 --tp 2 $w --slo-ttft-ms 5000 \
    --slo-tpot-ms 100 --format csv >"$tmp/sw.csv" || { echo "FAIL sweep --disagg exit $?"; exit 1; }
"$bin" serve $m --tp 2 --dp 2 $w --format json >"$tmp/agg.json" || { echo "FAIL agg"; exit 1; }
"$bin" serve $m --disagg 1P1D --tp 2 $w --format json >"$tmp/dis.json" || { echo "FAIL dis"; exit 1; }
python3 - "$tmp/sw.csv" "$tmp/agg.json" "$tmp/dis.json" <<'PY' || fail=1
import csv, json, sys
rows = {r["layout"]: r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))}
ok = True
for name, path in (("TP2 x DP2", sys.argv[2]), ("1P(TP2)+1D(TP2)", sys.argv[3])):
    j = json.load(open(path))
    for key in ("ttft", "tpot"):
        got, want = float(rows[name][key + "_p90_s"]), j[key + "_s"]["p90"]
        good = abs(got - want) <= 1e-5 * want
        print(("ok  " if good else "FAIL") + f" sweep {name} {key} p90 {got:.6g} = serve {want:.6g}")
        ok &= good
sys.exit(0 if ok else 1)
PY
grep -q "^# best under the SLOs: " "$tmp/sw.csv" && echo "ok   best line" ||
    { echo "FAIL no best line"; fail=1; }
[ $fail -eq 0 ] && echo "disagg_cli: passed" || echo "disagg_cli: FAILED"
exit $fail
