/*
 * test_web_api.c - the JSON API of `llmstep web` (sim/cli/web_api.c) without HTTP: answers
 * against hand-derived figures, the command lines it shows, and every way a request can be bad
 * (each a 4xx with a message naming the field, never a crash or a number).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "web_api.h"

static web_api *api;

/* POSTs body to path; returns the parsed answer (caller frees) and the status. */
static cJSON *post(const char *path, const char *body, int *status)
{
    char *out = NULL;
    size_t len = 0;
    *status = 0;
    if (web_api_handle(api, "POST", path, body, strlen(body), &out, &len, status) != 0)
        return NULL;
    cJSON *j = cJSON_ParseWithLength(out, len);
    free(out);
    return j;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A bad request: status want, and the error names needle. */
static void bad(const char *path, const char *body, int want, const char *needle)
{
    int status = 0;
    cJSON *j = post(path, body, &status);
    CHECK(j != NULL);
    CHECK(status == want);
    const char *e = str(j, "error");
    int ok = strstr(e, needle) != NULL;
    CHECK(ok);
    if (!ok || status != want)
        fprintf(stderr, "  %s %s -> %d '%s' (want %d, '%s')\n", path, body, status, e, want,
                needle);
    cJSON_Delete(j);
}

static void test_capacity(void)
{
    int status = 0;
    cJSON *j = post("/api/capacity",
                    "{\"model\":\"llama-3.1-8b\",\"hws\":[\"h100-sxm\"],\"tps\":[1,2],"
                    "\"prompt_tokens\":1024,\"output_tokens\":256}",
                    &status);
    CHECK(j && status == 200);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(j, "results");
    CHECK(cJSON_GetArraySize(res) == 2);
    const cJSON *r1 = cJSON_GetArrayItem(res, 0), *r2 = cJSON_GetArrayItem(res, 1);
    /* Llama-3.1-8B: 32 layers, 8 KV heads of 128, bf16: KV per token = 2 (K, V) x 32 x 8 x 128
     * x 2 bytes = 131072 at TP 1, half at TP 2 (the KV heads split over the GPUs). */
    CHECK_REL(num(r1, "kv_bytes_per_token_per_gpu"), 131072.0, 0.0);
    CHECK_REL(num(r2, "kv_bytes_per_token_per_gpu"), 65536.0, 0.0);
    /* Its weights: 8,030,261,248 parameters (Meta's model card, "8.03B"; embedding and LM
     * head untied) x 2 bytes = 16,060,522,496 bytes on one GPU, plus the RoPE cos/sin cache
     * vLLM builds whole on each GPU: 131,072 positions x 128 x 2 bytes = 33,554,432. */
    CHECK_REL(num(r1, "weights_bytes_per_gpu"), 8030261248.0 * 2.0 + 33554432.0, 0.0);
    /* context = prompt + output; blocks per sequence = ceil(1280 / 16) = 80; the sequences
     * the cache holds = floor(KV blocks / 80); KV tokens = blocks x 16. */
    CHECK_REL(num(r1, "context_tokens"), 1280.0, 0.0);
    CHECK_REL(num(r1, "max_seqs_by_kv"), floor(num(r1, "kv_blocks") / 80.0), 0.0);
    CHECK_REL(num(r1, "kv_capacity_tokens"), num(r1, "kv_blocks") * 16.0, 0.0);
    /* KV blocks = floor(budget / (16 x KV bytes per token)). */
    CHECK_REL(num(r1, "kv_blocks"), floor(num(r1, "kv_budget_bytes_per_gpu") / (16.0 * 131072.0)),
              0.0);
    /* budget = usable - weights - activations - reserve. */
    CHECK_REL(num(r1, "kv_budget_bytes_per_gpu"),
              num(r1, "usable_bytes_per_gpu") - num(r1, "weights_bytes_per_gpu") -
                  num(r1, "activation_bytes_per_gpu") - num(r1, "reserve_bytes_per_gpu"),
              1e-12);
    CHECK(strcmp(str(r1, "cli"), "llmstep capacity --model llama-3.1-8b --hw h100-sxm --tp 1 "
                                 "--prompt-tokens 1024 --output-tokens 256 --format json") == 0);
    cJSON_Delete(j);

    /* A model that does not fit on one GPU: the row says so, with the breakdown. */
    j = post("/api/capacity", "{\"model\":\"llama-3.1-70b\",\"hws\":\"a100-sxm-40gb\",\"tps\":1}",
             &status);
    CHECK(j && status == 200);
    const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "results"), 0);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "fits")));
    cJSON_Delete(j);
}

