#!/usr/bin/python3
"""HTTP framing (RFC 9112) over raw sockets: what an attacker or a clumsy
client can send, and what the server must answer.

Every case is one connection and one exchange of bytes.  The rules checked:
- a request whose framing RFC 9112 says to reject gets 400 (501 for a
  transfer coding the server does not implement) and the connection is
  closed; the answer is problem+json with a code;
- no byte of one request is ever run as another: each case's request is
  followed by a smuggled "GET /readyz", whose answer must never appear;
- a request refused from its headers is answered at once, before its body
  is read and without "100 Continue", and the connection is closed, however
  small the body (one without a body keeps the connection);
- what libmicrohttpd answers itself, before the service sees the request
  (LIBRARY below, the list docs/api.md gives with the reasons), is at least
  a refusal with the connection closed and nothing smuggled;
- what libmicrohttpd 0.9.75 reads otherwise than RFC 9112 does, and hands
  over byte for byte as a correct request (library_misreadings below, from
  docs/api.md's list), is served as the library reads it, and the same
  bytes one NUL longer are refused.

usage: test_framing.py SERVER_BIN [-k SUBSTRING]"""
import json
import os
import socket
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "robust"))
from robustlib import Server  # noqa: E402

# How long a case waits for more bytes once an answer has arrived, and for
# an answer at all; a refused request must be answered well within these.
QUIET_SECONDS = 0.3
ANSWER_SECONDS = 3.0

LESSON = (b'{"x":[[1,0],[0,1]],"w_q":[[1,0],[0,1]],"w_k":[[1,0],[0,1]],'
          b'"w_v":[[1,0],[0,1]]}')
# Appended to most cases: if it is ever answered, a body or a header line
# was run as a request of its own.
SMUGGLED = b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
SMUGGLED_ANSWER = b'"status":"ready"'
API_KEY = "k3y-for-framing-tests"


def post(headers, body=LESSON, path=b"/v1/attention"):
    """A POST with the given header lines (bytes, CRLF-terminated)."""
    return (b"POST " + path + b" HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\n" + headers + b"\r\n" + body)


def cl(n=len(LESSON)):
    return b"Content-Length: %d\r\n" % n


class Exchange:
    """Bytes sent on a fresh connection and everything read back until the
    server closes or stays quiet."""

    def __init__(self, port, data, send_after=None):
        self.t0 = time.monotonic()
        self.closed = False
        self.raw = b""
        self.first_byte_at = None
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            s.sendall(data)
            deadline = time.monotonic() + ANSWER_SECONDS
            while True:
                wait = (QUIET_SECONDS if self.raw else
                        deadline - time.monotonic())
                if wait <= 0:
                    break
                s.settimeout(wait)
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    break
                except ConnectionResetError:
                    self.closed = True
                    break
                if not chunk:
                    self.closed = True
                    break
                if self.first_byte_at is None:
                    self.first_byte_at = time.monotonic() - self.t0
                self.raw += chunk
            if send_after is not None and not self.closed:
                s.sendall(send_after)
                self.after = b""
                s.settimeout(ANSWER_SECONDS)
                while SMUGGLED_ANSWER not in self.after:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    self.after += chunk
        finally:
            s.close()

    def statuses(self):
        """The status of every status line in the bytes read."""
        out = []
        for line in self.raw.split(b"\r\n"):
            if line.startswith(b"HTTP/1."):
                parts = line.split()
                if len(parts) > 1 and parts[1].isdigit():
                    out.append(int(parts[1]))
        return out

    def head_and_body(self):
        head, _, body = self.raw.partition(b"\r\n\r\n")
        return head.decode("latin-1").lower(), body

    def problem(self):
        head, body = self.head_and_body()
        if "content-type: application/problem+json" not in head:
            return None
        length = int(head.split("content-length: ")[1].split("\r\n")[0])
        return json.loads(body[:length])


