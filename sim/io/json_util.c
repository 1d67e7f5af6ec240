/* json_util.c - see json_util.h. */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat */
#include "json_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json_writer.h"

/* Opens path for reading when it is a regular file of at most SIM_JSON_MAX_FILE_BYTES. */
static sim_status open_regular(const char *path, FILE **out, struct sim_err *err)
{
    *out = NULL;
    /* Only regular files: a directory reads as an error, a device or a pipe never ends, and
     * opening a FIFO blocks until someone writes to it, so look before opening too. */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        sim_errf(err, "%s: not a regular file (expected a JSON file)", path);
        return SIM_EIO;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_errf(err, "%s: cannot open: %s", path, strerror(errno));
        return SIM_EIO;
    }
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        sim_errf(err, "%s: not a regular file (expected a JSON file)", path);
        fclose(f);
        return SIM_EIO;
    }
    if ((uint64_t)sb.st_size > SIM_JSON_MAX_FILE_BYTES) {
        sim_errf(err, "%s: too large (%lld bytes; at most %lld)", path, (long long)sb.st_size,
                 (long long)SIM_JSON_MAX_FILE_BYTES);
        fclose(f);
        return SIM_EIO;
    }
    *out = f;
    return SIM_OK;
}

sim_status sim_json_check_text(const char *name, const char *text, size_t len, uint64_t total,
                               struct sim_err *err)
{
    if (total > (uint64_t)SIM_JSON_MAX_FILE_BYTES) {
        sim_errf(err, "%s: too large (at most %lld bytes)", name,
                 (long long)SIM_JSON_MAX_FILE_BYTES);
        return SIM_EIO;
    }
    if (memchr(text, '\0', len)) {
        sim_errf(err, "%s: contains a NUL byte (not a text file)", name);
        return SIM_EPARSE;
    }
    return SIM_OK;
}

