/*
 * bench_minus_infinity.c - what accepting JSON's missing −∞ (Python's
 * json.dumps writes -Infinity) would cost every request: the fast parser
 * (simdjson) refuses the token, so a server accepting it must look for it
 * in every body before parsing; this measures that look (memmem for
 * "Infinity") beside the fast parse of the same body, a request of n × n
 * mask numbers at full precision (n = 256, 512, 1024).
 *
 *   make bench-infinity
 */
#include "server/json/parse_json.h"

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

int main(void)
{
    printf("n      body MB  fast parse ms  scan ms  scan/parse\n");
    for (size_t n = 256; n <= 1024; n *= 2) {
        size_t len;
        char *body = body_of(n, &len);
        double best_parse = 1e9, best_scan = 1e9;
        for (int round = 0; round < 7; round++) {
            raw_request raw;
            double t0 = now();
            bool ok =
                parse_json_fast(body, len, SIZE_MAX, NULL, SIZE_MAX, &raw);
            double t1 = now();
            if (!ok) {
                fprintf(stderr, "the fast parser declined the body\n");
                return 1;
            }
            raw_request_free(&raw);
            double t2 = now();
            const void *volatile hit = memmem(body, len, "Infinity", 8);
            double t3 = now();
            (void)hit;
            best_parse = t1 - t0 < best_parse ? t1 - t0 : best_parse;
            best_scan = t3 - t2 < best_scan ? t3 - t2 : best_scan;
        }
        printf("%-6zu %7.2f  %13.3f  %7.3f  %9.1f %%\n", n, (double)len / 1e6,
               best_parse * 1e3, best_scan * 1e3, 100 * best_scan / best_parse);
        free(body);
    }
    return 0;
}
