/*
 * The records both SQLite workloads insert: {"id":N,"name":"user-N","tags":["t1","tN"]}, the
 * JSON shape of the original report, generated untimed before the measured loop.
 */
#ifndef SLOPEWATCH_SQLITE_RECORDS_H
#define SLOPEWATCH_SQLITE_RECORDS_H

#include "sqlite3.h"

static long long record_count;
static sqlite3 *db;

static int record_format(char *out, size_t cap, long long i) {
    return snprintf(out, cap, "{\"id\":%lld,\"name\":\"user-%lld\",\"tags\":[\"t%lld\",\"tag-%lld\"]}",
                    i, i, i % 7, i % 13);
}

static void die_sqlite(const char *what) {
    fprintf(stderr, "%s: %s\n", what, db ? sqlite3_errmsg(db) : "no database");
    exit(4);
}

static void exec_sql(const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) die_sqlite(sql);
}

/* A fresh in-memory database per repetition keeps disk and page-cache noise out of the slope. */
void sw_before(void) {
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) die_sqlite("open");
    exec_sql("CREATE TABLE records (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
}

void sw_after(void) {
    sqlite3_close(db);
    db = NULL;
}

long long sw_expected(void) { return record_count; }

#endif
