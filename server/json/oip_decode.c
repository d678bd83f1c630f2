/*
 * oip_decode.c - an Open Inference Protocol inference request → the same
 * api_fields the /v1 parsers fill → validate_request().
 *
 * DESIGN
 * The JSON header is parsed with jansson (it is small whenever the tensors
 * travel as binary data, the protocol's fast form).  Members are read in the
 * order a person fixes them: the request's parameters, its inputs (each
 * checked on its own: name, datatype, shape, then data or binary bytes),
 * its outputs; then the rules between fields, which are /v1's.  Every
 * refusal is a codec_error whose pointer is into the JSON header
 * ("/inputs/2/shape") and whose message names the input or parameter.
 */
#include "server/json/oip.h"

#include "server/json/decode_value.h"
#include "server/json/oip_fast.h"
#include "server/json/parse_json.h"
#include "server/base/parse_budget.h"
#include "server/json/schema.h"
#include "server/json/validate.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dimension larger than this is refused as it is read: no tensor of ours
 * comes near it, and it keeps every dimension exact as a double. */
#define OIP_MAX_DIM 1e15
/* Digits of the longest byte count Inference-Header-Content-Length may
 * give: a size_t has at most 20. */
#define OIP_LENGTH_DIGITS_MAX 20

/* Whole numbers beyond this are not all exact as a double: an INT64 input
 * (positions) holding one is refused rather than rounded. */
#define OIP_MAX_EXACT_INT 9007199254740992.0 /* 2^53 */

/* What an element of a datatype is. */
typedef enum {
    OIP_FLOAT, /* a number of the request's dtype */
    OIP_INT,   /* a whole number (positions); the dtype is not its own */
    OIP_BOOL,  /* true or false, 1 byte 0 or 1 */
} oip_element;

/* The datatypes an input may have; every other one of the protocol (FP16,
 * BF16, BYTES, the smaller and unsigned integers) is refused by name. */
typedef struct {
    const char *name;
    size_t size; /* bytes of one element in binary data */
    oip_element element;
    int dtype; /* OIP_FLOAT: the request's dtype it is */
} oip_datatype;

static const oip_datatype datatypes[] = {
    {"FP64", 8, OIP_FLOAT, TENSOR_FLOAT64},
    {"FP32", 4, OIP_FLOAT, TENSOR_FLOAT32},
    {"INT64", 8, OIP_INT, -1},
    {"INT32", 4, OIP_INT, -1},
    {"BOOL", 1, OIP_BOOL, -1},
};

#define DATATYPE_COUNT (sizeof datatypes / sizeof *datatypes)

const char *oip_datatype_name(tensor_dtype dtype)
{
    return dtype == TENSOR_FLOAT32 ? "FP32" : "FP64";
}

/* What reading one request keeps between its steps. */
typedef struct {
    const request_limits *limits;
    api_fields fields;
    int input_of[API_FIELD_COUNT]; /* index in "inputs", or -1 */
    const oip_fast *fast; /* the fast reader's data, or NULL (jansson's) */
    const oip_datatype *numeric; /* the numeric inputs' datatype */
    int numeric_input;           /* the input that set it */
    size_t budget;               /* numbers still allowed */
    const unsigned char *binary; /* the bytes after the JSON header */
    size_t binary_len, binary_used;
    bool binary_output; /* binary_data_output */
} oip_reader;

/* ---- pointers and names ------------------------------------------------- */

/* Appends "/token" to the pointer out; a token that does not fit (a member
 * name longer than a pointer holds) leaves out naming the parent. */
static void pointer_append(char out[CODEC_POINTER_MAX], const char *token)
{
    size_t len = strlen(out);
    if (!codec_pointer_append(out, CODEC_POINTER_MAX, token))
        out[len] = '\0';
}

/* out = "/a/b" for tokens a and b (b may be NULL). */
static void pointer2(char out[CODEC_POINTER_MAX], const char *a, const char *b)
{
    out[0] = '\0';
    pointer_append(out, a);
    if (b)
        pointer_append(out, b);
}

/* out = "/inputs/i" followed by member when not NULL. */
static void input_pointer(char out[CODEC_POINTER_MAX], size_t i,
                          const char *member)
{
    char index[24];
    snprintf(index, sizeof index, "%zu", i);
    pointer2(out, "inputs", index);
    if (member)
        pointer_append(out, member);
}

