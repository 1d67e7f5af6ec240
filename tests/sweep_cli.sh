#!/bin/sh
# Sweep, capacity and plot commands end to end (tests/sweep.cmake).
# usage: sweep_cli.sh LLMSTEP CHECK_IMAGE SOURCE_DIR
set -u
bin=$1
check_image=$2
src=$3
. "$(dirname "$0")/lib.sh"

# --- row count and order: models x hw x tp x batch x context, context innermost ---
"$bin" sweep --model llama-3.1-8b,llama-2-7b --hw h100-sxm,a100-sxm-80gb --tp 1,2 --batch 1:8 \
    --context 512,1024,2048 >"$tmp/all.csv" 2>"$tmp/err" || bad "sweep exit $?"
expect "rows (2 x 2 x 2 x 4 x 3 + header)" "$(wc -l <"$tmp/all.csv" | tr -d ' ')" 97
expect "stderr empty" "$(cat "$tmp/err")" ""
expect "row 1" "$(sed -n 2p "$tmp/all.csv" | cut -d, -f1-6)" "llama-3.1-8b,h100-sxm,decode,1,1,512"
expect "row 2 (context next)" "$(sed -n 3p "$tmp/all.csv" | cut -d, -f1-6)" "llama-3.1-8b,h100-sxm,decode,1,1,1024"
expect "row 4 (then batch)" "$(sed -n 5p "$tmp/all.csv" | cut -d, -f1-6)" "llama-3.1-8b,h100-sxm,decode,1,2,512"
expect "row 13 (then tp)" "$(sed -n 14p "$tmp/all.csv" | cut -d, -f1-6)" "llama-3.1-8b,h100-sxm,decode,2,1,512"
expect "row 25 (then hardware)" "$(sed -n 26p "$tmp/all.csv" | cut -d, -f1-6)" "llama-3.1-8b,a100-sxm-80gb,decode,1,1,512"
expect "last row" "$(tail -n 1 "$tmp/all.csv" | cut -d, -f1-6)" "llama-2-7b,a100-sxm-80gb,decode,2,8,2048"
expect "columns" "$(awk -F, '{print NF}' "$tmp/all.csv" | sort -u)" 19

# --- configurations that do not fit are marked, not dropped ---
"$bin" sweep --model mixtral-8x7b,llama-2-7b --hw h100-sxm --tp 1,3 --batch 1 --context 4096 \
    >"$tmp/nofit.csv" || bad "sweep nofit exit $?"
expect "nofit rows" "$(wc -l <"$tmp/nofit.csv" | tr -d ' ')" 5
expect "mixtral tp1" "$(sed -n 2p "$tmp/nofit.csv" | cut -d, -f4,14,15)" "1,false,no_memory"
expect "mixtral tp3" "$(sed -n 3p "$tmp/nofit.csv" | cut -d, -f4,14,15)" "3,false,bad_tp"
expect "llama2 at its limit" "$(sed -n 4p "$tmp/nofit.csv" | cut -d, -f4,14,15)" "1,false,too_long"
"$bin" sweep --model llama-3.1-70b --hw h100-sxm --tp 4 --batch 64,128 --context 4096 \
    --max-model-len 8192 >"$tmp/kv.csv" || bad "sweep kv exit $?"
expect "kv full" "$(cut -d, -f5,14,15 "$tmp/kv.csv" | tail -n 2 | tr '\n' ' ')" "64,true,ok 128,false,kv_full "

# --- --best: the highest tokens/s per GPU among fitting rows with tpot <= SLO (brute force) ---
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1,2,4 --batch 1:256 --context 1024,4096 \
    --slo-tpot-ms 12 --gpu-hour-usd 2.5 >"$tmp/full.csv" || bad "sweep full exit $?"
