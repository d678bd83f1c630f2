/*
 * schema.c - the rows of api_schema[]: every request field, once.
 */
#include "server/request/schema.h"

#include "core/attention.h"

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
    [API_ROPE_BASE] = {"base", .doc = "Default 10000.", .kind = SCHEMA_NUMBER,
                       .positive = true, .invalid_code = ERR_INVALID_ROPE},
    [API_ROPE_DIMS] = {"dims",
                       .doc =
                           "Even, at most d_k; default d_k (which must then be "
                           "even). The components beyond it pass through.",
                       .kind = SCHEMA_INTEGER, .min = 2,
                       .invalid_code = ERR_INVALID_ROPE},
    [API_ROPE_STYLE] = {"style",
                        .doc =
                            "half (default) pairs i with i + dims/2, as "
                            "Llama's and GPT-NeoX's rotate_half; interleaved "
                            "pairs 2i with 2i+1, as RoFormer and GPT-J.",
                        .kind = SCHEMA_ENUM, .choices = rope_styles,
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

const char api_request_doc[] =
    "Either x (with the weights) or q, k and v given directly (as "
    "scaled_dot_product_attention takes them); x, or all three of q, k, v, is "
    "required, and the two forms do not mix (conflicting_fields). The "
    "projections come as w_q, w_k, w_v (and w_o, b_q, b_k, b_v, b_o) in the "
    "layout `layout` says, or under the names of torch.nn.MultiheadAttention's "
    "state_dict (in_proj_weight, in_proj_bias, q_proj_weight, k_proj_weight, "
    "v_proj_weight, out_proj.weight, out_proj.bias, or out_proj_weight and "
    "out_proj_bias), which are always out×in: send a state_dict() as it is and "
    "add num_heads. Each of W_q, W_k, W_v is required from one of its names; "
    "two names for one projection are a 400 (conflicting_fields).";

const schema_field api_schema[API_FIELD_COUNT] = {
    /* rank 3: a batch of sequences (B, n, d), and then (B, m, d_c) */
    /* required unless q, k and v are given (validate.c) */
    [API_X] = {"x",
               .doc = "n×d input, one row per token; or B×n×d, a batch of B "
                      "sequences that share the weights: every returned stage "
                      "then gains a leading B, and `shapes` says so.",
               TENSOR(2, 3, SCHEMA_LEAF_NUMBER), NUMBERS(x),
               .groups = SCHEMA_PROJECTS},
    [API_CONTEXT] = {"context",
                     .doc =
                         "m×d_c key/value source for cross-attention (B×m×d_c "
                         "with a batch). Without it, keys and values come from "
                         "x (self-attention, m = n, d_c = d).",
                     TENSOR(2, 3, SCHEMA_LEAF_NUMBER), NUMBERS(context),
                     .groups = SCHEMA_PROJECTS},
    /* required unless PyTorch's names give them (validate.c) */
    [API_W_Q] = {"w_q", .doc = "d×(h·d_k), or a per-head stack h×d×d_k.",
                 TENSOR(2, 3, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_Q)},
    [API_W_K] = {"w_k", .doc = "d_c×(h·d_k), or a per-head stack h×d_c×d_k.",
                 TENSOR(2, 3, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_K)},
    [API_W_V] = {"w_v",
                 .doc = "d_c×(h·d_v), or a per-head stack h×d_c×d_v. d_v may "
                        "differ from d_k.",
                 TENSOR(2, 3, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_V)},
    [API_W_O] = {"w_o",
                 .doc = "Optional (h·d_v)×d_out output projection. Without it "
                        "the output is the concatenation of the heads.",
                 TENSOR(2, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_W_O)},
    /* (n, m) for every sequence, (h, n, m) per head, or with a leading B;
     * padding (m), or (B, m) */
    [API_MASK] =
        {"mask",
         .doc =
             "n×m, for every sequence of a batch and every head; h×n×m, one "
             "per head, for one sequence; in a batch B×n×m, one per sequence, "
             "or B×h×n×m, one per sequence and head. Booleans: true = query i "
             "may attend key j (as in PyTorch's scaled_dot_product_attention). "
             "Numbers: added to the scaled scores; in the binary form −∞ hides "
             "its key (NaN and +∞ are refused).",
         TENSOR(2, 4, SCHEMA_LEAF_EITHER), .minus_infinity = true},
    [API_KEY_PADDING] =
        {"key_padding",
         .doc = "m booleans (B×m with a batch, as key_padding_mask); true = "
                "that key is padding and no query attends it.",
         TENSOR(1, 2, SCHEMA_LEAF_BOOL)},
    [API_NUM_HEADS] =
        {"num_heads",
         .doc = "The stack depth with 3-D weights. With 2-D weights, default 1 "
                "in the lessons' form, and required (400 missing_field) with "
                "PyTorch's names, state_dict or layout \"torch\": PyTorch "
                "keeps the head count outside the weights, in "
                "nn.MultiheadAttention(embed_dim, num_heads). Must divide the "
                "2-D widths and equal every stack's depth.",
         .kind = SCHEMA_INTEGER, .min = 1,
         .limit_offset = offsetof(request_limits, max_heads),
         .limit_flag = "--max-heads", .invalid_code = ERR_INVALID_NUM_HEADS},
    /* 0: divide by √d_k (validate.c) */
    [API_SCALE] =
        {"scale",
         .doc =
             "Multiplies Q Kᵀ. Default 1/√d_k (applied as a division by √d_k).",
         .kind = SCHEMA_NUMBER, .positive = true,
         .invalid_code = ERR_INVALID_SCALE,
         LANDS(SCHEMA_BIND_NUMBER, problem.scale, 0)},
    [API_DTYPE] =
        {"dtype",
         .doc =
             "The type of the numbers sent and returned. float64 and float32 "
             "are also the precision of the whole computation; float16 and "
             "bfloat16 are computed in float32 (which holds each of their "
             "values), every number sent rounded to the type first and every "
             "number returned rounded to it last (to nearest, ties to even).",
         CHOICES(dtypes), .invalid_code = ERR_INVALID_DTYPE,
         .bind = {SCHEMA_BIND_DTYPE, offsetof(api_request, wire),
                  offsetof(api_request, problem.dtype), API_WIRE_FLOAT64, 0},
         .oip_instead = "the dtype is the datatype of the numeric "
                        "inputs (FP64, FP32, FP16 or BF16), not a "
                        "parameter"},
    [API_RETURN] = {"return",
                    .doc =
                        "Stages to return. `shapes` always lists every stage.",
                    .kind = SCHEMA_STAGES, .invalid_code = ERR_INVALID_RETURN,
                    LANDS(SCHEMA_BIND_STAGES, want,
                          ATTN_WANT(ATTN_OUTPUT) | ATTN_WANT(ATTN_WEIGHTS)),
                    .oip_instead = "name the stages to return as outputs"},
    [API_CAUSAL] = {"causal", .doc = "Query i attends only keys j ≤ i.",
                    .kind = SCHEMA_BOOLEAN,
                    LANDS(SCHEMA_BIND_FLAG, problem.causal, 0)},
    [API_TOKENS] = {"tokens",
                    .doc =
                        "n labels for the rows of x, echoed in the response; "
                        "in a batch one list for every sequence, or B lists of "
                        "n, one per sequence. A list of more labels than "
                        "--max-tokens is refused 413 limit_exceeded.",
                    .kind = SCHEMA_LABELS},
    [API_CONTEXT_TOKENS] =
        {"context_tokens",
         .doc = "Labels for the rows of context, or of k when q, k and v are "
                "given (refused in self-attention, where tokens label both); "
                "in a batch one list or B lists, as tokens.",
         .kind = SCHEMA_LABELS},
    [API_ENCODING] =
        {"encoding",
         .doc =
             "How the reply carries tensors: nested JSON arrays, or each as a "
             "BinaryTensor. Inputs may use either form whatever this says.",
         CHOICES(encodings), .type_code = ERR_INVALID_ENCODING,
         .invalid_code = ERR_INVALID_ENCODING,
         LANDS(SCHEMA_BIND_FLAG, binary, 0),
         .oip_instead = "outputs come as binary data with "
                        "binary_data_output or an output's "
                        "binary_data parameter, not with "
                        "encoding"},
    [API_B_Q] = {"b_q",
                 .doc = "h·d_k numbers added to x·W_q, or an h×d_k stack.",
                 TENSOR(1, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_Q)},
    [API_B_K] = {"b_k",
                 .doc =
                     "h·d_k numbers added to context·W_k, or an h×d_k stack.",
                 TENSOR(1, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_K)},
    [API_B_V] = {"b_v",
                 .doc =
                     "h·d_v numbers added to context·W_v, or an h×d_v stack.",
                 TENSOR(1, 2, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_V)},
    [API_B_O] = {"b_o",
                 .doc = "d_out numbers added to concat·W_o (only with w_o).",
                 TENSOR(1, 1, SCHEMA_LEAF_NUMBER), OURS(SCHEMA_B_O)},
    [API_LAYOUT] =
        {"layout",
         .doc = "How w_q, w_k, w_v and w_o are laid out: `lesson` in×out (y = "
                "x·W, as the lessons), `torch` out×in as nn.Linear.weight (y = "
                "x·Wᵀ + b; a per-head stack is then h×d_k×d).",
         CHOICES(layouts), .invalid_code = ERR_INVALID_LAYOUT},
    /* torch.nn.MultiheadAttention's state_dict names (always out×in) */
    [API_IN_PROJ_WEIGHT] = {"in_proj_weight",
                            .doc = "(3·e)×e, rows [W_q; W_k; W_v], out×in "
                                   "(PyTorch's MultiheadAttention).",
                            TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                            TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_Q) |
                                      SCHEMA_GIVES(SCHEMA_W_K) |
                                      SCHEMA_GIVES(SCHEMA_W_V))},
    [API_IN_PROJ_BIAS] = {"in_proj_bias",
                          .doc = "[b_q; b_k; b_v] in one vector.",
                          TENSOR(1, 1, SCHEMA_LEAF_NUMBER),
                          TORCH_KEY(SCHEMA_GIVES(SCHEMA_B_Q) |
                                    SCHEMA_GIVES(SCHEMA_B_K) |
                                    SCHEMA_GIVES(SCHEMA_B_V))},
    [API_OUT_PROJ_WEIGHT] = {"out_proj_weight", .doc = "e×e W_o, out×in.",

                             TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                             TORCH(SCHEMA_GIVES(SCHEMA_W_O))},
    [API_OUT_PROJ_BIAS] = {"out_proj_bias",
                           .doc = "e numbers added after out_proj_weight.",
                           TENSOR(1, 1, SCHEMA_LEAF_NUMBER),
                           TORCH(SCHEMA_GIVES(SCHEMA_B_O))},
    /* its output projection's keys exactly as state_dict() writes them */
    [API_OUT_PROJ_DOT_WEIGHT] =
        {"out_proj.weight",
         .doc = "out_proj_weight under the key state_dict() writes for it, so "
                "a state_dict is sent as it is.",

         TENSOR(2, 2, SCHEMA_LEAF_NUMBER), TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_O))},
    [API_OUT_PROJ_DOT_BIAS] =
        {"out_proj.bias",
         .doc = "out_proj_bias under the key state_dict() writes for it.",

         TENSOR(1, 1, SCHEMA_LEAF_NUMBER), TORCH_KEY(SCHEMA_GIVES(SCHEMA_B_O))},
    [API_Q_PROJ_WEIGHT] =
        {"q_proj_weight",
         .doc =
             "e×e W_q, out×in (PyTorch's name when kdim or vdim ≠ embed_dim).",
         TENSOR(2, 2, SCHEMA_LEAF_NUMBER), TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_Q))},
    [API_K_PROJ_WEIGHT] = {"k_proj_weight", .doc = "e×kdim W_k, out×in.",
                           TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                           TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_K))},
    [API_V_PROJ_WEIGHT] = {"v_proj_weight", .doc = "e×vdim W_v, out×in.",
                           TENSOR(2, 2, SCHEMA_LEAF_NUMBER),
                           TORCH_KEY(SCHEMA_GIVES(SCHEMA_W_V))},
    /* given directly, as scaled_dot_product_attention takes them: (h, n,
     * d_k), (h, m, d_k), (h, m, d_v), or with a leading B */
    [API_Q] =
        {"q",
         .doc = "(h, n, d_k) queries given directly, or (B, h, n, d_k); with k "
                "and v instead of x and every weight. The stages from `scores` "
                "on are computed from them; q, k and v are returned as given.",
         TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(q)},
    [API_K] = {"k",
               .doc = "(h_kv, m, d_k) keys, or (B, h_kv, m, d_k); after a "
                      "cache (past_k), the new keys only.",
               TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(k)},
    [API_V] = {"v", .doc = "(h_kv, m, d_v) values, or (B, h_kv, m, d_v).",
               TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(v)},
    /* grouped-query attention: h_kv key/value heads shared by h / h_kv
     * query heads each */
    [API_NUM_KV_HEADS] =
        {"num_kv_heads",
         .doc = "h_kv key/value heads (grouped-query attention; 1 is "
                "multi-query), dividing num_heads; default num_heads. w_k, w_v "
                "(and b_k, b_v) are then h_kv·d_k and h_kv·d_v wide (or "
                "h_kv-deep stacks), and query head i reads key/value head "
                "⌊i·h_kv/h⌋, as repeat_interleave and PyTorch's enable_gqa. "
                "The k and v stages are (h_kv, m, ·).",
         .kind = SCHEMA_INTEGER, .min = 1,
         .limit_offset = offsetof(request_limits, max_heads),
         .limit_flag = "--max-heads", .invalid_code = ERR_INVALID_NUM_KV_HEADS},
    /* whole numbers ≥ 0, one per query (n) and per key (m) */
    [API_POSITIONS] =
        {"positions",
         .doc =
             "n whole numbers ≥ 0, the queries' positions (default 0..n−1, or "
             "m₀..m₀+n−1 after a cache of m₀); repeats and gaps are allowed "
             "(tokens at one position get the same rotation and encoding, and "
             "causal lets each see the other); with a cache none may be below "
             "m₀ (invalid_positions). causal and window compare positions (key "
             "j is visible to query i when p_j ≤ p_i), ALiBi measures |p_i − "
             "p_j|, RoPE and the sinusoidal encoding use them.",
         TENSOR(1, 1, SCHEMA_LEAF_NUMBER), .whole = true,
         .invalid_code = ERR_INVALID_POSITIONS},
    [API_CONTEXT_POSITIONS] =
        {"context_positions",
         .doc = "Positions of the new keys (context's rows, or k's with q/k/v "
                "given); default: the queries' positions in self-attention, "
                "else m₀, m₀+1, … Cached keys are at 0..m₀−1.",

         TENSOR(1, 1, SCHEMA_LEAF_NUMBER), .whole = true,
         .invalid_code = ERR_INVALID_POSITIONS},
    /* a window wider than any distance between positions hides nothing
     * more: it lands as 2^53, which the core's int64_t arithmetic
     * holds */
    [API_WINDOW] =
        {"window",
         .doc = "Sliding window: key j is hidden from query i when |p_i − p_j| "
                "≥ window (with causal: p_i − window < p_j ≤ p_i, Mistral's).",
         .kind = SCHEMA_INTEGER, .min = 1, .invalid_code = ERR_INVALID_WINDOW,
         .bind = {SCHEMA_BIND_COUNT, offsetof(api_request, problem.window), 0,
                  0, SCHEMA_MAX_POSITION}},
    /* ALiBi with the paper's slopes, or with slopes of one's own (h) */
    [API_ALIBI] = {"alibi",
                   .doc = "ALiBi with the paper's slopes (2^(−8k/h), k = 1..h, "
                          "for h a power of two; otherwise its reference "
                          "code's rule): −slope_h·|p_i − p_j| added to the "
                          "scaled scores, visible in masked_scores.",
                   .kind = SCHEMA_BOOLEAN},
    [API_ALIBI_SLOPES] =
        {"alibi_slopes",
         .doc = "h slopes of one's own for ALiBi (instead of alibi).",
         TENSOR(1, 1, SCHEMA_LEAF_NUMBER)},
    /* rotary embeddings of q and k: true, or {base, dims, style} */
    [API_ROPE] =
        {"rope",
         .doc = "Rotary position embedding (RoFormer) of q and k, after their "
                "biases: the first `dims` components of every head vector turn "
                "in pairs, pair i by position·θ_i with θ_i = base^(−2i/dims) "
                "(cos and sin in float64, rounded to the dtype). `true` takes "
                "every default; an object sets some. The scores use the turned "
                "q_rope and k_rope; q and k stay as projected.",
         .kind = SCHEMA_OBJECT, .members = rope_members, .member_count = 3,
         .type_code = ERR_INVALID_ROPE, .invalid_code = ERR_INVALID_ROPE},
    [API_POSITIONAL_ENCODING] =
        {"positional_encoding",
         .doc = "sinusoidal adds \"Attention Is All You Need\"'s encoding to x "
                "(and to context, at the new keys' positions) before the "
                "projections: PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, "
                "2i+1) = cos(pos/10000^(2i/d)); the stage x_pe is x plus it. "
                "Not with q, k and v given.",
         CHOICES(encodings_of_position),
         .invalid_code = ERR_INVALID_POSITIONAL_ENCODING,
         LANDS(SCHEMA_BIND_FLAG, problem.sinusoidal, 0)},
    /* a KV cache: (h_kv, m₀, d_k) and (h_kv, m₀, d_v), or with a leading B */
    [API_PAST_K] =
        {"past_k",
         .doc =
             "A KV cache: (h_kv, m₀, d_k) keys, or (B, h_kv, m₀, d_k), already "
             "turned by RoPE, of positions 0..m₀−1, as a reply's k_cache gives "
             "them. This request's keys come after them: scores, masks and "
             "key_padding cover all m = m₀ + m_new keys. With past_v.",
         TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(past_k)},
    [API_PAST_V] =
        {"past_v",
         .doc = "(h_kv, m₀, d_v) values, or (B, h_kv, m₀, d_v), with past_k.",
         TENSOR(3, 4, SCHEMA_LEAF_NUMBER), NUMBERS(past_v)},
    /* the query heads the reply holds, in this order (heads.h) */
    [API_HEADS] =
        {"heads",
         .doc =
             "The query heads the reply holds, distinct, each below num_heads, "
             "in this order (default all). Every stage with a head axis is "
             "returned for them only and `shapes` says so: plane j of q, "
             "q_rope, scores, scaled_scores, masked_scores, weights and "
             "head_outputs is query head heads[j]'s, plane j of k, v, k_rope, "
             "k_cache and v_cache its key/value head's (⌊heads[j]·h_kv/h⌋, so "
             "a head shared by two named query heads comes twice). Every head "
             "is still computed: concat and output are unchanged. One head of "
             "n = 256 with every stage is 1/h of the reply.",
         TENSOR(1, 1, SCHEMA_LEAF_NUMBER), .whole = true, .distinct = true,
         .invalid_code = ERR_INVALID_HEADS},
    /* PyTorch's masks under its names and in the sense of the function the
     * request mirrors (torch_masks.c): nn.MultiheadAttention's when x is
     * projected, scaled_dot_product_attention's with q, k and v */
    [API_ATTN_MASK] =
        {"attn_mask",
         .doc =
             "PyTorch's name of mask (not with it), in the sense of the "
             "function the request mirrors. With x (projected, as "
             "nn.MultiheadAttention): booleans true = masked out, the opposite "
             "of mask; in a batch a 3-dimensional one is the module's "
             "(N·num_heads, L, S). With q, k and v (as "
             "scaled_dot_product_attention): booleans true = may attend, as "
             "mask, broadcast as the function broadcasts it: every dimension "
             "it gives, counted from the last, is the scores' (N, h, L, S) or "
             "1. Numbers are added to the scaled scores in both.",
         TENSOR(2, 4, SCHEMA_LEAF_EITHER), .minus_infinity = true},
    /* booleans, or numbers added to their keys' scores (PyTorch 2's) */
    [API_KEY_PADDING_MASK] =
        {"key_padding_mask",
         .doc = "nn.MultiheadAttention's name of key_padding (not with it): "
                "true = padding; or numbers added to every query's score of "
                "their key, −∞ (in the binary forms) hiding it, as PyTorch 2 "
                "adds a float one.",

         TENSOR(1, 2, SCHEMA_LEAF_EITHER), .minus_infinity = true},
    [API_IS_CAUSAL] = {"is_causal",
                       .doc = "PyTorch's name of causal (not with it).",
                       .kind = SCHEMA_BOOLEAN},
    /* nn.MultiheadAttention's default: weights averaged over the heads */
    [API_AVERAGE_ATTN_WEIGHTS] =
        {"average_attn_weights",
         .doc =
             "weights averaged over the heads the reply holds, (n, m) (B×n×m "
             "in a batch), as nn.MultiheadAttention returns them by default.",

         .kind = SCHEMA_BOOLEAN, LANDS(SCHEMA_BIND_FLAG, average_weights, 0)},
    /* nn.MultiheadAttention's need_weights: false returns output alone
     * (validate.c) */
    [API_NEED_WEIGHTS] =
        {"need_weights",
         .doc = "nn.MultiheadAttention's need_weights, as its forward() takes "
                "it: false returns output alone, as the module then returns "
                "no weights (a reply without weights, the largest stage, "
                "(h, n, m), is a fraction of the size); true (its default) the "
                "default stages, output and weights. Not with return, which "
                "names the stages itself (conflicting_fields); not on /v2, "
                "whose outputs name them.",
         .kind = SCHEMA_BOOLEAN, .invalid_code = ERR_CONFLICTING_FIELDS,
         /* a rule reads it; absent, as true, the default stages */
         .bind = {.as = SCHEMA_BIND_NONE, .absent = 1},
         .oip_instead = "need_weights is not a /v2 parameter: /v2's outputs "
                        "name the stages to return. For need_weights "
                        "false, ask for the output alone, \"outputs\": "
                        "[{\"name\": \"output\"}]; for true, leave "
                        "outputs out (weights and output)"},
    /* nn.MultiheadAttention's batch_first: false takes a batch of x and
     * context sequence first, (L, N, E), and returns it so (batch_first.h) */
    [API_BATCH_FIRST] =
        {"batch_first",
         .doc =
             "nn.MultiheadAttention's batch_first. false takes a batch "
             "sequence first, x (L, N, E) and context (S, N, E_k), and returns "
             "x_pe, concat and output so, (L, N, width); the per-head stages "
             "stay (N, h, L, ·) as the module's weights, and so do the masks. "
             "One sequence is the same either way. A batch in PyTorch's names "
             "must say it (missing_field): the module's default is false. Not "
             "with q, k and v (conflicting_fields).",
         .kind = SCHEMA_BOOLEAN, LANDS(SCHEMA_BIND_FLAG, batch_first, 1)},
    /* add_bias_kv's parameters (1, 1, e) and add_zero_attn: refused, 422
     * (module_options.c) */
    [API_BIAS_K] = {"bias_k",
                    .doc = "add_bias_kv's key bias, (1, 1, e): not computed, "
                           "422 unsupported_option (as bias_v); the detail "
                           "says to send q, k and v with it appended.",
                    TENSOR(1, 3, SCHEMA_LEAF_NUMBER),
                    .invalid_code = ERR_UNSUPPORTED_OPTION, TORCH_KEY(0)},
    [API_BIAS_V] = {"bias_v",
                    .doc =
                        "add_bias_kv's value bias, (1, 1, e); 422 as bias_k.",
                    TENSOR(1, 3, SCHEMA_LEAF_NUMBER),
                    .invalid_code = ERR_UNSUPPORTED_OPTION, TORCH_KEY(0)},
    [API_ADD_ZERO_ATTN] = {"add_zero_attn",
                           .doc = "nn.MultiheadAttention's add_zero_attn: true "
                                  "is not computed, 422 unsupported_option.",
                           .kind = SCHEMA_BOOLEAN,
                           .invalid_code = ERR_UNSUPPORTED_OPTION,
                           .groups = SCHEMA_PROJECTS},
    /* the attention module of a model's state_dict, by its prefix
     * (state_dict.h) */
    [API_MODULE] =
        {"module",
         .doc = "The prefix of the attention module of a model's state_dict to "
                "compute, as named_modules() names it (\"layers.1.self_attn\"; "
                "\"\" for the module's own state_dict); required when the "
                "state_dict holds several. A name that is no attention module "
                "of it: invalid_module, listing them. Only with state_dict; "
                "not on /v2.",
         .kind = SCHEMA_STRING, .invalid_code = ERR_INVALID_MODULE,
         .oip_instead = "module picks a module of /v1's "
                        "state_dict; send the module's tensors "
                        "as inputs named by their keys without "
                        "its prefix"},
    /* module.state_dict() as it is, keys under one prefix (state_dict.h) */
    [API_STATE_DICT] =
        {"state_dict",
         .doc =
             "nn.MultiheadAttention's state_dict() as it is, or a whole "
             "model's: the attention module's keys (in_proj_weight, "
             "in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, "
             "out_proj.weight, out_proj.bias; bias_k and bias_v, refused), "
             "each under the prefix a module inside a model gives them "
             "(\"encoder.layers.0.self_attn.in_proj_weight\"); each is that "
             "field's tensor. The module computed is the one `module` names, "
             "else the one attention module (a prefix with in_proj_weight or "
             "q_proj_weight) the state_dict holds; several and no module: "
             "missing_field at /module, listing them. Keys of other modules "
             "are ignored; a key under the module's prefix that is none of its "
             "keys: unknown_field, pointed at /state_dict/<key>; a key given "
             "here and as a field too: conflicting_fields. Without an "
             "attention module the keys must be under one prefix. /v2 takes "
             "each tensor as an input under its key without the prefix.",
         .kind = SCHEMA_STATE_DICT, .invalid_code = ERR_CONFLICTING_FIELDS,
         .oip_instead = "send each of the state_dict's tensors "
                        "as an input named by its key without "
                        "the module's prefix"},
};

_Static_assert(sizeof rope_members / sizeof *rope_members <= SCHEMA_MEMBERS_MAX,
               "rope's members fit schema_value");

/* No padding hole inside a field's slot (schema.h: every request clears
 * them all twice): only the tail rounds up to the alignment. */
_Static_assert(sizeof(schema_member) ==
                   (offsetof(schema_member, present) + sizeof(bool) +
                    _Alignof(schema_member) - 1) /
                       _Alignof(schema_member) * _Alignof(schema_member),
               "schema_member's members largest first");
_Static_assert(offsetof(schema_value, members) -
                       (offsetof(schema_value, boolean) + sizeof(bool)) <
                   _Alignof(schema_member),
               "schema_value's members largest first");