/* Whether a request parameter can carry field f: one value (not a tensor,
 * not labels), and not what the protocol says its own way (the row's
 * oip_instead: the inputs' datatype is the dtype, outputs the stages). */
static bool is_parameter(api_field f)
{
    schema_kind kind = api_schema[f].kind;
    return kind != SCHEMA_TENSOR && kind != SCHEMA_LABELS &&
           !api_schema[f].oip_instead;
}

/* Joins the names of the fields `keep` accepts, in table order. */
static void field_names(char out[SCHEMA_LIST_MAX], bool (*keep)(api_field))
{
    size_t len = 0;
    out[0] = '\0';
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        if (!keep((api_field)f))
            continue;
        int wrote = snprintf(out + len, SCHEMA_LIST_MAX - len, "%s%s",
                             len ? ", " : "", api_schema[f].name);
        if (wrote < 0 || (size_t)wrote >= SCHEMA_LIST_MAX - len)
            break; /* names are short: see schema.c's assertion */
        len += (size_t)wrote;
    }
}

static bool is_input(api_field f)
{
    return api_schema[f].kind == SCHEMA_TENSOR;
}

/* "[3, 2]" */
static void shape_words(const schema_tensor *t, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "[");
    for (int i = 0; i < t->rank && len < size; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%zu", i ? ", " : "",
                                t->dims[i]);
    if (len < size)
        snprintf(out + len, size - len, "]");
}

/* ---- the request's parameters ------------------------------------------- */

/* The protocol's own scheduling parameters, which tritonclient sends: a
 * whole number >= 0 each.  `priority` is accepted and without effect (one
 * model, one queue, no priorities); `timeout`, in microseconds, is the
 * request's deadline (oip_reply_plan.timeout_seconds). */
static const char *const scheduling_parameters[] = {"priority", "timeout"};

/* Whether key is one of them; false with err set when its value is not a
 * whole number >= 0. */
static bool is_scheduling_parameter(const char *key, json_t *value,
                                    const char *ptr, oip_reply_plan *plan,
                                    codec_error *err, bool *ok)
{
    for (size_t i = 0;
         i < sizeof scheduling_parameters / sizeof *scheduling_parameters;
         i++) {
        if (strcmp(key, scheduling_parameters[i]) != 0)
            continue;
        /* (a number may come as a real: the fast parser reads every one
         * as a double) */
        double v = json_number_value(value);
        *ok = json_is_number(value) && v >= 0 && v == floor(v);
        if (!*ok)
            codec_fail(err, ERR_WRONG_TYPE, ptr,
                       "%s must be a whole number >= 0", key);
        else if (strcmp(key, "timeout") == 0)
            plan->timeout_seconds = v * 1e-6;
        return true;
    }
    return false;
}

static bool read_parameters(oip_reader *rd, json_t *params,
                            oip_reply_plan *plan, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    if (!json_is_object(params)) {
        pointer2(ptr, "parameters", NULL);
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "parameters must be an object of name: value");
    }
    const char *key;
    json_t *value;
    json_object_foreach(params, key, value)
    {
        pointer2(ptr, "parameters", key);
        bool ok;
        if (is_scheduling_parameter(key, value, ptr, plan, err, &ok)) {
            if (!ok)
                return false;
            continue;
        }
        if (strcmp(key, "binary_data_output") == 0) {
            if (!json_is_boolean(value))
                return codec_fail(err, ERR_WRONG_TYPE, ptr,
                                  "binary_data_output must be true or false");
            rd->binary_output = json_is_true(value);
            continue;
        }
        int f = schema_field_of(key);
        if (f >= 0 && api_schema[f].kind == SCHEMA_TENSOR)
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "%s is a tensor: send it as an input", key);
        if (f >= 0 && api_schema[f].oip_instead)
            return codec_fail(err, api_schema[f].invalid_code, ptr, "%s",
                              api_schema[f].oip_instead);
        if (f >= 0 && api_schema[f].kind == SCHEMA_LABELS)
            return codec_fail(err, ERR_WRONG_TYPE, ptr,
                              "%s is a list of labels, which a parameter "
                              "cannot hold; POST /v1/attention takes it",
                              key);
        if (f < 0) {
            char names[SCHEMA_LIST_MAX];
            field_names(names, is_parameter);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown parameter \"%.64s\" (parameters are "
                              "%s, binary_data_output, priority, timeout)",
                              key, names);
        }
        if (!decode_value((api_field)f, value, ptr, rd->limits,
                          &rd->fields.value[f], err))
            return false;
    }
    return true;
}

