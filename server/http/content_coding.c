/*
 * content_coding.c - a request body's Content-Encoding, decoded as it
 * arrives.
 *
 * DESIGN
 * gzip (RFC 1952) and deflate (the zlib format, RFC 1950, as HTTP names it)
 * are inflated with zlib chunk by chunk, and every inflated piece goes
 * through upload_append(): --max-body and the memory budget count what the
 * body inflates to, not what was sent, and inflation stops at the first
 * piece they refuse (a few KB that would inflate to gigabytes cost at most
 * --max-body plus one piece).  The compressed bytes are never kept.
 * identity is no coding; any other coding, or two, is 415.  A stream that
 * is corrupt, or ends before its end, or has bytes after it, is 400
 * invalid_body.  The inflater's own state (zlib's ~7 KB and its 32 KB
 * window) lives as long as the request and is not counted in the budget:
 * one per connection at most.
 */
#include "server/http/exchange.h"

#include "server/base/problem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* Bytes inflated between two calls of upload_append(): the most a body may
 * pass --max-body or the budget by before it is refused. */
#define CODING_PIECE (16u << 10)

/* zlib's windowBits: 15 (a 32 KB window), plus 16 to read a gzip header. */
#define ZLIB_WINDOW_BITS 15
#define GZIP_WINDOW_BITS (15 + 16)

struct content_coding {
    z_stream z;
    bool ended; /* the stream's end was read */
};

/* Answers the request with `code` and the message why (a format of one
 * string argument, arg); false. */
static bool refuse(request *req, error_code code, const char *why,
                   const char *arg)
{
    char detail[256];
    snprintf(detail, sizeof detail, why, arg);
    problem_reply(&req->rep, code, NULL, "%s", detail);
    req->state = REQ_REPLIED;
    return false;
}

bool coding_begin(request *req, struct MHD_Connection *conn)
{
    const char *coding =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Encoding");
    if (!coding || !*coding || strcasecmp(coding, "identity") == 0)
        return true;
    int bits =
        strcasecmp(coding, "gzip") == 0 || strcasecmp(coding, "x-gzip") == 0
            ? GZIP_WINDOW_BITS
        : strcasecmp(coding, "deflate") == 0 ? ZLIB_WINDOW_BITS
                                             : 0;
    if (!bits)
        return refuse(req, ERR_UNSUPPORTED_MEDIA_TYPE,
                      "Content-Encoding \"%.64s\" is not read; send the body "
                      "as it is, or gzip or deflate",
                      coding);
    req->coding = calloc(1, sizeof *req->coding);
    if (!req->coding || inflateInit2(&req->coding->z, bits) != Z_OK) {
        free(req->coding);
        req->coding = NULL;
        return refuse(req, ERR_OUT_OF_MEMORY,
                      "the server could not allocate an inflater for a %s "
                      "body",
                      coding);
    }
    return true;
}

bool coding_append(request *req, const char *data, size_t size)
{
    z_stream *z = &req->coding->z;
    if (req->coding->ended && size > 0)
        return refuse(req, ERR_INVALID_BODY,
                      "bytes follow the end of the body's %s stream",
                      "compressed");
    z->next_in = (Bytef *)(uintptr_t)data;
    z->avail_in = (uInt)size;
    unsigned char piece[CODING_PIECE];
    while (z->avail_in > 0 && !req->coding->ended) {
        z->next_out = piece;
        z->avail_out = sizeof piece;
        int rc = inflate(z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return refuse(req, ERR_INVALID_BODY,
                          "the body does not decode as its Content-Encoding "
                          "says (%s)",
                          z->msg ? z->msg : "corrupt data");
        req->coding->ended = rc == Z_STREAM_END;
        size_t out = sizeof piece - z->avail_out;
        if (out > 0 && !upload_append(req, (const char *)piece, out))
            return false;
        if (rc == Z_BUF_ERROR)
            break; /* no progress possible: more input is needed */
    }
    if (req->coding->ended && z->avail_in > 0)
        return refuse(req, ERR_INVALID_BODY,
                      "bytes follow the end of the body's %s stream",
                      "compressed");
    return true;
}

bool coding_finish(request *req)
{
    if (req->coding->ended)
        return true;
    return refuse(req, ERR_INVALID_BODY,
                  "the body's %s stream ends before its end", "compressed");
}

void coding_free(request *req)
{
    if (!req->coding)
        return;
    inflateEnd(&req->coding->z);
    free(req->coding);
    req->coding = NULL;
}
