/*
 * The search's binary: the harness of slopewatch.h measuring one input shape (shapes.h), named
 * as a found probe is, SLOPEWATCH_PROBE=contract.FUNCTION.AXIS~SHAPE:
 *
 *   SLOPEWATCH_PROBE='contract.strstr.needle~alphabet=1,mismatch=last' ./shapes SIZE [REPETITIONS]
 *
 * It holds no probe of the catalogue: what it measures comes from the shape's parameters alone.
 */
#include "slopewatch.h"
#include "shapes.h"

static struct sw_shape sw_current;
static const struct sw_shape_function *sw_current_function;
static long long sw_calls;

int sw_setup(long long size) {
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    const char *name = getenv("SLOPEWATCH_PROBE");
    if (!name) {
        fprintf(stderr, "SLOPEWATCH_PROBE must name the shape to run\n");
        return -1;
    }
    if (sw_shape_parse(&sw_current, name)) return -1;
    sw_current_function = sw_shape_function(sw_current.function);
    if (!sw_current_function) {
        fprintf(stderr, "not provided: %s\n", sw_current.function);
        exit(4);
    }
    if (size < 8) {
        fprintf(stderr, "%s needs a size of 8 at least\n", name);
        return -1;
    }
    if (sw_current_function->build(&sw_current, size)) {
        fprintf(stderr, "%s cannot be built at size %lld\n", name, size);
        return -1;
    }
    /* Calls per repetition, the same at every size: many where a call should cost little. */
    sw_calls = !strcmp(sw_current.axis, "remaining") ? 64 : !strcmp(sw_current.axis, "needle") ? 1 : 8;
    /* Says what the catalogue's guarded probes say, which the agent reads as a bound broken. */
    if (sw_current.guard) sw_shape_guard(&sw_current, "", "");
    return 0;
}

void sw_before(void) {}
void sw_after(void) {}

long long sw_run(void) {
    long long hits = 0;
    for (long long i = 0; i < sw_calls; i++) {
        struct sw_shape *s = &sw_current;
        __asm__ volatile("" : "+r"(s));
        hits += sw_current_function->call(s);
    }
    return hits;
}

long long sw_expected(void) { return sw_calls; }
