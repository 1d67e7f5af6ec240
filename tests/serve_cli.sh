#!/bin/sh
# `llmstep serve` end to end (tests/serve.cmake): capacity against vLLM's logged KV-cache
# size, Little's law on the printed figures, determinism, the timeline, and bad input.
# usage: serve_cli.sh LLMSTEP SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
# jnum KEY FILE: the number after "KEY": in a one-line JSON object.
jnum() { sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2"; }

"$bin" serve --help >"$tmp/help" || bad "serve --help exit $?"
grep -q -- "--concurrency N" "$tmp/help" && ok || bad "help lacks --concurrency"

# --- KV capacity against vLLM 0.19's log for Llama-3.1-8B on one H100 (utilization 0.95,
# LLM class, max_model_len 8192): "GPU KV cache size: 476,000 tokens" (docs/engine.md). ---
"$bin" serve --model llama-3.1-8b --hw h100-sxm --concurrency 1 --prompt-tokens 16 \
    --output-tokens 2 --usage llm --gpu-memory-utilization 0.95 --max-model-len 8192 \
    --format json >"$tmp/cap.json" || bad "capacity serve exit $?"
within "KV tokens vs vLLM's log" "$(jnum kv_capacity_tokens "$tmp/cap.json")" 476000 0.03

# vLLM 0.15.1's log for Llama-3.1-8B on one A100 40GB (LLM class, utilization 0.9, max_model_len
# 131072): "GPU KV cache size: 157,936 tokens" (19.28 GiB; docs/engine.md). Within 5%, issue 25's
# bound for logged sizes (3% until the profiling peak became the larger of the forward pass and
# the sampler, docs/engine.md): the A100 profile has no CUDA-reported total, so its labelled
# 40 GiB is used, and the vllm-v1 profile's sampler is 0.19's, which sorts no vocabulary.
"$bin" capacity --model llama-3.1-8b --hw a100-sxm-40gb --usage llm --max-model-len 131072 \
    --format json >"$tmp/cap_a100.json" || bad "capacity a100 exit $?"
within "A100 KV tokens vs vLLM's log" \
    "$(sed -n 's/.*"kv_capacity_tokens":\([0-9]*\).*/\1/p' "$tmp/cap_a100.json")" 157936 0.05

# --- Little's law: closed loop, throughput x mean E2E = concurrency (2% for the ramps) ---
"$bin" serve --model llama-3.1-8b --hw h100-sxm --concurrency 32 --prompt-tokens 512 \
    --output-tokens 64 --num-requests 3200 --format json >"$tmp/ll.json" || bad "little exit $?"
x=$(jnum request_throughput_per_s "$tmp/ll.json")
e2e=$(sed -n 's/.*"e2e_s":{"mean":\([-0-9.eE+]*\).*/\1/p' "$tmp/ll.json")
within "Little's law" "$(awk -v x="$x" -v e="$e2e" 'BEGIN { print x * e }')" 32 0.02
for k in ttft_s tpot_s itl_s e2e_s request_throughput_per_s output_tokens_per_s kv_peak_frac \
    queue_peak preemptions; do
    grep -q "\"$k\":" "$tmp/ll.json" && ok || bad "json lacks $k"
done

# --- the same seed gives the same run; another seed another one ---
run() { "$bin" serve --model llama-3.1-8b --hw h100-sxm --request-rate 20 --prompt-tokens 800 \
    --output-tokens 100 --range-ratio 0.5 --num-requests 300 --seed "$1" --format json; }
run 3 >"$tmp/s3a.json"; run 3 >"$tmp/s3b.json"; run 4 >"$tmp/s4.json"
cmp -s "$tmp/s3a.json" "$tmp/s3b.json" && ok || bad "same seed differs"
cmp -s "$tmp/s3a.json" "$tmp/s4.json" && bad "another seed gives the same run" || ok

# --- the default workload is not lockstep: lengths +-10% about the mean (serve --help), and a
# row without range_ratio is a fixed-length run, so serve --range-ratio 0 reproduces it ---
"$bin" serve --model llama-3.1-8b --hw h100-sxm --concurrency 4 --prompt-tokens 100 \
    --output-tokens 10 --num-requests 8 --format json >"$tmp/dflt.json" || bad "default exit $?"
grep -q '"range_ratio":0.1,' "$tmp/dflt.json" && ok ||
    bad "default range_ratio: $(head -c 400 "$tmp/dflt.json")"

# --- timeline: a header and one row per step ---
"$bin" serve --model llama-3.1-8b --hw h100-sxm --concurrency 4 --prompt-tokens 100 \
    --output-tokens 10 --range-ratio 0 --num-requests 8 --warmup-requests 0 --timeline "$tmp/tl.csv" \
    --format json >"$tmp/tl.json" || bad "timeline exit $?"
expect "timeline header" "$(head -n 1 "$tmp/tl.csv")" \
    "step,start_s,wall_s,gpu_s,host_s,n_seqs,n_prefill_seqs,n_tokens,n_prefill_tokens,kv_used_blocks,kv_used_frac,n_waiting,n_preempted"
expect "timeline rows = steps" "$(($(wc -l <"$tmp/tl.csv") - 1))" "$(jnum n_steps "$tmp/tl.json")"
# 8 requests of 10 tokens, 4 at a time, in lockstep: 2 waves of 10 steps.
expect "steps" "$(jnum n_steps "$tmp/tl.json")" 20

# --- the nonlinear fit recovers known parameters: serving rows simulated with alpha 1.3 and
# beta_s 2 ms (TTFT and TPOT of four closed loops and one Poisson run) are calibrated back.
# An open loop at light load makes the fit's objective rough: as alpha and beta_s move, single
# arrivals fall on the other side of a step's scheduling and shift the mean TTFT by a step
# (200 requests: steps of several percent, and the fit stopped at beta_s 2.19 ms); 500
# requests smooth it enough for the recovery to be checked. ---
printf '{"schema":"llmstep-calibration/1","hardware":"h100-sxm","engine":"vllm-v1","alpha":1.3,"beta_s":0.002}\n' \
    >"$tmp/known.json"
: >"$tmp/synth.jsonl"
n=0
for w in "--concurrency 4 --prompt-tokens 512 --output-tokens 64" \
    "--concurrency 32 --prompt-tokens 512 --output-tokens 64" \
    "--concurrency 16 --prompt-tokens 2048 --output-tokens 32" \
    "--concurrency 64 --prompt-tokens 256 --output-tokens 128" \
    "--request-rate 8 --prompt-tokens 1000 --output-tokens 100 --num-requests 500"; do
    # shellcheck disable=SC2086
    # The rows below describe fixed lengths (no range_ratio): simulate them so.
    "$bin" serve --model llama-3.1-8b --hw h100-sxm --calibration "$tmp/known.json" $w --range-ratio 0 \
        --format json >"$tmp/k.json" || bad "synth serve exit $?"
    set -- $w
    if [ "$1" = --concurrency ]; then
        wl="{\"arrival\":\"closed\",\"concurrency\":$2,\"prompt_tokens\":$4,\"output_tokens\":$6}"
    else
        wl="{\"arrival\":\"poisson\",\"rate_per_s\":$2,\"prompt_tokens\":$4,\"output_tokens\":$6,\"num_requests\":$8}"
    fi
    for m in ttft tpot; do
        v=$(sed -n "s/.*\"${m}_s\":{\"mean\":\([-0-9.eE+]*\).*/\1/p" "$tmp/k.json")
        n=$((n + 1))
        printf '{"id":"s%d","source":"simulated","hardware":"h100-sxm","model":"llama-3.1-8b","tp":1,"engine":"vllm","engine_version":"0.19.0","kind":"serving","metric":"%s_mean","workload":%s,"measured_s":%s}\n' \
            "$n" "$m" "$wl" "$v" >>"$tmp/synth.jsonl"
    done
done
"$bin" calibrate --measurements "$tmp/synth.jsonl" --out "$tmp/fit.json" --format json \
    >"$tmp/fit.out" || bad "calibrate synthetic exit $?"
within "recovered alpha" "$(jnum alpha "$tmp/fit.out")" 1.3 0.01
within "recovered beta_s" "$(jnum beta_s "$tmp/fit.out")" 0.002 0.05

# --- bad input: one line naming the problem, non-zero exit ---
expect_err() {
    want_rc=$1; want=$2; shift 2
    "$bin" "$@" >"$tmp/o" 2>"$tmp/e"
    rc=$?
    expect "rc of $*" "$rc" "$want_rc"
    grep -qF -- "$want" "$tmp/e" && ok || bad "stderr of $* lacks [$want]: $(cat "$tmp/e")"
    expect "one line for $*" "$(wc -l <"$tmp/e" | tr -d ' ')" 1
}
expect_err 2 "give exactly one workload" serve --model llama-3.1-8b --hw h100-sxm \
    --concurrency 4 --request-rate 2 --prompt-tokens 10 --output-tokens 10
expect_err 2 "--prompt-tokens and --output-tokens are required" serve --model llama-3.1-8b \
    --hw h100-sxm --concurrency 4
expect_err 2 "--concurrency '0': expected an integer from 1 to 1048576" serve --model llama-3.1-8b --hw h100-sxm \
    --concurrency 0 --prompt-tokens 10 --output-tokens 10
expect_err 2 "--burstiness 'x': expected a number from 0.001 to 1000" serve --model llama-3.1-8b --hw h100-sxm \
    --request-rate 2 --burstiness x --prompt-tokens 10 --output-tokens 10
expect_err 1 "bad_unsorted.jsonl:4:2: arrival_s: before the previous request's" serve \
    --model llama-3.1-8b --hw h100-sxm --trace "$src/tests/data/trace/bad_unsorted.jsonl"
expect_err 1 "nope.jsonl" serve --model llama-3.1-8b --hw h100-sxm --trace "$tmp/nope.jsonl"
expect_err 1 "exceed max_model_len" serve --model llama-3.1-8b --hw h100-sxm --concurrency 2 \
    --prompt-tokens 5000 --output-tokens 10 --max-model-len 4096
expect_err 2 "unknown option '--concurency'" serve --model llama-3.1-8b --hw h100-sxm \
    --concurency 4 --prompt-tokens 10 --output-tokens 10

# --- Data parallelism: --dp 2 deals the requests and the clients of a closed loop to two
# engines in turn. With a dense model (whose step does not depend on the other rank) and equal
# requests, each rank serves exactly the single engine's run with half the clients and half
# the requests: the same TTFT and TPOT to rounding, twice the throughput.
"$bin" serve --model llama-3.1-8b --hw h100-sxm --concurrency 8 --prompt-tokens 512 \
    --output-tokens 64 --range-ratio 0 --num-requests 40 --format json >"$tmp/dp1.json" ||
    bad "dp1 exit $?"
"$bin" serve --model llama-3.1-8b --hw h100-sxm --dp 2 --concurrency 16 --prompt-tokens 512 \
    --output-tokens 64 --range-ratio 0 --num-requests 80 --format json >"$tmp/dp2.json" ||
    bad "dp2 exit $?"
mean() { sed -n "s/.*\"$1\":{\"mean\":\([-0-9.eE+]*\).*/\1/p" "$2"; }
within "DP 2 TTFT = one engine's at half the clients" "$(mean ttft_s "$tmp/dp2.json")" \
    "$(mean ttft_s "$tmp/dp1.json")" 1e-9
within "DP 2 TPOT" "$(mean tpot_s "$tmp/dp2.json")" "$(mean tpot_s "$tmp/dp1.json")" 1e-9
within "DP 2 throughput doubles" "$(jnum request_throughput_per_s "$tmp/dp2.json")" \
    "$(awk -v x="$(jnum request_throughput_per_s "$tmp/dp1.json")" 'BEGIN { printf "%.17g", 2 * x }')" 1e-9
grep -q '"dp":2,"ep":false' "$tmp/dp2.json" && ok || bad "dp2 json layout: $(head -c 300 "$tmp/dp2.json")"
expect_err 1 "a closed loop of 2 clients leaves a rank without one" serve --model llama-3.1-8b \
    --hw h100-sxm --dp 4 --concurrency 2 --prompt-tokens 10 --output-tokens 10

# --- validate --scheduler-rule aic-benchmark: the closed-loop row of tests/data/meas/serving.jsonl
# (64 clients, 1024 + 128 tokens, vLLM 0.12) is predicted as serve predicts the run started with
# the engine arguments the rule derives by hand: max_num_seqs 64, max_num_batched_tokens
# 64 + 1024 + 1500 = 2588, max_model_len 1024 + 128 + 1500 = 2652. Without the rule, as serve
# with the engine's defaults. ---
rowpred() { sed -n 's/.*"predicted_s":\([-0-9.eE+]*\).*/\1/p' "$1" | head -n 1; }
for rule in aic-benchmark engine-defaults; do
    "$bin" validate --measurements "$src/tests/data/meas/serving.jsonl" --select id=c-ttft \
        --scheduler-rule $rule --format json >"$tmp/rule_$rule.json" || bad "validate $rule exit $?"
done
"$bin" serve --model qwen3-32b --hw h100-sxm --tp 2 --engine vllm-v1-0.12 --concurrency 64 \
    --prompt-tokens 1024 --output-tokens 128 --range-ratio 0 --max-num-seqs 64 --max-num-batched-tokens 2588 \
    --max-model-len 2652 --format json >"$tmp/rule_serve.json" || bad "rule serve exit $?"
"$bin" serve --model qwen3-32b --hw h100-sxm --tp 2 --engine vllm-v1-0.12 --concurrency 64 \
    --prompt-tokens 1024 --output-tokens 128 --range-ratio 0 --format json >"$tmp/rule_defaults.json" ||
    bad "defaults serve exit $?"
within "aic-benchmark row = serve with its engine arguments" \
    "$(rowpred "$tmp/rule_aic-benchmark.json")" "$(mean ttft_s "$tmp/rule_serve.json")" 1e-12
within "engine-defaults row = serve with the defaults" \
    "$(rowpred "$tmp/rule_engine-defaults.json")" "$(mean ttft_s "$tmp/rule_defaults.json")" 1e-12
expect_err 2 "unknown scheduler rule 'aic' (expected engine-defaults or aic-benchmark)" validate \
    --measurements "$src/tests/data/meas/serving.jsonl" --scheduler-rule aic
# A calibration file records the rule its rows were predicted with (trained_on.scheduler_rule),
# and engine-defaults when none was given.
row=$(sed -n '/"id":"c-ttft"/p' "$src/tests/data/meas/serving.jsonl")
{
    echo "$row"
    echo "$row" | sed 's/"c-ttft"/"c-tpot"/; s/"ttft_mean"/"tpot_mean"/; s/"measured_s":0.38/"measured_s":0.046/'
} >"$tmp/two.jsonl"
for rule in aic-benchmark engine-defaults; do
    "$bin" calibrate --measurements "$tmp/two.jsonl" --scheduler-rule $rule \
        --out "$tmp/cal_$rule.json" >/dev/null || bad "calibrate $rule exit $?"
    grep -q "\"scheduler_rule\":[[:space:]]*\"$rule\"" "$tmp/cal_$rule.json" && ok ||
        bad "calibrate $rule: no trained_on.scheduler_rule: $(grep -A 6 trained_on "$tmp/cal_$rule.json")"
done

summary serve_cli
