/*
 * fuzz_framing.c - libFuzzer harness over the HTTP layer: each input is the
 * raw bytes a client sends on one connection to the real daemon
 * (server/http/, libmicrohttpd), started once in this process on a loopback
 * port.
 *
 * DESIGN
 * An input is sent whole on a fresh connection, whose sending side is then
 * shut (libmicrohttpd 0.9.75 answers what it has read, then closes), and
 * everything the server sends is read until it closes.  Beside it, a strict
 * reading of the same bytes by RFC 9112 (frame_requests() below) delimits
 * the requests they hold, stopping at the first one whose framing is in
 * doubt (a folded line, a field name that is not a token, a control byte in
 * a value, two lengths, a length with a coding, a coding other than
 * chunked, a malformed chunk) or incomplete.  Properties, for every input:
 *   1. the server neither crashes nor leaks (ASan, LSan, UBSan), and closes
 *      the connection within FZ_CLOSE_SECONDS of the input's end;
 *   2. what it sends is a sequence of whole, well-formed HTTP/1.1 responses
 *      and nothing else: a status line, header fields, a body of exactly
 *      the length the headers give (none for HEAD, 204, 304), any 1xx
 *      interim response alone; after a response saying Connection: close,
 *      nothing;
 *   3. every answer is the service's (a problem+json error whose "status"
 *      is the HTTP status and which has a "code"; a /v2 error's JSON
 *      {"error", "code"}; a success), or one of the answers libmicrohttpd
 *      gives itself (docs/api.md lists them: 400, 413, 414, 431, 500, 505,
 *      an HTML body; with a malformed Content-Length it sends its status
 *      line and headers twice, which is tolerated here and only there);
 *   4. no byte of one request is parsed as another: the server gives no
 *      more final answers than the strict reading finds requests, counting
 *      the one it stopped at (which the server may refuse), and none after
 *      a request that asked to close (Connection: close, HTTP/1.0 without
 *      keep-alive).
 * A client that half-closes looks gone to a pool route's job, which then
 * answers nothing (a 499 in the log): fewer answers, which property 4
 * allows.  The limits are tightened so that an accepted request computes
 * in microseconds.
 */
#include "core/pool.h"
#include "server/http/daemon.h"
#include "server/obs/access_log.h"
#include "server/setup/blas_setup.h"
#include "server/setup/config.h"
#include "tests/fuzz/fuzz_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Inputs beyond this are not sent: room for the biggest seed (a 200 KB chunk
 * extension); the daemon's per-connection memory is far less
 * (FRAMING_CONNECTION_MEMORY, server/http/framing.h), so a longer header
 * block is the library's refusal anyway. */
#define FZ_MAX_INPUT (256 * 1024)
/* How long the server may take to answer and close after the input's end:
 * answers take microseconds, but on this machine, loaded, a few connections
 * in 100,000 have waited 4 to 10 s (most with nothing read; none in a run of
 * 203,010 inputs; never 20 s; the cause is not known); a connection held
 * until the idle timeout (a request the server waits on for ever) is what
 * this is to catch. */
#define FZ_CLOSE_SECONDS 20
/* The daemon's idle timeout (seconds), above FZ_CLOSE_SECONDS. */
#define FZ_IDLE_TIMEOUT "60"
/* Room for everything the server may answer to one input: at most one
 * answer per 16 input bytes, each a few hundred bytes, or a big static
 * page (GET / is the visualizer). */
#define FZ_MAX_OUTPUT ((size_t)64 << 20)
/* Requests the strict reading keeps the method of (an input of
 * FZ_MAX_INPUT bytes holds at most one per 16: "GET / HTTP/1.1\n\n"). */
#define FZ_MAX_REQUESTS (FZ_MAX_INPUT / 16 + 1)
/* The longest chunk size the strict reading takes (16 hex digits is 2^64;
 * more is in doubt, as the library refuses it). */
#define FZ_MAX_CHUNK_DIGITS 16
/* Client addresses the connections come from, in turn: 127.1.0.0/16 (see
 * exchange()). */
#define FZ_CLIENT_NET 0x7f010000u
#define FZ_CLIENT_ADDRESSES 65534u

