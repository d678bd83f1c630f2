/*
 * schema.h - the one table of POST /v1/attention's request fields.
 *
 * DESIGN
 * Each field is one row of api_schema[] (schema.c): its JSON name, its kind,
 * whether it is required, the limits of its kind, the codes its errors
 * carry, where its value lands in api_request (its binding), the groups it
 * belongs to (the fields that project x; the weights it gives) and how the
 * Open Inference Protocol says it when not as a parameter.  Everything that
 * knows the fields reads this table: both parsers (which members exist, how
 * each tensor may nest), the decoder of the small fields (kinds, ranges,
 * messages), the binding (bind.c), the weights' sources (weights.c), the
 * /v2 reader (oip_decode.c), the "fields are ..." message, the contract
 * (openapi.yaml's request schemas and docs/api.md's table of fields,
 * written by tools/gen_contract.c) and its test (tests/contract).  The rules
 * that relate fields to each other (shapes that must agree) live in validate.c
 * and positions.c.
 *
 * Adding a field: docs/architecture.md, "Where a change goes", says what
 * it takes (this row, its rule, its tests and docs, its page control);
 * make test-contract names what is missing.
 */
#ifndef SERVER_REQUEST_SCHEMA_H
#define SERVER_REQUEST_SCHEMA_H

#include "server/base/error_codes.h"
#include "server/base/service_limits.h"
#include "server/request/codec_error.h"
#include "server/request/number_words.h"
#include "server/request/request.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every request field; the order is the order of api_schema[], of the
 * "fields are ..." list and of the checks of a request. */
typedef enum {
    API_X,
    API_CONTEXT,
    API_W_Q,
    API_W_K,
    API_W_V,
    API_W_O,
    API_MASK,
    API_KEY_PADDING,
    API_NUM_HEADS,
    API_SCALE,
    API_DTYPE,
    API_RETURN,
    API_CAUSAL,
    API_TOKENS,
    API_CONTEXT_TOKENS,
    API_ENCODING,
    API_B_Q,
    API_B_K,
    API_B_V,
    API_B_O,
    API_LAYOUT,
    API_IN_PROJ_WEIGHT,
    API_IN_PROJ_BIAS,
    API_OUT_PROJ_WEIGHT,
    API_OUT_PROJ_BIAS,
    API_OUT_PROJ_DOT_WEIGHT,
    API_OUT_PROJ_DOT_BIAS,
    API_Q_PROJ_WEIGHT,
    API_K_PROJ_WEIGHT,
    API_V_PROJ_WEIGHT,
    API_Q,
    API_K,
    API_V,
    API_NUM_KV_HEADS,
    API_POSITIONS,
    API_CONTEXT_POSITIONS,
    API_WINDOW,
    API_ALIBI,
    API_ALIBI_SLOPES,
    API_ROPE,
    API_POSITIONAL_ENCODING,
    API_PAST_K,
    API_PAST_V,
    API_HEADS,
    API_ATTN_MASK,
    API_KEY_PADDING_MASK,
    API_IS_CAUSAL,
    API_AVERAGE_ATTN_WEIGHTS,
    API_NEED_WEIGHTS,
    API_BATCH_FIRST,
    API_STATE_DICT,
    API_BIAS_K,
    API_BIAS_V,
    API_ADD_ZERO_ATTN,
    API_MODULE,
    API_FIELD_COUNT
} api_field;

/* Largest position a request may give, 2^53 - 1: doubles hold every
 * integer up to 2^53 exactly, but 2^53 + 1 is read as 2^53, so a 2^53 may
 * not be what was sent; below it every whole number read is the one
 * written (RFC 7493's interoperable range), and distances stay exact. */
#define SCHEMA_MAX_POSITION 9007199254740991.0

/* The deepest tensor a field may hold: a batch of per-head q (B, h, n, d_k). */
#define SCHEMA_MAX_RANK 4

