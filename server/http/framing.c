/*
 * framing.c - the request's framing checked again, from the header block
 * libmicrohttpd parsed.
 *
 * DESIGN
 * libmicrohttpd 0.9.75 parses the header block in place: every line end
 * (CRLF, or a bare LF) becomes NUL bytes, every field's colon a NUL, and the
 * header set it hands over points into that buffer, in the order the fields
 * came.  So the block can be read again: from the end of the request line's
 * version to the end of the block (the request's header size), every byte
 * must belong to a field the library reported (name, colon, optional
 * whitespace, value) or to a line end.  What is left over, out of place or
 * outside the block is a line the library read differently from its sender:
 * a folded line (it appends the fold to the field *name* elsewhere in its
 * memory, so "Content-Length:\r\n 33" becomes a field "Content-Length33"
 * and the body a second request), a line without a name (": x" ends its
 * header block), a NUL inside a value (the value is cut there).  Field names
 * must be tokens, so "Transfer-Encoding : chunked" (which the library keeps
 * as a field named "Transfer-Encoding ") is refused too.  Then the body's
 * length must follow from exactly one of one Content-Length or
 * "Transfer-Encoding: chunked", and an HTTP/1.1 request must carry one Host
 * (RFC 9112 sections 3.2, 5, 6).  The block is read again only under the
 * 0.9 parser it was written against; libmicrohttpd 1.0 lays it out
 * differently and refuses these requests itself, and then only the header
 * set is checked.
 */
#include "server/http/framing.h"

#include "server/base/problem.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What a header costs beyond its name and value: ": " and CRLF. */
#define FRAMING_HEADER_OVERHEAD 4

/* RFC 9110 5.6.2: tchar. */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

static bool is_token(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_tchar((unsigned char)s[i]))
            return false;
    return true;
}

/* Headers the service reads as one value, where a repeat with another value
 * leaves the request ambiguous (which type is the body, which token was
 * authorized, where does an OIP body's JSON end?): refused.  The same
 * value twice is one value.  Content-Length, which frames the body, may
 * not come twice at all (below). */
static const char *const single_valued[] = {"Content-Type", "Authorization",
                                            "Inference-Header-Content-Length"};
#define SINGLE_VALUED_COUNT (sizeof single_valued / sizeof *single_valued)

/* What the header set says about the body and the host, and the first
 * problem found in the block. */
typedef struct {
    bool in_place;        /* the block is laid out as DESIGN says */
    uintptr_t block, end; /* the header block: [block, end) */
    uintptr_t pos;        /* the end of what has been accounted for */
    const char *problem;  /* why the block is refused, or NULL */
    size_t bytes;
    unsigned content_lengths, transfer_encodings, hosts;
    const char *content_length, *transfer_encoding, *host;
    size_t content_length_len, transfer_encoding_len, host_len;
    /* by single_valued[]: the first value seen, NULL if none */
    const char *single[SINGLE_VALUED_COUNT];
    size_t single_len[SINGLE_VALUED_COUNT];
    const char *conflict; /* a single_valued[] name seen with two values */
} header_scan;

/* Whether [p, p + len] lies in the block. */
static bool in_block(const header_scan *scan, const char *p, size_t len)
{
    uintptr_t at = (uintptr_t)p;
    return at >= scan->block && at <= scan->end && len <= scan->end - at;
}

/* Whether the bytes from scan->pos up to `to` are between `min` and `max`
 * line ends (NUL bytes, as the library leaves them). */
static bool only_line_ends(const header_scan *scan, uintptr_t to, size_t min,
                           size_t max)
{
    if (to < scan->pos || to - scan->pos < min || to - scan->pos > max)
        return false;
    for (const char *c = (const char *)scan->pos; (uintptr_t)c < to; c++)
        if (*c != '\0')
            return false;
    return true;
}

/* Notes a field of single_valued[], and a second value of one. */
static void note_single(header_scan *scan, const char *key, size_t key_size,
                        const char *value, size_t value_size)
{
    for (size_t i = 0; i < SINGLE_VALUED_COUNT; i++) {
        if (strlen(single_valued[i]) != key_size ||
            strncasecmp(key, single_valued[i], key_size) != 0)
            continue;
        if (!scan->single[i]) {
            scan->single[i] = value;
            scan->single_len[i] = value_size;
        } else if (scan->single_len[i] != value_size ||
                   memcmp(scan->single[i], value, value_size) != 0) {
            scan->conflict = single_valued[i];
        }
        return;
    }
}

