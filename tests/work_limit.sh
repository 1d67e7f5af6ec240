#!/bin/sh
# The work limit of a serving simulation (docs/limits.md): a 64-stage pipeline with a one-token
# budget ran about 330 s to the step limit (issue 27); the limit on operations stops it after
# about 150,000 steps, in seconds, with exit 1 and the limit named. Not run under the
# sanitizers, where the same seconds of simulation take several times longer.
# usage: work_limit.sh LLMSTEP_BINARY
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
start=$(date +%s)
"$bin" serve --model llama-3.1-405b --hw h100-sxm --pp 64 --max-num-batched-tokens 1 \
    --concurrency 16 --prompt-tokens 1000 --output-tokens 100 --max-model-len 4096 \
    --range-ratio 0 >"$tmp/o" 2>"$tmp/e"
expect "exit" "$?" 1
took=$(($(date +%s) - start))
grep -q "scheduler: more than 320000000 operations in [0-9]* steps" "$tmp/e" && ok ||
    bad "message: $(cat "$tmp/e")"
compare "seconds" "$took" "<=" 20
echo "work limit reached in $took s"
summary work_limit
