/*
 * Input shapes: the generators the search climbs over, a found probe runs, and a reproducer
 * carries. A shape is a function, an axis and a few parameters ("alphabet=1,mismatch=last") that
 * describe a family of inputs at any size; sw_shape_build() makes the input of one size and
 * sw_shape_call() calls the function on it once, saying whether the answer was right.
 *
 * This file stands alone (libc headers only): the agent cuts a reproducer from it, the parts
 * between "@begin NAME" and "@end NAME" that its function needs (common, the function's family,
 * the function), so the code that builds a reproducer's input is the code the search measured.
 * A function a libc lacks is left out with SW_NO_DECL_NAME, as in the catalogue.
 */
/* @begin common */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>

#define SW_SHAPE_KEYS 8

struct sw_shape {
    char function[32], axis[32];
    char keys[SW_SHAPE_KEYS][16];
    long values[SW_SHAPE_KEYS];
    int count;
    long long size;
    /* The input: a (the text, the haystack, the first array), b (the needle, the set, the second
     * array), their lengths, and a destination. */
    char *a, *b, *dst;
    long long a_len, b_len, bound;
    /* What a right answer is: an offset into a (-1 for none), a length, or a sign. */
    long long expect;
    /* The bound a guarded input ends at, once an unreadable page follows it; 0 when unguarded. */
    long long guard;
    /* Set once a wrong answer has been told, so it is told once. */
    int told;
};

/*
 * A parameter's word or number: first 0, second 1, mid -2, last -1; no, lower and low 0; yes,
 * upper and high 1; nul 2.
 */
static long sw_shape_word(const char *v) {
    if (!strcmp(v, "first") || !strcmp(v, "no") || !strcmp(v, "lower") || !strcmp(v, "low")) return 0;
    if (!strcmp(v, "second") || !strcmp(v, "yes") || !strcmp(v, "upper") || !strcmp(v, "high")) return 1;
    if (!strcmp(v, "nul")) return 2;
    if (!strcmp(v, "mid")) return -2;
    if (!strcmp(v, "last")) return -1;
    return strtol(v, NULL, 10);
}

/* Parses "contract.FUNCTION.AXIS~k=v,k=v" (or "FUNCTION.AXIS~k=v,..."): 0, or -1 with a message. */
static int sw_shape_parse(struct sw_shape *s, const char *name) {
    memset(s, 0, sizeof *s);
    if (!strncmp(name, "contract.", 9)) name += 9;
    const char *dot = strchr(name, '.'), *tilde = strchr(name, '~');
    if (!dot || !tilde || tilde < dot || dot - name >= 32 || tilde - dot - 1 >= 32) {
        fprintf(stderr, "%s is not FUNCTION.AXIS~SHAPE\n", name);
        return -1;
    }
    memcpy(s->function, name, (size_t)(dot - name));
    memcpy(s->axis, dot + 1, (size_t)(tilde - dot - 1));
    const char *p = tilde + 1;
    while (*p) {
        const char *eq = strchr(p, '='), *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        if (!eq || eq > end || eq - p >= 16 || s->count == SW_SHAPE_KEYS) {
            fprintf(stderr, "bad shape parameter in %s\n", name);
            return -1;
        }
        char value[24] = {0};
        memcpy(s->keys[s->count], p, (size_t)(eq - p));
        memcpy(value, eq + 1, (size_t)(end - eq - 1) < sizeof value - 1 ? (size_t)(end - eq - 1) : sizeof value - 1);
        s->values[s->count++] = sw_shape_word(value);
        p = *end ? end + 1 : end;
    }
    return 0;
}

static long sw_param(const struct sw_shape *s, const char *key, long otherwise) {
    for (int i = 0; i < s->count; i++)
        if (!strcmp(s->keys[i], key)) return s->values[i];
    return otherwise;
}

/* A position in len bytes: first, second, mid, last, or a number clamped to the bytes. */
static long long sw_position(long v, long long len) {
    if (v == -1) return len - 1;
    if (v == -2) return len / 2;
    return v < len ? v : len - 1;
}

/* size bytes, 64-byte aligned, then `offset` bytes further in (an alignment), never freed. */
static char *sw_bytes(long long size, long offset) {
    char *p = malloc((size_t)size + 128);
    return p ? p + offset % 64 : NULL;
}

