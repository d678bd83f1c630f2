/*
 * test_http.c - integration tests: the real attention-server binary driven
 * over loopback with libcurl (and a raw socket where libcurl is too polite to
 * send what a hostile client sends).
 *
 * DESIGN
 * Each cmocka group starts $ATTENTION_SERVER with `--listen 127.0.0.1:0
 * --threads 2` plus the flags the group needs, reads the port from the first
 * stdout line, and at teardown sends SIGTERM and asserts a clean exit 0.
 * One test = one behaviour of issues 2 and 3, with exact expectations:
 * status, Content-Type, the problem's `code` and `pointer`, and for 200s the
 * numbers of lesson 001 (NumPy 1.24 on the lesson's own code) within 1e-15.
 * Assertions run only on the main thread; worker threads of the load tests
 * count what they saw and the main thread asserts the counts.
 */
#include <setjmp.h> /* cmocka needs these before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* Lesson 001's numbers are printed by NumPy with 17 significant digits; the
 * server parses the same decimal inputs, so only the order of the float64
 * sums may differ: a few ulps of values below 1 (ulp 5.6e-17). */
#define TOL_F64 1e-15
/* float32 results against the float64 reference: float32 has a 6e-8
 * relative epsilon and a handful of roundings stand between input and
 * output. */
#define TOL_F32 1e-6
/* A small --max-body for the limits group: lesson 001's body (about 330
 * bytes) fits, a 4 KiB upload does not. */
#define SMALL_MAX_BODY 2048
/* Seconds any one libcurl transfer may take before the test fails instead of
 * hanging; a loaded 2-core machine answers these requests in milliseconds. */
#define REQUEST_TIMEOUT_S 20L
/* How long a raw-socket read waits for a reply the server owes us. */
#define RAW_REPLY_WAIT_MS 3000
/* How long the server may take to print its banner and to exit on SIGTERM. */
#define START_WAIT_MS 10000
#define STOP_WAIT_MS 15000
/* Headers above the server's 32 KiB limit (HTTP_MAX_HEADER_BYTES), still
 * within libmicrohttpd's 64 KiB connection buffer, so that the server's own
 * JSON 431 answers (beyond the buffer the library answers by itself). */
#define HUGE_HEADER_BYTES (40 * 1024)
/* Concurrent clients: 8 threads × 25 requests, all on their own handles. */
#define LOAD_THREADS 8
#define LOAD_REQUESTS 25
/* The "heavy" request of the overload and drain tests: n = 384 tokens of
 * width 96 with the default return (weights are 384×384): enough JSON to keep
 * one worker busy for tens of milliseconds. */
#define HEAVY_N 384
#define HEAVY_D 96
/* Clients hammering a server with --threads 1 --max-queue 1. */
#define OVERLOAD_CLIENTS 8
#define DRAIN_CLIENTS 4

/* The server's codes for oversized headers and ambiguous body framing. */
#define CODE_HEADERS_TOO_LARGE "headers_too_large"
#define CODE_BAD_FRAMING "bad_request"
/* Seconds SIGTERM waits for in-flight requests (--grace): short, so that a
 * request the server forgot to release cannot stall the suite for the 20 s
 * default (the drain group sets its own). */
#define GRACE_S "5"
/* Heavy jobs abandoned at once, and how long a new client may then wait:
 * one heavy job's worth (the job a worker may be finishing when the client's
 * departure is noticed) and a margin for a busy 2-core machine. */
#define DISCARDED_JOBS 8
#define DISCARDED_WAIT_MS 1500
/* Abandoned uploads the disconnect tests leave behind. */
#define ABANDONED_UPLOADS 20

/* Lesson 001 (seeds/001_*.txt): X, W_q, W_k, W_v as the lesson writes them. */
static const char LESSON_001[] =
    "{\"x\":[[1.0,0.0,1.0,0.0],[0.0,2.0,0.0,2.0],[1.0,1.0,1.0,1.0]],"
    "\"w_q\":[[0.1,0.2,0.0,0.0],[0.0,0.1,0.3,0.0],[0.1,0.0,0.0,0.2],"
    "[0.0,0.0,0.2,0.3]],"
    "\"w_k\":[[0.2,0.0,0.1,0.0],[0.0,0.1,0.0,0.3],[0.1,0.0,0.2,0.0],"
    "[0.0,0.2,0.0,0.1]],"
    "\"w_v\":[[0.0,0.1,0.0,0.2],[0.2,0.0,0.2,0.0],[0.0,0.3,0.1,0.0],"
    "[0.1,0.0,0.0,0.3]]}";

/* NumPy 1.24 on the lesson's code: softmax(Q Kᵀ / √4) and weights @ V. */
static const double LESSON_001_WEIGHTS[3][3] = {
    {0.31359894363028484, 0.35006362369355476, 0.33633743267616034},
    {0.300872365693425, 0.3495638171532875, 0.3495638171532875},
    {0.297684785421469, 0.35817982316456765, 0.34413539141396327},
};
static const double LESSON_001_OUTPUT[3][4] = {
    {0.310939404018981, 0.2599745505225781, 0.27228657364329856,
     0.4409266792802701},
    {0.31460743543795877, 0.260174473138685, 0.27478190857664375,
     0.4446946720073013},
    {0.3181485113229296, 0.2567280707341729, 0.27628102523216297,
     0.44651254669001605},
};
/* Q = X @ W_q and Q Kᵀ (unscaled). */
static const double LESSON_001_Q[3][4] = {
    {0.2, 0.2, 0.0, 0.2},
    {0.0, 0.2, 1.0, 0.6},
    {0.2, 0.30000000000000004, 0.5, 0.5},
};
static const double LESSON_001_SCORES[3][3] = {
    {0.06000000000000001, 0.28, 0.20000000000000004},
    {0.30000000000000004, 0.6, 0.6000000000000001},
    {0.21000000000000002, 0.5800000000000001, 0.5},
};
/* The same weights split into 2 heads of d_k = 2 by reshape (lesson 002's
 * convention), NumPy: weights[1] (second head) and the concatenated output. */
static const double LESSON_001_H2_WEIGHTS_1[3][3] = {
    {0.3146648378255653, 0.35235710016444194, 0.3329780620099928},
    {0.3011422256514843, 0.3420174927801655, 0.3568402815683501},
    {0.2989291321545731, 0.35673143807838265, 0.34433942976704424},
};
static const double LESSON_001_H2_OUTPUT[3][4] = {
    {0.30421222395128256, 0.26479456713276334, 0.2723027424513312,
     0.4408362586687746},
    {0.3084827367822019, 0.2609715268043086, 0.2739733041477197,
     0.44385908158257126},
    {0.3084225800628311, 0.26195747002774195, 0.2758873173769237,
     0.4459944041614663},
};

/* ---- the server process ----------------------------------------------- */

typedef struct {
    pid_t pid;
    unsigned port;
    char base[64]; /* http://127.0.0.1:PORT */
} server;

static server g_srv; /* the running group's server */
static char g_api_key_path[64];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts the binary with the common flags plus `extra` (NULL-terminated).
 * Returns 0 and fills s, or -1 with a message printed. */
static int server_start(server *s, const char *const *extra)
{
    const char *bin = getenv("ATTENTION_SERVER");
    if (!bin || !*bin) {
        fprintf(stderr, "set ATTENTION_SERVER to the server binary\n");
        return -1;
    }
    const char *argv[32] = {bin, "--listen", "127.0.0.1:0", "--threads",
                            "2", "--grace",  GRACE_S};
    size_t argc = 7;
    for (size_t i = 0; extra && extra[i] && argc < 31; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;

    int out[2];
    if (pipe(out) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        if (!getenv("HTTP_TEST_VERBOSE")) { /* the access log */
            int null = open("/dev/null", O_WRONLY);
            dup2(null, STDERR_FILENO);
            close(null);
        }
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);

    /* first line: "attention-server 1.0.0 listening on http://H:PORT (...)" */
    char line[512];
    size_t len = 0;
    double deadline = now_ms() + START_WAIT_MS;
    while (len < sizeof line - 1 && !memchr(line, '\n', len)) {
        struct pollfd p = {.fd = out[0], .events = POLLIN};
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        ssize_t got = read(out[0], line + len, sizeof line - 1 - len);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    line[len] = '\0';
    close(out[0]);
    const char *at = strstr(line, "listening on http://127.0.0.1:");
    if (!at) {
        fprintf(stderr, "no banner from %s, got: %s\n", bin, line);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    s->pid = pid;
    s->port = (unsigned)strtoul(at + strlen("listening on http://127.0.0.1:"),
                                NULL, 10);
    snprintf(s->base, sizeof s->base, "http://127.0.0.1:%u", s->port);
    return 0;
}

/* SIGTERM, then wait; returns the raw wait status, or -1 on a timeout (the
 * process is then killed). */
static int server_stop(server *s)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    double deadline = now_ms() + STOP_WAIT_MS;
    int status = -1;
    for (;;) {
        pid_t r = waitpid(s->pid, &status, WNOHANG);
        if (r == s->pid)
            break;
        if (r < 0 || now_ms() > deadline) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            status = -1;
            break;
        }
        sleep_ms(10);
    }
    s->pid = 0;
    return status;
}

static bool server_alive(const server *s)
{
    return s->pid > 0 && waitpid(s->pid, NULL, WNOHANG) == 0;
}

static int group_start(const char *const *extra)
{
    memset(&g_srv, 0, sizeof g_srv);
    return server_start(&g_srv, extra);
}

static int group_stop(void **state)
{
    (void)state;
    int status = server_stop(&g_srv);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "server did not exit 0 on SIGTERM (wait status %d)\n",
                status);
        return -1; /* cmocka reports a failed group teardown */
    }
    return 0;
}

