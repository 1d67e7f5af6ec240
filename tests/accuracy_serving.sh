#!/bin/sh
# Serving accuracy on the shared aiconfigurator measurements (issue 8 protocol): vLLM 0.12
# serving Qwen3-32B on H100 at TP 2, 4, 8, deployed with aiconfigurator's generated engine
# arguments (--scheduler-rule aic-benchmark; docs/serving.md). Calibrates alpha and beta_s on
# the TP 2 rows of metric tpot_mean only (the training rows), validates on the TP 4 and TP 8
# rows (never seen by the fit). Asserts the issue's targets: TPOT MAPE <= 10% and TTFT MAPE
# <= 20%.
# Exits 77 (ctest SKIP_RETURN_CODE) when ../shared/data is absent.
# usage: accuracy_serving.sh LLMSTEP_BINARY SHARED_DATA_DIR
set -u
bin=$1
data=$2/measurements/aic-vllm-serving.jsonl
. "$(dirname "$0")/lib.sh"
need accuracy_serving "$data"
"$bin" calibrate --measurements "$data" --select tp=2 --select metric=tpot_mean \
    --scheduler-rule aic-benchmark --out "$tmp/v1.json" >/dev/null || { echo "FAIL calibrate"; exit 1; }
for m in tpot_mean:10 ttft_mean:20; do
    metric=${m%:*}
    limit=${m#*:}
    out=$("$bin" validate --measurements "$data" --exclude tp=2 --select metric=$metric \
        --scheduler-rule aic-benchmark --calibration "$tmp/v1.json" --format json) || { echo "FAIL validate $metric"; exit 1; }
    mape=$(echo "$out" | sed -n 's/^{"n_rows":[0-9]*,"mape_pct":\([-0-9.e+]*\),.*/\1/p')
    printf 'TP 4 and 8, %s: MAPE %.2f%% (limit %s%%)\n' "$metric" "$mape" "$limit"
    compare "$metric: MAPE (%)" "$mape" "<=" "$limit"
done
summary accuracy_serving
