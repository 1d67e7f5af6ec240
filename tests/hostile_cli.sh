#!/bin/sh
# Hostile inputs that need generated files (issue 10): each must fail fast with one line and
# a non-zero exit, within a time and memory budget (ulimit -v), never hang or grow.
# usage: hostile_cli.sh LLMSTEP
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
# The address-space limit needs an uninstrumented binary: AddressSanitizer reserves terabytes
# of shadow memory up front, so under ASan only the time limit applies.
vlimit=524288
if ldd "$bin" 2>/dev/null | grep -q libasan; then
    vlimit=unlimited
fi
# refuse NAME WANT_RC WANT_TEXT ARGS...: exit status, one stderr line containing WANT_TEXT,
# under 10 s of wall time and (without ASan) 512 MiB of address space.
refuse() {
    name=$1; want_rc=$2; want=$3; shift 3
    start=$(date +%s)
    (ulimit -v "$vlimit"; exec timeout 10 "$bin" "$@") >"$tmp/o" 2>"$tmp/e"
    rc=$?
    took=$(($(date +%s) - start))
    [ "$rc" = "$want_rc" ] && ok || bad "$name: exit $rc, want $want_rc ($(head -c 300 "$tmp/e"))"
    grep -qF -- "$want" "$tmp/e" && ok || bad "$name: stderr lacks [$want]: $(head -c 300 "$tmp/e")"
    [ "$(wc -l <"$tmp/e")" -le 1 ] && ok || bad "$name: more than one line on stderr"
    [ "$took" -le 5 ] && ok || bad "$name: took $took s"
}

mkfifo "$tmp/fifo"
# 100,000 keys in one config: refused as too many (a quadratic duplicate check took 49 s; the
# duplicate walk sorts them).
awk 'BEGIN { printf "{"; for (i = 0; i < 100000; i++) printf "\"k%d\": %d, ", i, i;
             printf "\"model_type\": \"llama\"}\n" }' >"$tmp/many_keys.json"
refuse "100k keys" 1 "too many keys in one object (at most 4096)" \
    predict --model "$tmp/many_keys.json" --hw h100-sxm --decode 1x10
# A 300 MB (sparse) file is refused by its size, not read whole.
truncate -s 300M "$tmp/big.json"
refuse "300 MB config" 1 "too large" predict --model "$tmp/big.json" --hw h100-sxm --decode 1x10
# A device or a FIFO never ends: only regular files are read.
refuse "/dev/zero as a model" 1 "not a regular file" predict --model /dev/zero --hw h100-sxm --decode 1x10
refuse "a FIFO as measurements" 1 "not a regular file" validate --measurements "$tmp/fifo"
# A gzip bomb (200 MB of zeros in 190 KB) as a benchmark output: refused at 64 MiB, within
# the 512 MiB address-space limit (it took 527 MB before).
head -c 200000000 /dev/zero | gzip -9 >"$tmp/bomb.gz"
refuse "gzip bomb as --stream" 1 "more than 64 MiB (decompressed)" \
    hw import --base h100-sxm --name x --stream "$tmp/bomb.gz" --out "$tmp/never.json"
[ ! -e "$tmp/never.json" ] && ok || bad "a profile was written"
refuse "a FIFO as --nccl" 1 "not a regular file" \
    hw import --base h100-sxm --name x --nccl "$tmp/fifo" --out "$tmp/never.json"

# An engine profile without the profiling-peak figure a V1 engine needs, or with a flag out of
# its range: refused naming the file, line and field (docs/engine.md, "The profiling run's peak").
eng="$(dirname "$0")/../engines/vllm-v1.json"
sed 's/"sampler_logit_bytes"/"sampler_logit_byte"/' "$eng" >"$tmp/eng_misspelled.json"
refuse "engine: misspelled sampler figure" 1 "eng_misspelled.json:" \
    capacity --model llama-3.1-8b --hw h100-sxm --engine "$tmp/eng_misspelled.json"
# The figure's object spans "sampler_logit_bytes": { ... }, (its lines as the profile writes them).
awk '/^  "sampler_logit_bytes": \{/ { skip = 1 } skip && /^  \},?$/ { skip = 0; next } !skip' \
    "$eng" >"$tmp/eng_missing.json"
refuse "engine: no sampler figure" 1 "sampler_logit_bytes: required figure missing" \
    capacity --model llama-3.1-8b --hw h100-sxm --engine "$tmp/eng_missing.json"
sed '/"moe_workspace_persistent"/,/}/s/"value": 1/"value": 2/' "$eng" >"$tmp/eng_flag.json"
refuse "engine: workspace flag 2" 1 "moe_workspace_persistent.value: out of range" \
    capacity --model llama-3.1-8b --hw h100-sxm --engine "$tmp/eng_flag.json"