/* ---- HTTP over libcurl ------------------------------------------------ */

typedef struct {
    char *data;
    size_t len;
} bytes;

static void bytes_append(bytes *b, const void *data, size_t len)
{
    char *grown = realloc(b->data, b->len + len + 1);
    if (!grown)
        abort();
    b->data = grown;
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

typedef struct {
    const char *method;       /* default GET, or POST when body is set */
    const char *path;         /* e.g. "/v1/attention"                   */
    const char *content_type; /* NULL: none at all                      */
    const char *body;         /* NULL: no body                          */
    size_t body_len;          /* 0: strlen(body)                        */
    const char *headers[4];   /* extra "Name: value" lines              */
    CURL *reuse;              /* a handle to keep alive, or NULL        */
    bool chunked;             /* send the body with chunked encoding    */
} http_request;

typedef struct {
    CURLcode rc;
    long status;
    long new_connections; /* CURLINFO_NUM_CONNECTS */
    bytes body;
    bytes headers; /* the last response's header block */
} http_response;

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

static http_response http(const http_request *rq)
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

static void response_free(http_response *r)
{
    free(r->body.data);
    free(r->headers.data);
    memset(r, 0, sizeof *r);
}

/* The value of header `name` in r (copied into out, trimmed), or NULL.
 * `nth` picks among repeated headers (0 = first). */
static const char *header_nth(const http_response *r, const char *name, int nth,
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

static const char *header(const http_response *r, const char *name, char *out,
                          size_t out_size)
{
    return header_nth(r, name, 0, out, out_size);
}

static int header_count(const http_response *r, const char *name)
{
    char ignored[8];
    int n = 0;
    while (header_nth(r, name, n, ignored, sizeof ignored))
        n++;
    return n;
}

/* Does the comma-separated list `list` hold `token` (case-insensitive)? */
static bool list_has(const char *list, const char *token)
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

static http_response post_json(const char *body)
{
    return http(&(http_request){.method = "POST",
                                .path = "/v1/attention",
                                .content_type = "application/json",
                                .body = body});
}

/* Lesson 001 with `changes` (a JSON object) merged over it; NULL values in
 * changes delete a field.  Caller frees. */
static char *lesson_with(const char *changes)
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

/* ---- assertions on responses ------------------------------------------ */

static void show(const http_response *r)
{
    print_error("HTTP %ld (curl: %s)\n%s%.*s\n", r->status,
                curl_easy_strerror(r->rc), r->headers.data,
                (int)(r->body.len > 2000 ? 2000 : r->body.len), r->body.data);
}

#define expect(cond, r)                                                        \
    do {                                                                       \
        if (!(cond)) {                                                         \
            show(r);                                                           \
            fail_msg("expected %s", #cond);                                    \
        }                                                                      \
    } while (0)

static void expect_status(const http_response *r, long status)
{
    if (r->rc != CURLE_OK || r->status != status) {
        show(r);
        fail_msg("expected HTTP %ld, got %ld (curl: %s)", status, r->status,
                 curl_easy_strerror(r->rc));
    }
}

static void expect_content_type(const http_response *r, const char *type)
{
    char value[256];
    if (!header(r, "Content-Type", value, sizeof value) ||
        strcmp(value, type) != 0) {
        show(r);
        fail_msg("expected Content-Type %s", type);
    }
}

/* Parses the body; fails the test if it is not JSON. Caller decrefs. */
static json_t *body_json(const http_response *r)
{
    json_error_t jerr;
    json_t *v =
        json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &jerr);
    if (!v) {
        show(r);
        fail_msg("body is not JSON: %s", jerr.text);
    }
    return v;
}

/* An RFC 9457 problem: status, Content-Type, `status`, `title`, `detail`,
 * `code`, and `pointer` (NULL: not checked).  Returns the detail (static
 * copy) for further checks. */
static const char *expect_problem(const http_response *r, long status,
                                  const char *code, const char *pointer)
{
    static char detail[1024];
    expect_status(r, status);
    expect_content_type(r, "application/problem+json");
    json_t *p = body_json(r);
    expect(json_is_object(p), r);
    expect(json_integer_value(json_object_get(p, "status")) == status, r);
    expect(json_string_length(json_object_get(p, "title")) > 0, r);
    expect(json_string_length(json_object_get(p, "detail")) > 0, r);
    const char *got = json_string_value(json_object_get(p, "code"));
    if (!got || strcmp(got, code) != 0) {
        show(r);
        fail_msg("expected code %s, got %s", code, got ? got : "(none)");
    }
    if (pointer) {
        const char *ptr = json_string_value(json_object_get(p, "pointer"));
        if (!ptr || strcmp(ptr, pointer) != 0) {
            show(r);
            fail_msg("expected pointer \"%s\", got %s%s%s", pointer,
                     ptr ? "\"" : "", ptr ? ptr : "(none)", ptr ? "\"" : "");
        }
    }
    snprintf(detail, sizeof detail, "%s",
             json_string_value(json_object_get(p, "detail")));
    json_decref(p);
    return detail;
}

/* A problem for a POST of `body` to /v1/attention. */
static void expect_rejected(const char *body, long status, const char *code,
                            const char *pointer)
{
    http_response r = post_json(body);
    expect_problem(&r, status, code, pointer);
    response_free(&r);
}

static void expect_rejected_change(const char *changes, long status,
                                   const char *code, const char *pointer)
{
    char *body = lesson_with(changes);
    expect_rejected(body, status, code, pointer);
    free(body);
}

/* Asserts that a JSON value is an array of integers equal to dims. */
static void expect_shape(json_t *v, const size_t *dims, size_t rank,
                         const char *what)
{
    if (!json_is_array(v) || json_array_size(v) != rank)
        fail_msg("shape of %s: not an array of %zu", what, rank);
    for (size_t i = 0; i < rank; i++)
        if (json_integer_value(json_array_get(v, i)) != (json_int_t)dims[i])
            fail_msg("shape of %s: dim %zu is %lld, expected %zu", what, i,
                     (long long)json_integer_value(json_array_get(v, i)),
                     dims[i]);
}

/* Asserts that v is a rows×cols matrix of numbers within tol of expected. */
static void expect_matrix(json_t *v, const double *expected, size_t rows,
                          size_t cols, double tol, const char *what)
{
    if (!json_is_array(v) || json_array_size(v) != rows)
        fail_msg("%s: expected %zu rows", what, rows);
    for (size_t i = 0; i < rows; i++) {
        json_t *row = json_array_get(v, i);
        if (!json_is_array(row) || json_array_size(row) != cols)
            fail_msg("%s: row %zu is not %zu numbers", what, i, cols);
        for (size_t j = 0; j < cols; j++) {
            json_t *x = json_array_get(row, j);
            if (!json_is_number(x))
                fail_msg("%s[%zu][%zu] is not a number", what, i, j);
            double got = json_number_value(x), want = expected[i * cols + j];
            if (!(fabs(got - want) <= tol))
                fail_msg("%s[%zu][%zu] = %.17g, expected %.17g (tol %g)", what,
                         i, j, got, want, tol);
        }
    }
}

/* ---- raw sockets, for what libcurl will not send ---------------------- */

static int raw_connect(void)
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
static bool raw_send(int fd, const char *data, size_t len)
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
static long raw_read_reply(int fd, bytes *out, int wait_ms, bool *closed)
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
static http_response raw_response(const bytes *raw, long status)
{
    http_response r = {.rc = CURLE_OK, .status = status};
    const char *head_end = strstr(raw->data, "\r\n\r\n");
    size_t head_len = head_end ? (size_t)(head_end - raw->data) + 4 : raw->len;
    bytes_append(&r.headers, raw->data, head_len);
    bytes_append(&r.body, raw->data + head_len, raw->len - head_len);
    return r;
}

/* Sends a raw request and returns its reply as an http_response. */
static http_response raw_exchange(const char *request, bool *closed)
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

/* ---- request bodies for load ------------------------------------------ */

/* x (n×d) and d×d weights of deterministic small numbers in [-0.5, 0.5]. */
static char *heavy_body(size_t n, size_t d)
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

/* ======================================================================= */
/* group "api": POST /v1/attention, default limits                          */
/* ======================================================================= */

static int api_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void lesson_001_default_returns_output_and_weights(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    expect_content_type(&r, "application/json");
    json_t *v = body_json(&r);
    expect_matrix(json_array_get(json_object_get(v, "weights"), 0),
                  &LESSON_001_WEIGHTS[0][0], 3, 3, TOL_F64, "weights[0]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F64, "output");
    assert_int_equal(json_array_size(json_object_get(v, "weights")), 1);
    /* only the default tensors */
    const char *absent[] = {
        "q", "k", "v", "scores", "scaled_scores", "head_outputs", "concat"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        if (json_object_get(v, absent[i]))
            fail_msg("%s returned without being asked for", absent[i]);
    json_decref(v);
    response_free(&r);
}

static void lesson_001_metadata_and_shapes(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_int_equal(json_integer_value(json_object_get(v, "num_heads")), 1);
    assert_int_equal(json_integer_value(json_object_get(v, "head_dim")), 4);
    assert_int_equal(json_integer_value(json_object_get(v, "value_dim")), 4);
    assert_true(json_number_value(json_object_get(v, "scale")) == 0.5);
    assert_string_equal(json_string_value(json_object_get(v, "dtype")),
                        "float64");
    json_t *shapes = json_object_get(v, "shapes");
    struct {
        const char *name;
        size_t rank, dims[3];
    } want[] = {
        {"q", 3, {1, 3, 4}},
        {"k", 3, {1, 3, 4}},
        {"v", 3, {1, 3, 4}},
        {"scores", 3, {1, 3, 3}},
        {"scaled_scores", 3, {1, 3, 3}},
        {"weights", 3, {1, 3, 3}},
        {"head_outputs", 3, {1, 3, 4}},
        {"concat", 2, {3, 4}},
        {"output", 2, {3, 4}},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        expect_shape(json_object_get(shapes, want[i].name), want[i].dims,
                     want[i].rank, want[i].name);
    json_decref(v);
    response_free(&r);
}

static void weights_rows_sum_to_one(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    json_t *w = json_array_get(json_object_get(v, "weights"), 0);
    for (size_t i = 0; i < 3; i++) {
        double sum = 0;
        for (size_t j = 0; j < 3; j++)
            sum += json_number_value(json_array_get(json_array_get(w, i), j));
        assert_true(fabs(sum - 1.0) <= TOL_F64);
    }
    json_decref(v);
    response_free(&r);
}

static void return_selects_exactly_the_named_tensors(void **state)
{
    (void)state;
    char *body = lesson_with("{\"return\":[\"q\",\"scores\"]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    expect_matrix(json_array_get(json_object_get(v, "q"), 0),
                  &LESSON_001_Q[0][0], 3, 4, TOL_F64, "q[0]");
    expect_matrix(json_array_get(json_object_get(v, "scores"), 0),
                  &LESSON_001_SCORES[0][0], 3, 3, TOL_F64, "scores[0]");
    assert_null(json_object_get(v, "weights"));
    assert_null(json_object_get(v, "output"));
    /* shapes still describe every stage */
    size_t out_dims[2] = {3, 4};
    expect_shape(json_object_get(json_object_get(v, "shapes"), "output"),
                 out_dims, 2, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void scaled_scores_use_one_over_sqrt_dk(void **state)
{
    (void)state;
    char *body = lesson_with("{\"return\":[\"scaled_scores\"]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    double scaled[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            scaled[i][j] = LESSON_001_SCORES[i][j] / 2.0; /* √d_k = 2 */
    expect_matrix(json_array_get(json_object_get(v, "scaled_scores"), 0),
                  &scaled[0][0], 3, 3, TOL_F64, "scaled_scores[0]");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void per_head_stack_equals_single_head_matrix(void **state)
{
    (void)state;
    /* 3-D weights h×d×d_k with h = 1: the same numbers as lesson 001 */
    char *body = lesson_with(
        "{\"w_q\":[[[0.1,0.2,0.0,0.0],[0.0,0.1,0.3,0.0],[0.1,0.0,0.0,0.2],"
        "[0.0,0.0,0.2,0.3]]],"
        "\"w_k\":[[[0.2,0.0,0.1,0.0],[0.0,0.1,0.0,0.3],[0.1,0.0,0.2,0.0],"
        "[0.0,0.2,0.0,0.1]]],"
        "\"w_v\":[[[0.0,0.1,0.0,0.2],[0.2,0.0,0.2,0.0],[0.0,0.3,0.1,0.0],"
        "[0.1,0.0,0.0,0.3]]]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    expect_matrix(json_array_get(json_object_get(v, "weights"), 0),
                  &LESSON_001_WEIGHTS[0][0], 3, 3, TOL_F64, "weights[0]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void two_heads_by_reshape_match_numpy(void **state)
{
    (void)state;
    char *body = lesson_with("{\"num_heads\":2}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_int_equal(json_integer_value(json_object_get(v, "num_heads")), 2);
    assert_int_equal(json_integer_value(json_object_get(v, "head_dim")), 2);
    assert_true(json_number_value(json_object_get(v, "scale")) ==
                1.0 / sqrt(2.0));
    size_t w_dims[3] = {2, 3, 3}, q_dims[3] = {2, 3, 2};
    json_t *shapes = json_object_get(v, "shapes");
    expect_shape(json_object_get(shapes, "weights"), w_dims, 3, "weights");
    expect_shape(json_object_get(shapes, "q"), q_dims, 3, "q");
    expect_matrix(json_array_get(json_object_get(v, "weights"), 1),
                  &LESSON_001_H2_WEIGHTS_1[0][0], 3, 3, TOL_F64, "weights[1]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_H2_OUTPUT[0][0], 3,
                  4, TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void two_heads_as_3d_stacks_equal_reshape(void **state)
{
    (void)state;
    /* head i = columns 2i, 2i+1 of each lesson matrix */
    char *body =
        lesson_with("{\"w_q\":[[[0.1,0.2],[0.0,0.1],[0.1,0.0],[0.0,0.0]],"
                    "[[0.0,0.0],[0.3,0.0],[0.0,0.2],[0.2,0.3]]],"
                    "\"w_k\":[[[0.2,0.0],[0.0,0.1],[0.1,0.0],[0.0,0.2]],"
                    "[[0.1,0.0],[0.0,0.3],[0.2,0.0],[0.0,0.1]]],"
                    "\"w_v\":[[[0.0,0.1],[0.2,0.0],[0.0,0.3],[0.1,0.0]],"
                    "[[0.0,0.2],[0.2,0.0],[0.1,0.0],[0.0,0.3]]]}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_int_equal(json_integer_value(json_object_get(v, "num_heads")), 2);
    expect_matrix(json_array_get(json_object_get(v, "weights"), 1),
                  &LESSON_001_H2_WEIGHTS_1[0][0], 3, 3, TOL_F64, "weights[1]");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_H2_OUTPUT[0][0], 3,
                  4, TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    free(body);
}

static void float32_dtype_is_close_to_float64(void **state)
{
    (void)state;
    char *body = lesson_with("{\"dtype\":\"float32\"}");
    http_response r = post_json(body);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(v, "dtype")),
                        "float32");
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F32, "output");
    /* float32 numbers are written as the shortest text of the float32
     * (at most 9 significant digits), not as a widened float64 */
    const char *first = strstr(r.body.data, "\"output\":[[");
    assert_non_null(first);
    first += strlen("\"output\":[[");
    size_t digits = 0;
    for (const char *c = first; *c != ',' && *c != ']'; c++)
        digits += isdigit((unsigned char)*c) != 0;
    if (digits > 9 + 1) /* + the leading 0 of 0.xxx */
        fail_msg("float32 output written with %zu digits: %.30s", digits,
                 first);
    json_decref(v);
    response_free(&r);
    free(body);
}

/* ---- num_heads -------------------------------------------------------- */

static void num_heads_zero_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":0}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_negative_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":-2}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_fractional_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":1.5}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_not_dividing_width_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":3}", 400, "invalid_num_heads",
                           "/num_heads");
}

static void num_heads_not_matching_stack_depth_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change(
        "{\"num_heads\":2,"
        "\"w_q\":[[[0.1,0.2,0.0,0.0],[0.0,0.1,0.3,0.0],[0.1,0.0,0.0,0.2],"
        "[0.0,0.0,0.2,0.3]]],"
        "\"w_k\":[[[0.2,0.0,0.1,0.0],[0.0,0.1,0.0,0.3],[0.1,0.0,0.2,0.0],"
        "[0.0,0.2,0.0,0.1]]],"
        "\"w_v\":[[[0.0,0.1,0.0,0.2],[0.2,0.0,0.2,0.0],[0.0,0.3,0.1,0.0],"
        "[0.1,0.0,0.0,0.3]]]}",
        400, "invalid_num_heads", "/num_heads");
}

static void num_heads_as_string_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"num_heads\":\"2\"}", 400, "wrong_type",
                           "/num_heads");
}

/* ---- shapes and types ------------------------------------------------- */

static void ragged_row_points_at_the_row(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[[1,0,1,0],[0,2,0],[1,1,1,1]]}", 400,
                           "ragged_array", "/x/1");
}

static void empty_matrix_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[]}", 400, "empty_array", "/x");
}

static void empty_row_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[[]]}", 400, "empty_array", "/x/0");
}

