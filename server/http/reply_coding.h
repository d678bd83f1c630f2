/*
 * reply_coding.h - a reply compressed as the client's Accept-Encoding asks
 * (RFC 9110 §12.5.3), when it pays.
 */
#ifndef SERVER_HTTP_REPLY_CODING_H
#define SERVER_HTTP_REPLY_CODING_H

#include "core/attn_stop.h"
#include "core/pool.h"
#include "server/base/budget.h"
#include "server/base/reply.h"

#include <stdbool.h>

/* A reply body smaller than this goes out as it is unless the client
 * refuses identity: TCP's initial congestion window (10 segments of 1460
 * bytes, RFC 6928) delivers it in one round trip whatever its size, so
 * compressing it saves no wait and costs the event thread its time (the
 * figures are in docs/performance.md). */
#define REPLY_CODING_MIN_BYTES ((size_t)16 << 10)

typedef enum {
    REPLY_CODING_IDENTITY,
    REPLY_CODING_GZIP,
    REPLY_CODING_DEFLATE,
} reply_coding_kind;

/* What a request's Accept-Encoding allows. */
typedef struct {
    reply_coding_kind best; /* the acceptable coding the client prefers
                               (gzip on a tie), IDENTITY when neither is */
    bool compress_big;      /* best is preferred at least as much as no
                               coding: a big reply is compressed */
    bool identity_refused;  /* identity;q=0, or *;q=0 without identity:
                               every reply is compressed when best allows */
} reply_accept;

/* Reads an Accept-Encoding value (NULL: the header is absent; the reply
 * then goes out as it is). */
reply_accept reply_coding_accept(const char *accept_encoding);

/* The coding r's body is compressed with under `accept`: accept.best when
 * the body is text (JSON, YAML, HTML, CSS, JavaScript, plain text) and the
 * client refuses identity or the body is at least REPLY_CODING_MIN_BYTES;
 * IDENTITY otherwise, and for a reply already coded. */
reply_coding_kind reply_coding_wanted(const reply *r, reply_accept accept);

/* Compresses r's body with the coding reply_coding_wanted() names, if any,
 * and sets r->content_encoding.  Pieces of the body are compressed side by side
 * on `workers` (NULL: on this thread).  The compressed bytes are reserved in
 * `memory` while both copies exist; when they do not fit, or zlib fails, r goes
 * out as it is. A reply already coded is left alone.  Each body compressed
 * counts in /metrics (attention_reply_compressions_total).  When `stop`
 * (NULL: none) is cancelled before the last piece is done, nobody waits
 * for the reply: the pieces not yet begun are skipped, r is left uncoded
 * and false is returned (else true). */
bool reply_coding_apply(reply *r, reply_accept accept, pool *workers,
                        budget *memory, struct attn_stop *stop);

#endif
