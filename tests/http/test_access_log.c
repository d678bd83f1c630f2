/*
 * test_access_log.c - the access log is written off the request path, in
 * batches, yet every request has its whole line: a line is on stderr within
 * a second of its reply, and SIGTERM writes every line before the process
 * exits, the "stopped" event last; a line names a refusal's problem code,
 * the client's address and User-Agent, the encoding's time, the trace, and
 * /v2's request id.
 *
 * One group, "access_log", on a server whose stderr is a file the tests
 * read; the SIGTERM test stops that server itself.
 */
#include "tests/http/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* The longest a line may take to reach stderr after its reply: the
 * promise the access log makes (it flushes far more often than that). */
#define FLUSH_PROMISE_MS 1000
/* Clients, and lesson requests each sends on its kept-alive connection,
 * right before SIGTERM: enough lines that many are still in memory then. */
#define TERM_CLIENTS 2
#define TERM_REQUESTS 300

static char g_log_path[64];

/* ======================================================================= */
/* group "access_log": stderr to a file                                    */
/* ======================================================================= */

static int log_setup(void **state)
{
    (void)state;
    snprintf(g_log_path, sizeof g_log_path, "/tmp/http-access-log-%d.log",
             (int)getpid());
    memset(&g_srv, 0, sizeof g_srv);
    return server_start_logged(&g_srv, NULL, g_log_path);
}

static int log_teardown(void **state)
{
    (void)state;
    if (g_srv.pid > 0) /* the test failed before stopping it */
        server_stop(&g_srv);
    unlink(g_log_path);
    return 0;
}

static void a_line_is_on_stderr_within_a_second_of_its_reply(void **state)
{
    (void)state;
    http_response r = http(&(http_request){
        .path = "/v1/attention",
        .content_type = "application/json",
        .body = LESSON_001,
        .headers = {"X-Request-ID: flush-probe"},
    });
    expect_status(&r, 200);
    response_free(&r);
    double replied = now_ms();
    json_t *line = access_log_wait(g_log_path, "flush-probe", FLUSH_PROMISE_MS);
    print_message("the line was on stderr %.0f ms after the reply\n",
                  now_ms() - replied);
    assert_non_null(line);
    assert_string_equal(json_string_value(json_object_get(line, "path")),
                        "/v1/attention");
    assert_string_equal(json_string_value(json_object_get(line, "method")),
                        "POST");
    assert_int_equal(json_integer_value(json_object_get(line, "status")), 200);
    assert_true(json_is_true(json_object_get(line, "completed")));
    assert_int_equal(json_integer_value(json_object_get(line, "n")), 3);
    json_decref(line);
}

/* The fields every line has, and those of a computed request
 * (docs/reliability.md, "The access log"). */
static const char *const every_line[] = {
    "time",    "request_id", "trace_id",  "span_id",  "method",    "path",
    "status",  "client",     "completed", "bytes_in", "bytes_out", "queue_ms",
    "work_ms", "compute_ms", "encode_ms", "total_ms"};
static const char *const computed_line[] = {"lane", "n", "d", "h",
                                            "work_flops"};

static void expect_fields(json_t *line, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!json_object_get(line, names[i]))
            fail_msg("the line has no \"%s\": %s", names[i],
                     json_dumps(line, JSON_COMPACT));
}

/* A refusal's line names its problem code; every line the client's address
 * and User-Agent; a computed one its lane and encoding time. */
static void a_line_names_the_code_client_agent_and_encoding(void **state)
{
    (void)state;
    http_response r =
        http(&(http_request){.path = "/no-such-path",
                             .headers = {"X-Request-ID: refusal-probe",
                                         "User-Agent: access-log-test/1.0"}});
    expect_status(&r, 404);
    response_free(&r);
    r = http(&(http_request){.path = "/v1/attention",
                             .content_type = "application/json",
                             .body = LESSON_001,
                             .headers = {"X-Request-ID: computed-probe",
                                         "User-Agent: access-log-test/1.0"}});
    expect_status(&r, 200);
    response_free(&r);
    json_t *refusal =
        access_log_wait(g_log_path, "refusal-probe", FLUSH_PROMISE_MS);
    json_t *computed =
        access_log_wait(g_log_path, "computed-probe", FLUSH_PROMISE_MS);
    assert_non_null(refusal);
    assert_non_null(computed);
    expect_fields(refusal, every_line, sizeof every_line / sizeof *every_line);
    expect_fields(computed, every_line, sizeof every_line / sizeof *every_line);
    expect_fields(computed, computed_line,
                  sizeof computed_line / sizeof *computed_line);
    assert_string_equal(json_string_value(json_object_get(refusal, "code")),
                        "not_found");
    assert_null(json_object_get(computed, "code"));
    assert_string_equal(json_string_value(json_object_get(refusal, "client")),
                        "127.0.0.1");
    assert_string_equal(
        json_string_value(json_object_get(computed, "user_agent")),
        "access-log-test/1.0");
    assert_true(json_number_value(json_object_get(computed, "encode_ms")) >= 0);
    json_decref(refusal);
    json_decref(computed);
}

