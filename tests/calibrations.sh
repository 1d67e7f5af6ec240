#!/bin/sh
# Every shipped calibration is reproducible: runs the command recorded in each
# calibrations/*.json (from the source tree, where its relative paths hold) with a temporary
# --out, and compares alpha and beta_s (relative 1e-6) and hardware, engine and n_rows with
# the shipped file. A profile or model change that moves a fit fails here until the file is
# regenerated.
# Also (without ../shared/data too): every hardware profile is either the hardware of a
# calibration or has one entry in calibrations/uncalibrated/known-errors.json (its known uncalibrated
# error and where that number comes from), never both.
# Exits 77 (ctest SKIP_RETURN_CODE) when ../shared/data is absent and the coverage check passed.
# usage: calibrations.sh LLMSTEP_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib.sh"
num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([-0-9.eE+]*\),*$/\1/p" "$2" | head -n 1; }
str() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\"\([^\"]*\)\",*$/\1/p" "$2" | head -n 1; }
cd "$src" || exit 2
unc=calibrations/uncalibrated/known-errors.json

# Coverage: hardware ids with a calibration, and the keys of uncalibrated/known-errors.json (one a line).
for f in calibrations/*.json; do
    [ "$f" = "$unc" ] || str hardware "$f"
done | sort -u >"$tmp/calibrated"
sed -n 's/^[[:space:]]*"\([^"]*\)":[[:space:]]*{.*/\1/p' "$unc" | sort >"$tmp/uncal"
for p in hwprofiles/*.json; do
    id=$(basename "$p" .json)
    c=$(grep -cx "$id" "$tmp/calibrated")
    u=$(grep -cx "$id" "$tmp/uncal")
    if [ "$c" -eq 0 ] && [ "$u" -ne 1 ]; then
        bad "$id: no calibration and not once in $unc"
    elif [ "$c" -gt 0 ] && [ "$u" -gt 0 ]; then
        bad "$id: has a calibration but is listed in $unc"
    else
        ok
    fi
done
while read -r id; do
    [ -f "hwprofiles/$id.json" ] || bad "$unc: $id is not a profile in hwprofiles/"
done <"$tmp/uncal"
entries=$(grep -c '^[[:space:]]*"[^"]*":[[:space:]]*{' "$unc")
complete=$(grep -c '"known_error_pct":[[:space:]]*\(null\|[0-9.]*\),[[:space:]]*"basis":[[:space:]]*"[^"]' "$unc")
expect "$unc: entries with known_error_pct (number or null) and a basis" "$complete" "$entries"

if [ ! -e "$src/../shared/data/measurements" ]; then
    [ "$fail" -eq 0 ] || { summary calibrations; exit 1; }
fi
need calibrations "$src/../shared/data/measurements"

for f in calibrations/*.json; do
    [ "$f" = "$unc" ] && continue
    cmd=$(sed -n 's/^[[:space:]]*"command":[[:space:]]*"\(.*\)",*$/\1/p' "$f")
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
    for k in hardware engine; do
        expect "$f: $k from the recorded command" "$(str $k "$tmp/out.json")" "$(str $k "$f")"
    done
    expect "$f: n_rows from the recorded command" "$(num n_rows "$tmp/out.json")" "$(num n_rows "$f")"
done
summary calibrations
