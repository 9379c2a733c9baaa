/* Probes of <string.h>: see catalogue.def and string.def. */
#include "contracts.h"

SW_OPTIONAL(void *, rawmemchr, (const void *, int));
SW_OPTIONAL(size_t, strlcpy, (char *, const char *, size_t));
SW_OPTIONAL(size_t, strlcat, (char *, const char *, size_t));

/*
 * Calls per repetition, the same at every size so that the time grows as one call's cost does,
 * and few enough that the largest size's repetition stays near 2 ms on the slowest libc measured
 * (a longer one is often preempted on a loaded machine, which bends the slope):
 *   NEAR    probes expected O(1), swept to 16 KiB: ~1.5 ms where a libc reads the whole input
 *           on each call (Zig 0.16.0's byte loop, ~0.35 ns a byte), ~1 µs at 128 B on glibc;
 *   BULK    probes expected O(n) of functions every libc here runs a word or a vector at a time,
 *           and of strdup and strndup, swept only to 4 KiB where malloc's cost dominates;
 *   SCAN    probes expected O(n) of the rest, which musl or Zig run a byte at a time (the
 *           slowest, ~3 ns a byte, are swept to 16 or 32 KiB rather than 64);
 *   NEEDLE  searches whose needle grows, which a quadratic search makes cost n² per call.
 */
#define NEAR_CALLS 256
#define BULK_CALLS 128
#define SCAN_CALLS 32
#define NEEDLE_CALLS 4

/* The bytes of the short needle the remaining probes of strstr, strcasestr and memmem find. */
#define SHORT_NEEDLE 8
/* The bound the remaining probes of the bounded functions pass while their input grows. */
#define NEAR_BOUND 8
/* The fewest bytes a probe's input needs: the near bound's bytes and some after them. */
#define MIN_SIZE (2 * NEAR_BOUND)

static char *text, *other, *dest; /* the probe's inputs and its destination */
static long long text_size;       /* bytes in text before its terminator */
static long long bound;           /* the bound of a guarded probe; the bytes of its arrays */
static const char *needle;        /* what a search probe looks for */
static long long needle_size;

static long long near_calls(void) { return NEAR_CALLS; }
static long long bulk_calls(void) { return BULK_CALLS; }
static long long scan_calls(void) { return SCAN_CALLS; }
static long long needle_calls(void) { return NEEDLE_CALLS; }

/* size bytes of c and a terminator after them (malloc'd: NULL when it fails). */
static char *string_of(long long size, char c) {
    char *s = malloc((size_t)size + 1);
    if (!s) return NULL;
    memset(s, c, (size_t)size);
    s[size] = '\0';
    return s;
}

/*
 * The text every probe but the guarded ones reads: size bytes of c, a terminator after them, and
 * a destination as large for the probes that write.
 */
static int text_of(long long size, char c) {
    if (size < MIN_SIZE) return -1;
    text = string_of(size, c);
    dest = string_of(size + 2, 'd');
    text_size = size;
    return text && dest ? 0 : -1;
}

/* The plain text of 'x' (no match in it), for the probes that copy, measure or look in vain. */
static int plain_text(long long size) { return text_of(size, 'x'); }

/* size bytes of 'x' with a ':' at `at`. */
static int match_at(long long size, long long at) {
    if (text_of(size, 'x')) return -1;
    text[at] = ':';
    return 0;
}
static int match_near(long long size) { return match_at(size, 1); }
static int match_far(long long size) { return match_at(size, size - 1); }

/*
 * A guarded probe's bound: one byte short of its size, so that an array ending where a page ends
 * starts unaligned, and a read in whole words or vectors past the bound reaches the unreadable
 * page rather than stopping exactly at it.
 */
static int bound_of(long long size) {
    bound = size - 1;
    return size < MIN_SIZE ? -1 : 0;
}

/* bound bytes of c with no terminator, the last against an unreadable page. */
static char *guarded_of(char c) {
    char *a = sw_guarded((size_t)bound);
    if (!a) return NULL;
    memset(a, c, (size_t)bound);
    sw_bound(bound);
    return a;
}

