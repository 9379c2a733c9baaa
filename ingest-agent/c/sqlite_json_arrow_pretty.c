/* Read the last record's id out of a pretty-printed API answer of N records with ->>: SQLite
 * parses the whole document to answer. */
#include "slopewatch.h"
#include "sqlite_json.h"

static char *document;

int sw_setup(long long size) {
    record_count = size;
    document = json_response_document(JSON_PRETTY, size);
    sw_meta("sqlite_version", sqlite3_libversion());
    return 0;
}

long long sw_run(void) { return query_integer("SELECT (?1 ->> '$.items[#-1].id') + 1", document); }
