/*
 * Parse each integer with sscanf("%ld%n"), resuming at the consumed count. A libc whose sscanf
 * measures the whole remaining string per call makes this loop quadratic.
 */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "123456 ", ' '); }

long long sw_run(void) {
    long long hits = 0;
    const char *p = text;
    long v;
    int used;
    while (sscanf(p, "%ld%n", &v, &used) == 1) {
        if (v != 123456) return -1;
        hits++;
        p += used;
    }
    return hits;
}