static void test_serving(void)
{
    int status = 0;
    cJSON *j = post("/api/serving",
                    "{\"model\":\"llama-3.1-8b\",\"hws\":[\"h100-sxm\",\"a100-sxm-80gb\"],"
                    "\"tps\":[1,2],\"loads\":[1,8],\"prompt_tokens\":512,\"output_tokens\":64,"
                    "\"gpu_hour_usd\":[2.5,1.6],\"slo_tpot_ms\":30}",
                    &status);
    CHECK(j && status == 200);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    /* 2 GPUs x 2 TPs x 2 loads. */
    CHECK(cJSON_GetArraySize(rows) == 8);
    CHECK(strcmp(str(j, "cli"),
                 "llmstep sweep --kind serving --model llama-3.1-8b --hw h100-sxm,a100-sxm-80gb "
                 "--tp 1,2 --concurrency 1,8 --prompt-tokens 512 --output-tokens 64 "
                 "--slo-tpot-ms 30 --gpu-hour-usd 2.5,1.6 --format json") == 0);
    for (int i = 0; i < 8; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        /* cost per million tokens = price x GPUs / 3600 / (tokens/s) x 1e6 (sweep --help). */
        double price = strcmp(str(r, "hw"), "h100-sxm") == 0 ? 2.5 : 1.6;
        CHECK_REL(num(r, "cost_per_mtok_usd"),
                  price * num(r, "gpus") / 3600.0 / num(r, "output_tokens_per_s") * 1e6, 1e-12);
        /* a closed loop sends 10 x clients requests */
        CHECK_REL(num(r, "n_requests"), 10.0 * num(r, "concurrency"), 0.0);
    }
    cJSON_Delete(j);

    /* An open loop: one row per rate, the command's --request-rate in the page's numbers. */
    j = post("/api/serving",
             "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":[1],\"arrival\":\"poisson\","
             "\"loads\":[2.5,5],\"num_requests\":100,\"prompt_tokens\":512,\"output_tokens\":64}",
             &status);
    CHECK(j && status == 200);
    rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    CHECK(cJSON_GetArraySize(rows) == 2);
    CHECK_REL(num(cJSON_GetArrayItem(rows, 1), "request_rate_per_s"), 5.0, 0.0);
    CHECK_REL(num(cJSON_GetArrayItem(rows, 1), "n_requests"), 100.0, 0.0);
    CHECK(strstr(str(j, "cli"), "--request-rate 2.5,5 ") != NULL);
    cJSON_Delete(j);

    /* A demand of 50 requests/s: replicas = ceil(50 / requests/s) of the layout's GPUs, on the
     * points that meet the SLO only. */
    j = post("/api/serving",
             "{\"model\":\"llama-3.1-8b\",\"hws\":[\"h100-sxm\"],\"tps\":[1,2],\"loads\":[1,8],"
             "\"prompt_tokens\":512,\"output_tokens\":64,\"slo_tpot_ms\":30,"
             "\"demand_requests_per_s\":50}",
             &status);
    CHECK(j && status == 200);
    rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    int n_fleet = 0;
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "meets_slo"))) {
            CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "gpus_for_demand")));
            continue;
        }
        double replicas = ceil(50.0 / num(r, "requests_per_s"));
        CHECK_REL(num(r, "replicas_for_demand"), replicas, 0.0);
        CHECK_REL(num(r, "gpus_for_demand"), replicas * num(r, "gpus"), 0.0);
        n_fleet++;
    }
    CHECK(n_fleet > 0);
    cJSON_Delete(j);

    /* best: one row per GPU, judged over the planning seeds (a random workload). */
    j = post("/api/serving",
             "{\"model\":\"llama-3.1-8b\",\"hws\":[\"h100-sxm\"],\"tps\":[1,2],\"loads\":[1,8],"
             "\"prompt_tokens\":512,\"output_tokens\":64,\"best\":true,\"slo_tpot_ms\":0.001}",
             &status);
    CHECK(j && status == 200);
    CHECK_REL(num(j, "n_seeds"), 20.0, 0.0);
    rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    CHECK(cJSON_GetArraySize(rows) == 1);
    /* a 1 us TPOT objective: nothing meets it */
    CHECK(strcmp(str(cJSON_GetArrayItem(rows, 0), "status"), "none_meets_slo") == 0);
    CHECK(strstr(str(j, "cli"), "--best --seeds 20") != NULL);
    cJSON_Delete(j);
}

