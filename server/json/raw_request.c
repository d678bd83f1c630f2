#include "server/json/raw_request.h"

#include <stdlib.h>
#include <string.h>

const raw_field_spec raw_field_specs[RAW_TENSOR_COUNT] = {
    [RAW_X] = {"x", 2, 2, RAW_LEAF_NUMBER},
    [RAW_CONTEXT] = {"context", 2, 2, RAW_LEAF_NUMBER},
    [RAW_W_Q] = {"w_q", 2, 3, RAW_LEAF_NUMBER},
    [RAW_W_K] = {"w_k", 2, 3, RAW_LEAF_NUMBER},
    [RAW_W_V] = {"w_v", 2, 3, RAW_LEAF_NUMBER},
    [RAW_W_O] = {"w_o", 2, 2, RAW_LEAF_NUMBER},
    [RAW_MASK] = {"mask", 2, 2, RAW_LEAF_EITHER},
    [RAW_KEY_PADDING] = {"key_padding", 1, 1, RAW_LEAF_BOOL},
};

const char *const raw_known_fields[] = {
    "x",        "context", "w_q",         "w_k",       "w_v",
    "w_o",      "mask",    "key_padding", "num_heads", "scale",
    "dtype",    "return",  "causal",      "tokens",    "context_tokens",
    "encoding",
};
const size_t raw_known_field_count =
    sizeof raw_known_fields / sizeof *raw_known_fields;

int raw_field_of(const char *name)
{
    for (int i = 0; i < RAW_TENSOR_COUNT; i++)
        if (strcmp(raw_field_specs[i].name, name) == 0)
            return i;
    return -1;
}

bool raw_field_known(const char *name)
{
    for (size_t i = 0; i < raw_known_field_count; i++)
        if (strcmp(raw_known_fields[i], name) == 0)
            return true;
    return false;
}

void raw_request_free(raw_request *raw)
{
    for (int i = 0; i < RAW_TENSOR_COUNT; i++)
        free(raw->tensor[i].data);
    json_decref(raw->envelope);
    memset(raw, 0, sizeof *raw);
}