want=$(awk -F, 'NR > 1 && $14 == "true" && $10 <= 0.012 && $13 > best { best = $13; row = $4 "," $5 "," $6 }
    END { print row }' "$tmp/full.csv")
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1,2,4 --batch 1:256 --context 1024,4096 \
    --slo-tpot-ms 12 --gpu-hour-usd 2.5 --best >"$tmp/best.csv" || bad "sweep best exit $?"
expect "best rows" "$(wc -l <"$tmp/best.csv" | tr -d ' ')" 2
expect "best config" "$(sed -n 2p "$tmp/best.csv" | cut -d, -f4-6)" "$want"
expect "best meets slo" "$(sed -n 2p "$tmp/best.csv" | cut -d, -f18)" true
expect "slo rows" "$(awk -F, 'NR > 1 && $18 == "true"' "$tmp/full.csv" | wc -l | tr -d ' ')" \
    "$(awk -F, 'NR > 1 && $14 == "true" && $10 <= 0.012' "$tmp/full.csv" | wc -l | tr -d ' ')"
# cost per million tokens = 2.5 x tp / 3600 / tokens_per_s x 1e6
# (relative 1e-5: tokens/s is printed to a thousandth)
expect "cost" "$(awk -F, 'NR > 1 && $12 != "" { d = $19 / (2.5 * $4 / 3600 / $12 * 1e6) - 1;
    if (d < 0) d = -d; if (d > 1e-5) n++ } END { print n + 0 }' "$tmp/full.csv")" 0
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1 --batch 1:256 --slo-tpot-ms 1 --best \
    >"$tmp/none.csv" 2>"$tmp/none.err" || bad "sweep best none exit $?"
expect "best none" "$(cat "$tmp/none.err")" "llmstep: sweep: no configuration of llama-3.1-8b on h100-sxm fits and meets the SLOs"

# --- --pareto: exactly the fitting rows no other fitting row dominates (brute force) ---
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1,2,4 --batch 1:256 --context 1024,4096 \
    --pareto >"$tmp/pareto.csv" || bad "sweep pareto exit $?"
awk -F, 'NR > 1 && $14 == "true" { n++; lat[n] = $10 + 0; thr[n] = $13 + 0; key[n] = $4 "," $5 "," $6 }
    END { for (i = 1; i <= n; i++) { d = 0
            for (j = 1; j <= n; j++) if (lat[j] <= lat[i] && thr[j] >= thr[i] &&
                (lat[j] < lat[i] || thr[j] > thr[i] || j < i)) d = 1
            if (!d) print key[i] } }' "$tmp/full.csv" | sort >"$tmp/want_front"
tail -n +2 "$tmp/pareto.csv" | cut -d, -f4-6 | sort >"$tmp/got_front"
if cmp -s "$tmp/want_front" "$tmp/got_front" && [ -s "$tmp/got_front" ]; then ok; else
    bad "pareto frontier differs from brute force"; diff "$tmp/want_front" "$tmp/got_front"; fi
expect "pareto order" "$(tail -n +2 "$tmp/pareto.csv" | cut -d, -f10 | sort -c -g 2>&1 && echo sorted)" sorted

# --- offline and prefill kinds, JSON and table formats ---
"$bin" sweep --model llama-2-7b --hw h100-sxm --tp 1 --batch 1,4 --kind offline --prompt-tokens 128 \
    --output-tokens 16 --format json >"$tmp/off.json" || bad "offline exit $?"
expect "offline json rows" "$(grep -c '^{"model":.*"kind":"offline"' "$tmp/off.json")" 2
expect "offline json end" "$(tail -n 1 "$tmp/off.json")" "]}"
"$bin" sweep --model llama-2-7b --hw h100-sxm --tp 1 --batch 2 --context 512 --kind prefill \
    --format table >"$tmp/pre.txt" || bad "prefill exit $?"
expect "prefill table" "$(wc -l <"$tmp/pre.txt" | tr -d ' ')" 2

# --- calibration folder: <hw-id>.json applies to that hardware only ---
mkdir -p "$tmp/cal"
cp "$src/tests/data/calib_ok.json" "$tmp/cal/h100-sxm.json" 2>/dev/null
sed 's/"test-gpu"/"h100-sxm"/' "$src/tests/data/calib_ok.json" >"$tmp/cal/h100-sxm.json"
"$bin" sweep --model llama-2-7b --hw h100-sxm,a100-sxm-80gb --tp 1 --batch 1 --context 512 \
    --calibration "$tmp/cal" >"$tmp/cal.csv" || bad "calibration dir exit $?"
expect "calibrated column" "$(tail -n +2 "$tmp/cal.csv" | cut -d, -f2,17 | tr '\n' ' ')" \
    "h100-sxm,true a100-sxm-80gb,false "

