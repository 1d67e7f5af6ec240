"""How many conversations of a given length does Llama-3.1-70B hold on 2, 4 or 8 H100s, and
how fast does each of them decode when the KV cache is full? (docs/python.md)

    PYTHONPATH=python python3 python/examples/capacity_plot.py [OUT.svg]
"""

import sys

import numpy as np

import llmstep

model, hw = "llama-3.1-70b", "h100-sxm"
contexts = np.array([512, 1024, 2048, 4096, 8000])
rows = []
for tp in (2, 4, 8):
    # The model's 131072-token limit does not fit at TP 2 (the error says so and how far it
    # would go: 10528 tokens); serve at most 8192 tokens per conversation everywhere.
    d = llmstep.deploy(model, hw, tp=tp, usage="server", max_model_len=8192)
    info = d.info
    # A decode step at context C writes token C + 1: the sequences that hold C + 1 tokens.
    seqs = np.array([d.capacity(int(c) + 1)["max_seqs_at_context"] for c in contexts])
    # One decode step of the full batch, every sequence at that context: one call for all.
    step_s = d.step_grid(count=np.maximum(seqs, 1), context_tokens=contexts)
    for c, n, s in zip(contexts, seqs, step_s):
        rows.append(dict(tp=tp, context_tokens=int(c), max_seqs=int(n), tpot_s=float(s),
                         output_tokens_per_s=float(n / s)))
    print(f"TP {tp}: {info['kv_capacity_tokens']} KV tokens "
          f"({info['kv_budget_bytes'] / 1e9:.1f} GB per GPU after "
          f"{info['weights_bytes'] / 1e9:.1f} GB of weights)")

print(f"{'TP':>3} {'context':>8} {'seqs':>6} {'TPOT ms':>8} {'tokens/s':>9}")
for r in rows:
    print(f"{r['tp']:>3} {r['context_tokens']:>8} {r['max_seqs']:>6} "
          f"{r['tpot_s'] * 1e3:>8.1f} {r['output_tokens_per_s']:>9.0f}")

if len(sys.argv) > 1:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for tp in (2, 4, 8):
        rs = [r for r in rows if r["tp"] == tp]
        x = [r["context_tokens"] for r in rs]
        ax1.plot(x, [r["max_seqs"] for r in rs], marker="o", label=f"TP {tp}")
        ax2.plot(x, [r["tpot_s"] * 1e3 for r in rs], marker="o", label=f"TP {tp}")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("tokens per conversation (prompt + output)")
        ax.grid(True, alpha=0.3)
        ax.legend()
    ax1.set_yscale("log", base=2)
    ax1.set_ylabel("conversations held at once")
    ax2.set_ylabel("time per output token at that batch (ms)")
    fig.suptitle(f"{model} on {hw} (vLLM V1 server defaults, bf16)")
    fig.tight_layout()
    fig.savefig(sys.argv[1])
    print(f"wrote {sys.argv[1]}")