static void wrong_nesting_depth_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[[[1,0,1,0]]]}", 400, "wrong_rank",
                           "/x/0/0");
}

static void weight_rows_must_match_x_width(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_q\":[[0.1,0.2,0,0],[0,0.1,0.3,0],"
                           "[0.1,0,0,0.2]]}",
                           400, "shape_mismatch", "/w_q");
}

static void key_width_must_match_query_width(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_k\":[[0.2,0],[0,0.1],[0.1,0],[0,0.2]]}", 400,
                           "shape_mismatch", "/w_k");
}

static void unknown_field_is_rejected_strictly(void **state)
{
    (void)state;
    /* the typo W_q next to a valid w_q must not be silently ignored */
    expect_rejected_change("{\"W_q\":[[1]]}", 400, "unknown_field", "/W_q");
}

static void missing_required_field_is_named(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_k\":null}", 400, "missing_field", "/w_k");
}

static void missing_x_is_named(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":null}", 400, "missing_field", "/x");
}

static void string_where_number_belongs_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":[[1,\"0\",1,0],[0,2,0,2],[1,1,1,1]]}", 400,
                           "wrong_type", "/x/0/1");
}

static void null_where_number_belongs_is_wrong_type(void **state)
{
    (void)state;
    /* JSON null inside a tensor (lesson_with deletes only top-level nulls) */
    expect_rejected("{\"x\":[[1,0,1,0],[0,2,0,2],[1,1,null,1]],"
                    "\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]]}",
                    400, "wrong_type", "/x/2/2");
}

