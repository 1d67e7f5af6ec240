/* textin.c - see textin.h. */
#include "textin.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "err.h"
#include "paths.h"

/* The buffer's first size (a power of two, so the limits stay exact powers of two). */
#define TEXTIN_FIRST_CAP ((size_t)1 << 16)
/* zlib's input buffer (its output buffer is twice this), and the most one gzread asks for:
 * less than zlib's output buffer, so every read goes through it and a damaged stream
 * fails at the same byte of text whether the file is read whole or line by line. */
#define TEXTIN_ZLIB_BUF (1u << 17)
#define TEXTIN_CHUNK    ((size_t)1 << 16)

struct sim_textin {
    gzFile gz;
    char *path;
    char *buf;              /* cap bytes: the unread text is buf[start, end), buf[end] == '\0' */
    size_t cap, start, end; /* bytes */
    int at_end;             /* the stream ended cleanly: nothing more to read */
    int64_t line;           /* lines returned so far */
};

/* What one fill() did. */
typedef enum fill_result {
    FILL_MORE = 0,  /* text was added */
    FILL_END = 1,   /* the stream ended cleanly */
    FILL_FULL = 2,  /* the buffer is full at its limit */
    FILL_NOMEM = 3, /* the buffer could not grow */
    FILL_EREAD = 4, /* gzread failed */
    FILL_EDATA = 5  /* the stream ended with a zlib error: truncated or corrupt gzip data */
} fill_result;

/*
 * Moves the unread text to the front of the buffer, doubles the buffer when fewer than
 * 2 bytes are free (not beyond max_bytes), and appends the next chunk of the stream.
 */
static fill_result fill(sim_textin *in, size_t max_bytes)
{
    if (in->start > 0) {
        memmove(in->buf, in->buf + in->start, in->end - in->start + 1);
        in->end -= in->start;
        in->start = 0;
    }
    if (in->cap - in->end < 2) {
        if (in->cap >= max_bytes)
            return FILL_FULL;
        char *nb = realloc(in->buf, in->cap * 2);
        if (!nb)
            return FILL_NOMEM;
        in->buf = nb;
        in->cap *= 2;
    }
    size_t want = in->cap - in->end - 1;
    if (want > TEXTIN_CHUNK)
        want = TEXTIN_CHUNK;
    const int got = gzread(in->gz, in->buf + in->end, (unsigned)want);
    if (got < 0)
        return FILL_EREAD;
    if (got == 0) {
        /* A truncated gzip stream ends quietly; gzerror says so. */
        int zerr = Z_OK;
        gzerror(in->gz, &zerr);
        if (zerr != Z_OK)
            return FILL_EDATA;
        in->at_end = 1;
        return FILL_END;
    }
    in->end += (size_t)got;
    in->buf[in->end] = '\0';
    return FILL_MORE;
}

void sim_textin_free(sim_textin *in)
{
    if (!in)
        return;
    if (in->gz)
        gzclose(in->gz);
    free(in->path);
    free(in->buf);
    free(in);
}

sim_status sim_textin_open(const char *path, sim_textin **out, struct sim_err *err)
{
    *out = NULL;
    sim_status st = sim_path_check_regular(path, err);
    if (st != SIM_OK)
        return st;
    sim_textin *in = calloc(1, sizeof(*in));
    if (!in)
        return sim_enomem(err, path);
    in->cap = TEXTIN_FIRST_CAP;
    in->path = malloc(strlen(path) + 1);
    in->buf = malloc(in->cap);
    if (!in->path || !in->buf) {
        sim_textin_free(in);
        return sim_enomem(err, path);
    }
    strcpy(in->path, path);
    in->buf[0] = '\0';
    errno = 0;
    in->gz = gzopen(path, "rb");
    if (!in->gz) {
        sim_errf(err, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
        sim_textin_free(in);
        return SIM_EIO;
    }
    gzbuffer(in->gz, TEXTIN_ZLIB_BUF);
    *out = in;
    return SIM_OK;
}

sim_status sim_textin_read_all(sim_textin *in, size_t max_bytes, const char *what,
                               const char **data, size_t *len, struct sim_err *err)
{
    fill_result r = FILL_MORE;
    while (r == FILL_MORE && !in->at_end)
        r = fill(in, max_bytes);
    int zerr = Z_OK;
    switch (r) {
    case FILL_MORE:
    case FILL_END:
        break;
    case FILL_FULL:
        sim_errf(err, "%s: more than %d MiB (decompressed); not %s", in->path,
                 (int)(max_bytes >> 20), what);
        return SIM_EIO;
    case FILL_NOMEM:
        return sim_enomem(err, in->path);
    case FILL_EREAD:
        sim_errf(err, "%s: cannot read: %s", in->path, gzerror(in->gz, &zerr));
        return SIM_EIO;
    case FILL_EDATA:
        sim_errf(err, "%s: corrupt or truncated gzip data: %s", in->path, gzerror(in->gz, &zerr));
        return SIM_EIO;
    }
    *data = in->buf + in->start;
    *len = in->end - in->start;
    return SIM_OK;
}

sim_status sim_textin_line(sim_textin *in, size_t max_bytes, char **line, struct sim_err *err)
{
    size_t seen = 0; /* unread bytes already searched for a newline */
    *line = NULL;
    for (;;) {
        char *p = in->buf + in->start;
        const size_t avail = in->end - in->start;
        char *nl = memchr(p + seen, '\n', avail - seen);
        if (nl || (in->at_end && avail > 0)) {
            /* The last line may lack its newline; buf[end] already ends it. */
            size_t n = nl ? (size_t)(nl - p) : avail;
            if (memchr(p, '\0', n)) {
                sim_errf(err, "%s:%lld: contains a NUL byte (not a text file)", in->path,
                         (long long)(in->line + 1));
                return SIM_EPARSE;
            }
            p[n] = '\0';
            in->start += nl ? n + 1 : n;
            if (n > 0 && p[n - 1] == '\r')
                p[n - 1] = '\0';
            in->line++;
            *line = p;
            return SIM_OK;
        }
        if (in->at_end)
            return SIM_OK;
        seen = avail;
        const fill_result r = fill(in, max_bytes);
        if (r == FILL_MORE || r == FILL_END)
            continue;
        if (r == FILL_FULL) {
            sim_errf(err, "%s:%lld: line longer than %zu bytes", in->path,
                     (long long)(in->line + 1), max_bytes);
            return SIM_EPARSE;
        }
        if (r == FILL_NOMEM)
            return sim_enomem(err, in->path);
        int zerr = Z_OK;
        const char *zmsg = gzerror(in->gz, &zerr);
        /* zlib prefixes its message with the path; the error names it already. */
        const size_t pl = strlen(in->path);
        if (strncmp(zmsg, in->path, pl) == 0 && zmsg[pl] == ':' && zmsg[pl + 1] == ' ')
            zmsg += pl + 2;
        sim_errf(err, "%s:%lld: read error: %s", in->path, (long long)(in->line + 1),
                 zerr == Z_ERRNO ? strerror(errno) : zmsg);
        return SIM_EIO;
    }
}

const char *sim_textin_path(const sim_textin *in) { return in->path; }

int64_t sim_textin_line_no(const sim_textin *in) { return in->line; }

char *sim_text_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}
