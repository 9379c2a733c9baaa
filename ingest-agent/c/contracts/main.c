/*
 * The contract catalogue as one workload binary: every probe of the *.def files, picked by
 * SLOPEWATCH_PROBE=contract.FUNCTION.AXIS and timed by the harness of slopewatch.h at a size:
 *
 *   SLOPEWATCH_PROBE=contract.strchr.remaining ./contracts SIZE [REPETITIONS]
 */
#include "slopewatch.h"
#include "contracts.h"
#include <signal.h>
#include <sys/mman.h>

/* A probe left out (its header or its function's declaration missing) leaves its entry NULL. */
#define PROBE(id, ...) extern const struct sw_probe sw_probe_##id __attribute__((weak));
#include "catalogue.def"
#undef PROBE

static const struct {
    const char *name;
    const char *function;
    const struct sw_probe *probe;
} sw_catalogue[] = {
#define PROBE(id, function, axis, ...) {"contract." function "." axis, function, &sw_probe_##id},
#include "catalogue.def"
#undef PROBE
};

static const struct sw_probe *sw_chosen;

/* What a fault in a guarded probe reports (sw_bound). */
static char sw_bound_message[96];
static size_t sw_bound_length;

/*
 * No probe is set up below 8 units: its input must hold what it parses or searches for and some
 * of what follows (a 5-digit number and a space, a needle and its bound). Below that a correct
 * libc would read as crashing or wrong; a probe that needs more refuses more in its own set-up.
 */
#define SW_SMALLEST 8

int sw_setup(long long size) {
    /* A session sets up probe after probe in one process: none inherits another's bound. */
    sw_chosen = NULL;
    sw_bound_length = 0;
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    const char *name = getenv("SLOPEWATCH_PROBE");
    if (!name) {
        fprintf(stderr, "SLOPEWATCH_PROBE must name the probe to run\n");
        return -1;
    }
    size_t i = 0, n = sizeof sw_catalogue / sizeof sw_catalogue[0];
    while (i < n && strcmp(sw_catalogue[i].name, name) != 0) i++;
    if (i == n) {
        fprintf(stderr, "no probe %s in this catalogue\n", name);
        return -1;
    }
    sw_require(sw_catalogue[i].probe != NULL, sw_catalogue[i].function);
    sw_chosen = sw_catalogue[i].probe;
    if (size < SW_SMALLEST) {
        fprintf(stderr, "%s needs a size of %d at least\n", name, SW_SMALLEST);
        return -1;
    }
    return sw_chosen->setup(size);
}

void sw_before(void) {
    if (sw_chosen->before) sw_chosen->before();
}
void sw_after(void) {}
long long sw_run(void) { return sw_chosen->run(); }
long long sw_expected(void) { return sw_chosen->expected(); }

void *sw_guarded(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t readable = (bytes + page - 1) / page * page;
    if (readable == 0) readable = page;
    char *base = mmap(NULL, readable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base + readable, page, PROT_NONE) != 0) return NULL;
    return base + readable - bytes;
}

static void sw_on_fault(int sig) {
    ssize_t ignored = write(2, sw_bound_message, sw_bound_length);
    (void)ignored;
    signal(sig, SIG_DFL);
    raise(sig);
}

void sw_bound(long long bytes) {
    int n = snprintf(sw_bound_message, sizeof sw_bound_message, "read past its bound of %lld bytes\n", bytes);
    sw_bound_length = n > 0 ? (size_t)n : 0;
    signal(SIGSEGV, sw_on_fault);
    signal(SIGBUS, sw_on_fault);
}

void sw_require(int linked, const char *name) {
    if (linked) return;
    /* "sw_strlcpy" is strlcpy to whoever reads the message. */
    fprintf(stderr, "not provided: %s\n", strncmp(name, "sw_", 3) == 0 ? name + 3 : name);
    exit(SW_EXIT_NOT_PROVIDED);
}