static void boolean_where_number_belongs_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"w_v\":[[0,0.1,0,0.2],[0.2,true,0.2,0],"
                           "[0,0.3,0.1,0],[0.1,0,0,0.3]]}",
                           400, "wrong_type", "/w_v/1/1");
}

static void scalar_where_matrix_belongs_is_wrong_type(void **state)
{
    (void)state;
    expect_rejected_change("{\"x\":5}", 400, "wrong_type", "/x");
}

static void unknown_dtype_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"dtype\":\"float16\"}", 400, "invalid_dtype",
                           "/dtype");
}

static void unknown_return_name_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"return\":[\"output\",\"attention\"]}", 400,
                           "invalid_return", "/return/1");
}

static void zero_scale_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"scale\":0}", 400, "invalid_scale", "/scale");
}

static void negative_scale_is_rejected(void **state)
{
    (void)state;
    expect_rejected_change("{\"scale\":-0.5}", 400, "invalid_scale", "/scale");
}

static void float32_overflow_is_number_out_of_range(void **state)
{
    (void)state;
    expect_rejected_change("{\"dtype\":\"float32\","
                           "\"x\":[[1,0,1,0],[0,2,0,1e39],[1,1,1,1]]}",
                           400, "number_out_of_range", "/x/1/3");
}

/* ---- syntax ----------------------------------------------------------- */

static void empty_body_is_rejected(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = ""});
    expect_problem(&r, 400, "invalid_json", NULL);
    response_free(&r);
}

static void malformed_json_gives_line_and_column(void **state)
{
    (void)state;
    http_response r = post_json("{\"x\": [[1, 2],\n  [3, }");
    const char *detail = expect_problem(&r, 400, "invalid_json", NULL);
    if (!strstr(detail, "line 2") || !strstr(detail, "column"))
        fail_msg("detail lacks line 2 and a column: %s", detail);
    response_free(&r);
}

static void trailing_garbage_is_rejected(void **state)
{
    (void)state;
    bytes body = {0};
    bytes_append(&body, LESSON_001, strlen(LESSON_001));
    bytes_append(&body, " {}", 3);
    expect_rejected(body.data, 400, "invalid_json", NULL);
    free(body.data);
}

static void non_object_body_is_rejected(void **state)
{
    (void)state;
    expect_rejected("[[1,2],[3,4]]", 400, "invalid_body", "");
}

static void duplicate_keys_are_rejected(void **state)
{
    (void)state;
    /* the second x would silently win in a lenient parser */
    bytes body = {0};
    bytes_append(&body, "{\"x\":[[9,9,9,9]],", 17);
    bytes_append(&body, LESSON_001 + 1, strlen(LESSON_001) - 1);
    http_response r = post_json(body.data);
    const char *detail = expect_problem(&r, 400, "invalid_json", NULL);
    if (!strstr(detail, "duplicate"))
        fail_msg("detail does not say duplicate: %s", detail);
    response_free(&r);
    free(body.data);
}

static void invalid_utf8_is_rejected(void **state)
{
    (void)state;
    expect_rejected("{\"tokens\":[\"a\xff\xfe\",\"b\",\"c\"],"
                    "\"x\":[[1]],\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]]}",
                    400, "invalid_json", NULL);
}

static void nesting_far_deeper_than_the_schema_is_rejected(void **state)
{
    (void)state;
    enum { DEPTH = 100000 }; /* far past jansson's 2048 and our rank 3 */
    char *body = malloc(2 * DEPTH + 16);
    assert_non_null(body);
    size_t len = 0;
    len += (size_t)sprintf(body, "{\"x\":");
    memset(body + len, '[', DEPTH);
    len += DEPTH;
    memset(body + len, ']', DEPTH);
    len += DEPTH;
    body[len++] = '}';
    body[len] = '\0';
    http_response r = post_json(body);
    expect_status(&r, 400);
    expect_content_type(&r, "application/problem+json");
    response_free(&r);
    free(body);
    assert_true(server_alive(&g_srv));
}

/* ---- results ---------------------------------------------------------- */

static void overflowing_scores_are_422_not_infinity(void **state)
{
    (void)state;
    /* q·k ≈ 1e199 · 1e199 overflows float64 */
    char *body = lesson_with(
        "{\"x\":[[1e200,0,1e200,0],[0,2e200,0,2e200],[1e200,1e200,1e200,"
        "1e200]]}");
    http_response r = post_json(body);
    expect_problem(&r, 422, "non_finite_result", NULL);
    expect(!strstr(r.body.data, "Infinity") && !strstr(r.body.data, "NaN"), &r);
    response_free(&r);
    free(body);
}

static void overflowing_float32_scores_are_422(void **state)
{
    (void)state;
    /* 1e30 fits float32, its squared projections do not */
    char *body = lesson_with("{\"dtype\":\"float32\","
                             "\"x\":[[1e30,0,1e30,0],[0,2e30,0,2e30],"
                             "[1e30,1e30,1e30,1e30]]}");
    http_response r = post_json(body);
    expect_problem(&r, 422, "non_finite_result", NULL);
    response_free(&r);
    free(body);
}

/* ======================================================================= */
/* group "protocol": routes, headers, connections                           */
/* ======================================================================= */

static int protocol_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void unknown_path_is_json_404(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/v2/nothing"});
    expect_problem(&r, 404, "not_found", NULL);
    response_free(&r);
}

static void post_to_unknown_path_is_json_404(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention/extra",
                                           .content_type = "application/json",
                                           .body = LESSON_001});
    expect_problem(&r, 404, "not_found", NULL);
    response_free(&r);
}

static void get_on_attention_is_405_with_allow(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/v1/attention"});
    expect_problem(&r, 405, "method_not_allowed", NULL);
    char allow[128];
    expect(header(&r, "Allow", allow, sizeof allow), &r);
    assert_true(list_has(allow, "POST"));
    assert_false(list_has(allow, "GET"));
    response_free(&r);
}

static void delete_on_healthz_is_405_with_allow(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "DELETE", .path = "/healthz"});
    expect_problem(&r, 405, "method_not_allowed", NULL);
    char allow[128];
    expect(header(&r, "Allow", allow, sizeof allow), &r);
    assert_true(list_has(allow, "GET"));
    assert_false(list_has(allow, "DELETE"));
    response_free(&r);
}

static void wrong_content_type_is_415(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "text/plain",
                                           .body = LESSON_001});
    expect_problem(&r, 415, "unsupported_media_type", NULL);
    response_free(&r);
}

static void missing_content_type_is_415(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .method = "POST", .path = "/v1/attention", .body = LESSON_001});
    expect_problem(&r, 415, "unsupported_media_type", NULL);
    response_free(&r);
}

static void json_content_type_with_charset_is_accepted(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json; charset=utf-8",
                             .body = LESSON_001});
    expect_status(&r, 200);
    response_free(&r);
}

