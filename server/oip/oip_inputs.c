/*
 * oip_inputs.c - the inputs of an Open Inference Protocol request, each
 * checked on its own in the order a person fixes it: its name (a tensor
 * field of the schema), its datatype (one for every floating-point input:
 * the request's dtype), its shape, then its data, as JSON (flat or nested)
 * or as binary bytes after the JSON header (oip_binary.c).
 */
#include "server/json/number_literal.h"
#include "server/oip/oip_reader.h"

#include "server/json/half.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dimension larger than this is refused as it is read: no tensor of ours
 * comes near it, and it keeps every dimension exact as a double. */
#define OIP_MAX_DIM 1e15

/* Whole-number datatypes hold what the type holds, and the 64-bit ones
 * only what a double holds exactly (OIP_MAX_EXACT_INT). */
static const oip_datatype datatypes[] = {
    {"BOOL", 1, OIP_BOOL, -1, 0, 0},
    {"FP64", 8, OIP_FLOAT, API_WIRE_FLOAT64, 0, 0},
    {"FP32", 4, OIP_FLOAT, API_WIRE_FLOAT32, 0, 0},
    {"FP16", 2, OIP_FLOAT, API_WIRE_FLOAT16, 0, 0},
    {"BF16", 2, OIP_FLOAT, API_WIRE_BFLOAT16, 0, 0},
    {"INT64", 8, OIP_INT, -1, -OIP_MAX_EXACT_INT, OIP_MAX_EXACT_INT},
    {"INT32", 4, OIP_INT, -1, INT32_MIN, INT32_MAX},
    {"INT16", 2, OIP_INT, -1, INT16_MIN, INT16_MAX},
    {"INT8", 1, OIP_INT, -1, INT8_MIN, INT8_MAX},
    {"UINT64", 8, OIP_INT, -1, 0, OIP_MAX_EXACT_INT},
    {"UINT32", 4, OIP_INT, -1, 0, UINT32_MAX},
    {"UINT16", 2, OIP_INT, -1, 0, UINT16_MAX},
    {"UINT8", 1, OIP_INT, -1, 0, UINT8_MAX},
};

#define DATATYPE_COUNT (sizeof datatypes / sizeof *datatypes)

const char *oip_datatype_name(api_wire wire)
{
    static const char *const names[] = {
        [API_WIRE_FLOAT64] = "FP64",
        [API_WIRE_FLOAT32] = "FP32",
        [API_WIRE_FLOAT16] = "FP16",
        [API_WIRE_BFLOAT16] = "BF16",
    };
    return names[wire];
}

/* Whether value, of a 16-bit floating-point datatype, is past its range
 * (rounds to an infinity). */
static bool past_half(const oip_datatype *dt, double value)
{
    if (dt->element != OIP_FLOAT || dt->size != HALF_SIZE)
        return false;
    half_kind kind = half_of((api_wire)dt->dtype);
    return isinf(half_value(kind, half_round(kind, value)));
}

bool oip_datatype_whole(const char *name)
{
    for (size_t k = 0; name && k < DATATYPE_COUNT; k++)
        if (strcmp(datatypes[k].name, name) == 0)
            return datatypes[k].element == OIP_INT;
    return false;
}

error_code oip_input_whole_code(json_t *input, const char *pointer)
{
    char token[2][CODEC_POINTER_MAX];
    size_t depth = codec_pointer_tokens(pointer, 2, token);
    if (depth == 2 && (strcmp(token[0], "shape") == 0 ||
                       (strcmp(token[0], "parameters") == 0 &&
                        strcmp(token[1], "binary_data_size") == 0)))
        return ERR_WRONG_TYPE; /* as read_shape() and read_input_parameters() */
    const char *datatype =
        json_string_value(json_object_get(input, "datatype"));
    return depth >= 2 && strcmp(token[0], "data") == 0 &&
                   oip_datatype_whole(datatype)
               ? ERR_WRONG_TYPE /* as fill_leaves() refuses */
               : ERR_NONE;
}