/* bytes bytes whose last is followed by an unreadable page: a read past them crashes. */
static char *sw_guarded_bytes(long long bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t readable = ((size_t)bytes + page - 1) / page * page;
    if (readable == 0) readable = page;
    char *base = mmap(NULL, readable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base + readable, page, PROT_NONE) != 0) return NULL;
    return base + readable - bytes;
}

/* The byte of letter i of an alphabet: 'a', 'b', ... or, high, 0xe1, 0xe2, ... */
static char sw_letter(int high, long i) { return (char)((high ? 0xe1 : 'a') + i); }

/* What a read past a guarded input's bound says before the crash, said by the handler below. */
static char sw_fault[160];
static size_t sw_fault_length;

static void sw_on_fault(int sig) {
    ssize_t ignored = write(2, sw_fault, sw_fault_length);
    (void)ignored;
    signal(sig, SIG_DFL);
    raise(sig);
}

/*
 * Arms the handler for a guarded input: a crash from here on says "PREFIXread past its bound of
 * N bytesSUFFIX" on stderr, then ends in the signal itself.
 */
static void sw_shape_guard(const struct sw_shape *s, const char *prefix, const char *suffix) {
    int n = snprintf(sw_fault, sizeof sw_fault, "%sread past its bound of %lld bytes%s\n", prefix, s->guard, suffix);
    sw_fault_length = n < 0 ? 0 : (size_t)n < sizeof sw_fault ? (size_t)n : sizeof sw_fault - 1;
    signal(SIGSEGV, sw_on_fault);
    signal(SIGBUS, sw_on_fault);
}

/* Tells a wrong answer once, on stderr: what the agent reports, what a reproducer prints. */
static int sw_wrong(struct sw_shape *s, const char *what, long long got) {
    if (!s->told) fprintf(stderr, "%s: %s %lld, expected %lld\n", s->function, what, got, s->expect);
    s->told = 1;
    return 0;
}
/* @end common */

/* @begin search */
/*
 * Searches (strstr, strcasestr, memmem). A needle of m bytes cycling through an alphabet of
 * `alphabet` letters with one byte, at `mismatch`, that is no letter; a haystack cycling through
 * the same letters, so that every aligned window matches until the mismatch. With found=yes the
 * needle ends the haystack. Axes: needle (m = n/2, the haystack n), haystack (m = `needle`
 * bytes), remaining (an 8-byte needle found 1 byte in, the rest of the haystack growing).
 */
static long long sw_find(const char *h, long long n, const char *nd, long long m, int fold) {
    /* Knuth-Morris-Pratt: the reference answer, in linear time. */
    long long *fail = malloc(sizeof(long long) * (size_t)(m + 1)), k = 0, found = -1;
    if (!fail) return -2;
#define SW_FOLD(c) (fold && (c) >= 'A' && (c) <= 'Z' ? (c) + 32 : (c))
    fail[0] = -1;
    for (long long i = 1; i < m; i++) {
        k = fail[i - 1];
        while (k >= 0 && SW_FOLD(nd[k + 1]) != SW_FOLD(nd[i])) k = fail[k];
        fail[i] = SW_FOLD(nd[k + 1]) == SW_FOLD(nd[i]) ? k + 1 : -1;
    }
    k = -1;
    for (long long i = 0; i < n; i++) {
        while (k >= 0 && SW_FOLD(nd[k + 1]) != SW_FOLD(h[i])) k = fail[k];
        if (SW_FOLD(nd[k + 1]) == SW_FOLD(h[i])) k++;
        if (k == m - 1) {
            found = i - m + 1;
            break;
        }
    }
#undef SW_FOLD
    free(fail);
    return found;
}