/* SO_REUSEPORT once let a second server bind a port already served and take
 * a share of its connections, silently (found when two builds answered one
 * benchmark): it must fail to start instead. */
static void a_second_server_on_the_same_port_refuses_to_start(void **state)
{
    (void)state;
    char listen[32];
    snprintf(listen, sizeof listen, "127.0.0.1:%u", g_srv.port);
    const char *bin = getenv("ATTENTION_SERVER");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execl(bin, bin, "--listen", listen, "--threads", "1", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    double deadline = now_ms() + START_WAIT_MS;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            fail_msg("a second server on port %u kept running", g_srv.port);
        }
        sleep_ms(10);
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    http_response r = http(&(http_request){.path = "/healthz"});
    expect_status(&r, 200);
    response_free(&r);
}

static void healthz_is_ok(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/healthz"});
    expect_status(&r, 200);
    expect_content_type(&r, "application/json");
    json_t *v = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(v, "status")), "ok");
    json_decref(v);
    response_free(&r);
}

static void openapi_yaml_is_served(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/openapi.yaml"});
    expect_status(&r, 200);
    expect_content_type(&r, "application/yaml");
    expect(strncmp(r.body.data, "openapi: 3", 10) == 0, &r);
    expect(strstr(r.body.data, "/v1/attention") != NULL, &r);
    response_free(&r);
}

static void options_preflight_is_204_with_cors(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .method = "OPTIONS",
        .path = "/v1/attention",
        .headers = {"Origin: http://localhost:5173",
                    "Access-Control-Request-Method: POST",
                    "Access-Control-Request-Headers: content-type"}});
    expect_status(&r, 204);
    expect(r.body.len == 0, &r);
    char value[256];
    expect(header(&r, "Access-Control-Allow-Origin", value, sizeof value), &r);
    expect(strcmp(value, "*") == 0 ||
               strcmp(value, "http://localhost:5173") == 0,
           &r);
    expect(header(&r, "Access-Control-Allow-Methods", value, sizeof value) &&
               list_has(value, "POST"),
           &r);
    /* application/json is not a CORS-safelisted type: without this the
     * browser never sends the POST */
    expect(header(&r, "Access-Control-Allow-Headers", value, sizeof value) &&
               list_has(value, "Content-Type"),
           &r);
    response_free(&r);
}

static void cors_origin_on_actual_response(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json",
                             .body = LESSON_001,
                             .headers = {"Origin: http://localhost:5173"}});
    expect_status(&r, 200);
    char value[256];
    expect(header(&r, "Access-Control-Allow-Origin", value, sizeof value), &r);
    response_free(&r);
}

static void well_formed_request_id_is_echoed(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .path = "/healthz", .headers = {"X-Request-ID: req-42_a.B"}});
    expect_status(&r, 200);
    char id[128];
    expect(header(&r, "X-Request-ID", id, sizeof id), &r);
    assert_string_equal(id, "req-42_a.B");
    assert_int_equal(header_count(&r, "X-Request-ID"), 1);
    response_free(&r);

    r = post_json("{");
    char id2[128];
    expect(header(&r, "X-Request-ID", id2, sizeof id2), &r); /* errors too */
    response_free(&r);
}

static bool id_is_token(const char *id)
{
    if (!*id)
        return false;
    for (const char *c = id; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("-_.", *c))
            return false;
    return true;
}

static void malformed_request_id_is_replaced(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .path = "/healthz", .headers = {"X-Request-ID: <script>x</script>"}});
    expect_status(&r, 200);
    char id[128];
    expect(header(&r, "X-Request-ID", id, sizeof id), &r);
    assert_string_not_equal(id, "<script>x</script>");
    assert_true(id_is_token(id));
    response_free(&r);
}

static void missing_request_id_is_generated_uniquely(void **state)
{
    (void)state;
    http_response a = http(&(http_request){.path = "/healthz"});
    http_response b = http(&(http_request){.path = "/healthz"});
    char id_a[128], id_b[128];
    expect(header(&a, "X-Request-ID", id_a, sizeof id_a), &a);
    expect(header(&b, "X-Request-ID", id_b, sizeof id_b), &b);
    assert_true(id_is_token(id_a));
    assert_string_not_equal(id_a, id_b);
    response_free(&a);
    response_free(&b);
}

static void keep_alive_reuses_one_connection(void **state)
{
    (void)state;
    CURL *h = curl_easy_init();
    /* successes and answered errors alike keep the connection */
    const http_request rqs[] = {
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "application/json",
         .body = LESSON_001},
        {.path = "/healthz"},
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "application/json",
         .body = "{\"x\":1}"},
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "text/plain",
         .body = LESSON_001},
        {.path = "/nowhere"},
        {.method = "POST",
         .path = "/v1/attention",
         .content_type = "application/json",
         .body = LESSON_001},
    };
    const long want[] = {200, 200, 400, 415, 404, 200};
    for (size_t i = 0; i < sizeof rqs / sizeof *rqs; i++) {
        http_request rq = rqs[i];
        rq.reuse = h;
        http_response r = http(&rq);
        expect_status(&r, want[i]);
        if (r.new_connections != (i == 0 ? 1 : 0)) {
            show(&r);
            fail_msg("request %zu opened %ld new connections", i,
                     r.new_connections);
        }
        response_free(&r);
    }
    curl_easy_cleanup(h);
}

static void head_healthz_has_no_body(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "HEAD", .path = "/healthz"});
    expect_status(&r, 200);
    assert_int_equal(r.body.len, 0);
    response_free(&r);
}

static void huge_headers_are_431(void **state)
{
    (void)state;
    char *line = malloc(HUGE_HEADER_BYTES + 32);
    assert_non_null(line);
    strcpy(line, "X-Padding: ");
    memset(line + strlen(line), 'a', HUGE_HEADER_BYTES);
    line[11 + HUGE_HEADER_BYTES] = '\0';
    http_response r =
        http(&(http_request){.path = "/healthz", .headers = {line}});
    expect_problem(&r, 431, CODE_HEADERS_TOO_LARGE, NULL);
    response_free(&r);
    free(line);
    assert_true(server_alive(&g_srv));
}

static void duplicate_content_length_is_400(void **state)
{
    (void)state;
    bool closed;
    http_response r = raw_exchange("POST /v1/attention HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\n"
                                   "Content-Type: application/json\r\n"
                                   "Content-Length: 2\r\n"
                                   "Content-Length: 2\r\n"
                                   "\r\n"
                                   "{}",
                                   &closed);
    expect_problem(&r, 400, CODE_BAD_FRAMING, NULL);
    response_free(&r);
}

static void conflicting_content_length_is_400(void **state)
{
    (void)state;
    bool closed;
    /* request smuggling shape: which length frames the next request? */
    http_response r = raw_exchange("POST /v1/attention HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\n"
                                   "Content-Type: application/json\r\n"
                                   "Content-Length: 2\r\n"
                                   "Content-Length: 40\r\n"
                                   "\r\n"
                                   "{}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
                                   &closed);
    expect_problem(&r, 400, CODE_BAD_FRAMING, NULL);
    expect(closed, &r); /* the framing is unknown: the connection must end */
    response_free(&r);
}

static void content_length_with_chunked_is_400(void **state)
{
    (void)state;
    bool closed;
    http_response r = raw_exchange("POST /v1/attention HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\n"
                                   "Content-Type: application/json\r\n"
                                   "Content-Length: 7\r\n"
                                   "Transfer-Encoding: chunked\r\n"
                                   "\r\n"
                                   "2\r\n{}\r\n0\r\n\r\n",
                                   &closed);
    expect_problem(&r, 400, CODE_BAD_FRAMING, NULL);
    expect(closed, &r);
    response_free(&r);
}

static void idle_half_request_does_not_block_others(void **state)
{
    (void)state;
    int fd = raw_connect();
    assert_true(raw_send(fd, "POST /v1/attention HTTP/1.1\r\nHost: x\r\n", 38));
    double start = now_ms();
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    assert_true(now_ms() - start < 1000.0);
    response_free(&r);
    close(fd);
}

/* ======================================================================= */
/* group "limits": --max-body 2048                                          */
/* ======================================================================= */

static int limits_setup(void **state)
{
    (void)state;
    char max_body[32];
    snprintf(max_body, sizeof max_body, "%d", SMALL_MAX_BODY);
    const char *extra[] = {"--max-body", max_body, NULL};
    return group_start(extra);
}

static char *oversized_body(void)
{
    /* valid JSON, 2× the limit: whitespace padding inside the object */
    size_t len = 2 * SMALL_MAX_BODY;
    char *body = malloc(len + 1);
    assert_non_null(body);
    memset(body, ' ', len);
    memcpy(body, LESSON_001, strlen(LESSON_001) - 1);
    body[len - 1] = '}';
    body[len] = '\0';
    return body;
}

static void body_within_max_body_is_served(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    response_free(&r);
}

