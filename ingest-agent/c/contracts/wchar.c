/* Probes of <wchar.h> (and <stdlib.h>'s multibyte conversions): see catalogue.def and wchar.def. */
#include "contracts.h"
#ifndef SW_NO_WCHAR_H

/*
 * Calls per repetition, the same at every size: an O(1) probe makes MANY, so that its smallest
 * size still takes microseconds; an O(n) probe makes FEW, so that its largest stays near a
 * millisecond.
 */
#define MANY 384
#define FEW 32
/* The bound, in wide characters (or bytes), of the probes whose bound stays near. */
#define NEAR 4

static wchar_t *text;  /* the string or array searched */
static wchar_t *other; /* the second operand of the comparisons */
static char *bytes;    /* the multibyte input of mbstowcs, mbrtowc and mbrlen */
static long long text_size;
static wchar_t out[2 * NEAR + 1]; /* what the copies and conversions write */

static long long many(void) { return MANY; }
static long long few(void) { return FEW; }

/* `size` wide 'x's and a terminator; NULL when out of memory. */
static wchar_t *wide(long long size) {
    wchar_t *w = malloc(((size_t)size + 1) * sizeof *w);
    if (!w) return NULL;
    for (long long i = 0; i < size; i++) w[i] = L'x';
    w[size] = L'\0';
    text_size = size;
    return w;
}

/* `size` wide 'x's with no terminator, the last against an unreadable page. */
static wchar_t *wide_guarded(long long size) {
    wchar_t *w = sw_guarded((size_t)size * sizeof *w);
    if (!w) return NULL;
    for (long long i = 0; i < size; i++) w[i] = L'x';
    text_size = size;
    return w;
}

/* `size` wide characters: `prefix`, then 'x' to the end, and a terminator; refused when too short. */
static int wide_prefixed(long long size, const wchar_t *prefix) {
    if (size <= (long long)wcslen(prefix)) return -1; /* no room for what follows the prefix */
    text = wide(size);
    if (!text) return -1;
    for (long long i = 0; prefix[i] && i < size; i++) text[i] = prefix[i];
    return 0;
}

/* wcsnlen, remaining: a bound of NEAR over a guarded array of `size` with no terminator. */
static int wcsnlen_remaining_setup(long long size) {
    sw_bound(NEAR * sizeof(wchar_t));
    return (text = wide_guarded(size)) ? 0 : -1;
}
#ifndef SW_NO_DECL_wcsnlen
static long long wcsnlen_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcsnlen(s, NEAR) == NEAR;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsnlen_remaining = {wcsnlen_remaining_setup, NULL, wcsnlen_remaining_run, many};
#endif

/* wcsnlen, bound: the bound is the whole guarded array, which holds no terminator. */
static int wcsnlen_bound_setup(long long size) {
    sw_bound(size * (long long)sizeof(wchar_t));
    return (text = wide_guarded(size)) ? 0 : -1;
}
#ifndef SW_NO_DECL_wcsnlen
static long long wcsnlen_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < FEW; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcsnlen(s, (size_t)text_size) == (size_t)text_size;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsnlen_bound = {wcsnlen_bound_setup, NULL, wcsnlen_bound_run, few};
#endif

/* wcschr, remaining: the match 1 in, the rest of the string grows. */
static int wcschr_remaining_setup(long long size) { return wide_prefixed(size, L"x:"); }
#ifndef SW_NO_DECL_wcschr
static long long wcschr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcschr(s, L':') == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wcschr_remaining = {wcschr_remaining_setup, NULL, wcschr_remaining_run, many};
#endif

/* wcschr, distance: the match is the last character. */
static int wcschr_distance_setup(long long size) {
    if (!(text = wide(size))) return -1;
    text[size - 1] = L':';
    return 0;
}
#ifndef SW_NO_DECL_wcschr
static long long wcschr_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < FEW; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcschr(s, L':') == s + text_size - 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wcschr_distance = {wcschr_distance_setup, NULL, wcschr_distance_run, few};
#endif

