/*
 * harness.c - the shared half of the HTTP tests: the server process, libcurl
 * and raw-socket clients, and the assertions on responses (harness.h).
 */
#include "tests/http/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* Seconds any one libcurl transfer may take before the test fails instead of
 * hanging; a loaded 2-core machine answers these requests in milliseconds. */
#define REQUEST_TIMEOUT_S 20L
/* How long the server may take to exit on SIGTERM. */
#define STOP_WAIT_MS 15000
/* Seconds SIGTERM waits for in-flight requests (--grace): short, so that a
 * request the server forgot to release cannot stall the suite for the 20 s
 * default (the drain group sets its own). */
#define GRACE_S "5"

/* Lesson 001 (seeds/001_*.txt): X, W_q, W_k, W_v as the lesson writes them. */
const char LESSON_001[] =
    "{\"x\":[[1.0,0.0,1.0,0.0],[0.0,2.0,0.0,2.0],[1.0,1.0,1.0,1.0]],"
    "\"w_q\":[[0.1,0.2,0.0,0.0],[0.0,0.1,0.3,0.0],[0.1,0.0,0.0,0.2],"
    "[0.0,0.0,0.2,0.3]],"
    "\"w_k\":[[0.2,0.0,0.1,0.0],[0.0,0.1,0.0,0.3],[0.1,0.0,0.2,0.0],"
    "[0.0,0.2,0.0,0.1]],"
    "\"w_v\":[[0.0,0.1,0.0,0.2],[0.2,0.0,0.2,0.0],[0.0,0.3,0.1,0.0],"
    "[0.1,0.0,0.0,0.3]]}";

/* NumPy 1.24 on the lesson's code: softmax(Q Kᵀ / √4) and weights @ V. */
const double LESSON_001_WEIGHTS[3][3] = {
    {0.31359894363028484, 0.35006362369355476, 0.33633743267616034},
    {0.300872365693425, 0.3495638171532875, 0.3495638171532875},
    {0.297684785421469, 0.35817982316456765, 0.34413539141396327},
};
const double LESSON_001_OUTPUT[3][4] = {
    {0.310939404018981, 0.2599745505225781, 0.27228657364329856,
     0.4409266792802701},
    {0.31460743543795877, 0.260174473138685, 0.27478190857664375,
     0.4446946720073013},
    {0.3181485113229296, 0.2567280707341729, 0.27628102523216297,
     0.44651254669001605},
};

/* ---- the program ------------------------------------------------------ */

int harness_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    json_object_seed(0);
    if (getenv("HTTP_TEST_FILTER")) /* e.g. "*chunked*" */
        cmocka_set_test_filter(getenv("HTTP_TEST_FILTER"));
    return curl_global_init(CURL_GLOBAL_DEFAULT) == 0 ? 0 : -1;
}

void harness_done(void) { curl_global_cleanup(); }

/* ---- the server process ----------------------------------------------- */

server g_srv;

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts the binary with the common flags plus `extra` (NULL-terminated).
 * Returns 0 and fills s, or -1 with a message printed. */
int server_start(server *s, const char *const *extra)
{
    return server_start_logged(s, extra, NULL);
}

int server_start_logged(server *s, const char *const *extra,
                        const char *log_path)
{
    const char *bin = getenv("ATTENTION_SERVER");
    if (!bin || !*bin) {
        fprintf(stderr, "set ATTENTION_SERVER to the server binary\n");
        return -1;
    }
    const char *argv[32] = {bin, "--listen", "127.0.0.1:0", "--threads",
                            "2", "--grace",  GRACE_S};
    size_t argc = 7;
    const char *lane = getenv("HTTP_TEST_LANE");
    if (lane && *lane) { /* before `extra`, which may choose its own */
        argv[argc++] = "--fast-lane";
        argv[argc++] = lane;
    }
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
        if (log_path) { /* the access log, for the test to read */
            int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(log, STDERR_FILENO);
            close(log);
        } else if (!getenv("HTTP_TEST_VERBOSE")) {
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
int server_stop(server *s)
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

bool server_alive(const server *s)
{
    return s->pid > 0 && waitpid(s->pid, NULL, WNOHANG) == 0;
}

int group_start(const char *const *extra)
{
    memset(&g_srv, 0, sizeof g_srv);
    return server_start(&g_srv, extra);
}

int group_stop(void **state)
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

/* ---- assertions on responses ------------------------------------------ */

void show(const http_response *r)
{
    print_error("HTTP %ld (curl: %s)\n%s%.*s\n", r->status,
                curl_easy_strerror(r->rc), r->headers.data,
                (int)(r->body.len > 2000 ? 2000 : r->body.len), r->body.data);
}

void expect_status(const http_response *r, long status)
{
    if (r->rc != CURLE_OK || r->status != status) {
        show(r);
        fail_msg("expected HTTP %ld, got %ld (curl: %s)", status, r->status,
                 curl_easy_strerror(r->rc));
    }
}

void expect_content_type(const http_response *r, const char *type)
{
    char value[256];
    if (!header(r, "Content-Type", value, sizeof value) ||
        strcmp(value, type) != 0) {
        show(r);
        fail_msg("expected Content-Type %s", type);
    }
}

/* Parses the body; fails the test if it is not JSON. Caller decrefs. */
json_t *body_json(const http_response *r)
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
const char *expect_problem(const http_response *r, long status,
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
void expect_rejected(const char *body, long status, const char *code,
                     const char *pointer)
{
    http_response r = post_json(body);
    expect_problem(&r, status, code, pointer);
    response_free(&r);
}

void expect_rejected_change(const char *changes, long status, const char *code,
                            const char *pointer)
{
    char *body = lesson_with(changes);
    expect_rejected(body, status, code, pointer);
    free(body);
}

/* Asserts that a JSON value is an array of integers equal to dims. */
void expect_shape(json_t *v, const size_t *dims, size_t rank, const char *what)
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
void expect_matrix(json_t *v, const double *expected, size_t rows, size_t cols,
                   double tol, const char *what)
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

bool lesson_response_correct(const http_response *r)
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

/* ---- the access log --------------------------------------------------- */

json_t *access_log_lines(const char *path, bool whole)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    bytes text = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        bytes_append(&text, chunk, got);
    fclose(f);
    json_t *lines = json_array();
    char *at = text.data;
    while (at && *at) {
        char *end = strchr(at, '\n');
        if (!end && !whole)
            break; /* being written */
        if (!end)
            fail_msg("a line without its newline: %.200s", at);
        *end = '\0';
        json_error_t err;
        json_t *line = json_loads(at, 0, &err);
        if (!json_is_object(line))
            fail_msg("not a JSON object line: %.200s", at);
        json_array_append_new(lines, line);
        at = end + 1;
    }
    free(text.data);
    return lines;
}

long access_log_index(json_t *lines, const char *id)
{
    size_t i;
    json_t *line;
    json_array_foreach(lines, i, line)
    {
        const char *rid =
            json_string_value(json_object_get(line, "request_id"));
        if (rid && strcmp(rid, id) == 0)
            return (long)i;
    }
    return -1;
}

json_t *access_log_wait(const char *path, const char *id, double wait_ms)
{
    double deadline = now_ms() + wait_ms;
    for (;;) {
        json_t *lines = access_log_lines(path, false);
        long at = access_log_index(lines, id);
        json_t *line =
            at >= 0 ? json_incref(json_array_get(lines, (size_t)at)) : NULL;
        json_decref(lines);
        if (line || now_ms() > deadline)
            return line;
        sleep_ms(5);
    }
}
