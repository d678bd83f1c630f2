/*
 * metrics_page.c - GET /metrics: the Prometheus text exposition (0.0.4).
 *
 * DESIGN
 * The counters live in server/obs/metrics.c; this page adds the gauges the
 * HTTP layer measured (api_env) and the count of connections its deadline
 * cut, which only the HTTP layer knows.
 */
#include "server/api/endpoint.h"

#include "server/base/buf.h"
#include "server/base/problem.h"
#include "server/obs/metrics.h"
#include "server/obs/process_metrics.h"
#include "server/setup/blas_setup.h"
#include "server/setup/config.h"

void api_metrics_page(const api_env *env, reply *out)
{
    buf b = {0};
    metrics_render(&b, env->in_flight, env->queue_depth, env->memory_used,
                   env->connections, CONFIG_VERSION, blas_setup_corename());
    buf_printf(&b,
               "# HELP attention_deadline_closed_total Connections closed "
               "because their request did not arrive within "
               "--request-timeout.\n# TYPE attention_deadline_closed_total "
               "counter\nattention_deadline_closed_total %llu\n",
               env->deadline_closed);
    process_metrics_render(&b);
    if (buf_failed(&b)) {
        buf_free(&b);
        problem_reply(out, ERR_OUT_OF_MEMORY, NULL, "out of memory");
        return;
    }
    size_t len;
    char *text = buf_take(&b, &len);
    reply_set_owned(out, 200, "text/plain; version=0.0.4; charset=utf-8", text,
                    len);
}
