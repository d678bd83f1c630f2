/*
 * dom_jansson.cpp - simdjson's DOM values copied into jansson's
 * (dom_jansson.h).
 */
#include "server/json/dom_jansson.h"

#include <string_view>

using namespace simdjson;

bool dom_jansson_new_key(json_t *object, const std::string &key)
{
    return object && key.find('\0') == std::string::npos &&
           !json_object_get(object, key.c_str());
}

/* An object's members into a new jansson object, or NULL. */
static json_t *copy_object(dom::object object, int depth,
                           const dom_jansson_rules &rules)
{
    json_t *out = json_object();
    for (dom::key_value_pair member : object) {
        std::string key(member.key);
        /* json_object_set_new() takes the value, NULL or not, even when it
         * fails */
        if (!dom_jansson_new_key(out, key) ||
            json_object_set_new(
                out, key.c_str(),
                dom_jansson_copy(member.value, depth + 1, rules))) {
            json_decref(out);
            return nullptr;
        }
    }
    return out;
}

/* An array's items into a new jansson array, or NULL. */
static json_t *copy_array(dom::array items, int depth,
                          const dom_jansson_rules &rules)
{
    json_t *out = json_array();
    for (dom::element child : items)
        /* json_array_append_new() takes the item, NULL or not, even when it
         * fails */
        if (json_array_append_new(out,
                                  dom_jansson_copy(child, depth + 1, rules))) {
            json_decref(out);
            return nullptr;
        }
    return out;
}

json_t *dom_jansson_copy(dom::element e, int depth,
                         const dom_jansson_rules &rules)
{
    switch (e.type()) {
    case dom::element_type::OBJECT:
        if (!rules.objects || depth >= rules.max_depth)
            return nullptr;
        return copy_object(e.get_object().value_unsafe(), depth, rules);
    case dom::element_type::ARRAY:
        if (depth >= rules.max_depth)
            return nullptr;
        return copy_array(e.get_array().value_unsafe(), depth, rules);
    case dom::element_type::STRING: {
        std::string_view s = e.get_string().value_unsafe();
        if (s.find('\0') != std::string_view::npos)
            return nullptr;
        return json_stringn(s.data(), s.size());
    }
    case dom::element_type::DOUBLE:
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
        return json_real(e.get_double().value_unsafe());
    case dom::element_type::BOOL:
        return json_boolean(e.get_bool().value_unsafe());
    case dom::element_type::NULL_VALUE:
        return json_null();
    default:
        return nullptr;
    }
}
