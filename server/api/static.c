/*
 * static.c - GET / (the visualizer) and GET /openapi.yaml, built into the
 * binary (server/web/assets.h).
 *
 * DESIGN
 * The bytes are static: the reply points at them, nothing is copied.  The
 * page may change with a new binary, so a browser revalidates it
 * (no-cache); the API description keeps the service-wide default.
 */
#include "server/api/endpoint.h"

#include "server/web/assets.h"

void api_static_index(const api_env *env, reply *out)
{
    (void)env;
    reply_set_static(out, 200, "text/html; charset=utf-8", asset_index_html,
                     asset_index_html_len);
    out->cache_control = "no-cache";
}

void api_static_openapi(const api_env *env, reply *out)
{
    (void)env;
    reply_set_static(out, 200, "application/yaml", asset_openapi_yaml,
                     asset_openapi_yaml_len);
}
