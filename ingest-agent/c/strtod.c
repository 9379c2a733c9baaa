/* Parse each decimal number with strtod, resuming where it stopped. */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "1234.5 ", ' '); }

long long sw_run(void) {
    long long hits = 0;
    char *p = text, *end;
    for (;;) {
        double v = strtod(p, &end);
        if (end == p) break;
        if (v != 1234.5) return -1;
        hits++;
        p = end;
    }
    return hits;
}
