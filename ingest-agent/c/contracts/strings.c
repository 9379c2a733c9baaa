/* Probes of <strings.h>: see catalogue.def and strings.def. */
#include "contracts.h"
#ifndef SW_NO_STRINGS_H

/*
 * Calls per repetition, the same at every size so that the time grows as one call's cost does,
 * and few enough that the largest size's repetition stays near 2 ms on the slowest libc measured
 * (a longer one is often preempted on a loaded machine, which bends the slope):
 *   NEAR  probes expected O(1), swept to 16 KiB: ~1.5 ms where a libc reads the whole input on
 *         each call (Zig 0.16.0's byte loop, ~0.35 ns a byte), ~1 µs at 128 B on glibc;
 *   SCAN  probes expected O(n), swept to 64 KiB, or less where musl or Zig take 1 to 4.5 ns a
 *         byte (folding case byte by byte, say).
 */
#define NEAR_CALLS 256
#define SCAN_CALLS 32

/* The bound strncasecmp's remaining probe passes while its strings grow. */
#define NEAR_BOUND 8
/* The fewest bytes a probe's input needs: the near bound's bytes and some after them. */
#define MIN_SIZE (2 * NEAR_BOUND)

static char *text, *other;  /* the probe's inputs */
static long long text_size; /* bytes in text before its terminator */
static long long bound;     /* the bound of a guarded probe; the bytes of its arrays */

static long long near_calls(void) { return NEAR_CALLS; }
static long long scan_calls(void) { return SCAN_CALLS; }

/* size bytes of c and a terminator after them (malloc'd: NULL when it fails). */
static char *string_of(long long size, char c) {
    char *s = malloc((size_t)size + 1);
    if (!s) return NULL;
    memset(s, c, (size_t)size);
    s[size] = '\0';
    return s;
}

/*
 * bound bytes of c with no terminator, the last against an unreadable page. The bound is one byte
 * short of the probe's size, so that the array starts unaligned and a read in whole words or
 * vectors past it reaches the unreadable page rather than stopping exactly at it.
 */
static char *guarded_of(long long size, char c) {
    bound = size - 1;
    if (size < MIN_SIZE) return NULL;
    char *a = sw_guarded((size_t)bound);
    if (!a) return NULL;
    memset(a, c, (size_t)bound);
    sw_bound(bound);
    return a;
}

/*
 * Two strings of size bytes, text in lower case and other in upper case so that every byte must
 * be folded, differing 1 byte in (ignoring case) where `differ`, else equal ignoring case.
 */
static int case_pair(long long size, int differ) {
    if (size < MIN_SIZE) return -1;
    text = string_of(size, 'x');
    other = string_of(size, 'X');
    text_size = size;
    if (!text || !other) return -1;
    if (differ) {
        text[1] = 'a';
        other[1] = 'B';
    }
    return 0;
}
static int case_differing(long long size) { return case_pair(size, 1); }
static int case_equal(long long size) { return case_pair(size, 0); }

/* size bytes of 'x' with a ':' at `at`. */
static int match_at(long long size, long long at) {
    if (size < MIN_SIZE) return -1;
    text = string_of(size, 'x');
    text_size = size;
    if (!text) return -1;
    text[at] = ':';
    return 0;
}
static int match_near(long long size) { return match_at(size, 1); }
static int match_far(long long size) { return match_at(size, size - 1); }

/* ---- strcasecmp, strncasecmp ---- */

