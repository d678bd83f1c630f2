/*
 * oip_extensions.c - Triton's extensions of the Open Inference Protocol
 * that tooling asks for before it infers: the model configuration
 * (model_configuration), the model's statistics (statistics) and the
 * model repository (model_repository: its index, load and unload).
 *
 * DESIGN
 * The configuration is written once from the schema table and the core's
 * stages, as the model metadata is (oip.c), in the JSON Triton prints for
 * its model_config.proto: "input" and "output" with "data_type" TYPE_FP64,
 * TYPE_INT64 or TYPE_BOOL and "dims" of -1.  max_batch_size is 0: the
 * server has no batching dimension of its own to add; a batch is the
 * request's leading dimension (x of rank 3), which the dims, given at each
 * tensor's lowest rank as the metadata gives them, leave out.  Every input
 * is optional: none is required in every request (x gives way to q, k and
 * v).
 *
 * The statistics are counters that every /v2 inference adds to (oip.c
 * calls oip_stats_record when it has answered), read without a lock: each
 * is one atomic, so a reader may see one request's count before its
 * duration, never a torn number.  The durations are Triton's: queue is
 * the wait between the body's decoding and the computation's start (the
 * pool's queue), compute_input the decoding, compute_infer the attention,
 * compute_output the writing of the reply; success and fail count each
 * request once with its whole time from the body's arrival.
 *
 * The repository is the one model built into the server: its index lists
 * it (READY while /v2/health/ready is 200), loading it is a success with
 * nothing to do, and unloading it is refused.
 */
#include "server/api/endpoint.h"
#include "server/api/oip_extensions.h"

#include "server/base/buf.h"
#include "server/base/problem.h"
#include "server/oip/oip_codec.h"
#include "server/request/schema.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

const char *oip_input_datatype(const schema_field *row)
{
    return row->whole                        ? "INT64"
           : row->leaf == SCHEMA_LEAF_NUMBER ? "FP64"
                                             : "BOOL";
}

void oip_model_tensors(buf *b, oip_tensor_writer *tensor, const char *between)
{
    bool first = true;
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        const schema_field *row = &api_schema[f];
        if (row->kind != SCHEMA_TENSOR)
            continue;
        if (!first)
            buf_puts(b, ",");
        first = false;
        tensor(b, row->name, oip_input_datatype(row), row->min_rank, true);
    }
    buf_puts(b, between);
    attn_problem one = {.heads = 1, .n = 1, .m = 1, .d = 1, .d_k = 1};
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        size_t dims[ATTN_MAX_RANK];
        int rank = attn_stage_shape(&one, (attn_stage)s, dims);
        if (s)
            buf_puts(b, ",");
        tensor(b, attn_stage_name((attn_stage)s), "FP64", rank, false);
    }
}

void oip_model_document(reply *out, pthread_once_t *once, void (*make)(void),
                        const buf *doc, const char *what)
{
    pthread_once(once, make);
    if (buf_failed(doc)) {
        problem_reply(out, ERR_OUT_OF_MEMORY, NULL,
                      "the server could not allocate the %s", what);
        return;
    }
    reply_set_static(out, 200, "application/json", doc->data, doc->len);
}

/* ---- model configuration ------------------------------------------------ */

/* One tensor of the configuration: "TYPE_" and its datatype, every
 * dimension -1. */
static void config_tensor(buf *b, const char *name, const char *datatype,
                          int rank, bool input)
{
    buf_puts(b, "{\"name\":");
    buf_json_string(b, name);
    buf_printf(b, ",\"data_type\":\"TYPE_%s\",\"dims\":[", datatype);
    for (int i = 0; i < rank; i++)
        buf_puts(b, i ? ",-1" : "-1");
    buf_puts(b, input ? "],\"optional\":true}" : "]}");
}

static buf model_config;
static pthread_once_t model_config_once = PTHREAD_ONCE_INIT;

static void write_model_config(void)
{
    buf *b = &model_config;
    buf_puts(b, "{\"name\":\"" OIP_MODEL_NAME
                "\",\"platform\":\"attention\",\"backend\":\"attention\","
                "\"version_policy\":{\"specific\":{\"versions\":["
                "\"" OIP_MODEL_VERSION "\"]}},\"max_batch_size\":0,"
                "\"input\":[");
    oip_model_tensors(b, config_tensor, "],\"output\":[");
    buf_puts(b, "]}\n");
}

void api_oip_model_config(const api_env *env, reply *out)
{
    (void)env;
    oip_model_document(out, &model_config_once, write_model_config,
                       &model_config, "configuration");
}

/* ---- statistics --------------------------------------------------------- */

