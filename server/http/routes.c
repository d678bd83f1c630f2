/*
 * routes.c - the one route table.
 *
 * DESIGN
 * A row says everything the HTTP layer needs to know about a path: the
 * methods it serves (as bits, from which the Allow header is written), the
 * endpoint and whether it runs inline or as a pool job, whether it needs the
 * bearer token, its metrics label, and the shape of its errors.  The rows
 * are in the order metrics lists them.  Paths match exactly, except that a
 * prefix row serves the paths under it that no row names: the Open
 * Inference Protocol's paths carry a model name, and an unknown one gets
 * that protocol's 404.
 */
#include "server/http/routes.h"

#include "server/api/attention.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* api_attention() keeps an argument list of its own (the fuzz harness calls
 * it directly), so its row goes through this adapter. */
static void attention_job(const api_job *job, reply *out)
{
    if (job->deferred)
        api_attention_continue(job->workers, job->limits, job->memory,
                               job->deferred, out, job->stats, job->stop);
    else
        api_attention(job->workers, job->limits, job->memory, job->body,
                      job->body_len, out, job->stats, job->stop);
}

static bool attention_inline(const api_job *job, double max_work, reply *out,
                             void **deferred)
{
    api_request *decoded = NULL;
    bool answered =
        api_attention_inline(job->limits, job->memory, job->body, job->body_len,
                             max_work, out, job->stats, job->stop, &decoded);
    *deferred = decoded;
    return answered;
}

static void attention_drop(void *deferred) { api_attention_drop(deferred); }

static const route table[] = {
    {.path = "/v1/attention",
     .methods = ROUTE_POST,
     .lane = ROUTE_POOL,
     .needs_auth = true,
     .job = attention_job,
     .try_inline = attention_inline,
     .drop = attention_drop,
     .label = "/v1/attention"},
    {.path = "/healthz",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_healthz,
     .label = "/healthz"},
    {.path = "/readyz",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_readyz,
     .label = "/readyz"},
    {.path = "/metrics",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_metrics_page,
     .label = "/metrics"},
    {.path = "/openapi.yaml",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_static_openapi,
     .label = "/openapi.yaml"},
    {.path = "/",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_static_index,
     .label = "/"},
    /* the page's stylesheet and modules (server/web/) */
    {.path = "/web/",
     .prefix = true,
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_static_web,
     .label = "/web/*"},
    /* the Open Inference Protocol (KServe V2, Triton REST); its clients
     * (tritonclient) send no Content-Type, and binary tensor data after
     * the JSON header as application/octet-stream */
    {.path = "/v2/models/attention/infer",
     .methods = ROUTE_POST,
     .lane = ROUTE_POOL,
     .needs_auth = true,
     .job = api_oip_infer,
     .try_inline = api_oip_infer_inline,
     .drop = api_oip_drop,
     .label = "/v2/models/attention/infer",
     .errors = REPLY_ERRORS_OIP,
     .any_content_type = true,
     .job_header = "Inference-Header-Content-Length"},
    {.path = "/v2/health/live",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_live,
     .label = "/v2/health/live",
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/health/ready",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_ready,
     .label = "/v2/health/ready",
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_server_metadata,
     .label = "/v2",
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_metadata,
     .label = "/v2/models/attention",
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention/ready",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_ready,
     .label = "/v2/models/attention/ready",
     .errors = REPLY_ERRORS_OIP},
    /* the model's one version, "1": its paths as the protocol writes them
     * with a version (tritonclient's, when given model_version) */
    {.path = "/v2/models/attention/versions/1/infer",
     .methods = ROUTE_POST,
     .lane = ROUTE_POOL,
     .needs_auth = true,
     .job = api_oip_infer,
     .try_inline = api_oip_infer_inline,
     .drop = api_oip_drop,
     .label = "/v2/models/attention/versions/1/infer",
     .errors = REPLY_ERRORS_OIP,
     .any_content_type = true,
     .job_header = "Inference-Header-Content-Length"},
    {.path = "/v2/models/attention/versions/1",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_metadata,
     .label = "/v2/models/attention/versions/1",
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention/versions/1/ready",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_ready,
     .label = "/v2/models/attention/versions/1/ready",
     .errors = REPLY_ERRORS_OIP},
    /* server metadata asked with a trailing slash */
    {.path = "/v2/",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_server_metadata,
     .label = "/v2/",
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/",
     .prefix = true,
     .methods = ROUTE_GET | ROUTE_HEAD | ROUTE_POST,
     .lane = ROUTE_INLINE,
     .answer = api_oip_not_found,
     .label = "/v2/*",
     .errors = REPLY_ERRORS_OIP},
};

#define ROUTE_COUNT (sizeof table / sizeof *table)

/* Method names and bits, in the order the Allow header lists them. */
static const struct {
    const char *name;
    unsigned bit;
} methods[] = {{"GET", ROUTE_GET}, {"HEAD", ROUTE_HEAD}, {"POST", ROUTE_POST}};

#define METHOD_COUNT (sizeof methods / sizeof *methods)

/* Every method and OPTIONS, with separators. */
#define ALLOW_MAX (sizeof "GET, HEAD, POST, OPTIONS")

static char allow_text[ROUTE_COUNT][ALLOW_MAX];
static pthread_once_t allow_once = PTHREAD_ONCE_INIT;

static void write_allow_texts(void)
{
    for (size_t r = 0; r < ROUTE_COUNT; r++) {
        size_t len = 0;
        for (size_t m = 0; m < METHOD_COUNT; m++)
            if (table[r].methods & methods[m].bit)
                len += (size_t)snprintf(allow_text[r] + len, ALLOW_MAX - len,
                                        "%s, ", methods[m].name);
        snprintf(allow_text[r] + len, ALLOW_MAX - len, "OPTIONS");
    }
}

const route *routes_find(const char *path)
{
    const route *under = NULL; /* the longest prefix row path starts with */
    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        const route *r = &table[i];
        if (!r->prefix && strcmp(r->path, path) == 0)
            return r;
        if (r->prefix && strncmp(r->path, path, strlen(r->path)) == 0 &&
            (!under || strlen(r->path) > strlen(under->path)))
            under = r;
    }
    return under;
}

bool routes_allows(const route *r, const char *method)
{
    for (size_t m = 0; m < METHOD_COUNT; m++)
        if (strcmp(methods[m].name, method) == 0)
            return (r->methods & methods[m].bit) != 0;
    return false;
}

const char *routes_allow_header(const route *r)
{
    pthread_once(&allow_once, write_allow_texts);
    return allow_text[routes_index(r)];
}

size_t routes_count(void) { return ROUTE_COUNT; }

const route *routes_at(size_t i) { return &table[i]; }

size_t routes_index(const route *r)
{
    return r ? (size_t)(r - table) : ROUTE_COUNT;
}

bool routes_check(char *err, size_t err_size)
{
    for (size_t r = 0; r < ROUTE_COUNT; r++) {
        const route *row = &table[r];
        bool runs =
            row->lane == ROUTE_INLINE
                ? row->answer && !row->job && !row->try_inline
                : row->job && !row->answer && !row->try_inline == !row->drop;
        if (!runs) {
            snprintf(err, err_size,
                     "route %s: its lane and its endpoint disagree", row->path);
            return false;
        }
    }
    return true;
}
