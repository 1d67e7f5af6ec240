/*
 * cmd_web.c - `llmstep web`: the capacity-planning page and its JSON API (web_api.h) over
 * HTTP, with GNU libmicrohttpd (docs/web.md). It listens on 127.0.0.1 unless told otherwise,
 * serves the page's files from memory (read once at start from <data>/web/, a fixed list: no
 * request names a file), and bounds what a client can hold: the body (1 MiB), the idle time
 * (--timeout-s), the connections (256) and the memory per connection.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "web_api.h"

#ifdef LLMSTEP_HAVE_MHD
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "textin.h"
#endif

static const cli_help web_help = {
    .head = "usage: llmstep web [--port P] [--bind ADDR] [--timeout-s T]\n\n"
            "Serves the capacity-planning page (docs/web.md) and its JSON API on\n"
            "http://ADDR:P/: pick a bundled model or paste a config.json, GPUs, engine,\n"
            "calibration, workload, SLOs and GPU prices; see KV capacity and the memory\n"
            "breakdown, TTFT/TPOT against load per layout, the best layout per GPU under the\n"
            "SLOs with its cost per million tokens, and a step's operators on the roofline.\n"
            "Every view shows the llmstep command that prints its numbers. Runs until\n"
            "interrupted (Ctrl-C).\n\n"
            "API (JSON; keys carry units): GET /api/catalog; POST /api/capacity,\n"
            "/api/serving, /api/step (docs/web.md, \"API\").\n\nOptions:\n",
    .tail = "\nExample:\n  llmstep web --port 8765    then open http://127.0.0.1:8765/\n",
};

/* The options (both builds parse them: --help is the same with or without the server). */
typedef struct web_args {
    const char *bind_addr;
    int64_t port, timeout_s;
} web_args;

static int parse_web(int argc, char **argv, web_args *a, int *done)
{
    a->bind_addr = "127.0.0.1";
    a->port = 8765;
    a->timeout_s = 15;
    const cli_opt t[] = {
        CLI_I64_H(
            "port", &a->port, 0, 65535,
            "  --port P                   TCP port (default 8765; 0: any free port, printed)\n"),
        CLI_STR_H("bind", &a->bind_addr,
                  "  --bind ADDR                IPv4 address to listen on (default 127.0.0.1,\n"
                  "                             this machine only; 0.0.0.0 opens it to the\n"
                  "                             network: the API has no authentication)\n"),
        CLI_I64_H("timeout-s", &a->timeout_s, 1, 3600,
                  "  --timeout-s T              close a connection idle for T s (default 15)\n"),
    };
    return cli_opts_parse_help("web", argc, argv, t, CLI_N(t), &web_help, done, NULL);
}

#ifdef LLMSTEP_HAVE_MHD

#define WEB_CONNECTIONS      256
#define WEB_CONN_MEMORY      (64u << 10)
#define WEB_THREADS          4
#define WEB_MAX_STATIC_BYTES (4u << 20)

/* The page's files, read once: each is served at "/" + its path under <data>/web (and
 * index.html at "/" too). */
static struct static_file {
    const char *file, *type;
    char *data;
    size_t len;
} files[] = {
    {"index.html", "text/html; charset=utf-8", NULL, 0},
    {"app.js", "text/javascript; charset=utf-8", NULL, 0},
    {"style.css", "text/css; charset=utf-8", NULL, 0},
    {"vendor/uplot/uPlot.iife.min.js", "text/javascript; charset=utf-8", NULL, 0},
    {"vendor/uplot/uPlot.min.css", "text/css; charset=utf-8", NULL, 0},
    {"vendor/uplot/LICENSE", "text/plain; charset=utf-8", NULL, 0},
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

static int load_files(const char *data_dir)
{
    for (size_t i = 0; i < N_FILES; i++) {
        char path[1200];
        snprintf(path, sizeof(path), "%s/web/%s", data_dir, files[i].file);
        struct sim_err err;
        sim_textin *in = NULL;
        const char *data = NULL;
        size_t len = 0;
        if (sim_textin_open(path, &in, &err) != SIM_OK ||
            sim_textin_read_all(in, WEB_MAX_STATIC_BYTES, "a page file", &data, &len, &err) !=
                SIM_OK) {
            cli_error("web: %s", err.msg);
            sim_textin_free(in);
            return -1;
        }
        if (!(files[i].data = malloc(len + 1))) {
            cli_error("web: %s: out of memory", path);
            sim_textin_free(in);
            return -1;
        }
        memcpy(files[i].data, data, len + 1);
        files[i].len = len;
        sim_textin_free(in);
    }
    return 0;
}

static void free_files(void)
{
    for (size_t i = 0; i < N_FILES; i++) {
        free(files[i].data);
        files[i].data = NULL;
    }
}

/* One request's body as it arrives. */
typedef struct conn_state {
    char *body;
    size_t len, cap;
    int too_big;
} conn_state;

typedef struct server {
    web_api *api;
    int loopback; /* bound to a loopback address: requests must name it in Host */
} server;

static enum MHD_Result respond(struct MHD_Connection *c, int status, const char *type, char *data,
                               size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, mode);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' "
                            "data:; connect-src 'self'; frame-ancestors 'none'");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result respond_msg(struct MHD_Connection *c, int status, const char *msg)
{
    char buf[300];
    snprintf(buf, sizeof(buf), "{\"error\":\"%s\"}", msg);
    return respond(c, status, "application/json", buf, strlen(buf), MHD_RESPMEM_MUST_COPY);
}