/* ---- one input ---------------------------------------------------------- */

/* The datatype named by v, accepted for field f (its row's leaves). */
static bool read_datatype(oip_reader *rd, api_field f, json_t *v, size_t i,
                          const oip_datatype **out, codec_error *err)
{
    const schema_field *row = &api_schema[f];
    char ptr[CODEC_POINTER_MAX];
    input_pointer(ptr, i, "datatype");
    const char *name = json_string_value(v);
    const char *takes = row->leaf == SCHEMA_LEAF_BOOL ? "BOOL"
                        : row->leaf == SCHEMA_LEAF_NUMBER
                            ? "FP64 or FP32, or INT64 or INT32 for whole "
                              "numbers"
                            : "BOOL, FP64 or FP32";
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
    bool fits =
        dt && (dt->element == OIP_BOOL  ? row->leaf != SCHEMA_LEAF_NUMBER
               : dt->element == OIP_INT ? row->leaf == SCHEMA_LEAF_NUMBER
                                        : row->leaf != SCHEMA_LEAF_BOOL);
    if (!fits)
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
    input_pointer(ptr, i, "shape");
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
        shape_words(t, words, sizeof words);
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

typedef struct {
    api_field f;
    size_t input;
    const oip_datatype *dt;
    schema_tensor *t;
    size_t flat; /* elements written */
    char ptr[CODEC_POINTER_MAX];
} data_walk;

/* The largest magnitude of a whole number of datatype dt that a double
 * holds exactly. */
static double int_limit(const oip_datatype *dt)
{
    return dt->size == 4 ? 2147483648.0 : OIP_MAX_EXACT_INT;
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
            pointer_append(w->ptr, index);
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
    if (w->dt->element == OIP_INT &&
        (value != floor(value) || fabs(value) > int_limit(w->dt)))
        return codec_fail(err, ERR_WRONG_TYPE, w->ptr,
                          "input %s is %s: expected a whole number of at "
                          "most %.0f, found %g",
                          name, w->dt->name, int_limit(w->dt), value);
    if (w->dt->dtype == TENSOR_FLOAT32 && isinf((float)value))
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, w->ptr,
                          "input %s: %g does not fit in float32 (largest %g)",
                          name, value, (double)FLT_MAX);
    ((double *)w->t->data)[w->flat++] = value;
    return true;
}

/* data: JSON numbers or booleans, flat or nested, count of them. */
static bool read_json_data(api_field f, json_t *data, size_t i,
                           const oip_datatype *dt, schema_tensor *t,
                           size_t count, codec_error *err)
{
    const char *name = api_schema[f].name;
    data_walk w = {.f = f, .input = i, .dt = dt, .t = t};
    input_pointer(w.ptr, i, "data");
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
        shape_words(t, words, sizeof words);
        return codec_fail(err, ERR_SHAPE_MISMATCH, w.ptr,
                          "input %s: shape %s holds %zu elements but data "
                          "has %zu",
                          name, words, count, found);
    }
    return fill_leaves(&w, data, err);
}

/* data the fast reader flattened (oip_fast.h), when it holds what the
 * input says: any doubt is a refusal, which the jansson reading words. */
static bool take_flat_data(const oip_fast_data *flat, const oip_datatype *dt,
                           schema_tensor *t, size_t count, codec_error *err)
{
    bool fits = flat->depth <= t->rank && flat->count == count &&
                flat->is_bool == (dt->element == OIP_BOOL);
    const double *values = flat->values;
    for (size_t k = 0; fits && dt->element == OIP_INT && k < count; k++)
        fits =
            values[k] == floor(values[k]) && fabs(values[k]) <= int_limit(dt);
    /* a number beyond float32: the jansson reading points at it */
    for (size_t k = 0; fits && dt->dtype == TENSOR_FLOAT32 && k < count; k++)
        fits = !isinf((float)values[k]);
    if (!fits)
        return codec_fail(err, ERR_INVALID_BODY, NULL,
                          "data that the jansson reading words");
    memcpy(t->data, flat->values, count * (t->is_bool ? 1 : sizeof(double)));
    return true;
}

