#!/bin/sh
# llmstep import-bench vllm-serve, vllm-latency, vllm-throughput, llmservingsim, aiperf, mlperf and inferencex: result files of `vllm bench serve --save-result` (fixtures in
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
"$bin" import-bench genai-bench "$d/vllm_serve_rate2.5.json" $args >/dev/null 2>"$tmp/err"
expect "unknown format exit" "$?" 2
grep -q "unknown format 'genai-bench'" "$tmp/err" && ok || bad "format: $(cat "$tmp/err")"
# A file of another format: refused at the field the format needs.
"$bin" import-bench aiperf "$d/vllm_serve_rate2.5.json" $args >/dev/null 2>"$tmp/err"
expect "aiperf of a vllm file exit" "$?" 1
grep -q "input_sequence_length: required field missing" "$tmp/err" && ok ||
    bad "aiperf of a vllm file: $(cat "$tmp/err")"
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
# --- vllm-throughput: `vllm bench throughput --output-json` (vllm/benchmarks/throughput.py at
# 02028314). vllm_throughput_n100.json: 100 requests in 12.5 s, 153600 tokens = 100 x (1024 +
# 512): one offline batch of 100 at 1024 + 512 tokens, 12.5 s; 8 requests/s and 12288 tokens/s
# agree with the counts. Lengths that do not add up to the total, or a rate that does not, are
# refused.
"$bin" import-bench vllm-throughput "$d/vllm_throughput_n100.json" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 --prompt-tokens 1024 --output-tokens 512 >"$tmp/thr.jsonl"
expect "throughput exit" "$?" 0
grep -q '"kind":"offline_batch","batch":100,"prompt_tokens":1024,"output_tokens":512,"measured_s":12.5}$' \
    "$tmp/thr.jsonl" && ok || bad "throughput row: $(cat "$tmp/thr.jsonl")"
"$bin" validate --measurements "$tmp/thr.jsonl" >/dev/null 2>&1
expect "throughput row validates" "$?" 0
"$bin" import-bench vllm-throughput "$d/vllm_throughput_n100.json" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 --prompt-tokens 1000 --output-tokens 512 >/dev/null 2>"$tmp/err"
expect "throughput lengths exit" "$?" 1
grep -q "total_num_tokens: 153600, but 100 requests of 1000 + 512 tokens are 151200" "$tmp/err" &&
    ok || bad "throughput lengths: $(cat "$tmp/err")"
"$bin" import-bench vllm-throughput "$d/bad_throughput_rate.json" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 --prompt-tokens 1024 --output-tokens 512 >/dev/null 2>"$tmp/err"
expect "throughput rate exit" "$?" 1
grep -q "bad_throughput_rate.json:6:5: tokens_per_second: 12000 is not the file's count / elapsed_time (12288)" \
    "$tmp/err" && ok || bad "throughput rate: $(cat "$tmp/err")"
"$bin" import-bench vllm-throughput "$d/vllm_throughput_n100.json" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 --output-tokens 512 >/dev/null 2>&1
expect "throughput without --prompt-tokens exit" "$?" 2

# --- llmservingsim: LLMServingSim's requests.jsonl (bench/core/recorder.py write_requests;
# statistics as bench/core/validate.py _bench_latencies). Oracles by hand:
# - lss_requests.jsonl: arrival_time is epoch seconds, the token times a monotonic clock 1.7e9 s
#   away, so TTFT and E2E count from queued_ts: TTFT 0.5, 1, 1, 2 (mean 1.125; numpy
#   percentiles at (n - 1) p: p50 at 1.5 -> 1, p90 at 2.7 -> 1.7, p99 at 2.97 -> 1.97); TPOT of
#   the 3 requests of 2+ tokens 1/10, 2/20, 1/4 (mean 0.15, p50 0.1, p90 at 1.8 -> 0.22, p99 at
#   1.98 -> 0.247); E2E 1.5, 3, 1, 3 (mean 2.125, p50 at 1.5 of 1, 1.5, 3, 3 -> 2.25, p90 3).
#   The trace: arrival_time less the first: 0, 0.25, 0.5, 1.
# - lss_same_clock.jsonl: arrival_time on the token times' clock: TTFT 0.5 and 0.5 from it
#   (not from queued_ts: 0.25 and 0.375); TPOT 1/2 and 1/1 (mean 0.75, p90 0.95).
lss=$d/lss_requests.jsonl
mkdir -p "$tmp/lss"
"$bin" import-bench llmservingsim "$lss" --hardware h100-sxm --model llama-3.1-8b --tp 1 \
    --engine-version 0.19.0 --max-num-seqs 64 --max-model-len 8192 --trace "$tmp/lss/trace.jsonl" \
    --out "$tmp/lss/rows.jsonl" 2>"$tmp/err"