# Outputs are written atomically and never replace a non-regular file.
refuse "calibration onto a FIFO" 1 "not a regular file" calibrate \
    --measurements "$(dirname "$0")/../measurements/example.jsonl" --select hardware=h100-sxm \
    --out "$tmp/fifo"
[ -p "$tmp/fifo" ] && ok || bad "the FIFO was replaced"
# The temporary is a fresh name (mkstemp, O_EXCL): a file planted at the old predictable name
# <out>.tmp.<pid> is never written through; the replaced file keeps its permissions; a new one
# gets 0666 less the umask; nothing is left beside it.
ex="$(dirname "$0")/../measurements/example.jsonl"
echo old >"$tmp/cal.json"
chmod 640 "$tmp/cal.json"
"$bin" calibrate --measurements "$ex" --select hardware=h100-sxm --out "$tmp/cal.json" \
    >/dev/null 2>&1 || bad "calibrate --out an existing file exit $?"
expect "replaced file keeps mode 640" "$(stat -c %a "$tmp/cal.json")" 640
grep -q '"alpha"' "$tmp/cal.json" && ok || bad "the calibration was not written"
(umask 077 && "$bin" calibrate --measurements "$ex" --select hardware=h100-sxm \
    --out "$tmp/new.json" >/dev/null 2>&1) || bad "calibrate --out a new file exit $?"
expect "new file mode under umask 077" "$(stat -c %a "$tmp/new.json")" 600
expect "no temporary left" "$(ls "$tmp" | grep -c '\.tmp\.')" 0
echo victim >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/cal2.json.tmp.$$"
"$bin" calibrate --measurements "$ex" --select hardware=h100-sxm --out "$tmp/cal2.json" \
    >/dev/null 2>&1 || bad "calibrate next to a planted link exit $?"
expect "planted link's target untouched" "$(cat "$tmp/victim")" victim
[ -f "$tmp/cal2.json" ] && [ ! -L "$tmp/cal2.json" ] && ok || bad "cal2.json is not a regular file"

# A kernel table of 1.2 million rows in a 270 kB gzip stops at 64 MiB decompressed (it was read
# whole: 20 M rows took 4.3 GB; issue 27).
mkdir "$tmp/tables"
awk 'BEGIN { print "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency";
             for (i = 0; i < 1200000; i++)
                 print "VLLM,0.19.0,NVIDIA H100 80GB HBM3,gemm,default,float16,1,1,1,0.001" }' |
    gzip -9 >"$tmp/tables/gemm_perf.csv.gz"
refuse "a table bomb" 1 "more than 64 MiB (decompressed); not a kernel table" \
    hw import --base h100-sxm --name x --tables "$tmp/tables" --out "$tmp/never.json"
[ ! -e "$tmp/never.json" ] && ok || bad "a profile was written from the table bomb"

# calibrate --fit on rows where leaving a model out leaves one row: the calibration is written
# (alpha/beta only), the check says why it did not run, no other command's message (issue 27).
"$bin" calibrate --measurements "$(dirname "$0")/data/meas/fit_one_row_fold.jsonl" --fit profile \
    --out "$tmp/fold.json" >"$tmp/fold.out" 2>"$tmp/fold.err"
expect "fit with a one-row fold exit" "$?" 0
[ -f "$tmp/fold.json" ] && ok || bad "no calibration written"
grep -q "leaves 1 row, fewer than the 3 a figure fit needs" "$tmp/fold.out" && ok ||
    bad "the check's reason: $(cat "$tmp/fold.out")"
grep -q "validate --holdout" "$tmp/fold.out" "$tmp/fold.err" && bad "another command's message" || ok

# An output never replaces a file the command read (issue 27: serve --timeline replaced the
# model, hw or calibration file, calibrate --out the engine profile, hw import --force its
# STREAM input). Each is refused (exit 2) and the input is left byte for byte.
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$tmp/in"
cp "$here/models/llama-3.1-8b.json" "$tmp/in/m.json"
cp "$here/hwprofiles/h100-sxm.json" "$tmp/in/hw.json"
cp "$here/calibrations/h100-sxm.json" "$tmp/in/cal.json"
cp "$here/engines/vllm-v0.json" "$tmp/in/eng.json"
printf 'Function    Best Rate MB/s  Avg time     Min time     Max time\nCopy:  3000000.0  0.1 0.1 0.1\n' \
    >"$tmp/in/st.txt"
for f in m hw cal; do
    cp "$tmp/in/$f.json" "$tmp/in/$f.orig"
    refuse "serve --timeline $f.json" 2 "--timeline $tmp/in/$f.json is the input" serve \
        --model "$tmp/in/m.json" --hw "$tmp/in/hw.json" --calibration "$tmp/in/cal.json" \
        --concurrency 2 --prompt-tokens 10 --output-tokens 5 --timeline "$tmp/in/$f.json"
    cmp -s "$tmp/in/$f.json" "$tmp/in/$f.orig" && ok || bad "serve --timeline changed $f.json"
