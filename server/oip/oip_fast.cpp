/*
 * oip_fast.cpp - an inference request's JSON with simdjson (oip_fast.h).
 *
 * DESIGN
 * As parse_fast.cpp does for /v1: simdjson's DOM parser (its kernels chosen
 * at run time) and a correctly rounded number parser, so every number is
 * the double jansson would read.  The inputs' "data" arrays are flattened
 * straight into buffers; everything else is copied into jansson values
 * (numbers as reals, as JSON_DECODE_INT_AS_REAL reads them).  What jansson
 * would refuse or read differently - a duplicated key, a NUL in a string,
 * the integer -0 - and data that is neither all numbers nor all booleans
 * are declined, and oip_decode.c parses the JSON with jansson instead.
 */
#include "server/oip/oip_fast.h"

#include "server/json/dom_jansson.h"
#include "server/json/parse_json.h"
#include "server/base/parse_budget.h"
#include "server/request/schema.h"

#include <simdjson.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

using namespace simdjson;

namespace
{

/* Nesting of the request's other values copied into jansson: a request is
 * an object of arrays of objects of small values, so anything deeper is
 * refused by the decoder anyway, and jansson words it. */
constexpr int COPY_MAX_DEPTH = 16;

/* One input's data: leaves in row-major order, at most `left` of them. */
struct flattener {
    size_t left = 0;
    bool typed = false, is_bool = false;
    /* the input's datatype holds whole numbers, and one of them was
     * written with a fraction or an exponent */
    bool whole = false, whole_unsure = false;
    int depth = 0;
    std::vector<double> numbers;
    std::vector<uint8_t> bools;

    bool walk(dom::element e, int arrays)
    {
        if (e.type() == dom::element_type::ARRAY) {
            if (++arrays > SCHEMA_MAX_RANK)
                return false; /* deeper than any input: jansson says so */
            if (arrays > depth)
                depth = arrays;
            dom::array items = e.get_array().value_unsafe();
            for (dom::element child : items)
                if (!walk(child, arrays))
                    return false;
            return true;
        }
        dom::element_type type = e.type();
        bool leaf_bool = type == dom::element_type::BOOL;
        bool number = type == dom::element_type::DOUBLE ||
                      type == dom::element_type::INT64 ||
                      type == dom::element_type::UINT64;
        if ((!leaf_bool && !number) || (typed && leaf_bool != is_bool) ||
            left == 0)
            return false;
        typed = true;
        is_bool = leaf_bool;
        left--;
        if (leaf_bool)
            bools.push_back(e.get_bool().value_unsafe() ? 1 : 0);
        else
            numbers.push_back(e.get_double().value_unsafe());
        whole_unsure |= whole && type == dom::element_type::DOUBLE;
        return true;
    }

    /* Room for as many numbers as the input's shape says, when it says a
     * count this request may hold: no doubling chain for a big tensor. */
    void reserve(dom::object input)
    {
        dom::array shape;
        if (input["shape"].get_array().get(shape))
            return;
        size_t count = 1;
        for (dom::element dim : shape) {
            uint64_t d;
            if (dim.get_uint64().get(d) || d > left || (d && count > left / d))
                return;
            count *= size_t(d);
        }
        numbers.reserve(count); /* booleans are rare and small */
    }

