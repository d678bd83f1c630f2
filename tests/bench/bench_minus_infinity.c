/*
 * bench_minus_infinity.c - what reading a body's text again costs beside
 * parsing it, on a request of n × n mask numbers at full precision
 * (n = 256, 512, 1024):
 * - looking for JSON's missing −∞ (Python's json.dumps writes -Infinity),
 *   which the fast parser (simdjson) refuses, so a server accepting it must
 *   look in every body before parsing (memmem for "Infinity");
 * - the walk of whole_literals.h, which finds a fraction that a double
 *   rounded away where a whole number belongs: every body the jansson
 *   parser reads takes it, and a simdjson body only when a whole-number
 *   field holds a number with a fraction or an exponent.
 * Beside the fast parse and jansson's parse of the same body.
 *
 *   make bench-infinity
 */
#include "server/json/parse_json.h"
#include "server/json/whole_literals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* {"x": [[1]] (n rows), "w_q".., "mask": n × n numbers of 17 digits} */
static char *body_of(size_t n, size_t *len)
{
    size_t cap = 64 + n * 8 + n * n * 24 + 256;
    char *body = malloc(cap), *at = body;
    at += sprintf(at, "{\"x\":[");
    for (size_t i = 0; i < n; i++)
        at += sprintf(at, "%s[1]", i ? "," : "");
    at += sprintf(at, "],\"w_q\":[[1]],\"w_k\":[[1]],\"w_v\":[[1]],"
                      "\"mask\":[");
    srand(1);
    for (size_t i = 0; i < n; i++) {
        *at++ = i ? ',' : '[';
        if (i)
            *at++ = '[';
        for (size_t j = 0; j < n; j++)
            at += sprintf(at, "%s%.17g", j ? "," : "",
                          -(double)rand() / RAND_MAX * 10);
        *at++ = ']';
    }
    at += sprintf(at, "]}");
    *len = (size_t)(at - body);
    return body;
}

static error_code v1_whole(void *ctx, const char *pointer)
{
    (void)ctx;
    return schema_whole_code(pointer);
}

/* The best of 7 rounds of each, in seconds: [0] the fast parse, [1]
 * jansson's, [2] the −∞ look, [3] the whole-literal walk.  Exits when a
 * parse or the walk refuses the body. */
static void time_body(const char *body, size_t len, double best[4])
{
    for (int k = 0; k < 4; k++)
        best[k] = 1e9;
    for (int round = 0; round < 7; round++) {
        raw_request raw;
        codec_error err;
        double t0 = now();
        bool fast = parse_json_fast(body, len, SIZE_MAX, NULL, SIZE_MAX, &raw);
        double took[4] = {now() - t0};
        raw_request_free(&raw);
        t0 = now();
        bool slow = parse_json_jansson(body, len, SIZE_MAX, &raw, &err);
        took[1] = now() - t0;
        raw_request_free(&raw);
        t0 = now();
        const void *volatile hit = memmem(body, len, "Infinity", 8);
        took[2] = now() - t0;
        (void)hit;
        t0 = now();
        bool whole = whole_literals_check(body, len, v1_whole, NULL, &err);
        took[3] = now() - t0;
        if (!fast || !slow || !whole) {
            fprintf(stderr, "the body was refused: %s\n", err.detail);
            exit(1);
        }
        for (int k = 0; k < 4; k++)
            best[k] = took[k] < best[k] ? took[k] : best[k];
    }
}

int main(void)
{
    printf("n      body MB  fast parse ms  jansson ms  -Infinity look ms "
           "(/fast)  whole walk ms (/fast, /jansson)\n");
    for (size_t n = 256; n <= 1024; n *= 2) {
        size_t len;
        char *body = body_of(n, &len);
        double best[4];
        time_body(body, len, best);
        printf("%-6zu %7.2f  %13.3f  %10.3f  %17.3f (%.1f %%)  %13.3f (%.0f "
               "%%, %.0f %%)\n",
               n, (double)len / 1e6, best[0] * 1e3, best[1] * 1e3,
               best[2] * 1e3, 100 * best[2] / best[0], best[3] * 1e3,
               100 * best[3] / best[0], 100 * best[3] / best[1]);
        free(body);
    }
    return 0;
}
