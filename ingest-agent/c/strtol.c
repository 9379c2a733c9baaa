/* Parse each integer with strtol, resuming where it stopped, as tokenizers do. */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "123456 ", ' '); }

long long sw_run(void) {
    long long hits = 0;
    char *p = text, *end;
    for (;;) {
        long v = strtol(p, &end, 10);
        if (end == p) break;
        if (v != 123456) return -1;
        hits++;
        p = end;
    }
    return hits;
}