typedef enum {
    SCHEMA_TENSOR,     /* nested arrays, or a binary tensor {shape, base64}  */
    SCHEMA_INTEGER,    /* a whole number, at least min, at most its limit     */
    SCHEMA_NUMBER,     /* a finite number (> 0 when positive)                 */
    SCHEMA_BOOLEAN,    /* true or false                                       */
    SCHEMA_ENUM,       /* one of choices (a string)                           */
    SCHEMA_STAGES,     /* a list of the core's stage names                    */
    SCHEMA_LABELS,     /* a list of strings                                   */
    SCHEMA_OBJECT,     /* true (every member's default), false (off), or an
                          object of members, each a row of its own kind      */
    SCHEMA_STATE_DICT, /* an object of the SCHEMA_STATE_DICT_KEY rows'
                          tensors, their keys under one prefix
                          (state_dict.h)                                  */
    SCHEMA_STRING,     /* a string, read where it is used (state_dict.c)  */
} schema_kind;

/* The most members an object field has (rope's; schema.c checks it). */
#define SCHEMA_MEMBERS_MAX 3

/* The members of rope, in order. */
enum { API_ROPE_BASE, API_ROPE_DIMS, API_ROPE_STYLE };

/* What a tensor's leaves are; EITHER is decided by the first leaf. */
typedef enum {
    SCHEMA_LEAF_NUMBER,
    SCHEMA_LEAF_BOOL,
    SCHEMA_LEAF_EITHER
} schema_leaf;

typedef struct {
    const char *name;    /* as written in JSON                       */
    int value;           /* what it decodes to (an enum of the core) */
    const char *meaning; /* words for messages, or NULL              */
} schema_choice;

/* Where a field's value lands in api_request (bind.h): `to` is the offset
 * of the member it fills, by the converter `as`. */
typedef enum {
    SCHEMA_BIND_NONE,    /* no member of its own: a rule reads it         */
    SCHEMA_BIND_FLAG,    /* bool: true, or any choice but the first       */
    SCHEMA_BIND_DTYPE,   /* api_wire: the choice's value; and at `view`
                          * the tensor_dtype the core computes it in     */
    SCHEMA_BIND_STAGES,  /* unsigned: ATTN_WANT() bits                    */
    SCHEMA_BIND_COUNT,   /* size_t: the whole number; past `most`, most + 1 */
    SCHEMA_BIND_NUMBER,  /* double                                        */
    SCHEMA_BIND_NUMBERS, /* a tensor: its numbers in the request's dtype,
                          * owned at `to` and the core's view at `view` */
} schema_bind_as;

typedef struct {
    schema_bind_as as;
    size_t to;     /* offsetof(api_request, ...) */
    size_t view;   /* SCHEMA_BIND_NUMBERS: offsetof(api_request, problem.x) */
    double absent; /* the value when the field is absent (of a
                    * SCHEMA_BIND_NONE row, what its rule takes then) */
    double most;   /* SCHEMA_BIND_COUNT: larger ones all mean the same */
} schema_binding;

/* The core's weights and biases, each given by one or more fields (a
 * field that gives several holds them as blocks [q; k; v]). */
typedef enum {
    SCHEMA_W_Q,
    SCHEMA_W_K,
    SCHEMA_W_V,
    SCHEMA_W_O,
    SCHEMA_B_Q,
    SCHEMA_B_K,
    SCHEMA_B_V,
    SCHEMA_B_O,
    SCHEMA_WEIGHT_COUNT /* how many there are */
} schema_weight;

#define SCHEMA_GIVES(w) (1u << (w))

/* Groups a field belongs to (bits of schema_field.groups). */
enum {
    /* x, context and the weights that project them: never sent with q, k
     * and v */
    SCHEMA_PROJECTS = 1u << 0,
    /* a weight or bias laid out as "layout" says; the other weights are
     * PyTorch's names, out×in always */
    SCHEMA_FOLLOWS_LAYOUT = 1u << 1,
    /* a key of nn.MultiheadAttention's state_dict(), which the state_dict
     * field may hold */
    SCHEMA_STATE_DICT_KEY = 1u << 2,
};

typedef struct schema_field schema_field;