/* A guarded array of 'x' to read, and a destination of bound + 2 bytes for those that write. */
static int guarded_text(long long size) {
    if (bound_of(size)) return -1;
    text = guarded_of('x');
    dest = string_of(bound + 1, 'd');
    return text && dest ? 0 : -1;
}

/*
 * The input of a bounded function's remaining probe: a guarded array of 'x' with no terminator,
 * of which a call may read only the first NEAR_BOUND bytes, which a crash reports it read past.
 */
static int guarded_near(long long size) {
    if (guarded_text(size)) return -1;
    sw_bound(NEAR_BOUND);
    return 0;
}

/*
 * The needle a growing-needle probe looks for, n bytes: its one 'b' in the middle, 'a' around it,
 * so that a search comparing each window from either end goes n/2 bytes in before it fails, and a
 * haystack of 'a' slides it one byte at a time under Horspool's shift. Two-way and the other
 * linear searches pass it in O(n).
 */
static char *needle_of(long long n, char a, char b) {
    char *s = string_of(n, a);
    if (s) s[n / 2] = b;
    return s;
}

/* ---- memchr ---- */

/*
 * memchr, remaining: the bound grows past an object of 2 bytes, "x:", against an unreadable page.
 * The match ends the object, so a memchr that reads ahead of it by more than the aligned block
 * holding it crashes, as one that reads on toward the bound would.
 */
static int memchr_remaining_setup(long long size) {
    if (size < MIN_SIZE) return -1;
    text = sw_guarded(2);
    if (!text) return -1;
    memcpy(text, "x:", 2);
    sw_bound(2);
    text_size = size;
    return 0;
}
#ifndef SW_NO_DECL_memchr
static long long memchr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memchr(s, ':', (size_t)text_size) == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_memchr_remaining = {memchr_remaining_setup, NULL, memchr_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_memchr
/* memchr, bound: no match within the bound, the array's last byte against an unreadable page. */
static long long memchr_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memchr(s, ':', (size_t)bound) == NULL;
    }
    return hits;
}
const struct sw_probe sw_probe_memchr_bound = {guarded_text, NULL, memchr_bound_run, bulk_calls};
#endif

/* ---- memrchr ---- */

/* memrchr, remaining: the match 1 byte before the end, the bytes before it grow. */
static int memrchr_remaining_setup(long long size) { return match_at(size, size - 2); }
#ifndef SW_NO_DECL_memrchr
static long long memrchr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memrchr(s, ':', (size_t)text_size) == s + text_size - 2;
    }
    return hits;
}
const struct sw_probe sw_probe_memrchr_remaining = {memrchr_remaining_setup, NULL, memrchr_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_memrchr
/* memrchr, bound: no match within the bound, the array's last byte against an unreadable page. */
static long long memrchr_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memrchr(s, ':', (size_t)bound) == NULL;
    }
    return hits;
}
const struct sw_probe sw_probe_memrchr_bound = {guarded_text, NULL, memrchr_bound_run, scan_calls};
#endif

/* ---- rawmemchr ---- */

/*
 * rawmemchr, distance: the match is the array's last byte, against an unreadable page. It has no
 * remaining axis: nothing past the match is the caller's to grow.
 */
static int rawmemchr_distance_setup(long long size) {
    SW_REQUIRE(sw_rawmemchr);
    if (guarded_text(size)) return -1;
    text[bound - 1] = ':';
    return 0;
}
#ifndef SW_NO_DECL_rawmemchr
static long long rawmemchr_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += sw_rawmemchr(s, ':') == s + bound - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_rawmemchr_distance = {rawmemchr_distance_setup, NULL, rawmemchr_distance_run, bulk_calls};
#endif

/* ---- memcmp ---- */

/* memcmp, remaining: the arrays differ 1 byte in, the bytes after grow. */
static int memcmp_remaining_setup(long long size) {
    if (text_of(size, 'x')) return -1;
    other = string_of(size, 'x');
    if (!other) return -1;
    text[1] = 'a';
    other[1] = 'b';
    return 0;
}
#ifndef SW_NO_DECL_memcmp
static long long memcmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memcmp(s, other, (size_t)text_size) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_memcmp_remaining = {memcmp_remaining_setup, NULL, memcmp_remaining_run, near_calls};
#endif

