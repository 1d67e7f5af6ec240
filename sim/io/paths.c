/* paths.c - see paths.h. POSIX opendir is used for listing. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "paths.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "json_util.h"

/* What an id of a folder names, for messages. */
static const char *noun(const char *kind)
{
    if (strcmp(kind, "models") == 0)
        return "model";
    if (strcmp(kind, "engines") == 0)
        return "engine";
    if (strcmp(kind, "calibrations") == 0)
        return "calibration";
    return "hardware";
}

static int is_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') != NULL || (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

/* "unknown <noun> id 'NAME' (did you mean 'X'?; known: every id of the folder)": the ids NAME
 * is the start of (up to three), else the closest one within two edits. */
static void unknown_id(const char *data_dir, const char *kind, const char *name,
                       struct sim_err *err)
{
    char ids[256][64];
    int n = sim_path_list(data_dir, kind, ids, 256);
    char list[sizeof(err->msg)] = "", hint[sizeof(err->msg)] = "";
    size_t used = 0, used_hint = 0;
    const char *best = NULL;
    int bd = 3, n_prefix = 0;
    const size_t ln = strlen(name);
    for (int i = 0; i < n; i++) {
        int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", ids[i]);
        if (w > 0 && used + (size_t)w < sizeof(list))
            used += (size_t)w;
        int d = sim_j_edit_distance(name, ids[i]);
        if (d < bd) {
            bd = d;
            best = ids[i];
        }
        if (strncmp(ids[i], name, ln) == 0 && n_prefix++ < 3) {
            w = snprintf(hint + used_hint, sizeof(hint) - used_hint, "%s'%s'",
                         n_prefix > 1 ? " or " : "did you mean ", ids[i]);
            if (w > 0 && used_hint + (size_t)w < sizeof(hint))
                used_hint += (size_t)w;
        }
    }
    if (n_prefix == 0 && best)
        snprintf(hint, sizeof(hint), "did you mean '%s'", best);
    sim_errf(err, "unknown %s id '%s' (%s%sknown: %s)", noun(kind), name, hint,
             hint[0] ? "?; " : "", n > 0 ? list : "none");
}

sim_status sim_path_resolve(const char *data_dir, const char *kind, const char *name, char *out,
                            size_t cap, struct sim_err *err)
{
    if (!name || !*name) {
        sim_errf(err, "empty %s name", noun(kind));
        return SIM_EINVAL;
    }
    if (is_path(name)) {
        if ((size_t)snprintf(out, cap, "%s", name) >= cap) {
            sim_errf(err, "%s: path too long", name);
            return SIM_EINVAL;
        }
        return SIM_OK;
    }
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            sim_errf(err, "'%s': not a valid id (use letters, digits, . _ -)", name);
            return SIM_EINVAL;
        }
    }
    if ((size_t)snprintf(out, cap, "%s/%s/%s.json", data_dir, kind, name) >= cap) {
        sim_errf(err, "%s: path too long", name);
        return SIM_EINVAL;
    }
    if (access(out, R_OK) != 0) {
        unknown_id(data_dir, kind, name, err);
        return SIM_EINVAL;
    }
    return SIM_OK;
}

/* qsort order of rows of char arrays (ids, folder names). */
static int cmp_strings(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int sim_path_list(const char *data_dir, const char *kind, char (*ids)[64], int cap)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/%s", data_dir, kind);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < cap) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || l - 5 >= 64 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        memcpy(ids[n], e->d_name, l - 5);
        ids[n][l - 5] = '\0';
        n++;
    }
    closedir(d);
    qsort(ids, (size_t)n, sizeof(ids[0]), cmp_strings);
    return n;
}

int sim_path_list_dirs(const char *dir, char (*names)[256], int cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    const struct dirent *e;
    char p[4096];
    struct stat sb;
    while ((e = readdir(d)) != NULL && n < cap) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode) || strlen(e->d_name) >= 256)
            continue;
        strcpy(names[n++], e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), cmp_strings);
    return n;
}

sim_status sim_path_check_regular(const char *path, struct sim_err *err)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        sim_errf(err, "%s: not a regular file", path);
        return SIM_EIO;
    }
    return SIM_OK;
}

int sim_path_folder(const char *path, char *out, size_t cap)
{
    char dir[4096], res[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else if ((size_t)(slash - path) < sizeof(dir))
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    else
        return 0;
    if (!realpath(dir, res) || strlen(res) >= cap)
        return 0;
    snprintf(out, cap, "%s", res);
    return 1;
}

int sim_path_same(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char fa[4096], fb[4096];
    if (!sim_path_folder(a, fa, sizeof(fa)) || !sim_path_folder(b, fb, sizeof(fb)))
        return 0;
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    na = na ? na + 1 : a;
    nb = nb ? nb + 1 : b;
    return strcmp(fa, fb) == 0 && strcmp(na, nb) == 0;
}