/* wcsrchr, remaining: the only match 1 in; the last occurrence can only be known at the end. */
static int wcsrchr_remaining_setup(long long size) { return wide_prefixed(size, L"x:"); }
#ifndef SW_NO_DECL_wcsrchr
static long long wcsrchr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < FEW; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcsrchr(s, L':') == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsrchr_remaining = {wcsrchr_remaining_setup, NULL, wcsrchr_remaining_run, few};
#endif

/* wcsstr, remaining: a 2-character needle 1 in, the rest of the haystack grows. */
static int wcsstr_remaining_setup(long long size) { return wide_prefixed(size, L"x:;"); }
#ifndef SW_NO_DECL_wcsstr
static long long wcsstr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcsstr(s, L":;") == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsstr_remaining = {wcsstr_remaining_setup, NULL, wcsstr_remaining_run, many};
#endif

/* wcsstr, distance: the 2-character needle ends the haystack. */
static int wcsstr_distance_setup(long long size) {
    if (!(text = wide(size))) return -1;
    text[size - 2] = L':';
    text[size - 1] = L';';
    return 0;
}
#ifndef SW_NO_DECL_wcsstr
static long long wcsstr_distance_run(void) {
    long long hits = 0;
    for (int i = 0; i < FEW; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcsstr(s, L":;") == s + text_size - 2;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsstr_distance = {wcsstr_distance_setup, NULL, wcsstr_distance_run, few};
#endif

/* wcsspn, remaining: the span ends 1 in, the rest of the string grows. */
static int wcsspn_remaining_setup(long long size) { return wide_prefixed(size, L"x:"); }
#ifndef SW_NO_DECL_wcsspn
static long long wcsspn_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcsspn(s, L"x") == 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsspn_remaining = {wcsspn_remaining_setup, NULL, wcsspn_remaining_run, many};
#endif

/* wcscspn, remaining: the rejected character 1 in, the rest of the string grows. */
static int wcscspn_remaining_setup(long long size) { return wide_prefixed(size, L"x:"); }
#ifndef SW_NO_DECL_wcscspn
static long long wcscspn_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcscspn(s, L";:") == 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wcscspn_remaining = {wcscspn_remaining_setup, NULL, wcscspn_remaining_run, many};
#endif

/* wcspbrk, remaining: a character of the set 1 in, the rest of the string grows. */
static int wcspbrk_remaining_setup(long long size) { return wide_prefixed(size, L"x:"); }
#ifndef SW_NO_DECL_wcspbrk
static long long wcspbrk_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wcspbrk(s, L";:") == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wcspbrk_remaining = {wcspbrk_remaining_setup, NULL, wcspbrk_remaining_run, many};
#endif

/*
 * wcstok, remaining: a 1-character token ended by the delimiter 1 in, the rest of the string
 * grows. The call writes a terminator over the delimiter; it is put back after each call so
 * that every call sees the same string.
 */
static int wcstok_remaining_setup(long long size) { return wide_prefixed(size, L"x:"); }
#ifndef SW_NO_DECL_wcstok
static long long wcstok_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        wchar_t *s = text, *state = NULL;
        SW_OPAQUE(s);
        hits += wcstok(s, L":", &state) == s && state == s + 2;
        s[1] = L':';
    }
    return hits;
}
const struct sw_probe sw_probe_wcstok_remaining = {wcstok_remaining_setup, NULL, wcstok_remaining_run, many};
#endif

/* wcscmp, remaining: the strings differ 1 in, both grow after it. */
static int wcscmp_remaining_setup(long long size) {
    if (wide_prefixed(size, L"xa") != 0) return -1;
    other = text;
    return wide_prefixed(size, L"xb");
}
#ifndef SW_NO_DECL_wcscmp
static long long wcscmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *a = other, *b = text;
        SW_OPAQUE(a);
        hits += wcscmp(a, b) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_wcscmp_remaining = {wcscmp_remaining_setup, NULL, wcscmp_remaining_run, many};
