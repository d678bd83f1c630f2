/*
 * oip.c - the Open Inference Protocol's routes (KServe's V2 protocol,
 * Triton's REST API): health, server and model metadata, and inference
 * on the one model, "attention".
 *
 * DESIGN
 * Inference is /v1/attention read and written another way: the body goes
 * through server/oip/oip_decode.c to the same validated request, the
 * request through api_attention_decoded() (the same memory reservation and
 * core path as /v1), and the result through oip_encode.c.  Health follows
 * /readyz.  Metadata is written once from the schema table and the core's
 * stages, so it lists exactly the inputs and outputs the decoder takes.
 * The routes' errors are the protocol's {"error": "..."} (their reply's
 * error_shape, set from the route table).
 */
#include "server/api/attention.h"
#include "server/api/endpoint.h"
#include "server/api/oip_extensions.h"

#include "core/attn_stop.h"

#include "server/base/buf.h"
#include "server/base/problem.h"
#include "server/oip/oip_codec.h"
#include "server/request/schema.h"
#include "server/setup/config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The extensions of the protocol this server implements, for GET /v2. */
#define OIP_EXTENSIONS                                                         \
    "[\"binary_tensor_data\",\"model_configuration\",\"statistics\","          \
    "\"model_repository\"]"

void api_oip_live(const api_env *env, reply *out)
{
    (void)env;
    static const char live[] = "{\"live\":true}\n";
    reply_set_static(out, 200, "application/json", live, sizeof live - 1);
}

void api_oip_ready(const api_env *env, reply *out)
{
    static const char ready[] = "{\"ready\":true}\n";
    api_readyz(env, out); /* one rule for readiness */
    if (out->status == 200)
        reply_set_static(out, 200, "application/json", ready, sizeof ready - 1);
}

void api_oip_model_ready(const api_env *env, reply *out)
{
    static const char ready[] =
        "{\"name\":\"" OIP_MODEL_NAME "\",\"ready\":true}\n";
    api_readyz(env, out);
    if (out->status == 200)
        reply_set_static(out, 200, "application/json", ready, sizeof ready - 1);
}

void api_oip_server_metadata(const api_env *env, reply *out)
{
    (void)env;
    static const char metadata[] =
        "{\"name\":\"" OIP_MODEL_NAME "\",\"version\":\"" CONFIG_VERSION
        "\",\"extensions\":" OIP_EXTENSIONS "}\n";
    reply_set_static(out, 200, "application/json", metadata,
                     sizeof metadata - 1);
}

/* ---- model metadata ---------------------------------------------------- */

/* A tensor's metadata: every dimension variable (-1). */
static void metadata_tensor(buf *b, const char *name, const char *datatype,
                            int rank, bool input)
{
    (void)input;
    buf_puts(b, "{\"name\":\"");
    buf_puts(b, name);
    buf_puts(b, "\",\"datatype\":\"");
    buf_puts(b, datatype);
    buf_puts(b, "\",\"shape\":[");
    for (int i = 0; i < rank; i++)
        buf_puts(b, i ? ",-1" : "-1");
    buf_puts(b, "]}");
}

static buf model_metadata;
static pthread_once_t model_metadata_once = PTHREAD_ONCE_INIT;

static void write_model_metadata(void)
{
    buf *b = &model_metadata;
    buf_puts(b, "{\"name\":\"" OIP_MODEL_NAME
                "\",\"versions\":[\"" OIP_MODEL_VERSION
                "\"],\"platform\":\"attention\",\"inputs\":[");
    oip_model_tensors(b, metadata_tensor, "],\"outputs\":[");
    buf_puts(b, "]}\n");
}

void api_oip_model_metadata(const api_env *env, reply *out)
{
    (void)env;
    oip_model_document(out, &model_metadata_once, write_model_metadata,
                       &model_metadata, "metadata");
}

/* ---- paths that name nothing ------------------------------------------- */

#define MODELS_PREFIX "/v2/models/"
#define VERSIONS_PREFIX "/versions/"

void api_oip_not_found(const api_env *env, reply *out)
{
    const char *path = env->path ? env->path : "";
    if (strncmp(path, MODELS_PREFIX, strlen(MODELS_PREFIX)) == 0) {
        const char *model = path + strlen(MODELS_PREFIX);
        int len = (int)strcspn(model, "/");
        const char *rest = model + len;
        if (len == (int)strlen(OIP_MODEL_NAME) &&
            strncmp(model, OIP_MODEL_NAME, (size_t)len) == 0 &&
            strncmp(rest, VERSIONS_PREFIX, strlen(VERSIONS_PREFIX)) == 0) {
            const char *version = rest + strlen(VERSIONS_PREFIX);
            int vlen = (int)strcspn(version, "/");
            problem_reply(out, ERR_NOT_FOUND, NULL,
                          "model " OIP_MODEL_NAME " has no version \"%.*s\"; "
                          "its one version is \"" OIP_MODEL_VERSION "\"",
                          vlen > 64 ? 64 : vlen, version);
        } else if (len == (int)strlen(OIP_MODEL_NAME) &&
                   strncmp(model, OIP_MODEL_NAME, (size_t)len) == 0)
            problem_reply(out, ERR_NOT_FOUND, NULL,
                          "no such route of model " OIP_MODEL_NAME
                          ": GET " MODELS_PREFIX OIP_MODEL_NAME
                          "[/versions/" OIP_MODEL_VERSION
                          "], GET .../ready, GET .../config, GET .../stats, "
                          "POST .../infer");
        else
            problem_reply(out, ERR_NOT_FOUND, NULL,
                          "unknown model \"%.*s\"; this server serves one "
                          "model, \"" OIP_MODEL_NAME "\"",
                          len > 64 ? 64 : len, model);
        return;
    }
    problem_reply(
        out, ERR_NOT_FOUND, NULL,
        "no such path; the Open Inference Protocol's routes are "
        "/v2, /v2/health/live, /v2/health/ready, " MODELS_PREFIX OIP_MODEL_NAME
        "[/ready|/infer|/config|/stats] and POST "
        "/v2/repository/index");
}

