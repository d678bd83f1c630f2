/*
 * parse_fast.cpp - body → raw_request with simdjson's DOM parser.
 *
 * DESIGN
 * For tensors, jansson's parsing of the JSON numbers costs far more than
 * the arithmetic.  simdjson (Debian's libsimdjson-dev) validates UTF-8 and
 * structure with SIMD and parses numbers with a correctly rounded fast float
 * parser, many times faster (docs/performance.md, "The server's constants").
 * This file exposes one C function (parse_json.h); parse_rows.cpp is its
 * helper.
 *
 * It vouches only for the happy path: a JSON object with known fields (the
 * schema's rows), each
 * at most once, tensors that are rectangular arrays of numbers (or booleans
 * where allowed).  Anything else - a syntax error, an unknown or duplicated
 * field, a ragged row, a string where a number belongs - returns false, and
 * the caller parses the same body with jansson, which then words the error.
 * The DOM parser (not On-Demand) is used because its kernels are chosen at
 * run time inside the library (AVX2, AVX-512, ...), while On-Demand's are
 * fixed by the compiler flags of this file.  The small non-tensor fields are
 * copied into jansson values; a string holding "\u0000", which jansson
 * refuses, sends the body to jansson.  The differential fuzzer (tests/fuzz)
 * checks that both paths agree bit for bit.
 */
#include "server/json/parse_json.h"
#include "server/base/parse_budget.h"
#include "server/json/dom_jansson.h"
#include "server/json/parse_rows.h"

#include <simdjson.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace simdjson;

namespace
{

/* One tensor field being walked: shape discovered from the first element at
 * each depth, every other array checked against it. */
struct tensor_walk {
    const schema_field *spec;
    size_t budget; /* numbers this request may still hold */
    int rank = -1; /* depth of the first leaf */
    int leaf_bool = -1;
    size_t dims[SCHEMA_MAX_RANK] = {0};
    size_t first_sizes[SCHEMA_MAX_RANK] = {
        0}; /* the first array at each depth */
    std::vector<double> numbers;
    std::vector<uint8_t> bools;
    /* a whole-number field holds a number with a fraction or exponent */
    bool whole_unsure = false;

    bool leaf(dom::element e, int depth)
    {
        dom::element_type type = e.type();
        if (type == dom::element_type::DOUBLE && depth == rank &&
            leaf_bool == 0 && budget > 0) {
            /* most numbers after the first: what the lines below decide
             * for them, without deciding it again */
            budget--;
            whole_unsure |= spec->whole;
            numbers.push_back(e.get_double().value_unsafe());
            return true;
        }
        if (rank < 0) {
            rank = depth;
            /* a rectangular tensor holds the product of the first arrays'
             * sizes: one allocation instead of a doubling chain */
            size_t expected = 1;
            for (int i = 0; i < rank; i++)
                expected *= first_sizes[i];
            if (expected <= budget) {
                if (e.type() == dom::element_type::BOOL)
                    bools.reserve(expected);
                else
                    numbers.reserve(expected);
            }
        } else if (depth != rank) {
            return false;
        }
        bool is_bool = type == dom::element_type::BOOL;
        bool is_number = type == dom::element_type::DOUBLE ||
                         type == dom::element_type::INT64 ||
                         type == dom::element_type::UINT64;
        if (!is_bool && !is_number)
            return false;
        if (leaf_bool < 0) {
            if ((spec->leaf == SCHEMA_LEAF_BOOL && !is_bool) ||
                (spec->leaf == SCHEMA_LEAF_NUMBER && is_bool))
                return false;
            leaf_bool = is_bool;
        } else if (leaf_bool != is_bool) {
            return false;
        }
        if (budget == 0)
            return false;
        budget--;
        if (is_bool) {
            bools.push_back(e.get_bool().value_unsafe());
            return true;
        }
        double d;
        if (e.get_double().get(d))
            return false;
        whole_unsure |= spec->whole && type == dom::element_type::DOUBLE;
        numbers.push_back(d);
        return true;
    }