#endif

/* wcsncmp, remaining: guarded arrays with no terminator, differing 1 in, compared up to their size. */
static int wcsncmp_remaining_setup(long long size) {
    sw_bound(size * (long long)sizeof(wchar_t));
    if (!(other = wide_guarded(size)) || !(text = wide_guarded(size))) return -1;
    other[1] = L'a';
    text[1] = L'b';
    return 0;
}
#ifndef SW_NO_DECL_wcsncmp
static long long wcsncmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *a = other, *b = text;
        SW_OPAQUE(a);
        hits += wcsncmp(a, b, (size_t)text_size) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsncmp_remaining = {wcsncmp_remaining_setup, NULL, wcsncmp_remaining_run, many};
#endif

/* wcsncmp, bound: equal guarded arrays with no terminator, compared up to their size. */
static int wcsncmp_bound_setup(long long size) {
    sw_bound(size * (long long)sizeof(wchar_t));
    return (other = wide_guarded(size)) && (text = wide_guarded(size)) ? 0 : -1;
}
#ifndef SW_NO_DECL_wcsncmp
static long long wcsncmp_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < FEW; i++) {
        const wchar_t *a = other, *b = text;
        SW_OPAQUE(a);
        hits += wcsncmp(a, b, (size_t)text_size) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_wcsncmp_bound = {wcsncmp_bound_setup, NULL, wcsncmp_bound_run, few};
#endif

/* wcsncpy, remaining: NEAR characters copied from a guarded array with no terminator. */
static int wcsncpy_remaining_setup(long long size) {
    sw_bound(NEAR * sizeof(wchar_t));
    return (text = wide_guarded(size)) ? 0 : -1;
}
#ifndef SW_NO_DECL_wcsncpy
static long long wcsncpy_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        out[NEAR - 1] = L'\0';
        hits += wcsncpy(out, s, NEAR) == out && out[NEAR - 1] == L'x';
    }
    return hits;
}
const struct sw_probe sw_probe_wcsncpy_remaining = {wcsncpy_remaining_setup, NULL, wcsncpy_remaining_run, many};
#endif

/*
 * wcsncat, remaining: NEAR characters appended to "ab" from a guarded array with no terminator;
 * the destination is cut back to "ab" after each call.
 */
static int wcsncat_remaining_setup(long long size) {
    sw_bound(NEAR * sizeof(wchar_t));
    out[0] = L'a';
    out[1] = L'b';
    return (text = wide_guarded(size)) ? 0 : -1;
}
#ifndef SW_NO_DECL_wcsncat
static long long wcsncat_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        out[2] = L'\0';
        hits += wcsncat(out, s, NEAR) == out && out[NEAR + 1] == L'x' && out[NEAR + 2] == L'\0';
    }
    return hits;
}
const struct sw_probe sw_probe_wcsncat_remaining = {wcsncat_remaining_setup, NULL, wcsncat_remaining_run, many};
#endif

/* wmemchr, remaining: the match 1 in a guarded array searched up to its size. */
static int wmemchr_remaining_setup(long long size) {
    sw_bound(size * (long long)sizeof(wchar_t));
    if (!(text = wide_guarded(size))) return -1;
    text[1] = L':';
    return 0;
}
#ifndef SW_NO_DECL_wmemchr
static long long wmemchr_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wmemchr(s, L':', (size_t)text_size) == s + 1;
    }
    return hits;
}
const struct sw_probe sw_probe_wmemchr_remaining = {wmemchr_remaining_setup, NULL, wmemchr_remaining_run, many};
#endif

