/*
 * The text the string workloads walk: a NUL-terminated buffer of exactly SIZE bytes made of a
 * repeated unit (a few filler bytes and a delimiter), the tail padded with filler so the number
 * of delimiters is known without calling any string function.
 */
#ifndef SLOPEWATCH_TEXT_H
#define SLOPEWATCH_TEXT_H

static char *text;
static long long text_len;
static long long text_units;

static int text_fill(long long size, const char *unit, char pad) {
    long long unit_len = 0;
    while (unit[unit_len]) unit_len++;
    text = malloc((size_t)size + 1);
    if (!text) return -1;
    text_len = size;
    text_units = size / unit_len;
    for (long long i = 0; i < text_units * unit_len; i++) text[i] = unit[i % unit_len];
    for (long long i = text_units * unit_len; i < size; i++) text[i] = pad;
    text[size] = '\0';
    return 0;
}

void sw_before(void) {}
void sw_after(void) {}
long long sw_expected(void) { return text_units; }

#endif
