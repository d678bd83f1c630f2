/*
 * harness.h - what the HTTP tests share: the real attention-server binary
 * driven over loopback with libcurl (and a raw socket where libcurl is too
 * polite to send what a hostile client sends).
 *
 * DESIGN
 * One file per behaviour (tests/http/test_*.c), each its own program with its
 * own cmocka group(s), all linked with this harness.  Each group starts
 * $ATTENTION_SERVER with `--listen 127.0.0.1:0 --threads 2` plus the flags the
 * group needs, reads the port from the first stdout line, and at teardown
 * sends SIGTERM and asserts a clean exit 0.
 * One test = one behaviour of the HTTP service (the attention endpoint, its
 * protocol, its limits, its overload and its shutdown), with exact
 * expectations: status, Content-Type, the problem's `code` and `pointer`, and
 * for 200s the numbers of lesson 001 (NumPy 1.24 on the lesson's own code)
 * within 1e-15.
 * Assertions run only on the main thread; worker threads of the load tests
 * count what they saw and the main thread asserts the counts.
 * The harness holds the machinery (the server, the clients, the assertions)
 * and the data more than one file shares; a constant or a helper about one
 * behaviour lives in that behaviour's file.
 *
 * Environment: ATTENTION_SERVER (the binary, required), HTTP_TEST_FILTER (a
 * cmocka test filter, e.g. "*chunked*"), HTTP_TEST_VERBOSE (keep the
 * server's access log on stderr), HTTP_TEST_LANE (the server's --fast-lane:
 * auto, off or all; make test-http runs every program with each, so that
 * both lanes give the same answers, limits and errors).
 */
#ifndef TESTS_HTTP_HARNESS_H
#define TESTS_HTTP_HARNESS_H

#include <setjmp.h> /* cmocka needs these before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <curl/curl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

/* ---- constants -------------------------------------------------------- */

/* Lesson 001's numbers are printed by NumPy with 17 significant digits; the
 * server parses the same decimal inputs, so only the order of the float64
 * sums may differ: a few ulps of values below 1 (ulp 5.6e-17). */
#define TOL_F64 1e-15
/* How long a raw-socket read waits for a reply the server owes us. */
#define RAW_REPLY_WAIT_MS 3000
/* How long the server may take to print its banner. */
#define START_WAIT_MS 10000
/* The "heavy" request of the load, overload and drain tests: n = 384 tokens
 * of width 96 with the default return (weights are 384×384): enough JSON to
 * keep one worker busy for tens of milliseconds. */
#define HEAVY_N 384
#define HEAVY_D 96

/* Lesson 001 (seeds/001_*.txt): X, W_q, W_k, W_v as the lesson writes them. */
extern const char LESSON_001[];
/* NumPy 1.24 on the lesson's code: softmax(Q Kᵀ / √4) and weights @ V. */
extern const double LESSON_001_WEIGHTS[3][3];
extern const double LESSON_001_OUTPUT[3][4];

/* ---- the program ------------------------------------------------------ */

/* Once at the start of main: ignores SIGPIPE, seeds jansson's hashes,
 * applies HTTP_TEST_FILTER and initialises libcurl.  0, or -1 on failure. */
int harness_init(void);
/* Once at the end of main: releases libcurl. */
void harness_done(void);

/* ---- the server process ----------------------------------------------- */

typedef struct {
    pid_t pid;
    unsigned port;
    char base[64]; /* http://127.0.0.1:PORT */
} server;

extern server g_srv; /* the running group's server */

/* Milliseconds on the monotonic clock. */
double now_ms(void);
/* Sleeps ms milliseconds. */
void sleep_ms(long ms);
/* Starts $ATTENTION_SERVER with the common flags plus `extra`
 * (NULL-terminated).  Returns 0 and fills s, or -1 with a message printed. */
int server_start(server *s, const char *const *extra);
/* server_start() with the server's stderr (its access log) written to the
 * file log_path (created or emptied) instead. */
int server_start_logged(server *s, const char *const *extra,
                        const char *log_path);
