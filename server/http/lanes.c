/*
 * lanes.c - where a request is computed: the fast lane, or a pool job.
 *
 * DESIGN
 * An event thread computes only what costs less than handing it to a
 * worker would.  A body of at most LIMIT_FAST_LANE_MAX_BODY bytes takes
 * its route's fast lane: decoded here, and when its work is at most
 * LIMIT_FAST_LANE_MAX_FLOPS computed and its reply queued here too, with
 * no other thread involved.  Any other request (or one the lane decoded and
 * found big, handing over what it decoded) suspends the connection and
 * becomes a pool job.  --fast-lane off|all sends every request one way.
 * The job frees the body and gives its memory back; the reply keeps its
 * bytes reserved (reply_hold) until the "request completed" callback.
 */
#include "server/http/exchange.h"

#include "server/base/block_cache.h"
#include "server/base/clock.h"
#include "server/base/problem.h"

#include <math.h>
#include <poll.h>
#include <stdatomic.h>

/* A suspended connection does not notice its client leaving; a job peeks at
 * the socket before spending time on a request nobody waits for. */
static bool client_gone(const request *req)
{
    if (req->fd < 0)
        return false;
    struct pollfd p = {.fd = req->fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 &&
           (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static bool client_gone_hook(void *arg) { return client_gone(arg); }

static void pool_job(void *arg)
{
    request *req = arg;
    http_server *srv = req->srv;
    req->t_work_start = clock_seconds();
    req->lane = "pool";
    if (client_gone(req)) {
        /* nobody to answer: 499 (as nginx logs it) is only logged */
        reply_set_static(&req->rep, HTTP_STATUS_CLIENT_GONE, NULL, "", 0);
    } else if (atomic_load(&srv->abandon)) {
        problem_reply(&req->rep, ERR_DRAINING, NULL,
                      "the server shut down before this request could run");
    } else {
        api_job job = {
            .workers = srv->workers,
            .limits = &srv->cfg->request,
            .memory = &srv->memory,
            .body = req->body,
            .body_len = req->body_len,
            .header = req->has_job_header ? req->job_header : NULL,
            .stats = &req->stats,
            .cancelled = client_gone_hook,
            .cancelled_ctx = req,
            .deferred = req->deferred,
        };
        req->deferred = NULL; /* the job's now */
        req->route->job(&job, &req->rep);
        if (req->rep.status == 0) /* cancelled: the client left */
            reply_set_static(&req->rep, HTTP_STATUS_CLIENT_GONE, NULL, "", 0);
    }
    req->t_work_end = clock_seconds();
    if (req->deferred) { /* not run: the client left, or the drain ended */
        req->route->drop(req->deferred);
        req->deferred = NULL;
    }
    block_free(req->body);
    req->body = NULL;
    upload_release(req);
    req->state = REQ_REPLIED;
    /* from here on the event thread owns req */
    MHD_resume_connection(req->conn);
}

/* Suspends the connection and queues the request (and what the fast lane
 * deferred, if anything) as a pool job; 503 when the queue is full. */
static enum MHD_Result submit_job(request *req)
{
    http_server *srv = req->srv;
    req->state = REQ_WORKING;
    req->t_queued = clock_seconds();
    MHD_suspend_connection(req->conn);
    if (pool_submit(srv->workers, pool_job, req) != 0) {
        MHD_resume_connection(req->conn);
        if (req->deferred) {
            req->route->drop(req->deferred);
            req->deferred = NULL;
        }
        req->state = REQ_REPLIED;
        problem_reply(&req->rep, ERR_OVERLOADED, NULL,
                      "%zu requests are already waiting; retry shortly",
                      srv->cfg->max_queue);
        return MHD_YES; /* queued on the call that follows the resume */
    }
    return MHD_YES;
}

/* Whether the request takes its route's fast lane (--fast-lane). */
static bool takes_fast_lane(const request *req)
{
    if (!req->route->try_inline)
        return false;
    switch (req->srv->cfg->fast_lane) {
    case CONFIG_LANE_OFF:
        return false;
    case CONFIG_LANE_ALL:
        return true;
    case CONFIG_LANE_AUTO:
        break;
    }
    return req->body_len <= LIMIT_FAST_LANE_MAX_BODY;
}

/* The fast lane: the request is decoded here and, when its work is small,
 * computed and its reply queued here; else what was decoded goes to a
 * pool job. */
static enum MHD_Result answer_inline(request *req)
{
    http_server *srv = req->srv;
    req->t_queued = req->t_work_start = clock_seconds();
    api_job job = {
        .limits = &srv->cfg->request,
        .memory = &srv->memory,
        .body = req->body,
        .body_len = req->body_len,
        .header = req->has_job_header ? req->job_header : NULL,
        .stats = &req->stats,
    };
    double max_work = srv->cfg->fast_lane == CONFIG_LANE_ALL
                          ? HUGE_VAL
                          : LIMIT_FAST_LANE_MAX_FLOPS;
    if (!req->route->try_inline(&job, max_work, &req->rep, &req->deferred))
        return submit_job(req);
    req->lane = "inline";
    req->t_work_end = clock_seconds();
    block_free(req->body);
    req->body = NULL;
    upload_release(req);
    req->state = REQ_REPLIED;
    return answer_queue(req);
}

enum MHD_Result lanes_start(request *req)
{
    if (!upload_reserve_parsing(req))
        return answer_queue(req);
    return takes_fast_lane(req) ? answer_inline(req) : submit_job(req);
}