sim_status sim_json_read_file(const char *path, char **out, size_t *len, struct sim_err *err)
{
    *out = NULL;
    *len = 0;
    FILE *f;
    sim_status ost = open_regular(path, &f, err);
    if (ost != SIM_OK)
        return ost;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    sim_status st = SIM_OK;
    if (!buf) {
        st = SIM_ENOMEM;
        goto cleanup;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                st = SIM_ENOMEM;
                goto cleanup;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        /* Too large only when the file grew while being read (open_regular checked it). */
        if ((st = sim_json_check_text(path, buf + n - got, got, n, err)) != SIM_OK)
            goto cleanup;
    }
    if (ferror(f)) {
        sim_errf(err, "%s: read error", path);
        st = SIM_EIO;
        goto cleanup;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    buf = NULL;
cleanup:
    if (st == SIM_ENOMEM)
        sim_errf(err, "%s: out of memory", path);
    free(buf);
    fclose(f);
    return st;
}

static void line_col(const sim_jctx *ctx, const char *at, int *line, int *col)
{
    int l = 1, c = 1;
    for (const char *p = ctx->buf; p < at && *p; p++) {
        if (*p == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l + ctx->line_base;
    *col = c;
}

struct cJSON *sim_json_parse(const sim_jctx *ctx, size_t len)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(ctx->buf, len + 1, &end, 1);
    if (!root) {
        const char *at = end ? end : ctx->buf;
        int line, col;
        line_col(ctx, at, &line, &col);
        const char *what = *at ? "malformed JSON" : "malformed JSON (unexpected end of input)";
        sim_errf(ctx->err, "%s:%d:%d: %s", ctx->path, line, col, what);
        return NULL;
    }
    /* cJSON decodes the escape \u0000 into a NUL that ends the C string: "llama\u0000x" would
     * read as "llama", in a value or a key. In valid JSON a backslash is inside a string, so
     * each escape is found by stepping over them. */
    for (size_t i = 0; i + 1 < len; i++) {
        if (ctx->buf[i] != '\\')
            continue;
        if (ctx->buf[i + 1] == 'u' && i + 5 < len && strncmp(ctx->buf + i + 2, "0000", 4) == 0) {
            int line, col;
            line_col(ctx, ctx->buf + i, &line, &col);
            sim_errf(ctx->err,
                     "%s:%d:%d: a \\u0000 (NUL) escape in a string (expected printable text)",
                     ctx->path, line, col);
            cJSON_Delete(root);
            return NULL;
        }
        i++; /* the escaped character (or the 'u' of \uXXXX, whose hex digits are no '\\') */
    }
    return root;
}

/* Finds the nth "key" followed by optional blanks and ':' after from. */
static const char *find_key(const char *from, const char *key, int nth)
{
    size_t kl = strlen(key);
    for (const char *p = from; (p = strchr(p, '"')) != NULL; p++) {
        if (strncmp(p + 1, key, kl) == 0 && p[kl + 1] == '"') {
            const char *q = p + kl + 2;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
                q++;
            if (*q == ':' && nth-- == 0)
                return p;
        }
    }
    return NULL;
}

const char *sim_j_locate(const sim_jctx *ctx, const char *key)
{
    const char *scope = ctx->scope ? ctx->scope : ctx->buf;
    const char *p = key ? find_key(scope, key, 0) : NULL;
    return p ? p : scope;
}

static sim_status vfail(const sim_jctx *ctx, const char *key, int nth, int show_key,
                        const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Formats "<file>:<line>:<col>: [<prefix><key>: ]<message>" at the nth key into ctx->err. */
static sim_status vfail(const sim_jctx *ctx, const char *key, int nth, int show_key,
                        const char *fmt, va_list ap)
{
    const char *scope = ctx->scope ? ctx->scope : ctx->buf;
    const char *at = key ? find_key(scope, key, nth) : NULL;
    if (!at)
        at = scope;
    int line, col;
    line_col(ctx, at, &line, &col);
    char loc[sizeof(ctx->err->msg)];
    if (key && show_key)
        snprintf(loc, sizeof(loc), "%s:%d:%d: %s%s: ", ctx->path, line, col,
                 ctx->prefix ? ctx->prefix : "", key);
    else
        snprintf(loc, sizeof(loc), "%s:%d:%d: ", ctx->path, line, col);
    sim_vfmt(ctx->err->msg, sizeof(ctx->err->msg), loc, 384, fmt, ap);
    return SIM_EINVAL;
}

sim_status sim_j_fail(const sim_jctx *ctx, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_status st = vfail(ctx, key, 0, 1, fmt, ap);
    va_end(ap);
    return st;
}

sim_status sim_j_fail_nth(const sim_jctx *ctx, const char *key, int nth, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_status st = vfail(ctx, key, nth, 1, fmt, ap);
    va_end(ap);
    return st;
}

sim_status sim_j_fail_loc(const sim_jctx *ctx, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sim_status st = vfail(ctx, key, 0, 0, fmt, ap);
    va_end(ap);
    return st;
}

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "an invalid value";
}

static sim_status missing(const sim_jctx *ctx, const char *key)
{
    const char *scope = ctx->scope ? ctx->scope : ctx->buf;
    int line, col;
    line_col(ctx, scope, &line, &col);
    sim_errf(ctx->err, "%s:%d:%d: %s%s: required field missing", ctx->path, line, col,
             ctx->prefix ? ctx->prefix : "", key);
    return SIM_EINVAL;
}

/* One of cJSON's type tests, e.g. cJSON_IsNumber. */
typedef cJSON_bool (*is_type_fn)(const cJSON *const item);

/*
 * The start of every typed getter: finds key in obj (JSON null counts as absent) and
 * sets *present when present is not NULL. Absent: *v = NULL, and SIM_OK or, when
 * required, "required field missing". A value is_type rejects is "wrong type
 * (expected <expected>, got <its type>)".
 */
static sim_status lookup(const sim_jctx *ctx, const cJSON *obj, const char *key, int required,
                         int *present, is_type_fn is_type, const char *expected, const cJSON **v)
{
    *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (*v && cJSON_IsNull(*v))
        *v = NULL;
    if (present)
        *present = *v != NULL;
    if (!*v)
        return required ? missing(ctx, key) : SIM_OK;
    if (!is_type(*v))
        return sim_j_fail(ctx, key, "wrong type (expected %s, got %s)", expected, type_name(*v));
    return SIM_OK;
}

sim_status sim_j_num(const sim_jctx *ctx, const cJSON *obj, const char *key, int required,
                     double min, double max, double *out, int *present)
{
    const cJSON *v;
    sim_status st = lookup(ctx, obj, key, required, present, cJSON_IsNumber, "a number", &v);
    if (st != SIM_OK || !v)
        return st;
    double x = v->valuedouble;
    if (!isfinite(x))
        return sim_j_fail(ctx, key, "not a finite number (expected a finite number)");
    if (x < min || x > max)
        return sim_j_fail(ctx, key, "out of range (expected %.17g to %.17g, got %.17g)", min, max,
                          x);
    *out = x;
    return SIM_OK;
}

sim_status sim_j_int(const sim_jctx *ctx, const cJSON *obj, const char *key, int required,
                     int64_t min, int64_t max, int64_t *out, int *present)
{
    const cJSON *v;
    sim_status st = lookup(ctx, obj, key, required, present, cJSON_IsNumber, "an integer", &v);
    if (st != SIM_OK || !v)
        return st;
    double x = v->valuedouble;
    /* 2^53: beyond it doubles no longer hold every integer. */
    if (!isfinite(x) || x != floor(x) || fabs(x) > 9007199254740992.0)
        return sim_j_fail(ctx, key, "not an integer (expected an integer, got %.17g)", x);
    if (x < (double)min || x > (double)max)
        return sim_j_fail(ctx, key, "out of range (expected %lld to %lld, got %.17g)",
                          (long long)min, (long long)max, x);
    *out = (int64_t)x;
    return SIM_OK;
}

sim_status sim_j_bool(const sim_jctx *ctx, const cJSON *obj, const char *key, int required,
                      int *out, int *present)
{
    const cJSON *v;
    sim_status st = lookup(ctx, obj, key, required, present, cJSON_IsBool, "a boolean", &v);
    if (st == SIM_OK && v)
        *out = cJSON_IsTrue(v) ? 1 : 0;
    return st;
}

size_t sim_text_next(const unsigned char *s, size_t n, uint32_t *cp, int *safe)
{
    *cp = 0;
    *safe = 0;
    size_t len = s[0] < 0x80                    ? 1
                 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                 : s[0] >= 0xE0                 ? 3
                 : s[0] >= 0xC2                 ? 2
                                                : 0;
    if (len == 0 || len > n)
        return 0;
    uint32_t c = len == 1 ? s[0] : (uint32_t)(s[0] & (0x7F >> len));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (uint32_t)(s[i] & 0x3F);
    }
    /* Overlong forms, surrogates and code points above U+10FFFF are not UTF-8. */
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
        (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    *safe = !(c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) ||
              (c >= 0x2066 && c <= 0x2069));
    return len;
}

size_t sim_text_unsafe(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int safe;
        const size_t len = sim_text_next(u + i, n - i, &cp, &safe);
        if (len == 0 || !safe)
            return i;
        i += len;
    }
    return n;
}

