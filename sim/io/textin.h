/*
 * textin.h - the one reader of plain or gzip-compressed text files in simio: the
 * kernel-table CSV reader takes it line by line, the benchmark readers read the whole
 * file first. Files go through zlib's gzread, which passes plain files through
 * unchanged, so "x.csv" and "x.csv.gz" read alike; a truncated or corrupt gzip stream
 * is an error, never an early end of the text. Only regular files are opened
 * (sim_path_check_regular). Both ways of reading keep a size limit, so neither a
 * huge file nor a gzip bomb fills memory.
 */
#ifndef SIM_TEXTIN_H
#define SIM_TEXTIN_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct sim_textin sim_textin; /* opaque: the zlib stream, the buffer, the line count */

/*
 * Opens path. On success *out is a heap reader the caller releases with
 * sim_textin_free(). On failure *out is NULL and err says "<path>: not a regular
 * file" or "<path>: cannot open: <reason>" (SIM_EIO), or "<path>: out of memory".
 */
sim_status sim_textin_open(const char *path, sim_textin **out /* OUT */,
                           struct sim_err *err /* OUT */);

/* Closes the file and frees the reader; accepts NULL. */
void sim_textin_free(sim_textin *in);

/*
 * Reads the rest of the file into memory: *data (NUL-terminated after *len bytes, which
 * may hold NUL bytes) stays valid until sim_textin_free, and sim_textin_line then takes
 * its lines from memory without failing. A file of max_bytes - 1 bytes or more
 * (decompressed; max_bytes a power of two) is SIM_EIO "<path>: more than <N> MiB
 * (decompressed); not <what>"; a read error is SIM_EIO "<path>: cannot read: <zlib>", a
 * truncated or corrupt gzip stream SIM_EIO "<path>: corrupt or truncated gzip data: <zlib>".
 */
sim_status sim_textin_read_all(sim_textin *in, size_t max_bytes, const char *what,
                               const char **data /* OUT */, size_t *len /* OUT */,
                               struct sim_err *err /* OUT */);

/*
 * Reads the next line, without its "\n" or "\r\n", into *line: a pointer into the
 * reader's buffer, valid (and writable) until the next call; NULL at the end of the
 * file. A line of max_bytes - 1 bytes or more (max_bytes a power of two) is SIM_EPARSE
 * "<path>:<n>: line longer than <max_bytes> bytes", and one holding a NUL byte SIM_EPARSE
 * "<path>:<n>: contains a NUL byte (not a text file)"; a read error or a truncated or
 * corrupt gzip stream is SIM_EIO "<path>:<n>: read error: <reason>", n being the
 * number of the line that could not be read.
 */
sim_status sim_textin_line(sim_textin *in, size_t max_bytes, char **line /* OUT */,
                           struct sim_err *err /* OUT */);

/* s without its leading and trailing blanks (isspace), in place: the line readers' trim. */
char *sim_text_trim(char *s);

/* The path as given to sim_textin_open, and the 1-based number of the last line read. */
const char *sim_textin_path(const sim_textin *in);
int64_t sim_textin_line_no(const sim_textin *in);

#endif
