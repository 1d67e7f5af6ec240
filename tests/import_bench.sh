#!/bin/sh
# llmstep import-bench vllm-serve and vllm-latency: result files of `vllm bench serve --save-result` (fixtures in
# tests/data/bench, written in the format vllm/benchmarks/serve.py writes, vllm-project/vllm at
# 009e6d4a: main_async's result_json and benchmark's result) become serving rows that validate
# reads; bad files are refused naming the file and the field.
# Oracles, by hand from the fixtures:
# - vllm_serve_c4.json: request_rate "inf", max_concurrency 4: a closed loop of 4 clients; 8
#   requests completed; 8192 input and 1024 output tokens: 1024 and 128 a request; lengths
#   1000..1048 and 120..136 about those means: 24/1024 = 0.0234 and 8/128 = 0.0625, the larger
#   is the range ratio. Statistics: mean, median, p90 and p99 of ttft, tpot and e2el: 12 rows,
#   e.g. mean_ttft_ms 85.5 -> 0.0855 s, p99_tpot_ms 13.75 -> 0.01375 s, median_e2el_ms 1665 ->
#   1.665 s.
# - vllm_serve_rate2.5.json: request_rate 2.5, burstiness 0.5, no cap: an open loop; 100
#   requests, 51200 / 100 = 512 and 25600 / 100 = 256 tokens; no per-request lengths: fixed
#   lengths, said on stderr; mean, median and p99 of ttft and tpot: 6 rows (itl has no row).
# usage: import_bench.sh LLMSTEP_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
d=$src/tests/data/bench
args="--hardware h100-sxm --model qwen3-32b --tp 2 --engine-version 0.12.0"

"$bin" import-bench vllm-serve "$d/vllm_serve_c4.json" $args >"$tmp/c4.jsonl" 2>"$tmp/err"
expect "c4 exit" "$?" 0
expect "c4 rows" "$(grep -c . "$tmp/c4.jsonl")" 12
grep -q '^{"id":"vllm_serve_c4-ttft_mean","source":"vllm bench serve --save-result: [^"]*vllm_serve_c4.json","hardware":"h100-sxm","model":"qwen3-32b","tp":2,"engine":"vllm","engine_version":"0.12.0","kind":"serving","metric":"ttft_mean","workload":{"arrival":"closed","concurrency":4,"prompt_tokens":1024,"output_tokens":128,"num_requests":8,"range_ratio":0.0625},"measured_s":0.0855}$' \
    "$tmp/c4.jsonl" && ok || bad "c4 first row: $(head -n 1 "$tmp/c4.jsonl")"
grep -q '"metric":"tpot_p99".*"measured_s":0.01375}$' "$tmp/c4.jsonl" && ok || bad "c4 tpot_p99"
grep -q '"metric":"e2e_p50".*"measured_s":1.665}$' "$tmp/c4.jsonl" && ok || bad "c4 e2e_p50"
[ -s "$tmp/err" ] && bad "c4: unexpected stderr: $(cat "$tmp/err")" || ok

"$bin" import-bench vllm-serve "$d/vllm_serve_rate2.5.json" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 --out "$tmp/r.jsonl" >"$tmp/out" 2>"$tmp/err"
expect "rate exit" "$?" 0
expect "rate rows" "$(grep -c . "$tmp/r.jsonl")" 6
[ -s "$tmp/out" ] && bad "--out also printed rows" || ok
grep -q '"metric":"ttft_p50","workload":{"arrival":"poisson","rate_per_s":2.5,"burstiness":0.5,"prompt_tokens":512,"output_tokens":256,"num_requests":100},"measured_s":0.0295}$' \
    "$tmp/r.jsonl" && ok || bad "rate ttft_p50: $(sed -n 2p "$tmp/r.jsonl")"
grep -q 'has no per-request lengths' "$tmp/err" && ok || bad "rate note: $(cat "$tmp/err")"
"$bin" import-bench vllm-serve "$d/vllm_serve_rate2.5.json" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 --range-ratio 0.2 2>/dev/null | head -n 1 |
    grep -q '"num_requests":100,"range_ratio":0.2}' && ok || bad "--range-ratio"

# The rows are measurement rows: validate predicts all 18.
cat "$tmp/c4.jsonl" "$tmp/r.jsonl" >"$tmp/all.jsonl"
"$bin" validate --measurements "$tmp/all.jsonl" --format json >"$tmp/v.json" 2>"$tmp/err"
expect "validate exit" "$?" 0
grep -q '^{"n_rows":18,' "$tmp/v.json" && ok || bad "validate rows: $(head -c 200 "$tmp/v.json") $(cat "$tmp/err")"