char *sim_text_escape(const char *s, char *out, size_t cap)
{
    const size_t n = strlen(s);
    size_t o = 0;
    for (size_t i = 0; i < n && cap > 0;) {
        const unsigned char *p = (const unsigned char *)s + i;
        uint32_t cp;
        int safe;
        const size_t len = sim_text_next(p, n - i, &cp, &safe);
        const size_t take = len ? len : 1;
        const size_t need = len && safe ? len : 4 * take;
        if (o + need + 1 > cap)
            break;
        if (len && safe)
            memcpy(out + o, p, len);
        else
            for (size_t k = 0; k < take; k++)
                snprintf(out + o + 4 * k, 5, "\\x%02X", p[k]);
        o += need;
        i += take;
    }
    if (cap > 0)
        out[o] = '\0';
    return out;
}

sim_status sim_j_str(const sim_jctx *ctx, const cJSON *obj, const char *key, int required,
                     char *out, size_t cap, int *present)
{
    const cJSON *v;
    sim_status st = lookup(ctx, obj, key, required, present, cJSON_IsString, "a string", &v);
    if (st != SIM_OK || !v)
        return st;
    size_t n = strlen(v->valuestring);
    if (n + 1 > cap)
        return sim_j_fail(ctx, key, "string too long (expected at most %zu characters, got %zu)",
                          cap - 1, n);
    /* Strings the tools print (ids, names, sources, paths): no control characters, which a
     * terminal would act on (an ESC starts an escape sequence), nor invalid UTF-8. */
    const size_t bad = sim_text_unsafe(v->valuestring, n);
    if (bad < n) {
        uint32_t cp;
        int safe;
        if (sim_text_next((const unsigned char *)v->valuestring + bad, n - bad, &cp, &safe) == 0)
            return sim_j_fail(ctx, key,
                              "invalid UTF-8 (byte 0x%02X) at position %zu (expected printable "
                              "text)",
                              (unsigned char)v->valuestring[bad], bad + 1);
        return sim_j_fail(ctx, key,
                          "control character U+%04X at position %zu (expected printable text)",
                          (unsigned)cp, bad + 1);
    }
    memcpy(out, v->valuestring, n + 1);
    return SIM_OK;
}