/* A path longer than the request record keeps (127 bytes) is logged cut
 * to its first 127 bytes, the line still whole JSON. */
static void a_long_path_is_logged_cut_to_127_bytes(void **state)
{
    (void)state;
    char path[201];
    path[0] = '/';
    for (int i = 1; i < 200; i++)
        path[i] = (char)('a' + i % 26);
    path[200] = '\0';
    http_response r = http(&(http_request){
        .path = path, .headers = {"X-Request-ID: long-path-probe"}});
    expect_status(&r, 404);
    response_free(&r);
    json_t *line =
        access_log_wait(g_log_path, "long-path-probe", FLUSH_PROMISE_MS);
    assert_non_null(line);
    path[127] = '\0';
    assert_string_equal(json_string_value(json_object_get(line, "path")), path);
    json_decref(line);
}

/* /v2's request "id" is logged as infer_id: as it came when it is ASCII,
 * a byte beyond it as '?' (the line stays JSON whatever the id holds). */
static void a_v2_request_id_is_logged(void **state)
{
    (void)state;
    static const char body[] =
        "{\"id\": \"%s\", \"inputs\": ["
        "{\"name\": \"x\", \"shape\": [2, 2], \"datatype\": \"FP64\", "
        "\"data\": [1, 0, 0, 1]},"
        "{\"name\": \"w_q\", \"shape\": [2, 2], \"datatype\": \"FP64\", "
        "\"data\": [1, 0, 0, 1]},"
        "{\"name\": \"w_k\", \"shape\": [2, 2], \"datatype\": \"FP64\", "
        "\"data\": [1, 0, 0, 1]},"
        "{\"name\": \"w_v\", \"shape\": [2, 2], \"datatype\": \"FP64\", "
        "\"data\": [1, 0, 0, 1]}]}";
    static const struct {
        const char *sent, *logged, *request_id;
    } ids[] = {
        {"batch-7 {a}", "batch-7 {a}", "X-Request-ID: v2-id-ascii"},
        {"caf\u00e9", "caf??", "X-Request-ID: v2-id-utf8"},
    };
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        char text[1024];
        snprintf(text, sizeof text, body, ids[i].sent);
        http_response r =
            http(&(http_request){.path = "/v2/models/attention/infer",
                                 .content_type = "application/json",
                                 .body = text,
                                 .headers = {ids[i].request_id}});
        expect_status(&r, 200);
        response_free(&r);
        json_t *line = access_log_wait(g_log_path, ids[i].request_id + 14,
                                       FLUSH_PROMISE_MS);
        assert_non_null(line);
        assert_string_equal(
            json_string_value(json_object_get(line, "infer_id")),
            ids[i].logged);
        json_decref(line);
    }
}

typedef struct {
    int client;
    int ok; /* 200s with lesson 001's numbers */
} term_client;

static void *send_lessons(void *arg)
{
    term_client *c = arg;
    CURL *keep = curl_easy_init();
    for (int i = 0; i < TERM_REQUESTS; i++) {
        char id[64];
        snprintf(id, sizeof id, "X-Request-ID: term-%d-%d", c->client, i);
        http_response r = http(&(http_request){
            .path = "/v1/attention",
            .content_type = "application/json",
            .body = LESSON_001,
            .headers = {id},
            .reuse = keep,
        });
        c->ok +=
            r.rc == CURLE_OK && r.status == 200 && lesson_response_correct(&r);
        response_free(&r);
    }
    curl_easy_cleanup(keep);
    return NULL;
}

