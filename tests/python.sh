#!/bin/sh
# The Python package (python/, issue 11): its pytest suite against the built library and CLI,
# then `pip install ./python` (of a copy, so the checkout stays clean) into a fresh virtual
# environment with --no-index (nothing may
# come from the network) and a prediction from the installed package, run from another
# directory. Needs Debian's python3-numpy, python3-pytest, python3-setuptools, python3-wheel
# and python3-venv (`make check` installs them); exits 77 (skip) with a message without them.
# usage: python.sh LIBLLMSTEP_SO LLMSTEP_CLI SOURCE_DIR
set -u
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }
lib=$(abs "$1")
cli=$(abs "$2")
src=$(cd "$3" && pwd -P)
py=""
for cand in ${PYTHON:-} /usr/bin/python3 python3; do
    if "$cand" -c "import numpy, pytest, setuptools, wheel, venv" >/dev/null 2>&1; then
        py=$cand
        break
    fi
done
if [ -z "$py" ]; then
    echo "SKIP python: no python3 with numpy, pytest, setuptools, wheel and venv" \
        "(apt-get install python3-numpy python3-pytest python3-setuptools python3-wheel python3-venv)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
echo "== pytest ($py)"
LLMSTEP_LIBRARY=$lib LLMSTEP_CLI=$cli PYTHONPATH="$src/python" PYTHONDONTWRITEBYTECODE=1 \
    "$py" -m pytest -q -p no:cacheprovider "$src/python/tests" || fail=1
echo "== pip install ./python (offline, into a virtual environment)"
if "$py" -m venv --system-site-packages "$tmp/venv" >"$tmp/log" 2>&1 &&
    mkdir "$tmp/src" && cp -r "$src/python" "$src/include" "$tmp/src/" &&
    LLMSTEP_LIBRARY=$lib "$tmp/venv/bin/python" -m pip install --no-index --no-build-isolation \
        -q "$tmp/src/python" >>"$tmp/log" 2>&1; then
    cd "$tmp" || exit 1
    if env -u LLMSTEP_LIBRARY LLMSTEP_DATA_DIR="$src" VIRTUAL_ENV_DIR="$tmp/venv" \
        "$tmp/venv/bin/python" -c '
import os, llmstep, llmstep._lib as L
where = os.path.dirname(llmstep.__file__)
assert where.startswith(os.environ["VIRTUAL_ENV_DIR"]), where
assert L.lib._name.startswith(where), L.lib._name  # the copy installed with the package
d = llmstep.deploy("llama-3.1-8b", "h100-sxm", usage="server")
r = d.serve(concurrency=8, num_requests=40)
print("installed llmstep", llmstep.version(), "TTFT p90 %.1f ms" % (r["ttft_s"]["p90"] * 1e3))
'; then
        :
    else
        echo "FAIL the installed package does not work"
        fail=1
    fi
else
    echo "FAIL pip install ./python:"
    sed 's/^/    /' "$tmp/log"
    fail=1
fi
[ $fail = 0 ] && echo "python: passed"
[ $fail = 0 ]