static void test_step(void)
{
    int status = 0;
    cJSON *j = post("/api/step",
                    "{\"model\":\"llama-3.1-8b\",\"hw\":\"h100-sxm\",\"tp\":1,\"phase\":\"decode\","
                    "\"batch\":64,\"tokens\":2048}",
                    &status);
    CHECK(j && status == 200);
    /* Uncalibrated: step = roofline + host (alpha 1, beta 0, no async overlap at batch 64? the
     * step is GPU + host or their max; either way >= the roofline). */
    CHECK(num(j, "step_time_s") >= num(j, "roofline_time_s"));
    /* The sum of the operators is the roofline (op mode, TP 1: no communication). */
    double sum = 0.0;
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(j, "ops");
    for (const cJSON *o = ops->child; o; o = o->next)
        sum += num(o, "time_s");
    CHECK_REL(sum, num(j, "roofline_time_s"), 1e-12);
    /* The roofs: H100 SXM's datasheet 3.35 TB/s and 989.4 dense bf16 TFLOP/s. */
    const cJSON *roofs = cJSON_GetObjectItemCaseSensitive(j, "roofs");
    CHECK_REL(num(roofs, "hbm_peak_bytes_per_s"), 3.35e12, 0.0);
    CHECK_REL(num(roofs, "bf16_peak_flops_per_s"), 989.4e12, 0.0);
    CHECK_REL(num(roofs, "ridge_bf16_flops_per_byte"),
              num(roofs, "bf16_achievable_flops_per_s") / num(roofs, "hbm_achievable_bytes_per_s"),
              1e-12);
    CHECK(strcmp(str(j, "cli"), "llmstep predict --model llama-3.1-8b --hw h100-sxm --tp 1 "
                                "--decode 64x2048 --format json") == 0);
    cJSON_Delete(j);
}

static void test_catalog(void)
{
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    CHECK(web_api_handle(api, "GET", "/api/catalog", NULL, 0, &out, &len, &status) == 0);
    CHECK(status == 200);
    cJSON *j = cJSON_ParseWithLength(out, len);
    free(out);
    CHECK(j != NULL);
    int found = 0;
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(j, "models");
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next)
        found += strcmp(str(m, "id"), "llama-3.1-8b") == 0;
    CHECK(found == 1);
    cJSON_Delete(j);
}

/* POSTs /api/capacity for a bundled model's file pasted as config_json, on h100-sxm at tp:
 * the answer's first result (in *root, which the caller frees), NULL when the file does not
 * read. */
static const cJSON *capacity_of_pasted(const char *model_file, int tp, cJSON **root)
{
    *root = NULL;
    FILE *f = fopen(model_file, "rb");
    CHECK(f != NULL);
    if (!f)
        return NULL;
    static char text[200000];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "config_json", text);
    cJSON_AddStringToObject(req, "hws", "h100-sxm");
    cJSON_AddNumberToObject(req, "tps", tp);
    char *body = cJSON_PrintUnformatted(req);
    int status = 0;
    *root = post("/api/capacity", body, &status);
    CHECK(*root && status == 200);
    cJSON_free(body);
    cJSON_Delete(req);
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(*root, "results"), 0);
}

