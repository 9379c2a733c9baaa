/* Probes of <stdio.h>'s scanning and printing: see catalogue.def and stdio.def. */
#include "contracts.h"
#include <stdarg.h>

/* Calls per repetition of the probes whose call should cost O(1), the same at every size. */
#define CALLS 256
/* Calls per repetition of snprintf's output probe, whose one call writes the whole string. */
#define OUTPUT_CALLS 16
/* The precision that bounds what "%.4s" may read, and the destination's size. */
#define PRECISION 4
#define DESTINATION 16

static char *text;
static long long text_size;
static char *dst;
static char small[DESTINATION];

static long long calls(void) { return CALLS; }
static long long output_calls(void) { return OUTPUT_CALLS; }

/* The token `integers` repeats, and its length. */
static const char token[] = "12345 ";
#define TOKEN ((long long)sizeof token - 1)

/* `size` bytes of whole "12345 " tokens, as in a file of numbers, blanks, and a terminator. */
static int integers(long long size) {
    text = malloc((size_t)size + 1);
    if (!text) return -1;
    for (long long i = 0; i < size; i++) text[i] = i < size - size % TOKEN ? token[i % TOKEN] : ' ';
    text[size] = '\0';
    text_size = size;
    return 0;
}

/* `size` bytes of 'x' with no terminator, the last against an unreadable page. */
static int guarded(long long size) {
    sw_bound(PRECISION);
    if (!(text = sw_guarded((size_t)size))) return -1;
    memset(text, 'x', (size_t)size);
    text_size = size;
    return 0;
}

/* Whether `small` holds PRECISION 'x's and a terminator; clears it for the next call. */
static int took_precision(void) {
    int ok = memcmp(small, "xxxx", PRECISION + 1) == 0;
    memset(small, 0, sizeof small);
    return ok;
}

#ifndef SW_NO_DECL_sscanf
/* sscanf, remaining: "%d" of a 5-digit number, then the rest of the buffer grows. */
static long long sscanf_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        int v = 0;
        SW_OPAQUE(s);
        hits += sscanf(s, "%d", &v) == 1 && v == 12345;
    }
    return hits;
}
const struct sw_probe sw_probe_sscanf_remaining = {integers, NULL, sscanf_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_sscanf
/* sscanf, remaining_width: "%4s", whose width bounds the field, then the rest of the buffer grows. */
static long long sscanf_remaining_width_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        char word[PRECISION + 1] = "";
        SW_OPAQUE(s);
        hits += sscanf(s, "%4s", word) == 1 && memcmp(word, "1234", PRECISION + 1) == 0;
    }
    return hits;
}
const struct sw_probe sw_probe_sscanf_remaining_width = {integers, NULL, sscanf_remaining_width_run, calls};
#endif

#ifndef SW_NO_DECL_sscanf
/*
 * sscanf, tokens: "%d%n" over the whole buffer, resuming at the count consumed, as tokenizers
 * do; one pass of the loop per repetition, whose cost should grow as the buffer does.
 */
static long long sscanf_tokens_run(void) {
    long long hits = 0;
    const char *p = text;
    int v, used;
    while (sscanf(p, "%d%n", &v, &used) == 1) {
        if (v != 12345) return -1;
        hits++;
        p += used;
    }
    return hits;
}
/* Every whole token of `integers`: the blanks after them convert nothing. */
static long long sscanf_tokens_expected(void) { return text_size / TOKEN; }
const struct sw_probe sw_probe_sscanf_tokens = {integers, NULL, sscanf_tokens_run, sscanf_tokens_expected};
#endif

#ifndef SW_NO_DECL_snprintf
/* snprintf, remaining: "%.4s" of a guarded array with no terminator, which grows after the 4. */
static long long snprintf_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += snprintf(small, sizeof small, "%.4s", s) == PRECISION && took_precision();
    }
    return hits;
}
const struct sw_probe sw_probe_snprintf_remaining = {guarded, NULL, snprintf_remaining_run, calls};
#endif

/* snprintf, output: "%s" of a string that fills the destination, both growing. */
static int snprintf_output_setup(long long size) {
    text = malloc((size_t)size + 1);
    dst = malloc((size_t)size + 1);
    if (!text || !dst) return -1;
    memset(text, 'x', (size_t)size);
    text[size] = '\0';
    text_size = size;
    return 0;
}
#ifndef SW_NO_DECL_snprintf
static long long snprintf_output_run(void) {
    long long hits = 0;
    for (int i = 0; i < OUTPUT_CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        dst[text_size - 1] = '\0';
        hits += snprintf(dst, (size_t)text_size + 1, "%s", s) == text_size && dst[text_size - 1] == 'x';
    }
    return hits;
}
const struct sw_probe sw_probe_snprintf_output = {snprintf_output_setup, NULL, snprintf_output_run, output_calls};
#endif

/* vsnprintf, as a caller's own formatting function reaches it. */
static int format(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    return r;
}

#ifndef SW_NO_DECL_vsnprintf
/* vsnprintf, remaining: "%.4s" of a guarded array with no terminator, which grows after the 4. */
static long long vsnprintf_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += format(small, sizeof small, "%.4s", s) == PRECISION && took_precision();
    }
    return hits;
}
const struct sw_probe sw_probe_vsnprintf_remaining = {guarded, NULL, vsnprintf_remaining_run, calls};
#endif

#ifndef SW_NO_DECL_sprintf
/* sprintf, remaining: "%.4s" of a guarded array with no terminator, which grows after the 4. */
static long long sprintf_remaining_run(void) {
    long long hits = 0;
    for (int i = 0; i < CALLS; i++) {
        const char *s = text;
        SW_OPAQUE(s);
        hits += sprintf(small, "%.4s", s) == PRECISION && took_precision();
    }
    return hits;
}
const struct sw_probe sw_probe_sprintf_remaining = {guarded, NULL, sprintf_remaining_run, calls};
#endif
