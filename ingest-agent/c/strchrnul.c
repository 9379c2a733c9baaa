/* Find each ':' with strchrnul, which exists so callers never pay for the string's length. */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "abcdefg:", 'x'); }

long long sw_run(void) {
    long long hits = 0;
    const char *p = text;
    while (*(p = strchrnul(p, ':')) != '\0') {
        hits++;
        p++;
    }
    return hits;
}
