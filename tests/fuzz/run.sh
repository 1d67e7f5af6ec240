#!/bin/sh
# Runs every libFuzzer target of tests/fuzz for a bounded time on a seed corpus made from
# the project's own files, with a dictionary of the JSON keys they use. Exits non-zero on
# the first crash, sanitizer report, timeout (> 1 s for one input) or broken contract;
# libFuzzer then leaves the input as crash-* / timeout-* in the work folder.
# usage: tests/fuzz/run.sh FUZZ_BUILD_DIR SECONDS_PER_TARGET [TARGET...]
#   e.g. make fuzz && tests/fuzz/run.sh build-fuzz 60
#   a run of a given number of executions: FUZZ_RUNS=1000000 tests/fuzz/run.sh build-fuzz 0 model
set -u
build=$(cd "$1" 2>/dev/null && pwd || echo "$1")
secs=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${FUZZ_WORK:-$(mktemp -d)}
targets=${*:-model hw engine calib meas trace stream nccl gemm cli kernels api bench web}
seed() { # seed NAME FILES...
    dir=$work/corpus-$1
    mkdir -p "$dir"
    shift
    for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/"; done
}
seed model "$src"/models/*.json "$src"/tests/data/model_*.json
seed hw "$src"/hwprofiles/*.json "$src"/tests/data/hw_*.json
seed engine "$src"/engines/*.json
seed calib "$src"/calibrations/*.json "$src"/tests/data/calib_*.json
seed meas "$src"/measurements/*.jsonl "$src"/tests/data/meas/*.jsonl "$src"/tests/data/*.jsonl
seed trace "$src"/tests/data/trace/*.jsonl
seed stream "$src"/tests/data/import/*stream*
seed nccl "$src"/tests/data/import/*nccl*
seed gemm "$src"/tests/data/import/*gemm*
seed bench "$src"/tests/data/bench/*.json "$src"/tests/data/bench/*.jsonl "$src"/tests/data/bench/*.txt
# Kernel tables: the first byte picks the table kind (gemm, decode, prefill, all-reduce); the
# seeds are the first 40 lines of the shared H100 tables when present, else the test folder's.
mkdir -p "$work/corpus-kernels"
k=0
for f in "$src"/../shared/data/kernels/aic-vllm/h100_sxm/*/*.csv.gz "$src"/tests/data/derive/*; do
    [ -f "$f" ] || continue
    for kind in 0 1 2 3; do
        { printf "\\$(printf '%03o' $kind)"; (zcat -f "$f" 2>/dev/null | head -n 40); } \
            >"$work/corpus-kernels/seed$k-$kind"
    done
    k=$((k + 1))
done
mkdir -p "$work/corpus-api"
# Bytes read two at a time as small numbers (tests/fuzz/fuzz_target.c, target api): fixed
# seeds, so a run is reproducible.
for s in 0 1 2 3 4 5 6 7; do
    printf 'seed%s-%s' "$s" "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
        >"$work/corpus-api/seed$s"
done
# The web API: the first byte picks the route (0 capacity, 1 serving, 2 step), then a body.
mkdir -p "$work/corpus-web"
printf '\000{"model":"llama-3.1-8b","hws":["h100-sxm"],"tps":[1,2],"prompt_tokens":1024,"output_tokens":256}' \
    >"$work/corpus-web/capacity"
printf '\001{"model":"llama-3.1-8b","hws":"h100-sxm","tps":[1],"loads":[1,4],"prompt_tokens":128,"output_tokens":16,"slo_tpot_ms":30,"gpu_hour_usd":2}' \
    >"$work/corpus-web/serving"
printf '\001{"model":"llama-3.1-8b","hws":"h100-sxm","tps":[1],"trace_jsonl":"{\\"arrival_s\\": 0, \\"prompt_tokens\\": 10, \\"output_tokens\\": 5}\\n"}' \
    >"$work/corpus-web/trace"
printf '\002{"model":"llama-3.1-8b","hw":"h100-sxm","tp":2,"phase":"prefill","batch":4,"tokens":512,"calibration":"shipped"}' \
    >"$work/corpus-web/step"
printf '\000{"config_json":"{\\"model_type\\": \\"llama\\"}","hws":"h100-sxm","tps":1}' \
    >"$work/corpus-web/config"
mkdir -p "$work/corpus-cli"
for s in 1x1024 32x2048 4x512x1024:mid 0.9 on off server llm 16 1e-3 -1 abc; do
    printf '%s' "$s" >"$work/corpus-cli/$s"
done
# The corpora kept in tree (tests/fuzz/corpus/TARGET: inputs of longer runs, merged with
# -merge=1 so each adds coverage), added to the seeds.
for d in "$src"/tests/fuzz/corpus/*/; do
    [ -d "$d" ] || continue
    t=$(basename "$d")
    mkdir -p "$work/corpus-$t"
    cp "$d"* "$work/corpus-$t/" 2>/dev/null
done
# The dictionary: every quoted key of the seed files.
cat "$src"/models/*.json "$src"/hwprofiles/*.json "$src"/engines/*.json \
    "$src"/calibrations/*.json "$src"/tests/data/meas/*.jsonl 2>/dev/null |
    grep -o '"[a-z_0-9]*":' | sort -u | sed 's/^\(.*\):$/\1/; s/"/\\"/g; s/^/"/; s/$/"/' >"$work/keys.dict"
# The web API's dictionary: its request keys and choices.
for k in model config_json engine calibration dtype kv_dtype max_model_len \
    gpu_memory_utilization_frac hws tps prompt_tokens output_tokens arrival loads range_ratio \
    num_requests seed slo_ttft_ms slo_tpot_ms slo_percentile gpu_hour_usd best trace_jsonl hw tp \
    phase batch tokens; do
    printf '"\\"%s\\":"\n' "$k"
done >"$work/web.dict"
for v in '"h100-sxm"' '"a100-sxm-80gb"' '"llama-3.1-8b"' '"qwen3-32b"' '"shipped"' '"none"' \
    '"poisson"' '"closed"' '"decode"' '"prefill"' '"fp8"' 'true' 'null' '[1,2,4,8]'; do
    printf '"%s"\n' "$(printf '%s' "$v" | sed 's/"/\\"/g')"
done >>"$work/web.dict"
fail=0
for t in $targets; do
    bin=$build/tests/fuzz/fuzz_$t
    if [ ! -x "$bin" ]; then
        echo "FAIL fuzz_$t: not built (make fuzz)"
        fail=1
        continue
    fi
    runs=${FUZZ_RUNS:--1}
    dict=""
    [ "$t" != cli ] && [ "$t" != api ] && dict="-dict=$work/keys.dict"
    [ "$t" = web ] && dict="-dict=$work/web.dict"
    (cd "$work" && "$bin" -max_total_time="$secs" -runs="$runs" -timeout=1 -rss_limit_mb=2048 \
        -max_len=65536 $dict "$work/corpus-$t" >"$work/fuzz_$t.log" 2>&1)
    rc=$?
    summary=$(grep -E "^Done [0-9]+ runs" "$work/fuzz_$t.log" | tail -n 1)
    if [ $rc -ne 0 ]; then
        echo "FAIL fuzz_$t (exit $rc): see $work/fuzz_$t.log"
        grep -E "ERROR|contract violated|runtime error" "$work/fuzz_$t.log" | head -n 3
        fail=1
    else
        echo "fuzz_$t: ${summary:-no summary}"
    fi
done
[ -n "${FUZZ_WORK:-}" ] || [ $fail -ne 0 ] || rm -rf "$work"
exit $fail
