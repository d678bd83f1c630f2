/*
 * lanes.c - where a request is computed: the fast lane, or a pool job.
 *
 * DESIGN
 * An event thread computes only what costs less than handing it to a
 * worker would.  A body of at most LIMIT_FAST_LANE_MAX_BODY bytes takes
 * its route's fast lane: decoded here, and when its work is at most
 * LIMIT_FAST_LANE_MAX_FLOPS computed and its reply queued here too, with
 * no other thread involved.  Any other request (or one the lane decoded and
 * found big, handing over what it decoded) becomes a pool job, its
 * connection suspended on the library's next call.  --fast-lane off|all
 * sends every request one way.  The job frees the body and gives its
 * memory back; the reply keeps its bytes reserved (reply_hold) until the
 * "request completed" callback.  Every computation reads its request's
 * stop: a deadline --compute-timeout after the body arrived (which the
 * request may shorten), cancelled by inflight.c when the client hangs up
 * or the shutdown's grace ends.  The core then leaves its pass within a
 * block of work, and the request is answered here: 499 (logged, never
 * sent), 503 compute_timeout or 503 draining.  The reply's compression is
 * watched too: a client gone, or the grace over, stops it between two pieces
 * (its deadline does not: the reply is made by then).
 */
#include "server/http/exchange.h"

#include "server/base/block_cache.h"
#include "server/base/clock.h"
#include "server/base/problem.h"
#include "server/http/inflight.h"
#include "server/obs/metrics.h"

#include <math.h>
#include <poll.h>
#include <stdatomic.h>

/* A suspended connection does not notice its client leaving; a job peeks at
 * the socket before spending time on a request nobody waits for (the
 * watcher, inflight.c, sees it too, but a moment later).  Gone is a reset
 * or a hang-up of both directions: the end of the client's stream alone is
 * a half-close, which inflight.c tells from a hang-up. */