expect "lss exit" "$?" 0
expect "lss rows" "$(grep -c . "$tmp/lss/rows.jsonl")" 12
for mv in ttft_mean:1.125 ttft_p50:1 ttft_p90:1.7 ttft_p99:1.97 tpot_mean:0.15 tpot_p50:0.1 \
    tpot_p90:0.22 tpot_p99:0.247 e2e_mean:2.125 e2e_p50:2.25 e2e_p90:3 e2e_p99:3; do
    m=${mv%%:*}
    got=$(sed -n "s/.*\"metric\":\"$m\".*\"measured_s\":\([-0-9.eE+]*\)}$/\1/p" "$tmp/lss/rows.jsonl")
    within "lss $m" "$got" "${mv#*:}" 1e-12
done
# The trace sits beside the rows: named by its file name, with the engine arguments given.
grep -q '"workload":{"trace":"trace.jsonl"},"scheduler":{"max_num_seqs":64,"max_model_len":8192}' \
    "$tmp/lss/rows.jsonl" && ok || bad "lss workload: $(head -n 1 "$tmp/lss/rows.jsonl")"
expect "lss trace" "$(tr -d '\n' <"$tmp/lss/trace.jsonl")" \
    '{"arrival_s":0,"prompt_tokens":100,"output_tokens":11}{"arrival_s":0.25,"prompt_tokens":200,"output_tokens":21}{"arrival_s":0.5,"prompt_tokens":50,"output_tokens":1}{"arrival_s":1,"prompt_tokens":300,"output_tokens":5}'
"$bin" validate --measurements "$tmp/lss/rows.jsonl" --format json >"$tmp/lssv.json" 2>"$tmp/err"
expect "lss rows validate" "$?" 0
"$bin" import-bench llmservingsim "$d/lss_same_clock.jsonl" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 --trace "$tmp/t2.jsonl" >"$tmp/same.jsonl"
for mv in ttft_mean:0.5 tpot_mean:0.75 tpot_p90:0.95 e2e_mean:1.5; do
    m=${mv%%:*}
    got=$(sed -n "s/.*\"metric\":\"$m\".*\"measured_s\":\([-0-9.eE+]*\)}$/\1/p" "$tmp/same.jsonl")
    within "lss same clock $m" "$got" "${mv#*:}" 1e-12
done
# Refusals name the file, line and field; nothing is written.
for c in "bad_lss_key|first_token_t: unknown key (did you mean 'first_token_ts'?)" \
    "bad_lss_last|last_token_ts: before first_token_ts" \
    "bad_lss_order|request 2: arrival_time earlier than the request before it" \
    "bad_lss_output|output_toks: out of range (expected 1 to 16777216, got 0)"; do
    f=${c%%|*}
    "$bin" import-bench llmservingsim "$d/$f.jsonl" --hardware h100-sxm --model llama-3.1-8b \
        --tp 1 --trace "$tmp/never.jsonl" >/dev/null 2>"$tmp/err"
    expect "$f exit" "$?" 1
    grep -qF "${c#*|}" "$tmp/err" && ok || bad "$f message: $(cat "$tmp/err")"
    [ -e "$tmp/never.jsonl" ] && bad "$f wrote a trace" || ok
done
"$bin" import-bench llmservingsim "$lss" --hardware h100-sxm --model llama-3.1-8b --tp 1 \
    >/dev/null 2>"$tmp/err"
expect "lss no --trace exit" "$?" 2
expect "lss no --trace message" "$(cat "$tmp/err")" \
    "llmstep: import-bench: llmservingsim: give --trace FILE, where the run's request trace is written"