static void content_length_over_max_body_is_413_before_the_body(void **state)
{
    (void)state;
    /* only the headers are sent: the answer must not wait for the body */
    char request[256];
    snprintf(request, sizeof request,
             "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n",
             SMALL_MAX_BODY + 1);
    bool closed;
    http_response r = raw_exchange(request, &closed);
    expect_problem(&r, 413, "body_too_large", NULL);
    response_free(&r);
}

static void expect_continue_over_max_body_is_413(void **state)
{
    (void)state;
    char *body = oversized_body();
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json",
                             .body = body,
                             .headers = {"Expect: 100-continue"}});
    expect_problem(&r, 413, "body_too_large", NULL);
    response_free(&r);
    free(body);
}

static void chunked_body_over_max_body_is_413(void **state)
{
    (void)state;
    char *body = oversized_body();
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = body,
                                           .chunked = true});
    expect_problem(&r, 413, "body_too_large", NULL);
    response_free(&r);
    free(body);
}

static void chunked_body_within_max_body_is_served(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.method = "POST",
                                           .path = "/v1/attention",
                                           .content_type = "application/json",
                                           .body = LESSON_001,
                                           .chunked = true});
    expect_status(&r, 200);
    response_free(&r);
}

static void endless_chunked_body_is_cut_at_the_limit(void **state)
{
    (void)state;
    /* A client that never ends its chunked body.  Past the limit the server
     * must stop it: answer 413, or (libmicrohttpd cannot queue a reply in
     * the middle of an upload) hang up.  Reading on, or stopping to read but
     * holding the connection open, both fail. */
    int fd = raw_connect();
    const char *head = "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Content-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    assert_true(raw_send(fd, head, strlen(head)));
    char chunk[512 + 16];
    int len = snprintf(chunk, sizeof chunk, "200\r\n");
    memset(chunk + len, ' ', 512);
    memcpy(chunk + len + 512, "\r\n", 2);
    size_t chunk_len = (size_t)len + 514, sent = 0;
    int send_errno = 0;
    double deadline = now_ms() + RAW_REPLY_WAIT_MS;
    while (now_ms() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 0) == 1)
            break; /* a reply or a hang-up */
        if (!raw_send(fd, chunk, chunk_len)) {
            send_errno = errno;
            break;
        }
        sent += 512;
        sleep_ms(1); /* about 0.5 MB/s: a steady, endless client */
    }
    bytes raw = {0};
    bool closed;
    long status = raw_read_reply(fd, &raw, 500, &closed);
    close(fd);
    print_message("sent %zu body bytes (limit %d): status %ld, closed %d, "
                  "send error %s\n",
                  sent, SMALL_MAX_BODY, status, closed,
                  send_errno ? strerror(send_errno) : "none");
    if (status) {
        http_response r = raw_response(&raw, status);
        expect_problem(&r, 413, "body_too_large", NULL);
        response_free(&r);
    } else if (!closed && send_errno != EPIPE && send_errno != ECONNRESET) {
        fail_msg("no 413 and no hang-up: the server %s",
                 send_errno ? "stopped reading but holds the connection"
                            : "kept reading the body past its limit");
    }
    free(raw.data);
    assert_true(server_alive(&g_srv));
}

/* attention_in_flight_requests from GET /metrics, or -1. */
static long in_flight_requests(void)
{
    http_response r = http(&(http_request){.path = "/metrics"});
    static const char gauge[] = "\nattention_in_flight_requests ";
    const char *at = strstr(r.body.data, gauge);
    long n = r.status == 200 && at ? strtol(at + strlen(gauge), NULL, 10) : -1;
    response_free(&r);
    return n;
}

static void abandon_uploads(void)
{
    for (int i = 0; i < ABANDONED_UPLOADS; i++) {
        int fd = raw_connect();
        const char *head = "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           "Content-Type: application/json\r\n"
                           "Content-Length: 1000\r\n\r\n{\"x\":[[1,2],";
        assert_true(raw_send(fd, head, strlen(head)));
        if (i % 2) { /* half of them reset the connection outright */
            struct linger hard = {1, 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
        }
        close(fd);
    }
}

static void client_gone_mid_upload_is_released_at_once(void **state)
{
    (void)state;
    abandon_uploads();
    /* the only request left in flight is the /metrics request asking */
    double deadline = now_ms() + 1000;
    long n;
    while ((n = in_flight_requests()) != 1 && now_ms() < deadline)
        sleep_ms(20);
    if (n != 1)
        fail_msg("1 s after %d clients left mid-upload, %ld requests are still "
                 "in flight (expected 1: this /metrics request)",
                 ABANDONED_UPLOADS, n);
}

static void client_gone_mid_upload_leaves_server_serving(void **state)
{
    (void)state;
    abandon_uploads();
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    json_t *v = body_json(&r);
    expect_matrix(json_object_get(v, "output"), &LESSON_001_OUTPUT[0][0], 3, 4,
                  TOL_F64, "output");
    json_decref(v);
    response_free(&r);
    assert_true(server_alive(&g_srv));
}

/* ======================================================================= */
/* group "load": concurrent clients, clients that leave mid-compute         */
/* ======================================================================= */

static int load_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

typedef struct {
    int ok, wrong_status, wrong_body;
    long last_status;
} load_result;

static bool lesson_response_correct(const http_response *r)
{
    json_error_t jerr;
    json_t *v = json_loadb(r->body.data, r->body.len, 0, &jerr);
    if (!v)
        return false;
    bool ok = true;
    json_t *w = json_array_get(json_object_get(v, "weights"), 0);
    json_t *out = json_object_get(v, "output");
    for (size_t i = 0; i < 3 && ok; i++) {
        for (size_t j = 0; j < 3; j++)
            ok &= fabs(json_number_value(
                           json_array_get(json_array_get(w, i), j)) -
                       LESSON_001_WEIGHTS[i][j]) <= TOL_F64;
        for (size_t j = 0; j < 4; j++)
            ok &= fabs(json_number_value(
                           json_array_get(json_array_get(out, i), j)) -
                       LESSON_001_OUTPUT[i][j]) <= TOL_F64;
    }
    json_decref(v);
    return ok;
}

static void *load_client(void *arg)
{
    load_result *res = arg;
    CURL *h = curl_easy_init(); /* one keep-alive connection per client */
    for (int i = 0; i < LOAD_REQUESTS; i++) {
        http_response r = http(&(http_request){
            .method = "POST",
            .path = "/v1/attention",
            .content_type = "application/json",
            .body = LESSON_001,
            .reuse = h,
        });
        if (r.rc != CURLE_OK || r.status != 200) {
            res->wrong_status++;
            res->last_status = r.rc != CURLE_OK ? -(long)r.rc : r.status;
        } else if (!lesson_response_correct(&r)) {
            res->wrong_body++;
        } else {
            res->ok++;
        }
        response_free(&r);
    }
    curl_easy_cleanup(h);
    return NULL;
}

static void concurrent_clients_all_get_correct_answers(void **state)
{
    (void)state;
    pthread_t threads[LOAD_THREADS];
    load_result results[LOAD_THREADS] = {{0}};
    double start = now_ms();
    for (int i = 0; i < LOAD_THREADS; i++)
        assert_int_equal(
            pthread_create(&threads[i], NULL, load_client, &results[i]), 0);
    int ok = 0;
    for (int i = 0; i < LOAD_THREADS; i++) {
        pthread_join(threads[i], NULL);
        ok += results[i].ok;
        if (results[i].wrong_status || results[i].wrong_body)
            print_error("client %d: %d bad statuses (last %ld), %d wrong "
                        "bodies\n",
                        i, results[i].wrong_status, results[i].last_status,
                        results[i].wrong_body);
    }
    print_message("%d × %d requests in %.0f ms\n", LOAD_THREADS, LOAD_REQUESTS,
                  now_ms() - start);
    assert_int_equal(ok, LOAD_THREADS * LOAD_REQUESTS);
}

static void client_gone_mid_compute_leaves_server_serving(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    size_t len = strlen(body);
    for (int i = 0; i < 4; i++) {
        int fd = raw_connect();
        char head[256];
        snprintf(head, sizeof head,
                 "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "Content-Type: application/json\r\n"
                 "Content-Length: %zu\r\n\r\n",
                 len);
        assert_true(raw_send(fd, head, strlen(head)));
        assert_true(raw_send(fd, body, len));
        close(fd); /* gone while the job is queued or computing */
    }
    free(body);
    double start = now_ms();
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
    print_message("served after 4 abandoned heavy jobs in %.0f ms\n",
                  now_ms() - start);
    /* the abandoned jobs end (discarded or finished) and are released */
    double deadline = now_ms() + 3000;
    long n;
    while ((n = in_flight_requests()) != 1 && now_ms() < deadline)
        sleep_ms(20);
    if (n != 1)
        fail_msg("3 s after 4 clients left mid-compute, %ld requests are "
                 "still in flight (expected 1: this /metrics request)",
                 n);
    assert_true(server_alive(&g_srv));
}

static void client_gone_mid_compute_work_is_discarded(void **state)
{
    (void)state;
    /* 8 heavy jobs (about 0.9 s of work each here) on 2 workers, all
     * abandoned: if their work were carried on, a new client would wait
     * about 3.5 s behind it */
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    size_t len = strlen(body);
    for (int i = 0; i < DISCARDED_JOBS; i++) {
        int fd = raw_connect();
        char head[256];
        snprintf(head, sizeof head,
                 "POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "Content-Type: application/json\r\n"
                 "Content-Length: %zu\r\n\r\n",
                 len);
        assert_true(raw_send(fd, head, strlen(head)));
        assert_true(raw_send(fd, body, len));
        close(fd);
    }
    free(body);
    sleep_ms(300); /* the bodies are read and the jobs queued */
    double start = now_ms();
    http_response r = post_json(LESSON_001);
    double waited = now_ms() - start;
    expect_status(&r, 200);
    response_free(&r);
    print_message("a new client waited %.0f ms behind %d abandoned jobs\n",
                  waited, DISCARDED_JOBS);
    if (waited > DISCARDED_WAIT_MS)
        fail_msg("a new client waited %.0f ms (> %d ms): the work of clients "
                 "that left was not discarded",
                 waited, DISCARDED_WAIT_MS);
    /* let whatever still runs end before the next test */
    double deadline = now_ms() + 6000;
    while (in_flight_requests() != 1 && now_ms() < deadline)
        sleep_ms(50);
}

/* ======================================================================= */
/* group "auth": --api-key-file                                             */
/* ======================================================================= */

#define API_KEY "k3y-for-the-http-tests"

static int auth_setup(void **state)
{
    (void)state;
    snprintf(g_api_key_path, sizeof g_api_key_path,
             "/tmp/attention-test-key-XXXXXX");
    int fd = mkstemp(g_api_key_path);
    if (fd < 0)
        return -1;
    const char key[] = API_KEY "\n";
    if (write(fd, key, sizeof key - 1) != (ssize_t)(sizeof key - 1)) {
        close(fd);
        return -1;
    }
    close(fd);
    const char *extra[] = {"--api-key-file", g_api_key_path, NULL};
    return group_start(extra);
}

static int auth_teardown(void **state)
{
    unlink(g_api_key_path);
    return group_stop(state);
}

static void missing_token_is_401_with_challenge(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_problem(&r, 401, "unauthorized", NULL);
    char value[128];
    expect(header(&r, "WWW-Authenticate", value, sizeof value) &&
               strncmp(value, "Bearer", 6) == 0,
           &r);
    expect(!strstr(r.body.data, API_KEY), &r);
    response_free(&r);
}

static void wrong_token_is_401(void **state)
{
    (void)state;
    const char *tokens[] = {
        "Authorization: Bearer k3y-for-the-http-test",   /* a prefix */
        "Authorization: Bearer k3y-for-the-http-testsX", /* longer */
        "Authorization: Basic " API_KEY,                 /* wrong scheme */
    };
    for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
        http_response r =
            http(&(http_request){.method = "POST",
                                 .path = "/v1/attention",
                                 .content_type = "application/json",
                                 .body = LESSON_001,
                                 .headers = {tokens[i]}});
        expect_problem(&r, 401, "unauthorized", NULL);
        response_free(&r);
    }
}

