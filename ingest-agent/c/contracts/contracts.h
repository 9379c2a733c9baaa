/*
 * The contract catalogue's shared parts: what a probe defines, the guarded buffers of the probes
 * that check how far a call reads, and the functions not every libc ships.
 *
 * A probe is one function, one axis and one expected class (see docs/contracts.md). Its entry in
 * a *.def file names it; its code, in the .c file of the same header, defines
 *
 *   const struct sw_probe sw_probe_ID = {setup, before, run, expected};
 *
 * main.c picks the probe SLOPEWATCH_PROBE names and hands it to the harness of slopewatch.h, which
 * times run() at the size it is given. run() calls the function a fixed number of times, the same
 * at every size, so that the time grows as one call's cost does.
 *
 * The catalogue is compiled with -fno-builtin, so every call reaches the libc rather than an
 * expansion of the compiler's; SW_OPAQUE keeps the compiler from hoisting a call to a pure
 * function (glibc's headers mark strchr and its kin so) out of the loop that repeats it.
 */
#ifndef SW_CONTRACTS_H
#define SW_CONTRACTS_H

#define _GNU_SOURCE 1
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/*
 * A header this libc lacks (klibc has neither of these) is left out: the agent tries each header
 * and each function's declaration first and defines SW_NO_HEADER_h (SW_NO_STRINGS_H) for a
 * missing header, SW_NO_DECL_NAME for a function its header does not declare. The probes that
 * need either are left out, their entries stay NULL, and main.c reports them not provided.
 */
#ifndef SW_NO_STRINGS_H
#include <strings.h>
#endif
#ifndef SW_NO_WCHAR_H
#include <wchar.h>
#endif

struct sw_probe {
    int (*setup)(long long size); /* once, untimed: 0 on success */
    void (*before)(void);         /* before each repetition, untimed; may be NULL */
    long long (*run)(void);       /* the measured calls: returns a count */
    long long (*expected)(void);  /* what run() must return */
};

/* Makes the compiler forget what it knows of x, so a call taking it is made again each time. */
#define SW_OPAQUE(x) __asm__ volatile("" : "+r"(x))
/* Makes the compiler keep a value it would otherwise drop as unused. */
#define SW_KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

/*
 * `bytes` bytes whose last one is followed by an unreadable page, so a call that reads past them
 * crashes; 16-byte aligned at the start only when `bytes` is a multiple of 16. NULL when mapping
 * fails. The buffer is never freed: a probe makes one in its set-up.
 */
void *sw_guarded(size_t bytes);

/*
 * Says, should the probe crash from here on, which contract it broke: "read past its bound of
 * BYTES bytes" on stderr, then the crash itself (the signal is raised again), which the agent
 * reports as a failure of kind crashed with that detail.
 */
void sw_bound(long long bytes);

/* The harness's exit status for a function this libc does not provide ("not provided: NAME"). */
#define SW_EXIT_NOT_PROVIDED 4
/* Exits with SW_EXIT_NOT_PROVIDED unless `fn` was linked. */
#define SW_REQUIRE(fn) sw_require((fn) != NULL, #fn)
void sw_require(int linked, const char *name);

/*
 * A function some libcs lack (glibc before 2.38 has no strlcpy; musl has no rawmemchr), declared
 * weak under a name of its own, sw_NAME, so that no header need declare it. Each probe file
 * declares the ones it calls with this macro, on a line of its own; the agent reads those lines
 * and links the catalogue with -Wl,-u,NAME for each, so that a static libc's archive gives them
 * up. Where the libc has no NAME the link says so, and the agent links again without that -u,
 * leaving sw_NAME NULL: its probes call SW_REQUIRE(sw_NAME) in their set-up and are reported as
 * not provided, while every other probe is measured.
 */
#define SW_OPTIONAL(ret, name, params) extern ret sw_##name params __asm__(#name) __attribute__((weak))

#endif
