#!/bin/sh
# The band every prediction reports with --interval L (issue 28; docs/calibration.md,
# "Prediction intervals and the drift alarm"): predict, latency and serve take it from the
# calibration's recorded quantiles, the same numbers by every path.
# Oracles: data/calib_band_decode.json is hand-written with ratios 0.90, 0.91, ..., 1.10 at
# 0, 5, ..., 100 %, so the L% band is [0.90 + 0.01 (100 - L) / 10, 1.10 - 0.01 (100 - L) / 10]
# times the prediction (80%: 0.92 and 1.08; 100%: 0.90 and 1.10; 10%: 0.99 and 1.01). The
# shipped calibrations' bands are read from their files (P10 = quantile 2, P90 = quantile 18).
# usage: band_cli.sh LLMSTEP_BINARY
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cal=$here/data/calib_band_decode.json
# jget FILE EXPR: a value of the JSON in FILE (python3: d is the document).
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# --- predict: a decode step, three levels ---
for lv in "80 0.92 1.08" "100 0.90 1.10" "10 0.99 1.01"; do
    set -- $lv
    "$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 32x1024 --calibration "$cal" \
        --interval "$1" --format json >"$tmp/p.json" || bad "predict --interval $1 exit $?"
    t=$(jget "$tmp/p.json" 'd["step_time_s"]')
    within "predict $1%: lo" "$(jget "$tmp/p.json" 'd["band"]["lo_s"]')" \
        "$(awk -v t="$t" -v f="$2" 'BEGIN { printf "%.17g", t * f }')" 1e-12
    within "predict $1%: hi" "$(jget "$tmp/p.json" 'd["band"]["hi_s"]')" \
        "$(awk -v t="$t" -v f="$3" 'BEGIN { printf "%.17g", t * f }')" 1e-12
    expect "predict $1%: family" "$(jget "$tmp/p.json" 'd["band"]["family"]')" decode
    expect "predict $1%: rows" "$(jget "$tmp/p.json" 'd["band"]["held_out_rows"]')" 21
done
# The table prints the same range (4 decimals of milliseconds).
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 32x1024 --calibration "$cal" \
    --interval 80 >"$tmp/p.txt"
t=$(jget "$tmp/p.json" 'd["step_time_s"]') # the 10% run's: the same step
want=$(awk -v t="$(sed -n 's/^  step time *\([0-9.]*\) ms.*/\1/p' "$tmp/p.txt")" \
    'BEGIN { printf "%.4f - %.4f ms", t * 0.92, t * 1.08 }')
got=$(sed -n 's/^  80% band *\([0-9.]* - [0-9.]* ms\).*/\1/p' "$tmp/p.txt")
# Rounded twice (the step time to 4 decimals first): the last digit may differ.
within "predict table: lo" "${got%% -*}" "${want%% -*}" 2e-4
# A prefill has no band in this calibration: refused with the families it has.
"$bin" predict --model llama-3.1-8b --hw h100-sxm --prefill 1x1024 --calibration "$cal" \
    --interval 80 >/dev/null 2>"$tmp/e"
expect "predict prefill: exit" "$?" 2
expect "predict prefill: message" "$(cat "$tmp/e")" \
    "llmstep: predict: --interval 80: calibration $cal has no band for prefill predictions (it was fitted on decode, tpot rows; calibrate on prefill rows for one)"
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 1x10 --interval 80 >/dev/null 2>"$tmp/e"
expect "uncalibrated: exit" "$?" 2
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 1x10 --calibration "$cal" \
    --interval 55 >/dev/null 2>"$tmp/e"
expect "level 55: exit" "$?" 2
expect "level 55: message" "$(cat "$tmp/e")" \
    "llmstep: predict: --interval 55: level 55%: expected 10, 20, ..., 100 (the band's quantiles are 5% apart)"

# --- latency: the shipped H100 calibration's offline_batch band, read from its file ---
shipped=$here/../calibrations/h100-sxm.json
"$bin" latency --model llama-2-7b --hw h100-sxm --engine vllm-v0 --batch 16 --prompt-tokens 512 \
    --output-tokens 512 --calibration "$shipped" --interval 80 --format json >"$tmp/l.json" ||
    bad "latency --interval exit $?"
