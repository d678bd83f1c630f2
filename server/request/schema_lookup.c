/*
 * schema_lookup.c - what reads api_schema[] by name: pointers, the rows of
 * a name (and of a mistyped one), the lists of fields and stages, the
 * checks of a tensor's numbers.  The rows themselves are schema.c's.
 */
#include "server/request/schema.h"

#include "core/attention.h"
#include "core/softmax_rows.h"
#include "core/tensor.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t schema_element_count(const schema_tensor *t)
{
    size_t count = 1;
    for (int i = 0; i < t->rank; i++)
        count *= t->dims[i]; /* bounded by the parser's element budget */
    return count;
}

const char *schema_pointer(api_field f, char out[CODEC_POINTER_MAX])
{
    codec_pointer(out, api_schema[f].name, NULL, 0);
    return out;
}

void schema_element_pointer(char out[CODEC_POINTER_MAX], api_field f,
                            const schema_tensor *t, size_t flat)
{
    size_t index[SCHEMA_MAX_RANK];
    for (int i = t->rank - 1; i >= 0; i--) {
        index[i] = flat % t->dims[i];
        flat /= t->dims[i];
    }
    codec_pointer(out, api_schema[f].name, index, t->rank);
}

const char *schema_kind_name(schema_kind kind)
{
    static const char *const names[] = {
        [SCHEMA_TENSOR] = "tensor",
        [SCHEMA_INTEGER] = "integer",
        [SCHEMA_NUMBER] = "number",
        [SCHEMA_BOOLEAN] = "boolean",
        [SCHEMA_ENUM] = "enum",
        [SCHEMA_STAGES] = "stages",
        [SCHEMA_LABELS] = "labels",
        [SCHEMA_OBJECT] = "object",
        [SCHEMA_STATE_DICT] = "state_dict",
        [SCHEMA_STRING] = "string",
    };
    return names[kind];
}

int schema_field_of(const char *name)
{
    for (int f = 0; f < API_FIELD_COUNT; f++)
        if (strcmp(api_schema[f].name, name) == 0)
            return f;
    return -1;
}

const char *schema_torch_name_given(const api_fields *fields)
{
    for (int f = 0; f < API_FIELD_COUNT; f++)
        if (api_schema[f].gives && fields->tensor[f].present &&
            !(api_schema[f].groups & SCHEMA_FOLLOWS_LAYOUT))
            return api_schema[f].name;
    return NULL;
}

/* Edits a mistyped name may be away from the name it meant: two catches
 * "num_head", "in_proj_weigth" and "key_pading"; more would take the
 * short names (q, k, v, x, w_q ...) for each other. */
#define SCHEMA_SUGGEST_EDITS 2

/* The longest name compared; longer ones are no field's. */
#define SCHEMA_SUGGEST_MAX 32

/* The optimal string alignment distance of a and b (each at most
 * SCHEMA_SUGGEST_MAX bytes), letters compared without case. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t d[SCHEMA_SUGGEST_MAX + 1][SCHEMA_SUGGEST_MAX + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t change = tolower((unsigned char)a[i - 1]) !=
                            tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + change;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

int schema_suggest(const char *name, bool (*takes)(api_field f))
{
    size_t len = strlen(name);
    if (len > SCHEMA_SUGGEST_MAX)
        return -1;
    int best = -1;
    size_t best_distance = SCHEMA_SUGGEST_EDITS + 1;
    bool tie = false;
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        const char *row = api_schema[f].name;
        if (takes && !takes((api_field)f))
            continue;
        if (strcasecmp(row, name) == 0)
            return f;
        size_t row_len = strlen(row);
        /* a short name is a typo of another only by one edit */
        size_t most = row_len < 4 ? 1 : SCHEMA_SUGGEST_EDITS;
        size_t distance = edit_distance(name, len, row, row_len);
        if (distance > most || distance > best_distance)
            continue;
        tie = distance == best_distance;
        if (!tie) {
            best = f;
            best_distance = distance;
        }
    }
    return tie ? -1 : best;
}

int schema_tensor_of(const char *name)
{
    int f = schema_field_of(name);
    return f >= 0 && api_schema[f].kind == SCHEMA_TENSOR ? f : -1;
}

