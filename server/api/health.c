/*
 * health.c - GET /healthz (liveness) and GET /readyz (readiness).
 *
 * DESIGN
 * Liveness says only that the event thread answers.  Readiness says whether
 * new work is welcome: a balancer polls it and moves traffic away before
 * requests are refused, so it turns 503 a little before the queue or the
 * memory budget is full, and at once when the server is draining.
 */
#include "server/api/endpoint.h"

#include "server/base/problem.h"

/* /readyz reports saturated once this share of the queue is used, so a
 * balancer sends new work elsewhere before requests are refused. */
#define HEALTH_READY_QUEUE_SHARE 0.9
/* ... or once this many tenths of the memory budget are reserved, for the
 * same reason. */
#define HEALTH_READY_MEMORY_TENTHS 9

void api_healthz(const api_env *env, reply *out)
{
    (void)env;
    static const char ok[] = "{\"status\":\"ok\"}\n";
    reply_set_static(out, 200, "application/json", ok, sizeof ok - 1);
    out->cache_control = "no-store";
}

void api_readyz(const api_env *env, reply *out)
{
    static const char ready[] = "{\"status\":\"ready\"}\n";
    if (env->draining) {
        problem_reply(out, ERR_DRAINING, NULL, "the server is shutting down");
    } else if ((double)env->queue_depth >=
                   HEALTH_READY_QUEUE_SHARE * (double)env->max_queue ||
               env->memory_used >=
                   env->memory_limit / 10 * HEALTH_READY_MEMORY_TENTHS) {
        problem_reply(out, ERR_OVERLOADED, NULL,
                      "saturated: %zu requests queued, %zu MiB of %zu "
                      "MiB reserved",
                      env->queue_depth, env->memory_used >> 20,
                      env->memory_limit >> 20);
    } else {
        reply_set_static(out, 200, "application/json", ready, sizeof ready - 1);
    }
    out->cache_control = "no-store";
}