/* wmemchr, bound: no match in a guarded array searched up to its size. */
static int wmemchr_bound_setup(long long size) {
    sw_bound(size * (long long)sizeof(wchar_t));
    return (text = wide_guarded(size)) ? 0 : -1;
}
#ifndef SW_NO_DECL_wmemchr
static long long wmemchr_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < FEW; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        hits += wmemchr(s, L':', (size_t)text_size) == NULL;
    }
    return hits;
}
const struct sw_probe sw_probe_wmemchr_bound = {wmemchr_bound_setup, NULL, wmemchr_bound_run, few};
#endif

/* wmemcmp, remaining: guarded arrays differing 1 in, compared up to their size. */
static int wmemcmp_remaining_setup(long long size) {
    sw_bound(size * (long long)sizeof(wchar_t));
    if (!(other = wide_guarded(size)) || !(text = wide_guarded(size))) return -1;
    other[1] = L'a';
    text[1] = L'b';
    return 0;
}
#ifndef SW_NO_DECL_wmemcmp
static long long wmemcmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *a = other, *b = text;
        SW_OPAQUE(a);
        hits += wmemcmp(a, b, (size_t)text_size) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_wmemcmp_remaining = {wmemcmp_remaining_setup, NULL, wmemcmp_remaining_run, many};
#endif

/* wmemcmp, bound: equal guarded arrays compared up to their size. */
static int wmemcmp_bound_setup(long long size) {
    sw_bound(size * (long long)sizeof(wchar_t));
    return (other = wide_guarded(size)) && (text = wide_guarded(size)) ? 0 : -1;
}
#ifndef SW_NO_DECL_wmemcmp
static long long wmemcmp_bound_run(void) {
    long long hits = 0;
    for (int i = 0; i < FEW; i++) {
        const wchar_t *a = other, *b = text;
        SW_OPAQUE(a);
        hits += wmemcmp(a, b, (size_t)text_size) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_wmemcmp_bound = {wmemcmp_bound_setup, NULL, wmemcmp_bound_run, few};
#endif

/*
 * wcscasecmp, remaining: the strings differ 1 in, both grow after it. The case of both
 * characters is chosen so that the byte order ("xa" > "XB") is the reverse of the folded one
 * ("xa" < "xb"): a call that does not fold case gives the wrong sign.
 */
static int wcscasecmp_remaining_setup(long long size) {
    if (wide_prefixed(size, L"xa") != 0) return -1;
    other = text;
    return wide_prefixed(size, L"XB");
}
#ifndef SW_NO_DECL_wcscasecmp
static long long wcscasecmp_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *a = other, *b = text;
        SW_OPAQUE(a);
        hits += wcscasecmp(a, b) < 0;
    }
    return hits;
}
const struct sw_probe sw_probe_wcscasecmp_remaining = {wcscasecmp_remaining_setup, NULL, wcscasecmp_remaining_run, many};
#endif

/* wcstol, remaining: a 5-digit number, then the rest of the string grows. */
static int wcstol_remaining_setup(long long size) { return wide_prefixed(size, L"12345 "); }
#ifndef SW_NO_DECL_wcstol
static long long wcstol_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        wchar_t *end;
        SW_OPAQUE(s);
        hits += wcstol(s, &end, 10) == 12345 && end == s + 5;
    }
    return hits;
}
const struct sw_probe sw_probe_wcstol_remaining = {wcstol_remaining_setup, NULL, wcstol_remaining_run, many};
#endif

/* wcstod, remaining: "1.5", then the rest of the string grows. */
static int wcstod_remaining_setup(long long size) { return wide_prefixed(size, L"1.5 "); }
#ifndef SW_NO_DECL_wcstod
static long long wcstod_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        wchar_t *end;
        SW_OPAQUE(s);
        hits += wcstod(s, &end) == 1.5 && end == s + 3;
    }
    return hits;
}
const struct sw_probe sw_probe_wcstod_remaining = {wcstod_remaining_setup, NULL, wcstod_remaining_run, many};
#endif