static int sw_search_build(struct sw_shape *s, long long size) {
    long alphabet = sw_param(s, "alphabet", 1), high = sw_param(s, "high", 0);
    int upper = sw_param(s, "case", 0) == 1, guard = sw_param(s, "guard", 0) == 1;
    long long n = size, m;
    if (!strcmp(s->axis, "needle")) m = size / 2;
    else if (!strcmp(s->axis, "haystack")) m = sw_param(s, "needle", 32);
    else m = 8;
    if (alphabet < 1 || alphabet > 8 || m < 2 || m > n) return -1;
    s->b = sw_bytes(m, 0);
    s->a = guard ? sw_guarded_bytes(n + 1) : sw_bytes(n, sw_param(s, "align", 0));
    if (!s->a || !s->b) return -1;
    for (long long i = 0; i < m; i++) s->b[i] = sw_letter(high, i % alphabet);
    s->b[sw_position(sw_param(s, "mismatch", -1), m)] = high ? (char)0xfa : 'z';
    s->b[m] = '\0';
    for (long long i = 0; i < n; i++) s->a[i] = sw_letter(high, i % alphabet);
    if (!strcmp(s->axis, "remaining")) memcpy(s->a + 1, s->b, (size_t)m);
    else if (sw_param(s, "found", 0) == 1) memcpy(s->a + n - m, s->b, (size_t)m);
    if (upper)
        for (long long i = 0; i < n; i++)
            if (s->a[i] >= 'a' && s->a[i] <= 'z') s->a[i] -= 32;
    s->a[n] = '\0';
    s->a_len = n;
    s->b_len = m;
    if (guard) s->guard = n + 1;
    s->expect = sw_find(s->a, n, s->b, m, !strcmp(s->function, "strcasestr"));
    return s->expect < -1 ? -1 : 0;
}

static int sw_search_check(struct sw_shape *s, const char *got) {
    long long at = got ? got - s->a : -1;
    return at == s->expect ? 1 : sw_wrong(s, "found the needle at", at);
}
/* @end search */

/* @begin strstr */
#ifndef SW_NO_DECL_strstr
static int sw_call_strstr(struct sw_shape *s) { return sw_search_check(s, strstr(s->a, s->b)); }
#endif
/* @end strstr */
/* @begin strcasestr */
#ifndef SW_NO_DECL_strcasestr
static int sw_call_strcasestr(struct sw_shape *s) { return sw_search_check(s, strcasestr(s->a, s->b)); }
#endif
/* @end strcasestr */
/* @begin memmem */
#ifndef SW_NO_DECL_memmem
static int sw_call_memmem(struct sw_shape *s) {
    return sw_search_check(s, memmem(s->a, (size_t)s->a_len, s->b, (size_t)s->b_len));
}
#endif
/* @end memmem */

/* @begin span */
/*
 * Spans (strspn, strcspn, strpbrk). A set of `set` distinct bytes (from 'a', or from 0x80 with
 * high=yes); the byte the text is made of (strspn) or stops at (strcspn, strpbrk) is the set's
 * byte at `at`. Axes: remaining (the span ends 1 byte in, the rest grows), distance (the span is
 * the whole text).
 */
static int sw_span_build(struct sw_shape *s, long long size) {
    long set = sw_param(s, "set", 3), high = sw_param(s, "high", 0);
    int accept = !strcmp(s->function, "strspn");
    if (set < 1 || set > 96 || size < 4) return -1;
    s->b = sw_bytes(set + 1, 0);
    s->a = sw_bytes(size + 1, sw_param(s, "align", 0));
    if (!s->a || !s->b) return -1;
    for (long i = 0; i < set; i++) s->b[i] = (char)((high ? 0x80 : 0x21) + i);
    s->b[set] = '\0';
    char in = s->b[sw_position(sw_param(s, "at", 0), set)];
    char out = high ? (char)0xf0 : '~'; /* in no set: 0x21 + 96 is 0x81, and 0x80 + 96 is 0xe0 */
    char body = accept ? in : out, stop = accept ? out : in;
    memset(s->a, body, (size_t)size);
    s->a[size] = '\0';
    if (!strcmp(s->axis, "remaining")) {
        s->a[1] = stop;
        s->expect = 1;
    } else {
        s->expect = size;
    }
    s->a_len = size;
    return 0;
}
/* @end span */

