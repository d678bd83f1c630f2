/*
 * number_literal.cpp - a number as the client wrote it (number_literal.h):
 * simdjson's On-Demand parser walks to the pointer and hands back the raw
 * token, without converting anything on the way.
 */
#include "server/json/number_literal.h"
#include "server/base/parse_budget.h"

#include <simdjson.h>

#include <cstdio>
#include <cstring>
#include <string_view>

using namespace simdjson;

namespace
{

/* The literal at pointer, trimmed of the spaces after it; false when there
 * is no number there. */
bool find_literal(const char *text, size_t len, const char *pointer,
                  std::string_view *out)
{
    /* the padded copy and On-Demand's structural indexes, generously */
    parse_budget_guard held(len * PARSE_BUDGET_DOM_PER_BODY_BYTE);
    if (!held.held)
        return false;
    padded_string padded(text, len);
    ondemand::parser parser;
    ondemand::document doc;
    if (parser.iterate(padded).get(doc))
        return false;
    ondemand::value value;
    ondemand::json_type type;
    std::string_view raw;
    if (doc.at_pointer(pointer).get(value) || value.type().get(type) ||
        type != ondemand::json_type::number)
        return false;
    raw = value.raw_json_token();
    while (!raw.empty() && std::strchr(" \t\r\n", raw.back()))
        raw.remove_suffix(1);
    *out = raw;
    return !raw.empty();
}

} // namespace

extern "C" void number_literal(const char *text, size_t len,
                               const char *pointer, double value,
                               char out[NUMBER_LITERAL_MAX])
{
    std::string_view raw;
    bool found = false;
    try {
        found = text && find_literal(text, len, pointer, &raw);
    } catch (...) { /* out of memory: the value instead */
        found = false;
    }
    if (!found) {
        number_words(value, out);
        return;
    }
    const size_t keep = NUMBER_LITERAL_MAX - 8;
    if (raw.size() <= keep)
        std::snprintf(out, NUMBER_LITERAL_MAX, "%.*s", (int)raw.size(),
                      raw.data());
    else
        std::snprintf(out, NUMBER_LITERAL_MAX, "%.*s...", (int)keep,
                      raw.data());
}
