/*
 * web_api.h - the JSON API of `llmstep web` (docs/web.md), apart from HTTP: a request is a
 * method, a path and a body; the answer a JSON text and an HTTP status. Every number comes from
 * the library (include/llmstep.h), and every answer carries the `llmstep` command lines that
 * print the same numbers. Names of models, GPUs, engines and calibrations are checked against
 * the bundled ones (the data folder's listing), so no request reaches another file; a pasted
 * config.json is written to the server's own temporary folder.
 *
 * Thread safety: web_api_handle may be called from several threads; the computations run one
 * at a time (a second one meanwhile is answered 503 at once, so the server stays responsive).
 */
#ifndef SIM_WEB_API_H
#define SIM_WEB_API_H

#include <stddef.h>

/* Bounds of a request (docs/web.md, "Limits"). */
#define WEB_MAX_BODY_BYTES   (1u << 20) /* 1 MiB: a config.json or a trace fits */
#define WEB_MAX_CONFIG_BYTES (256u << 10)
#define WEB_MAX_TRACE_BYTES  (768u << 10)
#define WEB_MAX_HWS          8
#define WEB_MAX_TPS          8
#define WEB_MAX_LOADS        32
/* Requests a serving question may simulate in all (points x seeds x requests each): 3.3
 * million of Qwen3-32B (4 GPUs x 4 TPs x 10 loads x 20 seeds) took 1.1 s on two cores. */
#define WEB_MAX_SIM_REQUESTS 4000000.0

typedef struct web_api web_api;

/* A new API reading data_dir (NULL: the library's default). NULL on failure, with the reason
 * in err. */
web_api *web_api_new(const char *data_dir, char *err, size_t err_cap);
void web_api_free(web_api *a);

/* Lowers (or raises) the bound on the requests one serving question may simulate (default
 * WEB_MAX_SIM_REQUESTS); the fuzz target keeps each input short. */
void web_api_set_max_sim_requests(web_api *a, double n);

/* The data folder the API reads. */
const char *web_api_data_dir(const web_api *a);

/*
 * Answers one request: method "GET" or "POST", path "/api/...", body (POST; len bytes, need
 * not be NUL-terminated). *out gets a malloc'd JSON text (free it) of *out_len bytes, and
 * *status the HTTP status (200; 400 for a bad request, with {"error": message}; 404; 405;
 * 413; 503 while another computation runs). Returns 0, or -1 when out of memory (*out NULL).
 */
int web_api_handle(web_api *a, const char *method, const char *path, const char *body, size_t len,
                   char **out, size_t *out_len, int *status);

#endif
