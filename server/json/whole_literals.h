/*
 * whole_literals.h - a whole number must be written as one.
 *
 * The parsers read every number as the double nearest to it, and a double
 * keeps about 16 significant digits: 1.00000000000000001 reads as 1,
 * 4503599627370496.5 as 4503599627370496 and 1e-400 as 0.  In a field of
 * whole numbers (positions, heads, counts, shapes) such a literal would be
 * taken as a number the client did not write, so the text is read again
 * for literals that are not whole as written but whole once rounded, and
 * one found where a whole number belongs is refused, quoted as sent.
 *
 * Only the literal's digits decide, so both parsers of a protocol agree,
 * and the walk is cheap where it matters: a literal is converted again only
 * when its digits could round to a whole number (16 significant digits or
 * more, or below 1e-300, and a fraction that begins with 0s or 9s).  The
 * jansson paths walk every body they read; the simdjson paths walk a body
 * only when a whole-number field holds a number written with a fraction or
 * an exponent (simdjson's DOM tells those apart from integers).
 */
#ifndef SERVER_JSON_WHOLE_LITERALS_H
#define SERVER_JSON_WHOLE_LITERALS_H

#include "server/request/codec_error.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the JSON number s[0, n) is a whole number as written: every
 * digit after the decimal point, once the exponent has moved it, is 0
 * ("2.0", "1e3", "12.5e1" are; "2.5", "1e-1" are not). */
bool whole_literal_is_whole(const char *s, size_t n);

/* Whether the JSON number s[0, n) is not whole as written but the double
 * nearest to it is (a literal too long to convert counts as such). */
bool whole_literal_rounds(const char *s, size_t n);

/* The code that refuses a number at `pointer` that is not whole, where a
 * whole number belongs; ERR_NONE where any number may stand.  ctx is the
 * caller's (the parsed document, when the answer depends on it). */
typedef error_code (*whole_literal_slot)(void *ctx, const char *pointer);

/* Refuses (false, err set: slot's code, the pointer and the literal as
 * written) the first literal of text[0, len) that whole_literal_rounds()
 * and that stands where slot says a whole number belongs; true when there
 * is none.  text is JSON a parser has read. */
bool whole_literals_check(const char *text, size_t len, whole_literal_slot slot,
                          void *ctx, codec_error *err);

#ifdef __cplusplus
}
#endif

#endif
