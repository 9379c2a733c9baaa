/* Read one value out of an API answer of N records, {"count": N, "items": [...]} written with a
 * space after each separator, with json_extract: SQLite parses the whole document to answer. */
#include "slopewatch.h"
#include "sqlite_json.h"

static char *document;

int sw_setup(long long size) {
    record_count = size;
    document = json_response_document(JSON_SPACED, size);
    sw_meta("sqlite_version", sqlite3_libversion());
    return 0;
}

long long sw_run(void) { return query_integer("SELECT json_extract(?1, '$.count')", document); }
