/* Probes of <stdlib.h>'s number conversions (and <inttypes.h>'s strtoimax): see catalogue.def and stdlib.def. */
#include "contracts.h"

/* Calls per repetition of the remaining probes, the same at every size. */
#define CALLS 256
/* Calls per repetition of strtod's digits probe, whose one call reads the whole string. */
#define DIGITS_CALLS 4

static char *text;
static long long text_size;

static long long calls(void) { return CALLS; }
static long long digits_calls(void) { return DIGITS_CALLS; }

/*
 * `size` bytes of `token` repeated, as in a file of numbers, and a terminator: the first
 * conversion stops at the first blank while the rest of the string grows.
 */
static int tokens(long long size, const char *token) {
    size_t len = strlen(token);
    text = malloc((size_t)size + 1);
    if (!text) return -1;
    for (long long i = 0; i < size; i++) text[i] = token[i % (long long)len];
    text[size] = '\0';
    text_size = size;
    return 0;
}
static int integers(long long size) { return tokens(size, "12345 "); }
static int decimals(long long size) { return tokens(size, "1.5 "); }

#ifndef SW_NO_DECL_strtol
/* strtol, remaining: a 5-digit number, then the rest of the string grows. */
static long long strtol_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtol(s, &end, 10) == 12345 && end == s + 5;
    }
    return hits;
}
const struct sw_probe sw_probe_strtol_remaining = {integers, NULL, strtol_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_strtoll
/* strtoll, remaining: a 5-digit number, then the rest of the string grows. */
static long long strtoll_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtoll(s, &end, 10) == 12345 && end == s + 5;
    }
    return hits;
}
const struct sw_probe sw_probe_strtoll_remaining = {integers, NULL, strtoll_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_strtoul
/* strtoul, remaining: a 5-digit number, then the rest of the string grows. */
static long long strtoul_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtoul(s, &end, 10) == 12345 && end == s + 5;
    }
    return hits;
}
const struct sw_probe sw_probe_strtoul_remaining = {integers, NULL, strtoul_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_strtoull
/* strtoull, remaining: a 5-digit number, then the rest of the string grows. */
static long long strtoull_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtoull(s, &end, 10) == 12345 && end == s + 5;
    }
    return hits;
}
const struct sw_probe sw_probe_strtoull_remaining = {integers, NULL, strtoull_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_strtoimax
/* strtoimax, remaining: a 5-digit number, then the rest of the string grows. */
static long long strtoimax_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtoimax(s, &end, 10) == 12345 && end == s + 5;
    }
    return hits;
}
const struct sw_probe sw_probe_strtoimax_remaining = {integers, NULL, strtoimax_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_atoi
/* atoi, remaining: a 5-digit number, then the rest of the string grows. */
static long long atoi_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += atoi(s) == 12345;
    }
    return hits;
}
const struct sw_probe sw_probe_atoi_remaining = {integers, NULL, atoi_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_atol
/* atol, remaining: a 5-digit number, then the rest of the string grows. */
static long long atol_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += atol(s) == 12345;
    }
    return hits;
}
const struct sw_probe sw_probe_atol_remaining = {integers, NULL, atol_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_atoll
/* atoll, remaining: a 5-digit number, then the rest of the string grows. */
static long long atoll_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += atoll(s) == 12345;
    }
    return hits;
}
const struct sw_probe sw_probe_atoll_remaining = {integers, NULL, atoll_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_strtod
/* strtod, remaining: "1.5", then the rest of the string grows. */
static long long strtod_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtod(s, &end) == 1.5 && end == s + 3;
    }
    return hits;
}
const struct sw_probe sw_probe_strtod_remaining = {decimals, NULL, strtod_remaining_run, calls};
#endif

/*
 * strtod, digits: "1." and then `size` - 2 digits "0123456789..." that all belong to the number.
 * The digits past the 17th do not move the nearest double (1.0123456789012345678...), which the
 * compiler's own conversion of a 40-digit literal gives; all of them must still be consumed.
 */
static int strtod_digits_setup(long long size) {
    if (size < 42) return -1; /* "1." and the literal's 40 digits, or the value differs */
    text = malloc((size_t)size + 1);
    if (!text) return -1;
    text[0] = '1';
    text[1] = '.';
    for (long long i = 2; i < size; i++) text[i] = (char)('0' + (i - 2) % 10);
    text[size] = '\0';
    text_size = size;
    return 0;
}
#ifndef SW_NO_DECL_strtod
static long long strtod_digits_run(void) {
    long long hits = 0;
    for (int i = 0; i < DIGITS_CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtod(s, &end) == 1.0123456789012345678901234567890123456789 && end == s + text_size;
    }
    return hits;
}
const struct sw_probe sw_probe_strtod_digits = {strtod_digits_setup, NULL, strtod_digits_run, digits_calls};
#endif

#ifndef SW_NO_DECL_strtof
/* strtof, remaining: "1.5", then the rest of the string grows. */
static long long strtof_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtof(s, &end) == 1.5f && end == s + 3;
    }
    return hits;
}
const struct sw_probe sw_probe_strtof_remaining = {decimals, NULL, strtof_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_strtold
/* strtold, remaining: "1.5", then the rest of the string grows. */
static long long strtold_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char *end;
        SW_OPAQUE(s);
        hits += strtold(s, &end) == 1.5L && end == s + 3;
    }
    return hits;
}
const struct sw_probe sw_probe_strtold_remaining = {decimals, NULL, strtold_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_atof
/* atof, remaining: "1.5", then the rest of the string grows. */
static long long atof_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += atof(s) == 1.5;
    }
    return hits;
}
const struct sw_probe sw_probe_atof_remaining = {decimals, NULL, atof_remaining_run, calls};
#endif
