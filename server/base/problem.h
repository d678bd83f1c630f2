/*
 * problem.h - the one place that builds error replies: RFC 9457
 * application/problem+json with a stable machine-readable `code` and, when
 * one field is to blame, a JSON Pointer (RFC 6901) to it.
 *
 *   {"type": "urn:attention:problem:<code>", "title": "Bad Request",
 *    "status": 400, "code": "<code>", "detail": "...", "pointer": "/x/3"}
 *
 * A reply whose route speaks the Open Inference Protocol (error_shape
 * REPLY_ERRORS_OIP, reply.h) gets that protocol's error object instead, as
 * application/json, with the same code and pointer:
 *
 *   {"error": "...", "code": "<code>", "pointer": "/inputs/0"}
 */
#ifndef SERVER_PROBLEM_H
#define SERVER_PROBLEM_H

#include "server/base/reply.h"

#include <stdbool.h>
#include <stddef.h>

/* Seconds a client is told to wait (Retry-After) when the server is busy or
 * shutting down: queues drain and budgets free up within about a second, and
 * a balancer retries on another replica sooner than that anyway. */
#define PROBLEM_RETRY_AFTER_SECONDS 1

/* pointer may be NULL (no field to blame). */
void problem_reply(reply *r, unsigned status, const char *code,
                   const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* 503 Service Unavailable with Retry-After: PROBLEM_RETRY_AFTER_SECONDS:
 * the request was fine, the server cannot take it now. */
void problem_reply_retry(reply *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The reason phrase of an HTTP status ("Bad Request"). */
const char *problem_title(unsigned status);

#endif