static void test_pasted_config(void)
{
    /* A config missing num_hidden_layers: the loader's message, path config.json. */
    bad("/api/capacity",
        "{\"config_json\":\"{\\n  \\\"model_type\\\": \\\"llama\\\",\\n  \\\"hidden_size\\\": "
        "4096\\n}\\n\",\"hws\":\"h100-sxm\",\"tps\":1}",
        400, "config.json:1:1: num_hidden_layers: required field missing");
    bad("/api/step", "{\"config_json\":\"{bad\",\"hw\":\"h100-sxm\"}", 400,
        "config.json:1:3: malformed JSON");
    /* A good pasted config answers as the bundled file with the same text. */
    cJSON *j = NULL;
    const cJSON *r = capacity_of_pasted(SIM_SOURCE_DIR "/models/llama-3.1-8b.json", 1, &j);
    CHECK(r != NULL);
    CHECK_REL(num(r, "weights_bytes_per_gpu"), 8030261248.0 * 2.0 + 33554432.0, 0.0);
    CHECK(strstr(str(r, "cli"), "--model config.json ") != NULL);
    cJSON_Delete(j);
}

/* A pasted quantized checkpoint is read as the CLI reads the file: its quantization_config
 * gives the weight format and bytes. Llama-3.1-70B AWQ int4, group 128: the weight format
 * "awq-int4-g128", as `llmstep models` names it. */
static void test_pasted_quantized(void)
{
    int status = 0;
    cJSON *pasted = NULL;
    const cJSON *a =
        capacity_of_pasted(SIM_SOURCE_DIR "/models/llama-3.1-70b-awq.json", 2, &pasted);
    CHECK(a != NULL);
    cJSON *bundled =
        post("/api/capacity", "{\"model\":\"llama-3.1-70b-awq\",\"hws\":\"h100-sxm\",\"tps\":2}",
             &status);
    CHECK(bundled && status == 200);
    const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(bundled, "results"), 0);
    CHECK_STR(str(a, "weights"), "awq-int4-g128");
    CHECK_STR(str(a, "weights"), str(b, "weights"));
    CHECK_REL(num(a, "weights_bytes_per_gpu"), num(b, "weights_bytes_per_gpu"), 0.0);
    /* int4 with fp16 scales and zeros per 128 weights: well under a quarter of bf16's 2 bytes
     * per parameter plus the 16-bit embedding and head, so below 0.6 of the bf16 model's. */
    cJSON *bf16 = post("/api/capacity",
                       "{\"model\":\"llama-3.1-70b\",\"hws\":\"h100-sxm\",\"tps\":2}", &status);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(bf16, "results"), 0);
    CHECK(num(a, "weights_bytes_per_gpu") < 0.6 * num(c, "weights_bytes_per_gpu"));
    cJSON_Delete(bf16);
    cJSON_Delete(bundled);
    cJSON_Delete(pasted);
}

static void test_trace(void)
{
    int status = 0;
    /* Two requests: 0.0 s, 10 + 5 tokens; 1.0 s, 20 + 3 tokens. */
    cJSON *j = post("/api/serving",
                    "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":[1,2],"
                    "\"trace_jsonl\":\"{\\\"arrival_s\\\": 0, \\\"prompt_tokens\\\": 10, "
                    "\\\"output_tokens\\\": 5}\\n{\\\"arrival_s\\\": 1, "
                    "\\\"prompt_tokens\\\": 20, \\\"output_tokens\\\": 3}\\n\"}",
                    &status);
    CHECK(j && status == 200);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    CHECK(cJSON_GetArraySize(rows) == 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        CHECK(strcmp(str(r, "status"), "ok") == 0);
        /* every request of the trace is measured: 2 */
        CHECK_REL(num(r, "n_requests"), 2.0, 0.0);
    }
    CHECK(strstr(str(j, "cli"), "--trace trace.jsonl") != NULL);
    cJSON_Delete(j);
    bad("/api/serving",
        "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":1,"
        "\"trace_jsonl\":\"{\\\"arrival_s\\\": 0, \\\"prompt_token\\\": 10, "
        "\\\"output_tokens\\\": 5}\\n\"}",
        400, "trace.jsonl:1:");
    bad("/api/serving",
        "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":1,\"loads\":[1],"
        "\"trace_jsonl\":\"\"}",
        400, "leave out");
}