# --- aiperf / genai-perf profile exports (fixtures written in the layout of ai-dynamo/aiperf at
# db4f6397, JsonExportData, and of genai-perf's own export-file test; sim/io/bench_aiperf.h).
# Oracles, by hand from the fixtures:
# - aiperf_c8.json: loadgen concurrency 8 (concurrency_burst), request_count 64: a closed loop of
#   8 clients, 64 requests; input_sequence_length avg 1024 in 1000..1048, output 128 in
#   120..136: range ratio max(24/1024, 8/128) = 0.0625; 12 rows (avg, p50, p90, p99 of three
#   metrics), e.g. time_to_first_token avg 85.5 ms -> 0.0855 s, inter_token_latency p99 13.75
#   ms -> tpot_p99 0.01375 s, request_latency p50 1665 ms -> e2e_p50 1.665 s.
# - aiperf_rate4.json: request_rate 4, poisson, request_count 200, lengths 512 and 256 with
#   min = max: a Poisson open loop of 200 requests at 4/s, no range ratio.
# - genai_perf_c4.json: perf_analyzer.stimulus concurrency 4, no request_count: a closed loop
#   of 4 clients without num_requests; lengths 550 (550..550) and 200 (190..210): range ratio
#   10/200 = 0.05; time_to_first_token avg 41.25 ms -> 0.04125 s.
"$bin" import-bench aiperf "$d/aiperf_c8.json" $args >"$tmp/ap.jsonl" 2>"$tmp/err"
expect "aiperf c8 exit" "$?" 0
expect "aiperf c8 rows" "$(grep -c . "$tmp/ap.jsonl")" 12
grep -q '^{"id":"aiperf_c8-ttft_mean","source":"aiperf profile export: [^"]*aiperf_c8.json","hardware":"h100-sxm","model":"qwen3-32b","tp":2,"engine":"vllm","engine_version":"0.12.0","kind":"serving","metric":"ttft_mean","workload":{"arrival":"closed","concurrency":8,"prompt_tokens":1024,"output_tokens":128,"num_requests":64,"range_ratio":0.0625},"measured_s":0.0855}$' \
    "$tmp/ap.jsonl" && ok || bad "aiperf c8 first row: $(head -n 1 "$tmp/ap.jsonl")"
grep -q '"metric":"tpot_p99".*"measured_s":0.01375}$' "$tmp/ap.jsonl" && ok || bad "aiperf tpot_p99"
grep -q '"metric":"e2e_p50".*"measured_s":1.665}$' "$tmp/ap.jsonl" && ok || bad "aiperf e2e_p50"
"$bin" validate --measurements "$tmp/ap.jsonl" --format json >/dev/null 2>"$tmp/err"
expect "aiperf rows validate" "$?" 0
"$bin" import-bench aiperf "$d/aiperf_rate4.json" $args >"$tmp/ar.jsonl"
grep -q '"metric":"ttft_mean","workload":{"arrival":"poisson","rate_per_s":4,"prompt_tokens":512,"output_tokens":256,"num_requests":200},"measured_s":0.0855}$' \
    "$tmp/ar.jsonl" && ok || bad "aiperf rate4 row: $(head -n 1 "$tmp/ar.jsonl")"
"$bin" import-bench aiperf "$d/genai_perf_c4.json" $args >"$tmp/gp.jsonl"
grep -q '^{"id":"genai_perf_c4-ttft_mean","source":"genai-perf profile export: [^"]*","hardware":"h100-sxm","model":"qwen3-32b","tp":2,"engine":"vllm","engine_version":"0.12.0","kind":"serving","metric":"ttft_mean","workload":{"arrival":"closed","concurrency":4,"prompt_tokens":550,"output_tokens":200,"range_ratio":0.05},"measured_s":0.04125}$' \
    "$tmp/gp.jsonl" && ok || bad "genai-perf row: $(head -n 1 "$tmp/gp.jsonl")"
# Lengths without their extremes (a min or max missing): fixed lengths, said on stderr.
sed '/"input_sequence_length"/,/}/{/"min"/d}' "$d/aiperf_c8.json" >"$tmp/ap_nomin.json"
"$bin" import-bench aiperf "$tmp/ap_nomin.json" $args 2>"$tmp/err" | head -n 1 >"$tmp/apn.jsonl"
grep -q '"num_requests":64},"measured_s"' "$tmp/apn.jsonl" && ok ||
    bad "aiperf without a min: $(cat "$tmp/apn.jsonl")"
