#!/usr/bin/env python3
"""Do two JSON texts hold the same values?  json_same.py OLD NEW

Exit 0 when both files parse as JSON (one document, or several one after the other as
calibrate prints them) and hold the same values: the same keys in the same order,
the same strings, booleans and nulls, and numbers equal as doubles (so 0.10000000000000001 and
0.1 are the same number; 1 and 1.0 too). Exit 1 with the path of the first difference, 2 when a
file is not JSON. tools/compare_outputs.sh uses it for outputs whose bytes differ.
"""
import json
import sys


def first_difference(a, b, path="$"):
    """The path and both values of the first difference, or None."""
    num = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        same = type(a) is type(b) and a == b
        return None if same else (path, a, b)
    if isinstance(a, num) and isinstance(b, num):
        if isinstance(a, int) and isinstance(b, int):
            return None if a == b else (path, a, b)
        return None if float(a) == float(b) else (path, a, b)
    if type(a) is not type(b):
        return (path, a, b)
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            return (path + " (keys)", list(a.keys()), list(b.keys()))
        for k in a:
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return (path + " (length)", len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else (path, a, b)


def load(path):
    """The documents of the file, one after the other."""

    # Duplicate keys would hide a difference in a dict: refuse them.
    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError(f"duplicate key in {path}")
        return dict(items)

    with open(path, encoding="utf-8") as f:
        text = f.read()
    def constant(name):  # NaN and Infinity are not JSON
        raise ValueError(f"{path}: {name} is not a JSON value")

    dec = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=constant)
    docs, i = [], 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i == len(text):
            break
        doc, i = dec.raw_decode(text, i)
        docs.append(doc)
    if not docs:
        raise ValueError(f"{path}: empty")
    return docs


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        old, new = load(sys.argv[1]), load(sys.argv[2])
    except (ValueError, UnicodeDecodeError) as e:
        print(f"not JSON: {e}")
        return 2
    d = first_difference(old, new)
    if d:
        print(f"values differ at {d[0]}: {d[1]!r} != {d[2]!r}"[:400])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
