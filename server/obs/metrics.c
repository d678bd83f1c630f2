#include "server/obs/metrics.h"

#include "server/base/error_codes.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Room for a route's label ("route=\"/v2/models/...\","): the longest
 * route of the table is under 64 bytes. */
#define METRICS_LABEL_MAX 160

/* Status classes kept apart: the codes the service actually sends. */
static const unsigned tracked_status[] = {200, 204, 400, 401, 404, 405, 408,
                                          413, 415, 422, 431, 500, 503};
#define STATUS_COUNT (sizeof tracked_status / sizeof *tracked_status)
#define STATUS_OTHER STATUS_COUNT

/* Latency buckets in seconds: from a lesson-sized request (tens to hundreds
 * of µs: make bench-lanes, docs/performance.md) to a large one (seconds). */
static const double latency_bounds[] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
#define BUCKET_COUNT (sizeof latency_bounds / sizeof *latency_bounds)

/* The route labels in use, then "other"; set before the daemon starts its
 * threads, read-only after. */
static const char *route_labels[METRICS_MAX_ROUTES + 1] = {"other"};
static size_t labelled; /* route_labels[labelled] is "other" */

/* One histogram: its buckets (each counting the observations up to its
 * bound, and the last those above every bound) and the sum of what it
 * observed, in microseconds. */
typedef struct {
    atomic_ullong buckets[BUCKET_COUNT + 1];
    atomic_ullong sum_us;
} histogram;

static atomic_ullong requests[METRICS_MAX_ROUTES + 1][STATUS_COUNT + 1];
static histogram latency[METRICS_MAX_ROUTES + 1];
/* where a computing request's time went (the access log's queue_ms,
 * compute_ms and encode_ms) */
static histogram queue_wait, compute, encode;
static atomic_ullong bytes_in_total, bytes_out_total;
static atomic_ullong compressions_total;
static atomic_ullong refusals[ERR_CODE_COUNT]; /* by error_code */

/* set before the daemon starts its threads, read-only after */
static const char *build_arch = "unknown", *build_simd = "unknown",
                  *build_products = "unknown";

void metrics_set_build_info(const char *arch, const char *simd,
                            const char *products)
{
    build_arch = arch;
    build_simd = simd;
    build_products = products;
}

bool metrics_set_routes(const char *const *labels, size_t count)
{
    if (count > METRICS_MAX_ROUTES)
        return false;
    for (size_t r = 0; r < count; r++)
        route_labels[r] = labels[r];
    route_labels[count] = "other";
    labelled = count;
    return true;
}

static void histogram_observe(histogram *h, double seconds)
{
    size_t b = 0;
    while (b < BUCKET_COUNT && seconds > latency_bounds[b])
        b++;
    atomic_fetch_add(&h->buckets[b], 1);
    atomic_fetch_add(&h->sum_us, (unsigned long long)(seconds * 1e6));
}

/* The series of histogram `name` (its _bucket, _sum and _count), with
 * `label` (`route="/x",` or "") before each one's own. */
static void histogram_render(buf *out, const char *name, const char *label,
                             histogram *h)
{
    unsigned long long cumulative = 0;
    for (size_t b = 0; b <= BUCKET_COUNT; b++) {
        cumulative += atomic_load(&h->buckets[b]);
        if (b < BUCKET_COUNT)
            buf_printf(out, "%s_bucket{%sle=\"%g\"} %llu\n", name, label,
                       latency_bounds[b], cumulative);
        else
            buf_printf(out, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, label,
                       cumulative);
    }
    size_t bare = strlen(label); /* the label without its comma, if any */
    bare -= bare > 0;
    buf_printf(out, "%s_sum%s%.*s%s %.6f\n%s_count%s%.*s%s %llu\n", name,
               bare ? "{" : "", (int)bare, label, bare ? "}" : "",
               (double)atomic_load(&h->sum_us) * 1e-6, name, bare ? "{" : "",
               (int)bare, label, bare ? "}" : "", cumulative);
}

void metrics_record(size_t route, unsigned status, double seconds,
                    size_t bytes_in, size_t bytes_out)
{
    if (route > labelled)
        route = labelled; /* "other" */
    size_t s = 0;
    while (s < STATUS_COUNT && tracked_status[s] != status)
        s++;
    atomic_fetch_add(&requests[route][s], 1);
    histogram_observe(&latency[route], seconds);
    atomic_fetch_add(&bytes_in_total, bytes_in);
    atomic_fetch_add(&bytes_out_total, bytes_out);
}

void metrics_record_work(double queue_seconds, double compute_seconds,
                         double encode_seconds)
{
    histogram_observe(&queue_wait, queue_seconds);
    if (compute_seconds > 0)
        histogram_observe(&compute, compute_seconds);
    if (encode_seconds > 0)
        histogram_observe(&encode, encode_seconds);
}

