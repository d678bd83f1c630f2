/*
 * parse_json.c - body → raw_request with jansson: syntax, unknown fields and
 * the structure of every tensor (rank, ragged rows, leaf types), each error
 * with a JSON Pointer to the element at fault.
 */
#include "server/json/parse_json.h"

#include "server/json/base64.h"
#include "server/json/half.h"
#include "server/json/literal_walk.h"
#include "server/base/parse_budget.h"

#include <errno.h>
#include <float.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *leaf_words(const schema_field *spec)
{
    return spec->leaf == SCHEMA_LEAF_BOOL     ? "booleans"
           : spec->leaf == SCHEMA_LEAF_NUMBER ? "numbers"
                                              : "numbers or booleans";
}

/* "2", or "2 or 3" where the field allows a range of ranks. */
static const char *rank_words(const schema_field *spec, char out[32])
{
    if (spec->max_rank > spec->min_rank)
        snprintf(out, 32, "%d or %d", spec->min_rank, spec->max_rank);
    else
        snprintf(out, 32, "%d", spec->min_rank);
    return out;
}

/* Rank and dims from the first element at each level. */
static bool tensor_shape(json_t *v, const schema_field *spec, schema_tensor *t,
                         codec_error *err)
{
    size_t zero[SCHEMA_MAX_RANK] = {0};
    char ptr[CODEC_POINTER_MAX], ranks[32];
    t->rank = 0;
    while (json_is_array(v)) {
        codec_pointer(ptr, spec->name, zero, t->rank);
        if (t->rank == spec->max_rank)
            return codec_fail(err, ERR_WRONG_RANK, ptr,
                              "%s nests deeper than %d levels of arrays",
                              spec->name, spec->max_rank);
        if (json_array_size(v) == 0)
            return codec_fail(err, ERR_EMPTY_ARRAY, ptr,
                              "%s must not contain an empty array", spec->name);
        t->dims[t->rank++] = json_array_size(v);
        v = json_array_get(v, 0);
    }
    codec_pointer(ptr, spec->name, zero, 0);
    if (t->rank == 0)
        return codec_fail(err, ERR_WRONG_TYPE, ptr, "%s must be an array of %s",
                          spec->name, leaf_words(spec));
    if (t->rank < spec->min_rank)
        return codec_fail(err, ERR_WRONG_RANK, ptr,
                          "%s must have %s dimensions, found %d", spec->name,
                          rank_words(spec, ranks), t->rank);
    t->is_bool = spec->leaf == SCHEMA_LEAF_BOOL ||
                 (spec->leaf == SCHEMA_LEAF_EITHER && json_is_boolean(v));
    return true;
}

static const char *type_words(json_t *v)
{
    return json_is_array(v)     ? "an array (nested too deep)"
           : json_is_string(v)  ? "a string"
           : json_is_boolean(v) ? "a boolean"
           : json_is_null(v)    ? "null"
           : json_is_number(v)  ? "a number"
                                : "an object";
}

static bool tensor_leaf(json_t *v, schema_tensor *t, size_t flat,
                        const char *ptr, codec_error *err)
{
    if (t->is_bool) {
        if (!json_is_boolean(v))
            return codec_fail(err, ERR_WRONG_TYPE, ptr,
                              "expected a boolean, found %s", type_words(v));
        ((uint8_t *)t->data)[flat] = json_is_true(v);
        return true;
    }
    if (!json_is_number(v))
        return codec_fail(err,
                          json_is_array(v) ? ERR_WRONG_RANK : ERR_WRONG_TYPE,
                          ptr, "expected a number, found %s", type_words(v));
    ((double *)t->data)[flat] = json_number_value(v);
    return true;
}

/* Fills t->data walking every element; ragged rows and wrong leaves fail. */
static bool tensor_fill(json_t *v, const schema_field *spec, schema_tensor *t,
                        int depth, size_t *index, size_t *flat,
                        codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    if (depth == t->rank) {
        codec_pointer(ptr, spec->name, index, depth);
        return tensor_leaf(v, t, (*flat)++, ptr, err);
    }
    if (!json_is_array(v) || json_array_size(v) != t->dims[depth]) {
        codec_pointer(ptr, spec->name, index, depth);
        if (!json_is_array(v))
            return codec_fail(err, ERR_WRONG_RANK, ptr,
                              "expected an array of %zu, found %s",
                              t->dims[depth], type_words(v));
        return codec_fail(err, ERR_RAGGED_ARRAY, ptr,
                          "expected %zu elements (as in the first row), "
                          "found %zu",
                          t->dims[depth], json_array_size(v));
    }
    for (size_t i = 0; i < t->dims[depth]; i++) {
        index[depth] = i;
        if (!tensor_fill(json_array_get(v, i), spec, t, depth + 1, index, flat,
                         err))
            return false;
    }
    return true;
}