    /* Moves the leaves into out (malloc'd, as C frees them). */
    bool finish(oip_fast_data *out)
    {
        size_t count = is_bool ? bools.size() : numbers.size();
        size_t bytes = count * (is_bool ? 1 : sizeof(double));
        out->values = std::malloc(bytes + 1);
        if (!out->values)
            return false;
        if (bytes)
            std::memcpy(out->values,
                        is_bool ? static_cast<const void *>(bools.data())
                                : static_cast<const void *>(numbers.data()),
                        bytes);
        out->present = true;
        out->is_bool = is_bool;
        out->depth = depth;
        out->count = count;
        return true;
    }
};

/* A value of the request, found at `depth`, as jansson reads it, or NULL
 * when unsure. */
json_t *copy(dom::element e, int depth)
{
    static constexpr dom_jansson_rules rules = {COPY_MAX_DEPTH, true};
    return dom_jansson_copy(e, depth, rules);
}

/* Whether a small value (a shape, parameters, outputs) holds a number
 * written with a fraction or an exponent, `depth` levels down at most. */
bool holds_real(dom::element e, int depth)
{
    dom::array items;
    dom::object members;
    if (e.type() == dom::element_type::DOUBLE)
        return true;
    if (depth > 0 && !e.get_array().get(items)) {
        for (dom::element item : items)
            if (holds_real(item, depth - 1))
                return true;
    } else if (depth > 0 && !e.get_object().get(members)) {
        for (dom::key_value_pair member : members)
            if (holds_real(member.value, depth - 1))
                return true;
    }
    return false;
}

/* One input: its members copied, its data flattened into *data (an empty
 * array stands in its place); *whole_unsure set when a whole number in it
 * may have been written with a fraction or an exponent. */
json_t *copy_input(dom::element e, size_t *budget, oip_fast_data *data,
                   bool *whole_unsure)
{
    dom::object object;
    if (e.get_object().get(object))
        return copy(e, 2); /* not an object: the decoder refuses it */
    json_t *out = json_object();
    for (dom::key_value_pair member : object) {
        std::string key(member.key);
        if (!dom_jansson_new_key(out, key)) {
            json_decref(out);
            return nullptr;
        }
        json_t *value;
        if (key == "data" && member.value.type() == dom::element_type::ARRAY) {
            flattener flat;
            flat.left = *budget;
            flat.reserve(object);
            std::string_view datatype;
            flat.whole = !object["datatype"].get_string().get(datatype) &&
                         oip_datatype_whole(std::string(datatype).c_str());
            if (!flat.walk(member.value, 0) || !flat.finish(data)) {
                json_decref(out);
                return nullptr;
            }
            *budget = flat.left;
            *whole_unsure |= flat.whole_unsure;
            value = json_array();
        } else {
            *whole_unsure |= holds_real(member.value, COPY_MAX_DEPTH);
            value = copy(member.value, 3);
        }
        if (json_object_set_new(out, key.c_str(), value)) {
            json_decref(out);
            return nullptr;
        }
    }
    return out;
}

/* The request's members, its inputs one by one. */
bool copy_request(dom::object object, size_t budget, oip_fast *out)
{
    out->root = json_object();
    if (!out->root)
        return false;
    for (dom::key_value_pair member : object) {
        std::string key(member.key);
        if (!dom_jansson_new_key(out->root, key))
            return false;
        json_t *value = nullptr;
        dom::array inputs;
        if (key == "inputs" && !member.value.get_array().get(inputs) &&
            !out->data) {
            size_t count = inputs.size();
            out->data = static_cast<oip_fast_data *>(
                std::calloc(count + 1, sizeof *out->data));
            if (!out->data)
                return false;
            out->inputs = count;
            value = json_array();
            size_t i = 0;
            for (dom::element input : inputs) {
                json_t *item = copy_input(input, &budget, &out->data[i++],
                                          &out->whole_unsure);
                /* takes item, NULL or not, even when it fails */
                if (json_array_append_new(value, item)) {
                    json_decref(value);
                    return false;
                }
            }
        } else {
            out->whole_unsure |= holds_real(member.value, COPY_MAX_DEPTH);
            value = copy(member.value, 1);
        }
        if (json_object_set_new(out->root, key.c_str(), value))
            return false;
    }
    return true;
}

/* simdjson reads up to SIMDJSON_PADDING bytes past the end: each thread
 * keeps one padded copy and one parser for small JSON, reused across
 * requests. */
thread_local std::string small_padded;
thread_local dom::parser small_parser;

bool parse_with(dom::parser &parser, std::string &padded, const char *json,
                size_t len, size_t max_elements, oip_fast *out)
{
    padded.assign(json, len);
    padded.append(SIMDJSON_PADDING, ' ');
    dom::element root;
    dom::object object;
    return !parser.parse(padded.data(), len, false).get(root) &&
           !root.get_object().get(object) &&
           copy_request(object, max_elements, out);
}

} // namespace

extern "C" void oip_fast_free(oip_fast *f)
{
    for (size_t i = 0; f->data && i < f->inputs; i++)
        std::free(f->data[i].values);
    std::free(f->data);
    json_decref(f->root);
    std::memset(f, 0, sizeof *f);
}

extern "C" bool oip_parse_fast(const char *json, size_t len,
                               size_t max_elements, oip_fast *out)
{
    std::memset(out, 0, sizeof *out);
    if (len == 0 || parse_json_may_hold_negative_zero(json, len))
        return false;
    try {
        bool ok;
        if (len <= PARSE_BUDGET_REUSE_MAX_BYTES) {
            ok = parse_with(small_parser, small_padded, json, len, max_elements,
                            out);
        } else {
            parse_budget_guard dom(len * PARSE_BUDGET_DOM_PER_BODY_BYTE);
            if (!dom.held)
                return false; /* jansson tries within the account */
            dom::parser parser;
            std::string padded;
            ok = parse_with(parser, padded, json, len, max_elements, out);
        }
        if (!ok)
            oip_fast_free(out);
        return ok;
    } catch (...) { /* std::bad_alloc: jansson tries and reports memory */
        oip_fast_free(out);
        return false;
    }
}
