/*
 * problem.h - the one place that builds error replies: RFC 9457
 * application/problem+json with a stable machine-readable `code` and, when
 * one field is to blame, a JSON Pointer (RFC 6901) to it.
 *
 *   {"type": "urn:attention:problem:<code>", "title": "Bad Request",
 *    "status": 400, "code": "<code>", "detail": "...", "pointer": "/x/3"}
 */
#ifndef SERVER_PROBLEM_H
#define SERVER_PROBLEM_H

#include "server/base/reply.h"

#include <stdbool.h>
#include <stddef.h>

/* pointer may be NULL (no field to blame). */
void problem_reply(reply *r, unsigned status, const char *code,
                   const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The reason phrase of an HTTP status ("Bad Request"). */
const char *problem_title(unsigned status);

/* Appends "/token" to a JSON Pointer, escaping '~' and '/' (RFC 6901 §3).
 * Returns false when it does not fit in size bytes (then pointer is cut
 * short and must not be sent). */
bool problem_pointer_append(char *pointer, size_t size, const char *token);

#endif
