/* Insert N JSON records from one JSON array document through json_each, in one statement. */
#include "slopewatch.h"
#include "sqlite_records.h"

static char *document;

int sw_setup(long long size) {
    record_count = size;
    size_t cap = (size_t)size * 80 + 16, used = 0;
    document = malloc(cap);
    if (!document) return -1;
    document[used++] = '[';
    for (long long i = 0; i < size; i++) {
        if (i) document[used++] = ',';
        used += (size_t)record_format(document + used, cap - used, i);
    }
    document[used++] = ']';
    document[used] = '\0';
    sw_meta("sqlite_version", sqlite3_libversion());
    return 0;
}

long long sw_run(void) {
    sqlite3_stmt *insert;
    exec_sql("BEGIN");
    if (sqlite3_prepare_v2(db, "INSERT INTO records (body) SELECT value FROM json_each(?1)", -1, &insert, NULL)
        != SQLITE_OK)
        die_sqlite("prepare");
    sqlite3_bind_text(insert, 1, document, -1, SQLITE_STATIC);
    if (sqlite3_step(insert) != SQLITE_DONE) die_sqlite("insert");
    long long inserted = sqlite3_changes(db);
    sqlite3_finalize(insert);
    exec_sql("COMMIT");
    return inserted;
}