/* binary_data_size bytes of the binary part, little-endian. */
static bool read_binary_data(oip_reader *rd, api_field f, size_t i,
                             const oip_datatype *dt, double size,
                             schema_tensor *t, size_t count, codec_error *err)
{
    const char *name = api_schema[f].name;
    char ptr[CODEC_POINTER_MAX], words[96];
    input_pointer(ptr, i, "parameters");
    pointer_append(ptr, "binary_data_size");
    shape_words(t, words, sizeof words);
    size_t bytes = count * dt->size; /* count is within the budget */
    if (size != (double)bytes)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                          "input %s: binary_data_size is %.0f but shape %s "
                          "of %s takes %zu bytes",
                          name, size, words, dt->name, bytes);
    size_t left = rd->binary_len - rd->binary_used;
    if (bytes > left) {
        if (rd->binary_len == 0)
            return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                              "input %s has binary_data_size %zu but the "
                              "body has no binary data after its JSON "
                              "(Inference-Header-Content-Length gives the "
                              "JSON's length)",
                              name, bytes);
        return codec_fail(err, ERR_INVALID_BINARY_DATA, ptr,
                          "input %s: its %zu bytes run past the body, which "
                          "has %zu bytes of binary data left for it",
                          name, bytes, left);
    }
    const unsigned char *src = rd->binary + rd->binary_used;
    rd->binary_used += bytes;
    if (dt->element == OIP_BOOL) {
        for (size_t k = 0; k < count; k++)
            if (src[k] > 1)
                return codec_fail(err, ERR_WRONG_TYPE, ptr,
                                  "input %s: byte %zu is %u; a BOOL is one "
                                  "byte, 0 or 1",
                                  name, k, src[k]);
        memcpy(t->data, src, count);
        return true;
    }
    if (dt->element == OIP_INT) {
        double *values = t->data;
        for (size_t k = 0; k < count; k++) {
            int64_t wide;
            int32_t narrow;
            if (dt->size == sizeof wide)
                memcpy(&wide, src + k * sizeof wide, sizeof wide);
            else
                memcpy(&narrow, src + k * sizeof narrow, sizeof narrow);
            values[k] = dt->size == sizeof wide ? (double)wide : narrow;
            if (fabs(values[k]) > OIP_MAX_EXACT_INT)
                return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                                  "input %s: element %zu is beyond 2^53, "
                                  "where whole numbers stop being exact",
                                  name, k);
        }
        return true;
    }
    /* FP32 stays float (t->is_float32, read_input sized it), FP64 double */
    memcpy(t->data, src, bytes);
    size_t bad = schema_first_nonfinite(t, count);
    if (bad < count)
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                          "input %s: element %zu is not a finite number", name,
                          bad);
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
    input_pointer(ptr, i, "parameters");
    if (!json_is_object(params))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "input %s: parameters must be an object", name);
    const char *key;
    json_t *value;
    json_object_foreach(params, key, value)
    {
        input_pointer(ptr, i, "parameters");
        pointer_append(ptr, key);
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

static bool read_input(oip_reader *rd, json_t *in, size_t i, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    input_pointer(ptr, i, NULL);
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
            input_pointer(ptr, i, key);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown member \"%.64s\" of an input (members "
                              "are name, shape, datatype, parameters, data)",
                              key);
        }
    }
    input_pointer(ptr, i, "name");
    const char *name = json_string_value(json_object_get(in, "name"));
    int f = name ? schema_tensor_of(name) : -1;
    if (f < 0) {
        char names[SCHEMA_LIST_MAX];
        field_names(names, is_input);
        if (!name)
            return codec_fail(err, ERR_MISSING_FIELD, ptr,
                              "an input needs a name (inputs are %s)", names);
        return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                          "unknown input \"%.64s\" (inputs are %s)", name,
                          names);
    }
    if (rd->input_of[f] >= 0)
        return codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                          "input %s appears twice, as inputs/%d and inputs/%zu",
                          name, rd->input_of[f], i);
    rd->input_of[f] = (int)i;

    const oip_datatype *dt = NULL;
    schema_tensor *t = &rd->fields.tensor[f];
    size_t count = 0;
    double binary_size;
    json_t *data = json_object_get(in, "data");
    if (!read_datatype(rd, (api_field)f, json_object_get(in, "datatype"), i,
                       &dt, err) ||
        !read_shape((api_field)f, json_object_get(in, "shape"), i, t, &count,
                    err) ||
        !read_input_parameters((api_field)f, json_object_get(in, "parameters"),
                               i, &binary_size, err))
        return false;
    input_pointer(ptr, i, "data");
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
        input_pointer(ptr, i, "shape");
        return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                          "the request holds more numbers than allowed "
                          "(--max-elements)");
    }
    rd->budget -= count;
    const oip_fast_data *flat =
        rd->fast && i < rd->fast->inputs && rd->fast->data[i].present
            ? &rd->fast->data[i]
            : NULL;
    t->is_bool = dt->element == OIP_BOOL;
    /* binary FP32 is kept as float: a float32 request never widens it */
    t->is_float32 =
        !flat && !data && dt->element == OIP_FLOAT && dt->size == sizeof(float);
    t->data = malloc(count * (t->is_bool      ? 1
                              : t->is_float32 ? sizeof(float)
                                              : sizeof(double)) +
                     1);
    if (!t->data)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    bool ok = flat   ? take_flat_data(flat, dt, t, count, err)
              : data ? read_json_data((api_field)f, data, i, dt, t, count, err)
                     : read_binary_data(rd, (api_field)f, i, dt, binary_size, t,
                                        count, err);
    t->present = ok;
    return ok;
}