static void right_token_is_served(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.method = "POST",
                             .path = "/v1/attention",
                             .content_type = "application/json",
                             .body = LESSON_001,
                             .headers = {"Authorization: Bearer " API_KEY}});
    expect_status(&r, 200);
    expect(lesson_response_correct(&r), &r);
    response_free(&r);
}

static void health_endpoints_stay_open(void **state)
{
    (void)state;
    const char *paths[] = {"/healthz", "/readyz"};
    for (size_t i = 0; i < 2; i++) {
        http_response r = http(&(http_request){.path = paths[i]});
        expect_status(&r, 200);
        response_free(&r);
    }
}

static void preflight_needs_no_token(void **state)
{
    (void)state;
    http_response r = http(
        &(http_request){.method = "OPTIONS",
                        .path = "/v1/attention",
                        .headers = {"Origin: http://localhost:5173",
                                    "Access-Control-Request-Method: POST"}});
    expect_status(&r, 204);
    response_free(&r);
}

/* ======================================================================= */
/* group "overload": --threads 1 --max-queue 1                              */
/* ======================================================================= */

static int overload_setup(void **state)
{
    (void)state;
    const char *extra[] = {"--threads", "1", "--max-queue", "1", NULL};
    return group_start(extra);
}

typedef struct {
    const char *body;
    long status;
    bool retry_after, problem_overloaded, correct;
    atomic_int *uploaded; /* bumped once the whole body is sent */
    bool counted;
} heavy_client;

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

static void *heavy_request(void *arg)
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

static void full_queue_is_503_with_retry_after(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    pthread_t threads[OVERLOAD_CLIENTS];
    heavy_client clients[OVERLOAD_CLIENTS];
    atomic_int uploaded = 0;
    for (int i = 0; i < OVERLOAD_CLIENTS; i++) {
        clients[i] = (heavy_client){.body = body, .uploaded = &uploaded};
        assert_int_equal(
            pthread_create(&threads[i], NULL, heavy_request, &clients[i]), 0);
    }
    int ok = 0, overloaded = 0;
    for (int i = 0; i < OVERLOAD_CLIENTS; i++) {
        pthread_join(threads[i], NULL);
        heavy_client *c = &clients[i];
        if (c->status == 200 && c->correct)
            ok++;
        else if (c->status == 503 && c->retry_after && c->problem_overloaded)
            overloaded++;
        else
            print_error("client %d: status %ld, retry-after %d\n", i, c->status,
                        c->retry_after);
    }
    free(body);
    print_message("%d served, %d turned away with 503\n", ok, overloaded);
    /* one worker + one queue slot: 8 simultaneous heavy jobs cannot all fit
     * (how many do depends on when the worker takes its first job), and
     * every client gets either its answer or a 503 to retry */
    assert_int_equal(ok + overloaded, OVERLOAD_CLIENTS);
    assert_true(overloaded >= 1);
    assert_true(ok >= 1);
}

static void served_again_after_overload(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_status(&r, 200);
    response_free(&r);
}

/* ======================================================================= */
/* group "budget": --memory-budget smaller than any request                 */
/* ======================================================================= */

static int budget_setup(void **state)
{
    (void)state;
    const char *extra[] = {"--memory-budget", "1024", NULL};
    return group_start(extra);
}

static void exhausted_memory_budget_is_503_with_retry_after(void **state)
{
    (void)state;
    http_response r = post_json(LESSON_001);
    expect_problem(&r, 503, "overloaded", NULL);
    char value[32];
    expect(header(&r, "Retry-After", value, sizeof value) && atoi(value) >= 1,
           &r);
    response_free(&r);
    r = http(&(http_request){.path = "/healthz"}); /* still alive */
    expect_status(&r, 200);
    response_free(&r);
}

/* ======================================================================= */
/* group "drain": SIGTERM while requests are in flight                      */
/* ======================================================================= */

static int drain_setup(void **state)
{
    (void)state;
    /* 4 heavy jobs on one worker take about 3.5 s here: a grace period
     * well beyond that, so that only a real failure to drain fails */
    const char *extra[] = {"--threads", "1", "--grace", "15", NULL};
    return group_start(extra);
}

static int drain_teardown(void **state)
{
    (void)state;
    if (g_srv.pid > 0) /* the test failed before stopping it */
        server_stop(&g_srv);
    return 0;
}

