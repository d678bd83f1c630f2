/*
 * routes.c - the one route table.
 *
 * DESIGN
 * A row says everything the HTTP layer needs to know about a path: the
 * methods it serves (as bits, from which the Allow header is written), the
 * endpoint and whether it runs inline or as a pool job, whether it needs the
 * bearer token, and the shape of its errors.  Its label in the metrics and
 * the access log is its path (a prefix row's followed by "*").  The rows
 * are in the order metrics lists them.  Paths match exactly, except that a
 * prefix row serves the paths under it that no row names: the Open
 * Inference Protocol's paths carry a model name, and an unknown one gets
 * that protocol's 404.
 */
#include "server/http/routes.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static const route table[] = {
    {.path = "/v1/attention",
     .methods = ROUTE_POST,
     .lane = ROUTE_POOL,
     .needs_auth = true,
     .job = api_attention,
     .try_inline = api_attention_inline,
     .drop = api_attention_drop},
    {.path = "/healthz",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_healthz},
    {.path = "/readyz",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_readyz},
    {.path = "/metrics",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_metrics_page},
    {.path = "/openapi.yaml",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_static_openapi},
    {.path = "/",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_static_index},
    /* one stage of a lesson, for a course page's iframe */
    {.path = "/embed",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_static_embed},
    /* the page's stylesheet and modules (server/web/) */
    {.path = "/web/",
     .prefix = true,
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_static_web},
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
     .errors = REPLY_ERRORS_OIP,
     .any_content_type = true,
     .job_header = "Inference-Header-Content-Length"},
    {.path = "/v2/health/live",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_live,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/health/ready",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_ready,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_server_metadata,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_metadata,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention/ready",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_ready,
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
     .errors = REPLY_ERRORS_OIP,
     .any_content_type = true,
     .job_header = "Inference-Header-Content-Length"},
    {.path = "/v2/models/attention/versions/1",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_metadata,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention/versions/1/ready",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_ready,
     .errors = REPLY_ERRORS_OIP},
    /* Triton's extensions: the model configuration, its statistics (also
     * of every model, here the one), the repository of the one model */
    {.path = "/v2/models/attention/config",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_config,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention/versions/1/config",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_config,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention/stats",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_stats,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/attention/versions/1/stats",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_stats,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/models/stats",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_model_stats,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/repository/index",
     .methods = ROUTE_POST,
     .lane = ROUTE_INLINE,
     .answer = api_oip_repository_index,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/repository/models/attention/load",
     .methods = ROUTE_POST,
     .lane = ROUTE_INLINE,
     .answer = api_oip_repository_load,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/repository/models/attention/unload",
     .methods = ROUTE_POST,
     .lane = ROUTE_INLINE,
     .answer = api_oip_repository_unload,
     .errors = REPLY_ERRORS_OIP},
    /* server metadata asked with a trailing slash */
    {.path = "/v2/",
     .methods = ROUTE_GET | ROUTE_HEAD,
     .lane = ROUTE_INLINE,
     .answer = api_oip_server_metadata,
     .errors = REPLY_ERRORS_OIP},
    {.path = "/v2/",
     .prefix = true,
     .methods = ROUTE_GET | ROUTE_HEAD | ROUTE_POST,
     .lane = ROUTE_INLINE,
     .answer = api_oip_not_found,
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

/* A route's label: its path, and "*" after a prefix row's. */
#define LABEL_MAX 64

static char allow_text[ROUTE_COUNT][ALLOW_MAX];
static char allow_any[ALLOW_MAX];
static char label_text[ROUTE_COUNT][LABEL_MAX];
static pthread_once_t texts_once = PTHREAD_ONCE_INIT;

/* "GET, HEAD, OPTIONS" for the method bits `bits`. */
static void write_allow(unsigned bits, char out[ALLOW_MAX])
{
    size_t len = 0;
    for (size_t m = 0; m < METHOD_COUNT; m++)
        if (bits & methods[m].bit)
            len += (size_t)snprintf(out + len, ALLOW_MAX - len, "%s, ",
                                    methods[m].name);
    snprintf(out + len, ALLOW_MAX - len, "OPTIONS");
}

static void write_texts(void)
{
    unsigned any = 0;
    for (size_t r = 0; r < ROUTE_COUNT; r++) {
        snprintf(label_text[r], LABEL_MAX, "%s%s", table[r].path,
                 table[r].prefix ? "*" : "");
        write_allow(table[r].methods, allow_text[r]);
        any |= table[r].methods;
    }
    write_allow(any, allow_any);
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
    pthread_once(&texts_once, write_texts);
    return allow_text[routes_index(r)];
}

const char *routes_allow_any(void)
{
    pthread_once(&texts_once, write_texts);
    return allow_any;
}

const char *routes_label(const route *r)
{
    pthread_once(&texts_once, write_texts);
    return label_text[routes_index(r)];
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
        if (strlen(row->path) + sizeof "*" > LABEL_MAX) {
            snprintf(err, err_size,
                     "route %s: its path is longer than a label may be "
                     "(%d bytes)",
                     row->path, LABEL_MAX - 2);
            return false;
        }
    }
    return true;
}
