/*
 * harness_coding.c - reading a coded reply: its Content-Encoding and its
 * body inflated with zlib (harness.h).
 */
#include "tests/http/harness.h"

#include <zlib.h>

bytes inflated(const http_response *r, int bits)
{
    z_stream z = {0};
    if (inflateInit2(&z, bits) != Z_OK)
        fail_msg("inflateInit2 failed");
    bytes out = {0};
    z.next_in = (Bytef *)r->body.data;
    z.avail_in = (uInt)r->body.len;
    int rc = Z_OK;
    while (rc == Z_OK) {
        unsigned char piece[64 << 10];
        z.next_out = piece;
        z.avail_out = sizeof piece;
        rc = inflate(&z, Z_NO_FLUSH);
        bytes_append(&out, piece, sizeof piece - z.avail_out);
    }
    expect(rc == Z_STREAM_END && z.avail_in == 0, r);
    inflateEnd(&z);
    return out;
}

const char *coding_of(const http_response *r, char *out, size_t size)
{
    return header(r, "Content-Encoding", out, size) ? out : "none";
}