static void note_field(header_scan *scan, const char *key, size_t key_size,
                       const char *value, size_t value_size)
{
    scan->bytes += key_size + value_size + FRAMING_HEADER_OVERHEAD;
    note_single(scan, key, key_size, value, value_size);
    if (key_size == 14 && strncasecmp(key, "Content-Length", 14) == 0) {
        scan->content_lengths++;
        scan->content_length = value;
        scan->content_length_len = value_size;
    } else if (key_size == 17 &&
               strncasecmp(key, "Transfer-Encoding", 17) == 0) {
        scan->transfer_encodings++;
        scan->transfer_encoding = value;
        scan->transfer_encoding_len = value_size;
    } else if (key_size == 4 && strncasecmp(key, "Host", 4) == 0) {
        scan->hosts++;
        scan->host = value;
        scan->host_len = value_size;
    }
}

static enum MHD_Result scan_field(void *cls, enum MHD_ValueKind kind,
                                  const char *key, size_t key_size,
                                  const char *value, size_t value_size)
{
    (void)kind;
    header_scan *scan = cls;
    if (scan->problem)
        return MHD_NO;
    if (!value)
        value = "", value_size = 0;
    note_field(scan, key, key_size, value, value_size);
    uintptr_t k = (uintptr_t)key, v = (uintptr_t)value;
    if (scan->in_place) {
        if (!in_block(scan, key, key_size + 1) ||
            !in_block(scan, value, value_size) ||
            !only_line_ends(scan, k, 1, 2) || v < k + key_size + 1 ||
            key[key_size] != '\0') {
            scan->problem = "a line of the header block is not a header "
                            "field (a folded line, a line without a name, a "
                            "NUL)";
            return MHD_NO;
        }
        for (const char *c = key + key_size + 1; (uintptr_t)c < v; c++)
            if (!is_ows(*c)) {
                scan->problem = "a header field is not name, colon, value";
                return MHD_NO;
            }
    }
    if (!is_token(key, key_size)) {
        scan->problem = "a header field name is empty or not a token "
                        "(whitespace before the colon?)";
        return MHD_NO;
    }
    for (size_t i = 0; i < value_size; i++) {
        unsigned char c = (unsigned char)value[i];
        if ((c < ' ' && c != '\t') || c == 0x7f) {
            scan->problem = "a header value holds a control character "
                            "(CR, LF, NUL or another)";
            return MHD_NO;
        }
    }
    scan->pos = v + value_size;
    return MHD_YES;
}

/* Whether the running libmicrohttpd is one whose parser lays the header
 * block out as DESIGN says: 0.9.x, whose parser this module was written
 * against.  Version 1.0 parses the block differently (and refuses most of
 * these requests itself); there only the header set is checked. */
static bool parses_in_place(void)
{
    /* asked once; every event thread may be the first to ask */
    static atomic_int known = -1;
    int answer = atomic_load_explicit(&known, memory_order_relaxed);
    if (answer < 0) {
        const char *version = MHD_get_version();
        answer = version && strncmp(version, "0.9.", 4) == 0;
        atomic_store_explicit(&known, answer, memory_order_relaxed);
    }
    return answer;
}

/* Whether a request target (as framing_unescape() left it, which decodes
 * no space or control byte) holds none (RFC 9112 3.2). */
static bool clean_target(const char *target, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)target[i];
        if (c <= ' ' || c == 0x7f)
            return false;
    }
    return true;
}

/* Whether p holds "HTTP/" digit "." digit and then a NUL: a version as the
 * library accepts it (it refuses any other) with its line end after it. */
static bool version_then_nul(const char *p)
{
    return strncmp(p, "HTTP/", strlen("HTTP/")) == 0 && p[5] >= '0' &&
           p[5] <= '9' && p[6] == '.' && p[7] >= '0' && p[7] <= '9' &&
           p[8] == '\0';
}

/* Whether the target's bytes up to `end` (the NUL the library wrote in
 * place of the space before the version) hold a NUL, a version and a NUL,
 * that last one `end` itself or before it: what framing_drop_query()
 * accepted as the target's end followed by the rest of the line.  What the
 * library and the service write into a target never shows it (the NUL that
 * ends an unescaped path leaves an odd number of raw bytes before the next
 * NUL, a version is eight; the '?' and the whole query are NULs), so it is a
 * NUL the client sent. */