static void sigterm_writes_every_line_whole_stopped_last(void **state)
{
    (void)state;
    pthread_t threads[TERM_CLIENTS];
    term_client clients[TERM_CLIENTS];
    for (int c = 0; c < TERM_CLIENTS; c++) {
        clients[c] = (term_client){.client = c};
        assert_int_equal(
            pthread_create(&threads[c], NULL, send_lessons, &clients[c]), 0);
    }
    for (int c = 0; c < TERM_CLIENTS; c++) {
        pthread_join(threads[c], NULL);
        assert_int_equal(clients[c].ok, TERM_REQUESTS);
    }
    int status = server_stop(&g_srv); /* at once: lines are still in memory */
    assert_true(status != -1 && WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    json_t *lines = access_log_lines(g_log_path, true);
    for (int c = 0; c < TERM_CLIENTS; c++)
        for (int i = 0; i < TERM_REQUESTS; i++) {
            char id[48];
            snprintf(id, sizeof id, "term-%d-%d", c, i);
            long at = access_log_index(lines, id);
            if (at < 0)
                fail_msg("no access-log line for %s", id);
            json_t *line = json_array_get(lines, (size_t)at);
            assert_int_equal(
                json_integer_value(json_object_get(line, "status")), 200);
        }
    /* the drain's events: "draining" after SIGTERM, "stopped" last */
    size_t count = json_array_size(lines), drainings = 0;
    for (size_t i = 0; i < count; i++) {
        const char *event = json_string_value(
            json_object_get(json_array_get(lines, i), "event"));
        drainings += event && strcmp(event, "draining") == 0;
    }
    assert_int_equal(drainings, 1);
    json_t *stopped = json_array_get(lines, count - 1);
    const char *last = json_string_value(json_object_get(stopped, "event"));
    if (!last || strcmp(last, "stopped") != 0)
        fail_msg("the last line is not the stopped event: %s",
                 json_dumps(stopped, JSON_COMPACT));
    assert_true(json_is_true(json_object_get(stopped, "clean")));
    json_decref(lines);
}

/* ======================================================================= */

/* A GET /healthz from source address `from` (any of 127/8 reaches the
 * loopback server), its request id `id`; the reply is read before return. */
static void healthz_from(const char *from, const char *id)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in src = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, from, &src.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof src), 0);
    struct sockaddr_in dst = {.sin_family = AF_INET,
                              .sin_port = htons((uint16_t)g_srv.port)};
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof dst), 0);
    char request[160];
    snprintf(request, sizeof request,
             "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "X-Request-ID: %s\r\nConnection: close\r\n\r\n",
             id);
    assert_true(raw_send(fd, request, strlen(request)));
    bytes raw = {0};
    bool closed;
    assert_int_equal(raw_read_reply(fd, &raw, 2000, &closed), 200);
    free(raw.data);
    close(fd);
}

/* Each line names its own client, when clients of different addresses
 * take turns on the event threads (which keep the last address's text). */
static void each_line_names_its_own_client_address(void **state)
{
    (void)state;
    static const char *const from[] = {"127.0.0.2", "127.0.0.3"};
    enum { TURNS = 8 };
    for (int i = 0; i < TURNS; i++) {
        char id[32];
        snprintf(id, sizeof id, "client-turn-%d", i);
        healthz_from(from[i % 2], id);
    }
    for (int i = 0; i < TURNS; i++) {
        char id[32];
        snprintf(id, sizeof id, "client-turn-%d", i);
        json_t *line = access_log_wait(g_log_path, id, FLUSH_PROMISE_MS);
        assert_non_null(line);
        assert_string_equal(json_string_value(json_object_get(line, "client")),
                            from[i % 2]);
        json_decref(line);
    }
}

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_line_is_on_stderr_within_a_second_of_its_reply),
        cmocka_unit_test(a_line_names_the_code_client_agent_and_encoding),
        cmocka_unit_test(a_v2_request_id_is_logged),
        cmocka_unit_test(a_long_path_is_logged_cut_to_127_bytes),
        cmocka_unit_test(each_line_names_its_own_client_address),
        cmocka_unit_test(sigterm_writes_every_line_whole_stopped_last),
    };
    int failed = cmocka_run_group_tests_name("access_log", tests, log_setup,
                                             log_teardown);
    harness_done();
    return failed ? 1 : 0;
}
