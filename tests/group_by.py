#!/usr/bin/env python3
"""validate --group-by (issue 25: "report per model x GPU x precision x TP").

The oracle of every check is the per-row table of the same JSON output: a crossed group's
row count, MAPE, max APE and bias must be those of the rows whose fields carry the group's
values (read from the measurement file itself), the groups must partition the rows and come
sorted field by field (counts as numbers), and a single field must give the default table of
that field. The usage errors are the designed messages. Runs from the source tree on the
bundled measurements/example.jsonl; no ../shared/data needed.

usage: group_by.py LLMSTEP_BINARY SOURCE_DIR
"""
import json
import subprocess
import sys

BIN, SRC = sys.argv[1], sys.argv[2]
MEAS = "measurements/example.jsonl"
failures = []


def bad(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(*args):
    return subprocess.run([BIN, *args], cwd=SRC, capture_output=True, text=True)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


rows = {}
with open(f"{SRC}/{MEAS}") as f:
    for line in f:
        if line.startswith("{"):
            r = json.loads(line)
            rows[r["id"]] = r

def check_groups(fields, out, groups):
    """Each group: the rows whose fields carry its values, their statistics recomputed here;
    the groups partition the rows. Returns the number of groups."""
    per_row = {r["id"]: r for r in out["rows"]}
    seen = 0
    for g in groups:
        vals = g["values"] if len(fields) > 1 else {fields[0]: g["value"]}
        if list(vals) != fields:
            bad(f"group {g['value']}: values keyed {list(vals)}, expected {fields}")
            continue
        members = [i for i, r in rows.items() if all(str(r[k]) == vals[k] for k in fields)]
        if g["value"] != ", ".join(vals[k] for k in fields):
            bad(f"group value '{g['value']}' is not its values joined")
        if g["n_rows"] != len(members) or not members:
            bad(f"group {g['value']}: n_rows {g['n_rows']}, the file has {len(members)}")
            continue
        seen += len(members)
        apes = [per_row[i]["ape_pct"] for i in members]
        signed = [(per_row[i]["predicted_s"] - per_row[i]["measured_s"])
                  / per_row[i]["measured_s"] * 100.0 for i in members]
        for key, want in (("mape_pct", sum(apes) / len(apes)), ("max_ape_pct", max(apes)),
                          ("bias_pct", sum(signed) / len(signed))):
            if not close(g[key], want):
                bad(f"group {g['value']}: {key} {g[key]}, its rows give {want}")
    if seen != out["n_rows"]:
        bad(f"{fields}: the groups hold {seen} rows, validate predicted {out['n_rows']}")


def validate_json(group_by):
    p = run("validate", "--measurements", MEAS, "--group-by", group_by, "--format", "json")
    if p.returncode != 0:
        bad(f"validate --group-by {group_by}: exit {p.returncode}: {p.stderr.strip()}")
        sys.exit(1)
    return json.loads(p.stdout)


fields = ["hardware", "model", "tp"]
out = validate_json(",".join(fields))
groups = out["groups"].get(",".join(fields))
if groups is None:
    bad(f"no groups['{','.join(fields)}'] in the JSON (keys: {sorted(out['groups'])})")
    sys.exit(1)
check_groups(fields, out, groups)

# Sorted by hardware, then model, then tp as a number.
keys = [(g["values"]["hardware"], g["values"]["model"], int(g["values"]["tp"])) for g in groups]
if keys != sorted(keys):
    bad(f"groups not sorted field by field: {keys}")

# One field not among the default tables: its own table, checked the same way.
one = validate_json("hardware")
if "hardware" not in one["groups"]:
    bad("--group-by hardware: no groups['hardware']")
else:
    check_groups(["hardware"], one, one["groups"]["hardware"])
# One field that is a default table: printed once, not twice (nor a JSON key twice).
pt1 = run("validate", "--measurements", MEAS, "--group-by", "tp")
n_tp = sum(1 for ln in pt1.stdout.splitlines() if ln.strip().startswith("by tp "))
pj1 = run("validate", "--measurements", MEAS, "--group-by", "tp", "--format", "json")
if pt1.returncode != 0 or n_tp != 1 or pj1.stdout.count('"tp":[') != 1:
    bad(f"--group-by tp: {n_tp} 'by tp' tables, {pj1.stdout.count(chr(34) + 'tp' + chr(34) + ':[')}"
        " JSON keys (expected one each)")

# The table form names the fields and prints one line per group.
pt = run("validate", "--measurements", MEAS, "--group-by", ",".join(fields))
lines = pt.stdout.splitlines()
head = [i for i, ln in enumerate(lines) if ln.strip().startswith("by hardware,model,tp")]
if pt.returncode != 0 or len(head) != 1:
    bad(f"table: no 'by hardware,model,tp' heading (exit {pt.returncode})")
else:
    body = lines[head[0] + 1:head[0] + 1 + len(groups)]
    for g, ln in zip(groups, body):
        if not ln.strip().startswith(g["value"]) or f"{g['n_rows']:6d}" not in ln:
            bad(f"table line '{ln.strip()}' is not group {g['value']} ({g['n_rows']} rows)")

# Serving rows carry their engine host time inside each simulated step: no host share
# (JSON null, "-" in the table), where offline batches have one.
ps = run("validate", "--measurements", "tests/data/meas/serving.jsonl", "--format", "json")
if ps.returncode != 0:
    bad(f"validate serving.jsonl: exit {ps.returncode}: {ps.stderr.strip()}")
else:
    shares = [g["host_share_pct"] for g in json.loads(ps.stdout)["groups"]["model"]]
    if any(x is not None for x in shares):
        bad(f"serving rows: host_share_pct {shares}, expected null")
if any(g["host_share_pct"] is None or g["host_share_pct"] <= 0.0 for g in groups):
    bad("offline batches: a group without a positive host share")
pst = run("validate", "--measurements", "tests/data/meas/serving.jsonl")
model_line = [ln for ln in pst.stdout.splitlines() if ln.strip().startswith("qwen3-32b")][:1]
if not model_line or model_line[0].split()[5] != "-":
    bad(f"serving rows: host column {model_line}, expected '-'")

# Values are compared whole: two model paths of over 160 characters, alike but for their file
# names, are two groups, the first of two rows, in the default table and crossed.
pl = run("validate", "--measurements", "tests/data/meas/long_model_paths.jsonl", "--group-by",
         "model,tp", "--format", "json")
pgroups = json.loads(pl.stdout)["groups"] if pl.returncode == 0 else {}
for key in ("model", "model,tp"):
    got = [(g["value"].split("/")[-1].split(",")[0], g["n_rows"]) for g in pgroups.get(key, [])]
    if got != [("llama-2-7b.json", 2), ("llama-3-8b.json", 1)]:
        bad(f"long model paths, groups['{key}']: {got}")

# Usage errors: exit 2, one line naming the problem.
for args, msg in (
    (["--group-by", "colour"], "validate: --group-by 'colour': expected model, hardware"),
    (["--group-by", "tp,,model"], "validate: --group-by 'tp,,model': an empty field"),
    (["--group-by", "tp,"], "validate: --group-by 'tp,': an empty field"),
    (["--group-by", "tp,tp"], "validate: --group-by: 'tp' given twice"),
    (["--group-by", "model,hardware,kind,dtype,engine,tp,batch"],
     "validate: --group-by: at most 6 fields"),
):
    q = run("validate", "--measurements", MEAS, *args)
    if q.returncode != 2 or msg not in q.stderr or len(q.stderr.strip().splitlines()) != 1:
        bad(f"{' '.join(args)}: exit {q.returncode}, stderr '{q.stderr.strip()}', "
            f"expected 2 and '{msg}'")
q = run("calibrate", "--measurements", MEAS, "--out", "/dev/null", "--group-by", "tp")
if q.returncode != 2 or "calibrate: --group-by belongs to validate" not in q.stderr:
    bad(f"calibrate --group-by: exit {q.returncode}, '{q.stderr.strip()}'")
q = run("check", "--measurements", MEAS, "--select", "hardware=h100-sxm", "--calibration",
        "calibrations/h100-sxm.json", "--group-by", "tp")
if q.returncode != 2 or "check: --group-by belongs to validate" not in q.stderr:
    bad(f"check --group-by: exit {q.returncode}, '{q.stderr.strip()}'")

print(f"group_by: {len(groups)} groups of {out['n_rows']} rows checked; "
      f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
