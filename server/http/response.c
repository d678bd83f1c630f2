/*
 * response.c - reply → MHD_Response, and the headers of every answer.
 *
 * DESIGN
 * A reply's body is handed over without a copy: a static body is sent from
 * where it lies, a malloc'd one is freed by the library, and a body in parts
 * (a big tensor formatted by several threads) goes out as one I/O vector
 * whose parts are freed when the response is.  Every answer says
 * nosniff, its request id, its trace (traceparent), its caching and Vary:
 * Accept-Encoding (a compressed one its Content-Encoding, reply_coding.c); a
 * CORS preflight (204 with Allow) gets the Access-Control-Allow-* set.
 */
#include "server/http/response.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* Seconds a browser may cache a preflight's answer. */
#define RESPONSE_PREFLIGHT_MAX_AGE "600"

/* The parts of a body in pieces, handed to the response that sends them. */
typedef struct {
    reply_part *parts;
    size_t count;
} sent_parts;

static void free_sent_parts(void *cls)
{
    sent_parts *sent = cls;
    reply_parts_free(sent->parts, sent->count);
    free(sent);
}

/* A response that sends r's parts as one I/O vector; on success it owns
 * them (r->parts is emptied). */
static struct MHD_Response *response_from_parts(reply *r)
{
    sent_parts *sent = malloc(sizeof *sent);
    struct MHD_IoVec *iov = malloc(r->part_count * sizeof *iov);
    struct MHD_Response *resp = NULL;
    if (sent && iov && r->part_count <= UINT_MAX) {
        for (size_t i = 0; i < r->part_count; i++)
            iov[i] = (struct MHD_IoVec){r->parts[i].data, r->parts[i].len};
        *sent = (sent_parts){r->parts, r->part_count};
        resp = MHD_create_response_from_iovec(iov, (unsigned)r->part_count,
                                              free_sent_parts, sent);
    }
    free(iov); /* libmicrohttpd keeps a copy */
    if (!resp) {
        free(sent);
        return NULL;
    }
    r->parts = NULL;
    r->part_count = 0;
    return resp;
}

/* A response that sends r's body, or NULL without memory.  On success the
 * response owns what r owned: r is left with an empty static body. */
static struct MHD_Response *response_from_reply(reply *r)
{
    struct MHD_Response *resp;
    if (r->parts)
        resp = response_from_parts(r);
    else
        resp = MHD_create_response_from_buffer(
            r->body_len, r->body,
            r->body_static ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
    if (!resp)
        return NULL;
    if (!r->body_static)
        r->body = NULL; /* the response owns it now */
    r->body_static = true;
    return resp;
}

static void add_headers(struct MHD_Response *resp, const reply *r,
                        const response_meta *meta)
{
    if (r->content_type)
        MHD_add_response_header(resp, "Content-Type", r->content_type);
    if (r->allow)
        MHD_add_response_header(resp, "Allow", r->allow);
    if (r->retry_after) {
        char value[16];
        snprintf(value, sizeof value, "%u", r->retry_after);
        MHD_add_response_header(resp, "Retry-After", value);
    }
    if (r->www_authenticate)
        MHD_add_response_header(resp, "WWW-Authenticate",
                                "Bearer realm=\"attention\"");
    if (r->json_header_len) {
        char value[24];
        snprintf(value, sizeof value, "%zu", r->json_header_len);
        MHD_add_response_header(resp, "Inference-Header-Content-Length", value);
    }
    MHD_add_response_header(resp, "Cache-Control",
                            r->cache_control ? r->cache_control : "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->frame_ancestors) {
        char policy[1100];
        snprintf(policy, sizeof policy, "frame-ancestors %s",
                 r->frame_ancestors);
        MHD_add_response_header(resp, "Content-Security-Policy", policy);
    }
    MHD_add_response_header(resp, "X-Request-ID", meta->request_id);
    MHD_add_response_header(resp, "traceparent", meta->traceparent);
    if (meta->tracestate[0])
        MHD_add_response_header(resp, "tracestate", meta->tracestate);
    if (r->status == 204 && r->allow) { /* CORS preflight */
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", r->allow);
        /* what every upload sends: a compressed one Content-Encoding, a
         * binary /v2 one Inference-Header-Content-Length */
        MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                                "Content-Type, Content-Encoding, "
                                "Authorization, X-Request-ID, "
                                "Inference-Header-Content-Length, "
                                "traceparent, tracestate");
        MHD_add_response_header(resp, "Access-Control-Max-Age",
                                RESPONSE_PREFLIGHT_MAX_AGE);
    }
    if (meta->allow_origin[0]) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin",
                                meta->allow_origin);
        MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                                "X-Request-ID, Retry-After, "
                                "Inference-Header-Content-Length, "
                                "traceparent, tracestate");
    }
    if (r->content_encoding)
        MHD_add_response_header(resp, "Content-Encoding", r->content_encoding);
    /* every answer's coding follows Accept-Encoding (reply_coding.c) */
    MHD_add_response_header(resp, "Vary",
                            meta->vary_origin ? "Origin, Accept-Encoding"
                                              : "Accept-Encoding");
    if (meta->close)
        MHD_add_response_header(resp, "Connection", "close");
}

enum MHD_Result response_queue(struct MHD_Connection *conn, reply *r,
                               const response_meta *meta, size_t *bytes_out)
{
    struct MHD_Response *resp = response_from_reply(r);
    if (!resp)
        return MHD_NO;
    *bytes_out = r->body_len;
    add_headers(resp, r, meta);
    enum MHD_Result ret = MHD_queue_response(conn, r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}