class Checks:
    def __init__(self, only):
        self.only = only
        self.failures = []
        self.count = 0

    def case(self, name):
        return self.only is None or self.only in name

    def check(self, cond, message):
        self.count += 1
        print(("  ok    " if cond else "  FAIL  ") + message, flush=True)
        if not cond:
            self.failures.append(message)


def refused(c, port, name, data, status, code, smuggle=True):
    """The request is refused with status and problem code, alone, at once,
    and the connection closed; what follows it is never run."""
    if not c.case(name):
        return
    ex = Exchange(port, data + (SMUGGLED if smuggle else b""))
    problem = ex.problem()
    got = ex.statuses()
    c.check(got == [status] and problem is not None and
            problem.get("code") == code and problem.get("status") == status
            and ex.closed and SMUGGLED_ANSWER not in ex.raw,
            f"{name}: {status} {code}, connection closed, nothing smuggled "
            f"(got {got} {problem and problem.get('code')}, "
            f"closed={ex.closed})")


def library(c, port, name, data, status):
    """libmicrohttpd answers before the service sees the request: the answer
    must still be a refusal (every status line the same), the connection
    closed, nothing smuggled."""
    if not c.case(name):
        return
    ex = Exchange(port, data + SMUGGLED)
    got = ex.statuses()
    c.check(got and set(got) == {status} and ex.closed and
            SMUGGLED_ANSWER not in ex.raw,
            f"{name}: the library's {status}, connection closed, nothing "
            f"smuggled (got {got}, closed={ex.closed})")


def served(c, port, name, data, status=200, keep_alive=True):
    """The request is served (status), the connection kept when asked, and
    the next request on it answered."""
    if not c.case(name):
        return
    ex = Exchange(port, data, send_after=SMUGGLED if keep_alive else None)
    got = ex.statuses()
    ok = got[:1] == [status]
    if keep_alive:
        ok = ok and not ex.closed and SMUGGLED_ANSWER in ex.after
    c.check(ok, f"{name}: {status}" + (", and the connection serves the "
                                       "next request" if keep_alive else "")
            + f" (got {got}, closed={ex.closed})")


def served_then_closed(c, port, name, data, status=200):
    """The request is served (status) with Connection: close, the connection
    closed, and what follows it never run."""
    if not c.case(name):
        return
    ex = Exchange(port, data + SMUGGLED)
    got = ex.statuses()
    head, _ = ex.head_and_body()
    c.check(got == [status] and "\r\nconnection: close" in head and
            ex.closed and SMUGGLED_ANSWER not in ex.raw,
            f"{name}: {status}, Connection: close, connection closed, "
            f"nothing smuggled (got {got}, closed={ex.closed})")


def answered_before_body(c, port, name, head, status, code):
    """Only the headers of a request with a 100 MB body are sent: the answer
    arrives at once, without 100 Continue, and the connection is closed."""
    if not c.case(name):
        return
    ex = Exchange(port, head)
    problem = ex.problem()
    got = ex.statuses()
    c.check(got == [status] and problem and problem.get("code") == code and
            ex.closed and ex.first_byte_at is not None and
            ex.first_byte_at < 1.0,
            f"{name}: {status} {code} at once, before the body, without 100 "
            f"Continue, connection closed (got {got}, closed={ex.closed}, "
            f"after {ex.first_byte_at} s)")


