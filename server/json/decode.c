/*
 * decode.c - body → raw_request → api_fields → api_request.
 *
 * The body is parsed by the fast parser when it can vouch for it, else by
 * jansson, which also words every syntax and structure error (parse_json.h).
 * Then, driven by the schema (schema.h): every required field must be there,
 * and every field that is not a tensor is read by its kind.  Last, the rules
 * between fields (validate.c).
 */
#include "server/json/decode.h"

#include "server/json/decode_value.h"
#include "server/json/half.h"
#include "server/json/number_literal.h"
#include "server/json/parse_json.h"
#include "server/base/parse_budget.h"
#include "server/json/raw_request.h"
#include "server/json/state_dict.h"
#include "server/request/validate.h"
#include "server/json/whole_literals.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the small fields, by kind ----------------------------------------- */

/* The code of a value of the wrong JSON type. */
static error_code type_code(const schema_field *row)
{
    return row->type_code ? row->type_code : ERR_WRONG_TYPE;
}

static bool take_integer(json_t *v, const schema_field *row, const char *ptr,
                         const request_limits *limits, schema_value *out,
                         codec_error *err)
{
    if (!json_is_number(v))
        return codec_fail(err, type_code(row), ptr, "%s must be an integer",
                          row->name);
    double value = json_number_value(v);
    if (value != floor(value))
        return codec_fail(err, row->invalid_code, ptr,
                          "%s must be a whole number, got %g", row->name,
                          value);
    if (value < row->min)
        return codec_fail(err, row->invalid_code, ptr,
                          "%s must be at least %g, got %g", row->name, row->min,
                          value);
    if (row->limit_flag) {
        size_t limit;
        memcpy(&limit, (const char *)limits + row->limit_offset, sizeof limit);
        if (value > (double)limit)
            return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                              "%s may be at most %zu (%s)", row->name, limit,
                              row->limit_flag);
    }
    out->number = value;
    return true;
}

static bool take_number(json_t *v, const schema_field *row, const char *ptr,
                        schema_value *out, codec_error *err)
{
    if (!json_is_number(v))
        return codec_fail(err, type_code(row), ptr, "%s must be a number",
                          row->name);
    double value = json_number_value(v);
    if (row->positive && (!(value > 0) || !isfinite(value)))
        return codec_fail(err, row->invalid_code, ptr,
                          "%s must be a positive number, got %g", row->name,
                          value);
    out->number = value;
    return true;
}

/* "\"a\" (meaning) or \"b\"" for the choices of row. */
static void choice_words(const schema_field *row, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < row->choice_count && len < size; i++) {
        const schema_choice *c = &row->choices[i];
        int wrote =
            snprintf(out + len, size - len, "%s\"%s\"%s%s%s",
                     i == 0 ? "" : " or ", c->name, c->meaning ? " (" : "",
                     c->meaning ? c->meaning : "", c->meaning ? ")" : "");
        if (wrote < 0)
            break;
        len += (size_t)wrote;
    }
}

static bool take_choice(json_t *v, const schema_field *row, const char *ptr,
                        schema_value *out, codec_error *err)
{
    char words[CODEC_DETAIL_MAX / 2];
    choice_words(row, words, sizeof words);
    const char *s = json_string_value(v);
    if (!s)
        return codec_fail(err, type_code(row), ptr, "%s must be a string: %s",
                          row->name, words);
    int value = -1;
    for (size_t i = 0; i < row->choice_count && value < 0; i++)
        if (strcmp(row->choices[i].name, s) == 0)
            value = row->choices[i].value;
    if (value < 0)
        return codec_fail(err, row->invalid_code, ptr, "%s must be %s",
                          row->name, words);
    out->choice = value;
    return true;
}

static bool take_boolean(json_t *v, const schema_field *row, const char *ptr,
                         schema_value *out, codec_error *err)
{
    if (!json_is_boolean(v))
        return codec_fail(err, type_code(row), ptr, "%s must be true or false",
                          row->name);
    out->boolean = json_is_true(v);
    return true;
}