static bool is_input(api_field f)
{
    return api_schema[f].kind == SCHEMA_TENSOR;
}

/* ---- one input ---------------------------------------------------------- */

/* Whether datatype dt is taken by field f: whole numbers (positions, head
 * indices) in the integer ones only, the others in FP64 or FP32, masks
 * also in BOOL. */
static bool takes_datatype(const schema_field *row, const oip_datatype *dt)
{
    if (row->whole)
        return dt->element == OIP_INT;
    return dt->element == OIP_BOOL
               ? row->leaf != SCHEMA_LEAF_NUMBER
               : dt->element == OIP_FLOAT && row->leaf != SCHEMA_LEAF_BOOL;
}

/* "FP64 or FP32": the datatypes row takes, in table order. */
static void datatype_words(const schema_field *row, char *out, size_t size)
{
    size_t taken = 0, count = 0, len = 0;
    for (size_t k = 0; k < DATATYPE_COUNT; k++)
        count += takes_datatype(row, &datatypes[k]);
    out[0] = '\0';
    for (size_t k = 0; k < DATATYPE_COUNT && len < size; k++) {
        if (!takes_datatype(row, &datatypes[k]))
            continue;
        taken++;
        const char *sep = taken == 1 ? "" : taken == count ? " or " : ", ";
        len += (size_t)snprintf(out + len, size - len, "%s%s", sep,
                                datatypes[k].name);
    }
}

/* The datatype named by v, accepted for field f (its row's leaves). */
static bool read_datatype(oip_reader *rd, api_field f, json_t *v, size_t i,
                          const oip_datatype **out, codec_error *err)
{
    const schema_field *row = &api_schema[f];
    char ptr[CODEC_POINTER_MAX], takes[128];
    oip_input_pointer(ptr, i, "datatype");
    const char *name = json_string_value(v);
    datatype_words(row, takes, sizeof takes);
    if (!v)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "input %s needs a datatype (%s)", row->name, takes);
    if (!name)
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "input %s: datatype must be a string (%s)", row->name,
                          takes);
    const oip_datatype *dt = NULL;
    for (size_t k = 0; k < DATATYPE_COUNT; k++)
        if (strcmp(datatypes[k].name, name) == 0)
            dt = &datatypes[k];
    if (!dt || !takes_datatype(row, dt))
        return codec_fail(err, ERR_INVALID_DATATYPE, ptr,
                          "input %s: datatype %.32s is not taken; %s takes %s",
                          row->name, name, row->name, takes);
    if (dt->element == OIP_FLOAT) {
        if (!rd->numeric) {
            rd->numeric = dt;
            rd->numeric_input = (int)i;
        } else if (rd->numeric != dt) {
            return codec_fail(err, ERR_INVALID_DATATYPE, ptr,
                              "input %s is %s but inputs/%d is %s: every "
                              "floating-point input of a request has one "
                              "datatype, the request's dtype",
                              row->name, dt->name, rd->numeric_input,
                              rd->numeric->name);
        }
    }
    *out = dt;
    return true;
}

/* The shape: whole numbers, as many as the row allows, none 0.  Sets
 * t->rank, t->dims and *count (SIZE_MAX when the product overflows). */
