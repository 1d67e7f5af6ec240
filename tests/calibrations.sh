#!/bin/sh
# Every shipped calibration is reproducible: runs the command recorded in each
# calibrations/*.json (from the source tree, where its relative paths hold) with a temporary
# --out, and compares alpha and beta_s with the shipped file (relative 1e-6). A profile or
# model change that moves a fit fails here until the file is regenerated.
# Exits 77 (ctest SKIP_RETURN_CODE) when ../shared/data is absent.
# usage: calibrations.sh LLMSTEP_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
need calibrations "$src/../shared/data/measurements"
num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([-0-9.eE+]*\),*$/\1/p" "$2" | head -n 1; }
cd "$src" || exit 2
for f in calibrations/*.json; do
    cmd=$(sed -n 's/^[[:space:]]*"command":[[:space:]]*"\(.*\)"$/\1/p' "$f")
    if [ -z "$cmd" ]; then
        bad "$f: no recorded command"
        continue
    fi
    # llmstep ARGS --out FILE -> BIN ARGS --out TMP
    args=$(echo "$cmd" | sed "s#^llmstep ##; s#--out [^ ]*#--out $tmp/out.json#")
    # shellcheck disable=SC2086
    if ! "$bin" $args >/dev/null 2>"$tmp/err"; then
        bad "$f: '$cmd' failed: $(cat "$tmp/err")"
        continue
    fi
    for k in alpha beta_s; do
        within "$f: $k from the recorded command (regenerate the file)" \
            "$(num $k "$tmp/out.json")" "$(num $k "$f")" 1e-6 1e-15
    done
done
summary calibrations
