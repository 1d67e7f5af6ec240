#!/bin/sh
# The decode-attention kernel the engine launches (issue 24, item 1; docs/model.md, "Decode
# attention kernel choice"). Mistral-7B v0.1 (sliding window 4096) and Llama-3-8B have the same
# attention shapes (32 query heads, 8 KV heads of 128, 32 layers); under vLLM 0.5-0.6 V0 the
# window sends Mistral to the XFormers backend and vLLM's PagedAttention, whose V1 kernel reads
# K/V once per query head, while Llama-3-8B decodes with FlashAttention-2. Oracle: the shared
# Argonne H100 runs at TP 1, batch 32, 2048 + 2048 tokens: Mistral 67.22 s, Llama-3-8B 31.67 s,
# a ratio of 2.12 for the whole run (prefills included). The decode step at context 2048 must
# differ by about that (1.5 to 2.5) under vllm-v0, and by under 10% under a V1 engine, where
# both decode with a kernel that shares each KV head (FlashAttention 2/3 or FlashInfer).
# Also: predict names the kernel and why. No ../shared/data needed.
# usage: decode_kernel.sh LLMSTEP_BINARY
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
jnum() {
    sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1 | awk 'NF { printf "%.17g\n", $1 }'
}
for e in vllm-v0 vllm-v1; do
    for m in mistral-7b llama-3-8b; do
        "$bin" predict --model $m --hw h100-sxm --decode 32x2048 --engine $e --format json \
            >"$tmp/$m-$e.json" || bad "predict $m $e exit $?"
    done
    r=$(awk -v a="$(jnum step_time_s "$tmp/mistral-7b-$e.json")" \
        -v b="$(jnum step_time_s "$tmp/llama-3-8b-$e.json")" 'BEGIN { printf "%.4f", a / b }')
    echo "$e: mistral-7b / llama-3-8b decode step at batch 32, context 2048: $r"
    if [ $e = vllm-v0 ]; then
        compare "$e ratio above 1.5" 1.5 "<" "$r"
        compare "$e ratio below 2.5" "$r" "<" 2.5
    else
        within "$e ratio within 10% of 1" "$r" 1 0.10
    fi
done
# The kernel and the reason, in the table output.
out=$("$bin" predict --model mistral-7b --hw h100-sxm --decode 32x2048 --engine vllm-v0)
case $out in
*"decode attention vLLM PagedAttention V1"*"K/V read once per query head"*) ok ;;
*) bad "predict does not name PagedAttention V1: $out" ;;
esac
out=$("$bin" predict --model mistral-7b --hw h100-sxm --decode 16x2048 --engine vllm-v0)
case $out in
*"decode attention vLLM PagedAttention V2"*"K/V read once per KV head"*) ok ;;
*) bad "predict does not name PagedAttention V2 at 16 x 32 heads = 512: $out" ;;
esac
# ROCm: vLLM V0 up to v0.6.1 decodes every model with PagedAttention
# (vllm/attention/backends/rocm_flash_attn.py), recorded at max_model_len when that is below
# 8192 (vllm/config.py): Llama-2-7B (4096 positions) at 4096, Llama-3-8B at 8192. On MI300X
# (attn_decode_kv_per_q_head_flag 1: K/V once per query head) V2 reads per query head too.
# A V1 engine and an NVIDIA GPU keep their kernels.
out=$("$bin" predict --model llama-2-7b --hw mi300x --decode 32x2048 --engine vllm-v0)
case $out in
*"PagedAttention V1 (engine vllm-v0: ROCm backend"*"capture length 4096)"*) ok ;;
*) bad "mi300x llama-2-7b: not PagedAttention V1 at 4096: $out" ;;
esac
out=$("$bin" predict --model llama-3-8b --hw mi300x --decode 16x2048 --engine vllm-v0)
case $out in
*"PagedAttention V2 (engine vllm-v0: ROCm backend"*"capture length 8192)"*"once per query head"*) ok ;;
*) bad "mi300x llama-3-8b batch 16: not PagedAttention V2 per query head: $out" ;;
esac
out=$("$bin" predict --model llama-3-8b --hw mi300x --decode 32x2048 --engine vllm-v1)
case $out in
*PagedAttention*) bad "mi300x under vllm-v1 names PagedAttention: $out" ;;
*) ok ;;
esac
out=$("$bin" predict --model llama-3-8b --hw h100-sxm --decode 32x2048 --engine vllm-v0)
case $out in
*PagedAttention*) bad "h100 llama-3-8b under vllm-v0 names PagedAttention: $out" ;;
*) ok ;;
esac
summary decode_kernel
