"""Benchmark: one million step predictions from Python (TP x batch x context grid), printed.

    PYTHONPATH=python python3 python/examples/bench_grid.py [MODEL] [HW]

Each TP is one call into C for 250 batches x 1000 contexts; the figure printed is wall time
including the NumPy broadcasting.
"""

import sys
import time

import numpy as np

import llmstep


def main():
    model = sys.argv[1] if len(sys.argv) > 1 else "llama-3.1-70b"
    hw = sys.argv[2] if len(sys.argv) > 2 else "h100-sxm"
    ctx = llmstep.Context()
    batches = np.arange(1, 251)[:, None]
    contexts = (np.arange(1, 1001) * 128)[None, :]
    deps = [ctx.deploy(model, hw, tp=tp, ignore_memory=True) for tp in (1, 2, 4, 8)]
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        n = 0
        for d in deps:
            n += d.step_grid(count=batches, context_tokens=contexts).size
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    print(f"{n} step predictions ({model} on {hw}, TP 1/2/4/8 x 250 batches x 1000 contexts): "
          f"{best:.3f} s, {n / best / 1e6:.2f} million per second (best of 3)")


if __name__ == "__main__":
    main()