struct schema_field {
    const char *name; /* the JSON member, and its pointer "/name" */
    /* what it means, in Markdown, as openapi.yaml's description and
     * docs/api.md's table give it (tools/gen_contract.c writes both) */
    const char *doc;
    schema_kind kind;
    bool required;
    /* SCHEMA_TENSOR */
    int min_rank, max_rank;
    schema_leaf leaf;
    /* SCHEMA_TENSOR of whole numbers (positions, head indices): on /v2 the
     * only numbers an INT64 or INT32 input may hold */
    bool whole;
    /* SCHEMA_TENSOR of numbers added to the scores: −∞ taken (it hides the
     * key; only NaN and +∞ are refused), in the binary forms, which can
     * hold it */
    bool minus_infinity;
    /* SCHEMA_TENSOR of rank 1 whose items must differ (heads): an item
     * equal to an earlier one is refused with invalid_code, by the row's
     * rule through schema_earlier_equal(); the contract says uniqueItems */
    bool distinct;
    /* SCHEMA_INTEGER: at least min; SCHEMA_NUMBER: > 0 when positive */
    double min;
    bool positive;
    /* SCHEMA_INTEGER: at most the request limit at limit_offset (413),
     * named by its flag; no limit when limit_flag is NULL */
    size_t limit_offset;
    const char *limit_flag;
    /* SCHEMA_ENUM: the allowed strings, choice_count of them */
    const schema_choice *choices;
    size_t choice_count;
    /* codes: a value of the wrong JSON type (ERR_NONE: ERR_WRONG_TYPE), and
     * a value of the right type that is not allowed */
    error_code type_code;
    error_code invalid_code;
    /* SCHEMA_OBJECT: its members (integer, number or enum rows) */
    const schema_field *members;
    size_t member_count;
    /* where its value lands in api_request */
    schema_binding bind;
    /* SCHEMA_PROJECTS, SCHEMA_FOLLOWS_LAYOUT */
    unsigned groups;
    /* SCHEMA_GIVES() bits: the core's weights and biases it gives */
    unsigned gives;
    /* the Open Inference Protocol says this field its own way, not as a
     * request parameter: how (the refusal of such a parameter, with
     * invalid_code), or NULL */
    const char *oip_instead;
};

extern const schema_field api_schema[API_FIELD_COUNT];

/* What a request is as a whole: the description of openapi.yaml's
 * AttentionRequest (tools/gen_contract.c). */
extern const char api_request_doc[];

/* One tensor as parsed: flat row-major doubles (or bytes 0/1 for boolean
 * leaves, or floats as a float32 binary input sent them) and its shape. */
typedef struct {
    bool present;
    bool is_bool;    /* data is uint8_t 0/1                             */
    bool is_float32; /* data is float: binary float32 kept as it came,
                      * so a float32 request never widens it; else double */
    int rank;        /* 1 to SCHEMA_MAX_RANK */
    size_t dims[SCHEMA_MAX_RANK];
    void *data; /* malloc'd, row-major */
} schema_tensor;

/* Element i of a number tensor (float or double storage) as a double. */
static inline double schema_number(const schema_tensor *t, size_t i)
{
    return t->is_float32 ? (double)((const float *)t->data)[i]
                         : ((const double *)t->data)[i];
}

/* The index of the first of t's count numbers that is not finite (an
 * infinity or a NaN, as binary data can hold), or count if all are; −∞ is
 * let through when row takes it (minus_infinity). */
size_t schema_first_nonfinite(const schema_field *row, const schema_tensor *t,
                              size_t count);

/* The index of an item of t before item i that equals it when row's items
 * must differ (row->distinct), else i. */
size_t schema_earlier_equal(const schema_field *row, const schema_tensor *t,
                            size_t i);

/* The members below are ordered largest first, so that no padding
 * grows api_fields: every request clears its slots twice (on parsing and
 * on freeing), 7.9 KB, under the 8 KiB that GCC clears inline rather than
 * by calling memset (docs/performance.md, "What a request costs"). */

/* One member of an object field as decoded by its row's kind. */
typedef struct {
    double number; /* SCHEMA_INTEGER, SCHEMA_NUMBER */
    int choice;    /* SCHEMA_ENUM                   */
    bool present;
} schema_member;

/* One non-tensor field as decoded by its kind. */
typedef struct {
    double number;     /* SCHEMA_INTEGER, SCHEMA_NUMBER         */
    api_labels labels; /* SCHEMA_LABELS (owned)                 */
    int choice;        /* SCHEMA_ENUM: the choice's value       */
    unsigned stages;   /* SCHEMA_STAGES: ATTN_WANT() bits       */
    bool present;
    bool boolean; /* SCHEMA_BOOLEAN; SCHEMA_OBJECT: on */
    schema_member members[SCHEMA_MEMBERS_MAX]; /* SCHEMA_OBJECT  */
} schema_value;

/* A request's fields after parsing, before the rules between them: slot f
 * of `tensor` for tensor rows, of `value` for the others. */
