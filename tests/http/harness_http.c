/*
 * harness_http.c - requests over libcurl, the lesson's body with changes,
 * the in-flight gauge, and the heavy requests of the load tests (harness.h).
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- constants -------------------------------------------------------- */

/* Seconds any one libcurl transfer may take before the test fails instead of
 * hanging; a loaded 2-core machine answers these requests in milliseconds. */
#define REQUEST_TIMEOUT_S 20L

/* ---- HTTP over libcurl ------------------------------------------------ */

void bytes_append(bytes *b, const void *data, size_t len)
{
    /* doubling: a body built number by number costs linear time, also
     * under AddressSanitizer, whose realloc always copies */
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            abort();
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

static void bytes_printf(bytes *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void bytes_printf(bytes *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof small)
        abort();
    bytes_append(b, small, (size_t)len);
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    bytes_append(ctx, data, size * n);
    return size * n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
    bytes *h = ctx;
    if (size * n >= 5 && strncmp(data, "HTTP/", 5) == 0)
        h->len = 0; /* a new response (after 100 Continue) */
    bytes_append(h, data, size * n);
    return size * n;
}

typedef struct {
    const char *data;
    size_t len, sent;
} upload;

static size_t on_read(char *dst, size_t size, size_t n, void *ctx)
{
    upload *u = ctx;
    size_t chunk = size * n;
    if (chunk > 1000)
        chunk = 1000; /* many small chunks */
    if (chunk > u->len - u->sent)
        chunk = u->len - u->sent;
    memcpy(dst, u->data + u->sent, chunk);
    u->sent += chunk;
    return chunk;
}

http_response http(const http_request *rq)
{
    http_response r = {0};
    CURL *h = rq->reuse ? rq->reuse : curl_easy_init();
    if (!h)
        abort();
    char url[512];
    snprintf(url, sizeof url, "%s%s", g_srv.base, rq->path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, REQUEST_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);

    struct curl_slist *hdrs = NULL;
    char ct[256];
    snprintf(ct, sizeof ct, "Content-Type:%s%s", rq->content_type ? " " : "",
             rq->content_type ? rq->content_type : "");
    hdrs = curl_slist_append(hdrs, ct); /* "Content-Type:" removes it */
    bool asks_expect = false;
    for (size_t i = 0; i < 4 && rq->headers[i]; i++) {
        hdrs = curl_slist_append(hdrs, rq->headers[i]);
        asks_expect |= strncasecmp(rq->headers[i], "Expect:", 7) == 0;
    }
    if (!asks_expect)
        hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue wait */
    upload up = {0};
    if (rq->body) {
        size_t len = rq->body_len ? rq->body_len : strlen(rq->body);
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        if (rq->chunked) {
            up = (upload){rq->body, len, 0};
            hdrs = curl_slist_append(hdrs, "Transfer-Encoding: chunked");
            curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(h, CURLOPT_READDATA, &up);
        } else {
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        }
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    if (rq->method && strcmp(rq->method, "HEAD") == 0)
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    else if (rq->method)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    else
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);

    r.rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &r.new_connections);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
    curl_slist_free_all(hdrs);
    if (!rq->reuse)
        curl_easy_cleanup(h);
    if (!r.body.data)
        bytes_append(&r.body, "", 0);
    if (!r.headers.data)
        bytes_append(&r.headers, "", 0);
    return r;
}

void response_free(http_response *r)
{
    free(r->body.data);
    free(r->headers.data);
    memset(r, 0, sizeof *r);
}

/* The value of header `name` in r (copied into out, trimmed), or NULL.
 * `nth` picks among repeated headers (0 = first). */
const char *header_nth(const http_response *r, const char *name, int nth,
                       char *out, size_t out_size)
{
    size_t name_len = strlen(name);
    for (const char *line = r->headers.data; line && *line;) {
        const char *end = strstr(line, "\r\n");
        size_t line_len = end ? (size_t)(end - line) : strlen(line);
        if (line_len > name_len && line[name_len] == ':' &&
            strncasecmp(line, name, name_len) == 0 && nth-- == 0) {
            const char *v = line + name_len + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            size_t v_len = (size_t)(line + line_len - v);
            while (v_len && (v[v_len - 1] == ' ' || v[v_len - 1] == '\t'))
                v_len--;
            if (v_len >= out_size)
                v_len = out_size - 1;
            memcpy(out, v, v_len);
            out[v_len] = '\0';
            return out;
        }
        line = end ? end + 2 : line + line_len;
    }
    return NULL;
}

