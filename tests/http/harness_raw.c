/*
 * harness_raw.c - raw sockets, for what libcurl will not send (harness.h).
 */
#include "tests/http/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- raw sockets, for what libcurl will not send ---------------------- */

int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)g_srv.port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    struct timeval tv = {2, 0}; /* a send the server refuses fails, not hangs */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return fd;
}

/* Sends all of data; false if the peer stopped reading or closed. */
bool raw_send(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* Reads one response (headers, then Content-Length bytes) or until EOF or
 * wait_ms; returns the status code, 0 if none arrived.  *closed tells whether
 * the server closed the connection afterwards. */
long raw_read_reply(int fd, bytes *out, int wait_ms, bool *closed)
{
    double deadline = now_ms() + wait_ms;
    *closed = false;
    for (;;) {
        char *head_end = out->data ? strstr(out->data, "\r\n\r\n") : NULL;
        if (head_end) {
            const char *cl = strcasestr(out->data, "\r\nContent-Length:");
            size_t want = (size_t)(head_end + 4 - out->data);
            if (cl && cl < head_end)
                want += strtoul(cl + 17, NULL, 10);
            if (out->len >= want)
                break;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        char chunk[4096];
        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) {
            *closed = true;
            break;
        }
        bytes_append(out, chunk, (size_t)n);
    }
    if (!out->data)
        bytes_append(out, "", 0);
    if (!*closed) { /* does the server hang up after this reply? */
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char c;
        if (poll(&p, 1, 200) == 1 && recv(fd, &c, 1, MSG_PEEK) == 0)
            *closed = true;
    }
    long status = 0;
    if (strncmp(out->data, "HTTP/1.", 7) == 0)
        status = strtol(out->data + 9, NULL, 10);
    return status;
}

/* A raw reply as an http_response, so the same assertions apply. */
http_response raw_response(const bytes *raw, long status)
{
    http_response r = {.rc = CURLE_OK, .status = status};
    const char *head_end = strstr(raw->data, "\r\n\r\n");
    size_t head_len = head_end ? (size_t)(head_end - raw->data) + 4 : raw->len;
    bytes_append(&r.headers, raw->data, head_len);
    bytes_append(&r.body, raw->data + head_len, raw->len - head_len);
    return r;
}

/* Sends a raw request and returns its reply as an http_response. */
http_response raw_exchange(const char *request, bool *closed)
{
    int fd = raw_connect();
    bytes raw = {0};
    bool sent = raw_send(fd, request, strlen(request));
    long status = raw_read_reply(fd, &raw, RAW_REPLY_WAIT_MS, closed);
    close(fd);
    http_response r = raw_response(&raw, status);
    if (!sent && !status)
        r.rc = CURLE_SEND_ERROR;
    free(raw.data);
    return r;
}

int raw_post_v1(const char *body, const char *headers)
{
    size_t len = strlen(body);
    char head[512];
    snprintf(head, sizeof head,
             "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\n%sContent-Length: %zu\r\n"
             "\r\n",
             headers, len);
    int fd = raw_connect();
    assert_true(raw_send(fd, head, strlen(head)));
    assert_true(raw_send(fd, body, len));
    return fd;
}
