/* Insert N JSON records from one compact JSON array document through json_each, each record
 * holding JSON's literals as well: "active": true or false, "manager": null. */
#include "slopewatch.h"
#include "sqlite_json.h"

static char *document;

int sw_setup(long long size) {
    record_count = size;
    document = json_array_document(JSON_COMPACT, size, 1);
    sw_meta("sqlite_version", sqlite3_libversion());
    return 0;
}

long long sw_run(void) { return insert_json_each(document); }
