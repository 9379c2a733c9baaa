/*
 * The harness entry of the tokenize workload: SIZE bytes of identifiers separated by
 * LEXER_DELIMITER, tokenized by the team's own lexer (src/lexer.c) in the timed loop.
 */
#include "slopewatch.h"

#include "lexer.h"

static char *input;
static long long tokens;

int sw_setup(long long size) {
    static const char token[] = "ident_42";
    input = malloc((size_t)size + 1);
    if (!input) return -1;
    for (long long i = 0; i < size; i++) {
        long long at = i % (long long)sizeof token;
        input[i] = at == (long long)sizeof token - 1 ? LEXER_DELIMITER : token[at];
    }
    input[size] = '\0';
    tokens = size / (long long)sizeof token;
    return 0;
}

void sw_before(void) {}

long long sw_run(void) { return lexer_count_tokens(input); }

void sw_after(void) {}

long long sw_expected(void) { return tokens; }
