/*
 * guards.c - checks on a request's headers, before any endpoint runs.
 *
 * DESIGN
 * The bearer token is compared in constant time; the request id and CORS
 * origin are echoed back, so only safe values are.  The framing of the
 * request (its header block, Content-Length, Transfer-Encoding, Host) is
 * framing.c's.
 */
#include "server/http/guards.h"

#include "server/base/buf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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
    if (strcmp(allowed, "*") == 0) { /* the default: every request */
        if (out_size > 1)
            memcpy(out, "*", 2);
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
            memcpy(out, origin, olen + 1); /* olen < out_size */
            return;
        }
        p += len;
        if (*p == ',')
            p++;
    }
}

/* Why id cannot be logged and echoed as it is, or NULL when it can. */
static const char *request_id_fault(const char *id, size_t max)
{
    size_t len = strlen(id);
    if (len == 0)
        return "empty";
    if (len >= max)
        return "too_long";
    for (const char *c = id; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
            return "invalid_characters";
    return NULL;
}

/* The process id in the request ids the server makes, asked once: getpid()
 * is a system call, and this runs for every request. */
static unsigned own_pid(void)
{
    static atomic_uint pid;
    unsigned known = atomic_load_explicit(&pid, memory_order_relaxed);
    if (!known) {
        known = (unsigned)getpid();
        atomic_store_explicit(&pid, known, memory_order_relaxed);
    }
    return known;
}

/* "%08x-%llu" of the process id and serial, written by hand: snprintf
 * parses its format on every request (tests/bench/request_cost.py counts
 * the difference). */
static void own_request_id(unsigned long long serial, char *out,
                           size_t out_size)
{
    static const char hex[] = "0123456789abcdef";
    char text[8 + 1 + UINT_TEXT_MAX]; /* 8 hex digits, '-', the serial */
    unsigned pid = own_pid();
    for (int i = 0; i < 8; i++)
        text[i] = hex[(pid >> (28 - 4 * i)) & 0xf];
    text[8] = '-';
    size_t len = 9 + uint_text(serial, text + 9);
    if (len > out_size - 1)
        len = out_size - 1;
    memcpy(out, text, len);
    out[len] = '\0';
}

const char *guard_request_id(struct MHD_Connection *conn,
                             unsigned long long serial, char *out,
                             size_t out_size)
{
    const char *id =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-ID");
    const char *fault = id ? request_id_fault(id, out_size) : NULL;
    if (id && !fault)
        memcpy(out, id, strlen(id) + 1); /* shorter than out_size: checked */
    else
        own_request_id(serial, out, out_size);
    return fault;
}
