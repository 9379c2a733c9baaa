/*
 * slopewatch workload harness: the protocol every workload speaks, built in.
 *
 *   ./workload SIZE [REPETITIONS]
 *
 * prints one JSON line on stdout:
 *
 *   {"size":SIZE,"samples_ns":[...],"instructions":[...],"result":"HITS","meta":{"key":"value"}}
 *
 * and exits 0, or prints a message on stderr and exits non-zero. "instructions" is present only
 * where the kernel allows perf_event_open.
 *
 * With SLOPEWATCH_SESSION=1 in the environment and no arguments, it measures one size per line
 * read from stdin, "SIZE REPETITIONS [PROBE]", answering each with its JSON line, until stdin
 * ends: sw_setup runs once per line. PROBE, where given, is set as SLOPEWATCH_PROBE for that
 * line (the contract catalogue's one binary holds every probe). The agent uses it under Valgrind,
 * whose start would otherwise cost more than the sizes measured; any failure still ends the
 * process as it would end a single size (a crash with the same signal). Each workload (each probe)
 * is measured in a child forked from the process as it stood before the first line, so its counts
 * never depend on what the session measured before it: the agent splits probes among sessions
 * that count side by side (`--jobs`), and each counts what it would count alone. The clock is read around sw_run() only, so buffer
 * set-up (sw_setup, sw_before) never counts; one untimed warm-up precedes the repetitions.
 *
 * SLOPEWATCH_MEASURE in the environment says what the agent measures:
 *   wall          (or unset) samples_ns from CLOCK_MONOTONIC;
 *   cpu           samples_ns from the thread's CPU clock, CLOCK_THREAD_CPUTIME_ID;
 *   instructions  counts through perf_event_open, which must succeed (exit 4 when refused);
 *   valgrind      run under callgrind, which counts sw_run() itself (sw_run is never inlined,
 *                 so --toggle-collect=sw_run finds it): no perf counter is opened, and no
 *                 warm-up is run (the agent sets LD_BIND_NOW, so a first call binds nothing).
 * How the harness measures is not part of a workload's source hash (see the agent's sources).
 *
 * A workload includes this header first (it sets _GNU_SOURCE) and defines:
 *   int  sw_setup(long long size);   once, untimed; 0 on success
 *   void sw_before(void);            before each repetition, untimed (may be empty)
 *   long long sw_run(void);          the measured loop; returns its hit count
 *   void sw_after(void);             after each repetition, untimed (may be empty)
 *   long long sw_expected(void);     the hit count a correct libc produces
 * A hit count that differs from sw_expected() is an error: a wrong answer must not pass as a
 * fast time. "result" is the hit count, in decimal: the agent compares it between the toolchains
 * it measures, so a workload with no known answer (sw_expected computing it the same way) is
 * still caught when one toolchain's build computes something else.
 */
#ifndef SLOPEWATCH_H
#define SLOPEWATCH_H

#define _GNU_SOURCE 1
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#if defined(__has_include)
#if __has_include(<sys/prctl.h>)
#include <sys/prctl.h>
#endif
#endif

#define SW_MAX_REPS 1000
#define SW_MAX_META 8

int sw_setup(long long size);
void sw_before(void);
/* Never inlined: Valgrind counts it by name. */
__attribute__((noinline)) long long sw_run(void);
void sw_after(void);
long long sw_expected(void);

static const char *sw_meta_keys[SW_MAX_META];
static char sw_meta_values[SW_MAX_META][128];
static int sw_meta_count;

/* Adds a key/value pair to the output line, e.g. the SQLite version a workload linked. */
static inline void sw_meta(const char *key, const char *value) {
    if (sw_meta_count < SW_MAX_META) {
        sw_meta_keys[sw_meta_count] = key;
        snprintf(sw_meta_values[sw_meta_count], sizeof sw_meta_values[0], "%s", value);
        sw_meta_count++;
    }
}