grep -q "has no length extremes" "$tmp/err" && ok || bad "aiperf without a min: $(cat "$tmp/err")"
# Refusals name the file, line and field.
for c in "aiperf_bad_constant|:103:7: input_config.loadgen.request_rate_mode: 'constant'" \
    "aiperf_bad_unit|:27:5: time_to_first_token.unit: unknown time unit 'minutes'" \
    "aiperf_bad_failed|:114:3: error_request_count: 3 requests failed" \
    "aiperf_bad_capped|:105:7: input_config.loadgen.concurrency: 16 with request_rate 4" \
    "aiperf_bad_cancelled|:110:3: was_cancelled: the run was cancelled" \
    "aiperf_bad_no_config|input_config: required field missing" \
    "genai_perf_bad_rate|:95:9: input_config.perf_analyzer.stimulus.request_rate: only a concurrency"; do
    f=${c%%|*}
    "$bin" import-bench aiperf "$d/$f.json" $args >"$tmp/none" 2>"$tmp/err"
    expect "$f exit" "$?" 1
    grep -qF "$f.json${c#*|}" "$tmp/err" || grep -qF "${c#*|}" "$tmp/err" && ok ||
        bad "$f message: $(cat "$tmp/err")"
    expect "$f output" "$(wc -c <"$tmp/none" | tr -d ' ')" 0
done
"$bin" import-bench aiperf "$d/aiperf_c8.json" --hardware h100-sxm --tp 2 >/dev/null 2>"$tmp/err"
expect "aiperf no --model exit" "$?" 2
grep -qF "(the file's model_id: 'Qwen/Qwen3-32B')" "$tmp/err" && ok ||
    bad "aiperf no --model: $(cat "$tmp/err")"
# --- MLPerf LoadGen summaries (fixtures in the lines PerformanceSummary::LogSummary and
# TestSettingsInternal::LogSummary print, mlcommons/inference at b66003e1; sim/io/bench_mlperf.h).
# Oracles, by hand from the fixtures:
# - mlperf_server_summary.txt: Server, target_qps 10, min_duration 600000 ms, min_query_count
#   100: Poisson at 10/s of max(100, 10 x 600) = 6000 requests; lengths from the command line
#   (300, 280); 12 rows: Mean First Token latency 455327000 ns -> ttft_mean 0.455327 s, 90.00
#   percentile time to output token 121335000 ns -> tpot_p90 0.121335 s, 99.00 percentile
#   latency 81257433000 ns -> e2e_p99 81.257433 s.
# - mlperf_offline_summary.txt: Offline, samples_per_query 24576, Samples per second 48: one
#   offline_batch row of 24576 prompts taking 24576 / 48 = 512 s.
# - mlperf_singlestream_summary.txt: SingleStream: a closed loop of 1 client, no num_requests.
ml="--hardware h100-sxm --model llama-3.1-8b --tp 1 --prompt-tokens 300 --output-tokens 280"
"$bin" import-bench mlperf "$d/mlperf_server_summary.txt" $ml >"$tmp/ml.jsonl" 2>"$tmp/err"
expect "mlperf server exit" "$?" 0
expect "mlperf server rows" "$(grep -c . "$tmp/ml.jsonl")" 12
grep -q '^{"id":"mlperf_server_summary-ttft_mean","source":"MLPerf LoadGen summary: [^"]*mlperf_server_summary.txt (Server, result VALID)","hardware":"h100-sxm","model":"llama-3.1-8b","tp":1,"engine":"vllm","kind":"serving","metric":"ttft_mean","workload":{"arrival":"poisson","rate_per_s":10,"prompt_tokens":300,"output_tokens":280,"num_requests":6000},"measured_s":0.455327}$' \
    "$tmp/ml.jsonl" && ok || bad "mlperf server first row: $(head -n 1 "$tmp/ml.jsonl")"