static bool version_inside(const char *target, const char *end)
{
    for (const char *p = target; p + 9 <= end; p++)
        if (*p == '\0' && version_then_nul(p + 1))
            return true;
    return false;
}

/* Reads the header block again (see DESIGN); false with scan->problem set
 * when it does not match the header set. */
static bool scan_headers(struct MHD_Connection *conn, const char *method,
                         const char *url, const char *version,
                         header_scan *scan)
{
    scan->in_place = parses_in_place();
    if (!scan->in_place) {
        MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_field, scan);
        return !scan->problem;
    }
    const union MHD_ConnectionInfo *size =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    const char *unreadable = "the header block could not be read back";
    if (!size) {
        scan->problem = unreadable;
        return false;
    }
    scan->block = (uintptr_t)method;
    scan->end = scan->block + size->header_size;
    size_t version_len = strlen(version);
    if (!in_block(scan, version, version_len)) {
        scan->problem = unreadable;
        return false;
    }
    /* The target follows the NUL that ends the method: one space in the
     * request line, and no NUL inside the method.  This library splits the
     * line at its first and last spaces, so a target holding a space
     * ("GET /a HTTP/1.1 /b HTTP/1.1") reaches us whole, and emptied by
     * framing_drop_query(). */
    size_t url_len = strlen(url);
    if (url != method + strlen(method) + 1 || url_len == 0 ||
        !in_block(scan, url, url_len) || !clean_target(url, url_len) ||
        version <= url || version_inside(url, version - 1)) {
        scan->problem = "the request line is not a method, a target and a "
                        "version separated by single spaces";
        return false;
    }
    scan->pos = (uintptr_t)version + version_len;
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_field, scan);
    if (scan->problem)
        return false;
    /* the last line's end and the empty line: two to four bytes */
    if (!only_line_ends(scan, scan->end, 2, 4)) {
        scan->problem = "a line of the header block is not a header field "
                        "(a folded line, a line without a name, a NUL)";
        return false;
    }
    return true;
}

/* RFC 3986 host [ ":" port ]: the characters a Host value may hold. */
static bool valid_host(const char *host, size_t len)
{
    while (len && is_ows(host[len - 1]))
        len--;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)host[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || strchr("-._~!$&'()*+,;=:[]%", c)))
            return false;
    }
    return true;
}