/* The binary form of a tensor: {"shape": [...], "base64": "..."}, raw
 * little-endian numbers of the request's dtype (wire). */
static bool tensor_parse_binary(json_t *v, const schema_field *spec,
                                schema_tensor *t, api_wire wire, size_t *budget,
                                codec_error *err)
{
    char ptr[CODEC_POINTER_MAX], ranks[32];
    json_t *shape = json_object_get(v, "shape");
    json_t *data = json_object_get(v, "base64");
    const char *key;
    json_t *value;
    json_object_foreach(v, key, value)
    {
        if (strcmp(key, "shape") != 0 && strcmp(key, "base64") != 0) {
            codec_pointer(ptr, spec->name, NULL, 0);
            if (!codec_pointer_append(ptr, sizeof ptr, key))
                codec_pointer(ptr, spec->name, NULL, 0);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "a binary tensor has only \"shape\" and "
                              "\"base64\"");
        }
    }
    codec_pointer(ptr, spec->name, NULL, 0);
    if (spec->leaf == SCHEMA_LEAF_BOOL)
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "%s takes booleans, which have no binary form",
                          spec->name);
    codec_pointer(ptr, spec->name, NULL, 0);
    codec_pointer_append(ptr, sizeof ptr, "shape");
    if (!shape)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "a binary tensor needs \"shape\"");
    if (!json_is_array(shape) ||
        json_array_size(shape) < (size_t)spec->min_rank ||
        json_array_size(shape) > (size_t)spec->max_rank)
        return codec_fail(err, ERR_WRONG_RANK, ptr,
                          "%s needs a shape of %s dimensions", spec->name,
                          rank_words(spec, ranks));
    t->rank = (int)json_array_size(shape);
    size_t count = 1;
    for (int i = 0; i < t->rank; i++) {
        json_t *dim = json_array_get(shape, (size_t)i);
        double d = json_number_value(dim);
        if (!json_is_number(dim) || !parse_json_binary_dim(d))
            return codec_fail(err, SCHEMA_DIM_CODE, ptr,
                              "shape holds whole numbers of at least 1");
        t->dims[i] = (size_t)d;
        if (!tensor_mul_size(count, t->dims[i], &count))
            count = SIZE_MAX;
    }
    codec_pointer(ptr, spec->name, NULL, 0);
    codec_pointer_append(ptr, sizeof ptr, "base64");
    if (!data)
        return codec_fail(err, ERR_MISSING_FIELD, ptr,
                          "a binary tensor needs \"base64\"");
    if (!json_is_string(data))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "base64 must be a string of little-endian numbers");
    return parse_json_binary_numbers(spec, t, count, json_string_value(data),
                                     json_string_length(data), wire, budget,
                                     err);
}

/* The bytes base64 text of len characters decodes to, when it is whole
 * (its padding counted off). */
static size_t base64_length(const char *text, size_t len)
{
    size_t pad = 0;
    while (pad < 2 && pad < len && text[len - 1 - pad] == '=')
        pad++;
    return len / 4 * 3 - pad;
}

/* When `bytes` are count numbers of the other dtype: the words that say
 * so (binary tensors hold the request's dtype, float64 by default); else
 * "". */
static const char *other_dtype_hint(size_t bytes, size_t count, size_t elem)
{
    if (elem != HALF_SIZE && bytes == count * HALF_SIZE)
        return "; they are as many 16-bit numbers: send \"dtype\": "
               "\"float16\" or \"bfloat16\" (binary tensors hold the "
               "request's dtype, float64 unless it says)";
    if (elem == sizeof(double) && bytes == count * sizeof(float))
        return "; they are as many float32 numbers: send \"dtype\": "
               "\"float32\" (binary tensors hold the request's dtype, "
               "float64 unless it says)";
    if (elem == sizeof(float) && bytes == count * sizeof(double))
        return "; they are as many float64 numbers: leave \"dtype\" out "
               "(float64), or send float32 bytes";
    return "";
}

