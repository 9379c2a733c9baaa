/* Find each ':' with strchr and step one byte past it: the tokenizer loop of the article. */
#include "slopewatch.h"
#include "text.h"

int sw_setup(long long size) { return text_fill(size, "abcdefg:", 'x'); }

long long sw_run(void) {
    long long hits = 0;
    const char *p = text;
    while ((p = strchr(p, ':')) != NULL) {
        hits++;
        p++;
    }
    return hits;
}
