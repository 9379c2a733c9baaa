/*
 * A workload of your own. slopewatch builds this file (and any other `sources` of its
 * [[workloads]] entry) with each toolchain under test, runs it at doubling sizes and fits how its
 * time grows: doubling SIZE should double the time of a linear loop, not quadruple it.
 *
 * slopewatch.h is the harness: it provides main(), one untimed warm-up, the clock around sw_run()
 * only, instruction counts and the JSON line the agent reads. Replace the loop below with the
 * code you care about (a tokenizer, a parser, a search), keeping its work proportional to SIZE.
 */
#include "slopewatch.h"

static char *text;
static long long lines;

/* Once per size, untimed: build an input of SIZE bytes. Return 0, or non-zero if it failed. */
int sw_setup(long long size) {
    text = malloc((size_t)size + 1);
    if (!text) return -1;
    lines = 0;
    for (long long i = 0; i < size; i++) {
        text[i] = i % 16 == 15 ? '\n' : 'a' + (char)(i % 16);
        lines += text[i] == '\n';
    }
    text[size] = '\0';
    return 0;
}

/* Before each repetition, untimed: restore anything the loop changed (nothing here). */
void sw_before(void) {}

/* The measured loop. It returns a count of what it found, checked against sw_expected(). */
long long sw_run(void) {
    long long found = 0;
    for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++) found++;
    return found;
}

/* After each repetition, untimed: free what sw_before() made (nothing here). */
void sw_after(void) {}

/* What a correct sw_run() returns: a different count fails the workload as a wrong result. */
long long sw_expected(void) { return lines; }
