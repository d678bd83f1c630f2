/*
 * guards.c - checks on a request's headers, before any endpoint runs.
 *
 * DESIGN
 * libmicrohttpd 0.9.75 lets some ambiguous framings through (an obs-fold
 * Content-Length, "Transfer-Encoding :"), so the header set it hands over is
 * counted again here and a request whose body length is in doubt is refused;
 * the daemon answers those on the first call, which makes the library close
 * the connection.  The bearer token is compared in constant time; the
 * request id and CORS origin are echoed back, so only safe values are.
 */
#include "server/http/guards.h"

#include "server/base/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Request headers (names + values) we accept; more is 431 (RFC 6585).  The
 * library's own per-connection buffer is larger (HTTP_CONNECTION_MEMORY in
 * daemon.c) so that it is this check, with a JSON answer, that normally
 * refuses. */
#define GUARD_MAX_HEADER_BYTES ((size_t)32 << 10)
/* What a header costs beyond its name and value: ": " and CRLF. */
#define GUARD_HEADER_OVERHEAD 4

static const char bearer[] = "Bearer ";
#define BEARER_LEN (sizeof bearer - 1)

/* Space and tab: the optional whitespace (OWS) of RFC 9110. */
static bool is_ows(char c) { return c == ' ' || c == '\t'; }

bool guard_load_api_key(guard_api_key *key, const char *path, char *err,
                        size_t err_size)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_size, "cannot read --api-key-file %s", path);
        return false;
    }
    size_t len = fread(key->key, 1, GUARD_MAX_API_KEY, f);
    bool too_long = fgetc(f) != EOF;
    fclose(f);
    while (len && (key->key[len - 1] == '\n' || key->key[len - 1] == '\r' ||
                   is_ows(key->key[len - 1])))
        len--;
    key->key[len] = '\0';
    if (too_long || len == 0) {
        snprintf(err, err_size,
                 "--api-key-file must hold one token of 1 to %d bytes",
                 GUARD_MAX_API_KEY);
        return false;
    }
    /* a client sends the token in a header value: a line break, a space or
     * a control byte inside it would make a key no request can carry */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key->key[i];
        if (c <= ' ' || c == 0x7f) {
            snprintf(err, err_size,
                     "--api-key-file: byte %zu of the token is %s; the file "
                     "must hold one token (visible characters, then at most "
                     "a line break)",
                     i + 1,
                     c == '\n' || c == '\r'  ? "a line break"
                     : c == ' ' || c == '\t' ? "whitespace"
                                             : "a control character");
            return false;
        }
    }
    key->len = len;
    return true;
}

/* Compares in time that depends only on the lengths, not on where the first
 * difference is. */
static bool constant_time_equal(const char *a, size_t a_len, const char *b,
                                size_t b_len)
{
    unsigned char diff = a_len != b_len;
    size_t len = a_len < b_len ? a_len : b_len;
    for (size_t i = 0; i < len; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

bool guard_authorized(const guard_api_key *key, struct MHD_Connection *conn)
{
    if (key->len == 0)
        return true;
    const char *auth =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncasecmp(auth, bearer, BEARER_LEN) != 0)
        return false;
    /* "Bearer" 1*SP token (RFC 6750), and the optional whitespace after a
     * field value, which libmicrohttpd leaves in it */
    const char *token = auth + BEARER_LEN;
    while (*token == ' ')
        token++;
    size_t len = strlen(token);
    while (len && is_ows(token[len - 1]))
        len--;
    return constant_time_equal(token, len, key->key, key->len);
}

bool guard_json_content_type(struct MHD_Connection *conn)
{
    const char *type =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    if (!type)
        return false;
    static const char json[] = "application/json";
    size_t len = sizeof json - 1;
    if (strncasecmp(type, json, len) != 0)
        return false;
    return type[len] == '\0' || type[len] == ';' || type[len] == ' ';
}

void guard_cors_origin(const char *allowed, struct MHD_Connection *conn,
                       char *out, size_t out_size)
{
    const char *origin =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    out[0] = '\0';
    if (strcmp(allowed, "*") == 0) {
        snprintf(out, out_size, "*");
        return;
    }
    if (!origin || strlen(origin) >= out_size)
        return;
    size_t olen = strlen(origin);
    for (const char *p = allowed; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        if (len == olen && strncmp(p, origin, olen) == 0) {
            snprintf(out, out_size, "%s", origin);
            return;
        }
        p += len;
        if (*p == ',')
            p++;
    }
}

static bool valid_request_id(const char *id, size_t max)
{
    size_t len = strlen(id);
    if (len == 0 || len >= max)
        return false;
    for (const char *c = id; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
            return false;
    return true;
}

void guard_request_id(struct MHD_Connection *conn, unsigned long long serial,
                      char *out, size_t out_size)
{
    const char *id =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-ID");
    if (id && valid_request_id(id, out_size))
        snprintf(out, out_size, "%s", id);
    else
        snprintf(out, out_size, "%08x-%llu", (unsigned)getpid(), serial);
}

typedef struct {
    size_t bytes;
    unsigned content_lengths;
    bool transfer_encoding;
} header_census;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind,
                                    const char *key, const char *value)
{
    (void)kind;
    header_census *census = cls;
    census->bytes +=
        strlen(key) + (value ? strlen(value) : 0) + GUARD_HEADER_OVERHEAD;
    if (strcasecmp(key, "Content-Length") == 0)
        census->content_lengths++;
    if (strcasecmp(key, "Transfer-Encoding") == 0)
        census->transfer_encoding = true;
    return MHD_YES;
}

bool guard_headers_refused(struct MHD_Connection *conn, reply *out)
{
    header_census census = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &census);
    if (census.bytes > GUARD_MAX_HEADER_BYTES) {
        problem_reply(out, 431, "headers_too_large", NULL,
                      "the request headers take %zu bytes; at most %zu",
                      census.bytes, GUARD_MAX_HEADER_BYTES);
        return true;
    }
    if (census.content_lengths > 1 ||
        (census.content_lengths && census.transfer_encoding)) {
        problem_reply(out, 400, "bad_request", NULL,
                      "%s: the body's length is ambiguous",
                      census.content_lengths > 1
                          ? "more than one Content-Length header"
                          : "both Content-Length and Transfer-Encoding");
        return true;
    }
    return false;
}

unsigned long long guard_content_length(struct MHD_Connection *conn)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (!cl)
        return 0;
    char *end;
    unsigned long long len = strtoull(cl, &end, 10);
    return *end == '\0' ? len : 0;
}