/* The histograms of where a computing request's time went. */
static void render_work(buf *out)
{
    buf_puts(out, "# HELP attention_queue_wait_seconds Time a request handed "
                  "to a lane waited for its worker (0 on the event thread).\n"
                  "# TYPE attention_queue_wait_seconds histogram\n");
    histogram_render(out, "attention_queue_wait_seconds", "", &queue_wait);
    buf_puts(out, "# HELP attention_compute_seconds The forward pass of a "
                  "request that computed (how long it ran, when stopped).\n"
                  "# TYPE attention_compute_seconds histogram\n");
    histogram_render(out, "attention_compute_seconds", "", &compute);
    buf_puts(out, "# HELP attention_encode_seconds The JSON or binary "
                  "encoding of a computed reply (its compression is not "
                  "in it).\n# TYPE attention_encode_seconds histogram\n");
    histogram_render(out, "attention_encode_seconds", "", &encode);
}

void metrics_record_refusal(const char *code)
{
    for (int c = ERR_NONE + 1; code && c < ERR_CODE_COUNT; c++)
        if (strcmp(error_codes[c].name, code) == 0) {
            atomic_fetch_add(&refusals[c], 1);
            return;
        }
}

/* attention_refusals_total: every code, those never sent at 0, so that a
 * rate over any of them is defined from the start. */
static void render_refusals(buf *out)
{
    buf_puts(out, "# HELP attention_refusals_total Error replies, by their "
                  "problem code.\n# TYPE attention_refusals_total counter\n");
    for (int c = ERR_NONE + 1; c < ERR_CODE_COUNT; c++)
        buf_printf(out, "attention_refusals_total{code=\"%s\"} %llu\n",
                   error_codes[c].name, atomic_load(&refusals[c]));
}

void metrics_note_compression(void)
{
    atomic_fetch_add(&compressions_total, 1);
}

void metrics_render(buf *out, size_t in_flight, size_t queue_depth,
                    size_t memory_reserved, size_t connections,
                    const char *version, const char *blas_core)
{
    buf_puts(out, "# HELP attention_requests_total Requests answered, by "
                  "route and status.\n# TYPE attention_requests_total "
                  "counter\n");
    for (size_t r = 0; r <= labelled; r++)
        for (size_t s = 0; s <= STATUS_COUNT; s++) {
            unsigned long long count = atomic_load(&requests[r][s]);
            if (!count)
                continue;
            if (s == STATUS_OTHER)
                buf_printf(out,
                           "attention_requests_total{route=\"%s\",status="
                           "\"other\"} %llu\n",
                           route_labels[r], count);
            else
                buf_printf(out,
                           "attention_requests_total{route=\"%s\",status="
                           "\"%u\"} %llu\n",
                           route_labels[r], tracked_status[s], count);
        }
    render_refusals(out);
    buf_puts(out, "# HELP attention_request_duration_seconds Time from the "
                  "first byte of headers to the last byte of the reply "
                  "written to the socket (or the connection's end).\n"
                  "# TYPE attention_request_duration_seconds histogram\n");
    for (size_t r = 0; r <= labelled; r++) {
        char label[METRICS_LABEL_MAX];
        snprintf(label, sizeof label, "route=\"%s\",", route_labels[r]);
        histogram_render(out, "attention_request_duration_seconds", label,
                         &latency[r]);
    }
    render_work(out);
    buf_printf(out,
               "# HELP attention_in_flight_requests Requests received and not "
               "yet answered.\n# TYPE attention_in_flight_requests gauge\n"
               "attention_in_flight_requests %zu\n"
               "# HELP attention_queue_depth Jobs waiting for a worker.\n"
               "# TYPE attention_queue_depth gauge\nattention_queue_depth %zu\n"
               "# HELP attention_memory_reserved_bytes Memory reserved by "
               "requests in flight.\n# TYPE attention_memory_reserved_bytes "
               "gauge\nattention_memory_reserved_bytes %zu\n"
               "# HELP attention_open_connections Open client connections.\n"
               "# TYPE attention_open_connections gauge\n"
               "attention_open_connections %zu\n"
               "# HELP attention_received_bytes_total Request body bytes.\n"
               "# TYPE attention_received_bytes_total counter\n"
               "attention_received_bytes_total %llu\n"
               "# HELP attention_sent_bytes_total Response body bytes.\n"
               "# TYPE attention_sent_bytes_total counter\n"
               "attention_sent_bytes_total %llu\n"
               "# HELP attention_reply_compressions_total Reply bodies "
               "compressed for their request (the embedded assets' forms, "
               "made once at start-up, are not).\n"
               "# TYPE attention_reply_compressions_total counter\n"
               "attention_reply_compressions_total %llu\n"
               "# HELP attention_build_info Version, architecture, the SIMD "
               "level of the core's loops, what computes the products, and "
               "OpenBLAS's kernels.\n"
               "# TYPE attention_build_info gauge\n"
               "attention_build_info{version=\"%s\",arch=\"%s\",simd=\"%s\","
               "products=\"%s\",blas_core=\"%s\"} 1\n",
               in_flight, queue_depth, memory_reserved, connections,
               atomic_load(&bytes_in_total), atomic_load(&bytes_out_total),
               atomic_load(&compressions_total), version, build_arch,
               build_simd, build_products, blas_core);
}
