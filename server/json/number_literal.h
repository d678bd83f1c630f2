/*
 * number_literal.h - a number as the client wrote it, for a refusal's
 * words.
 *
 * The parsers keep numbers as doubles, and a double may not be what was
 * sent: 9007199254740993 arrives as 9007199254740992.  A refusal that
 * quotes the double would name a number the client never wrote, so the
 * rules that refuse a whole number (positions, /v2's integer data) quote
 * the literal found again in the request's text at the value's pointer.
 * Only refusals look it up: it reads the whole text once.
 */
#ifndef SERVER_JSON_NUMBER_LITERAL_H
#define SERVER_JSON_NUMBER_LITERAL_H

#include "server/request/number_words.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a quoted literal (the request model's). */
#define NUMBER_LITERAL_MAX NUMBER_WORDS_MAX

/* Writes to out the number at JSON pointer `pointer` of text[0 .. len) as
 * written there; when text is NULL, there is no number there (a binary
 * tensor, a name written with escapes) or reading it again does not fit the
 * parse account, writes `value` instead (number_words).  The
 * decoders hand it to the rules as api_fields.literal. */
void number_literal(const char *text, size_t len, const char *pointer,
                    double value, char out[NUMBER_LITERAL_MAX]);

#ifdef __cplusplus
}
#endif

#endif