    bool walk(dom::element e, int depth)
    {
        if (e.type() != dom::element_type::ARRAY)
            return leaf(e, depth);
        if (depth == spec->max_rank || (rank >= 0 && depth >= rank))
            return false;
        dom::array array = e.get_array().value_unsafe();
        if (first_sizes[depth] == 0)
            first_sizes[depth] = array.size();
        size_t count = 0;
        /* a leaf is taken here, not by a call of walk() per number: the
         * call was a third of the walk's cost on a lesson's body */
        for (dom::element child : array) {
            if (!(child.type() == dom::element_type::ARRAY
                      ? walk(child, depth + 1)
                      : leaf(child, depth + 1)))
                return false;
            count++;
        }
        if (count == 0)
            return false;
        /* rows complete in order, so the first array finished at a depth
         * sets its length and every later one must match */
        if (dims[depth] == 0)
            dims[depth] = count;
        return dims[depth] == count;
    }

    bool finish(schema_tensor *t)
    {
        if (rank < spec->min_rank)
            return false;
        t->rank = rank;
        for (int i = 0; i < rank; i++)
            t->dims[i] = dims[i];
        t->is_bool = leaf_bool == 1;
        size_t bytes =
            t->is_bool ? bools.size() : numbers.size() * sizeof(double);
        t->data = std::malloc(bytes + 1);
        if (!t->data)
            return false;
        std::memcpy(t->data,
                    t->is_bool ? static_cast<const void *>(bools.data())
                               : static_cast<const void *>(numbers.data()),
                    bytes);
        t->present = true;
        return true;
    }
};

/* A small non-tensor value: a scalar or a list of them (no object
 * belongs in the schema's small fields; depth 1 holds no array). */
constexpr dom_jansson_rules SMALL_VALUE = {1, false};

/* A tensor in the binary form, {"shape": [...], "base64": "..."}, read as
 * parse_json.c reads it (the same dimension rule and the same decoder) once
 * the request's dtype gives wire; anything else is jansson's to word. */
bool binary_tensor(dom::element e, const schema_field *spec, schema_tensor *t,
                   api_wire wire, size_t *budget, bool *whole_unsure)
{
    dom::object object;
    dom::array shape;
    std::string_view text;
    bool has_shape = false, has_text = false;
    if (spec->leaf == SCHEMA_LEAF_BOOL || e.get_object().get(object))
        return false;
    for (dom::key_value_pair member : object) {
        if (member.key == "shape" && !has_shape)
            has_shape = !member.value.get_array().get(shape);
        else if (member.key == "base64" && !has_text)
            has_text = !member.value.get_string().get(text);
        else
            return false;
    }
    if (!has_shape || !has_text || shape.size() < (size_t)spec->min_rank ||
        shape.size() > (size_t)spec->max_rank)
        return false;
    t->rank = (int)shape.size();
    size_t count = 1, i = 0;
    for (dom::element dim : shape) {
        double d;
        if (dim.get_double().get(d) || !parse_json_binary_dim(d))
            return false;
        *whole_unsure |= dim.type() == dom::element_type::DOUBLE;
        t->dims[i++] = (size_t)d;
        if (!tensor_mul_size(count, (size_t)d, &count))
            count = SIZE_MAX;
    }
    codec_error err;
    return parse_json_binary_numbers(spec, t, count, text.data(), text.size(),
                                     wire, budget, &err);
}

/* Whether small field `row`, an integer or an object of members, holds a
 * number written with a fraction or an exponent. */
bool holds_whole_real(const schema_field &row, dom::element value)
{
    if (row.kind == SCHEMA_INTEGER)
        return value.type() == dom::element_type::DOUBLE;
    dom::object members;
    if (row.kind != SCHEMA_OBJECT || value.get_object().get(members))
        return false;
    for (dom::key_value_pair member : members)
        if (member.value.type() == dom::element_type::DOUBLE)
            return true; /* whole_literals_check() asks which member */
    return false;
}

bool parse_object(dom::object object, size_t max_elements, raw_request *raw)
{
    size_t budget = max_elements;
    bool seen[API_FIELD_COUNT] = {false};
    /* binary tensors wait for the dtype, which may come after them */
    std::vector<std::pair<int, dom::element>> binary;
    for (dom::key_value_pair field : object) {
        std::string name(field.key);
        int known = name.find('\0') == std::string::npos
                        ? schema_field_of(name.c_str())
                        : -1;
        if (known < 0 || seen[known])
            return false; /* unknown or duplicated: jansson says which */
        seen[known] = true;
        if (api_schema[known].kind == SCHEMA_TENSOR) {
            schema_tensor *t = &raw->fields.tensor[known];
            if (t->present)
                continue; /* parsed by rows already (parse_rows.cpp) */
            if (field.value.type() == dom::element_type::OBJECT) {
                binary.emplace_back(known, field.value);
                continue;
            }
            tensor_walk walk;
            walk.spec = &api_schema[known];
            walk.budget = budget;
            if (!walk.walk(field.value, 0) || !walk.finish(t))
                return false;
            budget = walk.budget;
            raw->whole_unsure |= walk.whole_unsure;
            continue;
        }
        raw->whole_unsure |= holds_whole_real(api_schema[known], field.value);
        json_t *small = dom_jansson_copy(field.value, 0, SMALL_VALUE);
        if (!small || json_object_set_new(raw->envelope, name.c_str(), small))
            return false;
    }
    /* the request's dtype as parse_json.c finds it (an unknown one is
     * reported later, by the decoder of the small fields) */
    int dtype = schema_choice_of(
        API_DTYPE, json_string_value(json_object_get(
                       raw->envelope, api_schema[API_DTYPE].name)));
    api_wire wire = dtype < 0 ? API_WIRE_FLOAT64 : static_cast<api_wire>(dtype);
    for (auto &[f, value] : binary)
        if (!binary_tensor(value, &api_schema[f], &raw->fields.tensor[f], wire,
                           &budget, &raw->whole_unsure))
            return false;
    return true;
}

/* jansson reads the integer "-0" as the real -0.0, while simdjson's tape
 * keeps it as the integer 0 and loses the sign.  Such a token is rare: a body
 * that may hold one goes to jansson (a "-0" inside a string only costs that
 * detour). */
bool may_hold_negative_zero_integer(const char *body, size_t len)
{
    const char *end = body + len;
    for (const char *p = body;
         (p = static_cast<const char *>(std::memchr(p, '-', size_t(end - p))));
         p++) {
        if (end - p < 2 || p[1] != '0')
            continue;
        char next = end - p > 2 ? p[2] : ' ';
        if (!(next >= '0' && next <= '9') && next != '.' && next != 'e' &&
            next != 'E')
            return true;
    }
    return false;
}

/* simdjson reads up to SIMDJSON_PADDING bytes past the end: each thread
 * keeps one padded copy buffer (the body, or its envelope when big tensors
 * were split off) and one parser, reused across requests for bodies of at
 * most PARSE_BUDGET_REUSE_MAX_BYTES. */
thread_local std::string padded;
thread_local dom::parser parser;

} // namespace