error_code schema_whole_code(const char *pointer)
{
    char token[4][CODEC_POINTER_MAX];
    size_t depth = codec_pointer_tokens(pointer, 4, token);
    int f = depth ? schema_field_of(token[0]) : -1;
    if (f < 0)
        return ERR_NONE;
    const schema_field *row = &api_schema[f];
    switch (row->kind) {
    case SCHEMA_INTEGER:
        return depth == 1 ? row->invalid_code : ERR_NONE;
    case SCHEMA_OBJECT:
        for (size_t m = 0; depth == 2 && m < row->member_count; m++)
            if (strcmp(row->members[m].name, token[1]) == 0)
                return row->members[m].kind == SCHEMA_INTEGER
                           ? row->members[m].invalid_code
                           : ERR_NONE;
        return ERR_NONE;
    case SCHEMA_TENSOR: /* its elements, or its binary form's shape */
        if (depth == 3 && strcmp(token[1], "shape") == 0)
            return SCHEMA_DIM_CODE;
        return row->whole && depth == 1 + (size_t)row->max_rank
                   ? row->invalid_code
                   : ERR_NONE;
    case SCHEMA_STATE_DICT: /* a binary tensor's shape */
        return depth == 4 && strcmp(token[2], "shape") == 0 ? SCHEMA_DIM_CODE
                                                            : ERR_NONE;
    default:
        return ERR_NONE;
    }
}

int schema_choice_of(api_field f, const char *name)
{
    const schema_field *row = &api_schema[f];
    for (size_t i = 0; name && i < row->choice_count; i++)
        if (strcmp(row->choices[i].name, name) == 0)
            return row->choices[i].value;
    return -1;
}

/* Joins count names (name_of(i)) with ", " into out. */
static void join(char out[SCHEMA_LIST_MAX], int count,
                 const char *(*name_of)(int))
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        const char *name = name_of(i);
        size_t need = strlen(name) + (i ? 2 : 0);
        if (len + need >= SCHEMA_LIST_MAX)
            break; /* names are short: see the assertion below */
        if (i) {
            memcpy(out + len, ", ", 2);
            len += 2;
        }
        memcpy(out + len, name, strlen(name) + 1);
        len += strlen(name);
    }
}

static const char *field_name(int f) { return api_schema[f].name; }
static const char *stage_name(int s) { return attn_stage_name(s); }

void schema_field_list(char out[SCHEMA_LIST_MAX])
{
    join(out, API_FIELD_COUNT, field_name);
}

void schema_stage_list(char out[SCHEMA_LIST_MAX])
{
    join(out, ATTN_STAGE_COUNT, stage_name);
}

/* every field and stage name is at most 16 bytes: 18 with ", " */
_Static_assert(API_FIELD_COUNT * 18 < SCHEMA_LIST_MAX &&
                   ATTN_STAGE_COUNT * 18 < SCHEMA_LIST_MAX,
               "the lists of fields and stages fit SCHEMA_LIST_MAX");

/* Numbers checked by the core's vectorised row loop between the tests for
 * a bad one: long enough to run at its speed, short enough that finding the
 * bad one's index rescans little. */
#define SCHEMA_FINITE_BLOCK 4096

/* Whether an infinity or a NaN is among numbers [from, to). */
static bool any_nonfinite(const schema_tensor *t, size_t from, size_t to)
{
    return t->is_float32
               ? !softmax_all_finite_f32((const float *)t->data + from,
                                         to - from)
               : !softmax_all_finite_f64((const double *)t->data + from,
                                         to - from);
}

size_t schema_first_nonfinite(const schema_field *row, const schema_tensor *t,
                              size_t count)
{
    for (size_t from = 0; from < count; from += SCHEMA_FINITE_BLOCK) {
        size_t to = count - from < SCHEMA_FINITE_BLOCK
                        ? count
                        : from + SCHEMA_FINITE_BLOCK;
        if (!any_nonfinite(t, from, to))
            continue;
        for (size_t i = from; i < to; i++) {
            double v = schema_number(t, i);
            if (!isfinite(v) && !(row->minus_infinity && v == -INFINITY))
                return i;
        }
    }
    return count;
}

size_t schema_earlier_equal(const schema_field *row, const schema_tensor *t,
                            size_t i)
{
    for (size_t j = 0; row->distinct && j < i; j++)
        if (schema_number(t, j) == schema_number(t, i))
            return j;
    return i;
}

void api_fields_free(api_fields *fields)
{
    /* a request gives a few of the fields: the others cost a test, not
     * two calls */
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        if (fields->tensor[f].data)
            free(fields->tensor[f].data);
        if (fields->value[f].labels.names)
            api_labels_free(&fields->value[f].labels);
    }
    memset(fields, 0, sizeof *fields);
}

void schema_quote_number(const api_fields *fields, const char *pointer,
                         double value, char out[NUMBER_WORDS_MAX])
{
    if (fields->literal)
        fields->literal(fields->text, fields->text_len, pointer, value, out);
    else
        number_words(value, out);
}

bool schema_oip_parameter(api_field f)
{
    schema_kind kind = api_schema[f].kind;
    return kind != SCHEMA_TENSOR && kind != SCHEMA_LABELS &&
           !api_schema[f].oip_instead;
}
