/*
 * numfmt.cpp - shortest round-trip number formatting with C++17's
 * std::to_chars (libstdc++ implements it with Ryu).
 *
 * std::to_chars without a format argument writes the shortest decimal that
 * reads back to exactly the same value, in fixed or scientific notation,
 * whichever is shorter ("0.1", "1e+22", "1e-07"): all valid JSON numbers.
 * It replaced a printf("%.15g/%.16g/%.17g") + strtod loop that took about
 * 1.9 µs per number here, against about 0.1 µs now.
 */
#include "numfmt.h"

#include <charconv>

/* A whole number of 2^53 or more (2^24 for float) printed in fixed notation
 * looks like an integer literal that overflows int64 in many JSON parsers
 * (jansson's default mode refuses it; Python reads an int): such values are
 * written in exponent form, still shortest, e.g. 1.2344567890123457e+20. */
template <typename T>
static size_t format_shortest(T value, char *out, T integer_limit)
{
    std::to_chars_result r = std::to_chars(out, out + NUMFMT_MAX - 1, value);
    if (value >= integer_limit || value <= -integer_limit) {
        /* rare: only such values need the look at what was written */
        bool plain_integer = true;
        for (char *c = out; c < r.ptr; c++)
            if (*c == '.' || *c == 'e')
                plain_integer = false;
        if (plain_integer)
            r = std::to_chars(out, out + NUMFMT_MAX - 1, value,
                              std::chars_format::scientific);
    }
    *r.ptr = '\0';
    return size_t(r.ptr - out);
}

extern "C" size_t numfmt_double(double value, char out[NUMFMT_MAX])
{
    return format_shortest(value, out, 9007199254740992.0); /* 2^53 */
}

extern "C" size_t numfmt_float(float value, char out[NUMFMT_MAX])
{
    return format_shortest(value, out, 16777216.0f); /* 2^24 */
}
