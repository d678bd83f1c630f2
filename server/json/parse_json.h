/*
 * parse_json.h - the two parsers from a body to a raw_request.
 */
#ifndef SERVER_JSON_PARSE_JSON_H
#define SERVER_JSON_PARSE_JSON_H

#include "core/pool.h"
#include "server/request/codec_error.h"
#include "server/json/raw_request.h"

#include <jansson.h>
#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* jansson: the authority.  Rejects exactly what the API rejects at the
 * syntax and structure level, with the error a person needs (line and
 * column, JSON Pointer).  `max_elements` bounds the numbers held. */
bool parse_json_jansson(const char *body, size_t len, size_t max_elements,
                        raw_request *raw, codec_error *err);

/* The binary form of a tensor, {"shape": [...], "base64": "..."}, as both
 * parsers read it.  A dimension of its shape: a whole number from 1 to
 * 10^15 (written as an integer or not). */
static inline bool parse_json_binary_dim(double d)
{
    return d >= 1 && d == floor(d) && d <= 1e15;
}

/* Its numbers, once t holds its shape (count numbers): text_len bytes of
 * base64 of count little-endian numbers of type wire, taken from *budget;
 * float32 ones are kept as floats (t->is_float32), and so are the 16-bit
 * types, widened (half.h).  False with err (at /<field>/base64) when they
 * do not fit the budget, the shape or the alphabet, or one is not
 * finite. */
bool parse_json_binary_numbers(const schema_field *spec, schema_tensor *t,
                               size_t count, const char *text, size_t text_len,
                               api_wire wire, size_t *budget, codec_error *err);

/* One tensor of spec's kind from v: nested arrays, or the binary form of
 * numbers of type wire; its numbers taken from *budget.  Errors
 * point at /<spec's name>/... */
bool parse_json_tensor(json_t *v, const schema_field *spec, schema_tensor *t,
                       api_wire wire, size_t *budget, codec_error *err);

/* json_loadb() under this thread's parse account (server/base/
 * parse_budget.h).  False when the tree did not fit the account: err is
 * then 413 limit_exceeded, with no pointer.  Else true, and *root is the
 * tree or NULL with *jerr saying why, as json_loadb() gives them. */
bool parse_json_loadb(const char *text, size_t len, size_t flags, json_t **root,
                      json_error_t *jerr, codec_error *err);

/* The longest number a number_out_of_range message quotes. */
#define PARSE_JSON_QUOTE_MAX 40

/* Whether the JSON text [text, text + len) holds a NUL byte, which JSON
 * allows nowhere (jansson skips one after a number): then err is 400
 * invalid_json at its line and column, and the result is true. */
bool parse_json_nul_byte(const char *text, size_t len, codec_error *err);

/* Whether jansson (reading with `flags`) refused the JSON text [text,
 * text + len) for a number beyond the range of a double (1e309, -1e309, as
 * jansson reads every number) and for nothing else: then err is 400
 * number_out_of_range at the first such number's RFC 6901 pointer, as a
 * number too big for float32 is reported, and the result is true.  When the
 * text holds another error too, *jerr becomes the first of those (at the
 * same line and column) and the result is false; any other refusal: false,
 * *jerr and err untouched.  The rest is read under this thread's parse
 * account (parse_budget.h): when it does not fit, err is 413 and the result
 * true. */
bool parse_json_number_overflow(const char *text, size_t len,
                                json_error_t *jerr, int flags,
                                codec_error *err);

/* simdjson: the fast path.  Returns true only for a body that jansson
 * accepts with the very same values (bit for bit); false means "not sure",
 * and the caller runs parse_json_jansson() instead.  Never reports errors.
 * Tensors of at least split_min_bytes of text are parsed row by row on
 * workers (parse_rows.h; workers may be NULL, SIZE_MAX splits nothing). */
bool parse_json_fast(const char *body, size_t len, size_t max_elements,
                     pool *workers, size_t split_min_bytes, raw_request *raw);

/* Whether a JSON text may hold the integer -0, which jansson reads as the
 * real -0.0 and simdjson as the integer 0: a fast reader declines it. */
bool parse_json_may_hold_negative_zero(const char *text, size_t len);

#ifdef __cplusplus
}
#endif

#endif