static bool read_shape(api_field f, json_t *v, size_t i, schema_tensor *t,
                       size_t *count, codec_error *err)
{
    const schema_field *row = &api_schema[f];
    char ptr[CODEC_POINTER_MAX], ranks[32];
    oip_input_pointer(ptr, i, "shape");
    if (row->max_rank > row->min_rank)
        snprintf(ranks, sizeof ranks, "%d or %d", row->min_rank, row->max_rank);
    else
        snprintf(ranks, sizeof ranks, "%d", row->min_rank);
    if (!v)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "input %s needs a shape (%s dimensions)", row->name,
                          ranks);
    if (!json_is_array(v))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "input %s: shape must be an array of whole numbers",
                          row->name);
    size_t rank = json_array_size(v);
    if (rank < (size_t)row->min_rank || rank > (size_t)row->max_rank)
        return codec_fail(err, ERR_WRONG_RANK, ptr,
                          "input %s must have %s dimensions, its shape has "
                          "%zu",
                          row->name, ranks, rank);
    t->rank = (int)rank;
    *count = 1;
    bool empty = false;
    for (size_t k = 0; k < rank; k++) {
        json_t *dim = json_array_get(v, k);
        double d = json_number_value(dim);
        if (!json_is_number(dim) || d < 0 || d != floor(d) || d > OIP_MAX_DIM)
            return codec_fail(err, ERR_WRONG_TYPE, ptr,
                              "input %s: shape holds whole numbers, at most "
                              "%g",
                              row->name, OIP_MAX_DIM);
        t->dims[k] = (size_t)d;
        empty = empty || t->dims[k] == 0;
        if (!tensor_mul_size(*count, t->dims[k], count))
            *count = SIZE_MAX;
    }
    if (empty) {
        char words[96];
        oip_shape_words(t, words, sizeof words);
        return codec_fail(err, ERR_EMPTY_ARRAY, ptr,
                          "input %s must not be empty: its shape is %s",
                          row->name, words);
    }
    return true;
}

/* Leaves of JSON data, nested no deeper than `rank` arrays. */
static bool count_leaves(json_t *v, int depth, int rank, size_t *count)
{
    if (!json_is_array(v)) {
        (*count)++;
        return true;
    }
    if (depth == rank)
        return false;
    for (size_t k = 0; k < json_array_size(v); k++)
        if (!count_leaves(json_array_get(v, k), depth + 1, rank, count))
            return false;
    return true;
}

/* Whether nested data (v at `depth`, its pointer in ptr) holds dims[depth]
 * elements at each level, as the shape says; false with err (ptr then
 * names the array at fault). */
static bool nested_as_shape(json_t *v, const schema_tensor *t, int depth,
                            char ptr[CODEC_POINTER_MAX], const char *name,
                            codec_error *err)
{
    if (depth == t->rank)
        return true;
    if (!json_is_array(v) || json_array_size(v) != t->dims[depth]) {
        char words[96];
        oip_shape_words(t, words, sizeof words);
        if (!json_is_array(v))
            return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                              "input %s: nested data follows its shape %s, "
                              "which has an array of %zu here, not a single "
                              "value",
                              name, words, t->dims[depth]);
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "input %s: nested data follows its shape %s, which "
                          "has %zu elements here, not %zu",
                          name, words, t->dims[depth], json_array_size(v));
    }
    size_t len = strlen(ptr);
    for (size_t k = 0; k < json_array_size(v); k++) {
        char index[24];
        snprintf(index, sizeof index, "%zu", k);
        oip_pointer_append(ptr, index);
        if (!nested_as_shape(json_array_get(v, k), t, depth + 1, ptr, name,
                             err))
            return false;
        ptr[len] = '\0';
    }
    return true;
}

/* Whether any element of the array v is an array: data nested, not flat. */
static bool is_nested(json_t *v)
{
    for (size_t k = 0; k < json_array_size(v); k++)
        if (json_is_array(json_array_get(v, k)))
            return true;
    return false;
}

typedef struct {
    api_field f;
    size_t input;
    const oip_datatype *dt;
    schema_tensor *t;
    const api_fields *fields; /* its text, to quote a number as sent */
    size_t flat;              /* elements written */
    char ptr[CODEC_POINTER_MAX];
} data_walk;

/* Whether value is a whole number that integer datatype dt holds exactly
 * (dt->low to dt->high). */
static bool int_fits(const oip_datatype *dt, double value)
{
    return value == floor(value) && value >= dt->low && value <= dt->high;
}

static const char *json_type_words(json_t *v)
{
    return json_is_string(v)    ? "a string"
           : json_is_boolean(v) ? "a boolean"
           : json_is_null(v)    ? "null"
           : json_is_number(v)  ? "a number"
                                : "an object";
}