/* A request to a loopback server names it (127.0.0.1, localhost or [::1]) in its Host: a page
 * of another site that rebinds its name to 127.0.0.1 is refused. */
static int host_ok(struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!h)
        return 0;
    static const char *const ok[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(ok[i]);
        if (strncmp(h, ok[i], n) == 0 && (h[n] == '\0' || h[n] == ':'))
            return 1;
    }
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    server *sv = cls;
    conn_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof(*st));
        if (!st)
            return MHD_NO;
        *con_cls = st;
        if (sv->loopback && !host_ok(c))
            return respond_msg(c, 403, "Host must be 127.0.0.1, localhost or [::1]");
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl) {
            char *end = NULL;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno || end == cl || n > WEB_MAX_BODY_BYTES) {
                st->too_big = 1;
                return respond_msg(c, 413, "request: body above 1 MiB");
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (st->too_big)
            return MHD_NO;
        if (st->len + *upload_data_size > WEB_MAX_BODY_BYTES) {
            st->too_big = 1;
            return MHD_NO; /* a chunked body past the bound: close the connection */
        }
        if (st->len + *upload_data_size + 1 > st->cap) {
            size_t cap = st->cap ? st->cap : 4096;
            while (cap < st->len + *upload_data_size + 1)
                cap *= 2;
            char *b = realloc(st->body, cap);
            if (!b)
                return MHD_NO;
            st->body = b;
            st->cap = cap;
        }
        memcpy(st->body + st->len, upload_data, *upload_data_size);
        st->len += *upload_data_size;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (st->too_big)
        return MHD_NO;
    if (strncmp(url, "/api/", 5) == 0) {
        char *out = NULL;
        size_t out_len = 0;
        int status = 200;
        if (web_api_handle(sv->api, method, url, st->body, st->len, &out, &out_len, &status) != 0)
            return respond_msg(c, 500, "server: out of memory");
        enum MHD_Result r =
            respond(c, status, "application/json", out, out_len, MHD_RESPMEM_MUST_COPY);
        free(out);
        return r;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return respond_msg(c, 405, "GET the page, POST the API");
    if (url[0] != '/')
        return respond_msg(c, 404, "not found");
    const char *want = url[1] == '\0' ? "index.html" : url + 1;
    for (size_t i = 0; i < N_FILES; i++)
        if (strcmp(want, files[i].file) == 0)
            return respond(c, 200, files[i].type, files[i].data, files[i].len,
                           MHD_RESPMEM_PERSISTENT);
    return respond_msg(c, 404, "not found");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    conn_state *st = *con_cls;
    if (st) {
        free(st->body);
        free(st);
        *con_cls = NULL;
    }
}

int cmd_web(int argc, char **argv)
{
    web_args wa;
    int done, rc = parse_web(argc, argv, &wa, &done);
    if (rc != CLI_OK || done)
        return rc;
    const char *bind_addr = wa.bind_addr;
    const int64_t port = wa.port, timeout_s = wa.timeout_s;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, bind_addr, &sa.sin_addr) != 1) {
        cli_error("web: --bind '%s': expected an IPv4 address such as 127.0.0.1", bind_addr);
        return CLI_USAGE;
    }
    server sv = {.loopback = (ntohl(sa.sin_addr.s_addr) >> 24) == 127};
    char err[512] = "";
    sv.api = web_api_new(NULL, err, sizeof(err));
    if (!sv.api) {
        cli_error("%s", err);
        return CLI_BAD_INPUT;
    }
    if (load_files(web_api_data_dir(sv.api)) != 0) {
        web_api_free(sv.api);
        free_files();
        return CLI_BAD_INPUT;
    }
    /* The signals that stop the server go to this thread's sigwait, not to MHD's threads. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG, (uint16_t)port, NULL,
        NULL, on_request, &sv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)WEB_THREADS, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)WEB_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)WEB_CONN_MEMORY, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, NULL, MHD_OPTION_END);
    if (!d) {
        cli_error("web: cannot listen on %s:%lld: %s", bind_addr, (long long)port, strerror(errno));
        web_api_free(sv.api);
        free_files();
        return CLI_BAD_INPUT;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned bound = di ? di->port : (unsigned)port;
    printf("llmstep web: http://%s:%u/ (data %s; Ctrl-C stops)\n", bind_addr, bound,
           web_api_data_dir(sv.api));
    fflush(stdout);
    if (!sv.loopback)
        fprintf(stderr, "llmstep: web: listening on %s: anyone who reaches it can use the API\n",
                bind_addr);
    int sig = 0;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    web_api_free(sv.api);
    free_files();
    return CLI_OK;
}

#else /* !LLMSTEP_HAVE_MHD */

int cmd_web(int argc, char **argv)
{
    web_args wa;
    int done, rc = parse_web(argc, argv, &wa, &done);
    if (rc != CLI_OK || done)
        return rc;
    cli_error("web: this llmstep was built without GNU libmicrohttpd (Debian: apt-get install "
              "libmicrohttpd-dev, then rebuild)");
    return CLI_BAD_INPUT;
}

#endif
