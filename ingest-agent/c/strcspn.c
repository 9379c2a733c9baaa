/* Skip to each separator (',' or ';') with strcspn, then step over it. */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "abcdefg;", 'x'); }

long long sw_run(void) {
    long long hits = 0;
    const char *p = text;
    while (*p) {
        p += strcspn(p, ",;");
        if (*p) {
            hits++;
            p++;
        }
    }
    return hits;
}
