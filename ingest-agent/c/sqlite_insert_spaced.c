/* Insert N short JSON records one by one through json(?1), each written with a space after each
 * separator: every parse sees one record, so the parser's strspn never meets a long rest. */
#include "slopewatch.h"
#include "sqlite_json.h"

static char **records;

int sw_setup(long long size) {
    record_count = size;
    records = malloc(sizeof *records * (size_t)size);
    if (!records) return -1;
    for (long long i = 0; i < size; i++) {
        struct json_out o = {0};
        out_record(&o, JSON_SPACED, i, 0, 0);
        records[i] = o.buf;
    }
    sw_meta("sqlite_version", sqlite3_libversion());
    return 0;
}

long long sw_run(void) {
    sqlite3_stmt *insert;
    exec_sql("BEGIN");
    if (sqlite3_prepare_v2(db, "INSERT INTO records (body) VALUES (json(?1))", -1, &insert, NULL) != SQLITE_OK)
        die_sqlite("prepare");
    long long inserted = 0;
    for (long long i = 0; i < record_count; i++) {
        sqlite3_bind_text(insert, 1, records[i], -1, SQLITE_STATIC);
        if (sqlite3_step(insert) != SQLITE_DONE) die_sqlite("insert");
        sqlite3_reset(insert);
        inserted++;
    }
    sqlite3_finalize(insert);
    exec_sql("COMMIT");
    return inserted;
}