sim_status sim_j_strs(const sim_jctx *ctx, const cJSON *obj, const sim_j_strfield *f, size_t n)
{
    sim_status st = SIM_OK;
    for (size_t i = 0; st == SIM_OK && i < n; i++)
        st = sim_j_str(ctx, obj, f[i].key, f[i].required, f[i].out, f[i].cap, NULL);
    return st;
}

int sim_j_edit_distance(const char *a, const char *b)
{
    enum { CAP = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > CAP)
        la = CAP;
    if (lb > CAP)
        lb = CAP;
    int prev[CAP + 1], cur[CAP + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            int m = sub < del ? sub : del;
            cur[j] = m < ins ? m : ins;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

static int in_list(const char *k, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(k, list[i]) == 0)
            return 1;
    return 0;
}

sim_status sim_j_check_keys(const sim_jctx *ctx, const cJSON *obj, const char *const *known,
                            size_t n_known, const char *const *ignored, size_t n_ignored,
                            int strict)
{
    /* Duplicates were refused for the whole tree when it was read (no_duplicate_keys). The
     * known-key search below is n_keys x n_known: bound the keys first. */
    size_t n_keys = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        if (++n_keys > SIM_JSON_MAX_KEYS)
            return sim_j_fail(ctx, NULL, "%stoo many keys in one object (at most %d)", ctx->prefix,
                              SIM_JSON_MAX_KEYS);
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (in_list(c->string, known, n_known) || in_list(c->string, ignored, n_ignored))
            continue;
        const char *best = NULL;
        int bd = 3;
        const size_t lc = strlen(c->string);
        for (size_t i = 0; i < n_known; i++) {
            /* The distance is at least the difference in length: skip what cannot be < 3. */
            const size_t lk = strlen(known[i]);
            if ((lc > lk ? lc - lk : lk - lc) >= 3)
                continue;
            int dd = sim_j_edit_distance(c->string, known[i]);
            if (dd < bd) {
                bd = dd;
                best = known[i];
            }
        }
        if (best)
            return sim_j_fail(ctx, c->string, "unknown key (did you mean '%s'?)", best);
        if (strict)
            return sim_j_fail(ctx, c->string, "unknown key");
    }
    return SIM_OK;
}