static void sw_fail(const char *msg) {
    fprintf(stderr, "%s\n", msg);
    exit(2);
}

/*
 * perf_event_open is called through syscall() with the first, 64-byte version of the attribute
 * struct, because musl-gcc and zig cc do not ship <linux/perf_event.h>; every kernel accepts it.
 */
struct sw_perf_attr {
    uint32_t type, size;
    uint64_t config, sample_period, sample_type, read_format, flags;
    uint32_t wakeup_events, bp_type;
    uint64_t config1;
};

static int sw_perf_open(void) {
#ifdef SYS_perf_event_open
    struct sw_perf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = 0;   /* PERF_TYPE_HARDWARE */
    attr.size = sizeof attr;
    attr.config = 1; /* PERF_COUNT_HW_INSTRUCTIONS */
    /* disabled, exclude_kernel, exclude_hv: count only the workload's own user-space work. */
    attr.flags = (1u << 0) | (1u << 5) | (1u << 6);
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
#else
    errno = ENOSYS; /* a libc without syscall() (klibc) */
    return -1;
#endif
}

#define SW_PERF_RESET _IO('$', 3)
#define SW_PERF_ENABLE _IO('$', 0)
#define SW_PERF_DISABLE _IO('$', 1)

#if defined(_POSIX_TIMERS) && _POSIX_TIMERS > 0
typedef clockid_t sw_clock_id;
#define SW_CLOCK_WALL CLOCK_MONOTONIC
#define SW_CLOCK_CPU CLOCK_THREAD_CPUTIME_ID
static long long sw_now_ns(sw_clock_id clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#else
/*
 * A libc without clock_gettime (klibc): wall time from gettimeofday, to the microsecond, and no
 * CPU clock. Each result's meta says "clock":"gettimeofday", so the run tells which it used.
 */
#include <sys/time.h>
#define SW_CLOCK_FALLBACK "gettimeofday"
typedef int sw_clock_id;
#define SW_CLOCK_WALL 0
#define SW_CLOCK_CPU (-1)
static long long sw_now_ns(sw_clock_id clock) {
    struct timeval tv;
    (void)clock;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL;
}
#endif

/* SIZE and REPETITIONS as text, checked; exits with the usage error otherwise. */
static void sw_parse(const char *size_text, const char *reps_text, long long *size, long *reps) {
    char *end;
    errno = 0;
    *size = strtoll(size_text, &end, 10);
    if (errno || *end || *size <= 0) sw_fail("SIZE must be a positive integer");
    *reps = 5;
    if (reps_text) {
        *reps = strtol(reps_text, &end, 10);
        if (errno || *end || *reps < 1 || *reps > SW_MAX_REPS) sw_fail("REPETITIONS must be 1..1000");
    }
}

static int sw_measure(long long size, long reps, const char *measure, sw_clock_id clock, int perf);

/* A session measures each workload (each probe of the catalogue) in a child forked from the
 * session as it stood before its first line, and the child measures that workload's lines in
 * turn, so that what another workload left behind (the heap's layout, a buffer's alignment, a
 * libc's caches) cannot change its counts: a workload counts the same alone, after others, or in
 * one of several sessions side by side (`--jobs`). A fork per workload, not per line: under
 * Valgrind a fork costs milliseconds, about what a small size costs to count. */
static pid_t sw_child = -1;
static int sw_to_child = -1, sw_from_child = -1;
static char sw_child_probe[128];

/* The session's status once the child has ended: its exit status, or its signal, raised again. */
static int sw_child_ended(void) {
    int st;
    while (waitpid(sw_child, &st, 0) < 0)
        if (errno != EINTR) sw_fail("cannot wait for the workload's process");
    sw_child = -1;
    close(sw_to_child);
    close(sw_from_child);
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        kill(getpid(), WTERMSIG(st));
        _exit(128 + WTERMSIG(st));
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

/* In the child: reads "SIZE REPETITIONS" lines from fd `in`, measures each, and answers each on
 * fd `out` with its status byte, until the session closes `in` or a size fails. */
static void sw_child_loop(int in, int out, const char *measure, sw_clock_id clock, int perf) {
    char line[96];
    size_t n = 0;
    char c;
    while (read(in, &c, 1) == 1) {
        if (c != '\n') {
            if (n + 1 < sizeof line) line[n++] = c;
            continue;
        }
        line[n] = 0;
        n = 0;
        char size_text[32], reps_text[32];
        long long size;
        long reps;
        if (sscanf(line, "%31s %31s", size_text, reps_text) != 2) sw_fail("a bad line reached the workload");
        sw_parse(size_text, reps_text, &size, &reps);
        int status = sw_measure(size, reps, measure, clock, perf);
        fflush(stdout);
        if (status != 0) _exit(status);
        unsigned char ok = 0;
        if (write(out, &ok, 1) != 1) _exit(2);
    }
    _exit(0);
}

/* Measures SIZE with REPS repetitions of PROBE (NULL for the binary's one workload) in the child
 * of that workload, forked first where the last line was of another. */
static int sw_session_line(long long size, long reps, const char *probe, const char *measure, sw_clock_id clock,
                           int perf) {
    const char *key = probe ? probe : "";
    if (sw_child >= 0 && strcmp(key, sw_child_probe) != 0) {
        close(sw_to_child); /* its loop ends */
        sw_to_child = -1;
        int status = sw_child_ended();
        if (status != 0) return status;
    }
    if (sw_child < 0) {
        int down[2], up[2];
        if (pipe(down) != 0 || pipe(up) != 0) sw_fail("cannot open pipes to the workload's process");
        fflush(stdout);
        fflush(stderr);
        sw_child = fork();
        if (sw_child < 0) sw_fail("cannot fork for the workload");
        if (sw_child == 0) {
#ifdef PR_SET_PDEATHSIG
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* stopped with the session, past its time */
#endif
            signal(SIGPIPE, SIG_DFL);
            close(down[1]);
            close(up[0]);
            /* Set here, not in the session: a setenv there would grow its heap probe by probe. */
            if (probe && setenv("SLOPEWATCH_PROBE", probe, 1) != 0) sw_fail("cannot set SLOPEWATCH_PROBE");
            sw_child_loop(down[0], up[1], measure, clock, perf);
        }
        close(down[0]);
        close(up[1]);
        sw_to_child = down[1];
        sw_from_child = up[0];
        snprintf(sw_child_probe, sizeof sw_child_probe, "%s", key);
    }
    char request[80];
    int len = snprintf(request, sizeof request, "%lld %ld\n", size, reps);
    unsigned char status;
    if (write(sw_to_child, request, (size_t)len) == len && read(sw_from_child, &status, 1) == 1) return 0;
    /* It ended instead of answering: its status is the session's. */
    return sw_child_ended();
}

int main(int argc, char **argv) {
    const char *measure = getenv("SLOPEWATCH_MEASURE");
    if (!measure) measure = "wall";
    sw_clock_id clock = SW_CLOCK_WALL;
    if (strcmp(measure, "cpu") == 0) {
        clock = SW_CLOCK_CPU;
        if (clock == (sw_clock_id)-1) sw_fail("cpu cannot be measured here: this libc has no clock_gettime");
    } else if (strcmp(measure, "wall") && strcmp(measure, "instructions") && strcmp(measure, "valgrind"))
        sw_fail("SLOPEWATCH_MEASURE must be wall, cpu, instructions or valgrind");
    int perf = strcmp(measure, "valgrind") ? sw_perf_open() : -1;
    if (perf < 0 && strcmp(measure, "instructions") == 0) {
        fprintf(stderr, "instructions cannot be counted here: perf_event_open failed (%s)\n", strerror(errno));
        return 4;
    }
    long long size;
    long reps;
    const char *session = getenv("SLOPEWATCH_SESSION");
    if (session && strcmp(session, "1") == 0 && argc == 1) {
        char line[256], size_text[32], reps_text[32], probe[128];
        /* A workload's process that ended is told by its status, not by a write that kills. */
        signal(SIGPIPE, SIG_IGN);
        while (fgets(line, sizeof line, stdin)) {
            int fields = sscanf(line, "%31s %31s %127s", size_text, reps_text, probe);
            if (fields < 2) sw_fail("a session line must be SIZE REPETITIONS [PROBE]");
            sw_parse(size_text, reps_text, &size, &reps);
            int status = sw_session_line(size, reps, fields == 3 ? probe : NULL, measure, clock, perf);
            if (status != 0) return status;
        }
        if (sw_child >= 0) {
            close(sw_to_child);
            return sw_child_ended();
        }
        return 0;
    }
    if (argc < 2 || argc > 3) sw_fail("usage: workload SIZE [REPETITIONS]");
    sw_parse(argv[1], argc == 3 ? argv[2] : NULL, &size, &reps);
    return sw_measure(size, reps, measure, clock, perf);
}

/* Sets the workload up at SIZE, runs it REPS times (after a warm-up, but under Valgrind) and
 * prints the JSON line; a non-zero exit status where the workload failed. */
static int sw_measure(long long size, long reps, const char *measure, sw_clock_id clock, int perf) {
    sw_meta_count = 0;
    if (sw_setup(size) != 0) sw_fail("workload set-up failed");
#ifdef SW_CLOCK_FALLBACK
    sw_meta("clock", SW_CLOCK_FALLBACK);
#endif

    static long long samples[SW_MAX_REPS];
    static unsigned long long instructions[SW_MAX_REPS];
    int counted = perf >= 0;
    long long expected = sw_expected();
    long long result = 0;

    /* Under Valgrind, whose counts need no warm cache, the warm-up would only double the cost. */
    long first = strcmp(measure, "valgrind") ? -1 : 0;
    for (long r = first; r < reps; r++) { /* r == -1 is the warm-up */
        sw_before();
        if (counted) {
            ioctl(perf, SW_PERF_RESET, 0);
            ioctl(perf, SW_PERF_ENABLE, 0);
        }
        long long t0 = sw_now_ns(clock);
        long long hits = sw_run();
        long long t1 = sw_now_ns(clock);
        if (counted) {
            ioctl(perf, SW_PERF_DISABLE, 0);
            unsigned long long n = 0;
            if (read(perf, &n, sizeof n) != (ssize_t)sizeof n) counted = 0;
            if (r >= 0) instructions[r] = n;
        }
        sw_after();
        result = hits;
        if (hits != expected) {
            fprintf(stderr, "wrong result: %lld hits, expected %lld\n", hits, expected);
            return 3;
        }
        /* A clock too coarse to see the loop still yields a positive sample. */
        if (r >= 0) samples[r] = t1 > t0 ? t1 - t0 : 1;
    }

    printf("{\"size\":%lld,\"samples_ns\":[", size);
    for (long r = 0; r < reps; r++) printf("%s%lld", r ? "," : "", samples[r]);
    printf("]");
    if (counted) {
        printf(",\"instructions\":[");
        for (long r = 0; r < reps; r++) printf("%s%llu", r ? "," : "", instructions[r]);
        printf("]");
    }
    printf(",\"result\":\"%lld\"", result);
    printf(",\"meta\":{");
    for (int i = 0; i < sw_meta_count; i++) {
        printf("%s\"%s\":\"", i ? "," : "", sw_meta_keys[i]);
        for (const char *c = sw_meta_values[i]; *c; c++)
            if (*c != '"' && *c != '\\' && (unsigned char)*c >= 0x20) putchar(*c);
        printf("\"");
    }
    printf("}}\n");
    return 0;
}

#endif
