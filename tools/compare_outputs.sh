#!/bin/sh
# Before/after comparison for restructuring: runs every command of tools/compare_cases.txt with
# two llmstep binaries (from the repository root, so ids and relative paths resolve alike) and
# reports each case whose stdout, stderr or exit status differs. A restructuring that is not
# meant to change answers must report "0 differ".
#   sh tools/compare_outputs.sh OLD_LLMSTEP NEW_LLMSTEP [CASES]
# Build the old binary from the commit before the change, e.g.
#   git worktree add /tmp/old HEAD~1 && make -C /tmp/old build && sh tools/compare_outputs.sh \
#       /tmp/old/build/llmstep build/llmstep
set -u
old=$1
new=$2
cases=${3:-$(dirname "$0")/compare_cases.txt}
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    n=$((n + 1))
    for which in old new; do
        if [ $which = old ]; then bin=$old; else bin=$new; fi
        # shellcheck disable=SC2086
        eval "\"$bin\" $line" >"$tmp/$which.out" 2>"$tmp/$which.err" </dev/null
        echo "rc=$?" >>"$tmp/$which.err"
    done
    # The binary's own path may appear in messages: compare with it replaced.
    sed "s#$old#LLMSTEP#g" "$tmp/old.err" >"$tmp/old.err2"
    sed "s#$new#LLMSTEP#g" "$tmp/new.err" >"$tmp/new.err2"
    if ! cmp -s "$tmp/old.out" "$tmp/new.out" || ! cmp -s "$tmp/old.err2" "$tmp/new.err2"; then
        bad=$((bad + 1))
        echo "DIFFERS: llmstep $line"
        diff "$tmp/old.out" "$tmp/new.out" | head -n 6
        diff "$tmp/old.err2" "$tmp/new.err2" | head -n 4
    fi
done <"$cases"
echo "compared $n commands: $bad differ"
[ "$bad" = 0 ]
