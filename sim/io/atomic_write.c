/* atomic_write.c - see atomic_write.h. */
#define _POSIX_C_SOURCE 200809L
#include "atomic_write.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "paths.h"

/* The process's file-creation mask without changing it (umask() sets it, process-wide and
 * racy with other threads): Linux reports it in /proc/self/status; 022 where it does not. */
static mode_t current_umask(void)
{
    mode_t um = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return um;
    char line[256];
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "Umask:", 6) == 0) {
            char *end = NULL;
            long v = strtol(line + 6, &end, 8);
            if (end != line + 6 && v >= 0 && v <= 0777)
                um = (mode_t)v;
            break;
        }
    fclose(f);
    return um;
}

/* Writes len bytes to fd, resuming after short writes and interruptions. */
static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        data += w;
        len -= (size_t)w;
    }
    return 1;
}

/* The target itself: a name (an empty one would write a temporary in the working directory,
 * then fail), and, when it exists, a regular file (rename() would replace a device node, a
 * directory entry's link or a FIFO with a regular file: run as root, --out /dev/full did).
 * *existed and *sb say what is there. */
static sim_status target_ok(const char *path, struct stat *sb, int *existed, struct sim_err *err)
{
    *existed = 0;
    if (!path[0]) {
        sim_errf(err, "an empty file name (expected a path to write)");
        return SIM_EINVAL;
    }
    *existed = lstat(path, sb) == 0;
    if (*existed && !S_ISREG(sb->st_mode)) {
        sim_errf(err, "%s: exists and is not a regular file; not replaced", path);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

sim_status sim_write_check(const char *path, struct sim_err *err)
{
    struct stat sb;
    int existed;
    const sim_status st = target_ok(path, &sb, &existed, err);
    if (st != SIM_OK)
        return st;
    /* The folder the temporary file goes to: it must exist and take a new file. */
    char dir[4096];
    if (!sim_path_folder(path, dir, sizeof(dir)) || access(dir, W_OK | X_OK) != 0) {
        sim_errf(err, "%s: cannot create a file in its folder (missing or not writable)", path);
        return SIM_EIO;
    }
    return SIM_OK;
}

sim_status sim_write_atomic(const char *path, const char *data, size_t len, struct sim_err *err)
{
    char tmp[4096];
    struct stat sb;
    int existed;
    const sim_status st = target_ok(path, &sb, &existed, err);
    if (st != SIM_OK)
        return st;
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= sizeof(tmp)) {
        sim_errf(err, "%s: path too long", path);
        return SIM_EINVAL;
    }
    const mode_t mode = existed ? (sb.st_mode & 07777) : (0666 & ~current_umask());
    /* From creating the temporary to renaming or removing it, signals wait (this thread's
     * mask): an interrupt cannot leave the temporary behind (SIGKILL still can). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    /* mkstemp: a new name that no one could have planted (O_CREAT | O_EXCL: it never opens
     * an existing file or follows a symbolic link), in the target's directory so the rename
     * stays on one file system. */
    int fd = mkstemp(tmp);
    if (fd < 0) {
        const int e = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        sim_errf(err, "%s: cannot create a temporary file next to it: %s", path, strerror(e));
        return SIM_EIO;
    }
    /* The replaced file's permissions and (when allowed) owner; a new file gets the usual
     * 0666 less the umask, as fopen would give it. */
    int ok = fchmod(fd, mode) == 0;
    if (existed && (sb.st_uid != geteuid() || sb.st_gid != getegid()))
        (void)!fchown(fd, sb.st_uid, sb.st_gid); /* only root may; keep ours otherwise */
    ok = write_all(fd, data, len) && ok;
    ok = fsync(fd) == 0 && ok;
    ok = close(fd) == 0 && ok;
    const int e = errno;
    if (!ok || rename(tmp, path) != 0) {
        const int e2 = ok ? errno : e;
        unlink(tmp);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        sim_errf(err, "%s: cannot write: %s", path, strerror(e2));
        return SIM_EIO;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return SIM_OK;
}
