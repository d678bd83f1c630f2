/*
 * endpoint.h - what an endpoint gets from the HTTP layer, and what it gives
 * back.
 *
 * DESIGN
 * Endpoints know nothing of libmicrohttpd.  A cheap endpoint (health,
 * metrics, static files) runs on the event thread: it reads a snapshot of
 * the server's state in plain values (api_env) and fills a reply.  An
 * endpoint that computes runs as a pool job: it gets the uploaded body and
 * the resources it may use (api_job) and fills a reply on a worker.  It
 * may also offer a fast lane (api_inline_fn): on the event thread, without
 * the pool, it decodes the body and answers at once when the work is
 * small, or hands what it decoded to its pool job.  The HTTP layer's route
 * table (server/http/routes.c) says which endpoint runs where.
 */
#ifndef SERVER_API_ENDPOINT_H
#define SERVER_API_ENDPOINT_H

#include "core/attention.h"
#include "core/pool.h"
#include "server/base/budget.h"
#include "server/base/reply.h"
#include "server/base/service_limits.h"

#include <stdbool.h>
#include <stddef.h>

/* The server's state when an inline endpoint runs, read just before. */
typedef struct {
    size_t in_flight;   /* requests received and not yet answered */
    size_t queue_depth; /* jobs waiting for a worker */
    size_t max_queue;   /* --max-queue */
    size_t memory_used; /* bytes reserved by requests in flight */
    size_t memory_limit;
    size_t connections;                 /* open client connections */
    unsigned long long deadline_closed; /* cut by --request-timeout */
    bool draining;                      /* SIGTERM arrived */
    const char *path;                   /* the request's path */
    const char *frame_ancestors;        /* --frame-ancestors */
} api_env;

/* An endpoint that answers on the event thread. */
typedef void (*api_handler)(const api_env *env, reply *out);

/* The bytes of /v2's request "id" kept for the access log, which logs up to
 * 256 of a client's text (access_log.h). */
#define API_STATS_ID_MAX 256

/* What one computing request was, for the access log and metrics. */
typedef struct {
    size_t n, m, d, heads;
    double work; /* api_attention_work() */
    double compute_seconds;
    double encode_seconds; /* the reply's JSON or binary encoding */
    /* /v2's request "id" (its first API_STATS_ID_MAX bytes), or "" */
    char infer_id[API_STATS_ID_MAX + 1];
} api_attention_stats;

/* What a pool job gets; every pointer outlives the job. */
typedef struct {
    pool *workers;
    const request_limits *limits;
    budget *memory;
    const char *body; /* the upload, NULL when there was none */
    size_t body_len;
    const char *header; /* the request header its route names, or NULL */
    api_attention_stats *stats; /* filled for the access log */
    /* the computation's stop (core/attn_stop.h), or NULL: cancelled when
     * nobody waits for the answer any more; its deadline --compute-timeout
     * after `received` (attn_stop_now() seconds, when the body had
     * arrived), which the request may shorten (OIP's timeout) */
    attn_stop *stop;
    double received;
    /* what the fast lane decoded and left to the pool job (the job takes
     * it), or NULL: decode the body */
    void *deferred;
} api_job;

/* An endpoint that runs as a pool job. */
typedef void (*api_job_fn)(const api_job *job, reply *out);

/* The fast lane of a pool endpoint, on the event thread (job->workers is
 * NULL): true when it answered (out is set: a refusal, or a result whose
 * work was at most max_work); false when the work is bigger, with
 * *deferred what it decoded, for the pool job's api_job.deferred. */
typedef bool (*api_inline_fn)(const api_job *job, double max_work, reply *out,
                              void **deferred);
/* Frees what an api_inline_fn deferred, when its job will not run. */
typedef void (*api_drop_fn)(void *deferred);

/* GET /healthz: the process answers. */
void api_healthz(const api_env *env, reply *out);
/* GET /readyz: 200 while the server takes work, 503 when it is draining or
 * saturated, so that a balancer sends work elsewhere. */
void api_readyz(const api_env *env, reply *out);
/* GET /metrics: the Prometheus exposition. */
void api_metrics_page(const api_env *env, reply *out);
/* GET /: the visualizer page. */
void api_static_index(const api_env *env, reply *out);
/* GET /embed: one stage of a lesson, for a course page's iframe; framed by
 * the pages env->frame_ancestors names. */
void api_static_embed(const api_env *env, reply *out);
/* GET /web/NAME: one of the page's assets (its stylesheet, its modules). */
void api_static_web(const api_env *env, reply *out);
/* GET /openapi.yaml: the API's description. */
void api_static_openapi(const api_env *env, reply *out);

/* POST /v1/attention (attention.c), as a pool job: decodes the body (or
 * takes job->deferred), reserves what computing and encoding it needs
 * from job->memory (503 when it does not fit), computes on job->workers and
 * fills out.  A 200 reply keeps its body's bytes reserved (reply_hold)
 * until reply_clear().  The computation reads job->stop once per block of
 * work: when it fires, out is left with status 0 and the caller, who knows
 * why it fired (a client gone, a shutdown, the deadline), answers. */
void api_attention(const api_job *job, reply *out);
/* Its fast lane (an api_inline_fn) and what drops the request it deferred
 * (an api_drop_fn). */
bool api_attention_inline(const api_job *job, double max_work, reply *out,
                          void **deferred);
void api_attention_drop(void *deferred);

/* The Open Inference Protocol (oip.c); errors as {"error": "..."}. */
/* GET /v2/health/live: {"live": true} while the process answers. */
void api_oip_live(const api_env *env, reply *out);
/* GET /v2/health/ready: {"ready": true}, or 503 as /readyz. */
void api_oip_ready(const api_env *env, reply *out);
/* GET /v2: the server's name, version and protocol extensions. */
void api_oip_server_metadata(const api_env *env, reply *out);
/* GET /v2/models/attention: the model's inputs and outputs. */
void api_oip_model_metadata(const api_env *env, reply *out);
/* GET /v2/models/attention/ready: as /v2/health/ready, for the model. */
void api_oip_model_ready(const api_env *env, reply *out);
/* Triton's extensions (oip_extensions.c). GET /v2/models/attention/config:
 * the model configuration; GET /v2/models/attention/stats (and
 * /v2/models/stats): its statistics; POST /v2/repository/index: the one
 * model and its state; POST /v2/repository/models/attention/load: a success
 * with nothing to do; .../unload: refused, 422. */
void api_oip_model_config(const api_env *env, reply *out);
void api_oip_model_stats(const api_env *env, reply *out);
void api_oip_repository_index(const api_env *env, reply *out);
void api_oip_repository_load(const api_env *env, reply *out);
void api_oip_repository_unload(const api_env *env, reply *out);
/* Any other path under /v2/: 404 naming the model or path asked for. */
void api_oip_not_found(const api_env *env, reply *out);
/* POST /v2/models/attention/infer, as a pool job; job->header is the
 * request's Inference-Header-Content-Length. */
void api_oip_infer(const api_job *job, reply *out);
/* Its fast lane (an api_inline_fn) and what drops the request it deferred
 * (an api_drop_fn): the same decoder, limits and reply as the pool job. */
bool api_oip_infer_inline(const api_job *job, double max_work, reply *out,
                          void **deferred);
void api_oip_drop(void *deferred);

#endif