/* A count and its cumulative nanoseconds (Triton's $duration_stat). */
typedef struct {
    _Atomic uint64_t count, ns;
} duration_stat;

enum {
    STAT_SUCCESS,
    STAT_FAIL,
    STAT_QUEUE,
    STAT_INPUT,
    STAT_INFER,
    STAT_OUTPUT,
    STAT_COUNT
};

static const char *const stat_names[STAT_COUNT] = {
    "success",       "fail",          "queue",
    "compute_input", "compute_infer", "compute_output"};

static struct {
    duration_stat stat[STAT_COUNT];
    _Atomic uint64_t inference_count, execution_count;
    _Atomic uint64_t last_inference_ms; /* since the epoch */
} stats;

static void add(duration_stat *d, double seconds)
{
    atomic_fetch_add(&d->count, 1);
    atomic_fetch_add(&d->ns, (uint64_t)(seconds > 0 ? seconds * 1e9 : 0));
}

void oip_stats_record(const oip_stats_sample *s)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    atomic_store(&stats.last_inference_ms,
                 (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000);
    if (!s->ok) {
        add(&stats.stat[STAT_FAIL], s->total);
        return;
    }
    add(&stats.stat[STAT_SUCCESS], s->total);
    add(&stats.stat[STAT_QUEUE], s->queue);
    add(&stats.stat[STAT_INPUT], s->input);
    add(&stats.stat[STAT_INFER], s->infer);
    add(&stats.stat[STAT_OUTPUT], s->output);
    atomic_fetch_add(&stats.inference_count, s->inferences);
    atomic_fetch_add(&stats.execution_count, 1);
}

static void put_stat(buf *b, const char *name, uint64_t count, uint64_t ns)
{
    buf_printf(b, "\"%s\":{\"count\":%llu,\"ns\":%llu}", name,
               (unsigned long long)count, (unsigned long long)ns);
}

void api_oip_model_stats(const api_env *env, reply *out)
{
    (void)env;
    buf b = {0};
    buf_printf(&b,
               "{\"model_stats\":[{\"name\":\"" OIP_MODEL_NAME
               "\",\"version\":\"" OIP_MODEL_VERSION
               "\",\"last_inference\":%llu,\"inference_count\":%llu,"
               "\"execution_count\":%llu,\"inference_stats\":{",
               (unsigned long long)atomic_load(&stats.last_inference_ms),
               (unsigned long long)atomic_load(&stats.inference_count),
               (unsigned long long)atomic_load(&stats.execution_count));
    for (int i = 0; i < STAT_COUNT; i++) {
        put_stat(&b, stat_names[i], atomic_load(&stats.stat[i].count),
                 atomic_load(&stats.stat[i].ns));
        buf_puts(&b, ",");
    }
    put_stat(&b, "cache_hit", 0, 0); /* no response cache */
    buf_puts(&b, "},\"batch_stats\":[]}]}\n");
    size_t len;
    char *body = buf_failed(&b) ? NULL : buf_take(&b, &len);
    if (!body) {
        buf_free(&b);
        problem_reply(out, ERR_OUT_OF_MEMORY, NULL,
                      "the server could not allocate the statistics");
        return;
    }
    reply_set_owned(out, 200, "application/json", body, len);
    out->cache_control = "no-store";
}

/* ---- the model repository ----------------------------------------------- */

void api_oip_repository_index(const api_env *env, reply *out)
{
    static const char ready[] =
        "[{\"name\":\"" OIP_MODEL_NAME "\",\"version\":\"" OIP_MODEL_VERSION
        "\",\"state\":\"READY\",\"reason\":\"\"}]\n";
    static const char unavailable[] =
        "[{\"name\":\"" OIP_MODEL_NAME "\",\"version\":\"" OIP_MODEL_VERSION
        "\",\"state\":\"UNAVAILABLE\",\"reason\":\"the server is draining "
        "or saturated (GET /readyz says which)\"}]\n";
    api_readyz(env, out); /* one rule for readiness */
    if (out->status == 200)
        reply_set_static(out, 200, "application/json", ready, sizeof ready - 1);
    else
        reply_set_static(out, 200, "application/json", unavailable,
                         sizeof unavailable - 1);
    out->cache_control = "no-store";
}

void api_oip_repository_load(const api_env *env, reply *out)
{
    (void)env;
    reply_set_static(out, 200, NULL, "", 0);
}

void api_oip_repository_unload(const api_env *env, reply *out)
{
    (void)env;
    problem_reply(out, ERR_UNSUPPORTED_OPTION, NULL,
                  "model " OIP_MODEL_NAME " is built into the server and is "
                  "served as long as it runs: it cannot be unloaded");
}
