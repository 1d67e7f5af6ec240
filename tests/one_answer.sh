#!/bin/sh
# One deployment, one answer: the examples of the issue that asked for it, each pinned. The
# oracle of every numeric check is another command's answer to the same question (the JSON
# outputs print full precision), never a stored number; the messages are the designed ones.
# Runs from the source tree (the shipped calibrations/ folder). No ../shared/data needed.
# usage: one_answer.sh LLMSTEP_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
cd "$src" || exit 2
# A number as the double it denotes (%.17g), whatever shortest or full spelling it was written in.
jnum() {
    sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1 | awk 'NF { printf "%.17g\n", $1 }'
}
jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$2" | head -n 1; }
p90() { sed -n "s/.*\"$1\":{[^}]*\"p90\":\([-0-9.eE+]*\).*/\1/p" "$2"; }

# 1. serve and sweep --kind serving with one calibration: the calibration's engine in both, the
#    same TTFT and TPOT p90 (the sweep printed vllm-v1's before).
wl="--model qwen3-32b --hw h100-sxm --tp 2 --concurrency 64 --prompt-tokens 1024 --output-tokens 128"
# shellcheck disable=SC2086
"$bin" serve $wl --calibration calibrations/h100-sxm-v1.json --format json >"$tmp/serve.json" ||
    bad "serve exit $?"
# shellcheck disable=SC2086
"$bin" sweep --kind serving $wl --calibration calibrations/h100-sxm-v1.json --format json \
    >"$tmp/sweep.json" || bad "sweep exit $?"
expect "serve engine" "$(jstr engine "$tmp/serve.json")" vllm-v1-0.12
expect "serving sweep engine" "$(jstr engine "$tmp/sweep.json")" vllm-v1-0.12
within "sweep TTFT p90 = serve's" "$(p90 ttft_s "$tmp/sweep.json")" "$(p90 ttft_s "$tmp/serve.json")" 0 1e-15
within "sweep TPOT p90 = serve's" "$(p90 tpot_s "$tmp/sweep.json")" "$(p90 tpot_s "$tmp/serve.json")" 0 1e-15
# ... and with a calibration that carries a client path (client_path_s, the H200 file's): both
# add it to TTFT the same way, and serve without the calibration's figures (hand-made file of the
# same alpha and beta_s) is that much earlier in TTFT and not at all in TPOT.
wl="--model llama-3.1-8b --hw h200-sxm --tp 1 --concurrency 8 --prompt-tokens 1024 --output-tokens 64"
cal=calibrations/h200-sxm-vllm-v1.json
# shellcheck disable=SC2086
"$bin" serve $wl --calibration $cal --format json >"$tmp/serve.json" || bad "serve h200 exit $?"
# shellcheck disable=SC2086
"$bin" sweep --kind serving $wl --calibration $cal --format json >"$tmp/sweep.json" ||
    bad "sweep h200 exit $?"
within "client path: sweep TTFT p90 = serve's" "$(p90 ttft_s "$tmp/sweep.json")" \
    "$(p90 ttft_s "$tmp/serve.json")" 0 1e-15
cp_s=$(tr -d ' \n\t' <$cal | sed -n 's/.*"client_path_s":{"value":\([-0-9.eE+]*\).*/\1/p')
[ -n "$cp_s" ] || bad "$cal carries no client_path_s"
sed '/"client_path_s"/,/}/d' $cal | tr -d '\n' | sed 's/,[[:space:]]*}/}/g' >"$tmp/nocp.json"
# shellcheck disable=SC2086
"$bin" serve $wl --calibration "$tmp/nocp.json" --format json >"$tmp/nocp.out" 2>"$tmp/err" ||
    bad "serve without the client path exit $?: $(cat "$tmp/err")"
tmean() { sed -n "s/.*\"$1\":{\"mean\":\([-0-9.eE+]*\).*/\1/p" "$2"; }
within "client path: TTFT mean - without it = client_path_s" \
    "$(awk -v a="$(tmean ttft_s "$tmp/serve.json")" -v b="$(tmean ttft_s "$tmp/nocp.out")" \
        'BEGIN { printf "%.12g", a - b }')" "$cp_s" 1e-9
within "client path: TPOT unchanged" "$(tmean tpot_s "$tmp/serve.json")" \
    "$(tmean tpot_s "$tmp/nocp.out")" 0 1e-15

