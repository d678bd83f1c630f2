/*
 * harness_expect.c - deterministic request bodies, and the assertions on
 * responses: status, Content-Type, problem+json, shapes and the lesson's
 * numbers (harness.h).
 */
#include "tests/http/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- request bodies --------------------------------------------------- */

json_t *seeded_matrix(size_t rows, size_t cols, unsigned seed)
{
    json_t *m = json_array();
    for (size_t i = 0; i < rows; i++) {
        json_t *row = json_array();
        for (size_t j = 0; j < cols; j++)
            json_array_append_new(
                row,
                json_real((double)((i * cols + j) * seed % 101) / 101.0 - 0.5));
        json_array_append_new(m, row);
    }
    return m;
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
