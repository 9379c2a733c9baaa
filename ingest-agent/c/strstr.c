/* Find each "</>" with strstr and step over it. */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "abcdefghijklm</>", 'x'); }

long long sw_run(void) {
    long long hits = 0;
    const char *p = text;
    while ((p = strstr(p, "</>")) != NULL) {
        hits++;
        p += 3;
    }
    return hits;
}