q2=$(jget "$shipped" 'repr(d["band"]["families"]["offline_batch"]["ratio_quantiles"][2])')
q18=$(jget "$shipped" 'repr(d["band"]["families"]["offline_batch"]["ratio_quantiles"][18])')
expect "latency: lo_frac" "$(jget "$tmp/l.json" 'repr(d["band"]["lo_frac"])')" "$q2"
expect "latency: hi_frac" "$(jget "$tmp/l.json" 'repr(d["band"]["hi_frac"])')" "$q18"
within "latency: lo_s" "$(jget "$tmp/l.json" 'd["band"]["lo_s"]')" \
    "$(jget "$tmp/l.json" 'repr(d["latency_s"] * '"$q2"')')" 1e-15

# --- serve: TPOT has a band, TTFT and E2E none (null, and said in the table) ---
"$bin" serve --model llama-3.1-8b --hw h100-sxm --calibration "$cal" --concurrency 8 \
    --prompt-tokens 512 --output-tokens 64 --interval 80 --format json >"$tmp/s.json" ||
    bad "serve --interval exit $?"
expect "serve: ttft none" "$(jget "$tmp/s.json" 'd["band"]["ttft_s"]')" None
within "serve: tpot lo" "$(jget "$tmp/s.json" 'd["band"]["tpot_s"]["lo_s"]')" \
    "$(jget "$tmp/s.json" 'repr(d["tpot_s"]["mean"] * 0.92)')" 1e-12
"$bin" serve --model llama-3.1-8b --hw h100-sxm --calibration "$cal" --concurrency 8 \
    --prompt-tokens 512 --output-tokens 64 --interval 80 >"$tmp/s.txt"
expect "serve table: ttft none" "$(grep -c '^  TTFT 80% band *none' "$tmp/s.txt")" 1
expect "serve table: tpot band" "$(grep -c '^  TPOT 80% band  *[0-9]' "$tmp/s.txt")" 1
# A calibration without any band (the RTX 4090's: no field splits its rows) is refused.
"$bin" serve --model llama-3.1-8b --hw rtx-4090 --calibration rtx-4090-vllm-v1 --concurrency 2 \
    --prompt-tokens 100 --output-tokens 20 --max-model-len 4096 --interval 80 >/dev/null 2>"$tmp/e"
expect "no band: exit" "$?" 2
expect "no band: message" "$(sed 's/calibration [^ ]*rtx-4090-vllm-v1.json/calibration C/' "$tmp/e")" \
    "llmstep: serve: --interval 80: calibration C has no band (made with --no-band, from rows no field splits, or before bands: re-run its recorded command)"
# --- sweep: the same bands, per row; a serving row's TPOT band is serve's ---
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1,2 --batch 1,32 --context 1024 \
    --calibration "$cal" --interval 80 >"$tmp/w.csv" || bad "sweep --interval exit $?"
expect "sweep: header" "$(head -n 1 "$tmp/w.csv" | awk -F, '{ print $(NF - 1) "," $NF }')" \
    "band_lo_s,band_hi_s"
# CSV fields carry 9 decimals: time_s and the band each within half a unit of the last place.
awk -F, 'NR > 1 { d = $20 - $9 * 0.92; e = $21 - $9 * 1.08; if (d < 0) d = -d; if (e < 0) e = -e;
    if (d > 1.1e-9 || e > 1.1e-9) bad++; n++ } END { exit !(n == 4 && !bad) }' "$tmp/w.csv" &&
    ok || bad "sweep: band_lo_s / band_hi_s are not 0.92 / 1.08 x time_s on its 4 rows"
"$bin" sweep --kind serving --model llama-3.1-8b --hw h100-sxm --tp 1 --concurrency 8 \
    --prompt-tokens 512 --output-tokens 64 --calibration "$cal" --interval 80 --format json \
    >"$tmp/ws.json" || bad "serving sweep --interval exit $?"
expect "sweep serving: tpot lo = serve's" "$(jget "$tmp/ws.json" 'repr(d["rows"][0]["band"]["tpot_s"]["lo_s"])')" \
    "$(jget "$tmp/s.json" 'repr(d["band"]["tpot_s"]["lo_s"])')"