static bool take_stages(json_t *v, const schema_field *row, const char *ptr,
                        schema_value *out, codec_error *err)
{
    if (!json_is_array(v))
        return codec_fail(err, type_code(row), ptr,
                          "%s must be an array of stage names", row->name);
    out->stages = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        char item[CODEC_POINTER_MAX];
        codec_pointer(item, row->name, &i, 1);
        const char *name = json_string_value(json_array_get(v, i));
        if (!name)
            return codec_fail(err, type_code(row), item,
                              "%s must list stage names as strings", row->name);
        int s = 0;
        while (s < ATTN_STAGE_COUNT && strcmp(name, attn_stage_name(s)) != 0)
            s++;
        if (s == ATTN_STAGE_COUNT) {
            char stages[SCHEMA_LIST_MAX];
            schema_stage_list(stages);
            return codec_fail(err, row->invalid_code, item,
                              "unknown stage name; use %s", stages);
        }
        out->stages |= ATTN_WANT(s);
    }
    return true;
}

/* Labels could not be copied: past the parse's account (413, as a tree
 * that outgrows it), or out of memory. */
static bool labels_not_copied(const schema_field *row, codec_error *err)
{
    const parse_account *a = parse_account_current();
    if (!a || !a->refused)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    return codec_fail(err, ERR_LIMIT_EXCEEDED, NULL,
                      "the labels of %s would take more than the %zu bytes "
                      "of memory the body may hold while it is parsed",
                      row->name, a->limit);
}

/* A list of strings, or (for a batch) a list of lists of strings, all of
 * one length; label i of list b is lists[b][i].  A list labels n or m
 * tokens, so one longer than --max-tokens is refused before anything is
 * copied; the copies are charged to the parse's account (parse_budget.h),
 * so that a body of many short labels holds no more than it reserved. */
static bool take_labels(json_t *v, const schema_field *row, const char *ptr,
                        const request_limits *limits, schema_value *out,
                        codec_error *err)
{
    if (!json_is_array(v))
        return codec_fail(err, type_code(row), ptr,
                          "%s must be an array of strings", row->name);
    bool nested = json_is_array(json_array_get(v, 0));
    size_t lists = nested ? json_array_size(v) : 1;
    size_t per_list =
        nested ? json_array_size(json_array_get(v, 0)) : json_array_size(v);
    for (size_t b = 0; b < lists; b++) {
        json_t *list = nested ? json_array_get(v, b) : v;
        size_t index[2] = {b, 0};
        char item[CODEC_POINTER_MAX];
        if (!json_is_array(list) || json_array_size(list) != per_list) {
            codec_pointer(item, row->name, index, 1);
            return codec_fail(
                err, json_is_array(list) ? ERR_SHAPE_MISMATCH : type_code(row),
                item,
                "%s holds lists of labels: one per sequence, "
                "each as long as the first (%zu)",
                row->name, per_list);
        }
        for (size_t i = 0; i < per_list; i++)
            if (!json_is_string(json_array_get(list, i))) {
                index[nested ? 1 : 0] = i;
                codec_pointer(item, row->name, index, nested ? 2 : 1);
                return codec_fail(err, type_code(row), item,
                                  "labels are strings");
            }
    }
    if (per_list > limits->max_tokens)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                          "%s holds %zu labels in a list; a list labels at "
                          "most %zu tokens (--max-tokens)",
                          row->name, per_list, limits->max_tokens);
    api_labels *labels = &out->labels;
    size_t count = lists * per_list; /* bounded by the body's size */
    labels->names = parse_budget_alloc((count + 1) * sizeof *labels->names);
    if (!labels->names)
        return labels_not_copied(row, err);
    memset(labels->names, 0, (count + 1) * sizeof *labels->names);
    labels->lists = nested ? lists : 0;
    for (; labels->count < count; labels->count++) {
        json_t *list = nested ? json_array_get(v, labels->count / per_list) : v;
        json_t *label = json_array_get(list, labels->count % per_list);
        size_t len = json_string_length(label);
        char *copy = parse_budget_alloc(len + 1);
        if (!copy)
            return labels_not_copied(row, err);
        memcpy(copy, json_string_value(label), len + 1);
        labels->names[labels->count] = copy;
    }
    return true;
}

