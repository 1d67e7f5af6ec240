#!/usr/bin/env python3
"""Fits the "alltoall" entries of a hardware profile from an aic nccl_perf table.

usage: tools/fit_alltoall.py NCCL_PERF.csv[.gz] [OP]

OP is the nccl_perf op_name to fit (default alltoall). The aic collector
(ai-dynamo/aiconfigurator, collector/nccl) writes one row per GPU count and message size:
message_size in elements of nccl_dtype (README of /work/shared/data), latency in ms. Rows of
the 'half' dtype (2 bytes an element) from 8 KiB to 256 MiB are fitted, per GPU count n, to

    t = latency_s + (n-1)/n x bytes / bus_bw_bytes_per_s

(nccl-tests' bus bandwidth convention for all-to-all, all-gather and reduce-scatter, bytes the
per-GPU buffer) by relative least squares, minimising sum ((t_fit - t) / t)^2, which is linear
in (latency, 1 / bus_bw). Every split of the sizes into one or two consecutive regimes of at
least 3 sizes is tried, and the count of regimes is chosen by the Bayesian information
criterion n ln(S/n) + (3K - 1) ln n, as llmstep hw import does for the all-reduce
(docs/hardware-characterization.md). Prints the JSON entries, to be pasted into the profile's
"alltoall" list with their source string. Standard library only.
"""
import csv
import gzip
import json
import math
import sys

MIN_BYTES = 8 * 1024
MAX_BYTES = 256 * 1024 * 1024


def fit_rel(points, n):
    """Relative LS of t = a + c x (n-1)/n x B; returns (a, c, S) or None."""
    saa = sac = scc = sa1 = sc1 = 0.0
    for b, t in points:
        u, v = 1.0 / t, (n - 1) / n * b / t  # residual a u + c v - 1
        saa += u * u
        sac += u * v
        scc += v * v
        sa1 += u
        sc1 += v
    det = saa * scc - sac * sac
    if det <= 0.0:
        return None
    a = (sa1 * scc - sc1 * sac) / det
    c = (saa * sc1 - sac * sa1) / det
    if a < 0.0:  # a negative latency is not physical: refit the slope alone
        a, c = 0.0, sc1 / scc
    if c <= 0.0:
        return None
    s = sum(((a + c * (n - 1) / n * b) / t - 1.0) ** 2 for b, t in points)
    return a, c, s


def main():
    path = sys.argv[1]
    op = sys.argv[2] if len(sys.argv) > 2 else "alltoall"
    opener = gzip.open if path.endswith(".gz") else open
    rows = {}
    with opener(path, "rt") as f:
        for line_no, r in enumerate(csv.DictReader(f), start=2):
            if r["op_name"] != op or r["nccl_dtype"] != "half":
                continue
            b = 2.0 * float(r["message_size"])
            if MIN_BYTES <= b <= MAX_BYTES:
                rows.setdefault(int(r["num_gpus"]), []).append((b, float(r["latency"]) * 1e-3, line_no))
    out = []
    for n in sorted(rows):
        pts = sorted(rows[n])
        m = len(pts)
        best = None
        for k in range(0, m - 5):  # k = 0: one regime; else split before index k + 3
            parts = [pts] if k == 0 else [pts[: k + 3], pts[k + 3 :]]
            if any(len(p) < 3 for p in parts):
                continue
            fits = [fit_rel([(b, t) for b, t, _ in p], n) for p in parts]
            if any(x is None for x in fits):
                continue
            s = sum(x[2] for x in fits)
            bic = m * math.log(max(s, 1e-300) / m) + (3 * len(parts) - 1) * math.log(m)
            if best is None or bic < best[0]:
                best = (bic, parts, fits, s)
        _, parts, fits, s = best
        mape = 100.0 * math.sqrt(s / m)
        lines = "%d-%d" % (pts[0][2], pts[-1][2])
        e = {"n_gpus": n, "latency_s": fits[0][0], "bus_bw_bytes_per_s": 1.0 / fits[0][1]}
        if len(parts) > 1:
            e["regimes"] = [{"from_bytes": parts[1][0][0], "latency_s": fits[1][0],
                             "bus_bw_bytes_per_s": 1.0 / fits[1][1]}]
        e["status"] = "derived"
        e["source"] = ("%s lines %s: nccl-tests %s (NCCL, half), %d sizes 8 KiB-256 MiB, rel. LS of "
                       "t = a + (n-1)/n B/b, %d regime(s) (BIC), rms rel. error %.1f%%; "
                       "tools/fit_alltoall.py" % (path, lines, op, m, len(parts), mape))
        out.append(e)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