/* @begin strspn */
#ifndef SW_NO_DECL_strspn
static int sw_call_strspn(struct sw_shape *s) {
    long long got = (long long)strspn(s->a, s->b);
    return got == s->expect ? 1 : sw_wrong(s, "returned", got);
}
#endif
/* @end strspn */
/* @begin strcspn */
#ifndef SW_NO_DECL_strcspn
static int sw_call_strcspn(struct sw_shape *s) {
    long long got = (long long)strcspn(s->a, s->b);
    return got == s->expect ? 1 : sw_wrong(s, "returned", got);
}
#endif
/* @end strcspn */
/* @begin strpbrk */
#ifndef SW_NO_DECL_strpbrk
static int sw_call_strpbrk(struct sw_shape *s) {
    const char *p = strpbrk(s->a, s->b);
    long long got = p ? p - s->a : s->a_len;
    return got == s->expect ? 1 : sw_wrong(s, "found a byte of the set at", got);
}
#endif
/* @end strpbrk */

/* @begin chr */
/*
 * Byte searches (strchr, strchrnul, strrchr, memchr, memrchr). A text of one filler byte and the
 * byte searched for (`byte`: low, high, or nul, the terminator itself), from an offset `align`
 * past a 64-byte boundary. Axes: remaining (the byte 1 byte in, or 1 byte from the end for
 * memrchr, the rest growing), distance (the byte last), length (the byte nowhere, or strrchr's
 * last match first). memchr and memrchr are given the whole text as their bound; with guard=yes
 * it ends against an unreadable page and has no terminator.
 */
static int sw_chr_build(struct sw_shape *s, long long size) {
    long byte = sw_param(s, "byte", 0);
    int guard = sw_param(s, "guard", 0) == 1;
    char c = byte == 2 ? '\0' : byte == 1 ? (char)0xe9 : ':';
    char fill = byte == 1 ? (char)0xe8 : 'x';
    if (size < 4) return -1;
    s->a = guard ? sw_guarded_bytes(size) : sw_bytes(size + 1, sw_param(s, "align", 0));
    if (!s->a) return -1;
    memset(s->a, fill, (size_t)size);
    if (!guard) s->a[size] = '\0';
    s->b = sw_bytes(1, 0);
    s->b[0] = c;
    long long at = -1;
    int backwards = !strcmp(s->function, "memrchr") || !strcmp(s->function, "strrchr");
    if (!strcmp(s->axis, "remaining")) at = backwards ? size - 2 : 1;
    else if (!strcmp(s->axis, "distance")) at = size - 1;
    else if (backwards && !strcmp(s->axis, "length")) at = 0;
    if (c == '\0' && !guard) at = size; /* the terminator is found */
    else if (at >= 0) s->a[at] = c;
    if (!strcmp(s->function, "strchrnul") && at < 0) at = size;
    s->expect = at;
    s->a_len = size;
    if (guard) s->guard = size;
    return 0;
}

static int sw_chr_check(struct sw_shape *s, const char *got) {
    long long at = got ? got - s->a : -1;
    return at == s->expect ? 1 : sw_wrong(s, "found the byte at", at);
}
/* @end chr */

/* @begin strchr */
#ifndef SW_NO_DECL_strchr
static int sw_call_strchr(struct sw_shape *s) { return sw_chr_check(s, strchr(s->a, (unsigned char)s->b[0])); }
#endif
/* @end strchr */
/* @begin strchrnul */
#ifndef SW_NO_DECL_strchrnul
static int sw_call_strchrnul(struct sw_shape *s) { return sw_chr_check(s, strchrnul(s->a, (unsigned char)s->b[0])); }
#endif
/* @end strchrnul */
/* @begin strrchr */
#ifndef SW_NO_DECL_strrchr
static int sw_call_strrchr(struct sw_shape *s) { return sw_chr_check(s, strrchr(s->a, (unsigned char)s->b[0])); }
#endif
/* @end strrchr */
/* @begin memchr */
#ifndef SW_NO_DECL_memchr
static int sw_call_memchr(struct sw_shape *s) {
    return sw_chr_check(s, memchr(s->a, (unsigned char)s->b[0], (size_t)s->a_len));
}
#endif
/* @end memchr */
/* @begin memrchr */
#ifndef SW_NO_DECL_memrchr
static int sw_call_memrchr(struct sw_shape *s) {
    return sw_chr_check(s, memrchr(s->a, (unsigned char)s->b[0], (size_t)s->a_len));
}
#endif
/* @end memrchr */