done
cp "$tmp/in/eng.json" "$tmp/in/eng.orig"
refuse "calibrate --out the engine" 2 "--out $tmp/in/eng.json is the input" calibrate \
    --measurements "$here/measurements/example.jsonl" --select hardware=h100-sxm \
    --engine "$tmp/in/eng.json" --out "$tmp/in/eng.json"
cmp -s "$tmp/in/eng.json" "$tmp/in/eng.orig" && ok || bad "calibrate --out changed the engine"
cp "$tmp/in/st.txt" "$tmp/in/st.orig"
refuse "hw import --out its input" 2 "--out $tmp/in/st.txt is the input" hw import \
    --base h100-sxm --name x --stream "$tmp/in/st.txt" --out "$tmp/in/st.txt" --force
cmp -s "$tmp/in/st.txt" "$tmp/in/st.orig" && ok || bad "hw import --force changed its input"

# More outputs that must not replace an input (issue 27, second probe): plot --out over the
# model it draws, calibrate --out over a trace a row replays, hw import --out into the folder
# of kernel tables it reads; import-bench checks both outputs before writing either.
cp "$here/models/llama-3.1-8b.json" "$tmp/in/m.svg"
cp "$tmp/in/m.svg" "$tmp/in/m.orig"
refuse "plot --out its model" 2 "--out $tmp/in/m.svg is the input $tmp/in/m.svg" plot roofline \
    --model "$tmp/in/m.svg" --hw h100-sxm --decode 1x100 --out "$tmp/in/m.svg"
cmp -s "$tmp/in/m.svg" "$tmp/in/m.orig" && ok || bad "plot --out changed the model"
printf '{"arrival_s": 0, "prompt_tokens": 16, "output_tokens": 4}\n{"arrival_s": 0.1, "prompt_tokens": 16, "output_tokens": 4}\n' \
    >"$tmp/in/tr.jsonl"
cp "$tmp/in/tr.jsonl" "$tmp/in/tr.orig"
for m in ttft_mean tpot_mean; do
    printf '{"id":"%s","source":"s","hardware":"h100-sxm","model":"llama-3.1-8b","tp":1,"kind":"serving","metric":"%s","workload":{"trace":"tr.jsonl"},"measured_s":0.05}\n' \
        "$m" "$m"
done >"$tmp/in/rows.jsonl"
refuse "calibrate --out a row's trace" 2 "--out $tmp/in/tr.jsonl is the input" calibrate \
    --measurements "$tmp/in/rows.jsonl" --no-band --out "$tmp/in/tr.jsonl"
cmp -s "$tmp/in/tr.jsonl" "$tmp/in/tr.orig" && ok || bad "calibrate --out changed the trace"
mkdir -p "$tmp/in/tables"
refuse "hw import --out into its tables" 2 "is in the folder of kernel tables" hw import \
    --base h100-sxm --name x --tables "$tmp/in/tables" --out "$tmp/in/tables/gemm_perf.csv"
mkdir -p "$tmp/in/outdir"
refuse "import-bench --out a folder" 1 "exists and is not a regular file" import-bench \
    llmservingsim "$here/tests/data/bench/lss_requests.jsonl" --hardware rtx-4090 \
    --model llama-3.1-8b --tp 1 --trace "$tmp/in/tr.jsonl" --out "$tmp/in/outdir"
cmp -s "$tmp/in/tr.jsonl" "$tmp/in/tr.orig" && ok || bad "import-bench wrote the trace first"

# A serving simulation holds at most 2^20 requests (issue 27: a row of 2^24 held 1.9 GB, three
# of them 5 GB). A closed loop of 2^20 clients sends 10 x 2^20 by default: refused with the count.
printf '{"id":"big","source":"s","hardware":"h100-sxm","model":"llama-3.1-8b","tp":1,"kind":"serving","metric":"ttft_mean","workload":{"arrival":"closed","concurrency":1048576,"prompt_tokens":1,"output_tokens":1},"measured_s":0.05}\n' \
    >"$tmp/big.jsonl"
refuse "a row of 10 x 2^20 requests" 1 "10485760 requests to simulate" validate \
    --measurements "$tmp/big.jsonl"
refuse "serve beyond 2^20 requests" 1 "1048586 requests to simulate" serve --model llama-3.1-8b \
    --hw h100-sxm --concurrency 8 --prompt-tokens 1 --output-tokens 1 --num-requests 1048576 \
    --warmup-requests 10

summary hostile_cli
