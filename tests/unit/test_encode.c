/*
 * test_encode.c - server/json/encode: each stage nests by its shape, and a
 * large one encodes to the same bytes when shared out over threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encoded_tensors_nest_by_shape),
        cmocka_unit_test(large_tensors_encode_the_same_on_several_threads),
    };
    return cmocka_run_group_tests_name("encode", tests, NULL, NULL);
}
