/*
 * literal_walk.h - the literals of a JSON text (numbers, true, false,
 * null), each with the path of the value it writes, read straight from the
 * text: no tree, no allocation.
 *
 * The parsers keep numbers as doubles, which may not be what was written
 * (2^53 + 1 reads as 2^53, 1.00000000000000001 as 1).  Where the words
 * matter, the text is read again: parse_json.c names the number jansson
 * found too large, and whole_literals.c finds a fraction that a double
 * rounded away.
 */
#ifndef SERVER_JSON_LITERAL_WALK_H
#define SERVER_JSON_LITERAL_WALK_H

#include "server/request/codec_error.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One open array or object on the way to a value. */
typedef struct {
    bool array;
    size_t index;    /* array: the element being read                    */
    const char *key; /* object: the member's name as written, escapes kept */
    size_t key_len;
    bool after_colon; /* object: the member's value comes next           */
} literal_level;

/* The levels of a literal, outermost first: the first `kept` of `depth`
 * (a pointer names no deeper value: CODEC_POINTER_MAX / 2 levels). */
#define LITERAL_LEVELS_KEPT (CODEC_POINTER_MAX / 2)
typedef struct {
    const literal_level *levels;
    size_t depth, kept;
} literal_path;

/* Called with each literal text[at, at + n); returning false stops the
 * walk. */
typedef bool (*literal_visit)(void *ctx, const literal_path *path,
                              const char *text, size_t at, size_t n);

/* Walks text[0, len), which a parser has read as JSON (text that is not
 * is walked somehow, without reading past len). */
void literal_walk(const char *text, size_t len, literal_visit visit, void *ctx);

/* out = the RFC 6901 pointer of the value at the end of path.  False when
 * it does not fit or a name holds a \u escape: out then names the nearest
 * parent that fits ("" for the root). */
bool literal_pointer(const literal_path *path, char out[CODEC_POINTER_MAX]);

#ifdef __cplusplus
}
#endif

#endif
