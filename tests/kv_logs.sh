#!/bin/sh
# KV-cache capacity against the sizes vLLM logged at start-up (tests/kv_logs.txt, each line
# with its source): runs `llmstep capacity ... --format json` for each and compares its
# kv_capacity_tokens with the logged tokens. "check" lines must be within 5% (issue 25's
# acceptance); "report" lines are printed with their error and reason, not asserted.
# Needs no ../shared/data (bundled models and profiles).
# usage: kv_logs.sh LLMSTEP_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
cd "$src" || exit 2
printf '%-20s %-6s %10s %10s %8s\n' id kind logged llmstep error
while IFS='|' read -r id kind want source args; do
    case "$id" in '' | '#'*) continue ;; esac
    id=$(echo "$id" | tr -d ' ')
    kind=$(echo "$kind" | tr -d ' ')
    want=$(echo "$want" | tr -d ' ')
    # shellcheck disable=SC2086
    got=$("$bin" capacity $args --format json 2>"$tmp/err" |
        sed -n 's/.*"per_tp":{[^}]*"kv_capacity_tokens":\([0-9]*\).*/\1/p')
    if [ -z "$got" ]; then
        bad "$id: capacity gave no per_tp kv_capacity_tokens: $(cat "$tmp/err")"
        continue
    fi
    err=$(awk -v g="$got" -v w="$want" 'BEGIN { printf "%+.2f", 100 * (g / w - 1) }')
    printf '%-20s %-6s %10s %10s %7s%%\n' "$id" "$kind" "$want" "$got" "$err"
    if [ "$kind" = check ]; then
        within "$id (${source# })" "$got" "$want" 0.05
    elif [ "$kind" != report ]; then
        bad "$id: kind '$kind' (expected check or report)"
    fi
done <tests/kv_logs.txt
summary kv_logs
