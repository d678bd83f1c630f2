/*
 * test_encode.c - server/json/encode: each stage nests by its shape, a
 * large one encodes to the same bytes when shared out over threads, and a
 * cancelled stop ends the encoding (a passed deadline does not).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/attn_stop.h"
#include "core/pool.h"
#include "server/json/decode.h"
#include "server/json/encode.h"
#include "tests/unit/join_parts.h"
#include "tests/unit/request_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void encoded_tensors_nest_by_shape(void **state)
{
    (void)state;
    const char *body = "{\"x\":[[1,2],[3,4]],\"num_heads\":2,"
                       "\"return\":[\"q\",\"masked_scores\"],\"causal\":true,"
                       "\"w_q\":[[1,0],[0,1]],\"w_k\":[[1,0],[0,1]],"
                       "\"w_v\":[[1,0],[0,1]]}";
    api_request req;
    codec_error err;
    assert_true(decode_request(body, strlen(body), &limits, NULL, &req, &err));
    attn_result result;
    assert_int_equal(attn_forward(NULL, &req.problem, req.want, &result),
                     ATTN_OK);
    buf_chain chain = {0};
    encode_response(&req, &result, NULL, &chain);
    assert_int_equal(chain.count, 1); /* small: written in one part */
    buf out = chain.parts[0];
    /* q per head: head 0 is column 0 of x, head 1 column 1 */
    assert_non_null(strstr(out.data, "\"q\":[[[1],[3]],[[2],[4]]]"));
    /* masked entries are null; scale 1/√1 leaves the scores as they are */
    assert_non_null(strstr(
        out.data, "\"masked_scores\":[[[1,null],[3,9]],[[4,null],[8,16]]]"));
    assert_non_null(strstr(out.data, "\"weights\":[2,2,2]"));
    assert_null(strstr(out.data, "\"weights\":[["));
    buf_chain_free(&chain);
    attn_result_free(&result);
    api_request_free(&req);
}

static void large_tensors_encode_the_same_on_several_threads(void **state)
{
    (void)state;
    /* (1, 512, 512) weights: past the size where encoding is shared out */
    api_request req = {.want = ATTN_WANT(ATTN_WEIGHTS)};
    req.problem = (attn_problem){.dtype = TENSOR_FLOAT64,
                                 .n = 512,
                                 .m = 512,
                                 .d = 1,
                                 .d_c = 1,
                                 .heads = 1,
                                 .d_k = 1,
                                 .d_v = 1};
    double *weights = malloc(512 * 512 * sizeof *weights);
    for (size_t i = 0; i < 512 * 512; i++)
        weights[i] = sin((double)i) / 3.0;
    attn_result result = {0};
    result.stage[ATTN_WEIGHTS] = weights;
    buf_chain serial_parts = {0}, parallel_parts = {0};
    encode_response(&req, &result, NULL, &serial_parts);
    pool *workers = pool_create(3, 4);
    encode_response(&req, &result, workers, &parallel_parts);
    pool_destroy(workers);
    /* the pieces are parts of their own, not copied into one buffer */
    assert_int_equal(serial_parts.count, 1);
    assert_true(parallel_parts.count > 32);
    size_t serial_len, parallel_len;
    char *serial = buf_chain_join(&serial_parts, &serial_len);
    char *parallel = buf_chain_join(&parallel_parts, &parallel_len);
    assert_int_equal(buf_chain_len(&parallel_parts), parallel_len);
    assert_int_equal(serial_len, parallel_len);
    assert_memory_equal(serial, parallel, serial_len);
    assert_non_null(strstr(serial, "\"weights\":[[[0,0.28"));
    assert_memory_equal(serial + serial_len - 5, "]]]}\n", 5);
    free(serial);
    free(parallel);
    buf_chain_free(&serial_parts);
    buf_chain_free(&parallel_parts);
    free(weights);
}

/* (1, 512, 512) weights of sin(i)/3, encoded whole or under `stop` on
 * `workers` (may be NULL); the text joined.  Caller frees. */
static char *weights_text(attn_stop *stop, pool *workers, size_t *len)
{
    api_request req = {.want = ATTN_WANT(ATTN_WEIGHTS)};
    req.problem = (attn_problem){.dtype = TENSOR_FLOAT64,
                                 .n = 512,
                                 .m = 512,
                                 .d = 1,
                                 .d_c = 1,
                                 .heads = 1,
                                 .d_k = 1,
                                 .d_v = 1,
                                 .stop = stop};
    double *weights = malloc(512 * 512 * sizeof *weights);
    for (size_t i = 0; i < 512 * 512; i++)
        weights[i] = sin((double)i) / 3.0;
    attn_result result = {0};
    result.stage[ATTN_WEIGHTS] = weights;
    buf_chain parts = {0};
    encode_response(&req, &result, workers, &parts);
    char *text = buf_chain_join(&parts, len);
    buf_chain_free(&parts);
    free(weights);
    return text;
}

static void a_cancelled_stop_ends_the_encoding(void **state)
{
    (void)state;
    attn_stop stop;
    attn_stop_init(&stop, 0);
    attn_stop_cancel(&stop, ATTN_STOP_CANCELLED);
    pool *workers = pool_create(3, 4);
    for (int threads = 0; threads < 2; threads++) {
        size_t len;
        char *text = weights_text(&stop, threads ? workers : NULL, &len);
        /* the envelope, and not one of the 262,144 numbers */
        assert_non_null(strstr(text, "\"weights\":}"));
        assert_true(len < 1000);
        free(text);
    }
    pool_destroy(workers);
}

static void a_flat_tensor_stops_as_a_nested_one_does(void **state)
{
    (void)state;
    attn_stop stop;
    attn_stop_init(&stop, 0);
    attn_stop_cancel(&stop, ATTN_STOP_CANCELLED);
    double numbers[70000] = {0}; /* past the size shared out */
    pool *workers = pool_create(3, 4);
    for (int threads = 0; threads < 2; threads++) {
        buf_chain parts = {0};
        encode_flat(&parts, threads ? workers : NULL, &stop, numbers, 70000,
                    TENSOR_FLOAT64, NULL);
        size_t len;
        char *text = buf_chain_join(&parts, &len);
        assert_string_equal(text, "[]");
        free(text);
        buf_chain_free(&parts);
    }
    pool_destroy(workers);
}

static void a_passed_deadline_does_not_cut_the_encoding(void **state)
{
    (void)state;
    attn_stop stop;
    attn_stop_init(&stop, 1e-9); /* long passed */
    size_t whole_len, late_len;
    char *whole = weights_text(NULL, NULL, &whole_len);
    char *late = weights_text(&stop, NULL, &late_len);
    assert_int_equal(late_len, whole_len);
    assert_memory_equal(late, whole, whole_len);
    free(whole);
    free(late);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encoded_tensors_nest_by_shape),
        cmocka_unit_test(large_tensors_encode_the_same_on_several_threads),
        cmocka_unit_test(a_cancelled_stop_ends_the_encoding),
        cmocka_unit_test(a_flat_tensor_stops_as_a_nested_one_does),
        cmocka_unit_test(a_passed_deadline_does_not_cut_the_encoding),
    };
    return cmocka_run_group_tests_name("encode", tests, NULL, NULL);
}
