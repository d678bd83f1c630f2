/*
 * schema.c - the rows of api_schema[]: every request field, once.
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

/* value: api_wire; the 16-bit types are computed in float32 */
static const schema_choice dtypes[] = {
    {"float64", API_WIRE_FLOAT64, NULL},
    {"float32", API_WIRE_FLOAT32, NULL},
    {"float16", API_WIRE_FLOAT16, "IEEE 754 half precision"},
    {"bfloat16", API_WIRE_BFLOAT16, "bfloat16"},
};

/* value: whether the weights are out×in (y = x·Wᵀ) */
static const schema_choice layouts[] = {
    {"lesson", 0, "W is in×out, y = x·W"},
    {"torch", 1, "W is out×in as nn.Linear.weight, y = x·Wᵀ"},
};

/* value: whether the reply's tensors are base64 */
static const schema_choice encodings[] = {
    {"json", 0, "nested arrays"},
    {"base64", 1, "little-endian numbers of the dtype"},
};

/* value: whether pairs are (2i, 2i + 1) rather than (i, i + dims/2) */
static const schema_choice rope_styles[] = {
    {"half", 0, "pairs i and i + dims/2, as Llama's rotate_half"},
    {"interleaved", 1, "pairs 2i and 2i + 1, as RoFormer and GPT-J"},
};

/* value: whether the sinusoidal encoding is added to x and context */
static const schema_choice encodings_of_position[] = {
    {"none", 0, NULL},
    {"sinusoidal", 1, "sin/cos of the position added to x"},
};

static const schema_field rope_members[] = {
    [API_ROPE_BASE] = {"base", .kind = SCHEMA_NUMBER, .positive = true,
                       .invalid_code = ERR_INVALID_ROPE},
    [API_ROPE_DIMS] = {"dims", .kind = SCHEMA_INTEGER, .min = 2,
                       .invalid_code = ERR_INVALID_ROPE},
    [API_ROPE_STYLE] = {"style", .kind = SCHEMA_ENUM, .choices = rope_styles,
                        .choice_count = 2, .invalid_code = ERR_INVALID_ROPE},
};

#define TENSOR(min, max, leaf_kind)                                            \
    .kind = SCHEMA_TENSOR, .min_rank = (min), .max_rank = (max),               \
    .leaf = (leaf_kind)
/* a tensor whose numbers land, in the request's dtype, at req->member and
 * the core's view of them at req->problem.member */
#define NUMBERS(member)                                                        \
    .bind = {SCHEMA_BIND_NUMBERS, offsetof(api_request, member),               \
             offsetof(api_request, problem.member), 0, 0}
/* a value that lands at req->member by converter `as`, `absent` when the
 * request leaves it out */
#define LANDS(as, member, absent)                                              \
    .bind = {(as), offsetof(api_request, member), 0, (absent), 0}
/* a weight or bias of ours, as "layout" says, giving the core's w */
#define OURS(w)                                                                \
    .groups = SCHEMA_PROJECTS | SCHEMA_FOLLOWS_LAYOUT, .gives = SCHEMA_GIVES(w)
/* PyTorch's name of a weight or bias (out×in), giving gives */
#define TORCH(bits) .groups = SCHEMA_PROJECTS, .gives = (bits)
/* the same, a key state_dict() writes */
#define TORCH_KEY(bits)                                                        \
    .groups = SCHEMA_PROJECTS | SCHEMA_STATE_DICT_KEY, .gives = (bits)
#define CHOICES(list)                                                          \
    .kind = SCHEMA_ENUM, .choices = (list),                                    \
    .choice_count = sizeof(list) / sizeof *(list)

