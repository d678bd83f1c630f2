/*
 * parse_cost.c - what jansson's tree of a body costs, per body byte, for
 * the patterns a body can repeat: the figures behind
 * PARSE_BUDGET_PER_BODY_BYTE (server/base/parse_budget.h), measured by the
 * parse account itself (each block's usable size plus glibc's chunk
 * header, at the tree's peak).
 *
 * usage: parse_cost [PATTERN...]   (default: the table of docs/reliability.md)
 * Each pattern is repeated inside an array to bodies of 256 KiB to 1.75
 * MiB, and the worst ratio printed: jansson's arrays double their tables,
 * so where the last doubling falls moves a body's cost a few bytes a byte.
 */
#include "server/base/parse_budget.h"
#include "server/json/parse_json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_patterns[] = {
    "{},",        "[{}],",       "{\"\":{}},", "[[[]]],",
    "[[]],",      "{\"a\":[]},", "[],",        "[1],",
    "{\"a\":0},", "[0,0],",      "\"\",",      "0,",
    "\"a\",",     "true,",       "0.1234,",    "-0.31359894363028484,"};

/* The account's peak for jansson's tree of "[pattern × count 0]", per byte. */
static double tree_per_byte(const char *pattern, size_t count)
{
    size_t pl = strlen(pattern), len = 0;
    char *body = malloc(count * pl + 3);
    if (!body)
        return -1;
    body[len++] = '[';
    for (size_t i = 0; i < count; i++, len += pl)
        memcpy(body + len, pattern, pl);
    body[len++] = '0';
    body[len++] = ']';
    parse_account account;
    parse_account_open(&account, SIZE_MAX);
    json_t *root;
    json_error_t jerr;
    codec_error err;
    parse_json_loadb(body, len, JSON_DECODE_INT_AS_REAL, &root, &jerr, &err);
    parse_account_close(&account);
    json_decref(root);
    free(body);
    return root ? (double)account.peak / (double)len : -1;
}

int main(int argc, char **argv)
{
    parse_budget_install();
    size_t n = argc > 1 ? (size_t)argc - 1
                        : sizeof default_patterns / sizeof *default_patterns;
    const char *const *patterns =
        argc > 1 ? (const char *const *)argv + 1 : default_patterns;
    printf("| pattern | jansson's tree, bytes per body byte | within the "
           "account (%d) |\n| --- | --- | --- |\n",
           PARSE_BUDGET_PER_BODY_BYTE - PARSE_BUDGET_NUMBERS_PER_BODY_BYTE);
    for (size_t p = 0; p < n; p++) {
        double worst = 0;
        size_t pl = strlen(patterns[p]);
        for (size_t bytes = 256 << 10; bytes <= 1 << 20; bytes *= 4)
            for (size_t step = 0; step < 4; step++) {
                double r =
                    tree_per_byte(patterns[p], (bytes + step * bytes / 4) / pl);
                if (r < 0) {
                    fprintf(stderr, "%s: jansson refused it\n", patterns[p]);
                    return 1;
                }
                worst = r > worst ? r : worst;
            }
        printf("| `%s` | %.1f | %s |\n", patterns[p], worst,
               worst <= PARSE_BUDGET_PER_BODY_BYTE -
                            PARSE_BUDGET_NUMBERS_PER_BODY_BYTE
                   ? "yes"
                   : "no: 413");
    }
    return 0;
}
