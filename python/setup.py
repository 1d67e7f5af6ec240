"""Installs the llmstep Python package (ctypes over libllmstep.so).

`pip install ./python` works offline with Debian's python3-setuptools and python3-wheel (no
pyproject.toml, so pip builds with the setuptools already installed instead of downloading
one). When a built C library is found ($LLMSTEP_LIBRARY, or build/lib of this checkout), a
copy goes into the package, so the installed package works without further setup; otherwise
the package finds the library at import time (docs/python.md).
"""

import glob
import os
import re
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

here = os.path.dirname(os.path.abspath(__file__))


def _version():
    with open(os.path.join(here, "..", "include", "llmstep.h"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r'#define LLMSTEP_VERSION\s+"([^"]+)"', line)
            if m:
                return m.group(1)
    raise RuntimeError("LLMSTEP_VERSION not found in include/llmstep.h")


def _built_library():
    env = os.environ.get("LLMSTEP_LIBRARY")
    if env:
        return env
    found = sorted(glob.glob(os.path.join(here, "..", "build", "lib", "libllmstep.so.*.*.*")))
    return found[-1] if found else None


class BuildPy(build_py):
    def run(self):
        super().run()
        lib = _built_library()
        if lib and not os.path.exists(lib):
            raise SystemExit(f"LLMSTEP_LIBRARY={lib}: no such file")
        if lib:
            dest = os.path.join(self.build_lib, "llmstep", "libllmstep.so")
            shutil.copyfile(os.path.realpath(lib), dest)


setup(
    name="llmstep",
    version=_version(),
    description="Predicts vLLM step, batch and serving latency and memory on a GPU",
    packages=["llmstep"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"pandas": ["pandas"]},
    cmdclass={"build_py": BuildPy},
)