sim_status sim_j_status(const sim_jctx *ctx, const cJSON *obj, int *status, char *source,
                        size_t cap)
{
    static const char *const words[] = {"datasheet", "measured", "derived", "estimated"};
    char word[32];
    sim_status st = sim_j_str(ctx, obj, "status", 1, word, sizeof(word), NULL);
    if (st == SIM_OK)
        st = sim_j_str(ctx, obj, "source", 1, source, cap, NULL);
    if (st != SIM_OK)
        return st;
    for (int i = 0; i < 4; i++) {
        if (strcmp(word, words[i]) == 0) {
            *status = i;
            return SIM_OK;
        }
    }
    return sim_j_fail(ctx, "status",
                      "unknown status (expected datasheet, measured, derived or estimated, got "
                      "'%s')",
                      word);
}

sim_status sim_j_figure(const sim_jctx *parent, const cJSON *obj, const char *key, int required,
                        double min, double max, int positive, double *value, int *status,
                        char *source, size_t cap, int *present)
{
    static const char *const keys[] = {"value", "status", "source", "note"};
    const cJSON *fig = cJSON_GetObjectItemCaseSensitive(obj, key);
    int p = fig != NULL;
    if (present)
        *present = p;
    if (!p)
        return required ? sim_j_fail(parent, key, "required figure missing") : SIM_OK;
    if (!cJSON_IsObject(fig))
        return sim_j_fail(parent, key,
                          "wrong type (expected an object {\"value\", \"status\", \"source\"})");
    char prefix[96];
    snprintf(prefix, sizeof(prefix), "%s%s.", parent->prefix ? parent->prefix : "", key);
    sim_jctx ctx = *parent;
    ctx.scope = sim_j_locate(parent, key);
    ctx.prefix = prefix;
    sim_status st = sim_j_check_keys(&ctx, fig, keys, 4, NULL, 0, 1);
    if (st == SIM_OK)
        st = sim_j_num(&ctx, fig, "value", 1, min, max, value, NULL);
    if (st == SIM_OK && positive && !(*value > 0.0))
        return sim_j_fail(&ctx, "value", "must be > 0 (got %.17g)", *value);
    if (st != SIM_OK)
        return st;
    return sim_j_status(&ctx, fig, status, source, cap);
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* How many members named key come before stop in node, in the order they were written (cJSON
 * keeps members in that order, and a member's key precedes its children): which occurrence
 * of "key": in the text stop is, for sim_j_fail_nth. *found is set once stop is reached. */
static int keys_before(const cJSON *node, const cJSON *stop, const char *key, int *found)
{
    int n = 0;
    for (const cJSON *c = node->child; c && !*found; c = c->next) {
        if (c == stop) {
            *found = 1;
            break;
        }
        n += c->string && strcmp(c->string, key) == 0;
        n += keys_before(c, stop, key, found);
    }
    return n;
}

/* No object anywhere in node holds a key twice: cJSON keeps the first, so a file that says
 * two things would silently mean one (issue 27: a benchmark file's second max_concurrency was
 * ignored). Sorted per object, n log n in its keys; every reader runs it on the whole tree
 * before its parse callback, so the callbacks' sim_j_check_keys need not. The message names
 * the key with its path (path: node's, "" for the root) at its second occurrence. */
static sim_status no_duplicate_keys(const sim_jctx *ctx, const cJSON *root, const cJSON *node,
                                    const char *path)
{
    sim_status st = SIM_OK;
    if (cJSON_IsObject(node) && node->child && node->child->next) {
        size_t n = 0;
        for (const cJSON *c = node->child; c; c = c->next)
            n++;
        const char **keys = malloc(n * sizeof(*keys));
        if (!keys)
            return sim_j_fail(ctx, NULL, "out of memory");
        n = 0;
        for (const cJSON *c = node->child; c; c = c->next)
            keys[n++] = c->string;
        qsort(keys, n, sizeof(*keys), cmp_key);
        const char *dup = NULL;
        for (size_t i = 1; i < n && !dup; i++)
            if (strcmp(keys[i], keys[i - 1]) == 0)
                dup = keys[i];
        if (dup) {
            const cJSON *second = NULL;
            int seen = 0;
            for (const cJSON *c = node->child; c && !second; c = c->next)
                if (strcmp(c->string, dup) == 0 && seen++ == 1)
                    second = c;
            int found = 0;
            char prefix[272];
            snprintf(prefix, sizeof(prefix), "%s%s", path, path[0] ? "." : "");
            sim_jctx at = *ctx;
            at.scope = NULL;
            at.prefix = prefix;
            st = sim_j_fail_nth(&at, dup, keys_before(root, second, dup, &found), "duplicate key");
        }
        free(keys);
    }
    int i = 0;
    for (const cJSON *c = node->child; c && st == SIM_OK; c = c->next, i++) {
        char sub[256];
        if (cJSON_IsObject(node))
            snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", c->string);
        else
            snprintf(sub, sizeof(sub), "%s[%d]", path, i);
        st = no_duplicate_keys(ctx, root, c, sub);
    }
    return st;
}

sim_status sim_json_load_file(const char *path, sim_json_parse_fn parse, void *out,
                              struct sim_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    sim_status st = sim_json_read_file(path, &buf, &len, err);
    if (st != SIM_OK)
        goto cleanup;
    sim_jctx ctx = {path, buf, NULL, "", 0, err};
    root = sim_json_parse(&ctx, len);
    if (!root) {
        st = SIM_EPARSE;
        goto cleanup;
    }
    st = no_duplicate_keys(&ctx, root, root, "");
    if (st == SIM_OK)
        st = parse(&ctx, root, out);
cleanup:
    cJSON_Delete(root);
    free(buf);
    return st;
}

sim_status sim_j_fail_validator(const sim_jctx *ctx, const char *msg)
{
    /* The key is what precedes the first ':' or '[' ("allreduce[1]: ..."). */
    char key[64] = {0};
    size_t k = strcspn(msg, ":[");
    if (k == 0 || k >= sizeof(key) || msg[k] == '\0')
        return sim_j_fail_loc(ctx, NULL, "%s", msg);
    memcpy(key, msg, k);
    return sim_j_fail_loc(ctx, key, "%s", msg);
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\v' && *s != '\f')
            return 0;
    return 1;
}

/* One line of JSON Lines, line[0..n) NUL-terminated, number lineno (1-based): a comment or a
 * blank line is skipped, any other is parsed alone (line_base makes its messages carry the
 * file's line numbers) and handed to line_fn. */
static sim_status jsonl_line(const char *path, const char *line, size_t n, int lineno,
                             sim_jsonl_line_fn line_fn, void *user, struct sim_err *err)
{
    if (line[0] == '#' || is_blank(line))
        return SIM_OK;
    sim_jctx ctx = {path, line, NULL, "", lineno - 1, err};
    cJSON *root = sim_json_parse(&ctx, n);
    if (!root)
        return SIM_EPARSE;
    sim_status st = no_duplicate_keys(&ctx, root, root, "");
    if (st == SIM_OK)
        st = line_fn(&ctx, root, lineno, user);
    cJSON_Delete(root);
    return st;
}

sim_status sim_jsonl_each_text(const char *path, char *buf, size_t len, sim_jsonl_line_fn line_fn,
                               void *user, struct sim_err *err)
{
    sim_status st = SIM_OK;
    int line = 0;
    /* Each line is cut out in place (its '\n' becomes the NUL cJSON requires) and parsed
     * alone; line_base makes the wrapper's line numbers the file's. */
    for (char *p = buf; st == SIM_OK && p <= buf + len && *p != '\0';) {
        line++;
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : buf + len;
        *end = '\0';
        char *next = end + 1;
        st = jsonl_line(path, p, (size_t)(end - p), line, line_fn, user, err);
        if (!nl)
            break;
        p = next;
    }
    return st;
}

/* The checks sim_json_read_file makes of the whole text, by reading f once to its end: at most
 * SIM_JSON_MAX_FILE_BYTES, and no NUL byte. */
static sim_status scan_text(const char *path, FILE *f, struct sim_err *err)
{
    char chunk[1 << 16];
    uint64_t total = 0;
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        total += got;
        const sim_status st = sim_json_check_text(path, chunk, got, total, err);
        if (st != SIM_OK)
            return st;
    }
    if (ferror(f)) {
        sim_errf(err, "%s: read error", path);
        return SIM_EIO;
    }
    return SIM_OK;
}

/* The file is read twice, a line at a time: once for the checks of the whole text (as
 * sim_json_read_file makes them), then line by line, so memory holds one line, not the file. */
sim_status sim_jsonl_each(const char *path, sim_jsonl_line_fn line_fn, void *user,
                          struct sim_err *err)
{
    FILE *f;
    sim_status st = open_regular(path, &f, err);
    if (st != SIM_OK)
        return st;
    st = scan_text(path, f, err);
    if (st == SIM_OK && fseek(f, 0, SEEK_SET) != 0) {
        sim_errf(err, "%s: cannot read it again: %s", path, strerror(errno));
        st = SIM_EIO;
    }
    char *line = NULL;
    size_t cap = 0;
    uint64_t total = 0;
    int lineno = 0;
    while (st == SIM_OK) {
        errno = 0;
        const ssize_t got = getline(&line, &cap, f);
        if (got < 0) {
            if (ferror(f)) {
                sim_errf(err, "%s: %s", path, errno == ENOMEM ? "out of memory" : "read error");
                st = errno == ENOMEM ? SIM_ENOMEM : SIM_EIO;
            }
            break;
        }
        total += (uint64_t)got;
        size_t n = (size_t)got;
        if (total > (uint64_t)SIM_JSON_MAX_FILE_BYTES || memchr(line, '\0', n)) {
            /* The file changed since the scan. */
            sim_errf(err, "%s: changed while being read", path);
            st = SIM_EIO;
            break;
        }
        lineno++;
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        st = jsonl_line(path, line, n, lineno, line_fn, user, err);
    }
    free(line);
    fclose(f);
    return st;
}

/* The one way every JSON output of llmstep writes a number (json_writer.h), so that two
 * outputs of one value agree to the bit (cJSON's own printer drops a last bit it deems within
 * epsilon). */
int sim_j_format_number(char *buf, size_t cap, double v)
{
    char tmp[SIM_JW_NUMBER_MAX];
    const size_t n = (size_t)(sim_jw_put_number(tmp, v) - tmp);
    tmp[n] = '\0';
    snprintf(buf, cap, "%s", tmp);
    return (int)n;
}

cJSON *sim_j_add_number(cJSON *obj, const char *key, double v)
{
    char buf[40];
    sim_j_format_number(buf, sizeof(buf), v);
    return cJSON_AddRawToObject(obj, key, buf);
}

void sim_j_write_tree(sim_jw *w, const char *key, const cJSON *item)
{
    if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
        const int object = cJSON_IsObject(item);
        if (object)
            sim_jw_object_begin(w, key);
        else
            sim_jw_array_begin(w, key);
        for (const cJSON *c = item->child; c; c = c->next)
            sim_j_write_tree(w, object ? c->string : NULL, c);
        if (object)
            sim_jw_object_end(w);
        else
            sim_jw_array_end(w);
    } else if (cJSON_IsString(item)) {
        sim_jw_str(w, key, item->valuestring);
    } else if (cJSON_IsNumber(item)) {
        sim_jw_num(w, key, item->valuedouble);
    } else if (cJSON_IsRaw(item)) {
        /* sim_j_add_number's text: a number that reads back exactly, or null. */
        sim_jw_num(w, key,
                   strcmp(item->valuestring, "null") == 0 ? (double)NAN
                                                          : strtod(item->valuestring, NULL));
    } else if (cJSON_IsBool(item)) {
        sim_jw_bool(w, key, cJSON_IsTrue(item));
    } else {
        sim_jw_null(w, key);
    }
}