# --- serving sweeps: rows, order, marking, SLOs at a percentile, --best, open loop ---
# Columns: 4 tp, 5 concurrency, 6 request_rate_per_s, 11/12 ttft_p50/p90_s, 15/16 tpot_p50/p90_s,
# 23 output_tokens_per_s, 24 per GPU, 27 fits, 28 status, 30 meets_slo.
"$bin" sweep --kind serving --model llama-3.1-8b,qwen3-32b --hw h100-sxm --tp 1,2 \
    --concurrency 1:16 --prompt-tokens 512 --output-tokens 64 --slo-ttft-ms 100 \
    --slo-tpot-ms 12 >"$tmp/serve.csv" 2>"$tmp/serve.err" || bad "serving sweep exit $?"
expect "serving rows (2 models x 2 tp x 5 concurrencies + header)" \
    "$(wc -l <"$tmp/serve.csv" | tr -d ' ')" 21
expect "serving stderr empty" "$(cat "$tmp/serve.err")" ""
expect "serving columns" "$(awk -F, '{print NF}' "$tmp/serve.csv" | sort -u)" 31
expect "serving header" "$(head -n 1 "$tmp/serve.csv" | cut -d, -f4-6,12,16,24)" \
    "tp,concurrency,request_rate_per_s,ttft_p90_s,tpot_p90_s,output_tokens_per_s_per_gpu"
expect "serving row 1" "$(sed -n 2p "$tmp/serve.csv" | cut -d, -f1-8)" \
    "llama-3.1-8b,h100-sxm,serving,1,1,,512,64"
expect "serving row 2 (concurrency next)" "$(sed -n 3p "$tmp/serve.csv" | cut -d, -f4,5)" "1,2"
expect "serving row 6 (then tp)" "$(sed -n 7p "$tmp/serve.csv" | cut -d, -f4,5)" "2,1"
expect "serving row 11 (then model)" "$(sed -n 12p "$tmp/serve.csv" | cut -d, -f1,4,5)" "qwen3-32b,1,1"
# Qwen3-32B's 64 GB of bf16 weights do not fit one 80 GB H100 with vLLM's 0.9 budget.
expect "serving no_memory marked" "$(sed -n 12p "$tmp/serve.csv" | cut -d, -f12,27,28,30)" \
    ",false,no_memory,false"
expect "serving ok rows" "$(awk -F, 'NR > 1 && $28 == "ok"' "$tmp/serve.csv" | wc -l | tr -d ' ')" 15
expect "serving slo rows (p90)" \
    "$(awk -F, 'NR > 1 && $30 == "true"' "$tmp/serve.csv" | wc -l | tr -d ' ')" \
    "$(awk -F, 'NR > 1 && $27 == "true" && $12 <= 0.1 && $16 <= 0.012' "$tmp/serve.csv" | wc -l | tr -d ' ')"
# The SLOs must cut somewhere in this sweep, or the count above proves nothing.
missed=$(awk -F, 'NR > 1 && $27 == "true" && $30 == "false"' "$tmp/serve.csv" | wc -l | tr -d ' ')
if [ "$missed" -gt 0 ] && [ "$missed" -lt 15 ]; then ok; else bad "serving slo cuts nothing ($missed of 15 miss)"; fi
expect "serving per gpu = output tokens/s / tp" "$(awk -F, 'NR > 1 && $28 == "ok" {
    d = $24 - $23 / $4; if (d < 0) d = -d; if (d > 1e-3) n++ } END { print n + 0 }' "$tmp/serve.csv")" 0
# The same point as `llmstep serve` gives the same numbers.
"$bin" serve --model qwen3-32b --hw h100-sxm --tp 2 --concurrency 8 --prompt-tokens 512 \
    --output-tokens 64 --format json >"$tmp/serve1.json" || bad "serve exit $?"
want=$(sed 's/.*"ttft_s":{[^}]*"p90":\([^,]*\),.*/\1/' "$tmp/serve1.json" | awk '{ printf "%.9f", $1 }')
expect "serving point = llmstep serve" "$(awk -F, '$1 == "qwen3-32b" && $4 == 2 && $5 == 8 { print $12 }' "$tmp/serve.csv")" "$want"
# --slo-percentile 50 judges the p50 columns.
"$bin" sweep --kind serving --model llama-3.1-8b --hw h100-sxm --tp 1,2 --concurrency 1:16 \
    --prompt-tokens 512 --output-tokens 64 --slo-ttft-ms 50 --slo-tpot-ms 5 --slo-percentile 50 \
    >"$tmp/serve50.csv" || bad "serving p50 exit $?"
