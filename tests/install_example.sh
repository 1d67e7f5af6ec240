#!/bin/sh
# Installs the build to a temporary prefix the way a user would (cmake --install), then builds
# examples/predict.c against the installed library with pkg-config, shared and static, and
# runs it and the installed CLI from another directory with $LLMSTEP_DATA_DIR unset: both must
# find the installed data (share/llmstep) and print a prediction.
# usage: install_example.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LLMSTEP_DATA_DIR
fail=0
pass=0
check() { # name, command...
    name=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then
        pass=$((pass + 1))
    else
        echo "FAIL $name:"
        sed 's/^/    /' "$tmp/out"
        fail=$((fail + 1))
    fi
}
check "cmake --install" cmake --install "$build" --prefix "$tmp/prefix"
prefix=$(cd "$tmp/prefix" && pwd -P)
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
check "pkg-config knows llmstep" pkg-config --exists llmstep
check "pkg-config version is the header's" sh -c \
    "pkg-config --modversion llmstep | grep -qx \"\$(sed -n 's/^#define LLMSTEP_VERSION *\"\\(.*\\)\"/\\1/p' '$prefix/include/llmstep.h')\""
cc=${CC:-cc}
# shellcheck disable=SC2046
check "compile with pkg-config (shared)" $cc -std=c11 -Wall -Wextra -Werror "$src/examples/predict.c" \
    $(pkg-config --cflags --libs llmstep) -Wl,-rpath,"$prefix/lib" -o "$tmp/predict"
# shellcheck disable=SC2046
check "compile with pkg-config (static)" $cc -std=c11 -Wall -Wextra -Werror "$src/examples/predict.c" \
    $(pkg-config --cflags llmstep) "$prefix/lib/libllmstep.a" \
    $(pkg-config --libs libcjson zlib gsl) -lm -ldl -o "$tmp/predict-static"
cd "$tmp" || exit 1
# A statically linked program outside the prefix cannot tell where the library was installed:
# it is given the folder (here through $LLMSTEP_DATA_DIR; llmstep_ctx_new takes it too).
for exe in predict predict-static; do
    if [ $exe = predict ]; then
        check "$exe runs" "./$exe"
        want="$prefix/lib/../share/llmstep"
    else
        check "$exe runs" env LLMSTEP_DATA_DIR="$prefix/share/llmstep" "./$exe"
        want="$prefix/share/llmstep"
    fi
    if ! grep -q "^data: $want " "$tmp/out"; then
        echo "FAIL $exe: did not read the installed data:"
        sed 's/^/    /' "$tmp/out"
        fail=$((fail + 1))
    fi
    # Llama-3.1-8B's 1024-token decode step on an H100 is memory-bound: milliseconds, not 0.
    if ! grep -Eq "^decode step, 32 x 1024 tokens: [0-9]+\.[0-9]+ ms" "$tmp/out" ||
        grep -q "nan\|inf" "$tmp/out"; then
        echo "FAIL $exe: no prediction printed"
        fail=$((fail + 1))
    fi
done
# Placed in <prefix>/bin, a statically linked program finds share/llmstep from its own path.
cp "$tmp/predict-static" "$prefix/bin/predict-static"
check "static program in prefix/bin runs" "$prefix/bin/predict-static"
if ! grep -q "^data: $prefix/bin/../share/llmstep " "$tmp/out"; then
    echo "FAIL predict-static in $prefix/bin did not read the installed data:"
    sed 's/^/    /' "$tmp/out"
    fail=$((fail + 1))
fi
check "installed CLI predicts" "$prefix/bin/llmstep" predict --model llama-3.1-8b --hw h100-sxm \
    --decode 32x1024
"$prefix/bin/llmstep" --help >"$tmp/help" 2>&1
if ! grep -q "read from $prefix/bin/../share/llmstep " "$tmp/help"; then
    echo "FAIL the installed CLI does not read the installed data:"
    grep "^Data" "$tmp/help" | sed 's/^/    /'
    fail=$((fail + 1))
fi
echo "install_example: $pass passed, $fail failed"
[ $fail = 0 ]