bool parse_json_binary_numbers(const schema_field *spec, schema_tensor *t,
                               size_t count, const char *text, size_t text_len,
                               api_wire wire, size_t *budget, codec_error *err)
{
    size_t elem = api_wire_size(wire);
    char ptr[CODEC_POINTER_MAX];
    codec_pointer(ptr, spec->name, NULL, 0);
    codec_pointer_append(ptr, sizeof ptr, "base64");
    if (count > *budget)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                          "the request holds more numbers than allowed "
                          "(--max-elements)");
    *budget -= count;
    size_t bytes;
    if (text_len / 4 * 3 > count * elem + 2)
        return codec_fail(
            err, ERR_SHAPE_MISMATCH, ptr,
            "the data is longer than shape × %zu bytes%s", elem,
            other_dtype_hint(base64_length(text, text_len), count, elem));
    /* the bytes are decoded where they stay: float32 as float
     * (t->is_float32), float64 as double */
    t->data = malloc(text_len / 4 * 3 + 1);
    if (!t->data)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    if (!base64_decode(text, text_len, t->data, &bytes))
        return codec_fail(err, ERR_INVALID_BASE64, ptr,
                          "not valid base64 (RFC 4648, padded)");
    if (bytes != count * elem)
        return codec_fail(err, ERR_SHAPE_MISMATCH, ptr,
                          "%zu bytes, but the shape needs %zu numbers of %zu "
                          "bytes%s",
                          bytes, count, elem,
                          other_dtype_hint(bytes, count, elem));
    t->is_float32 = elem == sizeof(float);
    if (elem == HALF_SIZE && !half_widen(wire, t, count))
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    size_t bad = schema_first_nonfinite(spec, t, count);
    if (bad < count)
        return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                          spec->minus_infinity
                              ? "element %zu is NaN or +∞ (a mask adds finite "
                                "numbers, and −∞ to hide a key)"
                              : "element %zu is not a finite number",
                          bad);
    t->present = true;
    return true;
}

bool parse_json_tensor(json_t *v, const schema_field *spec, schema_tensor *t,
                       api_wire wire, size_t *budget, codec_error *err)
{
    if (json_is_object(v))
        return tensor_parse_binary(v, spec, t, wire, budget, err);
    if (!tensor_shape(v, spec, t, err))
        return false;
    size_t count = 1;
    for (int i = 0; i < t->rank; i++)
        if (!tensor_mul_size(count, t->dims[i], &count))
            count = SIZE_MAX;
    char ptr[CODEC_POINTER_MAX];
    codec_pointer(ptr, spec->name, NULL, 0);
    if (count > *budget)
        return codec_fail(err, ERR_LIMIT_EXCEEDED, ptr,
                          "the request holds more numbers than allowed "
                          "(--max-elements)");
    *budget -= count;
    size_t elem = t->is_bool ? 1 : sizeof(double);
    t->data = malloc(count * elem);
    if (!t->data)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL,
                          "the server could not allocate %zu bytes",
                          count * elem);
    size_t index[SCHEMA_MAX_RANK] = {0}, flat = 0;
    if (!tensor_fill(v, spec, t, 0, index, &flat, err))
        return false;
    t->present = true;
    return true;
}

/* The non-JSON number Python's json.dumps writes (-Infinity, Infinity,
 * NaN) that jansson stopped at, byte `at` of text (its token's end, or
 * just after a minus sign), or NULL. */
static const char *python_number(const char *text, size_t len, size_t at)
{
    static const char *const words[] = {"-Infinity", "Infinity", "NaN"};
    size_t from = at > 9 ? at - 9 : 0;
    for (size_t i = from; i <= at && i < len; i++)
        for (size_t w = 0; w < 3; w++) {
            size_t n = strlen(words[w]);
            if (n <= len - i && memcmp(text + i, words[w], n) == 0 &&
                i + n >= at)
                return words[w];
        }
    return NULL;
}

/* The literal that holds byte `end` - 1 of the text (overflow_pointer()). */
typedef struct {
    size_t end;
    char *ptr;
} literal_at;

static bool find_literal_at(void *ctx, const literal_path *path,
                            const char *text, size_t at, size_t n)
{
    (void)text;
    literal_at *want = ctx;
    if (!(at < want->end && want->end <= at + n))
        return true;
    literal_pointer(path, want->ptr);
    return false;
}

/* The pointer of the number that ends at byte `end` of the JSON text
 * [text, text + len), which jansson read up to there (so the text before
 * it is valid JSON).  The parent's pointer when the full one does not fit,
 * "" for a number that is the whole text. */
static void overflow_pointer(const char *text, size_t len, size_t end,
                             char ptr[CODEC_POINTER_MAX])
{
    literal_at want = {end, ptr};
    ptr[0] = '\0';
    literal_walk(text, len < end ? len : end, find_literal_at, &want);
}

