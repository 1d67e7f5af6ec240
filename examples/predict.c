/*
 * predict.c - llmstep from C: how long does one decode step of 32 sequences at 1024 tokens of
 * context take for Llama-3.1-8B on one H100, how many such sequences fit, and what TTFT and
 * TPOT does a server see at 16 concurrent users?
 *
 * Build against an installed llmstep:
 *   cc predict.c $(pkg-config --cflags --libs llmstep) -o predict
 * usage: predict [MODEL [HW]]
 */
#include <stdio.h>

#include <llmstep.h>

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "llama-3.1-8b";
    const char *hw = argc > 2 ? argv[2] : "h100-sxm";
    llmstep_error err;
    if (llmstep_abi_version() != LLMSTEP_ABI_VERSION) {
        fprintf(stderr, "predict: built for ABI %d, the library is ABI %d\n", LLMSTEP_ABI_VERSION,
                llmstep_abi_version());
        return 1;
    }
    llmstep_ctx *ctx = llmstep_ctx_new(NULL, &err);
    if (!ctx) {
        fprintf(stderr, "predict: %s\n", err.message);
        return 1;
    }
    llmstep_deploy_spec spec;
    llmstep_deploy_spec_init(&spec);
    spec.model = model;
    spec.hw = hw;
    spec.usage = 1; /* the OpenAI server's defaults */
    llmstep_deploy *d = NULL;
    int rc = 1;
    if (llmstep_deploy_open(ctx, &spec, &d, &err) != LLMSTEP_OK)
        goto out;
    llmstep_deploy_info info;
    llmstep_deploy_get_info(d, &info);
    printf("llmstep %s: %s on %s, TP %lld, engine %s\n", llmstep_version(), info.model_id,
           info.hw_id, (long long)info.tp, info.engine_id);
    printf("data: %s (%zu files loaded)\n", llmstep_ctx_data_dir(ctx), llmstep_ctx_n_loaded(ctx));
    printf("KV cache: %lld tokens (%.2f GB of %.2f GB usable)\n",
           (long long)info.kv_capacity_tokens, info.kv_budget_bytes / 1e9, info.usable_bytes / 1e9);

    llmstep_group decode = {32, 1, 1024, 1};
    llmstep_step_result step;
    if (llmstep_step(d, &decode, 1, &step, NULL, 0, NULL, &err) != LLMSTEP_OK)
        goto out;
    printf("decode step, 32 x 1024 tokens: %.3f ms (GPU %.3f ms, host %.3f ms, %s-bound)\n",
           step.step_s * 1e3, step.gpu_s * 1e3, step.host_s * 1e3, step.bound);

    llmstep_capacity_result cap;
    if (llmstep_capacity(d, 1024 + 128, &cap, &err) != LLMSTEP_OK)
        goto out;
    printf("sequences of 1152 tokens at once: %lld\n", (long long)cap.max_seqs_at_context);

    llmstep_workload w;
    llmstep_workload_init(&w);
    w.concurrency = 16;
    llmstep_serve_result sr;
    if (llmstep_serve(d, &w, &sr, &err) != LLMSTEP_OK)
        goto out;
    printf("16 users, 1024 in / 128 out: TTFT mean %.1f ms p90 %.1f ms, TPOT mean %.2f ms, "
           "%.2f requests/s\n",
           sr.ttft_s.mean * 1e3, sr.ttft_s.p90 * 1e3, sr.tpot_s.mean * 1e3,
           sr.request_throughput_per_s);
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "predict: %s\n", err.message);
    llmstep_deploy_free(d);
    llmstep_ctx_free(ctx);
    return rc;
}