grep -q '"metric":"tpot_p90".*"measured_s":0.121335}$' "$tmp/ml.jsonl" && ok || bad "mlperf tpot_p90"
grep -q '"metric":"e2e_p99".*"measured_s":81.257433}$' "$tmp/ml.jsonl" && ok || bad "mlperf e2e_p99"
"$bin" validate --measurements "$tmp/ml.jsonl" --format json >/dev/null 2>"$tmp/err"
expect "mlperf rows validate" "$?" 0
"$bin" import-bench mlperf "$d/mlperf_offline_summary.txt" $ml >"$tmp/mo.jsonl"
grep -q '"kind":"offline_batch","batch":24576,"prompt_tokens":300,"output_tokens":280,"measured_s":512}$' \
    "$tmp/mo.jsonl" && ok || bad "mlperf offline row: $(cat "$tmp/mo.jsonl")"
"$bin" import-bench mlperf "$d/mlperf_singlestream_summary.txt" $ml >"$tmp/ms.jsonl"
grep -q '"workload":{"arrival":"closed","concurrency":1,"prompt_tokens":300,"output_tokens":280},' \
    "$tmp/ms.jsonl" && ok || bad "mlperf singlestream row: $(head -n 1 "$tmp/ms.jsonl")"
for c in "mlperf_bad_multistream|.txt:5: Scenario: 'MultiStream'" \
    "mlperf_bad_accuracy|.txt:6: Mode: 'AccuracyOnly'" \
    "mlperf_bad_qps|.txt:58: target_qps: 'ten' is not a number" \
    "mlperf_bad_twice|.txt:26: Mean latency (ns): given twice (first at line 25)" \
    "mlperf_bad_no_qps|.txt: no 'target_qps :' line (the Server scenario needs it)"; do
    f=${c%%|*}
    "$bin" import-bench mlperf "$d/$f.txt" $ml >"$tmp/none" 2>"$tmp/err"
    expect "$f exit" "$?" 1
    grep -qF "$f${c#*|}" "$tmp/err" && ok || bad "$f message: $(cat "$tmp/err")"
    expect "$f output" "$(wc -c <"$tmp/none" | tr -d ' ')" 0
done
"$bin" import-bench mlperf "$d/mlperf_server_summary.txt" --hardware h100-sxm \
    --model llama-3.1-8b --tp 1 >/dev/null 2>"$tmp/err"
expect "mlperf no lengths exit" "$?" 2
# --- InferenceX agg_*.json (fixtures in the keys utils/process_result.py writes,
# SemiAnalysisAI/InferenceX at 77f3e680; sim/io/bench_inferencex.h). Oracles, by hand:
# - inferencex_agg_c16.json: conc 16, tp 2, ep 1, image vllm/vllm-openai:v0.18.0, isl = osl =
#   1024: lengths uniform on [int(0.8 x 1024), 1024] = [819, 1024], mean 921.5 -> 922 tokens,
#   spread (1024 - 921.5) / 921.5 = 0.11123; 10 x 16 = 160 requests; engine 0.18.0 from the
#   image; mean_ttft 0.0734 s, p99_tpot 0.01182 s, median_e2el 9.07 s; 9 rows (mean, median,
#   p99 of three metrics: the file has no p90).
# - inferencex_agg_ep8.json: ep 8 at tp 8: run.expert_parallel true, ep_size 8.
"$bin" import-bench inferencex "$d/inferencex_agg_c16.json" --hardware h200-sxm \
    --model gpt-oss-120b >"$tmp/ix.jsonl" 2>"$tmp/err"
expect "inferencex exit" "$?" 0
expect "inferencex rows" "$(grep -c . "$tmp/ix.jsonl")" 9
grep -q '^{"id":"inferencex_agg_c16-ttft_mean","source":"InferenceX result: [^"]*","hardware":"h200-sxm","model":"gpt-oss-120b","tp":2,"engine":"vllm","engine_version":"0.18.0","kind":"serving","metric":"ttft_mean","workload":{"arrival":"closed","concurrency":16,"prompt_tokens":922,"output_tokens":922,"num_requests":160,"range_ratio":0.111231[0-9]*},"run":{"expert_parallel":false,"ep_size":1,"image":"vllm/vllm-openai:v0.18.0"},"measured_s":0.0734}$' \
    "$tmp/ix.jsonl" && ok || bad "inferencex first row: $(head -n 1 "$tmp/ix.jsonl")"