static bool all_digits(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* Transfer-Encoding (RFC 9112 6.1, 6.3): ERR_NONE when it is "chunked"
 * alone, as libmicrohttpd reads it; else the code to refuse with, and
 * *why. */
static error_code check_transfer_coding(const char *value, size_t len,
                                        const char **why)
{
    bool chunked = false, chunked_last = false, unknown = false;
    size_t i = 0;
    while (i < len) {
        while (i < len && (is_ows(value[i]) || value[i] == ','))
            i++;
        size_t start = i;
        while (i < len && value[i] != ',')
            i++;
        size_t end = i;
        while (end > start && is_ows(value[end - 1]))
            end--;
        if (end == start)
            continue;
        if (end - start == 7 && strncasecmp(value + start, "chunked", 7) == 0) {
            if (chunked) {
                *why = "chunked is applied more than once";
                return ERR_BAD_REQUEST;
            }
            chunked = chunked_last = true;
        } else {
            unknown = true;
            chunked_last = false;
        }
    }
    if (chunked && !chunked_last) {
        *why = "chunked is not the last transfer coding, so the body's "
               "length cannot be known";
        return ERR_BAD_REQUEST;
    }
    if (unknown || !chunked) {
        *why = "the only transfer coding this server reads is chunked";
        return ERR_UNSUPPORTED_TRANSFER_CODING;
    }
    if (len != 7) {
        *why = "write the header as \"Transfer-Encoding: chunked\", without "
               "other list items or trailing whitespace";
        return ERR_BAD_REQUEST;
    }
    return ERR_NONE;
}

static bool refuse(reply *out, error_code code, const char *why)
{
    problem_reply(out, code, NULL, "%s", why);
    return true;
}

bool framing_refused(struct MHD_Connection *conn, const char *method,
                     const char *url, const char *version, reply *out)
{
    header_scan scan = {0};
    if (!scan_headers(conn, method, url, version, &scan))
        return refuse(out, ERR_BAD_REQUEST, scan.problem);
    if (scan.bytes > FRAMING_MAX_HEADER_BYTES) {
        problem_reply(out, ERR_HEADERS_TOO_LARGE, NULL,
                      "the request headers take %zu bytes; at most %zu",
                      scan.bytes, FRAMING_MAX_HEADER_BYTES);
        return true;
    }
    if (!is_token(method, strlen(method)))
        return refuse(out, ERR_BAD_REQUEST, "the method is not a token");
    if (scan.content_lengths > 1)
        return refuse(out, ERR_BAD_REQUEST,
                      "more than one Content-Length header: the body's "
                      "length is ambiguous");
    if (scan.content_lengths && scan.transfer_encodings)
        return refuse(out, ERR_BAD_REQUEST,
                      "both Content-Length and Transfer-Encoding: the body's "
                      "length is ambiguous");
    if (scan.content_lengths &&
        !all_digits(scan.content_length, scan.content_length_len))
        return refuse(out, ERR_BAD_REQUEST,
                      "Content-Length is not one decimal number");
    bool http11 = strcmp(version, "HTTP/1.1") == 0;
    if (scan.transfer_encodings) {
        const char *why = NULL;
        error_code refused;
        if (!http11)
            return refuse(out, ERR_BAD_REQUEST,
                          "Transfer-Encoding in an HTTP/1.0 request");
        if (scan.transfer_encodings > 1)
            return refuse(out, ERR_BAD_REQUEST,
                          "more than one Transfer-Encoding header");
        refused = check_transfer_coding(scan.transfer_encoding,
                                        scan.transfer_encoding_len, &why);
        if (refused != ERR_NONE)
            return refuse(out, refused, why);
    }
    if (scan.hosts > 1 || (http11 && scan.hosts == 0))
        return refuse(out, ERR_BAD_REQUEST,
                      "an HTTP/1.1 request carries exactly one Host header");
    if (scan.hosts && !valid_host(scan.host, scan.host_len))
        return refuse(out, ERR_BAD_REQUEST,
                      "the Host header is not a host and port");
    if (scan.conflict) {
        problem_reply(out, ERR_BAD_REQUEST, NULL,
                      "two %s headers with different values: which one "
                      "holds is ambiguous",
                      scan.conflict);
        return true;
    }
    return false;
}

bool framing_has_body(struct MHD_Connection *conn)
{
    return framing_content_length(conn) > 0 ||
           MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                       "Transfer-Encoding") != NULL;
}

unsigned long long framing_content_length(struct MHD_Connection *conn)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (!cl)
        return 0;
    char *end;
    unsigned long long len = strtoull(cl, &end, 10);
    return *end == '\0' ? len : 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

size_t framing_unescape(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    char *out = s;
    for (const char *in = s; *in;) {
        int hi = in[0] == '%' ? hex_value(in[1]) : -1;
        int lo = hi >= 0 ? hex_value(in[2]) : -1;
        int c = hi * 16 + lo;
        if (lo >= 0 && c > ' ' && c != 0x7f && c != '/') {
            *out++ = (char)c;
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
    return (size_t)(out - s);
}

void *framing_drop_query(void *cls, const char *uri,
                         struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    if (!uri)
        return NULL;
    /* The target as it came, in the library's own (writable) copy of the
     * request line, which it ended with a NUL in place of the space before
     * the version.  A space, a control byte or a NUL inside it (so that the
     * version and its line end do not follow the string's end) empties it,
     * which framing_refused() refuses: a target the library would serve
     * cut.  A NUL followed by a version and a NUL passes here, and
     * framing_refused() finds it before the real version. */
    char *target = (char *)uri;
    size_t len = strlen(target);
    if (!clean_target(target, len) || !version_then_nul(target + len + 1)) {
        target[0] = '\0';
        return NULL;
    }
    /* the library found the '?' before calling, and parses what follows it
     * into arguments after this returns: what follows is cleared here (all
     * of it, so that no version is left in it for version_inside()) */
    char *query = strchr(target, '?');
    if (query)
        memset(query + 1, 0, strlen(query + 1));
    return NULL;
}