/* Writes to out the number at JSON pointer `pointer` of text[0 .. len) as
 * the client wrote it, or `value` in words (number_words.h) when it cannot:
 * the codec that read the text knows how (server/json/number_literal.h). */
typedef void schema_literal_fn(const char *text, size_t len,
                               const char *pointer, double value,
                               char out[NUMBER_WORDS_MAX]);

typedef struct {
    schema_tensor tensor[API_FIELD_COUNT];
    schema_value value[API_FIELD_COUNT];
    /* the JSON text they were read from, and the codec's reader of its
     * numbers, so that a refusal quotes a number as it was written; NULL
     * when unknown */
    const char *text;
    size_t text_len;
    schema_literal_fn *literal;
} api_fields;

/* out = the number at `pointer` as the client wrote it (fields->literal),
 * or value in words when no codec says. */
void schema_quote_number(const api_fields *fields, const char *pointer,
                         double value, char out[NUMBER_WORDS_MAX]);

/* The elements of t: the product of its dimensions (bounded by the
 * parser's element budget). */
size_t schema_element_count(const schema_tensor *t);

/* out = "/name" of field f; returns out. */
const char *schema_pointer(api_field f, char out[CODEC_POINTER_MAX]);

/* out = "/name/i/j/k" for flat element `flat` of field f's tensor t. */
void schema_element_pointer(char out[CODEC_POINTER_MAX], api_field f,
                            const schema_tensor *t, size_t flat);

/* The kind's name in the schema's descriptions ("tensor", "integer", ...:
 * tests/contract/print_schema.c, tools/gen_web_fields.c). */
const char *schema_kind_name(schema_kind kind);

/* The first of PyTorch's names (a row giving a weight or bias that does
 * not follow "layout": in_proj_weight, out_proj.weight, ...) that fields
 * hold, whether sent as a field or in state_dict; NULL if none.  Such a
 * request is in nn.MultiheadAttention's terms, whose head count and batch
 * order live outside its state_dict (weights.c, batch_first.c). */
const char *schema_torch_name_given(const api_fields *fields);

/* Whether an Open Inference Protocol request parameter carries field f:
 * one value (not a tensor, not labels), and not what the protocol says its
 * own way (the row's oip_instead: the inputs' datatype is the dtype,
 * outputs the stages).  oip_decode.c reads parameters so, and
 * tools/gen_contract.c lists them in openapi.yaml's InferenceParameters. */
bool schema_oip_parameter(api_field f);

/* The row named name, or -1. */
int schema_field_of(const char *name);

/* The row a mistyped name most likely meant, among the rows `takes`
 * accepts (NULL: all): the one whose name equals it but for case, else the
 * one nearest to it, by at most SCHEMA_SUGGEST_EDITS edits (a byte added,
 * dropped, changed, or two neighbours swapped), letters compared without
 * case, when no other is as near; -1 when none is.  "W_q" → w_q,
 * "num_head" → num_heads, "w_z" → none (w_q, w_k, w_v and w_o are as
 * near). */
int schema_suggest(const char *name, bool (*takes)(api_field f));

/* The row named name when it is a tensor, or -1. */
int schema_tensor_of(const char *name);

/* The code of a binary tensor's shape that does not hold whole numbers of
 * at least 1. */
#define SCHEMA_DIM_CODE ERR_WRONG_TYPE

/* The code that refuses a number at `pointer` of a /v1 body that is not
 * whole where a whole number belongs (an integer field or member, an
 * element of positions or heads, a binary tensor's shape); ERR_NONE where
 * any number may stand (whole_literals.h). */
error_code schema_whole_code(const char *pointer);

/* The value of the choice of enum field f named name, or -1. */
int schema_choice_of(api_field f, const char *name);

/* Room for either list below: every name (at most 16 bytes) and ", ". */
#define SCHEMA_LIST_MAX 1024

/* Writes "x, context, ..." (every field, in table order) to out. */
void schema_field_list(char out[SCHEMA_LIST_MAX]);

/* Writes "q, k, ..." (every stage the core computes, in order) to out. */
void schema_stage_list(char out[SCHEMA_LIST_MAX]);

/* Frees every tensor and label list of fields and empties it. */
void api_fields_free(api_fields *fields);

#ifdef __cplusplus
}
#endif

#endif
