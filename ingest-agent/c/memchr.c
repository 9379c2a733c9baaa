/*
 * The control: the same walk as strchr, with memchr bounded by the known end, which no libc has
 * a reason to make depend on the rest of the buffer.
 */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "abcdefg:", 'x'); }

long long sw_run(void) {
    long long hits = 0;
    const char *p = text;
    const char *end = text + text_len;
    while ((p = memchr(p, ':', (size_t)(end - p))) != NULL) {
        hits++;
        p++;
    }
    return hits;
}
