/* Search one long text, a service's log of N lines stored in one row, with LIKE '%...%': after
 * the '%', SQLite finds each candidate for the pattern's first letter with strcspn on the rest of
 * the text (patternCompare). The line searched for is the last. */
#include "slopewatch.h"
#include "sqlite_json.h"

static char *text;

int sw_setup(long long size) {
    record_count = size;
    struct json_out o = {0};
    for (long long i = 0; i < size; i++)
        out_printf(&o, "2026-12-02T13:%02lld:%02lld.%03lldZ INFO http request id=%lld path=/api/items/%lld status=%d\n",
                   i / 3600 % 60, i / 60 % 60, i % 1000, i, i % 97, i + 1 == size ? 503 : 200);
    text = o.buf;
    sw_meta("sqlite_version", sqlite3_libversion());
    return 0;
}

long long sw_run(void) {
    sqlite3_stmt *insert;
    if (sqlite3_prepare_v2(db, "INSERT INTO records (body) VALUES (?1)", -1, &insert, NULL) != SQLITE_OK)
        die_sqlite("prepare");
    sqlite3_bind_text(insert, 1, text, -1, SQLITE_STATIC);
    if (sqlite3_step(insert) != SQLITE_DONE) die_sqlite("insert");
    sqlite3_finalize(insert);
    long long found = query_integer("SELECT count(*) FROM records WHERE body LIKE '%status=503%'", NULL);
    return found * record_count;
}