# Refusals: the file and the field, exit 1.
refuse() { # refuse FILE TEXT
    "$bin" import-bench vllm-serve "$d/$1" --hardware h100-sxm --model llama-3.1-8b --tp 1 \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "$1" "$tmp/err" && grep -q -- "$2" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        ok
    else
        bad "$1: exit $rc: $(cat "$tmp/err")"
    fi
}
refuse bad_failed.json "completed: 98 of 100 requests completed"
refuse bad_capped_rate.json "max_concurrency: 8 with request_rate 2.5"
refuse bad_ttft_string.json "mean_ttft_ms"
refuse bad_no_completed.json "completed: required field missing"
refuse bad_ramp.json "ramp_up_strategy"
refuse bad_no_stats.json "no statistic a measurement row can hold"
refuse bad_lens.json "output_lens"
# What the file does not say: usage errors naming it (and the file's model_id).
"$bin" import-bench vllm-serve "$d/vllm_serve_rate2.5.json" --hardware h100-sxm --tp 1 \
    >/dev/null 2>"$tmp/err"
expect "no --model exit" "$?" 2
grep -q "model_id: 'meta-llama/Llama-3.1-8B-Instruct'" "$tmp/err" && ok || bad "no --model: $(cat "$tmp/err")"
"$bin" import-bench vllm-serve "$d/vllm_serve_rate2.5.json" --model x --tp 1 >/dev/null 2>"$tmp/err"
expect "no --hardware exit" "$?" 2
"$bin" import-bench aiperf "$d/vllm_serve_rate2.5.json" $args >/dev/null 2>"$tmp/err"
expect "unknown format exit" "$?" 2
grep -q "unknown format 'aiperf'" "$tmp/err" && ok || bad "format: $(cat "$tmp/err")"
# --out never replaces a non-regular file, and a failed import writes nothing.
mkdir "$tmp/dir"
"$bin" import-bench vllm-serve "$d/vllm_serve_c4.json" $args --out "$tmp/dir" >/dev/null 2>&1
expect "--out a folder exit" "$?" 1
"$bin" import-bench vllm-serve "$d/vllm_serve_c4.json" "$d/bad_failed.json" $args \
    --out "$tmp/none.jsonl" >/dev/null 2>&1
expect "a bad second file exit" "$?" 1
[ -e "$tmp/none.jsonl" ] && bad "a failed import wrote its rows" || ok
# vllm-latency (vllm_latency_b8.json: latencies 1.24, 1.265, 1.2525, 1.2525 s, mean 1.2525 s, as
# avg_latency says): one offline_batch row of the batch and lengths given; validate reads it.
lat="--hardware h100-sxm --model llama-3.1-8b --tp 1"
"$bin" import-bench vllm-latency "$d/vllm_latency_b8.json" $lat --batch 8 --prompt-tokens 32 \
    --output-tokens 128 --out "$tmp/lat.jsonl" >/dev/null 2>"$tmp/err"
expect "latency exit" "$?" 0
grep -q '^{"id":"vllm_latency_b8","source":"vllm bench latency --output-json: [^"]*vllm_latency_b8.json (avg_latency of 4 iterations)","hardware":"h100-sxm","model":"llama-3.1-8b","tp":1,"engine":"vllm","kind":"offline_batch","batch":8,"prompt_tokens":32,"output_tokens":128,"measured_s":1.2525}$' \
    "$tmp/lat.jsonl" && ok || bad "latency row: $(cat "$tmp/lat.jsonl")"
"$bin" validate --measurements "$tmp/lat.jsonl" >/dev/null 2>"$tmp/err"
expect "validate latency row exit" "$?" 0
"$bin" import-bench vllm-latency "$d/bad_latency_mean.json" $lat --batch 8 --prompt-tokens 32 \
    --output-tokens 128 >/dev/null 2>"$tmp/err"
expect "latency bad mean exit" "$?" 1
grep -q "bad_latency_mean.json:2:5: avg_latency: 1.5 s is not the mean of the 4 latencies" \
    "$tmp/err" && ok || bad "latency bad mean: $(cat "$tmp/err")"
"$bin" import-bench vllm-latency "$d/vllm_latency_b8.json" $lat --batch 8 >/dev/null 2>"$tmp/err"
expect "latency without lengths exit" "$?" 2
grep -q "does not say the prompt length (--prompt-tokens L" "$tmp/err" && ok || bad "$(cat "$tmp/err")"
"$bin" import-bench vllm-serve "$d/vllm_serve_c4.json" $args --batch 8 >/dev/null 2>&1
expect "serve with --batch exit" "$?" 2
summary import_bench