/* Is text[0, run) one number as JSON writes it (RFC 8259: -?(0|[1-9]d*)
 * (.d+)?([eE][+-]?d+)?)?  strtod() reads more: "1.", ".5", "01", "1.e5". */
static bool json_number_whole(const char *text, size_t run)
{
    size_t i = text[0] == '-';
    size_t digits = strspn(text + i, "0123456789");
    if (digits == 0 || (digits > 1 && text[i] == '0'))
        return false;
    i += digits;
    if (i < run && text[i] == '.') {
        digits = strspn(text + i + 1, "0123456789");
        if (digits == 0)
            return false;
        i += 1 + digits;
    }
    if (i < run && (text[i] == 'e' || text[i] == 'E')) {
        i += text[i + 1] == '+' || text[i + 1] == '-' ? 2 : 1;
        digits = strspn(text + i, "0123456789");
        if (digits == 0)
            return false;
        i += digits;
    }
    return i == run;
}

/* Writes 0 over every JSON number of text[0, len) that is beyond a double
 * (padded with spaces, so that every other byte keeps its place); a run of
 * number characters that JSON would not read as a number is left for the
 * parser to refuse.  text ends with a NUL at text[len]. */
static void zero_overflowing_numbers(char *text, size_t len)
{
    for (size_t i = 0; i < len;) {
        if (text[i] == '"') { /* a string: its bytes are not numbers */
            for (i++; i < len && text[i] != '"'; i++)
                i += text[i] == '\\';
            i++;
            continue;
        }
        if (text[i] != '-' && (text[i] < '0' || text[i] > '9')) {
            i++;
            continue;
        }
        size_t run = strspn(text + i, "-+0123456789.eE");
        char *after;
        errno = 0;
        double value = strtod(text + i, &after);
        if (errno == ERANGE && fabs(value) == HUGE_VAL &&
            after == text + i + run && json_number_whole(text + i, run)) {
            text[i] = '0';
            memset(text + i + 1, ' ', run - 1);
        }
        i += run;
    }
}

bool parse_json_loadb(const char *text, size_t len, size_t flags, json_t **root,
                      json_error_t *jerr, codec_error *err)
{
    parse_account *a = parse_account_current();
    if (a)
        a->refused = false;
    *root = json_loadb(text, len, flags, jerr);
    if (*root || !a || !a->refused)
        return true;
    return codec_fail(err, ERR_LIMIT_EXCEEDED, NULL,
                      "reading these %zu bytes of JSON would take more than "
                      "the %zu bytes of memory the body may hold while it is "
                      "parsed: it holds too many objects, arrays or strings "
                      "for its size",
                      len, a->limit);
}

bool parse_json_nul_byte(const char *text, size_t len, codec_error *err)
{
    const char *nul = len ? memchr(text, '\0', len) : NULL;
    if (!nul)
        return false;
    int line = 1, column = 1;
    for (const char *c = text; c < nul; c++) {
        line += *c == '\n';
        column = *c == '\n' ? 1 : column + 1;
    }
    return !codec_fail(err, ERR_INVALID_JSON, NULL,
                       "invalid JSON at line %d, column %d: a NUL byte, which "
                       "JSON does not allow (inside a string, write \\u0000)",
                       line, column);
}

bool parse_json_number_overflow(const char *text, size_t len,
                                json_error_t *jerr, int flags, codec_error *err)
{
    if (json_error_code(jerr) != json_error_numeric_overflow ||
        jerr->position <= 0 || (size_t)jerr->position > len)
        return false;
    /* the rest of the text must be JSON too: else its first other error
     * is the one to report */
    char *zeroed = malloc(len + 1);
    if (!zeroed)
        return false;
    memcpy(zeroed, text, len);
    zeroed[len] = '\0';
    zero_overflowing_numbers(zeroed, len);
    json_error_t other;
    json_t *doc;
    bool fits = parse_json_loadb(zeroed, len, (size_t)flags, &doc, &other, err);
    free(zeroed);
    if (!fits)
        return true; /* err says the tree does not fit its memory */
    if (!doc) {
        *jerr = other;
        return false;
    }
    json_decref(doc);
    size_t end = (size_t)jerr->position, start = end;
    while (start > 0 && text[start - 1] &&
           !strchr(",[{: \t\n\r", text[start - 1]))
        start--;
    char ptr[CODEC_POINTER_MAX];
    overflow_pointer(text, len, end, ptr);
    int shown = end - start > PARSE_JSON_QUOTE_MAX ? PARSE_JSON_QUOTE_MAX
                                                   : (int)(end - start);
    return !codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                       "%.*s%s does not fit in float64 (largest %g)", shown,
                       text + start, end - start > (size_t)shown ? "..." : "",
                       DBL_MAX);
}

