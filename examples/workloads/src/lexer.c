/*
 * The loop of the article: advance a cursor through the input, asking strchr for the next
 * delimiter in the rest of it. Each call moves the cursor a few bytes, so the loop is linear
 * while strchr stops at the first hit, and quadratic under a strchr that measures the whole
 * remaining string first.
 */
#include <string.h>

#include "lexer.h"

long long lexer_count_tokens(const char *input) {
    long long tokens = 0;
    const char *p = input;
    while ((p = strchr(p, LEXER_DELIMITER)) != NULL) {
        tokens++;
        p++;
    }
    return tokens;
}
