/* Find each separator (',' or ';') with strpbrk and step one byte past it. */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "abcdefg,", 'x'); }

long long sw_run(void) {
    long long hits = 0;
    const char *p = text;
    while ((p = strpbrk(p, ",;")) != NULL) {
        hits++;
        p++;
    }
    return hits;
}
