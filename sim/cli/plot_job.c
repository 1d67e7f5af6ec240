/* plot_job.c - a gnuplot job for `llmstep plot` (see plot.h). Without gnuplot the command
 * fails with exit 1 and says which package to install. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"

extern char **environ;

int path_ok(const char *p) { return !strpbrk(p, "'\n\r"); }

int job_open(plot_job *j, const char *out)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
    size_t n = strlen(out);
    if (n > 4 && strcmp(out + n - 4, ".svg") == 0)
        j->svg = 1;
    else if (n > 4 && strcmp(out + n - 4, ".png") == 0)
        j->svg = 0;
    else {
        cli_error("plot: --out '%s': the name must end in .svg or .png", out);
        return CLI_USAGE;
    }
    if (!path_ok(out)) {
        cli_error("plot: --out '%s': quotes and newlines are not supported in the path", out);
        return CLI_USAGE;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(j->dir, sizeof(j->dir), "%s/llmstep-plot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!path_ok(j->dir) || !mkdtemp(j->dir)) {
        cli_error("plot: cannot create a temporary folder in %s: %s", tmp && *tmp ? tmp : "/tmp",
                  strerror(errno));
        j->dir[0] = '\0';
        return CLI_BAD_INPUT;
    }
    /* gnuplot runs in the temporary folder, so the image path must be absolute. */
    char cwd[4096] = "";
    if (out[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
        cli_error("plot: cannot read the current directory: %s", strerror(errno));
        return CLI_BAD_INPUT;
    }
    snprintf(j->tmp_out, sizeof(j->tmp_out), "%s%s%s.tmp.%ld", cwd, cwd[0] ? "/" : "", out,
             (long)getpid());
    if (!path_ok(j->tmp_out)) {
        cli_error("plot: the current directory's path has a quote or newline");
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Opens a new file in the job's folder for writing; records it for removal. */
FILE *job_file(plot_job *j, const char *name)
{
    if (j->n_files == PLOT_MAX_FILES)
        return NULL;
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", j->dir, name);
    FILE *f = fopen(path, "w");
    if (f)
        snprintf(j->files[j->n_files++], sizeof(j->files[0]), "%s", name);
    else
        cli_error("plot: cannot write %s: %s", path, strerror(errno));
    return f;
}

/* Removes the temporary folder and everything the job put in it. */
void job_close(plot_job *j)
{
    if (j->script)
        fclose(j->script);
    j->script = NULL;
    if (!j->dir[0])
        return;
    char path[4200];
    for (int i = 0; i < j->n_files; i++) {
        snprintf(path, sizeof(path), "%s/%s", j->dir, j->files[i]);
        unlink(path);
    }
    rmdir(j->dir);
    j->dir[0] = '\0';
}

/* Starts the script: terminal, output, fonts. width x height in pixels. */
int job_script(plot_job *j, int width, int height)
{
    j->script = job_file(j, "plot.gp");
    if (!j->script)
        return CLI_BAD_INPUT;
    FILE *s = j->script;
    if (j->svg)
        fprintf(s,
                "set terminal svg size %d,%d dynamic enhanced font 'DejaVu Sans,12' "
                "background rgb 'white'\n",
                width, height);
    else
        fprintf(s, "set terminal pngcairo size %d,%d enhanced font 'DejaVu Sans,11'\n", width,
                height);
    fprintf(s, "cd '%s'\n", j->dir);
    fprintf(s, "set output '%s'\nset datafile separator whitespace\nset encoding utf8\n",
            j->tmp_out);
    fprintf(s, "set grid xtics ytics mxtics mytics lc rgb '#e0e0e0' lw 1, lc rgb '#f2f2f2'\n");
    return CLI_OK;
}

/* Runs gnuplot on the script and moves the image into place. */
int job_render(plot_job *j)
{
    fprintf(j->script, "unset output\n");
    if (fclose(j->script) != 0) {
        j->script = NULL;
        cli_error("plot: writing the gnuplot script failed");
        return CLI_BAD_INPUT;
    }
    j->script = NULL;
    const char *gp = getenv("LLMSTEP_GNUPLOT");
    if (!gp || !*gp)
        gp = "gnuplot";
    char script[4200], errpath[4200];
    snprintf(script, sizeof(script), "%s/plot.gp", j->dir);
    snprintf(errpath, sizeof(errpath), "%s/gnuplot.err", j->dir);
    if (j->n_files < PLOT_MAX_FILES)
        snprintf(j->files[j->n_files++], sizeof(j->files[0]), "gnuplot.err");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *args[] = {(char *)(uintptr_t)gp, script, NULL};
    pid_t pid;
    int e = posix_spawnp(&pid, gp, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        cli_error("plot: cannot run '%s' (%s): install gnuplot with `apt-get install gnuplot-nox`",
                  gp, strerror(e));
        return CLI_BAD_INPUT;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    struct stat st;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(j->tmp_out, &st) != 0 ||
        st.st_size == 0) {
        /* 127: the shell-less spawn could not exec gnuplot. */
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            cli_error("plot: cannot run '%s': install gnuplot with `apt-get install gnuplot-nox`",
                      gp);
        else
            cli_error("plot: gnuplot failed (exit %d); its messages follow",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        FILE *f = fopen(errpath, "r");
        char line[512];
        while (f && fgets(line, sizeof(line), f))
            fprintf(stderr, "  %s", line);
        if (f)
            fclose(f);
        unlink(j->tmp_out);
        return CLI_BAD_INPUT;
    }
    if (rename(j->tmp_out, j->out) != 0) {
        cli_error("plot: cannot rename %s to %s: %s", j->tmp_out, j->out, strerror(errno));
        unlink(j->tmp_out);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* Escapes a label for a gnuplot single-quoted enhanced-text string. */
void gp_label(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    for (; *s && k + 3 < cap; s++) {
        if (*s == '\'') {
            out[k++] = '\'';
            out[k++] = '\'';
        } else if (*s == '_' || *s == '^' || *s == '{' || *s == '}' || *s == '@' || *s == '&' ||
                   *s == '~') {
            /* One backslash escapes enhanced-text markup in a single-quoted string. */
            out[k++] = '\\';
            out[k++] = *s;
        } else if (*s != '\n') {
            out[k++] = *s;
        }
    }
    out[k] = '\0';
}
