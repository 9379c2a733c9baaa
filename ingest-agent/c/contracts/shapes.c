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

/* What a read past a guarded input's bound reports before the crash (as the catalogue's). */
static char sw_bound_message[96];
static size_t sw_bound_length;

static void sw_on_fault(int sig) {
    ssize_t ignored = write(2, sw_bound_message, sw_bound_length);
    (void)ignored;
    signal(sig, SIG_DFL);
    raise(sig);
}

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
    if (sw_current.guard) {
        int n = snprintf(sw_bound_message, sizeof sw_bound_message, "read past its bound of %lld bytes\n",
                         sw_current.guard);
        sw_bound_length = n > 0 ? (size_t)n : 0;
        signal(SIGSEGV, sw_on_fault);
        signal(SIGBUS, sw_on_fault);
    }
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
