/*
 * join_parts.h - a reply body sent in parts, joined into one string for a
 * test to read.
 *
 * The server never joins them: it sends the parts as one I/O vector
 * (server/http/response.c).  Tests want one NUL-terminated string to search
 * and compare, so the joins live here, beside the tests that use them
 * (tests/unit, tests/fuzz).
 */
#ifndef TESTS_JOIN_PARTS_H
#define TESTS_JOIN_PARTS_H

#include "server/base/buf_chain.h"
#include "server/base/reply.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Bytes in all of a chain's parts. */
static inline size_t buf_chain_len(const buf_chain *c)
{
    size_t len = 0;
    for (size_t i = 0; i < c->count; i++)
        len += c->parts[i].len;
    return len;
}

/* One malloc'd copy of a chain's bytes with a NUL after it, or NULL (and
 * *len 0) when the chain failed or without memory; the chain is left as it
 * was. */
static inline char *buf_chain_join(const buf_chain *c, size_t *len)
{
    *len = 0;
    if (buf_chain_failed(c))
        return NULL;
    size_t total = buf_chain_len(c);
    char *all = malloc(total + 1);
    if (!all)
        return NULL;
    size_t at = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->parts[i].len)
            memcpy(all + at, c->parts[i].data, c->parts[i].len);
        at += c->parts[i].len;
    }
    all[total] = '\0';
    *len = total;
    return all;
}

/* Joins a reply's parts into one malloc'd body with a NUL after it; false
 * without memory, the reply unchanged.  A reply with one body already is
 * left as it is. */
static inline bool reply_join(reply *r)
{
    if (!r->parts)
        return true;
    char *body = malloc(r->body_len + 1);
    if (!body)
        return false;
    size_t at = 0;
    for (size_t i = 0; i < r->part_count; i++) {
        memcpy(body + at, r->parts[i].data, r->parts[i].len);
        at += r->parts[i].len;
    }
    body[at] = '\0';
    reply_parts_free(r->parts, r->part_count);
    r->parts = NULL;
    r->part_count = 0;
    r->body = body;
    r->body_static = false;
    return true;
}

#endif
