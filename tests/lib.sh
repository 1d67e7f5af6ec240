# lib.sh - sourced by the shell tests (serve_cli, sweep_cli, hostile_cli, accuracy,
# accuracy_serving, calibrations, kernels_shared): a scratch folder $tmp removed on exit, pass
# and fail counters, numeric comparisons, the skip without ../shared/data, and the summary
# line ctest shows.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# expect NAME GOT WANT
expect() { if [ "$2" = "$3" ]; then ok; else bad "$1: got [$2] want [$3]"; fi; }
# The awk test that a -v value is a decimal number (empty, inf and nan are not).
isnum='function isnum(v) { return v ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/ }'
# within NAME GOT WANT RTOL [ATOL]: passes when |GOT - WANT| <= RTOL x |WANT| + ATOL (default 0).
within() {
    if awk -v g="$2" -v w="$3" -v r="$4" -v a="${5:-0}" "$isnum"'
        BEGIN { if (!isnum(g) || !isnum(w)) exit 1; d = g - w; if (d < 0) d = -d;
                if (w < 0) w = -w; exit !(d <= r * w + a) }'; then
        ok
    else
        bad "$1: got $2, want $3 within $4"
    fi
}
# compare NAME GOT OP LIMIT: passes when the number GOT is below (OP "<") or at most (OP "<=")
# LIMIT.
compare() {
    if awk -v g="$2" -v op="$3" -v l="$4" "$isnum"'
        BEGIN { if (!isnum(g)) exit 1; exit !(op == "<" ? g + 0 < l + 0 : g + 0 <= l + 0) }'; then
        ok
    else
        bad "$1: $2 is not $3 $4"
    fi
}
# need NAME PATH: exits 77 (ctest SKIP_RETURN_CODE) with a SKIP line when PATH, a file or folder
# of ../shared/data, is absent.
need() {
    if [ ! -e "$2" ]; then
        echo "SKIP $1: $2 not found (../shared/data absent)"
        exit 77
    fi
}
# summary NAME: prints the counts; succeeds only when nothing failed (end a test with it).
summary() {
    echo "$1: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