/* Writes the leaves of v in row-major order; ptr holds v's pointer. */
static bool fill_leaves(data_walk *w, json_t *v, codec_error *err)
{
    if (json_is_array(v)) {
        size_t len = strlen(w->ptr);
        for (size_t k = 0; k < json_array_size(v); k++) {
            char index[24];
            snprintf(index, sizeof index, "%zu", k);
            oip_pointer_append(w->ptr, index);
            if (!fill_leaves(w, json_array_get(v, k), err))
                return false;
            w->ptr[len] = '\0';
        }
        return true;
    }
    const char *name = api_schema[w->f].name;
    if (w->t->is_bool) {
        if (!json_is_boolean(v))
            return codec_fail(err, ERR_WRONG_TYPE, w->ptr,
                              "input %s is BOOL: expected true or false, "
                              "found %s",
                              name, json_type_words(v));
        ((uint8_t *)w->t->data)[w->flat++] = json_is_true(v);
        return true;
    }
    if (!json_is_number(v))
        return codec_fail(err, ERR_WRONG_TYPE, w->ptr,
                          "input %s: expected a number, found %s", name,
                          json_type_words(v));
    double value = json_number_value(v);
    if (w->dt->element == OIP_INT && !int_fits(w->dt, value)) {
        /* quoted as sent: 2^53 + 1 arrives as 2^53 */
        char sent[NUMBER_LITERAL_MAX];
        number_literal(w->fields->text, w->fields->text_len, w->ptr, value,
                       sent);
        return codec_fail(err, ERR_WRONG_TYPE, w->ptr,
                          "input %s is %s: expected a whole number from "
                          "%.0f to %.0f, found %s",
                          name, w->dt->name, w->dt->low, w->dt->high, sent);
    }
    if (w->dt->dtype == TENSOR_FLOAT32 && isinf((float)value))
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, w->ptr,
                          "input %s: %g does not fit in float32 (largest %g)",
                          name, value, (double)FLT_MAX);
    if (past_half(w->dt, value))
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, w->ptr,
                          "input %s: %g does not fit in %s (largest %g)", name,
                          value, api_wire_name((api_wire)w->dt->dtype),
                          half_max(half_of((api_wire)w->dt->dtype)));
    ((double *)w->t->data)[w->flat++] = value;
    return true;
}

/* data: JSON numbers or booleans, flat or nested, count of them. */
static bool read_json_data(const oip_reader *rd, api_field f, json_t *data,
                           size_t i, const oip_datatype *dt, schema_tensor *t,
                           size_t count, codec_error *err)
{
    const char *name = api_schema[f].name;
    data_walk w = {.f = f, .input = i, .dt = dt, .t = t, .fields = &rd->fields};
    oip_input_pointer(w.ptr, i, "data");
    size_t found = 0;
    if (!json_is_array(data))
        return codec_fail(err, ERR_WRONG_TYPE, w.ptr,
                          "input %s: data must be an array, flat or nested",
                          name);
    if (!count_leaves(data, 0, t->rank, &found))
        return codec_fail(err, ERR_WRONG_RANK, w.ptr,
                          "input %s: data nests deeper than its shape's %d "
                          "dimensions",
                          name, t->rank);
    if (found != count) {
        char words[96];
        oip_shape_words(t, words, sizeof words);
        return codec_fail(err, ERR_SHAPE_MISMATCH, w.ptr,
                          "input %s: shape %s holds %zu elements but data "
                          "has %zu",
                          name, words, count, found);
    }
    /* flat, or nested exactly as the shape says */
    if (t->rank > 1 && is_nested(data) &&
        !nested_as_shape(data, t, 0, w.ptr, name, err))
        return false;
    oip_input_pointer(w.ptr, i, "data");
    return fill_leaves(&w, data, err);
}

/* data the fast reader flattened (oip_fast.h), when it holds what the
 * input says: any doubt is a refusal, which the jansson reading words. */