static bool read_inputs(oip_reader *rd, json_t *inputs, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    pointer2(ptr, "inputs", NULL);
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

/* ---- outputs ------------------------------------------------------------ */

static bool read_output(json_t *out, size_t i, oip_reply_plan *plan,
                        unsigned *want, bool binary_output, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX], index[24];
    snprintf(index, sizeof index, "%zu", i);
    pointer2(ptr, "outputs", index);
    if (!json_is_object(out))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "an output is an object with a name");
    const char *key;
    json_t *value;
    json_object_foreach(out, key, value)
    {
        if (strcmp(key, "name") != 0 && strcmp(key, "parameters") != 0) {
            pointer2(ptr, "outputs", index);
            pointer_append(ptr, key);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown member \"%.64s\" of an output "
                              "(members are name, parameters)",
                              key);
        }
    }
    pointer2(ptr, "outputs", index);
    pointer_append(ptr, "name");
    const char *name = json_string_value(json_object_get(out, "name"));
    int s = 0;
    while (name && s < ATTN_STAGE_COUNT &&
           strcmp(name, attn_stage_name((attn_stage)s)) != 0)
        s++;
    if (!name || s == ATTN_STAGE_COUNT) {
        char stages[SCHEMA_LIST_MAX];
        schema_stage_list(stages);
        return codec_fail(err, ERR_INVALID_RETURN, ptr,
                          "%s%.64s%s (outputs are %s)",
                          name ? "unknown output \"" : "an output needs a name",
                          name ? name : "", name ? "\"" : "", stages);
    }
    if (*want & ATTN_WANT(s))
        return codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                          "output %s is asked for twice", name);
    *want |= ATTN_WANT(s);
    bool binary = binary_output;
    json_t *params = json_object_get(out, "parameters");
    pointer2(ptr, "outputs", index);
    pointer_append(ptr, "parameters");
    if (params && !json_is_object(params))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "output %s: parameters must be an object", name);
    json_object_foreach(params, key, value)
    {
        pointer2(ptr, "outputs", index);
        pointer_append(ptr, "parameters");
        pointer_append(ptr, key);
        if (strcmp(key, "binary_data") != 0)
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "output %s: unknown parameter \"%.64s\" (an "
                              "output takes binary_data)",
                              name, key);
        if (!json_is_boolean(value))
            return codec_fail(err, ERR_WRONG_TYPE, ptr,
                              "output %s: binary_data must be true or false",
                              name);
        binary = json_is_true(value);
    }
    plan->outputs[plan->output_count++] = (attn_stage)s;
    plan->binary[s] = binary;
    return true;
}

static bool read_outputs(oip_reader *rd, json_t *outputs, oip_reply_plan *plan,
                         codec_error *err)
{
    if (!outputs)
        return true; /* the defaults of /v1, listed once validated */
    char ptr[CODEC_POINTER_MAX];
    pointer2(ptr, "outputs", NULL);
    if (!json_is_array(outputs))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "outputs must be an array of {\"name\": stage}");
    schema_value *want = &rd->fields.value[API_RETURN];
    for (size_t i = 0; i < json_array_size(outputs); i++)
        if (!read_output(json_array_get(outputs, i), i, plan, &want->stages,
                         rd->binary_output, err))
            return false;
    want->present = true;
    return true;
}