/* true (on, every member's default), false (off), or an object whose
 * members are decoded by their rows, named "rope.base" in messages. */
static bool take_object(json_t *v, const schema_field *row, const char *ptr,
                        const request_limits *limits, schema_value *out,
                        codec_error *err)
{
    char names[SCHEMA_MEMBERS_MAX * 24] = "";
    for (size_t i = 0; i < row->member_count; i++) {
        strcat(names, i ? ", " : "");
        strcat(names, row->members[i].name);
    }
    memset(out->members, 0, sizeof out->members);
    if (json_is_boolean(v)) {
        out->boolean = json_is_true(v);
        return true;
    }
    if (!json_is_object(v))
        return codec_fail(err, type_code(row), ptr,
                          "%s must be true, false or an object of %s",
                          row->name, names);
    const char *key;
    json_t *member;
    json_object_foreach(v, key, member)
    {
        char at[CODEC_POINTER_MAX];
        snprintf(at, sizeof at, "%s", ptr);
        if (!codec_pointer_append(at, sizeof at, key))
            at[0] = '\0'; /* a name too long to point at: no pointer */
        size_t i = 0;
        while (i < row->member_count && strcmp(row->members[i].name, key) != 0)
            i++;
        if (i == row->member_count)
            return codec_fail(err, row->invalid_code, at,
                              "%s has no member \"%.64s\" (its members are "
                              "%s)",
                              row->name, key, names);
        char name[64];
        snprintf(name, sizeof name, "%s.%s", row->name, row->members[i].name);
        schema_field named = row->members[i];
        named.name = name;
        /* members are integers, numbers or choices (schema.h) */
        schema_value value = {0};
        bool ok = named.kind == SCHEMA_INTEGER
                      ? take_integer(member, &named, at, limits, &value, err)
                  : named.kind == SCHEMA_NUMBER
                      ? take_number(member, &named, at, &value, err)
                      : take_choice(member, &named, at, &value, err);
        if (!ok)
            return false;
        out->members[i] = (schema_member){
            .number = value.number, .choice = value.choice, .present = true};
    }
    out->boolean = true;
    return true;
}

bool decode_value(api_field f, json_t *v, const char *pointer,
                  const request_limits *limits, schema_value *out,
                  codec_error *err)
{
    const schema_field *row = &api_schema[f];
    bool ok = false;
    switch (row->kind) {
    case SCHEMA_INTEGER:
        ok = take_integer(v, row, pointer, limits, out, err);
        break;
    case SCHEMA_NUMBER:
        ok = take_number(v, row, pointer, out, err);
        break;
    case SCHEMA_BOOLEAN:
        ok = take_boolean(v, row, pointer, out, err);
        break;
    case SCHEMA_ENUM:
        ok = take_choice(v, row, pointer, out, err);
        break;
    case SCHEMA_STAGES:
        ok = take_stages(v, row, pointer, out, err);
        break;
    case SCHEMA_LABELS:
        ok = take_labels(v, row, pointer, limits, out, err);
        break;
    case SCHEMA_OBJECT:
        ok = take_object(v, row, pointer, limits, out, err);
        break;
    case SCHEMA_STRING: /* its value is read where it is used */
        ok = json_is_string(v) || codec_fail(err, ERR_WRONG_TYPE, pointer,
                                             "%s is a string", row->name);
        break;
    case SCHEMA_TENSOR:
    case SCHEMA_STATE_DICT:
        return codec_fail(err, ERR_WRONG_TYPE, pointer,
                          "%s holds tensors, not a value", row->name);
    }
    out->present = ok;
    return ok;
}