static void sigterm_finishes_in_flight_requests_and_exits_0(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    pthread_t threads[DRAIN_CLIENTS];
    heavy_client clients[DRAIN_CLIENTS];
    atomic_int uploaded = 0;
    for (int i = 0; i < DRAIN_CLIENTS; i++) {
        clients[i] = (heavy_client){.body = body, .uploaded = &uploaded};
        assert_int_equal(
            pthread_create(&threads[i], NULL, heavy_request, &clients[i]), 0);
    }
    /* every body is on the server (queued or computing): now SIGTERM */
    double deadline = now_ms() + START_WAIT_MS;
    while (atomic_load(&uploaded) < DRAIN_CLIENTS && now_ms() < deadline)
        sleep_ms(1);
    assert_int_equal(atomic_load(&uploaded), DRAIN_CLIENTS);
    sleep_ms(20);
    double signalled = now_ms();
    int status = server_stop(&g_srv);
    double stopped = now_ms();
    int ok = 0;
    for (int i = 0; i < DRAIN_CLIENTS; i++) {
        pthread_join(threads[i], NULL);
        if (clients[i].status == 200 && clients[i].correct)
            ok++;
        else
            print_error("in-flight client %d: status %ld\n", i,
                        clients[i].status);
    }
    free(body);
    print_message("drained %d in-flight requests in %.0f ms\n", ok,
                  stopped - signalled);
    assert_int_equal(ok, DRAIN_CLIENTS);
    assert_true(status != -1 && WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void second_sigterm_during_drain_still_exits_0(void **state)
{
    (void)state;
    /* a second signal (Ctrl-C twice, an impatient orchestrator) must not
     * kill the process half-way through its drain */
    assert_int_equal(
        group_start((const char *[]){"--threads", "1", "--grace", "15", NULL}),
        0);
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    pthread_t thread;
    atomic_int uploaded = 0;
    heavy_client client = {.body = body, .uploaded = &uploaded};
    assert_int_equal(pthread_create(&thread, NULL, heavy_request, &client), 0);
    double deadline = now_ms() + START_WAIT_MS;
    while (atomic_load(&uploaded) < 1 && now_ms() < deadline)
        sleep_ms(1);
    sleep_ms(20);
    kill(g_srv.pid, SIGTERM);
    sleep_ms(100);
    int status = server_stop(&g_srv); /* the second SIGTERM, then wait */
    pthread_join(thread, NULL);
    free(body);
    print_message("in-flight request: %ld; wait status %d\n", client.status,
                  status);
    if (status == -1 || !WIFEXITED(status))
        fail_msg("the server %s",
                 status != -1 && WIFSIGNALED(status)
                     ? "was killed by the second signal instead of draining"
                     : "did not exit");
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(client.status, 200);
}

/* ======================================================================= */

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    json_object_seed(0);
    if (getenv("HTTP_TEST_FILTER")) /* e.g. "*chunked*" */
        cmocka_set_test_filter(getenv("HTTP_TEST_FILTER"));
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return 1;

    const struct CMUnitTest api[] = {
        cmocka_unit_test(lesson_001_default_returns_output_and_weights),
        cmocka_unit_test(lesson_001_metadata_and_shapes),
        cmocka_unit_test(weights_rows_sum_to_one),
        cmocka_unit_test(return_selects_exactly_the_named_tensors),
        cmocka_unit_test(scaled_scores_use_one_over_sqrt_dk),
        cmocka_unit_test(per_head_stack_equals_single_head_matrix),
        cmocka_unit_test(two_heads_by_reshape_match_numpy),
        cmocka_unit_test(two_heads_as_3d_stacks_equal_reshape),
        cmocka_unit_test(float32_dtype_is_close_to_float64),
        cmocka_unit_test(num_heads_zero_is_rejected),
        cmocka_unit_test(num_heads_negative_is_rejected),
        cmocka_unit_test(num_heads_fractional_is_rejected),
        cmocka_unit_test(num_heads_not_dividing_width_is_rejected),
        cmocka_unit_test(num_heads_not_matching_stack_depth_is_rejected),
        cmocka_unit_test(num_heads_as_string_is_wrong_type),
        cmocka_unit_test(ragged_row_points_at_the_row),
        cmocka_unit_test(empty_matrix_is_rejected),
        cmocka_unit_test(empty_row_is_rejected),
        cmocka_unit_test(wrong_nesting_depth_is_rejected),
        cmocka_unit_test(weight_rows_must_match_x_width),
        cmocka_unit_test(key_width_must_match_query_width),
        cmocka_unit_test(unknown_field_is_rejected_strictly),
        cmocka_unit_test(missing_required_field_is_named),
        cmocka_unit_test(missing_x_is_named),
        cmocka_unit_test(string_where_number_belongs_is_wrong_type),
        cmocka_unit_test(null_where_number_belongs_is_wrong_type),
        cmocka_unit_test(boolean_where_number_belongs_is_wrong_type),
        cmocka_unit_test(scalar_where_matrix_belongs_is_wrong_type),
        cmocka_unit_test(unknown_dtype_is_rejected),
        cmocka_unit_test(unknown_return_name_is_rejected),
        cmocka_unit_test(zero_scale_is_rejected),
        cmocka_unit_test(negative_scale_is_rejected),
        cmocka_unit_test(float32_overflow_is_number_out_of_range),
        cmocka_unit_test(empty_body_is_rejected),
        cmocka_unit_test(malformed_json_gives_line_and_column),
        cmocka_unit_test(trailing_garbage_is_rejected),
        cmocka_unit_test(non_object_body_is_rejected),
        cmocka_unit_test(duplicate_keys_are_rejected),
        cmocka_unit_test(invalid_utf8_is_rejected),
        cmocka_unit_test(nesting_far_deeper_than_the_schema_is_rejected),
        cmocka_unit_test(overflowing_scores_are_422_not_infinity),
        cmocka_unit_test(overflowing_float32_scores_are_422),
    };
    const struct CMUnitTest protocol[] = {
        cmocka_unit_test(unknown_path_is_json_404),
        cmocka_unit_test(post_to_unknown_path_is_json_404),
        cmocka_unit_test(get_on_attention_is_405_with_allow),
        cmocka_unit_test(delete_on_healthz_is_405_with_allow),
        cmocka_unit_test(wrong_content_type_is_415),
        cmocka_unit_test(missing_content_type_is_415),
        cmocka_unit_test(json_content_type_with_charset_is_accepted),
        cmocka_unit_test(healthz_is_ok),
        cmocka_unit_test(head_healthz_has_no_body),
        cmocka_unit_test(openapi_yaml_is_served),
        cmocka_unit_test(options_preflight_is_204_with_cors),
        cmocka_unit_test(cors_origin_on_actual_response),
        cmocka_unit_test(well_formed_request_id_is_echoed),
        cmocka_unit_test(malformed_request_id_is_replaced),
        cmocka_unit_test(missing_request_id_is_generated_uniquely),
        cmocka_unit_test(keep_alive_reuses_one_connection),
        cmocka_unit_test(content_length_with_chunked_is_400),
        cmocka_unit_test(idle_half_request_does_not_block_others),
        cmocka_unit_test(huge_headers_are_431),
        cmocka_unit_test(duplicate_content_length_is_400),
        cmocka_unit_test(conflicting_content_length_is_400),
        cmocka_unit_test(a_second_server_on_the_same_port_refuses_to_start),
    };
    const struct CMUnitTest limits[] = {
        cmocka_unit_test(body_within_max_body_is_served),
        cmocka_unit_test(content_length_over_max_body_is_413_before_the_body),
        cmocka_unit_test(expect_continue_over_max_body_is_413),
        cmocka_unit_test(chunked_body_over_max_body_is_413),
        cmocka_unit_test(chunked_body_within_max_body_is_served),
        cmocka_unit_test(endless_chunked_body_is_cut_at_the_limit),
        cmocka_unit_test(client_gone_mid_upload_leaves_server_serving),
        cmocka_unit_test(client_gone_mid_upload_is_released_at_once),
    };
    const struct CMUnitTest load[] = {
        cmocka_unit_test(concurrent_clients_all_get_correct_answers),
        cmocka_unit_test(client_gone_mid_compute_leaves_server_serving),
        cmocka_unit_test(client_gone_mid_compute_work_is_discarded),
    };
    const struct CMUnitTest auth[] = {
        cmocka_unit_test(missing_token_is_401_with_challenge),
        cmocka_unit_test(wrong_token_is_401),
        cmocka_unit_test(right_token_is_served),
        cmocka_unit_test(health_endpoints_stay_open),
        cmocka_unit_test(preflight_needs_no_token),
    };
    const struct CMUnitTest overload[] = {
        cmocka_unit_test(full_queue_is_503_with_retry_after),
        cmocka_unit_test(served_again_after_overload),
    };
    const struct CMUnitTest budget[] = {
        cmocka_unit_test(exhausted_memory_budget_is_503_with_retry_after),
    };
    const struct CMUnitTest drain[] = {
        cmocka_unit_test(sigterm_finishes_in_flight_requests_and_exits_0),
        cmocka_unit_test_teardown(second_sigterm_during_drain_still_exits_0,
                                  drain_teardown),
    };

    int failed = 0;
    failed += cmocka_run_group_tests_name("api", api, api_setup, group_stop);
    failed += cmocka_run_group_tests_name("protocol", protocol, protocol_setup,
                                          group_stop);
    failed +=
        cmocka_run_group_tests_name("limits", limits, limits_setup, group_stop);
    failed += cmocka_run_group_tests_name("load", load, load_setup, group_stop);
    failed +=
        cmocka_run_group_tests_name("auth", auth, auth_setup, auth_teardown);
    failed += cmocka_run_group_tests_name("overload", overload, overload_setup,
                                          group_stop);
    failed +=
        cmocka_run_group_tests_name("budget", budget, budget_setup, group_stop);
    failed += cmocka_run_group_tests_name("drain", drain, drain_setup,
                                          drain_teardown);
    curl_global_cleanup();
    return failed ? 1 : 0;
}
