#!/bin/sh
# Runs `llmstep validate-kernels` on the shared kernel tables and checks that the
# GEMM and all-reduce families get a finite MAPE on both GPUs. Without
# ../shared/data it prints SKIP and exits 77 (ctest SKIP_RETURN_CODE), so a
# missing folder is reported as skipped, never as passed.
# usage: kernels_shared.sh LLMSTEP_BINARY SHARED_DATA_DIR
set -u
bin=$1
shared=$2
if [ ! -d "$shared/kernels" ]; then
    echo "SKIP validate_kernels_shared: ../shared/data not found ($shared/kernels)"
    exit 77
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! "$bin" validate-kernels --data "$shared/kernels" --format json >"$tmp"; then
    echo "FAIL validate_kernels_shared: llmstep validate-kernels failed"
    exit 1
fi
"$bin" validate-kernels --data "$shared/kernels" | sed -n '/^by family and GPU/,/^$/p'
fail=0
for fam in gemm allreduce; do
    for gpu in h100-sxm a100-sxm-80gb; do
        key="\"family\":\"$fam\",\"gpu\":\"$gpu\",\"range\":\"all\",\"source\":\"all\""
        # %.17g prints a finite number with a leading digit; nan and inf fail the match.
        if grep -Eq "$key,\"n\":[1-9][0-9]*,\"mape_pct\":[0-9][0-9.e+-]*," "$tmp"; then
            echo "ok   $fam $gpu: finite MAPE"
        else
            echo "FAIL $fam $gpu: no finite MAPE in the JSON report"
            fail=1
        fi
    done
done
exit $fail