expect "serving slo rows (p50)" \
    "$(awk -F, 'NR > 1 && $30 == "true"' "$tmp/serve50.csv" | wc -l | tr -d ' ')" \
    "$(awk -F, 'NR > 1 && $27 == "true" && $11 <= 0.05 && $15 <= 0.005' "$tmp/serve50.csv" | wc -l | tr -d ' ')"
# --best: the highest output tokens/s per GPU among rows meeting the SLOs (brute force on the
# full CSV); a block with no such row says so on stderr.
want=$(awk -F, 'NR > 1 && $30 == "true" && $24 > best { best = $24; row = $1 "," $4 "," $5 }
    END { print row }' "$tmp/serve.csv")
"$bin" sweep --kind serving --model llama-3.1-8b,qwen3-32b --hw h100-sxm --tp 1,2 \
    --concurrency 1:16 --prompt-tokens 512 --output-tokens 64 --slo-ttft-ms 100 \
    --slo-tpot-ms 12 --best --seeds 1 >"$tmp/sbest.csv" 2>"$tmp/sbest.err" ||
    bad "serving best exit $?"
expect "serving best rows" "$(wc -l <"$tmp/sbest.csv" | tr -d ' ')" 2
expect "serving best config" "$(sed -n 2p "$tmp/sbest.csv" | cut -d, -f1,4,5)" "$want"
# --best judges each point over 20 seeds by default (the workload's lengths vary): the same
# brute force on the full sweep with --seeds 20, whose SLO columns are the worst seed's.
"$bin" sweep --kind serving --model llama-3.1-8b --hw h100-sxm --tp 1,2 --concurrency 1:16 \
    --prompt-tokens 512 --output-tokens 64 --slo-ttft-ms 100 --slo-tpot-ms 12 --seeds 20 \
    >"$tmp/serve5.csv" || bad "serving seeds exit $?"
expect "seeds columns" "$(head -n 1 "$tmp/serve5.csv" | cut -d, -f32-)" \
    "n_seeds,ttft_slo_s,tpot_slo_s,ttft_spread_s,tpot_spread_s"
expect "slo on the worst seed" "$(awk -F, 'NR > 1 && $27 == "true" && \
    (($30 == "true") != ($33 <= 0.1 && $34 <= 0.012)) { n++ } END { print n + 0 }' \
    "$tmp/serve5.csv")" 0
want5=$(awk -F, 'NR > 1 && $30 == "true" && $24 > best { best = $24; row = $1 "," $4 "," $5 }
    END { print row }' "$tmp/serve5.csv")
"$bin" sweep --kind serving --model llama-3.1-8b --hw h100-sxm --tp 1,2 --concurrency 1:16 \
    --prompt-tokens 512 --output-tokens 64 --slo-ttft-ms 100 --slo-tpot-ms 12 --best \
    >"$tmp/sbest5.csv" || bad "serving best seeds exit $?"
expect "serving best over 20 seeds" "$(sed -n 2p "$tmp/sbest5.csv" | cut -d, -f1,4,5,32)" "$want5,20"
expect "serving best none" "$(cat "$tmp/sbest.err")" \
    "llmstep: sweep: no configuration of qwen3-32b on h100-sxm fits and meets the SLOs"
# Open loop: rates 2 and 8 requests/s, no concurrency; too long prompts are marked.
"$bin" sweep --kind serving --model llama-2-7b --hw h100-sxm --tp 1 --request-rate 2:8 \
    --prompt-tokens 256 --output-tokens 32 --num-requests 50 >"$tmp/rate.csv" || bad "rate exit $?"
expect "open loop rows" "$(tail -n +2 "$tmp/rate.csv" | cut -d, -f5,6,9,28 | tr '\n' ' ')" \
    ",2.000000,50,ok ,4.000000,50,ok ,8.000000,50,ok "
# --jobs: the points simulated on several threads give the same rows in the same order as one
# thread (each simulation is a pure function of its point), byte for byte: closed loop over
# models with a no_memory block, several seeds and --best, open loop, JSON.
for args in "--model llama-3.1-8b,qwen3-32b --tp 1,2 --concurrency 1:16 --slo-ttft-ms 100 \
    --slo-tpot-ms 12" "--model llama-3.1-8b --tp 1,2 --concurrency 1:16 --seeds 3 --format json" \
    "--model llama-3.1-8b --tp 1,2 --concurrency 1:16 --slo-ttft-ms 100 --slo-tpot-ms 12 --best \
    --seeds 4" "--model llama-2-7b --tp 1,2 --request-rate 2:8 --num-requests 50"; do
    for j in 1 2 5; do
        # shellcheck disable=SC2086
        "$bin" sweep --kind serving --hw h100-sxm $args --prompt-tokens 512 --output-tokens 64 \
            --jobs $j >"$tmp/jobs$j.out" 2>&1 || bad "--jobs $j exit $? ($args)"
    done
    if [ -s "$tmp/jobs1.out" ] && cmp -s "$tmp/jobs1.out" "$tmp/jobs2.out" &&
        cmp -s "$tmp/jobs1.out" "$tmp/jobs5.out"; then ok; else bad "--jobs changes the rows ($args)"; fi
done
"$bin" sweep --kind serving --model llama-3.1-8b --hw h100-sxm --tp 1 --concurrency 1 \
    --prompt-tokens 512 --output-tokens 64 --jobs 0 >/dev/null 2>"$tmp/j0.err"
expect "--jobs 0 exit" "$?" 2
"$bin" sweep --model llama-3.1-8b --hw h100-sxm --tp 1 --batch 1 --jobs 2 >/dev/null 2>"$tmp/jd.err"
expect "--jobs on decode exit" "$?" 2
expect "--jobs on decode message" "$(cat "$tmp/jd.err")" \
    "llmstep: sweep: --jobs belongs to --kind serving"
"$bin" sweep --kind serving --model llama-2-7b --hw h100-sxm --tp 1 --concurrency 2 \
    --prompt-tokens 4000 --output-tokens 97 >"$tmp/long.csv" || bad "too long exit $?"
expect "serving too long" "$(tail -n 1 "$tmp/long.csv" | cut -d, -f27,28)" "false,too_long"
"$bin" sweep --kind serving --model llama-2-7b --hw h100-sxm --tp 1 --concurrency 1,2 \
    --prompt-tokens 128 --output-tokens 16 --format json >"$tmp/serve.json" || bad "serving json exit $?"
expect "serving json rows" "$(grep -c '^{"model":.*"kind":"serving".*"ttft_s":{"mean":' "$tmp/serve.json")" 2
expect "serving json end" "$(tail -n 1 "$tmp/serve.json")" "]}"
"$bin" sweep --kind serving --model llama-2-7b --hw h100-sxm --tp 1 --concurrency 1,2 \
    --prompt-tokens 128 --output-tokens 16 --format table >"$tmp/serve.txt" || bad "serving table exit $?"
expect "serving table" "$(wc -l <"$tmp/serve.txt" | tr -d ' ')" 3

# --- capacity: JSON keys, --tp all ---
"$bin" capacity --model llama-3.1-70b --hw h100-sxm --tp 2 --max-model-len 8192 --format json --engine vllm-v0 \
    >"$tmp/cap.json" || bad "capacity exit $?"
for k in '"weights_bytes_per_gpu":70588579840' '"kv_bytes_per_token_per_gpu":163840' \
    '"kv_capacity_tokens":15184' '"max_seqs_at_context":3' '"fits":true' '"smallest_tp_that_fits":2'; do
    if grep -qF "$k" "$tmp/cap.json"; then ok; else bad "capacity json lacks $k"; fi
done
"$bin" capacity --model llama-3.1-70b --hw h100-sxm --tp all --format json >"$tmp/capall.json" ||
    bad "capacity all exit $?"
expect "capacity tps" "$(sed 's/.*"tps"://' "$tmp/capall.json" | grep -o '"tp":[0-9]*' | tr '\n' ' ')" \
    '"tp":1 "tp":2 "tp":4 "tp":8 '

# --- plots: every command writes a valid SVG and PNG ---
for ext in svg png; do
    "$bin" plot roofline --hw h100-sxm --model llama-3.1-8b --prefill 2x1024 --decode 32x2048 \
        --out "$tmp/roof.$ext" >/dev/null || bad "plot roofline $ext exit $?"
    "$bin" plot sweep --model llama-3.1-8b --hw h100-sxm --tp 1,2 --batch 1:64 --context 2048 \
        --out "$tmp/sweep.$ext" >/dev/null || bad "plot sweep $ext exit $?"
    "$bin" plot validate --measurements "$src/measurements/example.jsonl" \
        --out "$tmp/validate.$ext" >/dev/null || bad "plot validate $ext exit $?"
    "$bin" plot serving --model llama-3.1-8b --hw h100-sxm --tp 1 --concurrency 1:16 \
        --prompt-tokens 512 --output-tokens 64 --measurements "$src/tests/data/serving_meas.jsonl" \
        --out "$tmp/serving.$ext" >"$tmp/serving.out" || bad "plot serving $ext exit $?"
    # Of the 4 rows, the TP 2 row and the 1024-token row are not this plot's.
    expect "plot serving measured points" "$(head -n 1 "$tmp/serving.out")" \
        "plot serving: 2 measured points of 4 rows drawn"
    for p in roof sweep validate serving; do
        if "$check_image" "$tmp/$p.$ext" "$ext" >"$tmp/ci" 2>&1; then ok; else
            bad "$p.$ext: $(cat "$tmp/ci")"; fi
    done
done
expect "png size" "$("$check_image" "$tmp/sweep.png" png)" "png 1500x620"
"$bin" plot serving --model llama-3.1-8b --hw h100-sxm --tp 1 --request-rate 2:8 \
    --prompt-tokens 256 --output-tokens 32 --num-requests 50 --out "$tmp/rate.svg" >/dev/null ||
    bad "plot serving open loop exit $?"
if "$check_image" "$tmp/rate.svg" svg >"$tmp/ci" 2>&1 && grep -q 'Request rate (requests/s)' "$tmp/rate.svg"; then
    ok; else bad "rate.svg: $(cat "$tmp/ci")"; fi
expect "serving png size" "$("$check_image" "$tmp/serving.png" png)" "png 1500x620"
# plot validate predicts as validate does: a serving row simulated (the closed-loop row of
# tests/data/meas/serving.jsonl, vLLM 0.12, with --scheduler-rule aic-benchmark giving it its
# engine arguments), and offline rows each on the engine its engine_version names; the
# title's MAPE is validate's, to its 0.1%.
for args in "$src/tests/data/meas/serving.jsonl --select id=c-ttft --scheduler-rule aic-benchmark" \
    "$src/measurements/example.jsonl --select hardware=h100-sxm"; do
    # shellcheck disable=SC2086
    "$bin" plot validate --measurements $args --out "$tmp/pv.svg" >/dev/null ||
        bad "plot validate $args exit $?"
    # shellcheck disable=SC2086
    v=$("$bin" validate --measurements $args --format json |
        sed -n 's/^{"n_rows":[0-9]*,"mape_pct":\([-0-9.e+]*\),.*/\1/p')
    expect "plot validate MAPE = validate's ($args)" \
        "$(grep -o 'MAPE [0-9.]*%' "$tmp/pv.svg" | head -n 1)" "$(printf 'MAPE %.1f%%' "$v")"
done
# Groups by whole values: two model paths of over 160 characters, alike but for their file
# names, are two legend entries (of 2 and 1 rows), labelled by their ends.
"$bin" plot validate --measurements "$src/tests/data/meas/long_model_paths.jsonl" --group model \
    --out "$tmp/pv_long.svg" >/dev/null || bad "plot validate long paths exit $?"
expect "plot validate long paths: two groups" \
    "$(grep -c -e 'llama-2-7b.json (2)' -e 'llama-3-8b.json (1)' "$tmp/pv_long.svg")" 2
expect "no temporary files left" "$(ls "$tmp" | grep -c '\.tmp\.')" 0
# Without gnuplot: exit 1, one line naming the package, no output file.
LLMSTEP_GNUPLOT=/nonexistent/gnuplot "$bin" plot roofline --hw h100-sxm --model llama-3.1-8b \
    --decode 1x128 --out "$tmp/none.svg" >/dev/null 2>"$tmp/gp.err"
expect "no gnuplot exit" "$?" 1
if grep -q "apt-get install gnuplot-nox" "$tmp/gp.err" && [ ! -e "$tmp/none.svg" ]; then ok; else
    bad "no gnuplot message: $(cat "$tmp/gp.err")"; fi

summary sweep_cli