const schema_field api_schema[API_FIELD_COUNT] = {
    /* rank 3: a batch of sequences (B, n, d), and then (B, m, d_c) */
    /* required unless q, k and v are given (validate.c) */
    [API_X] = {"x", TENSOR(2, 3, SCHEMA_LEAF_NUMBER), NUMBERS(x),
               .groups = SCHEMA_PROJECTS},
    [API_CONTEXT] = {"context", TENSOR(2, 3, SCHEMA_LEAF_NUMBER),
                     NUMBERS(context), .groups = SCHEMA_PROJECTS},
    /* required unless PyTorch's names give them (validate.c) */
    [API_W_Q] = {"w_q", TENSOR(2, 3, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_Q)},
    [API_W_K] = {"w_k", TENSOR(2, 3, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_K)},
    [API_W_V] = {"w_v", TENSOR(2, 3, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_V)},
    [API_W_O] = {"w_o", TENSOR(2, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_O)},
    /* (n, m) for every sequence, (h, n, m) per head, or with a leading B;
     * padding (m), or (B, m) */
    [API_MASK] = {"mask", TENSOR(2, 4, SCHEMA_LEAF_EITHER),
                  .minus_infinity = true},
    [API_KEY_PADDING] = {"key_padding", TENSOR(1, 2, SCHEMA_LEAF_BOOL)},
    [API_NUM_HEADS] = {"num_heads", .kind = SCHEMA_INTEGER, .min = 1,
                       .limit_offset = offsetof(request_limits, max_heads),
                       .limit_flag = "--max-heads",
                       .invalid_code = ERR_INVALID_NUM_HEADS},
    /* 0: divide by √d_k (validate.c) */
    [API_SCALE] = {"scale", .kind = SCHEMA_NUMBER, .positive = true,
                   .invalid_code = ERR_INVALID_SCALE,
                   LANDS(SCHEMA_BIND_NUMBER, problem.scale, 0)},
    [API_DTYPE] = {"dtype", CHOICES(dtypes), .invalid_code = ERR_INVALID_DTYPE,
                   .bind = {SCHEMA_BIND_DTYPE, offsetof(api_request, wire),
                            offsetof(api_request, problem.dtype),
                            API_WIRE_FLOAT64, 0},
                   .oip_instead = "the dtype is the datatype of the numeric "
                                  "inputs (FP64, FP32, FP16 or BF16), not a "
                                  "parameter"},
    [API_RETURN] = {"return", .kind = SCHEMA_STAGES,
                    .invalid_code = ERR_INVALID_RETURN,
                    LANDS(SCHEMA_BIND_STAGES, want,
                          ATTN_WANT(ATTN_OUTPUT) | ATTN_WANT(ATTN_WEIGHTS)),
                    .oip_instead = "name the stages to return as outputs"},
    [API_CAUSAL] = {"causal", .kind = SCHEMA_BOOLEAN,
                    LANDS(SCHEMA_BIND_FLAG, problem.causal, 0)},
    [API_TOKENS] = {"tokens", .kind = SCHEMA_LABELS},
    [API_CONTEXT_TOKENS] = {"context_tokens", .kind = SCHEMA_LABELS},
    [API_ENCODING] = {"encoding", CHOICES(encodings),
                      .type_code = ERR_INVALID_ENCODING,
                      .invalid_code = ERR_INVALID_ENCODING,
                      LANDS(SCHEMA_BIND_FLAG, binary, 0),
                      .oip_instead = "outputs come as binary data with "
                                     "binary_data_output or an output's "
                                     "binary_data parameter, not with "
                                     "encoding"},
    [API_B_Q] = {"b_q", TENSOR(1, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_Q)},
    [API_B_K] = {"b_k", TENSOR(1, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_K)},
    [API_B_V] = {"b_v", TENSOR(1, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_V)},
    [API_B_O] = {"b_o", TENSOR(1, 1, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_O)},
    [API_LAYOUT] = {"layout", CHOICES(layouts),
                    .invalid_code = ERR_INVALID_LAYOUT},
    /* torch.nn.MultiheadAttention's state_dict names (always out×in) */
    [API_IN_PROJ_WEIGHT] = {"in_proj_weight", TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                            TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_Q) |
                                      SCHEMA_GIVES(SCHEMA_W_K) |
                                      SCHEMA_GIVES(SCHEMA_W_V))},
    [API_IN_PROJ_BIAS] = {"in_proj_bias", TENSOR(1, 1, SCHEMA_LEAF_NUMBER),
                          TORCH_KEY(SCHEMA_GIVES(SCHEMA_B_Q) |
                                    SCHEMA_GIVES(SCHEMA_B_K) |
                                    SCHEMA_GIVES(SCHEMA_B_V))},
    [API_OUT_PROJ_WEIGHT] = {"out_proj_weight",
                             TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                             TORCH(SCHEMA_GIVES(SCHEMA_W_O))},
    [API_OUT_PROJ_BIAS] = {"out_proj_bias", TENSOR(1, 1, SCHEMA_LEAF_NUMBER),
                           TORCH(SCHEMA_GIVES(SCHEMA_B_O))},
    /* its output projection's keys exactly as state_dict() writes them */
    [API_OUT_PROJ_DOT_WEIGHT] = {"out_proj.weight",
                                 TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                                 TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_O))},
    [API_OUT_PROJ_DOT_BIAS] = {"out_proj.bias",
                               TENSOR(1, 1, SCHEMA_LEAF_NUMBER),
                               TORCH_KEY(SCHEMA_GIVES(SCHEMA_B_O))},
    [API_Q_PROJ_WEIGHT] = {"q_proj_weight", TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                           TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_Q))},
    [API_K_PROJ_WEIGHT] = {"k_proj_weight", TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                           TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_K))},
    [API_V_PROJ_WEIGHT] = {"v_proj_weight", TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                           TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_V))},
    /* given directly, as scaled_dot_product_attention takes them: (h, n,
     * d_k), (h, m, d_k), (h, m, d_v), or with a leading B */
    [API_Q] = {"q", TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(q)},
    [API_K] = {"k", TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(k)},
    [API_V] = {"v", TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(v)},
    /* grouped-query attention: h_kv key/value heads shared by h / h_kv
     * query heads each */
    [API_NUM_KV_HEADS] = {"num_kv_heads", .kind = SCHEMA_INTEGER, .min = 1,
                          .limit_offset = offsetof(request_limits, max_heads),
                          .limit_flag = "--max-heads",
                          .invalid_code = ERR_INVALID_NUM_KV_HEADS},
    /* whole numbers ≥ 0, one per query (n) and per key (m) */
    [API_POSITIONS] = {"positions", TENSOR(1, 1, SCHEMA_LEAF_NUMBER),
                       .whole = true, .invalid_code = ERR_INVALID_POSITIONS},
    [API_CONTEXT_POSITIONS] = {"context_positions",
                               TENSOR(1, 1, SCHEMA_LEAF_NUMBER), .whole = true,
                               .invalid_code = ERR_INVALID_POSITIONS},
    /* a window wider than any distance between positions hides nothing
     * more: it lands as 2^53, which the core's int64_t arithmetic
     * holds */
    [API_WINDOW] = {"window", .kind = SCHEMA_INTEGER, .min = 1,
                    .invalid_code = ERR_INVALID_WINDOW,
                    .bind = {SCHEMA_BIND_COUNT,
                             offsetof(api_request, problem.window), 0, 0,
                             SCHEMA_MAX_POSITION}},
    /* ALiBi with the paper's slopes, or with slopes of one's own (h) */
    [API_ALIBI] = {"alibi", .kind = SCHEMA_BOOLEAN},
    [API_ALIBI_SLOPES] = {"alibi_slopes", TENSOR(1, 1, SCHEMA_LEAF_NUMBER)},
    /* rotary embeddings of q and k: true, or {base, dims, style} */
    [API_ROPE] = {"rope", .kind = SCHEMA_OBJECT, .members = rope_members,
                  .member_count = 3, .type_code = ERR_INVALID_ROPE,
                  .invalid_code = ERR_INVALID_ROPE},
    [API_POSITIONAL_ENCODING] =
        {"positional_encoding", CHOICES(encodings_of_position),
         .invalid_code = ERR_INVALID_POSITIONAL_ENCODING,
         LANDS(SCHEMA_BIND_FLAG, problem.sinusoidal, 0)},
    /* a KV cache: (h_kv, m₀, d_k) and (h_kv, m₀, d_v), or with a leading B */
    [API_PAST_K] = {"past_k", TENSOR(3, 4, SCHEMA_LEAF_NUMBER),
                    NUMBERS(past_k)},
    [API_PAST_V] = {"past_v", TENSOR(3, 4, SCHEMA_LEAF_NUMBER),
                    NUMBERS(past_v)},
    /* the query heads the reply holds, in this order (heads.h) */
    [API_HEADS] = {"heads", TENSOR(1, 1, SCHEMA_LEAF_NUMBER), .whole = true,
                   .invalid_code = ERR_INVALID_HEADS},
    /* PyTorch's masks under its names and in the sense of the function the
     * request mirrors (torch_masks.c): nn.MultiheadAttention's when x is
     * projected, scaled_dot_product_attention's with q, k and v */
    [API_ATTN_MASK] = {"attn_mask", TENSOR(2, 4, SCHEMA_LEAF_EITHER),
                       .minus_infinity = true},
    /* booleans, or numbers added to their keys' scores (PyTorch 2's) */
    [API_KEY_PADDING_MASK] = {"key_padding_mask",
                              TENSOR(1, 2, SCHEMA_LEAF_EITHER),
                              .minus_infinity = true},
    [API_IS_CAUSAL] = {"is_causal", .kind = SCHEMA_BOOLEAN},
    /* nn.MultiheadAttention's default: weights averaged over the heads */
    [API_AVERAGE_ATTN_WEIGHTS] = {"average_attn_weights",
                                  .kind = SCHEMA_BOOLEAN,
                                  LANDS(SCHEMA_BIND_FLAG, average_weights, 0)},
    /* nn.MultiheadAttention's batch_first: false takes a batch of x and
     * context sequence first, (L, N, E), and returns it so (batch_first.h) */
    [API_BATCH_FIRST] = {"batch_first", .kind = SCHEMA_BOOLEAN,
                         LANDS(SCHEMA_BIND_FLAG, batch_first, 1)},
    /* add_bias_kv's parameters (1, 1, e) and add_zero_attn: refused, 422
     * (module_options.c) */
    [API_BIAS_K] = {"bias_k", TENSOR(1, 3, SCHEMA_LEAF_NUMBER),
                    .invalid_code = ERR_UNSUPPORTED_OPTION, TORCH_KEY(0)},
    [API_BIAS_V] = {"bias_v", TENSOR(1, 3, SCHEMA_LEAF_NUMBER),
                    .invalid_code = ERR_UNSUPPORTED_OPTION, TORCH_KEY(0)},
    [API_ADD_ZERO_ATTN] = {"add_zero_attn", .kind = SCHEMA_BOOLEAN,
                           .invalid_code = ERR_UNSUPPORTED_OPTION,
                           .groups = SCHEMA_PROJECTS},
    /* the attention module of a model's state_dict, by its prefix
     * (state_dict.h) */
    [API_MODULE] = {"module", .kind = SCHEMA_STRING,
                    .invalid_code = ERR_INVALID_MODULE,
                    .oip_instead = "module picks a module of /v1's "
                                   "state_dict; send the module's tensors "
                                   "as inputs named by their keys without "
                                   "its prefix"},
    /* module.state_dict() as it is, keys under one prefix (state_dict.h) */
    [API_STATE_DICT] = {"state_dict", .kind = SCHEMA_STATE_DICT,
                        .invalid_code = ERR_CONFLICTING_FIELDS,
                        .oip_instead = "send each of the state_dict's tensors "
                                       "as an input named by its key without "
                                       "the module's prefix"},
};

_Static_assert(sizeof rope_members / sizeof *rope_members <= SCHEMA_MEMBERS_MAX,
               "rope's members fit schema_value");

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

void api_fields_free(api_fields *fields)
{
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        free(fields->tensor[f].data);
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
