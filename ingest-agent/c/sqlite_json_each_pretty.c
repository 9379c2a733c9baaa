/* Insert N JSON records from one JSON array document through json_each, written pretty, with
 * newlines and 2-space indentation, as JSON.stringify(v, null, 2) writes it. */
#include "slopewatch.h"
#include "sqlite_json.h"

static char *document;

int sw_setup(long long size) {
    record_count = size;
    document = json_array_document(JSON_PRETTY, size, 0);
    sw_meta("sqlite_version", sqlite3_libversion());
    return 0;
}

long long sw_run(void) { return insert_json_each(document); }