# 2. A decode sweep with a calibration: its engine's host time, the time predict gives.
for cal in calibrations/h100-sxm-v1.json calibrations/h100-sxm.json ""; do
    c=${cal:+--calibration $cal}
    # shellcheck disable=SC2086
    "$bin" predict --model qwen3-32b --hw h100-sxm --tp 2 --decode 64x2048 $c --format json \
        >"$tmp/p.json" || bad "predict $cal exit $?"
    # shellcheck disable=SC2086
    "$bin" sweep --model qwen3-32b --hw h100-sxm --tp 2 --batch 64 --context 2048 $c \
        --format json >"$tmp/s.json" || bad "sweep $cal exit $?"
    expect "decode sweep engine ($cal)" "$(jstr engine "$tmp/s.json")" "$(jstr engine "$tmp/p.json")"
    expect "decode sweep time = predict ($cal)" "$(jnum time_s "$tmp/s.json")" \
        "$(jnum step_time_s "$tmp/p.json")"
done
# 4. ... also with --engine vllm-v1, whose async host time overlaps the GPU (the maximum).
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 8x1024 --engine vllm-v1 \
    --format json >"$tmp/p1.json" || bad "predict v1 exit $?"
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1 --batch 8 --context 1024 \
    --engine vllm-v1 --format json >"$tmp/s1.json" || bad "sweep v1 exit $?"
expect "sweep --engine vllm-v1 = predict" "$(jnum time_s "$tmp/s1.json")" \
    "$(jnum step_time_s "$tmp/p1.json")"
# max(GPU, host) = GPU here: the step time is the roofline (alpha 1, beta 0).
expect "async step = max(gpu, host)" "$(jnum step_time_s "$tmp/p1.json")" \
    "$(jnum roofline_time_s "$tmp/p1.json")"