extern "C" bool parse_json_may_hold_negative_zero(const char *text, size_t len)
{
    return may_hold_negative_zero_integer(text, len);
}

extern "C" bool parse_json_fast(const char *body, size_t len,
                                size_t max_elements, pool *workers,
                                size_t split_min_bytes, raw_request *raw)
{
    std::memset(raw, 0, sizeof *raw);
    if (len == 0)
        return false; /* an empty body (body may be NULL): jansson's error */
    try {
        size_t budget = max_elements;
        bool reuse = len <= PARSE_BUDGET_REUSE_MAX_BYTES;
        std::string own_text;
        std::string &text = reuse ? padded : own_text;
        /* the envelope of a split body, or a padded copy of the body */
        bool split = len >= split_min_bytes &&
                     parse_rows_split(body, len, split_min_bytes, workers,
                                      &budget, raw, &text, SIMDJSON_PADDING);
        if (!split) {
            text.assign(body, len);
            text.append(SIMDJSON_PADDING, ' ');
        }
        size_t text_len = text.size() - SIMDJSON_PADDING;
        parse_budget_guard dom(
            reuse ? 0 : text_len * PARSE_BUDGET_DOM_PER_BODY_BYTE);
        if (!dom.held ||
            may_hold_negative_zero_integer(text.data(), text_len)) {
            raw_request_free(raw);
            return false;
        }
        dom::parser own_parser;
        dom::parser &text_parser = reuse ? parser : own_parser;
        raw->envelope = json_object();
        dom::element root;
        dom::object object;
        bool ok = raw->envelope &&
                  !text_parser.parse(text.data(), text_len, false).get(root) &&
                  !root.get_object().get(object) &&
                  parse_object(object, budget, raw);
        if (!ok)
            raw_request_free(raw);
        return ok;
    } catch (...) { /* std::bad_alloc: jansson tries and reports memory */
        raw_request_free(raw);
        return false;
    }
}