/* @begin cmp */
/*
 * Comparisons (strcmp, strncmp, memcmp, strcasecmp, strncasecmp). Two copies of one text, the
 * second `align` bytes off the first's alignment, of 'a' (or 0xe1 with high=yes; upper case in
 * the second with case=upper). Axes: remaining (they differ `at` bytes in, the rest growing),
 * length (equal, terminated), bound (equal over the bound, the bounded ones only: with no
 * terminator, each against an unreadable page, so a read past the bound crashes).
 */
static int sw_cmp_build(struct sw_shape *s, long long size) {
    int high = sw_param(s, "high", 0) == 1, upper = sw_param(s, "case", 0) == 1;
    int bounded = !strcmp(s->axis, "bound");
    if (size < 4) return -1;
    if (bounded) {
        s->a = sw_guarded_bytes(size);
        s->b = sw_guarded_bytes(size + sw_param(s, "align", 0));
    } else {
        s->a = sw_bytes(size + 1, 0);
        s->b = sw_bytes(size + 1, sw_param(s, "align", 0));
    }
    if (!s->a || !s->b) return -1;
    memset(s->a, high ? 0xe1 : 'a', (size_t)size);
    memset(s->b, high ? 0xe1 : upper ? 'A' : 'a', (size_t)size);
    if (!bounded) s->a[size] = s->b[size] = '\0';
    s->expect = 0;
    if (!strcmp(s->axis, "remaining")) {
        s->b[sw_position(sw_param(s, "at", 1), size)] = high ? (char)0xe2 : upper ? 'B' : 'b';
        s->expect = -1;
    }
    s->a_len = s->bound = size;
    if (bounded) s->guard = size;
    return 0;
}

static int sw_cmp_check(struct sw_shape *s, int got) {
    int sign = (got > 0) - (got < 0);
    return sign == s->expect ? 1 : sw_wrong(s, "returned a result of sign", sign);
}
/* @end cmp */

/* @begin strcmp */
#ifndef SW_NO_DECL_strcmp
static int sw_call_strcmp(struct sw_shape *s) { return sw_cmp_check(s, strcmp(s->a, s->b)); }
#endif
/* @end strcmp */
/* @begin strncmp */
#ifndef SW_NO_DECL_strncmp
static int sw_call_strncmp(struct sw_shape *s) { return sw_cmp_check(s, strncmp(s->a, s->b, (size_t)s->bound)); }
#endif
/* @end strncmp */
/* @begin memcmp */
#ifndef SW_NO_DECL_memcmp
static int sw_call_memcmp(struct sw_shape *s) { return sw_cmp_check(s, memcmp(s->a, s->b, (size_t)s->bound)); }
#endif
/* @end memcmp */
/* @begin strcasecmp */
#ifndef SW_NO_DECL_strcasecmp
static int sw_call_strcasecmp(struct sw_shape *s) { return sw_cmp_check(s, strcasecmp(s->a, s->b)); }
#endif
/* @end strcasecmp */
/* @begin strncasecmp */
#ifndef SW_NO_DECL_strncasecmp
static int sw_call_strncasecmp(struct sw_shape *s) {
    return sw_cmp_check(s, strncasecmp(s->a, s->b, (size_t)s->bound));
}
#endif
/* @end strncasecmp */

/* @begin copy */
/*
 * Copies (memccpy, strncpy, stpncpy, strcpy, strlen, strnlen). A source of 'x' (0xe8 with
 * high=yes) into a destination `align` bytes off a 64-byte boundary. memccpy's stop byte (':',
 * 0xe9 with high=yes) lies `at` bytes in on the remaining axis; on the bound axis there is none,
 * and the bounded functions read a source with no terminator that ends against an unreadable
 * page. Each copy is checked byte for byte, and the pointer returned.
 */