expect "sweep serving: ttft none" "$(jget "$tmp/ws.json" 'd["rows"][0]["band"]["ttft_s"]')" None
# --- TTFT regimes: data/calib_band_ttft.json has a "ttft" band (ratios 0.80, 0.81, ..., 1.00:
# 80% = 0.82 - 0.98) and a "ttft_queued" one (0.60, 0.64, ..., 1.40: 80% = 0.68 - 1.32). One
# client never waits (TTFT is the prefill); 256 clients of 2048-token prompts queue for the
# token budget. A run is queued when its mean wait before the first step is at least half its
# mean TTFT (docs/calibration.md, "Regimes"), judged here from the output's own means.
tcal=$here/data/calib_band_ttft.json
for lv in "1 ttft 0.82 0.98 False" "256 ttft_queued 0.68 1.32 True"; do
    set -- $lv
    "$bin" serve --model llama-3.1-8b --hw h100-sxm --calibration "$tcal" --concurrency "$1" \
        --prompt-tokens 2048 --output-tokens 64 --interval 80 --format json >"$tmp/q$1.json" ||
        bad "serve --concurrency $1 --interval exit $?"
    expect "serve c$1: ttft_queued" "$(jget "$tmp/q$1.json" 'd["ttft_queued"]')" "$5"
    expect "serve c$1: the rule on its means" \
        "$(jget "$tmp/q$1.json" 'd["queue_s"]["mean"] >= 0.5 * d["ttft_s"]["mean"]')" "$5"
    expect "serve c$1: ttft band family" "$(jget "$tmp/q$1.json" 'd["band"]["ttft_s"]["family"]')" "$2"
    expect "serve c$1: lo_frac" "$(jget "$tmp/q$1.json" 'd["band"]["ttft_s"]["lo_frac"]')" "$3"
    expect "serve c$1: hi_frac" "$(jget "$tmp/q$1.json" 'd["band"]["ttft_s"]["hi_frac"]')" "$4"
    within "serve c$1: lo_s" "$(jget "$tmp/q$1.json" 'd["band"]["ttft_s"]["lo_s"]')" \
        "$(jget "$tmp/q$1.json" 'repr(d["ttft_s"]["mean"] * '"$3"')')" 1e-15
done
"$bin" serve --model llama-3.1-8b --hw h100-sxm --calibration "$tcal" --concurrency 256 \
    --prompt-tokens 2048 --output-tokens 64 --interval 80 >"$tmp/q.txt"
expect "serve table: queued ttft band" "$(grep -c '^  TTFT 80% band .*held-out ttft_queued rows' "$tmp/q.txt")" 1
expect "serve table: regime line" "$(grep -c 'the TTFT is mostly queueing' "$tmp/q.txt")" 1
# The sweep's serving rows: each row's TTFT band of its own regime, as serve's.
"$bin" sweep --kind serving --model llama-3.1-8b --hw h100-sxm --tp 1 --concurrency 1,256 \
    --prompt-tokens 2048 --output-tokens 64 --calibration "$tcal" --interval 80 --format json \
    >"$tmp/wq.json" || bad "serving sweep regimes exit $?"
for r in "0 1" "1 256"; do
    set -- $r
    expect "sweep c$2: ttft band = serve's" \
        "$(jget "$tmp/wq.json" 'repr(d["rows"]['"$1"']["band"]["ttft_s"])')" \
        "$(jget "$tmp/q$2.json" 'repr({k: d["band"]["ttft_s"][k] for k in ("level_pct", "family", "lo_s", "hi_s", "lo_frac", "hi_frac", "held_out_rows", "held_out_by")})')"
    expect "sweep c$2: ttft_queued = serve's" "$(jget "$tmp/wq.json" 'd["rows"]['"$1"']["ttft_queued"]')" \
        "$(jget "$tmp/q$2.json" 'd["ttft_queued"]')"
    expect "sweep c$2: queue mean = serve's" "$(jget "$tmp/wq.json" 'repr(d["rows"]['"$1"']["queue_s_mean"])')" \
        "$(jget "$tmp/q$2.json" 'repr(d["queue_s"]["mean"])')"
done
# Uncalibrated rows have empty band fields, and stderr says why.
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1 --batch 1 --context 1024 --interval 80 \
    >"$tmp/u.csv" 2>"$tmp/e" || bad "uncalibrated sweep exit $?"
expect "sweep uncalibrated: empty band" "$(tail -n 1 "$tmp/u.csv" | awk -F, '{ print $(NF - 1) "|" $NF }')" "|"
expect "sweep uncalibrated: note" "$(grep -c 'note: sweep --interval: llama-3.1-8b on h100-sxm: the prediction is uncalibrated' "$tmp/e")" 1
summary band_cli