grep -q '"metric":"tpot_p99".*"measured_s":0.01182}$' "$tmp/ix.jsonl" && ok || bad "ix tpot_p99"
grep -q '"metric":"e2e_p50".*"measured_s":9.07}$' "$tmp/ix.jsonl" && ok || bad "ix e2e_p50"
"$bin" validate --measurements "$tmp/ix.jsonl" --format json >/dev/null 2>"$tmp/err"
expect "inferencex rows validate" "$?" 0
"$bin" import-bench inferencex "$d/inferencex_agg_ep8.json" --hardware h200-sxm \
    --model minimax-m2.5 | head -n 1 >"$tmp/ix8.jsonl"
grep -q '"tp":8,.*"run":{"expert_parallel":true,"ep_size":8,"image":"vllm/vllm-openai:v0.16.0"}' \
    "$tmp/ix8.jsonl" && ok || bad "inferencex ep8: $(cat "$tmp/ix8.jsonl")"
for c in "inferencex_bad_sglang|.json:7:3: framework: 'sglang': only vLLM runs" \
    "inferencex_bad_mtp|.json:9:3: spec_decoding: 'mtp'" \
    "inferencex_bad_dp|.json:16:3: dp_attention: expected true or false" \
    "inferencex_bad_tp|.json:14:3: tp: out of range (expected 1 to 65536, got 0)"; do
    f=${c%%|*}
    "$bin" import-bench inferencex "$d/$f.json" --hardware h200-sxm --model gpt-oss-120b \
        >"$tmp/none" 2>"$tmp/err"
    expect "$f exit" "$?" 1
    grep -qF "$f${c#*|}" "$tmp/err" && ok || bad "$f message: $(cat "$tmp/err")"
done
"$bin" import-bench inferencex "$d/inferencex_agg_c16.json" --model gpt-oss-120b \
    >/dev/null 2>"$tmp/err"
expect "inferencex no --hardware exit" "$?" 2
grep -qF "(the file's runner: 'h200-nb')" "$tmp/err" && ok || bad "ix runner: $(cat "$tmp/err")"
"$bin" import-bench inferencex "$d/inferencex_agg_c16.json" --hardware h200-sxm \
    --model gpt-oss-120b --tp 4 >/dev/null 2>"$tmp/err"
expect "inferencex --tp mismatch exit" "$?" 2
# Rows that would not load, statistics out of order, duplicate keys, empty latencies (issue 27:
# each was written with exit 0, or its first value taken silently). Made from the c4 fixture.
python3 - "$d" "$tmp" <<'PY'
import json, sys
d, t = sys.argv[1], sys.argv[2]
c4 = json.load(open(d + "/vllm_serve_c4.json"))
z = dict(c4)
for k in ("mean_ttft_ms", "median_ttft_ms", "p90_ttft_ms", "p99_ttft_ms"):
    z[k] = 0
json.dump(z, open(t + "/zero.json", "w"))
o = dict(c4, p99_ttft_ms=c4["median_ttft_ms"] / 2)
json.dump(o, open(t + "/order.json", "w"))
s = json.dumps(c4)
open(t + "/dup.json", "w").write(s[:-1] + ', "max_concurrency": 1}')
lat = json.load(open(d + "/vllm_latency_b8.json"))
lat["latencies"] = []
json.dump(lat, open(t + "/lat0.json", "w"))
PY
for c in "zero|measured_s: out of range (expected seconds from 1e-9 to 3.2e7, got 0)" \
    "order|ttft_p99 (" "dup|max_concurrency: duplicate key"; do
    f=${c%%|*}
    "$bin" import-bench vllm-serve "$tmp/$f.json" --hardware h100-sxm --model llama-3.1-8b \
        --tp 1 --out "$tmp/$f.rows" >/dev/null 2>"$tmp/err"
    expect "$f exit" "$?" 1
    grep -qF "${c#*|}" "$tmp/err" && ok || bad "$f message: $(cat "$tmp/err")"
    [ ! -e "$tmp/$f.rows" ] && ok || bad "$f: rows written"
done
"$bin" import-bench vllm-latency "$tmp/lat0.json" --hardware h100-sxm --model llama-3.1-8b --tp 1 \
    --batch 8 --prompt-tokens 10 --output-tokens 10 >/dev/null 2>"$tmp/err"
expect "empty latencies exit" "$?" 1
grep -qF "latencies: empty" "$tmp/err" && ok || bad "empty latencies: $(cat "$tmp/err")"
summary import_bench
