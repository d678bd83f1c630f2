/*
 * guards.h - what a request's headers must pass before any endpoint runs:
 * the bearer token, the Content-Type, the CORS origin and the request id
 * (its framing is framing.h's).
 *
 * Each guard reads the headers libmicrohttpd parsed and says yes or no (or
 * fills a reply); the daemon decides what to do with the answer.
 */
#ifndef SERVER_HTTP_GUARDS_H
#define SERVER_HTTP_GUARDS_H

#include "server/base/reply.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* An API key longer than this is a configuration mistake. */
#define GUARD_MAX_API_KEY 512

/* The bearer token of --api-key-file; len 0 means no token is required. */
typedef struct {
    char key[GUARD_MAX_API_KEY + 1];
    size_t len;
} guard_api_key;

/* Reads the token from path (one line; trailing whitespace and line breaks
 * are dropped).  False, with a message in err, when it cannot be read or is
 * not one token of 1 to GUARD_MAX_API_KEY visible bytes (a line break, a
 * space or a control byte inside it is refused). */
bool guard_load_api_key(guard_api_key *key, const char *path, char *err,
                        size_t err_size);

/* Whether the request carries "Authorization: Bearer <key>" (always true
 * when no key is configured; whitespace after the token is not part of it);
 * compared in time that does not depend on where a wrong token differs. */
bool guard_authorized(const guard_api_key *key, struct MHD_Connection *conn);

/* Whether the request's Content-Type is application/json. */
bool guard_json_content_type(struct MHD_Connection *conn);

/* The Access-Control-Allow-Origin value for this request, given the
 * configured origins (comma-separated, or "*"): "*", the request's Origin
 * when it is listed, or "" (no CORS headers). */
void guard_cors_origin(const char *allowed, struct MHD_Connection *conn,
                       char *out, size_t out_size);

/* The request id: the client's X-Request-ID when it is safe to log and echo
 * (letters, digits, '-', '_', '.', shorter than out_size), else one made of
 * the process id and `serial`.  Returns why the client's was replaced
 * ("empty", "too_long", "invalid_characters", static), or NULL when it was
 * kept or there was none. */
const char *guard_request_id(struct MHD_Connection *conn,
                             unsigned long long serial, char *out,
                             size_t out_size);

#endif