const char *header(const http_response *r, const char *name, char *out,
                   size_t out_size)
{
    return header_nth(r, name, 0, out, out_size);
}

int header_count(const http_response *r, const char *name)
{
    char ignored[8];
    int n = 0;
    while (header_nth(r, name, n, ignored, sizeof ignored))
        n++;
    return n;
}

/* Does the comma-separated list `list` hold `token` (case-insensitive)? */
bool list_has(const char *list, const char *token)
{
    size_t len = strlen(token);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > p && last[-1] == ' ')
            last--;
        if ((size_t)(last - p) == len && strncasecmp(p, token, len) == 0)
            return true;
        p = end;
    }
    return false;
}

http_response post_json(const char *body)
{
    return http(&(http_request){.method = "POST",
                                .path = "/v1/attention",
                                .content_type = "application/json",
                                .body = body});
}

/* Lesson 001 with `changes` (a JSON object) merged over it; NULL values in
 * changes delete a field.  Caller frees. */
char *lesson_with(const char *changes)
{
    json_error_t jerr;
    json_t *base = json_loads(LESSON_001, 0, &jerr);
    json_t *delta = json_loads(changes, 0, &jerr);
    if (!base || !delta) {
        fprintf(stderr, "bad test JSON: %s\n", jerr.text);
        abort();
    }
    const char *key;
    json_t *value;
    json_object_foreach(delta, key, value)
    {
        if (json_is_null(value))
            json_object_del(base, key);
        else
            json_object_set(base, key, value);
    }
    char *out = json_dumps(base, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(base);
    json_decref(delta);
    return out;
}

long in_flight_requests(void)
{
    http_response r = http(&(http_request){.path = "/metrics"});
    static const char gauge[] = "\nattention_in_flight_requests ";
    const char *at = strstr(r.body.data, gauge);
    long n = r.status == 200 && at ? strtol(at + strlen(gauge), NULL, 10) : -1;
    response_free(&r);
    return n;
}

/* ---- heavy requests --------------------------------------------------- */

char *heavy_body(size_t n, size_t d)
{
    bytes b = {0};
    uint32_t state = 12345;
    const char *names[] = {"x", "w_q", "w_k", "w_v"};
    bytes_append(&b, "{", 1);
    for (int t = 0; t < 4; t++) {
        size_t rows = t == 0 ? n : d;
        bytes_printf(&b, "%s\"%s\":[", t ? "," : "", names[t]);
        for (size_t i = 0; i < rows; i++) {
            bytes_append(&b, i ? ",[" : "[", i ? 2 : 1);
            for (size_t j = 0; j < d; j++) {
                state = state * 1664525u + 1013904223u; /* Numerical Recipes */
                int v = (int)(state >> 22) - 512;       /* -512 … 511 */
                bytes_printf(&b, "%s%.3f", j ? "," : "", v / 1024.0);
            }
            bytes_append(&b, "]", 1);
        }
        bytes_append(&b, "]", 1);
    }
    bytes_append(&b, "}", 1);
    return b.data;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal;
    (void)dlnow;
    heavy_client *c = ctx;
    if (!c->counted && ultotal > 0 && ulnow == ultotal) {
        c->counted = true;
        atomic_fetch_add(c->uploaded, 1);
    }
    return 0;
}

void *heavy_request(void *arg)
{
    heavy_client *c = arg;
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = c->body,
                                           .reuse = h});
    curl_easy_cleanup(h);
    c->status = r.rc == CURLE_OK ? r.status : -(long)r.rc;
    char value[64];
    c->retry_after =
        header(&r, "Retry-After", value, sizeof value) && atoi(value) >= 1;
    c->problem_overloaded =
        strstr(r.body.data, "\"code\":\"overloaded\"") != NULL;
    if (r.status == 200) {
        json_error_t jerr;
        json_t *v = json_loadb(r.body.data, r.body.len, 0, &jerr);
        size_t want[2] = {HEAVY_N, HEAVY_D};
        json_t *out = json_object_get(v, "output");
        c->correct = json_array_size(out) == want[0] &&
                     json_array_size(json_array_get(out, 0)) == want[1];
        json_decref(v);
    }
    response_free(&r);
    return NULL;
}

char *big_reply_body(size_t n)
{
    char *x = heavy_body(n, 4);
    static const char ret[] =
        ",\"return\":[\"scores\",\"masked_scores\",\"weights\"]}";
    size_t len = strlen(x);
    char *body = malloc(len + sizeof ret);
    assert_non_null(body);
    memcpy(body, x, len - 1); /* without its closing brace */
    memcpy(body + len - 1, ret, sizeof ret);
    free(x);
    return body;
}