static void test_bad_requests(void)
{
    bad("/api/capacity", "{bad", 400, "malformed JSON");
    bad("/api/capacity", "[1,2]", 400, "expected a JSON object");
    bad("/api/capacity", "", 400, "malformed JSON");
    bad("/api/capacity", "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":1,\"tpz\":2}",
        400, "unknown field 'tpz'");
    bad("/api/capacity", "{\"hws\":\"h100-sxm\",\"tps\":1}", 400, "give 'model'");
    /* names reach no file outside the bundled ones */
    bad("/api/capacity", "{\"model\":\"../../etc/passwd\",\"hws\":\"h100-sxm\",\"tps\":1}", 400,
        "not a bundled model");
    bad("/api/capacity", "{\"model\":\"/etc/passwd\",\"hws\":\"h100-sxm\",\"tps\":1}", 400,
        "not a bundled model");
    bad("/api/capacity", "{\"model\":\"llama-3.1-8b\",\"hws\":\"/dev/zero\",\"tps\":1}", 400,
        "not a bundled GPU");
    bad("/api/step", "{\"model\":\"llama-3.1-8b\",\"hw\":\"h100-sxm\",\"calibration\":\"/etc\"}",
        400, "not a bundled calibration");
    bad("/api/step", "{\"model\":\"llama-3.1-8b\",\"hw\":\"h100-sxm\",\"engine\":\"x\"}", 400,
        "not a bundled engine");
    /* types, ranges, non-finite numbers */
    bad("/api/capacity", "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":\"1\"}", 400,
        "'tps': expected a list");
    bad("/api/capacity", "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":[3.5]}", 400,
        "'tps': expected a whole number");
    bad("/api/capacity", "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":[0]}", 400,
        "'tps'");
    bad("/api/capacity",
        "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":1,\"prompt_tokens\":1e400}", 400,
        "'prompt_tokens'");
    bad("/api/serving",
        "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":1,\"loads\":[1],"
        "\"slo_percentile\":95}",
        400, "'slo_percentile'");
    bad("/api/serving",
        "{\"model\":\"llama-3.1-8b\",\"hws\":\"h100-sxm\",\"tps\":1,\"loads\":[1],"
        "\"arrival\":\"gamma\"}",
        400, "'arrival'");
    bad("/api/serving",
        "{\"model\":\"llama-3.1-8b\",\"hws\":[\"h100-sxm\",\"h100-sxm\"],\"tps\":1,\"loads\":[1]}",
        400, "given twice");
    bad("/api/serving",
        "{\"model\":\"llama-3.1-8b\",\"hws\":[\"h100-sxm\"],\"tps\":1,\"loads\":[1],"
        "\"gpu_hour_usd\":[1,2]}",
        400, "one per GPU");
    /* the work bound: 8 TPs x 32 loads of 4096 clients x 20 seeds */
    bad("/api/serving",
        "{\"model\":\"llama-3.1-8b\",\"hws\":[\"h100-sxm\"],\"tps\":[1,2,4,8,1,2,4,8],"
        "\"loads\":[4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,"
        "4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096],"
        "\"best\":true}",
        400, "requests to simulate");
    /* an impossible layout: the library's message */
    bad("/api/step", "{\"model\":\"llama-3.1-8b\",\"hw\":\"h100-sxm\",\"tp\":3}", 400, "");
    /* routes and methods */
    bad("/api/nothing", "{}", 404, "no such API");
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    CHECK(web_api_handle(api, "GET", "/api/capacity", NULL, 0, &out, &len, &status) == 0);
    CHECK(status == 405);
    free(out);
    static char big[WEB_MAX_BODY_BYTES + 2];
    memset(big, ' ', sizeof(big) - 1);
    CHECK(web_api_handle(api, "POST", "/api/capacity", big, sizeof(big) - 1, &out, &len, &status) ==
          0);
    CHECK(status == 413);
    free(out);
}

int main(void)
{
    char err[512] = "";
    api = web_api_new(SIM_SOURCE_DIR, err, sizeof(err));
    if (!api) {
        fprintf(stderr, "test_web_api: %s\n", err);
        return 1;
    }
    test_catalog();
    test_capacity();
    test_serving();
    test_step();
    test_pasted_config();
    test_trace();
    test_pasted_quantized();
    test_bad_requests();
    web_api_free(api);
    return check_report("test_web_api");
}
