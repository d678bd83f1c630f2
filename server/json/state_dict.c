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

/* The attention modules whose keys dict holds: the prefixes ("" or
 * "layers.0.self_attn.") under which a key gives W_q (in_proj_weight or
 * q_proj_weight), at most STATE_DICT_MODULES_MAX of them kept, all
 * counted. */
#define STATE_DICT_MODULES_MAX 8

typedef struct {
    const char *key[STATE_DICT_MODULES_MAX]; /* a key under each prefix */
    size_t len[STATE_DICT_MODULES_MAX];      /* each prefix's length   */
    size_t count;
} modules_found;

static void find_modules(json_t *dict, modules_found *found)
{
    memset(found, 0, sizeof *found);
    const char *key;
    json_t *value;
    json_object_foreach(dict, key, value)
    {
        size_t len;
        int f = row_of_key(key, &len);
        if (f != API_IN_PROJ_WEIGHT && f != API_Q_PROJ_WEIGHT)
            continue;
        size_t i = 0;
        while (i < found->count && i < STATE_DICT_MODULES_MAX &&
               !(found->len[i] == len && strncmp(found->key[i], key, len) == 0))
            i++;
        if (i < found->count)
            continue; /* in_proj_weight and q_proj_weight of one module */
        if (i < STATE_DICT_MODULES_MAX) {
            found->key[i] = key;
            found->len[i] = len;
        }
        found->count++;
    }
}

/* "\"layers.0.self_attn\", \"layers.1.self_attn\"" (each prefix without
 * its dot; the module's own state_dict is ""). */
static void module_names(const modules_found *found, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < found->count && i < STATE_DICT_MODULES_MAX; i++) {
        int n = (int)(found->len[i] ? found->len[i] - 1 : 0);
        int wrote = snprintf(out + len, size - len, "%s\"%.*s\"", i ? ", " : "",
                             n > 64 ? 64 : n, found->key[i]);
        if (wrote < 0 || (size_t)wrote >= size - len)
            break;
        len += (size_t)wrote;
    }
    if (found->count > STATE_DICT_MODULES_MAX && len + 6 < size)
        strcpy(out + len, ", ...");
}

/* The prefix whose keys are taken: the module named by "module", else the
 * one attention module dict holds; NULL with err set when "module" names
 * none, or names no module of several. *len is its length.  A state_dict
 * with no attention module (say out_proj.weight alone) keeps the rule of
 * one module: the prefix of its first key (state_dict_take refuses a key
 * under another). */
static const char *pick_module(json_t *envelope, json_t *dict, size_t *len,
                               bool *found_one, codec_error *err)
{
    modules_found found;
    find_modules(dict, &found);
    *found_one = found.count > 0;
    char names[640], ptr[CODEC_POINTER_MAX];
    module_names(&found, names, sizeof names);
    schema_pointer(API_MODULE, ptr);
    json_t *named = json_object_get(envelope, api_schema[API_MODULE].name);
    if (json_is_string(named)) {
        const char *module = json_string_value(named);
        size_t want = strlen(module);
        if (want && module[want - 1] == '.')
            want--;
        for (size_t i = 0; i < found.count && i < STATE_DICT_MODULES_MAX; i++)
            if (found.len[i] == (want ? want + 1 : 0) &&
                strncmp(found.key[i], module, want) == 0) {
                *len = found.len[i];
                return found.key[i];
            }
        return codec_fail(err, ERR_INVALID_MODULE, ptr,
                          "module \"%.64s\" is no attention module of the "
                          "state_dict (a module whose in_proj_weight or "
                          "q_proj_weight it holds); %s%s",
                          module,
                          found.count ? "its attention modules are "
                                      : "it holds none",
                          names),
               NULL;
    }
    if (found.count > 1)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "state_dict holds %zu attention modules, %s: name "
                          "the one to compute with \"module\"",
                          found.count, names),
               NULL;
    if (found.count == 1) {
        *len = found.len[0];
        return found.key[0];
    }
    void *iter = json_object_iter(dict);
    const char *first = iter ? json_object_iter_key(iter) : "";
    if (row_of_key(first, len) < 0)
        *len = 0;
    return first;
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
    if (!dict &&
        json_is_string(json_object_get(envelope, api_schema[API_MODULE].name)))
        return codec_fail(err, ERR_MISSING_FIELD,
                          schema_pointer(API_STATE_DICT, ptr),
                          "module names an attention module of state_dict, "
                          "which is absent");
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
    api_wire wire = dtype < 0 ? API_WIRE_FLOAT64 : (api_wire)dtype;
    size_t budget = elements_left(fields, max_elements);
    size_t prefix_len;
    bool found_one;
    const char *prefix =
        pick_module(envelope, dict, &prefix_len, &found_one, err);
    if (!prefix)
        return false;
    const char *key;
    json_t *value;
    json_object_foreach(dict, key, value)
    {
        size_t len;
        int f = row_of_key(key, &len);
        key_pointer(key, ptr);
        bool under = strncmp(key, prefix, prefix_len) == 0 &&
                     (f < 0 || len == prefix_len);
        if (!under && found_one)
            continue; /* another module's key */
        if (f < 0) {
            char names[SCHEMA_LIST_MAX];
            key_names(names);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "\"%.64s\" is not a key of "
                              "nn.MultiheadAttention's state_dict (%s, under "
                              "one prefix)",
                              key, names);
        }
        if (!under)
            return codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                              "state_dict holds the keys of more than one "
                              "module: under \"%.*s\" and \"%.*s\"; send one "
                              "module's",
                              (int)(prefix_len > 64 ? 64 : prefix_len), prefix,
                              (int)(len > 64 ? 64 : len), key);
        if (fields->tensor[f].present)
            return codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                              "%s is given both in state_dict and as a "
                              "field; send it once",
                              api_schema[f].name);
        schema_field spec = api_schema[f];
        spec.name = key; /* errors point at the key as sent */
        if (!parse_json_tensor(value, &spec, &fields->tensor[f], wire, &budget,
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
