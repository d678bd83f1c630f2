#include "server/json/raw_request.h"

void raw_request_free(raw_request *raw)
{
    api_fields_free(&raw->fields); /* which also empties the fields */
    json_decref(raw->envelope);
    /* not a memset of the whole: the fields are some 8 KB, cleared once
     * above, and a lesson-sized request is freed on the event thread */
    raw->envelope = NULL;
    raw->whole_unsure = false;
}