/* The refusal of a body that holds one of the words Python's json.dumps
 * writes for a non-finite number (true, err set), or false: -Infinity
 * with how to send −∞ where it means something (a mask), NaN and
 * Infinity with where to look for them, as no field takes them. */
static bool python_number_refusal(const char *body, size_t len,
                                  const json_error_t *jerr, codec_error *err)
{
    const char *word = python_number(body, len, (size_t)jerr->position);
    if (!word)
        return false;
    if (word[0] != '-')
        return !codec_fail(err, ERR_INVALID_JSON, NULL,
                           "invalid JSON at line %d, column %d: JSON has "
                           "no %s (Python's json.dumps writes it; "
                           "allow_nan=False refuses it), and no field "
                           "takes it in any form: %s. Find it where the "
                           "array was made (numpy.isfinite(a).all(), "
                           "torch.isfinite(t).all())",
                           jerr->line, jerr->column, word,
                           word[0] == 'N'
                               ? "a NaN has no place in a softmax, and "
                                 "makes every number it meets NaN"
                               : "only −∞ hides a key, in a mask's binary "
                                 "form");
    return !codec_fail(err, ERR_INVALID_JSON, NULL,
                       "invalid JSON at line %d, column %d: JSON has "
                       "no %s (Python's json.dumps writes it; "
                       "allow_nan=False refuses it). Send −∞ in a "
                       "mask's binary form {\"shape\": [...], "
                       "\"base64\": \"...\"}, as a boolean mask, or "
                       "through attention_client",
                       jerr->line, jerr->column, word);
}

bool parse_json_jansson(const char *body, size_t len, size_t max_elements,
                        raw_request *raw, codec_error *err)
{
    memset(raw, 0, sizeof *raw);
    if (parse_json_nul_byte(body, len, err))
        return false;
    json_error_t jerr;
    int flags = JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL;
    json_t *root;
    if (!parse_json_loadb(body, len, (size_t)flags, &root, &jerr, err))
        return false;
    if (!root) {
        if (len == 0)
            return codec_fail(err, ERR_INVALID_JSON, NULL,
                              "the request body is empty; send a JSON object");
        if (parse_json_number_overflow(body, len, &jerr, flags, err))
            return false;
        if (python_number_refusal(body, len, &jerr, err))
            return false;
        return codec_fail(err, ERR_INVALID_JSON, NULL,
                          "invalid JSON at line %d, column %d: %s", jerr.line,
                          jerr.column, jerr.text);
    }
    raw->envelope = root;
    raw->whole_unsure = true; /* every number is a real to jansson */
    if (!json_is_object(root))
        return codec_fail(err, ERR_INVALID_BODY, "",
                          "the request body must be a JSON object");
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        if (schema_field_of(key) < 0) {
            char fields[SCHEMA_LIST_MAX], ptr[CODEC_POINTER_MAX] = "";
            schema_field_list(fields);
            if (!codec_pointer_append(ptr, sizeof ptr, key))
                return codec_fail(err, ERR_UNKNOWN_FIELD, "",
                                  "a field with a name of %zu bytes is not "
                                  "one of %s",
                                  strlen(key), fields);
            int meant = schema_suggest(key, NULL);
            if (meant >= 0)
                return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                                  "unknown field; did you mean \"%s\"? "
                                  "(fields are %s)",
                                  api_schema[meant].name, fields);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown field (fields are %s)", fields);
        }
    }
    /* in the order a person reads a request: x, context, weights, masks */
    size_t budget = max_elements;
    /* binary tensors hold numbers of the request's dtype (an unknown dtype
     * is reported later, by the decoder of the small fields) */
    int dtype = schema_choice_of(
        API_DTYPE,
        json_string_value(json_object_get(root, api_schema[API_DTYPE].name)));
    api_wire wire = dtype < 0 ? API_WIRE_FLOAT64 : (api_wire)dtype;
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        if (api_schema[f].kind != SCHEMA_TENSOR)
            continue;
        json_t *v = json_object_get(root, api_schema[f].name);
        if (v && !parse_json_tensor(v, &api_schema[f], &raw->fields.tensor[f],
                                    wire, &budget, err))
            return false;
    }
    return true;
}
