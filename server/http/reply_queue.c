/*
 * reply_queue.c - a request's reply onto its connection: coded for its client
 * when the event thread made it, what the client acknowledged noted, the
 * response queued and the time to read it set.  Below the files that answer
 * (answer.c on the event thread, lanes.c after the fast lane or a job).
 */
#include "server/http/exchange.h"

#include "server/http/response.h"
#include "server/http/static_coding.h"
#include "server/obs/metrics.h"

#include <stdatomic.h>
#include <string.h>

/* Seconds a client may take to read a reply of `bytes`: --request-timeout,
 * plus the bytes at --min-send-rate. */
static double send_seconds(const config *cfg, size_t bytes)
{
    return cfg->request_timeout + (double)bytes / (double)cfg->min_send_rate;
}

enum MHD_Result reply_queue(request *req)
{
    http_server *srv = req->srv;
    char traceparent[TRACE_PARENT_LEN + 1];
    trace_parent_header(&req->trace, traceparent);
    response_meta meta = {
        .request_id = req->id,
        .traceparent = traceparent,
        .tracestate = req->trace.state,
        .allow_origin = req->origin_allowed,
        .vary_origin = strcmp(srv->cfg->cors_origins, "*") != 0,
        .close = req->close || atomic_load(&srv->draining),
    };
    if (!req->coded) { /* an answer of the event thread: an embedded asset,
                          coded at start-up, or small but for one whose
                          client refuses identity (reply_coding.h) */
        static_coding_apply(&req->rep, req->accept);
        bool plain = !req->rep.content_encoding;
        reply_coding_apply(&req->rep, req->accept, NULL, &srv->memory, NULL);
        if (plain && req->rep.content_encoding)
            metrics_note_compression(); /* a reply compressed, not an asset */
    }
    req->coded = true;
    completion_note_acked(req);
    enum MHD_Result ret =
        response_queue(req->conn, &req->rep, &meta, &req->bytes_out);
    if (ret == MHD_YES)
        conn_deadlines_sending(srv->deadlines, req->watch,
                               send_seconds(srv->cfg, req->bytes_out));
    return ret;
}