/* given[f] = the envelope's member named by row f, or NULL: one pass over
 * its members (a lesson's body has one or two) instead of a hash lookup
 * for each of the schema's rows. */
static void find_given(json_t *envelope, json_t *given[API_FIELD_COUNT])
{
    memset(given, 0, API_FIELD_COUNT * sizeof *given);
    const char *key;
    size_t key_len;
    json_t *v;
    json_object_keylen_foreach(envelope, key, key_len, v)
    {
        int f = strlen(key) == key_len ? schema_field_of(key) : -1;
        if (f >= 0)
            given[f] = v;
    }
}

/* Reads every non-tensor field of the envelope by its row's kind. */
static bool take_small_fields(json_t *const given[API_FIELD_COUNT],
                              const request_limits *limits, api_fields *fields,
                              codec_error *err)
{
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        const schema_field *row = &api_schema[f];
        json_t *v = given[f];
        if (row->kind == SCHEMA_TENSOR || row->kind == SCHEMA_STATE_DICT || !v)
            continue;
        char ptr[CODEC_POINTER_MAX];
        codec_pointer(ptr, row->name, NULL, 0);
        if (!decode_value((api_field)f, v, ptr, limits, &fields->value[f], err))
            return false;
    }
    return true;
}

/* Every required field is there. */
static bool check_required(const raw_request *raw,
                           json_t *const given[API_FIELD_COUNT],
                           codec_error *err)
{
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        const schema_field *row = &api_schema[f];
        bool present = row->kind == SCHEMA_TENSOR
                           ? raw->fields.tensor[f].present
                           : given[f] != NULL;
        if (row->required && !present) {
            char ptr[CODEC_POINTER_MAX];
            codec_pointer(ptr, row->name, NULL, 0);
            return codec_fail(err, ERR_MISSING_FIELD, ptr, "%s is required",
                              row->name);
        }
    }
    return true;
}

/* Where a /v1 body's numbers must be whole (whole_literals.h). */
static error_code whole_slot(void *ctx, const char *pointer)
{
    (void)ctx;
    return schema_whole_code(pointer);
}

bool decode_request(const char *body, size_t len, const request_limits *limits,
                    const decode_options *options, api_request *req,
                    codec_error *err)
{
    static const decode_options defaults = {NULL, SIZE_MAX, false};
    if (!options)
        options = &defaults;
    memset(req, 0, sizeof *req);
    memset(err, 0, sizeof *err);
    parse_account account;
    parse_account_open(&account, parse_budget_account_limit(len));
    raw_request raw;
    bool ok = !options->jansson_only &&
              parse_json_fast(body, len, limits->max_elements, options->workers,
                              options->split_min_bytes, &raw);
    if (!ok)
        ok = parse_json_jansson(body, len, limits->max_elements, &raw, err);
    ok = ok && (!raw.whole_unsure ||
                whole_literals_check(body, len, whole_slot, NULL, err));
    raw.fields.text = body;
    raw.fields.text_len = len;
    raw.fields.literal = number_literal;
    state_dict_keys keys;
    json_t *given[API_FIELD_COUNT];
    if (ok)
        find_given(raw.envelope, given);
    ok = ok &&
         state_dict_take(raw.envelope, limits->max_elements, &raw.fields, &keys,
                         err) &&
         check_required(&raw, given, err) &&
         take_small_fields(given, limits, &raw.fields, err);
    /* a 16-bit dtype's JSON numbers are that type's before any rule */
    if (ok && !(half_round_fields(&raw.fields, err) &&
                validate_request(&raw.fields, limits, req, err))) {
        state_dict_repoint(&keys, err);
        ok = false;
    }
    raw_request_free(&raw);
    parse_account_close(&account);
    if (!ok)
        api_request_free(req);
    return ok;
}
