/*
 * test_protocol.c - HTTP around the endpoint: 404, 405 with Allow, 415,
 * /healthz, /openapi.yaml, CORS, request ids, keep-alive, body framing and
 * 431, and one server per port.
 *
 * One group, "protocol", on a server with the default flags; raw sockets
 * send the framing libcurl will not.
 */
#include "tests/http/harness.h"

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* Headers above the server's 32 KiB limit (HTTP_MAX_HEADER_BYTES), still
 * within libmicrohttpd's 64 KiB connection buffer, so that the server's own
 * JSON 431 answers (beyond the buffer the library answers by itself). */
#define HUGE_HEADER_BYTES (40 * 1024)

/* The server's codes for oversized headers and ambiguous body framing. */
#define CODE_HEADERS_TOO_LARGE "headers_too_large"
#define CODE_BAD_FRAMING "bad_request"

/* ======================================================================= */
/* group "protocol": routes, headers, connections                          */
/* ======================================================================= */

static int protocol_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

static void unknown_path_is_json_404(void **state)
{
    (void)state;
    http_response r = http(&(http_request){.path = "/v3/nothing"});
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

/* With SO_REUSEPORT a second server would bind a port already served and
 * take a share of its connections, silently (two builds answering one
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
    /* successes and answered errors alike keep the connection, but for a
     * request refused from its headers with a body (the 415), answered
     * before its body and closed: the next request opens a new one */
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
    const long opens[] = {1, 0, 0, 0, 1, 0};
    for (size_t i = 0; i < sizeof rqs / sizeof *rqs; i++) {
        http_request rq = rqs[i];
        rq.reuse = h;
        http_response r = http(&rq);
        expect_status(&r, want[i]);
        if (r.new_connections != opens[i]) {
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

int main(void)
{
    if (harness_init() != 0)
        return 1;

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

    int failed = cmocka_run_group_tests_name("protocol", protocol,
                                             protocol_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