static bool client_gone(const request *req)
{
    if (req->fd < 0)
        return false;
    struct pollfd p = {.fd = req->fd, .events = 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* Nobody to answer: 499 (as nginx logs it) is only logged. */
static void answer_client_gone(request *req)
{
    reply_set_static(&req->rep, HTTP_STATUS_CLIENT_GONE, NULL, "", 0);
    req->stopped = "client_gone";
}

static void answer_draining(request *req, const char *when)
{
    problem_reply(&req->rep, ERR_DRAINING, NULL, "the server shut down %s",
                  when);
    req->stopped = "shutdown";
}

/* The reply of a computation its stop ended (the endpoint left status 0):
 * 499 when its client hung up, 503 compute_timeout past its deadline, 503
 * draining when the shutdown's grace ended. */
static void answer_stopped(request *req)
{
    const config *cfg = req->srv->cfg;
    if (inflight_stopped_why(&req->watched) == INFLIGHT_CLIENT_GONE) {
        answer_client_gone(req);
    } else if (atomic_load(&req->stop.reason) == ATTN_STOP_DEADLINE) {
        double limit = req->stop.deadline - req->t_received;
        /* a deadline shorter than the server's was the request's own */
        bool asked = limit < (double)cfg->compute_timeout - 1e-6;
        problem_reply(&req->rep, ERR_COMPUTE_TIMEOUT, NULL,
                      "the computation was stopped at its deadline, %.6g s "
                      "after the request arrived (%s)",
                      limit,
                      asked ? "the request's timeout parameter"
                            : "--compute-timeout");
        req->stopped = "deadline";
    } else {
        answer_draining(req, "before this request's computation ended");
    }
}

/* What the route's endpoint gets; workers NULL on the event thread. */
static api_job job_of(request *req, pool *workers)
{
    const config *cfg = req->srv->cfg;
    return (api_job){
        .workers = workers,
        .limits = &cfg->request,
        .memory = &req->srv->memory,
        .body = req->body,
        .body_len = req->body_len,
        .header = req->has_job_header ? req->job_header : NULL,
        .stats = &req->stats,
        .stop = &req->stop,
        .received = req->t_received,
    };
}

/* The reply compressed as its client asks (reply_coding.c) while the
 * request is still watched: a client that hangs up meanwhile stops the
 * compression and is answered 499, as one that left during the
 * computation (503 draining when the shutdown's grace ended). */
static void code_reply(request *req, pool *workers)
{
    bool plain = !req->rep.content_encoding;
    if (!reply_coding_apply(&req->rep, req->accept, workers, &req->srv->memory,
                            &req->stop))
        answer_stopped(req);
    else if (plain && req->rep.content_encoding)
        metrics_note_compression();
    req->coded = true;
}

static void pool_job(void *arg)
{
    request *req = arg;
    http_server *srv = req->srv;
    req->t_work_start = clock_seconds();
    req->lane = "pool";
    inflight_why why = inflight_stopped_why(&req->watched);
    if (why == INFLIGHT_CLIENT_GONE || client_gone(req)) {
        answer_client_gone(req);
    } else if (why == INFLIGHT_SHUTDOWN || atomic_load(&srv->abandon)) {
        answer_draining(req, "before this request could run");
    } else {
        api_job job = job_of(req, srv->workers);
        job.deferred = req->deferred;
        req->deferred = NULL; /* the job's now */
        req->route->job(&job, &req->rep);
    }
    if (req->rep.status == 0)
        answer_stopped(req);
    /* a big reply is compressed here, not on the event thread */
    code_reply(req, srv->workers);
    inflight_remove(srv->computing, &req->watched);
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

/* A request for a pool job is suspended on the library's next call, not
 * this one.  libmicrohttpd 0.9.75 works out which events a connection waits
 * for (MHD_connection_update_event_loop_info()) at the end of each pass over
 * it, except while it is suspended.  Suspended in the pass its body ended
 * in, a connection keeps the read interest it had while the body arrived;
 * once resumed, the end of a half-closed client's stream polls readable,
 * MHD_connection_handle_read() reads 0 bytes and closes the connection
 * before the reply is queued.  A pass that ends with the request whole and
 * no reply queued leaves it waiting for errors only (and calls the handler
 * again at once): suspended from that call, the connection is read no more
 * and its resume queues the reply (docs/reliability.md, "A client that
 * half-closes"). */
static enum MHD_Result hand_over_next_call(request *req)
{
    req->state = REQ_HANDING;
    return MHD_YES;
}

/* Suspends the connection and queues the request (and what the fast lane
 * deferred, if anything) as a pool job; 503 when the queue is full.  From
 * now until the job ends, a client that hangs up cancels its stop. */
enum MHD_Result lanes_hand_over(request *req)
{
    http_server *srv = req->srv;
    req->state = REQ_WORKING;
    req->t_queued = clock_seconds();
    MHD_suspend_connection(req->conn);
    inflight_add(srv->computing, &req->watched, req->fd, req->interim_ok,
                 &req->stop);
    if (pool_submit(srv->workers, pool_job, req) != 0) {
        inflight_remove(srv->computing, &req->watched);
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
 * pool job.  With --fast-lane all any work is computed here, and watched
 * as a pool job's is (a small one is over before a hang-up is seen). */
static enum MHD_Result answer_inline(request *req)
{
    http_server *srv = req->srv;
    req->t_queued = req->t_work_start = clock_seconds();
    api_job job = job_of(req, NULL);
    bool all = srv->cfg->fast_lane == CONFIG_LANE_ALL;
    double max_work = all ? HUGE_VAL : LIMIT_FAST_LANE_MAX_FLOPS;
    if (all)
        inflight_add(srv->computing, &req->watched, req->fd, req->interim_ok,
                     &req->stop);
    bool answered =
        req->route->try_inline(&job, max_work, &req->rep, &req->deferred);
    if (answered && req->rep.status == 0)
        answer_stopped(req);
    if (answered && all)
        code_reply(req, NULL); /* watched still, as on a worker */
    if (all)
        inflight_remove(srv->computing, &req->watched);
    if (!answered)
        return hand_over_next_call(req);
    req->lane = "inline";
    req->t_work_end = clock_seconds();
    block_free(req->body);
    req->body = NULL;
    upload_release(req);
    req->state = REQ_REPLIED;
    return reply_queue(req);
}

/* The body has arrived: from now the computation's deadline runs. */
enum MHD_Result lanes_start(request *req)
{
    unsigned timeout = req->srv->cfg->compute_timeout;
    req->t_received = attn_stop_now();
    attn_stop_init(&req->stop, timeout ? req->t_received + timeout : 0);
    upload_fit_parsing(req);
    return takes_fast_lane(req) ? answer_inline(req) : hand_over_next_call(req);
}
