/*
 * state_dict.c - a state_dict's keys to the fields they are (state_dict.h).
 */
#include "server/json/state_dict.h"

#include "core/tensor.h"
#include "server/json/parse_json.h"

#include <stdio.h>
#include <string.h>

/* The row whose name key ends with, after a dot or as the whole key, or
 * -1; *prefix_len is then the length of what comes before it. */
static int row_of_key(const char *key, size_t *prefix_len)
{
    size_t len = strlen(key);
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        if (!(api_schema[f].groups & SCHEMA_STATE_DICT_KEY))
            continue;
        size_t name_len = strlen(api_schema[f].name);
        if (name_len > len ||
            strcmp(key + len - name_len, api_schema[f].name) != 0)
            continue;
        if (name_len < len && key[len - name_len - 1] != '.')
            continue;
        *prefix_len = len - name_len;
        return f;
    }
    return -1;
}

/* "in_proj_weight, in_proj_bias, ...": the keys a state_dict may hold. */
static void key_names(char out[SCHEMA_LIST_MAX])
{
    size_t len = 0;
    out[0] = '\0';
    for (int f = 0; f < API_FIELD_COUNT; f++)
        if (api_schema[f].groups & SCHEMA_STATE_DICT_KEY) {
            int wrote = snprintf(out + len, SCHEMA_LIST_MAX - len, "%s%s",
                                 len ? ", " : "", api_schema[f].name);
            if (wrote < 0 || (size_t)wrote >= SCHEMA_LIST_MAX - len)
                break;
            len += (size_t)wrote;
        }
}

/* "/state_dict/<key>" into out (just "/state_dict" when the key does not
 * fit a pointer). */
static const char *key_pointer(const char *key, char out[CODEC_POINTER_MAX])
{
    codec_pointer(out, api_schema[API_STATE_DICT].name, NULL, 0);
    size_t len = strlen(out);
    if (!codec_pointer_append(out, CODEC_POINTER_MAX, key))
        out[len] = '\0';
    return out;
}

/* An error at /<key>/... from parsing the key's tensor, moved under
 * /state_dict. */
static void under_state_dict(codec_error *err)
{
    char moved[CODEC_POINTER_MAX];
    int wrote = snprintf(moved, sizeof moved, "/%s%s",
                         api_schema[API_STATE_DICT].name, err->pointer);
    if (wrote < 0 || (size_t)wrote >= sizeof moved)
        codec_pointer(moved, api_schema[API_STATE_DICT].name, NULL, 0);
    memcpy(err->pointer, moved, sizeof moved);
}

/* Numbers left of max_elements after the tensors parsed so far. */
static size_t elements_left(const api_fields *fields, size_t max_elements)
{
    size_t used = 0;
    for (int f = 0; f < API_FIELD_COUNT; f++)
        if (fields->tensor[f].present)
            used += schema_element_count(&fields->tensor[f]);
    return used < max_elements ? max_elements - used : 0;
}

bool state_dict_take(json_t *envelope, size_t max_elements, api_fields *fields,
                     state_dict_keys *keys, codec_error *err)
{
    memset(keys, 0, sizeof *keys);
    json_t *dict = json_object_get(envelope, api_schema[API_STATE_DICT].name);
    char ptr[CODEC_POINTER_MAX];
    if (!dict)
        return true;
    if (!json_is_object(dict))
        return codec_fail(err, ERR_WRONG_TYPE,
                          schema_pointer(API_STATE_DICT, ptr),
                          "state_dict must be an object of tensors, as "
                          "module.state_dict() holds them");
    int dtype =
        schema_choice_of(API_DTYPE, json_string_value(json_object_get(
                                        envelope, api_schema[API_DTYPE].name)));
    size_t elem = tensor_dtype_size(dtype < 0 ? TENSOR_FLOAT64 : dtype);
    size_t budget = elements_left(fields, max_elements);
    const char *key, *first = NULL;
    size_t first_len = 0;
    json_t *value;
    json_object_foreach(dict, key, value)
    {
        size_t prefix_len;
        int f = row_of_key(key, &prefix_len);
        key_pointer(key, ptr);
        if (f < 0) {
            char names[SCHEMA_LIST_MAX];
            key_names(names);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "\"%.64s\" is not a key of "
                              "nn.MultiheadAttention's state_dict (%s, under "
                              "one prefix)",
                              key, names);
        }
        if (!first) {
            first = key;
            first_len = prefix_len;
        } else if (prefix_len != first_len ||
                   strncmp(key, first, prefix_len) != 0) {
            return codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                              "state_dict holds the keys of more than one "
                              "module: under \"%.*s\" and \"%.*s\"; send one "
                              "module's",
                              (int)(first_len > 64 ? 64 : first_len), first,
                              (int)(prefix_len > 64 ? 64 : prefix_len), key);
        }
        if (fields->tensor[f].present)
            return codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                              "%s is given both in state_dict and as a "
                              "field; send it once",
                              api_schema[f].name);
        schema_field spec = api_schema[f];
        spec.name = key; /* errors point at the key as sent */
        if (!parse_json_tensor(value, &spec, &fields->tensor[f], elem, &budget,
                               err)) {
            under_state_dict(err);
            return false;
        }
        keys->key[f] = key;
    }
    return true;
}

void state_dict_repoint(const state_dict_keys *keys, codec_error *err)
{
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        if (!keys->key[f])
            continue;
        char field[CODEC_POINTER_MAX];
        schema_pointer((api_field)f, field);
        size_t len = strlen(field);
        if (strncmp(err->pointer, field, len) != 0 ||
            (err->pointer[len] != '\0' && err->pointer[len] != '/'))
            continue;
        char moved[CODEC_POINTER_MAX];
        key_pointer(keys->key[f], moved);
        size_t at = strlen(moved);
        if (at + strlen(err->pointer + len) < sizeof moved)
            strcpy(moved + at, err->pointer + len);
        memcpy(err->pointer, moved, sizeof moved);
        return;
    }
}
