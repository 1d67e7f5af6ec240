#!/bin/sh
# Before/after comparison for restructuring: runs every command of tools/compare_cases.txt with
# two llmstep binaries (from the repository root, so ids and relative paths resolve alike) and
# reports each case whose stdout, stderr, exit status or written file differs. A restructuring
# that is not meant to change answers must report "0 differ".
#   sh tools/compare_outputs.sh OLD_LLMSTEP NEW_LLMSTEP [CASES]
# Build the old binary from the commit before the change, e.g.
#   git worktree add /tmp/old HEAD~1 && make -C /tmp/old build && sh tools/compare_outputs.sh \
#       /tmp/old/build/llmstep build/llmstep
# JSON (stdout, or the file a case writes): when the bytes differ but tools/json_same.py finds
# the same values (same keys in the same order, numbers equal as doubles: only their spelling
# changed, 0.10000000000000001 -> 0.1), the case is counted apart as "same JSON values" and not
# as a difference; everything else (tables, CSV, messages) must be byte-identical. A case that
# writes a file names it @OUT@ (the same path for both binaries; each one's file is compared).
set -u
old=$1
new=$2
cases=${3:-$(dirname "$0")/compare_cases.txt}
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
spelled=0
# same FILE_OLD FILE_NEW: 0 when the bytes are equal, 1 when only the JSON spelling differs, 2
# otherwise (json_same.py's word on it appended to $tmp/why).
same() {
    cmp -s "$1" "$2" && return 0
    python3 tools/json_same.py "$1" "$2" >>"$tmp/why" && return 1
    return 2
}
while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    n=$((n + 1))
    run=$(printf '%s' "$line" | sed "s#@OUT@#$tmp/written#g")
    for which in old new; do
        if [ $which = old ]; then bin=$old; else bin=$new; fi
        rm -f "$tmp/written"
        # shellcheck disable=SC2086
        eval "\"$bin\" $run" >"$tmp/$which.out" 2>"$tmp/$which.err" </dev/null
        echo "rc=$?" >>"$tmp/$which.err"
        if [ -f "$tmp/written" ]; then mv "$tmp/written" "$tmp/$which.file"; else : >"$tmp/$which.file"; fi
    done
    # The binary's own path may appear in messages: compare with it replaced.
    sed "s#$old#LLMSTEP#g" "$tmp/old.err" >"$tmp/old.err2"
    sed "s#$new#LLMSTEP#g" "$tmp/new.err" >"$tmp/new.err2"
    : >"$tmp/why"
    same "$tmp/old.out" "$tmp/new.out"
    out=$?
    same "$tmp/old.file" "$tmp/new.file"
    file=$?
    if [ $out = 2 ] || [ $file = 2 ] || ! cmp -s "$tmp/old.err2" "$tmp/new.err2"; then
        bad=$((bad + 1))
        echo "DIFFERS: llmstep $line"
        [ $out = 2 ] && diff "$tmp/old.out" "$tmp/new.out" | head -n 6
        [ $file = 2 ] && echo "  written file:" && diff "$tmp/old.file" "$tmp/new.file" | head -n 6
        diff "$tmp/old.err2" "$tmp/new.err2" | head -n 4
        sed 's/^/  json_same: /' "$tmp/why"
    elif [ $out = 1 ] || [ $file = 1 ]; then
        spelled=$((spelled + 1))
        what=""
        [ $out = 1 ] && what="stdout"
        [ $file = 1 ] && what="${what:+$what and }written file"
        echo "same JSON values, spelling differs ($what): llmstep $line"
    fi
done <"$cases"
echo "compared $n commands: $bad differ ($spelled more print the same JSON values spelled differently)"
[ "$bad" = 0 ]