static unsigned server_port;
static char *answer_buf;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static char *args[] = {"fuzz_framing",
                           "--listen",
                           "127.0.0.1:0",
                           "--threads",
                           "2",
                           "--access-log",
                           "off",
                           "--idle-timeout",
                           FZ_IDLE_TIMEOUT,
                           "--max-body",
                           "65536",
                           "--max-tokens",
                           "32",
                           "--max-width",
                           "32",
                           "--max-elements",
                           "4096",
                           "--max-connections-per-ip",
                           "1000",
                           NULL};
    static config cfg;
    int count = (int)(sizeof args / sizeof *args) - 1;
    if (config_parse(&cfg, count, args) != CONFIG_RUN)
        abort();
    access_log_start(false); /* request lines off */
    blas_setup_single_threaded();
    json_object_seed(1); /* before any thread uses jansson */
    signal(SIGPIPE, SIG_IGN);
    pool *workers = pool_create(cfg.threads, cfg.max_queue);
    char err[256];
    http_server *srv =
        workers ? http_start(&cfg, workers, err, sizeof err) : NULL;
    CHECK(srv, "the daemon did not start: %s", workers ? err : "no pool");
    server_port = http_port(srv);
    answer_buf = malloc(FZ_MAX_OUTPUT);
    CHECK(answer_buf, "out of memory");
    return 0; /* the daemon runs until the process ends */
}

/* ---- the strict reading of the input (RFC 9112) ----------------------- */

typedef struct {
    const char *p, *end;
    bool bare_lf; /* the last line read ended in a bare LF */
} cursor;

/* The next line, without its line end (LF, or CRLF); false at the end of
 * the input (an unfinished line).  A NUL before a bare LF ends a line as a
 * CR does: libmicrohttpd 0.9.75 turns both line ends into two NUL bytes,
 * so neither it nor framing.c can tell them apart (docs/api.md). */
static bool next_line(cursor *c, const char **line, size_t *len)
{
    const char *lf = memchr(c->p, '\n', (size_t)(c->end - c->p));
    if (!lf)
        return false;
    *line = c->p;
    *len = (size_t)(lf - c->p);
    c->bare_lf = !(*len && (lf[-1] == '\r' || lf[-1] == '\0'));
    if (!c->bare_lf)
        (*len)--;
    c->p = lf + 1;
    return true;
}

static bool is_tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool is_ows(char ch) { return ch == ' ' || ch == '\t'; }

/* A field value's bytes: no control byte but HTAB (RFC 9110 5.5). */
static bool clean_value(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)v[i];
        if ((ch < ' ' && ch != '\t') || ch == 0x7f)
            return false;
    }
    return true;
}

static void trim_ows(const char **v, size_t *len)
{
    while (*len && is_ows(**v))
        (*v)++, (*len)--;
    while (*len && is_ows((*v)[*len - 1]))
        (*len)--;
}

/* Whether the comma-separated list value holds `token` (any case). */
static bool list_has(const char *v, size_t len, const char *token)
{
    size_t tlen = strlen(token), i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && v[i] != ',')
            i++;
        const char *item = v + start;
        size_t ilen = i - start;
        trim_ows(&item, &ilen);
        if (ilen == tlen && strncasecmp(item, token, tlen) == 0)
            return true;
        i++;
    }
    return false;
}

typedef enum { FRAME_OK, FRAME_STOP } frame_status;

/* What the header fields say. */
typedef struct {
    unsigned content_lengths, transfer_encodings;
    const char *content_length, *transfer_encoding;
    size_t content_length_len, transfer_encoding_len;
    bool close, keep_alive;
} fields;

/* Header (or trailer) fields up to the empty line; FRAME_STOP when one is
 * in doubt or the section is unfinished. */
