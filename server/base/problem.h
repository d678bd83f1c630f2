/*
 * problem.h - the one place that builds error replies: RFC 9457
 * application/problem+json with a stable machine-readable `code` and, when
 * one field is to blame, a JSON Pointer (RFC 6901) to it.
 *
 *   {"type": "urn:attention:problem:<code>", "title": "Bad Request",
 *    "status": 400, "code": "<code>", "detail": "...", "pointer": "/x/3",
 *    "trace_id": "<32 hex digits>"}
 *
 * A reply whose route speaks the Open Inference Protocol (error_shape
 * REPLY_ERRORS_OIP, reply.h) gets that protocol's error object instead, as
 * application/json, with the same code and pointer:
 *
 *   {"error": "...", "code": "<code>", "pointer": "/inputs/0",
 *    "trace_id": "<32 hex digits>"}
 *
 * trace_id is the request's W3C trace (the reply's trace_id, when the HTTP
 * layer set it); the out_of_memory reply built without memory has none.
 */
#ifndef SERVER_PROBLEM_H
#define SERVER_PROBLEM_H

#include "server/base/error_codes.h"
#include "server/base/reply.h"

#include <stdbool.h>
#include <stddef.h>

/* The reply of error `code` (error_codes.h): its status, title and, for a
 * 503, Retry-After from the table.  pointer may be NULL (no field to
 * blame). */
void problem_reply(reply *r, error_code code, const char *pointer,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
