/* Probes of <stdlib.h>'s qsort and bsearch: see catalogue.def and sort.def. */
#include "contracts.h"
#include <sys/mman.h>

/* Lookups per repetition of the bsearch probe, the same at every size. */
#define LOOKUPS 4096

static int *pristine; /* qsort's input, copied back before each repetition */
static int *items;    /* what qsort sorts */
static int *sorted;   /* what qsort must leave in items */
static int *keys;     /* what bsearch looks up */
static long long count;

static int compare(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Room for `size` items in pristine, items and sorted. */
static int allocate(long long size) {
    count = size;
    pristine = malloc((size_t)size * sizeof *pristine);
    items = malloc((size_t)size * sizeof *items);
    sorted = malloc((size_t)size * sizeof *sorted);
    return pristine && items && sorted ? 0 : -1;
}

/* Fills sorted by counting pristine's values, all in [0, count), so that no sort is trusted. */
static int count_out(void) {
    long long *seen = calloc((size_t)count, sizeof *seen);
    if (!seen) return -1;
    for (long long i = 0; i < count; i++) seen[pristine[i]]++;
    for (long long v = 0, k = 0; v < count; v++)
        while (seen[v]--) sorted[k++] = (int)v;
    free(seen);
    return 0;
}

static void restore(void) { memcpy(items, pristine, (size_t)count * sizeof *items); }

/* One qsort of the restored input; every item in its place is a hit. */
static long long qsort_run(void) {
    qsort(items, (size_t)count, sizeof *items, compare);
    long long hits = 0;
    for (long long i = 0; i < count; i++) hits += items[i] == sorted[i];
    return hits;
}
static long long all_items(void) { return count; }

/* qsort, sorted: the input already in order. */
static int qsort_sorted_setup(long long size) {
    if (allocate(size) != 0) return -1;
    for (long long i = 0; i < size; i++) pristine[i] = (int)i;
    return count_out();
}
const struct sw_probe sw_probe_qsort_sorted = {qsort_sorted_setup, restore, qsort_run, all_items};

/* qsort, reversed: the input in descending order. */
static int qsort_reversed_setup(long long size) {
    if (allocate(size) != 0) return -1;
    for (long long i = 0; i < size; i++) pristine[i] = (int)(size - 1 - i);
    return count_out();
}
const struct sw_probe sw_probe_qsort_reversed = {qsort_reversed_setup, restore, qsort_run, all_items};

/*
 * qsort, equal: 8 distinct keys, shuffled, so that each key is shared by n/8 items; a partition
 * that does not split runs of equal keys makes this O(n²).
 */
static int qsort_equal_setup(long long size) {
    if (allocate(size) != 0) return -1;
    for (long long i = 0; i < size; i++) pristine[i] = (int)(i % 8);
    uint64_t state = 0x9E3779B97F4A7C15u; /* xorshift64: the same shuffle on every run */
    for (long long i = size - 1; i > 0; i--) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        long long j = (long long)(state % (uint64_t)(i + 1));
        int t = pristine[i];
        pristine[i] = pristine[j];
        pristine[j] = t;
    }
    return count_out();
}
const struct sw_probe sw_probe_qsort_equal = {qsort_equal_setup, restore, qsort_run, all_items};

/*
 * qsort, adversarial: McIlroy's "A Killer Adversary for Quicksort" (1999). In set-up, qsort
 * sorts the indices 0..n-1 with a comparator that gives each item a value only when it must:
 * all start as "gas" (greater than any value given); of two gas items compared, one is frozen
 * to the next smallest value, the likely pivot (the gas item compared last) when it is one of
 * them, so that each partition splits off almost nothing. The values so given are an input on
 * which this libc's qsort, being deterministic, makes the same choices again: quadratic for a
 * quicksort, n log n for a sort that bounds its worst case.
 */
static int *adversary_value;
static int adversary_gas, adversary_solid, adversary_candidate;

static int adversary_compare(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    int *value = adversary_value;
    if (value[x] == adversary_gas && value[y] == adversary_gas)
        value[x == adversary_candidate ? x : y] = adversary_solid++;
    if (value[x] == adversary_gas)
        adversary_candidate = x;
    else if (value[y] == adversary_gas)
        adversary_candidate = y;
    return compare(&value[x], &value[y]);
}

static int qsort_adversarial_setup(long long size) {
    if (allocate(size) != 0) return -1;
    adversary_value = pristine;
    adversary_gas = (int)size - 1;
    adversary_solid = adversary_candidate = 0;
    for (long long i = 0; i < size; i++) {
        items[i] = (int)i;
        pristine[i] = adversary_gas;
    }
    qsort(items, (size_t)size, sizeof *items, adversary_compare);
    return count_out();
}
const struct sw_probe sw_probe_qsort_adversarial = {qsort_adversarial_setup, restore, qsort_run, all_items};

/*
 * bsearch, elements: the even numbers 0, 2, .., 2(n-1); each lookup is of an even key (present)
 * or an odd one (absent), at positions spread over the array.
 *
 * The array is never read: an element's value is twice its index, which the comparison computes
 * from the element's address. Its n ints are a mapping no one touches, so what grows with n is
 * bsearch's comparisons alone, not the cache misses of a larger array (over 2M ints read from
 * memory, a correct bsearch read as O(n) on a loaded host). A bsearch that reads the elements
 * itself finds zeros in a mapping that stays readable.
 */
static const char *virtual_base;

/*
 * glibc's <stdlib.h> defines bsearch inline when optimizing, so a direct call would time the
 * header's copy: called through a pointer the compiler cannot see through, it is the libc's own
 * (or an archive's linked ahead of it) that is measured.
 */
typedef void *bsearch_fn(const void *, const void *, size_t, size_t, int (*)(const void *, const void *));
static bsearch_fn *const linked_bsearch = bsearch;

static int compare_virtual(const void *key, const void *element) {
    long long x = *(const int *)key, y = 2 * (((const char *)element - virtual_base) / (long long)sizeof(int));
    return (x > y) - (x < y);
}

static int bsearch_elements_setup(long long size) {
    count = size;
    void *mapped = mmap(NULL, (size_t)size * sizeof(int), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    keys = malloc(LOOKUPS * sizeof *keys);
    if (mapped == MAP_FAILED || !keys) return -1;
    virtual_base = mapped;
    /* Positions drawn by xorshift64: spread over the array, and with no short period that a
     * branch predictor could learn at the smaller sizes (Knuth's multiplicative hash repeats
     * every n lookups, which made sizes under the lookup count cost a third as much). */
    uint64_t state = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < LOOKUPS; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        keys[i] = (int)(2 * (state % (uint64_t)size)) + (i & 1);
    }
    return 0;
}
static long long bsearch_elements_run(void) {
    long long hits = 0;
    bsearch_fn *search = linked_bsearch;
    SW_OPAQUE(search);
    for (int i = 0; i < LOOKUPS; i++) {
        const char *found = search(&keys[i], virtual_base, (size_t)count, sizeof(int), compare_virtual);
        long long at = found ? (found - virtual_base) / (long long)sizeof(int) : -1;
        hits += keys[i] % 2 == 0 ? found && 2 * at == keys[i] : found == NULL;
    }
    return hits;
}
static long long lookups(void) { return LOOKUPS; }
const struct sw_probe sw_probe_bsearch_elements = {bsearch_elements_setup, NULL, bsearch_elements_run, lookups};
