/* classic-hex.c - hex fixture reader. */
#include "classic-hex.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testsupport.h"

uint8_t *ch_read_hex(const char *name, size_t *n)
{
        char rel[256];
        snprintf(rel, sizeof rel, "classic/%s.hex", name);
        char *text = ts_read_fixture(rel);
        uint8_t *out = malloc(strlen(text) / 2 + 1);
        if (!out)
                abort();
        size_t k = 0;
        int hi = -1;
        for (const char *p = text; *p; p++) {
                if (*p == '#') {
                        while (*p && *p != '\n')
                                p++;
                        if (!*p)
                                break;
                        continue;
                }
                if (!isxdigit((unsigned char) *p))
                        continue;
                int v = isdigit((unsigned char) *p) ? *p - '0' : tolower((unsigned char) *p) - 'a' + 10;
                if (hi < 0) {
                        hi = v;
                } else {
                        out[k++] = (uint8_t) (hi << 4 | v);
                        hi = -1;
                }
        }
        free(text);
        *n = k;
        return out;
}
