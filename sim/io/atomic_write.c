/* atomic_write.c - see atomic_write.h. */
#define _POSIX_C_SOURCE 200809L
#include "atomic_write.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

sim_status sim_write_atomic(const char *path, const char *data, size_t len, struct sim_err *err)
{
    char tmp[4096];
    /* rename() would replace a device node, a directory entry's link or a FIFO with a
     * regular file (run as root, --out /dev/full did): only regular files are replaced. */
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        sim_errf(err, "%s: exists and is not a regular file; not replaced", path);
        return SIM_EINVAL;
    }
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
        sim_errf(err, "%s: path too long", path);
        return SIM_EINVAL;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        sim_errf(err, "%s: cannot create: %s", tmp, strerror(errno));
        return SIM_EIO;
    }
    int ok = fwrite(data, 1, len, f) == len;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        sim_errf(err, "%s: cannot write: %s", path, strerror(errno));
        remove(tmp);
        return SIM_EIO;
    }
    return SIM_OK;
}
