/*
 * parse_budget.c - the parse account (parse_budget.h) and jansson's
 * allocation functions that charge it.
 */
#include "server/base/parse_budget.h"

#include <jansson.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

/* What glibc keeps beside each block it hands out: the chunk's size word
 * (malloc_usable_size() counts the rest). */
#define PARSE_BUDGET_CHUNK_HEADER sizeof(size_t)

/* The account open on this thread, or NULL. */
static _Thread_local parse_account *current;

size_t parse_budget_need(size_t body_len)
{
    if (body_len > SIZE_MAX / PARSE_BUDGET_PER_BODY_BYTE)
        return SIZE_MAX;
    size_t need = body_len * PARSE_BUDGET_PER_BODY_BYTE;
    return need < PARSE_BUDGET_MIN ? PARSE_BUDGET_MIN : need;
}

size_t parse_budget_largest_body(size_t budget)
{
    size_t proportional = budget / (1 + PARSE_BUDGET_PER_BODY_BYTE);
    if (proportional * PARSE_BUDGET_PER_BODY_BYTE >= PARSE_BUDGET_MIN)
        return proportional;
    /* below that, what parsing needs is the floor */
    size_t small = budget > PARSE_BUDGET_MIN ? budget - PARSE_BUDGET_MIN : 0;
    return small < PARSE_BUDGET_MIN / PARSE_BUDGET_PER_BODY_BYTE
               ? small
               : PARSE_BUDGET_MIN / PARSE_BUDGET_PER_BODY_BYTE;
}

size_t parse_budget_account_limit(size_t body_len)
{
    size_t need = parse_budget_need(body_len);
    if (need == SIZE_MAX)
        return SIZE_MAX;
    return need - body_len * PARSE_BUDGET_NUMBERS_PER_BODY_BYTE;
}

static bool charge(parse_account *a, size_t bytes)
{
    if (bytes > a->limit - a->used) {
        a->refused = true;
        return false;
    }
    a->used += bytes;
    if (a->used > a->peak)
        a->peak = a->used;
    return true;
}

static void uncharge(parse_account *a, size_t bytes)
{
    /* a block allocated before the account opened may be freed under it */
    a->used -= bytes < a->used ? bytes : a->used;
}

static void charged_free(void *block)
{
    parse_account *a = current;
    if (block && a)
        uncharge(a, malloc_usable_size(block) + PARSE_BUDGET_CHUNK_HEADER);
    free(block);
}

void parse_budget_install(void)
{
    json_set_alloc_funcs(parse_budget_alloc, charged_free);
}

void parse_account_open(parse_account *a, size_t limit)
{
    *a = (parse_account){.limit = limit};
    current = a;
}

parse_account *parse_account_current(void) { return current; }

void parse_account_close(parse_account *a)
{
    if (current == a)
        current = NULL;
}

bool parse_budget_hold(size_t bytes)
{
    return !current || charge(current, bytes);
}

void parse_budget_drop(size_t bytes)
{
    if (current)
        uncharge(current, bytes);
}

void *parse_budget_alloc(size_t size)
{
    parse_account *a = current;
    if (a && size > a->limit - a->used) {
        a->refused = true;
        return NULL;
    }
    void *block = malloc(size);
    if (block && a &&
        !charge(a, malloc_usable_size(block) + PARSE_BUDGET_CHUNK_HEADER)) {
        free(block);
        return NULL;
    }
    return block;
}
