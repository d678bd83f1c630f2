/*
 * framing.h - a request's framing (RFC 9112) as libmicrohttpd read it,
 * checked again before any endpoint runs.
 *
 * libmicrohttpd 0.9.75 reads some ambiguous requests in a way their sender
 * did not mean (a folded Content-Length, "Transfer-Encoding :", a header line
 * without a name, a NUL in a value), so that a body can run as a second
 * request.  The header block it parsed is read again here, and a request
 * whose framing is in doubt is refused; the daemon answers it at once and
 * closes the connection.
 */
#ifndef SERVER_HTTP_FRAMING_H
#define SERVER_HTTP_FRAMING_H

#include "server/base/reply.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* Request headers (names + values) we accept; more is 431 (RFC 6585).  The
 * library's own per-connection memory is larger (FRAMING_CONNECTION_MEMORY)
 * so that it is this check, with a JSON answer, that normally refuses. */
#define FRAMING_MAX_HEADER_BYTES ((size_t)32 << 10)

/* libmicrohttpd's memory per connection: the header block, then the read
 * buffer body chunks arrive through.  The library zeroes all of it after
 * every request (and the read buffer's tail when it shrinks), so each KiB is
 * CPU that every lesson-sized request pays (docs/performance.md, "The
 * server's constants").  44 KiB still holds a header line of some 44,000
 * bytes, well past FRAMING_MAX_HEADER_BYTES, so that our JSON 431 answers
 * (tests/http: huge headers, 40 KiB); beyond it the library answers 431
 * itself.  tests/robust reads this figure for the memory a connection
 * holds. */
#define FRAMING_CONNECTION_MEMORY ((size_t)44 << 10)

/* Whether the request's framing is refused: the header block does not read
 * back as the header set libmicrohttpd handed over (a folded line, a line
 * without a name, a bare CR or a NUL), a field name that is not a token, a
 * control byte in a value, headers over FRAMING_MAX_HEADER_BYTES (431), a
 * Content-Length that is not one number, Content-Length with
 * Transfer-Encoding, a transfer coding other than chunked (501) or chunked
 * not alone, Transfer-Encoding in HTTP/1.0, a request line that is not
 * three parts separated by single spaces (a target holding a space, a
 * control byte or a NUL; a NUL in the method), an HTTP/1.1 request
 * without exactly one valid Host, a method that is not a token.  True with out
 * filled (and the connection to be closed) when refused.  `method`,
 * `url` and `version` are the access handler's arguments: they point into
 * the library's copy of the header block. */
bool framing_refused(struct MHD_Connection *conn, const char *method,
                     const char *url, const char *version, reply *out);

/* Whether a body follows the headers (Content-Length above 0, or
 * Transfer-Encoding). */
bool framing_has_body(struct MHD_Connection *conn);

/* The declared body length, or 0 when there is none (chunked). */
unsigned long long framing_content_length(struct MHD_Connection *conn);

/* libmicrohttpd's MHD_OPTION_UNESCAPE_CALLBACK: decodes %XX in the path,
 * except %2F, a space and control bytes (%00-%20, %7F), which stay as they
 * are (so "/healthz%00" and "/v1%2Fattention" name no route, and a space
 * left in the path was one in the request line, which framing_refused()
 * refuses). */
size_t framing_unescape(void *cls, struct MHD_Connection *conn, char *s);

/* libmicrohttpd's MHD_OPTION_URI_LOG_CALLBACK: empties the query string
 * before the library splits it into arguments (the service has none; a
 * thousand of them would use up the connection's memory, and the library
 * would close it without an answer), and the whole target when it holds a
 * space, a control byte or a NUL (framing_refused() then refuses it).
 * Returns NULL. */
void *framing_drop_query(void *cls, const char *uri,
                         struct MHD_Connection *conn);

#endif