static int sw_copy_build(struct sw_shape *s, long long size) {
    int high = sw_param(s, "high", 0) == 1, bounded = !strcmp(s->axis, "bound");
    if (size < 4) return -1;
    s->a = bounded ? sw_guarded_bytes(size) : sw_bytes(size + 1, 0);
    s->dst = sw_bytes(size + 2, sw_param(s, "align", 0));
    if (!s->a || !s->dst) return -1;
    memset(s->a, high ? 0xe8 : 'x', (size_t)size);
    if (!bounded) s->a[size] = '\0';
    s->b = sw_bytes(1, 0);
    s->b[0] = high ? (char)0xe9 : ':';
    s->expect = size;
    if (!strcmp(s->axis, "remaining")) {
        s->expect = sw_position(sw_param(s, "at", 1), size);
        s->a[s->expect] = s->b[0];
    }
    s->a_len = s->bound = size;
    if (bounded) s->guard = size;
    return 0;
}

/* Whether dst holds the first n bytes of a. */
static int sw_copied(struct sw_shape *s, long long n) {
    if (memcmp(s->dst, s->a, (size_t)n) == 0) return 1;
    long long i = 0;
    while (s->dst[i] == s->a[i]) i++;
    long long expect = s->expect;
    s->expect = n;
    sw_wrong(s, "copied a first wrong byte at", i);
    s->expect = expect;
    return 0;
}
/* @end copy */

/* @begin memccpy */
#ifndef SW_NO_DECL_memccpy
static int sw_call_memccpy(struct sw_shape *s) {
    char *end = memccpy(s->dst, s->a, (unsigned char)s->b[0], (size_t)s->bound);
    int stop = !strcmp(s->axis, "remaining");
    long long got = end ? end - s->dst : -1, want = stop ? s->expect + 1 : -1;
    if (got != want) {
        long long expect = s->expect;
        s->expect = want;
        sw_wrong(s, "returned dst +", got);
        s->expect = expect;
        return 0;
    }
    return sw_copied(s, stop ? s->expect + 1 : s->bound);
}
#endif
/* @end memccpy */
/* @begin strncpy */
#ifndef SW_NO_DECL_strncpy
static int sw_call_strncpy(struct sw_shape *s) {
    return strncpy(s->dst, s->a, (size_t)s->bound) == s->dst ? sw_copied(s, s->bound) : sw_wrong(s, "returned", -1);
}
#endif
/* @end strncpy */
/* @begin stpncpy */
#ifndef SW_NO_DECL_stpncpy
static int sw_call_stpncpy(struct sw_shape *s) {
    long long got = stpncpy(s->dst, s->a, (size_t)s->bound) - s->dst;
    return got == s->bound ? sw_copied(s, s->bound) : sw_wrong(s, "returned dst +", got);
}
#endif
/* @end stpncpy */
/* @begin strcpy */
#ifndef SW_NO_DECL_strcpy
static int sw_call_strcpy(struct sw_shape *s) {
    return strcpy(s->dst, s->a) == s->dst ? sw_copied(s, s->a_len + 1) : sw_wrong(s, "returned", -1);
}
#endif
/* @end strcpy */
/* @begin strlen */
#ifndef SW_NO_DECL_strlen
static int sw_call_strlen(struct sw_shape *s) {
    long long got = (long long)strlen(s->a);
    return got == s->expect ? 1 : sw_wrong(s, "returned", got);
}
#endif
/* @end strlen */
/* @begin strnlen */
#ifndef SW_NO_DECL_strnlen
static int sw_call_strnlen(struct sw_shape *s) {
    long long got = (long long)strnlen(s->a, (size_t)s->bound);
    return got == s->bound ? 1 : sw_wrong(s, "returned", got);
}
#endif
/* @end strnlen */

/* @begin table */
/* Every function a shape can call: its family's builder and its own call. */
static const struct sw_shape_function {
    const char *name;
    int (*build)(struct sw_shape *, long long);
    int (*call)(struct sw_shape *);
} sw_shape_functions[] = {
#define SW_SHAPE_FN(family, name) {#name, sw_##family##_build, sw_call_##name},
#include "shapes.def"
#undef SW_SHAPE_FN
    {NULL, NULL, NULL},
};

/* The function a shape names, or NULL when this libc lacks it (or no shape calls it). */
static const struct sw_shape_function *sw_shape_function(const char *name) {
    for (const struct sw_shape_function *f = sw_shape_functions; f->name; f++)
        if (!strcmp(f->name, name)) return f;
    return NULL;
}
/* @end table */