/* memcmp, length: equal arrays, both ending against an unreadable page. */
static int memcmp_length_setup(long long size) {
    if (guarded_text(size)) return -1;
    other = guarded_of('x');
    return other ? 0 : -1;
}
#ifndef SW_NO_DECL_memcmp
static long long memcmp_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memcmp(s, other, (size_t)bound) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_memcmp_length = {memcmp_length_setup, NULL, memcmp_length_run, scan_calls};
#endif

/* ---- copies and fills of n bytes: each call's last byte is cleared first, then checked ---- */

#ifndef SW_NO_DECL_memcpy
/* memcpy, length: the bytes copied. */
static long long memcpy_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[text_size - 1] = '\0';
        hits += memcpy(d, text, (size_t)text_size) == d && d[text_size - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_memcpy_length = {plain_text, NULL, memcpy_length_run, bulk_calls};
#endif

#ifndef SW_NO_DECL_mempcpy
/* mempcpy, length: the bytes copied. */
static long long mempcpy_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[text_size - 1] = '\0';
        hits += mempcpy(d, text, (size_t)text_size) == d + text_size && d[text_size - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_mempcpy_length = {plain_text, NULL, mempcpy_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_memmove
/*
 * memmove, length: the bytes moved one byte up within the same array, which only a backward copy
 * does right. The first byte is marked before each call; it must reach the second, and the byte
 * before the last must reach the last, where a forward copy would have smeared the mark.
 */
static long long memmove_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *s = text;
        SW_OPAQUE(s);
        char mark = (char)('A' + i % 26);
        s[0] = mark;
        s[text_size - 2] = 'y';
        hits += memmove(s + 1, s, (size_t)text_size - 1) == s + 1 && s[1] == mark && s[text_size - 1] == 'y';
    }
    return hits;
}
const struct sw_probe sw_probe_memmove_length = {plain_text, NULL, memmove_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_memset
/* memset, length: the bytes set, to a value that changes from call to call. */
static long long memset_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        char c = (char)('A' + i % 26);
        hits += memset(d, c, (size_t)text_size) == d && d[0] == c && d[text_size - 1] == c;
    }
    return hits;
}
const struct sw_probe sw_probe_memset_length = {plain_text, NULL, memset_length_run, bulk_calls};
#endif

#ifndef SW_NO_DECL_explicit_bzero
/* explicit_bzero, length: the bytes cleared. */
static long long explicit_bzero_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[text_size - 1] = 'x';
        explicit_bzero(d, (size_t)text_size);
        hits += d[text_size - 1] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_explicit_bzero_length = {plain_text, NULL, explicit_bzero_length_run, scan_calls};
#endif

/* ---- memccpy ---- */

