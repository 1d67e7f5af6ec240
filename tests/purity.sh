#!/usr/bin/env bash
# The compute core is pure (CMakeLists.txt, docs/architecture.md): no I/O, no allocation, no
# environment, clock or randomness from libc. This checks what the compiled simcore asks the
# linker for: any undefined symbol from the list below fails the test. Formatting into memory
# (snprintf, vsnprintf: the one message formatter, sim/core/err.c) is allowed.
# usage: purity.sh LIBSIMCORE.a
set -euo pipefail
lib=$1
command -v nm >/dev/null || { echo "purity: nm not found (binutils)"; exit 77; }
forbidden='^(fopen|fdopen|freopen|fclose|fread|fwrite|fgets|fgetc|getc|getchar|fputs|fputc|putc|putchar|puts|printf|fprintf|vprintf|vfprintf|dprintf|perror|fflush|fseek|ftell|rewind|tmpfile|remove|rename|open|openat|creat|read|write|close|stat|fstat|lstat|opendir|readdir|mmap|malloc|calloc|realloc|reallocarray|free|strdup|strndup|aligned_alloc|posix_memalign|getenv|setenv|time|clock|clock_gettime|gettimeofday|rand|srand|random|exit|_exit|abort|system|dlopen|pthread_create)$'
syms=$(nm -u "$lib" | awk 'NF >= 2 {print $2}' | sed 's/@.*//' | sort -u)
bad=$(printf '%s\n' "$syms" | grep -E "$forbidden" || true)
if [ -n "$bad" ]; then
    echo "purity: simcore ($lib) calls libc functions the pure core must not use:"
    printf '  %s\n' $bad
    exit 1
fi
n=$(printf '%s\n' "$syms" | grep -c . || true)
echo "purity: simcore asks for $n symbols, none of them I/O, allocation, environment or clock"