/* swscanf, remaining: "%d" of a 5-digit number, then the rest of the string grows. */
static int swscanf_remaining_setup(long long size) { return wide_prefixed(size, L"12345 "); }
#ifndef SW_NO_DECL_swscanf
static long long swscanf_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        int v = 0;
        SW_OPAQUE(s);
        hits += swscanf(s, L"%d", &v) == 1 && v == 12345;
    }
    return hits;
}
const struct sw_probe sw_probe_swscanf_remaining = {swscanf_remaining_setup, NULL, swscanf_remaining_run, many};
#endif

/* wcstombs, remaining: NEAR characters converted, the rest of the wide string grows. */
static int wcstombs_remaining_setup(long long size) { return (text = wide(size)) ? 0 : -1; }
#ifndef SW_NO_DECL_wcstombs
static long long wcstombs_remaining_run(void) {
    long long hits = 0;
    char mb[NEAR];
    for (int i = 0; i < MANY; i++) {
        const wchar_t *s = text;
        SW_OPAQUE(s);
        mb[NEAR - 1] = '\0';
        hits += wcstombs(mb, s, NEAR) == NEAR && mb[NEAR - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_wcstombs_remaining = {wcstombs_remaining_setup, NULL, wcstombs_remaining_run, many};
#endif

/* `size` bytes of 'x'; with `terminated`, a terminator after them, else guarded with none. */
static int narrow(long long size, int terminated) {
    bytes = terminated ? malloc((size_t)size + 1) : sw_guarded((size_t)size);
    if (!bytes) return -1;
    memset(bytes, 'x', (size_t)size);
    if (terminated) bytes[size] = '\0';
    text_size = size;
    return 0;
}

/* mbstowcs, remaining: NEAR characters converted, the rest of the multibyte string grows. */
static int mbstowcs_remaining_setup(long long size) { return narrow(size, 1); }
#ifndef SW_NO_DECL_mbstowcs
static long long mbstowcs_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const char *s = bytes;
        SW_OPAQUE(s);
        out[NEAR - 1] = L'\0';
        hits += mbstowcs(out, s, NEAR) == NEAR && out[NEAR - 1] == L'x';
    }
    return hits;
}
const struct sw_probe sw_probe_mbstowcs_remaining = {mbstowcs_remaining_setup, NULL, mbstowcs_remaining_run, many};
#endif

/*
 * mbrtowc, remaining: one character decoded from a guarded array with no terminator, given the
 * whole array as its bound, as a loop over a buffer passes what is left of it.
 */
static int mbrtowc_remaining_setup(long long size) {
    sw_bound(size);
    return narrow(size, 0);
}
#ifndef SW_NO_DECL_mbrtowc
static long long mbrtowc_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const char *s = bytes;
        wchar_t wc = 0;
        mbstate_t state;
        memset(&state, 0, sizeof state);
        SW_OPAQUE(s);
        hits += mbrtowc(&wc, s, (size_t)text_size, &state) == 1 && wc == L'x';
    }
    return hits;
}
const struct sw_probe sw_probe_mbrtowc_remaining = {mbrtowc_remaining_setup, NULL, mbrtowc_remaining_run, many};
#endif

/* mbrlen, remaining: as mbrtowc's, the length of one character in a guarded array. */
static int mbrlen_remaining_setup(long long size) {
    sw_bound(size);
    return narrow(size, 0);
}
#ifndef SW_NO_DECL_mbrlen
static long long mbrlen_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < MANY; i++) {
        const char *s = bytes;
        mbstate_t state;
        memset(&state, 0, sizeof state);
        SW_OPAQUE(s);
        hits += mbrlen(s, (size_t)text_size, &state) == 1;
    }
    return hits;
}
const struct sw_probe sw_probe_mbrlen_remaining = {mbrlen_remaining_setup, NULL, mbrlen_remaining_run, many};
#endif

#endif /* SW_NO_WCHAR_H */
