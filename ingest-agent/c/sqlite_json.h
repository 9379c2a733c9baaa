/*
 * The records of sqlite_records.h written as real serializers write JSON, generated untimed
 * before the measured loop:
 *
 *   JSON_COMPACT  {"id":1,"name":"user-1",...}            JSON.stringify(v), serde_json::to_string
 *   JSON_SPACED   {"id": 1, "name": "user-1", ...}        Python's json.dumps, many loggers
 *   JSON_PRETTY   newlines and 2-space indentation       JSON.stringify(v, null, 2),
 *                                                        serde_json::to_string_pretty
 *
 * The forms differ in whitespace only, so a slope that moves between them is the JSON parser's
 * whitespace path (SQLite's jsonTranslateTextToBlob skips each run with strspn). See
 * docs/sqlite.md.
 */
#ifndef SLOPEWATCH_SQLITE_JSON_H
#define SLOPEWATCH_SQLITE_JSON_H

#include <stdarg.h>
#include "sqlite_records.h"

enum json_form { JSON_COMPACT, JSON_SPACED, JSON_PRETTY };

/* A growing NUL-terminated buffer. */
struct json_out {
    char *buf;
    size_t len, cap;
};

static inline void out_printf(struct json_out *o, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0) sw_fail("vsnprintf failed");
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        o->cap = o->cap * 2 + (size_t)n + 64;
        o->buf = realloc(o->buf, o->cap);
        if (!o->buf) sw_fail("out of memory");
    }
}

/* A newline and the indentation of `depth` levels (pretty only). */
static inline void out_indent(struct json_out *o, enum json_form form, int depth) {
    if (form == JSON_PRETTY) out_printf(o, "\n%*s", 2 * depth, "");
}

/* `{` or `[` whose members sit at `depth` + 1. */
static inline void out_open(struct json_out *o, enum json_form form, char c, int depth) {
    out_printf(o, "%c", c);
    out_indent(o, form, depth + 1);
}

/* The separator between two members at `depth` + 1. */
static inline void out_sep(struct json_out *o, enum json_form form, int depth) {
    out_printf(o, "%s", form == JSON_SPACED ? ", " : ",");
    out_indent(o, form, depth + 1);
}

static inline void out_close(struct json_out *o, enum json_form form, char c, int depth) {
    out_indent(o, form, depth);
    out_printf(o, "%c", c);
}

static inline void out_key(struct json_out *o, enum json_form form, const char *key) {
    out_printf(o, form == JSON_COMPACT ? "\"%s\":" : "\"%s\": ", key);
}

/*
 * Record i of sqlite_records.h, as an object at `depth`; with `literals`, two members more that
 * JSON's literals spell: "active" (true or false) and "manager" (null).
 */
static inline void out_record(struct json_out *o, enum json_form form, long long i, int depth, int literals) {
    out_open(o, form, '{', depth);
    out_key(o, form, "id");
    out_printf(o, "%lld", i);
    out_sep(o, form, depth);
    out_key(o, form, "name");
    out_printf(o, "\"user-%lld\"", i);
    if (literals) {
        out_sep(o, form, depth);
        out_key(o, form, "active");
        out_printf(o, "%s", i % 3 ? "true" : "false");
        out_sep(o, form, depth);
        out_key(o, form, "manager");
        out_printf(o, "%s", "null");
    }
    out_sep(o, form, depth);
    out_key(o, form, "tags");
    out_open(o, form, '[', depth + 1);
    out_printf(o, "\"t%lld\"", i % 7);
    out_sep(o, form, depth + 1);
    out_printf(o, "\"tag-%lld\"", i % 13);
    out_close(o, form, ']', depth + 1);
    out_close(o, form, '}', depth);
}

/* `[record, record, ...]`: one document of n records, as an export or a bulk request holds. */
static inline char *json_array_document(enum json_form form, long long n, int literals) {
    struct json_out o = {0};
    out_open(&o, form, '[', 0);
    for (long long i = 0; i < n; i++) {
        if (i) out_sep(&o, form, 0);
        out_record(&o, form, i, 1, literals);
    }
    out_close(&o, form, ']', 0);
    return o.buf;
}

/* `{"count": n, "items": [record, ...]}`: one document of n records, as an API answers. */
static inline char *json_response_document(enum json_form form, long long n) {
    struct json_out o = {0};
    out_open(&o, form, '{', 0);
    out_key(&o, form, "count");
    out_printf(&o, "%lld", n);
    out_sep(&o, form, 0);
    out_key(&o, form, "items");
    out_open(&o, form, '[', 1);
    for (long long i = 0; i < n; i++) {
        if (i) out_sep(&o, form, 1);
        out_record(&o, form, i, 2, 0);
    }
    out_close(&o, form, ']', 1);
    out_close(&o, form, '}', 0);
    return o.buf;
}

/* Runs one statement, with `text` bound to ?1 unless NULL, and answers its one integer. */
static inline long long query_integer(const char *sql, const char *text) {
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) die_sqlite("prepare");
    if (text) sqlite3_bind_text(q, 1, text, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW) die_sqlite("query");
    long long v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

/* Inserts every element of the array document `document` through json_each, in one statement. */
static inline long long insert_json_each(const char *document) {
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

#endif