#ifndef SW_NO_DECL_memccpy
/* memccpy, remaining: the stop byte 1 byte in, the bound (and the bytes behind it) grows. */
static long long memccpy_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[1] = '\0';
        hits += memccpy(d, text, ':', (size_t)text_size) == d + 2 && d[1] == ':';
    }
    return hits;
}
const struct sw_probe sw_probe_memccpy_remaining = {match_near, NULL, memccpy_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_memccpy
/* memccpy, bound: no stop byte within the bound, the array's last byte against an unreadable page. */
static long long memccpy_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[bound - 1] = '\0';
        hits += memccpy(d, text, ':', (size_t)bound) == NULL && d[bound - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_memccpy_bound = {guarded_text, NULL, memccpy_bound_run, scan_calls};
#endif

/* ---- memmem, strstr, strcasestr ---- */

/*
 * The remaining probes' input: a haystack of size bytes of 'x' holding "bcdefghi" 1 byte in, and
 * `what`, the 8 bytes it is looked for as (in upper case for strcasestr).
 */
static int near_needle_setup(long long size, const char *what) {
    if (text_of(size, 'x')) return -1;
    memcpy(text + 1, "bcdefghi", SHORT_NEEDLE);
    needle = what;
    needle_size = SHORT_NEEDLE;
    return 0;
}

/*
 * The growing-needle probes' input: a needle of size bytes (needle_of, in case a and b), and a
 * haystack of 'a' ending in it, 2 × size − 1 bytes, so that the one match sits size − 1 bytes in.
 * When guarded, the haystack is an array whose last byte is against an unreadable page.
 */
static int far_needle_setup(long long size, char a, char b, int guarded) {
    if (size < 4) return -1; /* 'a' on both sides of the needle's 'b' */
    char *n = needle_of(size, a, b);
    if (!n) return -1;
    needle = n;
    needle_size = size;
    text_size = 2 * size - 1;
    if (guarded) {
        bound = text_size;
        text = guarded_of('a');
    } else {
        text = string_of(text_size, 'a');
    }
    if (!text) return -1;
    text[size - 1 + size / 2] = 'b';
    return 0;
}

/* memmem, remaining: an 8-byte needle 1 byte in, the haystack after it grows. */
static int memmem_remaining_setup(long long size) { return near_needle_setup(size, "bcdefghi"); }
#ifndef SW_NO_DECL_memmem
static long long memmem_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memmem(s, (size_t)text_size, needle, (size_t)needle_size) == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_memmem_remaining = {memmem_remaining_setup, NULL, memmem_remaining_run, near_calls};
#endif

/* memmem, needle: the needle and the haystack (2n − 1 bytes, against an unreadable page) grow. */
static int memmem_needle_setup(long long size) { return far_needle_setup(size, 'a', 'b', 1); }
#ifndef SW_NO_DECL_memmem
static long long memmem_needle_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEEDLE_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += memmem(s, (size_t)text_size, needle, (size_t)needle_size) == s + needle_size - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_memmem_needle = {memmem_needle_setup, NULL, memmem_needle_run, needle_calls};
#endif

/* strstr, remaining: an 8-byte needle 1 byte in, the haystack after it grows. */
static int strstr_remaining_setup(long long size) { return near_needle_setup(size, "bcdefghi"); }
#ifndef SW_NO_DECL_strstr
static long long strstr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strstr(s, needle) == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strstr_remaining = {strstr_remaining_setup, NULL, strstr_remaining_run, near_calls};
#endif

/* strstr, needle: the needle and the haystack (2n − 1 bytes) grow. */
static int strstr_needle_setup(long long size) { return far_needle_setup(size, 'a', 'b', 0); }
#ifndef SW_NO_DECL_strstr
static long long strstr_needle_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEEDLE_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strstr(s, needle) == s + needle_size - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strstr_needle = {strstr_needle_setup, NULL, strstr_needle_run, needle_calls};
#endif

/* strcasestr, remaining: an 8-byte needle in upper case 1 byte into a lower-case haystack that grows. */
static int strcasestr_remaining_setup(long long size) { return near_needle_setup(size, "BCDEFGHI"); }
#ifndef SW_NO_DECL_strcasestr
static long long strcasestr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcasestr(s, needle) == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strcasestr_remaining = {strcasestr_remaining_setup, NULL, strcasestr_remaining_run, near_calls};
#endif

/* strcasestr, needle: an upper-case needle and a lower-case haystack (2n − 1 bytes) grow. */
static int strcasestr_needle_setup(long long size) { return far_needle_setup(size, 'A', 'B', 0); }
#ifndef SW_NO_DECL_strcasestr
static long long strcasestr_needle_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEEDLE_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcasestr(s, needle) == s + needle_size - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strcasestr_needle = {strcasestr_needle_setup, NULL, strcasestr_needle_run, needle_calls};
#endif

/* ---- strlen, strnlen ---- */

#ifndef SW_NO_DECL_strlen
/* strlen, length: the string's bytes. */
static long long strlen_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strlen(s) == (size_t)text_size;
    }
    return hits;
}
const struct sw_probe sw_probe_strlen_length = {plain_text, NULL, strlen_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strnlen
/* strnlen, remaining: the bound 8, the guarded array past it (no terminator) grows. */
static long long strnlen_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strnlen(s, NEAR_BOUND) == NEAR_BOUND;
    }
    return hits;
}
const struct sw_probe sw_probe_strnlen_remaining = {guarded_near, NULL, strnlen_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strnlen
/* strnlen, bound: no terminator within the bound, the array's last byte against an unreadable page. */
static long long strnlen_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strnlen(s, (size_t)bound) == (size_t)bound;
    }
    return hits;
}
const struct sw_probe sw_probe_strnlen_bound = {guarded_text, NULL, strnlen_bound_run, bulk_calls};
#endif

