#include "server/json/raw_request.h"

#include <string.h>

void raw_request_free(raw_request *raw)
{
    api_fields_free(&raw->fields);
    json_decref(raw->envelope);
    memset(raw, 0, sizeof *raw);
}