static frame_status read_fields(cursor *c, fields *f, bool trailers)
{
    const char *line;
    size_t len;
    for (;;) {
        bool after_bare_lf = c->bare_lf; /* the line before this one */
        if (!next_line(c, &line, &len))
            return FRAME_STOP;
        if (len == 0)
            return FRAME_OK;
        /* libmicrohttpd 0.9.75 reads a trailer line that starts with a NUL
         * as empty, the end of the trailer section (docs/api.md); the
         * chunked body is decoded inside the library, out of our sight */
        if (trailers && line[0] == '\0')
            return FRAME_OK;
        /* It reads a header line that starts with a NUL as empty too, the
         * end of the header block, and framing.c sees only the NULs left in
         * its place: a line of NULs that, with the line end before it and
         * its own, is at most four bytes leaves what a CRLF and an empty
         * CRLF leave ('Host: x\n\0\r\n' is 'Host: x\r\n\r\n' there), and
         * the request is served: a third misreading (docs/api.md) */
        if (!trailers && line[0] == '\0') {
            size_t nuls = 0;
            while (nuls < len && line[nuls] == '\0')
                nuls++;
            size_t ends = (after_bare_lf ? 1 : 2) + (c->bare_lf ? 1 : 2);
            return nuls == len && nuls + ends <= 4 ? FRAME_OK : FRAME_STOP;
        }
        /* libmicrohttpd 0.9.75 ends the header block at a line holding
         * only a colon (it writes a NUL over the colon, then sees an empty
         * line).  With a bare LF ending that line or the one before it,
         * what it leaves in its buffer is what an empty line leaves, so
         * framing.c cannot see it (with two CRLFs it is a NUL longer, and
         * refused): one of the misreadings this property knows of
         * (docs/api.md) */
        if (!trailers && len == 1 && line[0] == ':' &&
            (c->bare_lf || after_bare_lf))
            return FRAME_OK;
        if (is_ows(line[0]))
            return FRAME_STOP; /* obs-fold, or whitespace before a name */
        const char *colon = memchr(line, ':', len);
        if (!colon || colon == line)
            return FRAME_STOP;
        size_t name_len = (size_t)(colon - line);
        for (size_t i = 0; i < name_len; i++)
            if (!is_tchar((unsigned char)line[i]))
                return FRAME_STOP;
        const char *v = colon + 1;
        size_t vlen = len - name_len - 1;
        bool ends_block = false;
        if (!trailers && !clean_value(v, vlen)) {
            /* Another misreading: libmicrohttpd 0.9.75 cuts a value at a
             * NUL, and framing.c counts the NULs it leaves before the block's
             * end.  NULs ending the last line's value, with that line's end
             * and the empty line, can leave no more than the four a CRLF and
             * an empty CRLF leave ("a\0\r\n\n"): the request is served with
             * the value cut (docs/api.md). */
            size_t nuls = 0;
            while (nuls < vlen && v[vlen - 1 - nuls] == '\0')
                nuls++;
            size_t line_end = c->bare_lf ? 1 : 2;
            cursor after = *c;
            const char *next;
            size_t next_len;
            if (nuls == 0 || !clean_value(v, vlen - nuls) ||
                !next_line(&after, &next, &next_len) || next_len != 0 ||
                nuls + line_end + (after.bare_lf ? 1 : 2) > 4)
                return FRAME_STOP;
            vlen -= nuls;
            *c = after;
            ends_block = true;
        } else if (!clean_value(v, vlen)) {
            return FRAME_STOP; /* NUL, a bare CR, another control byte */
        }
        trim_ows(&v, &vlen);
        if (name_len == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
            f->content_lengths++;
            f->content_length = v;
            f->content_length_len = vlen;
        } else if (name_len == 17 &&
                   strncasecmp(line, "Transfer-Encoding", 17) == 0) {
            f->transfer_encodings++;
            f->transfer_encoding = v;
            f->transfer_encoding_len = vlen;
        } else if (name_len == 10 && strncasecmp(line, "Connection", 10) == 0) {
            f->close |= list_has(v, vlen, "close");
            f->keep_alive |= list_has(v, vlen, "keep-alive");
        }
        if (ends_block)
            return FRAME_OK;
    }
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* A chunked body (RFC 9112 7.1): chunk-size [BWS ; ext], data, line end,
 * up to the last chunk and its trailer section. */
static frame_status read_chunked(cursor *c)
{
    const char *line;
    size_t len;
    for (;;) {
        if (!next_line(c, &line, &len))
            return FRAME_STOP;
        size_t i = 0;
        uint64_t size = 0;
        while (i < len && hex_digit(line[i]) >= 0) {
            if (i == FZ_MAX_CHUNK_DIGITS)
                return FRAME_STOP;
            size = size * 16 + (uint64_t)hex_digit(line[i]);
            i++;
        }
        if (i == 0)
            return FRAME_STOP;
        while (i < len && is_ows(line[i]))
            i++;
        if (i < len && (line[i] != ';' || !clean_value(line + i, len - i)))
            return FRAME_STOP;
        if (size == 0) {
            fields trailers = {0};
            return read_fields(c, &trailers, true);
        }
        if (size > (uint64_t)(c->end - c->p))
            return FRAME_STOP;
        c->p += size;
        if (!next_line(c, &line, &len) || len != 0)
            return FRAME_STOP;
    }
}

/* RFC 9110 8.6: Content-Length = 1*DIGIT, DIGIT = %x30-39 (RFC 5234 B.1).
 * Read from the grammar, not from the server's code: the run of DIGITs the
 * value starts with, which must be the whole value and not empty. */
static size_t digit_run(const char *s, size_t len)
{
    size_t run = 0;
    while (run < len && s[run] >= 0x30 && s[run] <= 0x39)
        run++;
    return run;
}

static bool is_content_length(const char *s, size_t len)
{
    return len >= 1 && digit_run(s, len) == len;
}

/* The requests of the input as RFC 9112 frames them. */
typedef struct {
    size_t complete; /* requests framed whole, in order */
    bool more;       /* bytes of one more request, partial or in doubt */
    bool head[FZ_MAX_REQUESTS]; /* request i (complete or the next) is HEAD */
} framing;

/* One request from c; FRAME_STOP when it is in doubt or unfinished,
 * *last when the connection ends after it. */
static frame_status read_request(cursor *c, bool *head, bool *last)
{
    const char *line;
    size_t len;
    /* empty lines before a request line are ignored (2.2); libmicrohttpd
     * 0.9.75 reads a line that starts with a NUL as empty, and skips it
     * too (its bytes are dropped, never run) */
    do {
        if (!next_line(c, &line, &len))
            return FRAME_STOP;
    } while (len == 0 || line[0] == '\0');
    /* method SP request-target SP HTTP-version */
    const char *sp1 = memchr(line, ' ', len);
    *head = sp1 && sp1 - line == 4 && memcmp(line, "HEAD", 4) == 0;
    if (!sp1 || sp1 == line)
        return FRAME_STOP;
    for (const char *m = line; m < sp1; m++)
        if (!is_tchar((unsigned char)*m))
            return FRAME_STOP;
    const char *target = sp1 + 1, *end = line + len;
    const char *sp2 = memchr(target, ' ', (size_t)(end - target));
    if (!sp2 || sp2 == target || end - sp2 != 9)
        return FRAME_STOP;
    for (const char *t = target; t < sp2; t++)
        if ((unsigned char)*t <= ' ' || *t == 0x7f)
            return FRAME_STOP;
    /* HTTP/1.1 or a later minor version, read as 1.1 (RFC 9110 6.2) */
    if (memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || sp2[8] < '0' || sp2[8] > '9')
        return FRAME_STOP;
    bool http11 = sp2[8] != '0';
    fields f = {0};
    if (read_fields(c, &f, false) != FRAME_OK)
        return FRAME_STOP;
    *last = f.close || (!http11 && !f.keep_alive);
    if (f.transfer_encodings) {
        const char *te = f.transfer_encoding;
        if (!http11 || f.transfer_encodings > 1 || f.content_lengths ||
            f.transfer_encoding_len != 7 || strncasecmp(te, "chunked", 7) != 0)
            return FRAME_STOP;
        return read_chunked(c);
    }
    if (f.content_lengths == 0)
        return FRAME_OK;
    if (f.content_lengths > 1 ||
        !is_content_length(f.content_length, f.content_length_len))
        return FRAME_STOP;
    /* leading zeros are digits too (1*DIGIT) */
    size_t length = 0, left = (size_t)(c->end - c->p);
    for (size_t i = 0; i < f.content_length_len; i++) {
        length = length * 10 + (size_t)(f.content_length[i] - '0');
        if (length > left)
            return FRAME_STOP; /* the body is not all there */
    }
    c->p += length;
    return FRAME_OK;
}

static void frame_requests(const char *data, size_t size, framing *out)
{
    cursor c = {.p = data, .end = data + size};
    memset(out, 0, sizeof *out);
    while (c.p < c.end && out->complete < FZ_MAX_REQUESTS - 1) {
        bool head = false, last = false;
        frame_status st = read_request(&c, &head, &last);
        out->head[out->complete] = head;
        if (st != FRAME_OK) {
            out->more = true;
            return;
        }
        out->complete++;
        if (last)
            return;
    }
}

/* ---- the answers ------------------------------------------------------ */

/* Statuses libmicrohttpd answers itself, with an HTML body (docs/api.md). */
static bool library_status(unsigned status)
{
    return status == 400 || status == 413 || status == 414 || status == 431 ||
           status == 500 || status == 505;
}

/* The value of header `name` in the block [head, head_end), or NULL. */
static const char *header_value(const char *head, const char *head_end,
                                const char *name, size_t *len)
{
    size_t name_len = strlen(name);
    for (const char *line = head; line < head_end;) {
        const char *eol = memchr(line, '\r', (size_t)(head_end - line));
        if (!eol)
            eol = head_end;
        if ((size_t)(eol - line) > name_len + 1 && line[name_len] == ':' &&
            strncasecmp(line, name, name_len) == 0) {
            const char *v = line + name_len + 1;
            while (v < eol && *v == ' ')
                v++;
            *len = (size_t)(eol - v);
            return v;
        }
        line = eol + 2;
    }
    return NULL;
}

/* Property 3 on a final answer's body. */
static void check_body(unsigned status, const char *type, size_t type_len,
                       const char *body, size_t len)
{
    bool problem = type && type_len == 24 &&
                   memcmp(type, "application/problem+json", 24) == 0;
    bool json =
        type && type_len == 16 && memcmp(type, "application/json", 16) == 0;
    if (problem || json) {
        json_error_t jerr;
        json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
        CHECK(doc && json_is_object(doc),
              "a %u answer whose JSON is not an "
              "object: %s: %.*s",
              status, jerr.text, (int)(len < 200 ? len : 200), body);
        const char *code = json_string_value(json_object_get(doc, "code"));
        if (problem) {
            json_t *st = json_object_get(doc, "status");
            CHECK(json_is_integer(st) && json_integer_value(st) == status &&
                      code && *code,
                  "a problem+json answer whose status is not %u or without "
                  "a code",
                  status);
        } else if (status >= 400) {
            CHECK(code && *code &&
                      json_is_string(json_object_get(doc, "error")),
                  "a %u JSON error without \"error\" and \"code\"", status);
        }
        json_decref(doc);
        return;
    }
    CHECK(status < 400 || library_status(status),
          "a %u answer that is neither the service's (problem+json) nor one "
          "libmicrohttpd gives",
          status);
}

/* Properties 2-4 on the bytes answered to the requests `f` frames. */
static void check_answers(const char *out, size_t len, const framing *f)
{
    const char *p = out, *end = out + len;
    size_t answers = 0;
    bool closed = false;
    while (p < end) {
        CHECK(!closed, "%zu bytes after an answer saying Connection: close",
              (size_t)(end - p));
        const char *head_end = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
        CHECK(head_end, "an unfinished header block: %.*s",
              (int)(end - p < 200 ? end - p : 200), p);
        unsigned status = 0;
        char reason;
        CHECK(head_end - p >= 13 && memcmp(p, "HTTP/1.1 ", 9) == 0 &&
                  sscanf(p + 9, "%3u%c", &status, &reason) == 2 &&
                  reason == ' ' && status >= 100 && status <= 599,
              "not a status line: %.*s", (int)(end - p < 80 ? end - p : 80), p);
        const char *status_line_end =
            memchr(p, '\r', (size_t)(head_end - p) + 1);
        const char *fields_at = status_line_end + 2;
        const char *body = head_end + 4;
        if (status < 200) {
            CHECK(status == 100 && fields_at >= head_end,
                  "an interim %u answer", status);
            p = body;
            continue;
        }
        size_t status_len = (size_t)(status_line_end - p);
        size_t head_len = (size_t)(body - p);
        if (library_status(status) && (size_t)(end - body) >= head_len &&
            memcmp(body, p, head_len) == 0)
            body += head_len; /* the library's doubled header block */
        CHECK(answers <= f->complete && (answers < f->complete || f->more),
              "answer %zu (%.*s) to bytes that hold %zu whole requests%s: a "
              "byte of one request was read as another",
              answers + 1, (int)status_len, p, f->complete,
              f->more ? " and the start of another" : "");
        bool head = answers <= f->complete && f->head[answers];
        answers++;
        size_t cl_len = 0, type_len = 0, conn_len = 0;
        const char *cl =
            header_value(fields_at, head_end, "Content-Length", &cl_len);
        const char *type =
            header_value(fields_at, head_end, "Content-Type", &type_len);
        const char *conn =
            header_value(fields_at, head_end, "Connection", &conn_len);
        size_t body_len = 0;
        if (!head && status != 204 && status != 304) {
            CHECK(cl && is_content_length(cl, cl_len),
                  "a %u answer without a Content-Length", status);
            body_len = strtoul(cl, NULL, 10);
        }
        CHECK(body_len <= (size_t)(end - body),
              "a %u answer whose body stops after %zu of %zu bytes", status,
              (size_t)(end - body), body_len);
        if (body_len)
            check_body(status, type, type_len, body, body_len);
        closed = conn && list_has(conn, conn_len, "close");
        p = body + body_len;
    }
}

/* ---- one connection --------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Sends the input on a fresh connection, shuts the sending side and reads
 * until the server closes; returns the bytes read into answer_buf. */
static size_t exchange(const uint8_t *data, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0, "socket: %s", strerror(errno));
    /* Each connection from another loopback address: the server closes
     * first, and its TIME_WAIT sockets would otherwise soon cover the
     * ephemeral ports, so that a new connection's SYN meets one of them
     * and waits a second or more to be retried. */
    static uint32_t next_client;
    struct sockaddr_in client = {
        .sin_family = AF_INET,
        .sin_addr.s_addr =
            htonl(FZ_CLIENT_NET | (next_client++ % FZ_CLIENT_ADDRESSES + 1))};
    CHECK(bind(fd, (struct sockaddr *)&client, sizeof client) == 0, "bind: %s",
          strerror(errno));
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)server_port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    /* libFuzzer's timer (-timeout) sends this thread SIGALRM every
     * timeout / 2 + 1 seconds: a call it interrupts is not a failure of
     * the server.  An interrupted connect() goes on in the kernel: wait
     * for it and read its outcome. */
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        CHECK(errno == EINTR, "connect: %s", strerror(errno));
        struct pollfd out = {.fd = fd, .events = POLLOUT};
        while (poll(&out, 1, -1) < 0)
            CHECK(errno == EINTR, "poll: %s", strerror(errno));
        int error = 0;
        socklen_t error_len = sizeof error;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &error_len);
        CHECK(error == 0, "connect: %s", strerror(error));
    }
    /* closed with a reset, so that no TIME_WAIT socket is left per input */
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    size_t sent = 0, got = 0;
    while (sent < size) {
        ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the server closed early; what it said is read below */
        sent += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    double deadline = now_seconds() + FZ_CLOSE_SECONDS;
    for (;;) {
        int wait_ms = (int)((deadline - now_seconds()) * 1000);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = wait_ms > 0 ? poll(&pfd, 1, wait_ms) : 0;
        if (ready < 0 && errno == EINTR)
            continue; /* libFuzzer's SIGALRM (above), not the server */
        CHECK(ready == 1,
              "the connection was neither answered nor closed within %d s "
              "of the input's end (%zu bytes read)",
              FZ_CLOSE_SECONDS, got);
        CHECK(got < FZ_MAX_OUTPUT, "more than %zu bytes answered",
              FZ_MAX_OUTPUT);
        ssize_t n = recv(fd, answer_buf + got, FZ_MAX_OUTPUT - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* closed, or reset after a refusal with unread bytes */
        got += (size_t)n;
    }
    close(fd);
    return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > FZ_MAX_INPUT)
        return 0;
    static framing f;
    frame_requests((const char *)data, size, &f);
    size_t got = exchange(data, size);
    check_answers(answer_buf, got, &f);
    return 0;
}
