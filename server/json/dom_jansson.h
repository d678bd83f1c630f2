/*
 * dom_jansson.h - a value of simdjson's DOM as the jansson value jansson
 * reads from the same text (C++: parse_fast.cpp and oip_fast.cpp).
 *
 * DESIGN
 * The fast parsers copy a request's small values (everything but tensor
 * data) into jansson values, so that one decoder reads them whichever
 * parser ran.  A copy is the value jansson would have read or it is not
 * made: numbers become reals (as JSON_DECODE_INT_AS_REAL reads them), and
 * what jansson would refuse - a NUL in a string or a key, a key twice - is
 * NULL, upon which the caller declines the body and jansson parses it and
 * words the error.
 */
#ifndef SERVER_JSON_DOM_JANSSON_H
#define SERVER_JSON_DOM_JANSSON_H

#ifndef __cplusplus
#error "dom_jansson.h reads simdjson's DOM: C++ only"
#endif

#include <jansson.h>
#include <simdjson.h>

#include <string>

/* What a copy may hold; anything else is NULL. */
struct dom_jansson_rules {
    int max_depth; /* an array or object at this depth or deeper is refused
                      (depth 0: the value copied itself) */
    bool objects;  /* objects may be copied */
};

/* A new jansson value of e, found at `depth`, or NULL when it breaks rules
 * or jansson would read it otherwise. */
json_t *dom_jansson_copy(simdjson::dom::element e, int depth,
                         const dom_jansson_rules &rules);

/* Whether key may join object: no NUL (jansson refuses it) and not there
 * yet (jansson refuses a key twice); false when object is NULL. */
bool dom_jansson_new_key(json_t *object, const std::string &key);

#endif
