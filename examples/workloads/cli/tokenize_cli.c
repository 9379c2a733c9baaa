/*
 * The team's lexer as a command-line program, the shape of a command workload: it follows no
 * harness, takes its input size as an argument, and prints two lines the agent reads:
 *
 *   slopewatch_ns=<nanoseconds the tokenizing took>   (without it, the process's wall time counts)
 *   slopewatch_result=<token count>                   (compared between toolchains)
 *
 * Usage: tokenize-cli --bytes SIZE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lexer.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 3 || strcmp(argv[1], "--bytes") != 0) {
        fprintf(stderr, "usage: %s --bytes SIZE\n", argv[0]);
        return 2;
    }
    char *end;
    long long size = strtoll(argv[2], &end, 10);
    if (*end != '\0' || size < 1) {
        fprintf(stderr, "SIZE must be a positive number of bytes, not %s\n", argv[2]);
        return 2;
    }
    static const char token[] = "ident_42";
    char *input = malloc((size_t)size + 1);
    if (!input) {
        fprintf(stderr, "cannot allocate %lld bytes\n", size);
        return 2;
    }
    for (long long i = 0; i < size; i++) {
        long long at = i % (long long)sizeof token;
        input[i] = at == (long long)sizeof token - 1 ? LEXER_DELIMITER : token[at];
    }
    input[size] = '\0';

    double began = now_ns();
    long long tokens = lexer_count_tokens(input);
    double took = now_ns() - began;

    printf("slopewatch_ns=%.0f\nslopewatch_result=%lld\n", took > 0 ? took : 1, tokens);
    free(input);
    return 0;
}