/* SIGTERM, then wait; returns the raw wait status, or -1 on a timeout (the
 * process is then killed). */
int server_stop(server *s);
/* Is s still running? */
bool server_alive(const server *s);
/* A group setup's body: starts g_srv with `extra` (NULL: the common flags
 * only).  0, or -1. */
int group_start(const char *const *extra);
/* A group teardown: stops g_srv and fails unless it exited 0 on SIGTERM. */
int group_stop(void **state);

/* ---- HTTP over libcurl ------------------------------------------------ */

typedef struct {
    char *data; /* NUL-terminated, owned; free() it */
    size_t len;
    size_t cap; /* bytes allocated at data */
} bytes;

/* Appends len bytes of data to b (aborts when out of memory). */
void bytes_append(bytes *b, const void *data, size_t len);

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

/* Sends rq to g_srv.  The response's body and headers are always
 * NUL-terminated strings, owned by the caller: response_free() them. */
http_response http(const http_request *rq);
/* Frees what http() or raw_response() allocated. */
void response_free(http_response *r);
/* The value of header `name` in r (copied into out, trimmed), or NULL.
 * `nth` picks among repeated headers (0 = first). */
const char *header_nth(const http_response *r, const char *name, int nth,
                       char *out, size_t out_size);
/* header_nth() of the first header called `name`. */
const char *header(const http_response *r, const char *name, char *out,
                   size_t out_size);
/* How many headers called `name` r has. */
int header_count(const http_response *r, const char *name);
/* Does the comma-separated list `list` hold `token` (case-insensitive)? */
bool list_has(const char *list, const char *token);
/* POSTs body to /v1/attention as application/json. */
http_response post_json(const char *body);
/* Lesson 001 with `changes` (a JSON object) merged over it; NULL values in
 * changes delete a field.  Caller frees. */
char *lesson_with(const char *changes);
/* attention_in_flight_requests from GET /metrics, or -1. */
long in_flight_requests(void);

/* ---- assertions on responses ------------------------------------------ */

/* Prints r (status, headers, the start of the body) as a test error. */
void show(const http_response *r);

