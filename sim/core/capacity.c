/* capacity.c - KV-cache capacity in sequences at a context (see capacity.h). */
#include "capacity.h"

#include <assert.h>

/* Blocks one sequence of context_tokens holds: vLLM allocates a block at every block_size-th
 * token and frees those its window no longer reaches; at least the one its next token is
 * written into (a window of one token reaches none of the past ones). */
static int64_t seq_blocks(const sim_kv_layout *kv, int64_t block_size, int64_t context_tokens)
{
    const int64_t b = sim_kv_request_blocks(kv, block_size, context_tokens, context_tokens);
    return b > 1 ? b : 1;
}

int64_t sim_capacity_max_seqs(const sim_memory *mem, const sim_sched_resolved *s,
                              int64_t context_tokens)
{
    assert(context_tokens >= 1 && s->block_size >= 1);
    if (!mem->fits || context_tokens > s->max_model_len)
        return 0;
    int64_t n = mem->kv_blocks / seq_blocks(&mem->kv, s->block_size, context_tokens);
    return n < s->max_num_seqs ? n : s->max_num_seqs;
}

int sim_capacity_step_fits(const sim_memory *mem, const sim_sched_resolved *s, const sim_step *st,
                           sim_step_fit *out)
{
    *out = (sim_step_fit){0};
    for (int i = 0; i < st->n_groups; i++) {
        const sim_group *g = &st->groups[i];
        const int64_t tokens = g->context_tokens + g->new_tokens;
        out->seqs += g->count;
        if (tokens > out->longest_tokens)
            out->longest_tokens = tokens;
        out->blocks += g->count * sim_kv_request_blocks(&mem->kv, s->block_size, tokens, tokens);
    }
    out->too_long = out->longest_tokens > s->max_model_len;
    return mem->fits && !out->too_long && out->seqs <= s->max_num_seqs &&
           out->blocks <= mem->kv_blocks;
}

void sim_capacity_compute(const sim_setup *su, int64_t context_tokens, sim_capacity *out)
{
    const sim_sched_resolved *s = su->sched;
    assert(context_tokens >= 1);
    sim_memory_compute(su, &out->mem);
    out->context_tokens = context_tokens;
    out->blocks_per_seq = seq_blocks(&out->mem.kv, s->block_size, context_tokens);
    out->max_seqs_by_kv = out->mem.kv_blocks / out->blocks_per_seq;
    out->max_seqs_at_context = sim_capacity_max_seqs(&out->mem, s, context_tokens);
    out->kv_bytes_per_seq = sim_kv_bytes_at(&out->mem.kv, s->block_size, context_tokens);
    out->kv_full_bytes_per_seq = out->mem.kv_full_bytes_per_token * (double)context_tokens;
    out->kv_window_bytes_per_seq = out->kv_bytes_per_seq - out->kv_full_bytes_per_seq;
    out->max_concurrency_max_len = (double)out->mem.kv_blocks / (double)out->mem.kv_blocks_max_seq;
    out->fits = out->mem.fits;
}