/* ---- string copies: the byte where the copy's end should land is spoiled first, then checked ---- */

#ifndef SW_NO_DECL_strcpy
/* strcpy, length: the string's bytes. */
static long long strcpy_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[text_size] = 'd';
        hits += strcpy(d, text) == d && d[text_size] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strcpy_length = {plain_text, NULL, strcpy_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_stpcpy
/* stpcpy, length: the string's bytes. */
static long long stpcpy_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[text_size] = 'd';
        hits += stpcpy(d, text) == d + text_size && d[text_size] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_stpcpy_length = {plain_text, NULL, stpcpy_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strncpy
/* strncpy, remaining: the bound 8, the guarded source past it (no terminator) grows. */
static long long strncpy_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[NEAR_BOUND - 1] = 'd';
        hits += strncpy(d, text, NEAR_BOUND) == d && d[NEAR_BOUND - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_strncpy_remaining = {guarded_near, NULL, strncpy_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strncpy
/* strncpy, bound: no terminator within the bound, the source's last byte against an unreadable page. */
static long long strncpy_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[bound - 1] = 'd';
        hits += strncpy(d, text, (size_t)bound) == d && d[bound - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_strncpy_bound = {guarded_text, NULL, strncpy_bound_run, scan_calls};
#endif

#ifndef SW_NO_DECL_stpncpy
/* stpncpy, remaining: the bound 8, the guarded source past it (no terminator) grows. */
static long long stpncpy_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[NEAR_BOUND - 1] = 'd';
        hits += stpncpy(d, text, NEAR_BOUND) == d + NEAR_BOUND && d[NEAR_BOUND - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_stpncpy_remaining = {guarded_near, NULL, stpncpy_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_stpncpy
/* stpncpy, bound: no terminator within the bound, the source's last byte against an unreadable page. */
static long long stpncpy_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[bound - 1] = 'd';
        hits += stpncpy(d, text, (size_t)bound) == d + bound && d[bound - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_stpncpy_bound = {guarded_text, NULL, stpncpy_bound_run, scan_calls};
#endif

/*
 * strlcpy, length: the source grows while the destination holds 8 bytes; strlcpy returns the
 * source's length, so it reads it all.
 */
static int strlcpy_length_setup(long long size) {
    SW_REQUIRE(sw_strlcpy);
    return text_of(size, 'x');
}
#ifndef SW_NO_DECL_strlcpy
static long long strlcpy_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[NEAR_BOUND - 1] = 'd';
        hits += sw_strlcpy(d, text, NEAR_BOUND) == (size_t)text_size && d[NEAR_BOUND - 1] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strlcpy_length = {strlcpy_length_setup, NULL, strlcpy_length_run, scan_calls};
#endif

/* strlcpy, size: a 1-byte source, the destination's size grows; unlike strncpy it does not pad. */
static int strlcpy_size_setup(long long size) {
    SW_REQUIRE(sw_strlcpy);
    if (text_of(size, 'x')) return -1;
    text[1] = '\0';
    return 0;
}
#ifndef SW_NO_DECL_strlcpy
static long long strlcpy_size_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[1] = 'd';
        hits += sw_strlcpy(d, text, (size_t)text_size) == 1 && d[1] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strlcpy_size = {strlcpy_size_setup, NULL, strlcpy_size_run, near_calls};
#endif

/* ---- concatenation: the destination holds "d" again before each call ---- */

#ifndef SW_NO_DECL_strcat
/* strcat, length: the source appended to a 1-byte string grows. */
static long long strcat_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[1] = '\0';
        d[text_size + 1] = 'd';
        hits += strcat(d, text) == d && d[text_size] == 'x' && d[text_size + 1] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strcat_length = {plain_text, NULL, strcat_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strncat
/* strncat, remaining: the bound 8, the guarded source past it (no terminator) grows. */
static long long strncat_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[1] = '\0';
        d[NEAR_BOUND + 1] = 'd';
        hits += strncat(d, text, NEAR_BOUND) == d && d[NEAR_BOUND] == 'x' && d[NEAR_BOUND + 1] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strncat_remaining = {guarded_near, NULL, strncat_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strncat
/* strncat, bound: no terminator within the bound, the source's last byte against an unreadable page. */
static long long strncat_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[1] = '\0';
        d[bound + 1] = 'd';
        hits += strncat(d, text, (size_t)bound) == d && d[bound] == 'x' && d[bound + 1] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strncat_bound = {guarded_text, NULL, strncat_bound_run, scan_calls};
#endif

/* strlcat, size: "d" and a 1-byte source, the destination's size grows. */
static int strlcat_size_setup(long long size) {
    SW_REQUIRE(sw_strlcat);
    if (text_of(size, 'x')) return -1;
    text[1] = '\0';
    return 0;
}
#ifndef SW_NO_DECL_strlcat
static long long strlcat_size_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[1] = '\0';
        d[2] = 'd';
        hits += sw_strlcat(d, text, (size_t)text_size) == 2 && d[1] == 'x' && d[2] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strlcat_size = {strlcat_size_setup, NULL, strlcat_size_run, near_calls};
#endif

/*
 * strlcat, bound: a destination with no terminator within its size, its last byte against an
 * unreadable page: strlcat returns size + strlen(src) and writes nothing.
 */
static int strlcat_bound_setup(long long size) {
    SW_REQUIRE(sw_strlcat);
    if (bound_of(size)) return -1;
    dest = guarded_of('d');
    return dest ? 0 : -1;
}
#ifndef SW_NO_DECL_strlcat
static long long strlcat_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        hits += sw_strlcat(d, "x", (size_t)bound) == (size_t)bound + 1 && d[bound - 1] == 'd';
    }
    return hits;
}
const struct sw_probe sw_probe_strlcat_bound = {strlcat_bound_setup, NULL, strlcat_bound_run, bulk_calls};
#endif

/* ---- comparisons ---- */

/* Two strings of size bytes of c, differing 1 byte in where `differ`, else equal. */
static int pair_setup(long long size, char c, int differ) {
    if (text_of(size, c)) return -1;
    other = string_of(size, c);
    if (!other) return -1;
    if (differ) {
        text[1] = 'a';
        other[1] = 'b';
    }
    return 0;
}
static int differing_setup(long long size) { return pair_setup(size, 'x', 1); }
static int equal_setup(long long size) { return pair_setup(size, 'x', 0); }

#ifndef SW_NO_DECL_strcmp
/* strcmp, remaining: the strings differ 1 byte in, the bytes after grow. */
static long long strcmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcmp(s, other) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strcmp_remaining = {differing_setup, NULL, strcmp_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strcmp
/* strcmp, length: equal strings (two copies, not one pointer twice). */
static long long strcmp_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcmp(s, other) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strcmp_length = {equal_setup, NULL, strcmp_length_run, scan_calls};
#endif

/* Two equal guarded arrays of 'x' with no terminator. */
static int guarded_pair_setup(long long size) {
    if (bound_of(size)) return -1;
    text = guarded_of('x');
    other = guarded_of('x');
    return text && other ? 0 : -1;
}

/* strncmp, remaining: the bound 8, the equal guarded arrays past it (no terminator) grow. */
static int strncmp_remaining_setup(long long size) {
    if (guarded_pair_setup(size)) return -1;
    sw_bound(NEAR_BOUND);
    return 0;
}
#ifndef SW_NO_DECL_strncmp
static long long strncmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strncmp(s, other, NEAR_BOUND) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strncmp_remaining = {strncmp_remaining_setup, NULL, strncmp_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strncmp
/* strncmp, bound: equal arrays with no terminator within the bound, both against an unreadable page. */
static long long strncmp_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strncmp(s, other, (size_t)bound) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strncmp_bound = {guarded_pair_setup, NULL, strncmp_bound_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strcoll
/* strcoll, remaining: the strings differ 1 byte in, the bytes after grow (the C locale). */
static long long strcoll_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcoll(s, other) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strcoll_remaining = {differing_setup, NULL, strcoll_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strcoll
/* strcoll, length: equal strings (the C locale). */
static long long strcoll_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcoll(s, other) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strcoll_length = {equal_setup, NULL, strcoll_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strverscmp
/* strverscmp, remaining: the strings (letters, no digits) differ 1 byte in, the bytes after grow. */
static long long strverscmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strverscmp(s, other) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strverscmp_remaining = {differing_setup, NULL, strverscmp_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strverscmp
/* strverscmp, length: equal strings. */
static long long strverscmp_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strverscmp(s, other) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_strverscmp_length = {equal_setup, NULL, strverscmp_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strxfrm
/* strxfrm, length: the string transformed (the C locale), into a destination large enough. */
static long long strxfrm_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *d = dest;
        SW_OPAQUE(d);
        d[text_size] = 'd';
        hits += strxfrm(d, text, (size_t)text_size + 1) == (size_t)text_size && d[text_size] == '\0';
    }
    return hits;
}
const struct sw_probe sw_probe_strxfrm_length = {plain_text, NULL, strxfrm_length_run, scan_calls};
#endif

/* ---- strchr, strrchr, strchrnul ---- */

#ifndef SW_NO_DECL_strchr
/* strchr, remaining: the match 1 byte in, the rest of the string grows. */
static long long strchr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strchr(s, ':') == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strchr_remaining = {match_near, NULL, strchr_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strchr
/* strchr, distance: the match at the end. */
static long long strchr_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strchr(s, ':') == s + text_size - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strchr_distance = {match_far, NULL, strchr_distance_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strrchr
/* strrchr, length: the only match 1 byte in, the string after it grows; all of it must be read. */
static long long strrchr_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strrchr(s, ':') == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strrchr_length = {match_near, NULL, strrchr_length_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strchrnul
/* strchrnul, remaining: the match 1 byte in, the rest of the string grows. */
static long long strchrnul_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strchrnul(s, ':') == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strchrnul_remaining = {match_near, NULL, strchrnul_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strchrnul
/* strchrnul, distance: no match, so the answer is the terminator at the end. */
static long long strchrnul_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strchrnul(s, ':') == s + text_size;
    }
    return hits;
}
const struct sw_probe sw_probe_strchrnul_distance = {plain_text, NULL, strchrnul_distance_run, scan_calls};
#endif

/* ---- strspn, strcspn, strpbrk: sets of several bytes, past the one-byte special cases ---- */

/* strspn, remaining: one byte of the set, one outside it, then the rest (of the set) grows. */
static int strspn_remaining_setup(long long size) {
    if (text_of(size, 'a')) return -1;
    text[1] = ':';
    return 0;
}
#ifndef SW_NO_DECL_strspn
static long long strspn_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strspn(s, "abc") == 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strspn_remaining = {strspn_remaining_setup, NULL, strspn_remaining_run, near_calls};
#endif

/* strspn, distance: the whole string is in the set. */
static int strspn_distance_setup(long long size) { return text_of(size, 'a'); }
#ifndef SW_NO_DECL_strspn
static long long strspn_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strspn(s, "abc") == (size_t)text_size;
    }
    return hits;
}
const struct sw_probe sw_probe_strspn_distance = {strspn_distance_setup, NULL, strspn_distance_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strcspn
/* strcspn, remaining: a byte of the set 1 byte in, the rest of the string grows. */
static long long strcspn_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcspn(s, ":;,") == 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strcspn_remaining = {match_near, NULL, strcspn_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strcspn
/* strcspn, distance: no byte of the set, so the span is the whole string. */
static long long strcspn_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strcspn(s, ":;,") == (size_t)text_size;
    }
    return hits;
}
const struct sw_probe sw_probe_strcspn_distance = {plain_text, NULL, strcspn_distance_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strpbrk
/* strpbrk, remaining: a byte of the set 1 byte in, the rest of the string grows. */
static long long strpbrk_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strpbrk(s, ":;,") == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strpbrk_remaining = {match_near, NULL, strpbrk_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strpbrk
/* strpbrk, distance: the one byte of the set at the end. */
static long long strpbrk_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += strpbrk(s, ":;,") == s + text_size - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_strpbrk_distance = {match_far, NULL, strpbrk_distance_run, scan_calls};
#endif

/*
 * ---- strtok, strtok_r, strsep: each call writes a terminator over the delimiter it finds, which
 * is put back after it, so that every call sees the whole string ----
 */

#ifndef SW_NO_DECL_strtok
/* strtok, remaining: a 1-byte token, a delimiter, then the rest of the string grows. */
static long long strtok_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *s = text;
        SW_OPAQUE(s);
        hits += strtok(s, ":;,") == s && s[1] == '\0';
        s[1] = ':';
    }
    return hits;
}
const struct sw_probe sw_probe_strtok_remaining = {match_near, NULL, strtok_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strtok
/* strtok, distance: one token fills the string, its delimiter at the end. */
static long long strtok_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < SCAN_CALLS; i++) {
        char *s = text;
        SW_OPAQUE(s);
        hits += strtok(s, ":;,") == s && s[text_size - 1] == '\0';
        s[text_size - 1] = ':';
    }
    return hits;
}
const struct sw_probe sw_probe_strtok_distance = {match_far, NULL, strtok_distance_run, scan_calls};
#endif

#ifndef SW_NO_DECL_strtok_r
/* strtok_r, remaining: a 1-byte token, a delimiter, then the rest of the string grows. */
static long long strtok_r_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *s = text, *next = NULL;
        SW_OPAQUE(s);
        hits += strtok_r(s, ":;,", &next) == s && s[1] == '\0' && next == s + 2;
        s[1] = ':';
    }
    return hits;
}
const struct sw_probe sw_probe_strtok_r_remaining = {match_near, NULL, strtok_r_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strsep
/* strsep, remaining: a 1-byte token, a delimiter, then the rest of the string grows. */
static long long strsep_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        char *s = text;
        SW_OPAQUE(s);
        char *next = s;
        hits += strsep(&next, ":;,") == s && s[1] == '\0' && next == s + 2;
        s[1] = ':';
    }
    return hits;
}
const struct sw_probe sw_probe_strsep_remaining = {match_near, NULL, strsep_remaining_run, near_calls};
#endif

/* ---- strdup, strndup: each copy is checked, then freed ---- */

#ifndef SW_NO_DECL_strdup
/* strdup, length: the string's bytes. */
static long long strdup_length_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        char *d = strdup(s);
        hits += d && d[text_size - 1] == 'x' && d[text_size] == '\0';
        free(d);
    }
    return hits;
}
const struct sw_probe sw_probe_strdup_length = {plain_text, NULL, strdup_length_run, bulk_calls};
#endif

#ifndef SW_NO_DECL_strndup
/* strndup, remaining: the bound 8, the guarded array past it (no terminator) grows. */
static long long strndup_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < NEAR_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        char *d = strndup(s, NEAR_BOUND);
        hits += d && d[NEAR_BOUND - 1] == 'x' && d[NEAR_BOUND] == '\0';
        free(d);
    }
    return hits;
}
const struct sw_probe sw_probe_strndup_remaining = {guarded_near, NULL, strndup_remaining_run, near_calls};
#endif

#ifndef SW_NO_DECL_strndup
/* strndup, bound: no terminator within the bound, the array's last byte against an unreadable page. */
static long long strndup_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < BULK_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        char *d = strndup(s, (size_t)bound);
        hits += d && d[bound - 1] == 'x' && d[bound] == '\0';
        free(d);
    }
    return hits;
}
const struct sw_probe sw_probe_strndup_bound = {guarded_text, NULL, strndup_bound_run, bulk_calls};
#endif