def smuggling_and_syntax(c, port):
    # RFC 9112 5.2: obs-fold; libmicrohttpd appends the fold to the name
    refused(c, port, "obs-fold Content-Length",
            post(b"Content-Length:\r\n %d\r\n" % len(SMUGGLED), SMUGGLED,
                 ), 400, "bad_request")
    refused(c, port, "obs-fold in another header",
            post(cl() + b"X-A: a\r\n b\r\n"), 400, "bad_request")
    # RFC 9112 5.1: no whitespace between the field name and the colon
    refused(c, port, "Transfer-Encoding : chunked (space before the colon)",
            post(b"Transfer-Encoding : chunked\r\n" + cl(len(SMUGGLED) + 10),
                 b"%x\r\n" % len(SMUGGLED) + SMUGGLED + b"\r\n0\r\n\r\n"),
            400, "bad_request", smuggle=False)
    refused(c, port, "Content-Length : n (space before the colon)",
            post(b"Content-Length : %d\r\n" % len(LESSON)), 400,
            "bad_request")
    refused(c, port, "a header line with an empty name",
            post(cl(2) + b": x\r\n", b"{}"), 400, "bad_request")
    refused(c, port, "an empty name on a GET",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n: x\r\n", 400,
            "bad_request")
    refused(c, port, "whitespace before the first header line",
            b"GET /healthz HTTP/1.1\r\n Host: x\r\nHost: x\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a field name that is not a token",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX@A: 1\r\n\r\n", 400,
            "bad_request")
    # RFC 9110 5.5: CR, LF and NUL are invalid in field values
    refused(c, port, "NUL in a header value",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a bare CR in a header value",
            b"GET /healthz HTTP/1.1\r\nHost: x\rX-A: b\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a control byte in a header value",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a CR in X-Request-ID (response splitting)",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-ID: a\rSet-Cookie:"
            b" x=1\r\n\r\n", 400, "bad_request")
    # RFC 9112 3.2: the library splits the request line at its first and
    # last spaces; a target holding a space is refused, not served
    refused(c, port, "a space inside the request target",
            post(cl(), path=b"/v1/attention /v1/attention"), 400,
            "bad_request")
    refused(c, port, "a tab inside the request target",
            b"GET /healthz\t/x HTTP/1.1\r\nHost: x\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a NUL inside the request target's query",
            b"GET /healthz?a\x00b HTTP/1.1\r\nHost: x\r\n\r\n", 400,
            "bad_request")
    # the library cuts the target at a NUL and serves what is before it
    # when the line still ends in a version: a NUL is refused wherever it
    # is, and whatever follows it
    refused(c, port, "a NUL and 'HTTP/' inside the request target",
            b"GET /healthz\x00HTTP/h: 1 HTTP/1.1\r\nHost: x\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a NUL, a version and a NUL inside the request target",
            b"GET /healthz\x00HTTP/1.1\x00/x HTTP/1.1\r\nHost: x\r\n\r\n",
            400, "bad_request")
    refused(c, port, "a NUL, a version and a NUL ending the request target",
            b"GET /healthz\x00HTTP/1.1\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
            400, "bad_request")
    refused(c, port, "a NUL and a version ending the request target",
            b"GET /healthz\x00HTTP/1.1 HTTP/1.1\r\nHost: x\r\n\r\n",
            400, "bad_request")
    refused(c, port, "an escaped path, a query, a NUL and a version ending it",
            b"GET /%68%65alkhz?x\x00HTTP/1.1 HTTP/1.1\r\nHost: x\r\n\r\n",
            400, "bad_request")
    refused(c, port, "an escaped path, then a NUL and a version in the query",
            b"GET /%41%41%41?a\x00HTTP/1.0\x00b HTTP/1.1\r\nHost: x\r\n\r\n",
            400, "bad_request")
    refused(c, port, "a control byte inside the request target",
            b"GET /health\x01z HTTP/1.1\r\nHost: x\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a NUL inside the method",
            b"G\x00\x9fT /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "two spaces after the method",
            b"GET  /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a method that is not a token",
            b"G@T /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request")