# 3. A calibration folder: the file of this GPU and engine, never another engine's.
calpath() { sed -n "s/.*\"calibration\":\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1; }
for e in "vllm-v0:h100-sxm.json" "vllm-v1-0.12:h100-sxm-v1.json" "vllm-v1:h100-sxm-vllm-v1.json"; do
    "$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 8x1024 --calibration calibrations \
        --engine "${e%%:*}" --format json >"$tmp/f.json" 2>"$tmp/f.err" || bad "folder ${e%%:*}"
    expect "folder, engine ${e%%:*}" "$(basename "$(calpath "$tmp/f.json")")" "${e#*:}"
done
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 8x1024 --calibration calibrations \
    --format json >"$tmp/f.json" || bad "folder default exit $?"
expect "folder, default engine" "$(basename "$(calpath "$tmp/f.json")")" h100-sxm-vllm-v1.json
# The A100 40GB has only a V0 fit: with no engine named it is the calibration's engine (V0);
# under --engine vllm-v1 the run is uncalibrated, and says so.
"$bin" predict --model llama-3.1-8b --hw a100-sxm-40gb --decode 8x1024 \
    --calibration calibrations --format json >"$tmp/a.json" || bad "a100 exit $?"
expect "only file: its engine" "$(jstr engine "$tmp/a.json")" vllm-v0
"$bin" predict --model llama-3.1-8b --hw a100-sxm-40gb --decode 8x1024 --engine vllm-v1 \
    --calibration calibrations --format json >"$tmp/a.json" 2>"$tmp/a.err" || bad "a100 v1 exit $?"
expect "other engine only: uncalibrated" "$(sed -n 's/.*"calibrated":\(true\|false\).*/\1/p' "$tmp/a.json")" false
expect "other engine only: said" "$(cat "$tmp/a.err")" \
    "llmstep: note: calibrations has no calibration of a100-sxm-40gb for engine vllm-v1 (calibrations/a100-sxm-40gb.json is for another engine): uncalibrated"
# An id names a shipped calibration wherever the data is installed.
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 8x1024 --calibration h100-sxm-v1 \
    --format json >"$tmp/id.json" || bad "calibration id exit $?"
expect "calibration id" "$(jstr engine "$tmp/id.json")" vllm-v1-0.12

# 5. predict refuses a batch whose KV cache cannot exist (serve would never form it).
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 1024x131000 >"$tmp/o" 2>"$tmp/e"
expect "impossible batch exit" "$?" 1
expect "impossible batch message" "$(cat "$tmp/e")" \
    "llmstep: predict: the step does not fit: its KV cache needs 8384512 blocks (17583.60 GB) per GPU, but h100-sxm at TP 1 holds 27715 (58.12 GB) (--ignore-memory to go on)"
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 1024x131000 --ignore-memory \
    >/dev/null 2>&1 || bad "--ignore-memory still prices it"
# The cache (vllm-v1, LLM usage: 16384 batched tokens, 1024 sequences; docs/engine.md): usable
# 85,029,615,042 x 0.9 = 76,526,653,537.8 B, less the weights 16,094,076,928, the profiling
# peak max(forward 16384 x (2 x 4096 + 3 x 14336) x 2 = 1,677,721,600, sampler 1024 x 128256
# x 14 + 132 x 128256 x 4 + 16384 x 4096 x 2 = 2,040,614,912) and the reserve 268,435,456:
# 58,123,526,241.8 B / (16 x 131,072 B) = 27715 blocks. They hold 214 sequences of 2049 tokens
# (129 blocks each): 214 fit, 215 do not (floor(27715 / 129) = 214.8 -> 214; with
# max_num_seqs 1024 the KV bound rules).
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 214x2048 >/dev/null 2>&1 ||
    bad "214 x 2048 should fit"
"$bin" predict --model llama-3.1-8b --hw h100-sxm --decode 215x2048 >/dev/null 2>&1 &&
    bad "215 x 2048 should not fit" || ok

# 6. Points that cannot run are rows, never fatal; --ep can be swept.
"$bin" sweep --kind serving --model qwen3-30b-a3b --hw h100-sxm --tp 1 --dp 1,8 --ep \
    --concurrency 1:16 --prompt-tokens 256 --output-tokens 16 >"$tmp/dp.csv" 2>"$tmp/dp.err"
expect "DP sweep exit" "$?" 0
# 1, 2 and 4 clients leave some of 8 DP ranks idle.
expect "idle DP ranks are rows" "$(grep -c ',idle_rank,' "$tmp/dp.csv")" 3
"$bin" sweep --model qwen3-30b-a3b --hw h100-sxm --tp 1 --dp 2 --ep 0,1 --batch 8 \
    --context 1024 >"$tmp/ep.csv" || bad "--ep 0,1 exit $?"
expect "--ep 0,1 rows" "$(awk -F, 'NR > 1 { printf "%s,%s ", $(NF-1), $NF }' "$tmp/ep.csv")" \
    "2,false 2,true "

# 7. Say what is used: the weight format and KV dtype.
"$bin" models deepseek-v3 llama-3.1-70b-fp8 >"$tmp/m" || bad "models exit $?"
grep -q '^deepseek-v3 .* fp8-block128x128 *bf16 ' "$tmp/m" && ok || bad "deepseek-v3 weights: $(cat "$tmp/m")"
grep -q '^llama-3.1-70b-fp8 .* ct-w8a8-fp8-tensor bf16 ' "$tmp/m" && ok || bad "70b-fp8 weights"
"$bin" serve --model llama-3.1-8b-fp8 --hw h100-sxm --concurrency 2 --prompt-tokens 64 \
    --output-tokens 4 >"$tmp/h" || bad "serve fp8 exit $?"
expect "serve header" "$(head -n 1 "$tmp/h")" \
    "llmstep serve: llama-3.1-8b-fp8 on h100-sxm, TP 1, ct-w8a8-fp8-tensor weights, bf16 KV cache, engine vllm-v1 (server defaults, async scheduling)"

# 8. A measurement row's run object is the run: run.async_scheduling false on a 0.18 row
#    (engine vllm-v1, async by default) predicts what serve --async-scheduling off does, and
#    differs from the engine's default (host time added to every step instead of hidden).
wl8="--model llama-3.1-8b --hw h100-sxm --concurrency 8 --prompt-tokens 512 --output-tokens 64 --num-requests 80 --warmup-requests 0 --range-ratio 0.1"
for a in off on; do
    # shellcheck disable=SC2086
    "$bin" serve $wl8 --async-scheduling $a --format json >"$tmp/as_$a.json" ||
        bad "serve --async-scheduling $a exit $?"
done
expect "serve JSON async_scheduling" "$(sed -n 's/.*"async_scheduling":\([a-z]*\).*/\1/p' "$tmp/as_off.json")" false
for a in false true; do
    printf '%s\n' "{\"id\":\"as\",\"source\":\"t\",\"hardware\":\"h100-sxm\",\"model\":\"llama-3.1-8b\",\"tp\":1,\"engine\":\"vllm\",\"engine_version\":\"0.18.0\",\"kind\":\"serving\",\"metric\":\"ttft_mean\",\"workload\":{\"arrival\":\"closed\",\"concurrency\":8,\"prompt_tokens\":512,\"output_tokens\":64,\"num_requests\":80,\"warmup_requests\":0,\"range_ratio\":0.1},\"measured_s\":0.05,\"run\":{\"async_scheduling\":$a}}" \
        >"$tmp/as_$a.jsonl"
    "$bin" validate --measurements "$tmp/as_$a.jsonl" --format json >"$tmp/v_$a.json" ||
        bad "validate async $a exit $?"
done
ttft_mean() { sed -n 's/.*"ttft_s":{"mean":\([-0-9.eE+]*\).*/\1/p' "$1" | awk '{ printf "%.17g\n", $1 }'; }
expect "row async false = serve --async-scheduling off" "$(jnum predicted_s "$tmp/v_false.json")" \
    "$(ttft_mean "$tmp/as_off.json")"
expect "row async true = serve --async-scheduling on" "$(jnum predicted_s "$tmp/v_true.json")" \
    "$(ttft_mean "$tmp/as_on.json")"
[ "$(ttft_mean "$tmp/as_off.json")" != "$(ttft_mean "$tmp/as_on.json")" ] && ok ||
    bad "async on and off give the same TTFT"
# The V0 engine has no async scheduling: refused, naming the setting.
"$bin" serve $wl8 --engine vllm-v0 --async-scheduling on >"$tmp/o" 2>"$tmp/e"
expect "V0 async exit" "$?" 1
grep -q "async_scheduling: the V0 engine has no async scheduling" "$tmp/e" && ok ||
    bad "V0 async message: $(cat "$tmp/e")"

# 9. Rows whose run.assumed names a field the prediction uses are reported apart and not
#    fitted; run keys the simulation does not follow are counted (tests/data/meas/run_keys.jsonl:
#    rk-b32's assumed names tp; rk-b64's names only the image, which no prediction uses).
rk=tests/data/meas/run_keys.jsonl
"$bin" validate --measurements $rk --format json >"$tmp/rk.json" 2>"$tmp/rk.err" ||
    bad "validate run keys exit $?"
expect "rows in the errors" "$(jnum n_rows "$tmp/rk.json")" 2
grep -q '"assumed_rows":{"n_rows":1,' "$tmp/rk.json" && ok || bad "assumed_rows: $(cat "$tmp/rk.json")"
grep -q '"assumed":"tp (data parallel not expressible)"' "$tmp/rk.json" && ok || bad "assumed text"
for k in '"key":"cudagraph_mode=PIECEWISE","n_rows":2' '"key":"env.VLLM_FLOAT32_MATMUL_PRECISION=high","n_rows":1'; do
    grep -q "$k" "$tmp/rk.json" && ok || bad "unmodelled $k"
done
# run.prefix_caching is followed (sched_v1.h, "Prefix caching"), not reported.
grep -q 'prefix_caching=true' "$tmp/rk.json" && bad "prefix_caching reported as unmodelled" || ok
grep -q 'VLLM_MOE_USE_DEEP_GEMM' "$tmp/rk.json" && bad "DEEP_GEMM=0 is what the figures time" || ok
"$bin" validate --measurements $rk --keep-assumed --format json >"$tmp/rk_all.json" ||
    bad "validate --keep-assumed exit $?"
expect "--keep-assumed rows" "$(jnum n_rows "$tmp/rk_all.json")" 3
# The set-aside row is predicted as it is when kept (uncalibrated both times).
aside_pred() { sed -n 's/.*"id":"rk-b32"[^}]*"predicted_s":\([-0-9.eE+]*\).*/\1/p' "$1" | awk '{ printf "%.17g\n", $1 }'; }
expect "set-aside prediction" "$(aside_pred "$tmp/rk.json")" "$(aside_pred "$tmp/rk_all.json")"
"$bin" calibrate --measurements $rk --out "$tmp/rk_cal.json" >/dev/null 2>"$tmp/rk_cal.err" ||
    bad "calibrate run keys exit $?"
cal_rows() { sed -n 's/.*"n_rows":[[:space:]]*\([0-9]*\).*/\1/p' "$1" | head -n 1; }
expect "calibrate fits the 2 rows" "$(cal_rows "$tmp/rk_cal.json")" 2
grep -q "1 row(s) set aside, not fitted" "$tmp/rk_cal.err" && ok || bad "calibrate note: $(cat "$tmp/rk_cal.err")"
"$bin" calibrate --measurements $rk --keep-assumed --out "$tmp/rk_cal3.json" >/dev/null 2>&1 ||
    bad "calibrate --keep-assumed exit $?"
expect "calibrate --keep-assumed fits 3" "$(cal_rows "$tmp/rk_cal3.json")" 3

# 10. A row's prediction does not depend on the other rows of its file: two serving runs that
#     differ only in expert parallelism are two simulations (they once shared one), each
#     predicted as when validated alone.
ep=tests/data/meas/serving_ep.jsonl
pred_of() { sed -n "s/.*\"id\":\"$2\",\"measured_s\":[^,]*,\"predicted_s\":\([-0-9.eE+]*\).*/\1/p" "$1"; }
"$bin" validate --measurements $ep --format json >"$tmp/ep.json" || bad "validate ep exit $?"
for id in ep-off ep-on; do
    "$bin" validate --measurements $ep --select id=$id --format json >"$tmp/ep1.json" ||
        bad "validate $id exit $?"
    expect "$id alone = in the pair" "$(pred_of "$tmp/ep1.json" $id)" "$(pred_of "$tmp/ep.json" $id)"
done
if [ -n "$(pred_of "$tmp/ep.json" ep-on)" ] &&
    [ "$(pred_of "$tmp/ep.json" ep-on)" != "$(pred_of "$tmp/ep.json" ep-off)" ]; then ok; else
    bad "expert parallelism changes nothing: $(cat "$tmp/ep.json")"; fi

summary one_answer