/* ---- the envelope ------------------------------------------------------- */

static const char *const request_members[] = {"id", "parameters", "inputs",
                                              "outputs", "model_name"};

static bool read_envelope(json_t *root, oip_reply_plan *plan, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX] = "";
    if (!json_is_object(root))
        return codec_fail(err, ERR_INVALID_BODY, ptr,
                          "an inference request is a JSON object");
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        size_t k = 0;
        while (k < 5 && strcmp(request_members[k], key) != 0)
            k++;
        if (k == 5) {
            pointer2(ptr, key, NULL);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown member \"%.64s\" of an inference "
                              "request (members are id, parameters, inputs, "
                              "outputs)",
                              key);
        }
    }
    json_t *model = json_object_get(root, "model_name");
    if (model && (!json_is_string(model) ||
                  strcmp(json_string_value(model), OIP_MODEL_NAME) != 0)) {
        pointer2(ptr, "model_name", NULL);
        return codec_fail(err, ERR_INVALID_BODY, ptr,
                          "model_name must be \"" OIP_MODEL_NAME
                          "\", the model of this path");
    }
    json_t *id = json_object_get(root, "id");
    if (id && !json_is_string(id)) {
        pointer2(ptr, "id", NULL);
        return codec_fail(err, ERR_WRONG_TYPE, ptr, "id must be a string");
    }
    if (id) {
        plan->id = strdup(json_string_value(id));
        if (!plan->id)
            return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    }
    return true;
}

/* ---- errors of the rules between fields --------------------------------- */

/* validate_request() points at a /v1 member ("/x/1/2", "/num_heads"): the
 * pointer moves to the input or parameter that carried it, and the message
 * names it when it does not already begin with its name. */
static void repoint(const oip_reader *rd, codec_error *err)
{
    if (err->pointer[0] != '/')
        return;
    char token[CODEC_POINTER_MAX];
    size_t len = strcspn(err->pointer + 1, "/");
    memcpy(token, err->pointer + 1, len);
    token[len] = '\0';
    int f = schema_field_of(token);
    if (f < 0)
        return;
    char prefix[CODEC_POINTER_MAX + 16];
    if (f == API_RETURN) {
        pointer2(err->pointer, "outputs", NULL);
        snprintf(prefix, sizeof prefix, "outputs");
    } else if (api_schema[f].kind == SCHEMA_TENSOR) {
        if (rd->input_of[f] >= 0)
            input_pointer(err->pointer, (size_t)rd->input_of[f], NULL);
        else
            pointer2(err->pointer, "inputs", NULL);
        snprintf(prefix, sizeof prefix, "input %s", token);
    } else {
        pointer2(err->pointer, "parameters", token);
        snprintf(prefix, sizeof prefix, "parameter %s", token);
    }
    if (strncmp(err->detail, token, len) == 0 &&
        (err->detail[len] == ' ' || err->detail[len] == ':'))
        return;
    /* "prefix: detail", cut to fit */
    size_t head = strlen(prefix) + 2, len_detail = strlen(err->detail);
    if (head + len_detail >= sizeof err->detail)
        len_detail = sizeof err->detail - head - 1;
    memmove(err->detail + head, err->detail, len_detail);
    err->detail[head + len_detail] = '\0';
    memcpy(err->detail, prefix, head - 2);
    memcpy(err->detail + head - 2, ": ", 2);
}

/* ---- the request -------------------------------------------------------- */

bool oip_json_length(const char *value, size_t len, size_t *json_len,
                     codec_error *err)
{
    *json_len = len;
    if (!value)
        return true;
    size_t digits = strspn(value, "0123456789");
    if (digits == 0 || value[digits] != '\0' || digits > OIP_LENGTH_DIGITS_MAX)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, NULL,
                          "Inference-Header-Content-Length must be the "
                          "byte count of the body's JSON");
    unsigned long long n = strtoull(value, NULL, 10);
    if (n > len)
        return codec_fail(err, ERR_INVALID_BINARY_DATA, NULL,
                          "Inference-Header-Content-Length is %llu but the "
                          "body has %zu bytes",
                          n, len);
    *json_len = (size_t)n;
    return true;
}