static bool take_flat_data(const oip_fast_data *flat, const oip_datatype *dt,
                           schema_tensor *t, size_t count, codec_error *err)
{
    /* nested data: the jansson reading checks it against the shape */
    bool fits = flat->depth <= 1 && flat->count == count &&
                flat->is_bool == (dt->element == OIP_BOOL);
    const double *values = flat->values;
    for (size_t k = 0; fits && dt->element == OIP_INT && k < count; k++)
        fits = int_fits(dt, values[k]);
    /* a number beyond float32 (float16, bfloat16): the jansson reading
     * points at it */
    for (size_t k = 0; fits && dt->dtype == TENSOR_FLOAT32 && k < count; k++)
        fits = !isinf((float)values[k]);
    for (size_t k = 0; fits && dt->size == HALF_SIZE && k < count; k++)
        fits = !past_half(dt, values[k]);
    if (!fits)
        return codec_fail(err, ERR_INVALID_BODY, NULL,
                          "data that the jansson reading words");
    memcpy(t->data, flat->values, count * (t->is_bool ? 1 : sizeof(double)));
    return true;
}

/* An input's own parameters: binary_data_size only.  *size is -1 when it
 * is absent. */
static bool read_input_parameters(api_field f, json_t *params, size_t i,
                                  double *size, codec_error *err)
{
    const char *name = api_schema[f].name;
    char ptr[CODEC_POINTER_MAX];
    *size = -1;
    if (!params)
        return true;
    oip_input_pointer(ptr, i, "parameters");
    if (!json_is_object(params))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "input %s: parameters must be an object", name);
    const char *key;
    json_t *value;
    json_object_foreach(params, key, value)
    {
        oip_input_pointer(ptr, i, "parameters");
        oip_pointer_append(ptr, key);
        if (strcmp(key, "binary_data_size") != 0)
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "input %s: unknown parameter \"%.64s\" (an "
                              "input takes binary_data_size)",
                              name, key);
        double v = json_number_value(value);
        if (!json_is_number(value) || v < 0 || v != floor(v))
            return codec_fail(err, ERR_WRONG_TYPE, ptr,
                              "input %s: binary_data_size must be a byte "
                              "count",
                              name);
        *size = v;
    }
    return true;
}

static const char *const input_members[] = {"name", "shape", "datatype",
                                            "parameters", "data"};

/* Input i is an object of the members an input has, and no other. */
static bool read_input_members(json_t *in, size_t i, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    oip_input_pointer(ptr, i, NULL);
    if (!json_is_object(in))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "an input is an object with name, shape, datatype "
                          "and data");
    const char *key;
    json_t *value;
    json_object_foreach(in, key, value)
    {
        size_t k = 0;
        while (k < 5 && strcmp(input_members[k], key) != 0)
            k++;
        if (k == 5) {
            oip_input_pointer(ptr, i, key);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown member \"%.64s\" of an input (members "
                              "are name, shape, datatype, parameters, data)",
                              key);
        }
    }
    return true;
}

/* The request's tensor field input i names, taken by it (a second input of
 * the same name is refused); -1 with err set when it names none. */
static int read_input_name(oip_reader *rd, json_t *in, size_t i,
                           codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    oip_input_pointer(ptr, i, "name");
    const char *name = json_string_value(json_object_get(in, "name"));
    int f = name ? schema_tensor_of(name) : -1;
    if (f < 0) {
        char names[SCHEMA_LIST_MAX];
        oip_field_names(names, is_input);
        int meant = name ? schema_suggest(name, is_input) : -1;
        if (!name)
            codec_fail(err, ERR_MISSING_FIELD, ptr,
                       "an input needs a name (inputs are %s)", names);
        else if (meant >= 0)
            codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                       "unknown input \"%.64s\"; did you mean "
                       "\"%s\"? (inputs are %s)",
                       name, api_schema[meant].name, names);
        else
            codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                       "unknown input \"%.64s\" (inputs are %s)", name, names);
        return -1;
    }
    if (rd->input_of[f] >= 0) {
        codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                   "input %s appears twice, as inputs/%d and inputs/%zu", name,
                   rd->input_of[f], i);
        return -1;
    }
    rd->input_of[f] = (int)i;
    return f;
}

