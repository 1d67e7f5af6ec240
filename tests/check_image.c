/*
 * check_image.c - checks that a plot file is a well-formed image:
 *   png: the 8-byte PNG signature, then an IHDR chunk of length 13 with a
 *        non-zero width and height (PNG spec, sections 5.2 and 11.2.2)
 *   svg: after an optional XML declaration, comments and DOCTYPE, the root
 *        element is <svg ...> in the SVG namespace, and the file ends with </svg>
 * usage: check_image FILE png|svg ; prints the size or the problem, exit 0 or 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_png(const unsigned char *b, size_t n)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 33 || memcmp(b, sig, 8) != 0) {
        printf("not a PNG: bad signature\n");
        return 1;
    }
    unsigned long len =
        (unsigned long)b[8] << 24 | (unsigned long)b[9] << 16 | (unsigned long)b[10] << 8 | b[11];
    unsigned long w =
        (unsigned long)b[16] << 24 | (unsigned long)b[17] << 16 | (unsigned long)b[18] << 8 | b[19];
    unsigned long h =
        (unsigned long)b[20] << 24 | (unsigned long)b[21] << 16 | (unsigned long)b[22] << 8 | b[23];
    if (len != 13 || memcmp(b + 12, "IHDR", 4) != 0 || w == 0 || h == 0) {
        printf("not a PNG: first chunk is not a valid IHDR\n");
        return 1;
    }
    printf("png %lux%lu\n", w, h);
    return 0;
}

static int check_svg(const char *s)
{
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
            p++;
        if (strncmp(p, "<?", 2) == 0) {
            p = strstr(p, "?>");
            if (!p)
                break;
            p += 2;
        } else if (strncmp(p, "<!--", 4) == 0) {
            p = strstr(p, "-->");
            if (!p)
                break;
            p += 3;
        } else if (strncmp(p, "<!DOCTYPE", 9) == 0) {
            p = strchr(p, '>');
            if (!p)
                break;
            p++;
        } else {
            break;
        }
    }
    if (!p || strncmp(p, "<svg", 4) != 0 || !strchr(" \n\r\t>", p[4])) {
        printf("not an SVG: the root element is not <svg>\n");
        return 1;
    }
    const char *end = strchr(p, '>');
    const char *ns = strstr(p, "xmlns=\"http://www.w3.org/2000/svg\"");
    if (!end || !ns || ns > end) {
        printf("not an SVG: the root element lacks the SVG namespace\n");
        return 1;
    }
    size_t n = strlen(s);
    while (n > 0 && strchr(" \n\r\t", s[n - 1]))
        n--;
    if (n < 6 || strncmp(s + n - 6, "</svg>", 6) != 0) {
        printf("not an SVG: the file does not end with </svg>\n");
        return 1;
    }
    printf("svg ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: check_image FILE png|svg\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        printf("cannot open %s\n", argv[1]);
        return 1;
    }
    size_t cap = 1 << 20, n = 0;
    unsigned char *b = malloc(cap + 1);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *nb = realloc(b, 2 * cap + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!b) {
        printf("out of memory\n");
        return 1;
    }
    b[n] = '\0';
    int rc = strcmp(argv[2], "png") == 0 ? check_png(b, n) : check_svg((const char *)b);
    free(b);
    return rc;
}