/* Reads a parsed request (root; with the fast reader's flattened data, or
 * NULL) into req and plan. */
static bool decode_root(json_t *root, const oip_fast *fast, const char *body,
                        size_t len, size_t json_len,
                        const request_limits *limits, api_request *req,
                        oip_reply_plan *plan, codec_error *err)
{
    memset(req, 0, sizeof *req);
    memset(plan, 0, sizeof *plan);
    memset(err, 0, sizeof *err);
    oip_reader rd = {.limits = limits,
                     .fast = fast,
                     .budget = limits->max_elements,
                     .binary = (const unsigned char *)body + json_len,
                     .binary_len = len - json_len};
    for (int f = 0; f < API_FIELD_COUNT; f++)
        rd.input_of[f] = -1;
    bool ok = read_envelope(root, plan, err) &&
              (!json_object_get(root, "parameters") ||
               read_parameters(&rd, json_object_get(root, "parameters"), plan,
                               err)) &&
              read_inputs(&rd, json_object_get(root, "inputs"), err) &&
              read_outputs(&rd, json_object_get(root, "outputs"), plan, err);
    if (ok && !validate_request(&rd.fields, limits, req, err)) {
        repoint(&rd, err);
        ok = false;
    }
    if (ok && !json_object_get(root, "outputs"))
        for (int s = 0; s < ATTN_STAGE_COUNT; s++)
            if (req->want & ATTN_WANT(s)) {
                plan->outputs[plan->output_count++] = (attn_stage)s;
                plan->binary[s] = rd.binary_output;
            }
    api_fields_free(&rd.fields);
    if (!ok) {
        api_request_free(req);
        oip_reply_plan_free(plan);
    }
    return ok;
}

/* oip_decode_jansson() under the parse account the caller opened. */
static bool decode_jansson(const char *body, size_t len, size_t json_len,
                           const request_limits *limits, api_request *req,
                           oip_reply_plan *plan, codec_error *err)
{
    if (parse_json_nul_byte(body, json_len, err)) {
        memset(req, 0, sizeof *req);
        memset(plan, 0, sizeof *plan);
        return false;
    }
    json_error_t jerr;
    json_t *root;
    bool fits = parse_json_loadb(
        body, json_len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &root,
        &jerr, err);
    if (!root) {
        memset(req, 0, sizeof *req);
        memset(plan, 0, sizeof *plan);
        if (!fits)
            return false;
        if (json_len == 0)
            return codec_fail(err, ERR_INVALID_JSON, NULL,
                              "the request body is empty; send an inference "
                              "request");
        if (parse_json_number_overflow(
                body, json_len, &jerr,
                JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, err))
            return false;
        return codec_fail(err, ERR_INVALID_JSON, NULL,
                          "%sinvalid JSON at line %d, column %d: %s",
                          json_len < len ? "the JSON header (the first "
                                           "Inference-Header-Content-Length "
                                           "bytes) is "
                                         : "",
                          jerr.line, jerr.column, jerr.text);
    }
    bool ok =
        decode_root(root, NULL, body, len, json_len, limits, req, plan, err);
    json_decref(root);
    return ok;
}

bool oip_decode_jansson(const char *body, size_t len, size_t json_len,
                        const request_limits *limits, api_request *req,
                        oip_reply_plan *plan, codec_error *err)
{
    parse_account account;
    parse_account_open(&account, parse_budget_account_limit(len));
    bool ok = decode_jansson(body, len, json_len, limits, req, plan, err);
    parse_account_close(&account);
    return ok;
}

bool oip_decode(const char *body, size_t len, size_t json_len,
                const request_limits *limits, api_request *req,
                oip_reply_plan *plan, codec_error *err)
{
    parse_account account;
    parse_account_open(&account, parse_budget_account_limit(len));
    oip_fast fast;
    bool ok = false;
    if (oip_parse_fast(body, json_len, limits->max_elements, &fast)) {
        ok = decode_root(fast.root, &fast, body, len, json_len, limits, req,
                         plan, err);
        oip_fast_free(&fast);
        /* any refusal is worded from jansson's reading */
    }
    if (!ok)
        ok = decode_jansson(body, len, json_len, limits, req, plan, err);
    parse_account_close(&account);
    return ok;
}

void oip_reply_plan_free(oip_reply_plan *plan)
{
    free(plan->id);
    memset(plan, 0, sizeof *plan);
}