#ifndef SW_NO_DECL_strcasecmp
/* strcasecmp, remaining: the strings differ (ignoring case) 1 byte in, the bytes after grow. */
static long long strcasecmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcasecmp(s, other) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strcasecmp_remaining = {case_differing, NULL, strcasecmp_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strcasecmp
/* strcasecmp, length: strings equal ignoring case. */
static long long strcasecmp_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcasecmp(s, other) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strcasecmp_length = {case_equal, NULL, strcasecmp_length_run, scan_calls};
#endif

/*
 * strncasecmp, remaining: the bound 8, the guarded arrays (equal ignoring case, no terminator)
 * past it grow; a call may read only the first 8 bytes of each.
 */
static int strncasecmp_remaining_setup(long long size) {
    text = guarded_of(size, 'x');
    other = guarded_of(size, 'X');
    sw_bound(NEAR_BOUND);
    return text && other ? 0 : -1;
}
#ifndef SW_NO_DECL_strncasecmp
static long long strncasecmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strncasecmp(s, other, NEAR_BOUND) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strncasecmp_remaining = {strncasecmp_remaining_setup, NULL, strncasecmp_remaining_run, near_calls};
#endif

/*
 * strncasecmp, bound: arrays equal ignoring case with no terminator within the bound, both against
 * an unreadable page.
 */
static int strncasecmp_bound_setup(long long size) {
    text = guarded_of(size, 'x');
    other = guarded_of(size, 'X');
    return text && other ? 0 : -1;
}
#ifndef SW_NO_DECL_strncasecmp
static long long strncasecmp_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strncasecmp(s, other, (size_t)bound) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strncasecmp_bound = {strncasecmp_bound_setup, NULL, strncasecmp_bound_run, scan_calls};
#endif

/* ---- index, rindex ---- */

#ifndef SW_NO_DECL_index
/* index, remaining: the match 1 byte in, the rest of the string grows. */
static long long index_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += index(s, ':') == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_index_remaining = {match_near, NULL, index_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_index
/* index, distance: the match at the end. */
static long long index_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += index(s, ':') == s + text_size - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_index_distance = {match_far, NULL, index_distance_run, scan_calls};
#endif

#ifndef SW_NO_DECL_rindex
/* rindex, length: the only match 1 byte in, the string after it grows; all of it must be read. */
static long long rindex_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += rindex(s, ':') == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_rindex_length = {match_near, NULL, rindex_length_run, scan_calls};
#endif

/* ---- bcmp ---- */

/* bcmp, remaining: the arrays differ 1 byte in, the bytes after grow. */
static int bcmp_remaining_setup(long long size) {
    if (match_near(size)) return -1;
    other = string_of(size, 'x');
    return other ? 0 : -1;
}
#ifndef SW_NO_DECL_bcmp
static long long bcmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += bcmp(s, other, (size_t)text_size) != 0;
    }
    return hits;
}
const struct sw_probe sw_probe_bcmp_remaining = {bcmp_remaining_setup, NULL, bcmp_remaining_run, near_calls};
#endif

/* bcmp, length: equal arrays, both ending against an unreadable page. */
static int bcmp_length_setup(long long size) {
    text = guarded_of(size, 'x');
    other = guarded_of(size, 'x');
    return text && other ? 0 : -1;
}
#ifndef SW_NO_DECL_bcmp
static long long bcmp_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += bcmp(s, other, (size_t)bound) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_bcmp_length = {bcmp_length_setup, NULL, bcmp_length_run, scan_calls};
#endif

/* ---- bcopy, bzero ---- */

static int buffer_setup(long long size) {
    if (size < MIN_SIZE) return -1;
    text = string_of(size, 'x');
    text_size = size;
    return text ? 0 : -1;
}

#ifndef SW_NO_DECL_bcopy
/*
 * bcopy, length: the bytes moved one byte up within the same array, which only a backward copy
 * does right. The first byte is marked before each call; it must reach the second, and the byte
 * before the last must reach the last, where a forward copy would have smeared the mark.
 */
static long long bcopy_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *s = text;
        SW_OPAQUE(s);
        char mark = (char)('A' + i % 26);
        s[0] = mark;
        s[text_size - 2] = 'y';
        bcopy(s, s + 1, (size_t)text_size - 1);
        hits += s[1] == mark && s[text_size - 1] == 'y';
    }
    return hits;
}
const struct sw_probe sw_probe_bcopy_length = {buffer_setup, NULL, bcopy_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_bzero
/* bzero, length: the bytes cleared; the last is set again before each call. */
static long long bzero_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *s = text;
        SW_OPAQUE(s);
        s[text_size - 1] = 'x';
        bzero(s, (size_t)text_size);
        hits += s[text_size - 1] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_bzero_length = {buffer_setup, NULL, bzero_length_run, scan_calls};
#endif

#endif /* SW_NO_STRINGS_H */