/* Input i's count numbers of datatype dt into field f's tensor t, from
 * its "data" (JSON, or what the fast parser took of it) or, when data is
 * NULL, binary_size bytes after the JSON. */
static bool read_input_numbers(oip_reader *rd, api_field f, json_t *data,
                               size_t i, const oip_datatype *dt,
                               double binary_size, size_t count,
                               codec_error *err)
{
    schema_tensor *t = &rd->fields.tensor[f];
    const oip_fast_data *flat =
        rd->fast && i < rd->fast->inputs && rd->fast->data[i].present
            ? &rd->fast->data[i]
            : NULL;
    t->is_bool = dt->element == OIP_BOOL;
    /* binary FP32 is kept as float: a float32 request never widens it;
     * FP16 and BF16 are widened to floats (oip_binary.c) */
    t->is_float32 =
        !flat && !data && dt->element == OIP_FLOAT && dt->size <= sizeof(float);
    t->data = malloc(count * (t->is_bool      ? 1
                              : t->is_float32 ? sizeof(float)
                                              : sizeof(double)) +
                     1);
    if (!t->data)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    bool ok =
        flat   ? take_flat_data(flat, dt, t, count, err)
        : data ? read_json_data(rd, f, data, i, dt, t, count, err)
               : oip_read_binary_data(rd, f, i, dt, binary_size, t, count, err);
    t->present = ok;
    return ok;
}

/* Input i: its members, name, datatype, shape and parameters checked, its
 * numbers (data or binary) counted against the request's budget and read. */
static bool read_input(oip_reader *rd, json_t *in, size_t i, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    int f =
        read_input_members(in, i, err) ? read_input_name(rd, in, i, err) : -1;
    if (f < 0)
        return false;
    const char *name = api_schema[f].name;
    const oip_datatype *dt = NULL;
    size_t count = 0;
    double binary_size;
    json_t *data = json_object_get(in, "data");
    if (!read_datatype(rd, (api_field)f, json_object_get(in, "datatype"), i,
                       &dt, err) ||
        !read_shape((api_field)f, json_object_get(in, "shape"), i,
                    &rd->fields.tensor[f], &count, err) ||
        !read_input_parameters((api_field)f, json_object_get(in, "parameters"),
                               i, &binary_size, err))
        return false;
    oip_input_pointer(ptr, i, "data");
    if (data && binary_size >= 0)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                          "input %s has both data and binary_data_size; send "
                          "one",
                          name);
    if (!data && binary_size < 0)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "input %s needs data, or binary_data_size with its "
                          "bytes after the JSON",
                          name);
    if (count > rd->budget) {
        oip_input_pointer(ptr, i, "shape");
        return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                          "the request holds more numbers than allowed "
                          "(--max-elements)");
    }
    rd->budget -= count;
    return read_input_numbers(rd, (api_field)f, data, i, dt, binary_size, count,
                              err);
}

bool oip_read_inputs(oip_reader *rd, json_t *inputs, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    oip_pointer2(ptr, "inputs", NULL);
    if (!inputs)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "an inference request needs inputs: x (or q, k "
                          "and v) and the weights");
    if (!json_is_array(inputs))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "inputs must be an array of tensors");
    for (size_t i = 0; i < json_array_size(inputs); i++)
        if (!read_input(rd, json_array_get(inputs, i), i, err))
            return false;
    if (rd->binary_used != rd->binary_len)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                          "the body has %zu bytes of binary data after its "
                          "JSON, but the inputs' binary_data_size add up to "
                          "%zu",
                          rd->binary_len, rd->binary_used);
    if (rd->numeric) {
        rd->fields.value[API_DTYPE].present = true;
        rd->fields.value[API_DTYPE].choice = rd->numeric->dtype;
    }
    return true;
}
