/*
 * parse_rows.h - the big number tensors of a body, parsed row by row on
 * several threads (a helper of parse_fast.cpp; C++ callers only).
 *
 * DESIGN
 * simdjson parses a whole document on one thread: a third of a mid-size
 * request's time (docs/performance.md, "The server's constants").
 * Tensors are arrays of rows of
 * numbers, and a row's text can be found without parsing it: '[' then the
 * first ']'.  So a scan of the top-level object finds each tensor field's
 * rows, the rows are parsed in parallel (a strict JSON number grammar, then
 * std::from_chars, which rounds correctly like jansson's strtod), and the
 * rest of the body - the "envelope", each split tensor replaced by 0 - goes
 * to simdjson as before.  The body is valid exactly when the envelope is and
 * every split tensor is a rectangular array of valid numbers; anything else
 * (a string or a nested array inside a row, a ragged row, an escaped key, a
 * key given twice) makes the split give up, and the whole body takes the
 * usual path.  The differential fuzzer splits every tensor of every input.
 */
#ifndef SERVER_JSON_PARSE_ROWS_H
#define SERVER_JSON_PARSE_ROWS_H

#include "core/pool.h"
#include "server/json/raw_request.h"

#include <string>

/* Parses every number tensor field of body whose text is at least min_bytes
 * long into raw->fields.tensor[] (taking their numbers from *budget), and
 * writes the envelope to *envelope (followed by `padding` spaces).  Returns
 * false, with raw untouched, when the body cannot be split this way; the caller
 * then parses the whole body. */
bool parse_rows_split(const char *body, size_t len, size_t min_bytes,
                      pool *workers, size_t *budget, raw_request *raw,
                      std::string *envelope, size_t padding);

#endif