/* ---- inference ---------------------------------------------------------- */

typedef struct {
    const oip_reply_plan *plan;
    size_t json_len; /* of the reply written, when binary data follows */
} oip_writing;

static void oip_write(const api_request *req, const attn_result *result,
                      pool *workers, buf_chain *out, void *ctx)
{
    oip_writing *w = ctx;
    w->json_len = oip_encode(req, result, w->plan, workers, out);
}

/* Binary data after the JSON: the body is no longer JSON alone. */
static void oip_finish(reply *out, void *ctx)
{
    const oip_writing *w = ctx;
    if (w->json_len) {
        out->content_type = "application/octet-stream";
        out->json_header_len = w->json_len;
    }
}

/* When a request's body was decoded and how long that took (attn_stop_now()
 * seconds), for the statistics. */
typedef struct {
    double decoded_at, decode_seconds;
} oip_timing;

/* What the fast lane decoded and left to a pool job. */
typedef struct {
    api_request req;
    oip_reply_plan plan;
    oip_timing timing;
} oip_decoded;

/* The body as a request and the reply it asks for; false with the error
 * reply set. */
static bool oip_decode_job(const api_job *job, api_request *req,
                           oip_reply_plan *plan, reply *out, oip_timing *t)
{
    codec_error err;
    size_t json_len;
    double start = attn_stop_now();
    bool ok = oip_json_length(job->header, job->body_len, &json_len, &err) &&
              oip_decode(job->body ? job->body : "", job->body_len, json_len,
                         job->limits, req, plan, &err);
    t->decoded_at = attn_stop_now();
    t->decode_seconds = t->decoded_at - start;
    if (!ok) {
        api_codec_error_reply(&err, out);
        oip_stats_sample failed = {.total = t->decoded_at - job->received};
        oip_stats_record(&failed);
    }
    return ok;
}

/* Computes req (taking it) and writes the reply plan asks for. */
static void oip_answer(const api_job *job, api_request *req,
                       oip_reply_plan *plan, reply *out, const oip_timing *t)
{
    /* the request's own timeout, when shorter, counts from its arrival */
    attn_stop *stop = job->stop;
    if (stop && plan->timeout_seconds > 0 &&
        (stop->deadline == 0 ||
         job->received + plan->timeout_seconds < stop->deadline))
        stop->deadline = job->received + plan->timeout_seconds;
    if (plan->id) /* for the access log */
        snprintf(job->stats->infer_id, sizeof job->stats->infer_id, "%s",
                 plan->id);
    oip_writing writing = {.plan = plan};
    api_encoder enc = {
        .encode = oip_write, .finish = oip_finish, .ctx = &writing};
    size_t sequences = req->problem.batch ? req->problem.batch : 1;
    double start = attn_stop_now();
    api_attention_decoded(job, req, &enc, out);
    oip_reply_plan_free(plan);
    double end = attn_stop_now(), infer = job->stats->compute_seconds;
    oip_stats_sample sample = {.ok = out->status == 200,
                               .inferences = sequences,
                               .total = end - job->received,
                               .queue = start - t->decoded_at,
                               .input = t->decode_seconds,
                               .infer = infer,
                               .output = end - start - infer};
    oip_stats_record(&sample);
}

void api_oip_infer(const api_job *job, reply *out)
{
    out->error_shape = REPLY_ERRORS_OIP;
    if (job->deferred) {
        oip_decoded *decoded = job->deferred;
        oip_answer(job, &decoded->req, &decoded->plan, out, &decoded->timing);
        free(decoded);
        return;
    }
    api_request req;
    oip_reply_plan plan;
    oip_timing timing;
    if (oip_decode_job(job, &req, &plan, out, &timing))
        oip_answer(job, &req, &plan, out, &timing);
}

bool api_oip_infer_inline(const api_job *job, double max_work, reply *out,
                          void **deferred)
{
    out->error_shape = REPLY_ERRORS_OIP;
    *deferred = NULL;
    api_request req;
    oip_reply_plan plan;
    oip_timing timing;
    if (!oip_decode_job(job, &req, &plan, out, &timing))
        return true;
    if (api_attention_work(&req) <= max_work) {
        oip_answer(job, &req, &plan, out, &timing);
        return true;
    }
    oip_decoded decoded = {req, plan, timing};
    if (!api_defer(&decoded, sizeof decoded, deferred, out)) {
        api_request_free(&req);
        oip_reply_plan_free(&plan);
        return true;
    }
    return false;
}

void api_oip_drop(void *deferred)
{
    oip_decoded *decoded = deferred;
    if (!decoded)
        return;
    api_request_free(&decoded->req);
    oip_reply_plan_free(&decoded->plan);
    free(decoded);
}
