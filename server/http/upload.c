/*
 * upload.c - the memory budget of a request's body.
 *
 * DESIGN
 * A body that will be read is reserved in the memory budget before it is,
 * with what parsing it will need (parse_budget_need()): from its
 * Content-Length, on the first call (503 when they do not fit now, 413 over
 * --max-body), the body allocated in one piece; a body of unknown size
 * (chunked, or inflating as its Content-Encoding is decoded) as its buffer
 * grows, the parsing of the whole buffer with it.  Once the body has
 * arrived, the parsing part is cut down to what its real length needs.  So
 * a request never learns at the end that it cannot be parsed: it is
 * refused while it grows, alone, and gives back what it held at once, so
 * that of a burst of bodies that each fit the budget alone, one at least
 * is always served.  The growth steps, and a refusal's giving back, are
 * taken under one lock: two uploads that each hold half cannot both be
 * refused for the other's half.  The job gives the reservations back when
 * it no longer needs the body, the "request completed" callback whatever
 * is left.
 */
#include "server/http/exchange.h"

#include "server/base/block_cache.h"
#include "server/base/problem.h"
#include "server/base/parse_budget.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growth steps of bodies of unknown size, one at a time (DESIGN). */
static pthread_mutex_t growth_lock = PTHREAD_MUTEX_INITIALIZER;

/* A body without Content-Length starts in a buffer this big, doubled as it
 * grows. */
#define HTTP_BODY_START_CAP 4096

/* Memory a request holds while it is parsed, before its shapes are known
 * (the worker then reserves what computing and answering need); the parsers
 * hold to it (server/base/parse_budget.h). */
static size_t estimate_memory(size_t body_len)
{
    return parse_budget_need(body_len);
}

/* The largest body the budget admits when no other request holds any of
 * it: the body and what parsing it needs. */
static size_t largest_admitted(const http_server *srv)
{
    return parse_budget_largest_body(srv->memory.limit);
}

/* 413, not 503: no state of the budget could ever admit the body, and a
 * client told to retry would retry forever. */
static void refuse_never_fits(request *req, const char *size)
{
    problem_reply(&req->rep, ERR_LIMIT_EXCEEDED, NULL,
                  "a body of %s bytes never fits the memory budget "
                  "(--memory-budget %zu bytes holds the body and its "
                  "parsing, %d bytes per body byte): it admits bodies of "
                  "at most %zu bytes",
                  size, req->srv->memory.limit, PARSE_BUDGET_PER_BODY_BYTE,
                  largest_admitted(req->srv));
    req->state = REQ_REPLIED;
}

static void refuse_over_budget(request *req)
{
    problem_reply(&req->rep, ERR_OVERLOADED, NULL,
                  "the server's memory budget for requests in flight "
                  "is used up; retry shortly");
    req->state = REQ_REPLIED;
}

/* The body has arrived: what parsing it needs, reserved for its buffer
 * already, is cut down to its length. */
void upload_fit_parsing(request *req)
{
    size_t need = estimate_memory(req->body_len);
    if (need < req->parse_reserved) {
        budget_release(&req->srv->memory, req->parse_reserved - need);
        req->parse_reserved = need;
    }
}

/* Gives back the memory reserved for the body and its parsing. */
void upload_release(request *req)
{
    budget_release(&req->srv->memory,
                   req->upload_reserved + req->parse_reserved);
    req->upload_reserved = 0;
    req->parse_reserved = 0;
}

static void refuse_body_too_large(request *req)
{
    problem_reply(&req->rep, ERR_BODY_TOO_LARGE, NULL,
                  "the body is larger than %zu bytes (--max-body)",
                  req->srv->cfg->max_body);
    req->state = REQ_REPLIED;
}

/* Reserves a body buffer of `cap` bytes and what parsing it needs in the
 * budget (what is reserved already counts); false, with the request
 * refused and everything it held given back, when they do not fit. */
static bool reserve_upload(request *req, size_t cap)
{
    if (cap <= req->upload_reserved)
        return true;
    size_t parse = estimate_memory(cap);
    size_t more = cap - req->upload_reserved + parse - req->parse_reserved;
    pthread_mutex_lock(&growth_lock);
    bool fits = budget_reserve(&req->srv->memory, more);
    if (!fits)
        upload_release(req);
    pthread_mutex_unlock(&growth_lock);
    if (!fits) {
        refuse_over_budget(req);
        return false;
    }
    req->upload_reserved = cap;
    req->parse_reserved = parse;
    return true;
}

bool upload_append(request *req, const char *data, size_t size)
{
    size_t max = req->srv->cfg->max_body;
    if (size > max - req->body_len) {
        refuse_body_too_large(req);
        return false;
    }
    size_t admitted = largest_admitted(req->srv);
    if (size > admitted || req->body_len > admitted - size) {
        char more[48];
        snprintf(more, sizeof more, "more than %zu", admitted);
        refuse_never_fits(req, more);
        return false;
    }
    if (req->body_len + size > req->body_cap) {
        size_t cap = req->body_cap ? req->body_cap : HTTP_BODY_START_CAP;
        while (cap < req->body_len + size)
            cap *= 2;
        if (cap > max)
            cap = max;
        if (cap > admitted)
            cap = admitted;
        if (!reserve_upload(req, cap))
            return false;
        char *grown = realloc(req->body, cap);
        if (!grown) {
            problem_reply(&req->rep, ERR_OUT_OF_MEMORY, NULL,
                          "the server could not allocate memory for "
                          "the body");
            req->state = REQ_REPLIED;
            return false;
        }
        req->body = grown;
        req->body_cap = cap;
    }
    memcpy(req->body + req->body_len, data, size);
    req->body_len += size;
    return true;
}

/* A body of `declared` bytes is coming: refused (413) over --max-body or
 * when no state of the budget could hold it and what parsing it needs,
 * (503) when the budget cannot hold them now; else both are reserved and
 * the body allocated in one piece.  False when refused. */
bool upload_accept(request *req, unsigned long long declared)
{
    http_server *srv = req->srv;
    if (declared > srv->cfg->max_body) {
        refuse_body_too_large(req);
        return false;
    }
    if (declared > largest_admitted(srv)) {
        char size[24];
        snprintf(size, sizeof size, "%llu", declared);
        refuse_never_fits(req, size);
        return false;
    }
    size_t len = (size_t)declared;
    if (!reserve_upload(req, len))
        return false;
    if (len > 0) {
        /* the whole body in one allocation, no realloc chain */
        req->body = block_alloc(len);
        req->body_cap = req->body ? len : 0;
    }
    return true;
}