/* Fails the test, showing r, unless cond holds. */
#define expect(cond, r)                                                        \
    do {                                                                       \
        if (!(cond)) {                                                         \
            show(r);                                                           \
            fail_msg("expected %s", #cond);                                    \
        }                                                                      \
    } while (0)

/* Fails unless the transfer succeeded with HTTP `status`. */
void expect_status(const http_response *r, long status);
/* Fails unless r's Content-Type is exactly `type`. */
void expect_content_type(const http_response *r, const char *type);
/* Parses the body; fails the test if it is not JSON. Caller decrefs. */
json_t *body_json(const http_response *r);
/* An RFC 9457 problem: status, Content-Type, `status`, `title`, `detail`,
 * `code`, and `pointer` (NULL: not checked).  Returns the detail (static
 * copy) for further checks. */
const char *expect_problem(const http_response *r, long status,
                           const char *code, const char *pointer);
/* A problem for a POST of `body` to /v1/attention. */
void expect_rejected(const char *body, long status, const char *code,
                     const char *pointer);
/* A problem for a POST of lesson_with(changes). */
void expect_rejected_change(const char *changes, long status, const char *code,
                            const char *pointer);
/* Asserts that a JSON value is an array of integers equal to dims. */
void expect_shape(json_t *v, const size_t *dims, size_t rank, const char *what);
/* Asserts that v is a rows×cols matrix of numbers within tol of expected. */
void expect_matrix(json_t *v, const double *expected, size_t rows, size_t cols,
                   double tol, const char *what);
/* A matrix of `rows` × `cols` small deterministic numbers in [-0.5, 0.5),
 * as JSON (element i·cols + j is ((i·cols + j) · seed mod 101) / 101 - 0.5):
 * a body big enough to take time, the same in every run. */
json_t *seeded_matrix(size_t rows, size_t cols, unsigned seed);
/* Are r's weights[0] and output lesson 001's, within TOL_F64?  Asserts
 * nothing, so that worker threads may call it. */
bool lesson_response_correct(const http_response *r);

/* ---- coded replies (harness_coding.c) -------------------------------- */

/* zlib's windowBits for the zlib format (HTTP's deflate) and for gzip. */
#define ZLIB_BITS 15
#define GZIP_BITS (15 + 16)
/* r's body inflated with windowBits `bits`; fails the test unless it is
 * exactly one whole stream.  The caller frees out.data. */
bytes inflated(const http_response *r, int bits);
/* The Content-Encoding r says, copied into out ("none" without one). */
const char *coding_of(const http_response *r, char *out, size_t size);

/* ---- raw sockets, for what libcurl will not send ---------------------- */

/* A TCP connection to g_srv (asserts); the caller closes it. */
int raw_connect(void);
/* Sends all of data; false if the peer stopped reading or closed. */
bool raw_send(int fd, const char *data, size_t len);
/* Reads one response (headers, then Content-Length bytes) or until EOF or
 * wait_ms; returns the status code, 0 if none arrived.  *closed tells whether
 * the server closed the connection afterwards. */
long raw_read_reply(int fd, bytes *out, int wait_ms, bool *closed);
/* A raw reply as an http_response, so the same assertions apply. */
http_response raw_response(const bytes *raw, long status);
/* Sends a raw request and returns its reply as an http_response. */
http_response raw_exchange(const char *request, bool *closed);
/* POSTs body to /v1/attention as JSON on a new raw connection, with the
 * header lines `headers` (each ending in CRLF) too, and returns the
 * connection without reading: the caller hangs up or reads. */
int raw_post_v1(const char *body, const char *headers);

/* ---- the access log (a server started with server_start_logged()) ---- */

/* The log file's lines, each parsed: a JSON array of objects (caller
 * decrefs).  Fails the test on a line that is not a JSON object; with
 * `whole`, also on a last line without its newline (else such a line,
 * being written, is left out). */
json_t *access_log_lines(const char *path, bool whole);
/* Index in lines of the line whose request_id is id, or -1. */
long access_log_index(json_t *lines, const char *id);
/* The line of request id, waiting up to wait_ms for it to be written; NULL
 * when it is not there by then.  Caller decrefs. */
json_t *access_log_wait(const char *path, const char *id, double wait_ms);
/* The line of request id, within wait_ms: fails the test unless it is
 * there and says 499, stopped by client_gone.  Caller decrefs. */
json_t *expect_logged_client_gone(const char *path, const char *id,
                                  double wait_ms);
/* Room for a group's log path. */
#define LOG_PATH_MAX 64
/* A group's setup: g_srv started with `extra`, its access log in a file
 * of its own, path = /tmp/http-NAME-PID.log.  0, or -1 with a message. */
int logged_group_start(char path[LOG_PATH_MAX], const char *name,
                       const char *const *extra);
/* Its teardown: group_stop(), and the file removed. */
int logged_group_stop(void **state, const char *path);

/* ---- heavy requests --------------------------------------------------- */

/* x (n×d) and d×d weights of deterministic small numbers in [-0.5, 0.5].
 * Caller frees. */
char *heavy_body(size_t n, size_t d);
/* heavy_body(n, 4) returning scores, masked_scores and weights: three
 * n × n stages, a JSON reply of about 56 MB at n = 1024.  Caller frees. */
char *big_reply_body(size_t n);

/* One client thread's heavy request and what it saw. */
typedef struct {
    const char *body;
    long status;
    bool retry_after, problem_overloaded, correct;
    atomic_int *uploaded; /* bumped once the whole body is sent */
    bool counted;
} heavy_client;

/* A pthread body: POSTs c->body on a connection of its own and records the
 * status, Retry-After, the overloaded code and whether a 200 has the
 * HEAVY_N×HEAVY_D output shape.  arg is a heavy_client. */
void *heavy_request(void *arg);

#endif