def content_length_and_codings(c, port):
    # RFC 9112 6.3: two lengths, or a length with a coding, are in doubt
    refused(c, port, "two Content-Length headers",
            post(cl() + cl()), 400, "bad_request")
    refused(c, port, "Content-Length and Transfer-Encoding",
            post(cl() + b"Transfer-Encoding: chunked\r\n"), 400,
            "bad_request")
    refused(c, port, "Transfer-Encoding: gzip",
            post(b"Transfer-Encoding: gzip\r\n"), 501,
            "unsupported_transfer_coding")
    refused(c, port, "Transfer-Encoding: gzip, chunked",
            post(b"Transfer-Encoding: gzip, chunked\r\n",
                 b"5\r\nhello\r\n0\r\n\r\n"), 501,
            "unsupported_transfer_coding")
    refused(c, port, "Transfer-Encoding: identity",
            post(b"Transfer-Encoding: identity\r\n"), 501,
            "unsupported_transfer_coding")
    refused(c, port, "Transfer-Encoding: chunked, chunked",
            post(b"Transfer-Encoding: chunked, chunked\r\n",
                 b"5\r\nhello\r\n0\r\n\r\n"), 400, "bad_request")
    refused(c, port, "Transfer-Encoding: chunked, gzip (chunked not last)",
            post(b"Transfer-Encoding: chunked, gzip\r\n",
                 b"5\r\nhello\r\n0\r\n\r\n"), 400, "bad_request")
    refused(c, port, "two Transfer-Encoding headers",
            post(b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
                 b"\r\n", b"0\r\n\r\n"), 400, "bad_request")
    refused(c, port, "Transfer-Encoding in HTTP/1.0",
            b"POST /v1/attention HTTP/1.0\r\nContent-Type: application/json"
            b"\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            400, "bad_request")
    # a chunked body and its trailers are decoded inside the library, which
    # takes a trailer name holding a bare CR as a field and a trailer line
    # that starts with a NUL as the section's end: the answer closes
    one_chunk = b"%x\r\n" % len(LESSON) + LESSON + b"\r\n0\r\n"
    served_then_closed(c, port, "Transfer-Encoding: Chunked (any case) is read",
                       post(b"Transfer-Encoding: Chunked\r\n",
                            one_chunk + b"\r\n"))
    served_then_closed(c, port, "a chunked body with a trailer field",
                       post(b"Transfer-Encoding: chunked\r\n",
                            one_chunk + b"X-Checksum: 1\r\n\r\n"))
    served_then_closed(c, port, "a trailer name that starts with a bare CR",
                       post(b"Transfer-Encoding: chunked\r\n",
                            one_chunk + b"\rX: y\r\n\r\n"))
    served_then_closed(c, port, "a trailer line that starts with a NUL",
                       post(b"Transfer-Encoding: chunked\r\n",
                            one_chunk + b"\0" + SMUGGLED + b"\r\n"))
    served(c, port, "a valid Content-Length is read", post(cl()))
    # a GET's body is read as a body, never as the next request
    served(c, port, "a GET's body (a request's text) is not run",
           b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
           % len(SMUGGLED) + SMUGGLED)
    served(c, port, "two pipelined requests are both answered",
           b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
           b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    served(c, port, "bare LF line ends are read (RFC 9112 2.2)",
           b"GET /healthz HTTP/1.1\nHost: x\n\n")


def hosts_and_paths(c, port):
    # RFC 9112 3.2: an HTTP/1.1 request has exactly one valid Host
    refused(c, port, "HTTP/1.1 without Host",
            b"GET /healthz HTTP/1.1\r\n\r\n", 400, "bad_request")
    refused(c, port, "two Host headers",
            b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400,
            "bad_request")
    refused(c, port, "a Host that is not a host",
            b"GET /healthz HTTP/1.1\r\nHost: a/b\r\n\r\n", 400,
            "bad_request")
    served(c, port, "HTTP/1.0 without Host is served",
           b"GET /healthz HTTP/1.0\r\n\r\n", keep_alive=False)
    served(c, port, "an empty Host is valid",
           b"GET /healthz HTTP/1.1\r\nHost:\r\n\r\n")
    for path in (b"/healthz%00", b"/v1%2Fattention", b"/v1%2fattention"):
        if not c.case(f"path {path.decode()}"):
            continue
        ex = Exchange(port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        p = ex.problem()
        c.check(ex.statuses() == [404] and p and p["code"] == "not_found",
                f"path {path.decode()}: 404, not a route (got "
                f"{ex.statuses()})")
    served(c, port, "an escaped letter in the path names the route",
           b"GET /%68ealthz HTTP/1.1\r\nHost: x\r\n\r\n")
    # escapes shorten the path in place and the query is cut there too, so
    # the target holds NULs the library and the service wrote: never a NUL,
    # a version and a NUL
    served(c, port, "escaped letters, then a query that looks like a version",
           b"GET /%68%65althz?xHTTP/1.1 HTTP/1.1\r\nHost: x\r\n\r\n")
    served(c, port, "a query that is a version",
           b"GET /healthz?HTTP/1.1 HTTP/1.1\r\nHost: x\r\n\r\n")
    served(c, port, "a query that ends in a version",
           b"GET /healthz?xHTTP/1.1 HTTP/1.1\r\nHost: x\r\n\r\n")
    served(c, port, "four escapes, then a path that ends in a version",
           b"GET /%68%65%61%6Cthz/HTTP/1.1 HTTP/1.1\r\nHost: x\r\n\r\n",
           status=404)
    served(c, port, "a thousand query parameters",
           b"GET /healthz?" + b"&".join(b"a%d=b" % i for i in range(1000))
           + b" HTTP/1.1\r\nHost: x\r\n\r\n")


def early_answers(c, port):
    big = b"Content-Length: 100000000\r\n"
    answered_before_body(c, port, "404 with a 100 MB body",
                         b"POST /nowhere HTTP/1.1\r\nHost: x\r\n" + big +
                         b"Expect: 100-continue\r\n\r\n", 404, "not_found")
    answered_before_body(c, port, "415 with a 100 MB body",
                         b"POST /v1/attention HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: text/plain\r\n" + big +
                         b"Expect: 100-continue\r\n\r\n", 415,
                         "unsupported_media_type")
    answered_before_body(c, port, "405 with a 100 MB body, no Expect",
                         b"PUT /v1/attention HTTP/1.1\r\nHost: x\r\n" + big +
                         b"\r\n", 405, "method_not_allowed")
    answered_before_body(c, port, "413 from Content-Length",
                         b"POST /v1/attention HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\n" + big +
                         b"\r\n", 413, "body_too_large")
    answered_before_body(c, port, "a refused chunked body",
                         b"POST /nowhere HTTP/1.1\r\nHost: x\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n", 404,
                         "not_found")
    refused(c, port, "415 with a small body, answered at once and closed",
            b"POST /v1/attention HTTP/1.1\r\nHost: x\r\nContent-Type: "
            b"text/plain\r\n" + cl() + b"\r\n" + LESSON, 415,
            "unsupported_media_type")
    refused(c, port, "404 with a small body, answered at once and closed",
            b"POST /nowhere HTTP/1.1\r\nHost: x\r\n" + cl() + b"\r\n" +
            LESSON, 404, "not_found")
    served(c, port, "404 without a body keeps the connection",
           b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", status=404)
    headers = b"".join(b"X-Long-%d: %s\r\n" % (i, b"v" * 8000)
                       for i in range(5))
    if c.case("headers over 32 KiB"):
        ex = Exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" +
                      headers + b"\r\n")
        p = ex.problem()
        c.check(ex.statuses() == [431] and p and
                p["code"] == "headers_too_large",
                f"headers over 32 KiB: 431 headers_too_large "
                f"(got {ex.statuses()})")


def library_answers(c, port):
    """What libmicrohttpd 0.9.75 answers itself (docs/api.md lists them)."""
    for value in (b"+%d" % len(LESSON), b"-1", b"%d, %d" % (len(LESSON),
                  len(LESSON)), b"%d   " % len(LESSON), b"0x10", b""):
        library(c, port, f"Content-Length: {value.decode()!r}",
                post(b"Content-Length: " + value + b"\r\n"), 400)
    library(c, port, "Content-Length: 2^64",
            post(b"Content-Length: 18446744073709551616\r\n"), 413)
    library(c, port, "a chunk extension of 200 KB",
            post(b"Transfer-Encoding: chunked\r\n",
                 b"5;" + b"a" * 200000 + b"\r\nhello\r\n0\r\n\r\n"), 500)
    library(c, port, "a chunk size of 2^72",
            post(b"Transfer-Encoding: chunked\r\n",
                 b"ffffffffffffffffff\r\nhello\r\n0\r\n\r\n"), 413)
    library(c, port, "900 small headers (past the connection memory)",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n" +
            b"".join(b"X%d: y\r\n" % i for i in range(900)) + b"\r\n", 431)
    library(c, port, "a 70 KB request target",
            b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414)
    library(c, port, "HTTP/2.0 in the request line",
            b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505)
    library(c, port, "a request line without a version",
            b"GET /healthz\r\n\r\n", 400)
    library(c, port, "a header line without a colon",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400)


def library_misreadings(c, port):
    """Requests libmicrohttpd 0.9.75 reads otherwise than RFC 9112 does and
    the service cannot tell from correct ones (docs/api.md lists them); the
    same bytes one NUL longer are refused."""
    # a header line of NULs is read as the empty line that ends the block:
    # with the line ends around it at most four bytes it leaves what
    # "Host: x\r\n\r\n" leaves, and the next line is the next request
    served(c, port, "a line of NULs after a bare LF ends the header block",
           b"GET /healthz HTTP/1.1\r\nHost: x\n\0\r\n")
    refused(c, port, "a line of NULs after a CRLF (a NUL longer)",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n\0\r\n", 400,
            "bad_request")


def bearer_tokens(c, binary):
    """With --api-key-file: the token may be followed by whitespace."""
    if not c.case("bearer"):
        return
    with tempfile.NamedTemporaryFile("w", suffix=".key") as key:
        key.write(API_KEY + "\n")
        key.flush()
        srv = Server(binary, ["--api-key-file", key.name])
        try:
            for auth, status in ((b"Bearer " + API_KEY.encode(), 200),
                                 (b"Bearer " + API_KEY.encode() + b"  \t",
                                  200),
                                 (b"bearer  " + API_KEY.encode(), 200),
                                 (b"Bearer " + API_KEY.encode() + b"x", 401),
                                 (b"Bearer", 401)):
                ex = Exchange(srv.port, post(b"Authorization: " + auth +
                                             b"\r\n" + cl()))
                c.check(ex.statuses()[:1] == [status],
                        f"bearer: Authorization: {auth.decode()!r} → "
                        f"{status} (got {ex.statuses()})")
        finally:
            srv.terminate()


# The groups of cases run against one server, in order (the fuzz corpus,
# tests/fuzz/make_framing_corpus.py, is written from them too).
CASE_GROUPS = (smuggling_and_syntax, content_length_and_codings,
               hosts_and_paths, early_answers, library_answers,
               library_misreadings)


def main():
    binary = sys.argv[1]
    only = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else None
    c = Checks(only)
    srv = Server(binary, ["--threads", "2", "--idle-timeout", "5"])
    try:
        for group in CASE_GROUPS:
            group(c, srv.port)
        ex = Exchange(srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        c.check(ex.statuses() == [200], "the server still serves after all "
                "of the above")
    finally:
        code = srv.terminate()
    c.check(code == 0, f"exit code {code} after SIGTERM")
    bearer_tokens(c, binary)
    if c.failures:
        print(f"test_framing: {len(c.failures)} of {c.count} checks failed",
              flush=True)
        sys.exit(1)
    print(f"test_framing: all {c.count} checks passed", flush=True)


if __name__ == "__main__":
    main()
